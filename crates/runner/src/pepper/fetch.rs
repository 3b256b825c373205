//! What `PPB_URLLoader` may fetch, and the fetching (docs/PEPPER-CLI.md, "URLs").
//!
//! The app names URLs as it did in a page; this host decides where each one goes:
//! * a relative URL resolves against the page, which is `--origin`: a directory (the page
//!   is then [`DIR_ORIGIN`], whose files are the directory's) or a loopback `http://` URL;
//!   with no `--origin` there is no page, and a relative URL fails (`PP_ERROR_FAILED`, as
//!   a URL that does not resolve fails in Chrome);
//! * an absolute URL that starts with the FROM of a `--url-map FROM=TO` is fetched from TO
//!   (a loopback `http://` URL) with the rest of the URL appended: the app still sees its
//!   own URL in the response, in redirects and in `Location`;
//! * a URL of the page's own origin is served from the directory or fetched from the
//!   loopback origin;
//! * anything else is refused with `PP_ERROR_NOACCESS`, Chrome's answer for a blocked
//!   request, and a note names the URL. Redirects are routed the same way.
//!
//! Nothing but loopback is ever contacted: the map's targets and an `http://` origin are
//! checked when the run starts, and the HTTP client resolves names only to loopback
//! addresses (`LoopbackOnly`), uses no proxy and speaks no TLS.
//!
//! The same-origin policy and CORS of the web are not modelled: the map is the access
//! control (`ALLOWCROSSORIGINREQUESTS` and `ALLOWCREDENTIALS` are accepted and change
//! nothing).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use url::Url;

use super::pp_error;

/// The page's URL when `--origin` is a directory: relative URLs resolve against it and
/// URLs of its origin are served from the directory. A `.localhost` name (RFC 6761), so it
/// can never be a host elsewhere.
pub const DIR_ORIGIN: &str = "http://app.localhost/";

/// Redirects followed for one `Open` before it fails (Chrome's network stack allowed 20).
pub const MAX_REDIRECTS: usize = 20;

/// Request headers an untrusted plugin may not set (the Fetch standard's forbidden request
/// headers, which Blink enforced for Pepper's untrusted loads), lower case.
const FORBIDDEN_HEADERS: &[&str] = &[
    "accept-charset",
    "accept-encoding",
    "access-control-request-headers",
    "access-control-request-method",
    "connection",
    "content-length",
    "cookie",
    "cookie2",
    "date",
    "dnt",
    "expect",
    "host",
    "keep-alive",
    "origin",
    "referer",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "via",
];

/// Whether `name` is a header an untrusted plugin may not set.
pub fn is_forbidden_header(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    FORBIDDEN_HEADERS.contains(&n.as_str()) || n.starts_with("proxy-") || n.starts_with("sec-")
}

/// Whether `host` names this machine: `localhost` (or a name under it), 127.0.0.0/8, ::1.
pub fn is_loopback_host(host: url::Host<&str>) -> bool {
    match host {
        url::Host::Domain(d) => {
            let d = d.trim_end_matches('.').to_ascii_lowercase();
            d == "localhost" || d.ends_with(".localhost")
        }
        url::Host::Ipv4(a) => a.is_loopback(),
        url::Host::Ipv6(a) => a.is_loopback(),
    }
}

/// Whether `u` is an `http://` URL of this machine.
pub fn is_loopback_http(u: &Url) -> bool {
    u.scheme() == "http" && u.host().is_some_and(is_loopback_host)
}

/// What a refused request gets, and why (for the note).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refused {
    pub code: i32,
    pub why: String,
}

impl Refused {
    fn new(code: i32, why: String) -> Refused {
        Refused { code, why }
    }
}

/// Where one URL is fetched from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Route {
    /// A file of the `--origin` directory: the URL's path.
    Dir(String),
    /// Over HTTP from this loopback URL; with the index of the `--url-map` entry used.
    Http(Url, Option<usize>),
}

#[derive(Debug, Clone)]
enum Origin {
    None,
    Dir { root: PathBuf, base: Url },
    Http { base: Url },
}

/// One `--url-map FROM=TO`, both normalised (see [`UrlPolicy::new`]).
#[derive(Debug, Clone)]
struct UrlMap {
    from: String,
    to: String,
}

/// The run's rules for URLs: `--origin` and `--url-map`, checked.
#[derive(Debug, Clone)]
pub struct UrlPolicy {
    origin: Origin,
    maps: Vec<UrlMap>,
}

