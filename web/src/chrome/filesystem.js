// FileEntry / DirectoryEntry (the old File API's entries, as Chrome apps used them) over
// three kinds of node: File System Access handles, Files a user picked with <input>, and
// files fetched by URL (the package's own directory, read-only). chrome.fileSystem's
// chooseEntry picks them.

import { ChromeError, Multi } from "./base.js";

/**
 * The legacy codes of Chrome's FileError (the `code` pages of the time compared with
 * FileError.NOT_FOUND_ERR and the like), by the DOMException name that replaced each.
 */
export const FILE_ERROR_CODES = {
  NotFoundError: 1,
  SecurityError: 2,
  AbortError: 3,
  NotReadableError: 4,
  EncodingError: 5,
  NoModificationAllowedError: 6,
  InvalidStateError: 7,
  SyntaxError: 8,
  InvalidModificationError: 9,
  QuotaExceededError: 10,
  TypeMismatchError: 11,
  PathExistsError: 12,
};

const ours = new WeakSet();

/**
 * An error as the entries' error callbacks get it: a DOMException with Chrome's name, whose
 * `code` is FileError's legacy code (Chrome gives DOMException's own code today, but the
 * pages that read `code` compared it with FileError's constants; see advertise.js).
 */
export function fsError(name, message) {
  const e = new DOMException(message ?? name, name);
  try {
    Object.defineProperty(e, "code", { value: FILE_ERROR_CODES[name] ?? 0, enumerable: true });
  } catch {
    /* an engine whose DOMException refuses own properties keeps its own code */
  }
  ours.add(e);
  return e;
}

/** `e` (from a handle, a fetch, anything) as an fsError; `fallback` names what is unknown. */
export function toFileError(e, fallback = "InvalidStateError") {
  if (ours.has(e)) return e;
  const message = String(e?.message ?? e);
  if (e?.name in FILE_ERROR_CODES) return fsError(e.name, message);
  // Handles refuse a bad name with a TypeError; Chrome refused it as a modification.
  if (e instanceof TypeError) return fsError("InvalidModificationError", message);
  if (e?.name === "NotAllowedError") return fsError("SecurityError", message);
  return fsError(fallback, message);
}

const later = (f, ...a) => typeof f === "function" && setTimeout(() => f(...a), 0);
const join = (dir, name) => (dir === "/" ? `/${name}` : `${dir}/${name}`);

/** A node tree from package-relative paths (`files`): each file's bytes from `fetchFile(path)`. */
export function treeFromPaths(paths, fetchFile) {
  const root = { kind: "directory", name: "", children: new Map() };
  for (const p of paths) {
    const parts = String(p).split("/").filter((s) => s && s !== ".");
    if (!parts.length || parts.includes("..")) continue;
    let d = root;
    parts.forEach((part, i) => {
      if (i === parts.length - 1) {
        if (!d.children.has(part)) d.children.set(part, { kind: "file", name: part, path: parts.join("/"), getFile: () => fetchFile(parts.join("/")) });
      } else {
        if (!d.children.has(part)) d.children.set(part, { kind: "directory", name: part, children: new Map() });
        d = d.children.get(part);
      }
    });
  }
  return root;
}

/** A tree over Files from <input webkitdirectory> (their webkitRelativePath). */
export function treeFromFiles(files) {
  const byPath = new Map([...files].map((f) => [f.webkitRelativePath || f.name, f]));
  const root = treeFromPaths([...byPath.keys()], async (p) => byPath.get(p));
  // The picked folder is the tree's one top directory.
  return root.children.size === 1 && [...root.children.values()][0].kind === "directory" ? [...root.children.values()][0] : root;
}

/** The parts of an entry path (no empty ones; `.` and `..` kept, for the caller to resolve). */
export function splitPath(path) {
  return String(path ?? "").split("/").filter((s) => s);
}

/**
 * Resolves `path` lexically, as Chrome did: `depth` is how many directories deep the start
 * is (0: the root; an absolute path starts there), `..` above the root stays at the root.
 * Returns how many levels to go up from the start (`up`) and the names to walk down.
 */
