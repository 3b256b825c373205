//! The input event interfaces (`PPB_InputEvent` requests, the mouse, wheel, keyboard,
//! touch and IME kinds) against Chrome's behaviour, and the `--events` file format.

use std::path::Path;
use std::sync::Arc;

use pexe2wasm_runner::pepper::events::{self, EventsError};
use pexe2wasm_runner::pepper::var::PpVar;
use pexe2wasm_runner::pepper::{pp_error, CaptureSink, PepperConfig, PepperHost, INSTANCE};
use pexe2wasm_runner::wasmtime::Val;
use pexe2wasm_runner::{Ctx, RunOptions};
use pexe2wasm_testkit::corpus::Scratch;

use crate::pepper_support::Harness;

const IE: &str = "PPB_InputEvent;1.0";
const M0: &str = "PPB_MouseInputEvent;1.0";
const M1: &str = "PPB_MouseInputEvent;1.1";
const W: &str = "PPB_WheelInputEvent;1.0";
const K0: &str = "PPB_KeyboardInputEvent;1.0";
const K2: &str = "PPB_KeyboardInputEvent;1.2";
const T0: &str = "PPB_TouchInputEvent;1.0";
const T4: &str = "PPB_TouchInputEvent;1.4";
const IME: &str = "PPB_IMEInputEvent;1.0";

