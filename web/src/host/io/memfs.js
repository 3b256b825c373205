// The sandboxed file systems of an instance (PP_FILESYSTEMTYPE_LOCALPERSISTENT and
// LOCALTEMPORARY) as Chrome's behaved to a plugin: absolute paths, directories, files of
// bytes, times. Kept in memory by the IO worker for the instance's life; persist.js keeps
// LOCALPERSISTENT in IndexedDB across visits. Pure: no workers, no module memory, so it is tested
// alone (tests/unit/memfs.test.js).

export const ERR = {
  OK: 0,
  FAILED: -2,
  BADARGUMENT: -4,
  NOACCESS: -7,
  FILENOTFOUND: -20,
  FILEEXISTS: -21,
  FILETOOBIG: -22,
  NOTAFILE: -24,
};
export const OPEN = { READ: 1, WRITE: 2, CREATE: 4, TRUNCATE: 8, EXCLUSIVE: 16, APPEND: 32 };
export const MKDIR = { WITH_ANCESTORS: 1, EXCLUSIVE: 2 };
export const FILE_TYPE = { REGULAR: 0, DIRECTORY: 1 };
const MAX_FILE = 1 << 30;

/** A path's parts; null for one that is not absolute or names `.`/`..`. */
export function parts(path) {
  if (typeof path !== "string" || !path.startsWith("/")) return null;
  const p = path.split("/").filter((s) => s !== "");
  return p.some((s) => s === "." || s === "..") ? null : p;
}

function nowSeconds() {
  return Date.now() / 1000;
}

function node(dir) {
  const t = nowSeconds();
  return dir
    ? { dir: true, entries: new Map(), ctime: t, atime: t, mtime: t }
    : { dir: false, data: new Uint8Array(0), size: 0, ctime: t, atime: t, mtime: t };
}

export class MemFs {
  constructor() {
    this.root = node(true);
  }

  /** The node at `path`, or null; {parent, name} of its place with `parentOf`. */
  lookup(path) {
    const p = parts(path);
    if (!p) return null;
    let n = this.root;
    for (const s of p) {
      if (!n.dir) return null;
      n = n.entries.get(s);
      if (!n) return null;
    }
    return n;
  }

  parentOf(path) {
    const p = parts(path);
    if (!p || p.length === 0) return null;
    const name = p.pop();
    const parent = this.lookup("/" + p.join("/"));
    return parent && parent.dir ? { parent, name } : null;
  }

  /** PP_FileInfo's fields of the node at `path`, or an error code. */
  query(path) {
    const n = this.lookup(path);
    if (!n) return ERR.FILENOTFOUND;
    return {
      size: n.dir ? 0 : n.size,
      type: n.dir ? FILE_TYPE.DIRECTORY : FILE_TYPE.REGULAR,
      ctime: n.ctime,
      atime: n.atime,
      mtime: n.mtime,
    };
  }

  mkdir(path, flags) {
    const existing = this.lookup(path);
    if (existing) return !existing.dir || flags & MKDIR.EXCLUSIVE ? ERR.FILEEXISTS : ERR.OK;
    const p = parts(path);
    if (!p) return ERR.BADARGUMENT;
    let n = this.root;
    for (let i = 0; i < p.length; i++) {
      let next = n.entries.get(p[i]);
      if (!next) {
        if (i < p.length - 1 && !(flags & MKDIR.WITH_ANCESTORS)) return ERR.FILENOTFOUND;
        next = node(true);
        n.entries.set(p[i], next);
        n.mtime = nowSeconds();
      } else if (!next.dir) return ERR.FAILED;
      n = next;
    }
    return ERR.OK;
  }

  touch(path, atime, mtime) {
    const n = this.lookup(path);
    if (!n) return ERR.FILENOTFOUND;
    n.atime = atime;
    n.mtime = mtime;
    return ERR.OK;
  }

  remove(path) {
    const p = parts(path);
    if (!p) return ERR.BADARGUMENT;
    if (p.length === 0) return ERR.NOACCESS; // the file system itself
    const at = this.parentOf(path);
    const n = at?.parent.entries.get(at.name);
    if (!n) return ERR.FILENOTFOUND;
    if (n.dir && n.entries.size > 0) return ERR.FAILED;
    at.parent.entries.delete(at.name);
    return ERR.OK;
  }

  rename(from, to) {
    const a = this.parentOf(from);
    const b = this.parentOf(to);
    if (!a || !b) return ERR.FILENOTFOUND;
    const n = a.parent.entries.get(a.name);
    if (!n) return ERR.FILENOTFOUND;
    // A directory cannot move into itself.
    if (n.dir && (to + "/").startsWith(from + "/")) return ERR.FAILED;
    const there = b.parent.entries.get(b.name);
    if (there && (there.dir !== n.dir || (there.dir && there.entries.size > 0))) return ERR.FAILED;
    a.parent.entries.delete(a.name);
    b.parent.entries.set(b.name, n);
    return ERR.OK;
  }

  /** [{name, dir}] of a directory, sorted, or an error code. */
  list(path) {
    const n = this.lookup(path);
    if (!n) return ERR.FILENOTFOUND;
    if (!n.dir) return ERR.NOTAFILE;
    return [...n.entries.keys()].sort().map((name) => ({ name, dir: n.entries.get(name).dir }));
  }

  /** Opens a file with PP_FileOpenFlags: its node, or an error code. */
  open(path, flags) {
    const append = flags & OPEN.APPEND;
    const write = flags & OPEN.WRITE;
    // Chrome's combinations: APPEND excludes WRITE, TRUNCATE needs WRITE.
    if ((append && write) || (flags & OPEN.TRUNCATE && !write)) return ERR.BADARGUMENT;
    let n = this.lookup(path);
    if (n && n.dir) return ERR.NOTAFILE;
    if (n && flags & OPEN.CREATE && flags & OPEN.EXCLUSIVE) return ERR.FILEEXISTS;
    if (!n) {
      if (!(flags & OPEN.CREATE)) return ERR.FILENOTFOUND;
      const at = this.parentOf(path);
      if (!at) return ERR.FILENOTFOUND;
      n = node(false);
      at.parent.entries.set(at.name, n);
    }
    if (flags & OPEN.TRUNCATE) {
      n.size = 0;
      n.mtime = nowSeconds();
    }
    return n;
  }

  static read(n, offset, len) {
    if (offset >= n.size) return new Uint8Array(0);
    n.atime = nowSeconds();
    return n.data.slice(offset, Math.min(n.size, offset + len));
  }

  /** Writes `bytes` at `offset` (the end for an append); bytes written, or an error. */
  static write(n, offset, bytes) {
    const end = offset + bytes.length;
    if (end > MAX_FILE) return ERR.FILETOOBIG;
    MemFs.reserve(n, end);
    n.data.set(bytes, offset);
    n.size = Math.max(n.size, end);
    n.mtime = nowSeconds();
    return bytes.length;
  }

  static setLength(n, len) {
    if (len < 0) return ERR.BADARGUMENT;
    if (len > MAX_FILE) return ERR.FILETOOBIG;
    MemFs.reserve(n, len);
    if (len < n.size) n.data.fill(0, len, n.size);
    n.size = len;
    n.mtime = nowSeconds();
    return ERR.OK;
  }

  static reserve(n, size) {
    if (size <= n.data.length) return;
    const grown = new Uint8Array(Math.max(size, 2 * n.data.length, 4096));
    grown.set(n.data.subarray(0, n.size));
    n.data = grown;
  }
}
