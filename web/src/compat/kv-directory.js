// Directory and file handles over a key-value store: the part of FileSystemDirectoryHandle
// and FileSystemFileHandle that the entries of chrome/filesystem.js and the IO worker's
// sandboxed file systems (host/io/sandbox-fs.js) use (getFileHandle, getDirectoryHandle,
// removeEntry, values, getFile, createWritable, createSyncAccessHandle), with the same
// errors. For browsers without the Origin Private File System (WebKitGTK 2.50 has no
// navigator.storage at all) the store is IndexedDB, the same database for the page and
// the module; unit tests use a Map.
//
// One record per path ("a/b/c.txt"; the root is "" and has no record): {kind, mtime} for a
// directory, {kind, data: ArrayBuffer, mtime} for a file (bytes rather than a Blob: WebKit's
// Blobs in IndexedDB have had their bugs).

const fail = (name, message) => new DOMException(message, name);
const childKey = (dir, name) => (dir === "" ? name : `${dir}/${name}`);

/** A store in memory. */
export class MemoryStore {
  constructor() {
    this.map = new Map();
  }
  async get(key) {
    return this.map.get(key);
  }
  async put(key, value) {
    this.map.set(key, value);
  }
  async delete(keys) {
    for (const k of keys) this.map.delete(k);
  }
  async keys() {
    return [...this.map.keys()];
  }
}

/** A store in IndexedDB (database `name`, one object store). */
export class IdbStore {
  constructor(name = "pexe2wasm-fs") {
    this.name = name;
    this.db = null;
  }
  open() {
    return (this.db ??= new Promise((resolve, reject) => {
      const r = indexedDB.open(this.name, 1);
      r.onupgradeneeded = () => r.result.createObjectStore("nodes");
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    }));
  }
  async run(mode, f) {
    const db = await this.open();
    return new Promise((resolve, reject) => {
      const t = db.transaction("nodes", mode);
      const req = f(t.objectStore("nodes"));
      t.oncomplete = () => resolve(req?.result);
      t.onerror = t.onabort = () => reject(t.error ?? fail("AbortError", "IndexedDB transaction aborted"));
    });
  }
  get(key) {
    return this.run("readonly", (s) => s.get(key));
  }
  put(key, value) {
    return this.run("readwrite", (s) => s.put(value, key));
  }
  delete(keys) {
    return this.run("readwrite", (s) => {
      for (const k of keys) s.delete(k);
    });
  }
  keys() {
    return this.run("readonly", (s) => s.getAllKeys());
  }
}

class StoreHandle {
  constructor(store, path, kind) {
    this.store = store;
    this.path = path;
    this.kind = kind;
    this.name = path.slice(path.lastIndexOf("/") + 1);
  }
  async isSameEntry(other) {
    return other?.store === this.store && other.path === this.path && other.kind === this.kind;
  }
}

/** A directory (`path` "" is the root). */
export class StoreDirectoryHandle extends StoreHandle {
  constructor(store, path = "") {
    super(store, path, "directory");
  }
  async exists() {
    if (this.path === "") return;
    if ((await this.store.get(this.path))?.kind !== "directory") throw fail("NotFoundError", `${this.path} was not found`);
  }
  async child(name, kind, create) {
    if (typeof name !== "string" || !name || name === "." || name === ".." || /[/\\]/.test(name)) throw new TypeError(`${name}: not a valid name`);
    await this.exists();
    const key = childKey(this.path, name);
    const r = await this.store.get(key);
    if (r && r.kind !== kind) throw fail("TypeMismatchError", `${key} is not a ${kind}`);
    if (!r) {
      if (!create) throw fail("NotFoundError", `${key} was not found`);
      await this.store.put(key, kind === "file" ? { kind, data: new ArrayBuffer(0), mtime: Date.now() } : { kind, mtime: Date.now() });
    }
    return kind === "file" ? new StoreFileHandle(this.store, key) : new StoreDirectoryHandle(this.store, key);
  }
  getFileHandle(name, { create = false } = {}) {
    return this.child(name, "file", create);
  }
  getDirectoryHandle(name, { create = false } = {}) {
    return this.child(name, "directory", create);
  }
  async removeEntry(name, { recursive = false } = {}) {
    await this.exists();
    const key = childKey(this.path, name);
    if (!(await this.store.get(key))) throw fail("NotFoundError", `${key} was not found`);
    const below = (await this.store.keys()).filter((k) => k.startsWith(`${key}/`));
    if (below.length && !recursive) throw fail("InvalidModificationError", `${key} is not empty`);
    await this.store.delete([key, ...below]);
  }
  async *values() {
    await this.exists();
    const prefix = this.path === "" ? "" : `${this.path}/`;
    for (const k of await this.store.keys()) {
      if (!k.startsWith(prefix) || k.length === prefix.length || k.slice(prefix.length).includes("/")) continue;
      const r = await this.store.get(k);
      if (r) yield r.kind === "file" ? new StoreFileHandle(this.store, k) : new StoreDirectoryHandle(this.store, k);
    }
  }
}

