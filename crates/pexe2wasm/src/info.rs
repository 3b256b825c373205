//! `pexe2wasm info`: facts about a pexe (sizes, counts, intrinsics, IRT/PPAPI interfaces).
//!
//! [`info`] decodes a pexe and summarizes it as an [`Info`], which serializes to JSON
//! (`--json`) and renders as human text ([`fmt::Display`]). The interface names come from
//! scanning the data of global initializers for NUL-terminated strings
//! ([`scan_interface_names`]): the libc and the PPAPI glue query the IRT and the browser by
//! name (`nacl-irt-fdio-0.1`, `PPB_Core;1.0`), so those strings tell what a pexe needs to run.

use crate::decode::{decode, DecodeError};
use crate::ir::{Element, Module};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;

/// Everything `pexe2wasm info` reports about one pexe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Info {
    /// Size of the file in bytes.
    pub file_size: u64,
    /// The PNaCl bitcode version from the header (2 for every shipped pexe).
    pub pnacl_version: Option<u32>,
    /// The module `version` record (1 = relative value ids).
    pub module_version: u64,
    /// Types declared in the types block.
    pub num_types: u32,
    pub num_functions: u32,
    /// Functions with a body in this module.
    pub num_defined_functions: u32,
    /// Functions only declared (`declare`: intrinsics and other prototypes).
    pub num_declared_functions: u32,
    pub num_globals: u32,
    /// Bytes of global data (initializer sizes summed).
    pub global_data_bytes: u64,
    /// Basic blocks over all function bodies.
    pub num_basic_blocks: u64,
    /// Instructions over all function bodies.
    pub num_instructions: u64,
    /// Every function address, in order.
    pub functions: Vec<FunctionInfo>,
    /// Names of the declared `llvm.*` intrinsics, sorted.
    pub intrinsics: Vec<IntrinsicInfo>,
    /// IRT interface names (`nacl-irt-*`) found in global data, sorted and deduplicated.
    pub irt_interfaces: Vec<String>,
    /// PPAPI interface names (`PPB_*`/`PPP_*`) found in global data, sorted and deduplicated.
    pub ppapi_interfaces: Vec<String>,
    /// Symbol names: how many defined functions and globals carry one.
    pub symbols: SymbolInfo,
    /// True if a function named `_start` exists (the entry point of a runnable pexe).
    pub has_start: bool,
    /// What it needs to run (which kind of host, and the interface that decided it).
    pub needs: crate::needs::Needs,
}

/// One function address (`@fN`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FunctionInfo {
    /// Its index N in `@fN`.
    pub index: u32,
    /// Its name from the value symbol table, if the pexe carries one.
    pub name: Option<String>,
    /// True if this module has a body for it.
    pub defined: bool,
    /// Its signature in PNaClAsm syntax (`i32 (i32, i32)`).
    pub signature: String,
}

/// A declared intrinsic.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IntrinsicInfo {
    pub name: String,
    /// False when the name starts with `llvm.` but is not an intrinsic PNaCl allows.
    pub allowed: bool,
}

/// How much symbol information a pexe keeps. A stripped pexe names only `_start` and the
/// intrinsics (which the PNaCl ABI requires by name).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SymbolInfo {
    pub named_defined_functions: u32,
    pub defined_functions: u32,
    pub named_globals: u32,
    pub globals: u32,
    /// True if every defined function has a name and there is more than one (a lone
    /// `_start` is all a stripped pexe keeps, so one named function proves nothing).
    pub unstripped: bool,
}

/// Decodes `data` and summarizes it.
pub fn info(data: &[u8]) -> Result<Info, DecodeError> {
    let module = decode(data)?;
    Ok(Info::from_module(data.len() as u64, &module))
}

