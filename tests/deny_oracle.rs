//! The deny rules against the real shells (issues 15 and 22): every text of the
//! adversarial corpus and of a fixed-seed generated batch runs under bash, dash and zsh
//! in a sandbox with an exec tracer, and every program they executed that a deny rule
//! matches must have been refused by gate (the text stage). Each text also runs through
//! gate itself, with the same deny rules, under the same tracer: no exec of a denied
//! program may succeed there, whatever the text scanner said (the exec stage). Texts
//! the scanner cannot read at all (the gaps, and generated texts hidden the same ways)
//! get the exec stage alone. See tests/oracle/mod.rs and docs/rules.md, "How deny rules
//! are tested".
//!
//! `DENY_ORACLE_COUNT` (default 400) sets how many generated texts,
//! `DENY_ORACLE_HIDDEN_COUNT` (default 100) how many hidden ones, `DENY_ORACLE_SEED`
//! the seed, `DENY_ORACLE_SECONDS` a time budget after which no new text is started
//! (for long runs), `DENY_ORACLE_REPORT` a file for the figures and every miss.

use crate::common;
// fuzz/checks/deny_oracle.rs loads this module too (for the fuzzer, which has no
// tests/all.rs), so the test binary holds two copies; each keeps its own counters.
#[allow(clippy::duplicate_mod)]
mod oracle;

use std::sync::Mutex;
use std::thread;

use common::TestEnv;
use oracle::{Exec, Sandbox, Stages, Tally, Verdict};

/// Programs the sandbox and the corpus run (tests/ci.rs checks the package list has them).
const REQUIRED_TOOLS: &[&str] = &[
    "unshare",
    "mount",
    "umount",
    "pivot_root",
    "setpriv",
    "strace",
    "prlimit",
    "bash",
    "dash",
    "zsh",
    "env",
    "nice",
    "timeout",
    "nohup",
    "stdbuf",
    "setsid",
    "flock",
    "chroot",
    "sudo",
    "xargs",
    "watch",
    "ionice",
    "taskset",
    "runuser",
    "su",
    "find",
    "rbash",
    "sed",
    "perl",
    "python3",
    "make",
];

const DEFAULT_COUNT: usize = 400;
const DEFAULT_SEED: u64 = 15;
const DEFAULT_HIDDEN_COUNT: usize = 100;

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        Err(_) => default,
    }
}

/// gate's decision for `text` with these options, under an address-space limit and the
/// tests' deadline: a crash, a gate error or a hang fails the test.
fn verdict(env: &TestEnv, options: &[String], shell: &str, text: &str) -> Verdict {
    let out = env
        .gate()
        .program(common::require_program("prlimit"))
        .arg(format!("--as={}", oracle::GATE_MEMORY_LIMIT))
        .arg("--")
        .arg(common::GATE)
        .args([
            "check",
            "--no-config",
            "--audit-log",
            "off",
            "--json",
            "--shell",
            shell,
        ])
        .args(options)
        .arg("-c")
        .arg(text)
        .run();
    let code = out.code();
    assert!(
        matches!(code, Some(0..=2)),
        "gate check gave no verdict for {} with {options:?} (exit {code:?}, signal {:?}); stderr: {}",
        oracle::shorten(text),
        out.signal(),
        oracle::shorten(&out.stderr())
    );
    let json: serde_json::Value = serde_json::from_str(out.stdout().trim()).unwrap_or_else(|e| {
        panic!(
            "gate check --json printed no JSON for {}: {e}\n{}",
            oracle::shorten(text),
            out.report()
        )
    });
    Verdict {
        decision: json["decision"].as_str().unwrap_or_default().to_owned(),
        reason: json["reason"].as_str().unwrap_or_default().to_owned(),
    }
}

fn require_tools() {
    for tool in REQUIRED_TOOLS {
        common::require_program(tool);
    }
}

/// Both stages.
const BOTH: Stages = Stages {
    text: true,
    exec: true,
};

/// The exec stage alone (for texts the text stage cannot read).
const EXEC: Stages = Stages {
    text: false,
    exec: true,
};

/// A sandbox whose exec stage runs the gate under test.
fn sandbox() -> Sandbox {
    let mut sandbox = Sandbox::new();
    sandbox.gate = Some(common::GATE.into());
    sandbox
}

