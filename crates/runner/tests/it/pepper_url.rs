//! `PPB_URLRequestInfo`, `PPB_URLLoader` and `PPB_URLResponseInfo` of the command-line host:
//! the URL rules of `--origin` and `--url-map` (checked at start, routed per URL), the
//! directory origin, request properties with Chrome's var types, and loads against a
//! loopback server through the harness (posing as module thread 1 with blocking
//! callbacks, so each call returns when its work is done). Nothing here reaches beyond
//! loopback: the URLs of other hosts are refused before anything is sent.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use pexe2wasm_runner::pepper::fetch::{self, Route, UrlPolicy};
use pexe2wasm_runner::pepper::loader::{property, Loader, PropertyValue, RequestInfo};
use pexe2wasm_runner::pepper::resources::Resource;
use pexe2wasm_runner::pepper::var::PpVar;
use pexe2wasm_runner::pepper::{pp_error, INSTANCE};
use pexe2wasm_runner::wasmtime::Val;
use pexe2wasm_testkit::corpus::Scratch;
use pexe2wasm_testkit::http::{Reply, TestServer};

use crate::pepper_support::Harness;

const REQ: &str = "PPB_URLRequestInfo;1.0";
const LOADER: &str = "PPB_URLLoader;1.0";
const RESP: &str = "PPB_URLResponseInfo;1.0";

const CB: u32 = 0x100;
const VAR: u32 = 0x1000;
const TEXT: u32 = 0x1100;
const OUT: u32 = 0x3000;
const BUF: u32 = 0x10000;

fn map(from: &str, to: &str) -> (String, String) {
    (from.to_string(), to.to_string())
}

/// A harness whose `--url-map` sends `https://site.example/` to `server`, posing as
/// module thread 1.
fn mapped(server: &TestServer) -> Harness {
    let to = server.url("/");
    let mut h = Harness::with_config(move |c| c.url_map = vec![map("https://site.example/", &to)]);
    h.set_thread(1);
    h
}

fn set_string(h: &mut Harness, req: i32, prop: i32, text: &str) -> i32 {
    h.make_string(text, VAR);
    h.call(REQ, "SetProperty", &[req, prop, VAR as i32])
}

fn set_bool(h: &mut Harness, req: i32, prop: i32, b: bool) -> i32 {
    h.write_var(VAR, PpVar::Bool(b));
    h.call(REQ, "SetProperty", &[req, prop, VAR as i32])
}

fn request(h: &mut Harness, url: &str) -> i32 {
    let req = h.call(REQ, "Create", &[INSTANCE]);
    assert_eq!(set_string(h, req, property::URL, url), 1);
    req
}

/// Opens `req` on a new loader with a blocking callback: the loader and the result.
fn open(h: &mut Harness, req: i32) -> (i32, i32) {
    let loader = h.call(LOADER, "Create", &[INSTANCE]);
    let cb = h.blocking_callback(CB);
    let r = h.call(LOADER, "Open", &[loader, req, cb]);
    (loader, r)
}

/// Reads the rest of the body in reads of `n` bytes.
fn read_all(h: &mut Harness, loader: i32, n: i32) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let cb = h.blocking_callback(CB);
        let r = h.call(LOADER, "ReadResponseBody", &[loader, BUF as i32, n, cb]);
        assert!(r >= 0, "ReadResponseBody: {r}");
        if r == 0 {
            return out;
        }
        assert!(r <= n);
        out.extend(h.read(BUF, r as u32));
    }
}

fn property_of(h: &mut Harness, response: i32, prop: i32) -> PpVar {
    h.call(RESP, "GetProperty", &[OUT as i32, response, prop]);
    h.read_var(OUT)
}

fn string_property(h: &mut Harness, response: i32, prop: i32) -> Option<String> {
    h.call(RESP, "GetProperty", &[OUT as i32, response, prop]);
    h.string_at(OUT)
}

fn notes(h: &Harness) -> String {
    h.sink.notes.lock().unwrap().join("\n")
}

