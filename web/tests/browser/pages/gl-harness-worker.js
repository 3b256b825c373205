// The GL harness (harness.html?worker=gl-harness-worker.js): Graphics3D and OpenGLES2 called through the host's
// registry, as the module's main thread calls them, on a real WebGL 2 context; pixels read
// back with ReadPixels into module memory are the oracle. A second context (a module
// thread's) checks that calls on another thread's context are dropped.

import { Context } from "./pexe2wasm/host/context.js";
import { TO_MAIN, TO_PAGE } from "./pexe2wasm/host/protocol.js";
import { glState } from "./pexe2wasm/host/ppb/gl/index.js";
import { boot, checker } from "./harness-boot.js";

const GL = {
  VERTEX_SHADER: 0x8b31,
  FRAGMENT_SHADER: 0x8b30,
  COMPILE_STATUS: 0x8b81,
  LINK_STATUS: 0x8b82,
  INFO_LOG_LENGTH: 0x8b84,
  ARRAY_BUFFER: 0x8892,
  ELEMENT_ARRAY_BUFFER: 0x8893,
  ARRAY_BUFFER_BINDING: 0x8894,
  STATIC_DRAW: 0x88e4,
  FLOAT: 0x1406,
  UNSIGNED_BYTE: 0x1401,
  UNSIGNED_SHORT: 0x1403,
  RGBA: 0x1908,
  BGRA_EXT: 0x80e1,
  TRIANGLES: 0x0004,
  COLOR_BUFFER_BIT: 0x4000,
  VERSION: 0x1f02,
  EXTENSIONS: 0x1f03,
  VIEWPORT: 0x0ba2,
  TEXTURE_2D: 0x0de1,
  TEXTURE_MIN_FILTER: 0x2801,
  TEXTURE_MAG_FILTER: 0x2800,
  NEAREST: 0x2600,
  INVALID_ENUM: 0x0500,
  INVALID_OPERATION: 0x0502,
  WRITE_ONLY: 0x88b9,
  UNPACK_ALIGNMENT: 0x0cf5,
};

