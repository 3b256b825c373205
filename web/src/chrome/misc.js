// chrome.power, chrome.contextMenus, chrome.commands, and what a tab cannot have: the
// device and network APIs (they fail as Chrome failed an app without the permission) and
// any other chrome.X (an object that says once what the app wanted, and never throws).

/** APIs a browser tab cannot give, and why (one console line each names the API). */
export const DENIED = {
  socket: "raw TCP/UDP sockets",
  sockets: "raw TCP/UDP sockets",
  "sockets.tcp": "raw TCP sockets",
  "sockets.udp": "raw UDP sockets",
  "sockets.tcpServer": "listening sockets",
  identity: "Google sign-in for apps",
  usb: "USB devices",
  serial: "serial ports",
  hid: "HID devices",
  bluetooth: "Bluetooth",
  bluetoothLowEnergy: "Bluetooth",
  bluetoothSocket: "Bluetooth",
  mdns: "mDNS discovery",
  gcm: "Google Cloud Messaging",
  pushMessaging: "Google Cloud Messaging",
  mediaGalleries: "the media galleries",
  syncFileSystem: "Drive-synced file systems",
  webstore: "the Chrome Web Store",
  printerProvider: "printer providers",
  vpnProvider: "VPN providers",
  fileSystemProvider: "file system providers",
  nativeMessaging: "native messaging hosts",
  enterprise: "enterprise device APIs",
  networking: "the device's network setup",
  audio: "the device's audio setup",
  wallpaper: "the ChromeOS wallpaper",
  copresence: "copresence",
  signedInDevices: "signed-in devices",
};

const isEventName = (p) => typeof p === "string" && /^on[A-Z]/.test(p);

/** An event that never fires. */
export function deadEvent() {
  return {
    addListener() {},
    removeListener() {},
    hasListener: () => false,
    hasListeners: () => false,
    addRules: (_r, cb) => cb?.([]),
    getRules: (_i, cb) => (typeof _i === "function" ? _i : cb)?.([]),
    removeRules: (_i, cb) => (typeof _i === "function" ? _i : cb)?.(),
  };
}

/**
 * A stand-in for chrome.`path`: property access gives more stand-ins (onX: an event that
 * never fires), a call calls its callback later with lastError set to `message` (a
 * Manifest V3 call without one gets a rejected promise), and `then` is absent so it is not
 * taken for a promise. `onUse(path)` is told each member used.
 * @param {(path: string, called?: boolean) => void} [onUse]
 */
export function standIn(host, path, message, onUse = () => {}) {
  const cache = new Map();
  const target = function () {};
  return new Proxy(target, {
    get(t, p) {
      if (typeof p === "symbol") return p === Symbol.toStringTag ? "Object" : undefined;
      if (p === "then" || p === "toJSON") return undefined;
      if (p === "toString") return () => `[object chrome.${path}]`;
      if (p === "apply" || p === "call" || p === "bind") return Reflect.get(t, p);
      if (!cache.has(p)) {
        const sub = `${path}.${p}`;
        cache.set(p, isEventName(p) ? deadEvent() : standIn(host, sub, message, onUse));
      }
      onUse(`${path}.${p}`);
      return cache.get(p);
    },
    apply(_t, _this, args) {
      onUse(path, true);
      const cb = [...args].reverse().find((a) => typeof a === "function");
      if (cb) {
        setTimeout(() => host.lastError.run(cb, message(path), [], path), 0);
        return undefined;
      }
      if (host.manifestVersion >= 3) {
        const p = Promise.reject(new Error(message(path)));
        p.catch(() => {});
        return p;
      }
      host.lastError.unchecked(message(path));
      return undefined;
    },
    has: () => true,
    set: () => true,
  });
}

/**
 * Wraps `obj` (chrome or one of its namespaces) so that a missing member gives a stand-in
 * (and is recorded as missing) when `stubMissing(name)` says so; otherwise undefined, as in
 * Chrome (an app testing `chrome.runtime.error` gets undefined, not a truthy object).
 */
export function withStandIns(obj, path, host, stubMissing) {
  const cache = new Map();
  return new Proxy(obj, {
    get(t, p, r) {
      if (typeof p === "symbol" || p in t) return Reflect.get(t, p, r);
      if (p === "then" || p === "toJSON" || !stubMissing(p)) return undefined;
      if (!cache.has(p)) cache.set(p, host.standInFor(path ? `${path}.${p}` : p));
      return cache.get(p);
    },
  });
}

