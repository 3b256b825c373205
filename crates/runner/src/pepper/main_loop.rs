//! The instance's life: `pexe2wasm_ppapi.start` (InitializeModule, DidCreate,
//! DidChangeView, DidChangeFocus, then the main thread's mailbox until the end), the input
//! thread that turns lines into messages, and the end-of-input rule (see the module
//! documentation of `pepper`).

use std::io::BufRead;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::Caller;

use super::resources::{self, Resource, View};
use super::var::PpVar;
use super::{
    events, json, lock, mem, post_counted, pp_error, ppp, process, state, MessageFormat,
    MessageSource, PepperState, Ppp, INSTANCE, MODULE, OFFERED,
};
use crate::host::Ctx;
use crate::{call_export, Process};

/// `pexe2wasm_ppapi.get_interface(name, len)`: whether this host offers the interface.
pub(super) fn get_interface(
    mut caller: Caller<'_, Ctx>,
    name: i32,
    len: i32,
) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let bytes = crate::read_memory(&mut caller, name as u32, len.clamp(0, 255) as u32)?;
    let name = String::from_utf8_lossy(&bytes).into_owned();
    let offered = OFFERED.contains(&name.as_str());
    if lock(&s.asked).insert(name.clone()) && !offered {
        lock(&s.missing).push(name);
    }
    Ok(offered as i32)
}

/// `pexe2wasm_ppapi.start(init, shutdown, get_interface, browser_get_interface)`: the main
/// loop (see the module documentation). Returns what `ppapi_start` returns.
pub(super) fn start(
    mut caller: Caller<'_, Ctx>,
    init: i32,
    _shutdown: i32,
    get_interface: i32,
    _browser: i32,
) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let process = process(&caller)?;
    {
        let main_loop = lock(&s.resources).add(Resource::MessageLoop(resources::MessageLoop {
            tid: Some(0),
            ..Default::default()
        }));
        *lock(&s.main_loop) = main_loop;
    }
    let r: i32 = call_export(&mut caller, "__ppp_initialize_module", (init, MODULE))?;
    if r != pp_error::OK {
        s.sink().note(&format!(
            "the app's PPP_InitializeModule failed ({r}); it does not start"
        ));
        return Ok(1);
    }
    let gi = get_interface as u32;
    let mut ppp = Ppp::default();
    ppp.instance = ppp::get_ppp_interface(&mut caller, gi, "PPP_Instance;1.1")?;
    if ppp.instance == 0 {
        ppp.instance = ppp::get_ppp_interface(&mut caller, gi, "PPP_Instance;1.0")?;
        ppp.instance_1_0 = ppp.instance != 0;
    }
    if ppp.instance == 0 {
        s.sink()
            .note("the app offers no PPP_Instance, so no instance can be made (Chrome unloads such a module)");
        return Ok(1);
    }
    ppp.messaging = ppp::get_ppp_interface(&mut caller, gi, "PPP_Messaging;1.0")?;
    ppp.input_event = ppp::get_ppp_interface(&mut caller, gi, "PPP_InputEvent;0.1")?;
    *lock(&s.ppp) = ppp;
    let [did_create, did_destroy, did_change_view, did_change_focus] =
        mem::read_i32s::<4>(&mut caller, ppp.instance)?;

    // DidCreate(instance, argc, argn, argv): the arrays, then the strings, on the stack.
    let attrs = s.config.attrs.clone();
    let argc = attrs.len() as i32;
    let mut strings = Vec::new();
    let mut offsets = Vec::new();
    let base = 8 * attrs.len();
    for (k, v) in &attrs {
        offsets.push((base + strings.len()) as u32);
        strings.extend_from_slice(k.as_bytes());
        strings.push(0);
        offsets.push((base + strings.len()) as u32);
        strings.extend_from_slice(v.as_bytes());
        strings.push(0);
    }
    let size = (base + strings.len()).max(1) as i32;
    let fill: ppp::Fill = Box::new(move |ptr| {
        let mut b = Vec::with_capacity(size as usize);
        for i in 0..attrs.len() {
            b.extend_from_slice(&(ptr + offsets[2 * i]).to_le_bytes());
        }
        for i in 0..attrs.len() {
            b.extend_from_slice(&(ptr + offsets[2 * i + 1]).to_le_bytes());
        }
        b.extend_from_slice(&strings);
        b
    });
    let created: i32 = ppp::call_with_buffer(
        &mut caller,
        "__ppp_callbuf_iiii_i",
        (did_create, size, 4 | 8, INSTANCE, argc, 0, 4 * argc),
        fill,
        None,
    )?;
    if created == 0 {
        s.sink()
            .note("the app's DidCreate returned false: the instance failed to start");
        return Ok(1);
    }

    // The view, then focus.
    let (w, h) = s.config.size;
    let view = View::of_size(w, h);
    if ppp.instance_1_0 {
        let mut rects = Vec::new();
        for r in [view.rect, view.clip] {
            for x in r {
                rects.extend_from_slice(&x.to_le_bytes());
            }
        }
        ppp::call_with_buffer::<_, ()>(
            &mut caller,
            "__ppp_callbuf_iii_v",
            (did_change_view, 32, 2 | 4, INSTANCE, 0, 16),
            Box::new(move |_| rects),
            None,
        )?;
    } else {
        let res = lock(&s.resources).add(Resource::View(view));
        call_export::<(i32, i32, i32), ()>(
            &mut caller,
            "__ppp_call_ii_v",
            (did_change_view, INSTANCE, res),
        )?;
        lock(&s.resources).release(res);
    }
    call_export::<(i32, i32, i32), ()>(
        &mut caller,
        "__ppp_call_ii_v",
        (did_change_focus, INSTANCE, 1),
    )?;

    events::start_replay(&s, &process);
    start_input(&s, &process)?;
    crate::run_loop(&mut caller)?;

    // The end: the handler's Destroy, then DidDestroy.
    if let Some(h) = lock(&s.handler).take() {
        if h.tid == 0 {
            call_export::<(i32, i32, i32), ()>(
                &mut caller,
                "__ppp_call_ii_v",
                (h.table[2] as i32, INSTANCE, h.user_data as i32),
            )?;
        }
    }
    call_export::<(i32, i32), ()>(&mut caller, "__ppp_call_i_v", (did_destroy, INSTANCE))?;
    Ok(0)
}

