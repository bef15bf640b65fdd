//! The adversarial corpus, run against the real binary.
//!
//! `tests/corpus/bypasses.tsv` holds commands that try to get a payload past the allow
//! rules they target: shell syntax, wrappers, quoting, program options, files the agent
//! planted, forged agent wrappers. Each case runs at level `ask` with no approver (a
//! private, empty `XDG_RUNTIME_DIR`, `--no-tty`, and gate in a session of its own, so no
//! terminal either), in a fresh working directory, in four modes: strict, `--compound`,
//! `--readonly`, and both. It must be refused every time: exit 126, stderr
//! `gate: refused …`, and the payload's side effect (a file `PWNED`, usually) absent.
//!
//! `tests/corpus/deny.tsv` holds commands that hide a denied program: behind assignments,
//! wrappers, separators, substitutions, quoting, extra blanks, nested shells. At level
//! `full` with the deny rule they must be refused the same way. Its `exec` cases hide the
//! program where the text scanner cannot see it (a file, a pipe, a program's own code):
//! the exec check refuses the program when it runs, so the side effect must not happen
//! and stderr must say `gate: refused …`. Its `gap` cases are what docs/rules.md says a
//! deny rule cannot see at all (work done without exec, a copy of the program under
//! another name); they must still get through, so that the documentation stays true.
//!
//! Every case has a control: the same command at level `full` (without the deny rule)
//! must produce the side effect, which proves the payload is real and the test can fail.
//! A control that needs a program this machine lacks is skipped and listed; every family
//! must still have a control that ran. The format of the files is in
//! `tests/corpus/README.md`; adding a case is adding a line.

use crate::common;

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::fmt::Write as _;
use std::fs;
use std::io::{self, Read};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use common::{DEADLINE, User, command_as, require_program, running_as_root, uid_of};

const BYPASSES: &str = include_str!("corpus/bypasses.tsv");
const DENY: &str = include_str!("corpus/deny.tsv");

/// The columns of both files, in order.
const HEADER: [&str; 11] = [
    "id", "family", "form", "rules", "setup", "command", "effect", "expect", "control", "source",
    "why",
];

/// The modes every bypass is tried in: gate's own flags on top of
/// `--level ask --no-config --no-tty --audit-log off`.
const MODES: [(&str, &[&str]); 4] = [
    ("strict", &[]),
    ("--compound", &["--compound"]),
    ("--readonly", &["--readonly"]),
    ("--compound --readonly", &["--compound", "--readonly"]),
];

/// The modes a `rule-limit` case must be refused in: its rule held to reading.
const NARROWED_MODES: [(&str, &[&str]); 2] = [
    ("--readonly-rules", &["--readonly-rules"]),
    (
        "--compound --readonly-rules",
        &["--compound", "--readonly-rules"],
    ),
];

/// Each family and the file it lives in. A family needs a test below; the well-formedness
/// test checks that this list and the files agree.
const FAMILIES: [(Corpus, &str); 29] = [
    (Corpus::Bypasses, "separators"),
    (Corpus::Bypasses, "substitution"),
    (Corpus::Bypasses, "process-substitution"),
    (Corpus::Bypasses, "redirection"),
    (Corpus::Bypasses, "env-prefix"),
    (Corpus::Bypasses, "wrappers"),
    (Corpus::Bypasses, "quoting"),
    (Corpus::Bypasses, "expansion"),
    (Corpus::Bypasses, "nested-shells"),
    (Corpus::Bypasses, "program-options"),
    (Corpus::Bypasses, "interpreters"),
    (Corpus::Bypasses, "path-qualified"),
    (Corpus::Bypasses, "narrow-git-rules"),
    (Corpus::Bypasses, "planted-files"),
    (Corpus::Bypasses, "agent-wrappers"),
    (Corpus::Bypasses, "compound-parser"),
    (Corpus::Bypasses, "invocation-forms"),
    (Corpus::Deny, "deny-assignments"),
    (Corpus::Deny, "deny-wrappers"),
    (Corpus::Deny, "deny-compound"),
    (Corpus::Deny, "deny-substitution"),
    (Corpus::Deny, "deny-whitespace"),
    (Corpus::Deny, "deny-quoting"),
    (Corpus::Deny, "deny-nested"),
    (Corpus::Deny, "deny-paths"),
    (Corpus::Deny, "deny-exec"),
    (Corpus::Deny, "deny-gaps"),
    (Corpus::Deny, "deny-redirections"),
    (Corpus::Deny, "deny-options"),
];

// ---------------------------------------------------------------------------------------
// The families, each a test of its own (twice: as the current user and as uid 65534).

