// The runtime every page of one app shares (window.__pexe2wasmChrome in the launcher's
// window): the app's manifest, id, messages, storage, alarms, events and pages; and
// apisFor(window, kind), the `chrome` object of one page.

import { appWindowApi } from "./windows.js";
import { alarmsApi, Alarms } from "./alarms.js";
import { apiFunction, ChromeError, cloneInto, LastError } from "./base.js";
import { EventHub } from "./events.js";
import { fileSystemApi } from "./filesystem.js";
import { failMissingFiles } from "./missing-files.js";
import { i18nApi } from "./i18n.js";
import { commandsApi, contextMenusApi, DENIED, powerApi, standIn, withStandIns } from "./misc.js";
import { notificationsApi, Notifications } from "./notifications.js";
import { extensionApi, runtimeApi } from "./runtime.js";
import { makeAreas, storageApi } from "./storage.js";
import { systemApi } from "./system.js";
import { actionApi, tabInfo, tabsApi, windowsApi } from "./tabs.js";

/** Members Chrome had that are missing here: a stand-in (recorded as missing) rather than undefined. */
const KNOWN_MEMBERS = {
  tabs: ["captureVisibleTab", "connect", "detectLanguage", "discard", "duplicate", "getZoom", "getZoomSettings", "goBack", "goForward", "group", "highlight", "move", "removeCSS", "setZoom", "setZoomSettings", "ungroup", "getAllInWindow", "getSelected", "sendRequest"],
  runtime: ["getContexts", "getPackageDirectoryEntry"],
  extension: ["sendRequest", "onRequest", "setUpdateUrlData"],
};

/**
 * Makes the runtime. `manifest` (localized), `id`, `baseURL` (the package's folder, ending
 * in /), `messages`/`predefined` (i18n), `top` (the launcher's window), `nav`, `log`,
 * `makeBackend(area)` (storage), `packageFiles()` (a promise of the package's paths).
 */
