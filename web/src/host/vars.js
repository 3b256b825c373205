// PP_Vars shared by every thread of an instance (PPB_Var and its family are thread-safe in
// Chrome). Slots live in the host block; payloads in module memory blocks (heap.js). All
// under the host lock, held only for the operation itself.
//
// A PP_Var in module memory is 16 bytes: type (i32) at +0, value at +8 (PP_Bool and int32
// as i32, double as f64, a reference type's id as i64 whose low word is the slot).

import { decodeUtf8, encodeUtf8 } from "./mem.js";
import { lock, unlock, LIVE_VARS, MAX_VARS, VAR_BASE, VAR_FREE, VAR_HIGH, VAR_WORDS } from "./shared.js";
import { blockSize } from "./heap.js";
import { PP_VARTYPE } from "./contract.js";

/** Var types (PP_VarType). */
export const T = PP_VARTYPE;

export function isRef(t) {
  return t >= T.STRING && t <= T.RESOURCE;
}

// Slot words.
const TYPE = 0;
const RC = 1;
const ADDR = 2;
const LEN = 3; // bytes (string, array buffer) or elements (array, dictionary)
const CAP = 4; // bytes of the payload block
const NEXT = 5; // free list link
const RES = 6; // the resource of a resource var

const ELEM = 16; // an array element: a PP_Var
const ENTRY = 24; // a dictionary entry: key slot (i32), pad, PP_Var

export const UNDEFINED = Object.freeze({ t: T.UNDEFINED, v: 0 });
export const NULL = Object.freeze({ t: T.NULL, v: 0 });

export class VarError extends Error {}

export class Vars {
  constructor(h, mem, heap) {
    this.h = h;
    this.mem = mem;
    this.heap = heap;
  }

  // --- PP_Var in memory -----------------------------------------------------------------

  read(ptr) {
    const t = this.mem.i32(ptr);
    switch (t) {
      case T.BOOL:
      case T.INT32:
        return { t, v: this.mem.i32(ptr + 8) };
      case T.DOUBLE:
        return { t, v: this.mem.f64(ptr + 8) };
      case T.UNDEFINED:
      case T.NULL:
        return { t, v: 0 };
      default:
        return isRef(t) ? { t, v: this.mem.u32(ptr + 8) } : UNDEFINED;
    }
  }

  write(ptr, v) {
    this.mem.setI32(ptr, v.t);
    this.mem.setI32(ptr + 4, 0);
    if (v.t === T.DOUBLE) {
      this.mem.setF64(ptr + 8, v.v);
    } else {
      this.mem.setI32(ptr + 8, v.v | 0);
      this.mem.setI32(ptr + 12, 0);
    }
  }

  // --- slots (callers hold the lock) ----------------------------------------------------

  slot(id) {
    return VAR_BASE + VAR_WORDS * id;
  }

  /** The slot of a live var of type t, or -1. */
  live(v, t) {
    if (v.t !== t || v.v <= 0 || v.v >= MAX_VARS) return -1;
    const s = this.slot(v.v);
    return this.h[s + TYPE] === t && this.h[s + RC] > 0 ? s : -1;
  }

  newSlot(t, addr, len, cap) {
    const h = this.h;
    let id = h[VAR_FREE];
    if (id !== 0) {
      h[VAR_FREE] = h[this.slot(id) + NEXT];
    } else {
      if (h[VAR_HIGH] === 0) h[VAR_HIGH] = 1;
      id = h[VAR_HIGH];
      if (id >= MAX_VARS) throw new VarError(`more than ${MAX_VARS - 1} vars are alive`);
      h[VAR_HIGH] = id + 1;
    }
    const s = this.slot(id);
    h[s + TYPE] = t;
    h[s + RC] = 1;
    h[s + ADDR] = addr;
    h[s + LEN] = len;
    h[s + CAP] = cap;
    h[s + NEXT] = 0;
    h[s + RES] = 0;
    h[LIVE_VARS]++;
    return { t, v: id };
  }

  addRefLocked(v) {
    if (!isRef(v.t)) return;
    const s = this.live(v, v.t);
    if (s >= 0) this.h[s + RC]++;
  }

  /** Drops a reference; a var whose last reference goes frees what it holds. */
  releaseLocked(v) {
    const stack = [v];
    while (stack.length) {
      const x = stack.pop();
      if (!isRef(x.t)) continue;
      const s = this.live(x, x.t);
      if (s < 0) continue;
      const h = this.h;
      if (--h[s + RC] > 0) continue;
      const addr = h[s + ADDR] >>> 0;
      const len = h[s + LEN];
      if (x.t === T.ARRAY) {
        for (let i = 0; i < len; i++) stack.push(this.read(addr + ELEM * i));
      } else if (x.t === T.DICTIONARY) {
        for (let i = 0; i < len; i++) {
          stack.push({ t: T.STRING, v: this.mem.i32(addr + ENTRY * i) });
          stack.push(this.read(addr + ENTRY * i + 8));
        }
      }
      if (addr !== 0) this.heap.free(addr, h[s + CAP]);
      h[s + TYPE] = 0;
      h[s + RC] = 0;
      h[s + NEXT] = h[VAR_FREE];
      h[VAR_FREE] = x.v;
      h[LIVE_VARS]--;
    }
  }

