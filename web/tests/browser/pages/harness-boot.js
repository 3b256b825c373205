// What every harness worker starts with: a converted module (its runtime only: the app's
// start is cut short at ppapi_start), its shared memory and host block, and the main
// thread's context over them; `checks` collects named results for window.result.

import { Context } from "./pexe2wasm/host/context.js";
import { createSharedBlock, NEXT_TID } from "./pexe2wasm/host/shared.js";
import { importedMemory } from "./pexe2wasm/host/wasm-info.js";

class Started extends Error {}

/** {module, memory, hostSab, main, instance} for the module at `wasmUrl`; toPage gets the main context's messages. */
export async function boot(wasmUrl, toPage = () => {}) {
  const bytes = await (await fetch(wasmUrl)).arrayBuffer();
  const mt = importedMemory(bytes);
  const module = await WebAssembly.compile(bytes);
  const memory = new WebAssembly.Memory({ initial: mt.min, maximum: 16384, shared: true });
  const hostSab = createSharedBlock();
  new Int32Array(hostSab)[NEXT_TID] = 1;
  const main = new Context({ isMain: true, tid: 0, memory, hostSab, toPage, onStart: () => { throw new Started(); } });
  const instance = await WebAssembly.instantiate(module, main.imports(module));
  main.setExports(instance.exports);
  try {
    /** @type {() => void} */ (instance.exports._start)();
  } catch (err) {
    if (!(err instanceof Started)) throw err;
  }
  return { module, memory, hostSab, main, instance };
}

/** A list of checks and the function that adds one (equal as JSON). */
export function checker() {
  const checks = [];
  const check = (name, got, want) => checks.push({ name, got, want, ok: JSON.stringify(got) === JSON.stringify(want) });
  return { checks, check };
}
