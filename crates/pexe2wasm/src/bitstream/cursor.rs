//! The block-aware reader: turns bits into a stream of [`Entry`] items (enter block, end
//! block, abbreviation definition, record), resolving abbreviations and BLOCKINFO. Nothing
//! it allocates is sized by a count the input claims; every count is checked against the
//! bits that remain.

use super::abbrev::{
    char6_decode, Abbrev, AbbrevOp, AbbrevTarget, Plan, PlanOp, Scopes, BLOCKINFO_BLOCK_ID,
    BLOCKINFO_CODE_SETBID, MAX_ABBREV_WIDTH, PLAN_OPS, SIMPLE_OPS,
};
use super::bits::{BitReader, Eof, VbrError, PEEK_BITS};
use super::error::{BitstreamError, BitstreamErrorKind as K, Position};

/// Builtin abbreviation ids.
pub const END_BLOCK: u64 = 0;
pub const ENTER_SUBBLOCK: u64 = 1;
pub const DEFINE_ABBREV: u64 = 2;
pub const UNABBREV_RECORD: u64 = 3;

/// Values a record read by [`Cursor::next_short`] can hand back in its fixed array.
pub const SHORT_RECORD: usize = 16;

/// Deepest block nesting we accept. PNaCl needs 3 (module > function > constants); the
/// container allows more, but thousands of nested blocks are an attack, not a program.
pub const MAX_DEPTH: usize = 64;

/// One item of the bitstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry<'c> {
    EnterBlock {
        block_id: u32,
        abbrev_width: u32,
        /// Length of the block body in 32-bit words, as stored.
        len_words: u32,
    },
    EndBlock,
    DefineAbbrev {
        abbrev: &'c Abbrev,
        target: AbbrevTarget,
    },
    Record(Record<'c>),
}

/// A data record: the abbreviation id it was read with and its values (`values[0]` is the
/// record code).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Record<'c> {
    pub abbrev_id: u32,
    pub values: &'c [u64],
}

impl Record<'_> {
    #[inline]
    pub fn code(&self) -> u64 {
        self.values[0]
    }
    /// Operands after the code.
    #[inline]
    pub fn ops(&self) -> &[u64] {
        &self.values[1..]
    }
}

/// An owned summary of an entry, for consumers that keep the record values in their own
/// buffer (see [`Cursor::next_into`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    EnterBlock {
        block_id: u32,
        abbrev_width: u32,
    },
    EndBlock,
    DefineAbbrev,
    /// A record whose values were copied into the caller's buffer.
    Record {
        abbrev_id: u32,
    },
}

/// An entry with the bit position where it starts (its abbreviation id).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item<'c> {
    pub bit: u64,
    pub entry: Entry<'c>,
}

struct Open {
    /// Bit position where the block's body ends according to its length word.
    end_bit: u64,
    len_words: u64,
    body_start: u64,
    /// Records read so far in this block (for error positions); for the innermost block
    /// the count is in [`Cursor::records`] instead (see [`Cursor::push_open`]).
    records: u32,
}

/// Reads entries from a bitstream that starts at `start` (a byte offset, after the header).
pub struct Cursor<'a> {
    r: BitReader<'a>,
    scopes: Scopes,
    open: Vec<Open>,
    /// Records read so far in the innermost open block: counted here, not through
    /// `open.last_mut()`, because every record counts (one increment instead of a length
    /// check and an address computation).
    records: u32,
    values: Vec<u64>,
    /// Bit position of the entry being read, for errors.
    entry_bit: u64,
    /// Code of the record being read, once known.
    cur_code: Option<u64>,
    /// Bytes to treat as the end of the stream (trailing zero padding is allowed after the
    /// last top-level block).
    finished: bool,
    /// The abbreviation id width when data records take the fast paths (inside a block
    /// other than BLOCKINFO), else 0. Kept in step with `scopes` so a record's first check
    /// is one load.
    fast_width: u32,
}

impl<'a> Cursor<'a> {
    /// A cursor over `data`, starting at byte offset `start`.
    pub fn new(data: &'a [u8], start: usize) -> Self {
        let mut r = BitReader::new(data);
        let _ = r.seek((start.min(data.len()) as u64) * 8);
        Cursor {
            r,
            scopes: Scopes::default(),
            open: Vec::new(),
            records: 0,
            values: Vec::with_capacity(64),
            entry_bit: 0,
            cur_code: None,
            finished: false,
            fast_width: 0,
        }
    }

    /// A cursor that reads one block's body on its own, for decoding blocks in parallel.
    /// `scopes` comes from [`Scopes::detached`] taken when the block was entered;
    /// `body_start`, `len_words`, `block_id` and `abbrev_width` are what the enter record
    /// said. The new cursor starts inside the block and ends after its `EndBlock`.
    pub fn fork_block(
        data: &'a [u8],
        scopes: Scopes,
        block_id: u32,
        abbrev_width: u32,
        body_start: u64,
        len_words: u64,
    ) -> Result<Self, BitstreamError> {
        let mut c = Cursor {
            r: BitReader::new(data),
            scopes,
            open: Vec::with_capacity(4),
            records: 0,
            values: Vec::with_capacity(64),
            entry_bit: body_start,
            cur_code: None,
            finished: false,
            fast_width: 0,
        };
        c.start_block(block_id, abbrev_width, body_start, len_words)?;
        Ok(c)
    }

    /// Turns this cursor into what [`Cursor::fork_block`] would return for another block of
    /// the same input, keeping its buffers (one cursor serves every function a thread
    /// decodes, with no allocation per function). `scopes` is the abbreviation state the
    /// block starts from, as given to `fork_block` (only its shared lists are taken).
    pub fn refork_block(
        &mut self,
        scopes: &Scopes,
        block_id: u32,
        abbrev_width: u32,
        body_start: u64,
        len_words: u64,
    ) -> Result<(), BitstreamError> {
        self.scopes.reset_to(scopes);
        self.fast_width = 0;
        self.open.clear();
        self.records = 0;
        self.entry_bit = body_start;
        self.cur_code = None;
        self.finished = false;
        self.start_block(block_id, abbrev_width, body_start, len_words)
    }

