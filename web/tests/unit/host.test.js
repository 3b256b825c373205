import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { test } from "node:test";

import { COMPLETION_CALLBACKS, OFFERED, PP_COMPLETIONCALLBACK_FLAG, PP_ERROR, SIGNATURES } from "../../src/host/contract.js";
import { blockSize, classOf } from "../../src/host/heap.js";
import { didCreateSpace } from "../../src/host/ppp.js";
import { Registry } from "../../src/host/registry.js";
import { KIND } from "../../src/host/resources.js";
import { importedMemory } from "../../src/host/wasm-info.js";
import { fakeInstance } from "./helpers.js";

test("size classes", () => {
  assert.equal(classOf(1), 0);
  assert.equal(classOf(16), 0);
  assert.equal(classOf(17), 1);
  assert.equal(classOf(32768), 11);
  assert.equal(classOf(32769), -1);
  assert.equal(blockSize(40000), 65536);
});

test("the registry takes signatures from the description and refuses what it lacks", () => {
  const r = new Registry();
  // PPB_Var;1.1 VarToUtf8(PP_Var, uint32_t*) -> const char*: ii->i (contract.js, generated).
  assert.throws(() => r.def("PPB_Var;1.1", "VarToUtf8", (a) => a), /1 parameters for signature ii->i/);
  r.def("PPB_Var;1.1", "VarToUtf8", (a, b) => a + b);
  assert.throws(() => r.def("PPB_Var;1.1", "VarToUtf8", (a, b) => a + b), /twice/);
  assert.throws(() => r.def("PPB_Var;1.1", "NoSuch", () => 0), /not a function of an interface this host offers/);
  assert.throws(() => r.def("PPB_X;1.0", "F", () => 0), /not a function of an interface this host offers/);
  assert.ok(r.offers("PPB_Var;1.1"));
  assert.ok(!r.offers("PPB_X;1.0"));
  assert.deepEqual(r.list(), [{ interface: "PPB_Var;1.1", function: "VarToUtf8", sig: "ii->i" }]);
});

test("the generated contract has the description's values", () => {
  assert.equal(PP_ERROR.OK, 0);
  assert.equal(PP_ERROR.COMPLETIONPENDING, -1);
  assert.equal(PP_ERROR.BADRESOURCE, -5);
  assert.equal(PP_ERROR.BLOCKS_MAIN_THREAD, -13);
  assert.equal(PP_COMPLETIONCALLBACK_FLAG.OPTIONAL, 1);
  assert.ok(Object.isFrozen(PP_ERROR));
  assert.equal(SIGNATURES["PPB_FileSystem;1.0"].Open, "iIi->i");
  assert.equal(COMPLETION_CALLBACKS["PPB_FileIO;1.0"].Open, 3);
  assert.equal(COMPLETION_CALLBACKS["PPB_Core;1.0"], undefined, "CallOnMainThread schedules work");
  assert.deepEqual([...OFFERED.PPB_Var], ["PPB_Var;1.0", "PPB_Var;1.1", "PPB_Var;1.2"]);
});

test("resources count references and their slots are used again", () => {
  const { res } = fakeInstance();
  const a = res.create(KIND.VIEW);
  assert.ok(res.of(a, KIND.VIEW) >= 0);
  assert.equal(res.of(a, KIND.INPUT_EVENT), -1, "another kind");
  res.addRef(a);
  assert.equal(res.release(a), null);
  assert.equal(res.release(a)?.kind, KIND.VIEW, "the last release says what ended");
  assert.equal(res.of(a, KIND.VIEW), -1);
  assert.equal(res.create(KIND.MESSAGE_LOOP), a);
  assert.equal(res.release(12345), null, "an unknown id is ignored");
});

test("DidCreate's space: argn and argv point at NUL-terminated strings inside it", () => {
  const attrs = [
    ["src", "app.nmf"],
    ["type", "application/x-pnacl"],
  ];
  const { size, fill } = didCreateSpace(attrs);
  const base = 5000;
  const b = fill(base);
  assert.equal(b.length, size);
  const dv = new DataView(b.buffer);
  const str = (p) => {
    let e = p - base;
    while (b[e] !== 0) e++;
    return new TextDecoder().decode(b.slice(p - base, e));
  };
  assert.equal(str(dv.getUint32(0, true)), "src");
  assert.equal(str(dv.getUint32(4, true)), "type");
  assert.equal(str(dv.getUint32(8, true)), "app.nmf");
  assert.equal(str(dv.getUint32(12, true)), "application/x-pnacl");
});

test("the imported memory's limits are read from the import section", () => {
  // (module (import "env" "memory" (memory 17 65536 shared)))
  const bytes = new Uint8Array([
    0, 0x61, 0x73, 0x6d, 1, 0, 0, 0, 2, 0x12, 1, 3, 0x65, 0x6e, 0x76, 6, 0x6d, 0x65, 0x6d, 0x6f, 0x72, 0x79, 2, 3,
    17, 0x80, 0x80, 4,
  ]);
  assert.ok(WebAssembly.validate(bytes), "the test module is valid");
  assert.deepEqual(importedMemory(bytes.buffer), { min: 17, max: 65536, shared: true });
  assert.throws(() => importedMemory(new Uint8Array([1, 2, 3]).buffer), /not a WebAssembly module/);
  assert.equal(importedMemory(new Uint8Array([0, 0x61, 0x73, 0x6d, 1, 0, 0, 0]).buffer), null);
});

test("the host's modules take signatures and result codes from contract.js, not their own", () => {
  const root = new URL("../../src/host/", import.meta.url);
  const found = [];
  for (const name of readdirSync(root, { recursive: true })) {
    const file = String(name);
    if (!file.endsWith(".js") || file === "contract.js" || file === "registry.js") continue;
    const text = readFileSync(new URL(file, root), "utf8");
    // A signature literal ("iii->i"), a result-code table ({ OK: 0, ... FAILED: -2 }) or a
    // bare result code returned (-1 is left out: it is also "none" in several places).
    for (const m of text.matchAll(/"[iIfd]*->[iIfd]*"|\bOK: 0\b|\bFAILED: -2\b|return -(?:1[0-3]|[2-9]|5[0-3]);/g)) found.push(`${file}: ${m[0]}`);
  }
  assert.deepEqual(found, []);
});
