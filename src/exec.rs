//! Running an allowed command: find the real shell, then `execve` it (or the program).
//!
//! gate replaces itself: after a successful exec there is no gate process left, so the
//! pid, signals, standard streams, environment, working directory and exit status are
//! the command's own. exec is reachable only with a [`Permit`], which only an allow
//! decision produces; a decision that needs the sandbox cannot produce one until the
//! sandbox exists. Right before the exec, a command outside the sandbox is marked
//! ([`crate::sandbox::mark`]: no_new_privs and a Landlock domain), so that neither it nor
//! anything it starts can answer approval requests; the sandbox is that mark already.

use std::ffi::{CString, OsStr, OsString};
use std::fmt;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use nix::errno::Errno;
use nix::unistd::{AccessFlags, access};

use crate::invocation::ShellWork;
use crate::policy::{Allowed, Origin};

mod placed;
pub(crate) mod start_files;

/// Proof that a run was allowed.
#[derive(Debug)]
pub(crate) struct Permit {
    /// The sandbox, kept alive (with its descriptors, closed by exec) until exec.
    sandbox: Option<crate::sandbox::Enforced>,
    /// Network by domain: where the proxy listens, for the command's environment.
    proxy: Option<std::net::SocketAddr>,
    /// Deny rules at exec outside the sandbox: what gate's supervisor checks (it is
    /// started right before exec, and given the listener of the filter loaded then),
    /// and where it records.
    exec_checks: Option<(
        crate::supervisor::Execs,
        Option<crate::supervisor::Audit>,
        bool,
    )>,
}

/// Why an allow decision could not become a [`Permit`] by itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PermitError {
    /// The decision allows the command inside the sandbox only: use [`Permit::inside`].
    NeedsSandbox,
}

impl Permit {
    /// The permit for an allow decision that needs no sandbox.
    pub(crate) fn for_allowed(allowed: &Allowed) -> Result<Permit, PermitError> {
        match allowed {
            // The safe level never runs a command outside the sandbox.
            Allowed::Sandboxed
            | Allowed::Approved {
                sandboxed: true, ..
            } => Err(PermitError::NeedsSandbox),
            Allowed::Level
            | Allowed::Rule { .. }
            | Allowed::RememberedCommand
            | Allowed::RememberedRule { .. }
            | Allowed::Approved {
                sandboxed: false, ..
            }
            | Allowed::Info
            // The gate it runs sandboxes the command at `safe`.
            | Allowed::Delegated
            | Allowed::ReadOnly { .. }
            | Allowed::Compound { .. } => Ok(Permit {
                sandbox: None,
                proxy: None,
                exec_checks: None,
            }),
        }
    }

    /// With deny rules, the exec check: the permit's command runs under a filter that
    /// hands each of its execs to a supervisor with `execs`, started right before exec.
    /// `userns`: the command runs in a user namespace of its own, which the supervisor
    /// owns from outside, for it to read the command's memory under Yama
    /// ([`crate::supervisor::Reading::OwnUserNamespace`]).
    pub(crate) fn checked_at_exec(
        mut self,
        execs: crate::supervisor::Execs,
        audit: Option<crate::supervisor::Audit>,
        userns: bool,
    ) -> Permit {
        self.exec_checks = Some((execs, audit, userns));
        self
    }

    /// The permit for a command allowed inside the sandbox: only an enforced sandbox
    /// gives one.
    /// `proxy`: with network by domain, where the proxy listens (gate's supervisor has
    /// the filter's listener already).
    pub(crate) fn inside(
        enforced: crate::sandbox::Enforced,
        proxy: Option<std::net::SocketAddr>,
    ) -> Permit {
        Permit {
            sandbox: Some(enforced),
            proxy,
            exec_checks: None,
        }
    }
}

/// What is exec'd.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanKind {
    /// The caller's program (`-- PROGRAM`), looked up in `PATH` like a shell would.
    Program,
    /// The real shell, by path.
    Shell,
}

/// What to exec: a path (or a name to look up in `PATH`) and the whole argv.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) program: OsString,
    pub(crate) argv: Vec<OsString>,
    pub(crate) kind: PlanKind,
    /// Environment variables taken out before the exec ([`start_files::START_UP_VARIABLES`] when the
    /// shell starts clean, none otherwise).
    pub(crate) unset: &'static [&'static str],
}

