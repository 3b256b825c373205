// Prints every PPB function the browser host registers, with its wasm signature, as JSON
// lines {interface, function, params, results}: crates/cli's web tests check them against
// the interface description (crates/ppapi), as the command-line host is checked.

import { buildRegistry } from "../src/host/context.js";
import { fakeInstance } from "./unit/helpers.js";

const TYPES = { i: "i32", I: "i64", f: "f32", d: "f64" };
const cx = fakeInstance();
for (const f of buildRegistry(cx).list()) {
  const [p, r] = f.sig.split("->");
  const conv = (s) => [...s].map((c) => TYPES[c] ?? `?${c}`);
  console.log(JSON.stringify({ interface: f.interface, function: f.function, params: conv(p), results: conv(r) }));
}