fn i32s(v: &[i32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn f32s(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn read_f32s(h: &Harness, at: u32, n: u32) -> Vec<f32> {
    h.read(at, 4 * n)
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn read_i32s(h: &Harness, at: u32, n: u32) -> Vec<i32> {
    h.read(at, 4 * n)
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn one(h: &mut Harness, iface: &str, f: &str, args: &[Val]) -> i32 {
    h.try_call(iface, f, args).unwrap()[0].unwrap_i32()
}

fn i(v: i32) -> Val {
    Val::I32(v)
}

fn t(v: f64) -> Val {
    Val::F64(v.to_bits())
}

/// A mouse event through 1.1's Create: (kind, button, position, clicks, movement).
fn mouse(h: &mut Harness, kind: i32, button: i32, pos: (i32, i32), clicks: i32) -> i32 {
    h.write(0x500, &i32s(&[pos.0, pos.1, 3, -4]));
    one(
        h,
        M1,
        "Create",
        &[
            i(INSTANCE),
            i(kind),
            t(1.25),
            i(1 | 64),
            i(button),
            i(0x500),
            i(clicks),
            i(0x508),
        ],
    )
}

/// The text of the string var at `at`.
fn text_at(h: &Harness, at: u32) -> Option<String> {
    let v = h.read_var(at);
    h.state().vars().string(v).map(str::to_string)
}

#[test]
fn mouse_events_are_made_and_read_as_in_chrome() {
    let mut h = Harness::new();
    let e = mouse(&mut h, 0, 2, (10, 20), 2);
    assert_ne!(e, 0);
    assert_eq!(h.call(IE, "IsInputEvent", &[e]), 1);
    assert_eq!(h.call(IE, "GetType", &[e]), 0);
    assert_eq!(h.call(IE, "GetModifiers", &[e]), 65);
    let ts = h.try_call(IE, "GetTimeStamp", &[i(e)]).unwrap();
    assert_eq!(ts[0].unwrap_f64(), 1.25);
    for v in [M0, M1] {
        assert_eq!(h.call(v, "IsMouseInputEvent", &[e]), 1);
        assert_eq!(h.call(v, "GetButton", &[e]), 2);
        assert_eq!(h.call(v, "GetClickCount", &[e]), 2);
        h.call(v, "GetPosition", &[0x600, e]);
        assert_eq!(read_i32s(&h, 0x600, 2), [10, 20]);
    }
    h.call(M1, "GetMovement", &[0x600, e]);
    assert_eq!(read_i32s(&h, 0x600, 2), [3, -4]);
    // 1.0's Create has no movement: (0, 0).
    h.write(0x500, &i32s(&[7, 8]));
    let e0 = one(
        &mut h,
        M0,
        "Create",
        &[i(INSTANCE), i(2), t(0.0), i(0), i(-1), i(0x500), i(0)],
    );
    h.call(M1, "GetMovement", &[0x600, e0]);
    assert_eq!(read_i32s(&h, 0x600, 2), [0, 0]);
    // Chrome's Create takes the five mouse types only (not even CONTEXTMENU), and only
    // for our instance.
    for kind in [5, 7, 10, 15, -1, 99] {
        assert_eq!(mouse(&mut h, kind, 0, (0, 0), 1), 0, "type {kind}");
    }
    h.write(0x500, &i32s(&[0, 0, 0, 0]));
    let bad = one(
        &mut h,
        M1,
        "Create",
        &[
            i(INSTANCE + 1),
            i(0),
            t(0.0),
            i(0),
            i(0),
            i(0x500),
            i(1),
            i(0x508),
        ],
    );
    assert_eq!(bad, 0);
}

#[test]
fn wheel_and_keyboard_events_carry_their_fields() {
    let mut h = Harness::new();
    h.write(0x500, &f32s(&[1.5, -120.0, 0.0, -3.0]));
    let w = one(
        &mut h,
        W,
        "Create",
        &[i(INSTANCE), t(2.0), i(2), i(0x500), i(0x508), i(1)],
    );
    assert_ne!(w, 0);
    assert_eq!(h.call(IE, "GetType", &[w]), 5);
    assert_eq!(h.call(W, "IsWheelInputEvent", &[w]), 1);
    h.call(W, "GetDelta", &[0x600, w]);
    assert_eq!(read_f32s(&h, 0x600, 2), [1.5, -120.0]);
    h.call(W, "GetTicks", &[0x600, w]);
    assert_eq!(read_f32s(&h, 0x600, 2), [0.0, -3.0]);
    assert_eq!(h.call(W, "GetScrollByPage", &[w]), 1);

    h.make_string("é", 0x700);
    h.make_string("KeyE", 0x720);
    let k = one(
        &mut h,
        K2,
        "Create",
        &[i(INSTANCE), i(9), t(3.0), i(1), i(69), i(0x700), i(0x720)],
    );
    assert_ne!(k, 0);
    for v in [K0, K2] {
        assert_eq!(h.call(v, "IsKeyboardInputEvent", &[k]), 1);
        assert_eq!(h.call(v, "GetKeyCode", &[k]), 69);
        h.call(v, "GetCharacterText", &[0x800, k]);
        assert_eq!(text_at(&h, 0x800).as_deref(), Some("é"));
    }
    h.call(K2, "GetCode", &[0x800, k]);
    assert_eq!(text_at(&h, 0x800).as_deref(), Some("KeyE"));
    // 1.0 has no code; a text that is not a string is an empty one.
    h.write_var(0x740, PpVar::Int32(5));
    let k0 = one(
        &mut h,
        K0,
        "Create",
        &[i(INSTANCE), i(7), t(0.0), i(0), i(13), i(0x740)],
    );
    h.call(K2, "GetCode", &[0x800, k0]);
    assert_eq!(text_at(&h, 0x800).as_deref(), Some(""));
    h.call(K2, "GetCharacterText", &[0x800, k0]);
    assert_eq!(text_at(&h, 0x800).as_deref(), Some(""));
    // A string var that does not exist, or a type that is not a key's: no event.
    h.write_var(
        0x760,
        PpVar::String(pexe2wasm_runner::pepper::var::VarId(0x7777)),
    );
    let none = one(
        &mut h,
        K0,
        "Create",
        &[i(INSTANCE), i(7), t(0.0), i(0), i(13), i(0x760)],
    );
    assert_eq!(none, 0);
    for kind in [0, 5, 10, 11] {
        let r = one(
            &mut h,
            K0,
            "Create",
            &[i(INSTANCE), i(kind), t(0.0), i(0), i(13), i(0x700)],
        );
        assert_eq!(r, 0, "type {kind}");
    }
}

#[test]
fn touch_events_keep_three_lists_of_points() {
    let mut h = Harness::new();
    let e = one(&mut h, T4, "Create", &[i(INSTANCE), i(15), t(0.5), i(0)]);
    assert_ne!(e, 0);
    assert_eq!(h.call(T0, "IsTouchInputEvent", &[e]), 1);
    // PP_TouchPoint: id, position, radius, rotation angle, pressure.
    let point = |id: u32, x: f32| {
        let mut b = id.to_le_bytes().to_vec();
        b.extend(f32s(&[x, 2.0, 3.0, 4.0, 0.5, 0.75]));
        b
    };
    h.write(0x500, &point(7, 1.0));
    h.call(T0, "AddTouchPoint", &[e, 0, 0x500]);
    h.write(0x500, &point(9, 10.0));
    h.call(T0, "AddTouchPoint", &[e, 0, 0x500]);
    h.call(T0, "AddTouchPoint", &[e, 1, 0x500]);
    // An unknown list is ignored.
    h.call(T0, "AddTouchPoint", &[e, 3, 0x500]);
    assert_eq!(h.call(T0, "GetTouchCount", &[e, 0]), 2);
    assert_eq!(h.call(T0, "GetTouchCount", &[e, 1]), 1);
    assert_eq!(h.call(T0, "GetTouchCount", &[e, 2]), 0);
    assert_eq!(h.call(T0, "GetTouchCount", &[e, 3]), 0);
    h.call(T0, "GetTouchByIndex", &[0x600, e, 0, 1]);
    assert_eq!(h.read(0x600, 28), point(9, 10.0));
    h.call(T4, "GetTouchById", &[0x600, e, 0, 7]);
    assert_eq!(h.read(0x600, 28), point(7, 1.0));
    // Missing: a zeroed point.
    h.call(T0, "GetTouchById", &[0x600, e, 1, 7]);
    assert_eq!(h.read(0x600, 28), vec![0; 28]);
    h.write(0x600, &[1; 8]);
    h.call(T4, "GetTouchTiltByIndex", &[0x600, e, 0, 0]);
    assert_eq!(read_f32s(&h, 0x600, 2), [0.0, 0.0]);
    for kind in [0, 14, 19] {
        let r = one(&mut h, T0, "Create", &[i(INSTANCE), i(kind), t(0.0), i(0)]);
        assert_eq!(r, 0, "type {kind}");
    }
}

#[test]
fn ime_events_keep_segments_target_and_selection() {
    let mut h = Harness::new();
    h.make_string("日本語", 0x700);
    h.write(0x500, &i32s(&[0, 3, 9]));
    let e = one(
        &mut h,
        IME,
        "Create",
        &[
            i(INSTANCE),
            i(12),
            t(0.0),
            i(0x700),
            i(2),
            i(0x500),
            i(1),
            i(3),
            i(6),
        ],
    );
    assert_ne!(e, 0);
    assert_eq!(h.call(IME, "IsIMEInputEvent", &[e]), 1);
    h.call(IME, "GetText", &[0x800, e]);
    assert_eq!(text_at(&h, 0x800).as_deref(), Some("日本語"));
    assert_eq!(h.call(IME, "GetSegmentNumber", &[e]), 2);
    assert_eq!(h.call(IME, "GetSegmentOffset", &[e, 1]), 3);
    assert_eq!(h.call(IME, "GetSegmentOffset", &[e, 2]), 9);
    assert_eq!(h.call(IME, "GetSegmentOffset", &[e, 3]), 0);
    assert_eq!(h.call(IME, "GetTargetSegment", &[e]), 1);
    h.call(IME, "GetSelection", &[e, 0x900, 0x904]);
    assert_eq!(read_i32s(&h, 0x900, 2), [3, 6]);
    // NULL out-pointers are skipped.
    h.call(IME, "GetSelection", &[e, 0, 0x904]);
    // Not an IME type: no event.
    let r = one(
        &mut h,
        IME,
        "Create",
        &[
            i(INSTANCE),
            i(9),
            t(0.0),
            i(0x700),
            i(0),
            i(0),
            i(0),
            i(0),
            i(0),
        ],
    );
    assert_eq!(r, 0);
}

#[test]
fn wrong_resources_and_kinds_get_chromes_answers() {
    let mut h = Harness::new();
    let m = mouse(&mut h, 1, 0, (4, 5), 1);
    for bad in [0, 0x999] {
        assert_eq!(h.call(IE, "IsInputEvent", &[bad]), 0);
        assert_eq!(h.call(IE, "GetType", &[bad]), -1);
        assert_eq!(h.call(IE, "GetModifiers", &[bad]), 0);
        assert_eq!(h.call(M1, "GetButton", &[bad]), -1);
        h.write(0x600, &[9; 8]);
        h.call(M1, "GetPosition", &[0x600, bad]);
        assert_eq!(read_i32s(&h, 0x600, 2), [0, 0]);
        h.call(K2, "GetCharacterText", &[0x800, bad]);
        assert_eq!(h.read_var(0x800), PpVar::Undefined);
        h.call(IME, "GetText", &[0x800, bad]);
        assert_eq!(h.read_var(0x800), PpVar::Undefined);
        assert_eq!(h.call(IME, "GetTargetSegment", &[bad]), -1);
        h.write(0x900, &[9; 8]);
        h.call(IME, "GetSelection", &[bad, 0x900, 0x904]);
        assert_eq!(read_i32s(&h, 0x900, 2), [0, 0]);
        assert_eq!(h.call(T0, "GetTouchCount", &[bad, 0]), 0);
        h.call(W, "GetDelta", &[0x600, bad]);
        assert_eq!(read_f32s(&h, 0x600, 2), [0.0, 0.0]);
        assert_eq!(h.call(W, "GetScrollByPage", &[bad]), 0);
        // AddTouchPoint on nothing is ignored.
        h.call(T0, "AddTouchPoint", &[bad, 0, 0x500]);
    }
    // An event of another kind: the Is* check says no; the getters read its defaults,
    // as Chrome's did (no key code, an empty string, no target segment).
    assert_eq!(h.call(K2, "IsKeyboardInputEvent", &[m]), 0);
    assert_eq!(h.call(W, "IsWheelInputEvent", &[m]), 0);
    assert_eq!(h.call(T0, "IsTouchInputEvent", &[m]), 0);
    assert_eq!(h.call(IME, "IsIMEInputEvent", &[m]), 0);
    assert_eq!(h.call(K2, "GetKeyCode", &[m]), 0);
    h.call(K2, "GetCharacterText", &[0x800, m]);
    assert_eq!(text_at(&h, 0x800).as_deref(), Some(""));
    assert_eq!(h.call(IME, "GetTargetSegment", &[m]), -1);
    // A view is a resource but no event.
    assert_eq!(h.call(M0, "IsMouseInputEvent", &[0x999]), 0);
}

#[test]
fn requests_are_kept_per_class_and_unknown_bits_refused() {
    let mut h = Harness::new();
    let st = h.state();
    assert_eq!(st.requested_input_classes(), 0);
    assert_eq!(
        h.call(IE, "RequestInputEvents", &[INSTANCE, 1]),
        pp_error::OK
    );
    assert_eq!(
        h.call(IE, "RequestFilteringInputEvents", &[INSTANCE, 2 | 4]),
        pp_error::OK
    );
    assert_eq!(st.requested_input_classes(), 7);
    // Unknown bits: PP_ERROR_NOTSUPPORTED, the known ones still taken.
    assert_eq!(
        h.call(IE, "RequestInputEvents", &[INSTANCE, 8 | 0x40]),
        pp_error::NOTSUPPORTED
    );
    assert_eq!(st.requested_input_classes() & 0x1f, 15);
    h.call(IE, "ClearInputEventRequest", &[INSTANCE, 1 | 2 | 0x40]);
    assert_eq!(st.requested_input_classes() & 0x1f, 12);
    assert_eq!(
        h.call(IE, "RequestInputEvents", &[INSTANCE + 1, 1]),
        pp_error::BADARGUMENT
    );
    assert_eq!(st.requested_input_classes() & 1, 0);
}

fn parse(text: &str) -> Result<Vec<events::ScheduledEvent>, String> {
    events::parse(Path::new("ev.jsonl"), text).map_err(|e| e.to_string())
}

#[test]
fn the_events_file_gives_each_type_its_fields_and_chromes_defaults() {
    let text = r##"
# a comment, then a blank line

{"at_ms": 0, "type": "mouseenter"}
{"at_ms": 100, "type": "mousedown", "x": 10, "y": 20, "modifiers": ["shift", "LeftButtonDown"]}
{"at_ms": 100, "type": "MouseUp", "x": 10, "y": 20, "button": "right", "clicks": 2}
{"at_ms": 150.5, "type": "mousemove", "x": -1, "y": 3, "movement_x": 4, "movement_y": -5, "modifiers": 9}
{"at_ms": 200, "type": "wheel", "dx": 0, "dy": -53.5, "ticks_x": 0, "ticks_y": -1, "by_page": true}
{"at_ms": 300, "type": "keydown", "key_code": 65, "code": "KeyA"}
{"at_ms": 300, "type": "char", "key_code": 65, "text": "a"}
{"at_ms": 400, "type": "touchstart", "touches": [{"id": 3, "x": 1.5, "y": 2, "pressure": 0.5}]}
{"at_ms": 500, "type": "ime_composition_update", "text": "かな", "segment_offsets": [0, 3, 6], "target_segment": 1, "selection_start": 3, "selection_end": 6}
{"at_ms": 600, "type": "contextmenu", "x": 1, "y": 1}
"##;
    let ev = parse(text).unwrap();
    assert_eq!(ev.len(), 10);
    let at: Vec<u128> = ev.iter().map(|e| e.at.as_micros()).collect();
    assert_eq!(
        at,
        [0, 100_000, 100_000, 150_500, 200_000, 300_000, 300_000, 400_000, 500_000, 600_000]
    );
    assert_eq!(ev[0].line, 4);
    let e = |k: usize| &ev[k].event;
    assert_eq!((e(0).kind, e(0).button, e(0).click_count), (3, -1, 0));
    assert_eq!((e(1).kind, e(1).button, e(1).click_count), (0, 0, 1));
    assert_eq!((e(1).position, e(1).modifiers), ((10, 20), 1 | 64));
    assert_eq!((e(2).kind, e(2).button, e(2).click_count), (1, 2, 2));
    assert_eq!((e(3).movement, e(3).modifiers), ((4, -5), 9));
    assert_eq!(
        (e(4).wheel_delta, e(4).wheel_ticks),
        ((0.0, -53.5), (0.0, -1.0))
    );
    assert!(e(4).scroll_by_page);
    assert_eq!(
        (
            e(5).kind,
            e(5).key_code,
            e(5).text.as_str(),
            e(5).code.as_str()
        ),
        (7, 65, "", "KeyA")
    );
    assert_eq!((e(6).kind, e(6).text.as_str()), (9, "a"));
    let touch = &e(7).touches;
    assert_eq!(touch[0].len(), 1);
    assert_eq!(
        (touch[0][0].id, touch[0][0].position, touch[0][0].pressure),
        (3, (1.5, 2.0), 0.5)
    );
    assert_eq!(touch[1], touch[0], "changed touches default to the touches");
    assert_eq!(
        (
            e(8).kind,
            e(8).segment_offsets.as_slice(),
            e(8).target_segment,
            e(8).selection
        ),
        (12, &[0, 3, 6][..], 1, (3, 6))
    );
    assert_eq!(e(9).kind, 10);
}

#[test]
fn a_bad_line_is_refused_with_its_line_and_what_is_wrong() {
    for (text, want) in [
        (
            "{\"at_ms\": 1, \"type\": \"mousedwn\"}",
            "line 1: \"type\": unknown event type \"mousedwn\" (one of mousedown,",
        ),
        (
            "\n\n{\"type\": \"mousedown\"}",
            "line 3: \"at_ms\" is missing",
        ),
        (
            "{\"at_ms\": -1, \"type\": \"mousedown\"}",
            "line 1: \"at_ms\": expected milliseconds",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"mousedown\", \"dx\": 1}",
            "line 1: unknown field \"dx\" for a mouse event",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"keydown\", \"x\": 1}",
            "line 1: unknown field \"x\" for a keyboard event",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"mousedown\", \"x\": 1.5}",
            "line 1: \"x\": expected an integer, got 1.5",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"mousedown\", \"button\": \"up\"}",
            "line 1: \"button\": unknown button \"up\"",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"mousedown\", \"modifiers\": [\"hyper\"]}",
            "line 1: \"modifiers\": unknown modifier \"hyper\"",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"keydown\", \"key_code\": -3}",
            "line 1: \"key_code\": -3 is outside 0..=",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"keydown\", \"text\": 3}",
            "line 1: \"text\": expected a string, got 3",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"wheel\", \"by_page\": 1}",
            "line 1: \"by_page\": expected true or false",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"touchstart\", \"touches\": [{\"x\": 1, \"z\": 2}]}",
            "line 1: \"touches\"[0]: unknown field \"z\"",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"ime_text\", \"segment_offsets\": [4]}",
            "line 1: \"segment_offsets\": expected a list of byte offsets",
        ),
        (
            "{\"at_ms\": 5, \"type\": \"mouseup\"}\n{\"at_ms\": 4, \"type\": \"mouseup\"}",
            "line 2: \"at_ms\" 4 is earlier than the previous event's 5",
        ),
        (
            "{\"at_ms\": 1, \"type\": \"mousedown\"",
            "line 1: not JSON: ",
        ),
        ("[1, 2]", "line 1: expected an object"),
    ] {
        let err = parse(text).unwrap_err();
        assert!(err.starts_with("ev.jsonl: "), "{err}");
        assert!(err.contains(want), "{text}\n  gave: {err}\n  want: {want}");
    }
}

#[test]
fn the_host_refuses_a_bad_events_file_before_the_app_starts() {
    let dir = Scratch::new("events");
    dir.put(
        "ev.jsonl",
        b"{\"at_ms\": 1, \"type\": \"mousedown\"}\n{\"at_ms\": 2}\n",
    );
    let mut config = PepperConfig::new(Vec::new(), Arc::new(CaptureSink::default()));
    config.events = Some(dir.join("ev.jsonl"));
    let wasi = pexe2wasm_runner::wasi_ctx(&RunOptions::default())
        .unwrap()
        .0;
    let err = Ctx::standalone_with_host(wasi, PepperHost::new(config), &RunOptions::default())
        .err()
        .expect("a bad events file must stop the run")
        .to_string();
    assert!(
        err.contains("ev.jsonl: line 2: \"type\" is missing"),
        "{err}"
    );
    // A missing file too.
    match events::load(&dir.join("nope.jsonl")) {
        Err(EventsError::Read { path, .. }) => assert!(path.ends_with("nope.jsonl")),
        other => panic!("{other:?}"),
    }
}
