//! NaCl's x86-64 validator over iced-x86's decoder.
//!
//! One pass over the code, bundle by bundle, in the order NaCl's DFA validator checks:
//! each instruction is decoded (iced-x86), must stay inside its bundle and be one NaCl
//! allows; memory operands must be `%r15`/`%rsp`/`%rbp`/`%rip`-based with an index only
//! when the instruction just before zero-extended it; `%r15` is never written, `%rsp` and
//! `%rbp` only in the whitelisted sequences; indirect jumps and calls, and string
//! instructions, only inside their pseudo-instructions. Direct jump targets are checked at
//! the end against the instruction starts that are not inside a pseudo-instruction.
//!
//! The "restricted register" is NaCl's name for the register the previous instruction of
//! the same bundle wrote as a 32-bit register (so its upper half is zero): only it may be
//! a memory index, and a restricted `%rsp`/`%rbp` must be re-based on `%r15` by the very
//! next instruction.

use super::facts::{ByteSet, CodeFacts};
use super::rules::{Rule, ValidationError, Warning, BUNDLE_SIZE};
use iced_x86::{
    Code, CpuidFeature, Decoder, DecoderOptions, FlowControl, Formatter, GasFormatter, Instruction,
    InstructionInfoFactory, Mnemonic, OpAccess, OpKind, Register,
};

/// At most this many errors are kept (all are counted): garbage input finds one per
/// instruction, and a report needs the first few.
pub const MAX_ERRORS: usize = 64;
const MAX_WARNINGS: usize = 64;

/// The result of validating x86-64 code.
#[derive(Debug, Clone, Default)]
pub struct Validation {
    pub facts: CodeFacts,
    /// The first [`MAX_ERRORS`] errors, in address order of the instructions.
    pub errors: Vec<ValidationError>,
    /// How many errors there were in all.
    pub error_count: usize,
    pub warnings: Vec<Warning>,
    pub warning_count: usize,
}

impl Validation {
    /// Whether NaCl's validator would accept the code.
    pub fn is_valid(&self) -> bool {
        self.error_count == 0
    }
}

/// Validates `code`, loaded at sandbox address `base` (bundle-aligned). The caller pads
/// the text to whole bundles with `hlt` (0xf4), as NaCl's loader does.
pub fn validate(code: &[u8], base: u32) -> Validation {
    Validator::new(code, base).run()
}

/// What the last instructions of the current bundle were, for the pseudo-instructions
/// (`nacljmp`, sandboxed string instructions) that span several.
#[derive(Clone, Copy)]
struct Prev {
    start: usize,
    len: usize,
    code: Code,
    op0: Register,
    op1: Register,
    /// The immediate of a `push $imm32` (the return address of a pushed-return call).
    pushed: Option<u64>,
}

struct Validator<'a> {
    code: &'a [u8],
    base: u32,
    facts: CodeFacts,
    errors: Vec<ValidationError>,
    error_count: usize,
    warnings: Vec<Warning>,
    warning_count: usize,
    /// (source instruction offset, target address) of direct jumps and calls into the code
    /// at addresses that are not bundle starts.
    unaligned_jumps: Vec<(u32, u32)>,
    jump_targets: Vec<u32>,
    call_targets: Vec<u32>,
    outside_targets: Vec<u32>,
    /// The register the previous instruction (same bundle) zero-extended, or `None`.
    restricted: Register,
    /// Offset of the instruction that restricted `%rsp`/`%rbp`, for the error.
    restricted_at: usize,
    /// The instructions of the current bundle so far (at most 4 kept: the longest
    /// pseudo-instruction has 5 parts and its last is the one being checked).
    history: [Option<Prev>; 4],
    info: InstructionInfoFactory,
}