#[test]
fn url_rules_are_checked_when_the_run_starts() {
    let e = Harness::start_error(|c| c.origin = Some("http://example.com/".into()));
    assert!(
        e.contains("--origin http://example.com/") && e.contains("this machine"),
        "{e}"
    );
    let e = Harness::start_error(|c| c.origin = Some("/no/such/dir".into()));
    assert!(e.contains("--origin /no/such/dir"), "{e}");
    for to in [
        "http://10.0.0.1/",
        "https://127.0.0.1/",
        "http://example.com/",
        "nonsense",
    ] {
        let e = Harness::start_error(|c| c.url_map = vec![map("https://a.example/", to)]);
        assert!(e.contains("--url-map"), "{to}: {e}");
    }
    let e = Harness::start_error(|c| {
        c.url_map = vec![map("https://a.example/", "http://127.0.0.1:1/?q")]
    });
    assert!(e.contains("query"), "{e}");
    // Loopback targets, and maps of other schemes (WebSockets' business), are fine.
    Harness::with_config(|c| {
        c.origin = Some("http://localhost:8000/app/".into());
        c.url_map = vec![
            map("https://a.example", "http://127.0.0.1:9/"),
            map("https://b.example/", "http://[::1]:9/x/"),
            map("ws://c.example/", "ws://example.com/"),
        ];
    });
}

#[test]
fn urls_route_to_the_origin_or_a_map_or_nowhere() {
    let none = UrlPolicy::new(None, &[]).unwrap();
    let e = none.resolve("data.txt").unwrap_err();
    assert_eq!(e.code, pp_error::FAILED);
    assert!(e.why.contains("--origin"), "{}", e.why);
    let u = none.resolve("https://x.example/a").unwrap();
    assert_eq!(none.route(&u).unwrap_err().code, pp_error::NOACCESS);
    for odd in [
        "ftp://x.example/f",
        "data:text/plain,hi",
        "file:///etc/passwd",
    ] {
        let u = none.resolve(odd).unwrap();
        assert_eq!(none.route(&u).unwrap_err().code, pp_error::FAILED, "{odd}");
    }

    let dir = Scratch::new("pepper-url-policy");
    let p = UrlPolicy::new(
        Some(dir.dir().to_str().unwrap()),
        &[
            map("https://a.example", "http://127.0.0.1:1"),
            map("https://a.example/deep/", "http://127.0.0.1:2/d/"),
        ],
    )
    .unwrap();
    let u = p.resolve("sub/x.txt?v=1").unwrap();
    assert_eq!(u.as_str(), "http://app.localhost/sub/x.txt?v=1");
    assert_eq!(p.route(&u).unwrap(), Route::Dir("/sub/x.txt".into()));
    let u = p.resolve("../../etc/passwd").unwrap();
    assert_eq!(
        p.route(&u).unwrap(),
        Route::Dir("/etc/passwd".into()),
        "stays in the origin"
    );
    // A bare origin matches with its "/" only.
    let u = p.resolve("https://a.example.evil/x").unwrap();
    assert_eq!(p.route(&u).unwrap_err().code, pp_error::NOACCESS);
    let u = p.resolve("https://a.example/secret.html?q=1").unwrap();
    match p.route(&u).unwrap() {
        Route::Http(t, Some(0)) => assert_eq!(t.as_str(), "http://127.0.0.1:1/secret.html?q=1"),
        other => panic!("{other:?}"),
    }
    // The longest FROM wins, and the loopback URL maps back to the app's.
    let u = p.resolve("https://a.example/deep/y").unwrap();
    let Route::Http(t, Some(1)) = p.route(&u).unwrap() else {
        panic!("not the deeper map")
    };
    assert_eq!(t.as_str(), "http://127.0.0.1:2/d/y");
    assert_eq!(p.unmap(&t, Some(1)).as_str(), "https://a.example/deep/y");
    let elsewhere = url::Url::parse("http://127.0.0.1:3/z").unwrap();
    assert_eq!(p.unmap(&elsewhere, None), elsewhere);

    let h = UrlPolicy::new(Some("http://127.0.0.1:8000/app/"), &[]).unwrap();
    let u = h.resolve("data/f.bin").unwrap();
    assert_eq!(u.as_str(), "http://127.0.0.1:8000/app/data/f.bin");
    assert!(matches!(h.route(&u).unwrap(), Route::Http(_, None)));
    let u = h.resolve("http://127.0.0.1:8001/other").unwrap();
    assert_eq!(
        h.route(&u).unwrap_err().code,
        pp_error::NOACCESS,
        "another port"
    );
}