    /// Positions a cursor with no open block inside the body of block `block_id`.
    fn start_block(
        &mut self,
        block_id: u32,
        abbrev_width: u32,
        body_start: u64,
        len_words: u64,
    ) -> Result<(), BitstreamError> {
        let end_bit = body_start + len_words * 32;
        let position = Position {
            bit: body_start,
            block: Some(block_id),
            record: None,
            record_index: None,
        };
        if end_bit > self.r.len_bits() {
            return Err(BitstreamError::new(
                K::BlockTooLong {
                    block_id,
                    words: len_words,
                    in_parent: false,
                },
                position,
            ));
        }
        self.r
            .seek(body_start)
            .map_err(|e| BitstreamError::new(K::UnexpectedEof { needed: e.needed }, position))?;
        self.scopes.enter(block_id, abbrev_width);
        self.sync_fast_width();
        self.push_open(Open {
            end_bit,
            len_words,
            body_start,
            records: 0,
        });
        Ok(())
    }

    /// Opens `o` as the innermost block: the enclosing block's record count moves into
    /// its `Open`, `o`'s into [`Cursor::records`].
    fn push_open(&mut self, o: Open) {
        if let Some(top) = self.open.last_mut() {
            top.records = self.records;
        }
        self.records = o.records;
        self.open.push(o);
    }

    /// Closes the innermost block, the inverse of [`Cursor::push_open`] (the returned
    /// `Open` carries its record count, so pushing it back restores the state).
    fn pop_open(&mut self) -> Option<Open> {
        let mut o = self.open.pop()?;
        o.records = self.records;
        self.records = self.open.last().map_or(0, |top| top.records);
        Some(o)
    }

    /// Where the body of the block just entered starts (valid right after `EnterBlock`).
    pub fn body_start(&self) -> u64 {
        self.open.last().map_or(0, |o| o.body_start)
    }

    fn sync_fast_width(&mut self) {
        self.fast_width = match self.scopes.current_block() {
            Some(b) if b != BLOCKINFO_BLOCK_ID && !self.finished => self.scopes.width(),
            _ => 0,
        };
    }

    /// Current bit position.
    pub fn pos(&self) -> u64 {
        self.r.pos()
    }

    /// Abbreviation state (current block, widths, BLOCKINFO).
    pub fn scopes(&self) -> &Scopes {
        &self.scopes
    }

    /// Depth of block nesting.
    pub fn depth(&self) -> usize {
        self.scopes.depth()
    }

    /// The position of the entry most recently returned (or being read).
    pub fn position(&self) -> Position {
        Position {
            bit: self.entry_bit,
            block: self.scopes.current_block(),
            record: self.cur_code,
            record_index: self.open.last().map(|_| self.records.saturating_sub(1)),
        }
    }

    fn err(&self, kind: K) -> BitstreamError {
        BitstreamError::new(kind, self.position())
    }

    fn eof(&self, e: Eof) -> BitstreamError {
        let mut p = self.position();
        p.bit = self.r.pos();
        BitstreamError::new(K::UnexpectedEof { needed: e.needed }, p)
    }

    #[inline(always)]
    fn vbr(&mut self, n: u32) -> Result<u64, BitstreamError> {
        self.r.read_vbr(n).map_err(|e| match e {
            VbrError::Eof(e) => self.eof(e),
            VbrError::Overflow => self.err(K::VbrOverflow),
        })
    }

    #[inline(always)]
    fn fixed(&mut self, n: u32) -> Result<u64, BitstreamError> {
        self.r.read(n).map_err(|e| self.eof(e))
    }

    /// True once the top level has no more blocks (the rest of the input, if any, is zero
    /// padding shorter than a block header).
    pub fn at_end(&self) -> bool {
        self.finished || (self.scopes.depth() == 0 && self.r.remaining() < 32)
    }