for_each_user! {
    /// `;`, `&&`, `||`, `|`, `|&`, `&`, newlines and look-alike separators.
    fn separators(user) { check_family(Corpus::Bypasses, "separators", user) }
    /// `$(…)`, backticks, `${…}`, arithmetic, ANSI-C quoting, `$IFS`.
    fn substitution(user) { check_family(Corpus::Bypasses, "substitution", user) }
    /// `<(…)` and `>(…)`.
    fn process_substitution(user) { check_family(Corpus::Bypasses, "process-substitution", user) }
    /// `>`, `>>`, `>|`, `<>`, `2>`, `&>`, here-strings and here-documents.
    fn redirection(user) { check_family(Corpus::Bypasses, "redirection", user) }
    /// `VAR=value` before the command: `GIT_*`, `PATH`, `BASH_ENV`, `PERL5OPT`, ...
    fn env_prefix(user) { check_family(Corpus::Bypasses, "env-prefix", user) }
    /// Programs that run other programs: `env`, `nohup`, `timeout`, `sudo`, `xargs`, ...
    fn wrappers(user) { check_family(Corpus::Bypasses, "wrappers", user) }
    /// Quotes, escapes, control characters, invisible and look-alike characters.
    fn quoting(user) { check_family(Corpus::Bypasses, "quoting", user) }
    /// Brace expansion, globs in the program name, globs that expand to options.
    fn expansion(user) { check_family(Corpus::Bypasses, "expansion", user) }
    /// `bash -c`, `sh <<<`, `eval`, `source`, `.`, functions, aliases, `trap`.
    fn nested_shells(user) { check_family(Corpus::Bypasses, "nested-shells", user) }
    /// Options of "read-only" programs that execute or write: `find -exec`, `git -c`,
    /// `rg --pre`, `sed e`, `sort -o`, `tar --to-command`, ...
    fn program_options(user) { check_family(Corpus::Bypasses, "program-options", user) }
    /// `perl -e`, `python3 -c`, modules planted in the working directory.
    fn interpreters(user) { check_family(Corpus::Bypasses, "interpreters", user) }
    /// `./sed`, absolute paths and tilde paths to programs planted in the workspace.
    fn path_qualified(user) { check_family(Corpus::Bypasses, "path-qualified", user) }
    /// The git rules docs/rules.md recommends as narrow (`git log`, `git diff`, ...).
    fn narrow_git_rules(user) { check_family(Corpus::Bypasses, "narrow-git-rules", user) }
    /// Files the agent wrote with its own tools (not through gate), then a reading command.
    fn planted_files(user) { check_family(Corpus::Bypasses, "planted-files", user) }
    /// Forged or edited Claude Code, Gemini CLI and Codex wrapper templates.
    fn agent_wrappers(user) { check_family(Corpus::Bypasses, "agent-wrappers", user) }
    /// Where a shell parser and bash may disagree: comments, keywords, functions,
    /// assignments that change PATH, line continuations.
    fn compound_parser(user) { check_family(Corpus::Bypasses, "compound-parser", user) }
    /// The same attacks through the shims (`bash -c`, `bash -lc`, ...), `sh`, and `--`.
    fn invocation_forms(user) { check_family(Corpus::Bypasses, "invocation-forms", user) }

    /// Deny rules after `VAR=value` assignments.
    fn deny_assignments(user) { check_family(Corpus::Deny, "deny-assignments", user) }
    /// Deny rules behind `env`, `nohup`, `timeout N`, `nice`, `command`, `exec`, `sudo`, ...
    fn deny_wrappers(user) { check_family(Corpus::Deny, "deny-wrappers", user) }
    /// Deny rules in any part of a compound command, a group or a keyword construct.
    fn deny_compound(user) { check_family(Corpus::Deny, "deny-compound", user) }
    /// Deny rules inside substitutions and computed words.
    fn deny_substitution(user) { check_family(Corpus::Deny, "deny-substitution", user) }
    /// Deny rules with repeated spaces or tabs, in the command or in the rule.
    fn deny_whitespace(user) { check_family(Corpus::Deny, "deny-whitespace", user) }
    /// Deny rules through quotes, escapes, ANSI-C strings, braces, continuations.
    fn deny_quoting(user) { check_family(Corpus::Deny, "deny-quoting", user) }
    /// Deny rules inside `bash -c`, `eval`, `find -exec`, `su -c`, ...
    fn deny_nested(user) { check_family(Corpus::Deny, "deny-nested", user) }
    /// Deny rules against a program named by its path.
    fn deny_paths(user) { check_family(Corpus::Deny, "deny-paths", user) }
    /// What the text scanner cannot see and the exec check refuses when it runs.
    fn deny_exec(user) { check_family(Corpus::Deny, "deny-exec", user) }
    /// What docs/rules.md says a deny rule cannot catch: each must still get through.
    fn deny_gaps(user) { check_family(Corpus::Deny, "deny-gaps", user) }
    /// Deny rules after redirections (`>-`, `<&-`, `{fd}>FILE`) and here-documents.
    fn deny_redirections(user) { check_family(Corpus::Deny, "deny-redirections", user) }
    /// Deny rules against their options in another order or spelling.
    fn deny_options(user) { check_family(Corpus::Deny, "deny-options", user) }
}

#[test]
fn the_corpus_files_are_well_formed() {
    let cases = all_cases();
    let mut ids = BTreeSet::new();
    for case in cases {
        assert!(
            ids.insert(case.id.as_str()),
            "{}: the id {} is used twice",
            case.place(),
            case.id
        );
        assert!(
            FAMILIES.contains(&(case.corpus, case.family.as_str())),
            "{}: unknown family {:?} (add it to FAMILIES and give it a test)",
            case.place(),
            case.family
        );
        let allowed = match case.corpus {
            Corpus::Bypasses => &[
                Expect::Refused,
                Expect::Inert,
                Expect::ReadonlyLimit,
                Expect::RuleLimit,
                Expect::Allowed,
            ][..],
            Corpus::Deny => &[Expect::Refused, Expect::Exec, Expect::Gap][..],
        };
        assert!(
            allowed.contains(&case.expect),
            "{}: expect {:?} is not used in this file",
            case.place(),
            case.expect
        );
        for rule in &case.rules {
            let valid = match case.corpus {
                Corpus::Bypasses => gate::policy::validate_rule(rule).map(drop),
                Corpus::Deny => {
                    gate::policy::DenyRules::new().add(rule, gate::policy::Origin::Flag("--deny"))
                }
            };
            if let Err(e) = valid {
                panic!("{}: the rule {rule:?} is invalid: {e}", case.place());
            }
        }
        if case.corpus == Corpus::Deny {
            assert!(
                !case.rules.is_empty(),
                "{}: a deny case needs a rule",
                case.place()
            );
        }
        assert!(
            case.source == "invented" || case.source.starts_with("https://"),
            "{}: the source is a URL or \"invented\"",
            case.place()
        );
        assert!(!case.why.is_empty(), "{}: say why", case.place());
        let steps = expand(&case.command, &Vars::placeholder())
            .unwrap_or_else(|e| panic!("{}: {e}", case.place()));
        if case.form == Form::Argv {
            for step in &steps {
                let text = std::str::from_utf8(step)
                    .unwrap_or_else(|_| panic!("{}: argv cases must be UTF-8", case.place()));
                shell_words::split(text)
                    .unwrap_or_else(|e| panic!("{}: cannot split into words: {e}", case.place()));
            }
        }
        assert!(
            steps.iter().all(|s| !s.contains(&0)),
            "{}: a command cannot hold NUL: no argv can carry it",
            case.place()
        );
    }
    for (corpus, family) in FAMILIES {
        assert!(
            cases
                .iter()
                .any(|c| c.corpus == corpus && c.family == family),
            "the family {family} has no case"
        );
    }
}

// ---------------------------------------------------------------------------------------
// The files.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Corpus {
    /// Allow-rule bypasses, tried at level `ask`.
    Bypasses,
    /// Hidden denied commands, tried at level `full` with a deny rule.
    Deny,
}

impl Corpus {
    fn file(self) -> &'static str {
        match self {
            Corpus::Bypasses => "tests/corpus/bypasses.tsv",
            Corpus::Deny => "tests/corpus/deny.tsv",
        }
    }
}

/// How gate is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// `gate … --shell BASH -c COMMAND`: what Claude Code, Gemini CLI and Aider reach.
    C,
    /// `gate … -c COMMAND` with the default shell, `/bin/sh`.
    Sh,
    /// `gate … -- WORDS`: the command split into words, run without a shell.
    Argv,
    /// A `bash` shim: `bash -c COMMAND` (settings from a configuration file).
    ShimC,
    /// A `bash` shim as Codex starts it: `bash -lc COMMAND`.
    ShimLc,
    /// A `bash` shim as Claude Code starts it: `bash -c -l COMMAND`.
    ShimCL,
    /// A `bash` shim as Continue starts it: `bash -l -c COMMAND`.
    ShimLC,
}

