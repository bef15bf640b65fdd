//! How the real shell is started so that it runs the judged command and nothing before
//! it: none of the start-up files (`~/.bashrc`, `~/.profile`, `~/.zshenv`, `$BASH_ENV`,
//! `$ENV` …) that a shell reads on its own.
//!
//! Each of those files is one the model can write (with the agent's own edit tool, or
//! through an earlier approved command), and a shell reads them in forms the agents use
//! every day, measured with strace on Debian 12 (bash 5.2, dash 0.5.12, zsh 5.9,
//! fish 3.6):
//!
//! | form | reads |
//! |---|---|
//! | `bash -c`, stdin a socket (Node hosts) or `SSH_CLIENT` set, `SHLVL` unset or 0 | `~/.bashrc` |
//! | `bash -i -c` | `~/.bashrc` |
//! | `bash -lc`, `-l -c`, `--login -c`, argv0 `-bash` | `/etc/profile`, `~/.bash_profile` (or `~/.bash_login`, `~/.profile`); `~/.bash_logout` on `exit`, even with `--noprofile` |
//! | `bash -c` and a script, non-interactive | `$BASH_ENV` |
//! | `zsh -c` | `~/.zshenv`; with `-l` also `~/.zprofile`, `~/.zlogin`; with `-i` `~/.zshrc` |
//! | `sh -lc` (dash), argv0 `-sh` | `/etc/profile`, `~/.profile` |
//! | `sh -i -c` (dash, bash as `sh`) | `$ENV` |
//! | `fish -c` | `~/.config/fish/config.fish`, `conf.d`, and functions it autoloads |
//!
//! So gate starts every shell that runs a command or a script the same way, by family:
//! not as a login shell (`-l` and `--login` are taken out of the option section, and a
//! leading `-` out of argv0), with `BASH_ENV` and `ENV` taken out of the environment,
//! and with the shell's own switch for "no start-up files": bash `--norc` (first: bash
//! takes long options only before the others), zsh `-f` (`NO_RCS`, last, after any
//! option of the caller's that could turn it back; zsh then reads only the root-owned
//! `/etc/zsh/zshenv`), fish `--no-config`. The command, `NAME` and the arguments are
//! not touched; when argv0 loses its `-` and there is no `NAME`, the old argv0 is given
//! as `NAME`, so that `$0` stays what it was.
//!
//! A session (a shell with no command) is started as the caller asked, start-up files
//! and all: what it runs comes from its input, which gate does not judge, so its
//! start-up files add nothing to what was approved, and a person who uses gate as a
//! login shell keeps their prompt and aliases.

#![forbid(unsafe_code)]

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

use crate::invocation::ShellWork;
use crate::shells::{BASH_LONG_WITH_VALUE, CommandString, Shell};

/// The environment variables that name a file a shell sources when it starts: bash's
/// `BASH_ENV` (every non-interactive bash), `ENV` (interactive POSIX shells, bash in
/// POSIX mode). Even when a person set them, the file they name is one the model can
/// write, so a clean start takes them out.
pub(crate) const START_UP_VARIABLES: &[&str] = &["BASH_ENV", "ENV"];

/// A shell family: what its start-up files are and how to start it without them.
pub(crate) use crate::shells::Family;

/// The shell at `path` (its name, and gate's facts about it when it knows the program),
/// by the name of the program it is once symbolic links are followed (`/bin/sh` is dash
/// on Debian, bash on Fedora).
pub(crate) fn shell_at(path: &Path) -> (OsString, Option<&'static Shell>) {
    let real = std::fs::canonicalize(path).ok();
    let program = real.as_deref().unwrap_or(path);
    let name = program.file_name().unwrap_or(program.as_os_str());
    let facts = crate::shells::named_bytes(name.as_bytes());
    if facts.is_some_and(|s| std::ptr::eq(s.options, &crate::shells::MULTI_CALL)) {
        // A multi-call binary (/bin/sh a link to busybox) is the shell its argv[0]
        // names, and gate passes the name of the link: the last name on the way to it.
        let named = last_name_before_multi_call(path);
        let facts = crate::shells::named_bytes(named.as_bytes());
        return (named, facts);
    }
    (name.to_owned(), facts)
}

