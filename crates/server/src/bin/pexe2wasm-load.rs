//! pexe2wasm-load: a bounded load client for pexe2wasm-server (loopback benchmarking).
//!
//! Sends `--requests` POSTs of one pexe to `--url` from `--concurrency` clients and prints
//! conversions/s and latency percentiles. Cold figures come from a server started with
//! `--cache-bytes 0`, cached ones from the default server after a warm-up request.
//! Exits non-zero when any request fails other than with an intended 503.

use anyhow::{bail, Context};
use clap::Parser;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(name = "pexe2wasm-load")]
struct Args {
    /// Endpoint to load, e.g. http://127.0.0.1:8080/v1/convert.
    #[arg(long)]
    url: String,
    /// The pexe to send.
    #[arg(long)]
    file: std::path::PathBuf,
    /// Concurrent clients.
    #[arg(long, default_value_t = 64)]
    concurrency: usize,
    /// Requests in total (the run is bounded by this count).
    #[arg(long, default_value_t = 2000)]
    requests: usize,
    /// Requests sent before measuring (e.g. to fill the cache).
    #[arg(long, default_value_t = 1)]
    warmup: usize,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let pexe = bytes::Bytes::from(
        std::fs::read(&args.file)
            .with_context(|| format!("cannot read {}", args.file.display()))?,
    );
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(args.concurrency)
        .timeout(Duration::from_secs(60))
        .build()?;
    for _ in 0..args.warmup {
        let r = send(&client, &args.url, &pexe).await?;
        if r != 200 {
            bail!("warm-up request answered {r}");
        }
    }
    let next = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..args.concurrency.max(1) {
        let (client, url, pexe, next) =
            (client.clone(), args.url.clone(), pexe.clone(), next.clone());
        let total = args.requests;
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::new();
            while next.fetch_add(1, Ordering::Relaxed) < total {
                let t = Instant::now();
                let status = send(&client, &url, &pexe).await;
                out.push((status.map_err(|e| e.to_string()), t.elapsed()));
            }
            out
        }));
    }
    let mut results = Vec::with_capacity(args.requests);
    for t in tasks {
        results.extend(t.await?);
    }
    let elapsed = start.elapsed();
    let mut ok: Vec<Duration> = results
        .iter()
        .filter(|(s, _)| matches!(s, Ok(200)))
        .map(|(_, d)| *d)
        .collect();
    let busy = results.iter().filter(|(s, _)| matches!(s, Ok(503))).count();
    let failed: Vec<_> = results
        .iter()
        .filter(|(s, _)| !matches!(s, Ok(200) | Ok(503)))
        .collect();
    ok.sort_unstable();
    let pct = |p: f64| -> f64 {
        if ok.is_empty() {
            return 0.0;
        }
        let i = ((ok.len() as f64 * p).ceil() as usize).clamp(1, ok.len()) - 1;
        ok[i].as_secs_f64() * 1000.0
    };
    println!(
        "requests {}  ok {}  503 {}  failed {}  in {:.2} s",
        results.len(),
        ok.len(),
        busy,
        failed.len(),
        elapsed.as_secs_f64()
    );
    println!(
        "throughput {:.0} conversions/s  latency p50 {:.2} ms  p90 {:.2} ms  p99 {:.2} ms  max {:.2} ms",
        ok.len() as f64 / elapsed.as_secs_f64(),
        pct(0.50),
        pct(0.90),
        pct(0.99),
        pct(1.0)
    );
    if let Some((s, _)) = failed.first() {
        bail!("{} requests failed; first: {s:?}", failed.len());
    }
    Ok(())
}

async fn send(client: &reqwest::Client, url: &str, pexe: &bytes::Bytes) -> anyhow::Result<u16> {
    let r = client
        .post(url)
        .header("content-type", "application/octet-stream")
        .body(pexe.clone())
        .send()
        .await?;
    let status = r.status().as_u16();
    // Read the whole answer: a conversion is done when its bytes have arrived.
    r.bytes().await?;
    Ok(status)
}