impl Form {
    fn parse(text: &str) -> Option<Form> {
        Some(match text {
            "c" => Form::C,
            "sh" => Form::Sh,
            "argv" => Form::Argv,
            "shim-c" => Form::ShimC,
            "shim-lc" => Form::ShimLc,
            "shim-c-l" => Form::ShimCL,
            "shim-l-c" => Form::ShimLC,
            _ => return None,
        })
    }

    fn is_shim(self) -> bool {
        matches!(
            self,
            Form::ShimC | Form::ShimLc | Form::ShimCL | Form::ShimLC
        )
    }
}

/// Files made in the working directory before gate runs (as the user gate runs as).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Fixture {
    Git,
    Remote,
    Dirty,
    Fsmonitor,
    Textconv,
    DiffCommand,
    Tar,
    Big,
    Snapshot,
    CodexSnapshot,
    PlantedClaudeSnapshot,
    PlantedCodexSnapshot,
    CwdSymlink,
    PgrepSymlink,
    Makefile,
    Dir(String),
    File(String),
}

impl Fixture {
    fn parse(text: &str) -> Option<Fixture> {
        if let Some(name) = text.strip_prefix("file=") {
            return (!name.is_empty()).then(|| Fixture::File(name.to_owned()));
        }
        if let Some(name) = text.strip_prefix("dir=") {
            return (!name.is_empty()).then(|| Fixture::Dir(name.to_owned()));
        }
        Some(match text {
            "git" => Fixture::Git,
            "remote" => Fixture::Remote,
            "dirty" => Fixture::Dirty,
            "fsmonitor" => Fixture::Fsmonitor,
            "textconv" => Fixture::Textconv,
            "diffcmd" => Fixture::DiffCommand,
            "tar" => Fixture::Tar,
            "big" => Fixture::Big,
            "snapshot" => Fixture::Snapshot,
            "codex-snapshot" => Fixture::CodexSnapshot,
            "planted-claude-snapshot" => Fixture::PlantedClaudeSnapshot,
            "planted-codex-snapshot" => Fixture::PlantedCodexSnapshot,
            "cwd-symlink" => Fixture::CwdSymlink,
            "pgrep-symlink" => Fixture::PgrepSymlink,
            "makefile" => Fixture::Makefile,
            _ => return None,
        })
    }

    fn needs_git(&self) -> bool {
        matches!(
            self,
            Fixture::Remote
                | Fixture::Dirty
                | Fixture::Fsmonitor
                | Fixture::Textconv
                | Fixture::DiffCommand
        )
    }

    fn script(&self) -> String {
        match self {
            // An empty template and no logs: fewer files to copy for every run.
            Fixture::Git => "git init -q --template= -b main . && git add a.txt && \
                 git -c user.name=gate -c user.email=gate@example.invalid commit -q -m init \
                 && rm -rf .git/logs .git/COMMIT_EDITMSG"
                .to_owned(),
            Fixture::Remote => "git init -q --bare --template= origin.git && \
                 git remote add origin ./origin.git"
                .to_owned(),
            Fixture::Dirty => "printf 'changed\\n' >> a.txt".to_owned(),
            Fixture::Fsmonitor => "git config core.fsmonitor 'touch PWNED'".to_owned(),
            Fixture::Textconv => "printf '*.txt diff=pwn\\n' > .gitattributes && \
                 git config diff.pwn.textconv 'touch PWNED'"
                .to_owned(),
            Fixture::DiffCommand => "printf '*.txt diff=pwn\\n' > .gitattributes && \
                 git config diff.pwn.command 'touch PWNED'"
                .to_owned(),
            Fixture::Tar => "tar -cf a.tar a.txt".to_owned(),
            Fixture::Big => "seq 20000 > big.txt".to_owned(),
            // Made for each run (Workspace::new): they depend on its home or /tmp names.
            Fixture::Snapshot
            | Fixture::CodexSnapshot
            | Fixture::CwdSymlink
            | Fixture::PgrepSymlink => String::new(),
            Fixture::PlantedClaudeSnapshot => format!(
                "mkdir -p .claude/shell-snapshots && printf ': > PWNED\\n' > \
                 .claude/shell-snapshots/{SNAPSHOT}"
            ),
            Fixture::PlantedCodexSnapshot => format!(
                "mkdir -p .codex/shell_snapshots && printf ': > PWNED\\n' > \
                 .codex/shell_snapshots/{CODEX_SNAPSHOT}"
            ),
            Fixture::Makefile => {
                "printf 'x := $(shell touch PWNED)\\nall:\\n\\t@true\\n' > Makefile".to_owned()
            }
            Fixture::Dir(name) => {
                let name = shell_words::quote(name);
                format!("mkdir -p {name}/sub && : > {name}/f && : > {name}/sub/g")
            }
            Fixture::File(name) => format!(": > {}", shell_words::quote(name)),
        }
    }
}

/// The name of the Claude Code snapshot the wrapper cases source.
const SNAPSHOT: &str = "snapshot-bash-1788557415117-j0hu0n.sh";

/// The name of a Codex shell snapshot.
const CODEX_SNAPSHOT: &str = "0191d3b2-1c2d-7e3f-8a4b-0123456789ab.sh";

/// Fixtures made for each run rather than copied from a template.
fn per_run(fixture: &Fixture) -> bool {
    matches!(
        fixture,
        Fixture::Snapshot | Fixture::CodexSnapshot | Fixture::CwdSymlink | Fixture::PgrepSymlink
    )
}

/// Files the payloads use: the name, the text whose presence in the command (or `""`:
/// always) has it made, and the shell line that makes it. Only what a case mentions is
/// made, because creating files is the slowest part of a run on some machines.
const BASE_FILES: [(&str, &str, &str); 15] = [
    ("a.txt", "", "printf 'hi\\nthere\\n' > a.txt"),
    (
        "pwn",
        "",
        "printf '#!/bin/sh\\n: > PWNED\\n' > pwn && chmod 755 pwn",
    ),
    ("victim", "", ": > victim"),
    ("sed", "./sed", "cp pwn sed"),
    ("ls", "ls", "cp pwn ls"),
    ("cat", "./cat", "cp pwn cat"),
    ("git-pwn", "exec-path", "cp pwn git-pwn"),
    ("bin/grep", "bin/grep", "mkdir bin && cp pwn bin/grep"),
    ("pwn.sh", "pwn.sh", "printf ': > PWNED\\n' > pwn.sh"),
    (
        "pwn.py",
        "python3",
        "printf 'open(\"PWNED\", \"w\")\\n' > pwn.py",
    ),
    (
        "pwn.awk",
        "pwn.awk",
        "printf 'BEGIN { system(\"touch PWNED\") }\\n' > pwn.awk",
    ),
    ("pwn.sed", "pwn.sed", "printf '1e touch PWNED\\n' > pwn.sed"),
    (
        "Pwn.pm",
        "Pwn",
        "printf 'package Pwn;\\nopen(my $f, \">\", \"PWNED\");\\n1;\\n' > Pwn.pm",
    ),
    ("args", "args", "printf 'PWNED\\n' > args"),
    ("list", "list", "printf 'victim\\n' > list"),
];