export function resolvePath(path, depth) {
  const abs = String(path ?? "").startsWith("/");
  let up = abs ? depth : 0;
  const names = [];
  for (const p of splitPath(path)) {
    if (p === ".") continue;
    if (p === "..") {
      if (names.length) names.pop();
      else if (up < depth) up++;
    } else names.push(p);
  }
  return { up, names };
}

/** Node operations, whichever the kind. */
const nodeOps = {
  async file(node) {
    if (node.handle) return node.handle.getFile();
    const f = await node.getFile();
    return f instanceof File ? f : new File([f], node.name, { type: f.type });
  },
  async list(node) {
    if (node.handle) {
      const out = [];
      for await (const h of node.handle.values()) out.push({ kind: h.kind, name: h.name, handle: h });
      return out;
    }
    return [...node.children.values()];
  },
  /** The child called `name` of a directory with a handle, of either kind (`directory` first if true), or null. */
  async lookup(node, name, directory = false) {
    for (const dir of [directory, !directory]) {
      try {
        const h = dir ? await node.handle.getDirectoryHandle(name) : await node.handle.getFileHandle(name);
        return { kind: h.kind, name: h.name, handle: h };
      } catch (e) {
        if (e?.name !== "TypeMismatchError" && e?.name !== "NotFoundError") throw toFileError(e, "NotFoundError");
      }
    }
    return null;
  },
  async child(node, name, { create = false, directory = false, exclusive = false } = {}) {
    if (node.handle) {
      if (name.includes("\\")) throw fsError("InvalidModificationError", `${name}: not a valid name`);
      const found = await nodeOps.lookup(node, name, directory);
      if (found) {
        if (create && exclusive) throw fsError("InvalidModificationError", `${name} already exists`);
        if ((found.kind === "directory") !== directory) throw fsError("TypeMismatchError", `${name} is not a ${directory ? "directory" : "file"}`);
        return found;
      }
      if (!create) throw fsError("NotFoundError", `${name} was not found`);
      try {
        const h = directory ? await node.handle.getDirectoryHandle(name, { create }) : await node.handle.getFileHandle(name, { create });
        return { kind: h.kind, name: h.name, handle: h };
      } catch (e) {
        throw toFileError(e, "InvalidModificationError");
      }
    }
    let c = node.children?.get(name);
    if (!c && node.lookup) c = await node.lookup(name, directory);
    if (create && !c) throw fsError("NoModificationAllowedError", `${name}: this directory is read-only`);
    if (!c) throw fsError("NotFoundError", `${name} was not found`);
    if ((c.kind === "directory") !== directory) throw fsError("TypeMismatchError", `${name} is not a ${directory ? "directory" : "file"}`);
    return c;
  },
  /** Replaces a handle's whole contents with `blob`: through createWritable, or `opts.rewrite` where the entries were given one. */
  async replace(node, blob, opts) {
    if (opts.rewrite) return opts.rewrite(node, blob);
    const w = await node.handle.createWritable();
    await w.write(blob);
    await w.close();
  },
  /** Copies `node` into the directory `dir` (handles both) as `name`. */
  async copy(node, dir, name, opts) {
    if (node.kind === "file") {
      const h = await dir.handle.getFileHandle(name, { create: true });
      await nodeOps.replace({ kind: "file", name, handle: h }, await nodeOps.file(node), opts);
      return;
    }
    const h = await dir.handle.getDirectoryHandle(name, { create: true });
    for (const c of await nodeOps.list(node)) await nodeOps.copy(c, { kind: "directory", name, handle: h }, c.name, opts);
  },
};

/**
 * A FileWriter over a node: a handle written through createWritable, a handle rewritten whole
 * by `opts.rewrite` (where a browser has no createWritable), or (`opts.save`) a file saved by
 * download.
 */
