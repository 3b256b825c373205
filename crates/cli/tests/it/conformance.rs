//! The Pepper conformance suite: the same cases on the command-line host (`pexe2wasm run`)
//! and in Chromium, Firefox and WebKitGTK (`pexe2wasm web`, one browser launch for every
//! case), each compared with one expected transcript (docs/TESTING.md, "The Pepper
//! conformance suite").
//!
//! A case, `fixtures/conformance/NAME.case`, lists Pepper calls by interface and function
//! name; this driver turns them into the messages of the conformance plugin
//! (`fixtures/conformance/pepper-calls.pnaclasm`), which makes each call and posts its tag
//! and result (and, from its completion callback, the callback's tag and result). The
//! driver renders what came back by the description's return types (`crates/ppapi`) into
//! `label: VALUE` lines and compares them with `NAME.expected`, written from Chrome's
//! documented behaviour (the ppapi/c headers and ppapi/thunk/enter.cc), not from either
//! host. A host may differ from it only as `fixtures/conformance/KNOWN-DIFFERENCES.md`
//! lists; an unlisted difference fails, and so does a listed one that no longer occurs.
//!
//! Case syntax, one statement per line (`#` starts a comment):
//! - `send`: the statements after it, up to the next `send`, are one message (one
//!   HandleMessage); a case starts with an implicit `send`;
//! - `LABEL: INTERFACE FUNCTION(ARG, ...) [data "TEXT"] [-> @OFFSET]`: a call; its result
//!   goes to `LABEL:` (and is stored at heap offset OFFSET);
//! - `LABEL: peek(ARG)`: posts the argument's value (e.g. `*16`, the i32 at heap offset 16);
//! - `LABEL: thread()`: the message's later statements run on a new thread the plugin
//!   starts (`LABEL: PP_OK` once it runs); the plugin's heap is shared, so a case sends
//!   nothing after it.
//!
//! Arguments: an integer; `@N` the heap address N; `*N` the i32 stored at heap offset N;
//! `instance`; `cb:NAME` a required completion callback (what it is given shows as
//! `NAME (callback): VALUE`), `optcb:NAME` an optional one (`PP_COMPLETIONCALLBACK_FLAG_OPTIONAL`),
//! `block` a blocking one (`PP_BlockUntilComplete()`); `data` and `datalen` the address
//! and length of the statement's `data "TEXT"`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use pexe2wasm_ppapi::{description, Function};
use serde_json::{json, Value};

use crate::cmd::text;
use crate::web::{self, Browser};

/// Tags of completion callbacks start here; statements count from 1.
const CALLBACK_TAG: i64 = 1000;

/// The plugin's argument kinds (pepper-calls.pnaclasm's header).
mod kind {
    pub const VALUE: i64 = 0;
    pub const LOAD: i64 = 1;
    pub const ADDRESS: i64 = 2;
    pub const INSTANCE: i64 = 3;
    pub const REQUIRED: i64 = 4;
    pub const OPTIONAL: i64 = 5;
    pub const BLOCKING: i64 = 6;
    pub const DATA: i64 = 7;
    pub const DATA_LEN: i64 = 8;
}

fn dir() -> PathBuf {
    pexe2wasm_testkit::repo_root().join("fixtures/conformance")
}

