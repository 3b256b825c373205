//! The PNaClAsm assembler: text → records → bits.
//!
//! The input is PNaClAsm as [`super::dis`] prints it, either the bare assembly or the whole
//! three-column dump (for lines containing `|`, the text after the second `|` is used).
//! Every statement is turned into its record right away, from what the text itself defines
//! (types by their spelling, value ids by counting functions, globals, parameters,
//! constants and instruction values); no decoder is involved. Abbreviation widths of
//! blocks are inferred from the number of abbreviations a block can use (see
//! [`infer_width`]) unless the text gives one, so the text is assembled twice: a first pass
//! counts each block's local abbreviations, the second writes bits.
//!
//! The extensions to PNaClAsm that [`super::dis`] prints (see the module comment of
//! [`super`]) are all accepted here.

use std::collections::{HashMap, VecDeque};

use super::lex::{extract, Lexer, Tok, Token};
use crate::bitstream::header::HeaderField;
use crate::bitstream::{Abbrev, AbbrevOp, Header, StreamWriter};

/// A syntax or semantic error in PNaClAsm text, at a 1-based line and column of the input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct AsmError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl AsmError {
    pub fn new(line: usize, column: usize, message: impl Into<String>) -> Self {
        AsmError {
            line,
            column,
            message: message.into(),
        }
    }
}

type Result<T> = std::result::Result<T, AsmError>;

/// Assembles PNaClAsm text (or a three-column dump) into a pexe.
pub fn assemble(text: &str) -> Result<Vec<u8>> {
    let ex = extract(text);
    let fix = |e: AsmError| {
        let off = ex.offsets.get(e.line.wrapping_sub(1)).copied().unwrap_or(0);
        AsmError::new(e.line, e.column + off, e.message)
    };
    // Pass 1 only counts the local abbreviations of each block (for the blocks' abbreviation
    // widths). A text that never says `abbrev` defines none: every count is zero and the
    // writing pass alone gives the same bytes. That halves the work on such texts (the
    // differential fuzzer's generated programs, where assembling was a sixth of a round).
    // If that pass fails, the text goes the two-pass way below, so that an error is the
    // one it always was (pass 1 reports a syntax error before pass 2 a writing error).
    if memchr::memmem::find(ex.text.as_bytes(), b"abbrev").is_none() {
        if let Ok(bytes) = write_pass(&ex.text, Vec::new()) {
            return Ok(bytes);
        }
    }
    // Pass 1: the number of local abbreviations of each block, in block order.
    let mut counter = CountSink::default();
    Assembler::new(Vec::new())
        .run(&ex.text, &mut counter)
        .map_err(fix)?;
    write_pass(&ex.text, counter.counts).map_err(fix)
}

/// Pass 2: writes the bits of `text`, given pass 1's local abbreviation counts.
fn write_pass(text: &str, local_counts: Vec<usize>) -> Result<Vec<u8>> {
    let mut a = Assembler::new(local_counts);
    let mut w = WriteSink::default();
    a.run(text, &mut w)?;
    let end = Pos { line: 0, col: 0 };
    let header = a.header_bytes(end)?;
    let mut bytes = match w.writer.take() {
        Some(w) => w.finish().map_err(|e| AsmError::new(0, 0, e.to_string()))?,
        None => header,
    };
    bytes.extend_from_slice(&a.trailing);
    Ok(bytes)
}

/// Position of a statement (for errors raised while writing).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pos {
    pub line: u32,
    pub col: u32,
}

impl Pos {
    fn err(self, m: impl Into<String>) -> AsmError {
        AsmError::new(self.line as usize, self.col as usize, m)
    }
}

/// What a statement produces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Out {
    /// Enter a block; `width` is `None` when it is to be inferred, `globals` is the number
    /// of abbreviations the abbreviations block defined for this block id.
    Enter {
        block_id: u32,
        width: Option<u32>,
        globals: usize,
    },
    End,
    Abbrev(Abbrev),
    Record {
        abbrev_id: u32,
        values: Vec<u64>,
    },
}

/// Receives the entries of an assembled text.
pub(crate) trait Sink {
    fn out(&mut self, a: &Assembler, out: Out, pos: Pos) -> Result<()>;
}

/// Collects entries (for the disassembler's check of each printed statement).
impl Sink for Vec<Out> {
    fn out(&mut self, _: &Assembler, out: Out, _: Pos) -> Result<()> {
        self.push(out);
        Ok(())
    }
}

/// Pass 1: counts local abbreviations per block (definitions inside the abbreviations
/// block are global ones and do not count).
#[derive(Default)]
struct CountSink {
    counts: Vec<usize>,
    open: Vec<(usize, bool)>,
}

impl Sink for CountSink {
    fn out(&mut self, _: &Assembler, out: Out, _: Pos) -> Result<()> {
        match out {
            Out::Enter { block_id, .. } => {
                self.open.push((self.counts.len(), block_id == BLOCKINFO));
                self.counts.push(0);
            }
            Out::End => {
                self.open.pop();
            }
            Out::Abbrev(_) => {
                if let Some(&(i, false)) = self.open.last() {
                    self.counts[i] += 1;
                }
            }
            Out::Record { .. } => {}
        }
        Ok(())
    }
}

/// Pass 2: writes bits.
#[derive(Default)]
struct WriteSink {
    writer: Option<StreamWriter>,
    blocks: usize,
}

impl Sink for WriteSink {
    fn out(&mut self, a: &Assembler, out: Out, pos: Pos) -> Result<()> {
        if self.writer.is_none() {
            self.writer = Some(StreamWriter::new(&a.header_bytes(pos)?));
        }
        let Some(w) = self.writer.as_mut() else {
            return Err(pos.err("internal error: no writer"));
        };
        let r = match out {
            Out::Enter {
                block_id,
                width,
                globals,
            } => {
                let locals = a.local_counts.get(self.blocks).copied().unwrap_or(0);
                self.blocks += 1;
                let width = width.unwrap_or_else(|| infer_width(globals + locals));
                w.enter_block(block_id, width)
            }
            Out::End => w.end_block(),
            Out::Abbrev(ab) => w.define_abbrev(&ab).map(|_| ()),
            Out::Record { abbrev_id, values } => w.write_record(abbrev_id, &values),
        };
        r.map_err(|e| pos.err(e.kind.to_string()))
    }
}

/// The abbreviation width a block gets when the text does not give one: the fewest bits
/// (at least 2) that hold the largest abbreviation id the block can use, which is 3 plus
/// the number of global and local abbreviations (what pnacl-finalize writes).
pub fn infer_width(abbrevs: usize) -> u32 {
    let max_id = 3 + abbrevs as u64;
    (64 - max_id.leading_zeros()).max(2)
}

/// Block ids.
const BLOCKINFO: u32 = 0;
const MODULE: u32 = 8;
const CONSTANTS: u32 = 11;
const FUNCTION: u32 = 12;
const SYMTAB: u32 = 14;
const TYPES: u32 = 17;
const GLOBALS: u32 = 19;

/// The PNaClAsm name of a block id (`None` for ids without one).
pub(crate) fn block_keyword(id: u32) -> Option<&'static str> {
    Some(match id {
        BLOCKINFO => "abbreviations",
        MODULE => "module",
        CONSTANTS => "constants",
        FUNCTION => "function",
        SYMTAB => "valuesymtab",
        TYPES => "types",
        GLOBALS => "globals",
        _ => return None,
    })
}

fn keyword_block(name: &str) -> Option<u32> {
    Some(match name {
        "abbreviations" => BLOCKINFO,
        "module" => MODULE,
        "constants" => CONSTANTS,
        "function" => FUNCTION,
        "valuesymtab" => SYMTAB,
        "types" => TYPES,
        "globals" => GLOBALS,
        _ => return None,
    })
}

