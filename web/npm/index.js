// The npm package's entry (`pexe2wasm host --npm` writes it as index.js, beside the host
// folder; docs/NPM.md): `load(target, options)` runs one NaCl module, a .nmf or .pexe URL
// or an <embed>/<object> element, through the same host as the drop-in script
// (pexe2wasm/embed.js's run and release), and returns an instance with NaCl's element API.
// The host is imported from `baseUrl` when the first module loads, not bundled: its
// workers and the converter are files the browser loads from there.

const TYPE = "application/x-pnacl";
/** The keys of `options` the host reads (embed.js's page config). */
const HOST_KEYS = ["urlMap", "refuseUnmapped", "threads", "smallCode", "preconverted"];

/** @type {Map<string, Promise<any>>} the host module, by its URL. */
const hosts = new Map();

/** The host's embed.js under `baseUrl`, imported once. */
function host(baseUrl) {
  const url = new URL("pexe2wasm/embed.js", baseUrl).href;
  if (!hosts.has(url)) hosts.set(url, import(/* webpackIgnore: true */ /* @vite-ignore */ url));
  return hosts.get(url);
}

/**
 * Runs a NaCl (PNaCl) module. `target`: a .nmf or .pexe URL (a new <embed> for it is put
 * into `options.container`, default document.body) or an <embed>/<object> element already
 * in the document. Returns at once; the events say how it goes.
 * @param {string | URL | HTMLEmbedElement | HTMLObjectElement} target
 * @param {any} [options]
 */
export function load(target, options = {}) {
  /** @type {any} the element, with NaCl's API once the host runs it */
  let el;
  let own = false;
  if (typeof target === "string" || target instanceof URL) {
    el = document.createElement("embed");
    el.setAttribute("type", TYPE);
    for (const [name, value] of Object.entries(options.attributes ?? {})) el.setAttribute(name, String(value));
    el.setAttribute("src", new URL(target, document.baseURI).href);
    if (options.width !== undefined) el.setAttribute("width", String(options.width));
    if (options.height !== undefined) el.setAttribute("height", String(options.height));
    own = true;
  } else if (target instanceof HTMLEmbedElement || target instanceof HTMLObjectElement) {
    el = target;
  } else {
    throw new TypeError("pexe2wasm load: the target is a .nmf or .pexe URL, or an <embed> or <object> element");
  }
  // The host's watch for NaCl elements leaves this one to run() below, with these options.
  el.__pexe2wasmByLoad = true;
  const config = { preconverted: false };
  for (const key of HOST_KEYS) if (options[key] !== undefined) config[key] = options[key];
  const instance = new Instance(el, own);
  const baseUrl = new URL(options.baseUrl ?? "./", options.baseUrl ? document.baseURI : import.meta.url);
  host(baseUrl).then(
    (m) => {
      if (instance.destroyed) return;
      if (own) (options.container ?? document.body).append(el);
      instance.host = m;
      m.run(el, config);
    },
    (e) => {
      // The host itself did not load (a wrong baseUrl, a server without the files).
      el.lastError = `the host did not load from ${baseUrl.href}: ${e.message}`;
      console.error(`pexe2wasm: ${el.lastError}`);
      el.dispatchEvent(new ProgressEvent("error"));
    },
  );
  return instance;
}

/** A running module: NaCl's element API, on the element it runs in. */
class Instance {
  /**
   * @param {any} el the <embed>/<object>
   * @param {boolean} own whether load() made it (destroy() removes it)
   */
  constructor(el, own) {
    this.element = el;
    this.own = own;
    this.destroyed = false;
    /** @type {any} the host (embed.js) once it runs the module */
    this.host = null;
    this.ready = new Promise((resolve, reject) => {
      const done = () => {
        el.removeEventListener("load", loaded);
        el.removeEventListener("error", failed);
        el.removeEventListener("crash", failed);
      };
      const loaded = () => {
        done();
        resolve(this);
      };
      const failed = () => {
        done();
        reject(new Error(el.lastError || "the module did not load"));
      };
      el.addEventListener("load", loaded);
      el.addEventListener("error", failed);
      el.addEventListener("crash", failed);
    });
    // Awaiting `ready` is optional: an error is told by the events and lastError too.
    this.ready.catch(() => {});
  }

  /** The text of the last error or crash ("" until then). */
  get lastError() {
    return this.element.lastError ?? "";
  }

  /** NaCl's readyState: 0 before the start, 1 loading, 3 progress, 4 done (load or error). */
  get readyState() {
    return this.element.readyState ?? 0;
  }

  /** The module's exit status, -1 unless it exited. */
  get exitStatus() {
    return this.element.exitStatus ?? -1;
  }

  /** Where the module came from: "converted" (in the browser now) or "cache"; undefined when the .wasm beside the pexe was loaded. */
  get source() {
    return this.element.pexe2wasm?.source;
  }

  /** Sends `message` to the module (structured clone); before it has loaded, it waits. */
  postMessage(message) {
    if (this.destroyed) return;
    // The element's own postMessage: embed.js's once it runs; advertise.js's queue until then.
    if (typeof this.element.postMessage === "function") this.element.postMessage(message);
    else (this.element.__pexe2wasmEarly ??= []).push(structuredClone(message));
  }

  /** @param {string} type @param {any} listener @param {any} [options] */
  addEventListener(type, listener, options) {
    this.element.addEventListener(type, listener, options);
  }

  /** @param {string} type @param {any} listener @param {any} [options] */
  removeEventListener(type, listener, options) {
    this.element.removeEventListener(type, listener, options);
  }

  /** Ends the module (its workers) and removes what load() added to the page. */
  destroy() {
    if (this.destroyed) return;
    this.destroyed = true;
    const el = this.element;
    // Before the host runs it, there is nothing of the module to end (and it never will).
    this.host?.release(el);
    if (this.own) el.remove();
  }
}
