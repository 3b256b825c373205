// PPB_AudioConfig;1.0-1.1 and PPB_Audio;1.0-1.1. As in NaCl, the app's audio callback runs
// on a thread the host starts in the app: StartPlayback hands the app's registered
// thread_create (PP_ThreadFunctions) the runtime's host-thread entry, and that thread runs
// runThread below, which fills a ring of 16-bit stereo frames in module memory whenever
// it has room for a callback's buffer. The page's AudioWorklet (audio-worklet.js, started
// by page-services.js) plays the ring at the app's sample rate, so no call crosses a
// thread per buffer, and a slow page never blocks the app's other threads.

import { FIELDS, KIND } from "../resources.js";
import { CREATOR } from "../shared.js";
import { OFFERED } from "../contract.js";
import { TO_PAGE } from "../protocol.js";

const RATES = [44100, 48000];
const MIN_FRAMES = 64;
const MAX_FRAMES = 32768;
const CFG = { RATE: 0, FRAMES: 1 };
// An audio resource's words: its config's values, the callback, whether it is 1.1's
// (with latency), playing, the thread running, and its ring's and buffer's addresses.
const AU = { RATE: 0, FRAMES: 1, CALLBACK: 2, USER: 3, V11: 4, PLAYING: 5, RUNNING: 6, RING: 7, BUF: 8, CONFIG: 9 };
// The ring (in module memory): write and read counts in frames, capacity, then frames.
export const RING = { WRITE: 0, READ: 1, CAP: 2, HEADER: 16 };

/** The frame count Chrome would pick near `requested` (a power-of-two-ish 10 ms or more). */
export function recommendFrames(rate, requested) {
  if (!RATES.includes(rate)) return 0;
  const floor = Math.ceil(rate / 100); // 10 ms
  return Math.min(MAX_FRAMES, Math.max(MIN_FRAMES, floor, requested >>> 0));
}

/** @param {import("../context.js").Context} cx the calling thread's context */
export function register(reg, cx) {
  reg.onRelease(KIND.AUDIO, (_res, fields) => freeAudio(cx, fields));
  const cfgAt = (res) => {
    const b = cx.res.of(res, KIND.AUDIO_CONFIG);
    return b < 0 ? -1 : b + FIELDS;
  };
  const auAt = (res) => {
    const b = cx.res.of(res, KIND.AUDIO);
    return b < 0 ? -1 : b + FIELDS;
  };
  const C = OFFERED.PPB_AudioConfig;
  reg.defAll(C, "CreateStereo16Bit", (instance, rate, frames) => {
    frames >>>= 0;
    if (instance !== cx.instance || !RATES.includes(rate) || frames < MIN_FRAMES || frames > MAX_FRAMES) return 0;
    return cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.AUDIO_CONFIG);
      const b = cx.res.base(id) + FIELDS;
      cx.h[b + CFG.RATE] = rate;
      cx.h[b + CFG.FRAMES] = frames;
      return id;
    });
  });
  reg.def(C[0], "RecommendSampleFrameCount", (rate, requested) => recommendFrames(rate, requested));
  reg.def(C[1], "RecommendSampleFrameCount", (_instance, rate, requested) => recommendFrames(rate, requested));
  reg.defAll(C, "IsAudioConfig", (res) => (cfgAt(res) >= 0 ? 1 : 0));
  reg.defAll(C, "GetSampleRate", (res) => {
    const b = cfgAt(res);
    return b < 0 ? 0 : cx.h[b + CFG.RATE];
  });
  reg.defAll(C, "GetSampleFrameCount", (res) => {
    const b = cfgAt(res);
    return b < 0 ? 0 : cx.h[b + CFG.FRAMES];
  });
  // The rate browsers' audio hardware runs at most often; the worklet resamples otherwise.
  reg.def(C[1], "RecommendSampleRate", (_instance) => 48000);

  const A = OFFERED.PPB_Audio;
  A.forEach((iface, v11) => {
    reg.def(iface, "Create", (instance, config, callback, userData) => {
      const c = cfgAt(config);
      if (instance !== cx.instance || c < 0 || callback === 0) return 0;
      const rate = cx.h[c + CFG.RATE];
      const frames = cx.h[c + CFG.FRAMES];
      // The ring holds four callbacks' worth, at least 4096 frames (~85 ms at 48 kHz).
      const cap = Math.max(4 * frames, 4096);
      const ring = cx.exports.__ppapi_alloc(RING.HEADER + 4 * cap) >>> 0;
      const buf = cx.exports.__ppapi_alloc(4 * frames) >>> 0;
      if (!ring || !buf) return 0;
      cx.mem.setI32(ring + 4 * RING.CAP, cap);
      cx.res.addRef(config);
      return cx.vars.locked(() => {
        const id = cx.res.createLocked(KIND.AUDIO);
        const b = cx.res.base(id) + FIELDS;
        Object.entries({ RATE: rate, FRAMES: frames, CALLBACK: callback, USER: userData, V11: v11, PLAYING: 0, RUNNING: 0, RING: ring, BUF: buf, CONFIG: config }).forEach(([k, v]) => {
          cx.h[b + AU[k]] = v;
        });
        return id;
      });
    });
  });
  reg.defAll(A, "IsAudio", (res) => (auAt(res) >= 0 ? 1 : 0));
  reg.defAll(A, "GetCurrentConfig", (res) => {
    const b = auAt(res);
    if (b < 0) return 0;
    const config = cx.h[b + AU.CONFIG];
    cx.res.addRef(config);
    return config;
  });
  let told = false;
  reg.defAll(A, "StartPlayback", (res) => {
    const b = auAt(res);
    if (b < 0) return 0;
    const create = Atomics.load(cx.h, CREATOR);
    if (create === 0) {
      if (!told) {
        told = true;
        cx.console("error", "pexe2wasm: PPB_Audio.StartPlayback: the app registered no thread creator (ppapi_register_thread_creator), so its audio thread cannot start");
      }
      return 0;
    }
    if (Atomics.exchange(cx.h, b + AU.PLAYING, 1) === 1) return 1;
    cx.toPage({ t: TO_PAGE.AUDIO_START, res, memory: cx.memory.buffer, ring: cx.h[b + AU.RING], rate: cx.h[b + AU.RATE] });
    if (Atomics.compareExchange(cx.h, b + AU.RUNNING, 0, 1) === 0) {
      cx.res.addRef(res); // the thread's reference, dropped when it ends
      const tid = cx.vars.locked(() => cx.heap.alloc(16));
      const r = cx.exports.__ppp_call_iii_i(create, tid, cx.exports.__ppapi_host_thread_slot(), res);
      cx.vars.locked(() => cx.heap.free(tid, 16));
      if (r !== 0) {
        Atomics.store(cx.h, b + AU.RUNNING, 0);
        Atomics.store(cx.h, b + AU.PLAYING, 0);
        cx.releaseResource(res);
        cx.console("error", `pexe2wasm: PPB_Audio.StartPlayback: the app's thread_create failed (${r})`);
        return 0;
      }
    }
    return 1;
  });
  reg.defAll(A, "StopPlayback", (res) => {
    const b = auAt(res);
    if (b < 0) return 0;
    if (Atomics.exchange(cx.h, b + AU.PLAYING, 0) === 1) cx.toPage({ t: TO_PAGE.AUDIO_STOP, res });
    Atomics.notify(cx.h, b + AU.PLAYING);
    return 1;
  });
}

