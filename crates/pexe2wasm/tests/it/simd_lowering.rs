//! Vector lowering that the semantics fixtures cannot reach through `convert`:
//!
//! - insertelement/extractelement with a *variable* index. PNaCl requires the index to be
//!   an i32 literal, so the verifier rejects such a pexe (checked here), but the lowering
//!   still handles it (lane `index mod N`). The module is decoded and emitted without the
//!   verifier, validated, and run in wasmtime.
//! - vector division by a zero lane traps, as scalar division does;
//! - the disassembler and assembler round-trip every SIMD fixture bit for bit.

use pexe2wasm::convert::{convert, ConvertOptions};
use pexe2wasm::emit::{emit, EmitOptions};
use pexe2wasm::text::assemble;
use wasmtime::{Engine, Instance, Module, Store, Val};

/// A module whose functions `get_T(ptr, idx) -> elem as i32/float` and
/// `put_T(ptr, idx, value)` extract and insert at a run-time index.
fn variable_index_module() -> String {
    let shapes = [
        ("<16 x i8>", "i8", 1),
        ("<8 x i16>", "i16", 2),
        ("<4 x i32>", "i32", 4),
        ("<4 x float>", "float", 4),
    ];
    let mut s = String::from(
        "module {\n version 1;\n types {\n  count 13;\n  @t0 = i1;\n  @t1 = i8;\n  @t2 = i16;\n  \
         @t3 = i32;\n  @t4 = float;\n  @t5 = void;\n  @t6 = <16 x i8>;\n  @t7 = <8 x i16>;\n  \
         @t8 = <4 x i32>;\n  @t9 = <4 x float>;\n  @t10 = i32 (i32, i32);\n  \
         @t11 = float (i32, i32);\n  @t12 = void (i32, i32, i32);\n }\n",
    );
    for (k, (_, e, _)) in shapes.iter().enumerate() {
        let ret = if *e == "float" { "float" } else { "i32" };
        s += &format!(" define internal {ret} @f{}(i32, i32);\n", 2 * k);
        s += &format!(" define internal void @f{}(i32, i32, i32);\n", 2 * k + 1);
    }
    s += " globals {\n  count 0;\n }\n valuesymtab {\n";
    for (k, (_, e, _)) in shapes.iter().enumerate() {
        s += &format!(
            "  @f{} : \"get_{e}\";\n  @f{} : \"put_{e}\";\n",
            2 * k,
            2 * k + 1
        );
    }
    s += " }\n";
    for (k, (vt, e, a)) in shapes.iter().enumerate() {
        let (ret, get_tail, put_head) = match *e {
            "float" => ("float", "ret float %v1;".to_string(), String::new()),
            "i32" => ("i32", "ret i32 %v1;".to_string(), String::new()),
            _ => (
                "i32",
                format!("%v2 = zext {e} %v1 to i32;\n  ret i32 %v2;"),
                format!("%v0 = trunc i32 %p2 to {e};\n  "),
            ),
        };
        s += &format!(
            " function {ret} @f{}(i32 %p0, i32 %p1) {{\n  blocks 1;\n  \
             %v0 = load {vt}* %p0, align {a};\n  %v1 = extractelement {vt} %v0, i32 %p1;\n  \
             {get_tail}\n }}\n",
            2 * k
        );
        let (elt, n0) = if put_head.is_empty() {
            if *e == "float" {
                ("%v0", 0)
            } else {
                ("%p2", 0)
            }
        } else {
            ("%v0", 1)
        };
        let float_head = if *e == "float" {
            "%v0 = bitcast i32 %p2 to float;\n  ".to_string()
        } else {
            String::new()
        };
        let n0 = if *e == "float" { 1 } else { n0 };
        s += &format!(
            " function void @f{}(i32 %p0, i32 %p1, i32 %p2) {{\n  blocks 1;\n  {put_head}{float_head}\
             %v{n0} = load {vt}* %p0, align {a};\n  \
             %v{} = insertelement {vt} %v{n0}, {e} {elt}, i32 %p1;\n  \
             store {vt} %v{}, {vt}* %p0, align {a};\n  ret void;\n }}\n",
            2 * k + 1,
            n0 + 1,
            n0 + 1
        );
    }
    s + "}\n"
}

struct Run {
    store: Store<()>,
    instance: Instance,
}

impl Run {
    fn new(wasm: &[u8]) -> Run {
        let engine = Engine::default();
        let module = Module::new(&engine, wasm).unwrap();
        let mut store = Store::new(&engine, ());
        let instance = Instance::new(&mut store, &module, &[]).unwrap();
        Run { store, instance }
    }
    fn call(&mut self, name: &str, args: &[Val]) -> Result<Option<Val>, wasmtime::Error> {
        let f = self.instance.get_func(&mut self.store, name).unwrap();
        let n = f.ty(&self.store).results().len();
        let mut res = vec![Val::I32(0); n];
        f.call(&mut self.store, args, &mut res)?;
        Ok(res.into_iter().next())
    }
    fn mem(&mut self) -> wasmtime::Memory {
        self.instance.get_memory(&mut self.store, "memory").unwrap()
    }
}

