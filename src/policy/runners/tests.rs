use super::*;

/// (rule, command): the rule covers the command.
const COVERED: &[(&str, &str)] = &[
    ("make", "make"),
    ("make", "make test"),
    ("make", "make -j4 -k all"),
    ("make", "make -n --debug=b"),
    ("make", "make --no-print-directory test"),
    ("make -f ci.mk", "make -f ci.mk test"),
    ("make SHELL=/bin/bash", "make SHELL=/bin/bash test"),
    ("make", "make src/*.o"),
    ("npm test", "npm test"),
    ("npm test", "npm test -- --watch"),
    ("npm test", "npm test -- -t parser"),
    ("npm test", "npm test -- tests/a.test.js"),
    ("npm run", "npm run build"),
    ("npm", "npm run lint --silent"),
    ("npm test", "npm test --no-audit"),
    ("pnpm test", "pnpm test --silent"),
    ("yarn test", "yarn test --watchAll=false"),
    ("cargo test", "cargo test"),
    ("cargo test", "cargo test -p gate --lib policy::"),
    ("cargo test", "cargo test -- --nocapture --test-threads 1"),
    ("cargo build", "cargo build --release --features x"),
    (
        "cargo build",
        "cargo build --target x86_64-unknown-linux-musl",
    ),
    ("cargo build", "cargo build --target-dir target/x"),
    ("cargo test", "cargo test -- --config"),
    ("pytest", "pytest"),
    ("pytest", "pytest tests/ -k parser -x -q"),
    ("pytest", "pytest --co -q"),
    ("pytest", "pytest --pdb"),
    ("pytest", "pytest --cov=src"),
    ("pytest", "pytest -p no:cacheprovider"),
    ("pytest", "pytest -pno:cacheprovider"),
    ("pytest", "pytest -vx tests/test_*.py"),
    ("pytest", "pytest -k 'not slow'"),
    ("python3 -m pytest", "python3 -m pytest -q"),
    ("go test", "go test ./..."),
    ("go test", "go test -run TestX -v -count=1 ./pkg"),
    ("go test", "go test -race -cover ./..."),
    ("go test", "go test ./x -args -exec=y"),
    ("tox", "tox -e py311"),
    ("tox", "tox -e py311 -- -k parser"),
    ("tox", "tox -p auto"),
    ("ls", "ls --script-shell=x"),
    ("git", "git -c core.pager=x log"),
];

