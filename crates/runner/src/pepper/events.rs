//! `--events FILE`: input events replayed to the instance (docs/PEPPER-CLI.md, "Input
//! events").
//!
//! The file is JSON Lines: one event a line, an object such as
//! `{"at_ms": 100, "type": "mousedown", "x": 10, "y": 20, "button": "left"}`. Blank lines
//! and lines starting with `#` are skipped. The host reads the whole file before the app
//! starts; a line that is not a valid event is an error naming the file, the line and what
//! is wrong. After `DidChangeView` and `DidChangeFocus(true)`, each event is delivered at
//! its time (`at_ms` after that point) on the main thread, through
//! `PPP_InputEvent.HandleInputEvent`, if the app has requested its class
//! (`RequestInputEvents` or `RequestFilteringInputEvents`) by then; otherwise it is dropped,
//! as Chrome would, with a note the first time for each class. Events wait as pending work,
//! so the instance does not end before the last one is delivered.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value};

use super::resources::{InputEvent, Resource, TouchPoint};
use super::{lock, mem, post_counted, PepperState, INSTANCE};
use crate::call_export;
use crate::host::Ctx;
use crate::Process;

/// `PP_InputEvent_Class` bits.
pub mod class {
    pub const MOUSE: u32 = 1;
    pub const KEYBOARD: u32 = 2;
    pub const WHEEL: u32 = 4;
    pub const TOUCH: u32 = 8;
    pub const IME: u32 = 16;
    /// Every class a request may name (`ValidateRequestInputEvents`).
    pub const ALL: u32 = MOUSE | KEYBOARD | WHEEL | TOUCH | IME;
}

/// `PP_InputEvent_Type` names as the file spells them, with their values.
pub const TYPES: &[(&str, i32)] = &[
    ("mousedown", 0),
    ("mouseup", 1),
    ("mousemove", 2),
    ("mouseenter", 3),
    ("mouseleave", 4),
    ("wheel", 5),
    ("rawkeydown", 6),
    ("keydown", 7),
    ("keyup", 8),
    ("char", 9),
    ("contextmenu", 10),
    ("ime_composition_start", 11),
    ("ime_composition_update", 12),
    ("ime_composition_end", 13),
    ("ime_text", 14),
    ("touchstart", 15),
    ("touchmove", 16),
    ("touchend", 17),
    ("touchcancel", 18),
];

/// `PP_InputEvent_Modifier` names (the enum's, lower case, without the prefix), then the
/// short names the file also takes.
pub const MODIFIERS: &[(&str, u32)] = &[
    ("shiftkey", 1 << 0),
    ("controlkey", 1 << 1),
    ("altkey", 1 << 2),
    ("metakey", 1 << 3),
    ("iskeypad", 1 << 4),
    ("isautorepeat", 1 << 5),
    ("leftbuttondown", 1 << 6),
    ("middlebuttondown", 1 << 7),
    ("rightbuttondown", 1 << 8),
    ("capslockkey", 1 << 9),
    ("numlockkey", 1 << 10),
    ("isleft", 1 << 11),
    ("isright", 1 << 12),
    ("ispen", 1 << 13),
    ("iseraser", 1 << 14),
    ("shift", 1 << 0),
    ("control", 1 << 1),
    ("ctrl", 1 << 1),
    ("alt", 1 << 2),
    ("meta", 1 << 3),
    ("keypad", 1 << 4),
    ("autorepeat", 1 << 5),
    ("capslock", 1 << 9),
    ("numlock", 1 << 10),
];

/// The class an event type belongs to (what the app must request to get it).
pub fn class_of(kind: i32) -> u32 {
    match kind {
        0..=4 | 10 => class::MOUSE,
        5 => class::WHEEL,
        6..=9 => class::KEYBOARD,
        11..=14 => class::IME,
        15..=18 => class::TOUCH,
        _ => 0,
    }
}

