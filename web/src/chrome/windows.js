// chrome.app.window: each window is an in-page frame (a title bar unless frame:'none', and
// an iframe of the page) on the launcher's desktop. The first window fills the desktop
// unless it asks for less room than the desktop has; the others float above it at their
// bounds, cascaded, and can be dragged, resized, minimized and closed.

import { ChromeError } from "./base.js";

export const TITLE_HEIGHT = 28;
const DEFAULT_INNER = { width: 512, height: 384 };
const CASCADE = 28;

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? Math.round(v) : undefined);

/** The constraints and asked-for bounds of chrome.app.window.create's options. */
export function readOptions(opts = {}) {
  const frameless = opts.frame === "none" || opts.frame?.type === "none";
  const th = frameless ? 0 : TITLE_HEIGHT;
  const inner = { ...(opts.bounds ?? {}), ...(opts.innerBounds ?? {}) };
  for (const k of ["width", "height", "left", "top", "minWidth", "minHeight", "maxWidth", "maxHeight"]) {
    if (inner[k] === undefined && opts[k] !== undefined) inner[k] = opts[k];
  }
  const outer = opts.outerBounds ?? {};
  // Everything as outer figures (the frame's): inner ones grow by the title bar.
  const o = (ov, iv, add) => num(ov) ?? (num(iv) === undefined ? undefined : num(iv) + add);
  return {
    frameless,
    th,
    width: o(outer.width, inner.width, 0),
    height: o(outer.height, inner.height, th),
    left: o(outer.left, inner.left, 0),
    top: o(outer.top, inner.top, -th),
    minWidth: o(outer.minWidth, inner.minWidth, 0),
    minHeight: o(outer.minHeight, inner.minHeight, th),
    maxWidth: o(outer.maxWidth, inner.maxWidth, 0),
    maxHeight: o(outer.maxHeight, inner.maxHeight, th),
    state: opts.state ?? "normal",
    resizable: opts.resizable !== false,
  };
}

/**
 * The options of a window whose id was open before at `saved` (outer bounds): Chrome used the
 * remembered bounds instead of the ones asked for.
 */
export function withRemembered(opts, saved) {
  if (!saved || typeof saved.width !== "number" || typeof saved.height !== "number") return opts;
  const { bounds: _b, innerBounds, outerBounds: _o, width: _w, height: _h, left: _l, top: _t, ...rest } = opts;
  const limits = {};
  for (const k of ["minWidth", "minHeight", "maxWidth", "maxHeight"]) {
    const inner = innerBounds?.[k] ?? opts.bounds?.[k] ?? opts[k];
    if (inner !== undefined) limits[k] = inner + (k.endsWith("Height") ? readOptions(opts).th : 0);
  }
  return { ...rest, outerBounds: { left: saved.left, top: saved.top, width: saved.width, height: saved.height, ...limits } };
}

/** Clamps w×h to the constraints. */
export function constrain(r, c) {
  const lim = (v, lo, hi) => Math.max(lo ?? 0, Math.min(hi ?? Infinity, v));
  return { ...r, width: lim(r.width, c.minWidth, c.maxWidth), height: lim(r.height, c.minHeight, c.maxHeight) };
}

/**
 * Where a new window goes on a desktop of area.width × area.height: {left, top, width,
 * height} (outer), `filled` when it takes the whole desktop. `index`: how many windows are
 * open already.
 */
export function placeWindow(opts, area, index) {
  const c = readOptions(opts);
  const asked = c.width !== undefined || c.height !== undefined;
  const w = c.width ?? DEFAULT_INNER.width;
  const h = c.height ?? DEFAULT_INNER.height + c.th;
  const fits = w <= area.width && h <= area.height;
  const wantsAll = c.state === "maximized" || c.state === "fullscreen";
  if (index === 0 && (wantsAll || !asked || !fits)) {
    const r = constrain({ left: 0, top: 0, width: area.width, height: area.height }, { ...c, minWidth: undefined, minHeight: undefined });
    r.left = Math.max(0, Math.floor((area.width - r.width) / 2));
    r.top = Math.max(0, Math.floor((area.height - r.height) / 2));
    return { ...r, filled: r.width === area.width && r.height === area.height, th: c.th };
  }
  const r = constrain({ width: Math.min(w, area.width), height: Math.min(h, area.height) }, { ...c, minWidth: undefined, minHeight: undefined });
  if (index === 0 || c.left === undefined || c.top === undefined) {
    const off = index === 0 ? 0 : (index % 8) * CASCADE;
    r.left = Math.floor((area.width - r.width) / 2) + off;
    r.top = Math.floor((area.height - r.height) / 2) + off;
  } else [r.left, r.top] = [c.left, c.top];
  r.left = Math.max(0, Math.min(r.left, area.width - r.width));
  r.top = Math.max(0, Math.min(r.top, area.height - r.height));
  return { ...r, filled: false, th: c.th };
}

