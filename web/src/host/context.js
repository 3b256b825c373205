// What one worker of an instance knows: the shared memory and host block, the var and
// resource tables over them, its role (the module's main thread or another), its port to
// the page, and the import object its instance of the module is made with. Both kinds of
// worker (instance-worker.js, thread-worker.js) build one.

import { Heap } from "./heap.js";
import { Mem } from "./mem.js";
import { PppFrames } from "./ppp.js";
import { Registry } from "./registry.js";
import { PostedTasks } from "./posted.js";
import { Resources } from "./resources.js";
import { CREATOR, MAIN_LOOP } from "./shared.js";
import { Vars } from "./vars.js";
import { wasiImports } from "./wasi.js";
import { spawnThread } from "./threads.js";
import * as core from "./ppb/core.js";
import * as audio from "./ppb/audio.js";
import * as files from "./ppb/files.js";
import * as gl from "./ppb/gl/index.js";
import * as graphics from "./ppb/graphics.js";
import * as input from "./ppb/input.js";
import * as loops from "./ppb/message_loop.js";
import * as messaging from "./ppb/messaging.js";
import * as net from "./ppb/net.js";
import * as touchIme from "./ppb/touch_ime.js";
import * as page from "./ppb/page.js";
import * as textInput from "./ppb/text_input.js";
import * as url from "./ppb/url.js";
import * as vars from "./ppb/var.js";
import * as video from "./ppb/video.js";
import * as websocket from "./ppb/websocket.js";
import * as view from "./ppb/view.js";
import { COMPLETION_CALLBACKS, PP_COMPLETIONCALLBACK_FLAG, PP_ERROR as E } from "./contract.js";
import { REPLY_TO, TO_IO_PORT, TO_MAIN, TO_PAGE } from "./protocol.js";

export const MODULE = 1;
export const INSTANCE = 2;

/** Thrown by `pexe2wasm.thread_exit`: the thread's normal end. */
export class ThreadExit extends Error {}

/** Every PPB family this host implements, in registration order. */
export const FAMILIES = [core, vars, messaging, loops, view, input, graphics, gl, files, net, websocket, url, page, audio, touchIme, textInput, video];

/** The registry of PPB functions for `cx` (the description check lists it too). */
export function buildRegistry(cx) {
  const reg = new Registry();
  for (const f of FAMILIES) f.register(reg, cx);
  return reg;
}

export class Context {
  /**
   * opts: {isMain, tid, memory, hostSab, toPage(msg), toMain(msg, transfer) (threads), args,
   * onStart(cx, init, shutdown, getInterface) (main)}
   */
  constructor(opts) {
    this.isMain = opts.isMain;
    this.tid = opts.tid;
    this.instance = INSTANCE;
    this.memory = opts.memory;
    this.hostSab = opts.hostSab;
    this.h = new Int32Array(opts.hostSab);
    this.mem = new Mem(opts.memory);
    this.heap = new Heap(this.h, this.mem, null);
    this.vars = new Vars(this.h, this.mem, this.heap);
    this.res = new Resources(this.h, this.vars);
    this.frames = new PppFrames(this.mem);
    this.toPage = opts.toPage;
    this.toMain = opts.toMain ?? null;
    this.args = opts.args ?? ["app"];
    this.onStart = opts.onStart ?? null;
    this.asked = new Set();
    this.gfx = new graphics.Gfx(this.h);
    this.currentLoop = 0; // the message loop attached to this thread
    this.ioPort = null; // a MessagePort to the IO worker (set by the worker)
    /** @type {Int32Array | null} */
    this.cell = null; // Int32Array over this thread's answer cell (blocking calls)
    this.ioPending = new Map(); // request id -> finish(result, payload)
    this.ioSeq = 0;
    this.exports = null;
    this.posted = new PostedTasks();
    this.registry = buildRegistry(this);
  }

  setExports(exports) {
    this.exports = exports;
    this.heap.exports = exports;
  }

  console(level, text) {
    this.toPage({ t: TO_PAGE.CONSOLE, level, text });
  }
  output(fd, text) {
    this.toPage({ t: TO_PAGE.OUTPUT, fd, text });
  }

  /** The main thread's message loop (made by the instance worker at start). */
  mainLoop() {
    return Atomics.load(this.h, MAIN_LOOP);
  }

  /** Runs a queued page message: a Messaging 1.2 handler's HandleMessage(instance, user_data, &var). */
  deliverToHandler(handleMessage, userData, item) {
    const t = item.getInt32(8, true);
    const v = { t, v: t === 4 ? item.getFloat64(24, true) : item.getInt32(24, true) };
    const bytes = new Uint8Array(16);
    const dv = new DataView(bytes.buffer);
    dv.setInt32(0, v.t, true);
    if (t === 4) dv.setFloat64(8, v.v, true);
    else dv.setInt32(8, v.v, true);
    try {
      this.frames.call(this.exports, "__ppp_callbuf_iii_v", [handleMessage, 16, 4, this.instance, userData, 0], () => bytes);
    } finally {
      this.vars.release(v);
    }
  }