impl Default for UrlPolicy {
    fn default() -> Self {
        UrlPolicy {
            origin: Origin::None,
            maps: Vec::new(),
        }
    }
}

/// `text` as an absolute URL, or why not.
fn parse_absolute(what: &str, text: &str) -> Result<Url, String> {
    Url::parse(text).map_err(|e| format!("{what} {text}: not an absolute URL ({e})"))
}

impl UrlPolicy {
    /// The rules for `--origin` and `--url-map`, or what is wrong with them:
    /// * `origin`: an existing directory, or an `http://` URL of a loopback host;
    /// * each map: FROM an absolute `http://` or `https://` URL (a prefix), TO an `http://`
    ///   URL of a loopback host. A FROM that is a whole origin (`https://example.com`) is
    ///   taken with its `/`, so it cannot match `https://example.com.evil/`; when FROM ends
    ///   with `/`, so does TO. Maps of other schemes (`ws://`, …) are not URL loads'
    ///   business and are left to the hosts that use them.
    pub fn new(origin: Option<&str>, maps: &[(String, String)]) -> Result<UrlPolicy, String> {
        let origin = match origin {
            None => Origin::None,
            Some(o) if o.starts_with("http://") || o.starts_with("https://") => {
                let base = parse_absolute("--origin", o)?;
                if !is_loopback_http(&base) {
                    return Err(format!(
                        "--origin {o}: only http:// URLs of this machine (localhost, 127.0.0.1, [::1]) may be an origin"
                    ));
                }
                Origin::Http { base }
            }
            Some(o) => {
                let root = std::fs::canonicalize(o)
                    .map_err(|e| format!("--origin {o}: not a directory or http:// URL ({e})"))?;
                if !root.is_dir() {
                    return Err(format!("--origin {o}: not a directory"));
                }
                Origin::Dir {
                    root,
                    base: Url::parse(DIR_ORIGIN).expect("a valid URL"),
                }
            }
        };
        let mut out = Vec::new();
        for (from_text, to_text) in maps {
            let from = parse_absolute("--url-map", from_text)?;
            if !matches!(from.scheme(), "http" | "https") {
                continue;
            }
            let to = parse_absolute("--url-map", to_text)?;
            if !is_loopback_http(&to) {
                return Err(format!(
                    "--url-map {from_text}={to_text}: TO must be an http:// URL of this machine (localhost, 127.0.0.1, [::1])"
                ));
            }
            if to.query().is_some() || to.fragment().is_some() {
                return Err(format!(
                    "--url-map {from_text}={to_text}: TO may not have a query or fragment"
                ));
            }
            // The parsed forms: a bare origin gets its "/", and both compare as the app's
            // URLs serialise.
            let from = from.as_str().to_string();
            let mut to = to.as_str().to_string();
            if from.ends_with('/') && !to.ends_with('/') {
                to.push('/');
            }
            out.push(UrlMap { from, to });
        }
        Ok(UrlPolicy { origin, maps: out })
    }

    /// The page's URL, if there is a page (`--origin`).
    pub fn page(&self) -> Option<&Url> {
        match &self.origin {
            Origin::None => None,
            Origin::Dir { base, .. } | Origin::Http { base } => Some(base),
        }
    }

    /// The absolute URL the app means by `text` (what `PP_URLREQUESTPROPERTY_URL` was set
    /// to), as the page would resolve it.
    pub fn resolve(&self, text: &str) -> Result<Url, Refused> {
        match Url::parse(text) {
            Ok(u) => Ok(u),
            Err(url::ParseError::RelativeUrlWithoutBase) => match self.page() {
                Some(base) => base.join(text).map_err(|e| {
                    Refused::new(pp_error::FAILED, format!("the URL {text:?} does not resolve ({e})"))
                }),
                None => Err(Refused::new(
                    pp_error::FAILED,
                    format!(
                        "the relative URL {text:?} has no page to resolve against (give --origin DIR|URL)"
                    ),
                )),
            },
            Err(e) => Err(Refused::new(
                pp_error::FAILED,
                format!("the URL {text:?} is not valid ({e})"),
            )),
        }
    }

