// The `chrome` object of a page of a Chrome app or extension. A classic script that each
// page of the package loads first (pexe2wasm web adds it with data-package="P", the
// package's root relative to the page), so `chrome` is there before the page's own scripts.
//
// - Under the launcher (any same-origin frame above has window.__pexe2wasmChrome): the
//   page's `chrome` comes from that shared runtime.
// - A page the app opened in a new tab (window.open, a link with a target): the runtime of
//   the app that opened it (window.opener's launcher).
// - A page of an app opened by itself, at the top of its tab: it goes to the app's launcher
//   (location.replace), as the user meant to run the app, not one of its windows alone.
// - A page of an extension opened by itself (its popup or options page, say), or a page
//   that merely sits in a folder with a manifest.json: it stays; it gets a runtime of its
//   own (no background, no windows), loaded a moment later, and calls made before that are
//   held and made then.
// - A page inside someone else's frame with no launcher: left alone.
(function pexe2wasmChromeApis() {
  "use strict";
  var script = /** @type {HTMLScriptElement} */ (document.currentScript);
  var pkg = (script && script.getAttribute("data-package")) || "";
  function findHost(start) {
    var w = start;
    for (;;) {
      try {
        if (w.__pexe2wasmChrome) return w.__pexe2wasmChrome;
      } catch {
        return null; // another origin above
      }
      if (w === w.parent) return null;
      w = w.parent;
    }
  }
  // A frame under the launcher, or a tab the app opened (window.open, a link to a new tab):
  // the app's runtime, as Chrome gave such pages the app's APIs.
  var host = findHost(window);
  try {
    if (!host && window.opener) host = findHost(window.opener);
  } catch {
    host = null;
  }
  function setChrome(c) {
    try {
      window.chrome = c;
    } catch {
      /* defined below */
    }
    // Chromium's own window.chrome may not take an assignment.
    if (window.chrome !== c) Object.defineProperty(window, "chrome", { value: c, writable: true, configurable: true, enumerable: true });
  }
  if (host) {
    setChrome(host.apisFor(window));
    return;
  }
  if (window !== window.top) return;
  var base = new URL(pkg || "./", location.href).href;
  var manifest = null;
  try {
    // Synchronous, once, and only for a page opened without its launcher: the page must
    // not run on before we know whether it should be the launcher instead.
    var xhr = new XMLHttpRequest();
    xhr.open("GET", new URL("manifest.json", base).href, false);
    xhr.send();
    if (xhr.status === 200) manifest = JSON.parse(xhr.responseText.replace(/^\uFEFF/, ""));
  } catch {
    manifest = null;
  }
  var isApp = !!(manifest && manifest.app && (manifest.app.background || (manifest.app.launch && manifest.app.launch.local_path)));
  if (isApp && !window.opener) {
    window.stop();
    location.replace(new URL("pexe2wasm-launch.html", base).href + location.hash);
    return;
  }
  if (!manifest) return;
  // An extension's page: calls wait for its own runtime, then are made in order.
  var held = [];
  var real = null;
  function resolvePath(path) {
    var v = real;
    var self = null;
    for (var i = 0; i < path.length; i++) {
      self = v;
      v = v === null || v === undefined ? undefined : v[path[i]];
    }
    return { v: v, self: self };
  }
  function later(path) {
    return new Proxy(function () {}, {
      get: function (_t, p) {
        if (typeof p === "symbol" || p === "then") return undefined;
        if (real) return resolvePath(path.concat([p])).v;
        return later(path.concat([p]));
      },
      apply: function (_t, _this, args) {
        if (real) {
          var r = resolvePath(path);
          return r.v.apply(r.self, args);
        }
        held.push({ path: path, args: args });
        return undefined;
      },
    });
  }
  setChrome(later([]));
  import(new URL("launcher.js", script.src).href)
    .then(function (m) {
      return m.standalone(window, base);
    })
    .then(function (chrome) {
      real = chrome;
      setChrome(chrome);
      held.splice(0).forEach(function (h) {
        var r = resolvePath(h.path);
        if (typeof r.v === "function") r.v.apply(r.self, h.args);
      });
    })
    .catch(function (e) {
      console.warn("pexe2wasm: this page's chrome.* could not start: " + (e && e.message));
    });
})();
