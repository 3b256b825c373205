//! The runtime a translated program runs on: its start, and NaCl's system calls as the
//! program makes them, over WASI preview 1, so that the module is a plain WASI command
//! (`pexe2wasm run` and stock wasmtime run it).
//!
//! NaCl's service runtime puts 32-byte syscall trampolines at `0x10000 + 32 * N` for
//! syscall N; a pre-IRT program calls them (`mov $0x101a0,%eax; and $-32,%eax; add
//! %r15,%rax; call *%rax` is `write`). Here table 0 starts at 0x10000, so a trampoline
//! address is a table slot like any bundle start: its slot holds an adapter function
//! that pops the return address the call pushed, performs the syscall with the
//! arguments in `%rdi %rsi %rdx %rcx` and leaves the result in `%rax` (a negative errno
//! on failure, as NaCl's). Direct calls and jumps to a trampoline reach the same
//! adapter. Syscalls not implemented answer `-ENOSYS`, as `sel_ldr` does for unknown
//! numbers.
//!
//! Memory: the image at its addresses; the trampoline region's first page serves as the
//! runtime's scratch (nothing of the program lives there); the main stack is
//! [`STACK_SIZE`] above the image; the break (`sysbrk`) starts above the stack and grows
//! the memory. `_start` lays out both startup conventions before calling the entry:
//! `%rdi` points at the startup block of the IRT era (`[fini, envc, argc, argv…, 0,
//! envp…, 0, auxv…]`, 32-bit words) and `%rsp` at the pre-IRT one (`argc` as 64 bits,
//! then the 32-bit argv and envp arrays), which the pre-IRT `_start` pops.

use super::func::{G_X87CW, TY_LIFTED};
use super::LiftError;
use wasm_encoder::{BlockType, Function, InstructionSink, MemArg, ValType};

/// The trampoline region's start: table 0's base when the runtime is linked.
pub const TRAMPOLINES: u32 = 0x10000;
/// Syscall numbers with a trampoline adapter (NaCl has fewer than 128).
pub const SYSCALL_SLOTS: u32 = 128;
/// The main thread's stack.
pub const STACK_SIZE: u32 = 8 << 20;
/// The main thread's scratch memory (iovecs, result words, the argv pointers); every
/// other thread has [`THREAD_SCRATCH`] bytes of its own below its initial stack pointer.
/// The runtime's functions address it through the per-instance global [`G_SCRATCH`].
const SCRATCH: i32 = TRAMPOLINES as i32;
/// `argc` as WASI's `args_sizes_get` gave it (in the main thread's scratch).
pub(crate) const ARGC: i32 = SCRATCH + 16;
/// The size of a thread's scratch (the `S_*` words fit).
pub(crate) const THREAD_SCRATCH: i32 = 0x100;
pub(crate) const ARGV_TMP: i32 = SCRATCH + THREAD_SCRATCH;
/// The runtime's state that all threads share (words in memory, as globals are per
/// instance): the break, the mappings' top, the host heap's top, the handle counter and
/// the lock of the memory functions.
const SHARED: i32 = IRT_DATA - 0x40;
pub(crate) const BRK_AT: u64 = SHARED as u64;
/// The end of the highest anonymous mapping (0: none yet).
pub(crate) const MAPTOP_AT: u64 = SHARED as u64 + 4;
/// Pepper: the top of the host heap (`__ppapi_alloc`).
pub(crate) const HOST_HEAP_AT: u64 = SHARED as u64 + 8;
const HANDLES_AT: u64 = SHARED as u64 + 12;
const LOCK_AT: i32 = SHARED + 16;
/// The argument and environment pointers as WASI gives them (the compiler's flags are
/// read from here later), up to the files' state.
const MAX_ARGS: i32 = (FILES - ARGV_TMP) / 4 - 1;
/// Files: the state of path resolution, in the main thread's scratch region (with
/// threads, the functions on paths hold the runtime's lock). Each path buffer starts with
/// `{relative path, its length, the absolute path's length}` (what [`Helper::Resolve`]
/// found), then the absolute, normalized path.
const FILES: i32 = SCRATCH + 0x4000;
const PATH_A: i32 = FILES;
const PATH_B: i32 = FILES + 0x1000;
const PATH_TEXT: i32 = 16;
const PATH_MAX: i32 = 0x1000 - PATH_TEXT - 1;
/// The current directory (absolute, normalized; initially "/").
const CWD: i32 = FILES + 0x2000;
const CWD_MAX: i32 = 0x800;
/// The preopened directories: `{fd, name, name length, 0}` each, their names (absolute,
/// normalized) after.
const PREOPENS: i32 = FILES + 0x2800;
const MAX_PREOPENS: i32 = 32;
const PREOPEN_NAMES: i32 = FILES + 0x2a00;
/// Words: the current directory's length, the preopens' count, the name bytes used, and
/// "." (a preopen's own directory).
const FILE_WORDS: i32 = SHARED - 0x40;
const CWD_LEN_AT: u64 = FILE_WORDS as u64;
const PREOPENS_AT: u64 = FILE_WORDS as u64 + 4;
const NAMES_USED_AT: u64 = FILE_WORDS as u64 + 8;
const DOT: i32 = FILE_WORDS + 12;
/// The IRT query function's address (`AT_SYSINFO`): the table slot after the syscall
/// trampolines; the IRT functions' slots follow it.
pub const IRT_QUERY: u32 = TRAMPOLINES + 32 * SYSCALL_SLOTS;
/// The runtime's constants (a data segment): the WASI → NaCl errno map, the file modes,
/// the dynamic-code words, the translator's messages, the null-page words, then the
/// query's directory with the interface names and tables.
pub(crate) const IRT_DATA: i32 = SCRATCH + 0x8000;
const ERRNO_MAP: i32 = IRT_DATA;
const MODES_AT: i32 = IRT_DATA + 0x80;
const DYNCODE_WORDS: i32 = IRT_DATA + 0x100;
const NULL_PAGE_WORDS: i32 = IRT_DATA + 0x200;
const DIRECTORY: i32 = IRT_DATA + 0x280;
/// The return address `_start` gives the entry: a trampoline slot (`ENOSYS`) no code
/// returns to.
const START_RETURN: i32 = TRAMPOLINES as i32 + 32 * 126;
/// Scratch words of the IRT functions (offsets in the thread's scratch).
const S_WORD: i32 = 0x20;
const S_TSC: i32 = 0x28;
const S_FILESTAT: i32 = 0x40;
const S_FDSTAT: i32 = 0x80;
const S_SUBSCRIPTION: i32 = 0xa0;
const S_EVENT: i32 = 0xd0;
const S_NEVENTS: i32 = 0xf0;

/// NaCl's syscall numbers (`nacl_syscalls.h`) that the runtime implements.
pub const SYS_OPEN: u32 = 10;
pub const SYS_CLOSE: u32 = 11;
pub const SYS_READ: u32 = 12;
pub const SYS_WRITE: u32 = 13;
pub const SYS_LSEEK: u32 = 14;
pub const SYS_STAT: u32 = 16;
pub const SYS_FSTAT: u32 = 17;
pub const SYS_SYSBRK: u32 = 20;
pub const SYS_EXIT: u32 = 30;
pub const SYS_GETPID: u32 = 31;
pub const SYS_SCHED_YIELD: u32 = 32;
pub const SYS_SYSCONF: u32 = 33;
pub const SYS_TLS_INIT: u32 = 82;
pub const SYS_TLS_GET: u32 = 84;
/// The mutex and condition variable syscalls: a single thread's (pre-IRT programs have no
/// threads here), as the IRT's `nacl-irt-mutex-0.1`/`nacl-irt-cond-0.1` below: a create
/// answers a fresh handle, a lock, unlock or signal succeeds, and a wait nothing could
/// end answers `-EDEADLK` (timed: `-ETIMEDOUT`) instead of hanging, so that newlib's exit
/// path, which takes its locks through these, ends.
pub const SYS_MUTEX_CREATE: u32 = 70;
pub const SYS_MUTEX_LOCK: u32 = 71;
pub const SYS_MUTEX_UNLOCK: u32 = 72;
pub const SYS_MUTEX_TRYLOCK: u32 = 73;
pub const SYS_COND_CREATE: u32 = 74;
pub const SYS_COND_WAIT: u32 = 75;
pub const SYS_COND_SIGNAL: u32 = 76;
pub const SYS_COND_BROADCAST: u32 = 77;
pub const SYS_COND_TIMED_WAIT_ABS: u32 = 79;
const IMPLEMENTED: &[u32] = &[
    SYS_OPEN,
    SYS_STAT,
    SYS_FSTAT,
    SYS_CLOSE,
    SYS_READ,
    SYS_WRITE,
    SYS_LSEEK,
    SYS_SYSBRK,
    SYS_EXIT,
    SYS_GETPID,
    SYS_SCHED_YIELD,
    SYS_SYSCONF,
    SYS_TLS_INIT,
    SYS_TLS_GET,
    SYS_MUTEX_CREATE,
    SYS_MUTEX_LOCK,
    SYS_MUTEX_UNLOCK,
    SYS_MUTEX_TRYLOCK,
    SYS_COND_CREATE,
    SYS_COND_WAIT,
    SYS_COND_SIGNAL,
    SYS_COND_BROADCAST,
    SYS_COND_TIMED_WAIT_ABS,
];

const ENOSYS: i64 = 38;
const EINVAL: i64 = 22;
const AT_SYSINFO: i32 = 32;

/// The WASI functions imported, in import order, with their type indices (see
/// [`types`]).
pub(crate) const IMPORTS: &[(&str, u32)] = &[
    ("fd_write", TY_RW),
    ("fd_read", TY_RW),
    ("fd_close", TY_LIFTED),
    ("proc_exit", TY_EXIT),
    ("args_sizes_get", TY_ARGS),
    ("args_get", TY_ARGS),
    ("fd_seek", TY_SEEK),
    ("fd_filestat_get", TY_ARGS),
    ("fd_fdstat_get", TY_ARGS),
    ("clock_time_get", TY_CLOCK),
    ("random_get", TY_ARGS),
    ("poll_oneoff", TY_RW),
    ("environ_sizes_get", TY_ARGS),
    ("environ_get", TY_ARGS),
    ("fd_prestat_get", TY_ARGS),
    ("fd_prestat_dir_name", TY_I3),
    ("path_open", TY_PATH_OPEN),
    ("path_filestat_get", TY_I5),
    ("path_create_directory", TY_I3),
    ("path_remove_directory", TY_I3),
    ("path_unlink_file", TY_I3),
    ("path_rename", TY_I6),
    ("path_readlink", TY_I6),
    ("path_link", TY_I7),
    ("path_symlink", TY_I5),
];
pub(crate) const I_FD_WRITE: u32 = 0;
pub(crate) const I_FD_READ: u32 = 1;
const I_FD_CLOSE: u32 = 2;
pub(crate) const I_PROC_EXIT: u32 = 3;
const I_ARGS_SIZES_GET: u32 = 4;
const I_ARGS_GET: u32 = 5;
const I_FD_SEEK: u32 = 6;
const I_FD_FILESTAT_GET: u32 = 7;
const I_FD_FDSTAT_GET: u32 = 8;
const I_CLOCK_TIME_GET: u32 = 9;
const I_RANDOM_GET: u32 = 10;
const I_POLL_ONEOFF: u32 = 11;
const I_ENVIRON_SIZES_GET: u32 = 12;
const I_ENVIRON_GET: u32 = 13;
const I_FD_PRESTAT_GET: u32 = 14;
const I_FD_PRESTAT_DIR_NAME: u32 = 15;
pub(crate) const I_PATH_OPEN: u32 = 16;
const I_PATH_FILESTAT_GET: u32 = 17;
const I_PATH_CREATE_DIRECTORY: u32 = 18;
const I_PATH_REMOVE_DIRECTORY: u32 = 19;
const I_PATH_UNLINK_FILE: u32 = 20;
const I_PATH_RENAME: u32 = 21;
const I_PATH_READLINK: u32 = 22;
const I_PATH_LINK: u32 = 23;
const I_PATH_SYMLINK: u32 = 24;

/// Type indices the runtime adds after the translator's four.
pub(crate) const TY_RW: u32 = 4;
pub(crate) const TY_EXIT: u32 = 5;
pub(crate) const TY_ARGS: u32 = 6;
pub(crate) const TY_START: u32 = 7;
pub(crate) const TY_SEEK: u32 = 8;
pub(crate) const TY_CLOCK: u32 = 9;
/// `wasi_thread_start(tid, arg)`.
pub(crate) const TY_THREAD_START: u32 = 10;
const TY_I3: u32 = 11;
const TY_I5: u32 = 12;
const TY_I6: u32 = 13;
const TY_I7: u32 = 14;
const TY_PATH_OPEN: u32 = 15;
/// The first type index after the runtime's (Pepper's follow).
pub(crate) const TY_END: u32 = 16;

