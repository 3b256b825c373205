//! Native NaCl code on every command, against the real nexe corpus (../shared/fixtures/nexe):
//! `info` and `verify` give a nexe's facts and NaCl's validator verdict; static x86-64
//! command-line and Pepper nexes convert and run; for the others `convert`, `run` and `web`
//! say what it is and that only pexes convert; `.nmf` manifests with only nexes say so as
//! apps; `batch` reports every nexe as skipped, with what it is, and goes on.
use pexe2wasm_testkit::corpus::{nexe_corpus_dir, real_nexe, NEXES};

use crate::cmd::{fails_saying, pexe2wasm, text};
use std::path::PathBuf;

const NOT_YET: &str = "not translated: of native executables, only static x86-64 ones translate yet (not the 2011 pre-1.0 Pepper or SRPC ones); PNaCl pexes convert";
const SSH: &str = "nassh-ssh_client-x86_64.nexe";
const CKAUTH: &str = "ckauth-x86_64.nexe";
/// The static x86-64 command-line and Pepper nexes and PNaCl's compiler and linker: these
/// convert and run (pre-IRT through the runtime's trampolines, the IRT era through its
/// `nacl_irt_query`, Pepper as plugins, Subzero and the linker through the translator's
/// interfaces).
const RUNS: &[&str] = &[
    "nacl-hello_world-x86_64.nexe",
    "nacl-nullptr-x86_64.nexe",
    "fftw-wisdom-x86_64.nexe",
    "glibc-sln-x86_64.nexe",
    CKAUTH,
    SSH,
    SUBZERO,
    LINKER,
];
const SUBZERO: &str = "pnacl-sz-x86_64.nexe";
const LINKER: &str = "pnacl-ld-x86_64.nexe";
const SSH_IS: &str = "a native NaCl executable for x86-64 (static, newlib, Pepper)";
const PEPPER_CONVERTS: &str =
    "translated with the runtime into a Pepper plugin (`pexe2wasm convert`, `run`)";
/// A Pepper nexe of the 2011 interfaces: refused.
const SINE: &str = "naclports-gallery-sine_synth-x86_64.nexe";
const SINE_IS: &str = "a native NaCl executable for x86-64 (static, newlib, Pepper, pre-1.0)";

/// The corpus file's path, or `None` (skipped) without the corpus.
fn nexe(name: &str) -> Option<String> {
    real_nexe(name)?;
    Some(nexe_corpus_dir().join(name).display().to_string())
}

fn tempdir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pexe2wasm-cli-nexe-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn info_prints_a_nexes_facts_and_validation() {
    let (Some(ssh), Some(fact)) = (nexe(SSH), nexe("logrun-fact-x86_64.nexe")) else {
        return;
    };
    let o = pexe2wasm(&["info", &ssh]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    for want in [
        "native NaCl executable (nexe)\n",
        "architecture:   x86-64 (ELF64)",
        "recognized by:  NaCl ABI note",
        "linking:        static\n",
        "runtime ABI:    stable IRT",
        "IRT interfaces: ",
        "nacl-irt-ppapihook-0.1",
        "kind:           Pepper plugin",
        "validation:     valid by NaCl's x86-64 rules (",
        &format!("converts:       yes: {PEPPER_CONVERTS}"),
    ] {
        assert!(out.contains(want), "{want:?} not in:\n{out}");
    }
    let o = pexe2wasm(&["info", "--json", &ssh]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["format"], "nexe");
    assert_eq!(j["arch"], "x86-64");
    assert_eq!(j["linking"]["kind"], "static");
    assert_eq!(j["runtime_abi"], "stable-irt");
    assert_eq!(j["validation"]["valid"], true);
    assert!(
        j["validation"]["instructions"].as_u64().unwrap() > 100_000,
        "{j}"
    );
    assert_eq!(j["description"], "x86-64 (static, newlib, Pepper)");

    // glibc dynamic: the interpreter and the shared objects it needs.
    let o = pexe2wasm(&["info", &fact]);
    let out = text(&o.stdout);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        out.contains("linking:        dynamic (glibc): interpreter "),
        "{out}"
    );
    assert!(out.contains("a glibc dynamic nexe"), "{out}");
}

