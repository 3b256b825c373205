//! The host side of Pepper (PPAPI) for the command-line host.
//!
//! [`var`] models `PP_Var` values and the reference-counted vars behind them; [`json`]
//! encodes vars as JSON for `pexe2wasm run --messages json` and line-mode messages.

pub mod json;
pub mod var;
