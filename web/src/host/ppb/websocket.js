// PPB_WebSocket;1.0. The sockets live in the IO worker (io/websocket.js), which never runs
// module code: messages arrive while the app's threads are busy, a module thread may block
// in ReceiveMessage (decompress in the corpus does), and the main thread gets its
// callbacks from its event loop. The rules are Chrome's (ppb_websocket.h): ws:// and wss://
// URLs only, close codes 1000 or 3000-4999, pending receives aborted by Close.

import { decodeUtf8 } from "../mem.js";
import { FIELDS, KIND } from "../resources.js";
import { BINARY, READY, TEXT, WS } from "../io/websocket.js";
import { T } from "../vars.js";
import { PP_ERROR as E } from "../contract.js";
import { IO_OP } from "../protocol.js";


/** @param {import("../context.js").Context} cx the calling thread's context */
export function register(reg, cx) {
  // The socket is the IO worker's: it closes it and drops its records.
  reg.onRelease(KIND.WEBSOCKET, (res) => cx.ioTell(IO_OP.WS_FORGET, [res]));
  const I = "PPB_WebSocket;1.0";
  const local = new Map(); // resource -> {url, protocol, extensions, reason}: what this worker learnt
  const at = (res) => {
    const b = cx.res.of(res, KIND.WEBSOCKET);
    return b < 0 ? -1 : b + FIELDS;
  };
  const info = (res) => {
    let l = local.get(res);
    if (!l) local.set(res, (l = { url: null, protocol: "", extensions: "", reason: "" }));
    return l;
  };
  const str = (ret, s) => cx.vars.write(ret, s === null ? { t: T.UNDEFINED, v: 0 } : cx.vars.fromJS(s));

  reg.def(I, "Create", (instance) => {
    if (instance !== cx.instance) return 0;
    return cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.WEBSOCKET);
      cx.h[cx.res.base(id) + FIELDS + WS.STATE] = READY.INVALID;
      cx.h[cx.res.base(id) + FIELDS + WS.CODE] = 0;
      return id;
    });
  });
  reg.def(I, "IsWebSocket", (res) => (at(res) >= 0 ? 1 : 0));
  reg.def(I, "Connect", (res, urlPtr, protos, count, cb) => {
    const b = at(res);
    if (b < 0) return E.BADRESOURCE;
    if (Atomics.load(cx.h, b + WS.STATE) !== READY.INVALID) return E.INPROGRESS;
    const url = cx.vars.toJS(cx.vars.read(urlPtr));
    let u;
    try {
      u = new URL(String(url));
    } catch {
      return E.BADARGUMENT;
    }
    if ((u.protocol !== "ws:" && u.protocol !== "wss:") || u.hash) return E.BADARGUMENT;
    const protocols = [];
    for (let k = 0; k < Math.min(count >>> 0, 64); k++) {
      const p = cx.vars.toJS(cx.vars.read(protos + 16 * k));
      if (typeof p !== "string" || !/^[\x21-\x7e]+$/.test(p) || protocols.includes(p)) return E.BADARGUMENT;
      protocols.push(p);
    }
    info(res).url = u.href;
    Atomics.store(cx.h, b + WS.STATE, READY.CONNECTING);
    return cx.io(cb, IO_OP.WS_CONNECT, [res, u.href, protocols], (r, payload) => {
      if (r === E.OK && payload) Object.assign(info(res), JSON.parse(decodeUtf8(payload)));
      return r;
    });
  });
  reg.def(I, "Close", (res, code, reasonPtr, cb) => {
    const b = at(res);
    if (b < 0) return E.BADRESOURCE;
    code &= 0xffff;
    if (code !== 1005 && code !== 1000 && (code < 3000 || code > 4999)) return E.NOACCESS;
    const reason = cx.vars.toJS(cx.vars.read(reasonPtr));
    const text = typeof reason === "string" ? reason : "";
    if (new TextEncoder().encode(text).length > 123) return E.BADARGUMENT;
    const state = Atomics.load(cx.h, b + WS.STATE);
    if (state === READY.CLOSING || state === READY.CLOSED) return E.INPROGRESS;
    if (state === READY.INVALID) return E.FAILED;
    return cx.io(cb, IO_OP.WS_CLOSE, [res, code, text], (r, payload) => {
      if (payload) info(res).reason = decodeUtf8(payload);
      return r;
    });
  });
  reg.def(I, "ReceiveMessage", (res, msgPtr, cb) => {
    const b = at(res);
    if (b < 0) return E.BADRESOURCE;
    const state = Atomics.load(cx.h, b + WS.STATE);
    if (state === READY.INVALID || state === READY.CONNECTING) return E.BADARGUMENT;
    return cx.io(cb, IO_OP.WS_RECV, [res], (r, payload) => {
      if (r !== TEXT && r !== BINARY) return r;
      const bytes = payload ?? new Uint8Array(0);
      let v;
      if (r === TEXT) {
        v = cx.vars.stringFromBytes(bytes);
      } else {
        v = cx.vars.arrayBuffer(bytes.length);
        const buf = cx.vars.bufferOf(v);
        if (bytes.length) cx.mem.write(buf.addr, bytes);
      }
      cx.vars.write(msgPtr, v);
      return E.OK;
    });
  });
  reg.def(I, "SendMessage", (res, msgPtr) => {
    const b = at(res);
    if (b < 0) return E.BADRESOURCE;
    const v = cx.vars.read(msgPtr);
    let text;
    let bytes;
    if (v.t === T.STRING) {
      text = true;
      const u = cx.vars.utf8(v);
      bytes = u ? cx.mem.bytes(u.addr, u.len) : new Uint8Array(0);
    } else if (v.t === T.ARRAY_BUFFER) {
      text = false;
      const buf = cx.vars.bufferOf(v);
      bytes = cx.mem.bytes(buf.addr, buf.len);
    } else {
      return E.BADARGUMENT;
    }
    const state = Atomics.load(cx.h, b + WS.STATE);
    if (state !== READY.OPEN) return E.FAILED;
    Atomics.add(cx.h, b + WS.BUFFERED, bytes.length);
    cx.ioTell(IO_OP.WS_SEND, [res, text, bytes]);
    return E.OK;
  });
  reg.def(I, "GetBufferedAmount", (res) => {
    const b = at(res);
    return BigInt(b < 0 ? 0 : Math.max(0, Atomics.load(cx.h, b + WS.BUFFERED)));
  });
  reg.def(I, "GetCloseCode", (res) => {
    const b = at(res);
    return b < 0 ? 0 : Atomics.load(cx.h, b + WS.CODE);
  });
  reg.def(I, "GetCloseReason", (ret, res) => str(ret, at(res) < 0 ? null : info(res).reason));
  reg.def(I, "GetCloseWasClean", (res) => {
    const b = at(res);
    return b < 0 ? 0 : Atomics.load(cx.h, b + WS.CLEAN);
  });
  reg.def(I, "GetExtensions", (ret, res) => str(ret, at(res) < 0 ? null : info(res).extensions));
  reg.def(I, "GetProtocol", (ret, res) => str(ret, at(res) < 0 ? null : info(res).protocol));
  reg.def(I, "GetReadyState", (res) => {
    const b = at(res);
    return b < 0 ? READY.INVALID : Atomics.load(cx.h, b + WS.STATE);
  });
  reg.def(I, "GetURL", (ret, res) => str(ret, at(res) < 0 ? null : (info(res).url ?? "")));
}
