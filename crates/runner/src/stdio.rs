//! Standard output coalesced when the host's stdout is not a terminal.
//!
//! Why: the C library inside the pexes (NaCl's newlib) line-buffers stdout whatever
//! `fstat`/`isatty` report for fd 1: the IRT already tells it a pipe or a file is no
//! character device (`runtime/irt.wat`, `$irt_fstat`/`$irt_isatty`), and still every line
//! reaches the IRT's `write` on its own (docs/PERFORMANCE.md, "Standard output": fasta
//! 250000 makes 41,671 `write(2)` calls into a pipe, one per 61-byte line, against 4,903 for
//! the same C built with clang for wasm32-wasi). A C program built today fully buffers
//! stdout when it is not a terminal; so, when the host's fd 1 is a pipe, a regular file,
//! `/dev/null` or anything else that is not a terminal, the runner buffers the program's
//! writes to fd 1 itself ([`CAPACITY`] bytes) and writes them out:
//! - when the buffer is full;
//! - when the run ends, however it ends (exit in any thread, the last thread's end, a trap,
//!   a host error, the time limit: [`crate::Process`] calls [`Coalescer::close`]), and when
//!   the last [`crate::CapturedStreams`] that owns it is dropped;
//! - before the program reads standard input (or polls it), so a prompt shows before the
//!   program blocks;
//! - before the program writes to standard error, so the two keep their order on a shared
//!   destination (stderr itself stays unbuffered);
//! - at most [`MAX_DELAY`] after the first byte not yet written, so a program speaking a
//!   protocol over pipes (a search thread printing while the main thread waits on stdin)
//!   is still answered promptly.
//!
//! A terminal keeps what it had: no coalescing, every write of the program (one per line)
//! goes out at once. Captured and discarded streams are not concerned.

use std::io::{IsTerminal, Write};
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use wasmtime_wasi::cli::{IsTerminal as WasiIsTerminal, StdinStream, StdoutStream};
use wasmtime_wasi::p2::{InputStream, OutputStream, Pollable, StreamError, StreamResult};

/// Bytes kept before they are written out (what a C library's stdout buffer holds, give or
/// take: glibc 4 KiB, musl 1 KiB; fewer calls than either).
pub const CAPACITY: usize = 8 << 10;

/// Longest time a byte the program wrote stays in the buffer.
pub const MAX_DELAY: Duration = Duration::from_millis(30);

/// Whether output to the host's stdout should be coalesced: it is not a terminal.
pub fn host_stdout_coalesces() -> bool {
    !IsTerminal::is_terminal(&std::io::stdout())
}

/// The buffer in front of the host's stdout, shared by every thread of a run.
pub struct Coalescer {
    state: Mutex<State>,
    /// Wakes the flusher thread: bytes arrived, or the coalescer closed.
    wake: Condvar,
}

