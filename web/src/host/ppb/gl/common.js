// What the GL interfaces share (graphics3d.js, gles2.js, extensions.js): the GL enums,
// GLES 2 formats in WebGL 2's terms, the state each context keeps on top of WebGL
// (GlState) and, per worker context, the table of this worker's contexts and the helpers
// every GL function uses.
//
// What WebGL lacks that GLES 2 (as Chrome's command buffer gave it to Pepper) had is made
// up here and in gles2.js: integer names (GL names map to WebGL objects, names made on
// first bind as with bind_generates_resource), integer uniform locations (an index in the
// program's table), client-side vertex and index arrays (copied into scratch buffers at
// each draw), GLES 2 texture formats (float, half-float, depth, BGRA mapped to WebGL 2's),
// strings handed out as pointers into module memory; extensions.js has the CHROMIUM
// map-sub extension.

import { KIND } from "../../resources.js";

// GL enums used below (the GLES 2 values; WebGL 2 shares them).
export const GL = {
  NO_ERROR: 0,
  INVALID_ENUM: 0x0500,
  INVALID_VALUE: 0x0501,
  INVALID_OPERATION: 0x0502,
  OUT_OF_MEMORY: 0x0505,
  BYTE: 0x1400,
  UNSIGNED_BYTE: 0x1401,
  SHORT: 0x1402,
  UNSIGNED_SHORT: 0x1403,
  INT: 0x1404,
  UNSIGNED_INT: 0x1405,
  FLOAT: 0x1406,
  FIXED: 0x140c,
  HALF_FLOAT: 0x140b,
  HALF_FLOAT_OES: 0x8d61,
  UNSIGNED_SHORT_4_4_4_4: 0x8033,
  UNSIGNED_SHORT_5_5_5_1: 0x8034,
  UNSIGNED_SHORT_5_6_5: 0x8363,
  UNSIGNED_INT_24_8: 0x84fa,
  DEPTH_COMPONENT: 0x1902,
  ALPHA: 0x1906,
  RGB: 0x1907,
  RGBA: 0x1908,
  LUMINANCE: 0x1909,
  LUMINANCE_ALPHA: 0x190a,
  BGRA_EXT: 0x80e1,
  DEPTH_STENCIL: 0x84f9,
  DEPTH_COMPONENT16: 0x81a5,
  DEPTH_COMPONENT24: 0x81a6,
  DEPTH24_STENCIL8: 0x88f0,
  RGBA32F: 0x8814,
  RGB32F: 0x8815,
  RGBA16F: 0x881a,
  RGB16F: 0x881b,
  ARRAY_BUFFER: 0x8892,
  ELEMENT_ARRAY_BUFFER: 0x8893,
  STREAM_DRAW: 0x88e0,
  WRITE_ONLY: 0x88b9,
  VENDOR: 0x1f00,
  RENDERER: 0x1f01,
  VERSION: 0x1f02,
  EXTENSIONS: 0x1f03,
  SHADING_LANGUAGE_VERSION: 0x8b8c,
  UNPACK_ALIGNMENT: 0x0cf5,
  PACK_ALIGNMENT: 0x0d05,
  COMPILE_STATUS: 0x8b81,
  LINK_STATUS: 0x8b82,
  INFO_LOG_LENGTH: 0x8b84,
  SHADER_SOURCE_LENGTH: 0x8b88,
  ACTIVE_UNIFORMS: 0x8b86,
  ACTIVE_UNIFORM_MAX_LENGTH: 0x8b87,
  ACTIVE_ATTRIBUTES: 0x8b89,
  ACTIVE_ATTRIBUTE_MAX_LENGTH: 0x8b8a,
  NUM_COMPRESSED_TEXTURE_FORMATS: 0x86a2,
  COMPRESSED_TEXTURE_FORMATS: 0x86a3,
  NUM_SHADER_BINARY_FORMATS: 0x8df9,
  SHADER_BINARY_FORMATS: 0x8df8,
  SHADER_COMPILER: 0x8dfa,
  VERTEX_ATTRIB_ARRAY_POINTER: 0x8645,
  VERTEX_ATTRIB_ARRAY_BUFFER_BINDING: 0x889f,
  COLOR_BUFFER_BIT: 0x4000,
  TEXTURE_2D: 0x0de1,
  QUERY_RESULT: 0x8866,
  QUERY_RESULT_AVAILABLE: 0x8867,
  CURRENT_QUERY: 0x8865,
};

