// The host's module workers. A site serves the host itself, so its workers are of the
// page's origin; under the browser extension the host's files are the extension's
// (chrome-extension://…, moz-extension://…), and a page may not start another origin's
// script as a worker. Then a blob: worker (the page's origin) imports the file instead: the
// extension lists the host's files as web-accessible (docs/EXTENSION.md).

/** One blob: URL per script, kept: thread workers are started again and again. */
const trampolines = new Map();

/**
 * A module worker running the script at `url`.
 * @param {URL} url
 * @param {string} name
 */
export function hostWorker(url, name) {
  if (url.origin === location.origin) return new Worker(url, { type: "module", name });
  let src = trampolines.get(url.href);
  if (!src) {
    src = URL.createObjectURL(new Blob([`import ${JSON.stringify(url.href)};\n`], { type: "text/javascript" }));
    trampolines.set(url.href, src);
  }
  return new Worker(src, { type: "module", name });
}
