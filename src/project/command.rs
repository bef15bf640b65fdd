//! `gate trust [FILE]`, `gate trust --revoke [FILE]`, `gate trust --list`: the person's
//! word on a project file, kept in the trust store ([`super::trust`]).
//!
//! Trusting says what the file grants beyond tightening and records it; it asks
//! nothing, because the person ran it. A command gate ran cannot trust anything: every
//! such command carries no_new_privs ([`crate::sandbox::mark`]), and `gate trust` refuses
//! to record trust there, so a model cannot simply run it. (It can still write the
//! record itself where its commands may write the person's files: docs/security.md.)

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::config::{self, Environment, FileKind, SystemPlaces, Untrusted};
use crate::invocation::Invocation;
use crate::output::{GATE_ERROR, print_out, say};

use super::{FILE_NAME, Store, Trust};

/// What `gate trust` was asked to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustAction {
    Trust,
    Revoke,
    List,
}

fn var(name: &str) -> Option<OsString> {
    std::env::var_os(name)
}

fn fail(message: impl std::fmt::Display) -> i32 {
    say(&format!("gate: trust: {message}"));
    GATE_ERROR
}

/// Run `gate trust`: 0 done, 125 gate's failure (nothing recorded).
pub fn run(inv: &Invocation, action: TrustAction, file: Option<&OsStr>) -> i32 {
    let Some(store) = Store::of(&var) else {
        return fail(
            "neither XDG_STATE_HOME nor HOME is set (to an absolute path), so there is no \
             place for trust records",
        );
    };
    match action {
        TrustAction::List => list(&store),
        TrustAction::Revoke => match target(file, false) {
            Ok(path) => revoke(&store, &path),
            Err(e) => fail(e),
        },
        TrustAction::Trust => {
            if crate::sandbox::mark::this_process_marked() {
                return fail(
                    "this process runs with no_new_privs: it descends from a command gate ran \
                     (or another sandbox), and trust must come from the person; run gate trust \
                     in a terminal of your own",
                );
            }
            match target(file, true) {
                Ok(path) => trust(inv, &store, &path),
                Err(e) => fail(e),
            }
        }
    }
}

/// The project file meant: FILE (made absolute, its directory resolved as the walk
/// would see it), or the one in force in the working directory.
fn target(file: Option<&OsStr>, must_exist: bool) -> Result<PathBuf, String> {
    let cwd = super::working_dir().map_err(|e| e.to_string())?;
    let Some(file) = file else {
        return super::find(&cwd)?.ok_or_else(|| {
            format!(
                "there is no {FILE_NAME} in {} or above it (up to the repository's root); \
                 name the file: gate trust FILE",
                cwd.display()
            )
        });
    };
    let path = cwd.join(file);
    if path.file_name() != Some(OsStr::new(FILE_NAME)) {
        return Err(format!(
            "{}: gate reads a project policy only from a file named {FILE_NAME}",
            path.display()
        ));
    }
    if must_exist
        && std::fs::symlink_metadata(&path).is_err_and(|e| e.kind() == io::ErrorKind::NotFound)
    {
        return Err(format!("{}: no such file", path.display()));
    }
    let dir = path.parent().unwrap_or(Path::new("/"));
    match dir.canonicalize() {
        Ok(dir) => Ok(dir.join(FILE_NAME)),
        // A file whose directory is gone can still have its record revoked.
        Err(_) if !must_exist => Ok(path),
        Err(e) => Err(format!("{}: {e}", dir.display())),
    }
}

fn trust(inv: &Invocation, store: &Store, path: &Path) -> i32 {
    let (text, sha256) = match super::read(path) {
        Ok(read) => read,
        Err(e) => return fail(format!("{e}; nothing was trusted")),
    };
    let env = Environment { var: &var };
    let home = env.home();
    let layer = match config::parse_file(path, &text, FileKind::Project, home.as_deref()) {
        Ok(layer) => layer,
        Err(e) => return fail(format!("{e}; nothing was trusted")),
    };
    let granted = config::file_layers(&inv.gate, &env, &SystemPlaces::of(&inv.gate)).and_then(
        |(mut layers, _)| {
            layers.push(layer);
            config::grants(
                layers,
                Untrusted {
                    file: path.into(),
                    why: "is not trusted".to_owned(),
                },
            )
        },
    );
    let (grants, still) = match granted {
        Ok(found) => found,
        Err(e) => return fail(format!("{e}; nothing was trusted")),
    };
    let record = match store.record(path, &sha256, SystemTime::now()) {
        Ok(record) => record,
        Err(e) => {
            return fail(format!(
                "cannot write the trust record in {}: {e}; nothing was trusted",
                store.dir().display()
            ));
        }
    };
    let mut out = format!(
        "trusted: {}\nsha256:  {sha256}\nrecord:  {}\n",
        path.display(),
        record.display()
    );
    if grants.is_empty() {
        out.push_str(
            "grants:  nothing beyond tightening (what only tightens applies without trust)\n",
        );
    } else {
        out.push_str("grants (each refused while it was untrusted):\n");
        for loosening in &grants {
            out.push_str(&format!("  {loosening}\n"));
        }
    }
    out.push_str("Any change to the file makes it untrusted again.\n");
    let status = print_out(&out);
    if let Some(e) = still {
        say(&format!(
            "gate: trust: recorded, but the configuration still does not load with it: {e}"
        ));
    }
    status
}

fn revoke(store: &Store, path: &Path) -> i32 {
    match store.revoke(path) {
        Ok(true) => print_out(&format!("revoked: {}\n", path.display())),
        Ok(false) => print_out(&format!(
            "not trusted: {} (there was no record to revoke)\n",
            path.display()
        )),
        Err(e) => fail(format!(
            "cannot remove the record {}: {e}",
            store.record_path(path).display()
        )),
    }
}

fn list(store: &Store) -> i32 {
    let records = match store.list() {
        Ok(records) => records,
        Err(e) => return fail(format!("cannot read {}: {e}", store.dir().display())),
    };
    if records.is_empty() {
        return print_out(&format!(
            "no project file is trusted (records live in {})\n",
            store.dir().display()
        ));
    }
    let mut out = String::new();
    for record in records {
        match record {
            Ok(record) => {
                let now = match super::read(&record.path) {
                    Ok((_, sha)) => match store.lookup(&record.path, &sha) {
                        Trust::Trusted { .. } => "the file is unchanged".to_owned(),
                        Trust::Changed { .. } => {
                            "the file changed since: it is untrusted".to_owned()
                        }
                        other => other.why().unwrap_or_default(),
                    },
                    Err(e) => format!("the file cannot be read now ({e})"),
                };
                out.push_str(&format!(
                    "{}\n  trusted {}, sha256 {}: {now}\n",
                    record.path.display(),
                    record.trusted_at,
                    record.sha256
                ));
            }
            Err((at, why)) => {
                out.push_str(&format!("{}\n  not a usable record: {why}\n", at.display()));
            }
        }
    }
    print_out(&out)
}
