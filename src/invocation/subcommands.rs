//! The action of a subcommand clap parsed: its own options and its operand, checked
//! (a one-value option given twice, text that is not UTF-8, a blank question), into an
//! [`Action`].

use std::ffi::OsString;

use super::{Action, UsageError, usage};

/// The action of a subcommand clap parsed, from its own options (each occurrence, by
/// name) and its operand.
pub(super) fn subcommand_action(
    name: &str,
    own: &[(&'static str, Option<OsString>)],
    operand: Option<OsString>,
    files: Vec<OsString>,
) -> Result<Action, UsageError> {
    let text = |v: OsString, what: &str| -> Result<String, UsageError> {
        v.into_string()
            .map_err(|_| usage(format!("{name}: the {what} is not valid UTF-8")))
    };
    let flag = |option: &str| own.iter().any(|(n, _)| *n == option);
    let single = |option: &str| -> Result<Option<String>, UsageError> {
        let mut values = own.iter().filter(|(n, _)| *n == option);
        let found = values.next().and_then(|(_, v)| v.clone());
        if values.next().is_some() {
            return Err(usage(format!("{name}: {option} was given twice")));
        }
        found.map(|v| text(v, option)).transpose()
    };
    let given = operand.clone();
    // clap has checked that the operand is there when the definition requires it.
    let operand = |what: &str| -> Result<String, UsageError> {
        match operand.clone() {
            Some(value) => text(value, what),
            None => Err(usage(format!("{name}: the {what} is missing"))),
        }
    };
    Ok(match name {
        "doctor" => Action::Doctor {
            json: flag("--json"),
        },
        "rules" => Action::Rules {
            json: flag("--json"),
        },
        "serve" => {
            let mut values = own.iter().filter(|(n, _)| *n == "--requests-socket");
            let requests_socket = values.next().and_then(|(_, v)| v.clone()).map(Into::into);
            if values.next().is_some() {
                return Err(usage("serve: --requests-socket was given twice"));
            }
            Action::Serve { requests_socket }
        }
        "watch" => Action::Watch,
        "import" => Action::Import(crate::import::apply::ImportArgs {
            agent: operand("agent")?,
            files: files.into_iter().map(std::path::PathBuf::from).collect(),
            project: flag("--project"),
            write: flag("--save"),
            print: flag("--print"),
            whole_words: flag("--whole-words"),
        }),
        "pending" => Action::Pending {
            json: flag("--json"),
        },
        "completions" => Action::Completions {
            shell: operand("shell name")?,
        },
        "approve" => Action::Approve {
            remember_rule: single("--remember-rule")?,
            remember: flag("--remember"),
            always_rule: single("--always-rule")?,
            always: flag("--always"),
            id: operand("request id")?,
        },
        "deny" => Action::Refuse {
            message: single("--message")?,
            id: operand("request id")?,
        },
        "trust" => {
            use crate::project::command::TrustAction;
            let action = match (flag("--revoke"), flag("--list")) {
                (false, false) => TrustAction::Trust,
                (true, false) => TrustAction::Revoke,
                (false, true) if given.is_none() => TrustAction::List,
                (false, true) => return Err(usage("trust: --list takes no FILE")),
                (true, true) => {
                    return Err(usage("trust: --revoke and --list cannot be used together"));
                }
            };
            Action::Trust {
                action,
                file: given,
            }
        }
        "ask" => {
            let question = operand("question")?;
            if question.trim().is_empty() {
                return Err(usage("ask: the question is blank"));
            }
            let options = own
                .iter()
                .filter(|(n, _)| *n == "--option")
                .filter_map(|(_, v)| v.clone())
                .map(|v| text(v, "option"))
                .collect::<Result<Vec<_>, _>>()?;
            Action::Ask {
                question,
                options,
                multiple: flag("--multiple"),
            }
        }
        other => unreachable!("no subcommand {other}"),
    })
}
