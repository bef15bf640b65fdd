//! The seccomp filter compiled to classic BPF: the architecture check, a binary search
//! over the system call numbers, and each call's rules as tests of its arguments. What
//! is refused is decided in [`super`]; this only turns it into instructions.

use std::collections::BTreeMap;

use libc::sock_filter;

use super::{OwnExec, Rule, SandboxError, Test, error};

// Classic BPF (linux/bpf_common.h, linux/seccomp.h).
pub(super) const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
pub(super) const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
pub(super) const JA: u16 = 0x05; // BPF_JMP | BPF_JA
pub(super) const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
pub(super) const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
pub(super) const JSET_K: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
pub(super) const RET_K: u16 = 0x06; // BPF_RET | BPF_K
pub(super) const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
pub(super) const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
pub(super) const SECCOMP_RET_USER_NOTIF: u32 = libc::SECCOMP_RET_USER_NOTIF;
pub(super) const REFUSE: u32 = SECCOMP_RET_ERRNO | libc::EPERM as u32;
const OFFSET_NR: u32 = 0;
const OFFSET_ARCH: u32 = 4;
pub(super) const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The low 32 bits of argument `arg` in `struct seccomp_data`.
fn offset_arg(arg: u8) -> u32 {
    16 + 8 * u32::from(arg) + if cfg!(target_endian = "big") { 4 } else { 0 }
}

/// The high 32 bits of argument `arg` in `struct seccomp_data`.
fn offset_arg_high(arg: u8) -> u32 {
    16 + 8 * u32::from(arg) + if cfg!(target_endian = "big") { 0 } else { 4 }
}

/// The kernel's name for this architecture (linux/audit.h).
pub(super) fn audit_arch() -> Result<u32, SandboxError> {
    const LE64: u32 = 0x8000_0000 | 0x4000_0000;
    match std::env::consts::ARCH {
        "x86_64" => Ok(62 | LE64),
        "aarch64" => Ok(183 | LE64),
        "riscv64" => Ok(243 | LE64),
        other => Err(error(format!("no seccomp support for {other}"))),
    }
}

fn ins(code: u16, jt: u8, jf: u8, k: u32) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

/// A short forward jump, as BPF's 8-bit offsets allow (the blocks that use them are a
/// few instructions long).
fn short(offset: usize) -> u8 {
    u8::try_from(offset).expect("a rule's jumps are short")
}

/// The instructions of one call's rules, the syscall number no longer needed: refuse
/// when a rule holds, else allow (no rule at all: refuse).
fn compile_rules(rules: &[Rule], out: &mut Vec<sock_filter>) {
    if rules.is_empty() {
        // No rule: every call refused.
        out.push(ins(RET_K, 0, 0, REFUSE));
        return;
    }
    for rule in rules {
        let sizes: Vec<usize> = rule
            .iter()
            .map(|c| match c.test {
                Test::MaskedNe(..) | Test::MaskedEq(..) => 3,
                _ => 2,
            })
            .collect();
        // From the end of a condition's jump to the next rule: the conditions after it
        // and this rule's return.
        let mut after: usize = sizes.iter().sum::<usize>() + 1;
        for (c, size) in rule.iter().zip(&sizes) {
            after -= size;
            let skip = short(after);
            out.push(ins(LD_W_ABS, 0, 0, offset_arg(c.arg)));
            out.push(match c.test {
                Test::Eq(v) => ins(JEQ_K, 0, skip, v),
                Test::Ne(v) => ins(JEQ_K, skip, 0, v),
                Test::AnyBit(mask) => ins(JSET_K, 0, skip, mask),
                Test::MaskedNe(mask, _) | Test::MaskedEq(mask, _) => ins(AND_K, 0, 0, mask),
            });
            match c.test {
                Test::MaskedNe(_, v) => out.push(ins(JEQ_K, skip, 0, v)),
                Test::MaskedEq(_, v) => out.push(ins(JEQ_K, 0, skip, v)),
                _ => {}
            }
        }
        out.push(ins(RET_K, 0, 0, REFUSE));
    }
    out.push(ins(RET_K, 0, 0, SECCOMP_RET_ALLOW));
}