/// Globals the runtime adds after the registers, the flag record, the XMM registers and
/// the x87 control word.
/// The thread pointer (`tls_init`/`tls_get`): each thread's own.
pub(crate) const G_TLS: u32 = G_X87CW + 1;
/// Pepper: the app's `PPP_Messaging.HandleMessage` once known (`pepper.rs`).
pub(crate) const G_PPP_HANDLE_MESSAGE: u32 = G_X87CW + 2;
/// The address of this thread's scratch ([`SCRATCH`] in the main thread).
pub(crate) const G_SCRATCH: u32 = G_X87CW + 3;

const G_RAX: u32 = 0;
const G_RCX: u32 = 1;
const G_RDX: u32 = 2;
const G_RSP: u32 = 4;
const G_RSI: u32 = 6;
const G_RDI: u32 = 7;

/// Adds the runtime's function types (after the translator's).
pub(crate) fn types(t: &mut wasm_encoder::TypeSection) {
    t.ty().function([ValType::I32; 4], [ValType::I32]);
    t.ty().function([ValType::I32], []);
    t.ty().function([ValType::I32; 2], [ValType::I32]);
    t.ty().function([], []);
    t.ty().function(
        [ValType::I32, ValType::I64, ValType::I32, ValType::I32],
        [ValType::I32],
    );
    t.ty()
        .function([ValType::I32, ValType::I64, ValType::I32], [ValType::I32]);
    t.ty().function([ValType::I32; 2], []);
    for n in [3, 5, 6, 7] {
        t.ty().function(vec![ValType::I32; n], [ValType::I32]);
    }
    t.ty().function(
        [
            ValType::I32,
            ValType::I32,
            ValType::I32,
            ValType::I32,
            ValType::I32,
            ValType::I64,
            ValType::I64,
            ValType::I32,
            ValType::I32,
        ],
        [ValType::I32],
    );
}

pub(crate) fn m32() -> MemArg {
    MemArg {
        offset: 0,
        align: 2,
        target: wasm_encoder::MemArgTarget::Memory(0),
        ordering: None,
    }
}
pub(crate) fn m64() -> MemArg {
    MemArg { align: 3, ..m32() }
}
fn m8() -> MemArg {
    MemArg { align: 0, ..m32() }
}
/// The shared word at `at` (an address: a memory argument's offset from 0).
pub(crate) fn at(at: u64) -> MemArg {
    MemArg {
        offset: at,
        ..m32()
    }
}

/// Pushes the address `off` bytes into this thread's scratch.
fn sc(s: &mut InstructionSink<'_>, off: i32) {
    s.global_get(G_SCRATCH);
    if off != 0 {
        s.i32_const(off).i32_add();
    }
}

/// Where the runtime's functions go in the module.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Runtime {
    /// Function index of `_start`; the adapters follow it: `ENOSYS` first, then one per
    /// [`IMPLEMENTED`] syscall.
    pub first: u32,
    /// The first address above the image (64 KiB aligned): the stack's bottom.
    pub image_top: u32,
    /// The host heap above the stack (Pepper's `__ppapi_alloc`; 0 for other programs).
    pub heap: u32,
    /// PNaCl's compiler: the compile interface and the object file (`translator.rs`).
    pub translator: bool,
    /// PNaCl's linker: the function index of WASI's `path_open` (the link and
    /// resource-open interfaces, `translator.rs`); `None` for other programs.
    pub path_open: Option<u32>,
    /// Threads: the function index of the `wasi`.`thread-spawn` import
    /// (`pexe2wasm`.`thread_exit` follows it); `None`: one thread, memory not shared.
    pub threads: Option<u32>,
    /// A threaded Pepper plugin: the function index of `pexe2wasm_ppapi`.`wait`, told
    /// around every futex wait (the command-line host's end-of-input rule).
    pub wait: Option<u32>,
}

impl Runtime {
    /// The adapter function of syscall `n`.
    pub fn adapter(&self, n: u32) -> u32 {
        match IMPLEMENTED.iter().position(|&k| k == n) {
            Some(p) => self.first + 2 + p as u32,
            None => self.first + 1,
        }
    }
    /// Number of functions the runtime defines.
    pub fn count() -> u32 {
        Self::function_types().len() as u32
    }
    /// The type of each function the runtime defines, in index order: `_start`, the
    /// adapters, then the helpers.
    pub fn function_types() -> Vec<u32> {
        let adapters = 1 + IMPLEMENTED.len() + irt_functions().len();
        let mut v = vec![TY_START];
        v.extend(std::iter::repeat_n(TY_LIFTED, adapters));
        v.extend(HELPERS.iter().map(|&(_, t)| t));
        v
    }
    /// The function index of a helper.
    fn helper(&self, h: Helper) -> u32 {
        let k = HELPERS.iter().position(|&(g, _)| g == h).unwrap() as u32;
        self.first + 2 + IMPLEMENTED.len() as u32 + irt_functions().len() as u32 + k
    }
    /// Every trampoline address and IRT function slot (the query's first) with its
    /// adapter.
    pub fn trampolines(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        let irt = self.first + 2 + IMPLEMENTED.len() as u32;
        (0..SYSCALL_SLOTS)
            .map(|n| (TRAMPOLINES + 32 * n, self.adapter(n)))
            .chain((0..irt_functions().len() as u32).map(move |k| (IRT_QUERY + 32 * k, irt + k)))
    }
    /// The initial break, above the stack.
    pub fn initial_break(&self) -> u32 {
        self.image_top + STACK_SIZE + self.heap
    }

    /// The host heap: its start and end.
    pub fn host_heap(&self) -> (u32, u32) {
        (self.image_top + STACK_SIZE, self.initial_break())
    }

    /// The functions' bodies, in index order. `passive`: with threads, the data
    /// segments (their addresses and sizes, in order) `_start` copies into the shared
    /// memory, once, before anything else.
    pub fn bodies(&self, entry: u32, passive: &[(u32, u32)]) -> Vec<Function> {
        let locked = self.threads.is_some();
        let mut v = vec![self.start(entry, passive), adapter(false, enosys)];
        for &n in IMPLEMENTED {
            let shared = matches!(n, SYS_SYSBRK | SYS_OPEN | SYS_STAT);
            v.push(adapter(locked && shared, |f| syscall(f, n, locked, self)));
        }
        for k in irt_functions() {
            let shared = matches!(k, Sysbrk | Mmap | Munmap) || k.on_paths();
            v.push(adapter(locked && shared, |f| irt(f, k, self)));
        }
        for &(h, _) in HELPERS {
            v.push(match h {
                Helper::Normalize => normalize(),
                Helper::Resolve => resolve(self),
                Helper::Preopens => preopens(self),
            });
        }
        v
    }

    /// `wasi_thread_start(tid, arg)`: a thread made by `thread_create`, in an instance of
    /// its own. `arg` is its scratch, just below its stack, where `thread_create` left
    /// `{start @0, thread pointer @8}`: the registers start at zero, `%rsp` = `arg`, the
    /// thread pointer is its own, then the start function runs; if it returns, the thread
    /// exits.
    pub fn thread_start(&self) -> Option<Function> {
        let spawn = self.threads?;
        let mut f = Function::new([]);
        let s = &mut f.instructions();
        s.local_get(1).global_set(G_SCRATCH);
        s.local_get(1)
            .i64_load(MemArg { offset: 8, ..m64() })
            .global_set(G_TLS);
        s.local_get(1).i64_extend_i32_u().global_set(G_RSP);
        s.i32_const(START_RETURN)
            .local_get(1)
            .i32_load(m32())
            .i32_const(TRAMPOLINES as i32)
            .i32_sub()
            .i32_const(5)
            .i32_shr_u()
            .call_indirect(0, TY_LIFTED)
            .drop()
            .call(spawn + 1)
            .end();
        Some(f)
    }

    /// `_start`: the startup blocks (WASI's arguments and environment), the files'
    /// state, the registers, then the program's entry.
    fn start(&self, entry: u32, passive: &[(u32, u32)]) -> Function {
        // locals: 0 argc, 1 strings, 2 info block (IRT era), 3 pre-IRT block, 4 i,
        // 5 envc, 6 argc + envc
        let (argc, strs, info, old, i, envc, n) = (0, 1, 2, 3, 4, 5, 6);
        let mut f = Function::new([(7, ValType::I32)]);
        let top = self.initial_break() as i32;
        let mut s = f.instructions();
        for (k, &(addr, len)) in passive.iter().enumerate() {
            s.i32_const(addr as i32)
                .i32_const(0)
                .i32_const(len as i32)
                .memory_init(0, k as u32)
                .data_drop(k as u32);
        }
        s.i32_const(SCRATCH + 16)
            .i32_const(SCRATCH + 20)
            .call(I_ARGS_SIZES_GET)
            .drop();
        s.i32_const(SCRATCH + 24)
            .i32_const(SCRATCH + 28)
            .call(I_ENVIRON_SIZES_GET)
            .drop();
        s.i32_const(ARGC).i32_load(m32()).local_set(argc);
        s.i32_const(SCRATCH + 24).i32_load(m32()).local_set(envc);
        s.local_get(argc).local_get(envc).i32_add().local_set(n);
        s.local_get(argc)
            .i32_const(MAX_ARGS)
            .i32_gt_u()
            .local_get(envc)
            .i32_const(MAX_ARGS)
            .i32_gt_u()
            .i32_or()
            .local_get(n)
            .i32_const(MAX_ARGS)
            .i32_gt_u()
            .i32_or()
            .if_(BlockType::Empty)
            .unreachable()
            .end();
        // the strings at the top of the stack: the arguments', then the environment's
        s.i32_const(top - 16)
            .i32_const(SCRATCH + 20)
            .i32_load(m32())
            .i32_sub()
            .i32_const(SCRATCH + 28)
            .i32_load(m32())
            .i32_sub()
            .i32_const(-16)
            .i32_and()
            .local_set(strs);
        s.i32_const(ARGV_TMP)
            .local_get(strs)
            .call(I_ARGS_GET)
            .drop();
        s.local_get(argc)
            .i32_const(2)
            .i32_shl()
            .i32_const(ARGV_TMP)
            .i32_add()
            .local_get(strs)
            .i32_const(SCRATCH + 20)
            .i32_load(m32())
            .i32_add()
            .call(I_ENVIRON_GET)
            .drop();
        // info = (strs - 4 * (n + 9)) & -16; old = (info - 4 * n - 32) & -16
        s.local_get(strs)
            .local_get(n)
            .i32_const(9)
            .i32_add()
            .i32_const(2)
            .i32_shl()
            .i32_sub()
            .i32_const(-16)
            .i32_and()
            .local_tee(info)
            .local_get(n)
            .i32_const(2)
            .i32_shl()
            .i32_sub()
            .i32_const(32)
            .i32_sub()
            .i32_const(-16)
            .i32_and()
            .local_set(old);
        // info: fini 0, envc, argc; old: argc as 64 bits
        s.local_get(info).i32_const(0).i32_store(m32());
        s.local_get(info)
            .i32_const(4)
            .i32_add()
            .local_get(envc)
            .i32_store(m32());
        s.local_get(info)
            .i32_const(8)
            .i32_add()
            .local_get(argc)
            .i32_store(m32());
        s.local_get(old)
            .local_get(argc)
            .i64_extend_i32_u()
            .i64_store(m64());
        // argv, then envp after argv's NULL, into both
        s.i32_const(0).local_set(i);
        s.block(BlockType::Empty).loop_(BlockType::Empty);
        s.local_get(i).local_get(n).i32_ge_u().br_if(1);
        for (block, at) in [(info, 12), (old, 8)] {
            s.local_get(block)
                .i32_const(at)
                .i32_add()
                .local_get(i)
                .local_get(i)
                .local_get(argc)
                .i32_ge_u()
                .i32_add()
                .i32_const(2)
                .i32_shl()
                .i32_add()
                .local_get(i)
                .i32_const(2)
                .i32_shl()
                .i32_const(ARGV_TMP)
                .i32_add()
                .i32_load(m32())
                .i32_store(m32());
        }
        s.local_get(i).i32_const(1).i32_add().local_set(i).br(0);
        s.end().end();
        // argv's NULL; then envp's NULL and the auxv: the IRT era's holds AT_SYSINFO (the
        // query), the pre-IRT one is empty (AT_NULL)
        for (block, at) in [(info, 12), (old, 8)] {
            s.local_get(block)
                .i32_const(at)
                .i32_add()
                .local_get(argc)
                .i32_const(2)
                .i32_shl()
                .i32_add()
                .i32_const(0)
                .i32_store(m32());
        }
        let irt_auxv = [0, AT_SYSINFO, IRT_QUERY as i32, 0, 0];
        for (block, at, words) in [(info, 16, &irt_auxv[..]), (old, 12, &[0; 3][..])] {
            for (k, &w) in words.iter().enumerate() {
                s.local_get(block)
                    .i32_const(at + 4 * k as i32)
                    .i32_add()
                    .local_get(n)
                    .i32_const(2)
                    .i32_shl()
                    .i32_add()
                    .i32_const(w)
                    .i32_store(m32());
            }
        }
        // the files: the current directory "/", ".", the preopened directories
        s.i32_const(CWD).i32_const(b'/' as i32).i32_store8(m8());
        s.i32_const(0).i32_const(1).i32_store(at(CWD_LEN_AT));
        s.i32_const(DOT).i32_const(b'.' as i32).i32_store8(m8());
        s.call(self.helper(Helper::Preopens));
        s.local_get(old).i64_extend_i32_u().global_set(G_RSP);
        s.local_get(info).i64_extend_i32_u().global_set(G_RDI);
        s.i32_const(0)
            .i32_const(self.initial_break() as i32)
            .i32_store(at(BRK_AT));
        s.i32_const(0)
            .i32_const(self.host_heap().0 as i32)
            .i32_store(at(HOST_HEAP_AT));
        // The entry never returns (it calls exit); returning is a crash, as in NaCl. Its
        // return address is one no code jumps to, so a jump to address 0 traps where it
        // is made rather than looking like the entry's return.
        s.i32_const(START_RETURN)
            .call(entry)
            .drop()
            .unreachable()
            .end();
        f
    }
}

