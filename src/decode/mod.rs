//! Stage 2: PNaCl records → typed IR ([`crate::ir::Module`]). Streams entries from the
//! bitstream [`Cursor`](crate::bitstream::Cursor) and checks every record as it goes: value
//! ids in range, operand types, counts. Errors name the bit offset, block and record.

use crate::bitstream::{BitstreamError, Position};
use crate::ir::Module;

/// Why a pexe could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The container itself is broken (truncated, bad abbreviation, bad block length...).
    #[error(transparent)]
    Bitstream(#[from] BitstreamError),
    /// The records are well formed bits but do not make a valid PNaCl module.
    #[error("{position}: {message}")]
    Invalid { message: String, position: Position },
}

impl DecodeError {
    pub fn position(&self) -> Position {
        match self {
            DecodeError::Bitstream(e) => e.position,
            DecodeError::Invalid { position, .. } => *position,
        }
    }
}

/// Decodes a whole pexe into IR.
pub fn decode(data: &[u8]) -> Result<Module, DecodeError> {
    let _ = data;
    Err(DecodeError::Invalid {
        message: "decoder not yet implemented".into(),
        position: Position::default(),
    })
}
