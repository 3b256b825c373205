// PPB_ImageData;1.0 and PPB_Graphics2D;1.0-1.2. Image data lives in module memory (pages
// from the runtime's allocator) with its description in the resource's state words, so
// Map and Describe work from any thread. A Graphics2D device keeps its queued operations
// and backing store in the instance worker, which owns the canvas (an OffscreenCanvas
// transferred from the page): Flush there completes on the next animation frame. A
// module thread's Flush paints a backing store of its own worker and sends the frame to
// the instance worker (as ppapi_simple-style apps paint from their own thread).

import { FIELDS, KIND } from "../resources.js";
import { BOUND } from "../shared.js";
import * as loops from "./message_loop.js";
import { OFFERED, PP_ERROR as E } from "../contract.js";
import { TO_MAIN } from "../protocol.js";

const BGRA = 0; // PP_IMAGEDATAFORMAT_BGRA_PREMUL: Chrome's native format on little-endian
const RGBA = 1;
const IMG = { FORMAT: 0, W: 1, H: 2, STRIDE: 3, ADDR: 4, BYTES: 5 };
const G2D = { W: 0, H: 1, OPAQUE: 2, SCALE: 3 };

const MAX_SIDE = 16384;

const f32 = new Float32Array(1);
const f32i = new Int32Array(f32.buffer);

