//! The runner's own `fd_write` for standard output and error (issue 18, item 4).
//!
//! Why: a program whose C library writes stdout one line at a time (the pexes' newlib,
//! docs/PERFORMANCE.md "Standard output") crosses from the module into the host once per
//! line, and wasmtime-wasi's preview 1 `fd_write` costs about half a microsecond a call:
//! the module's `memory` export looked up by name, the call run as a future on wasmtime-wasi's
//! tokio runtime (`in_tokio`: enter the runtime, `block_on`, a `yield_now`, the future moved
//! about), the descriptor table, the resource table, a `Vec` per 4 KiB chunk and boxed
//! futures for each stream readiness check (profile in docs/PERFORMANCE.md, "The fd_write
//! fast path"). For fasta 2500000 (416,671 writes) that was 0.2 s of a 0.47 s run.
//!
//! What: [`crate::IrtHost`] links its own `wasi_snapshot_preview1`.`fd_write`, `fd_close`
//! and `fd_renumber` over wasmtime-wasi's. `fd_write` to fd 1 or 2 takes the fast path
//! when all of these hold, and otherwise calls wasmtime-wasi's implementation (the very
//! function its linker entry calls, [`delegate_fd_write`]), so every other case behaves
//! exactly as before:
//! - the descriptor is still the one the run started with: this store's program has
//!   never passed it to `fd_close` or `fd_renumber` (as source or target; the first such
//!   call turns the fast path off for that descriptor in this store for good, whatever
//!   its result). Every thread has a WASI context of its own, so this is tracked per store
//!   ([`StdSinks`] lives in [`Ctx`]);
//! - the destination is one the runner owns ([`Sink`]): discarded, captured, or the
//!   host's stdout through the coalescing buffer (and stderr after writing that buffer
//!   out). A terminal, or a Pepper app's stdout sent to the host's stderr, stays with
//!   wasmtime-wasi;
//! - the memory is the store's instance's `memory` export, the iovec array and the
//!   result pointer are aligned and in bounds, there are at most [`MAX_IOVS`] iovecs and
//!   the first non-empty buffer is in bounds and at most [`MAX_FAST_BYTES`] long. Anything
//!   else (a bad pointer traps in wasmtime-wasi; an array beyond the host-call fuel gives
//!   ENOMEM) is wasmtime-wasi's to answer.
//!
//! The fast path does what wasmtime-wasi does with the same call: it writes the first
//! non-empty iovec only (wasmtime-wasi's `fd_write` writes one buffer per call and reports
//! it in `nwritten`; C libraries loop on short writes), in 4 KiB pieces to the coalescing
//! buffer and to stderr as wasmtime-wasi's blocking write-and-flush did (the same
//! `write(2)` calls), up to the capture limit and then EIO, with an error of the host's
//! stdout mapped to the same errno, and writes nothing to a stream for an all-empty call.

use bytes::Bytes;
use wasmtime::{AsContextMut, Caller, Extern};
use wasmtime_wasi::p1::types::Errno;
use wasmtime_wasi::p1::wasi_snapshot_preview1 as wasi_p1;
use wasmtime_wasi::p1::wasi_snapshot_preview1::WasiSnapshotPreview1 as _;
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::p2::bindings::filesystem::types::ErrorCode;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::p2::OutputStream;
use wiggle::GuestMemory;

use std::sync::Arc;

use crate::guest::Mem;
use crate::host::Ctx;
use crate::stdio::{Coalescer, StderrAfterStdout};

/// Most iovecs a call may pass and still take the fast path (wasmtime-wasi charges 8 bytes
/// of host-call fuel per iovec; C libraries pass one or two).
pub const MAX_IOVS: u32 = 1024;

/// Longest buffer the fast path writes; longer ones go to wasmtime-wasi, whose per-call
/// cost is small beside copying them.
pub const MAX_FAST_BYTES: u32 = 1 << 20;

/// The piece size of wasmtime-wasi's blocking write-and-flush, kept so that the coalescing
/// buffer and stderr see the same writes as before.
const PIECE: usize = 4096;

/// Where the runner itself puts what the program writes to fd 1 or 2.
#[derive(Clone)]
pub(crate) enum Sink {
    /// Dropped (wasmtime-wasi's sink: every write succeeds).
    Discard,
    /// Captured (the same pipe wasmtime-wasi's descriptor writes to).
    Capture(MemoryOutputPipe),
    /// The host's stdout through the coalescing buffer (`stdio.rs`).
    Coalesced(Arc<Coalescer>),
    /// The host's stderr, after the coalescing buffer is written out (`stdio.rs`).
    StderrAfterStdout(Arc<Coalescer>),
}

