// @ts-check
// The main thread's posted tasks: run in the order they were posted, as Chrome's message
// loop ran the plugin's tasks. A completion callback posted at once (EnterBase::SetResult
// for a call that failed) must run before one a later event posts (a frame's end, a
// CallOnMainThread), whatever order the browser fires its own event sources in: WebKit
// runs a worker's animation frame before a zero-delay timeout set earlier.

/** @typedef {(f: () => void, ms: number) => unknown} Timer */

export class PostedTasks {
  /**
   * @param {(task: () => void) => void} run runs one task (the instance worker's guard)
   * @param {Timer} timer
   */
  constructor(run = (task) => task(), timer = (f, ms) => setTimeout(f, ms)) {
    this.run = run;
    // Kept as a closure: a browser's setTimeout called as a method of this object throws.
    this.timer = timer;
    /** @type {(() => void)[]} */
    this.queue = [];
  }

  /** Runs `task` from the event loop after `delay` ms, behind every task posted before it. */
  post(task, delay = 0) {
    if (delay > 0) this.timer(() => this.enqueue(task), delay);
    else this.enqueue(task);
  }

  /**
   * Runs `task` now if nothing posted is waiting, else behind what is: for an event the
   * browser has just fired (a frame), which Chrome would have posted at that moment.
   */
  now(task) {
    if (this.queue.length === 0) this.run(task);
    else this.enqueue(task);
  }

  /** @param {() => void} task */
  enqueue(task) {
    this.queue.push(task);
    if (this.queue.length === 1) this.timer(() => this.drain(), 0);
  }

  drain() {
    // Tasks posted while these run start a queue (and a timer) of their own, so they run
    // after the rest of these, in posting order.
    const tasks = this.queue;
    this.queue = [];
    for (const task of tasks) this.run(task);
  }
}
