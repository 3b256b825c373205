//! `PPB_Graphics2D;1.0/1.1/1.2` and binding a context to the instance
//! (`PPB_Instance.BindGraphics`). The model (backing store, queued operations, frames) is
//! `super::super::gfx`.
//!
//! Flush follows Chrome's rules: a blocking callback is refused on the main thread
//! (`PP_ERROR_BLOCKS_MAIN_THREAD`) and waits elsewhere; a non-blocking one needs the
//! calling thread to have a message loop (`PP_ERROR_NO_MESSAGE_LOOP`). A synchronous
//! failure (a bad resource, a Flush while the previous one's callback has not run:
//! `PP_ERROR_INPROGRESS`) is returned as is for an optional or blocking callback, and
//! delivered through a required callback (the call returns `PP_OK_COMPLETIONPENDING`),
//! as Chrome's `EnterResource::SetResult` did. The queued operations are applied, the
//! frame written (`--frames`), and the callback runs with `PP_OK` on the calling thread:
//! for the bound context after a change, at the next tick of a 60 Hz display clock (about
//! 16.7 ms after the previous flush completed when the app flushes again at once); for a
//! context that is not bound or a flush that changed nothing, 33 ms later (Chrome's
//! off-screen acknowledgement, 30 per second).
//!
//! The callback is posted to the calling thread's own mailbox from the run's timer
//! thread (as `complete_later` does), clearing the flush's pending mark just before it
//! runs, so that a Flush from inside the callback is accepted and one before it is not.

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::{Caller, Linker, StoreContextMut};

use super::super::gfx::{Graphics2D, LayerTransform};
use super::super::mem::{self, Callback, CALLBACK_OPTIONAL};
use super::super::resources::Resource;
use super::super::{has_attached_loop, lock, pp_error, ppp, state, state_for, PepperState};
use super::image_data::free_unused;
use super::link_query;
use crate::host::Ctx;
use crate::Mailbox;

const VERSIONS: [&str; 3] = [
    "PPB_Graphics2D;1.0",
    "PPB_Graphics2D;1.1",
    "PPB_Graphics2D;1.2",
];

/// A frame of the 60 Hz display the bound context is paced by.
const FRAME: Duration = Duration::from_nanos(16_666_667);
/// Chrome's delay for the callback of a flush nobody sees (`kOffscreenCallbackDelayMs`).
const OFFSCREEN: Duration = Duration::from_millis(1000 / 30);

/// How long until the next tick of a 60 Hz clock that started at `origin`.
fn until_next_frame(origin: Instant) -> Duration {
    let e = origin.elapsed().as_nanos();
    let f = FRAME.as_nanos();
    let next = (e / f + 1) * f;
    Duration::from_nanos((next - e) as u64)
}

/// Runs `task` on the thread of `mailbox` after `delay`, counted as pending work (the timer
/// until it fires, then the task until it has run).
fn post_later<F>(s: &Arc<PepperState>, mailbox: Arc<Mailbox>, delay: Duration, task: F)
where
    F: for<'a> FnOnce(StoreContextMut<'a, Ctx>) -> wasmtime::Result<()> + Send + 'static,
{
    s.activity.add(&s.activity.pending, 1);
    let s2 = s.clone();
    s.timers.after(delay, move || {
        s2.activity.add(&s2.activity.pending, 1);
        let s3 = s2.clone();
        let posted = mailbox.post(move |cx| {
            let r = task(cx);
            s3.activity.add(&s3.activity.pending, -1);
            r
        });
        if posted.is_err() {
            s2.activity.add(&s2.activity.pending, -1);
        }
        s2.activity.add(&s2.activity.pending, -1);
    });
}

/// A synchronous result with Chrome's rule: through a required callback (the call returns
/// `PP_OK_COMPLETIONPENDING`), else returned.
/// Queued at once on the calling thread's mailbox (not through the timer thread), so such
/// callbacks keep the order of the calls (Chrome's PostRun) with those other families
/// answered at once in between.
fn finish_now(caller: &Caller<'_, Ctx>, s: &Arc<PepperState>, cb: Callback, result: i32) -> i32 {
    if cb.func == 0 || cb.flags & CALLBACK_OPTIONAL != 0 {
        return result;
    }
    s.activity.add(&s.activity.pending, 1);
    let s2 = s.clone();
    let posted = caller.data().mailbox().post(move |cx| {
        let r = ppp::run_callback(cx, cb.func, cb.user_data, result);
        s2.activity.add(&s2.activity.pending, -1);
        r
    });
    if posted.is_err() {
        s.activity.add(&s.activity.pending, -1);
    }
    pp_error::COMPLETIONPENDING
}

