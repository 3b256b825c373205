// The launcher (pexe2wasm-launch.html at the package's root loads it): does what Chrome did
// when the user launched the app or loaded the extension. Reads manifest.json, makes the
// shared runtime (window.__pexe2wasmChrome), runs the background in a hidden frame, fires
// chrome.app.runtime.onLaunched, and shows the app's windows on a desktop in the tab (an
// extension: its tab with the content scripts, and its popup beside it). A status line
// says what the app is and what it wanted that is not here; a failure panel says why an
// app cannot start.

import { appId, digestSHA256, parseLenientJSON } from "./base.js";
import { createHost } from "./host.js";
import { getMessage, loadCatalogs, localeChain, localizeManifest, mergeCatalogs, predefinedMessages, uiLanguage } from "./i18n.js";
import { indexedDBBackend, localStorageBackend } from "./storage.js";
import { injectContentScripts } from "./tabs.js";
import { WindowManager } from "./windows.js";

const CHROME_DIR = new URL("./", import.meta.url); // …/pexe2wasm/chrome/
const HOST_DIR = new URL("../", CHROME_DIR); // …/pexe2wasm/

/** An app that cannot start, and why (the failure panel shows it). */
export class LaunchFailure extends Error {
  constructor(title, detail) {
    super(`${title}: ${detail}`);
    this.title = title;
    this.detail = detail;
  }
}

/** What the manifest describes: "app", "legacy-app", "hosted-app", "extension" or "theme". */
export function packageKind(m) {
  if (m.app?.background) return "app";
  if (m.app?.launch?.local_path) return "legacy-app";
  if (m.app?.launch?.web_url || m.app?.urls) return "hosted-app";
  if (m.app) return "app";
  if (m.theme) return "theme";
  return "extension";
}

/** ELF's machine number of x86-64. */
const EM_X86_64 = 62;

/** The ELF machine (`e_machine`) of the file at `url`, or null when it is not ELF or unreadable. */
async function elfMachine(url, fetchImpl) {
  try {
    const r = await fetchImpl(url, { headers: { Range: "bytes=0-63" } });
    if (!r.ok) return null;
    const b = new Uint8Array(await (await r.blob()).slice(0, 20).arrayBuffer());
    if (b.length < 20 || b[0] !== 0x7f || b[1] !== 0x45 || b[2] !== 0x4c || b[3] !== 0x46) return null;
    return b[18] | (b[19] << 8);
  } catch {
    return null;
  }
}

/**
 * Reads the package at `baseURL`: {manifest (localized), kind, id, messages, predefined,
 * files}. Throws a LaunchFailure naming the cause.
 */
