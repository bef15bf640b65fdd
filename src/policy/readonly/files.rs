//! What a read-only command's words name on disk, and whether the preset may read it.
//!
//! A name says little about a file: `./notes` can be a symbolic link to `~/.ssh/id_rsa`,
//! `/dev/stdin` leads into `/proc`, and `/proc/self/environ` holds the environment
//! (agents' API keys). So the preset decides on what names resolve to. The resolution is
//! I/O and happens at the edge (`crate::files`): for the [`Query`]s this module asks
//! ([`queries`]), the edge answers what is there ([`Found`]: every link followed, relative
//! to the working directory) and which places are protected ([`Protected`]: what the
//! sandbox hides, gate's own files). Here, with those facts, a command is refused when a
//! word resolves:
//!
//! - under a protected place, or to a process's own files in `/proc` (`environ`, `mem`,
//!   `cmdline`, its descriptors and every other file of `/proc/PID` but a few that hold
//!   no secret, such as `status`), or to `/proc/kcore` and the like;
//! - for a program that prints what files hold ([`Reads::Contents`]): to a device (other
//!   than `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`, `/dev/urandom`), a FIFO
//!   or a socket, or to a file with more than one name (a hard link, whose other names
//!   gate cannot see);
//! - for a program that reads every file under a directory (`grep -r`, `rg`,
//!   `git diff --no-index`): to a directory that holds a protected place or `/proc`; and
//!   for one that follows links inside a directory (`diff`): to any directory.
//!
//! A word the edge could not resolve (a loop of links, a link inside a process's `/proc`
//! directory, a directory it may not search) is refused, and so is an unquoted pattern
//! for a program that prints contents: the shell chooses the names after gate has
//! decided.
//!
//! Which words are names is not always known (is `-fFILE` an option with a value?), so
//! every word is asked about, and for an option also its value after `=` and every
//! possible attached value of a cluster (`-sfFILE`: `fFILE`, `FILE`...). A name that
//! does not exist is fine: reading it fails.
//!
//! Pure: the facts come in as values.

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

use super::{Entry, NotReadOnly, Word};

/// A name the edge resolves, as a word gives it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Query {
    /// As written: relative to the working directory unless it starts with `/`.
    Path(String),
    /// A name that starts with a `~` the shell replaces with a home directory (`~`,
    /// `~/x`, `~user/x`).
    Home(String),
}

/// What is at a name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// Nothing: reading it fails.
    Missing,
    /// It resolves, every link followed, to this.
    At(Place),
    /// It could not be resolved safely, and why.
    Unknown(String),
}

/// Where a name leads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Place {
    /// Canonical: absolute, no link, no `.` or `..`.
    pub path: PathBuf,
    pub kind: Kind,
    /// How many names (hard links) the file has.
    pub links: u64,
    /// It is on a proc file system.
    pub on_proc: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Directory,
    CharDevice,
    BlockDevice,
    Fifo,
    Socket,
}

/// A place whose files the preset does not read, canonical, and what it is (completing
/// "… which is …").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Protected {
    pub path: PathBuf,
    pub what: String,
}

/// The facts for one request: what the edge found at each name, and the protected
/// places. A name it was not asked about counts as one it could not resolve.
#[derive(Debug, Clone, Default)]
pub struct Files {
    found: HashMap<Query, Found>,
    protected: Vec<Protected>,
    #[cfg(test)]
    missing_unless_told: bool,
}

impl Files {
    pub fn new(protected: Vec<Protected>) -> Files {
        Files {
            protected,
            ..Files::default()
        }
    }

    pub fn insert(&mut self, query: Query, found: Found) {
        self.found.insert(query, found);
    }

    pub fn protected(&self) -> &[Protected] {
        &self.protected
    }

    /// For tests: every name not told otherwise holds nothing.
    #[cfg(test)]
    pub fn nothing_there() -> Files {
        Files {
            missing_unless_told: true,
            ..Files::default()
        }
    }

    fn get(&self, query: &Query) -> Option<&Found> {
        let found = self.found.get(query);
        #[cfg(test)]
        if found.is_none() && self.missing_unless_told {
            static MISSING: Found = Found::Missing;
            return Some(&MISSING);
        }
        found
    }
}

