// The IO worker's WebSockets (PPB_WebSocket's browser side). Each socket is the browser's
// WebSocket, kept here so that messages arrive while module threads are busy or blocked;
// the PPB side (ppb/websocket.js) asks for what it needs as IO requests. The ready state,
// close code, cleanness and buffered amount are written into the resource's state words,
// so the Get* calls answer from any thread without a request.

import { FIELDS } from "../resources.js";
import { PP_ERROR as E } from "../contract.js";

export const WS = { STATE: 0, CODE: 1, CLEAN: 2, BUFFERED: 3 };
export const READY = { INVALID: -1, CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3 };
// Results of a receive: which kind of message the payload holds.
export const TEXT = 0;
export const BINARY = 1;

const encoder = new TextEncoder();

/**
 * The Fetch standard's bad ports (https://fetch.spec.whatwg.org/#port-blocking), which
 * Chrome refused to a module's WebSocket (PP_ERROR_BADARGUMENT). Checked here, not left to
 * the browser: WebKitGTK never ends the connect of such a WebSocket (no close, no error),
 * and RFC 6455's one-connect-at-a-time rule then holds every later socket to that host.
 */
export const BAD_PORTS = new Set([
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110, 111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532, 540, 548,
  554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061, 6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080,
]);

export class Sockets {
  /**
   * h: the host block; mapUrl(url) -> the URL to use (the page's --url-map); note(text): the console.
   * @param {Int32Array} h
   * @param {(text: string) => void} [note]
   */
  constructor(h, res, mapUrl, note = () => {}) {
    this.h = h;
    this.res = res;
    this.mapUrl = mapUrl;
    this.note = note;
    this.toldPorts = new Set();
    this.sockets = new Map(); // resource -> {ws, queue, waiting, closed}
  }

  field(res, f, v) {
    const b = this.res.base(res) + FIELDS;
    if (v === undefined) return Atomics.load(this.h, b + f);
    Atomics.store(this.h, b + f, v);
  }

  /** wsConnect [res, url, protocols]: resolves when open (PP_OK) or failed. Payload: {protocol, extensions} as JSON. */
  connect(res, url, protocols) {
    if (this.sockets.has(res)) return [E.INPROGRESS, null];
    let ws;
    const target = this.mapUrl(url);
    // Chrome refused the app's URL on a bad port; the mapped one is refused too, as the
    // browser would not connect there (the command-line host does the same).
    let port;
    try {
      const ports = [url, target].map((u) => Number(new URL(u).port));
      port = ports.find((p) => BAD_PORTS.has(p)) ?? ports[1];
    } catch {
      return [E.BADARGUMENT, null];
    }
    if (BAD_PORTS.has(port)) {
      if (!this.toldPorts.has(port)) {
        this.toldPorts.add(port);
        this.note(`pexe2wasm: WebSocket refused ${target} (PP_ERROR_BADARGUMENT): port ${port} is one browsers block (Fetch's bad ports), as Chrome refused it`);
      }
      return [E.BADARGUMENT, null];
    }
    try {
      ws = new WebSocket(target, protocols);
    } catch {
      return [E.BADARGUMENT, null];
    }
    ws.binaryType = "arraybuffer";
    const s = { ws, queue: [], waiting: [], closing: null, sentBytes: 0 };
    this.sockets.set(res, s);
    this.field(res, WS.STATE, READY.CONNECTING);
    return new Promise((resolve) => {
      ws.onopen = () => {
        this.field(res, WS.STATE, READY.OPEN);
        resolve([E.OK, encoder.encode(JSON.stringify({ protocol: ws.protocol, extensions: ws.extensions }))]);
      };
      ws.onmessage = (e) => {
        const msg = typeof e.data === "string" ? [TEXT, encoder.encode(e.data)] : [BINARY, new Uint8Array(e.data)];
        const w = s.waiting.shift();
        if (w) w(msg);
        else s.queue.push(msg);
      };
      ws.onclose = (e) => {
        this.field(res, WS.STATE, READY.CLOSED);
        this.field(res, WS.CODE, e.code);
        this.field(res, WS.CLEAN, e.wasClean ? 1 : 0);
        s.reason = e.reason;
        // Receives still waiting get nothing more: failed (closed by the peer) or aborted
        // (closed by the app's Close).
        for (const w of s.waiting.splice(0)) w([s.closing ? E.ABORTED : E.FAILED, null]);
        resolve([E.FAILED, null]); // a connect that never opened
        s.closing?.([E.OK, encoder.encode(e.reason)]);
      };
    });
  }

  /** wsRecv [res]: the next message (TEXT or BINARY with its bytes), now or when it comes. */
  receive(res) {
    const s = this.sockets.get(res);
    if (!s) return [E.FAILED, null];
    if (s.queue.length) return s.queue.shift();
    if (this.field(res, WS.STATE) === READY.CLOSED) return [E.FAILED, null];
    return new Promise((resolve) => s.waiting.push(resolve));
  }

  /** wsSend [res, text?, bytes] (no answer). */
  send(res, text, bytes) {
    const s = this.sockets.get(res);
    if (!s || s.ws.readyState !== WebSocket.OPEN) return [E.FAILED, null];
    s.ws.send(text ? new TextDecoder().decode(bytes) : bytes);
    this.field(res, WS.BUFFERED, s.ws.bufferedAmount);
    return [E.OK, null];
  }

  /** wsClose [res, code, reason]: resolves when closed; payload: the reason. */
  close(res, code, reason) {
    const s = this.sockets.get(res);
    if (!s) return [E.FAILED, null];
    if (s.closing) return [E.INPROGRESS, null];
    this.field(res, WS.STATE, READY.CLOSING);
    return new Promise((resolve) => {
      s.closing = resolve;
      try {
        if (code === 1005) s.ws.close();
        else s.ws.close(code, reason);
      } catch {
        s.closing = null;
        resolve([E.BADARGUMENT, null]);
      }
    });
  }

  /** The resource is gone: its socket is closed and forgotten. */
  forget(res) {
    const s = this.sockets.get(res);
    if (!s) return [E.OK, null];
    this.sockets.delete(res);
    try {
      s.ws.close();
    } catch {
      // already closed
    }
    return [E.OK, null];
  }
}
