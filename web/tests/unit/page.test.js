import assert from "node:assert/strict";
import { test } from "node:test";

import { register, sampleGamepads } from "../../src/host/ppb/page.js";
import { KIND } from "../../src/host/resources.js";
import { FULLSCREEN, GAMEPAD, GAMEPAD_ON, SCREEN_H, SCREEN_W } from "../../src/host/shared.js";
import { fakeInstance, registered } from "./helpers.js";

function page() {
  const inst = fakeInstance();
  const sent = [];
  const calls = [];
  const cx = {
    ...inst,
    instance: 2,
    hostSab: inst.h.buffer,
    toPage: (m) => sent.push(m),
    pageCall: (cb, what) => (calls.push([cb, what]), -1),
  };
  return { ...inst, sent, calls, f: registered(cx, register) };
}

test("SetCursor sends the cursor type; a custom one its RGBA pixels and hot spot", () => {
  const { f, sent, res, h, mem, exports } = page();
  const set = f("PPB_MouseCursor;1.0", "SetCursor");
  assert.equal(set(2, 2, 0, 0), 1);
  assert.deepEqual(sent.pop(), { t: "cursor", type: 2 });
  assert.equal(set(3, 2, 0, 0), 0, "another instance");
  assert.equal(set(2, 43, 0, 0), 0, "no such type");
  // A 1x1 BGRA image (the layout of ppb/graphics.js): blue 10, green 20, red 30.
  const img = res.create(KIND.IMAGE_DATA);
  const b = res.base(img) + 2;
  const px = exports.__ppapi_alloc(4);
  mem.write(px, [10, 20, 30, 255]);
  [h[b], h[b + 1], h[b + 2], h[b + 3], h[b + 4]] = [0, 1, 1, 4, px];
  const hot = exports.__ppapi_alloc(8);
  mem.setI32(hot, 0);
  mem.setI32(hot + 4, 0);
  assert.equal(set(2, -1, img, hot), 1);
  const m = sent.pop();
  assert.deepEqual([m.w, m.h, Array.from(m.rgba), m.hx, m.hy], [1, 1, [30, 20, 10, 255], 0, 0]);
  assert.equal(set(2, -1, 999, hot), 0, "no image");
});

test("LockMouse is a page call; UnlockMouse a message", () => {
  const { f, sent, calls } = page();
  assert.equal(f("PPB_MouseLock;1.0", "LockMouse")(2, 64), -1);
  assert.deepEqual(calls, [[64, "lock-mouse"]]);
  assert.equal(f("PPB_MouseLock;1.0", "LockMouse")(3, 64), -4);
  f("PPB_MouseLock;1.0", "UnlockMouse")(2);
  assert.deepEqual(sent, [{ t: "unlock-mouse" }]);
});

test("Fullscreen reads the page's state and refuses a change to the same state", () => {
  const { f, sent, h, mem, exports } = page();
  const F = (n) => f("PPB_Fullscreen;1.0", n);
  assert.equal(F("IsFullscreen")(2), 0);
  assert.equal(F("SetFullscreen")(2, 0), 0, "already not fullscreen");
  assert.equal(F("SetFullscreen")(2, 1), 1);
  assert.deepEqual(sent.pop(), { t: "fullscreen", on: true });
  h[FULLSCREEN] = 1;
  assert.equal(F("IsFullscreen")(2), 1);
  h[SCREEN_W] = 1920;
  h[SCREEN_H] = 1080;
  const size = exports.__ppapi_alloc(8);
  assert.equal(F("GetScreenSize")(2, size), 1);
  assert.deepEqual([mem.i32(size), mem.i32(size + 4)], [1920, 1080]);
});

test("Gamepad.Sample starts the page once and copies a consistent sample", () => {
  const { f, sent, h, mem, exports } = page();
  const out = exports.__ppapi_alloc(2048);
  mem.fill(out, 7, 1896);
  f("PPB_Gamepad;1.0", "Sample")(2, out);
  f("PPB_Gamepad;1.0", "Sample")(2, out);
  assert.equal(sent.filter((m) => m.t === "gamepad-start").length, 1);
  assert.equal(h[GAMEPAD_ON], 1);
  assert.equal(mem.i32(out), 0, "nothing sampled yet: no gamepads");
  // A write in progress (odd sequence) is not read: after 100 tries, no gamepads.
  new DataView(h.buffer).setUint32((GAMEPAD + 2) * 4, 1, true);
  h[GAMEPAD] = 1;
  assert.equal(new DataView(sampleGamepads(h).buffer).getUint32(0, true), 0);
  h[GAMEPAD] = 2;
  assert.equal(new DataView(sampleGamepads(h).buffer).getUint32(0, true), 1);
});
