//! Lifting one x86 function into one wasm function.
//!
//! Registers are 16 i64 locals and the lazy flag record five more (loaded from the
//! globals on entry, stored back around calls and returns). Control flow is structured
//! (`structure.rs`) when the block graph allows; otherwise blocks are dispatched by a
//! `loop` around nested `block`s and a `br_table` on a block-number local: a jump sets
//! the number and branches to the loop; falling through needs nothing, the next block's
//! code follows. Memory operands address wasm memory at their 32-bit sandbox offset
//! (NaCl's `%r15` base is the sandbox start, 0 here).

use super::cfg::{direct_target, ends_flow, pushed_call, Function};
use super::flags::{self, op};
use super::LiftError;
use iced_x86::{ConditionCode, CpuidFeature, Instruction, Mnemonic, OpKind, Register};
use std::collections::HashMap;
use wasm_encoder::{BlockType, MemArg, ValType};

// Locals. 0 is the parameter: the return address the caller pushed.
const RET: u32 = 0;
/// The local of GPR `n`. Every use outside `spill`/`reload` goes through here (and
/// [`xmm`]), which records the register as used: a function that never touches a
/// register neither reloads nor spills it (its global stays exact), which keeps the
/// calls' save and restore small.
fn reg(n: u32) -> u32 {
    USED.with(|u| u.set(u.get() | 1 << n));
    1 + n
}
thread_local! {
    /// The registers the function being lifted uses: bits 0..16 the GPRs, 16..32 the
    /// XMM registers.
    static USED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}
const FOP: u32 = 17;
const FA: u32 = 18;
const FB: u32 = 19;
const FR: u32 = 20;
const FC: u32 = 21;
const T0: u32 = 22;
const T1: u32 = 23;
const T2: u32 = 24;
const T3: u32 = 25;
const EA: u32 = 26;
const PC: u32 = 27;
const TGT: u32 = 28;
const TI: u32 = 29;
/// The XMM registers: 16 v128 locals.
fn xmm(n: u32) -> u32 {
    USED.with(|u| u.set(u.get() | 1 << (16 + n)));
    30 + n
}
const fn xmm_local(n: u32) -> u32 {
    30 + n
}
/// Float scratch (f64).
const F0: u32 = 46;
const F1: u32 = 47;
/// Vector scratch (v128).
const V0: u32 = 48;
const V1: u32 = 49;
/// The value a `lock`-prefixed read-modify-write loaded (i64): its compare-exchange
/// expects it.
const OLD: u32 = 50;

#[path = "conds.rs"]
mod conds;
#[path = "packed.rs"]
mod packed;
#[path = "structure.rs"]
mod structure;
use super::sink::Sink;
use structure::Term;

/// Globals: 16 registers, then the flag record (op i32, a, b, r, c i64), then the 16
/// XMM registers (v128).
pub(crate) const G_FOP: u32 = 16;
pub(crate) const G_XMM: u32 = 21;
/// The x87 control word (`fldcw`/`fnstcw`), after the XMM registers.
pub(crate) const G_X87CW: u32 = G_XMM + 16;
/// Module function indices of the helpers and the lifted function type.
pub(crate) const F_EFLAGS: u32 = 0;
pub(crate) const F_MULHU: u32 = 1;
pub(crate) const F_UDIV128: u32 = 2;
/// The null-page fault (`runtime::null_page_fault`): called with the instruction's
/// address, it never returns.
pub(crate) const F_NULL_PAGE: u32 = 3;
/// The helpers before the lifted functions.
pub(crate) const HELPERS: u32 = 4;
pub(crate) const TY_LIFTED: u32 = 3;

const RSP: u32 = 4;
/// NaCl's unmapped first 64 KiB: a transfer there faults.
const NULL_REGION: u32 = 0x1_0000;
const RAX: u32 = 0;
const RDX: u32 = 2;
const RCX: u32 = 1;

/// The CPU `cpuid` describes: leaf → (eax, ebx, ecx, edx). An x86-64 baseline with SSE
/// and SSE2 (what the translator lifts), no SSE3 or later, no AVX; "GenuineIntel",
/// family 6, no cache descriptors. Other leaves answer zeros.
pub const CPUID: &[(u32, [u32; 4])] = &[
    // max leaf 2; vendor "GenuineIntel" in ebx, edx, ecx
    (0, [2, 0x756e_6547, 0x6c65_746e, 0x4965_6e69]),
    // family 6 model 15; edx: FPU TSC CX8 CMOV MMX FXSR SSE SSE2; ecx: none
    (
        1,
        [
            0x0000_06f0,
            0,
            0,
            1 | 1 << 4 | 1 << 8 | 1 << 15 | 1 << 23 | 1 << 24 | 1 << 25 | 1 << 26,
        ],
    ),
    // cache descriptors: one round, none given (glibc's Intel cache sizing asserts that
    // leaf 2 exists, then keeps its defaults)
    (2, [1, 0, 0, 0]),
    (0x8000_0000, [0x8000_0001, 0, 0, 0]),
    // long mode, NX, syscall
    (0x8000_0001, [0, 0, 0, 1 << 11 | 1 << 20 | 1 << 29]),
];

/// What a function's lifting needs to know about the module.
pub(crate) struct Ctx<'a> {
    pub base: u32,
    /// Functions imported before the module's own (the helpers start here).
    pub fbase: u32,
    /// The address of table 0's slot 0 (bundle index = (addr - tbase) / 32).
    pub tbase: u32,
    pub end: u32,
    /// Function start address → wasm function index.
    pub funcs: &'a HashMap<u32, u32>,
    /// The memory is shared (threads): `lock`-prefixed read-modify-writes and `xchg`
    /// with memory are wasm atomics, fences `atomic.fence`.
    pub threads: bool,
    /// Check memory accesses for NaCl's null page (`Options::null_page`).
    pub null_page: bool,
}

thread_local! {
    /// The encoded local declarations every lifted function starts with.
    static LOCALS_BODY: Vec<u8> = wasm_encoder::Function::new(LOCALS).into_raw_body();
}
const LOCALS: [(u32, ValType); 8] = [
    (16, ValType::I64),
    (1, ValType::I32),
    (8, ValType::I64),
    (4, ValType::I32),
    (16, ValType::V128),
    (2, ValType::F64),
    (2, ValType::V128),
    (1, ValType::I64),
];

fn mask(w: u32) -> i64 {
    if w >= 8 {
        -1
    } else {
        ((1u64 << (8 * w)) - 1) as i64
    }
}

fn mem(align_bytes: u32) -> MemArg {
    MemArg {
        offset: 0,
        align: align_bytes.trailing_zeros(),
        target: wasm_encoder::MemArgTarget::Memory(0),
        ordering: None,
    }
}

/// The GPR number (RAX = 0 … R15 = 15) of `r` and whether it is a high byte register.
fn gpr(r: Register) -> Option<(u32, bool)> {
    if !r.is_gpr() {
        return None;
    }
    let high = matches!(r, Register::AH | Register::CH | Register::DH | Register::BH);
    if high {
        return Some(((r as u32) - (Register::AH as u32), true));
    }
    Some((r.full_register().number() as u32, false))
}

struct Em<'a> {
    /// The body's instructions, without the register saves and restores (`spills`).
    code: Vec<u8>,
    /// Where a spill (true) or reload (false) goes in `code`: emitted at the end, for the
    /// registers the function turned out to use.
    spills: Vec<(usize, bool)>,
    level: u32,
    loop_level: u32,
    ctx: &'a Ctx<'a>,
    func: &'a Function,
    dispatch: u32,
    /// Inside a `lock`-prefixed instruction's compare-exchange loop: the loop's level.
    /// Its memory operand is loaded atomically (into [`OLD`]) and stored by a
    /// compare-exchange with that value, which starts the loop again when it fails.
    cas: Option<u32>,
    /// What last wrote the flag record, where known (`conds`).
    setter: Option<conds::Setter>,
    /// The function is laid out structured (`structure`): jumps inside it are recorded
    /// in `term` for the layout to place, not dispatched.
    structured: bool,
    term: Term,
}

type R<T = ()> = Result<T, LiftError>;

/// The wasm read-modify-writes the lifter uses.
#[derive(Clone, Copy)]
enum Rmw {
    Xchg,
    Add,
    Cmpxchg,
}

impl<'a> Em<'a> {
    /// The number of the block starting at `a`.
    fn block(&self, a: u32) -> Option<u32> {
        self.func.blocks.binary_search(&a).ok().map(|k| k as u32)
    }

