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
pub enum Style {
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
pub enum Takes {
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

/// One option: its spellings and what it takes.
#[derive(Debug)]
pub struct Opt {
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
pub struct Subcommand {
    pub names: &'static [&'static str],
    pub options: &'static [Opt],
    /// Options that an operand starting with `+` stands for: `git push origin +main`
    /// force-pushes `main`, so it is `--force`.
    pub plus: &'static [&'static str],
}

#[derive(Debug)]
pub struct Program {
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
pub const UNKNOWN: Program = program(&[], Style::Gnu, &[]);

/// The table entry for a program name (`rm`, `mkfs.ext4`), or [`UNKNOWN`].
pub fn program_named(name: &str) -> &'static Program {
    PROGRAMS
        .iter()
        .find(|p| p.names.contains(&name))
        .unwrap_or(&UNKNOWN)
}

pub const PROGRAMS: &[Program] = &[
    program(&["rm"], Style::Gnu, RM),
    program(&["rmdir"], Style::Gnu, RMDIR),
    program(&["cp"], Style::Gnu, CP),
    program(&["mv"], Style::Gnu, MV),
    program(&["ln"], Style::Gnu, LN),
    program(&["chmod"], Style::Gnu, CHMOD),
    program(&["chown", "chgrp"], Style::Gnu, CHOWN),
    program(&["truncate"], Style::Gnu, TRUNCATE),
    program(&["shred"], Style::Gnu, SHRED),
    program(&["dd"], Style::Operands, &[]),
    program(&["find"], Style::SingleDash, FIND),
    program(&["mkfs"], Style::Gnu, MKFS),
    program(
        &["mke2fs", "mkfs.ext2", "mkfs.ext3", "mkfs.ext4"],
        Style::Gnu,
        MKE2FS,
    ),
    program(&["mkfs.xfs"], Style::Gnu, MKFS_XFS),
    program(
        &["mkfs.vfat", "mkfs.fat", "mkfs.msdos"],
        Style::Gnu,
        MKFS_FAT,
    ),
    program(&["mkfs.btrfs"], Style::Gnu, MKFS_BTRFS),
    program(&["mkswap"], Style::Gnu, MKSWAP),
    program(&["wipefs"], Style::Gnu, WIPEFS),
    program(&["curl"], Style::Gnu, CURL),
    program(&["wget"], Style::Gnu, WGET),
    Program {
        names: &["git"],
        style: Style::Gnu,
        options: GIT,
        subcommands: GIT_SUBCOMMANDS,
        options_anywhere: false,
    },
    Program {
        names: &["docker"],
        style: Style::Cobra,
        options: DOCKER,
        subcommands: CONTAINER_SUBCOMMANDS,
        options_anywhere: false,
    },
    Program {
        names: &["podman"],
        style: Style::Cobra,
        options: PODMAN,
        subcommands: CONTAINER_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["kubectl"],
        style: Style::Cobra,
        options: KUBECTL,
        subcommands: KUBECTL_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["terraform", "tofu"],
        style: Style::SingleDash,
        options: TERRAFORM,
        subcommands: TERRAFORM_SUBCOMMANDS,
        options_anywhere: false,
    },
    Program {
        names: &["npm"],
        style: Style::Gnu,
        options: NPM,
        subcommands: NPM_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["pnpm"],
        style: Style::Gnu,
        options: PNPM,
        subcommands: NPM_SUBCOMMANDS,
        options_anywhere: true,
    },
    Program {
        names: &["yarn"],
        style: Style::Gnu,
        options: YARN,
        subcommands: NPM_SUBCOMMANDS,
        options_anywhere: true,
    },
];

// coreutils

const RM: &[Opt] = &[
    flag(&["--force", "-f"]),
    flag(&["--recursive", "-r", "-R"]),
    flag(&["-i"]),
    flag(&["-I"]),
    optional(&["--interactive"]),
    flag(&["--dir", "-d"]),
    flag(&["--verbose", "-v"]),
    flag(&["--one-file-system"]),
    flag(&["--no-preserve-root"]),
    optional(&["--preserve-root"]),
];

const RMDIR: &[Opt] = &[
    flag(&["--parents", "-p"]),
    flag(&["--verbose", "-v"]),
    flag(&["--ignore-fail-on-non-empty"]),
];

/// `cp -a` is `-dR --preserve=all`, and `-d` is `--no-dereference --preserve=links`.
const CP: &[Opt] = &[
    means(
        &["--archive", "-a"],
        &["--recursive", "--no-dereference", "--preserve"],
    ),
    flag(&["--recursive", "-r", "-R"]),
    flag(&["--force", "-f"]),
    flag(&["--interactive", "-i"]),
    flag(&["--no-clobber", "-n"]),
    means(&["-u"], &["--update"]),
    optional(&["--update"]),
    means(&["-b"], &["--backup"]),
    optional(&["--backup"]),
    value(&["--suffix", "-S"]),
    value(&["--target-directory", "-t"]),
    flag(&["--no-target-directory", "-T"]),
    flag(&["--link", "-l"]),
    flag(&["--symbolic-link", "-s"]),
    flag(&["--verbose", "-v"]),
    means(&["-p"], &["--preserve"]),
    optional(&["--preserve"]),
    value(&["--no-preserve"]),
    means(&["-d"], &["--no-dereference", "--preserve"]),
    flag(&["--no-dereference", "-P"]),
    flag(&["--dereference", "-L"]),
    flag(&["-H"]),
    flag(&["--one-file-system", "-x"]),
    flag(&["--remove-destination"]),
    value(&["--sparse"]),
    optional(&["--reflink"]),
    flag(&["--parents"]),
    flag(&["--strip-trailing-slashes"]),
    flag(&["--attributes-only"]),
    flag(&["--copy-contents"]),
    flag(&["--debug"]),
    optional(&["--context"]),
    flag(&["-Z"]),
];

const MV: &[Opt] = &[
    flag(&["--force", "-f"]),
    flag(&["--interactive", "-i"]),
    flag(&["--no-clobber", "-n"]),
    means(&["-u"], &["--update"]),
    optional(&["--update"]),
    means(&["-b"], &["--backup"]),
    optional(&["--backup"]),
    value(&["--suffix", "-S"]),
    value(&["--target-directory", "-t"]),
    flag(&["--no-target-directory", "-T"]),
    flag(&["--verbose", "-v"]),
    flag(&["--strip-trailing-slashes"]),
    flag(&["--exchange"]),
    flag(&["--no-copy"]),
    flag(&["--debug"]),
    flag(&["--context", "-Z"]),
];

const LN: &[Opt] = &[
    flag(&["--symbolic", "-s"]),
    flag(&["--force", "-f"]),
    flag(&["--no-dereference", "-n"]),
    flag(&["--interactive", "-i"]),
    flag(&["--logical", "-L"]),
    flag(&["--physical", "-P"]),
    flag(&["--relative", "-r"]),
    flag(&["--directory", "-d", "-F"]),
    value(&["--target-directory", "-t"]),
    flag(&["--no-target-directory", "-T"]),
    means(&["-b"], &["--backup"]),
    optional(&["--backup"]),
    value(&["--suffix", "-S"]),
    flag(&["--verbose", "-v"]),
];

/// A mode such as `-w` is read as options: a rule and a command that both write it
/// still agree.
const CHMOD: &[Opt] = &[
    flag(&["--recursive", "-R"]),
    flag(&["--changes", "-c"]),
    flag(&["--silent", "--quiet", "-f"]),
    flag(&["--verbose", "-v"]),
    value(&["--reference"]),
    flag(&["--preserve-root"]),
    flag(&["--no-preserve-root"]),
];

const CHOWN: &[Opt] = &[
    flag(&["--recursive", "-R"]),
    flag(&["--changes", "-c"]),
    flag(&["--silent", "--quiet", "-f"]),
    flag(&["--verbose", "-v"]),
    flag(&["--no-dereference", "-h"]),
    flag(&["--dereference"]),
    flag(&["-H"]),
    flag(&["-L"]),
    flag(&["-P"]),
    value(&["--from"]),
    value(&["--reference"]),
    flag(&["--preserve-root"]),
    flag(&["--no-preserve-root"]),
];

const TRUNCATE: &[Opt] = &[
    flag(&["--no-create", "-c"]),
    flag(&["--io-blocks", "-o"]),
    value(&["--reference", "-r"]),
    value(&["--size", "-s"]),
];

/// `shred -u` is `--remove` (which alone may say how, `--remove=unlink`).
const SHRED: &[Opt] = &[
    flag(&["--force", "-f"]),
    value(&["--iterations", "-n"]),
    value(&["--random-source"]),
    value(&["--size", "-s"]),
    means(&["-u"], &["--remove"]),
    optional(&["--remove"]),
    flag(&["--verbose", "-v"]),
    flag(&["--exact", "-x"]),
    flag(&["--zero", "-z"]),
];

// findutils: every expression word is an option; a test's value is its operand.

const FIND: &[Opt] = &[
    flag(&["-H"]),
    flag(&["-L"]),
    flag(&["-P"]),
    value(&["-D"]),
    Opt {
        names: &["-exec"],
        takes: Takes::Command,
        means: &[],
    },
    Opt {
        names: &["-execdir"],
        takes: Takes::Command,
        means: &[],
    },
    Opt {
        names: &["-ok"],
        takes: Takes::Command,
        means: &[],
    },
    Opt {
        names: &["-okdir"],
        takes: Takes::Command,
        means: &[],
    },
    Opt {
        names: &["-fprintf"],
        takes: Takes::Two,
        means: &[],
    },
    flag(&["-delete"]),
    flag(&["-print"]),
    flag(&["-print0"]),
    flag(&["-ls"]),
    flag(&["-quit"]),
    flag(&["-prune"]),
    flag(&["-depth", "-d"]),
    flag(&["-xdev", "-mount"]),
    flag(&["-follow"]),
    flag(&["-daystart"]),
    flag(&["-noleaf"]),
    flag(&["-ignore_readdir_race"]),
    flag(&["-noignore_readdir_race"]),
    flag(&["-true"]),
    flag(&["-false"]),
    flag(&["-empty"]),
    flag(&["-executable"]),
    flag(&["-readable"]),
    flag(&["-writable"]),
    flag(&["-nouser"]),
    flag(&["-nogroup"]),
    flag(&["-not"]),
    flag(&["-and", "-a"]),
    flag(&["-or", "-o"]),
    value(&["-name"]),
    value(&["-iname"]),
    value(&["-path", "-wholename"]),
    value(&["-ipath", "-iwholename"]),
    value(&["-regex"]),
    value(&["-iregex"]),
    value(&["-regextype"]),
    value(&["-lname"]),
    value(&["-ilname"]),
    value(&["-type"]),
    value(&["-xtype"]),
    value(&["-user"]),
    value(&["-group"]),
    value(&["-uid"]),
    value(&["-gid"]),
    value(&["-perm"]),
    value(&["-size"]),
    value(&["-links"]),
    value(&["-inum"]),
    value(&["-samefile"]),
    value(&["-newer"]),
    value(&["-anewer"]),
    value(&["-cnewer"]),
    value(&["-mtime"]),
    value(&["-mmin"]),
    value(&["-atime"]),
    value(&["-amin"]),
    value(&["-ctime"]),
    value(&["-cmin"]),
    value(&["-used"]),
    value(&["-fstype"]),
    value(&["-context"]),
    value(&["-maxdepth"]),
    value(&["-mindepth"]),
    value(&["-printf"]),
    value(&["-fprint"]),
    value(&["-fprint0"]),
    value(&["-fls"]),
    value(&["-files0-from"]),
];

// File systems and devices.

const MKFS: &[Opt] = &[value(&["--type", "-t"]), flag(&["--verbose", "-V"])];

const MKE2FS: &[Opt] = &[
    value(&["-b"]),
    value(&["-C"]),
    value(&["-d"]),
    value(&["-E"]),
    value(&["-e"]),
    value(&["-G"]),
    value(&["-g"]),
    value(&["-I"]),
    value(&["-i"]),
    value(&["-J"]),
    value(&["-L"]),
    value(&["-l"]),
    value(&["-M"]),
    value(&["-m"]),
    value(&["-N"]),
    value(&["-O"]),
    value(&["-o"]),
    value(&["-r"]),
    value(&["-T"]),
    value(&["-t"]),
    value(&["-U"]),
    value(&["-z"]),
    flag(&["-c"]),
    flag(&["-D"]),
    flag(&["-F"]),
    flag(&["-j"]),
    flag(&["-K"]),
    flag(&["-n"]),
    flag(&["-q"]),
    flag(&["-S"]),
    flag(&["-v"]),
];

const MKFS_XFS: &[Opt] = &[
    value(&["-b"]),
    value(&["-d"]),
    value(&["-i"]),
    value(&["-l"]),
    value(&["-L"]),
    value(&["-m"]),
    value(&["-n"]),
    value(&["-p"]),
    value(&["-r"]),
    value(&["-s"]),
    flag(&["-f"]),
    flag(&["-K"]),
    flag(&["-N"]),
    flag(&["-q"]),
];

const MKFS_FAT: &[Opt] = &[
    value(&["-b"]),
    value(&["-D"]),
    value(&["-F"]),
    value(&["-f"]),
    value(&["-h"]),
    value(&["-i"]),
    value(&["-l"]),
    value(&["-M"]),
    value(&["-m"]),
    value(&["-n"]),
    value(&["-R"]),
    value(&["-r"]),
    value(&["-S"]),
    value(&["-s"]),
    flag(&["-a"]),
    flag(&["-A"]),
    flag(&["-c"]),
    flag(&["-C"]),
    flag(&["-I"]),
    flag(&["-v"]),
];

const MKFS_BTRFS: &[Opt] = &[
    flag(&["--force", "-f"]),
    value(&["--label", "-L"]),
    value(&["--data", "-d"]),
    value(&["--metadata", "-m"]),
    value(&["--nodesize", "-n"]),
    value(&["--sectorsize", "-s"]),
    value(&["--features", "-O"]),
    value(&["--uuid", "-U"]),
    value(&["--byte-count", "-b"]),
    flag(&["--quiet", "-q"]),
    flag(&["--nodiscard", "-K"]),
];

const MKSWAP: &[Opt] = &[
    flag(&["--force", "-f"]),
    flag(&["--check", "-c"]),
    value(&["--label", "-L"]),
    value(&["--uuid", "-U"]),
    value(&["--pagesize", "-p"]),
    value(&["--swapversion", "-v"]),
];

const WIPEFS: &[Opt] = &[
    flag(&["--all", "-a"]),
    flag(&["--force", "-f"]),
    flag(&["--no-act", "-n"]),
    flag(&["--backup", "-b"]),
    flag(&["--quiet", "-q"]),
    flag(&["--json", "-J"]),
    flag(&["--parsable", "-p"]),
    flag(&["--noheadings", "-i"]),
    value(&["--offset", "-o"]),
    value(&["--types", "-t"]),
    value(&["--output", "-O"]),
];

// Network clients.

const CURL: &[Opt] = &[
    value(&["--request", "-X"]),
    value(&["--data", "-d"]),
    value(&["--data-raw"]),
    value(&["--data-binary"]),
    value(&["--data-urlencode"]),
    value(&["--json"]),
    value(&["--form", "-F"]),
    value(&["--header", "-H"]),
    value(&["--output", "-o"]),
    flag(&["--remote-name", "-O"]),
    value(&["--upload-file", "-T"]),
    value(&["--user", "-u"]),
    value(&["--proxy", "-x"]),
    value(&["--proxy-user", "-U"]),
    value(&["--user-agent", "-A"]),
    value(&["--referer", "-e"]),
    value(&["--cookie", "-b"]),
    value(&["--cookie-jar", "-c"]),
    value(&["--config", "-K"]),
    value(&["--max-time", "-m"]),
    value(&["--connect-timeout"]),
    value(&["--write-out", "-w"]),
    value(&["--range", "-r"]),
    value(&["--cert", "-E"]),
    value(&["--key"]),
    value(&["--dump-header", "-D"]),
    value(&["--time-cond", "-z"]),
    value(&["--continue-at", "-C"]),
    value(&["--quote", "-Q"]),
    value(&["--url"]),
    value(&["--retry"]),
    value(&["--resolve"]),
    flag(&["--insecure", "-k"]),
    flag(&["--location", "-L"]),
    flag(&["--silent", "-s"]),
    flag(&["--show-error", "-S"]),
    flag(&["--fail", "-f"]),
    flag(&["--get", "-G"]),
    flag(&["--head", "-I"]),
    flag(&["--include", "-i"]),
    flag(&["--verbose", "-v"]),
    flag(&["--netrc", "-n"]),
];

/// `wget -nd`, `-nH` and the like are `-n` with a value, as wget's getopt reads them.
const WGET: &[Opt] = &[
    value(&["--output-document", "-O"]),
    value(&["--output-file", "-o"]),
    value(&["--append-output", "-a"]),
    value(&["--directory-prefix", "-P"]),
    value(&["--input-file", "-i"]),
    value(&["--execute", "-e"]),
    value(&["--level", "-l"]),
    value(&["--tries", "-t"]),
    value(&["--timeout", "-T"]),
    value(&["--wait", "-w"]),
    value(&["--accept", "-A"]),
    value(&["--reject", "-R"]),
    value(&["--domains", "-D"]),
    value(&["--user-agent", "-U"]),
    value(&["--header"]),
    value(&["--method"]),
    value(&["--body-data"]),
    value(&["--body-file"]),
    value(&["--post-data"]),
    value(&["--post-file"]),
    value(&["-n"]),
    flag(&["--recursive", "-r"]),
    flag(&["--mirror", "-m"]),
    flag(&["--continue", "-c"]),
    flag(&["--timestamping", "-N"]),
    flag(&["--quiet", "-q"]),
    flag(&["--verbose", "-v"]),
    flag(&["--delete-after"]),
    flag(&["--no-check-certificate"]),
];

// git: global options before the subcommand, then the subcommand's own.

const GIT: &[Opt] = &[
    value(&["-C"]),
    value(&["-c"]),
    value(&["--config-env"]),
    optional(&["--exec-path"]),
    value(&["--git-dir"]),
    value(&["--work-tree"]),
    value(&["--namespace"]),
    value(&["--super-prefix"]),
    value(&["--list-cmds"]),
    value(&["--attr-source"]),
    flag(&["--paginate", "-p"]),
    flag(&["--no-pager", "-P"]),
    flag(&["--no-replace-objects"]),
    flag(&["--no-lazy-fetch"]),
    flag(&["--no-advice"]),
    flag(&["--bare"]),
    flag(&["--literal-pathspecs"]),
    flag(&["--glob-pathspecs"]),
    flag(&["--noglob-pathspecs"]),
    flag(&["--icase-pathspecs"]),
    flag(&["--no-optional-locks"]),
    flag(&["--html-path"]),
    flag(&["--man-path"]),
    flag(&["--info-path"]),
    flag(&["--version", "-v"]),
    flag(&["--help", "-h"]),
];

const GIT_SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        names: &["push"],
        options: GIT_PUSH,
        plus: &["--force"],
    },
    sub(&["reset"], GIT_RESET),
    sub(&["clean"], GIT_CLEAN),
    sub(&["checkout"], GIT_CHECKOUT),
    sub(&["switch"], GIT_SWITCH),
    sub(&["restore"], GIT_RESTORE),
    sub(&["branch"], GIT_BRANCH),
    sub(&["tag"], GIT_TAG),
    sub(&["rebase"], GIT_REBASE),
    sub(&["commit"], GIT_COMMIT),
];

