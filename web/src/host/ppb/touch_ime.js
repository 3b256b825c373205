// PPB_TouchInputEvent;1.0/1.4 and PPB_IMEInputEvent;1.0. Their data does not fit an
// event's state words, so it lives in a block of module memory (the shared heap) whose
// address the event keeps; any thread reads it, and freeEvent (input.js) frees it.
//
// Touch block: three u32 counts (touches, changed, target touches), then per list
// MAX_POINTS points of 9 words: id, x, y, radius x, radius y, angle, pressure, tilt x,
// tilt y (floats as f32). IME block: the segment offsets (u32, segment_number + 1 of them).
//
// An IME event from the page (a composition in the page's editable element, embed.js) is
// built as Chrome's renderer built one from the browser's composition: its UTF-16 text
// goes to UTF-8 with every offset, and its segments are the boundaries of its text spans.

import { FIELDS, KIND } from "../resources.js";
import { T } from "../vars.js";
import { EV, TYPE } from "./input.js";
import { OFFERED } from "../contract.js";

export const MAX_POINTS = 32;
const POINT = 36;
export const TOUCH_BYTES = 12 + 3 * MAX_POINTS * POINT;
const MAX_SEGMENTS = 1 << 16;

/** Writes touch lists {touches, changed, targets} of [id, x, y, rx, ry, angle, pressure, tx, ty] at addr. */
export function writeTouches(mem, addr, lists) {
  mem.fill(addr, 0, TOUCH_BYTES);
  [lists.touches, lists.changed, lists.targets].forEach((list, l) => {
    const pts = (list ?? []).slice(0, MAX_POINTS);
    mem.setI32(addr + 4 * l, pts.length);
    pts.forEach((p, k) => {
      const at = addr + 12 + (l * MAX_POINTS + k) * POINT;
      mem.setI32(at, p[0] >>> 0);
      for (let i = 1; i < 9; i++) mem.setF32(at + 4 * i, p[i] ?? 0);
    });
  });
}

const f64 = new Float64Array(1);
const f64i = new Int32Array(f64.buffer);

/** A new input event of `type` with a zeroed block of `bytes` in the shared heap: its id. */
export function createBlockEvent(cx, type, time, modifiers, bytes) {
  const block = cx.vars.locked(() => cx.heap.alloc(bytes));
  cx.mem.fill(block, 0, bytes);
  return cx.vars.locked(() => {
    const id = cx.res.createLocked(KIND.INPUT_EVENT);
    const b = cx.res.base(id) + FIELDS;
    cx.h[b + EV.TYPE] = type;
    cx.h[b + EV.MODIFIERS] = modifiers;
    f64[0] = time;
    cx.h[b + EV.TIME_LO] = f64i[0];
    cx.h[b + EV.TIME_HI] = f64i[1];
    cx.h[b + EV.BLOCK] = block;
    cx.h[b + EV.BLOCK_BYTES] = bytes;
    return id;
  });
}

/** A touch event from the page: {type, time, modifiers, touches, changed, targets}. */
export function createTouch(cx, e) {
  const id = createBlockEvent(cx, e.type, e.time ?? 0, e.modifiers ?? 0, TOUCH_BYTES);
  writeTouches(cx.mem, cx.h[cx.res.base(id) + FIELDS + EV.BLOCK] >>> 0, e);
  return id;
}

/**
 * UTF-8 byte offsets of UTF-16 offsets into `text`: null for one past the end or inside a
 * surrogate pair (Chrome's UTF16ToUTF8AndAdjustOffsets gave npos for those).
 */
export function utf8Offsets(text, offsets) {
  const at = new Map();
  let bytes = 0;
  let u = 0;
  for (const ch of text) {
    at.set(u, bytes);
    const c = ch.codePointAt(0);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    u += ch.length;
  }
  at.set(u, bytes);
  return offsets.map((o) => (Number.isInteger(o) && at.has(o) ? at.get(o) : null));
}

