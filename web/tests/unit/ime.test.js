// IME and text input: the events the page's compositions become (src/ime.js's Composer),
// the IME events built from them in the host (Chrome's UTF-8 offsets and segments), and
// PPB_TextInputController;1.0 (host/ppb/text_input.js), bad input included.

import assert from "node:assert/strict";
import { test } from "node:test";

import { Composer } from "../../src/ime.js";
import { createEvent, freeEvent, register as registerInput } from "../../src/host/ppb/input.js";
import { register as registerText, utf16Offset } from "../../src/host/ppb/text_input.js";
import { imeFields, register as registerIme, utf8Offsets } from "../../src/host/ppb/touch_ime.js";
import { T } from "../../src/host/vars.js";
import { fakeInstance, registered } from "./helpers.js";

function host() {
  const inst = fakeInstance();
  const page = [];
  const warnings = [];
  const cx = { ...inst, instance: 2, toPage: (m) => page.push(m), console: (level, text) => warnings.push([level, text]) };
  return { ...inst, cx, page, warnings, f: registered(cx, registerInput, registerIme, registerText) };
}

test("UTF-16 offsets become UTF-8 byte offsets; one inside a surrogate pair or past the end converts to nothing", () => {
  assert.deepEqual(utf8Offsets("aé日😀", [0, 1, 2, 3, 4, 5, 6]), [0, 1, 3, 6, null, 10, null]);
  assert.deepEqual(utf8Offsets("", [0, 1]), [0, null]);
});

test("IME fields as Chrome built them: segments from span boundaries, the thick span's segment the target", () => {
  // A composition start or end: no text, one offset, no segment, no target.
  assert.deepEqual(imeFields(""), { offsets: [0], target: -1, selStart: 0, selEnd: 0 });
  // Committed text: one segment, the selection at its end.
  assert.deepEqual(imeFields("日本"), { offsets: [0, 6], target: -1, selStart: 6, selEnd: 6 });
  // The first clause selected and thick: two segments, the first the target.
  assert.deepEqual(imeFields("日本語", [0, 1], [{ start: 0, end: 1, thick: true }]), { offsets: [0, 3, 9], target: 0, selStart: 0, selEnd: 3 });
  // A clause in the middle: three segments, the middle one the target.
  assert.deepEqual(imeFields("日本語", [1, 2], [{ start: 1, end: 2, thick: true }]), { offsets: [0, 3, 6, 9], target: 1, selStart: 3, selEnd: 6 });
  // A thin span makes segments but no target.
  assert.deepEqual(imeFields("かな", [2, 2], [{ start: 0, end: 1, thick: false }]), { offsets: [0, 3, 6], target: -1, selStart: 6, selEnd: 6 });
  // An offset inside a surrogate pair: the selection goes to the end, the boundary away.
  assert.deepEqual(imeFields("a😀b", [2, 2], [{ start: 2, end: 3, thick: true }]), { offsets: [0, 5, 6], target: -1, selStart: 6, selEnd: 6 });
});

test("an IME event from the page reads back through PPB_IMEInputEvent, and its text goes with it", () => {
  const { f, cx, vars, mem, exports, res } = host();
  const I = (n) => f("PPB_IMEInputEvent;1.0", n);
  const e = createEvent(cx, { type: 12, time: 3, text: "日本語", selection: [1, 2], spans: [{ start: 1, end: 2, thick: true }] });
  assert.equal(I("IsIMEInputEvent")(e), 1);
  assert.equal(f("PPB_InputEvent;1.0", "GetType")(e), 12);
  assert.equal(f("PPB_InputEvent;1.0", "GetTimeStamp")(e), 3);
  const p = exports.__ppapi_alloc(64);
  I("GetText")(p, e);
  const text = vars.read(p);
  assert.equal(vars.toJS(text), "日本語");
  vars.release(text); // the app's reference
  assert.deepEqual([0, 1, 2, 3, 4].map((k) => I("GetSegmentOffset")(e, k)), [0, 3, 6, 9, 0]);
  assert.deepEqual([I("GetSegmentNumber")(e), I("GetTargetSegment")(e)], [3, 1]);
  I("GetSelection")(e, p + 16, p + 20);
  assert.deepEqual([mem.i32(p + 16), mem.i32(p + 20)], [3, 6]);
  const start = createEvent(cx, { type: 11, time: 3, text: "" });
  I("GetText")(p, start);
  assert.equal(vars.toJS(vars.read(p)), "", "a composition start has an empty string, not undefined");
  assert.deepEqual([I("GetSegmentNumber")(start), I("GetSegmentOffset")(start, 0), I("GetTargetSegment")(start)], [0, 0, -1]);
  const gone = res.release(e);
  freeEvent(cx, gone.fields);
  assert.equal(vars.live(text, T.STRING), -1, "the event's text is freed with it");
});

/** A composer over a log, for a module that asked for `classes`. */
function composer(classes) {
  const log = [];
  const c = new Composer((ev) => log.push(ev), (cls) => classes & cls);
  const short = () => log.splice(0).map((e) => [e.type, e.text, ...(e.type === 12 ? [e.selection, e.spans.length] : []), ...(e.type === 9 ? [e.key] : [])]);
  return { c, short };
}

