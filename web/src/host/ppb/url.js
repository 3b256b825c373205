// PPB_URLLoader;1.0, PPB_URLRequestInfo;1.0 and PPB_URLResponseInfo;1.0. A request info
// is data kept in the worker that made it; Open sends it to the IO worker (io/loader.js),
// which fetches, answers with the response's head and streams the body to
// ReadResponseBody. Chrome's rules: URLs relative to the page, other origins only with
// PP_URLREQUESTPROPERTY_ALLOWCROSSORIGINREQUESTS (a CORS request) or through the page's
// --url-map; completion callbacks as for every IO call (context.js, io()).

import { decodeUtf8 } from "../mem.js";
import { FIELDS, KIND } from "../resources.js";
import { LOAD } from "../io/loader.js";
import { T } from "../vars.js";
import { PP_ERROR as E } from "../contract.js";
import { IO_OP } from "../protocol.js";

// PP_URLRequestProperty, with the var type each takes.
const REQ = [
  ["url", T.STRING],
  ["method", T.STRING],
  ["headers", T.STRING],
  ["streamToFile", T.BOOL],
  ["followRedirects", T.BOOL],
  ["recordDownloadProgress", T.BOOL],
  ["recordUploadProgress", T.BOOL],
  ["customReferrerUrl", T.STRING],
  ["allowCrossOrigin", T.BOOL],
  ["allowCredentials", T.BOOL],
  ["customContentTransferEncoding", T.STRING],
  ["prefetchBufferUpperThreshold", T.INT32],
  ["prefetchBufferLowerThreshold", T.INT32],
  ["customUserAgent", T.STRING],
];

/** @type {WeakMap<object, (url: string, done: (loader: number, result: number) => void) => void>} a context -> its openDocument */
const documentOpeners = new WeakMap();

/**
 * A loader already open on `url`, for PPP_Instance.HandleDocumentLoad (a full-frame
 * document or an embed of a type an app's `nacl_modules` handles): Chrome gave the module
 * the loader of the document it was made for, its head received and its body ready for
 * ReadResponseBody. `done(loader, result)` runs on this (the main) thread; the loader is
 * the module's reference (a failed open releases it and gives 0).
 * @param {object} cx
 * @param {string} url
 * @param {(loader: number, result: number) => void} done
 */
export function openDocument(cx, url, done) {
  documentOpeners.get(cx)(url, done);
}

