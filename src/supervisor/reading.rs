//! Whether the supervisor may read the command's memory here (Yama's `ptrace_scope`),
//! and the words for when it may not. Reads one file; decides nothing else.

/// How the supervisor may read the memory of the command's processes here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reading {
    /// By the classic rules: the same user, and no capability the supervisor lacks (no
    /// Yama, Yama's `ptrace_scope` 0, or root's CAP_SYS_PTRACE kept at 1 and 2).
    Direct,
    /// Only as the owner of a user namespace the command runs in: Yama's `ptrace_scope`
    /// 1 and 2 let a process read another's memory when it is an ancestor, or holds
    /// CAP_SYS_PTRACE over the other's user namespace, which the owner of a namespace
    /// does from the namespace's parent, with no capability of its own.
    OwnUserNamespace,
}

/// How the supervisor may read the memory of the command's processes here, or why it
/// may not at all (Yama's `ptrace_scope` 3). `keeps_capabilities`: the supervisor keeps
/// root's capabilities.
pub(crate) fn readable(keeps_capabilities: bool) -> Result<Reading, String> {
    let scope = match std::fs::read_to_string("/proc/sys/kernel/yama/ptrace_scope") {
        Ok(text) => text.trim().parse::<u8>().unwrap_or(3),
        // No Yama in this kernel: the classic rules only.
        Err(_) => return Ok(Reading::Direct),
    };
    match scope {
        0 => Ok(Reading::Direct),
        1 | 2 if keeps_capabilities => Ok(Reading::Direct),
        1 | 2 => Ok(Reading::OwnUserNamespace),
        scope => Err(format!(
            "Yama's ptrace_scope is {scope} on this machine, which forbids every process to \
             read another's memory, so gate's supervisor could not read what the command's \
             processes ask to run and deny rules could not be checked at exec; set \
             kernel.yama.ptrace_scope to 2 or less (sysctl), or run without deny rules"
        )),
    }
}

/// Why deny rules cannot be checked at exec under Yama's `ptrace_scope` 1 or 2 when the
/// command cannot run in a user namespace of its own (`why`).
pub(crate) fn unreadable_without_namespace(why: &str) -> String {
    unreadable_for(
        why,
        "deny rules could not be checked at exec",
        "run without deny rules",
    )
}

/// Why the supervisor cannot decide TCP in place of Landlock's TCP rules (a kernel
/// before Landlock ABI 4) under Yama's `ptrace_scope` 1 or 2 when the command cannot
/// run in a user namespace of its own (`why`).
pub(crate) fn tcp_unreadable_without_namespace(why: &str) -> String {
    unreadable_for(
        why,
        "TCP connections could not be decided in place of Landlock's TCP rules, which \
         this kernel lacks",
        "run without ports and domains (--net-connect, --net-bind, --allow-domain)",
    )
}

fn unreadable_for(why: &str, so: &str, or: &str) -> String {
    format!(
        "Yama's ptrace_scope forbids gate's supervisor to read the memory of processes it \
         did not start, unless they run in a user namespace it owns, and none can be made \
         here ({why}), so {so}; set kernel.yama.ptrace_scope to 0 (sysctl), allow user \
         namespaces, or {or}"
    )
}
