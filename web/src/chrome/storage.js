// chrome.storage.local / sync / session / managed: Chrome's semantics and quotas, kept in a
// backend (IndexedDB, localStorage or memory) under the app's id, so values outlive a reload.

import { ChromeError } from "./base.js";

export const QUOTAS = {
  local: { QUOTA_BYTES: 5242880 },
  sync: {
    QUOTA_BYTES: 102400,
    QUOTA_BYTES_PER_ITEM: 8192,
    MAX_ITEMS: 512,
    MAX_WRITE_OPERATIONS_PER_HOUR: 1800,
    MAX_WRITE_OPERATIONS_PER_MINUTE: 120,
    MAX_SUSTAINED_WRITE_OPERATIONS_PER_MINUTE: 1000000,
  },
  session: { QUOTA_BYTES: 10485760 },
  managed: {},
};

/** Bytes an item counts for, as Chrome measured it: its key and its value's JSON. */
export function itemBytes(key, json) {
  return new TextEncoder().encode(key).length + new TextEncoder().encode(json).length;
}

/** A backend in memory: {load() → {key: json}, save(puts {key: json}, removes [key])}. */
export function memoryBackend(initial = {}) {
  const data = { ...initial };
  return {
    data,
    load: async () => ({ ...data }),
    save: async (puts, removes) => {
      for (const k of removes) delete data[k];
      Object.assign(data, puts);
    },
  };
}

/** A backend in localStorage: one entry holding the area's {key: json}. */
export function localStorageBackend(storage, name) {
  const read = () => {
    try {
      return JSON.parse(storage.getItem(name) ?? "{}");
    } catch {
      return {};
    }
  };
  return {
    load: async () => read(),
    save: async (puts, removes) => {
      const d = read();
      for (const k of removes) delete d[k];
      Object.assign(d, puts);
      try {
        storage.setItem(name, JSON.stringify(d));
      } catch (e) {
        throw new ChromeError(`the browser refused to store more (${e.name})`);
      }
    },
  };
}

