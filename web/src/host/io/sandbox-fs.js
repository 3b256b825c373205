// The sandboxed file systems of an instance (PP_FILESYSTEMTYPE_LOCALPERSISTENT and
// LOCALTEMPORARY) as Chrome's behaved to a plugin (absolute paths, directories, files of
// bytes at 64-bit offsets, Chrome's error codes), over a directory handle: the Origin
// Private File System's where the browser has one (files on disk, read and written in place
// through FileSystemSyncAccessHandle, which dedicated workers have in Chromium and Firefox:
// a 2.4 GB file never sits in memory), else compat/kv-directory.js's IndexedDB store. The
// folders are the ones the page's webkitRequestFileSystem uses (compat/sandbox-layout.js),
// so the page and the module see one store per origin, as in Chrome.
//
// LOCALPERSISTENT's writes stay under the quota the page's requestQuota granted
// (compat/sandbox-layout.js records it), as Chrome's did: a write or SetLength that would
// take the file system past it fails with PP_ERROR_NOQUOTA and changes nothing. The usage
// is counted once (every file's size) and then kept up to date by this side's changes; the
// page's changes are seen when a write would not fit, as the count is made again then.
// Without a grant there is no limit but the browser's (QuotaExceededError: NOQUOTA too).
//
// Every call is queued (one at a time per file system): an open file's access handle may be
// closed and opened again by a rename or a removal while other threads use the file.
// An open file holds one access handle, shared by every FileIO open on that path; it is
// exclusive, so while the module holds a file open the page cannot write it (and the
// reverse), where Chrome let both.
//
// OPFS keeps one time per file (lastModified) and none per directory: a file's ctime,
// atime and mtime are its lastModified, a directory's the time this file system was opened;
// Touch sets atime and mtime for the rest of the visit.

import { PP_ERROR, PP_FILEOPENFLAGS, PP_FILETYPE } from "../contract.js";

export const ERR = PP_ERROR;
export const OPEN = PP_FILEOPENFLAGS;
export const MKDIR = { WITH_ANCESTORS: 1, EXCLUSIVE: 2 };
export const FILE_TYPE = PP_FILETYPE;

/** How long an open waits for an access handle another side holds (a page's write). */
const LOCKED_RETRY_MS = 2000;

/** A path's parts; null for one that is not absolute or names `.`/`..`. */
export function parts(path) {
  if (typeof path !== "string" || !path.startsWith("/")) return null;
  const p = path.split("/").filter((s) => s !== "");
  return p.some((s) => s === "." || s === "..") ? null : p;
}

const pathOf = (p) => "/" + p.join("/");

/**
 * The Pepper error for what a handle threw: a missing entry, one of the other kind, a
 * locked file, the browser's quota (QuotaExceededError: Chrome answered PP_ERROR_NOQUOTA;
 * OPFS tells a full disk the same way), a file larger than the store keeps (RangeError).
 */
export function errorCode(e) {
  switch (e?.name) {
    case "NotFoundError":
      return ERR.FILENOTFOUND;
    case "TypeMismatchError":
      return ERR.NOTAFILE;
    case "NoModificationAllowedError":
      return ERR.NOACCESS;
    case "QuotaExceededError":
      return ERR.NOQUOTA;
    case "RangeError":
      return ERR.FILETOOBIG;
    default:
      return ERR.FAILED;
  }
}

class Failure extends Error {
  constructor(code) {
    super(`pepper error ${code}`);
    this.code = code;
  }
}
const failWith = (code) => {
  throw new Failure(code);
};

