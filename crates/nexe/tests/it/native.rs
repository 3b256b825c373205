//! The words every front end says about native code (`native.rs`), on the real corpus:
//! each nexe named by architecture, linking and kind; manifests with only nexes; the
//! report `info` and `verify` print.

use pexe2wasm_nexe::native::{manifest_native_app, parse_manifest};
use pexe2wasm_nexe::{recognize, Arch, NativeApp, NativeInput, NexeReport};
use pexe2wasm_testkit::corpus::{real_nexe, NEXES};

const NOT_YET: &str = "not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert";

#[test]
fn every_nexe_is_named_by_architecture_linking_and_kind() {
    // What SOURCES.md says of each, in the words of `describe`.
    let expected = [
        (
            "nacl-hello_world-x86_64.nexe",
            "x86-64 (static, newlib, command-line)",
        ),
        (
            "nassh-ssh_client-x86_64.nexe",
            "x86-64 (static, newlib, Pepper)",
        ),
        (
            "naclports-gallery-sine_synth-x86_64.nexe",
            "x86-64 (static, newlib, Pepper, pre-1.0)",
        ),
        (
            "nacl-fib_array-srpc-x86_64.nexe",
            "x86-64 (static, newlib, legacy SRPC service)",
        ),
        (
            "glibc-sln-x86_64.nexe",
            "x86-64 (static, glibc, command-line)",
        ),
        (
            "logrun-fact-x86_64.nexe",
            "x86-64 (dynamic, glibc, command-line)",
        ),
        ("irt_core-x86_64.nexe", "x86-64 (static, IRT image)"),
        (
            "pnacl-sz-x86_64.nexe",
            "x86-64 (static, newlib, PNaCl translator)",
        ),
        (
            "nacl-hello_world-arm.nexe",
            "ARM (static, newlib, command-line)",
        ),
        (
            "nassh-ssh_client-x86_32.nexe",
            "x86-32 (static, newlib, Pepper)",
        ),
    ];
    for (name, description) in expected {
        let Some(bytes) = real_nexe(name) else { return };
        let got = recognize(&bytes).unwrap_or_else(|| panic!("{name}: not recognized as ELF"));
        let NativeInput::Nexe { description: d, .. } = &got else {
            panic!("{name}: {got}");
        };
        assert_eq!(d, description, "{name}");
        assert_eq!(
            got.to_string(),
            format!("a native NaCl executable for {description}: {NOT_YET}")
        );
    }
    // Every nexe of the corpus is a nexe, never "another ELF file".
    for name in NEXES {
        let Some(bytes) = real_nexe(name) else { return };
        assert!(
            matches!(recognize(&bytes), Some(NativeInput::Nexe { .. })),
            "{name}"
        );
    }
}

#[test]
fn a_nexe_nacl_refuses_says_so() {
    let Some(bytes) = real_nexe("nacl-text_overlaps_data-x86_32.nexe") else {
        return;
    };
    let got = recognize(&bytes).expect("an ELF file").to_string();
    assert!(got.starts_with("a native NaCl executable for x86-32 (static, newlib, command-line; NaCl's loader refuses it: "), "{got}");
    assert!(got.ends_with(NOT_YET), "{got}");
}

#[test]
fn other_files_are_not_native_and_other_elf_files_are_not_nexes() {
    assert_eq!(recognize(b"PEXE\x01\x00\x08\x00"), None);
    assert_eq!(recognize(b"\0asm\x01\0\0\0"), None);
    assert_eq!(recognize(b""), None);
    // This test program is a Linux ELF executable, not a nexe.
    let me = std::fs::read(std::env::current_exe().expect("the test binary")).expect("readable");
    let got = recognize(&me).expect("an ELF file");
    assert!(matches!(got, NativeInput::OtherElf { .. }), "{got:?}");
    assert!(
        got.to_string().starts_with("an ELF file, not a pexe ("),
        "{got}"
    );
    // A truncated nexe is an ELF file whose structure is broken, named as such.
    let Some(bytes) = real_nexe("nacl-hello_world-x86_64.nexe") else {
        return;
    };
    let got = recognize(&bytes[..40]).expect("an ELF file");
    assert!(matches!(got, NativeInput::OtherElf { .. }), "{got:?}");
}

fn manifest(path: &str) -> Option<serde_json::Value> {
    let bytes = real_nexe(path)?;
    Some(parse_manifest(&bytes).unwrap_or_else(|e| panic!("{path}: {e}")))
}

