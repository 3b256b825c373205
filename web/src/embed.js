// The <embed> replacement: include once in a page (as a module script) and every
// <embed>/<object> of type application/x-pnacl, present now or added later, runs its
// converted module in workers (host/instance-worker.js), keeping the NaCl element's API:
// postMessage, readyState, lastError, exitStatus, and the events loadstart, progress,
// load, loadend, error, crash and message. docs/JS-HOST.md tells how.

import "./advertise.js";

const TYPE = "application/x-pnacl";
const HOST = new URL("./host/", import.meta.url);
const instances = new WeakMap();
let warnedIsolation = false;

function note(text, level = "info") {
  console[level](`pexe2wasm: ${text}`);
}

/** The converted module's URL for a manifest: its pnacl-translate url, .pexe → .wasm. */
export async function moduleUrl(nmfUrl) {
  const r = await fetch(nmfUrl);
  if (!r.ok) throw new Error(`${nmfUrl}: HTTP ${r.status}`);
  let nmf;
  try {
    nmf = await r.json();
  } catch (e) {
    throw new Error(`${nmfUrl} is not a JSON manifest: ${e.message}`);
  }
  const url = nmf?.program?.portable?.["pnacl-translate"]?.url;
  if (typeof url !== "string") {
    throw new Error(`${nmfUrl} names no program.portable.pnacl-translate.url (the only entry a pexe has)`);
  }
  const pexe = new URL(url, new URL(nmfUrl, location.href));
  pexe.pathname = pexe.pathname.replace(/\.pexe$/i, "") + ".wasm";
  return pexe.href;
}

function fire(el, type, init = {}) {
  let ev;
  if (type === "message") ev = new MessageEvent("message", { data: init.data });
  else if (["loadstart", "progress", "load", "loadend", "error", "abort"].includes(type)) {
    ev = new ProgressEvent(type, { lengthComputable: !!init.total, loaded: init.loaded ?? 0, total: init.total ?? 0 });
  } else ev = new Event(type);
  el.dispatchEvent(ev);
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

class Instance {
  constructor(el) {
    this.el = el;
    this.worker = null;
    this.ended = false;
    // Messages the module posts before its load event wait for it, as in Chrome (the
    // plugin held them until the instance was up).
    this.early = [];
    // Not NaCl's: what pexe2wasm knows of the instance, for people and tests.
    this.info = { state: "loading", didCreate: null, missing: [] };
    Object.defineProperty(el, "pexe2wasm", { configurable: true, value: this.info });
    el.readyState = 0;
    el.lastError = "";
    el.exitStatus = -1;
    // The NaCl element's postMessage: structured clone to the module's main thread.
    Object.defineProperty(el, "postMessage", {
      configurable: true,
      value: (data) => {
        if (this.worker && !this.ended) this.worker.postMessage({ t: "message", data });
      },
    });
  }

  async start() {
    const el = this.el;
    const src = el.getAttribute(el.localName === "object" ? "data" : "src");
    el.readyState = 1;
    fire(el, "loadstart");
    if (!globalThis.crossOriginIsolated) this.warnIsolation();
    let url;
    try {
      if (!src) throw new Error("the element has no src");
      url = await moduleUrl(new URL(src, document.baseURI).href);
    } catch (e) {
      return this.fail(e.message);
    }
    const attrs = [];
    for (const a of el.attributes) attrs.push([a.name, a.value]);
    this.worker = new Worker(new URL("instance-worker.js", HOST), { type: "module", name: `pexe2wasm ${src}` });
    this.worker.onmessage = (e) => this.onMessage(e.data);
    this.worker.onerror = (e) => this.fail(`the host failed to load: ${e.message || "worker error"}`);
    const threads = Number(el.getAttribute("data-pexe2wasm-threads")) || undefined;
    this.worker.postMessage({ t: "init", url, attrs, view: viewOf(el), args: [src], threads });
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

  watchView() {
    let last = JSON.stringify(viewOf(this.el));
    const check = () => {
      if (this.ended) return;
      const v = viewOf(this.el);
      const s = JSON.stringify(v);
      if (s !== last) {
        last = s;
        this.worker.postMessage({ t: "view", view: v });
      }
    };
    if (typeof ResizeObserver === "function") new ResizeObserver(check).observe(this.el);
    document.addEventListener("visibilitychange", check);
    this.el.addEventListener("focus", () => this.worker?.postMessage({ t: "focus", has: true }));
    this.el.addEventListener("blur", () => this.worker?.postMessage({ t: "focus", has: false }));
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
    this.worker?.terminate();
  }

  onMessage(m) {
    const el = this.el;
    switch (m.t) {
      case "message":
        if (this.early) this.early.push(m.data);
        else fire(el, "message", { data: m.data });
        break;
      case "console":
        console[["log", "info", "warn", "error"][m.level] ?? "log"](m.text);
        break;
      case "output":
        (m.fd === 2 ? console.warn : console.log)(m.text);
        break;
      case "created":
        this.info.didCreate = m.ok;
        break;
      case "missing":
        this.info.missing.push(m.name);
        note(`the app asked for ${m.name}, which the browser host lacks: it got NULL, as in a Chrome without it`, "warn");
        break;
      case "port":
        m.port.onmessage = (e) => this.onMessage(e.data);
        break;
      case "progress":
        el.readyState = 3;
        fire(el, "progress", { loaded: m.bytes ?? 0, total: m.bytes ?? 0 });
        break;
      case "load": {
        this.info.state = "running";
        el.readyState = 4;
        fire(el, "load");
        fire(el, "loadend");
        const early = this.early;
        this.early = null;
        for (const data of early) fire(el, "message", { data });
        break;
      }
      case "error":
        this.fail(m.error);
        break;
      case "exit":
        // NaCl reported a module's exit, whatever its status, as a crash.
        el.exitStatus = m.code;
        el.lastError = `the module exited with status ${m.code}`;
        this.stop();
        fire(el, "crash");
        break;
      case "crash":
        el.exitStatus = -1;
        el.lastError = m.error;
        note(`the module crashed: ${m.error}\n${m.stack ?? ""}`, "error");
        this.stop();
        fire(el, "crash");
        break;
      default:
        break;
    }
  }
}

function adopt(el) {
  if (instances.has(el)) return;
  const inst = new Instance(el);
  instances.set(el, inst);
  inst.start();
}

function scan(root) {
  if (root.nodeType !== 1) return;
  if (isPnacl(root)) adopt(root);
  for (const el of root.querySelectorAll("embed, object")) if (isPnacl(el)) adopt(el);
}

function isPnacl(el) {
  return (el.localName === "embed" || el.localName === "object") && (el.getAttribute("type") ?? "").toLowerCase() === TYPE;
}

scan(document.documentElement);
new MutationObserver((records) => {
  for (const r of records) for (const n of r.addedNodes) scan(n);
}).observe(document.documentElement, { childList: true, subtree: true });
