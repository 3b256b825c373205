//! The runtime a converted pexe runs on: the NaCl IRT implemented over WASI preview 1.
//!
//! [`irt_module`] is a small wasm module (written in WAT, `irt.wat`) that the emitter links
//! into every output. It imports its environment from [`ENV`] (the output's memory, table,
//! stack and thread pointers, heap and table bases, and the pexe's `_start`), imports only
//! `wasi_snapshot_preview1` otherwise, and exports the WASI entry [`EXPORT_START`], the IRT
//! query function and the helpers the lowering calls. docs/RUNTIME-ABI.md describes what
//! each part does.

mod variant;

/// The WAT source of the runtime module.
pub const IRT_WAT: &str = include_str!("irt.wat");

/// Import module of everything the runtime takes from the converted module.
pub const ENV: &str = "env";
/// Import module of the host interface.
pub const WASI: &str = "wasi_snapshot_preview1";

/// `env` import: the linear memory (memory 0 of the output).
pub const ENV_MEMORY: &str = "memory";
/// `env` import: the funcref table (table 0 of the output).
pub const ENV_TABLE: &str = "__indirect_function_table";
/// `env` import: the stack pointer, a mutable i32 global.
pub const ENV_STACK_POINTER: &str = "__stack_pointer";
/// `env` import: the thread pointer, a mutable i32 global (`tls_init` sets it).
pub const ENV_THREAD_POINTER: &str = "__thread_pointer";
/// `env` import: where the heap starts, an immutable i32 global. The runtime keeps its
/// state in the 64 KiB page at `align_up(__heap_base, 64 KiB)` and hands out the pages after
/// it from `mmap`.
pub const ENV_HEAP_BASE: &str = "__heap_base";
/// `env` import: the first table slot of the runtime's element segment, an immutable i32
/// global. The table must have at least `__table_base + TABLE_SLOTS` entries.
pub const ENV_TABLE_BASE: &str = "__table_base";
/// `env` import: the pexe's `_start`, `(func (param i32))`, called with the startup block.
pub const ENV_PEXE_START: &str = "pexe_start";

/// Export: the WASI command entry.
pub const EXPORT_START: &str = "_start";
/// Export: the IRT query function (also table slot `__table_base + 0`).
pub const EXPORT_IRT_QUERY: &str = "__nacl_irt_query";
/// Export: writes out what the runtime's standard output buffer holds (`(func)`). The
/// runtime buffers fd 1 when it is not a terminal and writes the buffer out on every way
/// the program ends but a trap; a host may call this after a trap so that nothing the
/// program wrote is lost (`pexe2wasm run` does). docs/RUNTIME-ABI.md, "Standard output".
pub const EXPORT_FLUSH_STDOUT: &str = "__pexe2wasm_flush_stdout";
/// Bytes of fd 1's buffer in the runtime (wasi-libc's `BUFSIZ`, so a trap loses no more
/// than a wasi-libc program's stdout buffer).
pub const STDOUT_BUFFER_BYTES: u32 = 1024;
/// Export: C `fmod` for `frem double`.
pub const EXPORT_FMOD: &str = "__pnacl_fmod";
/// Export: C `fmodf` for `frem float`.
pub const EXPORT_FMODF: &str = "__pnacl_fmodf";

/// Number of table entries the runtime's element segment fills from `__table_base`.
pub const TABLE_SLOTS: u32 = 51;
/// The same for the Pepper runtime (ppapi_start, ppapi_register_thread_creator,
/// PPB_GetInterface and the host-thread entry follow).
pub const PEPPER_TABLE_SLOTS: u32 = 55;

/// Import module of the Pepper runtime's host interface (docs/PEPPER-ABI.md).
pub const PEPPER_HOST: &str = "pexe2wasm_ppapi";
/// Offset from the runtime's state page of the Pepper interface directory
/// (`emit/pepper.rs` writes it; `PPB_GetInterface` reads it).
pub const PEPPER_DIRECTORY_OFFSET: u32 = 65536;
/// Exports of the Pepper runtime that the output exports too: the PPP entry points and
/// the page allocator for the host's array buffers (`pexe2wasm_ppapi::MODULE_EXPORTS`, the
/// list the nexe translator's Pepper modules export as well).
pub const PEPPER_EXPORTS: &[&str] = pexe2wasm_ppapi::MODULE_EXPORTS;

/// Size of the runtime's state page at `align_up(__heap_base, 64 KiB)`.
pub const STATE_BYTES: u32 = 65536;

