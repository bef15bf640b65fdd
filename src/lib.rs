//! gate: the policy gate between an AI agent and a shell.
//!
//! For every command: apply the permission level, check the deny and allow rules, and
//! then `exec` the real shell or program — or refuse with one line that says why.
//!
//! Layout (dependencies point one way, toward exec):
//! - [`invocation`]: argv → what was asked (pure).
//! - [`config`]: files, environment and options → [`config::Settings`]; [`project`]:
//!   a repository's own `.gate.toml` and the trust records that let it loosen.
//! - [`policy`]: the decision, pure.
//! - [`netproxy`]: network by domain at `safe`: the domain policy and its proxy.
//! - [`import`]: other agents' rules → gate rules (pure readers, one per agent).
//! - [`explain`]: decisions in words (the decision carries its reason; this renders it).
//! - [`audit`], [`session`], [`diag`]: records and diagnostics.
//! - [`supervisor`]: the process beside a command that needs one (deny rules at exec,
//!   network by domain), answering the system calls its filter hands over.
//! - [`exec`]: finding the real shell and replacing gate with it.
//! - [`settings`]: the loaded settings and what the sandbox derives from them.
//! - [`shells`]: shell facts (names, dialects, option tables, start-up families), pure.
//! - [`judge`]: the judgement a run and `gate check` share, up to where a run asks or
//!   execs.
//! - [`run`]: the sequence; it dispatches to the subcommands ([`check`], [`doctor`],
//!   [`rules_report`], [`approval`], [`completions`]), which never import it.
//! - [`output`]: gate's own lines and exit statuses, a leaf every module may use.
// The documentation is for the engineers who work on gate (`cargo doc
// --document-private-items`, which CI builds with warnings as errors): its links to
// crate-private items are what it is for, not a leak.
#![allow(rustdoc::private_intra_doc_links)]

pub(crate) mod agents;
pub mod approval;
pub mod audit;
pub(crate) mod check;
pub mod cli;
pub(crate) mod completions;
pub mod config;
pub(crate) mod diag;
pub(crate) mod doctor;
pub(crate) mod exec;
pub(crate) mod explain;
pub(crate) mod files;
pub mod import;
pub mod invocation;
pub(crate) mod judge;
pub mod netproxy;
pub(crate) mod output;
pub mod policy;
pub(crate) mod project;
pub(crate) mod random;
pub(crate) mod replace;
pub(crate) mod rules_report;
pub mod run;
pub(crate) mod sandbox;
pub(crate) mod session;
pub(crate) mod settings;
pub mod shells;
pub(crate) mod supervisor;
pub(crate) mod xdg;

use std::ffi::OsString;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// gate's whole life: returns the exit status, unless the command was exec'd.
///
/// Exit status policy, in one place: the command's own status once it is exec'd; 126
/// when policy refused it; 125 when gate itself failed (bad option or configuration,
/// sandbox unavailable, real shell missing, a bug); 127 when a program does not exist.
pub fn main(argv: Vec<OsString>) -> i32 {
    match catch_unwind(AssertUnwindSafe(|| run::run(argv))) {
        Ok(status) => status,
        Err(_) => {
            output::say("gate: internal error (a bug in gate); nothing was run");
            output::GATE_ERROR
        }
    }
}