impl Info {
    /// Summarizes an already decoded module read from a file of `file_size` bytes.
    pub fn from_module(file_size: u64, m: &Module) -> Info {
        let functions: Vec<FunctionInfo> = m
            .functions
            .iter()
            .enumerate()
            .map(|(i, f)| FunctionInfo {
                index: i as u32,
                name: f.name.clone(),
                defined: !f.is_proto,
                signature: m.types.display(f.ty).to_string(),
            })
            .collect();
        let num_defined = functions.iter().filter(|f| f.defined).count() as u32;
        let named_defined = functions
            .iter()
            .filter(|f| f.defined && f.name.is_some())
            .count() as u32;

        let mut intrinsics: Vec<IntrinsicInfo> = m
            .functions
            .iter()
            .filter_map(|f| {
                let name = f.name.as_deref()?;
                (f.intrinsic.is_some() || name.starts_with("llvm.")).then(|| IntrinsicInfo {
                    name: name.to_string(),
                    allowed: f.intrinsic.is_some(),
                })
            })
            .collect();
        intrinsics.sort_by(|a, b| a.name.cmp(&b.name));
        intrinsics.dedup();

        let (irt, ppapi) = interface_names(m);

        let num_globals = m.globals.len() as u32;
        let has_start = m.function_by_name("_start").is_some();
        Info {
            // By signature, not name: a `_start` of another type cannot run either.
            needs: crate::needs::needs(&irt, &ppapi, crate::verify::check_runnable(m).is_ok()),
            file_size,
            pnacl_version: m.header.pnacl_version(),
            module_version: m.version,
            num_types: m.types.num_declared,
            num_functions: m.functions.len() as u32,
            num_defined_functions: num_defined,
            num_declared_functions: m.functions.len() as u32 - num_defined,
            num_globals,
            global_data_bytes: m.globals.iter().map(|g| g.init.size()).sum(),
            num_basic_blocks: m
                .function_bodies
                .iter()
                .map(|f| u64::from(f.num_blocks))
                .sum(),
            num_instructions: m.function_bodies.iter().map(|f| f.insts.len() as u64).sum(),
            intrinsics,
            irt_interfaces: irt,
            ppapi_interfaces: ppapi,
            symbols: SymbolInfo {
                named_defined_functions: named_defined,
                defined_functions: num_defined,
                named_globals: m.globals.iter().filter(|g| g.name.is_some()).count() as u32,
                globals: num_globals,
                unstripped: num_defined > 1 && named_defined == num_defined,
            },
            has_start,
            functions,
        }
    }
}

/// The IRT (`nacl-irt-*`) and PPAPI (`PPB_*`/`PPP_*`) interface names in the module's
/// global data, each sorted and without repeats.
pub fn interface_names(m: &Module) -> (Vec<String>, Vec<String>) {
    let mut irt = BTreeSet::new();
    let mut ppapi = BTreeSet::new();
    for g in &m.globals {
        let found = scan_elements(g.init.elements());
        irt.extend(found.irt);
        ppapi.extend(found.ppapi);
    }
    (irt.into_iter().collect(), ppapi.into_iter().collect())
}

/// Whether any global's data names the IRT interface `name` (e.g. `nacl-irt-thread-0.1`):
/// a pexe queries only the interfaces whose names it holds.
///
/// `convert` asks this of every pexe (does it use threads?) before anything can run in
/// parallel, so it looks for `name` + NUL directly (memchr's memmem) instead of collecting
/// every interface name as [`scan_interface_names`] does; the answer is the same (tests
/// compare both on combinations of data pieces and on every well-formed real pexe).
pub fn names_irt_interface(m: &Module, name: &str) -> bool {
    let mut needle = Vec::with_capacity(name.len() + 1);
    needle.extend_from_slice(name.as_bytes());
    needle.push(0);
    let finder = memchr::memmem::Finder::new(&needle);
    let mut run: Vec<u8> = Vec::new();
    m.globals
        .iter()
        .any(|g| elements_name(g.init.elements(), &finder, &mut run))
}

/// Whether the joined data runs of one initializer (as [`scan_elements`] joins them) hold
/// the NUL-terminated string `finder`'s needle (a name + NUL) as a whole string: at the
/// start of the run or after a byte that cannot be part of text.
fn elements_name(
    elements: &[Element],
    finder: &memchr::memmem::Finder<'_>,
    run: &mut Vec<u8>,
) -> bool {
    let found = |run: &[u8]| {
        finder.find_iter(run).any(|at| {
            at == 0 || {
                let b = run[at - 1];
                !b.is_ascii_graphic() && b != b' '
            }
        })
    };
    // Most initializers are a single data element: no copy needed.
    if let [Element::Data(d)] = elements {
        return found(d);
    }
    !for_each_run(elements, run, |r| !found(r))
}

