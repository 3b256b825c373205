// PPB_InputEvent;1.0 and the event kinds: mouse (1.0, 1.1), wheel, keyboard (1.0, 1.2)
// (touch and IME: touch_ime.js).
// Which classes the app asked for goes to the page (it forwards only those); an event is
// a resource whose state words hold its fields, readable from any thread.

import { FIELDS, KIND } from "../resources.js";
import { T } from "../vars.js";
import { createIme, createTouch } from "./touch_ime.js";
import { OFFERED, PP_INPUTEVENT_TYPE } from "../contract.js";

// State words of an input event (after FIELDS). Wheel events reuse the mouse words.
export const EV = {
  TYPE: 0,
  MODIFIERS: 1,
  TIME_LO: 2,
  TIME_HI: 3,
  BUTTON: 4,
  X: 5,
  Y: 6,
  CLICKS: 7,
  MX: 8,
  MY: 9,
  KEY: 10,
  TEXT: 11, // a string var's slot, or 0
  CODE: 12,
  DX: 4, // wheel: delta and ticks as f32 bits, by-page flag
  DY: 5,
  TX: 6,
  TY: 7,
  PAGE: 8,
  BLOCK: 4, // touch and IME events: their block of module memory (touch_ime.js) and its size
  BLOCK_BYTES: 5,
  SEGMENTS: 6, // IME: segment count, target segment, selection (TEXT as above)
  TARGET: 7,
  SEL_START: 8,
  SEL_END: 9,
};

export const TYPE = PP_INPUTEVENT_TYPE;

const hasBlock = (t) => t >= TYPE.IME_COMPOSITION_START && t <= TYPE.TOUCHCANCEL;

const f64 = new Float64Array(1);
const f64i = new Int32Array(f64.buffer);
const f32 = new Float32Array(1);
const f32i = new Int32Array(f32.buffer);

const isMouse = (t) => (t >= TYPE.MOUSEDOWN && t <= TYPE.MOUSELEAVE) || t === TYPE.CONTEXTMENU;
const isKey = (t) => t >= TYPE.RAWKEYDOWN && t <= TYPE.CHAR;

/**
 * A new event resource from `e` = {type, time (s), modifiers, button, x, y, clicks, mx, my,
 * key, text, code, dx, dy, tx, ty, byPage}.
 */
export function createEvent(cx, e) {
  if (e.type >= TYPE.TOUCHSTART && e.type <= TYPE.TOUCHCANCEL) return createTouch(cx, e);
  if (e.type >= TYPE.IME_COMPOSITION_START && e.type <= TYPE.IME_TEXT) return createIme(cx, e);
  const text = e.text ? cx.vars.fromJS(e.text) : null;
  const code = e.code ? cx.vars.fromJS(e.code) : null;
  return cx.vars.locked(() => {
    const id = cx.res.createLocked(KIND.INPUT_EVENT);
    const b = cx.res.base(id) + FIELDS;
    const h = cx.h;
    h[b + EV.TYPE] = e.type;
    h[b + EV.MODIFIERS] = e.modifiers ?? 0;
    f64[0] = e.time ?? 0;
    h[b + EV.TIME_LO] = f64i[0];
    h[b + EV.TIME_HI] = f64i[1];
    if (e.type === TYPE.WHEEL) {
      for (const [k, v] of [["DX", e.dx], ["DY", e.dy], ["TX", e.tx], ["TY", e.ty]]) {
        f32[0] = v ?? 0;
        h[b + EV[k]] = f32i[0];
      }
      h[b + EV.PAGE] = e.byPage ? 1 : 0;
    } else {
      h[b + EV.BUTTON] = e.button ?? -1;
      h[b + EV.X] = e.x ?? 0;
      h[b + EV.Y] = e.y ?? 0;
      h[b + EV.CLICKS] = e.clicks ?? 0;
      h[b + EV.MX] = e.mx ?? 0;
      h[b + EV.MY] = e.my ?? 0;
      h[b + EV.KEY] = e.key ?? 0;
      h[b + EV.TEXT] = text ? text.v : 0;
      h[b + EV.CODE] = code ? code.v : 0;
    }
    return id;
  });
}

/** Frees what an event held (its text vars, its block), given its state words at release. */
export function freeEvent(cx, fields) {
  if (hasBlock(fields[EV.TYPE])) {
    const block = fields[EV.BLOCK] >>> 0;
    if (block) cx.vars.locked(() => cx.heap.free(block, fields[EV.BLOCK_BYTES]));
    if (fields[EV.TYPE] <= TYPE.IME_TEXT && fields[EV.TEXT]) cx.vars.release({ t: T.STRING, v: fields[EV.TEXT] });
    return;
  }
  if (fields[EV.TYPE] === TYPE.WHEEL) return;
  for (const w of [EV.TEXT, EV.CODE]) if (fields[w]) cx.vars.release({ t: T.STRING, v: fields[w] });
}

