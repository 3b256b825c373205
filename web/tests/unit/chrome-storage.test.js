import assert from "node:assert/strict";
import { test } from "node:test";

import { itemBytes, localStorageBackend, makeAreas, memoryBackend, QUOTAS, StorageArea } from "../../src/chrome/storage.js";

const area = (name, opts = {}) => {
  const changes = [];
  const backend = opts.backend ?? memoryBackend();
  const a = new StorageArea({ area: name, backend, onChanged: (c, n) => changes.push([c, n]), ...opts });
  return { a, changes, backend };
};

test("get with null, a key, a list, and defaults; values are JSON copies", async () => {
  const { a } = area("local");
  const obj = { n: 1, list: [1, 2] };
  await a.set({ obj, s: "str", z: 0 });
  obj.n = 99;
  assert.deepEqual(await a.get(null), { obj: { n: 1, list: [1, 2] }, s: "str", z: 0 });
  assert.deepEqual(await a.get("s"), { s: "str" });
  assert.deepEqual(await a.get(["s", "nope"]), { s: "str" });
  assert.deepEqual(await a.get({ s: "d", nope: "dflt", u: undefined }), { s: "str", nope: "dflt" });
  assert.deepEqual(await a.get("nope"), {});
});

test("onChanged reports old and new values, only for what changed, with the area's name", async () => {
  const { a, changes } = area("local");
  await a.set({ k: 1, j: "x" });
  await a.set({ k: 1, j: "y" });
  await a.remove(["k", "absent"]);
  await a.clear();
  assert.deepEqual(changes, [
    [{ k: { newValue: 1 }, j: { newValue: "x" } }, "local"],
    [{ j: { oldValue: "x", newValue: "y" } }, "local"],
    [{ k: { oldValue: 1 } }, "local"],
    [{ j: { oldValue: "y" } }, "local"],
  ]);
});

test("bytes in use count keys and JSON values", async () => {
  const { a } = area("sync");
  await a.set({ ab: "cd", n: 12 });
  assert.equal(await a.getBytesInUse("ab"), 2 + 4);
  assert.equal(await a.getBytesInUse(null), 6 + 1 + 2);
  assert.equal(itemBytes("é", '"é"'), 2 + 4);
});

test("sync's quotas: per item, items, total; a refused write changes nothing", async () => {
  const { a, changes } = area("sync");
  await assert.rejects(a.set({ big: "x".repeat(QUOTAS.sync.QUOTA_BYTES_PER_ITEM) }), /QUOTA_BYTES_PER_ITEM quota exceeded/);
  const many = Object.fromEntries(Array.from({ length: 513 }, (_, i) => [`k${i}`, i]));
  await assert.rejects(a.set(many), /MAX_ITEMS quota exceeded/);
  assert.deepEqual(await a.get(null), {});
  assert.equal(changes.length, 0);
  // 13 items of ~8,000 bytes pass the per-item quota but not the 102,400-byte total.
  for (let i = 0; i < 12; i++) await a.set({ [`i${i}`]: "y".repeat(8000) });
  await assert.rejects(a.set({ last: "y".repeat(8000) }), /^Error: QUOTA_BYTES quota exceeded$|QUOTA_BYTES quota exceeded/);
  assert.equal(Object.keys(await a.get(null)).length, 12);
});

test("sync allows 120 writes a minute", async () => {
  let t = 0;
  const { a } = area("sync", { now: () => t });
  for (let i = 0; i < 120; i++) await a.set({ k: i });
  await assert.rejects(a.set({ k: "one more" }), /MAX_WRITE_OPERATIONS_PER_MINUTE quota exceeded/);
  t += 60001;
  await a.set({ k: "later" });
  assert.deepEqual(await a.get("k"), { k: "later" });
});

test("local has 5,242,880 bytes unless the app has unlimitedStorage", async () => {
  const backend = () => memoryBackend();
  const limited = makeAreas({ manifest: { permissions: ["storage"] }, makeBackend: backend, hub: { dispatch() {} }, cloneFor: (_o, v) => v });
  await assert.rejects(limited.local.set({ big: "x".repeat(5242880) }), /QUOTA_BYTES quota exceeded/);
  const unlimited = makeAreas({ manifest: { permissions: ["unlimitedStorage"] }, makeBackend: backend, hub: { dispatch() {} }, cloneFor: (_o, v) => v });
  await unlimited.local.set({ big: "x".repeat(5242880) });
  assert.equal(await unlimited.local.getBytesInUse("big"), 3 + 5242882);
  await assert.rejects(limited.managed.set({ a: 1 }), /read-only/);
});

test("values outlive the page: a new area over the same backend sees them", async () => {
  const store = new Map();
  const ls = { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => store.set(k, v) };
  const one = area("local", { backend: localStorageBackend(ls, "app:local") }).a;
  await one.set({ saved: { at: 1 } });
  const two = area("local", { backend: localStorageBackend(ls, "app:local") }).a;
  assert.deepEqual(await two.get("saved"), { saved: { at: 1 } });
});

test("operations run in the order made", async () => {
  const { a } = area("local");
  const p1 = a.set({ k: 1 });
  const p2 = a.get("k");
  const p3 = a.set({ k: 2 });
  const p4 = a.get("k");
  await Promise.all([p1, p3]);
  assert.deepEqual([await p2, await p4], [{ k: 1 }, { k: 2 }]);
});
