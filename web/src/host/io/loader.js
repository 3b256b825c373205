// The IO worker's URL loads (PPB_URLLoader's browser side): fetch() with the request the
// app built, the response's head answered to Open, and the body read on demand by
// ReadResponseBody. Kept here, off the module's threads, so a body streams in while they
// run and a module thread may block on a read. Download progress is written into the
// loader's resource words so GetDownloadProgress answers from any thread.

import { FIELDS } from "../resources.js";
import { mapUrl } from "./urlmap.js";
import { PP_ERROR as E } from "../contract.js";

export const LOAD = { RECEIVED: 0, TOTAL: 1, STATE: 2 };
const encoder = new TextEncoder();
// Methods fetch() refuses (and Chrome's loader refused).
const FORBIDDEN = new Set(["CONNECT", "TRACE", "TRACK"]);

export class Loaders {
  /**
   * h, res: the host block and resource table; page: the page's URL; map: the URL map;
   * note(text): the console; refuseUnmapped: other origins only through the map.
   */
  constructor(h, res, page, map, note, refuseUnmapped = false) {
    this.refuseUnmapped = refuseUnmapped;
    this.h = h;
    this.res = res;
    this.page = page;
    this.map = map;
    this.note = note;
    this.loads = new Map(); // loader resource -> {reader, chunk, at, done, controller}
  }

  field(res, f, v) {
    Atomics.store(this.h, this.res.base(res) + FIELDS + f, v);
  }

  /**
   * urlOpen [res, request]: request = {url, method, headers, body (Uint8Array|null),
   * followRedirects, allowCrossOrigin, allowCredentials, document}. Answers PP_OK with the response
   * head as JSON, or an error: NOACCESS for another origin the app may not reach (neither
   * allowed cross-origin nor mapped), FAILED for a network error, ABORTED when urlClose
   * came first.
   */
  async open(res, q) {
    if (this.loads.has(res)) return [E.INPROGRESS, null];
    let target;
    try {
      target = new URL(q.url, this.page);
    } catch {
      return [E.BADARGUMENT, null];
    }
    // blob: only for the document an instance was made for (a file the user opened with an
    // app's nacl_modules handler; url.js openDocument): a module's own requests are http(s).
    const blob = q.document === true && target.protocol === "blob:";
    if (target.protocol !== "http:" && target.protocol !== "https:" && !blob) return [E.NOACCESS, null];
    const asked = target.href;
    const mapped = mapUrl(asked, this.map);
    const sameOrigin = target.origin === new URL(this.page).origin;
    if (!sameOrigin && mapped === asked && (!q.allowCrossOrigin || this.refuseUnmapped)) {
      const why = this.refuseUnmapped
        ? "another origin than the page's, and this page fetches other origins only through its URL map (pexe2wasm web --refuse-unmapped)"
        : "another origin than the page's, and the request does not allow cross-origin requests (as in Chrome); pexe2wasm web --url-map can point it elsewhere";
      this.note(`pexe2wasm: URLLoader refused ${asked} (PP_ERROR_NOACCESS): ${why}`);
      return [E.NOACCESS, null];
    }
    const method = (q.method || "GET").toUpperCase();
    if (FORBIDDEN.has(method) || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(method)) return [E.BADARGUMENT, null];
    const headers = new Headers();
    for (const line of (q.headers ?? "").split("\n")) {
      const i = line.indexOf(":");
      if (i <= 0) continue;
      try {
        headers.append(line.slice(0, i).trim(), line.slice(i + 1).trim());
      } catch {
        return [E.BADARGUMENT, null];
      }
    }
    const controller = new AbortController();
    const load = { reader: null, chunk: null, at: 0, done: false, controller, received: 0 };
    this.loads.set(res, load);
    this.field(res, LOAD.RECEIVED, 0);
    this.field(res, LOAD.TOTAL, -1);
    let resp;
    try {
      resp = await fetch(mapped, {
        method,
        headers,
        body: q.body && method !== "GET" && method !== "HEAD" ? q.body : undefined,
        redirect: q.followRedirects === false ? "manual" : "follow",
        mode: sameOrigin && mapped === asked ? "same-origin" : "cors",
        credentials: q.allowCredentials ? "include" : "same-origin",
        signal: controller.signal,
      });
    } catch (e) {
      this.loads.delete(res);
      // Closed while opening: the pending Open is aborted (Chrome's URLLoader.Close).
      if (controller.signal.aborted) return [E.ABORTED, null];
      this.note(`pexe2wasm: URLLoader could not fetch ${asked}${mapped !== asked ? ` (mapped to ${mapped})` : ""}: ${e?.message ?? e}${sameOrigin ? "" : q.allowCredentials ? " (a server of another origin must answer with Access-Control-Allow-Origin naming the page's origin and Access-Control-Allow-Credentials: true: the request sends credentials)" : " (a server of another origin must answer with Access-Control-Allow-Origin)"}`);
      return [E.FAILED, null];
    }
    if (controller.signal.aborted) return [E.ABORTED, null];
    const length = Number(resp.headers.get("content-length"));
    this.field(res, LOAD.TOTAL, Number.isFinite(length) && length >= 0 && length < 2 ** 31 ? length : -1);
    load.reader = resp.body ? resp.body.getReader() : null;
    load.done = !load.reader;
    let head = "";
    for (const [k, v] of resp.headers) head += `${k}: ${v}\n`;
    // The app sees the URL it asked for (a mapped load is its server's answer).
    const url = mapped === asked ? resp.url || asked : asked;
    const info = {
      url,
      status: resp.type === "opaqueredirect" ? 302 : resp.status,
      statusLine: `HTTP/1.1 ${resp.status} ${resp.statusText}`.trim(),
      headers: head.replace(/\n$/, ""),
      redirectUrl: "",
    };
    return [E.OK, encoder.encode(JSON.stringify(info))];
  }

  /** urlRead [res, buffer, n]: up to n bytes of the body written at buffer; 0 at its end. */
  async read(res, mem, buffer, n) {
    const load = this.loads.get(res);
    if (!load) return [E.FAILED, null];
    if (n <= 0) return [E.BADARGUMENT, null];
    while (!load.chunk || load.at >= load.chunk.length) {
      if (load.done) return [0, null];
      let r;
      try {
        r = await load.reader.read();
      } catch {
        return [this.loads.has(res) ? E.FAILED : E.ABORTED, null];
      }
      if (r.done) {
        load.done = true;
        return [0, null];
      }
      load.chunk = r.value;
      load.at = 0;
      load.received += r.value.length;
      this.field(res, LOAD.RECEIVED, Math.min(load.received, 2 ** 31 - 1));
    }
    const k = Math.min(n, load.chunk.length - load.at);
    mem.write(buffer, load.chunk.subarray(load.at, load.at + k));
    load.at += k;
    return [k, null];
  }

  /** urlClose [res]: the load is cancelled (a read waiting gets ABORTED). */
  close(res) {
    const load = this.loads.get(res);
    if (!load) return [E.OK, null];
    this.loads.delete(res);
    load.controller.abort();
    return [E.OK, null];
  }
}
