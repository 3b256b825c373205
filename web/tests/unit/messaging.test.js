import assert from "node:assert/strict";
import { test } from "node:test";

import { buildRegistry } from "../../src/host/context.js";
import { InOrder } from "../../src/host/in-order.js";
import { handleMessage, PppFrames } from "../../src/host/ppp.js";
import { LIVE_VARS } from "../../src/host/shared.js";
import { fakeInstance } from "./helpers.js";

// Module memory the fake app uses (below the pages the fake allocator grows).
const TABLE = 512; // its PPP_Messaging;1.0 table: HandleMessage's function index
const HANDLE_MESSAGE = 77;
const SPACE = 1024; // the runtime's space for the PP_Var argument
const KEPT = 2048; // the app's global: the message it keeps
const PREV = 3072; // HandleMessage's local: the message kept before

/**
 * The instance worker's PPP_Messaging delivery (ppp.js handleMessage) into an app that
 * does what fixtures/pepper/keep-message.pnaclasm does, through the host's own PppFrames,
 * PPB_Messaging.PostMessage and PPB_Var.Release: HandleMessage keeps the var it is given,
 * without AddRef, and posts back and releases the message it kept before. Returns what the
 * app posted, the console lines, and the vars alive at the end.
 */
function deliver(messages) {
  const cx = fakeInstance();
  const posted = [];
  const consoleLines = [];
  Object.assign(cx, {
    isMain: true,
    tid: 0,
    instance: 2,
    frames: new PppFrames(cx.mem),
    toPage: (m) => posted.push(m),
    console: (level, text) => consoleLines.push([level, text]),
  });
  const reg = buildRegistry(cx);
  const postMessage = reg.get("PPB_Messaging;1.0", "PostMessage").impl;
  const release = reg.get("PPB_Var;1.0", "Release").impl;
  cx.exports = {
    ...cx.exports,
    // The runtime's entry point: space for the arguments on the stack, filled by the host.
    __ppp_callbuf_ii_v(fn, n, mask, instance, arg) {
      assert.deepEqual([fn, n, mask, arg], [HANDLE_MESSAGE, 16, 2, 0]);
      cx.frames.fill(SPACE, n);
      // HandleMessage(instance, &message).
      cx.mem.write(PREV, cx.mem.bytes(KEPT, 16));
      cx.mem.write(KEPT, cx.mem.bytes(SPACE, 16)); // kept without AddRef
      if (cx.mem.i32(PREV) !== 0) {
        // A message was kept before (its type is not PP_VARTYPE_UNDEFINED).
        postMessage(instance, PREV);
        release(PREV);
      }
      cx.frames.done(SPACE, 0);
    },
  };
  cx.mem.setI32(TABLE, HANDLE_MESSAGE);
  for (const m of messages) handleMessage(cx, TABLE, m);
  return { posted, console: consoleLines, live: cx.h[LIVE_VARS] };
}

test("HandleMessage is given the message's reference: the app can keep it past the call", () => {
  // Long strings, an array buffer and a dictionary: nothing a freed (or reused) var slot
  // could still look like.
  const first = `the first message, longer than any small-string optimisation: ${"0123456789".repeat(4)}`;
  const bytes = Uint8Array.from({ length: 64 }, (_, i) => (3 * i + 1) & 255);
  const dict = { kept: "a dictionary's value, long enough to live on the heap as well", n: 7, list: [1, "two"] };
  const last = "the last message, which the app still keeps at the end";
  const { posted, console, live } = deliver([first, bytes.buffer, dict, last]);
  assert.deepEqual(console, [], "no PostMessage of a dead var");
  assert.equal(posted.length, 3, JSON.stringify(posted));
  assert.deepEqual(posted[0], { t: "message", data: first, seq: 0 });
  assert.equal(posted[1].t, "message");
  assert.ok(posted[1].data instanceof ArrayBuffer, `an array buffer: ${posted[1].data}`);
  assert.deepEqual(new Uint8Array(posted[1].data), bytes);
  assert.deepEqual(posted[2], { t: "message", data: dict, seq: 2 });
  // The app released what it posted; it holds the last message, and nothing else is alive.
  assert.equal(live, 1);
});

test("two threads' messages reach the page's listener in the order they were posted", () => {
  // Both threads' contexts share the host block, as every worker of an instance does; each
  // posts to its own line, and the lines deliver in any order.
  const main = fakeInstance();
  const lines = [[], []];
  const contexts = [main, { ...main }].map((cx, i) => {
    const c = Object.assign(Object.create(Object.getPrototypeOf(cx)), cx, {
      isMain: i === 0,
      tid: i,
      instance: 2,
      toPage: (m) => lines[i].push(m),
      console: () => assert.fail("no console line"),
    });
    return buildRegistry(c).get("PPB_Messaging;1.0", "PostMessage").impl;
  });
  const posts = [0, 1, 1, 0, 1, 0, 0, 1];
  for (const [n, who] of posts.entries()) {
    main.mem.setI32(4096, 3); // PP_VARTYPE_INT32
    main.mem.setI32(4104, n);
    contexts[who](2, 4096);
  }
  // The second thread's line arrives first, all of it, then the main thread's.
  const got = [];
  const page = new InOrder((data) => got.push(data));
  for (const m of [...lines[1], ...lines[0]]) page.arrive(m.seq, m.data);
  assert.deepEqual(got, posts.map((_, n) => n));
  assert.equal(page.waiting.size, 0);
});

test("a numbered item waits for every one before it", () => {
  const got = [];
  const order = new InOrder((x) => got.push(x));
  order.arrive(2, "c");
  order.arrive(1, "b");
  assert.deepEqual(got, [], "0 has not come");
  order.arrive(0, "a");
  assert.deepEqual(got, ["a", "b", "c"]);
  order.arrive(4, "e");
  order.arrive(3, "d");
  assert.deepEqual(got, ["a", "b", "c", "d", "e"]);
});