#[test]
fn a_directory_origin_serves_its_files_and_nothing_else() {
    let dir = Scratch::new("pepper-url-dir");
    dir.put("www/data.txt", b"hello");
    dir.put("www/sub/page.html", b"<p>");
    dir.put("secret", b"outside");
    std::os::unix::fs::symlink(dir.join("secret"), dir.join("www/link")).unwrap();
    let root = std::fs::canonicalize(dir.join("www")).unwrap();
    let url = |p: &str| url::Url::parse(&format!("http://app.localhost{p}")).unwrap();
    let body = |r: fetch::Response| {
        let mut b = Vec::new();
        let mut r = r;
        r.body.read_to_end(&mut b).unwrap();
        b
    };
    let (r, note) = fetch::serve_dir(&root, &url("/data.txt"), "/data.txt", "GET");
    assert_eq!((r.head.status, note), (200, None));
    assert_eq!(
        r.head.headers,
        "Content-Type: text/plain\nContent-Length: 5"
    );
    assert_eq!(r.head.url, "http://app.localhost/data.txt");
    assert_eq!(body(r), b"hello");
    let (r, _) = fetch::serve_dir(&root, &url("/sub/page.html"), "/sub/page.html", "HEAD");
    assert_eq!(r.head.status, 200);
    assert!(r.head.headers.starts_with("Content-Type: text/html"));
    assert_eq!(body(r), b"");
    for (path, status) in [
        ("/missing", 404),
        ("/sub", 404),
        ("/%2e%2e/secret", 404),
        ("/sub/%2E%2E%2F..%2Fsecret", 404),
    ] {
        let (r, _) = fetch::serve_dir(&root, &url(path), path, "GET");
        assert_eq!(r.head.status, status, "{path}");
    }
    let (r, note) = fetch::serve_dir(&root, &url("/link"), "/link", "GET");
    assert_eq!(r.head.status, 403);
    assert!(note.unwrap().contains("leads out"));
    let (r, _) = fetch::serve_dir(&root, &url("/data.txt"), "/data.txt", "POST");
    assert_eq!(r.head.status, 405);
}

