//! Runs x86-64 instruction bytes natively on this host: the reference the lifting tests
//! compare the translator against.
//!
//! The bytes go into an executable page between a prologue that loads all registers and
//! RFLAGS from a [`State`] (switching to the test's stack) and an epilogue that stores
//! them back; both are assembled with iced-x86's `code_asm`. Only for x86-64 Linux hosts.

use iced_x86::code_asm::*;

/// Registers in x86's numbering (RAX = 0 … R15 = 15), RFLAGS, the host's stack pointer
/// while the snippet runs, and the XMM registers.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct State {
    pub regs: [u64; 16],
    pub flags: u64,
    host_rsp: u64,
    saved_rax: u64,
    _pad: u64,
    /// XMM0..15, little-endian.
    pub xmm: [u128; 16],
}

const FLAGS: i32 = 128;
const HOST_RSP: i32 = 136;
const SAVED_RAX: i32 = 144;
const XMM: i32 = 160;

fn xmm_reg(n: usize) -> AsmRegisterXmm {
    [
        xmm0, xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7, xmm8, xmm9, xmm10, xmm11, xmm12, xmm13,
        xmm14, xmm15,
    ][n]
}

fn gpr(n: usize) -> AsmRegister64 {
    [
        rax, rcx, rdx, rbx, rsp, rbp, rsi, rdi, r8, r9, r10, r11, r12, r13, r14, r15,
    ][n]
}

/// An executable copy of prologue + snippet + epilogue, bound to one boxed [`State`].
pub struct Native {
    page: *mut libc::c_void,
    len: usize,
    pub state: Box<State>,
}

impl Native {
    pub fn new(snippet: &[u8]) -> Native {
        let mut state = Box::<State>::default();
        let s = &mut *state as *mut State as u64;
        let code = (|| -> Result<Vec<u8>, IcedError> {
            let mut a = CodeAssembler::new(64)?;
            for r in [rbx, rbp, r12, r13, r14, r15] {
                a.push(r)?;
            }
            a.mov(rax, s)?;
            a.mov(qword_ptr(rax + HOST_RSP), rsp)?;
            a.mov(rsp, qword_ptr(rax + 32))?;
            for n in 0..16 {
                a.movdqu(xmm_reg(n), xmmword_ptr(rax + XMM + 16 * n as i32))?;
            }
            a.push(qword_ptr(rax + FLAGS))?;
            a.popfq()?;
            for n in (1..16).filter(|&n| n != 4) {
                a.mov(gpr(n), qword_ptr(rax + 8 * n as i32))?;
            }
            a.mov(rax, qword_ptr(rax))?;
            a.db(snippet)?;
            // rax first, through the test's stack: no flag changes until pushfq.
            a.push(rax)?;
            a.mov(rax, s)?;
            a.pop(qword_ptr(rax + SAVED_RAX))?;
            a.pushfq()?;
            a.pop(qword_ptr(rax + FLAGS))?;
            for n in (1..16).filter(|&n| n != 4) {
                a.mov(qword_ptr(rax + 8 * n as i32), gpr(n))?;
            }
            a.mov(qword_ptr(rax + 32), rsp)?;
            for n in 0..16 {
                a.movdqu(xmmword_ptr(rax + XMM + 16 * n as i32), xmm_reg(n))?;
            }
            a.mov(rsp, qword_ptr(rax + HOST_RSP))?;
            for r in [r15, r14, r13, r12, rbp, rbx] {
                a.pop(r)?;
            }
            a.ret()?;
            a.assemble(0)
        })()
        .expect("assemble the native harness");
        let len = code.len().next_multiple_of(4096);
        // SAFETY: a fresh anonymous mapping of `len` bytes, written before it is made
        // executable (never writable and executable at once).
        unsafe {
            let page = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(page, libc::MAP_FAILED, "mmap");
            std::ptr::copy_nonoverlapping(code.as_ptr(), page as *mut u8, code.len());
            assert_eq!(
                libc::mprotect(page, len, libc::PROT_READ | libc::PROT_EXEC),
                0,
                "mprotect"
            );
            Native { page, len, state }
        }
    }

    /// Runs the snippet from `self.state`; the state holds the result afterwards (RAX too).
    ///
    /// The caller makes sure the snippet cannot fault (memory operands inside the test's
    /// buffer, no division that traps).
    pub fn run(&mut self) {
        // SAFETY: the page holds the code assembled above, which saves and restores every
        // callee-saved register and the host stack pointer; the state box outlives it.
        unsafe {
            let f: extern "C" fn() = std::mem::transmute(self.page);
            f();
        }
        self.state.regs[0] = self.state.saved_rax;
    }
}

impl Drop for Native {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once.
        unsafe {
            libc::munmap(self.page, self.len);
        }
    }
}