/**
 * The audio thread's body (`pexe2wasm_ppapi.host_thread(audio)` on the thread the app's
 * thread_create started): while playing, a callback's buffer goes into the ring whenever
 * it has room; it waits for the worklet to read otherwise. `call(fn, buf, bytes, latency,
 * user, v11)` runs the app's callback. Returns when playback stops or the resource is gone.
 * @param {import("../context.js").Context} cx the calling thread's context
 */
export function runThread(cx, res, call) {
  const h = cx.h;
  const b = cx.res.of(res, KIND.AUDIO) + FIELDS;
  if (b < FIELDS) return;
  const frames = h[b + AU.FRAMES];
  const rate = h[b + AU.RATE];
  const ring = h[b + AU.RING] >>> 0;
  const buf = h[b + AU.BUF] >>> 0;
  const cap = cx.mem.i32(ring + 4 * RING.CAP);
  const words = () => new Int32Array(cx.memory.buffer, ring, 4);
  try {
    for (;;) {
      while (Atomics.load(h, b + AU.PLAYING) === 1) {
        const w = words();
        const written = Atomics.load(w, RING.WRITE);
        const read = Atomics.load(w, RING.READ);
        if (cap - (written - read) < frames) {
          // Full: wait for the worklet to read (it notifies), or a stop.
          Atomics.wait(w, RING.READ, read, 20);
          continue;
        }
        const latency = (written - read) / rate;
        call(h[b + AU.CALLBACK] >>> 0, buf, 4 * frames, latency, h[b + AU.USER] >>> 0, h[b + AU.V11] === 1);
        // Copy the callback's frames into the ring, wrapping at its end.
        const src = new Uint32Array(cx.memory.buffer, buf, frames);
        const dst = new Uint32Array(cx.memory.buffer, ring + RING.HEADER, cap);
        const at = written % cap;
        const first = Math.min(frames, cap - at);
        dst.set(src.subarray(0, first), at);
        if (first < frames) dst.set(src.subarray(first), 0);
        Atomics.store(w, RING.WRITE, written + frames);
      }
      Atomics.store(h, b + AU.RUNNING, 0);
      // Started again while this thread was leaving: it goes on instead of a new one.
      if (Atomics.load(h, b + AU.PLAYING) === 1 && Atomics.compareExchange(h, b + AU.RUNNING, 0, 1) === 0) continue;
      return;
    }
  } finally {
    cx.releaseResource(res);
  }
}

/** The host-thread import of a context: runs the audio thread for `arg`. */
export function hostThread(cx, arg) {
  runThread(cx, arg, (fn, buf, bytes, latency, user, v11) => {
    if (v11) cx.exports.__ppp_call_iidi_v(fn, buf, bytes, latency, user);
    else cx.exports.__ppp_call_iii_v(fn, buf, bytes, user);
  });
}

/** The last reference to an audio resource is gone (its thread has ended): its memory goes. */
function freeAudio(cx, fields) {
  const ring = fields[AU.RING] >>> 0;
  const cap = cx.mem.i32(ring + 4 * RING.CAP);
  cx.exports.__ppapi_free(ring, RING.HEADER + 4 * cap);
  cx.exports.__ppapi_free(fields[AU.BUF] >>> 0, 4 * fields[AU.FRAMES]);
  cx.releaseResource(fields[AU.CONFIG]);
}