/// An adapter: pops the return address its call pushed, runs `body` (which leaves the
/// i64 result), puts the result in `%rax` and returns to the caller's return address.
///
/// `locked` (the memory functions, with threads): the body runs holding the runtime's
/// lock; its early returns go through [`early_return`], which gives it back.
fn adapter(locked: bool, body: impl FnOnce(&mut Function)) -> Function {
    // param 0: the return address; locals 1..=6 scratch i32, 7 and 8 scratch i64, 9 the
    // return address on the stack
    let mut f = Function::new([(6, ValType::I32), (2, ValType::I64), (1, ValType::I32)]);
    f.instructions()
        .global_get(G_RSP)
        .i32_wrap_i64()
        .i32_load(m32())
        .local_set(L_RA)
        .global_get(G_RSP)
        .i64_const(8)
        .i64_add()
        .global_set(G_RSP);
    if locked {
        lock(&mut f.instructions());
    }
    body(&mut f);
    let s = &mut f.instructions();
    if locked {
        unlock(s);
    }
    s.global_set(G_RAX).return_to_caller(L_RA).end();
    f
}

/// Takes the runtime's lock (a word that is 1 while held; waiters sleep on it).
fn lock(s: &mut InstructionSink<'_>) {
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.i32_const(0)
        .i32_const(0)
        .i32_const(1)
        .i32_atomic_rmw_cmpxchg(at(LOCK_AT as u64))
        .i32_eqz()
        .br_if(1);
    s.i32_const(LOCK_AT)
        .i32_const(1)
        .i64_const(-1)
        .memory_atomic_wait32(m32())
        .drop()
        .br(0);
    s.end().end();
}

/// Gives the runtime's lock back and wakes a waiter.
fn unlock(s: &mut InstructionSink<'_>) {
    s.i32_const(0)
        .i32_const(0)
        .i32_atomic_store(at(LOCK_AT as u64))
        .i32_const(LOCK_AT)
        .i32_const(1)
        .memory_atomic_notify(m32())
        .drop();
}

/// An adapter's return before its end, with the result (i64) on the stack: `locked`
/// gives the lock back first.
fn early_return(s: &mut InstructionSink<'_>, locked: bool) {
    if locked {
        unlock(s);
    }
    s.global_set(G_RAX).return_to_caller(L_RA);
}

/// The adapters' local holding the return address their call pushed.
pub(crate) const L_RA: u32 = 9;

/// How an adapter returns: to the return address on the stack (in a local). A `call`
/// pushed the address its caller gave as `ret`, so the adapter returns it; code that
/// calls with `push $next; jmp *%r11` (PNaCl's translator) reached the adapter by a tail
/// call, so it goes on at `next`'s function through the table with the same `ret`, as a
/// lifted function's return does.
pub(crate) trait ReturnToCaller {
    fn return_to_caller(&mut self, ra: u32) -> &mut Self;
}

impl ReturnToCaller for InstructionSink<'_> {
    fn return_to_caller(&mut self, ra: u32) -> &mut Self {
        self.local_get(ra)
            .local_get(0)
            .i32_ne()
            .if_(BlockType::Empty)
            .local_get(0)
            .local_get(ra)
            .i32_const(TRAMPOLINES as i32)
            .i32_sub()
            .i32_const(5)
            .i32_shr_u()
            .return_call_indirect(0, TY_LIFTED)
            .end()
            .local_get(0)
            .return_()
    }
}

fn enosys(f: &mut Function) {
    f.instructions().i64_const(-ENOSYS);
}

/// Pushes argument register `g` (a global) as an i32.
fn arg(f: &mut Function, g: u32) {
    f.instructions().global_get(g).i32_wrap_i64();
}

/// The WASI errno on the stack (nonzero) as NaCl's negative errno (i64).
fn errno(f: &mut Function) {
    let s = &mut f.instructions();
    wasi_errno(s);
    s.i64_extend_i32_u()
        .local_set(7)
        .i64_const(0)
        .local_get(7)
        .i64_sub();
}

/// The WASI errno on the stack as NaCl's (positive, i32): the map in the constants,
/// unknown values EIO.
pub(crate) fn wasi_errno(s: &mut InstructionSink<'_>) {
    s.local_tee(1)
        .i32_const(WASI_ERRNOS.len() as i32 - 1)
        .local_get(1)
        .i32_const(WASI_ERRNOS.len() as i32 - 1)
        .i32_lt_u()
        .select()
        .i32_const(ERRNO_MAP)
        .i32_add()
        .i32_load8_u(m8());
}

fn syscall(f: &mut Function, n: u32, locked: bool, rt: &Runtime) {
    match n {
        SYS_WRITE | SYS_READ => {
            // write(fd, buf, count) / read(fd, buf, count): one iovec, the count done
            sc(&mut f.instructions(), 0);
            arg(f, G_RSI);
            f.instructions().i32_store(m32());
            sc(&mut f.instructions(), 4);
            arg(f, G_RDX);
            f.instructions().i32_store(m32());
            arg(f, G_RDI);
            sc(&mut f.instructions(), 0);
            f.instructions().i32_const(1);
            sc(&mut f.instructions(), 8);
            f.instructions()
                .call(if n == SYS_WRITE {
                    I_FD_WRITE
                } else {
                    I_FD_READ
                })
                .local_tee(2)
                .if_(BlockType::Result(ValType::I64))
                .local_get(2);
            errno(f);
            f.instructions().else_();
            sc(&mut f.instructions(), 8);
            f.instructions().i32_load(m32()).i64_extend_i32_u().end();
        }
        SYS_CLOSE => {
            arg(f, G_RDI);
            f.instructions()
                .call(I_FD_CLOSE)
                .local_tee(2)
                .if_(BlockType::Result(ValType::I64))
                .local_get(2);
            errno(f);
            f.instructions().else_().i64_const(0).end();
        }
        // The IRT's functions, with NaCl's negative errno: open's fd through this
        // thread's scratch, lseek's offset through its pointer argument.
        SYS_OPEN | SYS_STAT | SYS_FSTAT | SYS_LSEEK => {
            let s = &mut f.instructions();
            if n == SYS_OPEN {
                sc(s, S_WORD);
                s.i64_extend_i32_u().global_set(G_RCX);
            }
            if n == SYS_LSEEK {
                // lseek(fd, off_t *offset, whence)
                s.global_get(G_RSI).global_set(G_RCX);
                a32(s, G_RSI);
                s.i64_load(m64()).global_set(G_RSI);
            }
            let k = match n {
                SYS_OPEN => Open,
                SYS_STAT => Stat,
                SYS_FSTAT => Fstat,
                _ => Seek,
            };
            irt(f, k, rt);
            let s = &mut f.instructions();
            s.local_tee(7)
                .i64_eqz()
                .if_(BlockType::Result(ValType::I64));
            if n == SYS_OPEN {
                sc(s, S_WORD);
                s.i64_load32_u(m32());
            } else {
                s.i64_const(0);
            }
            s.else_().i64_const(0).local_get(7).i64_sub().end();
        }
        SYS_MUTEX_CREATE | SYS_COND_CREATE => {
            // a fresh handle (the IRT's `Create` counter)
            f.instructions()
                .i32_const(0)
                .i32_const(1)
                .i32_atomic_rmw_add(at(HANDLES_AT))
                .i32_const(1)
                .i32_add()
                .i64_extend_i32_u();
        }
        SYS_MUTEX_LOCK | SYS_MUTEX_UNLOCK | SYS_MUTEX_TRYLOCK | SYS_COND_SIGNAL
        | SYS_COND_BROADCAST => {
            f.instructions().i64_const(0);
        }
        SYS_COND_WAIT => {
            f.instructions().i64_const(-i64::from(EDEADLK));
        }
        SYS_COND_TIMED_WAIT_ABS => {
            f.instructions().i64_const(-i64::from(ETIMEDOUT));
        }
        SYS_SYSBRK => {
            // sysbrk(new): 0 asks for the break; else grow the memory to hold it (the
            // break stays when it cannot, or when a mapping lies above it, as the IRT's
            // `sysbrk`: glibc calls this one when its IRT has no `sysbrk`, and maps with
            // the IRT's `mmap`) and move the break. Returns the break.
            let s = &mut f.instructions();
            s.global_get(G_RDI).i32_wrap_i64().local_tee(1);
            s.if_(BlockType::Empty);
            grows_over_a_mapping(s, 1);
            s.if_(BlockType::Empty)
                .i32_const(0)
                .i32_load(at(BRK_AT))
                .i64_extend_i32_u();
            early_return(s, locked);
            s.end();
            // pages needed = ceil(new / 64 KiB) (new near 4 GiB: all of memory)
            s.local_get(1)
                .i32_const(16)
                .i32_shr_u()
                .local_get(1)
                .i32_const(0xffff)
                .i32_and()
                .i32_const(0)
                .i32_ne()
                .i32_add()
                .memory_size(0)
                .i32_sub()
                .local_tee(2)
                .i32_const(0)
                .i32_gt_s();
            s.if_(BlockType::Empty)
                .local_get(2)
                .memory_grow(0)
                .i32_const(-1)
                .i32_eq()
                .if_(BlockType::Empty)
                .i32_const(0)
                .i32_load(at(BRK_AT))
                .i64_extend_i32_u();
            early_return(s, locked);
            s.end().end();
            s.i32_const(0).local_get(1).i32_store(at(BRK_AT));
            s.end();
            s.i32_const(0).i32_load(at(BRK_AT)).i64_extend_i32_u();
        }
        SYS_EXIT => {
            arg(f, G_RDI);
            f.instructions().call(I_PROC_EXIT).unreachable();
        }
        SYS_GETPID => {
            f.instructions().i64_const(1);
        }
        SYS_SCHED_YIELD => {
            f.instructions().i64_const(0);
        }
        SYS_SYSCONF => {
            // sysconf(name, *value): processors 1, page size 64 KiB (NaCl's)
            let s = &mut f.instructions();
            s.global_get(G_RDI)
                .i32_wrap_i64()
                .local_tee(1)
                .i32_const(1)
                .i32_eq()
                .local_get(1)
                .i32_const(2)
                .i32_eq()
                .i32_or()
                .if_(BlockType::Result(ValType::I64))
                .global_get(G_RSI)
                .i32_wrap_i64()
                .i32_const(0x1_0000)
                .i32_const(1)
                .local_get(1)
                .i32_const(2)
                .i32_eq()
                .select()
                .i32_store(m32())
                .i64_const(0)
                .else_()
                .i64_const(-EINVAL)
                .end();
        }
        SYS_TLS_INIT => {
            f.instructions()
                .global_get(G_RDI)
                .global_set(G_TLS)
                .i64_const(0);
        }
        SYS_TLS_GET => {
            f.instructions().global_get(G_TLS);
        }
        _ => enosys(f),
    }
}

// ---------------------------------------------------------------------------------------
// The IRT: `nacl_irt_query` and the interface functions, for the IRT-era programs.

