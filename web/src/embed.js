// The <embed> replacement: include once in a page (as a module script) and every
// <embed>/<object> of type application/x-pnacl (or x-nacl, a native app's), present now
// or added later, runs its
// converted module in workers (host/instance-worker.js), keeping the NaCl element's API:
// postMessage, readyState, lastError, exitStatus, and the events loadstart, progress,
// load, loadend, error, crash and message. docs/JS-HOST.md tells how.

import "./advertise.js";
import { TextInput } from "./ime.js";
import { cursorCss, pageCall, setFullscreen, startAudio, startGamepads } from "./page-services.js";
import { InOrder } from "./host/in-order.js";
import { ThreadPool } from "./host/threads.js";
import { mapUrl, urlMapOf } from "./host/io/urlmap.js";
import { pageLoadId } from "./compat/sandbox-layout.js";
import { hostWorker } from "./workers.js";
import { FROM_THREAD, TO_HOST_WORKER, TO_INSTANCE, TO_IO, TO_PAGE, TO_THREAD, unknownMessage } from "./host/protocol.js";

/** The types Chrome's NaCl plugin took: pexes, and native nexes (Web Store apps). */
const MIMES = ["application/x-pnacl", "application/x-nacl"];
const HOST = new URL("./host/", import.meta.url);
/** The workers an instance worker may ask the page to create (Instance.spawn). */
const HOST_WORKERS = new Set(["io-worker.js"]);

/**
 * The page's configuration: what `pexe2wasm web` wrote into the page, `<script
 * type="application/json" id="pexe2wasm-config">{"preconverted": true, "urlMap": {FROM: TO},
 * "refuseUnmapped": true}</script>` (its --url-map and --refuse-unmapped), with `window.pexe2wasmConfig` (set
 * by the page before pexe2wasm.js: the same keys, and `preconverted`, `threads`,
 * `smallCode`; docs/DROP-IN.md) over it; {} without either.
 */
function pageConfig() {
  const own = globalThis.pexe2wasmConfig;
  const json = jsonConfig();
  if (!own || typeof own !== "object") return json;
  const map = { ...json.urlMap };
  for (const [from, to] of Object.entries(own.urlMap ?? {})) {
    if (typeof to === "string") map[from] = new URL(to, document.baseURI).href;
  }
  return { ...json, ...own, urlMap: map, base: json.base ?? document.baseURI };
}

/** The JSON config element's configuration (see pageConfig). */
function jsonConfig() {
  // A page in a frame of a Chrome app's launcher (its windows, an extension's tab) has the
  // launcher's config, the nearest same-origin one above it.
  let el = document.getElementById("pexe2wasm-config");
  for (let w = /** @type {Window} */ (window); !el && w !== w.parent; ) {
    try {
      w = w.parent;
      el = w.document.getElementById("pexe2wasm-config");
    } catch {
      break; // another origin's frame
    }
  }
  if (!el) return {};
  let c;
  try {
    c = JSON.parse(el.textContent);
  } catch (e) {
    note(`the page's pexe2wasm-config is not JSON (${e.message}); it is ignored`);
    return {};
  }
  if (!c || typeof c !== "object") return {};
  // A target that is a path ("/part1/") is on the page's own server.
  const map = {};
  for (const [from, to] of Object.entries(c.urlMap ?? {})) {
    if (typeof to === "string") map[from] = new URL(to, document.baseURI).href;
  }
  // Paths in the config (naclModules) are relative to the page that holds it.
  return { ...c, urlMap: map, base: el.ownerDocument.baseURI };
}
const instances = new WeakMap();
let warnedIsolation = false;
// Whether the page is going away (pagehide): its workers end then, and that is no crash.
let leaving = false;
addEventListener("pagehide", () => {
  leaving = true;
});
addEventListener("pageshow", () => {
  leaving = false;
});

function note(text, level = "info") {
  console[level](`pexe2wasm: ${text}`);
}

/** The converted module's URL for a manifest: its program's url, .pexe (or .nexe) → .wasm. */
export async function moduleUrl(nmfUrl) {
  return wasmBeside(await pexeUrl(nmfUrl));
}

/** The module `pexe2wasm web` writes beside the program at `url`: .pexe or .nexe → .wasm. */
function wasmBeside(url) {
  const u = new URL(url);
  // A blob: URL names the converted module itself (the service's Run button makes one).
  if (u.protocol !== "blob:") u.pathname = u.pathname.replace(/\.[pn]exe$/i, "") + ".wasm";
  return u.href;
}

/** Whether `url` names a native (x86-64) nexe rather than a pexe. */
function isNexe(url) {
  return /\.nexe$/i.test(new URL(url).pathname);
}

