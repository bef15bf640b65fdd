//! An allowed command runs exactly the command: no start-up file the model could have
//! written (`~/.bashrc`, `~/.profile`, `~/.zshenv`, the file `BASH_ENV` or `ENV` names …)
//! runs before it, in any form the agents start their shell with.
//!
//! The home directory holds a planted file of every name bash, dash and zsh read; each
//! appends its own name to `rc-ran` in the working directory (writable at every level,
//! the sandbox's included: the command writes its own marker there too). For each form:
//!
//! - the control: the real shell, started directly the same way, as the same user,
//!   does run the planted files this form reads (the table says which; a form that reads
//!   none says so, so that it is not a test that passes for want of a planted file);
//! - through gate (a shim, and `gate --shell SHELL`), at `ask` with an allow rule, at
//!   `full` and at `safe`: none runs, the command does, with its own `$0`, `$1` and exit
//!   status;
//! - under strace: the real shell gate starts opens no file under `HOME` before it runs
//!   the command (`cat`), while the real shell started directly does.

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::*;

/// Every start-up file of the user's that bash, dash or zsh reads, by its name in HOME.
const PLANTED: &[&str] = &[
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".bash_logout",
    ".zshenv",
    ".zprofile",
    ".zshrc",
    ".zlogin",
    ".zlogout",
];

/// The file `BASH_ENV` and `ENV` name, in HOME.
const PLANTED_ENV: &str = "planted-env";

/// Where the planted files write their names, in the working directory.
const RAN: &str = "rc-ran";

/// How the stdin and environment of a form differ from the plain run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Setting {
    Plain,
    /// stdin a Unix socket, as Claude Code and Gemini CLI (Node) start their shells.
    SocketStdin,
    /// `SSH_CLIENT` set, as for a command run over ssh.
    SshClient,
}

/// One way an agent starts its shell.
struct Form {
    shell: &'static str,
    /// The options before the command text.
    options: &'static [&'static str],
    setting: Setting,
    /// What the real shell reads, started directly this way, running [`probe`] (which
    /// ends with `exit`, after which a login bash also reads `~/.bash_logout`):
    /// measured, bash 5.2, dash 0.5.12 and zsh 5.9 on Debian 12.
    reads: &'static [&'static str],
}

const FORMS: &[Form] = &[
    Form {
        shell: "bash",
        options: &["-c"],
        setting: Setting::SocketStdin,
        // Instead of BASH_ENV, not as well.
        reads: &[".bashrc"],
    },
    Form {
        shell: "bash",
        options: &["-c"],
        setting: Setting::SshClient,
        reads: &[".bashrc"],
    },
    Form {
        shell: "bash",
        options: &["-c"],
        setting: Setting::Plain,
        reads: &[PLANTED_ENV],
    },
    Form {
        shell: "bash",
        options: &["-i", "-c"],
        setting: Setting::Plain,
        reads: &[".bashrc"],
    },
    Form {
        shell: "bash",
        options: &["-lc"],
        setting: Setting::Plain,
        reads: &[".bash_profile", PLANTED_ENV, ".bash_logout"],
    },
    Form {
        shell: "bash",
        options: &["-l", "-c"],
        setting: Setting::Plain,
        reads: &[".bash_profile", PLANTED_ENV, ".bash_logout"],
    },
    Form {
        shell: "bash",
        options: &["--login", "-c"],
        setting: Setting::Plain,
        reads: &[".bash_profile", PLANTED_ENV, ".bash_logout"],
    },
    // Claude Code's start-up call puts `-l` after `-c`.
    Form {
        shell: "bash",
        options: &["-c", "-l"],
        setting: Setting::SocketStdin,
        reads: &[".bash_profile", PLANTED_ENV, ".bash_logout"],
    },
    Form {
        shell: "zsh",
        options: &["-c"],
        setting: Setting::SocketStdin,
        reads: &[".zshenv"],
    },
    Form {
        shell: "zsh",
        options: &["-lc"],
        setting: Setting::Plain,
        reads: &[".zshenv", ".zprofile", ".zlogin"],
    },
    Form {
        shell: "zsh",
        options: &["-i", "-c"],
        setting: Setting::Plain,
        reads: &[".zshenv", ".zshrc"],
    },
    Form {
        shell: "sh",
        options: &["-c"],
        setting: Setting::SocketStdin,
        reads: &[],
    },
    Form {
        shell: "sh",
        options: &["-lc"],
        setting: Setting::Plain,
        reads: &[".profile"],
    },
    Form {
        shell: "sh",
        options: &["-i", "-c"],
        setting: Setting::Plain,
        reads: &[PLANTED_ENV],
    },
];