fn create(
    mut caller: Caller<'_, Ctx>,
    instance: i32,
    size: i32,
    is_always_opaque: i32,
) -> wasmtime::Result<i32> {
    let Some(s) = state_for(&caller, instance)? else {
        return Ok(0);
    };
    let [width, height] = mem::read_i32s::<2>(&mut caller, size as u32)?;
    match Graphics2D::new(width, height, is_always_opaque != 0) {
        Some(g) => Ok(lock(&s.resources).add(Resource::Graphics2D(Box::new(g)))),
        None => Ok(0),
    }
}

/// Reads an optional `PP_Rect*` (NULL: none).
fn read_rect(caller: &mut Caller<'_, Ctx>, ptr: i32) -> wasmtime::Result<Option<[i32; 4]>> {
    if ptr == 0 {
        return Ok(None);
    }
    Ok(Some(mem::read_i32s::<4>(caller, ptr as u32)?))
}

fn paint_image_data(
    mut caller: Caller<'_, Ctx>,
    g: i32,
    image: i32,
    top_left: i32,
    src: i32,
) -> wasmtime::Result<()> {
    let s = state(&caller)?;
    if lock(&s.resources).graphics_2d(g).is_none() {
        return Ok(());
    }
    let [x, y] = mem::read_i32s::<2>(&mut caller, top_left as u32)?;
    let src = read_rect(&mut caller, src)?;
    let mut r = lock(&s.resources);
    let Some(img) = r.image_data(image).cloned() else {
        return Ok(());
    };
    if let Some(ctx) = r.graphics_2d_mut(g) {
        // A rect outside the image or the context is ignored, as in Chrome.
        ctx.paint(&img, (x, y), src);
    }
    Ok(())
}

fn scroll(mut caller: Caller<'_, Ctx>, g: i32, clip: i32, amount: i32) -> wasmtime::Result<()> {
    let s = state(&caller)?;
    if lock(&s.resources).graphics_2d(g).is_none() {
        return Ok(());
    }
    let clip = read_rect(&mut caller, clip)?;
    let [dx, dy] = mem::read_i32s::<2>(&mut caller, amount as u32)?;
    if let Some(ctx) = lock(&s.resources).graphics_2d_mut(g) {
        ctx.scroll(clip, (dx, dy));
    }
    Ok(())
}

fn replace_contents(caller: Caller<'_, Ctx>, g: i32, image: i32) -> wasmtime::Result<()> {
    let s = state(&caller)?;
    let mut r = lock(&s.resources);
    let Some(img) = r.image_data(image).cloned() else {
        return Ok(());
    };
    if let Some(ctx) = r.graphics_2d_mut(g) {
        ctx.replace(&img);
    }
    Ok(())
}

fn flush(mut caller: Caller<'_, Ctx>, g: i32, cb: i32) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let cb = mem::read_callback(&mut caller, cb as u32)?;
    let tid = caller.data().thread().tid;
    // The callback's checks (Chrome's EnterResource with a callback), then the resource's:
    // a bad resource is what the call returns even when the callback was refused too.
    let refused = if cb.is_blocking() && tid == 0 {
        Some(pp_error::BLOCKS_MAIN_THREAD)
    } else if !cb.is_blocking() && tid != 0 && !has_attached_loop(&s, tid) {
        Some(pp_error::NO_MESSAGE_LOOP)
    } else {
        None
    };
    let ops = {
        let mut r = lock(&s.resources);
        match (r.graphics_2d_mut(g), refused) {
            (None, Some(_)) => return Ok(pp_error::BADRESOURCE),
            (None, None) => {
                drop(r);
                return Ok(finish_now(&caller, &s, cb, pp_error::BADRESOURCE));
            }
            (Some(_), Some(e)) => return Ok(e),
            (Some(ctx), None) if ctx.flush_pending => {
                drop(r);
                return Ok(finish_now(&caller, &s, cb, pp_error::INPROGRESS));
            }
            (Some(ctx), None) => {
                ctx.flush_pending = true;
                ctx.take_queued()
            }
        }
    };
    // The images' pixels as they are now (the app may have written them since it queued
    // the operation).
    let mut pixels = Vec::with_capacity(ops.len());
    for op in &ops {
        pixels.push(match op.image() {
            Some(i) => Some(crate::read_memory(
                &mut caller,
                i.pixels.addr,
                i.pixels.len,
            )?),
            None => None,
        });
    }
    let bound = *lock(&s.gfx.bound) == g;
    let changed = !ops.is_empty();
    let frame = {
        let mut r = lock(&s.resources);
        match r.graphics_2d_mut(g) {
            Some(ctx) => {
                for (op, px) in ops.iter().zip(&pixels) {
                    ctx.apply(op, px.as_deref());
                }
                match &s.config.frames {
                    Some(dir) if bound && changed => {
                        Some((dir.clone(), ctx.width, ctx.height, ctx.to_rgba()))
                    }
                    _ => None,
                }
            }
            None => None,
        }
    };
    drop(ops);
    drop(pixels);
    if let Some((dir, w, h, rgba)) = frame {
        s.gfx.write_frame(&dir, w, h, &rgba, |n| s.sink().note(n));
    }
    free_unused(&mut caller, &s)?;

    let delay = if bound && changed {
        until_next_frame(s.started)
    } else {
        OFFSCREEN
    };
    if cb.is_blocking() {
        // Off the main thread: wait for the display, then return.
        s.activity.add(&s.activity.pending, 1);
        std::thread::sleep(delay);
        s.activity.add(&s.activity.pending, -1);
        if let Some(ctx) = lock(&s.resources).graphics_2d_mut(g) {
            ctx.flush_pending = false;
        }
        return Ok(pp_error::OK);
    }
    let s2 = s.clone();
    post_later(&s, caller.data().mailbox().clone(), delay, move |cx| {
        if let Some(ctx) = lock(&s2.resources).graphics_2d_mut(g) {
            ctx.flush_pending = false;
        }
        ppp::run_callback(cx, cb.func, cb.user_data, pp_error::OK)
    });
    Ok(pp_error::COMPLETIONPENDING)
}

