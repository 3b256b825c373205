//! Bad description texts give typed errors naming the line; nothing panics.

use pexe2wasm_ppapi::{parse, ParseErrorKind, ValType};

const GOOD: &str = "\
typedef PP_Resource = int32_t
struct PP_Point size 8 align 4 { x: int32_t; y: int32_t }
ppb PPB_Thing;1.0 {
  Get(res: PP_Resource) -> PP_Point   # struct result
}
";

/// The error line and kind for `text`, which must fail.
fn fail(text: &str) -> (usize, ParseErrorKind) {
    match parse(text) {
        Ok(_) => panic!("parsed:\n{text}"),
        Err(e) => {
            assert!(
                e.to_string().starts_with(&format!("line {}: ", e.line)),
                "{e}"
            );
            (e.line, e.kind)
        }
    }
}

#[test]
fn a_small_description_parses() {
    let d = parse(GOOD).unwrap();
    let f = d
        .interface("PPB_Thing;1.0")
        .unwrap()
        .function("Get")
        .unwrap();
    assert!(f.sret);
    assert_eq!(f.wasm.params, [ValType::I32, ValType::I32]);
    assert!(f.wasm.results.is_empty());
    assert_eq!(f.c_signature(), "PP_Point Get(PP_Resource res)");
}

#[test]
fn unknown_type_names_its_line() {
    let text = GOOD.replace("-> PP_Point", "-> PP_Nope");
    assert_eq!(
        fail(&text),
        (4, ParseErrorKind::UnknownType("PP_Nope".into()))
    );
}

#[test]
fn wrong_struct_size_and_alignment_are_caught() {
    let text = GOOD.replace("size 8 align 4", "size 12 align 4");
    assert_eq!(
        fail(&text),
        (
            2,
            ParseErrorKind::SizeMismatch {
                name: "PP_Point".into(),
                stated: 12,
                computed: 8
            }
        )
    );
    let text = "struct S size 16 align 4 { a: int32_t; b: double }\n";
    assert!(matches!(
        fail(text),
        (1, ParseErrorKind::AlignMismatch { computed: 8, .. })
    ));
    // A double after an int32 is 8-aligned: 16 bytes, not 12.
    let text = "struct S size 12 align 8 { a: int32_t; b: double }\n";
    assert!(matches!(
        fail(text),
        (1, ParseErrorKind::SizeMismatch { computed: 16, .. })
    ));
    let text = "struct S size 6 align 2 { port: uint16_t; addr: uint8_t[4] }\n";
    assert!(parse(text).is_ok());
}

#[test]
fn duplicates_are_rejected() {
    let text = format!("{GOOD}ppb PPB_Thing;1.0 {{\n  A()\n}}\n");
    assert_eq!(
        fail(&text),
        (
            6,
            ParseErrorKind::DuplicateInterface("PPB_Thing;1.0".into())
        )
    );
    let text = "ppb PPB_X;1.0 {\n  A()\n  A(x: int32_t)\n}\n";
    assert_eq!(
        fail(text),
        (3, ParseErrorKind::DuplicateFunction("A".into()))
    );
    let text = "typedef A = int32_t\nenum A\n";
    assert_eq!(fail(text), (2, ParseErrorKind::DuplicateType("A".into())));
    let text = "ppb PPB_X;1.0 {\n  A(x: int32_t, x: int32_t)\n}\n";
    assert_eq!(fail(text), (2, ParseErrorKind::DuplicateName("x".into())));
}

#[test]
fn interface_names_and_kinds_are_checked() {
    assert!(matches!(
        fail("ppb PPB_X {\n  A()\n}\n"),
        (1, ParseErrorKind::BadInterfaceName(_))
    ));
    assert!(matches!(
        fail("ppb PPB_X;1.x {\n  A()\n}\n"),
        (1, ParseErrorKind::BadInterfaceName(_))
    ));
    assert!(matches!(
        fail("ppp PPB_X;1.0 {\n  A()\n}\n"),
        (1, ParseErrorKind::KindMismatch { .. })
    ));
    assert!(matches!(
        fail("ppb PPB_X;1.1 extends PPB_X;1.0 {\n  A()\n}\n"),
        (1, ParseErrorKind::UnknownBase { .. })
    ));
    assert!(matches!(
        fail("ppb PPB_X;1.0 {\n}\n"),
        (1, ParseErrorKind::Empty(_))
    ));
    assert!(
        parse("ppb PPB_X(Dev);0.1.2 {\n  A()\n}\n")
            .unwrap()
            .interfaces[0]
            .dev
    );
}

