//! The embedded description: it parses, its layouts and signatures agree with the design
//! notes (nacl-runtime-abi.md §6.2/§6.3) and the headers' size assertions, and slot
//! counts agree with counts read from Chromium's ppapi/c headers.

use std::collections::HashSet;

use pexe2wasm_ppapi::{
    description, parse, CType, Description, Kind, TypeKind, ValType, WasmSignature,
    DESCRIPTION_TEXT,
};

use ValType::{F32, F64, I32, I64};

fn sig(params: &[ValType], results: &[ValType]) -> WasmSignature {
    WasmSignature::new(params, results)
}

fn wasm(desc: &Description, iface: &str, func: &str) -> WasmSignature {
    let i = desc
        .interface(iface)
        .unwrap_or_else(|| panic!("{iface} not described"));
    i.function(func)
        .unwrap_or_else(|| panic!("{iface} has no {func}"))
        .wasm_signature()
        .clone()
}

#[test]
fn description_parses_and_is_not_empty() {
    let d = parse(DESCRIPTION_TEXT).expect("interfaces.pepper parses");
    assert!(d.interfaces.len() > 50, "{} interfaces", d.interfaces.len());
    assert_eq!(d.interfaces.len(), description().interfaces.len());
}

/// Size and alignment of a type used by value, computed here from the description's
/// type table (independently of the parser's own layout code).
fn layout(desc: &Description, ty: &CType) -> (u32, u32) {
    if ty.pointers > 0 {
        return (4, 4);
    }
    let def = desc.type_def(&ty.base).expect("declared type");
    match &def.kind {
        TypeKind::Typedef { target } => layout(desc, target),
        TypeKind::Primitive { .. } => (def.size, def.size.max(1)),
        TypeKind::Enum { .. } | TypeKind::FuncPtr { .. } => (4, 4),
        TypeKind::Struct { fields } | TypeKind::Union { fields } => {
            let union = matches!(def.kind, TypeKind::Union { .. });
            let (mut off, mut size, mut align) = (0u32, 0u32, 1u32);
            for f in fields {
                let (s, a) = layout(desc, &f.ty);
                let at = if union { 0 } else { off.div_ceil(a) * a };
                assert_eq!(f.offset, at, "{}.{} offset", def.name, f.name);
                off = at + s * f.count.unwrap_or(1);
                size = size.max(off);
                align = align.max(a);
            }
            (size.div_ceil(align) * align, align)
        }
        TypeKind::Opaque => panic!("{} used by value", def.name),
    }
}

