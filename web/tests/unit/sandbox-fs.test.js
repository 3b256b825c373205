// The module's sandboxed file systems (host/io/sandbox-fs.js) over kv-directory.js's
// handles in memory (the IndexedDB store's stand-in; OPFS's handles behave the same), and
// with the page's webkitRequestFileSystem (compat/filesystem.js) over the same store.

import assert from "node:assert/strict";
import { test } from "node:test";

import { ERR, MKDIR, OPEN, SandboxFs, errorCode, parts } from "../../src/host/io/sandbox-fs.js";
import { MAX_STORED_FILE, MemoryStore, StoreDirectoryHandle } from "../../src/compat/kv-directory.js";
import { PERSISTENT_DIR, TEMPORARY_DIR, grantedQuota, sandboxFolder } from "../../src/compat/sandbox-layout.js";
import { PERSISTENT, Sandbox } from "../../src/compat/filesystem.js";

const bytes = (...b) => new Uint8Array(b);
const fresh = async (store = new MemoryStore(), kind = PERSISTENT_DIR, load = "load-1") =>
  new SandboxFs(await sandboxFolder(new StoreDirectoryHandle(store), kind, load));

test("paths are absolute and plain", () => {
  assert.deepEqual(parts("/a/b"), ["a", "b"]);
  assert.deepEqual(parts("/"), []);
  assert.equal(parts("a/b"), null);
  assert.equal(parts("/a/../b"), null);
});

test("directories, files and their errors as Chrome gave them", async () => {
  const fs = await fresh();
  assert.equal(await fs.mkdir("/a/b", 0), ERR.FILENOTFOUND, "no ancestors without the flag");
  assert.equal(await fs.mkdir("/a/b", MKDIR.WITH_ANCESTORS), ERR.OK);
  assert.equal(await fs.mkdir("/a", 0), ERR.OK, "an existing directory is fine");
  assert.equal(await fs.mkdir("/a", MKDIR.EXCLUSIVE), ERR.FILEEXISTS);
  assert.equal(await fs.open("/a/f", OPEN.READ), ERR.FILENOTFOUND);
  const f = await fs.open("/a/f", OPEN.WRITE | OPEN.CREATE);
  assert.equal(typeof f, "object");
  assert.equal(await fs.open("/a/f", OPEN.WRITE | OPEN.CREATE | OPEN.EXCLUSIVE), ERR.FILEEXISTS);
  assert.equal(await fs.open("/a", OPEN.READ), ERR.NOTAFILE);
  assert.equal(await fs.open("/a/f", OPEN.WRITE | OPEN.APPEND), ERR.BADARGUMENT);
  assert.equal(await fs.open("/a/f", OPEN.READ | OPEN.TRUNCATE), ERR.BADARGUMENT);
  assert.equal(await fs.mkdir("/a/f", 0), ERR.FILEEXISTS, "a file is there");
  assert.equal(await fs.write(f, 3, bytes(7, 8)), 2);
  assert.deepEqual([...(await fs.read(f, 0, 10))], [0, 0, 0, 7, 8], "a hole reads as zeros");
  assert.equal((await fs.query("/a/f")).size, 5);
  assert.equal((await fs.info(f)).size, 5);
  assert.equal(await fs.setLength(f, 4), ERR.OK);
  assert.equal(await fs.setLength(f, 6), ERR.OK);
  assert.deepEqual([...(await fs.read(f, 0, 10))], [0, 0, 0, 7, 0, 0], "shrunk bytes do not come back");
  assert.deepEqual(await fs.list("/a"), [
    { name: "b", dir: true },
    { name: "f", dir: false },
  ]);
  assert.equal(await fs.list("/a/f"), ERR.NOTAFILE);
  assert.equal(await fs.remove("/a"), ERR.FAILED, "not empty");
  // A rename of an open file: the FileIO goes on working under the new name.
  assert.equal(await fs.rename("/a/f", "/a/b/g"), ERR.OK);
  assert.equal(await fs.query("/a/f"), ERR.FILENOTFOUND);
  assert.equal((await fs.query("/a/b/g")).size, 6);
  assert.equal(await fs.write(f, 6, bytes(9)), 1);
  assert.equal(await fs.close(f), ERR.OK);
  assert.equal((await fs.query("/a/b/g")).size, 7);
  assert.equal(await fs.rename("/a", "/a/b/c"), ERR.FAILED, "into itself");
  assert.equal(await fs.rename("/a/b", "/z"), ERR.OK, "a directory moves with its files");
  assert.equal((await fs.query("/z/g")).size, 7);
  assert.equal(await fs.remove("/z/g"), ERR.OK);
  assert.equal(await fs.remove("/"), ERR.NOACCESS);
  const t = await fs.open("/a/t", OPEN.WRITE | OPEN.CREATE);
  await fs.write(t, 0, new Uint8Array(10000).fill(1));
  const again = await fs.open("/a/t", OPEN.WRITE | OPEN.TRUNCATE);
  assert.equal((await fs.info(again)).size, 0, "one file, two FileIOs: TRUNCATE empties it for both");
  assert.equal((await fs.info(t)).size, 0);
  assert.equal(await fs.touch("/a/t", 5, 6), ERR.OK);
  assert.equal((await fs.query("/a/t")).mtime, 6);
  assert.equal(await fs.remove("/a/t"), ERR.OK, "an open file can be removed");
  assert.equal(await fs.read(t, 0, 1), ERR.FAILED, "and its FileIO fails from then on");
});

