// Blocks of module memory for var payloads, shared by every worker of an instance: pages
// from the runtime's page allocator (`__ppapi_alloc`, so the app's mmap never hands them
// out too) split into power-of-two classes of 16 B to 32 KiB, so a short string does not
// cost a 64 KiB page; larger blocks are whole pages. Free lists are threaded through the
// free blocks themselves, with their heads in the host block. Callers hold the host lock.

import { CLASSES, HEAP_FREE } from "./shared.js";

const MIN_BLOCK = 16;
const PAGE = 65536;

export class OutOfMemory extends Error {}

/** The class of a block of `size` bytes, or -1 for a block of whole pages. */
export function classOf(size) {
  let block = MIN_BLOCK;
  let k = 0;
  while (block < size) {
    block *= 2;
    k++;
  }
  return k < CLASSES ? k : -1;
}

/** The bytes a block of `size` really takes. */
export function blockSize(size) {
  const k = classOf(size);
  return k >= 0 ? MIN_BLOCK << k : Math.ceil(size / PAGE) * PAGE;
}

export class Heap {
  /** h: the host block's Int32Array; mem: a Mem; exports: the instance's exports. */
  constructor(h, mem, exports) {
    this.h = h;
    this.mem = mem;
    this.exports = exports;
  }

  alloc(size) {
    const k = classOf(Math.max(size, 1));
    if (k < 0) {
      const a = this.exports.__ppapi_alloc(size) >>> 0;
      if (a === 0) throw new OutOfMemory(`module memory has no room for ${size} bytes`);
      return a;
    }
    const head = this.h[HEAP_FREE + k] >>> 0;
    if (head === 0) {
      const page = this.exports.__ppapi_alloc(PAGE) >>> 0;
      if (page === 0) throw new OutOfMemory("module memory is exhausted");
      const block = MIN_BLOCK << k;
      // Chain the page's blocks, lowest first; the first is handed out.
      let next = 0;
      for (let a = page + PAGE - block; a > page; a -= block) {
        this.mem.setI32(a, next);
        next = a;
      }
      this.h[HEAP_FREE + k] = next;
      return page;
    }
    this.h[HEAP_FREE + k] = this.mem.i32(head);
    return head;
  }

  free(addr, size) {
    if (addr === 0) return;
    const k = classOf(Math.max(size, 1));
    if (k < 0) {
      this.exports.__ppapi_free(addr, size);
      return;
    }
    this.mem.setI32(addr, this.h[HEAP_FREE + k]);
    this.h[HEAP_FREE + k] = addr;
  }
}
