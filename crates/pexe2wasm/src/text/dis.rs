//! The three-column disassembler: bit position | abbreviation index and record | PNaClAsm,
//! laid out as pnacl-bcdis lays it out (see [`super::format`]).
//!
//! The file is decoded to IR first ([`crate::decode::decode`]): instructions are printed
//! from the IR (the k-th instruction record of a function is its `insts[k]`), with operand
//! types from [`Module::value_type`]. Everything else (types, globals, constants, symbol
//! tables, abbreviations) is printed from the records themselves.
//!
//! Each printed statement is checked as it is printed: it is fed to an assembler that
//! follows along, and what the assembler makes of it must be the record just read. When
//! the text does not reproduce the record exactly (a non-canonical encoding), the record's
//! values are appended (`=> <...>`); when the assembler cannot make sense of the text at
//! all, the record is printed raw (`record <...>`). So `assemble(disassemble(x)) == x` for
//! every file the bitstream reader accepts, by construction, provided its bits are packed
//! the way the writer packs them (checked at the end: [`DisError::NonCanonical`]).

use std::collections::HashMap;
use std::io::Write;

use super::asm::{block_keyword, infer_width, Assembler, Out};
use super::format::{
    assembly_formatter, double_text, float_text, record_formatter, Formatter, Op, RECORD_WIDTH,
};
use crate::bitstream::{Abbrev, AbbrevOp, BitstreamError, Cursor, Header, Kind};
use crate::decode::{decode, DecodeError};
use crate::ir::{BlockId, Callee, FunctionType, InstKind, Module, Type, TypeId, ValueId};

/// Why a file could not be (completely) disassembled.
#[derive(Debug, thiserror::Error)]
pub enum DisError {
    #[error("cannot write the disassembly: {0}")]
    Io(#[from] std::io::Error),
    /// The bitstream itself is broken; the dump stops where it broke.
    #[error(transparent)]
    Bitstream(#[from] BitstreamError),
    /// The records do not form a valid module; the dump is complete but instructions are
    /// printed as raw records.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// The bits encode their records in a way the bitstream writer never produces (a VBR
    /// with redundant zero chunks, non-zero padding...), so no text can reproduce them.
    #[error("bit {bit} (byte {}:{}): the bitstream is not canonically encoded from here on: its text cannot reproduce it", bit / 8, bit % 8)]
    NonCanonical { bit: u64 },
    /// A bug: a printed statement could not be read back.
    #[error("internal disassembler error at bit {bit}: {message}")]
    Internal { bit: u64, message: String },
}

/// Counts of a disassembly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DisStats {
    /// Records printed.
    pub records: u64,
    /// Escapes from plain PNaClAsm: record overrides (`=> <...>`), raw records
    /// (`record <...>`), explicit block widths, raw header and trailing bytes. Files written
    /// by pnacl-finalize need none.
    pub overrides: u64,
}

/// Disassembles a pexe into the three-column dump. If the file does not decode, as much
/// as possible is printed and then the error is returned.
pub fn disassemble(data: &[u8], out: &mut dyn Write) -> Result<(), DisError> {
    disassemble_with_stats(data, out).map(|_| ())
}

/// Like [`disassemble`], also returning counts.
pub fn disassemble_with_stats(data: &[u8], out: &mut dyn Write) -> Result<DisStats, DisError> {
    let header = match Header::parse(data) {
        Ok(h) => h,
        // Native code (a nexe) is named as what it is, as decoding names it.
        Err(e) => {
            return Err(match decode(data) {
                Err(d) if d.native().is_some() => d.into(),
                _ => e.into(),
            })
        }
    };
    let module = decode(data);
    let label_w = data.len().to_string().len().max(5);
    let mut d = Dis {
        ir: module.as_ref().ok(),
        fa: assembly_formatter(),
        fr: record_formatter(label_w + 2),
        label_w,
        buf: String::with_capacity(1 << 16),
        out,
        asm: Assembler::new(Vec::new()),
        stats: DisStats::default(),
        types: Vec::new(),
        fns: Vec::new(),
        defined: Vec::new(),
        bodies: 0,
        nglobals: 0,
        blockinfo: HashMap::new(),
        setbid: None,
        stack: Vec::new(),
        func: None,
        local_counts: local_abbrev_counts(data, header.size),
        enters: 0,
    };
    d.header(data, &header)?;
    let mut cur = Cursor::new(data, header.size);
    let mut rec = Vec::new();
    loop {
        let (bit, kind) = match cur.next_into(&mut rec) {
            Ok(Some(x)) => x,
            Ok(None) => break,
            Err(e) => {
                d.flush();
                d.write_out()?;
                return Err(e.into());
            }
        };
        let globals = cur.scopes().stack.last().map_or(0, |s| s.num_global);
        match kind {
            Kind::EnterBlock {
                block_id,
                abbrev_width,
            } => d.enter(bit, block_id, abbrev_width, globals)?,
            Kind::EndBlock => d.end(bit)?,
            Kind::DefineAbbrev => {
                let Some(a) = cur.scopes().arena.last().cloned() else {
                    return Err(internal(bit, "abbreviation missing"));
                };
                d.define_abbrev(bit, &a)?;
            }
            Kind::Record { abbrev_id } => d.record(bit, abbrev_id, &rec, globals)?,
        }
        if d.buf.len() > 1 << 16 {
            d.write_out()?;
        }
    }
    if let Err(e) = cur.finish() {
        d.flush();
        d.write_out()?;
        return Err(e.into());
    }
    let end = (cur.pos() / 8) as usize;
    if end < data.len() {
        let mut ops = vec![t("trailing"), Op::Space, Op::Open("<")];
        push_list(&mut ops, data[end..].iter().map(|b| b.to_string()));
        ops.extend([Op::Close(">"), Op::Punct(";"), Op::Endline]);
        d.check_none(&ops, cur.pos())?;
        d.stats.overrides += 1;
        d.fa.apply_all(ops);
        d.flush();
    }
    d.write_out()?;
    d.out.flush()?;
    let stats = d.stats;
    // Records say nothing of how their bits were packed; only canonical packing (what the
    // writer produces) can come back from text.
    // A module that does not decode is reported as such first: that is the fault the other
    // commands name, at the same position.
    let module = module?;
    let _ = module;
    if let Ok(re) = crate::bitstream::reencode(data) {
        let body = &data[..end.min(data.len())];
        if re != body {
            // The first bit that differs (bits are packed from the least significant up).
            let bit = match re.iter().zip(body).position(|(a, b)| a != b) {
                Some(i) => i as u64 * 8 + u64::from((re[i] ^ body[i]).trailing_zeros()),
                None => re.len().min(body.len()) as u64 * 8,
            };
            return Err(DisError::NonCanonical { bit });
        }
    }
    Ok(stats)
}

fn internal(bit: u64, m: impl Into<String>) -> DisError {
    DisError::Internal {
        bit,
        message: m.into(),
    }
}

fn t(s: impl Into<String>) -> Op {
    Op::Text(s.into())
}

/// `label %bN` and the punctuation after it, ending the current cluster.
fn label(target: BlockId, punct: &'static str) -> [Op; 5] {
    [
        t("label"),
        Op::Space,
        t(format!("%b{target}")),
        Op::Punct(punct),
        Op::Finish,
    ]
}

/// One `br label %bN;` line of a switch body.
fn switch_br(ops: &mut Vec<Op>, target: BlockId) {
    ops.extend([Op::Start, t("br"), Op::Space]);
    ops.extend(label(target, ";"));
    ops.push(Op::Endline);
}

/// `a, b, c` as clustered list items (the record column's style).
fn push_list(ops: &mut Vec<Op>, items: impl Iterator<Item = String>) {
    let mut first = true;
    for v in items {
        if !first {
            ops.extend([Op::Punct(","), Op::Finish, Op::Space]);
        }
        first = false;
        ops.push(Op::Start);
        ops.push(Op::Text(v));
    }
    if !first {
        ops.push(Op::Finish);
    }
}

/// The text of ops without layout.
fn plain(ops: &[Op]) -> String {
    let mut s = String::new();
    for op in ops {
        match op {
            Op::Text(x) => s.push_str(x),
            Op::Punct(x) | Op::Open(x) | Op::Close(x) => s.push_str(x),
            Op::Space => s.push(' '),
            Op::Endline => s.push('\n'),
            _ => {}
        }
    }
    s
}

/// Local abbreviations defined directly in each block, in block order (for the width each
/// block would get by default).
fn local_abbrev_counts(data: &[u8], start: usize) -> Vec<usize> {
    let mut cur = Cursor::new(data, start);
    let mut counts = Vec::new();
    let mut open: Vec<(usize, bool)> = Vec::new();
    let mut buf = Vec::new();
    while let Ok(Some((_, kind))) = cur.next_into(&mut buf) {
        match kind {
            Kind::EnterBlock { block_id, .. } => {
                open.push((counts.len(), block_id == 0));
                counts.push(0);
            }
            Kind::EndBlock => {
                open.pop();
            }
            Kind::DefineAbbrev => {
                if let Some(&(i, false)) = open.last() {
                    counts[i] += 1;
                }
            }
            Kind::Record { .. } => {}
        }
    }
    counts
}

/// What a record statement defines (for the raw fallback, which must define it too).
#[derive(Clone, Copy)]
enum Def {
    Type(usize),
    Func(usize),
    Global(u64),
    Const(u64),
    Value(u64),
}

impl Def {
    fn name(self) -> String {
        match self {
            Def::Type(n) => format!("@t{n}"),
            Def::Func(n) => format!("@f{n}"),
            Def::Global(n) => format!("@g{n}"),
            Def::Const(n) => format!("%c{n}"),
            Def::Value(n) => format!("%v{n}"),
        }
    }
}

enum Ctx {
    Generic,
    Blockinfo,
    Module,
    Types,
    Symtab,
    Globals {
        compound: bool,
        remaining: u64,
        base_tabs: usize,
    },
    Constants {
        cur: Option<u64>,
        block_tabs: usize,
    },
    Function,
}

struct FnCtx {
    /// Index of the IR body, if decoding succeeded.
    body: Option<usize>,
    params: u64,
    consts: u64,
    values: u64,
    /// Instruction records seen (index into the body's `insts`).
    inst: usize,
    terminating: bool,
    bb: u64,
}

struct Dis<'m, 'w> {
    ir: Option<&'m Module>,
    fa: Formatter,
    fr: Formatter,
    label_w: usize,
    buf: String,
    out: &'w mut dyn Write,
    asm: Assembler,
    stats: DisStats,
    /// Types as the types block defines them.
    types: Vec<Type>,
    /// Function addresses: type id and whether it is a prototype.
    fns: Vec<(u64, bool)>,
    /// Indices of defined functions, in order.
    defined: Vec<usize>,
    /// Function blocks seen.
    bodies: usize,
    nglobals: u64,
    blockinfo: HashMap<u32, usize>,
    setbid: Option<u32>,
    stack: Vec<(Ctx, usize)>,
    func: Option<FnCtx>,
    local_counts: Vec<usize>,
    enters: usize,
}

impl Dis<'_, '_> {
    // ---- output ----