/// Calls `f` on each run of an initializer's bytes as the interface scan sees them: data
/// elements joined; a zerofill ends a run like a NUL byte would (its first byte is one),
/// and a relocation (a 4-byte address) breaks it. Stops, returning false, when `f` does.
fn for_each_run(elements: &[Element], run: &mut Vec<u8>, mut f: impl FnMut(&[u8]) -> bool) -> bool {
    run.clear();
    for e in elements {
        match e {
            Element::Data(d) => {
                run.extend_from_slice(d);
                continue;
            }
            Element::Zerofill(n) if *n > 0 => run.push(0),
            Element::Zerofill(_) | Element::Reloc { .. } => {}
        }
        if !f(run) {
            return false;
        }
        run.clear();
    }
    f(run)
}

/// Interface names found in some bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterfaceNames {
    /// `nacl-irt-*` names, in the order found (may repeat).
    pub irt: Vec<String>,
    /// `PPB_*`/`PPP_*` names, in the order found (may repeat).
    pub ppapi: Vec<String>,
}

/// Scans one global's initializer, run by run ([`for_each_run`]).
fn scan_elements(elements: &[Element]) -> InterfaceNames {
    let mut out = InterfaceNames::default();
    for_each_run(elements, &mut Vec::new(), |run| {
        scan_into(run, &mut out);
        true
    });
    out
}

/// Finds the IRT (`nacl-irt-NAME-X.Y`) and PPAPI (`PPB_NAME;X.Y`, `PPP_NAME;X.Y`) interface
/// names stored as NUL-terminated strings in `bytes`. A name must be the whole string or be
/// preceded by a byte that is not a printable character (other data packed right before it);
/// a string that merely mentions a name inside a sentence does not count.
pub fn scan_interface_names(bytes: &[u8]) -> InterfaceNames {
    let mut out = InterfaceNames::default();
    scan_into(bytes, &mut out);
    out
}

fn scan_into(bytes: &[u8], out: &mut InterfaceNames) {
    // Every name starts with `nacl-irt-`, `PPB_` or `PPP_`: the candidates are the `n`s
    // and `P`s that start one, found with memchr2 (a few instructions a byte and no set-up,
    // where splitting the data into strings and looking at each cost about 25 a byte: a
    // quarter of a large plugin's conversion was this scan). A candidate counts when it is
    // a whole string as the rule above says: what precedes it is not text (or it starts
    // the data), and text runs from it to a NUL.
    const PREFIXES: [&[u8]; 3] = [b"nacl-irt-", b"PPB_", b"PPP_"];
    let is_text = |b: u8| b.is_ascii_graphic() || b == b' ';
    for at in memchr::memchr2_iter(b'n', b'P', bytes) {
        let rest = &bytes[at..];
        if !PREFIXES.iter().any(|p| rest.starts_with(p)) {
            continue;
        }
        if at > 0 && is_text(bytes[at - 1]) {
            continue;
        }
        let Some(len) = memchr::memchr(0, rest) else {
            continue;
        };
        let candidate = &rest[..len];
        if !candidate.iter().all(|&b| is_text(b)) {
            continue;
        }
        // Printable ASCII is UTF-8.
        let Ok(s) = std::str::from_utf8(candidate) else {
            continue;
        };
        if is_irt_name(s) {
            out.irt.push(s.to_string());
        } else if is_ppapi_name(s) {
            out.ppapi.push(s.to_string());
        }
    }
}

/// `nacl-irt-` + lowercase words joined by `-` + `-MAJOR.MINOR`, e.g. `nacl-irt-dev-fdio-0.3`.
fn is_irt_name(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("nacl-irt-") else {
        return false;
    };
    let Some((name, version)) = rest.rsplit_once('-') else {
        return false;
    };
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        && is_version(version)
}

/// `PPB_`/`PPP_` + an identifier (parentheses allowed, as in `OpenGLES2DrawBuffers(Dev)`)
/// + `;MAJOR.MINOR`, e.g. `PPB_Core;1.0`.
fn is_ppapi_name(s: &str) -> bool {
    if !(s.starts_with("PPB_") || s.starts_with("PPP_")) {
        return false;
    }
    let Some((name, version)) = s[4..].split_once(';') else {
        return false;
    };
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'(' | b')'))
        && is_version(version)
}