/// NaCl's errno for each WASI errno (0..=76; `notcapable` is EACCES), then EIO for
/// anything beyond.
const WASI_ERRNOS: [u8; 78] = [
    0, 7, 13, 98, 99, 97, 11, 114, 9, 74, 16, 125, 10, 103, 111, 104, 35, 89, 33, 122, 17, 14, 27,
    113, 43, 84, 115, 4, 22, 5, 106, 21, 40, 24, 31, 90, 72, 36, 100, 102, 101, 23, 105, 19, 2, 8,
    37, 67, 12, 42, 92, 28, 38, 107, 20, 39, 131, 88, 95, 25, 6, 75, 130, 1, 32, 71, 93, 91, 34,
    30, 29, 3, 116, 110, 26, 18, 13, 5,
];

/// `st_mode` for each WASI filetype (unknown, block device, character device, directory,
/// regular file, datagram and stream socket, symbolic link): WASI has no permission
/// bits, these are typical ones.
const MODES: [u32; 8] = [
    0o600, 0o060660, 0o020666, 0o040755, 0o100644, 0o140666, 0o140666, 0o120777,
];

const EAGAIN: i32 = 11;
const ENOMEM: i32 = 12;
const EACCES: i32 = 13;
const ENODEV: i32 = 19;
const EDEADLK: i32 = 35;
const ETIMEDOUT: i32 = 110;

/// One IRT function (each has a table slot and an adapter; the IRT's convention: the
/// arguments in `%rdi %rsi %rdx %rcx %r8 %r9`, 0 or a positive errno in `%rax`, results
/// through pointers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Irt {
    Query,
    Exit,
    Gettod,
    Clock,
    Nanosleep,
    Sysconf,
    Close,
    Read,
    Write,
    Seek,
    Fstat,
    Sysbrk,
    Mmap,
    Munmap,
    TlsInit,
    TlsGet,
    ClockGetres,
    ClockGettime,
    Random,
    Getpid,
    ThreadCreate,
    ThreadExit,
    FutexWait,
    /// The translator's `serve_translate_request`.
    ServeTranslate,
    /// The linker's `serve_link_request`.
    ServeLink,
    /// The linker's `open_resource`.
    ResourceOpen,
    FutexWake,
    /// `mutex_create`, `cond_create`: a fresh handle.
    Create,
    /// The dynamic-code functions: their "not translated yet" words, then a trap.
    Dyncode,
    /// Answers a constant errno (0: success): what one thread with no file access gets.
    Ret(i32),
    // Paths (`filename`, `dev-filename`): resolved onto WASI's preopened directories.
    Open,
    Stat,
    Lstat,
    Mkdir,
    Rmdir,
    Chdir,
    Getcwd,
    Unlink,
    Link,
    Rename,
    Symlink,
    Access,
    Readlink,
}

impl Irt {
    /// Whether it uses the path buffers (with threads: under the runtime's lock).
    fn on_paths(self) -> bool {
        matches!(
            self,
            Open | Stat
                | Lstat
                | Mkdir
                | Rmdir
                | Chdir
                | Getcwd
                | Unlink
                | Link
                | Rename
                | Symlink
                | Access
                | Readlink
        )
    }
}

/// The runtime's helper functions (after the adapters), with their types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Helper {
    /// `normalize(buf, len) -> len`.
    Normalize,
    /// `resolve(path, buf) -> dir fd or -errno`.
    Resolve,
    /// `preopens()`: records the preopened directories.
    Preopens,
}
const HELPERS: &[(Helper, u32)] = &[
    (Helper::Normalize, TY_ARGS),
    (Helper::Resolve, TY_ARGS),
    (Helper::Preopens, TY_START),
];

use Irt::*;

const FDIO: &[Irt] = &[
    Close,
    Ret(ENOSYS as i32), // dup
    Ret(ENOSYS as i32), // dup2
    Read,
    Write,
    Seek,
    Fstat,
    Ret(ENOSYS as i32), // getdents
];

/// The interfaces answered, with their tables in slot order (`irt.h`). Others (and a
/// table too small) answer 0, as NaCl's IRT did. With threads (`Runtime::threads`),
/// `thread_create` starts a wasi-threads thread and futexes are `memory.atomic.wait32`/
/// `notify`; without, futexes are those of a single thread (a wait that nothing could
/// end answers `EDEADLK`, a timed one `ETIMEDOUT`) and `thread_create` answers `EAGAIN`.
/// The 2011 mutex and condition interfaces are always a single thread's: a lock always
/// succeeds.
/// Files: paths are resolved onto WASI's preopened directories (`resolve`); without any,
/// every path answers `EACCES`, as `sel_ldr` without `-a` did.
const INTERFACES: &[(&str, &[Irt])] = &[
    (
        "nacl-irt-basic-0.1",
        &[Exit, Gettod, Clock, Nanosleep, Ret(0), Sysconf],
    ),
    ("nacl-irt-fdio-0.1", FDIO),
    ("nacl-irt-dev-fdio-0.1", FDIO),
    ("nacl-irt-filename-0.1", &[Open, Stat]),
    (
        "nacl-irt-dev-filename-0.2",
        &[Open, Stat, Mkdir, Rmdir, Chdir, Getcwd, Unlink],
    ),
    (
        "nacl-irt-dev-filename-0.3",
        &[
            Open,
            Stat,
            Mkdir,
            Rmdir,
            Chdir,
            Getcwd,
            Unlink,
            Ret(ENOSYS as i32), // truncate
            Lstat,
            Link,
            Rename,
            Symlink,
            Ret(ENOSYS as i32), // chmod: WASI has no permissions
            Access,
            Readlink,
            Ret(ENOSYS as i32), // utimes
        ],
    ),
    ("nacl-irt-memory-0.1", &[Sysbrk, Mmap, Munmap]),
    ("nacl-irt-memory-0.2", &[Sysbrk, Mmap, Munmap, Ret(0)]),
    ("nacl-irt-memory-0.3", &[Mmap, Munmap, Ret(0)]),
    ("nacl-irt-tls-0.1", &[TlsInit, TlsGet]),
    ("nacl-irt-clock_get-0.1", &[ClockGetres, ClockGettime]),
    ("nacl-irt-random-0.1", &[Random]),
    ("nacl-irt-dev-getpid-0.1", &[Getpid]),
    ("nacl-irt-thread-0.1", &[ThreadCreate, ThreadExit, Ret(0)]),
    ("nacl-irt-futex-0.1", &[FutexWait, FutexWake]),
    (
        "nacl-irt-mutex-0.1",
        &[Create, Ret(0), Ret(0), Ret(0), Ret(0)],
    ),
    (
        "nacl-irt-cond-0.1",
        &[Create, Ret(0), Ret(0), Ret(0), Ret(EDEADLK), Ret(ETIMEDOUT)],
    ),
    ("nacl-irt-blockhook-0.1", &[Ret(0)]),
    ("nacl-irt-dyncode-0.1", &[Dyncode, Dyncode, Dyncode]),
    // answered to PNaCl's compiler only (`irt_data`)
    (super::translator::COMPILE_INTERFACE, &[ServeTranslate]),
    // answered to PNaCl's linker only
    (super::translator::LINK_INTERFACE, &[ServeLink]),
    (super::translator::RESOURCE_INTERFACE, &[ResourceOpen]),
];

/// The interfaces' names the query answers.
pub fn irt_interfaces() -> impl Iterator<Item = &'static str> {
    INTERFACES.iter().map(|(n, _)| *n)
}

/// The number of IRT function slots (the query's included): Pepper's follow them.
pub(crate) fn irt_slot_count() -> u32 {
    irt_functions().len() as u32
}

/// The IRT functions in slot order: the query, then each distinct function of the
/// interfaces.
fn irt_functions() -> Vec<Irt> {
    let mut v = vec![Query];
    for (_, table) in INTERFACES {
        for f in *table {
            if !v.contains(f) {
                v.push(*f);
            }
        }
    }
    v
}

/// The runtime's constants at [`IRT_DATA`]: the errno map, the modes, the dynamic-code
/// words, the directory (per interface: its name's address, its table's size and
/// address; a zero name ends it), then the names and tables.
///
/// A Pepper nexe's also answers `nacl-irt-ppapihook-0.1` with Pepper's first two slots.
pub(crate) fn irt_data(pepper: bool, translator: bool, linker: bool) -> Vec<u8> {
    let funcs = irt_functions();
    let slot = |f: &Irt| IRT_QUERY + 32 * funcs.iter().position(|g| g == f).unwrap() as u32;
    let hook = super::pepper::Pepper::ppapihook_table(funcs.len() as u32);
    let hook: &[u32] = if pepper { &hook } else { &[] };
    let n = INTERFACES.len() + usize::from(pepper);
    let mut d = vec![0u8; (DIRECTORY - IRT_DATA) as usize + 12 * (n + 1)];
    d[..WASI_ERRNOS.len()].copy_from_slice(&WASI_ERRNOS);
    for (k, m) in MODES.iter().enumerate() {
        let at = (MODES_AT - IRT_DATA) as usize + 4 * k;
        d[at..at + 4].copy_from_slice(&m.to_le_bytes());
    }
    let words = dyncode_words();
    let at = (DYNCODE_WORDS - IRT_DATA) as usize;
    d[at..at + words.len()].copy_from_slice(words.as_bytes());
    let at = (NULL_PAGE_WORDS - IRT_DATA) as usize;
    d[at..at + NULL_PAGE.len()].copy_from_slice(NULL_PAGE.as_bytes());
    let m = super::translator::messages();
    let at = (super::translator::MESSAGES_AT - IRT_DATA) as usize;
    d[at..at + m.len()].copy_from_slice(&m);
    let slots: Vec<(&str, Vec<u32>)> = INTERFACES
        .iter()
        .filter(|(name, _)| translator || *name != super::translator::COMPILE_INTERFACE)
        .filter(|(name, _)| {
            linker
                || (*name != super::translator::LINK_INTERFACE
                    && *name != super::translator::RESOURCE_INTERFACE)
        })
        .map(|(name, table)| (*name, table.iter().map(slot).collect()))
        .chain(pepper.then(|| ("nacl-irt-ppapihook-0.1", hook.to_vec())))
        .collect();
    for (k, (name, table)) in slots.iter().enumerate() {
        let name_at = IRT_DATA as u32 + d.len() as u32;
        d.extend_from_slice(name.as_bytes());
        d.push(0);
        d.resize(d.len().next_multiple_of(4), 0);
        let table_at = IRT_DATA as u32 + d.len() as u32;
        for a in table {
            d.extend_from_slice(&a.to_le_bytes());
        }
        let e = (DIRECTORY - IRT_DATA) as usize + 12 * k;
        for (j, w) in [name_at, 4 * table.len() as u32, table_at]
            .into_iter()
            .enumerate()
        {
            d[e + 4 * j..e + 4 * j + 4].copy_from_slice(&w.to_le_bytes());
        }
    }
    // Pepper's constants take the second half
    debug_assert!(d.len() <= 0x4000);
    d
}

/// What a call of the dynamic-code interface writes to stderr before it traps.
fn dyncode_words() -> String {
    let e = LiftError::InterfaceNotTranslatedYet {
        interface: "nacl-irt-dyncode-0.1".into(),
        what: "dynamic-code",
    };
    format!("{e}\n")
}

/// What a memory access to NaCl's unmapped first 64 KiB writes to stderr before it
/// traps, followed by the instruction's address (8 hex digits) and a newline.
pub const NULL_PAGE: &str =
    "untrusted segfault: a memory access to the unmapped first 64 KiB (a null pointer) at 0x";

