//! The packages, built and installed for real.
//!
//! One test walks the whole life of the Debian package, in order, because it needs one
//! release build and owns the machine's package state while it runs: the README's quick
//! start, executed as written (it builds the package with `packaging/deb/build.sh` and
//! installs it with `dpkg -i`); lintian; the control fields, conffiles, maintainer
//! scripts and file list; the package unpacked into a scratch root (`dpkg -x`) with the
//! packaged gate and a shim run from there; the installed package (`/etc/shells`,
//! `gate doctor`, a shim); the RPM built from the same build; then `dpkg -r` and
//! `dpkg -P`, after which nothing of it may be left.
//!
//! It never touches the machine it runs on: the test runs itself again in a scratch root,
//! an overlay of `/` in a mount namespace of its own whose changes land in a directory
//! under /var/tmp that is removed afterwards, and checks that the machine's package
//! database and `/etc/shells` are byte for byte what they were. So it runs where gate is
//! installed too: in the scratch root it first purges the installed package, which the
//! machine keeps.
//!
//! It needs root (for the mount namespace and dpkg), util-linux's `unshare`, overlayfs,
//! dpkg-dev, lintian, sudo and rpm, and fails, saying so, without them.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use common::{TestEnv, require_program, running_as_root};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The PATH of a fresh root shell on Debian, so the installed gate is the one found.
const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const SHIMS: [&str; 3] = ["bash", "sh", "zsh"];
/// The programs the package test runs (tests/ci.rs checks README.md's package list
/// brings each of them).
const REQUIRED_TOOLS: &[&str] = &[
    "dpkg",
    "dpkg-deb",
    "dpkg-query",
    "dpkg-parsechangelog",
    "lintian",
    "sudo",
    "gzip",
    "md5sum",
    "readelf",
    "rpmbuild",
    "rpm",
    "add-shell",
    "remove-shell",
];
const SHELLS_ADDED: [&str; 4] = [
    "/usr/bin/gate",
    "/usr/lib/gate/bin/bash",
    "/usr/lib/gate/bin/sh",
    "/usr/lib/gate/bin/zsh",
];

fn repo(path: &str) -> PathBuf {
    Path::new(REPO).join(path)
}