/// The facts as one part of a command sees them: after a part that changes the
/// directory or the environment (`cd src && cat x`), relative names and `~` no longer
/// mean what the edge resolved.
#[derive(Debug, Clone, Copy)]
pub(crate) struct View<'a> {
    files: &'a Files,
    /// The working directory and `HOME` are the edge's.
    here: bool,
}

impl<'a> View<'a> {
    pub fn here(files: &'a Files) -> View<'a> {
        View { files, here: true }
    }

    /// After a part that may have changed the directory or the environment.
    pub fn moved(files: &'a Files) -> View<'a> {
        View { files, here: false }
    }

    /// What `query` leads to: `None` when nothing is there, `Err` when it could not be
    /// resolved safely (or not here, or not at all).
    fn resolve(&self, query: &Query) -> Result<Option<&'a Place>, String> {
        let relative = match query {
            Query::Path(p) => !p.starts_with('/'),
            Query::Home(_) => true,
        };
        if relative && !self.here {
            return Err(
                "an earlier part of the command may have changed the directory or the \
                 environment, so gate cannot tell what it names"
                    .to_owned(),
            );
        }
        match self.files.get(query) {
            None => Err("gate did not look at it".to_owned()),
            Some(Found::Missing) => Ok(None),
            Some(Found::At(place)) => Ok(Some(place)),
            Some(Found::Unknown(why)) => Err(why.clone()),
        }
    }
}

/// Shell builtins after which relative names and `~` may mean something else: they
/// change the directory, or the variables (`HOME`), or run text gate has not read.
pub const MOVES: &[&str] = &[
    "cd", "pushd", "popd", "source", ".", "eval", "exec", "builtin", "command", "export", "unset",
    "declare", "typeset", "local", "readonly", "set", "shopt", "alias",
];

/// Whether a simple command (one part of a compound one) may change what later parts'
/// names mean: it starts with one of [`MOVES`] or with an assignment.
pub fn moves(part: &str) -> bool {
    let Some(words) = super::split_words(part) else {
        return true;
    };
    words
        .first()
        .is_some_and(|w| MOVES.contains(&w.text.as_str()) || super::is_assignment(&w.text))
}

/// What an entry does with the files its words name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reads {
    /// It opens no file its words name (`echo`, `pwd`, `printenv`).
    Nothing,
    /// It reads names and metadata, or prints counts, checksums or types: never what a
    /// file holds (`ls`, `stat`, `wc`, `sha256sum`). Unless it is told to read names or
    /// text from a file ([`Reading::lists`]), when it counts as [`Reads::Contents`].
    Names,
    /// It prints what files hold, or lines of them (`cat`, `grep`, `sort`, `jq`).
    Contents,
    /// git: the repository and the files of the work tree, whose links it does not
    /// follow; its words are checked as [`Reads::Contents`]'s, its patterns as before.
    Repository,
}

impl Reads {
    pub fn describe(self) -> &'static str {
        match self {
            Reads::Nothing => "opens no file its words name",
            Reads::Names => "reads names and metadata, or prints counts, checksums or types",
            Reads::Contents => "prints what files hold",
            Reads::Repository => "reads the repository and its work tree",
        }
    }
}

/// How an entry walks directories.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// It reads the files it is given, not what is under a directory.
    No,
    /// git diff: every file under the directories it is given (outside the repository,
    /// or with `--no-index`), following no link.
    GivenDirectories,
    /// git grep: with `--no-index` or `--untracked`, every file under the working
    /// directory, following no link; otherwise only tracked files.
    GitGrep,
    /// grep: with `-r` (or `-d recurse`), every file under the directories it is given,
    /// or under the working directory; it follows no link inside (`-R`, which does, is
    /// refused).
    Grep,
    /// ripgrep: every file under the directories it is given, or under the working
    /// directory; it follows no link inside (`-L` is refused).
    Always,
    /// diff: the files of the directories it is given, following the links inside, so a
    /// directory is refused.
    NoDirectories,
}

/// What an entry does with files: [`Entry::reading`].
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub reads: Reads,
    pub walk: Walk,
    /// Options that make it read names or text from a file (for [`Reads::Names`]).
    pub lists: Lists,
}

impl Reading {
    pub const NOTHING: Reading = Reading::of(Reads::Nothing);
    pub const NAMES: Reading = Reading::of(Reads::Names);
    pub const CONTENTS: Reading = Reading::of(Reads::Contents);
    pub const REPOSITORY: Reading = Reading::of(Reads::Repository);

