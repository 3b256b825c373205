// Chrome's sandboxed File System API over a directory handle (compat/filesystem.js with
// chrome/filesystem.js's entries), with a Map-backed store standing in for the Origin
// Private File System.

import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import vm from "node:vm";
import { FILE_ERROR_CODES, resolvePath } from "../../src/chrome/filesystem.js";
import { DEFAULT_QUOTA, PERSISTENT, Sandbox, TEMPORARY, fileSystemName, grantQuota, parseFileSystemURL, usageAndQuota } from "../../src/compat/filesystem.js";
import { MemoryStore, StoreDirectoryHandle } from "../../src/compat/kv-directory.js";

const location = { protocol: "http:", hostname: "127.0.0.1", port: "8000", origin: "http://127.0.0.1:8000" };
const P = (f) => new Promise((ok, err) => f(ok, err));
let loads = 0;
// Each sandbox is a page load of its own (TEMPORARY is emptied once per load).
const sandbox = (store = new MemoryStore(), more = {}) => new Sandbox({ root: async () => new StoreDirectoryHandle(store), location, loadId: `load-${++loads}`, ...more });
const fsOf = (s, type = PERSISTENT) => P((ok, err) => s.requestFileSystem(type, 1024, ok, err));
const get = (dir, method, path, options = {}) => P((ok, err) => dir[method](path, options, ok, err));
const failure = (p) => p.then((v) => assert.fail(`expected an error, got ${v?.fullPath ?? v}`), (e) => ({ name: e.name, code: e.code }));
const text = (entry) => P((ok, err) => entry.file(ok, err)).then((f) => f.text());
const writer = (entry) => P((ok, err) => entry.createWriter(ok, err));
const op = (w, f) =>
  new Promise((ok, err) => {
    w.onwriteend = () => (w.error ? err(w.error) : ok());
    f(w);
  });
const names = (dir) => P((ok, err) => dir.createReader().readEntries(ok, err)).then((l) => l.map((e) => e.name).sort());

test("paths resolve lexically, as Chrome's did", () => {
  assert.deepEqual(resolvePath("a/b", 2), { up: 0, names: ["a", "b"] });
  assert.deepEqual(resolvePath("/a", 2), { up: 2, names: ["a"] });
  assert.deepEqual(resolvePath("../d/./f.txt", 1), { up: 1, names: ["d", "f.txt"] });
  assert.deepEqual(resolvePath("../../d/f.txt", 0), { up: 0, names: ["d", "f.txt"] });
  assert.deepEqual(resolvePath("a/../b//c/..", 0), { up: 0, names: ["b"] });
  assert.deepEqual(resolvePath("", 3), { up: 0, names: [] });
});

test("quota answers: what is asked, capped by the browser's estimate", () => {
  assert.equal(grantQuota(10_000_000_000, null), 10_000_000_000);
  assert.equal(grantQuota(10_000_000_000, { quota: 5e9, usage: 1 }), 5e9);
  assert.equal(grantQuota(1024, { quota: 5e9 }), 1024);
  assert.equal(grantQuota(-5, null), 0);
  assert.deepEqual(usageAndQuota({ usage: 12, quota: 99 }), [12, 99]);
  assert.deepEqual(usageAndQuota(null), [0, DEFAULT_QUOTA]);
});

test("requestQuota and queryUsageAndQuota go through the estimate", async () => {
  const s = sandbox(undefined, { estimate: async () => ({ usage: 7, quota: 3000 }) });
  assert.equal(await new Promise((ok) => s.requestQuota(PERSISTENT, 1e10, ok)), 3000);
  assert.deepEqual(await new Promise((ok) => s.queryUsageAndQuota(TEMPORARY, (u, q) => ok([u, q]))), [7, 3000]);
});

test("names and filesystem: URLs as Chrome made them", () => {
  assert.equal(fileSystemName(location, PERSISTENT), "http_127.0.0.1_8000:Persistent");
  assert.equal(fileSystemName({ protocol: "https:", hostname: "x.org", port: "" }, TEMPORARY), "https_x.org_0:Temporary");
  assert.deepEqual(parseFileSystemURL("filesystem:http://127.0.0.1:8000/persistent/d/a%20b.txt", location.origin), { type: PERSISTENT, path: "/d/a b.txt" });
  assert.deepEqual(parseFileSystemURL("filesystem:http://127.0.0.1:8000/temporary/", location.origin), { type: TEMPORARY, path: "/" });
  assert.throws(() => parseFileSystemURL("http://127.0.0.1:8000/x", location.origin), { name: "EncodingError" });
  assert.throws(() => parseFileSystemURL("filesystem:http://127.0.0.1:8000/other/x", location.origin), { name: "EncodingError" });
  assert.throws(() => parseFileSystemURL("filesystem:http://evil.test/persistent/x", location.origin), { name: "SecurityError" });
});

