//! Allocator settings for processes that convert (the CLI, the server, the benchmarks).
//!
//! A conversion allocates and frees tens of MB in a few tens of milliseconds: the IR of every
//! function, per-function buffers, the output. With glibc's defaults, blocks above the mmap
//! threshold (128 KiB at first) are fresh `mmap`s and the heap top is trimmed back to the
//! kernel when more than 128 KiB is free, so every conversion page-faults its memory in again:
//! ~3,000 faults and ~10 ms of kernel time per conversion of supernet-iguana.pexe, a tenth of
//! the conversion, and the faults of two threads contend in the kernel. Raising both
//! thresholds keeps freed memory in the process for the next allocation (see
//! docs/decisions/0010-conversion-speed.md). It changes how much memory stays
//! mapped after a conversion, not the peak: the peak heap is the same, and the peak resident
//! set grows by the pages kept instead of returned (a few MB; docs/PERFORMANCE.md).
//!
//! The settings are process-wide, so the library never applies them by itself: binaries call
//! [`tune_for_conversion`] once at startup. `PEXE2WASM_MALLOC=system` keeps glibc's defaults
//! (and so does any `GLIBC_TUNABLES` malloc setting, which the user chose).

/// Blocks at least this big are still `mmap`ed (and returned at once when freed): 32 MiB,
/// glibc's own upper bound for its adaptive threshold.
pub const MMAP_THRESHOLD: i32 = 32 << 20;
/// Free memory at the top of a heap is returned to the kernel only above this.
pub const TRIM_THRESHOLD: i32 = 64 << 20;

/// What [`tune_for_conversion`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tuning {
    /// The thresholds above are set.
    Tuned,
    /// Left as they were: asked by `PEXE2WASM_MALLOC=system` or `GLIBC_TUNABLES`.
    KeptByRequest,
    /// Not glibc (musl, macOS, Windows...): nothing to set.
    NotGlibc,
}

/// Sets the thresholds above, unless the environment asks otherwise. Call it once, early in
/// `main`, before other threads allocate.
pub fn tune_for_conversion() -> Tuning {
    if !cfg!(all(target_os = "linux", target_env = "gnu")) {
        return Tuning::NotGlibc;
    }
    let asked_system = std::env::var_os("PEXE2WASM_MALLOC").is_some_and(|v| v == "system");
    let tunables = std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc."));
    if asked_system || tunables {
        return Tuning::KeptByRequest;
    }
    set_thresholds();
    Tuning::Tuned
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn set_thresholds() {
    // SAFETY: mallopt only changes glibc's malloc parameters; it is documented as safe to
    // call at any time and takes plain integers. A zero return means the value was refused,
    // in which case the defaults simply stay.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn set_thresholds() {}

impl std::fmt::Display for Tuning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Tuning::Tuned => "glibc malloc thresholds raised (mmap 32 MiB, trim 64 MiB)",
            Tuning::KeptByRequest => "glibc malloc defaults kept (PEXE2WASM_MALLOC/GLIBC_TUNABLES)",
            Tuning::NotGlibc => "system allocator (not glibc: nothing to tune)",
        })
    }
}
