// What the browser tests' pages (tests/browser/pages, the test sites web.rs builds) keep on
// `window` for tests/browser/run.mjs to read, and the host modules the harness pages import
// from where they are served (read by `npm run typecheck` for tests/browser only, never served).

interface Window {
  /** What the page's module posted, in order (ArrayBuffers as they came). */
  messages?: any[];
  /** The module's load/crash/… events by name, and a harness page's own ("ready-for-click", "done"). */
  events?: string[];
  /** The <embed> of the converted module. */
  naclModule?: any;
  /** A harness page's outcome: {checks, failed} or {error, checks}. */
  result?: any;
  /** When the first message arrived (performance.now(); null before it). */
  firstMessageAt?: number;
  /** run.mjs's console capture (the WebKit driver has no console events). */
  __runLog?: Array<{ type?: string; text: string; uncaught?: boolean }>;
}

// The harness pages are served next to the host (its src/ at ./pexe2wasm/), so they import
// it through a path that exists only when served: these point it at web/src.
declare module "*/pexe2wasm/host/context.js" {
  export const Context: typeof import("../../src/host/context.js").Context;
  export type Context = import("../../src/host/context.js").Context;
}
declare module "*/pexe2wasm/host/shared.js" {
  export const createSharedBlock: typeof import("../../src/host/shared.js").createSharedBlock;
  export const NEXT_TID: typeof import("../../src/host/shared.js").NEXT_TID;
}
declare module "*/pexe2wasm/host/wasm-info.js" {
  export const importedMemory: typeof import("../../src/host/wasm-info.js").importedMemory;
}
declare module "*/pexe2wasm/host/protocol.js" {
  export const FROM_IO: typeof import("../../src/host/protocol.js").FROM_IO;
  export const TO_IO: typeof import("../../src/host/protocol.js").TO_IO;
  export const TO_IO_PORT: typeof import("../../src/host/protocol.js").TO_IO_PORT;
  export const TO_MAIN: typeof import("../../src/host/protocol.js").TO_MAIN;
  export const TO_PAGE: typeof import("../../src/host/protocol.js").TO_PAGE;
  export const TO_HOST_WORKER: typeof import("../../src/host/protocol.js").TO_HOST_WORKER;
}
declare module "*/pexe2wasm/host/ppb/gl/index.js" {
  export const glState: typeof import("../../src/host/ppb/gl/index.js").glState;
}