test("a composition, changed and committed, as an IME-aware app got it from Chrome", () => {
  const { c, short } = composer(16);
  c.start();
  c.update("に", 1, 1, 1);
  c.update("にほ", 2, 2, 1);
  c.update("日本語", 0, 1, 1);
  c.end("日本語", 1);
  assert.deepEqual(short(), [
    [11, ""],
    [12, "に", [1, 1], 0],
    [12, "にほ", [2, 2], 0],
    [12, "日本語", [0, 1], 1],
    [13, "日本語"],
    [14, "日本語"],
  ]);
  // Text committed with no composition (an IME's or a virtual keyboard's): END and TEXT.
  c.inserted("x", 1);
  assert.deepEqual(short(), [[13, "x"], [14, "x"]]);
});

test("a composition emptied, or ended with nothing, ends with an empty COMPOSITION_END once", () => {
  const { c, short } = composer(16 | 2);
  c.start();
  c.update("か", 1, 1, 1);
  c.update("", 0, 0, 1);
  c.end("", 1);
  assert.deepEqual(short(), [[11, ""], [12, "か", [1, 1], 0], [13, ""]]);
  c.start();
  c.update("か", 1, 1, 1);
  c.end("", 1);
  assert.deepEqual(short(), [[11, ""], [12, "か", [1, 1], 0], [13, ""]]);
});

test("the app's CancelCompositionText ends the composition, and the browser's own end of it is dropped", () => {
  const { c, short } = composer(16);
  c.start();
  c.update("さ", 1, 1, 1);
  assert.equal(c.cancel(1), true);
  c.update("さし", 2, 2, 1); // what the browser still says of the cancelled one
  c.end("さし", 1); // a browser that commits it when the element lets it go
  assert.deepEqual(short(), [[11, ""], [12, "さ", [1, 1], 0], [13, ""]]);
  c.start();
  c.update("し", 1, 1, 1);
  assert.deepEqual(short(), [[11, ""], [12, "し", [1, 1], 0]]);
  assert.equal(c.cancel(1), true);
  assert.equal(c.cancel(1), false, "nothing left to cancel");
});

test("an app that did not ask for IME events gets committed text as CHAR events, one per character", () => {
  const { c, short } = composer(2);
  c.start();
  c.update("ね", 1, 1, 1);
  assert.deepEqual(short(), [], "no composition events");
  c.end("ね", 1);
  c.inserted("日😀", 1);
  assert.deepEqual(short(), [[9, "ね", 0x306d], [9, "日", 0x65e5], [9, "😀", 0xd83d]]);
  // An app that asked for neither gets nothing.
  const none = composer(1);
  none.c.end("ね", 1);
  none.c.inserted("x", 1);
  assert.deepEqual(none.short(), []);
});

test("a key press's own text is not committed again (its keydown sent its CHAR)", () => {
  const { c, short } = composer(2 | 16);
  c.keyTyped();
  c.inserted("a", 1);
  assert.deepEqual(short(), []);
  c.keyTyped();
  c.keyReleased();
  c.inserted("b", 1);
  assert.deepEqual(short(), [[13, "b"], [14, "b"]]);
});

test("PPB_TextInputController tells the page, and refuses bad input with a warning", () => {
  const { f, page, warnings, vars, mem, exports } = host();
  const C = (n) => f("PPB_TextInputController;1.0", n);
  C("SetTextInputType")(2, 0);
  C("SetTextInputType")(2, 7);
  C("SetTextInputType")(3, 1); // another instance: nothing
  C("SetTextInputType")(2, 8);
  C("SetTextInputType")(2, -1);
  assert.deepEqual(page.splice(0), [{ t: "text-input", type: 0 }, { t: "text-input", type: 7 }]);
  assert.equal(warnings.splice(0).length, 2);

  const p = exports.__ppapi_alloc(64);
  [10, 20, 2, 16].forEach((v, k) => mem.setI32(p + 4 * k, v));
  C("UpdateCaretPosition")(2, p);
  C("UpdateCaretPosition")(2, 0);
  C("UpdateCaretPosition")(2, 0x7ffffff0); // past the module's memory
  assert.deepEqual(page.splice(0), [{ t: "text-caret", rect: [10, 20, 2, 16] }]);
  assert.match(warnings.splice(0).map((w) => w[1]).join("\n"), /NULL caret[\s\S]*out of bounds/);

  C("CancelCompositionText")(2);
  C("CancelCompositionText")(5);
  assert.deepEqual(page.splice(0), [{ t: "text-cancel" }]);

  vars.write(p, vars.fromJS("héllo"));
  C("UpdateSurroundingText")(2, p, 3, 1); // bytes: after "hé", after "h"
  C("UpdateSurroundingText")(2, p, 2, 100); // inside "é", past the end: the text's end
  vars.write(p + 16, { t: T.INT32, v: 5 });
  C("UpdateSurroundingText")(2, p + 16, 0, 0);
  C("UpdateSurroundingText")(2, 0x7ffffff0, 0, 0);
  vars.write(p + 32, vars.fromJS("x".repeat(64 * 1024 + 1)));
  C("UpdateSurroundingText")(2, p + 32, 0, 0);
  assert.deepEqual(page.splice(0), [
    { t: "text-surrounding", text: "héllo", caret: 2, anchor: 1 },
    { t: "text-surrounding", text: "héllo", caret: 5, anchor: 5 },
  ]);
  assert.equal(warnings.splice(0).length, 3);
});

test("surrounding text offsets: UTF-8 bytes to UTF-16 units", () => {
  const b = new TextEncoder().encode("a😀é");
  assert.deepEqual([0, 1, 2, 5, 6, 7, 8].map((o) => utf16Offset(b, o)), [0, 1, 4, 3, 4, 4, 4]);
});
