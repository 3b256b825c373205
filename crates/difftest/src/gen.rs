//! The generator: a valid PNaCl module (as PNaClAsm text) from fuzzer bytes.
//!
//! A module has a few functions `fnI` with random signatures; function `i` calls only
//! functions after it (directly, or indirectly through a table of relocations), so calls
//! never recurse. Each body is a random CFG: a spanning tree gives every block a
//! predecessor before it (so a block's dominators come before it and every non-phi use
//! refers to an earlier value), random extra edges add loops, irreducible regions, cross
//! edges and switches. Loops end: every target of a backward edge starts with a header
//! that takes one unit of fuel (a global) and leaves for an exit block when it is used
//! up; so does every longjmp. Values are drawn from what dominates the current point
//! (parameters, constants with edge values, earlier results), phis get a value of their
//! type at the end of each predecessor.
//!
//! Memory: global `buf` (512 bytes of random data, compared after every call) is
//! addressed as `buf + (x & mask)`, so accesses stay inside it; allocas are zeroed before
//! use (stack garbage differs between the interpreter and wasm) and their addresses never
//! escape into compared values. The stack never overflows: the two sides pad dynamic
//! allocas differently, so an overflow would overwrite different bytes of the globals
//! below the stack (see [`MAX_GROWING_ALLOCAS`]). The other globals: `fuel`, the
//! jmp_bufs and the function table.

use std::collections::HashMap;
use std::fmt::Write as _;

use arbitrary::Unstructured;
use pexe2wasm::interp::Val;
use pexe2wasm::ir::Scalar;

/// What the generator may use (all on for fuzzing; tests narrow it down).
#[derive(Debug, Clone)]
pub struct Config {
    pub simd: bool,
    pub atomics: bool,
    pub sjlj: bool,
    pub calls: bool,
    pub floats: bool,
    pub max_funcs: usize,
    pub max_blocks: usize,
    pub max_insts: usize,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            simd: true,
            atomics: true,
            sjlj: true,
            calls: true,
            floats: true,
            max_funcs: 4,
            max_blocks: 8,
            max_insts: 10,
        }
    }
}

/// Bytes of the compared buffer.
pub const BUF: u32 = 512;
/// Initial fuel: loop iterations and longjmps of all calls together.
pub const FUEL: u32 = 200;
/// Bytes of each function's jmp_buf slot.
const JB: u32 = 64;
/// Dynamic allocas per function that are not inside stacksave/stackrestore (the rest
/// are). Each one runs at most once per unit of fuel its frame takes, plus once, and
/// grows the stack by at most 48 bytes (`(x & 31) + 16`, padded to 16 by the lowering),
/// so all frames together grow by at most `2 * 48 * (FUEL + frames)`, about 20 KB of the
/// harness's 64 KiB stack. Without a bound, a loop of a few blocks with ten such allocas
/// each overflowed the stack into the globals below it, where the interpreter (which
/// pads to the alloca's own alignment) and wasm wrote different bytes
/// (docs/FUZZING.md, finding 2).
pub const MAX_GROWING_ALLOCAS: u32 = 2;

/// A value type of the generated code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Ty {
    I1,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    V16I8,
    V8I16,
    V4I32,
    V4F32,
    V4I1,
    V8I1,
    V16I1,
}

use Ty::*;

const SCALARS: [Ty; 7] = [I1, I8, I16, I32, I64, F32, F64];
const INTS: [Ty; 5] = [I1, I8, I16, I32, I64];
const VECS: [Ty; 4] = [V16I8, V8I16, V4I32, V4F32];
const MASKS: [Ty; 3] = [V4I1, V8I1, V16I1];

impl Ty {
    pub fn name(self) -> &'static str {
        match self {
            I1 => "i1",
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            F32 => "float",
            F64 => "double",
            V16I8 => "<16 x i8>",
            V8I16 => "<8 x i16>",
            V4I32 => "<4 x i32>",
            V4F32 => "<4 x float>",
            V4I1 => "<4 x i1>",
            V8I1 => "<8 x i1>",
            V16I1 => "<16 x i1>",
        }
    }
    pub fn elem(self) -> Ty {
        match self {
            V16I8 => I8,
            V8I16 => I16,
            V4I32 => I32,
            V4F32 => F32,
            V4I1 | V8I1 | V16I1 => I1,
            t => t,
        }
    }
    pub fn lanes(self) -> u32 {
        match self {
            V16I8 | V16I1 => 16,
            V8I16 | V8I1 => 8,
            V4I32 | V4F32 | V4I1 => 4,
            _ => 0,
        }
    }
    pub fn is_vec(self) -> bool {
        self.lanes() > 0
    }
    pub fn is_float(self) -> bool {
        matches!(self.elem(), F32 | F64)
    }
    pub fn is_int(self) -> bool {
        !self.is_float()
    }
    pub fn is_mask(self) -> bool {
        matches!(self, V4I1 | V8I1 | V16I1)
    }
    /// Element bits.
    pub fn bits(self) -> u32 {
        match self.elem() {
            I1 => 1,
            I8 => 8,
            I16 => 16,
            I32 | F32 => 32,
            _ => 64,
        }
    }
    pub fn bytes(self) -> u32 {
        self.bits().div_ceil(8) * self.lanes().max(1)
    }
    pub fn scalar(self) -> Scalar {
        match self.elem() {
            I1 => Scalar::I1,
            I8 => Scalar::I8,
            I16 => Scalar::I16,
            I32 => Scalar::I32,
            I64 => Scalar::I64,
            F32 => Scalar::F32,
            _ => Scalar::F64,
        }
    }
    /// The mask type of a vector's compares.
    fn mask(self) -> Ty {
        match self.lanes() {
            16 => V16I1,
            8 => V8I1,
            4 => V4I1,
            _ => I1,
        }
    }
    /// The non-mask vector with this many lanes (integer), for `zext`/`sext` of masks.
    fn int_vec(lanes: u32) -> Ty {
        match lanes {
            16 => V16I8,
            8 => V8I16,
            _ => V4I32,
        }
    }
}

/// An operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Op {
    P(u32),
    C(u32),
    V(u32),
    G(u32),
    F(u32),
}

enum Piece {
    S(String),
    O(Op),
    /// The incoming list of phi number `n` of the function.
    Phi(usize),
    /// A block label (`%bN`, numbered in the final layout).
    B(usize),
}

/// A statement of a body.
#[derive(Default)]
struct Line(Vec<Piece>);

impl Line {
    fn s(mut self, s: impl Into<String>) -> Self {
        self.0.push(Piece::S(s.into()));
        self
    }
    fn o(mut self, o: Op) -> Self {
        self.0.push(Piece::O(o));
        self
    }
    /// `T %x`
    fn t(self, t: Ty, o: Op) -> Self {
        self.s(format!("{} ", t.name())).o(o)
    }
    /// `label %bN`
    fn label(mut self, b: usize) -> Self {
        self.0.push(Piece::S("label ".into()));
        self.0.push(Piece::B(b));
        self
    }
}

/// One call of the harness: function index and arguments.
#[derive(Debug, Clone)]
pub struct PlannedCall {
    pub func: usize,
    pub args: Vec<Val>,
}

/// A generated function's signature.
#[derive(Debug, Clone)]
pub struct Sig {
    pub params: Vec<Ty>,
    pub ret: Option<Ty>,
}

/// A generated module.
pub struct Program {
    pub text: String,
    pub sigs: Vec<Sig>,
    pub calls: Vec<PlannedCall>,
    /// Global ids to compare after each call (the buffer and the fuel).
    pub compared_globals: Vec<u32>,
    /// Convert for threads (atomics as wasm atomics on a shared memory).
    pub threads: bool,
}

impl Program {
    /// The local allocation this program is converted with: liveness across blocks
    /// (`--small-code`) for half the programs, the default for the others. Taken from a
    /// hash of the text rather than from the fuzzer's bytes, so that the corpus keeps
    /// making the programs it made.
    pub fn locals(&self) -> pexe2wasm::convert::Locals {
        // FNV-1a.
        let h = self.text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
        });
        if h & 1 == 1 {
            pexe2wasm::convert::Locals::Liveness
        } else {
            pexe2wasm::convert::Locals::Blocks
        }
    }
}

/// Infallible draws from the fuzzer's bytes (an exhausted input gives the smallest
/// choices, so generation always ends).
pub struct Src<'a>(pub Unstructured<'a>);