/// `--force-with-lease` and `--force-if-includes` are not `--force`: they refuse to
/// overwrite work the pusher has not seen. An operand `+REFSPEC` is `--force` for that
/// ref ([`Subcommand::plus`]).
const GIT_PUSH: &[Opt] = &[
    flag(&["--force", "-f"]),
    optional(&["--force-with-lease"]),
    flag(&["--force-if-includes"]),
    flag(&["--all", "--branches"]),
    flag(&["--mirror"]),
    flag(&["--tags"]),
    flag(&["--follow-tags"]),
    flag(&["--delete", "-d"]),
    flag(&["--prune"]),
    flag(&["--dry-run", "-n"]),
    flag(&["--porcelain"]),
    flag(&["--set-upstream", "-u"]),
    flag(&["--quiet", "-q"]),
    flag(&["--verbose", "-v"]),
    flag(&["--progress"]),
    flag(&["--no-verify"]),
    flag(&["--verify"]),
    flag(&["--atomic"]),
    optional(&["--signed"]),
    flag(&["--thin"]),
    flag(&["--ipv4", "-4"]),
    flag(&["--ipv6", "-6"]),
    value(&["--push-option", "-o"]),
    value(&["--repo"]),
    value(&["--receive-pack", "--exec"]),
    value(&["--recurse-submodules"]),
];