/** Bytes of what a writable stream's write() takes. */
async function bytesOf(chunk) {
  if (chunk instanceof Blob) return new Uint8Array(await chunk.arrayBuffer());
  if (typeof chunk === "string") return new TextEncoder().encode(chunk);
  if (ArrayBuffer.isView(chunk)) return new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  return new Uint8Array(chunk);
}

/**
 * The largest file the store keeps: a file is one record, held whole in memory while it is
 * open and copied whole into IndexedDB; a write past this throws a RangeError.
 */
export const MAX_STORED_FILE = 2 ** 30;
/** How long after the last write an open file is stored (and at flush() and close()). */
const STORE_DELAY_MS = 300;

/** A file. */
export class StoreFileHandle extends StoreHandle {
  constructor(store, path) {
    super(store, path, "file");
  }
  async record() {
    const r = await this.store.get(this.path);
    if (r?.kind !== "file") throw fail("NotFoundError", `${this.path} was not found`);
    return r;
  }
  async getFile() {
    const r = await this.record();
    return new File([r.data], this.name, { lastModified: r.mtime });
  }
  /** As FileSystemWritableFileStream: the new contents are stored at close(). */
  async createWritable({ keepExistingData = false } = {}) {
    let data = keepExistingData ? new Uint8Array((await this.record()).data) : (await this.record(), new Uint8Array(0));
    let pos = 0;
    const { store, path } = this;
    return {
      async seek(p) {
        pos = p;
      },
      async truncate(n) {
        const d = new Uint8Array(n);
        d.set(data.subarray(0, Math.min(n, data.length)));
        data = d;
        pos = Math.min(pos, n);
      },
      async write(chunk) {
        const bytes = await bytesOf(chunk);
        const end = pos + bytes.length;
        if (end > data.length) {
          const d = new Uint8Array(end);
          d.set(data);
          data = d;
        }
        data.set(bytes, pos);
        pos = end;
      },
      async close() {
        if ((await store.get(path))?.kind !== "file") throw fail("NotFoundError", `${path} was removed`);
        await store.put(path, { kind: "file", data: data.slice().buffer, mtime: Date.now() });
      },
      async abort() {},
    };
  }

  /**
   * As FileSystemSyncAccessHandle (read, write, truncate and getSize at once, on the
   * contents held in memory; flush() and close() answer promises): the contents are read at
   * the open and stored a little after the last write, at flush() and at close().
   */
  async createSyncAccessHandle() {
    let data = new Uint8Array((await this.record()).data);
    let size = data.length;
    let dirty = false;
    let timer = null;
    let closed = false;
    const { store, path } = this;
    const grow = (end) => {
      if (end > MAX_STORED_FILE) throw new RangeError(`${path}: this store keeps files of at most ${MAX_STORED_FILE} bytes`);
      if (end <= data.length) return;
      const d = new Uint8Array(Math.min(MAX_STORED_FILE, Math.max(end, 2 * data.length, 4096)));
      d.set(data.subarray(0, size));
      data = d;
    };
    const live = () => {
      if (closed) throw fail("InvalidStateError", `${path}: the access handle is closed`);
    };
    const flush = async () => {
      clearTimeout(timer);
      timer = null;
      if (!dirty) return;
      dirty = false;
      // put() copies the bytes at once: later writes do not change what is stored.
      await store.put(path, { kind: "file", data: size === data.length ? data.buffer : data.slice(0, size).buffer, mtime: Date.now() });
    };
    const changed = () => {
      dirty = true;
      clearTimeout(timer);
      timer = setTimeout(() => flush().catch(() => {}), STORE_DELAY_MS);
    };
    const view = (buf) => (ArrayBuffer.isView(buf) ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : new Uint8Array(buf));
    return {
      getSize: () => (live(), size),
      read(buf, { at = 0 } = {}) {
        live();
        const out = view(buf);
        if (at >= size) return 0;
        const n = Math.min(out.length, size - at);
        out.set(data.subarray(at, at + n));
        return n;
      },
      write(buf, { at = 0 } = {}) {
        live();
        const src = view(buf);
        grow(at + src.length);
        if (at > size) data.fill(0, size, at);
        data.set(src, at);
        size = Math.max(size, at + src.length);
        changed();
        return src.length;
      },
      truncate(n) {
        live();
        grow(n);
        if (n > size) data.fill(0, size, n);
        size = n;
        changed();
      },
      flush: () => (live(), flush()),
      async close() {
        if (closed) return;
        closed = true;
        await flush();
      },
    };
  }
}