impl Src<'_> {
    pub fn int(&mut self, lo: u32, hi: u32) -> u32 {
        self.0.int_in_range(lo..=hi).unwrap_or(lo)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            0
        } else {
            self.int(0, n as u32 - 1) as usize
        }
    }
    /// True with probability `num / den`; false once the input is used up (so an
    /// exhausted input makes the plainest program, not one full of rare choices).
    pub fn chance(&mut self, num: u32, den: u32) -> bool {
        self.int(1, den) > den - num
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
    pub fn u64(&mut self) -> u64 {
        self.0.arbitrary::<u64>().unwrap_or(0)
    }
    /// An integer of `bits`, often an edge value.
    pub fn int_value(&mut self, bits: u32) -> u64 {
        let m = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        let v = match self.int(0, 9) {
            0 => 0,
            1 => 1,
            2 => m,                     // -1
            3 => 1 << (bits - 1),       // MIN
            4 => (1 << (bits - 1)) - 1, // MAX
            5 => self.int(0, 16) as u64,
            6 => m - self.int(0, 16) as u64,
            _ => self.u64(),
        };
        v & m
    }
    pub fn f32_value(&mut self) -> u32 {
        const EDGES: [u32; 20] = [
            0,
            0x8000_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x3f00_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0xffc0_0000,
            0x7f80_0001,
            0x7fc0_0001,
            1,
            0x007f_ffff,
            0x0080_0000,
            0x7f7f_ffff,
            0x4f00_0000,
            0x4f80_0000,
            0x5f00_0000,
            0xcf00_0000,
            0x4b80_0001,
        ];
        match self.int(0, 3) {
            0 | 1 => self.pick(&EDGES),
            2 => (self.int(0, 2000) as f32 * 0.25 - 250.0).to_bits(),
            _ => self.u64() as u32,
        }
    }
    pub fn f64_value(&mut self) -> u64 {
        const EDGES: [u64; 18] = [
            0,
            0x8000_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0xfff8_0000_0000_0000,
            0x7ff0_0000_0000_0001,
            0x7ff8_0000_0000_0001,
            1,
            0x000f_ffff_ffff_ffff,
            0x0010_0000_0000_0000,
            0x7fef_ffff_ffff_ffff,
            0x41e0_0000_0000_0000,
            0x41f0_0000_0000_0000,
            0x43e0_0000_0000_0000,
            0xc3e0_0000_0000_0000,
        ];
        match self.int(0, 3) {
            0 | 1 => self.pick(&EDGES),
            2 => (self.int(0, 2000) as f64 * 0.25 - 250.0).to_bits(),
            _ => self.u64(),
        }
    }
    /// A value of type `t` (for call arguments).
    pub fn value(&mut self, t: Ty) -> Val {
        if t.is_vec() {
            let mut lanes = [0u64; 16];
            for l in lanes.iter_mut().take(t.lanes() as usize) {
                *l = match t.elem() {
                    F32 => self.f32_value() as u64,
                    e => self.int_value(e.bits()),
                };
            }
            return Val::Vector {
                elem: t.scalar(),
                n: t.lanes() as u8,
                lanes,
            };
        }
        match t {
            F32 => Val::F32(self.f32_value()),
            F64 => Val::F64(self.f64_value()),
            _ => Val::int(t.bits(), self.int_value(t.bits())),
        }
    }
}

/// What a block of the final CFG is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Entry,
    Normal,
    /// Takes fuel, then goes on to its body (the next block) or to the exit.
    Header,
    Body,
    Exit,
    /// `call longjmp; unreachable`, after the fuel check of the block before.
    Throw,
    /// Not reachable from the entry (it may branch to reachable blocks, whose phis then
    /// have an entry for it).
    Dead,
}

/// A terminator of the abstract CFG.
#[derive(Debug, Clone)]
enum Term {
    Ret,
    /// `call @llvm.trap(); unreachable`
    Trap,
    Longjmp,
    Succs(Vec<usize>),
}

/// Names of the intrinsics the generator declares: (name, return, params).
fn intrinsic_sig(name: &str) -> (&'static str, &'static [&'static str]) {
    match name {
        "llvm.nacl.setjmp" => ("i32", &["i32"]),
        "llvm.nacl.longjmp" => ("void", &["i32", "i32"]),
        "llvm.memset.p0i8.i32" => ("void", &["i32", "i8", "i32", "i32", "i1"]),
        "llvm.memcpy.p0i8.p0i8.i32" | "llvm.memmove.p0i8.p0i8.i32" => {
            ("void", &["i32", "i32", "i32", "i32", "i1"])
        }
        "llvm.bswap.i16" => ("i16", &["i16"]),
        "llvm.bswap.i32" => ("i32", &["i32"]),
        "llvm.bswap.i64" => ("i64", &["i64"]),
        "llvm.ctlz.i32" | "llvm.cttz.i32" => ("i32", &["i32", "i1"]),
        "llvm.ctlz.i64" | "llvm.cttz.i64" => ("i64", &["i64", "i1"]),
        "llvm.ctpop.i32" => ("i32", &["i32"]),
        "llvm.ctpop.i64" => ("i64", &["i64"]),
        "llvm.fabs.f32" | "llvm.sqrt.f32" => ("float", &["float"]),
        "llvm.fabs.f64" | "llvm.sqrt.f64" => ("double", &["double"]),
        "llvm.fabs.v4f32" => ("<4 x float>", &["<4 x float>"]),
        "llvm.nacl.atomic.load.i8" => ("i8", &["i32", "i32"]),
        "llvm.nacl.atomic.load.i16" => ("i16", &["i32", "i32"]),
        "llvm.nacl.atomic.load.i32" => ("i32", &["i32", "i32"]),
        "llvm.nacl.atomic.load.i64" => ("i64", &["i32", "i32"]),
        "llvm.nacl.atomic.store.i8" => ("void", &["i8", "i32", "i32"]),
        "llvm.nacl.atomic.store.i16" => ("void", &["i16", "i32", "i32"]),
        "llvm.nacl.atomic.store.i32" => ("void", &["i32", "i32", "i32"]),
        "llvm.nacl.atomic.store.i64" => ("void", &["i64", "i32", "i32"]),
        "llvm.nacl.atomic.rmw.i8" => ("i8", &["i32", "i32", "i8", "i32"]),
        "llvm.nacl.atomic.rmw.i16" => ("i16", &["i32", "i32", "i16", "i32"]),
        "llvm.nacl.atomic.rmw.i32" => ("i32", &["i32", "i32", "i32", "i32"]),
        "llvm.nacl.atomic.rmw.i64" => ("i64", &["i32", "i32", "i64", "i32"]),
        "llvm.nacl.atomic.cmpxchg.i8" => ("i8", &["i32", "i8", "i8", "i32", "i32"]),
        "llvm.nacl.atomic.cmpxchg.i16" => ("i16", &["i32", "i16", "i16", "i32", "i32"]),
        "llvm.nacl.atomic.cmpxchg.i32" => ("i32", &["i32", "i32", "i32", "i32", "i32"]),
        "llvm.nacl.atomic.cmpxchg.i64" => ("i64", &["i32", "i64", "i64", "i32", "i32"]),
        "llvm.nacl.atomic.fence" => ("void", &["i32"]),
        "llvm.nacl.atomic.fence.all" => ("void", &[]),
        "llvm.nacl.atomic.is.lock.free" => ("i1", &["i32", "i32"]),
        "llvm.stacksave" => ("i32", &[]),
        "llvm.trap" => ("void", &[]),
        "llvm.stackrestore" => ("void", &["i32"]),
        _ => unreachable!("intrinsic {name}"),
    }
}

/// Global ids.
const G_BUF: u32 = 0;
const G_FUEL: u32 = 1;
const G_JB: u32 = 2;
const G_TAB: u32 = 3;

/// Module-wide state while generating.
struct ModGen<'c> {
    cfg: &'c Config,
    sigs: Vec<Sig>,
    /// Intrinsics declared, in id order after the defined functions.
    intrinsics: Vec<&'static str>,
    uses_vectors: bool,
    /// Functions (so far) that call setjmp on entry.
    setjmp_funcs: Vec<usize>,
    /// Function types of calls through a pointer of another type (declared in the
    /// types block).
    call_types: Vec<Sig>,
}

impl ModGen<'_> {
    fn intrinsic(&mut self, name: &'static str) -> Op {
        let i = match self.intrinsics.iter().position(|n| *n == name) {
            Some(i) => i,
            None => {
                self.intrinsics.push(name);
                self.intrinsics.len() - 1
            }
        };
        Op::F((self.sigs.len() + i) as u32)
    }
}

/// Generates a program from `u`.
pub fn generate(u: &mut Src<'_>, cfg: &Config) -> Program {
    let nf = 1 + u.below(cfg.max_funcs.max(1));
    let mut param_tys: Vec<Ty> = vec![I32, I32, I32, I64, F32, F64];
    if cfg.simd {
        param_tys.extend(VECS);
    }
    let mut ret_tys: Vec<Option<Ty>> = vec![None, Some(I32), Some(I32), Some(I64)];
    if cfg.floats {
        ret_tys.extend([Some(F32), Some(F64)]);
    }
    if !cfg.floats {
        param_tys.retain(|t| !t.is_float());
    }
    if cfg.simd {
        ret_tys.extend(VECS.map(Some));
        if !cfg.floats {
            param_tys.retain(|t| !t.is_float());
            ret_tys.retain(|t| !t.is_some_and(|t| t.is_float()));
        }
    }
    let sigs: Vec<Sig> = (0..nf)
        .map(|_| {
            let n = u.below(6);
            Sig {
                params: (0..n).map(|_| u.pick(&param_tys)).collect(),
                ret: u.pick(&ret_tys),
            }
        })
        .collect();
    let mut mg = ModGen {
        cfg,
        sigs: sigs.clone(),
        intrinsics: Vec::new(),
        uses_vectors: cfg.simd,
        setjmp_funcs: Vec::new(),
        call_types: Vec::new(),
    };
    let mut bodies = Vec::new();
    for i in 0..nf {
        bodies.push(FnGen::new(&mut mg, i, u).generate(&mut mg, u));
    }
    let mut buf_init = vec![0u8; BUF as usize];
    for b in buf_init.iter_mut() {
        *b = u.int(0, 255) as u8;
    }
    let calls = (0..1 + u.below(3))
        .map(|k| {
            let func = if k == 0 { 0 } else { u.below(nf) };
            let args = sigs[func].params.iter().map(|t| u.value(*t)).collect();
            PlannedCall { func, args }
        })
        .collect();
    let threads = cfg.atomics && u.chance(1, 3);
    let text = render_module(&mg, &bodies, &buf_init);
    Program {
        text,
        sigs,
        calls,
        compared_globals: vec![G_BUF, G_FUEL],
        threads,
    }
}