test("entries: create, exclusive, types, paths and Chrome's errors", async () => {
  const fs = await fsOf(sandbox());
  assert.equal(fs.name, "http_127.0.0.1_8000:Persistent");
  assert.equal(fs.root.fullPath, "/");
  assert.equal(fs.root.name, "");
  assert.equal(fs.root.toURL(), "filesystem:http://127.0.0.1:8000/persistent/");
  const nf = FILE_ERROR_CODES.NotFoundError;
  assert.deepEqual(await failure(get(fs.root, "getFile", "nope.txt")), { name: "NotFoundError", code: nf });
  const d = await get(fs.root, "getDirectory", "d", { create: true });
  const f = await get(d, "getFile", "f.txt", { create: true });
  assert.equal(f.fullPath, "/d/f.txt");
  assert.equal(f.toURL(), "filesystem:http://127.0.0.1:8000/persistent/d/f.txt");
  assert.equal(f.isFile, true);
  assert.equal((await get(d, "getFile", "f.txt", { create: true })).fullPath, "/d/f.txt");
  const exists = { name: "InvalidModificationError", code: FILE_ERROR_CODES.InvalidModificationError };
  assert.deepEqual(await failure(get(d, "getFile", "f.txt", { create: true, exclusive: true })), exists);
  assert.deepEqual(await failure(get(fs.root, "getDirectory", "d", { create: true, exclusive: true })), exists);
  const mismatch = { name: "TypeMismatchError", code: FILE_ERROR_CODES.TypeMismatchError };
  assert.deepEqual(await failure(get(d, "getDirectory", "f.txt")), mismatch);
  assert.deepEqual(await failure(get(d, "getDirectory", "f.txt", { create: true })), mismatch);
  assert.deepEqual(await failure(get(fs.root, "getFile", "d", { create: true })), mismatch);
  assert.deepEqual(await failure(get(fs.root, "getFile", "")), mismatch);
  assert.deepEqual(await failure(get(fs.root, "getFile", "x/y.txt", { create: true })), { name: "NotFoundError", code: nf });
  for (const p of ["../d/./f.txt", "/d/f.txt", "d//f.txt", "../../d/f.txt"]) assert.equal((await get(p.startsWith("d") ? fs.root : d, "getFile", p)).fullPath, "/d/f.txt", p);
  assert.equal((await get(d, "getDirectory", "..")).fullPath, "/");
  assert.equal((await get(fs.root, "getDirectory", "")).fullPath, "/");
  const parent = await P((ok) => f.getParent(ok));
  assert.equal(parent.fullPath, "/d");
  assert.equal((await P((ok) => fs.root.getParent(ok))).fullPath, "/");
});

test("FileWriter: write, seek, write, truncate; one operation at a time", async () => {
  const fs = await fsOf(sandbox());
  const f = await get(fs.root, "getFile", "w.txt", { create: true });
  const w = await writer(f);
  assert.deepEqual([w.length, w.position, w.readyState], [0, 0, 0]);
  const events = [];
  w.onwritestart = (ev) => events.push(ev.type);
  w.onwrite = (ev) => events.push(`${ev.type}:${ev.loaded}`);
  await op(w, (w) => w.write(new Blob(["hello world"])));
  assert.deepEqual(events, ["writestart", "write:11"]);
  assert.deepEqual([w.length, w.position], [11, 11]);
  assert.throws(() => {
    w.write(new Blob(["x"]));
    w.write(new Blob(["y"]));
  }, { name: "InvalidStateError" });
  await new Promise((r) => (w.onwriteend = r));
  w.seek(6);
  await op(w, (w) => w.write(new Blob(["there"])));
  assert.equal(await text(f), "hello therex");
  await op(w, (w) => w.truncate(5));
  assert.equal(await text(f), "hello");
  assert.deepEqual([w.length, w.position], [5, 5]);
  w.seek(100);
  assert.equal(w.position, 5);
  w.seek(-2);
  assert.equal(w.position, 3);
  const meta = await P((ok, err) => f.getMetadata(ok, err));
  assert.equal(meta.size, 5);
  assert.ok(meta.modificationTime instanceof Date);
});