class FileWriter {
  constructor(node, size, opts) {
    this.node = node;
    this.opts = opts;
    this.position = 0;
    this.length = size;
    this.readyState = 0;
    this.error = null;
    for (const e of ["onwritestart", "onprogress", "onwrite", "onwriteend", "onerror", "onabort"]) this[e] = null;
    this.data = null; // the whole file, for a writer that saves by download
  }
  emit(type, extra = {}) {
    const ev = { type, target: this, loaded: extra.loaded ?? 0, total: extra.total ?? 0, lengthComputable: true };
    try {
      this[`on${type}`]?.(ev);
    } catch (e) {
      console.error(e);
    }
  }
  /** The file as it is now, for a writer that builds the whole new contents. */
  async current() {
    if (this.data) return this.data;
    if (this.opts.save) return new Blob([]);
    return nodeOps.file(this.node);
  }
  async store(data) {
    if (this.opts.save) {
      this.data = data;
      await this.opts.save(data);
    } else await this.opts.rewrite(this.node, data);
  }
  get positional() {
    return !this.opts.rewrite && !this.opts.save && !!this.node.handle?.createWritable;
  }
  /** Runs `f` as one operation: Chrome threw InvalidStateError at a call while one was running. */
  apply(f, size = 0) {
    if (this.readyState === 1) throw fsError("InvalidStateError", "a write is already in progress");
    this.readyState = 1;
    this.error = null;
    (async () => {
      this.emit("writestart");
      try {
        await f();
        this.readyState = 2;
        this.emit("write", { loaded: size, total: size });
      } catch (e) {
        this.readyState = 2;
        this.error = toFileError(e);
        this.emit("error");
      }
      this.emit("writeend", { loaded: size, total: size });
    })();
  }
  write(blob) {
    const b = blob instanceof Blob ? blob : new Blob([blob]);
    this.apply(async () => {
      if (this.positional) {
        const w = await this.node.handle.createWritable({ keepExistingData: true });
        await w.seek(this.position);
        await w.write(b);
        await w.close();
      } else {
        const cur = await this.current();
        await this.store(new Blob([cur.slice(0, this.position), b, cur.slice(this.position + b.size)]));
      }
      this.position += b.size;
      this.length = Math.max(this.length, this.position);
    }, b.size);
  }
  truncate(size) {
    this.apply(async () => {
      if (this.positional) {
        const w = await this.node.handle.createWritable({ keepExistingData: true });
        await w.truncate(size);
        await w.close();
      } else {
        const cur = await this.current();
        await this.store(size <= cur.size ? cur.slice(0, size) : new Blob([cur, new Uint8Array(size - cur.size)]));
      }
      this.length = size;
      this.position = Math.min(this.position, size);
    });
  }
  seek(offset) {
    if (this.readyState === 1) throw fsError("InvalidStateError", "a write is in progress");
    this.position = offset < 0 ? Math.max(0, this.length + offset) : Math.min(offset, this.length);
  }
  abort() {
    this.emit("abort");
  }
}

/**
 * The Entry for `node` at `fullPath` (in `fs`, {name, root}; `fs.urlPrefix` makes toURL's
 * filesystem: URLs); `parent` its DirectoryEntry. `opts`: writable (a picked file),
 * save (saved by download), rewrite (see FileWriter).
 */