/// The null-page fault every lifted memory check calls (`func::F_NULL_PAGE`, type
/// `TY_LIFTED`) with the instruction's address: with the runtime linked it writes
/// [`NULL_PAGE`] and the address to stderr, as NaCl's loader reports an untrusted
/// segfault, then traps; without (`runtime` false: no WASI) it only traps.
pub(crate) fn null_page_fault(runtime: bool) -> Function {
    // locals: 1 the digit's number, 2 its nibble
    let mut f = Function::new([(2, ValType::I32)]);
    let s = &mut f.instructions();
    if runtime {
        // the digits and the newline in the scratch at S_FDSTAT, the iovecs at S_FILESTAT
        s.loop_(BlockType::Empty);
        sc(s, S_FDSTAT);
        s.local_get(1).i32_add();
        // nibble 7 - k, then '0'..'9' or 'a'..'f'
        s.local_get(0)
            .i32_const(28)
            .local_get(1)
            .i32_const(2)
            .i32_shl()
            .i32_sub()
            .i32_shr_u()
            .i32_const(15)
            .i32_and()
            .local_tee(2)
            .i32_const(i32::from(b'0'))
            .i32_add()
            .local_get(2)
            .i32_const(9)
            .i32_gt_u()
            .i32_const(i32::from(b'a' - b'0' - 10))
            .i32_mul()
            .i32_add()
            .i32_store8(m8());
        s.local_get(1)
            .i32_const(1)
            .i32_add()
            .local_tee(1)
            .i32_const(8)
            .i32_lt_u()
            .br_if(0)
            .end();
        sc(s, S_FDSTAT + 8);
        s.i32_const(i32::from(b'\n')).i32_store8(m8());
        // two writes (WASI's `fd_write` may write only its first buffer): the words (a
        // constant), then the digits (in the scratch)
        for (from, len) in [(None, NULL_PAGE.len() as i32), (Some(S_FDSTAT), 9)] {
            sc(s, S_FILESTAT);
            match from {
                None => s.i32_const(NULL_PAGE_WORDS),
                Some(off) => {
                    sc(s, off);
                    &mut *s
                }
            };
            s.i32_store(m32());
            sc(s, S_FILESTAT + 4);
            s.i32_const(len).i32_store(m32());
            s.i32_const(2);
            sc(s, S_FILESTAT);
            s.i32_const(1);
            sc(s, S_FILESTAT + 8);
            s.call(I_FD_WRITE).drop();
        }
    }
    s.unreachable().end();
    f
}

/// Pushes `%rdi`-like argument register `g` as an i32.
pub(crate) fn a32(s: &mut InstructionSink<'_>, g: u32) {
    s.global_get(g).i32_wrap_i64();
}

/// With a WASI errno on the stack: when nonzero, NaCl's errno; else `ok` runs and the
/// result is 0. Leaves the i32 result.
fn on_success(s: &mut InstructionSink<'_>, ok: impl FnOnce(&mut InstructionSink<'_>)) {
    s.local_tee(2)
        .if_(BlockType::Result(ValType::I32))
        .local_get(2);
    wasi_errno(s);
    s.else_();
    ok(s);
    s.i32_const(0).end();
}

