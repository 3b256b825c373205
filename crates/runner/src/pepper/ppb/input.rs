//! `PPB_InputEvent;1.0` (the app's requests for event classes, kept for the `--events`
//! replay: `super::super::events`) and the event kinds: `PPB_MouseInputEvent;1.0/1.1`,
//! `PPB_WheelInputEvent;1.0`, `PPB_KeyboardInputEvent;1.0/1.2`,
//! `PPB_TouchInputEvent;1.0/1.4`, `PPB_IMEInputEvent;1.0`.
//!
//! As in Chrome, `Create` refuses (0) a type of another kind and an instance that is not
//! ours; `Is*InputEvent` checks the type; the getters read the event's fields whatever its
//! kind (an event of another kind has the defaults: 0, no button, target segment -1, empty
//! strings), and give 0, false, (0, 0) or an undefined var for a resource that is no event.

use wasmtime::{Caller, Linker};

use super::super::events::class;
use super::super::resources::{InputEvent, Resource, Resources, TouchPoint};
use super::super::var::PpVar;
use super::super::{lock, mem, pp_error, state, INSTANCE};
use super::{link_query, read_resource};
use crate::host::Ctx;

const IE: &str = "PPB_InputEvent;1.0";
const MOUSE: [&str; 2] = ["PPB_MouseInputEvent;1.0", "PPB_MouseInputEvent;1.1"];
const WHEEL: &str = "PPB_WheelInputEvent;1.0";
const KEYBOARD: [&str; 2] = ["PPB_KeyboardInputEvent;1.0", "PPB_KeyboardInputEvent;1.2"];
const TOUCH: [&str; 2] = ["PPB_TouchInputEvent;1.0", "PPB_TouchInputEvent;1.4"];
const IME: &str = "PPB_IMEInputEvent;1.0";

/// Most IME segments `Create` takes (Chrome read whatever the count said).
const MAX_SEGMENTS: u32 = 1 << 16;

/// Links getter `name(resource) -> int32` of `iface`: what `get` reads from the event,
/// `default` for a resource that is no event.
fn link_int(
    linker: &mut Linker<Ctx>,
    iface: &'static str,
    name: &'static str,
    default: i32,
    get: fn(&InputEvent) -> i32,
) -> wasmtime::Result<()> {
    link_query(linker, iface, name, move |s, res| {
        lock(&s.resources).input_event(res).map_or(default, get)
    })
}

/// Links `name(resource) -> PP_Bool` of `iface`: whether the resource is an event of one
/// of `kinds`.
fn link_is_kind(
    linker: &mut Linker<Ctx>,
    iface: &'static str,
    name: &'static str,
    kinds: &'static [i32],
) -> wasmtime::Result<()> {
    link_query(linker, iface, name, move |s, res| {
        let r = lock(&s.resources);
        r.input_event(res).is_some_and(|e| kinds.contains(&e.kind)) as i32
    })
}

/// Links getter `name(ret, resource)` of `iface`: `write` writes at `ret` what `get` reads
/// from the event (`None` for a resource that is no event).
fn link_out<T: 'static>(
    linker: &mut Linker<Ctx>,
    iface: &'static str,
    name: &'static str,
    get: fn(&InputEvent) -> T,
    write: fn(&mut Caller<'_, Ctx>, i32, Option<T>) -> wasmtime::Result<()>,
) -> wasmtime::Result<()> {
    linker.func_wrap(
        iface,
        name,
        move |mut caller: Caller<'_, Ctx>, ret: i32, res: i32| -> wasmtime::Result<()> {
            let v = read_resource(&caller, res, Resources::input_event, get)?;
            write(&mut caller, ret, v)
        },
    )?;
    Ok(())
}

fn add_event(caller: &Caller<'_, Ctx>, e: InputEvent) -> wasmtime::Result<i32> {
    let s = state(caller)?;
    let id = lock(&s.resources).add(Resource::InputEvent(Box::new(e)));
    Ok(id)
}

/// The text of a string var, `Some("")` for any other var, `None` for a string var that
/// does not exist (Chrome's Create failed on that).
fn var_text(caller: &mut Caller<'_, Ctx>, ptr: i32) -> wasmtime::Result<Option<String>> {
    let v = mem::read_var(&mut *caller, ptr as u32)?;
    if !matches!(v, PpVar::String(_)) {
        return Ok(Some(String::new()));
    }
    let s = state(caller)?;
    let text = s.vars().string(v).map(str::to_string);
    Ok(text)
}

