// Uses the upload page as a person would: open it in headless Chromium, choose a pexe,
// wait for its facts, check the page's own validation, download the wasm.
// Environment: SERVER_URL, PEXE (path), OUT (where to save the download),
// SCREENSHOT (optional PNG path), USER_DATA_DIR (a fresh directory); RUN=1 then presses
// Run: a program runs to its end in the page's terminal, or a plugin starts and is sent
// RUN_SEND until RUN_EXPECT (default 1) messages came back.
// Prints one JSON line with the facts the page shows; crates/server/tests/it/browser.rs checks it
// and validates the downloaded module with wasmparser.
import { chromium } from "playwright-core";

const { SERVER_URL, PEXE, OUT, SCREENSHOT, USER_DATA_DIR } = process.env;
if (!SERVER_URL || !PEXE || !OUT || !USER_DATA_DIR) {
  console.error("SERVER_URL, PEXE, OUT and USER_DATA_DIR must be set");
  process.exit(2);
}

const context = await chromium.launchPersistentContext(USER_DATA_DIR, {
  executablePath: "/usr/bin/chromium",
  headless: true,
  acceptDownloads: true,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30000);
  const pageErrors = [];
  page.on("pageerror", (e) => pageErrors.push(String(e)));
  await page.goto(SERVER_URL + "/");
  await page.locator("#file").setInputFiles(PEXE); // a pexe, or a package (.crx, .zip)
  await page.locator("#result").waitFor({ state: "visible" });
  const facts = {};
  for (const td of await page.locator("td[data-fact]").all()) {
    facts[await td.getAttribute("data-fact")] = await td.textContent();
  }
  if (SCREENSHOT) await page.screenshot({ path: SCREENSHOT, fullPage: true });
  const [download] = await Promise.all([
    page.waitForEvent("download"),
    page.locator("#download").click(),
  ]);
  await download.saveAs(OUT);
  let run = {};
  if (process.env.RUN) {
    await page.locator("#run").click();
    if (process.env.SITE_WAIT) {
      // A package's site runs in the page's frame: SITE_WAIT is an expression evaluated in
      // the first window of the Chrome app its launcher opened, waited for until truthy.
      const inWindow = (expr) => {
        const launcher = document.getElementById("site-frame")?.contentWindow;
        const w = launcher?.document?.querySelector("#pexe2wasm-desktop iframe.pexe2wasm-window-content")?.contentWindow;
        if (!w?.document) return null;
        try {
          return new w.Function(`return (${expr});`).call(w) || null;
        } catch {
          return null;
        }
      };
      const handle = await page.waitForFunction(inWindow, process.env.SITE_WAIT, { timeout: 120000 });
      run = { site: await handle.jsonValue() };
    } else if (process.env.RUN_SEND) {
      await page.waitForFunction(() => document.getElementById("run-status").textContent === "running", null, { timeout: 60000 });
      await page.locator("#message").fill(process.env.RUN_SEND);
      await page.locator("#send button").click();
      await page.waitForFunction(
        (n) => document.getElementById("messages").textContent.split("\n").filter((l) => l.startsWith("←")).length >= n,
        Number(process.env.RUN_EXPECT ?? 1),
        { timeout: 60000 },
      );
    } else {
      await page.waitForFunction(() => /exited|stopped/.test(document.getElementById("run-status").textContent), null, { timeout: 60000 });
    }
    run = {
      ...run,
      status: await page.locator("#run-status").textContent(),
      terminal: await page.locator("#terminal").textContent(),
      messages: await page.locator("#messages").textContent(),
      isolated: await page.evaluate(() => globalThis.crossOriginIsolated),
    };
  }
  console.log(JSON.stringify({ facts, filename: download.suggestedFilename(), pageErrors, run }));
} finally {
  await context.close();
}
