// FileEntry / DirectoryEntry (the old File API's entries, as Chrome apps used them) over
// three kinds of node: File System Access handles, Files a user picked with <input>, and
// files fetched by URL (the package's own directory, read-only). chrome.fileSystem's
// chooseEntry picks them.

import { ChromeError, Multi } from "./base.js";

/** An error as the entries' error callbacks got it (a DOMException's shape). */
export function fsError(name, message) {
  const codes = { NotFoundError: 1, SecurityError: 2, AbortError: 3, NotReadableError: 4, InvalidModificationError: 9, InvalidStateError: 7, TypeMismatchError: 11, PathExistsError: 12, NoModificationAllowedError: 6 };
  return { name, message, code: codes[name] ?? 0 };
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
  async child(node, name, { create = false, directory = false, exclusive = false } = {}) {
    if (node.handle) {
      try {
        if (exclusive && create) {
          const exists = await (directory ? node.handle.getDirectoryHandle(name) : node.handle.getFileHandle(name)).then(() => true, () => false);
          if (exists) throw fsError("InvalidModificationError", `${name} exists`);
        }
        const h = directory ? await node.handle.getDirectoryHandle(name, { create }) : await node.handle.getFileHandle(name, { create });
        return { kind: h.kind, name: h.name, handle: h };
      } catch (e) {
        if (e?.code !== undefined && !(e instanceof Error)) throw e;
        throw fsError(e?.name === "TypeMismatchError" ? "TypeMismatchError" : "NotFoundError", `${name}: ${e?.message ?? e}`);
      }
    }
    let c = node.children?.get(name);
    if (!c && node.lookup) c = await node.lookup(name, directory);
    if (create && !c) throw fsError("NoModificationAllowedError", `${name}: this directory is read-only`);
    if (!c) throw fsError("NotFoundError", `${name} was not found`);
    if ((c.kind === "directory") !== directory) throw fsError("TypeMismatchError", `${name} is not a ${directory ? "directory" : "file"}`);
    return c;
  },
};

/** A FileWriter over a node: a File System Access handle, or (`download`) a file saved by download. */
class FileWriter {
  constructor(node, size, save) {
    this.node = node;
    this.save = save;
    this.position = 0;
    this.length = size;
    this.readyState = 0;
    this.error = null;
    for (const e of ["onwritestart", "onprogress", "onwrite", "onwriteend", "onerror", "onabort"]) this[e] = null;
    this.data = null; // the whole file, for writers without a handle
  }
  emit(type, extra = {}) {
    const ev = { type, target: this, loaded: extra.loaded ?? 0, total: extra.total ?? 0, lengthComputable: true };
    try {
      this[`on${type}`]?.(ev);
    } catch (e) {
      console.error(e);
    }
  }
  async apply(f) {
    if (this.readyState === 1) throw fsError("InvalidStateError", "a write is already in progress");
    this.readyState = 1;
    this.emit("writestart");
    try {
      await f();
      this.readyState = 2;
      this.emit("write");
    } catch (e) {
      this.readyState = 2;
      this.error = e?.name ? fsError(e.name, e.message) : fsError("InvalidStateError", String(e));
      this.emit("error");
    }
    this.emit("writeend");
  }
  write(blob) {
    const b = blob instanceof Blob ? blob : new Blob([blob]);
    this.apply(async () => {
      if (this.node.handle?.createWritable) {
        const w = await this.node.handle.createWritable({ keepExistingData: true });
        await w.seek(this.position);
        await w.write(b);
        await w.close();
      } else {
        const cur = this.data ?? (this.node.kind === "file" && !this.save ? await nodeOps.file(this.node) : new Blob([]));
        this.data = new Blob([cur.slice(0, this.position), b, cur.slice(this.position + b.size)]);
        await this.save?.(this.data);
      }
      this.position += b.size;
      this.length = Math.max(this.length, this.position);
    });
  }
  truncate(size) {
    this.apply(async () => {
      if (this.node.handle?.createWritable) {
        const w = await this.node.handle.createWritable({ keepExistingData: true });
        await w.truncate(size);
        await w.close();
      } else {
        const cur = this.data ?? new Blob([]);
        this.data = size <= cur.size ? cur.slice(0, size) : new Blob([cur, new Uint8Array(size - cur.size)]);
        await this.save?.(this.data);
      }
      this.length = size;
      this.position = Math.min(this.position, size);
    });
  }
  seek(offset) {
    this.position = offset < 0 ? Math.max(0, this.length + offset) : Math.min(offset, this.length);
  }
  abort() {
    this.emit("abort");
  }
}

