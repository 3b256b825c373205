//! PNaCl's compiler (Subzero, `pnacl-sz.nexe`) on the runtime: the IRT's private
//! interface `nacl-irt-private-pnacl-translator-compile-0.1`, the one thread the compiler
//! starts, and the object file it writes. And PNaCl's linker (`pnacl-ld.nexe`):
//! `nacl-irt-private-pnacl-translator-link-0.1` and `nacl-irt-resource-open-0.1` over
//! WASI's `path_open` (its objects and resources in preopened directories), the nexe it
//! writes kept in memory as the object is.
//!
//! - `serve_translate_request(funcs)` serves one request, as NaCl's command-line IRT did
//!   from its environment: `funcs->init_callback(0 threads, [OBJECT_FD], 1, flags,
//!   nflags)` with the program's arguments as the compiler's flags, then
//!   `funcs->data_callback(buf, n)` for each chunk of the pexe read from stdin, then
//!   `funcs->end_callback()`. A callback's error string goes to stderr and the program
//!   exits 1.
//! - The object file is the descriptor [`OBJECT_FD`], kept in memory (the compiler seeks
//!   back to write the ELF header, which a pipe cannot take) and written to stdout when
//!   the compiler closes it. Closing the standard streams is ignored meanwhile.
//! - Threads: Subzero's compile server parses and translates in a thread it starts while
//!   the IRT feeds it (`std::thread`; with 0 translation threads there is no other). It
//!   names `nacl-irt-thread`, so its module has the runtime's real threads
//!   (`Options::threads`): that thread is an instance of its own, and `data_callback`
//!   waits on the compiler's input queue (256 KiB) while it drains it, so a pexe of any
//!   size streams through.
//! - The runtime's code here runs on either thread (`close` of the object is the compile
//!   thread's), so it addresses its scratch through the per-thread [`G_SCRATCH`].

use super::runtime::{
    a32, at, grow_to, m32, m64, G_SCRATCH, IRT_DATA, I_FD_READ, I_FD_WRITE, I_PROC_EXIT, MAPTOP_AT,
};
use wasm_encoder::{BlockType, InstructionSink, ValType};

/// The name of the compile interface the translator asks for, without its version.
pub const COMPILE_INTERFACE_PREFIX: &str = "nacl-irt-private-pnacl-translator-compile-";
/// The interface the runtime answers.
pub(crate) const COMPILE_INTERFACE: &str = "nacl-irt-private-pnacl-translator-compile-0.1";
/// The name of the linker's interface, without its version.
pub const LINK_INTERFACE_PREFIX: &str = "nacl-irt-private-pnacl-translator-link-";
/// The linker's interfaces the runtime answers.
pub(crate) const LINK_INTERFACE: &str = "nacl-irt-private-pnacl-translator-link-0.1";
pub(crate) const RESOURCE_INTERFACE: &str = "nacl-irt-resource-open-0.1";
/// The linker's resources are in the first preopened directory (WASI fd 3); object `k`
/// (the program's argument `k + 1`, a name in that directory) in directory `4 + k`.
pub const RESOURCE_DIR_FD: i32 = 3;
/// The most objects a link takes (Chrome's).
pub const MAX_OBJECTS: i32 = 16;
/// How Chrome names the resource `crtbegin.o`: `pnacl_public_x86_64_crtbegin_o`.
pub const CHROME_RESOURCE_PREFIX: &str = "pnacl_public_x86_64_";
/// The rights an input is opened with: `fd_read`, `fd_seek`, `fd_tell`,
/// `fd_filestat_get` (no write right: the directories are read-only).
const READ_RIGHTS: i64 = 2 | 4 | 32 | (1 << 21);

/// The object file's descriptor (above any WASI gives).
pub const OBJECT_FD: i32 = 0x7f00;
/// The most object a translation writes.
pub const OBJECT_MAX: u32 = 64 << 20;
/// The chunk of the pexe each `data_callback` gets.
const CHUNK: i32 = 0x1_0000;

