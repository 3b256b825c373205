// chrome.alarms: named alarms at a time, after a delay, and repeating, on the page's timers.
// Chrome rounded delays under its minimum up; an unpacked app (which these are, in effect)
// got what it asked for, and so do they here.

import { ChromeError } from "./base.js";

/** The alarms of one app; `fire(alarm)` dispatches onAlarm; timers and clock injectable. */
export class Alarms {
  /** @param {{fire: (alarm: object) => void, now?: () => number, setTimeout?: (f: () => void, ms: number) => any, clearTimeout?: (id: any) => void}} _ */
  constructor({ fire, now = () => Date.now(), setTimeout: st = globalThis.setTimeout, clearTimeout: ct = globalThis.clearTimeout }) {
    this.fire = fire;
    this.now = now;
    // Called as plain functions: a browser's setTimeout refuses another `this`.
    this.st = (f, ms) => st(f, ms);
    this.ct = (id) => ct(id);
    this.alarms = new Map(); // name → {alarm, timer}
  }

  create(name, info) {
    if (typeof name === "object" && name !== null) [name, info] = ["", name];
    name = name === null || name === undefined ? "" : String(name);
    info ??= {};
    const { when, delayInMinutes, periodInMinutes } = info;
    if (when !== undefined && delayInMinutes !== undefined) throw new ChromeError("Cannot set both when and delayInMinutes.");
    if (when === undefined && delayInMinutes === undefined && periodInMinutes === undefined) {
      throw new ChromeError("One of 'when', 'delayInMinutes' or 'periodInMinutes' must be specified.");
    }
    const t0 = this.now();
    const scheduledTime = when !== undefined ? Number(when) : t0 + 60000 * Number(delayInMinutes ?? periodInMinutes);
    this.clear(name);
    const alarm = { name, scheduledTime };
    if (periodInMinutes !== undefined) alarm.periodInMinutes = Number(periodInMinutes);
    const entry = { alarm, timer: null };
    this.alarms.set(name, entry);
    this.arm(entry);
  }

  arm(entry) {
    const delay = Math.max(0, entry.alarm.scheduledTime - this.now());
    // Timers take at most 2^31-1 ms: a later alarm waits in steps.
    const step = Math.min(delay, 2 ** 31 - 1);
    entry.timer = this.st(() => {
      if (this.alarms.get(entry.alarm.name) !== entry) return;
      if (this.now() < entry.alarm.scheduledTime) return this.arm(entry);
      this.fire({ ...entry.alarm });
      if (entry.alarm.periodInMinutes !== undefined) {
        entry.alarm.scheduledTime += 60000 * entry.alarm.periodInMinutes;
        // A page asleep for several periods fires once, as Chrome did, then keeps the rhythm.
        const t = this.now();
        const p = 60000 * entry.alarm.periodInMinutes;
        if (p > 0 && entry.alarm.scheduledTime <= t) entry.alarm.scheduledTime += Math.ceil((t - entry.alarm.scheduledTime + 1) / p) * p;
        this.arm(entry);
      } else this.alarms.delete(entry.alarm.name);
    }, step);
  }

  get(name = "") {
    const e = this.alarms.get(String(name));
    return e ? { ...e.alarm } : undefined;
  }

  getAll() {
    return [...this.alarms.values()].map((e) => ({ ...e.alarm }));
  }

  clear(name = "") {
    const e = this.alarms.get(String(name));
    if (!e) return false;
    this.ct(e.timer);
    this.alarms.delete(String(name));
    return true;
  }

  clearAll() {
    const had = this.alarms.size > 0;
    for (const n of [...this.alarms.keys()]) this.clear(n);
    return had;
  }
}

export function alarmsApi(host, ctx) {
  const { api } = host;
  const a = host.alarms;
  const clone = (v) => host.cloneInto(ctx.win, v);
  return {
    create: api("alarms.create", (name, info) => a.create(name, info)),
    get: api("alarms.get", (name) => clone(a.get(name))),
    getAll: api("alarms.getAll", () => clone(a.getAll())),
    clear: api("alarms.clear", (name) => a.clear(name)),
    clearAll: api("alarms.clearAll", () => a.clearAll()),
    onAlarm: host.hub.view("alarms.onAlarm", ctx),
  };
}
