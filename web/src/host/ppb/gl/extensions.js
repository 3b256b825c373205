// The GLES 2 extension interfaces Chrome offered to Pepper, on WebGL 2 (most are in its
// core): InstancedArrays, FramebufferBlit, FramebufferMultisample, ChromiumEnableFeature,
// ChromiumMapSub, Query, VertexArrayObject and DrawBuffers(Dev).

import { GL, imageBytes, numbers, objName, texFormat, VertexArray } from "./common.js";

/** Registers the extension interfaces for the worker context of `g` (common.js glShared). */
export function register(g) {
  const { cx, def, u8, names, deleter, generator, is, drawArrays, drawElements, texPixels } = g;
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
}
