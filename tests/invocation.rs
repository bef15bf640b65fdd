//! Every way gate is invoked: `gate -- PROGRAM ARGS`, `gate -c CMD [NAME [ARGS]]`, the
//! shell-style flags an agent harness uses when gate is `$SHELL`, scripts, sessions with
//! no command, and gate installed as a shim under a shell's name.

use crate::common;

use std::path::Path;
use std::time::Duration;

use common::*;

const FULL: [&str; 5] = ["--no-config", "--audit-log", "off", "--level", "full"];

/// Prints `$0`, `$1`, `$2` in brackets, then what the shell's options say.
const PROBE: &str = r#"printf '[%s]' "$0" "$1" "$2"; echo;
shopt -q login_shell && echo login;
case $- in *i*) echo interactive;; esac;
shopt -qo errexit && echo errexit;
shopt -qo pipefail && echo pipefail;
true"#;

/// Run the probe through gate with bash as the real shell and these shell flags before
/// the command text, with `name`, `a b`, `c` as positional arguments.
fn probe_with_flags(flags: &[&str]) -> Outcome {
    let env = TestEnv::new();
    let bash = bash();
    env.gate()
        .args(FULL)
        .arg("--shell")
        .arg(&bash)
        .args(flags)
        .args([PROBE, "name", "a b", "c"])
        .run()
}

/// The probe's findings: its lines that are not bash's start-up chatter.
fn findings(out: &Outcome) -> Vec<String> {
    out.stdout()
        .lines()
        .filter(|l| {
            l.starts_with('[') || ["login", "interactive", "errexit", "pipefail"].contains(l)
        })
        .map(str::to_owned)
        .collect()
}

#[track_caller]
fn assert_probe(flags: &[&str], expected: &[&str]) {
    let out = probe_with_flags(flags);
    out.assert_code(0);
    let mut want = vec!["[name][a b][c]"];
    want.extend_from_slice(expected);
    assert_eq!(findings(&out), want, "{}", out.report());
}

#[test]
fn dash_c_passes_name_and_arguments_as_dollar_0_1_2() {
    assert_probe(&["-c"], &[]);
}

#[test]
fn dash_c_with_the_default_shell_passes_positional_arguments() {
    let env = TestEnv::new();
    env.gate()
        .args(FULL)
        .args([
            "-c",
            "printf '[%s]' \"$0\" \"$1\" \"$2\"",
            "name",
            "a b",
            "c",
        ])
        .run()
        .assert_code(0)
        .assert_stdout("[name][a b][c]")
        .assert_stderr_empty();
}

#[test]
fn dash_c_without_a_name_makes_dollar_0_the_real_shells_name() {
    let env = TestEnv::new();
    env.gate()
        .args(FULL)
        .args(["-c", "echo $0"])
        .run()
        .assert_code(0)
        .assert_stdout("sh\n");
}

// The login forms run the command in a non-login shell: a login shell reads
// ~/.bash_profile before the command and ~/.bash_logout after it, files the model can
// write (see tests/rc_files.rs). The forms are still understood, and the command runs.

#[test]
fn dash_lc_runs_the_command_without_a_login_shell() {
    assert_probe(&["-lc"], &[]);
}

#[test]
fn dash_l_then_dash_c_runs_the_command_without_a_login_shell() {
    assert_probe(&["-l", "-c"], &[]);
}

#[test]
fn dash_c_then_dash_l_runs_the_command_without_a_login_shell() {
    assert_probe(&["-c", "-l"], &[]);
}

#[test]
fn double_dash_login_then_dash_c_runs_the_command_without_a_login_shell() {
    assert_probe(&["--login", "-c"], &[]);
}

#[test]
fn dash_i_then_dash_c_runs_an_interactive_shell_without_a_terminal() {
    assert_probe(&["-i", "-c"], &["interactive"]);
}

#[test]
fn dash_e_then_dash_c_turns_on_errexit() {
    assert_probe(&["-e", "-c"], &["errexit"]);
}

#[test]
fn dash_o_pipefail_then_dash_c_turns_on_pipefail() {
    assert_probe(&["-o", "pipefail", "-c"], &["pipefail"]);
}