fn render_module(mg: &ModGen<'_>, bodies: &[String], buf_init: &[u8]) -> String {
    // Types: scalars, vectors, then function types, each once.
    let mut types: Vec<String> = SCALARS.iter().map(|t| t.name().to_string()).collect();
    types.push("void".into());
    if mg.uses_vectors {
        types.extend(VECS.iter().chain(&MASKS).map(|t| t.name().to_string()));
    }
    let add = |s: String, types: &mut Vec<String>| {
        if !types.contains(&s) {
            types.push(s);
        }
    };
    let sig_text = |s: &Sig| {
        format!(
            "{} ({})",
            s.ret.map_or("void", |t| t.name()),
            s.params
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    for s in &mg.sigs {
        add(sig_text(s), &mut types);
    }
    for n in &mg.intrinsics {
        let (r, ps) = intrinsic_sig(n);
        add(format!("{r} ({})", ps.join(", ")), &mut types);
    }
    for s in &mg.call_types {
        add(sig_text(s), &mut types);
    }
    let mut o = String::new();
    o += "module {\n  version 1;\n  types {\n";
    let _ = writeln!(o, "    count {};", types.len());
    for (i, t) in types.iter().enumerate() {
        let _ = writeln!(o, "    @t{i} = {t};");
    }
    o += "  }\n";
    for (i, s) in mg.sigs.iter().enumerate() {
        let _ = writeln!(
            o,
            "  define internal {} @f{i}({});",
            s.ret.map_or("void", |t| t.name()),
            s.params
                .iter()
                .map(|t| t.name())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    for (k, n) in mg.intrinsics.iter().enumerate() {
        let (r, ps) = intrinsic_sig(n);
        let _ = writeln!(
            o,
            "  declare external {r} @f{}({});",
            mg.sigs.len() + k,
            ps.join(", ")
        );
    }
    let nf = mg.sigs.len();
    o += "  globals {\n    count 4;\n";
    let bytes: Vec<String> = buf_init.iter().map(|b| b.to_string()).collect();
    let _ = writeln!(o, "    var @g{G_BUF}, align 16, {{ {} }}", bytes.join(", "));
    let f = FUEL.to_le_bytes();
    let _ = writeln!(
        o,
        "    var @g{G_FUEL}, align 4, {{ {}, {}, {}, {} }}",
        f[0], f[1], f[2], f[3]
    );
    let _ = writeln!(o, "    var @g{G_JB}, align 8, zerofill {};", JB * nf as u32);
    let relocs: Vec<String> = (0..nf).map(|i| format!("reloc @f{i};")).collect();
    let _ = writeln!(
        o,
        "    const @g{G_TAB}, align 4, initializers {} {{ {} zerofill 4; }}",
        nf + 1,
        relocs.join(" ")
    );
    o += "  }\n  valuesymtab {\n";
    for i in 0..nf {
        let _ = writeln!(o, "    @f{i} : \"fn{i}\";");
    }
    for (k, n) in mg.intrinsics.iter().enumerate() {
        let _ = writeln!(o, "    @f{} : \"{n}\";", nf + k);
    }
    o += "  }\n";
    for b in bodies {
        o += b;
    }
    o += "}\n";
    o
}

struct Block {
    role: Role,
    succs: Vec<usize>,
    lines: Vec<Line>,
    /// Values defined here (usable where this block dominates), with their types.
    defs: Vec<(Op, Ty)>,
    /// The terminator's edges, repeats included (a phi has an entry per edge).
    edges: Vec<usize>,
    /// Without successors: end with `llvm.trap` and `unreachable` (else `ret`).
    trap: bool,
}

struct PhiGen {
    block: usize,
    ty: Ty,
    incoming: Vec<(Op, usize)>,
}

struct FnGen {
    index: usize,
    sig: Sig,
    /// Constants: type, bits, and whether it is `undef` (bits 0).
    consts: Vec<(Ty, u64, bool)>,
    const_ids: HashMap<(Ty, u64, bool), u32>,
    next_v: u32,
    blocks: Vec<Block>,
    idom: Vec<usize>,
    phis: Vec<PhiGen>,
    cur: usize,
    /// Values usable at the current point.
    avail: Vec<(Op, Ty)>,
    /// Scratch memory of this function: (base, bytes, alignment) of zeroed allocas in
    /// the entry block.
    scratch: Vec<(Op, u32, u32)>,
    /// The exit block (fuel used up), if any.
    exit: Option<usize>,
    /// Whether the function calls setjmp (it must, before a longjmp to its own slot).
    setjmp: bool,
    /// The jmp_buf slots a longjmp here may use: functions up to this one that call
    /// setjmp (a longjmp to one that is not active traps, as it should).
    jb_slots: Vec<usize>,
    /// Instructions emitted so far in the current block (bounded).
    budget: usize,
    /// Dynamic allocas so far outside stacksave/stackrestore ([`MAX_GROWING_ALLOCAS`]).
    growing_allocas: u32,
    simd: bool,
    /// The type of each value, by generation order.
    value_tys: Vec<Ty>,
    /// The order blocks are written in (entry first): a permutation, so that dominators
    /// may come after the blocks they dominate and values be used before the record
    /// that defines them (forward type declarations).
    layout: Vec<usize>,
}

impl FnGen {
    fn new(mg: &mut ModGen<'_>, index: usize, u: &mut Src<'_>) -> FnGen {
        let sig = mg.sigs[index].clone();
        let mut f = FnGen {
            index,
            sig,
            consts: Vec::new(),
            const_ids: HashMap::new(),
            next_v: 0,
            blocks: Vec::new(),
            idom: Vec::new(),
            phis: Vec::new(),
            cur: 0,
            avail: Vec::new(),
            scratch: Vec::new(),
            exit: None,
            setjmp: mg.cfg.sjlj && u.chance(1, 4),
            jb_slots: Vec::new(),
            budget: 0,
            growing_allocas: 0,
            simd: mg.cfg.simd,
            value_tys: Vec::new(),
            layout: Vec::new(),
        };
        if f.setjmp {
            mg.setjmp_funcs.push(index);
        }
        f.jb_slots = mg.setjmp_funcs.clone();
        f.build_cfg(mg.cfg, u);
        f
    }

    /// The abstract CFG, then the final one with headers, bodies, throws and the exit.
    fn build_cfg(&mut self, cfg: &Config, u: &mut Src<'_>) {
        // One function in eight is large: deep nests and many merges for the structurizer.
        let scale = if u.chance(1, 8) { 3 } else { 1 };
        let n = 1 + u.below(cfg.max_blocks.max(1) * scale);
        let mut succs: Vec<Vec<usize>> = vec![Vec::new(); n];
        for i in 1..n {
            let p = u.below(i);
            succs[p].push(i);
        }
        let mut terms = Vec::with_capacity(n);
        for s in succs.iter_mut() {
            let extra = if n > 1 { u.int(0, 2) } else { 0 };
            for _ in 0..extra {
                if u.chance(1, 2) {
                    s.push(1 + u.below(n - 1));
                }
            }
            // Shuffle a little: which successor is "then" matters to the structurizer.
            if s.len() > 1 && u.chance(1, 2) {
                let k = u.below(s.len());
                s.swap(0, k);
            }
            terms.push(if !s.is_empty() {
                Term::Succs(s.clone())
            } else if cfg.sjlj && !self.jb_slots.is_empty() && u.chance(1, 3)
                || cfg.sjlj && u.chance(1, 16)
            {
                Term::Longjmp
            } else if u.chance(1, 16) {
                Term::Trap
            } else {
                Term::Ret
            });
        }
        // Targets of backward edges (loops) get a header.
        let mut header = vec![false; n];
        for (i, s) in succs.iter().enumerate() {
            for &t in s {
                if t <= i {
                    header[t] = true;
                }
            }
        }
        // Final numbering.
        let mut first = vec![0usize; n]; // block branched to
        let mut main = vec![0usize; n]; // block holding the code
        let mut k = 0;
        let mut roles = Vec::new();
        for i in 0..n {
            first[i] = k;
            if header[i] {
                roles.push(Role::Header);
                k += 1;
                roles.push(Role::Body);
            } else {
                roles.push(if i == 0 { Role::Entry } else { Role::Normal });
            }
            main[i] = k;
            k += 1;
            if matches!(terms[i], Term::Longjmp) {
                roles.push(Role::Throw);
                k += 1;
            }
        }
        let needs_exit =
            header.iter().any(|h| *h) || terms.iter().any(|t| matches!(t, Term::Longjmp));
        let exit = needs_exit.then_some(k);
        if needs_exit {
            roles.push(Role::Exit);
        }
        self.exit = exit;
        let dead_from = roles.len();
        for _ in 0..u.int(0, 2) {
            if u.chance(1, 2) {
                roles.push(Role::Dead);
            }
        }
        let mut blocks: Vec<Block> = roles
            .iter()
            .map(|r| Block {
                role: *r,
                succs: Vec::new(),
                lines: Vec::new(),
                defs: Vec::new(),
                edges: Vec::new(),
                trap: false,
            })
            .collect();
        for i in 0..n {
            if header[i] {
                blocks[first[i]].succs = vec![exit.unwrap(), main[i]];
            }
            blocks[main[i]].trap = matches!(terms[i], Term::Trap);
            blocks[main[i]].succs = match &terms[i] {
                Term::Ret | Term::Trap => vec![],
                Term::Longjmp => vec![exit.unwrap(), main[i] + 1],
                Term::Succs(s) => s.iter().map(|&t| first[t]).collect(),
            };
        }
        // Dead blocks branch to reachable blocks (not the entry) or to each other, or end.
        for d in dead_from..blocks.len() {
            let n_succ = u.int(0, 2);
            blocks[d].trap = u.chance(1, 3);
            for _ in 0..n_succ {
                let t = if n == 1 || u.chance(1, 4) {
                    u.int(dead_from as u32, blocks.len() as u32 - 1) as usize
                } else {
                    first[1 + u.below(n - 1)]
                };
                if t != 0 && !blocks[d].succs.contains(&t) {
                    blocks[d].succs.push(t);
                }
            }
        }
        self.blocks = blocks;
        self.idom = dominators(&self.blocks);
        for b in dead_from..self.blocks.len() {
            self.idom[b] = usize::MAX;
        }
    }

    fn preds(&self, b: usize) -> Vec<usize> {
        let mut p = Vec::new();
        for (i, blk) in self.blocks.iter().enumerate() {
            if blk.succs.contains(&b) && !p.contains(&i) {
                p.push(i);
            }
        }
        p
    }

    fn konst(&mut self, t: Ty, v: u64) -> Op {
        self.konst_undef(t, v, false)
    }

    /// A constant, or `undef` (the converter and the interpreter both read it as 0).
    fn konst_undef(&mut self, t: Ty, v: u64, undef: bool) -> Op {
        let key = (t, if undef { 0 } else { v }, undef);
        if let Some(&i) = self.const_ids.get(&key) {
            return Op::C(i);
        }
        let i = self.consts.len() as u32;
        self.consts.push(key);
        self.const_ids.insert(key, i);
        Op::C(i)
    }

    fn i32c(&mut self, v: u32) -> Op {
        self.konst(I32, v as u64)
    }

    fn emit(&mut self, l: Line) {
        self.blocks[self.cur].lines.push(l);
    }

    /// Emits `%vN = <rest>` and returns %vN; `pool` adds it to the usable values.
    fn def(&mut self, t: Ty, l: Line, pool: bool) -> Op {
        let v = Op::V(self.next_v);
        self.next_v += 1;
        self.value_tys.push(t);
        let mut line = Line::default().o(v).s(" = ");
        line.0.extend(l.0);
        self.emit(line);
        if pool {
            self.blocks[self.cur].defs.push((v, t));
            self.avail.push((v, t));
        }
        v
    }

    /// A scalar constant of type `t`.
    fn random_const(&mut self, t: Ty, u: &mut Src<'_>) -> Op {
        let v = match t {
            F32 => u.f32_value() as u64,
            F64 => u.f64_value(),
            _ => u.int_value(t.bits()),
        };
        self.konst(t, v)
    }

    /// A value of type `t` usable here: an available one, a constant, or (vectors) one
    /// made now.
    fn pick(&mut self, t: Ty, u: &mut Src<'_>) -> Op {
        let cands: Vec<Op> = self
            .avail
            .iter()
            .filter(|(_, x)| *x == t)
            .map(|(o, _)| *o)
            .collect();
        if u.chance(1, 64) {
            return self.konst_undef(t, 0, true);
        }
        if !t.is_vec() && (cands.is_empty() || u.chance(1, 4)) {
            return self.random_const(t, u);
        }
        if !cands.is_empty() {
            // Mostly a recent value, so that results feed further computations.
            if cands.len() > 3 && u.chance(1, 2) {
                return u.pick(&cands[cands.len() - 3..]);
            }
            return u.pick(&cands);
        }
        self.make_vector(t, u)
    }

    /// A second operand: sometimes the first again (equal operands are where compares and
    /// divisions have their edges).
    fn pick_other(&mut self, t: Ty, a: Op, u: &mut Src<'_>) -> Op {
        if u.chance(1, 5) {
            a
        } else {
            self.pick(t, u)
        }
    }

    /// Makes a vector of type `t` when none is available.
    fn make_vector(&mut self, t: Ty, u: &mut Src<'_>) -> Op {
        if t.is_mask() {
            let src = Ty::int_vec(t.lanes());
            let a = self.pick(src, u);
            return self.def(
                t,
                Line::default()
                    .s("trunc ")
                    .t(src, a)
                    .s(format!(" to {}", t.name())),
                true,
            );
        }
        let p = self.buf_addr(t.bits() / 8, u);
        self.def(
            t,
            Line::default()
                .s(format!("load {}* ", t.name()))
                .o(p)
                .s(format!(", align {}", t.bits() / 8)),
            true,
        )
    }

    /// An address in `buf` (or in a scratch alloca) aligned to `align` bytes, with room
    /// for 16 bytes.
    fn buf_addr(&mut self, align: u32, u: &mut Src<'_>) -> Op {
        let align = align.max(1);
        let fits: Vec<(Op, u32)> = self
            .scratch
            .iter()
            .filter(|s| s.2 >= align)
            .map(|s| (s.0, s.1))
            .collect();
        let (base, size) = if !fits.is_empty() && u.chance(1, 4) {
            u.pick(&fits)
        } else {
            (Op::G(G_BUF), BUF)
        };
        let span = size - 16; // a power of two times 16, or BUF - 16
        let m = if size == BUF {
            255
        } else {
            span.next_power_of_two() / 2 - 1
        } & !(align - 1);
        if u.chance(1, 5) || m == 0 {
            // A constant offset.
            let off = u.int(0, m) & !(align - 1);
            if off == 0 {
                return base;
            }
            let c = self.i32c(off);
            return self.def(
                I32,
                Line::default().s("add i32 ").o(base).s(", ").o(c),
                false,
            );
        }
        let x = self.pick(I32, u);
        let mc = self.i32c(m);
        let off = self.def(I32, Line::default().s("and i32 ").o(x).s(", ").o(mc), false);
        self.def(
            I32,
            Line::default().s("add i32 ").o(base).s(", ").o(off),
            false,
        )
    }

    fn generate(mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) -> String {
        let params: Vec<(Op, Ty)> = self
            .sig
            .params
            .iter()
            .enumerate()
            .map(|(i, t)| (Op::P(i as u32), *t))
            .collect();
        for b in 0..self.blocks.len() {
            self.cur = b;
            self.avail = params.clone();
            let mut d = b;
            let mut chain = Vec::new();
            while d != 0 && self.blocks[b].role != Role::Dead {
                d = self.idom[d];
                chain.push(d);
            }
            for &d in chain.iter().rev() {
                self.avail.extend(self.blocks[d].defs.iter().copied());
            }
            if self.blocks[b].role == Role::Dead && mg.cfg.simd {
                // Values for the vector phis of the blocks it branches to.
                for t in VECS {
                    self.make_vector(t, u);
                }
            }
            if b == 0 {
                // Scratch allocas, zeroed; and one vector of each type.
                for _ in 0..u.int(0, 2) {
                    let size = if u.chance(1, 2) { 32 } else { 64 };
                    let align = u.pick(&[1u32, 4, 8, 16]);
                    let sc = self.i32c(size);
                    let a = self.def(
                        I32,
                        Line::default()
                            .s("alloca i8, ")
                            .t(I32, sc)
                            .s(format!(", align {align}")),
                        false,
                    );
                    self.memset(mg, a, size, u);
                    self.scratch.push((a, size, align));
                }
                if self.setjmp {
                    self.call_setjmp(mg, u);
                }
                if mg.cfg.simd {
                    for t in VECS {
                        if u.chance(2, 3) {
                            self.make_vector(t, u);
                        }
                    }
                }
            }
            match self.blocks[b].role {
                Role::Header => self.header_block(mg, u),
                Role::Exit => self.exit_block(u),
                Role::Throw => self.throw_block(mg, u),
                Role::Entry | Role::Normal | Role::Body | Role::Dead => {
                    if self.blocks[b].role == Role::Normal {
                        self.phis_here(mg, u);
                    }
                    self.budget = 0;
                    let n = u.below(mg.cfg.max_insts + 1);
                    for _ in 0..n {
                        self.random_inst(mg, u);
                    }
                    self.terminator(mg, u);
                }
            }
        }
        self.fill_phis(u);
        self.layout = (0..self.blocks.len()).collect();
        if u.chance(1, 3) {
            for i in (2..self.layout.len()).rev() {
                let j = 1 + u.below(i);
                self.layout.swap(i, j);
            }
        }
        self.render()
    }

    fn phis_here(&mut self, mg: &ModGen<'_>, u: &mut Src<'_>) {
        let n = u.int(0, 3);
        for _ in 0..n {
            let mut tys: Vec<Ty> = vec![I1, I8, I16, I32, I32, I64];
            if mg.cfg.floats {
                tys.extend([F32, F64]);
            }
            if mg.cfg.simd {
                // Only types every predecessor has: those the entry defined.
                for (_, t) in &self.blocks[0].defs {
                    if VECS.contains(t) && !tys.contains(t) {
                        tys.push(*t);
                    }
                }
            }
            let t = u.pick(&tys);
            let k = self.phis.len();
            self.phis.push(PhiGen {
                block: self.cur,
                ty: t,
                incoming: Vec::new(),
            });
            let mut l = Line::default().s(format!("phi {} ", t.name()));
            l.0.push(Piece::Phi(k));
            self.def(t, l, true);
        }
    }

    fn fill_phis(&mut self, u: &mut Src<'_>) {
        for k in 0..self.phis.len() {
            let b = self.phis[k].block;
            let t = self.phis[k].ty;
            let preds = self.preds(b);
            let mut inc = Vec::new();
            for p in preds {
                let edges = self.blocks[p].edges.iter().filter(|s| **s == b).count();
                // Values available at the end of p: params, constants, defs of p's
                // dominators and of p itself.
                let mut cands: Vec<Op> = self
                    .sig
                    .params
                    .iter()
                    .enumerate()
                    .filter(|(_, x)| **x == t)
                    .map(|(i, _)| Op::P(i as u32))
                    .collect();
                let mut d = p;
                loop {
                    if self.blocks[d].role == Role::Dead && d != p {
                        break;
                    }
                    cands.extend(
                        self.blocks[d]
                            .defs
                            .iter()
                            .filter(|(_, x)| *x == t)
                            .map(|(o, _)| *o),
                    );
                    if d == 0 || self.blocks[d].role == Role::Dead {
                        break;
                    }
                    d = self.idom[d];
                }
                // On a back edge, often another phi of the same block: swaps and
                // rotations, where a sequential copy would lose a value.
                let siblings: Vec<Op> = self.blocks[b]
                    .defs
                    .iter()
                    .filter(|(o, x)| *x == t && cands.contains(o))
                    .map(|(o, _)| *o)
                    .collect();
                let v = if !siblings.is_empty() && u.chance(1, 2) {
                    u.pick(&siblings)
                } else if !t.is_vec() && (cands.is_empty() || u.chance(1, 3)) {
                    self.random_const(t, u)
                } else {
                    u.pick(&cands)
                };
                for _ in 0..edges {
                    inc.push((v, p));
                }
            }
            self.phis[k].incoming = inc;
        }
    }

    /// Fuel: `fuel -= 1`, and whether it was used up (`i1`).
    fn take_fuel(&mut self) -> Op {
        let one = self.i32c(1);
        let zero = self.i32c(0);
        let a = self.def(
            I32,
            Line::default().s(format!("load i32* @g{G_FUEL}, align 1")),
            false,
        );
        let b = self.def(
            I32,
            Line::default().s("sub i32 ").o(a).s(", ").o(one),
            false,
        );
        self.emit(
            Line::default()
                .s("store ")
                .t(I32, b)
                .s(format!(", i32* @g{G_FUEL}, align 1")),
        );
        self.def(
            I1,
            Line::default().s("icmp sle i32 ").o(b).s(", ").o(zero),
            false,
        )
    }

    fn header_block(&mut self, mg: &ModGen<'_>, u: &mut Src<'_>) {
        self.phis_here(mg, u);
        let z = self.take_fuel();
        let s = self.blocks[self.cur].succs.clone();
        self.emit(
            Line::default()
                .s("br ")
                .t(I1, z)
                .s(", ")
                .label(s[0])
                .s(", ")
                .label(s[1]),
        );
        self.blocks[self.cur].edges = s;
    }

    fn ret_line(&mut self, u: &mut Src<'_>) -> Line {
        match self.sig.ret {
            None => Line::default().s("ret void"),
            Some(t) => {
                let v = self.pick(t, u);
                Line::default().s("ret ").t(t, v)
            }
        }
    }

    fn exit_block(&mut self, u: &mut Src<'_>) {
        let l = self.ret_line(u);
        self.emit(l);
    }

    fn throw_block(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        // Whose jmp_buf: mostly one of a function that calls setjmp (this one or a
        // caller), sometimes any (a longjmp that finds no active setjmp traps).
        let slot = if !self.jb_slots.is_empty() && !u.chance(1, 8) {
            u.pick(&self.jb_slots) as u32
        } else {
            u.below(self.index + 1) as u32
        };
        let buf = self.jb_addr(slot);
        let val = self.pick(I32, u);
        let f = mg.intrinsic("llvm.nacl.longjmp");
        self.emit(
            Line::default()
                .s("call void ")
                .o(f)
                .s("(")
                .t(I32, buf)
                .s(", ")
                .t(I32, val)
                .s(")"),
        );
        self.emit(Line::default().s("unreachable"));
    }

    fn jb_addr(&mut self, slot: u32) -> Op {
        if slot == 0 {
            return Op::G(G_JB);
        }
        let c = self.i32c(slot * JB);
        self.def(
            I32,
            Line::default().s(format!("add i32 @g{G_JB}, ")).o(c),
            false,
        )
    }

    fn call_setjmp(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let buf = self.jb_addr(self.index as u32);
        let f = mg.intrinsic("llvm.nacl.setjmp");
        let r = self.def(
            I32,
            Line::default()
                .s("call i32 ")
                .o(f)
                .s("(")
                .t(I32, buf)
                .s(")"),
            true,
        );
        if u.chance(2, 3) {
            let z = self.i32c(0);
            self.def(
                I1,
                Line::default().s("icmp eq i32 ").o(r).s(", ").o(z),
                true,
            );
        }
    }

    fn memset(&mut self, mg: &mut ModGen<'_>, p: Op, size: u32, u: &mut Src<'_>) {
        let f = mg.intrinsic("llvm.memset.p0i8.i32");
        let v = self.random_const(I8, u);
        let n = self.i32c(size);
        let one = self.i32c(1);
        let fal = self.konst(I1, 0);
        self.emit(
            Line::default()
                .s("call void ")
                .o(f)
                .s("(")
                .t(I32, p)
                .s(", ")
                .t(I8, v)
                .s(", ")
                .t(I32, n)
                .s(", ")
                .t(I32, one)
                .s(", ")
                .t(I1, fal)
                .s(")"),
        );
    }

    /// Stores some of the block's values into `buf`, where the harness sees them
    /// (otherwise most computed values would never be observed).
    fn observe(&mut self, u: &mut Src<'_>) {
        let defs: Vec<(Op, Ty)> = self.blocks[self.cur].defs.to_vec();
        if defs.is_empty() {
            return;
        }
        for _ in 0..1 + u.below(3) {
            let (v, t) = if u.chance(1, 2) {
                *defs.last().unwrap()
            } else {
                u.pick(&defs)
            };
            // Booleans are stored widened (i1 has no memory form).
            let (v, t) = if t == I1 {
                let w = self.def(I8, Line::default().s("zext ").t(I1, v).s(" to i8"), false);
                (w, I8)
            } else if t.is_mask() {
                let wt = Ty::int_vec(t.lanes());
                let w = self.def(
                    wt,
                    Line::default()
                        .s("sext ")
                        .t(t, v)
                        .s(format!(" to {}", wt.name())),
                    false,
                );
                (w, wt)
            } else {
                (v, t)
            };
            let p = self.buf_addr(1, u);
            self.emit(
                Line::default()
                    .s("store ")
                    .t(t, v)
                    .s(format!(", {}* ", t.name()))
                    .o(p)
                    .s(format!(
                        ", align {}",
                        if t.is_vec() { t.bits() / 8 } else { 1 }
                    )),
            );
        }
    }

    fn terminator(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        if !self.blocks[self.cur].trap || u.chance(1, 2) {
            self.observe(u);
        }
        let s = self.blocks[self.cur].succs.clone();
        let mut edges = s.clone();
        let l = match s.len() {
            0 if self.blocks[self.cur].trap => {
                let f = mg.intrinsic("llvm.trap");
                self.emit(Line::default().s("call void ").o(f).s("()"));
                Line::default().s("unreachable")
            }
            0 => self.ret_line(u),
            _ if self
                .blocks
                .get(self.cur + 1)
                .is_some_and(|b| b.role == Role::Throw)
                && s.len() == 2
                && Some(s[0]) == self.exit =>
            {
                let z = self.take_fuel();
                Line::default()
                    .s("br ")
                    .t(I1, z)
                    .s(", ")
                    .label(s[0])
                    .s(", ")
                    .label(s[1])
            }
            1 if !u.chance(1, 6) => Line::default().s("br ").label(s[0]),
            1 | 2 if u.chance(3, 4) => {
                // Mostly a compare made just for the branch (as compilers emit them: it
                // stays on the wasm stack, and the structurizer may invert it).
                let c = if u.chance(2, 3) {
                    self.fresh_compare(u)
                } else {
                    self.pick(I1, u)
                };
                let (a, b) = (s[0], *s.last().unwrap());
                edges = vec![a, b];
                Line::default()
                    .s("br ")
                    .t(I1, c)
                    .s(", ")
                    .label(a)
                    .s(", ")
                    .label(b)
            }
            _ => {
                let (l, e) = self.switch(&s, u);
                edges = e;
                l
            }
        };
        let _ = mg;
        self.emit(l);
        self.blocks[self.cur].edges = edges;
    }

    /// A compare whose only use is the next instruction.
    fn fresh_compare(&mut self, u: &mut Src<'_>) -> Op {
        if u.chance(1, 4) {
            let t = u.pick(&[F32, F64]);
            let p = u.pick(&[
                "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "uno", "ueq", "ugt", "uge", "ult",
                "ule", "une",
            ]);
            let a = self.pick(t, u);
            let b = self.pick_other(t, a, u);
            return self.def(
                I1,
                Line::default()
                    .s(format!("fcmp {p} {} ", t.name()))
                    .o(a)
                    .s(", ")
                    .o(b),
                false,
            );
        }
        let t = u.pick(&[I8, I16, I32, I32, I64]);
        let p = u.pick(&[
            "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle",
        ]);
        let a = self.pick(t, u);
        let b = if u.chance(1, 4) {
            self.konst(t, 0)
        } else {
            self.pick_other(t, a, u)
        };
        self.def(
            I1,
            Line::default()
                .s(format!("icmp {p} {} ", t.name()))
                .o(a)
                .s(", ")
                .o(b),
            false,
        )
    }

    /// A switch to every block of `s` (`s[0]` the default); returns its edges.
    fn switch(&mut self, s: &[usize], u: &mut Src<'_>) -> (Line, Vec<usize>) {
        let t = u.pick(&[I8, I16, I32, I32, I64]);
        let c = self.pick(t, u);
        let mut l = Line::default()
            .s("switch ")
            .t(t, c)
            .s(" { default: br ")
            .label(s[0])
            .s(";");
        let mut edges = vec![s[0]];
        let mut used: Vec<u64> = Vec::new();
        let dense = u.chance(1, 2);
        let base = u.int_value(t.bits());
        let m = if t.bits() == 64 {
            u64::MAX
        } else {
            (1u64 << t.bits()) - 1
        };
        for (k, &target) in s.iter().enumerate() {
            let n = if k == 0 { u.below(2) } else { 1 + u.below(2) };
            for _ in 0..n {
                let mut v = if dense {
                    base.wrapping_add(used.len() as u64)
                } else {
                    u.int_value(t.bits())
                } & m;
                while used.contains(&v) {
                    v = v.wrapping_add(1) & m;
                }
                used.push(v);
                edges.push(target);
                let sv = pexe2wasm_sext(v, t.bits()) as i64;
                l = l.s(format!(" {} {sv}: br ", t.name())).label(target).s(";");
            }
        }
        (l.s(" }"), edges)
    }

    /// One random instruction (or a few, when operands must be made first).
    fn random_inst(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let cfg = mg.cfg;
        let mut kinds: Vec<u8> = vec![0, 0, 0, 1, 2, 3, 4, 5, 6];
        if cfg.floats {
            kinds.extend([7, 7, 8]);
        }
        if cfg.simd {
            kinds.extend([9, 9, 10, 11]);
        }
        if cfg.atomics {
            kinds.extend([12, 12]);
        }
        if cfg.calls && self.index + 1 < mg.sigs.len() {
            kinds.extend([13, 13]);
        }
        kinds.push(14);
        if cfg.sjlj && self.setjmp {
            kinds.push(15);
        }
        kinds.push(16);
        match u.pick(&kinds) {
            0 => self.int_binop(u),
            1 => self.int_cast(u),
            2 => self.icmp(u),
            3 => self.select(u),
            4 => self.load(u),
            5 => self.store(u),
            6 => self.bit_intrinsic(mg, u),
            7 => self.float_op(mg, u),
            8 => self.float_cast(u),
            9 => self.vector_op(mg, u),
            10 => self.vector_cast(u),
            11 => self.lanes(u),
            12 => self.atomic(mg, u),
            13 => self.call(mg, u),
            14 => self.mem_intrinsic(mg, u),
            15 => self.call_setjmp(mg, u),
            _ => self.dynamic_alloca(mg, u),
        }
    }

    fn int_binop(&mut self, u: &mut Src<'_>) {
        let t = u.pick(&INTS);
        let ops: &[&str] = if t == I1 {
            &["and", "or", "xor"]
        } else {
            &[
                "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and",
                "or", "xor",
            ]
        };
        let op = u.pick(ops);
        let a = self.pick(t, u);
        let mut b = self.pick_other(t, a, u);
        if matches!(op, "udiv" | "sdiv" | "urem" | "srem") && !u.chance(1, 16) {
            // Mostly a divisor that is not zero.
            let one = self.konst(t, 1);
            b = self.def(
                t,
                Line::default()
                    .s(format!("or {} ", t.name()))
                    .o(b)
                    .s(", ")
                    .o(one),
                false,
            );
        }
        if matches!(op, "shl" | "lshr" | "ashr") && !u.chance(1, 8) {
            let m = self.konst(t, t.bits() as u64 - 1);
            b = self.def(
                t,
                Line::default()
                    .s(format!("and {} ", t.name()))
                    .o(b)
                    .s(", ")
                    .o(m),
                false,
            );
        }
        self.def(
            t,
            Line::default()
                .s(format!("{op} {} ", t.name()))
                .o(a)
                .s(", ")
                .o(b),
            true,
        );
    }

    fn int_cast(&mut self, u: &mut Src<'_>) {
        let a = u.pick(&INTS);
        let b = u.pick(&INTS);
        if a == b {
            return;
        }
        let (op, from, to) = if a.bits() > b.bits() {
            ("trunc", a, b)
        } else {
            (u.pick(&["zext", "sext"]), a, b)
        };
        let v = self.pick(from, u);
        self.def(
            to,
            Line::default()
                .s(format!("{op} "))
                .t(from, v)
                .s(format!(" to {}", to.name())),
            true,
        );
    }

    fn icmp(&mut self, u: &mut Src<'_>) {
        let t = u.pick(&INTS);
        let p = u.pick(&[
            "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle",
        ]);
        let a = self.pick(t, u);
        let b = self.pick_other(t, a, u);
        self.def(
            I1,
            Line::default()
                .s(format!("icmp {p} {} ", t.name()))
                .o(a)
                .s(", ")
                .o(b),
            true,
        );
    }

    fn select(&mut self, u: &mut Src<'_>) {
        let mut tys: Vec<Ty> = INTS.to_vec();
        tys.extend([F32, F64]);
        let t = u.pick(&tys);
        let c = self.pick(I1, u);
        let a = self.pick(t, u);
        let b = self.pick_other(t, a, u);
        self.def(
            t,
            Line::default()
                .s("select ")
                .t(I1, c)
                .s(", ")
                .t(t, a)
                .s(", ")
                .t(t, b),
            true,
        );
    }

    fn access_ty(&self, u: &mut Src<'_>, vec: bool) -> (Ty, u32) {
        let mut tys = vec![I8, I16, I32, I64, F32, F64];
        if vec {
            tys.extend(VECS);
        }
        let t = u.pick(&tys);
        let align = if t.is_vec() {
            t.bits() / 8
        } else if matches!(t, F32 | F64) && u.chance(1, 2) {
            t.bytes()
        } else {
            1
        };
        (t, align)
    }

    fn load(&mut self, u: &mut Src<'_>) {
        let (t, align) = self.access_ty(u, self.simd);
        let p = self.buf_addr(if u.chance(1, 2) { t.bytes().min(16) } else { 1 }, u);
        self.def(
            t,
            Line::default()
                .s(format!("load {}* ", t.name()))
                .o(p)
                .s(format!(", align {align}")),
            true,
        );
    }

    fn store(&mut self, u: &mut Src<'_>) {
        let (t, align) = self.access_ty(u, self.simd);
        let v = self.pick(t, u);
        let p = self.buf_addr(if u.chance(1, 2) { t.bytes().min(16) } else { 1 }, u);
        self.emit(
            Line::default()
                .s("store ")
                .t(t, v)
                .s(format!(", {}* ", t.name()))
                .o(p)
                .s(format!(", align {align}")),
        );
    }

    fn call_intrinsic(
        &mut self,
        mg: &mut ModGen<'_>,
        name: &'static str,
        args: &[(Ty, Op)],
        pool: bool,
    ) -> Option<Op> {
        let f = mg.intrinsic(name);
        let (ret, _) = intrinsic_sig(name);
        let mut l = Line::default().s(format!("call {ret} ")).o(f).s("(");
        for (i, (t, a)) in args.iter().enumerate() {
            if i > 0 {
                l = l.s(", ");
            }
            l = l.t(*t, *a);
        }
        l = l.s(")");
        if ret == "void" {
            self.emit(l);
            return None;
        }
        let rt = match ret {
            "i1" => I1,
            "i8" => I8,
            "i16" => I16,
            "i32" => I32,
            "i64" => I64,
            "float" => F32,
            "double" => F64,
            _ => V4F32,
        };
        Some(self.def(rt, l, pool))
    }

    fn bit_intrinsic(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let name = u.pick(&[
            "llvm.bswap.i16",
            "llvm.bswap.i32",
            "llvm.bswap.i64",
            "llvm.ctlz.i32",
            "llvm.ctlz.i64",
            "llvm.cttz.i32",
            "llvm.cttz.i64",
            "llvm.ctpop.i32",
            "llvm.ctpop.i64",
        ]);
        let t = if name.ends_with("i16") {
            I16
        } else if name.ends_with("i32") {
            I32
        } else {
            I64
        };
        let x = self.pick(t, u);
        let mut args = vec![(t, x)];
        if name.contains("ctlz") || name.contains("cttz") {
            let z = self.konst(I1, u.int(0, 1) as u64);
            args.push((I1, z));
        }
        self.call_intrinsic(mg, name, &args, true);
    }

    fn float_op(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let t = u.pick(&[F32, F64]);
        match u.int(0, 3) {
            0 | 1 => {
                let op = u.pick(&["fadd", "fsub", "fmul", "fdiv", "frem"]);
                let a = self.pick(t, u);
                let b = self.pick_other(t, a, u);
                self.def(
                    t,
                    Line::default()
                        .s(format!("{op} {} ", t.name()))
                        .o(a)
                        .s(", ")
                        .o(b),
                    true,
                );
            }
            2 => {
                let p = u.pick(&[
                    "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "uno", "ueq", "ugt",
                    "uge", "ult", "ule", "une", "true",
                ]);
                let a = self.pick(t, u);
                let b = self.pick_other(t, a, u);
                self.def(
                    I1,
                    Line::default()
                        .s(format!("fcmp {p} {} ", t.name()))
                        .o(a)
                        .s(", ")
                        .o(b),
                    true,
                );
            }
            _ => {
                let name = match (t, u.chance(1, 2)) {
                    (F32, true) => "llvm.fabs.f32",
                    (F32, false) => "llvm.sqrt.f32",
                    (_, true) => "llvm.fabs.f64",
                    _ => "llvm.sqrt.f64",
                };
                let x = self.pick(t, u);
                self.call_intrinsic(mg, name, &[(t, x)], true);
            }
        }
    }

    fn float_cast(&mut self, u: &mut Src<'_>) {
        match u.int(0, 3) {
            0 => {
                let f = u.pick(&[F32, F64]);
                let i = u.pick(&INTS);
                let op = u.pick(&["fptosi", "fptoui"]);
                let v = self.pick(f, u);
                self.def(
                    i,
                    Line::default()
                        .s(format!("{op} "))
                        .t(f, v)
                        .s(format!(" to {}", i.name())),
                    true,
                );
            }
            1 => {
                let f = u.pick(&[F32, F64]);
                let i = u.pick(&INTS);
                let op = u.pick(&["sitofp", "uitofp"]);
                let v = self.pick(i, u);
                self.def(
                    f,
                    Line::default()
                        .s(format!("{op} "))
                        .t(i, v)
                        .s(format!(" to {}", f.name())),
                    true,
                );
            }
            2 => {
                let (a, b, op) = if u.chance(1, 2) {
                    (F32, F64, "fpext")
                } else {
                    (F64, F32, "fptrunc")
                };
                let v = self.pick(a, u);
                self.def(
                    b,
                    Line::default()
                        .s(format!("{op} "))
                        .t(a, v)
                        .s(format!(" to {}", b.name())),
                    true,
                );
            }
            _ => {
                let (a, b) = u.pick(&[(I32, F32), (F32, I32), (I64, F64), (F64, I64)]);
                let v = self.pick(a, u);
                self.def(
                    b,
                    Line::default()
                        .s("bitcast ")
                        .t(a, v)
                        .s(format!(" to {}", b.name())),
                    true,
                );
            }
        }
    }

    fn vector_op(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let t = u.pick(&[V16I8, V8I16, V4I32, V4F32, V4I1, V8I1, V16I1]);
        match u.int(0, 3) {
            0 | 1 => {
                let ops: &[&str] = if t.is_mask() {
                    &["and", "or", "xor"]
                } else if t.is_float() {
                    &["fadd", "fsub", "fmul", "fdiv", "frem"]
                } else {
                    &[
                        "add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr",
                        "and", "or", "xor",
                    ]
                };
                let op = u.pick(ops);
                let a = self.pick(t, u);
                let b = self.pick_other(t, a, u);
                if matches!(op, "udiv" | "sdiv" | "urem" | "srem") && u.chance(1, 2) {
                    // A zero lane traps (PNaCl has no vector constants to keep divisors
                    // nonzero with), so only some divisions are tried.
                    return;
                }
                self.def(
                    t,
                    Line::default()
                        .s(format!("{op} {} ", t.name()))
                        .o(a)
                        .s(", ")
                        .o(b),
                    true,
                );
            }
            2 => {
                if t.is_mask() {
                    return;
                }
                let a = self.pick(t, u);
                let b = self.pick_other(t, a, u);
                let line = if t.is_float() {
                    let p = u.pick(&[
                        "false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "uno", "ueq",
                        "ugt", "uge", "ult", "ule", "une", "true",
                    ]);
                    Line::default()
                        .s(format!("fcmp {p} {} ", t.name()))
                        .o(a)
                        .s(", ")
                        .o(b)
                } else {
                    let p = u.pick(&[
                        "eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle",
                    ]);
                    Line::default()
                        .s(format!("icmp {p} {} ", t.name()))
                        .o(a)
                        .s(", ")
                        .o(b)
                };
                self.def(t.mask(), line, true);
            }
            _ => {
                if t.is_mask() {
                    return;
                }
                if t == V4F32 && u.chance(1, 3) {
                    let x = self.pick(t, u);
                    self.call_intrinsic(mg, "llvm.fabs.v4f32", &[(t, x)], true);
                    return;
                }
                // select with a mask (PNaCl refuses a scalar condition for vectors)
                let m = t.mask();
                let c = (m, self.pick(m, u));
                let a = self.pick(t, u);
                let b = self.pick_other(t, a, u);
                self.def(
                    t,
                    Line::default()
                        .s("select ")
                        .t(c.0, c.1)
                        .s(", ")
                        .t(t, a)
                        .s(", ")
                        .t(t, b),
                    true,
                );
            }
        }
    }

    fn vector_cast(&mut self, u: &mut Src<'_>) {
        let (op, from, to): (&str, Ty, Ty) = match u.int(0, 6) {
            0 => {
                let m = u.pick(&MASKS);
                ("trunc", Ty::int_vec(m.lanes()), m)
            }
            1 => {
                let m = u.pick(&MASKS);
                (u.pick(&["zext", "sext"]), m, Ty::int_vec(m.lanes()))
            }
            2 => (u.pick(&["fptosi", "fptoui"]), V4F32, u.pick(&[V4I32, V4I1])),
            3 => (u.pick(&["sitofp", "uitofp"]), u.pick(&[V4I32, V4I1]), V4F32),
            4 | 5 => ("bitcast", u.pick(&VECS), u.pick(&VECS)),
            _ => u.pick(&[
                ("bitcast", I16, V16I1),
                ("bitcast", I8, V8I1),
                ("bitcast", V16I1, I16),
                ("bitcast", V8I1, I8),
            ]),
        };
        if from == to {
            return;
        }
        let v = self.pick(from, u);
        self.def(
            to,
            Line::default()
                .s(format!("{op} "))
                .t(from, v)
                .s(format!(" to {}", to.name())),
            true,
        );
    }

    fn lanes(&mut self, u: &mut Src<'_>) {
        let t = u.pick(&[V16I8, V8I16, V4I32, V4F32, V4I1, V8I1, V16I1]);
        let i = u.below(t.lanes() as usize) as u32;
        let ic = self.i32c(i);
        let v = self.pick(t, u);
        if u.chance(1, 2) {
            self.def(
                t.elem(),
                Line::default()
                    .s("extractelement ")
                    .t(t, v)
                    .s(", ")
                    .t(I32, ic),
                true,
            );
        } else {
            let x = self.pick(t.elem(), u);
            self.def(
                t,
                Line::default()
                    .s("insertelement ")
                    .t(t, v)
                    .s(", ")
                    .t(t.elem(), x)
                    .s(", ")
                    .t(I32, ic),
                true,
            );
        }
    }

    fn atomic(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let t = u.pick(&[I8, I16, I32, I64]);
        let sfx = t.name();
        let order = self.i32c(6);
        match u.int(0, 5) {
            0 => {
                let p = self.buf_addr(t.bytes(), u);
                let name = leak(format!("llvm.nacl.atomic.load.{sfx}"));
                self.call_intrinsic(mg, name, &[(I32, p), (I32, order)], true);
            }
            1 => {
                let v = self.pick(t, u);
                let p = self.buf_addr(t.bytes(), u);
                let name = leak(format!("llvm.nacl.atomic.store.{sfx}"));
                self.call_intrinsic(mg, name, &[(t, v), (I32, p), (I32, order)], true);
            }
            2 | 3 => {
                let op = self.i32c(u.int(1, 6));
                let p = self.buf_addr(t.bytes(), u);
                let v = self.pick(t, u);
                let name = leak(format!("llvm.nacl.atomic.rmw.{sfx}"));
                self.call_intrinsic(mg, name, &[(I32, op), (I32, p), (t, v), (I32, order)], true);
            }
            4 => {
                let p = self.buf_addr(t.bytes(), u);
                let e = self.pick(t, u);
                let d = self.pick(t, u);
                let name = leak(format!("llvm.nacl.atomic.cmpxchg.{sfx}"));
                self.call_intrinsic(
                    mg,
                    name,
                    &[(I32, p), (t, e), (t, d), (I32, order), (I32, order)],
                    true,
                );
            }
            _ => match u.int(0, 2) {
                0 => {
                    self.call_intrinsic(mg, "llvm.nacl.atomic.fence", &[(I32, order)], true);
                }
                1 => {
                    self.call_intrinsic(mg, "llvm.nacl.atomic.fence.all", &[], true);
                }
                _ => {
                    let n = self.i32c(u.pick(&[1, 2, 4, 8, 3, 16]));
                    let p = self.buf_addr(8, u);
                    self.call_intrinsic(
                        mg,
                        "llvm.nacl.atomic.is.lock.free",
                        &[(I32, n), (I32, p)],
                        true,
                    );
                }
            },
        }
    }

    /// A dynamic alloca, zeroed, written and read back; inside stacksave/stackrestore or
    /// not (then the stack grows each time it runs), the latter at most
    /// [`MAX_GROWING_ALLOCAS`] times per function.
    fn dynamic_alloca(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        // Draw the choice even when the bound decides (inputs keep their meaning).
        let save = u.chance(1, 2) || self.growing_allocas >= MAX_GROWING_ALLOCAS;
        if !save {
            self.growing_allocas += 1;
        }
        let sp = if save {
            self.call_intrinsic(mg, "llvm.stacksave", &[], false)
        } else {
            None
        };
        let x = self.pick(I32, u);
        let m = self.i32c(31);
        let sixteen = self.i32c(16);
        let a = self.def(I32, Line::default().s("and i32 ").o(x).s(", ").o(m), false);
        let n = self.def(
            I32,
            Line::default().s("add i32 ").o(a).s(", ").o(sixteen),
            false,
        );
        let align = u.pick(&[1u32, 4, 8, 16]);
        let p = self.def(
            I32,
            Line::default()
                .s("alloca i8, ")
                .t(I32, n)
                .s(format!(", align {align}")),
            false,
        );
        let f = mg.intrinsic("llvm.memset.p0i8.i32");
        let zero = self.konst(I8, 0);
        let one = self.i32c(1);
        let fal = self.konst(I1, 0);
        self.emit(
            Line::default()
                .s("call void ")
                .o(f)
                .s("(")
                .t(I32, p)
                .s(", ")
                .t(I8, zero)
                .s(", ")
                .t(I32, n)
                .s(", ")
                .t(I32, one)
                .s(", ")
                .t(I1, fal)
                .s(")"),
        );
        let t = u.pick(&[I8, I16, I32, I64, F64]);
        let v = self.pick(t, u);
        self.emit(
            Line::default()
                .s("store ")
                .t(t, v)
                .s(format!(", {}* ", t.name()))
                .o(p)
                .s(", align 1"),
        );
        self.def(
            t,
            Line::default()
                .s(format!("load {}* ", t.name()))
                .o(p)
                .s(", align 1"),
            true,
        );
        if let Some(sp) = sp {
            self.call_intrinsic(mg, "llvm.stackrestore", &[(I32, sp)], false);
        }
    }

    fn mem_intrinsic(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let n = u.int(0, 16);
        let nc = self.i32c(n);
        let d = self.buf_addr(1, u);
        let one = self.i32c(1);
        let fal = self.konst(I1, 0);
        if u.chance(1, 3) {
            let v = self.pick(I8, u);
            self.call_intrinsic(
                mg,
                "llvm.memset.p0i8.i32",
                &[(I32, d), (I8, v), (I32, nc), (I32, one), (I1, fal)],
                true,
            );
        } else {
            let s = self.buf_addr(1, u);
            let name = if u.chance(1, 2) {
                "llvm.memcpy.p0i8.p0i8.i32"
            } else {
                "llvm.memmove.p0i8.p0i8.i32"
            };
            self.call_intrinsic(
                mg,
                name,
                &[(I32, d), (I32, s), (I32, nc), (I32, one), (I1, fal)],
                true,
            );
        }
    }

    fn call(&mut self, mg: &mut ModGen<'_>, u: &mut Src<'_>) {
        let j = self.index + 1 + u.below(mg.sigs.len() - self.index - 1);
        let mut sig = mg.sigs[j].clone();
        // Sometimes a call of another type that C tolerates (decision 0016): fewer or
        // more arguments, a result dropped or asked of a void function. Such a call goes
        // through a pointer, and the callee gets its arguments and result adapted.
        let other_type = u.chance(1, 6);
        if other_type {
            if !sig.params.is_empty() && u.chance(1, 2) {
                let keep = u.below(sig.params.len());
                sig.params.truncate(keep);
            } else {
                for _ in 0..1 + u.below(2) {
                    sig.params.push(u.pick(&[I32, I64, F32, F64, V4I32]));
                }
            }
            if u.chance(1, 2) {
                sig.ret = match sig.ret {
                    Some(_) => None,
                    None => Some(u.pick(&[I32, I64, F64])),
                };
            }
            if !mg
                .call_types
                .iter()
                .any(|t| t.params == sig.params && t.ret == sig.ret)
            {
                mg.call_types.push(sig.clone());
            }
        }
        let mut args = Vec::new();
        for t in &sig.params {
            args.push((*t, self.pick(*t, u)));
        }
        let callee = if other_type {
            if u.chance(1, 2) {
                let off = self.i32c(4 * j as u32);
                let a = self.def(
                    I32,
                    Line::default().s(format!("add i32 @g{G_TAB}, ")).o(off),
                    false,
                );
                self.def(
                    I32,
                    Line::default().s("load i32* ").o(a).s(", align 1"),
                    false,
                )
            } else {
                Op::F(j as u32)
            }
        } else if u.chance(1, 4) {
            // A pointer chosen between two functions of this type, as values.
            let same: Vec<usize> = (self.index + 1..mg.sigs.len())
                .filter(|&k| mg.sigs[k].params == sig.params && mg.sigs[k].ret == sig.ret)
                .collect();
            let k = u.pick(&same);
            let c = self.pick(I1, u);
            self.def(
                I32,
                Line::default()
                    .s("select ")
                    .t(I1, c)
                    .s(", ")
                    .t(I32, Op::F(j as u32))
                    .s(", ")
                    .t(I32, Op::F(k as u32)),
                false,
            )
        } else if u.chance(1, 3) {
            let off = self.i32c(4 * j as u32);
            let a = self.def(
                I32,
                Line::default().s(format!("add i32 @g{G_TAB}, ")).o(off),
                false,
            );
            self.def(
                I32,
                Line::default().s("load i32* ").o(a).s(", align 1"),
                false,
            )
        } else {
            Op::F(j as u32)
        };
        // A call_indirect record whose callee is the function's address (what a call
        // through a cast function pointer becomes): `call indirect`.
        let indirect_known = callee == Op::F(j as u32) && (other_type || u.chance(1, 4));
        let mut l = Line::default()
            .s(format!(
                "call {}{} ",
                if indirect_known { "indirect " } else { "" },
                sig.ret.map_or("void", |t| t.name())
            ))
            .o(callee)
            .s("(");
        for (i, (t, a)) in args.iter().enumerate() {
            if i > 0 {
                l = l.s(", ");
            }
            l = l.t(*t, *a);
        }
        l = l.s(")");
        match sig.ret {
            Some(t) => {
                self.def(t, l, true);
            }
            None => self.emit(l),
        }
    }

    fn render(&self) -> String {
        // Constants grouped by type, numbered in that order.
        let mut order: Vec<usize> = (0..self.consts.len()).collect();
        order.sort_by_key(|&i| (self.consts[i].0, i));
        let mut num = vec![0u32; self.consts.len()];
        for (k, &i) in order.iter().enumerate() {
            num[i] = k as u32;
        }
        // Blocks' positions, and values numbered in the order their records come.
        let mut pos = vec![0usize; self.blocks.len()];
        for (k, &b) in self.layout.iter().enumerate() {
            pos[b] = k;
        }
        let mut vnum = vec![0u32; self.value_tys.len()];
        let mut defined = vec![false; self.value_tys.len()];
        let mut forward = Vec::new();
        let mut next = 0;
        for &b in &self.layout {
            for l in &self.blocks[b].lines {
                let is_phi = l.0.iter().any(|p| matches!(p, Piece::Phi(_)));
                if !is_phi {
                    for p in l.0.iter().skip(1) {
                        if let Piece::O(Op::V(x)) = p {
                            if !defined[*x as usize] && !forward.contains(x) {
                                forward.push(*x);
                            }
                        }
                    }
                }
                if let (Some(Piece::O(Op::V(x))), Some(Piece::S(eq))) = (l.0.first(), l.0.get(1)) {
                    if eq == " = " {
                        vnum[*x as usize] = next;
                        defined[*x as usize] = true;
                        next += 1;
                    }
                }
            }
        }
        let op = |o: &Op| -> String {
            match *o {
                Op::P(i) => format!("%p{i}"),
                Op::C(i) => format!("%c{}", num[i as usize]),
                Op::V(i) => format!("%v{}", vnum[i as usize]),
                Op::G(i) => format!("@g{i}"),
                Op::F(i) => format!("@f{i}"),
            }
        };
        let mut s = String::new();
        let _ = writeln!(
            s,
            "  function {} @f{}({}) {{",
            self.sig.ret.map_or("void", |t| t.name()),
            self.index,
            self.sig
                .params
                .iter()
                .enumerate()
                .map(|(i, t)| format!("{} %p{i}", t.name()))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(s, "    blocks {};", self.blocks.len());
        if !self.consts.is_empty() {
            s += "    constants {\n";
            let mut last = None;
            for &i in &order {
                let (t, v, undef) = self.consts[i];
                if last != Some(t) {
                    let _ = write!(s, "\n      {}:", t.name());
                    last = Some(t);
                }
                let text = match t {
                    F32 => pexe2wasm::text::format::float_text(v as u32),
                    F64 => pexe2wasm::text::format::double_text(v),
                    _ => (pexe2wasm_sext(v, t.bits()) as i64).to_string(),
                };
                let text = if undef {
                    "undef".to_string()
                } else if t == I1 {
                    (v & 1).to_string()
                } else {
                    text
                };
                let _ = write!(s, " %c{} = {} {text};", num[i], t.name());
            }
            s += "\n    }\n";
        }
        for x in forward {
            let _ = writeln!(
                s,
                "    declare {} %v{};",
                self.value_tys[x as usize].name(),
                vnum[x as usize]
            );
        }
        for (k, &b) in self.layout.iter().enumerate() {
            let blk = &self.blocks[b];
            if k > 0 {
                let _ = writeln!(s, "  %b{k}:");
            }
            for l in &blk.lines {
                let start = s.len();
                s += "    ";
                for p in &l.0 {
                    match p {
                        Piece::S(t) => s += t,
                        Piece::O(o) => s += &op(o),
                        Piece::B(b) => {
                            let _ = write!(s, "%b{}", pos[*b]);
                        }
                        Piece::Phi(k) => {
                            let inc: Vec<String> = self.phis[*k]
                                .incoming
                                .iter()
                                .map(|(v, pb)| format!("[{}, %b{}]", op(v), pos[*pb]))
                                .collect();
                            s += &inc.join(", ");
                        }
                    }
                }
                // A switch ends with its `}`, every other statement with `;`.
                if !s[start..].ends_with('}') {
                    s += ";";
                }
                s += "\n";
            }
        }
        s += "  }\n";
        s
    }
}

fn pexe2wasm_sext(v: u64, bits: u32) -> u64 {
    pexe2wasm::interp::value::sext(v, bits)
}

/// Intrinsic names are a closed set; interning them as `&'static str` keeps `ModGen`
/// simple.
fn leak(s: String) -> &'static str {
    const NAMES: [&str; 16] = [
        "llvm.nacl.atomic.load.i8",
        "llvm.nacl.atomic.load.i16",
        "llvm.nacl.atomic.load.i32",
        "llvm.nacl.atomic.load.i64",
        "llvm.nacl.atomic.store.i8",
        "llvm.nacl.atomic.store.i16",
        "llvm.nacl.atomic.store.i32",
        "llvm.nacl.atomic.store.i64",
        "llvm.nacl.atomic.rmw.i8",
        "llvm.nacl.atomic.rmw.i16",
        "llvm.nacl.atomic.rmw.i32",
        "llvm.nacl.atomic.rmw.i64",
        "llvm.nacl.atomic.cmpxchg.i8",
        "llvm.nacl.atomic.cmpxchg.i16",
        "llvm.nacl.atomic.cmpxchg.i32",
        "llvm.nacl.atomic.cmpxchg.i64",
    ];
    NAMES
        .iter()
        .find(|n| **n == s)
        .copied()
        .expect("atomic intrinsic name")
}

/// Immediate dominators (block 0 is the entry; every block is reachable).
fn dominators(blocks: &[Block]) -> Vec<usize> {
    let n = blocks.len();
    let mut preds = vec![Vec::new(); n];
    for (i, b) in blocks.iter().enumerate() {
        for &s in &b.succs {
            if !preds[s].contains(&i) {
                preds[s].push(i);
            }
        }
    }
    // Sets as bit vectors (n is small).
    let words = n.div_ceil(64);
    let full = vec![u64::MAX; words];
    let mut dom: Vec<Vec<u64>> = vec![full; n];
    dom[0] = vec![0; words];
    dom[0][0] = 1;
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..n {
            let mut s = vec![u64::MAX; words];
            for &p in &preds[b] {
                for w in 0..words {
                    s[w] &= dom[p][w];
                }
            }
            s[b / 64] |= 1 << (b % 64);
            if s != dom[b] {
                dom[b] = s;
                changed = true;
            }
        }
    }
    // The immediate dominator: the strict dominator with the most dominators.
    let count = |d: &Vec<u64>| d.iter().map(|w| w.count_ones()).sum::<u32>();
    (0..n)
        .map(|b| {
            if b == 0 {
                return 0;
            }
            let mut best = 0;
            let mut best_c = 0;
            for d in 0..n {
                if d != b && dom[b][d / 64] >> (d % 64) & 1 == 1 {
                    let c = count(&dom[d]);
                    if c > best_c {
                        best = d;
                        best_c = c;
                    }
                }
            }
            best
        })
        .collect()
}
