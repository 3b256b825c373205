//! The block-aware writer: the inverse of [`super::Cursor`]. Given the same sequence of
//! entries (enter, end, abbreviation definitions, records with their abbreviation ids) it
//! produces the same bits, computing block lengths itself.

use super::abbrev::{
    char6_encode, Abbrev, AbbrevOp, AbbrevTarget, Scopes, BLOCKINFO_BLOCK_ID,
    BLOCKINFO_CODE_SETBID, MAX_ABBREV_WIDTH,
};
use super::bits::BitWriter;
use super::cursor::{DEFINE_ABBREV, END_BLOCK, ENTER_SUBBLOCK, MAX_DEPTH, UNABBREV_RECORD};
use super::error::{BitstreamError, BitstreamErrorKind as K, Position};

/// Writes a bitstream after an already written header.
pub struct StreamWriter {
    w: BitWriter,
    scopes: Scopes,
    /// Byte offsets of the length words of open blocks.
    len_words_at: Vec<usize>,
}

impl StreamWriter {
    /// Starts a stream whose first bytes are `prefix` (the PNaCl header).
    pub fn new(prefix: &[u8]) -> Self {
        let mut w = BitWriter::with_capacity(prefix.len() + 4096);
        w.write_bytes(prefix);
        StreamWriter {
            w,
            scopes: Scopes::default(),
            len_words_at: Vec::new(),
        }
    }

    pub fn pos(&self) -> u64 {
        self.w.pos()
    }

    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }

    fn err(&self, kind: K) -> BitstreamError {
        BitstreamError::new(
            kind,
            Position {
                bit: self.w.pos(),
                block: self.scopes.current_block(),
                record: None,
                record_index: None,
            },
        )
    }

    fn write_abbrev_id(&mut self, id: u64) -> Result<(), BitstreamError> {
        let width = self.scopes.width();
        if width < 64 && id >> width != 0 {
            return Err(self.err(K::Writer(format!(
                "abbreviation id {id} does not fit the block's {width}-bit abbreviation width"
            ))));
        }
        self.w.write(id, width);
        Ok(())
    }

    pub fn enter_block(&mut self, block_id: u32, abbrev_width: u32) -> Result<(), BitstreamError> {
        if abbrev_width == 0 || abbrev_width as u64 > MAX_ABBREV_WIDTH {
            return Err(self.err(K::BadAbbrevWidth(abbrev_width as u64)));
        }
        if self.scopes.depth() >= MAX_DEPTH {
            return Err(self.err(K::TooDeep(MAX_DEPTH)));
        }
        self.write_abbrev_id(ENTER_SUBBLOCK)?;
        self.w.write_vbr(block_id as u64, 8);
        self.w.write_vbr(abbrev_width as u64, 4);
        self.w.align32();
        self.len_words_at.push((self.w.pos() / 8) as usize);
        self.w.write(0, 32);
        self.scopes.enter(block_id, abbrev_width);
        Ok(())
    }

    pub fn end_block(&mut self) -> Result<(), BitstreamError> {
        if self.scopes.depth() == 0 {
            return Err(self.err(K::TopLevelEnd));
        }
        self.write_abbrev_id(END_BLOCK)?;
        self.w.align32();
        let at = self.len_words_at.pop().expect("open block");
        let body_start = at as u64 * 8 + 32;
        let words = (self.w.pos() - body_start) / 32;
        let words =
            u32::try_from(words).map_err(|_| self.err(K::Writer("block too long".into())))?;
        self.w.patch_u32(at, words);
        self.scopes.exit();
        Ok(())
    }

    /// Defines an abbreviation in the current block (or, inside BLOCKINFO, for the block
    /// selected by the last SETBID record).
    pub fn define_abbrev(&mut self, abbrev: &Abbrev) -> Result<AbbrevTarget, BitstreamError> {
        abbrev.validate().map_err(|m| self.err(K::BadAbbrev(m)))?;
        if self.scopes.depth() == 0 {
            return Err(self.err(K::TopLevelRecord(DEFINE_ABBREV)));
        }
        self.write_abbrev_id(DEFINE_ABBREV)?;
        self.w.write_vbr(abbrev.ops.len() as u64, 5);
        for op in &abbrev.ops {
            match *op {
                AbbrevOp::Literal(v) => {
                    self.w.write(1, 1);
                    self.w.write_vbr(v, 8);
                }
                AbbrevOp::Fixed(n) => {
                    self.w.write(0, 1);
                    self.w.write(1, 3);
                    self.w.write_vbr(n as u64, 5);
                }
                AbbrevOp::Vbr(n) => {
                    self.w.write(0, 1);
                    self.w.write(2, 3);
                    self.w.write_vbr(n as u64, 5);
                }
                AbbrevOp::Array => {
                    self.w.write(0, 1);
                    self.w.write(3, 3);
                }
                AbbrevOp::Char6 => {
                    self.w.write(0, 1);
                    self.w.write(4, 3);
                }
            }
        }
        self.scopes
            .define(abbrev.clone())
            .map_err(|m| self.err(K::BlockInfo(m)))
    }

    /// Writes a record (`values[0]` is the code) with abbreviation id `abbrev_id` (3 for the
    /// unabbreviated form). Errors if the values do not fit the abbreviation.
    pub fn write_record(&mut self, abbrev_id: u32, values: &[u64]) -> Result<(), BitstreamError> {
        if values.is_empty() {
            return Err(self.err(K::EmptyRecord));
        }
        if self.scopes.depth() == 0 {
            return Err(self.err(K::TopLevelRecord(abbrev_id as u64)));
        }
        if self.scopes.current_block() == Some(BLOCKINFO_BLOCK_ID) {
            if values[0] != BLOCKINFO_CODE_SETBID
                || values.len() != 2
                || values[1] > u32::MAX as u64
            {
                return Err(self.err(K::BlockInfo(
                    "only SETBID records may appear in the abbreviations block".into(),
                )));
            }
            self.scopes.set_bid(values[1] as u32);
        }
        let id = abbrev_id as u64;
        if id == UNABBREV_RECORD {
            self.write_abbrev_id(id)?;
            self.w.write_vbr(values[0], 6);
            self.w.write_vbr((values.len() - 1) as u64, 6);
            for &v in &values[1..] {
                self.w.write_vbr(v, 6);
            }
            return Ok(());
        }
        if id < 4 {
            return Err(self.err(K::Writer(format!(
                "abbreviation id {id} is reserved and cannot encode a record"
            ))));
        }
        let abbrev = match self.scopes.lookup(id) {
            Some(a) => a.clone(),
            None => {
                return Err(self.err(K::UnknownAbbrev {
                    id,
                    defined: self.scopes.num_defined(),
                }))
            }
        };
        // Check the whole record fits before writing a single bit.
        check_fits(&abbrev, values).map_err(|m| self.err(K::RecordMismatch(m)))?;
        self.write_abbrev_id(id)?;
        let mut vi = 0;
        let mut i = 0;
        while i < abbrev.ops.len() {
            let op = abbrev.ops[i];
            if op == AbbrevOp::Array {
                let elem = abbrev.ops[i + 1];
                let rest = &values[vi..];
                self.w.write_vbr(rest.len() as u64, 6);
                for &v in rest {
                    self.write_scalar(elem, v);
                }
                vi = values.len();
                i += 2;
            } else {
                self.write_scalar(op, values[vi]);
                vi += 1;
                i += 1;
            }
        }
        Ok(())
    }

    fn write_scalar(&mut self, op: AbbrevOp, v: u64) {
        match op {
            AbbrevOp::Literal(_) => {}
            AbbrevOp::Fixed(n) => self.w.write(v, n as u32),
            AbbrevOp::Vbr(0) => {}
            AbbrevOp::Vbr(n) => self.w.write_vbr(v, n as u32),
            AbbrevOp::Char6 => self.w.write(char6_encode(v).unwrap(), 6),
            AbbrevOp::Array => unreachable!(),
        }
    }

    /// Finishes the stream; every block must be closed.
    pub fn finish(self) -> Result<Vec<u8>, BitstreamError> {
        if self.scopes.depth() > 0 {
            return Err(self.err(K::UnclosedBlocks(self.scopes.depth())));
        }
        Ok(self.w.finish())
    }
}

