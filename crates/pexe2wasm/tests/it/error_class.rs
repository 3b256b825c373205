//! The one classification of conversion errors (`ErrorClass`) on real failures, and the
//! JSON form of `Position` that the batch report and the service share.
use pexe2wasm::bitstream::Position;
use pexe2wasm::convert::{convert, ConvertError, ConvertOptions};
use pexe2wasm::emit::{EmitError, InternalError, LayoutError, LinkProblem};
use pexe2wasm::ErrorClass;
use pexe2wasm_testkit::corpus;
use serde_json::json;

fn hello_text() -> String {
    std::fs::read_to_string(pexe2wasm_testkit::repo_path("fixtures/hello.pnaclasm")).unwrap()
}

/// hello with one more global, 5 GB of zeros (testkit): a valid pexe whose data cannot fit
/// a 32-bit wasm memory (the converter does not support it).
fn huge_global_pexe() -> Vec<u8> {
    pexe2wasm::text::asm::assemble(&pexe2wasm_testkit::huge_global_hello())
        .unwrap_or_else(|e| panic!("{e}"))
}

fn convert_default(data: &[u8]) -> Result<pexe2wasm::convert::Converted, ConvertError> {
    convert(data, &ConvertOptions::default())
}

#[test]
fn malformed_corpus_pexes_are_input_errors_with_positions() {
    for (name, data) in corpus::real_pexes(corpus::MALFORMED) {
        let e = convert_default(&data).expect_err(name);
        assert_eq!(e.class(), ErrorClass::Input, "{name}: {e}");
        let p = e
            .position()
            .unwrap_or_else(|| panic!("{name}: no position: {e}"));
        assert!(p.bit < data.len() as u64 * 8 + 64, "{name}: {p}");
        // The message names the bit it reports.
        assert!(
            e.to_string().contains(&format!("bit {}", p.bit)),
            "{name}: {e}"
        );
        if let ConvertError::Decode(d) = &e {
            assert_eq!(d.class(), ErrorClass::Input);
        }
    }
}

#[test]
fn a_pexe_without_start_is_an_input_error() {
    for (name, data) in corpus::real_pexes(corpus::NOT_RUNNABLE) {
        let e = convert_default(&data).expect_err(name);
        assert!(matches!(e, ConvertError::NotRunnable(_)), "{name}: {e:?}");
        assert_eq!(e.class(), ErrorClass::Input, "{name}");
        assert!(e.position().is_some(), "{name}");
    }
}

#[test]
fn globals_beyond_4_gib_are_unsupported() {
    let data = huge_global_pexe();
    let e = convert_default(&data).unwrap_err();
    assert_eq!(
        e,
        ConvertError::Emit(EmitError::Layout(LayoutError::GlobalsOver4GiB)),
        "{e}"
    );
    assert_eq!(e.class(), ErrorClass::Unsupported);
    assert_eq!(e.to_string(), "memory layout: globals do not fit in 4 GiB");
    // The same pexe without the huge global converts: only the global is unsupported.
    let fine = hello_text();
    convert_default(&pexe2wasm::text::asm::assemble(&fine).unwrap()).unwrap();
}

#[test]
fn a_stack_beyond_4_gib_is_unsupported_and_names_its_size() {
    let data = std::fs::read(pexe2wasm_testkit::repo_path("fixtures/hello.pexe")).unwrap();
    let opts = ConvertOptions {
        stack_size: u32::MAX,
        ..ConvertOptions::default()
    };
    let e = convert(&data, &opts).unwrap_err();
    match &e {
        ConvertError::Emit(EmitError::Layout(LayoutError::StackOver4GiB { stack_size })) => {
            assert!(*stack_size >= u32::MAX as u64, "{e}")
        }
        _ => panic!("{e:?}"),
    }
    assert_eq!(e.class(), ErrorClass::Unsupported);
    assert!(
        e.to_string().contains("-byte stack do not fit in 4 GiB"),
        "{e}"
    );
    assert_eq!(e.position(), None);
}

/// A runtime of our own making whose `_start` returns a value it does not declare: the
/// output does not validate, which is the converter's fault (internal).
#[test]
fn output_that_does_not_validate_is_internal() {
    let data = std::fs::read(pexe2wasm_testkit::repo_path("fixtures/hello.pexe")).unwrap();
    let runtime = wat::parse_str(
        r#"(module
             (import "env" "pexe_start" (func $pexe_start (param i32)))
             (import "env" "memory" (memory 1))
             (func (export "_start") i32.const 7))"#,
    )
    .unwrap();
    let opts = ConvertOptions {
        runtime: Some(runtime),
        ..ConvertOptions::default()
    };
    let e = convert(&data, &opts).unwrap_err();
    assert!(matches!(e, ConvertError::Invalid { .. }), "{e:?}");
    assert_eq!(e.class(), ErrorClass::Internal);
    assert!(
        e.to_string()
            .starts_with("internal error: the output does not validate"),
        "{e}"
    );
}

