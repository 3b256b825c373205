// Globals of the browser host that TypeScript's DOM library does not know (read by
// `npm run typecheck`, never served). The checker sees every file with the page's lib
// (dom); what workers, worklets and the service worker have beyond it is declared here.

interface Window {
  /** The Chrome app runtime of a launcher page (chrome/launcher.js), read by the frames below it. */
  __pexe2wasmChrome?: any;
  /** The app's `chrome` object (chrome/apis.js); Chromium has its own. */
  chrome?: any;
}

// WebAssembly.instantiate(module, …) where the module arrives in a message (typed `any`):
// every such call in the host passes a compiled Module, so it resolves to an Instance.
declare namespace WebAssembly {
  function instantiate(moduleObject: Module, importObject?: Imports): Promise<Instance>;
}

// Dedicated workers (compat/filesystem-worker.js): OPFS sync access handles.
interface FileSystemSyncAccessHandle {
  truncate(size: number): void | Promise<void>;
  write(buffer: BufferSource, options?: { at?: number }): number | Promise<number>;
  flush(): void | Promise<void>;
  close(): void | Promise<void>;
}
interface FileSystemFileHandle {
  createSyncAccessHandle(): Promise<FileSystemSyncAccessHandle>;
}

// The AudioWorklet global scope (audio-worklet.js).
declare class AudioWorkletProcessor {
  constructor(options?: any);
  readonly port: MessagePort;
}
declare function registerProcessor(name: string, processorCtor: new (options?: any) => AudioWorkletProcessor): void;

// The service worker (isolation.js).
interface ExtendableEvent extends Event {
  waitUntil(f: Promise<unknown>): void;
}
interface FetchEvent extends ExtendableEvent {
  readonly request: Request;
  respondWith(r: Response | Promise<Response>): void;
}
interface ServiceWorkerGlobalScope {
  skipWaiting(): Promise<void>;
  addEventListener(type: "install" | "activate", listener: (e: ExtendableEvent) => void): void;
  addEventListener(type: "fetch", listener: (e: FetchEvent) => void): void;
}
declare var clients: { claim(): Promise<void> };

// The drop-in script (drop-in.js) and the page's configuration for it (docs/DROP-IN.md).
declare var __pexe2wasmDropIn: boolean | undefined;
declare var pexe2wasmConfig: Record<string, any> | undefined;
