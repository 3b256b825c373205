// navigator.mimeTypes and navigator.plugins answer as in a Chrome with NaCl, for pages that
// tested for NaCl before embedding a module. A classic script, so that it runs before the
// page's own scripts when included first; embed.js runs it too when it was not.
(function advertise() {
  "use strict";
  // Where the host's files are (null later: currentScript is only set while this runs; run
  // from embed.js, a module, it is null, and embed.js's own src says the same folder).
  // As the head of pexe2wasm.js (the drop-in script), the host's files are in pexe2wasm/ beside it.
  const own = /** @type {HTMLScriptElement | null} */ (document.currentScript)?.src;
  const hostBase = (own && /\/pexe2wasm\.js(?:[?#].*)?$/.test(own) ? new URL("pexe2wasm/", own).href : own) ?? /** @type {HTMLScriptElement | null} */ (document.querySelector('script[src$="embed.js"]'))?.src ?? null;
  // Chrome's NaCl plugin answered both types: pexes (x-pnacl) and, for Web Store apps,
  // native nexes (x-nacl); the manifest picks the program either way.
  const TYPES = ["application/x-pnacl", "application/x-nacl"];
  if (globalThis.__pexe2wasmAdvertised) return;
  globalThis.__pexe2wasmAdvertised = true;
  const plugin = { name: "Native Client", filename: "internal-nacl-plugin", description: "", length: TYPES.length };
  const mimes = [
    { type: TYPES[0], suffixes: "pexe", description: "Portable Native Client Executable", enabledPlugin: plugin },
    { type: TYPES[1], suffixes: "nexe", description: "Native Client Executable", enabledPlugin: plugin },
  ];
  mimes.forEach((m, i) => {
    plugin[i] = m;
    plugin[m.type] = m;
  });
  plugin.item = (i) => mimes[i] ?? null;
  plugin.namedItem = (n) => mimes.find((m) => m.type === n) ?? null;
  // The real arrays with more entries (`extras`: [name, entry]), found by index, by name
  // and by item/namedItem.
  const wrap = (orig, extras) => {
    const named = new Map(extras);
    const values = extras.map(([, v]) => v);
    // The browser extension hears that the page tested for NaCl (extension/main.js).
    const tested = (v) => (globalThis.__pexe2wasmTested?.(), v);
    const at = (t, i) => (i >= t.length && i < t.length + values.length ? values[i - t.length] : undefined);
    return new Proxy(orig, {
      get(t, p) {
        if (typeof p === "string" && named.has(p)) return tested(named.get(p));
        if (p === "length") return t.length + values.length;
        if (typeof p === "string" && /^\d+$/.test(p) && at(t, Number(p))) return at(t, Number(p));
        if (p === "namedItem") return (n) => (named.has(n) ? tested(named.get(n)) : t.namedItem(n));
        if (p === "item") return (i) => at(t, i) ?? t.item(i);
        if (p === Symbol.iterator) return function* () { yield* Array.from(t); yield* values; };
        const v = Reflect.get(t, p, t);
        return typeof v === "function" ? v.bind(t) : v;
      },
      has(t, p) {
        return (typeof p === "string" && (named.has(p) || (/^\d+$/.test(p) && at(t, Number(p)) !== undefined))) || Reflect.has(t, p);
      },
    });
  };
  // NaCl's element API exists from the moment the element does: a page may call
  // embed.postMessage() in an inline script right after the <embed>, before the module
  // (or embed.js, a deferred module script) has loaded, and Chrome queued such messages.
  // Until embed.js adopts the element, its messages wait on it (cloned now, as Chrome
  // cloned them at the call); embed.js sends them first, in order.
  for (const C of [globalThis.HTMLEmbedElement, globalThis.HTMLObjectElement]) {
    if (!C || "postMessage" in C.prototype) continue;
    Object.defineProperty(C.prototype, "postMessage", {
      configurable: true,
      writable: true,
      value: function postMessage(data) {
        if (!TYPES.includes((this.getAttribute("type") ?? "").toLowerCase())) return;
        (this.__pexe2wasmEarly ??= []).push(typeof structuredClone === "function" ? structuredClone(data) : data);
      },
    });
  }
  installFileSystem(hostBase);
  try {
    const types = wrap(
      navigator.mimeTypes,
      mimes.map((m) => [m.type, m]),
    );
    const plugins = wrap(navigator.plugins, [["Native Client", plugin]]);
    Object.defineProperty(navigator, "mimeTypes", { configurable: true, get: () => types });
    Object.defineProperty(navigator, "plugins", { configurable: true, get: () => plugins });
  } catch (e) {
    console.warn(`pexe2wasm: navigator.mimeTypes cannot be extended here (${e.message}); pages that test for NaCl may refuse to embed`);
  }

  /**
   * Chrome's sandboxed File System API: pages call
   * navigator.webkitPersistentStorage.requestQuota as they load, so the names exist at once;
   * compat/filesystem.js, loaded at the first call, does the work. Where the browser has none
   * (Firefox, Safari) they are added. Chromium still has its own, but its files are not the
   * module's: in Chrome a NaCl module's LOCALPERSISTENT file system was the page's
   * PERSISTENT one, and the module's files are in the Origin Private File System
   * (host/io/sandbox-fs.js). So wherever there is an OPFS, Chromium's own API is replaced
   * by ours over the same folders; without one (an insecure context) Chromium keeps it.
   */
  function installFileSystem(base) {
    if (!base || typeof window === "undefined") return;
    const replace = "webkitRequestFileSystem" in window;
    if (replace && !(window.isSecureContext && navigator.storage && "getDirectory" in navigator.storage)) return;
    let loading = null;
    const lazy = (name, ...pre) =>
      function (...args) {
        loading ??= import(new URL("compat/filesystem.js", base).href);
        loading.then(
          (m) => m[name](...pre, ...args),
          (e) => console.error(`pexe2wasm: Chrome's file system API could not load: ${e}`),
        );
      };
    // `over`: replaces the browser's own (Chromium's) rather than only filling a gap.
    const define = (obj, name, value, over = false) => {
      if (over || !(name in obj)) Object.defineProperty(obj, name, { configurable: true, writable: true, value });
    };
    define(window, "TEMPORARY", 0);
    define(window, "PERSISTENT", 1);
    define(window, "webkitRequestFileSystem", lazy("requestFileSystem"), true);
    define(window, "webkitResolveLocalFileSystemURL", lazy("resolveLocalFileSystemURL"), true);
    const storage = (type) => ({ requestQuota: lazy("requestQuota", type), queryUsageAndQuota: lazy("queryUsageAndQuota", type) });
    define(navigator, "webkitTemporaryStorage", storage(0), true);
    define(navigator, "webkitPersistentStorage", storage(1), true);
    // FileError's constants, for pages that compare an error's `code` with them: the errors
    // carry these legacy codes (chrome/filesystem.js's FILE_ERROR_CODES, kept the same).
    const codes = ["NOT_FOUND_ERR", "SECURITY_ERR", "ABORT_ERR", "NOT_READABLE_ERR", "ENCODING_ERR", "NO_MODIFICATION_ALLOWED_ERR", "INVALID_STATE_ERR", "SYNTAX_ERR", "INVALID_MODIFICATION_ERR", "QUOTA_EXCEEDED_ERR", "TYPE_MISMATCH_ERR", "PATH_EXISTS_ERR"];
    const FileError = function FileError() {
      throw new TypeError("Illegal constructor");
    };
    codes.forEach((c, i) => {
      FileError[c] = i + 1;
      FileError.prototype[c] = i + 1;
    });
    define(window, "FileError", FileError);
  }
})();
