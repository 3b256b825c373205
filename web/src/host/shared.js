// The host's shared block: one SharedArrayBuffer every worker of an instance maps, holding
// what Chrome kept in its renderer for the plugin and that any module thread may touch
// (docs/JS-HOST.md): the lock, the var table, the page allocator's free lists, the
// resource table and the thread pool's slots. Var payloads (string bytes, array elements,
// array buffers) live in the module's own memory, so VarToUtf8 and Map hand out pointers
// with no copy.
//
// Layout in i32 words. Every field is reached through these constants only.

export const LOCK = 0; // the host lock: 0 free, 1 held, 2 held with waiters
export const NEXT_TID = 1; // the next thread id (the main thread is 0)
export const VAR_FREE = 2; // head of the free var slots (0 = none)
export const VAR_HIGH = 3; // slots [1, VAR_HIGH) have been used at least once
export const RES_FREE = 4;
export const RES_HIGH = 5;
export const MAIN_LOOP = 6; // the main thread's message loop resource
export const HANDLER = 7; // 8 words: the Messaging 1.2 handler (see ppb/messaging.js)
export const POOL_GEN = 16; // bumped whenever a pooled thread worker becomes idle
export const LIVE_VARS = 17; // vars alive now (for tests and leak reports)
export const BOUND = 18; // the device bound to the instance (Graphics2D or 3D), 0 for none
export const FULLSCREEN = 19; // 1 while the instance's canvas is fullscreen (set by the page)
export const SCREEN_W = 20; // the screen's size in CSS pixels (from the page at start)
export const SCREEN_H = 21;
export const GAMEPAD_ON = 22; // 1 once the page has been asked to sample gamepads
export const CREATOR = 23; // the app's PP_ThreadFunctions: thread_create, then thread_join (24)
export const MESSAGE_SEQ = 25; // the next PostMessage's place in the page's order (ppb/messaging.js)
export const HEAP_FREE = 32; // CLASSES words: heads of the size classes' free lists
export const CLASSES = 12; // 16 B … 32 KiB
export const POOL = 48; // POOL_SLOTS slots of 4 words: state, tid, arg, spare
export const POOL_SLOTS = 64;
export const VAR_BASE = 512; // var slots
export const VAR_WORDS = 8;
export const MAX_VARS = 1 << 17;
export const RES_BASE = VAR_BASE + VAR_WORDS * MAX_VARS;
export const RES_WORDS = 16;
export const MAX_RES = 1 << 14;
// The page's gamepad samples: a sequence word (odd while the page writes), then a
// PP_GamepadsSampleData (1896 bytes) as the module reads it.
export const GAMEPAD = RES_BASE + RES_WORDS * MAX_RES;
export const GAMEPAD_BYTES = 1896;
export const WORDS = GAMEPAD + 2 + GAMEPAD_BYTES / 4;

// Pool slot states.
export const SLOT_EMPTY = 0;
export const SLOT_IDLE = 1;
export const SLOT_ASSIGNED = 2;

export function createSharedBlock() {
  return new SharedArrayBuffer(WORDS * 4);
}

/** The host lock (a three-state futex mutex): short, never held across module code. */
export function lock(h) {
  let c = Atomics.compareExchange(h, LOCK, 0, 1);
  if (c === 0) return;
  for (let spin = 0; spin < 100; spin++) {
    c = Atomics.compareExchange(h, LOCK, 0, 1);
    if (c === 0) return;
  }
  if (c !== 2) c = Atomics.exchange(h, LOCK, 2);
  while (c !== 0) {
    Atomics.wait(h, LOCK, 2);
    c = Atomics.exchange(h, LOCK, 2);
  }
}

export function unlock(h) {
  if (Atomics.sub(h, LOCK, 1) !== 1) {
    Atomics.store(h, LOCK, 0);
    Atomics.notify(h, LOCK, 1);
  }
}

/** Runs f under the host lock. */
export function locked(h, f) {
  lock(h);
  try {
    return f();
  } finally {
    unlock(h);
  }
}