/// Check `texts` on two workers (the CI machine has two cores). `name` names the
/// batch's report ([`oracle::report_path`]).
fn check_all(name: &str, texts: Vec<(String, Stages)>) -> Tally {
    require_tools();
    let budget = std::env::var_os("DENY_ORACLE_SECONDS").map(|_| {
        std::time::Instant::now()
            + std::time::Duration::from_secs(env_number("DENY_ORACLE_SECONDS", 0))
    });
    let queue = Mutex::new(texts.into_iter().enumerate());
    let total = Mutex::new(Tally::default());
    thread::scope(|s| {
        for worker in 0..2 {
            let (queue, total) = (&queue, &total);
            s.spawn(move || {
                let sandbox = sandbox();
                let env = TestEnv::new();
                let mut tally = Tally::default();
                loop {
                    if budget.is_some_and(|b| std::time::Instant::now() >= b) {
                        break;
                    }
                    let next = queue.lock().unwrap().next();
                    let Some((_, (text, stages))) = next else {
                        break;
                    };
                    let mut judge = |options: &[String], shell: &str, text: &str| {
                        verdict(&env, options, shell, text)
                    };
                    oracle::check_text(&sandbox, &mut judge, &text, stages, &mut tally);
                    // A long run keeps its figures even if it is stopped.
                    if let Some(path) = oracle::report_path(name).filter(|_| tally.texts % 50 == 0)
                    {
                        oracle::write_report(
                            &oracle::beside(&path, &format!("worker{worker}")),
                            &tally,
                        );
                    }
                }
                total.lock().unwrap().add(tally);
            });
        }
    });
    total.into_inner().unwrap()
}

fn assert_no_misses(name: &str, what: &str, tally: &Tally) {
    eprintln!("{what}: {}", tally.summary());
    for example in tally.over_refusal_examples.iter().take(10) {
        eprintln!("  over-refusal: {example}");
    }
    if let Some(path) = oracle::report_path(name) {
        oracle::write_report(&path, tally);
    }
    let misses: Vec<String> = tally.misses.iter().map(|m| format!("  {m}")).collect();
    let exec_misses: Vec<String> = tally.exec_misses.iter().map(|m| format!("  {m}")).collect();
    assert!(
        misses.is_empty() && exec_misses.is_empty(),
        "{what}: {} misses (a denied program ran and gate did not refuse):\n{}\n\
         {} exec misses (a denied program ran through gate):\n{}",
        misses.len(),
        misses.join("\n"),
        exec_misses.len(),
        exec_misses.join("\n")
    );
}

/// Every corpus text, under every shell. Each must also run a denied program in at
/// least one shell (or it tests nothing).
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn every_corpus_text_that_runs_a_denied_program_is_refused() {
    let tally = check_all(
        "corpus",
        oracle::CORPUS
            .iter()
            .map(|t| ((*t).to_owned(), BOTH))
            .collect(),
    );
    let idle = tally.idle.clone();
    assert_no_misses("corpus", "corpus", &tally);
    assert!(
        idle.is_empty(),
        "corpus texts that ran no denied program in any shell (they test nothing): {idle:#?}"
    );
}

/// strace cannot run under the oracle's tracer (a process has one tracer), so these
/// are judged by gate alone: strace runs its operand, so each runs `rm`.
#[test]
fn commands_the_tracer_cannot_watch_are_refused() {
    let env = TestEnv::new();
    let options: Vec<String> = ["--level", "full", "--deny", "rm"]
        .map(String::from)
        .to_vec();
    let mut missed = Vec::new();
    for text in oracle::UNTRACEABLE {
        for shell in oracle::SHELLS {
            let verdict = verdict(&env, &options, shell, text);
            if !verdict.refused() {
                missed.push(format!(
                    "  {text:?} under {shell}: {} ({})",
                    verdict.decision, verdict.reason
                ));
            }
        }
    }
    assert!(missed.is_empty(), "misses:\n{}", missed.join("\n"));
}

#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn a_fixed_seed_generated_batch_has_no_misses() {
    let count = env_number("DENY_ORACLE_COUNT", DEFAULT_COUNT as u64) as usize;
    let seed = env_number("DENY_ORACLE_SEED", DEFAULT_SEED);
    let tally = check_all(
        "generated",
        oracle::generated(seed, count)
            .into_iter()
            .map(|t| (t, BOTH))
            .collect(),
    );
    // The generator must keep producing texts that run denied programs, or the batch
    // would pass without testing anything.
    assert!(
        tally.denied_ran * 5 >= tally.comparisons,
        "only {} of {} comparisons ran a denied program: the generator lost its teeth",
        tally.denied_ran,
        tally.comparisons
    );
    assert_no_misses(
        "generated",
        &format!("generated (seed {seed}, {count} texts)"),
        &tally,
    );
}

