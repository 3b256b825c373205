//! `PPB_Core;1.0`: resource references, time, `CallOnMainThread`, `IsMainThread`.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use wasmtime::{Caller, Linker};

use super::super::{complete_later, lock, mem, process, state};
use super::link_query;
use crate::host::Ctx;

const CORE: &str = "PPB_Core;1.0";

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_query(linker, CORE, "AddRefResource", |s, res| {
        lock(&s.resources).add_ref(res);
    })?;
    link_query(linker, CORE, "ReleaseResource", |s, res| {
        lock(&s.resources).release(res);
    })?;
    linker.func_wrap(CORE, "GetTime", |_caller: Caller<'_, Ctx>| -> f64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64())
    })?;
    linker.func_wrap(
        CORE,
        "GetTimeTicks",
        |caller: Caller<'_, Ctx>| -> wasmtime::Result<f64> {
            Ok(state(&caller)?.started.elapsed().as_secs_f64())
        },
    )?;
    linker.func_wrap(
        CORE,
        "CallOnMainThread",
        |mut caller: Caller<'_, Ctx>,
         delay_ms: i32,
         cb: i32,
         result: i32|
         -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let p = process(&caller)?;
            let cb = mem::read_callback(&mut caller, cb as u32)?;
            // A callback without a function is the app's mistake; Chrome ignored it.
            if cb.func != 0 {
                let delay = Duration::from_millis(delay_ms.max(0) as u64);
                complete_later(&s, &p, 0, cb, result, delay);
            }
            Ok(())
        },
    )?;
    linker.func_wrap(CORE, "IsMainThread", |caller: Caller<'_, Ctx>| -> i32 {
        (caller.data().thread().tid == 0) as i32
    })?;
    Ok(())
}