fn class_name(c: u32) -> &'static str {
    match c {
        class::MOUSE => "mouse",
        class::KEYBOARD => "keyboard",
        class::WHEEL => "wheel",
        class::TOUCH => "touch",
        class::IME => "IME",
        _ => "unknown",
    }
}

/// Latest `at_ms` taken: about 11.6 days.
const MAX_AT_MS: f64 = 1e9;

/// One event of the file and when to deliver it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduledEvent {
    /// After `DidChangeFocus(true)`.
    pub at: Duration,
    /// Its line in the file (1-based).
    pub line: usize,
    /// The event; its time stamp is set when it is delivered.
    pub event: InputEvent,
}

/// Why an events file was refused.
#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    #[error("{}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{}: line {line}: {message}", path.display())]
    Line {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Reads and checks the events file at `path`.
pub fn load(path: &Path) -> Result<Vec<ScheduledEvent>, EventsError> {
    let text = std::fs::read_to_string(path).map_err(|source| EventsError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse(path, &text)
}

/// Checks the events in `text` (`path` names it in errors).
pub fn parse(path: &Path, text: &str) -> Result<Vec<ScheduledEvent>, EventsError> {
    let mut out: Vec<ScheduledEvent> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let err = |message: String| EventsError::Line {
            path: path.to_path_buf(),
            line: i + 1,
            message,
        };
        let ev = parse_line(t).map_err(err)?;
        if let Some(prev) = out.last() {
            if ev.0 < prev.at {
                return Err(err(format!(
                    "\"at_ms\" {} is earlier than the previous event's {}: events must be in time order",
                    ev.0.as_secs_f64() * 1e3,
                    prev.at.as_secs_f64() * 1e3
                )));
            }
        }
        out.push(ScheduledEvent {
            at: ev.0,
            line: i + 1,
            event: ev.1,
        });
    }
    Ok(out)
}

/// The fields each kind of event takes, besides `at_ms`, `type` and `modifiers`.
fn fields_of(class: u32) -> &'static [&'static str] {
    match class {
        class::MOUSE => &["x", "y", "button", "clicks", "movement_x", "movement_y"],
        class::WHEEL => &["dx", "dy", "ticks_x", "ticks_y", "by_page"],
        class::KEYBOARD => &["key_code", "text", "code"],
        class::IME => &[
            "text",
            "segment_offsets",
            "target_segment",
            "selection_start",
            "selection_end",
        ],
        class::TOUCH => &["touches", "changed_touches", "target_touches"],
        _ => &[],
    }
}

const TOUCH_FIELDS: &[&str] = &[
    "id", "x", "y", "radius_x", "radius_y", "angle", "pressure", "tilt_x", "tilt_y",
];

fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 40 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(40).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

fn get_i64(o: &Map<String, Value>, k: &str, min: i64, max: i64) -> Result<Option<i64>, String> {
    let Some(v) = o.get(k) else { return Ok(None) };
    match v.as_i64() {
        Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
        Some(n) => Err(format!("\"{k}\": {n} is outside {min}..={max}")),
        None => Err(format!("\"{k}\": expected an integer, got {}", describe(v))),
    }
}

fn get_i32(o: &Map<String, Value>, k: &str) -> Result<Option<i32>, String> {
    Ok(get_i64(o, k, i32::MIN as i64, i32::MAX as i64)?.map(|n| n as i32))
}

fn get_u32(o: &Map<String, Value>, k: &str) -> Result<Option<u32>, String> {
    Ok(get_i64(o, k, 0, u32::MAX as i64)?.map(|n| n as u32))
}

fn get_f32(o: &Map<String, Value>, k: &str) -> Result<Option<f32>, String> {
    let Some(v) = o.get(k) else { return Ok(None) };
    match v.as_f64() {
        Some(x) if x.is_finite() && x.abs() <= f32::MAX as f64 => Ok(Some(x as f32)),
        _ => Err(format!("\"{k}\": expected a number, got {}", describe(v))),
    }
}

