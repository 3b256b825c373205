// PPB_VideoDecoder 0.1-1.1 on WebCodecs. Chrome decoded into GL textures of the app's
// Graphics3D context; here a WebCodecs VideoDecoder decodes, and each picture is uploaded
// into a TEXTURE_2D of that context (an integer name the app binds like any other) when
// the app asks for it with GetPicture. H.264 arrives as Annex B (no `description`, so
// WebCodecs reads Annex B too); VP8 and VP9 as frames.
//
// The decoder lives in the worker of the context's thread, and answers come from that
// worker's event loop, so it works on the main module thread (the instance worker, whose
// event loop runs between calls, as bp2008's player uses it). A module thread runs module
// code without returning to its event loop, so WebCodecs could never answer it there:
// Initialize on a thread fails with PP_ERROR_NOTSUPPORTED and the console says why.

import { FIELDS, KIND } from "../resources.js";
import { OFFERED, PP_ERROR as E } from "../contract.js";
import { glState } from "./gl/index.js";

const GL = { TEXTURE_2D: 0x0de1, TEXTURE_BINDING_2D: 0x8069, LINEAR: 0x2601, CLAMP_TO_EDGE: 0x812f };
const ACCEL = { ONLY: 0, WITHFALLBACK: 1, NONE: 2 };
const VP8_ANY = 11;
const VP9_ANY = 12;
/** Pictures the app may hold at once (Chrome's decoders gave a handful more than asked). */
const EXTRA_PICTURES = 4;

const [I01, I02, I10, I11] = OFFERED.PPB_VideoDecoder;
const ALL = [I01, I02, I10, I11];

/** A codec string WebCodecs accepts for a profile before the stream says more. */
function defaultCodec(profile) {
  if (profile === VP8_ANY) return "vp8";
  if (profile === VP9_ANY) return "vp09.00.10.08";
  // H.264 profile_idc per PP_VideoProfile (baseline, main, extended, high, high 10, 4:2:2, 4:4:4).
  const idc = [0x42, 0x4d, 0x58, 0x64, 0x6e, 0x7a, 0xf4][profile];
  return idc === undefined ? null : `avc1.${idc.toString(16).padStart(2, "0")}001f`;
}

/** The NAL units of an Annex B buffer: [type, start of payload] each. */
function nalUnits(b) {
  const out = [];
  for (let i = 0; i + 3 < b.length; i++) {
    if (b[i] === 0 && b[i + 1] === 0 && b[i + 2] === 1) {
      out.push([b[i + 3] & 0x1f, i + 3]);
      i += 3;
    }
  }
  return out;
}

/**
 * What a buffer holds: {key, codec}. H.264: a key frame has an IDR slice, and its SPS
 * gives the exact codec string; VP8/VP9: the frame header's key-frame bit.
 */
function inspect(profile, b) {
  if (profile === VP8_ANY) return { key: b.length > 0 && (b[0] & 1) === 0, codec: null };
  if (profile === VP9_ANY) {
    if (b.length === 0) return { key: false, codec: null };
    // frame_marker(2) profile_low profile_high [reserved if profile 3] show_existing frame_type
    const p = ((b[0] >> 5) & 1) | (((b[0] >> 4) & 1) << 1);
    let bit = p === 3 ? 3 : 4; // bits from the top of byte 0 after the profile (and reserved) bits
    const showExisting = (b[0] >> (7 - bit)) & 1;
    bit++;
    const frameType = (b[0] >> (7 - bit)) & 1;
    return { key: !showExisting && frameType === 0, codec: null };
  }
  let key = false;
  let codec = null;
  for (const [type, at] of nalUnits(b)) {
    if (type === 5) key = true;
    if (type === 7 && at + 3 < b.length) {
      const hex = (x) => x.toString(16).padStart(2, "0");
      codec = `avc1.${hex(b[at + 1])}${hex(b[at + 2])}${hex(b[at + 3])}`;
    }
  }
  return { key, codec };
}