/** The Entry for `node` at `fullPath` (in `fs`, {name, root}); `parent` its DirectoryEntry. */
export function makeEntry(node, fullPath, fs, parent = null, opts = {}) {
  const isDir = node.kind === "directory";
  const entry = {
    isFile: !isDir,
    isDirectory: isDir,
    name: node.name,
    fullPath,
    filesystem: fs,
    toURL: () => node.url ?? "",
    getParent: (ok) => later(ok, parent ?? entry),
    getMetadata: (ok, err) => {
      if (isDir) return later(ok, { modificationTime: new Date(0), size: 0 });
      nodeOps.file(node).then((f) => ok?.({ modificationTime: new Date(f.lastModified || 0), size: f.size }), (e) => later(err, fsError("NotFoundError", String(e?.message ?? e))));
    },
    remove: (_ok, err) => later(err, fsError("NoModificationAllowedError", "removing is not supported here")),
    moveTo: (_d, _n, _ok, err) => later(err, fsError("NoModificationAllowedError", "moving is not supported here")),
    copyTo: (_d, _n, _ok, err) => later(err, fsError("NoModificationAllowedError", "copying is not supported here")),
  };
  Object.defineProperty(entry, "__pexe2wasmNode", { value: { node, opts } });
  if (!isDir) {
    entry.file = (ok, err) =>
      nodeOps.file(node).then(
        (f) => ok?.(f),
        (e) => later(err, fsError("NotFoundError", String(e?.message ?? e))),
      );
    entry.createWriter = (ok, err) => {
      if (!node.handle?.createWritable && !opts.save && !opts.writable) return later(err, fsError("NoModificationAllowedError", `${node.name} is read-only`));
      const size = opts.save ? Promise.resolve(0) : nodeOps.file(node).then((f) => f.size, () => 0);
      size.then((n) => ok?.(new FileWriter(node, n, opts.save)));
    };
  } else {
    entry.createReader = () => {
      let done = false;
      return {
        readEntries: (ok, err) => {
          if (done) return later(ok, []);
          done = true;
          nodeOps.list(node).then(
            (nodes) => ok?.(nodes.map((n) => makeEntry(n, join(fullPath, n.name), fs, entry, opts))),
            (e) => later(err, fsError("NotReadableError", String(e?.message ?? e))),
          );
        },
      };
    };
    const get = (directory) => (path, options, ok, err) => {
      if (typeof options === "function") [options, ok, err] = [{}, options, ok];
      const parts = String(path).split("/").filter((s) => s && s !== ".");
      (async () => {
        let n = node;
        let e = entry;
        let p = String(path).startsWith("/") ? "" : fullPath;
        for (let i = 0; i < parts.length; i++) {
          const last = i === parts.length - 1;
          n = await nodeOps.child(n, parts[i], last ? { ...options, directory } : { directory: true });
          p = join(p || "/", parts[i]);
          e = makeEntry(n, p, fs, e, opts);
        }
        return e;
      })().then((e) => ok?.(e), (e) => later(err, e?.name ? e : fsError("NotFoundError", String(e))));
    };
    entry.getFile = get(false);
    entry.getDirectory = get(true);
    entry.removeRecursively = (_ok, err) => later(err, fsError("NoModificationAllowedError", "removing is not supported here"));
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
