// LOCALPERSISTENT kept across visits: the IO worker's in-memory file system (memfs.js)
// written to IndexedDB (per origin, as Chrome kept a plugin's persistent file system per
// origin), one record per path. After a change the tree is compared with what was last
// written (kind, size and times per path) and only what differs is put or deleted, a
// little later (debounced) or at once for FileIO.Flush. Loaded before the IO worker says
// it is ready, so the app's first call sees the files of its last visit.

const DB = "pexe2wasm-files";
const STORE = "persistent";
const DELAY_MS = 300;

/** Every path of the tree: path -> {dir, node} ("/" is the root, not listed). */
export function walk(fs) {
  const out = new Map();
  const visit = (n, path) => {
    for (const [name, child] of n.entries) {
      const p = `${path}/${name}`;
      out.set(p, child);
      if (child.dir) visit(child, p);
    }
  };
  visit(fs.root, "");
  return out;
}

/** What a record of a node says, to tell whether it changed. */
export function signature(n) {
  return n.dir ? `d ${n.ctime} ${n.mtime}` : `f ${n.size} ${n.ctime} ${n.atime} ${n.mtime}`;
}

/** Paths to put and to delete, given the last written signatures `before`. */
export function diff(before, now) {
  const put = [];
  const del = [];
  for (const [p, n] of now) if (before.get(p) !== signature(n)) put.push(p);
  for (const p of before.keys()) if (!now.has(p)) del.push(p);
  return { put, del };
}

/** The tree rebuilt from records ({path, dir, data, ctime, atime, mtime}), parents first. */
export function restore(fs, records) {
  const sorted = [...records].sort((a, b) => a.path.split("/").length - b.path.split("/").length);
  for (const r of sorted) {
    const at = fs.parentOf(r.path);
    if (!at) continue; // a record whose parent was lost: dropped
    const n = r.dir
      ? { dir: true, entries: new Map(), ctime: r.ctime, atime: r.atime, mtime: r.mtime }
      : { dir: false, data: new Uint8Array(r.data), size: r.data.length, ctime: r.ctime, atime: r.atime, mtime: r.mtime };
    at.parent.entries.set(at.name, n);
  }
}

const request = (r) =>
  new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });

export class Persist {
  /** fs: the MemFs to keep; note(text): the console. */
  constructor(fs, note) {
    this.fs = fs;
    this.note = note;
    this.db = null;
    this.written = new Map(); // path -> signature of what the store holds
    this.timer = null;
    this.saving = Promise.resolve();
  }

  /** Opens the store and loads the tree; without IndexedDB the files live for this visit only. */
  async load() {
    if (typeof indexedDB === "undefined") {
      this.note("pexe2wasm: no IndexedDB here: the persistent file system lasts for this visit only");
      return;
    }
    try {
      const open = indexedDB.open(DB, 1);
      open.onupgradeneeded = () => open.result.createObjectStore(STORE, { keyPath: "path" });
      this.db = await request(open);
      const records = await request(this.db.transaction(STORE).objectStore(STORE).getAll());
      restore(this.fs, records);
      for (const [p, n] of walk(this.fs)) this.written.set(p, signature(n));
    } catch (e) {
      this.db = null;
      this.note(`pexe2wasm: the persistent file system could not be read from IndexedDB (${e?.message ?? e}); it lasts for this visit only`);
    }
  }

  /** Something may have changed: save a little later. */
  schedule() {
    if (!this.db || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.save();
    }, DELAY_MS);
  }

  /** Writes what changed since the last save; resolves when it is in the store. */
  save() {
    if (!this.db) return Promise.resolve();
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.saving = this.saving.then(() => this.write()).catch((e) => {
      this.note(`pexe2wasm: saving the persistent file system failed: ${e?.message ?? e}`);
    });
    return this.saving;
  }

  async write() {
    const now = walk(this.fs);
    const { put, del } = diff(this.written, now);
    if (!put.length && !del.length) return;
    const tx = this.db.transaction(STORE, "readwrite");
    const store = tx.objectStore(STORE);
    for (const p of put) {
      const n = now.get(p);
      store.put({ path: p, dir: n.dir, data: n.dir ? null : n.data.slice(0, n.size), ctime: n.ctime, atime: n.atime, mtime: n.mtime });
    }
    for (const p of del) store.delete(p);
    await new Promise((resolve, reject) => {
      tx.oncomplete = resolve;
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error("aborted"));
    });
    for (const p of put) this.written.set(p, signature(now.get(p)));
    for (const p of del) this.written.delete(p);
  }
}
