// A thread worker: instantiates the module over the instance's memory, then waits in its
// pool slot (threads.js) until `thread-spawn` gives it a thread, which it runs with
// `wasi_thread_start(tid, arg)`. One thread per worker; the worker ends with its thread.

import { Context, ThreadExit } from "./context.js";
import { releaseSlot, waitForThread } from "./threads.js";
import { Exit } from "./wasi.js";
import { parentLine } from "./parent.js";

const toMain = parentLine(async (m) => {
  if (m.t !== "init") return;
  const port = m.port;
  let cx;
  try {
    cx = new Context({
      isMain: false,
      tid: -1,
      memory: m.memory,
      hostSab: m.hostSab,
      toPage: (msg) => port.postMessage(msg),
      toMain,
      args: m.args,
    });
    // Its line to the IO worker, and the cell a blocking call waits on.
    cx.ioPort = m.io;
    const cell = new SharedArrayBuffer(16);
    cx.cell = new Int32Array(cell);
    m.io.postMessage({ t: "hello", cell });
    const instance = await WebAssembly.instantiate(m.module, cx.imports(m.module));
    cx.setExports(instance.exports);
    toMain({ t: "ready" });
    const h = new Int32Array(m.hostSab);
    const { tid, arg } = waitForThread(h, m.slot);
    cx.tid = tid;
    try {
      instance.exports.wasi_thread_start(tid, arg);
    } catch (err) {
      if (err instanceof Exit) {
        cx.flushOutput?.();
        toMain({ t: "exit", code: err.code });
        return;
      }
      if (!(err instanceof ThreadExit)) throw err;
    }
    cx.flushOutput?.();
    releaseSlot(h, m.slot);
    toMain({ t: "done" });
    self.close();
  } catch (err) {
    toMain({ t: "crash", error: `thread: ${String(err?.message ?? err)}`, stack: String(err?.stack ?? "") });
  }
});
