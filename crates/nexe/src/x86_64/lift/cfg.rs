//! Function and block discovery on NaCl-valid code.
//!
//! NaCl's rules make disassembly exact (no instruction crosses a bundle, every direct
//! target is an instruction start), so a linear sweep from each function start is the
//! instruction stream. Functions are the entry, the direct call targets, and bundle starts
//! that follow padding after a return or a crash (where gcc and clang start functions
//! reached only through pointers); a function extends to the next start. A
//! direct jump into the middle of another function's extent makes its target a start too
//! (repeated until nothing changes), so every direct transfer lands either inside the
//! current function or on a function start (a tail call).

use super::super::BUNDLE_SIZE;
use iced_x86::{
    Code, Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic, OpKind, Register,
};
use rayon::prelude::*;

/// One decoded instruction of the code.
pub(crate) fn decode_all(code: &[u8], base: u32) -> Vec<Instruction> {
    let mut d = Decoder::with_ip(64, code, base as u64, DecoderOptions::NONE);
    // x86-64 code averages 3-4 bytes an instruction: no reallocation as it grows
    let mut out = Vec::with_capacity(code.len() / 3 + 16);
    let mut ins = Instruction::default();
    while d.can_decode() {
        d.decode_out(&mut ins);
        out.push(ins);
    }
    out
}

/// A function: its address range and its blocks (each a range of instruction indices).
#[derive(Debug, Clone)]
pub struct Function {
    pub start: u32,
    pub end: u32,
    /// Block start addresses, ascending; the first is `start`.
    pub blocks: Vec<u32>,
}

/// Whether control never falls through `i`.
pub(crate) fn ends_flow(i: &Instruction) -> bool {
    matches!(
        i.flow_control(),
        FlowControl::UnconditionalBranch
            | FlowControl::IndirectBranch
            | FlowControl::Return
            | FlowControl::Exception
    ) || i.mnemonic() == Mnemonic::Hlt
}

fn is_padding(i: &Instruction) -> bool {
    matches!(i.mnemonic(), Mnemonic::Nop | Mnemonic::Hlt | Mnemonic::Int3)
        || i.code() == Code::INVALID
}

