// Chrome's sandboxed File System API (webkitRequestFileSystem, webkitResolveLocalFileSystemURL,
// navigator.webkitPersistentStorage / webkitTemporaryStorage) as NaCl pages and Chrome apps
// used it. advertise.js defines the names at once and loads this module at the first call:
// in Firefox and Safari, which never had the API, and in Chromium too wherever it has the
// Origin Private File System, so that the page's PERSISTENT and TEMPORARY file systems are
// the module's LOCALPERSISTENT and LOCALTEMPORARY ones (host/io/sandbox-fs.js), one store
// per origin as Chrome gave both; Chromium's own API keeps its files where no module can
// reach them.
//
// The files live in the Origin Private File System (navigator.storage.getDirectory()), in
// pexe2wasm-fs/persistent and pexe2wasm-fs/temporary (compat/sandbox-layout.js); the
// temporary folder is emptied once per page load (Chrome never promised to keep temporary
// files). Where a browser has no OPFS (WebKitGTK 2.50 has no navigator.storage), or refuses
// it (a private window), the same folders live in IndexedDB (compat/kv-directory.js), which
// the module's IO worker uses there too. Entries, readers and writers are
// chrome/filesystem.js's, with Chrome's errors (names as Chrome gives them, FileError's
// legacy codes).
//
// Writing: where OPFS handles have createWritable() (Chromium, Firefox, Safari 26) a
// FileWriter writes in place; where they do not (older Safari), createSyncAccessHandle()
// exists only in workers, so a write builds the file's new contents on the page and a small
// dedicated worker (filesystem-worker.js) stores them through a sync access handle.
//
// Set globalThis.__pexe2wasmFileSystem = {backend: "indexeddb"} or {writer: "worker"} before
// the first call to choose those paths where OPFS and createWritable exist (tests do).

import { fsError, makeEntry, toFileError } from "../chrome/filesystem.js";
import { IdbStore, StoreDirectoryHandle } from "./kv-directory.js";
import { PERSISTENT_DIR, TEMPORARY_DIR, pageLoadId, sandboxFolder, saveGrantedQuota } from "./sandbox-layout.js";

export const TEMPORARY = 0;
export const PERSISTENT = 1;
const TYPES = ["temporary", "persistent"];
const FOLDERS = [TEMPORARY_DIR, PERSISTENT_DIR];
/** What Chrome answered as the quota before any request (and what we answer without an estimate). */
export const DEFAULT_QUOTA = 10 * 1024 ** 3;

const later = (f, ...a) => typeof f === "function" && setTimeout(() => f(...a), 0);

/** requestQuota's grant: what was asked, or the browser's quota if that is lower. */
export function grantQuota(asked, estimate) {
  const n = Math.max(0, Math.floor(Number(asked) || 0));
  const q = Number(estimate?.quota);
  return estimate && Number.isFinite(q) && q < n ? q : n;
}

/** queryUsageAndQuota's answer [usage, quota] from navigator.storage.estimate() (or null). */
export function usageAndQuota(estimate) {
  const u = Number(estimate?.usage);
  const q = Number(estimate?.quota);
  return [Number.isFinite(u) ? u : 0, Number.isFinite(q) ? q : DEFAULT_QUOTA];
}

/** The file system's name, as Chrome made it: "http_127.0.0.1_8000:Persistent". */
export function fileSystemName(loc, type) {
  const scheme = String(loc.protocol).replace(/:$/, "");
  return `${scheme}_${loc.hostname}_${loc.port || 0}:${type === PERSISTENT ? "Persistent" : "Temporary"}`;
}

/**
 * A filesystem: URL's type and path ("filesystem:http://h:p/persistent/a/b" →
 * {type: PERSISTENT, path: "/a/b"}). Throws EncodingError for what is not one, SecurityError
 * for another origin's.
 */
export function parseFileSystemURL(url, origin) {
  const s = String(url);
  let inner;
  try {
    if (!s.startsWith("filesystem:")) throw new Error("not a filesystem: URL");
    inner = new URL(s.slice("filesystem:".length));
  } catch (e) {
    throw fsError("EncodingError", `${s}: ${e.message}`);
  }
  const [, kind, ...rest] = inner.pathname.split("/");
  const type = TYPES.indexOf(kind);
  if (type < 0) throw fsError("EncodingError", `${s}: neither temporary nor persistent`);
  if (inner.origin !== origin) throw fsError("SecurityError", `${s}: another origin's file system`);
  return { type, path: `/${rest.map(decodeURIComponent).join("/")}`.replace(/\/+$/, "") || "/" };
}

/**
 * The sandboxed file systems of one page. `root()`: a promise of the directory handle the
 * folders go in (OPFS's root, an IndexedDB store's); `rewrite`: FileWriter's whole-file path
 * (null where handles have createWritable); `estimate()`: navigator.storage.estimate() or
 * null; `location`: the page's; `loadId`: this page load's (sandbox-layout.js).
 */
export class Sandbox {
  constructor({ root, rewrite = null, estimate = async () => null, location, loadId = pageLoadId() }) {
    this.root = root;
    this.loadId = loadId;
    this.rewrite = rewrite;
    this.estimate = estimate;
    this.location = location;
    this.systems = new Map(); // type → promise of the fs object (one per page load)
  }

