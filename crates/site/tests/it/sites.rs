//! Sites built from packages and folders, with a stand-in converter (the CLI's tests use
//! the real one on the real sites).

use std::sync::atomic::{AtomicUsize, Ordering};

use pexe2wasm_site::{
    build, check_output, open, open_archive, write, Limits, Module, Options, SiteError,
};

use crate::{crx, scratch, zip_of};

const PEXE: &[u8] = b"PEXE\x01\x02 a stand-in pexe";

/// Converts anything that starts with PEXE into a module that names its input's length.
fn fake(calls: &AtomicUsize) -> impl Fn(&[u8]) -> Result<Module, String> + Sync + '_ {
    move |b: &[u8]| {
        calls.fetch_add(1, Ordering::SeqCst);
        if b.ends_with(b"broken") {
            return Err("bit 40: not a function block".into());
        }
        Ok(Module {
            wasm: format!("module of {} bytes", b.len()).into_bytes(),
            needs: "a browser".into(),
            plugin: true,
        })
    }
}

fn text(site: &pexe2wasm_site::Site, p: &str) -> String {
    let p = pexe2wasm_site::SitePath::new(p).unwrap();
    let c = site.files.get(&p).unwrap_or_else(|| panic!("{p} missing"));
    String::from_utf8_lossy(&c.read().unwrap()).into_owned()
}