    /// Where the app's (absolute) URL `u` is fetched from, or why it is not.
    pub fn route(&self, u: &Url) -> Result<Route, Refused> {
        if !matches!(u.scheme(), "http" | "https") {
            return Err(Refused::new(
                pp_error::FAILED,
                format!("{u}: only http:// and https:// URLs are loaded"),
            ));
        }
        let text = u.as_str();
        let best = self
            .maps
            .iter()
            .enumerate()
            .filter(|(_, m)| text.starts_with(&m.from))
            .max_by_key(|(_, m)| m.from.len());
        if let Some((i, m)) = best {
            let target = format!("{}{}", m.to, &text[m.from.len()..]);
            let actual = Url::parse(&target).map_err(|e| {
                Refused::new(
                    pp_error::FAILED,
                    format!("{u} maps to {target}, which is not a URL ({e})"),
                )
            })?;
            if !is_loopback_http(&actual) {
                // Only a map whose TO is a bare host can be led elsewhere by what follows.
                return Err(Refused::new(
                    pp_error::NOACCESS,
                    format!("{u} maps to {actual}, which is not on this machine: refused"),
                ));
            }
            return Ok(Route::Http(actual, Some(i)));
        }
        match &self.origin {
            Origin::Dir { base, .. } if same_origin(base, u) => Ok(Route::Dir(u.path().to_string())),
            Origin::Http { base } if same_origin(base, u) => Ok(Route::Http(u.clone(), None)),
            _ => Err(Refused::new(
                pp_error::NOACCESS,
                format!(
                    "refused to fetch {u}: it is not of the page's origin and no --url-map covers it"
                ),
            )),
        }
    }

    /// The app's view of `actual`, a URL a loopback server named (a redirect's target):
    /// the FROM of the map whose TO it starts with (`prefer` first: the map of the request
    /// that was redirected), else `actual` itself.
    pub fn unmap(&self, actual: &Url, prefer: Option<usize>) -> Url {
        let text = actual.as_str();
        let order = prefer.into_iter().chain(0..self.maps.len());
        for i in order {
            let Some(m) = self.maps.get(i) else { continue };
            if let Some(rest) = text.strip_prefix(&m.to) {
                if let Ok(u) = Url::parse(&format!("{}{rest}", m.from)) {
                    return u;
                }
            }
        }
        actual.clone()
    }

    /// The `--origin` directory, if the origin is one.
    pub fn dir_root(&self) -> Option<&Path> {
        match &self.origin {
            Origin::Dir { root, .. } => Some(root),
            _ => None,
        }
    }
}

fn same_origin(a: &Url, b: &Url) -> bool {
    a.scheme() == b.scheme()
        && a.host_str() == b.host_str()
        && a.port_or_known_default() == b.port_or_known_default()
}

/// One request as sent.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// Upper-case for the standard methods, as the app wrote it otherwise.
    pub method: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// A response's head, as `PPB_URLResponseInfo` gives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Head {
    /// The app's URL of the response.
    pub url: String,
    pub status: i32,
    /// The reason phrase (`STATUSLINE` in Chrome was just this).
    pub status_text: String,
    /// `Name: value` lines joined by `\n`, as Chrome formatted them.
    pub headers: String,
    /// A redirect's target (the app's URL), for 3xx responses with a `Location`.
    pub redirect_url: Option<String>,
    /// The method `FollowRedirect` would use, for such a redirect.
    pub redirect_method: Option<String>,
    /// The body's length, when the response says it.
    pub content_length: Option<u64>,
}

/// A response: its head and its body, to be read.
pub struct Response {
    pub head: Head,
    pub body: Box<dyn Read + Send>,
    /// For a redirect: where it leads (the app's URL).
    pub redirect: Option<Url>,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Response")
            .field("head", &self.head)
            .field("redirect", &self.redirect)
            .finish_non_exhaustive()
    }
}

/// `Content-Type`s of the directory origin's files, by extension.
fn content_type(path: &Path) -> &'static str {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("html" | "htm") => "text/html",
        Some("txt" | "text") => "text/plain",
        Some("css") => "text/css",
        Some("js" | "mjs") => "text/javascript",
        Some("json" | "nmf") => "application/json",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "image/svg+xml",
        Some("wasm") => "application/wasm",
        Some("pexe") => "application/x-pnacl",
        Some("nexe") => "application/x-nacl",
        Some("wav") => "audio/wav",
        Some("ogg") => "audio/ogg",
        Some("mp3") => "audio/mpeg",
        _ => "application/octet-stream",
    }
}

