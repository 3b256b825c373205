//! The converter library (crates/pexe2wasm) as a WebAssembly module for the browser
//! (built for `wasm32-unknown-unknown`; docs/decisions/0024-browser-converter-abi.md).
//!
//! A handful of named exports, no generated glue (web/src/convert/converter.js calls them):
//!
//! - `p2w_alloc(len) -> ptr` / `p2w_free(ptr, len)`: a buffer for the pexe;
//! - `p2w_convert(ptr, len, options) -> result`: converts the pexe in the buffer (the
//!   buffer stays the caller's); `options` bit 0: small code (`--small-code`);
//! - `p2w_result_ok(result)`: 1 when it converted, 0 when not;
//! - `p2w_result_ptr(result)`, `p2w_result_len(result)`: the module's bytes, or the error
//!   text (UTF-8) as `pexe2wasm convert` prints it after `error: FILE: `;
//! - `p2w_result_plugin(result)`: 1 when the module is a Pepper plugin (a page can embed it);
//! - `p2w_result_needs_ptr(result)`, `p2w_result_needs_len(result)`: what it needs to
//!   run, one line (`pexe2wasm::needs::Needs::summary`);
//! - `p2w_result_free(result)`;
//! - `p2w_version_ptr()`, `p2w_version_len()`: the converter's version (the crate's).
//!
//! The conversion is the CLI's `web` one (`Threads::Auto`, the locals `--small-code`
//! chooses), so the bytes equal those `pexe2wasm web` writes (crates/cli/tests/it/host.rs).
//! A nexe is translated as `web` translates one: a static x86-64 Pepper nexe into the
//! browser host's form (`pexe2wasm_nexe::x86_64::lift::browser`); any other nexe is an
//! error naming what it is.
//! On wasm32-unknown-unknown rayon cannot start threads and runs everything on the calling
//! thread.

use pexe2wasm::convert::{convert_module, ConvertError, ConvertOptions, Locals, Threads};
use pexe2wasm::needs::Host;

/// The outcome of one conversion, behind the handle `p2w_convert` returns.
pub struct Converted {
    /// The module, or the error text.
    pub result: Result<Vec<u8>, String>,
    /// Whether the module is a Pepper plugin (runs in a page).
    pub plugin: bool,
    /// What it needs to run, for people.
    pub needs: String,
}

/// `options` bit 0 of `p2w_convert`: smaller code (`Locals::for_small_code(true)`).
pub const OPTION_SMALL_CODE: u32 = 1;

/// The converter's version: the crate's version (the cache key adds a hash of the wasm).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// An error and its sources, `outer: inner: …`, as anyhow's `{:#}` (what the CLI prints).
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Converts `pexe` as `pexe2wasm web` does (see the crate documentation).
pub fn convert(pexe: &[u8], options: u32) -> Converted {
    if let Some(c) = translate_nexe(pexe) {
        return c;
    }
    let decoded = match pexe2wasm::decode::decode(pexe) {
        Ok(m) => m,
        Err(e) => {
            return Converted {
                result: Err(chain(&ConvertError::Decode(e))),
                plugin: false,
                needs: String::new(),
            }
        }
    };
    let needs = pexe2wasm::needs::needs_of_module(&decoded);
    let opts = ConvertOptions {
        threads: Threads::Auto,
        locals: Locals::for_small_code(options & OPTION_SMALL_CODE != 0),
        ..Default::default()
    };
    match convert_module(decoded, pexe.len(), &opts) {
        Ok(c) => {
            let needs = needs.for_output(c.features.threads);
            Converted {
                result: Ok(c.wasm),
                plugin: matches!(needs.host, Some(Host::Pepper | Host::Browser)),
                needs: needs.summary,
            }
        }
        Err(e) => Converted {
            result: Err(chain(&e)),
            plugin: false,
            needs: needs.summary,
        },
    }
}

/// When `bytes` is an ELF file: a static x86-64 Pepper nexe's module in the browser
/// host's form, or the error `pexe2wasm web` gives for it (a command-line nexe, another
/// architecture, a dynamic one, a file NaCl's loader refuses). `None` for anything else.
/// Functions that do not lift trap when reached, as under `web` (which notes them on
/// stderr; here the needs line says how many).
fn translate_nexe(bytes: &[u8]) -> Option<Converted> {
    let translated = pexe2wasm_nexe::x86_64::lift::browser::nexe_plugin(bytes)?;
    Some(match translated {
        Ok(p) => {
            let mut needs = match pexe2wasm_nexe::inspect(bytes) {
                Ok(n) => {
                    let threads = n
                        .info
                        .irt_interfaces
                        .iter()
                        .any(|i| i.as_str() == pexe2wasm::convert::THREAD_INTERFACE);
                    pexe2wasm::needs::needs(&n.info.irt_interfaces, &n.info.ppb_interfaces, true)
                        .for_output(threads)
                        .summary
                }
                Err(_) => String::new(),
            };
            if let Some((_, first)) = p.not_lifted.first() {
                needs.push_str(&format!(
                    " ({} of {} functions are not translated yet and trap if reached; the first: {first})",
                    p.not_lifted.len(),
                    p.functions
                ));
            }
            Converted {
                result: Ok(p.wasm),
                plugin: true,
                needs,
            }
        }
        Err(e) => Converted {
            result: Err(e.to_string()),
            plugin: false,
            needs: String::new(),
        },
    })
}