fn read(path: impl AsRef<Path>) -> String {
    let path = path.as_ref();
    fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn read_bytes(path: impl AsRef<Path>) -> Vec<u8> {
    let path = path.as_ref();
    fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Whether anything (a file, a directory, a dangling link) is at `path`.
fn present(path: impl AsRef<Path>) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// Run a command to its end within `deadline`, its output kept in files (a long build
/// prints more than a pipe holds). Past the deadline its process group is killed and the
/// test fails.
fn run(mut command: Command, what: &str, deadline: Duration) -> Output {
    use std::os::unix::process::CommandExt;
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("stdout");
    let err_path = dir.path().join("stderr");
    command
        .stdin(Stdio::null())
        .stdout(fs::File::create(&out_path).unwrap())
        .stderr(fs::File::create(&err_path).unwrap())
        .process_group(0);
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {what}: {e}"));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > deadline {
            let _ = Command::new(require_program("kill"))
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.wait();
            panic!(
                "{what} did not finish within {deadline:?}; killed it. stderr:\n{}",
                String::from_utf8_lossy(&fs::read(&err_path).unwrap_or_default())
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output {
        status,
        stdout: fs::read(&out_path).unwrap(),
        stderr: fs::read(&err_path).unwrap(),
    }
}

/// Run a program quickly (a minute at most) and require success; return its stdout.
#[track_caller]
fn ok(program: &str, args: &[&str]) -> String {
    let mut command = Command::new(require_program(program));
    command.args(args);
    let out = run(command, program, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{program} {args:?} failed: {}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

fn gunzip(path: &Path) -> Vec<u8> {
    let out = Command::new(require_program("gzip"))
        .arg("-dc")
        .arg(path)
        .output()
        .expect("gzip runs");
    assert!(out.status.success(), "gzip -dc {}: {out:?}", path.display());
    out.stdout
}

/// The code block that follows `marker` in a Markdown text.
fn block_after(text: &str, marker: &str) -> String {
    let start = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in the text"));
    let rest = &text[start..];
    let open = rest.find("```").expect("a code block after the marker");
    let body = open + rest[open..].find('\n').expect("a fence line") + 1;
    let close = rest[body..].find("```").expect("a closing fence");
    rest[body..body + close].to_owned()
}

/// dpkg's view of the package: its status, or None when it does not know it at all.
fn package_status() -> Option<String> {
    let out = Command::new(require_program("dpkg-query"))
        .args(["-W", "-f", "${Status}", "gate"])
        .output()
        .expect("dpkg-query runs");
    let status = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    (out.status.success() && !status.is_empty() && status != "unknown ok not-installed")
        .then_some(status)
}

/// Puts the scratch root back if the test stops half-way: purges the package and restores
/// /etc/shells. On success it finds nothing to do.
struct Restore {
    shells: String,
}

impl Drop for Restore {
    fn drop(&mut self) {
        if package_status().is_some() {
            eprintln!("packaging test: purging the gate package it installed");
            let _ = Command::new("dpkg").args(["-P", "gate"]).status();
        }
        if fs::read_to_string("/etc/shells").ok().as_deref() != Some(&self.shells) {
            eprintln!("packaging test: restoring /etc/shells");
            let _ = fs::write("/etc/shells", &self.shells);
        }
    }
}

/// One entry of `dpkg-deb -c`: mode string, owner, and the link target for a link.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    mode: String,
    owner: String,
    link: Option<String>,
}

fn deb_contents(deb: &Path) -> BTreeMap<String, Entry> {
    ok("dpkg-deb", &["-c", deb.to_str().unwrap()])
        .lines()
        .map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            assert!(fields.len() >= 6, "odd dpkg-deb -c line: {line}");
            let path = fields[5].trim_start_matches('.').to_owned();
            let link = (fields.get(6) == Some(&"->")).then(|| fields[7].to_owned());
            let entry = Entry {
                mode: fields[0].to_owned(),
                owner: fields[1].to_owned(),
                link,
            };
            (path, entry)
        })
        .collect()
}

/// The documentation files the package carries: the README and docs/*.md, gzipped
/// above 4 KiB. (package path, source path)
fn packaged_docs() -> Vec<(String, PathBuf)> {
    let mut sources = vec![("README.md".to_owned(), repo("README.md"))];
    for entry in fs::read_dir(repo("docs")).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".md") {
            sources.push((format!("docs/{name}"), repo(&format!("docs/{name}"))));
        }
    }
    sources
        .into_iter()
        .map(|(name, source)| {
            let size = fs::metadata(&source).unwrap().len();
            let gz = if size > 4096 { ".gz" } else { "" };
            (format!("/usr/share/doc/gate/{name}{gz}"), source)
        })
        .collect()
}

/// Every file (not directory) the package must hold, with its source in the tree where
/// there is one (compressed in the package when the name ends in .gz).
fn expected_files() -> Vec<(String, Option<PathBuf>)> {
    let mut files: Vec<(String, Option<PathBuf>)> = vec![
        ("/usr/bin/gate".into(), None),
        (
            "/etc/gate/config.toml".into(),
            Some(repo("packaging/config.toml")),
        ),
        (
            "/usr/share/man/man1/gate.1.gz".into(),
            Some(repo("man/gate.1")),
        ),
        (
            "/usr/share/man/man5/gate.toml.5.gz".into(),
            Some(repo("man/gate.toml.5")),
        ),
        (
            "/usr/share/bash-completion/completions/gate".into(),
            Some(repo("completions/gate.bash")),
        ),
        (
            "/usr/share/zsh/vendor-completions/_gate".into(),
            Some(repo("completions/_gate")),
        ),
        (
            "/usr/share/fish/vendor_completions.d/gate.fish".into(),
            Some(repo("completions/gate.fish")),
        ),
        (
            "/usr/share/doc/gate/copyright".into(),
            Some(repo("packaging/deb/copyright")),
        ),
        (
            "/usr/share/doc/gate/changelog.Debian.gz".into(),
            Some(repo("packaging/deb/changelog")),
        ),
    ];
    for shim in SHIMS {
        files.push((format!("/usr/lib/gate/bin/{shim}"), None));
    }
    files.extend(packaged_docs().into_iter().map(|(p, s)| (p, Some(s))));
    files
}

/// Set in the scratch root, for the test run there.
const IN_SCRATCH: &str = "GATE_PACKAGING_SCRATCH_ROOT";

/// Whether `/` is an overlay: the scratch root, never the machine's own.
fn root_is_an_overlay() -> bool {
    read("/proc/self/mountinfo").lines().any(|line| {
        let fields: Vec<&str> = line.split(' ').collect();
        let Some(dash) = fields.iter().position(|f| *f == "-") else {
            return false;
        };
        fields.get(4) == Some(&"/") && fields.get(dash + 1) == Some(&"overlay")
    })
}

