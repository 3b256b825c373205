// PPB_Core;1.0: resources' reference counts, time, CallOnMainThread, IsMainThread.

import { now } from "../clock.js";

export function register(reg, cx) {
  const I = "PPB_Core;1.0";
  reg.def(I, "AddRefResource", (res) => cx.res.addRef(res));
  reg.def(I, "ReleaseResource", (res) => cx.releaseResource(res));
  // Wall-clock seconds; TimeTicks from the clock every worker shares (clock.js).
  reg.def(I, "GetTime", () => Date.now() / 1000);
  reg.def(I, "GetTimeTicks", () => now() / 1000);
  reg.def(I, "CallOnMainThread", (delay, cb, result) => {
    const func = cx.mem.u32(cb);
    const userData = cx.mem.u32(cb + 4);
    cx.callOnMainThread(func, userData, result, Math.max(0, delay));
  });
  reg.def(I, "IsMainThread", () => (cx.isMain ? 1 : 0));
}