/// Writes a new string var for `text` at `ret` (undefined for `None`).
fn write_text(
    caller: &mut Caller<'_, Ctx>,
    ret: i32,
    text: Option<String>,
) -> wasmtime::Result<()> {
    let s = state(caller)?;
    let v = match text {
        Some(t) => s.vars().string_from_utf8(t.as_bytes()),
        None => PpVar::Undefined,
    };
    mem::write_var(&mut *caller, ret as u32, v)
}

/// Writes the `PP_Point` `p` at `ret` ((0, 0) for `None`).
fn write_point(
    caller: &mut Caller<'_, Ctx>,
    ret: i32,
    p: Option<(i32, i32)>,
) -> wasmtime::Result<()> {
    let p = p.unwrap_or((0, 0));
    mem::write_i32s(&mut *caller, ret as u32, &[p.0, p.1])
}

/// Writes the `PP_FloatPoint` `p` at `ret` ((0, 0) for `None`).
fn write_float_point_or_zero(
    caller: &mut Caller<'_, Ctx>,
    ret: i32,
    p: Option<(f32, f32)>,
) -> wasmtime::Result<()> {
    write_float_point(caller, ret, p.unwrap_or((0.0, 0.0)))
}

fn write_float_point(
    caller: &mut Caller<'_, Ctx>,
    ret: i32,
    p: (f32, f32),
) -> wasmtime::Result<()> {
    let mut b = p.0.to_le_bytes().to_vec();
    b.extend_from_slice(&p.1.to_le_bytes());
    crate::write_memory(&mut *caller, ret as u32, &b)
}

fn read_float_point(caller: &mut Caller<'_, Ctx>, ptr: i32) -> wasmtime::Result<(f32, f32)> {
    let [x, y] = mem::read_i32s::<2>(&mut *caller, ptr as u32)?;
    Ok((f32::from_bits(x as u32), f32::from_bits(y as u32)))
}

/// The `PP_TouchPoint` layout: id, position (x, y), radius (x, y), rotation angle, pressure.
fn touch_point_bytes(p: &TouchPoint) -> Vec<u8> {
    let mut b = p.id.to_le_bytes().to_vec();
    for f in [
        p.position.0,
        p.position.1,
        p.radius.0,
        p.radius.1,
        p.rotation_angle,
        p.pressure,
    ] {
        b.extend_from_slice(&f.to_le_bytes());
    }
    b
}

/// The touch point of `list` with id `key` (`by_id`) or at index `key`.
fn find_touch(
    caller: &Caller<'_, Ctx>,
    res: i32,
    list: i32,
    by_id: bool,
    key: i32,
) -> wasmtime::Result<Option<TouchPoint>> {
    Ok(read_resource(caller, res, Resources::input_event, |e| {
        let t = usize::try_from(list).ok().and_then(|l| e.touches.get(l))?;
        if by_id {
            t.iter().find(|p| p.id == key as u32).copied()
        } else {
            t.get(key as u32 as usize).copied()
        }
    })?
    .flatten())
}

