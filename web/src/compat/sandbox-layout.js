// Where an origin's sandboxed files live, for both sides that Chrome gave one store: the
// page's webkitRequestFileSystem (compat/filesystem.js) and the module's
// PP_FILESYSTEMTYPE_LOCALPERSISTENT / LOCALTEMPORARY (host/io/sandbox-fs.js, in the IO
// worker). Under a root directory handle (the Origin Private File System's, or
// kv-directory.js's IndexedDB store where a browser has no OPFS):
//
//   pexe2wasm-fs/persistent/…   PERSISTENT and LOCALPERSISTENT (kept across visits)
//   pexe2wasm-fs/temporary/…    TEMPORARY and LOCALTEMPORARY (emptied once per page load)
//   pexe2wasm-fs/temporary-load/<id>   which page load last emptied temporary/
//   pexe2wasm-fs/persistent-quota      the bytes webkitPersistentStorage.requestQuota last
//                                      granted (decimal text): the module's writes stay
//                                      under it, as Chrome's did (PP_ERROR_NOQUOTA)
//
// Chrome never promised to keep temporary files; here the first side of a page load to
// open the temporary folder empties it, once: the page and the module of one load (and the
// windows of one Chrome app launcher, which share its top window's id) see one folder.

export const FOLDER = "pexe2wasm-fs";
export const PERSISTENT_DIR = "persistent";
export const TEMPORARY_DIR = "temporary";
const LOAD_DIR = "temporary-load";
const QUOTA_FILE = "persistent-quota";

/**
 * This page load's id: the top window's when it is of the same origin (a Chrome app's
 * windows are frames of its launcher), else this global's. The IO worker is given the
 * page's (embed.js).
 */
export function pageLoadId() {
  const g = /** @type {any} */ (globalThis);
  let w = g;
  try {
    if (g.top && g.top !== g && g.top.location.origin === g.location.origin) w = g.top;
  } catch {
    /* another origin's top window: this frame's own id */
  }
  return (w.__pexe2wasmPageLoad ??= `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`);
}

const names = async (dir) => {
  const out = [];
  for await (const h of dir.values()) out.push(h.name);
  return out;
};

/** Empties `top`/temporary unless page load `loadId` already did. */
async function emptyTemporaryOnce(top, loadId) {
  const marks = await top.getDirectoryHandle(LOAD_DIR, { create: true });
  const seen = await names(marks);
  if (seen.length === 1 && seen[0] === loadId) return;
  await top.removeEntry(TEMPORARY_DIR, { recursive: true }).catch(() => {});
  for (const n of seen) await marks.removeEntry(n, { recursive: true }).catch(() => {});
  await marks.getDirectoryHandle(loadId, { create: true });
}

/**
 * The directory handle of one sandboxed file system ("persistent" or "temporary") under
 * `root`, made if missing; for "temporary", emptied first if this page load (`loadId`) has
 * not yet done so. The check and the emptying hold a Web Lock where there are locks, so
 * the page and its module, starting together, empty it once.
 */
export async function sandboxFolder(root, kind, loadId) {
  const top = await root.getDirectoryHandle(FOLDER, { create: true });
  if (kind === TEMPORARY_DIR) {
    const locks = globalThis.navigator?.locks;
    if (locks?.request) await locks.request(`${FOLDER}/${LOAD_DIR}`, () => emptyTemporaryOnce(top, loadId));
    else await emptyTemporaryOnce(top, loadId);
  }
  return top.getDirectoryHandle(kind, { create: true });
}

/** Records `bytes` as the persistent quota requestQuota granted (the page's side). */
export async function saveGrantedQuota(root, bytes) {
  const top = await root.getDirectoryHandle(FOLDER, { create: true });
  const w = await (await top.getFileHandle(QUOTA_FILE, { create: true })).createWritable();
  await w.write(String(Math.max(0, Math.floor(bytes))));
  await w.close();
}

/** The persistent quota last granted, in bytes, or null when no page asked for one. */
export async function grantedQuota(root) {
  try {
    const top = await root.getDirectoryHandle(FOLDER);
    const text = await (await (await top.getFileHandle(QUOTA_FILE)).getFile()).text();
    const n = Number(text.trim());
    return text.trim() !== "" && Number.isFinite(n) && n >= 0 ? n : null;
  } catch (e) {
    if (e?.name === "NotFoundError" || e?.name === "TypeMismatchError") return null;
    throw e;
  }
}