    fn write_out(&mut self) -> Result<(), DisError> {
        self.out.write_all(self.buf.as_bytes())?;
        self.buf.clear();
        Ok(())
    }

    /// Merges the buffered record and assembly lines into output lines.
    fn flush(&mut self) {
        let rec = std::mem::take(&mut self.fr.out);
        let asm = std::mem::take(&mut self.fa.out);
        self.fr.plain.clear();
        self.fa.plain.clear();
        let mut r = rec.split_inclusive('\n');
        let mut a = asm.split_inclusive('\n');
        let width = self.label_w + 2 + 1 + RECORD_WIDTH;
        loop {
            let (rl, al) = (r.next(), a.next());
            if rl.is_none() && al.is_none() {
                break;
            }
            let rl = rl.map_or("", |l| l.strip_suffix('\n').unwrap_or(l));
            let mut col = rl.chars().count();
            self.buf.push_str(rl);
            if col == 0 {
                let n = self.fr.label_len();
                self.buf.extend(std::iter::repeat_n(' ', n));
                self.buf.push('|');
                col = n + 1;
            }
            if col < width {
                self.buf.extend(std::iter::repeat_n(' ', width - col));
            }
            self.buf.push('|');
            if let Some(l) = al {
                self.buf.push_str(l.strip_suffix('\n').unwrap_or(l));
            }
            self.buf.push('\n');
        }
    }

    /// Writes the record column for a record and flushes both columns.
    fn write_record(&mut self, bit: u64, values: &[u64], abbrev: Option<u32>) {
        self.fr
            .set_label(format!("{:>w$}:{}", bit / 8, bit % 8, w = self.label_w));
        let mut ops = Vec::with_capacity(values.len() * 4 + 6);
        if let Some(a) = abbrev {
            ops.extend([t(format!("{a}:")), Op::Space]);
        }
        ops.push(Op::Open("<"));
        push_list(&mut ops, values.iter().map(|v| v.to_string()));
        ops.extend([Op::Close(">"), Op::Endline]);
        self.fr.apply_all(ops);
        self.flush();
    }

    /// Feeds a statement that must produce no entries (labels, a compound's `}`).
    fn check_none(&mut self, ops: &[Op], bit: u64) -> Result<(), DisError> {
        let mut outs = Vec::new();
        let text = plain(ops);
        self.asm
            .feed(&text, &mut outs)
            .map_err(|e| internal(bit, format!("'{}': {e}", text.trim())))?;
        if !outs.is_empty() {
            return Err(internal(bit, format!("'{}' produced entries", text.trim())));
        }
        Ok(())
    }

    /// Feeds a statement that must produce exactly `expect`.
    fn check_one(
        &mut self,
        ops: &[Op],
        bit: u64,
        expect: impl Fn(&Out) -> bool,
    ) -> Result<(), DisError> {
        let mut outs = Vec::new();
        let text = plain(ops);
        self.asm
            .feed(&text, &mut outs)
            .map_err(|e| internal(bit, format!("'{}': {e}", text.trim())))?;
        if outs.len() != 1 || !expect(&outs[0]) {
            return Err(internal(
                bit,
                format!("'{}' does not reproduce its entry ({outs:?})", text.trim()),
            ));
        }
        Ok(())
    }

