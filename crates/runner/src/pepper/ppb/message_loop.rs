//! `PPB_MessageLoop;1.0`: message loops of module threads. A loop attached to a thread is
//! that thread's mailbox (`crate::Mailbox`); `Run` serves it from inside the import, as
//! Chrome's did, until `PostQuit`. The main thread's loop is the host's own (`start`).

use std::time::Duration;

use wasmtime::{Caller, Linker};

use super::super::resources::{MessageLoop, Resource};
use super::super::{complete_later, lock, mem, pp_error, process, state, state_for, PepperState};
use crate::host::Ctx;

const ML: &str = "PPB_MessageLoop;1.0";

/// The loop attached to thread `tid`, if any.
fn loop_of(res: &super::super::resources::Resources, ids: &[i32], tid: i32) -> Option<i32> {
    ids.iter()
        .copied()
        .find(|&id| matches!(res.get(id), Some(Resource::MessageLoop(l)) if l.tid == Some(tid)))
}

/// The main thread's message loop, with a reference for the caller (as with every
/// resource a PPB function returns).
fn main_loop_ref(s: &PepperState) -> i32 {
    let id = *lock(&s.main_loop);
    lock(&s.resources).add_ref(id);
    id
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        ML,
        "Create",
        |caller: Caller<'_, Ctx>, instance: i32| -> wasmtime::Result<i32> {
            let Some(s) = state_for(&caller, instance)? else {
                return Ok(0);
            };
            let id = lock(&s.resources).add(Resource::MessageLoop(MessageLoop::default()));
            lock(&s.loops).push(id);
            Ok(id)
        },
    )?;
    linker.func_wrap(
        ML,
        "GetForMainThread",
        |caller: Caller<'_, Ctx>| -> wasmtime::Result<i32> { Ok(main_loop_ref(&*state(&caller)?)) },
    )?;
    linker.func_wrap(
        ML,
        "GetCurrent",
        |caller: Caller<'_, Ctx>| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let tid = caller.data().thread().tid;
            if tid == 0 {
                return Ok(main_loop_ref(&s));
            }
            let ids = lock(&s.loops).clone();
            let mut r = lock(&s.resources);
            match loop_of(&r, &ids, tid) {
                Some(id) => {
                    r.add_ref(id);
                    Ok(id)
                }
                None => Ok(0),
            }
        },
    )?;
    linker.func_wrap(
        ML,
        "AttachToCurrentThread",
        |caller: Caller<'_, Ctx>, id: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let tid = caller.data().thread().tid;
            let ids = lock(&s.loops).clone();
            let queued = {
                let mut r = lock(&s.resources);
                if r.message_loop(id).is_none() {
                    return Ok(pp_error::BADRESOURCE);
                }
                if tid == 0 || loop_of(&r, &ids, tid).is_some() {
                    return Ok(pp_error::INPROGRESS);
                }
                let Some(l) = r.message_loop(id) else {
                    return Ok(pp_error::BADRESOURCE);
                };
                if l.tid.is_some() {
                    return Ok(pp_error::INPROGRESS);
                }
                l.tid = Some(tid);
                std::mem::take(&mut l.queued)
            };
            let p = if queued.is_empty() {
                None
            } else {
                Some(process(&caller)?)
            };
            for (cb, delay) in queued {
                let Some(p) = &p else { break };
                complete_later(
                    &s,
                    p,
                    tid,
                    cb,
                    pp_error::OK,
                    Duration::from_millis(delay.max(0) as u64),
                );
            }
            Ok(pp_error::OK)
        },
    )?;
    linker.func_wrap(
        ML,
        "Run",
        |mut caller: Caller<'_, Ctx>, id: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let tid = caller.data().thread().tid;
            {
                let mut r = lock(&s.resources);
                let Some(l) = r.message_loop(id) else {
                    return Ok(pp_error::BADRESOURCE);
                };
                if l.tid != Some(tid) {
                    return Ok(pp_error::WRONG_THREAD);
                }
                if tid == 0 || l.running {
                    return Ok(pp_error::INPROGRESS);
                }
                l.running = true;
            }
            // Idle in its loop, the thread waits for work like a blocked one.
            s.activity.add(&s.activity.waiting, 1);
            let r = crate::run_loop(&mut caller);
            s.activity.add(&s.activity.waiting, -1);
            if let Some(l) = lock(&s.resources).message_loop(id) {
                l.running = false;
            }
            r?;
            Ok(pp_error::OK)
        },
    )?;
    linker.func_wrap(
        ML,
        "PostWork",
        |mut caller: Caller<'_, Ctx>, id: i32, cb: i32, delay_ms: i64| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let cb = mem::read_callback(&mut caller, cb as u32)?;
            if cb.func == 0 {
                return Ok(pp_error::BADARGUMENT);
            }
            let tid = {
                let mut r = lock(&s.resources);
                let Some(l) = r.message_loop(id) else {
                    return Ok(pp_error::BADRESOURCE);
                };
                if l.destroyed {
                    return Ok(pp_error::FAILED);
                }
                match l.tid {
                    Some(t) => t,
                    None => {
                        l.queued.push((cb, delay_ms));
                        return Ok(pp_error::OK);
                    }
                }
            };
            let delay = Duration::from_millis(delay_ms.max(0) as u64);
            complete_later(&s, &process(&caller)?, tid, cb, pp_error::OK, delay);
            Ok(pp_error::OK)
        },
    )?;
    linker.func_wrap(
        ML,
        "PostQuit",
        |caller: Caller<'_, Ctx>, id: i32, should_destroy: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            if id == *lock(&s.main_loop) {
                return Ok(pp_error::WRONG_THREAD);
            }
            let tid = {
                let mut r = lock(&s.resources);
                let Some(l) = r.message_loop(id) else {
                    return Ok(pp_error::BADRESOURCE);
                };
                if should_destroy != 0 {
                    l.destroyed = true;
                }
                l.tid
            };
            if let (Some(tid), Some(p)) = (tid, caller.data().process()) {
                if let Ok(m) = p.mailbox(tid) {
                    let _ = m.quit();
                }
            }
            Ok(pp_error::OK)
        },
    )?;
    Ok(())
}
