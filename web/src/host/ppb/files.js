// PPB_FileSystem;1.0, PPB_FileRef;1.0-1.2, PPB_FileIO;1.0-1.1. The resources (a file
// system's type, a reference's path, an open file's state) are in the shared table; the
// files themselves are the IO worker's (io-worker.js, io/sandbox-fs.js), reached through
// `cx.io`, which applies Chrome's callback rules.

import { FIELDS, KIND } from "../resources.js";
import { T } from "../vars.js";
import { OFFERED, PP_ERROR as E, PP_FILESYSTEMTYPE } from "../contract.js";
import { IO_OP } from "../protocol.js";

const FS = { TYPE: 0, OPENED: 1 }; // OPENED: 0 no, 1 opening, 2 open
const REF = { FS: 0, TYPE: 1, PATH: 2 }; // PATH: a string var's slot
const FIO = { OPEN: 0 }; // 0 no, 1 opening, 2 open

/** Chrome\x27s path rules for a file system\x27s FileRef: absolute, no `..`, no trailing slash. */
function normalize(path) {
  if (!path.startsWith("/") || path.split("/").includes("..")) return null;
  const p = path.replace(/\/+/g, "/");
  return p.length > 1 && p.endsWith("/") ? p.slice(0, -1) : p;
}

/** Whether cx.io refused a call before starting it (Chrome's callback rules). */
const refused = (r) => r === E.BLOCKS_MAIN_THREAD || r === E.NO_MESSAGE_LOOP;

/** Frees what a FileRef held (its path var), given its state words at release. */
function freeRef(cx, fields) {
  if (fields[REF.PATH]) cx.vars.release({ t: T.STRING, v: fields[REF.PATH] });
  if (fields[REF.FS]) cx.releaseResource(fields[REF.FS]);
}