#[test]
fn dash_dash_program_runs_the_program_with_its_arguments_unchanged() {
    let env = TestEnv::new();
    env.gate()
        .args(FULL)
        .args(["--", "printf", "[%s]", "a b", "--level", "-c", "$HOME", ""])
        .run()
        .assert_code(0)
        .assert_stdout("[a b][--level][-c][$HOME][]")
        .assert_stderr_empty();
}

#[test]
fn gate_options_after_the_command_text_are_the_commands_arguments() {
    let env = TestEnv::new();
    env.gate()
        .args(FULL)
        .args([
            "-c",
            "printf '[%s]' \"$@\"",
            "name",
            "--level",
            "deny",
            "--help",
        ])
        .run()
        .assert_code(0)
        .assert_stdout("[--level][deny][--help]");
}

#[test]
fn gate_options_take_their_value_inline_or_as_the_next_argument() {
    let env = TestEnv::new();
    env.gate()
        .args([
            "--no-config",
            "--audit-log=off",
            "--level=full",
            "-c",
            "echo inline",
        ])
        .run()
        .assert_code(0)
        .assert_stdout("inline\n")
        .assert_stderr_empty();
}

#[test]
fn a_script_operand_runs_the_script_with_its_arguments() {
    let env = TestEnv::new();
    let script = env.write("script.sh", "printf '[%s]' \"$0\" \"$@\"\n");
    let out = env
        .gate()
        .args(FULL)
        .arg(&script)
        .args(["one", "two words"])
        .run();
    out.assert_code(0)
        .assert_stdout(&format!("[{}][one][two words]", script.display()));
}

#[test]
fn a_script_is_judged_as_its_path_and_arguments() {
    let env = TestEnv::new();
    let script = env.write("script.sh", "echo script ran\n");
    let rule = format!("{} one", script.display());
    env.gate()
        .args(["--no-config", "--audit-log", "off", "--allow", &rule])
        .arg(&script)
        .arg("one")
        .run()
        .assert_code(0)
        .assert_stdout("script ran\n");
    env.gate()
        .args(["--no-config", "--audit-log", "off", "--allow", &rule])
        .arg(&script)
        .arg("two")
        .run()
        .assert_refused();
}

#[test]
fn a_gate_started_as_a_login_shell_keeps_dollar_0_but_runs_no_login_shell() {
    // A login(1)-style argv0 with a leading dash: gate as a user's login shell. The
    // command runs in a non-login shell (no profile before it), and `$0` is still the
    // login shell's name.
    let env = TestEnv::new();
    let bash = bash();
    env.gate()
        .arg0("-gate")
        .args(FULL)
        .arg("--shell")
        .arg(&bash)
        .args(["-c", "echo $0; shopt -q login_shell && echo login; true"])
        .run()
        .assert_code(0)
        .assert_stdout("-bash\n");
}

// ---------------------------------------------------------------------------------------
// No command: a shell session reading standard input.

for_each_user! {
    fn a_session_at_deny_level_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "deny"])
            .stdin("touch F\n")
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_refused()
            .assert_stderr_contains("interactive shell");
    }

    fn a_session_at_ask_level_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "ask"])
            .args(["--allow", "touch"])
            .stdin("touch F\n")
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_refused()
            .assert_stderr_contains("interactive shell");
    }

    // A session at the safe level runs the real shell in the sandbox, reading commands
    // from stdin: it creates F in the working directory, but not G in the home directory
    // (outside /tmp), which the same session creates at level full (the control).
    fn a_session_at_safe_level_runs_the_shell_in_the_sandbox(user) {
        let env = TestEnv::new_in("/var/tmp");
        let g = env.home.join("G");
        let session = "touch F\ntouch \"$HOME/G\"\ngrep NoNewPrivs /proc/self/status\n";
        let control = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "full"])
            .stdin(session)
            .run();
        control.assert_code(0);
        assert!(g.exists(), "control: {}", control.report());
        std::fs::remove_file(&g).unwrap();
        std::fs::remove_file(env.file("F")).unwrap();

        let out = env
            .gate()
            .user(user)
            .args(["--no-config", "--audit-log", "off", "--level", "safe"])
            .stdin(session)
            .run();
        assert!(env.file("F").exists(), "the session should have run\n{}", out.report());
        assert_absent(&g, &out);
        out.assert_code(0)
            .assert_stdout("NoNewPrivs:\t1\n")
            .assert_stderr_contains("Permission denied");
    }

    fn a_login_or_interactive_session_at_ask_level_runs_nothing(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        for flags in [&["-l"][..], &["-i"], &["-s"], &["--login"]] {
            let out = env
                .gate()
                .user(user)
                .args(["--no-config", "--audit-log", "off"])
                .args(flags)
                .stdin("touch F\n")
                .run();
            assert_absent(&env.file("F"), &out);
            out.assert_refused();
        }
    }
}

