//! The Pepper glue of a plugin (docs/PEPPER-ABI.md): one import per function of every PPB
//! interface the pexe names and the description (`pexe2wasm-ppapi`) knows, placed in the
//! table, and the interface directory `PPB_GetInterface` reads (the Pepper runtime's
//! `$ppb_get_interface`): for each interface, its name and a table of function pointers
//! laid out as the C struct.
//!
//! The glue is a small module written against the `env` contract (its element segment at
//! a fixed table offset, after the runtime's) that `module.rs` links like the runtime, and
//! one data segment for the directory, at the page after the runtime's state page, which
//! `module.rs` adds to the pexe's (so a threaded module initializes it once, in `_start`).
//!
//! Invariants: the directory starts at [`directory_address`]; its first word is the number
//! of 64 KiB pages it takes (the runtime's allocator starts after them); every table entry
//! is a table slot of an import of exactly the description's wasm signature.

use wasm_encoder::{
    ConstExpr, ElementSection, Elements, EntityType, ImportSection, MemoryType, Module, RefType,
    TableType, TypeSection, ValType,
};

use crate::runtime::{PEPPER_DIRECTORY_OFFSET, PEPPER_TABLE_SLOTS};

/// The PPB interfaces among `names` that the description knows, in the order given
/// (repeats dropped).
pub fn known_ppb_interfaces<S: AsRef<str>>(
    names: &[S],
) -> Vec<&'static pexe2wasm_ppapi::Interface> {
    let d = pexe2wasm_ppapi::description();
    let mut out: Vec<&'static pexe2wasm_ppapi::Interface> = Vec::new();
    for n in names {
        if let Some(i) = d.interface(n.as_ref()) {
            if i.kind == pexe2wasm_ppapi::Kind::Ppb && !out.iter().any(|o| o.name == i.name) {
                out.push(i);
            }
        }
    }
    out
}

/// Where the directory goes for a module whose heap starts at `heap_base` (page aligned).
pub fn directory_address(heap_base: u64) -> u64 {
    heap_base.div_ceil(64 << 10) * (64 << 10) + u64::from(PEPPER_DIRECTORY_OFFSET)
}

/// The glue of one plugin.
pub struct Glue {
    /// The module to link (imports and an element segment).
    pub module: Vec<u8>,
    /// The directory: its address and bytes.
    pub directory: (u32, Vec<u8>),
    /// The first address after the directory's pages.
    pub end: u64,
}

/// Builds the glue for `interfaces` with the runtime's element segment at `table_base`
/// and the heap at `heap_base`.
pub fn glue(
    interfaces: &[&pexe2wasm_ppapi::Interface],
    table_base: u32,
    heap_base: u64,
    shared_memory: bool,
) -> Glue {
    let slot_base = table_base + PEPPER_TABLE_SLOTS;
    let dir = directory_address(heap_base);

    // The module: one type per distinct signature, the imports, the element segment.
    let mut types = TypeSection::new();
    let mut sigs: Vec<&pexe2wasm_ppapi::WasmSignature> = Vec::new();
    let mut imports = ImportSection::new();
    imports.import(
        crate::runtime::ENV,
        crate::runtime::ENV_MEMORY,
        EntityType::Memory(MemoryType {
            minimum: 1,
            maximum: shared_memory.then_some(65536),
            memory64: false,
            shared: shared_memory,
            page_size_log2: None,
        }),
    );
    imports.import(
        crate::runtime::ENV,
        crate::runtime::ENV_TABLE,
        EntityType::Table(TableType {
            element_type: RefType::FUNCREF,
            table64: false,
            minimum: 0,
            maximum: None,
            shared: false,
        }),
    );
    let mut n_funcs = 0u32;
    for i in interfaces {
        for f in &i.functions {
            let sig = f.wasm_signature();
            let t = match sigs.iter().position(|s| *s == sig) {
                Some(t) => t,
                None => {
                    types.ty().function(
                        sig.params.iter().map(|&v| valtype(v)),
                        sig.results.iter().map(|&v| valtype(v)),
                    );
                    sigs.push(sig);
                    sigs.len() - 1
                }
            };
            imports.import(&i.name, &f.name, EntityType::Function(t as u32));
            n_funcs += 1;
        }
    }
    let mut elems = ElementSection::new();
    let funcs: Vec<u32> = (0..n_funcs).collect();
    if n_funcs > 0 {
        elems.active(
            Some(0),
            &ConstExpr::i32_const(slot_base as i32),
            Elements::Functions(funcs.into()),
        );
    }
    let mut module = Module::new();
    module.section(&types);
    module.section(&imports);
    if n_funcs > 0 {
        module.section(&elems);
    }

    // The directory: header, records, names, tables.
    let records = 8 + 12 * interfaces.len();
    let names: usize = interfaces.iter().map(|i| i.name.len()).sum();
    let tables_at = (records + names).div_ceil(4) * 4;
    let size = tables_at + 4 * n_funcs as usize;
    let pages = size.div_ceil(64 << 10).max(1);
    let mut bytes = vec![0u8; size];
    let put = |b: &mut [u8], at: usize, v: u32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    put(&mut bytes, 0, pages as u32);
    put(&mut bytes, 4, interfaces.len() as u32);
    let mut name_at = records;
    let mut table_at = tables_at;
    let mut slot = slot_base;
    for (k, i) in interfaces.iter().enumerate() {
        let rec = 8 + 12 * k;
        bytes[name_at..name_at + i.name.len()].copy_from_slice(i.name.as_bytes());
        put(&mut bytes, rec, (dir + name_at as u64) as u32);
        put(&mut bytes, rec + 4, i.name.len() as u32);
        put(&mut bytes, rec + 8, (dir + table_at as u64) as u32);
        name_at += i.name.len();
        for _ in &i.functions {
            put(&mut bytes, table_at, slot);
            table_at += 4;
            slot += 1;
        }
    }
    Glue {
        module: module.finish(),
        directory: (dir as u32, bytes),
        end: dir + (pages as u64) * (64 << 10),
    }
}