impl Form {
    fn describe(&self) -> String {
        format!(
            "{} {} ({:?})",
            self.shell,
            self.options.join(" "),
            self.setting
        )
    }
}

/// How gate is started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    /// A shim named after the shell, with the settings in the user file.
    Shim,
    /// `gate --shell SHELL` with the settings as options.
    GateShell,
}

const ENTRIES: [Entry; 2] = [Entry::Shim, Entry::GateShell];

/// The level, and how the command is allowed at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    /// `ask`, with an allow rule for [`ALLOWED`].
    Ask,
    Full,
    Safe,
}

/// The command at `ask`: it must match an allow rule, so it has no shell syntax.
const ALLOWED: &str = "touch cmd-ran";

/// The command at `full` and `safe`: it writes `$0` and `$1` and exits with 7.
fn probe() -> &'static str {
    "printf '[%s][%s]' \"$0\" \"$1\" > cmd-ran; exit 7"
}

/// A test environment with every start-up file planted in HOME, and the shims `user`
/// can run in `shims/`.
fn planted_env(user: User) -> TestEnv {
    let env = TestEnv::new();
    shim_dir_for(&env, &["bash", "sh", "zsh"], user);
    for name in PLANTED.iter().chain([&PLANTED_ENV]) {
        let file = env.home.join(name);
        fs::write(
            &file,
            format!("echo {name} >> '{}'\n", env.file(RAN).display()),
        )
        .unwrap();
    }
    env
}

/// A gate (or a shell: `program`) with the form's stdin and environment, and `BASH_ENV`
/// and `ENV` naming the planted file.
fn started(env: &TestEnv, user: User, form: &Form, program: Option<&Path>) -> Gate {
    let mut gate = env
        .gate()
        .user(user)
        .env("BASH_ENV", env.home.join(PLANTED_ENV))
        .env("ENV", env.home.join(PLANTED_ENV));
    if let Some(program) = program {
        gate = gate.program(program);
    }
    match form.setting {
        Setting::Plain => gate,
        Setting::SocketStdin => gate.stdin_socket(),
        Setting::SshClient => gate.env("SSH_CLIENT", "192.0.2.1 50000 22"),
    }
}

/// What the planted files wrote, sorted, and the marker taken away for the next run.
fn planted_that_ran(env: &TestEnv) -> Vec<String> {
    let path = env.file(RAN);
    let text = fs::read_to_string(&path).unwrap_or_default();
    let _ = fs::remove_file(&path);
    let mut names: Vec<String> = text.lines().map(str::to_owned).collect();
    names.sort();
    names
}

fn sorted(names: &[&str]) -> Vec<String> {
    let mut names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    names.sort();
    names
}

/// The real shell gate's shim would run for `name`.
fn real(name: &str) -> PathBuf {
    require_program(name)
}

/// Run `command` with NAME `name` and ARG `arg` in `form` through gate.
fn through_gate(
    env: &TestEnv,
    user: User,
    form: &Form,
    entry: Entry,
    level: Level,
    command: &str,
) -> Outcome {
    let level_name = match level {
        Level::Ask => "ask",
        Level::Full => "full",
        Level::Safe => "safe",
    };
    let gate = match entry {
        Entry::Shim => {
            env.write_user_config(&format!(
                "level = \"{level_name}\"\nallow = [\"{ALLOWED}\"]\n\n[approval]\ntty = false\n\n\
                 [audit]\nlog = \"off\"\n"
            ));
            let shim = env.root.join("shims").join(form.shell);
            started(env, user, form, Some(&shim))
        }
        Entry::GateShell => started(env, user, form, None)
            .args(["--no-config", "--audit-log", "off", "--no-tty"])
            .args(["--level", level_name, "--allow", ALLOWED, "--shell"])
            .arg(real(form.shell)),
    };
    gate.args(form.options).args([command, "name", "arg"]).run()
}

