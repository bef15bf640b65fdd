//! The terminal prompt, driven through a real terminal: gate runs in a tmux window with
//! no approval socket and the terminal turned on (`approval.tty = true`), so an
//! unallowed command at level `ask` is asked about on /dev/tty. The window's shell has
//! job control on (`set -m`), so each gate runs as a person's interactive shell runs a
//! command: a foreground job of its own, which is what gate asks on. The test presses
//! keys with `send-keys` and reads the screen with `capture-pane`, waiting for what it
//! expects with a deadline (never a fixed sleep).
//!
//! Each window runs a bash script that records the terminal's settings (`stty -g`)
//! before and after gate, so that every test also checks that the terminal was restored.
//! tmux is required: a missing tmux fails these tests, saying so.

use crate::common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{GATE, TestEnv};

// ---------------------------------------------------------------------------------------
// A terminal to drive.
use common::tmux::{Term, unique};

// ---------------------------------------------------------------------------------------
// The scripts the window runs.

/// A test's world: the isolated environment, an empty runtime directory (so no broker
/// socket is found), and the script the window runs.
struct World {
    env: TestEnv,
    runtime: PathBuf,
}

impl World {
    fn new() -> World {
        let env = TestEnv::new();
        let runtime = env.runtime.clone();
        World { env, runtime }
    }

    /// A world outside /tmp, whose home directory a sandboxed command cannot write.
    fn outside_tmp() -> World {
        let env = TestEnv::new_in("/var/tmp");
        let runtime = env.runtime.clone();
        World { env, runtime }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.env.file(name)
    }

    /// Start a window whose script runs `body` (bash, with job control) in the working
    /// directory, with `$GATE` set to a gate at level `ask` whose configuration turns the
    /// terminal on and nothing else, without an audit log. The script prints
    /// `EXIT=<status of the last $GATE run>` after `body` through `report`, then whether
    /// the terminal settings are as before.
    fn start(&self, body: &str) -> Term {
        let config = self.env.write("tty-on.toml", "[approval]\ntty = true\n");
        let script = format!(
            r#"set -u -m
export PATH=/usr/local/bin:/usr/bin:/bin
export HOME='{home}' XDG_STATE_HOME='{state}' XDG_CONFIG_HOME='{config}'
export XDG_RUNTIME_DIR='{runtime}' LC_ALL=C
unset GATE_SOCKET GATE_LEVEL GATE_TIMEOUT GATE_SESSION GATE_LOG
GATE='{gate} --config {tty_on} --audit-log off --level ask'
cd '{work}'
before=$(stty -g)
report() {{
    echo "EXIT=$1"
    if [ "$(stty -g)" = "$before" ]; then echo "TTY=restored"; else echo "TTY=changed"; fi
    echo "ALL-DONE"
}}
{body}
exec sleep 600
"#,
            home = self.env.home.display(),
            state = self.env.state.display(),
            config = self.env.config.display(),
            runtime = self.runtime.display(),
            gate = GATE,
            tty_on = config.display(),
            work = self.env.work.display(),
        );
        let path = self.env.write(&unique("script.sh"), script);
        Term::start(&self.env, &path)
    }
}

/// The prompt line, as shown while gate waits for a key.
const PROMPT: &str = "run it? [y/n]";

/// Wait for the script to end; the screen.
#[track_caller]
fn finished(term: &Term) -> String {
    let screen = term.wait_text("ALL-DONE");
    assert!(
        screen.contains("TTY=restored"),
        "the terminal settings were not restored; the screen:\n{screen}"
    );
    screen
}

#[track_caller]
fn assert_exit(screen: &str, code: i32) {
    assert!(
        screen.contains(&format!("EXIT={code}\n")),
        "expected exit status {code}; the screen:\n{screen}"
    );
}

fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

// ---------------------------------------------------------------------------------------
// The approval prompt.