    const fn of(reads: Reads) -> Reading {
        Reading {
            reads,
            walk: Walk::No,
            lists: NO_LISTS,
        }
    }

    pub const fn walking(self, walk: Walk) -> Reading {
        Reading { walk, ..self }
    }

    pub const fn listing(
        self,
        names: &'static [&'static str],
        short_values: &'static str,
    ) -> Reading {
        Reading {
            lists: Lists {
                names,
                short_values,
            },
            ..self
        }
    }
}

/// Options that make an entry of [`Reads::Names`] read names or text from a file and
/// print them (`wc --files0-from=F`, `tree --fromfile F`).
#[derive(Debug, Clone, Copy)]
pub struct Lists {
    pub names: &'static [&'static str],
    /// Its short options that take a value (a cluster ends at one).
    pub short_values: &'static str,
}

pub const NO_LISTS: Lists = Lists {
    names: &[],
    short_values: "",
};

/// Every query the edge should answer for one simple command of a known entry, with
/// `args` its words after the program (after the subcommand for git).
pub(super) fn queries(entry: &Entry, args: &[Word]) -> BTreeSet<Query> {
    let mut out = BTreeSet::new();
    if entry.reading.reads == Reads::Nothing {
        return out;
    }
    for word in args {
        out.extend(candidates(word));
    }
    // Where a walk starts when no directory is given.
    if walks(entry, args) == Walk::Always {
        out.insert(Query::Path(".".to_owned()));
    }
    if entry.name == "jq" {
        out.insert(Query::Home(JQ_LIBRARY.to_owned()));
    }
    out
}

/// The pattern characters other than `~`.
const GLOB_CHARS: [char; 5] = ['*', '?', '[', '^', '#'];

/// The file jq 1.6 and later read into every program when it exists.
pub(super) const JQ_LIBRARY: &str = "~/.jq";

/// The names a word may give: itself, an option's value after `=`, and the values a
/// cluster of short options may hold attached. None for a pattern, unless its only
/// pattern characters are `~` (bash replaces one after `=` with a home directory).
fn candidates(word: &Word) -> Vec<Query> {
    let text = word.text.as_str();
    let mut out = Vec::new();
    if (word.glob && text.contains(GLOB_CHARS)) || text.is_empty() || text == "-" {
        return out;
    }
    out.push(if word.tilde {
        Query::Home(text.to_owned())
    } else {
        Query::Path(text.to_owned())
    });
    if !text.starts_with('-') {
        return out;
    }
    let mut push = |value: &str| {
        if value.is_empty() {
            return;
        }
        if value.starts_with('~') {
            // bash replaces `~` after `=` as well.
            out.push(Query::Home(value.to_owned()));
        }
        out.push(Query::Path(value.to_owned()));
    };
    if let Some((_, value)) = text.split_once('=') {
        push(value);
    }
    if !text.starts_with("--") {
        for (at, _) in text.char_indices().skip(2) {
            push(&text[at..]);
        }
    }
    out
}

