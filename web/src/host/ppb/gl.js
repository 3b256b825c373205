// PPB_Graphics3D;1.0, PPB_OpenGLES2;1.0 and its extension interfaces, on WebGL 2.
//
// A context lives in the worker of the thread that created it: an OffscreenCanvas of the
// context's size with a WebGL 2 context, so every GL call is a direct WebGL call where it
// is made, with no cross-thread round trip (docs/JS-HOST.md, "GL, 2D, audio, input"). GL
// calls on a context from another thread are dropped (Chrome's contexts were not
// thread-safe either), and the console says so once. SwapBuffers shows the drawing buffer
// on the instance's canvas when the context is bound: drawn there directly from the
// instance worker, or sent as an ImageBitmap from a thread's worker.
//
// What WebGL lacks that GLES 2 (as Chrome's command buffer gave it to Pepper) had, this
// file makes up: integer names (GL names map to WebGL objects, names made on first bind as
// with bind_generates_resource), integer uniform locations (an index in the program's
// table), client-side vertex and index arrays (copied into scratch buffers at each draw),
// GLES 2 texture formats (float, half-float, depth, BGRA mapped to WebGL 2's), strings
// handed out as pointers into module memory, and the CHROMIUM map-sub extension.

import { FIELDS, KIND } from "../resources.js";
import { threadFrame } from "./graphics.js";
import { PP_ERROR as E } from "../contract.js";
import { TO_MAIN } from "../protocol.js";

const G3 = { W: 0, H: 1, TID: 2 };
const MAX_SIDE = 16384;

// PP_Graphics3DAttrib.
const A = {
  ALPHA_SIZE: 0x3021,
  BLUE_SIZE: 0x3022,
  GREEN_SIZE: 0x3023,
  RED_SIZE: 0x3024,
  DEPTH_SIZE: 0x3025,
  STENCIL_SIZE: 0x3026,
  SAMPLES: 0x3031,
  SAMPLE_BUFFERS: 0x3032,
  NONE: 0x3038,
  HEIGHT: 0x3056,
  WIDTH: 0x3057,
  SWAP_BEHAVIOR: 0x3093,
  BUFFER_PRESERVED: 0x3094,
  BUFFER_DESTROYED: 0x3095,
  GPU_PREFERENCE: 0x11000,
};