  /**
   * Starts IO worker request `op` for a PPB call with completion callback at `cbPtr`, as
   * Chrome's rules say: a blocking call (NULL func) waits here, and is refused on the
   * main thread; a callback needs the main thread or a thread with a message loop, where
   * it runs. `finish(result, payload)` turns the worker's answer into the call's result
   * (on this thread, so it may call into the module). Returns what the PPB call returns.
   * @param {(result: number, payload?: any) => number} [finish]
   */
  io(cbPtr, op, a, finish = (r) => r) {
    const func = this.mem.u32(cbPtr);
    const userData = this.mem.u32(cbPtr + 4);
    const refused = this.callbackRefusal(cbPtr);
    if (refused) return refused;
    const id = ++this.ioSeq;
    if (func === 0) {
      Atomics.store(this.cell, 0, 0);
      this.ioPort.postMessage({ t: TO_IO_PORT.REQUEST, id, op, a, reply: { to: REPLY_TO.CELL } });
      while (Atomics.load(this.cell, 0) === 0) Atomics.wait(this.cell, 0, 0);
      return finish(this.cell[1], this.takePayload(this.cell[2] >>> 0, this.cell[3]));
    }
    this.ioPending.set(id, (r, payload) => this.runCallback(func, userData, finish(r, payload)));
    const reply = this.isMain ? { to: REPLY_TO.PORT } : { to: REPLY_TO.LOOP, loop: this.currentLoop };
    this.ioPort.postMessage({ t: TO_IO_PORT.REQUEST, id, op, a, reply });
    return E.COMPLETIONPENDING;
  }

  /**
   * What Chrome refused a call with before running it, for the completion callback at
   * `cbPtr` on this thread (0: nothing): a blocking callback on the main thread, a
   * non-blocking one on a thread without a message loop. A call that finds its resource
   * bad returns PP_ERROR_BADRESOURCE instead (enter.cc: the resource error wins), so it
   * checks the resource first.
   */
  callbackRefusal(cbPtr) {
    const func = this.mem.u32(cbPtr);
    if (func === 0 && this.isMain) return E.BLOCKS_MAIN_THREAD;
    if (func !== 0 && !this.isMain && !this.currentLoop) return E.NO_MESSAGE_LOOP;
    return 0;
  }

  /** Main thread: IO worker request `op` answered to `finish(result, payload)`, for the host's own use. */
  ioAsync(op, a, finish) {
    const id = ++this.ioSeq;
    this.ioPending.set(id, finish);
    this.ioPort.postMessage({ t: TO_IO_PORT.REQUEST, id, op, a, reply: { to: REPLY_TO.PORT } });
  }

  /**
   * A call the page completes (LockMouse): the page runs it and answers the instance
   * worker, which runs the callback here (main thread) or posts it to this thread's loop.
   * Blocking is refused on the main thread, as every blocking call is; a thread must have
   * a loop (a blocking page call from a thread is not supported: PP_ERROR_NOTSUPPORTED).
   */
  pageCall(cbPtr, what) {
    const func = this.mem.u32(cbPtr);
    const userData = this.mem.u32(cbPtr + 4);
    if (func === 0) return this.isMain ? E.BLOCKS_MAIN_THREAD : E.NOTSUPPORTED;
    if (!this.isMain && !this.currentLoop) return E.NO_MESSAGE_LOOP;
    this.toPage({ t: TO_PAGE.PAGE_CALL, what, done: { loop: this.isMain ? 0 : this.currentLoop, func, userData } });
    return E.COMPLETIONPENDING;
  }

  /** A request with no answer (FileIO.Close). */
  ioTell(op, a) {
    this.ioPort?.postMessage({ t: TO_IO_PORT.REQUEST, id: 0, op, a, reply: null });
  }

  /** The IO worker's answer to request `id` arrived (port or message loop). */
  finishIo(id, result, addr, len) {
    const f = this.ioPending.get(id);
    this.ioPending.delete(id);
    const payload = this.takePayload(addr, len);
    if (f) f(result, payload);
  }

  /** Copies a payload out of module memory and frees its block. */
  takePayload(addr, len) {
    if (!len) return null;
    const bytes = this.mem.bytes(addr, len);
    this.vars.locked(() => this.heap.free(addr, len));
    return bytes;
  }

  /**
   * `impl` (a PPB function whose completion callback is wasm parameter `at`) answered as
   * Chrome's EnterBase::SetResult did (ppapi/thunk/enter.cc): a call that ended at once
   * (any result but PP_OK_COMPLETIONPENDING) with a required callback returns
   * PP_OK_COMPLETIONPENDING and the callback runs later with that result; with an optional
   * (PP_COMPLETIONCALLBACK_FLAG_OPTIONAL) or blocking callback the result is returned and
   * nothing is called back. The callback's own refusals (a blocking call on the main
   * thread, no message loop) are returned as they are: Chrome never ran the callback then.
   * @param {(...args: number[]) => number} impl
   * @param {number} at
   */
  withCallbackRules(impl, at) {
    return (...args) => {
      const r = impl(...args);
      if (r === E.COMPLETIONPENDING || r === E.BLOCKS_MAIN_THREAD || r === E.NO_MESSAGE_LOOP || r === E.WOULD_BLOCK_THREAD) {
        return r;
      }
      const cb = args[at];
      const func = this.mem.u32(cb);
      if (func === 0 || (this.mem.u32(cb + 8) & PP_COMPLETIONCALLBACK_FLAG.OPTIONAL) !== 0) return r;
      const userData = this.mem.u32(cb + 4);
      if (this.isMain) this.schedule(() => this.runCallback(func, userData, r), 0);
      else if (!this.currentLoop || !loops.post(this, this.currentLoop, func, userData, r, 0)) return r;
      return E.COMPLETIONPENDING;
    };
  }

