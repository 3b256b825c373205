// A thread worker: instantiates the module over the instance's memory, then waits in its
// pool slot (threads.js) until `thread-spawn` gives it a thread, which it runs with
// `wasi_thread_start(tid, arg)`. One thread per worker; the worker ends with its thread.
//
// The page starts it (embed.js, Instance.startThread) and is its parent: the first message
// comes from the page, with the module and memory (Firefox cannot send a
// WebAssembly.Module over a MessagePort) and two ports the page made: `io` to the IO
// worker and `main` to the instance worker, for what must run on the main module thread
// (a CallOnMainThread callback, a frame to show). Nothing here waits for the instance
// worker, whose event loop may be held by module code: the pool is the page's.
// To the page: ready, refill, done, exit, crash, and what the thread says (console,
// output, PostMessage, page calls).

import { Context, ThreadExit } from "./context.js";
import { releaseSlot, waitForThread } from "./threads.js";
import { Exit } from "./wasi.js";
import { parentLine } from "./parent.js";
import { FROM_THREAD, TO_IO_PORT, TO_PAGE, TO_THREAD, unknownMessage } from "./protocol.js";

const toPage = parentLine(async (m) => {
  if (m?.t !== TO_THREAD.INIT) return unknownMessage("page -> thread worker", m?.t);
  const main = m.main;
  let cx;
  try {
    cx = new Context({
      isMain: false,
      tid: -1,
      memory: m.memory,
      hostSab: m.hostSab,
      toPage: (msg, transfer) => toPage(msg, transfer),
      toMain: (msg, transfer) => main.postMessage(msg, transfer ?? []),
      args: m.args,
    });
    // Its line to the IO worker, and the cell a blocking call waits on.
    cx.ioPort = m.io;
    const cell = new SharedArrayBuffer(16);
    cx.cell = new Int32Array(cell);
    m.io.postMessage({ t: TO_IO_PORT.HELLO, cell });
    const instance = await WebAssembly.instantiate(m.module, cx.imports(m.module));
    cx.setExports(instance.exports);
    toPage({ t: FROM_THREAD.READY });
    const h = new Int32Array(m.hostSab);
    const { tid, arg } = waitForThread(h, m.slot);
    cx.tid = tid;
    try {
      /** @type {(tid: number, arg: number) => void} */ (instance.exports.wasi_thread_start)(tid, arg);
    } catch (err) {
      if (err instanceof Exit) {
        cx.flushOutput?.();
        toPage({ t: TO_PAGE.EXIT, code: err.code });
        return;
      }
      if (!(err instanceof ThreadExit)) throw err;
    }
    cx.flushOutput?.();
    releaseSlot(h, m.slot);
    toPage({ t: FROM_THREAD.DONE });
    self.close();
  } catch (err) {
    toPage({ t: TO_PAGE.CRASH, error: `thread: ${String(err?.message ?? err)}`, stack: String(err?.stack ?? "") });
  }
});