fn canned(url: &Url, status: i32, text: &str) -> Response {
    let body = format!("{status} {text}\n").into_bytes();
    Response {
        head: Head {
            url: url.to_string(),
            status,
            status_text: text.to_string(),
            headers: format!("Content-Type: text/plain\nContent-Length: {}", body.len()),
            redirect_url: None,
            redirect_method: None,
            content_length: Some(body.len() as u64),
        },
        body: Box::new(std::io::Cursor::new(body)),
        redirect: None,
    }
}

/// Serves `path` (a URL path) from the directory `root` (canonical), as a small static
/// web server would: 200 with the file, 404 for what is missing or not a file, 403 for a
/// name that leads out of the directory (a symbolic link), 405 for methods other than GET
/// and HEAD. Returns the response and, for a 403, what to note.
pub fn serve_dir(root: &Path, url: &Url, path: &str, method: &str) -> (Response, Option<String>) {
    if method != "GET" && method != "HEAD" {
        return (canned(url, 405, "Method Not Allowed"), None);
    }
    let mut file = root.to_path_buf();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        let seg = percent_encoding::percent_decode_str(seg).decode_utf8_lossy();
        // The URL parser removed dot segments; escaped ones come back here.
        if seg == "." || seg == ".." || seg.contains(['/', '\\', '\0']) {
            return (canned(url, 404, "Not Found"), None);
        }
        file.push(seg.as_ref());
    }
    let real = match std::fs::canonicalize(&file) {
        Ok(r) => r,
        Err(_) => return (canned(url, 404, "Not Found"), None),
    };
    if !real.starts_with(root) {
        return (
            canned(url, 403, "Forbidden"),
            Some(format!(
                "refused to serve {url}: {} leads out of the --origin directory",
                file.display()
            )),
        );
    }
    let f = match std::fs::File::open(&real) {
        Ok(f) => f,
        Err(_) => return (canned(url, 404, "Not Found"), None),
    };
    let len = match f.metadata() {
        Ok(m) if m.is_file() => m.len(),
        _ => return (canned(url, 404, "Not Found"), None),
    };
    let body: Box<dyn Read + Send> = if method == "HEAD" {
        Box::new(std::io::empty())
    } else {
        Box::new(f)
    };
    let head = Head {
        url: url.to_string(),
        status: 200,
        status_text: "OK".into(),
        headers: format!(
            "Content-Type: {}\nContent-Length: {len}",
            content_type(&real)
        ),
        redirect_url: None,
        redirect_method: None,
        content_length: Some(if method == "HEAD" { 0 } else { len }),
    };
    (
        Response {
            head,
            body,
            redirect: None,
        },
        None,
    )
}

/// Resolves host names to loopback addresses only, whatever a name server says: the last
/// guard that nothing leaves the machine.
#[derive(Debug)]
struct LoopbackOnly;

impl ureq::unversioned::resolver::Resolver for LoopbackOnly {
    fn resolve(
        &self,
        uri: &ureq::http::Uri,
        config: &ureq::config::Config,
        timeout: ureq::unversioned::transport::NextTimeout,
    ) -> Result<ureq::unversioned::resolver::ResolvedSocketAddrs, ureq::Error> {
        let all = ureq::unversioned::resolver::DefaultResolver::default()
            .resolve(uri, config, timeout)?;
        let mut out = self.empty();
        for a in all.iter().filter(|a| a.ip().is_loopback()) {
            out.push(*a);
        }
        if out.is_empty() {
            return Err(ureq::Error::HostNotFound);
        }
        Ok(out)
    }
}

fn agent() -> ureq::Agent {
    let config = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .allow_non_standard_methods(true)
        .user_agent(concat!(
            "pexe2wasm/",
            env!("CARGO_PKG_VERSION"),
            " (Pepper URLLoader)"
        ))
        .timeout_connect(Some(Duration::from_secs(10)))
        .build();
    ureq::Agent::with_parts(
        config,
        ureq::unversioned::transport::DefaultConnector::default(),
        LoopbackOnly,
    )
}