    /// Reads the next entry, or `None` at the end of the stream.
    // Not `Iterator::next`: items borrow the cursor (a lending iterator), which the trait
    // cannot express.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<Item<'_>>, BitstreamError> {
        if self.finished {
            return Ok(None);
        }
        if self.scopes.depth() == 0 && self.r.remaining() < 32 {
            // Less than a word left at top level: the end (a writer may pad to 4 bytes).
            self.finished = true;
            return Ok(None);
        }
        self.entry_bit = self.r.pos();
        self.cur_code = None;
        let width = self.scopes.width();
        let id = self.fixed(width)?;
        match id {
            END_BLOCK => {
                if self.scopes.depth() == 0 {
                    return Err(self.err(K::TopLevelEnd));
                }
                self.r.align32().map_err(|e| self.eof(e))?;
                let open = self.pop_open().expect("open block");
                if self.r.pos() != open.end_bit {
                    let actual = (self.r.pos() - open.body_start) / 32;
                    self.push_open(open);
                    return Err(self.err(K::BlockLengthMismatch {
                        declared: self.open.last().unwrap().len_words,
                        actual,
                    }));
                }
                self.scopes.exit();
                self.sync_fast_width();
                Ok(Some(Item {
                    bit: self.entry_bit,
                    entry: Entry::EndBlock,
                }))
            }
            ENTER_SUBBLOCK => self.enter_block(),
            DEFINE_ABBREV => {
                if self.scopes.depth() == 0 {
                    return Err(self.err(K::TopLevelRecord(id)));
                }
                let abbrev = self.read_abbrev_def()?;
                let target = self
                    .scopes
                    .define(abbrev)
                    .map_err(|m| self.err(K::BlockInfo(m)))?;
                let abbrev = &**self.scopes.arena.last().unwrap();
                Ok(Some(Item {
                    bit: self.entry_bit,
                    entry: Entry::DefineAbbrev { abbrev, target },
                }))
            }
            _ => {
                if self.scopes.depth() == 0 {
                    return Err(self.err(K::TopLevelRecord(id)));
                }
                self.records += 1;
                self.read_record(id)?;
                if self.scopes.current_block() == Some(BLOCKINFO_BLOCK_ID) {
                    if self.values[0] != BLOCKINFO_CODE_SETBID {
                        return Err(self.err(K::BlockInfo(format!(
                            "record code {} is not allowed in the abbreviations block",
                            self.values[0]
                        ))));
                    }
                    if self.values.len() != 2 || self.values[1] > u32::MAX as u64 {
                        return Err(self.err(K::BlockInfo(
                            "SETBID needs exactly one block id operand".into(),
                        )));
                    }
                    self.scopes.set_bid(self.values[1] as u32);
                }
                Ok(Some(Item {
                    bit: self.entry_bit,
                    entry: Entry::Record(Record {
                        abbrev_id: id as u32,
                        values: &self.values,
                    }),
                }))
            }
        }
    }

    /// Like [`Cursor::next`], but moves a record's values into `buf` (replacing its contents) and
    /// returns an owned [`Kind`], so the caller can keep using the cursor while it looks at
    /// the values. Returns the entry's bit position too.
    pub fn next_into(&mut self, buf: &mut Vec<u64>) -> Result<Option<(u64, Kind)>, BitstreamError> {
        // Fast path for the common entry, a data record inside a block other than BLOCKINFO:
        // the same steps as `next` takes for it, without building an `Item`.
        if let Some(id) = self.peek_record_id() {
            let bit = self.take_record_id(None);
            self.read_record(id)?;
            std::mem::swap(buf, &mut self.values);
            return Ok(Some((
                bit,
                Kind::Record {
                    abbrev_id: id as u32,
                },
            )));
        }
        let Some(item) = self.next()? else {
            return Ok(None);
        };
        let kind = match item.entry {
            Entry::EnterBlock {
                block_id,
                abbrev_width,
                ..
            } => Kind::EnterBlock {
                block_id,
                abbrev_width,
            },
            Entry::EndBlock => Kind::EndBlock,
            Entry::DefineAbbrev { .. } => Kind::DefineAbbrev,
            Entry::Record(r) => Kind::Record {
                abbrev_id: r.abbrev_id,
            },
        };
        let bit = item.bit;
        if let Kind::Record { .. } = kind {
            // Hand the values over by swapping buffers: no copy, and both keep capacity.
            std::mem::swap(buf, &mut self.values);
        }
        Ok(Some((bit, kind)))
    }

    /// Like [`Cursor::next_into`], but a record that fits one window of input (most
    /// instructions) comes back in `short` instead of `buf`: the third value is how many
    /// of `short` hold its values, 0 when they are in `buf` (or the entry is not a record).
    /// Saves the function decoder a vector push per field. Always inlined: called out of
    /// line it costs more than the pushes it saves.
    #[inline(always)]
    pub fn next_short(
        &mut self,
        buf: &mut Vec<u64>,
        short: &mut [u64; SHORT_RECORD],
    ) -> Result<Option<(u64, Kind, usize)>, BitstreamError> {
        if let Some(id) = self.peek_record_id() {
            return self.short_record(id, buf, short);
        }
        Ok(self.next_into(buf)?.map(|(bit, kind)| (bit, kind, 0)))
    }

    /// [`Cursor::next_short`] for the data record with abbreviation id `id` that
    /// [`peek_record_id`](Self::peek_record_id) saw.
    #[inline(always)]
    fn short_record(
        &mut self,
        id: u64,
        buf: &mut Vec<u64>,
        short: &mut [u64; SHORT_RECORD],
    ) -> Result<Option<(u64, Kind, usize)>, BitstreamError> {
        let bit = self.take_record_id(None);
        let n = if id == UNABBREV_RECORD {
            read_unabbreviated_short(&mut self.r, short)
        } else {
            match self.scopes.lookup_index(id) {
                Some(a) if self.scopes.plans[a].fast => {
                    read_planned_short(&mut self.r, &self.scopes.plans[a], short)
                }
                _ => None,
            }
        };
        let kind = Kind::Record {
            abbrev_id: id as u32,
        };
        if let Some(n) = n {
            // A plan has at least one operand: never an empty record.
            self.cur_code = Some(short[0]);
            return Ok(Some((bit, kind, n)));
        }
        self.read_record(id)?;
        std::mem::swap(buf, &mut self.values);
        Ok(Some((bit, kind, 0)))
    }

    /// Like [`Cursor::next_short`], but a record whose abbreviation is `<literal,
    /// array(fixed(8))>` (global data) comes back with its code in `short[0]` and its
    /// array in `bytes` (a new vector of exactly that length), copied from the input 8
    /// bytes at a time instead of value by value: the fourth value is true then. When the
    /// array does not fit the input, the record is read again the general way, which
    /// reports the error.
    #[inline]
    pub fn next_short_or_bytes(
        &mut self,
        buf: &mut Vec<u64>,
        short: &mut [u64; SHORT_RECORD],
        bytes: &mut Vec<u8>,
    ) -> Result<Option<(u64, Kind, usize, bool)>, BitstreamError> {
        if let Some(id) = self.peek_record_id() {
            let plan = self.scopes.lookup_index(id).map(|a| &self.scopes.plans[a]);
            if let Some(p) = plan.filter(|p| p.bytes) {
                let code = p.literals[0];
                let bit = self.take_record_id(Some(code));
                let mut data = Vec::new();
                let ok = match self.r.read_vbr(6) {
                    // `read_bytes` reserves exactly `len` once the input is known to hold it.
                    Ok(len) => self.r.read_bytes(len, &mut data),
                    Err(_) => false,
                };
                if ok {
                    short[0] = code;
                    *bytes = data;
                    return Ok(Some((
                        bit,
                        Kind::Record {
                            abbrev_id: id as u32,
                        },
                        1,
                        true,
                    )));
                }
                // Back to the record's start, uncounted: the general reader reports the
                // error.
                self.untake_record_id(bit)?;
            } else {
                // Not a byte array: read it as `next_short` would, without peeking again.
                return Ok(self
                    .short_record(id, buf, short)?
                    .map(|(bit, kind, n)| (bit, kind, n, false)));
            }
        }
        Ok(self
            .next_short(buf, short)?
            .map(|(bit, kind, n)| (bit, kind, n, false)))
    }

    /// The abbreviation id of the next entry when it is a data record read on the fast
    /// path (a block other than BLOCKINFO, `fast_width` set), without moving; `None`
    /// for anything else, which the general reader handles.
    #[inline(always)]
    fn peek_record_id(&self) -> Option<u64> {
        let width = self.fast_width;
        if width == 0 {
            return None;
        }
        let id = self.r.peek()? & ((1u64 << width) - 1);
        (id > DEFINE_ABBREV).then_some(id)
    }

    /// Starts the record [`peek_record_id`](Self::peek_record_id) saw: consumes its id,
    /// counts it in its block and notes its position and code. Returns its bit.
    #[inline(always)]
    fn take_record_id(&mut self, code: Option<u64>) -> u64 {
        let bit = self.r.pos();
        self.entry_bit = bit;
        self.cur_code = code;
        self.r.consume(self.fast_width);
        self.records += 1;
        bit
    }

    /// Undoes [`take_record_id`](Self::take_record_id) for the record at `bit`, so the
    /// general reader can read it again and report what is wrong with it.
    fn untake_record_id(&mut self, bit: u64) -> Result<(), BitstreamError> {
        self.records -= 1;
        self.r.seek(bit).map_err(|e| self.eof(e))
    }

    fn enter_block(&mut self) -> Result<Option<Item<'_>>, BitstreamError> {
        let block_id = self.vbr(8)?;
        let width = self.vbr(4)?;
        if block_id > u32::MAX as u64 {
            return Err(self.err(K::BlockInfo(format!("block id {block_id} is too large"))));
        }
        if width == 0 || width > MAX_ABBREV_WIDTH {
            return Err(self.err(K::BadAbbrevWidth(width)));
        }
        if self.scopes.depth() >= MAX_DEPTH {
            return Err(self.err(K::TooDeep(MAX_DEPTH)));
        }
        self.r.align32().map_err(|e| self.eof(e))?;
        let len_words = self.fixed(32)?;
        let body_start = self.r.pos();
        let end_bit = body_start + len_words * 32;
        let too_long = |in_parent| K::BlockTooLong {
            block_id: block_id as u32,
            words: len_words,
            in_parent,
        };
        if end_bit > self.r.len_bits() {
            return Err(self.err(too_long(false)));
        }
        if let Some(parent) = self.open.last() {
            if end_bit > parent.end_bit {
                return Err(self.err(too_long(true)));
            }
        }
        self.push_open(Open {
            end_bit,
            len_words,
            body_start,
            records: 0,
        });
        self.scopes.enter(block_id as u32, width as u32);
        self.sync_fast_width();
        Ok(Some(Item {
            bit: self.entry_bit,
            entry: Entry::EnterBlock {
                block_id: block_id as u32,
                abbrev_width: width as u32,
                len_words: len_words as u32,
            },
        }))
    }

    /// After an `EnterBlock`, skips the whole block body using its length word. The caller
    /// does not see the block's contents or its `EndBlock`.
    pub fn skip_block(&mut self) -> Result<(), BitstreamError> {
        let open = self
            .pop_open()
            .ok_or_else(|| self.err(K::Writer("skip_block outside a block".into())))?;
        self.r.seek(open.end_bit).map_err(|e| self.eof(e))?;
        self.scopes.exit();
        self.sync_fast_width();
        Ok(())
    }

    fn read_abbrev_def(&mut self) -> Result<Abbrev, BitstreamError> {
        let numops = self.vbr(5)?;
        // Each operand takes at least 4 bits; do not trust the count for allocation.
        if numops > self.r.remaining() / 4 + 1 {
            return Err(self.err(K::TooManyOperands { len: numops }));
        }
        let mut ops = Vec::with_capacity(numops as usize);
        for _ in 0..numops {
            let is_literal = self.fixed(1)?;
            if is_literal == 1 {
                ops.push(AbbrevOp::Literal(self.vbr(8)?));
                continue;
            }
            let enc = self.fixed(3)?;
            let op = match enc {
                1 | 2 => {
                    let w = self.vbr(5)?;
                    if w > 64 {
                        return Err(self.err(K::BadAbbrev(format!(
                            "{} width {w} is over 64",
                            if enc == 1 { "fixed" } else { "vbr" }
                        ))));
                    }
                    if enc == 1 {
                        AbbrevOp::Fixed(w as u8)
                    } else {
                        AbbrevOp::Vbr(w as u8)
                    }
                }
                3 => AbbrevOp::Array,
                4 => AbbrevOp::Char6,
                5 => {
                    return Err(self.err(K::BadAbbrev(
                        "blob operands are not allowed in PNaCl bitcode".into(),
                    )))
                }
                e => return Err(self.err(K::BadAbbrev(format!("unknown operand encoding {e}")))),
            };
            ops.push(op);
        }
        let abbrev = Abbrev { ops };
        abbrev.validate().map_err(|m| self.err(K::BadAbbrev(m)))?;
        Ok(abbrev)
    }

    fn read_record(&mut self, id: u64) -> Result<(), BitstreamError> {
        self.values.clear();
        let (r, out) = (&mut self.r, &mut self.values);
        let res = if id == UNABBREV_RECORD {
            read_unabbreviated(r, out)
        } else {
            let Some(a) = self.scopes.lookup_index(id) else {
                return Err(self.err(K::UnknownAbbrev {
                    id,
                    defined: self.scopes.num_defined(),
                }));
            };
            let plan = &self.scopes.plans[a];
            if plan.fast && read_planned(r, plan, out) {
                Ok(())
            } else {
                read_abbreviated(r, &self.scopes.arena[a].ops, out)
            }
        };
        if let Some(&code) = self.values.first() {
            self.cur_code = Some(code);
        }
        match res {
            Ok(()) if self.values.is_empty() => Err(self.err(K::EmptyRecord)),
            Ok(()) => Ok(()),
            Err(ReadFail::Eof(e)) => Err(self.eof(e)),
            Err(ReadFail::Overflow) => Err(self.err(K::VbrOverflow)),
            Err(ReadFail::ArrayTooLong(len)) => Err(self.err(K::ArrayTooLong { len })),
            Err(ReadFail::TooManyOperands(len)) => Err(self.err(K::TooManyOperands { len })),
        }
    }

    /// Checks that the stream ended cleanly: every block closed.
    pub fn finish(&self) -> Result<(), BitstreamError> {
        if self.scopes.depth() > 0 {
            return Err(self.err(K::UnclosedBlocks(self.scopes.depth())));
        }
        Ok(())
    }
}