/// The texts the text stage cannot read: the exec stage alone stops what they run, and
/// each must try a denied program through gate (or it tests nothing).
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn every_gap_text_is_refused_at_exec() {
    let tally = check_all(
        "gaps",
        oracle::GAPS
            .iter()
            .map(|t| ((*t).to_owned(), EXEC))
            .collect(),
    );
    let idle = tally.exec_idle.clone();
    assert_no_misses("gaps", "gaps", &tally);
    assert!(
        idle.is_empty(),
        "gap texts that tried no denied program through gate in any shell (they test nothing): {idle:#?}"
    );
}

/// Generated texts handed to a shell where the text scanner cannot read them.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn a_fixed_seed_hidden_batch_has_no_exec_misses() {
    let count = env_number("DENY_ORACLE_HIDDEN_COUNT", DEFAULT_HIDDEN_COUNT as u64) as usize;
    let seed = env_number("DENY_ORACLE_SEED", DEFAULT_SEED);
    let tally = check_all(
        "hidden",
        oracle::hidden(seed, count)
            .into_iter()
            .map(|t| (t, EXEC))
            .collect(),
    );
    // The scanner must let most of them through, and they must keep trying denied
    // programs, or the exec stage is not what is tested.
    assert!(
        tally.gate_ran_shell * 2 >= tally.gate_runs && tally.denied_attempts * 5 >= tally.gate_runs,
        "of {} runs through gate, {} started the shell and {} denied execs were tried: the hidden batch lost its teeth",
        tally.gate_runs,
        tally.gate_ran_shell,
        tally.denied_attempts
    );
    assert_no_misses(
        "hidden",
        &format!("hidden (seed {seed}, {count} texts)"),
        &tally,
    );
}

/// The oracle's own ground truth: what the shell runs is seen (also by descriptor),
/// data is not a program, and a generated `rm -rf /` cannot touch the machine.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn the_oracle_sees_every_exec_and_contains_what_it_runs() {
    require_tools();
    let sandbox = Sandbox::new();
    let runs = sandbox.run(
        "echo rm victim; rm victim && /usr/bin/env ls -d .",
        oracle::SHELLS,
    );
    for (shell, run) in &runs {
        let want = [
            Exec {
                path: "/usr/bin/rm".into(),
                argv: vec!["rm".into(), "victim".into()],
            },
            Exec {
                path: "/usr/bin/env".into(),
                argv: vec!["/usr/bin/env".into(), "ls".into(), "-d".into(), ".".into()],
            },
            Exec {
                path: "/usr/bin/ls".into(),
                argv: vec!["ls".into(), "-d".into(), ".".into()],
            },
        ];
        assert_eq!(run.execs, want, "{shell}");
    }
    // An exec by descriptor (fexecve: execveat) is seen as the file it runs.
    let runs = sandbox.run(
        "python3 -c 'import os; os.execve(os.open(\"/usr/bin/rm\", os.O_RDONLY), [\"rm\", \"victim\"], {})'",
        &["/usr/bin/dash"],
    );
    assert_eq!(
        runs["/usr/bin/dash"].execs.last(),
        Some(&Exec {
            path: "/usr/bin/rm".into(),
            argv: vec!["rm".into(), "victim".into()],
        }),
        "{runs:?}"
    );
    // The host's files are out of reach.
    let env = TestEnv::new();
    let marker = env.write("marker", "keep");
    let text = format!(
        "rm -rf / {} 2>/dev/null; rm -f {}",
        env.root.display(),
        marker.display()
    );
    let runs = sandbox.run(&text, &["/usr/bin/bash"]);
    assert!(
        runs["/usr/bin/bash"]
            .execs
            .iter()
            .any(|e| e.argv.first().is_some_and(|a| a == "rm"))
    );
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap_or_default(),
        "keep",
        "the sandbox let a command reach the host"
    );
}