/**
 * The program's URL for a manifest: its pnacl-translate url; without one, the x86-64
 * nexe's (`program["x86-64"].url`), translated as a pexe is converted (beforehand by
 * `pexe2wasm web`, or in the browser); a .pexe's URL is its own.
 */
export async function pexeUrl(nmfUrl) {
  if (/\.pexe$/i.test(new URL(nmfUrl, location.href).pathname)) return new URL(nmfUrl, location.href).href;
  const r = await fetch(nmfUrl);
  if (!r.ok) throw new Error(`${nmfUrl}: HTTP ${r.status}`);
  let nmf;
  try {
    nmf = await r.json();
  } catch (e) {
    throw new Error(`${nmfUrl} is not a JSON manifest: ${e.message}`);
  }
  const url = nmf?.program?.portable?.["pnacl-translate"]?.url ?? nmf?.program?.["x86-64"]?.url;
  if (typeof url !== "string") {
    const native = Object.keys(nmf?.program ?? {}).filter((k) => k !== "portable");
    if (native.length) throw new Error(`${nmfUrl} names native programs for ${native.join("/")} and no pexe: of native programs, only an x86-64 nexe translates`);
    throw new Error(`${nmfUrl} names no program.portable.pnacl-translate.url (the only entry a pexe has)`);
  }
  return new URL(url, new URL(nmfUrl, location.href)).href;
}

/**
 * Where the instance's module comes from, by the config's `preconverted`: true (what the
 * config of `pexe2wasm web`'s pages says; the default when a page loads embed.js itself,
 * without pexe2wasm.js): the .wasm beside the pexe; false (pexe2wasm.js's default): the
 * pexe, converted in the browser; "auto": the .wasm when the server has it, else the pexe
 * converted. An x86-64 nexe is taken as "auto" says unless the config says true: its
 * translation beside it (`pexe2wasm web` writes one) spares the browser the work.
 * `{url}` or `{url, pexeUrl}`.
 */
export async function moduleSource(pexe, config) {
  const pre = config.preconverted ?? (globalThis.__pexe2wasmDropIn ? false : true);
  if (pre === true || pexe.startsWith("blob:")) return { url: wasmBeside(pexe) };
  if (pre === "auto" || isNexe(pexe)) {
    const wasm = wasmBeside(pexe);
    const r = await fetch(wasm, { method: "HEAD" }).catch(() => null);
    if (r?.ok && !/html/i.test(r.headers.get("content-type") ?? "")) return { url: wasm };
  }
  return { url: pexe, pexeUrl: pexe };
}

function fire(el, type, init = {}) {
  let ev;
  if (type === "message") ev = new MessageEvent("message", { data: init.data });
  else if (["loadstart", "progress", "load", "loadend", "error", "abort"].includes(type)) {
    ev = new ProgressEvent(type, { lengthComputable: !!init.total, loaded: init.loaded ?? 0, total: init.total ?? 0 });
  } else ev = new Event(type);
  el.dispatchEvent(ev);
}

// PPAPI's input event classes and modifiers (ppb_input_event.h).
const CLASS = { MOUSE: 1, KEYBOARD: 2, WHEEL: 4, TOUCH: 8 };
const TYPE = { MOUSEDOWN: 0, MOUSEUP: 1, MOUSEMOVE: 2, MOUSEENTER: 3, MOUSELEAVE: 4, WHEEL: 5, RAWKEYDOWN: 6, KEYUP: 8, CHAR: 9, CONTEXTMENU: 10, TOUCHSTART: 15, TOUCHMOVE: 16, TOUCHEND: 17, TOUCHCANCEL: 18 };

function modifiers(e) {
  let m = 0;
  if (e.shiftKey) m |= 1;
  if (e.ctrlKey) m |= 2;
  if (e.altKey) m |= 4;
  if (e.metaKey) m |= 8;
  if (e.repeat) m |= 32;
  const b = e.buttons ?? 0;
  if (b & 1) m |= 64;
  if (b & 4) m |= 128;
  if (b & 2) m |= 256;
  if (e.getModifierState?.("CapsLock")) m |= 512;
  if (e.getModifierState?.("NumLock")) m |= 1024;
  return m;
}

/** The event time as PPAPI's TimeTicks (seconds, the clock the host's workers share). */
function ticks(e) {
  return (performance.timeOrigin + e.timeStamp) / 1000;
}