export function register(reg, cx) {
  const decoders = new Map(); // resource -> Decoder (this worker's)
  // A decoder freed with its resource is closed (its textures stay with the context).
  reg.onRelease(KIND.VIDEO_DECODER, (res) => {
    const d = decoders.get(res);
    if (!d) return;
    decoders.delete(res);
    d.close();
  });
  let warnedThread = false;
  const exists = (res) => cx.res.of(res, KIND.VIDEO_DECODER) >= 0;
  const callback = (cb) => ({ func: cx.mem.u32(cb), userData: cx.mem.u32(cb + 4) });
  // Every callback runs from the event loop, never inside the call that started it.
  const finish = (c, r) => cx.schedule(() => cx.runCallback(c.func, c.userData, r), 0);

  reg.defAll(ALL, "Create", (instance) => {
    if (instance !== cx.instance) return 0;
    return cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.VIDEO_DECODER);
      cx.h[cx.res.base(id) + FIELDS] = cx.tid;
      return id;
    });
  });
  reg.defAll(ALL, "IsVideoDecoder", (res) => (exists(res) ? 1 : 0));

  /** The checks every call with a callback makes; an error code, or the callback. */
  const start = (res, cb) => {
    if (!exists(res)) return E.BADRESOURCE;
    const c = callback(cb);
    if (c.func === 0) return cx.isMain ? E.BLOCKS_MAIN_THREAD : E.NOTSUPPORTED;
    return c;
  };

  const initialize = (res, g3d, profile, accel, minPictures, cb) => {
    const c = start(res, cb);
    if (typeof c === "number") return c;
    if (decoders.has(res)) return E.FAILED;
    if (!cx.isMain) {
      if (!warnedThread) {
        warnedThread = true;
        cx.console("error", "pexe2wasm: VideoDecoder works on the main module thread only (a module thread never returns to the event loop WebCodecs answers on)");
      }
      return E.NOTSUPPORTED;
    }
    const s = glState(cx, g3d);
    if (!s) return cx.res.kindOf(g3d) === KIND.GRAPHICS_3D ? E.WRONG_THREAD : E.BADRESOURCE;
    const codec = defaultCodec(profile);
    if (!codec || typeof VideoDecoder !== "function") {
      if (typeof VideoDecoder !== "function") cx.console("error", "pexe2wasm: this browser has no WebCodecs VideoDecoder, so PPB_VideoDecoder cannot initialize");
      return E.NOTSUPPORTED;
    }
    const hardwareAcceleration = accel === ACCEL.ONLY ? "prefer-hardware" : accel === ACCEL.NONE ? "prefer-software" : "no-preference";
    const d = new Decoder(cx, s, profile, hardwareAcceleration, Math.max(0, minPictures | 0));
    decoders.set(res, d);
    VideoDecoder.isConfigSupported({ codec, hardwareAcceleration })
      .then((r) => r.supported, () => false)
      .then((ok) => {
        if (!ok) {
          decoders.delete(res);
          cx.console("warning", `pexe2wasm: this browser cannot decode ${codec} (PPB_VideoDecoder.Initialize: PP_ERROR_NOTSUPPORTED)`);
        }
        finish(c, ok ? E.OK : E.NOTSUPPORTED);
      });
    return E.COMPLETIONPENDING;
  };
  // 0.1 takes allow_software_fallback (a PP_Bool) where later versions take the acceleration.
  reg.def(I01, "Initialize", (res, g3d, profile, fallback, cb) => initialize(res, g3d, profile, fallback ? ACCEL.WITHFALLBACK : ACCEL.ONLY, 0, cb));
  reg.defAll([I02, I10], "Initialize", (res, g3d, profile, accel, cb) => initialize(res, g3d, profile, accel, 0, cb));
  reg.def(I11, "Initialize", (res, g3d, profile, accel, minPictures, cb) => initialize(res, g3d, profile, accel, minPictures, cb));

  /** The call's decoder, or an error code. */
  const ready = (res, cb) => {
    const c = start(res, cb);
    if (typeof c === "number") return [c, null];
    const d = decoders.get(res);
    if (!d) return [cx.res.of(res, KIND.VIDEO_DECODER) >= 0 && cx.h[cx.res.base(res) + FIELDS] !== cx.tid ? E.WRONG_THREAD : E.FAILED, null];
    if (d.resetting) return [E.FAILED, null];
    return [c, d];
  };

  reg.defAll(ALL, "Decode", (res, id, size, buf, cb) => {
    const [c, d] = ready(res, cb);
    if (!d) return c;
    if (d.flushing) return E.FAILED;
    if (size < 0 || (size > 0 && buf === 0)) return E.BADARGUMENT;
    // A copy: the chunk must not see the app reuse its buffer, and WebCodecs takes no shared memory.
    const bytes = new Uint8Array(size);
    if (size) bytes.set(cx.mem.bytes(buf, size));
    d.decode(id >>> 0, bytes, c);
    return E.COMPLETIONPENDING;
  });

  const getPicture = (small) => (res, ptr, cb) => {
    const [c, d] = ready(res, cb);
    if (!d) return c;
    if (ptr === 0) return E.BADARGUMENT;
    if (d.wanted) return E.INPROGRESS;
    d.wanted = { c, ptr, small };
    d.pump();
    return E.COMPLETIONPENDING;
  };
  reg.defAll([I01, I02], "GetPicture", getPicture(true));
  reg.defAll([I10, I11], "GetPicture", getPicture(false));

  reg.defAll(ALL, "RecyclePicture", (res, ptr) => {
    const d = decoders.get(res);
    if (!d || ptr === 0) return;
    d.recycle(cx.mem.u32(ptr + 4));
  });
  reg.defAll(ALL, "Flush", (res, cb) => {
    const [c, d] = ready(res, cb);
    if (!d) return c;
    if (d.flushing) return E.INPROGRESS;
    d.flush(c);
    return E.COMPLETIONPENDING;
  });
  reg.defAll(ALL, "Reset", (res, cb) => {
    const [c, d] = ready(res, cb);
    if (!d) return c;
    d.reset(c);
    return E.COMPLETIONPENDING;
  });
}

