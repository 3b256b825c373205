// The instance worker: the module's main thread (tid 0). It instantiates the module over a
// new shared memory, has the page start the thread pool, runs `_start`; the runtime calls
// `pexe2wasm_ppapi.start`, which makes the start-up PPP calls and then unwinds the wasm
// stack (docs/JS-HOST.md, "The main module thread returns to its event loop"), so that from
// then on this worker's event loop drives the app: page messages, callbacks, events.

import { Context, INSTANCE, MODULE, ThreadExit } from "./context.js";
import { createEvent } from "./ppb/input.js";
import { createView } from "./ppb/view.js";
import { didCreateSpace, handleMessage, pppInterface } from "./ppp.js";
import { createMainLoop, ITEM_MESSAGE, post } from "./ppb/message_loop.js";
import { H } from "./ppb/messaging.js";
import { openDocument } from "./ppb/url.js";
import { PostedTasks } from "./posted.js";
import { createSharedBlock, FULLSCREEN, HANDLER, NEXT_TID, SCREEN_H, SCREEN_W } from "./shared.js";
import { Exit } from "./wasi.js";
import { importedMemory } from "./wasm-info.js";
import { convertedModule } from "../convert/converter.js";
import { FROM_IO, FROM_IO_PORT, isKind, TO_INSTANCE, TO_IO, TO_MAIN, TO_PAGE, unknownMessage } from "./protocol.js";

/** Unwinds `_start` once the instance is up; caught below, never an error. */
class StartUnwind extends Error {}

const state = {
  cx: null,
  ppp: null,
  started: false,
  ended: false,
  pending: [],
  view: null,
  threadsReady: null, // resolved (onThreadsReady) by the page's "threads-ready"
  onThreadsReady: null,
  documentUrl: null, // the document the instance was made for (HandleDocumentLoad), if any
};

function toPage(msg, transfer) {
  self.postMessage(msg, transfer ?? []);
}

/** Ends the instance: tells the page, stops every thread. */
function end(msg) {
  if (state.ended) return;
  state.ended = true;
  try {
    state.cx?.flushOutput?.();
  } catch {
    // nothing more can be said
  }
  // The page stops the host workers it created for this instance when it reads this.
  toPage(msg);
}

/** Runs module code from the event loop; an exit or a trap ends the instance. */
function guarded(f) {
  if (state.ended) return;
  try {
    f();
  } catch (e) {
    fail(e);
  }
}

function fail(e) {
  if (e instanceof Exit) end({ t: TO_PAGE.EXIT, code: e.code });
  else if (e instanceof ThreadExit) end({ t: TO_PAGE.EXIT, code: 0 });
  else end({ t: TO_PAGE.CRASH, error: String(e?.message ?? e), stack: String(e?.stack ?? "") });
}

function deliverMessage(data) {
  const cx = state.cx;
  // A Messaging 1.2 handler takes the message on its own thread's loop.
  const handler = cx.vars.locked(() =>
    cx.h[HANDLER + H.ACTIVE] ? { loop: cx.h[HANDLER + H.LOOP], user: cx.h[HANDLER + H.USER], fn: cx.h[HANDLER + H.HANDLE] } : null,
  );
  if (handler) {
    const v = cx.vars.fromJS(data);
    const extra = { kind: ITEM_MESSAGE, varType: v.t, varValue: v.v };
    if (!post(cx, handler.loop, handler.fn, handler.user, 0, 0, extra)) cx.vars.release(v);
    return;
  }
  if (!state.ppp.messaging) {
    cx.console(2, "the app has no PPP_Messaging: the message is dropped, as in Chrome");
    return;
  }
  // The app is given the message's reference (handleMessage says why).
  handleMessage(cx, state.ppp.messaging, data);
}

/** An input event from the page: PPP_InputEvent.HandleInputEvent, with the event as a resource. */
function handleInput(e) {
  const cx = state.cx;
  if (!state.ppp.inputEvent) return;
  const res = createEvent(cx, e);
  try {
    const handle = cx.mem.u32(state.ppp.inputEvent);
    const handled = cx.exports.__ppp_call_ii_i(handle, INSTANCE, res);
    toPage({ t: TO_PAGE.INPUT_HANDLED, seq: e.seq, handled: handled !== 0 });
  } finally {
    cx.releaseResource(res);
  }
}

function changeView(view) {
  const cx = state.cx;
  state.view = view;
  const res = createView(cx, view);
  try {
    if (state.ppp.instance10) {
      const r = new Int32Array([...view.rect, ...view.clip]);
      cx.frames.call(cx.exports, "__ppp_callbuf_iii_v", [state.ppp.didChangeView, 32, 6, INSTANCE, 0, 16], () =>
        new Uint8Array(r.buffer),
      );
    } else {
      cx.exports.__ppp_call_ii_v(state.ppp.didChangeView, INSTANCE, res);
    }
  } finally {
    cx.releaseResource(res);
  }
}