#[test]
fn y_runs_the_command_once() {
    let w = World::new();
    let term = w.start("$GATE -c 'touch ran'; report $?");
    let screen = term.wait_text(PROMPT);
    assert!(screen.contains("command:   touch ran"), "{screen}");
    assert!(
        screen.contains(&format!("directory: {}", w.env.work.display())),
        "{screen}"
    );
    assert!(screen.contains("session:"), "{screen}");
    assert!(!exists(&w.file("ran")), "it ran before the answer");
    term.keys(&["y"]);
    let screen = finished(&term);
    assert_exit(&screen, 0);
    assert!(screen.contains("approved once"), "{screen}");
    assert!(exists(&w.file("ran")));
}

// The sandbox-first mode on the terminal: the prompt says a yes leaves the sandbox, and
// then the command runs outside it (the control: at safe, without the rule, the same
// write is refused by the sandbox).
#[test]
fn an_unsandboxed_rule_says_on_the_terminal_that_a_yes_leaves_the_sandbox() {
    let w = World::outside_tmp();
    let outside = w.env.home.join("outside");
    let body = format!(
        "SAFE=\"${{GATE% --level ask}} --level safe\"\n\
         $SAFE -c 'touch {o}' 2>/dev/null; echo \"CONTROL=$?\"\n\
         $SAFE --unsandboxed touch -c 'touch {o}'; report $?",
        o = outside.display()
    );
    let term = w.start(&body);
    let screen = term.wait_text(PROMPT);
    assert!(screen.contains("CONTROL=1"), "{screen}");
    assert!(!exists(&outside), "the control wrote outside the sandbox");
    assert!(
        screen.contains("sandbox:   a yes runs it OUTSIDE the sandbox"),
        "{screen}"
    );
    term.keys(&["y"]);
    let screen = finished(&term);
    assert_exit(&screen, 0);
    assert!(
        exists(&outside),
        "approved, it ran outside the sandbox\n{screen}"
    );
}

#[test]
fn uppercase_keys_count_and_other_keys_do_not() {
    let w = World::new();
    let term = w.start("$GATE -c 'touch ran'; report $?");
    term.wait_text(PROMPT);
    // Keys that mean nothing, and escape sequences that end in letters that would
    // (Up is ESC [ A: never "a"; F4 is ESC O S).
    term.keys(&["x", "Up", "Down", "F4", "q", "Space", "C-z"]);
    term.keys(&["Y"]);
    let screen = finished(&term);
    assert_exit(&screen, 0);
    assert!(screen.contains("approved once"), "{screen}");
    assert!(!screen.contains("for the rest of this session"), "{screen}");
    assert!(exists(&w.file("ran")));
}

/// The terminal prompt offers no remembering: gate keeps no remembered approvals, so
/// `a` means nothing, and the same command is asked about again. So even when a broker
/// killed without cleaning up left its token behind (the token marks the broker's
/// socket, and nothing listens on that socket now).
#[test]
fn the_prompt_offers_no_remembering() {
    let w = World::new();
    let gate_dir = w.runtime.join("gate");
    fs::create_dir(&gate_dir).unwrap();
    fs::set_permissions(&gate_dir, fs::Permissions::from_mode(0o700)).unwrap();
    let token = gate_dir.join("broker.sock.token");
    fs::write(&token, format!("{}\n", "0".repeat(64))).unwrap();
    fs::set_permissions(&token, fs::Permissions::from_mode(0o600)).unwrap();
    let term = w.start(
        "export GATE_SESSION=fixed\n\
         $GATE -c 'touch ran'; echo \"FIRST=$?\"\n\
         mv ran ran-first\n\
         $GATE -c 'touch ran'; report $?",
    );
    let screen = term.wait_text(PROMPT);
    assert!(!screen.contains("a: allow"), "{screen}");
    assert!(!screen.contains("[y/a/n]"), "{screen}");
    term.keys(&["a", "A"]);
    term.keys(&["y"]);
    let screen = term.wait_for("the second prompt", |s| {
        s.contains("FIRST=0") && s.matches(PROMPT).count() >= 2
    });
    assert!(!screen.contains("for the rest of this session"), "{screen}");
    assert!(exists(&w.file("ran-first")));
    assert!(!exists(&w.file("ran")), "the second ran unasked");
    term.keys(&["y"]);
    let screen = finished(&term);
    assert_exit(&screen, 0);
    assert!(exists(&w.file("ran")));
}