/// The side effect a payload has, relative to the working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Effect {
    /// `+PATH`: the path exists afterwards.
    Created(String),
    /// `-PATH`: the path is gone afterwards.
    Removed(String),
    /// `~PATH`: the (empty) file holds something afterwards.
    Written(String),
}

impl Effect {
    fn parse(text: &str) -> Option<Effect> {
        let mut chars = text.chars();
        let kind = chars.next()?;
        let path = chars.as_str().to_owned();
        if path.is_empty() {
            return None;
        }
        match kind {
            '+' => Some(Effect::Created(path)),
            '-' => Some(Effect::Removed(path)),
            '~' => Some(Effect::Written(path)),
            _ => None,
        }
    }

    fn happened(&self, work: &Path) -> bool {
        match self {
            Effect::Created(path) => work.join(path).symlink_metadata().is_ok(),
            Effect::Removed(path) => work.join(path).symlink_metadata().is_err(),
            Effect::Written(path) => fs::metadata(work.join(path)).is_ok_and(|m| m.len() > 0),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    /// Exit 126 with `gate: refused` (some step, for several), and no side effect.
    Refused,
    /// gate may run it (it is harmless to the shell); the side effect must not happen.
    Inert,
    /// Deny only: hidden from the text scanner, refused by the exec check when the
    /// program runs (or by the scanner, should it learn to read it). The side effect
    /// must not happen, and some step's stderr has a line starting `gate: refused`; the
    /// exit status is the shell's.
    Exec,
    /// A documented deny-rule gap: gate does not refuse it, and the side effect happens.
    Gap,
    /// Refused without `--readonly`; with it, the preset runs it and the side effect
    /// happens, as docs/readonly.md's "Known limits" says.
    ReadonlyLimit,
    /// The genuine form of what the cases around it forge: gate runs it and the side
    /// effect happens, in every mode. It shows that those cases are refused for what
    /// they changed, not because nothing is recognised.
    Allowed,
    /// The allow rule covers it in every mode, as docs/rules.md says ("What an allow rule
    /// does not check"): it runs and the side effect happens. For attacks that are
    /// accepted as limits of prefix rules, so that the documentation stays true.
    RuleLimit,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Control {
    /// At level `full` the side effect must happen, given these programs (and `root`).
    Runs(Vec<String>),
    /// No control, for the reason given.
    Not(String),
}

#[derive(Debug, Clone)]
struct Case {
    corpus: Corpus,
    line: usize,
    id: String,
    family: String,
    form: Form,
    /// Allow rules (bypasses) or deny rules (deny).
    rules: Vec<String>,
    setup: Vec<Fixture>,
    /// The command as written, placeholders still in.
    command: String,
    effect: Effect,
    expect: Expect,
    control: Control,
    source: String,
    why: String,
}

impl Case {
    fn place(&self) -> String {
        format!("{}:{} ({})", self.corpus.file(), self.line, self.id)
    }
}

fn all_cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut cases = parse(Corpus::Bypasses, BYPASSES);
        cases.extend(parse(Corpus::Deny, DENY));
        cases
    })
}

fn parse(corpus: Corpus, text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut header_seen = false;
    for (index, line) in text.lines().enumerate() {
        let number = index + 1;
        let place = format!("{}:{number}", corpus.file());
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('\t').collect();
        assert_eq!(
            fields.len(),
            HEADER.len(),
            "{place}: {} tab-separated fields, not {}",
            HEADER.len(),
            fields.len()
        );
        if !header_seen {
            assert_eq!(fields, HEADER, "{place}: the header line");
            header_seen = true;
            continue;
        }
        let field = |name: &str| fields[HEADER.iter().position(|h| *h == name).unwrap()];
        let bad = |name: &str| -> ! { panic!("{place}: bad {name} {:?}", field(name)) };
        let rules = match field("rules") {
            "-" => Vec::new(),
            list => list
                .split(" | ")
                .map(|rule| {
                    let bytes = expand(rule, &Vars::placeholder())
                        .ok()
                        .filter(|s| s.len() == 1)
                        .unwrap_or_else(|| bad("rules"));
                    String::from_utf8(bytes.into_iter().next().unwrap())
                        .unwrap_or_else(|_| bad("rules"))
                })
                .collect(),
        };
        let setup = match field("setup") {
            "-" => Vec::new(),
            list => {
                // `file=NAME` may hold `+`, so it is always the last item.
                let (items, file) = match list.find("file=") {
                    Some(at) => (&list[..at], Some(&list[at..])),
                    None => (list, None),
                };
                let mut setup: Vec<Fixture> = items
                    .split('+')
                    .filter(|s| !s.is_empty())
                    .map(|s| Fixture::parse(s).unwrap_or_else(|| bad("setup")))
                    .collect();
                if let Some(file) = file {
                    setup.push(Fixture::parse(file).unwrap_or_else(|| bad("setup")));
                }
                setup
            }
        };
        let control = match field("control") {
            "yes" => Control::Runs(Vec::new()),
            c => match (c.strip_prefix("needs:"), c.strip_prefix("no:")) {
                (Some(list), _) => Control::Runs(list.split(',').map(str::to_owned).collect()),
                (_, Some(reason)) if !reason.is_empty() => Control::Not(reason.to_owned()),
                _ => bad("control"),
            },
        };
        cases.push(Case {
            corpus,
            line: number,
            id: field("id").to_owned(),
            family: field("family").to_owned(),
            form: Form::parse(field("form")).unwrap_or_else(|| bad("form")),
            rules,
            setup,
            command: field("command").to_owned(),
            effect: Effect::parse(field("effect")).unwrap_or_else(|| bad("effect")),
            expect: match field("expect") {
                "refused" => Expect::Refused,
                "inert" => Expect::Inert,
                "exec" => Expect::Exec,
                "gap" => Expect::Gap,
                "readonly-limit" => Expect::ReadonlyLimit,
                "rule-limit" => Expect::RuleLimit,
                "allowed" => Expect::Allowed,
                _ => bad("expect"),
            },
            control,
            source: field("source").to_owned(),
            why: field("why").to_owned(),
        });
    }
    assert!(header_seen, "{}: no header line", corpus.file());
    cases
}

