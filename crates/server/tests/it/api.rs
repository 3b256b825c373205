//! Every endpoint of the real server binary on a loopback port: successes, the
//! problem+json errors (with the decoder's position), the cache, metrics and OpenAPI.

use crate::common::{fixture, real_pexe, sha256_hex, validate_wasm, wasm_imports, Server};
use reqwest::blocking::Client;
use serde_json::Value;

fn client() -> Client {
    Client::builder().build().unwrap()
}

fn post_raw(c: &Client, url: &str, body: Vec<u8>) -> reqwest::blocking::Response {
    c.post(url)
        .header("content-type", "application/octet-stream")
        .body(body)
        .send()
        .unwrap()
}

fn header<'a>(r: &'a reqwest::blocking::Response, name: &str) -> &'a str {
    r.headers()
        .get(name)
        .unwrap_or_else(|| panic!("header {name} missing"))
        .to_str()
        .unwrap()
}

/// Asserts a problem+json answer with `status`; returns its JSON.
fn problem(r: reqwest::blocking::Response, status: u16) -> Value {
    assert_eq!(r.status().as_u16(), status, "status");
    assert_eq!(header(&r, "content-type"), "application/problem+json");
    let p: Value = r.json().unwrap();
    assert_eq!(p["status"], status);
    assert!(p["type"]
        .as_str()
        .unwrap()
        .starts_with("urn:pexe2wasm:problem:"));
    assert!(!p["title"].as_str().unwrap().is_empty());
    assert!(!p["detail"].as_str().unwrap().is_empty());
    p
}