  /** Runs a completion callback on this thread now. */
  runCallback(func, userData, result) {
    this.exports.__ppp_call_ii_v(func, userData, result);
  }

  callOnMainThread(func, userData, result, delay) {
    if (this.isMain) {
      this.schedule(() => this.runCallback(func, userData, result), delay);
    } else {
      this.toMain({ t: TO_MAIN.CALL, func, userData, result, delay });
    }
  }

  /**
   * Main thread: runs f from the event loop after `delay` ms, behind every task posted
   * before it (posted.js; the instance worker's queue runs each under its guard).
   * @param {() => void} f
   * @param {number} delay
   */
  schedule(f, delay) {
    this.posted.post(f, delay);
  }

  /**
   * Asks the page to refill the thread pool (embed.js): straight to the page, whose event
   * loop is free whatever this thread or the main one is doing.
   */
  refillThreads() {
    this.toPage({ t: TO_PAGE.REFILL });
  }

  /**
   * Drops a reference to a resource; the last one frees what it held, through the release
   * hook of the family that owns its kind (registry.js `onRelease`).
   * @param {number} res
   */
  releaseResource(res) {
    const gone = this.res.release(res);
    if (gone) this.registry.released(res, gone.kind, gone.fields);
  }

  requestInput(instance, classes, filtering) {
    if (instance !== this.instance) return E.BADARGUMENT;
    this.toPage({ t: TO_PAGE.INPUT_REQUEST, classes: classes >>> 0, filtering });
    return E.OK;
  }
  clearInput(instance, classes) {
    if (instance === this.instance) this.toPage({ t: TO_PAGE.INPUT_CLEAR, classes: classes >>> 0 });
  }

  /** `pexe2wasm_ppapi.get_interface(name, len)`. */
  getInterface(name, len) {
    const s = this.mem.string(name >>> 0, Math.min(Math.max(len, 0), 255));
    const offered = this.registry.offers(s);
    if (!offered && !this.asked.has(s)) {
      this.asked.add(s);
      this.toPage({ t: TO_PAGE.MISSING, name: s });
    }
    return offered ? 1 : 0;
  }

  /**
   * The import object for `module`: every import it names, known or a trap.
   * @param {WebAssembly.Module} module
   * @returns {WebAssembly.Imports}
   */
  imports(module) {
    const wasi = wasiImports(this);
    this.flushOutput = wasi.flush;
    const groups = {
      wasi_snapshot_preview1: wasi.imports,
      wasi: { "thread-spawn": (arg) => spawnThread(this, arg) },
      pexe2wasm: {
        thread_exit: () => {
          throw new ThreadExit("thread_exit");
        },
        cpu_count: () => Math.max(1, navigator.hardwareConcurrency | 0),
      },
      pexe2wasm_ppapi: {
        start: (init, shutdown, gi, bgi) => {
          if (!this.onStart) throw new Error("ppapi_start called on a thread other than the main one");
          return this.onStart(this, init, shutdown, gi, bgi);
        },
        get_interface: (name, len) => this.getInterface(name, len),
        register_thread_creator: (create, join) => {
          // Shared: StartPlayback may come from any thread.
          Atomics.store(this.h, CREATOR, create);
          Atomics.store(this.h, CREATOR + 1, join);
        },
        host_thread: (arg) => audio.hostThread(this, arg),
        fill: (ptr, n) => this.frames.fill(ptr, n),
        done: (ptr, n) => this.frames.done(ptr, n),
        wait: () => {},
      },
      env: { memory: this.memory },
    };
    /** @type {WebAssembly.Imports} */
    const out = {};
    for (const imp of WebAssembly.Module.imports(module)) {
      const m = (out[imp.module] ??= {});
      if (imp.kind !== "function") {
        if (imp.module === "env" && imp.name === "memory") m.memory = this.memory;
        continue;
      }
      const known = groups[imp.module]?.[imp.name];
      if (known) {
        m[imp.name] = known;
        continue;
      }
      const ppb = this.registry.get(imp.module, imp.name);
      if (ppb) {
        const at = COMPLETION_CALLBACKS[imp.module]?.[imp.name];
        m[imp.name] = at === undefined ? ppb.impl : this.withCallbackRules(ppb.impl, at);
        continue;
      }
      // An interface this host lacks: the app got NULL for it, so nothing calls this.
      const what = `${imp.module}.${imp.name}`;
      m[imp.name] = () => {
        throw new Error(`${what} is not offered by the browser host`);
      };
    }
    return out;
  }
}