// GL enums used below (the GLES 2 values; WebGL 2 shares them).
const GL = {
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

// What GetString answers (Chrome's Pepper contexts said "OpenGL ES 2.0 Chromium"; apps
// parse the "OpenGL ES 2.0" prefix).
const STRINGS = {
  [GL.VENDOR]: "pexe2wasm",
  [GL.RENDERER]: "WebGL 2 (pexe2wasm)",
  [GL.VERSION]: "OpenGL ES 2.0 (pexe2wasm on WebGL 2)",
  [GL.SHADING_LANGUAGE_VERSION]: "OpenGL ES GLSL ES 1.0 (pexe2wasm on WebGL 2)",
};
// GLES 2 extensions WebGL 2 has in its core, named as Chrome named them to Pepper.
const CORE_EXTENSIONS = [
  "GL_ANGLE_framebuffer_blit",
  "GL_ANGLE_framebuffer_multisample",
  "GL_ANGLE_instanced_arrays",
  "GL_CHROMIUM_map_sub",
  "GL_EXT_blend_minmax",
  "GL_EXT_draw_buffers",
  "GL_EXT_occlusion_query_boolean",
  "GL_OES_depth24",
  "GL_OES_depth_texture",
  "GL_OES_element_index_uint",
  "GL_OES_packed_depth_stencil",
  "GL_OES_rgb8_rgba8",
  "GL_OES_standard_derivatives",
  "GL_OES_texture_float",
  "GL_OES_texture_half_float",
  "GL_OES_texture_npot",
  "GL_OES_vertex_array_object",
];
// WebGL extensions asked for at creation, and the GLES 2 names they add to EXTENSIONS.
const OPTIONAL_EXTENSIONS = {
  EXT_texture_filter_anisotropic: "GL_EXT_texture_filter_anisotropic",
  WEBGL_compressed_texture_s3tc: "GL_EXT_texture_compression_dxt1 GL_CHROMIUM_texture_compression_dxt3 GL_CHROMIUM_texture_compression_dxt5",
  WEBGL_compressed_texture_etc1: "GL_OES_compressed_ETC1_RGB8_texture",
  EXT_color_buffer_float: "GL_EXT_color_buffer_float",
  OES_texture_float_linear: "GL_OES_texture_float_linear",
};

/** Bytes per element of a vertex attribute or index type. */
function typeSize(type) {
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
function components(format) {
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
function pixelBytes(format, type) {
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
function imageBytes(w, h, format, type, align) {
  if (w <= 0 || h <= 0) return 0;
  const row = w * pixelBytes(format, type);
  const stride = Math.ceil(row / align) * align;
  return stride * (h - 1) + row;
}

/** The WebGL 2 form of a GLES 2 (internalformat, format, type) for TexImage2D. */
function texFormat(internal, format, type) {
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
class Names {
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
class VertexArray {
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
class GlState {
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
function record(obj, isProgram) {
  return { obj, isProgram, locs: [], locByName: new Map() };
}

function objName(v) {
  return v && typeof v === "object" && "ppName" in v ? v.ppName : 0;
}

/** A WebGL answer as the numbers GL writes: booleans 1/0, objects their GL names, none 0. */
function numbers(v) {
  if (v === null || v === undefined || typeof v === "string") return [0];
  if (typeof v === "boolean") return [v ? 1 : 0];
  if (typeof v === "number") return [v];
  if (ArrayBuffer.isView(v) || Array.isArray(v)) return Array.from(/** @type {ArrayLike<number | boolean>} */ (v), (x) => (typeof x === "boolean" ? (x ? 1 : 0) : x));
  return [objName(v)];
}

export function register(reg, cx) {
  const states = (cx.gl ??= new Map());
  let warnedThread = false;
  let warnedWebgl = false;
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
  const fieldsOf = (res) => {
    const b = cx.res.of(res, KIND.GRAPHICS_3D);
    return b < 0 ? -1 : b + FIELDS;
  };

  // --- PPB_Graphics3D;1.0 -----------------------------------------------------------------
  const G3D = "PPB_Graphics3D;1.0";
  const MAX = { [A.WIDTH]: MAX_SIDE, [A.HEIGHT]: MAX_SIDE, [A.ALPHA_SIZE]: 8, [A.BLUE_SIZE]: 8, [A.GREEN_SIZE]: 8, [A.RED_SIZE]: 8, [A.DEPTH_SIZE]: 24, [A.STENCIL_SIZE]: 8, [A.SAMPLES]: 4, [A.SAMPLE_BUFFERS]: 1 };
  reg.def(G3D, "GetAttribMaxValue", (_instance, attribute, value) => {
    const v = MAX[attribute];
    if (v === undefined || value === 0) return E.BADARGUMENT;
    cx.mem.setI32(value, v);
    return E.OK;
  });
  /** The attribute list at `ptr` as a Map (at most 64 pairs; a list must end with NONE). */
  const attribs = (ptr) => {
    const m = new Map();
    if (ptr === 0) return m;
    for (let i = 0; i < 64; i++) {
      const k = cx.mem.i32(ptr + 8 * i);
      if (k === A.NONE) return m;
      m.set(k, cx.mem.i32(ptr + 8 * i + 4));
    }
    return null;
  };
  reg.def(G3D, "Create", (instance, _share, list) => {
    if (instance !== cx.instance) return 0;
    const a = attribs(list);
    if (!a) return 0;
    const w = a.get(A.WIDTH) ?? 0;
    const h = a.get(A.HEIGHT) ?? 0;
    if (w < 0 || h < 0 || w > MAX_SIDE || h > MAX_SIDE) return 0;
    if (typeof OffscreenCanvas !== "function") return 0;
    const canvas = new OffscreenCanvas(Math.max(1, w), Math.max(1, h));
    const gl = canvas.getContext("webgl2", {
      alpha: (a.get(A.ALPHA_SIZE) ?? 0) > 0,
      depth: (a.get(A.DEPTH_SIZE) ?? 0) > 0,
      stencil: (a.get(A.STENCIL_SIZE) ?? 0) > 0,
      antialias: (a.get(A.SAMPLES) ?? 0) > 0 || (a.get(A.SAMPLE_BUFFERS) ?? 0) > 0,
      premultipliedAlpha: true,
      preserveDrawingBuffer: a.get(A.SWAP_BEHAVIOR) === A.BUFFER_PRESERVED,
      powerPreference: a.get(A.GPU_PREFERENCE) === 0x11001 ? "low-power" : "high-performance",
    });
    if (!gl) {
      if (!warnedWebgl) {
        warnedWebgl = true;
        cx.console(
          "error",
          "pexe2wasm: this browser gave no WebGL 2 context to an OffscreenCanvas in a worker, so Graphics3D.Create fails " +
            "(is hardware acceleration or WebGL turned off? WebKitGTK offers no WebGL in workers; Safari does from version 17)",
        );
      }
      return 0;
    }
    const extNames = [...CORE_EXTENSIONS];
    for (const [webgl, gles] of Object.entries(OPTIONAL_EXTENSIONS)) {
      if (gl.getExtension(webgl)) extNames.push(gles);
    }
    const res = cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.GRAPHICS_3D);
      const b = cx.res.base(id) + FIELDS;
      cx.h[b + G3.W] = canvas.width;
      cx.h[b + G3.H] = canvas.height;
      cx.h[b + G3.TID] = cx.tid;
      return id;
    });
    states.set(res, new GlState(res, canvas, gl, extNames.sort().join(" ")));
    return res;
  });
  reg.def(G3D, "IsGraphics3D", (res) => (fieldsOf(res) >= 0 ? 1 : 0));
  reg.def(G3D, "GetAttribs", (res, list) => {
    const b = fieldsOf(res);
    if (b < 0) return E.BADRESOURCE;
    if (list === 0) return E.BADARGUMENT;
    const s = states.get(res);
    const ca = s?.gl.getContextAttributes() ?? {};
    for (let i = 0; i < 64; i++) {
      const k = cx.mem.i32(list + 8 * i);
      if (k === A.NONE) return E.OK;
      let v;
      switch (k) {
        case A.WIDTH:
          v = cx.h[b + G3.W];
          break;
        case A.HEIGHT:
          v = cx.h[b + G3.H];
          break;
        case A.RED_SIZE:
        case A.GREEN_SIZE:
        case A.BLUE_SIZE:
          v = 8;
          break;
        case A.ALPHA_SIZE:
          v = ca.alpha ? 8 : 0;
          break;
        case A.DEPTH_SIZE:
          v = ca.depth ? 24 : 0;
          break;
        case A.STENCIL_SIZE:
          v = ca.stencil ? 8 : 0;
          break;
        case A.SAMPLES:
          v = ca.antialias ? 4 : 0;
          break;
        case A.SAMPLE_BUFFERS:
          v = ca.antialias ? 1 : 0;
          break;
        case A.SWAP_BEHAVIOR:
          v = ca.preserveDrawingBuffer ? A.BUFFER_PRESERVED : A.BUFFER_DESTROYED;
          break;
        default:
          return E.BADARGUMENT;
      }
      cx.mem.setI32(list + 8 * i + 4, v);
    }
    return E.BADARGUMENT;
  });
  reg.def(G3D, "SetAttribs", (res, list) => {
    if (fieldsOf(res) < 0) return E.BADRESOURCE;
    // Only the swap behaviour was settable in Chrome, and WebGL fixes it at creation.
    return attribs(list) ? E.OK : E.BADARGUMENT;
  });
  reg.def(G3D, "GetError", (res) => {
    if (fieldsOf(res) < 0) return E.BADRESOURCE;
    const s = states.get(res);
    return s && s.gl.isContextLost() ? E.CONTEXT_LOST : E.OK;
  });
  reg.def(G3D, "ResizeBuffers", (res, w, h) => {
    const b = fieldsOf(res);
    if (b < 0) return E.BADRESOURCE;
    if (w < 0 || h < 0 || w > MAX_SIDE || h > MAX_SIDE) return E.BADARGUMENT;
    const s = st(res);
    if (!s) return E.WRONG_THREAD;
    s.canvas.width = Math.max(1, w);
    s.canvas.height = Math.max(1, h);
    cx.h[b + G3.W] = s.canvas.width;
    cx.h[b + G3.H] = s.canvas.height;
    return E.OK;
  });
  reg.def(G3D, "SwapBuffers", (res, cb) => {
    if (fieldsOf(res) < 0) return E.BADRESOURCE;
    const func = cx.mem.u32(cb);
    const userData = cx.mem.u32(cb + 4);
    if (func === 0 && cx.isMain) return E.BLOCKS_MAIN_THREAD;
    if (func !== 0 && !cx.isMain && !cx.currentLoop) return E.NO_MESSAGE_LOOP;
    const s = st(res);
    if (!s) return E.WRONG_THREAD;
    if (s.swapping) return E.INPROGRESS;
    present(s);
    if (cx.isMain) {
      s.swapping = true;
      cx.gfx.nextFrame(() => {
        s.swapping = false;
        cx.runCallback(func, userData, E.OK);
      });
      return E.COMPLETIONPENDING;
    }
    return threadFrame(cx, s, func, userData);
  });

  /** Shows the drawing buffer on the instance's canvas if the context is bound. */
  const present = (s) => {
    if (cx.isMain) {
      cx.gfx.show3d(s.res, s.canvas);
    } else if (cx.gfx.boundDevice() === s.res) {
      const bitmap = s.canvas.transferToImageBitmap();
      cx.toMain({ t: TO_MAIN.FRAME, res: s.res, bitmap }, [bitmap]);
    }
  };

  // --- PPB_OpenGLES2;1.0 ------------------------------------------------------------------
  /** `f(state, ...args)` as a PPB function of `arity` parameters (the context first). */
  const on = (f) => {
    switch (f.length) {
      case 1:
        return (c) => {
          const s = st(c);
          return s ? f(s) : 0;
        };
      case 2:
        return (c, a) => {
          const s = st(c);
          return s ? f(s, a) : 0;
        };
      case 3:
        return (c, a, b) => {
          const s = st(c);
          return s ? f(s, a, b) : 0;
        };
      case 4:
        return (c, a, b, d) => {
          const s = st(c);
          return s ? f(s, a, b, d) : 0;
        };
      case 5:
        return (c, a, b, d, e) => {
          const s = st(c);
          return s ? f(s, a, b, d, e) : 0;
        };
      case 6:
        return (c, a, b, d, e, g) => {
          const s = st(c);
          return s ? f(s, a, b, d, e, g) : 0;
        };
      case 7:
        return (c, a, b, d, e, g, h) => {
          const s = st(c);
          return s ? f(s, a, b, d, e, g, h) : 0;
        };
      case 8:
        return (c, a, b, d, e, g, h, i) => {
          const s = st(c);
          return s ? f(s, a, b, d, e, g, h, i) : 0;
        };
      case 9:
        return (c, a, b, d, e, g, h, i, j) => {
          const s = st(c);
          return s ? f(s, a, b, d, e, g, h, i, j) : 0;
        };
      case 10:
        return (c, a, b, d, e, g, h, i, j, k) => {
          const s = st(c);
          return s ? f(s, a, b, d, e, g, h, i, j, k) : 0;
        };
      case 11:
        return (c, a, b, d, e, g, h, i, j, k, l) => {
          const s = st(c);
          return s ? f(s, a, b, d, e, g, h, i, j, k, l) : 0;
        };
      default:
        throw new Error(`no wrapper for ${f.length} parameters`);
    }
  };
  const def = (iface) => (name, f) => reg.def(iface, name, on(f));
  const gl2 = def("PPB_OpenGLES2;1.0");

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

  gl2("ActiveTexture", (s, t) => s.gl.activeTexture(t));
  gl2("AttachShader", (s, p, sh) => {
    const a = prog(s, p);
    const b = prog(s, sh);
    if (a && b) s.gl.attachShader(a.obj, b.obj);
  });
  gl2("BindAttribLocation", (s, p, index, name) => {
    const a = prog(s, p);
    if (a) s.gl.bindAttribLocation(a.obj, index, cx.mem.cstring(name));
  });
  gl2("BindBuffer", (s, target, name) => {
    const o = s.buffers.bind(name);
    s.gl.bindBuffer(target, o);
    if (target === GL.ARRAY_BUFFER) s.arrayBuffer = o;
    else if (target === GL.ELEMENT_ARRAY_BUFFER) s.vao.elements = o;
  });
  gl2("BindFramebuffer", (s, target, name) => s.gl.bindFramebuffer(target, s.framebuffers.bind(name)));
  gl2("BindRenderbuffer", (s, target, name) => s.gl.bindRenderbuffer(target, s.renderbuffers.bind(name)));
  gl2("BindTexture", (s, target, name) => s.gl.bindTexture(target, s.textures.bind(name)));
  gl2("BlendColor", (s, r, g, b, a) => s.gl.blendColor(r, g, b, a));
  gl2("BlendEquation", (s, m) => s.gl.blendEquation(m));
  gl2("BlendEquationSeparate", (s, a, b) => s.gl.blendEquationSeparate(a, b));
  gl2("BlendFunc", (s, a, b) => s.gl.blendFunc(a, b));
  gl2("BlendFuncSeparate", (s, a, b, c, d) => s.gl.blendFuncSeparate(a, b, c, d));
  /** Keeps a copy of an element array buffer's bytes (for client arrays' vertex counts). */
  const shadowOf = (s, target) => (target === GL.ELEMENT_ARRAY_BUFFER ? s.vao.elements : null);
  gl2("BufferData", (s, target, size, data, usage) => {
    if (size < 0) return s.error(GL.INVALID_VALUE);
    if (data === 0) s.gl.bufferData(target, size, usage);
    else s.gl.bufferData(target, u8(data, size), usage, data, size);
    const o = shadowOf(s, target);
    if (o) s.shadow.set(o, data === 0 ? new Uint8Array(size) : cx.mem.bytes(data, size));
  });
  gl2("BufferSubData", (s, target, offset, size, data) => {
    if (size < 0 || offset < 0) return s.error(GL.INVALID_VALUE);
    if (size === 0) return;
    s.gl.bufferSubData(target, offset, u8(data, size), data, size);
    const o = shadowOf(s, target);
    const sh = o && s.shadow.get(o);
    if (sh && offset + size <= sh.length) sh.set(cx.mem.bytes(data, size), offset);
  });
  gl2("CheckFramebufferStatus", (s, t) => s.gl.checkFramebufferStatus(t));
  gl2("Clear", (s, m) => s.gl.clear(m));
  gl2("ClearColor", (s, r, g, b, a) => s.gl.clearColor(r, g, b, a));
  gl2("ClearDepthf", (s, d) => s.gl.clearDepth(d));
  gl2("ClearStencil", (s, v) => s.gl.clearStencil(v));
  gl2("ColorMask", (s, r, g, b, a) => s.gl.colorMask(!!r, !!g, !!b, !!a));
  gl2("CompileShader", (s, sh) => {
    const r = prog(s, sh);
    if (r) s.gl.compileShader(r.obj);
  });
  gl2("CompressedTexImage2D", (s, target, level, internal, w, h, border, size, data) => {
    if (size < 0) return s.error(GL.INVALID_VALUE);
    s.gl.compressedTexImage2D(target, level, internal, w, h, border, u8(data, size), data, size);
  });
  gl2("CompressedTexSubImage2D", (s, target, level, x, y, w, h, format, size, data) => {
    if (size < 0) return s.error(GL.INVALID_VALUE);
    s.gl.compressedTexSubImage2D(target, level, x, y, w, h, format, u8(data, size), data, size);
  });
  gl2("CopyTexImage2D", (s, t, l, f, x, y, w, h, b) => s.gl.copyTexImage2D(t, l, f, x, y, w, h, b));
  gl2("CopyTexSubImage2D", (s, t, l, xo, yo, x, y, w, h) => s.gl.copyTexSubImage2D(t, l, xo, yo, x, y, w, h));
  gl2("CreateProgram", (s) => {
    const o = s.gl.createProgram();
    if (!o) return 0;
    const name = s.programs.gen();
    o.ppName = name;
    s.programs.objs.set(name, record(o, true));
    return name;
  });
  gl2("CreateShader", (s, type) => {
    const o = s.gl.createShader(type);
    if (!o) return 0;
    const name = s.programs.gen();
    o.ppName = name;
    s.programs.objs.set(name, record(o, false));
    return name;
  });
  gl2("CullFace", (s, m) => s.gl.cullFace(m));
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
  gl2("DeleteBuffers", deleter("buffers", (s, o) => s.gl.deleteBuffer(o)));
  gl2("DeleteFramebuffers", deleter("framebuffers", (s, o) => s.gl.deleteFramebuffer(o)));
  gl2("DeleteProgram", (s, p) => {
    const r = s.programs.get(p);
    if (!r) return p === 0 ? undefined : s.error(GL.INVALID_VALUE);
    s.programs.delete(p);
    s.gl.deleteProgram(r.obj);
    if (s.program === r) s.program = null;
  });
  gl2("DeleteRenderbuffers", deleter("renderbuffers", (s, o) => s.gl.deleteRenderbuffer(o)));
  gl2("DeleteShader", (s, sh) => {
    const r = s.programs.get(sh);
    if (!r) return sh === 0 ? undefined : s.error(GL.INVALID_VALUE);
    s.programs.delete(sh);
    s.gl.deleteShader(r.obj);
  });
  gl2("DeleteTextures", deleter("textures", (s, o) => s.gl.deleteTexture(o)));
  gl2("DepthFunc", (s, f) => s.gl.depthFunc(f));
  gl2("DepthMask", (s, f) => s.gl.depthMask(!!f));
  gl2("DepthRangef", (s, n, f) => s.gl.depthRange(n, f));
  gl2("DetachShader", (s, p, sh) => {
    const a = prog(s, p);
    const b = prog(s, sh);
    if (a && b) s.gl.detachShader(a.obj, b.obj);
  });
  gl2("Disable", (s, c) => s.gl.disable(c));
  gl2("DisableVertexAttribArray", (s, i) => {
    if (i >= s.maxAttribs) return s.error(GL.INVALID_VALUE);
    s.vao.attribs[i].enabled = false;
    s.vao.recount();
    s.gl.disableVertexAttribArray(i);
  });

  /**
   * Copies the client-side arrays a draw of vertices [0, end) reads into scratch buffers
   * and points the attributes at them; returns a function that restores the pointers.
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
  gl2("DrawArrays", (s, mode, first, count) => drawArrays(s, mode, first, count, undefined));
  gl2("DrawElements", (s, mode, count, type, indices) => drawElements(s, mode, count, type, indices, undefined));
  gl2("Enable", (s, c) => s.gl.enable(c));
  gl2("EnableVertexAttribArray", (s, i) => {
    if (i >= s.maxAttribs) return s.error(GL.INVALID_VALUE);
    s.vao.attribs[i].enabled = true;
    s.vao.recount();
    s.gl.enableVertexAttribArray(i);
  });
  gl2("Finish", (s) => s.gl.finish());
  gl2("Flush", (s) => s.gl.flush());
  gl2("FramebufferRenderbuffer", (s, t, att, rt, rb) => s.gl.framebufferRenderbuffer(t, att, rt, s.renderbuffers.bind(rb)));
  gl2("FramebufferTexture2D", (s, t, att, tt, tex, level) => s.gl.framebufferTexture2D(t, att, tt, s.textures.bind(tex), level));
  gl2("FrontFace", (s, m) => s.gl.frontFace(m));
  const generator = (table) => (s, n, ptr) => {
    if (n < 0) return s.error(GL.INVALID_VALUE);
    cx.mem.check(ptr, 4 * n);
    for (let k = 0; k < n; k++) cx.mem.setI32(ptr + 4 * k, s[table].gen());
  };
  gl2("GenBuffers", generator("buffers"));
  gl2("GenerateMipmap", (s, t) => s.gl.generateMipmap(t));
  gl2("GenFramebuffers", generator("framebuffers"));
  gl2("GenRenderbuffers", generator("renderbuffers"));
  gl2("GenTextures", generator("textures"));
  const active = (which) => (s, p, index, size, len, sizeOut, typeOut, name) => {
    const r = prog(s, p);
    if (!r) return;
    const info = which === "attrib" ? s.gl.getActiveAttrib(r.obj, index) : s.gl.getActiveUniform(r.obj, index);
    if (!info) return s.error(GL.INVALID_VALUE);
    putString(info.name, size, len, name);
    if (sizeOut) cx.mem.setI32(sizeOut, info.size);
    if (typeOut) cx.mem.setI32(typeOut, info.type);
  };
  gl2("GetActiveAttrib", active("attrib"));
  gl2("GetActiveUniform", active("uniform"));
  gl2("GetAttachedShaders", (s, p, max, count, out) => {
    const r = prog(s, p);
    if (!r) return;
    const list = (s.gl.getAttachedShaders(r.obj) ?? []).slice(0, Math.max(0, max));
    list.forEach((o, k) => cx.mem.setI32(out + 4 * k, objName(o)));
    if (count) cx.mem.setI32(count, list.length);
  });
  gl2("GetAttribLocation", (s, p, name) => {
    const r = prog(s, p);
    return r ? s.gl.getAttribLocation(r.obj, cx.mem.cstring(name)) : -1;
  });

  /** gl.getParameter(pname) as a list of numbers (objects as their GL names). */
  const param = (s, pname) => {
    const gl = s.gl;
    switch (pname) {
      case GL.NUM_COMPRESSED_TEXTURE_FORMATS:
        return [(gl.getParameter(GL.COMPRESSED_TEXTURE_FORMATS) ?? []).length];
      case GL.NUM_SHADER_BINARY_FORMATS:
        return [0];
      case GL.SHADER_BINARY_FORMATS:
        return [];
      case GL.SHADER_COMPILER:
        return [1];
      case GL.UNPACK_ALIGNMENT:
        return [s.unpackAlign];
      case GL.PACK_ALIGNMENT:
        return [s.packAlign];
      default:
        break;
    }
    return numbers(gl.getParameter(pname));
  };
  gl2("GetBooleanv", (s, pname, out) => {
    param(s, pname).forEach((x, k) => cx.mem.write(out + k, [x ? 1 : 0]));
  });
  gl2("GetBufferParameteriv", (s, t, pname, out) => cx.mem.setI32(out, s.gl.getBufferParameter(t, pname) ?? 0));
  gl2("GetError", (s) => {
    const e = s.err;
    s.err = GL.NO_ERROR;
    return e !== GL.NO_ERROR ? e : s.gl.getError();
  });
  gl2("GetFloatv", (s, pname, out) => {
    param(s, pname).forEach((x, k) => cx.mem.setF32(out + 4 * k, x));
  });
  gl2("GetFramebufferAttachmentParameteriv", (s, t, att, pname, out) => {
    cx.mem.setI32(out, numbers(s.gl.getFramebufferAttachmentParameter(t, att, pname))[0]);
  });
  gl2("GetIntegerv", (s, pname, out) => {
    param(s, pname).forEach((x, k) => cx.mem.setI32(out + 4 * k, Math.round(x)));
  });
  gl2("GetProgramiv", (s, p, pname, out) => {
    const r = prog(s, p);
    if (!r) return;
    const gl = s.gl;
    let v;
    if (pname === GL.INFO_LOG_LENGTH) {
      const log = gl.getProgramInfoLog(r.obj) ?? "";
      v = log.length ? new TextEncoder().encode(log).length + 1 : 0;
    } else if (pname === GL.ACTIVE_ATTRIBUTE_MAX_LENGTH || pname === GL.ACTIVE_UNIFORM_MAX_LENGTH) {
      const attrib = pname === GL.ACTIVE_ATTRIBUTE_MAX_LENGTH;
      const n = gl.getProgramParameter(r.obj, attrib ? GL.ACTIVE_ATTRIBUTES : GL.ACTIVE_UNIFORMS) ?? 0;
      v = 0;
      for (let k = 0; k < n; k++) {
        const info = attrib ? gl.getActiveAttrib(r.obj, k) : gl.getActiveUniform(r.obj, k);
        if (info) v = Math.max(v, info.name.length + 1);
      }
    } else {
      const x = gl.getProgramParameter(r.obj, pname);
      v = numbers(x)[0];
    }
    cx.mem.setI32(out, v);
  });
  gl2("GetProgramInfoLog", (s, p, size, len, out) => {
    const r = prog(s, p);
    if (r) putString(s.gl.getProgramInfoLog(r.obj), size, len, out);
  });
  gl2("GetRenderbufferParameteriv", (s, t, pname, out) => cx.mem.setI32(out, s.gl.getRenderbufferParameter(t, pname) ?? 0));
  gl2("GetShaderiv", (s, sh, pname, out) => {
    const r = prog(s, sh);
    if (!r) return;
    const gl = s.gl;
    let v;
    if (pname === GL.INFO_LOG_LENGTH) {
      const log = gl.getShaderInfoLog(r.obj) ?? "";
      v = log.length ? new TextEncoder().encode(log).length + 1 : 0;
    } else if (pname === GL.SHADER_SOURCE_LENGTH) {
      const src = gl.getShaderSource(r.obj) ?? "";
      v = src.length ? new TextEncoder().encode(src).length + 1 : 0;
    } else {
      const x = gl.getShaderParameter(r.obj, pname);
      v = numbers(x)[0];
    }
    cx.mem.setI32(out, v);
  });
  gl2("GetShaderInfoLog", (s, sh, size, len, out) => {
    const r = prog(s, sh);
    if (r) putString(s.gl.getShaderInfoLog(r.obj), size, len, out);
  });
  gl2("GetShaderPrecisionFormat", (s, shaderType, precisionType, range, precision) => {
    const f = s.gl.getShaderPrecisionFormat(shaderType, precisionType);
    if (!f) return;
    if (range) {
      cx.mem.setI32(range, f.rangeMin);
      cx.mem.setI32(range + 4, f.rangeMax);
    }
    if (precision) cx.mem.setI32(precision, f.precision);
  });
  gl2("GetShaderSource", (s, sh, size, len, out) => {
    const r = prog(s, sh);
    if (r) putString(s.gl.getShaderSource(r.obj), size, len, out);
  });
  gl2("GetString", (s, name) => {
    if (name === GL.EXTENSIONS) return cstr(s.extNames);
    const t = STRINGS[name];
    if (t === undefined) {
      s.error(GL.INVALID_ENUM);
      return 0;
    }
    return cstr(t);
  });
  gl2("GetTexParameterfv", (s, t, pname, out) => cx.mem.setF32(out, s.gl.getTexParameter(t, pname) ?? 0));
  gl2("GetTexParameteriv", (s, t, pname, out) => {
    const v = s.gl.getTexParameter(t, pname);
    cx.mem.setI32(out, numbers(v)[0]);
  });
  /** The WebGL uniform location for GL location `loc` of the program in use, or of `p`. */
  const location = (s, r, loc) => (r && loc >= 0 ? (r.locs[loc] ?? null) : null);
  const getUniform = (float) => (s, p, loc, out) => {
    const r = prog(s, p);
    const l = location(s, r, loc);
    if (!l) return s.error(GL.INVALID_OPERATION);
    const v = s.gl.getUniform(r.obj, l);
    const list = typeof v === "number" || typeof v === "boolean" ? [Number(v)] : Array.from(v ?? [], Number);
    list.forEach((x, k) => (float ? cx.mem.setF32(out + 4 * k, x) : cx.mem.setI32(out + 4 * k, x)));
  };
  gl2("GetUniformfv", getUniform(true));
  gl2("GetUniformiv", getUniform(false));
  gl2("GetUniformLocation", (s, p, namePtr) => {
    const r = prog(s, p);
    if (!r) return -1;
    const name = cx.mem.cstring(namePtr);
    const known = r.locByName.get(name);
    if (known !== undefined) return known;
    const l = s.gl.getUniformLocation(r.obj, name);
    if (!l) return -1;
    r.locs.push(l);
    r.locByName.set(name, r.locs.length - 1);
    return r.locs.length - 1;
  });
  gl2("GetVertexAttribfv", (s, i, pname, out) => {
    const v = s.gl.getVertexAttrib(i, pname);
    numbers(v).forEach((x, k) => cx.mem.setF32(out + 4 * k, x));
  });
  gl2("GetVertexAttribiv", (s, i, pname, out) => {
    if (i >= s.maxAttribs) return s.error(GL.INVALID_VALUE);
    if (pname === GL.VERTEX_ATTRIB_ARRAY_BUFFER_BINDING && s.vao.attribs[i].client) return cx.mem.setI32(out, 0);
    const v = s.gl.getVertexAttrib(i, pname);
    numbers(v).forEach((x, k) => cx.mem.setI32(out + 4 * k, Math.trunc(x)));
  });
  gl2("GetVertexAttribPointerv", (s, i, pname, out) => {
    if (i >= s.maxAttribs) return s.error(GL.INVALID_VALUE);
    if (pname !== GL.VERTEX_ATTRIB_ARRAY_POINTER) return s.error(GL.INVALID_ENUM);
    cx.mem.setI32(out, s.vao.attribs[i].ptr);
  });
  gl2("Hint", (s, t, m) => s.gl.hint(t, m));
  const is = (table, test) => (s, name) => {
    const o = s[table].get(name);
    return o && test(s.gl, o) ? 1 : 0;
  };
  gl2("IsBuffer", is("buffers", (gl, o) => gl.isBuffer(o)));
  gl2("IsEnabled", (s, c) => (s.gl.isEnabled(c) ? 1 : 0));
  gl2("IsFramebuffer", is("framebuffers", (gl, o) => gl.isFramebuffer(o)));
  gl2("IsProgram", is("programs", (gl, r) => r.isProgram && gl.isProgram(r.obj)));
  gl2("IsRenderbuffer", is("renderbuffers", (gl, o) => gl.isRenderbuffer(o)));
  gl2("IsShader", is("programs", (gl, r) => !r.isProgram && gl.isShader(r.obj)));
  gl2("IsTexture", is("textures", (gl, o) => gl.isTexture(o)));
  gl2("LineWidth", (s, w) => s.gl.lineWidth(w));
  gl2("LinkProgram", (s, p) => {
    const r = prog(s, p);
    if (!r) return;
    s.gl.linkProgram(r.obj);
    // Locations handed out before are void after a link, as in GL.
    r.locs = [];
    r.locByName.clear();
  });
  gl2("PixelStorei", (s, pname, v) => {
    if (pname === GL.UNPACK_ALIGNMENT) s.unpackAlign = v;
    if (pname === GL.PACK_ALIGNMENT) s.packAlign = v;
    s.gl.pixelStorei(pname, v);
  });
  gl2("PolygonOffset", (s, f, u) => s.gl.polygonOffset(f, u));
  gl2("ReadPixels", (s, x, y, w, h, format, type, out) => {
    if (w < 0 || h < 0) return s.error(GL.INVALID_VALUE);
    const bytes = imageBytes(w, h, format, type, s.packAlign);
    if (bytes === 0) return;
    const view = pixelsView(type, out, bytes);
    s.gl.readPixels(x, y, w, h, format, type, view);
    if (view.buffer !== cx.mem.buffer) cx.mem.write(out, new Uint8Array(view.buffer, 0, bytes));
  });
  gl2("ReleaseShaderCompiler", (_s) => {});
  gl2("RenderbufferStorage", (s, t, f, w, h) => s.gl.renderbufferStorage(t, f === GL.DEPTH_STENCIL ? GL.DEPTH24_STENCIL8 : f, w, h));
  gl2("SampleCoverage", (s, v, inv) => s.gl.sampleCoverage(v, !!inv));
  gl2("Scissor", (s, x, y, w, h) => s.gl.scissor(x, y, w, h));
  gl2("ShaderBinary", (s, _n, _shaders, _format, _binary, _length) => s.error(GL.INVALID_ENUM));
  gl2("ShaderSource", (s, sh, count, strs, lens) => {
    const r = prog(s, sh);
    if (!r) return;
    if (count < 0) return s.error(GL.INVALID_VALUE);
    let src = "";
    for (let k = 0; k < count; k++) {
      const p = cx.mem.u32(strs + 4 * k);
      const len = lens ? cx.mem.i32(lens + 4 * k) : -1;
      src += len < 0 ? cx.mem.cstring(p, 1 << 24) : cx.mem.string(p, len);
    }
    s.gl.shaderSource(r.obj, src);
  });
  gl2("StencilFunc", (s, f, ref, mask) => s.gl.stencilFunc(f, ref, mask));
  gl2("StencilFuncSeparate", (s, face, f, ref, mask) => s.gl.stencilFuncSeparate(face, f, ref, mask));
  gl2("StencilMask", (s, m) => s.gl.stencilMask(m));
  gl2("StencilMaskSeparate", (s, face, m) => s.gl.stencilMaskSeparate(face, m));
  gl2("StencilOp", (s, a, b, c) => s.gl.stencilOp(a, b, c));
  gl2("StencilOpSeparate", (s, face, a, b, c) => s.gl.stencilOpSeparate(face, a, b, c));
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
  gl2("TexImage2D", (s, target, level, internal, w, h, border, format, type, pixels) => {
    if (w < 0 || h < 0) return s.error(GL.INVALID_VALUE);
    const f = texFormat(internal, format, type);
    s.gl.texImage2D(target, level, f.internal, w, h, border, f.format, f.type, texPixels(s, f, w, h, format, pixels));
  });
  gl2("TexParameterf", (s, t, p, v) => s.gl.texParameterf(t, p, v));
  gl2("TexParameterfv", (s, t, p, v) => s.gl.texParameterf(t, p, f32s(v, 1)[0]));
  gl2("TexParameteri", (s, t, p, v) => s.gl.texParameteri(t, p, v));
  gl2("TexParameteriv", (s, t, p, v) => s.gl.texParameteri(t, p, i32s(v, 1)[0]));
  gl2("TexSubImage2D", (s, target, level, x, y, w, h, format, type, pixels) => {
    if (w < 0 || h < 0) return s.error(GL.INVALID_VALUE);
    const f = texFormat(format, format, type);
    const data = texPixels(s, f, w, h, format, pixels);
    if (!data) return;
    s.gl.texSubImage2D(target, level, x, y, w, h, f.format, f.type, data);
  });
  // Uniforms: `loc` is an index into the table of the program in use.
  const U = (s, loc) => {
    if (loc === -1) return null;
    const l = location(s, s.program, loc);
    if (!l) s.error(GL.INVALID_OPERATION);
    return l;
  };
  for (const n of [1, 2, 3, 4]) {
    const set = (k) => `uniform${n}${k}`;
    const scalar = (k) => {
      switch (n) {
        case 1:
          return (s, loc, a) => (loc = U(s, loc)) && s.gl[set(k)](loc, a);
        case 2:
          return (s, loc, a, b) => (loc = U(s, loc)) && s.gl[set(k)](loc, a, b);
        case 3:
          return (s, loc, a, b, c) => (loc = U(s, loc)) && s.gl[set(k)](loc, a, b, c);
        default:
          return (s, loc, a, b, c, d) => (loc = U(s, loc)) && s.gl[set(k)](loc, a, b, c, d);
      }
    };
    gl2(`Uniform${n}f`, scalar("f"));
    gl2(`Uniform${n}i`, scalar("i"));
    gl2(`Uniform${n}fv`, (s, loc, count, v) => {
      const l = U(s, loc);
      if (l && count > 0) s.gl[`uniform${n}fv`](l, f32s(v, n * count));
    });
    gl2(`Uniform${n}iv`, (s, loc, count, v) => {
      const l = U(s, loc);
      if (l && count > 0) s.gl[`uniform${n}iv`](l, i32s(v, n * count));
    });
  }
  for (const n of [2, 3, 4]) {
    gl2(`UniformMatrix${n}fv`, (s, loc, count, transpose, v) => {
      const l = U(s, loc);
      // GLES 2 required transpose to be false; WebGL 2 accepts either.
      if (l && count > 0) s.gl[`uniformMatrix${n}fv`](l, !!transpose, f32s(v, n * n * count));
    });
  }
  gl2("UseProgram", (s, p) => {
    if (p === 0) {
      s.program = null;
      return s.gl.useProgram(null);
    }
    const r = prog(s, p);
    if (!r) return;
    s.program = r;
    s.gl.useProgram(r.obj);
  });
  gl2("ValidateProgram", (s, p) => {
    const r = prog(s, p);
    if (r) s.gl.validateProgram(r.obj);
  });
  gl2("VertexAttrib1f", (s, i, x) => s.gl.vertexAttrib1f(i, x));
  gl2("VertexAttrib1fv", (s, i, v) => s.gl.vertexAttrib1fv(i, f32s(v, 1)));
  gl2("VertexAttrib2f", (s, i, x, y) => s.gl.vertexAttrib2f(i, x, y));
  gl2("VertexAttrib2fv", (s, i, v) => s.gl.vertexAttrib2fv(i, f32s(v, 2)));
  gl2("VertexAttrib3f", (s, i, x, y, z) => s.gl.vertexAttrib3f(i, x, y, z));
  gl2("VertexAttrib3fv", (s, i, v) => s.gl.vertexAttrib3fv(i, f32s(v, 3)));
  gl2("VertexAttrib4f", (s, i, x, y, z, w) => s.gl.vertexAttrib4f(i, x, y, z, w));
  gl2("VertexAttrib4fv", (s, i, v) => s.gl.vertexAttrib4fv(i, f32s(v, 4)));
  gl2("VertexAttribPointer", (s, i, size, type, norm, stride, ptr) => {
    if (i >= s.maxAttribs || size < 1 || size > 4 || stride < 0) return s.error(GL.INVALID_VALUE);
    if (type === GL.FIXED) return s.error(GL.INVALID_ENUM);
    const a = s.vao.attribs[i];
    Object.assign(a, { size, type, norm: !!norm, stride, ptr, client: s.arrayBuffer === null, integer: false });
    s.vao.recount();
    // A client array is pointed at its scratch buffer at each draw.
    if (!a.client) s.gl.vertexAttribPointer(i, size, type, !!norm, stride, ptr);
  });
  gl2("Viewport", (s, x, y, w, h) => s.gl.viewport(x, y, w, h));

  // --- the extension interfaces -------------------------------------------------------------
  const inst = def("PPB_OpenGLES2InstancedArrays;1.0");
  inst("DrawArraysInstancedANGLE", (s, mode, first, count, n) => drawArrays(s, mode, first, count, n));
  inst("DrawElementsInstancedANGLE", (s, mode, count, type, indices, n) => drawElements(s, mode, count, type, indices, n));
  inst("VertexAttribDivisorANGLE", (s, i, d) => s.gl.vertexAttribDivisor(i, d));
  def("PPB_OpenGLES2FramebufferBlit;1.0")("BlitFramebufferEXT", (s, a, b, c, d, e, f, g, h, mask, filter) =>
    s.gl.blitFramebuffer(a, b, c, d, e, f, g, h, mask, filter),
  );
  def("PPB_OpenGLES2FramebufferMultisample;1.0")("RenderbufferStorageMultisampleEXT", (s, t, samples, f, w, h) =>
    s.gl.renderbufferStorageMultisample(t, samples, f, w, h),
  );
  // Chrome's optional behaviours (buffers on several targets, GL_FIXED attributes): WebGL
  // allows neither, so every feature is refused, as Chrome refused the ones it lacked.
  def("PPB_OpenGLES2ChromiumEnableFeature;1.0")("EnableFeatureCHROMIUM", (_s, _feature) => 0);

  const mapSub = def("PPB_OpenGLES2ChromiumMapSub;1.0");
  const mapped = (s, bytes, unmap) => {
    if (bytes <= 0) {
      s.error(GL.INVALID_VALUE);
      return 0;
    }
    const p = cx.vars.locked(() => cx.heap.alloc(bytes));
    if (!p) {
      s.error(GL.OUT_OF_MEMORY);
      return 0;
    }
    s.mapped.set(p, { bytes, unmap });
    return p;
  };
  const unmapSub = (s, p) => {
    const m = s.mapped.get(p);
    if (!m) return s.error(GL.INVALID_VALUE);
    s.mapped.delete(p);
    try {
      m.unmap(p);
    } finally {
      cx.vars.locked(() => cx.heap.free(p, m.bytes));
    }
  };
  mapSub("MapBufferSubDataCHROMIUM", (s, target, offset, size, access) => {
    if (access !== GL.WRITE_ONLY) {
      s.error(GL.INVALID_ENUM);
      return 0;
    }
    return mapped(s, size, (p) => s.gl.bufferSubData(target, offset, u8(p, size), p, size));
  });
  mapSub("UnmapBufferSubDataCHROMIUM", unmapSub);
  mapSub("MapTexSubImage2DCHROMIUM", (s, target, level, x, y, w, h, format, type, access) => {
    if (access !== GL.WRITE_ONLY) {
      s.error(GL.INVALID_ENUM);
      return 0;
    }
    const bytes = imageBytes(w, h, format, type, s.unpackAlign);
    return mapped(s, bytes, (p) => {
      const f = texFormat(format, format, type);
      s.gl.texSubImage2D(target, level, x, y, w, h, f.format, f.type, texPixels(s, f, w, h, format, p));
    });
  });
  mapSub("UnmapTexSubImage2DCHROMIUM", unmapSub);

  const q = def("PPB_OpenGLES2Query;1.0");
  q("GenQueriesEXT", generator("queries"));
  q("DeleteQueriesEXT", deleter("queries", (s, o) => s.gl.deleteQuery(o)));
  q("IsQueryEXT", is("queries", (gl, o) => gl.isQuery(o)));
  q("BeginQueryEXT", (s, target, id) => s.gl.beginQuery(target, s.queries.bind(id)));
  q("EndQueryEXT", (s, target) => s.gl.endQuery(target));
  q("GetQueryivEXT", (s, target, pname, out) => {
    const v = pname === GL.CURRENT_QUERY ? s.gl.getQuery(target, pname) : null;
    cx.mem.setI32(out, objName(v));
  });
  q("GetQueryObjectuivEXT", (s, id, pname, out) => {
    const o = s.queries.get(id);
    if (!o) return s.error(GL.INVALID_OPERATION);
    const v = s.gl.getQueryParameter(o, pname);
    cx.mem.setI32(out, numbers(v)[0]);
  });

  const vao = def("PPB_OpenGLES2VertexArrayObject;1.0");
  vao("GenVertexArraysOES", generator("vertexArrays"));
  vao("DeleteVertexArraysOES", (s, n, ptr) => {
    if (n < 0) return s.error(GL.INVALID_VALUE);
    for (const name of names(ptr, n)) {
      const o = s.vertexArrays.delete(name);
      if (!o) continue;
      if (s.vao === o.state) s.vao = s.defaultVao;
      s.gl.deleteVertexArray(o);
    }
  });
  vao("IsVertexArrayOES", is("vertexArrays", (gl, o) => gl.isVertexArray(o)));
  vao("BindVertexArrayOES", (s, name) => {
    const o = s.vertexArrays.bind(name);
    if (o && !o.state) o.state = new VertexArray(s.maxAttribs);
    s.vao = o ? o.state : s.defaultVao;
    s.gl.bindVertexArray(o);
  });
  def("PPB_OpenGLES2DrawBuffers(Dev);1.0")("DrawBuffersEXT", (s, n, bufs) => {
    if (n < 0) return s.error(GL.INVALID_VALUE);
    s.gl.drawBuffers(names(bufs, n));
  });

  // The last reference to a context is gone: it is no longer the bound device.
  reg.onRelease(KIND.GRAPHICS_3D, (res) => {
    forgetContext(cx, res);
    if (cx.gfx.bound === res) cx.gfx.bound = 0;
  });
}

/** The last reference to a context is gone: its WebGL context is let go (in its worker). */
function forgetContext(cx, res) {
  const s = cx.gl?.get(res);
  if (!s) return;
  cx.gl.delete(res);
  s.gl.getExtension("WEBGL_lose_context")?.loseContext();
}