/** One decoder: WebCodecs', the decoded frames waiting for GetPicture, the textures. */
class Decoder {
  constructor(cx, gls, profile, hardwareAcceleration, minPictures) {
    this.cx = cx;
    this.gls = gls; // the context's GlState (gl/common.js): its texture names are the app's
    this.profile = profile;
    this.hardwareAcceleration = hardwareAcceleration;
    this.maxPictures = Math.max(minPictures, 1) + EXTRA_PICTURES;
    this.codec = null; // configured with this codec string
    this.webcodecs = null;
    this.frames = []; // decoded VideoFrames, in output order
    this.wanted = null; // a pending GetPicture: {c, ptr, small}
    this.decodes = []; // pending Decode callbacks, answered as WebCodecs takes the chunks
    this.free = []; // texture names recycled by the app
    this.out = new Set(); // texture names the app holds
    this.flushing = null; // the pending Flush's callback
    this.resetting = false;
    this.generation = 0; // a Reset starts a new one; late answers of an older one are dropped
  }

  /** Configures WebCodecs for `codec` (again when the stream's SPS names another). */
  configure(codec) {
    if (!this.webcodecs) {
      const gen = this.generation;
      this.webcodecs = new VideoDecoder({
        output: (frame) => {
          if (gen !== this.generation) return frame.close();
          this.frames.push(frame);
          this.answerDecodes();
          this.pump();
        },
        error: (e) => this.fail(e),
      });
      this.webcodecs.addEventListener?.("dequeue", () => this.answerDecodes());
    }
    if (this.codec !== codec) {
      this.webcodecs.configure({ codec, hardwareAcceleration: this.hardwareAcceleration, optimizeForLatency: true });
      this.codec = codec;
    }
  }

  decode(id, bytes, c) {
    const { key, codec } = inspect(this.profile, bytes);
    // WebCodecs wants a key frame first (after configure, flush or reset); Chrome's decoders
    // skipped what came before one too. Such a buffer is consumed with no picture.
    if (!this.webcodecs || this.webcodecs.state !== "configured" || this.needKey) {
      if (!key) {
        this.later(c, E.OK);
        return;
      }
      this.needKey = false;
    }
    try {
      this.configure(codec ?? this.codec ?? defaultCodec(this.profile));
      // The decode id rides as the timestamp and comes back on the frame.
      this.webcodecs.decode(new EncodedVideoChunk({ type: key ? "key" : "delta", timestamp: id, data: bytes }));
    } catch (e) {
      this.cx.console("error", `pexe2wasm: VideoDecoder.Decode: ${e?.message ?? e}`);
      this.later(c, E.FAILED);
      return;
    }
    this.decodes.push(c);
    this.answerDecodes();
  }

  /** Decode callbacks complete as WebCodecs' queue takes their chunks (a few in flight). */
  answerDecodes() {
    const queued = this.webcodecs?.decodeQueueSize ?? 0;
    while (this.decodes.length > Math.max(0, queued - 2)) {
      const c = this.decodes.shift();
      this.later(c, E.OK);
    }
  }

