// Page load → an app's first message, with the pexe converted in the browser (the drop-in
// script) against the pre-converted page (`pexe2wasm web`), measured in the same run
// (issue 32's figure; docs/PERFORMANCE.md):
//
//   node web/bench/page-load.mjs SITE PAGE     e.g. ../shared/fixtures/sites/stockfish-pexe nacl/index.html
//
// PEXE2WASM: the binary (default target/release/pexe2wasm); BROWSERS: default "chromium
// firefox"; RUNS: cold+warm pairs per page and browser (default 2); HOST_DIR: see below. Each run starts the
// browser on a fresh profile (cold: nothing cached, neither the converted module nor
// anything else) and loads the page once more in it (warm: the converted module from Cache
// Storage). Both pages are served by tests/browser/serve.mjs (loopback, `no-store`, so the
// pre-converted page fetches its .wasm again on the warm load), the drop-in one with the
// script added to the page as served (the site's files stay as they are). The time is
// performance.now() (from the navigation's start) at the first `message` event of any
// <embed>, taken by a probe script served before the page's own. Prints one JSON line per
// measurement and a table of medians (the ratios: the median of the runs' own ratios).

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const [site, page] = process.argv.slice(2);
if (!site || !page) {
  console.error("usage: node page-load.mjs SITE PAGE   (PAGE relative to SITE)");
  process.exit(2);
}
const web = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const bin = process.env.PEXE2WASM ?? join(web, "../target/release/pexe2wasm");
const browsers = (process.env.BROWSERS ?? "chromium firefox").split(/\s+/).filter(Boolean);
const runs = Number(process.env.RUNS ?? 2);
const tmp = mkdtempSync(join(tmpdir(), "pexe2wasm-page-load-"));

/** Runs pexe2wasm with `args`; exits on failure. */
function pexe2wasm(...args) {
  const o = spawnSync(bin, args, { encoding: "utf8" });
  if (o.status !== 0) {
    console.error(`pexe2wasm ${args.join(" ")}: ${o.stderr || o.error}`);
    process.exit(1);
  }
}

// The probe: the time of the first message any NaCl element fires (they do not bubble, so
// a capturing listener on the window).
const PROBE = `addEventListener("message", (e) => { if (e.target !== window && !window.__firstMessageAt) window.__firstMessageAt = performance.now(); }, true);\n`;
// The pre-converted site, and the drop-in host, each with the probe.
pexe2wasm("web", site, "-o", join(tmp, "pre"));
// HOST_DIR: a host folder to use instead (one with changed web/src files copied in).
if (process.env.HOST_DIR) spawnSync("cp", ["-r", process.env.HOST_DIR, join(tmp, "host")]);
else pexe2wasm("host", "-o", join(tmp, "host"));
writeFileSync(join(tmp, "pre", "pexe2wasm-first-message.js"), PROBE);
writeFileSync(join(tmp, "host", "first-message.js"), PROBE);

/** serve.mjs over `root` with `env`; resolves to {base, child}. */
function serve(root, env) {
  return new Promise((ok, fail) => {
    const child = spawn("node", [join(web, "tests/browser/serve.mjs"), root, "0"], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.once("data", (d) => ok({ base: String(d).trim().replace(/\/$/, ""), child }));
    child.once("error", fail);
  });
}

const servers = {
  preconverted: await serve(join(tmp, "pre"), { INJECT: "/pexe2wasm-first-message.js" }),
  "drop-in": await serve(resolve(site), { MOUNT: `/pexe2wasm-host/=${join(tmp, "host")}`, INJECT: "/pexe2wasm-host/first-message.js /pexe2wasm-host/pexe2wasm.js" }),
};

/** One cold load and one warm load of `url` in `browser` on a fresh profile: [cold, warm] ms. */
function coldAndWarm(browser, url, n) {
  const profile = join(tmp, `profile-${browser}-${n}`);
  const wait = { wait: "window.__firstMessageAt", ms: 600000 };
  const o = spawnSync("node", ["tests/browser/run.mjs"], {
    cwd: web,
    encoding: "utf8",
    env: { ...process.env, BROWSER: browser, URL: url, SCENARIO: "steps", STEPS: JSON.stringify([wait, { reload: true }, wait]), PAGE_ERRORS_OK: "1", PROFILE: profile },
  });
  rmSync(profile, { recursive: true, force: true });
  let report = null;
  try {
    report = JSON.parse(o.stdout.trim().split("\n").pop());
  } catch {
    // below
  }
  const steps = report?.steps ?? [];
  if (typeof steps[0] !== "number" || typeof steps[2] !== "number") {
    console.error(`${browser} ${url}: no first message: ${report ? JSON.stringify(report.driverError ?? report.steps) : o.stderr}`);
    return null;
  }
  return [steps[0], steps[2]];
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const table = [];
for (const browser of browsers) {
  const got = { preconverted: { cold: [], warm: [] }, "drop-in": { cold: [], warm: [] } };
  for (let n = 0; n < runs; n++) {
    // Alternated, so that a machine that slows down slows both.
    for (const [kind, { base }] of Object.entries(servers)) {
      const r = coldAndWarm(browser, `${base}/${page}`, `${kind}-${n}`);
      if (!r) continue;
      got[kind].cold.push(r[0]);
      got[kind].warm.push(r[1]);
      console.log(JSON.stringify({ browser, page: kind, run: n, coldMs: Math.round(r[0]), warmMs: Math.round(r[1]) }));
    }
  }
  const m = (kind, w) => (got[kind][w].length ? Math.round(median(got[kind][w])) : NaN);
  // The ratio of each run's pair (measured one after the other), then their median: on a
  // loaded machine steadier than the ratio of the medians.
  const ratio = (w) => {
    const pairs = got.preconverted[w].map((pre, i) => got["drop-in"][w][i] / pre).filter((r) => Number.isFinite(r));
    return pairs.length ? median(pairs).toFixed(2) : "-";
  };
  const cold = [m("preconverted", "cold"), m("drop-in", "cold")];
  const warm = [m("preconverted", "warm"), m("drop-in", "warm")];
  table.push(`| ${browser} | ${cold[0]} | ${cold[1]} | ${ratio("cold")}× | ${warm[0]} | ${warm[1]} | ${ratio("warm")}× |`);
}
console.log(`\nmedians of ${runs} runs, ms from navigation to the first message (ratio: the median of each run's drop-in/pre-converted):`);
console.log("| browser | pre-converted cold | drop-in cold | ratio | pre-converted warm | drop-in warm | ratio |");
console.log("|---|---|---|---|---|---|---|");
for (const row of table) console.log(row);
for (const { child } of Object.values(servers)) child.kill();
rmSync(tmp, { recursive: true, force: true });