  fileSystem(type) {
    if (!this.systems.has(type)) {
      const made = (async () => {
        const handle = await sandboxFolder(await this.root(), FOLDERS[type], this.loadId);
        // toURL() gives Chrome's filesystem: URLs, which pages may show or hand back to
        // webkitResolveLocalFileSystemURL; no other browser can fetch them (no <img src>).
        const fs = { name: fileSystemName(this.location, type), urlPrefix: `filesystem:${this.location.origin}/${TYPES[type]}` };
        fs.root = makeEntry({ kind: "directory", name: "", handle }, "/", fs, null, this.rewrite ? { rewrite: this.rewrite } : {});
        return fs;
      })();
      this.systems.set(type, made);
      made.catch(() => this.systems.delete(type));
    }
    return this.systems.get(type);
  }

  requestFileSystem(type, _size, ok, err) {
    if (type !== TEMPORARY && type !== PERSISTENT) return later(err, fsError("InvalidModificationError", `no file system of type ${type}`));
    this.fileSystem(type).then((fs) => ok?.(fs), (e) => later(err, toFileError(e, "SecurityError")));
  }

  resolveLocalFileSystemURL(url, ok, err) {
    let parsed;
    try {
      parsed = parseFileSystemURL(url, this.location.origin);
    } catch (e) {
      return later(err, e);
    }
    const call = (root, method) => new Promise((resolve, reject) => root[method](parsed.path, {}, resolve, reject));
    this.fileSystem(parsed.type)
      .then((fs) => call(fs.root, "getDirectory").catch((e) => (e?.name === "TypeMismatchError" ? call(fs.root, "getFile") : Promise.reject(e))))
      .then((entry) => ok?.(entry), (e) => later(err, toFileError(e, "NotFoundError")));
  }

  /**
   * The persistent grant is recorded beside the folders (sandbox-layout.js): the module's
   * writes to LOCALPERSISTENT stay under it, as in Chrome. Where it cannot be recorded (a
   * store that refuses the write) the module's writes are bounded by the browser alone.
   */
  requestQuota(type, bytes, ok, _err) {
    this.estimate()
      .catch(() => null)
      .then(async (est) => {
        const granted = grantQuota(bytes, est);
        if (type === PERSISTENT) {
          await saveGrantedQuota(await this.root(), granted).catch((e) =>
            console.warn(`pexe2wasm: the persistent quota granted could not be recorded (${e?.name ?? ""} ${e?.message ?? e}); the module's writes are not held to it`),
          );
        }
        ok?.(granted);
      });
  }

  queryUsageAndQuota(_type, ok, _err) {
    this.estimate()
      .catch(() => null)
      .then((est) => ok?.(...usageAndQuota(est)));
  }
}

/** FileWriter's whole-file path through filesystem-worker.js, for OPFS handles under `opfsRoot`. */
function workerRewrite(opfsRoot) {
  let worker = null;
  let seq = 0;
  const pending = new Map();
  return async (node, blob) => {
    const path = await opfsRoot.resolve(node.handle);
    if (!path) throw fsError("NotFoundError", `${node.name} is not in the file system`);
    if (!worker) {
      worker = new Worker(new URL("./filesystem-worker.js", import.meta.url));
      worker.onmessage = ({ data }) => {
        const p = pending.get(data.id);
        pending.delete(data.id);
        if (data.error) p?.reject(toFileError(data.error));
        else p?.resolve();
      };
    }
    const data = await blob.arrayBuffer();
    return new Promise((resolve, reject) => {
      const id = ++seq;
      pending.set(id, { resolve, reject });
      worker.postMessage({ id, path, data }, [data]);
    });
  };
}

/** The page's Sandbox: OPFS where the browser lets us have it, else IndexedDB. */
async function pageSandbox() {
  const cfg = globalThis.__pexe2wasmFileSystem ?? {};
  const storage = globalThis.navigator?.storage;
  const estimate = async () => (storage?.estimate ? storage.estimate() : null);
  if (cfg.backend !== "indexeddb" && storage?.getDirectory) {
    try {
      const opfs = await storage.getDirectory();
      const hasWritable = typeof FileSystemFileHandle !== "undefined" && "createWritable" in FileSystemFileHandle.prototype;
      const rewrite = cfg.writer === "worker" || !hasWritable ? workerRewrite(opfs) : null;
      return new Sandbox({ root: async () => opfs, rewrite, estimate, location: globalThis.location });
    } catch (e) {
      console.warn(`pexe2wasm: no Origin Private File System here (${e?.message ?? e}); Chrome's file system API keeps its files in IndexedDB`);
    }
  }
  const root = new StoreDirectoryHandle(new IdbStore());
  return new Sandbox({ root: async () => root, estimate, location: globalThis.location });
}

let sandbox = null;
const page = () => (sandbox ??= pageSandbox());
const call = (method, args, errAt) =>
  page().then(
    (s) => s[method](...args),
    (e) => later(args[errAt], toFileError(e, "SecurityError")),
  );

/** window.webkitRequestFileSystem(type, size, ok, err). */
export const requestFileSystem = (type, size, ok, err) => call("requestFileSystem", [type, size, ok, err], 3);
/** window.webkitResolveLocalFileSystemURL(url, ok, err). */
export const resolveLocalFileSystemURL = (url, ok, err) => call("resolveLocalFileSystemURL", [url, ok, err], 2);
/** navigator.webkit{Persistent,Temporary}Storage.requestQuota(bytes, ok, err), `type` from which. */
export const requestQuota = (type, bytes, ok, err) => call("requestQuota", [type, bytes, ok, err], 3);
/** navigator.webkit{Persistent,Temporary}Storage.queryUsageAndQuota(ok, err). */
export const queryUsageAndQuota = (type, ok, err) => call("queryUsageAndQuota", [type, ok, err], 2);