#[test]
fn manifests_with_only_nexes_are_native_apps() {
    let Some(ckauth) = manifest("ckauth-x86_64/newlib/Release/ckauth.nmf") else {
        return;
    };
    let app = manifest_native_app(&ckauth).expect("only nexes");
    assert_eq!(
        app,
        NativeApp {
            arches: vec!["x86-64".into(), "x86-32".into(), "ARM".into()],
            dynamic: false
        }
    );
    assert_eq!(
        app.to_string(),
        "a native NaCl app for x86-64/x86-32/ARM: only PNaCl pexes convert"
    );

    // glibc: the program is runnable-ld.so, the nexe and its .so files are `files`.
    let Some(logrun) = manifest("logrun-base64-x86_64/glibc/logrun.nmf") else {
        return;
    };
    let app = manifest_native_app(&logrun).expect("only nexes");
    assert!(app.dynamic);
    assert_eq!(
        app.to_string(),
        "a native NaCl app for x86-64/x86-32 (glibc dynamic: runnable-ld.so and shared objects): only PNaCl pexes convert"
    );

    // The 2011 form (`nexes`), with the trailing comma Chrome's parser took.
    let raw =
        real_nexe("naclports-gallery-sine_synth-x86_64/sine_synth.nmf").expect("beside its nexe");
    assert!(
        serde_json::from_slice::<serde_json::Value>(&raw).is_err(),
        "the file has a trailing comma"
    );
    let sine = parse_manifest(&raw).expect("read without the trailing comma");
    let app = manifest_native_app(&sine).expect("only nexes");
    assert_eq!(app.arches, ["x86-64", "x86-32"]);

    // A manifest with a pexe is no native app, whatever else it names.
    let with_pexe = serde_json::json!({"program": {
        "portable": {"pnacl-translate": {"url": "a.pexe"}},
        "x86-64": {"url": "a_x86_64.nexe"}}});
    assert_eq!(manifest_native_app(&with_pexe), None);
    assert_eq!(manifest_native_app(&serde_json::json!({"files": {}})), None);
    // Commas inside strings stay.
    let v = parse_manifest(br#"{"program": {"x86-64": {"url": "a,]b.nexe",},},}"#).expect("fixed");
    assert_eq!(
        v.pointer("/program/x86-64/url").and_then(|u| u.as_str()),
        Some("a,]b.nexe")
    );
}

#[test]
fn the_report_gives_facts_and_validation() {
    let Some(bytes) = real_nexe("nassh-ssh_client-x86_64.nexe") else {
        return;
    };
    let r = NexeReport::of(&bytes).expect("a nexe");
    assert_eq!(r.info.arch, Arch::X86_64);
    let v = r.validation.as_ref().expect("x86-64 is validated");
    assert!(
        v.valid && v.error_count == 0 && v.instructions > 100_000,
        "{v:?}"
    );
    let text = r.to_string();
    for want in [
        "architecture:   x86-64",
        "runtime ABI:    stable IRT",
        "kind:           Pepper plugin",
        "validation:     valid by NaCl's x86-64 rules (",
        "converts:       yes: translated with the runtime into a Pepper plugin",
    ] {
        assert!(text.contains(want), "{want:?} not in:\n{text}");
    }
    let json = serde_json::to_value(&r).expect("serializes");
    assert_eq!(json["format"], "nexe");
    assert_eq!(json["arch"], "x86-64");
    assert_eq!(json["validation"]["valid"], true);

    // ARM is not validated here, and says so.
    let Some(arm) = real_nexe("nacl-hello_world-arm.nexe") else {
        return;
    };
    let r = NexeReport::of(&arm).expect("a nexe");
    assert!(r.validation.is_none());
    assert!(
        r.validation_line().starts_with("ARM code: not validated"),
        "{}",
        r.validation_line()
    );
}

#[test]
fn a_corrupted_x86_64_nexe_is_reported_with_bundle_and_rule() {
    let Some(mut bytes) = real_nexe("nacl-hello_world-x86_64.nexe") else {
        return;
    };
    // `mov %rax,%r15` (r15 is the sandbox base, never written) over the entry point's bundle.
    let nexe = pexe2wasm_nexe::inspect(&bytes).expect("a nexe");
    let text = nexe.info.text().expect("a text segment").clone();
    let entry = nexe.info.entry;
    let at = (text.offset + u64::from(entry - text.vaddr)) as usize;
    bytes[at..at + 3].copy_from_slice(&[0x49, 0x89, 0xc7]);
    let r = NexeReport::of(&bytes).expect("still a nexe");
    let v = r.validation.as_ref().expect("validated");
    assert!(!v.valid);
    let line = r.validation_line();
    assert!(
        line.starts_with("rejected by NaCl's x86-64 rules: "),
        "{line}"
    );
    assert!(
        line.contains(&format!("bundle {:#x}", entry & !31)),
        "{line}"
    );
    assert!(line.contains("r15"), "{line}");
}