#[test]
fn n_denies_with_the_reason_typed() {
    let w = World::new();
    let term = w.start("$GATE -c 'touch ran' 2>stderr.txt; report $?");
    term.wait_text(PROMPT);
    term.keys(&["n"]);
    term.wait_text("reason: ");
    // Typed with mistakes, erased with Backspace and Ctrl-U; an arrow key and a
    // control key in between are dropped, never echoed.
    term.type_text("rm it");
    term.keys(&["C-u"]);
    term.type_text("use make clenn");
    term.keys(&["BSpace", "BSpace", "Left", "C-a", "C-b"]);
    term.type_text("an instead");
    let screen = term.wait_text("reason: use make clean instead");
    assert!(!screen.contains("^["), "an escape was echoed:\n{screen}");
    term.keys(&["Enter"]);
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(!exists(&w.file("ran")), "it ran");
    let stderr = fs::read_to_string(w.file("stderr.txt")).unwrap();
    assert!(
        stderr.contains("use make clean instead"),
        "the reason is not on stderr: {stderr:?}"
    );
    assert!(stderr.starts_with("gate: "), "{stderr:?}");
    assert!(
        !stderr.contains(PROMPT),
        "the prompt went to stderr: {stderr:?}"
    );
}

#[test]
fn enter_alone_denies() {
    let w = World::new();
    let term = w.start("$GATE -c 'touch ran' 2>stderr.txt; report $?");
    term.wait_text(PROMPT);
    term.keys(&["Enter"]);
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(screen.contains("gate: denied"), "{screen}");
    assert!(!exists(&w.file("ran")));
}

#[test]
fn n_then_enter_denies_without_a_reason() {
    let w = World::new();
    let term = w.start("$GATE -c 'touch ran'; report $?");
    term.wait_text(PROMPT);
    term.keys(&["N"]);
    term.wait_text("reason: ");
    term.keys(&["Enter"]);
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(!exists(&w.file("ran")));
    // stderr is the prompt's own terminal: the prompt says it all, no line says that
    // gate waits (with stderr elsewhere one does: see pipes_on_stdin_and_stdout…).
    assert!(screen.contains("gate: denied"), "{screen}");
    assert!(!screen.contains("gate: waiting"), "{screen}");
}

#[test]
fn ctrl_c_interrupts_and_denies() {
    let w = World::new();
    let term = w.start("$GATE -c 'touch ran'; report $?");
    term.wait_text(PROMPT);
    term.keys(&["C-c"]);
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(screen.contains("interrupted"), "{screen}");
    assert!(!exists(&w.file("ran")));
}

#[test]
fn the_countdown_runs_and_the_timeout_denies() {
    let w = World::new();
    let term = w.start("$GATE --timeout 3 -c 'touch ran' 2>stderr.txt; report $?");
    // The countdown is on the prompt line and goes down to 1 s.
    term.wait_for("a countdown of 2 s or more", |s| {
        s.contains("(3s) run it?") || s.contains("(2s) run it?")
    });
    term.wait_text("(1s) run it?");
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(screen.contains("no answer in time"), "{screen}");
    assert!(!exists(&w.file("ran")));
    // The shell's terminal works as before: typed text is echoed again.
    term.type_text("echo typed-after");
    term.wait_text("echo typed-after");
}

#[test]
fn a_timeout_while_typing_the_reason_denies() {
    let w = World::new();
    let term = w.start("$GATE --timeout 3 -c 'touch ran'; report $?");
    term.wait_text(PROMPT);
    term.keys(&["n"]);
    term.wait_text("reason: ");
    term.type_text("half a rea");
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(!exists(&w.file("ran")));
}