impl Sink {
    /// Writes `bytes` (not empty) as wasmtime-wasi's `fd_write` would have to the same
    /// stream; the WASI errno on failure.
    fn write(&mut self, bytes: &[u8]) -> Result<(), Errno> {
        match self {
            Sink::Discard => Ok(()),
            Sink::Capture(pipe) => {
                // As the blocking write-and-flush over the pipe: as much as its capacity
                // still takes, then EIO (the pipe reports itself closed when full).
                let mut rest = bytes;
                while !rest.is_empty() {
                    let permit = pipe.check_write().map_err(|_| Errno::Io)?;
                    let n = rest.len().min(permit).min(PIECE);
                    pipe.write(Bytes::copy_from_slice(&rest[..n]))
                        .map_err(|_| Errno::Io)?;
                    rest = &rest[n..];
                }
                Ok(())
            }
            Sink::Coalesced(c) => {
                for piece in bytes.chunks(PIECE) {
                    c.write(piece).map_err(|e| io_errno(&e))?;
                }
                Ok(())
            }
            Sink::StderrAfterStdout(c) => {
                let stderr = StderrAfterStdout(c.clone());
                for piece in bytes.chunks(PIECE) {
                    stderr.write_all(piece).map_err(|e| io_errno(&e))?;
                }
                Ok(())
            }
        }
    }
}

/// The errno wasmtime-wasi reports for a stream's I/O error.
fn io_errno(e: &std::io::Error) -> Errno {
    Errno::from(ErrorCode::from(e))
}

/// A store's fast destinations for fd 1 and fd 2 (`None`: that descriptor always goes to
/// wasmtime-wasi).
#[derive(Clone, Default)]
pub(crate) struct StdSinks {
    sinks: [Option<Sink>; 2],
}

impl StdSinks {
    pub(crate) fn new(stdout: Option<Sink>, stderr: Option<Sink>) -> StdSinks {
        StdSinks {
            sinks: [stdout, stderr],
        }
    }

    /// `fd` may no longer be the descriptor the run started with (`fd_close`,
    /// `fd_renumber`): its writes go to wasmtime-wasi from now on.
    pub(crate) fn forget(&mut self, fd: i32) {
        if let Some(slot) = slot(fd) {
            self.sinks[slot] = None;
        }
    }

    fn get(&mut self, fd: i32) -> Option<&mut Sink> {
        self.sinks[slot(fd)?].as_mut()
    }

    fn has(&self, fd: i32) -> bool {
        slot(fd).is_some_and(|s| self.sinks[s].is_some())
    }
}

fn slot(fd: i32) -> Option<usize> {
    match fd {
        1 => Some(0),
        2 => Some(1),
        _ => None,
    }
}

/// Reads a little-endian u32 at `addr` (in bounds: checked by the caller).
trait Bytes4 {
    fn len(&self) -> usize;
    fn u32_at(&self, addr: usize) -> u32;
}

impl Bytes4 for [u8] {
    fn len(&self) -> usize {
        <[u8]>::len(self)
    }
    fn u32_at(&self, addr: usize) -> u32 {
        u32::from_le_bytes(self[addr..addr + 4].try_into().unwrap())
    }
}

impl Bytes4 for [std::cell::UnsafeCell<u8>] {
    fn len(&self) -> usize {
        <[std::cell::UnsafeCell<u8>]>::len(self)
    }
    fn u32_at(&self, addr: usize) -> u32 {
        let cells = &self[addr..addr + 4];
        let mut b = [0u8; 4];
        // SAFETY: the four cells are in bounds (sliced above); other threads may write
        // them meanwhile, which makes the bytes read unordered with those writes, as a
        // wasm thread's plain loads are.
        unsafe { std::ptr::copy_nonoverlapping(cells.as_ptr().cast(), b.as_mut_ptr(), 4) };
        u32::from_le_bytes(b)
    }
}

/// What a call `fd_write(_, iovs, iovs_len, nwritten)` writes, if the fast path takes it:
/// the (start, length) of its first non-empty iovec, (0, 0) if all are empty; `None` when
/// wasmtime-wasi must answer (see the module documentation).
fn first_buffer<M: Bytes4 + ?Sized>(
    mem: &M,
    iovs: u32,
    iovs_len: u32,
    nwritten: u32,
) -> Option<(usize, usize)> {
    let size = mem.len() as u64;
    // Alignment: a ciovec and a u32 are 4-aligned; wasmtime-wasi traps otherwise.
    if !iovs.is_multiple_of(4) || !nwritten.is_multiple_of(4) || iovs_len > MAX_IOVS {
        return None;
    }
    if u64::from(iovs) + 8 * u64::from(iovs_len) > size || u64::from(nwritten) + 4 > size {
        return None;
    }
    for i in 0..iovs_len as usize {
        let at = iovs as usize + 8 * i;
        let (buf, len) = (mem.u32_at(at), mem.u32_at(at + 4));
        if len == 0 {
            continue;
        }
        if len > MAX_FAST_BYTES || u64::from(buf) + u64::from(len) > size {
            return None;
        }
        return Some((buf as usize, len as usize));
    }
    Some((0, 0))
}

