use super::*;

#[test]
fn this_machine_has_landlock_and_seccomp() {
    // The development and CI machines run Linux 6.18 with Landlock ABI 7. If this
    // fails, the machine cannot run the safe level and the sandbox tests will fail
    // too: say so plainly.
    let k = probe();
    assert!(
        k.landlock_abi >= 6,
        "this kernel offers Landlock ABI {}; the safe level's tests need ABI 6 or newer",
        k.landlock_abi
    );
    assert!(k.seccomp, "this kernel cannot load seccomp filters");
    assert!(
        k.user_notify,
        "this kernel has no seccomp user notification"
    );
}