export function register(reg, cx) {
  const requests = new Map(); // request info resource -> its properties and body
  const loaders = new Map(); // loader resource -> {head, request} (this worker's)
  const heads = new Map(); // response info resource -> the response head
  const make = (kind) => cx.vars.locked(() => cx.res.createLocked(kind));

  const Q = "PPB_URLRequestInfo;1.0";
  reg.def(Q, "Create", (instance) => {
    if (instance !== cx.instance) return 0;
    const id = make(KIND.URL_REQUEST);
    requests.set(id, { method: "GET", followRedirects: true, body: [] });
    return id;
  });
  reg.def(Q, "IsURLRequestInfo", (res) => (cx.res.of(res, KIND.URL_REQUEST) >= 0 ? 1 : 0));
  reg.def(Q, "SetProperty", (res, prop, varPtr) => {
    const q = requests.get(res);
    const spec = REQ[prop];
    if (!q || !spec) return 0;
    const v = cx.vars.read(varPtr);
    // Strings may be cleared with an undefined var, as Chrome allowed.
    if (v.t !== spec[1] && !(spec[1] === T.STRING && v.t === T.UNDEFINED)) return 0;
    q[spec[0]] = v.t === T.UNDEFINED ? undefined : spec[1] === T.BOOL ? v.v !== 0 : cx.vars.toJS(v);
    return 1;
  });
  reg.def(Q, "AppendDataToBody", (res, data, len) => {
    const q = requests.get(res);
    if (!q || len >>> 0 > 1 << 30) return 0;
    if (len) q.body.push(cx.mem.bytes(data, len >>> 0));
    return 1;
  });
  // Files from the app's file systems as a body: not yet (FALSE, as for a bad file ref).
  reg.def(Q, "AppendFileToBody", (_res, _ref, _start, _n, _time) => 0);

  const L = "PPB_URLLoader;1.0";
  const loaderAt = (res) => {
    const b = cx.res.of(res, KIND.URL_LOADER);
    return b < 0 ? -1 : b + FIELDS;
  };
  reg.def(L, "Create", (instance) => {
    if (instance !== cx.instance) return 0;
    const id = make(KIND.URL_LOADER);
    const b = cx.res.base(id) + FIELDS;
    cx.h[b + LOAD.RECEIVED] = 0;
    cx.h[b + LOAD.TOTAL] = -1;
    return id;
  });
  reg.def(L, "IsURLLoader", (res) => (loaderAt(res) >= 0 ? 1 : 0));
  reg.def(L, "Open", (res, req, cb) => {
    if (loaderAt(res) < 0) return E.BADRESOURCE;
    // Refused before the loader changes state: it can still be opened.
    const refused = cx.callbackRefusal(cb);
    if (refused) return refused;
    const q = requests.get(req);
    if (!q) return E.BADARGUMENT;
    if (loaders.has(res)) return E.INPROGRESS;
    if (typeof q.url !== "string" || q.url === "") return E.BADARGUMENT;
    let body = null;
    const size = q.body.reduce((n, b) => n + b.length, 0);
    if (size) {
      body = new Uint8Array(size);
      let at = 0;
      for (const b of q.body) {
        body.set(b, at);
        at += b.length;
      }
    }
    const request = {
      url: q.url,
      method: q.method,
      headers: q.headers,
      body,
      followRedirects: q.followRedirects !== false,
      allowCrossOrigin: !!q.allowCrossOrigin,
      allowCredentials: !!q.allowCredentials,
    };
    const l = { head: null, request: q, closed: false };
    loaders.set(res, l);
    return cx.io(cb, IO_OP.URL_OPEN, [res, request], (r, payload) => {
      // Closed before this answer was taken here: aborted, whatever the IO worker found
      // (Chrome's TrackedCallback decides the result on the callback's thread).
      if (l.closed) return E.ABORTED;
      if (r === E.OK && payload) l.head = JSON.parse(decodeUtf8(payload));
      return r;
    });
  });
  reg.def(L, "FollowRedirect", (res, _cb) => (loaderAt(res) < 0 ? E.BADRESOURCE : E.NOTSUPPORTED));
  const progress = (record, get) => (res, doneP, totalP) => {
    const b = loaderAt(res);
    const l = loaders.get(res);
    if (b < 0 || !l || !l.request[record]) return 0;
    const [done, total] = get(b, l);
    for (const [p, v] of [[doneP, done], [totalP, total]]) {
      if (!p) continue;
      cx.mem.check(p, 8);
      cx.mem.dv.setBigInt64(p, BigInt(v), true);
    }
    return 1;
  };
  reg.def(L, "GetUploadProgress", progress("recordUploadProgress", (_b, l) => {
    const n = l.request.body.reduce((s, x) => s + x.length, 0);
    return [l.head ? n : 0, n];
  }));
  reg.def(L, "GetDownloadProgress", progress("recordDownloadProgress", (b) => [Atomics.load(cx.h, b + LOAD.RECEIVED), Atomics.load(cx.h, b + LOAD.TOTAL)]));
  reg.def(L, "GetResponseInfo", (res) => {
    const l = loaders.get(res);
    if (!l?.head) return 0;
    const id = make(KIND.URL_RESPONSE);
    heads.set(id, l.head);
    return id;
  });
  reg.def(L, "ReadResponseBody", (res, buffer, n, cb) => {
    if (loaderAt(res) < 0) return E.BADRESOURCE;
    const l = loaders.get(res);
    if (!l?.head) return E.FAILED;
    if (n <= 0 || buffer === 0) return E.BADARGUMENT;
    cx.mem.check(buffer, n);
    return cx.io(cb, IO_OP.URL_READ, [res, buffer, n], (r) => (l.closed ? E.ABORTED : r));
  });
  reg.def(L, "FinishStreamingToFile", (res, _cb) => (loaderAt(res) < 0 ? E.BADRESOURCE : E.NOTSUPPORTED));
  reg.def(L, "Close", (res) => {
    if (loaderAt(res) < 0) return;
    const l = loaders.get(res);
    if (l) l.closed = true;
    cx.ioTell(IO_OP.URL_CLOSE, [res]);
  });

  const R = "PPB_URLResponseInfo;1.0";
  reg.def(R, "IsURLResponseInfo", (res) => (cx.res.of(res, KIND.URL_RESPONSE) >= 0 ? 1 : 0));
  reg.def(R, "GetProperty", (ret, res, prop) => {
    const h = heads.get(res);
    const out = (v) => cx.vars.write(ret, v === undefined ? { t: T.UNDEFINED, v: 0 } : cx.vars.fromJS(v));
    if (!h) return out(undefined);
    // PP_URLResponseProperty: URL, REDIRECTURL, REDIRECTMETHOD, STATUSCODE, STATUSLINE, HEADERS.
    const values = [h.url, h.redirectUrl, "", h.status | 0, h.statusLine, h.headers];
    out(values[prop]);
  });
  reg.def(R, "GetBodyAsFileRef", (_res) => 0);

  // openDocument above, over this context's loaders.
  documentOpeners.set(cx, (url, done) => {
    const id = make(KIND.URL_LOADER);
    const b = cx.res.base(id) + FIELDS;
    cx.h[b + LOAD.RECEIVED] = 0;
    cx.h[b + LOAD.TOTAL] = -1;
    const request = { url, method: "GET", headers: undefined, body: null, followRedirects: true, allowCrossOrigin: false, allowCredentials: false, document: true };
    const l = { head: null, request: { ...request, body: [] } };
    loaders.set(id, l);
    cx.ioAsync(IO_OP.URL_OPEN, [id, request], (r, payload) => {
      if (r === E.OK && payload) l.head = JSON.parse(decodeUtf8(payload));
      if (r !== E.OK) {
        cx.releaseResource(id); // through the hooks: the loader's record goes too
        return done(0, r);
      }
      done(id, r);
    });
  });

  // The worker's records of a resource whose last reference is gone; a loader's load is
  // the IO worker's, which ends it.
  reg.onRelease(KIND.URL_LOADER, (res) => {
    loaders.delete(res);
    cx.ioTell(IO_OP.URL_CLOSE, [res]);
  });
  reg.onRelease(KIND.URL_REQUEST, (res) => requests.delete(res));
  reg.onRelease(KIND.URL_RESPONSE, (res) => heads.delete(res));
}