fn get_str<'a>(o: &'a Map<String, Value>, k: &str) -> Result<Option<&'a str>, String> {
    let Some(v) = o.get(k) else { return Ok(None) };
    v.as_str()
        .map(Some)
        .ok_or_else(|| format!("\"{k}\": expected a string, got {}", describe(v)))
}

fn get_bool(o: &Map<String, Value>, k: &str) -> Result<Option<bool>, String> {
    let Some(v) = o.get(k) else { return Ok(None) };
    v.as_bool()
        .map(Some)
        .ok_or_else(|| format!("\"{k}\": expected true or false, got {}", describe(v)))
}

fn modifiers(v: &Value) -> Result<u32, String> {
    if let Some(n) = v.as_u64() {
        return u32::try_from(n)
            .ok()
            .filter(|n| n >> 15 == 0)
            .ok_or_else(|| format!("\"modifiers\": {n} has bits no modifier has (0..=32767)"));
    }
    let Some(list) = v.as_array() else {
        return Err(format!(
            "\"modifiers\": expected a list of names or a number, got {}",
            describe(v)
        ));
    };
    let mut bits = 0;
    for m in list {
        let name = m.as_str().map(str::to_ascii_lowercase);
        match name.and_then(|n| MODIFIERS.iter().find(|(k, _)| *k == n)) {
            Some((_, b)) => bits |= b,
            None => {
                let names: Vec<&str> = MODIFIERS.iter().map(|(k, _)| *k).collect();
                return Err(format!(
                    "\"modifiers\": unknown modifier {} (known: {})",
                    describe(m),
                    names.join(", ")
                ));
            }
        }
    }
    Ok(bits)
}

fn touch_list(o: &Map<String, Value>, k: &str) -> Result<Option<Vec<TouchPoint>>, String> {
    let Some(v) = o.get(k) else { return Ok(None) };
    let Some(list) = v.as_array() else {
        return Err(format!(
            "\"{k}\": expected a list of touch points, got {}",
            describe(v)
        ));
    };
    let mut out = Vec::new();
    for (i, p) in list.iter().enumerate() {
        let Some(p) = p.as_object() else {
            return Err(format!(
                "\"{k}\"[{i}]: expected an object, got {}",
                describe(p)
            ));
        };
        if let Some(f) = p.keys().find(|f| !TOUCH_FIELDS.contains(&f.as_str())) {
            return Err(format!(
                "\"{k}\"[{i}]: unknown field \"{f}\" (a touch point takes {})",
                TOUCH_FIELDS.join(", ")
            ));
        }
        let at = |e: String| format!("\"{k}\"[{i}]: {e}");
        let f = |n: &str| get_f32(p, n).map(|x| x.unwrap_or(0.0)).map_err(at);
        out.push(TouchPoint {
            id: get_u32(p, "id").map_err(at)?.unwrap_or(i as u32),
            position: (f("x")?, f("y")?),
            radius: (f("radius_x")?, f("radius_y")?),
            rotation_angle: f("angle")?,
            pressure: f("pressure")?,
            tilt: (f("tilt_x")?, f("tilt_y")?),
        });
    }
    Ok(Some(out))
}