#[test]
fn convert_raw_multipart_and_wat_and_the_cache() {
    let s = Server::start(&[]);
    let c = client();
    let pexe = fixture("hello.pexe");
    let r = post_raw(&c, &s.url("/v1/convert"), pexe.clone());
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "content-type"), "application/wasm");
    assert_eq!(header(&r, "x-pexe-sha256"), sha256_hex(&pexe));
    assert_eq!(header(&r, "x-cache"), "miss");
    let ms: f64 = header(&r, "x-conversion-time-ms").parse().unwrap();
    assert!(ms > 0.0);
    assert!(header(&r, "server-timing").starts_with("convert;dur="));
    let features = header(&r, "x-wasm-features").to_string();
    assert!(
        features.split(", ").any(|f| f == "mutable-globals"),
        "{features}"
    );
    let imports_header = header(&r, "x-wasm-imports").to_string();
    let modules_header = header(&r, "x-wasm-import-modules").to_string();
    let wasm = r.bytes().unwrap().to_vec();
    validate_wasm(&wasm);
    // The import headers tell exactly what the module imports.
    let imports = wasm_imports(&wasm);
    assert!(!imports.is_empty());
    let listed: Vec<String> = imports.iter().map(|(m, n)| format!("{m}/{n}")).collect();
    assert_eq!(imports_header, listed.join(", "));
    let mut modules: Vec<&str> = imports.iter().map(|(m, _)| m.as_str()).collect();
    modules.sort_unstable();
    modules.dedup();
    assert_eq!(modules_header, modules.join(", "));
    // The library's own answer is what the service serves.
    let direct = pexe2wasm::convert::convert(&pexe, &Default::default()).unwrap();
    assert_eq!(wasm, direct.wasm);
    assert_eq!(features, direct.features.names().join(", "));

    // The same input again: served from the cache, same bytes.
    let r = post_raw(&c, &s.url("/v1/convert"), pexe.clone());
    assert_eq!(header(&r, "x-cache"), "hit");
    assert_eq!(r.bytes().unwrap().to_vec(), wasm);

    // Multipart with a file field gives the same module (and hits the same cache entry).
    let form = reqwest::blocking::multipart::Form::new().part(
        "file",
        reqwest::blocking::multipart::Part::bytes(pexe.clone()).file_name("hello.pexe"),
    );
    let r = c.post(s.url("/v1/convert")).multipart(form).send().unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-cache"), "hit");
    assert_eq!(r.bytes().unwrap().to_vec(), wasm);

    // format=wat: the text of the same module; a separate cache entry.
    let r = post_raw(&c, &s.url("/v1/convert?format=wat"), pexe.clone());
    assert_eq!(r.status(), 200);
    assert!(header(&r, "content-type").starts_with("text/plain"));
    assert_eq!(header(&r, "x-cache"), "miss");
    let text = r.text().unwrap();
    assert!(
        text.starts_with("(module"),
        "{}",
        &text[..40.min(text.len())]
    );
    assert_eq!(
        wat::parse_str(&text).unwrap(),
        wasm,
        "the text assembles back to the module"
    );

    // threads=true: shared memory and the threads feature.
    let r = post_raw(&c, &s.url("/v1/convert?threads=true"), pexe.clone());
    assert_eq!(r.status(), 200);
    assert!(header(&r, "x-wasm-features").contains("threads"));
    validate_wasm(&r.bytes().unwrap());
    // threads=auto (the default) and off: this pexe never queries thread-0.1, so no threads.
    for q in ["?threads=auto", "?threads=off", ""] {
        let r = post_raw(&c, &s.url(&format!("/v1/convert{q}")), pexe.clone());
        assert_eq!(r.status(), 200, "{q}");
        assert!(!header(&r, "x-wasm-features").contains("threads"), "{q}");
    }
    let r = post_raw(&c, &s.url("/v1/convert?threads=sometimes"), pexe.clone());
    assert_eq!(r.status(), 400);
    // small_code=true: locals by liveness, a smaller module (its own cache entry).
    let plain = post_raw(&c, &s.url("/v1/convert"), pexe.clone());
    let plain = plain.bytes().unwrap();
    let r = post_raw(&c, &s.url("/v1/convert?small_code=true"), pexe.clone());
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-cache"), "miss");
    let small = r.bytes().unwrap();
    validate_wasm(&small);
    assert!(
        small.len() < plain.len(),
        "{} vs {}",
        small.len(),
        plain.len()
    );
    let r = post_raw(&c, &s.url("/v1/convert?small_code=maybe"), pexe.clone());
    assert_eq!(r.status(), 400);
    // The query is percent-decoded: `w%61t` is `wat` (and a hit on the wat entry).
    let r = post_raw(
        &c,
        &s.url("/v1/convert?format=w%61t&threads=auto"),
        pexe.clone(),
    );
    assert_eq!(r.status(), 200);
    assert!(header(&r, "content-type").starts_with("text/plain"));
    assert_eq!(header(&r, "x-cache"), "hit");
    // Unknown parameters are refused, not ignored.
    let p = problem(
        post_raw(&c, &s.url("/v1/convert?optimize=3"), pexe.clone()),
        400,
    );
    assert!(p["detail"].as_str().unwrap().contains("optimize"), "{p}");
}

#[test]
fn inspect_reports_what_pexe2wasm_info_json_prints() {
    let s = Server::start(&[]);
    let c = client();
    for name in ["hello.pexe", "factorial.pexe", "semantics/memory.pexe"] {
        let pexe = fixture(name);
        let r = post_raw(&c, &s.url("/v1/inspect"), pexe.clone());
        assert_eq!(r.status(), 200, "{name}");
        assert_eq!(header(&r, "content-type"), "application/json");
        assert_eq!(header(&r, "x-pexe-sha256"), sha256_hex(&pexe));
        let got: Value = r.json().unwrap();
        let want = serde_json::to_value(pexe2wasm::info::info(&pexe).unwrap()).unwrap();
        assert_eq!(got, want, "{name}");
        assert_eq!(got["file_size"], pexe.len());
    }
}