export async function loadPackage(baseURL, { fetchImpl = fetch, nav = navigator, digest = digestSHA256 } = {}) {
  const get = async (path) => {
    const r = await fetchImpl(new URL(path, baseURL).href);
    if (!r.ok) return null;
    return parseLenientJSON(await r.text());
  };
  let raw;
  let res;
  try {
    res = await fetchImpl(new URL("manifest.json", baseURL).href);
  } catch (e) {
    throw new LaunchFailure("manifest.json could not be read", String(e?.message ?? e));
  }
  if (!res.ok) throw new LaunchFailure("No manifest.json", `${new URL("manifest.json", baseURL).href} answered HTTP ${res.status}: this folder is not a Chrome app or extension`);
  try {
    raw = parseLenientJSON(await res.text());
  } catch (e) {
    throw new LaunchFailure("manifest.json is not valid JSON", e.message);
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new LaunchFailure("manifest.json is not an object", "Chrome wanted {\"name\": …, \"version\": …, …}");
  const files = await get("pexe2wasm-files.json").catch(() => null);
  const list = Array.isArray(files) ? files.map(String) : null;
  const id = await appId(raw, baseURL, digest);
  const lang = uiLanguage(nav);
  const uiLocale = lang.replace(/-/g, "_");
  const chain = localeChain(lang, raw.default_locale);
  const catalogs = raw.default_locale ? await loadCatalogs(chain, get) : {};
  const messages = mergeCatalogs(chain, catalogs);
  const predefined = predefinedMessages(id, uiLocale);
  const manifest = localizeManifest(raw, (n) => getMessage(messages, n, [], predefined));
  const kind = packageKind(manifest);
  if (kind === "theme") throw new LaunchFailure("A theme", `${manifest.name ?? "this package"} only changes Chrome's colours: there is nothing to run`);
  if (kind === "hosted-app") {
    throw new LaunchFailure("A hosted app", `its pages were on the web (${manifest.app.launch?.web_url ?? "its urls"}), not in the package`);
  }
  const nexes = list?.filter((p) => /\.nexe$/i.test(p)) ?? [];
  // An x86-64 nexe runs as a pexe does: translated in the browser, or its module beside it
  // (`pexe2wasm web` writes one; the module is the site's, not in the package's list).
  // Nexes of other processors only cannot run.
  const runnable = async () => {
    const checks = nexes.map(async (p) => {
      const wasm = await fetchImpl(new URL(p.replace(/\.nexe$/i, ".wasm"), baseURL).href, { method: "HEAD" }).catch(() => null);
      return wasm?.ok || (await elfMachine(new URL(p, baseURL).href, fetchImpl)) === EM_X86_64;
    });
    return (await Promise.all(checks)).some(Boolean);
  };
  if (list && nexes.length && !list.some((p) => /\.pexe$/i.test(p)) && !(await runnable())) {
    throw new LaunchFailure(
      "Only native NaCl modules for other processors",
      `this package ships ${nexes.length} .nexe file(s) (${nexes.slice(0, 3).join(", ")}${nexes.length > 3 ? ", …" : ""}), none for x86-64, and no .pexe: those are machine code for one processor, and pexe2wasm translates portable (.pexe) modules and x86-64 nexes only`,
    );
  }
  return { manifest, raw, kind, id, messages, predefined, files: list };
}

const STYLE = `
html, body { margin: 0; height: 100%; overflow: hidden; font: 13px system-ui, sans-serif; background: #e8eaed; }
#pexe2wasm-desktop { position: absolute; inset: 0 0 24px 0; overflow: hidden; }
#pexe2wasm-desktop.pexe2wasm-dragging iframe { pointer-events: none; }
.pexe2wasm-window { position: absolute; box-sizing: border-box; background: #fff; display: flex; flex-direction: column; box-shadow: 0 2px 12px rgba(0,0,0,.35); }
.pexe2wasm-window.pexe2wasm-filled { box-shadow: none; }
.pexe2wasm-titlebar { height: 28px; flex: none; display: flex; align-items: center; background: #dadce0; cursor: move; user-select: none; padding-left: 8px; }
.pexe2wasm-focused .pexe2wasm-titlebar { background: #c2d3f0; }
.pexe2wasm-title { flex: 1; overflow: hidden; white-space: nowrap; text-overflow: ellipsis; }
.pexe2wasm-titlebar button { border: 0; background: none; width: 32px; height: 28px; font-size: 15px; cursor: pointer; }
.pexe2wasm-titlebar button:hover { background: rgba(0,0,0,.12); }
.pexe2wasm-window-content { border: 0; width: 100%; flex: 1; display: block; background: #fff; }
.pexe2wasm-grip { position: absolute; right: 0; bottom: 0; width: 14px; height: 14px; cursor: nwse-resize; }
.pexe2wasm-attention { outline: 3px solid #f29900; }
#pexe2wasm-status { position: absolute; left: 0; right: 0; bottom: 0; height: 24px; display: flex; align-items: center; gap: 8px; padding: 0 8px; background: #f1f3f4; border-top: 1px solid #dadce0; white-space: nowrap; overflow: hidden; color: #3c4043; }
#pexe2wasm-status img { width: 16px; height: 16px; }
#pexe2wasm-status .pexe2wasm-missing { color: #a50e0e; overflow: hidden; text-overflow: ellipsis; }
#pexe2wasm-status button { font: inherit; }
#pexe2wasm-failure { position: absolute; inset: 0; display: flex; align-items: center; justify-content: center; background: #fff; }
#pexe2wasm-failure > div { max-width: 40em; padding: 24px; border: 2px solid #d93025; border-radius: 8px; }
#pexe2wasm-failure h1 { font-size: 18px; color: #d93025; margin: 0 0 8px; }
#pexe2wasm-toasts { position: absolute; right: 12px; bottom: 36px; display: flex; flex-direction: column; gap: 8px; z-index: 1000000; }
.pexe2wasm-toast { background: #fff; border-radius: 6px; box-shadow: 0 2px 10px rgba(0,0,0,.3); padding: 10px 14px; max-width: 320px; }
.pexe2wasm-ext { position: absolute; inset: 0; display: flex; gap: 8px; padding: 8px; box-sizing: border-box; }
.pexe2wasm-tab { flex: 1; display: flex; flex-direction: column; background: #fff; box-shadow: 0 1px 6px rgba(0,0,0,.25); }
.pexe2wasm-address { padding: 4px 8px; background: #f1f3f4; color: #5f6368; border-bottom: 1px solid #dadce0; }
.pexe2wasm-tab iframe { flex: 1; border: 0; }
.pexe2wasm-action { display: flex; flex-direction: column; align-items: flex-end; gap: 4px; }
.pexe2wasm-action > button { display: flex; align-items: center; gap: 4px; }
.pexe2wasm-action iframe { border: 0; background: #fff; box-shadow: 0 2px 10px rgba(0,0,0,.3); width: 320px; height: 240px; }
`;

/** The launcher's elements (made when the page does not have them). */
function launcherUI(doc) {
  const el = (id, tag = "div") => doc.getElementById(id) ?? doc.body.appendChild(Object.assign(doc.createElement(tag), { id }));
  if (!doc.getElementById("pexe2wasm-launcher-style")) {
    const s = doc.createElement("style");
    s.id = "pexe2wasm-launcher-style";
    s.textContent = STYLE;
    doc.head.append(s);
  }
  const desktop = el("pexe2wasm-desktop");
  const status = el("pexe2wasm-status");
  const toasts = el("pexe2wasm-toasts");
  return { desktop, status, toasts };
}

/** Shows the failure panel. */
export function showFailure(doc, failure) {
  const ui = launcherUI(doc);
  const panel = doc.getElementById("pexe2wasm-failure") ?? doc.body.appendChild(Object.assign(doc.createElement("div"), { id: "pexe2wasm-failure" }));
  panel.replaceChildren();
  const box = doc.createElement("div");
  const h = doc.createElement("h1");
  h.textContent = failure.title ?? "This app cannot start";
  const p = doc.createElement("p");
  p.textContent = failure.detail ?? String(failure.message ?? failure);
  box.append(h, p);
  panel.append(box);
  ui.status.textContent = `pexe2wasm: ${h.textContent}`;
  doc.documentElement.dataset.pexe2wasmState = "failed";
}

/** The manifest's icon nearest `size` pixels, as a URL, or null. */
export function iconURL(manifest, baseURL, size = 16) {
  const icons = manifest.icons ?? {};
  const sizes = Object.keys(icons).map(Number).filter((n) => n > 0).sort((a, b) => a - b);
  if (!sizes.length) return null;
  const pick = sizes.find((s) => s >= size) ?? sizes[sizes.length - 1];
  return new URL(icons[pick], baseURL).href;
}

function statusLine(host, ui, doc) {
  const { status } = ui;
  status.replaceChildren();
  const icon = iconURL(host.manifest, host.baseURL, 16);
  if (icon) status.append(Object.assign(doc.createElement("img"), { src: icon, alt: "" }));
  const name = doc.createElement("b");
  name.textContent = host.manifest.name ?? "(no name)";
  const state = doc.createElement("span");
  state.className = "pexe2wasm-state";
  const minimized = doc.createElement("span");
  const missing = doc.createElement("span");
  missing.className = "pexe2wasm-missing";
  status.append(name, state, minimized, missing);
  const relaunch = doc.createElement("button");
  relaunch.type = "button";
  relaunch.hidden = true;
  relaunch.onclick = () => {
    relaunch.hidden = true;
    host.relaunch?.();
  };
  status.append(relaunch);
  const update = () => {
    // Every window closed: Chrome's app had ended; here it can be launched again.
    relaunch.hidden = !(host.windows && host.relaunch && host.windows.windows.length === 0 && host.launchedOnce);
    relaunch.textContent = relaunch.hidden ? "" : "Launch again";
    missing.textContent = host.missing.length ? ` · wanted but missing here: ${host.missing.map((m) => `chrome.${m}`).join(", ")}` : "";
    minimized.replaceChildren();
    for (const w of host.windows?.windows ?? []) {
      if (w.state !== "minimized") continue;
      const b = doc.createElement("button");
      b.type = "button";
      b.textContent = `restore ${w.id}`;
      b.onclick = () => w.appWindow.restore();
      minimized.append(b);
    }
  };
  host.onMissing = update;
  host.onWindowsChanged = update;
  host.setState = (text) => (state.textContent = text);
  update();
}

function toast(ui, doc, host) {
  const shown = new Map();
  return {
    show: (id, o) => {
      let t = shown.get(id);
      if (!t) {
        t = doc.createElement("div");
        t.className = "pexe2wasm-toast";
        t.addEventListener("click", () => host.hub.dispatch("notifications.onClicked", [id]));
        ui.toasts.append(t);
        shown.set(id, t);
        setTimeout(() => {
          if (shown.get(id) === t) {
            t.remove();
            shown.delete(id);
            host.hub.dispatch("notifications.onClosed", [id, false]);
          }
        }, 8000);
      }
      t.replaceChildren();
      const b = doc.createElement("b");
      b.textContent = o.title ?? "";
      const p = doc.createElement("div");
      p.textContent = o.message ?? "";
      t.append(b, p);
      (o.buttons ?? []).forEach((btn, i) => {
        const e = doc.createElement("button");
        e.type = "button";
        e.textContent = btn.title ?? "";
        e.onclick = (ev) => {
          ev.stopPropagation();
          host.hub.dispatch("notifications.onButtonClicked", [id, i]);
        };
        t.append(e);
      });
    },
    hide: (id) => {
      shown.get(id)?.remove();
      shown.delete(id);
    },
  };
}

/** The drop-in script (pexe2wasm.js, beside the host's folder), as every page of the site loads it. */
const DROP_IN = new URL("../pexe2wasm.js", HOST_DIR).href;

/** The host's scripts for a page we write ourselves (the background of `scripts`), as the site's pages have them. */
function hostScripts() {
  return [`<script src="${DROP_IN}"></script>`, `<script src="${new URL("apis.js", CHROME_DIR).href}" data-package=""></script>`].join("\n");
}

const escapeAttr = (s) => String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

/** Runs the background (scripts, page or service worker) in a hidden frame; resolves once it has loaded. */
export function startBackground(host, doc) {
  const m = host.manifest;
  const bg = m.app?.background ?? m.background;
  if (!bg) return Promise.resolve(false);
  const f = doc.createElement("iframe");
  f.id = "pexe2wasm-background";
  f.dataset.pexe2wasmKind = "background";
  f.setAttribute("aria-hidden", "true");
  f.style.cssText = "position:absolute;width:0;height:0;border:0;visibility:hidden";
  const loaded = new Promise((resolve) => {
    f.addEventListener("load", () => resolve(true), { once: true });
    host.onBackgroundReady = () => resolve(true);
  });
  if (bg.page) {
    f.src = host.getURL(bg.page);
  } else {
    const scripts = bg.scripts ?? (bg.service_worker ? [bg.service_worker] : []);
    const type = bg.service_worker && bg.type === "module" ? ' type="module"' : "";
    f.srcdoc = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeAttr(m.name ?? "")} (background)</title>\n${hostScripts()}\n</head><body>\n${scripts.map((s) => `<script${type} src="${escapeAttr(host.getURL(s))}"></script>`).join("\n")}\n</body></html>`;
  }
  doc.body.append(f);
  return loaded.then(() => {
    // A background page without apis.js still gets its chrome (too late for its first scripts).
    try {
      if (!f.contentWindow.chrome?.runtime?.id) host.install(f.contentWindow, host.apisFor(f.contentWindow, "background"));
    } catch {
      /* another origin */
    }
    return true;
  });
}

/** runtime.onInstalled the first time a version runs in this browser, runtime.onStartup after. */
function installEvents(host, storage) {
  const key = `pexe2wasm-chrome-installed:${host.id}`;
  let prev = null;
  try {
    prev = storage.getItem(key);
    storage.setItem(key, host.manifest.version ?? "");
  } catch {
    /* no localStorage: every run is a first install */
  }
  if (prev === null) host.hub.dispatch("runtime.onInstalled", (o) => [o.clone({ reason: "install" })]);
  else if (prev !== (host.manifest.version ?? "")) host.hub.dispatch("runtime.onInstalled", (o) => [o.clone({ reason: "update", previousVersion: prev })]);
  else host.hub.dispatch("runtime.onStartup", []);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The extension's tab (content scripts) and its browser action's popup, side by side. */
function extensionView(host, ui, doc, params) {
  const wrap = doc.createElement("div");
  wrap.className = "pexe2wasm-ext";
  const tab = doc.createElement("div");
  tab.className = "pexe2wasm-tab";
  const address = doc.createElement("div");
  address.className = "pexe2wasm-address";
  const frame = doc.createElement("iframe");
  frame.className = "pexe2wasm-tab-frame";
  frame.dataset.pexe2wasmKind = "tab";
  tab.append(address, frame);
  wrap.append(tab);
  const blankURL = host.getURL("pexe2wasm-tab.html");
  host.tab = {
    frame,
    url: blankURL,
    navigate(url) {
      const u = new URL(url, host.baseURL);
      if (u.origin !== host.origin) throw new host.ChromeError(`Only this site's pages open in the tab here (${u.href} is not one)`);
      host.tab.url = u.href;
      address.textContent = u.href;
      frame.removeAttribute("srcdoc");
      frame.src = u.href;
    },
  };
  frame.addEventListener("load", () => {
    try {
      const href = frame.contentWindow.location.href;
      if (href !== "about:srcdoc" && href !== "about:blank") {
        host.tab.url = href;
        address.textContent = href;
      }
      // Content scripts ran in web pages, never in the extension's own pages (those have
      // run apis.js and have their chrome already).
      const ownPage = host.contextOf(frame.contentWindow)?.kind === "tab";
      if (href !== "about:blank" && !ownPage) {
        injectContentScripts(host, frame.contentWindow).then(() => host.hub.dispatch("tabs.onUpdated", (o) => [1, o.clone({ status: "complete" }), o.clone({ id: 1, url: host.tab.url, status: "complete" })]));
      }
    } catch (e) {
      host.log.warn(`pexe2wasm: the content scripts could not run in ${host.tab.url}: ${e.message}`);
    }
  });
  const start = params.get("tab");
  if (start) host.tab.navigate(start);
  else {
    address.textContent = `${blankURL} (a blank page: the content scripts run here)`;
    // The extension's own pages, as links into this tab (the content scripts run there too).
    const m = host.manifest;
    const pages = [
      ["options", m.options_ui?.page ?? m.options_page],
      ["popup", (m.browser_action ?? m.action ?? m.page_action)?.default_popup],
      ...Object.entries(m.chrome_url_overrides ?? {}),
    ].filter(([, p]) => typeof p === "string" && p);
    const links = pages.map(([what, p]) => `<li><a href="${escapeAttr(host.getURL(p))}">${escapeAttr(p)}</a> (${escapeAttr(what)})</li>`).join("");
    // The tab stands for the web pages the extension met, which pexe2wasm revives: a NaCl
    // embed a content script inserts there runs (the host's scripts, as on any page).
    const hostScripts = `<script src="${escapeAttr(DROP_IN)}"></script>`;
    frame.srcdoc = `<!doctype html><html><head><meta charset="utf-8"><title>Tab</title>${hostScripts}</head><body style="font: 13px system-ui, sans-serif; color: #5f6368">${links ? `<p>This extension's pages:</p><ul>${links}</ul>` : ""}</body></html>`;
  }
  const m = host.manifest;
  const action = m.browser_action ?? m.action ?? m.page_action;
  const a = (host.action ??= { badge: "", title: "", popup: null, enabled: true, update: () => {} });
  if (action) {
    a.title ||= action.default_title ?? m.name ?? "";
    a.popup ??= action.default_popup ?? null;
    const side = doc.createElement("div");
    side.className = "pexe2wasm-action";
    const button = doc.createElement("button");
    button.type = "button";
    const icon = typeof action.default_icon === "string" ? action.default_icon : action.default_icon ? Object.values(action.default_icon)[0] : null;
    const popup = doc.createElement("iframe");
    popup.className = "pexe2wasm-popup";
    popup.dataset.pexe2wasmKind = "popup";
    a.update = () => {
      button.replaceChildren();
      const src = icon ? host.getURL(icon) : iconURL(m, host.baseURL, 16);
      if (src) button.append(Object.assign(doc.createElement("img"), { src, width: 16, height: 16, alt: "" }));
      button.append(a.title + (a.badge ? ` [${a.badge}]` : ""));
      button.disabled = !a.enabled;
    };
    a.open = () => {
      if (!a.popup) return host.hub.dispatch("browserAction.onClicked", (o) => [o.clone({ id: 1, url: host.tab.url })]);
      popup.hidden = false;
      popup.src = host.getURL(a.popup);
    };
    button.onclick = () => (popup.hidden || !a.popup ? a.open() : ((popup.hidden = true), popup.removeAttribute("src")));
    popup.addEventListener("load", () => {
      // Sized to its page, as Chrome sized popups (at most 800×600).
      try {
        const d = popup.contentDocument.documentElement;
        popup.style.width = `${Math.min(800, Math.max(25, d.scrollWidth))}px`;
        popup.style.height = `${Math.min(600, Math.max(25, d.scrollHeight))}px`;
      } catch {
        /* another origin */
      }
    });
    a.update();
    side.append(button, popup);
    wrap.append(side);
    if (a.popup) a.open();
    else popup.hidden = true;
  }
  ui.desktop.append(wrap);
}

