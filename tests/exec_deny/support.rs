//! The machinery behind `tests/exec_deny.rs`: an attack and how to run it (level, user,
//! shell), the fixtures it needs, and what counts as stopped.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::common::*;

/// The PATH every command gets. Fixed, so that the program path a refusal names is
/// known (`rm` is `/usr/bin/rm`), and so that no directory uid 65534 cannot search (the
/// test process's `/root/...` entries) sits in front.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// An environment variable each gate gets, with a value unique to the run: every process
/// gate starts inherits it, which is how the test tells this run's processes from those
/// of the tests running beside it. Not `GATE_*`: gate reads those.
pub const MARKER: &str = "EXEC_DENY_TEST_RUN";

// ---------------------------------------------------------------------------------------
// How a command is run.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Ask,
    Safe,
    Full,
}

impl Level {
    pub fn name(self) -> &'static str {
        match self {
            Level::Ask => "ask",
            Level::Safe => "safe",
            Level::Full => "full",
        }
    }

    /// The level a test module stands for (`at_ask`, `at_safe`, `at_full`).
    pub fn named(module: &str) -> Level {
        match module {
            "at_ask" => Level::Ask,
            "at_safe" => Level::Safe,
            "at_full" => Level::Full,
            _ => panic!("no level is called {module}"),
        }
    }
}

/// The shell gate runs the text with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// gate's default, `/bin/sh` (dash on Debian: `bin_sh_is_dash` checks).
    Dash,
    /// `--shell /usr/bin/bash`.
    Bash,
}

impl Shell {
    /// The shell a test module stands for (`under_dash`, `under_bash`).
    pub fn named(module: &str) -> Shell {
        match module {
            "under_dash" => Shell::Dash,
            "under_bash" => Shell::Bash,
            _ => panic!("no shell is called {module}"),
        }
    }
}

/// The user a test module stands for (`as_current_user`, `as_unprivileged_user`).
pub fn user_named(module: &str) -> User {
    match module {
        "as_current_user" => User::Current,
        "as_unprivileged_user" => User::Unprivileged,
        _ => panic!("no user is called {module}"),
    }
}

/// The level and user a generated test stands for, from its module path, which ends
/// `…::at_LEVEL::as_USER`.
pub fn level_and_user(module_path: &str) -> (Level, User) {
    let parts: Vec<&str> = module_path.rsplit("::").take(2).collect();
    let [user, level] = parts[..] else {
        panic!("{module_path} does not end in level and user");
    };
    (Level::named(level), user_named(user))
}

/// One cell of the matrix.
#[derive(Debug, Clone, Copy)]
pub struct Run {
    pub level: Level,
    pub user: User,
    pub shell: Shell,
}

impl Run {
    /// The cell a generated test stands for, from its module path, which ends
    /// `…::at_LEVEL::as_USER::under_SHELL`.
    pub fn here(module_path: &str) -> Run {
        let parts: Vec<&str> = module_path.rsplit("::").take(3).collect();
        let [shell, user, level] = parts[..] else {
            panic!("{module_path} does not end in level, user and shell");
        };
        Run {
            level: Level::named(level),
            user: user_named(user),
            shell: Shell::named(shell),
        }
    }

    fn describe(self) -> String {
        let user = match self.user {
            User::Unprivileged if running_as_root() => "uid 65534".to_owned(),
            _ => format!("uid {}", effective_uid()),
        };
        let shell = match self.shell {
            Shell::Dash => "/bin/sh (dash)",
            Shell::Bash => "bash",
        };
        format!("level {}, {user}, {shell}", self.level.name())
    }
}

/// A program on [`PATH`] that the run's user can execute, or a loud failure naming it.
pub fn program(name: &str) -> PathBuf {
    PATH.split(':')
        .map(|dir| Path::new(dir).join(name))
        .find(|path| usable_by_everyone(path))
        .unwrap_or_else(|| {
            panic!(
                "these tests need `{name}` in {PATH}, executable by every user (uid \
                 {NOBODY} too); it is not installed there"
            )
        })
}

// ---------------------------------------------------------------------------------------
// Attacks.

/// Files an attack needs in the working directory (besides the file `victim`, always
/// there). All of them belong to the user the command runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fixture {
    /// `d/`, a directory holding `d/f` and `d/sub/g`.
    Dir,
    /// `script.txt`: the line `rm victim`.
    Script,
    /// `list`: the line `victim`.
    List,
    /// `cmdline`: the line `rm victim`, for xargs.
    CommandLine,
    /// `Makefile`: `all` runs `rm victim`.
    Makefile,
    /// The working directory is a git repository whose `main` cannot be pushed without
    /// force to the bare repository `origin.git` (the remote `origin`): the commit
    /// pushed there was amended since.
    Remote,
}

