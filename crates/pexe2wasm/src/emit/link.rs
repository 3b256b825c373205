//! Linking a wasm module written against the `env` contract (the IRT runtime, the fmod
//! helpers) into the output: its `env` imports resolve to the output's own memory, table,
//! globals and the pexe's `_start`; its other function imports (WASI) become imports of
//! the output; its types, functions, globals, element and data segments are copied with
//! every index remapped (`wasm_encoder::reencode`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use wasm_encoder::reencode::{Error as ReError, Reencode};
use wasm_encoder::{ConstExpr, ValType};
use wasmparser::{
    DataSectionReader, ElementSectionReader, FunctionBody, GlobalSectionReader, Operator, Parser,
    Payload, TypeRef,
};

use super::{EmitError, LinkProblem};
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
    /// The module's bytes (the key of its re-encoded bodies in [`reencode_bodies`]).
    pub bytes: &'a [u8],
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

fn err(name: &'static str, problem: impl Into<LinkProblem>) -> EmitError {
    EmitError::link(name, problem)
}

fn valtype(name: &'static str, t: wasmparser::ValType) -> Result<ValType, EmitError> {
    Ok(match t {
        wasmparser::ValType::I32 => ValType::I32,
        wasmparser::ValType::I64 => ValType::I64,
        wasmparser::ValType::F32 => ValType::F32,
        wasmparser::ValType::F64 => ValType::F64,
        wasmparser::ValType::V128 => ValType::V128,
        wasmparser::ValType::Ref(_) => return Err(err(name, LinkProblem::ReferenceTypes)),
    })
}

