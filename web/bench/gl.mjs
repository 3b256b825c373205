// What a GL call costs through the browser host (ppb/gl/) against the same call made
// straight to WebGL 2, in Debian's Chromium (SwiftShader: no GPU here), on one context in
// the page. Serves web/ on loopback with the isolation headers, opens bench/gl-bench.html
// and prints ns per call. Usage: node bench/gl.mjs [N]

import { createReadStream, existsSync } from "node:fs";
import { createServer } from "node:http";
import { extname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const n = Number(process.argv[2] ?? 200000);
const types = { ".html": "text/html", ".js": "text/javascript", ".mjs": "text/javascript" };
const server = createServer((req, res) => {
  const path = normalize(join(root, decodeURIComponent(new URL(req.url, "http://x").pathname)));
  if (!path.startsWith(root) || !existsSync(path)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, {
    "Content-Type": types[extname(path)] ?? "application/octet-stream",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
  });
  createReadStream(path).pipe(res);
});
await new Promise((r) => server.listen(0, "127.0.0.1", () => r()));
const { chromium } = await import("playwright-core");
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--disable-background-networking"],
});
try {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (server.address()).port}/bench/gl-bench.html?n=${n}`);
  await page.waitForFunction(() => /** @type {any} */ (window).result, null, { timeout: 300000 });
  const r = await page.evaluate(() => /** @type {any} */ (window).result);
  const row = (name, ns) => console.log(`${name.padEnd(52)} ${ns.toFixed(0).padStart(8)} ns`);
  row("Uniform4f, straight to WebGL", r.uniformDirect);
  row("Uniform4f, through the host", r.uniformHost);
  row("DrawArrays (a triangle), straight to WebGL", r.drawDirect);
  row("DrawArrays, through the host", r.drawHost);
  row("DrawArrays, client-side vertices (copied per draw)", r.drawClientArrays);
  console.log(JSON.stringify(r));
  if (r.glError !== 0) throw new Error(`GL error ${r.glError}`);
} finally {
  await browser.close();
  server.close();
}