  /** Runs f under the host lock. */
  locked(f) {
    lock(this.h);
    try {
      return f();
    } finally {
      unlock(this.h);
    }
  }

  addRef(v) {
    if (isRef(v.t)) this.locked(() => this.addRefLocked(v));
  }
  release(v) {
    if (isRef(v.t)) this.locked(() => this.releaseLocked(v));
  }

  // --- strings --------------------------------------------------------------------------

  /** A new string var holding `bytes` (a copy; NUL-terminated in memory). */
  stringFromBytesLocked(bytes) {
    const cap = blockSize(bytes.length + 1);
    const addr = this.heap.alloc(bytes.length + 1);
    this.mem.check(addr, bytes.length + 1);
    this.mem.u8.set(bytes, addr);
    this.mem.u8[addr + bytes.length] = 0;
    return this.newSlot(T.STRING, addr, bytes.length, cap);
  }
  stringFromBytes(bytes) {
    return this.locked(() => this.stringFromBytesLocked(bytes));
  }
  /** A string var made from `len` bytes at `addr` of module memory. */
  stringFromMemory(addr, len) {
    return this.stringFromBytes(this.mem.bytes(addr, len));
  }
  /** {addr, len} of a string var's bytes, or null. */
  utf8(v) {
    return this.locked(() => {
      const s = this.live(v, T.STRING);
      return s < 0 ? null : { addr: this.h[s + ADDR] >>> 0, len: this.h[s + LEN] };
    });
  }
  stringValueLocked(v) {
    const s = this.live(v, T.STRING);
    if (s < 0) return null;
    return decodeUtf8(this.mem.bytes(this.h[s + ADDR] >>> 0, this.h[s + LEN]));
  }

  // --- array buffers --------------------------------------------------------------------

  arrayBufferLocked(size) {
    const cap = blockSize(Math.max(size, 1));
    const addr = this.heap.alloc(Math.max(size, 1));
    this.mem.fill(addr, 0, cap);
    return this.newSlot(T.ARRAY_BUFFER, addr, size, cap);
  }
  arrayBuffer(size) {
    return this.locked(() => this.arrayBufferLocked(size));
  }
  /** {addr, len} of an array buffer's bytes, or null. */
  bufferOf(v) {
    return this.locked(() => {
      const s = this.live(v, T.ARRAY_BUFFER);
      return s < 0 ? null : { addr: this.h[s + ADDR] >>> 0, len: this.h[s + LEN] };
    });
  }

  // --- arrays ---------------------------------------------------------------------------

  arrayLocked() {
    return this.newSlot(T.ARRAY, 0, 0, 0);
  }
  arrayLength(v) {
    return this.locked(() => {
      const s = this.live(v, T.ARRAY);
      return s < 0 ? 0 : this.h[s + LEN];
    });
  }
  /** Moves slot s's payload to a block of `want` bytes, keeping its first `used`. Lock held. */
  regrowLocked(s, want, used) {
    const h = this.h;
    const addr = this.heap.alloc(want);
    const old = h[s + ADDR] >>> 0;
    if (old !== 0) {
      this.mem.write(addr, this.mem.bytes(old, used));
      this.heap.free(old, h[s + CAP]);
    }
    h[s + ADDR] = addr;
    h[s + CAP] = blockSize(want);
  }

  /** Grows or shrinks an array to n elements (new ones undefined). Lock held. */
  setLengthLocked(s, n) {
    const h = this.h;
    const len = h[s + LEN];
    if (n > (1 << 26)) throw new VarError(`an array of ${n} elements is too large`);
    if (n * ELEM > h[s + CAP]) this.regrowLocked(s, Math.max(n, 2 * len, 4) * ELEM, len * ELEM);
    const addr = h[s + ADDR] >>> 0;
    for (let i = n; i < len; i++) this.releaseLocked(this.read(addr + ELEM * i));
    if (n > len) this.mem.fill(addr + ELEM * len, 0, (n - len) * ELEM);
    h[s + LEN] = n;
  }
  arraySetLength(v, n) {
    return this.locked(() => {
      const s = this.live(v, T.ARRAY);
      if (s < 0) return false;
      this.setLengthLocked(s, n);
      return true;
    });
  }
  /** The element (a new reference), or undefined. */
  arrayGet(v, i) {
    return this.locked(() => {
      const s = this.live(v, T.ARRAY);
      if (s < 0 || i < 0 || i >= this.h[s + LEN]) return UNDEFINED;
      const e = this.read((this.h[s + ADDR] >>> 0) + ELEM * i);
      this.addRefLocked(e);
      return e;
    });
  }
  arraySetLocked(v, i, value) {
    const s = this.live(v, T.ARRAY);
    if (s < 0 || i < 0) return false;
    if (i >= this.h[s + LEN]) this.setLengthLocked(s, i + 1);
    const p = (this.h[s + ADDR] >>> 0) + ELEM * i;
    const old = this.read(p);
    this.addRefLocked(value);
    this.write(p, value);
    this.releaseLocked(old);
    return true;
  }
  arraySet(v, i, value) {
    return this.locked(() => this.arraySetLocked(v, i, value));
  }

