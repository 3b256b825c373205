//! The allocator settings of src/malloc.rs take effect (glibc only): after
//! `tune_for_conversion`, blocks of a few MB come from the heap instead of fresh `mmap`s
//! (which every conversion would page-fault in again), blocks above 32 MiB are still
//! mapped, and `PEXE2WASM_MALLOC=system` leaves glibc's defaults alone.
//!
//! One test in its own binary: the settings are process-wide.

#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn thresholds_move_blocks_from_mmap_to_the_heap() {
    use pexe2wasm::malloc::{tune_for_conversion, Tuning, MMAP_THRESHOLD};
    use std::hint::black_box;

    /// How many live blocks glibc holds as separate mappings.
    fn mapped_blocks() -> usize {
        // SAFETY: mallinfo2 only reads malloc's statistics.
        unsafe { libc::mallinfo2() }.hblks
    }
    /// Whether a live block of `n` bytes is a mapping of its own.
    fn is_mapped(n: usize) -> bool {
        let before = mapped_blocks();
        let v = black_box(vec![1u8; n]);
        let mapped = mapped_blocks() > before;
        drop(black_box(v));
        mapped
    }

    // Asked to keep the defaults: a 4 MiB block is above glibc's default threshold
    // (128 KiB, adapting upwards only as mapped blocks are freed), so it is mapped.
    // SAFETY (set_var/remove_var): this binary has a single test and no other threads.
    std::env::set_var("PEXE2WASM_MALLOC", "system");
    assert_eq!(tune_for_conversion(), Tuning::KeptByRequest);
    assert!(
        is_mapped(4 << 20),
        "a 4 MiB block should be mmapped under glibc's defaults"
    );

    std::env::remove_var("PEXE2WASM_MALLOC");
    if std::env::var("GLIBC_TUNABLES").is_ok_and(|t| t.contains("glibc.malloc.")) {
        assert_eq!(tune_for_conversion(), Tuning::KeptByRequest);
        eprintln!("SKIPPED the tuned half: GLIBC_TUNABLES sets malloc parameters");
        return;
    }
    assert_eq!(tune_for_conversion(), Tuning::Tuned);
    for n in [1 << 20, 5 << 20, 16 << 20] {
        assert!(
            !is_mapped(n),
            "a {n}-byte block is still mmapped after tuning"
        );
    }
    assert!(
        is_mapped(MMAP_THRESHOLD as usize + (8 << 20)),
        "blocks above the threshold should still be mapped"
    );
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
#[test]
fn nothing_to_tune_off_glibc() {
    assert_eq!(
        pexe2wasm::malloc::tune_for_conversion(),
        pexe2wasm::malloc::Tuning::NotGlibc
    );
}
