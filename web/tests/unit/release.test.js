// Releasing the last reference to a resource runs the release hook of the family that
// owns its kind (registry.js onRelease, context.js releaseResource), and only that one.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Context } from "../../src/host/context.js";
import { Registry } from "../../src/host/registry.js";
import { KIND } from "../../src/host/resources.js";
import { IO_OP } from "../../src/host/protocol.js";
import { PP_FILESYSTEMTYPE } from "../../src/host/contract.js";
import { createSharedBlock } from "../../src/host/shared.js";

test("a release runs the hook of its kind only, once, and a kind has one hook", () => {
  const reg = new Registry();
  const ran = [];
  reg.onRelease(KIND.IMAGE_DATA, (res, fields) => ran.push(["image", res, fields[0]]));
  reg.onRelease(KIND.FILE_IO, (res) => ran.push(["file", res]));
  reg.released(7, KIND.FILE_IO, new Int32Array([9]));
  reg.released(8, KIND.IMAGE_DATA, new Int32Array([5]));
  reg.released(9, KIND.VIEW, new Int32Array(1)); // no hook: nothing to free
  assert.deepEqual(ran, [
    ["file", 7],
    ["image", 8, 5],
  ]);
  assert.throws(() => reg.onRelease(KIND.FILE_IO, () => {}), /has a release hook already/);
});

/** The instance worker's context over a fresh memory, with its IO port and allocator faked. */
function instance() {
  const memory = new WebAssembly.Memory({ initial: 2, maximum: 1024, shared: true });
  const cx = new Context({ isMain: true, tid: 0, memory, hostSab: createSharedBlock(), toPage: () => {} });
  const freed = [];
  cx.setExports({
    __ppapi_alloc: (len) => memory.grow(Math.ceil(len / 65536)) * 65536,
    __ppapi_free: (addr, len) => freed.push([addr, len]),
  });
  const told = [];
  cx.ioPort = /** @type {any} */ ({ postMessage: (m) => told.push([m.op, ...m.a]) });
  const fn = (iface, name) => cx.registry.get(iface, name).impl;
  const release = fn("PPB_Core;1.0", "ReleaseResource");
  return { cx, freed, told, fn, release };
}

test("every family that holds more than its state words registers a release hook", () => {
  const { cx } = instance();
  const hooked = [...cx.registry.releaseHooks.keys()].sort((a, b) => a - b);
  const want = [
    KIND.MESSAGE_LOOP,
    KIND.INPUT_EVENT,
    KIND.IMAGE_DATA,
    KIND.GRAPHICS_2D,
    KIND.FILE_REF,
    KIND.FILE_IO,
    KIND.GRAPHICS_3D,
    KIND.WEBSOCKET,
    KIND.URL_LOADER,
    KIND.URL_REQUEST,
    KIND.URL_RESPONSE,
    KIND.AUDIO,
    KIND.VIDEO_DECODER,
  ].sort((a, b) => a - b);
  assert.deepEqual(hooked, want);
});

test("releases through PPB_Core reach the owning family's hook", () => {
  const { cx, freed, told, fn, release } = instance();

  // ImageData: its pixels go back to the runtime's allocator, and nothing else happens.
  const size = 256;
  cx.mem.setI32(size, 3);
  cx.mem.setI32(size + 4, 2);
  const image = fn("PPB_ImageData;1.0", "Create")(cx.instance, 0, size, 0);
  assert.ok(image > 0);
  const pixels = fn("PPB_ImageData;1.0", "Map")(image);
  fn("PPB_Core;1.0", "AddRefResource")(image);
  release(image);
  assert.deepEqual(freed, [], "a reference is left: nothing is freed");
  release(image);
  assert.deepEqual(freed, [[pixels, 3 * 2 * 4]]);
  assert.deepEqual(told, []);

  // FileIO, WebSocket and URLLoader: the IO worker is told to let go of its side.
  const io = fn("PPB_FileIO;1.1", "Create")(cx.instance);
  const ws = fn("PPB_WebSocket;1.0", "Create")(cx.instance);
  const loader = fn("PPB_URLLoader;1.0", "Create")(cx.instance);
  release(ws);
  release(io);
  release(loader);
  assert.deepEqual(told, [
    [IO_OP.WS_FORGET, ws],
    [IO_OP.IO_CLOSE, io],
    [IO_OP.URL_CLOSE, loader],
  ]);
  assert.equal(freed.length, 1, "no other family's hook ran");

  // FileRef: its hook releases the file system it holds.
  const fs = fn("PPB_FileSystem;1.0", "Create")(cx.instance, PP_FILESYSTEMTYPE.LOCALTEMPORARY);
  cx.mem.write(512, new TextEncoder().encode("/a.txt\0"));
  const ref = fn("PPB_FileRef;1.2", "Create")(fs, 512);
  assert.ok(ref > 0);
  release(fs);
  assert.equal(cx.res.kindOf(fs), KIND.FILE_SYSTEM, "the reference keeps its file system");
  release(ref);
  assert.equal(cx.res.kindOf(fs), 0, "the reference's hook released its file system");

  // A kind without a hook (a URLRequestInfo's records are the url family's; a view has none).
  const before = told.length;
  const request = fn("PPB_URLRequestInfo;1.0", "Create")(cx.instance);
  release(request);
  assert.equal(cx.res.kindOf(request), 0);
  assert.equal(told.length, before);
});