#[test]
fn a_session_at_full_level_runs_the_real_shell_on_stdin() {
    let env = TestEnv::new();
    env.gate()
        .args(FULL)
        .stdin("echo from-stdin\necho $0\n")
        .run()
        .assert_code(0)
        .assert_stdout("from-stdin\nsh\n");
}

// ---------------------------------------------------------------------------------------
// Shims: gate under a shell's name, first on PATH.

/// The environment a shim runs with: it takes no gate options, so the level and the
/// configuration come from the environment (an empty configuration file).
fn shim_gate(env: &TestEnv, shims: &Path, path: std::ffi::OsString, name: &str) -> Gate {
    let empty = env.write("empty.toml", "");
    env.gate()
        .program(shims.join(name))
        .arg0(name)
        .env("PATH", path)
        .env("GATE_LEVEL", "full")
        .env("GATE_CONFIG", empty)
        .env("GATE_AUDIT_LOG", "off")
        .deadline(Duration::from_secs(10))
}

fn shims_first_on_path(shims: &Path) -> std::ffi::OsString {
    let normal = std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
    let mut dirs = vec![shims.to_path_buf()];
    dirs.extend(std::env::split_paths(&normal));
    std::env::join_paths(dirs).unwrap()
}

#[test]
fn a_bash_shim_runs_the_real_bash_without_recursing() {
    bash();
    let env = TestEnv::new();
    let shims = shim_dir(&env, &["bash", "sh"]);
    let out = shim_gate(&env, &shims, shims_first_on_path(&shims), "bash")
        .args(["-c", "echo \"$BASH_VERSION\"; echo $0"])
        .run();
    out.assert_code(0).assert_stderr_empty();
    let stdout = out.stdout();
    let mut lines = stdout.lines();
    let version = lines.next().unwrap_or("");
    assert!(
        !version.is_empty() && version.chars().next().unwrap().is_ascii_digit(),
        "the real bash did not run (no BASH_VERSION)\n{}",
        out.report()
    );
    assert_eq!(lines.next(), Some("bash"), "{}", out.report());
}

#[test]
fn a_sh_shim_runs_the_real_sh_without_recursing() {
    let env = TestEnv::new();
    let shims = shim_dir(&env, &["bash", "sh"]);
    let out = shim_gate(&env, &shims, shims_first_on_path(&shims), "sh")
        .args(["-c", "echo real sh $$; exit 3"])
        .run();
    out.assert_code(3).assert_stderr_empty();
    assert_eq!(
        out.stdout(),
        format!("real sh {}\n", out.pid),
        "{}",
        out.report()
    );
}

#[test]
fn a_shim_found_through_path_lookup_runs_the_real_shell() {
    // The caller only names `sh`; PATH lookup finds the shim first.
    let env = TestEnv::new();
    let shims = shim_dir(&env, &["sh"]);
    let path = shims_first_on_path(&shims);
    let out = env
        .gate()
        .program(require_program("env"))
        .args(["sh", "-c", "echo via path"])
        .env("PATH", &path)
        .env("GATE_LEVEL", "full")
        .env("GATE_CONFIG", env.write("empty.toml", ""))
        .env("GATE_AUDIT_LOG", "off")
        .deadline(Duration::from_secs(10))
        .run();
    out.assert_code(0)
        .assert_stdout("via path\n")
        .assert_stderr_empty();
}

#[test]
fn a_shim_whose_real_shell_is_only_in_gates_directory_exits_125_without_looping() {
    let env = TestEnv::new();
    let shims = shim_dir(&env, &["bash", "sh"]);
    for name in ["bash", "sh"] {
        let out = shim_gate(&env, &shims, shims.clone().into(), name)
            .args(["-c", "echo should not run"])
            .run();
        out.assert_gate_error()
            .assert_stderr_contains(&format!("no real {name}"))
            .assert_stdout("");
    }
}