/// A type as the types block defines it; component types by id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum TypeKey {
    Void,
    Float,
    Double,
    Int(u64),
    Vector(u64, u64),
    Func(bool, u64, Vec<u64>),
}

/// A type as written.
#[derive(Debug, Clone, PartialEq)]
enum PType {
    Void,
    Float,
    Double,
    Int(u64),
    Vector(u64, Box<PType>),
    Func(bool, Box<PType>, Vec<PType>),
    /// `@tN`
    Ref(u64),
}

/// Scalar class of a type, where the encoding of literals depends on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Int(u64),
    Float,
    Double,
    Other,
}

struct Frame {
    block_id: u32,
    /// Global abbreviations usable in this block.
    globals: usize,
    /// Local abbreviations defined so far.
    locals: usize,
    /// Globals block: an `initializers N {` is open.
    compound: bool,
}

#[derive(Default, Clone, Copy)]
struct FnCounts {
    params: u64,
    consts: u64,
    values: u64,
}

/// What a successfully parsed statement changes (applied only after the statement parsed
/// and its output was accepted, so a failed statement leaves the state untouched).
enum Effect {
    None,
    Magic,
    HeaderField(HeaderField),
    HeaderRaw(Vec<u8>),
    Trailing(Vec<u8>),
    Enter(u32, Option<u64>),
    End,
    CompoundOpen,
    CompoundClose,
    LocalAbbrev,
    GlobalAbbrev(u32),
    SetBid(u32),
    Type(Option<TypeKey>),
    Function,
    Global,
    Const,
    Value,
}

/// The assembler's state: everything earlier text defined.
pub(crate) struct Assembler {
    magic_seen: bool,
    fields: Vec<HeaderField>,
    raw_header: Option<Vec<u8>>,
    started: bool,
    pub(crate) trailing: Vec<u8>,
    types: Vec<Option<TypeKey>>,
    type_ids: HashMap<TypeKey, u64>,
    nfuncs: u64,
    nglobals: u64,
    blockinfo: HashMap<u32, usize>,
    setbid: Option<u32>,
    frames: Vec<Frame>,
    func: FnCounts,
    /// Local abbreviation counts per block (from pass 1), for width inference.
    local_counts: Vec<usize>,
}

/// Token stream with lookahead.
struct P<'a> {
    lx: Lexer<'a>,
    buf: VecDeque<Token<'a>>,
}

impl<'a> P<'a> {
    fn new(src: &'a str) -> Self {
        P {
            lx: Lexer::new(src),
            buf: VecDeque::new(),
        }
    }
    fn peek(&mut self, n: usize) -> Result<Token<'a>> {
        while self.buf.len() <= n {
            let t = self.lx.next_token()?;
            self.buf.push_back(t);
        }
        Ok(self.buf[n])
    }
    fn tok(&mut self, n: usize) -> Result<Tok<'a>> {
        Ok(self.peek(n)?.tok)
    }
    fn next(&mut self) -> Result<Token<'a>> {
        self.peek(0)?;
        self.buf
            .pop_front()
            .ok_or_else(|| AsmError::new(0, 0, "internal error: empty token buffer"))
    }
    fn err<T>(&mut self, what: &str) -> Result<T> {
        let t = self.peek(0)?;
        Err(AsmError::new(
            t.line as usize,
            t.col as usize,
            format!("expected {what}, found {}", t.tok.describe()),
        ))
    }
    fn is(&mut self, n: usize, c: u8) -> Result<bool> {
        Ok(self.tok(n)? == Tok::P(c))
    }
    fn is_ident(&mut self, n: usize, s: &str) -> Result<bool> {
        Ok(self.tok(n)? == Tok::Ident(s))
    }
    fn expect(&mut self, c: u8) -> Result<Token<'a>> {
        if self.is(0, c)? {
            self.next()
        } else {
            self.err(&format!("'{}'", c as char))
        }
    }
    fn expect_ident(&mut self, s: &str) -> Result<Token<'a>> {
        if self.is_ident(0, s)? {
            self.next()
        } else {
            self.err(&format!("'{s}'"))
        }
    }
    fn eat(&mut self, c: u8) -> Result<bool> {
        if self.is(0, c)? {
            self.next()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }
    /// An unsigned number (decimal, or hexadecimal with `0x`).
    fn num(&mut self) -> Result<u64> {
        match self.tok(0)? {
            Tok::Num(s) if !s.starts_with('-') => match parse_u64(s) {
                Ok(v) => {
                    self.next()?;
                    Ok(v)
                }
                Err(_) => self.err("an unsigned integer below 2^64"),
            },
            _ => self.err("an unsigned integer"),
        }
    }
    /// A signed decimal integer as sign and magnitude (so `-0` is kept).
    fn signed(&mut self) -> Result<(bool, u64)> {
        match self.tok(0)? {
            Tok::Num(s) => {
                let (neg, digits) = match s.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, s),
                };
                match digits.parse::<u64>() {
                    Ok(v) => {
                        self.next()?;
                        Ok((neg, v))
                    }
                    Err(_) => self.err("an integer"),
                }
            }
            _ => self.err("an integer"),
        }
    }
    fn pos(&mut self) -> Result<Pos> {
        let t = self.peek(0)?;
        Ok(Pos {
            line: t.line,
            col: t.col,
        })
    }
}

fn parse_u64(s: &str) -> std::result::Result<u64, std::num::ParseIntError> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
}

/// PNaCl's sign rotation (sign in bit 0); as LLVM writes it, i64::MIN becomes 1.
pub(crate) fn sign_rotate(neg: bool, mag: u64) -> u64 {
    if neg {
        mag.wrapping_shl(1) | 1
    } else {
        mag.wrapping_shl(1)
    }
}

fn binop_code(name: &str) -> Option<u64> {
    Some(match name {
        "add" | "fadd" => 0,
        "sub" | "fsub" => 1,
        "mul" | "fmul" => 2,
        "udiv" => 3,
        "sdiv" | "fdiv" => 4,
        "urem" => 5,
        "srem" | "frem" => 6,
        "shl" => 7,
        "lshr" => 8,
        "ashr" => 9,
        "and" => 10,
        "or" => 11,
        "xor" => 12,
        _ => return None,
    })
}

fn cast_code(name: &str) -> Option<u64> {
    Some(match name {
        "trunc" => 0,
        "zext" => 1,
        "sext" => 2,
        "fptoui" => 3,
        "fptosi" => 4,
        "uitofp" => 5,
        "sitofp" => 6,
        "fptrunc" => 7,
        "fpext" => 8,
        "ptrtoint" => 9,
        "inttoptr" => 10,
        "bitcast" => 11,
        _ => return None,
    })
}

fn icmp_code(name: &str) -> Option<u64> {
    Some(match name {
        "eq" => 32,
        "ne" => 33,
        "ugt" => 34,
        "uge" => 35,
        "ult" => 36,
        "ule" => 37,
        "sgt" => 38,
        "sge" => 39,
        "slt" => 40,
        "sle" => 41,
        _ => return None,
    })
}

fn fcmp_code(name: &str) -> Option<u64> {
    Some(match name {
        "false" => 0,
        "oeq" => 1,
        "ogt" => 2,
        "oge" => 3,
        "olt" => 4,
        "ole" => 5,
        "one" => 6,
        "ord" => 7,
        "uno" => 8,
        "ueq" => 9,
        "ugt" => 10,
        "uge" => 11,
        "ult" => 12,
        "ule" => 13,
        "une" => 14,
        "true" => 15,
        _ => return None,
    })
}

fn align_code(pos: Pos, a: u64) -> Result<u64> {
    if a == 0 {
        Ok(0)
    } else if a.is_power_of_two() {
        Ok(a.trailing_zeros() as u64 + 1)
    } else {
        Err(pos.err(format!("alignment {a} is not a power of 2")))
    }
}

