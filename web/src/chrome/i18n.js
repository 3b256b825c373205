// chrome.i18n and the manifest's __MSG_name__: messages from _locales/<locale>/messages.json,
// looked up in the browser's locale, then its language, then the manifest's default_locale.

/** The browser's language as a BCP 47 tag; "en-US" for what is not one (WebKitGTK under LANG=C says "C"). */
export function uiLanguage(nav) {
  const l = nav?.language;
  return typeof l === "string" && /^[a-z]{2,3}(-[A-Za-z0-9]+)*$/i.test(l) ? l : "en-US";
}

/** "en-US" → ["en_US", "en"]: the folders Chrome looked in for a UI language. */
export function localeChain(lang, defaultLocale) {
  const out = [];
  const add = (l) => l && !out.includes(l) && out.push(l);
  if (lang) {
    const norm = lang.replace(/-/g, "_");
    add(norm);
    add(norm.split("_")[0]);
  }
  add(defaultLocale);
  return out;
}

/**
 * The messages of `chain` (most wanted first), merged: name (lower case) → {message,
 * placeholders}. `catalogs` maps a locale to its parsed messages.json (missing ones absent).
 */
export function mergeCatalogs(chain, catalogs) {
  const out = new Map();
  for (const loc of [...chain].reverse()) {
    const cat = catalogs[loc];
    if (!cat || typeof cat !== "object") continue;
    for (const [name, m] of Object.entries(cat)) {
      if (m && typeof m.message === "string") out.set(name.toLowerCase(), m);
    }
  }
  return out;
}

/** Replaces $1…$9 with substitutions and $$ with $. */
function substitute(text, subs) {
  return text.replace(/\$(\$|[1-9])/g, (_, d) => (d === "$" ? "$" : (subs[Number(d) - 1] ?? "")));
}

/**
 * chrome.i18n.getMessage(name, substitutions) over `messages` (from mergeCatalogs);
 * `predefined` holds `@@extension_id`, `@@ui_locale` and the bidi names.
 */
export function getMessage(messages, name, substitutions, predefined = {}) {
  if (typeof name !== "string") return "";
  const key = name.toLowerCase();
  if (key.startsWith("@@")) return predefined[key.slice(2)] ?? "";
  const m = messages.get(key);
  if (!m) return "";
  let subs = substitutions ?? [];
  if (!Array.isArray(subs)) subs = [subs];
  subs = subs.slice(0, 9).map(String);
  const ph = {};
  for (const [k, v] of Object.entries(m.placeholders ?? {})) ph[k.toLowerCase()] = v?.content ?? "";
  // Placeholders ($name$) first, their content may hold $1…; then the message's own $1….
  const withPh = m.message.replace(/\$([A-Za-z0-9_@]+)\$/g, (all, p) => {
    const c = ph[p.toLowerCase()];
    return c === undefined ? all : substitute(c, subs).replace(/\$/g, "\u0000");
  });
  return substitute(withPh, subs).replace(/\u0000/g, "$");
}

export function predefinedMessages(id, uiLocale) {
  const rtl = /^(ar|fa|he|iw|ur|yi|ps|sd|ug|dv)(_|$)/.test(uiLocale);
  return {
    extension_id: id,
    ui_locale: uiLocale,
    bidi_dir: rtl ? "rtl" : "ltr",
    bidi_reversed_dir: rtl ? "ltr" : "rtl",
    bidi_start_edge: rtl ? "right" : "left",
    bidi_end_edge: rtl ? "left" : "right",
  };
}

/** The manifest with each string "__MSG_name__" (anywhere in it) replaced by its message. */
export function localizeManifest(manifest, lookup) {
  const walk = (v) => {
    if (typeof v === "string") return v.replace(/__MSG_([A-Za-z0-9_@]+?)__/g, (_, n) => lookup(n));
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    return v;
  };
  return walk(manifest);
}

/** Loads the catalogs of `chain` with `fetchJSON(path)` (null when a file is missing). */
export async function loadCatalogs(chain, fetchJSON) {
  const catalogs = {};
  await Promise.all(
    chain.map(async (loc) => {
      const c = await fetchJSON(`_locales/${loc}/messages.json`).catch(() => null);
      if (c) catalogs[loc] = c;
    }),
  );
  return catalogs;
}

/** chrome.i18n for one page. */
export function i18nApi(host) {
  const { api } = host;
  return {
    getMessage: (name, subs) => getMessage(host.messages, name, subs, host.predefined),
    getUILanguage: () => uiLanguage(host.nav),
    getAcceptLanguages: api("i18n.getAcceptLanguages", () => {
      const tags = (host.nav.languages ?? []).filter((l) => uiLanguage({ language: l }) === l);
      return host.cloneArray(host.top, tags.length ? tags : [uiLanguage(host.nav)]);
    }),
    detectLanguage: api("i18n.detectLanguage", () => ({ isReliable: false, languages: [] })),
  };
}
