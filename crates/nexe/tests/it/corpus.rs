//! Every real nexe of `../shared/fixtures/nexe` (SOURCES.md there) is recognized as what
//! SOURCES.md says it is, and every x86-64 one passes NaCl's validator.

use pexe2wasm_nexe::{
    inspect, AppKind, Arch, Layout, LoadError, NotTranslated, Recognition, RuntimeAbi, Translation,
};
use pexe2wasm_testkit::corpus::{real_nexe, NEXES};

/// What SOURCES.md says of each nexe.
struct Expected {
    name: &'static str,
    arch: Arch,
    dynamic: bool,
    app: fn(&AppKind) -> bool,
    abi: RuntimeAbi,
    verdict: fn(&Translation) -> bool,
}

fn cli(a: &AppKind) -> bool {
    *a == AppKind::Cli
}
fn pepper(a: &AppKind) -> bool {
    *a == AppKind::Pepper { pre_1_0: false }
}
fn pepper_2011(a: &AppKind) -> bool {
    *a == AppKind::Pepper { pre_1_0: true }
}
fn srpc(a: &AppKind) -> bool {
    *a == AppKind::Srpc
}
fn irt(a: &AppKind) -> bool {
    *a == AppKind::Irt
}
fn translator(a: &AppKind) -> bool {
    matches!(a, AppKind::Translator { interface } if interface.starts_with("nacl-irt-private-pnacl-translator-"))
}
fn translatable(t: &Translation) -> bool {
    *t == Translation::Translatable
}
fn x86_32(t: &Translation) -> bool {
    *t == Translation::NotTranslated {
        reason: NotTranslated::Arch(Arch::X86_32),
    }
}
fn arm(t: &Translation) -> bool {
    *t == Translation::NotTranslated {
        reason: NotTranslated::Arch(Arch::Arm),
    }
}
fn dynamic(t: &Translation) -> bool {
    *t == Translation::NotTranslated {
        reason: NotTranslated::Dynamic,
    }
}
fn irt_image(t: &Translation) -> bool {
    *t == Translation::NotTranslated {
        reason: NotTranslated::IrtImage,
    }
}
fn overlaps(t: &Translation) -> bool {
    *t == Translation::Refused {
        error: LoadError::TextOverlapsData,
    }
}

fn expected() -> Vec<Expected> {
    use Arch::*;
    use RuntimeAbi::*;
    let e = |name, arch, dynamic, app, abi, verdict| Expected {
        name,
        arch,
        dynamic,
        app,
        abi,
        verdict,
    };
    vec![
        e("ckauth-arm.nexe", Arm, false, pepper, StableIrt, arm),
        e(
            "ckauth-x86_64.nexe",
            X86_64,
            false,
            pepper,
            StableIrt,
            translatable,
        ),
        e(
            "fftw-wisdom-x86_32.nexe",
            X86_32,
            false,
            cli,
            StableIrt,
            x86_32,
        ),
        e(
            "fftw-wisdom-x86_64.nexe",
            X86_64,
            false,
            cli,
            StableIrt,
            translatable,
        ),
        e(
            "glibc-sln-x86_64.nexe",
            X86_64,
            false,
            cli,
            StableIrt,
            translatable,
        ),
        e(
            "irt_core-x86_64.nexe",
            X86_64,
            false,
            irt,
            StableIrt,
            irt_image,
        ),
        e(
            "logrun-base64-x86_64.nexe",
            X86_64,
            true,
            pepper,
            ThroughLibc,
            dynamic,
        ),
        e(
            "logrun-fact-x86_64.nexe",
            X86_64,
            true,
            cli,
            ThroughLibc,
            dynamic,
        ),
        e(
            "nacl-fib_array-srpc-x86_64.nexe",
            X86_64,
            false,
            srpc,
            EarlyIrt,
            translatable,
        ),
        e("nacl-hello_world-arm.nexe", Arm, false, cli, PreIrt, arm),
        e(
            "nacl-hello_world-x86_64.nexe",
            X86_64,
            false,
            cli,
            PreIrt,
            translatable,
        ),
        e(
            "nacl-mounts-AppEngineTest-x86_32.nexe",
            X86_32,
            false,
            pepper_2011,
            EarlyIrt,
            x86_32,
        ),
        e(
            "nacl-nullptr-x86_64.nexe",
            X86_64,
            false,
            cli,
            PreIrt,
            translatable,
        ),
        e(
            "nacl-text_overlaps_data-x86_32.nexe",
            X86_32,
            false,
            cli,
            PreIrt,
            overlaps,
        ),
        e(
            "naclports-gallery-sine_synth-x86_64.nexe",
            X86_64,
            false,
            pepper_2011,
            PreIrt,
            translatable,
        ),
        e(
            "nassh-ssh_client-arm.nexe",
            Arm,
            false,
            pepper,
            StableIrt,
            arm,
        ),
        e(
            "nassh-ssh_client-x86_32.nexe",
            X86_32,
            false,
            pepper,
            StableIrt,
            x86_32,
        ),
        e(
            "nassh-ssh_client-x86_64.nexe",
            X86_64,
            false,
            pepper,
            StableIrt,
            translatable,
        ),
        e(
            "pnacl-ld-x86_64.nexe",
            X86_64,
            false,
            translator,
            StableIrt,
            translatable,
        ),
        e(
            "pnacl-sz-x86_64.nexe",
            X86_64,
            false,
            translator,
            StableIrt,
            translatable,
        ),
    ]
}

