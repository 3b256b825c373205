// The extension's background (a service worker in Chromium, a background script in
// Firefox): the settings (storage.local: the sites turned off, the URL map), and the
// network rules (declarativeNetRequest) of decision 0026 and docs/EXTENSION.md:
//  - per tab where NaCl content was found (session rules, gone with the tab or when it
//    leaves the site): COOP same-origin + COEP credentialless on its documents, then one
//    reload when the page was not isolated; and Access-Control-Allow-Origin: * on the
//    tab's fetches of .nmf and .pexe files, so that a page's manifest and pexe on another
//    server that sends no CORS headers can be read by the page's host;
//  - one dynamic rule: a top-level navigation to a .pexe or .nmf opens player.html. In
//    Firefox, whose extension pages get no shared memory, the player opens in place
//    instead: the response becomes the player's document on the link's own origin,
//    isolated there (playerInPlace, a blocking webRequest).
"use strict";
const api = globalThis.browser ?? globalThis.chrome;
const dnr = api.declarativeNetRequest;
const PLAYER_RULE = 1;
const DEFAULTS = { disabledSites: [], urlMap: {} };
/** The player's rule: any http(s) URL ending in .pexe or .nmf (before a query). */
const PLAYER_REGEX = "^https?://[^?#]*\\.(pexe|nmf)([?#].*)?$";

async function settings() {
  const s = await api.storage.local.get(DEFAULTS);
  return {
    disabledSites: Array.isArray(s.disabledSites) ? s.disabledSites.filter((x) => typeof x === "string") : [],
    urlMap: s.urlMap && typeof s.urlMap === "object" ? s.urlMap : {},
  };
}

const hostOf = (url) => {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
};

/**
 * The two session rules of tab `tab`: ids from a counter (rule ids are 32-bit, tab ids need
 * not be small: Chromium's are often beyond 2^31 / 2), kept per tab in storage.session.
 */
async function ruleIds(tab) {
  const key = `rules${tab}`;
  const got = (await api.storage.session.get(key))[key];
  if (Array.isArray(got)) return got;
  const { nextRule = 10 } = await api.storage.session.get("nextRule");
  const ids = [nextRule, nextRule + 1];
  await api.storage.session.set({ nextRule: nextRule + 2, [key]: ids });
  return ids;
}

/**
 * The session rules of tab `tab` (decision 0026): its documents get COOP same-origin and
 * COEP credentialless; its fetches of .nmf and .pexe files get Access-Control-Allow-Origin.
 */
async function isolateTab(tab) {
  const [headers, cors] = await ruleIds(tab);
  await dnr.updateSessionRules({
    removeRuleIds: [headers, cors],
    addRules: [
      {
        id: headers,
        priority: 1,
        action: {
          type: "modifyHeaders",
          responseHeaders: [
            { header: "Cross-Origin-Opener-Policy", operation: "set", value: "same-origin" },
            { header: "Cross-Origin-Embedder-Policy", operation: "set", value: "credentialless" },
          ],
        },
        condition: { tabIds: [tab], resourceTypes: ["main_frame", "sub_frame"] },
      },
      {
        id: cors,
        priority: 1,
        action: {
          type: "modifyHeaders",
          responseHeaders: [{ header: "Access-Control-Allow-Origin", operation: "set", value: "*" }],
        },
        condition: { tabIds: [tab], regexFilter: "^[^?#]*\\.(pexe|nmf)([?#].*)?$", resourceTypes: ["xmlhttprequest", "other"] },
      },
    ],
  });
}

async function forgetTab(tab) {
  const key = `rules${tab}`;
  const ids = (await api.storage.session.get(key))[key];
  if (Array.isArray(ids)) await dnr.updateSessionRules({ removeRuleIds: ids }).catch(() => {});
  await api.storage.session.remove([`tab${tab}`, key]).catch(() => {});
}

/** The player rule, with the sites turned off left out. */
async function updatePlayerRule() {
  const { disabledSites } = await settings();
  const condition = { regexFilter: PLAYER_REGEX, resourceTypes: ["main_frame"] };
  if (disabledSites.length) condition.excludedRequestDomains = disabledSites;
  await dnr.updateDynamicRules({
    removeRuleIds: [PLAYER_RULE],
    addRules: [
      {
        id: PLAYER_RULE,
        priority: 1,
        action: { type: "redirect", redirect: { regexSubstitution: `${api.runtime.getURL("player.html")}?src=\\0` } },
        condition,
      },
    ],
  });
}

