//! The exec duty (deny rules at exec): every `execve`/`execveat` of the command and of
//! everything it starts waits here while the supervisor reads what the kernel is about
//! to run, and fails with EACCES when a deny rule matches it.
//!
//! What is judged, for each call:
//! - the program, by the last component of the path the caller passed and of `argv[0]`
//!   (a multi-call binary runs what `argv[0]` names), and by the file itself: at start the
//!   supervisor looks up every program a rule names in the standard directories and the
//!   command's `PATH` and keeps their (device, inode), so a link to a denied program, by
//!   any name, is that program;
//! - a script's interpreter (`#!`), which the kernel starts without another `execve`:
//!   its first line is read, and the interpreter judged as if exec'd with the argv the
//!   kernel gives it, up to the kernel's own depth;
//! - only when a program is one the rules name, the whole argv, literally.
//!
//! A program no rule names goes on at once (`SECCOMP_USER_NOTIF_FLAG_CONTINUE`), after
//! the check that the call still waits. What cannot be read refuses the exec: a bad
//! pointer fails as the kernel would fail it (EFAULT), and memory the supervisor may not
//! read (Yama, a non-dumpable process) or an argv past [`MAX_ARGV_BYTES`] fails with
//! EACCES and a line that says why.
//!
//! The check reads the caller's memory before the kernel does; a second thread of the
//! caller, or a process sharing its memory, can change the strings in between. See
//! docs/rules.md ("What stays outside"): the sandbox, not deny rules, is the wall
//! against a command that works to get around them.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::SystemTime;

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, open};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};

use super::notify::{Answer, id_valid, respond};
use crate::policy::{DenyRules, ExecMatch};

mod read;
mod tell;

use read::{Head, ReadError, file_of, in_root, look, missing, read_argv, read_call, read_string};
use tell::{encode, message, tell};

/// The most argv bytes (strings and their pointers) read for a program the rules name.
/// Far above what commands pass (Linux allows up to a quarter of the stack limit); an
/// argv past it is refused rather than judged in part.
pub(crate) const MAX_ARGV_BYTES: usize = 1 << 20;
/// `argv[0]` of the question another gate asks before it starts a supervisor of its own
/// ([`super::outer_checks`]); the path is `/`.
pub(crate) const PROBE: &str = "\u{1}gate: are these deny rules checked at exec?";
/// The longest path the kernel takes (PATH_MAX).
const MAX_PATH: usize = 4096;
/// How deep the kernel follows `#!` interpreters (binfmt's recursion limit).
const MAX_INTERPRETERS: usize = 4;
/// The kernel reads this much of a script's first line (BINPRM_BUF_SIZE).
const SHEBANG_BYTES: usize = 256;
/// Where programs are looked for besides the command's `PATH`.
const STANDARD_DIRS: [&str; 6] = [
    "/usr/local/sbin",
    "/usr/local/bin",
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
];

/// The exec duty: the deny rules, and what the supervisor learns of the files they name.
#[derive(Debug)]
pub(crate) struct Execs {
    rules: DenyRules,
    /// The names the rules start with.
    names: Vec<String>,
    /// The directories to find those programs in (the command's `PATH`, then the
    /// standard ones).
    dirs: Vec<PathBuf>,
    /// The files the named programs are, by (device, inode), with the name.
    files: HashMap<(u64, u64), String>,
    /// The last refusal told, by pid and a hash of its argv: a shell that finds the
    /// program refused in one `PATH` directory tries the next ones (dash does), and the
    /// person needs the line once.
    last_told: std::cell::Cell<Option<(u32, u64)>>,
    /// Whether [`Execs::learn`] has run.
    learned: bool,
}

