import assert from "node:assert/strict";
import { test } from "node:test";

import { Alarms } from "../../src/chrome/alarms.js";

/** Timers on a clock the test moves. */
function fakeTime() {
  let now = 1000000;
  let timers = [];
  let n = 0;
  return {
    now: () => now,
    setTimeout: (f, ms) => {
      timers.push({ id: ++n, at: now + ms, f });
      return n;
    },
    clearTimeout: (id) => (timers = timers.filter((t) => t.id !== id)),
    advance(ms) {
      const end = now + ms;
      for (;;) {
        timers.sort((a, b) => a.at - b.at);
        const t = timers[0];
        if (!t || t.at > end) break;
        timers.shift();
        now = t.at;
        t.f();
      }
      now = end;
    },
  };
}

test("an alarm after a delay fires once, at its time", () => {
  const t = fakeTime();
  const fired = [];
  const a = new Alarms({ fire: (al) => fired.push([al.name, t.now()]), ...t });
  a.create("once", { delayInMinutes: 0.5 });
  assert.equal(a.get("once").scheduledTime, 1000000 + 30000);
  t.advance(29999);
  assert.equal(fired.length, 0);
  t.advance(1);
  assert.deepEqual(fired, [["once", 1030000]]);
  assert.equal(a.get("once"), undefined);
});

test("a periodic alarm fires every period; clear stops it", () => {
  const t = fakeTime();
  const fired = [];
  const a = new Alarms({ fire: (al) => fired.push(al.scheduledTime), ...t });
  a.create("tick", { delayInMinutes: 1, periodInMinutes: 2 });
  t.advance(60000 + 2 * 120000);
  assert.deepEqual(fired, [1060000, 1180000, 1300000]);
  assert.deepEqual(a.getAll(), [{ name: "tick", scheduledTime: 1420000, periodInMinutes: 2 }]);
  assert.equal(a.clear("tick"), true);
  t.advance(600000);
  assert.equal(fired.length, 3);
  assert.equal(a.clear("tick"), false);
});

test("when, the unnamed alarm, a name used again, and bad arguments", () => {
  const t = fakeTime();
  const fired = [];
  const a = new Alarms({ fire: (al) => fired.push(al.name), ...t });
  a.create({ when: t.now() + 5000 });
  a.create("x", { delayInMinutes: 10 });
  a.create("x", { delayInMinutes: 1 }); // replaces the first
  t.advance(60000);
  assert.deepEqual(fired, ["", "x"]);
  assert.throws(() => a.create("y", { when: 1, delayInMinutes: 1 }), /both/);
  assert.throws(() => a.create("y", {}), /must be specified/);
  a.create("p", { periodInMinutes: 1 });
  a.create("q", { periodInMinutes: 1 });
  assert.equal(a.clearAll(), true);
  assert.deepEqual(a.getAll(), []);
});

test("the timers are called as plain functions (a browser's setTimeout refuses another this)", () => {
  const t = fakeTime();
  const strict = {
    setTimeout(f, ms) {
      if (this !== undefined && /** @type {unknown} */ (this) !== globalThis) throw new TypeError("Illegal invocation");
      return t.setTimeout(f, ms);
    },
    clearTimeout(id) {
      if (this !== undefined && /** @type {unknown} */ (this) !== globalThis) throw new TypeError("Illegal invocation");
      return t.clearTimeout(id);
    },
  };
  const a = new Alarms({ fire() {}, now: t.now, setTimeout: strict.setTimeout, clearTimeout: strict.clearTimeout });
  a.create("x", { delayInMinutes: 1 });
  assert.equal(a.clear("x"), true);
});