/// Starts the thread that reads the input (each line a message to the instance) and, once
/// it ends, watches for the end of the instance.
fn start_input(s: &Arc<PepperState>, process: &Arc<Process>) -> wasmtime::Result<()> {
    let s = s.clone();
    let weak = Arc::downgrade(process);
    std::thread::Builder::new()
        .name("pepper input".into())
        .spawn(move || {
            let deliver = |line: String| match weak.upgrade() {
                Some(p) => deliver_line(&s, &p, line),
                None => false,
            };
            match &s.config.input {
                MessageSource::Stdin => {
                    for line in std::io::stdin().lock().lines() {
                        match line {
                            Ok(l) => {
                                if !deliver(l) {
                                    break;
                                }
                            }
                            Err(e) => {
                                s.sink().note(&format!("standard input: {e}"));
                                break;
                            }
                        }
                    }
                }
                MessageSource::Lines(lines) => {
                    for l in lines {
                        if !deliver(l.clone()) {
                            break;
                        }
                    }
                }
                MessageSource::Channel(rx) => {
                    if let Some(rx) = lock(rx).take() {
                        while let Some(l) = recv_spinning(&rx) {
                            if !deliver(l) {
                                break;
                            }
                        }
                    }
                }
            }
            s.activity.input_done.store(true, Ordering::SeqCst);
            s.activity.generation.fetch_add(1, Ordering::SeqCst);
            watch_for_end(&s, &weak);
        })
        .map_err(|e| wasmtime::Error::msg(format!("cannot start the input thread: {e}")))?;
    Ok(())
}

/// The next line from a channel, spinning up to 50 µs before sleeping, as the mailboxes
/// do: an embedder that sends a message as soon as it has the answer to the last one
/// then finds the input thread awake (`crate::mailbox`). `None` at the channel's end.
fn recv_spinning(rx: &std::sync::mpsc::Receiver<String>) -> Option<String> {
    let start = Instant::now();
    loop {
        match rx.try_recv() {
            Ok(l) => return Some(l),
            Err(std::sync::mpsc::TryRecvError::Disconnected) => return None,
            Err(std::sync::mpsc::TryRecvError::Empty)
                if start.elapsed() < Duration::from_micros(50) =>
            {
                std::hint::spin_loop()
            }
            Err(std::sync::mpsc::TryRecvError::Empty) => return rx.recv().ok(),
        }
    }
}