/// Stores `ns` (an i64 local) as NaCl's `{int64 sec; int32 frac}` at the address on the
/// stack (pushed by `addr`), with `frac` in units of `div` nanoseconds.
fn put_time(
    s: &mut InstructionSink<'_>,
    addr: impl Fn(&mut InstructionSink<'_>),
    ns: u32,
    div: i64,
) {
    addr(s);
    s.local_get(ns)
        .i64_const(1_000_000_000)
        .i64_div_u()
        .i64_store(m64());
    addr(s);
    s.local_get(ns)
        .i64_const(1_000_000_000)
        .i64_rem_u()
        .i64_const(div)
        .i64_div_u()
        .i32_wrap_i64()
        .i32_store(MemArg { offset: 8, ..m32() });
}

/// Reads clock `id` (an i32 on the stack: NaCl's ids, realtime 0 and the rest
/// monotonic) into local 7 (ns); leaves WASI's errno.
fn read_clock(s: &mut InstructionSink<'_>) {
    s.i32_const(0).i32_ne().i64_const(1);
    sc(s, S_WORD);
    s.call(I_CLOCK_TIME_GET);
    sc(s, S_WORD);
    s.i64_load(m64()).local_set(7);
}

/// Pushes the monotonic clock's nanoseconds (i64; what `rdtsc` reads): for lifted code
/// of a module with the runtime linked.
pub(crate) fn clock_ns(s: &mut InstructionSink<'_>) {
    s.i32_const(1).i64_const(1);
    sc(s, S_TSC);
    s.call(I_CLOCK_TIME_GET).drop();
    sc(s, S_TSC);
    s.i64_load(m64());
}

/// Grows the memory to hold `[0, end)` (an i64 local): leaves 1 when it does.
/// Pushes whether moving the break to local `new` (i32) would take it over a mapping: one
/// lies above the break and `new` is above it too. Both `sysbrk`s (the IRT's and the
/// trampoline's) refuse then.
fn grows_over_a_mapping(s: &mut InstructionSink<'_>, new: u32) {
    s.i32_const(0)
        .i32_load(at(MAPTOP_AT))
        .i32_const(0)
        .i32_load(at(BRK_AT))
        .i32_gt_u()
        .local_get(new)
        .i32_const(0)
        .i32_load(at(BRK_AT))
        .i32_gt_u()
        .i32_and();
}

pub(crate) fn grow_to(s: &mut InstructionSink<'_>, end: u32) {
    // pages needed = ceil(end / 64 KiB) - pages now
    s.local_get(end)
        .i64_const(0xffff)
        .i64_add()
        .i64_const(16)
        .i64_shr_u()
        .i32_wrap_i64()
        .memory_size(0)
        .i32_sub()
        .local_tee(3)
        .i32_const(0)
        .i32_le_s()
        .if_(BlockType::Result(ValType::I32))
        .i32_const(1)
        .else_()
        .local_get(3)
        .memory_grow(0)
        .i32_const(-1)
        .i32_ne()
        .end();
}

/// The body of IRT function `k`: leaves the i64 for `%rax`.
fn irt(f: &mut Function, k: Irt, rt: &Runtime) {
    use super::translator as tr;
    let s = &mut f.instructions();
    let threads = rt.threads;
    let locked = threads.is_some();
    let translator = rt.translator;
    // the translator's object file (the linker's nexe) and standard streams
    // (translator.rs)
    if (translator || rt.path_open.is_some()) && matches!(k, Write | Seek | Close) {
        tr::is_object(s);
        s.if_(BlockType::Result(ValType::I32));
        match k {
            Write => tr::object_write(s),
            Seek => tr::object_seek(s),
            _ => tr::object_close(s),
        }
        s.else_();
        if k == Close {
            tr::is_standard_stream(s);
            s.if_(BlockType::Result(ValType::I32)).i32_const(0).else_();
        }
    }
    match k {
        Query => irt_query(s),
        Exit => {
            a32(s, G_RDI);
            s.call(I_PROC_EXIT).unreachable();
        }
        Gettod => {
            // gettod(struct timeval *): {int64 sec; int32 usec}
            s.i32_const(0);
            read_clock(s);
            on_success(s, |s| {
                put_time(s, |s| a32(s, G_RDI), 7, 1000);
            });
        }
        Clock => {
            // clock(nacl_irt_clock_t *ticks): microseconds of the monotonic clock
            s.i32_const(1);
            read_clock(s);
            on_success(s, |s| {
                a32(s, G_RDI);
                s.local_get(7)
                    .i64_const(1000)
                    .i64_div_u()
                    .i32_wrap_i64()
                    .i32_store(m32());
            });
        }
        Nanosleep => {
            // nanosleep(req, rem): one relative clock subscription; rem gets 0
            let sub = S_SUBSCRIPTION;
            a32(s, G_RDI);
            s.i64_load(m64()).local_set(7);
            a32(s, G_RDI);
            s.i32_load(MemArg { offset: 8, ..m32() }).local_set(1);
            s.local_get(7)
                .i64_const(0)
                .i64_lt_s()
                .local_get(1)
                .i32_const(999_999_999)
                .i32_gt_u()
                .i32_or()
                .if_(BlockType::Empty)
                .i64_const(EINVAL)
                .global_set(G_RAX)
                .return_to_caller(L_RA)
                .end();
            sc(s, sub);
            s.i32_const(0).i32_const(48).memory_fill(0);
            sc(s, sub);
            s.i32_const(1).i32_store(MemArg {
                offset: 16,
                ..m32()
            });
            sc(s, sub);
            s.local_get(7)
                .i64_const(1_000_000_000)
                .i64_mul()
                .local_get(1)
                .i64_extend_i32_u()
                .i64_add()
                .i64_store(MemArg {
                    offset: 24,
                    ..m64()
                });
            sc(s, sub);
            sc(s, S_EVENT);
            s.i32_const(1);
            sc(s, S_NEVENTS);
            s.call(I_POLL_ONEOFF);
            on_success(s, |s| {
                a32(s, G_RSI);
                s.if_(BlockType::Empty);
                a32(s, G_RSI);
                s.i64_const(0).i64_store(m64());
                a32(s, G_RSI);
                s.i64_const(0).i64_store(MemArg { offset: 8, ..m64() });
                s.end();
            });
        }
        Sysconf => {
            // sysconf(name, *value): processors 1, page size 64 KiB (NaCl's)
            a32(s, G_RDI);
            s.local_tee(1)
                .i32_const(1)
                .i32_eq()
                .local_get(1)
                .i32_const(2)
                .i32_eq()
                .i32_or()
                .if_(BlockType::Result(ValType::I32));
            a32(s, G_RSI);
            s.i32_const(0x1_0000)
                .i32_const(1)
                .local_get(1)
                .i32_const(2)
                .i32_eq()
                .select()
                .i32_store(m32())
                .i32_const(0)
                .else_()
                .i32_const(EINVAL as i32)
                .end();
        }
        Close => {
            a32(s, G_RDI);
            s.call(I_FD_CLOSE);
            on_success(s, |_| {});
        }
        Read | Write => {
            // read/write(fd, buf, count, *done): one iovec
            sc(s, 0);
            a32(s, G_RSI);
            s.i32_store(m32());
            sc(s, 4);
            a32(s, G_RDX);
            s.i32_store(m32());
            a32(s, G_RDI);
            sc(s, 0);
            s.i32_const(1);
            sc(s, 8);
            s.call(if k == Write { I_FD_WRITE } else { I_FD_READ });
            on_success(s, |s| {
                a32(s, G_RCX);
                sc(s, 8);
                s.i32_load(m32()).i32_store(m32());
            });
        }
        Seek => {
            // seek(fd, off_t offset, whence, off_t *new)
            a32(s, G_RDI);
            s.global_get(G_RSI);
            a32(s, G_RDX);
            sc(s, S_WORD);
            s.call(I_FD_SEEK);
            on_success(s, |s| {
                a32(s, G_RCX);
                sc(s, S_WORD);
                s.i64_load(m64()).i64_store(m64());
            });
        }
        Fstat => irt_fstat(s),
        Sysbrk => {
            // sysbrk(void **newbrk): *newbrk 0 asks for the break; else the break moves
            // there (the memory grows) unless a mapping lies above it (ENOMEM)
            a32(s, G_RDI);
            s.i32_load(m32()).local_tee(1).if_(BlockType::Empty);
            grows_over_a_mapping(s, 1);
            s.if_(BlockType::Empty).i64_const(ENOMEM as i64);
            early_return(s, locked);
            s.end();
            s.local_get(1).i64_extend_i32_u().local_set(7);
            grow_to(s, 7);
            s.i32_eqz().if_(BlockType::Empty).i64_const(ENOMEM as i64);
            early_return(s, locked);
            s.end();
            s.i32_const(0).local_get(1).i32_store(at(BRK_AT));
            s.end();
            a32(s, G_RDI);
            s.i32_const(0)
                .i32_load(at(BRK_AT))
                .i32_store(m32())
                .i32_const(0);
        }
        Mmap => irt_mmap(s, locked),
        Munmap => {
            // munmap(addr, len): the top mapping gives its room back; any other stays
            // (its memory is not reused)
            a32(s, G_RDI);
            s.local_tee(1);
            a32(s, G_RSI);
            s.i32_const(0xffff)
                .i32_add()
                .i32_const(-0x1_0000)
                .i32_and()
                .i32_add()
                .i32_const(0)
                .i32_load(at(MAPTOP_AT))
                .i32_eq()
                .local_get(1)
                .i32_const(0)
                .i32_load(at(BRK_AT))
                .i32_ge_u()
                .i32_and()
                .if_(BlockType::Empty)
                .i32_const(0)
                .local_get(1)
                .i32_store(at(MAPTOP_AT))
                .end()
                .i32_const(0);
        }
        TlsInit => {
            s.global_get(G_RDI).global_set(G_TLS).i32_const(0);
        }
        TlsGet => {
            s.global_get(G_TLS);
            return;
        }
        ClockGetres => {
            // clock_getres(id, *res): 1 ns (res may be NULL)
            a32(s, G_RDI);
            s.i32_const(4)
                .i32_ge_u()
                .if_(BlockType::Result(ValType::I32))
                .i32_const(EINVAL as i32)
                .else_();
            a32(s, G_RSI);
            s.if_(BlockType::Empty);
            a32(s, G_RSI);
            s.i64_const(0).i64_store(m64());
            a32(s, G_RSI);
            s.i32_const(1).i32_store(MemArg { offset: 8, ..m32() });
            s.end().i32_const(0).end();
        }
        ClockGettime => {
            a32(s, G_RDI);
            s.i32_const(4)
                .i32_ge_u()
                .if_(BlockType::Result(ValType::I32))
                .i32_const(EINVAL as i32)
                .else_();
            a32(s, G_RDI);
            read_clock(s);
            on_success(s, |s| put_time(s, |s| a32(s, G_RSI), 7, 1));
            s.end();
        }
        Random => {
            // get_random_bytes(buf, count, *nread)
            a32(s, G_RDI);
            a32(s, G_RSI);
            s.call(I_RANDOM_GET);
            on_success(s, |s| {
                a32(s, G_RDX);
                a32(s, G_RSI);
                s.i32_store(m32());
            });
        }
        Getpid => {
            a32(s, G_RDI);
            s.i32_const(1).i32_store(m32()).i32_const(0);
        }
        ServeTranslate => {
            if translator {
                tr::serve(s);
                return;
            }
            // never in the directory
            s.unreachable();
        }
        ServeLink | ResourceOpen => match rt.path_open {
            Some(open) if k == ServeLink => tr::serve_link(s, open),
            Some(open) => tr::resource_open(s, open),
            // never in the directory
            None => {
                s.unreachable();
            }
        },
        ThreadCreate => match threads {
            // thread_create(start, stack, thread_ptr): the thread's scratch is the top
            // of its stack (`stack` - THREAD_SCRATCH, where its stack pointer starts);
            // its start record goes there for `wasi_thread_start`
            Some(spawn) => {
                a32(s, G_RSI);
                s.i32_const(THREAD_SCRATCH).i32_sub().local_tee(1);
                a32(s, G_RDI);
                s.i32_store(m32())
                    .local_get(1)
                    .global_get(G_RDX)
                    .i64_store(MemArg { offset: 8, ..m64() });
                s.local_get(1)
                    .call(spawn)
                    .i32_const(0)
                    .i32_lt_s()
                    .if_(BlockType::Result(ValType::I32))
                    .i32_const(EAGAIN)
                    .else_()
                    .i32_const(0)
                    .end();
            }
            None => {
                s.i32_const(EAGAIN);
            }
        },
        ThreadExit => {
            // thread_exit(stack_flag): *stack_flag = 0 (its joiner waits on it as a
            // futex), then this thread ends; with one thread, the process
            a32(s, G_RDI);
            s.if_(BlockType::Empty);
            a32(s, G_RDI);
            match threads {
                Some(spawn) => {
                    s.i32_const(0).i32_atomic_store(m32());
                    a32(s, G_RDI);
                    s.i32_const(-1)
                        .memory_atomic_notify(m32())
                        .drop()
                        .end()
                        .call(spawn + 1)
                        .unreachable();
                }
                None => {
                    s.i32_const(0).i32_store(m32()).end();
                    s.i32_const(0).call(I_PROC_EXIT).unreachable();
                }
            }
        }
        FutexWait if locked => {
            // futex_wait_abs(addr, value, abstime): wait32, without a timeout or until
            // the absolute realtime `abstime` ({int64 sec; int32 nsec})
            s.i64_const(-1).local_set(8);
            a32(s, G_RDX);
            s.if_(BlockType::Empty);
            s.i32_const(0);
            read_clock(s);
            s.drop();
            a32(s, G_RDX);
            s.i64_load(m64()).i64_const(1_000_000_000).i64_mul();
            a32(s, G_RDX);
            s.i64_load32_s(MemArg { offset: 8, ..m32() })
                .i64_add()
                .local_get(7)
                .i64_sub()
                .local_tee(8)
                .i64_const(0)
                .i64_le_s()
                .if_(BlockType::Empty);
            // the time has passed: EAGAIN if the value differs, else ETIMEDOUT
            a32(s, G_RDI);
            s.i32_atomic_load(m32());
            a32(s, G_RSI);
            s.i32_ne()
                .i64_extend_i32_u()
                .i64_const(EAGAIN as i64 - ETIMEDOUT as i64)
                .i64_mul()
                .i64_const(ETIMEDOUT as i64)
                .i64_add();
            early_return(s, false);
            s.end().end();
            // the host is told of the wait: 1 without a deadline (or one more than a
            // minute away), 0 with one
            if let Some(wait) = rt.wait {
                s.local_get(8)
                    .i64_const(60_000_000_000)
                    .i64_gt_u()
                    .call(wait);
            }
            // 0 woken, 1 not equal, 2 timed out
            a32(s, G_RDI);
            a32(s, G_RSI);
            s.local_get(8).memory_atomic_wait32(m32()).local_set(1);
            if let Some(wait) = rt.wait {
                s.i32_const(-1).call(wait);
            }
            s.local_get(1)
                .if_(BlockType::Result(ValType::I32))
                .i32_const(EAGAIN)
                .i32_const(ETIMEDOUT)
                .local_get(1)
                .i32_const(1)
                .i32_eq()
                .select()
                .else_()
                .i32_const(0)
                .end();
        }
        FutexWake if locked => {
            // futex_wake(addr, nwake, *count)
            a32(s, G_RDI);
            a32(s, G_RSI);
            s.local_tee(1)
                .i32_const(0)
                .local_get(1)
                .i32_const(0)
                .i32_gt_s()
                .select()
                .memory_atomic_notify(m32())
                .local_set(1);
            a32(s, G_RDX);
            s.if_(BlockType::Empty);
            a32(s, G_RDX);
            s.local_get(1).i32_store(m32()).end();
            s.i32_const(0);
        }
        FutexWait => {
            // futex_wait_abs(addr, value, abstime): nothing else could wake it
            a32(s, G_RDI);
            s.i32_load(m32());
            a32(s, G_RSI);
            s.i32_ne()
                .if_(BlockType::Result(ValType::I32))
                .i32_const(EAGAIN)
                .else_()
                .i32_const(ETIMEDOUT)
                .i32_const(EDEADLK);
            a32(s, G_RDX);
            s.select().end();
        }
        FutexWake => {
            a32(s, G_RDX);
            s.i32_const(0).i32_store(m32()).i32_const(0);
        }
        Create => {
            // a fresh number (atomic: threads create too)
            s.i32_const(0)
                .i32_const(1)
                .i32_atomic_rmw_add(at(HANDLES_AT))
                .i32_const(1)
                .i32_add()
                .local_set(1);
            a32(s, G_RDI);
            s.local_get(1).i32_store(m32()).i32_const(0);
        }
        Dyncode => {
            let words = dyncode_words();
            sc(s, 0);
            s.i32_const(DYNCODE_WORDS).i32_store(m32());
            sc(s, 4);
            s.i32_const(words.len() as i32)
                .i32_store(m32())
                .i32_const(2);
            sc(s, 0);
            s.i32_const(1);
            sc(s, 8);
            s.call(I_FD_WRITE).drop().unreachable();
        }
        Ret(e) => {
            s.i32_const(e);
        }
        k if k.on_paths() => irt_path(s, k, rt),
        _ => unreachable!("every IRT function has a body"),
    }
    if (translator || rt.path_open.is_some()) && matches!(k, Write | Seek | Close) {
        s.end();
        if k == Close {
            s.end();
        }
    }
    s.i64_extend_i32_u();
}

/// `nacl_irt_query(name, table, tablesize)`: the directory's interface of that name
/// fills the table when it fits; the result is its size, else 0.
fn irt_query(s: &mut InstructionSink<'_>) {
    // locals: 1 entry, 2 name, 3 i, 4 byte
    s.i32_const(DIRECTORY).local_set(1);
    s.block(BlockType::Result(ValType::I32)); // the result
    s.loop_(BlockType::Empty); // entries
    s.local_get(1)
        .i32_load(m32())
        .local_tee(2)
        .i32_eqz()
        .if_(BlockType::Empty)
        .i32_const(0)
        .br(2)
        .end();
    s.i32_const(0).local_set(3);
    s.block(BlockType::Empty); // a mismatch
    s.loop_(BlockType::Empty); // bytes
    s.local_get(2)
        .local_get(3)
        .i32_add()
        .i32_load8_u(m8())
        .local_tee(4);
    a32(s, G_RDI);
    s.local_get(3).i32_add().i32_load8_u(m8()).i32_ne().br_if(1);
    s.local_get(4).if_(BlockType::Empty);
    s.local_get(3).i32_const(1).i32_add().local_set(3).br(1);
    s.end();
    // the names match: the table when it fits
    s.local_get(1)
        .i32_load(MemArg { offset: 4, ..m32() })
        .local_tee(4);
    a32(s, G_RDX);
    s.i32_gt_u().if_(BlockType::Empty).i32_const(0).br(4).end();
    a32(s, G_RSI);
    s.local_get(1)
        .i32_load(MemArg { offset: 8, ..m32() })
        .local_get(4)
        .memory_copy(0, 0)
        .local_get(4)
        .br(3);
    s.end().end(); // bytes, mismatch
    s.local_get(1).i32_const(12).i32_add().local_set(1).br(0);
    s.end(); // entries
    s.unreachable().end();
}

/// `fstat(fd, struct stat *)`: NaCl's 104-byte stat from WASI's filestat (dev @0, ino @8,
/// filetype u8 @16, nlink @24, size @32, atim @40, mtim @48, ctim @56); a stream with no
/// filestat gets the mode of its fdstat's filetype. Leaves the errno (no early return:
/// the pre-IRT `fstat` syscall negates what this leaves).
fn irt_fstat(s: &mut InstructionSink<'_>) {
    // local 5: the filestat
    sc(s, S_FILESTAT);
    s.local_set(5);
    s.block(BlockType::Result(ValType::I32));
    a32(s, G_RDI);
    s.local_get(5).call(I_FD_FILESTAT_GET).local_tee(2);
    s.if_(BlockType::Empty);
    a32(s, G_RDI);
    sc(s, S_FDSTAT);
    s.call(I_FD_FDSTAT_GET).if_(BlockType::Empty).local_get(2);
    wasi_errno(s);
    s.br(2).end();
    s.local_get(5).i32_const(0).i32_const(64).memory_fill(0);
    s.local_get(5);
    sc(s, S_FDSTAT);
    s.i32_load8_u(m8())
        .i32_store8(MemArg { offset: 16, ..m8() });
    s.end();
    put_stat(s);
    s.end();
}

/// NaCl's stat at `%rsi` from the WASI filestat at local 5; leaves 0.
fn put_stat(s: &mut InstructionSink<'_>) {
    // local 1: the stat
    a32(s, G_RSI);
    s.local_tee(1).i32_const(0).i32_const(104).memory_fill(0);
    for (to, from) in [(0, 0), (8, 8), (40, 32)] {
        s.local_get(1)
            .local_get(5)
            .i64_load(MemArg {
                offset: from,
                ..m64()
            })
            .i64_store(MemArg {
                offset: to,
                ..m64()
            });
    }
    s.local_get(1)
        .local_get(5)
        .i32_load8_u(MemArg { offset: 16, ..m8() })
        .local_tee(3)
        .i32_const(0)
        .local_get(3)
        .i32_const(8)
        .i32_lt_u()
        .select()
        .i32_const(2)
        .i32_shl()
        .i32_const(MODES_AT)
        .i32_add()
        .i32_load(m32())
        .i32_store(MemArg {
            offset: 16,
            ..m32()
        });
    s.local_get(1)
        .local_get(5)
        .i64_load(MemArg {
            offset: 24,
            ..m64()
        })
        .i32_wrap_i64()
        .i32_store(MemArg {
            offset: 20,
            ..m32()
        });
    s.local_get(1).i32_const(4096).i32_store(MemArg {
        offset: 48,
        ..m32()
    });
    s.local_get(1)
        .local_get(5)
        .i64_load(MemArg {
            offset: 32,
            ..m64()
        })
        .i64_const(511)
        .i64_add()
        .i64_const(9)
        .i64_shr_u()
        .i32_wrap_i64()
        .i32_store(MemArg {
            offset: 52,
            ..m32()
        });
    // the times as {int64 sec; int64 nsec}
    for (to, from) in [(56u64, 40u64), (72, 48), (88, 56)] {
        s.local_get(5)
            .i64_load(MemArg {
                offset: from,
                ..m64()
            })
            .local_set(7);
        s.local_get(1)
            .local_get(7)
            .i64_const(1_000_000_000)
            .i64_div_u()
            .i64_store(MemArg {
                offset: to,
                ..m64()
            });
        s.local_get(1)
            .local_get(7)
            .i64_const(1_000_000_000)
            .i64_rem_u()
            .i64_store(MemArg {
                offset: to + 8,
                ..m64()
            });
    }
    s.i32_const(0);
}

/// `mmap(void **addr, len, prot, flags, fd, off)`: anonymous mappings only (`ENODEV`
/// for files; `MAP_FIXED` is `EINVAL`), placed at 64 KiB above the break and the
/// mappings so far (the hint is not followed), zeroed; the memory grows to hold them.
fn irt_mmap(s: &mut InstructionSink<'_>, locked: bool) {
    const MAP_FIXED: i32 = 0x10;
    const MAP_ANONYMOUS: i32 = 0x20;
    let fail = |s: &mut InstructionSink<'_>, e: i32| {
        s.if_(BlockType::Empty).i64_const(e as i64);
        early_return(s, locked);
        s.end();
    };
    a32(s, G_RCX);
    s.i32_const(MAP_ANONYMOUS).i32_and().i32_eqz();
    fail(s, ENODEV);
    a32(s, G_RCX);
    s.i32_const(MAP_FIXED).i32_and();
    fail(s, EINVAL as i32);
    // local 7: the length rounded to 64 KiB (0 is EINVAL)
    a32(s, G_RSI);
    s.i64_extend_i32_u()
        .i64_const(0xffff)
        .i64_add()
        .i64_const(-0x1_0000)
        .i64_and()
        .local_tee(7)
        .i64_eqz();
    fail(s, EINVAL as i32);
    // local 1: the start, max(break, top) rounded up; local 8: the end
    unmapped_start(s, 8, 1);
    s.local_get(8).local_get(7).i64_add().local_tee(8);
    s.i64_const(1 << 32).i64_ge_u();
    fail(s, ENOMEM);
    grow_to(s, 8);
    s.i32_eqz();
    fail(s, ENOMEM);
    s.local_get(1)
        .i32_const(0)
        .local_get(7)
        .i32_wrap_i64()
        .memory_fill(0);
    s.i32_const(0)
        .local_get(8)
        .i32_wrap_i64()
        .i32_store(at(MAPTOP_AT));
    a32(s, G_RDI);
    s.local_get(1).i32_store(m32()).i32_const(0);
}

