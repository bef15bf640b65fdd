use super::super::{check, check_in};
use super::*;

fn at(path: &str, kind: Kind) -> Found {
    Found::At(Place {
        path: PathBuf::from(path),
        kind,
        links: 1,
        on_proc: path.starts_with("/proc"),
    })
}

/// A working directory `/work` with a link to a key, a hard link, a FIFO, and the
/// home directory `/home/me`, whose `.ssh` is protected.
fn facts(here: &str) -> Files {
    let mut files = Files::new(vec![
        Protected {
            path: PathBuf::from("/home/me/.ssh"),
            what: "hidden".to_owned(),
        },
        Protected {
            path: PathBuf::from("/home/me/.local/state/gate"),
            what: "gate's".to_owned(),
        },
    ]);
    let path = |p: &str| Query::Path(p.to_owned());
    for (name, found) in [
        (".", at(here, Kind::Directory)),
        ("notes", at("/work/notes", Kind::File)),
        ("link", at("/home/me/.ssh/id_rsa", Kind::File)),
        ("./link", at("/home/me/.ssh/id_rsa", Kind::File)),
        ("src", at("/work/src", Kind::Directory)),
        ("home", at("/home/me", Kind::Directory)),
        ("/", at("/", Kind::Directory)),
        ("/proc", at("/proc", Kind::Directory)),
        ("/proc/self/environ", at("/proc/4242/environ", Kind::File)),
        ("/proc/1/cmdline", at("/proc/1/cmdline", Kind::File)),
        ("/proc/self/status", at("/proc/4242/status", Kind::File)),
        ("/proc/cpuinfo", at("/proc/cpuinfo", Kind::File)),
        ("/proc/kcore", at("/proc/kcore", Kind::File)),
        ("/dev/null", at("/dev/null", Kind::CharDevice)),
        ("/dev/sda", at("/dev/sda", Kind::BlockDevice)),
        ("/dev/tty", at("/dev/tty", Kind::CharDevice)),
        ("fifo", at("/work/fifo", Kind::Fifo)),
        (
            "log",
            at("/home/me/.local/state/gate/audit.jsonl", Kind::File),
        ),
        ("/etc/hostname", at("/etc/hostname", Kind::File)),
        (
            "hard",
            Found::At(Place {
                path: PathBuf::from("/work/hard"),
                kind: Kind::File,
                links: 2,
                on_proc: false,
            }),
        ),
        ("loop", Found::Unknown("too many links".to_owned())),
    ] {
        files.insert(path(name), found);
    }
    files
}

/// What the edge would tell for `command`: the facts above for the names it asks
/// about, nothing there for the rest. Every name the check consults must be one the
/// queries asked for, or it is refused as not looked at.
fn told(command: &str, files: &Files) -> Files {
    let mut told = Files::new(files.protected().to_vec());
    for query in super::super::file_queries(command, false) {
        let found = files.get(&query).cloned().unwrap_or(Found::Missing);
        told.insert(query, found);
    }
    told
}

fn verdict(command: &str, files: &Files) -> Result<&'static str, String> {
    check(command, &told(command, files))
        .map(|e| e.name)
        .map_err(|e| e.reason().to_owned())
}

/// Commands a reader may run, given the facts above.
const ALLOWED: &[&str] = &[
    "cat notes",
    "cat -n notes /etc/hostname",
    "cat /proc/self/status",
    "cat /proc/cpuinfo",
    "cat /dev/null",
    "grep -r x src",
    "grep -e -r x notes",
    "grep -ir x src notes",
    "rg x src",
    "rg --no-follow x",
    "ls -la home",
    "ls *",
    "du -sh *",
    "wc -l hard",
    "wc -l src/*",
    "sha256sum *",
    "diff notes /etc/hostname",
    "jq .a notes",
    "jq .env notes",
    "jq '.\"env\"' notes",
    "jq '.a.env' notes",
    "jq -r --arg env x .a notes",
    "jq -n '\"env\"'",
    "git diff --no-index notes /dev/null",
    "git grep -n x",
    "git log -- src",
    "tail -n 5 notes",
    "echo link /proc/self/environ",
    "printenv HOME",
];