/// The fast path of `fd_write` (see the module documentation): `None` when wasmtime-wasi
/// must answer the call, which then has had no effect.
fn fast_fd_write(
    caller: &mut Caller<'_, Ctx>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> Option<i32> {
    if !caller.data().stdio_sinks().has(fd) {
        return None;
    }
    let (iovs, iovs_len, nwritten) = (iovs as u32, iovs_len as u32, nwritten as u32);
    // wasmtime-wasi charges the iovec array and the buffer to the call's host-call fuel
    // (ENOMEM beyond it); the fast path's limits stay below the default 128 MiB, and a
    // store given less fuel gets wasmtime-wasi's answer.
    let fuel = caller.as_context_mut().hostcall_fuel() as u64;
    if 8 * u64::from(MAX_IOVS) + u64::from(MAX_FAST_BYTES) > fuel {
        return None;
    }
    let mem = match caller.data().memory_cache() {
        Some(m) => m.clone(),
        None => crate::guest::memory(&mut *caller).ok()?,
    };
    match mem {
        Mem::Plain(m) => {
            let (data, ctx) = m.data_and_store_mut(&mut *caller);
            let (start, len) = first_buffer(&*data, iovs, iovs_len, nwritten)?;
            if len > 0 {
                let sink = ctx.stdio_sinks_mut().get(fd)?;
                if let Err(errno) = sink.write(&data[start..start + len]) {
                    return Some(errno as i32);
                }
            }
            let at = nwritten as usize;
            data[at..at + 4].copy_from_slice(&(len as u32).to_le_bytes());
            Some(0)
        }
        Mem::Shared(m) => {
            let data = m.data();
            let (start, len) = first_buffer(data, iovs, iovs_len, nwritten)?;
            if len > 0 {
                let mut bytes = vec![0u8; len];
                // SAFETY: in bounds (checked by `first_buffer`); a shared memory never
                // shrinks; concurrent writes by other threads are unordered with this
                // copy, as with wasmtime-wasi's own copy of a shared memory.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        data[start..start + len].as_ptr().cast::<u8>(),
                        bytes.as_mut_ptr(),
                        len,
                    )
                };
                let sink = caller.data_mut().stdio_sinks_mut().get(fd)?;
                if let Err(errno) = sink.write(&bytes) {
                    return Some(errno as i32);
                }
            }
            let cells = &data[nwritten as usize..nwritten as usize + 4];
            // SAFETY: in bounds (checked); `UnsafeCell`s may be written through a shared
            // reference.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (len as u32).to_le_bytes().as_ptr(),
                    cells.as_ptr() as *mut u8,
                    4,
                )
            };
            Some(0)
        }
    }
}

