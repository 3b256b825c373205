//! The service's configuration: every knob is a flag and an environment variable.

use clap::Parser;
use std::net::SocketAddr;
use std::time::Duration;

/// pexe2wasm-server: convert and inspect PNaCl pexes over HTTP.
#[derive(Debug, Clone, Parser)]
#[command(name = "pexe2wasm-server", version)]
pub struct Config {
    /// Address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, env = "PEXE2WASM_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: SocketAddr,
    /// Largest accepted request body in bytes, or with a unit like 64MiB (413 above it).
    #[arg(long, env = "PEXE2WASM_MAX_BODY_BYTES", default_value = "67108864", value_parser = parse_bytes)]
    pub max_body_bytes: usize,
    /// Conversions that run at once (threads of the blocking pool); 0 = number of CPUs.
    #[arg(long, env = "PEXE2WASM_POOL_SIZE", default_value_t = 0)]
    pub pool_size: usize,
    /// Conversions that may wait for a free worker; beyond that requests get 503.
    #[arg(long, env = "PEXE2WASM_QUEUE_DEPTH", default_value_t = 64)]
    pub queue_depth: usize,
    /// Time limit of one conversion in milliseconds, once it runs (504 after it).
    #[arg(long, env = "PEXE2WASM_CONVERT_TIMEOUT_MS", default_value_t = 30_000)]
    pub convert_timeout_ms: u64,
    /// Time limit for receiving a whole request body in milliseconds (408 after it), so
    /// drip-fed uploads cannot hold a connection forever.
    #[arg(long, env = "PEXE2WASM_BODY_TIMEOUT_MS", default_value_t = 30_000)]
    pub body_timeout_ms: u64,
    /// Size of the result cache in bytes, or with a unit like 256MiB (0 disables it).
    #[arg(long, env = "PEXE2WASM_CACHE_BYTES", default_value = "268435456", value_parser = parse_bytes)]
    pub cache_bytes: usize,
    /// Request-body bytes all requests together may hold in memory, or with a unit like
    /// 128MiB; a request whose declared length (or a chunked body as it grows) does not
    /// fit is refused with 503 before its body is read. At least --max-body-bytes.
    #[arg(long, env = "PEXE2WASM_MAX_BODY_MEMORY", default_value = "134217728", value_parser = parse_bytes)]
    pub max_body_memory: usize,
    /// Connections open at once. Lowered at start to the descriptor limit
    /// (RLIMIT_NOFILE) minus a reserve of 64. At the cap a new connection takes the
    /// place of the connection idle longest (no request in flight); when every one has a
    /// request in flight, it is answered 503 and closed.
    #[arg(long, env = "PEXE2WASM_MAX_CONNECTIONS", default_value_t = 1024)]
    pub max_connections: usize,
    /// Time limit in milliseconds for a request's head (request line and headers), from
    /// its first byte; the connection is closed after it.
    #[arg(long, env = "PEXE2WASM_HEADER_TIMEOUT_MS", default_value_t = 10_000)]
    pub header_timeout_ms: u64,
    /// A connection on which no byte has moved either way for this many milliseconds is
    /// closed, unless a handler is at work on one of its requests (reading the body and
    /// converting have limits of their own): silent since it opened, between requests, or
    /// with an answer its client stopped reading.
    #[arg(long, env = "PEXE2WASM_IDLE_TIMEOUT_MS", default_value_t = 60_000)]
    pub idle_timeout_ms: u64,
    /// On SIGTERM or ctrl-c: milliseconds that requests in flight get to finish; idle and
    /// half-sent connections are closed at once, and whatever is left when it ends is cut.
    #[arg(long, env = "PEXE2WASM_SHUTDOWN_GRACE_MS", default_value_t = 30_000)]
    pub shutdown_grace_ms: u64,
    /// Log format: `text` or `json`.
    #[arg(long, env = "PEXE2WASM_LOG_FORMAT", default_value = "text")]
    pub log_format: LogFormat,
}

/// A byte count: a plain number or one with a unit (`64MiB`, `1.5GB`), read by `bytesize`.
fn parse_bytes(s: &str) -> Result<usize, String> {
    let n = s.trim().parse::<bytesize::ByteSize>()?.as_u64();
    usize::try_from(n).map_err(|_| format!("{n} bytes do not fit this machine's usize"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

impl Config {
    pub fn workers(&self) -> usize {
        if self.pool_size == 0 {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        } else {
            self.pool_size
        }
    }

    pub fn convert_timeout(&self) -> Duration {
        Duration::from_millis(self.convert_timeout_ms)
    }

    pub fn body_timeout(&self) -> Duration {
        Duration::from_millis(self.body_timeout_ms)
    }

    pub fn header_timeout(&self) -> Duration {
        Duration::from_millis(self.header_timeout_ms)
    }

    pub fn idle_timeout(&self) -> Duration {
        Duration::from_millis(self.idle_timeout_ms)
    }

    pub fn shutdown_grace(&self) -> Duration {
        Duration::from_millis(self.shutdown_grace_ms)
    }

    /// What flags cannot say one by one: the body-memory budget holds at least one body
    /// of the largest size (else such uploads would always get 503), and every limit that
    /// guards a connection is above zero.
    pub fn check(&self) -> Result<(), ConfigError> {
        if self.max_body_memory < self.max_body_bytes {
            return Err(ConfigError::BudgetBelowBody {
                memory: self.max_body_memory,
                body: self.max_body_bytes,
            });
        }
        for (flag, value) in [
            ("--max-connections", self.max_connections as u64),
            ("--header-timeout-ms", self.header_timeout_ms),
            ("--idle-timeout-ms", self.idle_timeout_ms),
            ("--body-timeout-ms", self.body_timeout_ms),
        ] {
            if value == 0 {
                return Err(ConfigError::Zero(flag));
            }
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ConfigError {
    #[error("--max-body-memory ({memory} bytes) must be at least --max-body-bytes ({body} bytes)")]
    BudgetBelowBody { memory: usize, body: usize },
    #[error("{0} must be above 0")]
    Zero(&'static str),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_flags_take_plain_numbers_and_units() {
        let c = Config::try_parse_from(["s", "--max-body-bytes", "4096", "--cache-bytes", "2MiB"])
            .unwrap();
        assert_eq!((c.max_body_bytes, c.cache_bytes), (4096, 2 << 20));
        let d = Config::try_parse_from(["s"]).unwrap();
        assert_eq!((d.max_body_bytes, d.cache_bytes), (64 << 20, 256 << 20));
        assert!(Config::try_parse_from(["s", "--cache-bytes", "lots"]).is_err());
    }

    #[test]
    fn the_defaults_pass_the_check_and_a_budget_below_one_body_does_not() {
        let d = Config::try_parse_from(["s"]).unwrap();
        assert_eq!(d.check(), Ok(()));
        assert_eq!(
            (d.max_body_memory, d.max_connections, d.header_timeout_ms),
            (128 << 20, 1024, 10_000)
        );
        let c = Config::try_parse_from(["s", "--max-body-memory", "1MiB"]).unwrap();
        assert_eq!(
            c.check(),
            Err(ConfigError::BudgetBelowBody {
                memory: 1 << 20,
                body: 64 << 20
            })
        );
        let z = Config::try_parse_from(["s", "--idle-timeout-ms", "0"]).unwrap();
        assert_eq!(z.check(), Err(ConfigError::Zero("--idle-timeout-ms")));
    }
}
