//! Stage 1: the bitstream container. Bits ↔ a stream of blocks, abbreviation definitions
//! and records ([`Cursor`] reads, [`StreamWriter`] writes the same bits back).

pub mod abbrev;
pub mod bits;
pub mod cursor;
pub mod error;
pub mod header;
pub mod stream_writer;

pub use abbrev::{Abbrev, AbbrevOp, AbbrevTarget, Scopes};
pub use cursor::{Cursor, Entry, Item, Kind, Record, SHORT_RECORD};
pub use error::{block_name, BitstreamError, BitstreamErrorKind, Position};
pub use header::Header;
pub use stream_writer::StreamWriter;

/// Re-encodes a pexe entry by entry: read every item and write it back. Used to prove the
/// container layer is lossless (the result must equal the input bit for bit).
pub fn reencode(data: &[u8]) -> Result<Vec<u8>, BitstreamError> {
    let header = Header::parse(data)?;
    let mut cur = Cursor::new(data, header.size);
    let mut w = StreamWriter::new(&data[..header.size]);
    while let Some(item) = cur.next()? {
        match item.entry {
            Entry::EnterBlock {
                block_id,
                abbrev_width,
                ..
            } => w.enter_block(block_id, abbrev_width)?,
            Entry::EndBlock => w.end_block()?,
            Entry::DefineAbbrev { abbrev, .. } => {
                w.define_abbrev(abbrev)?;
            }
            Entry::Record(r) => w.write_record(r.abbrev_id, r.values)?,
        }
    }
    cur.finish()?;
    w.finish()
}
