// Time from page load to an app's first message, in a real browser, with the module
// cached (the same profile, loaded RUNS times; the first, cold load is reported apart).
// Usage: node bench/first-message.mjs URL [RUNS]   (URL: a page that records
// window.firstMessageAt, e.g. tests/browser/pages/sdk-page.html?nmf=APP.nmf in a folder
// `pexe2wasm web` wrote and `pexe2wasm serve` serves). BROWSER=firefox for Firefox ESR.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [url, runsArg] = process.argv.slice(2);
const runs = Number(runsArg ?? 7);
const profile = mkdtempSync(join(tmpdir(), "pexe2wasm-bench-"));
const firefox = process.env.BROWSER === "firefox";
let browser;
let newPage;
if (firefox) {
  const puppeteer = (await import("puppeteer-core")).default;
  browser = await puppeteer.launch({ browser: "firefox", executablePath: "/usr/bin/firefox-esr", headless: true, userDataDir: profile });
  newPage = () => browser.newPage();
} else {
  const { chromium } = await import("playwright-core");
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  newPage = () => browser.newPage();
}
const times = [];
for (let i = 0; i <= runs; i++) {
  const page = await newPage();
  await page.goto(url);
  let t = null;
  for (let k = 0; k < 600 && t === null; k++) {
    t = await page.evaluate(() => /** @type {any} */ (window).firstMessageAt);
    if (t === null) await new Promise((r) => setTimeout(r, 20));
  }
  times.push(t);
  await page.close();
}
await browser.close();
const [cold, ...warm] = times;
warm.sort((a, b) => a - b);
const med = warm[Math.floor(warm.length / 2)];
console.log(
  JSON.stringify({
    browser: firefox ? "firefox" : "chromium",
    url,
    coldMs: Math.round(cold),
    warmMedianMs: Math.round(med),
    warmMinMs: Math.round(warm[0]),
    warmMaxMs: Math.round(warm[warm.length - 1]),
    runs,
  }),
);