/// Per-run values the placeholders stand for.
struct Vars {
    home: PathBuf,
    work: PathBuf,
    hex: String,
}

impl Vars {
    fn placeholder() -> Vars {
        Vars {
            home: PathBuf::from("/home"),
            work: PathBuf::from("/work"),
            hex: "0".repeat(12),
        }
    }

    /// Gemini CLI's per-call directory (`mkdtemp` of `/tmp/gemini-shell-`), named after
    /// this run; made private for the cases that name it.
    fn gemini_dir(&self) -> PathBuf {
        PathBuf::from(format!("/tmp/gemini-shell-{}", &self.hex[6..]))
    }

    /// `/tmp` files the agents' wrapper templates write, named after this run.
    fn temporary_files(&self) -> [PathBuf; 2] {
        [
            PathBuf::from(format!("/tmp/claude-{}-cwd", &self.hex[8..])),
            PathBuf::from(format!("/tmp/shell_pgrep_{}.tmp", self.hex)),
        ]
    }
}

/// The command's steps, with `{{…}}` escapes and placeholders replaced. See README.md.
fn expand(raw: &str, vars: &Vars) -> Result<Vec<Vec<u8>>, String> {
    let mut steps = vec![Vec::new()];
    let mut rest = raw;
    while let Some(start) = rest.find("{{") {
        let step = steps.last_mut().unwrap();
        step.extend_from_slice(&rest.as_bytes()[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find("}}")
            .ok_or_else(|| format!("unclosed {{{{ in {raw:?}"))?;
        let name = &after[..end];
        rest = &after[end + 2..];
        let byte = |b: u8| vec![b];
        let bytes: Vec<u8> = match name {
            "THEN" => {
                steps.push(Vec::new());
                continue;
            }
            "NL" => byte(b'\n'),
            "CR" => byte(b'\r'),
            "TAB" => byte(b'\t'),
            "VT" => byte(0x0b),
            "FF" => byte(0x0c),
            "ESC" => byte(0x1b),
            "DEL" => byte(0x7f),
            "HOME" => vars.home.as_os_str().as_bytes().to_vec(),
            "WORK" => vars.work.as_os_str().as_bytes().to_vec(),
            "HEX4" => vars.hex.as_bytes()[8..].to_vec(),
            "HEX12" => vars.hex.as_bytes().to_vec(),
            "GEMDIR" => vars.gemini_dir().into_os_string().into_vec(),
            _ => {
                if let Some(code) = name.strip_prefix("U+") {
                    let c = u32::from_str_radix(code, 16)
                        .ok()
                        .and_then(char::from_u32)
                        .ok_or_else(|| format!("bad {{{{{name}}}}}"))?;
                    c.to_string().into_bytes()
                } else if let Some(hex) = name.strip_prefix('X').filter(|h| h.len() == 2) {
                    byte(u8::from_str_radix(hex, 16).map_err(|_| format!("bad {{{{{name}}}}}"))?)
                } else {
                    return Err(format!("unknown {{{{{name}}}}} in {raw:?}"));
                }
            }
        };
        steps.last_mut().unwrap().extend(bytes);
    }
    steps.last_mut().unwrap().extend_from_slice(rest.as_bytes());
    if steps.iter().any(Vec::is_empty) {
        return Err(format!("an empty step in {raw:?}"));
    }
    Ok(steps)
}

// ---------------------------------------------------------------------------------------
// Running one case.

/// What gate is started with, besides the command.
struct Setting<'a> {
    level: &'static str,
    flags: &'static [&'static str],
    allow: &'a [String],
    deny: &'a [String],
}

/// One process, finished.
struct Finished {
    code: Option<i32>,
    signal: Option<i32>,
    stderr: Vec<u8>,
}

impl Finished {
    fn refused(&self) -> bool {
        self.code == Some(common::REFUSED) && self.stderr.starts_with(b"gate: refused")
    }

    /// A line of stderr says `gate: refused …`: the scanner's refusal, or the exec
    /// check's, which the denied program's stderr gets while its shell goes on.
    fn says_refused(&self) -> bool {
        self.stderr
            .split(|b| *b == b'\n')
            .any(|line| line.starts_with(b"gate: refused"))
    }

    fn describe(&self) -> String {
        format!(
            "exit {:?} signal {:?} stderr {:?}",
            self.code,
            self.signal,
            String::from_utf8_lossy(&self.stderr)
        )
    }
}

/// A run of every step of a case in a fresh directory.
struct Observed {
    steps: Vec<Finished>,
    effect: bool,
}

impl Observed {
    fn describe(&self) -> String {
        let mut text = format!("side effect happened: {}", self.effect);
        for (i, step) in self.steps.iter().enumerate() {
            let _ = write!(text, "\n    step {}: {}", i + 1, step.describe());
        }
        text
    }
}

/// A fresh directory tree for runs of one case: a home, a working directory filled with
/// the case's fixtures, and a private, empty runtime directory (no broker to ask).
struct Workspace {
    _dir: tempfile::TempDir,
    root: PathBuf,
    work: PathBuf,
    vars: Vars,
    env: Vec<(OsString, OsString)>,
}