/// Check what `args` name, for `entry`, against the facts.
pub(super) fn check(entry: &Entry, args: &[Word], view: &View<'_>) -> Result<(), NotReadOnly> {
    let mut reads = entry.reading.reads;
    if reads == Reads::Nothing {
        return Ok(());
    }
    if reads == Reads::Names && mentions(args, entry.reading.lists) {
        reads = Reads::Contents;
    }
    let walks = walks(entry, args);
    for word in args {
        // git's own patterns are pathspecs it matches against the repository; but an
        // option's value can be a file it opens (`--contents=*`).
        let pattern_refused = match reads {
            Reads::Contents => true,
            Reads::Repository => word.text.starts_with('-'),
            Reads::Names | Reads::Nothing => false,
        };
        if word.glob && word.text.contains(GLOB_CHARS) && pattern_refused {
            return Err(entry.refuse(format!(
                "`{}`: the unquoted pattern `{}` becomes file names only after gate has \
                 decided, so gate cannot check where they lead",
                entry.name, word.text
            )));
        }
        for query in candidates(word) {
            let place = match view.resolve(&query) {
                Err(why) => {
                    return Err(entry.refuse(format!(
                        "`{}`: `{}` cannot be resolved safely: {why}",
                        entry.name,
                        shown(&query)
                    )));
                }
                Ok(None) => continue,
                Ok(Some(place)) => place,
            };
            check_place(entry, reads, &query, place, view.files)?;
            if place.kind == Kind::Directory {
                match walks {
                    Walk::No | Walk::Grep | Walk::GitGrep => {}
                    Walk::Always | Walk::GivenDirectories => {
                        check_walk(entry, &query, place, view.files)?;
                    }
                    Walk::NoDirectories => {
                        return Err(entry.refuse(format!(
                            "`{}`: `{}` is a directory, and `{}` reads the files in it \
                             through any link there, which gate has not looked at",
                            entry.name,
                            shown(&query),
                            entry.name
                        )));
                    }
                }
            }
        }
    }
    if walks == Walk::Always {
        // With no directory given, the walk starts here.
        let here = Query::Path(".".to_owned());
        match view.resolve(&here) {
            Ok(Some(place)) => check_walk(entry, &here, place, view.files)?,
            Ok(None) => {}
            Err(why) => {
                return Err(entry.refuse(format!(
                    "`{}` reads every file under the working directory, which cannot be \
                     resolved safely: {why}",
                    entry.name
                )));
            }
        }
    }
    if entry.name == "jq" {
        let library = Query::Home(JQ_LIBRARY.to_owned());
        match view.resolve(&library) {
            Ok(None) => {}
            _ => {
                return Err(entry.refuse(
                    "`jq` reads `~/.jq` into every program when it exists, and a function \
                     defined there can print the environment"
                        .to_owned(),
                ));
            }
        }
    }
    Ok(())
}

/// A query as the command wrote it.
fn shown(query: &Query) -> &str {
    match query {
        Query::Path(p) | Query::Home(p) => p,
    }
}

fn check_place(
    entry: &Entry,
    reads: Reads,
    query: &Query,
    place: &Place,
    files: &Files,
) -> Result<(), NotReadOnly> {
    if let Some(what) = protected(place, files.protected()) {
        return Err(entry.refuse(format!(
            "`{}`: `{}` leads to {}, {what}; what a command prints reaches the model",
            entry.name,
            shown(query),
            place.path.display()
        )));
    }
    if !matches!(reads, Reads::Contents | Reads::Repository) {
        return Ok(());
    }
    let kind = match place.kind {
        Kind::File if place.links > 1 => Some(
            "a file with other names (hard links), which gate cannot see: one of them may be a \
             secret's",
        ),
        Kind::File | Kind::Directory => None,
        Kind::CharDevice if HARMLESS_DEVICES.iter().any(|d| place.path == Path::new(d)) => None,
        Kind::CharDevice | Kind::BlockDevice => Some(
            "a device, whose contents can be memory, a disk with every user's files, or what \
             is typed on a terminal",
        ),
        Kind::Fifo | Kind::Socket => {
            Some("a FIFO or a socket, where reading takes what another program was sent")
        }
    };
    match kind {
        Some(what) => Err(entry.refuse(format!(
            "`{}`: `{}` leads to {}, {what}",
            entry.name,
            shown(query),
            place.path.display()
        ))),
        None => Ok(()),
    }
}

/// A directory a walk starts at must hold nothing protected, and no processes' files.
fn check_walk(
    entry: &Entry,
    query: &Query,
    place: &Place,
    files: &Files,
) -> Result<(), NotReadOnly> {
    match holds(place, files.protected()) {
        Some(what) => Err(entry.refuse(format!(
            "`{}` reads every file under `{}` ({}), which holds {what}",
            entry.name,
            shown(query),
            place.path.display()
        ))),
        None => Ok(()),
    }
}

/// Character devices that hold no data: reading gives nothing, zeros, or randomness.
pub(crate) const HARMLESS_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// The files of a process's directory in /proc (`/proc/PID/...`) that hold no secret.
/// The others hold its environment (`environ`), memory (`mem`, `maps`, `pagemap`),
/// arguments (`cmdline`), open files (`fd/`), root and working directory (links into
/// its view of the files), or tell about its address space.
pub(crate) const PROC_SHOWN: [&str; 10] = [
    "status",
    "stat",
    "statm",
    "comm",
    "cgroup",
    "limits",
    "mounts",
    "mountinfo",
    "uid_map",
    "gid_map",
];

/// Files of /proc itself that are secrets: the kernel's memory and log, its symbols,
/// the pages of every process, the keys of the keyrings.
pub(crate) const PROC_SECRETS: [&str; 8] = [
    "kcore",
    "kmsg",
    "kallsyms",
    "kpagecount",
    "kpageflags",
    "kpagecgroup",
    "keys",
    "key-users",
];