    /// Prints a record statement after checking it reproduces the record.
    fn emit(
        &mut self,
        bit: u64,
        abbrev_id: u32,
        values: &[u64],
        globals: usize,
        ops: Vec<Op>,
        def: Option<Def>,
    ) -> Result<(), DisError> {
        self.emit_shown(bit, abbrev_id, abbrev_id, values, globals, ops, def)
    }

    /// Like [`Dis::emit`], showing `shown` as the record's abbreviation index.
    #[allow(clippy::too_many_arguments)]
    fn emit_shown(
        &mut self,
        bit: u64,
        abbrev_id: u32,
        shown: u32,
        values: &[u64],
        globals: usize,
        mut ops: Vec<Op>,
        def: Option<Def>,
    ) -> Result<(), DisError> {
        self.stats.records += 1;
        let ann = annotation(abbrev_id, globals);
        let mut text = plain(&ops);
        text.push_str(&plain(&ann));
        let mut outs = Vec::new();
        // No text (a record the disassembler has no syntax for) goes straight to raw.
        let fed = if ops.is_empty() {
            Err(())
        } else {
            self.asm.feed(&text, &mut outs).map_err(|_| ())
        };
        match fed {
            Ok(()) => match outs.as_slice() {
                [Out::Record {
                    abbrev_id: a,
                    values: v,
                }] if *a == abbrev_id => {
                    ops.extend(ann);
                    if v != values {
                        self.stats.overrides += 1;
                        ops.extend([Op::Space, t("=>"), Op::Space, Op::Open("<")]);
                        push_list(&mut ops, values.iter().map(|v| v.to_string()));
                        ops.push(Op::Close(">"));
                    }
                }
                _ => {
                    return Err(internal(
                        bit,
                        format!("'{}' does not produce one record ({outs:?})", text.trim()),
                    ))
                }
            },
            Err(_) => {
                // Raw form; it defines what the statement would have defined.
                self.stats.overrides += 1;
                ops = Vec::new();
                if let Some(d) = def {
                    ops.extend([t(d.name()), Op::Space, t("="), Op::Space]);
                }
                ops.extend([t("record"), Op::Space, Op::Open("<")]);
                push_list(&mut ops, values.iter().map(|v| v.to_string()));
                ops.extend([Op::Close(">"), Op::Punct(";")]);
                ops.extend(ann);
                let want = Out::Record {
                    abbrev_id,
                    values: values.to_vec(),
                };
                self.check_one(&ops, bit, |o| *o == want)?;
            }
        }
        ops.push(Op::Endline);
        self.fa.apply_all(ops);
        self.write_record(bit, values, Some(shown));
        Ok(())
    }

    // ---- names and types ----

    fn ty(&self, id: u64) -> Option<&Type> {
        let i = usize::try_from(id).ok()?;
        match self.types.get(i) {
            Some(t) => Some(t),
            None => self.ir?.types.get(TypeId(u32::try_from(id).ok()?)),
        }
    }

    /// Tokens of a type (pnacl-bcdis's type directive); for function types, optionally
    /// with the function's name and parameter names.
    fn type_ops(&self, ops: &mut Vec<Op>, id: u64, name: Option<&str>, params: bool) {
        self.type_ops_at(ops, id, name, params, 0)
    }

    /// Valid types nest at most three deep (function, vector, scalar); deeper nesting
    /// means a type refers to itself, and is printed by id.
    fn type_ops_at(
        &self,
        ops: &mut Vec<Op>,
        id: u64,
        name: Option<&str>,
        params: bool,
        depth: u32,
    ) {
        ops.push(Op::Flush);
        let ty = if depth > 3 { None } else { self.ty(id) };
        let Some(ty) = ty else {
            ops.push(t(format!("@t{id}")));
            return;
        };
        match ty {
            Type::Void => ops.push(t("void")),
            Type::Float => ops.push(t("float")),
            Type::Double => ops.push(t("double")),
            Type::Int(n) => ops.push(t(format!("i{n}"))),
            Type::Vector { len, elem } => {
                ops.extend([
                    Op::Start,
                    Op::Open("<"),
                    t(len.to_string()),
                    Op::Space,
                    t("x"),
                    Op::Space,
                ]);
                self.type_ops_at(ops, elem.0 as u64, None, false, depth + 1);
                ops.extend([Op::Close(">"), Op::Finish]);
            }
            Type::Function(ft) => self.fn_type_ops_at(ops, ft, name, params, depth),
        }
    }

    fn fn_type_ops(&self, ops: &mut Vec<Op>, ft: &FunctionType, name: Option<&str>, params: bool) {
        self.fn_type_ops_at(ops, ft, name, params, 0)
    }

    fn fn_type_ops_at(
        &self,
        ops: &mut Vec<Op>,
        ft: &FunctionType,
        name: Option<&str>,
        params: bool,
        depth: u32,
    ) {
        let n = ft.params.len();
        ops.push(Op::Start);
        self.type_ops_at(ops, ft.ret.0 as u64, None, false, depth + 1);
        ops.extend([Op::Space, Op::Start]);
        if n > 0 {
            ops.push(Op::Start);
        }
        if let Some(name) = name {
            ops.push(t(name));
        }
        ops.extend([Op::Open("("), Op::Finish]);
        let mut open = false;
        for (i, p) in ft.params.iter().enumerate() {
            if i > 0 {
                ops.extend([Op::Punct(","), Op::Finish, Op::Space]);
            }
            ops.push(Op::Start);
            self.type_ops_at(ops, p.0 as u64, None, false, depth + 1);
            if params {
                ops.extend([Op::Space, t(format!("%p{i}"))]);
            }
            open = true;
        }
        if ft.vararg {
            if open {
                ops.extend([Op::Punct(","), Op::Finish, Op::Space]);
            }
            ops.extend([Op::Start, t("...")]);
            open = true;
        }
        if open {
            ops.push(Op::Finish);
        }
        ops.extend([Op::Close(")"), Op::Finish]);
        if n > 0 {
            ops.push(Op::Finish);
        }
    }

    /// Name of an absolute value id inside a function (or at module level).
    fn vname(&self, v: u64) -> String {
        let f = self.fns.len() as u64;
        let g = f + self.nglobals;
        if v < f {
            return format!("@f{v}");
        }
        let Some(fc) = &self.func else {
            return format!("@g{}", v - f);
        };
        let p = g + fc.params;
        let c = p + fc.consts;
        if v < g {
            format!("@g{}", v - f)
        } else if v < p {
            format!("%p{}", v - g)
        } else if v < c {
            format!("%c{}", v - p)
        } else {
            format!("%v{}", v - c)
        }
    }

    // ---- header, blocks, abbreviations ----