  // --- dictionaries ---------------------------------------------------------------------

  dictionaryLocked() {
    return this.newSlot(T.DICTIONARY, 0, 0, 0);
  }
  /** The entry index of the key with these bytes, or -1. Lock held. */
  findLocked(s, keyBytes) {
    const addr = this.h[s + ADDR] >>> 0;
    const n = this.h[s + LEN];
    for (let i = 0; i < n; i++) {
      const ks = this.slot(this.mem.i32(addr + ENTRY * i));
      const klen = this.h[ks + LEN];
      if (klen !== keyBytes.length) continue;
      const ka = this.h[ks + ADDR] >>> 0;
      this.mem.check(ka, klen);
      let same = true;
      for (let j = 0; j < klen && same; j++) same = this.mem.u8[ka + j] === keyBytes[j];
      if (same) return i;
    }
    return -1;
  }
  keyBytesLocked(key) {
    const ks = this.live(key, T.STRING);
    return ks < 0 ? null : this.mem.bytes(this.h[ks + ADDR] >>> 0, this.h[ks + LEN]);
  }
  dictGet(d, key) {
    return this.locked(() => {
      const s = this.live(d, T.DICTIONARY);
      const kb = this.keyBytesLocked(key);
      if (s < 0 || kb === null) return UNDEFINED;
      const i = this.findLocked(s, kb);
      if (i < 0) return UNDEFINED;
      const v = this.read((this.h[s + ADDR] >>> 0) + ENTRY * i + 8);
      this.addRefLocked(v);
      return v;
    });
  }
  dictHasKey(d, key) {
    return this.locked(() => {
      const s = this.live(d, T.DICTIONARY);
      const kb = this.keyBytesLocked(key);
      return s >= 0 && kb !== null && this.findLocked(s, kb) >= 0;
    });
  }
  /** Sets d[key] = value; the key is kept as a string var (a new one from its bytes). */
  dictSetLocked(d, key, value) {
    const s = this.live(d, T.DICTIONARY);
    const kb = this.keyBytesLocked(key);
    if (s < 0 || kb === null) return false;
    const h = this.h;
    const i = this.findLocked(s, kb);
    if (i >= 0) {
      const p = (h[s + ADDR] >>> 0) + ENTRY * i + 8;
      const old = this.read(p);
      this.addRefLocked(value);
      this.write(p, value);
      this.releaseLocked(old);
      return true;
    }
    const n = h[s + LEN];
    if ((n + 1) * ENTRY > h[s + CAP]) this.regrowLocked(s, Math.max(2 * n, 4) * ENTRY, n * ENTRY);
    this.addRefLocked(key);
    this.addRefLocked(value);
    const p = (h[s + ADDR] >>> 0) + ENTRY * n;
    this.mem.setI32(p, key.v);
    this.mem.setI32(p + 4, 0);
    this.write(p + 8, value);
    h[s + LEN] = n + 1;
    return true;
  }
  dictSet(d, key, value) {
    return this.locked(() => this.dictSetLocked(d, key, value));
  }
  dictDelete(d, key) {
    this.locked(() => {
      const s = this.live(d, T.DICTIONARY);
      const kb = this.keyBytesLocked(key);
      if (s < 0 || kb === null) return;
      const i = this.findLocked(s, kb);
      if (i < 0) return;
      const h = this.h;
      const addr = h[s + ADDR] >>> 0;
      const n = h[s + LEN];
      const p = addr + ENTRY * i;
      const k = { t: T.STRING, v: this.mem.i32(p) };
      const v = this.read(p + 8);
      // The last entry takes the deleted one's place (order is not kept, as in Chrome).
      if (i !== n - 1) this.mem.write(p, this.mem.bytes(addr + ENTRY * (n - 1), ENTRY));
      h[s + LEN] = n - 1;
      this.releaseLocked(k);
      this.releaseLocked(v);
    });
  }
  /** An array var of the keys (new string references). */
  dictKeys(d) {
    return this.locked(() => {
      const s = this.live(d, T.DICTIONARY);
      if (s < 0) return NULL;
      const keys = this.arrayLocked();
      const n = this.h[s + LEN];
      for (let i = 0; i < n; i++) {
        const addr = this.h[s + ADDR] >>> 0;
        this.arraySetLocked(keys, i, { t: T.STRING, v: this.mem.i32(addr + ENTRY * i) });
      }
      return keys;
    });
  }

