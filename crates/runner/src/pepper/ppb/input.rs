//! `PPB_InputEvent;1.0`: the app's requests for event classes (kept) and the event
//! resources replayed to it.

use wasmtime::{Caller, Linker};

use super::super::{lock, pp_error, state, INSTANCE};
use crate::host::Ctx;

const IE: &str = "PPB_InputEvent;1.0";

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for name in ["RequestInputEvents", "RequestFilteringInputEvents"] {
        linker.func_wrap(
            IE,
            name,
            |_caller: Caller<'_, Ctx>, instance: i32, _classes: i32| -> i32 {
                if instance == INSTANCE {
                    pp_error::OK
                } else {
                    pp_error::BADARGUMENT
                }
            },
        )?;
    }
    linker.func_wrap(
        IE,
        "ClearInputEventRequest",
        |_caller: Caller<'_, Ctx>, _instance: i32, _classes: i32| {},
    )?;
    linker.func_wrap(
        IE,
        "IsInputEvent",
        |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let is = lock(&s.resources).input_event(res).is_some();
            Ok(is as i32)
        },
    )?;
    linker.func_wrap(
        IE,
        "GetType",
        |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<i32> {
            // PP_INPUTEVENT_TYPE_UNDEFINED for anything but an event.
            let s = state(&caller)?;
            let kind = lock(&s.resources).input_event(res).map_or(-1, |e| e.kind);
            Ok(kind)
        },
    )?;
    linker.func_wrap(
        IE,
        "GetTimeStamp",
        |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<f64> {
            let s = state(&caller)?;
            let t = lock(&s.resources).input_event(res).map_or(0.0, |e| e.time);
            Ok(t)
        },
    )?;
    linker.func_wrap(
        IE,
        "GetModifiers",
        |caller: Caller<'_, Ctx>, res: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let m = lock(&s.resources)
                .input_event(res)
                .map_or(0, |e| e.modifiers);
            Ok(m as i32)
        },
    )?;
    Ok(())
}