export function makeEntry(node, fullPath, fs, parent = null, opts = {}) {
  const isDir = node.kind === "directory";
  const nodeOf = (e) => e?.__pexe2wasmNode;
  const fail = (err, name, message) => later(err, fsError(name, message));
  const run = (p, ok, err, fallback) => p.then((v) => ok?.(v), (e) => later(err, toFileError(e, fallback)));
  const writable = () => !!node.handle && (!!node.handle.createWritable || !!opts.rewrite);
  const parentNode = () => nodeOf(parent)?.node;
  const entry = {
    isFile: !isDir,
    isDirectory: isDir,
    name: node.name,
    fullPath,
    filesystem: fs,
    toURL: () => node.url ?? (fs.urlPrefix ? fs.urlPrefix + fullPath.split("/").map(encodeURIComponent).join("/") : ""),
    getParent: (ok) => later(ok, parent ?? entry),
    getMetadata: (ok, err) => {
      if (isDir) {
        const check = node.handle ? nodeOps.list(node) : Promise.resolve();
        return run(check.then(() => ({ modificationTime: new Date(0), size: 0 })), ok, err, "NotFoundError");
      }
      run(nodeOps.file(node).then((f) => ({ modificationTime: new Date(f.lastModified || 0), size: f.size })), ok, err, "NotFoundError");
    },
    remove: (ok, err) => {
      if (!node.handle || !parentNode()?.handle) return fail(err, parent ? "NoModificationAllowedError" : "InvalidModificationError", "this entry cannot be removed");
      run(parentNode().handle.removeEntry(node.name), ok, err, "InvalidModificationError");
    },
    moveTo: (dir, name, ok, err) => transfer(true, dir, name, ok, err),
    copyTo: (dir, name, ok, err) => transfer(false, dir, name, ok, err),
  };
  // moveTo and copyTo as Chrome checked them (the root, onto itself, into itself, onto an
  // entry of the other kind or a directory that is not empty: InvalidModificationError); a
  // copy then, for a move, a removal: handles have no move in every browser.
  const transfer = (move, dir, newName, ok, err) => {
    const d = nodeOf(dir);
    if (!node.handle || !d?.node.handle) return fail(err, "NoModificationAllowedError", "this entry cannot be moved or copied");
    const name = newName === undefined || newName === null || newName === "" ? node.name : String(newName);
    const to = join(dir.fullPath, name);
    const same = dir.filesystem === fs;
    if (!parent || d.node.kind !== "directory" || /[/\\]/.test(name) || name === "." || name === "..") {
      return fail(err, "InvalidModificationError", `cannot ${move ? "move" : "copy"} ${fullPath} to ${to}`);
    }
    if (same && (to === fullPath || (isDir && (dir.fullPath === fullPath || dir.fullPath.startsWith(`${fullPath}/`))))) {
      return fail(err, "InvalidModificationError", `cannot ${move ? "move" : "copy"} ${fullPath} to ${to}`);
    }
    const work = (async () => {
      const there = await nodeOps.lookup(d.node, name);
      if (there) {
        if (there.kind !== node.kind || (there.kind === "directory" && (await nodeOps.list(there)).length)) {
          throw fsError("InvalidModificationError", `${to} exists`);
        }
        await d.node.handle.removeEntry(name, { recursive: true });
      }
      await nodeOps.copy(node, d.node, name, opts);
      if (move) await parentNode().handle.removeEntry(node.name, { recursive: true });
      return makeEntry(await nodeOps.lookup(d.node, name, isDir), to, dir.filesystem, dir, d.opts);
    })();
    run(work, ok, err, "InvalidModificationError");
  };
  Object.defineProperty(entry, "__pexe2wasmNode", { value: { node, opts, parent } });
  if (!isDir) {
    entry.file = (ok, err) => run(nodeOps.file(node), ok, err, "NotFoundError");
    entry.createWriter = (ok, err) => {
      if (!writable() && !opts.save && !opts.writable) return fail(err, "NoModificationAllowedError", `${node.name} is read-only`);
      const size = opts.save ? Promise.resolve(0) : nodeOps.file(node).then((f) => f.size);
      run(size.then((n) => new FileWriter(node, n, opts)), ok, err, "NotFoundError");
    };
  } else {
    entry.createReader = () => {
      let done = false;
      return {
        readEntries: (ok, err) => {
          if (done) return later(ok, []);
          done = true;
          run(nodeOps.list(node).then((nodes) => nodes.map((n) => makeEntry(n, join(fullPath, n.name), fs, entry, opts))), ok, err, "NotReadableError");
        },
      };
    };
    const get = (directory) => (path, options, ok, err) => {
      if (typeof options === "function") [options, ok, err] = [{}, options, ok];
      options ??= {};
      // The chain of directories from the top one (the root) down to this one.
      const chain = [];
      for (let e = entry; e; e = nodeOf(e).parent) chain.unshift(e);
      const { up, names } = resolvePath(path, chain.length - 1);
      const work = (async () => {
        let e = chain[chain.length - 1 - up];
        if (!names.length) {
          if (!directory) throw fsError("TypeMismatchError", `${e.fullPath} is a directory`);
          return e;
        }
        for (let i = 0; i < names.length; i++) {
          const last = i === names.length - 1;
          const cur = nodeOf(e);
          const n = await nodeOps.child(cur.node, names[i], last ? { ...options, directory } : { directory: true });
          e = makeEntry(n, join(e.fullPath, names[i]), fs, e, cur.opts);
        }
        return e;
      })();
      run(work, ok, err, "NotFoundError");
    };
    entry.getFile = get(false);
    entry.getDirectory = get(true);
    entry.removeRecursively = (ok, err) => {
      if (!node.handle || !parentNode()?.handle) return fail(err, parent ? "NoModificationAllowedError" : "InvalidModificationError", "this entry cannot be removed");
      run(parentNode().handle.removeEntry(node.name, { recursive: true }), ok, err, "InvalidModificationError");
    };
  }
  return entry;
}