/** `f()` unless it throws NotFoundError or TypeMismatchError: then null. */
async function orNull(f) {
  try {
    return await f();
  } catch (e) {
    if (e?.name === "NotFoundError" || e?.name === "TypeMismatchError") return null;
    throw e;
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export class SandboxFs {
  /**
   * root: the directory handle of this file system; note(text): the console;
   * now(): seconds since the epoch.
   * @param {any} root
   * @param {{note?: (text: string) => void, now?: () => number, quota?: (() => Promise<number | null> | number | null) | null}} [options]
   */
  constructor(root, { note = (_text) => {}, now = () => Date.now() / 1000, quota = null } = {}) {
    this.root = root;
    this.note = note;
    this.now = now;
    // The granted quota (LOCALPERSISTENT): `quota()` reads it, null when none was granted.
    this.quota = quota;
    this.limit = null; // the grant last read (null: none)
    this.limitRead = -Infinity; // when (now()'s seconds)
    this.usage = null; // bytes in this file system, counted when first needed
    this.opened = now();
    this.files = new Map(); // path -> {path, handle, access, refs, ctime, atime, mtime}
    this.times = new Map(); // path -> {atime, mtime} set by Touch
    this.tail = Promise.resolve();
  }

  /** Runs `f` after every call before it; a thrown Failure or handle error becomes its code. */
  queued(f) {
    const run = this.tail.then(async () => {
      try {
        return await f();
      } catch (e) {
        if (e instanceof Failure) return e.code;
        if (errorCode(e) === ERR.FAILED) this.note(`pexe2wasm: file system: ${e?.name ?? ""} ${e?.message ?? e}`);
        return errorCode(e);
      }
    });
    this.tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** Bytes in the files under `dir` (open files by their access handle). */
  async count(dir, path) {
    let n = 0;
    for await (const h of dir.values()) {
      const p = `${path}/${h.name}`;
      if (h.kind === "directory") n += await this.count(h, p);
      else n += this.files.get(p)?.access?.getSize() ?? (await h.getFile().then((f) => f.size, () => 0));
    }
    return n;
  }

  /**
   * Whether open file `f` may grow to `end` bytes under the granted quota; if so the usage
   * counts it. A write that does not fit is checked again with a fresh grant and count
   * (the page may have asked for more, or removed files), so the refusal is not stale.
   */
  async fits(f, end) {
    if (!this.quota) return true;
    const growth = end - f.access.getSize();
    if (growth <= 0) return true;
    // Without a grant, read it again now and then: the page may ask for one later.
    if (this.limit === null && this.now() - this.limitRead < 1) return true;
    for (let fresh = false; ; fresh = true) {
      if (fresh || this.limitRead === -Infinity || this.limit === null) {
        this.limit = await this.quota();
        this.limitRead = this.now();
      }
      if (this.limit === null) return true;
      if (fresh || this.usage === null) this.usage = await this.count(this.root, "");
      if (this.usage + growth <= this.limit) {
        this.usage += growth;
        return true;
      }
      if (fresh) return false;
    }
  }

  /** `f()`; if it throws, the usage is counted again when next needed (it counted a growth). */
  async uncounted(f) {
    try {
      return await f();
    } catch (e) {
      this.usage = null;
      throw e;
    }
  }

  /** The usage after `f` shrank from `before` bytes (unknown usage stays unknown). */
  shrank(f, before) {
    if (this.usage !== null) this.usage = Math.max(0, this.usage - Math.max(0, before - (f.access?.getSize() ?? 0)));
  }

  /** The directory handle at parts `p`, or null. */
  async dirAt(p) {
    let d = this.root;
    for (const name of p) {
      d = await orNull(() => d.getDirectoryHandle(name));
      if (!d) return null;
    }
    return d;
  }

  /** {kind, handle, parent, name} of the entry at parts `p` (the root: no parent), or null. */
  async entryAt(p) {
    if (p.length === 0) return { kind: "directory", handle: this.root, parent: null, name: "" };
    const parent = await this.dirAt(p.slice(0, -1));
    if (!parent) return null;
    const name = p[p.length - 1];
    const file = await orNull(() => parent.getFileHandle(name));
    if (file) return { kind: "file", handle: file, parent, name };
    const dir = await orNull(() => parent.getDirectoryHandle(name));
    return dir ? { kind: "directory", handle: dir, parent, name } : null;
  }

  async isEmpty(dir) {
    for await (const _ of dir.values()) return false;
    return true;
  }

  /** PP_FileInfo's fields of an open file or of a file or directory entry. */
  async infoOf(entry, path) {
    const set = this.times.get(path);
    if (entry.kind === "directory") {
      const t = this.opened;
      return { size: 0, type: FILE_TYPE.DIRECTORY, ctime: t, atime: set?.atime ?? t, mtime: set?.mtime ?? t };
    }
    const open = this.files.get(path);
    if (open) return { size: open.access.getSize(), type: FILE_TYPE.REGULAR, ctime: open.ctime, atime: open.atime, mtime: open.mtime };
    const f = await entry.handle.getFile();
    const t = f.lastModified / 1000;
    return { size: f.size, type: FILE_TYPE.REGULAR, ctime: t, atime: set?.atime ?? t, mtime: set?.mtime ?? t };
  }

  /** PP_FileInfo's fields of the entry at `path`, or an error code. */
  query(path) {
    return this.queued(async () => {
      const p = parts(path) ?? failWith(ERR.BADARGUMENT);
      const e = (await this.entryAt(p)) ?? failWith(ERR.FILENOTFOUND);
      return this.infoOf(e, pathOf(p));
    });
  }

  mkdir(path, flags) {
    return this.queued(async () => {
      const p = parts(path) ?? failWith(ERR.BADARGUMENT);
      let d = this.root;
      for (let i = 0; i < p.length; i++) {
        const last = i === p.length - 1;
        const next = await orNull(() => d.getDirectoryHandle(p[i]));
        if (next) {
          if (last && flags & MKDIR.EXCLUSIVE) return ERR.FILEEXISTS;
          d = next;
          continue;
        }
        if (await orNull(() => d.getFileHandle(p[i]))) return last ? ERR.FILEEXISTS : ERR.FAILED;
        if (!last && !(flags & MKDIR.WITH_ANCESTORS)) return ERR.FILENOTFOUND;
        d = await d.getDirectoryHandle(p[i], { create: true });
      }
      if (p.length === 0 && flags & MKDIR.EXCLUSIVE) return ERR.FILEEXISTS;
      return ERR.OK;
    });
  }

  touch(path, atime, mtime) {
    return this.queued(async () => {
      const p = parts(path) ?? failWith(ERR.BADARGUMENT);
      if (!(await this.entryAt(p))) return ERR.FILENOTFOUND;
      this.setTimes(pathOf(p), atime, mtime);
      return ERR.OK;
    });
  }

  setTimes(path, atime, mtime) {
    this.times.set(path, { atime, mtime });
    const open = this.files.get(path);
    if (open) Object.assign(open, { atime, mtime });
  }

  /** Closes the access handles of the open files at or below `path`; their records, to reopen. */
  async release(path) {
    const out = [];
    for (const f of this.files.values()) {
      if (f.path !== path && !f.path.startsWith(path + "/")) continue;
      await f.access.close();
      f.access = null;
      out.push(f);
    }
    return out;
  }

  /** Opens again, at `path`, a file released before a move (or marks it gone). */
  async reopen(f, path, handle) {
    this.files.delete(f.path);
    f.path = path;
    if (!handle) {
      f.gone = true; // reads and writes fail from now on
      return;
    }
    f.handle = handle;
    f.access = await this.accessOf(handle);
    this.files.set(path, f);
  }

  remove(path) {
    return this.queued(async () => {
      const p = parts(path) ?? failWith(ERR.BADARGUMENT);
      if (p.length === 0) return ERR.NOACCESS; // the file system itself
      const e = (await this.entryAt(p)) ?? failWith(ERR.FILENOTFOUND);
      if (e.kind === "directory" && !(await this.isEmpty(e.handle))) return ERR.FAILED;
      const at = pathOf(p);
      for (const f of await this.release(at)) await this.reopen(f, f.path, null);
      await e.parent.removeEntry(e.name);
      this.times.delete(at);
      this.usage = null; // counted again when next needed
      return ERR.OK;
    });
  }

  rename(from, to) {
    return this.queued(async () => {
      const a = parts(from);
      const b = parts(to);
      if (!a || !b || a.length === 0 || b.length === 0) return ERR.FILENOTFOUND;
      const src = (await this.entryAt(a)) ?? failWith(ERR.FILENOTFOUND);
      const destDir = (await this.dirAt(b.slice(0, -1))) ?? failWith(ERR.FILENOTFOUND);
      const [fromPath, toPath] = [pathOf(a), pathOf(b)];
      if (fromPath === toPath) return ERR.OK;
      // A directory cannot move into itself.
      if (src.kind === "directory" && (toPath + "/").startsWith(fromPath + "/")) return ERR.FAILED;
      const there = await this.entryAt(b);
      if (there && (there.kind !== src.kind || (there.kind === "directory" && !(await this.isEmpty(there.handle))))) return ERR.FAILED;
      const name = b[b.length - 1];
      const moving = await this.release(fromPath);
      try {
        if (there) {
          for (const f of await this.release(toPath)) await this.reopen(f, f.path, null);
          await destDir.removeEntry(name);
          this.usage = null; // what was there is gone
        }
        await this.move(src, destDir, name);
      } catch (e) {
        // Nothing moved: the files open under the old name stay open there.
        for (const f of moving) await this.reopen(f, f.path, f.handle);
        throw e;
      }
      for (const f of moving) {
        const rel = f.path.slice(fromPath.length);
        const np = parts(toPath + rel);
        const moved = await this.entryAt(np);
        await this.reopen(f, pathOf(np), moved?.kind === "file" ? moved.handle : null);
      }
      for (const [p, t] of [...this.times]) {
        if (p === fromPath || p.startsWith(fromPath + "/")) {
          this.times.delete(p);
          this.times.set(toPath + p.slice(fromPath.length), t);
        }
      }
      return ERR.OK;
    });
  }

  /** Moves entry `src` into directory `dir` as `name`: the handle's move() where it has one, else a copy and a removal. */
  async move(src, dir, name) {
    if (typeof src.handle.move === "function") {
      try {
        await src.handle.move(dir, name);
        return;
      } catch (e) {
        // Some browsers move only files, or only within a directory: copy instead.
        if (e?.name !== "NotSupportedError" && e?.name !== "InvalidModificationError" && !(e instanceof TypeError)) throw e;
      }
    }
    await this.copy(src, dir, name);
    await src.parent.removeEntry(src.name, { recursive: true });
  }

  async copy(src, dir, name) {
    if (src.kind === "directory") {
      const d = await dir.getDirectoryHandle(name, { create: true });
      for await (const h of src.handle.values()) await this.copy({ kind: h.kind, handle: h, name: h.name }, d, h.name);
      return;
    }
    const file = await src.handle.getFile();
    const access = await this.accessOf(await dir.getFileHandle(name, { create: true }));
    try {
      await access.truncate(0);
      const CHUNK = 8 << 20;
      for (let at = 0; at < file.size; at += CHUNK) {
        access.write(new Uint8Array(await file.slice(at, at + CHUNK).arrayBuffer()), { at });
      }
      await access.flush();
    } finally {
      await access.close();
    }
  }

  /** [{name, dir}] of a directory, sorted, or an error code. */
  list(path) {
    return this.queued(async () => {
      const p = parts(path) ?? failWith(ERR.BADARGUMENT);
      const e = (await this.entryAt(p)) ?? failWith(ERR.FILENOTFOUND);
      if (e.kind !== "directory") return ERR.NOTAFILE;
      const out = [];
      for await (const h of e.handle.values()) out.push({ name: h.name, dir: h.kind === "directory" });
      return out.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    });
  }

  /**
   * An access handle of `handle`. Another side may hold the file for a moment (the page's
   * FileWriter): retried for up to two seconds.
   */
  async accessOf(handle) {
    const end = Date.now() + LOCKED_RETRY_MS;
    for (;;) {
      try {
        return await handle.createSyncAccessHandle();
      } catch (e) {
        if (e?.name !== "NoModificationAllowedError" || Date.now() > end) throw e;
        await sleep(20);
      }
    }
  }

  /** Opens a file with PP_FileOpenFlags: an open file ({f}), or an error code. */
  open(path, flags) {
    return this.queued(async () => {
      const append = flags & OPEN.APPEND;
      const write = flags & OPEN.WRITE;
      // Chrome's combinations: APPEND excludes WRITE, TRUNCATE needs WRITE.
      if ((append && write) || (flags & OPEN.TRUNCATE && !write)) return ERR.BADARGUMENT;
      const p = parts(path) ?? failWith(ERR.BADARGUMENT);
      let e = await this.entryAt(p);
      if (e?.kind === "directory") return ERR.NOTAFILE;
      if (e && flags & OPEN.CREATE && flags & OPEN.EXCLUSIVE) return ERR.FILEEXISTS;
      if (!e) {
        if (!(flags & OPEN.CREATE) || p.length === 0) return ERR.FILENOTFOUND;
        const parent = (await this.dirAt(p.slice(0, -1))) ?? failWith(ERR.FILENOTFOUND);
        const name = p[p.length - 1];
        e = { kind: "file", handle: await parent.getFileHandle(name, { create: true }), parent, name };
      }
      const at = pathOf(p);
      let f = this.files.get(at);
      if (!f) {
        const t = (await e.handle.getFile()).lastModified / 1000;
        const set = this.times.get(at);
        f = { path: at, handle: e.handle, access: await this.accessOf(e.handle), refs: 0, ctime: t, atime: set?.atime ?? t, mtime: set?.mtime ?? t, gone: false };
        this.files.set(at, f);
      }
      if (flags & OPEN.TRUNCATE) {
        const before = f.access.getSize();
        await f.access.truncate(0);
        this.shrank(f, before);
        f.mtime = this.now();
      }
      f.refs++;
      return { f };
    });
  }

  /** The live record of an open file, or a Failure. */
  live(o) {
    if (!o || o.closed || o.f.gone || !o.f.access) failWith(ERR.FAILED);
    return o.f;
  }

  info(o) {
    return this.queued(async () => {
      const f = this.live(o);
      return { size: f.access.getSize(), type: FILE_TYPE.REGULAR, ctime: f.ctime, atime: f.atime, mtime: f.mtime };
    });
  }

  touchFile(o, atime, mtime) {
    return this.queued(async () => {
      this.setTimes(this.live(o).path, atime, mtime);
      return ERR.OK;
    });
  }

  /** Up to `len` bytes at `offset` (fewer at the end of the file), or an error code. */
  read(o, offset, len) {
    return this.queued(async () => {
      const f = this.live(o);
      const size = f.access.getSize();
      if (offset >= size || len <= 0) return new Uint8Array(0);
      const out = new Uint8Array(Math.min(len, size - offset));
      const n = f.access.read(out, { at: offset });
      f.atime = this.now();
      return n === out.length ? out : out.subarray(0, n);
    });
  }

  /** Writes `bytes` at `offset` (null: the end, for an append); bytes written, or an error. */
  write(o, offset, bytes) {
    return this.queued(async () => {
      const f = this.live(o);
      const at = offset ?? f.access.getSize();
      if (at + bytes.length > Number.MAX_SAFE_INTEGER) return ERR.FILETOOBIG;
      if (!(await this.fits(f, at + bytes.length))) return ERR.NOQUOTA;
      const n = await this.uncounted(() => f.access.write(bytes, { at }));
      f.mtime = this.now();
      return n;
    });
  }

  setLength(o, len) {
    return this.queued(async () => {
      const f = this.live(o);
      if (len < 0) return ERR.BADARGUMENT;
      if (len > Number.MAX_SAFE_INTEGER) return ERR.FILETOOBIG;
      if (!(await this.fits(f, len))) return ERR.NOQUOTA;
      const before = f.access.getSize();
      await this.uncounted(() => f.access.truncate(len));
      this.shrank(f, before);
      f.mtime = this.now();
      return ERR.OK;
    });
  }

  /** Flush: the file's bytes on disk (OPFS), or in the store (IndexedDB). */
  flush(o) {
    return this.queued(async () => {
      await this.live(o).access.flush();
      return ERR.OK;
    });
  }

  /** Closes one FileIO's hold on its file; the last one closes the access handle. */
  close(o) {
    return this.queued(async () => {
      if (!o || o.closed) return ERR.OK;
      o.closed = true;
      const f = o.f;
      if (--f.refs > 0 || f.gone) return ERR.OK;
      if (this.files.get(f.path) === f) this.files.delete(f.path);
      if (f.access) {
        const access = f.access;
        f.access = null;
        await access.flush();
        await access.close();
      }
      return ERR.OK;
    });
  }
}