/// The exec stage's ground truth: in the oracle's sandbox (no CAP_SYS_ADMIN, no
/// CAP_SYS_PTRACE, under strace) gate's supervisor reads each exec and fails the denied
/// one with EACCES, lets the others run, and the trace shows both.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn the_exec_stage_sees_gate_refuse_a_denied_program_and_run_the_rest() {
    require_tools();
    let runs = sandbox().run_stages("printf 'rm victim' | bash; ls -d .", oracle::SHELLS, EXEC);
    for shell in oracle::SHELLS {
        let run = &runs.gate[*shell];
        let ran: Vec<&str> = run.execs.iter().map(|e| e.path.as_str()).collect();
        assert_eq!(
            ran,
            [*shell, "/usr/bin/bash", "/usr/bin/ls"],
            "{shell}: {run:?}"
        );
        let refused: Vec<(&[String], &str)> = run
            .failed
            .iter()
            .filter(|f| f.errno != "ENOENT")
            // gate's question to a supervisor above it, if any (an execve of `/`, which
            // runs nothing: see docs/rules.md, "A gate inside the command").
            .filter(|f| f.exec.path != "/")
            .map(|f| (f.exec.argv.as_slice(), f.errno.as_str()))
            .collect();
        assert_eq!(
            refused,
            [(["rm".to_owned(), "victim".to_owned()].as_slice(), "EACCES")],
            "{shell}: {run:?}"
        );
    }
    // A text the scanner refuses runs nothing: the trace holds gate alone.
    let runs = sandbox().run_stages("rm victim", &["/usr/bin/dash"], EXEC);
    let run = &runs.gate["/usr/bin/dash"];
    assert!(run.execs.is_empty() && run.failed.is_empty(), "{run:?}");
    assert_eq!(run.status, Some(common::REFUSED), "{run:?}");
}

/// The exec stage's controls: when gate's supervisor does not refuse a denied program
/// (here gate is given a deny rule that names another program), the oracle reports the
/// program that ran, with its text, shell and argv; when gate fails, the test fails.
#[test]
#[ignore = "root tier: cargo test --lib --test all -- --ignored, as root"]
fn the_exec_stage_reports_a_denied_program_that_ran_through_gate() {
    require_tools();
    let mut sandbox = sandbox();
    sandbox.gate_options = ["--no-config", "--audit-log", "off", "--level", "full"]
        .into_iter()
        .chain(["--deny", "no-such-program"])
        .map(String::from)
        .collect();
    let mut tally = Tally::default();
    let mut never = |_: &[String], _: &str, _: &str| -> Verdict {
        unreachable!("the exec stage alone asks gate check nothing")
    };
    let text = "printf 'rm victim' | bash";
    oracle::check_text(&sandbox, &mut never, text, EXEC, &mut tally);
    assert_eq!(tally.exec_misses.len(), oracle::SHELLS.len(), "{tally:?}");
    for miss in &tally.exec_misses {
        assert_eq!(miss.text, text);
        assert_eq!(miss.exec.argv, ["rm", "victim"]);
        assert_eq!(miss.rule, "rm");
        assert_eq!(miss.result, "0");
    }
    // And a gate that fails (125, here on an option it refuses) does not pass for one
    // that refused the text.
    sandbox.gate_options = vec!["--no-such-option".to_owned()];
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        oracle::check_text(&sandbox, &mut never, "true", EXEC, &mut Tally::default());
    }));
    let message = failed.expect_err("a gate that failed passed for one that refused");
    let message = message
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(
        message.contains("neither ran the shell nor was refused"),
        "{message}"
    );
}

#[test]
fn rule_matching_follows_the_documented_semantics() {
    let exec = |path: &str, argv: &[&str]| Exec {
        path: path.into(),
        argv: argv.iter().map(|a| (*a).into()).collect(),
    };
    let m = |rule: &str, e: &Exec| oracle::rule_matches(&oracle::rule_words(rule), e);
    assert!(m("rm", &exec("/usr/bin/rm", &["rm", "x"])));
    assert!(m("rm", &exec("/usr/bin/rm", &["anything"])));
    assert!(!m("rm", &exec("/usr/bin/rmdir", &["rmdir", "x"])));
    assert!(m("rm -rf", &exec("/usr/bin/rm", &["rm", "-rf", "/"])));
    assert!(!m("rm -rf", &exec("/usr/bin/rm", &["rm", "-fr", "/"])));
    assert!(!m("rm -rf", &exec("/usr/bin/rm", &["rm"])));
    assert!(m("/bin/rm", &exec("/bin/rm", &["rm"])));
    assert!(!m("/bin/rm", &exec("/usr/bin/rm", &["rm"])));
    assert!(m("A=1 rm", &exec("/usr/bin/rm", &["rm"])));
    // Run without argv (argc 0): the program, with no arguments.
    assert!(m("rm", &exec("/usr/bin/rm", &[])));
    assert!(!m("rm -rf", &exec("/usr/bin/rm", &[])));
}