export function createHost({ manifest, id, baseURL, messages = new Map(), predefined = {}, top = globalThis, nav = globalThis.navigator, log = console, makeBackend, packageFiles = async () => [], now = () => Date.now(), notify = {} }) {
  const hub = new EventHub(log);
  const lastError = new LastError(log);
  const host = {
    manifest,
    manifestVersion: manifest.manifest_version ?? 1,
    id,
    baseURL,
    origin: new URL(baseURL).origin,
    hub,
    lastError,
    log,
    nav,
    top,
    messages,
    predefined,
    ChromeError,
    contexts: new Set(),
    background: null,
    windows: null, // the WindowManager, once the launcher has a desktop
    missing: [],
    noted: new Set(),
    power: {},
    contextMenus: new Map(),
    retainedEntries: new Map(),
    /** @type {(name: string) => void} */
    onMissing: () => {},
    api: (name, impl) => apiFunction(lastError, name, impl),
    cloneInto: (win, v) => {
      try {
        return cloneInto(win, v);
      } catch {
        return cloneInto(null, v); // a page that went
      }
    },
    cloneArray: (win, list) => {
      try {
        const a = new win.Array();
        a.push(...list);
        return a;
      } catch {
        return list;
      }
    },
    getURL: (path) => new URL(String(path ?? "").replace(/^\/+/, ""), baseURL).href,
    platformInfo: () => ({ os: /Mac/.test(nav.platform ?? "") ? "mac" : /Win/.test(nav.platform ?? "") ? "win" : /CrOS/.test(nav.userAgent ?? "") ? "cros" : "linux", arch: "x86-64", nacl_arch: "x86-64" }),
    packageFiles,
    reload: () => top.location.reload(),
    openOptionsPage: () => {
      const page = manifest.options_ui?.page ?? manifest.options_page;
      if (!page) throw new ChromeError("Could not create an options page.");
      // An app: a window; an extension: its tab, as Chrome opened options in a tab.
      if (host.windows) host.windows.create(page, { id: "pexe2wasm-options", innerBounds: { width: 640, height: 480 } });
      else if (host.tab) host.tab.navigate(page);
      else throw new ChromeError("There is no window to open the options page in.");
    },
  };
  host.tabInfo = () => (host.tab ? tabInfo(host) : undefined);
  host.storageAreas = makeAreas({ manifest, makeBackend, hub, now, cloneFor: (owner, v) => host.cloneInto(owner.win, v) });
  host.alarms = new Alarms({ fire: (alarm) => hub.dispatch("alarms.onAlarm", (owner) => [host.cloneInto(owner.win, alarm)]), now });
  host.notifications = new Notifications({ ...notify, system: /** @type {{system?: any}} */ (notify).system ?? null });

  /** Records what the app wanted that is not here; the console hears of each name once. */
  host.note = (name, why) => {
    if (host.noted.has(name)) return;
    host.noted.add(name);
    host.missing.push(name);
    log.warn(why ? `pexe2wasm: this app uses chrome.${name}, which a browser tab cannot give (${why}); its calls fail with chrome.runtime.lastError` : `pexe2wasm: this app uses chrome.${name}, which pexe2wasm does not have; its calls fail with chrome.runtime.lastError`);
    host.onMissing(name);
  };
  const standIns = new Map();
  host.standInFor = (name) => {
    if (!standIns.has(name)) {
      const top = name.split(".")[0];
      const why = DENIED[name] ?? DENIED[top];
      host.note(name, why);
      const message = (path) => (why ? `chrome.${path} is not available in a browser tab (${why}).` : `chrome.${path} is not available here (pexe2wasm does not have it).`);
      standIns.set(name, standIn(host, name, message));
    }
    return standIns.get(name);
  };

  /** Sets `win.chrome` (Chromium's own window.chrome may need defining over). */
  host.install = (win, chrome) => {
    try {
      win.chrome = chrome;
    } catch {
      /* read-only: defined below */
    }
    if (win.chrome !== chrome) Object.defineProperty(win, "chrome", { value: chrome, writable: true, configurable: true, enumerable: true });
    return chrome;
  };
  host.contextOf = (win) => {
    for (const c of host.contexts) if (c.win === win && !c.dead) return c;
    return null;
  };
  host.dropContext = (ctx) => {
    ctx.dead = true;
    host.contexts.delete(ctx);
    hub.drop(ctx);
    if (host.background === ctx) host.background = null;
  };

  /** The `chrome` of the page in `win`; `kind`: background, window, popup, content, tab. */
  host.apisFor = (win, kind) => {
    let doc = null;
    try {
      doc = win.document;
    } catch {
      /* not reachable: a page of another origin */
    }
    const old = host.contextOf(win);
    if (old && old.doc === doc && old.kind === (kind ?? old.kind)) return old.chrome;
    if (old) host.dropContext(old);
    kind ??= win.frameElement?.dataset?.pexe2wasmKind ?? "window";
    const topOfTab = win.frameElement?.dataset?.pexe2wasmKind === "tab" || win === win.top;
    const ctx = { win, doc, kind, frameId: kind !== "content" || topOfTab ? 0 : host.contexts.size + 1, viewType: { background: "background", popup: "popup", window: "app_window" }[kind] ?? "tab" };
    ctx.clone = (v) => host.cloneInto(win, v);
    host.contexts.add(ctx);
    win.addEventListener?.("pagehide", () => host.dropContext(ctx));
    if (kind === "background") {
      host.background = ctx;
      // Its scripts have run: onInstalled and onLaunched may fire (the load event may be much later).
      win.addEventListener?.("DOMContentLoaded", () => host.onBackgroundReady?.(), { once: true });
    }
    // The app's own pages were chrome-extension:// pages; content scripts ran in web pages.
    if (kind !== "content" && kind !== "tab") {
      try {
        failMissingFiles(win, baseURL);
      } catch (e) {
        log.warn(`pexe2wasm: a missing package file will look like a 404 here, not as in Chrome (${e.message})`);
      }
    }
    const stubs = (ns) => (p) => /^on[A-Z]/.test(p) || (KNOWN_MEMBERS[ns] ?? []).includes(p);
    const ns = (name, obj) => withStandIns(obj, name, host, stubs(name));
    const chrome = {};
    chrome.runtime = ns("runtime", runtimeApi(host, ctx));
    chrome.extension = ns("extension", extensionApi(host, ctx));
    chrome.storage = storageApi(host, ctx);
    chrome.i18n = i18nApi(host);
    if (kind !== "content") {
      chrome.app = {
        runtime: { onLaunched: hub.view("app.runtime.onLaunched", ctx), onRestarted: hub.view("app.runtime.onRestarted", ctx), onEmbedRequested: hub.view("app.runtime.onEmbedRequested", ctx) },
        window: ns("app.window", appWindowApi(host, ctx)),
        getDetails: () => host.cloneInto(win, { ...manifest, id }),
        getIsInstalled: () => true,
        isInstalled: true,
        installState: (cb) => cb?.("installed"),
        runningState: () => "running",
      };
      chrome.system = systemApi(host, ctx);
      chrome.fileSystem = ns("fileSystem", fileSystemApi(host, ctx));
      chrome.notifications = notificationsApi(host, ctx);
      chrome.alarms = alarmsApi(host, ctx);
      chrome.power = powerApi(host, ctx);
      chrome.contextMenus = contextMenusApi(host, ctx);
      chrome.commands = commandsApi(host, ctx);
      chrome.tabs = ns("tabs", tabsApi(host, ctx));
      chrome.windows = ns("windows", windowsApi(host, ctx));
      chrome.browserAction = ns("browserAction", actionApi(host, ctx));
      chrome.action = chrome.browserAction;
      chrome.pageAction = chrome.browserAction;
      chrome.permissions = {
        contains: host.api("permissions.contains", () => true),
        request: host.api("permissions.request", () => true),
        remove: host.api("permissions.remove", () => false),
        getAll: host.api("permissions.getAll", () => host.cloneInto(win, { permissions: (manifest.permissions ?? []).filter((p) => typeof p === "string"), origins: [] })),
        onAdded: hub.view("permissions.onAdded", ctx),
        onRemoved: hub.view("permissions.onRemoved", ctx),
      };
      chrome.idle = {
        queryState: host.api("idle.queryState", () => "active"),
        setDetectionInterval: () => {},
        onStateChanged: hub.view("idle.onStateChanged", ctx),
      };
      if (kind === "window" && host.windows && win.frameElement) {
        const rec = host.windows.byFrame(win.frameElement);
        if (rec) host.windows.pageStarted(rec);
      }
    }
    ctx.chrome = withStandIns(chrome, "", host, () => true);
    return ctx.chrome;
  };
  return host;
}
