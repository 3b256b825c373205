// The IO worker: host work that outlives a call (file systems, WebSockets, URL loads).
// It never runs module code, so it can answer a module thread blocked in a call while the
// main thread is busy. Requests come on a port per module thread;
// answers go back on the port (the main thread: its event loop), into the caller's cell
// (a blocking call: Atomics.notify) or onto the caller's message loop (ITEM_FINISH).
// A payload (directory entries, ReadToArray's bytes) goes in a block of module memory
// from the shared heap; the caller copies it out and frees it. This worker instantiates
// the module only for the runtime's page allocator behind that heap.

import { Context } from "./context.js";
import { ERR, SandboxFs } from "./io/sandbox-fs.js";
import { IdbStore, MemoryStore, MAX_STORED_FILE, StoreDirectoryHandle } from "../compat/kv-directory.js";
import { PERSISTENT_DIR, TEMPORARY_DIR, grantedQuota, sandboxFolder } from "../compat/sandbox-layout.js";
import { mapUrl, urlMapOf } from "./io/urlmap.js";
import { Loaders } from "./io/loader.js";
import { Sockets } from "./io/websocket.js";
import { ITEM_FINISH, post } from "./ppb/message_loop.js";
import { parentLine } from "./parent.js";
import { PP_FILESYSTEMTYPE as FS_TYPE } from "./contract.js";
import { FROM_IO, FROM_IO_PORT, IO_OP, isKind, REPLY_TO, TO_IO, TO_IO_PORT, unknownMessage } from "./protocol.js";

const encoder = new TextEncoder();

let cx = null;
const systems = new Map(); // LOCALPERSISTENT, LOCALTEMPORARY -> SandboxFs (io/sandbox-fs.js)
const open = new Map(); // FileIO resource -> {file (SandboxFs's), flags, type}

/**
 * The root under which the sandboxed file systems live (compat/sandbox-layout.js): the
 * Origin Private File System where this worker has it with sync access handles (Chromium,
 * Firefox), else the IndexedDB store the page's webkitRequestFileSystem uses there too
 * (WebKitGTK 2.50 has no OPFS), else memory. Says once on the console when it is not OPFS.
 */
async function sandboxRoot(note) {
  const storage = self.navigator?.storage;
  let why = "this browser has no Origin Private File System";
  if (storage?.getDirectory && typeof FileSystemFileHandle !== "undefined" && "createSyncAccessHandle" in FileSystemFileHandle.prototype) {
    try {
      return await storage.getDirectory();
    } catch (e) {
      why = `the Origin Private File System is refused here (${e?.message ?? e})`;
    }
  }
  const big = `whole files up to ${MAX_STORED_FILE / 2 ** 30} GiB`;
  if (typeof indexedDB !== "undefined") {
    try {
      const store = new IdbStore();
      await store.open();
      note(`pexe2wasm: ${why}: the module's persistent and temporary files live in IndexedDB (${big}), shared with the page's webkitRequestFileSystem`);
      return new StoreDirectoryHandle(store);
    } catch (e) {
      why += ` and IndexedDB failed (${e?.message ?? e})`;
    }
  }
  note(`pexe2wasm: ${why}: the module's files live in memory for this visit only (${big})`);
  return new StoreDirectoryHandle(new MemoryStore());
}

/** Opens the sandboxed file systems, in the page's folders (`pageLoad`: the page load's id). */
async function openFileSystems(note, pageLoad) {
  const load = pageLoad ?? `io-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  const open = async (root) => {
    // The page's requestQuota records the persistent grant beside the folders.
    const quota = () => grantedQuota(root);
    systems.set(FS_TYPE.LOCALPERSISTENT, new SandboxFs(await sandboxFolder(root, PERSISTENT_DIR, load), { note, quota }));
    systems.set(FS_TYPE.LOCALTEMPORARY, new SandboxFs(await sandboxFolder(root, TEMPORARY_DIR, load), { note }));
  };
  try {
    await open(await sandboxRoot(note));
  } catch (e) {
    // The worker must still say it is ready: the module's files then last for this visit.
    note(`pexe2wasm: the sandboxed file systems could not be opened (${e?.name ?? ""} ${e?.message ?? e}); the module's files live in memory for this visit only`);
    await open(new StoreDirectoryHandle(new MemoryStore()));
  }
}

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