/// The name of the last symbolic link on the way from `path` to a multi-call binary
/// (`/bin/sh` → `busybox`: `sh`), links followed one at a time (at most 40, as the
/// kernel does).
fn last_name_before_multi_call(path: &Path) -> OsString {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&current) else {
            break;
        };
        let next = match current.parent() {
            Some(dir) => dir.join(&target),
            None => target,
        };
        let multi_call = next
            .file_name()
            .and_then(|n| crate::shells::named_bytes(n.as_bytes()))
            .is_some_and(|s| std::ptr::eq(s.options, &crate::shells::MULTI_CALL));
        if multi_call {
            break;
        }
        current = next;
    }
    current
        .file_name()
        .unwrap_or(current.as_os_str())
        .to_owned()
}

impl Family {
    /// The family of the shell at `path` ([`shell_at`]).
    pub(crate) fn of(path: &Path) -> Family {
        shell_at(path).1.map_or(Family::Other, |s| s.family)
    }

    /// The family of a program called `name`: `bash`, `bash5.2`, `zsh-5.9` … (the
    /// table in [`crate::shells`]); a program gate does not know is [`Family::Other`].
    #[cfg(test)]
    fn named(name: &OsStr) -> Family {
        crate::shells::named_bytes(name.as_bytes()).map_or(Family::Other, |s| s.family)
    }

    fn drops_login(self) -> bool {
        self != Family::Fish
    }
}

/// The real shell's whole argv (argv0 first) for `args`, as [`crate::invocation`]
/// parsed them (`operands_at`: where the command or script starts), so that the shell
/// reads no start-up file before `work`. A session, and `--version`, keep the caller's
/// argv as it is. Err says why gate cannot start this shell that way.
pub(crate) fn argv(
    family: Family,
    argv0: &OsStr,
    args: &[OsString],
    operands_at: usize,
    work: &ShellWork,
) -> Result<Vec<OsString>, String> {
    let as_asked = || {
        let mut argv = Vec::with_capacity(args.len() + 1);
        argv.push(argv0.to_owned());
        argv.extend(args.iter().cloned());
        argv
    };
    if matches!(work, ShellWork::Session | ShellWork::Info) {
        return Ok(as_asked());
    }
    let (options, operands) = args.split_at(operands_at.min(args.len()));
    let section = OptionSection::read(options, family.drops_login());
    if family == Family::Other && section.interactive {
        let name = Path::new(argv0)
            .file_name()
            .unwrap_or(argv0)
            .to_string_lossy();
        let name = name.trim_start_matches('-');
        return Err(format!(
            "{name} cannot be started as an interactive shell (-i) without the start-up \
             files it then reads, which the model could have written; leave out -i, or use \
             bash, zsh, dash or fish"
        ));
    }
    let mut options = section.kept;
    match family {
        Family::Bash if !options.iter().any(|o| o == "--norc") => {
            options.insert(0, "--norc".into());
        }
        Family::Zsh => options.insert(section.end, "-f".into()),
        Family::Fish if !options.iter().any(|o| o == "--no-config" || o == "-N") => {
            options.insert(0, "--no-config".into());
        }
        _ => {}
    }
    let login_argv0 = family.drops_login() && argv0.as_bytes().starts_with(b"-");
    let mut argv = Vec::with_capacity(args.len() + 3);
    argv.push(if login_argv0 {
        OsString::from_vec(argv0.as_bytes()[1..].to_vec())
    } else {
        argv0.to_owned()
    });
    argv.extend(options);
    argv.extend(operands.iter().cloned());
    // `sh -c COMMAND` without NAME sets $0 to argv0: keep it the caller's.
    if login_argv0 && matches!(work, ShellWork::Command(_)) && operands.len() == 1 {
        argv.push(argv0.to_owned());
    }
    Ok(argv)
}

