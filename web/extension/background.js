// The extension's background (a service worker in Chromium, a background script in
// Firefox): the settings (storage.local: the sites turned off, the URL map), and the
// network rules (declarativeNetRequest) of decision 0026 and docs/EXTENSION.md:
//  - per tab where NaCl content was found (session rules, gone with the tab or when it
//    leaves the site): COOP same-origin + COEP credentialless on its documents, then one
//    reload when the page was not isolated; and Access-Control-Allow-Origin: * on the
//    tab's fetches of .nmf and .pexe files, so that a page's manifest and pexe on another
//    server that sends no CORS headers can be read by the page's host;
//  - one dynamic rule: a top-level navigation to a .pexe or .nmf opens player.html.
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

api.runtime.onInstalled.addListener(() => updatePlayerRule());
api.runtime.onStartup?.addListener(() => updatePlayerRule());
api.storage.onChanged.addListener((_, area) => {
  if (area === "local") updatePlayerRule();
});

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