const GIT_RESET: &[Opt] = &[
    flag(&["--hard"]),
    flag(&["--soft"]),
    flag(&["--mixed"]),
    flag(&["--merge"]),
    flag(&["--keep"]),
    flag(&["--quiet", "-q"]),
    flag(&["--patch", "-p"]),
    flag(&["--intent-to-add", "-N"]),
    flag(&["--no-refresh"]),
    optional(&["--recurse-submodules"]),
    value(&["--pathspec-from-file"]),
    flag(&["--pathspec-file-nul"]),
];

const GIT_CLEAN: &[Opt] = &[
    flag(&["--force", "-f"]),
    flag(&["-d"]),
    flag(&["-x"]),
    flag(&["-X"]),
    flag(&["--dry-run", "-n"]),
    flag(&["--quiet", "-q"]),
    flag(&["--interactive", "-i"]),
    value(&["--exclude", "-e"]),
];

/// `-B NAME` does what `-b NAME` does, and resets the branch if it exists.
const GIT_CHECKOUT: &[Opt] = &[
    flag(&["--force", "-f"]),
    value(&["-b"]),
    Opt {
        names: &["-B"],
        takes: Takes::Value,
        means: &["-B", "-b"],
    },
    value(&["--orphan"]),
    optional(&["--track", "-t"]),
    flag(&["--no-track"]),
    flag(&["-l"]),
    flag(&["--detach"]),
    flag(&["--merge", "-m"]),
    flag(&["--ours", "-2"]),
    flag(&["--theirs", "-3"]),
    flag(&["--patch", "-p"]),
    value(&["--conflict"]),
    flag(&["--quiet", "-q"]),
    flag(&["--progress"]),
    flag(&["--overwrite-ignore"]),
    flag(&["--ignore-other-worktrees"]),
    flag(&["--ignore-skip-worktree-bits"]),
    flag(&["--guess"]),
    flag(&["--overlay"]),
    optional(&["--recurse-submodules"]),
    value(&["--pathspec-from-file"]),
    flag(&["--pathspec-file-nul"]),
];

