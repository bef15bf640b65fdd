//! The judgement a run and `gate check` share: everything up to the point where a run
//! asks an approver or execs. The target becomes what gate judges (an agent's wrapper
//! unwrapped, a program's argv joined), what its words name on disk is looked at, the
//! pure decision is made, and its reason is put in words; or the target is an agent's
//! start-up call that gate answers itself. [`crate::run`] acts on the judgement and
//! [`crate::check`] reports it, so the two cannot drift apart.

use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

use crate::audit;
use crate::config::{AuditJournal, AuditLog, DEFAULT_SHELL, Settings};
use crate::exec;
use crate::explain::{self, Explanation};
use crate::invocation::{self, Invocation, Personality, ShellWork, Target};
use crate::policy::readonly::Files;
use crate::policy::wrapper::StartupCall;
use crate::policy::{CommandText, Decision, Level, Remembered, Request, decide};

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

/// Who the judgement is for: what is looked at on disk, and what is kept for the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// A run: the files the command names only where they can allow it, and a script's
    /// hash when there is an audit record to carry it.
    Run,
    /// `gate check`: the files, whether or not the preset is on, so that it can say when
    /// a setting would allow a command that waits for an approver.
    Check,
}

/// What the judgement found.
pub(crate) enum Judgement<'t> {
    /// An agent's start-up call that gate answers itself, running nothing: the call,
    /// what is recorded for it, and why.
    Startup {
        call: StartupCall<'t>,
        judged: Judged,
        explanation: Explanation,
    },
    /// Decided by the policy.
    Decided(Decided),
}

/// A target decided by the policy.
pub(crate) struct Decided {
    pub(crate) judged: Judged,
    /// What the command's words name on disk, as the decision saw it.
    pub(crate) files: Files,
    pub(crate) decision: Decision,
    /// The decision's reason in words, with what an agent's wrapper did to it.
    pub(crate) explanation: Explanation,
}

/// Judge `target` under `settings`, for a run or for `gate check`.
pub(crate) fn judge<'t>(
    inv: &Invocation,
    target: &'t Target,
    settings: &Settings,
    purpose: Purpose,
) -> Judgement<'t> {
    if let Some((call, judged, explanation)) = recognise_startup(target, settings) {
        return Judgement::Startup {
            call,
            judged,
            explanation,
        };
    }
    let mut judged = Judged::of(target, inv.gate == invocation::GateArgs::default(), &|| {
        shell_kind(inv, settings)
    });
    let policy = &settings.policy;
    let files = match purpose {
        Purpose::Run => {
            if settings.audit_log != AuditLog::Off || settings.audit_journal != AuditJournal::Off {
                judged.hash_script(target);
            }
            judged.files(settings, policy.readonly || policy.readonly_rules, false)
        }
        Purpose::Check => judged.files(settings, true, true),
    };
    // No remembered approvals here: gate keeps none that a command could write. The
    // broker answers from its memory when it is asked (see docs/security.md), so for
    // `gate check` such a command is one that would ask.
    let decision = decide(policy, &Remembered::new(), judged.request(), &files);
    let mut explanation = explain::explain(&decision, policy);
    judged.annotate(&mut explanation);
    Judgement::Decided(Decided {
        judged,
        files,
        decision,
        explanation,
    })
}