/** A backend in IndexedDB (database `dbName`, one store per area, one record per item). */
export function indexedDBBackend(idb, dbName, area) {
  let db = null;
  const open = () =>
    (db ??= new Promise((resolve, reject) => {
      const req = idb.open(dbName, 1);
      req.onupgradeneeded = () => {
        for (const a of ["local", "sync", "managed"]) req.result.createObjectStore(a);
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    }));
  const done = (tx) =>
    new Promise((resolve, reject) => {
      tx.oncomplete = () => resolve();
      tx.onerror = tx.onabort = () => reject(new ChromeError(`IndexedDB: ${tx.error?.message ?? "aborted"}`));
    });
  return {
    load: async () => {
      const d = await open();
      const tx = d.transaction(area, "readonly");
      const st = tx.objectStore(area);
      const keys = st.getAllKeys();
      const vals = st.getAll();
      await done(tx);
      return Object.fromEntries(keys.result.map((k, i) => [k, vals.result[i]]));
    },
    save: async (puts, removes) => {
      const d = await open();
      const tx = d.transaction(area, "readwrite");
      const st = tx.objectStore(area);
      for (const k of removes) st.delete(k);
      for (const [k, v] of Object.entries(puts)) st.put(v, k);
      await done(tx);
    },
  };
}

/**
 * One storage area: `backend` keeps it, `quota` is QUOTAS[area] (QUOTA_BYTES dropped for
 * local when the app has unlimitedStorage), `onChanged(changes, area)` reports each change,
 * `now()` counts sync's writes per minute and hour. Values are JSON, as Chrome kept them.
 */
export class StorageArea {
  /** @param {{area: string, backend: any, quota?: object, onChanged?: (changes: object, area: string) => void, now?: () => number, readOnly?: boolean}} _ */
  constructor({ area, backend, quota = QUOTAS[area] ?? {}, onChanged = () => {}, now = () => Date.now(), readOnly = false }) {
    this.area = area;
    this.backend = backend;
    this.quota = quota;
    this.onChanged = onChanged;
    this.now = now;
    this.readOnly = readOnly;
    this.writes = [];
    this.data = null; // key → JSON text, once loaded
    this.queue = Promise.resolve();
  }

  /** Runs `f` after every earlier operation, with the area loaded. */
  op(f) {
    const run = this.queue.then(async () => {
      if (!this.data) this.data = new Map(Object.entries(await this.backend.load()));
      return f();
    });
    this.queue = run.catch(() => {});
    return run;
  }

  get(keys) {
    return this.op(() => {
      const out = {};
      const take = (k) => this.data.has(k) && (out[k] = JSON.parse(this.data.get(k)));
      if (keys === null || keys === undefined) for (const k of this.data.keys()) take(k);
      else if (typeof keys === "string") take(keys);
      else if (Array.isArray(keys)) keys.forEach((k) => take(String(k)));
      else if (typeof keys === "object") {
        for (const [k, dflt] of Object.entries(keys)) {
          if (this.data.has(k)) take(k);
          else if (dflt !== undefined) out[k] = JSON.parse(JSON.stringify(dflt));
        }
      } else throw new TypeError("storage.get: keys must be a string, an array, an object or null");
      return out;
    });
  }

  getKeys() {
    return this.op(() => [...this.data.keys()]);
  }

  getBytesInUse(keys) {
    return this.op(() => {
      const list = keys === null || keys === undefined ? [...this.data.keys()] : typeof keys === "string" ? [keys] : [...keys];
      return list.reduce((n, k) => n + (this.data.has(k) ? itemBytes(k, this.data.get(k)) : 0), 0);
    });
  }

  checkWritable() {
    if (this.readOnly) throw new ChromeError("This is a read-only store.");
  }

  /** Counts a write against sync's per-minute and per-hour limits. */
  countWrite() {
    const q = this.quota;
    if (!q.MAX_WRITE_OPERATIONS_PER_MINUTE) return;
    const t = this.now();
    this.writes = this.writes.filter((w) => t - w < 3600000);
    if (this.writes.filter((w) => t - w < 60000).length >= q.MAX_WRITE_OPERATIONS_PER_MINUTE) {
      throw new ChromeError("MAX_WRITE_OPERATIONS_PER_MINUTE quota exceeded");
    }
    if (this.writes.length >= q.MAX_WRITE_OPERATIONS_PER_HOUR) throw new ChromeError("MAX_WRITE_OPERATIONS_PER_HOUR quota exceeded");
    this.writes.push(t);
  }

  set(items) {
    if (!items || typeof items !== "object" || Array.isArray(items)) throw new TypeError("storage.set: items must be an object");
    const entries = [];
    for (const [k, v] of Object.entries(items)) {
      const json = JSON.stringify(v);
      if (json !== undefined) entries.push([k, json]);
    }
    return this.op(async () => {
      this.checkWritable();
      const q = this.quota;
      const next = new Map(this.data);
      for (const [k, json] of entries) {
        if (q.QUOTA_BYTES_PER_ITEM && itemBytes(k, json) > q.QUOTA_BYTES_PER_ITEM) throw new ChromeError("QUOTA_BYTES_PER_ITEM quota exceeded");
        next.set(k, json);
      }
      if (q.MAX_ITEMS && next.size > q.MAX_ITEMS) throw new ChromeError("MAX_ITEMS quota exceeded");
      if (q.QUOTA_BYTES) {
        let total = 0;
        for (const [k, json] of next) total += itemBytes(k, json);
        if (total > q.QUOTA_BYTES) throw new ChromeError("QUOTA_BYTES quota exceeded");
      }
      this.countWrite();
      await this.commit(entries, []);
    });
  }

  remove(keys) {
    const list = typeof keys === "string" ? [keys] : [...(keys ?? [])].map(String);
    return this.op(async () => {
      this.checkWritable();
      this.countWrite();
      await this.commit([], list.filter((k) => this.data.has(k)));
    });
  }

  clear() {
    return this.op(async () => {
      this.checkWritable();
      this.countWrite();
      await this.commit([], [...this.data.keys()]);
    });
  }

  /** Writes through the backend, then updates the area and reports what changed. */
  async commit(puts, removes) {
    await this.backend.save(Object.fromEntries(puts), removes);
    const changes = {};
    for (const k of removes) {
      changes[k] = { oldValue: JSON.parse(this.data.get(k)) };
      this.data.delete(k);
    }
    for (const [k, json] of puts) {
      const old = this.data.get(k);
      this.data.set(k, json);
      if (old === json) continue; // Chrome reports only values that changed
      changes[k] = old === undefined ? { newValue: JSON.parse(json) } : { oldValue: JSON.parse(old), newValue: JSON.parse(json) };
    }
    if (Object.keys(changes).length) this.onChanged(changes, this.area);
  }
}

/** The chrome.storage object of one page: the areas wrapped as API functions. */
export function storageApi(host, ctx) {
  const { api } = host;
  const out = {};
  for (const [name, area] of Object.entries(host.storageAreas)) {
    const clone = (v) => host.cloneInto(ctx.win, v);
    out[name] = {
      ...area.quota,
      get: api(`storage.${name}.get`, async (keys) => clone(await area.get(keys))),
      getKeys: api(`storage.${name}.getKeys`, async () => clone(await area.getKeys())),
      set: api(`storage.${name}.set`, (items) => area.set(items)),
      remove: api(`storage.${name}.remove`, (keys) => area.remove(keys)),
      clear: api(`storage.${name}.clear`, () => area.clear()),
      getBytesInUse: api(`storage.${name}.getBytesInUse`, (keys) => area.getBytesInUse(keys)),
      setAccessLevel: api(`storage.${name}.setAccessLevel`, () => undefined),
      onChanged: host.hub.view(`storage.${name}.onChanged`, ctx),
    };
  }
  out.onChanged = host.hub.view("storage.onChanged", ctx);
  return out;
}

/**
 * The areas of an app: `makeBackend(area)` keeps each; changes go to the hub's events.
 * @param {{manifest: any, makeBackend: (area: string) => any, hub: any, cloneFor: (owner: any, v: any) => any, now?: () => number}} _
 */
export function makeAreas({ manifest, makeBackend, hub, cloneFor, now }) {
  const perms = (manifest.permissions ?? []).concat(manifest.optional_permissions ?? []);
  const unlimited = perms.includes("unlimitedStorage");
  const areas = {};
  for (const area of ["local", "sync", "session", "managed"]) {
    let quota = { ...QUOTAS[area] };
    if (area === "local" && unlimited) quota = {};
    areas[area] = new StorageArea({
      area,
      quota,
      now,
      readOnly: area === "managed",
      backend: area === "session" || area === "managed" ? memoryBackend() : makeBackend(area),
      onChanged: (changes, a) => {
        const args = (owner) => [cloneFor(owner, changes), a];
        hub.dispatch("storage.onChanged", args);
        hub.dispatch(`storage.${a}.onChanged`, (owner) => [cloneFor(owner, changes)]);
      },
    });
  }
  return areas;
}