test("FileWriter: the whole-file path (no createWritable) keeps the rest of the file", async () => {
  const rewrites = [];
  const rewrite = async (node, blob) => {
    rewrites.push(blob.size);
    const w = await node.handle.createWritable();
    await w.write(blob);
    await w.close();
  };
  const fs = await fsOf(sandbox(new MemoryStore(), { rewrite }));
  const f = await get(fs.root, "getFile", "w.txt", { create: true });
  const w = await writer(f);
  await op(w, (w) => w.write(new Blob(["0123456789"])));
  w.seek(2);
  await op(w, (w) => w.write(new Blob(["ab"])));
  await op(w, (w) => w.truncate(6));
  assert.equal(await text(f), "01ab45");
  assert.deepEqual(rewrites, [10, 10, 6]);
  const c = await P((ok, err) => f.copyTo(fs.root, "c.txt", ok, err));
  assert.equal(await text(c), "01ab45");
  assert.equal(rewrites.length, 4);
});

test("readEntries, remove, removeRecursively", async () => {
  const fs = await fsOf(sandbox());
  const d = await get(fs.root, "getDirectory", "d", { create: true });
  await get(d, "getFile", "a", { create: true });
  await get(fs.root, "getFile", "top", { create: true });
  assert.deepEqual(await names(fs.root), ["d", "top"]);
  const r = fs.root.createReader();
  assert.equal((await P((ok) => r.readEntries(ok))).length, 2);
  assert.deepEqual(await P((ok) => r.readEntries(ok)), []);
  const [de] = (await P((ok) => fs.root.createReader().readEntries(ok))).filter((e) => e.isDirectory);
  assert.equal(de.fullPath, "/d");
  assert.equal((await get(de, "getFile", "../top")).fullPath, "/top");
  const bad = { name: "InvalidModificationError", code: FILE_ERROR_CODES.InvalidModificationError };
  assert.deepEqual(await failure(P((ok, err) => d.remove(ok, err))), bad);
  assert.deepEqual(await failure(P((ok, err) => fs.root.remove(ok, err))), bad);
  assert.deepEqual(await failure(P((ok, err) => fs.root.removeRecursively(ok, err))), bad);
  await P((ok, err) => d.removeRecursively(ok, err));
  assert.deepEqual(await names(fs.root), ["top"]);
  const top = await get(fs.root, "getFile", "top");
  await P((ok, err) => top.remove(ok, err));
  assert.deepEqual(await names(fs.root), []);
  assert.equal((await failure(P((ok, err) => top.getMetadata(ok, err)))).name, "NotFoundError");
});

test("moveTo and copyTo, with Chrome's refusals", async () => {
  const fs = await fsOf(sandbox());
  const d = await get(fs.root, "getDirectory", "d", { create: true });
  const f = await get(d, "getFile", "f.txt", { create: true });
  await op(await writer(f), (w) => w.write(new Blob(["data"])));
  const d2 = await get(fs.root, "getDirectory", "d2", { create: true });
  await get(d2, "getFile", "k", { create: true });
  const refused = async (p) => assert.equal((await failure(p)).name, "InvalidModificationError");
  await refused(P((ok, err) => f.moveTo(d, null, ok, err)));
  await refused(P((ok, err) => d.moveTo(d, "z", ok, err)));
  await refused(P((ok, err) => fs.root.moveTo(d, "z", ok, err)));
  await refused(P((ok, err) => f.moveTo(fs.root, "d2", ok, err)));
  const d3 = await get(fs.root, "getDirectory", "d3", { create: true });
  await refused(P((ok, err) => d3.moveTo(fs.root, "d2", ok, err)));
  const c = await P((ok, err) => f.copyTo(fs.root, "c.txt", ok, err));
  assert.equal(c.fullPath, "/c.txt");
  assert.equal(await text(c), "data");
  assert.equal((await P((ok, err) => f.copyTo(fs.root, "c.txt", ok, err))).fullPath, "/c.txt");
  const m = await P((ok, err) => f.moveTo(fs.root, "m.txt", ok, err));
  assert.deepEqual([m.fullPath, m.name], ["/m.txt", "m.txt"]);
  assert.equal(await text(m), "data");
  assert.equal((await failure(P((ok, err) => f.getMetadata(ok, err)))).name, "NotFoundError");
  const moved = await P((ok, err) => d2.moveTo(d, null, ok, err));
  assert.equal(moved.fullPath, "/d/d2");
  assert.deepEqual(await names(moved), ["k"]);
  assert.deepEqual(await names(fs.root), ["c.txt", "d", "d3", "m.txt"]);
  // An empty directory is replaced; a file over a file too.
  await P((ok, err) => moved.moveTo(fs.root, "d3", ok, err));
  assert.deepEqual(await names(await get(fs.root, "getDirectory", "d3")), ["k"]);
  await P((ok, err) => c.moveTo(fs.root, "m.txt", ok, err));
  assert.deepEqual(await names(fs.root), ["d", "d3", "m.txt"]);
});