/// The translator's words, below the runtime's constants (above its shared words).
const WORDS: i32 = IRT_DATA - 0x20;
/// The object's buffer (0: the descriptor is closed), position and length.
const OBJECT: i32 = WORDS;
const POS: i32 = WORDS + 4;
const LEN: i32 = WORDS + 8;
/// The descriptor array `init_callback` gets.
const FDS: i32 = WORDS + 12;
/// The linker's area: its object descriptors, then room for a resource's name.
const LINK_AREA: i32 = WORDS + 16;
/// The area's size, before the nexe's buffer.
const LINK_AREA_SIZE: i32 = 0x1000;
/// Where `serve_link_request`'s `func` waits, in the area (after the descriptors).
const FUNC_AT: i32 = 4 * MAX_OBJECTS;
/// Where a resource's Chrome name is built, in the area.
const NAME_AT: i32 = 0x100;

/// The translator's messages, in the runtime's constants (`runtime::irt_data`).
pub(crate) const MESSAGES_AT: i32 = IRT_DATA + 0x180;
const PREFIX: &str = "translator: ";
const NO_MEMORY: &str = "no memory for the object\n";
const REFUSED: &str = "input refused\n";
const NO_INPUT: &str = "cannot read stdin\n";
const NO_OBJECT: &str = "cannot open an object\n";
const LINK_FAILED: &str = "link failed\n";
const ALL: [&str; 7] = [
    PREFIX,
    NO_MEMORY,
    REFUSED,
    NO_INPUT,
    CHROME_RESOURCE_PREFIX,
    NO_OBJECT,
    LINK_FAILED,
];

/// The messages' bytes (at [`MESSAGES_AT`]).
pub(crate) fn messages() -> Vec<u8> {
    ALL.concat().into_bytes()
}

fn message(m: &str) -> (i32, i32) {
    let mut at = MESSAGES_AT;
    for w in ALL {
        if w == m {
            return (at, w.len() as i32);
        }
        at += w.len() as i32;
    }
    unreachable!("a translator message")
}

const EFBIG: i32 = 27;
const EINVAL: i32 = 22;
const EIO: i32 = 5;

const G_RSP: u32 = 4;
const G_RDI: u32 = 7;
const G_RSI: u32 = 6;
const G_RDX: u32 = 2;
const G_RCX: u32 = 1;
const G_R8: u32 = 8;
const G_RAX: u32 = 0;

/// x86-64's red zone below the caller's stack pointer.
const RED_ZONE: i32 = 128;

/// This thread's scratch word at `off`.
fn sc(s: &mut InstructionSink<'_>, off: i32) {
    s.global_get(G_SCRATCH);
    if off != 0 {
        s.i32_const(off).i32_add();
    }
}

/// Writes `len` bytes at `at` (constants) to stderr.
fn say(s: &mut InstructionSink<'_>, at: i32, len: i32) {
    sc(s, 0);
    s.i32_const(at).i32_store(m32());
    sc(s, 4);
    s.i32_const(len).i32_store(m32()).i32_const(2);
    sc(s, 0);
    s.i32_const(1);
    sc(s, 8);
    s.call(I_FD_WRITE).drop();
}

/// Says message `m` after the prefix and exits 1.
fn fail(s: &mut InstructionSink<'_>, m: &str) {
    let (at, len) = message(PREFIX);
    say(s, at, len);
    let (at, len) = message(m);
    say(s, at, len);
    s.i32_const(1).call(I_PROC_EXIT).unreachable();
}

/// Calls the compiler's function at the address in local `f`, the stack below the one in
/// local `sp` (the red zone left alone), and checks it returned to the runtime.
fn call_nexe(s: &mut InstructionSink<'_>, f: u32, sp: u32) {
    s.local_get(sp)
        .i32_const(RED_ZONE)
        .i32_sub()
        .i32_const(-16)
        .i32_and()
        .i64_extend_i32_u()
        .global_set(G_RSP);
    super::pepper::call_x86(s, f);
    s.local_get(sp).i64_extend_i32_u().global_set(G_RSP);
}