/// A runtime that cannot be linked (its own start function) is ours to fix: internal,
/// and the message names the module and what is wrong with it.
#[test]
fn a_runtime_that_does_not_link_is_internal() {
    let data = std::fs::read(pexe2wasm_testkit::repo_path("fixtures/hello.pexe")).unwrap();
    let runtime = wat::parse_str(
        r#"(module
             (import "env" "memory" (memory 1))
             (func $s)
             (start $s)
             (func (export "_start")))"#,
    )
    .unwrap();
    let opts = ConvertOptions {
        runtime: Some(runtime),
        ..ConvertOptions::default()
    };
    let e = convert(&data, &opts).unwrap_err();
    assert_eq!(
        e,
        ConvertError::Emit(EmitError::Link {
            module: "runtime",
            problem: LinkProblem::StartFunction
        })
    );
    assert_eq!(e.class(), ErrorClass::Internal);
    assert_eq!(e.to_string(), "linking: runtime: has a start function");
}

#[test]
fn stage_errors_classify_themselves() {
    assert_eq!(
        EmitError::from(InternalError::Panicked { message: None }).class(),
        ErrorClass::Internal
    );
    assert_eq!(
        EmitError::from(LayoutError::RelocationTarget { target: 3 }).class(),
        ErrorClass::Input
    );
    assert_eq!(
        EmitError::AddressOfBodiless { function: 1 }.class(),
        ErrorClass::Unsupported
    );
    let lower = pexe2wasm::lower::LowerError::Unsupported {
        function: pexe2wasm::ir::FuncId(2),
        message: "x".into(),
        position: Position::at_bit(9),
    };
    assert_eq!(lower.class(), ErrorClass::Unsupported);
    let e = ConvertError::from(EmitError::Lower(lower));
    assert_eq!(e.class(), ErrorClass::Unsupported);
    assert_eq!(e.position(), Some(Position::at_bit(9)));
    assert_eq!(
        serde_json::to_value(ErrorClass::Unsupported).unwrap(),
        "unsupported"
    );
    assert_eq!(ErrorClass::Input.to_string(), "input");
}

#[test]
fn position_json_names_every_member() {
    let p = Position {
        bit: 1062,
        block: Some(12),
        record: Some(11),
        record_index: Some(2),
    };
    let v = serde_json::to_value(p).unwrap();
    assert_eq!(
        v,
        json!({"bit": 1062, "byte": 132, "block": 12, "block_name": "function",
               "record": 11, "record_index": 2})
    );
    assert_eq!(serde_json::from_value::<Position>(v).unwrap(), p);
    // Unknown parts are null, not missing.
    let v = serde_json::to_value(Position::at_bit(17)).unwrap();
    assert_eq!(
        v,
        json!({"bit": 17, "byte": 2, "block": null, "block_name": null,
               "record": null, "record_index": null})
    );
    assert_eq!(
        serde_json::from_value::<Position>(v).unwrap(),
        Position::at_bit(17)
    );
    // `byte` and `block_name` follow from the rest, so a reader may leave them out.
    let p2: Position = serde_json::from_value(json!({"bit": 8, "block": 19})).unwrap();
    assert_eq!(
        p2,
        Position {
            bit: 8,
            block: Some(19),
            ..Position::default()
        }
    );
}

/// A nexe where a pexe goes is unsupported input named as what it is (architecture,
/// linking, libc, kind), with no position; every entry point that decodes says the same.
#[test]
fn nexes_are_unsupported_and_named() {
    let Some(data) = pexe2wasm_testkit::corpus::real_nexe("nassh-ssh_client-x86_64.nexe") else {
        return;
    };
    let want = "a native NaCl executable for x86-64 (static, newlib, Pepper): not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert";
    let e = convert_default(&data).expect_err("a nexe does not convert");
    assert_eq!(e.class(), ErrorClass::Unsupported, "{e}");
    assert_eq!(e.to_string(), want);
    assert_eq!(e.position(), None);
    let ConvertError::Decode(d) = &e else {
        panic!("{e:?}")
    };
    assert!(matches!(
        d.native(),
        Some(pexe2wasm_nexe::NativeInput::Nexe {
            arch: pexe2wasm_nexe::Arch::X86_64,
            ..
        })
    ));
    let e = pexe2wasm::info::info(&data).expect_err("no pexe facts");
    assert_eq!(e.to_string(), want);
    assert_eq!(e.class(), ErrorClass::Unsupported);
    // An ARM one, and a glibc dynamic one.
    for (name, what) in [
        (
            "nacl-hello_world-arm.nexe",
            "ARM (static, newlib, command-line)",
        ),
        (
            "logrun-fact-x86_64.nexe",
            "x86-64 (dynamic, glibc, command-line)",
        ),
    ] {
        let Some(data) = pexe2wasm_testkit::corpus::real_nexe(name) else {
            return;
        };
        let e = convert_default(&data).expect_err(name);
        assert!(
            e.to_string()
                .starts_with(&format!("a native NaCl executable for {what}: ")),
            "{name}: {e}"
        );
    }
    // Other files keep the header's error.
    let e = convert_default(b"\x7fELX not elf").expect_err("not a pexe");
    assert_eq!(e.class(), ErrorClass::Input);
    assert!(e.to_string().contains("not a pexe"), "{e}");
}
