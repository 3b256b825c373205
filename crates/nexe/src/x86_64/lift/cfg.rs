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
use iced_x86::{Code, Decoder, DecoderOptions, FlowControl, Instruction, Mnemonic};

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
            if i.op0_kind() == iced_x86::OpKind::NearBranch64 {
                Some(i.near_branch64() as u32)
            } else {
                None
            }
        }
        _ => None,
    }
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
        for i in insns {
            let a = i.ip() as u32;
            if a.is_multiple_of(BUNDLE_SIZE) && after_transfer && !is_padding(i) {
                starts.push(a);
            }
            // A return (NaCl's is an indirect jump) or a crash ends a function; a direct
            // jmp usually does not (loop heads after it are aligned too).
            if ends_flow(i) && i.flow_control() != FlowControl::UnconditionalBranch {
                after_transfer = true;
            } else if !is_padding(i) {
                after_transfer = false;
            }
        }
    }
    // Direct call targets are functions (the validator's facts list them for a nexe);
    // the other direct transfers (source, target) are kept for the fixpoint.
    let mut jumps: Vec<(u32, u32)> = Vec::new();
    for i in insns {
        let Some(t) = direct_target(i).filter(|&t| t >= base && t < end) else {
            continue;
        };
        if i.flow_control() == FlowControl::Call {
            starts.push(t);
        } else {
            jumps.push((i.ip() as u32, t));
        }
    }
    starts.sort_unstable();
    starts.dedup();
    // Fixpoint: direct jumps into the middle of another function's extent add starts.
    loop {
        // the start of the function holding `a` (the last start at or below it)
        let f_of = |s: &[u32], a: u32| s.partition_point(|&x| x <= a).checked_sub(1);
        let mut added = Vec::new();
        for &(from, t) in &jumps {
            if starts.binary_search(&t).is_ok() {
                continue;
            }
            if f_of(&starts, from) != f_of(&starts, t) {
                added.push(t);
            }
        }
        if added.is_empty() {
            break;
        }
        starts.extend(added);
        starts.sort_unstable();
        starts.dedup();
    }
    let v = starts;
    let mut out = Vec::with_capacity(v.len());
    let first = insns.partition_point(|i| (i.ip() as u32) < v.first().copied().unwrap_or(end));
    let mut k = first;
    for (n, &s) in v.iter().enumerate() {
        let e = v.get(n + 1).copied().unwrap_or(end);
        let mut leaders = vec![s];
        while k < insns.len() && (insns[k].ip() as u32) < e {
            let i = &insns[k];
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
            k += 1;
        }
        leaders.sort_unstable();
        leaders.dedup();
        out.push(Function {
            start: s,
            end: e,
            blocks: leaders,
        });
    }
    out
}