    fn header(&mut self, data: &[u8], h: &Header) -> Result<(), DisError> {
        let bytes = &data[..h.size];
        let mut ops = vec![
            t("Magic"),
            Op::Space,
            t("Number"),
            Op::Punct(":"),
            Op::Space,
            Op::Start,
            Op::Start,
            t(format!(
                "'{}'",
                bytes[..4].iter().map(|&b| b as char).collect::<String>()
            )),
            Op::Finish,
            Op::Space,
            Op::Start,
            Op::Open("("),
        ];
        for (i, b) in bytes[..4].iter().enumerate() {
            if i > 0 {
                ops.extend([Op::Punct(","), Op::Space]);
            }
            ops.push(t(b.to_string()));
        }
        ops.extend([Op::Close(")"), Op::Finish, Op::Finish, Op::Endline]);
        let fields: Option<Vec<String>> = h
            .fields
            .iter()
            .map(|f| match (f.id, f.ftype, f.data.len()) {
                (1, 1, 4) => Some(format!(
                    "PNaCl Version: {}",
                    u32::from_le_bytes([f.data[0], f.data[1], f.data[2], f.data[3]])
                )),
                (2, 2, 0) => Some("Align bitcode records: true".into()),
                _ => None,
            })
            .collect();
        match fields {
            Some(fields) if h.to_bytes() == bytes && !fields.is_empty() => {
                for f in fields {
                    ops.extend([t(f), Op::Endline]);
                }
            }
            _ => {
                self.stats.overrides += 1;
                ops.extend([t("header"), Op::Space, Op::Open("<")]);
                push_list(&mut ops, bytes.iter().map(|b| b.to_string()));
                ops.extend([Op::Close(">"), Op::Punct(";"), Op::Endline]);
            }
        }
        self.check_none(&ops, 0)?;
        let end = super::asm::Pos { line: 0, col: 0 };
        if self.asm.header_bytes(end).ok().as_deref() != Some(bytes) {
            return Err(internal(0, "the header text does not reproduce the header"));
        }
        self.fa.apply_all(ops);
        let mut values = vec![65532];
        values.extend(bytes.iter().map(|&b| b as u64));
        self.write_record(0, &values, None);
        Ok(())
    }

    fn enter(&mut self, bit: u64, id: u32, width: u32, globals: usize) -> Result<(), DisError> {
        let locals = self.local_counts.get(self.enters).copied().unwrap_or(0);
        self.enters += 1;
        let mut ops = Vec::new();
        let mut ctx = match id {
            0 => Ctx::Blockinfo,
            8 => Ctx::Module,
            11 => Ctx::Constants {
                cur: None,
                block_tabs: self.fa.tabs(),
            },
            12 if self.func.is_none() => Ctx::Function,
            14 => Ctx::Symtab,
            17 => Ctx::Types,
            19 => Ctx::Globals {
                compound: false,
                remaining: 0,
                base_tabs: self.fa.tabs() + 1,
            },
            _ => Ctx::Generic,
        };
        if matches!(ctx, Ctx::Function) {
            let decl = self.defined.get(self.bodies).copied();
            let (ty, fname) = match decl {
                Some(i) => (self.fns[i].0, format!("@f{i}")),
                None => (u64::MAX, "@f0".to_string()),
            };
            ops.extend([t("function"), Op::Space]);
            let nparams = match self.ty(ty).cloned() {
                Some(Type::Function(ft)) => {
                    ops.push(Op::Flush);
                    self.fn_type_ops(&mut ops, &ft, Some(&fname), true);
                    ft.params.len() as u64
                }
                _ => {
                    ops.extend([
                        t("void"),
                        Op::Space,
                        t(fname),
                        Op::Open("("),
                        Op::Close(")"),
                    ]);
                    0
                }
            };
            let body = self.ir.and_then(|m| {
                let b = m.function_bodies.get(self.bodies)?;
                (Some(b.decl.index()) == decl).then_some(self.bodies)
            });
            self.bodies += 1;
            self.func = Some(FnCtx {
                body,
                params: nparams,
                consts: 0,
                values: 0,
                inst: 0,
                terminating: false,
                bb: 0,
            });
        } else {
            match block_keyword(id).filter(|_| id != 12) {
                Some(k) => ops.push(t(k)),
                None => {
                    ctx = Ctx::Generic;
                    ops.extend([t("block"), Op::Open("("), t(id.to_string()), Op::Close(")")]);
                }
            }
        }
        ops.extend([Op::Space, Op::Open("{")]);
        if width != infer_width(globals + locals) {
            self.stats.overrides += 1;
            ops.extend([Op::Space, t(format!("<{width}>"))]);
        }
        ops.extend([
            Op::Space,
            Op::Space,
            t(format!("// BlockID = {id}")),
            Op::Endline,
        ]);
        let mut outs = Vec::new();
        let text = plain(&ops);
        self.asm
            .feed(&text, &mut outs)
            .map_err(|e| internal(bit, format!("'{}': {e}", text.trim())))?;
        match outs.as_slice() {
            [Out::Enter {
                block_id,
                width: w,
                globals: g,
            }] if *block_id == id && w.unwrap_or_else(|| infer_width(g + locals)) == width => {}
            _ => {
                return Err(internal(
                    bit,
                    format!("'{}' does not enter the block", text.trim()),
                ))
            }
        }
        self.fa.apply_all(ops);
        self.write_record(bit, &[65535, id as u64, width as u64], Some(1));
        self.fr.apply(Op::Inc);
        self.fa.apply(Op::Inc);
        if id == 0 {
            self.setbid = None;
        }
        self.stack.push((ctx, 0));
        Ok(())
    }

    fn end(&mut self, bit: u64) -> Result<(), DisError> {
        if let Some((Ctx::Globals { .. }, _)) = self.stack.last() {
            self.close_initializers(bit)?;
        }
        self.fa.apply(Op::Dec);
        self.fr.apply(Op::Dec);
        let ops = vec![Op::Close("}"), Op::Endline];
        self.check_one(&ops, bit, |o| *o == Out::End)?;
        self.fa.apply_all(ops);
        self.write_record(bit, &[65534], Some(0));
        match self.stack.pop() {
            Some((Ctx::Constants { block_tabs, .. }, _)) => {
                while self.fa.tabs() > block_tabs {
                    self.fa.apply(Op::Dec);
                }
            }
            Some((Ctx::Function, _)) => self.func = None,
            Some((Ctx::Blockinfo, _)) => self.setbid = None,
            _ => {}
        }
        Ok(())
    }

