//! Recognising an agent's wrapper: what it adds to a decision.
//!
//! Target (issue 5): wrapper recognition adds ≤ 50 µs to a decision for a 1 KB command.
//! Run with `cargo bench --bench wrapper`.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gate::policy::readonly::Files;
use gate::policy::wrapper::{resembles, unwrap};
use gate::policy::{
    AllowRules, CommandText, DenyRules, Level, Origin, Policy, Remembered, Request, decide,
};

/// A command of about `len` bytes with quotes, spaces and shell characters in it.
fn command(len: usize) -> String {
    let mut s = String::from("cargo test --workspace");
    let mut i = 0;
    while s.len() < len {
        s.push_str(&format!(" --flag{i}='it'\"'s\" -x{i}"));
        i += 1;
    }
    s.truncate(len);
    s
}

fn claude(inner: &str) -> String {
    format!(
        "source /home/alice/.claude/shell-snapshots/snapshot-bash-1788557415117-j0hu0n.sh 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && {{ \\builtin unalias -- 'unsetenv'; \\builtin unset -f -- 'unsetenv'; }} >/dev/null 2>&1 || true && eval '{}' < /dev/null && pwd -P >| /tmp/claude-f8eb-cwd",
        inner.replace('\'', "'\"'\"'")
    )
}

fn gemini(inner: &str) -> String {
    format!(
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; {{ {inner}; }}; __code=$?; pgrep -g 0 >/tmp/shell_pgrep_5a63468e1d38.tmp 2>&1; exit $__code;"
    )
}

/// Gemini CLI 0.44 and later: the command on lines of its own, in a subshell with an
/// EXIT trap; what follows the command is matched from the end of the text.
fn gemini_trap(inner: &str) -> String {
    format!(
        "shopt -u promptvars nullglob extglob nocaseglob dotglob; _bgpids_file=/tmp/gemini-shell-dERLen/bgpids.tmp\n(\n  trap 'jobs -p > \"$_bgpids_file\"' EXIT\n{inner}\n)\n__code=$?\nexit $__code"
    )
}

fn policy() -> Policy {
    let mut allow = AllowRules::new();
    for i in 0..1_000 {
        allow
            .add(&format!("tool{} sub{i}", i % 97), Origin::BuiltIn)
            .unwrap();
    }
    allow.add("cargo test", Origin::BuiltIn).unwrap();
    let mut deny = DenyRules::new();
    for r in ["rm -rf", "git push --force", "curl", "sudo"] {
        deny.add(r, Origin::BuiltIn).unwrap();
    }
    Policy {
        allow,
        deny,
        ..Policy::at(Level::Ask, Origin::BuiltIn)
    }
}

fn bench_unwrap(c: &mut Criterion) {
    let mut group = c.benchmark_group("wrapper");
    for len in [64, 1024, 16 * 1024] {
        let inner = command(len);
        let plain_inner = inner.replace(['\'', '"'], "");
        let cases = [
            ("claude-latest", claude(&inner)),
            ("claude-latest-no-quotes", claude(&plain_inner)),
            ("gemini", gemini(&inner)),
            ("gemini-trap", gemini_trap(&inner)),
            // A newer Gemini CLI than gate knows: every template refused, then the
            // marks that say what it looks like.
            (
                "gemini-unknown+resembles",
                gemini_trap(&inner).replace("jobs -p", "jobs -pr"),
            ),
            // Not a wrapper: every template is tried and refused.
            ("plain-command", inner.clone()),
            // A wrapper with its last byte changed: refused at the very end.
            ("near-miss-at-end", {
                let mut t = claude(&inner);
                t.pop();
                t.push('X');
                t
            }),
        ];
        for (name, text) in cases {
            group.bench_with_input(BenchmarkId::new(name, len), &text, |b, text| {
                b.iter(|| {
                    let text = black_box(text.as_str());
                    unwrap(text)
                        .map(|u| u.template)
                        .or_else(|| resembles(text).map(|f| f.agent))
                })
            });
        }
    }
    group.finish();

    // The whole decision for a 1 KB command through the Claude Code wrapper: unwrapping
    // and deciding on the inner command, against deciding on the text as it came.
    let mut group = c.benchmark_group("decision-1KiB");
    let p = policy();
    let remembered = Remembered::new();
    let text = claude(&command(1024));
    group.bench_function("whole-text", |b| {
        b.iter(|| {
            let t = CommandText::new(black_box(text.as_str()));
            decide(&p, &remembered, Request::Command(&t), &Files::default())
        })
    });
    group.bench_function("unwrap+inner", |b| {
        b.iter(|| {
            let text = black_box(text.as_str());
            let judged = unwrap(text).map_or(Default::default(), |u| u.inner.into_owned());
            let t = CommandText::new(judged);
            decide(&p, &remembered, Request::Command(&t), &Files::default())
        })
    });
    group.finish();
}

criterion_group!(benches, bench_unwrap);
criterion_main!(benches);