fn link_input_event(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for (name, filtering) in [
        ("RequestInputEvents", false),
        ("RequestFilteringInputEvents", true),
    ] {
        linker.func_wrap(
            IE,
            name,
            move |caller: Caller<'_, Ctx>, instance: i32, classes: i32| -> wasmtime::Result<i32> {
                if instance != INSTANCE {
                    return Ok(pp_error::BADARGUMENT);
                }
                let s = state(&caller)?;
                let classes = classes as u32;
                let mut r = lock(&s.input.requested);
                // A class goes to the list it is requested for, leaving the other one.
                if filtering {
                    r.1 |= classes;
                    r.0 &= !classes;
                } else {
                    r.0 |= classes;
                    r.1 &= !classes;
                }
                // Bits of no class are refused, the others kept (ValidateRequestInputEvents).
                Ok(if classes & !class::ALL != 0 {
                    pp_error::NOTSUPPORTED
                } else {
                    pp_error::OK
                })
            },
        )?;
    }
    linker.func_wrap(
        IE,
        "ClearInputEventRequest",
        |caller: Caller<'_, Ctx>, instance: i32, classes: i32| -> wasmtime::Result<()> {
            if instance == INSTANCE {
                let s = state(&caller)?;
                let mut r = lock(&s.input.requested);
                r.0 &= !(classes as u32);
                r.1 &= !(classes as u32);
            }
            Ok(())
        },
    )?;
    link_int(linker, IE, "IsInputEvent", 0, |_| 1)?;
    // PP_INPUTEVENT_TYPE_UNDEFINED for anything but an event.
    link_int(linker, IE, "GetType", -1, |e| e.kind)?;
    link_query(linker, IE, "GetTimeStamp", |s, res| {
        lock(&s.resources).input_event(res).map_or(0.0, |e| e.time)
    })?;
    link_int(linker, IE, "GetModifiers", 0, |e| e.modifiers as i32)?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn create_mouse(
    mut caller: Caller<'_, Ctx>,
    instance: i32,
    kind: i32,
    time: f64,
    modifiers: i32,
    button: i32,
    position: i32,
    clicks: i32,
    movement: Option<i32>,
) -> wasmtime::Result<i32> {
    // CONTEXTMENU is a mouse event but Chrome's Create refused it.
    if instance != INSTANCE || !(0..=4).contains(&kind) {
        return Ok(0);
    }
    let [x, y] = mem::read_i32s::<2>(&mut caller, position as u32)?;
    let movement = match movement {
        Some(p) => {
            let [mx, my] = mem::read_i32s::<2>(&mut caller, p as u32)?;
            (mx, my)
        }
        None => (0, 0),
    };
    let mut e = InputEvent::new(kind, time);
    e.modifiers = modifiers as u32;
    e.button = button;
    e.position = (x, y);
    e.click_count = clicks;
    e.movement = movement;
    add_event(&caller, e)
}

fn link_mouse(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        MOUSE[0],
        "Create",
        |caller: Caller<'_, Ctx>,
         instance: i32,
         kind: i32,
         time: f64,
         modifiers: i32,
         button: i32,
         position: i32,
         clicks: i32|
         -> wasmtime::Result<i32> {
            create_mouse(
                caller, instance, kind, time, modifiers, button, position, clicks, None,
            )
        },
    )?;
    linker.func_wrap(
        MOUSE[1],
        "Create",
        |caller: Caller<'_, Ctx>,
         instance: i32,
         kind: i32,
         time: f64,
         modifiers: i32,
         button: i32,
         position: i32,
         clicks: i32,
         movement: i32|
         -> wasmtime::Result<i32> {
            create_mouse(
                caller,
                instance,
                kind,
                time,
                modifiers,
                button,
                position,
                clicks,
                Some(movement),
            )
        },
    )?;
    for (k, iface) in MOUSE.into_iter().enumerate() {
        link_is_kind(linker, iface, "IsMouseInputEvent", &[0, 1, 2, 3, 4, 10])?;
        link_int(linker, iface, "GetButton", -1, |e| e.button)?;
        link_out(linker, iface, "GetPosition", |e| e.position, write_point)?;
        link_int(linker, iface, "GetClickCount", 0, |e| e.click_count)?;
        if k == 1 {
            link_out(linker, iface, "GetMovement", |e| e.movement, write_point)?;
        }
    }
    Ok(())
}

