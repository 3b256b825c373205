// PPB_MouseCursor;1.0, PPB_MouseLock;1.0, PPB_Fullscreen;1.0 and PPB_Gamepad;1.0: what
// only the page can do (page-services.js does it). Calls are messages to the page on
// this worker's port; a completion (LockMouse) comes back from the page through the
// instance worker, which runs the callback on the main thread or posts it to the calling
// thread's loop. The page writes what the module reads at any time (fullscreen, screen
// size, gamepad samples) into the shared host block.

import { FIELDS, KIND } from "../resources.js";
import { FULLSCREEN, GAMEPAD, GAMEPAD_BYTES, GAMEPAD_ON, SCREEN_H, SCREEN_W } from "../shared.js";
import { TO_PAGE } from "../protocol.js";

const IMG = { FORMAT: 0, W: 1, H: 2, STRIDE: 3, ADDR: 4 }; // ppb/graphics.js's image data words
const BGRA = 0;

/** @param {import("../context.js").Context} cx the calling thread's context */
export function register(reg, cx) {
  reg.def("PPB_MouseCursor;1.0", "SetCursor", (instance, type, image, hotSpot) => {
    if (instance !== cx.instance || type < -1 || type > 42) return 0;
    if (type !== -1) {
      cx.toPage({ t: TO_PAGE.CURSOR, type });
      return 1;
    }
    // A custom cursor: the image's pixels (un-premultiplied RGBA) and its hot spot.
    const b = cx.res.of(image, KIND.IMAGE_DATA);
    if (b < 0 || hotSpot === 0) return 0;
    const f = b + FIELDS;
    const w = cx.h[f + IMG.W];
    const h = cx.h[f + IMG.H];
    if (w > 128 || h > 128) return 0; // browsers ignore larger cursors
    const px = cx.mem.bytes(cx.h[f + IMG.ADDR] >>> 0, w * h * 4);
    if (cx.h[f + IMG.FORMAT] === BGRA) {
      for (let k = 0; k < px.length; k += 4) [px[k], px[k + 2]] = [px[k + 2], px[k]];
    }
    const hx = cx.mem.i32(hotSpot);
    const hy = cx.mem.i32(hotSpot + 4);
    cx.toPage({ t: TO_PAGE.CURSOR, type, w, h, rgba: px, hx, hy });
    return 1;
  });

  const L = "PPB_MouseLock;1.0";
  reg.def(L, "LockMouse", (instance, cb) => (instance !== cx.instance ? -4 : cx.pageCall(cb, "lock-mouse")));
  reg.def(L, "UnlockMouse", (instance) => {
    if (instance === cx.instance) cx.toPage({ t: TO_PAGE.UNLOCK_MOUSE });
  });

  const F = "PPB_Fullscreen;1.0";
  reg.def(F, "IsFullscreen", (instance) => (instance === cx.instance ? Atomics.load(cx.h, FULLSCREEN) : 0));
  reg.def(F, "SetFullscreen", (instance, on) => {
    if (instance !== cx.instance) return 0;
    // Chrome refused a change to the state the instance is already in.
    if ((on ? 1 : 0) === Atomics.load(cx.h, FULLSCREEN)) return 0;
    cx.toPage({ t: TO_PAGE.FULLSCREEN, on: !!on });
    return 1;
  });
  reg.def(F, "GetScreenSize", (instance, size) => {
    if (instance !== cx.instance || size === 0) return 0;
    cx.mem.setI32(size, Atomics.load(cx.h, SCREEN_W));
    cx.mem.setI32(size + 4, Atomics.load(cx.h, SCREEN_H));
    return 1;
  });

  reg.def("PPB_Gamepad;1.0", "Sample", (instance, data) => {
    if (instance !== cx.instance || data === 0) return;
    // The first sample asks the page to start (once for all threads); until its first
    // frame the app reads no gamepads, as before a user touched one in Chrome.
    if (Atomics.compareExchange(cx.h, GAMEPAD_ON, 0, 1) === 0) cx.toPage({ t: TO_PAGE.GAMEPAD_START, sab: cx.hostSab, at: GAMEPAD * 4 });
    cx.mem.write(data, sampleGamepads(cx.h));
  });
}

/**
 * A consistent copy of the page's latest sample (a seqlock: retried while it writes).
 * @param {Int32Array} h the host block
 */
export function sampleGamepads(h) {
  const bytes = new Uint8Array(GAMEPAD_BYTES);
  const src = new Uint8Array(h.buffer, (GAMEPAD + 2) * 4, GAMEPAD_BYTES);
  for (let tries = 0; tries < 100; tries++) {
    const before = Atomics.load(h, GAMEPAD);
    if (before & 1) continue;
    bytes.set(src);
    if (Atomics.load(h, GAMEPAD) === before) return bytes;
  }
  return new Uint8Array(GAMEPAD_BYTES); // the page kept writing: no gamepads this time
}