/// Sets i64 local `wide` and i32 local `narrow` to the first 64 KiB page above both the
/// break and every mapping (where new memory can go).
pub(super) fn unmapped_start(s: &mut InstructionSink<'_>, wide: u32, narrow: u32) {
    s.i32_const(0)
        .i32_load(at(BRK_AT))
        .i32_const(0)
        .i32_load(at(MAPTOP_AT))
        .i32_const(0)
        .i32_load(at(BRK_AT))
        .i32_const(0)
        .i32_load(at(MAPTOP_AT))
        .i32_gt_u()
        .select()
        .i64_extend_i32_u()
        .i64_const(0xffff)
        .i64_add()
        .i64_const(-0x1_0000)
        .i64_and()
        .local_tee(wide)
        .i32_wrap_i64()
        .local_set(narrow);
}

// ---------------------------------------------------------------------------------------
// Files: paths onto WASI's preopened directories.

const ENOENT: i32 = 2;
const ENOTDIR: i32 = 20;
const ERANGE: i32 = 34;
const ENAMETOOLONG: i32 = 36;

/// Pushes the relative path (address, length) [`Helper::Resolve`] left in `buf`.
fn rel(s: &mut InstructionSink<'_>, buf: i32) {
    s.i32_const(buf)
        .i32_load(m32())
        .i32_const(buf)
        .i32_load(MemArg { offset: 4, ..m32() });
}

/// Resolves the path in register `reg` into `buf` and leaves its directory fd in local
/// `dir`; `body` runs when it resolved (it leaves NaCl's errno), else the result is the
/// resolution's errno.
fn resolved(
    s: &mut InstructionSink<'_>,
    rt: &Runtime,
    reg: u32,
    buf: i32,
    dir: u32,
    body: impl FnOnce(&mut InstructionSink<'_>),
) {
    a32(s, reg);
    s.i32_const(buf)
        .call(rt.helper(Helper::Resolve))
        .local_tee(dir)
        .i32_const(0)
        .i32_lt_s()
        .if_(BlockType::Result(ValType::I32))
        .i32_const(0)
        .local_get(dir)
        .i32_sub()
        .else_();
    body(s);
    s.end();
}

/// The functions on paths (`irt.h`'s `nacl_irt_filename` and `nacl_irt_dev_filename`),
/// over WASI's `path_*` functions. Leaves NaCl's errno (i32).
fn irt_path(s: &mut InstructionSink<'_>, k: Irt, rt: &Runtime) {
    // locals: 2 the directory fd (then the WASI errno), 3 the second one, 4 5 6 scratch,
    // 7 8 i64 scratch
    match k {
        Open => {
            // open(path, oflag, mode, *newfd): NaCl's flags are Linux's (O_ACCMODE 3,
            // O_CREAT 0x40, O_EXCL 0x80, O_TRUNC 0x200, O_APPEND 0x400, O_NONBLOCK 0x800,
            // O_SYNC 0x1000, O_DIRECTORY 0x10000); the mode is ignored (WASI has none)
            a32(s, G_RSI);
            s.i32_const(3)
                .i32_and()
                .local_tee(4)
                .i32_const(3)
                .i32_eq()
                .if_(BlockType::Result(ValType::I32))
                .i32_const(EINVAL as i32)
                .else_();
            resolved(s, rt, G_RDI, PATH_A, 2, |s| {
                let flag = |s: &mut InstructionSink<'_>, bit: i32, to: i32| {
                    a32(s, G_RSI);
                    s.i32_const(bit)
                        .i32_and()
                        .i32_const(0)
                        .i32_ne()
                        .i32_const(to)
                        .i32_shl();
                };
                // WASI oflags: CREAT 1, DIRECTORY 2, EXCL 4, TRUNC 8
                flag(s, 0x40, 0);
                flag(s, 0x10000, 1);
                s.i32_or();
                flag(s, 0x80, 2);
                s.i32_or();
                flag(s, 0x200, 3);
                s.i32_or().local_set(3);
                // fdflags: APPEND 1, NONBLOCK 4, SYNC 16
                flag(s, 0x400, 0);
                flag(s, 0x800, 2);
                s.i32_or();
                flag(s, 0x1000, 4);
                s.i32_or().local_set(6);
                // rights: what the directory passes on, with FD_READ (2) and FD_WRITE
                // (64) as the access mode says
                s.i64_const(0x3fff_ffff).local_set(7);
                s.local_get(2);
                sc(s, S_FDSTAT);
                s.call(I_FD_FDSTAT_GET).i32_eqz().if_(BlockType::Empty);
                sc(s, S_FDSTAT);
                s.i64_load(MemArg {
                    offset: 16,
                    ..m64()
                })
                .local_set(7)
                .end();
                s.local_get(7)
                    .i64_const(!66)
                    .i64_and()
                    .i64_const(2)
                    .i64_const(0)
                    .local_get(4)
                    .i32_const(1)
                    .i32_ne()
                    .select()
                    .i64_or()
                    .i64_const(64)
                    .i64_const(0)
                    .local_get(4)
                    .i32_const(0)
                    .i32_ne()
                    .select()
                    .i64_or()
                    .local_set(8);
                s.local_get(2).i32_const(1);
                rel(s, PATH_A);
                s.local_get(3).local_get(8).local_get(7).local_get(6);
                sc(s, S_WORD);
                s.call(I_PATH_OPEN);
                on_success(s, |s| {
                    a32(s, G_RCX);
                    sc(s, S_WORD);
                    s.i32_load(m32()).i32_store(m32());
                });
            });
            s.end();
        }
        Stat | Lstat | Access | Chdir => {
            resolved(s, rt, G_RDI, PATH_A, 2, |s| {
                s.local_get(2).i32_const(i32::from(k != Lstat));
                rel(s, PATH_A);
                sc(s, S_FILESTAT);
                s.local_tee(5).call(I_PATH_FILESTAT_GET);
                match k {
                    Access => on_success(s, |_| {}),
                    Chdir => {
                        // a directory becomes the current one (its absolute path)
                        s.local_tee(2)
                            .if_(BlockType::Result(ValType::I32))
                            .local_get(2);
                        wasi_errno(s);
                        s.else_()
                            .local_get(5)
                            .i32_load8_u(MemArg { offset: 16, ..m8() })
                            .i32_const(3)
                            .i32_ne()
                            .if_(BlockType::Result(ValType::I32))
                            .i32_const(ENOTDIR)
                            .else_()
                            .i32_const(PATH_A)
                            .i32_load(MemArg { offset: 8, ..m32() })
                            .local_tee(4)
                            .i32_const(CWD_MAX)
                            .i32_gt_u()
                            .if_(BlockType::Result(ValType::I32))
                            .i32_const(ENAMETOOLONG)
                            .else_()
                            .i32_const(CWD)
                            .i32_const(PATH_A + PATH_TEXT)
                            .local_get(4)
                            .memory_copy(0, 0)
                            .i32_const(0)
                            .local_get(4)
                            .i32_store(at(CWD_LEN_AT))
                            .i32_const(0)
                            .end()
                            .end()
                            .end();
                    }
                    _ => {
                        s.local_tee(2)
                            .if_(BlockType::Result(ValType::I32))
                            .local_get(2);
                        wasi_errno(s);
                        s.else_();
                        put_stat(s);
                        s.end();
                    }
                }
            });
        }
        Mkdir | Rmdir | Unlink => {
            resolved(s, rt, G_RDI, PATH_A, 2, |s| {
                s.local_get(2);
                rel(s, PATH_A);
                s.call(match k {
                    Mkdir => I_PATH_CREATE_DIRECTORY,
                    Rmdir => I_PATH_REMOVE_DIRECTORY,
                    _ => I_PATH_UNLINK_FILE,
                });
                on_success(s, |_| {});
            });
        }
        Rename | Link => {
            resolved(s, rt, G_RDI, PATH_A, 3, |s| {
                resolved(s, rt, G_RSI, PATH_B, 4, |s| {
                    s.local_get(3);
                    if k == Link {
                        s.i32_const(0);
                    }
                    rel(s, PATH_A);
                    s.local_get(4);
                    rel(s, PATH_B);
                    s.call(if k == Link {
                        I_PATH_LINK
                    } else {
                        I_PATH_RENAME
                    });
                    on_success(s, |_| {});
                });
            });
        }
        Symlink => {
            // symlink(target, path): the target as the program wrote it
            resolved(s, rt, G_RSI, PATH_A, 2, |s| {
                s.i32_const(0).local_set(4);
                s.block(BlockType::Empty).loop_(BlockType::Empty);
                a32(s, G_RDI);
                s.local_get(4)
                    .i32_add()
                    .i32_load8_u(m8())
                    .i32_eqz()
                    .br_if(1)
                    .local_get(4)
                    .i32_const(1)
                    .i32_add()
                    .local_set(4)
                    .br(0);
                s.end().end();
                a32(s, G_RDI);
                s.local_get(4).local_get(2);
                rel(s, PATH_A);
                s.call(I_PATH_SYMLINK);
                on_success(s, |_| {});
            });
        }
        Readlink => {
            // readlink(path, buf, count, *nread)
            resolved(s, rt, G_RDI, PATH_A, 2, |s| {
                s.local_get(2);
                rel(s, PATH_A);
                a32(s, G_RSI);
                a32(s, G_RDX);
                sc(s, S_WORD);
                s.call(I_PATH_READLINK);
                on_success(s, |s| {
                    a32(s, G_RCX);
                    sc(s, S_WORD);
                    s.i32_load(m32()).i32_store(m32());
                });
            });
        }
        Getcwd => {
            // getcwd(buf, len): the current directory and its NUL
            s.i32_const(0)
                .i32_load(at(CWD_LEN_AT))
                .local_tee(4)
                .global_get(G_RSI)
                .i64_const(0xffff_ffff)
                .i64_and()
                .i32_wrap_i64()
                .i32_ge_u()
                .if_(BlockType::Result(ValType::I32))
                .i32_const(ERANGE)
                .else_();
            a32(s, G_RDI);
            s.i32_const(CWD).local_get(4).memory_copy(0, 0);
            a32(s, G_RDI);
            s.local_get(4)
                .i32_add()
                .i32_const(0)
                .i32_store8(m8())
                .i32_const(0)
                .end();
        }
        _ => unreachable!("not a function on paths"),
    }
}