fn is_type_start(t: Tok) -> bool {
    match t {
        Tok::Ident(s) => {
            matches!(s, "void" | "float" | "double")
                || (s.len() > 1 && s.starts_with('i') && s[1..].bytes().all(|c| c.is_ascii_digit()))
        }
        Tok::P(b'<') | Tok::Global(b't', _) => true,
        _ => false,
    }
}

impl Assembler {
    pub(crate) fn new(local_counts: Vec<usize>) -> Self {
        Assembler {
            magic_seen: false,
            fields: Vec::new(),
            raw_header: None,
            started: false,
            trailing: Vec::new(),
            types: Vec::new(),
            type_ids: HashMap::new(),
            nfuncs: 0,
            nglobals: 0,
            blockinfo: HashMap::new(),
            setbid: None,
            frames: Vec::new(),
            func: FnCounts::default(),
            local_counts,
        }
    }

    /// Assembles a whole text into `sink`.
    fn run(&mut self, text: &str, sink: &mut dyn Sink) -> Result<()> {
        let mut p = P::new(text);
        while p.tok(0)? != Tok::Eof {
            self.statement(&mut p, sink)?;
        }
        if !self.frames.is_empty() {
            let t = p.peek(0)?;
            return Err(AsmError::new(
                t.line as usize,
                t.col as usize,
                format!(
                    "{} block(s) not closed at the end of the text",
                    self.frames.len()
                ),
            ));
        }
        Ok(())
    }

    /// Assembles a piece of text (whole statements) on top of the current state.
    pub(crate) fn feed(&mut self, text: &str, outs: &mut Vec<Out>) -> Result<()> {
        let mut p = P::new(text);
        while p.tok(0)? != Tok::Eof {
            self.statement(&mut p, outs)?;
        }
        Ok(())
    }

    /// The header bytes the text defined.
    pub(crate) fn header_bytes(&self, pos: Pos) -> Result<Vec<u8>> {
        if let Some(raw) = &self.raw_header {
            return Ok(raw.clone());
        }
        let mut h = Header::standard();
        if !self.fields.is_empty() {
            h.fields = self.fields.clone();
        }
        let bytes = h.to_bytes();
        if bytes.len() > u16::MAX as usize {
            return Err(pos.err("header too large"));
        }
        Ok(bytes)
    }

    fn block_id(&self) -> Option<u32> {
        self.frames.last().map(|f| f.block_id)
    }

    fn next_value(&self) -> u64 {
        self.nfuncs
            .wrapping_add(self.nglobals)
            .wrapping_add(self.func.params)
            .wrapping_add(self.func.consts)
            .wrapping_add(self.func.values)
    }

    /// Absolute value id of a value reference token.
    fn abs_of(&self, t: Tok) -> Option<u64> {
        let f = self.nfuncs;
        let g = f.wrapping_add(self.nglobals);
        let p = g.wrapping_add(self.func.params);
        let c = p.wrapping_add(self.func.consts);
        Some(match t {
            Tok::Global(b'f', n) => n,
            Tok::Global(b'g', n) => f.wrapping_add(n),
            Tok::Local(b'p', n) => g.wrapping_add(n),
            Tok::Local(b'c', n) => p.wrapping_add(n),
            Tok::Local(b'v', n) => c.wrapping_add(n),
            _ => return None,
        })
    }

    fn value(&self, p: &mut P) -> Result<u64> {
        let t = p.tok(0)?;
        match self.abs_of(t) {
            Some(v) => {
                p.next()?;
                Ok(v)
            }
            None => p.err("a value (@f, @g, %p, %c or %v)"),
        }
    }

    /// A value operand as a relative id (32-bit, as the PNaCl writer computes it).
    fn rel(&self, p: &mut P) -> Result<u64> {
        let v = self.value(p)?;
        Ok(self.next_value().wrapping_sub(v) & 0xffff_ffff)
    }

    // ---- types ----

    /// A type as written (function types only when `allow_fn`).
    fn ptype(&self, p: &mut P, allow_fn: bool) -> Result<PType> {
        self.ptype_at(p, allow_fn, 0)
    }

    fn ptype_at(&self, p: &mut P, allow_fn: bool, depth: u32) -> Result<PType> {
        if depth > 8 {
            return p.err("a type (types nest at most a few levels deep)");
        }
        let t = p.tok(0)?;
        let base = match t {
            Tok::Ident("void") => PType::Void,
            Tok::Ident("float") => PType::Float,
            Tok::Ident("double") => PType::Double,
            Tok::Ident(s) if is_type_start(t) => PType::Int(s[1..].parse().map_err(|_| {
                let tk = p.buf[0];
                AsmError::new(tk.line as usize, tk.col as usize, "integer width too large")
            })?),
            Tok::Global(b't', n) => PType::Ref(n),
            Tok::P(b'<') => {
                p.next()?;
                let n = p.num()?;
                p.expect_ident("x")?;
                let e = self.ptype_at(p, false, depth + 1)?;
                p.expect(b'>')?;
                let v = PType::Vector(n, Box::new(e));
                return self.fn_suffix(p, v, allow_fn);
            }
            _ => return p.err("a type"),
        };
        p.next()?;
        self.fn_suffix(p, base, allow_fn)
    }

    fn fn_suffix(&self, p: &mut P, ret: PType, allow_fn: bool) -> Result<PType> {
        if !allow_fn || !p.is(0, b'(')? {
            return Ok(ret);
        }
        let (vararg, params) = self.param_list(p, false)?;
        Ok(PType::Func(vararg, Box::new(ret), params))
    }

    /// `( T [%pN], ... [, ...] )`; with `names`, parameter names are allowed.
    fn param_list(&self, p: &mut P, names: bool) -> Result<(bool, Vec<PType>)> {
        p.expect(b'(')?;
        let mut params = Vec::new();
        let mut vararg = false;
        if !p.eat(b')')? {
            loop {
                if p.tok(0)? == Tok::Ellipsis {
                    p.next()?;
                    vararg = true;
                    p.expect(b')')?;
                    break;
                }
                params.push(self.ptype(p, false)?);
                if names {
                    if let Tok::Local(b'p', _) = p.tok(0)? {
                        p.next()?;
                    }
                }
                if p.eat(b')')? {
                    break;
                }
                p.expect(b',')?;
            }
        }
        Ok((vararg, params))
    }

    fn key_of(&self, t: &PType, pos: Pos) -> Result<TypeKey> {
        Ok(match t {
            PType::Void => TypeKey::Void,
            PType::Float => TypeKey::Float,
            PType::Double => TypeKey::Double,
            PType::Int(n) => TypeKey::Int(*n),
            PType::Vector(n, e) => TypeKey::Vector(*n, self.type_id(e, pos)?),
            PType::Func(va, r, ps) => {
                let mut ids = Vec::with_capacity(ps.len());
                for p in ps {
                    ids.push(self.type_id(p, pos)?);
                }
                TypeKey::Func(*va, self.type_id(r, pos)?, ids)
            }
            PType::Ref(n) => match self.types.get(*n as usize) {
                Some(Some(k)) => k.clone(),
                _ => return Err(pos.err(format!("@t{n} has no known definition"))),
            },
        })
    }

    /// The type id of a written type.
    fn type_id(&self, t: &PType, pos: Pos) -> Result<u64> {
        if let PType::Ref(n) = t {
            return Ok(*n);
        }
        let k = self.key_of(t, pos)?;
        self.type_ids.get(&k).copied().ok_or_else(|| {
            pos.err(format!(
                "type {} is not defined in the types block",
                show(t)
            ))
        })
    }

    fn type_and_id(&self, p: &mut P) -> Result<(PType, u64)> {
        let pos = p.pos()?;
        let t = self.ptype(p, false)?;
        let id = self.type_id(&t, pos)?;
        Ok((t, id))
    }

