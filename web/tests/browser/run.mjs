// Drives a converted Pepper app in a real browser and prints a JSON report on its last
// line; crates/cli/tests/it/web.rs runs it and checks the report. Debian's Chromium goes
// through playwright-core, Debian's Firefox ESR through puppeteer-core over WebDriver BiDi,
// Debian's WebKitGTK (Safari's engine: WebKit and JavaScriptCore) through selenium-webdriver
// and WebKitWebDriver (classic WebDriver: WebKitGTK 2.50 has no BiDi); none downloads a
// browser. Everything stays on loopback.
//
// Environment: BROWSER (chromium | firefox | webkit), URL (the page), SCENARIO (below), SCREENSHOT
// (a PNG path), PROFILE (an empty directory for the browser's profile), plus what a
// scenario reads (MESSAGES: a JSON array of messages to send; WAIT_NACL=0: a chrome-app
// scenario does not wait for the app's NaCl module).

import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";

const env = process.env;
const browserName = env.BROWSER ?? "chromium";
const report = { browser: browserName, pageErrors: [], consoleErrors: [], console: [] };

/**
 * What the scenarios use of a page: the part of Playwright's Page (Chromium) that
 * Puppeteer's Page (Firefox) and launchWebKit's wrapper over WebDriver also have. `evaluate`
 * runs `f` in the page (sent as source: it sees only the page's globals and `arg`);
 * `context` is Playwright's alone (the ime scenario, Chromium only).
 * @typedef {object} ScenarioPage
 * @property {(event: "console" | "pageerror", f: (m: any) => void) => unknown} on
 * @property {(url: string) => Promise<unknown>} goto
 * @property {(f: (arg: any) => any, arg?: any) => Promise<any>} evaluate
 * @property {(selector: string) => Promise<void>} click
 * @property {(selector: string) => Promise<ScenarioElement>} $
 * @property {(options: { path: string }) => Promise<unknown>} screenshot
 * @property {{ move(x: number, y: number): Promise<void>, down(): Promise<void>, up(): Promise<void> }} mouse
 * @property {{ press(key: string): Promise<void> }} keyboard
 * @property {() => any} [context]
 */
/**
 * An element as the scenarios use it: a PNG of it, and its rectangle in the viewport.
 * @typedef {object} ScenarioElement
 * @property {() => Promise<Buffer | Uint8Array>} screenshot
 * @property {() => Promise<{ x: number, y: number, width: number, height: number }>} boundingBox
 */

/** A free loopback port (for WebKitWebDriver, which takes a port, not 0). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = /** @type {import("node:net").AddressInfo} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

/**
 * Installed in the page once it has loaded: what the page and its workers say on the console
 * from then on, and its uncaught errors. Classic WebDriver has no console events, and
 * WebKitGTK's "console to stdout" setting stays silent in a view under automation. An error
 * thrown before the load event is not seen here; the scenarios' own checks (messages,
 * events, status) still catch an app that did not start.
 */
function captureConsole() {
  if (window.__runLog) return;
  const log = (window.__runLog = []);
  for (const type of ["log", "info", "warn", "error", "debug"]) {
    const orig = console[type].bind(console);
    console[type] = (...args) => {
      log.push({ type: type === "warn" ? "warning" : type, text: args.map(String).join(" ") });
      orig(...args);
    };
  }
  addEventListener("error", (e) => log.push({ uncaught: true, text: String(e.error?.message ?? e.message) }));
  addEventListener("unhandledrejection", (e) => log.push({ uncaught: true, text: `Unhandled Promise Rejection: ${e.reason}` }));
}

/**
 * WebKitGTK's MiniBrowser through WebKitWebDriver (it needs a display: web.rs runs this under
 * xvfb-run).
 */