/// A callback's result in `%rax`, a C string or NULL: a string is the compiler's error,
/// said on stderr before the program exits 1. Uses locals 5 and 6.
fn check_error(s: &mut InstructionSink<'_>) {
    s.global_get(G_RAX)
        .i32_wrap_i64()
        .local_tee(5)
        .if_(BlockType::Empty);
    // its length
    s.i32_const(0).local_set(6);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(5)
        .local_get(6)
        .i32_add()
        .i32_load8_u(wasm_encoder::MemArg { align: 0, ..m32() })
        .i32_eqz()
        .br_if(1)
        .local_get(6)
        .i32_const(1)
        .i32_add()
        .local_set(6)
        .br(0);
    s.end().end();
    let (at, len) = message(PREFIX);
    say(s, at, len);
    sc(s, 0);
    s.local_get(5).i32_store(m32());
    sc(s, 4);
    s.local_get(6).i32_store(m32()).i32_const(2);
    sc(s, 0);
    s.i32_const(1);
    sc(s, 8);
    s.call(I_FD_WRITE).drop();
    // its last byte is not always a newline
    let (at, len) = message(NO_MEMORY);
    say(s, at + len - 1, 1);
    s.i32_const(1).call(I_PROC_EXIT).unreachable();
    s.end();
}

/// Reserves `before` bytes and the object's buffer above the break and every mapping
/// (local 2: the start; uses locals 3 and 8) and opens the object, empty.
fn reserve(s: &mut InstructionSink<'_>, before: i32) {
    super::runtime::unmapped_start(s, 8, 2);
    s.local_get(8)
        .i64_const(before as i64 + OBJECT_MAX as i64)
        .i64_add()
        .local_tee(8)
        .i64_const(1 << 32)
        .i64_ge_u()
        .if_(BlockType::Empty);
    fail(s, NO_MEMORY);
    s.end();
    grow_to(s, 8);
    s.i32_eqz().if_(BlockType::Empty);
    fail(s, NO_MEMORY);
    s.end();
    s.i32_const(0)
        .local_get(8)
        .i32_wrap_i64()
        .i32_store(at(MAPTOP_AT));
    s.i32_const(OBJECT)
        .local_get(2)
        .i32_const(before)
        .i32_add()
        .i32_store(m32());
    for w in [POS, LEN] {
        s.i32_const(w).i32_const(0).i32_store(m32());
    }
}

/// Pushes the length of the C string at the address in local `at`, counting in local
/// `n` (i32).
fn strlen(s: &mut InstructionSink<'_>, at: u32, n: u32) {
    s.i32_const(0).local_set(n);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(at)
        .local_get(n)
        .i32_add()
        .i32_load8_u(wasm_encoder::MemArg { align: 0, ..m32() })
        .i32_eqz()
        .br_if(1)
        .local_get(n)
        .i32_const(1)
        .i32_add()
        .local_set(n)
        .br(0);
    s.end().end();
    s.local_get(n);
}

