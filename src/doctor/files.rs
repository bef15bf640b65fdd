//! The configuration files gate read (the system file, its drop-ins, the user's), who a
//! run would ask, and the shims on PATH, each in a line. Reads nothing itself: the
//! facts come from the loaded settings and the approval module.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use crate::approval::reach::{Reach, SocketState, TtyState};
use crate::config::Settings;

use super::var;

/// What the system configuration file is to these settings.
#[derive(Clone, Copy)]
pub(super) enum SystemState {
    Locked,
    Present,
    Ignored,
    Absent,
}

impl SystemState {
    pub(super) fn word(self) -> &'static str {
        match self {
            SystemState::Locked => "locked",
            SystemState::Present => "present",
            SystemState::Ignored => "ignored",
            SystemState::Absent => "absent",
        }
    }

    pub(super) fn words(self) -> &'static str {
        match self {
            SystemState::Locked => "present, locks the configuration (lock = true)",
            SystemState::Present => "present, not locked",
            SystemState::Ignored => "present, ignored (--no-config)",
            SystemState::Absent => "absent",
        }
    }
}

pub(super) fn system_file(settings: &Settings) -> (&Path, SystemState) {
    let system = settings.system.file.as_path();
    let state = if settings.locked_by.as_deref() == Some(system) {
        SystemState::Locked
    } else if settings.files.iter().any(|f| f == system) {
        SystemState::Present
    } else if system.exists() {
        SystemState::Ignored
    } else {
        SystemState::Absent
    };
    (system, state)
}

/// The drop-ins read, in order.
pub(super) fn drop_ins(settings: &Settings) -> Vec<&Path> {
    let dir = settings.system.drop_ins.as_path();
    settings
        .files
        .iter()
        .map(PathBuf::as_path)
        .filter(|f| f.parent() == Some(dir))
        .collect()
}

/// The drop-ins, in a line: which were read, and which locks.
pub(super) fn describe_drop_ins(settings: &Settings) -> String {
    let dir = settings.system.drop_ins.display();
    let candidate = if settings.system.candidate_drop_ins {
        "candidate "
    } else {
        ""
    };
    let read = drop_ins(settings);
    if read.is_empty() {
        return format!("none read from the {candidate}directory {dir}");
    }
    let names: Vec<String> = read
        .iter()
        .map(|f| {
            let name = f.file_name().unwrap_or_default().to_string_lossy();
            if settings.locked_by.as_deref() == Some(*f) {
                format!("{name} (locks the configuration)")
            } else {
                name.into_owned()
            }
        })
        .collect();
    format!("{} from the {candidate}directory {dir}", names.join(", "))
}

/// The configuration files read besides the system layer.
pub(super) fn user_files(settings: &Settings) -> Vec<String> {
    let system = settings.system.file.as_path();
    let drop_ins = drop_ins(settings);
    settings
        .files
        .iter()
        .filter(|f| f.as_path() != system && !drop_ins.contains(&f.as_path()))
        .map(|f| f.display().to_string())
        .collect()
}

/// Who a run would ask, in a line: the socket first (with the requester's own trust
/// checks), then the terminal.
pub(super) fn describe_approver(reach: &Reach) -> String {
    let shown = reach.socket.display();
    let on_socket = match &reach.socket_state {
        SocketState::Listening => format!("{shown} is listening and is asked first"),
        SocketState::Busy => {
            format!("{shown} is listening (slow to take connections) and is asked first")
        }
        SocketState::Absent(why) if reach.socket_configured => {
            format!("{shown} (configured) does not answer: {why}")
        }
        SocketState::Absent(_) => format!("no broker at {shown} (start one with `gate serve`)"),
        SocketState::Untrusted(why) => {
            format!("{shown} cannot be trusted ({why}): commands that need an approver are refused")
        }
    };
    let terminal = match &reach.tty {
        TtyState::Off => "the terminal is off (approval.tty = false)".to_owned(),
        TtyState::Available => "then the terminal (this one can be prompted)".to_owned(),
        TtyState::Unavailable(why) => {
            format!("then the terminal, when gate runs in one (not here: {why})")
        }
    };
    format!("{on_socket}; {terminal}")
}

/// Each shim name and the real shell it resolves to on PATH.
pub(super) fn shims() -> Vec<(&'static str, Option<String>)> {
    let path = var("PATH");
    crate::shells::shim_names()
        .map(|name| {
            let real = crate::exec::shim_shell(name, OsStr::new("gate"), path.as_deref())
                .ok()
                .map(|p| p.display().to_string());
            (name, real)
        })
        .collect()
}
