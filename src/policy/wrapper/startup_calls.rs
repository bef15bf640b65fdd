//! The agents' own start-up calls (Claude Code's and Codex's shell snapshot scripts), which
//! gate answers itself without running them, and the stub snapshot files it leaves.
//!
//! Pure: it recognises a call and says what to answer; the run path writes or prints.

use super::holes::{
    CLAUDE_SNAPSHOT_DIR, CODEX_SNAPSHOT_DIR, claude_snapshot_len, codex_snapshot_name, home_of,
};

/// What gate does instead of running an agent's start-up call. Every answer runs
/// nothing; those that leave a snapshot leave one that holds exactly [`SNAPSHOT_STUB`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartupAnswer<'a> {
    /// Write the stub to this file, which must not exist yet (Claude Code: its script
    /// writes the snapshot file itself).
    WriteStub(&'a str),
    /// Print the stub on standard output (Codex: it keeps what the script prints from
    /// the `# Snapshot file` line on, and writes that to the snapshot file itself).
    PrintStub,
    /// Exit 0 if this file holds exactly the stub (Codex's check that its snapshot
    /// sources cleanly). If it holds anything else the call is not answered: it is
    /// judged like any other command.
    CheckStub(&'a str),
    /// Exit 0 and print nothing (Claude Code's probe of the environment its shell
    /// gets, `SHELL -c env`: it keeps only the names, and takes no output as "unknown").
    /// The environment is not printed, because the same call from the model would show
    /// it every secret there, Claude Code's own `ANTHROPIC_API_KEY` included.
    Nothing,
}

/// What an agent's start-up call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartupCall<'a> {
    pub agent: &'static str,
    /// `agent/what`.
    pub kind: &'static str,
    pub answer: StartupAnswer<'a>,
    /// The home directory the snapshot file is under, as written (`None` when gate
    /// only prints).
    pub home: Option<&'a str>,
}

impl<'a> StartupCall<'a> {
    /// The snapshot file the call writes or checks, if it names one.
    pub fn snapshot(&self) -> Option<&'a str> {
        match self.answer {
            StartupAnswer::WriteStub(path) | StartupAnswer::CheckStub(path) => Some(path),
            StartupAnswer::PrintStub | StartupAnswer::Nothing => None,
        }
    }
}

/// Recognise an agent's own start-up call from the shell's arguments (everything after
/// argv0, as the shim receives them):
///
/// - Claude Code's snapshot creation, `-c -l SCRIPT`, where SCRIPT starts with
///   `SNAPSHOT_FILE=<snapshot path>` and a newline and writes `# Snapshot file` to it;
/// - Claude Code's probe of its shell's environment, exactly `-c env` (2.1.19x: it
///   keeps the variables' names);
/// - Codex's snapshot capture, `-lc SCRIPT`, where SCRIPT prints a line
///   `echo '# Snapshot file'` (bash, sh) or `print '# Snapshot file'` (zsh) and Codex keeps
///   the output from there on;
/// - Codex's check of the file it wrote, `-c 'set -e; . "<snapshot path>"'`.
///
/// The scripts themselves cannot be checked: they source the user's start-up files and
/// differ between versions and machines, so anything could be in them. Recognising one
/// says only "this is shaped like the call"; running it would run whatever it holds. So
/// gate answers the call itself ([`StartupAnswer`]) and runs nothing: a forged call gets
/// an empty snapshot and nothing more.
pub fn startup<'a>(args: &[&'a str]) -> Option<StartupCall<'a>> {
    if args.iter().any(|a| a.as_bytes().contains(&0)) {
        return None;
    }
    match args {
        ["-c", "-l", script] => claude_startup(script),
        ["-c", "env"] => Some(StartupCall {
            agent: "claude-code",
            kind: "claude-code/env-probe",
            answer: StartupAnswer::Nothing,
            home: None,
        }),
        ["-lc", script] => codex_capture(script),
        ["-c", script] => codex_check(script),
        _ => None,
    }
}