/// `serve_link_request(func)`: opens each object the program names (argument `k + 1`,
/// in preopened directory `4 + k`), calls `func(OBJECT_FD, fds, count)` and writes the
/// nexe to stdout; an object that does not open, or a link that fails, is said on
/// stderr and the program exits 1. Leaves the i32 errno (0).
pub(crate) fn serve_link(s: &mut InstructionSink<'_>, path_open: u32) {
    // locals: 1 func, 2 the area, 3 a name, 4 the caller's stack pointer, 5 the count,
    // 6 k, 8 (i64) scratch
    a32(s, G_RDI);
    s.local_set(1);
    s.global_get(G_RSP).i32_wrap_i64().local_set(4);
    reserve(s, LINK_AREA_SIZE);
    s.i32_const(LINK_AREA).local_get(2).i32_store(m32());
    // func waits in the area while local 1 counts a name's length
    s.local_get(2).local_get(1).i32_store(wasm_encoder::MemArg {
        offset: FUNC_AT as u64,
        ..m32()
    });
    s.i32_const(super::runtime::ARGC)
        .i32_load(m32())
        .i32_const(1)
        .i32_sub()
        .local_tee(5)
        .i32_const(MAX_OBJECTS)
        .i32_gt_u()
        .if_(BlockType::Empty);
    fail(s, NO_OBJECT);
    s.end();
    s.i32_const(0).local_set(6);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(6).local_get(5).i32_ge_u().br_if(1);
    // path_open(4 + k, 0, name, len, 0, READ_RIGHTS, 0, 0, &fds[k])
    s.local_get(6)
        .i32_const(2)
        .i32_shl()
        .i32_const(super::runtime::ARGV_TMP + 4)
        .i32_add()
        .i32_load(m32())
        .local_set(3);
    s.local_get(6)
        .i32_const(RESOURCE_DIR_FD + 1)
        .i32_add()
        .i32_const(0)
        .local_get(3);
    strlen(s, 3, 1);
    s.i32_const(0)
        .i64_const(READ_RIGHTS)
        .i64_const(0)
        .i32_const(0)
        .local_get(2)
        .local_get(6)
        .i32_const(2)
        .i32_shl()
        .i32_add()
        .call(path_open)
        .if_(BlockType::Empty);
    fail(s, NO_OBJECT);
    s.end();
    s.local_get(6).i32_const(1).i32_add().local_set(6).br(0);
    s.end().end();
    // func(OBJECT_FD, fds, count)
    s.local_get(2)
        .i32_load(wasm_encoder::MemArg {
            offset: FUNC_AT as u64,
            ..m32()
        })
        .local_set(1);
    s.i64_const(OBJECT_FD as i64).global_set(G_RDI);
    s.local_get(2).i64_extend_i32_u().global_set(G_RSI);
    s.local_get(5).i64_extend_i32_u().global_set(G_RDX);
    call_nexe(s, 1, 4);
    s.global_get(G_RAX).i32_wrap_i64().if_(BlockType::Empty);
    fail(s, LINK_FAILED);
    s.end();
    // the nexe goes to stdout if the linker left it open
    s.i32_const(OBJECT).i32_load(m32()).if_(BlockType::Empty);
    object_close(s);
    s.if_(BlockType::Empty);
    fail(s, LINK_FAILED);
    s.end();
    s.end();
    s.i32_const(0);
}

/// `open_resource(name, *fd)`: `name` in the resource directory, else its Chrome name
/// (`crtbegin.o` is `pnacl_public_x86_64_crtbegin_o`). Leaves the errno (i32).
pub(crate) fn resource_open(s: &mut InstructionSink<'_>, path_open: u32) {
    // locals: 2 the name, 3 its length, 4 the errno, 5 the Chrome name, 6 i
    a32(s, G_RDI);
    s.local_set(2);
    strlen(s, 2, 3);
    s.drop();
    open_in_resources(s, path_open, 2, 3);
    s.local_tee(4).i32_const(0).i32_ne();
    let (prefix, plen) = message(CHROME_RESOURCE_PREFIX);
    // tried again under its Chrome name, when the area is there and the name fits
    s.i32_const(LINK_AREA)
        .i32_load(m32())
        .i32_const(0)
        .i32_ne()
        .i32_and()
        .local_get(3)
        .i32_const(LINK_AREA_SIZE - NAME_AT - plen)
        .i32_lt_u()
        .i32_and()
        .if_(BlockType::Empty);
    s.i32_const(LINK_AREA)
        .i32_load(m32())
        .i32_const(NAME_AT)
        .i32_add()
        .local_tee(5)
        .i32_const(prefix)
        .i32_const(plen)
        .memory_copy(0, 0);
    s.i32_const(0).local_set(6);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(6).local_get(3).i32_ge_u().br_if(1);
    // '.' becomes '_'
    s.local_get(5)
        .local_get(6)
        .i32_add()
        .i32_const(plen)
        .i32_add();
    s.local_get(2)
        .local_get(6)
        .i32_add()
        .i32_load8_u(wasm_encoder::MemArg { align: 0, ..m32() })
        .local_tee(1)
        .i32_const(b'_' as i32)
        .local_get(1)
        .i32_const(b'.' as i32)
        .i32_ne()
        .select()
        .i32_store8(wasm_encoder::MemArg { align: 0, ..m32() });
    s.local_get(6).i32_const(1).i32_add().local_set(6).br(0);
    s.end().end();
    s.local_get(3).i32_const(plen).i32_add().local_set(3);
    open_in_resources(s, path_open, 5, 3);
    s.local_set(4);
    s.end();
    s.local_get(4);
    s.if_(BlockType::Result(ValType::I32));
    s.local_get(4);
    super::runtime::wasi_errno(s);
    s.else_().i32_const(0).end();
}

