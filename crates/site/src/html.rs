//! Adding the host's scripts to a page. Pages are edited as bytes, never decoded: a page
//! in Latin-1 or Shift_JIS keeps every byte, and what is inserted is ASCII.

/// What a page gets, before its own scripts.
pub struct PageScripts<'a> {
    /// The relative URL prefix from the page to the site root (`""` or `../…`).
    pub to_root: &'a str,
    /// For a page of a Chrome package: the prefix from the page to the package root.
    pub to_package: Option<&'a str>,
    /// The `pexe2wasm-config` script ([`config_element`]), or "".
    pub config: &'a str,
}

/// The page config element (`<script type="application/json" id="pexe2wasm-config">`) of
/// `web`'s pages: `settings` (`urlMap`, `refuseUnmapped`) and `preconverted: true`, so the
/// drop-in script loads the `.wasm` beside each pexe and converts nothing in the browser
/// (web/src/embed.js; docs/DROP-IN.md). `<` is escaped so no value can end the element.
pub fn config_element(settings: &serde_json::Map<String, serde_json::Value>) -> String {
    let mut config = settings.clone();
    config.insert("preconverted".into(), true.into());
    let json = serde_json::Value::Object(config)
        .to_string()
        .replace('<', "\\u003c");
    format!("<script type=\"application/json\" id=\"pexe2wasm-config\">{json}</script>\n")
}

impl PageScripts<'_> {
    /// The tags, one per line.
    pub fn tags(&self) -> String {
        let r = self.to_root;
        let mut s = String::from("\n");
        s.push_str(self.config);
        s.push_str(&format!(
            "<script src=\"{r}pexe2wasm-isolation.js\"></script>\n"
        ));
        // The drop-in script (docs/DROP-IN.md): the mimeTypes answer at once, then the host.
        s.push_str(&format!("<script src=\"{r}pexe2wasm.js\"></script>\n"));
        if let Some(p) = self.to_package {
            s.push_str(&format!(
                "<script src=\"{r}pexe2wasm/chrome/apis.js\" data-package=\"{}\"></script>\n",
                attr_escape(p)
            ));
        }
        s
    }
}

/// `page` with `scripts` added where they run before anything of the page's own: after
/// `<head …>`, or after a `<meta charset>` that comes before any script (the charset must
/// stay within the page's first 1024 bytes), or, for a page without `<head>`, after
/// `<html …>` or the doctype (never before the doctype: that would switch the page to
/// quirks mode).
pub fn add_scripts(page: &[u8], scripts: &PageScripts) -> Vec<u8> {
    let tags = scripts.tags();
    let at = insertion_point(page);
    let mut out = Vec::with_capacity(page.len() + tags.len());
    out.extend_from_slice(&page[..at]);
    out.extend_from_slice(tags.as_bytes());
    out.extend_from_slice(&page[at..]);
    out
}

fn insertion_point(page: &[u8]) -> usize {
    let lower = page.to_ascii_lowercase();
    let first_script = find_tag(&lower, b"<script", 0).unwrap_or(lower.len());
    if let Some(h) = find_tag(&lower, b"<head", 0).filter(|&h| h < first_script) {
        let after_head = end_of_tag(&lower, h);
        // A charset declaration in the head, before any script: insert after it.
        let mut at = after_head;
        let mut from = after_head;
        while let Some(m) = find_tag(&lower, b"<meta", from).filter(|&m| m < first_script) {
            let end = end_of_tag(&lower, m);
            if lower[m..end].windows(7).any(|w| w == b"charset") {
                at = end;
                break;
            }
            from = end;
        }
        return at;
    }
    if let Some(h) = find_tag(&lower, b"<html", 0).filter(|&h| h < first_script) {
        return end_of_tag(&lower, h);
    }
    if let Some(d) = find_tag(&lower, b"<!doctype", 0).filter(|&d| d < first_script) {
        return end_of_tag(&lower, d);
    }
    0
}

/// The first `tag` (lower case, e.g. `<head`) at or after `from` that is followed by `>`,
/// white space or `/` (so `<header` is not `<head`), outside comments.
fn find_tag(lower: &[u8], tag: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    while i + tag.len() <= lower.len() {
        if lower[i..].starts_with(b"<!--") {
            i = match find(lower, b"-->", i + 4) {
                Some(e) => e + 3,
                None => return None,
            };
            continue;
        }
        if lower[i..].starts_with(tag) {
            match lower.get(i + tag.len()) {
                None | Some(b'>' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/') => {
                    return Some(i)
                }
                _ => {}
            }
        }
        i += 1;
    }
    None
}

fn find(h: &[u8], n: &[u8], from: usize) -> Option<usize> {
    h.get(from..)?
        .windows(n.len())
        .position(|w| w == n)
        .map(|p| p + from)
}