/** chrome.app.window.Bounds over getter/setter functions of the window's rectangle. */
function boundsObject(get, set, limits) {
  const b = {
    setPosition: (left, top) => set({ left, top }),
    setSize: (width, height) => set({ width, height }),
    setMinimumSize: (minWidth, minHeight) => Object.assign(limits, { minWidth, minHeight }),
    setMaximumSize: (maxWidth, maxHeight) => Object.assign(limits, { maxWidth, maxHeight }),
  };
  for (const k of ["left", "top", "width", "height"]) {
    Object.defineProperty(b, k, { enumerable: true, get: () => get()[k], set: (v) => set({ [k]: v }) });
  }
  for (const k of ["minWidth", "minHeight", "maxWidth", "maxHeight"]) {
    Object.defineProperty(b, k, { enumerable: true, get: () => limits[k] ?? null, set: (v) => (limits[k] = v ?? undefined) });
  }
  return b;
}

/**
 * The app's windows on `desktop` (an element of the launcher's document). `host` gives the
 * hub (events), lastError, the icon and title.
 */
export class WindowManager {
  /** `memory`: {get(id), set(id, rect)}, the windows' bounds by id across launches (Chrome kept them). */
  constructor(host, desktop, memory = null) {
    this.memory = memory;
    this.host = host;
    this.desktop = desktop;
    this.doc = desktop.ownerDocument;
    this.windows = []; // records, in creation order
    this.z = 10;
    this.doc.defaultView.addEventListener("resize", () => {
      for (const w of this.windows) if (w.filled) this.setRect(w, this.area(), true);
    });
  }

  area() {
    return { width: this.desktop.clientWidth, height: this.desktop.clientHeight };
  }

  byFrame(frameElement) {
    return this.windows.find((w) => w.iframe === frameElement) ?? null;
  }

  get(id) {
    return this.windows.find((w) => w.id === id)?.appWindow ?? null;
  }

