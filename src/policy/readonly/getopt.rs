//! The option reader for the entries whose checks are option lists ([`Options`]): short
//! option clusters as getopt or tree(1) reads them, long options spelled out in full, the
//! values they take, and the rule for operands.
//!
//! It knows no program: each program's lists are in the table.

use super::option_lists::SETS_CLOCK;
use super::words::Word;
use super::{Arg, Entry, Globs, NotReadOnly, Operands, Options, Style};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opt {
    Short(char),
    Long(&'static str),
}

#[derive(Debug, Default)]
pub(super) struct Parsed<'w> {
    pub(super) opts: Vec<(Opt, Option<&'w str>)>,
    /// Indexes of the operands in the argument words.
    pub(super) operands: Vec<usize>,
}

impl Parsed<'_> {
    fn has(&self, short: char, long: &'static str) -> bool {
        self.opts
            .iter()
            .any(|(o, _)| *o == Opt::Short(short) || *o == Opt::Long(long))
    }
}

pub(super) fn glob_as_option(entry: &Entry, word: &Word) -> NotReadOnly {
    entry.refuse(format!(
        "`{}`: the unquoted pattern `{}` could expand to a file name that starts with `-` \
         and then act as an option",
        entry.name, word.text
    ))
}

pub(super) fn glob_moves_words(entry: &Entry, word: &Word) -> NotReadOnly {
    entry.refuse(format!(
        "`{}`: the unquoted pattern `{}` could expand to several words or none, which \
         changes what the words after it mean",
        entry.name, word.text
    ))
}

/// The next word as an option's value.
fn take_value<'w>(
    entry: &Entry,
    args: &'w [Word],
    next: &mut usize,
    option: &str,
) -> Result<&'w str, NotReadOnly> {
    let Some(word) = args.get(*next) else {
        return Err(entry.refuse(format!(
            "`{}`: the option `{option}` lacks its value",
            entry.name
        )));
    };
    *next += 1;
    if word.expands {
        return Err(glob_moves_words(entry, word));
    }
    Ok(&word.text)
}

pub(super) fn refused_long(entry: &Entry, spec: &Options, name: &str) -> NotReadOnly {
    refused_long_option(entry, spec.refused_long, name).unwrap_or_else(|| {
        entry.refuse(format!(
            "`{}`: the option `--{name}` is not one the preset knows (long options must be \
             spelled out in full)",
            entry.name
        ))
    })
}

/// Why `--name` (without its value) is refused, when it is one of `refused` or an
/// abbreviation of one: the first of them it begins, named when it is abbreviated.
pub(super) fn refused_long_option(
    entry: &Entry,
    refused: &[(&str, &str)],
    name: &str,
) -> Option<NotReadOnly> {
    let (refused, why) = refused
        .iter()
        .find(|(r, _)| !name.is_empty() && r.starts_with(name))?;
    Some(entry.refuse(if *refused == name {
        format!("`{}`: the option `--{name}` {why}", entry.name)
    } else {
        format!(
            "`{}`: `--{name}` abbreviates `--{refused}`, which {why}",
            entry.name
        )
    }))
}

pub(super) fn refused_short(entry: &Entry, spec: &Options, c: char) -> Option<NotReadOnly> {
    spec.refused_short
        .iter()
        .find(|(r, _)| *r == c)
        .map(|(_, why)| entry.refuse(format!("`{}`: the option `-{c}` {why}", entry.name)))
}