function viewOf(el) {
  const r = el.getBoundingClientRect();
  const w = Math.round(r.width || Number(el.getAttribute("width")) || 0);
  const h = Math.round(r.height || Number(el.getAttribute("height")) || 0);
  const visible = document.visibilityState === "visible";
  return {
    rect: [0, 0, w, h],
    clip: visible ? [0, 0, w, h] : [0, 0, 0, 0],
    visible,
    pageVisible: visible,
    fullscreen: document.fullscreenElement === el,
    deviceScale: window.devicePixelRatio || 1,
    cssScale: 1,
    scroll: [Math.round(window.scrollX), Math.round(window.scrollY)],
  };
}

/**
 * The page's configuration with an instance's own options over it (the npm package's
 * `load(target, options)`: the same keys), their urlMap targets resolved as the page's.
 */
function withOptions(config, options) {
  if (!options) return config;
  const map = { ...config.urlMap };
  for (const [from, to] of Object.entries(options.urlMap ?? {})) {
    if (typeof to === "string") map[from] = new URL(to, document.baseURI).href;
  }
  return { ...config, ...options, urlMap: map };
}

/**
 * One running element: its instance worker, the host workers it made, its events.
 * Exported for the unit tests of its message receivers (tests/unit/protocol.test.js).
 */
export class Instance {
  constructor(el, options = null) {
    this.el = el;
    this.options = options; // run(el, options)'s, over the page's config
    this.worker = null;
    this.children = new Map(); // spawn id or "thread N" -> a host worker created for the instance
    this.io = null; // the IO worker
    this.pool = null; // the thread pool (startThreads)
    /** @type {Map<number, {stop(): void}> | null} */
    this.audio = null; // resource -> the player of each PPB_Audio that started (startAudio)
    this.ended = false;
    // Messages the module posts before its load event wait for it, as in Chrome (the
    // plugin held them until the instance was up).
    this.early = [];
    // Messages come straight from each module thread's worker, so two threads' messages
    // may reach the page out of the order they were posted in; each carries its place
    // (MESSAGE_SEQ) and waits here for those before it, as Chrome's one channel kept them.
    this.messages = new InOrder((data) => {
      if (this.early) this.early.push(data);
      else fire(el, "message", { data });
    });
    // Not NaCl's: what pexe2wasm knows of the instance, for people and tests.
    this.info = { state: "loading", didCreate: null, missing: [] };
    Object.defineProperty(el, "pexe2wasm", { configurable: true, value: this.info });
    el.readyState = 0;
    el.lastError = "";
    el.exitStatus = -1;
    // The NaCl element's postMessage: structured clone to the module's main thread.
    // Messages posted before the instance worker exists (advertise.js keeps those posted
    // before this script ran) wait in `pending` and go first, in order, as Chrome queued
    // them until the module had loaded.
    this.pending = el.__pexe2wasmEarly ?? [];
    delete el.__pexe2wasmEarly;
    Object.defineProperty(el, "postMessage", {
      configurable: true,
      value: (data) => {
        if (this.ended) return;
        if (this.worker) this.worker.postMessage({ t: TO_INSTANCE.MESSAGE, data });
        else this.pending.push(structuredClone(data));
      },
    });
    // Chrome's blocking messages (PPP_MessageHandler's HandleBlockingMessage) made the
    // page's thread wait for the module; a page's thread cannot wait for a worker, so the
    // call fails at once and says why, rather than hang or answer wrongly.
    Object.defineProperty(el, "postMessageAndAwaitResponse", {
      configurable: true,
      value: () => {
        throw new Error(
          "pexe2wasm: postMessageAndAwaitResponse (Pepper's blocking messages) cannot work in a browser page: " +
            "the page's thread cannot wait for the module's worker. Use postMessage and a 'message' listener.",
        );
      },
    });
  }