    fn class(&self, t: &PType) -> Class {
        let key = match t {
            PType::Ref(n) => match self.types.get(*n as usize) {
                Some(Some(k)) => k.clone(),
                _ => return Class::Other,
            },
            PType::Int(n) => return Class::Int(*n),
            PType::Float => return Class::Float,
            PType::Double => return Class::Double,
            _ => return Class::Other,
        };
        match key {
            TypeKey::Int(n) => Class::Int(n),
            TypeKey::Float => Class::Float,
            TypeKey::Double => Class::Double,
            _ => Class::Other,
        }
    }

    /// An integer literal for a value of class `c` (i1's `1` is true, i.e. -1).
    fn int_lit(&self, p: &mut P, c: Class) -> Result<u64> {
        let (neg, mag) = p.signed()?;
        if c == Class::Int(1) && mag == 1 {
            return Ok(3);
        }
        Ok(sign_rotate(neg, mag))
    }

    /// A floating point literal (`1.5`, `-0`, `1e+20`, `inf`, `-nan`) as IEEE bits.
    fn float_lit(&self, p: &mut P, double: bool) -> Result<u64> {
        let neg = p.eat(b'-')?;
        let t = p.tok(0)?;
        let bits = match t {
            Tok::Ident("nan") if p.is(1, b'(')? => {
                // `nan(0xBITS)`: a NaN given by all its bits.
                p.next()?;
                p.next()?;
                let pos = p.pos()?;
                let bits = p.num()?;
                if !double && bits > u32::MAX as u64 {
                    return Err(pos.err("float bits must fit 32 bits"));
                }
                p.expect(b')')?;
                return if neg {
                    Err(pos.err("a NaN given by its bits takes no sign"))
                } else {
                    Ok(bits)
                };
            }
            Tok::Ident("nan") => {
                if double {
                    0x7ff8_0000_0000_0000
                } else {
                    0x7fc0_0000
                }
            }
            Tok::Ident("inf") => {
                if double {
                    f64::INFINITY.to_bits()
                } else {
                    f32::INFINITY.to_bits() as u64
                }
            }
            Tok::Num(s) if !neg => {
                let r = if double {
                    s.parse::<f64>().map(f64::to_bits)
                } else {
                    s.parse::<f32>().map(|f| f.to_bits() as u64)
                };
                match r {
                    Ok(b) => b,
                    Err(_) => return p.err("a floating point number"),
                }
            }
            _ => return p.err("a floating point number, inf or nan"),
        };
        p.next()?;
        let sign = if !neg {
            0
        } else if double {
            1 << 63
        } else {
            1 << 31
        };
        Ok(bits | sign)
    }

    // ---- statements ----

    fn statement(&mut self, p: &mut P, sink: &mut dyn Sink) -> Result<()> {
        let pos = p.pos()?;
        let (outs, effect) = self.parse_statement(p)?;
        for o in outs {
            sink.out(self, o, pos)?;
        }
        self.apply(effect);
        Ok(())
    }

    fn apply(&mut self, e: Effect) {
        match e {
            Effect::None => {}
            Effect::Magic => self.magic_seen = true,
            Effect::HeaderField(f) => self.fields.push(f),
            Effect::HeaderRaw(b) => self.raw_header = Some(b),
            Effect::Trailing(b) => self.trailing.extend_from_slice(&b),
            Effect::Enter(id, params) => {
                self.started = true;
                let globals = self.blockinfo.get(&id).copied().unwrap_or(0);
                // A function block nested in another one is not a function body.
                let in_function = self.frames.iter().any(|f| f.block_id == FUNCTION);
                self.frames.push(Frame {
                    block_id: id,
                    globals,
                    locals: 0,
                    compound: false,
                });
                if id == FUNCTION && !in_function {
                    self.func = FnCounts {
                        params: params.unwrap_or(0),
                        consts: 0,
                        values: 0,
                    };
                }
                if id == BLOCKINFO {
                    self.setbid = None;
                }
            }
            Effect::End => {
                if let Some(f) = self.frames.pop() {
                    if f.block_id == FUNCTION && !self.frames.iter().any(|f| f.block_id == FUNCTION)
                    {
                        self.func = FnCounts::default();
                    }
                    if f.block_id == BLOCKINFO {
                        self.setbid = None;
                    }
                }
            }
            Effect::CompoundOpen => {
                if let Some(f) = self.frames.last_mut() {
                    f.compound = true;
                }
            }
            Effect::CompoundClose => {
                if let Some(f) = self.frames.last_mut() {
                    f.compound = false;
                }
            }
            Effect::LocalAbbrev => {
                if let Some(f) = self.frames.last_mut() {
                    f.locals += 1;
                }
            }
            Effect::GlobalAbbrev(id) => *self.blockinfo.entry(id).or_default() += 1,
            Effect::SetBid(id) => self.setbid = Some(id),
            Effect::Type(k) => {
                let id = self.types.len() as u64;
                if let Some(k) = &k {
                    self.type_ids.entry(k.clone()).or_insert(id);
                }
                self.types.push(k);
            }
            Effect::Function => self.nfuncs += 1,
            Effect::Global => self.nglobals += 1,
            Effect::Const => self.func.consts += 1,
            Effect::Value => self.func.values += 1,
        }
    }

