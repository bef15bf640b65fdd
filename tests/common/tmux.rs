//! A terminal to drive: a tmux server of the test's own, for the tests of the terminal
//! prompt and of `gate watch`. Every wait has a deadline; a missing tmux fails loudly.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use super::{DEADLINE, NOBODY, TestEnv, User, bash, command_as, require_program, running_as_root};

/// A tmux server of its own (own socket in its own directory) with one 200x50 window.
/// Killed when dropped.
pub struct Term {
    tmux: PathBuf,
    dir: PathBuf,
    socket: String,
    home: PathBuf,
    /// Who the server (and so the window's shell) runs as.
    user: User,
}

pub fn unique(prefix: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{prefix}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

impl Term {
    /// Start a window that runs `script` with bash.
    pub fn start(env: &TestEnv, script: &Path) -> Term {
        Term::start_as(env, script, User::Current)
    }

    /// Start a window that runs `script` with bash, the tmux server running as `user`
    /// (uid 65534 through `setpriv` when the tests run as root): the terminal a person
    /// of that uid would sit at.
    pub fn start_as(env: &TestEnv, script: &Path, user: User) -> Term {
        let tmux = require_program("tmux");
        let dir = env.root.join(unique("tmux"));
        fs::create_dir(&dir).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).unwrap();
        if user == User::Unprivileged && running_as_root() {
            std::os::unix::fs::chown(&dir, Some(NOBODY), Some(NOBODY)).unwrap();
        }
        fs::write(
            dir.join("tmux.conf"),
            "set -g status off\nset -g default-shell /bin/sh\nset -g history-limit 5000\n",
        )
        .unwrap();
        let term = Term {
            tmux,
            dir,
            socket: unique("gate-term"),
            home: env.home.clone(),
            user,
        };
        let line = format!(
            "{} --norc --noprofile {}",
            bash().display(),
            script.display()
        );
        let (ok, text) = term.run(&[
            "new-session",
            "-d",
            "-s",
            "t",
            "-x",
            "200",
            "-y",
            "50",
            &line,
        ]);
        assert!(ok, "tmux new-session failed: {text}");
        term
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut command = command_as(self.user, &self.tmux);
        command
            .arg("-f")
            .arg(self.dir.join("tmux.conf"))
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.home)
            .env("TMUX_TMPDIR", &self.dir)
            .env("TERM", "xterm")
            .env("LC_ALL", "C")
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command
    }

    /// Run a tmux command, giving up after a while (a hung tmux fails the test).
    pub fn run(&self, args: &[&str]) -> (bool, String) {
        let mut child = self
            .command(args)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run tmux: {e}"));
        let end = Instant::now() + Duration::from_secs(10);
        loop {
            match child.try_wait().unwrap() {
                Some(_) => break,
                None if Instant::now() > end => {
                    let _ = child.kill();
                    let _ = child.wait();
                    panic!("tmux {args:?} did not finish within 10 s");
                }
                None => thread::sleep(Duration::from_millis(5)),
            }
        }
        let out = child.wait_with_output().unwrap();
        let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&out.stderr));
        (out.status.success(), text)
    }

    /// The screen (and the history above it).
    pub fn screen(&self) -> String {
        let (ok, text) = self.run(&["capture-pane", "-p", "-J", "-S", "-", "-t", "t"]);
        assert!(ok, "tmux capture-pane failed: {text}");
        text
    }

    /// Wait until the screen satisfies `done`; fail with the screen after the deadline.
    #[track_caller]
    pub fn wait_for(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let end = Instant::now() + DEADLINE;
        loop {
            let screen = self.screen();
            if done(&screen) {
                return screen;
            }
            if Instant::now() > end {
                panic!("waited {DEADLINE:?} for {what}; the screen:\n{screen}");
            }
            thread::sleep(Duration::from_millis(25));
        }
    }

    #[track_caller]
    pub fn wait_text(&self, text: &str) -> String {
        self.wait_for(&format!("{text:?}"), |s| s.contains(text))
    }

    /// Press keys (tmux key names: `Enter`, `C-c`, `Up`; or literal text with `-l`).
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "t"];
        args.extend_from_slice(keys);
        let (ok, text) = self.run(&args);
        assert!(ok, "tmux send-keys failed: {text}");
    }

    pub fn type_text(&self, text: &str) {
        let (ok, out) = self.run(&["send-keys", "-t", "t", "-l", text]);
        assert!(ok, "tmux send-keys failed: {out}");
    }
}

impl Drop for Term {
    fn drop(&mut self) {
        let mut command = self.command(&["kill-server"]);
        command.stdout(Stdio::null()).stderr(Stdio::null());
        if let Ok(mut child) = command.spawn() {
            let end = Instant::now() + Duration::from_secs(5);
            while Instant::now() < end {
                if !matches!(child.try_wait(), Ok(None)) {
                    return;
                }
                thread::sleep(Duration::from_millis(5));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}