export function register(reg, cx) {
  // An image's pixels are pages from the runtime's allocator; a device's queue and
  // backing store are the display's (cx.gfx, which also unbinds it).
  reg.onRelease(KIND.IMAGE_DATA, (_res, fields) => cx.exports.__ppapi_free(fields[IMG.ADDR], fields[IMG.BYTES]));
  reg.onRelease(KIND.GRAPHICS_2D, (res) => cx.gfx.forget(res));
  const imageAt = (res) => {
    const b = cx.res.of(res, KIND.IMAGE_DATA);
    return b < 0 ? -1 : b + FIELDS;
  };
  const I = "PPB_ImageData;1.0";
  reg.def(I, "GetNativeImageDataFormat", () => BGRA);
  reg.def(I, "IsImageDataFormatSupported", (f) => (f === BGRA || f === RGBA ? 1 : 0));
  reg.def(I, "Create", (instance, format, sizePtr, _zero) => {
    if (instance !== cx.instance || (format !== BGRA && format !== RGBA) || sizePtr === 0) return 0;
    const w = cx.mem.i32(sizePtr);
    const h = cx.mem.i32(sizePtr + 4);
    if (w <= 0 || h <= 0 || w > MAX_SIDE || h > MAX_SIDE) return 0;
    const bytes = w * h * 4;
    // Whole pages from the runtime, zeroed when handed out (init_to_zero costs nothing).
    const addr = cx.exports.__ppapi_alloc(bytes) >>> 0;
    if (addr === 0) return 0;
    return cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.IMAGE_DATA);
      const b = cx.res.base(id) + FIELDS;
      const h32 = cx.h;
      h32[b + IMG.FORMAT] = format;
      h32[b + IMG.W] = w;
      h32[b + IMG.H] = h;
      h32[b + IMG.STRIDE] = 4 * w;
      h32[b + IMG.ADDR] = addr;
      h32[b + IMG.BYTES] = bytes;
      return id;
    });
  });
  reg.def(I, "IsImageData", (res) => (imageAt(res) >= 0 ? 1 : 0));
  reg.def(I, "Describe", (res, desc) => {
    const b = imageAt(res);
    if (b < 0 || desc === 0) return 0;
    // PP_ImageDataDesc {format, size {w, h}, stride}
    cx.mem.setI32(desc, cx.h[b + IMG.FORMAT]);
    cx.mem.setI32(desc + 4, cx.h[b + IMG.W]);
    cx.mem.setI32(desc + 8, cx.h[b + IMG.H]);
    cx.mem.setI32(desc + 12, cx.h[b + IMG.STRIDE]);
    return 1;
  });
  reg.def(I, "Map", (res) => {
    const b = imageAt(res);
    return b < 0 ? 0 : cx.h[b + IMG.ADDR];
  });
  reg.def(I, "Unmap", (_res) => {});

  /** The pixels of an image data as canvas RGBA (un-premultiplied), a copy. */
  const rgbaOf = (b) => {
    const w = cx.h[b + IMG.W];
    const h = cx.h[b + IMG.H];
    const px = cx.mem.bytes(cx.h[b + IMG.ADDR], w * h * 4);
    const bgra = cx.h[b + IMG.FORMAT] === BGRA;
    for (let i = 0; i < px.length; i += 4) {
      const a = px[i + 3];
      let r = px[i + (bgra ? 2 : 0)];
      const g = px[i + 1];
      let bl = px[i + (bgra ? 0 : 2)];
      let gg = g;
      if (a !== 255 && a !== 0) {
        r = Math.min(255, Math.round((r * 255) / a));
        gg = Math.min(255, Math.round((g * 255) / a));
        bl = Math.min(255, Math.round((bl * 255) / a));
      }
      px[i] = r;
      px[i + 1] = gg;
      px[i + 2] = bl;
    }
    return new ImageData(new Uint8ClampedArray(px.buffer), w, h);
  };

  const gAt = (res) => {
    const b = cx.res.of(res, KIND.GRAPHICS_2D);
    return b < 0 ? -1 : b + FIELDS;
  };
  const G = OFFERED.PPB_Graphics2D;
  reg.defAll(G, "Create", (instance, sizePtr, opaque) => {
    if (instance !== cx.instance || sizePtr === 0) return 0;
    const w = cx.mem.i32(sizePtr);
    const h = cx.mem.i32(sizePtr + 4);
    if (w <= 0 || h <= 0 || w > MAX_SIDE || h > MAX_SIDE) return 0;
    return cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.GRAPHICS_2D);
      const b = cx.res.base(id) + FIELDS;
      cx.h[b + G2D.W] = w;
      cx.h[b + G2D.H] = h;
      cx.h[b + G2D.OPAQUE] = opaque ? 1 : 0;
      f32[0] = 1;
      cx.h[b + G2D.SCALE] = f32i[0];
      return id;
    });
  });
  reg.defAll(G, "IsGraphics2D", (res) => (gAt(res) >= 0 ? 1 : 0));
  reg.defAll(G, "Describe", (res, size, opaque) => {
    const b = gAt(res);
    if (b < 0) return 0;
    if (size) {
      cx.mem.setI32(size, cx.h[b + G2D.W]);
      cx.mem.setI32(size + 4, cx.h[b + G2D.H]);
    }
    if (opaque) cx.mem.setI32(opaque, cx.h[b + G2D.OPAQUE]);
    return 1;
  });
  /** The device's queue of painting operations, kept where the calls are made. */
  const ops = (res) => cx.gfx.device(res, () => ({ w: cx.h[gAt(res) + G2D.W], h: cx.h[gAt(res) + G2D.H] }));
  reg.defAll(G, "PaintImageData", (res, image, topLeft, srcRect) => {
    const b = imageAt(image);
    if (gAt(res) < 0 || b < 0 || topLeft === 0) return;
    const x = cx.mem.i32(topLeft);
    const y = cx.mem.i32(topLeft + 4);
    const src = srcRect ? [0, 4, 8, 12].map((o) => cx.mem.i32(srcRect + o)) : null;
    // The pixels are taken now: the app may change its image data before Flush.
    ops(res).queue.push({ op: "paint", image: rgbaOf(b), x, y, src });
  });
  reg.defAll(G, "Scroll", (res, clip, amount) => {
    if (gAt(res) < 0 || amount === 0) return;
    const rect = clip ? [0, 4, 8, 12].map((o) => cx.mem.i32(clip + o)) : null;
    ops(res).queue.push({ op: "scroll", rect, dx: cx.mem.i32(amount), dy: cx.mem.i32(amount + 4) });
  });
  reg.defAll(G, "ReplaceContents", (res, image) => {
    const b = imageAt(image);
    if (gAt(res) < 0 || b < 0) return;
    ops(res).queue.push({ op: "replace", image: rgbaOf(b) });
  });
  reg.defAll(G, "Flush", (res, cb) => {
    if (gAt(res) < 0) return E.BADRESOURCE;
    const func = cx.mem.u32(cb);
    const userData = cx.mem.u32(cb + 4);
    if (!cx.isMain) {
      // A module thread (ppapi_simple-style apps paint from their own): the device's
      // backing store is this worker's; the frame goes to the instance worker as an
      // ImageBitmap. Frames are paced at 60 a second: a blocking Flush waits, a callback
      // is posted to the thread's loop.
      if (func !== 0 && !cx.currentLoop) return E.NO_MESSAGE_LOOP;
      const d = ops(res);
      cx.gfx.apply(d);
      if (cx.gfx.bound === res) {
        d.present ??= new OffscreenCanvas(d.store.width, d.store.height);
        const p = d.present.getContext("2d");
        p.clearRect(0, 0, d.present.width, d.present.height);
        p.drawImage(d.store, 0, 0);
        const bitmap = d.present.transferToImageBitmap();
        cx.toMain({ t: TO_MAIN.FRAME, res, bitmap, scaled: false }, [bitmap]);
      }
      return threadFrame(cx, d, func, userData);
    }
    if (func === 0) return E.BLOCKS_MAIN_THREAD;
    const d = ops(res);
    if (d.flushing) return E.INPROGRESS;
    d.flushing = true;
    // The frame's end is posted behind any callback posted before it (posted.js).
    cx.gfx.flush(res, d, () =>
      cx.posted.now(() => {
        d.flushing = false;
        cx.runCallback(func, userData, E.OK);
      }),
    );
    return E.COMPLETIONPENDING;
  });
  for (const i of G.slice(1)) {
    reg.def(i, "SetScale", (res, scale) => {
      const b = gAt(res);
      if (b < 0 || !(scale > 0)) return 0;
      f32[0] = scale;
      cx.h[b + G2D.SCALE] = f32i[0];
      return 1;
    });
    reg.def(i, "GetScale", (res) => {
      const b = gAt(res);
      if (b < 0) return 0;
      f32i[0] = cx.h[b + G2D.SCALE];
      return f32[0];
    });
  }
  reg.def(G[2], "SetLayerTransform", (res, scale, _origin, _translate) =>
    gAt(res) >= 0 && scale > 0 ? 1 : 0,
  );
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A module thread's frame (a Graphics2D Flush, a Graphics3D SwapBuffers) is done: frames
 * are paced at 60 a second from `device`'s last one. A blocking call waits here; a
 * callback is posted to the thread's loop. Returns what the PPB call returns.
 */