    fn define_abbrev(&mut self, bit: u64, a: &Abbrev) -> Result<(), DisError> {
        let in_blockinfo = matches!(self.stack.last(), Some((Ctx::Blockinfo, _)));
        let name = if in_blockinfo {
            let target = self.setbid.unwrap_or(u32::MAX);
            let n = self.blockinfo.entry(target).or_default();
            *n += 1;
            format!("@a{}", *n - 1)
        } else {
            let Some((_, locals)) = self.stack.last_mut() else {
                return Err(internal(bit, "abbreviation outside a block"));
            };
            *locals += 1;
            format!("%a{}", *locals - 1)
        };
        let mut ops = Vec::new();
        if in_blockinfo {
            ops.push(Op::Inc);
        }
        ops.extend([
            t(name),
            Op::Space,
            t("="),
            Op::Space,
            t("abbrev"),
            Op::Space,
        ]);
        abbrev_ops(&mut ops, a);
        ops.extend([Op::Punct(";"), Op::Endline]);
        if in_blockinfo {
            ops.push(Op::Dec);
        }
        self.check_one(&ops, bit, |o| *o == Out::Abbrev(a.clone()))?;
        self.fa.apply_all(ops);
        let mut values = vec![65533, a.ops.len() as u64];
        for op in &a.ops {
            match *op {
                AbbrevOp::Literal(v) => values.extend([1, v]),
                AbbrevOp::Fixed(w) => values.extend([0, 1, w as u64]),
                AbbrevOp::Vbr(w) => values.extend([0, 2, w as u64]),
                AbbrevOp::Array => values.extend([0, 3]),
                AbbrevOp::Char6 => values.extend([0, 4]),
            }
        }
        self.write_record(bit, &values, Some(2));
        Ok(())
    }

    // ---- records ----

    fn record(
        &mut self,
        bit: u64,
        abbrev_id: u32,
        v: &[u64],
        globals: usize,
    ) -> Result<(), DisError> {
        let code = v[0];
        let ops_of = &v[1..];
        let ctx = match self.stack.last() {
            Some((c, _)) => c,
            None => return Err(internal(bit, "record outside a block")),
        };
        let mut def = None;
        let mut shown = abbrev_id;
        let ops: Vec<Op> = match ctx {
            Ctx::Blockinfo => {
                let mut ops = Vec::new();
                if let (1, [id]) = (code, ops_of) {
                    match u32::try_from(*id).ok().and_then(block_keyword) {
                        Some(k) if *id != 0 => ops.push(t(k)),
                        _ => ops.extend([
                            t("block"),
                            Op::Open("("),
                            t(id.to_string()),
                            Op::Close(")"),
                        ]),
                    }
                    ops.push(Op::Punct(":"));
                    self.setbid = u32::try_from(*id).ok();
                    // pnacl-bcdis shows SETBID records with abbreviation index 1.
                    shown = 1;
                }
                ops
            }
            Ctx::Module => self.module_record(code, ops_of, &mut def),
            Ctx::Types => self.type_record(code, ops_of, &mut def),
            Ctx::Globals { .. } => return self.globals_record(bit, abbrev_id, v, globals),
            Ctx::Symtab => self.symtab_record(code, ops_of),
            Ctx::Constants { .. } => return self.constants_record(bit, abbrev_id, v, globals),
            Ctx::Function => return self.function_record(bit, abbrev_id, v, globals),
            Ctx::Generic => Vec::new(),
        };
        self.emit_shown(bit, abbrev_id, shown, v, globals, ops, def)
    }

    fn module_record(&mut self, code: u64, v: &[u64], def: &mut Option<Def>) -> Vec<Op> {
        match (code, v) {
            (1, [n]) => vec![t("version"), Op::Space, t(n.to_string()), Op::Punct(";")],
            (8, [ty, _cc, proto, linkage]) => {
                let n = self.fns.len();
                self.fns.push((*ty, *proto != 0));
                if *proto == 0 {
                    self.defined.push(n);
                }
                *def = Some(Def::Func(n));
                let mut ops = vec![Op::Start, t(if *proto != 0 { "declare" } else { "define" })];
                match linkage {
                    0 => ops.extend([Op::Space, t("external")]),
                    3 => ops.extend([Op::Space, t("internal")]),
                    _ => {}
                }
                ops.extend([Op::Finish, Op::Space, Op::Start]);
                let name = format!("@f{n}");
                match self.ty(*ty).cloned() {
                    Some(Type::Function(ft)) => {
                        ops.push(Op::Flush);
                        self.fn_type_ops(&mut ops, &ft, Some(&name), false);
                    }
                    _ => {
                        self.type_ops(&mut ops, *ty, None, false);
                        ops.extend([Op::Space, t(name), Op::Open("("), Op::Close(")")]);
                    }
                }
                ops.extend([Op::Punct(";"), Op::Finish]);
                ops
            }
            _ => Vec::new(),
        }
    }

    fn type_record(&mut self, code: u64, v: &[u64], def: &mut Option<Def>) -> Vec<Op> {
        let id32 = |x: u64| TypeId(u32::try_from(x).unwrap_or(u32::MAX));
        let ty = match (code, v) {
            (1, [n]) => return vec![t("count"), Op::Space, t(n.to_string()), Op::Punct(";")],
            (2, _) => Type::Void,
            (3, _) => Type::Float,
            (4, _) => Type::Double,
            (7, [w]) => Type::Int(u32::try_from(*w).unwrap_or(u32::MAX)),
            (7, _) => Type::Int(32),
            (12, [n, e]) => Type::Vector {
                len: u32::try_from(*n).unwrap_or(u32::MAX),
                elem: id32(*e),
            },
            (21, [va, r, ps @ ..]) => Type::Function(FunctionType {
                vararg: *va != 0,
                ret: id32(*r),
                params: ps.iter().map(|&p| id32(p)).collect(),
            }),
            (12 | 21, _) => Type::Void,
            _ => return Vec::new(),
        };
        let n = self.types.len();
        *def = Some(Def::Type(n));
        let is_fn = matches!(ty, Type::Function(_));
        self.types.push(ty);
        let mut ops = vec![t(format!("@t{n}")), Op::Space, t("="), Op::Space];
        if is_fn {
            ops.push(Op::Start);
        }
        self.type_ops(&mut ops, n as u64, None, false);
        ops.push(Op::Punct(";"));
        if is_fn {
            ops.push(Op::Finish);
        }
        ops
    }

    /// Ends an open compound initializer (`}`) and the global's indentation.
    fn close_initializers(&mut self, bit: u64) -> Result<(), DisError> {
        let Some((
            Ctx::Globals {
                compound,
                remaining,
                base_tabs,
            },
            _,
        )) = self.stack.last_mut()
        else {
            return Ok(());
        };
        let (was_compound, base) = (*compound, *base_tabs);
        *compound = false;
        *remaining = 0;
        if was_compound {
            while self.fa.tabs() > base + 1 {
                self.fa.apply(Op::Dec);
            }
            let ops = vec![Op::Close("}"), Op::Endline];
            self.check_none(&ops, bit)?;
            self.fa.apply_all(ops);
        }
        while self.fa.tabs() > base {
            self.fa.apply(Op::Dec);
        }
        self.flush();
        Ok(())
    }