/** `pexe2wasm_ppapi.start`: the start-up PPP calls, then the unwind. */
function onStart(cx, init, _shutdown, gi) {
  const ex = cx.exports;
  createMainLoop(cx);
  const r = ex.__ppp_initialize_module(init, MODULE);
  if (r !== 0) {
    end({ t: TO_PAGE.ERROR, error: `the app's PPP_InitializeModule failed (${r})` });
    throw new StartUnwind();
  }
  const ppp = { instance10: false };
  ppp.instance = pppInterface(cx.frames, ex, gi, "PPP_Instance;1.1");
  if (!ppp.instance) {
    ppp.instance = pppInterface(cx.frames, ex, gi, "PPP_Instance;1.0");
    ppp.instance10 = ppp.instance !== 0;
  }
  if (!ppp.instance) {
    end({ t: TO_PAGE.ERROR, error: "the app offers no PPP_Instance, so no instance can be made" });
    throw new StartUnwind();
  }
  ppp.messaging = pppInterface(cx.frames, ex, gi, "PPP_Messaging;1.0");
  ppp.inputEvent = pppInterface(cx.frames, ex, gi, "PPP_InputEvent;0.1");
  ppp.mouseLock = pppInterface(cx.frames, ex, gi, "PPP_MouseLock;1.0");
  const t = ppp.instance;
  [ppp.didCreate, ppp.didDestroy, ppp.didChangeView, ppp.didChangeFocus] = [0, 4, 8, 12].map((o) =>
    cx.mem.u32(t + o),
  );
  state.ppp = ppp;

  const attrs = state.attrs;
  const space = didCreateSpace(attrs);
  const n = attrs.length;
  const created = cx.frames.call(
    ex,
    "__ppp_callbuf_iiii_i",
    [ppp.didCreate, space.size, 4 | 8, INSTANCE, n, 0, 4 * n],
    space.fill,
  );
  toPage({ t: TO_PAGE.CREATED, ok: !!created });
  if (!created) {
    end({ t: TO_PAGE.ERROR, error: "the app's DidCreate returned false: the instance failed to start" });
    throw new StartUnwind();
  }
  changeView(state.initialView);
  ex.__ppp_call_ii_v(ppp.didChangeFocus, INSTANCE, 0);
  state.started = true;
  toPage({ t: TO_PAGE.LOAD });
  if (state.documentUrl) handleDocumentLoad(cx, ppp);
  throw new StartUnwind();
}

/**
 * PPP_Instance.HandleDocumentLoad(instance, loader) for an instance made for a document (an
 * embed of a type the app's `nacl_modules` handles, or a document opened in its viewer):
 * the loader comes open on the document, as Chrome gave it. The module owns the loader's
 * reference; a module that refuses the document (PP_FALSE) is told on the console.
 */
function handleDocumentLoad(cx, ppp) {
  const at = cx.mem.u32(ppp.instance + 16);
  openDocument(cx, state.documentUrl, (loader, r) => {
    if (!loader) {
      cx.console(3, `pexe2wasm: the document ${state.documentUrl} could not be loaded for the module (error ${r})`);
      return;
    }
    guarded(() => {
      if (!at || !cx.exports.__ppp_call_ii_i(at, INSTANCE, loader)) {
        cx.console(2, `pexe2wasm: the module did not take the document ${state.documentUrl} (HandleDocumentLoad returned false)`);
      }
    });
  });
}

/** Starts the IO worker (io-worker.js); resolves once it can take requests. */
// The page creates the host workers (the IO worker, thread workers), not this worker:
// Firefox sometimes hangs for good in a worker's `new Worker` (one start in about ten in
// the browser tests: the constructor never returns and this worker's event loop stops).
// The page posts the worker its first message (`init`, with the module and memory, which
// Firefox cannot send over a MessagePort), answers `spawn` with a port to the new worker
// (parent.js), and reports the worker's errors (`worker-error`). Thread workers are not
// asked for: the page keeps their pool full by itself (`threads` below).
const spawns = new Map(); // spawn id -> {resolve (at "spawned"), onError (any time)}
let nextSpawn = 1;

function spawnWorker(script, init, transfer, onError) {
  const id = nextSpawn++;
  return new Promise((resolve) => {
    spawns.set(id, { resolve, onError });
    toPage({ t: TO_PAGE.SPAWN, id, script, init, transfer }, transfer);
  });
}

