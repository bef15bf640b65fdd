//! The options of the programs deny rules most often name, as data: which spellings mean
//! the same option, which options take a value, and how each program reads its words.
//! [`super`] reads a rule and a command with the same entry, so that
//! `rm -rf`, `rm -fr`, `rm -r -f` and `rm --recursive --force` are one rule.
//!
//! A program that is not here is read by the general rule ([`UNKNOWN`]): GNU short
//! clusters (`-abc` is `-a -b -c`), `--long` as written or as a prefix, and no option
//! is assumed to take a value. Tables need not list every option: an option missing here
//! is read as an unknown one, which matches more, never less, than the program would.
//!
//! Names hold their dashes as written (`-f`, `--force`, `-auto-approve`). The first name
//! of an entry is what the option means, unless the entry says otherwise ([`Opt::means`]).

/// How a program reads the words after its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// getopt_long and git's parse-options: short options cluster (`-rf`) and may hold
    /// their value (`-mfix`); `--long` or `--long=value`; a unique prefix of a long name
    /// is that option (`--rec`); options may come anywhere before `--`.
    Gnu,
    /// Go's pflag (cobra: docker, podman, kubectl): as [`Style::Gnu`], but long names only
    /// in full.
    Cobra,
    /// Single-dash words (`find -delete`, Go's flag package: `terraform -auto-approve`,
    /// where `--auto-approve` is the same). No clusters, no prefixes.
    SingleDash,
    /// dd: `name=value` operands, in any order, are options with values.
    Operands,
}

/// What an option takes after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Takes {
    Nothing,
    /// A value: attached (`-C dir` or `-Cdir`, `--git-dir=x` or `--git-dir x`).
    Value,
    /// A value only when attached (`--backup=numbered`, `-S[keyid]`).
    Optional,
    /// A command ending with a `;` word, or `+` after `{}` (`find -exec rm {} ;`). Its
    /// first word is the value.
    Command,
    /// Two values (`find -fprintf FILE FORMAT`); the first is the value.
    Two,
}

mod files;
mod tools;

/// One option: its spellings and what it takes.
#[derive(Debug)]
pub(crate) struct Opt {
    pub names: &'static [&'static str],
    pub takes: Takes,
    /// What the option means when that is not its first name: the options it stands for
    /// (`git branch -D` is `--delete --force`; `cp -a` is `-dR --preserve`).
    pub means: &'static [&'static str],
}

impl Opt {
    /// The options this one stands for, by their canonical names.
    pub fn meaning(&self) -> &'static [&'static str] {
        if self.means.is_empty() {
            &self.names[..1]
        } else {
            self.means
        }
    }
}

/// A subcommand (the program's first operand) with options of its own.
#[derive(Debug)]
pub(crate) struct Subcommand {
    pub names: &'static [&'static str],
    pub options: &'static [Opt],
    /// Options that an operand starting with `+` stands for: `git push origin +main`
    /// force-pushes `main`, so it is `--force`.
    pub plus: &'static [&'static str],
}

#[derive(Debug)]
pub(crate) struct Program {
    pub names: &'static [&'static str],
    pub style: Style,
    /// The program's own options (before its subcommand, for a program with subcommands).
    pub options: &'static [Opt],
    pub subcommands: &'static [Subcommand],
    /// The program's own options are read after the subcommand too (kubectl's and npm's
    /// global flags); otherwise only the subcommand's are.
    pub options_anywhere: bool,
}

const fn flag(names: &'static [&'static str]) -> Opt {
    Opt {
        names,
        takes: Takes::Nothing,
        means: &[],
    }
}

const fn value(names: &'static [&'static str]) -> Opt {
    Opt {
        names,
        takes: Takes::Value,
        means: &[],
    }
}

const fn optional(names: &'static [&'static str]) -> Opt {
    Opt {
        names,
        takes: Takes::Optional,
        means: &[],
    }
}

/// An option without a value that stands for others.
const fn means(names: &'static [&'static str], means: &'static [&'static str]) -> Opt {
    Opt {
        names,
        takes: Takes::Nothing,
        means,
    }
}

const fn program(names: &'static [&'static str], style: Style, options: &'static [Opt]) -> Program {
    Program {
        names,
        style,
        options,
        subcommands: &[],
        options_anywhere: false,
    }
}

const fn sub(names: &'static [&'static str], options: &'static [Opt]) -> Subcommand {
    Subcommand {
        names,
        options,
        plus: &[],
    }
}

/// A program this table does not know.
pub(crate) const UNKNOWN: Program = program(&[], Style::Gnu, &[]);

/// The table entry for a program name (`rm`, `mkfs.ext4`), or [`UNKNOWN`].
pub(crate) fn program_named(name: &str) -> &'static Program {
    PROGRAMS
        .iter()
        .find(|p| p.names.contains(&name))
        .unwrap_or(&UNKNOWN)
}

pub const PROGRAMS: &[Program] = &[
    program(&["rm"], Style::Gnu, files::RM),
    program(&["rmdir"], Style::Gnu, files::RMDIR),
    program(&["cp"], Style::Gnu, files::CP),
    program(&["mv"], Style::Gnu, files::MV),
    program(&["ln"], Style::Gnu, files::LN),
    program(&["chmod"], Style::Gnu, files::CHMOD),
    program(&["chown", "chgrp"], Style::Gnu, files::CHOWN),
    program(&["truncate"], Style::Gnu, files::TRUNCATE),
    program(&["shred"], Style::Gnu, files::SHRED),
    program(&["dd"], Style::Operands, &[]),
    program(&["find"], Style::SingleDash, files::FIND),
    program(&["mkfs"], Style::Gnu, files::MKFS),
    program(
        &["mke2fs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4"],
        Style::Gnu,
        files::MKE2FS,
    ),
    program(&["mkfs.xfs"], Style::Gnu, files::MKFS_XFS),
    program(
        &["mkfs.vfat", "mkfs.fat", "mkfs.msdos"],
        Style::Gnu,
        files::MKFS_FAT,
    ),
    program(&["mkfs.btrfs"], Style::Gnu, files::MKFS_BTRFS),
    program(&["mkswap"], Style::Gnu, files::MKSWAP),
    program(&["wipefs"], Style::Gnu, files::WIPEFS),
    program(&["curl"], Style::Gnu, tools::CURL),
    program(&["wget"], Style::Gnu, tools::WGET),
    Program {
        names: &["git"],
        style: Style::Gnu,
        options: tools::GIT,
        subcommands: tools::GIT_SUBCOMMANDS,
        options_anywhere: false,
    },
    Program {
        names: &["docker"],
        style: Style::Cobra,
        options: tools::DOCKER,
        subcommands: tools::CONTAINER_SUBCOMMANDS,
        options_anywhere: false,
    },
    Program {
        names: &["podman"],
        style: Style::Cobra,
        options: tools::PODMAN,
        subcommands: tools::CONTAINER_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["kubectl"],
        style: Style::Cobra,
        options: tools::KUBECTL,
        subcommands: tools::KUBECTL_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["terraform", "tofu"],
        style: Style::SingleDash,
        options: tools::TERRAFORM,
        subcommands: tools::TERRAFORM_SUBCOMMANDS,
        options_anywhere: false,
    },
    Program {
        names: &["npm"],
        style: Style::Gnu,
        options: tools::NPM,
        subcommands: tools::NPM_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["pnpm"],
        style: Style::Gnu,
        options: tools::PNPM,
        subcommands: tools::NPM_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["yarn"],
        style: Style::Gnu,
        options: tools::YARN,
        subcommands: tools::NPM_SUBCOMMANDS,
        options_anywhere: true,
    },
];