fn app_zip() -> Vec<u8> {
    zip_of(&[
        (
            "manifest.json",
            br#"{"manifest_version": 2, "name": "__MSG_appName__", "description": "__MSG_appDesc__",
                "version": "1.2", "default_locale": "de", "icons": {"16": "i16.png", "128": "icons/i128.png"},
                "app": {"background": {"scripts": ["bg.js"]}}, "permissions": ["storage", {"fileSystem": ["write"]}],
                "sockets": {"tcp": {"connect": "*"}}}"#,
        ),
        ("_locales/de/messages.json", br#"{"appName": {"message": "Rechner"}, "appdesc": {"message": "Rechnet"}}"#),
        ("bg.js", b"chrome.app.runtime.onLaunched.addListener(() => chrome.app.window.create('win/window.html'));"),
        ("win/window.html", b"<!doctype html><html><head><title>w</title><script src=../main.js></script></head><body><embed type=application/x-pnacl src=../nacl/app.nmf></body></html>"),
        ("main.js", b"// the app's"),
        ("nacl/app.nmf", br#"{"program": {"portable": {"pnacl-translate": {"url": "app.pexe?v=3"}}}}"#),
        ("nacl/app.pexe", PEXE),
        ("i16.png", b"png"),
        ("icons/i128.png", b"png"),
    ])
}

#[test]
fn a_chrome_app_in_a_crx_becomes_a_site_that_launches_it() {
    for v in [2, 3] {
        let input = open_archive(&crx(v, &app_zip()), "calc.crx", &Limits::default()).unwrap();
        let calls = AtomicUsize::new(0);
        let site = build(&input, &Options::default(), &fake(&calls)).unwrap();
        let r = &site.report;
        assert_eq!(r.title, "Rechner");
        assert_eq!(r.description, "Rechnet");
        assert_eq!(r.icon.as_ref().unwrap().as_str(), "icons/i128.png");
        assert_eq!(r.start.as_str(), "pexe2wasm-launch.html");
        assert!(r.runs, "{}", r.summary);
        assert!(r.summary.contains("chrome.sockets"), "{}", r.summary);
        let k = &r.packages[0];
        assert_eq!(k.background[0].as_str(), "bg.js");
        assert_eq!(k.permissions, ["storage", "fileSystem", "sockets"]);
        // Every input file at its path, pages given the host's scripts, relative to them.
        for f in input.tree.files.keys() {
            assert!(site.files.contains_key(f), "{f}");
        }
        assert_eq!(text(&site, "main.js"), "// the app's");
        let win = text(&site, "win/window.html");
        assert!(
            win.contains(
                "<script src=\"../pexe2wasm/chrome/apis.js\" data-package=\"../\"></script>"
            ),
            "{win}"
        );
        // The drop-in script, then the package's chrome object, before the page's own.
        let drop_in = win
            .find("<script src=\"../pexe2wasm.js\"></script>")
            .unwrap();
        assert!(
            drop_in < win.find("../pexe2wasm/chrome/apis.js").unwrap(),
            "{win}"
        );
        assert!(win.find("../pexe2wasm/chrome/apis.js").unwrap() < win.find("../main.js").unwrap());
        assert!(
            !win.contains("embed.js") && !win.contains("advertise.js"),
            "{win}"
        );
        // Its config (every page's and the launcher's): the module beside the pexe.
        let config = "<script type=\"application/json\" id=\"pexe2wasm-config\">{\"preconverted\":true}</script>";
        assert!(win.contains(config), "{win}");
        // The module beside the pexe, where the host asks for it.
        assert_eq!(
            text(&site, "nacl/app.wasm"),
            format!("module of {} bytes", PEXE.len())
        );
        assert_eq!(r.modules[0].manifests[0].as_str(), "nacl/app.nmf");
        // Launcher, package listing, host, index that goes to the launcher, report.
        let launch = text(&site, "pexe2wasm-launch.html");
        assert!(
            launch.contains("<title>Rechner</title>")
                && launch.contains("\"pexe2wasm/chrome/launcher.js\"")
                && launch.contains(config),
            "{launch}"
        );
        let list: Vec<String> = serde_json::from_str(&text(&site, "pexe2wasm-files.json")).unwrap();
        assert!(list.contains(&"nacl/app.pexe".to_owned()) && list.len() == input.tree.files.len());
        assert!(text(&site, "pexe2wasm/embed.js").contains("<embed>"));
        assert_eq!(
            text(&site, "pexe2wasm.js"),
            pexe2wasm_webhost::drop_in_script()
        );
        // Preconverted: the browser's converter is not part of the site.
        assert!(!site
            .files
            .keys()
            .any(|p| p.as_str().ends_with("converter.wasm")));
        assert!(text(&site, "index.html").contains("url=pexe2wasm-launch.html"));
        let report: serde_json::Value =
            serde_json::from_str(&text(&site, "pexe2wasm-site.json")).unwrap();
        assert_eq!(report["crx"]["version"], v);
        assert_eq!(report["kind"], "crx");
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn a_folder_site_keeps_its_tree_and_names_what_does_not_run() {
    let d = scratch("folder");
    let src = d.join("in");
    for (p, b) in [
        ("nacl/index.html", &b"<html><head><script src=\"../lib/common.js\"></script></head><body data-name=x></body></html>"[..]),
        ("lib/common.js", b"embed.type = 'application/x-pnacl';"),
        ("css/site.css", b"p{}"),
        ("about.html", b"<p>about"),
        ("nacl/pnacl/Release/x.nmf", br#"{"program":{"portable":{"pnacl-translate":{"url":"x.pexe"}}}}"#),
        ("nacl/pnacl/Release/x.pexe", PEXE),
        ("nacl/pnacl/Release/copy.pexe", PEXE),
        ("old/broken.pexe", b"PEXE broken"),
        ("native/n.nmf", br#"{"program":{"x86-64":{"url":"n_x86_64.nexe"}}}"#),
    ] {
        let f = src.join(p);
        std::fs::create_dir_all(f.parent().unwrap()).unwrap();
        std::fs::write(f, b).unwrap();
    }
    #[cfg(unix)]
    std::os::unix::fs::symlink("/etc", src.join("etc-link")).unwrap();
    std::fs::create_dir_all(src.join(".git")).unwrap();
    std::fs::write(src.join(".git/HEAD"), "ref").unwrap();

    let input = open(&src, &Limits::default()).unwrap();
    let calls = AtomicUsize::new(0);
    let site = build(&input, &Options::default(), &fake(&calls)).unwrap();
    let r = &site.report;
    // Two pexes with the same bytes: converted once, both written.
    assert_eq!(calls.load(Ordering::SeqCst), 2);
    assert!(site
        .files
        .contains_key(&pexe2wasm_site::SitePath::new("nacl/pnacl/Release/copy.wasm").unwrap()));
    assert!(!r.runs);
    assert!(
        r.summary
            .contains("old/broken.pexe does not convert: bit 40"),
        "{}",
        r.summary
    );
    assert_eq!(r.native[0].arches, ["x86-64"]);
    assert!(
        r.skipped.iter().any(|s| s.starts_with("etc-link: a link")),
        "{:?}",
        r.skipped
    );
    assert!(
        r.skipped.iter().any(|s| s.starts_with(".git/")),
        "{:?}",
        r.skipped
    );
    // The page that builds its embed in a script is known as a NaCl page.
    let nacl: Vec<&str> = r
        .pages
        .iter()
        .filter(|p| p.nacl)
        .map(|p| p.path.as_str())
        .collect();
    assert_eq!(nacl, ["nacl/index.html"]);
    let index = text(&site, "index.html");
    assert!(
        index.contains("href=\"nacl/index.html\"") && index.contains("only PNaCl pexes convert"),
        "{index}"
    );
    assert!(text(&site, "nacl/index.html").contains("<script src=\"../pexe2wasm.js\">"));

    // Written, and never into or around its input.
    let out = d.join("out");
    check_output(&input, &out).unwrap();
    write(&site, &out).unwrap();
    assert_eq!(std::fs::read(out.join("css/site.css")).unwrap(), b"p{}");
    assert!(out.join("pexe2wasm/host/instance-worker.js").is_file());
    for bad in [src.join("site"), d.clone()] {
        let e = check_output(&input, &bad).unwrap_err();
        assert!(matches!(e, SiteError::OutputOverlapsInput { .. }), "{e}");
    }
    // A link planted in the output is not written through.
    #[cfg(unix)]
    {
        let out2 = d.join("out2");
        std::fs::create_dir_all(&out2).unwrap();
        let elsewhere = d.join("elsewhere");
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::os::unix::fs::symlink(&elsewhere, out2.join("css")).unwrap();
        let e = write(&site, &out2).unwrap_err().to_string();
        assert!(e.contains("a link is in the way"), "{e}");
        assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
    }
}

#[test]
fn inputs_that_take_the_hosts_names_or_are_not_sites_are_refused() {
    let z = zip_of(&[("index.html", b"<p>"), ("pexe2wasm/embed.js", b"mine")]);
    let input = open_archive(&z, "a.zip", &Limits::default()).unwrap();
    let calls = AtomicUsize::new(0);
    let e = build(&input, &Options::default(), &fake(&calls))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("pexe2wasm/embed.js"), "{e}");
    // The drop-in script's name at the root is the host's too.
    let z = zip_of(&[("index.html", b"<p>"), ("pexe2wasm.js", b"mine")]);
    let input = open_archive(&z, "a.zip", &Limits::default()).unwrap();
    let e = build(&input, &Options::default(), &fake(&calls))
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("its own pexe2wasm.js"), "{e}");

    let d = scratch("not-chrome");
    std::fs::write(
        d.join("manifest.json"),
        r#"{"name": "a web app", "start_url": "/"}"#,
    )
    .unwrap();
    let e = open(&d.join("manifest.json"), &Limits::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not a Chrome app or extension manifest"), "{e}");
    std::fs::write(d.join("manifest.json"), r#"{"manifest_version": 2, "#).unwrap();
    let e = open(&d.join("manifest.json"), &Limits::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not JSON"), "{e}");
    let e = open(&d.join("x.txt"), &Limits::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("not something `web` takes"), "{e}");
}

#[test]
fn an_extension_starts_at_its_popup_and_a_legacy_app_at_its_page() {
    let z = zip_of(&[
        ("manifest.json", br#"{"manifest_version": 2, "name": "Ext", "browser_action": {"default_popup": "popup.html"},
            "content_scripts": [{"matches": ["<all_urls>"], "js": ["c.js"]}]}"#),
        ("popup.html", b"<html><head></head></html>"),
        ("c.js", b""),
    ]);
    let input = open_archive(&z, "e.zip", &Limits::default()).unwrap();
    let calls = AtomicUsize::new(0);
    let site = build(&input, &Options::default(), &fake(&calls)).unwrap();
    let k = &site.report.packages[0];
    assert_eq!(k.kind, pexe2wasm_site::PackageKind::Extension);
    assert_eq!(k.start_page.as_ref().unwrap().as_str(), "popup.html");
    assert!(
        site.report.summary.starts_with("no NaCl module"),
        "{}",
        site.report.summary
    );

    let z = zip_of(&[
        ("app/manifest.json", br#"{"manifest_version": 1, "name": "Old", "app": {"launch": {"local_path": "main.html"}}}"#),
        ("app/main.html", b"<html><head></head></html>"),
    ]);
    let input = open_archive(&z, "old.zip", &Limits::default()).unwrap();
    let site = build(&input, &Options::default(), &fake(&calls)).unwrap();
    let k = &site.report.packages[0];
    assert_eq!(k.kind, pexe2wasm_site::PackageKind::LegacyPackagedApp);
    assert_eq!(k.start_page.as_ref().unwrap().as_str(), "app/main.html");
    assert_eq!(site.report.start.as_str(), "app/pexe2wasm-launch.html");
    assert!(text(&site, "app/pexe2wasm-launch.html")
        .contains("src=\"../pexe2wasm/chrome/launcher.js\""));
    assert!(text(&site, "app/main.html").contains("data-package=\"\""));
}

/// Chrome apps with only native code (nexes) say what they are, in the words every front
/// end uses: from their manifests (the real ckauth and LogRUN apps of the nexe corpus, a
/// 2011 `nexes` manifest), else from the app's `platforms`.
#[test]
fn native_apps_say_they_are_native() {
    let calls = AtomicUsize::new(0);
    let summary = |input: &pexe2wasm_site::Input| {
        let site = build(input, &Options::default(), &fake(&calls)).unwrap();
        assert!(!site.report.runs);
        site.report.summary
    };
    let platforms_only = zip_of(&[
        (
            "manifest.json",
            br#"{"manifest_version": 2, "name": "n", "version": "1",
                "app": {"background": {"scripts": ["bg.js"]}},
                "platforms": [{"nacl_arch": "x86-64", "sub_package_path": "_platform_specific/x86-64/"},
                              {"nacl_arch": "arm", "sub_package_path": "_platform_specific/arm/"}]}"#,
        ),
        ("bg.js", b"// launches a window"),
        ("_platform_specific/x86-64/app.nexe", b"\x7fELF stand-in"),
    ]);
    let input = open_archive(&platforms_only, "n.zip", &Limits::default()).unwrap();
    assert_eq!(
        summary(&input),
        "a native NaCl app for x86-64/ARM: only PNaCl pexes convert"
    );

    let old = zip_of(&[
        ("index.html", b"<embed type=application/x-nacl src=s.nmf>"),
        (
            "s.nmf",
            b"{\"nexes\": {\"x86-64\": \"s_x86_64.nexe\", \"x86-32\": \"s_x86_32.nexe\",}}",
        ),
    ]);
    let input = open_archive(&old, "s.zip", &Limits::default()).unwrap();
    assert_eq!(
        summary(&input),
        "a native NaCl app for x86-64/x86-32: only PNaCl pexes convert"
    );

    let corpus = pexe2wasm_testkit::corpus::nexe_corpus_dir();
    if pexe2wasm_testkit::corpus::real_nexe("ckauth-x86_64/manifest.json").is_none() {
        return;
    }
    let ckauth = open(&corpus.join("ckauth-x86_64"), &Limits::default()).unwrap();
    assert_eq!(
        summary(&ckauth),
        "a native NaCl app for x86-64/x86-32/ARM: only PNaCl pexes convert"
    );
    let logrun = open(&corpus.join("logrun-base64-x86_64"), &Limits::default()).unwrap();
    assert_eq!(
        summary(&logrun),
        "a native NaCl app for x86-64/x86-32 (glibc dynamic: runnable-ld.so and shared objects): only PNaCl pexes convert"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 0, "nothing was converted");
}

/// An app whose manifest names an x86-64 nexe and no pexe, with the nexe where it says (the
/// ckauth dump of the nexe corpus, its nexe put beside its manifest): the nexe is
/// translated here into the browser host's module, beside it where the host looks
/// (`.nexe` → `.wasm`), and the app runs; the caller's pexe converter is not called. A
/// file there that is no nexe is named as what it is.
#[test]
fn an_app_with_an_x86_64_nexe_gets_its_module() {
    let stand_in = zip_of(&[
        ("index.html", b"<embed type=application/x-nacl src=n.nmf>"),
        (
            "n.nmf",
            br#"{"program":{"x86-64":{"url":"n_x86_64.nexe"}}}"#,
        ),
        ("n_x86_64.nexe", b"\x7fELF stand-in"),
    ]);
    let calls = AtomicUsize::new(0);
    let input = open_archive(&stand_in, "n.zip", &Limits::default()).unwrap();
    let site = build(&input, &Options::default(), &fake(&calls)).unwrap();
    let r = &site.report;
    assert!(!r.runs);
    assert!(r.native.is_empty(), "{:?}", r.native);
    assert_eq!(r.modules[0].pexe.as_str(), "n_x86_64.nexe");
    let e = r.modules[0].error.as_deref().unwrap_or_default();
    assert!(e.starts_with("an ELF file, not a pexe"), "{e}");

    let (Some(nexe), Some(nmf)) = (
        pexe2wasm_testkit::corpus::real_nexe("ckauth-x86_64.nexe"),
        pexe2wasm_testkit::corpus::real_nexe("ckauth-x86_64/newlib/Release/ckauth.nmf"),
    ) else {
        return;
    };
    let app = zip_of(&[
        (
            "index.html",
            b"<embed type=application/x-nacl src=newlib/Release/ckauth.nmf>",
        ),
        ("newlib/Release/ckauth.nmf", &nmf),
        ("newlib/Release/ckauth_x86_64.nexe", &nexe),
    ]);
    let input = open_archive(&app, "ckauth.zip", &Limits::default()).unwrap();
    let site = build(&input, &Options::default(), &fake(&calls)).unwrap();
    let r = &site.report;
    assert!(r.runs, "{}", r.summary);
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "the pexe converter was not called"
    );
    let m = &r.modules[0];
    assert_eq!(m.pexe.as_str(), "newlib/Release/ckauth_x86_64.nexe");
    assert_eq!(
        m.module.as_ref().map(|p| p.as_str()),
        Some("newlib/Release/ckauth_x86_64.wasm")
    );
    assert!(m.plugin);
    assert_eq!(m.manifests[0].as_str(), "newlib/Release/ckauth.nmf");
    let wasm = site
        .files
        .get(m.module.as_ref().unwrap())
        .unwrap()
        .read()
        .unwrap();
    wasmparser::Validator::new().validate_all(&wasm).unwrap();
    let shared = wasmparser::Parser::new(0).parse_all(&wasm).any(|p| {
        matches!(p, Ok(wasmparser::Payload::ImportSection(r)) if r.clone().into_imports().any(|i| {
            matches!(i, Ok(i) if i.name == "memory" && matches!(i.ty, wasmparser::TypeRef::Memory(t) if t.shared))
        }))
    });
    assert!(shared, "the module imports a shared memory");
}