/// `path_open` of the name at local `name` (length in local `len`) in the resource
/// directory, the descriptor to `*%rsi`: leaves WASI's errno.
fn open_in_resources(s: &mut InstructionSink<'_>, path_open: u32, name: u32, len: u32) {
    s.i32_const(RESOURCE_DIR_FD)
        .i32_const(0)
        .local_get(name)
        .local_get(len)
        .i32_const(0)
        .i64_const(READ_RIGHTS)
        .i64_const(0)
        .i32_const(0);
    a32(s, G_RSI);
    s.call(path_open);
}

/// `serve_translate_request(funcs)`: leaves the i64 for `%rax` (0).
pub(crate) fn serve(s: &mut InstructionSink<'_>) {
    // locals: 1 funcs, 2 the chunk buffer, 3 a callback, 4 the caller's stack pointer,
    // 5 and 6 scratch, 8 the reservation's end (i64)
    a32(s, G_RDI);
    s.local_set(1);
    s.global_get(G_RSP).i32_wrap_i64().local_set(4);
    // the chunk buffer and the object above the break and every mapping
    // (the only thread yet: init_callback starts the compile thread)
    reserve(s, CHUNK);
    s.i32_const(FDS).i32_const(OBJECT_FD).i32_store(m32());
    // init_callback(0, fds, 1, argv + 1, argc - 1)
    s.i64_const(0).global_set(G_RDI);
    s.i64_const(FDS as i64).global_set(G_RSI);
    s.i64_const(1).global_set(G_RDX);
    s.i64_const(super::runtime::ARGV_TMP as i64 + 4)
        .global_set(G_RCX);
    s.i32_const(super::runtime::ARGC)
        .i32_load(m32())
        .i32_const(1)
        .i32_sub()
        .i64_extend_i32_u()
        .global_set(G_R8);
    s.local_get(1).i32_load(m32()).local_set(3);
    call_nexe(s, 3, 4);
    check_error(s);
    // data_callback(chunk, n) until stdin ends
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    sc(s, 0);
    s.local_get(2).i32_store(m32());
    sc(s, 4);
    s.i32_const(CHUNK).i32_store(m32()).i32_const(0);
    sc(s, 0);
    s.i32_const(1);
    sc(s, 8);
    s.call(I_FD_READ).if_(BlockType::Empty);
    fail(s, NO_INPUT);
    s.end();
    sc(s, 8);
    s.i32_load(m32()).local_tee(5).i32_eqz().br_if(1);
    s.local_get(2).i64_extend_i32_u().global_set(G_RDI);
    s.local_get(5).i64_extend_i32_u().global_set(G_RSI);
    s.local_get(1)
        .i32_load(wasm_encoder::MemArg { offset: 4, ..m32() })
        .local_set(3);
    call_nexe(s, 3, 4);
    s.global_get(G_RAX).i32_wrap_i64().if_(BlockType::Empty);
    fail(s, REFUSED);
    s.end();
    s.br(0);
    s.end().end();
    // end_callback()
    s.local_get(1)
        .i32_load(wasm_encoder::MemArg { offset: 8, ..m32() })
        .local_set(3);
    call_nexe(s, 3, 4);
    check_error(s);
    s.i64_const(0);
}

/// Whether the descriptor in `%rdi` is the open object (an i32 condition).
pub(crate) fn is_object(s: &mut InstructionSink<'_>) {
    a32(s, G_RDI);
    s.i32_const(OBJECT_FD)
        .i32_eq()
        .i32_const(OBJECT)
        .i32_load(m32())
        .i32_const(0)
        .i32_ne()
        .i32_and();
}

