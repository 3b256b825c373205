// Module threads (wasi-threads `thread-spawn`). A worker cannot be started and waited for
// synchronously, so a pool of thread workers that have already instantiated the module
// sleep in Atomics.wait on their slot in the host block; `thread-spawn` hands a slot its
// (tid, arg) and wakes it, from any thread, with no event loop involved. The page keeps
// the pool full (ThreadPool, in embed.js), from its own event loop, which no module code
// ever holds: a module thread, the main one included, may start threads while the main
// module thread is busy or blocked in a call (docs/JS-HOST.md, "Threads are pooled").

import { NEXT_TID, POOL, POOL_GEN, POOL_SLOTS, SLOT_ASSIGNED, SLOT_EMPTY, SLOT_IDLE } from "./shared.js";

export const SLOT_STARTING = 3;
const STATE = 0;
const TID = 1;
const ARG = 2;

export function slotBase(i) {
  return POOL + 4 * i;
}

const EAGAIN = 6;

/** How long `thread-spawn` waits for the page to start a thread worker, in ms. */
export const SPAWN_WAIT_MS = 10000;

/**
 * `wasi.thread-spawn(arg)`: the new thread's id, or a negative errno. Any thread, the
 * main one too, may wait here for the page to refill an empty pool: the page starts the
 * worker without this thread's event loop.
 */
export function spawnThread(cx, arg, waitMs = SPAWN_WAIT_MS) {
  const h = cx.h;
  const deadline = performance.now() + waitMs;
  let asked = false;
  for (;;) {
    for (let i = 0; i < POOL_SLOTS; i++) {
      const b = slotBase(i);
      if (Atomics.compareExchange(h, b + STATE, SLOT_IDLE, SLOT_ASSIGNED) === SLOT_IDLE) {
        const tid = Atomics.add(h, NEXT_TID, 1);
        Atomics.store(h, b + TID, tid);
        Atomics.store(h, b + ARG, arg);
        Atomics.notify(h, b + STATE, 1);
        cx.refillThreads();
        return tid;
      }
    }
    // Asked once per call: the page starts what is missing whenever it reads a request.
    if (!asked) cx.refillThreads();
    asked = true;
    const left = deadline - performance.now();
    if (left <= 0) {
      cx.console(
        2,
        `a thread could not be started (EAGAIN): no thread worker became ready in ${waitMs / 1000} s. ` +
          `The page starts one whenever a thread takes one from the pool, so it is either busy or ` +
          `cannot start workers, or ${POOL_SLOTS} threads are running (the most this host runs at once)`,
      );
      return -EAGAIN;
    }
    const gen = Atomics.load(h, POOL_GEN);
    Atomics.wait(h, POOL_GEN, gen, Math.min(left, 100));
  }
}

/**
 * Thread worker: marks its slot idle and sleeps until a thread is given; {tid, arg}.
 * @param {Int32Array} h the host block
 */
export function waitForThread(h, i) {
  const b = slotBase(i);
  Atomics.store(h, b + STATE, SLOT_IDLE);
  Atomics.add(h, POOL_GEN, 1);
  Atomics.notify(h, POOL_GEN);
  while (Atomics.load(h, b + STATE) === SLOT_IDLE) Atomics.wait(h, b + STATE, SLOT_IDLE);
  return { tid: Atomics.load(h, b + TID), arg: Atomics.load(h, b + ARG) };
}

/** Thread worker: its thread ended; the slot may take a new worker. */
export function releaseSlot(h, i) {
  Atomics.store(h, slotBase(i) + STATE, SLOT_EMPTY);
}

/** The page's side: keeps `target` workers idle or starting. */
export class ThreadPool {
  /** @param {Int32Array} h the host block */
  constructor(h, target, startWorker) {
    this.h = h;
    this.target = Math.min(target, POOL_SLOTS);
    this.startWorker = startWorker; // (slot) => Promise resolved when it is idle
  }

  counts() {
    let ready = 0;
    let starting = 0;
    for (let i = 0; i < POOL_SLOTS; i++) {
      const s = Atomics.load(this.h, slotBase(i) + STATE);
      if (s === SLOT_IDLE) ready++;
      else if (s === SLOT_STARTING) starting++;
    }
    return { ready, starting };
  }

  /** Starts workers until `target` are idle or starting: a promise per worker started, resolved when it is idle. */
  starts() {
    const { ready, starting } = this.counts();
    let want = this.target - ready - starting;
    const started = [];
    for (let i = 0; i < POOL_SLOTS && want > 0; i++) {
      const b = slotBase(i);
      if (Atomics.compareExchange(this.h, b + STATE, SLOT_EMPTY, SLOT_STARTING) !== SLOT_EMPTY) continue;
      started.push(this.startWorker(i));
      want--;
    }
    return started;
  }
}