    fn i(&mut self) -> Sink<'_> {
        Sink(&mut self.code)
    }

    fn open(&mut self, bt: BlockType, kind: u8) {
        match kind {
            0 => self.i().block(bt),
            1 => {
                // a loop may run its body again after a later record
                self.flags_unknown();
                self.i().loop_(bt)
            }
            _ => self.i().if_(bt),
        };
        self.level += 1;
    }
    fn end(&mut self) {
        self.i().end();
        self.level -= 1;
        self.flags_leave();
    }
    fn br_loop(&mut self) {
        let d = self.level - self.loop_level;
        self.i().br(d);
    }

    fn spill(&mut self) {
        self.spills.push((self.code.len(), true));
    }
    fn reload(&mut self) {
        self.flags_unknown();
        self.spills.push((self.code.len(), false));
    }

    /// The XMM register of operand `n`, if it is one.
    fn xmm_of(ins: &Instruction, n: u32) -> Option<u32> {
        (ins.op_kind(n) == OpKind::Register && ins.op_register(n).is_xmm())
            .then(|| ins.op_register(n).number() as u32)
            .filter(|&k| k < 16)
    }

    /// Pushes the low f64 (`double`) or f32 of operand `n` (an XMM register or memory).
    fn float_src(&mut self, ins: &Instruction, n: u32, double: bool) -> R {
        match Self::xmm_of(ins, n) {
            Some(x) => {
                self.i().local_get(xmm(x));
                if double {
                    self.i().f64x2_extract_lane(0);
                } else {
                    self.i().f32x4_extract_lane(0);
                }
            }
            None if ins.op_kind(n) == OpKind::Memory => {
                self.i().local_get(EA);
                if double {
                    self.i().f64_load(mem(1));
                } else {
                    self.i().f32_load(mem(1));
                }
            }
            None => return Err(LiftError::not_yet(ins, "instruction")),
        }
        Ok(())
    }

    /// SSE scalar arithmetic, comparisons and conversions, on the low element. Rounding is
    /// the default (MXCSR's round-to-nearest, as NaCl programs run); NaN payloads are
    /// wasm's (x86's choice of which NaN propagates is not reproduced yet).
    fn scalar_float(&mut self, ins: &Instruction, m: Mnemonic) -> R {
        use Mnemonic as M;
        let not_yet = || LiftError::not_yet(ins, "instruction");
        let double = matches!(
            m,
            M::Addsd
                | M::Subsd
                | M::Mulsd
                | M::Divsd
                | M::Ucomisd
                | M::Comisd
                | M::Cvtsi2sd
                | M::Cvttsd2si
                | M::Cvtsd2si
                | M::Cvtsd2ss
        );
        match m {
            M::Ucomisd | M::Comisd | M::Ucomiss | M::Comiss => {
                // ZF PF CF = 111 unordered, 000 greater, 001 less, 100 equal; OF SF AF = 0
                // (f32 values compare the same promoted: promotion is exact)
                for (n, l) in [(0, F0), (1, F1)] {
                    self.float_src(ins, n, double)?;
                    if !double {
                        self.i().f64_promote_f32();
                    }
                    self.i().local_set(l);
                }
                let unordered = flags::ZF | flags::PF | flags::CF;
                self.i()
                    .i32_const(unordered)
                    .local_get(F0)
                    .local_get(F1)
                    .f64_lt()
                    .i32_const(flags::CF)
                    .i32_mul()
                    .local_get(F0)
                    .local_get(F1)
                    .f64_eq()
                    .i32_const(flags::ZF)
                    .i32_mul()
                    .i32_or()
                    .local_get(F0)
                    .local_get(F0)
                    .f64_ne()
                    .local_get(F1)
                    .local_get(F1)
                    .f64_ne()
                    .i32_or()
                    .select()
                    .i64_extend_i32_u()
                    .local_set(FR);
                self.raw_flags();
                return Ok(());
            }
            M::Cvttsd2si | M::Cvttss2si | M::Cvtsd2si | M::Cvtss2si => {
                // truncation (cvtt*) or rounding to nearest-even (MXCSR's default, cvt*);
                // NaN and out-of-range give the "integer indefinite" (MIN)
                let w = Self::width(ins, 0);
                self.float_src(ins, 1, double)?;
                if !double {
                    self.i().f64_promote_f32();
                }
                if matches!(m, M::Cvtsd2si | M::Cvtss2si) {
                    self.i().f64_nearest();
                }
                self.i().local_set(F0);
                let (lo, hi, indefinite) = if w == 8 {
                    (
                        -9223372036854775808.0f64,
                        9223372036854775808.0f64,
                        i64::MIN,
                    )
                } else {
                    (-2147483649.0, 2147483648.0, 0x8000_0000)
                };
                self.i()
                    .local_get(F0)
                    .i64_trunc_sat_f64_s()
                    .i64_const(indefinite)
                    .local_get(F0)
                    .f64_const(lo.into());
                if w == 8 {
                    self.i().f64_ge();
                } else {
                    self.i().f64_gt();
                }
                self.i()
                    .local_get(F0)
                    .f64_const(hi.into())
                    .f64_lt()
                    .i32_and()
                    .select();
                self.write(ins, 0, w)?;
                return Ok(());
            }
            _ => {}
        }
        let d = Self::xmm_of(ins, 0).ok_or_else(not_yet)?;
        self.i().local_get(xmm(d));
        match m {
            M::Cvtsi2sd | M::Cvtsi2ss => {
                let w = Self::width(ins, 1);
                self.read(ins, 1, w)?;
                match (w, double) {
                    (8, true) => self.i().f64_convert_i64_s(),
                    (8, false) => self.i().f32_convert_i64_s(),
                    (_, true) => self.i().i32_wrap_i64().f64_convert_i32_s(),
                    (_, false) => self.i().i32_wrap_i64().f32_convert_i32_s(),
                };
            }
            M::Cvtsd2ss => {
                self.float_src(ins, 1, true)?;
                self.i().f32_demote_f64();
            }
            M::Cvtss2sd => {
                self.float_src(ins, 1, false)?;
                self.i().f64_promote_f32();
            }
            _ => {
                self.i().local_get(xmm(d));
                if double {
                    self.i().f64x2_extract_lane(0);
                } else {
                    self.i().f32x4_extract_lane(0);
                }
                self.float_src(ins, 1, double)?;
                match (m, double) {
                    (M::Addsd, _) => self.i().f64_add(),
                    (M::Subsd, _) => self.i().f64_sub(),
                    (M::Mulsd, _) => self.i().f64_mul(),
                    (M::Divsd, _) => self.i().f64_div(),
                    (M::Addss, _) => self.i().f32_add(),
                    (M::Subss, _) => self.i().f32_sub(),
                    (M::Mulss, _) => self.i().f32_mul(),
                    _ => self.i().f32_div(),
                };
            }
        }
        // the result into the low element: f64 for *sd and cvtss2sd, f32 otherwise
        let result_double = matches!(
            m,
            M::Addsd | M::Subsd | M::Mulsd | M::Divsd | M::Cvtsi2sd | M::Cvtss2sd
        );
        if result_double {
            self.i().f64x2_replace_lane(0);
        } else {
            self.i().f32x4_replace_lane(0);
        }
        self.i().local_set(xmm(d));
        Ok(())
    }

    /// The SSE moves and bitwise operations: exact bit copies, no float arithmetic.
    fn sse(&mut self, ins: &Instruction, m: Mnemonic) -> R {
        use Mnemonic as M;
        let not_yet = || LiftError::not_yet(ins, "instruction");
        let d = Self::xmm_of(ins, 0);
        let src = Self::xmm_of(ins, 1);
        let mem0 = ins.op_kind(0) == OpKind::Memory;
        let mem1 = ins.op_kind(1) == OpKind::Memory;
        match m {
            M::Movaps | M::Movups | M::Movapd | M::Movupd | M::Movdqa | M::Movdqu => {
                match (d, src) {
                    (Some(d), Some(s)) => {
                        self.i().local_get(xmm(s)).local_set(xmm(d));
                    }
                    (Some(d), None) if mem1 => {
                        self.i().local_get(EA).v128_load(mem(1)).local_set(xmm(d));
                    }
                    (None, Some(s)) if mem0 => {
                        self.i().local_get(EA).local_get(xmm(s)).v128_store(mem(1));
                    }
                    _ => return Err(not_yet()),
                }
            }
            M::Xorps
            | M::Xorpd
            | M::Pxor
            | M::Andps
            | M::Andpd
            | M::Pand
            | M::Orps
            | M::Orpd
            | M::Por
            | M::Andnps
            | M::Andnpd
            | M::Pandn => {
                let d = d.ok_or_else(not_yet)?;
                // src, then dst: andn computes src & ~dst
                match src {
                    Some(s) => self.i().local_get(xmm(s)),
                    None if mem1 => self.i().local_get(EA).v128_load(mem(1)),
                    None => return Err(not_yet()),
                };
                self.i().local_get(xmm(d));
                match m {
                    M::Xorps | M::Xorpd | M::Pxor => self.i().v128_xor(),
                    M::Andps | M::Andpd | M::Pand => self.i().v128_and(),
                    M::Orps | M::Orpd | M::Por => self.i().v128_or(),
                    _ => self.i().v128_andnot(),
                };
                self.i().local_set(xmm(d));
            }
            // movsd/movss (SSE): a load zeroes the rest, a register move keeps it, a
            // store writes the low element; movq/movd: the low 64/32 bits, zero-extended
            // into an XMM register, from or to a GPR or memory.
            M::Movsd | M::Movss | M::Movq | M::Movd => {
                let w: u32 = if matches!(m, M::Movsd | M::Movq) {
                    8
                } else {
                    4
                };
                let wide = w == 8;
                let gpr_w = |n: u32| {
                    (ins.op_kind(n) == OpKind::Register && ins.op_register(n).is_gpr())
                        .then(|| ins.op_register(n).size() as u32)
                };
                match (d, src) {
                    (Some(d), Some(s)) if matches!(m, M::Movsd | M::Movss) => {
                        self.i().local_get(xmm(d)).local_get(xmm(s));
                        if wide {
                            self.i().i64x2_extract_lane(0).i64x2_replace_lane(0);
                        } else {
                            self.i().i32x4_extract_lane(0).i32x4_replace_lane(0);
                        }
                        self.i().local_set(xmm(d));
                    }
                    (Some(d), Some(s)) => {
                        // movq xmm, xmm: the low 64 bits, the rest zero
                        self.i()
                            .v128_const(0)
                            .local_get(xmm(s))
                            .i64x2_extract_lane(0)
                            .i64x2_replace_lane(0)
                            .local_set(xmm(d));
                    }
                    (Some(d), None) if mem1 => {
                        self.i().local_get(EA);
                        if wide {
                            self.i().v128_load64_zero(mem(1));
                        } else {
                            self.i().v128_load32_zero(mem(1));
                        }
                        self.i().local_set(xmm(d));
                    }
                    (Some(d), None) => {
                        let gw = gpr_w(1).ok_or_else(not_yet)?;
                        self.i().v128_const(0);
                        self.reg_read(ins, ins.op_register(1))?;
                        if gw == 8 {
                            self.i().i64x2_replace_lane(0);
                        } else {
                            self.i().i32_wrap_i64().i32x4_replace_lane(0);
                        }
                        self.i().local_set(xmm(d));
                    }
                    (None, Some(s)) => {
                        let ow = if mem0 {
                            w
                        } else {
                            gpr_w(0).ok_or_else(not_yet)?
                        };
                        self.i().local_get(xmm(s));
                        if ow == 8 {
                            self.i().i64x2_extract_lane(0);
                        } else {
                            self.i().i32x4_extract_lane(0).i64_extend_i32_u();
                        }
                        self.write(ins, 0, ow)?;
                    }
                    _ => return Err(not_yet()),
                }
            }
            _ => return Err(not_yet()),
        }
        Ok(())
    }

    /// Pushes the current RFLAGS status bits (i32).
    fn eflags(&mut self) {
        if self.flags_raw() {
            self.i().local_get(FR).i32_wrap_i64();
            return;
        }
        let fb = self.ctx.fbase;
        self.i()
            .local_get(FOP)
            .local_get(FA)
            .local_get(FB)
            .local_get(FR)
            .local_get(FC)
            .call(fb + F_EFLAGS);
    }

    /// Sets the flag record from T0 (a), T1 (b), `r` on the stack is stored to FR; c from T2.
    fn record(&mut self, kind: i32, w: u32, c_from_t2: bool) {
        self.i().local_set(FR);
        self.i().i32_const(op(kind, w)).local_set(FOP);
        self.i().local_get(T0).local_set(FA);
        self.i().local_get(T1).local_set(FB);
        if c_from_t2 {
            self.i().local_get(T2).local_set(FC);
        } else {
            self.i().i64_const(0).local_set(FC);
        }
        self.flags_set(op(kind, w), c_from_t2);
    }

    /// Pushes condition `cc` (i32 0/1).
    fn cond(&mut self, ins: &Instruction, cc: ConditionCode) -> R {
        use ConditionCode as C;
        if self.known_cond(cc) {
            return Ok(());
        }
        self.eflags();
        self.i().local_set(TI);
        let bit = |e: &mut Self, b: i32| {
            e.i()
                .local_get(TI)
                .i32_const(b)
                .i32_shr_u()
                .i32_const(1)
                .i32_and();
        };
        match cc {
            C::o | C::no => bit(self, 11),
            C::b | C::ae => bit(self, 0),
            C::e | C::ne => bit(self, 6),
            C::s | C::ns => bit(self, 7),
            C::p | C::np => bit(self, 2),
            C::be | C::a => {
                self.i()
                    .local_get(TI)
                    .i32_const(flags::CF | flags::ZF)
                    .i32_and()
                    .i32_const(0)
                    .i32_ne();
            }
            C::l | C::ge => {
                self.i()
                    .local_get(TI)
                    .i32_const(7)
                    .i32_shr_u()
                    .local_get(TI)
                    .i32_const(11)
                    .i32_shr_u()
                    .i32_xor()
                    .i32_const(1)
                    .i32_and();
            }
            C::le | C::g => {
                self.i()
                    .local_get(TI)
                    .i32_const(7)
                    .i32_shr_u()
                    .local_get(TI)
                    .i32_const(11)
                    .i32_shr_u()
                    .i32_xor()
                    .local_get(TI)
                    .i32_const(6)
                    .i32_shr_u()
                    .i32_or()
                    .i32_const(1)
                    .i32_and();
            }
            C::None => return Err(LiftError::not_yet(ins, "instruction")),
        }
        if matches!(
            cc,
            C::no | C::ae | C::ne | C::ns | C::np | C::a | C::ge | C::g
        ) {
            self.i().i32_eqz();
        }
        Ok(())
    }

    fn reg_read(&mut self, ins: &Instruction, r: Register) -> R {
        let (n, high) = gpr(r).ok_or_else(|| LiftError::not_yet(ins, "instruction"))?;
        self.i().local_get(reg(n));
        if high {
            self.i().i64_const(8).i64_shr_u().i64_const(0xff).i64_and();
        } else if r.size() < 8 {
            self.i().i64_const(mask(r.size() as u32)).i64_and();
        }
        Ok(())
    }

    /// Stores the i64 on the stack into register `r`, as x86-64 writes it: 8- and 16-bit
    /// writes keep the other bits, 32-bit writes zero the upper half.
    fn reg_write(&mut self, ins: &Instruction, r: Register) -> R {
        let (n, high) = gpr(r).ok_or_else(|| LiftError::not_yet(ins, "instruction"))?;
        let l = reg(n);
        match (r.size(), high) {
            (8, _) => {
                self.i().local_set(l);
            }
            (4, _) => {
                self.i().i64_const(0xffff_ffff).i64_and().local_set(l);
            }
            (w, false) => {
                let m = mask(w as u32);
                self.i()
                    .i64_const(m)
                    .i64_and()
                    .local_get(l)
                    .i64_const(!m)
                    .i64_and()
                    .i64_or()
                    .local_set(l);
            }
            (_, true) => {
                self.i()
                    .i64_const(0xff)
                    .i64_and()
                    .i64_const(8)
                    .i64_shl()
                    .local_get(l)
                    .i64_const(!0xff00)
                    .i64_and()
                    .i64_or()
                    .local_set(l);
            }
        }
        Ok(())
    }

    /// Pushes base + index * scale + displacement (i64), the address arithmetic of a
    /// memory operand or `lea`; addresses computed with 32-bit registers wrap at 32 bits.
    fn address(&mut self, ins: &Instruction) -> R {
        if !matches!(
            ins.segment_prefix(),
            Register::None | Register::DS | Register::SS | Register::ES | Register::CS
        ) {
            return Err(LiftError::not_yet(ins, "segment-prefixed instruction"));
        }
        if ins.is_ip_rel_memory_operand() {
            self.i().i64_const(ins.memory_displacement64() as i64);
            return Ok(());
        }
        self.i().i64_const(ins.memory_displacement64() as i64);
        let base = ins.memory_base();
        let index = ins.memory_index();
        let mut narrow = false;
        if base != Register::None {
            narrow |= base.size() == 4;
            self.reg_read(ins, base)?;
            self.i().i64_add();
        }
        if index != Register::None {
            narrow |= index.size() == 4;
            self.reg_read(ins, index)?;
            let s = ins.memory_index_scale();
            if s > 1 {
                self.i().i64_const(s.trailing_zeros() as i64).i64_shl();
            }
            self.i().i64_add();
        }
        if narrow {
            self.i().i64_const(0xffff_ffff).i64_and();
        }
        Ok(())
    }

    /// Computes the memory operand's sandbox address into EA (and checks it: see
    /// [`Self::null_check`]).
    fn ea(&mut self, ins: &Instruction) -> R {
        self.address(ins)?;
        self.i().i32_wrap_i64().local_set(EA);
        self.null_check(ins);
        Ok(())
    }

    /// NaCl leaves the sandbox's first 64 KiB unmapped, so an access there (a null
    /// pointer) faults; wasm address 0 is ordinary memory, so the translation checks EA
    /// and calls the null-page fault below [`NULL_REGION`]. Host code reads guest
    /// pointers as wasm addresses, so memory cannot be moved up instead.
    ///
    /// Not checked, as they cannot reach the null page by NaCl's rules: `%rsp`- and
    /// `%rbp`-relative operands without an index (the validator lets only the
    /// sandboxing sequences set those registers, which the program keeps on its stack;
    /// a program that points them at the null page itself is not caught), and operands
    /// whose address is a constant (RIP-relative, or `%r15` plus a displacement) at or
    /// above 64 KiB; one below is a fault without a check. x86 prefetches never fault.
    fn null_check(&mut self, ins: &Instruction) {
        use Mnemonic as M;
        if !self.ctx.null_page
            || matches!(
                ins.mnemonic(),
                M::Prefetchnta | M::Prefetcht0 | M::Prefetcht1 | M::Prefetcht2 | M::Prefetchw
            )
        {
            return;
        }
        let base = ins.memory_base();
        let index = ins.memory_index();
        let constant = ins.is_ip_rel_memory_operand()
            || (index == Register::None && matches!(base, Register::None | Register::R15));
        if constant {
            if (ins.memory_displacement64() as u32) < NULL_REGION {
                self.null_fault(ins);
            }
            return;
        }
        if index == Register::None && matches!(base.full_register(), Register::RSP | Register::RBP)
        {
            return;
        }
        self.check_ea(ins);
    }

    /// The check itself: EA below 64 KiB is `ins`'s null-page fault.
    fn check_ea(&mut self, ins: &Instruction) {
        if !self.ctx.null_page {
            return;
        }
        self.i()
            .local_get(EA)
            .i32_const(NULL_REGION as i32)
            .i32_lt_u()
            .if_(BlockType::Empty);
        self.null_fault(ins);
        self.i().end();
    }

    /// Reports the null-page access of `ins` and traps.
    fn null_fault(&mut self, ins: &Instruction) {
        let f = self.ctx.fbase + F_NULL_PAGE;
        self.i()
            .i32_const(ins.ip() as u32 as i32)
            .call(f)
            .unreachable();
    }

    fn has_mem(ins: &Instruction) -> bool {
        (0..ins.op_count()).any(|n| ins.op_kind(n) == OpKind::Memory)
    }

    fn load(&mut self, w: u32) {
        self.i().local_get(EA);
        if self.cas.is_some() {
            let mut s = self.i();
            let mut s = s.w();
            match w {
                1 => s.i64_atomic_load8_u(mem(1)),
                2 => s.i64_atomic_load16_u(mem(2)),
                4 => s.i64_atomic_load32_u(mem(4)),
                _ => s.i64_atomic_load(mem(8)),
            };
            self.i().local_tee(OLD);
            return;
        }
        match w {
            1 => self.i().i64_load8_u(mem(1)),
            2 => self.i().i64_load16_u(mem(2)),
            4 => self.i().i64_load32_u(mem(4)),
            _ => self.i().i64_load(mem(8)),
        };
    }
    fn store(&mut self, w: u32) {
        // value on the stack
        if let Some(level) = self.cas {
            self.i()
                .local_set(T3)
                .local_get(EA)
                .local_get(OLD)
                .local_get(T3);
            self.rmw(w, Rmw::Cmpxchg);
            let depth = self.level - level;
            self.i().local_get(OLD).i64_ne().br_if(depth);
            return;
        }
        self.i().local_set(T3).local_get(EA).local_get(T3);
        match w {
            1 => self.i().i64_store8(mem(1)),
            2 => self.i().i64_store16(mem(2)),
            4 => self.i().i64_store32(mem(4)),
            _ => self.i().i64_store(mem(8)),
        };
    }

    /// Width in bytes of operand `n`.
    fn width(ins: &Instruction, n: u32) -> u32 {
        match ins.op_kind(n) {
            OpKind::Register => ins.op_register(n).size() as u32,
            OpKind::Memory => ins.memory_size().size() as u32,
            OpKind::Immediate8 => 1,
            OpKind::Immediate16 | OpKind::Immediate8to16 => 2,
            OpKind::Immediate32 | OpKind::Immediate8to32 => 4,
            _ => 8,
        }
    }

    /// Pushes operand `n` zero-extended from `w` bytes (immediates as the instruction
    /// sign-extends them, cut to `w`).
    fn read(&mut self, ins: &Instruction, n: u32, w: u32) -> R {
        match ins.op_kind(n) {
            OpKind::Register => self.reg_read(ins, ins.op_register(n)),
            OpKind::Memory => {
                self.load(w);
                Ok(())
            }
            OpKind::Immediate8
            | OpKind::Immediate16
            | OpKind::Immediate32
            | OpKind::Immediate64
            | OpKind::Immediate8to16
            | OpKind::Immediate8to32
            | OpKind::Immediate8to64
            | OpKind::Immediate32to64 => {
                let v = ins.immediate(n) as i64 & mask(w);
                self.i().i64_const(v);
                Ok(())
            }
            _ => Err(LiftError::not_yet(ins, "instruction")),
        }
    }

    fn write(&mut self, ins: &Instruction, n: u32, w: u32) -> R {
        match ins.op_kind(n) {
            OpKind::Register => self.reg_write(ins, ins.op_register(n)),
            OpKind::Memory => {
                self.store(w);
                Ok(())
            }
            _ => Err(LiftError::not_yet(ins, "instruction")),
        }
    }

    /// Sign-extends the i64 on the stack from `w` bytes.
    fn sext(&mut self, w: u32) {
        match w {
            1 => self.i().i64_extend8_s(),
            2 => self.i().i64_extend16_s(),
            4 => self.i().i64_extend32_s(),
            _ => return,
        };
    }

    fn push_value(&mut self) {
        // value on the stack → [rsp - 8]
        self.i().local_set(T3);
        self.i()
            .local_get(reg(RSP))
            .i64_const(8)
            .i64_sub()
            .local_tee(reg(RSP))
            .i32_wrap_i64()
            .local_get(T3)
            .i64_store(mem(8));
    }
    fn pop_value(&mut self) {
        self.i()
            .local_get(reg(RSP))
            .i32_wrap_i64()
            .i64_load(mem(8))
            .local_get(reg(RSP))
            .i64_const(8)
            .i64_add()
            .local_set(reg(RSP));
    }

    /// Transfers control to `target` (a direct jump).
    fn goto(&mut self, ins: &Instruction, target: u32) -> R {
        if target < NULL_REGION {
            self.i().unreachable();
            return Ok(());
        }
        if target >= self.func.start && target < self.func.end {
            let b = self
                .block(target)
                .ok_or(LiftError::NotInstructionStart { address: target })?;
            if self.structured {
                self.term = Term::Jump(b);
                return Ok(());
            }
            self.i().i32_const(b as i32).local_set(PC);
            self.br_loop();
            return Ok(());
        }
        let f = self.callee(ins, target)?;
        self.spill();
        self.i().local_get(RET).return_call(f);
        Ok(())
    }

    fn callee(&self, ins: &Instruction, target: u32) -> R<u32> {
        // a function, or with the runtime linked, a syscall trampoline
        if let Some(&f) = self.ctx.funcs.get(&target) {
            return Ok(f);
        }
        if target < self.ctx.base || target >= self.ctx.end {
            return Err(LiftError::not_yet(
                ins,
                "direct transfer out of the code (NaCl's syscall trampolines)",
            ));
        }
        self.ctx
            .funcs
            .get(&target)
            .copied()
            .ok_or(LiftError::NotInstructionStart { address: target })
    }

    /// The target is in TGT: return when it is the caller's return address, else go
    /// through this function's dispatch (its bundles, then the function table).
    fn indirect_goto(&mut self) {
        self.i().local_get(TGT).local_get(RET).i32_eq();
        self.open(BlockType::Empty, 2);
        self.spill();
        self.i().local_get(TGT).return_();
        self.end();
        if self.structured {
            // no way into the middle of structured code: the function table
            self.table_jump();
            return;
        }
        let d = self.dispatch as i32;
        self.i().i32_const(d).local_set(PC);
        self.br_loop();
    }

    /// A tail call to the function starting at TGT (through the function table).
    fn table_jump(&mut self) {
        self.spill();
        let base = self.ctx.tbase as i32;
        self.i()
            .local_get(RET)
            .local_get(TGT)
            .i32_const(base)
            .i32_sub()
            .i32_const(5)
            .i32_shr_u()
            .return_call_indirect(0, TY_LIFTED);
    }

    /// A call of `ins`'s target (direct, or its register or memory operand) that comes
    /// back at `ret`: a `call` (`push_ret`: it pushes the return address) or the `jmp` of
    /// Subzero's `push $ret; jmp` (`cfg::pushed_call`; the `push` was lifted).
    fn call(&mut self, ins: &Instruction, ret: u32, push_ret: bool) -> R {
        let target = direct_target(ins);
        if target.is_some_and(|t| t < NULL_REGION) {
            // NaCl's first 64 KiB are unmapped: such a call faults (a weak undefined
            // function's `call 0`, behind a test that skips it)
            self.i().unreachable();
            return Ok(());
        }
        let callee = match target {
            Some(t) => Some(self.callee(ins, t)?),
            None => {
                // read before the return address is pushed (`call *(%rsp)`)
                self.read(ins, 0, 8)?;
                self.i().i32_wrap_i64().local_set(TGT);
                // Only bundle starts are call targets (NaCl masks them).
                self.i()
                    .local_get(TGT)
                    .i32_const(31)
                    .i32_and()
                    .if_(BlockType::Empty)
                    .unreachable()
                    .end();
                None
            }
        };
        if push_ret {
            self.i().i64_const(ret as i64);
            self.push_value();
        }
        self.spill();
        self.i().i32_const(ret as i32);
        match callee {
            Some(f) => {
                self.i().call(f);
            }
            None => {
                let base = self.ctx.tbase as i32;
                self.i()
                    .local_get(TGT)
                    .i32_const(base)
                    .i32_sub()
                    .i32_const(5)
                    .i32_shr_u()
                    .call_indirect(0, TY_LIFTED);
            }
        }
        self.after_call(ret);
        Ok(())
    }

    /// After a call: the callee must have returned to `ret`; registers come back.
    fn after_call(&mut self, ret: u32) {
        self.i()
            .i32_const(ret as i32)
            .i32_ne()
            .if_(BlockType::Empty)
            .unreachable()
            .end();
        self.reload();
    }

    fn lift(&mut self, ins: &Instruction) -> R {
        use Mnemonic as M;
        match ins.mnemonic() {
            M::Nop | M::Pause | M::Endbr64 => return Ok(()),
            _ => {}
        }
        // The x87 control word is kept so that `fnstcw` reads back what `fldcw` set
        // (glibc's startup and `fegetround` do both); nothing x87 computes is lifted, so
        // its rounding and precision have nothing else to act on.
        match ins.mnemonic() {
            M::Fnstcw | M::Fstcw if Self::has_mem(ins) => {
                self.ea(ins)?;
                self.i()
                    .local_get(EA)
                    .global_get(G_X87CW)
                    .i32_store16(mem(2));
                return Ok(());
            }
            M::Fldcw => {
                self.ea(ins)?;
                self.i()
                    .local_get(EA)
                    .i32_load16_u(mem(2))
                    .global_set(G_X87CW);
                return Ok(());
            }
            _ => {}
        }
        if ins.cpuid_features().contains(&CpuidFeature::FPU) {
            return Err(LiftError::not_yet(ins, "x87 instruction"));
        }
        // Memory is not shared yet (no threads), so a locked read-modify-write is exactly
        // the plain one; with threads these become wasm atomics.
        if ins.has_lock_prefix()
            && !matches!(
                ins.mnemonic(),
                M::Add
                    | M::Adc
                    | M::Sub
                    | M::Sbb
                    | M::And
                    | M::Or
                    | M::Xor
                    | M::Inc
                    | M::Dec
                    | M::Neg
                    | M::Not
                    | M::Xadd
                    | M::Cmpxchg
                    | M::Bts
                    | M::Btr
                    | M::Btc
            )
        {
            return Err(LiftError::not_yet(
                ins,
                "atomic (lock-prefixed) instruction",
            ));
        }
        let string = (0..ins.op_count()).any(|n| {
            matches!(
                ins.op_kind(n),
                OpKind::MemorySegRSI
                    | OpKind::MemoryESRDI
                    | OpKind::MemorySegRDI
                    | OpKind::MemorySegESI
                    | OpKind::MemoryESEDI
                    | OpKind::MemorySegEDI
                    | OpKind::MemorySegSI
                    | OpKind::MemorySegDI
                    | OpKind::MemoryESDI
            )
        });
        if string {
            return self.string(ins);
        }
        if ins.has_rep_prefix() || ins.has_repne_prefix() {
            return Err(LiftError::not_yet(ins, "string instruction"));
        }
        let m = ins.mnemonic();
        let next = (ins.ip() + ins.len() as u64) as u32;
        let w = if ins.op_count() > 0 {
            Self::width(ins, 0)
        } else {
            8
        };
        let needs_ea = Self::has_mem(ins) && !matches!(m, M::Lea | M::Nop | M::Pop);
        match m {
            M::Hlt | M::Ud2 | M::Int3 => {
                self.i().unreachable();
                return Ok(());
            }
            _ => {}
        }
        if needs_ea {
            self.ea(ins)?;
        }
        let atomic = self.ctx.threads
            && needs_ea
            && (ins.has_lock_prefix() || (m == M::Xchg && ins.op_count() == 2));
        if atomic {
            match m {
                M::Xchg | M::Xadd | M::Cmpxchg => return self.atomic(ins, m, w),
                _ if ins.op_kind(0) == OpKind::Memory => {
                    // the plain lifting inside a compare-exchange loop
                    if matches!(m, M::Adc | M::Sbb) {
                        self.carry_flag();
                        self.i().i64_extend_i32_u().local_set(T2);
                    }
                    self.open(BlockType::Empty, 1);
                    self.cas = Some(self.level);
                    let r = self.lift_op(ins, m, w, next);
                    self.cas = None;
                    self.end();
                    return r;
                }
                _ => {}
            }
        }
        self.lift_op(ins, m, w, next)
    }

    /// The lifting of `ins` (mnemonic `m`, operand 0's width `w`, the next instruction
    /// at `next`) once its memory operand's address is in EA.
    fn lift_op(&mut self, ins: &Instruction, m: Mnemonic, w: u32, next: u32) -> R {
        use Mnemonic as M;
        if self.packed(ins, m)? {
            return Ok(());
        }
        match m {
            // Cache hints: nothing to do in wasm; a non-temporal store is a store.
            M::Prefetchnta | M::Prefetcht0 | M::Prefetcht1 | M::Prefetcht2 | M::Prefetchw => {}
            M::Movaps
            | M::Movups
            | M::Movapd
            | M::Movupd
            | M::Movdqa
            | M::Movdqu
            | M::Xorps
            | M::Xorpd
            | M::Pxor
            | M::Andps
            | M::Andpd
            | M::Pand
            | M::Orps
            | M::Orpd
            | M::Por
            | M::Andnps
            | M::Andnpd
            | M::Pandn
            | M::Movsd
            | M::Movss
            | M::Movq
            | M::Movd => self.sse(ins, m)?,
            M::Addsd
            | M::Subsd
            | M::Mulsd
            | M::Divsd
            | M::Addss
            | M::Subss
            | M::Mulss
            | M::Divss
            | M::Ucomisd
            | M::Comisd
            | M::Ucomiss
            | M::Comiss
            | M::Cvtsi2sd
            | M::Cvtsi2ss
            | M::Cvttsd2si
            | M::Cvttss2si
            | M::Cvtsd2si
            | M::Cvtss2si
            | M::Cvtsd2ss
            | M::Cvtss2sd => self.scalar_float(ins, m)?,
            M::Mov | M::Movnti => {
                self.read(ins, 1, w)?;
                self.write(ins, 0, w)?;
            }
            M::Movzx => {
                let ws = Self::width(ins, 1);
                self.read(ins, 1, ws)?;
                self.write(ins, 0, w)?;
            }
            M::Movsx | M::Movsxd => {
                let ws = Self::width(ins, 1);
                self.read(ins, 1, ws)?;
                self.sext(ws);
                self.write(ins, 0, w)?;
            }
            M::Lea => {
                self.address(ins)?;
                self.write(ins, 0, w)?;
            }
            M::Add | M::Adc | M::Sub | M::Sbb | M::And | M::Or | M::Xor | M::Cmp | M::Test => {
                self.read(ins, 0, w)?;
                self.i().local_set(T0);
                self.read(ins, 1, w)?;
                self.i().local_set(T1);
                let carry = matches!(m, M::Adc | M::Sbb);
                // (in a compare-exchange loop the carry was taken before it: a retry
                // must not read the failed attempt's flags)
                if carry && self.cas.is_none() {
                    self.carry_flag();
                    self.i().i64_extend_i32_u().local_set(T2);
                }
                self.i().local_get(T0).local_get(T1);
                let kind = match m {
                    M::Add | M::Adc => {
                        self.i().i64_add();
                        flags::ADD
                    }
                    M::Sub | M::Sbb | M::Cmp => {
                        self.i().i64_sub();
                        flags::SUB
                    }
                    M::And | M::Test => {
                        self.i().i64_and();
                        flags::LOGIC
                    }
                    M::Or => {
                        self.i().i64_or();
                        flags::LOGIC
                    }
                    _ => {
                        self.i().i64_xor();
                        flags::LOGIC
                    }
                };
                if carry {
                    self.i().local_get(T2);
                    if kind == flags::ADD {
                        self.i().i64_add();
                    } else {
                        self.i().i64_sub();
                    }
                }
                self.i().i64_const(mask(w)).i64_and();
                self.record(kind, w, carry);
                if !matches!(m, M::Cmp | M::Test) {
                    self.i().local_get(FR);
                    self.write(ins, 0, w)?;
                }
            }
            M::Neg => {
                self.read(ins, 0, w)?;
                self.i().local_set(T1).i64_const(0).local_set(T0);
                self.i()
                    .i64_const(0)
                    .local_get(T1)
                    .i64_sub()
                    .i64_const(mask(w))
                    .i64_and();
                self.record(flags::SUB, w, false);
                self.i().local_get(FR);
                self.write(ins, 0, w)?;
            }
            M::Not => {
                self.read(ins, 0, w)?;
                self.i().i64_const(mask(w)).i64_xor();
                self.write(ins, 0, w)?;
            }
            M::Inc | M::Dec => {
                self.carry_flag();
                self.i().i64_extend_i32_u().local_set(T2);
                self.read(ins, 0, w)?;
                self.i()
                    .local_tee(T0)
                    .i64_const(1)
                    .local_set(T1)
                    .i64_const(1);
                if m == M::Inc {
                    self.i().i64_add();
                } else {
                    self.i().i64_sub();
                }
                self.i().i64_const(mask(w)).i64_and();
                let kind = if m == M::Inc { flags::INC } else { flags::DEC };
                self.record(kind, w, true);
                self.i().local_get(FR);
                self.write(ins, 0, w)?;
            }
            M::Shl | M::Sal | M::Shr | M::Sar | M::Rol | M::Ror => self.shift(ins, m, w)?,
            M::Shld | M::Shrd => self.double_shift(ins, m, w)?,
            M::Cpuid => self.cpuid(),
            M::Rdtsc => self.rdtsc(),
            M::Imul | M::Mul => self.mul(ins, m, w)?,
            M::Div | M::Idiv => self.div(ins, m, w)?,
            M::Cbw | M::Cwde | M::Cdqe => {
                let (from, to) = match m {
                    M::Cbw => (Register::AL, Register::AX),
                    M::Cwde => (Register::AX, Register::EAX),
                    _ => (Register::EAX, Register::RAX),
                };
                self.reg_read(ins, from)?;
                self.sext(from.size() as u32);
                self.reg_write(ins, to)?;
            }
            M::Cwd | M::Cdq | M::Cqo => {
                let (from, to) = match m {
                    M::Cwd => (Register::AX, Register::DX),
                    M::Cdq => (Register::EAX, Register::EDX),
                    _ => (Register::RAX, Register::RDX),
                };
                self.reg_read(ins, from)?;
                self.sext(from.size() as u32);
                self.i().i64_const(63).i64_shr_s();
                self.reg_write(ins, to)?;
            }
            M::Xchg => {
                self.read(ins, 0, w)?;
                self.i().local_set(T0);
                self.read(ins, 1, w)?;
                self.write(ins, 0, w)?;
                self.i().local_get(T0);
                self.write(ins, 1, w)?;
            }
            // Without threads no other agent sees memory: fences order nothing.
            M::Mfence | M::Lfence | M::Sfence => {
                if self.ctx.threads {
                    self.i().w().atomic_fence(wasm_encoder::Ordering::SeqCst);
                }
            }
            // The direction flag is always clear (`std` is not translated).
            M::Cld => {}
            M::Xadd => {
                // tmp = dst + src; src = dst; dst = tmp (the destination written last)
                self.read(ins, 0, w)?;
                self.i().local_set(T0);
                self.read(ins, 1, w)?;
                self.i().local_set(T1);
                self.i()
                    .local_get(T0)
                    .local_get(T1)
                    .i64_add()
                    .i64_const(mask(w))
                    .i64_and();
                self.record(flags::ADD, w, false);
                self.i().local_get(T0);
                self.write(ins, 1, w)?;
                self.i().local_get(FR);
                self.write(ins, 0, w)?;
            }
            M::Cmpxchg => {
                // flags of cmp acc, dst; equal: dst = src; else acc = dst
                let acc = accumulator(w);
                self.reg_read(ins, acc)?;
                self.i().local_set(T0);
                self.read(ins, 0, w)?;
                self.i().local_set(T1);
                self.i()
                    .local_get(T0)
                    .local_get(T1)
                    .i64_sub()
                    .i64_const(mask(w))
                    .i64_and();
                self.record(flags::SUB, w, false);
                self.i().local_get(T0).local_get(T1).i64_eq();
                self.open(BlockType::Empty, 2);
                self.read(ins, 1, w)?;
                self.write(ins, 0, w)?;
                self.i().else_();
                if ins.op_kind(0) == OpKind::Memory {
                    // a locked cmpxchg writes its destination back either way
                    self.i().local_get(T1);
                    self.write(ins, 0, w)?;
                }
                self.i().local_get(T1);
                self.reg_write(ins, acc)?;
                self.end();
            }
            M::Bswap => {
                self.read(ins, 0, w)?;
                self.i().local_set(T0);
                let n = w as i64;
                self.i().i64_const(0);
                for k in 0..n {
                    // byte k moves to byte n-1-k
                    let to = n - 1 - k;
                    self.i()
                        .local_get(T0)
                        .i64_const(8 * k)
                        .i64_shr_u()
                        .i64_const(0xff)
                        .i64_and()
                        .i64_const(8 * to)
                        .i64_shl()
                        .i64_or();
                }
                self.write(ins, 0, w)?;
            }
            M::Bsf | M::Bsr => {
                // src 0: ZF = 1, destination unchanged; else ZF = 0 and the bit index
                self.read(ins, 1, w)?;
                self.i().local_tee(T1).i64_eqz();
                self.i().i32_const(flags::ZF).i32_mul().i64_extend_i32_u();
                self.i().local_set(FR);
                self.raw_flags();
                self.i().local_get(T1).i64_eqz().i32_eqz();
                self.open(BlockType::Empty, 2);
                if m == M::Bsf {
                    self.i().local_get(T1).i64_ctz();
                } else {
                    self.i().i64_const(63).local_get(T1).i64_clz().i64_sub();
                }
                self.write(ins, 0, w)?;
                self.end();
            }
            M::Bt | M::Bts | M::Btr | M::Btc => {
                if ins.op_kind(0) == OpKind::Memory && ins.op_kind(1) == OpKind::Register {
                    // a register bit offset addresses a bit string beyond the operand
                    return Err(LiftError::not_yet(ins, "instruction"));
                }
                self.read(ins, 1, w)?;
                self.i().i64_const(8 * w as i64 - 1).i64_and().local_set(T1);
                self.read(ins, 0, w)?;
                self.i().local_set(T0);
                // CF = the bit; the other flags as they were
                self.eflags();
                self.i()
                    .i32_const(!flags::CF)
                    .i32_and()
                    .i64_extend_i32_u()
                    .local_get(T0)
                    .local_get(T1)
                    .i64_shr_u()
                    .i64_const(1)
                    .i64_and()
                    .i64_or()
                    .local_set(FR);
                self.raw_flags();
                if m != M::Bt {
                    self.i().i64_const(1).local_get(T1).i64_shl().local_set(T2);
                    self.i().local_get(T0);
                    match m {
                        M::Bts => self.i().local_get(T2).i64_or(),
                        M::Btr => self.i().local_get(T2).i64_const(-1).i64_xor().i64_and(),
                        _ => self.i().local_get(T2).i64_xor(),
                    };
                    self.write(ins, 0, w)?;
                }
            }
            M::Push => {
                if w != 8 && ins.op_kind(0) != OpKind::Immediate8to64 {
                    return Err(LiftError::not_yet(ins, "16-bit push"));
                }
                self.read(ins, 0, 8)?;
                self.push_value();
            }
            M::Pop => {
                if w != 8 {
                    return Err(LiftError::not_yet(ins, "16-bit pop"));
                }
                self.pop_value();
                self.i().local_set(T0);
                if ins.op_kind(0) == OpKind::Memory {
                    // x86 computes a pop's destination address after the increment.
                    self.ea(ins)?;
                }
                self.i().local_get(T0);
                self.write(ins, 0, 8)?;
            }
            M::Setae
            | M::Seta
            | M::Setb
            | M::Setbe
            | M::Sete
            | M::Setne
            | M::Setg
            | M::Setge
            | M::Setl
            | M::Setle
            | M::Seto
            | M::Setno
            | M::Setp
            | M::Setnp
            | M::Sets
            | M::Setns => {
                self.cond(ins, ins.condition_code())?;
                self.i().i64_extend_i32_u();
                self.write(ins, 0, 1)?;
            }
            M::Cmova
            | M::Cmovae
            | M::Cmovb
            | M::Cmovbe
            | M::Cmove
            | M::Cmovne
            | M::Cmovg
            | M::Cmovge
            | M::Cmovl
            | M::Cmovle
            | M::Cmovo
            | M::Cmovno
            | M::Cmovp
            | M::Cmovnp
            | M::Cmovs
            | M::Cmovns => {
                self.read(ins, 1, w)?;
                self.read(ins, 0, w)?;
                self.cond(ins, ins.condition_code())?;
                self.i().select();
                self.write(ins, 0, w)?;
            }
            M::Jmp => match direct_target(ins) {
                Some(t) => self.goto(ins, t)?,
                None => {
                    self.read(ins, 0, 8)?;
                    self.i().i32_wrap_i64().local_set(TGT);
                    self.indirect_goto();
                }
            },
            M::Ret => {
                self.pop_value();
                self.i().i32_wrap_i64().local_set(TGT);
                if ins.op_count() == 1 {
                    let n = ins.immediate(0) as i64;
                    self.i()
                        .local_get(reg(RSP))
                        .i64_const(n)
                        .i64_add()
                        .local_set(reg(RSP));
                }
                self.indirect_goto();
            }
            M::Call => self.call(ins, next, true)?,
            _ if ins.condition_code() != ConditionCode::None
                && ins.flow_control() == iced_x86::FlowControl::ConditionalBranch
                && direct_target(ins).is_some()
                && !matches!(m, M::Jrcxz | M::Jecxz | M::Loop | M::Loope | M::Loopne) =>
            {
                let t = direct_target(ins).unwrap_or(0);
                self.cond(ins, ins.condition_code())?;
                if self.structured && structure::inside(self.func, t) {
                    let b = self
                        .block(t)
                        .ok_or(LiftError::NotInstructionStart { address: t })?;
                    self.term = Term::Cond(b);
                    return Ok(());
                }
                self.open(BlockType::Empty, 2);
                self.goto(ins, t)?;
                self.end();
            }
            _ => return Err(LiftError::not_yet(ins, "instruction")),
        }
        Ok(())
    }

    /// A read-modify-write of memory at EA (i64 operands on the stack, `w` bytes wide):
    /// leaves the old value, zero-extended.
    fn rmw(&mut self, w: u32, op: Rmw) {
        let a = mem(w);
        let mut s = self.i();
        let mut s = s.w();
        match (op, w) {
            (Rmw::Xchg, 1) => s.i64_atomic_rmw8_xchg_u(a),
            (Rmw::Xchg, 2) => s.i64_atomic_rmw16_xchg_u(a),
            (Rmw::Xchg, 4) => s.i64_atomic_rmw32_xchg_u(a),
            (Rmw::Xchg, _) => s.i64_atomic_rmw_xchg(a),
            (Rmw::Add, 1) => s.i64_atomic_rmw8_add_u(a),
            (Rmw::Add, 2) => s.i64_atomic_rmw16_add_u(a),
            (Rmw::Add, 4) => s.i64_atomic_rmw32_add_u(a),
            (Rmw::Add, _) => s.i64_atomic_rmw_add(a),
            (Rmw::Cmpxchg, 1) => s.i64_atomic_rmw8_cmpxchg_u(a),
            (Rmw::Cmpxchg, 2) => s.i64_atomic_rmw16_cmpxchg_u(a),
            (Rmw::Cmpxchg, 4) => s.i64_atomic_rmw32_cmpxchg_u(a),
            (Rmw::Cmpxchg, _) => s.i64_atomic_rmw_cmpxchg(a),
        };
    }

    /// `xchg` with memory, `lock xadd` and `lock cmpxchg` as one wasm atomic each (the
    /// memory operand's address in EA); their register results and flags as the plain
    /// forms give them.
    fn atomic(&mut self, ins: &Instruction, m: Mnemonic, w: u32) -> R {
        use Mnemonic as M;
        match m {
            M::Xchg => {
                let r = if ins.op_kind(0) == OpKind::Memory {
                    1
                } else {
                    0
                };
                self.i().local_get(EA);
                self.read(ins, r, w)?;
                self.rmw(w, Rmw::Xchg);
                self.write(ins, r, w)?;
            }
            M::Xadd => {
                // dst += src; src = the old dst; flags of the addition
                self.read(ins, 1, w)?;
                self.i().local_tee(T1).local_set(T3);
                self.i().local_get(EA).local_get(T3);
                self.rmw(w, Rmw::Add);
                self.i()
                    .local_tee(T0)
                    .local_get(T1)
                    .i64_add()
                    .i64_const(mask(w))
                    .i64_and();
                self.record(flags::ADD, w, false);
                self.i().local_get(T0);
                self.write(ins, 1, w)?;
            }
            _ => {
                // the destination becomes src where it equals the accumulator, which
                // gets the old value otherwise; flags of cmp acc, old
                let acc = accumulator(w);
                self.reg_read(ins, acc)?;
                self.i().local_set(T0);
                self.read(ins, 1, w)?;
                self.i().local_set(T3);
                self.i().local_get(EA).local_get(T0).local_get(T3);
                self.rmw(w, Rmw::Cmpxchg);
                self.i()
                    .local_set(T1)
                    .local_get(T0)
                    .local_get(T1)
                    .i64_sub()
                    .i64_const(mask(w))
                    .i64_and();
                self.record(flags::SUB, w, false);
                self.i().local_get(T0).local_get(T1).i64_ne();
                self.open(BlockType::Empty, 2);
                self.i().local_get(T1);
                self.reg_write(ins, acc)?;
                self.end();
            }
        }
        Ok(())
    }

    /// stos, movs, lods, cmps, scas with and without rep/repe/repne, through %rdi/%rsi
    /// (NaCl's sandboxed forms add %r15 before, which is 0 here). The direction flag is
    /// always clear: `std` is not translated.
    fn string(&mut self, ins: &Instruction) -> R {
        use Mnemonic as M;
        const RSI: u32 = 6;
        const RDI: u32 = 7;
        let m = ins.mnemonic();
        // 32- and 16-bit addressing (addr32 prefix) is not NaCl's sandboxed form
        if (0..ins.op_count()).any(|n| {
            matches!(
                ins.op_kind(n),
                OpKind::MemorySegESI
                    | OpKind::MemoryESEDI
                    | OpKind::MemorySegEDI
                    | OpKind::MemorySegSI
                    | OpKind::MemorySegDI
                    | OpKind::MemoryESDI
            )
        }) {
            return Err(LiftError::not_yet(ins, "string instruction"));
        }
        let w = ins.memory_size().size() as u32;
        // what each does: load [rsi], store [rdi], set the accumulator, compare with [rdi]
        let (load_si, store_di, set_acc, compare) = match m {
            M::Stosb | M::Stosw | M::Stosd | M::Stosq => (false, true, false, false),
            M::Movsb | M::Movsw | M::Movsd | M::Movsq => (true, true, false, false),
            M::Lodsb | M::Lodsw | M::Lodsd | M::Lodsq => (true, false, true, false),
            M::Cmpsb | M::Cmpsw | M::Cmpsd | M::Cmpsq => (true, false, false, true),
            M::Scasb | M::Scasw | M::Scasd | M::Scasq => (false, false, false, true),
            _ => return Err(LiftError::not_yet(ins, "string instruction")),
        };
        let acc = accumulator(w);
        let rep = ins.has_rep_prefix() || ins.has_repne_prefix();
        if rep {
            self.open(BlockType::Empty, 0);
            self.open(BlockType::Empty, 1);
            self.i().local_get(reg(RCX)).i64_eqz().br_if(1);
        }
        let step = |e: &mut Self, r: u32| {
            e.i()
                .local_get(reg(r))
                .i64_const(w as i64)
                .i64_add()
                .local_set(reg(r));
        };
        // a: the source element (or the accumulator for stos/scas)
        if load_si {
            self.i().local_get(reg(RSI)).i32_wrap_i64().local_set(EA);
            self.check_ea(ins);
            self.load(w);
            step(self, RSI);
        } else {
            self.reg_read(ins, acc)?;
        }
        self.i().local_set(T0);
        if store_di {
            self.i().local_get(reg(RDI)).i32_wrap_i64().local_set(EA);
            self.check_ea(ins);
            self.i().local_get(T0);
            self.store(w);
            step(self, RDI);
        }
        if set_acc {
            self.i().local_get(T0);
            self.reg_write(ins, acc)?;
        }
        if compare {
            // cmps: [rsi] - [rdi]; scas: acc - [rdi]
            self.i().local_get(reg(RDI)).i32_wrap_i64().local_set(EA);
            self.check_ea(ins);
            self.load(w);
            self.i().local_set(T1);
            step(self, RDI);
            self.i()
                .local_get(T0)
                .local_get(T1)
                .i64_sub()
                .i64_const(mask(w))
                .i64_and();
            self.record(flags::SUB, w, false);
        }
        if rep {
            self.i()
                .local_get(reg(RCX))
                .i64_const(1)
                .i64_sub()
                .local_set(reg(RCX));
            if compare {
                // repe stops when unequal, repne when equal
                self.i().local_get(FR).i64_eqz();
                if ins.has_rep_prefix() {
                    self.i().i32_eqz();
                }
                self.i().br_if(1);
            }
            self.i().br(0);
            self.end();
            self.end();
        }
        Ok(())
    }

    /// shl/sal/shr/sar/rol/ror: the count is masked to 5 bits (6 for 64-bit operands);
    /// a zero count changes nothing, not even the flags.
    fn shift(&mut self, ins: &Instruction, m: Mnemonic, w: u32) -> R {
        use Mnemonic as M;
        let cmask: i64 = if w == 8 { 63 } else { 31 };
        let bits = 8 * w as i64;
        if w == 4 && ins.op_kind(0) == OpKind::Register {
            // A 32-bit destination is written, so zero-extended, even by a zero count.
            self.read(ins, 0, w)?;
            self.write(ins, 0, w)?;
        }
        let constant = match ins.op_kind(1) {
            OpKind::Register => None,
            _ => Some(ins.immediate(1) as i64 & cmask),
        };
        match constant {
            Some(0) => return Ok(()),
            Some(c) => {
                self.i().i64_const(c).local_set(T1);
            }
            None => {
                if ins.op_register(1) != Register::CL {
                    return Err(LiftError::not_yet(ins, "instruction"));
                }
                self.i()
                    .local_get(reg(RCX))
                    .i64_const(cmask)
                    .i64_and()
                    .local_tee(T1)
                    .i64_const(0)
                    .i64_ne();
                self.open(BlockType::Empty, 2);
            }
        }
        self.read(ins, 0, w)?;
        self.i().local_set(T0);
        let s = 1i64.wrapping_shl(bits as u32 - 1);
        match m {
            M::Shl | M::Sal => {
                self.i()
                    .local_get(T0)
                    .local_get(T1)
                    .i64_shl()
                    .i64_const(mask(w))
                    .i64_and();
                self.record(flags::SHL, w, false);
            }
            M::Shr => {
                self.i().local_get(T0).local_get(T1).i64_shr_u();
                self.record(flags::SHR, w, false);
            }
            M::Sar => {
                self.i()
                    .local_get(T0)
                    .i64_const(s)
                    .i64_xor()
                    .i64_const(s)
                    .i64_sub()
                    .local_get(T1)
                    .i64_shr_s()
                    .i64_const(mask(w))
                    .i64_and();
                self.record(flags::SAR, w, false);
            }
            _ => {
                // rol/ror: the result, then CF and OF over the current flags (RAW).
                let left = m == M::Rol;
                match w {
                    8 => {
                        self.i().local_get(T0).local_get(T1);
                        if left {
                            self.i().i64_rotl();
                        } else {
                            self.i().i64_rotr();
                        }
                    }
                    4 => {
                        self.i()
                            .local_get(T0)
                            .i32_wrap_i64()
                            .local_get(T1)
                            .i32_wrap_i64();
                        if left {
                            self.i().i32_rotl();
                        } else {
                            self.i().i32_rotr();
                        }
                        self.i().i64_extend_i32_u();
                    }
                    _ => {
                        // k = count % bits; (a << k | a >> (bits - k)) & mask, mirrored for ror
                        self.i()
                            .local_get(T1)
                            .i64_const(bits)
                            .i64_rem_u()
                            .local_set(T2);
                        self.i().local_get(T0).local_get(T2);
                        if left {
                            self.i().i64_shl();
                        } else {
                            self.i().i64_shr_u();
                        }
                        self.i()
                            .local_get(T0)
                            .i64_const(bits)
                            .local_get(T2)
                            .i64_sub();
                        if left {
                            self.i().i64_shr_u();
                        } else {
                            self.i().i64_shl();
                        }
                        self.i().i64_or().i64_const(mask(w)).i64_and();
                    }
                }
                self.i().local_set(T3);
                // cf: rol → lsb(r); ror → msb(r).  of: rol → msb(r) ^ cf; ror → msb(r) ^ msb-1(r)
                let msb = |e: &mut Self, b: i64| {
                    e.i()
                        .local_get(T3)
                        .i64_const(b)
                        .i64_shr_u()
                        .i64_const(1)
                        .i64_and();
                };
                if left {
                    self.i().local_get(T3).i64_const(1).i64_and().local_set(T2);
                } else {
                    msb(self, bits - 1);
                    self.i().local_set(T2);
                }
                msb(self, bits - 1);
                if left {
                    self.i().local_get(T2);
                } else {
                    msb(self, bits - 2);
                }
                self.i()
                    .i64_xor()
                    .i64_const(11)
                    .i64_shl()
                    .local_get(T2)
                    .i64_or();
                self.eflags();
                self.i()
                    .i32_const(!(flags::CF | flags::OF))
                    .i32_and()
                    .i64_extend_i32_u()
                    .i64_or()
                    .local_set(FR);
                self.raw_flags();
                self.i().local_get(T3);
                self.write(ins, 0, w)?;
                if constant.is_none() {
                    self.end();
                }
                return Ok(());
            }
        }
        self.i().local_get(FR);
        self.write(ins, 0, w)?;
        if constant.is_none() {
            self.end();
        }
        Ok(())
    }

    /// shld/shrd on 32- and 64-bit operands: the destination shifted, its vacated bits
    /// filled from the source. Flags as a shl/shr of the destination by the count, but
    /// OF (defined for a count of 1) is whether the sign changed. A count of 0 changes
    /// nothing (a 32-bit register destination is still zero-extended).
    fn double_shift(&mut self, ins: &Instruction, m: Mnemonic, w: u32) -> R {
        if w < 4 {
            // 16-bit forms leave results undefined for counts above 16
            return Err(LiftError::not_yet(ins, "instruction"));
        }
        let cmask: i64 = if w == 8 { 63 } else { 31 };
        let bits = 8 * w as i64;
        if w == 4 && ins.op_kind(0) == OpKind::Register {
            self.read(ins, 0, w)?;
            self.write(ins, 0, w)?;
        }
        let constant = match ins.op_kind(2) {
            OpKind::Register => None,
            _ => Some(ins.immediate8() as i64 & cmask),
        };
        match constant {
            Some(0) => return Ok(()),
            Some(c) => {
                self.i().i64_const(c).local_set(T1);
            }
            None => {
                self.i()
                    .local_get(reg(RCX))
                    .i64_const(cmask)
                    .i64_and()
                    .local_tee(T1)
                    .i64_const(0)
                    .i64_ne();
                self.open(BlockType::Empty, 2);
            }
        }
        self.read(ins, 1, w)?;
        self.i().local_set(T2);
        self.read(ins, 0, w)?;
        self.i().local_set(T0);
        let left = m == Mnemonic::Shld;
        // r = d << c | s >> (bits - c)   (shrd: d >> c | s << (bits - c))
        self.i().local_get(T0).local_get(T1);
        if left {
            self.i().i64_shl();
        } else {
            self.i().i64_shr_u();
        }
        self.i()
            .local_get(T2)
            .i64_const(bits)
            .local_get(T1)
            .i64_sub();
        if left {
            self.i().i64_shr_u();
        } else {
            self.i().i64_shl();
        }
        self.i().i64_or().i64_const(mask(w)).i64_and();
        self.record(if left { flags::SHL } else { flags::SHR }, w, false);
        // OF = msb(r) ^ msb(d), over the shift's other flags
        self.eflags();
        self.i()
            .i32_const(!flags::OF)
            .i32_and()
            .i64_extend_i32_u()
            .local_get(FR)
            .local_get(T0)
            .i64_xor()
            .i64_const(bits - 1)
            .i64_shr_u()
            .i64_const(1)
            .i64_and()
            .i64_const(11)
            .i64_shl()
            .i64_or()
            .local_get(FR)
            .local_set(T3)
            .local_set(FR);
        self.raw_flags();
        self.i().local_get(T3);
        self.write(ins, 0, w)?;
        if constant.is_none() {
            self.end();
        }
        Ok(())
    }

    /// `cpuid` answers a fixed CPU ([`CPUID`]): the features the translator covers.
    /// `rdtsc`: a 1 GHz time-stamp counter, the monotonic clock's nanoseconds when the
    /// runtime is linked (its WASI clock); 0 without it (no imports).
    fn rdtsc(&mut self) {
        if self.ctx.fbase > 0 {
            super::runtime::clock_ns(&mut self.i().w());
        } else {
            self.i().i64_const(0);
        }
        self.i()
            .local_tee(T0)
            .i64_const(0xffff_ffff)
            .i64_and()
            .local_set(reg(RAX));
        self.i()
            .local_get(T0)
            .i64_const(32)
            .i64_shr_u()
            .local_set(reg(RDX));
    }

    fn cpuid(&mut self) {
        // leaf in eax (sub-leaf in ecx is not needed by the leaves answered)
        self.i()
            .local_get(reg(RAX))
            .i64_const(0xffff_ffff)
            .i64_and()
            .local_set(T0);
        for (k, r) in [RAX, 3, RCX, RDX].into_iter().enumerate() {
            // default 0, then each known leaf's value
            self.i().i64_const(0).local_set(T1);
            for (leaf, regs) in CPUID {
                self.i()
                    .i64_const(regs[k] as i64)
                    .local_get(T1)
                    .local_get(T0)
                    .i64_const(*leaf as i64)
                    .i64_eq()
                    .select()
                    .local_set(T1);
            }
            self.i().local_get(T1).local_set(reg(r));
        }
    }

    /// Sets the flag record to RAW with CF = OF = the i32 on the stack.
    fn overflow_flags(&mut self) {
        self.i().local_set(TI);
        self.i()
            .local_get(TI)
            .i32_const(flags::CF | flags::OF)
            .i32_mul()
            .i64_extend_i32_u()
            .local_set(FR);
        self.raw_flags();
    }

    /// Pushes the high half of the 128-bit product of T0 and T1 (signed or not).
    fn mul_hi64(&mut self, signed: bool) {
        let fb = self.ctx.fbase;
        self.i().local_get(T0).local_get(T1).call(fb + F_MULHU);
        if signed {
            // hi_s = hi_u - (a < 0 ? b : 0) - (b < 0 ? a : 0)
            self.i()
                .local_get(T1)
                .i64_const(0)
                .local_get(T0)
                .i64_const(0)
                .i64_lt_s()
                .select()
                .i64_sub()
                .local_get(T0)
                .i64_const(0)
                .local_get(T1)
                .i64_const(0)
                .i64_lt_s()
                .select()
                .i64_sub();
        }
    }

    fn mul(&mut self, ins: &Instruction, m: Mnemonic, w: u32) -> R {
        let signed = m == Mnemonic::Imul;
        if ins.op_count() == 1 {
            // rdx:rax (ax for bytes) = rax * src
            let acc = accumulator(w);
            self.reg_read(ins, acc)?;
            if signed {
                self.sext(w);
            }
            self.i().local_set(T0);
            self.read(ins, 0, w)?;
            if signed {
                self.sext(w);
            }
            self.i().local_set(T1);
            if w == 8 {
                self.mul_hi64(signed);
                self.i().local_set(T2);
                self.i()
                    .local_get(T0)
                    .local_get(T1)
                    .i64_mul()
                    .local_set(reg(RAX));
                self.i().local_get(T2).local_set(reg(RDX));
                self.i().local_get(T2);
                if signed {
                    self.i()
                        .local_get(reg(RAX))
                        .i64_const(63)
                        .i64_shr_s()
                        .i64_ne();
                } else {
                    self.i().i64_const(0).i64_ne();
                }
            } else {
                self.i().local_get(T0).local_get(T1).i64_mul().local_set(T2);
                let bits = 8 * w as i64;
                if w == 1 {
                    self.i().local_get(T2);
                    self.reg_write(ins, Register::AX)?;
                } else {
                    let (lo, hi) = if w == 2 {
                        (Register::AX, Register::DX)
                    } else {
                        (Register::EAX, Register::EDX)
                    };
                    self.i().local_get(T2);
                    self.reg_write(ins, lo)?;
                    self.i().local_get(T2).i64_const(bits).i64_shr_u();
                    self.reg_write(ins, hi)?;
                }
                self.i().local_get(T2);
                if signed {
                    self.i().local_get(T2);
                    self.sext(w);
                    self.i().i64_ne();
                } else {
                    self.i().i64_const(bits).i64_shr_u().i64_const(0).i64_ne();
                }
            }
            self.overflow_flags();
            return Ok(());
        }
        // imul dst, src [, imm]: the truncated signed product
        let (a, b) = if ins.op_count() == 3 { (1, 2) } else { (0, 1) };
        self.read(ins, a, w)?;
        self.sext(w);
        self.i().local_set(T0);
        self.read(ins, b, w)?;
        self.sext(w);
        self.i().local_set(T1);
        self.i().local_get(T0).local_get(T1).i64_mul().local_set(T2);
        if w == 8 {
            self.mul_hi64(true);
            self.i().local_get(T2).i64_const(63).i64_shr_s().i64_ne();
        } else {
            self.i().local_get(T2).local_get(T2);
            self.sext(w);
            self.i().i64_ne();
        }
        self.overflow_flags();
        self.i().local_get(T2);
        self.write(ins, 0, w)?;
        Ok(())
    }

    fn div(&mut self, ins: &Instruction, m: Mnemonic, w: u32) -> R {
        let signed = m == Mnemonic::Idiv;
        self.read(ins, 0, w)?;
        if signed {
            self.sext(w);
        }
        self.i().local_set(T1);
        let bits = 8 * w as i64;
        if w < 8 {
            // the dividend fits i64: ax, dx:ax or edx:eax
            if w == 1 {
                self.reg_read(ins, Register::AX)?;
                if signed {
                    self.sext(2);
                }
            } else {
                let (lo, hi) = if w == 2 {
                    (Register::AX, Register::DX)
                } else {
                    (Register::EAX, Register::EDX)
                };
                self.reg_read(ins, hi)?;
                self.i().i64_const(bits).i64_shl();
                self.reg_read(ins, lo)?;
                self.i().i64_or();
                if signed {
                    self.sext(2 * w);
                }
            }
            self.i().local_set(T0);
            self.i().local_get(T0).local_get(T1);
            if signed {
                self.i().i64_div_s();
            } else {
                self.i().i64_div_u();
            }
            self.i().local_set(T2);
            // #DE when the quotient does not fit
            self.i().local_get(T2);
            if signed {
                self.i().local_get(T2);
                self.sext(w);
                self.i().i64_ne();
            } else {
                self.i().i64_const(bits).i64_shr_u().i64_const(0).i64_ne();
            }
            self.i().if_(BlockType::Empty).unreachable().end();
            self.i().local_get(T0).local_get(T1);
            if signed {
                self.i().i64_rem_s();
            } else {
                self.i().i64_rem_u();
            }
            self.i().local_set(T3);
            if w == 1 {
                self.i().local_get(T2);
                self.reg_write(ins, Register::AL)?;
                self.i().local_get(T3);
                self.reg_write(ins, Register::AH)?;
            } else {
                let (lo, hi) = if w == 2 {
                    (Register::AX, Register::DX)
                } else {
                    (Register::EAX, Register::EDX)
                };
                self.i().local_get(T3).local_set(T0);
                self.i().local_get(T2);
                self.reg_write(ins, lo)?;
                self.i().local_get(T0);
                self.reg_write(ins, hi)?;
            }
            return Ok(());
        }
        if !signed {
            let fb = self.ctx.fbase;
            self.i()
                .local_get(reg(RDX))
                .local_get(reg(RAX))
                .local_get(T1)
                .call(fb + F_UDIV128)
                .local_set(reg(RDX))
                .local_set(reg(RAX));
            return Ok(());
        }
        // idiv r/m64: magnitudes through the unsigned division, then the signs.
        // T0 = dividend negative (0/1), T2 = quotient negative (0/1)
        self.i()
            .local_get(reg(RDX))
            .i64_const(63)
            .i64_shr_u()
            .local_set(T0);
        self.i()
            .local_get(T0)
            .local_get(T1)
            .i64_const(63)
            .i64_shr_u()
            .i64_xor()
            .local_set(T2);
        // |rdx:rax|: negate as 128 bits when negative
        self.i().local_get(T0).i32_wrap_i64();
        self.open(BlockType::Empty, 2);
        // hi = ~hi + (lo == 0); lo = -lo
        self.i()
            .local_get(reg(RDX))
            .i64_const(-1)
            .i64_xor()
            .local_get(reg(RAX))
            .i64_eqz()
            .i64_extend_i32_u()
            .i64_add()
            .local_set(reg(RDX));
        self.i()
            .i64_const(0)
            .local_get(reg(RAX))
            .i64_sub()
            .local_set(reg(RAX));
        self.end();
        // |divisor|
        self.i()
            .i64_const(0)
            .local_get(T1)
            .i64_sub()
            .local_get(T1)
            .local_get(T1)
            .i64_const(0)
            .i64_lt_s()
            .select()
            .local_set(T1);
        let fb = self.ctx.fbase;
        self.i()
            .local_get(reg(RDX))
            .local_get(reg(RAX))
            .local_get(T1)
            .call(fb + F_UDIV128)
            .local_set(T3) // remainder magnitude
            .local_set(T1); // quotient magnitude
                            // the quotient must fit: ≤ 2^63 when negative, < 2^63 otherwise
        self.i()
            .local_get(T1)
            .i64_const(i64::MIN)
            .i64_gt_u()
            .local_get(T1)
            .i64_const(i64::MIN)
            .i64_ge_u()
            .local_get(T2)
            .i32_wrap_i64()
            .select()
            .if_(BlockType::Empty)
            .unreachable()
            .end();
        // rax = neg ? -q : q; rdx = dividend negative ? -r : r
        self.i()
            .i64_const(0)
            .local_get(T1)
            .i64_sub()
            .local_get(T1)
            .local_get(T2)
            .i32_wrap_i64()
            .select()
            .local_set(reg(RAX));
        self.i()
            .i64_const(0)
            .local_get(T3)
            .i64_sub()
            .local_get(T3)
            .local_get(T0)
            .i32_wrap_i64()
            .select()
            .local_set(reg(RDX));
        Ok(())
    }
}