#[test]
fn struct_layouts_follow_from_their_fields() {
    let d = description();
    let mut n = 0;
    for t in &d.types {
        if matches!(t.kind, TypeKind::Struct { .. } | TypeKind::Union { .. }) {
            let ty = CType {
                text: t.name.clone(),
                base: t.name.clone(),
                pointers: 0,
            };
            assert_eq!(layout(d, &ty), (t.size, t.align), "{}", t.name);
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} structs");
}

#[test]
fn struct_layouts_match_the_abi_notes_and_header_assertions() {
    let d = description();
    // (name, size, align): §6.3 of nacl-runtime-abi.md, and the headers'
    // PP_COMPILE_ASSERT_STRUCT_SIZE_IN_BYTES lines (PP_TouchPoint 28, PP_NetAddress_IPv4 6,
    // PP_NetAddress_IPv6 18, PP_HostResolver_Hint 8, PP_ImageDataDesc 16).
    let expected = [
        ("PP_Var", 16, 8),
        ("PP_CompletionCallback", 12, 4),
        ("PP_Point", 8, 4),
        ("PP_FloatPoint", 8, 4),
        ("PP_Size", 8, 4),
        ("PP_Rect", 16, 4),
        ("PP_ImageDataDesc", 16, 4),
        ("PP_TouchPoint", 28, 4),
        ("PP_NetAddress_IPv4", 6, 2),
        ("PP_NetAddress_IPv6", 18, 2),
        ("PP_HostResolver_Hint", 8, 4),
        ("PP_ArrayOutput", 8, 4),
        ("PP_DirectoryEntry", 8, 4),
        ("PP_FileInfo", 40, 8),
        ("PP_VideoPicture", 36, 4),
    ];
    for (name, size, align) in expected {
        let t = d.type_def(name).unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!((t.size, t.align), (size, align), "{name}");
    }
    // Field offsets named in §6.3.
    let offset = |s: &str, f: &str| match &d.type_def(s).unwrap().kind {
        TypeKind::Struct { fields } => fields.iter().find(|x| x.name == f).unwrap().offset,
        _ => panic!("{s} is not a struct"),
    };
    assert_eq!(offset("PP_Var", "value"), 8);
    assert_eq!(offset("PP_CompletionCallback", "user_data"), 4);
    assert_eq!(offset("PP_CompletionCallback", "flags"), 8);
    assert_eq!(offset("PP_ImageDataDesc", "size"), 4);
    assert_eq!(offset("PP_ImageDataDesc", "stride"), 12);
    // Scalars.
    for (name, size) in [
        ("PP_Resource", 4),
        ("PP_Time", 8),
        ("PP_Bool", 4),
        ("GLintptr", 4),
    ] {
        assert_eq!(d.type_def(name).unwrap().size, size, "{name}");
    }
}

#[test]
fn abi_note_examples_give_the_expected_wasm_signatures() {
    let d = description();
    // §6.2: struct results become a hidden first pointer; by-value structs are pointers.
    assert_eq!(
        wasm(d, "PPB_Var;1.1", "VarFromUtf8"),
        sig(&[I32, I32, I32], &[])
    );
    assert_eq!(
        wasm(d, "PPB_Var;1.2", "VarFromUtf8"),
        sig(&[I32, I32, I32], &[])
    );
    assert_eq!(
        wasm(d, "PPB_Var;1.0", "VarFromUtf8"),
        sig(&[I32, I32, I32, I32], &[])
    );
    assert_eq!(wasm(d, "PPB_Var;1.1", "AddRef"), sig(&[I32], &[]));
    assert_eq!(
        wasm(d, "PPB_Var;1.1", "VarToUtf8"),
        sig(&[I32, I32], &[I32])
    );
    assert_eq!(
        wasm(d, "PPB_Messaging;1.0", "PostMessage"),
        sig(&[I32, I32], &[])
    );
    assert_eq!(
        wasm(d, "PPB_Console;1.0", "Log"),
        sig(&[I32, I32, I32], &[])
    );
    assert_eq!(wasm(d, "PPB_Core;1.0", "GetTime"), sig(&[], &[F64]));
    assert_eq!(
        wasm(d, "PPB_Core;1.0", "CallOnMainThread"),
        sig(&[I32, I32, I32], &[])
    );
    assert_eq!(
        wasm(d, "PPB_FileSystem;1.0", "Open"),
        sig(&[I32, I64, I32], &[I32])
    );
    assert_eq!(
        wasm(d, "PPB_MouseInputEvent;1.1", "GetPosition"),
        sig(&[I32, I32], &[])
    );
    assert_eq!(
        wasm(d, "PPB_KeyboardInputEvent;1.0", "GetCharacterText"),
        sig(&[I32, I32], &[])
    );
    assert_eq!(
        wasm(d, "PPB_Graphics3D;1.0", "SwapBuffers"),
        sig(&[I32, I32], &[I32])
    );
    assert_eq!(
        wasm(d, "PPB_URLLoader;1.0", "ReadResponseBody"),
        sig(&[I32, I32, I32, I32], &[I32])
    );
    assert_eq!(
        wasm(d, "PPP_Messaging;1.0", "HandleMessage"),
        sig(&[I32, I32], &[])
    );
    let f = d
        .interface("PPB_MouseInputEvent;1.1")
        .unwrap()
        .function("GetPosition")
        .unwrap();
    assert!(f.sret && f.params.len() == 1, "C params stay as written");
    let f = d
        .interface("PPB_Messaging;1.0")
        .unwrap()
        .function("PostMessage")
        .unwrap();
    assert!(f.params[1].by_pointer && !f.params[0].by_pointer);
}

#[test]
fn small_integers_are_widened_and_floats_keep_their_type() {
    let d = description();
    let gl = "PPB_OpenGLES2;1.0";
    // GLboolean (unsigned char) arguments and results travel as i32.
    assert_eq!(wasm(d, gl, "ColorMask"), sig(&[I32; 5], &[]));
    assert_eq!(wasm(d, gl, "IsBuffer"), sig(&[I32, I32], &[I32]));
    assert_eq!(
        wasm(d, gl, "ClearColor"),
        sig(&[I32, F32, F32, F32, F32], &[])
    );
    // GLsizeiptr/GLintptr are long = 32 bits under ILP32.
    assert_eq!(wasm(d, gl, "BufferSubData"), sig(&[I32; 5], &[]));
    // uint16_t result and parameter, uint64_t result.
    assert_eq!(
        wasm(d, "PPB_WebSocket;1.0", "GetCloseCode"),
        sig(&[I32], &[I32])
    );
    assert_eq!(
        wasm(d, "PPB_WebSocket;1.0", "GetBufferedAmount"),
        sig(&[I32], &[I64])
    );
    assert_eq!(
        wasm(d, "PPB_HostResolver;1.0", "Resolve"),
        sig(&[I32, I32, I32, I32, I32], &[I32])
    );
    assert_eq!(
        wasm(d, "PPB_View;1.1", "GetDeviceScale"),
        sig(&[I32], &[F32])
    );
    assert_eq!(
        wasm(d, "PPB_MessageLoop;1.0", "PostWork"),
        sig(&[I32, I32, I64], &[I32])
    );
}

#[test]
fn slot_counts_match_the_headers() {
    let d = description();
    // Counted by hand in Chromium's ppapi/c headers.
    let counts = [
        ("PPB_Core;1.0", 6),
        ("PPB_Var;1.0", 4),
        ("PPB_Var;1.2", 6),
        ("PPB_OpenGLES2;1.0", 142),
        ("PPB_Messaging;1.2", 3),
        ("PPB_View;1.2", 9),
        ("PPB_InputEvent;1.0", 7),
        ("PPB_URLLoader;1.0", 10),
        ("PPB_FileIO;1.1", 11),
        ("PPB_FileRef;1.2", 12),
        ("PPB_WebSocket;1.0", 14),
        ("PPB_TCPSocket;1.0", 9),
        ("PPB_TCPSocket;1.2", 12),
        ("PPB_Graphics3D;1.0", 8),
        ("PPP_Instance;1.1", 5),
    ];
    for (name, n) in counts {
        let i = d
            .interface(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(i.functions.len(), n, "{name}");
    }
    // Slot order: a few known positions.
    let gl = d.interface("PPB_OpenGLES2;1.0").unwrap();
    assert_eq!(gl.slot("ActiveTexture"), Some(0));
    assert_eq!(gl.slot("Viewport"), Some(141));
    let tcp = d.interface("PPB_TCPSocket;1.1").unwrap();
    assert_eq!(tcp.slot("Bind"), Some(2));
}

#[test]
fn names_are_unique_and_well_formed() {
    let d = description();
    let mut seen = HashSet::new();
    for i in &d.interfaces {
        assert!(seen.insert(i.name.as_str()), "{} twice", i.name);
        assert_eq!(format!("{};{}", i.base, i.version), i.name);
        let kind = if i.name.starts_with("PPB_") {
            Kind::Ppb
        } else {
            Kind::Ppp
        };
        assert_eq!(i.kind, kind, "{}", i.name);
        assert_eq!(i.dev, i.name.contains("(Dev)"), "{}", i.name);
        let mut fns = HashSet::new();
        for f in &i.functions {
            assert!(fns.insert(f.name.as_str()), "{}: {} twice", i.name, f.name);
        }
        assert!(!i.functions.is_empty(), "{}", i.name);
    }
    let mut types = HashSet::new();
    for t in &d.types {
        assert!(types.insert(t.name.as_str()), "type {} twice", t.name);
    }
}

#[test]
fn every_signature_follows_the_rules() {
    // Recompute each function's wasm signature from its C types and compare.
    let d = description();
    fn resolve<'a>(d: &'a Description, ty: &'a CType) -> (&'a TypeKind, u8) {
        let def = d.type_def(&ty.base).unwrap();
        match &def.kind {
            TypeKind::Typedef { target } => {
                let (k, p) = resolve(d, target);
                (k, p + ty.pointers)
            }
            k => (k, ty.pointers),
        }
    }
    let lower = |ty: &CType| -> (Option<ValType>, bool) {
        match resolve(d, ty) {
            (_, p) if p > 0 => (Some(I32), false),
            (TypeKind::Struct { .. } | TypeKind::Union { .. }, _) => (Some(I32), true),
            (TypeKind::Enum { .. } | TypeKind::FuncPtr { .. }, _) => (Some(I32), false),
            (TypeKind::Primitive { wasm }, _) => (*wasm, false),
            (k, _) => panic!("{ty} is {k:?}"),
        }
    };
    for i in &d.interfaces {
        for f in &i.functions {
            let mut want = WasmSignature::default();
            match lower(&f.ret) {
                (Some(_), true) => want.params.push(I32),
                (Some(v), false) => want.results.push(v),
                (None, _) => {}
            }
            for p in &f.params {
                want.params.push(lower(&p.ty).0.expect("no void params"));
            }
            assert_eq!(f.wasm, want, "{} {}", i.name, f.c_signature());
        }
    }
}

#[test]
fn json_form_has_interfaces_and_signatures() {
    let json: serde_json::Value = serde_json::from_str(&description().to_json()).unwrap();
    let ifaces = json["interfaces"].as_array().unwrap();
    let core = ifaces.iter().find(|i| i["name"] == "PPB_Core;1.0").unwrap();
    assert_eq!(core["kind"], "Ppb");
    let get_time = &core["functions"][2];
    assert_eq!(get_time["name"], "GetTime");
    assert_eq!(get_time["wasm"]["results"][0], "f64");
    let var = json["types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "PP_Var")
        .unwrap();
    assert_eq!(var["kind"], "struct");
    assert_eq!(var["size"], 16);
}

#[test]
fn markdown_table_lists_every_interface() {
    let d = description();
    let t = d.markdown_table();
    assert_eq!(t.lines().count(), d.interfaces.len() + 2);
    assert!(t.contains("| `PPB_OpenGLES2;1.0` | PPB |  | 142 |"), "{t}");
    assert!(t.contains("| `PPB_OpenGLES2DrawBuffers(Dev);1.0` | PPB | (Dev) | 1 |"));
}

#[test]
fn wasm_signature_text_round_trips() {
    for s in [
        "(i32, i64) -> i32",
        "() -> f64",
        "(i32) -> ()",
        "(f32, f64) -> (i32, i32)",
    ] {
        let parsed: WasmSignature = s.parse().unwrap();
        assert_eq!(parsed.to_string(), s);
    }
    assert_eq!(
        "(i32,i32)->()".parse::<WasmSignature>().unwrap(),
        sig(&[I32, I32], &[])
    );
    assert!("(i32, i16) -> ()".parse::<WasmSignature>().is_err());
    assert!("i32 -> ()".parse::<WasmSignature>().is_err());
}

#[test]
fn readme_table_is_current() {
    let readme = include_str!("../../README.md");
    let table = description().markdown_table();
    assert!(
        readme.contains(&table),
        "README.md's interface table is stale: regenerate it with \
         `cargo run -p pexe2wasm-ppapi --bin ppapi-json -- --table`"
    );
}

#[test]
fn web_doc_lists_what_each_host_offers() {
    let doc = include_str!("../../../../docs/WEB.md");
    let table = description().hosts_table();
    assert!(
        table.contains("| `PPB_Var` | 1.0, 1.1, 1.2 | 1.0, 1.1, 1.2 |"),
        "{table}"
    );
    assert!(table.contains("| `PPB_Graphics3D` | 1.0 | - |"), "{table}");
    assert!(
        doc.contains(&table),
        "docs/WEB.md's table of interfaces per host is stale: regenerate it with \
         `cargo run -p pexe2wasm-ppapi --bin ppapi-json -- --hosts`"
    );
}

/// Values read in Chromium's headers (pp_errors.h, pp_completion_callback.h, pp_var.h,
/// ppb_input_event.h, ppb_image_data.h, ppb_file_io.h), spot-checked here.
#[test]
fn enum_values_match_the_headers() {
    let d = description();
    let value = |e: &str, short: &str| -> i32 {
        d.enum_values(e)
            .unwrap_or_else(|| panic!("{e} is not an enum"))
            .iter()
            .find(|v| v.short == short)
            .unwrap_or_else(|| panic!("{e} has no {short}"))
            .value
    };
    for (e, short, v) in [
        ("PP_Error", "OK", 0),
        ("PP_Error", "COMPLETIONPENDING", -1),
        ("PP_Error", "BADRESOURCE", -5),
        ("PP_Error", "BLOCKS_MAIN_THREAD", -13),
        ("PP_Error", "NO_MESSAGE_LOOP", -51),
        ("PP_Error", "WRONG_THREAD", -52),
        ("PP_Error", "NAME_NOT_RESOLVED", -110),
        ("PP_CompletionCallback_Flag", "NONE", 0),
        ("PP_CompletionCallback_Flag", "OPTIONAL", 1),
        ("PP_Bool", "TRUE", 1),
        ("PP_VarType", "ARRAY_BUFFER", 9),
        ("PP_VarType", "RESOURCE", 10),
        ("PP_InputEvent_Type", "UNDEFINED", -1),
        ("PP_InputEvent_Type", "TOUCHCANCEL", 18),
        ("PP_InputEvent_Class", "IME", 16),
        ("PP_InputEvent_Modifier", "ISERASER", 1 << 14),
        ("PP_InputEvent_MouseButton", "NONE", -1),
        ("PP_ImageDataFormat", "RGBA_PREMUL", 1),
        ("PP_FileOpenFlags", "APPEND", 32),
        ("PP_FileSystemType", "LOCALTEMPORARY", 3),
        ("PP_LogLevel", "ERROR", 3),
    ] {
        assert_eq!(value(e, short), v, "{e} {short}");
    }
    // Within an enum no two names share a value (the headers' FIRST/LAST aliases are left
    // out), and the C names keep the enum's prefix.
    for (name, values) in d.enums() {
        let mut seen = HashSet::new();
        for v in values {
            assert!(seen.insert(v.value), "{name}: {} repeats a value", v.name);
            assert!(v.name.starts_with("PP_"), "{name}: {}", v.name);
        }
    }
}

/// Every function with a `PP_CompletionCallback` by value has it described: completion
/// callbacks may block, the two that schedule work do not.
#[test]
fn callbacks_are_described() {
    use pexe2wasm_ppapi::CallbackKind;
    let d = description();
    let mut completion = 0;
    let mut schedules = Vec::new();
    for i in &d.interfaces {
        for f in &i.functions {
            let by_value = f
                .params
                .iter()
                .position(|p| p.ty.base == "PP_CompletionCallback" && p.ty.pointers == 0);
            assert_eq!(
                f.callback.map(|c| c.param),
                by_value,
                "{} {}",
                i.name,
                f.name
            );
            if let Some(c) = f.callback {
                assert_eq!(f.wasm.params[c.wasm_param], I32);
                assert_eq!(c.wasm_param, c.param + usize::from(f.sret));
                match c.kind {
                    CallbackKind::Completion => completion += 1,
                    CallbackKind::Schedules => schedules.push(format!("{}.{}", i.base, f.name)),
                }
            }
        }
    }
    schedules.dedup();
    assert_eq!(
        schedules,
        ["PPB_Core.CallOnMainThread", "PPB_MessageLoop.PostWork"]
    );
    assert!(completion > 80, "{completion} completion callbacks");
    let open = d
        .interface("PPB_FileIO;1.0")
        .unwrap()
        .function("Open")
        .unwrap();
    assert!(open.may_block());
    assert_eq!(open.callback.unwrap().wasm_param, 3);
}