export function register(reg, cx) {
  // Touch and IME events (touch_ime.js) are INPUT_EVENTs too: freeEvent frees their blocks.
  reg.onRelease(KIND.INPUT_EVENT, (_res, fields) => freeEvent(cx, fields));
  const I = "PPB_InputEvent;1.0";
  reg.def(I, "RequestInputEvents", (instance, classes) => cx.requestInput(instance, classes, false));
  reg.def(I, "RequestFilteringInputEvents", (instance, classes) =>
    cx.requestInput(instance, classes, true),
  );
  reg.def(I, "ClearInputEventRequest", (instance, classes) => cx.clearInput(instance, classes));
  /** @type {(res: number, is?: (type: number) => boolean) => number} */
  const at = (res, is = () => true) => {
    const b = cx.res.of(res, KIND.INPUT_EVENT);
    return b < 0 || !is(cx.h[b + FIELDS + EV.TYPE]) ? -1 : b + FIELDS;
  };
  const word = (is, w, none = 0) => (res) => {
    const b = at(res, is);
    return b < 0 ? none : cx.h[b + w];
  };
  reg.def(I, "IsInputEvent", (res) => (at(res) >= 0 ? 1 : 0));
  reg.def(I, "GetType", word(undefined, EV.TYPE, -1));
  reg.def(I, "GetTimeStamp", (res) => {
    const b = at(res);
    if (b < 0) return 0;
    f64i[0] = cx.h[b + EV.TIME_LO];
    f64i[1] = cx.h[b + EV.TIME_HI];
    return f64[0];
  });
  reg.def(I, "GetModifiers", word(undefined, EV.MODIFIERS));

  const point = (ret, b, x, y) => {
    cx.mem.setI32(ret, b < 0 ? 0 : cx.h[b + x]);
    cx.mem.setI32(ret + 4, b < 0 ? 0 : cx.h[b + y]);
  };
  const M = OFFERED.PPB_MouseInputEvent;
  const mouseCreate = (instance, type, time, modifiers, button, pos, clicks, movement) => {
    if (instance !== cx.instance || !isMouse(type)) return 0;
    return createEvent(cx, {
      type,
      time,
      modifiers,
      button,
      x: pos ? cx.mem.i32(pos) : 0,
      y: pos ? cx.mem.i32(pos + 4) : 0,
      clicks,
      mx: movement ? cx.mem.i32(movement) : 0,
      my: movement ? cx.mem.i32(movement + 4) : 0,
    });
  };
  reg.def(M[0], "Create", (i, t, time, m, b, p, c) => mouseCreate(i, t, time, m, b, p, c, 0));
  reg.def(M[1], "Create", mouseCreate);
  reg.defAll(M, "IsMouseInputEvent", (res) => (at(res, isMouse) >= 0 ? 1 : 0));
  reg.defAll(M, "GetButton", word(isMouse, EV.BUTTON, -1));
  reg.defAll(M, "GetPosition", (ret, res) => point(ret, at(res, isMouse), EV.X, EV.Y));
  reg.defAll(M, "GetClickCount", word(isMouse, EV.CLICKS));
  reg.def(M[1], "GetMovement", (ret, res) => point(ret, at(res, isMouse), EV.MX, EV.MY));

  const W = "PPB_WheelInputEvent;1.0";
  const isWheel = (t) => t === TYPE.WHEEL;
  const fpoint = (ret, res, x, y) => {
    const b = at(res, isWheel);
    for (const [o, w] of [[0, x], [4, y]]) {
      f32i[0] = b < 0 ? 0 : cx.h[b + w];
      cx.mem.setF32(ret + o, f32[0]);
    }
  };
  reg.def(W, "Create", (instance, time, modifiers, delta, ticks, byPage) => {
    if (instance !== cx.instance) return 0;
    const f = (p, o) => (p ? (cx.mem.check(p + o, 4), cx.mem.dv.getFloat32(p + o, true)) : 0);
    return createEvent(cx, {
      type: TYPE.WHEEL,
      time,
      modifiers,
      dx: f(delta, 0),
      dy: f(delta, 4),
      tx: f(ticks, 0),
      ty: f(ticks, 4),
      byPage,
    });
  });
  reg.def(W, "IsWheelInputEvent", (res) => (at(res, isWheel) >= 0 ? 1 : 0));
  reg.def(W, "GetDelta", (ret, res) => fpoint(ret, res, EV.DX, EV.DY));
  reg.def(W, "GetTicks", (ret, res) => fpoint(ret, res, EV.TX, EV.TY));
  reg.def(W, "GetScrollByPage", word(isWheel, EV.PAGE));

  const K = OFFERED.PPB_KeyboardInputEvent;
  const keyCreate = (instance, type, time, modifiers, key, text, code) => {
    if (instance !== cx.instance || !isKey(type)) return 0;
    const str = (p) => (p ? cx.vars.toJS(cx.vars.read(p)) : undefined);
    const t = str(text);
    const c = str(code);
    return createEvent(cx, {
      type,
      time,
      modifiers,
      key,
      text: typeof t === "string" ? t : undefined,
      code: typeof c === "string" ? c : undefined,
    });
  };
  reg.def(K[0], "Create", (i, t, time, m, k, text) => keyCreate(i, t, time, m, k, text, 0));
  reg.def(K[1], "Create", keyCreate);
  reg.defAll(K, "IsKeyboardInputEvent", (res) => (at(res, isKey) >= 0 ? 1 : 0));
  reg.defAll(K, "GetKeyCode", word(isKey, EV.KEY));
  const strVar = (ret, res, w) => {
    const b = at(res, isKey);
    const slot = b < 0 ? 0 : cx.h[b + w];
    if (slot === 0) return cx.vars.write(ret, { t: T.UNDEFINED, v: 0 });
    const v = { t: T.STRING, v: slot };
    cx.vars.addRef(v);
    cx.vars.write(ret, v);
  };
  reg.defAll(K, "GetCharacterText", (ret, res) => strVar(ret, res, EV.TEXT));
  reg.def(K[1], "GetCode", (ret, res) => strVar(ret, res, EV.CODE));
}
