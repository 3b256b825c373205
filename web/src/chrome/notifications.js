// chrome.notifications: shown in the launcher's page (a toast with the title, message and
// buttons), and as a system notification too when the site already has that permission.

import { ChromeError } from "./base.js";

export class Notifications {
  /**
   * `show(id, options)` draws one, `hide(id)` removes it; `system` is the Notification constructor or null.
   * @param {{show?: (id: string, options: object) => void, hide?: (id: string) => void, system?: any}} [_]
   */
  constructor({ show = () => {}, hide = () => {}, system = null } = {}) {
    this.show = show;
    this.hide = hide;
    this.system = system;
    this.items = new Map();
    this.n = 0;
  }
  create(id, options) {
    if (typeof id === "object" && id !== null) [id, options] = ["", id];
    if (!options || typeof options !== "object") throw new ChromeError("Some of the required properties are missing: type, iconUrl, title and message.");
    id = id || `pexe2wasm-${++this.n}`;
    this.items.set(id, { ...options });
    this.show(id, this.items.get(id));
    if (this.system?.permission === "granted") {
      try {
        new this.system(options.title ?? "", { body: options.message ?? "", icon: options.iconUrl, tag: id });
      } catch {
        /* a page may not construct them (Chrome on Android); the toast is enough */
      }
    }
    return id;
  }
  update(id, options) {
    if (!this.items.has(id)) return false;
    Object.assign(this.items.get(id), options);
    this.show(id, this.items.get(id));
    return true;
  }
  clear(id) {
    if (!this.items.delete(id)) return false;
    this.hide(id);
    return true;
  }
  getAll() {
    return Object.fromEntries([...this.items.keys()].map((k) => [k, true]));
  }
}

export function notificationsApi(host, ctx) {
  const { api } = host;
  const n = host.notifications;
  return {
    create: api("notifications.create", (id, options) => n.create(id, options)),
    update: api("notifications.update", (id, options) => n.update(id, options)),
    clear: api("notifications.clear", (id) => n.clear(id)),
    getAll: api("notifications.getAll", () => host.cloneInto(ctx.win, n.getAll())),
    getPermissionLevel: api("notifications.getPermissionLevel", () => "granted"),
    onClicked: host.hub.view("notifications.onClicked", ctx),
    onButtonClicked: host.hub.view("notifications.onButtonClicked", ctx),
    onClosed: host.hub.view("notifications.onClosed", ctx),
    onPermissionLevelChanged: host.hub.view("notifications.onPermissionLevelChanged", ctx),
    onShowSettings: host.hub.view("notifications.onShowSettings", ctx),
  };
}
