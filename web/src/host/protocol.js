// The message protocol between the page and the host's workers: every channel, and every
// kind of message (the `t` field) each one carries, named once here. Senders write
// `{ t: TO_PAGE.LOAD }`, receivers `case TO_PAGE.LOAD:`; a receiver that meets a kind its
// channel does not carry reports it (`unknownMessage`: a console error naming the channel
// and the kind) instead of dropping it, as emscripten's pthread library does with its
// `cmd` table. tests/unit/protocol.test.js checks that no source writes a kind as a string
// literal and that every receiver reports an unknown kind. docs/JS-HOST.md, "The message
// protocol", has the table of channels.
//
// The values are the strings the host always used, so a message seen in a debugger reads
// as before.

/**
 * Page (embed.js) -> instance worker (instance-worker.js, `self.onmessage`).
 * @typedef {{ t: "init", url?: string, pexeUrl?: string, smallCode: boolean, documentUrl: string | null, attrs: [string, string][], view: object, args: string[], canvas: OffscreenCanvas | null, urlMap: Record<string, string>, refuseUnmapped: boolean, pageUrl: string, screen: [number, number], maxPages?: number }} InitInstance
 * @typedef {{ t: "message", data: any }} PageMessage the element's postMessage
 * @typedef {{ t: "view", view: object }} ViewChange
 * @typedef {{ t: "input", event: object }} InputEventMessage
 * @typedef {{ t: "page-reply", done: { loop: number, func: number, userData: number }, result: number }} PageReply a page call's answer
 * @typedef {{ t: "fullscreen-state", on: boolean }} FullscreenState
 * @typedef {{ t: "mouse-lock-lost" }} MouseLockLost
 * @typedef {{ t: "focus", has: boolean }} Focus
 * @typedef {{ t: "spawned", id: number, port: MessagePort }} Spawned the worker asked for by `spawn`, its port
 * @typedef {{ t: "worker-error", id: number, message: string }} WorkerError
 * @typedef {{ t: "thread-port", port: MessagePort }} ThreadPort a thread worker's line to the main module thread
 * @typedef {{ t: "threads-ready" }} ThreadsReady the first thread workers are up
 */
export const TO_INSTANCE = Object.freeze({
  INIT: "init",
  MESSAGE: "message",
  VIEW: "view",
  INPUT: "input",
  PAGE_REPLY: "page-reply",
  FULLSCREEN_STATE: "fullscreen-state",
  MOUSE_LOCK_LOST: "mouse-lock-lost",
  FOCUS: "focus",
  SPAWNED: "spawned",
  WORKER_ERROR: "worker-error",
  THREAD_PORT: "thread-port",
  THREADS_READY: "threads-ready",
});

/**
 * Any host worker -> page (embed.js `onMessage`): the instance worker directly, a thread
 * worker after its own kinds (TO_PAGE_FROM_THREAD), the IO worker wrapped in
 * FROM_IO.PAGE.
 * @typedef {{ t: "spawn", id: number, script: string, init: object, transfer: Transferable[] }} Spawn create a host worker for the instance worker
 * @typedef {{ t: "threads", module: WebAssembly.Module, memory: WebAssembly.Memory, hostSab: SharedArrayBuffer, args: string[] }} Threads start the thread pool
 * @typedef {{ t: "refill" }} Refill a thread took a worker from the pool
 * @typedef {{ t: "message", data: any }} ModuleMessage PPB_Messaging.PostMessage
 * @typedef {{ t: "console", level: number, text: string }} ConsoleMessage
 * @typedef {{ t: "output", fd: number, text: string }} Output
 * @typedef {{ t: "created", ok: boolean }} Created DidCreate's answer
 * @typedef {{ t: "missing", name: string }} Missing an interface the host lacks
 * @typedef {{ t: "input-request", classes: number, filtering: boolean }} InputRequest
 * @typedef {{ t: "input-clear", classes: number }} InputClear
 * @typedef {{ t: "input-handled", seq: number, handled: boolean }} InputHandled HandleInputEvent's answer (the page has no use for it)
 * @typedef {{ t: "text-input", type: number }} TextInputType
 * @typedef {{ t: "text-caret", rect: number[] }} TextCaret
 * @typedef {{ t: "text-cancel" }} TextCancel
 * @typedef {{ t: "text-surrounding", text: string | undefined, caret: number, anchor: number }} TextSurrounding
 * @typedef {{ t: "cursor", type: number, w?: number, h?: number, rgba?: Uint8ClampedArray, hx?: number, hy?: number }} Cursor
 * @typedef {{ t: "page-call", what: object, done: { loop: number, func: number, userData: number } }} PageCall a call the page completes
 * @typedef {{ t: "unlock-mouse" }} UnlockMouse
 * @typedef {{ t: "fullscreen", on: boolean }} Fullscreen
 * @typedef {{ t: "gamepad-start", sab: SharedArrayBuffer, at: number }} GamepadStart
 * @typedef {{ t: "audio-start", res: number, memory: ArrayBufferLike, ring: number, rate: number }} AudioStart
 * @typedef {{ t: "audio-stop", res: number }} AudioStop
 * @typedef {{ t: "progress", what: string, bytes?: number, total?: number }} Progress
 * @typedef {{ t: "converted", source: string, ms: number, bytes: number }} Converted
 * @typedef {{ t: "load" }} Load the instance is up
 * @typedef {{ t: "error", error: string }} StartError the instance failed to start
 * @typedef {{ t: "exit", code: number }} Exit the module exited
 * @typedef {{ t: "crash", error: string, stack: string }} Crash the module trapped, or a worker failed
 */
