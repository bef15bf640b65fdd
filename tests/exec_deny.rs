//! Deny rules enforced at exec (issue 22), black-box: the model's side of it.
//!
//! Each attack gets a denied program run where gate's text scanner does not see it: text
//! handed to a shell on standard input, commands stored for later, files written and then
//! run, shells and programs that run commands, other spellings of a rule's options, the
//! program under another name, and texts that dash reads otherwise than bash. Run through
//! the real binary with the deny rule, the attack must leave its target (a file `victim`,
//! a directory `d`, a remote branch) in place; where the scanner cannot see the program,
//! stderr must hold the exec check's `gate: refused to run …` line naming the rule and the
//! program, and the audit log a `deny` record by `exec`. Each has a **control**: the same
//! command, level, user and shell without the rule destroys the target, which shows that
//! the attack works and the protected run can fail.
//!
//! Every attack runs at `ask`, `safe` and `full`; as the current user (root in CI) and as
//! uid 65534; with gate's default shell `/bin/sh` (dash) and with `--shell bash` (texts
//! only one of them reads as an attack run under that one). At `ask` a text an allow rule
//! can match runs under its first word as the rule (`--allow rm`, `--allow git`); any
//! other text is a script run under its own name (`--allow ./attack.sh ./attack.sh`),
//! which is all gate judges of a script. The generated tests are named
//! `ATTACK::at_LEVEL::as_USER::under_SHELL::{control_runs_without_the_rule,
//! stopped_by_the_rule}`: `cargo test --test all control_runs_without` runs the controls.
//!
//! Beside the matrix: the exec check fails closed when its supervisor dies, checks what
//! outlives the shell, and without deny rules changes nothing (no filter, no extra
//! process); with them, the command keeps gate's pid, exit status and signals.
//!
//! Until the exec check is in, every `stopped_by_the_rule` whose attack the scanner
//! misses fails with `BYPASS`, and so do the tests that look for the supervisor.

use crate::common;
#[path = "exec_deny/processes.rs"]
mod processes;
#[path = "exec_deny/support.rs"]
mod support;

use std::fs;

use common::*;
use processes::*;
use support::*;

/// Write the matrix of an attack: every level, user and the shells listed, each with its
/// control and its protected run.
macro_rules! attacks {
    (@levels $shells:tt; $($level:ident)+) => {$(
        mod $level {
            use super::*;
            attacks!(@users $shells; as_current_user as_unprivileged_user);
        }
    )+};
    (@users $shells:tt; $($user:ident)+) => {$(
        mod $user {
            use super::*;
            attacks!(@shells $shells);
        }
    )+};
    (@shells [$($shell:ident),+]) => {$(
        mod $shell {
            use super::*;

            #[test]
            fn control_runs_without_the_rule() {
                control(&attack(), Run::here(module_path!()))
            }

            #[test]
            fn stopped_by_the_rule() {
                protected(&attack(), Run::here(module_path!()))
            }
        }
    )+};
    ($($(#[$doc:meta])* $name:ident: $attack:expr, $shells:tt;)*) => {$(
        $(#[$doc])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn attack() -> Attack {
                $attack
            }

            attacks!(@levels $shells; at_ask at_safe at_full);
        }
    )*};
}

const DIR: &[Fixture] = &[Fixture::Dir];
const REMOTE: &[Fixture] = &[Fixture::Remote];

/// `rm -rf` against a directory, in another spelling.
const fn rm_rf(text: &'static str) -> Attack {
    Attack::new(text, "rm -rf").setup(DIR).target(Target::Dir)
}

/// A forced push, in another spelling of `git push --force`.
const fn force_push(text: &'static str) -> Attack {
    Attack::new(text, "git push --force")
        .setup(REMOTE)
        .target(Target::RemoteRef)
        .needs(&["git"])
}

// ---------------------------------------------------------------------------------------
// Text handed to a shell on standard input.

attacks! {
    /// bash reads the command from a pipe.
    printf_piped_into_bash: Attack::new("printf 'rm victim' | bash", "rm"),
        [under_dash, under_bash];
    /// sh reads a file on standard input.
    sh_reads_a_file_on_standard_input:
        Attack::new("sh < script.txt", "rm").setup(&[Fixture::Script]),
        [under_dash, under_bash];
    /// A here-string (bash's own syntax: dash has no `<<<`).
    bash_reads_a_here_string: Attack::new("bash <<< 'rm victim'", "rm"), [under_bash];
}