/// `N.N` or `N.N.N` with decimal numbers.
fn is_version(v: &str) -> bool {
    let parts: Vec<&str> = v.split('.').collect();
    (2..=3).contains(&parts.len())
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

impl fmt::Display for Info {
    /// The human-readable report of `pexe2wasm info`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let version = self
            .pnacl_version
            .map_or_else(|| "none".to_string(), |v| v.to_string());
        writeln!(f, "file size:        {} bytes", self.file_size)?;
        writeln!(f, "PNaCl version:    {version}")?;
        writeln!(f, "types:            {}", self.num_types)?;
        writeln!(
            f,
            "functions:        {} ({} defined, {} declared)",
            self.num_functions, self.num_defined_functions, self.num_declared_functions
        )?;
        writeln!(
            f,
            "globals:          {} ({} bytes of data)",
            self.num_globals, self.global_data_bytes
        )?;
        writeln!(f, "basic blocks:     {}", self.num_basic_blocks)?;
        writeln!(f, "instructions:     {}", self.num_instructions)?;
        let s = &self.symbols;
        writeln!(
            f,
            "symbol names:     {} ({}/{} defined functions named, {}/{} globals named)",
            if s.unstripped { "yes" } else { "stripped" },
            s.named_defined_functions,
            s.defined_functions,
            s.named_globals,
            s.globals
        )?;
        writeln!(
            f,
            "_start:           {}",
            if self.has_start { "yes" } else { "no" }
        )?;
        writeln!(f, "needs:            {}", self.needs)?;

        write_list(
            f,
            "intrinsics",
            self.intrinsics.iter().map(|i| {
                if i.allowed {
                    i.name.clone()
                } else {
                    format!("{} (not allowed in PNaCl)", i.name)
                }
            }),
        )?;
        write_list(f, "IRT interfaces", self.irt_interfaces.iter().cloned())?;
        write_list(f, "PPAPI interfaces", self.ppapi_interfaces.iter().cloned())?;

        let declared: Vec<&FunctionInfo> = self.functions.iter().filter(|x| !x.defined).collect();
        writeln!(f, "declared functions ({}):", declared.len())?;
        for d in declared {
            writeln!(
                f,
                "  @f{} {}: {}",
                d.index,
                d.name.as_deref().unwrap_or("(unnamed)"),
                d.signature
            )?;
        }
        writeln!(f, "defined functions ({}):", self.num_defined_functions)?;
        // Named functions one per line; runs of unnamed ones (a stripped pexe) as ranges.
        let mut unnamed_run: Option<(u32, u32)> = None;
        let flush = |f: &mut fmt::Formatter<'_>, run: &mut Option<(u32, u32)>| -> fmt::Result {
            match run.take() {
                Some((a, b)) if a == b => writeln!(f, "  @f{a} (unnamed)"),
                Some((a, b)) => writeln!(f, "  @f{a}..@f{b} ({} unnamed)", b - a + 1),
                None => Ok(()),
            }
        };
        for d in self.functions.iter().filter(|x| x.defined) {
            match &d.name {
                Some(name) => {
                    flush(f, &mut unnamed_run)?;
                    writeln!(f, "  @f{} {}: {}", d.index, name, d.signature)?;
                }
                None => {
                    unnamed_run = match unnamed_run {
                        Some((a, b)) if b + 1 == d.index => Some((a, d.index)),
                        other => {
                            let mut other = other;
                            flush(f, &mut other)?;
                            Some((d.index, d.index))
                        }
                    }
                }
            }
        }
        flush(f, &mut unnamed_run)
    }
}

