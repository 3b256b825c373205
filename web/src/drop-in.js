// The drop-in script's loader. `pexe2wasm host` writes pexe2wasm.js as advertise.js followed
// by this file (pexe2wasm_webhost::drop_in_script), one classic script: included with
// `<script src="DIR/pexe2wasm.js"></script>`, it answers navigator.mimeTypes at once,
// before the page's own scripts, then loads the host (DIR/pexe2wasm/embed.js) as a module,
// which converts each pexe in the browser unless the page's config says `preconverted`
// (docs/DROP-IN.md).
(function loadHost() {
  "use strict";
  const script = /** @type {HTMLScriptElement | null} */ (document.currentScript);
  if (!script?.src) {
    console.error("pexe2wasm: include pexe2wasm.js as <script src=\"DIR/pexe2wasm.js\"></script>");
    return;
  }
  if (globalThis.__pexe2wasmDropIn) return;
  globalThis.__pexe2wasmDropIn = true;
  import(new URL("pexe2wasm/embed.js", script.src).href).catch((e) => console.error(`pexe2wasm: the host failed to load: ${e.message}`));
})();