test("PERSISTENT stays, TEMPORARY is emptied at the next page load; URLs resolve back", async () => {
  const store = new MemoryStore();
  const first = sandbox(store);
  await get((await fsOf(first, PERSISTENT)).root, "getFile", "keep", { create: true });
  await get((await fsOf(first, TEMPORARY)).root, "getFile", "gone", { create: true });
  // Within the page load, the temporary file system is the same.
  assert.deepEqual(await names((await fsOf(first, TEMPORARY)).root), ["gone"]);
  const second = sandbox(store);
  assert.deepEqual(await names((await fsOf(second, PERSISTENT)).root), ["keep"]);
  assert.deepEqual(await names((await fsOf(second, TEMPORARY)).root), []);
  const url = (await get((await fsOf(second, PERSISTENT)).root, "getFile", "keep")).toURL();
  const back = await P((ok, err) => second.resolveLocalFileSystemURL(url, ok, err));
  assert.deepEqual([back.fullPath, back.isFile], ["/keep", true]);
  const root = await P((ok, err) => second.resolveLocalFileSystemURL("filesystem:http://127.0.0.1:8000/persistent/", ok, err));
  assert.equal(root.isDirectory, true);
  assert.equal((await failure(P((ok, err) => second.resolveLocalFileSystemURL(`${url}x`, ok, err)))).name, "NotFoundError");
  assert.equal((await failure(P((ok, err) => second.resolveLocalFileSystemURL("http://x/", ok, err)))).name, "EncodingError");
  assert.equal((await failure(P((ok, err) => second.requestFileSystem(7, 0, ok, err)))).name, "InvalidModificationError");
});

test("advertise.js defines the API's names at once, with FileError's codes as the errors carry them", () => {
  const src = readFileSync(new URL("../../src/advertise.js", import.meta.url), "utf8");
  const window = { navigator: {} };
  window.window = window;
  window.globalThis = window;
  window.document = { currentScript: { src: "http://127.0.0.1:8000/pexe2wasm/advertise.js" }, querySelector: () => null };
  window.console = { warn() {}, error() {} };
  vm.runInNewContext(src, window);
  for (const f of ["webkitRequestFileSystem", "webkitResolveLocalFileSystemURL"]) assert.equal(typeof window[f], "function", f);
  assert.equal(typeof window.navigator.webkitPersistentStorage.requestQuota, "function");
  assert.equal(typeof window.navigator.webkitTemporaryStorage.queryUsageAndQuota, "function");
  assert.deepEqual([window.TEMPORARY, window.PERSISTENT], [0, 1]);
  assert.equal(window.FileError.NOT_FOUND_ERR, FILE_ERROR_CODES.NotFoundError);
  assert.equal(window.FileError.INVALID_MODIFICATION_ERR, FILE_ERROR_CODES.InvalidModificationError);
  assert.equal(window.FileError.QUOTA_EXCEEDED_ERR, FILE_ERROR_CODES.QuotaExceededError);
  assert.equal(window.FileError.PATH_EXISTS_ERR, FILE_ERROR_CODES.PathExistsError);
  // Chromium keeps its own only where there is no OPFS (an insecure context)...
  const own = () => {};
  const chromium = (secure) => {
    /** @type {any} */
    const w = { navigator: { webkitPersistentStorage: "native", storage: { getDirectory() {} } }, isSecureContext: secure, webkitRequestFileSystem: own, console: window.console, document: window.document };
    w.window = w;
    w.globalThis = w;
    vm.runInNewContext(src, w);
    return w;
  };
  const insecure = chromium(false);
  assert.equal(insecure.webkitRequestFileSystem, own);
  assert.equal(insecure.navigator.webkitPersistentStorage, "native");
  assert.equal(insecure.FileError, undefined);
  // ...and elsewhere gets ours, over the folders the module's files are in.
  const secure = chromium(true);
  assert.notEqual(secure.webkitRequestFileSystem, own);
  assert.equal(typeof secure.webkitRequestFileSystem, "function");
  assert.equal(typeof secure.navigator.webkitPersistentStorage.requestQuota, "function");
  assert.equal(secure.FileError.NOT_FOUND_ERR, FILE_ERROR_CODES.NotFoundError);
});
