import assert from "node:assert/strict";
import { test } from "node:test";

import { createHost } from "../../src/chrome/host.js";
import { deliverMessage, messageArgs } from "../../src/chrome/runtime.js";
import { memoryBackend } from "../../src/chrome/storage.js";
import { matchesPattern } from "../../src/chrome/tabs.js";

const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));
const log = () => {
  const lines = [];
  return { lines, error: (s) => lines.push(s), warn: (s) => lines.push(s), info: (s) => lines.push(s) };
};
/** A page's window as the runtime uses it. */
const fakeWindow = (kind, url = "http://127.0.0.1:1/app/page.html") => ({
  JSON,
  Array,
  document: {},
  location: { href: url },
  addEventListener() {},
  frameElement: { dataset: { pexe2wasmKind: kind } },
  navigator: {},
});
const makeHost = (manifest = { name: "t", version: "1", manifest_version: 2, permissions: ["storage"] }) => {
  const l = log();
  const host = createHost({ manifest, id: "abcdefghijklmnopabcdefghijklmnop", baseURL: "http://127.0.0.1:1/app/", makeBackend: () => memoryBackend(), log: /** @type {any} */ (l), nav: /** @type {any} */ ({ language: "en-US", languages: ["en-US", "de"], hardwareConcurrency: 4 }) });
  return { host, l };
};

test("sendMessage's arguments as Chrome read them", () => {
  assert.deepEqual(messageArgs(["hi"]), { message: "hi" });
  assert.deepEqual(messageArgs(["id", { a: 1 }]), { extensionId: "id", message: { a: 1 } });
  assert.deepEqual(messageArgs([{ a: 1 }, { includeTlsChannelId: true }]), { message: { a: 1 }, options: { includeTlsChannelId: true } });
  assert.deepEqual(messageArgs([null, "m", {}]), { extensionId: null, message: "m", options: {} });
});

test("a message reaches the other pages; the first sendResponse answers", async () => {
  const { host } = makeHost();
  const bg = host.apisFor(fakeWindow("background"), "background");
  const w = host.apisFor(fakeWindow("window"), "window");
  const seen = [];
  bg.runtime.onMessage.addListener((m, sender, respond) => {
    seen.push(["bg", m, sender.id]);
    respond({ echo: m });
    respond("second answer is ignored");
  });
  w.runtime.onMessage.addListener((m) => seen.push(["w", m]));
  const answer = await new Promise((r) => w.runtime.sendMessage({ q: 1 }, r));
  assert.deepEqual(answer, { echo: { q: 1 } });
  assert.deepEqual(seen, [["bg", { q: 1 }, host.id]], "not to the sender itself");
});

test("return true keeps the channel open for a later answer", async () => {
  const { host } = makeHost();
  const bg = host.apisFor(fakeWindow("background"), "background");
  const w = host.apisFor(fakeWindow("window"), "window");
  bg.runtime.onMessage.addListener((m, _s, respond) => {
    setTimeout(() => respond(m * 2), 5);
    return true;
  });
  assert.equal(await w.runtime.sendMessage(21), 42);
});

test("no listener, or no answer: the callback gets lastError as in Chrome", async () => {
  const { host, l } = makeHost();
  const w = host.apisFor(fakeWindow("window"), "window");
  let err;
  w.runtime.sendMessage("x", () => (err = w.runtime.lastError?.message));
  await tick(5);
  assert.equal(err, "Could not establish connection. Receiving end does not exist.");
  const bg = host.apisFor(fakeWindow("background"), "background");
  bg.runtime.onMessage.addListener(() => {});
  w.runtime.sendMessage("x", () => (err = w.runtime.lastError?.message));
  await tick(5);
  assert.equal(err, "The message port closed before a response was received.");
  assert.equal(w.runtime.lastError, undefined);
  assert.equal(l.lines.length, 0);
});

test("tabs.sendMessage reaches content scripts only; their runtime.sendMessage reaches the extension's pages", async () => {
  const { host } = makeHost();
  host.tab = { frame: { clientWidth: 1, clientHeight: 1, contentWindow: { location: { href: "about:srcdoc" }, document: { title: "" } } }, url: "http://127.0.0.1:1/app/pexe2wasm-tab.html" };
  const popup = host.apisFor(fakeWindow("popup"), "popup");
  const content = host.apisFor(fakeWindow("content"), "content");
  content.runtime.onMessage.addListener((m, sender, respond) => respond({ got: m.data, fromTab: sender.tab === undefined }));
  popup.runtime.onMessage.addListener((m, sender, respond) => respond({ tab: sender.tab.id }));
  const tabs = await popup.tabs.query({ active: true, currentWindow: true });
  assert.equal(tabs.length, 1);
  assert.deepEqual(await popup.tabs.sendMessage(tabs[0].id, { data: "hi" }), { got: "hi", fromTab: true });
  assert.deepEqual(await content.runtime.sendMessage("up"), { tab: 1 });
  await assert.rejects(popup.tabs.sendMessage(99, {}), /No tab with id: 99/);
  assert.equal(content.tabs, content.tabs, "a content script has no chrome.tabs of its own, only a stand-in");
});