/// What the attack destroys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The file `victim` is removed.
    Victim,
    /// The directory `d` is removed.
    Dir,
    /// `origin.git`'s `main` is moved to the amended commit.
    RemoteRef,
}

/// What must be seen, besides the target left alone, when the rule is in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The text scanner cannot see the denied program (it is in a file, on a pipe, in a
    /// program's own code), so only the exec check can stop it: a `gate: refused to run`
    /// line naming the rule and the program, and an audit record by `exec`.
    Exec,
    /// The text scanner may refuse it before anything runs (it does, or will once it
    /// reads options in any order, or each shell's own grammar); otherwise the exec check
    /// must, as for [`Stop::Exec`].
    Either,
    /// Only that the target survives: the attack also goes after the exec check itself,
    /// which may then fail closed without a word.
    Survival,
}

/// A command that gets a denied program run, and the rule that must stop it.
#[derive(Debug, Clone, Copy)]
pub struct Attack {
    /// The command text; `{rm}` stands for the path of `rm`.
    pub text: &'static str,
    /// The deny rule.
    pub rule: &'static str,
    pub setup: &'static [Fixture],
    pub target: Target,
    pub stop: Stop,
    /// Programs the attack runs, checked before it runs (a missing one fails the test).
    pub needs: &'static [&'static str],
    /// Other names a refusal may give the program than its path on [`PATH`] (`{rm}` is
    /// replaced as in `text`).
    pub also_named: &'static [&'static str],
    /// A file the command writes once it is done, background processes included.
    pub done_when: Option<&'static str>,
}

impl Attack {
    /// An attack on `victim` that only the exec check can stop.
    pub const fn new(text: &'static str, rule: &'static str) -> Attack {
        Attack {
            text,
            rule,
            setup: &[],
            target: Target::Victim,
            stop: Stop::Exec,
            needs: &[],
            also_named: &[],
            done_when: None,
        }
    }

    pub const fn setup(self, setup: &'static [Fixture]) -> Attack {
        Attack { setup, ..self }
    }

    pub const fn target(self, target: Target) -> Attack {
        Attack { target, ..self }
    }

    /// The text scanner may stop it first.
    pub const fn either(self) -> Attack {
        Attack {
            stop: Stop::Either,
            ..self
        }
    }

    /// Only the target's survival is checked.
    pub const fn survival(self) -> Attack {
        Attack {
            stop: Stop::Survival,
            ..self
        }
    }

    pub const fn needs(self, needs: &'static [&'static str]) -> Attack {
        Attack { needs, ..self }
    }

    pub const fn also_named(self, also_named: &'static [&'static str]) -> Attack {
        Attack { also_named, ..self }
    }

    pub const fn done_when(self, file: &'static str) -> Attack {
        Attack {
            done_when: Some(file),
            ..self
        }
    }

    fn text(&self) -> String {
        fill(self.text)
    }

    /// The paths a refusal line may give the program.
    fn program_names(&self) -> Vec<String> {
        let first = self
            .rule
            .split_whitespace()
            .next()
            .expect("a rule has a word");
        let mut names = vec![program(first).display().to_string()];
        names.extend(self.also_named.iter().map(|name| fill(name)));
        names
    }
}

fn fill(text: &str) -> String {
    text.replace("{rm}", &program("rm").display().to_string())
}

// ---------------------------------------------------------------------------------------
// Running an attack.

/// The attack works without the rule: the same command, level, user and shell destroy
/// the target. Without this, a protected run that leaves the target proves nothing.
pub fn control(attack: &Attack, run: Run) {
    let tried = attempt(attack, run, false);
    assert!(
        tried.destroyed,
        "CONTROL: without the deny rule the attack did not destroy its target, so the \
         protected run cannot show anything (fix the attack)\n{}",
        tried.explain(attack, run, false)
    );
}

/// With the deny rule, the target survives, and the refusal is seen where it should be.
pub fn protected(attack: &Attack, run: Run) {
    let tried = attempt(attack, run, true);
    let explain = || tried.explain(attack, run, true);
    assert!(
        !tried.destroyed,
        "BYPASS: with the deny rule the attack still destroyed its target (until the exec \
         check of issue 22 is in, only the text scanner stands in the way)\n{}",
        explain()
    );
    let scanner_refused = tried.outcome.code() == Some(REFUSED)
        && tried.outcome.stderr().starts_with("gate: refused `");
    match attack.stop {
        Stop::Survival => {}
        Stop::Either if scanner_refused => {
            assert_refused_by_the_scanner(&tried, attack, &explain);
        }
        Stop::Exec if scanner_refused => panic!(
            "the text scanner refused this, which it cannot read: if it now does, make the \
             attack `either()`\n{}",
            explain()
        ),
        Stop::Exec | Stop::Either => assert_refused_at_exec(&tried, attack, &explain),
    }
}