/// `PPB_Instance.BindGraphics`: a Graphics2D context (or 0, to unbind) becomes what the
/// instance shows; anything else is refused.
pub(crate) fn bind_graphics(
    caller: &Caller<'_, Ctx>,
    instance: i32,
    device: i32,
) -> wasmtime::Result<i32> {
    let Some(s) = state_for(caller, instance)? else {
        return Ok(0);
    };
    if device != 0 && lock(&s.resources).graphics_2d(device).is_none() {
        return Ok(0);
    }
    *lock(&s.gfx.bound) = device;
    Ok(1)
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for (k, iface) in VERSIONS.into_iter().enumerate() {
        linker.func_wrap(iface, "Create", create)?;
        link_query(linker, iface, "IsGraphics2D", |s, res| {
            lock(&s.resources).graphics_2d(res).is_some() as i32
        })?;
        linker.func_wrap(
            iface,
            "Describe",
            |mut caller: Caller<'_, Ctx>,
             res: i32,
             size: i32,
             opaque: i32|
             -> wasmtime::Result<i32> {
                let s = state(&caller)?;
                let d = lock(&s.resources)
                    .graphics_2d(res)
                    .map(|g| (g.width, g.height, g.is_always_opaque as i32));
                // Zeroed for a resource that is not a context, as Chrome's thunk did.
                let (w, h, o) = d.unwrap_or((0, 0, 0));
                mem::write_i32s(&mut caller, size as u32, &[w, h])?;
                mem::write_i32s(&mut caller, opaque as u32, &[o])?;
                Ok(d.is_some() as i32)
            },
        )?;
        linker.func_wrap(iface, "PaintImageData", paint_image_data)?;
        linker.func_wrap(iface, "Scroll", scroll)?;
        linker.func_wrap(iface, "ReplaceContents", replace_contents)?;
        linker.func_wrap(iface, "Flush", flush)?;
        if k >= 1 {
            linker.func_wrap(
                iface,
                "SetScale",
                |caller: Caller<'_, Ctx>, res: i32, scale: f32| -> wasmtime::Result<i32> {
                    let s = state(&caller)?;
                    let mut r = lock(&s.resources);
                    match r.graphics_2d_mut(res) {
                        Some(g) if scale > 0.0 => {
                            g.scale = scale;
                            Ok(1)
                        }
                        _ => Ok(0),
                    }
                },
            )?;
            link_query(linker, iface, "GetScale", |s, res| {
                lock(&s.resources).graphics_2d(res).map_or(0.0, |g| g.scale)
            })?;
        }
        if k >= 2 {
            linker.func_wrap(
                iface,
                "SetLayerTransform",
                |mut caller: Caller<'_, Ctx>,
                 res: i32,
                 scale: f32,
                 origin: i32,
                 translate: i32|
                 -> wasmtime::Result<i32> {
                    let s = state(&caller)?;
                    if lock(&s.resources).graphics_2d(res).is_none() || scale <= 0.0 {
                        return Ok(0);
                    }
                    let [ox, oy] = mem::read_i32s::<2>(&mut caller, origin as u32)?;
                    let [tx, ty] = mem::read_i32s::<2>(&mut caller, translate as u32)?;
                    if let Some(g) = lock(&s.resources).graphics_2d_mut(res) {
                        g.layer_transform = Some(LayerTransform {
                            scale,
                            origin: (ox, oy),
                            translate: (tx, ty),
                        });
                    }
                    Ok(1)
                },
            )?;
        }
    }
    Ok(())
}
