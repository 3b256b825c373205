// Type declarations of the pexe2wasm npm package (index.js; docs/NPM.md), written by hand
// and checked with tsc against a typed use of the API (crates/cli/tests/it/npm.rs).

/** The host's options: what `window.pexe2wasmConfig` sets for the drop-in script, for one module. */
export interface HostOptions {
  /** URL prefix → replacement, for the module's loads and WebSockets (as `pexe2wasm web --url-map`). */
  urlMap?: Record<string, string>;
  /** Refuse loads of another origin than the page's that urlMap does not map. */
  refuseUnmapped?: boolean;
  /** The thread pool's size (default: hardware threads + 2, at least 4). */
  threads?: number;
  /** Convert with smaller code (as `pexe2wasm convert --small-code`). */
  smallCode?: boolean;
  /**
   * false (the default): convert the pexe in the browser (cached); true: load the .wasm
   * `pexe2wasm web` wrote beside the pexe; "auto": that .wasm when the server has it.
   */
  preconverted?: boolean | "auto";
}

/** load()'s options. */
export interface LoadOptions extends HostOptions {
  /** Where this package's files are served (the folder of index.js); default: index.js's own URL's folder. */
  baseUrl?: string | URL;
  /** For a URL target: the element the new <embed> goes into (default: document.body). */
  container?: Element;
  /** For a URL target: the <embed>'s size in CSS pixels. */
  width?: number;
  height?: number;
  /** For a URL target: more attributes of the <embed> (a plugin reads them as its arguments). */
  attributes?: Record<string, string | number>;
}

/** The events of an instance: those of NaCl's element. */
export interface InstanceEventMap {
  loadstart: ProgressEvent;
  progress: ProgressEvent;
  load: ProgressEvent;
  error: ProgressEvent;
  loadend: ProgressEvent;
  crash: Event;
  message: MessageEvent;
}

/** A module load() started. */
export interface Instance {
  /** The <embed>/<object> it runs in (a canvas in its place shows what it draws). */
  readonly element: HTMLEmbedElement | HTMLObjectElement;
  /** Resolves when the module has loaded; rejects with lastError's text on an error or crash before. */
  readonly ready: Promise<Instance>;
  /** The text of the last error or crash ("" until one). */
  readonly lastError: string;
  /** NaCl's readyState: 0 before the start, 1 loading, 3 progress, 4 done. */
  readonly readyState: number;
  /** The module's exit status; -1 unless it exited. */
  readonly exitStatus: number;
  /** "converted" in the browser now, or from the "cache"; undefined for a pre-converted module. */
  readonly source: "converted" | "cache" | undefined;
  /** Sends a message to the module (structured clone); before it has loaded, it waits. */
  postMessage(message: unknown): void;
  addEventListener<K extends keyof InstanceEventMap>(
    type: K,
    listener: (this: HTMLEmbedElement | HTMLObjectElement, event: InstanceEventMap[K]) => void,
    options?: boolean | AddEventListenerOptions,
  ): void;
  removeEventListener<K extends keyof InstanceEventMap>(
    type: K,
    listener: (this: HTMLEmbedElement | HTMLObjectElement, event: InstanceEventMap[K]) => void,
    options?: boolean | EventListenerOptions,
  ): void;
  /** Ends the module and removes what load() added to the page. */
  destroy(): void;
}

/**
 * Runs a NaCl (PNaCl) module: `target` is a .nmf or .pexe URL (a new <embed> in
 * `options.container`) or an <embed>/<object> element in the document. Returns at once.
 */
export function load(
  target: string | URL | HTMLEmbedElement | HTMLObjectElement,
  options?: LoadOptions,
): Instance;