/** The read-only DirectoryEntry of the package (runtime.getPackageDirectoryEntry). */
export function packageEntry(paths, baseURL, fetchImpl = fetch) {
  const fetchFile = async (p) => {
    const r = await fetchImpl(new URL(p, baseURL).href);
    if (!r.ok) throw new Error(`${p}: HTTP ${r.status}`);
    const b = await r.blob();
    return new File([b], p.split("/").pop(), { type: b.type });
  };
  const root = treeFromPaths(paths, fetchFile);
  // A file the listing does not name is still looked for at its URL.
  const addLookup = (dir, prefix) => {
    dir.lookup = async (name, directory) => {
      const path = prefix + name;
      if (directory) {
        const d = { kind: "directory", name, children: new Map() };
        addLookup(d, `${path}/`);
        return d;
      }
      const r = await fetchImpl(new URL(path, baseURL).href, { method: "HEAD" }).catch(() => null);
      return r?.ok ? { kind: "file", name, getFile: () => fetchFile(path), url: new URL(path, baseURL).href } : null;
    };
    for (const [n, c] of dir.children) if (c.kind === "directory") addLookup(c, `${prefix}${n}/`);
  };
  addLookup(root, "");
  const fs = { name: "crxfs" };
  const entry = makeEntry(root, "/", fs);
  fs.root = entry;
  return entry;
}

/** File System Access picker types from chooseEntry's `accepts`. */
export function pickerTypes(accepts) {
  return (accepts ?? [])
    .map((a) => {
      const exts = (a.extensions ?? []).map((e) => `.${String(e).replace(/^\./, "")}`);
      const mimes = a.mimeTypes?.length ? a.mimeTypes : ["application/octet-stream"];
      const accept = Object.fromEntries(mimes.map((m) => [m.includes("*") && m !== "*/*" ? m : m === "*/*" ? "application/octet-stream" : m, exts]));
      return { description: a.description ?? "", accept };
    })
    .filter((t) => Object.values(t.accept).some((e) => e.length) || !Object.keys(t.accept).includes("application/octet-stream"));
}

/** <input type=file>'s accept attribute from chooseEntry's `accepts`. */
export function inputAccept(accepts) {
  return (accepts ?? []).flatMap((a) => [...(a.mimeTypes ?? []), ...(a.extensions ?? []).map((e) => `.${String(e).replace(/^\./, "")}`)]).join(",");
}