/// Just past the `>` that ends the tag starting at `start` (quotes respected).
fn end_of_tag(lower: &[u8], start: usize) -> usize {
    let mut quote = None;
    for (k, &b) in lower[start..].iter().enumerate() {
        match (quote, b) {
            (None, b'"' | b'\'') => quote = Some(b),
            (Some(q), _) if b == q => quote = None,
            (None, b'>') => return start + k + 1,
            _ => {}
        }
    }
    lower.len()
}

/// `s` for an HTML attribute value or text.
pub fn attr_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// Whether a page embeds NaCl or looks like it may (an `application/x-pnacl` type, a
/// native app's `application/x-nacl`, or an `.nmf` URL in the page). Pages that build the
/// embed in a script file are found through the scripts (see `scan`).
pub fn mentions_nacl(text: &[u8]) -> bool {
    let lower = text.to_ascii_lowercase();
    [&b"x-pnacl"[..], b"x-nacl", b".nmf"]
        .iter()
        .any(|w| find(&lower, w, 0).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn pages_of_both_nacl_types_mention_nacl() {
        for page in [
            &b"<embed type='application/x-pnacl' src=a.pexe>"[..],
            b"<EMBED TYPE=\"application/x-NaCl\" src=app>",
            b"<script>load('app.nmf')</script>",
        ] {
            assert!(mentions_nacl(page), "{}", String::from_utf8_lossy(page));
        }
        assert!(!mentions_nacl(
            b"<embed type='application/x-shockwave-flash'>"
        ));
    }

    fn add(page: &str) -> String {
        let s = PageScripts {
            to_root: "../",
            to_package: None,
            config: "",
        };
        String::from_utf8(add_scripts(page.as_bytes(), &s)).unwrap()
    }

    #[test]
    fn scripts_go_first_in_the_head_after_the_charset() {
        let out = add(
            "<!DOCTYPE html><HTML><HEAD><title>t</title><script src=a.js></script></HEAD></HTML>",
        );
        assert!(
            out.starts_with(
                "<!DOCTYPE html><HTML><HEAD>\n<script src=\"../pexe2wasm-isolation.js\">"
            ),
            "{out}"
        );
        assert!(out.find("../pexe2wasm.js\"></script>").unwrap() < out.find("a.js").unwrap());
        assert!(
            !out.contains("embed.js") && !out.contains("advertise.js"),
            "{out}"
        );
        let out = add("<html><head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=iso-8859-1\">\n<title>x</title></head>");
        let meta = out.find("charset=iso").unwrap();
        assert!(meta < out.find("pexe2wasm").unwrap(), "{out}");
        // <header> is not <head>; no head: after <html>; none at all: after the doctype.
        let out = add("<!doctype html><html lang=en><body><header>x</header>");
        assert!(
            out.starts_with("<!doctype html><html lang=en>\n<script"),
            "{out}"
        );
        let out = add("<!doctype html>\n<p>x");
        assert!(out.starts_with("<!doctype html>\n<script"), "{out}");
        // A <head> inside a comment is not the head.
        let out = add("<!-- <head> --><html><head><title>");
        assert!(
            out.starts_with("<!-- <head> --><html><head>\n<script"),
            "{out}"
        );
    }

    #[test]
    fn bytes_that_are_not_utf8_are_kept() {
        let page = b"<html><head><title>M\xfcnchen</title></head></html>";
        let s = PageScripts {
            to_root: "",
            to_package: Some(""),
            config: "",
        };
        let out = add_scripts(page, &s);
        assert!(out.windows(8).any(|w| w == b"M\xfcnchen<"));
        assert!(
            String::from_utf8_lossy(&out).contains("<script src=\"pexe2wasm.js\"></script>\n<script src=\"pexe2wasm/chrome/apis.js\" data-package=\"\"")
        );
    }

    #[test]
    fn the_config_says_preconverted_and_cannot_end_its_element() {
        assert_eq!(
            config_element(&serde_json::Map::new()),
            "<script type=\"application/json\" id=\"pexe2wasm-config\">{\"preconverted\":true}</script>\n"
        );
        let settings = serde_json::json!({
            "urlMap": { "http://a/</script>": "http://b/" },
            "refuseUnmapped": true,
            "preconverted": false,
        });
        let s = config_element(settings.as_object().unwrap());
        let json = s
            .strip_prefix("<script type=\"application/json\" id=\"pexe2wasm-config\">")
            .and_then(|s| s.strip_suffix("</script>\n"))
            .unwrap();
        assert!(!json.contains('<'), "{s}");
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["preconverted"], true);
        assert_eq!(v["refuseUnmapped"], true);
        assert_eq!(v["urlMap"]["http://a/</script>"], "http://b/");
    }
}