#[test]
fn request_properties_take_chromes_var_types() {
    let mut h = Harness::new();
    assert_eq!(h.call(REQ, "Create", &[INSTANCE + 1]), 0);
    let req = h.call(REQ, "Create", &[INSTANCE]);
    assert_eq!(h.call(REQ, "IsURLRequestInfo", &[req]), 1);
    assert_eq!(h.call(REQ, "IsURLRequestInfo", &[0x999]), 0);
    assert_eq!(set_string(&mut h, req, property::URL, "a.txt"), 1);
    assert_eq!(set_string(&mut h, req, property::METHOD, "POST"), 1);
    assert_eq!(set_string(&mut h, req, property::HEADERS, "X-A: 1"), 1);
    assert_eq!(set_bool(&mut h, req, property::FOLLOWREDIRECTS, false), 1);
    assert_eq!(
        set_bool(&mut h, req, property::RECORDDOWNLOADPROGRESS, true),
        1
    );
    assert_eq!(
        set_bool(&mut h, req, property::ALLOWCROSSORIGINREQUESTS, true),
        1
    );
    // The wrong var type, STREAMTOFILE (no longer supported), unknown properties: false.
    h.write_var(VAR, PpVar::Int32(1));
    assert_eq!(
        h.call(REQ, "SetProperty", &[req, property::URL, VAR as i32]),
        0
    );
    assert_eq!(set_string(&mut h, req, property::FOLLOWREDIRECTS, "yes"), 0);
    assert_eq!(set_bool(&mut h, req, property::STREAMTOFILE, true), 0);
    assert_eq!(set_bool(&mut h, req, property::STREAMTOFILE, false), 0);
    assert_eq!(set_bool(&mut h, req, 99, true), 0);
    h.write_var(VAR, PpVar::Double(1.0));
    assert_eq!(
        h.call(
            REQ,
            "SetProperty",
            &[req, property::PREFETCHBUFFERUPPERTHRESHOLD, VAR as i32]
        ),
        0
    );
    h.write_var(VAR, PpVar::Int32(1000));
    assert_eq!(
        h.call(
            REQ,
            "SetProperty",
            &[req, property::PREFETCHBUFFERUPPERTHRESHOLD, VAR as i32]
        ),
        1
    );
    h.write_var(VAR, PpVar::Undefined);
    assert_eq!(
        h.call(
            REQ,
            "SetProperty",
            &[req, property::CUSTOMUSERAGENT, VAR as i32]
        ),
        1
    );
    assert_eq!(
        h.call(REQ, "SetProperty", &[req, property::URL, VAR as i32]),
        0
    );
    assert_eq!(set_bool(&mut h, 0x999, property::FOLLOWREDIRECTS, true), 0);
    // Chrome logged each refusal to the console.
    assert!(h
        .sink
        .console
        .lock()
        .unwrap()
        .iter()
        .any(|(l, t)| *l == 3 && t.contains("PP_URLRequestProperty 3")));
    // Bodies.
    h.write(TEXT, b"abc");
    assert_eq!(h.call(REQ, "AppendDataToBody", &[req, TEXT as i32, 3]), 1);
    assert_eq!(h.call(REQ, "AppendDataToBody", &[req, TEXT as i32, 0]), 1);
    assert_eq!(h.call(REQ, "AppendDataToBody", &[0x999, TEXT as i32, 3]), 0);
    let not_a_ref = h.call_vals(
        REQ,
        "AppendFileToBody",
        &[
            Val::I32(req),
            Val::I32(req),
            Val::I64(0),
            Val::I64(-1),
            Val::F64(0),
        ],
    );
    assert_eq!(not_a_ref, 0);

    let st = h.state();
    let r = st.resources();
    let Some(Resource::UrlRequestInfo(info)) = r.get(req) else {
        panic!("no request info")
    };
    assert_eq!(
        (
            info.url.as_str(),
            info.method.as_str(),
            info.headers.as_str()
        ),
        ("a.txt", "POST", "X-A: 1")
    );
    assert!(!info.follow_redirects && info.record_download_progress);
    assert_eq!(info.prefetch_buffer_upper_threshold, 1000);
    assert_eq!(info.body.len(), 1);
}

#[test]
fn requests_chrome_refused_are_refused() {
    let with = |f: &dyn Fn(&mut RequestInfo)| {
        let mut r = RequestInfo::default();
        f(&mut r);
        r.to_request()
    };
    for prop in [
        property::CUSTOMREFERRERURL,
        property::CUSTOMUSERAGENT,
        property::CUSTOMCONTENTTRANSFERENCODING,
    ] {
        let e = with(&|r| {
            r.set(prop, PropertyValue::String("x".into()));
        })
        .unwrap_err();
        assert_eq!(e.code, pp_error::NOACCESS, "{prop}");
    }
    let e = with(&|r| r.prefetch_buffer_lower_threshold = r.prefetch_buffer_upper_threshold)
        .unwrap_err();
    assert_eq!(e.code, pp_error::FAILED);
    for (method, ok) in [
        ("CONNECT", false),
        ("trace", false),
        ("bad method", false),
        ("PROPFIND", true),
    ] {
        let r = with(&|r| r.method = method.into());
        assert_eq!(r.is_ok(), ok, "{method}");
    }
    assert_eq!(with(&|r| r.method = "post".into()).unwrap().method, "POST");
    assert_eq!(with(&|_| {}).unwrap().method, "GET");
    for forbidden in [
        "Cookie: a=b",
        "host: x",
        "Sec-Fetch-Mode: cors",
        "Proxy-Authorization: x",
    ] {
        let e = with(&|r| r.headers = format!("X-Ok: 1\n{forbidden}")).unwrap_err();
        assert_eq!(e.code, pp_error::NOACCESS, "{forbidden}");
    }
    let r = with(&|r| r.headers = "A: 1\r\nB:2\n\nno colon\n: empty name\n".into()).unwrap();
    assert_eq!(
        r.headers,
        [("A".to_string(), "1".to_string()), ("B".into(), "2".into())]
    );
}