/// Issue 15: a 40 KB `{a,b}{a,b}…` took gate 1.5 GB. Under a 1 GiB address-space limit
/// (40 KB, and 130 KB: just under the kernel's 128 KiB limit on one argument)
/// and the tests' deadline, gate must answer, and refuse the one that runs `rm`.
#[test]
fn a_brace_expansion_bomb_gets_a_verdict_within_bounds() {
    let env = TestEnv::new();
    let options: Vec<String> = ["--level", "full", "--deny", "rm"]
        .map(String::from)
        .to_vec();
    for copies in [8_000, 26_000] {
        let refused = verdict(
            &env,
            &options,
            "/usr/bin/bash",
            &oracle::brace_bomb(copies, true),
        );
        assert!(refused.refused(), "{copies} copies: {refused:?}");
        verdict(
            &env,
            &options,
            "/usr/bin/bash",
            &oracle::brace_bomb(copies, false),
        );
    }
}

#[test]
fn the_trace_parser_reads_interleaved_and_failed_execs() {
    let trace = "@@ /usr/bin/bash\n\
        7 execve(\"\\x2f\\x62\", [\"\\x62\"], 0x1 /* 3 vars */) = 0\n\
        8 execve(\"\\x2f\\x72\", [\"\\x72\", \"\\x78\"], 0x2 /* 3 vars */ <unfinished ...>\n\
        9 execve(\"\\x2f\\x71\", [], 0x2 /* 3 vars */) = -1 ENOENT (No such file or directory)\n\
        8 <... execve resumed>) = 0\n\
        @@= 0\n\
        4 execveat(3<\\x2f\\x64>, \"\", [\"\\x72\"], 0x2 /* 0 vars */, AT_EMPTY_PATH) = 0\n\
        4 execveat(AT_FDCWD, \"\\x71\", [\"\\x71\"], 0x2 /* 0 vars */, 0 <unfinished ...>\n\
        6 execveat(5<\\x2f\\x64>, \"\\x71\", [], 0x2 /* 0 vars */, 0) = -1 EACCES (Permission denied)\n\
        4 <... execveat resumed>) = 0\n\
        6 execve(\"\\x2f\\x6e\", NULL, NULL) = -1 EACCES (Permission denied)\n\
        3 execve(\"\\x2f\\x7a\", [], 0x2 /* 0 vars */) = ?\n\
        @@ gate /usr/bin/bash\n\
        5 execve(\"\\x2f\\x72\", [\"\\x72\"], 0x2 /* 3 vars */) = -1 EACCES (Permission denied)\n\
        @@= 125\n\
        @@# gate: it broke\n\
        @@! gate /usr/bin/bash\n";
    let runs = oracle::parse_trace(trace);
    let run = &runs["/usr/bin/bash"];
    assert_eq!(run.execs.len(), 4, "{run:?}");
    assert_eq!(
        run.execs[1],
        Exec {
            path: "/r".into(),
            argv: vec!["r".into(), "x".into()]
        }
    );
    // execveat: from the descriptor's directory, or the descriptor itself.
    let paths: Vec<&str> = run.execs.iter().map(|e| e.path.as_str()).collect();
    assert_eq!(paths, ["/b", "/r", "/d", "q"]);
    assert_eq!(run.failed.len(), 4, "{run:?}");
    // The process ended inside the call: no result.
    assert_eq!(run.failed[3].errno, "?");
    assert_eq!(
        run.failed[2].exec,
        Exec {
            path: "/n".into(),
            argv: vec![]
        }
    );
    assert_eq!(run.failed[0].errno, "ENOENT");
    assert_eq!(
        (
            run.failed[1].exec.path.as_str(),
            run.failed[1].errno.as_str()
        ),
        ("/d/q", "EACCES")
    );
    assert_eq!((run.status, run.timed_out), (Some(0), false));
    let gated = &runs["gate /usr/bin/bash"];
    assert!(gated.execs.is_empty(), "{gated:?}");
    assert_eq!(gated.failed[0].errno, "EACCES");
    assert_eq!(gated.failed[0].exec.argv, ["r"]);
    assert_eq!((gated.status, gated.timed_out), (Some(125), true));
    assert_eq!(gated.messages, ["gate: it broke"]);
}