/// Run the test `name` of this binary again in a scratch root: an overlay of `/` (its
/// changes in a fresh directory under /var/tmp) in a private mount namespace, with fresh
/// /proc, /run and /dev/shm (/dev and /sys are the machine's). The machine's dpkg
/// database, /etc/shells and /usr/bin/gate must be the same before and after.
fn in_a_scratch_root(name: &str) {
    assert!(
        running_as_root(),
        "the packaging test installs the Debian package for real, in a scratch root it \
         mounts, and must run as root (CI does)"
    );
    let unshare = require_program("unshare");
    let guarded = ["/var/lib/dpkg/status", "/etc/shells"];
    let before: Vec<Vec<u8>> = guarded.iter().map(read_bytes).collect();
    let had_gate = present("/usr/bin/gate");
    let scratch = tempfile::Builder::new()
        .prefix("gate-packaging-")
        .tempdir_in("/var/tmp")
        .expect("a scratch directory under /var/tmp");
    let dir = scratch.path().to_str().expect("a UTF-8 path").to_owned();
    let exe = std::env::current_exe().expect("the test binary's path");
    // The namespace is private before anything is mounted, so no mount reaches the
    // machine's namespace; `set -e` stops at the first failure.
    let script = format!(
        r#"set -eu
d='{dir}'
mkdir "$d/upper" "$d/work" "$d/root"
mount -t overlay overlay -o "lowerdir=/,upperdir=$d/upper,workdir=$d/work" "$d/root"
mount -t proc proc "$d/root/proc"
mount --rbind /dev "$d/root/dev"
mount --rbind /sys "$d/root/sys"
mount -t tmpfs tmpfs "$d/root/run"
mount -t tmpfs tmpfs "$d/root/dev/shm"
exec chroot "$d/root" /bin/sh -c 'cd "$1" && shift && exec "$@"' sh '{repo}' \
  env {IN_SCRATCH}=1 '{exe}' --exact '{name}' --nocapture --test-threads=1
"#,
        repo = REPO,
        exe = exe.display(),
    );
    let mut command = Command::new(unshare);
    command.args([
        "--mount",
        "--propagation",
        "private",
        "--",
        "/bin/sh",
        "-c",
        &script,
    ]);
    let out = run(
        command,
        "the test in a scratch root",
        Duration::from_secs(3600),
    );
    let after: Vec<Vec<u8>> = guarded.iter().map(read_bytes).collect();
    for ((path, before), after) in guarded.iter().zip(&before).zip(&after) {
        assert!(
            before == after,
            "{path} on the machine changed while the test ran in its scratch root"
        );
    }
    assert_eq!(
        present("/usr/bin/gate"),
        had_gate,
        "/usr/bin/gate on the machine"
    );
    assert!(
        out.status.success(),
        "the packaging test in its scratch root failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The nested run must have been the test itself, not zero tests.
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("test result: ok. 1 passed"),
        "the scratch root ran no test:\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_debian_package_builds_passes_lintian_installs_and_leaves_nothing_behind() {
    if std::env::var_os(IN_SCRATCH).is_none() {
        in_a_scratch_root(
            "the_debian_package_builds_passes_lintian_installs_and_leaves_nothing_behind",
        );
        return;
    }
    assert!(
        root_is_an_overlay(),
        "{IN_SCRATCH} is set but / is not an overlay: this test only installs and purges \
         gate in the scratch root it mounts itself, never on a machine's own root"
    );
    // ---- Preconditions: the tools, root, and no gate installed in the scratch root.
    for tool in REQUIRED_TOOLS {
        require_program(tool);
    }
    assert!(running_as_root(), "in the scratch root, still root");
    if package_status().is_some() {
        // The machine has gate installed: the scratch root's copy of it goes, the
        // machine keeps it.
        eprintln!("packaging test: purging the machine's gate package in the scratch root");
        ok("dpkg", &["-P", "gate"]);
    }
    assert!(
        package_status().is_none(),
        "a gate package is still known to dpkg ({:?}) after purging it",
        package_status()
    );
    for path in [
        "/usr/bin/gate",
        "/usr/lib/gate",
        "/etc/gate",
        "/usr/local/bin/gate",
    ] {
        // Left by another install on the machine (`cargo install`, a copy): gone from
        // the scratch root only, so the test sees what its own package puts there.
        if present(path) {
            eprintln!("packaging test: removing the machine's {path} in the scratch root");
            let removed = match fs::symlink_metadata(path) {
                Ok(m) if m.is_dir() => fs::remove_dir_all(path),
                _ => fs::remove_file(path),
            };
            removed.unwrap_or_else(|e| panic!("cannot remove {path} in the scratch root: {e}"));
        }
    }
    let shells_before = read("/etc/shells");
    let _restore = Restore {
        shells: shells_before.clone(),
    };

    // ---- The README's quick start, as written: build and install.
    let readme = read(repo("README.md"));
    let install = block_after(&readme, "build the Debian package and install it:");
    assert!(
        install.contains("packaging/deb/build.sh") && install.contains("dpkg -i"),
        "the quick start no longer builds and installs the package:\n{install}"
    );
    let mut command = Command::new(require_program("sh"));
    command.args(["-e", "-c", &install]).current_dir(REPO);
    let out = run(
        command,
        "the quick start's install block",
        Duration::from_secs(3600),
    );
    assert!(
        out.status.success(),
        "the quick start's install block failed ({}):\n{install}\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        package_status().as_deref(),
        Some("install ok installed"),
        "after the quick start"
    );

    // ---- Then its commands, with the installed gate, print what the README says.
    let try_it = block_after(&readme, "Now try gate's two main commands");
    let expected = block_after(&readme, "The three lines print:");
    let env = TestEnv::new();
    let out = env
        .gate()
        .program("/bin/sh")
        .arg0("sh")
        .env("PATH", SYSTEM_PATH)
        .args([
            "-c",
            &format!("test \"$(command -v gate)\" = /usr/bin/gate || exit 99; exec 2>&1\n{try_it}"),
        ])
        .run();
    assert_eq!(
        out.stdout(),
        expected,
        "the quick start's commands print something else than the README says\n{}",
        out.report()
    );

    let deb_dir = repo("target/debian");
    let debs: Vec<PathBuf> = fs::read_dir(&deb_dir)
        .unwrap_or_else(|e| panic!("{}: {e}", deb_dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "deb"))
        .collect();
    assert_eq!(
        debs.len(),
        1,
        "build.sh leaves exactly one package: {debs:?}"
    );
    let deb = &debs[0];
    let deb_str = deb.to_str().unwrap();

    // ---- The control fields.
    let arch = ok("dpkg", &["--print-architecture"]).trim().to_owned();
    let changelog_version = ok(
        "dpkg-parsechangelog",
        &[
            "-l",
            repo("packaging/deb/changelog").to_str().unwrap(),
            "-S",
            "Version",
        ],
    )
    .trim()
    .to_owned();
    assert!(
        changelog_version.starts_with(&format!("{VERSION}-")),
        "packaging/deb/changelog is at {changelog_version}, Cargo.toml at {VERSION}"
    );
    assert_eq!(
        deb.file_name().unwrap().to_string_lossy(),
        format!("gate_{changelog_version}_{arch}.deb")
    );
    let field = |name: &str| ok("dpkg-deb", &["-f", deb_str, name]).trim().to_owned();
    assert_eq!(field("Package"), "gate");
    assert_eq!(field("Version"), changelog_version);
    assert_eq!(field("Architecture"), arch);
    assert_eq!(field("Section"), "admin");
    assert_eq!(field("Priority"), "optional");
    // The maintainer is whoever signed the newest changelog entry, as Name <address>.
    let maintainer = ok(
        "dpkg-parsechangelog",
        &[
            "-l",
            &repo("packaging/deb/changelog").to_string_lossy(),
            "-S",
            "Maintainer",
        ],
    )
    .trim()
    .to_owned();
    assert_eq!(field("Maintainer"), maintainer);
    let (name, address) = maintainer.split_once(" <").expect("Name <address>");
    assert!(
        !name.trim().is_empty() && address.ends_with('>') && address.contains('@'),
        "Maintainer: {maintainer}"
    );
    // The completions in /usr/share/bash-completion are loaded by bash-completion.
    assert_eq!(field("Recommends"), "bash-completion");
    assert!(
        field("Built-Using").starts_with("glibc (= "),
        "Built-Using: {}",
        field("Built-Using")
    );
    assert_eq!(field("Depends"), "", "a static gate depends on nothing");
    let installed_size: u64 = field("Installed-Size").parse().expect("a number");

    // ---- Lintian: no errors, and only the warnings packaging/deb/README.md justifies.
    let out = Command::new(require_program("lintian"))
        .args(["--fail-on", "none", deb_str])
        .output()
        .expect("lintian runs");
    assert!(out.status.success(), "lintian failed to run: {out:?}");
    let findings = String::from_utf8_lossy(&out.stdout).into_owned();
    let justified = read(repo("packaging/deb/README.md"));
    for line in findings.lines() {
        let Some((severity, rest)) = line.split_once(": gate") else {
            continue;
        };
        let tag = rest
            .trim_start_matches(|c: char| c != ':')
            .trim_start_matches(':')
            .split_whitespace()
            .next()
            .unwrap_or("");
        match severity {
            "E" => panic!("lintian reports an error: {line}\n{findings}"),
            "W" => assert!(
                justified.contains(&format!("`{tag}`")),
                "lintian warns {tag}, which packaging/deb/README.md does not justify: {line}"
            ),
            _ => {}
        }
    }

    // ---- The file list: exactly what is expected, owned by root, with sane modes.
    let contents = deb_contents(deb);
    let files: Vec<(String, Option<PathBuf>)> = expected_files();
    let listed: Vec<&String> = contents
        .iter()
        .filter(|(_, e)| !e.mode.starts_with('d'))
        .map(|(p, _)| p)
        .collect();
    let mut wanted: Vec<&String> = files.iter().map(|(p, _)| p).collect();
    wanted.sort();
    assert_eq!(listed, wanted, "the package's files");
    for (path, entry) in &contents {
        assert_eq!(entry.owner, "root/root", "{path}");
        let mode = match path.as_str() {
            p if entry.mode.starts_with('d') => {
                assert!(
                    wanted.iter().any(|w| w.starts_with(p)),
                    "a directory with nothing of gate in it: {p}"
                );
                "drwxr-xr-x"
            }
            "/usr/bin/gate" => "-rwxr-xr-x",
            p if p.starts_with("/usr/lib/gate/bin/") => {
                assert_eq!(entry.link.as_deref(), Some("../../../bin/gate"), "{p}");
                "lrwxrwxrwx"
            }
            _ => "-rw-r--r--",
        };
        assert_eq!(entry.mode, mode, "{path}");
    }

    // ---- The control archive: conffiles, maintainer scripts, md5sums.
    let control = tempfile::tempdir().unwrap();
    let control_dir = control.path().join("DEBIAN");
    ok("dpkg-deb", &["-e", deb_str, control_dir.to_str().unwrap()]);
    assert_eq!(
        read(control_dir.join("conffiles")),
        "/etc/gate/config.toml\n"
    );
    for script in ["postinst", "postrm"] {
        let path = control_dir.join(script);
        assert_eq!(read(&path), read(repo(&format!("packaging/deb/{script}"))));
        let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755, "{script}");
        assert!(read(&path).contains(if script == "postinst" {
            "add-shell"
        } else {
            "remove-shell"
        }));
    }

    // ---- Unpacked into a scratch root: the files are the tree's, and they run.
    let unpacked = tempfile::Builder::new()
        .prefix("gate-deb-")
        .tempdir_in("/var/tmp")
        .unwrap();
    let root = unpacked.path();
    fs::set_permissions(root, fs::Permissions::from_mode(0o755)).unwrap();
    ok("dpkg-deb", &["-x", deb_str, root.to_str().unwrap()]);
    let md5sums = read(control_dir.join("md5sums"));
    let mut summed: Vec<String> = md5sums
        .lines()
        .map(|l| format!("/{}", l.split_once("  ").expect("an md5sums line").1))
        .collect();
    summed.sort();
    let mut regular: Vec<String> = contents
        .iter()
        .filter(|(p, e)| e.mode.starts_with('-') && !p.starts_with("/etc/"))
        .map(|(p, _)| p.clone())
        .collect();
    regular.sort();
    assert_eq!(summed, regular, "md5sums lists every file but the conffile");
    let mut check = Command::new(require_program("md5sum"));
    check
        .args(["--check", "--quiet"])
        .arg(control_dir.join("md5sums"))
        .current_dir(root);
    let out = run(check, "md5sum --check", Duration::from_secs(60));
    assert!(out.status.success(), "md5sums do not match: {out:?}");
    let mut payload = 0;
    for (path, source) in &files {
        let unpacked_file = root.join(path.trim_start_matches('/'));
        payload += fs::symlink_metadata(&unpacked_file).unwrap().len();
        let Some(source) = source else { continue };
        let packaged = if path.ends_with(".gz") {
            gunzip(&unpacked_file)
        } else {
            read_bytes(&unpacked_file)
        };
        assert!(
            packaged == read_bytes(source),
            "{path} is not {}",
            source.display()
        );
    }
    assert!(
        installed_size * 1024 >= payload,
        "Installed-Size {installed_size} KiB is less than the {payload} bytes of files"
    );
    let binary = root.join("usr/bin/gate");
    let headers = ok("readelf", &["-lW", binary.to_str().unwrap()]);
    assert!(
        !headers.contains("program interpreter"),
        "the packaged gate is not statically linked"
    );
    let env = TestEnv::new();
    env.gate()
        .program(&binary)
        .arg("--version")
        .run()
        .assert_code(0)
        .assert_stdout(&format!("gate {VERSION}\n"));
    env.gate()
        .program(&binary)
        .args([
            "--no-config",
            "--level",
            "full",
            "-c",
            "echo packaged gate runs $0",
        ])
        .run()
        .assert_code(0)
        .assert_stdout("packaged gate runs sh\n");
    // A shim from the unpacked tree: gate, acting as bash, runs the real bash.
    let shim = root.join("usr/lib/gate/bin/bash");
    env.gate()
        .program(&shim)
        .arg0(&shim)
        .env("PATH", SYSTEM_PATH)
        .env("GATE_LEVEL", "full")
        .args(["-c", "echo \"real bash ${BASH_VERSINFO[0]} as $0\""])
        .run()
        .assert_code(0)
        .assert_stdout(&format!("real bash 5 as {}\n", shim.display()));
    // At the default level the shim asks, finds nobody, and runs nothing.
    let out = env
        .gate()
        .program(&shim)
        .arg0(&shim)
        .env("PATH", SYSTEM_PATH)
        .args(["-c", "touch shim-ran"])
        .run();
    out.assert_refused();
    assert!(!env.file("shim-ran").exists());

    // ---- Installed: /etc/shells, the conffile, gate doctor, a shim.
    let shells = read("/etc/shells");
    let mut added: Vec<&str> = shells.lines().collect();
    for line in shells_before.lines() {
        let at = added
            .iter()
            .position(|l| *l == line)
            .unwrap_or_else(|| panic!("installing removed {line} from /etc/shells"));
        added.remove(at);
    }
    assert_eq!(added, SHELLS_ADDED, "what installing added to /etc/shells");
    let conffiles = ok("dpkg-query", &["-W", "-f", "${Conffiles}", "gate"]);
    assert!(conffiles.contains("/etc/gate/config.toml "), "{conffiles}");
    for (path, _) in &files {
        assert!(present(path), "{path} is not installed");
    }
    let out = env
        .gate()
        .program("/usr/bin/gate")
        .env("PATH", SYSTEM_PATH)
        .arg("doctor")
        .run();
    let report = out.stdout();
    assert!(
        report.contains(&format!("gate        {VERSION}")),
        "{report}"
    );
    assert!(
        report.contains("/etc/gate/config.toml (present, not locked)"),
        "{report}"
    );
    assert!(
        report.contains("level       ask (from the built-in default)"),
        "{report}"
    );
    let enforced = report.contains("can be fully enforced");
    out.assert_code(if enforced { 0 } else { 1 });
    env.gate()
        .program("/usr/lib/gate/bin/sh")
        .arg0("sh")
        .env("PATH", SYSTEM_PATH)
        .env("GATE_LEVEL", "full")
        .args(["-c", "echo installed shim"])
        .run()
        .assert_code(0)
        .assert_stdout("installed shim\n");

    // The postinst keeps add-shell from registering the real shells' entries: run it
    // against a scratch root whose /etc/shells lacks /usr/bin/zsh (add-shell resolves the
    // installed zsh shim to /usr/bin/zsh).
    let scratch = tempfile::tempdir().unwrap();
    fs::create_dir(scratch.path().join("etc")).unwrap();
    let scratch_shells: String = shells_before
        .lines()
        .filter(|l| *l != "/usr/bin/zsh")
        .map(|l| format!("{l}\n"))
        .collect();
    fs::write(scratch.path().join("etc/shells"), &scratch_shells).unwrap();
    let mut postinst = Command::new(require_program("sh"));
    postinst
        .arg(repo("packaging/deb/postinst"))
        .arg("configure")
        .env("DPKG_ROOT", scratch.path());
    let out = run(postinst, "postinst configure", Duration::from_secs(60));
    assert!(out.status.success(), "{out:?}");
    let expected_shells = scratch_shells.clone() + &SHELLS_ADDED.map(|s| format!("{s}\n")).concat();
    assert_eq!(read(scratch.path().join("etc/shells")), expected_shells);

    // ---- The RPM, from the same build, with the same layout.
    let rpm_top = tempfile::tempdir().unwrap();
    let mut rpmbuild = Command::new(require_program("rpmbuild"));
    rpmbuild
        .args(["-bb", "--build-in-place", "--nodeps", "--define"])
        .arg(format!("_topdir {}", rpm_top.path().display()))
        .arg("packaging/rpm/gate.spec")
        .current_dir(REPO);
    let out = run(rpmbuild, "rpmbuild", Duration::from_secs(3600));
    assert!(
        out.status.success(),
        "rpmbuild failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let rpms: Vec<PathBuf> = fs::read_dir(rpm_top.path().join("RPMS"))
        .unwrap()
        .flat_map(|arch| fs::read_dir(arch.unwrap().path()).unwrap())
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(rpms.len(), 1, "{rpms:?}");
    let rpm = rpms[0].to_str().unwrap();
    assert_eq!(
        ok("rpm", &["-qp", "--qf", "%{NAME} %{VERSION}", rpm]),
        format!("gate {VERSION}")
    );
    let rpm_files: BTreeMap<String, (String, String)> = ok(
        "rpm",
        &[
            "-qp",
            "--qf",
            "[%{FILENAMES}\t%{FILEMODES:perms}\t%{FILELINKTOS}\n]",
            rpm,
        ],
    )
    .lines()
    .map(|l| {
        let mut f = l.split('\t');
        let path = f.next().unwrap().to_owned();
        (
            path,
            (
                f.next().unwrap_or("").to_owned(),
                f.next().unwrap_or("").to_owned(),
            ),
        )
    })
    .collect();
    let rpm_file = |path: &str| {
        rpm_files
            .get(path)
            .unwrap_or_else(|| panic!("the RPM lacks {path}: {rpm_files:?}"))
    };
    assert_eq!(rpm_file("/usr/bin/gate").0, "-rwxr-xr-x");
    for shim in SHIMS {
        let (mode, link) = rpm_file(&format!("/usr/lib/gate/bin/{shim}"));
        assert_eq!(
            (mode.as_str(), link.as_str()),
            ("lrwxrwxrwx", "../../../bin/gate")
        );
    }
    for path in [
        "/etc/gate/config.toml",
        "/usr/share/bash-completion/completions/gate",
        "/usr/share/zsh/site-functions/_gate",
        "/usr/share/fish/vendor_completions.d/gate.fish",
    ] {
        assert_eq!(rpm_file(path).0, "-rw-r--r--", "{path}");
    }
    for page in ["man1/gate.1", "man5/gate.toml.5"] {
        assert!(
            rpm_files
                .keys()
                .any(|p| p.starts_with(&format!("/usr/share/man/{page}"))),
            "the RPM lacks {page}"
        );
    }
    for (path, _) in packaged_docs() {
        let name = path
            .trim_start_matches("/usr/share/doc/gate/")
            .trim_end_matches(".gz");
        assert!(
            rpm_files
                .keys()
                .any(|p| p.starts_with("/usr/share/doc/") && p.ends_with(&format!("/{name}"))),
            "the RPM lacks the document {name}"
        );
    }
    assert_eq!(
        ok("rpm", &["-qpc", rpm]).trim(),
        "/etc/gate/config.toml",
        "the RPM's configuration files"
    );

    // ---- Removed: everything but the conffile goes, and /etc/shells is as it was.
    ok("dpkg", &["-r", "gate"]);
    assert_eq!(
        package_status().as_deref(),
        Some("deinstall ok config-files")
    );
    for (path, _) in &files {
        if path != "/etc/gate/config.toml" {
            assert!(!present(path), "{path} is left after dpkg -r");
        }
    }
    for dir in ["/usr/lib/gate", "/usr/share/doc/gate"] {
        assert!(!present(dir), "{dir} is left after dpkg -r");
    }
    assert!(
        present("/etc/gate/config.toml"),
        "dpkg -r removed the conffile"
    );
    assert_eq!(
        read("/etc/shells"),
        shells_before,
        "/etc/shells after dpkg -r"
    );

    // The postrm against the scratch root, now that the shims are gone.
    let mut postrm = Command::new(require_program("sh"));
    postrm
        .arg(repo("packaging/deb/postrm"))
        .arg("remove")
        .env("DPKG_ROOT", scratch.path());
    let out = run(postrm, "postrm remove", Duration::from_secs(60));
    assert!(out.status.success(), "{out:?}");
    assert_eq!(read(scratch.path().join("etc/shells")), scratch_shells);

    // ---- Purged: nothing left at all.
    ok("dpkg", &["-P", "gate"]);
    assert_eq!(
        package_status(),
        None,
        "dpkg still knows gate after dpkg -P"
    );
    assert!(!present("/etc/gate"), "/etc/gate is left after dpkg -P");
    for path in contents.keys().filter(|p| p.contains("gate")) {
        assert!(!present(path), "{path} is left after dpkg -P");
    }
    assert_eq!(
        read("/etc/shells"),
        shells_before,
        "/etc/shells after dpkg -P"
    );
}

/// The scriptlet after `%name` in `rpmspec -P` output, up to the next section.
fn scriptlet(spec: &str, name: &str) -> String {
    let mut lines = spec.lines().skip_while(|l| l.trim() != name);
    assert!(lines.next().is_some(), "the spec has no {name}");
    lines
        .take_while(|l| !l.starts_with('%'))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn the_rpm_spec_parses_and_its_scriptlets_register_the_shells_once() {
    let scratch = tempfile::tempdir().unwrap();
    let etc = scratch.path().join("etc");
    fs::create_dir(&etc).unwrap();
    let spec = ok(
        "rpmspec",
        &[
            "-P",
            "--define",
            &format!("_sysconfdir {}", etc.display()),
            repo("packaging/rpm/gate.spec").to_str().unwrap(),
        ],
    );
    let version = ok(
        "rpmspec",
        &[
            "-q",
            "--srpm",
            "--qf",
            "%{VERSION}",
            repo("packaging/rpm/gate.spec").to_str().unwrap(),
        ],
    );
    assert_eq!(version, VERSION, "the spec's version is not Cargo.toml's");
    for path in [
        "/usr/bin/gate",
        "/usr/lib/gate/bin/bash",
        "%config(noreplace)",
    ] {
        assert!(spec.contains(path), "the spec lacks {path}");
    }

    let post = scratch.path().join("post.sh");
    let postun = scratch.path().join("postun.sh");
    fs::write(&post, scriptlet(&spec, "%post")).unwrap();
    fs::write(&postun, scriptlet(&spec, "%postun")).unwrap();
    let before = "/bin/sh\n/usr/bin/bash\n";
    fs::write(etc.join("shells"), before).unwrap();
    let sh = |script: &Path, arg: &str| {
        let out = Command::new(require_program("sh"))
            .arg(script)
            .arg(arg)
            .output()
            .expect("sh runs");
        assert!(out.status.success(), "{}: {out:?}", script.display());
    };
    let registered = before.to_owned() + &SHELLS_ADDED.map(|s| format!("{s}\n")).concat();
    sh(&post, "1");
    assert_eq!(read(etc.join("shells")), registered, "after %post");
    sh(&post, "2");
    assert_eq!(
        read(etc.join("shells")),
        registered,
        "after %post of an upgrade"
    );
    sh(&postun, "1");
    assert_eq!(
        read(etc.join("shells")),
        registered,
        "after %postun of an upgrade"
    );
    sh(&postun, "0");
    assert_eq!(
        read(etc.join("shells")),
        before,
        "after %postun of an erase"
    );
}

#[test]
fn the_copyright_file_names_every_crate_linked_into_gate_with_its_licence() {
    // Cargo runs the tests with CARGO set to itself. The crates asked about are those
    // linked into gate for the target this test runs on, the one the package is built
    // for (packaging/deb/build.sh builds for the host): `--target all` would also want
    // every other platform's crates in the cargo cache, which only a machine that once
    // fetched them all has, and none of those is in the binary that ships from here.
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "--edges",
            "normal,no-proc-macro",
            "--prefix",
            "none",
            "--format",
            "{p}|{l}",
        ])
        .current_dir(REPO)
        .output()
        .expect("cargo tree runs");
    assert!(out.status.success(), "cargo tree failed: {out:?}");
    let copyright = read(repo("packaging/deb/copyright"));
    let mut crates = 0;
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let (package, licence) = line.split_once('|').expect("name|licence");
        let name = package.split_whitespace().next().unwrap();
        if name == "gate" {
            continue;
        }
        let licence = licence.trim_end_matches(" (*)").trim();
        crates += 1;
        assert!(
            copyright.contains(&format!("\n  {name}: {licence}\n")),
            "packaging/deb/copyright does not list the crate {name} ({licence}), which is \
             linked into gate"
        );
    }
    assert!(crates > 20, "cargo tree listed only {crates} crates");
}
