// What every shim shares: chrome.runtime.lastError, the callback-or-promise calling
// convention, manifest JSON as Chrome read it, and values handed from one page to another.

/** An error an API reports through chrome.runtime.lastError (or a rejected promise). */
export class ChromeError extends Error {}

/** A result given to a callback as several arguments (fileSystem.chooseEntry's entry, entries). */
export class Multi {
  constructor(values) {
    this.values = values;
  }
}

/**
 * chrome.runtime.lastError: set only while a callback runs, as Chrome did; an error no
 * callback read is reported on the console as "Unchecked runtime.lastError".
 */
export class LastError {
  /** @param {Pick<Console, "error">} [log] */
  constructor(log = console) {
    this.log = log;
    this.current = undefined;
    this.checked = false;
  }
  /** What chrome.runtime.lastError reads. */
  get() {
    this.checked = true;
    return this.current;
  }
  /** Runs cb(...args) with lastError set to {message} (when message is not null). */
  run(cb, message, args, what = "callback") {
    const prev = /** @type {const} */ ([this.current, this.checked]);
    this.current = message === null || message === undefined ? undefined : { message: String(message) };
    this.checked = false;
    try {
      cb(...args);
    } catch (e) {
      this.log.error(`Error in response to ${what}: ${e?.stack ?? e}`);
    } finally {
      if (this.current && !this.checked) this.log.error(`Unchecked runtime.lastError: ${this.current.message}`);
      [this.current, this.checked] = prev;
    }
  }
  /** An error with no callback to see it. */
  unchecked(message) {
    this.log.error(`Unchecked runtime.lastError: ${message}`);
  }
}

/**
 * Makes an API function from `impl` (which returns a value or a promise, or throws a
 * ChromeError): a trailing function argument is the callback, called later with the
 * result (a Multi spreads) and lastError on failure; without one, a promise is returned
 * (Manifest V3's form; a failure no one awaits is reported as unchecked).
 */
export function apiFunction(lastError, name, impl, { sync = false } = {}) {
  return function (...args) {
    let cb;
    if (args.length && typeof args[args.length - 1] === "function") cb = args.pop();
    else if (args.length && args[args.length - 1] === undefined && !sync) args.pop();
    let p;
    try {
      p = Promise.resolve(impl(...args));
    } catch (e) {
      if (!(e instanceof ChromeError)) throw e; // a bad argument throws, as Chrome's schema checks did
      p = Promise.reject(e);
    }
    if (cb) {
      p.then(
        (v) => lastError.run(cb, null, v instanceof Multi ? v.values : v === undefined ? [] : [v], name),
        (e) => {
          if (!(e instanceof ChromeError)) lastError.log.error(`pexe2wasm: ${name}: ${e?.stack ?? e}`);
          lastError.run(cb, e?.message ?? String(e), [], name);
        },
      );
      return undefined;
    }
    const out = p.then((v) => (v instanceof Multi ? v.values[0] : v));
    out.catch((e) => lastError.unchecked(e?.message ?? String(e)));
    return out;
  };
}

/**
 * JSON as Chrome read manifest.json and messages.json: a byte order mark, // and /* *\/
 * comments and trailing commas are allowed.
 */
export function parseLenientJSON(text) {
  text = text.replace(/^\uFEFF/, "");
  try {
    return JSON.parse(text);
  } catch (first) {
    let out = "";
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (c === '"') {
        let j = i + 1;
        while (j < text.length && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
        out += text.slice(i, j + 1);
        i = j;
      } else if (c === "/" && text[i + 1] === "/") {
        while (i < text.length && text[i] !== "\n") i++;
        out += "\n";
      } else if (c === "/" && text[i + 1] === "*") {
        const end = text.indexOf("*/", i + 2);
        i = end < 0 ? text.length : end + 1;
      } else out += c;
    }
    out = out.replace(/,(\s*[}\]])/g, "$1");
    try {
      return JSON.parse(out);
    } catch {
      throw first;
    }
  }
}

/**
 * A JSON-able copy of `value` made in `win`'s realm (so that `instanceof Array` holds in the
 * page that gets it), as Chrome serialized messages and stored values.
 */
export function cloneInto(win, value) {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value);
  if (text === undefined) return undefined;
  return (win?.JSON ?? JSON).parse(text);
}

/** Chrome's "a-p" alphabet for ids: each hex digit 0-f as a letter a-p. */
export function idFromHex(hex) {
  return [...hex.slice(0, 32)].map((c) => String.fromCharCode(97 + parseInt(c, 16))).join("");
}

/**
 * The app's id: from the manifest's `key` (base64 of the DER public key) as Chrome derived
 * it, the first 128 bits of its SHA-256; else from `fallback` (the package's URL), as Chrome
 * derived an unpacked extension's id from its path. `digest(bytes)` gives SHA-256 bytes.
 */
export async function appId(manifest, fallback, digest) {
  let bytes;
  if (typeof manifest?.key === "string" && manifest.key.trim()) {
    const bin = atob(manifest.key.replace(/\s+/g, ""));
    bytes = Uint8Array.from(bin, (c) => c.charCodeAt(0));
  } else bytes = new TextEncoder().encode(fallback);
  const d = new Uint8Array(await digest(bytes));
  return idFromHex([...d.slice(0, 16)].map((b) => b.toString(16).padStart(2, "0")).join(""));
}

/**
 * SHA-256 in JavaScript, for pages without crypto.subtle (it exists only in secure
 * contexts: a site served over plain http from a host other than localhost has none).
 */
export function sha256(bytes) {
  const K = new Uint32Array([
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
  ]);
  const H = new Uint32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);
  const len = bytes.length;
  const total = Math.ceil((len + 9) / 64) * 64;
  const m = new Uint8Array(total);
  m.set(bytes);
  m[len] = 0x80;
  const dv = new DataView(m.buffer);
  dv.setUint32(total - 8, Math.floor((len * 8) / 2 ** 32));
  dv.setUint32(total - 4, (len * 8) >>> 0);
  const w = new Uint32Array(64);
  const rotr = (x, n) => (x >>> n) | (x << (32 - n));
  for (let off = 0; off < total; off += 64) {
    for (let i = 0; i < 16; i++) w[i] = dv.getUint32(off + 4 * i);
    for (let i = 16; i < 64; i++) {
      const s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >>> 3);
      const s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >>> 10);
      w[i] = (w[i - 16] + s0 + w[i - 7] + s1) >>> 0;
    }
    let [a, b, c, d, e, f, g, h] = H;
    for (let i = 0; i < 64; i++) {
      const t1 = (h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + K[i] + w[i]) >>> 0;
      const t2 = ((rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c))) >>> 0;
      [h, g, f, e, d, c, b, a] = [g, f, e, (d + t1) >>> 0, c, b, a, (t1 + t2) >>> 0];
    }
    [a, b, c, d, e, f, g, h].forEach((v, i) => (H[i] = (H[i] + v) >>> 0));
  }
  const out = new Uint8Array(32);
  const odv = new DataView(out.buffer);
  H.forEach((v, i) => odv.setUint32(4 * i, v));
  return out;
}

/** SHA-256 by crypto.subtle where there is one, else in JavaScript. */
export async function digestSHA256(bytes) {
  const subtle = globalThis.crypto?.subtle;
  if (subtle) return new Uint8Array(await subtle.digest("SHA-256", bytes));
  return sha256(bytes);
}