/// The words of `text` as gate's shell word reader reads them in `quoting`; `None` when
/// it stops (an open quote, an expansion, a metacharacter).
fn reader_words(text: &str, quoting: gate::shells::Quoting) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut at = 0;
    loop {
        while matches!(text.as_bytes().get(at), Some(b' ' | b'\t')) {
            at += 1;
        }
        if at == text.len() {
            return Some(words);
        }
        let (word, stop) = gate::shells::words::read_word(text, at, quoting);
        if stop.is_some() || word.end == at {
            return None;
        }
        at = word.end;
        words.push(word.value);
    }
}

/// The words a real shell passes to `printf` for `text`, or `None` when the shell
/// refuses the text (a syntax error).
fn shell_words_of(shell: &[&str], text: &str, dir: &std::path::Path) -> Option<Vec<String>> {
    let program = common::require_program(shell[0]);
    let out = std::process::Command::new(program)
        .args(&shell[1..])
        .arg("-c")
        .arg(format!("printf '%s\\0' MARK {text}"))
        .current_dir(dir)
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("the shell runs");
    if !out.status.success() {
        return None;
    }
    let printed = String::from_utf8(out.stdout).expect("the texts make UTF-8 words");
    let mut words: Vec<String> = printed.split('\0').map(str::to_owned).collect();
    assert_eq!(words.pop().as_deref(), Some(""), "{text:?}: {printed:?}");
    assert_eq!(words.first().map(String::as_str), Some("MARK"), "{text:?}");
    Some(words.split_off(1))
}

/// A fixed-seed generator of word texts: quotes, backslashes, `$'…'` and `$"…"`, blanks,
/// a glob and non-ASCII, nothing that expands.
fn generated_word_texts(count: usize, mut seed: u64) -> Vec<String> {
    const PIECES: &[&str] = &[
        "a", "b", " ", "\t", "'", "\"", "\\", "$'", "$\"", "\\x41", "\\n", "\\'", "é", "*", "a b",
    ];
    let mut next = move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize
    };
    (0..count)
        .map(|_| {
            let len = next() % 10;
            (0..len).map(|_| PIECES[next() % PIECES.len()]).collect()
        })
        .collect()
}

/// gate's shell word reader (`gate::shells::words`, behind the read-only preset,
/// compound mode, the agents' wrappers and the allow rules' glob check; its quoting
/// rules are the deny scanner's) against the real shells: for every text, in the
/// reading gate has for that shell, the words it reads are the words the shell hands
/// `printf`, and a text it cannot read (an open quote) is one the shell refuses. Run in
/// an empty directory, so that a `*` stays itself.
#[test]
fn the_word_reader_reads_words_as_bash_dash_and_busybox_sh_do() {
    use gate::shells::Quoting;
    let dir = tempfile::tempdir().unwrap();
    let mut texts: Vec<String> = [
        "plain words",
        "'a b' \"c d\"",
        "a'b'\"c\"d",
        "'a'\"'\"'b'",
        "a\\ b \\'x\\'",
        "\"a\\\"b\\\\c\\d\\$e\\`f\"",
        "\"a$\" b$",
        "$'\\x72m' $'a\\'b'",
        "$'\\' x '",
        "$\"x y\"",
        "\"$'x'\"",
        "é'ü' \"ñ\"",
        "'' \"\" a''b",
        "'open",
        "\"open",
        "$'open",
        "\\'",
        "'*' \"*\" \\*",
        "\"a\\\nb\" a\\\nb",
    ]
    .map(str::to_owned)
    .to_vec();
    texts.extend(generated_word_texts(300, 27));
    let shells: [(&[&str], Quoting); 3] = [
        (&["bash"], Quoting::BASH),
        (&["dash"], Quoting::DASH),
        (&["busybox", "sh"], Quoting::BUSYBOX),
    ];
    let mut compared = 0;
    let mut misses = Vec::new();
    for (shell, quoting) in shells {
        for text in &texts {
            let ours = reader_words(text, quoting);
            let theirs = shell_words_of(shell, text, dir.path());
            match (&ours, &theirs) {
                (Some(a), Some(b)) if a == b => compared += 1,
                (None, None) => compared += 1,
                _ => misses.push(format!(
                    "{shell:?} {text:?}: gate {ours:?}, shell {theirs:?}"
                )),
            }
        }
    }
    assert!(
        misses.is_empty(),
        "{} misses:\n{}",
        misses.len(),
        misses.join("\n")
    );
    assert!(compared >= 900, "only {compared} texts compared");
}