impl Workspace {
    fn new(case: &Case, templates: &Templates) -> Workspace {
        static RUNS: AtomicU64 = AtomicU64::new(0);
        let dir = tempfile::Builder::new()
            .prefix("gate-corpus-run-")
            .tempdir()
            .unwrap();
        let root = dir.path().to_path_buf();
        fs::set_permissions(&root, fs::Permissions::from_mode(0o755)).unwrap();
        let owner = templates.owner();
        let make = |name: &str, mode: u32| {
            let path = root.join(name);
            fs::create_dir(&path).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            if let Some(uid) = owner {
                std::os::unix::fs::lchown(&path, Some(uid), Some(uid)).unwrap();
            }
            path
        };
        let home = make("home", 0o755);
        let work = make("work", 0o755);
        // A real runtime directory is private to its user; an empty one has no broker.
        let runtime = make("runtime", 0o700);
        templates.fill(case, &work, &home);
        let run = RUNS.fetch_add(1, Ordering::Relaxed);
        let vars = Vars {
            home: home.clone(),
            work: work.clone(),
            hex: format!(
                "{:012x}",
                ((u64::from(std::process::id()) << 20) ^ run) & 0xffff_ffff_ffff
            ),
        };
        // The agents' bookkeeping files, planted as links to a file in the workspace.
        let [cwd_file, pgrep_file] = vars.temporary_files();
        for (fixture, link) in [
            (Fixture::CwdSymlink, cwd_file),
            (Fixture::PgrepSymlink, pgrep_file),
        ] {
            if case.setup.contains(&fixture) {
                let _ = fs::remove_file(&link);
                std::os::unix::fs::symlink(work.join("victim"), &link).unwrap();
                if let Some(uid) = owner {
                    // /tmp is sticky: only its owner's links are followed (protected_symlinks).
                    std::os::unix::fs::lchown(&link, Some(uid), Some(uid)).unwrap();
                }
            }
        }
        if case.command.contains("{{GEMDIR}}") {
            let dir = vars.gemini_dir();
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir(&dir).unwrap();
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
            if let Some(uid) = owner {
                std::os::unix::fs::lchown(&dir, Some(uid), Some(uid)).unwrap();
            }
        }
        let path = std::env::var_os("PATH")
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| OsString::from("/usr/local/bin:/usr/bin:/bin"));
        let env = vec![
            ("PATH".into(), path),
            ("HOME".into(), home.clone().into()),
            // Never made: the audit log is off and no configuration file is read.
            ("XDG_STATE_HOME".into(), root.join("state").into()),
            ("XDG_CONFIG_HOME".into(), root.join("config").into()),
            ("XDG_RUNTIME_DIR".into(), runtime.into()),
            ("LC_ALL".into(), "C".into()),
        ];
        Workspace {
            vars,
            _dir: dir,
            root,
            work,
            env,
        }
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        for file in self.vars.temporary_files() {
            let _ = fs::remove_file(file);
        }
        let _ = fs::remove_dir_all(self.vars.gemini_dir());
    }
}

/// Run every step of a case in a workspace and look for the side effect.
fn run_case(case: &Case, user: User, ws: &Workspace, setting: &Setting<'_>) -> Observed {
    let steps = expand(&case.command, &ws.vars).expect("checked when the file was read");
    let finished = steps
        .iter()
        .map(|step| {
            let command = gate_command(case, user, ws, setting, step);
            execute(command, &format!("{} [{}]", case.place(), setting.level))
        })
        .collect();
    Observed {
        steps: finished,
        effect: case.effect.happened(&ws.work),
    }
}

/// The fixtures and the base files a template holds.
type TemplateKey = (BTreeSet<Fixture>, BTreeSet<&'static str>);

/// Working directories made once per fixture set (by the setup script, as the user gate
/// runs as) and copied into the fresh directory of each run: running git for every run
/// would take most of the corpus's time.
struct Templates {
    user: User,
    made: Mutex<BTreeMap<TemplateKey, Arc<tempfile::TempDir>>>,
}

impl Templates {
    fn new(user: User) -> Templates {
        Templates {
            user,
            made: Mutex::new(BTreeMap::new()),
        }
    }

    /// The owner to give copied files: uid 65534 for the unprivileged runs as root.
    fn owner(&self) -> Option<u32> {
        (self.user == User::Unprivileged && running_as_root()).then(|| uid_of(self.user))
    }

    /// Fill a working directory (and home) with the case's fixtures.
    fn fill(&self, case: &Case, work: &Path, home: &Path) {
        let mut fixtures: BTreeSet<Fixture> =
            case.setup.iter().filter(|f| !per_run(f)).cloned().collect();
        if fixtures.iter().any(Fixture::needs_git) {
            fixtures.insert(Fixture::Git);
        }
        let files: BTreeSet<&'static str> = BASE_FILES
            .iter()
            .filter(|(_, mentioned, _)| case.command.contains(mentioned))
            .map(|(name, _, _)| *name)
            .collect();
        let template = {
            let mut made = self.made.lock().unwrap_or_else(|e| e.into_inner());
            let key = (fixtures, files);
            if !made.contains_key(&key) {
                let built = self.build(case, &key.0, &key.1);
                made.insert(key.clone(), Arc::new(built));
            }
            Arc::clone(&made[&key])
        };
        copy_tree(template.path(), work, self.owner())
            .unwrap_or_else(|e| panic!("{}: cannot copy the fixtures: {e}", case.place()));
        // The agents' snapshots live in the home directory, which differs per run. They
        // hold gate's own stub, as after gate answered the agent's start-up call: the
        // only snapshot gate trusts a wrapper to source.
        for (fixture, dir, name) in [
            (Fixture::Snapshot, ".claude/shell-snapshots", SNAPSHOT),
            (
                Fixture::CodexSnapshot,
                ".codex/shell_snapshots",
                CODEX_SNAPSHOT,
            ),
        ] {
            if case.setup.contains(&fixture) {
                let dir = home.join(dir);
                fs::create_dir_all(&dir).unwrap();
                let file = dir.join(name);
                fs::write(&file, gate::policy::wrapper::SNAPSHOT_STUB).unwrap();
                if let Some(uid) = self.owner() {
                    for path in [home.join(".claude"), home.join(".codex"), dir, file] {
                        let _ = std::os::unix::fs::lchown(&path, Some(uid), Some(uid));
                    }
                }
            }
        }
    }

    fn build(
        &self,
        case: &Case,
        fixtures: &BTreeSet<Fixture>,
        files: &BTreeSet<&str>,
    ) -> tempfile::TempDir {
        let dir = tempfile::Builder::new()
            .prefix("gate-corpus-")
            .tempdir()
            .unwrap();
        fs::set_permissions(dir.path(), fs::Permissions::from_mode(0o755)).unwrap();
        if let Some(uid) = self.owner() {
            std::os::unix::fs::lchown(dir.path(), Some(uid), Some(uid)).unwrap();
        }
        let mut script = String::from("set -e\n");
        for (name, _, line) in BASE_FILES {
            if files.contains(name) {
                script.push_str(line);
                script.push('\n');
            }
        }
        for fixture in fixtures {
            script.push_str(&fixture.script());
            script.push('\n');
        }
        let path = std::env::var_os("PATH").unwrap_or_default();
        let out = command_as(self.user, require_program("sh"))
            .args(["-c", &script])
            .env_clear()
            .env("PATH", path)
            .env("HOME", "/nonexistent")
            .env("LC_ALL", "C")
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("{}: cannot run the setup: {e}", case.place()));
        assert!(
            out.status.success(),
            "{}: the setup failed: {}",
            case.place(),
            String::from_utf8_lossy(&out.stderr)
        );
        dir
    }
}