#[test]
fn bad_pexes_are_400_problems_with_the_decoder_position() {
    let s = Server::start(&[]);
    let c = client();
    // Not a pexe at all: the header check fails at bit 0.
    for path in ["/v1/convert", "/v1/inspect"] {
        let p = problem(
            post_raw(&c, &s.url(path), b"not a pexe at all".to_vec()),
            400,
        );
        assert_eq!(p["type"], "urn:pexe2wasm:problem:bad-pexe");
        assert_eq!(p["class"], "input", "{p}");
        assert!(p["position"]["bit"].is_u64(), "{p}");
    }
    // A corrupted pexe: the first flipped byte (past the header) that makes the decoder
    // stop inside a block, on a record; the server reports the library's exact position.
    let pexe = fixture("hello.pexe");
    let (bad, want) = (pexe.len() / 4..pexe.len())
        .find_map(|i| {
            let mut bad = pexe.clone();
            bad[i] ^= 0xff;
            let pos = pexe2wasm::convert::convert(&bad, &Default::default())
                .err()?
                .position()?;
            (pos.block.is_some() && pos.record.is_some()).then_some((bad, pos))
        })
        .expect("some corruption stops the decoder on a record");
    let p = problem(post_raw(&c, &s.url("/v1/convert"), bad), 400);
    // The one JSON form of a position: the library's own serialization.
    assert_eq!(p["position"], serde_json::to_value(want).unwrap());
    assert_eq!(p["position"]["bit"], want.bit);
    assert_eq!(p["position"]["byte"], want.bit / 8);
    assert_eq!(p["position"]["block"], want.block.unwrap());
    assert_eq!(p["position"]["record"], want.record.unwrap());
    assert!(p["position"]["block_name"].is_string(), "{p}");
    // A valid pexe that cannot run (no _start): 400 too.
    let p = problem(
        post_raw(&c, &s.url("/v1/convert"), fixture("factorial.pexe")),
        400,
    );
    assert!(p["detail"].as_str().unwrap().contains("_start"), "{p}");
    assert_eq!(p["class"], "input", "{p}");
    // The real corpus's malformed pexes: 400 with a position, never a crash.
    for n in 1..=6 {
        let Some(bad) = real_pexe(&format!("binji-regress-{n}-malformed.pexe")) else {
            break;
        };
        let r = post_raw(&c, &s.url("/v1/convert"), bad);
        let status = r.status().as_u16();
        assert!(status == 400 || status == 422, "regress-{n}: {status}");
        let p = problem(r, status);
        let class = if status == 400 {
            "input"
        } else {
            "unsupported"
        };
        assert_eq!(p["class"], class, "regress-{n}: {p}");
        if status == 400 {
            assert!(p["position"]["bit"].is_u64(), "regress-{n}: {p}");
        }
    }
    // Empty body.
    problem(post_raw(&c, &s.url("/v1/convert"), vec![]), 400);
    // The server is still up.
    assert_eq!(c.get(s.url("/healthz")).send().unwrap().status(), 200);
}

/// hello with one more global of 5 GB of zeros (testkit): a valid pexe the converter does
/// not support.
fn huge_global_pexe() -> Vec<u8> {
    pexe2wasm::text::asm::assemble(&pexe2wasm_testkit::huge_global_hello()).unwrap()
}

/// A static x86-64 nexe the translator runs converts as `pexe2wasm convert` converts it
/// (docs/NEXE.md): fftw-wisdom (a command-line nexe) answers the library's module, valid,
/// a WASI command with file access; `inspect` and nexes that do not translate (a 2011
/// Pepper nexe) are 422 `unsupported`, the detail naming what it is.
#[test]
fn static_nexes_convert_and_others_are_422_problems_that_say_what_they_are() {
    use pexe2wasm_testkit::corpus::real_nexe;
    let (Some(fftw), Some(sine)) = (
        real_nexe("fftw-wisdom-x86_64.nexe"),
        real_nexe("naclports-gallery-sine_synth-x86_64.nexe"),
    ) else {
        return;
    };
    let s = Server::start(&[]);
    let c = client();
    let r = post_raw(&c, &s.url("/v1/convert"), fftw.clone());
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "content-type"), "application/wasm");
    assert_eq!(header(&r, "x-pexe-needs"), "wasi");
    assert!(header(&r, "x-wasm-imports").contains("wasi_snapshot_preview1/path_open"));
    let wasm = r.bytes().unwrap().to_vec();
    validate_wasm(&wasm);
    let want =
        pexe2wasm_nexe::x86_64::lift::translate_program(&pexe2wasm_nexe::inspect(&fftw).unwrap())
            .unwrap()
            .wasm;
    assert!(wasm == want, "the module `pexe2wasm convert` makes");
    let p = problem(post_raw(&c, &s.url("/v1/inspect"), fftw.clone()), 422);
    assert_eq!(p["class"], "unsupported");
    assert_eq!(
        p["detail"],
        "a native NaCl executable for x86-64 (static, newlib, command-line): not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert"
    );
    let want = "a native NaCl executable for x86-64 (static, newlib, Pepper, pre-1.0): not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert";
    for route in ["/v1/convert", "/v1/inspect"] {
        let p = problem(post_raw(&c, &s.url(route), sine.clone()), 422);
        assert_eq!(p["type"], "urn:pexe2wasm:problem:unsupported", "{route}");
        assert_eq!(p["class"], "unsupported", "{route}");
        assert_eq!(p["detail"], want, "{route}");
        assert!(p.get("position").is_none(), "{route}: {p}");
    }
}

