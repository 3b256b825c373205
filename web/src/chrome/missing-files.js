// A file missing from the package was a network error in Chrome (chrome-extension:// had no
// 404 page): XMLHttpRequest got status 0 and an `error` event, fetch() a TypeError. Apps
// relied on it; the NaCl SDK's background.js reads `run_package_config` and opens its
// default page when the request fails. A static host answers 404 with a body instead, so
// in the app's pages a 404 from inside the package is turned back into that failure.

/** Whether `url` is inside the package at `baseURL`. */
export function inPackage(url, baseURL) {
  try {
    return new URL(url).href.startsWith(baseURL);
  } catch {
    return false;
  }
}

/** Makes `win`'s XMLHttpRequest and fetch fail, as Chrome did, for package files that are not there. */
export function failMissingFiles(win, baseURL) {
  if (!win?.XMLHttpRequest || win.XMLHttpRequest.__pexe2wasmMissing) return;
  const X = win.XMLHttpRequest;
  const base = () => win.document?.baseURI ?? baseURL;
  class PackageXHR extends X {
    constructor(...a) {
      super(...a);
      this.__url = null;
      this.__missing = false;
      // Registered before anything the app adds, so they see the answer first.
      const check = (e) => {
        if (this.readyState >= 2 && !this.__missing && this.__url && super.status === 404 && inPackage(this.__url, baseURL)) this.__missing = true;
        if (this.__missing && e.type !== "readystatechange") e.stopImmediatePropagation();
      };
      this.addEventListener("readystatechange", check);
      this.addEventListener("load", (e) => {
        check(e);
        if (this.__missing) this.dispatchEvent(new win.ProgressEvent("error"));
      });
      for (const t of ["progress"]) this.addEventListener(t, check);
    }
    open(method, url, ...rest) {
      try {
        this.__url = new URL(url, base()).href;
      } catch {
        this.__url = null;
      }
      this.__missing = false;
      return super.open(method, url, ...rest);
    }
    get status() {
      return this.__missing ? 0 : super.status;
    }
    get statusText() {
      return this.__missing ? "" : super.statusText;
    }
    get responseText() {
      return this.__missing ? "" : super.responseText;
    }
    get response() {
      return this.__missing ? (this.responseType === "" || this.responseType === "text" ? "" : null) : super.response;
    }
  }
  Object.defineProperty(PackageXHR, "__pexe2wasmMissing", { value: true });
  Object.defineProperty(PackageXHR, "name", { value: "XMLHttpRequest" });
  win.XMLHttpRequest = PackageXHR;
  const f = win.fetch;
  if (f) {
    win.fetch = function fetch(input, init) {
      return f.call(win, input, init).then((r) => {
        if (r.status === 404 && inPackage(r.url, baseURL)) throw new win.TypeError("Failed to fetch");
        return r;
      });
    };
  }
}
