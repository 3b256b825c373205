//! Shared by the service tests: start the real `pexe2wasm-server` binary on a loopback
//! port, find fixtures and the optional real corpus (through pexe2wasm-testkit).

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running server; killed when dropped (if it has not exited already).
pub struct Server {
    pub child: Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    pub addr: std::net::SocketAddr,
}

impl Server {
    /// Starts the binary with `args` (plus `--listen 127.0.0.1:0`) and waits for the line
    /// that tells its address.
    pub fn start(args: &[&str]) -> Server {
        let mut cmd = Server::command(args);
        cmd.env("PEXE2WASM_LOG", "error").stderr(Stdio::inherit());
        Server::spawn(cmd)
    }

    /// The command [`Server::start`] runs, for a caller that adds to it (environment,
    /// limits, where stderr goes) before [`Server::spawn`].
    pub fn command(args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_pexe2wasm-server"));
        cmd.args(["--listen", "127.0.0.1:0"]).args(args);
        cmd
    }

    /// Spawns `cmd` (from [`Server::command`]) and waits for its address line.
    pub fn spawn(mut cmd: Command) -> Server {
        let mut child = cmd
            .stdout(Stdio::piped())
            .spawn()
            .expect("start pexe2wasm-server");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("read the server's address line");
        let base = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_string();
        let addr = base.trim_start_matches("http://").parse().unwrap();
        Server { child, base, addr }
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends SIGTERM (the graceful-shutdown signal).
    pub fn terminate(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success());
    }

    /// Waits up to `limit` for the process to exit; its exit status.
    pub fn wait_exit(&mut self, limit: Duration) -> Option<std::process::ExitStatus> {
        let deadline = std::time::Instant::now() + limit;
        while std::time::Instant::now() < deadline {
            if let Some(s) = self.child.try_wait().unwrap() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A project fixture (relative to the repository's fixtures/).
pub fn fixture(name: &str) -> Vec<u8> {
    let p = fixture_path(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {}: {e}", p.display()))
}

pub fn fixture_path(name: &str) -> PathBuf {
    pexe2wasm_testkit::repo_path("fixtures").join(name)
}

/// True under CI (`CI=true`), where missing optional inputs are failures.
/// Held by the tests that load the machine (the load test, the browser tests): on two
/// cores, a browser beside the load test starves the server into 503s that say nothing
/// about it.
pub static HEAVY: std::sync::Mutex<()> = std::sync::Mutex::new(());

pub fn heavy() -> std::sync::MutexGuard<'static, ()> {
    HEAVY.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn under_ci() -> bool {
    std::env::var("CI").map(|v| v == "true").unwrap_or(false)
}

pub use pexe2wasm_testkit::corpus::real_pexe;

/// Validates a module the way the converter's own tests do (every feature we may emit).
pub fn validate_wasm(wasm: &[u8]) {
    let mut v = wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all());
    v.validate_all(wasm).expect("the served module validates");
}

/// The import modules and names of a module, in order.
pub fn wasm_imports(wasm: &[u8]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for p in wasmparser::Parser::new(0).parse_all(wasm) {
        if let wasmparser::Payload::ImportSection(r) = p.unwrap() {
            for i in r.into_imports() {
                let i = i.unwrap();
                out.push((i.module.to_string(), i.name.to_string()));
            }
        }
    }
    out
}

pub fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    format!("{:x}", sha2::Sha256::digest(data))
}
