// A host worker's line to the worker that uses it. The page creates every host worker,
// because Firefox sometimes hangs for good inside a worker's `new Worker` (decision 0017).
// The IO worker is asked for by the instance worker (`spawn` in instance-worker.js): the
// page hands it a MessagePort to the instance worker, with the first message in the same
// post (TO_HOST_WORKER.PARENT: {t, port, init}): Firefox cannot send a WebAssembly.Module
// over a MessagePort, so the module and memory come from the page. Without that message
// (a thread worker, whose parent is the page; a test harness that created the worker
// itself), the line is `self`; messages the page posts to the worker itself (the IO
// worker's ports for thread workers) reach the handler too.

import { TO_HOST_WORKER, TO_PAGE } from "./protocol.js";

/**
 * Calls `handler(message)` for each message from the parent; returns the function that
 * posts to it: `(message, transfer) => void`.
 */
export function parentLine(handler) {
  // In a worker `self` posts as a MessagePort does (the checker knows only the page's `self`).
  let parent = /** @type {MessagePort} */ (/** @type {unknown} */ (self));
  const postToParent = (msg, transfer = []) => parent.postMessage(msg, transfer);
  self.onmessage = (e) => {
    if (e.data?.t === TO_HOST_WORKER.PARENT) {
      parent = e.data.port;
      parent.onmessage = (ev) => handler(ev.data);
      handler(e.data.init);
      return;
    }
    handler(e.data);
  };
  // A message that cannot be read here would otherwise vanish and leave the parent waiting
  // (a crash: the page reads it as TO_PAGE.CRASH, the instance worker as FROM_IO.CRASH).
  self.onmessageerror = () => postToParent({ t: TO_PAGE.CRASH, error: "a host worker could not read a message from the host", stack: "" });
  return postToParent;
}
