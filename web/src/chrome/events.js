// chrome.events.Event as the runtime's pages see it. One SharedEvent per event name lives in
// the runtime; each page (context) gets a view of it whose listeners are its own, so that a
// page's listeners go when the page goes and a dispatch reaches every live page.

/** Calls `f(...args)`, reporting what it throws on the console as Chrome did, never to the caller. */
export function safeCall(f, args, what, log = console) {
  try {
    return { value: f(...args) };
  } catch (e) {
    log.error(`Error in event handler for ${what}: ${e?.stack ?? e}`);
    return { error: e };
  }
}

export class SharedEvent {
  constructor(name, log = console) {
    this.name = name;
    this.log = log;
    /** [{owner, f}] in the order added. */
    this.listeners = [];
  }

  /** The chrome.events.Event for one context (`owner`: any object naming it). */
  view(owner) {
    const list = this.listeners;
    return {
      addListener: (f) => {
        if (typeof f !== "function") throw new TypeError(`${this.name}.addListener: the listener must be a function`);
        if (!list.some((l) => l.owner === owner && l.f === f)) list.push({ owner, f });
      },
      removeListener: (f) => {
        const i = list.findIndex((l) => l.owner === owner && l.f === f);
        if (i >= 0) list.splice(i, 1);
      },
      hasListener: (f) => list.some((l) => l.owner === owner && l.f === f),
      hasListeners: () => list.some((l) => l.owner === owner),
      // Declarative rules (chrome.events.Event has them): none here.
      addRules: (_rules, cb) => cb?.([]),
      getRules: (_ids, cb) => (typeof _ids === "function" ? _ids : cb)?.([]),
      removeRules: (_ids, cb) => (typeof _ids === "function" ? _ids : cb)?.(),
    };
  }

  /** Forgets every listener of `owner` (its page went). */
  drop(owner) {
    // In place: the views hold this very array.
    for (let i = this.listeners.length - 1; i >= 0; i--) if (this.listeners[i].owner === owner) this.listeners.splice(i, 1);
  }

  /**
   * Calls each listener (of the owners `filter` accepts) with `args(owner)` or `args`;
   * returns [{owner, value}] of those that returned without throwing.
   */
  /** @param {(owner: any) => boolean} [filter] */
  dispatch(args, filter = () => true) {
    const out = [];
    for (const l of [...this.listeners]) {
      if (!this.listeners.includes(l) || !filter(l.owner)) continue;
      const a = typeof args === "function" ? args(l.owner) : args;
      const r = safeCall(l.f, a, this.name, this.log);
      if (!("error" in r)) out.push({ owner: l.owner, value: r.value });
    }
    return out;
  }

  /** @param {(owner: any) => boolean} [filter] */
  count(filter = () => true) {
    return this.listeners.filter((l) => filter(l.owner)).length;
  }
}

/** The runtime's events by name, made on first use. */
export class EventHub {
  constructor(log = console) {
    this.log = log;
    this.events = new Map();
  }
  get(name) {
    let e = this.events.get(name);
    if (!e) this.events.set(name, (e = new SharedEvent(name, this.log)));
    return e;
  }
  view(name, owner) {
    return this.get(name).view(owner);
  }
  dispatch(name, args, filter) {
    return this.events.has(name) ? this.get(name).dispatch(args, filter) : [];
  }
  drop(owner) {
    for (const e of this.events.values()) e.drop(owner);
  }
}