const GIT_SWITCH: &[Opt] = &[
    flag(&["--discard-changes", "--force", "-f"]),
    value(&["--create", "-c"]),
    Opt {
        names: &["--force-create", "-C"],
        takes: Takes::Value,
        means: &["--force-create", "--create"],
    },
    value(&["--orphan"]),
    flag(&["--detach", "-d"]),
    optional(&["--track", "-t"]),
    flag(&["--no-track"]),
    flag(&["--merge", "-m"]),
    value(&["--conflict"]),
    flag(&["--guess"]),
    flag(&["--quiet", "-q"]),
    flag(&["--progress"]),
    flag(&["--ignore-other-worktrees"]),
    optional(&["--recurse-submodules"]),
];

const GIT_RESTORE: &[Opt] = &[
    value(&["--source", "-s"]),
    flag(&["--staged", "-S"]),
    flag(&["--worktree", "-W"]),
    flag(&["--patch", "-p"]),
    flag(&["--ours"]),
    flag(&["--theirs"]),
    flag(&["--merge", "-m"]),
    value(&["--conflict"]),
    flag(&["--ignore-unmerged"]),
    flag(&["--ignore-skip-worktree-bits"]),
    flag(&["--overlay"]),
    flag(&["--quiet", "-q"]),
    flag(&["--progress"]),
    optional(&["--recurse-submodules"]),
    value(&["--pathspec-from-file"]),
    flag(&["--pathspec-file-nul"]),
];

