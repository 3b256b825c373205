import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { test } from "node:test";

import { apiFunction, appId, ChromeError, cloneInto, idFromHex, LastError, Multi, parseLenientJSON } from "../../src/chrome/base.js";
import { SharedEvent } from "../../src/chrome/events.js";

const quietLog = () => {
  const lines = [];
  return { lines, error: (s) => lines.push(["error", s]), warn: (s) => lines.push(["warn", s]), info: (s) => lines.push(["info", s]) };
};
const digest = async (b) => createHash("sha256").update(b).digest();
const tick = () => new Promise((r) => setTimeout(r, 0));

test("lastError is set only while the callback runs, and an unread one is reported", async () => {
  const log = quietLog();
  const le = new LastError(log);
  const f = apiFunction(le, "x.fail", () => {
    throw new ChromeError("nope");
  });
  let seen;
  f(() => (seen = le.get()));
  assert.equal(le.current, undefined, "not before the callback");
  await tick();
  assert.deepEqual(seen, { message: "nope" });
  assert.equal(le.get(), undefined, "not after it");
  assert.equal(log.lines.length, 0);
  f(() => {});
  await tick();
  assert.deepEqual(log.lines, [["error", "Unchecked runtime.lastError: nope"]]);
});

test("an API function calls back with its result, spreads a Multi, or returns a promise", async () => {
  const le = new LastError(quietLog());
  const ok = apiFunction(le, "x.ok", (a) => a + 1);
  const two = apiFunction(le, "x.two", () => new Multi([1, 2]));
  const got = [];
  ok(1, (v) => got.push(v));
  two((a, b) => got.push([a, b]));
  await tick();
  assert.deepEqual(got, [2, [1, 2]]);
  assert.equal(await ok(41), 42);
  await assert.rejects(apiFunction(le, "x.no", () => Promise.reject(new ChromeError("bad")))(), /bad/);
});

test("a callback that throws is reported, not thrown into the API", async () => {
  const log = quietLog();
  const le = new LastError(log);
  apiFunction(le, "x.ok", () => 1)(() => {
    throw new Error("app bug");
  });
  await tick();
  assert.match(log.lines[0][1], /Error in response to x\.ok: Error: app bug/);
});

test("manifest JSON may have comments, a BOM and trailing commas, as Chrome read it", () => {
  const m = parseLenientJSON('\uFEFF{\n // a comment\n "name": "a // not a comment",\n /* block */ "list": [1, 2,],\n}');
  assert.deepEqual(m, { name: "a // not a comment", list: [1, 2] });
  assert.throws(() => parseLenientJSON("{nope}"));
});

test("the app id is SHA-256 of the DER key, its first 32 hex digits as a-p", async () => {
  assert.equal(idFromHex("0123456789abcdef0123456789abcdef99"), "abcdefghijklmnopabcdefghijklmnop");
  // The key of the NaCl SDK's ppapi_simple example app (fixtures/sites/nacl-seek-bug-demo-app).
  const key =
    "MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCMN716Qyu0l2EHNFqIJVqVysFcTR6urqhaGGqW4UK7slBaURz9+Sb1b4Ot5P1uQNE5c+CTU5Vu61wpqmSqMMxqHLWdPPMh8uRlyctsb2cxWwG6XoGSvpX29NsQVUFXd4v2tkJm3G9t+V0X8TYskrvWQmnyOW8OEIDvrBhUEfFxWQIDAQAB";
  const id = await appId({ key }, "http://x/", digest);
  assert.match(id, /^[a-p]{32}$/);
  const hex = createHash("sha256").update(Buffer.from(key, "base64")).digest("hex");
  assert.equal(id, idFromHex(hex));
  // No key: from the package's URL, stable for one site and different for another.
  const a = await appId({}, "http://127.0.0.1:8000/app/", digest);
  assert.equal(a, await appId({}, "http://127.0.0.1:8000/app/", digest));
  assert.notEqual(a, await appId({}, "http://127.0.0.1:8000/other/", digest));
});

test("cloneInto copies as JSON (functions and undefined dropped)", () => {
  const v = { a: [1, { b: "c" }], f: () => 1, u: undefined };
  assert.deepEqual(cloneInto(null, v), { a: [1, { b: "c" }] });
  assert.equal(cloneInto(null, undefined), undefined);
});

test("an event's listeners belong to their page and go with it", () => {
  const e = new SharedEvent("x.onY", /** @type {any} */ (quietLog()));
  const p1 = {};
  const p2 = {};
  const got = [];
  const f = (v) => got.push(["p1", v]);
  e.view(p1).addListener(f);
  e.view(p1).addListener(f); // once only
  e.view(p2).addListener((v) => got.push(["p2", v]));
  assert.equal(e.view(p1).hasListener(f), true);
  assert.equal(e.view(p2).hasListener(f), false);
  e.dispatch([1]);
  const later = e.view(p2);
  e.drop(p1);
  e.dispatch([2]);
  // A view made before a page went still adds to the event.
  later.addListener((v) => got.push(["p2 later", v]));
  e.dispatch([3]);
  assert.deepEqual(got, [["p1", 1], ["p2", 1], ["p2", 2], ["p2", 3], ["p2 later", 3]]);
  assert.throws(() => e.view(p1).addListener("no"), TypeError);
});

test("the JavaScript SHA-256 (for pages without crypto.subtle) agrees with node's", async () => {
  const { sha256 } = await import("../../src/chrome/base.js");
  for (const n of [0, 1, 55, 56, 63, 64, 65, 119, 1000]) {
    const b = Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 255);
    assert.equal(Buffer.from(sha256(b)).toString("hex"), createHash("sha256").update(b).digest("hex"), `length ${n}`);
  }
});