/// (rule, command, word refused).
const REFUSED: &[(&str, &str, &str)] = &[
    ("make", "make SHELL=./x", "SHELL=./x"),
    ("make", "make CC=./pwn.sh all", "CC=./pwn.sh"),
    ("make", "make .SHELLFLAGS=-c", ".SHELLFLAGS=-c"),
    ("make", "make MAKEFLAGS=-fx", "MAKEFLAGS=-fx"),
    ("make", "make 'X!=touch PWNED'", "X!=touch PWNED"),
    ("make", "make -- SHELL=./x", "SHELL=./x"),
    ("make test", "make test SHELL=./x", "SHELL=./x"),
    ("make", "make -f evil.mk", "-f"),
    ("make", "make -sfevil.mk", "-sfevil.mk"),
    ("make", "make --file=evil.mk", "--file=evil.mk"),
    ("make", "make --makefile evil.mk", "--makefile"),
    ("make", "make --fil=evil.mk", "--fil=evil.mk"),
    ("make", "make -C /tmp/x", "-C"),
    ("make", "make --dir=/tmp/x", "--dir=/tmp/x"),
    ("make", "make -I /tmp/x", "-I"),
    ("make", "make --eval=x", "--eval=x"),
    ("make", "make -E x", "-E"),
    ("make", "make *", "*"),
    ("make", "make SH*", "SH*"),
    ("make", "make # SHELL=./x", "SHELL=./x"),
    ("make -f ci.mk", "make -f ci.mk -f evil.mk", "-f"),
    (
        "npm test",
        "npm test --script-shell=./pwn.sh",
        "--script-shell=./pwn.sh",
    ),
    (
        "npm test",
        "npm test --script-shell ./pwn.sh",
        "--script-shell",
    ),
    (
        "npm test",
        "npm test --script-sh=./pwn.sh",
        "--script-sh=./pwn.sh",
    ),
    (
        "npm test",
        "npm test --script_shell=./pwn.sh",
        "--script_shell=./pwn.sh",
    ),
    (
        "npm test",
        "npm test --node-options=--require=./x",
        "--node-options=--require=./x",
    ),
    ("npm test", "npm test --userconfig ./rc", "--userconfig"),
    ("npm test", "npm test --prefix /tmp/other", "--prefix"),
    ("npm test", "npm test -C /tmp/other", "-C"),
    ("npm", "npm --script-shell=./x test", "--script-shell=./x"),
    ("npm test", "npm test -- --require ./pwn.js", "--require"),
    ("npm test", "npm test -- -r ./pwn.js", "-r"),
    (
        "npm test",
        "npm test -- --setupFiles ./pwn.js",
        "--setupFiles",
    ),
    (
        "npm test",
        "npm test -- --setup-files=./pwn.js",
        "--setup-files=./pwn.js",
    ),
    (
        "npm test",
        "npm test -- --config ./pwn.config.js",
        "--config",
    ),
    (
        "npm test",
        "npm test -- --import=./pwn.mjs",
        "--import=./pwn.mjs",
    ),
    (
        "npm run test",
        "npm run test --script-shell=./x",
        "--script-shell=./x",
    ),
    ("npm test", "npm test *", "*"),
    (
        "pnpm test",
        "pnpm test --config.script-shell=./x",
        "--config.script-shell=./x",
    ),
    ("pnpm", "pnpm --dir /tmp/x test", "--dir"),
    ("yarn test", "yarn test --require ./pwn.js", "--require"),
    ("yarn", "yarn --cwd /tmp/x test", "--cwd"),
    (
        "cargo test",
        "cargo test --config build.rustc-wrapper='./x'",
        "--config",
    ),
    (
        "cargo build",
        "cargo build --config=x.toml",
        "--config=x.toml",
    ),
    (
        "cargo build",
        "cargo build -Zunstable-options",
        "-Zunstable-options",
    ),
    (
        "cargo test",
        "cargo test --manifest-path /tmp/x/Cargo.toml",
        "--manifest-path",
    ),
    (
        "cargo build",
        "cargo build --target ./evil.json",
        "--target",
    ),
    (
        "cargo build",
        "cargo build --target=evil.json",
        "--target=evil.json",
    ),
    ("pytest", "pytest -p pwn", "-p"),
    ("pytest", "pytest -ppwn", "-ppwn"),
    ("pytest", "pytest -vp pwn", "-vp"),
    ("pytest", "pytest -c /tmp/pytest.ini", "-c"),
    (
        "pytest",
        "pytest --config-file=/tmp/x.ini",
        "--config-file=/tmp/x.ini",
    ),
    ("pytest", "pytest --rootdir=/tmp", "--rootdir=/tmp"),
    ("pytest", "pytest -o pythonpath=/tmp", "-o"),
    (
        "pytest",
        "pytest --override-ini=addopts=-ppwn",
        "--override-ini=addopts=-ppwn",
    ),
    ("pytest", "pytest --confcutdir=/", "--confcutdir=/"),
    ("pytest", "pytest --pyargs pwn", "--pyargs"),
    ("pytest", "pytest --pdbcls=pwn:X", "--pdbcls=pwn:X"),
    ("pytest", "pytest -W error::pwn.W", "-W"),
    (
        "pytest",
        "pytest --basetemp=/home/me",
        "--basetemp=/home/me",
    ),
    ("pytest", "pytest @args.txt", "@args.txt"),
    ("pytest", "pytest --confc=/", "--confc=/"),
    ("python3 -m pytest", "python3 -m pytest -p pwn", "-p"),
    ("go test", "go test -exec ./x ./...", "-exec"),
    ("go test", "go test --exec=./x", "--exec=./x"),
    ("go test", "go test -toolexec=./x", "-toolexec=./x"),
    ("go test", "go test -vettool ./x", "-vettool"),
    ("go test", "go test -overlay o.json", "-overlay"),
    ("go test", "go test -modfile /tmp/go.mod", "-modfile"),
    (
        "go test",
        "go test -ldflags=-extld=./x",
        "-ldflags=-extld=./x",
    ),
    ("go build", "go build -C /tmp/x", "-C"),
    ("go", "go run -exec ./x .", "-exec"),
    ("tox", "tox -c /tmp/tox.ini", "-c"),
    ("tox", "tox -x testenv.commands=./x", "-x"),
    (
        "tox",
        "tox --override=testenv.commands=./x",
        "--override=testenv.commands=./x",
    ),
    ("tox", "tox --discover ./python", "--discover"),
    ("tox", "tox --installpkg /tmp/x.whl", "--installpkg"),
    ("tox", "tox -e py -- -p pwn", "-p"),
];

#[test]
fn a_rule_covers_the_runners_ordinary_options() {
    for (rule, command) in COVERED {
        assert_eq!(check(rule, command), Ok(()), "{rule} / {command}");
    }
}

#[test]
fn an_option_that_loads_other_code_is_not_covered_by_the_rule() {
    for (rule, command, word) in REFUSED {
        match check(rule, command) {
            Err(refusal) => assert_eq!(refusal.word, *word, "{rule} / {command}"),
            Ok(()) => panic!("`{rule}` covers `{command}`"),
        }
    }
}

#[test]
fn an_abbreviation_is_named_as_the_option_it_stands_for() {
    let refusal = check("make", "make --fil=x").unwrap_err();
    assert!(
        refusal.why.contains("is read as `--file`"),
        "{}",
        refusal.why
    );
    assert_eq!(
        refusal.to_string(),
        format!("`make`: `--fil=x` {}", refusal.why)
    );
}

#[test]
fn every_runner_in_the_table_refuses_something_and_is_named_by_plain_words() {
    for runner in RUNNERS {
        assert!(!runner.refused.is_empty(), "{:?}", runner.command);
        assert!(
            runner
                .command
                .iter()
                .all(|w| !w.is_empty() && !w.contains(' ')),
            "{:?}",
            runner.command
        );
        for list in runner.refused.iter().chain(runner.after_dashes) {
            for refused in list.refused {
                assert!(!refused.why.is_empty());
                for name in refused.names {
                    assert!(name.starts_with('-'), "{name}");
                    assert!(!name.contains('='), "{name}");
                }
            }
        }
    }
}
