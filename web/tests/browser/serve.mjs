// A static file server on loopback for trying sites by hand and in browser tests: the
// folder given (default .) at http://127.0.0.1:PORT/ (PORT from the second argument or
// $PORT, default 0: any free one; the URL is printed), with the headers that make a page
// cross-origin isolated, as `pexe2wasm serve` sets them. No listings, no writes.
//
//   node tests/browser/serve.mjs DIR [PORT]
//
// For the drop-in script's tests (crates/cli/tests/it/host.rs): MOUNT=/PATH/=FOLDER serves
// FOLDER (a `pexe2wasm host` folder) at /PATH/, and INJECT=URL adds
// `<script src="URL"></script>` to every HTML page as it is served, right after its <head>
// (the files on disk stay as they are); INJECT="URL1 URL2" adds two, in that order (the
// page-load benchmark's probe, web/bench/page-load.mjs); with INJECT_CONFIG=JSON, `<script>window.pexe2wasmConfig
// = JSON</script>` comes before it (the page's config for the drop-in script).
// ARCHIVE=FOLDER serves FOLDER as a web archive replays a capture of http://example.com/
// (archive.mjs: /web/TIMESTAMP/http://example.com/PATH, rewritten pages, the archive's
// toolbar, raw id_ forms, a pexe sent as text/plain).
//
// For the extension's tests (crates/cli/tests/it/extension.rs): PLAIN=1 serves as an old
// server or a web archive does: no isolation headers, no CORS headers, and .nmf and .pexe
// files with the wrong types (text/plain and application/octet-stream).

import { createReadStream, readFileSync, statSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize, resolve, sep } from "node:path";
import { recordedType, rewritePage, route } from "./archive.mjs";

const root = resolve(process.argv[2] ?? ".");
const port = Number(process.argv[3] ?? process.env.PORT ?? 0);
const [mountAt, mountDir] = (process.env.MOUNT ?? "").split(/=(.*)/s);
const inject = process.env.INJECT ?? "";
const injectConfig = process.env.INJECT_CONFIG ?? "";
const archive = process.env.ARCHIVE ? resolve(process.env.ARCHIVE) : "";
const TYPES = {
  ".html": "text/html; charset=utf-8",
  ".htm": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".json": "application/json",
  ".nmf": "application/json",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".gif": "image/gif",
  ".svg": "image/svg+xml",
  ".ico": "image/x-icon",
  ".txt": "text/plain; charset=utf-8",
};

const plain = process.env.PLAIN === "1";
if (plain) TYPES[".nmf"] = "text/plain; charset=utf-8";

const server = createServer((req, res) => {
  const headers = plain
    ? { "Cache-Control": "no-store" }
    : {
        "Cross-Origin-Opener-Policy": "same-origin",
        "Cross-Origin-Embedder-Policy": "require-corp",
        "Cross-Origin-Resource-Policy": "same-origin",
        "Cache-Control": "no-store",
      };
  let path;
  try {
    path = decodeURIComponent(new URL(req.url, "http://x").pathname);
  } catch {
    res.writeHead(400, headers).end();
    return;
  }
  let base = root;
  /** @type {ReturnType<typeof route>} */
  let captured = null;
  if (archive) {
    captured = route(path);
    if (captured?.redirect) {
      res.writeHead(302, { ...headers, Location: captured.redirect }).end();
      return;
    }
    if (captured?.body) {
      res.writeHead(200, { ...headers, "Content-Type": captured.type }).end(captured.body);
      return;
    }
    if (captured?.missing) {
      res.writeHead(404, { ...headers, "Content-Type": "text/plain" }).end("not in the archive");
      return;
    }
    if (captured) {
      base = archive;
      path = "/" + captured.rel;
    }
  }
  if (!captured && mountAt && mountDir && path.startsWith(mountAt)) {
    base = resolve(mountDir);
    path = path.slice(mountAt.length - 1);
  }
  let file = normalize(join(base, path));
  if (file !== base && !file.startsWith(base + sep)) {
    res.writeHead(403, headers).end();
    return;
  }
  try {
    if (statSync(file).isDirectory()) file = join(file, "index.html");
    const st = statSync(file);
    const type = (captured && recordedType(file)) || (TYPES[extname(file).toLowerCase()] ?? "application/octet-stream");
    const rewrite = captured && !captured.raw && type.startsWith("text/html");
    if ((inject || rewrite) && type.startsWith("text/html")) {
      let page = readFileSync(file, "latin1");
      if (rewrite) page = rewritePage(page, captured.rel, captured.ts);
      if (inject) page = withScript(page);
      res.writeHead(200, { ...headers, "Content-Type": type, "Content-Length": Buffer.byteLength(page, "latin1") });
      res.end(req.method === "HEAD" ? undefined : Buffer.from(page, "latin1"));
      return;
    }
    res.writeHead(200, { ...headers, "Content-Type": type, "Content-Length": st.size });
    if (req.method === "HEAD") res.end();
    else createReadStream(file).pipe(res);
  } catch {
    res.writeHead(404, { ...headers, "Content-Type": "text/plain" }).end("not found");
  }
});
server.listen(port, "127.0.0.1", () => console.log(`http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}/`));

/** The page with INJECT's script tags first in its head (or first of all, without one). */
function withScript(page) {
  const config = injectConfig ? `<script>window.pexe2wasmConfig = ${injectConfig.replace(/</g, "\\u003c")};</script>` : "";
  const tag =
    config +
    inject
      .split(/\s+/)
      .filter(Boolean)
      .map((url) => `<script src="${url}"></script>`)
      .join("");
  const head = /<head(\s[^>]*)?>/i.exec(page);
  const at = head ? head.index + head[0].length : 0;
  return page.slice(0, at) + tag + page.slice(at);
}