  async start() {
    const el = this.el;
    const src = el.getAttribute(el.localName === "object" ? "data" : "src");
    el.readyState = 1;
    fire(el, "loadstart");
    if (!globalThis.crossOriginIsolated) this.warnIsolation();
    // Read once: the URL map for the manifest here, and for the module's loads below.
    const config = withOptions(pageConfig(), this.options);
    this.config = config;
    let source;
    let documentUrl = null;
    try {
      if (!src) throw new Error("the element has no src");
      // The manifest's own URL goes through the URL map too (an embed of a dev server's
      // http://localhost:5103/… that the archive holds a copy of).
      const map = urlMapOf(config.urlMap);
      const handler = handlerOf(el);
      if (handler) {
        // A document of a type an app's nacl_modules handles: its src is the document,
        // given to the module by HandleDocumentLoad; the module is the handler's.
        documentUrl = mapUrl(new URL(src, document.baseURI).href, map);
      }
      source = await moduleSource(await pexeUrl(handler ?? mapUrl(new URL(src, document.baseURI).href, map)), config);
    } catch (e) {
      return this.fail(e.message);
    }
    const attrs = [];
    for (const a of el.attributes) attrs.push([a.name, a.value]);
    // The element keeps NaCl's API and events; a canvas in its place shows what the
    // module draws and takes its input.
    const view = viewOf(el);
    const canvas = document.createElement("canvas");
    canvas.width = view.rect[2];
    canvas.height = view.rect[3];
    canvas.tabIndex = 0;
    canvas.className = "pexe2wasm-canvas";
    canvas.style.cssText = el.style.cssText;
    canvas.style.outline = "none";
    el.before(canvas);
    el.style.display = "none";
    this.canvas = canvas;
    this.box = canvas;
    this.listenForInput(canvas);
    this.watchPageStates(canvas);
    const offscreen = typeof canvas.transferControlToOffscreen === "function" ? canvas.transferControlToOffscreen() : null;
    this.worker = hostWorker(new URL("instance-worker.js", HOST), `pexe2wasm ${src}`);
    this.worker.onmessage = (e) => this.onMessage(e.data);
    this.worker.onerror = (e) => this.fail(`the host failed to load: ${e.message || "worker error"}`);
    this.worker.postMessage(
      { t: TO_INSTANCE.INIT, url: source.url, pexeUrl: source.pexeUrl, smallCode: config.smallCode === true, documentUrl, attrs, view, args: [src], canvas: offscreen, urlMap: config.urlMap ?? {}, refuseUnmapped: config.refuseUnmapped === true, pageUrl: document.baseURI, screen: [screen.width, screen.height] },
      offscreen ? [offscreen] : [],
    );
    for (const data of this.pending.splice(0)) this.worker.postMessage({ t: TO_INSTANCE.MESSAGE, data });
    this.watchView();
  }

  warnIsolation() {
    if (warnedIsolation) return;
    warnedIsolation = true;
    note(
      "this page is not cross-origin isolated, so SharedArrayBuffer and shared WebAssembly memory are " +
        "missing and a converted Pepper module cannot start. Serve the page with the headers " +
        "'Cross-Origin-Opener-Policy: same-origin' and 'Cross-Origin-Embedder-Policy: require-corp' " +
        "(pexe2wasm serve does), or include pexe2wasm's isolation.js first on a host that cannot set them.",
      "error",
    );
  }

