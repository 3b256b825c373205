// PP_Resources shared by every thread of an instance: a kind, a reference count and a few
// words of state per resource, in the host block (shared.js), so IsX, AddRef and Release
// work from any thread. State that only one worker can hold (a JavaScript object such as a
// canvas context) stays in that worker, keyed by the resource id.

import { MAX_RES, RES_BASE, RES_FREE, RES_HIGH, RES_WORDS } from "./shared.js";

export const KIND = {
  VIEW: 1,
  MESSAGE_LOOP: 2,
  INPUT_EVENT: 3,
  IMAGE_DATA: 4,
  GRAPHICS_2D: 5,
  FILE_SYSTEM: 6,
  FILE_REF: 7,
  FILE_IO: 8,
  GRAPHICS_3D: 9,
  NET_ADDRESS: 10,
  HOST_RESOLVER: 11,
  TCP_SOCKET: 12,
  UDP_SOCKET: 13,
  WEBSOCKET: 14,
  URL_LOADER: 15,
  URL_REQUEST: 16,
  URL_RESPONSE: 17,
  AUDIO_CONFIG: 18,
  AUDIO: 19,
  VIDEO_DECODER: 20,
};

const KIND_W = 0;
const RC = 1;
export const FIELDS = 2; // the first word of a resource's own state
export const FIELD_WORDS = RES_WORDS - FIELDS;

export class ResourceError extends Error {}

export class Resources {
  constructor(h, vars) {
    this.h = h;
    this.vars = vars; // for the lock
  }

  base(id) {
    return RES_BASE + RES_WORDS * id;
  }

  /** A new resource of `kind` (one reference); its state words zeroed. Lock held. */
  createLocked(kind) {
    const h = this.h;
    let id = h[RES_FREE];
    if (id !== 0) {
      h[RES_FREE] = h[this.base(id) + FIELDS];
    } else {
      if (h[RES_HIGH] === 0) h[RES_HIGH] = 1;
      id = h[RES_HIGH];
      if (id >= MAX_RES) throw new ResourceError(`more than ${MAX_RES - 1} resources are alive`);
      h[RES_HIGH] = id + 1;
    }
    const b = this.base(id);
    h.fill(0, b, b + RES_WORDS);
    h[b + KIND_W] = kind;
    h[b + RC] = 1;
    return id;
  }
  create(kind) {
    return this.vars.locked(() => this.createLocked(kind));
  }

  /** The base word of a live resource of `kind`, or -1. */
  of(id, kind) {
    if (!Number.isInteger(id) || id <= 0 || id >= MAX_RES) return -1;
    const b = this.base(id);
    return this.h[b + KIND_W] === kind && this.h[b + RC] > 0 ? b : -1;
  }
  kindOf(id) {
    if (!Number.isInteger(id) || id <= 0 || id >= MAX_RES) return 0;
    const b = this.base(id);
    return this.h[b + RC] > 0 ? this.h[b + KIND_W] : 0;
  }

  addRefLocked(id) {
    if (this.kindOf(id) !== 0) this.h[this.base(id) + RC]++;
  }
  addRef(id) {
    this.vars.locked(() => this.addRefLocked(id));
  }

  /**
   * Drops a reference. When it was the last, returns {kind, fields} (a copy of the state
   * words, for the caller to free what they point at); else null.
   */
  release(id) {
    return this.vars.locked(() => {
      const kind = this.kindOf(id);
      if (kind === 0) return null;
      const b = this.base(id);
      if (--this.h[b + RC] > 0) return null;
      const fields = this.h.slice(b + FIELDS, b + RES_WORDS);
      this.h[b + KIND_W] = 0;
      this.h[b + FIELDS] = this.h[RES_FREE];
      this.h[RES_FREE] = id;
      return { kind, fields };
    });
  }
}