#[test]
fn every_nexe_is_recognized_as_sources_md_says() {
    let expected = expected();
    assert_eq!(expected.len(), NEXES.len());
    for x in &expected {
        assert!(NEXES.contains(&x.name));
        let Some(bytes) = real_nexe(x.name) else {
            return;
        };
        let nexe = inspect(&bytes).unwrap_or_else(|e| panic!("{}: {e}", x.name));
        let info = &nexe.info;
        let what = format!("{}: {}", x.name, info.summary());
        assert_eq!(info.arch, x.arch, "{what}");
        assert_eq!(
            info.linking != pexe2wasm_nexe::Linking::Static,
            x.dynamic,
            "{what}"
        );
        assert!((x.app)(&info.app), "{what}: {:?}", info.app);
        assert_eq!(info.runtime_abi, x.abi, "{what}");
        assert!(
            (x.verdict)(&info.translation),
            "{what}: {:?}",
            info.translation
        );
        // The summary and the full text name the verdict.
        assert!(info.to_string().contains(&info.translation.to_string()));
    }
}

#[test]
fn recognition_marks() {
    let Some(hello) = real_nexe("nacl-hello_world-x86_64.nexe") else {
        return;
    };
    let info = inspect(&hello).unwrap().info;
    assert_eq!(info.recognized_by, Recognition::OsAbi { abi_version: 7 });
    assert_eq!(info.entry, 0x20080);
    assert_eq!(info.layout, Layout::Program);
    // PNaCl's translator output: OS/ABI 0, known by its note.
    let sz = inspect(&real_nexe("pnacl-sz-x86_64.nexe").unwrap())
        .unwrap()
        .info;
    assert_eq!(sz.os_abi, 0);
    assert_eq!(
        sz.recognized_by,
        Recognition::AbiNote {
            arch: "x86-64".into()
        }
    );
    // The ARM hello world has neither: NaCl's layout tells.
    let arm = inspect(&real_nexe("nacl-hello_world-arm.nexe").unwrap())
        .unwrap()
        .info;
    assert_eq!(arm.recognized_by, Recognition::Layout);
    // glibc: the static tool's empty PT_INTERP does not make it dynamic; the dynamic one
    // names its interpreter and libraries.
    let sln = inspect(&real_nexe("glibc-sln-x86_64.nexe").unwrap())
        .unwrap()
        .info;
    assert_eq!(sln.layout, Layout::GlibcDynamicText);
    let fact = inspect(&real_nexe("logrun-fact-x86_64.nexe").unwrap())
        .unwrap()
        .info;
    match &fact.linking {
        pexe2wasm_nexe::Linking::Dynamic {
            interpreter,
            needed,
        } => {
            assert_eq!(interpreter, "/lib64/ld-nacl-x86-64.so.1");
            assert!(needed.iter().any(|n| n == "libc.so.a9de5678"), "{needed:?}");
        }
        other => panic!("{other:?}"),
    }
    // The early IRT's interface names, and Pepper's.
    let fib = inspect(&real_nexe("nacl-fib_array-srpc-x86_64.nexe").unwrap())
        .unwrap()
        .info;
    assert!(fib.irt_interfaces.iter().any(|s| s == "nacl-irt-file-0.1"));
    let ck = inspect(&real_nexe("ckauth-x86_64.nexe").unwrap())
        .unwrap()
        .info;
    assert!(
        ck.ppp_interfaces.iter().any(|s| s == "PPP_Instance;1.1"),
        "{:?}",
        ck.ppp_interfaces
    );
    assert!(ck.ppb_interfaces.iter().any(|s| s == "PPB_Messaging;1.0"));
}