  /**
   * Input events on the canvas go to the module when it asked for their class; keys and
   * text also come from the instance's editable element (ime.js), which has the focus in
   * the canvas's place while the app takes text.
   */
  listenForInput(c) {
    this.classes = { requested: 0, filtering: 0 };
    const wants = (cls) => (this.classes.requested | this.classes.filtering) & cls;
    const post = (ev) => {
      if (this.worker && !this.ended) this.worker.postMessage({ t: TO_INSTANCE.INPUT, event: ev });
    };
    this.text = new TextInput(c, { send: post, wants, onFocus: (has) => this.worker?.postMessage({ t: TO_INSTANCE.FOCUS, has }) });
    const send = (e, ev) => {
      if (!this.worker || this.ended) return;
      // A class requested without filtering is the module's alone (Chrome did not bubble
      // it); a filtered one goes on to the page as well. A key the IME takes keeps its
      // default, or the composition would not start.
      if (this.classes.requested & ev.cls && !(e.isComposing || e.keyCode === 229)) e.preventDefault();
      delete ev.cls;
      post(ev);
    };
    const mouse = (type) => (e) => {
      if (!wants(CLASS.MOUSE)) return;
      if (type === TYPE.MOUSEDOWN) this.text.focusTarget().focus();
      const pressed = type === TYPE.MOUSEDOWN || type === TYPE.MOUSEUP || type === TYPE.CONTEXTMENU;
      send(e, {
        cls: CLASS.MOUSE,
        type,
        time: ticks(e),
        modifiers: modifiers(e),
        button: pressed ? e.button : -1,
        x: Math.round(e.offsetX),
        y: Math.round(e.offsetY),
        clicks: pressed ? e.detail : 0,
        mx: e.movementX ?? 0,
        my: e.movementY ?? 0,
      });
    };
    c.addEventListener("mousedown", mouse(TYPE.MOUSEDOWN));
    c.addEventListener("mouseup", mouse(TYPE.MOUSEUP));
    c.addEventListener("mousemove", mouse(TYPE.MOUSEMOVE));
    c.addEventListener("mouseenter", mouse(TYPE.MOUSEENTER));
    c.addEventListener("mouseleave", mouse(TYPE.MOUSELEAVE));
    c.addEventListener("contextmenu", mouse(TYPE.CONTEXTMENU));
    c.addEventListener("wheel", (e) => {
      if (!wants(CLASS.WHEEL)) return;
      // DOM deltas point the other way from PPAPI's (positive: content moves down/right).
      const scale = e.deltaMode === 1 ? 40 : e.deltaMode === 2 ? c.height : 1;
      send(e, {
        cls: CLASS.WHEEL,
        type: TYPE.WHEEL,
        time: ticks(e),
        modifiers: modifiers(e),
        dx: -e.deltaX * scale,
        dy: -e.deltaY * scale,
        tx: -e.deltaX * scale / 40,
        ty: -e.deltaY * scale / 40,
        byPage: e.deltaMode === 2,
      });
    }, { passive: false });
    const keydown = (e) => {
      if (!wants(CLASS.KEYBOARD)) return;
      const base = { cls: CLASS.KEYBOARD, time: ticks(e), modifiers: modifiers(e), key: e.keyCode, code: e.code };
      send(e, { ...base, type: TYPE.RAWKEYDOWN });
      // Chrome followed a key that types with a CHAR event carrying the text.
      if (e.key.length === 1 && !e.ctrlKey && !e.metaKey && !e.isComposing) {
        post({ ...base, cls: undefined, type: TYPE.CHAR, key: e.key.charCodeAt(0), text: e.key });
      }
    };
    const keyup = (e) => {
      if (!wants(CLASS.KEYBOARD)) return;
      send(e, { cls: CLASS.KEYBOARD, type: TYPE.KEYUP, time: ticks(e), modifiers: modifiers(e), key: e.keyCode, code: e.code });
    };
    for (const target of [c, this.text.el]) {
      target.addEventListener("keydown", keydown);
      target.addEventListener("keyup", keyup);
    }
    // Touches, relative to the canvas, in PPAPI's three lists (all, changed, on the target).
    const touch = (type) => (e) => {
      if (!wants(CLASS.TOUCH)) return;
      const r = c.getBoundingClientRect();
      const list = (l) =>
        Array.from(l ?? [], (t) => [t.identifier, t.clientX - r.left, t.clientY - r.top, t.radiusX ?? 0, t.radiusY ?? 0, t.rotationAngle ?? 0, t.force ?? 0, 0, 0]);
      send(e, { cls: CLASS.TOUCH, type, time: ticks(e), modifiers: modifiers(e), touches: list(e.touches), changed: list(e.changedTouches), targets: list(e.targetTouches) });
    };
    for (const [name, type] of [["touchstart", TYPE.TOUCHSTART], ["touchmove", TYPE.TOUCHMOVE], ["touchend", TYPE.TOUCHEND], ["touchcancel", TYPE.TOUCHCANCEL]]) {
      c.addEventListener(name, touch(type), { passive: false });
    }
  }

  watchView() {
    let last = JSON.stringify(viewOf(this.box));
    const check = () => {
      if (this.ended) return;
      const v = viewOf(this.box);
      const s = JSON.stringify(v);
      if (s !== last) {
        last = s;
        this.worker.postMessage({ t: TO_INSTANCE.VIEW, view: v });
      }
    };
    if (typeof ResizeObserver === "function") new ResizeObserver(check).observe(this.box);
    document.addEventListener("visibilitychange", check);
  }

  fail(error) {
    const el = this.el;
    el.lastError = error;
    el.readyState = 4;
    note(`${el.getAttribute("src") ?? "module"}: ${error}`, "error");
    fire(el, "error");
    fire(el, "loadend");
    this.stop();
  }

  stop() {
    this.info.state = "ended";
    this.ended = true;
    for (const w of this.children.values()) w.terminate();
    this.children.clear();
    this.threadInit = null; // the module and its memory, for the collector
    this.stopGamepads?.();
    this.text?.stop();
    for (const a of this.audio?.values() ?? []) a.stop();
    this.worker?.terminate();
  }

  /** Fullscreen and pointer lock as the module sees them (IsFullscreen, MouseLockLost). */
  watchPageStates(canvas) {
    document.addEventListener("fullscreenchange", () => {
      this.worker?.postMessage({ t: TO_INSTANCE.FULLSCREEN_STATE, on: document.fullscreenElement === canvas });
    });
    let locked = false;
    document.addEventListener("pointerlockchange", () => {
      const now = document.pointerLockElement === canvas;
      // Lost without UnlockMouse (Escape, another window): the app is told, as in Chrome.
      if (locked && !now && !this.unlocking) this.worker?.postMessage({ t: TO_INSTANCE.MOUSE_LOCK_LOST });
      if (!now) this.unlocking = false;
      locked = now;
    });
  }

