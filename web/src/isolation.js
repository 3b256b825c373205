// Cross-origin isolation for hosts that cannot set headers. `pexe2wasm web` writes it beside
// the page as pexe2wasm-isolation.js (a service worker controls only its own folder and
// below). Included in a page as a classic
// script (first in <head>), it registers itself as a service worker that adds
// Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy to the responses of its
// scope, then reloads the page once so the page is served through it. Where headers can be
// set (pexe2wasm serve, a configured static host), it does nothing.
/* global clients */
if (typeof window === "undefined") {
  // The service worker.
  // Here `self` is the ServiceWorkerGlobalScope (the checker's lib knows only the page's).
  const sw = /** @type {ServiceWorkerGlobalScope} */ (/** @type {unknown} */ (self));
  sw.addEventListener("install", () => sw.skipWaiting());
  sw.addEventListener("activate", (e) => e.waitUntil(clients.claim()));
  sw.addEventListener("fetch", (e) => {
    const r = e.request;
    if (r.cache === "only-if-cached" && r.mode !== "same-origin") return;
    e.respondWith(
      fetch(r).then((resp) => {
        if (resp.status === 0) return resp;
        const headers = new Headers(resp.headers);
        headers.set("Cross-Origin-Opener-Policy", "same-origin");
        headers.set("Cross-Origin-Embedder-Policy", "require-corp");
        headers.set("Cross-Origin-Resource-Policy", "same-origin");
        return new Response(resp.body, { status: resp.status, statusText: resp.statusText, headers });
      }),
    );
  });
} else if (!window.crossOriginIsolated && window.isSecureContext && "serviceWorker" in navigator) {
  const key = "pexe2wasm-isolation-reload";
  navigator.serviceWorker.register(/** @type {HTMLScriptElement} */ (document.currentScript).src).then(
    (reg) => {
      // Reload once the worker controls the page; never loop if it still is not isolated.
      if (sessionStorage.getItem(key)) {
        console.error("pexe2wasm: the isolation service worker did not make this page cross-origin isolated");
        return;
      }
      const go = () => {
        sessionStorage.setItem(key, "1");
        location.reload();
      };
      if (reg.active && navigator.serviceWorker.controller) go();
      else navigator.serviceWorker.addEventListener("controllerchange", go);
    },
    (e) => console.error(`pexe2wasm: cannot register the isolation service worker: ${e.message}`),
  );
} else if (window.crossOriginIsolated) {
  sessionStorage.removeItem("pexe2wasm-isolation-reload");
}