/** Runs one request: [result, payload bytes or null], or a promise of it. */
function run(op, a) {
  switch (op) {
    case IO_OP.WS_CONNECT:
      if (refuseUnmapped && mapUrl(a[1], urlMap) === a[1] && new URL(a[1]).host !== new URL(pageUrl).host) {
        cx.console("warning", `pexe2wasm: WebSocket refused ${a[1]} (PP_ERROR_NOACCESS): another host than the page's, and this page reaches other hosts only through its URL map (pexe2wasm web --refuse-unmapped)`);
        return [ERR.NOACCESS, null];
      }
      return sockets.connect(a[0], a[1], a[2]);
    case IO_OP.WS_RECV:
      return sockets.receive(a[0]);
    case IO_OP.WS_SEND:
      return sockets.send(a[0], a[1], a[2]);
    case IO_OP.WS_CLOSE:
      return sockets.close(a[0], a[1], a[2]);
    case IO_OP.WS_FORGET:
      return sockets.forget(a[0]);
    case IO_OP.URL_OPEN:
      return loaders.open(a[0], a[1]);
    case IO_OP.URL_READ:
      return loaders.read(a[0], cx.mem, a[1], a[2]);
    case IO_OP.URL_CLOSE:
      return loaders.close(a[0]);
    case IO_OP.FS_OPEN:
      return [a[0] === FS_TYPE.EXTERNAL ? ERR.NOACCESS : systems.has(a[0]) ? ERR.OK : ERR.FAILED, null];
    default:
      break;
  }
  return fileOp(op, a).then((r) => (typeof r === "number" ? [r, null] : r));
}

/** A file system request: a code, or [result, payload]. */
async function fileOp(op, a) {
  const fsOf = (type) => systems.get(type) ?? null;
  switch (op) {
    case IO_OP.REF_MKDIR:
      return fsOf(a[0])?.mkdir(a[1], a[2]) ?? ERR.FAILED;
    case IO_OP.REF_TOUCH:
      return fsOf(a[0])?.touch(a[1], a[2], a[3]) ?? ERR.FAILED;
    case IO_OP.REF_DELETE:
      return fsOf(a[0])?.remove(a[1]) ?? ERR.FAILED;
    case IO_OP.REF_RENAME:
      return fsOf(a[0])?.rename(a[1], a[2]) ?? ERR.FAILED;
    case IO_OP.REF_QUERY: {
      const info = await fsOf(a[0])?.query(a[1]);
      if (info === undefined) return ERR.FAILED;
      if (typeof info === "number") return info;
      writeInfo(a[2], info, a[0]);
      return ERR.OK;
    }
    case IO_OP.REF_LIST: {
      const list = await fsOf(a[0])?.list(a[1]);
      if (list === undefined) return ERR.FAILED;
      if (typeof list === "number") return list;
      return [ERR.OK, encoder.encode(JSON.stringify(list))];
    }
    case IO_OP.IO_OPEN: {
      const [res, type, path, flags] = a;
      const fs = fsOf(type);
      if (!fs) return ERR.FAILED;
      const file = await fs.open(path, flags);
      if (typeof file === "number") return file;
      open.set(res, { file, flags, type, fs });
      return ERR.OK;
    }
    case IO_OP.IO_CLOSE: {
      const f = open.get(a[0]);
      open.delete(a[0]);
      return f ? f.fs.close(f.file) : ERR.OK;
    }
    default:
      break;
  }
  const f = open.get(a[0]);
  if (!f) return ERR.FAILED;
  const { fs, file } = f;
  switch (op) {
    case IO_OP.IO_QUERY: {
      const info = await fs.info(file);
      if (typeof info === "number") return info;
      writeInfo(a[1], info, f.type);
      return ERR.OK;
    }
    case IO_OP.IO_TOUCH:
      return fs.touchFile(file, a[1], a[2]);
    case IO_OP.IO_READ: {
      if (!(f.flags & 1)) return ERR.NOACCESS;
      const bytes = await fs.read(file, a[1], a[3]);
      if (typeof bytes === "number") return bytes;
      cx.mem.write(a[2], bytes);
      return bytes.length;
    }
    case IO_OP.IO_READ_TO_ARRAY: {
      if (!(f.flags & 1)) return ERR.NOACCESS;
      const bytes = await fs.read(file, a[1], a[2]);
      return typeof bytes === "number" ? bytes : [bytes.length, bytes];
    }
    case IO_OP.IO_WRITE: {
      if (!(f.flags & (2 | 32))) return ERR.NOACCESS;
      // A copy: the module's memory is shared, and a handle may refuse a shared view.
      return fs.write(file, f.flags & 32 ? null : a[1], cx.mem.bytes(a[2], a[3]).slice());
    }
    case IO_OP.IO_SET_LENGTH:
      if (!(f.flags & 2)) return ERR.NOACCESS;
      return fs.setLength(file, a[1]);
    case IO_OP.IO_FLUSH:
      return fs.flush(file);
    default:
      return ERR.FAILED;
  }
}