// ---------------------------------------------------------------------------------------
// Commands stored for later.

attacks! {
    /// The shell runs the trap's text when it exits.
    a_trap_runs_at_exit: Attack::new("trap 'rm victim' EXIT", "rm"), [under_dash, under_bash];
    /// An alias defined on one line is used on the next (dash expands aliases in `-c`
    /// strings; bash once `expand_aliases` is on).
    an_alias_defined_then_used: Attack::new(
        "shopt -s expand_aliases 2>/dev/null\nalias r=rm\nr victim",
        "rm",
    ), [under_dash, under_bash];
}

// ---------------------------------------------------------------------------------------
// Files written, then run.

attacks! {
    a_script_written_then_run:
        Attack::new("echo 'rm victim' > x.sh; sh x.sh", "rm"), [under_dash, under_bash];
    a_script_written_then_sourced:
        Attack::new("echo 'rm victim' > x.sh; . ./x.sh", "rm"), [under_dash, under_bash];
}

// ---------------------------------------------------------------------------------------
// Shells missing from gate's tables, and programs that run commands.

attacks! {
    /// rbash is bash under another name: the scanner's table of shells has it, so the
    /// text stage may stop it first.
    rbash_dash_c: Attack::new("rbash -c 'rm victim'", "rm").needs(&["rbash"]).either(),
        [under_dash, under_bash];
    /// A shell under a name no table has: only the exec check sees what it runs.
    a_shell_under_another_name: Attack::new("cp /usr/bin/bash mysh; ./mysh -c 'rm victim'", "rm"),
        [under_dash, under_bash];
    /// The Makefile's recipe.
    make_runs_its_recipe: Attack::new("make", "rm")
        .setup(&[Fixture::Makefile])
        .needs(&["make"]), [under_dash, under_bash];
    /// A `!` alias is a shell command git runs.
    a_git_alias_runs_a_shell_command:
        Attack::new("git -c alias.x='!rm victim' x", "rm").needs(&["git"]),
        [under_dash, under_bash];
    /// The scanner reads xargs as a wrapper, so it may refuse this itself.
    xargs_runs_the_program_with_the_list:
        Attack::new("xargs rm < list", "rm").setup(&[Fixture::List]).either(),
        [under_dash, under_bash];
    /// The program's name comes from the file too: the scanner sees `xargs env`.
    xargs_reads_the_program_from_a_file:
        Attack::new("xargs env < cmdline", "rm").setup(&[Fixture::CommandLine]),
        [under_dash, under_bash];
    python_os_system: Attack::new(
        r#"python3 -c 'import os; os.system("rm victim")'"#,
        "rm",
    ).needs(&["python3"]), [under_dash, under_bash];
    /// Python walks PATH itself and execs `rm` with no shell.
    python_subprocess: Attack::new(
        r#"python3 -c 'import subprocess; subprocess.run(["rm", "victim"])'"#,
        "rm",
    ).needs(&["python3"]), [under_dash, under_bash];
    perl_system: Attack::new(r#"perl -e 'system("rm victim")'"#, "rm").needs(&["perl"]),
        [under_dash, under_bash];
    node_child_process: Attack::new(
        r#"node -e 'require("child_process").execFileSync("rm", ["victim"], {stdio: "inherit"})'"#,
        "rm",
    ).needs(&["node"]), [under_dash, under_bash];
}

// ---------------------------------------------------------------------------------------
// Other spellings of a rule's options. The scanner is to read them too (issue 22, item 4),
// so the first group may be refused before anything runs; the second hides each in a
// script, where only the exec check can see it.

attacks! {
    rm_fr: rm_rf("rm -fr d").either(), [under_dash, under_bash];
    rm_r_f: rm_rf("rm -r -f d").either(), [under_dash, under_bash];
    rm_capital_r_f: rm_rf("rm -Rf d").either(), [under_dash, under_bash];
    rm_recursive_force: rm_rf("rm --recursive --force d").either(), [under_dash, under_bash];
    rm_options_after_the_operand: rm_rf("rm d -rf").either(), [under_dash, under_bash];
    git_push_f: force_push("git push -q -f origin main").either(), [under_dash, under_bash];

    rm_fr_in_a_script: rm_rf("echo 'rm -fr d' > x.sh; sh x.sh"), [under_dash, under_bash];
    rm_r_f_in_a_script: rm_rf("echo 'rm -r -f d' > x.sh; sh x.sh"), [under_dash, under_bash];
    rm_capital_r_f_in_a_script:
        rm_rf("echo 'rm -Rf d' > x.sh; sh x.sh"), [under_dash, under_bash];
    rm_recursive_force_in_a_script:
        rm_rf("echo 'rm --recursive --force d' > x.sh; sh x.sh"), [under_dash, under_bash];
    rm_options_after_the_operand_in_a_script:
        rm_rf("echo 'rm d -rf' > x.sh; sh x.sh"), [under_dash, under_bash];
    git_push_f_in_a_script:
        force_push("echo 'git push -q -f origin main' > x.sh; sh x.sh"),
        [under_dash, under_bash];
}

// ---------------------------------------------------------------------------------------
// The program under another name.

attacks! {
    /// The supervisor resolves the link: the program is `rm`.
    a_symlink_to_the_program:
        Attack::new("ln -s {rm} tool; ./tool victim", "rm").also_named(&["./tool"]),
        [under_dash, under_bash];
    /// bash's `exec -a` changes argv[0]; the path still ends in `rm`.
    exec_a_renames_argv0:
        Attack::new("echo 'exec -a foo rm victim' > x.sh; bash x.sh", "rm"),
        [under_dash, under_bash];
}

// ---------------------------------------------------------------------------------------
// Texts dash reads otherwise than bash. dash has no `$'…'`: there `$'\'` is `$` and the
// single-quoted `\`, so the next `'` opens a string where bash's ends one. And `&>` is
// bash's: dash runs what is before it in the background and redirects what follows. Each
// runs `rm victim` in dash and nothing in bash, so the attack is dash's.

attacks! {
    /// bash: one string up to the last quote. dash: `echo $\`, `rm victim`, a comment.
    dash_ends_the_quote_early: Attack::new(r"echo $'\' ; rm victim ; # '", "rm").either(),
        [under_dash];
    /// The same before an assignment: dash runs `rm victim` with `a` set.
    dash_ends_the_quote_in_an_assignment:
        Attack::new(r"a=$'\' rm victim # '", "rm").either(), [under_dash];
    /// The same as the word of a `case`.
    dash_ends_the_quote_in_a_case: Attack::new(
        r"case $'\' in *) rm victim ;; esac ; # '",
        "rm",
    ).either(), [under_dash];
    /// bash: `echo hi rm victim` with both outputs to `out`. dash: `echo hi &`, then
    /// `rm victim > out`.
    dash_reads_ampersand_greater_as_two_operators:
        Attack::new("echo hi &> out rm victim", "rm").either(), [under_dash];
}

// ---------------------------------------------------------------------------------------
// Nothing runs unchecked: an exec that replaces the shell, a process that outlives it, and
// a command that kills the supervisor before it tries.

attacks! {
    /// The shell gate started becomes `sh`, which becomes `rm`: one pid throughout.
    exec_replaces_the_shell:
        Attack::new("printf 'exec rm victim\\n' > x.sh; exec sh x.sh", "rm"),
        [under_dash, under_bash];
    /// `rm` runs after the shell that started it has exited: an orphan, nobody's child
    /// but init's. The command waits for it (a bounded while): at `safe` nothing outlives
    /// the command itself (tests/left_behind.rs).
    a_background_process_outlives_the_shell: Attack::new(
        r#"printf '(sleep 0.2; rm victim; echo "$?" > bg-done) &\n' > x.sh; sh x.sh; n=0; while [ ! -e bg-done ] && [ $n -lt 1000 ]; do sleep 0.01; n=$((n+1)); done"#,
        "rm",
    ).survival().done_when("bg-done"), [under_dash, under_bash];
    /// Kill the `gate` processes of the command's own process group, then run `rm`. At
    /// `safe` the sandbox keeps the signal from leaving it; elsewhere the kill may land,
    /// and then no exec succeeds.
    kill_the_supervisor_first: Attack::new(
        "pkill -KILL -x -g 0 gate; sh script.txt",
        "rm",
    ).setup(&[Fixture::Script]).needs(&["pkill"]).survival(), [under_dash, under_bash];
}

// ---------------------------------------------------------------------------------------
// The rest: one test per level and user.

/// Write a test per level and user: `NAME::at_LEVEL::as_USER::holds`.
macro_rules! at_each_level_as_each_user {
    (@levels $why:tt $($level:ident)+) => {$(
        mod $level {
            use super::*;
            at_each_level_as_each_user!(@users $why as_current_user as_unprivileged_user);
        }
    )+};
    (@users $why:tt $($user:ident)+) => {$(
        mod $user {
            use super::*;
            at_each_level_as_each_user!(@test $why);
        }
    )+};
    (@test [$($why:literal)?]) => {
        #[test]
        $(#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"] #[doc = $why])?
        fn holds() {
            let (level, user) = level_and_user(module_path!());
            $(needs_root($why);)?
            scenario(level, user)
        }
    };
    ($($(#[$doc:meta])* fn $name:ident($level:ident, $user:ident) $(needs root because $why:literal)? $body:block)*) => {$(
        $(#[$doc])*
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            fn scenario($level: Level, $user: User) $body

            at_each_level_as_each_user!(@levels [$($why)?] at_ask at_safe at_full);
        }
    )*};
}

/// A fresh tree in /var/tmp (the safe level hides secrets of the fake home, which must
/// not sit in /tmp: see `TestEnv::new_in`) with the file `victim`, owned by `user`.
fn env_with_victim(user: User) -> TestEnv {
    let env = TestEnv::new_in("/var/tmp");
    let victim = env.file("victim");
    fs::write(&victim, "precious\n").unwrap();
    if user == User::Unprivileged && running_as_root() {
        std::os::unix::fs::chown(&victim, Some(NOBODY), Some(NOBODY)).unwrap();
    }
    env
}

/// The command the fail-closed tests run: wait at the handshake, then `rm victim`, and
/// write its status to `after` (a builtin, so it works when exec does not).
fn rm_after_the_handshake() -> String {
    format!("{HANDSHAKE}; rm victim; echo \"$?\" > after")
}

fn dash(level: Level, user: User) -> Run {
    Run {
        level,
        user,
        shell: Shell::Dash,
    }
}

at_each_level_as_each_user! {
    /// Kill the supervisor from outside while the command waits, then let the command run
    /// `rm`, which no rule denies (the rule is `shred`): the exec fails, because the check
    /// fails closed. The victim survives and `rm`'s status is not 0.
    fn when_the_supervisor_dies_no_later_exec_succeeds(level, user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let env = env_with_victim(user);
        let gate = gate_for(&env, dash(level, user), Some("shred"), &rm_after_the_handshake());
        let mut paused = Paused::start(&env, gate, user);
        let found = helpers(paused.pid);
        if found.is_empty() {
            let processes = describe_run(paused.pid);
            let outcome = paused.release();
            panic!(
                "found no supervisor beside the command (a `gate` process of the run)\n  \
                 the run's processes:\n    {processes}\n{}",
                outcome.report()
            );
        }
        found.iter().for_each(kill_and_wait);
        let outcome = paused.release();
        // Killed along with its supervisor, the command writes no status: that fails
        // closed too.
        let after = fs::read_to_string(env.file("after")).unwrap_or_default();
        assert!(
            env.file("victim").exists() && after.trim() != "0",
            "after the supervisor was killed, `rm` still ran (status {after:?}): the exec \
             check must fail closed\n{}",
            outcome.report()
        );
    }

    /// The control: the same run, the supervisor left alone, removes the victim: `shred`
    /// does not deny `rm`, so only the killed supervisor stops it above.
    fn control_rm_runs_while_the_supervisor_lives(level, user) {
        let env = env_with_victim(user);
        let gate = gate_for(&env, dash(level, user), Some("shred"), &rm_after_the_handshake());
        let outcome = Paused::start(&env, gate, user).release();
        assert!(
            !env.file("victim").exists(),
            "CONTROL: `rm` did not run under a rule that does not deny it\n{}",
            outcome.report()
        );
    }

    /// With deny rules a supervisor runs beside the command, and it is gone once the
    /// command is.
    fn a_deny_rule_starts_a_supervisor_that_ends_with_the_command(level, user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let env = env_with_victim(user);
        let text = format!("{HANDSHAKE}; exit 3");
        let gate = gate_for(&env, dash(level, user), Some("rm"), &text);
        let mut paused = Paused::start(&env, gate, user);
        let marker = marker_of_command(paused.pid);
        let found = helpers(paused.pid);
        let processes = describe_run(paused.pid);
        let outcome = paused.release();
        assert!(
            !found.is_empty(),
            "found no supervisor beside the command\n  the run's processes:\n    \
             {processes}\n{}",
            outcome.report()
        );
        outcome.assert_code(3);
        let left = wait_until_no_helper(&marker);
        assert!(
            left.is_empty(),
            "the supervisor outlived the command: {}",
            list(&left)
        );
    }

    /// Without deny rules gate leaves no process beside the command at `ask` and `full`:
    /// it execs the command and is gone. At `safe` one supervisor runs beside it, to end
    /// what the command leaves behind, and it is gone once the command is.
    fn without_deny_rules_no_process_runs_beside_the_command(level, user) needs root because "only root may read the non-dumpable supervisor's /proc entries" {
        let env = env_with_victim(user);
        let text = format!("{HANDSHAKE}; exit 3");
        let gate = gate_for(&env, dash(level, user), None, &text);
        let mut paused = Paused::start(&env, gate, user);
        let marker = marker_of_command(paused.pid);
        let found = helpers(paused.pid);
        let processes = describe_run(paused.pid);
        let outcome = paused.release();
        let expected = if level == Level::Safe { 1 } else { 0 };
        assert!(
            found.len() == expected,
            "without deny rules gate left {} beside the command at {} (expected {expected})\n  \
             the run's processes:\n    {processes}\n{}",
            list(&found),
            level.name(),
            outcome.report()
        );
        outcome.assert_code(3);
        let left = wait_until_no_helper(&marker);
        assert!(left.is_empty(), "the supervisor outlived the command: {}", list(&left));
    }

    /// With a deny rule the command is still gate's process: the same pid, its own exit
    /// status, and its own death by a signal.
    fn with_a_deny_rule_the_command_keeps_gates_pid_status_and_signals(level, user) {
        let env = env_with_victim(user);
        let run = dash(level, user);
        let out = gate_for(&env, run, Some("rm"), "echo $$").run();
        out.assert_code(0).assert_stdout(&format!("{}\n", out.pid));
        gate_for(&env, run, Some("rm"), "exit 7").run().assert_code(7);
        let out = gate_for(&env, run, Some("rm"), "kill -TERM $$").run();
        assert_eq!(out.signal(), Some(libc::SIGTERM), "{}", out.report());
    }

    /// `gate -- sh x.sh`, no shell text at all: `x.sh` execs `rm`.
    fn a_program_run_without_a_shell_is_checked(level, user) {
        let (env, out) = program_form(level, user, Some("rm"));
        assert!(
            env.file("victim").exists(),
            "BYPASS: `gate -- sh x.sh` ran `rm`\n{}",
            out.report()
        );
        assert!(
            out.stderr().lines().any(|l| l.starts_with("gate: refused to run ")),
            "no `gate: refused to run` line\n{}",
            out.report()
        );
    }

    /// `gate -- ./tool victim`, `tool` a link to `rm`: gate's own exec, which gate judges
    /// itself (its filter lets that one call through without the supervisor), is refused
    /// as the supervisor refuses one: 126, one `refused to run` line, a record by `exec`.
    /// The control, without the rule, removes the victim through the link.
    fn gates_own_exec_of_a_denied_program_under_another_name_is_refused(level, user) {
        for rule in [None, Some("rm")] {
            let env = env_with_victim(user);
            std::os::unix::fs::symlink(program("rm"), env.file("tool")).unwrap();
            give(&env.file("tool"), user);
            let mut gate = env.gate().user(user).env("PATH", PATH).args([
                "--no-config",
                "--no-tty",
                "--level",
                level.name(),
                "--allow",
                "./tool",
            ]);
            if let Some(rule) = rule {
                gate = gate.arg("--deny").arg(rule);
            }
            let out = gate.args(["--", "./tool", "victim"]).run();
            if rule.is_none() {
                assert!(
                    !env.file("victim").exists(),
                    "CONTROL: the link did not remove the victim without the rule\n{}",
                    out.report()
                );
                continue;
            }
            assert!(env.file("victim").exists(), "BYPASS\n{}", out.report());
            if level == Level::Safe {
                // Inside the sandbox the supervisor judges gate's exec too (the sandbox's
                // filter has no place for gate's own call yet): gate then sees only that
                // its exec failed, and says so after the supervisor's line (125).
                assert!(
                    out.stderr().starts_with("gate: refused to run `./tool victim`"),
                    "{}",
                    out.report()
                );
                continue;
            }
            out.assert_code(126);
            let stderr = out.stderr();
            let lines: Vec<&str> = stderr.lines().collect();
            assert!(
                lines.len() == 1
                    && lines[0].starts_with("gate: refused to run `./tool victim`")
                    && lines[0].contains("the deny rule `rm`"),
                "one refusal line, naming the rule\n{}",
                out.report()
            );
            let records = audit_records(&env.default_audit_log());
            assert!(
                records
                    .iter()
                    .any(|r| r["decided_by"] == "exec" && r["rule"] == "rm"),
                "no record by `exec`\n{}",
                out.report()
            );
            assert!(
                !records.iter().any(|r| r["decided_by"] == "error"),
                "a refusal is not an error\n{}",
                out.report()
            );
        }
    }

    /// A script the command's user may execute but not read: the kernel reads its `#!`
    /// line itself and starts `rm`, without an exec the supervisor could see. The exec
    /// check refuses a file it may not read (as root at `full` the supervisor reads it
    /// anyway, and the rule refuses `rm`). The control, without the rule, removes the
    /// victim through it.
    fn an_executable_script_the_supervisor_may_not_read_is_refused(level, user) {
        for rule in [None, Some("rm")] {
            let env = env_with_victim(user);
            let script = env.file("t");
            fs::write(&script, format!("#!{}\n", program("rm").display())).unwrap();
            give(&script, user);
            fs::write(env.file("x.sh"), "./t victim\n").unwrap();
            give(&env.file("x.sh"), user);
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&script, fs::Permissions::from_mode(0o111)).unwrap();
            let mut gate = env.gate().user(user).env("PATH", PATH).args([
                "--no-config",
                "--no-tty",
                "--level",
                level.name(),
                "--allow",
                "sh",
            ]);
            if let Some(rule) = rule {
                gate = gate.arg("--deny").arg(rule);
            }
            let out = gate.args(["--", "sh", "x.sh"]).run();
            if rule.is_none() {
                assert!(
                    !env.file("victim").exists(),
                    "CONTROL: the unreadable script did not remove the victim\n{}",
                    out.report()
                );
                continue;
            }
            assert!(env.file("victim").exists(), "BYPASS\n{}", out.report());
            assert!(
                out.stderr().lines().any(|l| l.starts_with("gate: refused to run ")),
                "no `gate: refused to run` line\n{}",
                out.report()
            );
        }
    }

    /// A FIFO with execute permission, run: the kernel refuses it (not a regular file),
    /// and the supervisor, which looks at the file first, must neither wait for a writer
    /// nor stop checking: the next exec runs.
    fn a_fifo_run_as_a_program_does_not_stop_the_supervisor(level, user) {
        let env = env_with_victim(user);
        let text = "mkfifo f; chmod +x f; ./f; /bin/echo alive";
        let out = gate_for(&env, dash(level, user), Some("rm"), text).run();
        assert!(
            out.stdout().contains("alive"),
            "after a FIFO was run, the next exec did not run\n{}",
            out.report()
        );
    }

    /// `rm` on `PATH` a link to busybox (a symbolic one, then a second name of the same
    /// file): the deny rule on `rm` holds for `busybox rm`, and does not make busybox's
    /// other programs `rm`. The control: without the rule, `busybox rm` removes the
    /// victim.
    fn a_rule_on_a_program_linked_to_a_multi_call_binary_denies_only_that_program(
        level,
        user
    ) {
        for hard in [false, true] {
            for rule in [None, Some("rm")] {
                let env = env_with_victim(user);
                let bin = env.file("bin");
                fs::create_dir(&bin).unwrap();
                if hard {
                    fs::copy("/bin/busybox", bin.join("busybox")).unwrap();
                    fs::hard_link(bin.join("busybox"), bin.join("rm")).unwrap();
                } else {
                    std::os::unix::fs::symlink("/bin/busybox", bin.join("rm")).unwrap();
                }
                let path = format!("{}:{PATH}", bin.display());
                // In a script: the scanner would refuse `busybox rm` in the text.
                let text = "printf 'busybox echo other-programs-run\\nbusybox rm victim\\n' \
                            > x.sh; sh x.sh";
                let gate = gate_for(&env, dash(level, user), rule, text).env("PATH", &path);
                let out = gate.run();
                assert!(
                    out.stdout().contains("other-programs-run"),
                    "busybox's other programs were refused as `rm` (hard link: {hard})\n{}",
                    out.report()
                );
                if rule.is_none() {
                    assert!(
                        !env.file("victim").exists(),
                        "CONTROL: `busybox rm` did not remove the victim\n{}",
                        out.report()
                    );
                } else {
                    assert!(env.file("victim").exists(), "BYPASS\n{}", out.report());
                }
            }
        }
    }

    /// `zap` a second name (a hard link) of the `rm` on `PATH`: the rule on `rm` holds for
    /// it, beside one rule or many (the supervisor finds every rule's program in every
    /// `PATH` directory before the command starts). The control: without the rule, `zap`
    /// removes the victim.
    fn a_second_name_of_a_denied_program_is_refused_with_few_rules_and_with_many(
        level,
        user
    ) {
        let others: Vec<String> = (0..12).map(|i| format!("tool{i} run")).collect();
        for many in [false, true] {
            for rule in [None, Some("rm")] {
                let env = env_with_victim(user);
                let bin = env.file("bin");
                fs::create_dir(&bin).unwrap();
                fs::copy(program("rm"), bin.join("rm")).unwrap();
                fs::hard_link(bin.join("rm"), bin.join("zap")).unwrap();
                let path = format!("{}:{PATH}", bin.display());
                let mut gate = env.gate().user(user).env("PATH", &path).args([
                    "--no-config",
                    "--no-tty",
                    "--level",
                    level.name(),
                ]);
                let rules = rule.into_iter().chain(
                    others
                        .iter()
                        .map(String::as_str)
                        .filter(|_| many && rule.is_some()),
                );
                for rule in rules {
                    gate = gate.arg("--deny").arg(rule);
                }
                // In a script: the text names `zap` only, so the exec check decides.
                let script = env.file("attack.sh");
                fs::write(&script, "zap victim\n").unwrap();
                give(&script, user);
                let out = gate.args(["--allow", "./attack.sh", "./attack.sh"]).run();
                if rule.is_none() {
                    assert!(
                        !env.file("victim").exists(),
                        "CONTROL: `zap` did not remove the victim\n{}",
                        out.report()
                    );
                } else {
                    assert!(
                        env.file("victim").exists(),
                        "BYPASS (many rules: {many})\n{}",
                        out.report()
                    );
                }
            }
        }
    }

    /// A gate inside the command (an agent's wrapper that runs gate again) cannot have
    /// a supervisor of its own: it asks the outer one, which holds the same rule, and
    /// leaves the exec check to it. The victim survives, and the inner shell's status
    /// is the refused exec's. An inner gate with a rule the outer one lacks refuses
    /// (125) and runs nothing: its rule could not be checked at exec.
    fn a_gate_inside_leaves_the_exec_check_to_the_outer_one(level, user) {
        let env = env_with_victim(user);
        let inner = |rules: &str, command: &str| {
            format!(
                "{} --no-config --no-tty --audit-log off --level full {rules} -c '{command}'; \
                 echo inner=$?",
                gate_binary_for(user).display()
            )
        };
        let text = inner("--deny rm", "printf \"rm victim\" | sh");
        let out = gate_for(&env, dash(level, user), Some("rm"), &text).run();
        assert!(env.file("victim").exists(), "BYPASS: the inner gate ran rm\n{}", out.report());
        assert!(out.stdout().contains("inner=126"), "{}", out.report());
        assert!(
            out.stderr().lines().any(|l| l.starts_with("gate: refused to run ")),
            "no `gate: refused to run` line\n{}",
            out.report()
        );
        let text = inner("--deny rm --deny shred", "echo ran");
        let out = gate_for(&env, dash(level, user), Some("rm"), &text).run();
        assert!(
            out.stdout().contains("inner=125") && !out.stdout().contains("ran\n"),
            "an inner rule the outer supervisor lacks must refuse\n{}",
            out.report()
        );
        assert!(
            out.stderr().contains("not all of this gate's deny rules"),
            "{}",
            out.report()
        );
    }

    /// The control: without deny rules outside, the inner gate has a supervisor of its
    /// own, and an inner gate with no rules runs what it is given.
    fn control_a_gate_inside_runs_alone_without_an_outer_supervisor(level, user) {
        let env = env_with_victim(user);
        let inner = gate_binary_for(user);
        let text = format!(
            "{} --no-config --no-tty --audit-log off --level full -c 'echo ran'; echo inner=$?",
            inner.display()
        );
        let out = gate_for(&env, dash(level, user), None, &text).run();
        assert!(out.stdout().contains("ran\ninner=0"), "{}", out.report());
    }

    fn control_a_program_run_without_a_shell_removes_the_victim(level, user) {
        let (env, out) = program_form(level, user, None);
        assert!(
            !env.file("victim").exists(),
            "CONTROL: `gate -- sh x.sh` did not remove the victim\n{}",
            out.report()
        );
    }
}

/// `gate --level LEVEL [--deny RULE] -- sh x.sh` (at `ask` with `--allow sh`), where
/// `x.sh` holds `exec rm victim`.
fn program_form(level: Level, user: User, rule: Option<&str>) -> (TestEnv, Outcome) {
    let env = env_with_victim(user);
    fs::write(env.file("x.sh"), "exec rm victim\n").unwrap();
    let mut gate = env.gate().user(user).env("PATH", PATH).args([
        "--no-config",
        "--no-tty",
        "--level",
        level.name(),
        "--allow",
        "sh",
    ]);
    if let Some(rule) = rule {
        gate = gate.arg("--deny").arg(rule);
    }
    let out = gate.args(["--", "sh", "x.sh"]).run();
    (env, out)
}

/// The `Seccomp` and `Seccomp_filters` lines the command sees in /proc/self/status.
fn seccomp_of_the_command(user: User, rule: Option<&str>) -> (Outcome, String, String) {
    let env = TestEnv::new_in("/var/tmp");
    let mut gate = env.gate().user(user).env("PATH", PATH).args([
        "--no-config",
        "--audit-log",
        "off",
        "--level",
        "full",
    ]);
    if let Some(rule) = rule {
        gate = gate.arg("--deny").arg(rule);
    }
    let out = gate.args(["--", "sh", "-c", "cat /proc/self/status"]).run();
    out.assert_code(0);
    let field = |name: &str| {
        out.stdout()
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:\t")).map(str::to_owned))
            .unwrap_or_else(|| panic!("no {name} line\n{}", out.report()))
    };
    let (mode, filters) = (field("Seccomp"), field("Seccomp_filters"));
    (out, mode, filters)
}

for_each_user! {
    /// The control for every test that looks for the supervisor: a program named `gate`
    /// that the command starts in the background (a copy of `sleep`) is found beside the
    /// command, and killing it works. So "found none" means there is none.
    fn control_the_test_finds_and_kills_a_gate_process_beside_the_command(user) {
        let env = env_with_victim(user);
        let fake = env.file("gate");
        fs::copy(program("sleep"), &fake).unwrap();
        if user == User::Unprivileged && running_as_root() {
            std::os::unix::fs::chown(&fake, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        let text = format!("./gate 30 & {HANDSHAKE}; wait $!; echo \"$?\" > after");
        let gate = gate_for(&env, dash(Level::Full, user), None, &text);
        let mut paused = Paused::start(&env, gate, user);
        let found = wait_for_helpers(paused.pid);
        let processes = describe_run(paused.pid);
        if let [fake] = &found[..] {
            kill_and_wait(fake);
        }
        let outcome = paused.release();
        assert_eq!(
            found.len(),
            1,
            "the test did not find the one `gate` process beside the command: {}\n  the \
             run's processes:\n    {processes}\n{}",
            list(&found),
            outcome.report()
        );
        let after = fs::read_to_string(env.file("after")).unwrap_or_default();
        assert_eq!(after.trim(), "137", "the fake was not killed\n{}", outcome.report());
    }

    /// At `full` nothing else sets a seccomp filter (the mark is no_new_privs and
    /// Landlock), so without deny rules the command has none: the exec check costs nothing.
    fn without_deny_rules_the_command_has_no_seccomp_filter(user) {
        let (out, mode, filters) = seccomp_of_the_command(user, None);
        assert_eq!((mode.as_str(), filters.as_str()), ("0", "0"), "{}", out.report());
    }

    /// With a deny rule the command runs under the exec check's filter.
    fn with_a_deny_rule_the_command_runs_under_a_seccomp_filter(user) {
        let (out, mode, filters) = seccomp_of_the_command(user, Some("rm"));
        assert_eq!(mode, "2", "no seccomp filter with a deny rule\n{}", out.report());
        assert!(filters != "0", "no seccomp filter with a deny rule\n{}", out.report());
    }
}

/// The `under_dash` tests mean dash only if `/bin/sh` is dash, as on Debian.
#[test]
fn bin_sh_is_dash() {
    let target = fs::canonicalize("/bin/sh").expect("/bin/sh must exist");
    assert_eq!(
        target.file_name().and_then(|n| n.to_str()),
        Some("dash"),
        "/bin/sh is {}, not dash: the under_dash tests would not test dash",
        target.display()
    );
}