#[track_caller]
fn assert_refused_by_the_scanner(tried: &Tried, attack: &Attack, explain: &dyn Fn() -> String) {
    tried.outcome.assert_refused();
    let records = audit_records(&tried.env.default_audit_log());
    assert!(
        records.iter().any(|r| r["decision"] == "deny"
            && r["decided_by"] == "deny-rule"
            && r["rule"] == attack.rule),
        "the scanner's refusal has no audit record by `deny-rule` for `{}`\n{}",
        attack.rule,
        explain()
    );
}

#[track_caller]
fn assert_refused_at_exec(tried: &Tried, attack: &Attack, explain: &dyn Fn() -> String) {
    let stderr = tried.outcome.stderr();
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|line| line.starts_with("gate: refused to run "))
        .collect();
    assert!(
        !lines.is_empty(),
        "no `gate: refused to run` line on stderr: the exec check did not refuse the \
         denied program\n{}",
        explain()
    );
    let rule = format!("`{}`", attack.rule);
    assert!(
        lines.iter().all(|line| line.contains(&rule)),
        "a refusal line does not name the rule {rule}\n{}",
        explain()
    );
    let names = attack.program_names();
    assert!(
        lines
            .iter()
            .any(|line| names.iter().any(|name| line.contains(name.as_str()))),
        "no refusal line names the program ({})\n{}",
        names.join(" or "),
        explain()
    );
    let records = audit_records(&tried.env.default_audit_log());
    let by_exec = records
        .iter()
        .filter(|r| r["decided_by"] == "exec")
        .collect::<Vec<_>>();
    assert!(
        by_exec.iter().any(|r| r["decision"] == "deny"
            && r["rule"] == attack.rule
            && r["program"].as_str().is_some_and(|p| !p.is_empty())
            && r["argv"]
                .as_array()
                .is_some_and(|argv| !argv.is_empty() && argv.iter().all(|a| a.is_string()))),
        "the audit log has no record `\"decision\":\"deny\",\"decided_by\":\"exec\"` with \
         the rule, the program and its argv\n{}",
        explain()
    );
}

/// One run of an attack, finished.
struct Tried {
    env: TestEnv,
    text: String,
    outcome: Outcome,
    destroyed: bool,
}

impl Tried {
    fn explain(&self, attack: &Attack, run: Run, with_rule: bool) -> String {
        let rule = if with_rule {
            format!("--deny '{}'", attack.rule)
        } else {
            "no deny rule".to_owned()
        };
        let audit = fs::read_to_string(self.env.default_audit_log())
            .unwrap_or_else(|e| format!("(cannot read it: {e})"));
        let work = fs::read_dir(&self.env.work)
            .map(|entries| {
                let mut names: Vec<String> = entries
                    .flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                names.join(" ")
            })
            .unwrap_or_default();
        format!(
            "  attack: {:?}\n  {}, {rule}\n  target destroyed: {}\n  {}\n  working \
             directory: {work}\n  audit log:\n{audit}",
            self.text,
            run.describe(),
            self.destroyed,
            self.outcome.report(),
        )
    }
}

fn attempt(attack: &Attack, run: Run, with_rule: bool) -> Tried {
    for name in attack.needs {
        program(name);
    }
    let env = TestEnv::new_in("/var/tmp");
    let text = attack.text();
    let forced = prepare(&env, attack.setup, run.user);
    let rule = with_rule.then_some(attack.rule);
    let outcome = gate_for(&env, run, rule, &text).run();
    if let Some(file) = attack.done_when {
        wait_for(&env.file(file));
    }
    let destroyed = match attack.target {
        Target::Victim => !env.file("victim").exists(),
        Target::Dir => !env.file("d").exists(),
        Target::RemoteRef => {
            let forced = forced.expect("the remote fixture records the forced commit");
            remote_main(&env) == forced
        }
    };
    Tried {
        env,
        text,
        outcome,
        destroyed,
    }
}

