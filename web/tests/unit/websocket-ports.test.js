import assert from "node:assert/strict";
import { test } from "node:test";

import { BAD_PORTS, Sockets } from "../../src/host/io/websocket.js";

const BADARGUMENT = -4;

/** Sockets over a fake host block, with the URLs it opened and what it told the console. */
function sockets(map = (u) => u) {
  const opened = [];
  globalThis.WebSocket = /** @type {any} */ (class {
    constructor(url) {
      opened.push(url);
    }
  }); // a fake: only what Sockets calls
  const notes = [];
  const h = new Int32Array(new SharedArrayBuffer(1024));
  const res = { base: () => 0 };
  return { s: new Sockets(h, res, map, (t) => notes.push(t)), opened, notes };
}

test("a bad port is refused before the browser is asked, and said once", () => {
  const { s, opened, notes } = sockets();
  assert.deepEqual(s.connect(1, "ws://127.0.0.1:9/a", []), [BADARGUMENT, null]);
  assert.deepEqual(s.connect(2, "ws://127.0.0.1:9/b", []), [BADARGUMENT, null]);
  assert.deepEqual(opened, []);
  assert.equal(notes.length, 1);
  assert.match(notes[0], /ws:\/\/127\.0\.0\.1:9\/a .*port 9/);
});

test("both the app's port (Chrome's rule) and the mapped one are checked", () => {
  const { s, opened } = sockets((u) => u.replace("ws://localhost:8081/", "ws://127.0.0.1:9/"));
  assert.deepEqual(s.connect(1, "ws://localhost:8081/prj2/websocket/a", []), [BADARGUMENT, null]);
  assert.deepEqual(opened, []);
  const other = sockets((u) => u.replace("ws://localhost:9/", "ws://127.0.0.1:8081/"));
  assert.deepEqual(other.s.connect(1, "ws://localhost:9/x", []), [BADARGUMENT, null], "Chrome refused the app's own bad port");
  assert.deepEqual(other.opened, []);
  const fine = sockets((u) => u.replace("ws://localhost:8081/", "ws://127.0.0.1:8082/"));
  assert.ok(fine.s.connect(1, "ws://localhost:8081/x", []) instanceof Promise, "allowed ports are connected");
  assert.deepEqual(fine.opened, ["ws://127.0.0.1:8082/x"]);
});

test("default and ordinary ports are not refused; a URL that does not parse is a bad argument", () => {
  assert.ok(!BAD_PORTS.has(0) && !BAD_PORTS.has(80) && !BAD_PORTS.has(443) && !BAD_PORTS.has(8081));
  const { s, opened } = sockets();
  assert.ok(s.connect(1, "ws://example.test/", []) instanceof Promise);
  assert.deepEqual(opened, ["ws://example.test/"]);
  assert.deepEqual(s.connect(2, "not a url", []), [BADARGUMENT, null]);
});