/** The app's nacl_modules handlers: [{type, path}] (MIME type in lower case). */
export function documentHandlers(manifest) {
  const list = Array.isArray(manifest.nacl_modules) ? manifest.nacl_modules : [];
  return list.filter((h) => typeof h?.mime_type === "string" && h.mime_type && typeof h?.path === "string").map((h) => ({ type: h.mime_type.toLowerCase(), path: h.path }));
}

/**
 * Opens the document at `url` with the app's nacl_modules handler of `type`, as Chrome did
 * when a tab navigated to a document of that type: a window whose page is the handler's
 * module full-frame, an embed of the document (embed.js runs the handler, and the module
 * gets HandleDocumentLoad). `name` titles the window.
 */
export function openDocument(host, url, type, name) {
  const t = String(type).toLowerCase();
  if (!documentHandlers(host.manifest).some((h) => h.type === t)) {
    host.setState?.(`no nacl_modules handler of this app takes ${t || "a document without a type"}`);
    return false;
  }
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeAttr(name)}</title>
<style>html,body{margin:0;height:100%;overflow:hidden}embed{display:block;width:100%;height:100%}</style>
${hostScripts()}
</head><body><embed name="plugin" type="${escapeAttr(t)}" src="${escapeAttr(url)}"></body></html>`;
  const page = URL.createObjectURL(new Blob([html], { type: "text/html" }));
  host.windows.create(page, { id: `document-${host.windows.windows.length + 1}`, innerBounds: { width: 800, height: 600 } });
  return true;
}

/**
 * The launcher's way to open documents with the app's handlers: `?open=PATH` (relative to
 * the package; `&type=` gives the MIME type, else the server's Content-Type, else the one
 * handler) and a file picker in the status line.
 */
async function documentOpening(host, ui, doc, params) {
  const handlers = documentHandlers(host.manifest);
  if (!handlers.length) return;
  const pick = doc.createElement("input");
  pick.type = "file";
  pick.hidden = true;
  pick.accept = handlers.map((h) => h.type).join(",");
  const button = doc.createElement("button");
  button.type = "button";
  button.textContent = "Open a document\u2026";
  button.title = `Open a file with the app's handler of ${handlers.map((h) => h.type).join(", ")}`;
  button.onclick = () => pick.click();
  pick.onchange = () => {
    const file = pick.files?.[0];
    if (!file) return;
    const type = handlers.some((h) => h.type === file.type.toLowerCase()) ? file.type : handlers[0].type;
    openDocument(host, URL.createObjectURL(file), type, file.name);
    pick.value = "";
  };
  ui.status.append(button, pick);
  const open = params.get("open");
  if (!open) return;
  let url;
  try {
    url = new URL(open, host.baseURL);
  } catch {
    host.setState(`?open=${open} is not a URL`);
    return;
  }
  let type = params.get("type");
  if (!type) {
    const r = await fetch(url.href, { method: "HEAD" }).catch(() => null);
    const served = (r?.headers.get("content-type") ?? "").split(";")[0].trim().toLowerCase();
    type = handlers.some((h) => h.type === served) ? served : handlers[0].type;
  }
  openDocument(host, url.href, type, decodeURIComponent(url.pathname.split("/").pop() || url.href));
}