/// `write(fd, buf, count, *nwrote)` into the object: leaves the errno (i32).
pub(crate) fn object_write(s: &mut InstructionSink<'_>) {
    s.i32_const(POS).i32_load(m32()).i64_extend_i32_u();
    a32(s, G_RDX);
    s.i64_extend_i32_u()
        .i64_add()
        .local_tee(7)
        .i64_const(OBJECT_MAX as i64)
        .i64_gt_u()
        .if_(BlockType::Result(ValType::I32))
        .i32_const(EFBIG)
        .else_();
    s.i32_const(OBJECT)
        .i32_load(m32())
        .i32_const(POS)
        .i32_load(m32())
        .i32_add();
    a32(s, G_RSI);
    a32(s, G_RDX);
    s.memory_copy(0, 0);
    s.i32_const(POS)
        .local_get(7)
        .i32_wrap_i64()
        .i32_store(m32());
    s.i32_const(LEN)
        .local_get(7)
        .i32_wrap_i64()
        .local_tee(1)
        .i32_const(LEN)
        .i32_load(m32())
        .local_get(1)
        .i32_const(LEN)
        .i32_load(m32())
        .i32_gt_u()
        .select()
        .i32_store(m32());
    a32(s, G_RCX);
    a32(s, G_RDX);
    s.i32_store(m32()).i32_const(0).end();
}

/// `seek(fd, offset, whence, *new)` in the object: leaves the errno (i32).
pub(crate) fn object_seek(s: &mut InstructionSink<'_>) {
    a32(s, G_RDX);
    s.local_tee(1)
        .i32_eqz()
        .if_(BlockType::Result(ValType::I64))
        .i64_const(0)
        .else_()
        .i32_const(LEN)
        .i32_const(POS)
        .local_get(1)
        .i32_const(1)
        .i32_eq()
        .select()
        .i32_load(m32())
        .i64_extend_i32_u()
        .end();
    s.global_get(G_RSI)
        .i64_add()
        .local_tee(7)
        .i64_const(OBJECT_MAX as i64)
        .i64_gt_u()
        .local_get(1)
        .i32_const(2)
        .i32_gt_u()
        .i32_or()
        .if_(BlockType::Result(ValType::I32))
        .i32_const(EINVAL)
        .else_()
        .i32_const(POS)
        .local_get(7)
        .i32_wrap_i64()
        .i32_store(m32());
    a32(s, G_RCX);
    s.local_get(7).i64_store(m64()).i32_const(0).end();
}

/// `close(fd)` of the object: its bytes go to stdout; leaves the errno (i32).
pub(crate) fn object_close(s: &mut InstructionSink<'_>) {
    // locals: 1 where, 2 left, 3 the errno
    s.i32_const(OBJECT).i32_load(m32()).local_set(1);
    s.i32_const(LEN).i32_load(m32()).local_set(2);
    s.i32_const(0).local_set(3);
    s.block(BlockType::Empty).loop_(BlockType::Empty);
    s.local_get(2).i32_eqz().br_if(1);
    sc(s, 0);
    s.local_get(1).i32_store(m32());
    sc(s, 4);
    s.local_get(2).i32_store(m32()).i32_const(1);
    sc(s, 0);
    s.i32_const(1);
    sc(s, 8);
    s.call(I_FD_WRITE);
    sc(s, 8);
    s.i32_load(m32())
        .local_tee(4)
        .i32_eqz()
        .i32_or()
        .if_(BlockType::Empty)
        .i32_const(EIO)
        .local_set(3)
        .br(2)
        .end();
    s.local_get(1).local_get(4).i32_add().local_set(1);
    s.local_get(2).local_get(4).i32_sub().local_set(2);
    s.br(0);
    s.end().end();
    s.i32_const(OBJECT).i32_const(0).i32_store(m32());
    s.local_get(3);
}

/// Whether the descriptor in `%rdi` is a standard stream (an i32 condition): the
/// translator's closing of them is ignored, so the object still reaches stdout.
pub(crate) fn is_standard_stream(s: &mut InstructionSink<'_>) {
    a32(s, G_RDI);
    s.i32_const(2).i32_le_u();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_fit_before_the_directory() {
        assert!(MESSAGES_AT as usize + messages().len() <= IRT_DATA as usize + 0x200);
        assert_eq!(message(REFUSED).1, REFUSED.len() as i32);
    }
}
