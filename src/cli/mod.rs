//! gate's command line as data: the option tables, the subcommands, and the clap
//! definition built from them, which renders `--help` (gate's and each subcommand's),
//! the completion scripts and the man page's checks, and parses the subcommands.
//!
//! Nothing here runs on the hot path: `gate -c COMMAND`, `gate -- PROGRAM` and the shims
//! are parsed by hand in [`crate::invocation`], from the same tables, without building a
//! clap [`clap::Command`]. Only a subcommand's own arguments go through clap
//! (`parse_subcommand`); `gate check` keeps the hand parser too, because it takes the
//! shell's grammar (see `SubcommandSpec::parsed_by_clap`).
//!
//! This file holds the types; `tables.rs` the options and subcommands (data only),
//! `definition.rs` the clap definition and the help texts, `parse.rs` a subcommand's
//! arguments and their errors, `mistyped.rs` the words that are mistyped subcommands.
//! What each setting's option sets is the settings table's (`config::SETTINGS`),
//! which a test holds to `GATE_OPTIONS`.

#![forbid(unsafe_code)]

mod definition;
mod mistyped;
mod parse;
mod tables;

pub use definition::command;
pub(crate) use definition::help_text;
#[cfg(test)]
use mistyped::edit_distance;
pub(crate) use mistyped::meant_subcommand;
pub use parse::{Parsed, SubcommandArgs};
pub(crate) use parse::{option_as_value, parse_subcommand};
pub(crate) use tables::*;

pub(crate) const VERSION: &str = env!("CARGO_PKG_VERSION");

/// gate's own options. All long, so every short option stays the shell's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptionSpec {
    pub name: &'static str,
    pub value: Option<&'static str>,
    pub help: &'static str,
}

/// Which of gate's options a subcommand takes after its name.
#[derive(Debug, Clone, Copy)]
enum Shared {
    /// All of them: the subcommand judges or reports as a run would.
    All,
    /// These, which change what it does.
    Only(&'static [&'static str]),
}

/// A subcommand: its name, its own options, and the options of gate's it shares.
#[derive(Debug)]
pub struct SubcommandSpec {
    pub name: &'static str,
    about: &'static str,
    usage: &'static str,
    /// Its own options (beyond `--help`).
    pub own: &'static [OptionSpec],
    shared: Shared,
    after_help: Option<&'static str>,
}

/// The subcommand called `word`.
pub(crate) fn subcommand(word: &str) -> Option<&'static SubcommandSpec> {
    SUBCOMMANDS.iter().find(|s| s.name == word)
}

impl SubcommandSpec {
    /// Whether its arguments are parsed by clap. `gate check` takes a command as a run
    /// does, in the shell's grammar, which clap cannot express: `-c` is a flag whose
    /// COMMAND is the first operand after all the options (`-c -l CMD`, `-lc CMD`),
    /// `-o`/`+O` take a value per letter in a cluster (`-eo pipefail`), `+c` means `-c`,
    /// unknown short options and bash's long ones pass to the shell in order, and gate's
    /// long options may sit between them. So check is parsed by the hand parser in
    /// [`crate::invocation`], from the same tables; its clap definition renders its help.
    pub(crate) fn parsed_by_clap(&self) -> bool {
        self.name != "check"
    }

    /// gate's options it takes after its name.
    pub(crate) fn gate_options(&self) -> impl Iterator<Item = &'static OptionSpec> + use<> {
        let shared = self.shared;
        GATE_OPTIONS.iter().filter(move |o| match shared {
            Shared::All => true,
            Shared::Only(names) => names.contains(&o.name),
        })
    }

    /// Its own option or one of gate's it takes, by name (`--message`).
    fn option(&self, name: &str) -> Option<&'static OptionSpec> {
        self.own
            .iter()
            .find(|o| o.name == name)
            .or_else(|| self.gate_options().find(|o| o.name == name))
    }

    /// Its help, as `gate NAME --help` prints it.
    pub(crate) fn help(&self) -> String {
        self.definition().render_help().to_string()
    }

    /// What it takes, for an error message: `deny's options are --message TEXT, and
    /// gate's --config FILE, --no-config, --socket PATH`.
    pub(crate) fn options_summary(&self) -> String {
        let show = |o: &OptionSpec| match o.value {
            Some(value) => format!("{} {value}", o.name),
            None => o.name.to_owned(),
        };
        let own: Vec<String> = self.own.iter().map(show).collect();
        let shared = match self.shared {
            Shared::All => "all of gate's options".to_owned(),
            Shared::Only(_) => {
                let list: Vec<String> = self.gate_options().map(show).collect();
                format!("gate's {}", list.join(", "))
            }
        };
        let name = self.name;
        match (own.is_empty(), self.gate_options().next().is_none()) {
            (true, true) => format!("{name} takes no options"),
            (true, false) => format!("{name} takes {shared}"),
            (false, true) => format!("{name}'s options are {}", own.join(", ")),
            (false, false) => format!("{name}'s options are {}, and {shared}", own.join(", ")),
        }
    }
}

#[cfg(test)]
mod tests;
