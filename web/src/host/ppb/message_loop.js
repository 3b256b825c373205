// PPB_MessageLoop;1.0. A loop of a module thread is a queue in module memory (its block's
// address and the queue's state in the resource's words), so any thread can post to it
// and its own thread serves it inside Run, sleeping in Atomics.wait on the loop's wake
// word between items. The main thread's loop is the instance worker's event loop: work
// for it is posted there (CallOnMainThread's path).

import { FIELDS, KIND } from "../resources.js";
import { now } from "../clock.js";
import { PP_ERROR as E } from "../contract.js";
import { MAIN_LOOP } from "../shared.js";

// State words of a loop (after FIELDS).
export const LOOP = { TID: 0, QADDR: 1, QCAP: 2, QLEN: 3, QUIT: 4, DESTROYED: 5, RUNNING: 6, WAKE: 7 };
// A queued item: {func, user_data, result, kind, due (f64 ms), var value (8 bytes)}.
const ITEM = 32;
export const ITEM_CALL = 0; // func(user_data, result)
export const ITEM_MESSAGE = 1; // a Messaging 1.2 handler's HandleMessage(instance, user_data, &var)
export const ITEM_FINISH = 2; // the IO worker's answer to request `func`: result, payload (addr, len)


/**
 * Creates the main thread's loop and publishes it (MAIN_LOOP): attached to thread 0 from
 * the start, as Chrome's is_main_thread_loop_, so the rules below need no special case.
 */
export function createMainLoop(cx) {
  const res = cx.res.create(KIND.MESSAGE_LOOP);
  cx.h[loopAt(cx, res) + LOOP.TID] = 1; // thread 0, stored as tid + 1
  Atomics.store(cx.h, MAIN_LOOP, res);
  return res;
}

/** The base of a live loop's state words, or -1. */
export function loopAt(cx, res) {
  const b = cx.res.of(res, KIND.MESSAGE_LOOP);
  return b < 0 ? -1 : b + FIELDS;
}

/**
 * Queues an item on a thread's loop (not the main one); false if it is gone. `extra` =
 * {kind, varType, varValue} for a message, {kind: ITEM_FINISH, words: [addr, len]} for an
 * IO answer.
 */
export function post(cx, res, func, userData, result, delayMs, extra = null) {
  return cx.vars.locked(() => {
    const b = loopAt(cx, res);
    const h = cx.h;
    if (b < 0 || h[b + LOOP.DESTROYED]) return false;
    const len = h[b + LOOP.QLEN];
    if (len === h[b + LOOP.QCAP]) {
      const cap = Math.max(16, 2 * len);
      const addr = cx.heap.alloc(cap * ITEM);
      const old = h[b + LOOP.QADDR] >>> 0;
      if (old) {
        cx.mem.write(addr, cx.mem.bytes(old, len * ITEM));
        cx.heap.free(old, h[b + LOOP.QCAP] * ITEM);
      }
      h[b + LOOP.QADDR] = addr;
      h[b + LOOP.QCAP] = cap;
    }
    const p = (h[b + LOOP.QADDR] >>> 0) + len * ITEM;
    cx.mem.setI32(p, func);
    cx.mem.setI32(p + 4, userData);
    const message = extra?.kind === ITEM_MESSAGE;
    cx.mem.setI32(p + 8, message ? extra.varType : result);
    cx.mem.setI32(p + 12, extra ? extra.kind : ITEM_CALL);
    cx.mem.setF64(p + 16, now() + Math.max(0, delayMs));
    if (message && extra.varType === 4) cx.mem.setF64(p + 24, extra.varValue);
    else {
      const [w0, w1] = message ? [extra.varValue | 0, 0] : (extra?.words ?? [0, 0]);
      cx.mem.setI32(p + 24, w0);
      cx.mem.setI32(p + 28, w1);
    }
    h[b + LOOP.QLEN] = len + 1;
    Atomics.add(h, b + LOOP.WAKE, 1);
    Atomics.notify(h, b + LOOP.WAKE);
    return true;
  });
}

/** Frees a loop's queue once its last reference is gone (its state words at release). */
function freeLoop(cx, fields) {
  const addr = fields[LOOP.QADDR] >>> 0;
  if (addr) cx.vars.locked(() => cx.heap.free(addr, fields[LOOP.QCAP] * ITEM));
}

