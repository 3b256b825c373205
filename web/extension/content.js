// The extension's content script (the isolated world), at document_start in every frame:
// the go-between of main.js (the page's world, which cannot reach the extension's APIs) and
// background.js. It asks whether the site is on and for the URL map, and passes on that the
// page has NaCl content (decision 0026: the background then isolates the tab).
(function extensionContent() {
  "use strict";
  const api = globalThis.browser ?? globalThis.chrome;
  const TO_PAGE = "pexe2wasm-ext:ext";
  const FROM_PAGE = "pexe2wasm-ext:page";
  const send = (m) => document.dispatchEvent(new CustomEvent(TO_PAGE, { detail: JSON.stringify(m) }));
  let go = null;
  api.runtime
    .sendMessage({ t: "hello" })
    .then((r) => {
      go = { t: "go", enabled: r?.enabled === true, base: api.runtime.getURL("pexe2wasm/"), config: r?.config ?? {} };
      send(go);
    })
    .catch((e) => console.warn(`pexe2wasm extension: the background did not answer (${e.message})`));
  document.addEventListener(FROM_PAGE, (e) => {
    let m;
    try {
      m = JSON.parse(/** @type {CustomEvent} */ (e).detail);
    } catch {
      return;
    }
    if (m?.t === "hello" && go) send(go);
    else if (m?.t === "found" && go?.enabled) {
      api.runtime
        .sendMessage({ t: "found", isolated: m.isolated === true, why: String(m.why), frameUrl: location.href })
        .then((r) => {
          if (r?.error) console.warn(`pexe2wasm extension: the page could not be isolated: ${r.error}`);
          send({ t: "ready", reload: r?.reload === true });
        })
        .catch((e) => console.warn(`pexe2wasm extension: the background did not answer (${e.message})`));
    }
  });
})();