impl Execs {
    /// The duty for `rules`, with the command's `PATH` (nothing is looked up yet: that
    /// happens in the supervisor, [`Execs::learn`]).
    pub(crate) fn new(rules: DenyRules, path: Option<OsString>) -> Execs {
        // By last component (a path rule too: the file is looked at, the rule decides),
        // and the multi-call binaries, which run the program their argv names.
        let mut names: Vec<String> = rules
            .program_names()
            .map(|n| String::from_utf8_lossy(last(n.as_bytes())).into_owned())
            .chain(crate::policy::MULTI_CALL.iter().map(|m| (*m).to_owned()))
            .collect();
        names.sort();
        names.dedup();
        let mut dirs: Vec<PathBuf> = path
            .map(|p| std::env::split_paths(&p).collect())
            .unwrap_or_default();
        dirs.extend(STANDARD_DIRS.iter().map(PathBuf::from));
        dirs.retain(|d| d.is_absolute());
        let mut seen = Vec::new();
        dirs.retain(|d| {
            let new = !seen.contains(d);
            seen.push(d.clone());
            new
        });
        Execs {
            rules,
            names,
            dirs,
            files: HashMap::new(),
            last_told: std::cell::Cell::new(None),
            learned: false,
        }
    }

    /// Find the files the rules' programs are (in gate, before it forks the supervisor,
    /// which inherits what was found, and before gate judges its own exec). Once: later
    /// calls do nothing. The multi-call binaries are known by name and argv alone: a link
    /// to one runs what its `argv[0]` names, which is judged anyway.
    pub(crate) fn learn(&mut self) {
        if std::mem::replace(&mut self.learned, true) {
            return;
        }
        let multi_call = |name: &str| crate::policy::MULTI_CALL.contains(&name);
        // A multi-call binary is every program it holds: a rule's program that is a link
        // to one (`/bin/rm` to busybox) must not make the binary itself, and so `sh` and
        // the rest, that program. Those are judged by their argv[0] instead. Only a link
        // can be one: a symbolic link is followed to its name, a file with more than one
        // name compared with the multi-call binaries found (looked up only then).
        let mut shared: Option<Vec<(u64, u64)>> = None;
        let mut files = HashMap::new();
        // Each directory once, however many names lead to it (on a merged /usr, /bin is
        // /usr/bin), and opened once: every name is then looked up in it without walking
        // its path again. This runs before every command with deny rules, once per name
        // and directory.
        let mut dir_ids = Vec::new();
        let dirs: Vec<(&PathBuf, OwnedFd)> = self
            .dirs
            .iter()
            .filter_map(|dir| {
                let flags = OFlag::O_PATH | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
                let fd = open(dir.as_path(), flags, Mode::empty()).ok()?;
                let meta = fstat(&fd).ok()?;
                let id = (meta.st_dev, meta.st_ino);
                (!dir_ids.contains(&id)).then(|| {
                    dir_ids.push(id);
                    (dir, fd)
                })
            })
            .collect();
        for name in self.names.iter().filter(|n| !multi_call(n)) {
            for (dir, fd) in &dirs {
                let Ok(mut meta) = fstatat(fd, name.as_str(), AtFlags::AT_SYMLINK_NOFOLLOW) else {
                    continue;
                };
                if is_kind(&meta, SFlag::S_IFLNK) {
                    let resolved = std::fs::canonicalize(dir.join(name)).ok();
                    let target = resolved.as_ref().and_then(|p| p.file_name());
                    if target.and_then(|n| n.to_str()).is_some_and(multi_call) {
                        continue;
                    }
                    let Ok(followed) = fstatat(fd, name.as_str(), AtFlags::empty()) else {
                        continue;
                    };
                    meta = followed;
                }
                if !is_kind(&meta, SFlag::S_IFREG) {
                    continue;
                }
                let id = (meta.st_dev, meta.st_ino);
                if meta.st_nlink > 1 {
                    let shared = shared.get_or_insert_with(|| self.multi_call_files());
                    if shared.contains(&id) {
                        continue;
                    }
                }
                files.entry(id).or_insert_with(|| name.clone());
            }
        }
        self.files = files;
    }

    /// The (device, inode) of every multi-call binary in the directories.
    fn multi_call_files(&self) -> Vec<(u64, u64)> {
        crate::policy::MULTI_CALL
            .iter()
            .flat_map(|name| self.dirs.iter().map(move |dir| dir.join(name)))
            .filter_map(|path| std::fs::metadata(path).ok())
            .map(|meta| (meta.dev(), meta.ino()))
            .collect()
    }
}