impl<'a> Validator<'a> {
    fn new(code: &'a [u8], base: u32) -> Validator<'a> {
        Validator {
            code,
            base,
            facts: CodeFacts {
                base,
                size: code.len() as u32,
                valid_targets: ByteSet::new(code.len()),
                ..CodeFacts::default()
            },
            errors: Vec::new(),
            error_count: 0,
            warnings: Vec::new(),
            warning_count: 0,
            unaligned_jumps: Vec::new(),
            jump_targets: Vec::new(),
            call_targets: Vec::new(),
            outside_targets: Vec::new(),
            restricted: Register::None,
            restricted_at: 0,
            history: [None; 4],
            info: InstructionInfoFactory::new(),
        }
    }

    fn run(mut self) -> Validation {
        let code = self.code;
        let mut decoder = Decoder::with_ip(64, code, self.base as u64, DecoderOptions::NONE);
        let mut instr = Instruction::default();
        let mut bundle = usize::MAX;
        while decoder.can_decode() {
            let pos = decoder.position();
            if pos / BUNDLE_SIZE as usize != bundle {
                self.end_bundle(bundle);
                bundle = pos / BUNDLE_SIZE as usize;
            }
            decoder.decode_out(&mut instr);
            let len = instr.len();
            let next_bundle = (bundle + 1) * BUNDLE_SIZE as usize;
            if instr.is_invalid() || pos + len > next_bundle {
                let rule = if instr.is_invalid() {
                    Rule::Undecodable
                } else {
                    Rule::CrossesBundle
                };
                let shown = if instr.is_invalid() {
                    None
                } else {
                    Some(&instr)
                };
                self.error_at(pos, len.max(1), shown, rule);
                // Go on with the next bundle, so one bad spot gives one error.
                if next_bundle >= code.len() {
                    break;
                }
                let _ = decoder.set_position(next_bundle);
                decoder.set_ip(self.base as u64 + next_bundle as u64);
                self.restricted = Register::None;
                continue;
            }
            self.facts.instructions += 1;
            self.facts.valid_targets.set(pos);
            self.instruction(&instr, pos);
        }
        self.end_bundle(bundle);
        self.check_jumps();
        self.finish()
    }

    /// The end of a bundle: a restricted `%rsp`/`%rbp` must have been re-based inside it.
    fn end_bundle(&mut self, bundle: usize) {
        if bundle != usize::MAX {
            match self.restricted {
                Register::RSP => self.error_plain(self.restricted_at, Rule::RspNotResandboxed),
                Register::RBP => self.error_plain(self.restricted_at, Rule::RbpNotResandboxed),
                _ => {}
            }
        }
        self.restricted = Register::None;
        self.history = [None; 4];
    }

    fn instruction(&mut self, instr: &Instruction, pos: usize) {
        let bytes = &self.code[pos..pos + instr.len()];
        let before = self.restricted;
        let mut next_restricted = Register::None;

        if let Some(special) = special_stack_instruction(bytes) {
            match special {
                Special::Modification => {
                    self.check_unprocessed(pos, before, instr);
                }
                Special::Resandbox(reg) => {
                    if before != reg {
                        self.error_at(
                            pos,
                            bytes.len(),
                            Some(instr),
                            Rule::ResandboxWithoutRestrict,
                        );
                    }
                    // The second half of a pseudo-instruction: no jump may land on it.
                    self.facts.valid_targets.clear(pos);
                }
            }
            self.restricted = Register::None;
            self.push_history(instr, pos);
            return;
        }

        self.check_unprocessed(pos, before, instr);
        self.check_prefixes(instr, bytes, pos);
        if let Some(what) = forbidden(instr) {
            self.error_at(pos, bytes.len(), Some(instr), Rule::Forbidden { what });
        }

        match instr.flow_control() {
            FlowControl::UnconditionalBranch
            | FlowControl::ConditionalBranch
            | FlowControl::Call
                if is_near_branch(instr) =>
            {
                self.direct_branch(instr, pos);
            }
            FlowControl::IndirectBranch | FlowControl::IndirectCall => {
                self.indirect_branch(instr, pos);
            }
            _ => {}
        }

        if instr.is_string_instruction()
            || matches!(
                instr.mnemonic(),
                Mnemonic::Maskmovq | Mnemonic::Maskmovdqu | Mnemonic::Vmaskmovdqu
            )
        {
            self.string_instruction(instr, pos);
        }

        // Explicit memory operands: base and index.
        if accesses_memory(instr) {
            for i in 0..instr.op_count() {
                if instr.op_kind(i) == OpKind::Memory {
                    self.memory_operand(instr, pos, before);
                }
            }
        }

        // Writes of the registers the sandbox depends on.
        if touches_protected_register(instr) {
            next_restricted = self.protected_writes(instr, pos);
        }
        if next_restricted == Register::None {
            next_restricted = zero_extended(instr);
        }
        if matches!(next_restricted, Register::RSP | Register::RBP) {
            self.restricted_at = pos;
        }
        self.restricted = next_restricted;
        self.push_history(instr, pos);
    }

    /// A regular instruction while `%rsp`/`%rbp` waits for its re-basing is an error.
    fn check_unprocessed(&mut self, pos: usize, before: Register, instr: &Instruction) {
        let rule = match before {
            Register::RSP => Rule::RspNotResandboxed,
            Register::RBP => Rule::RbpNotResandboxed,
            _ => return,
        };
        self.error_at(pos, instr.len(), Some(instr), rule);
    }

    fn check_prefixes(&mut self, instr: &Instruction, bytes: &[u8], pos: usize) {
        const fn is_legacy_prefix(b: u8) -> bool {
            matches!(
                b,
                0x66 | 0x67 | 0xf0 | 0xf2 | 0xf3 | 0x26 | 0x2e | 0x36 | 0x3e | 0x64 | 0x65
            )
        }
        // Most instructions have none: the hot path is this one comparison.
        if !is_legacy_prefix(bytes[0]) {
            return;
        }
        let nop = instr.mnemonic() == Mnemonic::Nop;
        // Bit i set: the i-th of the prefixes above seen.
        let mut seen = 0u32;
        let (mut op_size, mut hint) = (false, false);
        for &b in bytes.iter().take_while(|&&b| is_legacy_prefix(b)) {
            let what = match b {
                0x66 | 0xf0 | 0xf2 | 0xf3 => None,
                0x67 => Some("address-size prefix (0x67)"),
                0x26 | 0x36 | 0x64 | 0x65 => Some("segment override"),
                // As branch hints on conditional jumps, and in multi-byte nops.
                _ if instr.is_jcc_short_or_near() || nop => None,
                _ => Some("segment override"),
            };
            if let Some(what) = what {
                self.error_at(pos, bytes.len(), Some(instr), Rule::BadPrefix { what });
                return;
            }
            let bit = 1u32 << (b % 32);
            if seen & bit != 0 && !nop {
                self.error_at(
                    pos,
                    bytes.len(),
                    Some(instr),
                    Rule::BadPrefix {
                        what: "duplicate prefix",
                    },
                );
                return;
            }
            seen |= bit;
            op_size |= b == 0x66;
            hint |= b == 0x2e || b == 0x3e;
        }
        if op_size && is_near_branch(instr) {
            self.error_at(
                pos,
                bytes.len(),
                Some(instr),
                Rule::BadPrefix {
                    what: "operand-size prefix (0x66) on a branch: 16-bit jumps",
                },
            );
        }
        if hint && (instr.is_loop() || instr.is_loopcc()) {
            self.error_at(
                pos,
                bytes.len(),
                Some(instr),
                Rule::BadPrefix {
                    what: "branch hint on loop",
                },
            );
        }
    }

    fn direct_branch(&mut self, instr: &Instruction, pos: usize) {
        let target = instr.near_branch_target();
        let end = pos + instr.len();
        // PNaCl's x86-64 code calls with `push $return; jmp target`, the return address
        // being the next bundle start.
        let pushed_return = instr.flow_control() == FlowControl::UnconditionalBranch
            && self.history[3].is_some_and(|p| {
                p.start + p.len == pos
                    && p.pushed
                        == Some(
                            self.base as u64 + end.next_multiple_of(BUNDLE_SIZE as usize) as u64,
                        )
            });
        if pushed_return {
            self.facts.pushed_return_calls += 1;
        }
        let is_call = instr.flow_control() == FlowControl::Call || pushed_return;
        if instr.flow_control() == FlowControl::Call && !end.is_multiple_of(BUNDLE_SIZE as usize) {
            self.warn(Warning::CallNotAtBundleEnd {
                address: self.addr(pos),
            });
        }
        let base = self.base as u64;
        let inside = target >= base && target < base + self.code.len() as u64;
        if target > u32::MAX as u64 {
            self.error_at(
                pos,
                instr.len(),
                Some(instr),
                Rule::JumpOutOfRange {
                    target: target as u32,
                },
            );
            return;
        }
        let target = target as u32;
        if target.is_multiple_of(BUNDLE_SIZE) {
            // Every bundle start is a valid target, inside the code or not (the syscall
            // trampolines below it).
            if !inside {
                self.outside_targets.push(target);
            }
        } else if !inside {
            self.error_at(
                pos,
                instr.len(),
                Some(instr),
                Rule::JumpOutOfRange { target },
            );
            return;
        } else {
            self.unaligned_jumps.push((pos as u32, target));
        }
        if inside {
            if is_call {
                self.call_targets.push(target);
            } else {
                self.jump_targets.push(target);
            }
        }
    }

    /// `jmp`/`call *%rXX` must end `and $-32,%eXX; add %r15,%rXX; jmp/call *%rXX`.
    fn indirect_branch(&mut self, instr: &Instruction, pos: usize) {
        let is_call = instr.flow_control() == FlowControl::IndirectCall;
        let reg_form = matches!(instr.code(), Code::Jmp_rm64 | Code::Call_rm64)
            && instr.op_kind(0) == OpKind::Register;
        let ok = reg_form && {
            let r = instr.op_register(0);
            let h = &self.history;
            match (h[2], h[3]) {
                (Some(and), Some(add)) => {
                    and.start + and.len == add.start
                        && add.start + add.len == pos
                        && and.code == Code::And_rm32_imm8
                        && and.op0.full_register() == r
                        && self.code[and.start + and.len - 1] == 0xe0
                        && matches!(add.code, Code::Add_rm64_r64 | Code::Add_r64_rm64)
                        && add.op0 == r
                        && add.op1 == Register::R15
                        && r != Register::R15
                }
                _ => false,
            }
        };
        if !ok {
            self.error_at(pos, instr.len(), Some(instr), Rule::IndirectNotSandboxed);
            return;
        }
        if is_call {
            self.facts.indirect_calls += 1;
            if !(pos + instr.len()).is_multiple_of(BUNDLE_SIZE as usize) {
                self.warn(Warning::CallNotAtBundleEnd {
                    address: self.addr(pos),
                });
            }
        } else {
            self.facts.indirect_jumps += 1;
        }
        // The add and the jump are inside the pseudo-instruction.
        if let Some(add) = self.history[3] {
            self.facts.valid_targets.clear(add.start);
        }
        self.facts.valid_targets.clear(pos);
    }

    /// String instructions use `(%rdi)`/`(%rsi)` implicitly; they are allowed right after
    /// `mov %esi,%esi; lea (%r15,%rsi,1),%rsi` / `mov %edi,%edi; lea (%r15,%rdi,1),%rdi`.
    fn string_instruction(&mut self, instr: &Instruction, pos: usize) {
        use Mnemonic::*;
        let (rsi, rdi) = match instr.mnemonic() {
            Lodsb | Lodsw | Lodsd | Lodsq => (true, false),
            Stosb | Stosw | Stosd | Stosq | Scasb | Scasw | Scasd | Scasq | Maskmovq
            | Maskmovdqu => (false, true),
            Movsb | Movsw | Movsd | Movsq | Cmpsb | Cmpsw | Cmpsd | Cmpsq => (true, true),
            // ins/outs are refused as I/O already; vmaskmovdqu NaCl never allowed.
            _ => {
                self.error_at(pos, instr.len(), Some(instr), Rule::StringNotSandboxed);
                return;
            }
        };
        // Movsd/Cmpsd are also SSE2 mnemonics; only the string forms get here.
        let parts: Vec<(Register, [u8; 4])> = [
            (rsi, Register::ESI, [0x49, 0x8d, 0x34, 0x37]),
            (rdi, Register::EDI, [0x49, 0x8d, 0x3c, 0x3f]),
        ]
        .into_iter()
        .filter(|p| p.0)
        .map(|p| (p.1, p.2))
        .collect();
        let need = parts.len() * 2;
        let h = &self.history;
        let mut ok = h[4 - need..].iter().all(Option::is_some);
        if ok {
            let seq: Vec<Prev> = h[4 - need..].iter().map(|p| p.unwrap()).collect();
            let mut at = seq[0].start;
            for (i, (reg, lea)) in parts.iter().enumerate() {
                let mov = seq[2 * i];
                let lea_p = seq[2 * i + 1];
                ok &= mov.start == at
                    && matches!(mov.code, Code::Mov_rm32_r32 | Code::Mov_r32_rm32)
                    && mov.op0 == *reg
                    && mov.op1 == *reg
                    && lea_p.start == mov.start + mov.len
                    && self.code.get(lea_p.start..lea_p.start + 4) == Some(&lea[..])
                    && lea_p.len == 4;
                at = lea_p.start + lea_p.len;
            }
            ok &= at == pos;
            if ok {
                for p in &seq[1..] {
                    self.facts.valid_targets.clear(p.start);
                }
            }
        }
        if !ok {
            self.error_at(pos, instr.len(), Some(instr), Rule::StringNotSandboxed);
            return;
        }
        self.facts.valid_targets.clear(pos);
    }

    fn memory_operand(&mut self, instr: &Instruction, pos: usize, restricted: Register) {
        let base = instr.memory_base();
        if !matches!(
            base,
            Register::R15 | Register::RSP | Register::RBP | Register::RIP
        ) {
            let base = if base == Register::None {
                "none (an absolute address)".to_string()
            } else {
                reg_name(base)
            };
            self.error_at(pos, instr.len(), Some(instr), Rule::ForbiddenBase { base });
            return;
        }
        let index = instr.memory_index();
        if index == Register::None {
            return;
        }
        if index == restricted {
            // Relies on the zero-extension just before: no jump may land between them.
            self.facts.valid_targets.clear(pos);
        } else {
            self.error_at(
                pos,
                instr.len(),
                Some(instr),
                Rule::UnrestrictedIndex {
                    index: reg_name(index),
                },
            );
        }
    }

    /// Checks explicit writes of `%r15`, `%rsp`, `%rbp` (any width); returns `%rsp`/`%rbp`
    /// when the instruction legitimately starts their re-basing (a zero-extending 32-bit
    /// write of `%esp`/`%ebp` as its destination).
    fn protected_writes(&mut self, instr: &Instruction, pos: usize) -> Register {
        let zext = zero_extended(instr);
        let info = self.info.info(instr);
        let mut rule = None;
        for i in 0..instr.op_count() {
            if instr.op_kind(i) != OpKind::Register {
                continue;
            }
            let reg = instr.op_register(i);
            let full = reg.full_register();
            let written = matches!(
                info.op_access(i),
                OpAccess::Write
                    | OpAccess::CondWrite
                    | OpAccess::ReadWrite
                    | OpAccess::ReadCondWrite
            );
            if !written {
                continue;
            }
            match full {
                Register::R15 => rule = Some(Rule::R15Modified),
                Register::RSP | Register::RBP => {
                    let starts_rebase = i == 0 && zext == full && reg.is_gpr32();
                    if !starts_rebase {
                        rule = Some(if full == Register::RSP {
                            Rule::RspModified
                        } else {
                            Rule::RbpModified
                        });
                    }
                }
                _ => {}
            }
        }
        if let Some(rule) = rule {
            self.error_at(pos, instr.len(), Some(instr), rule);
            return Register::None;
        }
        zext
    }

    fn push_history(&mut self, instr: &Instruction, pos: usize) {
        self.history.rotate_left(1);
        self.history[3] = Some(Prev {
            start: pos,
            len: instr.len(),
            code: instr.code(),
            op0: reg_op(instr, 0),
            op1: reg_op(instr, 1),
            pushed: (instr.code() == Code::Pushq_imm32).then(|| instr.immediate(0)),
        });
    }

    /// Direct jumps into the code at addresses that are not bundle starts must land on an
    /// instruction start outside any pseudo-instruction.
    fn check_jumps(&mut self) {
        let jumps = std::mem::take(&mut self.unaligned_jumps);
        for (src, target) in jumps {
            let off = (target - self.base) as usize;
            if !self.facts.valid_targets.get(off) {
                self.error_plain(src as usize, Rule::BadJumpTarget { target });
            }
        }
    }

    fn finish(mut self) -> Validation {
        for v in [
            &mut self.jump_targets,
            &mut self.call_targets,
            &mut self.outside_targets,
        ] {
            v.sort_unstable();
            v.dedup();
        }
        self.facts.jump_targets = self.jump_targets;
        self.facts.call_targets = self.call_targets;
        self.facts.outside_targets = self.outside_targets;
        self.errors.sort_by_key(|e| e.address);
        Validation {
            facts: self.facts,
            errors: self.errors,
            error_count: self.error_count,
            warnings: self.warnings,
            warning_count: self.warning_count,
        }
    }

    fn addr(&self, pos: usize) -> u32 {
        self.base.wrapping_add(pos as u32)
    }

    fn warn(&mut self, w: Warning) {
        self.warning_count += 1;
        if self.warnings.len() < MAX_WARNINGS {
            self.warnings.push(w);
        }
    }

    /// An error at the instruction at `pos`, decoded again for the message.
    fn error_plain(&mut self, pos: usize, rule: Rule) {
        let mut d = Decoder::with_ip(
            64,
            &self.code[pos..],
            self.addr(pos) as u64,
            DecoderOptions::NONE,
        );
        let instr = d.decode();
        let shown = (!instr.is_invalid()).then_some(instr);
        self.error_at(pos, instr.len().max(1), shown.as_ref(), rule);
    }

    fn error_at(&mut self, pos: usize, len: usize, instr: Option<&Instruction>, rule: Rule) {
        self.error_count += 1;
        if self.errors.len() >= MAX_ERRORS {
            return;
        }
        let end = (pos + len).min(self.code.len());
        let bytes = hex(&self.code[pos..end]);
        let instruction = match instr {
            Some(i) => {
                let mut text = String::new();
                GasFormatter::new().format(i, &mut text);
                text
            }
            None => format!(".byte {bytes}"),
        };
        let address = self.addr(pos);
        self.errors.push(ValidationError {
            address,
            bundle: address & !(BUNDLE_SIZE - 1),
            instruction,
            bytes,
            rule,
        });
    }
}

enum Special {
    /// `mov %rsp,%rbp`, `mov %rbp,%rsp`, `and $-N,%rsp` (N ≤ 128).
    Modification,
    /// `add %r15,%rsp`/`%rbp` and their `lea`/`or` forms, re-basing `%rsp`/`%rbp` after a
    /// 32-bit write.
    Resandbox(Register),
}

/// The `%rsp`/`%rbp` instructions NaCl allows, recognized by their exact bytes (as NaCl's
/// validator does: other encodings of the same operation are refused).
fn special_stack_instruction(b: &[u8]) -> Option<Special> {
    let rex_w = |x: u8| x & 0xfd == 0x48; // REX.W, REX.X ignored
    let rex_wr = |x: u8| x & 0xfd == 0x4c; // REX.W + REX.R (r15 in reg)
    let rex_wb = |x: u8| x & 0xfd == 0x49; // REX.W + REX.B (r15 in rm)
    match b {
        [r, 0x89, 0xe5] | [r, 0x8b, 0xec] if rex_w(*r) => Some(Special::Modification),
        [r, 0x89, 0xec] | [r, 0x8b, 0xe5] if rex_w(*r) => Some(Special::Modification),
        [0x48, 0x83, 0xe4, imm] if *imm >= 0x80 => Some(Special::Modification),
        [r, 0x01, 0xfd] if rex_wr(*r) => Some(Special::Resandbox(Register::RBP)),
        [r, 0x03, 0xef] if rex_wb(*r) => Some(Special::Resandbox(Register::RBP)),
        [0x4a, 0x8d, 0x6c, 0x3d, 0x00] | [0x4a, 0x8d, 0xac, 0x3d, 0, 0, 0, 0] => {
            Some(Special::Resandbox(Register::RBP))
        }
        [r, 0x01 | 0x09, 0xfc] if rex_wr(*r) => Some(Special::Resandbox(Register::RSP)),
        [r, 0x03 | 0x0b, 0xe7] if rex_wb(*r) => Some(Special::Resandbox(Register::RSP)),
        [0x4a, 0x8d, 0x24, 0x3c]
        | [0x4a, 0x8d, 0x64, 0x3c, 0x00]
        | [0x4a, 0x8d, 0xa4, 0x3c, 0, 0, 0, 0] => Some(Special::Resandbox(Register::RSP)),
        _ => None,
    }
}

fn is_near_branch(instr: &Instruction) -> bool {
    matches!(
        instr.op0_kind(),
        OpKind::NearBranch16 | OpKind::NearBranch32 | OpKind::NearBranch64
    )
}

/// Whether the instruction's explicit memory operands are accesses (not `lea`'s address
/// arithmetic, a `nop`'s or a prefetch's unused operand).
fn accesses_memory(instr: &Instruction) -> bool {
    !matches!(
        instr.mnemonic(),
        Mnemonic::Lea
            | Mnemonic::Nop
            | Mnemonic::Prefetch
            | Mnemonic::Prefetchw
            | Mnemonic::Prefetchnta
            | Mnemonic::Prefetcht0
            | Mnemonic::Prefetcht1
            | Mnemonic::Prefetcht2
    )
}

/// Cheap filter: does any explicit register operand belong to `%r15`, `%rsp` or `%rbp`?
/// (Only then is the exact operand access looked up.)
fn touches_protected_register(instr: &Instruction) -> bool {
    (0..instr.op_count()).any(|i| {
        instr.op_kind(i) == OpKind::Register
            && matches!(
                instr.op_register(i).full_register(),
                Register::R15 | Register::RSP | Register::RBP
            )
    })
}

/// The 64-bit register whose upper half the instruction zeroes by writing its 32-bit
/// half as destination, for the instructions NaCl counts as zero-extending (mov, movzx/
/// movsx to 32 bits, lea, add/sub/and/or/xor, inc/dec/neg/not, 2- and 3-operand imul,
/// xchg/xadd, movd to a 32-bit register); `None` otherwise.
fn zero_extended(instr: &Instruction) -> Register {
    use Mnemonic::*;
    let zext = match instr.mnemonic() {
        Mov | Movsx | Movsxd | Movzx | Lea | Add | Sub | And | Or | Xor | Inc | Dec | Neg | Not
        | Xchg | Xadd | Movd | Vmovd => true,
        Imul => instr.op_count() >= 2,
        _ => false,
    };
    if zext && instr.op0_kind() == OpKind::Register && instr.op0_register().is_gpr32() {
        instr.op0_register().full_register()
    } else {
        Register::None
    }
}

fn reg_op(instr: &Instruction, i: u32) -> Register {
    if i < instr.op_count() && instr.op_kind(i) == OpKind::Register {
        instr.op_register(i)
    } else {
        Register::None
    }
}

/// Why NaCl refuses this instruction wherever it is, or `None` when it may appear.
fn forbidden(instr: &Instruction) -> Option<String> {
    use Mnemonic::*;
    let m = instr.mnemonic();
    let what: &str = match m {
        Ret | Retf => "ret (NaCl code returns with pop + nacljmp)",
        Iret | Iretd | Iretq => "iret",
        Syscall | Sysenter | Sysexit | Sysexitq | Sysret | Sysretq => {
            "system call instruction (NaCl code calls the IRT or the trampolines)"
        }
        Int | Int1 | Int3 | Into => "software interrupt",
        In | Out | Insb | Insw | Insd | Outsb | Outsw | Outsd => "port I/O",
        Enter | Leave => "enter/leave (they change %rbp)",
        Pushf | Pushfd | Pushfq | Popf | Popfd | Popfq => "pushf/popf",
        Xlatb => "xlat (an unsandboxed %rbx+%al access)",
        Lfs | Lgs | Lss | Lds | Les => "segment register load",
        Lar | Lsl | Verr | Verw | Sgdt | Sidt | Sldt | Str | Smsw => {
            "system descriptor instruction"
        }
        Rdtscp => "rdtscp",
        Clflush => "clflush",
        Prefetchwt1 => "prefetchwt1",
        Vmaskmovdqu => "vmaskmovdqu",
        Bt | Bts | Btr | Btc
            if instr.op0_kind() == OpKind::Memory && instr.op1_kind() == OpKind::Register =>
        {
            "bt/bts/btr/btc on memory with a register bit offset (reaches outside the operand)"
        }
        // hlt is how NaCl code traps (and pads).
        Hlt => "",
        _ if instr.is_privileged() => "privileged instruction",
        _ => "",
    };
    if !what.is_empty() {
        return Some(what.to_string());
    }
    for i in 0..instr.op_count() {
        if instr.op_kind(i) == OpKind::Register {
            let r = instr.op_register(i);
            if r.is_segment_register() {
                return Some("segment register access".to_string());
            }
            if r.is_cr() || r.is_dr() || r.is_tr() {
                return Some("control/debug/test register access".to_string());
            }
        }
    }
    instr
        .cpuid_features()
        .iter()
        .find(|f| !allowed_feature(**f))
        .map(|f| format!("{f:?} instructions are not in NaCl's x86-64 instruction set"))
}

/// The CPU extensions whose instructions NaCl's x86-64 validator knows (others it refuses
/// as unrecognized).
fn allowed_feature(f: CpuidFeature) -> bool {
    use CpuidFeature::*;
    matches!(
        f,
        INTEL8086
            | INTEL186
            | INTEL286
            | INTEL386
            | INTEL486
            | X64
            | CPUID
            | TSC
            | CMOV
            | CX8
            | CMPXCHG16B
            | FPU
            | FPU287
            | FPU387
            | MMX
            | SSE
            | SSE2
            | SSE3
            | SSSE3
            | SSE4_1
            | SSE4_2
            | SSE4A
            | POPCNT
            | LZCNT
            | MOVBE
            | AES
            | PCLMULQDQ
            | AVX
            | AVX2
            | FMA
            | FMA4
            | F16C
            | BMI1
            | BMI2
            | TBM
            | XOP
            | D3NOW
            | D3NOWEXT
            | FXSR
            | XSAVE
            | XSAVEOPT
            | MONITOR
            | PAUSE
            | CLFSH
            | PREFETCHW
            | MULTIBYTENOP
    )
}

fn reg_name(r: Register) -> String {
    format!("%{}", format!("{r:?}").to_ascii_lowercase())
}

fn hex(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() * 3);
    for (i, b) in bytes.iter().enumerate() {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(&format!("{b:02x}"));
    }
    s
}