#[test]
fn verify_checks_x86_64_code_by_nacls_rules() {
    let (Some(ssh), Some(arm), Some(bad32)) = (
        nexe(SSH),
        nexe("nacl-hello_world-arm.nexe"),
        nexe("nacl-text_overlaps_data-x86_32.nexe"),
    ) else {
        return;
    };
    let o = pexe2wasm(&["verify", &ssh]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let line = text(&o.stdout);
    assert!(
        line.starts_with(&format!("{ssh}: {SSH_IS}: valid by NaCl's x86-64 rules (")),
        "{line}"
    );
    assert!(line.trim_end().ends_with(PEPPER_CONVERTS), "{line}");

    // A corrupted copy: `mov %rax,%r15` at the entry point.
    let mut bytes = std::fs::read(&ssh).unwrap();
    let n = pexe2wasm_nexe::inspect(&bytes).unwrap();
    let t = n.info.text().unwrap().clone();
    let entry = n.info.entry;
    let at = (t.offset + u64::from(entry - t.vaddr)) as usize;
    bytes[at..at + 3].copy_from_slice(&[0x49, 0x89, 0xc7]);
    let d = tempdir("verify");
    let bad = d.join("bad.nexe");
    std::fs::write(&bad, &bytes).unwrap();
    let o = pexe2wasm(&["verify", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with(&format!(
            "error: {}: {SSH_IS}: rejected by NaCl's x86-64 rules: ",
            bad.display()
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("bundle {:#x}", entry & !31)) && err.contains("r15"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");

    // ARM code is not checked here, and a file NaCl's loader refuses is refused.
    let o = pexe2wasm(&["verify", &arm]);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(err.contains("a native NaCl executable for ARM (static, newlib, command-line): ARM code: not validated"), "{err}");
    let o = pexe2wasm(&["verify", &bad32]);
    fails_saying(&o, 1, "NaCl's loader refuses it: ");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn convert_run_and_web_say_what_a_nexe_is() {
    let Some(ssh) = nexe(SINE) else { return };
    let d = tempdir("convert");
    let out = d.join("out.wasm");
    let want = format!("error: {ssh}: {SINE_IS}: {NOT_YET}\n");
    let o = pexe2wasm(&["convert", &ssh, "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), want);
    assert!(!out.exists());
    let o = pexe2wasm(&["run", &ssh]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), want);
    let o = pexe2wasm(&["dis", &ssh]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), want);
    let site = d.join("site");
    let o = pexe2wasm(&["web", &ssh, "-o", site.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(text(&o.stderr), want);
    assert!(!site.exists(), "nothing is written for a nexe");
    // Every other nexe of the corpus is named the same way, never "not a pexe".
    for name in NEXES.iter().filter(|n| !RUNS.contains(n)) {
        let Some(path) = nexe(name) else { return };
        let o = pexe2wasm(&["convert", &path, "-o", out.to_str().unwrap()]);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{name}");
        assert!(
            err.starts_with(&format!("error: {path}: a native NaCl executable for "))
                && err.trim_end().ends_with(NOT_YET),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn manifests_with_only_nexes_are_named_as_native_apps() {
    let (Some(ckauth), Some(logrun)) = (
        nexe("ckauth-x86_64/newlib/Release/ckauth.nmf"),
        nexe("logrun-base64-x86_64/glibc/logrun.nmf"),
    ) else {
        return;
    };
    let d = tempdir("nmf");
    for cmd in ["info", "verify", "convert", "run"] {
        let mut args = vec![cmd, ckauth.as_str()];
        let out = d.join("x.wasm");
        if cmd == "convert" {
            args.extend(["-o", out.to_str().unwrap()]);
        }
        let o = pexe2wasm(&args);
        assert_eq!(o.status.code(), Some(1), "{cmd}");
        assert_eq!(
            text(&o.stderr),
            format!("error: {ckauth}: a NaCl manifest (.nmf) of a native NaCl app for x86-64/x86-32/ARM: only PNaCl pexes convert\n"),
            "{cmd}"
        );
    }
    let site = d.join("site");
    let o = pexe2wasm(&["web", &logrun, "-o", site.to_str().unwrap()]);
    fails_saying(&o, 1, "a native NaCl app for x86-64/x86-32 (glibc dynamic: runnable-ld.so and shared objects): only PNaCl pexes convert");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn batch_reports_every_nexe_and_goes_on() {
    if real_nexe(SSH).is_none() {
        return;
    }
    let d = tempdir("batch");
    let corpus = nexe_corpus_dir();
    let o = pexe2wasm(&[
        "batch",
        corpus.to_str().unwrap(),
        "-o",
        d.to_str().unwrap(),
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(d.join("report.json")).unwrap()).unwrap();
    let files = report["files"].as_array().unwrap();
    for name in NEXES {
        let f = files
            .iter()
            .find(|f| f["path"] == *name)
            .unwrap_or_else(|| panic!("{name} not in the report"));
        assert_eq!(f["status"], "skipped", "{name}");
        let why = f["skipped"].as_str().unwrap();
        assert!(
            why.starts_with("a native NaCl executable for ") && why.ends_with(NOT_YET),
            "{name}: {why}"
        );
    }
    let ssh = files.iter().find(|f| f["path"] == SSH).unwrap();
    assert_eq!(ssh["skipped"], format!("{SSH_IS}: {NOT_YET}"));
    // A manifest's native programs are skipped with the app's words when the nexe is not
    // there (the dumps hold one architecture).
    let arm = files
        .iter()
        .find(|f| f["path"] == "ckauth-x86_64/newlib/Release/ckauth_arm.nexe")
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(arm["status"], "skipped");
    assert_eq!(
        arm["skipped"],
        "a native NaCl app for x86-64/x86-32/ARM: only PNaCl pexes convert"
    );
    assert_eq!(
        arm["found_by"][0],
        "ckauth-x86_64/newlib/Release/ckauth.nmf: program.arm"
    );
    assert_eq!(report["summary"]["failed"], 0, "{report:#}");
    assert_eq!(report["summary"]["converted"], 0);
    let md = std::fs::read_to_string(d.join("report.md")).unwrap();
    assert!(md.contains(SSH_IS), "{md}");
    let _ = std::fs::remove_dir_all(&d);
}

/// A pre-IRT command-line nexe converts into a valid WASI command and runs: hello_world
/// prints its greeting and exits 0 (SOURCES.md), under `run` and from the converted file.
#[test]
fn pre_irt_hello_world_converts_and_runs() {
    let Some(hello) = nexe("nacl-hello_world-x86_64.nexe") else {
        return;
    };
    verify_says_it_translates(&hello);
    let o = pexe2wasm(&["run", &hello]);
    assert_eq!(text(&o.stdout), "Hello, World!\n", "{}", text(&o.stderr));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = tempdir("hello");
    let out = convert_validated(&hello, &d);
    let o = pexe2wasm(&["run", out.to_str().unwrap()]);
    assert_eq!(text(&o.stdout), "Hello, World!\n", "{}", text(&o.stderr));
    assert_eq!(o.status.code(), Some(0));
    let _ = std::fs::remove_dir_all(&d);
}

/// A null pointer faults as under NaCl, whose first 64 KiB is unmapped: nullptr's load
/// from address 0 is an untrusted segfault naming its instruction, a trap (exit status
/// 134) before the program prints anything (its `FAIL` line said address 0 was readable).
#[test]
fn a_null_pointer_access_traps() {
    let Some(nullptr) = nexe("nacl-nullptr-x86_64.nexe") else {
        return;
    };
    let o = pexe2wasm(&["run", &nullptr]);
    let (stdout, stderr) = (text(&o.stdout), text(&o.stderr));
    assert_eq!(o.status.code(), Some(134), "{stderr}");
    assert_eq!(stdout, "", "{stderr}");
    assert!(!stderr.contains("FAIL"), "{stderr}");
    // movzbl (%r15,%rax,1),%esi at 0x202f3, %rax = 0
    assert!(
        stderr.starts_with(
            "untrusted segfault: a memory access to the unmapped first 64 KiB (a null pointer) at 0x000202f3\n"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("wasm trap: wasm `unreachable` instruction executed"),
        "{stderr}"
    );
}

/// IRT-era command-line nexes convert and run through the runtime's `nacl_irt_query`:
/// fftw-wisdom answers `-V` and `-h` (exit 0) and exits 1 on an unknown option; glibc's
/// static `sln` prints its usage to stdout and exits 1 (SOURCES.md).
#[test]
fn irt_command_line_nexes_convert_and_run() {
    let (Some(fftw), Some(sln)) = (
        nexe("fftw-wisdom-x86_64.nexe"),
        nexe("glibc-sln-x86_64.nexe"),
    ) else {
        return;
    };
    verify_says_it_translates(&fftw);
    let o = pexe2wasm(&["run", &fftw, "--", "-V"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with(
            "fftw-wisdom tool for FFTW version 3.3.2.\n\nCopyright (c) 2003, 2007-11 Matteo Frigo\n"
        ),
        "{}",
        text(&o.stdout)
    );
    let o = pexe2wasm(&["run", &fftw, "--", "-h"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).starts_with("Usage: ") && text(&o.stdout).contains(" [options] [sizes]\n"),
        "{}",
        text(&o.stdout)
    );
    let o = pexe2wasm(&["run", &fftw, "--", "-n", "-Z"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));

    let d = tempdir("sln");
    let out = convert_validated(&sln, &d);
    let o = pexe2wasm(&["run", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let stdout = text(&o.stdout);
    assert!(
        stdout.starts_with("Usage: ") && stdout.ends_with(" src dest|file\n"),
        "{stdout}"
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// Files for nexes, as for pexes: the directories `--dir` grants are the nexe's (its IRT
/// `open`, `stat`, `read`, `write`, `seek` over WASI's preopens). fftw-wisdom writes its
/// wisdom through `-o` into one (relative and absolute guest paths), reads it back with
/// `-w` (a file that is not wisdom is an error it names), and names a missing file; without
/// `--dir` a file is `EACCES`, as in NaCl's sandbox without file access. glibc's `sln src
/// dest` reaches its error path (its `lstat` is not NaCl's) and faults there as under
/// NaCl: its TLS template and its linker disagree on the block's size, so the locale
/// pointer it reads is 0 (docs/NEXE.md); nothing is made.
#[test]
fn irt_nexes_reach_files_in_dir_preopens() {
    let (Some(fftw), Some(sln)) = (
        nexe("fftw-wisdom-x86_64.nexe"),
        nexe("glibc-sln-x86_64.nexe"),
    ) else {
        return;
    };
    let d = tempdir("files");
    let wasm = convert_validated(&fftw, &d);
    let wasm = wasm.to_str().unwrap();
    let data = d.join("data");
    std::fs::create_dir_all(data.join("sub")).unwrap();
    let grant = format!("{}::/data", data.display());
    // to stdout: the wisdom to expect in the files
    let o = pexe2wasm(&["run", wasm, "--", "-n", "-e", "c16"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let wisdom = text(&o.stdout);
    assert!(wisdom.starts_with("(fftw-3.3.2 fftw_wisdom"), "{wisdom}");
    let o = pexe2wasm(&[
        "run",
        wasm,
        "--dir",
        &grant,
        "--",
        "-n",
        "-e",
        "-o",
        "/data/sub/../w",
        "c16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(data.join("w")).unwrap(), wisdom);
    // read back (and written again, relative to the current directory "/")
    let o = pexe2wasm(&[
        "run",
        wasm,
        "--dir",
        &grant,
        "--",
        "-n",
        "-e",
        "-w",
        "/data/w",
        "-o",
        "data/sub/again",
        "c16",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        std::fs::read_to_string(data.join("sub/again")).unwrap(),
        wisdom
    );
    std::fs::write(data.join("bad"), "not wisdom\n").unwrap();
    let o = pexe2wasm(&[
        "run",
        wasm,
        "--dir",
        &grant,
        "--",
        "-n",
        "-w",
        "/data/bad",
        "c16",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("error reading wisdom from \"/data/bad\""),
        "{}",
        text(&o.stderr)
    );
    let o = pexe2wasm(&[
        "run", wasm, "--dir", &grant, "--", "-n", "-w", "/data/no", "c16",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("error opening \"/data/no\": No such file or directory"),
        "{}",
        text(&o.stderr)
    );
    let o = pexe2wasm(&["run", wasm, "--", "-n", "-e", "-o", "/data/x", "c16"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("error creating \"/data/x\"Permission denied"),
        "{}",
        text(&o.stderr)
    );
    assert!(!data.join("x").exists());

    let sln_wasm = d.join("sln.wasm");
    std::fs::rename(convert_validated(&sln, &d), &sln_wasm).unwrap();
    std::fs::write(data.join("src"), "x").unwrap();
    let o = pexe2wasm(&[
        "run",
        sln_wasm.to_str().unwrap(),
        "--dir",
        &grant,
        "--",
        "/data/src",
        "/data/dest",
    ]);
    assert_eq!(o.status.code(), Some(134), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).starts_with(
            "untrusted segfault: a memory access to the unmapped first 64 KiB \
             (a null pointer) at 0x0107a536\n"
        ),
        "{}",
        text(&o.stderr)
    );
    assert!(o.stdout.is_empty());
    assert!(!data.join("dest").exists());
    let _ = std::fs::remove_dir_all(&d);
}

/// `verify` says a nexe is translated with the runtime.
fn verify_says_it_translates(nexe: &str) {
    verify_says(
        nexe,
        "translated with the runtime into a WASI command (`pexe2wasm convert`, `run`)",
    );
}

/// `verify` ends its line with `words`.
fn verify_says(nexe: &str, words: &str) {
    let o = pexe2wasm(&["verify", nexe]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).trim_end().ends_with(words),
        "{}",
        text(&o.stdout)
    );
}

/// `convert NEXE -o DIR/out.wasm`, checked valid; the output's path.
fn convert_validated(nexe: &str, dir: &std::path::Path) -> PathBuf {
    let out = dir.join("out.wasm");
    let o = pexe2wasm(&["convert", nexe, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let wasm = std::fs::read(&out).unwrap();
    wasmparser::Validator::new()
        .validate_all(&wasm)
        .expect("the converted nexe validates");
    out
}

/// A static newlib Pepper nexe (nacl-gcc, 2014) runs as a plugin on the command-line
/// Pepper host: it is created and answers both string messages its page sends
/// (SOURCES.md: `encrypt|<xml>` → `encrypted|…`, `decrypt|<data>` → `decrypted|…`); what
/// it encrypted decrypts back to the text. The converted module validates.
#[test]
fn ckauth_pepper_nexe_answers_its_messages() {
    let Some(ck) = nexe(CKAUTH) else { return };
    let run = |file: &str, input: &str| {
        pexe2wasm_testkit::output_with_stdin(
            std::process::Command::new(env!("CARGO_BIN_EXE_pexe2wasm")).args([
                "run",
                file,
                "--timeout",
                "60",
            ]),
            input.as_bytes(),
        )
    };
    let o = run(&ck, "encrypt|<x>10.0.0.7</x><ip>127.0.0.1</ip>\n");
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let sealed = out
        .strip_prefix("encrypted|")
        .unwrap_or_else(|| panic!("{out:?} / {}", text(&o.stderr)))
        .trim_end()
        .to_string();
    assert!(!sealed.is_empty() && !sealed.contains("10.0.0.7"), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");

    let d = tempdir("ckauth");
    verify_says(&ck, PEPPER_CONVERTS);
    let wasm = convert_validated(&ck, &d);
    let o = run(wasm.to_str().unwrap(), &format!("decrypt|{sealed}\n"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "decrypted|<x>10.0.0.7</x><ip>127.0.0.1</ip>\n",
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// A PNaCl-translated Pepper nexe (Subzero's `push $next; jmp *%r11` calls) runs as a
/// plugin: nassh's ssh client is created, asks its page for the standard streams,
/// refuses a `startSession` whose argument is not a dictionary, and runs a session with
/// ssh's argv `-V`, which needs a thread of its own (ssh's main runs there): the version
/// on stderr, then `exit [0]`, as its page protocol says (SOURCES.md). Translating and
/// compiling its 35,000 functions takes minutes here. Its exit status is not checked: the
/// run ends in a trap after `DidDestroy`, in the app's own exit hook (docs/NEXE.md).
#[test]
fn nassh_pepper_nexe_refuses_a_bad_session_and_answers_version_on_its_thread() {
    let Some(ssh) = nexe(SSH) else { return };
    let o = pexe2wasm_testkit::output_with_stdin(
        std::process::Command::new(env!("CARGO_BIN_EXE_pexe2wasm")).args([
            "run",
            &ssh,
            "--messages",
            "json",
            "--timeout",
            "30",
        ]),
        concat!(
            r#"{"name":"onOpenFile","arguments":[0,true,true]}"#,
            "\n",
            r#"{"name":"onOpenFile","arguments":[1,true,true]}"#,
            "\n",
            r#"{"name":"onOpenFile","arguments":[2,true,true]}"#,
            "\n",
            r#"{"name":"startSession","arguments":[5]}"#,
            "\n",
            r#"{"name":"startSession","arguments":[{"terminalWidth":80,"terminalHeight":24,"#,
            r#""useJsSocket":false,"environment":{},"writeWindow":8192,"arguments":["-V"]}]}"#,
            "\n",
        )
        .as_bytes(),
    );
    let lines: Vec<serde_json::Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{l}: {e}")))
        .collect();
    let err = text(&o.stderr);
    for (k, (fd, path)) in [(0, "/dev/stdin"), (1, "/dev/stdout"), (2, "/dev/stderr")]
        .into_iter()
        .enumerate()
    {
        let m = lines.get(k).unwrap_or_else(|| panic!("{lines:?}\n{err}"));
        assert_eq!(m["name"], "openFile", "{lines:?}");
        assert_eq!(m["arguments"][0], fd, "{lines:?}");
        assert_eq!(m["arguments"][1], path, "{lines:?}");
    }
    assert!(
        lines.iter().any(|m| m["name"] == "printLog"
            && m["arguments"][0] == "startSession: args[0] must be a dictionary of settings\n"),
        "{lines:?}\n{err}"
    );
    // the session's thread: what ssh writes to fd 2, then its exit
    use base64::Engine;
    let mut stderr = Vec::new();
    for m in lines.iter().filter(|m| m["name"] == "write") {
        assert_eq!(m["arguments"][0], 2, "{lines:?}");
        let b64 = m["arguments"][1]["$arraybuffer"]
            .as_str()
            .unwrap_or_default();
        stderr.extend(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap_or_else(|e| panic!("{m}: {e}")),
        );
    }
    assert_eq!(
        String::from_utf8_lossy(&stderr),
        "OpenSSH_8.8p1, OpenSSL 1.0.2k  26 Jan 2017\r\n",
        "{lines:?}\n{err}"
    );
    let exit = lines.iter().position(|m| m["name"] == "exit");
    let last_write = lines.iter().rposition(|m| m["name"] == "write");
    assert!(exit > last_write, "{lines:?}\n{err}");
    assert_eq!(
        lines[exit.unwrap()]["arguments"],
        serde_json::json!([0]),
        "{lines:?}\n{err}"
    );
}

/// PNaCl's compiler, Subzero (`pnacl-sz-x86_64.nexe`), runs on the runtime's translator
/// compile interface: `pexe2wasm run` feeds it a corpus pexe on stdin and it writes an
/// x86-64 ELF object to stdout with one function symbol in `.text` per function the pexe
/// defines (our decoder's count and names), a pexe over its 256 KiB input queue too (its
/// compile thread a real thread). The converted module validates.
#[test]
fn subzero_translates_a_pexe_into_an_object_with_its_functions() {
    use object::{Object, ObjectSection, ObjectSymbol};
    let (Some(sz), Some(pexe)) = (
        nexe(SUBZERO),
        pexe2wasm_testkit::corpus::real_pexe("binji-puts.pexe"),
    ) else {
        return;
    };
    let d = tempdir("subzero");
    let wasm = convert_validated(&sz, &d);
    let input = d.join("in.pexe");
    std::fs::write(&input, &pexe).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .args(["run", wasm.to_str().unwrap()])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, text(&o.stderr));
    let obj = object::File::parse(&o.stdout[..]).expect("an ELF object on stdout");
    assert_eq!(obj.kind(), object::ObjectKind::Relocatable);
    assert_eq!(obj.architecture(), object::Architecture::X86_64);
    let text_section = obj.section_by_name(".text").expect("a .text section");
    assert!(text_section.size() > 0);
    let mut got: Vec<String> = obj
        .symbols()
        .filter(|s| s.section_index() == Some(text_section.index()))
        .map(|s| s.name().unwrap().to_string())
        .collect();
    got.sort();
    let module = pexe2wasm::decode::decode(&pexe).unwrap();
    let mut want: Vec<String> = module
        .functions
        .iter()
        .filter(|f| !f.is_proto)
        .map(|f| f.name.clone().expect("binji-puts names its functions"))
        .collect();
    want.sort();
    assert_eq!(want.len(), 32, "binji-puts defines 32 functions");
    assert_eq!(got, want);
    // A pexe over Subzero's 256 KiB input queue streams through: its compile thread is
    // a real thread, draining the queue while the main thread feeds it.
    let Some(big) = pexe2wasm_testkit::corpus::real_pexe("webpenc.pexe") else {
        return;
    };
    assert!(big.len() > 256 << 10);
    std::fs::write(&input, &big).unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
        .args(["run", wasm.to_str().unwrap()])
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, text(&o.stderr));
    let obj = object::File::parse(&o.stdout[..]).expect("an ELF object on stdout");
    let text_section = obj.section_by_name(".text").expect("a .text section");
    let got = obj
        .symbols()
        .filter(|s| s.section_index() == Some(text_section.index()))
        .count();
    let module = pexe2wasm::decode::decode(&big).unwrap();
    let want = module.functions.iter().filter(|f| !f.is_proto).count();
    assert_eq!(want, 301, "webpenc defines 301 functions");
    assert_eq!(got, want);
    let _ = std::fs::remove_dir_all(&d);
}

/// The corpus pexes the differential test chains through Subzero and the linker: the
/// command-line programs with expected output (binji/pnacl.c's tests), with their
/// arguments.
const LINKED: &[(&str, &[&str])] = &[
    ("binji-puts.pexe", &[]),
    ("binji-printf.pexe", &[]),
    ("binji-nbody.pexe", &["1000"]),
    ("binji-fannkuchredux.pexe", &["7"]),
    ("binji-spectralnorm.pexe", &["100"]),
    ("binji-fasta.pexe", &["1000"]),
    ("binji-mandelbrot.pexe", &["200"]),
    ("binji-binarytrees.pexe", &["10"]),
];

/// A run of a compiled program with `stdin`, arguments and read-only directories,
/// capturing its output.
fn run_program(
    p: &pexe2wasm_runner::Program,
    args: &[&str],
    stdin: Vec<u8>,
    dirs: Vec<(PathBuf, String)>,
) -> pexe2wasm_runner::RunOutcome {
    use pexe2wasm_runner::{Input, Output, RunOptions};
    let opts = RunOptions {
        args: args.iter().map(|a| a.to_string()).collect(),
        readonly_dirs: dirs,
        stdin: Input::Bytes(stdin),
        stdout: Output::Capture,
        stderr: Output::Capture,
        ..Default::default()
    };
    p.run(&opts).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Subzero and the linker, converted (validated) and compiled once, in parallel.
fn translator_programs(d: &std::path::Path) -> Option<[pexe2wasm_runner::Program; 2]> {
    let (sz, ld) = (nexe(SUBZERO)?, nexe(LINKER)?);
    let (sd, ld_dir) = (d.join("sz"), d.join("ld"));
    std::fs::create_dir_all(&sd).unwrap();
    std::fs::create_dir_all(&ld_dir).unwrap();
    let compile = |nexe: &str, dir: &std::path::Path| {
        let wasm = std::fs::read(convert_validated(nexe, dir)).unwrap();
        pexe2wasm_runner::Program::new(&wasm, false).unwrap()
    };
    Some(std::thread::scope(|s| {
        let a = s.spawn(|| compile(&sz, &sd));
        let b = compile(&ld, &ld_dir);
        [a.join().unwrap(), b]
    }))
}

/// The linker's resources in the corpus (Chrome's names).
fn link_resources() -> PathBuf {
    nexe_corpus_dir().join("pnacl-ld-x86_64/pnacl")
}

/// Issue 35's differential test: each CLI pexe of the corpus goes through PNaCl's own
/// toolchain as nexes (Subzero's object, linked by pnacl-ld with Chrome's resources into
/// a static x86-64 nexe), and that nexe, run by our translator, prints what the pexe
/// converted prints, and exits the same. Also: the linker's bad input (an object that is
/// not one, a resource folder without its resources) fails with its words, exit 1.
#[test]
fn linked_nexes_print_what_their_pexes_print() {
    let d = tempdir("linked");
    let Some([sz, ld]) = translator_programs(&d) else {
        return;
    };
    let resources = link_resources();
    let link = |obj: &std::path::Path, res: &std::path::Path| {
        run_program(
            &ld,
            &["ld", obj.file_name().unwrap().to_str().unwrap()],
            Vec::new(),
            vec![
                (res.to_path_buf(), "/resources".into()),
                (obj.parent().unwrap().to_path_buf(), "/object0".into()),
            ],
        )
    };
    let mut linked = 0;
    for (name, args) in LINKED {
        let Some(pexe) = pexe2wasm_testkit::corpus::real_pexe(name) else {
            continue;
        };
        let o = run_program(&sz, &["sz"], pexe.clone(), Vec::new());
        assert_eq!(o.exit_code, 0, "{name}: {}", text(&o.stderr));
        let obj = d.join(name.replace(".pexe", ".o"));
        std::fs::write(&obj, &o.stdout).unwrap();
        let o = link(&obj, &resources);
        assert_eq!(o.exit_code, 0, "{name}: {}", text(&o.stderr));
        let nexe = d.join(name.replace(".pexe", ".nexe"));
        std::fs::write(&nexe, &o.stdout).unwrap();
        let info = pexe2wasm(&["info", nexe.to_str().unwrap()]);
        assert!(
            text(&info.stdout).contains("kind:           command-line program"),
            "{name}: {}",
            text(&info.stdout)
        );
        // both run as `prog` from folders of their own: the same argv[0]
        let run = |dir: &str, data: &[u8]| {
            let dir = d.join(dir);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("prog"), data).unwrap();
            std::process::Command::new(env!("CARGO_BIN_EXE_pexe2wasm"))
                .args(["run", "prog", "--"])
                .args(*args)
                .current_dir(&dir)
                .output()
                .unwrap()
        };
        let from_nexe = run("nexe", &std::fs::read(&nexe).unwrap());
        let from_pexe = run("pexe", &pexe2wasm_testkit::corpus::real_pexe(name).unwrap());
        assert!(!from_pexe.stdout.is_empty(), "{name} prints");
        assert_eq!(
            text(&from_nexe.stdout),
            text(&from_pexe.stdout),
            "{name}: {}",
            text(&from_nexe.stderr)
        );
        assert_eq!(from_nexe.status.code(), from_pexe.status.code(), "{name}");
        linked += 1;
    }
    assert!(linked > 0, "no corpus pexe was linked");
    // not an object: the linker's own words, then ours
    let bad = d.join("bad.o");
    std::fs::write(&bad, b"not an object").unwrap();
    let o = link(&bad, &resources);
    assert_eq!(o.exit_code, 1);
    assert!(
        text(&o.stderr).ends_with("translator: link failed\n"),
        "{}",
        text(&o.stderr)
    );
    // no resources
    let empty = d.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let o = link(&d.join("binji-puts.o"), &empty);
    assert_eq!(o.exit_code, 1, "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("crtbegin.o"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `run`'s words for the linker's command line, said before anything runs: no
/// `--resources`, no objects, a missing object, `--dir`, and `--resources` for another
/// program.
#[test]
fn the_linkers_command_line_is_checked() {
    let (Some(ld), Some(hello)) = (nexe(LINKER), nexe("nacl-hello_world-x86_64.nexe")) else {
        return;
    };
    let res = link_resources();
    let res = res.to_str().unwrap();
    let o = pexe2wasm(&["run", &ld, "a.o"]);
    fails_saying(&o, 1, "PNaCl's linker needs --resources DIR");
    let o = pexe2wasm(&["run", &ld, "--resources", res]);
    fails_saying(&o, 1, "PNaCl's linker needs the objects to link");
    let o = pexe2wasm(&["run", &ld, "--resources", res, "/nonexistent/a.o"]);
    fails_saying(&o, 1, "/nonexistent/a.o: cannot read");
    let o = pexe2wasm(&["run", &ld, "--resources", res, "--dir", "/tmp", "a.o"]);
    fails_saying(&o, 1, "--dir is not for PNaCl's linker");
    let o = pexe2wasm(&["run", &hello, "--resources", res]);
    fails_saying(&o, 1, "--resources is for PNaCl's linker");
    assert!(o.stdout.is_empty());
}