/// Copy a directory tree, keeping modes and symbolic links, optionally giving it away.
fn copy_tree(from: &Path, to: &Path, owner: Option<u32>) -> io::Result<()> {
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            fs::create_dir(&target)?;
            fs::set_permissions(&target, entry.metadata()?.permissions())?;
            copy_tree(&entry.path(), &target, owner)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(fs::read_link(entry.path())?, &target)?;
        } else {
            fs::copy(entry.path(), &target)?;
        }
        if let Some(uid) = owner {
            std::os::unix::fs::lchown(&target, Some(uid), Some(uid))?;
        }
    }
    Ok(())
}

fn gate_command(
    case: &Case,
    user: User,
    ws: &Workspace,
    setting: &Setting<'_>,
    step: &[u8],
) -> Command {
    let step = OsString::from_vec(step.to_vec());
    let mut command = if case.form.is_shim() {
        let shim = ws.root.join("shims/bash");
        if !shim.exists() {
            fs::create_dir_all(shim.parent().unwrap()).unwrap();
            std::os::unix::fs::symlink(common::gate_binary_for(user), &shim).unwrap();
        }
        let config = ws.root.join("gate.toml");
        fs::write(&config, shim_config(setting)).unwrap();
        fs::set_permissions(&config, fs::Permissions::from_mode(0o644)).unwrap();
        let mut command = command_as(user, &shim);
        command.env("GATE_CONFIG", &config);
        match case.form {
            Form::ShimC => command.arg("-c"),
            Form::ShimLc => command.arg("-lc"),
            Form::ShimCL => command.args(["-c", "-l"]),
            _ => command.args(["-l", "-c"]),
        };
        command.arg(step);
        command
    } else {
        let mut command = command_as(user, common::gate_binary_for(user));
        command.args(["--level", setting.level, "--no-config", "--no-tty"]);
        command.args(["--audit-log", "off"]).args(setting.flags);
        for rule in setting.allow {
            command.arg("--allow").arg(rule);
        }
        for rule in setting.deny {
            command.arg("--deny").arg(rule);
        }
        match case.form {
            Form::C => {
                command
                    .arg("--shell")
                    .arg(common::bash())
                    .arg("-c")
                    .arg(step);
            }
            Form::Sh => {
                command.arg("-c").arg(step);
            }
            _ => {
                let text = step.to_str().expect("checked when the file was read");
                command.arg("--").args(shell_words::split(text).unwrap());
            }
        }
        command
    };
    // The environment is rebuilt: command_as sets none of it.
    let extra: Vec<(OsString, OsString)> = command
        .get_envs()
        .filter_map(|(k, v)| Some((k.to_owned(), v?.to_owned())))
        .collect();
    command
        .env_clear()
        .envs(ws.env.iter().cloned())
        .envs(extra)
        .current_dir(&ws.work);
    command
}

/// The configuration file a shim reads: the same settings as the flags.
fn shim_config(setting: &Setting<'_>) -> String {
    let list = |rules: &[String]| {
        rules
            .iter()
            .map(|r| serde_json::to_string(r).unwrap())
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "level = \"{}\"\nallow = [{}]\ndeny = [{}]\ncompound = {}\nreadonly = {}\n\
         [approval]\ntty = false\n[audit]\nlog = \"off\"\n",
        setting.level,
        list(setting.allow),
        list(setting.deny),
        setting.flags.contains(&"--compound"),
        setting.flags.contains(&"--readonly"),
    )
}

/// Run a process in a session of its own (no controlling terminal), stdin empty, and
/// wait for it and for its output, within the deadline.
///
/// The new session comes from util-linux's `setsid`, which calls setsid(2) and execs the
/// rest of the line in the same process, so the pid waited for is gate's and its process
/// group is the session: no `unsafe` `pre_exec` hook is needed.
fn execute(command: Command, description: &str) -> Finished {
    let mut command = in_new_session(command);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("{description}: cannot start gate: {e}"));
    let group = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    let stdout = drain(child.stdout.take().unwrap());
    let stderr = drain(child.stderr.take().unwrap());
    let started = Instant::now();
    let mut pause = Duration::from_micros(200);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > DEADLINE {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
            let _ = child.wait();
            panic!("{description}: gate did not finish within {DEADLINE:?}; killed it");
        }
        thread::sleep(pause);
        pause = (pause * 2).min(Duration::from_millis(10));
    };
    // A background process the command started keeps the pipes open until it is done;
    // waiting for it means its side effect, if any, has happened.
    let patience = Duration::from_secs(10);
    let _ = stdout.recv_timeout(patience);
    let stderr = stderr.recv_timeout(patience).unwrap_or_default();
    let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
    Finished {
        code: status.code(),
        signal: status.signal(),
        stderr,
    }
}

/// The same command, started through `setsid`.
fn in_new_session(command: Command) -> Command {
    static SETSID: OnceLock<PathBuf> = OnceLock::new();
    let setsid = SETSID.get_or_init(|| require_program("setsid"));
    let mut wrapped = Command::new(setsid);
    wrapped.arg(command.get_program()).args(command.get_args());
    // gate_command clears the environment and sets every variable it passes.
    wrapped.env_clear();
    for (key, value) in command.get_envs() {
        if let Some(value) = value {
            wrapped.env(key, value);
        }
    }
    if let Some(dir) = command.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

fn drain(mut stream: impl Read + Send + 'static) -> Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = stream.read_to_end(&mut buf);
        let _ = tx.send(buf);
    });
    rx
}

// ---------------------------------------------------------------------------------------
// Judging a family.

/// Whether the programs a control needs are here (`root`: the control runs as root).
fn missing_for_control(needs: &[String], user: User) -> Option<String> {
    needs
        .iter()
        .find(|need| {
            if *need == "root" {
                uid_of(user) != 0
            } else {
                find_program(need).is_none()
            }
        })
        .cloned()
}

fn find_program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin", "/sbin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0))
}

