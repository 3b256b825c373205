//! Completion callbacks and asynchronous operations with Chrome's rules: posting work to a
//! thread (counted for the end-of-input rule), callbacks after a delay, operations that
//! run on a thread of their own and complete on the caller's thread.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::{AsContextMut, Caller};

use super::resources::Resource;
use super::{lock, mem, pp_error, ppp, process, state, PepperState};
use crate::host::Ctx;
use crate::Process;

/// Posts `task` to thread `tid`, counted as pending work until it has run. False when the
/// thread is gone.
pub(crate) fn post_counted<F>(
    state: &Arc<PepperState>,
    process: &Process,
    tid: i32,
    task: F,
) -> bool
where
    F: for<'a> FnOnce(wasmtime::StoreContextMut<'a, Ctx>) -> wasmtime::Result<()> + Send + 'static,
{
    state.activity.add(&state.activity.pending, 1);
    let s = state.clone();
    let posted = process.mailbox(tid).and_then(|m| {
        m.post(move |cx| {
            let r = task(cx);
            s.activity.add(&s.activity.pending, -1);
            r
        })
    });
    if posted.is_err() {
        state.activity.add(&state.activity.pending, -1);
    }
    posted.is_ok()
}

/// Runs completion callback `cb` with `result` on thread `tid`, after `delay`.
pub(crate) fn complete_later(
    state: &Arc<PepperState>,
    process: &Arc<Process>,
    tid: i32,
    cb: mem::Callback,
    result: i32,
    delay: Duration,
) {
    let task = move |cx: wasmtime::StoreContextMut<'_, Ctx>| {
        ppp::run_callback(cx, cb.func, cb.user_data, result)
    };
    if delay.is_zero() {
        post_counted(state, process, tid, task);
    } else {
        // The timer counts as pending until its task is posted (then the task does).
        state.activity.add(&state.activity.pending, 1);
        let s = state.clone();
        let p = Arc::downgrade(process);
        state.timers.after(delay, move || {
            if let Some(p) = p.upgrade() {
                post_counted(&s, &p, tid, task);
            }
            s.activity.add(&s.activity.pending, -1);
        });
    }
}

/// What an asynchronous PPB operation ends with: its result code, and the bytes to write
/// into module memory before its callback runs (what a read read, an output value), so
/// that the app sees them when the callback runs, as in Chrome.
#[derive(Debug, Default)]
pub(crate) struct Completion {
    pub result: i32,
    pub writes: Vec<(u32, Vec<u8>)>,
}

impl Completion {
    pub fn result(result: i32) -> Completion {
        Completion {
            result,
            writes: Vec::new(),
        }
    }
}

/// Runs an asynchronous PPB operation (`work`, which may block: it runs on a thread of
/// its own) with Chrome's callback rules:
/// * a blocking callback (`PP_BlockUntilComplete()`) is refused on the main thread with
///   `PP_ERROR_BLOCKS_MAIN_THREAD`; elsewhere the call waits and returns the result;
/// * otherwise the call returns `PP_OK_COMPLETIONPENDING` and the callback runs later on
///   the calling thread (the main thread, or a thread whose message loop is attached;
///   a thread without one gets `PP_ERROR_NO_MESSAGE_LOOP`), after `writes` are made.
pub(crate) fn start_async(
    caller: &mut Caller<'_, Ctx>,
    cb: mem::Callback,
    work: impl FnOnce() -> Completion + Send + 'static,
) -> wasmtime::Result<i32> {
    // The finishing step is the writes, made on the callback's thread.
    start_async_finishing(caller, cb, move || -> Finish {
        let done = work();
        Box::new(move |mut cx| {
            for (addr, bytes) in done.writes {
                crate::write_memory(&mut cx, addr, &bytes)?;
            }
            Ok(done.result)
        })
    })
}