  /** Opens `url` (relative to the package) as a window; `cb(appWindow)` once its page exists. */
  create(url, opts = {}, cb) {
    const id = opts.id ?? null;
    if (id !== null) {
      const open = this.windows.find((w) => w.id === id);
      if (open) {
        if (opts.focused !== false) this.focus(open);
        if (cb) setTimeout(() => this.host.lastError.run(cb, null, [open.appWindow], "app.window.create"), 0);
        return;
      }
    }
    const place = placeWindow(withRemembered(opts, id === null ? null : this.memory?.get(id)), this.area(), this.windows.filter((w) => !w.closed).length);
    const rec = { id: id ?? `pexe2wasm-window-${this.windows.length + 1}`, opts, th: place.th, filled: place.filled, state: "normal", callbacks: cb ? [cb] : [], limits: {} };
    const c = readOptions(opts);
    Object.assign(rec.limits, { minWidth: c.minWidth, minHeight: c.minHeight, maxWidth: c.maxWidth, maxHeight: c.maxHeight });
    const d = this.doc;
    const frame = d.createElement("div");
    frame.className = "pexe2wasm-window";
    frame.dataset.windowId = rec.id;
    const th = rec.filled ? 0 : rec.th;
    rec.shownTh = th;
    if (th) {
      const bar = d.createElement("div");
      bar.className = "pexe2wasm-titlebar";
      const title = d.createElement("span");
      title.className = "pexe2wasm-title";
      title.textContent = this.host.manifest.name ?? "";
      const btn = (label, text, f) => {
        const b = d.createElement("button");
        b.type = "button";
        b.title = label;
        b.setAttribute("aria-label", label);
        b.textContent = text;
        b.addEventListener("click", (e) => {
          e.stopPropagation();
          f();
        });
        return b;
      };
      bar.append(title, btn("Minimize", "\u2013", () => rec.appWindow.minimize()), btn("Maximize", "\u25a1", () => (rec.state === "maximized" ? rec.appWindow.restore() : rec.appWindow.maximize())), btn("Close", "\u00d7", () => rec.appWindow.close()));
      bar.addEventListener("pointerdown", (e) => this.drag(rec, e));
      frame.append(bar);
    }
    const iframe = d.createElement("iframe");
    iframe.className = "pexe2wasm-window-content";
    iframe.dataset.pexe2wasmKind = "window";
    iframe.setAttribute("allow", "fullscreen; autoplay; clipboard-read; clipboard-write; cross-origin-isolated; screen-wake-lock; gamepad; microphone; camera");
    iframe.style.height = `calc(100% - ${th}px)`;
    frame.append(iframe);
    if (!rec.filled && c.resizable) {
      const grip = d.createElement("div");
      grip.className = "pexe2wasm-grip";
      grip.addEventListener("pointerdown", (e) => this.drag(rec, e, true));
      frame.append(grip);
    }
    if (rec.filled) frame.classList.add("pexe2wasm-filled");
    if (c.frameless) frame.classList.add("pexe2wasm-frameless");
    rec.frame = frame;
    rec.iframe = iframe;
    rec.rect = { left: place.left, top: place.top, width: place.width, height: place.height };
    rec.appWindow = this.appWindow(rec);
    this.windows.push(rec);
    this.applyRect(rec);
    if (opts.hidden) frame.style.display = "none";
    // The page's URL before the frame is in the document: no about:blank load comes first.
    iframe.src = new URL(url, this.host.baseURL).href;
    iframe.addEventListener("load", () => this.loaded(rec));
    this.desktop.append(frame);
    if (opts.focused !== false) this.focus(rec);
    if (opts.state === "fullscreen") rec.appWindow.fullscreen();
    else if (opts.state === "minimized") rec.appWindow.minimize();
    this.host.onWindowsChanged?.();
  }

  /** The page of `rec` has its `chrome` (apis.js ran): the create callbacks run before its own scripts. */
  pageStarted(rec) {
    // window.close() in an app's window closed it, as the apps' own close buttons did.
    try {
      rec.iframe.contentWindow.close = () => rec.appWindow.close();
    } catch {
      /* another origin */
    }
    const cbs = rec.callbacks.splice(0);
    if (cbs.length) queueMicrotask(() => cbs.forEach((cb) => this.host.lastError.run(cb, null, [rec.appWindow], "app.window.create")));
  }

  loaded(rec) {
    const w = rec.iframe.contentWindow;
    // A page without apis.js (not written by pexe2wasm web) still gets its chrome.
    try {
      if (w.location.href === "about:blank") return;
      if (w && !w.chrome?.app?.window) this.host.install(w, this.host.apisFor(w, "window"));
      w.addEventListener("pointerdown", () => this.focus(rec), true);
      w.addEventListener("focus", () => this.focus(rec));
      // A new window had the keyboard in Chrome, unless it was opened unfocused or hidden.
      if (rec.opts.focused !== false && !rec.opts.hidden && rec.frame.classList.contains("pexe2wasm-focused")) w.focus();
    } catch {
      /* a page of another origin: it gets no chrome */
    }
    this.pageStarted(rec);
  }

  focus(rec) {
    if (rec.closed) return;
    if (this.windows.some((w) => w !== rec && !w.closed && Number(w.frame.style.zIndex) > Number(rec.frame.style.zIndex)) || !rec.frame.style.zIndex) {
      rec.frame.style.zIndex = String(++this.z);
    }
    for (const w of this.windows) w.frame.classList.toggle("pexe2wasm-focused", w === rec);
  }

  applyRect(rec) {
    const s = rec.frame.style;
    s.left = `${rec.rect.left}px`;
    s.top = `${rec.rect.top}px`;
    s.width = `${rec.rect.width}px`;
    s.height = `${rec.rect.height}px`;
  }

