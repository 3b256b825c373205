// The player page (player.html, the console page `pexe2wasm web` writes for a bare pexe):
// a top-level link to a .pexe or .nmf lands here (background.js's redirect rule) as
// player.html?src=URL. A manifest is embedded as it is; a pexe gets a manifest naming it (a
// blob: URL). Runs before embed.js (a module script, so deferred).
(function player() {
  "use strict";
  const at = location.href.indexOf("?src=");
  const src = at < 0 ? "" : location.href.slice(at + 5);
  const app = document.getElementById("app");
  if (!/^https?:\/\//i.test(src)) {
    document.getElementById("status").textContent = "no .pexe or .nmf URL given (player.html?src=URL)";
    app.remove();
    return;
  }
  const name = decodeURIComponent(new URL(src).pathname.split("/").pop() || src);
  document.title = `${name} (pexe2wasm)`;
  document.querySelector("h1").textContent = name;
  let nmf = src;
  if (/\.pexe$/i.test(new URL(src).pathname)) {
    const manifest = { program: { portable: { "pnacl-translate": { url: src } } } };
    nmf = URL.createObjectURL(new Blob([JSON.stringify(manifest)], { type: "application/json" }));
  }
  app.setAttribute("src", nmf);
  globalThis.pexe2wasmConfig = { preconverted: false };
  api().storage.local.get({ urlMap: {} }).then((s) => {
    globalThis.pexe2wasmConfig.urlMap = s.urlMap ?? {};
  });
  function api() {
    return globalThis.browser ?? globalThis.chrome;
  }
})();