    /// Parses one statement without changing any state.
    fn parse_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        let t = p.tok(0)?;
        let Some(ctx) = self.block_id() else {
            return self.top_statement(p);
        };
        match t {
            Tok::P(b'}') => {
                p.next()?;
                let compound = self.frames.last().is_some_and(|f| f.compound);
                return Ok(if compound {
                    (vec![], Effect::CompoundClose)
                } else {
                    (vec![Out::End], Effect::End)
                });
            }
            Tok::Local(b'a', n) if p.is(1, b'=')? => {
                let locals = self.frames.last().map_or(0, |f| f.locals);
                if n != locals as u64 {
                    return p.err(&format!("%a{locals} (the next local abbreviation)"));
                }
                p.next()?;
                p.next()?;
                let a = self.abbrev(p)?;
                p.expect(b';')?;
                return Ok((vec![Out::Abbrev(a)], Effect::LocalAbbrev));
            }
            Tok::Ident("record") => {
                p.next()?;
                return self.raw_record(p, Effect::None);
            }
            _ => {}
        }
        if let Some(r) = self.try_enter(p, Some(ctx))? {
            return Ok(r);
        }
        // `ID = record <...>;` defines a value by a raw record. The index is not checked:
        // this is the form of last resort and must always be accepted.
        if p.is(1, b'=')? && p.is_ident(2, "record")? {
            let effect = match (ctx, t) {
                (TYPES, Tok::Global(b't', _)) => Effect::Type(None),
                (MODULE, Tok::Global(b'f', _)) => Effect::Function,
                (GLOBALS, Tok::Global(b'g', _)) => Effect::Global,
                (CONSTANTS, Tok::Local(b'c', _)) => Effect::Const,
                (FUNCTION, Tok::Local(b'v', _)) => Effect::Value,
                _ => return p.err("a record definition this block can make"),
            };
            p.next()?;
            p.next()?;
            p.next()?;
            return self.raw_record(p, effect);
        }
        match ctx {
            BLOCKINFO => self.blockinfo_statement(p),
            MODULE => self.module_statement(p),
            TYPES => self.types_statement(p),
            GLOBALS => self.globals_statement(p),
            SYMTAB => self.symtab_statement(p),
            CONSTANTS => self.constants_statement(p),
            FUNCTION => self.function_statement(p),
            _ => p.err("'record', an abbreviation, a block or '}' (unknown block)"),
        }
    }

    /// The end of a record statement: an optional abbreviation (`<@a2>`, `<%a0>`) and an
    /// optional override of the record's values (`=> <...>`).
    fn trailer(&self, p: &mut P, values: Vec<u64>, effect: Effect) -> Result<(Vec<Out>, Effect)> {
        let mut abbrev_id = 3u32;
        let mut values = values;
        loop {
            if p.is(0, b'<')? && p.is(2, b'>')? {
                let frame = self.frames.last();
                let globals = frame.map_or(0, |f| f.globals) as u64;
                let locals = frame.map_or(0, |f| f.locals) as u64;
                let id = match p.tok(1)? {
                    Tok::Global(b'a', n) if n < globals => 4 + n,
                    Tok::Local(b'a', n) if n < locals => 4 + globals + n,
                    Tok::Global(b'a', _) | Tok::Local(b'a', _) => {
                        p.next()?;
                        return p.err(&format!(
                            "an abbreviation this block defines ({globals} global, {locals} local)"
                        ));
                    }
                    _ => break,
                };
                abbrev_id = u32::try_from(id).unwrap_or(u32::MAX);
                p.next()?;
                p.next()?;
                p.next()?;
            } else if p.tok(0)? == Tok::Arrow {
                p.next()?;
                values = self.value_list(p)?;
                if values.is_empty() {
                    return p.err("a non-empty record");
                }
            } else {
                break;
            }
        }
        Ok((vec![Out::Record { abbrev_id, values }], effect))
    }

    /// `<v0, v1, ...>`
    fn value_list(&self, p: &mut P) -> Result<Vec<u64>> {
        p.expect(b'<')?;
        let mut v = Vec::new();
        if !p.eat(b'>')? {
            loop {
                v.push(p.num()?);
                if p.eat(b'>')? {
                    break;
                }
                p.expect(b',')?;
            }
        }
        Ok(v)
    }

    /// `record <code, ...>;` (after `record`).
    fn raw_record(&self, p: &mut P, effect: Effect) -> Result<(Vec<Out>, Effect)> {
        let values = self.value_list(p)?;
        if values.is_empty() {
            return p.err("a record code");
        }
        p.expect(b';')?;
        // A raw SETBID still selects the section of the abbreviations block.
        let effect = match (self.block_id(), values.as_slice()) {
            (Some(BLOCKINFO), &[1, id]) if id <= u32::MAX as u64 => Effect::SetBid(id as u32),
            _ => effect,
        };
        self.trailer(p, values, effect)
    }

    /// `<E1, ..., EM>` abbreviation operands.
    fn abbrev(&self, p: &mut P) -> Result<Abbrev> {
        let pos = p.pos()?;
        p.expect_ident("abbrev")?;
        p.expect(b'<')?;
        let mut ops = Vec::new();
        loop {
            self.abbrev_op(p, &mut ops)?;
            if p.eat(b'>')? {
                break;
            }
            p.expect(b',')?;
        }
        let a = Abbrev { ops };
        a.validate()
            .map_err(|m| pos.err(format!("invalid abbreviation: {m}")))?;
        Ok(a)
    }

    fn abbrev_op(&self, p: &mut P, ops: &mut Vec<AbbrevOp>) -> Result<()> {
        let t = p.tok(0)?;
        match t {
            Tok::Num(_) => ops.push(AbbrevOp::Literal(p.num()?)),
            Tok::Ident(k @ ("fixed" | "vbr")) => {
                p.next()?;
                p.expect(b'(')?;
                let pos = p.pos()?;
                let w = p.num()?;
                if w > 64 {
                    return Err(pos.err(format!("width {w} is over 64")));
                }
                p.expect(b')')?;
                ops.push(if k == "fixed" {
                    AbbrevOp::Fixed(w as u8)
                } else {
                    AbbrevOp::Vbr(w as u8)
                });
            }
            Tok::Ident("char6") => {
                p.next()?;
                ops.push(AbbrevOp::Char6);
            }
            Tok::Ident("array") => {
                p.next()?;
                p.expect(b'(')?;
                if p.is_ident(0, "array")? {
                    return p.err("an array element (arrays cannot nest)");
                }
                ops.push(AbbrevOp::Array);
                self.abbrev_op(p, ops)?;
                p.expect(b')')?;
            }
            _ => {
                return p.err(
                    "an abbreviation operand (a literal, fixed(N), vbr(N), char6, array(...))",
                )
            }
        }
        Ok(())
    }

    /// A block enter statement, if one starts here.
    /// `ctx` is the enclosing block (`None` at the top level).
    fn try_enter(&self, p: &mut P, ctx: Option<u32>) -> Result<Option<(Vec<Out>, Effect)>> {
        let Tok::Ident(name) = p.tok(0)? else {
            return Ok(None);
        };
        let (id, params) =
            if name == "block" && p.is(1, b'(')? && p.is(3, b')')? && p.is(4, b'{')? {
                p.next()?;
                p.next()?;
                let pos = p.pos()?;
                let id = u32::try_from(p.num()?).map_err(|_| pos.err("block id too large"))?;
                p.next()?;
                (id, None)
            } else if name == "function" && !(ctx == Some(BLOCKINFO) && p.is(1, b':')?) {
                p.next()?;
                self.ptype(p, false)?;
                match p.tok(0)? {
                    Tok::Global(b'f', _) => {
                        p.next()?;
                    }
                    _ => return p.err("the function's @fN"),
                }
                let (_, params) = self.param_list(p, true)?;
                (FUNCTION, Some(params.len() as u64))
            } else if let Some(id) = keyword_block(name) {
                if id == FUNCTION || !p.is(1, b'{')? {
                    return Ok(None);
                }
                p.next()?;
                (id, None)
            } else {
                return Ok(None);
            };
        p.expect(b'{')?;
        let mut width = None;
        if p.is(0, b'<')? && matches!(p.tok(1)?, Tok::Num(_)) && p.is(2, b'>')? {
            p.next()?;
            let pos = p.pos()?;
            let w = p.num()?;
            if w == 0 || w > 32 {
                return Err(pos.err(format!("abbreviation width {w} is out of range (1..=32)")));
            }
            width = Some(w as u32);
            p.next()?;
        }
        let globals = self.blockinfo.get(&id).copied().unwrap_or(0);
        Ok(Some((
            vec![Out::Enter {
                block_id: id,
                width,
                globals,
            }],
            Effect::Enter(id, params),
        )))
    }

    fn top_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        let t = p.tok(0)?;
        let header_ok = |p: &mut P| -> Result<()> {
            if self.started {
                p.err("a block (header lines must come before the first block)")
            } else {
                Ok(())
            }
        };
        match t {
            Tok::Ident("Magic") => {
                header_ok(p)?;
                p.next()?;
                p.expect_ident("Number")?;
                p.expect(b':')?;
                let pos = p.pos()?;
                match p.tok(0)? {
                    Tok::Chr("PEXE") => {
                        p.next()?;
                    }
                    _ => return p.err("'PEXE' (the only magic number a pexe can have)"),
                }
                if p.eat(b'(')? {
                    let mut bytes = Vec::new();
                    loop {
                        bytes.push(p.num()?);
                        if p.eat(b')')? {
                            break;
                        }
                        p.expect(b',')?;
                    }
                    if bytes != [80, 69, 88, 69] {
                        return Err(pos.err("magic number bytes must be 80, 69, 88, 69"));
                    }
                }
                Ok((vec![], Effect::Magic))
            }
            Tok::Ident("PNaCl") => {
                header_ok(p)?;
                p.next()?;
                p.expect_ident("Version")?;
                p.expect(b':')?;
                let pos = p.pos()?;
                let v = u32::try_from(p.num()?).map_err(|_| pos.err("version too large"))?;
                Ok((
                    vec![],
                    Effect::HeaderField(HeaderField {
                        id: 1,
                        ftype: 1,
                        data: v.to_le_bytes().to_vec(),
                    }),
                ))
            }
            Tok::Ident("Align") => {
                header_ok(p)?;
                p.next()?;
                p.expect_ident("bitcode")?;
                p.expect_ident("records")?;
                p.expect(b':')?;
                p.expect_ident("true")?;
                Ok((
                    vec![],
                    Effect::HeaderField(HeaderField {
                        id: 2,
                        ftype: 2,
                        data: Vec::new(),
                    }),
                ))
            }
            Tok::Ident(k @ ("header" | "trailing")) => {
                if k == "header" {
                    header_ok(p)?;
                }
                p.next()?;
                let pos = p.pos()?;
                let vals = self.value_list(p)?;
                p.expect(b';')?;
                let mut bytes = Vec::with_capacity(vals.len());
                for v in vals {
                    bytes.push(u8::try_from(v).map_err(|_| pos.err(format!("{v} is not a byte")))?);
                }
                Ok((
                    vec![],
                    if k == "header" {
                        Effect::HeaderRaw(bytes)
                    } else {
                        Effect::Trailing(bytes)
                    },
                ))
            }
            _ => match self.try_enter(p, None)? {
                Some(r) => Ok(r),
                None => p.err("a header line or a block such as 'module {'"),
            },
        }
    }

    fn blockinfo_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        let t = p.tok(0)?;
        match t {
            Tok::Global(b'a', n) => {
                let Some(target) = self.setbid else {
                    return p
                        .err("a section label such as 'function:' before the first abbreviation");
                };
                let count = self.blockinfo.get(&target).copied().unwrap_or(0) as u64;
                if n != count {
                    return p.err(&format!(
                        "@a{count} (the next abbreviation of this section)"
                    ));
                }
                p.next()?;
                p.expect(b'=')?;
                let a = self.abbrev(p)?;
                p.expect(b';')?;
                Ok((vec![Out::Abbrev(a)], Effect::GlobalAbbrev(target)))
            }
            Tok::Ident(name) => {
                let id = if name == "block" {
                    p.next()?;
                    p.expect(b'(')?;
                    let pos = p.pos()?;
                    let id = u32::try_from(p.num()?).map_err(|_| pos.err("block id too large"))?;
                    p.expect(b')')?;
                    id
                } else {
                    match keyword_block(name) {
                        Some(id) if id != BLOCKINFO => {
                            p.next()?;
                            id
                        }
                        _ => return p.err("a section label such as 'function:'"),
                    }
                };
                p.expect(b':')?;
                self.trailer(p, vec![1, id as u64], Effect::SetBid(id))
            }
            _ => p.err("a section label or a global abbreviation"),
        }
    }

    fn module_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        match p.tok(0)? {
            Tok::Ident("version") => {
                p.next()?;
                let v = p.num()?;
                p.expect(b';')?;
                self.trailer(p, vec![1, v], Effect::None)
            }
            Tok::Ident(k @ ("declare" | "define")) => {
                p.next()?;
                let proto = (k == "declare") as u64;
                let linkage = match p.tok(0)? {
                    Tok::Ident("external") => {
                        p.next()?;
                        0
                    }
                    Tok::Ident("internal") => {
                        p.next()?;
                        3
                    }
                    _ => 0,
                };
                let pos = p.pos()?;
                let ret = self.ptype(p, false)?;
                match p.tok(0)? {
                    Tok::Global(b'f', n) if n == self.nfuncs => {
                        p.next()?;
                    }
                    _ => return p.err(&format!("@f{} (the next function)", self.nfuncs)),
                }
                let (vararg, params) = self.param_list(p, false)?;
                p.expect(b';')?;
                let ty = self.type_id(&PType::Func(vararg, Box::new(ret), params), pos)?;
                self.trailer(p, vec![8, ty, 0, proto, linkage], Effect::Function)
            }
            _ => p.err("'version', 'declare', 'define' or a block"),
        }
    }

    fn types_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        match p.tok(0)? {
            Tok::Ident("count") => {
                p.next()?;
                let n = p.num()?;
                p.expect(b';')?;
                self.trailer(p, vec![1, n], Effect::None)
            }
            Tok::Global(b't', n) => {
                let next = self.types.len() as u64;
                if n != next {
                    return p.err(&format!("@t{next} (the next type)"));
                }
                p.next()?;
                p.expect(b'=')?;
                let pos = p.pos()?;
                let t = self.ptype(p, true)?;
                p.expect(b';')?;
                let values = match &t {
                    PType::Void => vec![2],
                    PType::Float => vec![3],
                    PType::Double => vec![4],
                    PType::Int(n) => vec![7, *n],
                    PType::Vector(n, e) => vec![12, *n, self.type_id(e, pos)?],
                    PType::Func(va, r, ps) => {
                        let mut v = vec![21, *va as u64, self.type_id(r, pos)?];
                        for p in ps {
                            v.push(self.type_id(p, pos)?);
                        }
                        v
                    }
                    PType::Ref(_) => return Err(pos.err("a type definition cannot be another @t")),
                };
                let key = self.key_of(&t, pos)?;
                self.trailer(p, values, Effect::Type(Some(key)))
            }
            _ => p.err("'count' or a type definition '@tN = ...'"),
        }
    }

    fn globals_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        let t = p.tok(0)?;
        match t {
            Tok::Ident("count") => {
                p.next()?;
                let n = p.num()?;
                p.expect(b';')?;
                self.trailer(p, vec![5, n], Effect::None)
            }
            Tok::Ident(k @ ("var" | "const")) => {
                p.next()?;
                match p.tok(0)? {
                    Tok::Global(b'g', n) if n == self.nglobals => {
                        p.next()?;
                    }
                    _ => return p.err(&format!("@g{} (the next global)", self.nglobals)),
                }
                p.expect(b',')?;
                p.expect_ident("align")?;
                let pos = p.pos()?;
                let a = align_code(pos, p.num()?)?;
                p.expect(b',')?;
                self.trailer(p, vec![0, a, (k == "const") as u64], Effect::Global)
            }
            Tok::Ident("initializers") => {
                p.next()?;
                let n = p.num()?;
                p.expect(b'{')?;
                self.trailer(p, vec![1, n], Effect::CompoundOpen)
            }
            Tok::Ident("zerofill") => {
                p.next()?;
                let n = p.num()?;
                p.expect(b';')?;
                self.trailer(p, vec![2, n], Effect::None)
            }
            Tok::P(b'{') => {
                p.next()?;
                let mut v = vec![3];
                if !p.eat(b'}')? {
                    loop {
                        v.push(p.num()?);
                        if p.eat(b'}')? {
                            break;
                        }
                        p.expect(b',')?;
                    }
                }
                self.trailer(p, v, Effect::None)
            }
            Tok::Ident("reloc") => {
                p.next()?;
                let target = match p.tok(0)? {
                    Tok::Global(b'f', n) => n,
                    Tok::Global(b'g', n) => self.nfuncs.wrapping_add(n),
                    _ => return p.err("a global address (@fN or @gN)"),
                };
                p.next()?;
                let mut v = vec![4, target];
                let pos = p.pos()?;
                let addend = match p.tok(0)? {
                    Tok::P(b'+') => {
                        p.next()?;
                        Some((false, p.num()?))
                    }
                    Tok::P(b'-') => {
                        p.next()?;
                        Some((true, p.num()?))
                    }
                    Tok::Num(s) if s.starts_with('-') => Some(p.signed()?),
                    _ => None,
                };
                if let Some((neg, x)) = addend {
                    let x = u32::try_from(x).map_err(|_| pos.err("addend does not fit 32 bits"))?;
                    v.push(if neg { x.wrapping_neg() } else { x } as u64);
                }
                p.expect(b';')?;
                self.trailer(p, v, Effect::None)
            }
            _ => p.err(
                "a globals statement (count, var, const, initializers, zerofill, {...}, reloc)",
            ),
        }
    }

    fn symtab_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        let t = p.tok(0)?;
        let (code, id) = match t {
            Tok::Local(b'b', n) => (2, n),
            _ => match self.abs_of(t) {
                Some(v) => (1, v),
                None => return p.err("a named value (@f, @g, %p, %c, %v or %b)"),
            },
        };
        p.next()?;
        p.expect(b':')?;
        let mut v = vec![code, id];
        match p.tok(0)? {
            Tok::Str(s) => {
                p.next()?;
                v.extend(s.bytes().map(u64::from));
                p.expect(b';')?;
            }
            Tok::P(b'{') => {
                p.next()?;
                if !p.eat(b'}')? {
                    loop {
                        match p.tok(0)? {
                            Tok::Chr(c) if c.len() == 1 => {
                                p.next()?;
                                v.push(c.as_bytes()[0] as u64);
                            }
                            _ => v.push(p.num()?),
                        }
                        if p.eat(b'}')? {
                            break;
                        }
                        p.expect(b',')?;
                    }
                }
            }
            _ => return p.err("a name in double quotes or a list of bytes in braces"),
        }
        self.trailer(p, v, Effect::None)
    }

    fn constants_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        let t = p.tok(0)?;
        if is_type_start(t) {
            let (_, id) = self.type_and_id(p)?;
            p.expect(b':')?;
            return self.trailer(p, vec![1, id], Effect::None);
        }
        match t {
            Tok::Local(b'c', n) => {
                if n != self.func.consts {
                    return p.err(&format!("%c{} (the next constant)", self.func.consts));
                }
                p.next()?;
                p.expect(b'=')?;
                let ty = self.ptype(p, false)?;
                let v = if p.is_ident(0, "undef")? {
                    p.next()?;
                    vec![3]
                } else {
                    match self.class(&ty) {
                        Class::Float => vec![6, self.float_lit(p, false)?],
                        Class::Double => vec![6, self.float_lit(p, true)?],
                        c => vec![4, self.int_lit(p, c)?],
                    }
                };
                p.expect(b';')?;
                self.trailer(p, v, Effect::Const)
            }
            _ => p.err("a type ('i32:') or a constant ('%cN = ...')"),
        }
    }

    fn function_statement(&self, p: &mut P) -> Result<(Vec<Out>, Effect)> {
        let t = p.tok(0)?;
        match t {
            Tok::Ident("blocks") => {
                p.next()?;
                let n = p.num()?;
                p.expect(b';')?;
                self.trailer(p, vec![1, n], Effect::None)
            }
            Tok::Local(b'b', _) if p.is(1, b':')? => {
                p.next()?;
                p.next()?;
                Ok((vec![], Effect::None))
            }
            Tok::Ident("declare") => {
                p.next()?;
                let (_, ty) = self.type_and_id(p)?;
                let v = self.value(p)?;
                p.expect(b';')?;
                self.trailer(p, vec![43, v, ty], Effect::None)
            }
            Tok::Local(b'v', n) if p.is(1, b'=')? => {
                if n != self.func.values {
                    return p.err(&format!(
                        "%v{} (the next instruction value)",
                        self.func.values
                    ));
                }
                p.next()?;
                p.next()?;
                let v = self.value_instruction(p)?;
                self.trailer(p, v, Effect::Value)
            }
            Tok::Ident(op) => {
                let v = match op {
                    "ret" => {
                        p.next()?;
                        if p.is_ident(0, "void")? && p.is(1, b';')? {
                            p.next()?;
                            p.next()?;
                            vec![10]
                        } else {
                            self.ptype(p, false)?;
                            let v = self.rel(p)?;
                            p.expect(b';')?;
                            vec![10, v]
                        }
                    }
                    "br" => {
                        p.next()?;
                        if p.is_ident(0, "label")? {
                            let b = self.label(p)?;
                            p.expect(b';')?;
                            vec![11, b]
                        } else {
                            self.ptype(p, false)?;
                            let c = self.rel(p)?;
                            p.expect(b',')?;
                            let t = self.label(p)?;
                            p.expect(b',')?;
                            let f = self.label(p)?;
                            p.expect(b';')?;
                            vec![11, t, f, c]
                        }
                    }
                    "switch" => self.switch(p)?,
                    "unreachable" => {
                        p.next()?;
                        p.expect(b';')?;
                        vec![15]
                    }
                    "store" => {
                        p.next()?;
                        self.ptype(p, false)?;
                        let v = self.rel(p)?;
                        p.expect(b',')?;
                        self.ptype(p, false)?;
                        p.expect(b'*')?;
                        let ptr = self.rel(p)?;
                        p.expect(b',')?;
                        let a = self.align(p)?;
                        p.expect(b';')?;
                        vec![24, ptr, v, a]
                    }
                    "call" | "tail" => self.call(p)?,
                    _ => return p.err("an instruction"),
                };
                self.trailer(p, v, Effect::None)
            }
            _ => p.err("an instruction, a label or 'declare'"),
        }
    }

    /// `label %bN`
    fn label(&self, p: &mut P) -> Result<u64> {
        p.expect_ident("label")?;
        match p.tok(0)? {
            Tok::Local(b'b', n) => {
                p.next()?;
                Ok(n)
            }
            _ => p.err("a basic block %bN"),
        }
    }

    /// `align N` as its record code.
    fn align(&self, p: &mut P) -> Result<u64> {
        p.expect_ident("align")?;
        let pos = p.pos()?;
        align_code(pos, p.num()?)
    }

    fn switch(&self, p: &mut P) -> Result<Vec<u64>> {
        p.next()?;
        let (ty, tid) = self.type_and_id(p)?;
        let class = self.class(&ty);
        let cond = self.rel(p)?;
        p.expect(b'{')?;
        p.expect_ident("default")?;
        p.expect(b':')?;
        p.expect_ident("br")?;
        let default = self.label(p)?;
        p.expect(b';')?;
        let mut cases = Vec::new();
        while !p.eat(b'}')? {
            self.ptype(p, false)?;
            let v = self.int_lit(p, class)?;
            p.expect(b':')?;
            p.expect_ident("br")?;
            let b = self.label(p)?;
            p.expect(b';')?;
            cases.extend_from_slice(&[1, 1, v, b]);
        }
        let mut v = vec![12, tid, cond, default, (cases.len() / 4) as u64];
        v.extend(cases);
        Ok(v)
    }

    fn call(&self, p: &mut P) -> Result<Vec<u64>> {
        let tail = p.is_ident(0, "tail")?;
        if tail {
            p.next()?;
        }
        p.expect_ident("call")?;
        // `indirect` forces a call_indirect record even when the callee is a function
        // address (an extension; other callees imply it).
        let indirect = p.is_ident(0, "indirect")?;
        if indirect {
            p.next()?;
        }
        let pos = p.pos()?;
        let ret = self.ptype(p, false)?;
        let direct = !indirect && matches!(p.tok(0)?, Tok::Global(b'f', _));
        let callee = self.rel(p)?;
        let mut v = if direct {
            vec![34, tail as u64, callee]
        } else {
            vec![44, tail as u64, callee, self.type_id(&ret, pos)?]
        };
        p.expect(b'(')?;
        if !p.eat(b')')? {
            loop {
                self.ptype(p, false)?;
                v.push(self.rel(p)?);
                if p.eat(b')')? {
                    break;
                }
                p.expect(b',')?;
            }
        }
        p.expect(b';')?;
        Ok(v)
    }

    /// The instruction after `%vN =`.
    fn value_instruction(&self, p: &mut P) -> Result<Vec<u64>> {
        let Tok::Ident(op) = p.tok(0)? else {
            return p.err("an instruction");
        };
        if op == "call" || op == "tail" {
            return self.call(p);
        }
        let known = binop_code(op).is_some()
            || cast_code(op).is_some()
            || matches!(
                op,
                "extractelement"
                    | "insertelement"
                    | "phi"
                    | "alloca"
                    | "load"
                    | "icmp"
                    | "fcmp"
                    | "select"
            );
        if !known {
            return p.err("an instruction");
        }
        p.next()?;
        let v = if let Some(code) = binop_code(op) {
            self.ptype(p, false)?;
            let a = self.rel(p)?;
            p.expect(b',')?;
            let b = self.rel(p)?;
            vec![2, a, b, code]
        } else if let Some(code) = cast_code(op) {
            self.ptype(p, false)?;
            let a = self.rel(p)?;
            p.expect_ident("to")?;
            let (_, t) = self.type_and_id(p)?;
            vec![3, a, t, code]
        } else {
            match op {
                "extractelement" => {
                    self.ptype(p, false)?;
                    let a = self.rel(p)?;
                    p.expect(b',')?;
                    self.ptype(p, false)?;
                    let i = self.rel(p)?;
                    vec![6, a, i]
                }
                "insertelement" => {
                    self.ptype(p, false)?;
                    let a = self.rel(p)?;
                    p.expect(b',')?;
                    self.ptype(p, false)?;
                    let e = self.rel(p)?;
                    p.expect(b',')?;
                    self.ptype(p, false)?;
                    let i = self.rel(p)?;
                    vec![7, a, e, i]
                }
                "phi" => {
                    let (_, t) = self.type_and_id(p)?;
                    let mut v = vec![16, t];
                    let next = self.next_value() as i128;
                    loop {
                        p.expect(b'[')?;
                        let val = self.value(p)? as i128;
                        p.expect(b',')?;
                        let b = match p.tok(0)? {
                            Tok::Local(b'b', n) => n,
                            _ => return p.err("a basic block %bN"),
                        };
                        p.next()?;
                        p.expect(b']')?;
                        let d = (next - val).clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                        v.push(sign_rotate(d < 0, d.unsigned_abs()));
                        v.push(b);
                        if !p.eat(b',')? {
                            break;
                        }
                    }
                    v
                }
                "alloca" => {
                    self.ptype(p, false)?;
                    p.expect(b',')?;
                    self.ptype(p, false)?;
                    let s = self.rel(p)?;
                    p.expect(b',')?;
                    let a = self.align(p)?;
                    vec![19, s, a]
                }
                "load" => {
                    let (_, t) = self.type_and_id(p)?;
                    p.expect(b'*')?;
                    let ptr = self.rel(p)?;
                    p.expect(b',')?;
                    let a = self.align(p)?;
                    vec![20, ptr, a, t]
                }
                "icmp" | "fcmp" => {
                    let pred = match p.tok(0)? {
                        Tok::Ident(s) => {
                            if op == "icmp" {
                                icmp_code(s)
                            } else {
                                fcmp_code(s)
                            }
                        }
                        _ => None,
                    };
                    let Some(pred) = pred else {
                        return p.err(&format!("an {op} predicate"));
                    };
                    p.next()?;
                    self.ptype(p, false)?;
                    let a = self.rel(p)?;
                    p.expect(b',')?;
                    let b = self.rel(p)?;
                    vec![28, a, b, pred]
                }
                "select" => {
                    self.ptype(p, false)?;
                    let c = self.rel(p)?;
                    p.expect(b',')?;
                    self.ptype(p, false)?;
                    let a = self.rel(p)?;
                    p.expect(b',')?;
                    self.ptype(p, false)?;
                    let b = self.rel(p)?;
                    vec![29, a, b, c]
                }
                _ => return p.err("an instruction"),
            }
        };
        p.expect(b';')?;
        Ok(v)
    }
}

