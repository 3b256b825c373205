// PPB_Messaging;1.0/1.2 and PPB_Console;1.0: messages and console lines to the page,
// posted from whichever thread makes the call, straight to the page (each worker has its
// own port to it), as Chrome delivered them whatever the main thread was doing. Messages
// carry a sequence number so the page delivers them in the order they were posted.

import { VarError } from "../vars.js";
import { HANDLER, MESSAGE_SEQ } from "../shared.js";
import { LOOP, loopAt, post as postToLoop } from "./message_loop.js";
import { PP_ERROR as E } from "../contract.js";
import { TO_PAGE } from "../protocol.js";

// The registered handler, in the host block: active, loop, user_data, then its table
// (HandleMessage, HandleBlockingMessage, Destroy).
export const H = { ACTIVE: 0, LOOP: 1, USER: 2, HANDLE: 3, BLOCKING: 4, DESTROY: 5 };


export function register(reg, cx) {
  const post = (instance, p) => {
    if (instance !== cx.instance) return;
    let data;
    try {
      data = cx.vars.toJS(cx.vars.read(p));
    } catch (e) {
      if (!(e instanceof VarError)) throw e;
      cx.console(3, `PostMessage: ${e.message}`);
      return;
    }
    // Its place in the order, taken just before it leaves: every place taken is posted.
    cx.toPage({ t: TO_PAGE.MESSAGE, data, seq: Atomics.add(cx.h, MESSAGE_SEQ, 1) });
  };
  reg.def("PPB_Messaging;1.0", "PostMessage", post);
  reg.def("PPB_Messaging;1.2", "PostMessage", post);
  reg.def("PPB_Messaging;1.2", "RegisterMessageHandler", (instance, userData, handler, loop) => {
    if (instance !== cx.instance || handler === 0) return E.BADARGUMENT;
    const table = [0, 4, 8].map((o) => cx.mem.u32(handler + o));
    if (table[0] === 0) return E.BADARGUMENT;
    // Handlers run on a thread's own loop, never the main one (as in Chrome); a loop on
    // no thread yet could only ever be run by its future thread, so it is refused too.
    if (loop === cx.mainLoop()) return E.WRONG_THREAD;
    const b = loopAt(cx, loop);
    if (b < 0) return E.BADRESOURCE;
    if (cx.h[b + LOOP.TID] === 0) return E.WRONG_THREAD;
    unregister();
    cx.vars.locked(() => {
      cx.res.addRefLocked(loop);
      const h = cx.h;
      h[HANDLER + H.LOOP] = loop;
      h[HANDLER + H.USER] = userData;
      [h[HANDLER + H.HANDLE], h[HANDLER + H.BLOCKING], h[HANDLER + H.DESTROY]] = table;
      h[HANDLER + H.ACTIVE] = 1;
    });
    return 0;
  });
  /** Ends the handler: its Destroy(instance, user_data) runs on its loop. */
  const unregister = () => {
    const old = cx.vars.locked(() => {
      const h = cx.h;
      if (!h[HANDLER + H.ACTIVE]) return null;
      h[HANDLER + H.ACTIVE] = 0;
      return { loop: h[HANDLER + H.LOOP], user: h[HANDLER + H.USER], destroy: h[HANDLER + H.DESTROY] };
    });
    if (!old) return;
    if (old.destroy) postToLoop(cx, old.loop, old.destroy, cx.instance, old.user, 0);
    cx.releaseResource(old.loop);
  };
  reg.def("PPB_Messaging;1.2", "UnregisterMessageHandler", (instance) => {
    if (instance === cx.instance) unregister();
  });

  const text = (p) => {
    const v = cx.vars.toJS(cx.vars.read(p));
    return typeof v === "string" ? v : JSON.stringify(v);
  };
  const C = "PPB_Console;1.0";
  reg.def(C, "Log", (instance, level, p) => {
    if (instance === cx.instance) cx.console(level, text(p));
  });
  reg.def(C, "LogWithSource", (instance, level, src, p) => {
    if (instance === cx.instance) cx.console(level, `${text(src)}: ${text(p)}`);
  });
}