/// The error Chrome answers before anything else for callback `cb` on this thread, if
/// any: a blocking callback on the main thread (`PP_ERROR_BLOCKS_MAIN_THREAD`), a
/// non-blocking one on a thread without a message loop (`PP_ERROR_NO_MESSAGE_LOOP`).
pub(crate) fn callback_error(caller: &Caller<'_, Ctx>, cb: &mem::Callback) -> Option<i32> {
    let tid = caller.data().thread().tid;
    if cb.is_blocking() {
        (tid == 0).then_some(pp_error::BLOCKS_MAIN_THREAD)
    } else if tid != 0 {
        let s = state(caller).ok()?;
        (!has_attached_loop(&s, tid)).then_some(pp_error::NO_MESSAGE_LOOP)
    } else {
        None
    }
}

/// Answers an operation that completed at once with `result` (an error found before any
/// work, data already at hand), as Chrome's `EnterBase::SetResult` did: a required
/// callback runs later with the result and the call returns `PP_OK_COMPLETIONPENDING`;
/// an optional or blocking one is not run and the call returns the result. The callback
/// errors of [`callback_error`] come first.
pub(crate) fn answer_now(
    caller: &mut Caller<'_, Ctx>,
    cb: mem::Callback,
    result: i32,
) -> wasmtime::Result<i32> {
    if let Some(e) = callback_error(caller, &cb) {
        return Ok(e);
    }
    if cb.is_blocking() || cb.flags & mem::CALLBACK_OPTIONAL != 0 {
        return Ok(result);
    }
    // Queued now on the calling thread's mailbox (not through a worker thread): the
    // callbacks of calls that ended at once run in the order of the calls, as Chrome's
    // PostRun queued them.
    let s = state(caller)?;
    let p = process(caller)?;
    let tid = caller.data().thread().tid;
    complete_later(&s, &p, tid, cb, result, Duration::ZERO);
    Ok(pp_error::COMPLETIONPENDING)
}

/// What an asynchronous operation does on its callback's thread just before the callback
/// runs, when plain writes are not enough (it calls into the module: a `PP_ArrayOutput`'s
/// `GetDataBuffer`, say). Returns the callback's result.
pub(crate) type Finish =
    Box<dyn for<'a> FnOnce(wasmtime::StoreContextMut<'a, Ctx>) -> wasmtime::Result<i32> + Send>;

/// [`start_async`] for an operation whose `work` ends with a [`Finish`], run on the
/// callback's thread (the calling thread itself for a blocking callback).
pub(crate) fn start_async_finishing(
    caller: &mut Caller<'_, Ctx>,
    cb: mem::Callback,
    work: impl FnOnce() -> Finish + Send + 'static,
) -> wasmtime::Result<i32> {
    let s = state(caller)?;
    let tid = caller.data().thread().tid;
    if let Some(e) = callback_error(caller, &cb) {
        return Ok(e);
    }
    if cb.is_blocking() {
        s.activity.add(&s.activity.pending, 1);
        let finish = work();
        s.activity.add(&s.activity.pending, -1);
        return finish(caller.as_context_mut());
    }
    let p = process(caller)?;
    s.activity.add(&s.activity.pending, 1);
    let s2 = s.clone();
    let spawned = std::thread::Builder::new()
        .name("pepper operation".into())
        .spawn(move || {
            let finish = work();
            post_counted(&s2, &p, tid, move |mut cx| {
                let result = finish(cx.as_context_mut())?;
                ppp::run_callback(cx, cb.func, cb.user_data, result)
            });
            s2.activity.add(&s2.activity.pending, -1);
        });
    if spawned.is_err() {
        s.activity.add(&s.activity.pending, -1);
        return Ok(pp_error::NOMEMORY);
    }
    Ok(pp_error::COMPLETIONPENDING)
}

/// Whether thread `tid` has a message loop attached (the main thread always has).
pub(crate) fn has_attached_loop(s: &PepperState, tid: i32) -> bool {
    if tid == 0 {
        return true;
    }
    let ids = lock(&s.loops).clone();
    let r = lock(&s.resources);
    ids.iter()
        .any(|&id| matches!(r.get(id), Some(Resource::MessageLoop(l)) if l.tid == Some(tid)))
}