/** chrome.power: keep-awake through the Screen Wake Lock API where the browser has it. */
export function powerApi(host, ctx) {
  const state = host.power;
  const nav = ctx.win?.navigator ?? host.nav;
  const acquire = async () => {
    if (!state.level || state.lock || !nav.wakeLock) return;
    try {
      state.lock = await nav.wakeLock.request("screen");
      state.lock.addEventListener?.("release", () => (state.lock = null));
    } catch (e) {
      host.log.info(`pexe2wasm: chrome.power.requestKeepAwake: the browser refused a wake lock (${e.message}); it will try again when the page is visible`);
    }
  };
  // The lock goes when the tab is hidden; it is asked for again when the tab shows.
  const doc = host.top?.document;
  if (!state.listening && doc?.addEventListener) {
    state.listening = true;
    doc.addEventListener("visibilitychange", () => doc.visibilityState === "visible" && acquire());
  }
  return {
    requestKeepAwake(level) {
      state.level = level ?? "display";
      acquire();
    },
    releaseKeepAwake() {
      state.level = null;
      state.lock?.release?.();
      state.lock = null;
    },
  };
}

/** chrome.contextMenus: items are kept (an app reads them back), never shown. */
export function contextMenusApi(host, ctx) {
  const items = host.contextMenus;
  let n = items.size;
  const create = (props, cb) => {
    const id = props?.id ?? ++n;
    items.set(id, { ...props, id });
    if (typeof cb === "function") setTimeout(() => host.lastError.run(cb, null, [], "contextMenus.create"), 0);
    return id;
  };
  return {
    ACTION_MENU_TOP_LEVEL_LIMIT: 6,
    create,
    update: host.api("contextMenus.update", (id, props) => {
      if (!items.has(id)) throw new host.ChromeError(`Cannot find menu item with id ${id}`);
      Object.assign(items.get(id), props);
    }),
    remove: host.api("contextMenus.remove", (id) => {
      if (!items.delete(id)) throw new host.ChromeError(`Cannot find menu item with id ${id}`);
    }),
    removeAll: host.api("contextMenus.removeAll", () => items.clear()),
    onClicked: host.hub.view("contextMenus.onClicked", ctx),
  };
}

/**
 * A manifest shortcut ("Ctrl+Shift+Y", "MacCtrl+Comma", "Alt+Up") as a test of a
 * KeyboardEvent; null for what cannot be read.
 */
export function shortcutMatcher(spec) {
  if (typeof spec !== "string" || !spec) return null;
  const parts = spec.split("+").map((s) => s.trim());
  const key = parts.pop();
  const mods = new Set(parts.map((m) => m.toLowerCase()));
  const names = { comma: ",", period: ".", space: " ", home: "Home", end: "End", pageup: "PageUp", pagedown: "PageDown", insert: "Insert", delete: "Delete", up: "ArrowUp", down: "ArrowDown", left: "ArrowLeft", right: "ArrowRight" };
  const want = names[key.toLowerCase()] ?? key;
  return (e) => {
    const ctrl = mods.has("ctrl") || mods.has("command") || mods.has("macctrl");
    if (ctrl !== (e.ctrlKey || e.metaKey) || mods.has("alt") !== e.altKey || mods.has("shift") !== e.shiftKey) return false;
    return e.key?.toLowerCase() === want.toLowerCase() || e.code?.toLowerCase() === `key${want}`.toLowerCase();
  };
}

/** chrome.commands: the manifest's commands, fired by their keys in any page of the app. */
export function commandsApi(host, ctx) {
  const commands = host.manifest.commands ?? {};
  if (ctx.win?.addEventListener && !ctx.commandKeys) {
    ctx.commandKeys = true;
    const tests = Object.entries(commands)
      .map(([name, c]) => /** @type {[string, ((e: KeyboardEvent) => boolean) | null]} */ ([name, shortcutMatcher(c?.suggested_key?.default ?? c?.suggested_key?.linux ?? c?.suggested_key?.chromeos)]))
      .filter(([, f]) => f);
    if (tests.length) {
      ctx.win.addEventListener("keydown", (e) => {
        for (const [name, f] of tests) if (f(e)) host.hub.dispatch("commands.onCommand", [name]);
      });
    }
  }
  return {
    getAll: host.api("commands.getAll", () =>
      host.cloneInto(
        ctx.win,
        Object.entries(commands).map(([name, c]) => ({ name, description: c?.description ?? "", shortcut: c?.suggested_key?.default ?? "" })),
      ),
    ),
    onCommand: host.hub.view("commands.onCommand", ctx),
  };
}