/// One line: when, and the event.
fn parse_line(line: &str) -> Result<(Duration, InputEvent), String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let Some(o) = v.as_object() else {
        return Err(format!(
            "expected an object such as {{\"at_ms\": 0, \"type\": \"mousedown\", \"x\": 1, \"y\": 2}}, got {}",
            describe(&v)
        ));
    };
    let at_ms = match o.get("at_ms") {
        None => {
            return Err("\"at_ms\" is missing (when to deliver the event, in milliseconds)".into())
        }
        Some(a) => match a.as_f64() {
            Some(x) if (0.0..=MAX_AT_MS).contains(&x) => x,
            _ => {
                return Err(format!(
                    "\"at_ms\": expected milliseconds from 0 to {MAX_AT_MS}, got {}",
                    describe(a)
                ))
            }
        },
    };
    let type_names = || TYPES.iter().map(|(n, _)| *n).collect::<Vec<_>>().join(", ");
    let kind = match o.get("type") {
        None => return Err(format!("\"type\" is missing (one of {})", type_names())),
        Some(t) => {
            let name = t.as_str().map(str::to_ascii_lowercase);
            match name.and_then(|n| TYPES.iter().find(|(k, _)| *k == n)) {
                Some((_, k)) => *k,
                None => {
                    return Err(format!(
                        "\"type\": unknown event type {} (one of {})",
                        describe(t),
                        type_names()
                    ))
                }
            }
        }
    };
    let class = class_of(kind);
    let allowed = fields_of(class);
    if let Some(f) = o.keys().find(|f| {
        !["at_ms", "type", "modifiers"].contains(&f.as_str()) && !allowed.contains(&f.as_str())
    }) {
        return Err(format!(
            "unknown field \"{f}\" for a {} event (it takes at_ms, type, modifiers, {})",
            class_name(class),
            allowed.join(", ")
        ));
    }
    let mut e = InputEvent::new(kind, 0.0);
    if let Some(m) = o.get("modifiers") {
        e.modifiers = modifiers(m)?;
    }
    match class {
        class::MOUSE => {
            let press = kind == 0 || kind == 1;
            e.position = (get_i32(o, "x")?.unwrap_or(0), get_i32(o, "y")?.unwrap_or(0));
            e.button = match get_str(o, "button")? {
                None if press => 0,
                None => -1,
                Some(b) => match b.to_ascii_lowercase().as_str() {
                    "none" => -1,
                    "left" => 0,
                    "middle" => 1,
                    "right" => 2,
                    _ => {
                        return Err(format!(
                            "\"button\": unknown button \"{b}\" (none, left, middle or right)"
                        ))
                    }
                },
            };
            e.click_count = get_i32(o, "clicks")?.unwrap_or(press as i32);
            e.movement = (
                get_i32(o, "movement_x")?.unwrap_or(0),
                get_i32(o, "movement_y")?.unwrap_or(0),
            );
        }
        class::WHEEL => {
            e.wheel_delta = (
                get_f32(o, "dx")?.unwrap_or(0.0),
                get_f32(o, "dy")?.unwrap_or(0.0),
            );
            e.wheel_ticks = (
                get_f32(o, "ticks_x")?.unwrap_or(0.0),
                get_f32(o, "ticks_y")?.unwrap_or(0.0),
            );
            e.scroll_by_page = get_bool(o, "by_page")?.unwrap_or(false);
        }
        class::KEYBOARD => {
            e.key_code = get_u32(o, "key_code")?.unwrap_or(0);
            e.text = get_str(o, "text")?.unwrap_or("").to_string();
            e.code = get_str(o, "code")?.unwrap_or("").to_string();
        }
        class::IME => {
            e.text = get_str(o, "text")?.unwrap_or("").to_string();
            if let Some(v) = o.get("segment_offsets") {
                let list = v.as_array().filter(|l| l.len() != 1).ok_or_else(|| {
                    format!(
                        "\"segment_offsets\": expected a list of byte offsets, none or at least 2 (segments + 1), got {}",
                        describe(v)
                    )
                })?;
                for (i, x) in list.iter().enumerate() {
                    match x.as_u64().and_then(|n| u32::try_from(n).ok()) {
                        Some(n) => e.segment_offsets.push(n),
                        None => {
                            return Err(format!(
                                "\"segment_offsets\"[{i}]: expected a byte offset, got {}",
                                describe(x)
                            ))
                        }
                    }
                }
            }
            e.target_segment = get_i32(o, "target_segment")?.unwrap_or(-1);
            e.selection = (
                get_u32(o, "selection_start")?.unwrap_or(0),
                get_u32(o, "selection_end")?.unwrap_or(0),
            );
        }
        class::TOUCH => {
            let touches = touch_list(o, "touches")?.unwrap_or_default();
            let changed = touch_list(o, "changed_touches")?.unwrap_or_else(|| touches.clone());
            let target = touch_list(o, "target_touches")?.unwrap_or_else(|| touches.clone());
            e.touches = [touches, changed, target];
        }
        _ => {}
    }
    Ok((Duration::from_secs_f64(at_ms / 1e3), e))
}

