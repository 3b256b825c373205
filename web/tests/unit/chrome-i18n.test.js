import assert from "node:assert/strict";
import { test } from "node:test";

import { getMessage, loadCatalogs, localeChain, localizeManifest, mergeCatalogs, predefinedMessages, uiLanguage } from "../../src/chrome/i18n.js";

const catalogs = {
  en: {
    appName: { message: "Hello App" },
    greet: { message: "Hello, $who$! You have $count$ $$ items", placeholders: { who: { content: "$1" }, COUNT: { content: "$2" } } },
    plain: { message: "a $1 and $2, $3 missing" },
    only_en: { message: "english" },
  },
  de: { appName: { message: "Hallo App" } },
  de_AT: { appname: { message: "Servus App" } },
};

test("the locale chain: the browser's locale, its language, then default_locale", () => {
  assert.deepEqual(localeChain("de-AT", "en"), ["de_AT", "de", "en"]);
  assert.deepEqual(localeChain("en", "en"), ["en"]);
  assert.deepEqual(localeChain(undefined, "fr"), ["fr"]);
});

test("getMessage takes the most specific locale, names case-insensitively", () => {
  const m = mergeCatalogs(localeChain("de-AT", "en"), catalogs);
  assert.equal(getMessage(m, "appName"), "Servus App");
  assert.equal(getMessage(m, "APPNAME"), "Servus App");
  assert.equal(getMessage(m, "only_en"), "english");
  assert.equal(getMessage(m, "nothing"), "");
  const de = mergeCatalogs(localeChain("de-DE", "en"), catalogs);
  assert.equal(getMessage(de, "appName"), "Hallo App");
});

test("placeholders and $1 substitutions, $$ as $", () => {
  const m = mergeCatalogs(["en"], catalogs);
  assert.equal(getMessage(m, "greet", ["Ann", 3]), "Hello, Ann! You have 3 $ items");
  assert.equal(getMessage(m, "greet", "Bob"), "Hello, Bob! You have  $ items");
  assert.equal(getMessage(m, "plain", ["x", "y"]), "a x and y,  missing");
});

test("predefined @@ messages", () => {
  const p = predefinedMessages("abcd", "he");
  assert.equal(getMessage(new Map(), "@@extension_id", [], p), "abcd");
  assert.equal(getMessage(new Map(), "@@bidi_dir", [], p), "rtl");
  assert.equal(getMessage(new Map(), "@@ui_locale", [], predefinedMessages("x", "en_US")), "en_US");
});

test("__MSG_name__ anywhere in the manifest", () => {
  const m = mergeCatalogs(["en"], catalogs);
  const man = localizeManifest({ name: "__MSG_appName__", description: "x __MSG_only_en__ y", list: ["__MSG_none__"], n: 2 }, (n) => getMessage(m, n));
  assert.deepEqual(man, { name: "Hello App", description: "x english y", list: [""], n: 2 });
});

test("catalogs load by locale folder; a missing one is skipped", async () => {
  const asked = [];
  const c = await loadCatalogs(["de_AT", "de", "en"], async (p) => {
    asked.push(p);
    if (p.includes("de_AT")) throw new Error("404");
    return { x: { message: p } };
  });
  assert.deepEqual(Object.keys(c).sort(), ["de", "en"]);
  assert.ok(asked.includes("_locales/de_AT/messages.json"));
});

test("a language that is no BCP 47 tag (LANG=C) counts as en-US", () => {
  assert.equal(uiLanguage({ language: "C" }), "en-US");
  assert.equal(uiLanguage({ language: "de-AT" }), "de-AT");
  assert.equal(uiLanguage({}), "en-US");
});