/// Lifts `func` (its instructions are `insns`, address-ordered, covering its extent):
/// structured (`structure`) when `structure` is set and its block graph allows, else
/// blocks dispatched by the loop. Says which.
pub(crate) fn lift(
    func: &Function,
    insns: &[Instruction],
    ctx: &Ctx<'_>,
    structure: bool,
) -> Result<(Vec<u8>, bool), LiftError> {
    let n = func.blocks.len() as u32;
    // each block's instructions (an index range of `insns`), in one pass
    let mut ranges: Vec<(usize, usize)> = Vec::with_capacity(n as usize);
    let mut at = 0;
    for &start in &func.blocks {
        while at < insns.len() && (insns[at].ip() as u32) < start {
            at += 1;
        }
        if insns.get(at).map(|i| i.ip() as u32) != Some(start) {
            return Err(LiftError::NotInstructionStart { address: start });
        }
        if let Some(prev) = ranges.last_mut() {
            prev.1 = at;
        }
        ranges.push((at, at));
    }
    if let Some(last) = ranges.last_mut() {
        last.1 = last.0 + insns[last.0..].partition_point(|i| (i.ip() as u32) < func.end);
    }
    let plan = if structure {
        structure::plan(func, insns, &ranges)
    } else {
        None
    };
    USED.with(|u| u.set(0));
    let mut code = SCRATCH.with(|c| c.take());
    code.clear();
    let mut e = Em {
        code,
        spills: Vec::new(),
        level: 0,
        loop_level: 0,
        ctx,
        func,
        dispatch: n,
        cas: None,
        setter: None,
        structured: plan.is_some(),
        term: Term::None,
    };
    e.reload();
    let lift_block = |e: &mut Em<'_>, k: usize| -> R<bool> {
        // a block may be entered from anywhere: the flags' setter is not known
        e.flags_unknown();
        let mut falls = true;
        for j in ranges[k].0..ranges[k].1 {
            let ins = &insns[j];
            if ins.code() == iced_x86::Code::INVALID {
                return Err(LiftError::Invalid {
                    address: ins.ip() as u32,
                });
            }
            if let Some(ret) = pushed_call(insns, j) {
                e.call(ins, ret, false)?;
                // back at `ret`, past the padding that may follow the `jmp`
                falls = ret == ins.next_ip() as u32;
                if !falls {
                    e.goto(ins, ret)?;
                }
                continue;
            }
            e.lift(ins)?;
            falls = !ends_flow(ins);
        }
        Ok(falls)
    };
    // Falling off the end: into the next function, or off the code (a crash).
    let fall_off = |e: &mut Em<'_>| {
        if func.end < ctx.end && ctx.funcs.contains_key(&func.end) {
            let f = ctx.funcs[&func.end];
            e.spill();
            e.i().local_get(RET).return_call(f);
        } else {
            e.i().unreachable();
        }
    };
    if let Some(plan) = &plan {
        structure::emit(&mut e, plan, lift_block, fall_off)?;
    } else {
        // Segments 0..n are the blocks, n the indirect-jump dispatch.
        let segments = n + 1;
        e.open(BlockType::Empty, 1);
        e.loop_level = e.level;
        for _ in 0..segments {
            e.open(BlockType::Empty, 0);
        }
        e.i().local_get(PC).br_table(0..segments, segments - 1);
        e.end();
        for k in 0..n as usize {
            let falls = lift_block(&mut e, k)?;
            if k + 1 == n as usize && falls {
                fall_off(&mut e);
            }
            e.end();
        }
        dispatch(&mut e)?;
        e.end(); // loop
    }
    e.i().unreachable().end();
    let f = finish(&e.code, &e.spills, USED.with(|u| u.get()));
    SCRATCH.with(|c| c.set(e.code));
    Ok((f, plan.is_some()))
}

