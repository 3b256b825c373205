// Calls into the module (PPP functions, completion callbacks) through the Pepper runtime's
// entry points (docs/PEPPER-ABI.md): `__ppp_call_*` for scalar arguments and
// `__ppp_callbuf_*` for arguments that point at structs or strings, for which the runtime
// reserves space on the calling thread's own stack and asks the host to fill it
// (`pexe2wasm_ppapi.fill`) and read it back (`done`). Calls nest (a PPP call may make PPB
// calls that call into the module again), so each worker keeps a stack of frames.

import { encodeUtf8 } from "./mem.js";

export class PppFrames {
  constructor(mem) {
    this.mem = mem;
    this.frames = [];
  }

  /** Calls export `name` with `args` (fn, n, mask, …); fill(ptr) gives the space's bytes. */
  call(exports, name, args, fill, done = null) {
    const depth = this.frames.length;
    this.frames.push({ fill, done });
    try {
      return exports[name](...args);
    } finally {
      this.frames.length = depth;
    }
  }

  /** `pexe2wasm_ppapi.fill(ptr, n)`. */
  fill(ptr, n) {
    const f = this.frames[this.frames.length - 1];
    if (!f || !f.fill) throw new Error("pexe2wasm_ppapi.fill called outside a PPP call");
    const bytes = f.fill(ptr >>> 0);
    f.fill = null;
    this.mem.write(ptr >>> 0, bytes.subarray(0, Math.max(0, n)));
  }

  /** `pexe2wasm_ppapi.done(ptr, n)`. */
  done(ptr, n) {
    const f = this.frames.pop();
    if (!f) throw new Error("pexe2wasm_ppapi.done called outside a PPP call");
    if (f.done) f.done(this.mem.bytes(ptr >>> 0, Math.max(0, n)));
  }
}

/** Bytes of little-endian u32s. */
export function u32s(values) {
  const b = new Uint8Array(4 * values.length);
  const dv = new DataView(b.buffer);
  values.forEach((v, i) => dv.setUint32(4 * i, v >>> 0, true));
  return b;
}

/** The app's `PPP_GetInterface(name)`: its table's address, or 0. */
export function pppInterface(frames, exports, getInterface, name) {
  const bytes = new Uint8Array([...encodeUtf8(name), 0]);
  return frames.call(exports, "__ppp_callbuf_i_i", [getInterface, bytes.length, 1, 0], () => bytes) >>> 0;
}

/** The space for DidCreate(instance, argc, argn, argv): two arrays, then the strings. */
export function didCreateSpace(attrs) {
  const base = 8 * attrs.length;
  const strings = [];
  const offsets = [];
  let len = 0;
  for (const [k, v] of attrs) {
    for (const s of [k, v]) {
      const b = encodeUtf8(s);
      offsets.push(base + len);
      strings.push(b, new Uint8Array([0]));
      len += b.length + 1;
    }
  }
  const size = Math.max(base + len, 1);
  const fill = (ptr) => {
    const out = new Uint8Array(size);
    const dv = new DataView(out.buffer);
    attrs.forEach((_, i) => {
      dv.setUint32(4 * i, ptr + offsets[2 * i], true);
      dv.setUint32(4 * attrs.length + 4 * i, ptr + offsets[2 * i + 1], true);
    });
    let p = base;
    for (const s of strings) {
      out.set(s, p);
      p += s.length;
    }
    return out;
  };
  return { size, fill };
}

/** A PP_Var's 16 bytes (type, padding, value), as a PPP call's argument. */
function varBytes(v) {
  const b = new Uint8Array(16);
  const dv = new DataView(b.buffer);
  dv.setInt32(0, v.t, true);
  if (v.t === 4) dv.setFloat64(8, v.v, true);
  else dv.setInt32(8, v.v | 0, true);
  return b;
}

/**
 * PPP_Messaging.HandleMessage(instance, message) with `data` from the page as a new var;
 * `messaging` is the app's PPP_Messaging;1.0 table. The app is given the var's reference,
 * as Chrome's proxy gave it (the C++ wrapper takes it with Var(PASS_REF, var) and releases
 * it): releasing it here too would free a message the app still holds (bp2008 queues its
 * ArrayBuffers; web/tests/unit/messaging.test.js).
 */
export function handleMessage(cx, messaging, data) {
  const v = cx.vars.fromJS(data);
  const handle = cx.mem.u32(messaging);
  cx.frames.call(cx.exports, "__ppp_callbuf_ii_v", [handle, 16, 2, cx.instance, 0], () => varBytes(v));
}