/// The control for a form: the real shell, started directly the same way.
fn control(env: &TestEnv, user: User, form: &Form) -> Vec<String> {
    let _ = fs::remove_file(env.file("cmd-ran"));
    let out = started(env, user, form, Some(&real(form.shell)))
        .args(form.options)
        .args([probe(), "name", "arg"])
        .run();
    out.assert_code(7);
    let ran = planted_that_ran(env);
    assert_eq!(
        ran,
        sorted(form.reads),
        "control: {} started directly reads other start-up files than this test \
         expects\n{}",
        form.describe(),
        out.report()
    );
    ran
}

for_each_user! {
    /// The controls: started directly, each form reads the files its row names.
    fn the_real_shells_read_the_planted_files_in_these_forms(user) {
        let env = planted_env(user);
        for form in FORMS {
            control(&env, user, form);
        }
    }
}

/// Every form, both entries: the command runs as asked, and no planted file before it.
fn assert_no_planted_file_runs(user: User, level: Level) {
    let env = planted_env(user);
    env.assert_side_effects_are_visible(user);
    for form in FORMS {
        for entry in ENTRIES {
            let what = format!("{} through {entry:?} at {level:?}", form.describe());
            let marker = env.file("cmd-ran");
            let _ = fs::remove_file(&marker);
            let out = match level {
                Level::Ask => {
                    let out = through_gate(&env, user, form, entry, level, ALLOWED);
                    out.assert_code(0);
                    assert!(
                        marker.exists(),
                        "{what}: the command did not run\n{}",
                        out.report()
                    );
                    out
                }
                Level::Full | Level::Safe => {
                    let out = through_gate(&env, user, form, entry, level, probe());
                    out.assert_code(7);
                    assert_eq!(
                        fs::read_to_string(&marker).unwrap_or_default(),
                        "[name][arg]",
                        "{what}: $0 and $1 are not the caller's\n{}",
                        out.report()
                    );
                    out
                }
            };
            assert_eq!(
                planted_that_ran(&env),
                Vec::<String>::new(),
                "{what}: planted start-up files ran\n{}",
                out.report()
            );
        }
    }
    // The same environment still makes the real shells read them: the files are there.
    for form in FORMS {
        control(&env, user, form);
    }
}

for_each_user! {
    fn no_planted_file_runs_before_an_allowed_command_at_ask(user) {
        assert_no_planted_file_runs(user, Level::Ask);
    }

    fn no_planted_file_runs_before_a_command_at_full(user) {
        assert_no_planted_file_runs(user, Level::Full);
    }

    fn no_planted_file_runs_before_a_command_at_safe(user) {
        assert_no_planted_file_runs(user, Level::Safe);
    }
}

/// The files under `home` that the shell opened after it started and before it ran
/// `cat`, from an strace log of the run: `exec` is the number of the shell's execve
/// (counting from 1, the first program strace ran).
fn home_opens_before_cat(log: &str, home: &Path, exec: usize) -> Vec<String> {
    let home = home.display().to_string();
    let mut execs = 0;
    let mut opens = Vec::new();
    for line in log.lines() {
        if line.contains("execve(") && line.contains(" = 0") {
            execs += 1;
            if execs > exec && line.contains("/cat\"") {
                return opens;
            }
            continue;
        }
        if execs >= exec && line.contains("open") && line.contains(&home) {
            opens.push(line.to_owned());
        }
    }
    panic!("the trace has no execve of cat after the shell's:\n{log}");
}

/// Run `program` with `args` under strace in the form's setting; the trace.
fn traced(env: &TestEnv, user: User, form: &Form, program: &Path, args: &[&str]) -> String {
    let log = env.file("strace.log");
    let _ = fs::remove_file(&log);
    let out = started(env, user, form, Some(&require_program("strace")))
        .args(["-f", "-qq", "-e", "trace=openat,open,execve", "-o"])
        .arg(&log)
        .arg(program)
        .args(args)
        .run();
    out.assert_code(0);
    let _ = planted_that_ran(env);
    fs::read_to_string(&log).unwrap_or_else(|e| panic!("no strace log: {e}\n{}", out.report()))
}

