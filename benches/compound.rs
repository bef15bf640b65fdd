//! Compound mode's splitting. Target (issue 5): it adds at most 50 µs to a decision for
//! a 1 KB command. Run with `cargo bench --bench compound`.
//!
//! - `compound-1k`: 1 KB of plain simple commands joined by `&&`, `||`, `;` and `|`,
//!   as many as compound mode takes (16), the worst case: every part is scanned,
//!   checked and parsed, and the split succeeds.
//! - `plain-1k`: one 1 KB simple command with quoted arguments and no operator.
//! - `refused-1k`: the compound command with `&& echo $(id)` after it: refused by gate's
//!   own scan before the parser runs.
//! - `short-parts-1k`: 1 KB of `ls -l && pwd; ...`, about 90 parts: refused as soon as
//!   the scan passes 16 parts.
//! - `short`: a typical agent command, `cargo build && cargo test -- --nocapture`.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use gate::policy::compound::{MAX_PARTS, split};

/// About 1 KB of simple commands of plain words, as many as compound mode takes, joined
/// by every operator in turn.
fn compound_1k() -> String {
    let operators = [" && ", " || ", "; ", " | "];
    let mut text = String::new();
    for i in 0..MAX_PARTS {
        if i > 0 {
            text.push_str(operators[i % operators.len()]);
        }
        text.push_str(&format!(
            "git log --oneline -n {i} -- 'src/policy/file {i}.rs' docs/x{i}.md"
        ));
    }
    text
}

/// About 1 KB of short simple commands.
fn short_parts_1k() -> String {
    let mut text = String::from("ls -l");
    while text.len() < 1000 {
        text.push_str(" && pwd; ls -l");
    }
    text
}

/// One simple command of about 1 KB.
fn plain_1k() -> String {
    let mut text = String::from("git commit -m");
    let mut i = 0;
    while text.len() < 1000 {
        text.push_str(&format!(" word{i} 'quoted {i}'"));
        i += 1;
    }
    text
}

fn bench_split(c: &mut Criterion) {
    let compound = compound_1k();
    let plain = plain_1k();
    let refused = format!("{compound} && echo $(id)");
    let short_parts = short_parts_1k();
    let short = "cargo build && cargo test -- --nocapture".to_owned();
    assert!((950..=1100).contains(&compound.len()), "{}", compound.len());
    assert_eq!(split(&compound).map(|parts| parts.len()), Some(MAX_PARTS));
    assert_eq!(split(&short_parts), None);
    assert_eq!(split(&plain).map(|parts| parts.len()), Some(1));
    assert_eq!(split(&refused), None);
    assert_eq!(split(&short).map(|parts| parts.len()), Some(2));

    let mut group = c.benchmark_group("compound");
    for (name, text) in [
        ("compound-1k", &compound),
        ("plain-1k", &plain),
        ("refused-1k", &refused),
        ("short-parts-1k", &short_parts),
        ("short", &short),
    ] {
        group.bench_function(name, |b| b.iter(|| split(black_box(text))));
    }
    group.finish();
}

criterion_group!(benches, bench_split);
criterion_main!(benches);