/// Whether `meta` is of the file type `kind` (`S_IFREG`, `S_IFLNK`…).
fn is_kind(meta: &FileStat, kind: SFlag) -> bool {
    SFlag::from_bits_truncate(meta.st_mode) & SFlag::S_IFMT == kind
}

/// Where a refusal is recorded: the run's audit log and system log, each where the run
/// has one, and its ids.
pub(super) struct Record {
    pub(crate) file: Option<std::fs::File>,
    pub(crate) journal: Option<crate::audit::journal::SystemLog>,
    pub(crate) call_id: String,
    pub(crate) session_id: String,
    pub(crate) level: String,
}

impl Record {
    /// The record of a refusal, to the audit log and the system log, each where there is
    /// one. What cannot be written is dropped: the refusal stands, and was told.
    fn write(&mut self, pid: u32, refusal: &Refusal, message: &str) {
        let record = encode(self, pid, refusal, message, SystemTime::now());
        let mut line = serde_json::to_vec(&serde_json::Value::Object(record.clone()))
            .expect("a JSON map always encodes");
        line.push(b'\n');
        if let Some(file) = &mut self.file {
            let _ = crate::audit::write(file, &line);
        }
        if let Some(journal) = &self.journal {
            let _ = journal.send(&record, &line, u64::from(pid));
        }
    }
}

/// What the caller asks the kernel to run.
struct Call {
    pid: u32,
    /// The path as passed (empty for `execveat` with `AT_EMPTY_PATH`).
    path: Vec<u8>,
    /// Where the file is, from the supervisor (a /proc path in the caller's view).
    file: PathBuf,
    argv_at: u64,
    /// `argv[0]`'s pointer, when it was read with the path (0: argv is empty).
    argv0_at: Option<u64>,
}

/// One program as the kernel will start it: the script's interpreters come first.
struct Program {
    /// The path judged (the caller's, or an interpreter's).
    path: Vec<u8>,
    /// Another name the file is known by, when it is a file a rule names.
    known_as: Option<String>,
    /// The words the kernel puts before the caller's argv[1..], for an interpreter
    /// (its name, its one argument, the script's path); empty for the caller's program.
    prefix: Vec<Vec<u8>>,
}

/// Why the exec was refused.
enum Refusal {
    /// Another gate's question ([`super::outer_checks`]): whether its rules are all
    /// checked here. Answered without a line or a record.
    Probe(bool),
    /// A denied program by name, at a path where there is no file: the kernel would say
    /// ENOENT, and so does the supervisor, without a line or a record (a shell, Python
    /// or node searching `PATH` tries every directory in turn; the refusal is told for
    /// the one that has the program).
    Missing,
    Rule {
        program: Vec<u8>,
        argv: Vec<Vec<u8>>,
        matched: ExecMatch,
    },
    Unreadable(Errno),
    TooLong(Vec<u8>),
    /// An executable file the supervisor may not read: the kernel reads its first line
    /// itself, so a `#!` interpreter there would run unjudged.
    Unseen(Vec<u8>),
}

impl Refusal {
    /// What makes two refusals the same to the person: the argv (or the reason).
    fn hash(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut h = std::collections::hash_map::DefaultHasher::new();
        match self {
            Refusal::Rule { argv, matched, .. } => (0u8, argv, &matched.rule).hash(&mut h),
            Refusal::Unreadable(e) => (1u8, *e as i32).hash(&mut h),
            Refusal::TooLong(program) => (2u8, last(program)).hash(&mut h),
            Refusal::Missing | Refusal::Probe(_) => 3u8.hash(&mut h),
            Refusal::Unseen(path) => (4u8, path).hash(&mut h),
        }
        h.finish()
    }
}