/** Serves the loop on this thread until PostQuit (PPB_MessageLoop.Run). */
function run(cx, res) {
  const h = cx.h;
  const b = loopAt(cx, res);
  if (b < 0) return E.BADRESOURCE;
  // As Chrome's MessageLoopResource::Run: a loop not current on this thread first (the
  // main thread's is current there from the start), then the main loop, which the browser
  // runs, or one already running.
  if (h[b + LOOP.TID] !== cx.tid + 1) return E.WRONG_THREAD;
  if (cx.isMain || h[b + LOOP.RUNNING]) return E.INPROGRESS;
  h[b + LOOP.RUNNING] = 1;
  for (;;) {
    /** @type {Uint8Array | "quit" | null} */
    let item = null;
    let wait = Infinity;
    let wake = 0;
    cx.vars.locked(() => {
      if (h[b + LOOP.QUIT]) {
        h[b + LOOP.QUIT] = 0;
        item = "quit";
        return;
      }
      const base = h[b + LOOP.QADDR] >>> 0;
      const len = h[b + LOOP.QLEN];
      let best = -1;
      let due = Infinity;
      for (let i = 0; i < len; i++) {
        const d = cx.mem.f64(base + i * ITEM + 16);
        if (d < due) {
          due = d;
          best = i;
        }
      }
      const t = now();
      if (best >= 0 && due <= t) {
        const p = base + best * ITEM;
        item = cx.mem.bytes(p, ITEM);
        // The last item takes its place (order is by due time, then by chance).
        if (best !== len - 1) cx.mem.write(p, cx.mem.bytes(base + (len - 1) * ITEM, ITEM));
        h[b + LOOP.QLEN] = len - 1;
      } else {
        wait = best >= 0 ? due - t : Infinity;
        wake = h[b + LOOP.WAKE];
      }
    });
    if (item === "quit") break;
    if (item) {
      const dv = new DataView(item.buffer);
      const func = dv.getUint32(0, true);
      const userData = dv.getUint32(4, true);
      const kind = dv.getInt32(12, true);
      if (kind === ITEM_MESSAGE) cx.deliverToHandler(func, userData, dv);
      else if (kind === ITEM_FINISH) cx.finishIo(func, dv.getInt32(8, true), dv.getUint32(24, true), dv.getUint32(28, true));
      else cx.runCallback(func, userData, dv.getInt32(8, true));
      continue;
    }
    Atomics.wait(h, b + LOOP.WAKE, wake, wait);
  }
  h[b + LOOP.RUNNING] = 0;
  return E.OK;
}

export function register(reg, cx) {
  reg.onRelease(KIND.MESSAGE_LOOP, (_res, fields) => freeLoop(cx, fields));
  const M = "PPB_MessageLoop;1.0";
  reg.def(M, "Create", (instance) => (instance === cx.instance ? cx.res.create(KIND.MESSAGE_LOOP) : 0));
  reg.def(M, "GetForMainThread", () => {
    const id = cx.mainLoop();
    cx.res.addRef(id);
    return id;
  });
  reg.def(M, "GetCurrent", () => {
    const id = cx.isMain ? cx.mainLoop() : cx.currentLoop;
    if (!id) return 0;
    cx.res.addRef(id);
    return id;
  });
  reg.def(M, "AttachToCurrentThread", (res) =>
    cx.vars.locked(() => {
      const b = loopAt(cx, res);
      if (b < 0) return E.BADRESOURCE;
      // The main thread's loop is attached from the start (createMainLoop).
      if (cx.isMain || cx.currentLoop || cx.h[b + LOOP.TID] !== 0) return E.INPROGRESS;
      cx.h[b + LOOP.TID] = cx.tid + 1;
      cx.currentLoop = res;
      // The loop belongs to this thread now: a reference of its own keeps it.
      cx.res.addRefLocked(res);
      return E.OK;
    }),
  );
  reg.def(M, "Run", (res) => run(cx, res));
  reg.def(M, "PostWork", (res, cb, delay) => {
    const func = cx.mem.u32(cb);
    const userData = cx.mem.u32(cb + 4);
    if (func === 0) return E.BADARGUMENT;
    const ms = Number(delay < 0n ? 0n : delay);
    if (res === cx.mainLoop()) {
      cx.callOnMainThread(func, userData, E.OK, ms);
      return E.OK;
    }
    if (loopAt(cx, res) < 0) return E.BADRESOURCE;
    return post(cx, res, func, userData, E.OK, ms) ? E.OK : E.FAILED;
  });
  reg.def(M, "PostQuit", (res, destroy) => {
    if (res === cx.mainLoop()) return E.WRONG_THREAD;
    return cx.vars.locked(() => {
      const b = loopAt(cx, res);
      if (b < 0) return E.BADRESOURCE;
      cx.h[b + LOOP.QUIT] = 1;
      if (destroy) cx.h[b + LOOP.DESTROYED] = 1;
      Atomics.add(cx.h, b + LOOP.WAKE, 1);
      Atomics.notify(cx.h, b + LOOP.WAKE);
      return E.OK;
    });
  });
}