/// How a statement's result reads in a transcript.
#[derive(Clone, Copy, Debug)]
enum Render {
    /// A result code (`int32_t` results and callbacks): PP_OK, PP_ERROR_... or a count.
    Code,
    Bool,
    /// A resource or pointer: which id or address is the host's business; zero or not is
    /// what is compared.
    Handle(&'static str),
    Void,
    Number,
}

/// One parsed case: its messages (as the plugin takes them), and for each tag its label
/// and how to render it.
struct Case {
    name: String,
    messages: Vec<Value>,
    tags: BTreeMap<i64, (String, Render)>,
}

fn parse_arg(
    a: &str,
    cb_names: &mut Vec<String>,
    tags: &mut BTreeMap<i64, (String, Render)>,
) -> (i64, i64) {
    let num = |s: &str| -> i64 {
        s.trim()
            .parse()
            .unwrap_or_else(|_| panic!("not a number: {s:?}"))
    };
    let a = a.trim();
    let mut callback = |name: &str, k: i64| {
        cb_names.push(name.to_string());
        let tag = CALLBACK_TAG + cb_names.len() as i64;
        tags.insert(tag, (format!("{name} (callback)"), Render::Code));
        (k, tag)
    };
    if let Some(n) = a.strip_prefix("cb:") {
        callback(n, kind::REQUIRED)
    } else if let Some(n) = a.strip_prefix("optcb:") {
        callback(n, kind::OPTIONAL)
    } else if a == "block" {
        (kind::BLOCKING, 0)
    } else if a == "instance" {
        (kind::INSTANCE, 0)
    } else if a == "data" {
        (kind::DATA, 0)
    } else if a == "datalen" {
        (kind::DATA_LEN, 0)
    } else if let Some(n) = a.strip_prefix('@') {
        (kind::ADDRESS, num(n))
    } else if let Some(n) = a.strip_prefix('*') {
        (kind::LOAD, num(n))
    } else {
        (kind::VALUE, num(a))
    }
}

fn render_of(f: &Function) -> Render {
    let r = &f.ret;
    if r.is_void() {
        Render::Void
    } else if f.sret {
        // A struct result is written through the first argument: the call returns nothing.
        Render::Void
    } else if r.pointers > 0 {
        Render::Handle("pointer")
    } else if r.base == "PP_Resource" {
        Render::Handle("resource")
    } else if r.base == "PP_Bool" {
        Render::Bool
    } else if r.base == "int32_t" {
        Render::Code
    } else {
        Render::Number
    }
}

fn parse_case(name: &str, src: &str) -> Case {
    let mut messages = vec![];
    let mut steps: Vec<Vec<Value>> = vec![];
    let mut tags = BTreeMap::new();
    let mut cb_names = vec![];
    let mut tag = 0i64;
    for (n, line) in src.lines().enumerate() {
        let line = line.split('#').next().unwrap().trim();
        if line.is_empty() {
            continue;
        }
        let at = || format!("{name}.case:{}", n + 1);
        if line == "send" {
            if !steps.is_empty() {
                messages.push(Value::Array(std::mem::take(&mut steps).concat()));
            }
            continue;
        }
        let (label, rest) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("{}: no `LABEL: `", at()));
        let (rest, store) = match rest.rsplit_once(" -> @") {
            Some((r, off)) => (r, off.trim().parse::<i64>().unwrap()),
            None => (rest, -1),
        };
        let (call, data) = match rest.split_once(" data \"") {
            Some((c, d)) => (
                c,
                d.strip_suffix('"')
                    .unwrap_or_else(|| panic!("{}: data", at())),
            ),
            None => (rest, ""),
        };
        let open = call.find('(').unwrap_or_else(|| panic!("{}: no (", at()));
        let args_text = call[open + 1..]
            .strip_suffix(')')
            .unwrap_or_else(|| panic!("{}: no )", at()));
        tag += 1;
        let mut args: Vec<(i64, i64)> = args_text
            .split(',')
            .filter(|a| !a.trim().is_empty())
            .map(|a| parse_arg(a, &mut cb_names, &mut tags))
            .collect();
        let head = call[..open].trim();
        let (iface, slot, shape, render, sret) = if head == "peek" {
            (String::new(), -1, 0, Render::Number, false)
        } else if head == "thread" {
            assert!(args.is_empty(), "{}: thread() takes no arguments", at());
            (String::new(), -2, 0, Render::Code, false)
        } else {
            let (iface, func) = head
                .split_once(' ')
                .unwrap_or_else(|| panic!("{}: INTERFACE FUNCTION", at()));
            let i = description()
                .interface(iface)
                .unwrap_or_else(|| panic!("{}: no interface {iface}", at()));
            let f = i
                .function(func)
                .unwrap_or_else(|| panic!("{}: no {iface}.{func}", at()));
            let slot = i.slot(func).unwrap() as i64;
            let wasm_args = f.wasm.params.len();
            let sret = usize::from(f.sret);
            assert_eq!(
                args.len() + sret,
                wasm_args,
                "{}: {iface}.{func} takes {} arguments{}",
                at(),
                wasm_args - sret,
                if f.sret {
                    " after the result's address (given first)"
                } else {
                    ""
                }
            );
            if f.sret {
                // The result's address is the first argument; the case gives it with `-> @N`.
                assert!(store >= 0, "{}: a PP_Var result needs `-> @N`", at());
                args.insert(0, (kind::ADDRESS, store));
            }
            assert!(
                f.wasm.params.iter().all(|p| p.as_str() == "i32")
                    && f.wasm.results.iter().all(|p| p.as_str() == "i32"),
                "{}: the plugin passes only i32 arguments",
                at()
            );
            let void = f.wasm.results.is_empty();
            let shape = args.len() as i64 | if void { 8 } else { 0 };
            (iface.to_string(), slot, shape, render_of(f), f.sret)
        };
        assert!(args.len() <= 6, "{}: at most 6 arguments", at());
        // A PP_Var result was written through its address: the call's own result is none.
        let store = if sret { -1 } else { store };
        tags.insert(tag, (label.to_string(), render));
        let mut step = vec![
            json!(tag),
            json!(iface),
            json!(slot),
            json!(shape),
            json!(store),
            json!(data),
        ];
        for k in 0..6 {
            let (kd, v) = args.get(k).copied().unwrap_or((kind::VALUE, 0));
            step.push(json!(kd));
            step.push(json!(v));
        }
        steps.push(step);
    }
    if !steps.is_empty() {
        messages.push(Value::Array(steps.concat()));
    }
    Case {
        name: name.to_string(),
        messages,
        tags,
    }
}