/** chrome.fileSystem for one page (its window shows the pickers). */
export function fileSystemApi(host, ctx) {
  const win = ctx.win;
  const retained = host.retainedEntries;
  const fs = { name: "pexe2wasm" };
  const nodeOf = (e) => e?.__pexe2wasmNode;
  const pickInput = ({ multiple = false, directory = false, accept = "" }) =>
    new Promise((resolve, reject) => {
      const input = win.document.createElement("input");
      input.type = "file";
      input.multiple = multiple;
      if (directory) input.webkitdirectory = true;
      if (accept) input.accept = accept;
      input.style.display = "none";
      input.addEventListener("change", () => {
        input.remove();
        input.files.length ? resolve([...input.files]) : reject(new ChromeError("User cancelled"));
      });
      input.addEventListener("cancel", () => {
        input.remove();
        reject(new ChromeError("User cancelled"));
      });
      win.document.body.append(input);
      input.click();
    });
  const download = (name) => async (blob) => {
    // Without showSaveFilePicker: the file is saved by download once written.
    const a = win.document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  };
  const cancelled = (e) => {
    if (e instanceof ChromeError) throw e;
    if (e?.name === "AbortError") throw new ChromeError("User cancelled");
    throw new ChromeError(`${e?.name ?? "Error"}: ${e?.message ?? e}`);
  };
  const chooseEntry = async (options = {}) => {
    const type = options.type ?? "openFile";
    const types = pickerTypes(options.accepts);
    const excludeAll = options.acceptsAllTypes === false && types.length > 0;
    if (type === "saveFile") {
      if (win.showSaveFilePicker) {
        const h = await win.showSaveFilePicker({ suggestedName: options.suggestedName, types, excludeAcceptAllOption: excludeAll }).catch(cancelled);
        return makeEntry({ kind: "file", name: h.name, handle: h }, `/${h.name}`, fs, null, { writable: true });
      }
      const name = options.suggestedName ?? "download";
      return makeEntry({ kind: "file", name, getFile: async () => new File([], name) }, `/${name}`, fs, null, { save: download(name) });
    }
    if (type === "openDirectory") {
      if (win.showDirectoryPicker) {
        const h = await win.showDirectoryPicker({ mode: "readwrite" }).catch(cancelled);
        return makeEntry({ kind: "directory", name: h.name, handle: h }, `/${h.name}`, fs, null, { writable: true });
      }
      const tree = treeFromFiles(await pickInput({ directory: true }));
      return makeEntry(tree, `/${tree.name}`, fs);
    }
    const multiple = !!options.acceptsMultiple;
    const writable = type === "openWritableFile";
    let entries;
    if (win.showOpenFilePicker) {
      const hs = await win.showOpenFilePicker({ multiple, types, excludeAcceptAllOption: excludeAll }).catch(cancelled);
      if (writable) for (const h of hs) await h.requestPermission?.({ mode: "readwrite" });
      entries = hs.map((h) => makeEntry({ kind: "file", name: h.name, handle: h }, `/${h.name}`, fs, null, { writable }));
    } else {
      const files = await pickInput({ multiple, accept: inputAccept(options.accepts) });
      entries = files.map((f) => makeEntry({ kind: "file", name: f.name, getFile: async () => f }, `/${f.name}`, fs, null, writable ? { save: download(f.name) } : {}));
    }
    return multiple ? new Multi([undefined, entries]) : entries[0];
  };
  const api = host.api;
  return {
    chooseEntry: api("fileSystem.chooseEntry", chooseEntry),
    getDisplayPath: api("fileSystem.getDisplayPath", (e) => e?.fullPath ?? ""),
    getWritableEntry: api("fileSystem.getWritableEntry", (e) => {
      const n = nodeOf(e);
      if (!n?.node.handle?.createWritable && !n?.opts.save) throw new ChromeError("Cannot write to a read-only entry.");
      return e;
    }),
    isWritableEntry: api("fileSystem.isWritableEntry", (e) => !!(nodeOf(e)?.node.handle?.createWritable || nodeOf(e)?.opts.save)),
    retainEntry: (e) => {
      const id = `pexe2wasm:${retained.size + 1}:${e?.name ?? ""}`;
      retained.set(id, e);
      return id;
    },
    isRestorable: api("fileSystem.isRestorable", (id) => retained.has(id)),
    restoreEntry: api("fileSystem.restoreEntry", (id) => {
      if (!retained.has(id)) throw new ChromeError("Unknown id");
      return retained.get(id);
    }),
    requestFileSystem: api("fileSystem.requestFileSystem", () => {
      throw new ChromeError("Operation only supported for kiosk apps running in a kiosk session.");
    }),
    getVolumeList: api("fileSystem.getVolumeList", () => {
      throw new ChromeError("Operation only supported for kiosk apps running in a kiosk session.");
    }),
    onVolumeListChanged: host.hub.view("fileSystem.onVolumeListChanged", ctx),
  };
}
