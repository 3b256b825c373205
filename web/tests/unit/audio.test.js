import assert from "node:assert/strict";
import { test } from "node:test";

import { RING, recommendFrames, register, runThread } from "../../src/host/ppb/audio.js";
import { CREATOR } from "../../src/host/shared.js";
import { fakeInstance, registered } from "./helpers.js";

function audio() {
  const inst = fakeInstance({ pages: 4 });
  const notes = [];
  const cx = {
    ...inst,
    instance: 2,
    console: (_level, text) => notes.push(text),
    toPage: () => {},
    releaseResource: (r) => inst.res.release(r),
  };
  return { ...inst, cx, notes, f: registered(cx, register) };
}

test("configs: Chrome's rates and frame counts", () => {
  const { f } = audio();
  const create = f("PPB_AudioConfig;1.1", "CreateStereo16Bit");
  assert.equal(create(2, 22050, 1024), 0, "not a PPAPI rate");
  assert.equal(create(2, 48000, 32), 0, "too few frames");
  assert.equal(create(3, 48000, 1024), 0, "another instance");
  const c = create(2, 44100, 1024);
  assert.deepEqual([f("PPB_AudioConfig;1.1", "GetSampleRate")(c), f("PPB_AudioConfig;1.0", "GetSampleFrameCount")(c)], [44100, 1024]);
  assert.equal(recommendFrames(48000, 100), 480, "at least 10 ms");
  assert.equal(recommendFrames(48000, 4096), 4096);
  assert.equal(recommendFrames(8000, 4096), 0);
});

test("StartPlayback needs the app's thread creator", () => {
  const { f, notes, h } = audio();
  const c = f("PPB_AudioConfig;1.0", "CreateStereo16Bit")(2, 48000, 512);
  const a = f("PPB_Audio;1.0", "Create")(2, c, 7, 0);
  assert.ok(a > 0);
  assert.equal(h[CREATOR], 0);
  assert.equal(f("PPB_Audio;1.0", "StartPlayback")(a), 0);
  assert.match(notes[0], /no thread creator/);
});

test("the audio thread fills the ring from the callback until playback stops", () => {
  const { f, cx, mem, res } = audio();
  const c = f("PPB_AudioConfig;1.1", "CreateStereo16Bit")(2, 48000, 1024);
  const a = f("PPB_Audio;1.1", "Create")(2, c, 7, 99);
  const fields = res.base(a) + 2;
  cx.h[fields + 5] = 1; // PLAYING, as StartPlayback sets it
  res.addRef(a); // the thread's reference, as StartPlayback takes it
  const calls = [];
  runThread(/** @type {any} */ (cx), a, (fn, buf, bytes, latency, user, v11) => {
    calls.push([fn, bytes, user, v11, latency]);
    // Frame k of call n: left = n * 1000 + k, right = -left (as int16).
    const v = new Int16Array(cx.memory.buffer, buf, bytes / 2);
    for (let k = 0; k < bytes / 4; k++) {
      v[2 * k] = calls.length * 1000 + k;
      v[2 * k + 1] = -(calls.length * 1000 + k);
    }
    if (calls.length === 3) cx.h[fields + 5] = 0; // StopPlayback
  });
  assert.equal(calls.length, 3);
  assert.deepEqual(calls[0].slice(0, 4), [7, 4096, 99, true]);
  assert.equal(calls[1][4], 1024 / 48000, "latency: what is queued ahead, in seconds");
  const ring = cx.h[fields + 7] >>> 0;
  const cap = mem.i32(ring + 4 * RING.CAP);
  assert.equal(cap, 4096);
  assert.equal(mem.i32(ring + 4 * RING.WRITE), 3 * 1024);
  const frames = new Int16Array(cx.memory.buffer, ring + RING.HEADER, 2 * cap);
  assert.deepEqual([frames[0], frames[1], frames[2 * 1024], frames[2 * 2047 + 1]], [1000, -1000, 2000, -3023]);
  assert.equal(cx.h[fields + 6], 0, "not running any more");
});
