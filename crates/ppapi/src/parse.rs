//! The parser of the description format (see the crate README for the grammar).
//!
//! Types must be declared before they are used, so every layout and every signature is
//! computed in one pass; the parser never panics on bad text, it returns the first error
//! with its line.

use crate::model::*;

/// A description text that cannot be read: the line (1-based) and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {kind}")]
pub struct ParseError {
    pub line: usize,
    pub kind: ParseErrorKind,
}

/// What is wrong with a line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseErrorKind {
    #[error("cannot read {0:?}")]
    Syntax(String),
    #[error("unknown type {0:?} (types must be declared before use)")]
    UnknownType(String),
    #[error("type {0:?} is declared twice")]
    DuplicateType(String),
    #[error("interface {0:?} is declared twice")]
    DuplicateInterface(String),
    #[error("function {0:?} appears twice in the interface")]
    DuplicateFunction(String),
    #[error("{0:?} appears twice")]
    DuplicateName(String),
    #[error("{0:?} is not an interface name of the form PPB_Name;1.0 or PPP_Name;1.0")]
    BadInterfaceName(String),
    #[error("interface {name:?} is declared as {keyword} but its name says {expected}")]
    KindMismatch {
        name: String,
        keyword: String,
        expected: String,
    },
    #[error("{name:?} extends {base:?}, which is not declared above it")]
    UnknownBase { name: String, base: String },
    #[error("{name:?} extends {base:?}, an interface of the other kind")]
    BaseKindMismatch { name: String, base: String },
    #[error("{name}: stated size {stated}, but its fields give {computed}")]
    SizeMismatch {
        name: String,
        stated: u32,
        computed: u32,
    },
    #[error("{name}: stated alignment {stated}, but its fields give {computed}")]
    AlignMismatch {
        name: String,
        stated: u32,
        computed: u32,
    },
    #[error("{0:?} cannot be used by value (void or opaque)")]
    NotByValue(String),
    #[error("block opened here is not closed with `}}`")]
    Unclosed,
    #[error("`}}` without an open block")]
    StrayClose,
    #[error("{0} has no fields or functions")]
    Empty(String),
    #[error("{0} has more than one PP_CompletionCallback parameter")]
    TwoCallbacks(String),
    #[error("{0} is marked @schedules but has no PP_CompletionCallback parameter")]
    SchedulesWithoutCallback(String),
    #[error("unknown function attribute {0:?} (known: @schedules)")]
    UnknownAttribute(String),
    #[error("{0:?} is not an enum value of the form NAME = 12, NAME = -1, NAME = 0x10 or NAME = 1 << 4 (within int32_t)")]
    BadEnumValue(String),
}

fn err<T>(line: usize, kind: ParseErrorKind) -> Result<T, ParseError> {
    Err(ParseError { line, kind })
}

fn syntax<T>(line: usize, text: &str) -> Result<T, ParseError> {
    err(line, ParseErrorKind::Syntax(text.trim().to_string()))
}

/// The built-in C scalars: name, size (= alignment), wasm type in calls.
const PRIMITIVES: &[(&str, u32, Option<ValType>)] = &[
    ("void", 0, None),
    ("char", 1, Some(ValType::I32)),
    ("int8_t", 1, Some(ValType::I32)),
    ("uint8_t", 1, Some(ValType::I32)),
    ("int16_t", 2, Some(ValType::I32)),
    ("uint16_t", 2, Some(ValType::I32)),
    ("int32_t", 4, Some(ValType::I32)),
    ("uint32_t", 4, Some(ValType::I32)),
    // ILP32: long and size_t are 32 bits.
    ("long", 4, Some(ValType::I32)),
    ("size_t", 4, Some(ValType::I32)),
    ("int64_t", 8, Some(ValType::I64)),
    ("uint64_t", 8, Some(ValType::I64)),
    ("float", 4, Some(ValType::F32)),
    ("double", 8, Some(ValType::F64)),
];

/// ILP32 pointer size and alignment.
const POINTER: u32 = 4;

/// How a type travels in a call and how it is laid out.
#[derive(Clone, Copy)]
enum ByValue {
    /// A scalar of this wasm type.
    Scalar(ValType),
    /// A struct or union: a pointer in calls.
    Aggregate,
    /// void or opaque: not usable by value.
    No,
}

