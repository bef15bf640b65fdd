//! The exec duty (deny rules at exec): every `execve`/`execveat` of the command and of
//! everything it starts waits here while the supervisor reads what the kernel is about
//! to run, and fails with EACCES when a deny rule matches it.
//!
//! What is judged, for each call:
//! - the program, by the last component of the path the caller passed and of argv[0]
//!   (a multi-call binary runs what argv[0] names), and by the file itself: at start the
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
use std::io::Write;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::SystemTime;

use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, open};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};
use serde_json::{Map, Value, json};

use super::notify::{Answer, descriptor_from, id_valid, pidfd_of, read_into, read_two, respond};
use crate::policy::{DenyRules, ExecMatch};

/// The most argv bytes (strings and their pointers) read for a program the rules name.
/// Far above what commands pass (Linux allows up to a quarter of the stack limit); an
/// argv past it is refused rather than judged in part.
pub const MAX_ARGV_BYTES: usize = 1 << 20;
/// argv[0] of the question another gate asks before it starts a supervisor of its own
/// ([`super::outer_checks`]); the path is `/`.
pub const PROBE: &str = "\u{1}gate: are these deny rules checked at exec?";
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
pub struct Execs {
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
    pub fn new(rules: DenyRules, path: Option<OsString>) -> Execs {
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
    /// to one runs what its argv[0] names, which is judged anyway.
    pub fn learn(&mut self) {
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

/// Where a refusal is recorded: the run's audit log and its ids.
pub(super) struct Record {
    pub file: std::fs::File,
    pub call_id: String,
    pub session_id: String,
    pub level: String,
}

/// What the caller asks the kernel to run.
struct Call {
    pid: u32,
    /// The path as passed (empty for `execveat` with `AT_EMPTY_PATH`).
    path: Vec<u8>,
    /// Where the file is, from the supervisor (a /proc path in the caller's view).
    file: PathBuf,
    argv_at: u64,
    /// argv[0]'s pointer, when it was read with the path (0: argv is empty).
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
    pub fn own_refusal(
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
            if let Ok(file) = audit.file.try_clone() {
                let mut record = Record {
                    file,
                    call_id: audit.call_id.clone(),
                    session_id: audit.session_id.clone(),
                    level: audit.level.to_owned(),
                };
                let encoded = encode(&record, pid, &refusal, &line, SystemTime::now());
                let _ = crate::audit::write(&mut record.file, &encoded);
            }
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
            let line = encode(record, pid, refusal, &line, SystemTime::now());
            let _ = crate::audit::write(&mut record.file, &line);
        }
    }
}

/// The line a refusal is told by (none for the probe's answer and a missing file).
fn message(refusal: &Refusal) -> Option<String> {
    Some(match refusal {
        Refusal::Rule {
            program,
            argv,
            matched,
        } => format!(
            "gate: refused to run `{}` ({}): the deny rule `{}` (from {}) matches it; it \
             was not run. Do not try to run it another way; tell the user if it is needed.",
            shown_argv(argv),
            shown(program),
            matched.rule,
            matched.origin
        ),
        Refusal::Unreadable(e) => format!(
            "gate: refused to run a program: deny rules are checked at exec, and gate's \
             supervisor may not read what this process asks to run ({e}; see `gate doctor`)"
        ),
        Refusal::Missing | Refusal::Probe(_) => return None,
        Refusal::TooLong(program) => format!(
            "gate: refused to run {}: its arguments are longer than the {} bytes the deny \
             rules are checked on",
            shown(program),
            MAX_ARGV_BYTES
        ),
        Refusal::Unseen(program) => format!(
            "gate: refused to run {}: deny rules are checked at exec, and this user may not \
             read the file to see what its `#!` line runs; make it readable to run it",
            shown(program)
        ),
    })
}

/// The path and argv pointer of a notified `execve` or `execveat`, and the file it names.
fn read_call(req: &libc::seccomp_notif) -> Result<Call, Errno> {
    let nr = i64::from(req.data.nr);
    let args = req.data.args;
    let (dirfd, path_at, argv_at, flags) = if nr == libc::SYS_execveat {
        (args[0] as i32, args[1], args[2], args[4] as i32)
    } else {
        (libc::AT_FDCWD, args[0], args[1], 0)
    };
    let pid = req.pid;
    let (path, argv0_at) = read_path_and_argv0(pid, path_at, argv_at).map_err(|e| match e {
        ReadError::Memory(e) => e,
        ReadError::TooLong => Errno::ENAMETOOLONG,
    })?;
    let file = if path.is_empty() && flags & libc::AT_EMPTY_PATH != 0 {
        PathBuf::from(format!("/proc/{pid}/fd/{dirfd}"))
    } else {
        file_of(pid, dirfd, &path)
    };
    // `fexecve` and friends: the path the descriptor was opened by.
    let path = if path.is_empty() {
        std::fs::read_link(&file)
            .map(|p| p.into_os_string().into_vec())
            .unwrap_or_default()
    } else {
        path
    };
    Ok(Call {
        pid,
        path,
        file,
        argv_at,
        argv0_at,
    })
}

/// The path at `path_at` and, when it came with it, argv[0]'s pointer (`Some(0)`: argv
/// is empty), from one read of both where it can be: the path's page and argv's first
/// pointer. Where the first read falls short, the path is read on, and argv[0] later.
fn read_path_and_argv0(
    pid: u32,
    path_at: u64,
    argv_at: u64,
) -> Result<(Vec<u8>, Option<u64>), ReadError> {
    const PAGE: u64 = 4096;
    let room = (PAGE - path_at % PAGE) as usize;
    let mut chunk = [0u8; PAGE as usize];
    let mut first = [0u8; 8];
    let with_argv = argv_at != 0 && argv_at % 8 == 0;
    let n = if with_argv {
        read_two(pid, path_at, &mut chunk[..room], argv_at, &mut first)
            .map_err(ReadError::Memory)?
    } else {
        read_into(pid, path_at, &mut chunk[..room]).map_err(ReadError::Memory)?
    };
    let got = n.min(room);
    let argv0_at = (with_argv && n == room + 8).then(|| u64::from_ne_bytes(first));
    if got == 0 {
        return Err(ReadError::Memory(Errno::EFAULT));
    }
    if let Some(end) = chunk[..got].iter().position(|&b| b == 0) {
        if end > MAX_PATH {
            return Err(ReadError::TooLong);
        }
        return Ok((chunk[..end].to_vec(), argv0_at));
    }
    let mut path = chunk[..got].to_vec();
    if path.len() > MAX_PATH {
        return Err(ReadError::TooLong);
    }
    path.extend(read_string(
        pid,
        path_at + got as u64,
        MAX_PATH - path.len(),
    )?);
    Ok((path, argv0_at))
}

/// Where the file at `path` (relative to `dirfd`, or the working directory) is, as the
/// process `pid` sees it.
fn file_of(pid: u32, dirfd: i32, path: &[u8]) -> PathBuf {
    if path.first() == Some(&b'/') {
        return in_root(pid, path);
    }
    let mut p = if dirfd == libc::AT_FDCWD {
        PathBuf::from(format!("/proc/{pid}/cwd"))
    } else {
        PathBuf::from(format!("/proc/{pid}/fd/{dirfd}"))
    };
    p.push(std::ffi::OsStr::from_bytes(path));
    p
}

/// Whether there is no file at `file` (nor a directory on the way): what the kernel
/// would answer ENOENT or ENOTDIR for.
fn missing(file: &std::path::Path) -> bool {
    matches!(
        std::fs::metadata(file).map_err(|e| e.raw_os_error()),
        Err(Some(libc::ENOENT | libc::ENOTDIR))
    )
}

/// An absolute path as the process `pid` sees it.
fn in_root(pid: u32, path: &[u8]) -> PathBuf {
    let mut p = format!("/proc/{pid}/root").into_bytes();
    if path.first() != Some(&b'/') {
        p.push(b'/');
    }
    p.extend_from_slice(path);
    PathBuf::from(OsString::from_vec(p))
}

/// What the kernel will find at the start of a file it runs.
enum Head {
    /// A `#!` line: the interpreter and its one argument.
    Script(Vec<u8>, Option<Vec<u8>>),
    /// Anything else, or no file the kernel could run (it fails the exec itself).
    Other,
    /// An executable regular file the supervisor may not read.
    Unreadable,
    /// No file (ENOENT, ENOTDIR): the kernel fails the exec itself.
    Missing,
}

/// The identity (device, inode) of the file at `file` and its first line, from one
/// open: non-blocking and without taking a terminal (a FIFO or a device at the path
/// must not stop or affect the supervisor), and read only when it is a regular file,
/// the only kind the kernel runs. The kernel reads the `#!` line: blanks after `#!`
/// skipped, the interpreter up to a blank, the rest of the line, trimmed, as one
/// argument.
fn look(file: &std::path::Path) -> (Option<(u64, u64)>, Head) {
    use std::io::Read;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(file);
    let mut f = match opened {
        Ok(f) => f,
        Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
            // Executable without read permission: the kernel still reads the first
            // line (and starts a `#!` interpreter), the supervisor cannot.
            return match std::fs::metadata(file) {
                Ok(m) if m.is_file() && m.permissions().mode() & 0o111 != 0 => {
                    (Some((m.dev(), m.ino())), Head::Unreadable)
                }
                Ok(m) => (Some((m.dev(), m.ino())), Head::Other),
                Err(_) => (None, Head::Other),
            };
        }
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {
            return (None, Head::Missing);
        }
        Err(_) => return (None, Head::Other),
    };
    let Ok(meta) = f.metadata() else {
        return (None, Head::Unreadable);
    };
    let id = Some((meta.dev(), meta.ino()));
    if !meta.is_file() {
        return (id, Head::Other);
    }
    let mut head = [0u8; SHEBANG_BYTES];
    let Ok(n) = f.read(&mut head) else {
        return (id, Head::Unreadable);
    };
    match parse_shebang(&head[..n]) {
        Some((interpreter, argument)) => (id, Head::Script(interpreter, argument)),
        None => (id, Head::Other),
    }
}

fn parse_shebang(head: &[u8]) -> Option<(Vec<u8>, Option<Vec<u8>>)> {
    let line = head.strip_prefix(b"#!")?;
    let line = match line.iter().position(|&b| b == b'\n') {
        Some(end) => &line[..end],
        None => line,
    };
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let start = line.iter().position(|b| !blank(b))?;
    let line = &line[start..];
    let end = line.iter().position(blank).unwrap_or(line.len());
    let interpreter = line[..end].to_vec();
    let rest = &line[end..];
    let argument = match rest.iter().position(|b| !blank(b)) {
        Some(from) => {
            let to = rest.iter().rposition(|b| !blank(b)).expect("found one");
            Some(rest[from..=to].to_vec())
        }
        None => None,
    };
    if interpreter.is_empty() {
        return None;
    }
    Some((interpreter, argument))
}

enum ReadError {
    Memory(Errno),
    TooLong,
}

/// A NUL-terminated string at `at` in `pid`, read a page at a time (a read never crosses
/// into a page that may not be mapped), at most `max` bytes before the NUL.
fn read_string(pid: u32, at: u64, max: usize) -> Result<Vec<u8>, ReadError> {
    const PAGE: u64 = 4096;
    let mut out = Vec::new();
    let mut addr = at;
    loop {
        let room = (PAGE - addr % PAGE) as usize;
        let mut chunk = [0u8; PAGE as usize];
        let n = read_into(pid, addr, &mut chunk[..room]).map_err(ReadError::Memory)?;
        if n == 0 {
            return Err(ReadError::Memory(Errno::EFAULT));
        }
        if let Some(end) = chunk[..n].iter().position(|&b| b == 0) {
            out.extend_from_slice(&chunk[..end]);
            if out.len() > max {
                return Err(ReadError::TooLong);
            }
            return Ok(out);
        }
        out.extend_from_slice(&chunk[..n]);
        if out.len() > max {
            return Err(ReadError::TooLong);
        }
        addr += n as u64;
    }
}

/// Up to `count` argv strings at `at` (a NULL-terminated array of pointers), and whether
/// that is all of them; past [`MAX_ARGV_BYTES`] the answer is `false`. A NULL array is
/// an empty argv.
fn read_argv(pid: u32, at: u64, count: usize) -> Result<(Vec<Vec<u8>>, bool), Errno> {
    let mut out = Vec::new();
    if at == 0 {
        return Ok((out, true));
    }
    let mut used = 0usize;
    let mut slot = at;
    let mut pointers = Vec::new();
    'pointers: loop {
        // A page's worth of pointers at a time, never across a page.
        let room = (4096 - slot % 4096) as usize;
        let mut buf = vec![0u8; room.min(512)];
        let n = read_into(pid, slot, &mut buf)?;
        if n < 8 {
            return Err(Errno::EFAULT);
        }
        for p in buf[..n - n % 8].chunks_exact(8) {
            let ptr = u64::from_ne_bytes(p.try_into().expect("8 bytes"));
            if ptr == 0 {
                break 'pointers;
            }
            pointers.push(ptr);
            used += 8;
            if pointers.len() >= count {
                break 'pointers;
            }
            if used > MAX_ARGV_BYTES {
                return Ok((out, false));
            }
        }
        slot += (n - n % 8) as u64;
    }
    let complete_list = pointers.len() < count || count == usize::MAX;
    for ptr in pointers {
        let room = MAX_ARGV_BYTES.saturating_sub(used);
        match read_string(pid, ptr, room) {
            Ok(s) => {
                used += s.len() + 1;
                out.push(s);
            }
            Err(ReadError::TooLong) => return Ok((out, false)),
            Err(ReadError::Memory(e)) => return Err(e),
        }
    }
    Ok((out, complete_list))
}

