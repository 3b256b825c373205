// Directory and file handles over a key-value store: the part of FileSystemDirectoryHandle
// and FileSystemFileHandle that the entries of chrome/filesystem.js use (getFileHandle,
// getDirectoryHandle, removeEntry, values, getFile, createWritable), with the same errors.
// For browsers without the Origin Private File System (WebKitGTK 2.50 has no
// navigator.storage at all) the store is IndexedDB; unit tests use a Map.
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
}
