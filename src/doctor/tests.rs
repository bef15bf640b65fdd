use super::kernel::{landlock_absent, seccomp_absent};
use super::safe::unreadable;
use super::*;
use crate::sandbox::Mark;

fn marking(mark: Mark, ptrace_scope: Option<u8>) -> Marking {
    Marking {
        mark,
        ptrace_scope,
        here: false,
    }
}

fn kernel(landlock_abi: i32) -> Kernel {
    Kernel {
        landlock_abi,
        seccomp: true,
        user_notify: true,
    }
}

#[test]
fn yama_keeps_the_supervisor_from_reading_unless_it_is_root() {
    assert!(!unreadable(false, None, false));
    assert!(!unreadable(false, Some(0), false));
    assert!(unreadable(false, Some(1), false));
    assert!(unreadable(false, Some(2), false));
    assert!(!unreadable(true, Some(1), false));
    assert!(!unreadable(true, Some(2), false));
    assert!(unreadable(true, Some(3), false));
    // The owner of the command's user namespace reads it at 1 and 2, not at 3.
    assert!(!unreadable(false, Some(1), true));
    assert!(!unreadable(false, Some(2), true));
    assert!(unreadable(false, Some(3), true));
}

#[test]
fn domains_need_user_notification_and_landlock_tcp_rules_or_the_supervisor() {
    // Before ABI 4, the supervisor decides in place of the TCP rules.
    let (ok, text) = domains(&kernel(3), false, None, false);
    assert!(ok, "{text}");
    assert!(
        text.contains("without Landlock TCP port rules (ABI 4), gate's supervisor decides"),
        "{text}"
    );
    // Without Landlock at all, nothing at safe runs.
    let (ok, text) = domains(&kernel(0), false, None, false);
    assert!(!ok);
    assert!(text.contains("Landlock filesystem rules (ABI 1)"), "{text}");
    let no_notify = Kernel {
        user_notify: false,
        ..kernel(6)
    };
    let (ok, text) = domains(&no_notify, false, None, false);
    assert!(!ok);
    assert!(text.contains("user notification"), "{text}");
    let (ok, text) = domains(
        &Kernel {
            landlock_abi: 3,
            ..no_notify
        },
        false,
        None,
        false,
    );
    assert!(!ok);
    assert!(
        text.contains("TCP port rules") && text.contains("user notification"),
        "{text}"
    );
    let (ok, text) = domains(&kernel(6), false, Some(1), false);
    assert!(ok, "{text}");
    assert!(text.contains("ptrace_scope is 1"), "{text}");
    // In the command's own user namespace the supervisor reads it anyway.
    let (ok, text) = domains(&kernel(6), false, Some(1), true);
    assert!(ok && !text.contains("ptrace_scope"), "{text}");
}

#[test]
fn without_a_domain_the_report_says_commands_could_trace_unless_yama_stops_them() {
    let old = kernel(1);
    let open = marking(Mark::NoNewPrivsOnly, None);
    assert!(!open.ptrace_stopped());
    let text = open.commands(&old);
    assert!(text.contains("no_new_privs only (Landlock ABI 1"), "{text}");
    assert!(
        text.contains("could trace or read the memory of the broker"),
        "{text}"
    );
    let classic = marking(Mark::NoNewPrivsOnly, Some(0));
    assert!(!classic.ptrace_stopped());
    assert!(
        classic
            .commands(&old)
            .contains("Yama's ptrace_scope is 0; set")
    );
    let yama = marking(Mark::NoNewPrivsOnly, Some(1));
    assert!(yama.ptrace_stopped());
    let text = yama.commands(&kernel(0));
    assert!(
        text.contains("Yama's ptrace_scope is 1, so it cannot trace"),
        "{text}"
    );
    let domain = marking(Mark::Domain, None);
    assert!(domain.ptrace_stopped());
    assert!(domain.commands(&kernel(7)).contains("a Landlock domain"));
}

#[test]
fn a_missing_landlock_says_whether_the_kernel_or_a_filter_is_why_and_what_to_change() {
    let off_at_boot = landlock_absent(
        libc::EOPNOTSUPP,
        false,
        Some("lockdown,yama,apparmor"),
        Some("capability,lockdown,yama,apparmor"),
    );
    assert!(
        off_at_boot.starts_with(
            "built into this kernel but turned off at boot (EOPNOTSUPP): the boot parameter \
                 lsm=lockdown,yama,apparmor leaves it out (active now: \
                 capability,lockdown,yama,apparmor); add landlock to the boot parameter lsm="
        ),
        "{off_at_boot}"
    );
    let built_in_list = landlock_absent(libc::EOPNOTSUPP, false, None, None);
    assert!(
        built_in_list.contains("(CONFIG_LSM) leaves it out"),
        "{built_in_list}"
    );
    let not_built = landlock_absent(libc::ENOSYS, false, None, None);
    assert!(
        not_built.starts_with("not built into this kernel (ENOSYS"),
        "{not_built}"
    );
    let profile = landlock_absent(libc::EPERM, true, None, None);
    assert!(
        profile.contains("refused (EPERM) by the seccomp filter"),
        "{profile}"
    );
    assert!(profile.contains("--security-opt seccomp="), "{profile}");
    let old_profile = landlock_absent(libc::ENOSYS, true, None, Some("landlock,yama"));
    assert!(
        old_profile.contains("though the kernel runs Landlock"),
        "{old_profile}"
    );
    let unsure = landlock_absent(libc::ENOSYS, true, None, None);
    assert!(unsure.contains("run `gate doctor` on the host"), "{unsure}");
    assert!(seccomp_absent(libc::EINVAL, false).starts_with("not built into this kernel"));
    assert!(seccomp_absent(libc::EPERM, true).contains("allow seccomp() in the profile"));
}