/**
 * Launches the package whose folder is `baseURL` in the document `doc` (the launcher).
 * Resolves with the runtime (also window.__pexe2wasmChrome), or null after a failure.
 */
export async function launch({ doc = document, win = window, baseURL = new URL("./", doc.baseURI).href, params = new URLSearchParams(win.location.search) } = {}) {
  const ui = launcherUI(doc);
  ui.status.textContent = "pexe2wasm: reading manifest.json…";
  let pkg;
  try {
    pkg = await loadPackage(baseURL);
  } catch (e) {
    showFailure(doc, e instanceof LaunchFailure ? e : new LaunchFailure("This app cannot start", String(e?.message ?? e)));
    return null;
  }
  const { manifest, id, kind } = pkg;
  const idb = win.indexedDB;
  const host = createHost({
    manifest,
    id,
    baseURL,
    messages: pkg.messages,
    predefined: pkg.predefined,
    top: win,
    nav: win.navigator,
    makeBackend: (area) => (idb ? indexedDBBackend(idb, `pexe2wasm-chrome-${id}`, area) : localStorageBackend(win.localStorage, `pexe2wasm-chrome-storage:${id}:${area}`)),
    packageFiles: async () => pkg.files ?? [],
    notify: { ...toast(ui, doc, { hub: { dispatch: (...a) => host.hub.dispatch(...a) } }), system: win.Notification ?? null },
  });
  host.kind = kind;
  win.__pexe2wasmChrome = host;
  doc.title = manifest.name ?? doc.title;
  const icon = iconURL(manifest, baseURL, 32);
  if (icon) doc.head.append(Object.assign(doc.createElement("link"), { rel: "icon", href: icon }));
  statusLine(host, ui, doc);
  doc.documentElement.dataset.pexe2wasmState = "starting";
  if (kind === "extension") {
    host.setState("extension");
    // The background first: in Chrome it ran from the install on, long before a popup opened.
    if (await startBackground(host, doc)) installEvents(host, win.localStorage);
    extensionView(host, ui, doc, params);
    doc.documentElement.dataset.pexe2wasmState = "running";
    return host;
  }
  const boundsKey = (wid) => `pexe2wasm-chrome-window:${id}:${wid}`;
  host.windows = new WindowManager(host, ui.desktop, {
    get: (wid) => {
      try {
        return JSON.parse(win.localStorage.getItem(boundsKey(wid)) ?? "null");
      } catch {
        return null;
      }
    },
    set: (wid, r) => {
      try {
        win.localStorage.setItem(boundsKey(wid), JSON.stringify(r));
      } catch {
        /* not kept */
      }
    },
  });
  if (kind === "legacy-app") {
    host.setState("packaged app");
    host.windows.create(manifest.app.launch.local_path, { id: "main" });
    await documentOpening(host, ui, doc, params);
    doc.documentElement.dataset.pexe2wasmState = "running";
    return host;
  }
  host.setState("starting…");
  await startBackground(host, doc);
  installEvents(host, win.localStorage);
  const source = params.get("source") ?? "app_launcher";
  host.relaunch = () => host.hub.dispatch("app.runtime.onLaunched", (o) => [o.clone({ isKioskSession: false, isPublicSession: false, source })]);
  // ?open=PATH opens a document with the app's handler, as a tab navigating to it did in
  // Chrome: the background runs, but the app is not launched.
  const opening = params.has("open") && documentHandlers(manifest).length > 0;
  // An app may add its onLaunched listener a little after its scripts ran.
  const launched = host.hub.get("app.runtime.onLaunched");
  if (!opening) {
    for (let t = 0; t < 60 && !launched.count(); t++) await sleep(50);
    host.relaunch();
  }
  host.launchedOnce = true;
  host.setState("");
  await documentOpening(host, ui, doc, params);
  doc.documentElement.dataset.pexe2wasmState = "running";
  setTimeout(() => {
    if (!host.windows.windows.length) host.setState(launched.count() ? "the app opened no window" : "the app's background never listened for chrome.app.runtime.onLaunched");
  }, 10000);
  return host;
}

/**
 * For a page of an extension opened by itself (no launcher above it): a runtime in that
 * page, without background or windows; its `chrome`.
 */
export async function standalone(win, baseURL) {
  const pkg = await loadPackage(baseURL);
  const host = createHost({
    manifest: pkg.manifest,
    id: pkg.id,
    baseURL,
    messages: pkg.messages,
    predefined: pkg.predefined,
    top: win,
    nav: win.navigator,
    makeBackend: (area) => (win.indexedDB ? indexedDBBackend(win.indexedDB, `pexe2wasm-chrome-${pkg.id}`, area) : localStorageBackend(win.localStorage, `pexe2wasm-chrome-storage:${pkg.id}:${area}`)),
    packageFiles: async () => pkg.files ?? [],
  });
  win.__pexe2wasmChrome = host;
  return host.apisFor(win, "window");
}

// Loaded by pexe2wasm-launch.html: launch (a page importing it for standalone() does not).
if (typeof document !== "undefined" && document.currentScript === null && !globalThis.__pexe2wasmChrome && document.querySelector('script[type="module"][src$="chrome/launcher.js"]')) {
  const go = () => launch();
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", go, { once: true });
  else go();
}