/// `content-type` as `Content-Type`: the client hands header names over in lower case, and
/// HTTP/1.1 servers nearly always send them capitalised so.
fn capitalise(name: &str) -> String {
    name.split('-')
        .map(|p| {
            let mut c = p.chars();
            match c.next() {
                Some(f) => f.to_ascii_uppercase().to_string() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join("-")
}

/// Fetches `actual` (a loopback `http://` URL) for the app's URL `visible`, over HTTP.
/// `map` is the `--url-map` entry used (to show redirects in the app's terms).
pub fn fetch_http(
    policy: &UrlPolicy,
    visible: &Url,
    actual: &Url,
    map: Option<usize>,
    req: &Request,
) -> Result<Response, Refused> {
    if !is_loopback_http(actual) {
        return Err(Refused::new(
            pp_error::NOACCESS,
            format!("refused to fetch {actual}: not on this machine"),
        ));
    }
    let method = ureq::http::Method::from_bytes(req.method.as_bytes()).map_err(|_| {
        Refused::new(
            pp_error::NOACCESS,
            format!("the method {:?} is not valid", req.method),
        )
    })?;
    let mut builder = ureq::http::Request::builder()
        .method(method)
        .uri(actual.as_str());
    for (k, v) in &req.headers {
        builder = builder.header(k.as_str(), v.as_str());
    }
    let failed = |e: &dyn std::fmt::Display| {
        Refused::new(
            pp_error::FAILED,
            format!("fetching {visible} from {actual} failed: {e}"),
        )
    };
    let agent = agent();
    let response = if req.body.is_empty() {
        let r = builder.body(()).map_err(|e| failed(&e))?;
        agent.run(r)
    } else {
        let r = builder.body(req.body.clone()).map_err(|e| failed(&e))?;
        agent.run(r)
    }
    .map_err(|e| failed(&e))?;
    let status = response.status();
    let mut lines: Vec<(String, String)> = Vec::new();
    let mut location = None;
    for (name, value) in response.headers() {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        let mut shown = value.clone();
        if name == ureq::http::header::LOCATION {
            // Show the app its own URL, not the loopback one it was mapped to.
            if let Ok(target) = actual.join(&value) {
                let v = policy.unmap(&target, map);
                shown = v.to_string();
                location = Some(v);
            }
        }
        let name = capitalise(name.as_str());
        // Repeated headers are folded into one line, as Blink's header map did.
        match lines.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => {
                v.push_str(", ");
                v.push_str(&shown);
            }
            None => lines.push((name, shown)),
        }
    }
    let code = status.as_u16() as i32;
    let redirect = if (300..400).contains(&code) {
        location
    } else {
        None
    };
    let head = Head {
        url: visible.to_string(),
        status: code,
        status_text: status.canonical_reason().unwrap_or("").to_string(),
        headers: lines
            .iter()
            .map(|(n, v)| format!("{n}: {v}"))
            .collect::<Vec<_>>()
            .join("\n"),
        redirect_url: redirect.as_ref().map(|u| u.to_string()),
        redirect_method: redirect
            .as_ref()
            .map(|_| redirected_request(req, code).method),
        content_length: if req.method == "HEAD" {
            Some(0)
        } else {
            response.body().content_length()
        },
    };
    let body = response.into_body().into_reader();
    Ok(Response {
        head,
        body: Box::new(body),
        redirect,
    })
}

/// Fetches the app's URL `visible` once (no redirect followed): from the directory origin,
/// or over HTTP. What is refused is refused with a reason for the note.
pub fn fetch_once(
    policy: &UrlPolicy,
    visible: &Url,
    req: &Request,
) -> Result<(Response, Option<String>), Refused> {
    match policy.route(visible)? {
        Route::Dir(path) => {
            let root = policy.dir_root().ok_or_else(|| {
                Refused::new(pp_error::FAILED, "no --origin directory".to_string())
            })?;
            Ok(serve_dir(root, visible, &path, &req.method))
        }
        Route::Http(actual, map) => Ok((fetch_http(policy, visible, &actual, map, req)?, None)),
    }
}

/// The request that follows a redirect with `status`: 303 turns anything but HEAD into a
/// body-less GET, and 301/302 turn POST into GET, as browsers do.
pub fn redirected_request(req: &Request, status: i32) -> Request {
    let to_get = (status == 303 && req.method != "HEAD")
        || ((status == 301 || status == 302) && req.method == "POST");
    if to_get {
        Request {
            method: "GET".into(),
            headers: req
                .headers
                .iter()
                .filter(|(k, _)| !k.eq_ignore_ascii_case("content-type"))
                .cloned()
                .collect(),
            body: Vec::new(),
        }
    } else {
        req.clone()
    }
}