thread_local! {
    /// The instruction buffer, kept from one function to the next (no allocation and
    /// growth per function).
    static SCRATCH: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// The function's body (its locals and code, without its size): `code` with the saves (to
/// the globals) and restores (from them) of the `used` registers and the flag record put
/// in at `spills`.
fn finish(code: &[u8], spills: &[(usize, bool)], used: u32) -> Vec<u8> {
    let mut save = Vec::with_capacity(4 * 37);
    let mut restore = Vec::with_capacity(4 * 37);
    {
        let (mut s, mut r) = (Sink(&mut save), Sink(&mut restore));
        for n in (0..16).filter(|n| used & 1 << n != 0) {
            s.local_get(1 + n).global_set(n);
            r.global_get(n).local_set(1 + n);
        }
        for (k, l) in [FOP, FA, FB, FR, FC].into_iter().enumerate() {
            s.local_get(l).global_set(G_FOP + k as u32);
            r.global_get(G_FOP + k as u32).local_set(l);
        }
        for n in (0..16).filter(|n| used & 1 << (16 + n) != 0) {
            s.local_get(xmm_local(n)).global_set(G_XMM + n);
            r.global_get(G_XMM + n).local_set(xmm_local(n));
        }
    }
    let mut body = LOCALS_BODY.with(|l| {
        let mut b =
            Vec::with_capacity(l.len() + code.len() + spills.len() * save.len().max(restore.len()));
        b.extend_from_slice(l);
        b
    });
    let mut at = 0;
    for &(pos, is_spill) in spills {
        body.extend_from_slice(&code[at..pos]);
        body.extend_from_slice(if is_spill { &save } else { &restore });
        at = pos;
    }
    body.extend_from_slice(&code[at..]);
    body
}

/// The indirect-jump dispatch: a bundle start inside the function goes to its block,
/// anything else to the function table (a tail call).
fn dispatch(e: &mut Em<'_>) -> R {
    let func = e.func;
    // indirect targets are bundle starts: the table counts bundles from the one the
    // function starts in (a function may start inside a bundle: a jump target)
    let first = func.start & !31;
    let bundles = (func.end - first).div_ceil(32);
    let mut stubs: Vec<u32> = Vec::new();
    let mut labels = Vec::with_capacity(bundles as usize);
    for b in 0..bundles {
        let a = first + 32 * b;
        if a < func.start {
            labels.push(u32::MAX);
        } else if let Some(blk) = e.block(a) {
            labels.push(stubs.len() as u32);
            stubs.push(blk);
        } else {
            labels.push(u32::MAX);
        }
    }
    let m = stubs.len() as u32;
    let labels: Vec<u32> = labels
        .into_iter()
        .map(|l| if l == u32::MAX { m } else { l })
        .collect();
    e.open(BlockType::Empty, 0); // miss
    for _ in 0..m {
        e.open(BlockType::Empty, 0);
    }
    // unaligned targets miss too
    e.i().local_get(TGT).i32_const(31).i32_and().br_if(m);
    e.i()
        .local_get(TGT)
        .i32_const(first as i32)
        .i32_sub()
        .i32_const(5)
        .i32_shr_u()
        .br_table(labels, m);
    for &blk in &stubs {
        e.end();
        e.i().i32_const(blk as i32).local_set(PC);
        e.br_loop();
    }
    e.end(); // miss
    e.table_jump();
    Ok(())
}

/// The accumulator of width `w` bytes (al, ax, eax, rax).
fn accumulator(w: u32) -> Register {
    match w {
        1 => Register::AL,
        2 => Register::AX,
        4 => Register::EAX,
        _ => Register::RAX,
    }
}