enum ReadFail {
    Eof(Eof),
    Overflow,
    ArrayTooLong(u64),
    TooManyOperands(u64),
}

impl From<Eof> for ReadFail {
    fn from(e: Eof) -> Self {
        ReadFail::Eof(e)
    }
}

impl From<VbrError> for ReadFail {
    fn from(e: VbrError) -> Self {
        match e {
            VbrError::Eof(e) => ReadFail::Eof(e),
            VbrError::Overflow => ReadFail::Overflow,
        }
    }
}

#[inline(always)]
fn read_scalar(r: &mut BitReader, op: AbbrevOp) -> Result<u64, ReadFail> {
    Ok(match op {
        AbbrevOp::Literal(v) => v,
        AbbrevOp::Fixed(w) => r.read(w as u32)?,
        AbbrevOp::Vbr(0) => 0,
        AbbrevOp::Vbr(w) => r.read_vbr(w as u32)?,
        AbbrevOp::Char6 => super::abbrev::char6_decode(r.read(6)?),
        AbbrevOp::Array => unreachable!("validated: array is never an element"),
    })
}

/// Takes one VBR field of `k`-bit chunks (2..=32) from a peeked window `w` at bit `used`,
/// or `None` if it runs past the window. Values stay below 2^57, so no overflow check.
#[inline(always)]
fn window_vbr(w: u64, used: &mut u32, k: u32) -> Option<u64> {
    if *used + k > PEEK_BITS {
        return None;
    }
    let hi = 1u64 << (k - 1);
    let piece = (w >> *used) & ((1u64 << k) - 1);
    *used += k;
    if piece & hi == 0 {
        // Most fields are one chunk.
        return Some(piece);
    }
    vbr_more_chunks(w, used, k, piece)
}

