// chrome.runtime (and chrome.extension): the manifest, URLs, the id, messages between the
// app's pages (runtime.sendMessage / onMessage, tabs.sendMessage to content scripts, ports),
// the background page and the package's own directory.

import { ChromeError } from "./base.js";
import { packageEntry } from "./filesystem.js";

const NO_RECEIVER = "Could not establish connection. Receiving end does not exist.";
const PORT_CLOSED = "The message port closed before a response was received.";

/**
 * runtime.sendMessage's arguments: ([extensionId], message, [options]) once the callback is
 * taken off, as Chrome read them.
 */
export function messageArgs(args) {
  args = [...args];
  while (args.length > 1 && args[args.length - 1] === undefined) args.pop();
  if (args.length >= 3) return { extensionId: args[0], message: args[1], options: args[2] };
  if (args.length === 2 && (typeof args[0] === "string" || args[0] === null) && !(typeof args[1] === "object" && args[1] !== null && "includeTlsChannelId" in args[1])) {
    return { extensionId: args[0], message: args[1] };
  }
  if (args.length === 2) return { message: args[0], options: args[1] };
  return { message: args[0] };
}

/**
 * Delivers `message` from context `from` to the onMessage listeners of the contexts `to`
 * accepts (never `from` itself), after the current task, as Chrome did; `respond(value,
 * error)` gets the first sendResponse, or an error when no one listens or no one answers.
 * Contexts: {win, kind, …}; `hub`: the runtime's EventHub.
 */
export function deliverMessage({ hub, from, message, sender, to, clone, respond, defer = (f) => setTimeout(f, 0) }) {
  const text = JSON.stringify(message ?? null);
  defer(() => {
    let done = false;
    const finish = (v, err) => {
      if (done) return;
      done = true;
      respond(v, err);
    };
    const accept = (owner) => owner !== from && !owner.dead && to(owner);
    const ev = hub.get("runtime.onMessage");
    if (!ev.count(accept)) return finish(undefined, NO_RECEIVER);
    let open = false;
    const results = ev.dispatch(
      (owner) => [clone(owner, JSON.parse(text)), clone(owner, sender), (resp) => finish(resp === undefined ? undefined : JSON.parse(JSON.stringify(resp)))],
      accept,
    );
    for (const { value } of results) {
      if (value === true) open = true;
      else if (value && typeof value.then === "function") {
        open = true;
        value.then((v) => finish(v), (e) => finish(undefined, e?.message ?? String(e)));
      }
    }
    if (!open) finish(undefined, PORT_CLOSED);
  });
}

/** A runtime.Port; `peer` set once both ends exist. */
export function makePort(hub, name, sender, owner) {
  const id = Math.random().toString(36).slice(2);
  const port = {
    name,
    sender,
    onMessage: hub.view(`port.${id}.onMessage`, owner),
    onDisconnect: hub.view(`port.${id}.onDisconnect`, owner),
    postMessage(msg) {
      if (!port.peers.length) throw new Error("Attempting to use a disconnected port object");
      const text = JSON.stringify(msg ?? null);
      for (const peer of port.peers) setTimeout(() => hub.dispatch(`port.${peer.id}.onMessage`, (o) => [o.clone(JSON.parse(text)), peer]), 0);
    },
    disconnect() {
      for (const peer of port.peers.splice(0)) {
        peer.peers = peer.peers.filter((p) => p !== port);
        setTimeout(() => hub.dispatch(`port.${peer.id}.onDisconnect`, [peer]), 0);
      }
    },
  };
  Object.defineProperties(port, { id: { value: id }, peers: { value: [], writable: true } });
  return port;
}