    fn globals_record(
        &mut self,
        bit: u64,
        abbrev_id: u32,
        v: &[u64],
        globals: usize,
    ) -> Result<(), DisError> {
        let (code, ops_of) = (v[0], &v[1..]);
        let compound = matches!(
            self.stack.last(),
            Some((Ctx::Globals { compound: true, .. }, _))
        );
        let mut def = None;
        let mut ops = Vec::new();
        let mut after: Option<(bool, u64)> = None; // (opens compound, initializers)
        let mut consumes = false;
        match (code, ops_of) {
            (5, [n]) => ops = vec![t("count"), Op::Space, t(n.to_string()), Op::Punct(";")],
            (0, [align, is_const]) => {
                if compound {
                    self.close_initializers(bit)?;
                }
                let n = self.nglobals;
                def = Some(Def::Global(n));
                let bytes = match align {
                    0 => 0,
                    a if *a <= 64 => 1u64 << (a - 1),
                    _ => 0,
                };
                ops = vec![
                    Op::Start,
                    t(if *is_const != 0 { "const" } else { "var" }),
                    Op::Space,
                    t(format!("@g{n}")),
                    Op::Punct(","),
                    Op::Finish,
                    Op::Space,
                    Op::Start,
                    t("align"),
                    Op::Space,
                    t(bytes.to_string()),
                    Op::Punct(","),
                    Op::Finish,
                ];
                after = Some((false, 1));
            }
            (1, [n]) => {
                if compound {
                    self.close_initializers(bit)?;
                }
                ops = vec![
                    Op::Start,
                    t("initializers"),
                    Op::Space,
                    t(n.to_string()),
                    Op::Finish,
                    Op::Space,
                    Op::Open("{"),
                ];
                after = Some((true, *n));
            }
            (2, [n]) => {
                ops = vec![t("zerofill"), Op::Space, t(n.to_string()), Op::Punct(";")];
                consumes = true;
            }
            (3, bytes) => {
                ops = vec![Op::Start, Op::Open("{")];
                for (i, b) in bytes.iter().enumerate() {
                    if i > 0 {
                        ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                    }
                    ops.push(t(format!("{:3}", b)));
                }
                ops.extend([Op::Close("}"), Op::Finish]);
                consumes = true;
            }
            (4, [target, rest @ ..]) if rest.len() <= 1 => {
                let f = self.fns.len() as u64;
                let name = if *target < f {
                    format!("@f{target}")
                } else {
                    format!("@g{}", target - f)
                };
                ops = vec![t("reloc"), Op::Space, Op::Start, t(name)];
                if let [a] = rest {
                    let a = *a as u32 as i32;
                    let (sign, mag) = if a < 0 {
                        ("-", (a as i64).unsigned_abs())
                    } else {
                        ("+", a as u64)
                    };
                    ops.extend([Op::Space, t(sign), Op::Space, t(mag.to_string())]);
                }
                ops.extend([Op::Punct(";"), Op::Finish]);
                consumes = true;
            }
            _ => {}
        }
        let defines = def.is_some();
        self.emit(bit, abbrev_id, v, globals, ops, def)?;
        if defines {
            self.nglobals += 1;
        }
        let mut close = false;
        if let Some((
            Ctx::Globals {
                compound,
                remaining,
                ..
            },
            _,
        )) = self.stack.last_mut()
        {
            if let Some((opens, n)) = after {
                self.fa.apply(Op::Inc);
                *remaining = n;
                if opens {
                    *compound = true;
                }
            } else if consumes {
                *remaining = remaining.saturating_sub(1);
            }
            close = self.nglobals > 0 && *remaining == 0 && (after.is_some() || consumes);
        }
        if close {
            self.close_initializers(bit)?;
        }
        Ok(())
    }

    fn symtab_record(&mut self, code: u64, v: &[u64]) -> Vec<Op> {
        let (name, chars) = match (code, v) {
            (1, [id, chars @ ..]) => (self.vname(*id), chars),
            (2, [bb, chars @ ..]) => (format!("%b{bb}"), chars),
            _ => return Vec::new(),
        };
        let mut ops = vec![t(name), Op::Space, Op::Punct(":"), Op::Space, Op::Start];
        let char6 = |c: u64| {
            (c < 128 && (c as u8).is_ascii_alphanumeric()) || c == b'.' as u64 || c == b'_' as u64
        };
        if chars.iter().all(|&c| char6(c)) {
            let s: String = chars.iter().map(|&c| c as u8 as char).collect();
            ops.extend([t(format!("\"{s}\"")), Op::Punct(";")]);
        } else {
            ops.push(Op::Open("{"));
            for (i, &c) in chars.iter().enumerate() {
                if i > 0 {
                    ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                }
                ops.push(t(if char6(c) {
                    format!("'{}'", c as u8 as char)
                } else {
                    format!("{c:3}")
                }));
            }
            ops.push(Op::Close("}"));
        }
        ops.push(Op::Finish);
        ops
    }

    fn constants_record(
        &mut self,
        bit: u64,
        abbrev_id: u32,
        v: &[u64],
        globals: usize,
    ) -> Result<(), DisError> {
        let (code, ops_of) = (v[0], &v[1..]);
        let Some((Ctx::Constants { cur, block_tabs }, _)) = self.stack.last() else {
            return Err(internal(bit, "not in a constants block"));
        };
        let (cur, block_tabs) = (*cur, *block_tabs);
        let consts = self.func.as_ref().map_or(0, |f| f.consts);
        let mut def = None;
        let cur_ty = cur.unwrap_or(u64::MAX);
        let head = |me: &Self, ops: &mut Vec<Op>, clusters: usize| {
            ops.extend([t(format!("%c{consts}")), Op::Space, t("="), Op::Space]);
            ops.extend(std::iter::repeat_n(Op::Start, clusters));
            me.type_ops(ops, cur_ty, None, false);
            ops.push(Op::Space);
        };
        let mut ops = Vec::new();
        match (code, ops_of) {
            (1, _) => {
                while self.fa.tabs() > block_tabs + 1 {
                    self.fa.apply(Op::Dec);
                }
                if let [ty] = ops_of {
                    self.type_ops(&mut ops, *ty, None, false);
                    ops.push(t(":"));
                    if let Some((Ctx::Constants { cur, .. }, _)) = self.stack.last_mut() {
                        *cur = Some(*ty);
                    }
                }
            }
            (3, _) => {
                head(self, &mut ops, 1);
                ops.extend([t("undef"), Op::Punct(";"), Op::Finish]);
                def = Some(Def::Const(consts));
            }
            (4, _) => {
                let vv = ops_of.first().copied().unwrap_or(0);
                let i1 = matches!(self.ty(cur_ty), Some(Type::Int(1)));
                let neg = vv & 1 == 1 && !i1;
                head(self, &mut ops, 2);
                ops.extend([
                    t(format!("{}{}", if neg { "-" } else { "" }, vv >> 1)),
                    Op::Punct(";"),
                    Op::Finish,
                    Op::Finish,
                ]);
                def = Some(Def::Const(consts));
            }
            (6, _) => {
                let vv = ops_of.first().copied().unwrap_or(0);
                let text = match self.ty(cur_ty) {
                    Some(Type::Float) => float_text(vv as u32),
                    Some(Type::Double) => double_text(vv),
                    _ => "0".into(),
                };
                head(self, &mut ops, 1);
                ops.extend([t(text), Op::Punct(";"), Op::Finish]);
                def = Some(Def::Const(consts));
            }
            _ => {}
        }
        let defines = def.is_some();
        self.emit(bit, abbrev_id, v, globals, ops, def)?;
        if defines {
            if let Some(f) = self.func.as_mut() {
                f.consts += 1;
            }
        }
        if code == 1 {
            self.fa.apply(Op::Inc);
        }
        Ok(())
    }