#[test]
fn a_load_opens_streams_and_reports_as_chrome_did() {
    let server = TestServer::start(|_| Reply::text("hello, pepper").with_header("X-Test", "1"));
    let mut h = mapped(&server);
    let req = request(&mut h, "https://site.example/path?x=1");
    set_string(&mut h, req, property::METHOD, "post");
    set_string(
        &mut h,
        req,
        property::HEADERS,
        "X-App: yes\nContent-Type: text/plain",
    );
    set_bool(&mut h, req, property::RECORDDOWNLOADPROGRESS, true);
    set_bool(&mut h, req, property::RECORDUPLOADPROGRESS, true);
    h.write(TEXT, b"abc");
    h.call(REQ, "AppendDataToBody", &[req, TEXT as i32, 3]);
    let loader = h.call(LOADER, "Create", &[INSTANCE]);
    assert_eq!(h.call(LOADER, "IsURLLoader", &[loader]), 1);
    assert_eq!(h.call(LOADER, "GetResponseInfo", &[loader]), 0, "not open");
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(LOADER, "Open", &[loader, req, cb]), pp_error::OK);

    let got = server.requests();
    assert_eq!(got.len(), 1);
    assert_eq!(
        (got[0].method.as_str(), got[0].target.as_str()),
        ("POST", "/path?x=1")
    );
    assert_eq!(got[0].header("X-App"), Some("yes"));
    assert_eq!(got[0].body, b"abc");

    let resp = h.call(LOADER, "GetResponseInfo", &[loader]);
    assert_eq!(h.call(RESP, "IsURLResponseInfo", &[resp]), 1);
    assert_eq!(
        h.call(LOADER, "GetResponseInfo", &[loader]),
        resp,
        "the same resource"
    );
    assert_eq!(
        string_property(&mut h, resp, 0).as_deref(),
        Some("https://site.example/path?x=1"),
        "the app's URL, not the loopback one"
    );
    assert_eq!(property_of(&mut h, resp, 3), PpVar::Int32(200));
    assert_eq!(string_property(&mut h, resp, 4).as_deref(), Some("OK"));
    let headers = string_property(&mut h, resp, 5).unwrap();
    let lines: Vec<&str> = headers.split('\n').collect();
    assert!(lines.contains(&"Content-Type: text/plain"), "{headers:?}");
    assert!(lines.contains(&"X-Test: 1"), "{headers:?}");
    assert!(lines.contains(&"Content-Length: 13"), "{headers:?}");
    assert_eq!(
        property_of(&mut h, resp, 1),
        PpVar::Undefined,
        "not a redirect"
    );
    assert_eq!(property_of(&mut h, resp, 9), PpVar::Undefined);
    assert_eq!(h.call(RESP, "GetBodyAsFileRef", &[resp]), 0);

    assert_eq!(read_all(&mut h, loader, 5), b"hello, pepper");
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(LOADER, "ReadResponseBody", &[loader, BUF as i32, 5, cb]),
        0,
        "still the end"
    );
    assert_eq!(
        h.call(
            LOADER,
            "GetDownloadProgress",
            &[loader, OUT as i32, OUT as i32 + 8]
        ),
        1
    );
    assert_eq!((h.read_i64(OUT), h.read_i64(OUT + 8)), (13, 13));
    assert_eq!(
        h.call(
            LOADER,
            "GetUploadProgress",
            &[loader, OUT as i32, OUT as i32 + 8]
        ),
        1
    );
    assert_eq!((h.read_i64(OUT), h.read_i64(OUT + 8)), (3, 3));
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(LOADER, "FinishStreamingToFile", &[loader, cb]),
        pp_error::NOTSUPPORTED
    );
    // Opened once only.
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(LOADER, "Open", &[loader, req, cb]),
        pp_error::INPROGRESS
    );

    // Progress that was not asked for: false and zeros.
    let req = request(&mut h, "https://site.example/");
    let (loader, r) = open(&mut h, req);
    assert_eq!(r, 0);
    h.write(OUT, &[7; 16]);
    assert_eq!(
        h.call(
            LOADER,
            "GetDownloadProgress",
            &[loader, OUT as i32, OUT as i32 + 8]
        ),
        0
    );
    assert_eq!((h.read_i64(OUT), h.read_i64(OUT + 8)), (0, 0));
}