/**
 * An IME event's fields from a composition as the page sees it: `text`, the selection
 * [start, end] and spans [{start, end, thick}] in UTF-16 units. As Chrome: the selection
 * in UTF-8 bytes (the text's end where an offset does not convert); the segment offsets
 * are the distinct span boundaries with 0 and the text's end, ascending; the target
 * segment is the one a thick span starts, or -1.
 */
export function imeFields(text, selection = [text.length, text.length], spans = []) {
  const size = utf8Offsets(text, [text.length])[0];
  const conv = utf8Offsets(text, [selection[0], selection[1], ...spans.flatMap((s) => [s.start, s.end])]);
  const offsets = [...new Set([0, size, ...conv.slice(2).filter((o) => o !== null)])].sort((a, b) => a - b);
  let target = -1;
  for (let i = 0; i < spans.length; i++) {
    const k = spans[i].thick ? offsets.indexOf(conv[2 + 2 * i]) : -1;
    if (conv[2 + 2 * i] !== null && k >= 0) {
      target = k;
      break;
    }
  }
  return { offsets, target, selStart: conv[0] ?? size, selEnd: conv[1] ?? size };
}

/** An IME event from the page: {type, time, text, selection, spans} (imeFields). */
export function createIme(cx, e) {
  const text = typeof e.text === "string" ? e.text : "";
  const f = imeFields(text, e.selection, e.spans);
  const v = cx.vars.fromJS(text);
  const id = createBlockEvent(cx, e.type, e.time ?? 0, 0, 4 * f.offsets.length);
  const b = cx.res.base(id) + FIELDS;
  const block = cx.h[b + EV.BLOCK] >>> 0;
  f.offsets.forEach((o, k) => cx.mem.setI32(block + 4 * k, o));
  cx.h[b + EV.TEXT] = v.v;
  cx.h[b + EV.SEGMENTS] = f.offsets.length - 1;
  cx.h[b + EV.TARGET] = f.target;
  cx.h[b + EV.SEL_START] = f.selStart;
  cx.h[b + EV.SEL_END] = f.selEnd;
  return id;
}

