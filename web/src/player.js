// The player page's embed (`pexe2wasm host` writes DIR/player.html: the console page `web`
// generates for a bare pexe, with this script where its <embed> was). A site links a pexe
// or a manifest through it, `DIR/player.html?src=URL` (docs/DROP-IN.md), as NaCl content
// once opened in a tab of its own. A classic script, run where it stands: it puts the
// embed in its place before the page's console script looks for it.
//
// Only URLs of the player's own origin play: the module runs with the site's origin (its
// storage, its same-origin requests), so a link must not make it run another site's code.
(function player() {
  "use strict";
  const here = /** @type {HTMLScriptElement} */ (document.currentScript);
  const params = new URLSearchParams(location.search);
  const given = params.get("src") ?? "";
  const embed = document.createElement("embed");
  embed.id = "app";
  const size = (name, fallback) => {
    const n = Number(params.get(name));
    return Number.isInteger(n) && n > 0 && n <= 8192 ? n : fallback;
  };
  embed.width = String(size("width", 640));
  embed.height = String(size("height", 480));
  let url = null;
  try {
    url = given ? new URL(given, location.href) : null;
  } catch {
    url = null;
  }
  const last = url ? url.pathname.split("/").pop() || url.pathname : "";
  let name = last;
  try {
    name = decodeURIComponent(last);
  } catch {
    // A malformed escape: shown as it is.
  }
  const title = document.querySelector("h1");
  if (!url || url.origin !== location.origin) {
    // No src, or another origin's: the page says why.
    const why = !given
      ? "no pexe given: open this page as player.html?src=URL of a .pexe or .nmf"
      : `${given}: not a URL of this site (${location.origin}); the player plays only its own site's files`;
    console.error(`pexe2wasm: ${why}`);
    if (title) title.textContent = "pexe2wasm player";
    document.title = "pexe2wasm player";
    const status = document.getElementById("status");
    if (status) status.textContent = `error: ${why}`;
    // An element of no type, so the page's script finds it and nothing runs.
    here.before(embed);
    return;
  }
  document.title = `${name} (pexe2wasm)`;
  if (title) title.textContent = name;
  embed.type = "application/x-pnacl";
  if (/\.nmf$/i.test(url.pathname)) {
    embed.src = url.href;
  } else {
    // A pexe: the manifest NaCl needed, naming it (a blob: URL the page owns).
    const nmf = { program: { portable: { "pnacl-translate": { url: url.href } } } };
    embed.src = URL.createObjectURL(new Blob([JSON.stringify(nmf)], { type: "application/json" }));
  }
  here.before(embed);
})();
