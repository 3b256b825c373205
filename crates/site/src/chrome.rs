//! Chrome packages: a `manifest.json` with `manifest_version` or `app` (a web-app manifest
//! has neither) makes its folder a Chrome app or extension. What the report and the gallery
//! need from it: its kind, names in the user's words (`__MSG_x__` through `_locales`), icon,
//! what it asks for, and what it wants that a tab cannot give.

use serde::Serialize;
use serde_json::Value;

use crate::path::SitePath;
use crate::tree::Tree;

/// What kind of package.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PackageKind {
    /// `app.background`: a platform (packaged) app, launched by its background scripts.
    PlatformApp,
    /// `app.launch.local_path`: a legacy packaged app, which opens that page.
    LegacyPackagedApp,
    /// `app.launch.web_url`: a hosted app (a link to a web site).
    HostedApp,
    /// Anything else with `manifest_version`: an extension.
    Extension,
}

impl PackageKind {
    /// For people: "app", "legacy packaged app", "hosted app", "extension".
    pub fn label(self) -> &'static str {
        match self {
            PackageKind::PlatformApp => "app",
            PackageKind::LegacyPackagedApp => "legacy packaged app",
            PackageKind::HostedApp => "hosted app",
            PackageKind::Extension => "extension",
        }
    }
}

/// A Chrome package found in the input.
#[derive(Debug, Clone, Serialize)]
pub struct Package {
    /// Its folder (`""` or ending in `/`): where `manifest.json` is.
    pub root: String,
    pub kind: PackageKind,
    pub name: String,
    pub description: String,
    pub version: String,
    /// The largest icon, as a site path.
    pub icon: Option<SitePath>,
    /// The page it opens first, when the manifest says it (legacy apps, extension popups).
    pub start_page: Option<SitePath>,
    /// Background scripts or page, as site paths.
    pub background: Vec<SitePath>,
    /// `permissions` as strings (objects such as `{"fileSystem": ["write"]}` by their key),
    /// plus `sockets` when the manifest has that key.
    pub permissions: Vec<String>,
    /// Permissions whose APIs a browser tab cannot give (raw sockets, USB, identity…):
    /// the app gets the error Chrome gave without permission.
    pub unavailable: Vec<String>,
    /// MIME types it handles with NaCl (`nacl_modules`), as `type → manifest path`.
    pub nacl_modules: Vec<(String, String)>,
    /// `platforms[].nacl_arch` with their `sub_package_path`.
    pub platforms: Vec<(String, String)>,
}

/// APIs named by permissions that no tab can give; Chrome apps that use them get
/// `chrome.runtime.lastError` as without the permission.
const UNAVAILABLE: &[&str] = &[
    "socket",
    "sockets",
    "usb",
    "serial",
    "bluetooth",
    "bluetoothLowEnergy",
    "identity",
    "hid",
    "mdns",
    "system.network",
    "webview",
    "nativeMessaging",
    "enterprise.platformKeys",
    "vpnProvider",
    "gcm",
    "pushMessaging",
];

