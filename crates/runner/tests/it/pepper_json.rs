//! Pepper vars as JSON (`pexe2wasm_runner::pepper::json`): every type both ways, tags and
//! `$` escaping, Chrome's int32/double rule, the limits, and what errors say.

use pexe2wasm_runner::pepper::json::{
    parse_line, to_line, to_text_line, var_from_json, var_to_json, JsonError, MAX_DEPTH, MAX_VALUES,
};
use pexe2wasm_runner::pepper::var::{PpVar, VarId, VarStore};
use serde_json::{json, Value};

/// Parses `line` and writes the var back, releasing it; the store must end up empty.
fn round_trip(line: &str) -> String {
    let mut store = VarStore::new();
    let var = parse_line(&mut store, line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let out = to_line(&store, var).unwrap();
    assert!(store.release(var));
    assert_eq!(store.live_count(), 0, "{line} leaked");
    out
}

fn parse_err(line: &str) -> JsonError {
    let mut store = VarStore::new();
    let err = parse_line(&mut store, line).expect_err(line);
    assert_eq!(store.live_count(), 0, "{line} leaked on error");
    err
}

fn parse_scalar(line: &str) -> PpVar {
    let mut store = VarStore::new();
    let v = parse_line(&mut store, line).unwrap();
    assert_eq!(store.live_count(), 0);
    v
}

fn nested_arrays(store: &mut VarStore, depth: usize, leaf: PpVar) -> PpVar {
    let mut var = leaf;
    for _ in 0..depth {
        let a = store.array_create();
        assert!(store.array_set(a, 0, var));
        store.release(var);
        var = a;
    }
    var
}

#[test]
fn scalars_encode() {
    let store = VarStore::new();
    let cases = [
        (PpVar::Undefined, r#"{"$undefined":true}"#),
        (PpVar::Null, "null"),
        (PpVar::Bool(true), "true"),
        (PpVar::Bool(false), "false"),
        (PpVar::Int32(-42), "-42"),
        (PpVar::Int32(i32::MIN), "-2147483648"),
        (PpVar::Double(1.5), "1.5"),
        (PpVar::Double(2.0), "2.0"),
        (PpVar::Double(-0.0), "-0.0"),
        (PpVar::Double(1e300), "1e+300"),
        (PpVar::Double(f64::NAN), r#"{"$double":"NaN"}"#),
        (PpVar::Double(f64::INFINITY), r#"{"$double":"Infinity"}"#),
        (
            PpVar::Double(f64::NEG_INFINITY),
            r#"{"$double":"-Infinity"}"#,
        ),
        (PpVar::Resource(12), r#"{"$resource":12}"#),
        (PpVar::Object(VarId(7)), r#"{"$object":7}"#),
    ];
    for (var, line) in cases {
        assert_eq!(to_line(&store, var).unwrap(), line, "{var:?}");
    }
}

#[test]
fn containers_encode() {
    let mut store = VarStore::new();
    let a = store.array_create();
    let s = store.string_from_utf8("a \"quoted\"\nline\té".as_bytes());
    let d = store.dict_create();
    let b = store.array_buffer_from(b"hello!?".to_vec());
    for (key, value) in [("z", PpVar::Int32(1)), ("a", s), ("m", b)] {
        let k = store.string_from_utf8(key.as_bytes());
        assert!(store.dict_set(d, k, value));
        store.release(k);
    }
    assert!(store.array_set(a, 0, d));
    assert!(store.array_set(a, 1, PpVar::Undefined));
    assert!(store.array_set(a, 2, s));
    assert_eq!(
        to_line(&store, a).unwrap(),
        r#"[{"a":"a \"quoted\"\nline\té","m":{"$arraybuffer":"aGVsbG8hPw=="},"z":1},{"$undefined":true},"a \"quoted\"\nline\té"]"#
    );
    assert_eq!(
        var_to_json(&store, d).unwrap(),
        json!({"a": "a \"quoted\"\nline\té", "m": {"$arraybuffer": "aGVsbG8hPw=="}, "z": 1})
    );
    let empty = store.array_buffer_create(0);
    assert_eq!(to_line(&store, empty).unwrap(), r#"{"$arraybuffer":""}"#);
    let one = store.array_buffer_from(vec![0xff]);
    assert_eq!(to_line(&store, one).unwrap(), r#"{"$arraybuffer":"/w=="}"#);
}

#[test]
fn every_type_round_trips() {
    for line in [
        r#"{"$undefined":true}"#,
        "null",
        "true",
        "false",
        "0",
        "-2147483648",
        "2147483647",
        "1.5",
        "-0.0",
        "2147483648.0",
        "1e+300",
        "5e-324",
        r#"{"$double":"NaN"}"#,
        r#"{"$double":"Infinity"}"#,
        r#"{"$double":"-Infinity"}"#,
        r#""""#,
        r#""text with \"quotes\", \\, \n, \u0000 and é""#,
        "[]",
        "{}",
        r#"[1,[2,[3,{"$undefined":true}]],{"k":[]}]"#,
        r#"{"":1,"a":{"b":{"c":null}},"list":[true,"x"]}"#,
        r#"{"$arraybuffer":""}"#,
        r#"{"$arraybuffer":"AAECAwT/"}"#,
        r#"{"b":{"$arraybuffer":"aGk="},"n":{"$double":"NaN"}}"#,
        r#"{"$$":1,"$$$x":2,"$$a":{"$$undefined":true}}"#,
    ] {
        assert_eq!(round_trip(line), line);
    }
}

#[test]
fn parsed_vars_have_the_right_types_and_contents() {
    let mut store = VarStore::new();
    let v = parse_line(&mut store, r#"{"list":[1,"two",{"$arraybuffer":"AQI="}]}"#).unwrap();
    let PpVar::Dictionary(_) = v else {
        panic!("{v:?}")
    };
    let list = store.dict_entries(v).unwrap()["list"];
    let elements = store.array_elements(list).unwrap().to_vec();
    assert_eq!(elements[0], PpVar::Int32(1));
    assert_eq!(store.string(elements[1]), Some("two"));
    assert_eq!(store.array_buffer_bytes(elements[2]), Some(&[1u8, 2][..]));
    // Each var is held once, by its container; the caller owns the outermost.
    assert_eq!(store.ref_count(v), Some(1));
    assert_eq!(store.ref_count(list), Some(1));
    assert_eq!(store.ref_count(elements[1]), Some(1));
    assert!(store.release(v));
    assert_eq!(store.live_count(), 0);
}

#[test]
fn numbers_follow_chromes_int32_rule() {
    assert_eq!(parse_scalar("1"), PpVar::Int32(1));
    assert_eq!(parse_scalar("1.0"), PpVar::Int32(1));
    assert_eq!(parse_scalar("-5e0"), PpVar::Int32(-5));
    assert_eq!(parse_scalar("0"), PpVar::Int32(0));
    assert_eq!(parse_scalar("2147483647"), PpVar::Int32(i32::MAX));
    assert_eq!(parse_scalar("-2147483648"), PpVar::Int32(i32::MIN));
    assert_eq!(parse_scalar("-2147483648.0"), PpVar::Int32(i32::MIN));
    assert_eq!(parse_scalar("2147483648"), PpVar::Double(2147483648.0));
    assert_eq!(parse_scalar("-2147483649"), PpVar::Double(-2147483649.0));
    assert_eq!(
        parse_scalar("18446744073709551615"),
        PpVar::Double(1.8446744073709552e19)
    );
    assert_eq!(parse_scalar("1.5"), PpVar::Double(1.5));
    assert_eq!(parse_scalar("1e300"), PpVar::Double(1e300));
    for negative_zero in ["-0", "-0.0", "-0e5"] {
        let PpVar::Double(d) = parse_scalar(negative_zero) else {
            panic!("{negative_zero} is not a double");
        };
        assert!(d == 0.0 && d.is_sign_negative(), "{negative_zero}");
    }
    // A double with an int32 value comes back as an int32, as through JavaScript.
    let store = VarStore::new();
    let line = to_line(&store, PpVar::Double(2.0)).unwrap();
    assert_eq!(line, "2.0");
    assert_eq!(parse_scalar(&line), PpVar::Int32(2));
    // From a Value made in Rust as well.
    let mut store = VarStore::new();
    assert_eq!(
        var_from_json(&mut store, &json!(7u64)).unwrap(),
        PpVar::Int32(7)
    );
    assert_eq!(
        var_from_json(&mut store, &json!(-3_000_000_000i64)).unwrap(),
        PpVar::Double(-3e9)
    );
    assert_eq!(
        var_from_json(&mut store, &json!(0.25)).unwrap(),
        PpVar::Double(0.25)
    );
}

#[test]
fn non_finite_doubles_are_tags() {
    let PpVar::Double(nan) = parse_scalar(r#"{"$double":"NaN"}"#) else {
        panic!()
    };
    assert!(nan.is_nan());
    assert_eq!(
        parse_scalar(r#"{"$double":"Infinity"}"#),
        PpVar::Double(f64::INFINITY)
    );
    assert_eq!(
        parse_scalar(r#"{"$double":"-Infinity"}"#),
        PpVar::Double(f64::NEG_INFINITY)
    );
    assert_eq!(parse_scalar(r#"{"$undefined":true}"#), PpVar::Undefined);
    // Bare NaN is not JSON; numbers beyond f64 are refused by the parser.
    assert!(matches!(parse_err("NaN"), JsonError::Syntax { .. }));
    assert!(matches!(parse_err("1e400"), JsonError::Syntax { .. }));
}

#[test]
fn dollar_keys_are_escaped_both_ways() {
    let mut store = VarStore::new();
    let d = store.dict_create();
    for (key, value) in [
        ("$undefined", PpVar::Bool(true)),
        ("$", PpVar::Int32(1)),
        ("$$x", PpVar::Int32(2)),
        ("a$", PpVar::Int32(3)),
    ] {
        let k = store.string_from_utf8(key.as_bytes());
        assert!(store.dict_set(d, k, value));
        store.release(k);
    }
    let line = to_line(&store, d).unwrap();
    assert_eq!(line, r#"{"$$":1,"$$$x":2,"$$undefined":true,"a$":3}"#);
    let back = parse_line(&mut store, &line).unwrap();
    let keys: Vec<&str> = store
        .dict_entries(back)
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["$", "$$x", "$undefined", "a$"]);
    // A one-key dictionary whose key is a tag's name is still a dictionary.
    let single = store.dict_create();
    let k = store.string_from_utf8(b"$double");
    assert!(store.dict_set(single, k, PpVar::Int32(1)));
    let line = to_line(&store, single).unwrap();
    assert_eq!(line, r#"{"$$double":1}"#);
    let back = parse_line(&mut store, &line).unwrap();
    assert!(matches!(back, PpVar::Dictionary(_)));
    assert_eq!(store.dict_get(back, k), PpVar::Int32(1));
}

#[test]
fn unknown_and_misplaced_tags_are_errors_naming_the_key() {
    let err = parse_err(r#"{"$foo":1}"#);
    assert_eq!(err, JsonError::UnknownTag("$foo".into()));
    assert!(err.to_string().contains("\"$foo\""), "{err}");
    let err = parse_err(r#"{"$":1}"#);
    assert_eq!(err, JsonError::UnknownTag("$".into()));
    // In an object of several keys, a single `$` is an error too, tags included.
    let err = parse_err(r#"{"a":[1,"x"],"$b":2}"#);
    assert_eq!(err, JsonError::UnescapedKey("$b".into()));
    assert!(err.to_string().contains("\"$b\""), "{err}");
    let err = parse_err(r#"{"$double":"NaN","x":1}"#);
    assert_eq!(err, JsonError::UnescapedKey("$double".into()));
    // Nested, after other vars were created: nothing leaks.
    let err = parse_err(r#"["s",{"k":"v"},[{"$nope":0}]]"#);
    assert_eq!(err, JsonError::UnknownTag("$nope".into()));
}

#[test]
fn resources_and_objects_are_refused_on_input() {
    for (line, tag) in [
        (r#"{"$resource":1}"#, "$resource"),
        (r#"{"$object":3}"#, "$object"),
        (r#"["x",{"$resource":1}]"#, "$resource"),
    ] {
        let err = parse_err(line);
        assert_eq!(err, JsonError::RefusedTag(tag.into()));
        assert!(err.to_string().contains("never receives"), "{err}");
    }
}

#[test]
fn bad_tag_values_are_errors() {
    for (line, tag, says) in [
        (r#"{"$undefined":false}"#, "$undefined", "expected true"),
        (r#"{"$undefined":1}"#, "$undefined", "expected true"),
        (r#"{"$double":"nan"}"#, "$double", "\"NaN\""),
        (r#"{"$double":1.5}"#, "$double", "\"Infinity\""),
        (r#"{"$arraybuffer":5}"#, "$arraybuffer", "base64 string"),
        (
            r#"{"$arraybuffer":"a?=="}"#,
            "$arraybuffer",
            "invalid base64",
        ),
        (
            r#"{"$arraybuffer":"aGk"}"#,
            "$arraybuffer",
            "invalid base64",
        ),
        (
            r#"{"$arraybuffer":"aGk=="}"#,
            "$arraybuffer",
            "invalid base64",
        ),
        (
            r#"[[{"$arraybuffer":"-_8="}]]"#,
            "$arraybuffer",
            "invalid base64",
        ),
    ] {
        let err = parse_err(line);
        let JsonError::BadTagValue { tag: t, .. } = &err else {
            panic!("{line}: {err:?}");
        };
        assert_eq!(t, tag);
        let text = err.to_string();
        assert!(text.contains(tag) && text.contains(says), "{line}: {text}");
    }
}

#[test]
fn syntax_errors_carry_the_column() {
    let err = parse_err(r#"[1, 2,, 3]"#);
    let JsonError::Syntax {
        line,
        column,
        message,
    } = &err
    else {
        panic!("{err:?}");
    };
    assert_eq!((*line, *column), (1, 7));
    assert!(!message.contains("at line"), "{message}");
    assert_eq!(
        err.to_string(),
        format!("invalid JSON at column 7: {message}")
    );
    let err = parse_err("");
    assert!(
        matches!(err, JsonError::Syntax { column: 0, .. }),
        "{err:?}"
    );
    let err = parse_err("[1] x");
    assert!(
        matches!(err, JsonError::Syntax { column: 5, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("trailing"), "{err}");
    // Lone surrogates are not text.
    assert!(matches!(parse_err(r#""\ud800""#), JsonError::Syntax { .. }));
}

#[test]
fn cycles_are_refused() {
    let mut store = VarStore::new();
    let a = store.array_create();
    assert!(store.array_set(a, 0, PpVar::Int32(1)));
    assert!(store.array_set(a, 1, a));
    let err = to_line(&store, a).unwrap_err();
    assert_eq!(err, JsonError::Cycle(a));
    assert!(err.to_string().contains("contains itself"), "{err}");

    // Through a dictionary, two levels down.
    let d = store.dict_create();
    let inner = store.array_create();
    let k = store.string_from_utf8(b"k");
    assert!(store.dict_set(d, k, inner));
    assert!(store.array_set(inner, 0, d));
    assert_eq!(var_to_json(&store, d).unwrap_err(), JsonError::Cycle(d));
    assert_eq!(
        var_to_json(&store, inner).unwrap_err(),
        JsonError::Cycle(inner)
    );
}

#[test]
fn a_var_reached_twice_without_a_cycle_is_written_twice() {
    let mut store = VarStore::new();
    let shared = store.array_create();
    assert!(store.array_set(shared, 0, PpVar::Int32(5)));
    let outer = store.array_create();
    assert!(store.array_set(outer, 0, shared));
    assert!(store.array_set(outer, 1, shared));
    assert_eq!(to_line(&store, outer).unwrap(), "[[5],[5]]");
}

#[test]
fn sharing_cannot_blow_up_the_output() {
    // 40 levels, each an array holding the level below twice: 2^40 leaves.
    let mut store = VarStore::new();
    let mut var = PpVar::Int32(0);
    for _ in 0..40 {
        let a = store.array_create();
        assert!(store.array_set(a, 0, var));
        assert!(store.array_set(a, 1, var));
        store.release(var);
        var = a;
    }
    let err = to_line(&store, var).unwrap_err();
    assert_eq!(err, JsonError::TooManyValues);
    assert!(err.to_string().contains(&MAX_VALUES.to_string()), "{err}");
}

#[test]
fn the_depth_limit_matches_the_parser_both_ways() {
    let mut store = VarStore::new();
    // The deepest output parses back.
    let deepest = nested_arrays(&mut store, MAX_DEPTH, PpVar::Int32(1));
    let line = to_line(&store, deepest).unwrap();
    assert_eq!(line.matches('[').count(), MAX_DEPTH);
    let back = parse_line(&mut store, &line).unwrap();
    assert_eq!(to_line(&store, back).unwrap(), line);
    // A tag counts as a level.
    let with_tag = nested_arrays(&mut store, MAX_DEPTH - 1, PpVar::Undefined);
    let line = to_line(&store, with_tag).unwrap();
    assert!(parse_line(&mut store, &line).is_ok());
    let too_deep = nested_arrays(&mut store, MAX_DEPTH, PpVar::Undefined);
    assert_eq!(to_line(&store, too_deep).unwrap_err(), JsonError::TooDeep);
    let too_deep = nested_arrays(&mut store, MAX_DEPTH + 1, PpVar::Int32(1));
    let err = to_line(&store, too_deep).unwrap_err();
    assert_eq!(err, JsonError::TooDeep);
    assert!(err.to_string().contains(&MAX_DEPTH.to_string()), "{err}");

    // One level more than the limit is refused by the parser...
    let line = format!(
        "{}1{}",
        "[".repeat(MAX_DEPTH + 1),
        "]".repeat(MAX_DEPTH + 1)
    );
    let err = parse_err(&line);
    assert!(err.to_string().contains("recursion limit"), "{err}");
    // ...and by var_from_json for a Value built otherwise, without leaking.
    let mut value = json!({"$undefined": true});
    for _ in 0..MAX_DEPTH {
        value = Value::Array(vec![Value::from("x"), value]);
    }
    let mut store = VarStore::new();
    assert_eq!(
        var_from_json(&mut store, &value).unwrap_err(),
        JsonError::TooDeep
    );
    assert_eq!(store.live_count(), 0);
    let value = Value::Array(vec![value]);
    assert_eq!(
        var_from_json(&mut store, &value).unwrap_err(),
        JsonError::TooDeep
    );
    assert_eq!(store.live_count(), 0);
}

#[test]
fn dead_vars_are_errors() {
    let mut store = VarStore::new();
    let s = store.string_from_utf8(b"gone");
    store.release(s);
    assert_eq!(to_line(&store, s).unwrap_err(), JsonError::DeadVar(s));
    // A container holding a var released too often.
    let a = store.array_create();
    let t = store.string_from_utf8(b"t");
    assert!(store.array_set(a, 0, t));
    store.release(t);
    store.release(t);
    let err = to_line(&store, a).unwrap_err();
    assert_eq!(err, JsonError::DeadVar(t));
    assert!(err.to_string().contains("not live"), "{err}");
    assert_eq!(
        to_line(&store, PpVar::Dictionary(VarId(0))).unwrap_err(),
        JsonError::DeadVar(PpVar::Dictionary(VarId(0)))
    );
}

#[test]
fn lines_have_no_line_breaks() {
    let mut store = VarStore::new();
    let s = store.string_from_utf8("one\ntwo\r\nthree\u{2028}".as_bytes());
    let a = store.array_create();
    assert!(store.array_set(a, 0, s));
    let line = to_line(&store, a).unwrap();
    assert!(!line.contains(['\n', '\r']), "{line}");
    assert_eq!(line, "[\"one\\ntwo\\r\\nthree\u{2028}\"]");
}

#[test]
fn text_lines() {
    let mut store = VarStore::new();
    let plain = store.string_from_utf8("plain text, \"quotes\" and é".as_bytes());
    assert_eq!(
        to_text_line(&store, plain).unwrap(),
        "plain text, \"quotes\" and é"
    );
    let empty = store.string_from_utf8(b"");
    assert_eq!(to_text_line(&store, empty).unwrap(), "");
    for text in ["two\nlines", "carriage\rreturn"] {
        let s = store.string_from_utf8(text.as_bytes());
        let line = to_text_line(&store, s).unwrap();
        assert_eq!(line, serde_json::to_string(text).unwrap());
        assert!(!line.contains(['\n', '\r']));
    }
    assert_eq!(to_text_line(&store, PpVar::Int32(3)).unwrap(), "3");
    assert_eq!(
        to_text_line(&store, PpVar::Undefined).unwrap(),
        r#"{"$undefined":true}"#
    );
    let a = store.array_create();
    assert!(store.array_set(a, 0, plain));
    assert_eq!(
        to_text_line(&store, a).unwrap(),
        r#"["plain text, \"quotes\" and é"]"#
    );
    store.release(plain);
    store.release(a);
    assert_eq!(
        to_text_line(&store, plain).unwrap_err(),
        JsonError::DeadVar(plain)
    );
}

#[test]
fn errors_release_everything_created() {
    for line in [
        r#"[1,"a",[2,"b",{"k":"v","l":[]}],{"$bad":1}]"#,
        r#"{"a":"x","b":["y",{"$resource":1}],"c":"z"}"#,
        r#"{"a":{"$arraybuffer":"AAAA"},"b":{"$double":"nope"}}"#,
        r#"{"a":"x","$b":"y"}"#,
    ] {
        let mut store = VarStore::new();
        let keep = store.string_from_utf8(b"keep");
        assert!(var_from_json(&mut store, &serde_json::from_str(line).unwrap()).is_err());
        assert_eq!(store.live_count(), 1, "{line}");
        assert_eq!(store.string(keep), Some("keep"));
    }
}