export const TO_PAGE = Object.freeze({
  SPAWN: "spawn",
  THREADS: "threads",
  REFILL: "refill",
  MESSAGE: "message",
  CONSOLE: "console",
  OUTPUT: "output",
  CREATED: "created",
  MISSING: "missing",
  INPUT_REQUEST: "input-request",
  INPUT_CLEAR: "input-clear",
  INPUT_HANDLED: "input-handled",
  TEXT_INPUT: "text-input",
  TEXT_CARET: "text-caret",
  TEXT_CANCEL: "text-cancel",
  TEXT_SURROUNDING: "text-surrounding",
  CURSOR: "cursor",
  PAGE_CALL: "page-call",
  UNLOCK_MOUSE: "unlock-mouse",
  FULLSCREEN: "fullscreen",
  GAMEPAD_START: "gamepad-start",
  AUDIO_START: "audio-start",
  AUDIO_STOP: "audio-stop",
  PROGRESS: "progress",
  CONVERTED: "converted",
  LOAD: "load",
  ERROR: "error",
  EXIT: "exit",
  CRASH: "crash",
});

/**
 * Thread worker -> page (embed.js `onThreadMessage`), besides every TO_PAGE kind.
 * @typedef {{ t: "ready" }} ThreadReady it waits in its pool slot
 * @typedef {{ t: "done" }} ThreadDone its thread ended; its slot is free
 */
export const FROM_THREAD = Object.freeze({
  READY: "ready",
  DONE: "done",
});

/**
 * Page -> thread worker (thread-worker.js), its one message.
 * @typedef {{ t: "init", module: WebAssembly.Module, memory: WebAssembly.Memory, hostSab: SharedArrayBuffer, args: string[], slot: number, io: MessagePort, main: MessagePort }} InitThread
 */
export const TO_THREAD = Object.freeze({
  INIT: "init",
});

/**
 * Module thread -> main module thread: a thread worker's `main` port to the instance
 * worker (`onThreadMessage` there).
 * @typedef {{ t: "call", func: number, userData: number, result: number, delay: number }} MainCall CallOnMainThread
 * @typedef {{ t: "frame", res: number, bitmap: ImageBitmap, scaled?: boolean }} Frame a frame drawn on a module thread
 */
export const TO_MAIN = Object.freeze({
  CALL: "call",
  FRAME: "frame",
});

/**
 * Page -> a host worker it created for the instance worker (parent.js): the port to the
 * instance worker, with the worker's first message.
 * @typedef {{ t: "parent", port: MessagePort, init: object }} Parent
 */
export const TO_HOST_WORKER = Object.freeze({
  PARENT: "parent",
});

/**
 * Instance worker -> IO worker (io-worker.js, through parent.js).
 * @typedef {{ t: "init", module: WebAssembly.Module, memory: WebAssembly.Memory, hostSab: SharedArrayBuffer, urlMap: object, pageUrl: string, refuseUnmapped: boolean, pageLoad?: string }} InitIo
 * @typedef {{ t: "port", port: MessagePort }} IoPortGiven a module thread's line to the IO worker (the page gives thread workers theirs too)
 */
export const TO_IO = Object.freeze({
  INIT: "init",
  PORT: "port",
});

