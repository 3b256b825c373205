import assert from "node:assert/strict";
import { test } from "node:test";
import { Worker } from "node:worker_threads";

import { createSharedBlock, NEXT_TID, POOL_GEN, SLOT_ASSIGNED, SLOT_EMPTY, SLOT_IDLE } from "../../src/host/shared.js";
import { SLOT_STARTING, slotBase, spawnThread, ThreadPool } from "../../src/host/threads.js";

/** A thread's context as spawnThread sees it: the host block, its requests to the page. */
function fakeThread(isMain) {
  const h = new Int32Array(createSharedBlock());
  h[NEXT_TID] = 1;
  const asked = [];
  const said = [];
  return { h, isMain, asked, said, refillThreads: () => asked.push("refill"), console: (level, text) => said.push(text) };
}

test("thread-spawn on the main thread with the pool empty waits for the worker the page starts", async () => {
  const cx = fakeThread(true);
  // The page's new thread worker: 200 ms after spawnThread is called (a flag the test sets just
  // before the call) it marks its slot idle as waitForThread does, and writes down when (an
  // absolute time, so both threads' clocks agree).
  const when = new Float64Array(new SharedArrayBuffer(8));
  const go = new Int32Array(new SharedArrayBuffer(4));
  const w = new Worker(
    `const { workerData: { sab, state, gen, when, go } } = require("node:worker_threads");
     const h = new Int32Array(sab);
     Atomics.wait(go, 0, 0);
     Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
     when[0] = performance.timeOrigin + performance.now();
     Atomics.store(h, state, ${SLOT_IDLE});
     Atomics.add(h, gen, 1);
     Atomics.notify(h, gen);`,
    { eval: true, workerData: { sab: cx.h.buffer, state: slotBase(3), gen: POOL_GEN, when, go } },
  );
  await new Promise((r) => w.once("online", r));
  const called = performance.timeOrigin + performance.now();
  Atomics.store(go, 0, 1);
  Atomics.notify(go, 0);
  const tid = spawnThread(cx, 0x1234);
  const returned = performance.timeOrigin + performance.now();
  await w.terminate();
  assert.equal(tid, 1);
  // Measured against the worker's own mark, not a fixed delay: a loaded machine may start
  // the worker's timer late or hear of it late, but spawnThread must still have waited.
  // (1 ms for the two threads' time origins, which may differ by rounding.)
  assert.ok(when[0] > called + 150, "the worker became idle well after the call");
  assert.ok(returned >= when[0] - 1, `returned ${when[0] - returned} ms before the worker was ready`);
  assert.equal(cx.h[slotBase(3)], SLOT_ASSIGNED);
  assert.equal(cx.h[slotBase(3) + 1], 1, "the slot's tid");
  assert.equal(cx.h[slotBase(3) + 2], 0x1234, "the slot's argument");
  // Asked once while waiting, once more for the worker it took.
  assert.deepEqual(cx.asked, ["refill", "refill"]);
  assert.deepEqual(cx.said, []);
});

test("thread-spawn says why and gives EAGAIN when no worker comes in time", () => {
  const cx = fakeThread(false);
  assert.equal(spawnThread(cx, 0, 50), -6);
  assert.equal(cx.said.length, 1);
  assert.match(cx.said[0], /EAGAIN/);
  assert.equal(cx.h[NEXT_TID], 1, "no thread id used");
});

test("an idle worker is taken at once, and the page is asked to replace it", () => {
  const cx = fakeThread(false);
  cx.h[slotBase(0)] = SLOT_IDLE;
  assert.equal(spawnThread(cx, 7, 0), 1);
  assert.equal(spawnThread(cx, 7, 0), -6, "the pool is empty now");
  assert.deepEqual(cx.asked, ["refill", "refill"]);
});

test("the pool starts workers into empty slots until `target` are idle or starting", () => {
  const h = new Int32Array(createSharedBlock());
  const started = [];
  const pool = new ThreadPool(h, 3, (slot) => {
    started.push(slot);
    return Promise.resolve();
  });
  pool.starts();
  assert.deepEqual(started, [0, 1, 2]);
  assert.deepEqual([0, 1, 2].map((i) => h[slotBase(i)]), [SLOT_STARTING, SLOT_STARTING, SLOT_STARTING]);
  pool.starts();
  assert.deepEqual(started, [0, 1, 2], "nothing more while they start");
  // Two became idle, one took a thread: one more starts, in the first empty slot.
  h[slotBase(0)] = SLOT_IDLE;
  h[slotBase(1)] = SLOT_ASSIGNED;
  h[slotBase(2)] = SLOT_IDLE;
  pool.starts();
  assert.deepEqual(started, [0, 1, 2, 3]);
  // A thread ended: its slot is empty again and may take a new worker.
  h[slotBase(1)] = SLOT_EMPTY;
  h[slotBase(0)] = SLOT_ASSIGNED;
  pool.starts();
  assert.deepEqual(started, [0, 1, 2, 3, 1]);
});