/** A payload's block in module memory: [addr, len] (len 0: none). */
function place(bytes) {
  if (!bytes || bytes.length === 0) return [0, 0];
  const addr = cx.vars.locked(() => cx.heap.alloc(bytes.length));
  cx.mem.write(addr, bytes);
  return [addr, bytes.length];
}

export async function answer(port, m) {
  let r;
  let payload = null;
  try {
    if (isKind(IO_OP, m.op)) {
      [r, payload] = await run(m.op, m.a);
    } else {
      // Answered (FAILED), so a caller that waits is not left waiting.
      unknownMessage("IO request op", m.op);
      r = ERR.FAILED;
    }
  } catch (e) {
    console.error(`pexe2wasm io: ${m.op}: ${e?.stack ?? e}`);
    r = ERR.FAILED;
  }
  if (!m.reply) return;
  const [addr, len] = place(payload);
  if (m.reply.to === REPLY_TO.PORT) {
    port.postMessage({ t: FROM_IO_PORT.IO, id: m.id, r, addr, len });
  } else if (m.reply.to === REPLY_TO.CELL) {
    const cell = port.cell;
    Atomics.store(cell, 1, r);
    Atomics.store(cell, 2, addr);
    Atomics.store(cell, 3, len);
    Atomics.store(cell, 0, 1);
    Atomics.notify(cell, 0);
  } else if (m.reply.to === REPLY_TO.LOOP) {
    post(cx, m.reply.loop, m.id, 0, r, 0, { kind: ITEM_FINISH, words: [addr, len] });
  }
}

/** A module thread's message on its port `port`. */
export function onPortMessage(port, q) {
  if (q?.t === TO_IO_PORT.HELLO) port.cell = new Int32Array(q.cell);
  else if (q?.t === TO_IO_PORT.REQUEST) answer(port, q);
  else unknownMessage("module thread -> IO worker", q?.t);
}

/** The instance worker's message (or the page's: a thread worker's port). */
export async function onParentMessage(m) {
  if (m?.t === TO_IO.INIT) {
    const ctx = new Context({
      isMain: false,
      tid: -1,
      memory: m.memory,
      hostSab: m.hostSab,
      toPage: (msg) => toParent({ t: FROM_IO.PAGE, msg }),
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
    await openFileSystems(note, m.pageLoad);
    toParent({ t: FROM_IO.READY });
  } else if (m?.t === TO_IO.PORT) {
    const port = m.port;
    port.onmessage = (ev) => onPortMessage(port, ev.data);
  } else {
    unknownMessage("instance worker -> IO worker", m?.t);
  }
}

const toParent = parentLine(onParentMessage);
