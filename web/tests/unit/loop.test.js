import assert from "node:assert/strict";
import { test } from "node:test";

import { buildRegistry } from "../../src/host/context.js";
import { createMainLoop, LOOP, loopAt, post } from "../../src/host/ppb/message_loop.js";
import { MAIN_LOOP } from "../../src/host/shared.js";
import { fakeInstance } from "./helpers.js";

/** A thread's context over a fake instance: the PPB functions as a module thread calls them. */
function thread(tid) {
  const cx = fakeInstance();
  Object.assign(cx, {
    isMain: false,
    tid,
    instance: 2,
    currentLoop: 0,
    calls: [],
    mainLoop: () => Atomics.load(cx.h, MAIN_LOOP),
    runCallback: (f, ud, r) => cx.calls.push([f, ud, r]),
    callOnMainThread: (f, ud, r, d) => cx.calls.push(["main", f, ud, r, d]),
    releaseResource: (r) => cx.res.release(r),
  });
  createMainLoop(cx);
  const reg = buildRegistry(cx);
  const fn = (name) => reg.get("PPB_MessageLoop;1.0", name).impl;
  return { cx, fn };
}

function callback(cx, func, ud) {
  const p = 4096;
  cx.mem.setI32(p, func);
  cx.mem.setI32(p + 4, ud);
  cx.mem.setI32(p + 8, 0);
  return p;
}

test("a thread's loop runs posted work in due order until PostQuit", () => {
  const { cx, fn } = thread(3);
  const loop = fn("Create")(2);
  assert.ok(loop > 0);
  assert.equal(fn("GetCurrent")(), 0, "no loop attached yet");
  // Work posted before the loop is attached waits for it.
  assert.equal(fn("PostWork")(loop, callback(cx, 11, 1), 30n), 0);
  assert.equal(fn("PostWork")(loop, callback(cx, 12, 2), 0n), 0);
  assert.equal(fn("Run")(loop), -52, "not this thread's loop");
  assert.equal(fn("AttachToCurrentThread")(loop), 0);
  assert.equal(fn("AttachToCurrentThread")(loop), -11, "a thread has one loop");
  assert.equal(fn("GetCurrent")(), loop);
  // The callback of the delayed item quits the loop once both ran.
  const quitAfter = cx.runCallback;
  cx.runCallback = (f, ud, r) => {
    quitAfter(f, ud, r);
    if (f === 11) fn("PostQuit")(loop, 0);
  };
  const t0 = performance.now();
  assert.equal(fn("Run")(loop), 0);
  assert.ok(performance.now() - t0 >= 25, "the delayed item waited its turn");
  assert.deepEqual(cx.calls, [
    [12, 2, 0],
    [11, 1, 0],
  ]);
  assert.equal(cx.h[loopAt(cx, loop) + LOOP.QLEN], 0);
});

test("work for the main loop goes to the main thread; the main loop cannot be quit", () => {
  const { cx, fn } = thread(1);
  const main = fn("GetForMainThread")();
  assert.equal(main, cx.mainLoop());
  assert.equal(fn("PostWork")(main, callback(cx, 7, 8), 5n), 0);
  assert.deepEqual(cx.calls, [["main", 7, 8, 0, 5]]);
  assert.equal(fn("PostQuit")(main, 0), -52);
  assert.equal(fn("PostWork")(main, callback(cx, 0, 0), 0n), -4, "a NULL callback");
  assert.equal(fn("PostWork")(999, callback(cx, 1, 0), 0n), -5);
});

test("a destroyed loop takes no more work, and its queue grows as needed", () => {
  const { cx, fn } = thread(2);
  const loop = fn("Create")(2);
  for (let i = 0; i < 100; i++) assert.ok(post(cx, loop, 100 + i, i, 0, 0));
  assert.equal(cx.h[loopAt(cx, loop) + LOOP.QLEN], 100);
  assert.equal(fn("PostQuit")(loop, 1), 0);
  assert.equal(fn("PostWork")(loop, callback(cx, 1, 0), 0n), -2);
});

test("from the main thread: its own loop is current but the browser's to run; another is not current", () => {
  const { cx, fn } = thread(0);
  cx.isMain = true;
  const main = cx.mainLoop();
  const other = fn("Create")(2);
  // Chrome's MessageLoopResource::Run checks "current on this thread" before "the main loop".
  assert.equal(fn("Run")(main), -11, "PP_ERROR_INPROGRESS: the main loop is current here");
  assert.equal(fn("Run")(other), -52, "PP_ERROR_WRONG_THREAD: attached to no thread");
  assert.equal(fn("AttachToCurrentThread")(other), -11, "the main thread has its loop");
});

test("a thread cannot take the main thread's loop: attaching it is PP_ERROR_INPROGRESS, its own still attaches", () => {
  const { cx, fn } = thread(4);
  assert.equal(fn("AttachToCurrentThread")(cx.mainLoop()), -11);
  assert.equal(fn("GetCurrent")(), 0, "nothing attached");
  const own = fn("Create")(2);
  assert.equal(fn("AttachToCurrentThread")(own), 0);
  assert.equal(fn("Run")(cx.mainLoop()), -52, "PP_ERROR_WRONG_THREAD: not current here");
});