/// `-D`, `-M` and `-C` are `--delete`, `--move` and `--copy` with `--force`.
const GIT_BRANCH: &[Opt] = &[
    flag(&["--delete", "-d"]),
    means(&["-D"], &["--delete", "--force"]),
    flag(&["--force", "-f"]),
    flag(&["--move", "-m"]),
    means(&["-M"], &["--move", "--force"]),
    flag(&["--copy", "-c"]),
    means(&["-C"], &["--copy", "--force"]),
    flag(&["--remotes", "-r"]),
    flag(&["--all", "-a"]),
    flag(&["--list", "-l"]),
    flag(&["--verbose", "-v"]),
    flag(&["--quiet", "-q"]),
    optional(&["--track", "-t"]),
    flag(&["--no-track"]),
    value(&["--set-upstream-to", "-u"]),
    flag(&["--unset-upstream"]),
    flag(&["--edit-description"]),
    flag(&["--create-reflog"]),
    flag(&["--show-current"]),
    flag(&["--ignore-case", "-i"]),
    flag(&["--omit-empty"]),
    optional(&["--recurse-submodules"]),
    value(&["--contains"]),
    value(&["--no-contains"]),
    value(&["--merged"]),
    value(&["--no-merged"]),
    value(&["--points-at"]),
    value(&["--sort"]),
    value(&["--format"]),
    optional(&["--color"]),
    optional(&["--column"]),
    optional(&["--abbrev"]),
];

