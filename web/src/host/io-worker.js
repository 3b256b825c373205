// The IO worker: host work that outlives a call (file systems, WebSockets, URL loads).
// It never runs module code, so it can answer a module thread blocked in a call while the
// main thread is busy. Requests come on a port per module thread;
// answers go back on the port (the main thread: its event loop), into the caller's cell
// (a blocking call: Atomics.notify) or onto the caller's message loop (ITEM_FINISH).
// A payload (directory entries, ReadToArray's bytes) goes in a block of module memory
// from the shared heap; the caller copies it out and frees it. This worker instantiates
// the module only for the runtime's page allocator behind that heap.

import { Context } from "./context.js";
import { ERR, FILE_TYPE, MemFs } from "./io/memfs.js";
import { Persist } from "./io/persist.js";
import { mapUrl, urlMapOf } from "./io/urlmap.js";
import { Loaders } from "./io/loader.js";
import { Sockets } from "./io/websocket.js";
import { ITEM_FINISH, post } from "./ppb/message_loop.js";
import { parentLine } from "./parent.js";

const FS_TYPE = { EXTERNAL: 1, LOCALPERSISTENT: 2, LOCALTEMPORARY: 3 };
const encoder = new TextEncoder();

let cx = null;
const systems = new Map([
  [FS_TYPE.LOCALPERSISTENT, new MemFs()],
  [FS_TYPE.LOCALTEMPORARY, new MemFs()],
]);
const open = new Map(); // FileIO resource -> {node, flags, type}
let persist = null; // LOCALPERSISTENT in IndexedDB (io/persist.js)

/** The file system type a request works on, or 0 for a request on no file system. */
function fsTypeOf(op, a) {
  if (op.startsWith("ref")) return a[0];
  if (op === "ioOpen") return a[1];
  if (op.startsWith("io")) return open.get(a[0])?.type ?? 0;
  return 0;
}
const READ_ONLY = new Set(["fsOpen", "refQuery", "refList", "ioQuery", "ioRead", "ioReadToArray", "ioClose"]);
let sockets = null; // the WebSockets (io/websocket.js)
let loaders = null; // the URL loads (io/loader.js)
let urlMap = []; // the page's URL map (io/urlmap.js)
let refuseUnmapped = false; // other hosts only through the map (web --refuse-unmapped)
let pageUrl = "";

function writeInfo(ptr, info, type) {
  const m = cx.mem;
  m.check(ptr, 40);
  m.dv.setBigInt64(ptr, BigInt(info.size), true);
  m.dv.setInt32(ptr + 8, info.type, true);
  m.dv.setInt32(ptr + 12, type, true);
  m.dv.setFloat64(ptr + 16, info.ctime, true);
  m.dv.setFloat64(ptr + 24, info.atime, true);
  m.dv.setFloat64(ptr + 32, info.mtime, true);
}

const infoOf = (n) => ({
  size: n.size,
  type: FILE_TYPE.REGULAR,
  ctime: n.ctime,
  atime: n.atime,
  mtime: n.mtime,
});