fn claude_startup(script: &str) -> Option<StartupCall<'_>> {
    let rest = script.strip_prefix("SNAPSHOT_FILE=")?;
    let line_end = rest.find('\n')?;
    let first = &rest[..line_end];
    // `quote()` leaves a plain path bare and single-quotes one with other characters.
    let path = match first.strip_prefix('\'') {
        Some(quoted) => quoted.strip_suffix('\'')?,
        None => first,
    };
    if path.len() != claude_snapshot_len(path)? {
        return None;
    }
    if !rest[line_end..].contains(SNAPSHOT_CREATE_MARK) {
        return None;
    }
    Some(StartupCall {
        agent: "claude-code",
        kind: "claude-code/snapshot-create",
        answer: StartupAnswer::WriteStub(path),
        home: Some(home_of(path, CLAUDE_SNAPSHOT_DIR)?),
    })
}

fn codex_capture(script: &str) -> Option<StartupCall<'static>> {
    let marks = ["echo '# Snapshot file'", "print '# Snapshot file'"];
    script
        .lines()
        .any(|line| marks.contains(&line))
        .then_some(StartupCall {
            agent: "codex",
            kind: "codex/snapshot-capture",
            answer: StartupAnswer::PrintStub,
            home: None,
        })
}

fn codex_check(script: &str) -> Option<StartupCall<'_>> {
    let path = script.strip_prefix("set -e; . \"")?.strip_suffix('"')?;
    codex_snapshot_name(path)?;
    Some(StartupCall {
        agent: "codex",
        kind: "codex/snapshot-check",
        answer: StartupAnswer::CheckStub(path),
        home: Some(home_of(path, CODEX_SNAPSHOT_DIR)?),
    })
}

/// Whether `args` (everything after argv0) is an agent's own start-up call, which must
/// be decided without a prompt; the name of the call if so. See [`startup`].
pub fn startup_call(argv: &[&str]) -> Option<&'static str> {
    startup(argv).map(|s| s.kind)
}

/// The line Claude Code's snapshot script writes first to the snapshot file.
const SNAPSHOT_CREATE_MARK: &str = "echo \"# Snapshot file\" >| \"$SNAPSHOT_FILE\"";

/// What gate leaves as an agent's shell snapshot when it answers the agent's start-up
/// call itself: comments only, so sourcing it does nothing in bash, zsh or sh. It starts
/// with the line both Claude Code and Codex look for.
pub const SNAPSHOT_STUB: &str = "# Snapshot file\n# Written by gate, which answers an agent's shell-snapshot call without running it.\n";

/// Whether a snapshot file's content is exactly gate's stub, so that sourcing it is known
/// to do nothing.
pub(crate) fn is_snapshot_stub(content: &[u8]) -> bool {
    content == SNAPSHOT_STUB.as_bytes()
}

/// What gate prints for Codex's capture (0.17x): the stub as the capture's first section,
/// then the sections Codex expects after it, each ended by a NUL: no aliases, no exported
/// variables, and the end. Codex refuses a capture without them ("invalid shell snapshot
/// capture") and then runs without a snapshot.
pub const CODEX_CAPTURE_STUB: &str = "# Snapshot file\n# Written by gate, which answers an agent's shell-snapshot call without running it.\n\0\0\0";

/// The snapshot file Codex 0.171 writes from [`CODEX_CAPTURE_STUB`]: the first section,
/// then its header of the (empty) exports. Comments only.
pub const CODEX_SNAPSHOT_STUB: &str = "# Snapshot file\n# Written by gate, which answers an agent's shell-snapshot call without running it.\n# exports (native declarations)\n";

/// Whether a Codex snapshot file holds exactly what Codex makes of gate's answer to its
/// capture (or, as older releases wrote it, the stub itself), so that sourcing it does
/// nothing.
pub(crate) fn is_codex_snapshot_stub(content: &[u8]) -> bool {
    content == CODEX_SNAPSHOT_STUB.as_bytes() || is_snapshot_stub(content)
}