/// Whether the real shell `shell` (called `name`) reads `args` as gate read them:
/// the same command string (`work`, at `operands_at`), or none when gate saw a script or
/// a session. gate reads a shell's options as bash and dash do; zsh, the Korn shells,
/// yash and fish read some differently (`zsh -oerrexit -c CMD`: zsh's `-o` takes the
/// rest of its word; `fish -C CMD1 -c CMD2` runs both), and then what gate judged is
/// not what would run. Err says so. A shell gate has no table for, or whose language
/// it does not read, is taken as gate read it.
pub(crate) fn reads_as_judged(
    name: &OsStr,
    shell: Option<&Shell>,
    args: &[OsString],
    operands_at: usize,
    work: &ShellWork,
) -> Result<(), String> {
    let Some(shell) = shell else {
        return Ok(());
    };
    if shell.options.command == CommandString::AnyWord {
        return Ok(());
    }
    let words: Vec<std::borrow::Cow<'_, str>> = args.iter().map(|a| a.to_string_lossy()).collect();
    let real = crate::shells::command_strings(shell.options, &words, |_| false);
    let same = match work {
        ShellWork::Command(_) => {
            real == [crate::shells::Found {
                word: operands_at,
                from: 0,
            }]
        }
        ShellWork::Script(_) | ShellWork::Session | ShellWork::Info => real.is_empty(),
    };
    if same {
        return Ok(());
    }
    let name = name.to_string_lossy();
    Err(format!(
        "{name} reads these options differently from how gate read them, so what gate \
         judged is not what {name} would run; give {name} one command as `{name} -c \
         COMMAND`, with any option that takes a value as its own word before -c"
    ))
}

/// The option section, read as the shell reads it: the option letters, the values of
/// `-o`/`-O` and of `--rcfile`, and the end marker.
struct OptionSection {
    /// The options, with the login options left out when asked to.
    kept: Vec<OsString>,
    /// Where in `kept` an option may be added last: before the `--` or `-` that ends
    /// the section, or at its end.
    end: usize,
    /// `-i` was given.
    interactive: bool,
}