struct Parser {
    desc: Description,
}

impl Parser {
    fn new() -> Self {
        let mut p = Parser {
            desc: Description::default(),
        };
        for &(name, size, wasm) in PRIMITIVES {
            p.desc
                .type_index
                .insert(name.to_string(), p.desc.types.len());
            p.desc.types.push(TypeDef {
                name: name.to_string(),
                kind: TypeKind::Primitive { wasm },
                size,
                align: size.max(1),
                line: 0,
            });
        }
        p
    }

    fn lookup(&self, name: &str) -> Option<&TypeDef> {
        self.desc.type_index.get(name).map(|&i| &self.desc.types[i])
    }

    /// Follows typedefs to the type a by-value use means.
    fn resolve<'a>(&'a self, mut ty: &'a CType) -> (Option<&'a TypeDef>, u8) {
        let mut pointers = ty.pointers;
        loop {
            let Some(def) = self.lookup(&ty.base) else {
                return (None, pointers);
            };
            match &def.kind {
                TypeKind::Typedef { target } => {
                    pointers += target.pointers;
                    ty = target;
                }
                _ => return (Some(def), pointers),
            }
        }
    }

    fn by_value(&self, ty: &CType) -> ByValue {
        let (def, pointers) = self.resolve(ty);
        if pointers > 0 {
            return ByValue::Scalar(ValType::I32);
        }
        match def.map(|d| &d.kind) {
            Some(TypeKind::Primitive { wasm: Some(v) }) => ByValue::Scalar(*v),
            Some(TypeKind::Enum { .. }) | Some(TypeKind::FuncPtr { .. }) => {
                ByValue::Scalar(ValType::I32)
            }
            Some(TypeKind::Struct { .. }) | Some(TypeKind::Union { .. }) => ByValue::Aggregate,
            _ => ByValue::No,
        }
    }

    /// Size and alignment of a by-value use of `ty`, or `None` for void/opaque.
    fn layout(&self, ty: &CType) -> Option<(u32, u32)> {
        let (def, pointers) = self.resolve(ty);
        if pointers > 0 {
            return Some((POINTER, POINTER));
        }
        let def = def?;
        match def.kind {
            TypeKind::Opaque => None,
            TypeKind::Primitive { wasm: None } => None,
            _ => Some((def.size, def.align)),
        }
    }

    /// Reads a C type: `[const] NAME [const] *...`; arrays are not allowed here.
    fn ctype(&self, line: usize, text: &str) -> Result<CType, ParseError> {
        let text = text.trim();
        let pointers = text.chars().filter(|&c| c == '*').count();
        let words: Vec<&str> = text
            .split(|c: char| c == '*' || c.is_whitespace())
            .filter(|w| !w.is_empty() && *w != "const")
            .collect();
        let [base] = words.as_slice() else {
            return syntax(line, text);
        };
        if !is_ident(base) || pointers > 8 {
            return syntax(line, text);
        }
        if self.lookup(base).is_none() {
            return err(line, ParseErrorKind::UnknownType(base.to_string()));
        }
        // Normalize spacing: `const char *` -> `const char*`.
        let mut norm = String::new();
        for (i, part) in text.split('*').enumerate() {
            if i > 0 {
                norm.push('*');
            }
            let words: Vec<&str> = part.split_whitespace().collect();
            if !words.is_empty() {
                if i > 0 {
                    norm.push(' ');
                }
                norm.push_str(&words.join(" "));
            }
        }
        Ok(CType {
            text: norm,
            base: base.to_string(),
            pointers: pointers as u8,
        })
    }

    fn add_type(&mut self, def: TypeDef) -> Result<(), ParseError> {
        if self.desc.type_index.contains_key(&def.name) {
            return err(def.line, ParseErrorKind::DuplicateType(def.name));
        }
        self.desc
            .type_index
            .insert(def.name.clone(), self.desc.types.len());
        self.desc.types.push(def);
        Ok(())
    }

    /// `name: TYPE` as a parameter.
    fn param(&self, line: usize, text: &str) -> Result<Param, ParseError> {
        let Some((name, ty)) = text.split_once(':') else {
            return syntax(line, text);
        };
        let name = name.trim();
        if !is_ident(name) {
            return syntax(line, text);
        }
        let ty = self.ctype(line, ty)?;
        let (wasm, by_pointer) = match self.by_value(&ty) {
            ByValue::Scalar(v) => (v, false),
            ByValue::Aggregate => (ValType::I32, true),
            ByValue::No => return err(line, ParseErrorKind::NotByValue(ty.text)),
        };
        Ok(Param {
            name: name.to_string(),
            ty,
            wasm,
            by_pointer,
        })
    }

    /// `Name(a: T, b: U) -> R` (no `-> R`: void). Returns the name, params and result.
    fn signature(
        &self,
        line: usize,
        text: &str,
    ) -> Result<(String, Vec<Param>, CType), ParseError> {
        let Some((name, rest)) = text.split_once('(') else {
            return syntax(line, text);
        };
        let name = name.trim();
        let Some((params, after)) = rest.split_once(')') else {
            return syntax(line, text);
        };
        if !is_ident(name) {
            return syntax(line, text);
        }
        let after = after.trim();
        let ret = if after.is_empty() {
            self.ctype(line, "void")?
        } else if let Some(r) = after.strip_prefix("->") {
            self.ctype(line, r)?
        } else {
            return syntax(line, text);
        };
        let mut out: Vec<Param> = Vec::new();
        if !params.trim().is_empty() {
            for p in params.split(',') {
                let p = self.param(line, p)?;
                if out.iter().any(|q| q.name == p.name) {
                    return err(line, ParseErrorKind::DuplicateName(p.name));
                }
                out.push(p);
            }
        }
        if !ret.is_void() && matches!(self.by_value(&ret), ByValue::No) {
            return err(line, ParseErrorKind::NotByValue(ret.text));
        }
        Ok((name.to_string(), out, ret))
    }

    /// Whether `ty` is a `PP_CompletionCallback` by value (through typedefs).
    fn is_completion_callback(&self, ty: &CType) -> bool {
        matches!(self.resolve(ty), (Some(def), 0) if def.name == "PP_CompletionCallback")
    }

    /// `Name(a: T, ...) -> R [@schedules]`.
    fn function(&self, line: usize, text: &str) -> Result<Function, ParseError> {
        // Attributes follow the signature: `@schedules`.
        let (text, attrs) = match text.split_once('@') {
            Some((sig, attrs)) => (sig, Some(attrs)),
            None => (text, None),
        };
        let mut schedules = false;
        for attr in attrs.into_iter().flat_map(|a| a.split('@')) {
            match attr.trim() {
                "schedules" => schedules = true,
                other => return err(line, ParseErrorKind::UnknownAttribute(other.to_string())),
            }
        }
        let (name, params, ret) = self.signature(line, text)?;
        let mut wasm = WasmSignature::default();
        let sret = matches!(self.by_value(&ret), ByValue::Aggregate);
        if sret {
            wasm.params.push(ValType::I32);
        } else if let ByValue::Scalar(v) = self.by_value(&ret) {
            wasm.results.push(v);
        }
        wasm.params.extend(params.iter().map(|p| p.wasm));
        let mut callbacks = params
            .iter()
            .enumerate()
            .filter(|(_, p)| self.is_completion_callback(&p.ty))
            .map(|(i, _)| i);
        let callback = match (callbacks.next(), callbacks.next()) {
            (_, Some(_)) => return err(line, ParseErrorKind::TwoCallbacks(name)),
            (None, None) if schedules => {
                return err(line, ParseErrorKind::SchedulesWithoutCallback(name))
            }
            (None, _) => None,
            (Some(param), None) => Some(Callback {
                param,
                wasm_param: param + usize::from(sret),
                kind: if schedules {
                    CallbackKind::Schedules
                } else {
                    CallbackKind::Completion
                },
            }),
        };
        Ok(Function {
            name,
            params,
            ret,
            sret,
            wasm,
            callback,
            line,
        })
    }

    /// A struct or union body: `name: TYPE` or `name: TYPE[N]` items.
    fn aggregate(
        &mut self,
        line: usize,
        header: &str,
        items: &[(usize, String)],
        union: bool,
    ) -> Result<(), ParseError> {
        // header: `NAME size S align A`
        let words: Vec<&str> = header.split_whitespace().collect();
        let (name, stated_size, stated_align) = match words.as_slice() {
            [name, "size", s, "align", a] if is_ident(name) => {
                match (s.parse::<u32>(), a.parse::<u32>()) {
                    (Ok(s), Ok(a)) => (name.to_string(), s, a),
                    _ => return syntax(line, header),
                }
            }
            _ => return syntax(line, header),
        };
        let mut fields: Vec<Field> = Vec::new();
        let (mut offset, mut size, mut align) = (0u32, 0u32, 1u32);
        for (fline, item) in items {
            let fline = *fline;
            let Some((fname, ty)) = item.split_once(':') else {
                return syntax(fline, item);
            };
            let fname = fname.trim();
            if !is_ident(fname) {
                return syntax(fline, item);
            }
            let (ty, count) = match ty.trim().strip_suffix(']') {
                Some(t) => {
                    let Some((t, n)) = t.split_once('[') else {
                        return syntax(fline, item);
                    };
                    match n.trim().parse::<u32>() {
                        Ok(n) if n > 0 => (t, Some(n)),
                        _ => return syntax(fline, item),
                    }
                }
                None => (ty, None),
            };
            let ty = self.ctype(fline, ty)?;
            let Some((fsize, falign)) = self.layout(&ty) else {
                return err(fline, ParseErrorKind::NotByValue(ty.text));
            };
            if fields.iter().any(|f| f.name == fname) {
                return err(fline, ParseErrorKind::DuplicateName(fname.to_string()));
            }
            let total = fsize * count.unwrap_or(1);
            let at = if union { 0 } else { round_up(offset, falign) };
            offset = at + total;
            size = size.max(offset);
            align = align.max(falign);
            fields.push(Field {
                name: fname.to_string(),
                ty,
                count,
                offset: at,
            });
        }
        if fields.is_empty() {
            return err(line, ParseErrorKind::Empty(name));
        }
        let size = round_up(size, align);
        if size != stated_size {
            return err(
                line,
                ParseErrorKind::SizeMismatch {
                    name,
                    stated: stated_size,
                    computed: size,
                },
            );
        }
        if align != stated_align {
            return err(
                line,
                ParseErrorKind::AlignMismatch {
                    name,
                    stated: stated_align,
                    computed: align,
                },
            );
        }
        let kind = if union {
            TypeKind::Union { fields }
        } else {
            TypeKind::Struct { fields }
        };
        self.add_type(TypeDef {
            name,
            kind,
            size,
            align,
            line,
        })
    }

    fn interface(
        &mut self,
        line: usize,
        keyword: &str,
        header: &str,
        items: &[(usize, String)],
    ) -> Result<(), ParseError> {
        let mut words: Vec<&str> = header.split_whitespace().collect();
        // An optional trailing `channel=dev`: the header marks the version dev-channel.
        let dev_channel = words.last() == Some(&"channel=dev");
        if dev_channel {
            words.pop();
        }
        let (name, base_iface) = match words.as_slice() {
            [name] => (*name, None),
            [name, "extends", base] => (*name, Some(*base)),
            _ => return syntax(line, header),
        };
        let Some((base, version)) = split_interface_name(name) else {
            return err(line, ParseErrorKind::BadInterfaceName(name.to_string()));
        };
        let kind = if keyword == "ppb" {
            Kind::Ppb
        } else {
            Kind::Ppp
        };
        let expected = if name.starts_with("PPB_") {
            "ppb"
        } else {
            "ppp"
        };
        if expected != keyword {
            return err(
                line,
                ParseErrorKind::KindMismatch {
                    name: name.to_string(),
                    keyword: keyword.to_string(),
                    expected: expected.to_string(),
                },
            );
        }
        if self.desc.interface_index.contains_key(name) {
            return err(line, ParseErrorKind::DuplicateInterface(name.to_string()));
        }
        let mut functions: Vec<Function> = match base_iface {
            None => Vec::new(),
            Some(b) => match self.desc.interface(b) {
                Some(i) if i.kind == kind => i.functions.clone(),
                Some(_) => {
                    return err(
                        line,
                        ParseErrorKind::BaseKindMismatch {
                            name: name.to_string(),
                            base: b.to_string(),
                        },
                    )
                }
                None => {
                    return err(
                        line,
                        ParseErrorKind::UnknownBase {
                            name: name.to_string(),
                            base: b.to_string(),
                        },
                    )
                }
            },
        };
        for (fline, item) in items {
            let f = self.function(*fline, item)?;
            if functions.iter().any(|g| g.name == f.name) {
                return err(*fline, ParseErrorKind::DuplicateFunction(f.name));
            }
            functions.push(f);
        }
        if functions.is_empty() {
            return err(line, ParseErrorKind::Empty(name.to_string()));
        }
        self.desc
            .interface_index
            .insert(name.to_string(), self.desc.interfaces.len());
        self.desc.interfaces.push(Interface {
            name: name.to_string(),
            base: base.to_string(),
            version: version.to_string(),
            kind,
            dev: name.contains("(Dev)"),
            dev_channel,
            functions,
            line,
        });
        Ok(())
    }

    /// `NAME [strip PREFIX...] { A = 0; B = -1; C = 1 << 2 }`: an enum with its values.
    /// A value's short name is its C name without the first listed prefix it starts
    /// with (and leaves something of).
    fn enumeration(
        &mut self,
        line: usize,
        header: &str,
        items: &[(usize, String)],
    ) -> Result<(), ParseError> {
        let words: Vec<&str> = header.split_whitespace().collect();
        let (name, strip) = match words.as_slice() {
            [name] => (*name, &[][..]),
            [name, "strip", prefixes @ ..] if !prefixes.is_empty() => (*name, prefixes),
            _ => return syntax(line, header),
        };
        if !is_ident(name) || !strip.iter().all(|p| is_ident(p)) {
            return syntax(line, header);
        }
        let mut values: Vec<EnumValue> = Vec::new();
        for (vline, item) in items {
            let bad = || err(*vline, ParseErrorKind::BadEnumValue(item.clone()));
            let Some((vname, value)) = item.split_once('=') else {
                return bad();
            };
            let vname = vname.trim();
            let Some(value) = enum_value(value) else {
                return bad();
            };
            if !is_ident(vname) {
                return bad();
            }
            let short = strip
                .iter()
                .find_map(|p| vname.strip_prefix(p).filter(|s| !s.is_empty()))
                .unwrap_or(vname);
            // The short name is an identifier in the generated modules.
            if !is_ident(short) {
                return bad();
            }
            if values.iter().any(|v| v.name == vname || v.short == short) {
                return err(*vline, ParseErrorKind::DuplicateName(vname.to_string()));
            }
            values.push(EnumValue {
                name: vname.to_string(),
                short: short.to_string(),
                value,
                line: *vline,
            });
        }
        if values.is_empty() {
            return err(line, ParseErrorKind::Empty(name.to_string()));
        }
        self.add_type(TypeDef {
            name: name.to_string(),
            kind: TypeKind::Enum { values },
            size: 4,
            align: 4,
            line,
        })
    }

    /// One top-level declaration; `items` are the lines (or `;` pieces) of its block.
    fn declaration(
        &mut self,
        line: usize,
        head: &str,
        items: Option<&[(usize, String)]>,
    ) -> Result<(), ParseError> {
        let (keyword, rest) = head.split_once(char::is_whitespace).unwrap_or((head, ""));
        let rest = rest.trim();
        match (keyword, items) {
            ("struct", Some(items)) => self.aggregate(line, rest, items, false),
            ("union", Some(items)) => self.aggregate(line, rest, items, true),
            ("ppb" | "ppp", Some(items)) => self.interface(line, keyword, rest, items),
            ("enum", Some(items)) => self.enumeration(line, rest, items),
            ("typedef", None) => {
                let Some((name, target)) = rest.split_once('=') else {
                    return syntax(line, head);
                };
                let name = name.trim();
                if !is_ident(name) {
                    return syntax(line, head);
                }
                let target = self.ctype(line, target)?;
                let (size, align) = self.layout(&target).unwrap_or((0, 1));
                self.add_type(TypeDef {
                    name: name.to_string(),
                    kind: TypeKind::Typedef { target },
                    size,
                    align,
                    line,
                })
            }
            ("enum" | "opaque", None) => {
                if !is_ident(rest) {
                    return syntax(line, head);
                }
                let (kind, size, align) = if keyword == "enum" {
                    (TypeKind::Enum { values: Vec::new() }, 4, 4)
                } else {
                    (TypeKind::Opaque, 0, 1)
                };
                self.add_type(TypeDef {
                    name: rest.to_string(),
                    kind,
                    size,
                    align,
                    line,
                })
            }
            ("funcptr", None) => {
                let (name, params, ret) = self.signature(line, rest)?;
                self.add_type(TypeDef {
                    name,
                    kind: TypeKind::FuncPtr { params, ret },
                    size: POINTER,
                    align: POINTER,
                    line,
                })
            }
            _ => syntax(line, head),
        }
    }
}