/** Answers from the page about the workers it created; false for any other message. */
function onSpawnMessage(m) {
  if (m.t === TO_INSTANCE.SPAWNED) {
    spawns.get(m.id)?.resolve({ id: m.id, port: m.port });
    return true;
  }
  if (m.t === TO_INSTANCE.WORKER_ERROR) {
    spawns.get(m.id)?.onError(m.message);
    return true;
  }
  return false;
}

function startIoWorker(module, memory, hostSab, net) {
  return new Promise((resolve, reject) => {
    const onError = (msg) => reject(new Error(msg || "the IO worker failed to load"));
    const init = { t: TO_IO.INIT, module, memory, hostSab, ...net };
    spawnWorker("io-worker.js", init, [], onError).then(({ port }) => {
      state.io = port;
      port.onmessage = (e) => onIoMessage(e.data, resolve);
    });
  });
}

/** The IO worker's message on its parent line; `ready` resolves its start. */
export function onIoMessage(m, ready) {
  switch (m?.t) {
    case FROM_IO.READY:
      ready();
      break;
    case FROM_IO.PAGE:
      toPage(m.msg);
      break;
    case FROM_IO.CRASH:
      // The IO worker could not read a message: the instance cannot go on.
      end(m);
      break;
    default:
      unknownMessage("IO worker -> instance worker", m?.t);
      break;
  }
}

/** The IO worker's answer on the main module thread's port. */
export function onIoAnswer(m) {
  if (m?.t === FROM_IO_PORT.IO) guarded(() => state.cx.finishIo(m.id, m.r, m.addr, m.len));
  else unknownMessage("IO worker -> module thread", m?.t);
}

/** A new port to the IO worker, for a module thread. */
function ioPort() {
  const ch = new MessageChannel();
  state.io.postMessage({ t: TO_IO.PORT, port: ch.port2 }, [ch.port2]);
  return ch.port1;
}

/**
 * A thread worker's line to this worker (the page made it and sent this end: "thread-port"):
 * what must run on the main module thread. The messages wait on the port while module code
 * holds this worker's event loop.
 */
export function onThreadMessage(m) {
  switch (m?.t) {
    case TO_MAIN.CALL:
      setTimeout(() => guarded(() => state.cx.runCallback(m.func, m.userData, m.result)), m.delay);
      break;
    case TO_MAIN.FRAME:
      // A Graphics3D or Graphics2D frame drawn on a module thread (ppb/gl/graphics3d.js, ppb/graphics.js).
      if (!state.ended) state.cx.gfx.show3d(m.res, m.bitmap, m.scaled !== false);
      m.bitmap.close();
      break;
    default:
      unknownMessage("module thread -> main module thread", m?.t);
      break;
  }
}

/** The module `pexe2wasm web` converted beforehand (the .wasm beside the pexe), compiled. */
async function preconverted(url) {
  const resp = await fetch(url);
  if (!resp.ok) throw new Error(`${url}: HTTP ${resp.status}`);
  // Streaming compilation lets the browser cache the compiled code with the response, so
  // a second visit starts without compiling; the bytes are read too, for the memory's
  // limits. A server that does not send application/wasm gets a plain compile.
  const streamed = WebAssembly.compileStreaming(resp.clone()).catch(() => null);
  const bytes = await resp.arrayBuffer();
  if (!importedMemory(bytes)?.shared) throw new Error(`${url} is not a converted Pepper module (no shared memory import)`);
  toPage({ t: TO_PAGE.PROGRESS, what: "compile", bytes: bytes.byteLength });
  return { module: (await streamed) ?? (await WebAssembly.compile(bytes)), bytes };
}

/** The pexe converted here, in this worker, or taken from the cache (convert/converter.js). */
async function convertHere(m) {
  const got = await convertedModule(m.pexeUrl, {
    smallCode: m.smallCode === true,
    progress: (p) => toPage({ t: TO_PAGE.PROGRESS, what: p.what, bytes: p.loaded, total: p.total }),
  });
  toPage({ t: TO_PAGE.CONVERTED, source: got.source, ms: got.ms, bytes: got.bytes.byteLength });
  return got;
}

