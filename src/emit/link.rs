//! Linking a wasm module written against the `env` contract (the IRT runtime, the fmod
//! helpers) into the output: its `env` imports resolve to the output's own memory, table,
//! globals and the pexe's `_start`; its other function imports (WASI) become imports of
//! the output; its types, functions, globals, element and data segments are copied with
//! every index remapped (`wasm_encoder::reencode`).

use std::collections::HashMap;

use wasm_encoder::reencode::{Error as ReError, Reencode};
use wasm_encoder::{ConstExpr, ValType};
use wasmparser::{
    DataSectionReader, ElementSectionReader, FunctionBody, GlobalSectionReader, Operator, Parser,
    Payload, TypeRef,
};

use super::EmitError;
use crate::lower::Sig;

/// Output globals every linked module may import from `env`, in output index order.
pub const ENV_GLOBALS: [&str; 4] = [
    "__stack_pointer",
    "__thread_pointer",
    "__heap_base",
    "__table_base",
];

/// What a linked module's import resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Import {
    /// `env.pexe_start`.
    PexeStart,
    /// One of [`ENV_GLOBALS`].
    EnvGlobal(u32),
    EnvMemory,
    EnvTable,
    /// A function imported from elsewhere (WASI): module, name, type (linked index).
    Func(String, String, u32),
}

/// A parsed module to link.
pub struct Linked<'a> {
    pub name: &'static str,
    pub types: Vec<Sig>,
    pub imports: Vec<Import>,
    /// Type index (linked) of each defined function.
    pub funcs: Vec<u32>,
    pub globals: Option<GlobalSectionReader<'a>>,
    pub num_globals: u32,
    pub elements: Option<ElementSectionReader<'a>>,
    pub num_elements: u32,
    pub data: Option<DataSectionReader<'a>>,
    pub num_data: u32,
    pub bodies: Vec<FunctionBody<'a>>,
    pub exports: HashMap<String, u32>,
    pub func_names: Vec<(u32, String)>,
}

impl Linked<'_> {
    pub fn num_func_imports(&self) -> u32 {
        self.imports
            .iter()
            .filter(|i| matches!(i, Import::PexeStart | Import::Func(..)))
            .count() as u32
    }
}

fn err(name: &str, msg: impl std::fmt::Display) -> EmitError {
    EmitError::Link(format!("{name}: {msg}"))
}

fn valtype(name: &str, t: wasmparser::ValType) -> Result<ValType, EmitError> {
    Ok(match t {
        wasmparser::ValType::I32 => ValType::I32,
        wasmparser::ValType::I64 => ValType::I64,
        wasmparser::ValType::F32 => ValType::F32,
        wasmparser::ValType::F64 => ValType::F64,
        wasmparser::ValType::V128 => ValType::V128,
        wasmparser::ValType::Ref(_) => return Err(err(name, "reference-typed values")),
    })
}