fn valtype(v: pexe2wasm_ppapi::ValType) -> ValType {
    match v {
        pexe2wasm_ppapi::ValType::I32 => ValType::I32,
        pexe2wasm_ppapi::ValType::I64 => ValType::I64,
        pexe2wasm_ppapi::ValType::F32 => ValType::F32,
        pexe2wasm_ppapi::ValType::F64 => ValType::F64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn directory_names_each_known_ppb_interface_with_its_slots() {
        // PPP names and unknown names get no table; repeats count once.
        let names = [
            "PPB_Var;1.1",
            "PPP_Instance;1.1",
            "PPB_Core;1.0",
            "PPB_NoSuch;9.9",
            "PPB_Var;1.1",
        ];
        let ifaces = known_ppb_interfaces(&names);
        assert_eq!(
            ifaces.iter().map(|i| i.name.as_str()).collect::<Vec<_>>(),
            ["PPB_Var;1.1", "PPB_Core;1.0"]
        );
        let g = glue(&ifaces, 10, 0x30000, true);
        let (dir, b) = &g.directory;
        assert_eq!(*dir, 0x40000, "the page after the runtime's state page");
        assert_eq!(word(b, 0), 1, "one page");
        assert_eq!(word(b, 4), 2, "two records");
        let first_slot = 10 + PEPPER_TABLE_SLOTS;
        let mut slot = first_slot;
        for (k, i) in ifaces.iter().enumerate() {
            let rec = 8 + 12 * k;
            let (name_at, len, table_at) = (word(b, rec), word(b, rec + 4), word(b, rec + 8));
            let off = (name_at - dir) as usize;
            assert_eq!(&b[off..off + len as usize], i.name.as_bytes());
            assert_eq!(table_at % 4, 0);
            for f in 0..i.functions.len() {
                assert_eq!(word(b, (table_at - dir) as usize + 4 * f), slot);
                slot += 1;
            }
        }
        assert_eq!(g.end, 0x50000);
        // The module: one import per function, in the same order, placed at those slots.
        let mut imports = Vec::new();
        let mut elem_offset = None;
        for p in wasmparser::Parser::new(0).parse_all(&g.module) {
            match p.unwrap() {
                wasmparser::Payload::ImportSection(r) => {
                    for i in r.into_imports() {
                        let i = i.unwrap();
                        imports.push(format!("{}.{}", i.module, i.name));
                    }
                }
                wasmparser::Payload::ElementSection(r) => {
                    for e in r {
                        if let wasmparser::ElementKind::Active { offset_expr, .. } = e.unwrap().kind
                        {
                            let mut ops = offset_expr.get_operators_reader();
                            if let Ok(wasmparser::Operator::I32Const { value }) = ops.read() {
                                elem_offset = Some(value as u32);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        assert_eq!(
            imports[..2],
            ["env.memory", "env.__indirect_function_table"]
        );
        assert_eq!(imports[2], "PPB_Var;1.1.AddRef");
        assert_eq!(imports.len() - 2, (slot - first_slot) as usize);
        assert_eq!(elem_offset, Some(first_slot));
        wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
            .validate_all(&g.module)
            .unwrap();
    }
}
