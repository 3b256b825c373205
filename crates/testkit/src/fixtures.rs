//! The semantics fixtures (`fixtures/semantics/*.pnaclasm` and `.pexe`) described in Rust.
//!
//! Each fixture is a complete program without a C library. `_start` finds
//! `__nacl_irt_query` through the auxv (as `fixtures/hello.pnaclasm` does), runs every
//! kernel of the fixture over its input records, writes the whole output buffer to stdout
//! with one IRT `fdio.write` loop and calls IRT `basic.exit(0)`.
//!
//! A kernel is a function `void k(i32 in, i32 out)` that reads one input record at `in` and
//! writes one output record at `out`; a driver function calls it (indirectly, through its
//! address) once per case. Inputs live in one constant global, outputs in one zero-filled
//! global that `_start` writes out. Because each case's input bytes and expected output
//! are computed here from the same Rust description, `tests/fixtures_run.rs` can compare
//! stdout with the expectation and name the case that differs.
//!
//! The `.pnaclasm` texts are generated from this description and committed together with
//! the `.pexe` files our assembler makes from them; `tests/fixtures_fresh.rs` checks that
//! both are up to date (`PEXE2WASM_UPDATE_FIXTURES=1` rewrites them).
#![allow(dead_code)]

/// The edge values of float type `$t` the fixtures test with: zeros of both signs, finite
/// values, a denormal, `$extra` (a type's own extreme), infinities and NaN.
macro_rules! edge_floats {
    ($t:ident, $extra:expr) => {
        [
            0.0,
            -0.0,
            1.0,
            -1.5,
            3.25,
            0.1,
            7.0,
            1e30,
            -3e38,
            1e-40,
            $extra,
            $t::INFINITY,
            $t::NEG_INFINITY,
            $t::NAN,
        ]
    };
}

mod atomics;
mod bits;
mod casts;
pub mod control;
pub mod float;
pub mod int;
mod memory;
mod select_switch;
mod setjmp;
mod simd;
pub mod simd_bench;
mod simd_lanes;
mod threads;

use std::collections::HashMap;
use std::fmt::Write as _;

/// One expected field of an output record.
#[derive(Clone, Debug, PartialEq)]
pub enum Want {
    /// These bytes exactly.
    Bytes(Vec<u8>),
    /// A float: these bits, except that a NaN matches any NaN (payloads are not portable).
    F32(f32),
    /// A double, as `F32`.
    F64(f64),
}