  // --- resources ------------------------------------------------------------------------

  fromResourceLocked(res) {
    const v = this.newSlot(T.RESOURCE, 0, 0, 0);
    this.h[this.slot(v.v) + RES] = res;
    return v;
  }
  resourceOf(v) {
    return this.locked(() => {
      const s = this.live(v, T.RESOURCE);
      return s < 0 ? 0 : this.h[s + RES];
    });
  }

  // --- JavaScript values ----------------------------------------------------------------

  /**
   * The JavaScript value of a var, as Chrome's V8VarConverter gave it to the page: numbers,
   * strings, arrays, plain objects, ArrayBuffers (copies); resource vars become null.
   */
  toJS(v) {
    return this.locked(() => this.toJSLocked(v, 0));
  }
  toJSLocked(v, depth) {
    if (depth > 256) throw new VarError("a var nests more than 256 levels (a cycle?)");
    switch (v.t) {
      case T.UNDEFINED:
        return undefined;
      case T.NULL:
        return null;
      case T.BOOL:
        return v.v !== 0;
      case T.INT32:
      case T.DOUBLE:
        return v.v;
      case T.STRING: {
        const s = this.stringValueLocked(v);
        return s === null ? undefined : s;
      }
      case T.ARRAY_BUFFER: {
        const s = this.live(v, T.ARRAY_BUFFER);
        if (s < 0) return undefined;
        return this.mem.bytes(this.h[s + ADDR] >>> 0, this.h[s + LEN]).buffer;
      }
      case T.ARRAY: {
        const s = this.live(v, T.ARRAY);
        if (s < 0) return undefined;
        const out = [];
        for (let i = 0; i < this.h[s + LEN]; i++) {
          out.push(this.toJSLocked(this.read((this.h[s + ADDR] >>> 0) + ELEM * i), depth + 1));
        }
        return out;
      }
      case T.DICTIONARY: {
        const s = this.live(v, T.DICTIONARY);
        if (s < 0) return undefined;
        const out = {};
        for (let i = 0; i < this.h[s + LEN]; i++) {
          const p = (this.h[s + ADDR] >>> 0) + ENTRY * i;
          const k = this.stringValueLocked({ t: T.STRING, v: this.mem.i32(p) });
          out[k] = this.toJSLocked(this.read(p + 8), depth + 1);
        }
        return out;
      }
      default:
        return null;
    }
  }

  /** A var (one reference) for a JavaScript value, as Chrome converted page messages. */
  fromJS(x) {
    return this.locked(() => this.fromJSLocked(x, 0));
  }
  fromJSLocked(x, depth) {
    if (depth > 256) throw new VarError("the message nests more than 256 levels");
    if (x === undefined) return UNDEFINED;
    if (x === null) return NULL;
    switch (typeof x) {
      case "boolean":
        return { t: T.BOOL, v: x ? 1 : 0 };
      case "number":
        return Number.isInteger(x) && x >= -0x80000000 && x <= 0x7fffffff && !Object.is(x, -0)
          ? { t: T.INT32, v: x }
          : { t: T.DOUBLE, v: x };
      case "string":
        return this.stringFromBytesLocked(encodeUtf8(x));
      default:
        break;
    }
    if (x instanceof ArrayBuffer || ArrayBuffer.isView(x)) {
      const bytes = x instanceof ArrayBuffer
        ? new Uint8Array(x)
        : new Uint8Array(x.buffer, x.byteOffset, x.byteLength);
      const v = this.arrayBufferLocked(bytes.length);
      this.mem.write(this.h[this.slot(v.v) + ADDR] >>> 0, bytes);
      return v;
    }
    if (Array.isArray(x)) {
      const a = this.arrayLocked();
      for (let i = 0; i < x.length; i++) {
        const e = this.fromJSLocked(x[i], depth + 1);
        this.arraySetLocked(a, i, e);
        this.releaseLocked(e);
      }
      return a;
    }
    if (typeof x === "object") {
      const d = this.dictionaryLocked();
      for (const [k, val] of Object.entries(x)) {
        const key = this.stringFromBytesLocked(encodeUtf8(k));
        const e = this.fromJSLocked(val, depth + 1);
        this.dictSetLocked(d, key, e);
        this.releaseLocked(key);
        this.releaseLocked(e);
      }
      return d;
    }
    return UNDEFINED;
  }
}