/// Calls `f` with this store's WASI context and the caller's memory as wasmtime-wasi's
/// own linker entries do (the `memory` export of the calling instance, the store's
/// host-call fuel).
fn with_wasi<R>(
    caller: &mut Caller<'_, Ctx>,
    f: impl FnOnce(&mut WasiP1Ctx, &mut GuestMemory<'_>) -> wasmtime::Result<R>,
) -> wasmtime::Result<R> {
    let fuel = caller.as_context_mut().hostcall_fuel();
    match caller.get_export("memory") {
        Some(Extern::Memory(m)) => {
            let (mem, ctx) = m.data_and_store_mut(&mut *caller);
            let wasi = ctx.wasi();
            wasi.set_hostcall_fuel(fuel);
            f(wasi, &mut GuestMemory::Unshared(mem))
        }
        Some(Extern::SharedMemory(m)) => {
            let wasi = caller.data_mut().wasi();
            wasi.set_hostcall_fuel(fuel);
            f(wasi, &mut GuestMemory::Shared(m.data()))
        }
        _ => Err(wasmtime::Error::msg("missing required memory export")),
    }
}

/// wasmtime-wasi's `fd_write`, as its linker entry runs it.
pub(crate) fn delegate_fd_write(
    caller: &mut Caller<'_, Ctx>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> wasmtime::Result<i32> {
    with_wasi(caller, |wasi, mem| {
        wasmtime_wasi::runtime::in_tokio(wasi_p1::fd_write(wasi, mem, fd, iovs, iovs_len, nwritten))
    })
}

/// `wasi_snapshot_preview1`.`fd_write`: the fast path, or wasmtime-wasi's.
pub(crate) fn fd_write(
    mut caller: Caller<'_, Ctx>,
    fd: i32,
    iovs: i32,
    iovs_len: i32,
    nwritten: i32,
) -> wasmtime::Result<i32> {
    match fast_fd_write(&mut caller, fd, iovs, iovs_len, nwritten) {
        Some(errno) => Ok(errno),
        None => delegate_fd_write(&mut caller, fd, iovs, iovs_len, nwritten),
    }
}

/// `wasi_snapshot_preview1`.`fd_close`: wasmtime-wasi's, after turning the fast path off
/// for `fd`.
pub(crate) fn fd_close(mut caller: Caller<'_, Ctx>, fd: i32) -> wasmtime::Result<i32> {
    caller.data_mut().stdio_sinks_mut().forget(fd);
    with_wasi(&mut caller, |wasi, mem| {
        wasmtime_wasi::runtime::in_tokio(wasi_p1::fd_close(wasi, mem, fd))
    })
}

/// `wasi_snapshot_preview1`.`fd_renumber`: wasmtime-wasi's, after turning the fast path
/// off for both descriptors.
pub(crate) fn fd_renumber(
    mut caller: Caller<'_, Ctx>,
    from: i32,
    to: i32,
) -> wasmtime::Result<i32> {
    let sinks = caller.data_mut().stdio_sinks_mut();
    sinks.forget(from);
    sinks.forget(to);
    with_wasi(&mut caller, |wasi, mem| {
        wasmtime_wasi::runtime::in_tokio(wasi_p1::fd_renumber(wasi, mem, from, to))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem_with(words: &[(usize, u32)], size: usize) -> Vec<u8> {
        let mut m = vec![0u8; size];
        for &(at, v) in words {
            m[at..at + 4].copy_from_slice(&v.to_le_bytes());
        }
        m
    }

    #[test]
    fn first_non_empty_iovec_is_the_one_written() {
        // iovecs at 16: (100, 0), (200, 5), (300, 7)
        let m = mem_with(
            &[(16, 100), (20, 0), (24, 200), (28, 5), (32, 300), (36, 7)],
            1024,
        );
        assert_eq!(first_buffer(&m[..], 16, 3, 8), Some((200, 5)));
        assert_eq!(first_buffer(&m[..], 16, 1, 8), Some((0, 0)), "all empty");
        assert_eq!(first_buffer(&m[..], 16, 0, 8), Some((0, 0)), "no iovec");
    }

    #[test]
    fn anything_unusual_goes_to_wasmtime_wasi() {
        let m = mem_with(&[(16, 1000), (20, 100)], 1024);
        // The buffer ends past the memory.
        assert_eq!(first_buffer(&m[..], 16, 1, 8), None);
        // Misaligned array or result; result or array out of bounds.
        assert_eq!(first_buffer(&m[..], 18, 1, 8), None);
        assert_eq!(first_buffer(&m[..], 16, 1, 9), None);
        assert_eq!(first_buffer(&m[..], 16, 1, 1024 - 2), None);
        assert_eq!(first_buffer(&m[..], 1020, 1, 8), None);
        assert_eq!(first_buffer(&m[..], 16, u32::MAX, 8), None);
        assert_eq!(first_buffer(&m[..], u32::MAX - 3, 2, 8), None);
        assert_eq!(first_buffer(&m[..], 16, 1, u32::MAX - 3), None);
        // Too long for the fast path, and a length that wraps the address space.
        let big = mem_with(&[(16, 0), (20, MAX_FAST_BYTES + 1)], 4 << 20);
        assert_eq!(first_buffer(&big[..], 16, 1, 8), None);
        let wraps = mem_with(&[(16, u32::MAX), (20, 2)], 1024);
        assert_eq!(first_buffer(&wraps[..], 16, 1, 8), None);
        // A buffer ending exactly at the end of memory is fine.
        let edge = mem_with(&[(16, 1000), (20, 24)], 1024);
        assert_eq!(first_buffer(&edge[..], 16, 1, 8), Some((1000, 24)));
    }

    #[test]
    fn forgotten_descriptors_stay_forgotten() {
        let mut s = StdSinks::new(Some(Sink::Discard), Some(Sink::Discard));
        assert!(s.has(1) && s.has(2) && !s.has(0) && !s.has(3));
        s.forget(7);
        assert!(s.has(1) && s.has(2));
        s.forget(1);
        assert!(!s.has(1) && s.has(2));
    }

    #[test]
    fn capture_stops_at_its_capacity_with_eio() {
        let pipe = MemoryOutputPipe::new(10);
        let mut sink = Sink::Capture(pipe.clone());
        assert_eq!(sink.write(b"0123456").map_err(|e| e as i32), Ok(()));
        assert_eq!(
            sink.write(b"789abc").map_err(|e| e as i32),
            Err(Errno::Io as i32)
        );
        assert_eq!(&pipe.contents()[..], b"0123456789");
        assert_eq!(
            sink.write(b"d").map_err(|e| e as i32),
            Err(Errno::Io as i32)
        );
    }
}