test("appends, and reads past the end", async () => {
  const fs = await fresh();
  const w = await fs.open("/log", OPEN.WRITE | OPEN.CREATE);
  await fs.write(w, 0, bytes(1, 2));
  const a = await fs.open("/log", OPEN.APPEND);
  assert.equal(await fs.write(a, null, bytes(3)), 1);
  assert.deepEqual([...(await fs.read(w, 0, 100))], [1, 2, 3]);
  assert.deepEqual([...(await fs.read(w, 3, 100))], []);
});

test("handle errors become Chrome's codes: quota, a file too big for the store, a locked file", async () => {
  assert.equal(errorCode(new DOMException("full", "QuotaExceededError")), ERR.NOQUOTA);
  assert.equal(errorCode(new RangeError("big")), ERR.FILETOOBIG);
  assert.equal(errorCode(new DOMException("locked", "NoModificationAllowedError")), ERR.NOACCESS);
  assert.equal(errorCode(new Error("?")), ERR.FAILED);
  // The IndexedDB store keeps whole files up to MAX_STORED_FILE: past it, FILETOOBIG at once.
  const fs = await fresh();
  const f = await fs.open("/big", OPEN.WRITE | OPEN.CREATE);
  assert.equal(await fs.write(f, MAX_STORED_FILE, bytes(1)), ERR.FILETOOBIG);
  assert.equal(await fs.setLength(f, MAX_STORED_FILE + 1), ERR.FILETOOBIG);
  // A handle that runs out of quota: NOQUOTA, and the next call is answered (no hang).
  const quota = new SandboxFs(fakeRoot({ quota: 10 }));
  const q = await quota.open("/q", OPEN.WRITE | OPEN.CREATE);
  assert.equal(await quota.write(q, 0, new Uint8Array(8)), 8);
  assert.equal(await quota.write(q, 8, new Uint8Array(8)), ERR.NOQUOTA);
  assert.equal((await quota.info(q)).size, 8);
});

