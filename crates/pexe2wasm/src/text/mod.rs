//! PNaClAsm text: the three-column disassembly (`dis`) and the assembler (`asm`).
//!
//! [`disassemble`] prints a pexe the way pnacl-bcdis does (bit position | abbreviation
//! index and record | PNaClAsm), with the same line wrapping, so the dumps of the PNaCl
//! bitcode spec come out character for character. Two deliberate differences from
//! pnacl-bcdis: byte offsets are right-aligned to 5 digits (or as many as the file size
//! needs) instead of 8, as in the spec's examples; and floating point constants that C's
//! `%g` would round get as many digits as it takes to read back the same bits.
//!
//! [`assemble`] reads PNaClAsm (or a whole dump: for lines containing `|` it uses what
//! follows the second `|`) and writes the pexe. `assemble(disassemble(x)) == x` bit for bit
//! for every file the disassembler accepts: the disassembler checks each statement it
//! prints by assembling it as it goes.
//!
//! # Extensions to PNaClAsm
//!
//! Where PNaClAsm cannot say how a record was encoded, the disassembler prints one of these
//! (and the assembler reads them):
//!
//! - `STATEMENT => <v0, v1, ...>`: after a statement (and its abbreviation annotation), the
//!   exact values of its record, when the statement's own encoding would differ. Used for
//!   non-canonical records: old 4-operand binops with flags, compares with record code 9,
//!   `i1` true written as +1, switch cases stored unsigned, relative operands beyond 32
//!   bits, calling conventions other than C... The statement still says what it defines.
//! - `record <code, v1, ...>;`: a record PNaClAsm has no syntax for (an unknown code, the
//!   wrong number of operands, records of unknown blocks, instructions of a file that does
//!   not decode). `@tN = record <...>;`, `@fN = ...`, `@gN = ...`, `%cN = ...` and
//!   `%vN = ...` do the same for a record that defines the next type, function, global,
//!   constant or instruction value.
//! - `block(N) {`: a block whose id has no PNaClAsm name (pnacl-bcdis prints `unknown {`).
//!   Inside the abbreviations block, `block(N):` selects such a section, as in pnacl-bcdis.
//! - `NAME { <W>`: the block's abbreviation width, when it is not the default. The default
//!   is the fewest bits (at least 2) that hold the largest abbreviation id the block can
//!   use, 3 + its global abbreviations + its local ones (what pnacl-finalize writes).
//! - `call indirect T @fN(...)`: a `call_indirect` record (code 44) whose callee happens
//!   to be a function address (any other callee already implies code 44).
//! - `nan(0xBITS)`: a float or double NaN other than the default quiet NaN (`nan`,
//!   `-nan`), given by all its bits.
//! - `header <b0, b1, ...>;`: the header's bytes, when the header has fields other than
//!   `PNaCl Version: N` and `Align bitcode records: true`, or padding that is not zero.
//! - `trailing <b0, ...>;`: bytes after the last block (fewer than four).
//! - `@tN` may stand for a type anywhere a type is expected; the disassembler prints it for
//!   type ids that do not exist.
//!
//! Minor liberties where pnacl-bcdis prints nothing usable: empty symbol names print as
//! `""`, name bytes of 128 and more print as their unsigned value, and a compound
//! initializer still open when the globals block ends gets its `}` before the block's.
//!
//! Basic block labels (`%bN:`) are comments to the assembler. What text cannot express at
//! all is how values were packed into bits: a VBR with redundant zero chunks, or non-zero
//! padding, comes out of the writer differently, so for such files the dump is printed
//! and [`DisError::NonCanonical`] is returned.
pub mod asm;
pub mod dis;
pub mod format;
pub mod lex;

pub use asm::{assemble, AsmError};
pub use dis::{disassemble, DisError};
