// Runs a converted command-line pexe (a WASI command without threads) for a page, off the
// page's thread: standard output and error go to the page as text, by lines; no files,
// no environment, standard input at its end (wasi.js). The service's Run button uses it;
// a threaded program (it imports a shared memory) is refused with a sentence saying where
// it runs.

import { Mem } from "./mem.js";
import { Exit, wasiImports } from "./wasi.js";
import { FROM_COMMAND } from "./protocol.js";

self.onmessage = async (e) => {
  const { bytes, args } = e.data;
  // wasi.js reads memory through `cx.mem`; the memory is the instance's export, known only
  // once instantiated, so the view is made now and pointed at it then.
  const mem = Object.create(Mem.prototype);
  const cx = { mem, args: args ?? ["program"], output: (fd, text) => self.postMessage({ t: FROM_COMMAND.OUTPUT, fd, text }) };
  try {
    const module = await WebAssembly.compile(bytes);
    if (WebAssembly.Module.imports(module).some((i) => i.kind === "memory")) {
      throw new Error("this program starts threads (its memory is shared): it runs under `pexe2wasm run`, not in a page yet");
    }
    const wasi = wasiImports(cx);
    const instance = await WebAssembly.instantiate(module, { wasi_snapshot_preview1: wasi.imports });
    mem.memory = instance.exports.memory;
    mem.refresh();
    let code = 0;
    try {
      /** @type {() => void} */ (instance.exports._start)();
    } catch (err) {
      if (!(err instanceof Exit)) {
        wasi.flush();
        throw err;
      }
      code = err.code;
    }
    wasi.flush();
    self.postMessage({ t: FROM_COMMAND.EXIT, code });
  } catch (err) {
    self.postMessage({ t: FROM_COMMAND.ERROR, error: String(err?.message ?? err) });
  }
};