#[test]
fn variable_lane_index_is_rejected_by_the_verifier_but_lowered() {
    let text = variable_index_module();
    let pexe = assemble(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let module = pexe2wasm::decode::decode(&pexe).unwrap();
    let err = pexe2wasm::verify::verify_module(&module).unwrap_err();
    assert!(
        err.to_string().contains("index must be a constant"),
        "{err}"
    );
    assert!(convert(&pexe, &ConvertOptions::default()).is_err());

    let out = emit(
        &module,
        None,
        &EmitOptions {
            stack_size: 1 << 16,
            export_all_functions: true,
            ..Default::default()
        },
    )
    .unwrap();
    assert!(out.used.simd);
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out.wasm)
        .unwrap();
    let mut r = Run::new(&out.wasm);
    let base = 1024usize;
    let bytes: Vec<u8> = (0..16u8).map(|i| 0x80 ^ (i * 17)).collect();
    for (e, size) in [("i8", 1usize), ("i16", 2), ("i32", 4), ("float", 4)] {
        let n = 16 / size;
        // Indices past the end count modulo the lane count (pexe2wasm's choice for
        // what LLVM leaves undefined).
        for idx in 0..(n + 3) as i32 {
            let lane = idx as usize % n;
            let mem = r.mem();
            mem.write(&mut r.store, base, &bytes).unwrap();
            let want = &bytes[lane * size..lane * size + size];
            let mut w = [0u8; 4];
            w[..size].copy_from_slice(want);
            let want = u32::from_le_bytes(w);
            let got = r
                .call(&format!("get_{e}"), &[Val::I32(base as i32), Val::I32(idx)])
                .unwrap()
                .unwrap();
            let got = match got {
                Val::I32(x) => x as u32,
                Val::F32(x) => x,
                v => panic!("{v:?}"),
            };
            assert_eq!(got, want, "get_{e}({idx})");

            let value = 0xa5c3_e11du32;
            r.call(
                &format!("put_{e}"),
                &[Val::I32(base as i32), Val::I32(idx), Val::I32(value as i32)],
            )
            .unwrap();
            let mut after = [0u8; 16];
            r.mem().read(&r.store, base, &mut after).unwrap();
            let mut expect = bytes.clone();
            expect[lane * size..lane * size + size].copy_from_slice(&value.to_le_bytes()[..size]);
            assert_eq!(after.to_vec(), expect, "put_{e}({idx})");
        }
    }
}

#[test]
fn vector_division_by_a_zero_lane_traps() {
    let text = "module {\n version 1;\n types {\n  count 5;\n  @t0 = i32;\n  @t1 = void;\n  \
                @t2 = i16;\n  @t3 = <8 x i16>;\n  @t4 = void (i32, i32);\n }\n \
                define internal void @f0(i32, i32);\n globals {\n  count 0;\n }\n \
                valuesymtab {\n  @f0 : \"div\";\n }\n \
                function void @f0(i32 %p0, i32 %p1) {\n  blocks 1;\n  \
                %v0 = load <8 x i16>* %p0, align 2;\n  %v1 = load <8 x i16>* %p1, align 2;\n  \
                %v2 = sdiv <8 x i16> %v0, %v1;\n  store <8 x i16> %v2, <8 x i16>* %p0, align 2;\n  \
                ret void;\n }\n}\n";
    let pexe = assemble(text).unwrap_or_else(|e| panic!("{e}"));
    let out = convert(&pexe, &ConvertOptions::functions_only()).unwrap();
    let mut r = Run::new(&out.wasm);
    let a: Vec<u8> = [100i16, -100, 7, -32768, 1, 2, 3, 4]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mut b: Vec<u8> = [7i16, 7, -7, -1, 1, 1, 1, 1]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let mem = r.mem();
    mem.write(&mut r.store, 1024, &a).unwrap();
    mem.write(&mut r.store, 2048, &b).unwrap();
    r.call("div", &[Val::I32(1024), Val::I32(2048)]).unwrap();
    let mut got = [0u8; 16];
    r.mem().read(&r.store, 1024, &mut got).unwrap();
    let got: Vec<i16> = got
        .chunks(2)
        .map(|c| i16::from_le_bytes([c[0], c[1]]))
        .collect();
    // -32768 / -1 wraps in 16-bit lanes (computed in i32, truncated).
    assert_eq!(got, [14, -14, -1, -32768, 1, 2, 3, 4]);

    // A zero in the last lane only: the whole division traps.
    b[14] = 0;
    b[15] = 0;
    r.mem().write(&mut r.store, 2048, &b).unwrap();
    let e = r
        .call("div", &[Val::I32(1024), Val::I32(2048)])
        .unwrap_err();
    let trap = e.downcast_ref::<wasmtime::Trap>().copied();
    assert_eq!(trap, Some(wasmtime::Trap::IntegerDivisionByZero), "{e:?}");
}

/// The text layer handles every vector construct the fixtures use: disassembling each
/// SIMD fixture and assembling the listing gives back the same bits.
#[test]
fn simd_fixtures_round_trip_through_the_disassembler() {
    let root = pexe2wasm_testkit::repo_path("fixtures");
    let mut files: Vec<_> = std::fs::read_dir(root.join("semantics"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy();
            n.starts_with("simd_") && n.ends_with(".pexe")
        })
        .collect();
    files.push(root.join("bench/simd_saxpy.pexe"));
    assert!(files.len() >= 7, "{files:?}");
    for p in files {
        let pexe = std::fs::read(&p).unwrap();
        let mut out = Vec::new();
        pexe2wasm::text::disassemble(&pexe, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let again = assemble(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(again == pexe, "{}: dis -> asm differs", p.display());
    }
}
