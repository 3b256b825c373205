// The converter in the browser: crates/browser-converter built for wasm32-unknown-unknown
// (converter.wasm beside this file, written by `pexe2wasm host` with converter.json, its
// version). `convertedModule` is the page's no-build-step path, run in the instance worker:
// the pexe fetched as a stream (progress as the bytes arrive), its SHA-256, the module
// from Cache Storage when this converter made it before, else converted here and cached.
// `convertBytes` is the conversion alone (node runs it too: crates/cli/tests/it/host.rs).
// docs/DROP-IN.md tells how.

/** `p2w_convert`'s options: bit 0, smaller code (`--small-code`). */
export const SMALL_CODE = 1;

/** The Cache Storage cache that holds converted modules. */
export const CACHE_NAME = "pexe2wasm-modules";

/**
 * The converter's exports (crates/browser-converter/src/lib.rs).
 * @typedef {{
 *   memory: WebAssembly.Memory,
 *   p2w_alloc(len: number): number,
 *   p2w_free(ptr: number, len: number): void,
 *   p2w_convert(ptr: number, len: number, options: number): number,
 *   p2w_result_ok(r: number): number,
 *   p2w_result_ptr(r: number): number,
 *   p2w_result_len(r: number): number,
 *   p2w_result_plugin(r: number): number,
 *   p2w_result_needs_ptr(r: number): number,
 *   p2w_result_needs_len(r: number): number,
 *   p2w_result_free(r: number): void,
 *   p2w_version_ptr(): number,
 *   p2w_version_len(): number,
 * }} ConverterExports
 */

/**
 * One conversion's outcome: the module's bytes, or the error text `pexe2wasm convert`
 * prints after `error: FILE: `.
 * @typedef {{ ok: boolean, wasm?: Uint8Array, error?: string, plugin?: boolean, needs: string }} Converted
 */

/**
 * Converts `pexe` with a fresh instance of the converter `module` (a fresh one, so that the
 * memory a large conversion grew is freed with it).
 * @param {WebAssembly.Module} module
 * @param {Uint8Array} pexe
 * @param {number} [options]
 * @returns {Promise<Converted>}
 */
export async function convertBytes(module, pexe, options = 0) {
  const instance = await WebAssembly.instantiate(module, {});
  const e = /** @type {ConverterExports} */ (/** @type {unknown} */ (instance.exports));
  const text = (ptr, len) => new TextDecoder().decode(new Uint8Array(e.memory.buffer, ptr >>> 0, len >>> 0));
  const len = pexe.byteLength;
  const ptr = len ? e.p2w_alloc(len) >>> 0 : 0;
  if (len && !ptr) return { ok: false, error: `the converter cannot hold ${len} bytes`, needs: "" };
  if (len) new Uint8Array(e.memory.buffer, ptr, len).set(pexe);
  const r = e.p2w_convert(ptr, len, options);
  if (len) e.p2w_free(ptr, len);
  try {
    const needs = text(e.p2w_result_needs_ptr(r), e.p2w_result_needs_len(r));
    const at = e.p2w_result_ptr(r) >>> 0;
    const n = e.p2w_result_len(r) >>> 0;
    if (!e.p2w_result_ok(r)) return { ok: false, error: text(at, n), needs };
    return { ok: true, wasm: new Uint8Array(e.memory.buffer, at, n).slice(), plugin: e.p2w_result_plugin(r) === 1, needs };
  } finally {
    e.p2w_result_free(r);
  }
}