fn check_family(corpus: Corpus, family: &str, user: User) {
    let cases: Vec<&Case> = all_cases()
        .iter()
        .filter(|c| c.corpus == corpus && c.family == family)
        .collect();
    assert!(!cases.is_empty(), "no case in the family {family}");
    // Cases run in parallel: each in its own directory, and most of the time goes to
    // waiting for processes.
    let workers = thread::available_parallelism()
        .map_or(2, |n| n.get())
        .clamp(2, 8)
        * 2;
    let chunk = cases.len().div_ceil(workers);
    let templates = Templates::new(user);
    let templates = &templates;
    let reports: Vec<CaseReport> = thread::scope(|scope| {
        let handles: Vec<_> = cases
            .chunks(chunk)
            .map(|chunk| {
                scope.spawn(move || {
                    chunk
                        .iter()
                        .map(|case| check_case(case, user, templates))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("a case panicked"))
            .collect()
    });

    let mut failures = Vec::new();
    let mut controls_ran = 0;
    let mut skipped = BTreeMap::new();
    for report in &reports {
        failures.extend(report.failures.iter().cloned());
        match &report.control {
            ControlOutcome::Ran => controls_ran += 1,
            ControlOutcome::Skipped(why) => {
                skipped.insert(report.id.clone(), why.clone());
            }
            ControlOutcome::Failed | ControlOutcome::None => {}
        }
    }
    println!(
        "{family} as {user:?}: {} cases, {controls_ran} controls ran, {} skipped {skipped:?}",
        cases.len(),
        skipped.len()
    );
    if controls_ran == 0 {
        failures.push(format!(
            "{family}: no control ran, so nothing shows that this family's payloads work \
             here; give it a case whose control needs only base tools"
        ));
    }
    assert!(
        failures.is_empty(),
        "{} failure(s) in {family} as {user:?}:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

enum ControlOutcome {
    Ran,
    Skipped(String),
    Failed,
    None,
}

struct CaseReport {
    id: String,
    failures: Vec<String>,
    control: ControlOutcome,
}

fn check_case(case: &Case, user: User, templates: &Templates) -> CaseReport {
    let mut failures = Vec::new();
    let shown = |observed: &Observed| {
        format!(
            "{}: {}\n  why: {}\n  command: {:?}\n  rules: {:?}\n  {}",
            case.place(),
            case.family,
            case.why,
            case.command,
            case.rules,
            observed.describe()
        )
    };
    let missing = match &case.control {
        Control::Runs(needs) => missing_for_control(needs, user),
        Control::Not(_) => None,
    };
    match case.corpus {
        Corpus::Bypasses => {
            // A refused run ran nothing, so its directory is as fresh as a new one; any
            // other run gets a new one after it.
            let mut ws: Option<Workspace> = None;
            for (mode, flags) in MODES {
                let setting = Setting {
                    level: "ask",
                    flags,
                    allow: &case.rules,
                    deny: &[],
                };
                let workspace = ws.get_or_insert_with(|| Workspace::new(case, templates));
                let observed = run_case(case, user, workspace, &setting);
                if !observed.steps.iter().all(Finished::refused) {
                    ws = None;
                }
                let refused = observed.steps.iter().any(Finished::refused);
                let ok = match case.expect {
                    Expect::Allowed => {
                        if refused || !observed.effect {
                            failures.push(format!(
                                "the genuine form was not run [{mode}]: the forged cases \
                                 next to it prove nothing until it is\n{}",
                                shown(&observed)
                            ));
                        }
                        continue;
                    }
                    Expect::RuleLimit => {
                        if !observed.effect {
                            failures.push(format!(
                                "a documented limit of allow rules no longer holds [{mode}]: \
                                 if gate now refuses this, make the case `refused` and \
                                 update docs/rules.md\n{}",
                                shown(&observed)
                            ));
                        }
                        continue;
                    }
                    Expect::ReadonlyLimit if flags.contains(&"--readonly") => {
                        if !observed.effect {
                            failures.push(format!(
                                "a documented limit of the read-only preset no longer \
                                 holds [{mode}]: if the preset now refuses this, make the \
                                 case `refused` and update docs/readonly.md's known \
                                 limits\n{}",
                                shown(&observed)
                            ));
                        }
                        continue;
                    }
                    Expect::Refused | Expect::ReadonlyLimit => refused && !observed.effect,
                    _ => !observed.effect,
                };
                if !ok {
                    let what = if observed.effect {
                        "BYPASS: the payload ran without an approval"
                    } else {
                        "not refused (expected exit 126 and `gate: refused`)"
                    };
                    failures.push(format!("{what} [{mode}]\n{}", shown(&observed)));
                }
            }
            // What the rule covers by the seeds' prefix rule, `--readonly-rules` holds to
            // reading: every step that would write or run a program is refused.
            if case.expect == Expect::RuleLimit {
                for (mode, flags) in NARROWED_MODES {
                    let setting = Setting {
                        level: "ask",
                        flags,
                        allow: &case.rules,
                        deny: &[],
                    };
                    let workspace = Workspace::new(case, templates);
                    let observed = run_case(case, user, &workspace, &setting);
                    if observed.effect || !observed.steps.iter().any(Finished::refused) {
                        failures.push(format!(
                            "BYPASS: --readonly-rules did not hold the rule to reading \
                             [{mode}]\n{}",
                            shown(&observed)
                        ));
                    }
                }
            }
        }
        Corpus::Deny => {
            let setting = Setting {
                level: "full",
                flags: &[],
                allow: &[],
                deny: &case.rules,
            };
            let ws = Workspace::new(case, templates);
            let observed = run_case(case, user, &ws, &setting);
            let refused = observed.steps.iter().any(Finished::refused);
            match case.expect {
                Expect::Exec => {
                    // Without the program (a control's `needs`), nothing runs to refuse.
                    let said = observed.steps.iter().any(Finished::says_refused);
                    if observed.effect || (missing.is_none() && !said) {
                        let what = if observed.effect {
                            "BYPASS: the denied program ran (the exec check must refuse it)"
                        } else {
                            "no `gate: refused` line on stderr"
                        };
                        failures.push(format!("{what} [--level full]\n{}", shown(&observed)));
                    }
                }
                Expect::Gap => {
                    if refused || (missing.is_none() && !observed.effect) {
                        failures.push(format!(
                            "a documented gap no longer gets through: if gate now catches \
                             it, move the case to a refused family and update the known \
                             gaps in docs/rules.md\n{}",
                            shown(&observed)
                        ));
                    }
                }
                _ => {
                    if !refused || observed.effect {
                        let what = if observed.effect {
                            "BYPASS: the denied command ran"
                        } else {
                            "not refused (expected exit 126 and `gate: refused`)"
                        };
                        failures.push(format!("{what} [--level full]\n{}", shown(&observed)));
                    }
                }
            }
        }
    }
    let control = match (&case.control, missing) {
        (Control::Not(_), _) => ControlOutcome::None,
        (Control::Runs(_), Some(what)) => ControlOutcome::Skipped(format!("needs {what}")),
        (Control::Runs(_), None) => {
            let setting = Setting {
                level: "full",
                flags: &[],
                allow: &[],
                deny: &[],
            };
            let ws = Workspace::new(case, templates);
            let observed = run_case(case, user, &ws, &setting);
            if observed.effect {
                ControlOutcome::Ran
            } else {
                failures.push(format!(
                    "CONTROL: at level full the payload did not take effect, so this case \
                     cannot show a bypass (fix the payload, or say `no:REASON`)\n{}",
                    shown(&observed)
                ));
                ControlOutcome::Failed
            }
        }
    };
    CaseReport {
        id: case.id.clone(),
        failures,
        control,
    }
}