/// Where a long jump goes, resolved once every place is known.
#[derive(Debug, Clone, Copy)]
enum Label {
    /// A node of the search tree, by number.
    Node(usize),
    /// The rules of a call.
    Call(i64),
}

/// Emit the binary search for the syscall number (in the accumulator) over `calls`,
/// sorted: a comparison per level, then at most four tests for equality. Each branch
/// goes to its call's rules by a long jump; a number in no branch is allowed. Long
/// jumps are left as `(instruction, label)` to patch.
fn dispatch(
    calls: &[i64],
    out: &mut Vec<sock_filter>,
    jumps: &mut Vec<(usize, Label)>,
    nodes: &mut Vec<usize>,
) {
    if calls.len() <= 4 {
        for &nr in calls {
            out.push(ins(JEQ_K, 0, 1, nr as u32));
            jumps.push((out.len(), Label::Call(nr)));
            out.push(ins(JA, 0, 0, 0));
        }
        out.push(ins(RET_K, 0, 0, SECCOMP_RET_ALLOW));
        return;
    }
    let (low, high) = calls.split_at(calls.len() / 2);
    let node = nodes.len();
    nodes.push(0);
    // At or above the middle: jump to the upper half, else fall into the lower.
    out.push(ins(JGE_K, 0, 1, high[0] as u32));
    jumps.push((out.len(), Label::Node(node)));
    out.push(ins(JA, 0, 0, 0));
    dispatch(low, out, jumps, nodes);
    nodes[node] = out.len();
    dispatch(high, out, jumps, nodes);
}

/// The whole program: the architecture check, the search, the rules of each call (and
/// for each call in `notify`, the user notification).
pub(super) fn compile(
    table: &BTreeMap<i64, Vec<Rule>>,
    notify: &[i64],
    own: Option<OwnExec>,
    arch: u32,
    x32: bool,
) -> Vec<sock_filter> {
    let mut out = vec![
        ins(LD_W_ABS, 0, 0, OFFSET_ARCH),
        ins(JEQ_K, 1, 0, arch),
        ins(RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS),
        ins(LD_W_ABS, 0, 0, OFFSET_NR),
    ];
    if x32 {
        // On x86_64, every number with the x32 bit is refused: x32 calls have their own
        // numbers, which the rules below would not match.
        out.push(ins(JGE_K, 0, 1, X32_SYSCALL_BIT));
        out.push(ins(RET_K, 0, 0, REFUSE));
    }
    let mut calls: Vec<i64> = table.keys().chain(notify).copied().collect();
    calls.sort_unstable();
    calls.dedup();
    let mut jumps = Vec::new();
    let mut nodes = Vec::new();
    dispatch(&calls, &mut out, &mut jumps, &mut nodes);
    let mut starts = BTreeMap::new();
    for &nr in notify {
        starts.insert(nr, out.len());
        if let (Some(own), libc::SYS_execve) = (own, nr) {
            let words = own.0.iter().enumerate().flat_map(|(arg, &value)| {
                let arg = arg as u8;
                [
                    (offset_arg(arg), value as u32),
                    (offset_arg_high(arg), (value >> 32) as u32),
                ]
            });
            // Each test that fails jumps past the rest and the allow, to the notification.
            for (i, (offset, value)) in words.enumerate() {
                out.push(ins(LD_W_ABS, 0, 0, offset));
                out.push(ins(JEQ_K, 0, short((5 - i) * 2 + 1), value));
            }
            out.push(ins(RET_K, 0, 0, SECCOMP_RET_ALLOW));
        }
        out.push(ins(RET_K, 0, 0, SECCOMP_RET_USER_NOTIF));
    }
    for (&nr, rules) in table.iter().filter(|(nr, _)| !notify.contains(nr)) {
        starts.insert(nr, out.len());
        compile_rules(rules, &mut out);
    }
    for (at, label) in jumps {
        let target = match label {
            Label::Node(n) => nodes[n],
            Label::Call(nr) => starts[&nr],
        };
        out[at].k = (target - at - 1) as u32;
    }
    out
}