pub fn parse<'a>(name: &'static str, bytes: &'a [u8]) -> Result<Linked<'a>, EmitError> {
    let mut l = Linked {
        name,
        types: Vec::new(),
        imports: Vec::new(),
        funcs: Vec::new(),
        globals: None,
        num_globals: 0,
        elements: None,
        num_elements: 0,
        data: None,
        num_data: 0,
        bodies: Vec::new(),
        exports: HashMap::new(),
        func_names: Vec::new(),
    };
    let e = |m: wasmparser::BinaryReaderError| err(name, m);
    for payload in Parser::new(0).parse_all(bytes) {
        match payload.map_err(e)? {
            Payload::TypeSection(r) => {
                for ty in r.into_iter_err_on_gc_types() {
                    let ft = ty.map_err(e)?;
                    let params = ft
                        .params()
                        .iter()
                        .map(|t| valtype(name, *t))
                        .collect::<Result<_, _>>()?;
                    let results = ft
                        .results()
                        .iter()
                        .map(|t| valtype(name, *t))
                        .collect::<Result<_, _>>()?;
                    l.types.push(Sig { params, results });
                }
            }
            Payload::ImportSection(r) => {
                for imp in r.into_imports() {
                    let imp = imp.map_err(e)?;
                    let resolved = match (imp.module, imp.name, imp.ty) {
                        ("env", "pexe_start", TypeRef::Func(_)) => Import::PexeStart,
                        ("env", "memory", TypeRef::Memory(_)) => Import::EnvMemory,
                        ("env", "__indirect_function_table", TypeRef::Table(_)) => Import::EnvTable,
                        ("env", n, TypeRef::Global(_)) if ENV_GLOBALS.contains(&n) => {
                            Import::EnvGlobal(
                                ENV_GLOBALS.iter().position(|g| *g == n).unwrap_or(0) as u32
                            )
                        }
                        ("env", n, _) => {
                            return Err(err(name, format!("unresolved import env.{n}")));
                        }
                        (m, n, TypeRef::Func(t)) => Import::Func(m.into(), n.into(), t),
                        (m, n, _) => {
                            return Err(err(
                                name,
                                format!(
                                    "import {m}.{n} is not a function; only env may provide others"
                                ),
                            ));
                        }
                    };
                    l.imports.push(resolved);
                }
            }
            Payload::FunctionSection(r) => {
                for t in r {
                    l.funcs.push(t.map_err(e)?);
                }
            }
            Payload::TableSection(_) => return Err(err(name, "defines its own table")),
            Payload::MemorySection(_) => return Err(err(name, "defines its own memory")),
            Payload::TagSection(_) => return Err(err(name, "uses exception tags")),
            Payload::GlobalSection(r) => {
                l.num_globals = r.count();
                l.globals = Some(r);
            }
            Payload::ExportSection(r) => {
                for ex in r {
                    let ex = ex.map_err(e)?;
                    if ex.kind == wasmparser::ExternalKind::Func {
                        l.exports.insert(ex.name.to_string(), ex.index);
                    }
                }
            }
            Payload::StartSection { .. } => return Err(err(name, "has a start function")),
            Payload::ElementSection(r) => {
                l.num_elements = r.count();
                l.elements = Some(r);
            }
            Payload::DataSection(r) => {
                l.num_data = r.count();
                l.data = Some(r);
            }
            Payload::CodeSectionEntry(body) => l.bodies.push(body),
            Payload::CustomSection(c) => {
                if let wasmparser::KnownCustom::Name(names) = c.as_known() {
                    for n in names {
                        let Ok(wasmparser::Name::Function(map)) = n else {
                            continue;
                        };
                        for naming in map {
                            let naming = naming.map_err(e)?;
                            l.func_names.push((naming.index, naming.name.to_string()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if l.bodies.len() != l.funcs.len() {
        return Err(err(name, "function and code sections disagree"));
    }
    Ok(l)
}

/// Index remapping of one linked module into the output.
pub struct Remap {
    pub name: &'static str,
    pub types: Vec<u32>,
    pub funcs: Vec<u32>,
    pub globals: Vec<u32>,
    /// Values of the output's immutable globals (`__heap_base`, `__table_base`), by
    /// output index, so constant expressions can use plain constants.
    pub global_consts: HashMap<u32, i32>,
    pub elem_base: u32,
    pub data_base: u32,
}

fn lookup(name: &str, what: &str, v: &[u32], i: u32) -> Result<u32, ReError<String>> {
    v.get(i as usize)
        .copied()
        .ok_or_else(|| ReError::UserError(format!("{name}: {what} index {i} out of range")))
}

impl Reencode for Remap {
    type Error = String;

    fn type_index(&mut self, ty: u32) -> Result<u32, ReError<String>> {
        lookup(self.name, "type", &self.types, ty)
    }
    fn function_index(&mut self, f: u32) -> Result<u32, ReError<String>> {
        lookup(self.name, "function", &self.funcs, f)
    }
    fn global_index(&mut self, g: u32) -> Result<u32, ReError<String>> {
        lookup(self.name, "global", &self.globals, g)
    }
    fn memory_index(&mut self, _m: u32) -> Result<u32, ReError<String>> {
        Ok(0)
    }
    fn table_index(&mut self, _t: u32) -> Result<u32, ReError<String>> {
        Ok(0)
    }
    fn element_index(&mut self, e: u32) -> Result<u32, ReError<String>> {
        Ok(self.elem_base + e)
    }
    fn data_index(&mut self, d: u32) -> Result<u32, ReError<String>> {
        Ok(self.data_base + d)
    }
    fn const_expr(&mut self, e: wasmparser::ConstExpr) -> Result<ConstExpr, ReError<String>> {
        // `global.get` of an output constant becomes the constant itself (defined
        // globals may not appear in constant expressions without the GC proposal).
        if let Some(v) = self.eval(&e) {
            return Ok(ConstExpr::i32_const(v));
        }
        wasm_encoder::reencode::utils::const_expr(self, e)
    }
}

impl Remap {
    /// Evaluates `i32.const c` or `global.get g` of a constant output global.
    pub fn eval(&self, e: &wasmparser::ConstExpr) -> Option<i32> {
        let mut r = e.get_operators_reader();
        let op = r.read().ok()?;
        let v = match op {
            Operator::I32Const { value } => value,
            Operator::GlobalGet { global_index } => {
                let g = *self.globals.get(global_index as usize)?;
                *self.global_consts.get(&g)?
            }
            _ => return None,
        };
        match r.read().ok()? {
            Operator::End if r.eof() => Some(v),
            _ => None,
        }
    }
}
