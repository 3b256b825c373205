// PPB_View;1.0-1.2 and PPB_Instance;1.0. A view is a resource whose state words hold the
// element's rectangle, clip, visibility and scales at the time of DidChangeView.

import { FIELDS, KIND } from "../resources.js";
import { OFFERED } from "../contract.js";

// State words of a view (after FIELDS).
export const VIEW = { X: 0, Y: 1, W: 2, H: 3, CX: 4, CY: 5, CW: 6, CH: 7, FLAGS: 8, DEVICE: 9, CSS: 10, SX: 11, SY: 12 };
export const VISIBLE = 1;
export const PAGE_VISIBLE = 2;
export const FULLSCREEN = 4;

const f32 = new Float32Array(1);
const f32i = new Int32Array(f32.buffer);
function bits(x) {
  f32[0] = x;
  return f32i[0];
}
function fromBits(i) {
  f32i[0] = i;
  return f32[0];
}

/** A view resource for `v` = {rect: [x, y, w, h], clip, visible, pageVisible, fullscreen, deviceScale, cssScale, scroll}. */
export function createView(cx, v) {
  return cx.vars.locked(() => {
    const id = cx.res.createLocked(KIND.VIEW);
    const b = cx.res.base(id) + FIELDS;
    const h = cx.h;
    [h[b + VIEW.X], h[b + VIEW.Y], h[b + VIEW.W], h[b + VIEW.H]] = v.rect;
    [h[b + VIEW.CX], h[b + VIEW.CY], h[b + VIEW.CW], h[b + VIEW.CH]] = v.clip;
    h[b + VIEW.FLAGS] =
      (v.visible ? VISIBLE : 0) | (v.pageVisible ? PAGE_VISIBLE : 0) | (v.fullscreen ? FULLSCREEN : 0);
    h[b + VIEW.DEVICE] = bits(v.deviceScale ?? 1);
    h[b + VIEW.CSS] = bits(v.cssScale ?? 1);
    [h[b + VIEW.SX], h[b + VIEW.SY]] = v.scroll ?? [0, 0];
    return id;
  });
}

export function register(reg, cx) {
  const V = OFFERED.PPB_View;
  const at = (res) => {
    const b = cx.res.of(res, KIND.VIEW);
    return b < 0 ? -1 : b + FIELDS;
  };
  const rect = (res, out, first) => {
    const b = at(res);
    if (b < 0 || out === 0) return 0;
    for (let i = 0; i < 4; i++) cx.mem.setI32(out + 4 * i, cx.h[b + first + i]);
    return 1;
  };
  const flag = (f) => (res) => {
    const b = at(res);
    return b >= 0 && cx.h[b + VIEW.FLAGS] & f ? 1 : 0;
  };
  reg.defAll(V, "IsView", (res) => (at(res) >= 0 ? 1 : 0));
  reg.defAll(V, "GetRect", (res, out) => rect(res, out, VIEW.X));
  reg.defAll(V, "IsFullscreen", flag(FULLSCREEN));
  reg.defAll(V, "IsVisible", flag(VISIBLE));
  reg.defAll(V, "IsPageVisible", flag(PAGE_VISIBLE));
  reg.defAll(V, "GetClipRect", (res, out) => rect(res, out, VIEW.CX));
  for (const i of V.slice(1)) {
    reg.def(i, "GetDeviceScale", (res) => {
      const b = at(res);
      return b < 0 ? 0 : fromBits(cx.h[b + VIEW.DEVICE]);
    });
    reg.def(i, "GetCSSScale", (res) => {
      const b = at(res);
      return b < 0 ? 0 : fromBits(cx.h[b + VIEW.CSS]);
    });
  }
  reg.def(V[2], "GetScrollOffset", (res, out) => {
    const b = at(res);
    if (b < 0 || out === 0) return 0;
    cx.mem.setI32(out, cx.h[b + VIEW.SX]);
    cx.mem.setI32(out + 4, cx.h[b + VIEW.SY]);
    return 1;
  });

  const I = "PPB_Instance;1.0";
  // Binding shows a device (Graphics2D or 3D) on the instance's canvas (0 unbinds).
  reg.def(I, "BindGraphics", (instance, device) => {
    if (instance !== cx.instance) return 0;
    const kind = device === 0 ? 0 : cx.res.kindOf(device);
    if (device !== 0 && kind !== KIND.GRAPHICS_2D && kind !== KIND.GRAPHICS_3D) return 0;
    cx.gfx.bound = device;
    return 1;
  });
  reg.def(I, "IsFullFrame", (_instance) => 0);
}