fn write_list(
    f: &mut fmt::Formatter<'_>,
    title: &str,
    items: impl Iterator<Item = String>,
) -> fmt::Result {
    let items: Vec<String> = items.collect();
    if items.is_empty() {
        return writeln!(f, "{title}: none");
    }
    writeln!(f, "{title} ({}):", items.len())?;
    for i in items {
        writeln!(f, "  {i}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitstream::Header;
    use crate::ir::{
        Align, Function, FunctionDecl, FunctionType, GlobalVar, Initializer, Intrinsic, Linkage,
        Type, TypeId, TypeTable,
    };

    fn scan(b: &[u8]) -> (Vec<String>, Vec<String>) {
        let r = scan_interface_names(b);
        (r.irt, r.ppapi)
    }

    #[test]
    fn finds_terminated_names() {
        let (irt, ppapi) = scan(b"nacl-irt-fdio-0.1\0PPB_Core;1.0\0PPP_Instance;1.1\0");
        assert_eq!(irt, ["nacl-irt-fdio-0.1"]);
        assert_eq!(ppapi, ["PPB_Core;1.0", "PPP_Instance;1.1"]);
    }

    #[test]
    fn requires_nul_termination() {
        let (irt, ppapi) = scan(b"nacl-irt-fdio-0.1");
        assert!(irt.is_empty() && ppapi.is_empty());
        let (irt, _) = scan(b"nacl-irt-memory-0.3\0nacl-irt-tls-0.1");
        assert_eq!(irt, ["nacl-irt-memory-0.3"]);
    }

    #[test]
    fn names_after_binary_data_count() {
        // An integer packed right before the string, without a NUL in between.
        let (irt, ppapi) = scan(b"\x01\x02\x03\x04nacl-irt-dev-fdio-0.3\0\xffPPB_Var;1.2\0");
        assert_eq!(irt, ["nacl-irt-dev-fdio-0.3"]);
        assert_eq!(ppapi, ["PPB_Var;1.2"]);
    }

    #[test]
    fn mentions_inside_text_do_not_count() {
        let (irt, ppapi) = scan(
            b"cannot find nacl-irt-fdio-0.1\0xPPB_Core;1.0\0PPB_Core;1.0 missing\0\
              nacl-irt-fdio\0PPB_Core\0PPB_;1.0\0nacl-irt--0.1\0PPB_Core;1.x\0",
        );
        assert!(irt.is_empty(), "{irt:?}");
        assert!(ppapi.is_empty(), "{ppapi:?}");
    }

    #[test]
    fn ppapi_names_with_parentheses_and_three_part_versions() {
        let (_, ppapi) = scan(b"PPB_OpenGLES2DrawBuffers(Dev);1.0\0PPB_Foo_Private;0.1.2\0");
        assert_eq!(
            ppapi,
            ["PPB_OpenGLES2DrawBuffers(Dev);1.0", "PPB_Foo_Private;0.1.2"]
        );
    }

    fn decl(ty: TypeId, name: Option<&str>, is_proto: bool) -> FunctionDecl {
        FunctionDecl {
            ty,
            cc: 0,
            is_proto,
            linkage: Linkage::External,
            name: name.map(str::to_string),
            intrinsic: name.and_then(Intrinsic::from_name),
            body: None,
            bit: 0,
        }
    }

    #[test]
    fn summarizes_a_module() {
        let mut types = TypeTable::new();
        let i32_ty = types.push_declared(Type::Int(32));
        let void = types.push_declared(Type::Void);
        let entry = types.push_declared(Type::Function(FunctionType {
            vararg: false,
            ret: void,
            params: vec![i32_ty],
        }));
        let trap = types.push_declared(Type::Function(FunctionType {
            vararg: false,
            ret: void,
            params: vec![],
        }));
        let body = |blocks: u32| Function {
            num_blocks: blocks,
            ..Function::default()
        };
        let m = Module {
            header: Header::standard(),
            version: 1,
            types,
            functions: vec![
                decl(trap, Some("llvm.trap"), true),
                decl(entry, None, false),
                decl(entry, None, false),
                decl(entry, Some("_start"), false),
                decl(trap, Some("llvm.bogus"), true),
            ],
            globals: vec![GlobalVar {
                align: Align(0),
                is_const: true,
                init: Initializer::Compound(vec![
                    Element::Data(b"PPP_Instance;1.1\0nacl-irt-tls-0.1".to_vec()),
                    Element::Zerofill(4),
                ]),
                name: None,
                bit: 0,
            }],
            function_bodies: vec![body(1), body(2), body(3)],
        };
        let i = Info::from_module(1234, &m);
        assert_eq!(i.file_size, 1234);
        assert_eq!(i.pnacl_version, Some(2));
        assert_eq!(i.num_types, 4);
        assert_eq!((i.num_defined_functions, i.num_declared_functions), (3, 2));
        assert_eq!(i.num_basic_blocks, 6);
        assert_eq!(i.global_data_bytes, 37);
        assert!(i.has_start);
        assert!(!i.symbols.unstripped);
        assert_eq!(i.symbols.named_defined_functions, 1);
        assert_eq!(i.irt_interfaces, ["nacl-irt-tls-0.1"]);
        assert_eq!(i.ppapi_interfaces, ["PPP_Instance;1.1"]);
        // A PPP_* name alone does not make a plugin: the ppapihook query does.
        assert_eq!(i.needs.host, Some(crate::needs::Host::Wasi));
        let names: Vec<(&str, bool)> = i
            .intrinsics
            .iter()
            .map(|x| (x.name.as_str(), x.allowed))
            .collect();
        assert_eq!(names, [("llvm.bogus", false), ("llvm.trap", true)]);

        let text = i.to_string();
        for needle in [
            "functions:        5 (3 defined, 2 declared)",
            "  @f0 llvm.trap: void ()",
            "  @f1..@f2 (2 unnamed)",
            "  @f3 _start: void (i32)",
            "llvm.bogus (not allowed in PNaCl)",
            "symbol names:     stripped (1/3 defined functions named",
            "needs:            runs on any WASI runtime",
        ] {
            assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
        }
        let json = serde_json::to_value(&i).unwrap();
        assert_eq!(json["functions"][3]["name"], "_start");
        assert_eq!(json["symbols"]["named_defined_functions"], 1);
    }

    #[test]
    fn elements_zerofill_terminates_and_reloc_breaks() {
        let found = scan_elements(&[
            Element::Data(b"nacl-irt-tls-0.1".to_vec()),
            Element::Zerofill(3),
            Element::Data(b"PPB_Var;1.0".to_vec()),
            Element::Reloc {
                target: 0,
                addend: None,
            },
            Element::Data(b"PPB_".to_vec()),
            Element::Data(b"Core;1.0\0".to_vec()),
        ]);
        assert_eq!(found.irt, ["nacl-irt-tls-0.1"]);
        // "PPB_Var;1.0" is cut by the relocation before any NUL; the split data joins.
        assert_eq!(found.ppapi, ["PPB_Core;1.0"]);
    }

    /// `elements_name` (the fast check `convert` uses) agrees with `scan_elements` on every
    /// combination of a few pieces: the name whole or split, text or binary before it,
    /// terminated by NUL, a zerofill, a relocation or nothing.
    #[test]
    fn fast_name_check_agrees_with_the_scanner() {
        let name = "nacl-irt-thread-0.1";
        let reloc = || Element::Reloc {
            target: 0,
            addend: None,
        };
        let pieces: Vec<Element> = vec![
            Element::Data(b"nacl-irt-thread-0.1".to_vec()),
            Element::Data(b"nacl-irt-".to_vec()),
            Element::Data(b"thread-0.1".to_vec()),
            Element::Data(b"\0".to_vec()),
            Element::Data(b"x".to_vec()),
            Element::Data(b" ".to_vec()),
            Element::Data(b"\x01".to_vec()),
            Element::Data(b"nacl-irt-thread-0.1\0".to_vec()),
            Element::Data(b"nacl-irt-thread-0.10\0".to_vec()),
            Element::Zerofill(0),
            Element::Zerofill(2),
            reloc(),
        ];
        let finder = memchr::memmem::Finder::new(b"nacl-irt-thread-0.1\0");
        let mut run = Vec::new();
        let (mut yes, mut total) = (0, 0);
        let n = pieces.len();
        for a in 0..n {
            for b in 0..n {
                for c in 0..n {
                    for d in 0..n {
                        let els = [
                            pieces[a].clone(),
                            pieces[b].clone(),
                            pieces[c].clone(),
                            pieces[d].clone(),
                        ];
                        for k in 1..=4 {
                            let els = &els[..k];
                            let slow = scan_elements(els).irt.iter().any(|x| x == name);
                            let fast = elements_name(els, &finder, &mut run);
                            assert_eq!(fast, slow, "{els:?}");
                            yes += usize::from(slow);
                            total += 1;
                        }
                    }
                }
            }
        }
        // Both answers occur often enough for the comparison to mean something.
        assert!(yes > total / 20 && yes < total / 2, "{yes} of {total}");
    }
}