for_each_user! {
    /// The differential check: the real shell gate starts opens nothing under HOME
    /// before the command; started directly, it opens what it reads.
    fn the_shell_gate_starts_opens_nothing_in_home_before_the_command(user) {
        let env = planted_env(user);
        env.write_user_config("level = \"full\"\n\n[audit]\nlog = \"off\"\n");
        let shims = env.root.join("shims");
        let gate = gate_binary_for(user);
        for form in FORMS {
            let mut args: Vec<&str> = form.options.to_vec();
            args.push("cat /dev/null");
            let direct = traced(&env, user, form, &real(form.shell), &args);
            let opened = home_opens_before_cat(&direct, &env.home, 1);
            assert_eq!(
                opened.is_empty(),
                form.reads.is_empty(),
                "control: {} started directly opened {opened:#?}",
                form.describe()
            );

            let shim = shims.join(form.shell);
            let log = traced(&env, user, form, &shim, &args);
            let opened = home_opens_before_cat(&log, &env.home, 2);
            assert!(opened.is_empty(), "{} through the shim: {opened:#?}", form.describe());

            let shell = real(form.shell).display().to_string();
            let mut gate_args = vec!["--no-config", "--audit-log", "off", "--level", "full"];
            gate_args.extend(["--shell", &shell]);
            gate_args.extend(&args);
            let log = traced(&env, user, form, &gate, &gate_args);
            let opened = home_opens_before_cat(&log, &env.home, 2);
            assert!(opened.is_empty(), "{} through gate --shell: {opened:#?}", form.describe());
        }
    }
}

for_each_user! {
    /// A session has no command to protect: its start-up files run as the shell's own.
    fn a_session_at_full_still_reads_the_start_up_files(user) {
        let env = planted_env(user);
        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full"])
            .args(["--shell"])
            .arg(real("bash"))
            .args(["--login", "-s"])
            .stdin("true\n")
            .run();
        out.assert_code(0);
        assert_eq!(planted_that_ran(&env), sorted(&[".bash_profile"]), "{}", out.report());
    }
}

for_each_user! {
    /// A shell gate has not measured (here a copy of dash called ksh, which gate takes
    /// for ksh, whose interactive form reads ~/.kshrc) is not started as an interactive
    /// shell: gate says why and runs nothing. Its plain `-c` and `-lc` forms run, as a
    /// non-login shell.
    fn an_unknown_shell_is_never_started_interactive(user) {
        let env = planted_env(user);
        let ksh = env.root.join("ksh");
        fs::copy(real("dash"), &ksh).unwrap();
        let gate = |options: &[&str]| {
            env.gate()
                .user(user)
                .args(["--no-config", "--audit-log", "off", "--level", "full", "--shell"])
                .arg(&ksh)
                .args(options)
                .arg("touch cmd-ran")
                .run()
        };
        let out = gate(&["-i", "-c"]);
        out.assert_gate_error()
            .assert_stderr_contains("gate: ksh cannot be started as an interactive shell (-i)");
        assert_absent(&env.file("cmd-ran"), &out);
        assert_eq!(out.stderr().lines().count(), 1, "{}", out.report());
        let out = gate(&["-lc"]);
        out.assert_code(0);
        assert!(env.file("cmd-ran").exists(), "{}", out.report());
        assert_eq!(planted_that_ran(&env), Vec::<String>::new(), "{}", out.report());
    }
}

for_each_user! {
    /// fish reads its config.fish for every `fish -c`; gate starts it with
    /// `--no-config`. (gate installs no fish shim; this is `gate --shell fish`.)
    fn fish_runs_the_command_without_its_config(user) {
        let env = planted_env(user);
        let config = env.config.join("fish/config.fish");
        fs::create_dir_all(config.parent().unwrap()).unwrap();
        fs::write(&config, format!("echo config.fish >> '{}'\n", env.file(RAN).display()))
            .unwrap();
        let fish = real("fish");
        let control = env.gate().user(user).program(&fish).args(["-l", "-c", "touch cmd-ran"]).run();
        control.assert_code(0);
        assert_eq!(planted_that_ran(&env), sorted(&["config.fish"]), "control\n{}", control.report());
        fs::remove_file(env.file("cmd-ran")).unwrap();
        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full", "--shell"])
            .arg(&fish)
            .args(["-l", "-c", "touch cmd-ran"])
            .run();
        out.assert_code(0);
        assert!(env.file("cmd-ran").exists(), "{}", out.report());
        assert_eq!(planted_that_ran(&env), Vec::<String>::new(), "{}", out.report());
    }
}