  /** Gives the pending GetPicture the next frame, uploaded into a texture, if there is both. */
  pump() {
    if (!this.wanted || this.frames.length === 0) {
      this.maybeFlushed();
      return;
    }
    if (this.out.size >= this.maxPictures) return; // the app must recycle first
    const frame = this.frames.shift();
    const { c, ptr, small } = this.wanted;
    this.wanted = null;
    const s = this.gls;
    const gl = s.gl;
    const name = this.free.pop() ?? s.textures.gen();
    const tex = s.textures.bind(name);
    const prev = gl.getParameter(GL.TEXTURE_BINDING_2D);
    gl.bindTexture(GL.TEXTURE_2D, tex);
    const w = frame.displayWidth;
    const h = frame.displayHeight;
    try {
      gl.texImage2D(GL.TEXTURE_2D, 0, gl.RGBA, gl.RGBA, gl.UNSIGNED_BYTE, frame);
    } catch (e) {
      this.cx.console("error", `pexe2wasm: a decoded picture could not be uploaded to its texture: ${e?.message ?? e}`);
    }
    gl.texParameteri(GL.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, GL.LINEAR);
    gl.texParameteri(GL.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, GL.LINEAR);
    gl.texParameteri(GL.TEXTURE_2D, gl.TEXTURE_WRAP_S, GL.CLAMP_TO_EDGE);
    gl.texParameteri(GL.TEXTURE_2D, gl.TEXTURE_WRAP_T, GL.CLAMP_TO_EDGE);
    gl.bindTexture(GL.TEXTURE_2D, prev);
    const id = Number(frame.timestamp) >>> 0;
    frame.close();
    this.out.add(name);
    // PP_VideoPicture: decode_id, texture_id, texture_target, texture_size; 1.0 adds visible_rect.
    const m = this.cx.mem;
    m.check(ptr, small ? 20 : 36);
    m.setI32(ptr, id);
    m.setI32(ptr + 4, name);
    m.setI32(ptr + 8, GL.TEXTURE_2D);
    m.setI32(ptr + 12, w);
    m.setI32(ptr + 16, h);
    if (!small) {
      m.setI32(ptr + 20, 0);
      m.setI32(ptr + 24, 0);
      m.setI32(ptr + 28, w);
      m.setI32(ptr + 32, h);
    }
    this.later(c, E.OK);
  }

  recycle(name) {
    if (!this.out.delete(name)) return;
    this.free.push(name);
    this.pump();
  }

  flush(c) {
    this.flushing = c;
    const gen = this.generation;
    const done = () => {
      if (gen !== this.generation) return;
      this.flushed = true;
      this.needKey = true; // WebCodecs wants a key frame after a flush
      this.maybeFlushed();
    };
    if (this.webcodecs?.state === "configured") this.webcodecs.flush().then(done, done);
    else done();
  }

  /** Flush completes once WebCodecs has output everything and GetPicture has taken it. */
  maybeFlushed() {
    if (!this.flushing || !this.flushed || this.frames.length) return;
    const c = this.flushing;
    this.flushing = null;
    this.flushed = false;
    this.later(c, E.OK);
  }

  reset(c) {
    this.generation++;
    this.resetting = true;
    for (const f of this.frames.splice(0)) f.close();
    const aborted = [...this.decodes.splice(0)];
    if (this.wanted) aborted.push(this.wanted.c);
    this.wanted = null;
    if (this.flushing) aborted.push(this.flushing);
    this.flushing = null;
    this.flushed = false;
    try {
      if (this.webcodecs && this.webcodecs.state !== "closed") this.webcodecs.reset();
    } catch {
      // a reset of a decoder that failed: it is replaced at the next key frame
    }
    this.webcodecs = null;
    this.codec = null;
    this.needKey = true;
    // Aborted callbacks run first, then Reset's, as Chrome ordered them.
    for (const a of aborted) this.later(a, E.ABORTED);
    this.cx.schedule(() => {
      this.resetting = false;
      this.cx.runCallback(c.func, c.userData, E.OK);
    }, 0);
  }

  /** A WebCodecs error: pending calls fail, and the next key frame starts a new decoder. */
  fail(e) {
    this.cx.console("error", `pexe2wasm: the video decoder failed: ${e?.message ?? e}`);
    this.webcodecs = null;
    this.codec = null;
    this.needKey = true;
    for (const c of this.decodes.splice(0)) this.later(c, E.FAILED);
  }

  /** Runs a callback from the event loop (never inside the PPB call that started it). */
  later(c, r) {
    this.cx.schedule(() => this.cx.runCallback(c.func, c.userData, r), 0);
  }

  close() {
    this.generation++;
    for (const f of this.frames.splice(0)) f.close();
    try {
      if (this.webcodecs && this.webcodecs.state !== "closed") this.webcodecs.close();
    } catch {
      // closed already
    }
    this.webcodecs = null;
  }
}