/// `normalize(buf, len) -> len`: the absolute path at `buf` normalized in place ("." and
/// ".." taken away, repeated "/" made one, no trailing "/" but for "/" itself).
fn normalize() -> Function {
    // params 0 buf, 1 len; locals 2 read, 3 write, 4 start, 5 n
    let (buf, len, r, w, st, n) = (0, 1, 2, 3, 4, 5);
    let mut f = Function::new([(4, ValType::I32)]);
    let s = &mut f.instructions();
    let byte_at = |s: &mut InstructionSink<'_>, i: u32| {
        s.local_get(buf).local_get(i).i32_add().i32_load8_u(m8());
    };
    s.block(BlockType::Empty).loop_(BlockType::Empty); // components
                                                       // the slashes
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(r).local_get(len).i32_ge_u().br_if(1);
    byte_at(s, r);
    s.i32_const(b'/' as i32).i32_ne().br_if(1);
    s.local_get(r).i32_const(1).i32_add().local_set(r).br(0);
    s.end().end();
    s.local_get(r).local_get(len).i32_ge_u().br_if(1);
    s.local_get(r).local_set(st);
    // the name
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(r).local_get(len).i32_ge_u().br_if(1);
    byte_at(s, r);
    s.i32_const(b'/' as i32).i32_eq().br_if(1);
    s.local_get(r).i32_const(1).i32_add().local_set(r).br(0);
    s.end().end();
    s.local_get(r).local_get(st).i32_sub().local_set(n);
    // "."
    s.local_get(n).i32_const(1).i32_eq();
    byte_at(s, st);
    s.i32_const(b'.' as i32).i32_eq().i32_and().br_if(0);
    // "..": the last component written goes
    s.local_get(n).i32_const(2).i32_eq();
    s.local_get(buf)
        .local_get(st)
        .i32_add()
        .i32_load16_u(MemArg { align: 0, ..m32() })
        .i32_const(0x2e2e)
        .i32_eq()
        .i32_and()
        .if_(BlockType::Empty);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(w).i32_eqz().br_if(1);
    s.local_get(w).i32_const(1).i32_sub().local_set(w);
    byte_at(s, w);
    s.i32_const(b'/' as i32).i32_eq().br_if(1);
    s.br(0);
    s.end().end();
    s.br(1);
    s.end();
    // "/name" (the output never overtakes the input)
    s.local_get(buf)
        .local_get(w)
        .i32_add()
        .i32_const(b'/' as i32)
        .i32_store8(m8());
    s.local_get(w).i32_const(1).i32_add().local_set(w);
    s.local_get(buf)
        .local_get(w)
        .i32_add()
        .local_get(buf)
        .local_get(st)
        .i32_add()
        .local_get(n)
        .memory_copy(0, 0);
    s.local_get(w).local_get(n).i32_add().local_set(w);
    s.br(0);
    s.end().end();
    s.local_get(w).i32_eqz().if_(BlockType::Empty);
    s.local_get(buf).i32_const(b'/' as i32).i32_store8(m8());
    s.i32_const(1).local_set(w);
    s.end();
    s.local_get(w).end();
    f
}

/// `resolve(path, buf) -> fd`: the C string `path` made absolute (against the current
/// directory) and normalized at `buf + 16`, then split at the preopened directory with
/// the longest name that holds it: its fd is the result, the rest (or ".") goes to
/// `buf`'s first words. `-EACCES` without preopened directories (a sandbox without file
/// access), `-ENOENT` for a path under none of them.
fn resolve(rt: &Runtime) -> Function {
    // params 0 path, 1 buf; locals 2 n, 3 text, 4 len, 5 i, 6 entry, 7 name, 8 name
    // length, 9 match, 10 best, 11 best length, 12 j
    let (path, buf, n, text, len, i, e, name, nlen, m, best, blen, j) =
        (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
    let mut f = Function::new([(11, ValType::I32)]);
    let s = &mut f.instructions();
    s.i32_const(0)
        .i32_load(at(PREOPENS_AT))
        .i32_eqz()
        .if_(BlockType::Empty)
        .i32_const(-EACCES)
        .return_()
        .end();
    // n = strnlen(path, PATH_MAX + 1)
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(n).i32_const(PATH_MAX).i32_gt_u().br_if(1);
    s.local_get(path)
        .local_get(n)
        .i32_add()
        .i32_load8_u(m8())
        .i32_eqz()
        .br_if(1);
    s.local_get(n).i32_const(1).i32_add().local_set(n).br(0);
    s.end().end();
    s.local_get(n)
        .i32_const(PATH_MAX)
        .i32_gt_u()
        .if_(BlockType::Empty)
        .i32_const(-ENAMETOOLONG)
        .return_()
        .end();
    s.local_get(n)
        .i32_eqz()
        .if_(BlockType::Empty)
        .i32_const(-ENOENT)
        .return_()
        .end();
    s.local_get(buf)
        .i32_const(PATH_TEXT)
        .i32_add()
        .local_set(text);
    s.local_get(path)
        .i32_load8_u(m8())
        .i32_const(b'/' as i32)
        .i32_eq()
        .if_(BlockType::Empty);
    s.local_get(text)
        .local_get(path)
        .local_get(n)
        .memory_copy(0, 0);
    s.local_get(n).local_set(len);
    s.else_();
    // relative: the current directory, "/", the path
    s.i32_const(0).i32_load(at(CWD_LEN_AT)).local_tee(len);
    s.i32_const(1)
        .i32_add()
        .local_get(n)
        .i32_add()
        .i32_const(PATH_MAX)
        .i32_gt_u()
        .if_(BlockType::Empty)
        .i32_const(-ENAMETOOLONG)
        .return_()
        .end();
    s.local_get(text)
        .i32_const(CWD)
        .local_get(len)
        .memory_copy(0, 0);
    s.local_get(text)
        .local_get(len)
        .i32_add()
        .i32_const(b'/' as i32)
        .i32_store8(m8());
    s.local_get(text)
        .local_get(len)
        .i32_add()
        .i32_const(1)
        .i32_add()
        .local_get(path)
        .local_get(n)
        .memory_copy(0, 0);
    s.local_get(len)
        .i32_const(1)
        .i32_add()
        .local_get(n)
        .i32_add()
        .local_set(len);
    s.end();
    s.local_get(text)
        .local_get(len)
        .call(rt.helper(Helper::Normalize))
        .local_set(len);
    s.local_get(buf)
        .local_get(len)
        .i32_store(MemArg { offset: 8, ..m32() });
    // the longest preopen name that holds it
    s.i32_const(-1).local_set(best);
    s.i32_const(-1).local_set(blen);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(i)
        .i32_const(0)
        .i32_load(at(PREOPENS_AT))
        .i32_ge_u()
        .br_if(1);
    s.local_get(i)
        .i32_const(4)
        .i32_shl()
        .i32_const(PREOPENS)
        .i32_add()
        .local_tee(e)
        .i32_load(MemArg { offset: 4, ..m32() })
        .local_set(name);
    s.local_get(e)
        .i32_load(MemArg { offset: 8, ..m32() })
        .local_set(nlen);
    s.i32_const(-1).local_set(m);
    s.local_get(nlen)
        .i32_const(1)
        .i32_eq()
        .if_(BlockType::Empty);
    s.i32_const(0).local_set(m); // "/" holds everything
    s.else_();
    s.local_get(len)
        .local_get(nlen)
        .i32_ge_u()
        .if_(BlockType::Empty);
    // equal bytes, then the end or a "/"
    s.i32_const(0).local_set(j);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(j).local_get(nlen).i32_ge_u().br_if(1);
    s.local_get(text)
        .local_get(j)
        .i32_add()
        .i32_load8_u(m8())
        .local_get(name)
        .local_get(j)
        .i32_add()
        .i32_load8_u(m8())
        .i32_ne()
        .br_if(1);
    s.local_get(j).i32_const(1).i32_add().local_set(j).br(0);
    s.end().end();
    s.local_get(j).local_get(nlen).i32_eq();
    s.local_get(len)
        .local_get(nlen)
        .i32_eq()
        .local_get(text)
        .local_get(nlen)
        .i32_add()
        .i32_load8_u(m8())
        .i32_const(b'/' as i32)
        .i32_eq()
        .i32_or()
        .i32_and()
        .if_(BlockType::Empty)
        .local_get(nlen)
        .local_set(m)
        .end();
    s.end().end();
    s.local_get(m)
        .local_get(blen)
        .i32_gt_s()
        .if_(BlockType::Empty)
        .local_get(e)
        .i32_load(m32())
        .local_set(best)
        .local_get(m)
        .local_set(blen)
        .end();
    s.local_get(i).i32_const(1).i32_add().local_set(i).br(0);
    s.end().end();
    s.local_get(best)
        .i32_const(0)
        .i32_lt_s()
        .if_(BlockType::Empty)
        .i32_const(-ENOENT)
        .return_()
        .end();
    // the rest after the name and its "/", or "."
    s.local_get(len)
        .local_get(blen)
        .i32_sub()
        .i32_const(1)
        .i32_sub()
        .local_tee(n)
        .i32_const(0)
        .i32_le_s()
        .if_(BlockType::Empty);
    s.local_get(buf).i32_const(DOT).i32_store(m32());
    s.local_get(buf)
        .i32_const(1)
        .i32_store(MemArg { offset: 4, ..m32() });
    s.else_();
    s.local_get(buf)
        .local_get(text)
        .local_get(blen)
        .i32_add()
        .i32_const(1)
        .i32_add()
        .i32_store(m32());
    s.local_get(buf)
        .local_get(n)
        .i32_store(MemArg { offset: 4, ..m32() });
    s.end();
    s.local_get(best).end();
    f
}

/// `preopens()`: records WASI's preopened directories (fds 3, 4, … until
/// `fd_prestat_get` fails), their names made absolute ("/" before a relative one, as
/// `--dir data` is seen at `/data`) and normalized.
fn preopens(rt: &Runtime) -> Function {
    // locals: 0 fd, 1 n, 2 used, 3 dst, 4 len, 5 entry
    let (fd, n, used, dst, len, e) = (0, 1, 2, 3, 4, 5);
    const PRESTAT: i32 = SCRATCH + 0x30;
    let mut f = Function::new([(6, ValType::I32)]);
    let s = &mut f.instructions();
    s.i32_const(3).local_set(fd);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.i32_const(0)
        .i32_load(at(PREOPENS_AT))
        .i32_const(MAX_PREOPENS)
        .i32_ge_u()
        .br_if(1);
    s.local_get(fd)
        .i32_const(PRESTAT)
        .call(I_FD_PRESTAT_GET)
        .br_if(1);
    s.i32_const(PRESTAT)
        .i32_load8_u(m8())
        .i32_eqz()
        .if_(BlockType::Empty);
    s.i32_const(PRESTAT)
        .i32_load(MemArg { offset: 4, ..m32() })
        .local_set(n);
    s.i32_const(0).i32_load(at(NAMES_USED_AT)).local_set(used);
    s.i32_const(PREOPEN_NAMES)
        .local_get(used)
        .i32_add()
        .local_tee(dst)
        .local_get(n)
        .i32_add()
        .i32_const(1)
        .i32_add()
        .i32_const(FILE_WORDS)
        .i32_le_u()
        .local_get(n)
        .i32_const(FILE_WORDS)
        .i32_lt_u()
        .i32_and()
        .if_(BlockType::Empty);
    s.local_get(dst).i32_const(b'/' as i32).i32_store8(m8());
    s.local_get(fd)
        .local_get(dst)
        .i32_const(1)
        .i32_add()
        .local_get(n)
        .call(I_FD_PRESTAT_DIR_NAME)
        .i32_eqz()
        .if_(BlockType::Empty);
    // some hosts count a trailing NUL in the name
    s.local_get(n).i32_const(1).i32_add().local_set(len);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(len).i32_const(1).i32_le_u().br_if(1);
    s.local_get(dst)
        .local_get(len)
        .i32_add()
        .i32_const(1)
        .i32_sub()
        .i32_load8_u(m8())
        .br_if(1);
    s.local_get(len).i32_const(1).i32_sub().local_set(len).br(0);
    s.end().end();
    s.local_get(dst)
        .local_get(len)
        .call(rt.helper(Helper::Normalize))
        .local_set(len);
    s.i32_const(0)
        .i32_load(at(PREOPENS_AT))
        .i32_const(4)
        .i32_shl()
        .i32_const(PREOPENS)
        .i32_add()
        .local_tee(e)
        .local_get(fd)
        .i32_store(m32());
    s.local_get(e)
        .local_get(dst)
        .i32_store(MemArg { offset: 4, ..m32() });
    s.local_get(e)
        .local_get(len)
        .i32_store(MemArg { offset: 8, ..m32() });
    s.i32_const(0)
        .i32_const(0)
        .i32_load(at(PREOPENS_AT))
        .i32_const(1)
        .i32_add()
        .i32_store(at(PREOPENS_AT));
    s.i32_const(0)
        .local_get(used)
        .local_get(n)
        .i32_add()
        .i32_const(1)
        .i32_add()
        .i32_store(at(NAMES_USED_AT));
    s.end().end().end();
    s.local_get(fd).i32_const(1).i32_add().local_set(fd).br(0);
    s.end().end();
    s.end();
    f
}
