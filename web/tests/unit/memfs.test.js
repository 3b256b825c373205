import assert from "node:assert/strict";
import { test } from "node:test";

import { ERR, MemFs, MKDIR, OPEN, parts } from "../../src/host/io/memfs.js";

/**
 * The answer of a call that must succeed (an error code fails the test).
 * @template T
 * @param {T | number} r
 * @returns {T}
 */
const ok = (r) => {
  if (typeof r === "number") assert.fail(`error ${r}`);
  return r;
};

test("paths are absolute and plain", () => {
  assert.deepEqual(parts("/a/b"), ["a", "b"]);
  assert.deepEqual(parts("/"), []);
  assert.equal(parts("a/b"), null);
  assert.equal(parts("/a/../b"), null);
});

test("directories, files and their errors as Chrome gave them", () => {
  const fs = new MemFs();
  assert.equal(fs.mkdir("/a/b", 0), ERR.FILENOTFOUND, "no ancestors without the flag");
  assert.equal(fs.mkdir("/a/b", MKDIR.WITH_ANCESTORS), ERR.OK);
  assert.equal(fs.mkdir("/a", 0), ERR.OK, "an existing directory is fine");
  assert.equal(fs.mkdir("/a", MKDIR.EXCLUSIVE), ERR.FILEEXISTS);
  assert.equal(fs.open("/a/f", OPEN.READ), ERR.FILENOTFOUND);
  const f = fs.open("/a/f", OPEN.WRITE | OPEN.CREATE);
  assert.equal(typeof f, "object");
  assert.equal(fs.open("/a/f", OPEN.WRITE | OPEN.CREATE | OPEN.EXCLUSIVE), ERR.FILEEXISTS);
  assert.equal(fs.open("/a", OPEN.READ), ERR.NOTAFILE);
  assert.equal(fs.open("/a/f", OPEN.WRITE | OPEN.APPEND), ERR.BADARGUMENT);
  assert.equal(fs.open("/a/f", OPEN.READ | OPEN.TRUNCATE), ERR.BADARGUMENT);
  assert.equal(MemFs.write(f, 3, new Uint8Array([7, 8])), 2);
  assert.deepEqual([...MemFs.read(f, 0, 10)], [0, 0, 0, 7, 8], "a hole reads as zeros");
  assert.equal(ok(fs.query("/a/f")).size, 5);
  assert.equal(MemFs.setLength(f, 4), ERR.OK);
  assert.equal(MemFs.setLength(f, 6), ERR.OK);
  assert.deepEqual([...MemFs.read(f, 0, 10)], [0, 0, 0, 7, 0, 0], "shrunk bytes do not come back");
  assert.deepEqual(fs.list("/a"), [
    { name: "b", dir: true },
    { name: "f", dir: false },
  ]);
  assert.equal(fs.remove("/a"), ERR.FAILED, "not empty");
  assert.equal(fs.rename("/a/f", "/a/b/g"), ERR.OK);
  assert.equal(fs.query("/a/f"), ERR.FILENOTFOUND);
  assert.equal(ok(fs.query("/a/b/g")).size, 6);
  assert.equal(fs.rename("/a", "/a/b/c"), ERR.FAILED, "into itself");
  assert.equal(fs.remove("/a/b/g"), ERR.OK);
  assert.equal(fs.remove("/"), ERR.NOACCESS);
  const t = fs.open("/a/b/t", OPEN.WRITE | OPEN.CREATE);
  MemFs.write(t, 0, new Uint8Array(10000).fill(1));
  assert.equal(ok(fs.open("/a/b/t", OPEN.WRITE | OPEN.TRUNCATE)).size, 0);
  assert.equal(fs.touch("/a/b/t", 5, 6), ERR.OK);
  assert.equal(ok(fs.query("/a/b/t")).mtime, 6);
});

test("persistence writes only what changed, and restores the tree", async () => {
  const { diff, restore, signature, walk } = await import("../../src/host/io/persist.js");
  const fs = new MemFs();
  fs.mkdir("/a/b", 1);
  MemFs.write(fs.open("/a/b/f", 2 | 4), 0, new Uint8Array([1, 2, 3]));
  const first = walk(fs);
  assert.deepEqual([...first.keys()].sort(), ["/a", "/a/b", "/a/b/f"]);
  assert.deepEqual(diff(new Map(), first), { put: ["/a", "/a/b", "/a/b/f"], del: [] });
  const written = new Map([...first].map(([p, n]) => [p, signature(n)]));
  assert.deepEqual(diff(written, walk(fs)), { put: [], del: [] }, "nothing changed");
  const n = fs.lookup("/a/b/f");
  MemFs.write(n, 3, new Uint8Array([4]));
  assert.deepEqual(diff(written, walk(fs)).put, ["/a/b/f"], "a write changes the size");
  fs.remove("/a/b/f");
  assert.deepEqual(diff(written, walk(fs)).del, ["/a/b/f"]);
  // Records, in any order, make the tree again.
  const back = new MemFs();
  restore(back, [
    { path: "/a/b/f", dir: false, data: new Uint8Array([9, 8]), ctime: 1, atime: 2, mtime: 3 },
    { path: "/a", dir: true, data: null, ctime: 1, atime: 1, mtime: 1 },
    { path: "/a/b", dir: true, data: null, ctime: 1, atime: 1, mtime: 1 },
    { path: "/lost/x", dir: false, data: new Uint8Array([1]), ctime: 1, atime: 1, mtime: 1 },
  ]);
  assert.deepEqual(Array.from(MemFs.read(back.lookup("/a/b/f"), 0, 10)), [9, 8]);
  assert.equal(ok(back.query("/a/b/f")).mtime, 3);
  assert.equal(back.lookup("/lost/x"), null, "a record without its parent is dropped");
});