/// A buffer of `len` bytes for the caller to fill (freed with `p2w_free`); null when
/// `len` is 0 or too large.
#[no_mangle]
pub extern "C" fn p2w_alloc(len: usize) -> *mut u8 {
    if len == 0 {
        return std::ptr::null_mut();
    }
    let mut v = Vec::<u8>::new();
    if v.try_reserve_exact(len).is_err() {
        return std::ptr::null_mut();
    }
    // The length is the capacity, so p2w_free can rebuild the Vec.
    v.resize(len, 0);
    let mut v = std::mem::ManuallyDrop::new(v.into_boxed_slice());
    v.as_mut_ptr()
}

/// Frees a buffer from `p2w_alloc`.
///
/// # Safety
/// `ptr` and `len` are what `p2w_alloc` gave and took, not freed before.
#[no_mangle]
pub unsafe extern "C" fn p2w_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() {
        drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)));
    }
}

/// Converts the `len` bytes at `ptr`; the result is freed with `p2w_result_free`.
///
/// # Safety
/// `ptr..ptr+len` is readable memory (a `p2w_alloc` buffer), or `len` is 0.
#[no_mangle]
pub unsafe extern "C" fn p2w_convert(ptr: *const u8, len: usize, options: u32) -> *mut Converted {
    let pexe = if len == 0 {
        &[][..]
    } else {
        std::slice::from_raw_parts(ptr, len)
    };
    Box::into_raw(Box::new(convert(pexe, options)))
}

/// # Safety
/// `r` is a live result of `p2w_convert`.
unsafe fn result<'a>(r: *const Converted) -> &'a Converted {
    &*r
}

/// 1 when the result is a module, 0 when it is an error text.
///
/// # Safety
/// `r` is a live result of `p2w_convert`.
#[no_mangle]
pub unsafe extern "C" fn p2w_result_ok(r: *const Converted) -> u32 {
    result(r).result.is_ok() as u32
}

fn bytes(r: &Converted) -> &[u8] {
    match &r.result {
        Ok(w) => w,
        Err(e) => e.as_bytes(),
    }
}

/// The module's bytes or the error text.
///
/// # Safety
/// `r` is a live result of `p2w_convert`.
#[no_mangle]
pub unsafe extern "C" fn p2w_result_ptr(r: *const Converted) -> *const u8 {
    bytes(result(r)).as_ptr()
}

/// The length of `p2w_result_ptr`'s bytes.
///
/// # Safety
/// `r` is a live result of `p2w_convert`.
#[no_mangle]
pub unsafe extern "C" fn p2w_result_len(r: *const Converted) -> usize {
    bytes(result(r)).len()
}

/// 1 when the module is a Pepper plugin.
///
/// # Safety
/// `r` is a live result of `p2w_convert`.
#[no_mangle]
pub unsafe extern "C" fn p2w_result_plugin(r: *const Converted) -> u32 {
    result(r).plugin as u32
}

/// What the module needs to run (UTF-8).
///
/// # Safety
/// `r` is a live result of `p2w_convert`.
#[no_mangle]
pub unsafe extern "C" fn p2w_result_needs_ptr(r: *const Converted) -> *const u8 {
    result(r).needs.as_ptr()
}

/// The length of `p2w_result_needs_ptr`'s text.
///
/// # Safety
/// `r` is a live result of `p2w_convert`.
#[no_mangle]
pub unsafe extern "C" fn p2w_result_needs_len(r: *const Converted) -> usize {
    result(r).needs.len()
}

/// Frees a result of `p2w_convert`.
///
/// # Safety
/// `r` is a result of `p2w_convert`, not freed before.
#[no_mangle]
pub unsafe extern "C" fn p2w_result_free(r: *mut Converted) {
    if !r.is_null() {
        drop(Box::from_raw(r));
    }
}

/// The converter's version ([`VERSION`], UTF-8).
#[no_mangle]
pub extern "C" fn p2w_version_ptr() -> *const u8 {
    VERSION.as_ptr()
}

/// The length of `p2w_version_ptr`'s text.
#[no_mangle]
pub extern "C" fn p2w_version_len() -> usize {
    VERSION.len()
}
