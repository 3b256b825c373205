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
    const prev = [this.current, this.checked];
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
