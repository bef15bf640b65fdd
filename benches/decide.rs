//! The work gate does before every exec: deciding, and loading a configuration.
//!
//! Targets (issue 2): `decide()` ≤ 20 µs with 10,000 allow rules; loading a configuration
//! file of 10,000 rules ≤ 5 ms. Run with `cargo bench --bench decide`.

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gate::config::{FileKind, merge, parse_file};
use gate::policy::{
    AllowRules, CommandText, DenyRules, Level, Origin, Policy, Remembered, Request, decide,
};

fn rule(i: usize) -> String {
    // Realistic shapes: a tool and a subcommand or two.
    format!("tool{} sub{} --flag{}", i % 97, i, i % 7)
}

fn policy(rules: usize, deny: &[&str]) -> Policy {
    let mut allow = AllowRules::new();
    for i in 0..rules {
        allow.add(&rule(i), Origin::BuiltIn).unwrap();
    }
    let mut deny_rules = DenyRules::new();
    for r in deny {
        deny_rules.add(r, Origin::BuiltIn).unwrap();
    }
    Policy {
        level: Level::Ask,
        level_origin: Origin::BuiltIn,
        allow,
        deny: deny_rules,
        compound: false,
        readonly: false,
        readonly_rules: false,
    }
}

fn bench_decide(c: &mut Criterion) {
    let mut group = c.benchmark_group("decide");
    let remembered = Remembered::new();
    for rules in [10, 1_000, 10_000] {
        let p = policy(rules, &[]);
        // A command that matches the last rule, with arguments after it.
        let hit = CommandText::new(format!("{} --verbose src/main.rs", rule(rules - 1)));
        // A command that matches nothing: every prefix is looked up and missed.
        let miss = CommandText::new("cargo test --workspace --all-features -- --nocapture");
        group.bench_with_input(BenchmarkId::new("allow-hit", rules), &p, |b, p| {
            b.iter(|| decide(black_box(p), &remembered, Request::Command(black_box(&hit))))
        });
        group.bench_with_input(BenchmarkId::new("ask-miss", rules), &p, |b, p| {
            b.iter(|| {
                decide(
                    black_box(p),
                    &remembered,
                    Request::Command(black_box(&miss)),
                )
            })
        });
    }
    // Deny rules read the command's shell structure: a compound command with ten deny
    // rules, at 10,000 allow rules.
    let p = policy(
        10_000,
        &[
            "rm -rf",
            "git push --force",
            "curl",
            "wget",
            "sudo",
            "dd",
            "mkfs",
            "shutdown",
            "reboot",
            "chmod -R 777",
        ],
    );
    let compound = CommandText::new(
        "cd /work && FOO=1 env nohup timeout 60 cargo test -- --nocapture 2>&1 | tee log.txt; echo \"$(date)\" done",
    );
    group.bench_function("deny-scan-compound/10000", |b| {
        b.iter(|| {
            decide(
                black_box(&p),
                &remembered,
                Request::Command(black_box(&compound)),
            )
        })
    });
    // readonly_rules: a read-only rule matched by a long git diff (the rule and the
    // command both go through the read-only checks), at 10,000 allow rules.
    let mut p = policy(10_000, &[]);
    p.allow.add("git diff", Origin::BuiltIn).unwrap();
    p.readonly_rules = true;
    let paths: String = (0..60)
        .map(|i| format!(" src/module{i}/file{i}.rs"))
        .collect();
    let diff = CommandText::new(format!("git diff --stat --color=never HEAD~3 --{paths}"));
    assert!(diff.as_str().len() > 1000);
    for (name, command) in [
        ("readonly-rules-hit/1KB", &diff),
        (
            "readonly-rules-hit/short",
            &CommandText::new("git diff --stat"),
        ),
    ] {
        assert!(matches!(
            decide(&p, &remembered, Request::Command(command)),
            gate::policy::Decision::Allow(_)
        ));
        group.bench_function(name, |b| {
            b.iter(|| {
                decide(
                    black_box(&p),
                    &remembered,
                    Request::Command(black_box(command)),
                )
            })
        });
    }
    group.finish();
}

fn config_text(rules: usize) -> String {
    let mut text =
        String::from("level = \"ask\"\ndeny = [\"rm -rf\", \"git push --force\"]\nallow = [\n");
    for i in 0..rules {
        text.push_str(&format!("  \"{}\",\n", rule(i)));
    }
    text.push_str("]\n[approval]\ntimeout = 30\n[audit]\nlog = \"/var/log/gate.jsonl\"\n");
    text
}

fn bench_config(c: &mut Criterion) {
    let mut group = c.benchmark_group("config-load");
    for rules in [10, 10_000] {
        let text = config_text(rules);
        group.bench_with_input(BenchmarkId::new("parse+merge", rules), &text, |b, text| {
            // The settings live until gate execs, so their drop is not part of loading.
            b.iter_with_large_drop(|| {
                let layer = parse_file(
                    Path::new("/etc/gate/config.toml"),
                    black_box(text),
                    FileKind::System,
                    None,
                )
                .unwrap();
                merge(vec![layer], Vec::new()).unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench_decide, bench_config);
criterion_main!(benches);