/// Status, problem type and `class` follow from the library's `ErrorClass` of the
/// conversion error: an unsupported construct is 422 `unsupported`.
#[test]
fn unsupported_pexes_are_422_problems_with_their_class() {
    let s = Server::start(&[]);
    let c = client();
    let pexe = huge_global_pexe();
    let e = pexe2wasm::convert::convert(&pexe, &Default::default()).unwrap_err();
    assert_eq!(e.class(), pexe2wasm::ErrorClass::Unsupported, "{e}");
    let p = problem(post_raw(&c, &s.url("/v1/convert"), pexe.clone()), 422);
    assert_eq!(p["type"], "urn:pexe2wasm:problem:unsupported");
    assert_eq!(p["class"], "unsupported");
    assert_eq!(p["detail"], e.to_string());
    assert!(p.get("position").is_none(), "{p}");
    // Inspecting it works: it decodes fine.
    let r = post_raw(&c, &s.url("/v1/inspect"), pexe);
    assert_eq!(r.status(), 200);
    // Problems that are not conversion errors carry no class.
    let p = problem(post_raw(&c, &s.url("/v1/convert"), vec![]), 400);
    assert!(p.get("class").is_none(), "{p}");
}

#[test]
fn wrong_content_type_bad_query_unknown_path_and_method() {
    let s = Server::start(&[]);
    let c = client();
    let pexe = fixture("hello.pexe");
    let r = c
        .post(s.url("/v1/convert"))
        .header("content-type", "text/plain")
        .body(pexe.clone())
        .send()
        .unwrap();
    problem(r, 415);
    let r = c
        .post(s.url("/v1/inspect"))
        .body(pexe.clone())
        .send()
        .unwrap();
    problem(r, 415);
    let p = problem(
        post_raw(&c, &s.url("/v1/convert?format=elf"), pexe.clone()),
        400,
    );
    assert!(p["detail"].as_str().unwrap().contains("format=elf"));
    problem(c.get(s.url("/v2/nothing")).send().unwrap(), 404);
    problem(c.get(s.url("/v1/convert")).send().unwrap(), 405);
}

