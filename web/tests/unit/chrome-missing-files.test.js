import assert from "node:assert/strict";
import { test } from "node:test";

import { failMissingFiles, inPackage } from "../../src/chrome/missing-files.js";

const BASE = "http://127.0.0.1:1/app/";

/** A window whose XMLHttpRequest answers from `files` (404 for the rest) and whose fetch does too. */
function fakeWindow(files) {
  class FakeXHR extends EventTarget {
    /** @type {(() => void) | null} */
    onreadystatechange = null;
    /** @type {(() => void) | null} */
    onload = null;
    open(_m, url) {
      this.url = new URL(url, BASE).href;
      this.readyState = 1;
    }
    send() {
      setTimeout(() => {
        const p = this.url.slice(BASE.length);
        const hit = this.url.startsWith(BASE) ? Object.hasOwn(files, p) : true;
        this.readyState = 4;
        this._status = hit ? 200 : 404;
        this._text = hit ? (files[p] ?? "outside") : "not found";
        this.dispatchEvent(new Event("readystatechange"));
        this.onreadystatechange?.();
        this.dispatchEvent(new Event("load"));
        this.onload?.();
      }, 0);
    }
    get status() {
      return this._status;
    }
    get statusText() {
      return this._status === 200 ? "OK" : "Not Found";
    }
    get responseText() {
      return this._text;
    }
    get response() {
      return this._text;
    }
  }
  const win = {
    XMLHttpRequest: FakeXHR,
    ProgressEvent: Event,
    TypeError,
    document: { baseURI: BASE },
    fetch: async (url) => {
      const u = new URL(url, BASE).href;
      const hit = Object.hasOwn(files, u.slice(BASE.length));
      return { url: u, status: hit ? 200 : 404, text: async () => files[u.slice(BASE.length)] };
    },
  };
  failMissingFiles(win, BASE);
  return win;
}

const request = (win, url) =>
  new Promise((resolve) => {
    const x = new win.XMLHttpRequest();
    const seen = [];
    x.open("GET", url, true);
    x.onload = () => resolve({ event: "load", status: x.status, text: x.responseText, seen });
    x.addEventListener("error", () => resolve({ event: "error", status: x.status, text: x.responseText, seen }));
    x.onreadystatechange = () => seen.push([x.readyState, x.status]);
    x.send();
  });

test("a package file that is not there fails as in Chrome: status 0 and error, not load", async () => {
  const win = fakeWindow({ "run_package_config": "pnacl Release" });
  assert.deepEqual(await request(win, "run_package_config"), { event: "load", status: 200, text: "pnacl Release", seen: [[4, 200]] });
  assert.deepEqual(await request(win, "missing_config"), { event: "error", status: 0, text: "", seen: [[4, 0]] });
  await assert.rejects(win.fetch("nothing.json"), TypeError);
  assert.equal((await win.fetch("run_package_config")).status, 200);
});

test("only URLs inside the package", () => {
  assert.equal(inPackage(`${BASE}x/y`, BASE), true);
  assert.equal(inPackage("http://127.0.0.1:1/other/x", BASE), false);
  assert.equal(inPackage("not a url", BASE), false);
});