const GIT_TAG: &[Opt] = &[
    flag(&["--delete", "-d"]),
    flag(&["--force", "-f"]),
    flag(&["--annotate", "-a"]),
    flag(&["--sign", "-s"]),
    value(&["--local-user", "-u"]),
    value(&["--message", "-m"]),
    value(&["--file", "-F"]),
    flag(&["--list", "-l"]),
    flag(&["--verify", "-v"]),
    optional(&["-n"]),
    value(&["--contains"]),
    value(&["--no-contains"]),
    value(&["--merged"]),
    value(&["--no-merged"]),
    value(&["--points-at"]),
    value(&["--sort"]),
    value(&["--format"]),
    value(&["--cleanup"]),
    flag(&["--edit", "-e"]),
    flag(&["--ignore-case", "-i"]),
];

/// `--no-ff` is `--force-rebase`.
const GIT_REBASE: &[Opt] = &[
    flag(&["--interactive", "-i"]),
    value(&["--onto"]),
    flag(&["--root"]),
    flag(&["--keep-base"]),
    flag(&["--continue"]),
    flag(&["--abort"]),
    flag(&["--skip"]),
    flag(&["--quit"]),
    flag(&["--edit-todo"]),
    flag(&["--show-current-patch"]),
    value(&["--exec", "-x"]),
    value(&["--strategy", "-s"]),
    value(&["--strategy-option", "-X"]),
    flag(&["--force-rebase", "-f", "--no-ff"]),
    flag(&["--autosquash"]),
    flag(&["--autostash"]),
    optional(&["--rebase-merges", "-r"]),
    flag(&["--update-refs"]),
    flag(&["--merge", "-m"]),
    flag(&["--apply"]),
    flag(&["--fork-point"]),
    flag(&["--signoff"]),
    flag(&["--committer-date-is-author-date"]),
    flag(&["--ignore-date", "--reset-author-date"]),
    flag(&["--ignore-whitespace"]),
    value(&["--whitespace"]),
    value(&["-C"]),
    optional(&["--gpg-sign", "-S"]),
    value(&["--empty"]),
    flag(&["--quiet", "-q"]),
    flag(&["--verbose", "-v"]),
    flag(&["--stat"]),
    flag(&["--no-stat", "-n"]),
    flag(&["--no-verify"]),
    flag(&["--verify"]),
    flag(&["--reapply-cherry-picks"]),
];