/// The rest of a VBR field of `k`-bit chunks whose first chunk `piece` (with its
/// continuation bit set) ended at bit `used` of window `w`; `None` if it runs past the
/// window.
#[inline(always)]
fn vbr_more_chunks(w: u64, used: &mut u32, k: u32, piece: u64) -> Option<u64> {
    if *used > PEEK_BITS {
        return None;
    }
    let hi = 1u64 << (k - 1);
    let mut result = piece & (hi - 1);
    let mut shift = k - 1;
    loop {
        if *used + k > PEEK_BITS {
            return None;
        }
        let piece = (w >> *used) & ((1u64 << k) - 1);
        *used += k;
        result |= (piece & (hi - 1)) << shift;
        shift += k - 1;
        if piece & hi == 0 {
            return Some(result);
        }
    }
}

/// Field `i` of plan `p` from window `w` at bit `used`, or `None` if it runs past the
/// window.
#[inline(always)]
fn plan_field(w: u64, used: &mut u32, p: &Plan, i: usize) -> Option<u64> {
    let k = p.widths[i] as u32;
    match p.kinds[i] {
        PlanOp::Literal => Some(p.literals[i]),
        PlanOp::Fixed | PlanOp::Char6 if *used + k <= PEEK_BITS => {
            let v = (w >> *used) & ((1u64 << k) - 1);
            *used += k;
            Some(if p.kinds[i] == PlanOp::Char6 {
                char6_decode(v)
            } else {
                v
            })
        }
        PlanOp::Fixed | PlanOp::Char6 => None,
        PlanOp::Vbr => window_vbr(w, used, k),
    }
}