    fn function_record(
        &mut self,
        bit: u64,
        abbrev_id: u32,
        v: &[u64],
        globals: usize,
    ) -> Result<(), DisError> {
        let (code, ops_of) = (v[0], &v[1..]);
        let Some(fc) = self.func.as_mut() else {
            return Err(internal(bit, "not in a function block"));
        };
        if fc.terminating {
            fc.terminating = false;
            let bb = fc.bb;
            fc.bb += 1;
            let ops = vec![Op::Dec, t(format!("%b{bb}")), t(":"), Op::Endline, Op::Inc];
            self.check_none(&ops, bit)?;
            self.fa.apply_all(ops);
            self.flush();
        }
        let mut def = None;
        let ops = match (code, ops_of) {
            (1, _) => {
                if let Some(f) = self.func.as_mut() {
                    f.terminating = true;
                }
                match ops_of {
                    [n] => vec![t("blocks"), Op::Space, t(n.to_string()), Op::Punct(";")],
                    _ => Vec::new(),
                }
            }
            (43, [val, ty]) => {
                let mut ops = vec![t("declare"), Op::Space, Op::Start];
                self.type_ops(&mut ops, *ty, None, false);
                ops.extend([Op::Space, t(self.vname(*val)), Op::Punct(";"), Op::Finish]);
                ops
            }
            (43, _) => Vec::new(),
            _ => {
                let ops = self.instruction(bit, code, v, &mut def);
                if let Some(f) = self.func.as_mut() {
                    f.inst += 1;
                    f.terminating = matches!(code, 10 | 11 | 12 | 15);
                }
                ops
            }
        };
        let defines = def.is_some();
        self.emit(bit, abbrev_id, v, globals, ops, def)?;
        if defines {
            if let Some(f) = self.func.as_mut() {
                f.values += 1;
            }
        }
        Ok(())
    }