/// The plan for the real shell at `shell`, called `argv0`, with the caller's `args`
/// (operands from `operands_at`): for a command or a script it starts without any
/// start-up file ([`start_files`]); a session starts as asked. Err says why gate cannot
/// start this shell so.
pub(crate) fn shell_plan(
    shell: PathBuf,
    argv0: &OsStr,
    args: &[OsString],
    operands_at: usize,
    work: &ShellWork,
) -> Result<Plan, String> {
    let (name, facts) = start_files::shell_at(&shell);
    start_files::reads_as_judged(&name, facts, args, operands_at, work)?;
    let family = facts.map_or(start_files::Family::Other, |s| s.family);
    let argv = start_files::argv(family, argv0, args, operands_at, work)?;
    let unset = match work {
        ShellWork::Session | ShellWork::Info => &[][..],
        ShellWork::Command(_) | ShellWork::Script(_) => start_files::START_UP_VARIABLES,
    };
    Ok(Plan {
        program: shell.into_os_string(),
        argv,
        kind: PlanKind::Shell,
        unset,
    })
}

/// An exec that did not happen. The caller turns it into an exit status.
#[derive(Debug)]
pub(crate) struct ExecError {
    pub(crate) program: OsString,
    pub(crate) kind: PlanKind,
    pub(crate) errno: Errno,
    /// The command could not be marked ([`crate::sandbox::mark`]), so it was not exec'd.
    pub(crate) unmarked: Option<crate::sandbox::MarkError>,
    /// Deny rules at exec could not be put in force (the filter or the hand-over to the
    /// supervisor failed), so it was not exec'd.
    pub(crate) unchecked: Option<String>,
    /// A deny rule refused the program at exec (gate judged its own exec as the
    /// supervisor would): the line, recorded already.
    pub(crate) refused: Option<String>,
}

impl ExecError {
    /// 127 for a program that does not exist, as a shell would say. Everything else,
    /// including a real shell that is missing, is gate's failure to run it (125): 126
    /// always means "refused".
    pub(crate) fn exit_status(&self) -> i32 {
        if self.refused.is_some() {
            126
        } else if self.unmarked.is_some() || self.unchecked.is_some() {
            125
        } else if self.kind == PlanKind::Program && self.errno == Errno::ENOENT {
            127
        } else {
            125
        }
    }
}

impl fmt::Display for ExecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(e) = &self.unmarked {
            return f.write_str(&crate::explain::not_run(e, None));
        }
        if let Some(e) = &self.unchecked {
            return f.write_str(e);
        }
        if let Some(line) = &self.refused {
            return f.write_str(line.strip_prefix("gate: ").unwrap_or(line));
        }
        let name = self.program.to_string_lossy();
        match (self.kind, self.errno) {
            (PlanKind::Program, Errno::ENOENT) => write!(f, "{name}: command not found"),
            (PlanKind::Program, errno) => write!(f, "cannot run {name}: {}", errno.desc()),
            (PlanKind::Shell, errno) => write!(
                f,
                "cannot run the shell {name}: {}; set --shell, GATE_SHELL or `shell` to a real shell",
                errno.desc()
            ),
        }
    }
}

fn cstring(s: &OsStr) -> Result<CString, Errno> {
    CString::new(s.as_bytes()).map_err(|_| Errno::EINVAL)
}

