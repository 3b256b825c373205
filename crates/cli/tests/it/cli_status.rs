//! What each command says about what a pexe needs to run: `verify`, `info`, `convert` and
//! `run` on Pepper (PPAPI) plugins and threaded modules from the real corpus, and every
//! command given a NaCl manifest (`.nmf`) instead of a pexe.
use pexe2wasm_testkit::corpus as common;

use crate::cmd::{fails_saying, pexe2wasm, text};

/// A small Pepper plugin (NaCl SDK getting_started part2) and a threaded program.
const PLUGIN: &str = "lpdevs-part2.pexe";
/// A plugin that needs a browser (Graphics3D and OpenGL ES 2).
const GL_PLUGIN: &str = "bp2008-pnacl_player.pexe";
const THREADED: &str = "binji-thread.pexe";
const PLAIN: &str = "binji-puts.pexe";

/// The corpus file's path, or `None` (skipped) without the corpus.
fn real(name: &str) -> Option<String> {
    common::real_pexe(name)?;
    Some(common::real_corpus_dir().join(name).display().to_string())
}

#[test]
fn verify_says_what_a_valid_pexe_needs() {
    let (Some(plugin), Some(threaded), Some(plain)) = (real(PLUGIN), real(THREADED), real(PLAIN))
    else {
        return;
    };
    // A plugin is ok, and the line says the command-line Pepper host runs it.
    let o = pexe2wasm(&["verify", &plugin]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let line = text(&o.stdout);
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.starts_with(&format!("{plugin}: ok (")), "{line}");
    assert!(
        line.contains("a Pepper (PPAPI) plugin (it queries nacl-irt-ppapihook-0.1)")
            && line.contains("runs under pexe2wasm run"),
        "{line}"
    );
    // One that needs a browser is valid (exit 0) but not called plain "ok".
    if let Some(gl) = real(GL_PLUGIN) {
        let o = pexe2wasm(&["verify", &gl]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let line = text(&o.stdout);
        assert!(
            line.starts_with(&format!("{gl}: valid, but cannot run here (")),
            "{line}"
        );
        assert!(
            line.contains("needs a browser") && line.contains("PPB_Graphics3D;1.0"),
            "{line}"
        );
    }

    // A threaded program is ok, and the line says it needs `pexe2wasm run`.
    let o = pexe2wasm(&["verify", &threaded]);
    assert_eq!(o.status.code(), Some(0));
    let line = text(&o.stdout);
    assert!(line.starts_with(&format!("{threaded}: ok (")), "{line}");
    assert!(line.contains("; needs pexe2wasm run"), "{line}");

    // A plain WASI program: plain ok, nothing more.
    let o = pexe2wasm(&["verify", &plain]);
    assert_eq!(o.status.code(), Some(0));
    let line = text(&o.stdout);
    assert!(line.starts_with(&format!("{plain}: ok (")), "{line}");
    assert!(line.trim_end().ends_with("globals)"), "{line}");

    // --no-runnable checks the ABI only, so it says nothing about hosts.
    let o = pexe2wasm(&["verify", "--no-runnable", &plugin]);
    assert_eq!(o.status.code(), Some(0));
    let line = text(&o.stdout);
    assert!(line.starts_with(&format!("{plugin}: ok (")), "{line}");
    assert!(!line.contains("Pepper"), "{line}");
}

#[test]
fn info_shows_what_it_needs_in_text_and_json() {
    let (Some(plugin), Some(threaded)) = (real(PLUGIN), real(THREADED)) else {
        return;
    };
    let o = pexe2wasm(&["info", &plugin]);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    let needs = out
        .lines()
        .find(|l| l.starts_with("needs:"))
        .unwrap_or_else(|| panic!("no needs line:\n{out}"));
    assert!(needs.contains("Pepper (PPAPI) plugin"), "{needs}");

    let o = pexe2wasm(&["info", "--json", &plugin]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["needs"]["host"], "pepper");
    assert_eq!(j["needs"]["interface"], "nacl-irt-ppapihook-0.1");
    assert_eq!(j["needs"]["available"], true);
    assert_eq!(j["needs"]["lacking"], serde_json::json!([]));
    if let Some(gl) = real(GL_PLUGIN) {
        let o = pexe2wasm(&["info", "--json", &gl]);
        let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(j["needs"]["host"], "browser");
        assert_eq!(j["needs"]["available"], false);
        let lacking: Vec<&str> = j["needs"]["lacking"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert!(lacking.contains(&"PPB_Graphics3D;1.0"), "{lacking:?}");
        assert_eq!(j["needs"]["interface"], lacking[0]);
    }

    let o = pexe2wasm(&["info", "--json", &threaded]);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["needs"]["host"], "runner");
    assert_eq!(j["needs"]["interface"], "nacl-irt-thread-0.1");
    assert_eq!(j["needs"]["available"], true);
}

#[test]
fn convert_notes_when_the_module_needs_more_than_wasi() {
    let (Some(plugin), Some(threaded), Some(plain)) = (real(PLUGIN), real(THREADED), real(PLAIN))
    else {
        return;
    };
    let s = common::Scratch::new("status-convert");
    let out = s.arg("out.wasm");
    let cases: [(&str, &[&str], Option<&str>); 4] = [
        (&plugin, &[], Some("runs under pexe2wasm run")),
        (&threaded, &[], Some("needs pexe2wasm run")),
        // Forced single-threaded, the same pexe runs anywhere.
        (&threaded, &["--threads", "off"], None),
        (&plain, &[], None),
    ];
    for (file, extra, note) in cases {
        let mut args = vec!["convert", file, "-o", &out];
        args.extend_from_slice(extra);
        let o = pexe2wasm(&args);
        assert_eq!(o.status.code(), Some(0), "{file}: {}", text(&o.stderr));
        let err = text(&o.stderr);
        match note {
            Some(n) => {
                assert_eq!(err.lines().count(), 1, "{file}: {err}");
                assert!(err.starts_with(&format!("note: {file}: ")), "{err}");
                assert!(err.contains(n), "{file}: {err}");
            }
            None => assert!(err.is_empty(), "{file} {extra:?}: {err}"),
        }
        // The module is what the library makes, byte for byte.
        let threads = if extra.is_empty() {
            pexe2wasm::convert::Threads::Auto
        } else {
            pexe2wasm::convert::Threads::Off
        };
        let opts = pexe2wasm::convert::ConvertOptions {
            threads,
            ..Default::default()
        };
        let want = pexe2wasm::convert::convert(&std::fs::read(file).unwrap(), &opts).unwrap();
        assert!(std::fs::read(&out).unwrap() == want.wasm, "{file}");
    }
}

#[test]
fn run_refuses_a_plugin_converted_without_threads_with_one_line_and_status_69() {
    let (Some(plugin), Some(threaded)) = (real(PLUGIN), real(THREADED)) else {
        return;
    };
    let s = common::Scratch::new("status-run");
    let wasm = s.arg("plugin.wasm");
    // Without threads the plugin gets the plain runtime, which has no PPAPI hook.
    let o = pexe2wasm(&["convert", &plugin, "-o", &wasm, "--threads", "off"]);
    assert_eq!(o.status.code(), Some(0));
    let o = pexe2wasm(&["run", &wasm]);
    assert_eq!(o.status.code(), Some(69), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!(
            "error: {wasm}: a Pepper (PPAPI) plugin converted without the Pepper runtime"
        )),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // Run from the pexe with --threads off: refused with a reason, before converting.
    let o = pexe2wasm(&["run", &plugin, "--threads", "off"]);
    fails_saying(&o, 1, "--threads off cannot run it");
    // A threaded program still runs.
    let o = pexe2wasm(&["run", &threaded]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(!o.stdout.is_empty());
}

/// Every command that reads a pexe recognizes a manifest by its content and names the
/// program it points at.
#[test]
fn manifests_are_named_not_decoded() {
    let s = common::Scratch::new("status-nmf");
    let nmf = br#"
  {"program": {"portable": {
     "pnacl-translate": {"url": "pnacl/Release/app.pexe", "optlevel": 2},
     "pnacl-debug": {"url": "pnacl/Release/app_unstripped.bc"}}}}"#;
    s.put("app.nmf", nmf);
    // Content decides, not the name.
    s.put("misnamed.pexe", nmf);
    s.put("noprogram.nmf", br#"{"files": {}}"#);
    s.put("broken.nmf", b"{ \"program\": ");
    let out = s.arg("out.wasm");
    for file in ["app.nmf", "misnamed.pexe", "noprogram.nmf", "broken.nmf"] {
        let path = s.arg(file);
        for cmd in [
            vec!["convert", path.as_str(), "-o", out.as_str()],
            vec!["info", path.as_str()],
            vec!["info", "--json", path.as_str()],
            vec!["verify", path.as_str()],
            vec!["run", path.as_str()],
            vec!["dis", path.as_str()],
        ] {
            let o = pexe2wasm(&cmd);
            assert_eq!(o.status.code(), Some(1), "{cmd:?}: {}", text(&o.stderr));
            let err = text(&o.stderr);
            assert_eq!(err.lines().count(), 1, "{cmd:?}: {err}");
            let want = match file {
                "noprogram.nmf" => "a NaCl manifest (.nmf), not a pexe; it names no pnacl program",
                "broken.nmf" => "JSON text (a broken NaCl manifest?), not a pexe",
                _ => "a NaCl manifest (.nmf), not a pexe; its pnacl program is pnacl/Release/app.pexe",
            };
            assert!(
                err.starts_with(&format!("error: {path}: {want}")),
                "{cmd:?}: {err}"
            );
            assert!(!err.contains("unexpected end"), "{err}");
            assert!(o.stdout.is_empty(), "{cmd:?}");
        }
    }
    assert!(!s.join("out.wasm").exists());
    // A pexe saved under a manifest's name is still a pexe.
    if let Some(data) = common::real_pexe(PLAIN) {
        s.put("puts.nmf", &data);
        let o = pexe2wasm(&["verify", &s.arg("puts.nmf")]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
}