#[derive(Default)]
struct State {
    buf: Vec<u8>,
    /// When the oldest byte in `buf` arrived.
    since: Option<Instant>,
    /// After [`Coalescer::close`]: writes go straight through.
    closed: bool,
    /// Whether the flusher thread was started.
    flusher: bool,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Writes `bytes` to the host's fd 1 with as few `write(2)` calls as it takes (one unless
/// the destination takes less), after whatever Rust's own stdout buffer holds.
fn write_host_stdout(bytes: &[u8]) -> std::io::Result<()> {
    // Holding Rust's stdout lock keeps the order with anything else this process prints.
    let mut rust_stdout = std::io::stdout().lock();
    rust_stdout.flush()?;
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: fd 1 stays open for the life of the process (Rust's own stdout uses it);
        // the slice is valid for `rest.len()` bytes.
        let n = unsafe { libc::write(1, rest.as_ptr().cast(), rest.len()) };
        if n < 0 {
            let e = std::io::Error::last_os_error();
            if e.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        rest = &rest[n as usize..];
    }
    Ok(())
}

impl Coalescer {
    /// A new, empty buffer in front of the host's stdout.
    pub fn new() -> Arc<Coalescer> {
        Arc::new(Coalescer {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        })
    }

    /// Takes the program's `bytes` for fd 1.
    pub fn write(self: &Arc<Self>, bytes: &[u8]) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let mut st = lock(&self.state);
        if st.closed || (st.buf.is_empty() && bytes.len() >= CAPACITY) {
            return write_host_stdout(bytes);
        }
        st.buf.extend_from_slice(bytes);
        if st.buf.len() >= CAPACITY {
            return Self::write_out(&mut st);
        }
        if st.since.is_none() {
            st.since = Some(Instant::now());
            if !st.flusher {
                st.flusher = true;
                let me = self.clone();
                let started = std::thread::Builder::new()
                    .name("stdout flusher".into())
                    .spawn(move || me.flusher());
                if started.is_err() {
                    // No thread for the time limit: write through from now on.
                    st.closed = true;
                    return Self::write_out(&mut st);
                }
            } else {
                self.wake.notify_all();
            }
        }
        Ok(())
    }

    /// Writes out what the buffer holds.
    pub fn flush(&self) -> std::io::Result<()> {
        Self::write_out(&mut lock(&self.state))
    }

    /// Writes out what the buffer holds; later writes go straight through, and the flusher
    /// thread ends. Errors are dropped, as a C library's at exit.
    pub fn close(&self) {
        let mut st = lock(&self.state);
        st.closed = true;
        let _ = Self::write_out(&mut st);
        drop(st);
        self.wake.notify_all();
    }

    fn write_out(st: &mut State) -> std::io::Result<()> {
        st.since = None;
        if st.buf.is_empty() {
            return Ok(());
        }
        let r = write_host_stdout(&st.buf);
        // What could not be written is dropped, as after a failed fflush: keeping it would
        // only fail again (a closed pipe) and grow without bound.
        st.buf.clear();
        r
    }

    /// The flusher thread: writes out the buffer [`MAX_DELAY`] after its oldest byte.
    fn flusher(self: Arc<Self>) {
        let mut st = lock(&self.state);
        loop {
            if st.closed {
                return;
            }
            st = match st.since {
                None => self.wake.wait(st).unwrap_or_else(|p| p.into_inner()),
                Some(t) => {
                    let now = Instant::now();
                    let due = t + MAX_DELAY;
                    if now >= due {
                        let _ = Self::write_out(&mut st);
                        st
                    } else {
                        self.wake
                            .wait_timeout(st, due - now)
                            .unwrap_or_else(|p| p.into_inner())
                            .0
                    }
                }
            };
        }
    }
}

fn stream_error(e: std::io::Error) -> StreamError {
    StreamError::LastOperationFailed(e.into())
}

/// The program's stdout through a [`Coalescer`].
#[derive(Clone)]
pub(crate) struct CoalescedStdout(pub(crate) Arc<Coalescer>);

impl WasiIsTerminal for CoalescedStdout {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CoalescedStdout {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl OutputStream for CoalescedStdout {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.0.write(&bytes).map_err(stream_error)
    }
    /// WASI flushes after every write (`fd_write` is write-and-flush): that is the very
    /// call this buffer exists to leave out.
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(1 << 20)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for CoalescedStdout {
    async fn ready(&mut self) {}
}

impl AsyncWrite for CoalescedStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(self.0.write(buf).map(|()| buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The host's stderr, unbuffered, after the coalesced stdout is written out.
#[derive(Clone)]
pub(crate) struct StderrAfterStdout(pub(crate) Arc<Coalescer>);

impl StderrAfterStdout {
    pub(crate) fn write_all(&self, bytes: &[u8]) -> std::io::Result<()> {
        // Neither the flush's errors (stdout's) nor stdout's state are stderr's business.
        let _ = self.0.flush();
        let mut e = std::io::stderr().lock();
        e.write_all(bytes)?;
        e.flush()
    }
}

impl WasiIsTerminal for StderrAfterStdout {
    fn is_terminal(&self) -> bool {
        IsTerminal::is_terminal(&std::io::stderr())
    }
}

impl StdoutStream for StderrAfterStdout {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl OutputStream for StderrAfterStdout {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.write_all(&bytes).map_err(stream_error)
    }
    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }
    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(1 << 20)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for StderrAfterStdout {
    async fn ready(&mut self) {}
}

impl AsyncWrite for StderrAfterStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Poll::Ready(self.write_all(buf).map(|()| buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

/// The host's stdin (wasmtime-wasi's), with the coalesced stdout written out before the
/// program waits for it or reads it.
#[derive(Clone)]
pub(crate) struct StdinAfterStdout(pub(crate) Arc<Coalescer>);

impl WasiIsTerminal for StdinAfterStdout {
    fn is_terminal(&self) -> bool {
        IsTerminal::is_terminal(&std::io::stdin())
    }
}

impl StdinStream for StdinAfterStdout {
    fn p2_stream(&self) -> Box<dyn InputStream> {
        Box::new(FlushingInput {
            stdout: self.0.clone(),
            inner: StdinStream::p2_stream(&tokio::io::stdin()),
        })
    }
    fn async_stream(&self) -> Box<dyn AsyncRead + Send + Sync> {
        Box::new(FlushingAsyncRead {
            stdout: self.0.clone(),
            inner: Pin::from(StdinStream::async_stream(&tokio::io::stdin())),
        })
    }
}

struct FlushingInput {
    stdout: Arc<Coalescer>,
    inner: Box<dyn InputStream>,
}

impl InputStream for FlushingInput {
    fn read(&mut self, size: usize) -> StreamResult<bytes::Bytes> {
        let _ = self.stdout.flush();
        self.inner.read(size)
    }
    fn skip(&mut self, nelem: usize) -> StreamResult<usize> {
        let _ = self.stdout.flush();
        self.inner.skip(nelem)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for FlushingInput {
    async fn ready(&mut self) {
        let _ = self.stdout.flush();
        self.inner.ready().await
    }
}

struct FlushingAsyncRead {
    stdout: Arc<Coalescer>,
    inner: Pin<Box<dyn AsyncRead + Send + Sync>>,
}

impl AsyncRead for FlushingAsyncRead {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let _ = self.stdout.flush();
        self.inner.as_mut().poll_read(cx, buf)
    }
}