/** Bytes per element of a vertex attribute or index type. */
export function typeSize(type) {
  switch (type) {
    case GL.BYTE:
    case GL.UNSIGNED_BYTE:
      return 1;
    case GL.SHORT:
    case GL.UNSIGNED_SHORT:
    case GL.HALF_FLOAT:
    case GL.HALF_FLOAT_OES:
      return 2;
    default:
      return 4;
  }
}

/** Components per pixel of a GLES 2 pixel format. */
export function components(format) {
  switch (format) {
    case GL.ALPHA:
    case GL.LUMINANCE:
    case GL.DEPTH_COMPONENT:
    case GL.DEPTH_STENCIL:
      return 1;
    case GL.LUMINANCE_ALPHA:
      return 2;
    case GL.RGB:
      return 3;
    default:
      return 4;
  }
}

/** Bytes per pixel of (format, type). */
export function pixelBytes(format, type) {
  switch (type) {
    case GL.UNSIGNED_SHORT_4_4_4_4:
    case GL.UNSIGNED_SHORT_5_5_5_1:
    case GL.UNSIGNED_SHORT_5_6_5:
      return 2;
    case GL.UNSIGNED_INT_24_8:
      return 4;
    default:
      return components(format) * typeSize(type);
  }
}

/** Bytes an image of w x h takes in memory with rows aligned to `align`. */
export function imageBytes(w, h, format, type, align) {
  if (w <= 0 || h <= 0) return 0;
  const row = w * pixelBytes(format, type);
  const stride = Math.ceil(row / align) * align;
  return stride * (h - 1) + row;
}

/** The WebGL 2 form of a GLES 2 (internalformat, format, type) for TexImage2D. */
export function texFormat(internal, format, type) {
  if (type === GL.HALF_FLOAT_OES) type = GL.HALF_FLOAT;
  if (format === GL.BGRA_EXT) return { internal: GL.RGBA, format: GL.RGBA, type, swizzle: true };
  if (type === GL.FLOAT) {
    if (internal === GL.RGBA) internal = GL.RGBA32F;
    else if (internal === GL.RGB) internal = GL.RGB32F;
  } else if (type === GL.HALF_FLOAT) {
    if (internal === GL.RGBA) internal = GL.RGBA16F;
    else if (internal === GL.RGB) internal = GL.RGB16F;
  } else if (internal === GL.DEPTH_COMPONENT) {
    internal = type === GL.UNSIGNED_INT ? GL.DEPTH_COMPONENT24 : GL.DEPTH_COMPONENT16;
  } else if (internal === GL.DEPTH_STENCIL) {
    internal = GL.DEPTH24_STENCIL8;
  }
  return { internal, format, type, swizzle: false };
}

/** GL names for one kind of object: name -> WebGL object, and back. */
export class Names {
  constructor(make) {
    this.make = make; // () => a new WebGL object, for names first seen at bind
    this.objs = new Map();
    this.next = 1;
  }
  gen() {
    while (this.objs.has(this.next)) this.next++;
    const name = this.next++;
    this.objs.set(name, null); // reserved; made at first bind (or now, by the caller)
    return name;
  }
  /** The object for `name`, made if the name is new or only reserved (bind_generates_resource). */
  bind(name) {
    if (name === 0) return null;
    let o = this.objs.get(name);
    if (!o) {
      o = this.make();
      if (o) o.ppName = name;
      this.objs.set(name, o);
    }
    return o;
  }
  get(name) {
    return name === 0 ? null : (this.objs.get(name) ?? null);
  }
  delete(name) {
    const o = this.objs.get(name) ?? null;
    this.objs.delete(name);
    return o;
  }
}

/** A vertex array's attribute state, kept here for client-side arrays. */
export class VertexArray {
  constructor(n) {
    this.attribs = Array.from({ length: n }, () => ({ enabled: false, size: 4, type: GL.FLOAT, norm: false, stride: 0, ptr: 0, client: false, integer: false }));
    this.elements = null; // the bound element array buffer object
    this.clients = 0; // attributes enabled and client-side: a draw with none copies nothing
  }

  /** Counts again after an attribute's enabled or client flag changed. */
  recount() {
    this.clients = this.attribs.reduce((n, a) => n + (a.enabled && a.client ? 1 : 0), 0);
  }
}

