//! Debian's own cloud kernels, fetched from the Debian archive and cached in the target
//! directory (`target/tmp/kernels/RELEASE/`: `vmlinuz`, `config`, `package`).
//!
//! apt does the fetching, with a configuration of its own under the cache: a sources
//! list naming only the release (and its security suite), its own package lists and its
//! own archive cache, so the machine's apt state is neither read for sources nor
//! changed. The kernel is the one the release's `linux-image-cloud-amd64` depends on
//! today, in its unsigned build (the same kernel, without the Secure Boot signature),
//! and only its `/boot` is unpacked. A download that fails fails the test, with apt's
//! own words: no kernel test is skipped for want of a network. `rm -r target/tmp/kernels`
//! fetches the newest again.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::common::require_program;

/// A Debian release whose cloud kernel the tests boot.
pub struct Release {
    pub name: &'static str,
    /// Archive URL and suite of each source apt reads.
    pub suites: &'static [(&'static str, &'static str)],
}

/// Debian 12: Linux 6.1, Landlock ABI 2.
pub const BOOKWORM: Release = Release {
    name: "bookworm",
    suites: &[
        ("http://deb.debian.org/debian", "bookworm"),
        ("http://deb.debian.org/debian", "bookworm-updates"),
        ("http://deb.debian.org/debian-security", "bookworm-security"),
    ],
};

/// Debian 13: Linux 6.12, Landlock ABI 6.
pub const TRIXIE: Release = Release {
    name: "trixie",
    suites: &[
        ("http://deb.debian.org/debian", "trixie"),
        ("http://deb.debian.org/debian", "trixie-updates"),
        ("http://deb.debian.org/debian-security", "trixie-security"),
    ],
};

/// The meta-package that depends on a release's current cloud kernel.
const META: &str = "linux-image-cloud-amd64";

/// A kernel unpacked from its Debian package.
pub struct Kernel {
    pub vmlinuz: PathBuf,
    pub config: PathBuf,
    /// The package's file name.
    pub package: String,
}

impl Kernel {
    /// The value of `CONFIG_NAME` in the kernel's build configuration ("y", a quoted
    /// string, ...), or None when it is not set.
    pub fn config_value(&self, name: &str) -> Option<String> {
        let text = fs::read_to_string(&self.config).unwrap();
        text.lines()
            .find_map(|line| line.strip_prefix(&format!("CONFIG_{name}=")))
            .map(str::to_owned)
    }
}

fn cache_root() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("kernels")
}

/// Where the release's kernel is cached.
pub fn cache_dir(release: &Release) -> PathBuf {
    cache_root().join(release.name)
}

fn cached(dir: &Path) -> Option<Kernel> {
    let kernel = Kernel {
        vmlinuz: dir.join("vmlinuz"),
        config: dir.join("config"),
        package: fs::read_to_string(dir.join("package")).ok()?,
    };
    (kernel.vmlinuz.is_file() && kernel.config.is_file()).then_some(kernel)
}