/// The package whose `manifest.json` is at `manifest`, or `None` when that file is not a
/// Chrome manifest (a web-app manifest, another JSON). `Err` for a Chrome manifest that is
/// not JSON Chrome would read.
pub fn read_package(tree: &Tree, manifest: &SitePath) -> Result<Option<Package>, String> {
    let bytes = tree
        .get(manifest)
        .ok_or("missing")?
        .read()
        .map_err(|e| e.to_string())?;
    // Chrome accepted a byte-order mark and comments are rare; a BOM is skipped.
    let text = bytes.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&bytes);
    let v: Value = match serde_json::from_slice(text) {
        Ok(v) => v,
        Err(e) => {
            // Only a file that looks like a Chrome manifest is an error.
            let s = String::from_utf8_lossy(text);
            if s.contains("\"manifest_version\"") {
                return Err(format!("not JSON: {e}"));
            }
            return Ok(None);
        }
    };
    let Some(obj) = v.as_object() else {
        return Ok(None);
    };
    if !obj.contains_key("manifest_version") && !obj.contains_key("app") {
        return Ok(None);
    }
    let root = manifest.dir().to_owned();
    let in_pkg = |rel: &str| -> Option<SitePath> {
        let rel = rel.split(['?', '#']).next().unwrap_or_default();
        let rel = rel.trim_start_matches('/');
        manifest.join_url(rel)
    };
    let app = obj.get("app");
    let kind = if app.and_then(|a| a.get("background")).is_some() {
        PackageKind::PlatformApp
    } else if app.and_then(|a| a.pointer("/launch/local_path")).is_some() {
        PackageKind::LegacyPackagedApp
    } else if app.and_then(|a| a.pointer("/launch/web_url")).is_some() {
        PackageKind::HostedApp
    } else {
        PackageKind::Extension
    };
    let locale = Locales::read(
        tree,
        &root,
        obj.get("default_locale").and_then(Value::as_str),
    );
    let text_of = |key: &str| {
        obj.get(key)
            .and_then(Value::as_str)
            .map(|s| locale.expand(s))
            .unwrap_or_default()
    };
    let name = match text_of("name") {
        n if n.is_empty() => manifest.dir().trim_end_matches('/').to_owned(),
        n => n,
    };
    let icon = obj
        .get("icons")
        .and_then(Value::as_object)
        .and_then(|icons| {
            icons
                .iter()
                .filter_map(|(size, p)| Some((size.parse::<u32>().unwrap_or(0), p.as_str()?)))
                .max_by_key(|(s, _)| *s)
                .and_then(|(_, p)| in_pkg(p))
        })
        .filter(|p| tree.contains(p));
    let mut background = Vec::new();
    let bg = app
        .and_then(|a| a.get("background"))
        .or_else(|| obj.get("background"));
    if let Some(bg) = bg {
        for s in bg
            .get("scripts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(p) = s.as_str().and_then(in_pkg) {
                background.push(p);
            }
        }
        for key in ["page", "service_worker"] {
            if let Some(p) = bg.get(key).and_then(Value::as_str).and_then(in_pkg) {
                background.push(p);
            }
        }
    }
    let start_page = match kind {
        PackageKind::LegacyPackagedApp => app
            .and_then(|a| a.pointer("/launch/local_path"))
            .and_then(Value::as_str)
            .and_then(in_pkg),
        PackageKind::Extension => [
            "/browser_action/default_popup",
            "/action/default_popup",
            "/page_action/default_popup",
        ]
        .iter()
        .find_map(|k| v.pointer(k))
        .and_then(Value::as_str)
        .and_then(in_pkg),
        _ => None,
    };
    let mut permissions: Vec<String> = obj
        .get("permissions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| match p {
            Value::String(s) => Some(s.clone()),
            Value::Object(o) => o.keys().next().cloned(),
            _ => None,
        })
        .collect();
    if obj.contains_key("sockets") {
        permissions.push("sockets".into());
    }
    let unavailable = permissions
        .iter()
        .filter(|p| UNAVAILABLE.contains(&p.as_str()))
        .cloned()
        .collect();
    let nacl_modules = obj
        .get("nacl_modules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|m| {
            Some((
                m.get("mime_type")?.as_str()?.to_owned(),
                m.get("path")?.as_str()?.to_owned(),
            ))
        })
        .collect();
    let platforms = obj
        .get("platforms")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|p| {
            Some((
                p.get("nacl_arch")?.as_str()?.to_owned(),
                p.get("sub_package_path")?.as_str()?.to_owned(),
            ))
        })
        .collect();
    Ok(Some(Package {
        root,
        kind,
        description: text_of("description"),
        version: text_of("version"),
        name,
        icon,
        start_page,
        background,
        permissions,
        unavailable,
        nacl_modules,
        platforms,
    }))
}

/// A package's messages (`_locales/<lang>/messages.json`) in the language the gallery
/// shows: English where there is one, else the default locale.
struct Locales {
    messages: serde_json::Map<String, Value>,
}

impl Locales {
    fn read(tree: &Tree, root: &str, default: Option<&str>) -> Locales {
        let mut messages = serde_json::Map::new();
        for lang in ["en", "en_US", "en_GB"].into_iter().chain(default) {
            let Ok(p) = SitePath::new(&format!("{root}_locales/{lang}/messages.json")) else {
                continue;
            };
            let Some(c) = tree.get(&p) else { continue };
            if let Ok(b) = c.read() {
                let b = b.strip_prefix(b"\xef\xbb\xbf").unwrap_or(&b);
                if let Ok(Value::Object(m)) = serde_json::from_slice(b) {
                    messages = m;
                    break;
                }
            }
        }
        Locales { messages }
    }

    /// `s` with every `__MSG_name__` replaced by its message (names match ignoring case,
    /// as in Chrome); an unknown name becomes "".
    fn expand(&self, s: &str) -> String {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("__MSG_") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 6..];
            let Some(j) = after.find("__") else {
                out.push_str(&rest[i..]);
                return out;
            };
            let key = after[..j].to_lowercase();
            let msg = self
                .messages
                .iter()
                .find(|(k, _)| k.to_lowercase() == key)
                .and_then(|(_, v)| v.get("message")?.as_str())
                .unwrap_or_default();
            out.push_str(msg);
            rest = &after[j + 2..];
        }
        out.push_str(rest);
        out
    }
}