  /**
   * Creates a host worker the instance worker asked for, and gives the instance worker a
   * port to it. They are created here, not in the instance worker, because Firefox
   * sometimes hangs for good in a worker's `new Worker`.
   */
  spawn(m) {
    if (this.ended || !HOST_WORKERS.has(m.script)) return;
    const w = hostWorker(new URL(m.script, HOST), `pexe2wasm ${m.script}`);
    this.children.set(m.id, w);
    if (m.script === "io-worker.js") this.io = w;
    w.onerror = (e) => this.worker?.postMessage({ t: TO_INSTANCE.WORKER_ERROR, id: m.id, message: e.message || "" });
    const ch = new MessageChannel();
    // The first message (the module, its memory) goes with the port: Firefox cannot send a
    // WebAssembly.Module over a MessagePort. The IO worker is told this page load's id: the
    // temporary file system it shares with the page is emptied once per load
    // (compat/sandbox-layout.js).
    const init = m.script === "io-worker.js" ? { ...m.init, pageLoad: pageLoadId() } : m.init;
    w.postMessage({ t: TO_HOST_WORKER.PARENT, port: ch.port2, init }, [ch.port2, ...(m.transfer ?? [])]);
    this.worker.postMessage({ t: TO_INSTANCE.SPAWNED, id: m.id, port: ch.port1 }, [ch.port1]);
  }

  /**
   * The instance worker's `threads` (the module, its memory, the host block, the args):
   * starts the pool of thread workers (hardware threads + 2, at least 4, or the element's
   * data-pexe2wasm-threads) and keeps it full from here on, so that any module thread may
   * start a thread while the main module thread is busy or blocked in a call: the page's
   * event loop is the one no module code ever holds. The instance worker starts the module
   * once these first workers are ready ("threads-ready").
   */
  startThreads(m) {
    if (this.ended || this.pool) return;
    const target = Number(this.el.getAttribute("data-pexe2wasm-threads")) || Number(this.config?.threads) || Math.max(4, (navigator.hardwareConcurrency | 0) + 2);
    this.threadInit = { module: m.module, memory: m.memory, hostSab: m.hostSab, args: m.args };
    this.threadSeq = 0;
    this.pool = new ThreadPool(new Int32Array(m.hostSab), target, (slot) => this.startThread(slot));
    // Each worker that is up is counted, so a start that stalls says how far it got.
    let up = 0;
    const progress = () => this.onMessage({ t: TO_PAGE.PROGRESS, what: `thread-pool ${up}/${this.pool.target}` });
    progress();
    const first = this.pool.starts().map((p) =>
      p.then(() => {
        up++;
        progress();
      }),
    );
    Promise.all(first).then(() => this.worker?.postMessage({ t: TO_INSTANCE.THREADS_READY }));
  }

  /**
   * Starts a thread worker into pool slot `slot`; resolves when it waits there for a
   * thread. It gets, in its first message from here (Firefox cannot send a
   * WebAssembly.Module over a MessagePort), a port to the IO worker (given to the IO
   * worker from here too) and a port to the instance worker, whose end the instance worker
   * takes whenever its event loop next runs: nothing waits for it.
   */
  startThread(slot) {
    return new Promise((resolve) => {
      if (this.ended) return;
      const key = `thread ${++this.threadSeq}`;
      const w = hostWorker(new URL("thread-worker.js", HOST), "pexe2wasm thread-worker.js");
      this.children.set(key, w);
      w.onerror = (e) => {
        const error = e.message || "a thread worker failed to load";
        // Firefox fails the loads of workers still starting when the page navigates away,
        // between beforeunload and pagehide, with an error event: not the module's. So a
        // crash is told once the page is seen to stay.
        setTimeout(() => leaving || this.ended || this.onMessage({ t: TO_PAGE.CRASH, error, stack: "" }), 500);
      };
      w.onmessage = (e) => this.onThreadMessage(key, e.data, resolve);
      const io = new MessageChannel();
      this.io.postMessage({ t: TO_IO.PORT, port: io.port2 }, [io.port2]);
      const main = new MessageChannel();
      this.worker.postMessage({ t: TO_INSTANCE.THREAD_PORT, port: main.port1 }, [main.port1]);
      const { module, memory, hostSab, args } = this.threadInit;
      w.postMessage({ t: TO_THREAD.INIT, module, memory, hostSab, args, slot, io: io.port1, main: main.port2 }, [io.port1, main.port2]);
    });
  }