/// The name of a result code, from the description's `PP_Error`.
fn code(v: i64) -> String {
    description()
        .enum_values("PP_Error")
        .unwrap()
        .iter()
        .find(|e| i64::from(e.value) == v && v <= 0)
        .map_or_else(|| v.to_string(), |e| e.name.clone())
}

/// What came back (the posted int32s, tag then value), as transcript lines.
fn transcript(case: &Case, posted: &[i64]) -> Vec<String> {
    let mut out = vec![];
    for pair in posted.chunks(2) {
        let [tag, v] = pair else {
            out.push(format!("(a lone message: {pair:?})"));
            break;
        };
        let Some((label, render)) = case.tags.get(tag) else {
            out.push(format!("(unknown tag {tag}: {v})"));
            continue;
        };
        let value = match render {
            Render::Code => code(*v),
            Render::Bool => match v {
                0 => "PP_FALSE".into(),
                1 => "PP_TRUE".into(),
                _ => format!("PP_Bool {v}"),
            },
            Render::Handle(what) => {
                if *v == 0 {
                    "0".into()
                } else {
                    (*what).into()
                }
            }
            Render::Void => "done".into(),
            Render::Number => v.to_string(),
        };
        out.push(format!("{label}: {value}"));
    }
    out
}

/// Every case, sorted by name.
fn cases() -> Vec<(Case, Vec<String>)> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .unwrap()
        .filter_map(|e| {
            let p = e.unwrap().path();
            (p.extension()? == "case")
                .then(|| p.file_stem().unwrap().to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no fixtures/conformance/*.case");
    names
        .into_iter()
        .map(|n| {
            let src = std::fs::read_to_string(dir().join(format!("{n}.case"))).unwrap();
            let exp = std::fs::read_to_string(dir().join(format!("{n}.expected")))
                .unwrap_or_else(|e| panic!("{n}.expected: {e}"));
            let expected = exp
                .lines()
                .map(|l| l.split(" #").next().unwrap().trim_end())
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(String::from)
                .collect();
            (parse_case(&n, &src), expected)
        })
        .collect()
}

/// One listed difference: on `host`, case `case` gives `actual` where `expected` says
/// `expected` ("(none)" for a line that is missing).
#[derive(Debug, Clone, PartialEq)]
struct Difference {
    case: String,
    host: String,
    expected: String,
    actual: String,
}

/// KNOWN-DIFFERENCES.md's entries: lines `` - `CASE` on HOST: `EXPECTED` → `ACTUAL`: why ``.
fn known_differences() -> Vec<Difference> {
    let text = std::fs::read_to_string(dir().join("KNOWN-DIFFERENCES.md")).unwrap();
    text.lines()
        .filter(|l| l.starts_with("- `"))
        .map(|l| {
            let parts: Vec<&str> = l.split('`').collect();
            assert!(parts.len() >= 6, "KNOWN-DIFFERENCES.md: cannot read {l:?}");
            let host = parts[2]
                .trim()
                .strip_prefix("on ")
                .and_then(|h| h.strip_suffix(':'));
            Difference {
                case: parts[1].into(),
                host: host
                    .unwrap_or_else(|| panic!("KNOWN-DIFFERENCES.md: no `on HOST:` in {l:?}"))
                    .trim()
                    .into(),
                expected: parts[3].into(),
                actual: parts[5].into(),
            }
        })
        .collect()
}

/// The expected transcript as `host` should give it: with the listed differences applied.
/// Returns it and the differences used.
fn expected_on(
    case: &str,
    host: &str,
    expected: &[String],
    known: &[Difference],
) -> (Vec<String>, Vec<Difference>) {
    let mut out = expected.to_vec();
    let mut used = vec![];
    for d in known.iter().filter(|d| d.case == case && d.host == host) {
        let at = out
            .iter()
            .position(|l| *l == d.expected)
            .unwrap_or_else(|| {
                panic!(
                    "KNOWN-DIFFERENCES.md: {case}.expected has no line {:?}",
                    d.expected
                )
            });
        if d.actual == "(none)" {
            out.remove(at);
        } else {
            out[at] = d.actual.clone();
        }
        used.push(d.clone());
    }
    (out, used)
}

/// Compares every case's transcript on `host` with the expectation: a report of each
/// disagreement (empty when all agree).
fn compare(host: &str, got: &[(String, Vec<String>)], all: &[(Case, Vec<String>)]) -> String {
    let known = known_differences();
    let mut report = String::new();
    for ((case, expected), (_, lines)) in all.iter().zip(got) {
        let (want, _) = expected_on(&case.name, host, expected, &known);
        if *lines != want {
            let _ = writeln!(
                report,
                "{}: {host} gave\n    {}\n  expected (after KNOWN-DIFFERENCES.md)\n    {}",
                case.name,
                lines.join("\n    "),
                want.join("\n    ")
            );
        }
    }
    report
}

/// Assembles the plugin into `dir`.
fn plugin(dir: &Path) -> PathBuf {
    let pexe = dir.join("pepper-calls.pexe");
    let src = std::fs::read_to_string(dir_src()).unwrap();
    std::fs::write(
        &pexe,
        pexe2wasm::text::assemble(&src).expect("the plugin assembles"),
    )
    .unwrap();
    pexe
}

fn dir_src() -> PathBuf {
    dir().join("pepper-calls.pnaclasm")
}

fn ints(messages: &[Value]) -> Vec<i64> {
    messages
        .iter()
        .map(|m| m.as_i64().unwrap_or(i64::MIN))
        .collect()
}

/// Runs each case on the command-line host: its transcript.
fn run_cli(pexe: &Path, all: &[(Case, Vec<String>)]) -> Vec<(String, Vec<String>)> {
    all.iter()
        .map(|(case, _)| {
            let input: String = case.messages.iter().map(|m| format!("{m}\n")).collect();
            let o = pexe2wasm_testkit::output_with_stdin(
                Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
                    .arg("run")
                    .arg(pexe)
                    .args(["--messages", "json", "--timeout", "20"]),
                input.as_bytes(),
            );
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}: {}",
                case.name,
                text(&o.stderr)
            );
            let posted: Vec<Value> = text(&o.stdout)
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or(Value::String(l.into())))
                .collect();
            (case.name.clone(), transcript(case, &ints(&posted)))
        })
        .collect()
}

#[test]
fn every_case_parses_and_every_listed_difference_names_a_case_line() {
    let all = cases();
    for d in known_differences() {
        let (_, expected) = all
            .iter()
            .find(|(c, _)| c.name == d.case)
            .unwrap_or_else(|| panic!("KNOWN-DIFFERENCES.md names no case {:?}", d.case));
        assert!(
            ["cli", "chromium", "firefox"].contains(&d.host.as_str()),
            "{d:?}: host is cli, chromium or firefox"
        );
        assert!(
            expected.contains(&d.expected),
            "{d:?}: not a line of {}.expected",
            d.case
        );
    }
    // Each statement and callback has a line in the expectation (a missing or extra line
    // is a wrong expectation, not a host's difference).
    for (case, expected) in &all {
        for line in expected {
            let label = line.split(": ").next().unwrap();
            assert!(
                case.tags.values().any(|(l, _)| l == label),
                "{}.expected: {line:?} names no statement or callback of the case",
                case.name
            );
        }
    }
}

#[test]
fn conformance_on_the_command_line() {
    let scratch = web::scratch("conformance-cli");
    let pexe = plugin(&scratch);
    let all = cases();
    let got = run_cli(&pexe, &all);
    let report = compare("cli", &got, &all);
    assert!(report.is_empty(), "{report}");
}

three_browsers!(conformance_in: conformance_in_chromium, conformance_in_firefox, conformance_in_webkit);

/// Every case in one launch of `browser` (`pexe2wasm web`'s console page), compared with
/// the expectation as the command line's is; the differences allowed are the browser's
/// entries of KNOWN-DIFFERENCES.md (what that browser cannot do as Chrome did).
fn conformance_in(browser: Browser) {
    if !browser.ready() {
        return;
    }
    let scratch = web::scratch(&format!("conformance-{}", browser.name()));
    let pexe = plugin(&scratch);
    web::write_site(&pexe, &scratch);
    let all = cases();
    let spec: Vec<Value> = all
        .iter()
        .map(|(c, e)| json!({"messages": c.messages, "expect": 2 * e.len()}))
        .collect();
    let r = web::run_page(
        browser,
        &scratch,
        "sdk-page.html?nmf=pepper-calls.nmf",
        "conformance",
        &[("CASES", &Value::Array(spec).to_string())],
    );
    let got: Vec<(String, Vec<String>)> = all
        .iter()
        .zip(r["cases"].as_array().unwrap_or_else(|| panic!("{r:#}")))
        .map(|((case, _), c)| {
            (
                case.name.clone(),
                transcript(case, &ints(c["messages"].as_array().unwrap())),
            )
        })
        .collect();
    let report = compare(browser.name(), &got, &all);
    // The page's report first and the differences last, so that a cut log keeps them.
    assert!(report.is_empty(), "{r:#}\n{report}");
}