const GIT_COMMIT: &[Opt] = &[
    flag(&["--all", "-a"]),
    value(&["--message", "-m"]),
    value(&["--file", "-F"]),
    value(&["--reuse-message", "-C"]),
    value(&["--reedit-message", "-c"]),
    value(&["--fixup"]),
    value(&["--squash"]),
    flag(&["--amend"]),
    flag(&["--no-verify", "-n"]),
    flag(&["--verify"]),
    flag(&["--allow-empty"]),
    flag(&["--allow-empty-message"]),
    value(&["--template", "-t"]),
    flag(&["--signoff", "-s"]),
    optional(&["--gpg-sign", "-S"]),
    value(&["--author"]),
    value(&["--date"]),
    value(&["--cleanup"]),
    value(&["--trailer"]),
    flag(&["--edit", "-e"]),
    flag(&["--no-edit"]),
    flag(&["--quiet", "-q"]),
    flag(&["--verbose", "-v"]),
    flag(&["--patch", "-p"]),
    flag(&["--include", "-i"]),
    flag(&["--only", "-o"]),
    optional(&["--untracked-files", "-u"]),
    flag(&["--reset-author"]),
    flag(&["--dry-run"]),
    flag(&["--short"]),
    flag(&["--porcelain"]),
    flag(&["--long"]),
    flag(&["--null", "-z"]),
    flag(&["--status"]),
    flag(&["--no-status"]),
    flag(&["--no-post-rewrite"]),
    value(&["--pathspec-from-file"]),
    flag(&["--pathspec-file-nul"]),
];

// Containers: `docker rm`, `rmi`, `system prune` and their long forms. `docker container
// rm` is not `docker rm` to a deny rule (the operands differ); one table covers both.

const DOCKER: &[Opt] = &[
    value(&["--host", "-H"]),
    value(&["--config"]),
    value(&["--context", "-c"]),
    value(&["--log-level", "-l"]),
    flag(&["--debug", "-D"]),
    flag(&["--tls"]),
    flag(&["--tlsverify"]),
    value(&["--tlscacert"]),
    value(&["--tlscert"]),
    value(&["--tlskey"]),
];

const PODMAN: &[Opt] = &[
    value(&["--connection", "-c"]),
    value(&["--url", "--host", "-H"]),
    value(&["--identity"]),
    value(&["--root"]),
    value(&["--runroot"]),
    value(&["--storage-driver"]),
    value(&["--storage-opt"]),
    value(&["--log-level"]),
    flag(&["--remote", "-r"]),
    value(&["--cgroup-manager"]),
    value(&["--events-backend"]),
    value(&["--hooks-dir"]),
    value(&["--module"]),
    value(&["--runtime"]),
    value(&["--runtime-flag"]),
    value(&["--tmpdir"]),
    value(&["--conmon"]),
    value(&["--ssh"]),
    value(&["--volumepath"]),
    value(&["--imagestore"]),
    value(&["--network-config-dir"]),
    value(&["--db-backend"]),
    value(&["--config"]),
    value(&["--out"]),
    flag(&["--syslog"]),
    flag(&["--noout"]),
    flag(&["--transient-store"]),
];

const CONTAINER_SUBCOMMANDS: &[Subcommand] = &[
    sub(
        &[
            "rm",
            "container",
            "volume",
            "network",
            "system",
            "builder",
            "image",
            "rmi",
        ],
        CONTAINER_REMOVE,
    ),
    sub(&["kill", "stop"], CONTAINER_STOP),
];

/// The options of `rm`, `rmi` and the `prune`s of docker and podman together.
const CONTAINER_REMOVE: &[Opt] = &[
    flag(&["--force", "-f"]),
    flag(&["--all", "-a"]),
    flag(&["--volumes", "-v"]),
    flag(&["--link", "-l"]),
    flag(&["--no-prune"]),
    flag(&["--ignore", "-i"]),
    flag(&["--depend"]),
    value(&["--filter"]),
    value(&["--time", "-t"]),
    value(&["--cidfile"]),
];

const CONTAINER_STOP: &[Opt] = &[
    value(&["--signal", "-s"]),
    value(&["--time", "-t"]),
    flag(&["--all", "-a"]),
    flag(&["--ignore", "-i"]),
    flag(&["--latest", "-l"]),
    value(&["--cidfile"]),
];

/// kubectl's global flags, read anywhere.
const KUBECTL: &[Opt] = &[
    value(&["--namespace", "-n"]),
    value(&["--context"]),
    value(&["--kubeconfig"]),
    value(&["--cluster"]),
    value(&["--user"]),
    value(&["--server", "-s"]),
    value(&["--token"]),
    value(&["--as"]),
    value(&["--as-group"]),
    value(&["--as-uid"]),
    value(&["--request-timeout"]),
    value(&["--certificate-authority"]),
    value(&["--client-certificate"]),
    value(&["--client-key"]),
    value(&["--tls-server-name"]),
    value(&["--cache-dir"]),
    value(&["--v", "-v"]),
    flag(&["--insecure-skip-tls-verify"]),
    flag(&["--match-server-version"]),
];

