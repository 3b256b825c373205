// A module memory and the runtime's page allocator, faked for unit tests of the host's
// shared structures (no module, no workers).

import { Heap } from "../../src/host/heap.js";
import { Mem } from "../../src/host/mem.js";
import { Registry } from "../../src/host/registry.js";
import { Resources } from "../../src/host/resources.js";
import { createSharedBlock } from "../../src/host/shared.js";
import { Vars } from "../../src/host/vars.js";

export function fakeInstance({ pages = 2 } = {}) {
  const memory = new WebAssembly.Memory({ initial: pages, maximum: 1024, shared: true });
  const freed = [];
  const exports = {
    allocs: 0,
    // Pages of 64 KiB, from a grown memory (the runtime's allocator is first fit; a
    // bump allocator is enough to test what uses it).
    __ppapi_alloc(len) {
      const n = Math.ceil(len / 65536);
      const at = memory.grow(n) * 65536;
      exports.allocs++;
      return at;
    },
    __ppapi_free(addr, len) {
      freed.push([addr, len]);
    },
  };
  const h = new Int32Array(createSharedBlock());
  const mem = new Mem(memory);
  const heap = new Heap(h, mem, exports);
  const vars = new Vars(h, mem, heap);
  const res = new Resources(h, vars);
  return { memory, exports, freed, h, mem, heap, vars, res };
}

/**
 * The functions that `registers` (ppb/*.js `register`s) define for the fake context `cx`,
 * by interface and name.
 * @param {any} cx a fake Context
 * @param {...(reg: Registry, cx: any) => void} registers
 * @returns {(iface: string, name: string) => any}
 */
export function registered(cx, ...registers) {
  const reg = new Registry();
  for (const register of registers) register(reg, cx);
  return (iface, name) => reg.get(iface, name).impl;
}

/** The least of a page that embed.js needs to load: a document with no elements to adopt. */
export function fakeEmbedPage() {
  const element = { nodeType: 1, localName: "html", querySelectorAll: () => [] };
  globalThis.document = /** @type {any} */ ({ currentScript: null, querySelector: () => null, documentElement: element, baseURI: "http://127.0.0.1/" });
  globalThis.addEventListener = () => {};
  globalThis.MutationObserver = /** @type {any} */ (
    class {
      observe() {}
    }
  );
}