  /** Moves and resizes `rec` (outer figures; `inner` says they are the content's). */
  setRect(rec, r, quiet = false, inner = false) {
    const next = { ...rec.rect };
    for (const k of ["left", "top", "width", "height"]) if (typeof r[k] === "number" && Number.isFinite(r[k])) next[k] = Math.round(r[k]) + (inner && k === "height" ? rec.shownTh : 0);
    const lim = rec.limits;
    const c = constrain(next, { minWidth: lim.minWidth, maxWidth: lim.maxWidth, minHeight: lim.minHeight, maxHeight: lim.maxHeight });
    const changed = ["left", "top", "width", "height"].some((k) => c[k] !== rec.rect[k]);
    rec.rect = c;
    this.applyRect(rec);
    if (changed && rec.opts.id !== undefined && rec.state === "normal" && !rec.filled) this.memory?.set(rec.id, c);
    if (changed) {
      this.host.hub.dispatch(`appWindow.${rec.id}.onBoundsChanged`, []);
      if (!quiet) this.host.hub.dispatch("app.window.onBoundsChanged", []);
    }
  }

  drag(rec, e, resize = false) {
    if (e.button !== 0) return;
    e.preventDefault();
    this.focus(rec);
    const start = { x: e.clientX, y: e.clientY, ...rec.rect };
    this.desktop.classList.add("pexe2wasm-dragging");
    const move = (m) => {
      const dx = m.clientX - start.x;
      const dy = m.clientY - start.y;
      if (resize) this.setRect(rec, { width: start.width + dx, height: start.height + dy });
      else this.setRect(rec, { left: start.left + dx, top: Math.max(0, start.top + dy) });
    };
    const up = () => {
      this.desktop.classList.remove("pexe2wasm-dragging");
      this.doc.removeEventListener("pointermove", move);
      this.doc.removeEventListener("pointerup", up);
    };
    this.doc.addEventListener("pointermove", move);
    this.doc.addEventListener("pointerup", up);
  }

  close(rec) {
    if (rec.closed) return;
    rec.closed = true;
    // onClosed reaches the other pages (the window's own is going).
    const owner = this.host.contextOf?.(rec.iframe.contentWindow);
    rec.frame.remove();
    this.windows = this.windows.filter((w) => w !== rec);
    this.host.hub.dispatch(`appWindow.${rec.id}.onClosed`, [], (o) => o !== owner);
    this.host.hub.dispatch("app.window.onClosed", [], (o) => o !== owner);
    this.host.onWindowsChanged?.();
  }