/// Why `values` cannot be written with `abbrev`, if it cannot.
pub fn check_fits(abbrev: &Abbrev, values: &[u64]) -> Result<(), String> {
    let mut vi = 0;
    let mut i = 0;
    let scalar_ok = |op: AbbrevOp, v: u64| -> Result<(), String> {
        match op {
            AbbrevOp::Literal(l) if l != v => Err(format!("value {v} is not the literal {l}")),
            AbbrevOp::Fixed(n) if n < 64 && v >> n != 0 => {
                Err(format!("value {v} does not fit fixed({n})"))
            }
            AbbrevOp::Vbr(0) if v != 0 => Err(format!("value {v} does not fit vbr(0)")),
            AbbrevOp::Char6 if char6_encode(v).is_none() => {
                Err(format!("value {v} is not a char6 character"))
            }
            _ => Ok(()),
        }
    };
    while i < abbrev.ops.len() {
        let op = abbrev.ops[i];
        if op == AbbrevOp::Array {
            for &v in &values[vi.min(values.len())..] {
                scalar_ok(abbrev.ops[i + 1], v)?;
            }
            return Ok(());
        }
        let v = *values.get(vi).ok_or_else(|| {
            format!(
                "record has {} values but the abbreviation needs more",
                values.len()
            )
        })?;
        scalar_ok(op, v)?;
        vi += 1;
        i += 1;
    }
    if vi != values.len() {
        return Err(format!(
            "record has {} values but the abbreviation takes {vi}",
            values.len()
        ));
    }
    Ok(())
}
