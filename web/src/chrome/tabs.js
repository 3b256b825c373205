// What an extension sees of the browser: one tab (the launcher's tab frame, where the
// content scripts run), one window, and the toolbar button with its popup. chrome.tabs,
// chrome.windows and chrome.browserAction / chrome.action.

import { ChromeError } from "./base.js";
import { deliverMessage } from "./runtime.js";

export const TAB_ID = 1;
export const WINDOW_ID = 1;

/** The content scripts of `manifest` for one run_at ("document_start", "document_end", "document_idle"). */
export function contentScripts(manifest, runAt, topFrame = true) {
  return (manifest.content_scripts ?? []).filter((cs) => (cs.run_at ?? "document_idle") === runAt && (topFrame || cs.all_frames));
}

/** Does match pattern `pattern` ("<all_urls>", "*://*.x.com/*") cover `url`? */
export function matchesPattern(pattern, url) {
  if (pattern === "<all_urls>") return true;
  const m = /^(\*|https?|file|ftp|wss?):\/\/([^/]*)(\/.*)$/.exec(pattern);
  if (!m) return false;
  let u;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  const scheme = u.protocol.slice(0, -1);
  if (m[1] === "*" ? !["http", "https"].includes(scheme) : m[1] !== scheme) return false;
  const h = m[2];
  if (h !== "*" && !(h.startsWith("*.") ? u.hostname === h.slice(2) || u.hostname.endsWith(h.slice(1)) : u.hostname === h.replace(/:\d+$/, ""))) return false;
  const re = new RegExp(`^${m[3].replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}$`);
  return re.test(u.pathname + u.search);
}

/**
 * Runs the content scripts in the tab frame's window `win` (and, for all_frames, in its
 * same-origin child frames): each page gets the content-script `chrome` first, then the
 * CSS and the scripts in run_at order. Every content script is injected, whatever its
 * `matches`: the tab stands for every page the extension could have met.
 */
export async function injectContentScripts(host, win, topFrame = true) {
  const doc = win.document;
  host.install(win, host.apisFor(win, "content"));
  const load = (src) =>
    new Promise((resolve) => {
      const s = doc.createElement("script");
      s.src = host.getURL(src);
      s.async = false;
      s.onload = s.onerror = () => resolve();
      (doc.head ?? doc.documentElement).append(s);
    });
  for (const runAt of ["document_start", "document_end", "document_idle"]) {
    for (const cs of contentScripts(host.manifest, runAt, topFrame)) {
      for (const css of cs.css ?? []) {
        const l = doc.createElement("link");
        l.rel = "stylesheet";
        l.href = host.getURL(css);
        (doc.head ?? doc.documentElement).append(l);
      }
      for (const js of cs.js ?? []) await load(js);
    }
  }
  if (topFrame) {
    for (const f of doc.querySelectorAll("iframe, frame")) {
      try {
        if (f.contentWindow?.document?.body) await injectContentScripts(host, f.contentWindow, false);
      } catch {
        /* another origin */
      }
    }
  }
}

/** A tabs.Tab for the tab frame. */
export function tabInfo(host) {
  const t = host.tab;
  let url = t?.url ?? "";
  let title = host.manifest.name ?? "";
  try {
    url = t.frame.contentWindow.location.href === "about:srcdoc" ? t.url : t.frame.contentWindow.location.href;
    title = t.frame.contentWindow.document.title || title;
  } catch {
    /* not loaded */
  }
  return { id: TAB_ID, index: 0, windowId: WINDOW_ID, active: true, highlighted: true, selected: true, pinned: false, audible: false, discarded: false, autoDiscardable: true, incognito: false, status: "complete", url, title, width: t?.frame?.clientWidth ?? 0, height: t?.frame?.clientHeight ?? 0, groupId: -1 };
}

