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
use std::collections::BTreeSet;

/// One decoded instruction of the code.
pub(crate) fn decode_all(code: &[u8], base: u32) -> Vec<Instruction> {
    let mut d = Decoder::with_ip(64, code, base as u64, DecoderOptions::NONE);
    let mut out = Vec::with_capacity(code.len() / 4);
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
    let mut starts: BTreeSet<u32> = known
        .iter()
        .copied()
        .filter(|&a| a >= base && a < end)
        .collect();
    if padded_starts {
        let mut after_transfer = false;
        for i in insns {
            let a = i.ip() as u32;
            if a.is_multiple_of(BUNDLE_SIZE) && after_transfer && !is_padding(i) {
                starts.insert(a);
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
    // Direct call targets are functions (the validator's facts list them for a nexe).
    for i in insns {
        if i.flow_control() == FlowControl::Call {
            if let Some(t) = direct_target(i).filter(|&t| t >= base && t < end) {
                starts.insert(t);
            }
        }
    }
    // Fixpoint: direct jumps into the middle of another function's extent add starts.
    loop {
        let mut added = Vec::new();
        for i in insns {
            let Some(t) = direct_target(i) else { continue };
            if t < base || t >= end || starts.contains(&t) {
                continue;
            }
            let from = i.ip() as u32;
            let f_of = |a: u32| starts.range(..=a).next_back().copied();
            if f_of(from) != f_of(t) {
                added.push(t);
            }
        }
        if added.is_empty() {
            break;
        }
        starts.extend(added);
    }
    let v: Vec<u32> = starts.into_iter().collect();
    let mut out = Vec::with_capacity(v.len());
    let first = insns.partition_point(|i| (i.ip() as u32) < v.first().copied().unwrap_or(end));
    let mut k = first;
    for (n, &s) in v.iter().enumerate() {
        let e = v.get(n + 1).copied().unwrap_or(end);
        let mut leaders = BTreeSet::new();
        leaders.insert(s);
        while k < insns.len() && (insns[k].ip() as u32) < e {
            let i = &insns[k];
            let a = i.ip() as u32;
            if a.is_multiple_of(BUNDLE_SIZE) {
                // Indirect jumps within the function reach bundle starts.
                leaders.insert(a);
            }
            if let Some(t) = direct_target(i) {
                if t >= s && t < e {
                    leaders.insert(t);
                }
            }
            let next = a.wrapping_add(i.len() as u32);
            if i.flow_control() != FlowControl::Next && next < e {
                leaders.insert(next);
            }
            k += 1;
        }
        out.push(Function {
            start: s,
            end: e,
            blocks: leaders.into_iter().collect(),
        });
    }
    out
}
