import assert from "node:assert/strict";
import { test } from "node:test";

import { LIVE_VARS } from "../../src/host/shared.js";
import { T } from "../../src/host/vars.js";
import { fakeInstance } from "./helpers.js";

test("a string var keeps its bytes NUL-terminated in module memory until released", () => {
  const { vars, mem, h } = fakeInstance();
  const v = vars.fromJS("héllo");
  assert.equal(v.t, T.STRING);
  const u = vars.utf8(v);
  assert.equal(u.len, 6);
  assert.equal(mem.string(u.addr, u.len), "héllo");
  assert.equal(mem.u8[u.addr + u.len], 0);
  assert.equal(h[LIVE_VARS], 1);
  vars.addRef(v);
  vars.release(v);
  assert.equal(vars.utf8(v).len, 6, "one reference is left");
  vars.release(v);
  assert.equal(vars.utf8(v), null, "the last release ends it");
  assert.equal(h[LIVE_VARS], 0);
});

test("freed blocks and slots are used again", () => {
  const { vars, exports } = fakeInstance();
  const a = vars.fromJS("x".repeat(100));
  const addr = vars.utf8(a).addr;
  vars.release(a);
  const b = vars.fromJS("y".repeat(90));
  assert.equal(vars.utf8(b).addr, addr, "same size class, same block");
  assert.equal(b.v, a.v, "same slot");
  for (let i = 0; i < 5000; i++) vars.release(vars.fromJS(`s${i}`));
  assert.equal(exports.allocs, 2, "one page per size class serves strings that come and go");
});

test("messages round-trip as Chrome converted them", () => {
  const { vars, h } = fakeInstance();
  const msg = {
    s: "text",
    i: 42,
    neg: -7,
    d: 1.5,
    big: 2 ** 40,
    z: -0,
    b: true,
    n: null,
    list: [1, "two", [3], { four: 4 }],
    nested: { deep: { deeper: ["x"] } },
  };
  const v = vars.fromJS(msg);
  assert.equal(v.t, T.DICTIONARY);
  const back = vars.toJS(v);
  assert.deepEqual(back, msg);
  assert.ok(Object.is(back.z, -0), "-0 stays a double");
  vars.release(v);
  assert.equal(h[LIVE_VARS], 0, "releasing the dictionary releases everything it held");
});

test("ints become INT32 vars and other numbers DOUBLE", () => {
  const { vars } = fakeInstance();
  assert.deepEqual(vars.fromJS(5), { t: T.INT32, v: 5 });
  assert.deepEqual(vars.fromJS(2 ** 31), { t: T.DOUBLE, v: 2 ** 31 });
  assert.deepEqual(vars.fromJS(0.5), { t: T.DOUBLE, v: 0.5 });
  assert.equal(vars.fromJS(undefined).t, T.UNDEFINED);
});

test("array buffers are zeroed, mapped in place and copied out", () => {
  const { vars, mem } = fakeInstance();
  const v = vars.arrayBuffer(1000);
  const b = vars.bufferOf(v);
  assert.equal(b.len, 1000);
  assert.ok(mem.bytes(b.addr, 1000).every((x) => x === 0));
  mem.write(b.addr, new Uint8Array([1, 2, 3]));
  const out = new Uint8Array(vars.toJS(v));
  assert.deepEqual([...out.slice(0, 4)], [1, 2, 3, 0]);
  const big = vars.fromJS(new Uint8Array(100000).fill(7).buffer);
  const bb = vars.bufferOf(big);
  assert.equal(bb.len, 100000);
  assert.equal(mem.u8[bb.addr + 99999], 7);
});

test("arrays grow, shrink and hold references", () => {
  const { vars, h } = fakeInstance();
  const a = vars.locked(() => vars.arrayLocked());
  const s = vars.fromJS("elem");
  for (let i = 0; i < 50; i++) assert.ok(vars.arraySet(a, i, i % 2 ? s : { t: T.INT32, v: i }));
  vars.release(s);
  assert.equal(vars.arrayLength(a), 50);
  const e = vars.arrayGet(a, 1);
  assert.equal(vars.toJS(e), "elem");
  vars.release(e);
  assert.deepEqual(vars.arrayGet(a, 50), { t: T.UNDEFINED, v: 0 });
  assert.ok(vars.arraySetLength(a, 1));
  assert.equal(vars.arrayLength(a), 1);
  assert.equal(h[LIVE_VARS], 1, "shrinking released the strings");
  assert.ok(!vars.arraySet(s, 0, a), "a released var is not an array");
});

test("dictionaries set, replace, delete and list keys", () => {
  const { vars, h } = fakeInstance();
  const d = vars.locked(() => vars.dictionaryLocked());
  const k = (s) => vars.fromJS(s);
  const ka = k("a");
  const kb = k("b");
  assert.ok(vars.dictSet(d, ka, { t: T.INT32, v: 1 }));
  assert.ok(vars.dictSet(d, kb, { t: T.INT32, v: 2 }));
  const ka2 = k("a");
  assert.ok(vars.dictSet(d, ka2, { t: T.INT32, v: 3 }), "same key bytes, another var");
  assert.deepEqual(vars.toJS(d), { a: 3, b: 2 });
  assert.ok(vars.dictHasKey(d, kb));
  vars.dictDelete(d, ka);
  assert.deepEqual(vars.toJS(d), { b: 2 });
  const keys = vars.dictKeys(d);
  assert.deepEqual(vars.toJS(keys), ["b"]);
  assert.ok(!vars.dictSet(d, { t: T.INT32, v: 1 }, kb), "keys are strings");
  for (const v of [ka, kb, ka2, keys, d]) vars.release(v);
  assert.equal(h[LIVE_VARS], 0);
});

test("a PP_Var in memory reads back as written", () => {
  const { vars, mem } = fakeInstance();
  const p = 1024;
  for (const v of [
    { t: T.DOUBLE, v: -2.25 },
    { t: T.INT32, v: -5 },
    { t: T.BOOL, v: 1 },
    { t: T.STRING, v: 77 },
  ]) {
    vars.write(p, v);
    assert.deepEqual(vars.read(p), v);
  }
  mem.setI32(p, 99);
  assert.equal(vars.read(p).t, T.UNDEFINED, "an unknown type reads as undefined");
});