/** One context: its canvas, WebGL context and the state GLES 2 needs on top of WebGL. */
export class GlState {
  constructor(res, canvas, gl, extNames) {
    this.res = res;
    this.canvas = canvas;
    this.gl = gl;
    this.err = GL.NO_ERROR;
    this.extNames = extNames;
    this.buffers = new Names(() => gl.createBuffer());
    this.textures = new Names(() => gl.createTexture());
    this.framebuffers = new Names(() => gl.createFramebuffer());
    this.renderbuffers = new Names(() => gl.createRenderbuffer());
    this.queries = new Names(() => gl.createQuery());
    this.vertexArrays = new Names(() => gl.createVertexArray());
    this.programs = new Names(() => null); // programs and shaders share one namespace
    this.maxAttribs = gl.getParameter(gl.MAX_VERTEX_ATTRIBS);
    this.defaultVao = new VertexArray(this.maxAttribs);
    this.vao = this.defaultVao;
    this.arrayBuffer = null; // the object bound to ARRAY_BUFFER
    this.program = null; // the program in use (our record)
    this.scratch = []; // per attribute: a buffer client arrays are copied into
    this.scratchIndex = null;
    this.shadow = new Map(); // element array buffer object -> a copy of its bytes (max index)
    this.mapped = new Map(); // MapSub pointer -> what to do at Unmap
    this.unpackAlign = 4;
    this.packAlign = 4;
    this.swapping = false;
    this.lastFrame = 0; // a thread's last SwapBuffers (graphics.js threadFrame)
  }
  error(e) {
    if (this.err === GL.NO_ERROR) this.err = e;
  }
}

/** A program or shader record (GL name -> this; `obj` is the WebGL object). */
export function record(obj, isProgram) {
  return { obj, isProgram, locs: [], locByName: new Map() };
}

export function objName(v) {
  return v && typeof v === "object" && "ppName" in v ? v.ppName : 0;
}

/** A WebGL answer as the numbers GL writes: booleans 1/0, objects their GL names, none 0. */
export function numbers(v) {
  if (v === null || v === undefined || typeof v === "string") return [0];
  if (typeof v === "boolean") return [v ? 1 : 0];
  if (typeof v === "number") return [v];
  if (ArrayBuffer.isView(v) || Array.isArray(v)) return Array.from(/** @type {ArrayLike<number | boolean>} */ (v), (x) => (typeof x === "boolean" ? (x ? 1 : 0) : x));
  return [objName(v)];
}

/** @type {WeakMap<object, Map<number, GlState>>} a worker context -> its Graphics3D contexts by resource */
const contexts = new WeakMap();

/**
 * The GL state of Graphics3D context `res` if it lives in `cx`'s worker (the thread that
 * created it), else null.
 * @param {object} cx
 * @param {number} res
 * @returns {GlState | null}
 */
export function glState(cx, res) {
  return contexts.get(cx)?.get(res) ?? null;
}

/**
 * What every GL function of worker context `cx` uses, made once per context by
 * index.js: the table of its contexts and the helpers over module memory and GL names.
 */