/// A written type back as text (for messages).
fn show(t: &PType) -> String {
    match t {
        PType::Void => "void".into(),
        PType::Float => "float".into(),
        PType::Double => "double".into(),
        PType::Int(n) => format!("i{n}"),
        PType::Vector(n, e) => format!("<{n} x {}>", show(e)),
        PType::Func(va, r, ps) => {
            let mut s = format!("{} (", show(r));
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    s.push_str(", ");
                }
                s.push_str(&show(p));
            }
            if *va {
                s.push_str(if ps.is_empty() { "..." } else { ", ..." });
            }
            s.push(')');
            s
        }
        PType::Ref(n) => format!("@t{n}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_widths_hold_every_abbreviation_id() {
        assert_eq!(infer_width(0), 2);
        assert_eq!(infer_width(1), 3);
        assert_eq!(infer_width(4), 3);
        assert_eq!(infer_width(5), 4);
        assert_eq!(infer_width(12), 4);
        assert_eq!(infer_width(13), 5);
    }

    #[test]
    fn sign_rotation() {
        assert_eq!(sign_rotate(false, 1), 2);
        assert_eq!(sign_rotate(true, 1), 3);
        assert_eq!(sign_rotate(true, 0), 1);
        assert_eq!(sign_rotate(true, 1 << 63), 1);
    }

    /// The two passes, always (what `assemble` did before it skipped pass 1 for texts
    /// without abbreviations).
    fn two_passes(text: &str) -> Result<Vec<u8>> {
        let mut counter = CountSink::default();
        Assembler::new(Vec::new()).run(text, &mut counter)?;
        write_pass(text, counter.counts)
    }

    #[test]
    fn one_pass_gives_the_two_passes_bytes_for_texts_without_abbreviations() {
        let text = "module { version 1; types { count 2; @t0 = i32; @t1 = i32 (i32, i32); }
             define external i32 @f0(i32, i32); globals { count 1; var @g0, align 4, { 1, 2 } }
             function i32 @f0(i32 %p0, i32 %p1) { blocks 1; %v0 = add i32 %p1, %p0; ret i32 %v0; } }";
        let one = assemble(text).unwrap();
        assert_eq!(one, two_passes(text).unwrap());
        // `abbrev` in a comment only sends the text the two-pass way: the same bytes.
        let commented = format!("// no abbrev here\n{text}");
        assert_eq!(assemble(&commented).unwrap(), one);
        // With a local abbreviation the counts matter: the function block is wider.
        let with_abbrev = text.replace("blocks 1;", "%a0 = abbrev <4, 7, 0, 0>; blocks 1;");
        let wide = assemble(&with_abbrev).unwrap();
        assert_eq!(wide, two_passes(&with_abbrev).unwrap());
        assert_ne!(wide, one);
    }

    #[test]
    fn statements_encode_in_context() {
        let mut a = Assembler::new(Vec::new());
        let mut outs = Vec::new();
        a.feed(
            "module { version 1; types { count 2; @t0 = i32; @t1 = i32 (i32, i32); }
             define internal i32 @f0(i32, i32); globals { count 0; }
             function i32 @f0(i32 %p0, i32 %p1) { blocks 1;",
            &mut outs,
        )
        .unwrap();
        outs.clear();
        a.feed("%v0 = add i32 %p1, %p0; <@a0>", &mut outs)
            .expect_err("no global abbreviations");
        a.feed("%v0 = add i32 %p1, %p0; => <2, 9, 9, 0>", &mut outs)
            .unwrap();
        a.feed("%v1 = phi i32 [%v2, %b0], [%p0, %b0];", &mut outs)
            .unwrap();
        a.feed("ret i32 %v0;", &mut outs).unwrap();
        let rec = |values: Vec<u64>| Out::Record {
            abbrev_id: 3,
            values,
        };
        assert_eq!(
            outs,
            vec![
                rec(vec![2, 9, 9, 0]),
                rec(vec![16, 0, 3, 0, 6, 0]),
                rec(vec![10, 2]),
            ]
        );
    }
}