/// Why `place` may not be read: the protected place it is under, or the process file it
/// is.
pub fn protected(place: &Place, list: &[Protected]) -> Option<String> {
    if let Some(p) = list.iter().find(|p| place.path.starts_with(&p.path)) {
        return Some(format!("which is under {}, {}", p.path.display(), p.what));
    }
    if place.on_proc || place.path.starts_with("/proc") {
        return proc_secret(&place.path);
    }
    None
}

fn proc_secret(path: &Path) -> Option<String> {
    let names: Vec<&str> = path
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => n.to_str(),
            _ => None,
        })
        .collect();
    // A process's directory: a number, then what of it is read.
    if let Some(at) = names
        .iter()
        .position(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    {
        return match names.get(at + 1) {
            None => None,
            Some(file) if PROC_SHOWN.contains(file) && names.len() == at + 2 => None,
            Some(_) => Some(
                "a file of a process in /proc, which holds its environment (where agents \
                 keep API keys), memory, arguments or open files"
                    .to_owned(),
            ),
        };
    }
    names
        .iter()
        .any(|n| PROC_SECRETS.contains(n))
        .then(|| "a file of /proc that holds the kernel's memory, log or keys".to_owned())
}

/// What protected a directory holds: a protected place under it, or processes' files.
pub fn holds(place: &Place, list: &[Protected]) -> Option<String> {
    if let Some(p) = list.iter().find(|p| p.path.starts_with(&place.path)) {
        return Some(format!("{} ({})", p.path.display(), p.what));
    }
    let proc = Path::new("/proc");
    if place.on_proc || place.path.starts_with(proc) || proc.starts_with(&place.path) {
        return Some("/proc, the processes' environments and memory".to_owned());
    }
    None
}

/// Whether `args` hold one of the options in `lists`: a long one also abbreviated, a
/// short one also in a cluster before an option that takes a value.
fn mentions(args: &[Word], lists: Lists) -> bool {
    args.iter().any(|word| {
        let text = word.text.as_str();
        if lists.names.contains(&text) {
            return true;
        }
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            return !name.is_empty()
                && lists
                    .names
                    .iter()
                    .filter_map(|n| n.strip_prefix("--"))
                    .any(|n| n.starts_with(name));
        }
        let Some(cluster) = text.strip_prefix('-') else {
            return false;
        };
        for c in cluster.chars() {
            if lists
                .names
                .iter()
                .any(|n| n.len() == 2 && n.starts_with('-') && n.ends_with(c))
            {
                return true;
            }
            if lists.short_values.contains(c) {
                break;
            }
        }
        false
    })
}

/// How `entry` walks directories with these words.
fn walks(entry: &Entry, args: &[Word]) -> Walk {
    match entry.reading.walk {
        Walk::Grep if grep_recurses(args) => Walk::Always,
        Walk::GitGrep if git_grep_walks(args) => Walk::Always,
        Walk::Grep | Walk::GitGrep => Walk::No,
        walk => walk,
    }
}

/// Whether git grep searches the files of the work tree, not only the tracked ones:
/// `--no-index` or `--untracked`, also abbreviated.
fn git_grep_walks(args: &[Word]) -> bool {
    args.iter().any(|word| {
        word.text.strip_prefix("--").is_some_and(|long| {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            !name.is_empty() && ("no-index".starts_with(name) || "untracked".starts_with(name))
        })
    })
}

/// Whether grep's words make it recurse: `-r` in a cluster (before an option that takes
/// a value), `--recursive` or a prefix of it, or `-d`/`--directories`, whatever the
/// action.
fn grep_recurses(args: &[Word]) -> bool {
    for word in args {
        let text = word.text.as_str();
        if text == "--" {
            return false;
        }
        if let Some(long) = text.strip_prefix("--") {
            let name = long.split_once('=').map_or(long, |(n, _)| n);
            if !name.is_empty()
                && ("recursive".starts_with(name) || "directories".starts_with(name))
            {
                return true;
            }
            continue;
        }
        let Some(cluster) = text.strip_prefix('-') else {
            continue;
        };
        for c in cluster.chars() {
            if c == 'r' || c == 'd' {
                return true;
            }
            if super::checks::GREP_VALUES.contains(c) {
                break;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests;
