// The AudioWorklet processor of PPB_Audio (host/ppb/audio.js): plays the ring of 16-bit
// stereo frames the app's audio thread fills in module memory. It never waits: frames
// missing when the browser asks are silence (an underrun), as Chrome played them.

import { TO_AUDIO_WORKLET, unknownMessage } from "./host/protocol.js";

const RING = { WRITE: 0, READ: 1, CAP: 2, HEADER: 16 };

class Pexe2wasmAudio extends AudioWorkletProcessor {
  constructor(options) {
    super();
    const { memory, ring } = options.processorOptions;
    this.words = new Int32Array(memory, ring, 4);
    this.cap = this.words[RING.CAP];
    this.frames = new Int16Array(memory, ring + RING.HEADER, 2 * this.cap);
    this.stopped = false;
    this.port.onmessage = (e) => {
      if (e.data === TO_AUDIO_WORKLET.STOP) this.stopped = true;
      else unknownMessage("page -> audio worklet", e.data);
    };
  }

  process(_inputs, outputs) {
    const [left, right] = outputs[0];
    const n = left.length;
    const w = this.words;
    const written = Atomics.load(w, RING.WRITE);
    let read = Atomics.load(w, RING.READ);
    const have = Math.min(n, written - read);
    for (let i = 0; i < have; i++) {
      const at = 2 * ((read + i) % this.cap);
      left[i] = this.frames[at] / 32768;
      (right ?? left)[i] = this.frames[at + 1] / 32768;
    }
    for (let i = have; i < n; i++) {
      left[i] = 0;
      if (right) right[i] = 0;
    }
    read += have;
    Atomics.store(w, RING.READ, read);
    Atomics.notify(w, RING.READ);
    return !this.stopped;
  }
}

registerProcessor("pexe2wasm-audio", Pexe2wasmAudio);
