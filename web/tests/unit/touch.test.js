import assert from "node:assert/strict";
import { test } from "node:test";

import { createEvent, freeEvent, register as registerInput } from "../../src/host/ppb/input.js";
import { register } from "../../src/host/ppb/touch_ime.js";
import { fakeInstance, registered } from "./helpers.js";

function events() {
  const inst = fakeInstance();
  const cx = { ...inst, instance: 2 };
  return { ...inst, cx, f: registered(cx, registerInput, register) };
}

test("touch events: created by the app, points added and read by index and id", () => {
  const { f, mem, exports } = events();
  const T = (n) => f("PPB_TouchInputEvent;1.4", n);
  assert.equal(T("Create")(2, 2, 1.5, 0), 0, "not a touch type");
  const e = T("Create")(2, 15, 1.5, 4);
  assert.ok(e > 0);
  assert.equal(f("PPB_InputEvent;1.0", "GetType")(e), 15);
  assert.equal(f("PPB_InputEvent;1.0", "GetModifiers")(e), 4);
  const p = exports.__ppapi_alloc(256);
  mem.setI32(p, 42);
  [10, 20, 1, 2, 0.5, 0.75].forEach((v, k) => mem.setF32(p + 4 + 4 * k, v));
  T("AddTouchPoint")(e, 1, p);
  mem.setI32(p, 43);
  T("AddTouchPoint")(e, 1, p);
  assert.deepEqual([T("GetTouchCount")(e, 0), T("GetTouchCount")(e, 1), T("GetTouchCount")(e, 3)], [0, 2, 0]);
  T("GetTouchByIndex")(p + 64, e, 1, 1);
  assert.equal(mem.i32(p + 64), 43);
  T("GetTouchById")(p + 64, e, 1, 42);
  assert.deepEqual([mem.i32(p + 64), new DataView(mem.buffer).getFloat32(p + 68, true)], [42, 10]);
  T("GetTouchById")(p + 64, e, 1, 99);
  assert.deepEqual(Array.from(mem.bytes(p + 64, 28)), new Array(28).fill(0), "no such point: zeros");
  assert.equal(T("IsTouchInputEvent")(e), 1);
});

test("a touch from the page keeps its three lists, and its block is freed with it", () => {
  const { f, cx, res, exports, mem } = events();
  const e = createEvent(cx, { type: 16, time: 2, touches: [[1, 5, 6, 0, 0, 0, 1, 0.25, 0]], changed: [[1, 5, 6]], targets: [] });
  const T = (n) => f("PPB_TouchInputEvent;1.4", n);
  assert.deepEqual([T("GetTouchCount")(e, 0), T("GetTouchCount")(e, 1), T("GetTouchCount")(e, 2)], [1, 1, 0]);
  const out = exports.__ppapi_alloc(64);
  T("GetTouchTiltByIndex")(out, e, 0, 0);
  assert.equal(new DataView(mem.buffer).getFloat32(out, true), 0.25);
  const gone = res.release(e);
  const before = cx.h.slice(32, 44).join();
  freeEvent(cx, gone.fields);
  assert.notEqual(cx.h.slice(32, 44).join(), before, "the block went back to the heap's free lists");
});

test("IME events keep text, segments, target and selection", () => {
  const { f, vars, mem, exports } = events();
  const I = (n) => f("PPB_IMEInputEvent;1.0", n);
  const p = exports.__ppapi_alloc(256);
  vars.write(p, vars.fromJS("かな漢字"));
  [0, 2, 4].forEach((v, k) => mem.setI32(p + 32 + 4 * k, v));
  assert.equal(I("Create")(2, 15, 0, p, 2, p + 32, 1, 2, 4), 0, "not an IME type");
  const e = I("Create")(2, 12, 0, p, 2, p + 32, 1, 2, 4);
  assert.equal(I("IsIMEInputEvent")(e), 1);
  I("GetText")(p + 64, e);
  assert.equal(vars.toJS(vars.read(p + 64)), "かな漢字");
  assert.deepEqual([I("GetSegmentNumber")(e), I("GetSegmentOffset")(e, 1), I("GetSegmentOffset")(e, 2), I("GetSegmentOffset")(e, 3), I("GetTargetSegment")(e)], [2, 2, 4, 0, 1]);
  I("GetSelection")(e, p + 96, p + 100);
  assert.deepEqual([mem.i32(p + 96), mem.i32(p + 100)], [2, 4]);
});