export function threadFrame(cx, device, func, userData) {
  const wait = Math.max(0, (device.lastFrame ?? 0) + 1000 / 60 - performance.now());
  device.lastFrame = performance.now() + wait;
  if (func === 0) {
    if (wait > 0) Atomics.wait(pause, 0, 0, wait);
    return E.OK;
  }
  loops.post(cx, cx.currentLoop, func, userData, E.OK, wait);
  return E.COMPLETIONPENDING;
}

/**
 * The instance worker's Graphics2D side: devices' queues and backing stores, the bound
 * device, and the canvas they are shown on.
 */
export class Gfx {
  /** @param {Int32Array} h the host block */
  constructor(h) {
    this.h = h; // the host block: the bound device is shared, BindGraphics may come from any thread
    this.devices = new Map();
    /** @type {OffscreenCanvas | null} */
    this.canvas = null; // an OffscreenCanvas from the page, when it gave one
    /** @type {OffscreenCanvasRenderingContext2D | null} */
    this.ctx2d = null; // the canvas's 2D context, made when a frame is first shown
    this.frames = 0;
  }

  get bound() {
    return Atomics.load(this.h, BOUND);
  }
  set bound(res) {
    Atomics.store(this.h, BOUND, res);
  }
  boundDevice() {
    return this.bound;
  }

  /**
   * A frame (a canvas or an ImageBitmap) shown if its device is bound: a Graphics3D
   * context's scaled to the canvas, a Graphics2D device's at its own size.
   */
  show3d(res, image, scaled = true) {
    if (this.bound !== res || !this.canvas) return;
    // Asked once: Firefox refuses a later getContext on the page's canvas after a
    // VideoFrame upload ("Cannot update created context to different thread").
    const c = (this.ctx2d ??= this.canvas.getContext("2d"));
    c.clearRect(0, 0, this.canvas.width, this.canvas.height);
    if (scaled) c.drawImage(image, 0, 0, this.canvas.width, this.canvas.height);
    else c.drawImage(image, 0, 0);
    this.frames++;
  }

  /** Applies a device's queued operations to its backing store. */
  apply(d) {
    for (const o of d.queue.splice(0)) {
      if (o.op === "replace") d.ctx.putImageData(o.image, 0, 0);
      else if (o.op === "paint") {
        const [sx, sy, sw, sh] = o.src ?? [0, 0, o.image.width, o.image.height];
        d.ctx.putImageData(o.image, o.x, o.y, sx, sy, sw, sh);
      } else if (o.op === "scroll") {
        const [rx, ry, rw, rh] = o.rect ?? [0, 0, d.store.width, d.store.height];
        const part = d.ctx.getImageData(rx, ry, rw, rh);
        d.ctx.putImageData(part, rx + o.dx, ry + o.dy);
      }
    }
  }

  /** Runs `done` at the next animation frame (a timer stands in when frames stop). */
  nextFrame(done) {
    let fired = false;
    const once = () => {
      if (fired) return;
      fired = true;
      done();
    };
    if (typeof requestAnimationFrame === "function") requestAnimationFrame(once);
    setTimeout(once, typeof requestAnimationFrame === "function" ? 50 : 16);
  }

  device(res, size) {
    let d = this.devices.get(res);
    if (!d) {
      const { w, h } = size();
      const store = new OffscreenCanvas(w, h);
      d = { queue: [], store, ctx: store.getContext("2d"), flushing: false };
      this.devices.set(res, d);
    }
    return d;
  }

  forget(res) {
    this.devices.delete(res);
    if (this.bound === res) this.bound = 0;
  }

  /** Applies the queue to the backing store, shows it if bound, completes at the next frame. */
  flush(res, d, done) {
    this.apply(d);
    if (this.bound === res && this.canvas) {
      const c = (this.ctx2d ??= this.canvas.getContext("2d"));
      c.clearRect(0, 0, this.canvas.width, this.canvas.height);
      c.drawImage(d.store, 0, 0);
      this.frames++;
    }
    // The next animation frame paces the app, as Chrome's did; a worker's frames stop
    // when its canvas is hidden or throttled, so a timer stands in after 50 ms.
    this.nextFrame(done);
  }
}