  /** A thread worker's message; `ready` resolves its start. */
  onThreadMessage(key, m, ready) {
    switch (m?.t) {
      case FROM_THREAD.READY:
        ready();
        break;
      case TO_PAGE.REFILL:
        // A thread took a worker from the pool, or found it empty.
        if (!this.ended) this.pool.starts();
        break;
      case FROM_THREAD.DONE:
        // Its thread ended and its slot is free; the worker closes itself.
        this.children.get(key)?.terminate();
        this.children.delete(key);
        if (!this.ended) this.pool.starts();
        break;
      case TO_PAGE.EXIT:
      case TO_PAGE.CRASH:
        // The instance ends once, at the first.
        if (!this.ended) this.onMessage(m);
        break;
      default:
        // What any thread tells the page (onMessage reports a kind it does not know).
        this.onMessage(m, "thread worker -> page");
        break;
    }
  }

  /**
   * A host worker's message to the page.
   * @param {any} m
   * @param {string} [channel] the channel it came on, for an error
   */
  onMessage(m, channel = "host worker -> page") {
    const el = this.el;
    switch (m?.t) {
      case TO_PAGE.SPAWN:
        this.spawn(m);
        break;
      case TO_PAGE.THREADS:
        this.startThreads(m);
        break;
      case TO_PAGE.REFILL:
        // The main module thread took a worker from the pool, or found it empty.
        if (!this.ended) this.pool?.starts();
        break;
      case TO_PAGE.MESSAGE:
        this.messages.arrive(m.seq, m.data);
        break;
      case TO_PAGE.CONSOLE:
        console[["log", "info", "warn", "error"][m.level] ?? "log"](m.text);
        break;
      case TO_PAGE.OUTPUT:
        (m.fd === 2 ? console.warn : console.log)(m.text);
        break;
      case TO_PAGE.CREATED:
        this.info.didCreate = m.ok;
        break;
      case TO_PAGE.MISSING:
        this.info.missing.push(m.name);
        note(`the app asked for ${m.name}, which the browser host lacks: it got NULL, as in a Chrome without it`, "warn");
        break;
      case TO_PAGE.INPUT_REQUEST:
        if (m.filtering) this.classes.filtering |= m.classes;
        else this.classes.requested |= m.classes;
        this.info.inputClasses = this.classes.requested | this.classes.filtering;
        this.text.sync();
        break;
      case TO_PAGE.INPUT_CLEAR:
        this.classes.requested &= ~m.classes;
        this.classes.filtering &= ~m.classes;
        this.info.inputClasses = this.classes.requested | this.classes.filtering;
        this.text.sync();
        break;
      // PPB_TextInputController (host/ppb/text_input.js), from any of the module's threads.
      case TO_PAGE.TEXT_INPUT:
        this.text.setType(m.type);
        this.info.textInputType = m.type;
        break;
      case TO_PAGE.TEXT_CARET:
        this.text.setCaret(m.rect);
        break;
      case TO_PAGE.TEXT_CANCEL:
        this.text.cancelComposition();
        break;
      case TO_PAGE.TEXT_SURROUNDING:
        this.text.setSurrounding(m.text, m.caret, m.anchor);
        break;
      case TO_PAGE.CURSOR:
        this.canvas.style.cursor = cursorCss(m);
        break;
      case TO_PAGE.PAGE_CALL:
        pageCall(this.canvas, m, (result) => this.worker?.postMessage({ t: TO_INSTANCE.PAGE_REPLY, done: m.done, result }));
        break;
      case TO_PAGE.UNLOCK_MOUSE:
        this.unlocking = true;
        if (document.pointerLockElement === this.canvas) document.exitPointerLock();
        break;
      case TO_PAGE.FULLSCREEN:
        setFullscreen(this.canvas, m.on);
        break;
      case TO_PAGE.GAMEPAD_START:
        this.stopGamepads = startGamepads(m.sab, m.at);
        break;
      case TO_PAGE.AUDIO_START:
        (this.audio ??= new Map()).set(m.res, startAudio(m, new URL("audio-worklet.js", import.meta.url)));
        break;
      case TO_PAGE.AUDIO_STOP:
        this.audio?.get(m.res)?.stop();
        this.audio?.delete(m.res);
        break;
      case TO_PAGE.PROGRESS:
        this.info.progress = m.what;
        el.readyState = 3;
        fire(el, "progress", { loaded: m.bytes ?? 0, total: m.total ?? m.bytes ?? 0 });
        break;
      case TO_PAGE.CONVERTED:
        // Converted here (convert/converter.js), or from the cache of a visit before.
        this.info.source = m.source;
        note(
          m.source === "cache"
            ? `${el.getAttribute("src")}: the converted module (${m.bytes} bytes) from the cache`
            : `${el.getAttribute("src")}: converted in the browser in ${Math.round(m.ms)} ms (${m.bytes} bytes)`,
        );
        break;
      case TO_PAGE.LOAD: {
        this.info.state = "running";
        el.readyState = 4;
        fire(el, "load");
        fire(el, "loadend");
        const early = this.early;
        this.early = null;
        for (const data of early) fire(el, "message", { data });
        break;
      }
      case TO_PAGE.ERROR:
        this.fail(m.error);
        break;
      case TO_PAGE.EXIT:
        // NaCl reported a module's exit, whatever its status, as a crash.
        el.exitStatus = m.code;
        el.lastError = `the module exited with status ${m.code}`;
        this.stop();
        fire(el, "crash");
        break;
      case TO_PAGE.CRASH:
        el.exitStatus = -1;
        el.lastError = m.error;
        note(`the module crashed: ${m.error}\n${m.stack ?? ""}`, "error");
        this.stop();
        fire(el, "crash");
        break;
      case TO_PAGE.INPUT_HANDLED:
        // HandleInputEvent's answer: the page's event already went its way.
        break;
      default:
        unknownMessage(channel, m?.t);
        break;
    }
  }
}