fn link_wheel(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        WHEEL,
        "Create",
        |mut caller: Caller<'_, Ctx>,
         instance: i32,
         time: f64,
         modifiers: i32,
         delta: i32,
         ticks: i32,
         by_page: i32|
         -> wasmtime::Result<i32> {
            if instance != INSTANCE {
                return Ok(0);
            }
            let mut e = InputEvent::new(5, time);
            e.modifiers = modifiers as u32;
            e.wheel_delta = read_float_point(&mut caller, delta)?;
            e.wheel_ticks = read_float_point(&mut caller, ticks)?;
            e.scroll_by_page = by_page != 0;
            add_event(&caller, e)
        },
    )?;
    link_is_kind(linker, WHEEL, "IsWheelInputEvent", &[5])?;
    link_out(
        linker,
        WHEEL,
        "GetDelta",
        |e| e.wheel_delta,
        write_float_point_or_zero,
    )?;
    link_out(
        linker,
        WHEEL,
        "GetTicks",
        |e| e.wheel_ticks,
        write_float_point_or_zero,
    )?;
    link_int(linker, WHEEL, "GetScrollByPage", 0, |e| {
        e.scroll_by_page as i32
    })?;
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn create_keyboard(
    mut caller: Caller<'_, Ctx>,
    instance: i32,
    kind: i32,
    time: f64,
    modifiers: i32,
    key_code: i32,
    text: i32,
    code: Option<i32>,
) -> wasmtime::Result<i32> {
    if instance != INSTANCE || !(6..=9).contains(&kind) {
        return Ok(0);
    }
    let Some(text) = var_text(&mut caller, text)? else {
        return Ok(0);
    };
    let code = match code {
        Some(c) => match var_text(&mut caller, c)? {
            Some(c) => c,
            None => return Ok(0),
        },
        None => String::new(),
    };
    let mut e = InputEvent::new(kind, time);
    e.modifiers = modifiers as u32;
    e.key_code = key_code as u32;
    e.text = text;
    e.code = code;
    add_event(&caller, e)
}

fn link_keyboard(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        KEYBOARD[0],
        "Create",
        |caller: Caller<'_, Ctx>,
         instance: i32,
         kind: i32,
         time: f64,
         modifiers: i32,
         key_code: i32,
         text: i32|
         -> wasmtime::Result<i32> {
            create_keyboard(
                caller, instance, kind, time, modifiers, key_code, text, None,
            )
        },
    )?;
    linker.func_wrap(
        KEYBOARD[1],
        "Create",
        |caller: Caller<'_, Ctx>,
         instance: i32,
         kind: i32,
         time: f64,
         modifiers: i32,
         key_code: i32,
         text: i32,
         code: i32|
         -> wasmtime::Result<i32> {
            create_keyboard(
                caller,
                instance,
                kind,
                time,
                modifiers,
                key_code,
                text,
                Some(code),
            )
        },
    )?;
    for (k, iface) in KEYBOARD.into_iter().enumerate() {
        link_is_kind(linker, iface, "IsKeyboardInputEvent", &[6, 7, 8, 9])?;
        link_int(linker, iface, "GetKeyCode", 0, |e| e.key_code as i32)?;
        link_out(
            linker,
            iface,
            "GetCharacterText",
            |e| e.text.clone(),
            write_text,
        )?;
        if k == 1 {
            link_out(linker, iface, "GetCode", |e| e.code.clone(), write_text)?;
        }
    }
    Ok(())
}

fn link_touch(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for (k, iface) in TOUCH.into_iter().enumerate() {
        linker.func_wrap(
            iface,
            "Create",
            |caller: Caller<'_, Ctx>,
             instance: i32,
             kind: i32,
             time: f64,
             modifiers: i32|
             -> wasmtime::Result<i32> {
                if instance != INSTANCE || !(15..=18).contains(&kind) {
                    return Ok(0);
                }
                let mut e = InputEvent::new(kind, time);
                e.modifiers = modifiers as u32;
                add_event(&caller, e)
            },
        )?;
        linker.func_wrap(
            iface,
            "AddTouchPoint",
            |mut caller: Caller<'_, Ctx>,
             res: i32,
             list: i32,
             point: i32|
             -> wasmtime::Result<()> {
                let s = state(&caller)?;
                if lock(&s.resources).input_event(res).is_none() {
                    return Ok(());
                }
                let w = mem::read_i32s::<7>(&mut caller, point as u32)?;
                let f = |i: usize| f32::from_bits(w[i] as u32);
                let p = TouchPoint {
                    id: w[0] as u32,
                    position: (f(1), f(2)),
                    radius: (f(3), f(4)),
                    rotation_angle: f(5),
                    pressure: f(6),
                    tilt: (0.0, 0.0),
                };
                if let Some(Resource::InputEvent(e)) = lock(&s.resources).get_mut(res) {
                    // An unknown list is ignored, as in Chrome.
                    if let Some(l) = usize::try_from(list)
                        .ok()
                        .and_then(|l| e.touches.get_mut(l))
                    {
                        l.push(p);
                    }
                }
                Ok(())
            },
        )?;
        link_is_kind(linker, iface, "IsTouchInputEvent", &[15, 16, 17, 18])?;
        linker.func_wrap(
            iface,
            "GetTouchCount",
            |caller: Caller<'_, Ctx>, res: i32, list: i32| -> wasmtime::Result<i32> {
                let n = read_resource(&caller, res, Resources::input_event, |e| {
                    usize::try_from(list)
                        .ok()
                        .and_then(|l| e.touches.get(l))
                        .map_or(0, |t| t.len())
                })?;
                Ok(n.unwrap_or(0) as i32)
            },
        )?;
        // The point (by index or id) and, in 1.4, its tilt.
        let getters = [
            ("GetTouchByIndex", false, false),
            ("GetTouchById", true, false),
            ("GetTouchTiltByIndex", false, true),
            ("GetTouchTiltById", true, true),
        ];
        for (name, by_id, tilt) in getters {
            if tilt && k != 1 {
                continue;
            }
            linker.func_wrap(
                iface,
                name,
                move |mut caller: Caller<'_, Ctx>,
                      ret: i32,
                      res: i32,
                      list: i32,
                      key: i32|
                      -> wasmtime::Result<()> {
                    let p = find_touch(&caller, res, list, by_id, key)?.unwrap_or_default();
                    if tilt {
                        write_float_point(&mut caller, ret, p.tilt)
                    } else {
                        crate::write_memory(&mut caller, ret as u32, &touch_point_bytes(&p))
                    }
                },
            )?;
        }
    }
    Ok(())
}