/// Replace this process with the plan's program. Returns only if exec failed.
pub(crate) fn exec(plan: Plan, permit: Permit) -> ExecError {
    let fail = |errno| ExecError {
        program: plan.program.clone(),
        kind: plan.kind,
        errno,
        unmarked: None,
        unchecked: None,
        refused: None,
    };
    let program = match cstring(&plan.program) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let argv: Result<Vec<CString>, Errno> = plan.argv.iter().map(|a| cstring(a)).collect();
    let argv = match argv {
        Ok(a) => a,
        Err(e) => return fail(e),
    };
    // The command was judged whole; a shell it starts by name must be the real one, not
    // gate's shim again (which would judge a script by its name a second time, and
    // inside the sandbox could not write the audit log).
    if let Some(path) = std::env::var_os("PATH") {
        if let Some(stripped) = without_shim_dirs(&path) {
            tracing::debug!(?stripped, "gate's shim directories taken off PATH");
            // SAFETY: gate is single-threaded (it starts no threads), so nothing reads
            // the environment concurrently; and it execs right after.
            unsafe { std::env::set_var("PATH", stripped) };
        }
    }
    // Network by domain: the command's tools are pointed at the proxy.
    if let Some(addr) = permit.proxy {
        for (name, value) in crate::netproxy::environment(addr) {
            // SAFETY: as above, single-threaded and right before exec.
            unsafe { std::env::set_var(name, value) };
        }
    }
    for name in plan.unset {
        if std::env::var_os(name).is_some() {
            tracing::debug!(
                name,
                "taken out of the environment: it names a start-up file"
            );
            // SAFETY: as above, single-threaded and right before exec.
            unsafe { std::env::remove_var(name) };
        }
    }
    let program = match plan.kind {
        PlanKind::Shell => program,
        PlanKind::Program => {
            let path_var = std::env::var_os("PATH");
            match find_program(&plan.program, path_var.as_deref())
                .and_then(|p| cstring(p.as_os_str()))
            {
                Ok(found) => found,
                Err(e) => return fail(e),
            }
        }
    };
    // Deny rules at exec: gate judges its own exec here, as the supervisor would (the
    // programs the rules name are looked up first, and the supervisor inherits what was
    // found), so the filter can let that one call through without a round trip. Then
    // the supervisor is forked before the mark (so it is neither marked nor filtered)
    // and as late as that (gate writes to few pages after it, each of which the fork
    // makes it copy).
    let supervisor = match permit.exec_checks {
        None => None,
        Some((mut execs, audit, userns)) => {
            execs.learn();
            let words: Vec<Vec<u8>> = argv.iter().map(|a| a.as_bytes().to_vec()).collect();
            if let Some(line) = execs.own_refusal(program.as_bytes(), &words, audit.as_ref()) {
                return ExecError {
                    refused: Some(line),
                    ..fail(Errno::EACCES)
                };
            }
            let placed = placed::Placed::new(&program, &argv);
            let filter = match crate::sandbox::exec_filter(placed.as_ref().map(|p| p.own())) {
                Ok(filter) => filter,
                Err(e) => {
                    return ExecError {
                        unchecked: Some(crate::explain::sandbox_not_run(&e)),
                        ..fail(Errno::EPERM)
                    };
                }
            };
            let started = crate::supervisor::Supervisor::start(crate::supervisor::Duties {
                execs: Some(execs),
                proxy: None,
                tcp: None,
                drop_capabilities: false,
            });
            let supervisor = match started {
                Ok(supervisor) => supervisor,
                Err(e) => {
                    return ExecError {
                        unchecked: Some(crate::explain::not_run(&e, None)),
                        ..fail(Errno::EPERM)
                    };
                }
            };
            // Under Yama's ptrace_scope 1 or 2 the supervisor (forked above, outside)
            // may read the memory only of processes in a user namespace it owns: the
            // command runs in one of its own, as at `safe`.
            if userns {
                let entered = crate::sandbox::ending::enter()
                    .map_err(|e| crate::explain::sandbox_not_run(&e))
                    .and_then(|made| {
                        made.map_err(|why| {
                            crate::explain::not_run(
                                &crate::supervisor::unreadable_without_namespace(&why),
                                None,
                            )
                        })
                    });
                if let Err(message) = entered {
                    return ExecError {
                        unchecked: Some(message),
                        ..fail(Errno::EPERM)
                    };
                }
            }
            Some((supervisor, audit, placed, filter))
        }
    };
    // Last, so that nothing gate does itself runs marked. The sandbox, at `safe`, is
    // the mark already.
    if permit.sandbox.is_none() {
        if let Err(e) = crate::sandbox::mark::mark() {
            return ExecError {
                unmarked: Some(e),
                ..fail(Errno::EPERM)
            };
        }
    }
    // Deny rules at exec: the filter goes on after the mark (whose no_new_privs lets an
    // unprivileged process load it), and its listener to the supervisor; from here on
    // every exec, this one included, waits for the supervisor's answer.
    let mut placed = None;
    if let Some((supervisor, audit, own, filter)) = supervisor {
        let handed = filter
            .load()
            .map_err(|e| crate::explain::sandbox_not_run(&e))
            .and_then(|listener| {
                supervisor
                    .hand_over(Some(listener), audit, None)
                    .map_err(|e| crate::explain::not_run(&e, None))
            });
        if let Err(message) = handed {
            return ExecError {
                unchecked: Some(message),
                ..fail(Errno::EPERM)
            };
        }
        placed = own;
    }
    tracing::debug!(program = ?program, argv = ?plan.argv, "exec");
    if let Some(placed) = &placed {
        // A file without a `#!` line that is not a program (ENOEXEC): execvp below runs
        // it with /bin/sh, as a shell would, through other arrays (so notified).
        match placed.exec() {
            Errno::ENOEXEC => {}
            errno => return fail(errno),
        }
    }
    // execvp with a path that has a slash does no search, but still runs a script
    // without a `#!` line with /bin/sh, as a shell would.
    match nix::unistd::execvp(&program, &argv) {
        Err(errno) => fail(errno),
        Ok(never) => match never {},
    }
}