  /** The AppWindow of `rec` (one object, shared by every page). */
  appWindow(rec) {
    const hub = this.host.hub;
    const mgr = this;
    const ev = (n) => hub.view(`appWindow.${rec.id}.${n}`, rec);
    const innerGet = () => ({ ...rec.rect, top: rec.rect.top + rec.shownTh, height: rec.rect.height - rec.shownTh });
    const state = (s, name) => {
      rec.state = s;
      hub.dispatch(`appWindow.${rec.id}.${name}`, []);
    };
    const aw = {
      id: rec.id,
      get contentWindow() {
        return rec.iframe.contentWindow;
      },
      innerBounds: boundsObject(innerGet, (r) => mgr.setRect(rec, { ...r, ...(r.top !== undefined ? { top: r.top - rec.shownTh } : {}) }, false, true), rec.limits),
      outerBounds: boundsObject(() => ({ ...rec.rect }), (r) => mgr.setRect(rec, r), rec.limits),
      onBoundsChanged: ev("onBoundsChanged"),
      onClosed: ev("onClosed"),
      onFullscreened: ev("onFullscreened"),
      onMaximized: ev("onMaximized"),
      onMinimized: ev("onMinimized"),
      onRestored: ev("onRestored"),
      focus: () => mgr.focus(rec),
      show: (focused = true) => {
        rec.frame.style.display = "";
        if (focused) mgr.focus(rec);
      },
      hide: () => (rec.frame.style.display = "none"),
      close: () => mgr.close(rec),
      drawAttention: () => rec.frame.classList.add("pexe2wasm-attention"),
      clearAttention: () => rec.frame.classList.remove("pexe2wasm-attention"),
      fullscreen: () => {
        const p = rec.frame.requestFullscreen?.();
        if (p?.catch) p.catch(() => mgr.host.log.info("pexe2wasm: the browser allows fullscreen only after a click or key; the window fills the tab instead"));
        if (rec.state !== "fullscreen") rec.saved ??= { ...rec.rect };
        mgr.setRect(rec, { left: 0, top: 0, ...mgr.area() });
        state("fullscreen", "onFullscreened");
      },
      isFullscreen: () => rec.state === "fullscreen",
      maximize: () => {
        if (rec.state === "normal") rec.saved = { ...rec.rect };
        mgr.setRect(rec, { left: 0, top: 0, ...mgr.area() });
        state("maximized", "onMaximized");
      },
      isMaximized: () => rec.state === "maximized",
      minimize: () => {
        if (rec.state !== "minimized") rec.beforeMin = rec.state;
        rec.frame.style.display = "none";
        state("minimized", "onMinimized");
        mgr.host.onWindowsChanged?.();
      },
      isMinimized: () => rec.state === "minimized",
      restore: () => {
        const was = rec.state;
        rec.frame.style.display = "";
        if (was === "fullscreen" && mgr.doc.fullscreenElement) mgr.doc.exitFullscreen?.().catch(() => {});
        if ((was === "maximized" || was === "fullscreen") && rec.saved) {
          mgr.setRect(rec, rec.saved);
          rec.saved = null;
        }
        if (was === "minimized" && rec.beforeMin && rec.beforeMin !== "normal") rec.state = rec.beforeMin;
        else state("normal", "onRestored");
        mgr.focus(rec);
        mgr.host.onWindowsChanged?.();
      },
      moveTo: (left, top) => mgr.setRect(rec, { left, top }),
      resizeTo: (width, height) => mgr.setRect(rec, { width, height }),
      getBounds: () => innerGet(),
      setBounds: (b) => mgr.setRect(rec, b, false, true),
      isAlwaysOnTop: () => !!rec.onTop,
      setAlwaysOnTop: (v) => {
        rec.onTop = !!v;
        if (v) rec.frame.style.zIndex = "100000";
      },
      setVisibleOnAllWorkspaces: () => {},
      setInterceptAllKeys: () => {},
      setShape: () => {},
      setIcon: () => {},
      alphaEnabled: () => false,
      isAlwaysOnTopAllowed: () => true,
    };
    return aw;
  }
}

/** chrome.app.window for one page. */
export function appWindowApi(host, ctx) {
  const mgr = host.windows;
  return {
    create: (url, options, cb) => {
      if (typeof options === "function") [options, cb] = [{}, options];
      if (typeof url !== "string") throw new TypeError("app.window.create: the url must be a string");
      if (!mgr) {
        if (cb) setTimeout(() => host.lastError.run(cb, "There is no window to open here.", [], "app.window.create"), 0);
        return;
      }
      if (/^[a-z][a-z0-9+.-]*:/i.test(url) && !url.startsWith(host.origin)) throw new ChromeError("app.window.create: only the app's own pages open in its windows");
      mgr.create(url, options ?? {}, cb);
    },
    // The window of this page, or of the page it is framed in.
    current: () => {
      for (let w = ctx.win; w && mgr; w = w.parent) {
        const rec = w.frameElement && mgr.byFrame(w.frameElement);
        if (rec) return rec.appWindow;
        if (w === w.parent) break;
      }
      return null;
    },
    get: (id) => mgr?.get(id) ?? null,
    getAll: () => host.cloneArray(ctx.win, (mgr?.windows ?? []).filter((w) => !w.closed).map((w) => w.appWindow)),
    canSetVisibleOnAllWorkspaces: () => false,
    onBoundsChanged: host.hub.view("app.window.onBoundsChanged", ctx),
    onClosed: host.hub.view("app.window.onClosed", ctx),
    onFullscreened: host.hub.view("app.window.onFullscreened", ctx),
    onMaximized: host.hub.view("app.window.onMaximized", ctx),
    onMinimized: host.hub.view("app.window.onMinimized", ctx),
    onRestored: host.hub.view("app.window.onRestored", ctx),
  };
}
