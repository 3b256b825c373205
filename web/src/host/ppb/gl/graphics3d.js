// PPB_Graphics3D;1.0 on WebGL 2 (the GL calls are gles2.js and extensions.js).
//
// A context lives in the worker of the thread that created it: an OffscreenCanvas of the
// context's size with a WebGL 2 context, so every GL call is a direct WebGL call where it
// is made, with no cross-thread round trip (docs/JS-HOST.md, "GL, 2D, audio, input"). GL
// calls on a context from another thread are dropped (Chrome's contexts were not
// thread-safe either), and the console says so once. SwapBuffers shows the drawing buffer
// on the instance's canvas when the context is bound: drawn there directly from the
// instance worker, or sent as an ImageBitmap from a thread's worker.

import { FIELDS, KIND } from "../../resources.js";
import { threadFrame } from "../graphics.js";
import { PP_ERROR as E } from "../../contract.js";
import { TO_MAIN } from "../../protocol.js";
import { GlState } from "./common.js";

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

/** Registers PPB_Graphics3D;1.0 for the worker context of `g` (common.js glShared). */
export function register(reg, g) {
  const { cx, states, st, forget } = g;
  let warnedWebgl = false;
  const fieldsOf = (res) => {
    const b = cx.res.of(res, KIND.GRAPHICS_3D);
    return b < 0 ? -1 : b + FIELDS;
  };

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

  // The last reference to a context is gone: its WebGL context is let go (in its worker)
  // and it is no longer the bound device.
  reg.onRelease(KIND.GRAPHICS_3D, (res) => {
    forget(res)?.gl.getExtension("WEBGL_lose_context")?.loseContext();
    if (cx.gfx.bound === res) cx.gfx.bound = 0;
  });
}