/// Commands refused, each with a word its reason must contain.
const REFUSED: &[(&str, &str)] = &[
    ("cat link", "/home/me/.ssh/id_rsa"),
    ("cat ./link", "hidden"),
    ("head -c 10 link", "hidden"),
    ("tail -n 1 link", "hidden"),
    ("sed -n 1p link", "hidden"),
    ("sort link", "hidden"),
    ("nl link", "hidden"),
    ("grep -f link notes", "hidden"),
    ("grep -flink notes", "hidden"),
    ("grep -iflink notes", "hidden"),
    ("grep --file=link notes", "hidden"),
    ("rg -f link notes", "hidden"),
    ("diff link notes", "hidden"),
    ("cmp -l link /dev/null", "hidden"),
    ("date -f link", "hidden"),
    ("date --file=link", "hidden"),
    ("jq -R . link", "hidden"),
    ("jq --rawfile k link -n .", "hidden"),
    ("ls link", "hidden"),
    ("stat link", "hidden"),
    ("file -f link", "hidden"),
    ("wc --files0-from=link", "hidden"),
    ("tree --fromfile link", "hidden"),
    ("git blame --contents link notes", "hidden"),
    ("git blame --contents=link notes", "hidden"),
    ("git diff --no-index link /dev/null", "hidden"),
    ("cat log", "gate's"),
    ("cat /proc/self/environ", "environment"),
    ("tail -c +1 /proc/self/environ", "environment"),
    ("grep -a . /proc/self/environ", "environment"),
    ("cat /proc/1/cmdline", "environment"),
    ("cat /proc/kcore", "kernel"),
    ("cat hard", "hard links"),
    ("cat /dev/sda", "device"),
    ("cat /dev/tty", "device"),
    ("cat fifo", "FIFO"),
    ("cat loop", "too many links"),
    ("grep -r x home", "/home/me/.ssh"),
    ("grep --recursive x home", "/home/me/.ssh"),
    ("grep -d recurse x home", "/home/me/.ssh"),
    ("grep -r x /", "/home/me/.ssh"),
    ("grep -r x /proc", "/proc"),
    ("rg x home", "/home/me/.ssh"),
    ("rg x /proc", "/proc"),
    ("diff src notes", "directory"),
    ("diff -r src /tmp", "directory"),
    ("git diff --no-index home /dev/null", "/home/me/.ssh"),
    ("git blame --contents=* notes", "unquoted pattern"),
    ("git log --grep=fix* --oneline", "unquoted pattern"),
    ("cat *.md", "unquoted pattern"),
    ("tree --fromfile *", "unquoted pattern"),
    ("du --files0-from x *", "unquoted pattern"),
    ("sha256sum -c *", "unquoted pattern"),
    ("jq -n env", "environment"),
    ("jq env", "environment"),
    ("jq '.a, env.HOME' notes", "environment"),
    ("jq -n '[env]'", "environment"),
    ("jq -n '1,..env'", "environment"),
    ("jq -n 'env # .x'", "environment"),
    ("jq -nr env", "environment"),
    ("jq -f prog notes", "from a file"),
    ("jq --from-file prog notes", "from a file"),
    ("jq -n 'include \"x\"'", "module"),
    ("jq --unknown .", "not one the preset knows"),
    ("grep -R x src", "follows every link"),
    ("grep -rR x src", "follows every link"),
    ("grep --dereference-recursive x src", "follows every link"),
    ("grep --deref x src", "abbreviates"),
    ("grep -D read -r x src", "devices"),
    ("rg -L x src", "follows every link"),
    ("rg --follow x src", "follows every link"),
    ("sort --files0-from=list", "names of the files"),
    ("tree --info", "`.info`"),
];

#[test]
fn a_reader_may_read_what_its_words_lead_to_when_nothing_there_is_protected() {
    let files = facts("/work");
    for command in ALLOWED {
        assert!(
            verdict(command, &files).is_ok(),
            "{command}: {:?}",
            verdict(command, &files)
        );
    }
}

