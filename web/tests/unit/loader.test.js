import assert from "node:assert/strict";
import { createServer } from "node:http";
import { test } from "node:test";

import { LOAD, Loaders } from "../../src/host/io/loader.js";
import { FIELDS, KIND } from "../../src/host/resources.js";
import { fakeInstance } from "./helpers.js";

/** A loopback HTTP server answering `body` on every path; its base URL and requests seen. */
async function server(body) {
  const seen = [];
  const s = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    res.writeHead(200, { "Content-Type": "text/plain", "Content-Length": body.length });
    res.end(body);
  });
  await new Promise((r) => s.listen(0, "127.0.0.1", () => r()));
  return { base: `http://127.0.0.1:${/** @type {import("node:net").AddressInfo} */ (s.address()).port}/`, seen, close: () => s.close() };
}

function loaders({ page = "http://127.0.0.1:1/app/page.html", map = [], refuse = false } = {}) {
  const inst = fakeInstance();
  const notes = [];
  const l = new Loaders(inst.h, inst.res, page, map, (t) => notes.push(t), refuse);
  return { ...inst, l, notes, loader: inst.res.create(KIND.URL_LOADER) };
}

test("another origin is refused unless the request allows it or the map covers it", async () => {
  const { l, notes, loader } = loaders();
  assert.deepEqual(await l.open(loader, { url: "http://example.invalid/x" }), [-7, null]);
  assert.match(notes[0], /URLLoader refused http:\/\/example.invalid\/x \(PP_ERROR_NOACCESS\)/);
  assert.deepEqual(await l.open(loader, { url: "file:///etc/passwd" }), [-7, null], "not http(s)");
  assert.deepEqual(await l.open(loader, { url: "http://[bad" }), [-4, null]);
  assert.deepEqual(await l.open(loader, { url: "/x", method: "TRACE" }), [-4, null], "a forbidden method");
});

test("with refuseUnmapped, even a request that allows cross-origin is refused", async () => {
  const { l, notes, loader } = loaders({ refuse: true });
  assert.deepEqual(await l.open(loader, { url: "http://example.invalid/x", allowCrossOrigin: true }), [-7, null]);
  assert.match(notes[0], /--refuse-unmapped/);
});

test("a mapped load streams its body in pieces, with progress, then 0 at the end", async () => {
  const srv = await server("hello, pepper");
  try {
    const { l, loader, mem, h, res, exports } = loaders({ map: [["https://gone.example/", srv.base]] });
    const [r, head] = await l.open(loader, { url: "https://gone.example/data.txt", method: "GET" });
    assert.equal(r, 0);
    const info = JSON.parse(new TextDecoder().decode(/** @type {Uint8Array} */ (head)));
    assert.equal(info.status, 200);
    assert.equal(info.url, "https://gone.example/data.txt", "the app sees the URL it asked for");
    assert.match(info.headers, /content-type: text\/plain/);
    assert.deepEqual(srv.seen, ["GET /data.txt"]);
    const buf = exports.__ppapi_alloc(64);
    const got = [];
    for (;;) {
      const [n] = await l.read(loader, mem, buf, 5);
      if (n === 0) break;
      got.push(new TextDecoder().decode(mem.bytes(buf, n)));
    }
    assert.deepEqual(got, ["hello", ", pep", "per"]);
    const b = res.base(loader) + FIELDS;
    assert.equal(h[b + LOAD.RECEIVED], 13);
    assert.equal(h[b + LOAD.TOTAL], 13);
    assert.deepEqual(await l.open(loader, { url: "/again" }), [-11, null], "one load per loader");
    l.close(loader);
    assert.deepEqual(await l.read(loader, mem, buf, 5), [-2, null], "closed");
  } finally {
    srv.close();
  }
});