/// Direct branch target of `i` (jmp, jcc, call), if any.
pub(crate) fn direct_target(i: &Instruction) -> Option<u32> {
    match i.flow_control() {
        FlowControl::UnconditionalBranch | FlowControl::ConditionalBranch | FlowControl::Call => {
            if i.op0_kind() == OpKind::NearBranch64 {
                Some(i.near_branch64() as u32)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// The return address of a call made the way PNaCl's Subzero makes them on x86-64, when
/// `insns[j]` ends one: `push $ret` then `jmp target` (direct), or `push $ret; and
/// $-32, %r32; [mov %r32, %r32;] add %r15, %r; jmp *%r` (indirect), locked in one bundle,
/// `ret` being the next bundle start (the validator's rule for the direct form). Such a
/// `jmp` is a call: its target is a function and control comes back at `ret`, which is
/// no function start (the validator's facts count the direct form as a call too).
pub(crate) fn pushed_call(insns: &[Instruction], j: usize) -> Option<u32> {
    pushed_call_push(insns, j).map(|(_, ret)| ret)
}

/// [`pushed_call`] with the index of its `push`.
fn pushed_call_push(insns: &[Instruction], j: usize) -> Option<(usize, u32)> {
    let jmp = insns.get(j)?;
    if jmp.mnemonic() != Mnemonic::Jmp {
        return None;
    }
    // the padding may follow the `jmp` (it is never run: the call comes back at `ret`)
    let ret = (jmp.next_ip() as u32).next_multiple_of(BUNDLE_SIZE);
    let bundle = ret - BUNDLE_SIZE;
    let direct = direct_target(jmp).is_some();
    if !direct && (jmp.op0_kind() != OpKind::Register || !jmp.op0_register().is_gpr64()) {
        return None;
    }
    // back over the indirect form's masking to the push, inside the bundle
    let mut k = j;
    loop {
        k = k.checked_sub(1)?;
        let i = &insns[k];
        if (i.ip() as u32) < bundle {
            return None;
        }
        if i.code() == Code::Pushq_imm32 {
            return (i.immediate(0) == ret as u64).then_some((k, ret));
        }
        if direct {
            return None;
        }
        // the registers need no check: the masking is lifted as it is, and the jump goes
        // where the jumped register says
        let reg = |n: u32| i.op_kind(n) == OpKind::Register;
        let ok = match i.mnemonic() {
            Mnemonic::And => {
                reg(0)
                    && i.op0_register().is_gpr32()
                    && i.op1_kind() != OpKind::Register
                    && i.immediate(1) as u32 == !(BUNDLE_SIZE - 1)
            }
            Mnemonic::Mov => {
                reg(0) && reg(1) && i.op0_register().is_gpr32() && i.op1_register().is_gpr32()
            }
            Mnemonic::Add => reg(0) && reg(1) && i.op1_register() == Register::R15,
            Mnemonic::Nop => true,
            _ => false,
        };
        if !ok {
            return None;
        }
    }
}

/// Whether `insns[k]` is the `push $ret` of a [`pushed_call`] (its `jmp` is at most five
/// instructions on, in the same bundle).
pub(crate) fn is_call_push(insns: &[Instruction], k: usize) -> bool {
    insns[k].code() == Code::Pushq_imm32
        && (k + 1..insns.len().min(k + 6))
            .find(|&j| insns[j].flow_control() != FlowControl::Next)
            .is_some_and(|j| pushed_call_push(insns, j).is_some_and(|(p, _)| p == k))
}

/// Adds to `starts` (sorted) the target of every direct jump (source, target) into the
/// middle of another function's extent, until none is left: the least such set, as
/// repeated rounds over all jumps would give, without their cost (long chains of
/// splits made that quadratic).
///
/// A jump leaves its function exactly when a start lies in `(min, max]` of its source
/// and target, so each start added is looked up among the jumps not yet leaving (an
/// interval stabbing query: jumps sorted by `min`, a max-tree over their `max`), and
/// each jump is reported once.
fn close_over_jumps(starts: &mut Vec<u32>, jumps: &[(u32, u32)], base: u32, end: u32) {
    let span = (end - base) as usize;
    let mut is_start = vec![false; span];
    for &s in starts.iter() {
        is_start[(s - base) as usize] = true;
    }
    let leaves = |s: &[u32], lo: u32, hi: u32| {
        let k = s.partition_point(|&x| x <= lo);
        k < s.len() && s[k] <= hi
    };
    let mut work: Vec<u32> = Vec::new();
    // (lo, hi, target) of the jumps that stay in their function so far
    let mut pending: Vec<(u32, u32, u32)> = Vec::new();
    for &(from, t) in jumps {
        if is_start[(t - base) as usize] {
            continue;
        }
        let (lo, hi) = (from.min(t), from.max(t));
        if leaves(starts, lo, hi) {
            is_start[(t - base) as usize] = true;
            work.push(t);
        } else {
            pending.push((lo, hi, t));
        }
    }
    pending.sort_unstable();
    // tree[n + k] = hi of pending[k] (0 once reported); inner nodes hold their maximum
    let n = pending.len().next_power_of_two().max(1);
    let mut tree = vec![0u32; 2 * n];
    for (k, p) in pending.iter().enumerate() {
        tree[n + k] = p.1;
    }
    for k in (1..n).rev() {
        tree[k] = tree[2 * k].max(tree[2 * k + 1]);
    }
    let mut found = Vec::new();
    while let Some(a) = work.pop() {
        // jumps with lo < a <= hi: a prefix by lo, then those whose hi reaches a
        let p = pending.partition_point(|j| j.0 < a);
        stab(&tree, 1, 0, n, p, a, &mut found);
        for k in found.drain(..) {
            let mut i = n + k;
            tree[i] = 0;
            while i > 1 {
                i /= 2;
                tree[i] = tree[2 * i].max(tree[2 * i + 1]);
            }
            let t = pending[k].2;
            if !is_start[(t - base) as usize] {
                is_start[(t - base) as usize] = true;
                work.push(t);
            }
        }
    }
    starts.clear();
    starts.extend(
        is_start
            .iter()
            .enumerate()
            .filter(|(_, &s)| s)
            .map(|(k, _)| base + k as u32),
    );
}

/// The leaves `k < limit` under `node` (covering `[from, from + width)`) whose value is
/// at least `a`.
fn stab(
    tree: &[u32],
    node: usize,
    from: usize,
    width: usize,
    limit: usize,
    a: u32,
    out: &mut Vec<usize>,
) {
    if from >= limit || tree[node] < a {
        return;
    }
    if width == 1 {
        out.push(from);
        return;
    }
    let half = width / 2;
    stab(tree, 2 * node, from, half, limit, a, out);
    stab(tree, 2 * node + 1, from + half, half, limit, a, out);
}

/// The functions of `insns` (decoded from `base..end`), given the known starts (entry and
/// call targets); `padded_starts` adds bundle starts after padding.
pub fn discover(
    insns: &[Instruction],
    base: u32,
    end: u32,
    known: &[u32],
    padded_starts: bool,
) -> Vec<Function> {
    // Sorted vectors, not sets: starts are added in a few bulk rounds and looked up often.
    let mut starts: Vec<u32> = known
        .iter()
        .copied()
        .filter(|&a| a >= base && a < end)
        .collect();
    if padded_starts {
        let mut after_transfer = false;
        for (k, i) in insns.iter().enumerate() {
            let a = i.ip() as u32;
            if a.is_multiple_of(BUNDLE_SIZE) && after_transfer && !is_padding(i) {
                starts.push(a);
            }
            // A return (NaCl's is an indirect jump) or a crash ends a function; a direct
            // jmp usually does not (loop heads after it are aligned too), nor does a call.
            if ends_flow(i)
                && i.flow_control() != FlowControl::UnconditionalBranch
                && pushed_call(insns, k).is_none()
            {
                after_transfer = true;
            } else if !is_padding(i) {
                after_transfer = false;
            }
        }
    }
    // Direct call targets, pushed-return calls' too, are functions (the validator's facts
    // list them for a nexe); the other direct transfers (source, target) are kept for the
    // fixpoint.
    let mut jumps: Vec<(u32, u32)> = Vec::new();
    for (k, i) in insns.iter().enumerate() {
        let Some(t) = direct_target(i).filter(|&t| t >= base && t < end) else {
            continue;
        };
        if i.flow_control() == FlowControl::Call
            || (i.mnemonic() == Mnemonic::Jmp && pushed_call(insns, k).is_some())
        {
            starts.push(t);
        } else {
            jumps.push((i.ip() as u32, t));
        }
    }
    starts.sort_unstable();
    starts.dedup();
    close_over_jumps(&mut starts, &jumps, base, end);
    let v = starts;
    let mut out: Vec<Function> = v
        .iter()
        .enumerate()
        .map(|(n, &s)| Function {
            start: s,
            end: v.get(n + 1).copied().unwrap_or(end),
            blocks: Vec::new(),
        })
        .collect();
    // Each function's blocks depend on its own instructions only: in parallel.
    out.par_iter_mut().with_max_len(64).for_each(|f| {
        let lo = insns.partition_point(|i| (i.ip() as u32) < f.start);
        let hi = insns.partition_point(|i| (i.ip() as u32) < f.end);
        f.blocks = blocks(&insns[lo..hi], f.start, f.end);
    });
    out
}

/// The block starts of the function `s..e` whose instructions are `insns`, ascending.
fn blocks(insns: &[Instruction], s: u32, e: u32) -> Vec<u32> {
    let mut leaders = vec![s];
    for i in insns {
        let a = i.ip() as u32;
        if a.is_multiple_of(BUNDLE_SIZE) {
            // Indirect jumps within the function reach bundle starts.
            leaders.push(a);
        }
        if let Some(t) = direct_target(i) {
            if t >= s && t < e {
                leaders.push(t);
            }
        }
        let next = a.wrapping_add(i.len() as u32);
        if i.flow_control() != FlowControl::Next && next < e {
            leaders.push(next);
        }
    }
    leaders.sort_unstable();
    leaders.dedup();
    leaders
}
