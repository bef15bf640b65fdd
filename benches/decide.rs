//! The work gate does before every exec: deciding, and loading a configuration.
//!
//! Targets (issue 2): `decide()` ≤ 20 µs with 10,000 allow rules; loading a configuration
//! file of 10,000 rules ≤ 5 ms. Run with `cargo bench --bench decide`.

use std::hint::black_box;
use std::path::Path;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gate::config::{FileKind, merge, parse_file};
use gate::policy::readonly::Files;
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
        allow,
        deny: deny_rules,
        ..Policy::at(Level::Ask, Origin::BuiltIn)
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
            b.iter(|| {
                decide(
                    black_box(p),
                    &remembered,
                    Request::Command(black_box(&hit)),
                    &Files::default(),
                )
            })
        });
        group.bench_with_input(BenchmarkId::new("ask-miss", rules), &p, |b, p| {
            b.iter(|| {
                decide(
                    black_box(p),
                    &remembered,
                    Request::Command(black_box(&miss)),
                    &Files::default(),
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
                &Files::default(),
            )
        })
    });
    // Issue 15's target: ten deny rules on a 1 KB command of the shapes the scanner
    // reads (here-document, wrappers with long options, substitutions, braces, globs),
    // and the same command with no deny rules (the scanner must cost nothing then).
    let kilobyte = CommandText::new(
        [
            "cd /work/project && cat > notes.txt <<EOF",
            "Don't forget: the build's output goes to target/{debug,release}.",
            "Generated on $(date -u +%Y-%m-%dT%H:%M:%SZ) by `whoami`.",
            "EOF",
            "FOO=1 BAR[0]=2 env --chdir=/work/project nice --adjustment=5 timeout --signal=TERM 600 \\",
            "  cargo test --workspace --all-features -- --nocapture 2>&1 | tee test-{a,b}.log",
            "for f in src/*.rs tests/*.rs; do grep -n 'TODO' \"$f\" >/dev/null && echo \"$f\"; done",
            "find . -name '*.orig' -exec ls -l {} + ; xargs --max-args=4 echo < /dev/null",
            "bash --norc -c 'git status --short && git log --oneline -n 5' 2>/dev/null || true",
            "stdbuf --output=L sed -n '1,20p' README.md | head -n {1..3} >/dev/null; echo ${HOME:-/root} done",
            "printf '%s\\n' $'tab\\there' {x..z} | sort -u | uniq -c > counts.txt; wc -l counts.txt",
            "echo \"$(ls -la /work/project/target 2>/dev/null | wc -l) files\"; test -d build && echo build",
            "if [ -f Cargo.lock ]; then cargo metadata --format-version 1 --no-deps > meta.json; fi",
            "git diff --stat HEAD~1 -- src/ tests/ docs/ | tail -n 1; echo \"exit status: $?\" >> summary.txt",
        ]
        .join("\n"),
    );
    assert!(
        kilobyte.as_str().len() >= 1000,
        "{}",
        kilobyte.as_str().len()
    );
    let mut p = policy(
        10,
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
    p.level = Level::Full;
    group.bench_function("deny-scan-1KB/10-deny-rules", |b| {
        b.iter(|| {
            decide(
                black_box(&p),
                &remembered,
                Request::Command(black_box(&kilobyte)),
                &Files::default(),
            )
        })
    });
    let mut p = policy(10, &[]);
    p.level = Level::Full;
    group.bench_function("deny-scan-1KB/no-deny-rules", |b| {
        b.iter(|| {
            decide(
                black_box(&p),
                &remembered,
                Request::Command(black_box(&kilobyte)),
                &Files::default(),
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
    // The edge tells the preset what each name is: here, every one a plain file.
    let files_for = |command: &CommandText| {
        use gate::policy::readonly::{Found, Kind, Place, Query, file_queries};
        let mut files = Files::default();
        for query in file_queries(command.as_str(), false) {
            let (Query::Path(name) | Query::Home(name)) = &query;
            let place = Place {
                path: Path::new("/work/project").join(name),
                kind: Kind::File,
                links: 1,
                on_proc: false,
            };
            files.insert(query, Found::At(place));
        }
        files
    };
    for (name, command) in [
        ("readonly-rules-hit/1KB", &diff),
        (
            "readonly-rules-hit/short",
            &CommandText::new("git diff --stat"),
        ),
    ] {
        let files = files_for(command);
        let decision = decide(&p, &remembered, Request::Command(command), &files);
        assert!(
            matches!(decision, gate::policy::Decision::Allow(_)),
            "{name}: {decision:?}"
        );
        group.bench_function(name, |b| {
            b.iter(|| {
                decide(
                    black_box(&p),
                    &remembered,
                    Request::Command(black_box(command)),
                    &files,
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

/// The file `gate import claude` writes for the settings bench/import_rules.sh uses:
/// 350 word prefixes, 50 exact commands, 50 asks and 50 denies, each from its line.
fn imported_text() -> String {
    use gate::import::plan::{Planned, toml};
    use gate::import::{GateRule, RuleKind, Source};
    let settings = Path::new("/home/me/.claude/settings.json");
    let shapes = [
        (RuleKind::Allow, "run", false, 350),
        (RuleKind::Allow, "status", true, 50),
        (RuleKind::Ask, "push", false, 50),
        (RuleKind::Deny, "destroy", false, 50),
    ];
    let mut rules = Vec::new();
    for (kind, word, exact, count) in shapes {
        for i in 0..count {
            rules.push(Planned {
                rule: GateRule {
                    kind,
                    text: format!("tool{i} {word}"),
                    exact,
                    examples: Vec::new(),
                },
                from: Source {
                    path: settings.to_path_buf(),
                    line: u32::try_from(rules.len() + 4).unwrap(),
                    text: String::new(),
                },
            });
        }
    }
    toml("claude", &rules, &[settings])
}

/// Issue 25's target: a 500-rule imported policy costs at most 0.1 ms more to load
/// than the user file alone (bench/import_rules.sh measures the whole run).
fn bench_import(c: &mut Criterion) {
    let mut group = c.benchmark_group("import-load");
    let user = "level = \"ask\"\nallow = [\"echo hi\"]\ndeny = [\"never-run-this\"]\n";
    let imported = imported_text();
    let load = |files: &[(&str, &str)]| {
        let layers = files
            .iter()
            .map(|(path, text)| parse_file(Path::new(path), text, FileKind::User, None).unwrap())
            .collect();
        merge(layers, Vec::new()).unwrap()
    };
    group.bench_function("user-file", |b| {
        b.iter_with_large_drop(|| load(&[("/home/me/.config/gate/config.toml", black_box(user))]))
    });
    group.bench_function("user-file+500-imported", |b| {
        b.iter_with_large_drop(|| {
            load(&[
                ("/home/me/.config/gate/config.toml", black_box(user)),
                (
                    "/home/me/.config/gate/config.d/import-claude.toml",
                    black_box(&imported),
                ),
            ])
        })
    });
    group.finish();
}

criterion_group!(benches, bench_decide, bench_config, bench_import);
criterion_main!(benches);