#[test]
fn a_shim_for_a_shell_that_is_not_installed_exits_125_without_looping() {
    // A shell name gate knows, but that no directory on PATH has.
    let env = TestEnv::new();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let missing = ["zsh", "yash", "mksh", "ksh", "fish"]
        .into_iter()
        .find(|name| {
            std::env::split_paths(&path)
                .chain(["/usr/local/bin", "/usr/bin", "/bin"].map(Into::into))
                .all(|dir| !dir.join(name).exists())
        })
        .expect("every shell gate can shim is installed; cannot test a missing one");
    let shims = shim_dir(&env, &[missing]);
    let out = shim_gate(&env, &shims, shims_first_on_path(&shims), missing)
        .args(["-c", "echo should not run"])
        .run();
    out.assert_gate_error()
        .assert_stderr_contains(&format!("no real {missing}"))
        .assert_stdout("");
}

for_each_user! {
    fn a_shim_refuses_at_the_default_level(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let shims = shim_dir_for(&env, &["sh"], user);
        let out = env
            .gate()
            .user(user)
            .program(require_program("env"))
            .args(["sh", "-c", "touch F"])
            .env("PATH", shims_first_on_path(&shims))
            .env("GATE_CONFIG", env.write("empty.toml", ""))
            .env("GATE_AUDIT_LOG", "off")
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_refused();
    }

    fn a_shim_takes_no_gate_options(user) {
        // `--level full` is an argument for the real shell, not an option for gate.
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        bash();
        let shims = shim_dir_for(&env, &["bash"], user);
        let out = env
            .gate()
            .user(user)
            .program(require_program("env"))
            .args(["bash", "--level", "full", "-c", "touch F"])
            .env("PATH", shims_first_on_path(&shims))
            .env("GATE_CONFIG", env.write("empty.toml", ""))
            .env("GATE_AUDIT_LOG", "off")
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_refused();
    }

    fn a_shim_applies_deny_rules_from_its_configuration(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let shims = shim_dir_for(&env, &["sh"], user);
        let config = env.write("deny.toml", "deny = [\"touch\"]\n");
        let out = env
            .gate()
            .user(user)
            .program(require_program("env"))
            .args(["sh", "-c", "true; touch F"])
            .env("PATH", shims_first_on_path(&shims))
            .env("GATE_LEVEL", "full")
            .env("GATE_CONFIG", &config)
            .env("GATE_AUDIT_LOG", "off")
            .run();
        assert_absent(&env.file("F"), &out);
        out.assert_refused().assert_stderr_contains("deny rule `touch`");
    }
}

// ---------------------------------------------------------------------------------------
// The real shell must not be gate itself.