async function launchWebKit() {
  const { Builder, By } = await import("selenium-webdriver");
  const port = await freePort();
  // JavaScriptCore exposes SharedArrayBuffer only with this option on WebKitGTK; Safari
  // exposes it on cross-origin-isolated pages (the tests check the page is isolated).
  const driverProcess = spawn(env.WEBKITWEBDRIVER ?? "/usr/bin/WebKitWebDriver", [`--port=${port}`], {
    env: { ...process.env, JSC_useSharedArrayBuffer: "1" },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const server = `http://127.0.0.1:${port}`;
  for (let t = 0; ; t++) {
    try {
      if ((await fetch(`${server}/status`)).ok) break;
    } catch (e) {
      if (t > 200) throw new Error(`WebKitWebDriver did not answer on ${server}: ${e}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const driver = await new Builder()
    .usingServer(server)
    .withCapabilities({
      browserName: "MiniBrowser",
      "webkitgtk:browserOptions": {
        binary: env.MINIBROWSER ?? "/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser",
        args: ["--automation"],
      },
    })
    .build();
  await driver.manage().setTimeouts({ script: 180000, pageLoad: 120000 });
  const handlers = { console: [], pageerror: [] };
  const screenshot = async (el) => Buffer.from(await el.takeScreenshot(), "base64");
  // As Playwright's page.evaluate(f, arg): WebDriver awaits a returned promise.
  const evaluate = (f, arg) => driver.executeScript(`return (${f}).apply(null, arguments);`, arg);
  // WebKitGTK's element screenshot of a canvas comes back blank (repeated ones have hung the
  // page), and a canvas whose control went to a worker has no toDataURL: the element's
  // rectangle is cut from a screenshot of the page instead, by the page (no PNG library).
  // WebKitGTK's driver now and then answers "Could not parse script result" for the data
  // URL on a loaded machine (the same shot passes when repeated): one more try then.
  const elementShot = async (el) => {
    try {
      return await elementShotOnce(el);
    } catch (e) {
      if (!String(e?.message).includes("Could not parse script result")) throw e;
      return elementShotOnce(el);
    }
  };
  const elementShotOnce = async (el) => {
    const whole = await driver.takeScreenshot();
    const url = await driver.executeScript(
      `const [el, png] = arguments;
       const r = el.getBoundingClientRect();
       const img = new Image();
       img.src = "data:image/png;base64," + png;
       return img.decode().then(() => {
         const c = document.createElement("canvas");
         c.width = Math.round(r.width);
         c.height = Math.round(r.height);
         c.getContext("2d").drawImage(img, -Math.round(r.left), -Math.round(r.top));
         return c.toDataURL("image/png");
       });`,
      el,
      whole,
    );
    return Buffer.from(url.slice(url.indexOf(",") + 1), "base64");
  };
  // Playwright's mouse and keyboard as WebDriver actions (viewport coordinates); the pointer
  // keeps its place between calls, as WebDriver keeps input state for the session.
  const act = () => driver.actions({ async: true });
  /** @type {ScenarioPage} */
  const page = {
    on: (event, f) => handlers[event].push(f),
    goto: async (url) => {
      await driver.get(url);
      await evaluate(captureConsole);
    },
    evaluate,
    click: async (selector) => (await driver.findElement(By.css(selector))).click(),
    $: async (selector) => {
      const el = await driver.findElement(By.css(selector));
      return { screenshot: () => elementShot(el), boundingBox: () => el.getRect() };
    },
    screenshot: async ({ path }) => writeFileSync(path, await screenshot(driver)),
    mouse: {
      move: (x, y) => act().move({ x: Math.round(x), y: Math.round(y), origin: "viewport" }).perform(),
      down: () => act().press().perform(),
      up: () => act().release().perform(),
    },
    keyboard: { press: (key) => act().keyDown(key).keyUp(key).perform() },
  };
  const close = async () => {
    const entries = await evaluate(() => window.__runLog ?? []).catch(() => []);
    for (const e of entries) {
      if (e.uncaught) for (const f of handlers.pageerror) f(new Error(e.text));
      else for (const f of handlers.console) f({ type: () => e.type, text: () => e.text });
    }
    await driver.quit().catch(() => {});
    driverProcess.kill();
  };
  return { browser: driver, page, close };
}

/**
 * EXTENSION: the folder of an unpacked extension (`pexe2wasm extension -o DIR`, with
 * --firefox for Firefox) the browser runs with; its base URL goes into
 * report.extensionBase and the steps' `{ext}`.
 */
const ext = env.EXTENSION ? { dir: env.EXTENSION, geckoId: JSON.parse(readFileSync(`${env.EXTENSION}/manifest.json`, "utf8")).browser_specific_settings?.gecko?.id } : null;
/** The moz-extension:// UUID Firefox gives the extension (a pref set before it installs). */
const FIREFOX_EXTENSION_UUID = "5e2c1d3a-7b7f-4c55-9a57-0e2f0a11c0de";

/** @returns {Promise<{ browser: unknown, page: ScenarioPage, close: () => Promise<void> }>} */
async function launch() {
  mkdirSync(env.PROFILE, { recursive: true });
  if (browserName === "webkit") return launchWebKit();
  if (browserName === "firefox") {
    const puppeteer = (await import("puppeteer-core")).default;
    const browser = await puppeteer.launch({
      browser: "firefox",
      executablePath: env.FIREFOX ?? "/usr/bin/firefox-esr",
      // HEADFUL=1 shows a window (under xvfb-run): headless Firefox has no WebGL here.
      headless: !env.HEADFUL,
      // Two busy cores make a cold Firefox slow to start; give it time rather than fail.
      timeout: 120000,
      protocolTimeout: 180000,
      userDataDir: env.PROFILE,
      extraPrefsFirefox: {
        // No update checks, telemetry or remote settings: nothing leaves loopback.
        "app.update.enabled": false,
        "browser.safebrowsing.malware.enabled": false,
        "browser.safebrowsing.phishing.enabled": false,
        "datareporting.policy.dataSubmissionEnabled": false,
        "network.captive-portal-service.enabled": false,
        "network.connectivity-service.enabled": false,
        "services.settings.server": "http://127.0.0.1:9/",
        // EXTENSION: an unsigned extension, at a moz-extension:// UUID the steps can name.
        ...(ext ? { "xpinstall.signatures.required": false, "extensions.webextensions.uuids": JSON.stringify({ [ext.geckoId]: FIREFOX_EXTENSION_UUID }) } : {}),
      },
    });
    if (ext) {
      await browser.installExtension(ext.dir);
      report.extensionBase = `moz-extension://${FIREFOX_EXTENSION_UUID}/`;
    }
    const page = await browser.newPage();
    return { browser, page, close: () => browser.close() };
  }
  const { chromium } = await import("playwright-core");
  const context = await chromium.launchPersistentContext(env.PROFILE, {
    executablePath: env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    timeout: 120000,
    // EXTENSION: the unpacked extension loaded (Playwright's defaults turn extensions off).
    ...(ext ? { ignoreDefaultArgs: ["--disable-extensions"] } : {}),
    args: [
      ...(ext ? [`--disable-extensions-except=${ext.dir}`, `--load-extension=${ext.dir}`] : []),
      "--no-sandbox",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
      // No host name but loopback resolves: tests reach nothing beyond this machine.
      "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
    ],
  });
  if (ext) {
    const worker = context.serviceWorkers()[0] ?? (await context.waitForEvent("serviceworker", { timeout: 60000 }));
    report.extensionBase = new URL("/", worker.url()).href;
  }
  const page = context.pages()[0] ?? (await context.newPage());
  return { browser: context, page, close: () => context.close() };
}

/**
 * Polls `f` in the page until it returns a truthy value; that value, or null at the deadline.
 * An evaluation that throws counts as not yet: WebKitGTK's WebDriver has answered `get`
 * before the page's scripts set `window.events` (CI saw it once), and a page may still be
 * navigating.
 *
 * @param {ScenarioPage} page
 * @param {(arg: any) => any} f
 * @param {any} arg
 * @param {number} ms
 */
async function waitFor(page, f, arg, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await page.evaluate(f, arg).catch(() => null);
    if (v) return v;
    if (Date.now() > end) return null;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The page's messages so far, ArrayBuffers as {arrayBuffer: [bytes…]} (JSON-safe), also
 * inside arrays and dictionaries (nassh's `write` carries one in its arguments).
 */
function pageMessages() {
  /** @param {unknown} m @returns {unknown} */
  const safe = (m) => {
    if (m instanceof ArrayBuffer) return { arrayBuffer: Array.from(new Uint8Array(m)) };
    if (Array.isArray(m)) return m.map(safe);
    if (m && typeof m === "object") return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, safe(v)]));
    return m;
  };
  return (window.messages ?? []).map(safe);
}

const scenarios = {
  /** Sends MESSAGES one after the other once loaded; waits for EXPECT messages. */
  async messages(page) {
    const sends = JSON.parse(env.MESSAGES ?? "[]");
    const expect = Number(env.EXPECT ?? sends.length);
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    // SEND_AFTER_MS: time for what the app starts at load (sockets opening) before sending.
    await new Promise((r) => setTimeout(r, Number(env.SEND_AFTER_MS ?? 0)));
    for (const m of sends) await page.evaluate((m) => window.naclModule.postMessage(m), m);
    await waitFor(page, (n) => window.messages.length >= n || window.events.some((e) => e !== "load"), expect, 30000);
    await new Promise((r) => setTimeout(r, 300)); // any message too many shows up too
  },

  /**
   * The Pepper conformance suite (crates/cli/tests/it/conformance.rs): CASES is a JSON array
   * of {messages, expect}; each case loads the page afresh (a new instance), sends its
   * messages and waits for `expect` messages back, then a little longer for any extra.
   * report.cases holds each case's messages. One browser launch for all cases.
   */
  async conformance(page) {
    const cases = JSON.parse(env.CASES ?? "[]");
    report.cases = [];
    for (const [i, c] of cases.entries()) {
      if (i > 0) await page.goto(env.URL);
      const loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
      for (const m of c.messages) await page.evaluate((m) => window.naclModule.postMessage(m), m);
      await waitFor(page, (n) => window.messages.length >= n || window.events.some((e) => e !== "load"), c.expect, 10000);
      await new Promise((r) => setTimeout(r, 200));
      report.cases.push({ loaded, events: await page.evaluate(() => window.events), messages: await page.evaluate(pageMessages) });
    }
    report.loaded = report.cases.every((c) => c.loaded);
  },

  /** Stockfish over UCI: `go depth N` ends with a bestmove. */
  async stockfish(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    for (const m of ["uci", "isready", "position startpos", `go depth ${env.DEPTH ?? 12}`]) {
      await page.evaluate((m) => window.naclModule.postMessage(m), m);
    }
    const t0 = Date.now();
    await waitFor(page, () => window.messages.some((m) => typeof m === "string" && m.startsWith("bestmove")), null, 120000);
    report.searchMs = Date.now() - t0;
  },

  /** webpenc: an RGBA picture in, a lossless WebP out that the browser decodes to the same pixels. */
  async webp(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    report.decoded = await page.evaluate(async () => {
      const width = 64;
      const height = 48;
      const data = new Uint8Array(width * height * 4);
      for (let i = 0; i < width * height; i++) data.set([i % 256, (i * 7) % 256, 128, 255], 4 * i);
      window.naclModule.postMessage({ rgba: data.buffer.slice(0), width, height, quality: "lossless", id: 1 });
      const reply = () => window.messages.find((m) => m && m.data instanceof ArrayBuffer);
      for (let t = 0; t < 300 && !reply(); t++) await new Promise((r) => setTimeout(r, 100));
      if (!reply()) return { error: "no WebP came back", messages: window.messages.map((m) => JSON.stringify(m)) };
      const { id, data: webp } = reply();
      const bitmap = await createImageBitmap(new Blob([webp], { type: "image/webp" }));
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const ctx = canvas.getContext("2d");
      ctx.drawImage(bitmap, 0, 0);
      const got = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
      let differ = 0;
      for (let i = 0; i < Math.min(got.length, data.length); i++) if (got[i] !== data[i]) differ++;
      return { id, bytes: webp.byteLength, width: bitmap.width, height: bitmap.height, differingBytes: differ };
    });
  },

  /** Clicks the app at (30, 40) and types "a": the input-echo fixture posts one number per event. */
  async input(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    // The page knows which classes the app asked for before it forwards any.
    await waitFor(page, () => window.naclModule.pexe2wasm.inputClasses, null, 10000);
    const box = await (await page.$("canvas.pexe2wasm-canvas")).boundingBox();
    await page.mouse.move(box.x + 30, box.y + 40);
    await page.mouse.down();
    await page.mouse.up();
    await page.keyboard.press("a");
    await waitFor(page, () => window.messages.length >= 6, null, 10000);
    await new Promise((r) => setTimeout(r, 300));
  },

  /** A touch and its release on the canvas, as synthetic TouchEvents (headless has no touchscreen). */
  async touch(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    await waitFor(page, () => window.naclModule.pexe2wasm.inputClasses & 8, null, 10000);
    await page.evaluate(() => {
      const c = document.querySelector("canvas.pexe2wasm-canvas");
      const r = c.getBoundingClientRect();
      const t = new Touch({ identifier: 7, target: c, clientX: r.left + 12, clientY: r.top + 34 });
      c.dispatchEvent(new TouchEvent("touchstart", { touches: [t], changedTouches: [t], targetTouches: [t], cancelable: true, bubbles: true }));
      c.dispatchEvent(new TouchEvent("touchend", { touches: [], changedTouches: [t], targetTouches: [], cancelable: true, bubbles: true }));
    });
    await waitFor(page, () => window.messages.length >= 2, null, 10000);
    await new Promise((r) => setTimeout(r, 300));
  },

  /**
   * The ime-echo fixture (fixtures/pepper/ime-echo.pnaclasm) under an IME: compositions and
   * commits come from Chrome DevTools Protocol (Input.imeSetComposition, Input.insertText),
   * which drives the browser's own IME path into the focused editable element, as a real
   * IME does. The app's ops (its HandleMessage) call PPB_TextInputController; each is
   * acknowledged with op + 1000, so a step starts when the page has the app's last word.
   * report.ime holds what the page showed at each step. Chromium only: WebDriver BiDi
   * (Firefox) has no IME or composition command, and synthetic composition events would
   * test only our listeners, not the browser's composition.
   */
  async ime(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    await waitFor(page, () => window.naclModule.pexe2wasm.inputClasses & 16, null, 10000);
    const cdp = await page.context().newCDPSession(page);
    const seen = () => page.evaluate(() => window.messages.length);
    const op = async (n) => {
      const acks = await page.evaluate((a) => window.messages.filter((m) => m === a).length, n + 1000);
      await page.evaluate((n) => window.naclModule.postMessage(n), n);
      await waitFor(page, ([a, k]) => window.messages.filter((m) => m === a).length > k, [n + 1000, acks], 10000);
    };
    // Waits for at least `min` more messages from the app, then until they stop coming
    // (what comes too many still shows: the test checks the whole list).
    const settle = async (n, min) => {
      await waitFor(page, (k) => window.messages.length >= k, n + min, 10000);
      for (;;) {
        await new Promise((r) => setTimeout(r, 250));
        const m = await seen();
        if (m === n) return;
        n = m;
      }
    };
    const compose = async (text, start, end, min = 1) => {
      const n = await seen();
      await cdp.send("Input.imeSetComposition", { text, selectionStart: start, selectionEnd: end });
      await settle(n, min);
    };
    const commit = async (text, min = 2) => {
      const n = await seen();
      await cdp.send("Input.insertText", { text });
      await settle(n, min);
    };
    const state = () =>
      page.evaluate(() => {
        const el = /** @type {HTMLInputElement} */ (document.querySelector("input.pexe2wasm-text-input"));
        const c = document.querySelector("canvas.pexe2wasm-canvas").getBoundingClientRect();
        const r = el.getBoundingClientRect();
        const a = document.activeElement;
        return {
          focused: a === el ? "text-input" : a?.localName ?? null,
          value: el.value,
          selection: [el.selectionStart, el.selectionEnd, el.selectionDirection],
          at: [Math.round(r.left - c.left), Math.round(r.top - c.top), Math.round(r.height)],
          opacity: getComputedStyle(el).opacity,
        };
      });
    /** @type {Record<string, unknown>} */
    const ime = (report.ime = {});
    // The app never asked for mouse events: the click only focuses, and the editable
    // element takes the focus from the canvas.
    await page.click("canvas.pexe2wasm-canvas");
    ime.clicked = await state();
    await op(100); // UpdateCaretPosition
    await op(104); // UpdateSurroundingText
    ime.surrounding = await state();
    // A composition changed twice, a clause selected, then committed.
    await compose("に", 1, 1);
    await compose("にほ", 2, 2);
    await compose("日本語", 0, 1);
    await commit("日本語");
    ime.committed = await state();
    // A composition emptied (the user deleted it).
    await compose("か", 1, 1);
    await compose("", 0, 0);
    // A composition the app cancels, and the next one.
    await compose("さ", 1, 1);
    await op(101); // CancelCompositionText
    ime.cancelled = await state();
    await compose("し", 1, 1);
    await commit("し");
    // SetTextInputType(NONE): no editable element, so no IME.
    await op(0);
    ime.none = await state();
    await compose("す", 1, 1, 0);
    await commit("す", 0);
    // TEXT again, and IME events no longer requested: commits become CHAR events, and the
    // composition shows at the caret (the app cannot draw it).
    await op(1);
    await op(102); // ClearInputEventRequest(IME)
    ime.text = await state();
    await compose("ね", 1, 1, 0);
    ime.composingUnaware = await state();
    await commit("ね", 3);
    await commit("日😀", 6);
    ime.afterUnaware = await state();
    // Keys still arrive as before: RAWKEYDOWN, CHAR, KEYUP, with no second CHAR.
    const n = await seen();
    await page.keyboard.press("a");
    await settle(n, 5);
  },

  /**
   * Lets the app draw: SHOT1 is the canvas's first picture that differs from the blank
   * canvas at load, SHOT2 the next one that differs from SHOT1 (each waited for up to
   * 120 s, polling every second, so a slow machine is only slower).
   */
  async canvas(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    const c = await page.$("canvas.pexe2wasm-canvas");
    const next = async (than) => {
      for (let t = 0; t < 120; t++) {
        const shot = await c.screenshot();
        if (!shot.equals(than)) return shot;
        await new Promise((r) => setTimeout(r, 1000));
      }
      return than;
    };
    const blank = await c.screenshot();
    const first = await next(blank);
    const second = await next(first);
    const { writeFileSync } = await import("node:fs");
    writeFileSync(env.SHOT1, first);
    writeFileSync(env.SHOT2, second);
  },

  /**
   * bp2008's H.264 player: STREAM (an Annex B file on the site, with access unit
   * delimiters) is sent an access unit at a time ("f N", then its bytes), as its page did;
   * waits until the player reports every frame rendered ("rf ..."), then shoots the canvas
   * into SHOT1.
   */
  async video(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    await waitFor(page, () => window.messages.includes("decoder initialized"), null, 30000);
    report.sent = await page.evaluate(async (url) => {
      const b = new Uint8Array(await (await fetch(url)).arrayBuffer());
      const starts = [];
      for (let i = 0; i + 4 < b.length; i++) {
        if (b[i] === 0 && b[i + 1] === 0 && b[i + 2] === 1 && (b[i + 3] & 0x1f) === 9) starts.push(i > 0 && b[i - 1] === 0 ? i - 1 : i);
      }
      starts.push(b.length);
      for (let k = 0; k + 1 < starts.length; k++) {
        window.naclModule.postMessage(`f ${k * 100}`); // milliseconds: the player paces frames by them
        window.naclModule.postMessage(b.slice(starts[k], starts[k + 1]).buffer);
      }
      return starts.length - 1;
    }, env.STREAM);
    const rendered = () => window.messages.filter((m) => typeof m === "string" && m.startsWith("rf ")).length;
    await waitFor(page, (n) => window.messages.filter((m) => typeof m === "string" && m.startsWith("rf ")).length >= n, report.sent, 60000);
    report.rendered = await page.evaluate(rendered);
    await new Promise((r) => setTimeout(r, 500));
    const c = await page.$("canvas.pexe2wasm-canvas");
    const { writeFileSync } = await import("node:fs");
    writeFileSync(env.SHOT1, await c.screenshot());
  },

  /** A harness page (files, GL, page services): waits for its result. */
  async harness(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    // The page harness waits for a click (a user gesture, which pointer lock needs).
    if (await page.evaluate(() => window.events.includes("ready-for-click"))) {
      await page.click("#c");
      await waitFor(page, () => window.events.includes("done"), null, 30000);
    }
    report.result = await page.evaluate(() => window.result ?? null);
  },

  /**
   * A real site as its author made it (no test page around it): STEPS, a JSON array, run
   * in order. `{"wait": EXPR, "ms": N}` waits until the expression is truthy (default 60 s),
   * `{"eval": EXPR}` reads it once, `{"click": SELECTOR}` clicks an element (by script, so
   * the same in every driver), `{"reload": true}` visits the page again, `{"goto": URL}` another
   * page (URL relative to the page's, so one browser visits several sites; `{ext}` in it: the
   * extension's base URL; `"nowait": true`: set as location.href), `{"sleep": MS}` waits. `"in": [SELECTOR…]` runs the step in the document of that
   * iframe (and so on down: a Chrome app's window inside its launcher). Each step's value
   * goes into report.steps (null: it never became true, or the element was not there).
   */
  async steps(page) {
    report.loaded = true;
    report.steps = [];
    const run = (a) => {
      let w = window;
      for (const sel of a.frames) {
        const f = w.document.querySelector(sel);
        if (!f?.contentWindow?.document) return null;
        w = f.contentWindow;
      }
      if (a.click) {
        const el = w.document.querySelector(a.click);
        if (!el) return null;
        el.click();
        return true;
      }
      // An expression may be a promise (an async check); its value is what counts.
      const plain = (v) => (v === undefined ? null : JSON.parse(JSON.stringify(v)));
      try {
        return Promise.resolve(new w.Function(`return (${a.expr});`).call(w)).then(plain, () => null);
      } catch {
        return null;
      }
    };
    for (const step of JSON.parse(env.STEPS ?? "[]")) {
      if (step.goto) {
        // Another page (`{ext}`: the extension's base URL); a navigation the browser turns
        // elsewhere (the extension's player) may end the goto with an error: the steps after
        // it say whether the right page came.
        const url = new URL(step.goto.replaceAll("{ext}", report.extensionBase ?? ""), env.URL).href;
        // `"nowait": true`: the page itself goes there (a navigation the extension redirects to
        // its player, which the drivers' goto waits on in vain).
        const go = step.nowait ? page.evaluate((u) => void (location.href = u), url) : page.goto(url);
        report.steps.push(await go.then(() => true, (e) => `goto ${url}: ${e.message}`));
        continue;
      }
      if (step.sleep) {
        await new Promise((r) => setTimeout(r, step.sleep));
        report.steps.push(true);
        continue;
      }
      if (step.reload) {
        // A second visit of the page on the same profile (its caches kept).
        await page.goto(env.URL);
        report.steps.push(true);
        continue;
      }
      const arg = { expr: step.wait ?? step.eval ?? "", click: step.click ?? null, frames: step.in ?? [] };
      const value = step.wait ? await waitFor(page, run, arg, step.ms ?? 60000) : await page.evaluate(run, arg).catch((e) => `driver: ${e}`);
      report.steps.push(value ?? null);
    }
  },

  /** Only starts the app: DidCreate ran (load, or an error or crash after it). */
  async starts(page) {
    report.loaded = !!(await waitFor(page, () => window.events.length > 0, null, 120000));
    await new Promise((r) => setTimeout(r, Number(env.SETTLE_MS ?? 1000)));
  },

  /**
   * A Chrome app's launcher (URL: DIR/pexe2wasm-launch.html): waits until a window of the
   * app says its chrome.* checks are over (window.appStatus.chromeDone, as the apps of
   * fixtures/apps write it) and, unless WAIT_NACL=0, until a window with an embed has its
   * module's answer (appStatus.naclDone). report.chrome: the launcher's state, status line
   * and failure panel, __pexe2wasmChrome.missing, and each window's id, rectangle and status.
   */
  async "chrome-app"(page) {
    // WAIT_EMBEDS=1: a window without appStatus (a document opened with the app's
    // nacl_modules handler) is waited for until each of its embeds loaded or failed.
    if (env.WAIT_EMBEDS === "1") {
      const settled = (w) => w.embeds.length > 0 && w.embeds.every((e) => e.readyState === 4 || e.lastError);
      await pollChrome(page, (r) => r.state === "failed" || r.windows.some(settled), 120000);
      report.chrome = await page.evaluate(chromeReport);
      report.loaded = report.chrome.state === "running";
      return;
    }
    let r = await pollChrome(page, (r) => r.state === "failed" || r.windows.some((w) => w.status?.chromeDone), 60000);
    if (env.WAIT_NACL !== "0" && r?.windows.some((w) => w.status?.naclEvents)) {
      r = await pollChrome(page, (r) => r.windows.some((w) => w.status?.naclDone), 120000);
    }
    report.chrome = await page.evaluate(chromeReport);
    report.loaded = report.chrome.state === "running";
  },

  /** A Chrome app launched twice (a reload): report.chrome.runs holds each launch's report. */
  async "chrome-storage-reload"(page) {
    const runs = [];
    for (let i = 0; i < 2; i++) {
      if (i) await page.goto(env.URL);
      await pollChrome(page, (r) => r.state === "failed" || r.windows.some((w) => w.status?.chromeDone), 60000);
      runs.push(await page.evaluate(chromeReport));
    }
    report.loaded = runs.every((r) => r.state === "running");
    report.chrome = { runs, missing: runs[1].missing };
  },

  /** A Chrome extension's launcher: waits for its popup's appStatus.chromeDone; report.chrome as for chrome-app. */
  async "chrome-extension"(page) {
    await pollChrome(page, (r) => r.state === "failed" || r.popup?.chromeDone, 60000);
    report.chrome = await page.evaluate(chromeReport);
    report.loaded = report.chrome.state === "running";
  },
};

/**
 * Polls chromeReport in the launcher until `pred` holds (or the deadline): the last report.
 *
 * @param {ScenarioPage} page
 * @param {(r: ReturnType<typeof chromeReport>) => unknown} pred
 * @param {number} ms
 */
async function pollChrome(page, pred, ms) {
  const end = Date.now() + ms;
  let r = null;
  for (;;) {
    r = await page.evaluate(chromeReport).catch(() => null);
    if ((r && pred(r)) || Date.now() > end) return r;
    await new Promise((res) => setTimeout(res, 100));
  }
}

/** What a chrome-* scenario reports, read in the launcher's page (self-contained: it is sent as source). */
function chromeReport() {
  const copy = (v) => {
    try {
      return JSON.parse(JSON.stringify(v ?? null));
    } catch {
      return null;
    }
  };
  const frame = (sel) => {
    try {
      return document.querySelector(sel)?.contentWindow ?? null;
    } catch {
      return null;
    }
  };
  const host = window.__pexe2wasmChrome;
  let tabText = null;
  try {
    tabText = frame("iframe.pexe2wasm-tab-frame")?.document?.body?.textContent ?? null;
  } catch {
    /* not loaded */
  }
  return {
    state: document.documentElement.dataset.pexe2wasmState ?? null,
    name: host?.manifest?.name ?? null,
    id: host?.id ?? null,
    missing: copy(host?.missing),
    statusLine: document.getElementById("pexe2wasm-status")?.textContent ?? null,
    failure: document.getElementById("pexe2wasm-failure")?.textContent ?? null,
    windows: (host?.windows?.windows ?? []).map((w) => {
      let status = null;
      try {
        status = copy(w.iframe.contentWindow.appStatus);
      } catch {
        /* gone */
      }
      let embeds = [];
      try {
        embeds = [...w.iframe.contentDocument.querySelectorAll("embed")].map((e) => ({ type: e.type, readyState: e.readyState ?? null, lastError: e.lastError ?? null }));
      } catch {
        /* gone */
      }
      return { id: w.id, filled: w.filled, state: w.state, rect: copy(w.rect), status, embeds };
    }),
    popup: copy(frame("iframe.pexe2wasm-popup")?.appStatus),
    tabText,
  };
}

const { page, close } = await launch();
page.on("console", (m) => {
  const line = `${m.type()}: ${m.text()}`;
  if (report.console.length < 200) report.console.push(line);
  // A favicon the test server does not have is not the app's error.
  if (m.type() === "error" && !/favicon|Failed to load resource/.test(m.text())) report.consoleErrors.push(m.text());
});
page.on("pageerror", (e) => report.pageErrors.push(String(e?.message ?? e)));
const t0 = Date.now();
try {
  await page.goto(env.URL);
  await scenarios[env.SCENARIO](page);
  // The test pages keep these; a real site (the steps scenario) has none of them.
  const testPage = await page.evaluate(() => Array.isArray(window.events) && Array.isArray(window.messages));
  report.events = testPage ? await page.evaluate(() => window.events) : null;
  report.messages = testPage ? await page.evaluate(pageMessages) : [];
  report.firstMessageMs = await page.evaluate(() => window.firstMessageAt);
  report.pexe2wasm = await page.evaluate(() => window.naclModule?.pexe2wasm ?? null);
  // What a blocking message (Chrome's postMessageAndAwaitResponse) does here.
  report.blockingMessage = await page.evaluate(() => {
    if (!window.naclModule?.postMessageAndAwaitResponse) return null;
    try {
      window.naclModule.postMessageAndAwaitResponse("ping");
      return "returned";
    } catch (e) {
      return String(e.message);
    }
  });
  report.status = await page.evaluate(() => document.getElementById("status")?.textContent ?? null);
  report.crossOriginIsolated = await page.evaluate(() => globalThis.crossOriginIsolated);
  if (env.SCREENSHOT) await page.screenshot({ path: env.SCREENSHOT });
} catch (e) {
  report.driverError = String(e?.stack ?? e);
} finally {
  report.totalMs = Date.now() - t0;
  await close();
}
console.log(JSON.stringify(report));
