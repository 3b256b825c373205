import assert from "node:assert/strict";
import { test } from "node:test";

import { PostedTasks } from "../../src/host/posted.js";

/** A queue over a fake timer: `fire()` runs the due timers in the order they were set. */
function fakeLoop() {
  /** @type {{ f: () => void, ms: number }[]} */
  const timers = [];
  const ran = [];
  const q = new PostedTasks(
    (task) => task(),
    (f, ms) => timers.push({ f, ms }),
  );
  // Runs the timers due within `ms`, in the order they were set; later ones stay.
  const fire = (ms = 0) => {
    const all = timers.splice(0);
    timers.push(...all.filter((t) => t.ms > ms));
    for (const t of all.filter((t) => t.ms <= ms)) t.f();
  };
  return { q, ran, fire, timers };
}

test("a frame's end that fires before the zero timeout still runs after the callback posted first", () => {
  const { q, ran, fire } = fakeLoop();
  q.post(() => ran.push("flush-again (callback)"), 0);
  // The browser runs the animation frame before the timeout (as WebKit does).
  q.now(() => ran.push("flush (callback)"));
  assert.deepEqual(ran, [], "nothing runs inside the call that posted");
  fire();
  assert.deepEqual(ran, ["flush-again (callback)", "flush (callback)"]);
});

test("an event with nothing posted before it runs at once", () => {
  const { q, ran, timers } = fakeLoop();
  q.now(() => ran.push("frame"));
  assert.deepEqual(ran, ["frame"]);
  assert.equal(timers.length, 0);
});

test("tasks posted while the queue runs go after the rest of it, in order", () => {
  const { q, ran, fire } = fakeLoop();
  q.post(() => {
    ran.push("a");
    q.post(() => ran.push("c"), 0);
  }, 0);
  q.post(() => ran.push("b"), 0);
  fire();
  assert.deepEqual(ran, ["a", "b"]);
  fire();
  assert.deepEqual(ran, ["a", "b", "c"]);
});

test("a delayed task joins the queue when its time comes, behind what was posted by then", () => {
  const { q, ran, fire } = fakeLoop();
  q.post(() => ran.push("late"), 10);
  q.post(() => ran.push("soon"), 0);
  fire(0);
  assert.deepEqual(ran, ["soon"]);
  fire(10); // the delay's timer enqueues it
  fire(0); // the queue's own timer runs it
  assert.deepEqual(ran, ["soon", "late"]);
});
