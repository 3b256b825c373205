// The browser converter's speed in a real browser: `node web/bench/convert-browser.mjs
// HOSTDIR PEXE...` (HOSTDIR from `pexe2wasm host -o HOSTDIR`; BROWSER=chromium (default) or
// firefox) serves HOSTDIR and the pexes on loopback, converts each pexe RUNS times (default
// 3) in a module worker with convert/converter.js, as a page's instance worker does, and
// prints one JSON line per pexe {pexe, ms: [first, …]} (docs/PERFORMANCE.md).

import { readFileSync } from "node:fs";
import { createServer } from "node:http";
import { join, resolve } from "node:path";

const [host, ...pexes] = process.argv.slice(2);
if (!host || !pexes.length) {
  console.error("usage: node convert-browser.mjs HOSTDIR PEXE...");
  process.exit(2);
}
const runs = Number(process.env.RUNS ?? 3);
const browserName = process.env.BROWSER ?? "chromium";
const WORKER = `
import { convertBytes } from "/pexe2wasm/convert/converter.js";
onmessage = async ({ data: { count, runs } }) => {
  const module = await WebAssembly.compileStreaming(fetch("/pexe2wasm/convert/converter.wasm"));
  for (let i = 0; i < count; i++) {
    const pexe = new Uint8Array(await (await fetch("/pexe/" + i)).arrayBuffer());
    const ms = [];
    let ok = false;
    for (let r = 0; r < runs; r++) {
      const t = performance.now();
      ok = (await convertBytes(module, pexe)).ok;
      ms.push(Math.round(performance.now() - t));
    }
    postMessage({ i, ok, ms });
  }
  postMessage({ done: true });
};`;
const PAGE = `<!doctype html><title>convert</title><script>
window.results = [];
const w = new Worker("/worker.js", { type: "module" });
w.onmessage = (e) => window.results.push(e.data);
w.postMessage({ count: ${pexes.length}, runs: ${runs} });
</script>`;
const headers = { "Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp", "Cache-Control": "no-store" };
const server = createServer((req, res) => {
  const path = new URL(req.url, "http://x").pathname;
  const send = (type, body) => res.writeHead(200, { ...headers, "Content-Type": type }).end(body);
  try {
    if (path === "/") send("text/html", PAGE);
    else if (path === "/worker.js") send("text/javascript", WORKER);
    else if (path.startsWith("/pexe/")) send("application/octet-stream", readFileSync(pexes[Number(path.slice(6))]));
    else if (path.startsWith("/pexe2wasm/") && !path.includes("..")) {
      send(path.endsWith(".wasm") ? "application/wasm" : "text/javascript", readFileSync(join(resolve(host), path)));
    } else res.writeHead(404, headers).end();
  } catch {
    res.writeHead(404, headers).end();
  }
});
await new Promise((r) => server.listen(0, "127.0.0.1", () => r(undefined)));
const url = `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}/`;

/** @type {{ goto(url: string): Promise<unknown>, evaluate(f: () => any): Promise<any> }} */
let page;
let close;
if (browserName === "firefox") {
  const puppeteer = (await import("puppeteer-core")).default;
  const browser = await puppeteer.launch({ browser: "firefox", executablePath: process.env.FIREFOX ?? "/usr/bin/firefox-esr", headless: true, protocolTimeout: 600000 });
  page = await browser.newPage();
  close = () => browser.close();
} else {
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true, args: ["--no-sandbox"] });
  page = await browser.newPage();
  close = () => browser.close();
}
await page.goto(url);
for (;;) {
  const results = await page.evaluate(() => /** @type {any} */ (window).results.splice(0));
  for (const r of results) {
    if (r.done) {
      await close();
      server.close();
      process.exit(0);
    }
    console.log(JSON.stringify({ browser: browserName, pexe: pexes[r.i], ok: r.ok, ms: r.ms }));
  }
  await new Promise((r) => setTimeout(r, 100));
}