/// [`read_planned`] into a fixed array: the number of values, or `None` having consumed
/// nothing.
#[inline(always)]
fn read_planned_short(r: &mut BitReader, p: &Plan, out: &mut [u64; SHORT_RECORD]) -> Option<usize> {
    let w = r.peek()?;
    if p.simple && w & p.simple_conts == 0 {
        // Every VBR field is one chunk: each field is at a known place. Slots past the
        // plan's operands get 0 (mask and literal 0); the caller reads only `n`.
        // An index loop over a constant count: unrolled, no bounds checks.
        #[allow(clippy::needless_range_loop)]
        for i in 0..SIMPLE_OPS {
            out[i] = ((w >> p.shifts[i]) & p.masks[i]) | p.literals[i];
        }
        r.consume(p.simple_bits);
        return Some(p.n as usize);
    }
    let n = (p.n as usize).min(PLAN_OPS);
    let mut used = 0u32;
    if !p.char6 {
        // Every operand read the same way: its chunk (empty for a literal), plus the
        // literal; only a VBR value of several chunks leaves the straight line. A field
        // past the window shows as `used` over the window at the end (shifts wrap, the
        // garbage is never kept).
        #[allow(clippy::needless_range_loop)]
        for i in 0..n {
            let piece = w.wrapping_shr(used) & p.masks[i];
            used += p.widths[i] as u32;
            out[i] = if piece & p.conts[i] == 0 {
                piece | p.literals[i]
            } else {
                vbr_more_chunks(w, &mut used, p.widths[i] as u32, piece)?
            };
        }
        if used > PEEK_BITS {
            return None;
        }
        r.consume(used);
        return Some(n);
    }
    // An index loop: `n <= PLAN_OPS`, so the bounds checks fold away (the iterator
    // adapters cost more here).
    #[allow(clippy::needless_range_loop)]
    for i in 0..n {
        out[i] = plan_field(w, &mut used, p, i)?;
    }
    r.consume(used);
    Some(n)
}

/// A short unabbreviated record (at most `SHORT_RECORD - 1` operands) into a fixed
/// array: the number of values, or `None` with the reader where it started. Records of up
/// to 7 operands come out of one window; longer ones (calls with many arguments) peek a new
/// window when a field runs past the current one.
#[inline(always)]
fn read_unabbreviated_short(r: &mut BitReader, out: &mut [u64; SHORT_RECORD]) -> Option<usize> {
    let mut w = r.peek()?;
    let mut used = 0u32;
    let code = window_vbr(w, &mut used, 6)?;
    let numops = window_vbr(w, &mut used, 6)?;
    if numops >= SHORT_RECORD as u64 {
        return None;
    }
    let n = numops as usize + 1;
    out[0] = code;
    let start = r.pos();
    let mut i = 1;
    while i < n.min(SHORT_RECORD) {
        let before = used;
        if let Some(v) = window_vbr(w, &mut used, 6) {
            out[i] = v;
            i += 1;
            continue;
        }
        // The field runs past this window: move on to a fresh one, unless this window
        // was fresh (a field longer than a window; the general reader reports it) or the
        // input ends.
        if before == 0 {
            r.seek(start).ok()?;
            return None;
        }
        r.consume(before);
        match r.peek() {
            Some(next) => {
                w = next;
                used = 0;
            }
            None => {
                r.seek(start).ok()?;
                return None;
            }
        }
    }
    r.consume(used);
    Some(n)
}

/// Reads a record with a fast [`Plan`] from one peeked window of input: no per-field
/// bounds checks or position updates. Returns false, having consumed nothing and added
/// nothing to `out`, when the window is not there (end of input) or a field runs past it;
/// the caller then reads the record the general way.
#[inline(always)]
fn read_planned(r: &mut BitReader, p: &Plan, out: &mut Vec<u64>) -> bool {
    let Some(w) = r.peek() else {
        return false;
    };
    let n = (p.n as usize).min(PLAN_OPS);
    let start = out.len();
    out.reserve(n);
    let mut used = 0u32;
    for i in 0..n {
        let Some(v) = plan_field(w, &mut used, p, i) else {
            out.truncate(start);
            return false;
        };
        out.push(v);
    }
    r.consume(used);
    true
}

/// Reads an unabbreviated record: vbr6 code, vbr6 operand count, vbr6 operands. Short
/// records come out of one peeked window; longer ones (or the end of the input) go field
/// by field.
#[inline(always)]
fn read_unabbreviated(r: &mut BitReader, out: &mut Vec<u64>) -> Result<(), ReadFail> {
    if let Some(w) = r.peek() {
        let mut used = 0u32;
        if let (Some(code), Some(numops)) =
            (window_vbr(w, &mut used, 6), window_vbr(w, &mut used, 6))
        {
            // Only counts that can fit the window; each operand takes at least 6 bits.
            if numops <= ((PEEK_BITS - used) / 6) as u64 {
                out.reserve(numops as usize + 1);
                out.push(code);
                let mut ok = true;
                for _ in 0..numops {
                    match window_vbr(w, &mut used, 6) {
                        Some(v) => out.push(v),
                        None => {
                            ok = false;
                            break;
                        }
                    }
                }
                if ok {
                    r.consume(used);
                    return Ok(());
                }
                out.clear();
            }
        }
    }
    read_unabbreviated_slow(r, out)
}

#[inline(never)]
fn read_unabbreviated_slow(r: &mut BitReader, out: &mut Vec<u64>) -> Result<(), ReadFail> {
    let code = r.read_vbr(6)?;
    out.push(code);
    let numops = r.read_vbr(6)?;
    // Each operand takes at least 6 bits; do not trust the count for allocation.
    if numops > r.remaining() / 6 {
        return Err(ReadFail::TooManyOperands(numops));
    }
    out.reserve(numops as usize);
    for _ in 0..numops {
        out.push(r.read_vbr(6)?);
    }
    Ok(())
}

/// Reads `len` fixed-width array elements (global data bytes are most of a pexe's array
/// values): as many as fit in each peeked window, then the rest one by one.
fn read_fixed_array(
    r: &mut BitReader,
    w: u32,
    len: u64,
    out: &mut Vec<u64>,
) -> Result<(), ReadFail> {
    let mut left = len;
    if (1..=32).contains(&w) {
        let per_window = (PEEK_BITS / w) as u64;
        let mask = (1u64 << w) - 1;
        while left >= per_window {
            let Some(win) = r.peek() else { break };
            out.extend((0..per_window as u32).map(|k| (win >> (k * w)) & mask));
            r.consume(per_window as u32 * w);
            left -= per_window;
        }
    }
    for _ in 0..left {
        out.push(r.read(w)?);
    }
    Ok(())
}