pub fn parse<'a>(name: &'static str, bytes: &'a [u8]) -> Result<Linked<'a>, EmitError> {
    let mut l = Linked {
        name,
        bytes,
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
                            return Err(err(
                                name,
                                LinkProblem::UnresolvedEnvImport { name: n.into() },
                            ));
                        }
                        (m, n, TypeRef::Func(t)) => Import::Func(m.into(), n.into(), t),
                        (m, n, _) => {
                            return Err(err(
                                name,
                                LinkProblem::NonFunctionImport {
                                    module: m.into(),
                                    name: n.into(),
                                },
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
            Payload::TableSection(_) => return Err(err(name, LinkProblem::OwnTable)),
            Payload::MemorySection(_) => return Err(err(name, LinkProblem::OwnMemory)),
            Payload::TagSection(_) => return Err(err(name, LinkProblem::Tags)),
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
            Payload::StartSection { .. } => return Err(err(name, LinkProblem::StartFunction)),
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
        return Err(err(name, LinkProblem::FunctionCodeMismatch));
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
    /// The one entry of `funcs` that differs from one pexe to the next (the import of
    /// `env.pexe_start`, which resolves to the pexe's `_start`), or `u32::MAX`.
    pub varying_func: u32,
    /// Set when a re-encoded instruction used `varying_func`.
    pub used_varying: bool,
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
        self.used_varying |= f == self.varying_func;
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

/// What a linked module's re-encoded function bodies depend on besides its bytes: every
/// index remapping a body can use (constant expressions, which also read the output's
/// constants, never occur in bodies). `funcs` has `varying_func`'s entry cleared.
#[derive(PartialEq, Eq)]
struct BodiesKey {
    bytes: Vec<u8>,
    types: Vec<u32>,
    funcs: Vec<u32>,
    globals: Vec<u32>,
    elem_base: u32,
    data_base: u32,
}

/// A linked module's bodies re-encoded for one [`BodiesKey`]: `None` for a body that uses
/// `varying_func`, which is re-encoded on every conversion.
struct CachedBodies {
    key: BodiesKey,
    bodies: Vec<Option<Vec<u8>>>,
}

/// The last few re-encodings (one per runtime variant and index layout in use).
static BODIES: Mutex<Vec<Arc<CachedBodies>>> = Mutex::new(Vec::new());
const BODIES_KEPT: usize = 4;

fn bodies_key(l: &Linked<'_>, r: &Remap) -> BodiesKey {
    let mut funcs = r.funcs.clone();
    if let Some(f) = funcs.get_mut(r.varying_func as usize) {
        *f = u32::MAX;
    }
    BodiesKey {
        bytes: l.bytes.to_vec(),
        types: r.types.clone(),
        funcs,
        globals: r.globals.clone(),
        elem_base: r.elem_base,
        data_base: r.data_base,
    }
}

fn reencode_body(r: &mut Remap, body: &FunctionBody<'_>) -> Result<Vec<u8>, ReError<String>> {
    let mut f = r.new_function_with_parsed_locals(body)?;
    let mut reader = body.get_operators_reader()?;
    while !reader.eof() {
        f.instruction(&r.parse_instruction(&mut reader)?);
    }
    Ok(f.into_raw_body())
}

/// Appends `l`'s function bodies, re-encoded with `r`, to `code`. The runtime is the same
/// 75 KB module in every conversion and its index remapping differs only in the target of
/// `env.pexe_start`, so the bodies that do not call it are re-encoded once and reused
/// (the key compares the module's bytes and every remapping, so a different runtime
/// variant or layout simply gets its own entry).
pub fn reencode_bodies(
    l: &Linked<'_>,
    r: &mut Remap,
    code: &mut wasm_encoder::CodeSection,
) -> Result<(), ReError<String>> {
    let key = bodies_key(l, r);
    let hit = {
        let cache = BODIES.lock().unwrap_or_else(|e| e.into_inner());
        cache.iter().find(|c| c.key == key).cloned()
    };
    if let Some(c) = hit {
        for (cached, body) in c.bodies.iter().zip(&l.bodies) {
            match cached {
                Some(b) => code.raw(b),
                None => code.raw(&reencode_body(r, body)?),
            };
        }
        return Ok(());
    }
    let mut bodies = Vec::with_capacity(l.bodies.len());
    for body in &l.bodies {
        r.used_varying = false;
        let b = reencode_body(r, body)?;
        code.raw(&b);
        bodies.push((!r.used_varying).then_some(b));
    }
    let mut cache = BODIES.lock().unwrap_or_else(|e| e.into_inner());
    // Another thread may have filled the same entry meanwhile.
    if cache.iter().any(|c| c.key == key) {
        return Ok(());
    }
    if cache.len() >= BODIES_KEPT {
        cache.remove(0);
    }
    cache.push(Arc::new(CachedBodies { key, bodies }));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_encoder::Encode;

    /// The runtime remapped as if `env.pexe_start` resolved to `start`, every other
    /// function import to itself and defined functions `shift` places after the imports.
    fn remap(l: &Linked<'_>, start: u32, shift: u32) -> Remap {
        let mut funcs = Vec::new();
        let mut globals = Vec::new();
        let mut varying_func = u32::MAX;
        for imp in &l.imports {
            match imp {
                Import::PexeStart => {
                    varying_func = funcs.len() as u32;
                    funcs.push(start);
                }
                Import::Func(..) => funcs.push(funcs.len() as u32),
                Import::EnvGlobal(g) => globals.push(*g),
                Import::EnvMemory | Import::EnvTable => {}
            }
        }
        let base = l.num_func_imports();
        funcs.extend((0..l.funcs.len() as u32).map(|j| base + shift + j));
        globals.extend((0..l.num_globals).map(|g| 4 + g));
        Remap {
            name: l.name,
            types: (0..l.types.len() as u32).collect(),
            funcs,
            globals,
            global_consts: HashMap::new(),
            elem_base: 1,
            data_base: 0,
            varying_func,
            used_varying: false,
        }
    }

    fn bytes(code: &wasm_encoder::CodeSection) -> Vec<u8> {
        let mut v = Vec::new();
        code.encode(&mut v);
        v
    }

    /// The bodies re-encoded one by one, without the cache.
    fn uncached(l: &Linked<'_>, mut r: Remap) -> Vec<u8> {
        let mut code = wasm_encoder::CodeSection::new();
        for b in &l.bodies {
            r.parse_function_body(&mut code, b.clone()).unwrap();
        }
        bytes(&code)
    }

    fn cached(l: &Linked<'_>, mut r: Remap) -> Vec<u8> {
        let mut code = wasm_encoder::CodeSection::new();
        reencode_bodies(l, &mut r, &mut code).unwrap();
        bytes(&code)
    }

    #[test]
    fn cached_runtime_bodies_follow_the_pexe_start_target_and_the_layout() {
        let l = parse("runtime", crate::runtime::irt_module()).unwrap();
        let n = l.num_func_imports() + l.funcs.len() as u32 + 10;
        // Two pexes whose `_start` lands at different indices, converted alternately as a
        // service would: a miss, then hits.
        let (a, b) = (n + 7, n + 300);
        let want_a = uncached(&l, remap(&l, a, 0));
        let want_b = uncached(&l, remap(&l, b, 0));
        assert!(want_a != want_b, "the runtime must call env.pexe_start");
        for _ in 0..2 {
            assert!(cached(&l, remap(&l, a, 0)) == want_a);
            assert!(cached(&l, remap(&l, b, 0)) == want_b);
        }
        // Another function layout is its own cache entry.
        let want = uncached(&l, remap(&l, a, 5));
        assert!(want != want_a, "runtime functions must call each other");
        assert!(cached(&l, remap(&l, a, 5)) == want);
        assert!(cached(&l, remap(&l, a, 0)) == want_a);
    }
}
