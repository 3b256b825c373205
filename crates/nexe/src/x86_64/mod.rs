//! x86-64 nexes: NaCl's validator rules over iced-x86's decoder, and the code facts
//! the translator builds its control-flow graph from.

pub mod facts;
pub mod lift;
pub mod rules;
pub mod validate;

pub use facts::{ByteSet, CodeFacts};
pub use rules::{Rule, ValidationError, Warning, BUNDLE_SIZE};
pub use validate::{validate, Validation, MAX_ERRORS};