#[test]
fn syntax_errors_name_the_line() {
    let cases: &[(&str, usize)] = &[
        ("enum A\nenum\n", 2),
        ("enum A\n\n# comment\nwhat is this\n", 4),
        ("ppb PPB_X;1.0 {\n  A(\n}\n", 2),
        ("ppb PPB_X;1.0 {\n  A() => int32_t\n}\n", 2),
        ("ppb PPB_X;1.0 {\n  A(x int32_t)\n}\n", 2),
        ("ppb PPB_X;1.0 {\n  A(x: int32_t int32_t)\n}\n", 2),
        ("struct S size 4 align 4 {\n  a: int32_t[0]\n}\n", 2),
        ("struct S size four align 4 { a: int32_t }\n", 1),
        ("typedef A int32_t\n", 1),
        ("typedef A = \n", 1),
        ("ppb PPB_X;1.0 {\n  A()\n  ppb PPB_Y;1.0 {\n}\n", 3),
    ];
    for &(text, line) in cases {
        let (l, kind) = fail(text);
        assert_eq!(l, line, "{text:?}: {kind}");
    }
    assert_eq!(fail("}\n"), (1, ParseErrorKind::StrayClose));
    assert_eq!(
        fail("enum A\nppb PPB_X;1.0 {\n  A()\n"),
        (2, ParseErrorKind::Unclosed)
    );
}

#[test]
fn void_and_opaque_cannot_be_used_by_value() {
    assert!(matches!(
        fail("ppb PPB_X;1.0 {\n  A(x: void)\n}\n"),
        (2, ParseErrorKind::NotByValue(_))
    ));
    assert!(matches!(
        fail("opaque O\nppb PPB_X;1.0 {\n  A() -> O\n}\n"),
        (3, ParseErrorKind::NotByValue(_))
    ));
    assert!(parse("opaque O\nppb PPB_X;1.0 {\n  A(o: const O*) -> void*\n}\n").is_ok());
}

#[test]
fn garbage_never_panics() {
    // Every prefix and some mangled variants of a valid text: errors or success, never a
    // panic.
    let text = pexe2wasm_ppapi::DESCRIPTION_TEXT;
    let bytes: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(97).collect();
    for &end in &bytes {
        let _ = parse(&text[..end]);
        let _ = parse(&text[end..]);
    }
    for junk in [
        "{", "}{", "{ }", "ppb", "struct", ": ;", "(((", "-> ->", "*", "[]", "\0",
    ] {
        let _ = parse(junk);
        let _ = parse(&format!("ppb PPB_X;1.0 {{\n  A({junk})\n}}\n"));
        let _ = parse(&format!("struct S size 4 align 4 {{ {junk} }}\n"));
    }
}

#[test]
fn dev_channel_marker() {
    let d = parse("ppb PPB_X;0.1 channel=dev {\n  A()\n}\nppb PPB_Y;1.0 {\n  A()\n}\n").unwrap();
    assert!(d.interface("PPB_X;0.1").unwrap().dev_channel);
    assert!(!d.interface("PPB_Y;1.0").unwrap().dev_channel);
    assert!(parse("ppb PPB_X;0.1 channel=beta {\n  A()\n}\n").is_err());
}

#[test]
fn enum_values_are_read_with_their_short_names() {
    let text = "\
enum PP_Bool strip PP_ { PP_FALSE = 0; PP_TRUE = 1 }
enum PP_Error strip PP_ERROR_ PP_OK_ PP_ {
  PP_OK = 0
  PP_OK_COMPLETIONPENDING = -1
  PP_ERROR_FAILED = -2     # a comment
  PP_ERROR_BIG = 0x7fffffff
}
enum PP_Mod { PP_MOD_A = 1 << 0; PP_MOD_B = 1 << 4; PP_MOD_NONE = 0 << 0 }
enum PP_Plain
";
    let d = parse(text).unwrap();
    let short = |e: &str| -> Vec<(String, i32)> {
        d.enum_values(e)
            .unwrap()
            .iter()
            .map(|v| (v.short.clone(), v.value))
            .collect()
    };
    assert_eq!(short("PP_Bool"), [("FALSE".into(), 0), ("TRUE".into(), 1)]);
    assert_eq!(
        short("PP_Error"),
        [
            ("OK".into(), 0),
            ("COMPLETIONPENDING".into(), -1),
            ("FAILED".into(), -2),
            ("BIG".into(), i32::MAX)
        ]
    );
    // No strip list: the short name is the C name.
    assert_eq!(
        short("PP_Mod"),
        [
            ("PP_MOD_A".into(), 1),
            ("PP_MOD_B".into(), 16),
            ("PP_MOD_NONE".into(), 0)
        ]
    );
    let e = d.enum_values("PP_Error").unwrap();
    assert_eq!((e[2].name.as_str(), e[2].line), ("PP_ERROR_FAILED", 5));
    assert_eq!(d.enum_values("PP_Plain"), Some(&[][..]));
    assert_eq!(d.enum_values("PP_Nothing"), None);
    // enums() lists only the enums with values, in file order.
    let names: Vec<&str> = d.enums().map(|(n, _)| n).collect();
    assert_eq!(names, ["PP_Bool", "PP_Error", "PP_Mod"]);
    // An enum with values is still an i32 in calls.
    let d = parse(&format!(
        "{text}ppb PPB_X;1.0 {{ Get(b: PP_Bool) -> PP_Error }}\n"
    ))
    .unwrap();
    let f = d.interface("PPB_X;1.0").unwrap().function("Get").unwrap();
    assert_eq!(f.wasm.params, [ValType::I32]);
    assert_eq!(f.wasm.results, [ValType::I32]);
}