/// Find a program on `PATH` the way a shell does: the first regular file with execute
/// permission. A directory that cannot be searched is passed over (libc's execvp would
/// report it as "permission denied" even when the program exists nowhere, which is not
/// what a shell says). Relative entries are skipped, as for the shims: a command must
/// not be found in whatever directory it happens to run in.
pub(crate) fn find_program(name: &OsStr, path_var: Option<&OsStr>) -> Result<PathBuf, Errno> {
    if name.as_bytes().contains(&b'/') {
        return Ok(PathBuf::from(name));
    }
    if name.is_empty() {
        return Err(Errno::ENOENT);
    }
    let search = path_var
        .filter(|p| !p.is_empty())
        .unwrap_or(OsStr::new(DEFAULT_PATH));
    let mut not_executable = false;
    for dir in std::env::split_paths(search) {
        if !dir.is_absolute() {
            continue;
        }
        let candidate = dir.join(name);
        if std::fs::metadata(&candidate).is_ok_and(|m| m.is_file()) {
            if access(&candidate, AccessFlags::X_OK).is_ok() {
                return Ok(candidate);
            }
            not_executable = true;
        }
    }
    Err(if not_executable {
        Errno::EACCES
    } else {
        Errno::ENOENT
    })
}

/// The search path when `PATH` is unset or empty.
const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// gate's own executable, as a (device, inode) pair, to recognise it under other names.
fn identity(path: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// `path` without the directories that hold gate as a shell shim (a `bash`, `sh` or
/// `zsh` that is this very program); `None` when there are none. Directories are
/// compared by what they hold, so `/usr/bin` (where gate itself may live, next to the
/// real bash) stays.
pub(crate) fn without_shim_dirs(path: &OsStr) -> Option<OsString> {
    let own = self_identity()?;
    // The first of the names that exists decides: a directory whose `bash` is the real
    // one is not a shim directory, whatever else it holds. One pass, one `stat` for
    // most directories: this runs before every command.
    let is_shim_dir = |dir: &Path| {
        dir.is_absolute()
            && crate::shells::AGENT_SHELLS.iter().find_map(|name| {
                std::fs::metadata(dir.join(name))
                    .ok()
                    .map(|m| (m.dev(), m.ino()) == own)
            }) == Some(true)
    };
    let mut dirs: Vec<PathBuf> = std::env::split_paths(path).collect();
    let before = dirs.len();
    // A directory named twice on PATH (it happens: profiles that prepend it again) is
    // judged once.
    let mut judged: Vec<(PathBuf, bool)> = Vec::with_capacity(dirs.len());
    dirs.retain(|d| {
        let shim = match judged
            .iter()
            .find(|(seen, _)| seen.as_os_str() == d.as_os_str())
        {
            Some(&(_, shim)) => shim,
            None => {
                let shim = is_shim_dir(d);
                judged.push((d.clone(), shim));
                shim
            }
        };
        !shim
    });
    if dirs.len() == before {
        return None;
    }
    std::env::join_paths(dirs).ok()
}

fn self_identity() -> Option<(u64, u64)> {
    identity(Path::new("/proc/self/exe"))
}

/// Why the real shell could not be found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ShellError(pub String);

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The configured shell for gate's own personality, checked before anything is recorded
/// or run: it must be an executable file, and not gate itself. `origin` is where it was
/// set, so that the message names the option, variable or `FILE:LINE` to fix.
pub(crate) fn configured_shell(path: &Path, origin: &Origin) -> Result<PathBuf, ShellError> {
    let fix = "set --shell, GATE_SHELL or `shell` to a real shell";
    let shell = format!("the shell `{}` (from {origin})", path.display());
    let meta = match std::fs::metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ShellError(format!("{shell} does not exist; {fix}")));
        }
        Err(e) => {
            let errno = Errno::from_raw(e.raw_os_error().unwrap_or(0));
            return Err(ShellError(format!(
                "{shell} cannot be run: {}; {fix}",
                errno.desc()
            )));
        }
    };
    if meta.is_dir() {
        return Err(ShellError(format!("{shell} is a directory, not a program")));
    }
    if !meta.is_file() {
        return Err(ShellError(format!(
            "{shell} is not a program (not a regular file); {fix}"
        )));
    }
    match access(path, AccessFlags::X_OK) {
        Ok(()) => {}
        Err(Errno::EACCES) => return Err(ShellError(format!("{shell} is not executable; {fix}"))),
        Err(errno) => {
            return Err(ShellError(format!(
                "{shell} cannot be run: {}; {fix}",
                errno.desc()
            )));
        }
    }
    if self_identity() == Some((meta.dev(), meta.ino())) {
        return Err(ShellError(format!(
            "{shell} is gate itself; {fix} such as /bin/bash"
        )));
    }
    Ok(path.to_owned())
}

