// The message protocol between the page and the host's workers (src/host/protocol.js):
// no source names a message kind by a string literal, and every receiver reports a kind
// its channel does not carry instead of dropping it.

import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { CHANNELS, FROM_IO, FROM_IO_PORT, IO_OP, REPLY_TO, TO_AUDIO_WORKLET, TO_INSTANCE, TO_IO, TO_IO_PORT, TO_PAGE } from "../../src/host/protocol.js";
import { fakeEmbedPage } from "./helpers.js";

/** Every kind any channel carries, and every reply target. */
const KINDS = new Set([...Object.values(CHANNELS).flatMap((k) => Object.values(k)), ...Object.values(REPLY_TO)]);

/**
 * The places in `text` that write a message kind as a literal: a `t:` tag, a comparison
 * of `.t`, `.op` or `.to`, a `case` of a protocol kind, an IO request's op, a plain
 * string posted, a reply target.
 */
function kindLiterals(text) {
  const found = [];
  const patterns = [
    /\bt:\s*["'`][^"'`]*["'`]/g,
    /\.(t|op|to)\s*[!=]==?\s*["'`]([^"'`]*)["'`]/g,
    /\bcase\s+["'`]([^"'`]*)["'`]\s*:/g,
    /\.(?:io|ioTell|ioAsync)\((?:\w+,\s*)?["'`][^"'`]*["'`]/g,
    /postMessage\(\s*["'`][^"'`]*["'`]/g,
    /\bto:\s*["'`][^"'`]*["'`]/g,
  ];
  for (const [i, re] of patterns.entries()) {
    for (const m of text.matchAll(re)) {
      // A `case` or an `op` is a kind only if it names one (a DOMException's name, a
      // typeof, a Graphics2D operation are not); any literal compared with `t` is.
      if (i === 1 && m[1] !== "t" && !KINDS.has(m[2])) continue;
      if (i === 2 && !KINDS.has(m[1])) continue;
      found.push(m[0]);
    }
  }
  return found;
}

test("the scan finds a kind written as a literal", () => {
  assert.deepEqual(kindLiterals('toPage({ t: "load" });'), ['t: "load"']);
  assert.deepEqual(kindLiterals('if (m.t === "ready") go();'), ['.t === "ready"']);
  assert.deepEqual(kindLiterals('if (q.op === "ioRead" || g.op === "paint") go();'), ['.op === "ioRead"']);
  assert.deepEqual(kindLiterals('switch (m.t) { case "spawn": break; case "boolean": break; }'), ['case "spawn":']);
  assert.deepEqual(kindLiterals('cx.io(cb, "ioRead", [res]); cx.ioTell("urlClose", [res]);'), ['.io(cb, "ioRead"', '.ioTell("urlClose"']);
  assert.deepEqual(kindLiterals('node.port.postMessage("stop"); x = { reply: { to: "cell" } };'), ['postMessage("stop"', 'to: "cell"']);
  assert.deepEqual(kindLiterals("toPage({ t: TO_PAGE.LOAD }); switch (m.t) { case TO_PAGE.SPAWN: }"), []);
});

test("no source but protocol.js writes a message kind as a string literal", () => {
  const root = new URL("../../src/", import.meta.url);
  const found = [];
  for (const name of readdirSync(root, { recursive: true })) {
    const file = String(name);
    if (!file.endsWith(".js") || file === "host/protocol.js") continue;
    const text = readFileSync(new URL(file, root), "utf8");
    // Comments may name a kind ("the page's `threads-ready`").
    const code = text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/(^|[^:"'`\\])\/\/.*$/gm, "$1");
    for (const lit of kindLiterals(code)) found.push(`${file}: ${lit}`);
  }
  assert.deepEqual(found, []);
});

test("each channel's kinds are frozen and distinct", () => {
  for (const [channel, kinds] of Object.entries(CHANNELS)) {
    assert.ok(Object.isFrozen(kinds), channel);
    const values = Object.values(kinds);
    assert.equal(new Set(values).size, values.length, `${channel}: two names for one kind`);
  }
});

/** Runs `f` with console.error captured: the lines it printed. */
async function errorsOf(f) {
  const lines = [];
  const original = console.error;
  console.error = (...a) => lines.push(a.join(" "));
  try {
    await f();
  } finally {
    console.error = original;
  }
  return lines;
}

/** Asserts `f` reports kind "no-such-kind" on `channel`, once. */
async function rejects(channel, f) {
  const lines = await errorsOf(f);
  assert.equal(lines.length, 1, `${channel}: ${JSON.stringify(lines)}`);
  assert.match(lines[0], new RegExp(`${channel}: a message of unknown kind "no-such-kind"`));
}

// The workers set `self.onmessage` when loaded; here `self` is a stand-in that keeps what
// they post.
const posted = [];
globalThis.self = /** @type {any} */ ({ postMessage: (m) => posted.push(m), location: { href: "http://127.0.0.1/" } });
const bogus = { t: "no-such-kind" };

test("the instance worker reports an unknown kind on each of its channels", async () => {
  const iw = await import("../../src/host/instance-worker.js");
  await rejects("page -> instance worker", () => iw.onPageMessage(bogus));
  await rejects("page -> instance worker", () => self.onmessage(/** @type {any} */ ({ data: bogus })));
  await rejects("module thread -> main module thread", () => iw.onThreadMessage(bogus));
  await rejects("IO worker -> instance worker", () => iw.onIoMessage(bogus, () => assert.fail("not ready")));
  await rejects("IO worker -> module thread", () => iw.onIoAnswer(bogus));
  // A known kind is no error: the IO worker's "ready" resolves its start.
  let ready = false;
  assert.deepEqual(await errorsOf(() => iw.onIoMessage({ t: FROM_IO.READY }, () => (ready = true))), []);
  assert.ok(ready);
  // A thread worker's port, given by the page: what comes on it is checked too.
  const port = /** @type {any} */ ({});
  iw.onPageMessage({ t: TO_INSTANCE.THREAD_PORT, port });
  await rejects("module thread -> main module thread", () => port.onmessage({ data: bogus }));
});

test("the IO worker reports an unknown kind and answers an unknown op with FAILED", async () => {
  const io = await import("../../src/host/io-worker.js");
  await rejects("instance worker -> IO worker", () => io.onParentMessage(bogus));
  await rejects("instance worker -> IO worker", () => self.onmessage(/** @type {any} */ ({ data: bogus })));
  const answers = [];
  const port = /** @type {any} */ ({ postMessage: (m) => answers.push(m) });
  await rejects("module thread -> IO worker", () => io.onPortMessage(port, bogus));
  const lines = await errorsOf(() => io.answer(port, { t: TO_IO_PORT.REQUEST, id: 7, op: "noSuchOp", a: [], reply: { to: REPLY_TO.PORT } }));
  assert.equal(lines.length, 1);
  assert.match(lines[0], /IO request op: a message of unknown kind "noSuchOp"/);
  assert.deepEqual(answers, [{ t: FROM_IO_PORT.IO, id: 7, r: -2, addr: 0, len: 0 }]);
  // The port the instance worker gives is checked the same way.
  const given = /** @type {any} */ ({});
  await io.onParentMessage({ t: TO_IO.PORT, port: given });
  await rejects("module thread -> IO worker", () => given.onmessage({ data: bogus }));
  assert.ok(Object.values(IO_OP).includes("ioRead"));
});

test("a thread worker reports anything but its init", async () => {
  await import("../../src/host/thread-worker.js");
  await rejects("page -> thread worker", () => self.onmessage(/** @type {any} */ ({ data: bogus })));
});

test("the page reports an unknown kind from the instance worker and from a thread worker", async () => {
  fakeEmbedPage();
  const { Instance } = await import("../../src/embed.js");
  const page = /** @type {any} */ ({ el: {}, ended: false, onMessage: Instance.prototype.onMessage });
  await rejects("host worker -> page", () => Instance.prototype.onMessage.call(page, bogus));
  await rejects("thread worker -> page", () => Instance.prototype.onThreadMessage.call(page, "thread 1", bogus, () => assert.fail("not ready")));
  // A known kind is no error.
  const info = { missing: [] };
  assert.deepEqual(await errorsOf(() => Instance.prototype.onMessage.call({ ...page, info }, { t: TO_PAGE.CREATED, ok: true })), []);
  assert.equal(info.didCreate, true);
});

test("the audio worklet reports a message other than stop", async () => {
  /** @type {any} */
  let processor = null;
  /** @type {any} */ (globalThis).AudioWorkletProcessor = /** @type {any} */ (
    class {
      port = /** @type {any} */ ({});
    }
  );
  globalThis.registerProcessor = /** @type {any} */ ((_name, C) => (processor = C));
  await import("../../src/audio-worklet.js");
  const p = new processor({ processorOptions: { memory: new SharedArrayBuffer(64), ring: 0 } });
  await rejects("page -> audio worklet", () => p.port.onmessage({ data: "no-such-kind" }));
  p.port.onmessage({ data: TO_AUDIO_WORKLET.STOP });
  assert.equal(p.stopped, true);
});