/// gate, set up to run `text` in `run`'s way, with `rule` as the deny rule if any.
///
/// At `ask` the text must match an allow rule: a text an allow rule can match (no shell
/// character) gets its first word as the rule; any other is written to the script
/// `attack.sh`, which gate then runs under the allow rule `./attack.sh` (gate judges a
/// script by its name; its contents are the shell's).
pub fn gate_for(env: &TestEnv, run: Run, rule: Option<&str>, text: &str) -> Gate {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let marker = format!(
        "{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    );
    let mut gate = env
        .gate()
        .user(run.user)
        .env("PATH", PATH)
        .env(MARKER, marker)
        .args(["--no-config", "--no-tty", "--level", run.level.name()]);
    if run.shell == Shell::Bash {
        gate = gate.arg("--shell").arg(program("bash"));
    }
    if let Some(rule) = rule {
        gate = gate.arg("--deny").arg(rule);
    }
    match run.level {
        Level::Ask if allow_rules_can_match(text) => {
            let first = text.split(' ').next().unwrap_or_default();
            gate.arg("--allow").arg(first).arg("-c").arg(text)
        }
        Level::Ask => {
            let script = env.file("attack.sh");
            fs::write(&script, format!("{text}\n")).unwrap();
            give(&script, run.user);
            gate.args(["--allow", "./attack.sh", "./attack.sh"])
        }
        Level::Safe | Level::Full => gate.arg("-c").arg(text),
    }
}

/// docs/rules.md: no shell character and no control character.
fn allow_rules_can_match(text: &str) -> bool {
    !text
        .chars()
        .any(|c| ";&|<>$`(){}\\".contains(c) || c.is_control())
}

// ---------------------------------------------------------------------------------------
// Fixtures.

/// Make the victim and `fixtures` in the working directory, owned by `user`. Returns the
/// commit a forced push would put in `origin.git`, for [`Fixture::Remote`].
fn prepare(env: &TestEnv, fixtures: &[Fixture], user: User) -> Option<String> {
    let file = |name: &str, text: &str| fs::write(env.file(name), text).unwrap();
    file("victim", "precious\n");
    let mut forced = None;
    for fixture in fixtures {
        match fixture {
            Fixture::Dir => {
                fs::create_dir_all(env.file("d/sub")).unwrap();
                file("d/f", "precious\n");
                file("d/sub/g", "precious\n");
            }
            Fixture::Script | Fixture::CommandLine => {
                let name = if *fixture == Fixture::Script {
                    "script.txt"
                } else {
                    "cmdline"
                };
                file(name, "rm victim\n");
            }
            Fixture::List => file("list", "victim\n"),
            Fixture::Makefile => file("Makefile", "all:\n\trm victim\n"),
            Fixture::Remote => forced = Some(make_remote(env)),
        }
    }
    give_tree(&env.work, user);
    forced
}

/// A repository in the working directory and a bare `origin.git` beside it that holds a
/// commit the repository has since amended: only a forced push moves it.
fn make_remote(env: &TestEnv) -> String {
    let git = |args: &[&str]| {
        let out = Command::new(program("git"))
            .args([
                "-c",
                "user.name=gate",
                "-c",
                "user.email=gate@example.invalid",
            ])
            .args(args)
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", &env.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("LC_ALL", "C")
            .current_dir(&env.work)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run git {args:?}: {e}"));
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    git(&["init", "-q", "-b", "main", "."]);
    git(&["commit", "-q", "--allow-empty", "-m", "published"]);
    git(&["init", "-q", "--bare", "-b", "main", "origin.git"]);
    // No `git maintenance --detach` left running after the push.
    git(&["-C", "origin.git", "config", "receive.autogc", "false"]);
    git(&["remote", "add", "origin", "./origin.git"]);
    git(&["push", "-q", "origin", "main"]);
    git(&[
        "commit",
        "-q",
        "--allow-empty",
        "--amend",
        "-m",
        "rewritten",
    ]);
    let forced = git(&["rev-parse", "HEAD"]);
    assert_ne!(remote_main(env), forced, "the fixture needs a force push");
    forced
}

/// The commit `origin.git`'s `main` names (read from its files: as root, git would
/// refuse a repository uid 65534 owns).
fn remote_main(env: &TestEnv) -> String {
    let bare = env.file("origin.git");
    if let Ok(text) = fs::read_to_string(bare.join("refs/heads/main")) {
        return text.trim().to_owned();
    }
    let packed = fs::read_to_string(bare.join("packed-refs")).unwrap_or_default();
    packed
        .lines()
        .find_map(|line| line.strip_suffix(" refs/heads/main"))
        .unwrap_or_else(|| panic!("origin.git has no main:\n{packed}"))
        .to_owned()
}

/// Give `path` to `user` (when the tests run as root and the user is uid 65534).
pub fn give(path: &Path, user: User) {
    if user == User::Unprivileged && running_as_root() {
        std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY)).unwrap();
    }
}

fn give_tree(dir: &Path, user: User) {
    give(dir, user);
    for entry in fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if entry.file_type().unwrap().is_dir() {
            give_tree(&path, user);
        } else {
            give(&path, user);
        }
    }
}