/// The interfaces `__nacl_irt_query` answers, with their table sizes in bytes.
pub const INTERFACES: &[(&str, u32)] = &[
    ("nacl-irt-basic-0.1", 24),
    ("nacl-irt-fdio-0.1", 32),
    ("nacl-irt-dev-fdio-0.1", 32),
    ("nacl-irt-dev-fdio-0.2", 52),
    ("nacl-irt-dev-fdio-0.3", 56),
    ("nacl-irt-filename-0.1", 8),
    ("nacl-irt-dev-filename-0.2", 28),
    ("nacl-irt-dev-filename-0.3", 64),
    ("nacl-irt-memory-0.3", 12),
    ("nacl-irt-tls-0.1", 8),
    ("nacl-irt-clock_get-0.1", 8),
    ("nacl-irt-random-0.1", 4),
    ("nacl-irt-dev-getpid-0.1", 4),
    ("nacl-irt-thread-0.1", 12),
    ("nacl-irt-futex-0.1", 8),
];

/// Import module of the threaded runtime's thread spawn (wasi-threads).
pub const WASI_THREADS: &str = "wasi";
/// wasi-threads import: `thread-spawn(start_arg: i32) -> i32` (a tid > 0, or < 0 on error).
pub const THREAD_SPAWN: &str = "thread-spawn";
/// Import module of what the threaded runtime needs from the host beyond WASI.
pub const HOST: &str = "pexe2wasm";
/// Host import of the threaded runtime: `thread_exit()`, ends the calling thread (it does
/// not return). `pexe2wasm run` provides it.
pub const HOST_THREAD_EXIT: &str = "thread_exit";
/// Host import of the threaded runtime: `cpu_count() -> i32`, the processors the host
/// offers, for `sysconf(_SC_NPROCESSORS_ONLN)` (apps size their thread pools from it, and
/// NaCl answered with the machine's count). The unthreaded runtime answers 1 and imports
/// nothing beyond WASI.
pub const HOST_CPU_COUNT: &str = "cpu_count";
/// Export of the threaded runtime: the wasi-threads entry `wasi_thread_start(tid, arg)`.
pub const EXPORT_THREAD_START: &str = "wasi_thread_start";

/// The runtime source for one variant: as written, [`IRT_WAT`] is the unthreaded runtime;
/// the threaded one drops the lines marked `;;@unthreaded` and the blocks between
/// `;;@unthreaded{` and `;;@unthreaded}`, uncomments lines starting `;;@threads ` and opens
/// the block comments `(;@threads` … `@threads;)`.
pub fn irt_source(threads: bool) -> String {
    if threads {
        variant::threaded(IRT_WAT)
    } else {
        IRT_WAT.to_string()
    }
}

/// The Pepper runtime's source: the threaded runtime with lines marked `;;@unpepper`
/// dropped, lines starting `;;@pepper ` uncommented and the block comments `(;@pepper` …
/// `@pepper;)` opened.
pub fn irt_pepper_source() -> String {
    variant::pepper(IRT_WAT)
}

/// The Pepper runtime's binary ([`irt_pepper_source`], compiled by build.rs): the threaded
/// runtime plus `nacl-irt-ppapihook-0.1`, `PPB_GetInterface` and the PPP entry points
/// (docs/PEPPER-ABI.md).
pub fn irt_pepper_module() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/irt_pepper.wasm"))
}

/// The runtime module's binary: [`IRT_WAT`] compiled by build.rs when the crate is built
/// (compiling it at run time took about 13M instructions, a few milliseconds of every
/// `pexe2wasm` invocation; a test checks the two agree).
pub fn irt_module() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/irt.wasm"))
}

/// The threaded runtime's binary (`irt_source(true)`, compiled by build.rs): it imports a
/// shared memory, `wasi`.`thread-spawn` and `pexe2wasm`.`thread_exit`, and exports
/// `wasi_thread_start` (docs/decisions/0006-threads.md).
pub fn irt_threads_module() -> &'static [u8] {
    include_bytes!(concat!(env!("OUT_DIR"), "/irt_threads.wasm"))
}

/// NaCl errno for a WASI preview 1 errno, as the runtime maps it (unknown values give EIO).
/// The same table is in `irt.wat`; tests check that the two agree.
pub fn nacl_errno(wasi_errno: u16) -> i32 {
    const MAP: [u8; 77] = [
        0, 7, 13, 98, 99, 97, 11, 114, 9, 74, 16, 125, 10, 103, 111, 104, 35, 89, 33, 122, 17, 14,
        27, 113, 43, 84, 115, 4, 22, 5, 106, 21, 40, 24, 31, 90, 72, 36, 100, 102, 101, 23, 105,
        19, 2, 8, 37, 67, 12, 42, 92, 28, 38, 107, 20, 39, 131, 88, 95, 25, 6, 75, 130, 1, 32, 71,
        93, 91, 34, 30, 29, 3, 116, 110, 26, 18, 13,
    ];
    MAP.get(usize::from(wasi_errno))
        .map(|&e| i32::from(e))
        .unwrap_or(5)
}
