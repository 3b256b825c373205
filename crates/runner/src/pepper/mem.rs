//! Reading and writing the module's memory in Pepper's shapes: words, `PP_Var`s,
//! completion callbacks, C strings. Every access is bounds-checked; a bad pointer from the
//! app is an error of the call (a trap of the program, as a crash of the plugin was).

use wasmtime::AsContextMut;

use super::var::PpVar;
use crate::host::Ctx;
use crate::{read_memory, write_memory};

pub fn read_u32(cx: impl AsContextMut<Data = Ctx>, addr: u32) -> wasmtime::Result<u32> {
    let mut b = [0u8; 4];
    crate::read_memory_into(cx, addr, &mut b)?;
    Ok(u32::from_le_bytes(b))
}

pub fn write_u32(cx: impl AsContextMut<Data = Ctx>, addr: u32, v: u32) -> wasmtime::Result<()> {
    write_memory(cx, addr, &v.to_le_bytes())
}

pub fn write_i64(cx: impl AsContextMut<Data = Ctx>, addr: u32, v: i64) -> wasmtime::Result<()> {
    write_memory(cx, addr, &v.to_le_bytes())
}

pub fn read_i32s<const N: usize>(
    cx: impl AsContextMut<Data = Ctx>,
    addr: u32,
) -> wasmtime::Result<[i32; N]> {
    let b = read_memory(cx, addr, 4 * N as u32)?;
    let mut out = [0; N];
    for (i, o) in out.iter_mut().enumerate() {
        *o = i32::from_le_bytes([b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]]);
    }
    Ok(out)
}

pub fn write_i32s(cx: impl AsContextMut<Data = Ctx>, addr: u32, v: &[i32]) -> wasmtime::Result<()> {
    let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
    write_memory(cx, addr, &bytes)
}

/// The `PP_Var` at `addr`.
pub fn read_var(cx: impl AsContextMut<Data = Ctx>, addr: u32) -> wasmtime::Result<PpVar> {
    let mut a = [0u8; 16];
    crate::read_memory_into(cx, addr, &mut a)?;
    Ok(PpVar::from_bytes(a))
}

/// Writes `v` as a `PP_Var` at `addr` (a struct result's hidden pointer).
pub fn write_var(cx: impl AsContextMut<Data = Ctx>, addr: u32, v: PpVar) -> wasmtime::Result<()> {
    write_memory(cx, addr, &v.to_bytes())
}

/// A `PP_CompletionCallback` (`{func, user_data, flags}`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Callback {
    pub func: u32,
    pub user_data: u32,
    pub flags: i32,
}

/// `PP_COMPLETIONCALLBACK_FLAG_OPTIONAL`.
pub const CALLBACK_OPTIONAL: i32 = 1;

impl Callback {
    /// `PP_BlockUntilComplete()`: no function, the call blocks.
    pub fn is_blocking(&self) -> bool {
        self.func == 0
    }
}

pub fn read_callback(cx: impl AsContextMut<Data = Ctx>, addr: u32) -> wasmtime::Result<Callback> {
    let [func, user_data, flags] = read_i32s::<3>(cx, addr)?;
    Ok(Callback {
        func: func as u32,
        user_data: user_data as u32,
        flags,
    })
}

/// The NUL-terminated string at `addr`, at most `max` bytes (an error past that).
pub fn read_cstr(
    mut cx: impl AsContextMut<Data = Ctx>,
    addr: u32,
    max: u32,
) -> wasmtime::Result<Vec<u8>> {
    let mut out = Vec::new();
    let mut at = addr;
    // In chunks that do not cross a 4 KiB boundary, so a string near the end of memory
    // reads without going out of bounds.
    loop {
        let chunk = 4096 - (at % 4096);
        let b = read_memory(&mut cx, at, chunk)?;
        if let Some(n) = b.iter().position(|&c| c == 0) {
            out.extend_from_slice(&b[..n]);
            return Ok(out);
        }
        out.extend_from_slice(&b);
        if out.len() as u64 > u64::from(max) {
            return Err(wasmtime::Error::msg(format!(
                "string at {addr:#x} is longer than {max} bytes"
            )));
        }
        at = at
            .checked_add(chunk)
            .ok_or_else(|| wasmtime::Error::msg(format!("string at {addr:#x} is unterminated")))?;
    }
}
