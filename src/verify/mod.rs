//! Stage 2b: the PNaCl ABI verifier. Checks a decoded [`Module`](crate::ir::Module) against
//! the rules of the PNaCl bitcode reference manual and reports findings with positions.
