// A dedicated worker of compat/filesystem.js: replaces an Origin Private File System file's
// contents through a sync access handle, for browsers whose OPFS handles have no
// createWritable() on the page (Safari before 26: createSyncAccessHandle() exists, but only
// in workers). Message: {id, path (names under the OPFS root), data (ArrayBuffer)}; answer
// {id} or {id, error: {name, message}}.

onmessage = async ({ data: { id, path, data } }) => {
  let handle = null;
  try {
    let dir = await navigator.storage.getDirectory();
    for (const name of path.slice(0, -1)) dir = await dir.getDirectoryHandle(name);
    const file = await dir.getFileHandle(path[path.length - 1]);
    handle = await file.createSyncAccessHandle();
    // Older Safari's sync access handles answered with promises: awaiting works with both.
    await handle.truncate(0);
    await handle.write(new Uint8Array(data), { at: 0 });
    await handle.flush();
    postMessage({ id });
  } catch (e) {
    postMessage({ id, error: { name: e?.name ?? "InvalidStateError", message: String(e?.message ?? e) } });
  } finally {
    await handle?.close();
  }
};