/** Runs one request: [result, payload bytes or null], or a promise of it. */
function run(op, a) {
  const fsOf = (type) => systems.get(type);
  switch (op) {
    case "wsConnect":
      if (refuseUnmapped && mapUrl(a[1], urlMap) === a[1] && new URL(a[1]).host !== new URL(pageUrl).host) {
        cx.console("warning", `pexe2wasm: WebSocket refused ${a[1]} (PP_ERROR_NOACCESS): another host than the page's, and this page reaches other hosts only through its URL map (pexe2wasm web --refuse-unmapped)`);
        return [ERR.NOACCESS, null];
      }
      return sockets.connect(a[0], a[1], a[2]);
    case "wsRecv":
      return sockets.receive(a[0]);
    case "wsSend":
      return sockets.send(a[0], a[1], a[2]);
    case "wsClose":
      return sockets.close(a[0], a[1], a[2]);
    case "wsForget":
      return sockets.forget(a[0]);
    case "urlOpen":
      return loaders.open(a[0], a[1]);
    case "urlRead":
      return loaders.read(a[0], cx.mem, a[1], a[2]);
    case "urlClose":
      return loaders.close(a[0]);
    case "fsOpen":
      return [a[0] === FS_TYPE.EXTERNAL ? ERR.NOACCESS : fsOf(a[0]) ? ERR.OK : ERR.FAILED, null];
    case "refMkdir":
      return [fsOf(a[0]).mkdir(a[1], a[2]), null];
    case "refTouch":
      return [fsOf(a[0]).touch(a[1], a[2], a[3]), null];
    case "refDelete":
      return [fsOf(a[0]).remove(a[1]), null];
    case "refRename":
      return [fsOf(a[0]).rename(a[1], a[2]), null];
    case "refQuery": {
      const info = fsOf(a[0]).query(a[1]);
      if (typeof info === "number") return [info, null];
      writeInfo(a[2], info, a[0]);
      return [ERR.OK, null];
    }
    case "refList": {
      const list = fsOf(a[0]).list(a[1]);
      if (typeof list === "number") return [list, null];
      return [ERR.OK, encoder.encode(JSON.stringify(list))];
    }
    case "ioOpen": {
      const [res, type, path, flags] = a;
      const n = fsOf(type).open(path, flags);
      if (typeof n === "number") return [n, null];
      open.set(res, { node: n, flags, type });
      return [ERR.OK, null];
    }
    case "ioClose":
      open.delete(a[0]);
      return [ERR.OK, null];
    default:
      break;
  }
  const f = open.get(a[0]);
  if (!f) return [ERR.FAILED, null];
  const n = f.node;
  switch (op) {
    case "ioQuery":
      writeInfo(a[1], infoOf(n), f.type);
      return [ERR.OK, null];
    case "ioTouch":
      n.atime = a[1];
      n.mtime = a[2];
      return [ERR.OK, null];
    case "ioRead": {
      if (!(f.flags & 1)) return [ERR.NOACCESS, null];
      const bytes = MemFs.read(n, a[1], a[3]);
      cx.mem.write(a[2], bytes);
      return [bytes.length, null];
    }
    case "ioReadToArray": {
      if (!(f.flags & 1)) return [ERR.NOACCESS, null];
      const bytes = MemFs.read(n, a[1], a[2]);
      return [bytes.length, bytes];
    }
    case "ioWrite": {
      if (!(f.flags & (2 | 32))) return [ERR.NOACCESS, null];
      const at = f.flags & 32 ? n.size : a[1];
      return [MemFs.write(n, at, cx.mem.bytes(a[2], a[3])), null];
    }
    case "ioSetLength":
      if (!(f.flags & 2)) return [ERR.NOACCESS, null];
      return [MemFs.setLength(n, a[1]), null];
    case "ioFlush":
      // Flush means "on disk": for the persistent file system, in IndexedDB.
      return f.type === FS_TYPE.LOCALPERSISTENT && persist ? persist.save().then(() => [ERR.OK, null]) : [ERR.OK, null];
    default:
      return [ERR.FAILED, null];
  }
}

/** A payload's block in module memory: [addr, len] (len 0: none). */
function place(bytes) {
  if (!bytes || bytes.length === 0) return [0, 0];
  const addr = cx.vars.locked(() => cx.heap.alloc(bytes.length));
  cx.mem.write(addr, bytes);
  return [addr, bytes.length];
}

async function answer(port, m) {
  let r;
  let payload = null;
  try {
    const type = fsTypeOf(m.op, m.a);
    [r, payload] = await run(m.op, m.a);
    if (type === FS_TYPE.LOCALPERSISTENT && !READ_ONLY.has(m.op)) persist?.schedule();
  } catch (e) {
    console.error(`pexe2wasm io: ${m.op}: ${e?.stack ?? e}`);
    r = ERR.FAILED;
  }
  if (!m.reply) return;
  const [addr, len] = place(payload);
  if (m.reply.to === "port") {
    port.postMessage({ t: "io", id: m.id, r, addr, len });
  } else if (m.reply.to === "cell") {
    const cell = port.cell;
    Atomics.store(cell, 1, r);
    Atomics.store(cell, 2, addr);
    Atomics.store(cell, 3, len);
    Atomics.store(cell, 0, 1);
    Atomics.notify(cell, 0);
  } else if (m.reply.to === "loop") {
    post(cx, m.reply.loop, m.id, 0, r, 0, { kind: ITEM_FINISH, words: [addr, len] });
  }
}

const toParent = parentLine(async (m) => {
  if (m.t === "init") {
    const ctx = new Context({
      isMain: false,
      tid: -1,
      memory: m.memory,
      hostSab: m.hostSab,
      toPage: (msg) => toParent({ t: "page", msg }),
      toMain: (msg) => toParent(msg),
      args: ["io"],
    });
    const instance = await WebAssembly.instantiate(m.module, ctx.imports(m.module));
    ctx.setExports(instance.exports);
    cx = ctx;
    urlMap = urlMapOf(m.urlMap);
    const note = (text) => ctx.console("warning", text);
    sockets = new Sockets(ctx.h, ctx.res, (u) => mapUrl(u, urlMap), note);
    refuseUnmapped = !!m.refuseUnmapped;
    pageUrl = m.pageUrl ?? self.location.href;
    loaders = new Loaders(ctx.h, ctx.res, pageUrl, urlMap, note, refuseUnmapped);
    persist = new Persist(systems.get(FS_TYPE.LOCALPERSISTENT), note);
    await persist.load();
    toParent({ t: "ready" });
  } else if (m.t === "port") {
    const port = m.port;
    port.onmessage = (ev) => {
      const q = ev.data;
      if (q.t === "hello") port.cell = new Int32Array(q.cell);
      else answer(port, q);
    };
  }
});