export function register(reg, cx) {
  reg.onRelease(KIND.FILE_REF, (_res, fields) => freeRef(cx, fields));
  // The open file is the IO worker's: it closes it.
  reg.onRelease(KIND.FILE_IO, (res) => cx.ioTell(IO_OP.IO_CLOSE, [res]));
  const at = (res, kind) => {
    const b = cx.res.of(res, kind);
    return b < 0 ? -1 : b + FIELDS;
  };
  const h = cx.h;

  const S = "PPB_FileSystem;1.0";
  reg.def(S, "Create", (instance, type) => {
    if (instance !== cx.instance || type < PP_FILESYSTEMTYPE.EXTERNAL || type > PP_FILESYSTEMTYPE.ISOLATED) return 0;
    return cx.vars.locked(() => {
      const id = cx.res.createLocked(KIND.FILE_SYSTEM);
      h[cx.res.base(id) + FIELDS + FS.TYPE] = type;
      return id;
    });
  });
  reg.def(S, "IsFileSystem", (res) => (at(res, KIND.FILE_SYSTEM) >= 0 ? 1 : 0));
  reg.def(S, "GetType", (res) => {
    const b = at(res, KIND.FILE_SYSTEM);
    return b < 0 ? 0 : h[b + FS.TYPE];
  });
  reg.def(S, "Open", (res, _expected, cb) => {
    const b = at(res, KIND.FILE_SYSTEM);
    if (b < 0) return E.BADRESOURCE;
    // A file system is opened once.
    if (Atomics.compareExchange(h, b + FS.OPENED, 0, 1) !== 0) return E.FAILED;
    const r = cx.io(cb, IO_OP.FS_OPEN, [h[b + FS.TYPE]], (code) => {
      Atomics.store(h, b + FS.OPENED, code === E.OK ? 2 : 0);
      return code;
    });
    if (refused(r)) Atomics.store(h, b + FS.OPENED, 0);
    return r;
  });

  /** A new FileRef (one reference) on file system `fs` for a normalized `path`. */
  const newRef = (fs, type, path) => {
    const v = cx.vars.fromJS(path);
    return cx.vars.locked(() => {
      cx.res.addRefLocked(fs);
      const id = cx.res.createLocked(KIND.FILE_REF);
      const b = cx.res.base(id) + FIELDS;
      h[b + REF.FS] = fs;
      h[b + REF.TYPE] = type;
      h[b + REF.PATH] = v.v;
      return id;
    });
  };
  const refOf = (res) => {
    const b = at(res, KIND.FILE_REF);
    if (b < 0) return null;
    const path = cx.vars.toJS({ t: T.STRING, v: h[b + REF.PATH] });
    return { b, fs: h[b + REF.FS], type: h[b + REF.TYPE], path };
  };
  const R = OFFERED.PPB_FileRef;
  reg.defAll(R, "Create", (fs, pathPtr) => {
    const b = at(fs, KIND.FILE_SYSTEM);
    if (b < 0 || pathPtr === 0) return 0;
    const type = h[b + FS.TYPE];
    if (type === PP_FILESYSTEMTYPE.EXTERNAL) return 0; // only a browser could make those
    const path = normalize(cx.mem.cstring(pathPtr));
    return path === null ? 0 : newRef(fs, type, path);
  });
  reg.defAll(R, "IsFileRef", (res) => (at(res, KIND.FILE_REF) >= 0 ? 1 : 0));
  reg.defAll(R, "GetFileSystemType", (res) => refOf(res)?.type ?? 0);
  reg.defAll(R, "GetName", (ret, res) => {
    const r = refOf(res);
    const name = !r ? null : r.path === "/" ? "/" : r.path.slice(r.path.lastIndexOf("/") + 1);
    cx.vars.write(ret, name === null ? { t: T.UNDEFINED, v: 0 } : cx.vars.fromJS(name));
  });
  reg.defAll(R, "GetPath", (ret, res) => {
    const r = refOf(res);
    cx.vars.write(ret, r ? cx.vars.fromJS(r.path) : { t: T.UNDEFINED, v: 0 });
  });
  reg.defAll(R, "GetParent", (res) => {
    const r = refOf(res);
    if (!r) return 0;
    const cut = r.path.lastIndexOf("/");
    return newRef(r.fs, r.type, cut <= 0 ? "/" : r.path.slice(0, cut));
  });
  const withRef = (res, cb, f) => {
    const r = refOf(res);
    if (!r) return E.BADRESOURCE;
    return f(r);
  };
  reg.def(R[0], "MakeDirectory", (res, ancestors, cb) =>
    withRef(res, cb, (r) => cx.io(cb, IO_OP.REF_MKDIR, [r.type, r.path, ancestors ? 1 : 0])),
  );
  reg.def(R[1], "MakeDirectory", (res, ancestors, cb) =>
    withRef(res, cb, (r) => cx.io(cb, IO_OP.REF_MKDIR, [r.type, r.path, ancestors ? 1 : 0])),
  );
  reg.def(R[2], "MakeDirectory", (res, flags, cb) =>
    withRef(res, cb, (r) => cx.io(cb, IO_OP.REF_MKDIR, [r.type, r.path, flags])),
  );
  reg.defAll(R, "Touch", (res, atime, mtime, cb) =>
    withRef(res, cb, (r) => cx.io(cb, IO_OP.REF_TOUCH, [r.type, r.path, atime, mtime])),
  );
  reg.defAll(R, "Delete", (res, cb) => withRef(res, cb, (r) => cx.io(cb, IO_OP.REF_DELETE, [r.type, r.path])));
  reg.defAll(R, "Rename", (res, to, cb) =>
    withRef(res, cb, (r) => {
      const t = refOf(to);
      if (!t || t.type !== r.type) return E.BADARGUMENT;
      return cx.io(cb, IO_OP.REF_RENAME, [r.type, r.path, t.path]);
    }),
  );
  for (const i of R.slice(1)) {
    reg.def(i, "Query", (res, info, cb) =>
      withRef(res, cb, (r) => (info === 0 ? E.BADARGUMENT : cx.io(cb, IO_OP.REF_QUERY, [r.type, r.path, info]))),
    );
    // Entries come back as a payload; the app\x27s PP_ArrayOutput gets PP_DirectoryEntry
    // {file_ref, file_type} each, with a new FileRef for every entry.
    reg.def(i, "ReadDirectoryEntries", (res, output, cb) =>
      withRef(res, cb, (r) => {
        if (output === 0) return E.BADARGUMENT;
        const getBuffer = cx.mem.u32(output);
        const outData = cx.mem.u32(output + 4);
        return cx.io(cb, IO_OP.REF_LIST, [r.type, r.path], (code, payload) => {
          if (code !== E.OK) return code;
          const list = JSON.parse(new TextDecoder().decode(payload ?? new Uint8Array([0x5b, 0x5d])));
          const buf = cx.exports.__ppp_call_iii_i(getBuffer, outData, list.length, 8) >>> 0;
          if (list.length > 0 && buf === 0) return E.FAILED;
          list.forEach((e, k) => {
            const child = newRef(r.fs, r.type, (r.path === "/" ? "" : r.path) + "/" + e.name);
            cx.mem.setI32(buf + 8 * k, child);
            cx.mem.setI32(buf + 8 * k + 4, e.dir ? 1 : 0);
          });
          return E.OK;
        });
      }),
    );
  }

  const I = OFFERED.PPB_FileIO;
  const fio = (res) => at(res, KIND.FILE_IO);
  const whenOpen = (res, f) => {
    const b = fio(res);
    if (b < 0) return E.BADRESOURCE;
    if (h[b + FIO.OPEN] !== 2) return E.FAILED;
    return f(b);
  };
  reg.defAll(I, "Create", (instance) => (instance === cx.instance ? cx.res.create(KIND.FILE_IO) : 0));
  reg.defAll(I, "IsFileIO", (res) => (fio(res) >= 0 ? 1 : 0));
  reg.defAll(I, "Open", (res, ref, flags, cb) => {
    const b = fio(res);
    const r = refOf(ref);
    if (b < 0 || !r) return E.BADRESOURCE;
    if (Atomics.compareExchange(h, b + FIO.OPEN, 0, 1) !== 0) return E.FAILED;
    const code = cx.io(cb, IO_OP.IO_OPEN, [res, r.type, r.path, flags], (c) => {
      Atomics.store(h, b + FIO.OPEN, c === E.OK ? 2 : 0);
      return c;
    });
    if (refused(code)) Atomics.store(h, b + FIO.OPEN, 0);
    return code;
  });
  reg.defAll(I, "Query", (res, info, cb) =>
    whenOpen(res, () => (info === 0 ? E.BADARGUMENT : cx.io(cb, IO_OP.IO_QUERY, [res, info]))),
  );
  reg.defAll(I, "Touch", (res, atime, mtime, cb) => whenOpen(res, () => cx.io(cb, IO_OP.IO_TOUCH, [res, atime, mtime])));
  reg.defAll(I, "Read", (res, offset, buf, n, cb) =>
    whenOpen(res, () => (n < 0 || offset < 0n ? E.BADARGUMENT : cx.io(cb, IO_OP.IO_READ, [res, Number(offset), buf, n]))),
  );
  reg.defAll(I, "Write", (res, offset, buf, n, cb) =>
    whenOpen(res, () => (n < 0 || offset < 0n ? E.BADARGUMENT : cx.io(cb, IO_OP.IO_WRITE, [res, Number(offset), buf, n]))),
  );
  reg.defAll(I, "SetLength", (res, len, cb) => whenOpen(res, () => cx.io(cb, IO_OP.IO_SET_LENGTH, [res, Number(len)])));
  reg.defAll(I, "Flush", (res, cb) => whenOpen(res, () => cx.io(cb, IO_OP.IO_FLUSH, [res])));
  reg.defAll(I, "Close", (res) => {
    const b = fio(res);
    if (b < 0) return;
    Atomics.store(h, b + FIO.OPEN, 3); // closed: nothing more on it
    cx.ioTell(IO_OP.IO_CLOSE, [res]);
  });
  reg.def(I[1], "ReadToArray", (res, offset, max, output, cb) =>
    whenOpen(res, () => {
      if (max < 0 || offset < 0n || output === 0) return E.BADARGUMENT;
      const getBuffer = cx.mem.u32(output);
      const outData = cx.mem.u32(output + 4);
      return cx.io(cb, IO_OP.IO_READ_TO_ARRAY, [res, Number(offset), max], (code, payload) => {
        if (code < 0) return code;
        const n = payload?.length ?? 0;
        const buf = cx.exports.__ppp_call_iii_i(getBuffer, outData, n, 1) >>> 0;
        if (n > 0 && buf === 0) return E.FAILED;
        if (n > 0) cx.mem.write(buf, payload);
        return n;
      });
    }),
  );
}
