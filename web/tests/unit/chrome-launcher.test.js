import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { iconURL, LaunchFailure, loadPackage, packageKind } from "../../src/chrome/launcher.js";
import { pickerTypes, inputAccept, packageEntry, treeFromPaths, makeEntry } from "../../src/chrome/filesystem.js";
import { shortcutMatcher } from "../../src/chrome/misc.js";
import { Notifications } from "../../src/chrome/notifications.js";
import { memoryInfo, displayInfo, cpuInfo } from "../../src/chrome/system.js";

const BASE = "http://127.0.0.1:1/app/";
/** fetch over a map of package paths to texts (404 for the rest). */
const fakeFetch = (files) => async (url, init) => {
  const p = new URL(url).pathname.replace(/^\/app\//, "");
  const hit = Object.hasOwn(files, p);
  return { ok: hit, status: hit ? 200 : 404, text: async () => files[p], blob: async () => new Blob([files[p] ?? ""]), method: init?.method };
};
const digest = async (b) => createHash("sha256").update(b).digest();
const load = (files, lang = "en-US") => loadPackage(BASE, { fetchImpl: /** @type {any} */ (fakeFetch(files)), nav: /** @type {any} */ ({ language: lang }), digest });

test("a package's manifest, localized, with its kind and id", async () => {
  const pkg = await load(
    {
      "manifest.json": '{"name": "__MSG_n__", "default_locale": "en", "app": {"background": {"scripts": ["b.js"]}}, // comment\n}',
      "_locales/en/messages.json": '{"n": {"message": "English"}}',
      "_locales/fr/messages.json": '{"n": {"message": "Français"}}',
    },
    "fr-CA",
  );
  assert.equal(pkg.manifest.name, "Français");
  assert.equal(pkg.raw.name, "__MSG_n__");
  assert.equal(pkg.kind, "app");
  assert.match(pkg.id, /^[a-p]{32}$/);
  assert.equal(pkg.files, null);
});

test("the failure names the cause: no manifest, bad JSON, a theme, a hosted app, native modules only", async () => {
  const fails = async (files, re) => {
    const e = await load(files).then(() => null, (e) => e);
    assert.ok(e instanceof LaunchFailure, `expected a failure for ${JSON.stringify(files)}`);
    assert.match(`${e.title}: ${e.detail}`, re);
  };
  await fails({}, /No manifest\.json.*HTTP 404/);
  await fails({ "manifest.json": "{ not json" }, /not valid JSON/);
  await fails({ "manifest.json": "[1]" }, /not an object/);
  await fails({ "manifest.json": '{"name": "t", "theme": {}}' }, /A theme/);
  await fails({ "manifest.json": '{"name": "h", "app": {"launch": {"web_url": "https://example.com/"}}}' }, /hosted app.*example\.com/);
  await fails(
    { "manifest.json": '{"name": "n", "app": {"background": {"scripts": ["b.js"]}}}', "pexe2wasm-files.json": '["manifest.json", "x86-64/app.nexe", "x86-32/app.nexe", "app.nmf"]' },
    /Only native NaCl modules for other processors.*2 \.nexe file\(s\).*x86-64\/app\.nexe.*none for x86-64/,
  );
  const ok = await load({ "manifest.json": '{"name": "n", "app": {"background": {"scripts": ["b.js"]}}}', "pexe2wasm-files.json": '["a.nexe", "a.pexe"]' });
  assert.deepEqual(ok.files, ["a.nexe", "a.pexe"]);
  // An x86-64 nexe whose module `pexe2wasm web` wrote beside it runs.
  const nexe = await load({
    "manifest.json": '{"name": "n", "app": {"background": {"scripts": ["b.js"]}}}',
    "pexe2wasm-files.json": '["manifest.json", "x86-64/app.nexe", "x86-32/app.nexe", "app.nmf"]',
    "x86-64/app.wasm": "\0asm",
  });
  assert.deepEqual(nexe.files, ["manifest.json", "x86-64/app.nexe", "x86-32/app.nexe", "app.nmf"]);
  // An x86-64 nexe (ELF, e_machine 62) runs without one: it is translated in the browser;
  // an x86-32 one (3) alone does not.
  const elf = (machine) => "\x7fELF" + "\x02\x01\x01" + "\0".repeat(9) + "\x02\0" + String.fromCharCode(machine) + "\0" + "\0".repeat(44);
  const files = '["manifest.json", "bin/app.nexe", "app.nmf"]';
  const x64 = await load({ "manifest.json": '{"name": "n", "app": {"background": {"scripts": ["b.js"]}}}', "pexe2wasm-files.json": files, "bin/app.nexe": elf(62) });
  assert.deepEqual(x64.files, ["manifest.json", "bin/app.nexe", "app.nmf"]);
  await fails(
    { "manifest.json": '{"name": "n", "app": {"background": {"scripts": ["b.js"]}}}', "pexe2wasm-files.json": files, "bin/app.nexe": elf(3) },
    /Only native NaCl modules for other processors.*none for x86-64/,
  );
});

test("package kinds and icons", () => {
  assert.equal(packageKind({ app: { launch: { local_path: "main.html" } } }), "legacy-app");
  assert.equal(packageKind({ browser_action: {} }), "extension");
  assert.equal(packageKind({ app: { background: { page: "bg.html" } } }), "app");
  assert.equal(iconURL({ icons: { 128: "i128.png", 16: "i16.png", 48: "i48.png" } }, BASE, 32), `${BASE}i48.png`);
  assert.equal(iconURL({ icons: { 128: "i128.png" } }, BASE, 16), `${BASE}i128.png`);
  assert.equal(iconURL({}, BASE), null);
});

test("the package's directory entry lists the file list and reads files by URL", async () => {
  const root = packageEntry(["manifest.json", "js/a.js", "js/sub/b.js"], BASE, /** @type {any} */ (fakeFetch)({ "manifest.json": "{}", "js/a.js": "A", "js/sub/b.js": "B", "unlisted.txt": "U" }));
  assert.equal(root.isDirectory, true);
  const names = await new Promise((r) => root.createReader().readEntries((es) => r(es.map((e) => `${e.name}${e.isDirectory ? "/" : ""}`))));
  assert.deepEqual(names.sort(), ["js/", "manifest.json"]);
  const text = await new Promise((r, j) => root.getFile("js/sub/b.js", {}, (e) => e.file((f) => f.text().then(r), j), j));
  assert.equal(text, "B");
  const full = await new Promise((r, j) => root.getFile("js/sub/b.js", {}, (e) => r(e.fullPath), j));
  assert.equal(full, "/js/sub/b.js");
  const unlisted = await new Promise((r, j) => root.getFile("unlisted.txt", {}, (e) => e.file((f) => f.text().then(r), j), j));
  assert.equal(unlisted, "U");
  const missing = await new Promise((r) => root.getFile("nope.txt", {}, () => r("found"), (e) => r(e.name)));
  assert.equal(missing, "NotFoundError");
  const readOnly = await new Promise((r) => root.getFile("new.txt", { create: true }, () => r("made"), (e) => r(e.name)));
  assert.equal(readOnly, "NoModificationAllowedError");
  const writer = await new Promise((r) => root.getFile("manifest.json", {}, (e) => e.createWriter(() => r("writer"), (err) => r(err.name))));
  assert.equal(writer, "NoModificationAllowedError");
});

test("a FileWriter without a handle keeps what is written and saves it", async () => {
  const saved = [];
  const entry = makeEntry({ kind: "file", name: "out.txt", getFile: async () => new File([], "out.txt") }, "/out.txt", { name: "t" }, null, { save: async (b) => saved.push(await b.text()) });
  const w = await new Promise((r) => entry.createWriter(r));
  await new Promise((r) => {
    w.onwriteend = r;
    w.write(new Blob(["hello world"]));
  });
  w.seek(6);
  await new Promise((r) => {
    w.onwriteend = r;
    w.write(new Blob(["WORLD"]));
  });
  await new Promise((r) => {
    w.onwriteend = r;
    w.truncate(5);
  });
  assert.deepEqual(saved, ["hello world", "hello WORLD", "hello"]);
  assert.equal(w.length, 5);
});

test("a tree ignores paths that climb out", () => {
  const t = treeFromPaths(["a/../../x", "/b", "./c"], async () => new Blob());
  assert.deepEqual([...t.children.keys()].sort(), ["b", "c"]);
});

test("chooseEntry's accepts as picker types and as an input's accept", () => {
  const accepts = [{ description: "Text", mimeTypes: ["text/plain"], extensions: ["txt", ".md"] }, { extensions: ["bin"] }];
  assert.deepEqual(pickerTypes(accepts), [
    { description: "Text", accept: { "text/plain": [".txt", ".md"] } },
    { description: "", accept: { "application/octet-stream": [".bin"] } },
  ]);
  assert.equal(inputAccept(accepts), "text/plain,.txt,.md,.bin");
});

test("command shortcuts as Chrome wrote them", () => {
  const f = shortcutMatcher("Ctrl+Shift+Y");
  assert.equal(f({ ctrlKey: true, shiftKey: true, altKey: false, key: "Y" }), true);
  assert.equal(f({ ctrlKey: true, shiftKey: false, altKey: false, key: "y" }), false);
  assert.equal(shortcutMatcher("Alt+Comma")({ ctrlKey: false, metaKey: false, shiftKey: false, altKey: true, key: "," }), true);
  assert.equal(shortcutMatcher(""), null);
});

test("notifications: ids, update, clear, getAll", () => {
  const shown = [];
  const n = new Notifications({ show: (id, o) => shown.push([id, o.title]), hide: (id) => shown.push(["hide", id]) });
  const id = n.create({ type: "basic", title: "A", message: "m", iconUrl: "i.png" });
  assert.equal(n.create("mine", { title: "B" }), "mine");
  assert.equal(n.update("mine", { title: "C" }), true);
  assert.equal(n.update("nope", {}), false);
  assert.deepEqual(n.getAll(), { [id]: true, mine: true });
  assert.equal(n.clear(id), true);
  assert.deepEqual(shown, [[id, "A"], ["mine", "B"], ["mine", "C"], ["hide", id]]);
});

test("system figures from what the browser gives", () => {
  assert.equal(cpuInfo({ hardwareConcurrency: 6 }).processors.length, 6);
  assert.equal(memoryInfo({ deviceMemory: 8 }, null).capacity, 8 * 2 ** 30);
  assert.deepEqual(memoryInfo({}, { memory: { jsHeapSizeLimit: 1000, usedJSHeapSize: 300 } }), { capacity: 1000, availableCapacity: 700 });
  const d = displayInfo({ width: 1920, height: 1080, availWidth: 1920, availHeight: 1040 }, 2)[0];
  assert.deepEqual([d.bounds.width, d.workArea.height, d.dpiX, d.isPrimary], [1920, 1040, 192, true]);
});