fn link_ime(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        IME,
        "Create",
        |mut caller: Caller<'_, Ctx>,
         instance: i32,
         kind: i32,
         time: f64,
         text: i32,
         segments: i32,
         offsets: i32,
         target: i32,
         sel_start: i32,
         sel_end: i32|
         -> wasmtime::Result<i32> {
            if instance != INSTANCE || !(11..=14).contains(&kind) {
                return Ok(0);
            }
            let Some(text) = var_text(&mut caller, text)? else {
                return Ok(0);
            };
            let segments = segments as u32;
            if segments > MAX_SEGMENTS {
                return Ok(0);
            }
            let mut e = InputEvent::new(kind, time);
            if segments != 0 {
                let n = segments + 1;
                let b = crate::read_memory(&mut caller, offsets as u32, n * 4)?;
                e.segment_offsets = b
                    .chunks_exact(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
            }
            e.text = text;
            e.target_segment = target;
            e.selection = (sel_start as u32, sel_end as u32);
            add_event(&caller, e)
        },
    )?;
    link_is_kind(linker, IME, "IsIMEInputEvent", &[11, 12, 13, 14])?;
    link_out(linker, IME, "GetText", |e| e.text.clone(), write_text)?;
    link_int(linker, IME, "GetSegmentNumber", 0, |e| {
        e.segment_offsets.len().saturating_sub(1) as i32
    })?;
    linker.func_wrap(
        IME,
        "GetSegmentOffset",
        |caller: Caller<'_, Ctx>, res: i32, index: i32| -> wasmtime::Result<i32> {
            let o = read_resource(&caller, res, Resources::input_event, |e| {
                e.segment_offsets
                    .get(index as u32 as usize)
                    .copied()
                    .unwrap_or(0)
            })?;
            Ok(o.unwrap_or(0) as i32)
        },
    )?;
    link_int(linker, IME, "GetTargetSegment", -1, |e| e.target_segment)?;
    linker.func_wrap(
        IME,
        "GetSelection",
        |mut caller: Caller<'_, Ctx>, res: i32, start: i32, end: i32| -> wasmtime::Result<()> {
            let (a, b) = read_resource(&caller, res, Resources::input_event, |e| e.selection)?
                .unwrap_or((0, 0));
            // NULL pointers are skipped, as in Chrome.
            if start != 0 {
                mem::write_u32(&mut caller, start as u32, a)?;
            }
            if end != 0 {
                mem::write_u32(&mut caller, end as u32, b)?;
            }
            Ok(())
        },
    )?;
    Ok(())
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_input_event(linker)?;
    link_mouse(linker)?;
    link_wheel(linker)?;
    link_keyboard(linker)?;
    link_touch(linker)?;
    link_ime(linker)?;
    Ok(())
}