/// Parse the arguments by `spec`: every option must be known and not refused, and the
/// entry's rule for patterns and operands must hold.
pub(super) fn parse_options<'w>(
    entry: &Entry,
    spec: &Options,
    args: &'w [Word],
) -> Result<Parsed<'w>, NotReadOnly> {
    let mut parsed = Parsed::default();
    let mut next = 0;
    let mut options_ended = false;
    while next < args.len() {
        let index = next;
        let word = &args[index];
        next += 1;
        if entry.globs == Globs::Never && word.expands {
            return Err(glob_moves_words(entry, word));
        }
        if !options_ended && word.option_like {
            return Err(glob_as_option(entry, word));
        }
        let text = word.text.as_str();
        if options_ended || text == "-" || !text.starts_with('-') {
            parsed.operands.push(index);
            continue;
        }
        if text == "--" {
            options_ended = true;
            continue;
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let Some(&(name, arg)) = spec.long.iter().find(|(n, _)| *n == name) else {
                return Err(refused_long(entry, spec, name));
            };
            let value = match (arg, attached) {
                (Arg::No, Some(_)) => {
                    return Err(entry.refuse(format!(
                        "`{}`: the option `--{name}` takes no value",
                        entry.name
                    )));
                }
                (Arg::No, None) => None,
                (_, Some(value)) => Some(value),
                (Arg::Optional, None) => None,
                (Arg::Required, None) => Some(take_value(entry, args, &mut next, text)?),
                (Arg::NextIfAny, None) if next < args.len() => {
                    Some(take_value(entry, args, &mut next, text)?)
                }
                (Arg::NextIfAny, None) => None,
            };
            parsed.opts.push((Opt::Long(name), value));
            continue;
        }
        let cluster = &text[1..];
        let mut pending = 0;
        for (at, c) in cluster.char_indices() {
            if let Some(refusal) = refused_short(entry, spec, c) {
                return Err(refusal);
            }
            if spec.flags.contains(c) {
                parsed.opts.push((Opt::Short(c), None));
                continue;
            }
            let rest = &cluster[at + c.len_utf8()..];
            if spec.values.contains(c) {
                if spec.style == Style::NextWords {
                    pending += 1;
                    parsed.opts.push((Opt::Short(c), None));
                    continue;
                }
                let value = if rest.is_empty() {
                    take_value(entry, args, &mut next, &format!("-{c}"))?
                } else {
                    rest
                };
                parsed.opts.push((Opt::Short(c), Some(value)));
                break;
            }
            if spec.optional.contains(c) {
                parsed
                    .opts
                    .push((Opt::Short(c), Some(rest).filter(|r| !r.is_empty())));
                break;
            }
            return Err(entry.refuse(format!(
                "`{}`: the option `-{c}` is not one the preset knows",
                entry.name
            )));
        }
        for _ in 0..pending {
            take_value(entry, args, &mut next, text)?;
        }
    }
    check_operands(entry, spec, &parsed, args)?;
    Ok(parsed)
}

fn check_operands(
    entry: &Entry,
    spec: &Options,
    parsed: &Parsed<'_>,
    args: &[Word],
) -> Result<(), NotReadOnly> {
    let operands = || parsed.operands.iter().map(|&i| args[i].text.as_str());
    match spec.operands {
        Operands::Any => Ok(()),
        Operands::AtMostOne if parsed.operands.len() > 1 => Err(entry.refuse(format!(
            "`{}`: a second operand names the file it writes to",
            entry.name
        ))),
        Operands::AtMostOne => Ok(()),
        Operands::DateFormat => {
            if parsed.operands.len() > 1 {
                return Err(entry.refuse(format!(
                    "`{}` takes at most one operand, a `+FORMAT`",
                    entry.name
                )));
            }
            match operands().find(|op| !op.starts_with('+')) {
                Some(op) => Err(entry.refuse(format!(
                    "`{}`: the operand `{op}` does not start with `+`, so it {SETS_CLOCK}",
                    entry.name
                ))),
                None => Ok(()),
            }
        }
        Operands::NoPlus => match operands().find(|op| op.starts_with('+')) {
            Some(op) => Err(entry.refuse(format!(
                "`{}`: the operand `{op}` can be read as the obsolete `+N` option, which \
                 can follow a file forever",
                entry.name
            ))),
            None => Ok(()),
        },
        Operands::WithList => match operands().next() {
            Some(op) if !parsed.has('l', "list") => Err(entry.refuse(format!(
                "`{}`: without `--list`, the operand `{op}` is the name of a branch to create",
                entry.name
            ))),
            _ => Ok(()),
        },
    }
}
