// PPB_InputEvent;1.0: which event classes the app asked for (kept in the host block, so
// the page side can tell what to forward) and the common accessors of event resources.

import { FIELDS, KIND } from "../resources.js";

export const INPUT = { TYPE: 0, MODIFIERS: 1, TIME_LO: 2, TIME_HI: 3 };

export function register(reg, cx) {
  const I = "PPB_InputEvent;1.0";
  reg.def(I, "RequestInputEvents", "ii->i", (instance, classes) => cx.requestInput(instance, classes, false));
  reg.def(I, "RequestFilteringInputEvents", "ii->i", (instance, classes) =>
    cx.requestInput(instance, classes, true),
  );
  reg.def(I, "ClearInputEventRequest", "ii->", (instance, classes) => cx.clearInput(instance, classes));
  const at = (res) => {
    const b = cx.res.of(res, KIND.INPUT_EVENT);
    return b < 0 ? -1 : b + FIELDS;
  };
  reg.def(I, "IsInputEvent", "i->i", (res) => (at(res) >= 0 ? 1 : 0));
  reg.def(I, "GetType", "i->i", (res) => {
    const b = at(res);
    return b < 0 ? -1 : cx.h[b + INPUT.TYPE];
  });
  reg.def(I, "GetTimeStamp", "i->d", (res) => {
    const b = at(res);
    if (b < 0) return 0;
    const f = new Float64Array(1);
    const w = new Int32Array(f.buffer);
    w[0] = cx.h[b + INPUT.TIME_LO];
    w[1] = cx.h[b + INPUT.TIME_HI];
    return f[0];
  });
  reg.def(I, "GetModifiers", "i->i", (res) => {
    const b = at(res);
    return b < 0 ? 0 : cx.h[b + INPUT.MODIFIERS];
  });
}