/// An enum value as the headers write them: `12`, `-1`, `0x10`, `1 << 4`; `None` when it
/// is none of these or does not fit an `int32_t`.
fn enum_value(text: &str) -> Option<i32> {
    let text = text.trim();
    if let Some((a, b)) = text.split_once("<<") {
        let (a, b) = (enum_value(a)?, enum_value(b)?);
        if !(0..31).contains(&b) {
            return None;
        }
        return i32::try_from(i64::from(a) << b).ok();
    }
    let (neg, digits) = match text.strip_prefix('-') {
        Some(d) => (true, d.trim_start()),
        None => (false, text),
    };
    let magnitude = match digits.strip_prefix("0x") {
        Some(hex) if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) => {
            i64::from_str_radix(hex, 16).ok()?
        }
        None if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) => {
            digits.parse::<i64>().ok()?
        }
        _ => return None,
    };
    i32::try_from(if neg { -magnitude } else { magnitude }).ok()
}

fn round_up(x: u32, align: u32) -> u32 {
    x.div_ceil(align) * align
}

fn is_ident(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `PPB_Name;1.0` -> (`PPB_Name`, `1.0`); the name may contain `(Dev)`, the version has
/// two or three decimal numbers.
pub(crate) fn split_interface_name(s: &str) -> Option<(&str, &str)> {
    let (base, version) = s.split_once(';')?;
    let ok_base = (base.starts_with("PPB_") || base.starts_with("PPP_"))
        && base.len() > 4
        && base
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'(' | b')'));
    let parts: Vec<&str> = version.split('.').collect();
    let ok_version = (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (ok_base && ok_version).then_some((base, version))
}