const KUBECTL_SUBCOMMANDS: &[Subcommand] = &[
    sub(&["delete"], KUBECTL_DELETE),
    sub(&["drain"], KUBECTL_DRAIN),
];

const KUBECTL_DELETE: &[Opt] = &[
    flag(&["--all"]),
    flag(&["--all-namespaces", "-A"]),
    flag(&["--force"]),
    flag(&["--now"]),
    flag(&["--ignore-not-found"]),
    flag(&["--recursive", "-R"]),
    flag(&["--interactive", "-i"]),
    flag(&["--wait"]),
    value(&["--filename", "-f"]),
    value(&["--kustomize", "-k"]),
    value(&["--selector", "-l"]),
    value(&["--field-selector"]),
    value(&["--grace-period"]),
    value(&["--timeout"]),
    value(&["--output", "-o"]),
    value(&["--raw"]),
    optional(&["--cascade"]),
    optional(&["--dry-run"]),
];

const KUBECTL_DRAIN: &[Opt] = &[
    flag(&["--force"]),
    flag(&["--delete-emptydir-data"]),
    flag(&["--ignore-daemonsets"]),
    flag(&["--disable-eviction"]),
    value(&["--grace-period"]),
    value(&["--timeout"]),
    value(&["--pod-selector"]),
    value(&["--selector", "-l"]),
    optional(&["--dry-run"]),
];

/// Go's flag package: `-auto-approve` and `--auto-approve` are one flag, and a boolean
/// flag may say `-auto-approve=true`. `terraform apply -destroy` is not `terraform
/// destroy` to a deny rule (the operands differ).
const TERRAFORM: &[Opt] = &[
    value(&["-chdir"]),
    flag(&["-help", "-h"]),
    flag(&["-version", "-v"]),
];

const TERRAFORM_SUBCOMMANDS: &[Subcommand] =
    &[sub(&["destroy", "apply", "plan"], TERRAFORM_CHANGE)];

const TERRAFORM_CHANGE: &[Opt] = &[
    flag(&["-auto-approve"]),
    flag(&["-destroy"]),
    flag(&["-refresh-only"]),
    flag(&["-compact-warnings"]),
    flag(&["-no-color"]),
    flag(&["-json"]),
    flag(&["-lock"]),
    flag(&["-input"]),
    flag(&["-refresh"]),
    value(&["-var"]),
    value(&["-var-file"]),
    value(&["-target"]),
    value(&["-replace"]),
    value(&["-lock-timeout"]),
    value(&["-parallelism"]),
    value(&["-state"]),
    value(&["-state-out"]),
    value(&["-backup"]),
    value(&["-out"]),
];

// Package managers: global options anywhere; `publish` and `unpublish` with theirs.

const NPM: &[Opt] = &[
    value(&["--registry"]),
    value(&["--userconfig"]),
    value(&["--prefix", "-C"]),
    value(&["--workspace", "-w"]),
    value(&["--loglevel"]),
    value(&["--cache"]),
    value(&["--otp"]),
    flag(&["--workspaces"]),
    flag(&["--global", "-g"]),
    flag(&["--force", "-f"]),
    flag(&["--yes", "-y"]),
    flag(&["--silent", "-s"]),
    flag(&["--quiet", "-q"]),
    flag(&["--dry-run"]),
];

const PNPM: &[Opt] = &[
    value(&["--dir", "-C"]),
    value(&["--filter", "-F"]),
    value(&["--reporter"]),
    value(&["--loglevel"]),
    value(&["--registry"]),
    value(&["--otp"]),
    flag(&["--recursive", "-r"]),
    flag(&["--workspace-root", "-w"]),
    flag(&["--global", "-g"]),
    flag(&["--silent", "-s"]),
    flag(&["--force"]),
    flag(&["--dry-run"]),
];

const YARN: &[Opt] = &[
    value(&["--cwd"]),
    value(&["--registry"]),
    value(&["--otp"]),
    flag(&["--silent", "-s"]),
    flag(&["--verbose"]),
    flag(&["--non-interactive"]),
];

const NPM_SUBCOMMANDS: &[Subcommand] = &[
    sub(&["publish"], PUBLISH),
    sub(&["unpublish"], PUBLISH),
    sub(&["npm"], PUBLISH),
];

/// npm's, pnpm's and yarn's `publish` (yarn 2 and later: `yarn npm publish`).
const PUBLISH: &[Opt] = &[
    value(&["--tag"]),
    value(&["--access"]),
    value(&["--publish-branch"]),
    value(&["--new-version"]),
    flag(&["--provenance"]),
    flag(&["--ignore-scripts"]),
    flag(&["--no-git-checks"]),
    flag(&["--tolerate-republish"]),
];