impl Want {
    /// Bytes of output this expectation covers (never empty for a real case).
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> usize {
        match self {
            Want::Bytes(b) => b.len(),
            Want::F32(_) => 4,
            Want::F64(_) => 8,
        }
    }
    pub fn matches(&self, got: &[u8]) -> bool {
        match self {
            Want::Bytes(b) => b == got,
            Want::F32(x) => {
                let g = f32::from_le_bytes(got.try_into().unwrap());
                g.to_bits() == x.to_bits() || (g.is_nan() && x.is_nan())
            }
            Want::F64(x) => {
                let g = f64::from_le_bytes(got.try_into().unwrap());
                g.to_bits() == x.to_bits() || (g.is_nan() && x.is_nan())
            }
        }
    }
    pub fn show(&self) -> String {
        match self {
            Want::Bytes(b) => hex(b),
            Want::F32(x) => format!("{x:?} ({:#010x})", x.to_bits()),
            Want::F64(x) => format!("{x:?} ({:#018x})", x.to_bits()),
        }
    }
    pub fn show_got(&self, got: &[u8]) -> String {
        match self {
            Want::Bytes(_) => hex(got),
            Want::F32(_) => {
                let g = f32::from_le_bytes(got.try_into().unwrap());
                format!("{g:?} ({:#010x})", g.to_bits())
            }
            Want::F64(_) => {
                let g = f64::from_le_bytes(got.try_into().unwrap());
                format!("{g:?} ({:#018x})", g.to_bits())
            }
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

// Constructors for expected fields (little-endian, as the program stores them).
pub fn u8w(x: u8) -> Want {
    Want::Bytes(vec![x])
}
pub fn u16w(x: u16) -> Want {
    Want::Bytes(x.to_le_bytes().to_vec())
}
pub fn u32w(x: u32) -> Want {
    Want::Bytes(x.to_le_bytes().to_vec())
}
pub fn u64w(x: u64) -> Want {
    Want::Bytes(x.to_le_bytes().to_vec())
}
pub fn pad(n: usize) -> Want {
    Want::Bytes(vec![0; n])
}

/// One run of a kernel: its input record, what it must write, and a name for messages.
#[derive(Clone, Debug)]
pub struct Case {
    pub label: String,
    pub input: Vec<u8>,
    pub want: Vec<Want>,
}

/// A function `void (i32 in, i32 out)` run once per case.
pub struct Kernel {
    pub name: String,
    /// The body: everything between the function's braces.
    pub body: String,
    pub in_size: usize,
    pub out_size: usize,
    pub cases: Vec<Case>,
}

impl Kernel {
    /// A kernel whose records sizes are taken from the first case (all must agree).
    pub fn new(name: impl Into<String>, body: String, cases: Vec<Case>) -> Kernel {
        let name = name.into();
        assert!(!cases.is_empty(), "kernel {name} has no cases");
        let in_size = cases[0].input.len();
        let out_size = cases[0].want.iter().map(Want::len).sum();
        for c in &cases {
            assert_eq!(c.input.len(), in_size, "{name}: {}: input size", c.label);
            let o: usize = c.want.iter().map(Want::len).sum();
            assert_eq!(o, out_size, "{name}: {}: output size", c.label);
        }
        Kernel {
            name,
            body,
            in_size,
            out_size,
            cases,
        }
    }
}

/// A function that is not a kernel (a callee of kernels).
struct Helper {
    name: String,
    ret: String,
    params: Vec<String>,
    body: String,
}

/// A semantics fixture: `fixtures/semantics/<name>.pnaclasm`.
pub struct Fixture {
    pub name: &'static str,
    pub about: &'static str,
    helpers: Vec<Helper>,
    /// (name, definition after `@gN, `), e.g. ("tab", "align 4, initializers 2 { ... }").
    globals: Vec<(String, bool, String)>,
    pub kernels: Vec<Kernel>,
}

impl Fixture {
    pub fn new(name: &'static str, about: &'static str) -> Fixture {
        Fixture {
            name,
            about,
            helpers: Vec::new(),
            globals: Vec::new(),
            kernels: Vec::new(),
        }
    }
    /// Adds a helper function; its body may use `@[name]` references like kernels.
    pub fn helper(&mut self, name: &str, ret: &str, params: &[&str], body: String) {
        self.helpers.push(Helper {
            name: name.into(),
            ret: ret.into(),
            params: params.iter().map(|s| s.to_string()).collect(),
            body,
        });
    }
    /// Adds a global: `is_const`, then its definition after `@gN, ` (alignment and
    /// initializers, which may use `@[name]`).
    pub fn global(&mut self, name: &str, is_const: bool, def: String) {
        self.globals.push((name.into(), is_const, def));
    }
    pub fn kernel(&mut self, k: Kernel) {
        self.kernels.push(k);
    }
    pub fn cases(&self) -> usize {
        self.kernels.iter().map(|k| k.cases.len()).sum()
    }
}

/// Every semantics fixture, in file-name order.
pub fn all() -> Vec<Fixture> {
    let mut v = vec![
        atomics::fixture(),
        bits::fixture(),
        casts::int_fixture(),
        casts::float_fixture(),
        control::fixture(),
        float::fcmp_fixture(),
        float::arith_fixture(),
        int::binops_fixture(),
        int::icmp_fixture(),
        memory::fixture(),
        select_switch::fixture(),
        setjmp::fixture(),
        setjmp::dangling_fixture(),
        threads::atomics_fixture(),
        threads::futex_fixture(),
    ];
    v.extend(simd::fixtures());
    v.extend(simd_lanes::fixtures());
    v.sort_by_key(|f| f.name);
    v
}

// ---------------------------------------------------------------------------------------
// Integer helpers shared by the descriptions.

pub fn mask(w: u32) -> u64 {
    if w >= 64 {
        u64::MAX
    } else {
        (1u64 << w) - 1
    }
}

/// Sign-extends the low `w` bits of `v`.
pub fn sext(v: u64, w: u32) -> i64 {
    let s = 64 - w;
    ((v << s) as i64) >> s
}

/// Bits above `w` that a narrow value carries in its 32-bit container in the input
/// records: the kernels truncate them away, so a converter that forgets to normalize
/// shows it.
pub fn garbage(i: usize, w: u32) -> u32 {
    if w >= 32 {
        return 0;
    }
    0xdead_beefu32.rotate_left(i as u32 * 7 + 3) << w
}

/// The 32-bit container of a `w`-bit value with garbage above it.
pub fn raw32(v: u64, w: u32, i: usize) -> u32 {
    (v & mask(w)) as u32 | garbage(i, w)
}

pub const INT_TYPES: [(&str, u32); 4] = [("i8", 8), ("i16", 16), ("i32", 32), ("i64", 64)];

/// The byte size of an integer width's container in input records (4 for i1..i32).
pub fn container(w: u32) -> usize {
    if w == 64 {
        8
    } else {
        4
    }
}

// ---------------------------------------------------------------------------------------
// A builder for function bodies: numbers values, collects constants by type, and lets a
// phi name a value defined later.

pub struct Fb {
    consts: Vec<(String, String)>,
    lines: Vec<String>,
    nv: usize,
    nb: usize,
    fwd: Vec<Option<String>>,
}

impl Default for Fb {
    fn default() -> Self {
        Self::new()
    }
}

impl Fb {
    pub fn new() -> Fb {
        Fb {
            consts: Vec::new(),
            lines: Vec::new(),
            nv: 0,
            nb: 1,
            fwd: Vec::new(),
        }
    }
    /// A constant of type `ty` (an integer type) with value `lit`.
    pub fn c(&mut self, ty: &str, lit: impl std::fmt::Display) -> String {
        let key = (ty.to_string(), lit.to_string());
        let k = match self.consts.iter().position(|c| *c == key) {
            Some(k) => k,
            None => {
                self.consts.push(key);
                self.consts.len() - 1
            }
        };
        format!("%C{k}#")
    }
    pub fn i32c(&mut self, x: i64) -> String {
        self.c("i32", x)
    }
    /// Emits `%vN = rhs;` and returns `%vN`.
    pub fn v(&mut self, rhs: impl AsRef<str>) -> String {
        let n = self.nv;
        self.nv += 1;
        self.lines.push(format!("  %v{n} = {};", rhs.as_ref()));
        format!("%v{n}")
    }
    /// Emits a statement without a result.
    pub fn s(&mut self, stmt: impl AsRef<str>) {
        self.lines.push(format!("  {};", stmt.as_ref()));
    }
    /// A line as it is (a `switch` with its cases).
    pub fn raw(&mut self, line: impl AsRef<str>) {
        self.lines.push(format!("  {}", line.as_ref()));
    }
    /// A comment line.
    pub fn note(&mut self, text: impl AsRef<str>) {
        self.lines.push(format!("  // {}", text.as_ref()));
    }
    /// A new basic block id (emit its label later with `label`).
    pub fn block(&mut self) -> usize {
        self.nb += 1;
        self.nb - 1
    }
    pub fn label(&mut self, b: usize) {
        self.lines.push(format!("%b{b}:"));
    }
    /// A placeholder for a value defined later; `bind` it once it is.
    pub fn fwd(&mut self) -> String {
        self.fwd.push(None);
        format!("%F{}#", self.fwd.len() - 1)
    }
    pub fn bind(&mut self, placeholder: &str, value: &str) {
        let k: usize = placeholder[2..placeholder.len() - 1].parse().unwrap();
        self.fwd[k] = Some(value.to_string());
    }
    /// A value carried round a loop: `phi ty [init, %b{from}], [next, %b{back}]`, with
    /// `next` a placeholder for its value on the back edge. Returns (value, next).
    pub fn carried(&mut self, ty: &str, init: &str, from: usize, back: usize) -> (String, String) {
        let next = self.fwd();
        let v = self.v(format!("phi {ty} [{init}, %b{from}], [{next}, %b{back}]"));
        (v, next)
    }
    /// The back edge of a loop: binds `next` to `value`, then branches to `head` while
    /// `icmp pred i32 value, bound` holds, else to `exit`.
    pub fn repeat_while(
        &mut self,
        (next, value): (&str, &str),
        pred: &str,
        bound: &str,
        (head, exit): (usize, usize),
    ) {
        self.bind(next, value);
        let more = self.v(format!("icmp {pred} i32 {value}, {bound}"));
        self.s(format!("br i1 {more}, label %b{head}, label %b{exit}"));
    }
    /// `base + off` as an i32 address.
    pub fn at(&mut self, base: &str, off: usize) -> String {
        if off == 0 {
            base.to_string()
        } else {
            let c = self.i32c(off as i64);
            self.v(format!("add i32 {base}, {c}"))
        }
    }
    /// Loads a `ty` from `base + off` (alignment 1).
    pub fn load(&mut self, ty: &str, base: &str, off: usize) -> String {
        let p = self.at(base, off);
        self.v(format!("load {ty}* {p}, align 1"))
    }
    /// Stores `val` of type `ty` at `base + off` (alignment 1).
    pub fn store(&mut self, ty: &str, val: &str, base: &str, off: usize) {
        let p = self.at(base, off);
        self.s(format!("store {ty} {val}, {ty}* {p}, align 1"));
    }
    /// Loads a `w`-bit integer from its container at `base + off` (i32, truncated, for
    /// narrow widths; so it carries the container's garbage).
    pub fn load_int(&mut self, w: u32, base: &str, off: usize) -> String {
        match w {
            64 => self.load("i64", base, off),
            32 => self.load("i32", base, off),
            _ => {
                let x = self.load("i32", base, off);
                self.v(format!("trunc i32 {x} to i{w}"))
            }
        }
    }
    /// Stores a `w`-bit integer result: narrow ones zero- and sign-extended to i32 (8
    /// bytes: shows whether the upper bits were normalized), i32 as 4 bytes, i64 as 8.
    pub fn store_int_result(&mut self, w: u32, val: &str, base: &str, off: usize) {
        match w {
            64 => self.store("i64", val, base, off),
            32 => self.store("i32", val, base, off),
            _ => {
                let z = self.v(format!("zext i{w} {val} to i32"));
                self.store("i32", &z, base, off);
                let s = self.v(format!("sext i{w} {val} to i32"));
                self.store("i32", &s, base, off + 4);
            }
        }
    }
    /// The body text: `blocks N;`, the constants block, the instructions.
    pub fn finish(self) -> String {
        // Constants grouped by type, in order of first use.
        let mut tys: Vec<&str> = Vec::new();
        for (t, _) in &self.consts {
            if !tys.contains(&t.as_str()) {
                tys.push(t);
            }
        }
        let mut order = vec![0usize; self.consts.len()];
        let mut text = format!("  blocks {};\n", self.nb);
        let mut n = 0;
        if !self.consts.is_empty() {
            text += "  constants {\n";
            for t in &tys {
                let _ = write!(text, "    {t}:");
                for (k, (ct, lit)) in self.consts.iter().enumerate() {
                    if ct == t {
                        order[k] = n;
                        let _ = write!(text, " %c{n} = {t} {lit};");
                        n += 1;
                    }
                }
                text += "\n";
            }
            text += "  }\n";
        }
        let mut body = String::new();
        for l in &self.lines {
            body += l;
            body += "\n";
        }
        // Replace the placeholders %C<k># and %F<k>#.
        let mut out = String::with_capacity(body.len());
        let mut rest = body.as_str();
        while let Some(i) = rest.find('%') {
            out += &rest[..i];
            let tail = &rest[i..];
            let kind = tail.as_bytes().get(1).copied();
            if matches!(kind, Some(b'C') | Some(b'F')) {
                let end = tail.find('#').expect("placeholder end");
                let k: usize = tail[2..end].parse().unwrap();
                if kind == Some(b'C') {
                    let _ = write!(out, "%c{}", order[k]);
                } else {
                    out += self.fwd[k].as_deref().expect("forward value never bound");
                }
                rest = &tail[end + 1..];
            } else {
                out.push('%');
                rest = &tail[1..];
            }
        }
        out += rest;
        text + &out
    }
}

// ---------------------------------------------------------------------------------------
// Program text.

/// The signature of an intrinsic the kernels may call: (return type, parameter types).
fn intrinsic_sig(name: &str) -> Option<(String, Vec<String>)> {
    let s = |x: &str| x.to_string();
    let sig = |r: &str, p: &[&str]| Some((s(r), p.iter().map(|x| s(x)).collect()));
    let ty_of = |suffix: &str| match suffix {
        "f32" => "float".to_string(),
        "f64" => "double".to_string(),
        "v4f32" => "<4 x float>".to_string(),
        t => t.to_string(),
    };
    match name {
        "llvm.memcpy.p0i8.p0i8.i32" | "llvm.memmove.p0i8.p0i8.i32" => {
            sig("void", &["i32", "i32", "i32", "i32", "i1"])
        }
        "llvm.memset.p0i8.i32" => sig("void", &["i32", "i8", "i32", "i32", "i1"]),
        "llvm.stacksave" | "llvm.nacl.read.tp" => sig("i32", &[]),
        "llvm.stackrestore" => sig("void", &["i32"]),
        "llvm.nacl.setjmp" => sig("i32", &["i32"]),
        "llvm.nacl.longjmp" => sig("void", &["i32", "i32"]),
        "llvm.trap" | "llvm.nacl.atomic.fence.all" => sig("void", &[]),
        "llvm.nacl.atomic.fence" => sig("void", &["i32"]),
        "llvm.nacl.atomic.is.lock.free" => sig("i1", &["i32", "i32"]),
        _ => {
            let (base, suffix) = name.rsplit_once('.')?;
            let t = ty_of(suffix);
            let t = t.as_str();
            match base {
                "llvm.bswap" | "llvm.ctpop" | "llvm.fabs" | "llvm.sqrt" => sig(t, &[t]),
                "llvm.ctlz" | "llvm.cttz" => sig(t, &[t, "i1"]),
                "llvm.nacl.atomic.load" => sig(t, &["i32", "i32"]),
                "llvm.nacl.atomic.store" => sig("void", &[t, "i32", "i32"]),
                "llvm.nacl.atomic.rmw" => sig(t, &["i32", "i32", t, "i32"]),
                "llvm.nacl.atomic.cmpxchg" => sig(t, &["i32", t, t, "i32", "i32"]),
                _ => None,
            }
        }
    }
}

/// The vector types PNaCl allows, in the order the types block lists them.
const VECTOR_TYPES: [&str; 7] = [
    "<16 x i8>",
    "<8 x i16>",
    "<4 x i32>",
    "<4 x float>",
    "<16 x i1>",
    "<8 x i1>",
    "<4 x i1>",
];

const IRT_FDIO: &str = "nacl-irt-fdio-0.1";
const IRT_BASIC: &str = "nacl-irt-basic-0.1";

/// A NUL-terminated string as a data initializer.
pub fn cstr_data(s: &str) -> String {
    let mut b = s.as_bytes().to_vec();
    b.push(0);
    data(&b)
}

/// Bytes as a data initializer `{ ... }`, wrapped.
pub fn data(b: &[u8]) -> String {
    let mut s = String::from("{");
    for (i, x) in b.iter().enumerate() {
        if i > 0 {
            s += ",";
        }
        if i % 24 == 0 {
            s += "\n      ";
        } else {
            s += " ";
        }
        let _ = write!(s, "{x}");
    }
    s += " }";
    s
}

fn align8(x: usize) -> usize {
    (x + 7) & !7
}

/// Where a kernel's records are: input offset in the input global, output offset in the
/// output global.
pub struct Placed {
    pub in_off: usize,
    pub out_off: usize,
}

/// Lays out inputs (identical input tables are shared) and outputs, 8-byte aligned.
pub fn layout(f: &Fixture) -> (Vec<Placed>, Vec<u8>, usize) {
    let mut input: Vec<u8> = Vec::new();
    let mut seen: HashMap<Vec<u8>, usize> = HashMap::new();
    let mut out = 0;
    let mut placed = Vec::new();
    for k in &f.kernels {
        let blob: Vec<u8> = k.cases.iter().flat_map(|c| c.input.clone()).collect();
        let in_off = match seen.get(&blob) {
            Some(&o) => o,
            None => {
                input.resize(align8(input.len()), 0);
                let o = input.len();
                input.extend_from_slice(&blob);
                seen.insert(blob, o);
                o
            }
        };
        let out_off = out;
        out = align8(out + k.out_size * k.cases.len());
        placed.push(Placed { in_off, out_off });
    }
    input.resize(align8(input.len()).max(8), 0);
    (placed, input, out.max(8))
}

/// The expected stdout, as fields with their byte offsets and the case they belong to.
pub fn expected(f: &Fixture) -> (usize, Vec<(usize, String, Want)>) {
    let (placed, _, size) = layout(f);
    let mut v = Vec::new();
    for (k, p) in f.kernels.iter().zip(&placed) {
        for (i, c) in k.cases.iter().enumerate() {
            let mut off = p.out_off + i * k.out_size;
            for (j, w) in c.want.iter().enumerate() {
                v.push((
                    off,
                    format!("{}: case {i} ({}), field {j}", k.name, c.label),
                    w.clone(),
                ));
                off += w.len();
            }
        }
    }
    (size, v)
}

/// Compares a fixture's stdout with its expectation; returns one line per wrong field.
pub fn compare(f: &Fixture, stdout: &[u8]) -> Vec<String> {
    let (size, fields) = expected(f);
    let mut errs = Vec::new();
    if stdout.len() != size {
        errs.push(format!(
            "stdout has {} bytes, expected {size}",
            stdout.len()
        ));
    }
    for (off, what, w) in fields {
        let Some(got) = stdout.get(off..off + w.len()) else {
            errs.push(format!("{what}: missing (offset {off})"));
            continue;
        };
        if !w.matches(got) {
            errs.push(format!(
                "{}/{what}: got {}, want {}",
                f.name,
                w.show_got(got),
                w.show()
            ));
        }
    }
    errs
}

/// A function declared in the module: name, return type, parameter types, body (None for
/// an intrinsic), defined externally (`_start`)?
struct Decl {
    name: String,
    ret: String,
    params: Vec<String>,
    body: Option<String>,
    comment: String,
}

/// Replaces every `@[name]` in `s` by the function or global it names.
fn resolve(s: &str, ids: &HashMap<String, String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find("@[") {
        out += &rest[..i];
        let end = rest[i..].find(']').expect("unterminated @[") + i;
        let name = &rest[i + 2..end];
        out += ids
            .get(name)
            .unwrap_or_else(|| panic!("unknown reference @[{name}]"));
        rest = &rest[end + 1..];
    }
    out + rest
}

/// All `@[name]` references in `s`.
fn refs(s: &str) -> Vec<String> {
    let mut v = Vec::new();
    let mut rest = s;
    while let Some(i) = rest.find("@[") {
        let end = rest[i..].find(']').unwrap() + i;
        v.push(rest[i + 2..end].to_string());
        rest = &rest[end + 1..];
    }
    v
}

impl Fixture {
    /// The fixture's PNaClAsm text.
    pub fn text(&self) -> String {
        let (placed, input, out_size) = layout(self);

        // Globals: output buffer, inputs, the two interface names, the IRT tables, the
        // saved query function, then the fixture's own.
        let mut globals: Vec<(String, bool, String)> = vec![
            (
                "out".into(),
                false,
                format!("align 8, zerofill {out_size};"),
            ),
            ("in".into(), true, format!("align 8, {}", data(&input))),
            (
                "fdio_name".into(),
                true,
                format!("align 1, {}", cstr_data(IRT_FDIO)),
            ),
            (
                "basic_name".into(),
                true,
                format!("align 1, {}", cstr_data(IRT_BASIC)),
            ),
            ("irt".into(), false, "align 8, zerofill 64;".into()),
            ("query".into(), false, "align 4, zerofill 4;".into()),
        ];
        globals.extend(self.globals.iter().cloned());

        // Functions: _start, the driver, llvm.trap, helpers, kernels, then the intrinsics
        // the bodies use.
        let mut decls = vec![
            Decl {
                name: "_start".into(),
                ret: "void".into(),
                params: vec!["i32".into()],
                body: Some(String::new()),
                comment: "the entry point; %p0 is the startup block".into(),
            },
            Decl {
                name: "drive".into(),
                ret: "void".into(),
                params: vec!["i32".into(); 6],
                body: Some(driver_body()),
                comment: "drive(kernel, in, out, n, in_size, out_size): kernel(in + i * in_size, out + i * out_size) for i < n".into(),
            },
        ];
        for h in &self.helpers {
            decls.push(Decl {
                name: h.name.clone(),
                ret: h.ret.clone(),
                params: h.params.clone(),
                body: Some(h.body.clone()),
                comment: "helper".into(),
            });
        }
        for (k, p) in self.kernels.iter().zip(&placed) {
            decls.push(Decl {
                name: k.name.clone(),
                ret: "void".into(),
                params: vec!["i32".into(), "i32".into()],
                body: Some(k.body.clone()),
                comment: format!(
                    "kernel: {} cases, {} input bytes each (at in + {}), {} output bytes each (at out + {})",
                    k.cases.len(),
                    k.in_size,
                    p.in_off,
                    k.out_size,
                    p.out_off
                ),
            });
        }
        let start_body = start_body(self, &placed, out_size);
        decls[0].body = Some(start_body);
        let mut intrinsics = vec!["llvm.trap".to_string()];
        for d in &decls {
            for r in refs(d.body.as_deref().unwrap_or("")) {
                if r.starts_with("llvm.") && !intrinsics.contains(&r) {
                    intrinsics.push(r);
                }
            }
        }
        for g in &globals {
            assert!(!refs(&g.2).iter().any(|r| r.starts_with("llvm.")));
        }
        intrinsics.sort();
        for name in intrinsics {
            let (ret, params) =
                intrinsic_sig(&name).unwrap_or_else(|| panic!("unknown intrinsic {name}"));
            decls.push(Decl {
                name,
                ret,
                params,
                body: None,
                comment: String::new(),
            });
        }

        // Ids for @[name].
        let mut ids = HashMap::new();
        for (i, d) in decls.iter().enumerate() {
            assert!(
                ids.insert(d.name.clone(), format!("@f{i}")).is_none(),
                "duplicate function {}",
                d.name
            );
        }
        for (i, g) in globals.iter().enumerate() {
            assert!(
                ids.insert(format!("g:{}", g.0), format!("@g{i}")).is_none(),
                "duplicate global {}",
                g.0
            );
        }

        // Types: the scalars, then every signature, then the IRT entries' signatures
        // (called indirectly).
        let mut types: Vec<String> = ["i1", "i8", "i16", "i32", "i64", "float", "double", "void"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut add_ty = |t: String| {
            if !types.contains(&t) {
                types.push(t);
            }
        };
        // Vector types any function mentions, before the signatures that may use them.
        for v in VECTOR_TYPES {
            let mentioned = |t: &str| t.contains(v);
            if decls.iter().any(|d| {
                d.body.as_deref().is_some_and(mentioned)
                    || mentioned(&d.ret)
                    || d.params.iter().any(|p| mentioned(p))
            }) {
                add_ty(v.to_string());
            }
        }
        for d in &decls {
            add_ty(format!("{} ({})", d.ret, d.params.join(", ")));
        }
        add_ty("i32 (i32, i32, i32)".into());
        add_ty("i32 (i32, i32, i32, i32)".into());

        let mut s = String::new();
        let _ = writeln!(
            s,
            "// GENERATED by crates/testkit/src/fixtures (fixture \"{}\"); do not edit.",
            self.name
        );
        s += "// Regenerate: scripts/update-fixtures.sh\n";
        for line in self.about.lines() {
            let _ = writeln!(s, "// {line}");
        }
        let _ = writeln!(
            s,
            "// {} kernels, {} cases, {} bytes of output.",
            self.kernels.len(),
            self.cases(),
            out_size
        );
        s += "module {\n  version 1;\n  types {\n";
        let _ = writeln!(s, "    count {};", types.len());
        for (i, t) in types.iter().enumerate() {
            let _ = writeln!(s, "    @t{i} = {t};");
        }
        s += "  }\n";
        for (i, d) in decls.iter().enumerate() {
            let kind = match (&d.body, i) {
                (_, 0) => "define external",
                (Some(_), _) => "define internal",
                (None, _) => "declare external",
            };
            let _ = writeln!(s, "  {kind} {} @f{i}({});", d.ret, d.params.join(", "));
        }
        let _ = writeln!(s, "  globals {{\n    count {};", globals.len());
        for (i, (name, is_const, def)) in globals.iter().enumerate() {
            let kind = if *is_const { "const" } else { "var" };
            let _ = writeln!(s, "    // {name}");
            let _ = writeln!(s, "    {kind} @g{i}, {}", resolve(def, &ids));
        }
        s += "  }\n  valuesymtab {\n";
        for (i, d) in decls.iter().enumerate() {
            let _ = writeln!(s, "    @f{i} : \"{}\";", d.name);
        }
        s += "  }\n";
        for (i, d) in decls.iter().enumerate() {
            let Some(body) = &d.body else { continue };
            let _ = writeln!(s, "  // {}: {}", d.name, d.comment);
            let params: Vec<String> = d
                .params
                .iter()
                .enumerate()
                .map(|(j, t)| format!("{t} %p{j}"))
                .collect();
            let _ = writeln!(s, "  function {} @f{i}({}) {{", d.ret, params.join(", "));
            for line in resolve(body, &ids).lines() {
                if line.is_empty() {
                    continue;
                }
                let _ = writeln!(s, "  {line}");
            }
            s += "  }\n";
        }
        s += "}\n";
        s
    }
}

fn driver_body() -> String {
    let mut f = Fb::new();
    let zero = f.i32c(0);
    let one = f.i32c(1);
    let empty = f.v(format!("icmp eq i32 %p3, {zero}"));
    let (b_loop, b_end) = (f.block(), f.block());
    f.s(format!("br i1 {empty}, label %b{b_end}, label %b{b_loop}"));
    f.label(b_loop);
    let (i, next) = f.carried("i32", &zero, 0, b_loop);
    let a = f.v(format!("mul i32 {i}, %p4"));
    let inp = f.v(format!("add i32 %p1, {a}"));
    let b = f.v(format!("mul i32 {i}, %p5"));
    let outp = f.v(format!("add i32 %p2, {b}"));
    f.s(format!("call void %p0(i32 {inp}, i32 {outp})"));
    let n = f.v(format!("add i32 {i}, {one}"));
    f.repeat_while((&next, &n), "ult", "%p3", (b_loop, b_end));
    f.label(b_end);
    f.s("ret void");
    f.finish()
}

fn start_body(fx: &Fixture, placed: &[Placed], out_size: usize) -> String {
    let mut f = Fb::new();
    let c = |f: &mut Fb, x: i64| f.i32c(x);
    f.note("auxv = info + 4 * (3 + argc + 1 + envc + 1)");
    let envc = f.load("i32", "%p0", 4);
    let argc = f.load("i32", "%p0", 8);
    let n = f.v(format!("add i32 {envc}, {argc}"));
    let four = c(&mut f, 4);
    let m = f.v(format!("mul i32 {n}, {four}"));
    let a = f.v(format!("add i32 %p0, {m}"));
    let twenty = c(&mut f, 20);
    let auxv = f.v(format!("add i32 {a}, {twenty}"));
    let (b_scan, b_next, b_trap, b_found, b_run) =
        (f.block(), f.block(), f.block(), f.block(), f.block());
    f.s(format!("br label %b{b_scan}"));

    f.label(b_scan);
    f.note("find AT_SYSINFO (32): its value is __nacl_irt_query");
    let (cur, nxt) = f.carried("i32", &auxv, 0, b_next);
    let ty = f.load("i32", &cur, 0);
    let c32 = c(&mut f, 32);
    let found = f.v(format!("icmp eq i32 {ty}, {c32}"));
    f.s(format!(
        "br i1 {found}, label %b{b_found}, label %b{b_next}"
    ));

    f.label(b_next);
    let zero = c(&mut f, 0);
    let null = f.v(format!("icmp eq i32 {ty}, {zero}"));
    let eight = c(&mut f, 8);
    let n2 = f.v(format!("add i32 {cur}, {eight}"));
    f.bind(&nxt, &n2);
    f.s(format!("br i1 {null}, label %b{b_trap}, label %b{b_scan}"));

    f.label(b_trap);
    f.s("call void @[llvm.trap]()");
    f.s("unreachable");

    f.label(b_found);
    let query = f.load("i32", &cur, 4);
    f.store("i32", &query, "@[g:query]", 0);
    let r = f.v(format!(
        "call i32 {query}(i32 @[g:fdio_name], i32 @[g:irt], i32 {c32})"
    ));
    let ok = f.v(format!("icmp eq i32 {r}, {c32}"));
    f.s(format!("br i1 {ok}, label %b{b_run}, label %b{b_trap}"));

    f.label(b_run);
    for (k, p) in fx.kernels.iter().zip(placed) {
        f.note(format!("{}: {} cases", k.name, k.cases.len()));
        let inp = f.at("@[g:in]", p.in_off);
        let outp = f.at("@[g:out]", p.out_off);
        let n = c(&mut f, k.cases.len() as i64);
        let isz = c(&mut f, k.in_size as i64);
        let osz = c(&mut f, k.out_size as i64);
        f.s(format!(
            "call void @[drive](i32 @[{}], i32 {inp}, i32 {outp}, i32 {n}, i32 {isz}, i32 {osz})",
            k.name
        ));
    }
    f.note("write(1, out, size, &nwrote) until all is written");
    let write = f.load("i32", "@[g:irt]", 16);
    let nwrote = f.at("@[g:irt]", 56);
    let size = c(&mut f, out_size as i64);
    let one = c(&mut f, 1);
    let (b_write, b_wrote, b_more, b_basic, b_exit) =
        (f.block(), f.block(), f.block(), f.block(), f.block());
    f.s(format!("br label %b{b_write}"));

    f.label(b_write);
    let (done, done_next) = f.carried("i32", &zero, b_run, b_more);
    let ptr = f.v(format!("add i32 @[g:out], {done}"));
    let rem = f.v(format!("sub i32 {size}, {done}"));
    let e = f.v(format!(
        "call i32 {write}(i32 {one}, i32 {ptr}, i32 {rem}, i32 {nwrote})"
    ));
    let e_ok = f.v(format!("icmp eq i32 {e}, {zero}"));
    f.s(format!("br i1 {e_ok}, label %b{b_wrote}, label %b{b_trap}"));

    f.label(b_wrote);
    let w = f.load("i32", &nwrote, 0);
    let w_ok = f.v(format!("icmp ne i32 {w}, {zero}"));
    f.s(format!("br i1 {w_ok}, label %b{b_more}, label %b{b_trap}"));

    f.label(b_more);
    let d2 = f.v(format!("add i32 {done}, {w}"));
    f.repeat_while((&done_next, &d2), "ult", &size, (b_write, b_basic));

    f.label(b_basic);
    f.note("basic.exit(0)");
    let basic = f.at("@[g:irt]", 32);
    let c24 = c(&mut f, 24);
    let r2 = f.v(format!(
        "call i32 {query}(i32 @[g:basic_name], i32 {basic}, i32 {c24})"
    ));
    let ok2 = f.v(format!("icmp eq i32 {r2}, {c24}"));
    f.s(format!("br i1 {ok2}, label %b{b_exit}, label %b{b_trap}"));

    f.label(b_exit);
    let exit = f.load("i32", &basic, 0);
    f.s(format!("call void {exit}(i32 {zero})"));
    f.s("unreachable");
    f.finish()
}