/** Escapes text for an HTML attribute or element. */
const html = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** player-document.html (Firefox's build only): the console page, placeholders unfilled. */
let playerDocument = null;

/** Response headers a player in place drops: its own type, isolation and policy replace them. */
const REPLACED = new Set([
  "content-type",
  "content-disposition",
  "content-encoding",
  "content-length",
  "content-security-policy",
  "cross-origin-opener-policy",
  "cross-origin-embedder-policy",
  "x-content-type-options",
  "x-frame-options",
]);

/**
 * Firefox: a top-level response for a .pexe or .nmf becomes the player's document, on the
 * link's origin with COOP/COEP (isolated, so the module has shared memory there). Its
 * <embed> names the link itself, which the page's host then fetches as any module.
 */
async function playerInPlace(d) {
  if (!new RegExp(PLAYER_REGEX).test(d.url) || (d.statusCode !== 200 && d.statusCode !== 304)) return {};
  const { disabledSites } = await settings();
  if (disabledSites.includes(hostOf(d.url))) return {};
  playerDocument ??= await fetch(api.runtime.getURL("player-document.html")).then((r) => r.text());
  const name = decodeURIComponent(new URL(d.url).pathname.split("/").pop() || d.url);
  const page = playerDocument
    .replaceAll("{{TITLE}}", html(name))
    .replaceAll("{{NMF}}", html(d.url))
    .replaceAll("{{OPTIONS}}", html(api.runtime.getURL("options.html")));
  const filter = api.webRequest.filterResponseData(d.requestId);
  filter.ondata = () => {};
  filter.onstop = () => {
    filter.write(new TextEncoder().encode(page));
    filter.close();
  };
  filter.onerror = () => console.warn(`pexe2wasm: the player for ${d.url} could not replace the response: ${filter.error}`);
  console.info(`pexe2wasm: ${d.url} opens in the player, in place`);
  const responseHeaders = (d.responseHeaders ?? []).filter((h) => !REPLACED.has(h.name.toLowerCase()));
  responseHeaders.push(
    { name: "Content-Type", value: "text/html; charset=utf-8" },
    { name: "Cross-Origin-Opener-Policy", value: "same-origin" },
    { name: "Cross-Origin-Embedder-Policy", value: "credentialless" },
  );
  return { responseHeaders };
}

const IN_PLACE = typeof api.webRequest?.filterResponseData === "function";
if (IN_PLACE) {
  api.webRequest.onHeadersReceived.addListener(playerInPlace, { urls: ["http://*/*", "https://*/*"], types: ["main_frame"] }, [
    "blocking",
    "responseHeaders",
  ]);
  // A redirect rule an earlier build left would take the link first.
  api.runtime.onInstalled.addListener(() => dnr.updateDynamicRules({ removeRuleIds: [PLAYER_RULE] }));
} else {
  api.runtime.onInstalled.addListener(() => updatePlayerRule());
  api.runtime.onStartup?.addListener(() => updatePlayerRule());
  api.storage.onChanged.addListener((_, area) => {
    if (area === "local") updatePlayerRule();
  });
}

api.tabs.onRemoved.addListener((tab) => forgetTab(tab));
// A tab that leaves the site where NaCl was found loses its rules.
api.tabs.onUpdated.addListener(async (tab, change) => {
  if (!change.url) return;
  const key = `tab${tab}`;
  const got = (await api.storage.session.get(key))[key];
  if (got && got.host !== hostOf(change.url)) forgetTab(tab);
});

async function handle(m, sender) {
  const tabUrl = sender.tab?.url ?? sender.url ?? "";
  if (m?.t === "hello") {
    const s = await settings();
    const enabled = !s.disabledSites.includes(hostOf(tabUrl));
    return { enabled, config: { urlMap: s.urlMap } };
  }
  if (m?.t === "found") {
    const tab = sender.tab?.id;
    if (typeof tab !== "number" || tab < 0) return { reload: false };
    const key = `tab${tab}`;
    const got = (await api.storage.session.get(key))[key];
    await isolateTab(tab);
    if (m.isolated) return { reload: false };
    // One reload per tab and page: a page still not isolated after it runs without threads'
    // memory, and embed.js says so on the console.
    if (got?.reloadedFor === tabUrl) return { reload: false };
    await api.storage.session.set({ [key]: { host: hostOf(tabUrl), reloadedFor: tabUrl } });
    console.info(`pexe2wasm: NaCl content (${m.why}) in tab ${tab} at ${tabUrl}: isolating it and reloading once`);
    api.tabs.reload(tab);
    return { reload: true };
  }
  return null;
}

api.runtime.onMessage.addListener((m, sender, reply) => {
  handle(m, sender).then(reply, (e) => {
    console.error(`pexe2wasm: ${e.message}`);
    reply({ error: String(e.message) });
  });
  return true;
});
