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

use super::func::{G_XMM, TY_LIFTED};
use wasm_encoder::{BlockType, Function, MemArg, ValType};

/// The trampoline region's start: table 0's base when the runtime is linked.
pub const TRAMPOLINES: u32 = 0x10000;
/// Syscall numbers with a trampoline adapter (NaCl has fewer than 128).
pub const SYSCALL_SLOTS: u32 = 128;
/// The main thread's stack.
pub const STACK_SIZE: u32 = 8 << 20;
/// Scratch memory of the runtime (iovecs, result words, the argv pointers).
const SCRATCH: i32 = TRAMPOLINES as i32;
const ARGV_TMP: i32 = SCRATCH + 0x100;
const MAX_ARGS: i32 = (0x1_0000 - 0x100) / 4 - 1;

/// NaCl's syscall numbers (`nacl_syscalls.h`) that the runtime implements.
pub const SYS_CLOSE: u32 = 11;
pub const SYS_READ: u32 = 12;
pub const SYS_WRITE: u32 = 13;
pub const SYS_LSEEK: u32 = 14;
pub const SYS_SYSBRK: u32 = 20;
pub const SYS_EXIT: u32 = 30;
pub const SYS_GETPID: u32 = 31;
pub const SYS_SCHED_YIELD: u32 = 32;
pub const SYS_SYSCONF: u32 = 33;
pub const SYS_TLS_INIT: u32 = 82;
pub const SYS_TLS_GET: u32 = 84;
const IMPLEMENTED: &[u32] = &[
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
];

const ENOSYS: i64 = 38;
const EBADF: i64 = 9;
const EINVAL: i64 = 22;
const EIO: i64 = 5;
const ESPIPE: i64 = 29;

/// The WASI functions imported, in import order, with their type indices (see
/// [`types`]).
pub(crate) const IMPORTS: &[(&str, u32)] = &[
    ("fd_write", TY_RW),
    ("fd_read", TY_RW),
    ("fd_close", TY_LIFTED),
    ("proc_exit", TY_EXIT),
    ("args_sizes_get", TY_ARGS),
    ("args_get", TY_ARGS),
];
const I_FD_WRITE: u32 = 0;
const I_FD_READ: u32 = 1;
const I_FD_CLOSE: u32 = 2;
const I_PROC_EXIT: u32 = 3;
const I_ARGS_SIZES_GET: u32 = 4;
const I_ARGS_GET: u32 = 5;

/// Type indices the runtime adds after the translator's four.
pub(crate) const TY_RW: u32 = 4;
pub(crate) const TY_EXIT: u32 = 5;
pub(crate) const TY_ARGS: u32 = 6;
pub(crate) const TY_START: u32 = 7;

/// Globals the runtime adds after the registers, the flag record and the XMM registers.
pub(crate) const G_BRK: u32 = G_XMM + 16;
pub(crate) const G_TLS: u32 = G_XMM + 17;

const G_RAX: u32 = 0;
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
}

fn m32() -> MemArg {
    MemArg {
        offset: 0,
        align: 2,
        target: wasm_encoder::MemArgTarget::Memory(0),
        ordering: None,
    }
}
fn m64() -> MemArg {
    MemArg { align: 3, ..m32() }
}

