import assert from "node:assert/strict";
import { test } from "node:test";

import { PP_ERROR as E } from "../../src/host/contract.js";
import { IO_OP } from "../../src/host/protocol.js";
import { register } from "../../src/host/ppb/url.js";
import { fakeInstance, registered } from "./helpers.js";

/**
 * The URL family over a fake instance whose IO requests are kept, not sent: `answer(i, r)`
 * gives request i's answer as the IO worker would, once this thread takes it.
 */
function urls() {
  const inst = fakeInstance();
  const requests = [];
  const told = [];
  const cx = {
    ...inst,
    instance: 2,
    isMain: true,
    callbackRefusal: () => 0,
    /** @param {number} _cb @param {number} op @param {any[]} a @param {(r: number, p?: any) => number} finish */
    io: (_cb, op, a, finish = (r) => r) => {
      requests.push({ op, a, finish });
      return E.COMPLETIONPENDING;
    },
    ioTell: (op, a) => told.push({ op, a }),
  };
  const f = registered(cx, register);
  const answer = (i, r) => requests[i].finish(r, null);
  return { ...inst, f, requests, told, answer };
}

/** A loader and a request for `url`, made through the PPB functions. */
function opened(u) {
  const { f, exports, vars } = u;
  const loader = f("PPB_URLLoader;1.0", "Create")(2);
  const request = f("PPB_URLRequestInfo;1.0", "Create")(2);
  const p = exports.__ppapi_alloc(64);
  vars.write(p, vars.fromJS("nothing-here.txt"));
  assert.equal(f("PPB_URLRequestInfo;1.0", "SetProperty")(request, 0, p), 1);
  return { loader, request, cb: p + 48 };
}

test("an Open answered after Close gets PP_ERROR_ABORTED, whatever the IO worker found", () => {
  const u = urls();
  const { loader, request, cb } = opened(u);
  assert.equal(u.f("PPB_URLLoader;1.0", "Open")(loader, request, cb), E.COMPLETIONPENDING);
  u.f("PPB_URLLoader;1.0", "Close")(loader);
  assert.deepEqual(u.told.map((t) => t.op), [IO_OP.URL_CLOSE]);
  // The IO worker had finished the load (a 404 is PP_OK) before it saw the Close.
  assert.equal(u.answer(0, E.OK), E.ABORTED);
});

test("an Open answered with no Close keeps the IO worker's result", () => {
  const u = urls();
  const { loader, request, cb } = opened(u);
  assert.equal(u.f("PPB_URLLoader;1.0", "Open")(loader, request, cb), E.COMPLETIONPENDING);
  assert.equal(u.answer(0, E.FAILED), E.FAILED);
  assert.equal(u.told.length, 0);
});