function adopt(el, options = null) {
  if (instances.has(el)) return;
  const inst = new Instance(el, options);
  instances.set(el, inst);
  inst.start();
}

/**
 * Runs element `el` (an <embed>/<object> with a src, in the document) with `options` (the
 * page config's keys) over the page's config: the npm package's `load` (web/npm/index.js).
 * An element already running keeps its instance.
 */
export function run(el, options = null) {
  adopt(el, options);
}

/**
 * Ends element `el`'s instance (its workers, its audio) and removes the canvas shown in
 * its place; the element is shown again. Nothing is fired: the caller ended it.
 */
export function release(el) {
  const inst = instances.get(el);
  if (!inst) return;
  inst.stop();
  inst.canvas?.remove();
  el.style.display = "";
}

function scan(root) {
  if (root.nodeType !== 1) return;
  if (isPnacl(root)) adopt(root);
  for (const el of root.querySelectorAll("embed, object")) if (isPnacl(el)) adopt(el);
}

function isPnacl(el) {
  if (el.localName !== "embed" && el.localName !== "object") return false;
  // One the npm package's load() was given: it runs it itself, with its options (run).
  if (el.__pexe2wasmByLoad) return false;
  return MIMES.includes((el.getAttribute("type") ?? "").toLowerCase()) || handlerOf(el) !== null;
}

/** The MIME types Chrome packages' `nacl_modules` handle here: type → manifest URL. */
let handlers = null;

/**
 * The manifest of the NaCl module that handles element `el`'s document, or null: the
 * element's `nacl` attribute (the manifest Chrome itself gave a content handler's plugin),
 * or the module a `nacl_modules` entry registered for the element's type: the running
 * Chrome app's (its manifest, read by the launcher), then the page config's `naclModules`
 * (`[{mimeType, path}]`, for pages outside an app).
 */
function handlerOf(el) {
  const nacl = el.getAttribute("nacl");
  if (nacl) return new URL(nacl, document.baseURI).href;
  const type = (el.getAttribute("type") ?? "").toLowerCase();
  if (!type || MIMES.includes(type)) return null;
  handlers ??= naclModules();
  return handlers.get(type) ?? null;
}

/** Every `nacl_modules` handler this page has: MIME type (lower case) → manifest URL. */
function naclModules() {
  const map = new Map();
  const add = (type, path, base) => {
    if (typeof type !== "string" || typeof path !== "string") return;
    try {
      if (!map.has(type.toLowerCase())) map.set(type.toLowerCase(), new URL(path, base).href);
    } catch {
      note(`the nacl_modules path ${JSON.stringify(path)} is not a URL; its type ${type} is not handled`);
    }
  };
  const app = chromeApp();
  for (const h of Array.isArray(app?.manifest?.nacl_modules) ? app.manifest.nacl_modules : []) add(h?.mime_type, h?.path, app.baseURL);
  const config = pageConfig();
  for (const h of Array.isArray(config.naclModules) ? config.naclModules : []) add(h?.mimeType, h?.path, config.base);
  return map;
}

/** The Chrome app runtime of the launcher this page runs under (a same-origin frame above), or null. */
function chromeApp() {
  for (let w = /** @type {Window} */ (window); ; w = w.parent) {
    try {
      if (w.__pexe2wasmChrome) return w.__pexe2wasmChrome;
    } catch {
      return null; // another origin's frame
    }
    if (w === w.parent) return null;
  }
}

scan(document.documentElement);
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) scan(n);
}).observe(document.documentElement, { childList: true, subtree: true });