#[test]
fn bad_enum_values_name_their_line() {
    for (value, why) in [
        ("PP_A", "no value"),
        ("PP_A = ", "empty value"),
        ("PP_A = twelve", "not a number"),
        ("PP_A = 0x", "empty hex"),
        ("PP_A = 0x-1", "signed hex"),
        ("PP_A = 2147483648", "beyond int32_t"),
        ("PP_A = -2147483649", "below int32_t"),
        ("PP_A = 1 << 31", "shift out of int32_t"),
        ("PP_A = 1 << 40", "shift too far"),
        ("PP_A = 1 <<", "half a shift"),
        ("1A = 3", "not an identifier"),
    ] {
        let text = format!("enum PP_E {{\n  PP_OK = 0\n  {value}\n}}\n");
        assert_eq!(
            fail(&text),
            (3, ParseErrorKind::BadEnumValue(value.trim().into())),
            "{why}"
        );
    }
    assert_eq!(
        fail("enum PP_E {\n  PP_A = 0\n  PP_A = 1\n}\n"),
        (3, ParseErrorKind::DuplicateName("PP_A".into()))
    );
    // Two names that strip to the same short name would clash in the generated modules.
    assert_eq!(
        fail("enum PP_E strip PP_X_ PP_ {\n  PP_X_A = 0\n  PP_A = 1\n}\n"),
        (3, ParseErrorKind::DuplicateName("PP_A".into()))
    );
    assert_eq!(
        fail("enum PP_E strip {\n  PP_A = 0\n}\n").0,
        1,
        "strip needs a prefix"
    );
    assert_eq!(
        fail("enum PP_E {\n}\n"),
        (1, ParseErrorKind::Empty("PP_E".into()))
    );
    assert_eq!(
        fail("enum PP_Bool\nenum PP_Bool { PP_FALSE = 0 }\n"),
        (2, ParseErrorKind::DuplicateType("PP_Bool".into()))
    );
}

const CALLBACKS: &str = "\
typedef PP_Resource = int32_t
funcptr PP_CompletionCallback_Func(user_data: void*, result: int32_t)
struct PP_CompletionCallback size 12 align 4 { func: PP_CompletionCallback_Func; user_data: void*; flags: int32_t }
typedef PP_CC = PP_CompletionCallback
struct PP_Point size 8 align 4 { x: int32_t; y: int32_t }
ppb PPB_Thing;1.0 {
  Open(res: PP_Resource, flags: int32_t, callback: PP_CompletionCallback) -> int32_t
  Later(callback: PP_CompletionCallback, delay: int64_t) -> int32_t @schedules
  Where(callback: PP_CC) -> PP_Point
  ByPointer(callback: PP_CompletionCallback*) -> int32_t
  Plain(res: PP_Resource) -> int32_t
}
";

#[test]
fn completion_callbacks_and_blocking_are_read() {
    use pexe2wasm_ppapi::{Callback, CallbackKind};
    let d = parse(CALLBACKS).unwrap();
    let i = d.interface("PPB_Thing;1.0").unwrap();
    let f = |n: &str| i.function(n).unwrap();
    assert_eq!(
        f("Open").callback,
        Some(Callback {
            param: 2,
            wasm_param: 2,
            kind: CallbackKind::Completion
        })
    );
    assert!(f("Open").may_block());
    assert_eq!(
        f("Later").callback,
        Some(Callback {
            param: 0,
            wasm_param: 0,
            kind: CallbackKind::Schedules
        })
    );
    assert!(!f("Later").may_block(), "work to run later never blocks");
    // Through a typedef, after a hidden result pointer.
    assert_eq!(
        f("Where").callback,
        Some(Callback {
            param: 0,
            wasm_param: 1,
            kind: CallbackKind::Completion
        })
    );
    // Only a callback by value counts.
    assert_eq!(f("ByPointer").callback, None);
    assert!(!f("Plain").may_block());
}

#[test]
fn bad_callback_markings_name_their_line() {
    let two = CALLBACKS.replace(
        "Plain(res: PP_Resource)",
        "Plain(a: PP_CompletionCallback, b: PP_CompletionCallback)",
    );
    assert_eq!(
        fail(&two),
        (11, ParseErrorKind::TwoCallbacks("Plain".into()))
    );
    let none = CALLBACKS.replace(
        "Plain(res: PP_Resource) -> int32_t",
        "Plain(res: PP_Resource) -> int32_t @schedules",
    );
    assert_eq!(
        fail(&none),
        (11, ParseErrorKind::SchedulesWithoutCallback("Plain".into()))
    );
    let unknown = CALLBACKS.replace("@schedules", "@later");
    assert_eq!(
        fail(&unknown),
        (8, ParseErrorKind::UnknownAttribute("later".into()))
    );
}