test("deliverMessage skips dead pages and the sender", async () => {
  const { host } = makeHost();
  const a = { kind: "window" };
  const b = { kind: "window", dead: true };
  host.hub.view("runtime.onMessage", a).addListener(() => true);
  host.hub.view("runtime.onMessage", b).addListener(() => true);
  const got = await new Promise((r) => deliverMessage({ hub: host.hub, from: a, message: 1, sender: {}, to: () => true, clone: (_o, v) => v, respond: (v, e) => r(e) }));
  assert.match(got, /Receiving end does not exist/);
});

test("the manifest, URLs, the id, platform info", async () => {
  const { host } = makeHost();
  const c = host.apisFor(fakeWindow("window"), "window");
  assert.equal(c.runtime.id, "abcdefghijklmnopabcdefghijklmnop");
  assert.equal(c.runtime.getManifest().name, "t");
  assert.equal(c.runtime.getURL("/a/b.html"), "http://127.0.0.1:1/app/a/b.html");
  assert.equal(c.runtime.getURL("x"), "http://127.0.0.1:1/app/x");
  const info = await c.runtime.getPlatformInfo();
  assert.equal(info.nacl_arch, "x86-64");
  assert.equal(info.arch, "x86-64");
  assert.equal(c.i18n.getUILanguage(), "en-US");
  assert.deepEqual(await c.i18n.getAcceptLanguages(), ["en-US", "de"]);
  assert.equal((await c.system.cpu.getInfo()).numOfProcessors, 4);
});

test("getBackgroundPage gives the background's window, or lastError without one", async () => {
  const { host } = makeHost();
  const w = host.apisFor(fakeWindow("window"), "window");
  let err;
  w.runtime.getBackgroundPage(() => (err = w.runtime.lastError?.message));
  await tick();
  assert.equal(err, "You do not have a background page.");
  const bgWin = fakeWindow("background");
  host.apisFor(bgWin, "background");
  assert.equal(await w.runtime.getBackgroundPage(), bgWin);
  assert.equal(w.extension.getBackgroundPage(), bgWin);
});

test("storage.onChanged reaches every page with (changes, areaName)", async () => {
  const { host } = makeHost();
  const a = host.apisFor(fakeWindow("background"), "background");
  const b = host.apisFor(fakeWindow("window"), "window");
  const got = [];
  a.storage.onChanged.addListener((c, n) => got.push(["a", c, n]));
  b.storage.local.onChanged.addListener((c) => got.push(["b", c]));
  await new Promise((r) => b.storage.local.set({ k: 1 }, r));
  assert.deepEqual(await a.storage.local.get("k"), { k: 1 });
  assert.deepEqual(got, [["a", { k: { newValue: 1 } }, "local"], ["b", { k: { newValue: 1 } }]]);
  assert.equal(b.storage.sync.QUOTA_BYTES_PER_ITEM, 8192);
});

test("APIs a tab cannot give fail through lastError, one console line each; unknown ones are stand-ins", async () => {
  const { host, l } = makeHost();
  const c = host.apisFor(fakeWindow("window"), "window");
  let err;
  c.socket.create("tcp", {}, () => (err = c.runtime.lastError?.message));
  c.socket.connect(1, "h", 1, () => {});
  c.sockets.tcp.create({}, () => {});
  c.sockets.tcp.onReceive.addListener(() => {});
  await tick(5);
  assert.match(err, /chrome\.socket\.create is not available in a browser tab \(raw TCP\/UDP sockets\)/);
  assert.equal(l.lines.filter((s) => s.includes("chrome.socket,") || s.includes("chrome.socket ")).length, 1, l.lines.join("\n"));
  assert.equal(typeof c.fooBar.baz.qux, "function");
  assert.doesNotThrow(() => c.fooBar.baz());
  assert.equal(c.fooBar.then, undefined, "not a thenable");
  assert.deepEqual(host.missing, ["socket", "sockets", "fooBar"]);
  assert.equal(c.runtime.error, undefined, "a member Chrome never had stays undefined");
  c.tabs.captureVisibleTab(() => {});
  assert.ok(host.missing.includes("tabs.captureVisibleTab"));
  assert.equal(l.lines.filter((s) => s.startsWith("pexe2wasm: this app uses")).length, 4);
});

test("match patterns", () => {
  assert.ok(matchesPattern("<all_urls>", "http://a/"));
  assert.ok(matchesPattern("*://*/*", "https://x.y/z?q"));
  assert.ok(matchesPattern("https://*.example.com/*", "https://a.example.com/p"));
  assert.ok(!matchesPattern("https://*.example.com/*", "https://example.org/p"));
  assert.ok(matchesPattern("http://127.0.0.1/app/*", "http://127.0.0.1:8000/app/x.html"));
  assert.ok(!matchesPattern("file:///*", "http://a/"));
});