#[test]
fn the_malformed_x86_32_nexe_is_refused_naming_the_rule() {
    let Some(bytes) = real_nexe("nacl-text_overlaps_data-x86_32.nexe") else {
        return;
    };
    let info = inspect(&bytes).unwrap().info;
    let text = info.translation.to_string();
    // NaCl's own message (SOURCES.md: sel_ldr's stderr golden) and its error code.
    assert!(
        text.contains("No rodata segment, and text segment overlaps data segment"),
        "{text}"
    );
    assert!(text.contains("LOAD_TEXT_OVERLAPS_DATA"));
}

#[test]
fn every_x86_64_nexe_validates() {
    for name in NEXES {
        let Some(bytes) = real_nexe(name) else {
            return;
        };
        let nexe = inspect(&bytes).unwrap();
        let Some(v) = nexe.validate_x86_64() else {
            assert_ne!(nexe.info.arch, Arch::X86_64, "{name}");
            continue;
        };
        assert!(
            v.is_valid(),
            "{name}: {} errors: {:?}",
            v.error_count,
            v.errors
                .iter()
                .take(5)
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
        );
        let text = nexe.info.text().unwrap();
        assert_eq!(v.facts.base, text.vaddr);
        assert!(v.facts.instructions > 1000, "{name}");
        // Every bundle start is a valid target; jumps went somewhere.
        assert!(v.facts.is_valid_target(text.vaddr));
        assert!(!v.facts.jump_targets.is_empty(), "{name}");
        assert!(v.facts.indirect_jumps > 0, "{name}: returns are nacljmps");
        assert!(v.facts.is_valid_target(nexe.info.entry), "{name}: entry");
    }
}

#[test]
fn code_facts_match_the_toolchains() {
    // nacl-gcc calls with `call`, PNaCl's translator with `push $ret; jmp`.
    let Some(hello) = real_nexe("nacl-hello_world-x86_64.nexe") else {
        return;
    };
    let v = inspect(&hello).unwrap().validate_x86_64().unwrap();
    assert!(!v.facts.call_targets.is_empty());
    assert_eq!(v.facts.pushed_return_calls, 0);
    let ssh = real_nexe("nassh-ssh_client-x86_64.nexe").unwrap();
    let v = inspect(&ssh).unwrap().validate_x86_64().unwrap();
    assert!(
        v.facts.pushed_return_calls > 1000,
        "{}",
        v.facts.pushed_return_calls
    );
    assert!(v.facts.call_targets.len() > 500);
    assert!(v.warnings.is_empty());
}

#[test]
fn a_corrupted_nexe_is_refused_with_positions() {
    // One forbidden instruction (syscall) written over the entry bundle of the hello
    // world: the validator names the bundle, the instruction and the rule.
    let Some(mut bytes) = real_nexe("nacl-hello_world-x86_64.nexe") else {
        return;
    };
    let text = inspect(&bytes).unwrap().info.text().unwrap().clone();
    let at = (text.offset + (0x20080 - text.vaddr as u64)) as usize;
    bytes[at..at + 2].copy_from_slice(&[0x0f, 0x05]);
    let v = inspect(&bytes).unwrap().validate_x86_64().unwrap();
    assert!(!v.is_valid());
    let first = &v.errors[0];
    assert_eq!((first.bundle, first.address), (0x20080, 0x20080));
    assert!(first.to_string().contains("syscall"), "{first}");
}