export function tabsApi(host, ctx) {
  const { api } = host;
  const clone = (v) => host.cloneInto(ctx.win, v);
  const haveTab = () => !!host.tab;
  const checkTab = (id) => {
    if (!haveTab() || (id !== undefined && id !== null && id !== TAB_ID)) throw new ChromeError(`No tab with id: ${id}.`);
  };
  return {
    TAB_ID_NONE: -1,
    query: api("tabs.query", () => clone(haveTab() ? [tabInfo(host)] : [])),
    get: api("tabs.get", (id) => {
      checkTab(id);
      return clone(tabInfo(host));
    }),
    getCurrent: api("tabs.getCurrent", () => (ctx.kind === "tab" && haveTab() ? clone(tabInfo(host)) : undefined)),
    sendMessage: api("tabs.sendMessage", (tabId, message, options) => {
      checkTab(tabId);
      const frameId = options?.frameId;
      return new Promise((resolve, reject) =>
        deliverMessage({
          hub: host.hub,
          from: ctx,
          message,
          sender: { id: host.id, url: ctx.win?.location?.href, origin: host.origin },
          to: (o) => o.kind === "content" && (frameId === undefined || o.frameId === frameId),
          clone: (o, v) => host.cloneInto(o.win, v),
          respond: (v, err) => (err ? reject(new ChromeError(err)) : resolve(clone(v))),
        }),
      );
    }),
    create: api("tabs.create", (props = {}) => {
      if (!haveTab()) throw new ChromeError("There is no tab to open a page in.");
      if (props.url) host.tab.navigate(props.url);
      return clone(tabInfo(host));
    }),
    update: api("tabs.update", (id, props) => {
      if (typeof id === "object" && id !== null) [id, props] = [undefined, id];
      checkTab(id);
      if (props?.url) host.tab.navigate(props.url);
      return clone(tabInfo(host));
    }),
    reload: api("tabs.reload", (id) => {
      checkTab(typeof id === "number" ? id : undefined);
      host.tab.frame.contentWindow.location.reload();
    }),
    remove: api("tabs.remove", () => {
      throw new ChromeError("The extension's tab cannot be closed here.");
    }),
    executeScript: api("tabs.executeScript", async (id, details) => {
      if (typeof id === "object" && id !== null) [id, details] = [undefined, id];
      checkTab(id);
      const win = host.tab.frame.contentWindow;
      const doc = win.document;
      const s = doc.createElement("script");
      if (details?.file) {
        s.src = host.getURL(details.file);
        await new Promise((r) => {
          s.onload = s.onerror = r;
          doc.head.append(s);
        });
      } else {
        s.textContent = details?.code ?? "";
        doc.head.append(s);
      }
      return clone([null]);
    }),
    insertCSS: api("tabs.insertCSS", (id, details) => {
      if (typeof id === "object" && id !== null) [id, details] = [undefined, id];
      checkTab(id);
      const doc = host.tab.frame.contentWindow.document;
      const el = details?.file ? Object.assign(doc.createElement("link"), { rel: "stylesheet", href: host.getURL(details.file) }) : Object.assign(doc.createElement("style"), { textContent: details?.code ?? "" });
      doc.head.append(el);
    }),
    onUpdated: host.hub.view("tabs.onUpdated", ctx),
    onActivated: host.hub.view("tabs.onActivated", ctx),
    onCreated: host.hub.view("tabs.onCreated", ctx),
    onRemoved: host.hub.view("tabs.onRemoved", ctx),
    onHighlighted: host.hub.view("tabs.onHighlighted", ctx),
    onReplaced: host.hub.view("tabs.onReplaced", ctx),
  };
}

export function windowsApi(host, ctx) {
  const { api } = host;
  const win = () => host.cloneInto(ctx.win, { id: WINDOW_ID, focused: true, top: 0, left: 0, width: host.top.innerWidth, height: host.top.innerHeight, incognito: false, type: "normal", state: "normal", alwaysOnTop: false, tabs: host.tab ? [tabInfo(host)] : [] });
  return {
    WINDOW_ID_NONE: -1,
    WINDOW_ID_CURRENT: -2,
    get: api("windows.get", () => win()),
    getCurrent: api("windows.getCurrent", () => win()),
    getLastFocused: api("windows.getLastFocused", () => win()),
    getAll: api("windows.getAll", () => host.cloneArray(ctx.win, [win()])),
    create: api("windows.create", (data = {}) => {
      if (!host.windows) throw new ChromeError("There is no room for a window here.");
      const url = Array.isArray(data.url) ? data.url[0] : data.url;
      host.windows.create(url ?? "about:blank", { innerBounds: { width: data.width, height: data.height, left: data.left, top: data.top } });
      return win();
    }),
    onCreated: host.hub.view("windows.onCreated", ctx),
    onRemoved: host.hub.view("windows.onRemoved", ctx),
    onFocusChanged: host.hub.view("windows.onFocusChanged", ctx),
  };
}

/** chrome.browserAction / chrome.action / chrome.pageAction: the launcher's toolbar button. */
export function actionApi(host, ctx) {
  const { api } = host;
  const a = (host.action ??= { badge: "", title: "", popup: null, enabled: true, update: () => {} });
  const set = (k) => (details) => {
    a[k] = details?.[k === "badge" ? "text" : k] ?? "";
    a.update();
  };
  return {
    setBadgeText: api("browserAction.setBadgeText", set("badge")),
    getBadgeText: api("browserAction.getBadgeText", () => a.badge),
    setBadgeBackgroundColor: api("browserAction.setBadgeBackgroundColor", () => undefined),
    getBadgeBackgroundColor: api("browserAction.getBadgeBackgroundColor", () => host.cloneInto(ctx.win, [0, 0, 0, 0])),
    setTitle: api("browserAction.setTitle", set("title")),
    getTitle: api("browserAction.getTitle", () => a.title),
    setIcon: api("browserAction.setIcon", () => undefined),
    setPopup: api("browserAction.setPopup", set("popup")),
    getPopup: api("browserAction.getPopup", () => (a.popup ? host.getURL(a.popup) : "")),
    enable: api("browserAction.enable", () => ((a.enabled = true), a.update())),
    disable: api("browserAction.disable", () => ((a.enabled = false), a.update())),
    show: api("pageAction.show", () => undefined),
    hide: api("pageAction.hide", () => undefined),
    openPopup: api("action.openPopup", () => a.open?.()),
    onClicked: host.hub.view("browserAction.onClicked", ctx),
  };
}