test("offsets past 2 GB and 4 GB reach the handle as they are", async () => {
  const fs = new SandboxFs(fakeRoot({}));
  const f = await fs.open("/huge", OPEN.WRITE | OPEN.READ | OPEN.CREATE);
  for (const at of [2 ** 31 + 5, 2 ** 32 + 7, 5 * 2 ** 30]) {
    assert.equal(await fs.write(f, at, bytes(42)), 1);
    assert.deepEqual([...(await fs.read(f, at, 4))], [42], `at ${at}`);
  }
  assert.equal((await fs.info(f)).size, 5 * 2 ** 30 + 1);
  assert.equal(await fs.write(f, Number.MAX_SAFE_INTEGER, bytes(1)), ERR.FILETOOBIG);
});

test("the page's webkitRequestFileSystem and the module share one store", async () => {
  const store = new MemoryStore();
  const location = { protocol: "http:", hostname: "127.0.0.1", port: "8000", origin: "http://127.0.0.1:8000" };
  const page = new Sandbox({ root: async () => new StoreDirectoryHandle(store), location, loadId: "load-1" });
  const P = (f) => new Promise((ok, err) => f(ok, err));
  const pfs = await P((ok, err) => page.requestFileSystem(PERSISTENT, 0, ok, err));
  const dir = await P((ok, err) => pfs.root.getDirectory("confs", { create: true }, ok, err));
  const entry = await P((ok, err) => dir.getFile("peers.txt", { create: true }, ok, err));
  const writer = await P((ok, err) => entry.createWriter(ok, err));
  await new Promise((ok) => {
    writer.onwriteend = ok;
    writer.write(new Blob(["from the page"]));
  });
  const mod = await fresh(store);
  const f = await mod.open("/confs/peers.txt", OPEN.READ);
  assert.equal(new TextDecoder().decode(await mod.read(f, 0, 100)), "from the page");
  await mod.close(f);
  const w = await mod.open("/confs/out.txt", OPEN.WRITE | OPEN.CREATE);
  await mod.write(w, 0, new TextEncoder().encode("from the module"));
  await mod.flush(w);
  const out = await P((ok, err) => pfs.root.getFile("/confs/out.txt", {}, ok, err));
  const file = await P((ok, err) => out.file(ok, err));
  assert.equal(await file.text(), "from the module");
});

test("the module's persistent writes stay under the quota the page's requestQuota granted", async () => {
  const store = new MemoryStore();
  const root = new StoreDirectoryHandle(store);
  const page = new Sandbox({ root: async () => root, location: { protocol: "http:", hostname: "h", port: "1", origin: "http://h:1" }, loadId: "load-1" });
  const ask = (bytes) => new Promise((ok) => page.requestQuota(PERSISTENT, bytes, ok));
  let clock = 0;
  const mod = new SandboxFs(await sandboxFolder(root, PERSISTENT_DIR, "load-1"), { quota: () => grantedQuota(root), now: () => clock });
  assert.equal(await grantedQuota(root), null, "nothing granted yet");
  const f = await mod.open("/f", OPEN.WRITE | OPEN.CREATE);
  assert.equal(await mod.write(f, 0, new Uint8Array(100)), 100, "no grant: no limit but the browser's");
  assert.equal(await ask(150), 150);
  assert.equal(await grantedQuota(root), 150);
  assert.equal(await mod.write(f, 100, new Uint8Array(100)), 100, "without a grant, it is read again once a second");
  clock += 1;
  assert.equal(await mod.setLength(f, 100), ERR.OK);
  assert.equal(await mod.write(f, 100, new Uint8Array(50)), 50, "up to the grant");
  assert.equal(await mod.write(f, 150, bytes(1)), ERR.NOQUOTA, "one byte past it");
  assert.equal(await mod.setLength(f, 151), ERR.NOQUOTA);
  assert.equal((await mod.info(f)).size, 150, "a refused write changes nothing");
  assert.equal(await mod.write(f, 0, new Uint8Array(150).fill(7)), 150, "rewriting in place needs no quota");
  const g = await mod.open("/g", OPEN.WRITE | OPEN.CREATE);
  assert.equal(await mod.write(g, 0, bytes(1)), ERR.NOQUOTA, "the quota is the file system's, not a file's");
  assert.equal(await mod.setLength(f, 100), ERR.OK);
  assert.equal(await mod.write(g, 0, new Uint8Array(50)), 50, "room made by shrinking counts");
  // The page removes a file (the module counts again when a write does not fit) and asks for more.
  const pfs = await new Promise((ok, err) => page.requestFileSystem(PERSISTENT, 0, ok, err));
  const entry = await new Promise((ok, err) => pfs.root.getFile("/g", {}, ok, err));
  await mod.close(g);
  await new Promise((ok, err) => entry.remove(ok, err));
  assert.equal(await mod.write(f, 100, new Uint8Array(50)), 50, "the page's removal is seen");
  assert.equal(await mod.write(f, 150, bytes(1)), ERR.NOQUOTA);
  await ask(1000);
  assert.equal(await mod.write(f, 150, new Uint8Array(850)), 850, "a larger grant is seen at once");
  assert.equal(await mod.write(f, 1000, bytes(1)), ERR.NOQUOTA);
  // The temporary file system has no grant (Chrome's was a shared pool).
  const tmp = new SandboxFs(await sandboxFolder(root, TEMPORARY_DIR, "load-1"));
  const t = await tmp.open("/t", OPEN.WRITE | OPEN.CREATE);
  assert.equal(await tmp.write(t, 0, new Uint8Array(2000)), 2000);
});

