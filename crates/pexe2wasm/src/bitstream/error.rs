//! Errors of the bitstream layer and the position type shared by every decoding stage.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Where in the input something went wrong: the bit offset, the innermost block and the
/// record being read. Every decode error carries one so a user can find the bad bits.
///
/// Its JSON form (the batch report's and the service's) also spells out what a reader
/// would compute: `{"bit", "byte", "block", "block_name", "record", "record_index"}`,
/// every member present, `null` when unknown. `byte` and `block_name` are ignored when
/// read back (they follow from `bit` and `block`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(into = "PositionJson", from = "PositionJson")]
pub struct Position {
    /// Bit offset from the start of the file.
    pub bit: u64,
    /// Block id of the innermost open block, if any.
    pub block: Option<u32>,
    /// Record code being read, if known.
    pub record: Option<u64>,
    /// Index of that record within its block (0-based, counting records only), if known.
    pub record_index: Option<u32>,
}

impl Position {
    pub fn at_bit(bit: u64) -> Self {
        Position {
            bit,
            ..Default::default()
        }
    }
}

/// [`Position`] as JSON.
#[derive(Serialize, Deserialize)]
struct PositionJson {
    bit: u64,
    #[serde(default)]
    byte: u64,
    block: Option<u32>,
    #[serde(default)]
    block_name: Option<String>,
    record: Option<u64>,
    record_index: Option<u32>,
}

impl From<Position> for PositionJson {
    fn from(p: Position) -> Self {
        PositionJson {
            bit: p.bit,
            byte: p.bit / 8,
            block: p.block,
            block_name: p.block.map(|b| block_name(b).to_string()),
            record: p.record,
            record_index: p.record_index,
        }
    }
}

impl From<PositionJson> for Position {
    fn from(p: PositionJson) -> Self {
        Position {
            bit: p.bit,
            block: p.block,
            record: p.record,
            record_index: p.record_index,
        }
    }
}

/// Human name of a PNaCl block id, for messages and the disassembler.
pub fn block_name(id: u32) -> &'static str {
    match id {
        0 => "abbreviations",
        8 => "module",
        11 => "constants",
        12 => "function",
        14 => "valuesymtab",
        17 => "types",
        19 => "globals",
        _ => "unknown",
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "bit {} (byte {}:{})",
            self.bit,
            self.bit / 8,
            self.bit % 8
        )?;
        if let Some(b) = self.block {
            write!(f, ", {} block (id {})", block_name(b), b)?;
        }
        match (self.record_index, self.record) {
            (Some(i), Some(c)) => write!(f, ", record #{i} (code {c})")?,
            (None, Some(c)) => write!(f, ", record code {c}")?,
            (Some(i), None) => write!(f, ", record #{i}")?,
            (None, None) => {}
        }
        Ok(())
    }
}

/// What went wrong while reading or writing bits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BitstreamErrorKind {
    #[error("unexpected end of input (needed {needed} more bits)")]
    UnexpectedEof { needed: u64 },
    #[error("VBR value does not fit in 64 bits")]
    VbrOverflow,
    #[error("invalid abbreviation: {0}")]
    BadAbbrev(String),
    #[error("abbreviation id {id} is not defined in this block ({defined} defined)")]
    UnknownAbbrev { id: u64, defined: usize },
    #[error("abbreviation width {0} is out of range (1..=32)")]
    BadAbbrevWidth(u64),
    #[error("blocks nested deeper than {0}")]
    TooDeep(usize),
    #[error("{} block (id {block_id}) declares {words} words, which runs past the end of {}", block_name(*block_id), if *in_parent { "its parent block" } else { "the input" })]
    BlockTooLong {
        block_id: u32,
        words: u64,
        in_parent: bool,
    },
    #[error("block declared {declared} words but ended after {actual}")]
    BlockLengthMismatch { declared: u64, actual: u64 },
    #[error("array of {len} elements is longer than the remaining input")]
    ArrayTooLong { len: u64 },
    #[error("record has {len} operands, more than the remaining input can hold")]
    TooManyOperands { len: u64 },
    #[error("empty record (no record code)")]
    EmptyRecord,
    #[error("invalid char6 value {0}")]
    BadChar6(u64),
    #[error("{0}")]
    BlockInfo(String),
    #[error("only blocks may appear at the top level (found abbreviation id {0})")]
    TopLevelRecord(u64),
    #[error("end of block at the top level")]
    TopLevelEnd,
    #[error("input ended inside {0} open block(s)")]
    UnclosedBlocks(usize),
    #[error("record does not fit its abbreviation: {0}")]
    RecordMismatch(String),
    #[error("{0}")]
    Writer(String),
}

/// A bitstream error with its position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{position}: {kind}")]
pub struct BitstreamError {
    pub kind: BitstreamErrorKind,
    pub position: Position,
}

impl BitstreamError {
    pub fn new(kind: BitstreamErrorKind, position: Position) -> Self {
        BitstreamError { kind, position }
    }
}
