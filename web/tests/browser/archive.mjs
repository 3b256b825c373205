// A web archive's replay, as serve.mjs serves it with ARCHIVE=FOLDER (the drop-in script's
// tests, crates/cli/tests/it/dropin_sites.rs): FOLDER stands for the capture of
// http://example.com/ taken at 20130101000000, laid out as the Wayback Machine replays
// captures, so that a NaCl page runs there as it would from an archive:
//
// - /web/TS/http://example.com/PATH (TS: 14 digits, maybe followed by a modifier: js_, cs_,
//   im_, if_) is FOLDER/PATH. Its pages are rewritten: every relative or example.com URL in
//   an src or href attribute becomes /web/TSMOD/http://example.com/…, and the archive's
//   toolbar (a div and a script of its own, /_static/js/toolbar.js) comes first in <body>.
// - /web/TSid_/http://example.com/PATH is the capture as it was recorded: no rewriting.
// - A .pexe asked for in the rewritten form is answered with a redirect to the raw (id_)
//   form of a nearby capture (20130102030405), and a .pexe is always sent as text/plain,
//   the wrong type an old server recorded for it.
//
// Nothing else of the archive is imitated (its wombat.js, which rewrites URLs the page makes
// at run time, is not there: the host must resolve the .nmf's relative pexe against the
// rewritten .nmf URL itself).

export const ORIGIN = "http://example.com/";
export const TIMESTAMP = "20130101000000";
const NEARBY = "20130102030405";
const CAPTURE = /^\/web\/(\d{14})(js_|cs_|im_|if_|id_)?\/(https?:\/\/[^/]+\/.*)$/;

/** What the toolbar's own script does: a global of its own and a line in the toolbar. */
export const TOOLBAR_JS = `"use strict";
window.__wm = { timestamp: "${TIMESTAMP}", original: "${ORIGIN}", toolbar: true };
document.getElementById("wm-ipp-inside").textContent += " (toolbar script ran)";
`;

const TOOLBAR = `<!-- BEGIN WAYBACK TOOLBAR INSERT -->
<div id="wm-ipp-base" style="display:block;height:40px;border-bottom:1px solid #999;background:#eee"><div id="wm-ipp-inside">The archive's toolbar: http://example.com/ captured ${TIMESTAMP}</div></div>
<script src="/_static/js/toolbar.js"></script>
<!-- END WAYBACK TOOLBAR INSERT -->`;

/**
 * What the archive answers for `path` (URL path, decoded): null when it is none of its
 * URLs; `{ redirect }`, `{ body, type }` (the archive's own script), or `{ rel, raw, ts }`: the
 * file of the capture (relative to FOLDER), and whether it is the raw (id_) form.
 *
 * @param {string} path
 * @returns {{ redirect?: string, body?: string, type?: string, missing?: boolean, rel?: string, raw?: boolean, ts?: string } | null}
 */
export function route(path) {
  if (path === "/_static/js/toolbar.js") return { body: TOOLBAR_JS, type: "text/javascript; charset=utf-8" };
  const m = CAPTURE.exec(path);
  if (!m) return null;
  const [, ts, mod = "", url] = m;
  if (!url.startsWith(ORIGIN)) return { missing: true };
  const rel = url.slice(ORIGIN.length);
  if (mod !== "id_" && /\.pexe$/i.test(rel)) return { redirect: `/web/${NEARBY}id_/${url}` };
  return { rel, raw: mod === "id_", ts };
}

/** The MIME type the archive recorded for a file of the capture, or null for the usual one. */
export function recordedType(rel) {
  return /\.pexe$/i.test(rel) ? "text/plain" : null;
}

/**
 * A page of the capture as the archive replays it: URLs rewritten into the archive, its
 * toolbar first in <body>.
 *
 * @param {string} page
 * @param {string} rel the page's path in the capture
 * @param {string} ts
 */
export function rewritePage(page, rel, ts) {
  const base = new URL(rel, ORIGIN);
  const rewritten = page.replace(/(<(\w+)\b[^>]*?\s)(src|href)=(["'])([^"']*)\4/gi, (all, before, tag, attr, q, value) => {
    if (/^(#|javascript:|data:|mailto:|blob:)/i.test(value) || value === "") return all;
    let url;
    try {
      url = new URL(value, base);
    } catch {
      return all;
    }
    if (url.origin + "/" !== ORIGIN) return all;
    const t = tag.toLowerCase();
    const mod = t === "script" ? "js_" : t === "link" ? "cs_" : t === "img" ? "im_" : t === "iframe" ? "if_" : "";
    return `${before}${attr}=${q}/web/${ts}${mod}/${url.href}${q}`;
  });
  const body = /<body(\s[^>]*)?>/i.exec(rewritten);
  if (!body) return TOOLBAR + rewritten;
  const at = body.index + body[0].length;
  return rewritten.slice(0, at) + "\n" + TOOLBAR + rewritten.slice(at);
}