/// Where the runtime's functions go in the module.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Runtime {
    /// Function index of `_start`; the adapters follow it: `ENOSYS` first, then one per
    /// [`IMPLEMENTED`] syscall.
    pub first: u32,
    /// The first address above the image (64 KiB aligned): the stack's bottom.
    pub image_top: u32,
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
        2 + IMPLEMENTED.len() as u32
    }
    /// Every trampoline address and its adapter.
    pub fn trampolines(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..SYSCALL_SLOTS).map(|n| (TRAMPOLINES + 32 * n, self.adapter(n)))
    }
    /// The initial break, above the stack.
    pub fn initial_break(&self) -> u32 {
        self.image_top + STACK_SIZE
    }

    /// The functions' bodies, in index order.
    pub fn bodies(&self, entry: u32) -> Vec<Function> {
        let mut v = vec![self.start(entry), adapter(enosys)];
        for &n in IMPLEMENTED {
            v.push(adapter(|f| syscall(f, n)));
        }
        v
    }

    /// `_start`: the startup blocks, the registers, then the program's entry.
    fn start(&self, entry: u32) -> Function {
        // locals: 0 argc, 1 strings, 2 info block (IRT era), 3 pre-IRT block, 4 i
        let (argc, strs, info, old, i) = (0, 1, 2, 3, 4);
        let mut f = Function::new([(5, ValType::I32)]);
        let top = self.initial_break() as i32;
        let mut s = f.instructions();
        s.i32_const(SCRATCH + 16)
            .i32_const(SCRATCH + 20)
            .call(I_ARGS_SIZES_GET)
            .drop();
        s.i32_const(SCRATCH + 16).i32_load(m32()).local_set(argc);
        s.local_get(argc)
            .i32_const(MAX_ARGS)
            .i32_gt_u()
            .if_(BlockType::Empty)
            .unreachable()
            .end();
        // the strings at the top of the stack
        s.i32_const(top - 16)
            .i32_const(SCRATCH + 20)
            .i32_load(m32())
            .i32_sub()
            .i32_const(-16)
            .i32_and()
            .local_set(strs);
        s.i32_const(ARGV_TMP)
            .local_get(strs)
            .call(I_ARGS_GET)
            .drop();
        // info = (strs - 4 * (argc + 9)) & -16; old = (info - 4 * argc - 32) & -16
        s.local_get(strs)
            .local_get(argc)
            .i32_const(9)
            .i32_add()
            .i32_const(2)
            .i32_shl()
            .i32_sub()
            .i32_const(-16)
            .i32_and()
            .local_tee(info)
            .local_get(argc)
            .i32_const(2)
            .i32_shl()
            .i32_sub()
            .i32_const(32)
            .i32_sub()
            .i32_const(-16)
            .i32_and()
            .local_set(old);
        // info: fini 0, envc 0, argc; old: argc as 64 bits
        s.local_get(info).i32_const(0).i32_store(m32());
        s.local_get(info)
            .i32_const(4)
            .i32_add()
            .i32_const(0)
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
        // argv into both
        s.i32_const(0).local_set(i);
        s.block(BlockType::Empty).loop_(BlockType::Empty);
        s.local_get(i).local_get(argc).i32_ge_u().br_if(1);
        for (block, at) in [(info, 12), (old, 8)] {
            s.local_get(block)
                .i32_const(at)
                .i32_add()
                .local_get(i)
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
        // then argv's NULL, an empty envp (its NULL) and an empty auxv (AT_NULL): the
        // words after argv are still zero (fresh memory), written anyway
        for (block, at) in [(info, 12), (old, 8)] {
            for k in 0..4 {
                s.local_get(block)
                    .i32_const(at + 4 * k)
                    .i32_add()
                    .local_get(argc)
                    .i32_const(2)
                    .i32_shl()
                    .i32_add()
                    .i32_const(0)
                    .i32_store(m32());
            }
        }
        s.local_get(old).i64_extend_i32_u().global_set(G_RSP);
        s.local_get(info).i64_extend_i32_u().global_set(G_RDI);
        s.i32_const(self.initial_break() as i32).global_set(G_BRK);
        // The entry never returns (it calls exit); returning is a crash, as in NaCl.
        s.i32_const(0).call(entry).drop().unreachable().end();
        f
    }
}

/// An adapter: pops the return address its call pushed, runs `body` (which leaves the
/// i64 result), puts the result in `%rax` and returns to the caller's return address.
fn adapter(body: impl FnOnce(&mut Function)) -> Function {
    // param 0: the return address; locals 1, 2 scratch i32
    let mut f = Function::new([(2, ValType::I32)]);
    f.instructions()
        .global_get(G_RSP)
        .i64_const(8)
        .i64_add()
        .global_set(G_RSP);
    body(&mut f);
    f.instructions().global_set(G_RAX).local_get(0).end();
    f
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
    // WASI's EBADF is 8, EINVAL 28; everything else is reported as EIO
    f.instructions()
        .local_set(1)
        .i64_const(-EBADF)
        .i64_const(-EINVAL)
        .i64_const(-EIO)
        .local_get(1)
        .i32_const(28)
        .i32_eq()
        .select()
        .local_get(1)
        .i32_const(8)
        .i32_eq()
        .select();
}

fn syscall(f: &mut Function, n: u32) {
    match n {
        SYS_WRITE | SYS_READ => {
            // write(fd, buf, count) / read(fd, buf, count): one iovec, the count done
            f.instructions().i32_const(SCRATCH);
            arg(f, G_RSI);
            f.instructions().i32_store(m32()).i32_const(SCRATCH + 4);
            arg(f, G_RDX);
            f.instructions().i32_store(m32());
            arg(f, G_RDI);
            f.instructions()
                .i32_const(SCRATCH)
                .i32_const(1)
                .i32_const(SCRATCH + 8)
                .call(if n == SYS_WRITE {
                    I_FD_WRITE
                } else {
                    I_FD_READ
                })
                .local_tee(2)
                .if_(BlockType::Result(ValType::I64))
                .local_get(2);
            errno(f);
            f.instructions()
                .else_()
                .i32_const(SCRATCH + 8)
                .i32_load(m32())
                .i64_extend_i32_u()
                .end();
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
        // The standard streams do not seek.
        SYS_LSEEK => {
            f.instructions().i64_const(-ESPIPE);
        }
        SYS_SYSBRK => {
            // sysbrk(new): 0 asks for the break; else grow the memory to hold it (the
            // break stays when it cannot) and move the break. Returns the break.
            let s = &mut f.instructions();
            s.global_get(G_RDI).i32_wrap_i64().local_tee(1);
            s.if_(BlockType::Empty);
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
                .global_get(G_BRK)
                .i64_extend_i32_u()
                .global_set(G_RAX)
                .local_get(0)
                .return_()
                .end()
                .end();
            s.local_get(1).global_set(G_BRK);
            s.end();
            s.global_get(G_BRK).i64_extend_i32_u();
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