/// Reads the values of a record encoded with abbreviation `ops` (already validated).
#[inline(never)]
fn read_abbreviated(
    r: &mut BitReader,
    ops: &[AbbrevOp],
    out: &mut Vec<u64>,
) -> Result<(), ReadFail> {
    let mut i = 0;
    while i < ops.len() {
        let op = ops[i];
        if op == AbbrevOp::Array {
            let elem = ops[i + 1];
            let len = r.read_vbr(6)?;
            let min_bits = match elem {
                AbbrevOp::Fixed(w) => w as u64,
                AbbrevOp::Vbr(w) => w as u64,
                AbbrevOp::Char6 => 6,
                _ => 0,
            };
            // Elements that store no bits (literals, width 0) are legal, so the input
            // cannot bound their count; cap it at one element per remaining byte so a
            // claimed length of 2^60 cannot exhaust memory.
            let limit = r
                .remaining()
                .checked_div(min_bits)
                .unwrap_or(r.remaining() / 8 + 64);
            if len > limit {
                return Err(ReadFail::ArrayTooLong(len));
            }
            out.reserve(len as usize);
            // One match per array, not per element: arrays carry most of a pexe's bytes
            // (global data, symbol names).
            match elem {
                AbbrevOp::Fixed(w) => read_fixed_array(r, w as u32, len, out)?,
                AbbrevOp::Vbr(w) if w > 0 => {
                    for _ in 0..len {
                        out.push(r.read_vbr(w as u32)?);
                    }
                }
                AbbrevOp::Char6 => {
                    for _ in 0..len {
                        out.push(super::abbrev::char6_decode(r.read(6)?));
                    }
                }
                AbbrevOp::Literal(v) => out.resize(out.len() + len as usize, v),
                AbbrevOp::Vbr(_) => out.resize(out.len() + len as usize, 0),
                AbbrevOp::Array => unreachable!("validated: array is never an element"),
            }
            i += 2;
        } else {
            out.push(read_scalar(r, op)?);
            i += 1;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bitstream::{Abbrev, AbbrevOp, Header, StreamWriter};

    /// A stream with one block holding `records` (unabbreviated), and the header length.
    fn stream(records: &[Vec<u64>]) -> (Vec<u8>, usize) {
        let header = Header::standard().to_bytes();
        let mut w = StreamWriter::new(&header);
        w.enter_block(8, 3).unwrap();
        for r in records {
            w.write_record(UNABBREV_RECORD as u32, r).unwrap();
        }
        w.end_block().unwrap();
        (w.finish().unwrap(), header.len())
    }

    /// Every record through `next_short` and through `next_into`: values (or the error
    /// text) must agree, whether they came back in the fixed array or in the vector.
    fn both_ways(data: &[u8], start: usize) -> (Vec<Result<Vec<u64>, String>>, usize) {
        let mut a = Cursor::new(data, start);
        let mut b = Cursor::new(data, start);
        let (mut buf_a, mut buf_b) = (Vec::new(), Vec::new());
        let mut short = [0u64; SHORT_RECORD];
        let mut out = Vec::new();
        let mut shorts = 0;
        loop {
            let ra = a.next_short(&mut buf_a, &mut short);
            let rb = b.next_into(&mut buf_b);
            match (ra, rb) {
                (Ok(Some((bit_a, kind_a, n))), Ok(Some((bit_b, kind_b)))) => {
                    assert_eq!((bit_a, kind_a), (bit_b, kind_b));
                    assert_eq!(a.pos(), b.pos());
                    if let Kind::Record { .. } = kind_a {
                        let vals = if n > 0 { &short[..n] } else { &buf_a[..] };
                        shorts += (n > 0) as usize;
                        assert_eq!(vals, &buf_b[..]);
                        out.push(Ok(vals.to_vec()));
                    }
                }
                (Ok(None), Ok(None)) => return (out, shorts),
                (Err(ea), Err(eb)) => {
                    assert_eq!(ea.to_string(), eb.to_string());
                    out.push(Err(ea.to_string()));
                    return (out, shorts);
                }
                (ra, rb) => panic!("next_short {ra:?} but next_into {rb:?}"),
            }
        }
    }

    #[test]
    fn byte_arrays_read_like_the_general_reader() {
        // `<3, array(fixed(8))>` (id 4) and `<0, vbr(6), fixed(1)>` (id 5) records, at
        // every bit offset the mix gives, and an unabbreviated one.
        let header = Header::standard().to_bytes();
        let mut w = StreamWriter::new(&header);
        w.enter_block(19, 3).unwrap();
        let bytes = Abbrev {
            ops: vec![AbbrevOp::Literal(3), AbbrevOp::Array, AbbrevOp::Fixed(8)],
        };
        let var = Abbrev {
            ops: vec![AbbrevOp::Literal(0), AbbrevOp::Vbr(6), AbbrevOp::Fixed(1)],
        };
        w.define_abbrev(&bytes).unwrap();
        w.define_abbrev(&var).unwrap();
        let mut records = Vec::new();
        for len in 0..40u64 {
            let mut r = vec![3];
            r.extend((0..len).map(|i| (i * 37 + len) & 0xff));
            w.write_record(4, &r).unwrap();
            records.push(r);
            let v = vec![0, len * 3, len & 1];
            w.write_record(5, &v).unwrap();
            records.push(v);
        }
        w.write_record(UNABBREV_RECORD as u32, &[3, 300, 1])
            .unwrap();
        records.push(vec![3, 300, 1]);
        w.end_block().unwrap();
        let data = w.finish().unwrap();
        let start = header.len();
        let read = |data: &[u8]| {
            let mut a = Cursor::new(data, start);
            let mut b = Cursor::new(data, start);
            let (mut buf_a, mut buf_b, mut bytes) = (Vec::new(), Vec::new(), Vec::new());
            let mut short = [0u64; SHORT_RECORD];
            let (mut out, mut as_bytes) = (Vec::new(), 0);
            loop {
                let ra = a.next_short_or_bytes(&mut buf_a, &mut short, &mut bytes);
                let rb = b.next_into(&mut buf_b);
                match (ra, rb) {
                    (Ok(Some((bit_a, kind_a, n, in_bytes))), Ok(Some((bit_b, kind_b)))) => {
                        assert_eq!((bit_a, kind_a, a.pos()), (bit_b, kind_b, b.pos()));
                        if let Kind::Record { .. } = kind_a {
                            let vals: Vec<u64> = if in_bytes {
                                as_bytes += 1;
                                let mut v = vec![short[0]];
                                v.extend(bytes.iter().map(|&b| b as u64));
                                v
                            } else if n > 0 {
                                short[..n].to_vec()
                            } else {
                                buf_a.clone()
                            };
                            assert_eq!(vals, buf_b);
                            out.push(Ok(vals));
                        }
                    }
                    (Ok(None), Ok(None)) => return (out, as_bytes),
                    (Err(ea), Err(eb)) => {
                        assert_eq!(ea.to_string(), eb.to_string());
                        out.push(Err(ea.to_string()));
                        return (out, as_bytes);
                    }
                    (ra, rb) => panic!("next_short_or_bytes {ra:?} but next_into {rb:?}"),
                }
            }
        };
        let (got, as_bytes) = read(&data);
        let want: Vec<Result<Vec<u64>, String>> = records.into_iter().map(Ok).collect();
        assert_eq!(got, want);
        assert!(as_bytes >= 30, "only {as_bytes} arrays came back as bytes");
        for cut in start + 8..data.len() {
            let (got, _) = read(&data[..cut]);
            assert!(
                got.last().is_some_and(|r| r.is_err()),
                "cut at {cut}: {got:?}"
            );
        }
    }

    #[test]
    fn simple_plans_read_like_the_general_reader() {
        // PNaCl-like abbreviations of at most 4 operands (the one-step path when every VBR
        // field is one chunk) and a 5-operand one (never simple), with one-chunk and
        // several-chunk values in every field, then every truncation.
        use AbbrevOp::{Fixed, Literal, Vbr};
        let abbrevs = [
            vec![Literal(20), Vbr(6), Vbr(4), Vbr(4)],
            vec![Literal(2), Vbr(6), Vbr(6), Fixed(4)],
            vec![Literal(10)],
            vec![Literal(43), Vbr(6), Vbr(6)],
            vec![Vbr(6), Literal(7), Fixed(32), Vbr(32)],
            vec![Literal(1), Vbr(6), Vbr(6), Vbr(6), Vbr(6)],
        ];
        let header = Header::standard().to_bytes();
        let mut w = StreamWriter::new(&header);
        w.enter_block(12, 4).unwrap();
        for ops in &abbrevs {
            w.define_abbrev(&Abbrev { ops: ops.clone() }).unwrap();
        }
        let mut next = crate::test_rng(0x51_3b1e_5eed);
        let mut records = Vec::new();
        for k in 0..600 {
            let which = k % abbrevs.len();
            let rec: Vec<u64> = abbrevs[which]
                .iter()
                .map(|op| match *op {
                    Literal(v) => v,
                    Fixed(b) => next() & ((1u64 << b) - 1),
                    // Mostly one chunk, sometimes two, sometimes many.
                    _ => match next() % 4 {
                        0 | 1 => next() % 8,
                        2 => next() % 300,
                        _ => next() % (1 << 30),
                    },
                })
                .collect();
            w.write_record(4 + which as u32, &rec).unwrap();
            records.push(rec);
        }
        w.end_block().unwrap();
        let data = w.finish().unwrap();
        let start = header.len();
        let (got, shorts) = both_ways(&data, start);
        let want: Vec<Result<Vec<u64>, String>> = records.into_iter().map(Ok).collect();
        assert_eq!(got, want);
        assert!(shorts >= 350, "only {shorts} records came back short");
        for cut in start + 8..data.len() {
            let (got, _) = both_ways(&data[..cut], start);
            assert!(
                got.last().is_some_and(|r| r.is_err()),
                "cut at {cut}: {got:?}"
            );
        }
    }

    #[test]
    fn long_unabbreviated_records_span_windows_like_the_general_reader() {
        // 3 to 15 operands (one or several windows), small and many-chunk values, and one
        // record too long for the fixed array.
        let mut records = Vec::new();
        for n in 3..=15u64 {
            records.push((0..n).map(|i| i * 7 + n).collect::<Vec<_>>());
            // A small code, then operands of 9 vbr6 chunks each (one window apiece).
            let mut big = vec![n];
            big.extend((1..n).map(|i| (1u64 << 40) + i));
            records.push(big);
        }
        records.push((0..20).collect());
        let (data, start) = stream(&records);
        let (got, shorts) = both_ways(&data, start);
        let want: Vec<Result<Vec<u64>, String>> = records.into_iter().map(Ok).collect();
        assert_eq!(got, want);
        assert!(shorts >= 20, "only {shorts} records came back short");
        // Cut inside the records: both readers fail the same way, at the same place.
        for cut in (start + 8..data.len()).step_by(5) {
            let (got, _) = both_ways(&data[..cut], start);
            assert!(
                got.last().is_some_and(|r| r.is_err()),
                "cut at {cut}: {got:?}"
            );
        }
    }
}