#[test]
fn urls_no_rule_allows_fail_with_noaccess_and_a_note() {
    let server = TestServer::start(|_| Reply::text("never"));
    let mut h = mapped(&server);
    let req = request(&mut h, "https://elsewhere.example/x");
    let (_, r) = open(&mut h, req);
    assert_eq!(r, pp_error::NOACCESS);
    assert!(
        notes(&h).contains("https://elsewhere.example/x"),
        "{}",
        notes(&h)
    );
    let req = request(&mut h, "relative.txt");
    assert_eq!(
        open(&mut h, req).1,
        pp_error::FAILED,
        "no page to resolve against"
    );
    assert!(notes(&h).contains("relative.txt"));
    for header in ["Cookie: a=1", "Host: elsewhere.example"] {
        let req = request(&mut h, "https://site.example/");
        set_string(&mut h, req, property::HEADERS, header);
        assert_eq!(open(&mut h, req).1, pp_error::NOACCESS, "{header}");
    }
    assert!(server.requests().is_empty());
}

#[test]
fn redirects_are_followed_held_or_refused() {
    let server = TestServer::start(|r| match r.target.as_str() {
        "/r1" => Reply::redirect(302, "/final"),
        "/abs" => Reply::redirect(301, "http://127.0.0.1:1/elsewhere-on-loopback"),
        "/out" => Reply::redirect(302, "https://evil.example/x"),
        "/post" => Reply::redirect(303, "/final"),
        "/loop" => Reply::redirect(302, "/loop"),
        _ => Reply::text("done"),
    });
    let mut h = mapped(&server);
    // Followed: the app sees where it ended.
    let req = request(&mut h, "https://site.example/r1");
    let (loader, r) = open(&mut h, req);
    assert_eq!(r, 0);
    let resp = h.call(LOADER, "GetResponseInfo", &[loader]);
    assert_eq!(
        string_property(&mut h, resp, 0).as_deref(),
        Some("https://site.example/final")
    );
    assert_eq!(read_all(&mut h, loader, 100), b"done");

    // Held for FollowRedirect, with the redirect's URL and method in the app's terms.
    let req = request(&mut h, "https://site.example/post");
    set_string(&mut h, req, property::METHOD, "POST");
    set_bool(&mut h, req, property::FOLLOWREDIRECTS, false);
    let (loader, r) = open(&mut h, req);
    assert_eq!(r, 0);
    let resp = h.call(LOADER, "GetResponseInfo", &[loader]);
    assert_eq!(property_of(&mut h, resp, 3), PpVar::Int32(303));
    assert_eq!(
        string_property(&mut h, resp, 1).as_deref(),
        Some("https://site.example/final")
    );
    assert_eq!(string_property(&mut h, resp, 2).as_deref(), Some("GET"));
    assert!(string_property(&mut h, resp, 5)
        .unwrap()
        .contains("Location: https://site.example/final"));
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(LOADER, "FollowRedirect", &[loader, cb]), 0);
    let resp2 = h.call(LOADER, "GetResponseInfo", &[loader]);
    assert_ne!(resp2, resp);
    assert_eq!(property_of(&mut h, resp2, 3), PpVar::Int32(200));
    assert_eq!(read_all(&mut h, loader, 100), b"done");
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(LOADER, "FollowRedirect", &[loader, cb]),
        pp_error::INPROGRESS,
        "nothing to follow"
    );
    let last = server.requests();
    assert_eq!(
        last[last.len() - 1].method,
        "GET",
        "303 turns POST into GET"
    );

    // Refused where they lead: off the machine, or to loopback no rule allows.
    let before = server.requests().len();
    for path in ["/out", "/abs"] {
        let req = request(&mut h, &format!("https://site.example{path}"));
        assert_eq!(open(&mut h, req).1, pp_error::NOACCESS, "{path}");
    }
    assert_eq!(server.requests().len(), before + 2);
    assert!(
        notes(&h).contains("https://evil.example/x"),
        "{}",
        notes(&h)
    );

    // Endless: 20 redirects, then FAILED.
    let req = request(&mut h, "https://site.example/loop");
    assert_eq!(open(&mut h, req).1, pp_error::FAILED);
    assert_eq!(server.requests().len(), before + 2 + 21);
}

