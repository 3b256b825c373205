// The browser converter (converter.wasm of a `pexe2wasm host` folder) run by node over
// pexes: `node web/bench/convert.mjs HOSTDIR OUTDIR PEXE...` writes OUTDIR/N.wasm (the
// module of the Nth pexe) or OUTDIR/N.err (its error text) and prints one JSON line per
// pexe {pexe, ok, ms, bytes}. crates/cli/tests/it/host.rs compares them with the CLI's
// conversions; the times are the converter's in node (V8), docs/PERFORMANCE.md.

import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [host, out, ...pexes] = process.argv.slice(2);
if (!host || !out) {
  console.error("usage: node convert.mjs HOSTDIR OUTDIR PEXE...");
  process.exit(2);
}
const { convertBytes } = await import(pathToFileURL(join(host, "pexe2wasm/convert/converter.js")).href);
const info = JSON.parse(await readFile(join(host, "pexe2wasm/convert/converter.json"), "utf8"));
const t0 = performance.now();
const module = await WebAssembly.compile(await readFile(join(host, "pexe2wasm/convert", info.wasm)));
console.log(JSON.stringify({ converter: info.version, compileMs: performance.now() - t0 }));
for (const [i, pexe] of pexes.entries()) {
  const bytes = new Uint8Array(await readFile(pexe));
  const t = performance.now();
  const r = await convertBytes(module, bytes);
  const ms = performance.now() - t;
  if (r.ok) await writeFile(join(out, `${i}.wasm`), r.wasm);
  else await writeFile(join(out, `${i}.err`), r.error);
  console.log(JSON.stringify({ pexe, ok: r.ok, ms: Math.round(ms * 10) / 10, bytes: r.ok ? r.wasm.byteLength : 0 }));
}