export function register(reg, cx) {
  const isTouch = (t) => t >= TYPE.TOUCHSTART && t <= TYPE.TOUCHCANCEL;
  const isIme = (t) => t >= TYPE.IME_COMPOSITION_START && t <= TYPE.IME_TEXT;
  const at = (res, is) => {
    const b = cx.res.of(res, KIND.INPUT_EVENT);
    return b < 0 || !is(cx.h[b + FIELDS + EV.TYPE]) ? -1 : b + FIELDS;
  };
  const base = (b) => cx.h[b + EV.BLOCK] >>> 0;

  const TI = OFFERED.PPB_TouchInputEvent;
  reg.defAll(TI, "Create", (instance, type, time, modifiers) =>
    instance === cx.instance && isTouch(type) ? createBlockEvent(cx, type, time, modifiers, TOUCH_BYTES) : 0,
  );
  reg.defAll(TI, "AddTouchPoint", (res, list, point) => {
    const b = at(res, isTouch);
    if (b < 0 || list < 0 || list > 2 || point === 0) return;
    const blk = base(b);
    const n = cx.mem.i32(blk + 4 * list);
    if (n >= MAX_POINTS) return;
    const to = blk + 12 + (list * MAX_POINTS + n) * POINT;
    cx.mem.write(to, cx.mem.bytes(point, 28));
    cx.mem.setI32(blk + 4 * list, n + 1);
  });
  reg.defAll(TI, "IsTouchInputEvent", (res) => (at(res, isTouch) >= 0 ? 1 : 0));
  reg.defAll(TI, "GetTouchCount", (res, list) => {
    const b = at(res, isTouch);
    return b < 0 || list < 0 || list > 2 ? 0 : cx.mem.i32(base(b) + 4 * list);
  });
  /** The point's address: by index, or by id; 0 when there is none. */
  const point = (res, list, key, byId) => {
    const b = at(res, isTouch);
    if (b < 0 || list < 0 || list > 2) return 0;
    const blk = base(b);
    const n = cx.mem.i32(blk + 4 * list);
    for (let k = 0; k < n; k++) {
      const p = blk + 12 + (list * MAX_POINTS + k) * POINT;
      if (byId ? cx.mem.u32(p) === key >>> 0 : k === key >>> 0) return p;
    }
    return 0;
  };
  // An absent point reads as zeros, as Chrome returned an empty PP_TouchPoint.
  const out = (ret, p, off, len) => (p ? cx.mem.write(ret, cx.mem.bytes(p + off, len)) : cx.mem.fill(ret, 0, len));
  reg.defAll(TI, "GetTouchByIndex", (ret, res, list, index) => out(ret, point(res, list, index, false), 0, 28));
  reg.defAll(TI, "GetTouchById", (ret, res, list, id) => out(ret, point(res, list, id, true), 0, 28));
  reg.def(TI[1], "GetTouchTiltByIndex", (ret, res, list, index) => out(ret, point(res, list, index, false), 28, 8));
  reg.def(TI[1], "GetTouchTiltById", (ret, res, list, id) => out(ret, point(res, list, id, true), 28, 8));

  const I = "PPB_IMEInputEvent;1.0";
  reg.def(I, "Create", (instance, type, time, textPtr, segments, offsets, target, selStart, selEnd) => {
    segments >>>= 0;
    if (instance !== cx.instance || !isIme(type) || segments > MAX_SEGMENTS) return 0;
    if (segments > 0 && offsets === 0) return 0;
    const text = cx.vars.read(textPtr);
    const id = createBlockEvent(cx, type, time, 0, 4 * (segments + 1));
    const b = cx.res.base(id) + FIELDS;
    if (segments > 0) cx.mem.write(cx.h[b + EV.BLOCK] >>> 0, cx.mem.bytes(offsets, 4 * (segments + 1)));
    if (text.t === T.STRING) {
      cx.vars.addRef(text);
      cx.h[b + EV.TEXT] = text.v;
    }
    cx.h[b + EV.SEGMENTS] = segments;
    cx.h[b + EV.TARGET] = target;
    cx.h[b + EV.SEL_START] = selStart;
    cx.h[b + EV.SEL_END] = selEnd;
    return id;
  });
  reg.def(I, "IsIMEInputEvent", (res) => (at(res, isIme) >= 0 ? 1 : 0));
  reg.def(I, "GetText", (ret, res) => {
    const b = at(res, isIme);
    const v = b >= 0 && cx.h[b + EV.TEXT] ? { t: T.STRING, v: cx.h[b + EV.TEXT] } : null;
    if (v) cx.vars.addRef(v);
    cx.vars.write(ret, v ?? { t: T.UNDEFINED, v: 0 });
  });
  reg.def(I, "GetSegmentNumber", (res) => {
    const b = at(res, isIme);
    return b < 0 ? 0 : cx.h[b + EV.SEGMENTS];
  });
  reg.def(I, "GetSegmentOffset", (res, index) => {
    const b = at(res, isIme);
    if (b < 0 || index >>> 0 > cx.h[b + EV.SEGMENTS] || cx.h[b + EV.SEGMENTS] === 0) return 0;
    return cx.mem.i32(base(b) + 4 * (index >>> 0));
  });
  reg.def(I, "GetTargetSegment", (res) => {
    const b = at(res, isIme);
    return b < 0 ? -1 : cx.h[b + EV.TARGET];
  });
  reg.def(I, "GetSelection", (res, start, end) => {
    const b = at(res, isIme);
    if (start) cx.mem.setI32(start, b < 0 ? 0 : cx.h[b + EV.SEL_START]);
    if (end) cx.mem.setI32(end, b < 0 ? 0 : cx.h[b + EV.SEL_END]);
  });
}
