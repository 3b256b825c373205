//! `POST /v1/site`: a package (.crx, .zip) in, a zip of its site out, as `pexe2wasm web`
//! writes it; bad packages are 400 problems that name the entry.

use std::io::{Read, Write};

use crate::common::Server;
use pexe2wasm_testkit::corpus;
use reqwest::blocking::Client;
use serde_json::Value;

fn zip_of(files: &[(String, Vec<u8>)], link: Option<&str>) -> Vec<u8> {
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default();
    for (name, bytes) in files {
        w.start_file(name.as_str(), o).unwrap();
        w.write_all(bytes).unwrap();
    }
    if let Some(l) = link {
        w.add_symlink(l, "/etc", o).unwrap();
    }
    w.finish().unwrap().into_inner()
}

fn read_zip(bytes: &[u8]) -> std::collections::BTreeMap<String, Vec<u8>> {
    let mut z = zip::ZipArchive::new(std::io::Cursor::new(bytes)).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for i in 0..z.len() {
        let mut f = z.by_index(i).unwrap();
        let mut b = Vec::new();
        f.read_to_end(&mut b).unwrap();
        out.insert(f.name().unwrap().to_string(), b);
    }
    out
}

#[test]
fn a_package_becomes_a_zip_of_its_site() {
    let Some(seek) = corpus::real_site("nacl-seek-bug-demo-app") else {
        return;
    };
    let mut files = Vec::new();
    let mut stack = vec![seek.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e
                    .path()
                    .strip_prefix(&seek)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                files.push((rel, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    let package = zip_of(&files, None);
    let mut crx = b"Cr24".to_vec();
    crx.extend(2u32.to_le_bytes());
    crx.extend([0u8; 8]);
    crx.extend(&package);
    let s = Server::start(&[]);
    let c = Client::new();
    for (body, ct) in [
        (package, "application/zip"),
        (crx, "application/x-chrome-extension"),
    ] {
        let r = c
            .post(s.url("/v1/site"))
            .header("content-type", ct)
            .body(body)
            .send()
            .unwrap();
        assert_eq!(r.status(), 200, "{ct}");
        assert_eq!(r.headers()["content-type"], "application/zip");
        assert_eq!(r.headers()["x-site-runs"], "true");
        assert_eq!(r.headers()["x-site-start"], "pexe2wasm-launch.html");
        let url = r.headers()["x-site-url"].to_str().unwrap().to_owned();
        let site = read_zip(&r.bytes().unwrap());
        // Every package file is there; pages gained the host's scripts.
        for (name, bytes) in &files {
            let got = &site[name];
            if name.ends_with(".html") {
                assert!(
                    String::from_utf8_lossy(got).contains("pexe2wasm/chrome/apis.js"),
                    "{name}"
                );
            } else {
                assert_eq!(got, bytes, "{name}");
            }
        }
        let wasm = &site["pnacl/Release/using_ppapi_simple.wasm"];
        wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
            .validate_all(wasm)
            .unwrap();
        assert!(
            site.contains_key("pexe2wasm/embed.js") && site.contains_key("pexe2wasm-launch.html")
        );
        let report: Value = serde_json::from_slice(&site["pexe2wasm-site.json"]).unwrap();
        assert_eq!(report["title"], "Using the ppapi_simple library");
        // The service keeps the site for a while, to run it: the start page and the
        // module, cross-origin isolated.
        assert!(
            url.starts_with("/sites/") && url.ends_with("/pexe2wasm-launch.html"),
            "{url}"
        );
        let page = c.get(s.url(&url)).send().unwrap();
        assert_eq!(page.status(), 200);
        assert_eq!(page.headers()["content-type"], "text/html; charset=utf-8");
        assert_eq!(
            page.headers()["cross-origin-embedder-policy"],
            "require-corp"
        );
        let base = url.trim_end_matches("pexe2wasm-launch.html");
        let m = c
            .get(s.url(&format!("{base}pnacl/Release/using_ppapi_simple.wasm")))
            .send()
            .unwrap();
        assert_eq!(m.headers()["content-type"], "application/wasm");
        assert_eq!(&m.bytes().unwrap()[..], &wasm[..]);
        let missing = c.get(s.url(&format!("{base}no/such/file"))).send().unwrap();
        assert_eq!(missing.status(), 404);
    }
    let r = c.get(s.url("/sites/0000/index.html")).send().unwrap();
    assert_eq!(r.status(), 404);
}

#[test]
fn bad_packages_are_400_problems_naming_the_entry() {
    let s = Server::start(&[]);
    let c = Client::new();
    let post = |body: Vec<u8>, ct: &str| {
        c.post(s.url("/v1/site"))
            .header("content-type", ct)
            .body(body)
            .send()
            .unwrap()
    };
    let evil = zip_of(&[("index.html".into(), b"<p>".to_vec())], Some("lib"));
    for (body, want) in [
        (evil, "entry \"lib\" is a link"),
        (
            b"Cr24\x03\x00\x00\x00\xff\xff\xff\x00".to_vec(),
            "past the end of the file",
        ),
        (b"not a zip".to_vec(), "not a zip archive"),
    ] {
        let r = post(body, "application/zip");
        assert_eq!(r.status(), 400);
        let p: Value = r.json().unwrap();
        assert_eq!(p["type"], "urn:pexe2wasm:problem:bad-package");
        assert!(p["detail"].as_str().unwrap().contains(want), "{p}");
    }
    assert_eq!(post(b"x".to_vec(), "text/html").status(), 415);
}

/// A Chrome app whose manifest names an x86-64 nexe and no pexe (the ckauth dump of the
/// nexe corpus, its nexe where its manifest says): the site has the nexe's browser module
/// beside it, valid and importing a shared memory, and the service serves it.
#[test]
fn a_package_of_an_x86_64_pepper_nexe_gets_its_module() {
    let (Some(nexe), Some(_)) = (
        corpus::real_nexe("ckauth-x86_64.nexe"),
        corpus::real_nexe("ckauth-x86_64/manifest.json"),
    ) else {
        return;
    };
    let dir = corpus::nexe_corpus_dir().join("ckauth-x86_64");
    let mut files = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                let rel = e
                    .path()
                    .strip_prefix(&dir)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_owned();
                files.push((rel, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    files.push(("newlib/Release/ckauth_x86_64.nexe".into(), nexe));
    let s = Server::start(&[]);
    let c = Client::new();
    let r = c
        .post(s.url("/v1/site"))
        .header("content-type", "application/zip")
        .body(zip_of(&files, None))
        .send()
        .unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(
        r.headers()["x-site-runs"],
        "true",
        "{:?}",
        r.headers()["x-site-summary"]
    );
    let url = r.headers()["x-site-url"].to_str().unwrap().to_owned();
    let site = read_zip(&r.bytes().unwrap());
    let wasm = &site["newlib/Release/ckauth_x86_64.wasm"];
    wasmparser::Validator::new().validate_all(wasm).unwrap();
    let shared = wasmparser::Parser::new(0).parse_all(wasm).any(|p| {
        matches!(p, Ok(wasmparser::Payload::ImportSection(r)) if r.clone().into_imports().any(|i| {
            matches!(i, Ok(i) if i.name == "memory" && matches!(i.ty, wasmparser::TypeRef::Memory(t) if t.shared))
        }))
    });
    assert!(shared, "the module imports a shared memory");
    let base = &url[..url.rfind('/').unwrap() + 1];
    let m = c
        .get(s.url(&format!("{base}newlib/Release/ckauth_x86_64.wasm")))
        .send()
        .unwrap();
    assert_eq!(m.headers()["content-type"], "application/wasm");
    assert_eq!(&m.bytes().unwrap()[..], &wasm[..]);
}
