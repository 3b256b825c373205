// chrome.system.cpu / memory / display / storage / network: the figures the browser gives.

/** chrome.system.cpu.getInfo from navigator. */
export function cpuInfo(nav) {
  const n = nav.hardwareConcurrency || 1;
  return {
    numOfProcessors: n,
    archName: "x86_64",
    modelName: "",
    features: [],
    processors: Array.from({ length: n }, () => ({ usage: { user: 0, kernel: 0, idle: 0, total: 0 } })),
    temperatures: [],
  };
}

/** chrome.system.memory.getInfo: navigator.deviceMemory (GiB), else performance.memory. */
export function memoryInfo(nav, perf) {
  const pm = perf?.memory;
  const capacity = nav.deviceMemory ? nav.deviceMemory * 2 ** 30 : pm?.jsHeapSizeLimit ?? 2 ** 31;
  const available = pm ? Math.max(0, capacity - pm.usedJSHeapSize) : capacity;
  return { capacity, availableCapacity: available };
}

/** chrome.system.display.getInfo: the screen this tab is on. */
export function displayInfo(screen, dpr = 1) {
  const w = screen.width ?? 0;
  const h = screen.height ?? 0;
  const bounds = { left: 0, top: 0, width: w, height: h };
  const workArea = { left: screen.availLeft ?? 0, top: screen.availTop ?? 0, width: screen.availWidth ?? w, height: screen.availHeight ?? h };
  const zero = { left: 0, top: 0, right: 0, bottom: 0 };
  return [
    {
      id: "0",
      name: "screen",
      mirroringSourceId: "",
      mirroringDestinationIds: [],
      isPrimary: true,
      isInternal: false,
      isEnabled: true,
      isUnified: false,
      dpiX: 96 * dpr,
      dpiY: 96 * dpr,
      rotation: screen.orientation?.angle ?? 0,
      bounds,
      overscan: zero,
      workArea,
      modes: [{ width: w, height: h, widthInNativePixels: w * dpr, heightInNativePixels: h * dpr, deviceScaleFactor: dpr, isNative: true, isSelected: true }],
      hasTouchSupport: (globalThis.navigator?.maxTouchPoints ?? 0) > 0,
      availableDisplayZoomFactors: [1],
      displayZoomFactor: 1,
    },
  ];
}

/** chrome.system.storage.getInfo: the site's storage quota as one unit. */
export async function storageInfo(nav) {
  const est = (await nav.storage?.estimate?.().catch(() => null)) ?? {};
  return [{ id: "pexe2wasm-site", name: "site storage", type: "fixed", capacity: est.quota ?? 0 }];
}

export function systemApi(host, ctx) {
  const { api } = host;
  const win = ctx.win;
  const clone = (v) => host.cloneInto(win, v);
  return {
    cpu: { getInfo: api("system.cpu.getInfo", () => clone(cpuInfo(host.nav))) },
    memory: { getInfo: api("system.memory.getInfo", () => clone(memoryInfo(host.nav, win?.performance ?? globalThis.performance))) },
    display: {
      getInfo: api("system.display.getInfo", () => clone(displayInfo(win?.screen ?? {}, win?.devicePixelRatio ?? 1))),
      getDisplayLayout: api("system.display.getDisplayLayout", () => clone([])),
      onDisplayChanged: host.hub.view("system.display.onDisplayChanged", ctx),
    },
    storage: {
      getInfo: api("system.storage.getInfo", async () => clone(await storageInfo(host.nav))),
      getAvailableCapacity: api("system.storage.getAvailableCapacity", async (id) => {
        const est = (await host.nav.storage?.estimate?.().catch(() => null)) ?? {};
        return clone({ id, availableCapacity: Math.max(0, (est.quota ?? 0) - (est.usage ?? 0)) });
      }),
      ejectDevice: api("system.storage.ejectDevice", () => "no_such_device"),
      onAttached: host.hub.view("system.storage.onAttached", ctx),
      onDetached: host.hub.view("system.storage.onDetached", ctx),
    },
    // A page cannot see the machine's network interfaces.
    network: { getNetworkInterfaces: api("system.network.getNetworkInterfaces", () => clone([])) },
  };
}
