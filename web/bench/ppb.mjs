// The host side of PPB calls, in V8 (Node; Chromium runs the same engine): what one call
// costs in the host's JavaScript, the shared var table and its lock included, without the
// wasm-to-JavaScript transition (a few ns in V8). Usage: node bench/ppb.mjs [N]

import { buildRegistry } from "../src/host/context.js";
import { fakeInstance } from "../tests/unit/helpers.js";

const n = Number(process.argv[2] ?? 1_000_000);
const cx = fakeInstance();
Object.assign(cx, { instance: 2, isMain: false, toPage: () => {}, console: () => {} });
const reg = buildRegistry(cx);
const fn = (i, f) => reg.get(i, f).impl;
const fromUtf8 = fn("PPB_Var;1.2", "VarFromUtf8");
const addRef = fn("PPB_Var;1.2", "AddRef");
const release = fn("PPB_Var;1.2", "Release");
const toUtf8 = fn("PPB_Var;1.2", "VarToUtf8");
const postMessage = fn("PPB_Messaging;1.0", "PostMessage");
const text = new TextEncoder().encode("bestmove e2e4");
const data = 8192;
const v = 8256;
cx.mem.write(data, text);
fromUtf8(v, data, text.length);

function time(name, f) {
  for (let i = 0; i < n / 10; i++) f();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) f();
  const ns = Number(process.hrtime.bigint() - t0) / n;
  console.log(`${name.padEnd(44)} ${ns.toFixed(1).padStart(7)} ns`);
  return ns;
}

const out = {};
out.addRefRelease = time("Var AddRef + Release (a string)", () => {
  addRef(v);
  release(v);
});
out.fromUtf8Release = time("VarFromUtf8 (13 bytes) + Release", () => {
  fromUtf8(v + 16, data, text.length);
  release(v + 16);
});
out.toUtf8 = time("VarToUtf8", () => toUtf8(v, v + 32));
out.postMessage = time("PostMessage (a 13-byte string, before the clone)", () => postMessage(2, v));
console.log(JSON.stringify({ n, ...Object.fromEntries(Object.entries(out).map(([k, x]) => [k, Math.round(x * 10) / 10])) }));
