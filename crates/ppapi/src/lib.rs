//! A machine-readable description of the Pepper (PPAPI) interfaces a PNaCl pexe can ask
//! for through `PPB_GetInterface` (PPB, implemented by the browser/host) or offer through
//! `PPP_GetInterface` (PPP, implemented by the module), with the types they use.
//!
//! The description lives in `interfaces.pepper` (embedded with `include_str!`) and is
//! parsed once; [`description()`] returns it. Each [`Function`] carries its C-level
//! signature and its **PNaCl/wasm signature**, computed with these rules:
//!
//! * PNaCl bitcode allows only i32, i64, float and double (and vectors) as call argument
//!   and result types ("The only integer sizes allowed for function arguments and function
//!   return values are i32 and i64", PNaCl bitcode reference manual, Type System): `char`,
//!   `int8_t`, `uint8_t`, `int16_t`, `uint16_t` (and `GLboolean`, `GLubyte`, ...) are
//!   widened to i32; `int32_t`, `uint32_t`, enums (`PP_Bool` ...) and under ILP32 `long`
//!   and `size_t` are i32; `int64_t`/`uint64_t` are i64; `float` f32; `double` f64.
//! * Pointers and function pointers are i32.
//! * A struct or union passed **by value** is passed as an i32 pointer to a copy the caller
//!   made (PNaCl's `ExpandByVal`).
//! * A struct or union **result** becomes a hidden first i32 parameter (`_struct_result`,
//!   where the callee writes the result) and the function returns nothing
//!   (`SimplifyStructRegSignatures`).
//!
//! These rules hold for PPB functions (the pexe calls the host) and PPP functions (the
//! host calls the pexe) alike.

mod check;
pub mod contract;
mod generate;
pub mod hosts;
mod model;
mod parse;
mod table;

use std::sync::OnceLock;

pub use check::{HostFunction, HostMismatch};
pub use generate::{js_signature, EntryFacts, JS_CONTRACT_PATH, REGENERATE, RUST_CONTRACT_PATH};
pub use model::*;
pub use parse::{parse, ParseError, ParseErrorKind};

/// What a converted Pepper module exports for its host besides `_start` and its memory:
/// the entry points through which the host calls PPP functions and callbacks, and the
/// page allocator for the host's array buffers. A pexe's module exports all of them in
/// this order; a nexe's all but [`PEXE_ONLY_EXPORTS`].
pub const MODULE_EXPORTS: &[&str] = &[
    "__ppp_call_v",
    "__ppp_call_i_v",
    "__ppp_call_i_i",
    "__ppp_call_ii_v",
    "__ppp_call_ii_i",
    "__ppp_call_iii_v",
    "__ppp_call_iii_i",
    "__ppp_call_iidi_v",
    "__ppp_initialize_module",
    "__ppp_callbuf_i_i",
    "__ppp_callbuf_ii_v",
    "__ppp_callbuf_iii_v",
    "__ppp_callbuf_iii_i",
    "__ppp_callbuf_iiii_v",
    "__ppp_callbuf_iiii_i",
    "__ppapi_host_thread_slot",
    "__ppapi_alloc",
    "__ppapi_free",
];

/// The exports of [`MODULE_EXPORTS`] only the pexe runtime has (the slot of the browser
/// host's own threads).
pub const PEXE_ONLY_EXPORTS: &[&str] = &["__ppapi_host_thread_slot"];

/// The description text, as embedded in the crate.
pub const DESCRIPTION_TEXT: &str = include_str!("../interfaces.pepper");

/// The embedded description, parsed on first use.
pub fn description() -> &'static Description {
    static DESC: OnceLock<Description> = OnceLock::new();
    DESC.get_or_init(|| match parse(DESCRIPTION_TEXT) {
        Ok(d) => d,
        // The crate's own tests parse the text, so this cannot happen in a tested build.
        Err(e) => panic!("interfaces.pepper: {e}"),
    })
}

impl Description {
    /// Parses a description text (the same format as `interfaces.pepper`).
    pub fn parse(text: &str) -> Result<Description, ParseError> {
        parse(text)
    }
}