#[test]
fn oversize_bodies_are_413() {
    let s = Server::start(&["--max-body-bytes", "4096"]);
    let c = client();
    // Declared too large by Content-Length: refused before the body is read. (Only the
    // head is sent, as a client waiting for `100 Continue` would; a client that streams
    // the body anyway may see the connection reset. uploads.rs streams one.)
    let mut t = std::net::TcpStream::connect(s.addr).unwrap();
    use std::io::{Read, Write};
    write!(
        t,
        "POST /v1/convert HTTP/1.1\r\nHost: x\r\nContent-Type: application/octet-stream\r\nContent-Length: 20000\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = String::new();
    t.read_to_string(&mut raw).unwrap();
    assert!(raw.starts_with("HTTP/1.1 413"), "{raw}");
    assert!(raw.contains("application/problem+json"), "{raw}");
    assert!(raw.contains("4096 bytes (4.0 KiB)"), "{raw}");
    // Under the limit still works (hello.pexe is smaller than 4 KiB).
    let pexe = fixture("hello.pexe");
    assert!(pexe.len() < 4096);
    assert_eq!(post_raw(&c, &s.url("/v1/convert"), pexe).status(), 200);
}

#[test]
fn busy_pool_answers_503_and_health_checks_stay_fast() {
    // One worker, no queue, no cache: concurrent conversions beyond one are refused.
    let s = Server::start(&[
        "--pool-size",
        "1",
        "--queue-depth",
        "0",
        "--cache-bytes",
        "0",
    ]);
    let pexe = real_pexe("binji-nbody.pexe").unwrap_or_else(|| fixture("hello.pexe"));
    let url = s.url("/v1/convert");
    let mut saw_503 = false;
    for _round in 0..20 {
        let handles: Vec<_> = (0..16)
            .map(|_| {
                let (url, pexe) = (url.clone(), pexe.clone());
                std::thread::spawn(move || {
                    let r = post_raw(&client(), &url, pexe);
                    let status = r.status().as_u16();
                    let retry = r
                        .headers()
                        .get("retry-after")
                        .map(|v| v.to_str().unwrap().to_string());
                    let ct = r.headers()["content-type"].to_str().unwrap().to_string();
                    (status, retry, ct)
                })
            })
            .collect();
        // Health checks answer while conversions run.
        let t = std::time::Instant::now();
        assert_eq!(
            client().get(s.url("/healthz")).send().unwrap().status(),
            200
        );
        assert!(t.elapsed() < std::time::Duration::from_secs(2));
        for h in handles {
            let (status, retry, ct) = h.join().unwrap();
            match status {
                200 => assert_eq!(ct, "application/wasm"),
                503 => {
                    saw_503 = true;
                    assert_eq!(ct, "application/problem+json");
                    assert_eq!(retry.as_deref(), Some("1"));
                }
                other => panic!("unexpected status {other}"),
            }
        }
        if saw_503 {
            break;
        }
    }
    assert!(
        saw_503,
        "16 concurrent conversions on one worker with no queue never got 503"
    );
    let m = client()
        .get(s.url("/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    assert!(m.contains("route=\"/v1/convert\",status=\"503\""), "{m}");
}

#[test]
fn slow_conversions_are_504_and_the_server_recovers() {
    // A 1 ms limit: every real conversion takes longer (linking the runtime alone does).
    let s = Server::start(&[
        "--convert-timeout-ms",
        "1",
        "--cache-bytes",
        "0",
        "--pool-size",
        "2",
    ]);
    let c = client();
    let pexe = real_pexe("binji-nbody.pexe").unwrap_or_else(|| fixture("hello.pexe"));
    let p = problem(post_raw(&c, &s.url("/v1/convert"), pexe.clone()), 504);
    assert_eq!(p["type"], "urn:pexe2wasm:problem:timeout");
    assert_eq!(c.get(s.url("/healthz")).send().unwrap().status(), 200);
    // The abandoned work finishes in the background and frees its worker.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let h: Value = c.get(s.url("/healthz")).send().unwrap().json().unwrap();
        if h["conversions_in_flight"] == 0 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the abandoned conversion never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let m = c.get(s.url("/metrics")).send().unwrap().text().unwrap();
    assert!(m.contains("pexe2wasm_conversion_timeouts_total 1"), "{m}");
}

#[test]
fn metrics_count_requests_bytes_and_cache() {
    let s = Server::start(&[]);
    let c = client();
    let pexe = fixture("semantics/bits.pexe");
    let mut out_bytes = 0;
    for _ in 0..3 {
        let r = post_raw(&c, &s.url("/v1/convert"), pexe.clone());
        assert_eq!(r.status(), 200);
        out_bytes += r.bytes().unwrap().len();
    }
    problem(post_raw(&c, &s.url("/v1/convert"), b"junk".to_vec()), 400);
    assert_eq!(c.get(s.url("/healthz")).send().unwrap().status(), 200);
    let r = c.get(s.url("/metrics")).send().unwrap();
    assert_eq!(r.status(), 200);
    assert!(header(&r, "content-type").starts_with("text/plain; version=0.0.4"));
    let m = r.text().unwrap();
    let value = |line_start: &str| -> f64 {
        m.lines()
            .find(|l| l.starts_with(line_start))
            .unwrap_or_else(|| panic!("no {line_start} in\n{m}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert_eq!(
        value("pexe2wasm_http_requests_total{route=\"/v1/convert\",status=\"200\"}"),
        3.0
    );
    assert_eq!(
        value("pexe2wasm_http_requests_total{route=\"/v1/convert\",status=\"400\"}"),
        1.0
    );
    assert_eq!(
        value("pexe2wasm_http_requests_total{route=\"/healthz\",status=\"200\"}"),
        1.0
    );
    assert_eq!(value("pexe2wasm_cache_hits_total"), 2.0);
    assert_eq!(value("pexe2wasm_cache_misses_total"), 2.0);
    assert_eq!(
        value("pexe2wasm_request_bytes_total"),
        (3 * pexe.len() + 4) as f64
    );
    assert!(value("pexe2wasm_response_bytes_total") >= out_bytes as f64);
    assert_eq!(
        value("pexe2wasm_http_request_duration_seconds_count{route=\"/v1/convert\"}"),
        4.0
    );
    assert_eq!(
        value("pexe2wasm_http_request_duration_seconds_bucket{route=\"/v1/convert\",le=\"+Inf\"}"),
        4.0
    );
    assert_eq!(value("pexe2wasm_conversions_in_flight"), 0.0);
    assert!(value("pexe2wasm_cache_bytes") > 0.0);
}

#[test]
fn openapi_describes_every_route_and_status() {
    let s = Server::start(&[]);
    let c = client();
    let r = c.get(s.url("/openapi.json")).send().unwrap();
    assert_eq!(r.status(), 200);
    let doc: Value = r.json().unwrap();
    // It parses as an OpenAPI 3 document.
    let api: openapiv3::OpenAPI = serde_json::from_value(doc.clone()).expect("valid OpenAPI 3");
    assert!(api.openapi.starts_with("3."));
    // Every served route is described, with the statuses the other tests observe.
    let expect: &[(&str, &str, &[&str])] = &[
        ("/", "get", &["200"]),
        ("/healthz", "get", &["200"]),
        ("/metrics", "get", &["200"]),
        ("/openapi.json", "get", &["200"]),
        ("/pexe2wasm/{path}", "get", &["200", "404"]),
        (
            "/v1/convert",
            "post",
            &[
                "200", "400", "408", "413", "415", "422", "500", "503", "504",
            ],
        ),
        (
            "/v1/inspect",
            "post",
            &["200", "400", "408", "413", "415", "503", "504"],
        ),
        (
            "/v1/site",
            "post",
            &["200", "400", "408", "413", "415", "500", "503", "504"],
        ),
        ("/sites/{sha}/{path}", "get", &["200", "404"]),
    ];
    for (path, method, statuses) in expect {
        let op = &doc["paths"][path][method];
        assert!(op.is_object(), "{method} {path} undocumented");
        for st in *statuses {
            assert!(
                op["responses"][st].is_object(),
                "{method} {path} {st} undocumented"
            );
        }
        // And the server really serves it (GETs here; POSTs are the other tests).
        // (A site's files exist only after an upload: tests/it/sites.rs.)
        if *method == "get" && !path.starts_with("/sites/") {
            let url = s.url(&path.replace("{path}", "embed.js"));
            assert_eq!(c.get(url).send().unwrap().status(), 200, "{path}");
        }
    }
    assert_eq!(
        api.paths.paths.len(),
        expect.len(),
        "no undocumented extra paths"
    );
    // A problem's class and position are described as the server and the library write
    // them: every class, and every member of a position (present, null when unknown).
    let schemas = &doc["components"]["schemas"];
    let classes: Vec<Value> = [
        pexe2wasm::ErrorClass::Input,
        pexe2wasm::ErrorClass::Unsupported,
        pexe2wasm::ErrorClass::Internal,
    ]
    .iter()
    .map(|c| serde_json::to_value(c).unwrap())
    .collect();
    // utoipa writes a reference (maybe inside a oneOf with null): follow it.
    fn resolve<'a>(schemas: &'a Value, v: &'a Value) -> &'a Value {
        if let Some(r) = v["$ref"].as_str() {
            return resolve(
                schemas,
                &schemas[r.trim_start_matches("#/components/schemas/")],
            );
        }
        if let Some(items) = v["oneOf"].as_array() {
            if let Some(t) = items.iter().find(|i| i["type"] != "null") {
                return resolve(schemas, t);
            }
        }
        v
    }
    /// OpenAPI 3.0's `nullable` or 3.1's `oneOf [T, {type: null}]`.
    fn is_nullable(v: &Value) -> bool {
        v["nullable"] == true
            || v["oneOf"]
                .as_array()
                .is_some_and(|a| a.iter().any(|i| i["type"] == "null"))
    }
    assert_eq!(
        resolve(schemas, &schemas["Problem"]["properties"]["class"])["enum"],
        Value::from(classes)
    );
    let position = serde_json::to_value(pexe2wasm::bitstream::Position::at_bit(3)).unwrap();
    let mut members: Vec<&str> = position
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    let mut required: Vec<&str> = schemas["Position"]["required"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    members.sort_unstable();
    required.sort_unstable();
    assert_eq!(members, required);
    for (k, v) in position.as_object().unwrap() {
        let nullable = is_nullable(&schemas["Position"]["properties"][k]);
        assert_eq!(v.is_null(), nullable, "{k}");
    }
    // Every $ref resolves.
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    out.push(r.clone());
                }
                m.values().for_each(|v| refs(v, out));
            }
            Value::Array(a) => a.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    // The schemas that mirror the library's JSON name exactly the fields it serializes.
    fn keys(v: &Value) -> std::collections::BTreeSet<String> {
        v.as_object()
            .unwrap_or_else(|| panic!("not an object: {v}"))
            .keys()
            .cloned()
            .collect()
    }
    let props = |name: &str| keys(&doc["components"]["schemas"][name]["properties"]);
    let r = post_raw(&c, &s.url("/v1/inspect"), fixture("semantics/memory.pexe"));
    assert_eq!(r.status(), 200);
    let info: Value = r.json().unwrap();
    assert_eq!(keys(&info), props("Info"));
    assert_eq!(keys(&info["symbols"]), props("SymbolInfo"));
    assert_eq!(keys(&info["functions"][0]), props("FunctionInfo"));
    assert_eq!(keys(&info["intrinsics"][0]), props("IntrinsicInfo"));
    // A problem with a position names only documented members.
    let p = problem(
        post_raw(&c, &s.url("/v1/convert"), b"not a pexe".to_vec()),
        400,
    );
    assert!(keys(&p).is_subset(&props("Problem")), "{p}");
    assert!(keys(&p["position"]).is_subset(&props("Position")), "{p}");
    let health: Value = c.get(s.url("/healthz")).send().unwrap().json().unwrap();
    assert_eq!(keys(&health), props("Health"));
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(!all.is_empty());
    for r in all {
        let name = r.strip_prefix("#/components/schemas/").unwrap();
        assert!(
            doc["components"]["schemas"][name].is_object(),
            "dangling {r}"
        );
    }
}

/// The convert headers and the inspect JSON say what the pexe needs to run: a plain
/// program any WASI runtime, a threaded module `pexe2wasm run`, a message plugin the
/// command-line Pepper host, a GL plugin a browser.
#[test]
fn convert_and_inspect_say_what_the_pexe_needs() {
    let s = Server::start(&[]);
    let c = client();
    let hello = fixture("hello.pexe");
    let r = post_raw(&c, &s.url("/v1/convert"), hello.clone());
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-pexe-needs"), "wasi");
    assert!(header(&r, "x-pexe-needs-detail").starts_with("runs on any WASI runtime"));
    // Converted for threads, the same pexe needs pexe2wasm run; a cache hit says so too.
    for cache in ["miss", "hit"] {
        let r = post_raw(&c, &s.url("/v1/convert?threads=on"), hello.clone());
        assert_eq!(header(&r, "x-cache"), cache);
        assert_eq!(header(&r, "x-pexe-needs"), "runner");
        assert!(header(&r, "x-pexe-needs-detail").contains("pexe2wasm run"));
    }
    let r = post_raw(&c, &s.url("/v1/inspect"), hello.clone());
    let j: Value = r.json().unwrap();
    assert_eq!(j["needs"]["host"], "wasi");

    let Some(plugin) = real_pexe("lpdevs-part2.pexe") else {
        return;
    };
    let r = post_raw(&c, &s.url("/v1/convert"), plugin.clone());
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-pexe-needs"), "pepper");
    assert!(
        header(&r, "x-pexe-needs-detail").contains("runs under pexe2wasm run"),
        "{}",
        header(&r, "x-pexe-needs-detail")
    );
    validate_wasm(&r.bytes().unwrap());
    let r = post_raw(&c, &s.url("/v1/inspect"), plugin);
    let j: Value = r.json().unwrap();
    assert_eq!(j["needs"]["host"], "pepper");
    assert_eq!(j["needs"]["interface"], "nacl-irt-ppapihook-0.1");
    assert_eq!(j["needs"]["available"], true);

    let Some(gl) = real_pexe("bp2008-pnacl_player.pexe") else {
        return;
    };
    let r = post_raw(&c, &s.url("/v1/convert"), gl.clone());
    assert_eq!(r.status(), 200);
    assert_eq!(header(&r, "x-pexe-needs"), "browser");
    assert!(
        header(&r, "x-pexe-needs-detail").contains("PPB_Graphics3D;1.0"),
        "{}",
        header(&r, "x-pexe-needs-detail")
    );
    let r = post_raw(&c, &s.url("/v1/inspect"), gl);
    let j: Value = r.json().unwrap();
    assert_eq!(j["needs"]["host"], "browser");
    assert_eq!(j["needs"]["available"], false);
    assert!(j["needs"]["lacking"]
        .as_array()
        .unwrap()
        .contains(&Value::from("PPB_Graphics3D;1.0")));
}

#[test]
fn page_is_served() {
    let s = Server::start(&[]);
    let r = client().get(s.url("/")).send().unwrap();
    assert_eq!(r.status(), 200);
    assert!(header(&r, "content-type").starts_with("text/html"));
    let html = r.text().unwrap();
    assert!(
        html.contains("id=\"file\"")
            && html.contains("/v1/convert")
            && html.contains("/v1/inspect")
    );
    // It shows what the pexe needs, and no longer calls every module simply "valid".
    assert!(html.contains("x-pexe-needs") && html.contains("facts.needs.summary"));
    assert!(!html.contains("Valid in this browser"));
}

/// The page and the browser host's files are cross-origin isolated (the Run button's
/// plugins may start threads); the host's files are JavaScript; a file the host lacks is a
/// 404 problem.
#[test]
fn the_page_and_the_browser_host_are_cross_origin_isolated() {
    let s = Server::start(&[]);
    let c = reqwest::blocking::Client::new();
    for path in [
        "/",
        "/pexe2wasm/embed.js",
        "/pexe2wasm/host/command-worker.js",
    ] {
        let r = c.get(s.url(path)).send().unwrap();
        assert_eq!(r.status(), 200, "{path}");
        let h = r.headers();
        assert_eq!(h["cross-origin-opener-policy"], "same-origin", "{path}");
        assert_eq!(h["cross-origin-embedder-policy"], "require-corp", "{path}");
        if path != "/" {
            assert!(
                h["content-type"]
                    .to_str()
                    .unwrap()
                    .starts_with("text/javascript"),
                "{path}"
            );
        }
    }
    let r = c.get(s.url("/pexe2wasm/host/nothing.js")).send().unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
}