impl Execs {
    /// Answer one notified `execve`/`execveat`.
    pub(super) fn answer(
        &self,
        listener: BorrowedFd<'_>,
        req: &libc::seccomp_notif,
        record: Option<&mut Record>,
    ) {
        let answer = match self.judge(req) {
            // No check that the call still waits: the kernel takes the answer only for
            // a call that does, and a call that waited all along was made by the process
            // whose memory was read (its pid could not be reused meanwhile).
            Ok(None) => Answer::Continue,
            // A bad pointer: the kernel's own answer.
            Err(Errno::EFAULT) => Answer::Fail(Errno::EFAULT),
            Err(Errno::ENAMETOOLONG) => Answer::Fail(Errno::ENAMETOOLONG),
            Err(e) => {
                if !id_valid(listener, req.id) {
                    return;
                }
                self.refuse(req.pid, &Refusal::Unreadable(e), record);
                Answer::Fail(Errno::EACCES)
            }
            Ok(Some(Refusal::Missing)) => Answer::Fail(Errno::ENOENT),
            Ok(Some(Refusal::Probe(true))) => Answer::Fail(Errno::EALREADY),
            Ok(Some(Refusal::Probe(false))) => Answer::Fail(Errno::EOPNOTSUPP),
            Ok(Some(refusal)) => {
                // The line and the record are for the caller: only while it waits.
                if !id_valid(listener, req.id) {
                    return;
                }
                self.refuse(req.pid, &refusal, record);
                Answer::Fail(Errno::EACCES)
            }
        };
        respond(listener, req.id, answer);
    }

    /// gate's own exec of `path` with `argv`, judged in gate exactly as the supervisor
    /// judges a notified one, so that the filter can let that one exec through without a
    /// round trip (see [`crate::exec`]). A refusal is recorded (with `audit`) and its
    /// line returned for gate to print; a program no rule names, or a denied name where
    /// there is no file (the kernel's ENOENT), is `None`.
    pub(crate) fn own_refusal(
        &self,
        path: &[u8],
        argv: &[Vec<u8>],
        audit: Option<&super::Audit>,
    ) -> Option<String> {
        let pid = std::process::id();
        let call = Call {
            pid,
            file: file_of(pid, libc::AT_FDCWD, path),
            path: path.to_vec(),
            argv_at: 0,
            argv0_at: None,
        };
        let bytes: usize = argv.iter().map(|a| a.len() + 9).sum();
        let first = look(&call.file);
        let refusal = match self.verdict(&call, first, argv.first().map(Vec::as_slice), || {
            Ok((argv.to_vec(), bytes <= MAX_ARGV_BYTES))
        }) {
            Ok(refusal) => refusal?,
            Err(e) => Refusal::Unreadable(e),
        };
        let line = message(&refusal)?;
        if let Some(audit) = audit {
            let mut record = Record {
                file: audit.file.as_ref().and_then(|f| f.try_clone().ok()),
                journal: audit.journal.as_ref().and_then(|j| j.try_clone().ok()),
                call_id: audit.call_id.clone(),
                session_id: audit.session_id.clone(),
                level: audit.level.to_owned(),
            };
            record.write(pid, &refusal, &line);
        }
        Some(line)
    }

    /// Whether every deny rule `asked` names is one of this supervisor's (the probe of a
    /// gate inside the command).
    fn covers(&self, asked: &[Vec<u8>]) -> bool {
        asked.iter().all(|rule| {
            self.rules
                .iter()
                .any(|(own, _)| own.as_bytes() == rule.as_slice())
        })
    }

    /// `Ok(None)`: it may run. `Err`: its memory could not be read.
    fn judge(&self, req: &libc::seccomp_notif) -> Result<Option<Refusal>, Errno> {
        let call = read_call(req)?;
        if call.path == b"/" {
            let (argv, complete) = read_argv(call.pid, call.argv_at, usize::MAX)?;
            if argv.first().map(Vec::as_slice) == Some(PROBE.as_bytes()) {
                return Ok(Some(Refusal::Probe(complete && self.covers(&argv[1..]))));
            }
        }
        // Nothing there (a shell or execvp trying each `PATH` directory): the kernel
        // fails the exec with ENOENT itself, whatever the rules say, so argv is not read.
        let first = look(&call.file);
        if matches!(first.1, Head::Missing) {
            return Ok(None);
        }
        let argv0 = match call.argv0_at {
            Some(0) => None,
            Some(at) => match read_string(call.pid, at, MAX_ARGV_BYTES) {
                Ok(argv0) => Some(argv0),
                Err(ReadError::Memory(e)) => return Err(e),
                Err(ReadError::TooLong) => return Ok(Some(Refusal::TooLong(call.path))),
            },
            None => read_argv(call.pid, call.argv_at, 1)?.0.into_iter().next(),
        };
        self.verdict(&call, first, argv0.as_deref(), || {
            read_argv(call.pid, call.argv_at, usize::MAX)
        })
    }

