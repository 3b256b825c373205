// The extension's script in the page's own world (MAIN), at document_start in every frame,
// after pexe2wasm/advertise.js (navigator.mimeTypes already answers NaCl's type, before the
// page's scripts run). It watches for a NaCl <embed>/<object> (or a test of the mimeTypes
// answer), tells the extension's content script (content.js, the isolated world) when it
// sees one, and once the extension says go (the site is on; the page is cross-origin
// isolated, decision 0026), loads the browser host (pexe2wasm/embed.js) from the
// extension's files. It never loads the host on a page without NaCl content, and the host
// only runs the modules the page's own elements name. Messages to and from content.js are
// JSON strings in CustomEvents on the document (docs/EXTENSION.md).
(function extensionMain() {
  "use strict";
  if (globalThis.__pexe2wasmExtension) return;
  globalThis.__pexe2wasmExtension = true;
  // NaCl's two types: pexes, and native nexes (Web Store apps)
  const TYPES = ["application/x-pnacl", "application/x-nacl"];
  const TO_EXT = "pexe2wasm-ext:page";
  const FROM_EXT = "pexe2wasm-ext:ext";
  const log = (text, level = "info") => console[level](`pexe2wasm extension: ${text}`);
  const send = (m) => document.dispatchEvent(new CustomEvent(TO_EXT, { detail: JSON.stringify(m) }));

  /** What the extension said: {enabled, base, config}; null until it answers. */
  let go = null;
  /** Why the page has NaCl content ("embed", "mimeTypes test"), once seen. */
  let found = null;
  let asked = false; // the content script was told of the NaCl content
  let loading = false; // the host is loading
  const told = new WeakSet();

  const isNacl = (el) => (el.localName === "embed" || el.localName === "object") && TYPES.includes((el.getAttribute("type") ?? "").toLowerCase());

  /** Says once per element what the extension replaces (once the host loads: not before a reload). */
  function tell(el) {
    if (told.has(el) || !loading) return;
    told.add(el);
    const src = el.getAttribute(el.localName === "object" ? "data" : "src") ?? "";
    const type = (el.getAttribute("type") ?? "").toLowerCase();
    log(`replacing <${el.localName} type="${type}" src="${src}"> with its module converted to WebAssembly (pexe2wasm)`);
  }

  function scan(root) {
    if (root.nodeType !== 1) return;
    const els = isNacl(root) ? [root] : [];
    for (const el of root.querySelectorAll("embed, object")) if (isNacl(el)) els.push(el);
    if (els.length === 0) return;
    els.forEach(tell);
    see("embed");
  }

  function see(why) {
    found ??= why;
    step();
  }

  /** Acts once both the extension's answer and the NaCl content are there. */
  function step() {
    if (!go?.enabled || !found || asked) return;
    asked = true;
    // The background adds the isolation headers for this tab (and reloads it once when the
    // page is not isolated) and lets the page's fetches of .nmf/.pexe across origins.
    send({ t: "found", why: found, isolated: globalThis.crossOriginIsolated === true });
  }

  function loadHost() {
    if (loading) return;
    loading = true;
    for (const el of document.querySelectorAll("embed, object")) if (isNacl(el)) tell(el);
    globalThis.pexe2wasmConfig = mergeConfig(globalThis.pexe2wasmConfig, go.config);
    import(new URL("embed.js", go.base).href).catch((e) => log(`the host failed to load from ${go.base}: ${e.message}`, "error"));
  }

  /** The page's own config keeps its keys; the extension's URL map fills in. */
  function mergeConfig(own, ext) {
    const page = own && typeof own === "object" ? own : {};
    return { preconverted: false, ...ext, ...page, urlMap: { ...(ext?.urlMap ?? {}), ...(page.urlMap ?? {}) } };
  }

  /** A site turned off: the page sees the browser as it is. */
  function undoAdvertise() {
    for (const name of ["mimeTypes", "plugins"]) {
      if (Object.prototype.hasOwnProperty.call(navigator, name)) delete navigator[name];
    }
    for (const C of [globalThis.HTMLEmbedElement, globalThis.HTMLObjectElement]) {
      if (C && Object.prototype.hasOwnProperty.call(C.prototype, "postMessage")) Reflect.deleteProperty(C.prototype, "postMessage");
    }
  }

  document.addEventListener(FROM_EXT, (e) => {
    let m;
    try {
      m = JSON.parse(/** @type {CustomEvent} */ (e).detail);
    } catch {
      return;
    }
    if (m?.t === "go" && !go) {
      go = { enabled: m.enabled === true, base: String(m.base), config: m.config ?? {} };
      if (!go.enabled) {
        undoAdvertise();
        return;
      }
      step();
    } else if (m?.t === "ready" && go?.enabled) {
      // The headers are in place; when the page is still not isolated and no reload comes
      // (one was tried), the host loads anyway and says on the console what is missing.
      if (m.reload) return;
      loadHost();
    }
  });
  // advertise.js calls this when the page reads NaCl's entry of navigator.mimeTypes/plugins.
  globalThis.__pexe2wasmTested = () => see("mimeTypes test");
  new MutationObserver((records) => {
    for (const r of records) for (const n of r.addedNodes) scan(n);
  }).observe(document, { childList: true, subtree: true });
  if (document.documentElement) scan(document.documentElement);
  send({ t: "hello" });
})();