#[test]
fn a_reader_may_not_read_through_a_name_to_a_secret_the_environment_or_a_device() {
    let files = facts("/work");
    for (command, why) in REFUSED {
        match verdict(command, &files) {
            Ok(entry) => panic!("{command} was allowed by {entry}"),
            Err(reason) => assert!(
                reason.contains(why),
                "{command}: the reason {reason:?} lacks {why:?}"
            ),
        }
    }
}

#[test]
fn a_walk_from_a_working_directory_that_holds_a_secret_is_refused() {
    let home = facts("/home/me");
    for command in [
        "rg x",
        "grep -r x",
        "git grep --no-index x",
        "git grep --untr x",
    ] {
        let reason = verdict(command, &home).unwrap_err();
        assert!(reason.contains("/home/me/.ssh"), "{command}: {reason}");
        assert!(verdict(command, &facts("/work")).is_ok(), "{command}");
    }
    // Without a recursion, grep reads only what it is given.
    assert!(verdict("grep x notes", &home).is_ok());
}

#[test]
fn a_name_the_edge_did_not_resolve_is_not_read() {
    let files = Files::default();
    let reason = check("cat notes", &files).unwrap_err();
    assert!(reason.reason().contains("did not look"), "{reason}");
    // A program that opens no file needs no facts.
    assert!(check("echo notes", &files).is_ok());
    assert!(check("git status", &files).is_ok());
}

#[test]
fn after_a_change_of_directory_only_absolute_names_are_known() {
    let files = facts("/work");
    let moved = View::moved(&files);
    assert!(check_in("cat notes", &moved).is_err());
    assert!(check_in("cat ~/notes", &moved).is_err());
    assert!(check_in("cat /etc/hostname", &moved).is_ok());
    assert!(check_in("git status", &moved).is_ok());
    assert!(moves("cd src"));
    assert!(moves("HOME=/tmp"));
    assert!(moves("export HOME=/tmp"));
    assert!(!moves("make test"));
}

#[test]
fn jq_is_refused_while_its_library_exists() {
    let files = facts("/work");
    assert!(verdict("jq .a notes", &files).is_ok());
    let mut files = told("jq .a notes", &files);
    files.insert(
        Query::Home(JQ_LIBRARY.to_owned()),
        at("/home/me/.jq", Kind::File),
    );
    let reason = check("jq .a notes", &files).unwrap_err();
    assert!(reason.reason().contains("~/.jq"), "{reason}");
}

#[test]
fn the_proc_rules_leave_a_process_status_readable_and_nothing_else_of_it() {
    let place = |p: &str| Place {
        path: PathBuf::from(p),
        kind: Kind::File,
        links: 1,
        on_proc: true,
    };
    for shown in PROC_SHOWN {
        assert_eq!(protected(&place(&format!("/proc/7/{shown}")), &[]), None);
    }
    for secret in [
        "/proc/7/environ",
        "/proc/7/mem",
        "/proc/7/cmdline",
        "/proc/7/task/7/environ",
        "/proc/7/fd",
        "/proc/7/net/tcp",
        "/srv/chroot/proc/7/environ",
        "/proc/kcore",
    ] {
        assert!(protected(&place(secret), &[]).is_some(), "{secret}");
    }
    assert_eq!(protected(&place("/proc/cpuinfo"), &[]), None);
    assert_eq!(protected(&place("/proc/7"), &[]), None);
}

#[test]
fn candidates_cover_attached_values_and_tilde() {
    let words = super::super::split_words("x -sfFILE --file=~/k ~/n '~'/m").unwrap();
    let all: Vec<Query> = words[1..].iter().flat_map(candidates).collect();
    for wanted in [
        Query::Path("-sfFILE".into()),
        Query::Path("fFILE".into()),
        Query::Path("FILE".into()),
        Query::Home("~/k".into()),
        Query::Path("~/k".into()),
        Query::Home("~/n".into()),
        Query::Path("~/m".into()),
    ] {
        assert!(all.contains(&wanted), "{wanted:?} not in {all:?}");
    }
    assert!(!all.contains(&Query::Home("~/m".into())));
}