/// The release's cloud kernel: from the cache, or fetched into it.
pub fn cloud_kernel(release: &Release) -> Kernel {
    let root = cache_root();
    let dir = cache_dir(release);
    if let Some(kernel) = cached(&dir) {
        return kernel;
    }
    fs::create_dir_all(&root).unwrap();
    let work = tempfile::Builder::new()
        .prefix(&format!("{}-fetch-", release.name))
        .tempdir_in(&root)
        .unwrap();
    let apt = Apt::new(work.path(), release);
    apt.run(&apt.apt_get, &["update"]);
    let depends = apt.run(&apt.apt_cache, &["depends", META]);
    let image = depends
        .lines()
        .filter_map(|l| l.trim().strip_prefix("Depends: "))
        .find(|p| p.starts_with("linux-image-") && p.ends_with("-cloud-amd64"))
        .unwrap_or_else(|| {
            panic!(
                "{} has no {META} depending on a cloud kernel image: apt-cache said\n{depends}",
                release.name
            )
        });
    let package = format!("{image}-unsigned");
    apt.run(&apt.apt_get, &["download", &package]);
    let deb = fs::read_dir(work.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .unwrap_or_else(|| panic!("apt-get download {package} left no .deb file"));

    // Only /boot: the kernel, its configuration and its symbol map.
    let unpacked = work.path().join("unpacked");
    fs::create_dir(&unpacked).unwrap();
    let mut contents = Command::new(require_program("dpkg-deb"))
        .arg("--fsys-tarfile")
        .arg(&deb)
        .stdout(Stdio::piped())
        .spawn()
        .expect("dpkg-deb runs");
    let tar = Command::new(require_program("tar"))
        .args(["-x", "-f", "-", "-C"])
        .arg(&unpacked)
        .arg("./boot")
        .stdin(contents.stdout.take().unwrap())
        .status()
        .expect("tar runs");
    let listed = contents.wait().unwrap();
    assert!(
        listed.success() && tar.success(),
        "cannot unpack /boot from {}: dpkg-deb {listed}, tar {tar}",
        deb.display()
    );
    let ready = work.path().join("kernel");
    fs::create_dir(&ready).unwrap();
    for entry in fs::read_dir(unpacked.join("boot")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for kind in ["vmlinuz", "config"] {
            if name.starts_with(&format!("{kind}-")) {
                fs::rename(&path, ready.join(kind)).unwrap();
            }
        }
    }
    let name = deb.file_name().unwrap().to_string_lossy().into_owned();
    fs::write(ready.join("package"), &name).unwrap();
    // Into place in one step, so that an interrupted fetch leaves nothing cached; a
    // fetch that finished first in another test process wins.
    if fs::rename(&ready, &dir).is_err() && cached(&dir).is_none() {
        panic!("cannot move the kernel of {name} to {}", dir.display());
    }
    cached(&dir).unwrap_or_else(|| panic!("{name} holds no vmlinuz-* and config-* in /boot"))
}

/// apt with a sources list, package lists and archive cache of its own.
struct Apt {
    apt_get: PathBuf,
    apt_cache: PathBuf,
    options: Vec<String>,
    cwd: PathBuf,
}

impl Apt {
    fn new(dir: &Path, release: &Release) -> Apt {
        let state = dir.join("apt");
        for sub in ["lists/partial", "cache/archives/partial", "sources.list.d"] {
            fs::create_dir_all(state.join(sub)).unwrap();
        }
        let sources: String = release
            .suites
            .iter()
            .map(|(uri, suite)| {
                format!(
                    "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] {uri} \
                     {suite} main\n"
                )
            })
            .collect();
        fs::write(state.join("sources.list"), sources).unwrap();
        let path = |sub: &str| state.join(sub).display().to_string();
        let options = [
            ("Dir::Etc::SourceList", path("sources.list")),
            ("Dir::Etc::SourceParts", path("sources.list.d")),
            ("Dir::State::Lists", path("lists")),
            ("Dir::Cache", path("cache")),
            // The cache is the test user's: apt's download user (_apt) need not reach it.
            ("APT::Sandbox::User", "root".to_owned()),
            // Only the package lists: no translations or other indexes.
            ("Acquire::Languages", "none".to_owned()),
            (
                "Acquire::IndexTargets::deb::DEP-11::DefaultEnabled",
                "false".to_owned(),
            ),
            (
                "Acquire::IndexTargets::deb::DEP-11-icons::DefaultEnabled",
                "false".to_owned(),
            ),
            (
                "Acquire::IndexTargets::deb::DEP-11-icons-small::DefaultEnabled",
                "false".to_owned(),
            ),
            (
                "Acquire::IndexTargets::deb::Contents-deb::DefaultEnabled",
                "false".to_owned(),
            ),
        ]
        .into_iter()
        .flat_map(|(name, value)| ["-o".to_owned(), format!("{name}={value}")])
        .collect();
        Apt {
            apt_get: require_program("apt-get"),
            apt_cache: require_program("apt-cache"),
            options,
            cwd: dir.to_owned(),
        }
    }

    /// Run an apt program; its standard output, or a failure with apt's words.
    fn run(&self, program: &Path, args: &[&str]) -> String {
        let out = Command::new(program)
            .args(&self.options)
            .args(args)
            .current_dir(&self.cwd)
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
        let stderr = String::from_utf8_lossy(&out.stderr);
        // apt-get update says "W: Failed to fetch" and still exits 0 when a source
        // could not be reached: a kernel from half the sources is not the release's.
        let failed_fetch = stderr.lines().any(|l| l.contains("Failed to fetch"));
        assert!(
            out.status.success() && !failed_fetch,
            "fetching a Debian kernel: `{} {}` failed ({}), so the kernel tests cannot \
             run: they need the Debian archive (deb.debian.org) once, then use the copy in \
             {}\n{stderr}",
            program.display(),
            args.join(" "),
            out.status,
            cache_root().display()
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}
