//! The shell-compatible forms read by hand, the hot path: shell options passed on to
//! the real shell unchanged and in order, gate's long options taken out, and what the
//! shell is asked to do (a command, a script, a session).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;

use super::{GateArgs, ShellWork, Target, UsageError, usage};
use crate::cli::{self, GATE_OPTIONS, SubcommandSpec};
// Shell options are read as bash and dash read theirs: bash's long options pass through
// to the real shell, and those that take a value take the next argument.
use crate::shells::{BASH_LONG_OPTIONS as SHELL_LONG_OPTIONS, BASH_LONG_WITH_VALUE};

/// Present when parsing for gate's own personality: where gate's options go.
pub(super) struct GateMode<'a> {
    pub(super) gate: &'a mut GateArgs,
    pub(super) check_json: Option<&'a mut bool>,
    /// The subcommand whose options these are (`gate check`), for the messages.
    pub(super) subcommand: Option<&'static SubcommandSpec>,
}

/// Parse shell-style arguments, taking out gate's options when `gate_mode` is given.
pub(super) fn parse_shell_args(
    args: Vec<OsString>,
    mut gate_mode: Option<GateMode<'_>>,
) -> Result<Target, UsageError> {
    let mut shell_args: Vec<OsString> = Vec::with_capacity(args.len());
    let mut command_flag = false;
    let mut stdin_flag = false;
    let mut args = args.into_iter().peekable();

    // The option section: shell options and, in gate mode, gate's options.
    while let Some(arg) = args.peek() {
        let bytes = arg.as_bytes();
        if bytes == b"--" {
            if gate_mode.is_some() && !command_flag {
                args.next();
                let argv: Vec<OsString> = args.collect();
                if argv.is_empty() {
                    return Err(usage("`--` must be followed by a PROGRAM to run"));
                }
                if let Some(first) = shell_args.first() {
                    return Err(usage(format!(
                        "the shell option {} cannot be combined with `-- PROGRAM`, which runs \
                         the program without a shell",
                        first.to_string_lossy()
                    )));
                }
                return Ok(Target::Program { argv });
            }
            shell_args.push(args.next().expect("peeked"));
            break;
        }
        if bytes == b"-" {
            // Like `--` for a shell: the end of the options.
            shell_args.push(args.next().expect("peeked"));
            break;
        }
        if bytes.starts_with(b"--") {
            let arg = args.next().expect("peeked");
            if let Some(mode) = gate_mode.as_mut() {
                take_gate_long_option(arg, &mut args, mode, &mut shell_args)?;
            } else {
                let takes_value = BASH_LONG_WITH_VALUE
                    .iter()
                    .any(|o| o.as_bytes() == arg.as_bytes());
                shell_args.push(arg);
                if takes_value {
                    if let Some(value) = args.next() {
                        shell_args.push(value);
                    }
                }
            }
            continue;
        }
        if bytes.len() >= 2 && (bytes[0] == b'-' || bytes[0] == b'+') {
            let arg = args.next().expect("peeked");
            let mut values = 0;
            for &letter in &arg.as_bytes()[1..] {
                match letter {
                    // bash and dash both take `+c` like `-c`. bash also takes `+s` like
                    // `-s` (dash does not); reading stdin is the stricter of the two.
                    b'c' => command_flag = true,
                    b's' => stdin_flag = true,
                    b'o' | b'O' => values += 1,
                    _ => {}
                }
            }
            shell_args.push(arg);
            for _ in 0..values {
                if let Some(value) = args.next() {
                    shell_args.push(value);
                }
            }
            continue;
        }
        break;
    }

    // The operands: everything else, unchanged.
    let operands: Vec<OsString> = args.collect();
    if gate_mode
        .as_ref()
        .is_some_and(|m| m.gate.help || m.gate.version)
    {
        // Help wins over whatever else is wrong with the arguments.
        let operands_at = shell_args.len();
        return Ok(Target::Shell {
            args: shell_args,
            work: ShellWork::Session,
            operands_at,
        });
    }
    let work = if command_flag {
        match operands.first() {
            Some(command) => ShellWork::Command(command.clone()),
            None => return Err(usage("-c needs a COMMAND argument")),
        }
    } else if operands.is_empty()
        && !stdin_flag
        && gate_mode.is_none()
        && shell_args.len() == 1
        && (shell_args[0] == "--version" || shell_args[0] == "--help")
    {
        ShellWork::Info
    } else if stdin_flag || operands.is_empty() {
        ShellWork::Session
    } else {
        ShellWork::Script(operands.clone())
    };
    let operands_at = shell_args.len();
    shell_args.extend(operands);
    Ok(Target::Shell {
        args: shell_args,
        work,
        operands_at,
    })
}

pub(super) fn take_gate_long_option(
    arg: OsString,
    rest: &mut std::iter::Peekable<std::vec::IntoIter<OsString>>,
    mode: &mut GateMode<'_>,
    shell_args: &mut Vec<OsString>,
) -> Result<(), UsageError> {
    let bytes = arg.as_bytes();
    let (name, inline) = match bytes.iter().position(|&b| b == b'=') {
        Some(eq) => (
            &bytes[..eq],
            Some(OsStr::from_bytes(&bytes[eq + 1..]).to_owned()),
        ),
        None => (bytes, None),
    };
    let name_str = String::from_utf8_lossy(name).into_owned();

    if let Some(spec) = GATE_OPTIONS.iter().find(|o| o.name.as_bytes() == name) {
        let value = match (spec.value, inline) {
            (Some(value_name), None) => {
                let value = rest
                    .next()
                    .ok_or_else(|| usage(format!("{name_str} needs a value ({value_name})")))?;
                if let Some(message) = cli::option_as_value(spec, &value) {
                    return Err(usage(message));
                }
                Some(value)
            }
            (_, inline) => inline,
        };
        return mode.gate.set(spec, value);
    }
    if inline.is_none() && (name == b"--help" || name == b"--version") {
        if name == b"--help" {
            mode.gate.help = true;
        } else {
            mode.gate.version = true;
        }
        return Ok(());
    }
    if let Some(json) = mode.check_json.as_deref_mut() {
        if name == b"--json" && inline.is_none() {
            *json = true;
            return Ok(());
        }
    }
    // `gate check`'s candidate system layer (a run takes no such option).
    if let Some(spec) = mode.subcommand.and_then(|sub| {
        sub.own
            .iter()
            .find(|o| cli::is_candidate_option(o) && o.name.as_bytes() == name)
    }) {
        let value = match inline {
            Some(value) => value,
            None => rest.next().ok_or_else(|| {
                usage(format!(
                    "{name_str} needs a value ({})",
                    spec.value.unwrap_or("VALUE")
                ))
            })?,
        };
        return mode.gate.set(spec, Some(value));
    }
    if inline.is_none() && SHELL_LONG_OPTIONS.iter().any(|o| o.as_bytes() == name) {
        shell_args.push(arg);
        return Ok(());
    }
    if inline.is_none() && BASH_LONG_WITH_VALUE.iter().any(|o| o.as_bytes() == name) {
        shell_args.push(arg);
        if let Some(value) = rest.next() {
            shell_args.push(value);
        }
        return Ok(());
    }
    if let Some(sub) = mode.subcommand {
        return Err(usage(format!(
            "{}: unknown option {name_str}; {}; see gate {} --help",
            sub.name,
            sub.options_summary(),
            sub.name
        )));
    }
    Err(usage(format!(
        "unknown option {name_str}; gate's options are {}; see gate --help",
        GATE_OPTIONS
            .iter()
            .map(|o| o.name)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}