    /// The PNaClAsm of the current instruction record, from the IR.
    fn instruction(&self, bit: u64, code: u64, rec: &[u64], def: &mut Option<Def>) -> Vec<Op> {
        let Some(fc) = &self.func else {
            return Vec::new();
        };
        let (Some(m), Some(bi)) = (self.ir, fc.body) else {
            return Vec::new();
        };
        let f = &m.function_bodies[bi];
        let Some(inst) = f.insts.get(fc.inst) else {
            return Vec::new();
        };
        if f.inst_bit(fc.inst) != bit || !kind_matches(&inst.kind, code) {
            return Vec::new();
        }
        let mut ops = Vec::new();
        if inst.result().is_some() {
            *def = Some(Def::Value(fc.values));
            ops.extend([t(format!("%v{}", fc.values)), Op::Space]);
        }
        let eq = |ops: &mut Vec<Op>| ops.extend([t("="), Op::Space]);
        let vty = |v: ValueId| m.value_type(f, v).map_or(u64::MAX, |t| t.0 as u64);
        let name = |v: ValueId| self.vname(v.0 as u64);
        let typed = |ops: &mut Vec<Op>, v: ValueId| {
            self.type_ops(ops, vty(v), None, false);
            ops.extend([Op::Space, t(name(v))]);
        };
        let align = |a: crate::ir::Align| t(a.display_bytes().to_string());
        // The `* P, align A;` that ends both `load T* P, align A;` and `store ..., T* P, ...`.
        let pointer_tail = |ops: &mut Vec<Op>, ptr: ValueId, a: crate::ir::Align| {
            ops.extend([
                t("*"),
                Op::Space,
                t(name(ptr)),
                Op::Punct(","),
                Op::Finish,
                Op::Space,
                Op::Start,
                t("align"),
                Op::Space,
                align(a),
                Op::Punct(";"),
                Op::Finish,
            ])
        };
        match &inst.kind {
            InstKind::Binop { op, lhs, rhs, .. } => {
                eq(&mut ops);
                ops.extend([t(op.name()), Op::Space]);
                typed(&mut ops, *lhs);
                ops.extend([Op::Punct(","), Op::Space, t(name(*rhs)), Op::Punct(";")]);
            }
            InstKind::Cast { op, val } => {
                eq(&mut ops);
                ops.extend([t(op.name()), Op::Space]);
                typed(&mut ops, *val);
                ops.extend([Op::Space, t("to"), Op::Space]);
                self.type_ops(&mut ops, inst.ty.0 as u64, None, false);
                ops.push(Op::Punct(";"));
            }
            InstKind::ExtractElement { vec, index } => {
                ops.extend([
                    t(" = "),
                    Op::Space,
                    Op::Start,
                    t("extractelement"),
                    Op::Space,
                ]);
                typed(&mut ops, *vec);
                ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                typed(&mut ops, *index);
                ops.extend([Op::Punct(";"), Op::Finish]);
            }
            InstKind::InsertElement { vec, elt, index } => {
                ops.extend([
                    t(" = "),
                    Op::Space,
                    Op::Start,
                    t("insertelement"),
                    Op::Space,
                ]);
                typed(&mut ops, *vec);
                ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                typed(&mut ops, *elt);
                ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                typed(&mut ops, *index);
                ops.extend([Op::Punct(";"), Op::Finish]);
            }
            InstKind::Ret { val } => {
                ops.extend([t("ret"), Op::Space]);
                match val {
                    None => ops.push(t("void")),
                    Some(v) => typed(&mut ops, *v),
                }
                ops.push(Op::Punct(";"));
            }
            InstKind::Br { target } => {
                ops.extend([t("br"), Op::Space, Op::Start]);
                ops.extend(label(*target, ";"));
            }
            InstKind::CondBr {
                cond,
                then_bb,
                else_bb,
            } => {
                ops.extend([t("br"), Op::Space, Op::Start]);
                typed(&mut ops, *cond);
                ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                ops.extend(label(*then_bb, ","));
                ops.extend([Op::Space, Op::Start]);
                ops.extend(label(*else_bb, ";"));
            }
            InstKind::Switch(s) => {
                let ty = rec.get(1).copied().unwrap_or(u64::MAX);
                let i1 = matches!(self.ty(ty), Some(Type::Int(1)));
                ops.extend([t("switch"), Op::Space, Op::Start, Op::Start]);
                self.type_ops(&mut ops, ty, None, false);
                ops.extend([
                    Op::Space,
                    t(name(s.cond)),
                    Op::Finish,
                    Op::Space,
                    t("{"),
                    Op::Finish,
                    Op::Endline,
                    Op::Inc,
                    Op::Start,
                    t("default"),
                    t(":"),
                    Op::Space,
                    Op::Finish,
                ]);
                switch_br(&mut ops, s.default);
                for c in &s.cases {
                    ops.push(Op::Start);
                    self.type_ops(&mut ops, ty, None, false);
                    let v = if i1 {
                        (c.value & 1).to_string()
                    } else {
                        c.value.to_string()
                    };
                    ops.extend([Op::Space, t(v), t(":"), Op::Space, Op::Finish]);
                    switch_br(&mut ops, c.target);
                }
                ops.extend([Op::Dec, t("}")]);
            }
            InstKind::Unreachable => ops.extend([t("unreachable"), Op::Punct(";")]),
            InstKind::Phi { incoming } => {
                ops.extend([t("="), Op::Start, Op::Space, t("phi"), Op::Space]);
                self.type_ops(&mut ops, inst.ty.0 as u64, None, false);
                for (i, (v, b)) in f.incoming(*incoming).iter().enumerate() {
                    if i > 0 {
                        ops.push(Op::Punct(","));
                    }
                    ops.extend([
                        Op::Finish,
                        Op::Space,
                        Op::Start,
                        Op::Open("["),
                        t(name(*v)),
                        Op::Punct(","),
                        Op::Space,
                        t(format!("%b{b}")),
                        Op::Close("]"),
                    ]);
                }
                ops.extend([Op::Punct(";"), Op::Finish]);
            }
            InstKind::Alloca { size, align: a } => {
                eq(&mut ops);
                ops.extend([
                    Op::Start,
                    t("alloca"),
                    Op::Space,
                    t("i8"),
                    Op::Punct(","),
                    Op::Finish,
                    Op::Space,
                    Op::Start,
                ]);
                typed(&mut ops, *size);
                ops.extend([
                    Op::Punct(","),
                    Op::Finish,
                    Op::Space,
                    Op::Start,
                    t("align"),
                    Op::Space,
                    align(*a),
                    Op::Punct(";"),
                    Op::Finish,
                ]);
            }
            InstKind::Load { ptr, align: a } => {
                eq(&mut ops);
                ops.extend([Op::Start, t("load"), Op::Space]);
                self.type_ops(&mut ops, inst.ty.0 as u64, None, false);
                pointer_tail(&mut ops, *ptr, *a);
            }
            InstKind::Store { ptr, val, align: a } => {
                ops.extend([Op::Start, t("store"), Op::Space]);
                typed(&mut ops, *val);
                ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                self.type_ops(&mut ops, vty(*val), None, false);
                pointer_tail(&mut ops, *ptr, *a);
            }
            InstKind::Cmp { pred, lhs, rhs } => {
                eq(&mut ops);
                ops.extend([
                    Op::Start,
                    t(if pred.is_float() { "fcmp" } else { "icmp" }),
                    Op::Space,
                    t(pred.name()),
                    Op::Finish,
                    Op::Space,
                    Op::Start,
                ]);
                typed(&mut ops, *lhs);
                ops.extend([
                    Op::Punct(","),
                    Op::Finish,
                    Op::Space,
                    Op::Start,
                    t(name(*rhs)),
                    Op::Punct(";"),
                    Op::Finish,
                ]);
            }
            InstKind::Select { cond, t: tv, f: fv } => {
                eq(&mut ops);
                ops.extend([Op::Start, t("select"), Op::Space]);
                typed(&mut ops, *cond);
                ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                typed(&mut ops, *tv);
                ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                typed(&mut ops, *fv);
                ops.extend([Op::Punct(";"), Op::Finish]);
            }
            InstKind::Call(c) => {
                if inst.result().is_some() {
                    eq(&mut ops);
                }
                if c.is_tail() {
                    ops.extend([t("tail"), Op::Space]);
                }
                ops.extend([t("call"), Op::Space]);
                let callee = match c.callee {
                    Callee::Direct(n) => format!("@f{n}"),
                    Callee::Indirect(v) => name(v),
                };
                if code == 44 && callee.starts_with("@f") {
                    // An indirect call through a function address (extension).
                    ops.extend([t("indirect"), Op::Space]);
                }
                self.type_ops(&mut ops, inst.ty.0 as u64, None, false);
                ops.extend([Op::Space, Op::Start, t(callee), Op::Open("("), Op::Start]);
                for (i, a) in f.args(c).iter().enumerate() {
                    if i > 0 {
                        ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
                    }
                    typed(&mut ops, *a);
                }
                ops.extend([Op::Close(")"), Op::Punct(";"), Op::Finish, Op::Finish]);
            }
        }
        ops
    }
}

/// Whether an IR instruction can come from a record with this code.
fn kind_matches(k: &InstKind, code: u64) -> bool {
    matches!(
        (k, code),
        (InstKind::Binop { .. }, 2)
            | (InstKind::Cast { .. }, 3)
            | (InstKind::ExtractElement { .. }, 6)
            | (InstKind::InsertElement { .. }, 7)
            | (InstKind::Cmp { .. }, 9 | 28)
            | (InstKind::Ret { .. }, 10)
            | (InstKind::Br { .. } | InstKind::CondBr { .. }, 11)
            | (InstKind::Switch(_), 12)
            | (InstKind::Unreachable, 15)
            | (InstKind::Phi { .. }, 16)
            | (InstKind::Alloca { .. }, 19)
            | (InstKind::Load { .. }, 20)
            | (InstKind::Store { .. }, 24)
            | (InstKind::Select { .. }, 29)
            | (InstKind::Call(_), 34 | 44)
    )
}

/// ` <@aN>` / ` <%aN>` for records read with a user abbreviation (pnacl-bcdis's abbreviation
/// index directive).
fn annotation(abbrev_id: u32, globals: usize) -> Vec<Op> {
    let mut ops = vec![Op::Flush];
    if abbrev_id >= 4 {
        let i = (abbrev_id - 4) as usize;
        let name = if i < globals {
            format!("@a{i}")
        } else {
            format!("%a{}", i - globals)
        };
        ops.extend([
            Op::Space,
            Op::Start,
            Op::Open("<"),
            t(name),
            Op::Close(">"),
            Op::Finish,
        ]);
    }
    ops
}

/// Tokens of an abbreviation (pnacl-bcdis's abbreviation directive).
fn abbrev_ops(ops: &mut Vec<Op>, a: &Abbrev) {
    ops.extend([Op::Flush, Op::Start, Op::Open("<")]);
    let mut i = 0;
    let mut first = true;
    while i < a.ops.len() {
        if !first {
            ops.extend([Op::Punct(","), Op::Finish, Op::Space, Op::Start]);
        }
        first = false;
        i = abbrev_expr(ops, a, i);
    }
    ops.extend([Op::Close(">"), Op::Finish]);
}

fn abbrev_expr(ops: &mut Vec<Op>, a: &Abbrev, i: usize) -> usize {
    match a.ops[i] {
        AbbrevOp::Literal(v) => ops.push(t(v.to_string())),
        AbbrevOp::Fixed(w) | AbbrevOp::Vbr(w) => {
            let k = if matches!(a.ops[i], AbbrevOp::Fixed(_)) {
                "fixed"
            } else {
                "vbr"
            };
            ops.extend([
                Op::Start,
                t(k),
                Op::Open("("),
                t(w.to_string()),
                Op::Close(")"),
                Op::Finish,
            ]);
        }
        AbbrevOp::Char6 => ops.push(t("char6")),
        AbbrevOp::Array => {
            ops.extend([t("array"), Op::Start, Op::Open("(")]);
            let next = if i + 1 < a.ops.len() {
                abbrev_expr(ops, a, i + 1)
            } else {
                i + 1
            };
            ops.extend([Op::Close(")"), Op::Finish]);
            return next;
        }
    }
    i + 1
}