/// A block being read: its first line, its head (before `{`) and its items.
type Block = (usize, String, Vec<(usize, String)>);

/// Parses a description text.
pub fn parse(text: &str) -> Result<Description, ParseError> {
    let mut p = Parser::new();
    // (line, head, items) of the block being read.
    let mut open: Option<Block> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let content = raw.split('#').next().unwrap_or("").trim();
        if content.is_empty() {
            continue;
        }
        if let Some((_, _, items)) = open.as_mut() {
            if content == "}" {
                let (bline, head, items) = open.take().expect("a block is open");
                p.declaration(bline, &head, Some(&items))?;
            } else if content.contains('{') || content.contains('}') {
                return syntax(line, content);
            } else {
                push_items(items, line, content);
            }
            continue;
        }
        if content == "}" {
            return err(line, ParseErrorKind::StrayClose);
        }
        if let Some((head, body)) = content.split_once('{') {
            let head = head.trim().to_string();
            let body = body.trim();
            if let Some(inline) = body.strip_suffix('}') {
                // One-line block: `struct P size 8 align 4 { x: int32_t; y: int32_t }`.
                if inline.contains('{') || inline.contains('}') {
                    return syntax(line, content);
                }
                let mut items = Vec::new();
                push_items(&mut items, line, inline);
                p.declaration(line, &head, Some(&items))?;
            } else if body.is_empty() {
                open = Some((line, head, Vec::new()));
            } else {
                return syntax(line, content);
            }
        } else if content.contains('}') {
            return syntax(line, content);
        } else {
            p.declaration(line, content, None)?;
        }
    }
    if let Some((line, _, _)) = open {
        return err(line, ParseErrorKind::Unclosed);
    }
    Ok(p.desc)
}

fn push_items(items: &mut Vec<(usize, String)>, line: usize, content: &str) {
    for piece in content.split(';') {
        let piece = piece.trim();
        if !piece.is_empty() {
            items.push((line, piece.to_string()));
        }
    }
}