    /// The verdict on `call`, whose argv starts with `argv0`; `argv` gives the whole of
    /// it (and whether that is all), asked for only when a program the rules name runs.
    fn verdict(
        &self,
        call: &Call,
        first: (Option<(u64, u64)>, Head),
        argv0: Option<&[u8]>,
        argv: impl FnOnce() -> Result<(Vec<Vec<u8>>, bool), Errno>,
    ) -> Result<Option<Refusal>, Errno> {
        let programs = match self.programs(call, first) {
            Ok(programs) => programs,
            Err(refusal) => return Ok(Some(refusal)),
        };
        let named = |p: &Program| {
            p.known_as.is_some()
                || self.names.iter().any(|n| n.as_bytes() == last(&p.path))
                || (p.prefix.is_empty()
                    && argv0.is_some_and(|a| self.names.iter().any(|n| n.as_bytes() == last(a))))
        };
        if !programs.iter().any(named) {
            return Ok(None);
        }
        let (argv, complete) = argv()?;
        if !complete {
            return Ok(Some(Refusal::TooLong(call.path.clone())));
        }
        for program in &programs {
            let words: Vec<Vec<u8>> = if program.prefix.is_empty() {
                argv.clone()
            } else {
                program
                    .prefix
                    .iter()
                    .cloned()
                    .chain(argv.iter().skip(1).cloned())
                    .collect()
            };
            let refs: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
            // A file a rule names, under another name, is judged by the rule's name.
            let found = self.rules.find_exec(&program.path, &refs).or_else(|| {
                let name = program.known_as.as_ref()?;
                self.rules.find_exec(name.as_bytes(), &refs)
            });
            if let Some(matched) = found {
                if program.prefix.is_empty() && missing(&call.file) {
                    return Ok(Some(Refusal::Missing));
                }
                return Ok(Some(Refusal::Rule {
                    program: program.path.clone(),
                    argv: words,
                    matched,
                }));
            }
        }
        Ok(None)
    }

    /// The caller's program and the interpreters its `#!` line names, in turn; or the
    /// refusal of a file whose first line the supervisor may not read.
    fn programs(
        &self,
        call: &Call,
        (id, mut head): (Option<(u64, u64)>, Head),
    ) -> Result<Vec<Program>, Refusal> {
        let mut out = vec![Program {
            path: call.path.clone(),
            known_as: self.known_as(id),
            prefix: Vec::new(),
        }];
        let mut script = call.path.clone();
        for _ in 0..MAX_INTERPRETERS {
            let (interpreter, argument) = match head {
                Head::Script(interpreter, argument) => (interpreter, argument),
                Head::Other | Head::Missing => break,
                Head::Unreadable => return Err(Refusal::Unseen(script)),
            };
            let mut prefix = vec![interpreter.clone()];
            prefix.extend(argument);
            prefix.push(script.clone());
            let (id, next) = look(&in_root(call.pid, &interpreter));
            head = next;
            out.push(Program {
                known_as: self.known_as(id),
                path: interpreter.clone(),
                prefix,
            });
            script = interpreter;
        }
        Ok(out)
    }

    /// The rule's name for the file `id` (device, inode), when it is one of theirs.
    fn known_as(&self, id: Option<(u64, u64)>) -> Option<String> {
        self.files.get(&id?).cloned()
    }

    /// Tell the process (one line on its standard error, where it could write itself)
    /// and record the refusal.
    fn refuse(&self, pid: u32, refusal: &Refusal, record: Option<&mut Record>) {
        let told = (pid, refusal.hash());
        if self.last_told.replace(Some(told)) == Some(told) {
            return;
        }
        let Some(line) = message(refusal) else {
            return;
        };
        tell(pid, &line);
        if let Some(record) = record {
            record.write(pid, refusal, &line);
        }
    }
}

fn last(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

#[cfg(test)]
mod tests;