#[test]
fn shell_option_pointing_at_gate_itself_is_refused_with_125() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .args(FULL)
        .args(["--shell", GATE, "-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("is gate itself")
        .assert_stdout("");
}

#[test]
fn shell_option_pointing_at_a_link_to_gate_is_refused_with_125() {
    let env = TestEnv::new();
    let shims = shim_dir(&env, &["bash"]);
    let out = env
        .gate()
        .args(FULL)
        .arg("--shell")
        .arg(shims.join("bash"))
        .args(["-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("is gate itself");
}

#[test]
fn gate_shell_variable_pointing_at_gate_itself_is_refused_with_125() {
    let env = TestEnv::new();
    let out = env
        .gate()
        .env("GATE_SHELL", GATE)
        .args(FULL)
        .args(["-c", "touch F"])
        .run();
    assert_absent(&env.file("F"), &out);
    out.assert_gate_error()
        .assert_stderr_contains("is gate itself");
}

/// Agents probe their shell with `bash --version`: at `ask` a shim passes it through
/// unasked (it runs no command), at `deny` nothing runs, and anything more than the one
/// option is judged as usual.
#[test]
fn a_shim_answers_version_at_ask_but_not_at_deny() {
    let env = TestEnv::new();
    let shims = shim_dir(&env, &["bash"]);
    let out = shim_gate(&env, &shims, shims_first_on_path(&shims), "bash")
        .env("GATE_LEVEL", "ask")
        .arg("--version")
        .run();
    out.assert_code(0).assert_stderr_empty();
    assert!(
        out.stdout().starts_with("GNU bash"),
        "the real bash did not answer\n{}",
        out.report()
    );
    shim_gate(&env, &shims, shims_first_on_path(&shims), "bash")
        .env("GATE_LEVEL", "deny")
        .arg("--version")
        .run()
        .assert_refused();
    // `--version` with a command is a command: judged, and at ask with no rule, refused.
    let f = env.file("ran");
    let out = shim_gate(&env, &shims, shims_first_on_path(&shims), "bash")
        .env("GATE_LEVEL", "ask")
        .args(["--version", "-c", &format!("touch {}", f.display())])
        .run();
    assert!(!f.exists(), "{}", out.report());
    out.assert_refused();
}

for_each_user! {
    /// gate reads a shell's options as bash and dash do; zsh takes `-o`'s value from the
    /// rest of its word, and fish runs every `-c` and `-C`. Before gate's table of shells,
    /// gate judged the allowed `echo hi` here while the real shell ran `touch F`. Now the
    /// real shell's reading must be gate's, or nothing starts.
    fn a_shell_that_would_run_another_command_than_the_judged_one_is_not_started(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        let cases: [(&str, &[&str]); 2] = [
            ("zsh", &["-c", "-oerrexit", "touch F", "echo hi"]),
            ("fish", &["-c", "echo hi", "-C", "touch F"]),
        ];
        for (name, args) in cases {
            let shell = require_program(name);
            // Control: the shell itself runs `touch F`.
            let control = env.gate().user(user).program(&shell).args(args).run();
            assert!(env.file("F").exists(), "{name} {args:?} did not run `touch F`\n{control:?}");
            std::fs::remove_file(env.file("F")).unwrap();
            let out = env
                .gate()
                .user(user)
                .args(["--no-config", "--no-tty", "--audit-log", "off", "--level", "ask"])
                .args(["--allow", "echo hi", "--shell"])
                .arg(&shell)
                .args(args)
                .run();
            assert_absent(&env.file("F"), &out);
            out.assert_gate_error()
                .assert_stderr_contains(&format!("gate: {name} reads these options differently"));
        }
    }

    /// The same shells, called the way agents call them, still run.
    fn the_usual_forms_run_under_every_shell_gate_has_a_table_for(user) {
        let env = TestEnv::new();
        env.assert_side_effects_are_visible(user);
        for name in ["zsh", "fish", "dash", "bash"] {
            let shell = require_program(name);
            for args in [&["-c", "touch F"][..], &["-lc", "touch F"], &["-l", "-c", "touch F"]] {
                let out = env
                    .gate()
                    .user(user)
                    .args(FULL)
                    .arg("--shell")
                    .arg(&shell)
                    .args(args)
                    .run();
                out.assert_code(0);
                assert!(env.file("F").exists(), "{name} {args:?}\n{out:?}");
                std::fs::remove_file(env.file("F")).unwrap();
            }
        }
    }
}

/// Where `/bin/sh` is a link to busybox (Alpine, initramfs images), the shell gate runs is
/// busybox's `sh`, which busybox picks by the name it is called: gate reads it as `sh`,
/// not as the multi-call `busybox` (whose `-c` it would otherwise refuse, 125).
#[test]
fn a_shell_that_is_a_link_to_busybox_runs_a_command() {
    let busybox = require_program("busybox");
    let env = TestEnv::new();
    let sh = env.file("sh");
    std::os::unix::fs::symlink(&busybox, &sh).unwrap();
    // The control: busybox run as `sh` reads `-c` as a shell does.
    let direct = std::process::Command::new(&sh)
        .args(["-c", "echo through-busybox"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&direct.stdout), "through-busybox\n");
    let out = env
        .gate()
        .args([
            "--no-config",
            "--no-tty",
            "--audit-log",
            "off",
            "--level",
            "full",
        ])
        .arg("--shell")
        .arg(&sh)
        .args(["-c", "echo through-busybox"])
        .run();
    out.assert_code(0).assert_stdout("through-busybox\n");
}
