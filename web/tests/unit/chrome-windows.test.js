import assert from "node:assert/strict";
import { test } from "node:test";

import { placeWindow, readOptions, TITLE_HEIGHT, withRemembered } from "../../src/chrome/windows.js";

const tab = { width: 1280, height: 700 };

test("the first window fills the tab when it asks for no size, or more than the tab has", () => {
  assert.deepEqual(placeWindow({}, tab, 0), { left: 0, top: 0, width: 1280, height: 700, filled: true, th: TITLE_HEIGHT });
  // iguana: 1024×800, no frame: taller than the tab.
  assert.deepEqual(placeWindow({ width: 1024, height: 800, frame: "none" }, tab, 0), { left: 0, top: 0, width: 1280, height: 700, filled: true, th: 0 });
  assert.equal(placeWindow({ state: "maximized", innerBounds: { width: 300, height: 200 } }, tab, 0).filled, true);
});

test("a first window that asks for less gets its size, centred", () => {
  const p = placeWindow({ innerBounds: { width: 400, height: 300 } }, tab, 0);
  assert.deepEqual(p, { width: 400, height: 300 + TITLE_HEIGHT, left: 440, top: Math.floor((700 - 328) / 2), filled: false, th: TITLE_HEIGHT });
  const o = placeWindow({ outerBounds: { width: 400, height: 300 } }, tab, 0);
  assert.deepEqual([o.width, o.height], [400, 300]);
});

test("a filling window keeps to its maximum size", () => {
  const p = placeWindow({ innerBounds: { maxWidth: 800 } }, tab, 0);
  assert.deepEqual([p.left, p.width, p.height, p.filled], [240, 800, 700, false]);
});

test("later windows: at their left/top inside the tab, else cascaded", () => {
  const a = placeWindow({ bounds: { left: 50, top: 60, width: 300, height: 200 } }, tab, 1);
  assert.deepEqual([a.left, a.top, a.width, a.height], [50, 60 - TITLE_HEIGHT, 300, 200 + TITLE_HEIGHT], "the content at 60, under the title bar");
  const b = placeWindow({ width: 300, height: 200, left: 5000, top: 10 }, tab, 1);
  assert.equal(b.left, 1280 - 300);
  const c1 = placeWindow({ innerBounds: { width: 300, height: 200 } }, tab, 1);
  const c2 = placeWindow({ innerBounds: { width: 300, height: 200 } }, tab, 2);
  assert.equal(c2.left - c1.left, 28);
  assert.equal(c2.top - c1.top, 28);
  const huge = placeWindow({ innerBounds: { width: 5000, height: 5000 } }, tab, 1);
  assert.deepEqual([huge.width, huge.height, huge.left, huge.top], [1280, 700, 0, 0]);
});

test("options: deprecated width/height/bounds are inner; outer figures win; frame none has no title bar", () => {
  const o = readOptions({ width: 10, height: 20, minWidth: 5, bounds: { left: 1 }, outerBounds: { top: 7 } });
  assert.deepEqual([o.width, o.height, o.left, o.top, o.minWidth, o.th], [10, 20 + TITLE_HEIGHT, 1, 7, 5, TITLE_HEIGHT]);
  assert.equal(readOptions({ frame: { type: "none" } }).th, 0);
  assert.equal(readOptions({ resizable: false }).resizable, false);
});

test("a window id seen before gets its remembered bounds, not the ones asked for", () => {
  const opts = { id: "main", innerBounds: { width: 300, height: 200, minWidth: 100 }, frame: "chrome" };
  const r = withRemembered(opts, { left: 40, top: 50, width: 500, height: 400 });
  assert.deepEqual(r.outerBounds, { left: 40, top: 50, width: 500, height: 400, minWidth: 100 });
  assert.equal(r.innerBounds, undefined);
  const p = placeWindow(r, tab, 1);
  assert.deepEqual([p.left, p.top, p.width, p.height], [40, 50, 500, 400]);
  assert.equal(withRemembered(opts, null), opts);
  // Remembered bigger than the tab: the first window fills it.
  assert.equal(placeWindow(withRemembered(opts, { left: 0, top: 0, width: 3000, height: 2000 }), tab, 0).filled, true);
});