/**
 * IO worker -> instance worker (its parent line).
 * @typedef {{ t: "ready" }} IoReady
 * @typedef {{ t: "page", msg: object }} IoToPage a TO_PAGE message, passed on
 * @typedef {{ t: "crash", error: string, stack: string }} IoCrash the IO worker could not read a message
 */
export const FROM_IO = Object.freeze({
  READY: "ready",
  PAGE: "page",
  CRASH: "crash",
});

/**
 * A module thread -> IO worker, on its port.
 * @typedef {{ t: "hello", cell: SharedArrayBuffer }} IoHello the cell a blocking request waits on
 * @typedef {{ t: "request", id: number, op: string, a: any[], reply: { to: string, loop?: number } | null }} IoRequest one IO_OP; reply.to is a REPLY_TO (null: no answer)
 */
export const TO_IO_PORT = Object.freeze({
  HELLO: "hello",
  REQUEST: "request",
});

/** Where the IO worker answers a request (`reply.to`). */
export const REPLY_TO = Object.freeze({
  /** the calling thread's cell (a blocking call waits on it) */
  CELL: "cell",
  /** a message on the port (FROM_IO_PORT.IO) */
  PORT: "port",
  /** the calling thread's message loop */
  LOOP: "loop",
});

/** The IO worker's requests (`op`): io-worker.js runs them. */
export const IO_OP = Object.freeze({
  WS_CONNECT: "wsConnect",
  WS_RECV: "wsRecv",
  WS_SEND: "wsSend",
  WS_CLOSE: "wsClose",
  WS_FORGET: "wsForget",
  URL_OPEN: "urlOpen",
  URL_READ: "urlRead",
  URL_CLOSE: "urlClose",
  FS_OPEN: "fsOpen",
  REF_MKDIR: "refMkdir",
  REF_TOUCH: "refTouch",
  REF_DELETE: "refDelete",
  REF_RENAME: "refRename",
  REF_QUERY: "refQuery",
  REF_LIST: "refList",
  IO_OPEN: "ioOpen",
  IO_CLOSE: "ioClose",
  IO_QUERY: "ioQuery",
  IO_TOUCH: "ioTouch",
  IO_READ: "ioRead",
  IO_READ_TO_ARRAY: "ioReadToArray",
  IO_WRITE: "ioWrite",
  IO_SET_LENGTH: "ioSetLength",
  IO_FLUSH: "ioFlush",
});

/**
 * IO worker -> module thread, on its port.
 * @typedef {{ t: "io", id: number, r: number, addr: number, len: number }} IoAnswer a request's result and payload block
 */
export const FROM_IO_PORT = Object.freeze({
  IO: "io",
});

/**
 * Command worker (command-worker.js) -> the service's page.
 * @typedef {{ t: "output", fd: number, text: string }} CommandOutput
 * @typedef {{ t: "exit", code: number }} CommandExit
 * @typedef {{ t: "error", error: string }} CommandError
 */
export const FROM_COMMAND = Object.freeze({
  OUTPUT: "output",
  EXIT: "exit",
  ERROR: "error",
});

/** Page -> PPB_Audio's AudioWorklet processor (audio-worklet.js): plain strings. */
export const TO_AUDIO_WORKLET = Object.freeze({
  STOP: "stop",
});

/** Every channel, by the name errors give it: its kinds. */
export const CHANNELS = Object.freeze({
  "page -> instance worker": TO_INSTANCE,
  "host worker -> page": TO_PAGE,
  "thread worker -> page": FROM_THREAD,
  "page -> thread worker": TO_THREAD,
  "module thread -> main module thread": TO_MAIN,
  "page -> host worker": TO_HOST_WORKER,
  "instance worker -> IO worker": TO_IO,
  "IO worker -> instance worker": FROM_IO,
  "module thread -> IO worker": TO_IO_PORT,
  "IO worker -> module thread": FROM_IO_PORT,
  "IO request op": IO_OP,
  "command worker -> page": FROM_COMMAND,
  "page -> audio worklet": TO_AUDIO_WORKLET,
});

/** Whether `kind` is one of `kinds` (a table above). */
export function isKind(kinds, kind) {
  return Object.values(kinds).includes(kind);
}

/**
 * A receiver met a message its channel does not carry: an error in the console naming
 * the channel and the kind, never silence (a sender and a receiver that disagree).
 * @param {string} channel a key of CHANNELS
 * @param {any} kind the message's `t` (or the request's `op`)
 */
export function unknownMessage(channel, kind) {
  console.error(`pexe2wasm: ${channel}: a message of unknown kind ${JSON.stringify(kind) ?? String(kind)}`);
}