test("the temporary folder is emptied once per page load, whoever opens it first", async () => {
  const store = new MemoryStore();
  const root = new StoreDirectoryHandle(store);
  const a = await sandboxFolder(root, TEMPORARY_DIR, "load-1");
  await a.getFileHandle("t", { create: true });
  const same = await sandboxFolder(root, TEMPORARY_DIR, "load-1");
  assert.equal((await same.getFileHandle("t")).name, "t", "the page and the module of one load");
  await (await sandboxFolder(root, PERSISTENT_DIR, "load-2")).getFileHandle("p", { create: true });
  const next = await sandboxFolder(root, TEMPORARY_DIR, "load-2");
  await assert.rejects(next.getFileHandle("t"), { name: "NotFoundError" });
  assert.equal((await (await sandboxFolder(root, PERSISTENT_DIR, "load-3")).getFileHandle("p")).name, "p");
});

/**
 * A directory handle whose files are sparse (only written bytes kept), optionally with a
 * quota of bytes: stands in for OPFS at offsets past what memory holds.
 */
function fakeRoot({ quota = Infinity }) {
  const files = new Map();
  const fileHandle = (name) => ({
    kind: "file",
    name,
    async getFile() {
      return { size: files.get(name).size, lastModified: 1000 };
    },
    async createSyncAccessHandle() {
      const f = files.get(name);
      return {
        getSize: () => f.size,
        read(buf, { at }) {
          let n = 0;
          for (; n < buf.length && at + n < f.size; n++) buf[n] = f.bytes.get(at + n) ?? 0;
          return n;
        },
        write(buf, { at }) {
          if (Math.max(f.size, at + buf.length) > quota) throw new DOMException("quota", "QuotaExceededError");
          buf.forEach((b, i) => f.bytes.set(at + i, b));
          f.size = Math.max(f.size, at + buf.length);
          return buf.length;
        },
        truncate(n) {
          f.size = n;
        },
        flush() {},
        close() {},
      };
    },
  });
  const notFound = () => Promise.reject(new DOMException("no", "NotFoundError"));
  return {
    kind: "directory",
    name: "",
    async getFileHandle(name, { create = false } = {}) {
      if (!files.has(name)) {
        if (!create) return notFound();
        files.set(name, { size: 0, bytes: new Map() });
      }
      return fileHandle(name);
    },
    getDirectoryHandle: notFound,
    async *values() {
      for (const name of files.keys()) yield fileHandle(name);
    },
  };
}