export function runtimeApi(host, ctx) {
  const { api, hub } = host;
  const clone = (v) => host.cloneInto(ctx.win, v);
  const content = ctx.kind === "content";
  const sender = () => {
    const s = { id: host.id, url: ctx.win?.location?.href ?? host.baseURL, origin: host.origin, frameId: ctx.frameId ?? 0 };
    if (content) s.tab = host.tabInfo?.();
    return s;
  };
  const sendMessage = api("runtime.sendMessage", (...args) => {
    const { extensionId, message } = messageArgs(args);
    if (extensionId && extensionId !== host.id) throw new ChromeError(NO_RECEIVER);
    return new Promise((resolve, reject) =>
      deliverMessage({
        hub,
        from: ctx,
        message,
        sender: sender(),
        to: (o) => o.kind !== "content",
        clone: (o, v) => host.cloneInto(o.win, v),
        respond: (v, err) => (err ? reject(new ChromeError(err)) : resolve(clone(v))),
      }),
    );
  });
  const connect = (...args) => {
    const [extId, info] = typeof args[0] === "string" ? args : [null, args[0]];
    const name = info?.name ?? "";
    const port = makePort(hub, name, undefined, ctx);
    if (extId && extId !== host.id) {
      setTimeout(() => hub.dispatch(`port.${port.id}.onDisconnect`, [port]), 0);
      return port;
    }
    setTimeout(() => {
      hub.dispatch("runtime.onConnect", (owner) => {
        const theirs = makePort(hub, name, owner.clone(sender()), owner);
        theirs.peers.push(port);
        port.peers.push(theirs);
        return [theirs];
      }, (o) => o !== ctx && !o.dead && o.kind !== "content");
      if (!port.peers.length) hub.dispatch(`port.${port.id}.onDisconnect`, [port]);
    }, 0);
    return port;
  };
  const getBackgroundPage = api("runtime.getBackgroundPage", () => {
    const bg = host.background?.win;
    if (!bg) throw new ChromeError("You do not have a background page.");
    return bg;
  });
  const out = {
    id: host.id,
    getManifest: () => clone(host.manifest),
    getURL: (path) => host.getURL(path),
    sendMessage,
    connect,
    onMessage: hub.view("runtime.onMessage", ctx),
    onConnect: hub.view("runtime.onConnect", ctx),
    onMessageExternal: hub.view("runtime.onMessageExternal", ctx),
    onConnectExternal: hub.view("runtime.onConnectExternal", ctx),
  };
  Object.defineProperty(out, "lastError", { enumerable: true, get: () => host.lastError.get() });
  if (content) return out;
  return Object.assign(out, {
    getPlatformInfo: api("runtime.getPlatformInfo", () => clone(host.platformInfo())),
    getBackgroundPage,
    getPackageDirectoryEntry: api("runtime.getPackageDirectoryEntry", async () => packageEntry(await host.packageFiles(), host.baseURL)),
    reload: () => host.reload(),
    restart: () => host.reload(),
    restartAfterDelay: api("runtime.restartAfterDelay", () => {
      throw new ChromeError("Function available only for ChromeOS kiosk mode.");
    }),
    requestUpdateCheck: api("runtime.requestUpdateCheck", () => clone({ status: "no_update" })),
    setUninstallURL: api("runtime.setUninstallURL", () => undefined),
    openOptionsPage: api("runtime.openOptionsPage", () => host.openOptionsPage()),
    connectNative: () => {
      host.note("runtime.connectNative", "native messaging hosts");
      return makePort(hub, "native", undefined, ctx);
    },
    sendNativeMessage: api("runtime.sendNativeMessage", () => {
      host.note("runtime.sendNativeMessage", "native messaging hosts");
      throw new ChromeError("Access to native messaging host is not available in a browser tab.");
    }),
    onInstalled: hub.view("runtime.onInstalled", ctx),
    onStartup: hub.view("runtime.onStartup", ctx),
    onSuspend: hub.view("runtime.onSuspend", ctx),
    onSuspendCanceled: hub.view("runtime.onSuspendCanceled", ctx),
    onUpdateAvailable: hub.view("runtime.onUpdateAvailable", ctx),
    onRestartRequired: hub.view("runtime.onRestartRequired", ctx),
    PlatformOs: { MAC: "mac", WIN: "win", ANDROID: "android", CROS: "cros", LINUX: "linux", OPENBSD: "openbsd", FUCHSIA: "fuchsia" },
    PlatformArch: { ARM: "arm", ARM64: "arm64", X86_32: "x86-32", X86_64: "x86-64", MIPS: "mips", MIPS64: "mips64" },
    PlatformNaclArch: { ARM: "arm", X86_32: "x86-32", X86_64: "x86-64", MIPS: "mips", MIPS64: "mips64" },
  });
}

/** chrome.extension (the old names): getURL, getBackgroundPage, getViews, lastError. */
export function extensionApi(host, ctx) {
  const out = {
    getURL: (p) => host.getURL(p),
    inIncognitoContext: false,
    getBackgroundPage: () => host.background?.win ?? null,
    getViews: (filter) =>
      [...host.contexts].filter((c) => !c.dead && c.kind !== "content" && (!filter?.type || filter.type === c.viewType)).map((c) => c.win),
    isAllowedIncognitoAccess: host.api("extension.isAllowedIncognitoAccess", () => false),
    isAllowedFileSchemeAccess: host.api("extension.isAllowedFileSchemeAccess", () => false),
  };
  Object.defineProperty(out, "lastError", { enumerable: true, get: () => host.lastError.get() });
  if (ctx.kind === "content") delete out.getBackgroundPage;
  return out;
}
