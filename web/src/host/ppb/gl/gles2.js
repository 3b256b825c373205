// PPB_OpenGLES2;1.0 on WebGL 2: each function a WebGL call on the context's GlState
// (common.js), with what GLES 2 had and WebGL lacks made up there.

import { GL, imageBytes, numbers, objName, record, texFormat } from "./common.js";

// What GetString answers (Chrome's Pepper contexts said "OpenGL ES 2.0 Chromium"; apps
// parse the "OpenGL ES 2.0" prefix).
const STRINGS = {
  [GL.VENDOR]: "pexe2wasm",
  [GL.RENDERER]: "WebGL 2 (pexe2wasm)",
  [GL.VERSION]: "OpenGL ES 2.0 (pexe2wasm on WebGL 2)",
  [GL.SHADING_LANGUAGE_VERSION]: "OpenGL ES GLSL ES 1.0 (pexe2wasm on WebGL 2)",
};

/** Registers PPB_OpenGLES2;1.0 for the worker context of `g` (common.js glShared). */
export function register(g) {
  const { cx, def, u8, pixelsView, f32s, i32s, putString, cstr, prog, deleter, generator, is, drawArrays, drawElements, texPixels } = g;
  const gl2 = def("PPB_OpenGLES2;1.0");

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
    // Registered with the described arity, n + 2: for n < 4 the missing values are
    // undefined and the WebGL call drops them (WebIDL ignores extra arguments).
    const scalar = (k) => (s, loc, a, b, c, d) => (loc = U(s, loc)) && s.gl[set(k)](loc, a, b, c, d);
    gl2(`Uniform${n}f`, scalar("f"), n + 2);
    gl2(`Uniform${n}i`, scalar("i"), n + 2);
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
}