#[test]
fn a_directory_origin_answers_relative_urls() {
    let dir = Scratch::new("pepper-url-origin");
    dir.put("data/level1.txt", b"map data");
    let origin = dir.dir().to_str().unwrap().to_string();
    let mut h = Harness::with_config(move |c| c.origin = Some(origin));
    h.set_thread(1);
    let req = request(&mut h, "data/level1.txt");
    let (loader, r) = open(&mut h, req);
    assert_eq!(r, 0);
    assert_eq!(read_all(&mut h, loader, 3), b"map data");
    let resp = h.call(LOADER, "GetResponseInfo", &[loader]);
    assert_eq!(
        string_property(&mut h, resp, 0).as_deref(),
        Some("http://app.localhost/data/level1.txt")
    );
    let req = request(&mut h, "missing.txt");
    let (loader, r) = open(&mut h, req);
    assert_eq!(r, 0, "a 404 opens");
    let resp = h.call(LOADER, "GetResponseInfo", &[loader]);
    assert_eq!(property_of(&mut h, resp, 3), PpVar::Int32(404));
    assert_eq!(
        string_property(&mut h, resp, 4).as_deref(),
        Some("Not Found")
    );
}

#[test]
fn loader_calls_follow_chromes_rules() {
    let mut h = Harness::new();
    let req = h.call(REQ, "Create", &[INSTANCE]);
    let loader = h.call(LOADER, "Create", &[INSTANCE]);
    assert_eq!(h.call(LOADER, "Create", &[INSTANCE + 1]), 0);
    // On the main thread a blocking callback is refused, but with a bad resource as well
    // the call returns the bad resource (Chrome's enter.cc, SetStateForResourceError).
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(LOADER, "Open", &[0x999, req, cb]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(LOADER, "Open", &[loader, req, cb]),
        pp_error::BLOCKS_MAIN_THREAD
    );
    // Optional callbacks get what is known at once.
    let cb = h.optional_callback(CB);
    assert_eq!(
        h.call(LOADER, "Open", &[0x999, req, cb]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(LOADER, "Open", &[loader, 0x999, cb]),
        pp_error::BADARGUMENT
    );
    assert_eq!(
        h.call(LOADER, "ReadResponseBody", &[loader, BUF as i32, 10, cb]),
        pp_error::FAILED,
        "nothing opened"
    );
    assert_eq!(
        h.call(LOADER, "FinishStreamingToFile", &[0x999, cb]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(
            LOADER,
            "GetUploadProgress",
            &[0x999, OUT as i32, OUT as i32]
        ),
        0
    );
    h.call(LOADER, "Close", &[0x999]);
    h.call(LOADER, "Close", &[loader]);
    h.call(RESP, "GetProperty", &[OUT as i32, loader, 0]);
    assert_eq!(h.read_var(OUT), PpVar::Undefined);
    assert_eq!(h.call(RESP, "IsURLResponseInfo", &[loader]), 0);
}

#[test]
fn close_and_release_abort_a_waiting_read() {
    // A server that sends half its body, then waits until told to end.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
    let server = std::thread::spawn(move || {
        for _ in 0..2 {
            let (mut c, _) = listener.accept().unwrap();
            let mut buf = [0u8; 4096];
            let _ = c.read(&mut buf);
            c.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nhello")
                .unwrap();
            c.flush().unwrap();
            let _ = done_rx.recv_timeout(Duration::from_secs(20));
        }
    });
    let to = format!("http://127.0.0.1:{port}/");
    let mut h = Harness::with_config(move |c| c.url_map = vec![map("https://slow.example/", &to)]);
    h.set_thread(1);
    let loader_of = |h: &Harness, id: i32| -> Arc<Loader> {
        match h.state().resources().get(id) {
            Some(Resource::UrlLoader(l)) => l.0.clone(),
            _ => panic!("not a loader"),
        }
    };
    for release in [false, true] {
        let req = request(&mut h, "https://slow.example/");
        let (loader, r) = open(&mut h, req);
        assert_eq!(r, 0);
        let l = loader_of(&h, loader);
        assert_eq!(l.read(10), Ok(b"hello".to_vec()));
        let waiting = std::thread::spawn(move || l.read(10));
        std::thread::sleep(Duration::from_millis(100));
        if release {
            h.call("PPB_Core;1.0", "ReleaseResource", &[loader]);
        } else {
            h.call(LOADER, "Close", &[loader]);
            let cb = h.blocking_callback(CB);
            assert_eq!(
                h.call(LOADER, "ReadResponseBody", &[loader, BUF as i32, 10, cb]),
                pp_error::ABORTED
            );
        }
        assert_eq!(
            waiting.join().unwrap(),
            Err(pp_error::ABORTED),
            "release {release}"
        );
        done_tx.send(()).unwrap();
    }
    server.join().unwrap();
}

#[test]
fn files_upload_as_request_bodies() {
    let server = TestServer::start(|_| Reply::text("ok"));
    let dir = Scratch::new("pepper-url-upload");
    let (to, storage) = (server.url("/"), dir.dir().to_path_buf());
    let mut h = Harness::with_config(move |c| {
        c.url_map = vec![map("https://site.example/", &to)];
        c.storage = Some(storage);
    });
    h.set_thread(1);
    let fs = h.call("PPB_FileSystem;1.0", "Create", &[INSTANCE, 2]);
    let cb = h.blocking_callback(CB);
    h.call_vals(
        "PPB_FileSystem;1.0",
        "Open",
        &[Val::I32(fs), Val::I64(0), Val::I32(cb)],
    );
    std::fs::write(dir.join("persistent/up.bin"), b"0123456789").unwrap();
    let path = h.cstr(TEXT, b"/up.bin");
    let file = h.call("PPB_FileRef;1.2", "Create", &[fs, path]);
    let req = request(&mut h, "https://site.example/upload");
    set_string(&mut h, req, property::METHOD, "PUT");
    h.write(TEXT, b"<");
    h.call(REQ, "AppendDataToBody", &[req, TEXT as i32, 1]);
    let append = |h: &mut Harness, start: i64, len: i64| {
        h.call_vals(
            REQ,
            "AppendFileToBody",
            &[
                Val::I32(req),
                Val::I32(file),
                Val::I64(start),
                Val::I64(len),
                Val::F64(0),
            ],
        )
    };
    assert_eq!(append(&mut h, 2, 3), 1);
    assert_eq!(append(&mut h, 8, -1), 1);
    assert_eq!(append(&mut h, 0, 0), 1, "nothing, ignored");
    assert_eq!(append(&mut h, -1, 3), 0);
    assert_eq!(append(&mut h, 0, -2), 0);
    assert_eq!(open(&mut h, req).1, 0);
    let got = server.requests();
    assert_eq!(got[0].method, "PUT");
    assert_eq!(got[0].body, b"<23489");
}
