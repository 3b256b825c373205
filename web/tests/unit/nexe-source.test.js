// Where an element's module comes from when its manifest names an x86-64 nexe and no pexe
// (embed.js: pexeUrl, moduleUrl, moduleSource): the .wasm `pexe2wasm web` wrote beside
// the nexe, or the nexe itself, translated in the browser as a pexe is converted.
import assert from "node:assert/strict";
import { test } from "node:test";

import { fakeEmbedPage } from "./helpers.js";

/** Files the fake server has (URL path -> JSON text); 404 for the rest. */
const files = new Map();

async function embed() {
  fakeEmbedPage();
  Object.defineProperty(globalThis, "location", { configurable: true, value: new URL("http://127.0.0.1/app/index.html") });
  globalThis.fetch = /** @type {any} */ (
    async (/** @type {string} */ url) => {
      const body = files.get(new URL(url, "http://127.0.0.1/app/index.html").pathname);
      return { ok: body !== undefined, status: body === undefined ? 404 : 200, headers: new Headers({ "content-type": "application/wasm" }), json: async () => JSON.parse(body ?? "") };
    }
  );
  return import("../../src/embed.js");
}

test("a manifest's x86-64 nexe is the program; its module is the .wasm beside it", async () => {
  const { pexeUrl, moduleUrl, moduleSource } = await embed();
  files.set("/app/ck.nmf", '{"program": {"x86-64": {"url": "bin/ck_x86_64.nexe"}, "arm": {"url": "bin/ck_arm.nexe"}}}');
  assert.equal(await pexeUrl("ck.nmf"), "http://127.0.0.1/app/bin/ck_x86_64.nexe");
  assert.equal(await moduleUrl("ck.nmf"), "http://127.0.0.1/app/bin/ck_x86_64.wasm");
  // The drop-in script's default (convert in the browser): the .wasm when the server has
  // it, else the nexe, translated in the browser.
  const nexe = "http://127.0.0.1/app/bin/ck_x86_64.nexe";
  assert.deepEqual(await moduleSource(nexe, { preconverted: false }), { url: nexe, pexeUrl: nexe });
  files.set("/app/bin/ck_x86_64.wasm", "");
  assert.deepEqual(await moduleSource(nexe, { preconverted: false }), { url: "http://127.0.0.1/app/bin/ck_x86_64.wasm" });
  assert.deepEqual(await moduleSource(nexe, {}), { url: "http://127.0.0.1/app/bin/ck_x86_64.wasm" });
  // A pexe keeps its way.
  assert.deepEqual(await moduleSource("http://127.0.0.1/app/a.pexe", { preconverted: false }), { url: "http://127.0.0.1/app/a.pexe", pexeUrl: "http://127.0.0.1/app/a.pexe" });
});

test("a manifest of other architectures only is named", async () => {
  const { pexeUrl } = await embed();
  files.set("/app/arm.nmf", '{"program": {"arm": {"url": "a.nexe"}, "x86-32": {"url": "b.nexe"}}}');
  await assert.rejects(pexeUrl("arm.nmf"), /arm\.nmf names native programs for arm\/x86-32 and no pexe: of native programs, only an x86-64 nexe translates/);
  files.set("/app/none.nmf", "{}");
  await assert.rejects(pexeUrl("none.nmf"), /names no program\.portable\.pnacl-translate\.url/);
});
