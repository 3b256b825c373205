// The options page: the sites where the extension is off and the URL map
// (pexe2wasmConfig.urlMap's meaning), kept in storage.local as
// {disabledSites: [host…], urlMap: {FROM: TO}} (docs/EXTENSION.md).
"use strict";
// (Named apart from background.js's: the type check sees the scripts in one scope.)
const storageApi = globalThis.browser ?? globalThis.chrome;
const $ = (id) => /** @type {HTMLTextAreaElement} */ (document.getElementById(id));

/** The URL map's lines, or the first line that is not FROM=TO (its error). */
function parseMap(text) {
  const map = {};
  const lines = text.split("\n").map((l) => l.trim()).filter(Boolean);
  for (const [i, line] of lines.entries()) {
    const at = line.indexOf("=");
    if (at <= 0 || at === line.length - 1) return { error: `line ${i + 1}: not FROM=TO: ${line}` };
    map[line.slice(0, at).trim()] = line.slice(at + 1).trim();
  }
  return { map };
}

async function load() {
  const s = await storageApi.storage.local.get({ disabledSites: [], urlMap: {} });
  $("disabled").value = (s.disabledSites ?? []).join("\n");
  $("urlmap").value = Object.entries(s.urlMap ?? {}).map(([f, t]) => `${f}=${t}`).join("\n");
}

document.getElementById("save").addEventListener("click", async () => {
  const status = document.getElementById("status");
  // Firefox's player links here, so pages may open this page; none may frame it and
  // have a user's click change the settings unseen.
  if (window.top !== window) {
    status.textContent = "open the options in a tab of their own to change them";
    return;
  }
  const { map, error } = parseMap($("urlmap").value);
  if (error) {
    status.textContent = error;
    return;
  }
  const disabledSites = $("disabled").value.split("\n").map((l) => l.trim().toLowerCase()).filter(Boolean);
  await storageApi.storage.local.set({ disabledSites, urlMap: map });
  status.textContent = "saved";
});
// The form is filled from storage before it is used (people and tests wait for this mark).
load().then(() => {
  document.body.dataset.loaded = "true";
});