export function glShared(reg, cx) {
  /** @type {Map<number, GlState>} */
  const states = new Map();
  contexts.set(cx, states);
  let warnedThread = false;
  let last = null;
  /** The context `res` if it lives in this worker, else null (a call to drop). */
  const st = (res) => {
    if (last && last.res === res) return last;
    const s = states.get(res);
    if (s) return (last = s);
    if (!warnedThread && cx.res.kindOf(res) === KIND.GRAPHICS_3D) {
      warnedThread = true;
      cx.console("warning", "pexe2wasm: GL calls on a Graphics3D context from a thread other than the one that created it are dropped");
    }
    return null;
  };
  /**
   * Drops context `res` from this worker's table (its last reference is gone) and returns
   * its state, if it was this worker's. The id may come back for a new context, so the
   * last one looked up is forgotten too.
   * @param {number} res
   */
  const forget = (res) => {
    const s = states.get(res) ?? null;
    states.delete(res);
    if (last && last.res === res) last = null;
    return s;
  };

  /**
   * Registers GL functions of `iface`: `def(iface)(name, f)` registers `f(state, ...args)`
   * as the PPB function `(context, ...args)`, dropped (answering 0) when the context is not
   * this worker's. `f`'s arity is checked against the description, as `arity` when given.
   * @param {string} iface
   */
  const def = (iface) => (name, f, arity = f.length) =>
    reg.def(
      iface,
      name,
      (c, ...args) => {
        const s = st(c);
        return s ? f(s, ...args) : 0;
      },
      arity,
    );

  // Memory helpers: views of module memory, refreshed when it has grown.
  const u8 = (ptr, len) => {
    cx.mem.check(ptr, len);
    return cx.mem.u8;
  };
  /** A typed array over [ptr, ptr + bytes) of the kind WebGL wants for `type` (a copy if misaligned). */
  const pixelsView = (type, ptr, bytes) => {
    cx.mem.check(ptr, bytes);
    const buf = cx.mem.buffer;
    /** @type {Uint8ArrayConstructor | Float32ArrayConstructor | Uint32ArrayConstructor | Uint16ArrayConstructor | Int16ArrayConstructor | Int8ArrayConstructor} */
    let C = Uint8Array;
    if (type === GL.FLOAT) C = Float32Array;
    else if (type === GL.UNSIGNED_INT || type === GL.UNSIGNED_INT_24_8 || type === GL.INT) C = Uint32Array;
    else if (type === GL.UNSIGNED_SHORT || type === GL.SHORT || type === GL.HALF_FLOAT || type === GL.HALF_FLOAT_OES || pixelBytes(GL.RGBA, type) === 2) C = Uint16Array;
    if (type === GL.SHORT) C = Int16Array;
    if (type === GL.BYTE) C = Int8Array;
    const n = Math.floor(bytes / C.BYTES_PER_ELEMENT);
    if (ptr % C.BYTES_PER_ELEMENT === 0) return new C(buf, ptr, n);
    return new C(cx.mem.bytes(ptr, n * C.BYTES_PER_ELEMENT).buffer);
  };
  const f32s = (ptr, n) => {
    cx.mem.check(ptr, 4 * n);
    return ptr % 4 === 0 ? new Float32Array(cx.mem.buffer, ptr, n) : new Float32Array(cx.mem.bytes(ptr, 4 * n).buffer);
  };
  const i32s = (ptr, n) => {
    cx.mem.check(ptr, 4 * n);
    return ptr % 4 === 0 ? new Int32Array(cx.mem.buffer, ptr, n) : new Int32Array(cx.mem.bytes(ptr, 4 * n).buffer);
  };
  const names = (ptr, n) => Array.from(i32s(ptr, n));
  /** Writes `text` as a C string into buf (at most size bytes with the NUL), its length to lenPtr. */
  const putString = (text, size, lenPtr, buf) => {
    const bytes = new TextEncoder().encode(text ?? "");
    const n = size > 0 ? Math.min(bytes.length, size - 1) : 0;
    if (buf !== 0 && size > 0) {
      cx.mem.write(buf, bytes.subarray(0, n));
      cx.mem.write(buf + n, [0]);
    }
    if (lenPtr !== 0) cx.mem.setI32(lenPtr, n);
  };

  const strings = new Map(); // GetString answers: name -> pointer (kept for the worker's life)
  const cstr = (text) => {
    let p = strings.get(text);
    if (p === undefined) {
      const bytes = new TextEncoder().encode(text + "\0");
      p = cx.vars.locked(() => cx.heap.alloc(bytes.length));
      cx.mem.write(p, bytes);
      strings.set(text, p);
    }
    return p;
  };

  /** Program/shader records by name. */
  const prog = (s, name) => {
    const r = s.programs.get(name);
    if (!r) {
      s.error(GL.INVALID_VALUE);
      return null;
    }
    return r;
  };

  /** A Delete* function for the names of `table`: `del` lets go of each one's object. */
  const deleter = (table, del) => (s, n, ptr) => {
    if (n < 0) return s.error(GL.INVALID_VALUE);
    for (const name of names(ptr, n)) {
      const o = s[table].delete(name);
      if (o) {
        del(s, o);
        s.shadow.delete(o);
        if (s.arrayBuffer === o) s.arrayBuffer = null;
        if (s.vao.elements === o) s.vao.elements = null;
      }
    }
  };

  /** A Gen* function: `n` names of `table` reserved, written at `ptr`. */
  const generator = (table) => (s, n, ptr) => {
    if (n < 0) return s.error(GL.INVALID_VALUE);
    cx.mem.check(ptr, 4 * n);
    for (let k = 0; k < n; k++) cx.mem.setI32(ptr + 4 * k, s[table].gen());
  };

  /** An Is* function: whether a name of `table` has an object that passes `test`. */
  const is = (table, test) => (s, name) => {
    const o = s[table].get(name);
    return o && test(s.gl, o) ? 1 : 0;
  };

  /**
   * Copies the client-side arrays a draw of vertices [0, end) reads into scratch buffers
   * and points the attributes at them; returns whether there were any.
   */
  const clientArrays = (s, end) => {
    const touched = [];
    for (let i = 0; i < s.maxAttribs; i++) {
      const a = s.vao.attribs[i];
      if (!a.enabled || !a.client || end <= 0) continue;
      const elem = a.size * typeSize(a.type);
      const stride = a.stride || elem;
      const bytes = stride * (end - 1) + elem;
      const gl = s.gl;
      let b = s.scratch[i];
      if (!b) b = s.scratch[i] = gl.createBuffer();
      gl.bindBuffer(GL.ARRAY_BUFFER, b);
      gl.bufferData(GL.ARRAY_BUFFER, u8(a.ptr, bytes), GL.STREAM_DRAW, a.ptr, bytes);
      if (a.integer) gl.vertexAttribIPointer(i, a.size, a.type, a.stride, 0);
      else gl.vertexAttribPointer(i, a.size, a.type, a.norm, a.stride, 0);
      touched.push(i);
    }
    if (touched.length) s.gl.bindBuffer(GL.ARRAY_BUFFER, s.arrayBuffer);
    return touched.length > 0;
  };

  const hasClientArrays = (s) => s.vao.clients > 0;

  const drawArrays = (s, mode, first, count, instances) => {
    if (first < 0 || count < 0) return s.error(GL.INVALID_VALUE);
    if (hasClientArrays(s)) clientArrays(s, first + count);
    if (instances === undefined) s.gl.drawArrays(mode, first, count);
    else s.gl.drawArraysInstanced(mode, first, count, instances);
  };

  /** The largest index among `count` indices of `type` in bytes (a Uint8Array). */
  const maxIndex = (bytes, type, offset, count) => {
    const size = typeSize(type);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let m = -1;
    for (let k = 0; k < count; k++) {
      const at = offset + k * size;
      if (at + size > bytes.length) break;
      const v = size === 1 ? dv.getUint8(at) : size === 2 ? dv.getUint16(at, true) : dv.getUint32(at, true);
      if (v > m) m = v;
    }
    return m;
  };

  const drawElements = (s, mode, count, type, indices, instances) => {
    if (count < 0) return s.error(GL.INVALID_VALUE);
    const gl = s.gl;
    const clientIndices = s.vao.elements === null;
    const bytes = count * typeSize(type);
    if (hasClientArrays(s)) {
      const src = clientIndices ? cx.mem.bytes(indices, bytes) : s.shadow.get(s.vao.elements);
      const end = src ? maxIndex(src, type, clientIndices ? 0 : indices, count) + 1 : 0;
      clientArrays(s, end);
    }
    let offset = indices;
    if (clientIndices) {
      if (count === 0) return;
      if (!s.scratchIndex) s.scratchIndex = gl.createBuffer();
      gl.bindBuffer(GL.ELEMENT_ARRAY_BUFFER, s.scratchIndex);
      gl.bufferData(GL.ELEMENT_ARRAY_BUFFER, u8(indices, bytes), GL.STREAM_DRAW, indices, bytes);
      offset = 0;
    }
    if (instances === undefined) gl.drawElements(mode, count, type, offset);
    else gl.drawElementsInstanced(mode, count, type, offset, instances);
    if (clientIndices) gl.bindBuffer(GL.ELEMENT_ARRAY_BUFFER, null);
  };

  /** The pixels at `ptr` for a TexImage, swizzled from BGRA when asked. */
  const texPixels = (s, f, w, h, format, ptr) => {
    if (ptr === 0) return null;
    const bytes = imageBytes(w, h, format, f.type, s.unpackAlign);
    if (bytes === 0) return null;
    const v = pixelsView(f.type, ptr, bytes);
    if (!f.swizzle) return v;
    const c = new Uint8Array(cx.mem.bytes(ptr, bytes));
    for (let k = 0; k + 3 < c.length; k += 4) {
      const b = c[k];
      c[k] = c[k + 2];
      c[k + 2] = b;
    }
    return c;
  };

  return { cx, states, st, forget, def, u8, pixelsView, f32s, i32s, names, putString, cstr, prog, deleter, generator, is, drawArrays, drawElements, texPixels };
}
