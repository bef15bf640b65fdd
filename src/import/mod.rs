//! `gate import`: the rules a person already wrote for an agent (Claude Code's settings,
//! Codex's `.rules` files and `requirements.toml`, Gemini CLI's policy files), read where
//! the agent reads them and turned into gate rules, never widening.
//!
//! Each agent's reader is pure: it takes the files' text and gives [`Entry`]s, one for
//! each rule it found, each with the rule as the agent wrote it ([`Source`]) and what
//! gate makes of it ([`Outcome`]). The rest of the import (finding the files, checking
//! every written rule with gate's own matcher, writing the files, the table) is shared.
//!
//! The promise, for every agent: an imported allow rule matches a subset of the commands
//! its source allowed; a deny or ask rule is never dropped and never narrowed — it is
//! imported as it is, or as a broader rule, or the import fails ([`ImportError`]).

use std::fmt;
use std::path::PathBuf;

pub mod apply;
pub mod claude;
pub mod codex;
pub mod gemini;
pub mod plan;

pub use crate::policy::{Expect, RuleKind};

/// Where an agent's rule was written: its file, the 1-based line, and the rule's text as
/// the agent wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub line: u32,
    pub text: String,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.path.display(), self.line)
    }
}

/// Who wrote a source file, as its agent ranks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// An administrator's file (Claude Code's managed settings, Codex's
    /// `requirements.toml`, Gemini CLI's admin tier): imported into gate's system layer.
    Managed,
    /// The person's own file in their home directory.
    User,
    /// A file in a repository (shared with everyone who clones it): its allow rules are
    /// imported only when the person says so.
    Project,
    /// A file in a repository kept out of version control (Claude Code's
    /// `settings.local.json`): treated as a project file.
    Local,
}

/// A rule in gate's terms, ready to be written into a configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateRule {
    /// The list it goes into.
    pub kind: RuleKind,
    /// The rule's text, as gate's configuration takes it.
    pub text: String,
    /// An allow rule that matches only the command equal to it (no further arguments).
    pub exact: bool,
    /// Examples the rule must (or must not) match, carried over from the source (Codex's
    /// `match` and `not_match`); checked with gate's matcher before anything is written.
    pub examples: Vec<(String, Expect)>,
}

impl GateRule {
    /// A rule of `kind` with `text` trimmed of blanks, and no examples.
    pub fn new(kind: RuleKind, text: &str, exact: bool) -> GateRule {
        GateRule {
            kind,
            text: crate::policy::trim_blanks(text).to_owned(),
            exact,
            examples: Vec::new(),
        }
    }
}

/// What gate makes of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// gate's rule matches the same commands as the source's.
    Imported(GateRule),
    /// An allow rule whose gate form matches fewer commands than the source's, with what
    /// is no longer allowed. (A deny or ask rule is never narrowed.)
    Narrowed { rule: GateRule, why: String },
    /// A deny or ask rule whose gate form matches more commands than the source's, with
    /// what is now refused or asked about too.
    Broadened { rule: GateRule, why: String },
    /// An allow rule gate cannot express as a subset, imported as an ask rule instead.
    Asked { rule: GateRule, why: String },
    /// Nothing imported, with why: an allow rule gate cannot express, a rule for another
    /// tool than the shell, a project allow rule the person did not accept. Never a
    /// deny or ask rule for the shell.
    Dropped { why: String },
}

/// One rule found in an agent's file and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub source: Source,
    pub scope: Scope,
    /// What the source said: allow, ask (Claude's `ask`, Codex's `prompt`, Gemini's
    /// `ask_user`) or deny (`forbidden`).
    pub said: RuleKind,
    pub outcome: Outcome,
}

/// Why an import stopped before writing anything: a file that cannot be read as its
/// agent would read it, or a deny or ask rule gate cannot express, even broader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportError {
    /// The file (and line, when known) at fault.
    pub path: PathBuf,
    pub line: Option<u32>,
    pub why: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.why),
            None => write!(f, "{}: {}", self.path.display(), self.why),
        }
    }
}

impl std::error::Error for ImportError {}
