//! `PPB_Messaging;1.0/1.2` (messages to the page, message handlers) and `PPB_Console;1.0`.
//! Messages out are written as they are posted, from whichever thread posts them, one line
//! each (`MessageFormat`); console lines go to the sink's console (stderr on the
//! command line).

use wasmtime::{AsContextMut, Caller, Linker};

use super::super::var::PpVar;
use super::super::{
    json, lock, mem, post_counted, pp_error, process, state, state_for, MessageFormat,
    MessageHandler, PepperState, INSTANCE,
};
use super::var::sync_buffers;
use crate::host::Ctx;

/// The text of `v` for a message or console line: a string as is, else JSON.
fn text_of(
    cx: impl AsContextMut<Data = Ctx>,
    s: &PepperState,
    v: PpVar,
    format: MessageFormat,
) -> wasmtime::Result<Result<String, String>> {
    sync_buffers(cx, s)?;
    let vars = lock(&s.vars);
    let r = match format {
        MessageFormat::Text => json::to_text_line(&vars, v),
        MessageFormat::Json => json::to_line(&vars, v),
    };
    Ok(r.map_err(|e| e.to_string()))
}

fn post_message(mut caller: Caller<'_, Ctx>, instance: i32, var: i32) -> wasmtime::Result<()> {
    let Some(s) = state_for(&caller, instance)? else {
        return Ok(());
    };
    let v = mem::read_var(&mut caller, var as u32)?;
    match text_of(&mut caller, &s, v, s.config.format)? {
        Ok(line) => s.sink().message(&line),
        // Chrome refused such a var with an error on the console.
        Err(e) => s.sink().console(3, None, &format!("PostMessage: {e}")),
    }
    Ok(())
}

fn register_message_handler(
    mut caller: Caller<'_, Ctx>,
    instance: i32,
    user_data: i32,
    handler: i32,
    message_loop: i32,
) -> wasmtime::Result<i32> {
    let Some(s) = state_for(&caller, instance)? else {
        return Ok(pp_error::BADARGUMENT);
    };
    if handler == 0 {
        return Ok(pp_error::BADARGUMENT);
    }
    let table = mem::read_i32s::<3>(&mut caller, handler as u32)?;
    if table[0] == 0 {
        return Ok(pp_error::BADARGUMENT);
    }
    if message_loop == *lock(&s.main_loop) {
        return Ok(pp_error::WRONG_THREAD);
    }
    let tid = match lock(&s.resources).message_loop(message_loop) {
        Some(l) => l.tid,
        None => return Ok(pp_error::BADRESOURCE),
    };
    let Some(tid) = tid else {
        // Chrome dispatched to the loop's thread once it ran; a loop on no thread yet
        // could never be run by anyone but its future thread, so it is refused here.
        return Ok(pp_error::WRONG_THREAD);
    };
    let new = MessageHandler {
        user_data: user_data as u32,
        table: [table[0] as u32, table[1] as u32, table[2] as u32],
        tid,
    };
    let old = lock(&s.handler).replace(new);
    if let Some(old) = old {
        destroy_handler(&s, &process(&caller)?, old);
    }
    Ok(pp_error::OK)
}

/// Calls the handler's Destroy on its loop's thread.
fn destroy_handler(
    s: &std::sync::Arc<PepperState>,
    p: &std::sync::Arc<crate::Process>,
    h: MessageHandler,
) {
    if h.table[2] != 0 {
        post_counted(s, p, h.tid, move |cx| {
            crate::call_export::<(i32, i32, i32), ()>(
                cx,
                "__ppp_call_ii_v",
                (h.table[2] as i32, INSTANCE, h.user_data as i32),
            )
        });
    }
}

fn log(
    mut caller: Caller<'_, Ctx>,
    instance: i32,
    level: i32,
    source: Option<i32>,
    value: i32,
) -> wasmtime::Result<()> {
    let Some(s) = state_for(&caller, instance)? else {
        return Ok(());
    };
    let source = match source {
        Some(src) => {
            let v = mem::read_var(&mut caller, src as u32)?;
            text_of(&mut caller, &s, v, MessageFormat::Text)?.ok()
        }
        None => None,
    };
    let v = mem::read_var(&mut caller, value as u32)?;
    let text = text_of(&mut caller, &s, v, MessageFormat::Text)?.unwrap_or_else(|e| e);
    s.sink().console(level, source.as_deref(), &text);
    Ok(())
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for iface in ["PPB_Messaging;1.0", "PPB_Messaging;1.2"] {
        linker.func_wrap(iface, "PostMessage", post_message)?;
    }
    linker.func_wrap(
        "PPB_Messaging;1.2",
        "RegisterMessageHandler",
        register_message_handler,
    )?;
    linker.func_wrap(
        "PPB_Messaging;1.2",
        "UnregisterMessageHandler",
        |caller: Caller<'_, Ctx>, instance: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            if instance == INSTANCE {
                let old = lock(&s.handler).take();
                if let Some(old) = old {
                    destroy_handler(&s, &process(&caller)?, old);
                }
            }
            Ok(())
        },
    )?;
    linker.func_wrap(
        "PPB_Console;1.0",
        "Log",
        |caller: Caller<'_, Ctx>, instance: i32, level: i32, value: i32| {
            log(caller, instance, level, None, value)
        },
    )?;
    linker.func_wrap(
        "PPB_Console;1.0",
        "LogWithSource",
        |caller: Caller<'_, Ctx>, instance: i32, level: i32, source: i32, value: i32| {
            log(caller, instance, level, Some(source), value)
        },
    )?;
    Ok(())
}