#[test]
fn sigterm_while_prompting_denies_and_restores_the_terminal() {
    let w = World::new();
    // The subshell writes its pid and becomes gate, in the foreground.
    let term =
        w.start("bash -c 'echo $$ > gate.pid; exec \"$@\"' gate $GATE -c 'touch ran'; report $?");
    term.wait_text(PROMPT);
    let pid: i32 = fs::read_to_string(w.file("gate.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(screen.contains("interrupted"), "{screen}");
    assert!(!exists(&w.file("ran")));
}

#[test]
fn pipes_on_stdin_and_stdout_do_not_matter() {
    let w = World::new();
    // gate first in the pipeline, so that it leads the job; its stdin is a pipe all the
    // same.
    let term = w.start(
        "$GATE -c 'cat; echo from-command; touch ran' < <(echo from-stdin) 2>stderr.txt | cat > out.txt\n\
         report \"${PIPESTATUS[0]}\"",
    );
    term.wait_text(PROMPT);
    term.keys(&["y"]);
    let screen = finished(&term);
    assert_exit(&screen, 0);
    assert!(exists(&w.file("ran")));
    assert_eq!(
        fs::read_to_string(w.file("out.txt")).unwrap(),
        "from-stdin\nfrom-command\n",
        "the prompt leaked into the command's output, or the input was eaten"
    );
    // stderr is a file, not the terminal with the prompt: one line says that gate waits
    // (the person watching the agent's capture of it sees it), and nothing else.
    assert_eq!(
        fs::read_to_string(w.file("stderr.txt")).unwrap(),
        "gate: waiting up to 60 s for a person to approve this command at the prompt on \
         their terminal\n"
    );
}

#[test]
fn type_ahead_never_answers() {
    let w = World::new();
    // "y" is typed while the shell is still busy, before gate starts; then gate is let
    // go. The pending "y" must be discarded, not read as the answer.
    let term = w.start(
        "echo TYPE-NOW\n\
         while [ ! -e go ]; do sleep 0.02; done\n\
         $GATE -c 'touch ran'; report $?",
    );
    term.wait_text("TYPE-NOW");
    term.type_text("yyyy");
    // Echoed by the terminal in its normal mode: the keys are in its input queue.
    term.wait_for("the typed-ahead keys echoed", |s| {
        s.contains("TYPE-NOW\nyyyy")
    });
    fs::write(w.file("go"), "").unwrap();
    let screen = term.wait_text(PROMPT);
    assert!(!screen.contains("approved"), "{screen}");
    // Still waiting: Enter denies.
    term.keys(&["Enter"]);
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(screen.contains("gate: denied"), "{screen}");
    assert!(!exists(&w.file("ran")), "type-ahead approved the command");
}

#[test]
fn control_characters_in_the_command_are_shown_escaped() {
    let w = World::new();
    // The command clears the screen and sets a title if printed raw.
    let term = w.start("$GATE -c $'echo \\e[2J\\e]0;pwned\\a \\xe2\\x80\\xae done'; report $?");
    let screen = term.wait_text(PROMPT);
    assert!(
        screen.contains(r"command:   echo \x1b[2J\x1b]0;pwned\x07 \u{202e} done"),
        "{screen}"
    );
    assert!(screen.contains("control characters"), "{screen}");
    term.keys(&["Enter"]);
    assert_exit(&finished(&term), 126);
}

#[test]
fn a_long_command_is_wrapped_and_cut() {
    let w = World::new();
    let lines: Vec<String> = (1..=60).map(|i| format!("echo line-{i:02}")).collect();
    fs::write(w.file("long.sh"), lines.join("\n")).unwrap();
    let term = w.start("$GATE -c \"$(cat long.sh)\"; report $?");
    let screen = term.wait_text(PROMPT);
    assert!(screen.contains("echo line-01"), "{screen}");
    assert!(screen.contains("echo line-60"), "{screen}");
    assert!(screen.contains("rows left out"), "{screen}");
    assert!(!screen.contains("echo line-30"), "{screen}");
    term.keys(&["Enter"]);
    assert_exit(&finished(&term), 126);
}

// ---------------------------------------------------------------------------------------
// The question prompt (`gate ask`).

#[test]
fn a_question_is_answered_by_number() {
    let w = World::new();
    let term = w.start(
        "$GATE ask 'Which colour?' --option red --option green --option blue \
         > answer.txt 2>stderr.txt; report $?",
    );
    let screen = term.wait_text("answer: ");
    assert!(screen.contains("Which colour?"), "{screen}");
    assert!(screen.contains("2) green"), "{screen}");
    // No option 7: said so, and typed again.
    term.type_text("7");
    term.keys(&["Enter"]);
    term.wait_text("there is no option 7");
    term.keys(&["BSpace"]);
    term.type_text("2");
    term.keys(&["Enter"]);
    let screen = finished(&term);
    assert_exit(&screen, 0);
    assert_eq!(fs::read_to_string(w.file("answer.txt")).unwrap(), "green\n");
}

#[test]
fn a_question_takes_several_numbers_or_free_text() {
    let w = World::new();
    let term = w.start(
        "$GATE ask 'Which?' --option red --option green --option blue --multiple \
         > one.txt; echo \"ONE=$?\"\n\
         $GATE ask 'Why?' > two.txt; report $?",
    );
    term.wait_text("answer: ");
    term.type_text("3, 1");
    term.keys(&["Enter"]);
    term.wait_text("ONE=0");
    // The second answer line (the first stays on the screen as answered): drawn once
    // type-ahead has been discarded, so the text typed now is read.
    let screen = term.wait_for("the second question's answer line", |s| {
        s.matches("answer: ").count() >= 2
    });
    assert!(screen.contains("Why?"), "{screen}");
    term.type_text("because it is late");
    term.keys(&["Enter"]);
    let screen = finished(&term);
    assert_exit(&screen, 0);
    assert_eq!(
        fs::read_to_string(w.file("one.txt")).unwrap(),
        "blue, red\n"
    );
    assert_eq!(
        fs::read_to_string(w.file("two.txt")).unwrap(),
        "because it is late\n"
    );
}

#[test]
fn an_empty_line_declines_a_question() {
    let w = World::new();
    let term = w.start("$GATE ask 'Anything?' > answer.txt; report $?");
    term.wait_text("answer: ");
    term.type_text("   ");
    term.keys(&["Enter"]);
    let screen = finished(&term);
    assert_exit(&screen, 1);
    assert_eq!(fs::read_to_string(w.file("answer.txt")).unwrap(), "");
}

#[test]
fn ctrl_c_interrupts_a_question() {
    let w = World::new();
    let term = w.start("$GATE ask 'Anything?' > answer.txt; report $?");
    term.wait_text("answer: ");
    term.type_text("some");
    term.keys(&["C-c"]);
    let screen = finished(&term);
    assert_exit(&screen, 1);
    assert!(screen.contains("interrupted"), "{screen}");
    assert_eq!(fs::read_to_string(w.file("answer.txt")).unwrap(), "");
}

// ---------------------------------------------------------------------------------------
// When the terminal is not gate's to use.

#[test]
fn a_background_job_does_not_prompt() {
    let w = World::new();
    // Job control on: the background job has a process group of its own, which is not
    // the terminal's foreground group. It must not prompt (nor read the keys of the
    // foreground job); with no other approver, it is refused at once.
    let term = w.start(
        "$GATE -c 'touch ran' 2>stderr.txt &\n\
         wait $!; report $?",
    );
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(!screen.contains(PROMPT), "{screen}");
    assert!(!exists(&w.file("ran")));
    let stderr = fs::read_to_string(w.file("stderr.txt")).unwrap();
    assert!(stderr.contains("foreground"), "{stderr:?}");
}

#[test]
fn no_tty_turns_the_prompt_off() {
    let w = World::new();
    let term = w.start("$GATE --no-tty -c 'touch ran' 2>stderr.txt; report $?");
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(!screen.contains(PROMPT), "{screen}");
    assert!(!exists(&w.file("ran")));
}

#[test]
fn a_gate_the_shell_did_not_start_as_a_job_does_not_prompt() {
    let w = World::new();
    // Job control off: gate runs in the script's own process group, as a child of a
    // program that shares the terminal (an agent on its own terminal) would. Refused at
    // once, saying why.
    let term = w.start("set +m\n$GATE -c 'touch ran' 2>stderr.txt; report $?");
    let screen = finished(&term);
    assert_exit(&screen, 126);
    assert!(!screen.contains(PROMPT), "{screen}");
    assert!(!exists(&w.file("ran")));
    let stderr = fs::read_to_string(w.file("stderr.txt")).unwrap();
    assert!(stderr.contains("does not lead"), "{stderr:?}");
    assert!(stderr.contains("`gate watch`"), "{stderr:?}");
}
