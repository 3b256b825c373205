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

/** The three session rules of tab `tab` (ids from its id). */
const ruleIds = (tab) => [tab * 3 + 10, tab * 3 + 11, tab * 3 + 12];

/**
 * The session rules for tab `tab` showing a page of `host`. The documents' rule names the
 * host (`requestDomains`), not the tab: Chromium 156 applied a `tabIds` rule to the tab's
 * reload in only some runs (decision 0027), so while the tab is on the host, the host's
 * documents get the headers in any tab; frames of other hosts in the tab get them by tab.
 * The CORS rule names the page's host as the fetches' initiator.
 */
async function isolateTab(tab, host) {
  const [headers, cors, frames] = ruleIds(tab);
  const isolation = {
    type: "modifyHeaders",
    responseHeaders: [
      { header: "Cross-Origin-Opener-Policy", operation: "set", value: "same-origin" },
      { header: "Cross-Origin-Embedder-Policy", operation: "set", value: "credentialless" },
    ],
  };
  await dnr.updateSessionRules({
    removeRuleIds: [headers, cors, frames],
    addRules: [
      { id: frames, priority: 1, action: isolation, condition: { tabIds: [tab], resourceTypes: ["sub_frame"] } },
      {
        id: headers,
        priority: 1,
        action: isolation,
        condition: { requestDomains: [host], resourceTypes: ["main_frame", "sub_frame"] },
      },
      {
        id: cors,
        priority: 1,
        action: {
          type: "modifyHeaders",
          responseHeaders: [{ header: "Access-Control-Allow-Origin", operation: "set", value: "*" }],
        },
        condition: { initiatorDomains: [host], regexFilter: "^[^?#]*\\.(pexe|nmf)([?#].*)?$", resourceTypes: ["xmlhttprequest", "other"] },
      },
    ],
  });
}

async function forgetTab(tab) {
  await dnr.updateSessionRules({ removeRuleIds: ruleIds(tab) }).catch(() => {});
  await api.storage.session.remove(`tab${tab}`).catch(() => {});
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
    await isolateTab(tab, hostOf(tabUrl));
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
    reply(null);
  });
  return true;
});