/// The real shell called `name` for a shim: the first executable of that name on `PATH`
/// that is not gate itself and not in gate's own directory. Relative `PATH` entries are
/// skipped: a shell must not be found in a directory the command can write to by
/// changing its working directory.
pub(crate) fn shim_shell(
    name: &str,
    argv0: &OsStr,
    path_var: Option<&OsStr>,
) -> Result<PathBuf, ShellError> {
    let own = self_identity();
    let own_dirs: Vec<PathBuf> = [
        std::fs::read_link("/proc/self/exe").ok(),
        Some(PathBuf::from(argv0)).filter(|p| p.as_os_str().as_bytes().contains(&b'/')),
    ]
    .into_iter()
    .flatten()
    .filter_map(|p| p.parent().map(Path::to_owned))
    .flat_map(|d| {
        let canonical = d.canonicalize().ok();
        [Some(d), canonical]
    })
    .flatten()
    .collect();
    let search = path_var
        .filter(|p| !p.is_empty())
        .unwrap_or(OsStr::new(DEFAULT_PATH));
    for dir in std::env::split_paths(search) {
        if !dir.is_absolute() || own_dirs.contains(&dir) {
            continue;
        }
        let candidate = dir.join(name);
        let Ok(meta) = std::fs::metadata(&candidate) else {
            continue;
        };
        if !meta.is_file() || access(&candidate, AccessFlags::X_OK).is_err() {
            continue;
        }
        if own.is_some() && Some((meta.dev(), meta.ino())) == own {
            continue;
        }
        return Ok(candidate);
    }
    Err(ShellError(format!(
        "no real {name} found on PATH outside gate's own directory, so running it would run \
         gate again; put the directory of the real {name} on PATH"
    )))
}

/// argv0 for the real shell in gate's own personality: the shell's file name, with a
/// leading `-` when gate itself was started as a login shell.
pub(crate) fn shell_argv0(shell: &Path, gate_argv0: &OsStr) -> OsString {
    let name = shell.file_name().unwrap_or(shell.as_os_str());
    if gate_argv0.as_bytes().starts_with(b"-") {
        let mut login = b"-".to_vec();
        login.extend_from_slice(name.as_bytes());
        OsString::from_vec(login)
    } else {
        name.to_owned()
    }
}

#[cfg(test)]
mod tests;