/** Lower-case hex of the SHA-256 of `bytes`. */
async function sha256(bytes) {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return Array.from(d, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The converter (compiled once per worker) and its version, from converter.json. */
let converter = null;

function loadConverter() {
  converter ??= (async () => {
    const info = new URL("converter.json", import.meta.url);
    const r = await fetch(info);
    if (!r.ok) throw new Error(`${info}: HTTP ${r.status} (write the host folder with pexe2wasm host)`);
    const { version, wasm } = await r.json();
    const url = new URL(wasm, info);
    /** @type {Promise<WebAssembly.Module> | null} */
    let module = null;
    return {
      version: String(version),
      // Compiled only when a pexe is not in the cache: a cached visit does not spend the
      // CPU (2 MB of wasm) on it while the app's own module compiles.
      module: () =>
        (module ??= (async () => {
          const w = await fetch(url);
          if (!w.ok) throw new Error(`${url}: HTTP ${w.status}`);
          return WebAssembly.compile(await w.arrayBuffer());
        })()),
    };
  })();
  // A failed load is tried again by the next instance.
  converter.catch(() => {
    converter = null;
  });
  return converter;
}

/**
 * The pexe's bytes, read as they arrive: `progress(loaded, total)` after each chunk (total
 * 0 when the server does not say).
 * @param {string} url
 * @param {(loaded: number, total: number) => void} progress
 */
async function fetchPexe(url, progress) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`${url}: HTTP ${r.status}`);
  const total = Number(r.headers.get("content-length")) || 0;
  if (!r.body) return new Uint8Array(await r.arrayBuffer());
  const chunks = [];
  let loaded = 0;
  const reader = r.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    progress(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return bytes;
}

/**
 * The converted module of the pexe at `pexeUrl`, compiled: from the cache when this
 * converter converted the same bytes before, else converted here (and cached).
 * `progress({what, loaded?, total?})` says how far it got. A pexe that does not convert
 * rejects with the converter's positioned error text.
 * @param {string} pexeUrl
 * @param {{ smallCode?: boolean, progress?: (p: {what: string, loaded?: number, total?: number}) => void }} [opts]
 * @returns {Promise<{ module: WebAssembly.Module, bytes: ArrayBuffer, source: "cache" | "converted", ms: number }>}
 */
export async function convertedModule(pexeUrl, opts = {}) {
  const progress = opts.progress ?? (() => {});
  const conv = loadConverter();
  const pexe = await fetchPexe(pexeUrl, (loaded, total) => progress({ what: "fetch-pexe", loaded, total }));
  const { version, module: converterModule } = await conv;
  const options = opts.smallCode ? SMALL_CODE : 0;
  // The key changes with the pexe's bytes, the converter (its version names its wasm's
  // hash) and the options.
  // Cache Storage takes only http(s) keys: under the browser extension this file is the
  // extension's (chrome-extension://), and the cache is the page's origin's anyway.
  const base = /^https?:/.test(import.meta.url) ? import.meta.url : "https://pexe2wasm.invalid/";
  const key = new URL(`pexe2wasm-cache/${await sha256(pexe)}/${version}/${options}.wasm`, base).href;
  const cache = typeof caches !== "undefined" ? await caches.open(CACHE_NAME).catch(() => null) : null;
  const hit = await cache?.match(key);
  if (hit) {
    const bytes = await hit.arrayBuffer();
    progress({ what: "compile", loaded: bytes.byteLength, total: bytes.byteLength });
    return { module: await WebAssembly.compile(bytes), bytes, source: "cache", ms: 0 };
  }
  progress({ what: "convert", loaded: pexe.byteLength, total: pexe.byteLength });
  const t0 = performance.now();
  const r = await convertBytes(await converterModule(), pexe, options);
  const ms = performance.now() - t0;
  if (!r.ok) throw new Error(r.error);
  if (!r.plugin) {
    throw new Error("not a Pepper plugin (it never queries nacl-irt-ppapihook-0.1); run it with `pexe2wasm run`");
  }
  const bytes = /** @type {ArrayBuffer} */ (r.wasm.buffer);
  progress({ what: "compile", loaded: bytes.byteLength, total: bytes.byteLength });
  const module = await WebAssembly.compile(bytes);
  await cache?.put(key, new Response(bytes, { headers: { "content-type": "application/wasm" } })).catch(() => {});
  return { module, bytes, source: "converted", ms };
}