fn last(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// Bytes as one line of a message: invalid UTF-8 replaced, control characters escaped.
fn shown(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes)
        .chars()
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect()
}

/// An argv as a message shows it, cut to a readable length.
fn shown_argv(argv: &[Vec<u8>]) -> String {
    const MAX: usize = 200;
    let mut text = argv.iter().map(|a| shown(a)).collect::<Vec<_>>().join(" ");
    if text.len() > MAX {
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Writers of a refusal line still blocked (a pipe nobody reads, a stopped terminal):
/// past this many, further lines are not written (the refusal and its record stand).
static STUCK_WRITERS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
const MAX_STUCK_WRITERS: usize = 4;
/// How long the supervisor waits for the line to be written before it answers the exec
/// (the line then comes before the shell's own message about the failed exec).
const WRITE_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

/// Write `line` to the standard error of process `pid`, as that process could itself:
/// only when its descriptor 2 is open for writing, through that very descriptor (a copy,
/// `pidfd_getfd`: the same file, offset and flags, and no permission on the file beyond
/// the process's own). A socket is sent to without waiting; anything else is written on
/// a thread of its own, waited for a moment: a full pipe or a stopped terminal must not
/// stop the supervisor.
fn tell(pid: u32, line: &str) {
    let fdinfo = std::fs::read_to_string(format!("/proc/{pid}/fdinfo/2")).unwrap_or_default();
    let Some(flags) = fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|v| i32::from_str_radix(v.trim(), 8).ok())
    else {
        return;
    };
    if flags & libc::O_ACCMODE == libc::O_RDONLY {
        return;
    }
    let Some(fd) = descriptor_of(pid, 2) else {
        return;
    };
    let mut text = line.as_bytes().to_vec();
    text.push(b'\n');
    let file = std::fs::File::from(fd);
    let is_socket = file.metadata().is_ok_and(|m| {
        use std::os::unix::fs::FileTypeExt;
        m.file_type().is_socket()
    });
    if is_socket {
        // SAFETY: send reads `text`, alive for the call.
        unsafe {
            libc::send(
                file.as_raw_fd(),
                text.as_ptr().cast(),
                text.len(),
                libc::MSG_DONTWAIT | libc::MSG_NOSIGNAL,
            )
        };
        return;
    }
    use std::sync::atomic::Ordering;
    if STUCK_WRITERS.fetch_add(1, Ordering::SeqCst) >= MAX_STUCK_WRITERS {
        STUCK_WRITERS.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let (done, written) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("tell".to_owned())
        .spawn(move || {
            let mut file = file;
            let _ = file.write_all(&text);
            STUCK_WRITERS.fetch_sub(1, Ordering::SeqCst);
            let _ = done.send(());
        });
    match spawned {
        Ok(_) => {
            let _ = written.recv_timeout(WRITE_WAIT);
        }
        Err(_) => {
            STUCK_WRITERS.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

/// A copy of descriptor `fd` of process `pid` (pidfd_getfd, Linux 5.6).
fn descriptor_of(pid: u32, fd: i32) -> Option<OwnedFd> {
    let pidfd = pidfd_of(pid).ok()?;
    descriptor_from(&pidfd, fd).ok()
}

/// The audit record of a refused exec.
fn encode(record: &Record, pid: u32, refusal: &Refusal, message: &str, now: SystemTime) -> Vec<u8> {
    let mut o = Map::new();
    o.insert("time".into(), json!(crate::audit::rfc3339(now)));
    o.insert("call_id".into(), json!(record.call_id));
    o.insert("session_id".into(), json!(record.session_id));
    o.insert("pid".into(), json!(pid));
    o.insert("uid".into(), json!(nix::unistd::getuid().as_raw()));
    o.insert("level".into(), json!(record.level));
    o.insert("kind".into(), json!("exec"));
    let lossy = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let (program, argv, rule, origin) = match refusal {
        Refusal::Rule {
            program,
            argv,
            matched,
        } => (
            Some(lossy(program)),
            Some(argv.iter().map(|a| lossy(a)).collect::<Vec<_>>()),
            Some(matched.rule.to_string()),
            Some(matched.origin.to_string()),
        ),
        Refusal::TooLong(program) | Refusal::Unseen(program) => {
            (Some(lossy(program)), None, None, None)
        }
        Refusal::Unreadable(_) | Refusal::Missing | Refusal::Probe(_) => (None, None, None, None),
    };
    o.insert("program".into(), json!(program));
    o.insert("argv".into(), json!(argv));
    o.insert("decision".into(), json!("deny"));
    o.insert("decided_by".into(), json!("exec"));
    o.insert("rule".into(), json!(rule));
    o.insert("rule_origin".into(), json!(origin));
    o.insert("message".into(), json!(message));
    let mut line = serde_json::to_vec(&Value::Object(o)).expect("a JSON map always encodes");
    line.push(b'\n');
    line
}

#[cfg(test)]
mod tests;