/// Waits (on the input thread) until the instance can make no progress or the time limit
/// after the input's end passes; then ends it.
fn watch_for_end(s: &Arc<PepperState>, process: &std::sync::Weak<Process>) {
    let deadline = s.config.timeout.map(|t| Instant::now() + t);
    let mut last: Option<u64> = None;
    loop {
        if s.ended.load(Ordering::SeqCst) {
            return;
        }
        let Some(p) = process.upgrade() else { return };
        if p.is_stopping() {
            return;
        }
        let (quiet, generation) = s.activity.quiet();
        let timed_out = deadline.is_some_and(|d| Instant::now() >= d);
        if (quiet && last == Some(generation)) || timed_out {
            if timed_out && !quiet {
                s.sink()
                    .note("the time limit after the end of input passed: ending the instance");
            }
            if let Ok(m) = p.mailbox(0) {
                let _ = m.quit();
            }
            // A main thread that does not take the quit (blocked in the app) ends with
            // the run, a second later.
            if timed_out {
                drop(p);
                std::thread::sleep(Duration::from_secs(1));
                if let Some(p) = process.upgrade() {
                    if !p.is_stopping() {
                        s.sink()
                            .note("the app's main thread did not return to its loop: stopping it");
                        p.exit(124);
                    }
                }
            }
            return;
        }
        last = quiet.then_some(generation);
        drop(p);
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Makes `line` a message and posts it to the instance; false when the run is gone.
fn deliver_line(s: &Arc<PepperState>, process: &Arc<Process>, line: String) -> bool {
    let var = {
        let mut vars = lock(&s.vars);
        match s.config.format {
            MessageFormat::Text => Ok(vars.string_from_utf8(line.as_bytes())),
            MessageFormat::Json => json::parse_line(&mut vars, &line),
        }
    };
    let var = match var {
        Ok(v) => v,
        Err(e) => {
            s.sink().note(&format!("input line not sent: {e}"));
            return true;
        }
    };
    post_message(s, process, var)
}

/// Delivers `var` (one reference) to the instance: to the registered message handler's
/// loop (which borrows it; the delivery releases it), else `PPP_Messaging.HandleMessage`
/// on the main thread (which is given the reference, as Chrome gave it).
pub(crate) fn post_message(s: &Arc<PepperState>, process: &Arc<Process>, var: PpVar) -> bool {
    let handler = *lock(&s.handler);
    let messaging = lock(&s.ppp).messaging;
    let s2 = s.clone();
    let bytes = var.to_bytes();
    let posted = match handler {
        Some(h) => post_counted(s, process, h.tid, move |cx| {
            let r = ppp::call_with_buffer::<_, ()>(
                cx,
                "__ppp_callbuf_iii_v",
                (h.table[0] as i32, 16, 4, INSTANCE, h.user_data as i32, 0),
                Box::new(move |_| bytes.to_vec()),
                None,
            );
            lock(&s2.vars).release(var);
            r
        }),
        None if messaging != 0 => post_counted(s, process, 0, move |mut cx| {
            let handle = mem::read_u32(&mut cx, messaging)? as i32;
            let r = ppp::call_with_buffer::<_, ()>(
                cx,
                "__ppp_callbuf_ii_v",
                (handle, 16, 2, INSTANCE, 0),
                Box::new(move |_| bytes.to_vec()),
                None,
            );
            // The app owns this reference now: Chrome's proxy added one for the
            // recipient, and the C++ wrapper takes it (`Var(PASS_REF, var)`) and releases
            // it. Releasing it here too freed a message an app still held (bp2008 queues
            // its ArrayBuffers).
            r
        }),
        None => {
            s.sink()
                .note("the app has no PPP_Messaging: the message is dropped, as in Chrome");
            lock(&s.vars).release(var);
            true
        }
    };
    if !posted {
        lock(&s.vars).release(var);
    }
    posted
}