/// What gate judges for a target.
pub(crate) struct Judged {
    /// command / script / program / session
    pub(crate) kind: &'static str,
    pub(crate) text: Option<CommandText>,
    /// An agent's wrapper around `text`: the whole `-c` text, and the template's name.
    pub(crate) wrapper: Option<(CommandText, &'static str)>,
    /// The wrapper runs `text` through gate again, under the same settings.
    pub(crate) execs_gate: bool,
    /// Text that looks like an agent's wrapper but is judged whole: the agent, and why
    /// (said in the reason, by `gate check` and in the audit record, so that a user
    /// knows why nothing the agent runs is allowed).
    pub(crate) looks_like: Option<(&'static str, String)>,
    /// For a script: the SHA-256 of its content when it was judged (`Some(None)`: it
    /// could not be read), for the record; see [`Judged::hash_script`].
    pub(crate) script_sha256: Option<Option<String>>,
}

impl Judged {
    /// `same_settings`: this gate was given no options of its own, so a gate the wrapper
    /// runs (a shim, which takes none) decides under the same settings. `shell`: the kind
    /// of shell gate will run (`bash`, `zsh`), asked only of a wrapper that needs one.
    pub(crate) fn of(
        target: &Target,
        same_settings: bool,
        shell: &dyn Fn() -> Option<&'static str>,
    ) -> Judged {
        let plain = |kind, text| Judged {
            kind,
            text,
            wrapper: None,
            execs_gate: false,
            looks_like: None,
            script_sha256: None,
        };
        match target {
            Target::Shell { work, args, .. } => match work {
                ShellWork::Command(c) => {
                    let outer = CommandText::from_bytes(c.as_bytes());
                    // An agent's wrapper whose files check out is judged by the agent's
                    // own command inside it; the shell still runs the whole text.
                    let mut looks_like = None;
                    if outer.is_exact() {
                        if let Some(u) = crate::policy::wrapper::unwrap(outer.as_str()) {
                            let kind = u.bookkeeping.shells.and_then(|_| shell());
                            match crate::agents::trusted(&u, kind, &var) {
                                Ok(trust) => {
                                    let inner = CommandText::new(u.inner.into_owned());
                                    let template = u.template;
                                    return Judged {
                                        kind: "command",
                                        text: Some(inner),
                                        wrapper: Some((outer.clone(), template)),
                                        execs_gate: trust.execs_gate && same_settings,
                                        looks_like: None,
                                        script_sha256: None,
                                    };
                                }
                                Err(why) => {
                                    tracing::debug!(
                                        template = u.template,
                                        %why,
                                        "an agent's wrapper, judged whole"
                                    );
                                    let name = crate::policy::wrapper::family(u.agent)
                                        .map_or(u.agent, |f| f.name);
                                    looks_like = Some((
                                        u.agent,
                                        format!(
                                            "it is {name}'s wrapper ({}), but {why}, so gate judges the whole text",
                                            u.template
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                    let looks_like = looks_like.or_else(|| look_alike(outer.as_str(), args));
                    Judged {
                        looks_like,
                        ..plain("command", Some(outer))
                    }
                }
                ShellWork::Script(operands) => plain("script", Some(join(operands))),
                ShellWork::Session => plain("session", None),
                ShellWork::Info => plain("info", None),
            },
            Target::Program { argv } => plain("program", Some(join(argv))),
        }
    }

    /// For a script run by path, hash its content now, as it is when judged: the record
    /// shows only its name (and that cut at 2 KB), and the file may change afterwards.
    pub(crate) fn hash_script(&mut self, target: &Target) {
        if let Target::Shell {
            work: ShellWork::Script(operands),
            ..
        } = target
        {
            let script = operands.first().map(std::path::Path::new);
            self.script_sha256 = Some(script.and_then(audit::script_sha256));
        }
    }

    /// Say in the reason what the wrapper did to the judgement: the inner command was
    /// judged, or the whole text, because it only looks like a wrapper.
    pub(crate) fn annotate(&self, explanation: &mut Explanation) {
        if let (Some((_, template)), false) = (&self.wrapper, self.execs_gate) {
            explanation.reason = format!(
                "{} (the agent's own command, inside the {template} wrapper)",
                explanation.reason
            );
        }
        if let Some((_, note)) = &self.looks_like {
            explanation.reason = format!("{} ({note})", explanation.reason);
        }
    }

    /// What the command's words name on disk, for the read-only preset and read-only
    /// rules: looked at only where they can allow it (level `ask`, and with `wanted`),
    /// since looking costs a system call or more per word. `every_part`: for each part
    /// of a compound command even when compound mode is off (`gate check` says what it
    /// would allow).
    pub(crate) fn files(&self, settings: &Settings, wanted: bool, every_part: bool) -> Files {
        let policy = &settings.policy;
        match &self.text {
            Some(text) if wanted && policy.level == Level::Ask && text.is_exact() => {
                crate::files::look(settings, text.as_str(), policy.compound || every_part)
            }
            _ => Files::default(),
        }
    }

    pub(crate) fn request(&self) -> Request<'_> {
        match &self.text {
            Some(inner) if self.wrapper.is_some() => Request::Wrapped {
                outer: &self.wrapper.as_ref().expect("checked").0,
                inner,
                execs_gate: self.execs_gate,
            },
            Some(text) => Request::Command(text),
            None if self.kind == "info" => Request::Info,
            None => Request::Session,
        }
    }
}

/// The kind of shell gate runs a `-c` text with, found as a run's plan finds the shell
/// (`crate::run`): `bash` or `zsh` (by the program's real name), or `None` for another
/// shell or one that cannot be found (then the plan fails too).
fn shell_kind(inv: &Invocation, settings: &Settings) -> Option<&'static str> {
    use crate::exec::start_files::Family;
    let shell = match &inv.personality {
        Personality::Shim { name } => {
            exec::shim_shell(name, &inv.argv0, var("PATH").as_deref()).ok()?
        }
        Personality::Gate => settings
            .shell
            .as_ref()
            .map_or_else(|| PathBuf::from(DEFAULT_SHELL), |(path, _)| path.clone()),
    };
    match Family::of(&shell) {
        Family::Bash => Some("bash"),
        Family::Zsh => Some("zsh"),
        Family::Posix | Family::Fish | Family::Other => None,
    }
}

/// Which known agent's wrapper `text` (the `-c` text of `args`) looks like, though no
/// template matched, and the sentence that says so; `None` for an agent's start-up call
/// (judged whole where gate does not answer it), which is no wrapper of an unknown
/// version whatever its text holds.
fn look_alike(text: &str, args: &[OsString]) -> Option<(&'static str, String)> {
    let strs: Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect();
    if strs.is_some_and(|s| crate::policy::wrapper::startup(&s).is_some()) {
        return None;
    }
    let family = crate::policy::wrapper::resembles(text)?;
    Some((
        family.agent,
        format!(
            "it looks like {}'s wrapper, a version gate does not know, so gate judges the whole text",
            family.name
        ),
    ))
}

/// Arguments joined with shell quoting, as gate judges a program's argv.
pub(crate) fn join(args: &[OsString]) -> CommandText {
    let strs: Option<Vec<&str>> = args.iter().map(|a| a.to_str()).collect();
    match strs {
        Some(strs) => CommandText::new(shell_words::join(strs)),
        None => {
            let lossy: Vec<String> = args
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect();
            CommandText::inexact(shell_words::join(lossy))
        }
    }
}

/// Whether gate answers `call` itself under `policy`: at `ask` and `safe` always. At
/// `full` Claude Code's calls run, unless a deny or ask rule is set: its snapshot script
/// cannot be checked against those rules (it holds the user's rc file and computed programs,
/// which every rule matches), and running it would leave a snapshot gate does not know,
/// so that every later wrapper would be judged whole. Answered, the snapshot is gate's
/// own, and the deny rules see each of the model's commands alone. At `deny` nothing is
/// answered: the call is refused like any command.
fn answers_startup(policy: &crate::policy::Policy, call: &StartupCall<'_>) -> bool {
    // The environment probe is answered only where running it would wait for a person:
    // at `safe` and `full` `env` runs anyway (and so would `printenv`), so an empty answer
    // there would only lie to a program that asks honestly.
    if call.kind == "claude-code/env-probe" {
        return policy.level == Level::Ask;
    }
    match policy.level {
        Level::Ask | Level::Safe => true,
        Level::Full => {
            call.agent == "claude-code" && !(policy.deny.is_empty() && policy.ask.is_empty())
        }
        Level::Deny => false,
    }
}

/// The start-up call `target` is, at a level where gate answers it: the call, what is
/// recorded for it, and why.
fn recognise_startup<'t>(
    target: &'t Target,
    settings: &Settings,
) -> Option<(StartupCall<'t>, Judged, Explanation)> {
    use crate::policy::wrapper::StartupAnswer;
    let Target::Shell { args, .. } = target else {
        return None;
    };
    let call = crate::agents::startup(args, &var)?;
    if !answers_startup(&settings.policy, &call) {
        return None;
    }
    // The file the answer is about, if any, and what gate does.
    let (path, does) = match call.answer {
        StartupAnswer::WriteStub(path) => (
            Some(path),
            format!("gate writes an empty snapshot to {path} and runs nothing"),
        ),
        StartupAnswer::PrintStub => (
            None,
            "gate prints an empty snapshot and runs nothing".to_owned(),
        ),
        StartupAnswer::CheckStub(path) => (
            Some(path),
            format!("{path} is gate's empty snapshot; nothing is run"),
        ),
        StartupAnswer::Nothing => (
            None,
            "gate answers it with no output (the environment holds secrets) and runs nothing"
                .to_owned(),
        ),
    };
    let text = match path {
        Some(path) => format!("({}: {path})", call.kind),
        None => format!("({})", call.kind),
    };
    let reason = format!("{}: {does}", call.kind);
    let judged = Judged {
        kind: "agent-startup",
        text: Some(CommandText::new(text)),
        wrapper: None,
        execs_gate: false,
        looks_like: None,
        script_sha256: None,
    };
    let e = Explanation {
        decided_by: "agent-startup",
        rule: None,
        rule_origin: None,
        matched: None,
        reason,
    };
    Some((call, judged, e))
}