self.onmessage = async (e) => {
  const { checks, check } = checker();
  try {
    const consoleLines = [];
    const toPage = (m) => m.t === TO_PAGE.CONSOLE && consoleLines.push(m.text);
    const { memory, hostSab, main, instance } = await boot(e.data.wasm, toPage);
    // A thread's frames reach the instance worker's canvas as the instance worker shows them.
    const toMain = (msg) => msg.t === TO_MAIN.FRAME && main.gfx.show3d(msg.res, msg.bitmap, msg.scaled !== false);
    const thread = new Context({ isMain: false, tid: 1, memory, hostSab, toPage, toMain });
    // The page's canvas, and completion callbacks recorded instead of run.
    main.gfx.canvas = new OffscreenCanvas(20, 10);
    const completed = [];
    main.runCallback = (func, userData, result) => completed.push([func, userData, result]);
    const shown = () => Array.from(main.gfx.canvas.getContext("2d").getImageData(10, 5, 1, 1).data);
    thread.setExports(instance.exports);

    const base = /** @type {(size: number) => number} */ (instance.exports.__ppapi_alloc)(1 << 20);
    const m = main.mem;
    const OUT = base; // 256 bytes of out-parameters
    const ATTRS = base + 256;
    const STR = base + 512;
    const DATA = base + 4096;
    const PIX = base + 65536;
    const f = (cx, iface, name) => cx.registry.get(iface, name).impl;
    const G3 = (name) => f(main, "PPB_Graphics3D;1.0", name);
    const G = (name) => f(main, "PPB_OpenGLES2;1.0", name);
    const X = (iface, name) => f(main, `PPB_OpenGLES2${iface};1.0`, name);
    const putI32s = (at, list) => list.forEach((v, k) => m.setI32(at + 4 * k, v));
    const putF32s = (at, list) => list.forEach((v, k) => m.setF32(at + 4 * k, v));
    const cstr = (at, s) => {
      m.write(at, new TextEncoder().encode(s + "\0"));
      return at;
    };
    const pixel = (ctx, x, y) => {
      m.fill(PIX, 0, 4);
      G("ReadPixels")(ctx, x, y, 1, 1, GL.RGBA, GL.UNSIGNED_BYTE, PIX);
      return Array.from(m.bytes(PIX, 4));
    };
    const near = (got, want) => got.every((v, k) => Math.abs(v - want[k]) <= 2) ? want : got;

    // --- Graphics3D ---
    putI32s(ATTRS, [0x3057, 32, 0x3056, 16, 0x3021, 8, 0x3038]);
    check("Graphics3D.Create for another instance", G3("Create")(99, 0, ATTRS), 0);
    const ctx = G3("Create")(2, 0, ATTRS);
    check("Graphics3D.Create", ctx > 0, true);
    check("IsGraphics3D", G3("IsGraphics3D")(ctx), 1);
    putI32s(ATTRS + 64, [0x3057, 0, 0x3056, 0, 0x3038]);
    check("GetAttribs", [G3("GetAttribs")(ctx, ATTRS + 64), m.i32(ATTRS + 68), m.i32(ATTRS + 76)], [0, 32, 16]);
    check("GetAttribMaxValue(WIDTH)", [G3("GetAttribMaxValue")(2, 0x3057, OUT), m.i32(OUT)], [0, 16384]);
    putI32s(OUT, [0, 0, 0]);
    check("SwapBuffers blocking on the main thread", G3("SwapBuffers")(ctx, OUT), -13);
    check("SwapBuffers of no context", G3("SwapBuffers")(12345, OUT), -5);
    check("GetError", G3("GetError")(ctx), 0);
    check("BindGraphics(3D)", f(main, "PPB_Instance;1.0", "BindGraphics")(2, ctx), 1);
    check("the bound device is shared", thread.gfx.bound, ctx);

    // --- strings ---
    check("GetString(VERSION)", m.cstring(G("GetString")(ctx, GL.VERSION)).startsWith("OpenGL ES 2.0"), true);
    const ext = m.cstring(G("GetString")(ctx, GL.EXTENSIONS));
    check("EXTENSIONS names VAOs and instancing", ext.includes("GL_OES_vertex_array_object") && ext.includes("GL_ANGLE_instanced_arrays"), true);
    check("GetString twice is the same pointer", G("GetString")(ctx, GL.VERSION), G("GetString")(ctx, GL.VERSION));
    check("GetString(bad) -> INVALID_ENUM", [G("GetString")(ctx, 0x1234), G("GetError")(ctx), G("GetError")(ctx)], [0, GL.INVALID_ENUM, 0]);

    // --- clear and read back ---
    G("Viewport")(ctx, 0, 0, 32, 16);
    G("ClearColor")(ctx, 0.25, 0.5, 0.75, 1);
    G("Clear")(ctx, GL.COLOR_BUFFER_BIT);
    check("Clear then ReadPixels", near(pixel(ctx, 3, 3), [64, 128, 191, 255]), [64, 128, 191, 255]);
    G("GetIntegerv")(ctx, GL.VIEWPORT, OUT);
    check("GetIntegerv(VIEWPORT)", [0, 4, 8, 12].map((o) => m.i32(OUT + o)), [0, 0, 32, 16]);

    // --- shaders and programs ---
    const shader = (type, parts) => {
      const sh = G("CreateShader")(ctx, type);
      // Several strings with explicit lengths, as ShaderSource allows.
      let at = STR;
      const ptrs = [];
      for (const p of parts) {
        m.write(at, new TextEncoder().encode(p));
        ptrs.push(at);
        at += p.length + 8;
      }
      putI32s(DATA, ptrs);
      putI32s(DATA + 64, parts.map((p) => p.length));
      G("ShaderSource")(ctx, sh, parts.length, DATA, DATA + 64);
      G("CompileShader")(ctx, sh);
      return sh;
    };
    const vs = shader(GL.VERTEX_SHADER, ["attribute vec2 pos;\nattribute vec2 uv;\nvarying vec2 v;\n", "void main() { v = uv; gl_Position = vec4(pos, 0.0, 1.0); }\n"]);
    G("GetShaderiv")(ctx, vs, GL.COMPILE_STATUS, OUT);
    check("vertex shader compiles", m.i32(OUT), 1);
    const fsColor = shader(GL.FRAGMENT_SHADER, ["precision mediump float;\nuniform vec4 color;\nvarying vec2 v;\nvoid main() { gl_FragColor = color; }\n"]);
    G("GetShaderiv")(ctx, fsColor, GL.COMPILE_STATUS, OUT);
    check("fragment shader compiles", m.i32(OUT), 1);
    const bad = shader(GL.FRAGMENT_SHADER, ["void main() { gl_FragColor = nonsense; }\n"]);
    G("GetShaderiv")(ctx, bad, GL.COMPILE_STATUS, OUT);
    G("GetShaderiv")(ctx, bad, GL.INFO_LOG_LENGTH, OUT + 4);
    G("GetShaderInfoLog")(ctx, bad, 200, OUT + 8, STR);
    check("a broken shader fails with a log", [m.i32(OUT), m.i32(OUT + 4) > 1, m.i32(OUT + 8) > 0, m.cstring(STR).length === m.i32(OUT + 8)], [0, true, true, true]);
    const program = (fs) => {
      const p = G("CreateProgram")(ctx);
      G("AttachShader")(ctx, p, vs);
      G("AttachShader")(ctx, p, fs);
      G("BindAttribLocation")(ctx, p, 3, cstr(STR, "pos"));
      G("LinkProgram")(ctx, p);
      return p;
    };
    const p1 = program(fsColor);
    G("GetProgramiv")(ctx, p1, GL.LINK_STATUS, OUT);
    check("program links", m.i32(OUT), 1);
    check("IsProgram / IsShader", [G("IsProgram")(ctx, p1), G("IsShader")(ctx, p1), G("IsShader")(ctx, vs)], [1, 0, 1]);
    check("BindAttribLocation is kept", G("GetAttribLocation")(ctx, p1, cstr(STR, "pos")), 3);
    const colorLoc = G("GetUniformLocation")(ctx, p1, cstr(STR, "color"));
    check("GetUniformLocation", [colorLoc, G("GetUniformLocation")(ctx, p1, cstr(STR, "nothing"))], [0, -1]);
    G("GetProgramiv")(ctx, p1, 0x8b87, OUT); // ACTIVE_UNIFORM_MAX_LENGTH
    check("ACTIVE_UNIFORM_MAX_LENGTH", m.i32(OUT), "color".length + 1);
    G("GetActiveUniform")(ctx, p1, 0, 64, OUT, OUT + 4, OUT + 8, STR);
    check("GetActiveUniform", [m.cstring(STR), m.i32(OUT), m.i32(OUT + 4), m.i32(OUT + 8)], ["color", 5, 1, 0x8b52]);

    // --- a triangle from a buffer ---
    G("UseProgram")(ctx, p1);
    G("Uniform4f")(ctx, colorLoc, 1, 0, 0, 1);
    putI32s(OUT, [0]);
    G("GenBuffers")(ctx, 1, OUT);
    const vbo = m.i32(OUT);
    check("IsBuffer before the first bind", G("IsBuffer")(ctx, vbo), 0);
    G("BindBuffer")(ctx, GL.ARRAY_BUFFER, vbo);
    check("IsBuffer after it", G("IsBuffer")(ctx, vbo), 1);
    G("GetIntegerv")(ctx, GL.ARRAY_BUFFER_BINDING, OUT);
    check("GetIntegerv(ARRAY_BUFFER_BINDING) gives the GL name", m.i32(OUT), vbo);
    // One triangle that covers the whole viewport.
    putF32s(DATA, [-1, -1, 3, -1, -1, 3]);
    G("BufferData")(ctx, GL.ARRAY_BUFFER, 24, DATA, GL.STATIC_DRAW);
    G("EnableVertexAttribArray")(ctx, 3);
    G("VertexAttribPointer")(ctx, 3, 2, GL.FLOAT, 0, 0, 0);
    G("DrawArrays")(ctx, GL.TRIANGLES, 0, 3);
    check("DrawArrays from a buffer (uniform color)", pixel(ctx, 16, 8), [255, 0, 0, 255]);
    G("GetUniformfv")(ctx, p1, colorLoc, OUT);
    check("GetUniformfv", [0, 4, 8, 12].map((o) => m.dv.getFloat32(OUT + o, true)), [1, 0, 0, 1]);

    // --- client-side arrays (no buffer bound), as GLES 2 allowed ---
    G("BindBuffer")(ctx, GL.ARRAY_BUFFER, 0);
    G("Uniform4fv")(ctx, colorLoc, 1, (putF32s(DATA + 256, [0, 1, 0, 1]), DATA + 256));
    putF32s(DATA + 512, [9, 9, -1, -1, 3, -1, -1, 3]); // vertex 0 unused, draws [1, 4)
    G("VertexAttribPointer")(ctx, 3, 2, GL.FLOAT, 0, 0, DATA + 512);
    G("DrawArrays")(ctx, GL.TRIANGLES, 1, 3);
    check("DrawArrays from client memory", pixel(ctx, 16, 8), [0, 255, 0, 255]);
    G("GetVertexAttribPointerv")(ctx, 3, 0x8645, OUT);
    check("GetVertexAttribPointerv gives the client pointer", m.i32(OUT), DATA + 512);
    // Client indices over client vertices.
    putF32s(DATA + 768, [-1, -1, 7, 7, 3, -1, -1, 3]);
    new Uint16Array(memory.buffer, DATA + 1024, 3).set([0, 2, 3]);
    G("VertexAttribPointer")(ctx, 3, 2, GL.FLOAT, 0, 0, DATA + 768);
    G("Uniform4f")(ctx, colorLoc, 0, 0, 1, 1);
    G("DrawElements")(ctx, GL.TRIANGLES, 3, GL.UNSIGNED_SHORT, DATA + 1024);
    check("DrawElements with client indices and vertices", pixel(ctx, 16, 8), [0, 0, 255, 255]);
    check("no GL error so far", G("GetError")(ctx), 0);
    // Indices in a buffer over client vertices: the vertex count comes from the buffer's copy.
    putI32s(OUT, [0]);
    G("GenBuffers")(ctx, 1, OUT);
    const ibo = m.i32(OUT);
    G("BindBuffer")(ctx, GL.ELEMENT_ARRAY_BUFFER, ibo);
    new Uint16Array(memory.buffer, DATA + 1024, 3).set([0, 2, 3]);
    G("BufferData")(ctx, GL.ELEMENT_ARRAY_BUFFER, 6, DATA + 1024, GL.STATIC_DRAW);
    G("Uniform4f")(ctx, colorLoc, 1, 1, 0, 1);
    G("DrawElements")(ctx, GL.TRIANGLES, 3, GL.UNSIGNED_SHORT, 0);
    check("DrawElements from an index buffer over client vertices", pixel(ctx, 16, 8), [255, 255, 0, 255]);
    G("BindBuffer")(ctx, GL.ELEMENT_ARRAY_BUFFER, 0);

    // --- textures: RGBA and BGRA uploads from memory, sampled ---
    const fsTex = shader(GL.FRAGMENT_SHADER, ["precision mediump float;\nuniform sampler2D tex;\nvarying vec2 v;\nvoid main() { gl_FragColor = texture2D(tex, v); }\n"]);
    const p2 = program(fsTex);
    G("UseProgram")(ctx, p2);
    putI32s(OUT, [0]);
    G("GenTextures")(ctx, 1, OUT);
    const tex = m.i32(OUT);
    G("BindTexture")(ctx, GL.TEXTURE_2D, tex);
    G("TexParameteri")(ctx, GL.TEXTURE_2D, GL.TEXTURE_MIN_FILTER, GL.NEAREST);
    G("TexParameteri")(ctx, GL.TEXTURE_2D, GL.TEXTURE_MAG_FILTER, GL.NEAREST);
    G("PixelStorei")(ctx, GL.UNPACK_ALIGNMENT, 1);
    m.write(DATA + 2048, [10, 20, 30, 255]);
    G("TexImage2D")(ctx, GL.TEXTURE_2D, 0, GL.RGBA, 1, 1, 0, GL.RGBA, GL.UNSIGNED_BYTE, DATA + 2048);
    G("Uniform1i")(ctx, G("GetUniformLocation")(ctx, p2, cstr(STR, "tex")), 0);
    // uv from a second client array (attribute "uv", location chosen by the linker).
    const uvLoc = G("GetAttribLocation")(ctx, p2, cstr(STR, "uv"));
    putF32s(DATA + 3072, [0.5, 0.5, 0.5, 0.5, 0.5, 0.5]);
    G("EnableVertexAttribArray")(ctx, uvLoc);
    G("VertexAttribPointer")(ctx, uvLoc, 2, GL.FLOAT, 0, 0, DATA + 3072);
    G("VertexAttribPointer")(ctx, 3, 2, GL.FLOAT, 0, 0, DATA + 512 + 8);
    G("DrawArrays")(ctx, GL.TRIANGLES, 0, 3);
    check("TexImage2D(RGBA) from memory, sampled", pixel(ctx, 16, 8), [10, 20, 30, 255]);
    m.write(DATA + 2048, [30, 20, 10, 255]); // B, G, R, A
    G("TexImage2D")(ctx, GL.TEXTURE_2D, 0, GL.BGRA_EXT, 1, 1, 0, GL.BGRA_EXT, GL.UNSIGNED_BYTE, DATA + 2048);
    G("DrawArrays")(ctx, GL.TRIANGLES, 0, 3);
    check("TexImage2D(BGRA_EXT) is swizzled", pixel(ctx, 16, 8), [10, 20, 30, 255]);
    // MapTexSubImage2DCHROMIUM: write the texel through the mapped pointer.
    const MS = (n) => X("ChromiumMapSub", n);
    const mp = MS("MapTexSubImage2DCHROMIUM")(ctx, GL.TEXTURE_2D, 0, 0, 0, 1, 1, GL.RGBA, GL.UNSIGNED_BYTE, GL.WRITE_ONLY);
    check("MapTexSubImage2DCHROMIUM gives memory", mp > 0, true);
    m.write(mp, [200, 100, 50, 255]);
    MS("UnmapTexSubImage2DCHROMIUM")(ctx, mp);
    G("DrawArrays")(ctx, GL.TRIANGLES, 0, 3);
    check("UnmapTexSubImage2DCHROMIUM uploads it", pixel(ctx, 16, 8), [200, 100, 50, 255]);
    check("Unmap of an unknown pointer -> INVALID_VALUE", (MS("UnmapBufferSubDataCHROMIUM")(ctx, 4), G("GetError")(ctx)), 0x0501);

    // --- vertex array objects, instancing ---
    const V = (n) => X("VertexArrayObject", n);
    putI32s(OUT, [0]);
    V("GenVertexArraysOES")(ctx, 1, OUT);
    const vao = m.i32(OUT);
    V("BindVertexArrayOES")(ctx, vao);
    check("IsVertexArrayOES", V("IsVertexArrayOES")(ctx, vao), 1);
    G("UseProgram")(ctx, p1);
    G("Uniform4f")(ctx, colorLoc, 1, 0, 1, 1);
    G("BindBuffer")(ctx, GL.ARRAY_BUFFER, vbo);
    G("EnableVertexAttribArray")(ctx, 3);
    G("VertexAttribPointer")(ctx, 3, 2, GL.FLOAT, 0, 0, 0);
    G("ClearColor")(ctx, 0, 0, 0, 1);
    G("Clear")(ctx, GL.COLOR_BUFFER_BIT);
    X("InstancedArrays", "DrawArraysInstancedANGLE")(ctx, GL.TRIANGLES, 0, 3, 2);
    check("DrawArraysInstancedANGLE in a VAO", pixel(ctx, 16, 8), [255, 0, 255, 255]);
    V("BindVertexArrayOES")(ctx, 0);
    V("DeleteVertexArraysOES")(ctx, 1, OUT);
    check("DeleteVertexArraysOES", V("IsVertexArrayOES")(ctx, vao), 0);

    // --- names, errors, deletes ---
    putI32s(OUT, [vbo]);
    G("DeleteBuffers")(ctx, 1, OUT);
    check("DeleteBuffers", G("IsBuffer")(ctx, vbo), 0);
    G("Enable")(ctx, 0x1234);
    check("GetError reports INVALID_ENUM once", [G("GetError")(ctx), G("GetError")(ctx)], [GL.INVALID_ENUM, 0]);
    G("Uniform1f")(ctx, 77, 1);
    check("a uniform location the program never gave -> INVALID_OPERATION", G("GetError")(ctx), GL.INVALID_OPERATION);
    check("EnableFeatureCHROMIUM refuses", X("ChromiumEnableFeature", "EnableFeatureCHROMIUM")(ctx, cstr(STR, "pepper3d_allow_buffers_on_multiple_targets")), 0);

    // --- ResizeBuffers, threads ---
    check("ResizeBuffers", G3("ResizeBuffers")(ctx, 8, 4), 0);
    putI32s(ATTRS + 64, [0x3057, 0, 0x3038]);
    G3("GetAttribs")(ctx, ATTRS + 64);
    check("GetAttribs after ResizeBuffers", m.i32(ATTRS + 68), 8);
    check("ResizeBuffers from another thread -> WRONG_THREAD", f(thread, "PPB_Graphics3D;1.0", "ResizeBuffers")(ctx, 8, 8), -52);
    check("GL calls from another thread are dropped", f(thread, "PPB_OpenGLES2;1.0", "CreateProgram")(ctx), 0);
    check("and the console says so", consoleLines.some((l) => l.includes("thread other than the one that created it")), true);
    const tctx = f(thread, "PPB_Graphics3D;1.0", "Create")(2, 0, ATTRS);
    check("a module thread makes a context of its own", tctx > 0 && tctx !== ctx, true);
    f(thread, "PPB_OpenGLES2;1.0", "ClearColor")(tctx, 1, 1, 1, 1);
    f(thread, "PPB_OpenGLES2;1.0", "Clear")(tctx, GL.COLOR_BUFFER_BIT);
    m.fill(PIX, 0, 4);
    f(thread, "PPB_OpenGLES2;1.0", "ReadPixels")(tctx, 0, 0, 1, 1, GL.RGBA, GL.UNSIGNED_BYTE, PIX);
    check("and draws on it", Array.from(m.bytes(PIX, 4)), [255, 255, 255, 255]);
    // --- SwapBuffers onto the instance's canvas: the main thread's, then a thread's ---
    G("ClearColor")(ctx, 0, 1, 0, 1);
    G("Clear")(ctx, GL.COLOR_BUFFER_BIT);
    putI32s(OUT, [77, 5, 0]);
    check("SwapBuffers with a callback", G3("SwapBuffers")(ctx, OUT), -1);
    check("the frame is on the canvas, scaled to it", shown(), [0, 255, 0, 255]);
    check("a second SwapBuffers before the first completes", G3("SwapBuffers")(ctx, OUT), -11);
    await new Promise((r) => setTimeout(r, 200));
    check("SwapBuffers completes at the next frame", completed, [[77, 5, 0]]);
    check("a thread binds its own context", f(thread, "PPB_Instance;1.0", "BindGraphics")(2, tctx), 1);
    f(thread, "PPB_OpenGLES2;1.0", "ClearColor")(tctx, 1, 0, 1, 1);
    f(thread, "PPB_OpenGLES2;1.0", "Clear")(tctx, GL.COLOR_BUFFER_BIT);
    putI32s(OUT, [0, 0, 0]);
    check("a thread's blocking SwapBuffers", f(thread, "PPB_Graphics3D;1.0", "SwapBuffers")(tctx, OUT), 0);
    check("its frame reaches the instance's canvas", shown(), [255, 0, 255, 255]);
    // Graphics2D from a module thread: painted in its worker, the frame sent as a bitmap.
    const T2 = (n) => f(thread, "PPB_Graphics2D;1.1", n);
    const TI = (n) => f(thread, "PPB_ImageData;1.0", n);
    putI32s(OUT, [4, 4]);
    const g2 = T2("Create")(2, OUT, 1);
    const img = TI("Create")(2, 1, OUT, 1); // RGBA
    const px = TI("Map")(img);
    for (let k = 0; k < 16; k++) m.write(px + 4 * k, [0, 128, 255, 255]);
    putI32s(OUT + 16, [0, 0]);
    T2("PaintImageData")(g2, img, OUT + 16, 0);
    check("a thread binds a Graphics2D device", f(thread, "PPB_Instance;1.0", "BindGraphics")(2, g2), 1);
    putI32s(OUT + 32, [0, 0, 0]);
    check("a thread's blocking Flush", T2("Flush")(g2, OUT + 32), 0);
    const at = Array.from(main.gfx.canvas.getContext("2d").getImageData(2, 2, 1, 1).data);
    check("its frame reaches the instance's canvas at its own size", at, [0, 128, 255, 255]);
    check("outside the device the canvas is clear", Array.from(main.gfx.canvas.getContext("2d").getImageData(10, 5, 1, 1).data), [0, 0, 0, 0]);
    putI32s(OUT + 32, [5, 0, 0]);
    check("a Flush with a callback on a thread without a loop", T2("Flush")(g2, OUT + 32), -51);
    f(main, "PPB_Instance;1.0", "BindGraphics")(2, ctx);
    const live = main.res.kindOf(ctx);
    f(main, "PPB_Core;1.0", "ReleaseResource")(ctx);
    check("ReleaseResource frees the context", [live > 0, G3("IsGraphics3D")(ctx), glState(main, ctx) !== null, thread.gfx.bound], [true, 0, false, 0]);
    // The freed id comes back for the next resource: its GL calls are the new context's.
    const again = G3("Create")(2, 0, ATTRS);
    G("ClearColor")(again, 0, 1, 0, 1);
    G("Clear")(again, GL.COLOR_BUFFER_BIT);
    check("a new context in a released context's id draws", [again === ctx, near(pixel(again, 1, 1), [0, 255, 0, 255])], [true, [0, 255, 0, 255]]);

    self.postMessage({ checks, failed: checks.filter((c) => !c.ok).length });
  } catch (err) {
    self.postMessage({ error: String(err?.stack ?? err), checks });
  }
};
