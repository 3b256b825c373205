// PPB_Messaging;1.0/1.2 and PPB_Console;1.0: messages and console lines to the page,
// posted from whichever thread makes the call, straight to the page (each worker has its
// own port to it), as Chrome delivered them whatever the main thread was doing.

import { VarError } from "../vars.js";


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
    cx.toPage({ t: "message", data });
  };
  reg.def("PPB_Messaging;1.0", "PostMessage", "ii->", post);
  reg.def("PPB_Messaging;1.2", "PostMessage", "ii->", post);
  reg.def("PPB_Messaging;1.2", "RegisterMessageHandler", "iiii->i", (instance, _ud, handler, _loop) => {
    if (instance !== cx.instance || handler === 0) return -4; // PP_ERROR_BADARGUMENT
    // Handlers run on a thread's own message loop (never the main one, as in Chrome).
    // This host offers no PPB_MessageLoop yet, so no loop resource can name one.
    return -5; // PP_ERROR_BADRESOURCE
  });
  reg.def("PPB_Messaging;1.2", "UnregisterMessageHandler", "i->", (_instance) => {});

  const text = (p) => {
    const v = cx.vars.toJS(cx.vars.read(p));
    return typeof v === "string" ? v : JSON.stringify(v);
  };
  const C = "PPB_Console;1.0";
  reg.def(C, "Log", "iii->", (instance, level, p) => {
    if (instance === cx.instance) cx.console(level, text(p));
  });
  reg.def(C, "LogWithSource", "iiii->", (instance, level, src, p) => {
    if (instance === cx.instance) cx.console(level, `${text(src)}: ${text(p)}`);
  });
}
