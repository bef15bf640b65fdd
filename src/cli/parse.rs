//! A subcommand's arguments parsed by clap from its definition, and the errors in one
//! line that name what it takes instead.

use std::ffi::{OsStr, OsString};

use clap::ArgMatches;
use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::{OptionSpec, SubcommandSpec};

/// A subcommand's arguments, as clap matched them against its definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// `--help`: print the subcommand's help.
    Help,
    Args(SubcommandArgs),
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubcommandArgs {
    /// Each option given, its own and gate's, with its value (none for a flag), in the
    /// order of the definition and, for one option, in the order given.
    pub options: Vec<(&'static OptionSpec, Option<OsString>)>,
    /// The operand of `approve`, `deny`, `ask`, `completions`, `trust` and `import`.
    pub operand: Option<OsString>,
    /// The files after `import`'s agent.
    pub files: Vec<OsString>,
}

/// Parse the arguments after a subcommand's name (not `gate check`'s: see
/// [`SubcommandSpec::parsed_by_clap`]). An error is one line without the `gate: `.
pub(crate) fn parse_subcommand(
    sub: &SubcommandSpec,
    args: Vec<OsString>,
) -> Result<Parsed, String> {
    debug_assert!(sub.parsed_by_clap(), "{} is parsed by hand", sub.name);
    refuse_option_as_value(sub, &args)?;
    let matches = match sub
        .definition()
        .no_binary_name(true)
        .try_get_matches_from(args)
    {
        Ok(matches) => matches,
        Err(e) if e.kind() == ErrorKind::DisplayHelp => return Ok(Parsed::Help),
        Err(e) => return Err(describe(sub, &e)),
    };
    Ok(Parsed::Args(collect(sub, &matches)))
}

/// What clap matched, by the tables.
fn collect(sub: &SubcommandSpec, matches: &ArgMatches) -> SubcommandArgs {
    let mut parsed = SubcommandArgs::default();
    for spec in sub.own.iter().chain(sub.gate_options()) {
        let id = spec.name.trim_start_matches('-');
        match spec.value {
            None => {
                if matches.get_flag(id) {
                    parsed.options.push((spec, None));
                }
            }
            Some(_) => {
                for value in matches.get_raw(id).into_iter().flatten() {
                    parsed.options.push((spec, Some(value.to_owned())));
                }
            }
        }
    }
    parsed.files = matches
        .try_get_raw("files")
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .map(OsStr::to_owned)
        .collect();
    parsed.operand = ["id", "question", "shell", "file", "agent"]
        .iter()
        .find_map(|id| matches.try_get_raw(id).ok().flatten())
        .and_then(|mut values| values.next())
        .map(OsStr::to_owned);
    parsed
}

/// `--allow -c`: an option that takes a value, followed by something that looks like an
/// option. Most likely the value was forgotten, so it is an error rather than a rule
/// `-c`; a value that really starts with `-` is written `--allow=-c`. `None` when the
/// value is fine.
pub(crate) fn option_as_value(spec: &OptionSpec, value: &OsStr) -> Option<String> {
    let text = value.to_string_lossy();
    if !text.starts_with('-') {
        return None;
    }
    let value_name = spec.value.unwrap_or("VALUE");
    let joined = format!("{}={}", spec.name, shell_words::quote(&text));
    Some(format!(
        "{} needs a value ({value_name}), but {text} after it looks like an option; if \
         the {value_name} really starts with `-`, write {joined}",
        spec.name
    ))
}

/// [`option_as_value`] for each of a subcommand's options given with its value as the
/// next argument, before a `--`.
fn refuse_option_as_value(sub: &SubcommandSpec, args: &[OsString]) -> Result<(), String> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        if arg == "--" {
            break;
        }
        let Some(spec) = arg
            .to_str()
            .and_then(|name| sub.option(name))
            .filter(|spec| spec.value.is_some())
        else {
            continue;
        };
        if let Some(value) = args.next() {
            if let Some(message) = option_as_value(spec, value) {
                return Err(format!("{}: {message}", sub.name));
            }
        }
    }
    Ok(())
}

/// A clap error as one line, naming what the subcommand takes instead.
fn describe(sub: &SubcommandSpec, e: &clap::Error) -> String {
    let name = sub.name;
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(list)) => list.first().cloned(),
        _ => None,
    };
    let valid = || match e.get(ContextKind::ValidValue) {
        Some(ContextValue::Strings(list)) => list.join(", "),
        _ => String::new(),
    };
    let see = format!("see gate {name} --help");
    let invalid_arg = context(ContextKind::InvalidArg).unwrap_or_default();
    // `--message <TEXT>` or `<ID>`: the option or operand, as the tables name it.
    let what = invalid_arg
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(['<', '>'])
        .to_owned();
    match e.kind() {
        ErrorKind::UnknownArgument if invalid_arg.starts_with('-') => format!(
            "{name}: unknown option {invalid_arg}; {}; {see}",
            sub.options_summary()
        ),
        ErrorKind::UnknownArgument => format!(
            "{name}: unexpected argument {}; usage: {}",
            shell_words::quote(&invalid_arg),
            sub.usage
        ),
        ErrorKind::MissingRequiredArgument => {
            format!("{name}: {what} is missing; usage: {}", sub.usage)
        }
        ErrorKind::InvalidValue => match context(ContextKind::InvalidValue) {
            Some(value) if !value.is_empty() => format!(
                "{name}: {what} cannot be {}; choose one of {}",
                shell_words::quote(&value),
                valid()
            ),
            _ => {
                let value_name = sub.option(&what).and_then(|o| o.value).unwrap_or("VALUE");
                format!("{name}: {what} needs a value ({value_name})")
            }
        },
        ErrorKind::ArgumentConflict => format!("{name}: {what} was given twice"),
        ErrorKind::InvalidUtf8 => format!("{name}: an argument is not valid UTF-8; {see}"),
        _ => {
            // Whatever else clap finds: its first line, without its `error: `.
            let rendered = e.render().to_string();
            let first = rendered.lines().next().unwrap_or("").trim();
            let first = first.strip_prefix("error: ").unwrap_or(first);
            format!("{name}: {first}; {see}")
        }
    }
}