impl OptionSection {
    fn read(options: &[OsString], drop_login: bool) -> OptionSection {
        let mut kept = Vec::with_capacity(options.len());
        let mut end = None;
        let mut interactive = false;
        let mut values = 0;
        for arg in options {
            let bytes = arg.as_bytes();
            if values > 0 {
                values -= 1;
                kept.push(arg.clone());
                continue;
            }
            if bytes == b"--" || bytes == b"-" {
                end.get_or_insert(kept.len());
                kept.push(arg.clone());
                continue;
            }
            if bytes.starts_with(b"--") {
                if drop_login && bytes == b"--login" {
                    continue;
                }
                if BASH_LONG_WITH_VALUE.iter().any(|o| o.as_bytes() == bytes) {
                    values = 1;
                }
                kept.push(arg.clone());
                continue;
            }
            let letters = bytes.get(1..).unwrap_or_default();
            values = letters.iter().filter(|&&b| b == b'o' || b == b'O').count();
            if bytes.first() != Some(&b'-') {
                // `+o name`, `+e`: turning options off never reads a file.
                kept.push(arg.clone());
                continue;
            }
            interactive |= letters.contains(&b'i');
            if drop_login && letters.contains(&b'l') {
                let rest: Vec<u8> = letters.iter().copied().filter(|&b| b != b'l').collect();
                if !rest.is_empty() {
                    let mut cluster = b"-".to_vec();
                    cluster.extend(rest);
                    kept.push(OsString::from_vec(cluster));
                }
                continue;
            }
            kept.push(arg.clone());
        }
        let end = end.unwrap_or(kept.len());
        OptionSection {
            kept,
            end,
            interactive,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shell_that_is_a_link_to_busybox_is_the_shell_it_is_called() {
        let dir = std::env::temp_dir().join(format!("gate-busybox-sh-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let busybox = dir.join("busybox");
        std::fs::write(&busybox, b"").unwrap();
        let sh = dir.join("sh");
        let _ = std::fs::remove_file(&sh);
        std::os::unix::fs::symlink("busybox", &sh).unwrap();
        let ash = dir.join("ash");
        let _ = std::fs::remove_file(&ash);
        std::os::unix::fs::symlink(&sh, &ash).unwrap();
        let (name, facts) = shell_at(&sh);
        assert_eq!(name, "sh");
        assert_eq!(facts.map(|s| s.name), Some("sh"));
        // Through a second link, the last name before busybox.
        assert_eq!(shell_at(&ash).0, "sh");
        // busybox by its own name stays busybox.
        assert_eq!(shell_at(&busybox).0, "busybox");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    fn os(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    /// The argv for a `-c` call whose command is at `at`.
    fn clean(family: Family, argv0: &str, args: &[&str], at: usize) -> Vec<OsString> {
        let work = ShellWork::Command(args[at].into());
        argv(family, OsStr::new(argv0), &os(args), at, &work).unwrap()
    }

    #[test]
    fn families_are_named_by_the_program() {
        for (name, family) in [
            ("bash", Family::Bash),
            ("bash5.2", Family::Bash),
            ("rbash", Family::Bash),
            ("zsh", Family::Zsh),
            ("zsh-5.9", Family::Zsh),
            ("dash", Family::Posix),
            ("sh", Family::Posix),
            ("busybox", Family::Posix),
            ("fish", Family::Fish),
            ("ksh", Family::Other),
            ("mksh", Family::Other),
            ("bashful", Family::Other),
            ("gate", Family::Other),
        ] {
            assert_eq!(Family::named(OsStr::new(name)), family, "{name}");
        }
        // /bin/sh is whatever it links to.
        let dir = tempfile::tempdir().unwrap();
        let sh = dir.path().join("sh");
        std::os::unix::fs::symlink("/bin/bash", &sh).unwrap();
        assert_eq!(Family::of(&sh), Family::Bash);
        assert_eq!(Family::of(Path::new("/nonexistent/zsh")), Family::Zsh);
    }

    #[test]
    fn the_real_shell_must_read_the_command_gate_judged() {
        let agrees = |shell: &str, args: &[&str], at: usize, command: bool| {
            let work = if command {
                ShellWork::Command(args[at].into())
            } else {
                ShellWork::Script(os(&args[at..]))
            };
            let facts = crate::shells::named(shell);
            reads_as_judged(OsStr::new(shell), facts, &os(args), at, &work).is_ok()
        };
        // The forms agents use read alike everywhere.
        for shell in ["bash", "dash", "zsh", "fish", "ksh93", "mksh", "yash"] {
            assert!(agrees(shell, &["-c", "ls"], 1, true), "{shell}");
            assert!(agrees(shell, &["-lc", "ls"], 1, true), "{shell}");
            assert!(
                agrees(shell, &["-l", "-c", "ls", "name"], 2, true),
                "{shell}"
            );
            assert!(agrees(shell, &["x.sh", "-c"], 0, false), "{shell}");
        }
        assert!(agrees("bash", &["-c", "-l", "ls"], 2, true));
        assert!(agrees("zsh", &["-o", "errexit", "-c", "ls"], 3, true));
        // gate reads `-oerrexit` and `-O` as bash does: zsh does not.
        assert!(!agrees("zsh", &["-oerrexit", "-c", "ls"], 2, false));
        assert!(!agrees("zsh", &["-O", "-c", "ls"], 2, false));
        // fish runs every -c and -C.
        assert!(!agrees("fish", &["-c", "ls", "-c", "rm x"], 1, true));
        assert!(!agrees("fish", &["-C", "rm x", "-c", "ls"], 3, true));
        // A shell gate has no table for is taken as gate read it.
        assert!(agrees("gate", &["-oerrexit", "-c", "ls"], 2, false));
        assert!(agrees("tcsh", &["-c", "ls"], 1, true));
    }

    #[test]
    fn bash_starts_with_norc_first_and_without_login() {
        assert_eq!(
            clean(Family::Bash, "bash", &["-c", "ls"], 1),
            os(&["bash", "--norc", "-c", "ls"])
        );
        assert_eq!(
            clean(Family::Bash, "bash", &["-lc", "ls"], 1),
            os(&["bash", "--norc", "-c", "ls"])
        );
        assert_eq!(
            clean(Family::Bash, "bash", &["-l", "-c", "ls", "name", "-l"], 2),
            os(&["bash", "--norc", "-c", "ls", "name", "-l"]),
            "a `-l` among the operands is NAME or an argument, and stays"
        );
        assert_eq!(
            clean(Family::Bash, "bash", &["--login", "-i", "-c", "ls"], 2),
            os(&["bash", "--norc", "-i", "-c", "ls"])
        );
        assert_eq!(
            clean(Family::Bash, "bash", &["-c", "-l", "ls"], 2),
            os(&["bash", "--norc", "-c", "ls"])
        );
        assert_eq!(
            clean(Family::Bash, "bash", &["-eil", "-c", "ls"], 2),
            os(&["bash", "--norc", "-ei", "-c", "ls"])
        );
    }

    #[test]
    fn option_values_are_never_taken_for_options() {
        assert_eq!(
            clean(Family::Bash, "bash", &["-o", "-l", "-c", "ls"], 3),
            os(&["bash", "--norc", "-o", "-l", "-c", "ls"])
        );
        assert_eq!(
            clean(
                Family::Bash,
                "bash",
                &["--rcfile", "-l", "-lO", "extglob", "-c", "ls"],
                5
            ),
            os(&[
                "bash", "--norc", "--rcfile", "-l", "-O", "extglob", "-c", "ls"
            ])
        );
    }

    #[test]
    fn norc_the_caller_gave_is_not_given_twice() {
        assert_eq!(
            clean(
                Family::Bash,
                "bash",
                &["--norc", "--noprofile", "-lc", "ls"],
                3
            ),
            os(&["bash", "--norc", "--noprofile", "-c", "ls"])
        );
    }

    #[test]
    fn a_login_argv0_loses_its_dash_and_dollar_zero_stays() {
        assert_eq!(
            clean(Family::Bash, "-bash", &["-c", "echo $0"], 1),
            os(&["bash", "--norc", "-c", "echo $0", "-bash"])
        );
        assert_eq!(
            clean(Family::Posix, "-sh", &["-c", "echo $0", "name", "1"], 1),
            os(&["sh", "-c", "echo $0", "name", "1"])
        );
        let script = ShellWork::Script(os(&["x.sh"]));
        assert_eq!(
            argv(Family::Posix, OsStr::new("-sh"), &os(&["x.sh"]), 0, &script).unwrap(),
            os(&["sh", "x.sh"])
        );
    }

    #[test]
    fn zsh_gets_f_last_before_the_end_of_the_options() {
        assert_eq!(
            clean(Family::Zsh, "zsh", &["-c", "ls"], 1),
            os(&["zsh", "-c", "-f", "ls"])
        );
        assert_eq!(
            clean(Family::Zsh, "zsh", &["+f", "-lc", "ls"], 2),
            os(&["zsh", "+f", "-c", "-f", "ls"])
        );
        assert_eq!(
            clean(Family::Zsh, "zsh", &["-c", "--", "ls", "a"], 2),
            os(&["zsh", "-c", "-f", "--", "ls", "a"])
        );
        assert_eq!(
            clean(Family::Zsh, "zsh", &["-o", "rcs", "-c", "ls"], 3),
            os(&["zsh", "-o", "rcs", "-c", "-f", "ls"])
        );
    }

    #[test]
    fn posix_shells_are_started_as_non_login_shells() {
        assert_eq!(
            clean(Family::Posix, "sh", &["-lc", "ls"], 1),
            os(&["sh", "-c", "ls"])
        );
        assert_eq!(
            clean(Family::Posix, "sh", &["-i", "-c", "ls"], 2),
            os(&["sh", "-i", "-c", "ls"])
        );
    }

    #[test]
    fn fish_gets_no_config_and_keeps_its_login() {
        assert_eq!(
            clean(Family::Fish, "-fish", &["-l", "-c", "ls"], 2),
            os(&["-fish", "--no-config", "-l", "-c", "ls"])
        );
        assert_eq!(
            clean(Family::Fish, "fish", &["-N", "-c", "ls"], 2),
            os(&["fish", "-N", "-c", "ls"])
        );
    }

    #[test]
    fn another_shell_is_never_started_interactive() {
        let work = ShellWork::Command("ls".into());
        let err = argv(
            Family::Other,
            OsStr::new("ksh"),
            &os(&["-ic", "ls"]),
            1,
            &work,
        );
        assert!(
            err.unwrap_err()
                .starts_with("ksh cannot be started as an interactive shell")
        );
        assert_eq!(
            clean(Family::Other, "-ksh", &["-lc", "ls"], 1),
            os(&["ksh", "-c", "ls", "-ksh"])
        );
    }

    #[test]
    fn sessions_and_version_start_as_asked() {
        for work in [ShellWork::Session, ShellWork::Info] {
            assert_eq!(
                argv(Family::Bash, OsStr::new("-bash"), &os(&["-l"]), 1, &work).unwrap(),
                os(&["-bash", "-l"])
            );
        }
    }
}