async function init(m) {
  state.attrs = m.attrs ?? [];
  state.documentUrl = m.documentUrl ?? null;
  state.initialView = m.view;
  state.args = m.args ?? ["app"];
  state.threadsReady = new Promise((resolve) => {
    state.onThreadsReady = resolve;
  });
  toPage({ t: TO_PAGE.PROGRESS, what: "fetch" });
  const { module, bytes } = m.pexeUrl ? await convertHere(m) : await preconverted(m.url);
  const mt = importedMemory(bytes);
  if (!mt || !mt.shared) throw new Error(`${m.pexeUrl ?? m.url} is not a converted Pepper module (no shared memory import)`);
  toPage({ t: TO_PAGE.PROGRESS, what: "compiled" });
  const maximum = Math.max(mt.min, Math.min(mt.max ?? 65536, m.maxPages ?? 16384));
  const memory = new WebAssembly.Memory({ initial: mt.min, maximum, shared: true });
  const hostSab = createSharedBlock();
  const h = new Int32Array(hostSab);
  h[NEXT_TID] = 1;
  h[SCREEN_W] = m.screen?.[0] ?? 0;
  h[SCREEN_H] = m.screen?.[1] ?? 0;
  const cx = new Context({ isMain: true, tid: 0, memory, hostSab, toPage, args: state.args, onStart });
  state.cx = cx;
  cx.gfx.canvas = m.canvas ?? null;
  cx.posted = new PostedTasks(guarded);
  toPage({ t: TO_PAGE.PROGRESS, what: "io-worker" });
  await startIoWorker(module, memory, hostSab, { urlMap: m.urlMap ?? {}, pageUrl: m.pageUrl, refuseUnmapped: !!m.refuseUnmapped });
  cx.ioPort = ioPort();
  cx.ioPort.onmessage = (e) => onIoAnswer(e.data);
  // The page starts the thread pool and keeps it full from then on (embed.js): everything
  // a thread worker's start needs is in this message, so no refill waits for this
  // worker's event loop. The module starts once the first workers are ready.
  // A module that never starts threads (a translated nexe: no wasi_thread_start) gets no
  // pool, whose workers, instantiating it later, would write its data segments again over
  // the running program's memory.
  if (WebAssembly.Module.exports(module).some((e) => e.name === "wasi_thread_start")) {
    toPage({ t: TO_PAGE.THREADS, module, memory, hostSab, args: state.args });
    await state.threadsReady;
  }
  toPage({ t: TO_PAGE.PROGRESS, what: "instantiate" });
  const instance = await WebAssembly.instantiate(module, cx.imports(module));
  cx.setExports(instance.exports);
  toPage({ t: TO_PAGE.PROGRESS, what: "start" });
  try {
    /** @type {() => void} */ (instance.exports._start)();
    // _start returned: the app's main ended without ever starting an instance.
    end({ t: TO_PAGE.EXIT, code: 0 });
  } catch (e) {
    if (!(e instanceof StartUnwind)) return fail(e);
  }
  for (const p of state.pending.splice(0)) onPage(p);
}

function onPage(m) {
  if (state.ended) return;
  if (!state.started) {
    state.pending.push(m);
    return;
  }
  switch (m.t) {
    case TO_INSTANCE.MESSAGE:
      guarded(() => deliverMessage(m.data));
      break;
    case TO_INSTANCE.VIEW:
      guarded(() => changeView(m.view));
      break;
    case TO_INSTANCE.INPUT:
      guarded(() => handleInput(m.event));
      break;
    case TO_INSTANCE.PAGE_REPLY: {
      // A page call's answer (ppb/page.js): the callback on its thread.
      const d = m.done;
      if (d.loop === 0) guarded(() => state.cx.runCallback(d.func, d.userData, m.result));
      else post(state.cx, d.loop, d.func, d.userData, m.result, 0);
      break;
    }
    case TO_INSTANCE.FULLSCREEN_STATE:
      Atomics.store(state.cx.h, FULLSCREEN, m.on ? 1 : 0);
      break;
    case TO_INSTANCE.MOUSE_LOCK_LOST:
      // PPP_MouseLock;1.0 MouseLockLost(instance), if the app has it.
      if (state.ppp.mouseLock) guarded(() => state.cx.exports.__ppp_call_i_v(state.cx.mem.u32(state.ppp.mouseLock), INSTANCE));
      break;
    case TO_INSTANCE.FOCUS:
      guarded(() => state.cx.exports.__ppp_call_ii_v(state.ppp.didChangeFocus, INSTANCE, m.has ? 1 : 0));
      break;
    default:
      unknownMessage("page -> instance worker", m?.t);
      break;
  }
}

/** The page's message to this worker. */
export function onPageMessage(m) {
  // An unknown kind is told now, not when the instance is up (onPage queues until then).
  if (!isKind(TO_INSTANCE, m?.t)) return unknownMessage("page -> instance worker", m?.t);
  if (onSpawnMessage(m)) return;
  if (m.t === TO_INSTANCE.THREAD_PORT) {
    m.port.onmessage = (ev) => onThreadMessage(ev.data);
  } else if (m.t === TO_INSTANCE.THREADS_READY) {
    state.onThreadsReady?.();
  } else if (m.t === TO_INSTANCE.INIT) {
    init(m).catch((err) => end({ t: TO_PAGE.ERROR, error: String(err?.message ?? err) }));
  } else {
    onPage(m);
  }
}

self.onmessage = (e) => onPageMessage(e.data);
