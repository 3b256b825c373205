// What the page does for an instance that only a page can do: the cursor, pointer lock,
// fullscreen and gamepads (PPB_MouseCursor, PPB_MouseLock, PPB_Fullscreen, PPB_Gamepad;
// the module's side is host/ppb/page.js). Kept apart from embed.js so a test page can
// drive it alone.

import { TO_AUDIO_WORKLET } from "./host/protocol.js";

// PP_MouseCursor_Type -> CSS (ppb_mouse_cursor.h order; CUSTOM is -1).
const CURSORS = [
  "default", "crosshair", "pointer", "text", "wait", "help", "e-resize", "n-resize", "ne-resize",
  "nw-resize", "s-resize", "se-resize", "sw-resize", "w-resize", "ns-resize", "ew-resize",
  "nesw-resize", "nwse-resize", "col-resize", "row-resize", "all-scroll", "e-resize",
  "n-resize", "ne-resize", "nw-resize", "s-resize", "se-resize", "sw-resize", "w-resize", "move",
  "vertical-text", "cell", "context-menu", "alias", "progress", "no-drop", "copy", "none",
  "not-allowed", "zoom-in", "zoom-out", "grab", "grabbing",
];

/** The CSS cursor for a "cursor" message: {type} or {type: -1, w, h, rgba, hx, hy}. */
export function cursorCss(m) {
  if (m.type === -1 && m.rgba) {
    const c = document.createElement("canvas");
    c.width = m.w;
    c.height = m.h;
    c.getContext("2d").putImageData(new ImageData(new Uint8ClampedArray(m.rgba), m.w, m.h), 0, 0);
    return `url(${c.toDataURL()}) ${m.hx} ${m.hy}, auto`;
  }
  return CURSORS[m.type] ?? "default";
}

/**
 * Runs a page call of the module ({what, done}) on `canvas`; `reply(result)` completes its
 * callback. Pointer lock and fullscreen need a user gesture, as in Chrome: without one the
 * browser refuses and the app gets PP_ERROR_FAILED.
 */
export function pageCall(canvas, m, reply) {
  if (m.what === "lock-mouse") {
    if (document.pointerLockElement === canvas) return reply(0);
    const done = (ok) => {
      document.removeEventListener("pointerlockchange", onChange);
      document.removeEventListener("pointerlockerror", onError);
      reply(ok ? 0 : -2);
    };
    const onChange = () => done(document.pointerLockElement === canvas);
    const onError = () => done(false);
    document.addEventListener("pointerlockchange", onChange);
    document.addEventListener("pointerlockerror", onError);
    try {
      const p = canvas.requestPointerLock();
      if (p && typeof p.catch === "function") p.catch(() => done(false));
    } catch {
      done(false);
    }
  } else {
    reply(-2);
  }
}

let audioNoted = false;

/**
 * Plays an audio resource's ring (host/ppb/audio.js): an AudioContext at the app's sample
 * rate with the pexe2wasm-audio worklet reading module memory. Browsers start audio only
 * after a user gesture: until then the context waits, and resumes at the first click or
 * key on the page (the console says so once). Returns a stop function.
 */
export function startAudio(m, workletUrl) {
  const ctx = new AudioContext({ sampleRate: m.rate });
  let node = null;
  let stopped = false;
  const ready = ctx.audioWorklet.addModule(workletUrl).then(() => {
    if (stopped) return;
    node = new AudioWorkletNode(ctx, "pexe2wasm-audio", {
      numberOfInputs: 0,
      outputChannelCount: [2],
      processorOptions: { memory: m.memory, ring: m.ring },
    });
    node.connect(ctx.destination);
  });
  if (ctx.state === "suspended") {
    if (!audioNoted) {
      audioNoted = true;
      console.info("pexe2wasm: the app's sound starts at the first click or key on the page (browsers let audio start only after a user gesture)");
    }
    const resume = () => {
      ctx.resume();
      document.removeEventListener("pointerdown", resume, true);
      document.removeEventListener("keydown", resume, true);
    };
    document.addEventListener("pointerdown", resume, true);
    document.addEventListener("keydown", resume, true);
  }
  return {
    ctx,
    ready,
    stop() {
      stopped = true;
      node?.port.postMessage(TO_AUDIO_WORKLET.STOP);
      node?.disconnect();
      ctx.close();
    },
  };
}

/** Fullscreen on or off for `canvas`; the browser's answer comes as a fullscreenchange. */
export function setFullscreen(canvas, on) {
  const p = on ? canvas.requestFullscreen?.() : document.fullscreenElement ? document.exitFullscreen() : null;
  if (p && typeof p.catch === "function") p.catch(() => {});
}

/**
 * Samples navigator.getGamepads() at every animation frame into `sab` at byte `at`: a
 * sequence word (odd while writing), then PP_GamepadsSampleData. Returns a stop function.
 */
export function startGamepads(sab, at, getGamepads = () => navigator.getGamepads?.() ?? []) {
  const seq = new Int32Array(sab, at, 1);
  const base = at + 8;
  const dv = new DataView(sab, base, 1896);
  let raf = 0;
  let stopped = false;
  const write = () => {
    const pads = Array.from(getGamepads() ?? []).filter(Boolean).slice(0, 4);
    Atomics.add(seq, 0, 1);
    dv.setUint32(0, pads.length, true);
    for (let k = 0; k < 4; k++) {
      const o = 8 + 472 * k;
      const gp = pads[k];
      for (let b = 0; b < 472; b += 4) dv.setUint32(o + b, 0, true);
      if (!gp) continue;
      const axes = gp.axes.slice(0, 16);
      const buttons = gp.buttons.slice(0, 32);
      dv.setUint32(o, axes.length, true);
      axes.forEach((v, i) => dv.setFloat32(o + 4 + 4 * i, v, true));
      dv.setUint32(o + 68, buttons.length, true);
      buttons.forEach((b, i) => dv.setFloat32(o + 72 + 4 * i, typeof b === "number" ? b : b.value, true));
      dv.setFloat64(o + 200, gp.timestamp ?? 0, true);
      const id = String(gp.id ?? "").slice(0, 127);
      for (let i = 0; i < id.length; i++) dv.setUint16(o + 208 + 2 * i, id.charCodeAt(i), true);
      dv.setUint32(o + 464, gp.connected ? 1 : 0, true);
    }
    Atomics.add(seq, 0, 1);
  };
  const tick = () => {
    if (stopped) return;
    write();
    raf = requestAnimationFrame(tick);
  };
  tick();
  return () => {
    stopped = true;
    cancelAnimationFrame(raf);
  };
}