/// The input side of a run: what the app requested, and the events still to replay.
#[derive(Debug, Default)]
pub struct InputState {
    /// Classes requested with `RequestInputEvents` and with `RequestFilteringInputEvents`.
    pub(crate) requested: Mutex<(u32, u32)>,
    events: Mutex<Vec<ScheduledEvent>>,
    /// Classes already noted as dropped, and whether a missing `PPP_InputEvent` was.
    noted: Mutex<(u32, bool)>,
}

impl InputState {
    /// The state for a run with `events` (the `--events` file, read and checked now).
    pub(crate) fn load(events: Option<&Path>) -> Result<InputState, EventsError> {
        let events = match events {
            Some(p) => load(p)?,
            None => Vec::new(),
        };
        Ok(InputState {
            events: Mutex::new(events),
            ..Default::default()
        })
    }

    /// The classes the app has requested (either way).
    pub fn requested(&self) -> u32 {
        let (a, b) = *lock(&self.requested);
        a | b
    }
}

/// Schedules every event of `--events` (from now), each counted as pending work until it
/// has been delivered or dropped.
pub(crate) fn start_replay(s: &Arc<PepperState>, process: &Arc<Process>) {
    let events = std::mem::take(&mut *lock(&s.input.events));
    for ev in events {
        s.activity.add(&s.activity.pending, 1);
        let s2 = s.clone();
        let p = Arc::downgrade(process);
        s.timers.after(ev.at, move || {
            if let Some(p) = p.upgrade() {
                let s3 = s2.clone();
                post_counted(&s2, &p, 0, move |cx| deliver(cx, &s3, ev.event));
            }
            s2.activity.add(&s2.activity.pending, -1);
        });
    }
}

/// Delivers `event` (on the main thread) if the app asked for its class: a resource with
/// one reference, held during `HandleInputEvent` and released after it.
fn deliver(
    mut cx: wasmtime::StoreContextMut<'_, Ctx>,
    s: &Arc<PepperState>,
    mut event: InputEvent,
) -> wasmtime::Result<()> {
    let class = class_of(event.kind);
    if s.input.requested() & class == 0 {
        let mut noted = lock(&s.input.noted);
        if noted.0 & class == 0 {
            noted.0 |= class;
            s.sink().note(&format!(
                "--events: {} events are dropped until the app requests them (RequestInputEvents), as in Chrome",
                class_name(class)
            ));
        }
        return Ok(());
    }
    let handler = lock(&s.ppp).input_event;
    if handler == 0 {
        let mut noted = lock(&s.input.noted);
        if !noted.1 {
            noted.1 = true;
            s.sink()
                .note("--events: the app has no PPP_InputEvent;0.1, so no input event reaches it");
        }
        return Ok(());
    }
    event.time = s.started.elapsed().as_secs_f64();
    let res = lock(&s.resources).add(Resource::InputEvent(Box::new(event)));
    let handle = mem::read_u32(&mut cx, handler)? as i32;
    let r =
        call_export::<(i32, i32, i32), i32>(&mut cx, "__ppp_call_ii_i", (handle, INSTANCE, res));
    lock(&s.resources).release(res);
    r.map(|_handled| ())
}

impl PepperState {
    /// The input event classes the app has requested, filtering or not (`PP_InputEvent_Class`
    /// bits).
    pub fn requested_input_classes(&self) -> u32 {
        self.input.requested()
    }
}
