//! Abbreviations (how a record's values are packed into bits) and the per-block abbreviation
//! scopes, including the global abbreviations of the BLOCKINFO ("abbreviations") block.
//! The reader ([`super::Cursor`]) and the writer ([`super::StreamWriter`]) share [`Scopes`]
//! so both sides number abbreviations identically.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

/// One operand of an abbreviation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AbbrevOp {
    /// The value is always this constant; no bits are stored.
    Literal(u64),
    /// A fixed-width field of this many bits (0..=64).
    Fixed(u8),
    /// A VBR field with chunks of this many bits (0 or 2..=64; 0 stores no bits).
    Vbr(u8),
    /// A 6-bit character from `[a-zA-Z0-9._]`.
    Char6,
    /// A vbr6 length followed by that many values encoded by the next (last) operand.
    Array,
}

/// A user-defined abbreviation: a list of operands. `Array`, when present, is the second
/// to last operand and the last operand describes its elements.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Abbrev {
    pub ops: Vec<AbbrevOp>,
}

/// Largest abbreviation id width (in bits) we accept in a block header.
pub const MAX_ABBREV_WIDTH: u64 = 32;

impl Abbrev {
    /// Checks the structural rules of the container: an array is second to last, its element
    /// is a non-array scalar that stores at least one bit, widths are at most 64, and the
    /// abbreviation produces at least a record code.
    pub fn validate(&self) -> Result<(), String> {
        if self.ops.is_empty() {
            return Err("abbreviation has no operands".into());
        }
        for (i, op) in self.ops.iter().enumerate() {
            match *op {
                AbbrevOp::Fixed(w) if w > 64 => {
                    return Err(format!("fixed width {w} is over 64"));
                }
                AbbrevOp::Vbr(w) if w > 64 => return Err(format!("vbr width {w} is over 64")),
                AbbrevOp::Vbr(1) => return Err("vbr width 1 cannot hold any data".into()),
                AbbrevOp::Array => {
                    if i + 2 != self.ops.len() {
                        return Err("array must be the second to last operand".into());
                    }
                    if self.ops[i + 1] == AbbrevOp::Array {
                        return Err("array of arrays".into());
                    }
                    if i == 0 {
                        // The record code would come from the array; an empty array would
                        // give an empty record, which is not allowed.
                        return Err("array cannot supply the record code".into());
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// True if the abbreviation has an array operand.
    pub fn has_array(&self) -> bool {
        self.ops.contains(&AbbrevOp::Array)
    }
}

impl fmt::Display for AbbrevOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AbbrevOp::Literal(v) => write!(f, "{v}"),
            AbbrevOp::Fixed(w) => write!(f, "fixed({w})"),
            AbbrevOp::Vbr(w) => write!(f, "vbr({w})"),
            AbbrevOp::Char6 => write!(f, "char6"),
            AbbrevOp::Array => write!(f, "array"),
        }
    }
}

impl fmt::Display for Abbrev {
    /// PNaClAsm form: `<fixed(3), vbr(8), array(fixed(8))>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<")?;
        let mut i = 0;
        while i < self.ops.len() {
            if i > 0 {
                write!(f, ", ")?;
            }
            if self.ops[i] == AbbrevOp::Array && i + 1 < self.ops.len() {
                write!(f, "array({})", self.ops[i + 1])?;
                i += 2;
            } else {
                write!(f, "{}", self.ops[i])?;
                i += 1;
            }
        }
        write!(f, ">")
    }
}

/// Char6 encoding: `a-z` 0..25, `A-Z` 26..51, `0-9` 52..61, `.` 62, `_` 63.
pub fn char6_decode(v: u64) -> u64 {
    (match v {
        0..=25 => b'a' + v as u8,
        26..=51 => b'A' + (v - 26) as u8,
        52..=61 => b'0' + (v - 52) as u8,
        62 => b'.',
        _ => b'_',
    }) as u64
}

/// Inverse of [`char6_decode`]; `None` for characters outside the char6 set.
pub fn char6_encode(c: u64) -> Option<u64> {
    let c = u8::try_from(c).ok()?;
    Some(match c {
        b'a'..=b'z' => (c - b'a') as u64,
        b'A'..=b'Z' => (c - b'A') as u64 + 26,
        b'0'..=b'9' => (c - b'0') as u64 + 52,
        b'.' => 62,
        b'_' => 63,
        _ => return None,
    })
}

/// Longest abbreviation the reader's fast path handles.
pub(crate) const PLAN_OPS: usize = 8;

/// How a [`Plan`] operand is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PlanOp {
    Literal,
    Fixed,
    Vbr,
    Char6,
}

/// An abbreviation compiled for the reader's fast path: when `fast`, it has at most
/// [`PLAN_OPS`] operands, no array, and every field is a literal or at most 32 bits wide,
/// so a whole record usually comes out of one 57-bit window of input (see
/// `cursor::read_planned`). Other abbreviations take the general path.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub fast: bool,
    /// The abbreviation is `<literal, array(fixed(8))>` (global data): its array can be
    /// copied out as bytes (see `Cursor::next_short_or_bytes`).
    pub bytes: bool,
    pub n: u8,
    pub kinds: [PlanOp; PLAN_OPS],
    pub widths: [u8; PLAN_OPS],
    pub literals: [u64; PLAN_OPS],
    /// Per operand, the bits of its (first) chunk: 0 for literals. With `conts` and
    /// `literals` this reads every operand the same way, with no match on its kind.
    pub masks: [u64; PLAN_OPS],
    /// Per operand, the continuation bit of a VBR chunk, 0 for other kinds.
    pub conts: [u64; PLAN_OPS],
    /// Some operand is a char6 (which needs decoding; read by kind).
    pub char6: bool,
    /// At most [`SIMPLE_OPS`] operands, no char6, and the record fits a window when every
    /// VBR field is one chunk: then, if none of `simple_conts` is set in the window, the
    /// fields sit at `shifts` and the record is `simple_bits` long (see
    /// `cursor::read_planned_short`): no walk from field to field.
    pub simple: bool,
    pub simple_bits: u32,
    /// The continuation bit of every VBR field, at its place when all are one chunk.
    pub simple_conts: u64,
    /// Where each field starts when all VBR fields are one chunk (0 for literals).
    pub shifts: [u32; SIMPLE_OPS],
}

/// Operands of a plan read in one step when all its VBR fields are one chunk (PNaCl's
/// instruction abbreviations have at most 4).
pub(crate) const SIMPLE_OPS: usize = 4;

impl Plan {
    pub(crate) fn compile(a: &Abbrev) -> Plan {
        let mut p = Plan {
            fast: a.ops.len() <= PLAN_OPS,
            bytes: matches!(
                a.ops[..],
                [AbbrevOp::Literal(_), AbbrevOp::Array, AbbrevOp::Fixed(8)]
            ),
            n: a.ops.len().min(PLAN_OPS) as u8,
            kinds: [PlanOp::Literal; PLAN_OPS],
            widths: [0; PLAN_OPS],
            literals: [0; PLAN_OPS],
            masks: [0; PLAN_OPS],
            conts: [0; PLAN_OPS],
            char6: false,
            simple: false,
            simple_bits: 0,
            simple_conts: 0,
            shifts: [0; SIMPLE_OPS],
        };
        for (i, op) in a.ops.iter().take(PLAN_OPS).enumerate() {
            match *op {
                AbbrevOp::Literal(v) => p.literals[i] = v,
                // A zero-width field reads as 0 without consuming bits: a literal 0.
                AbbrevOp::Fixed(0) | AbbrevOp::Vbr(0) => {}
                AbbrevOp::Fixed(w) if w <= 32 => {
                    p.kinds[i] = PlanOp::Fixed;
                    p.widths[i] = w;
                }
                AbbrevOp::Vbr(w) if (2..=32).contains(&w) => {
                    p.kinds[i] = PlanOp::Vbr;
                    p.widths[i] = w;
                }
                AbbrevOp::Char6 => {
                    p.kinds[i] = PlanOp::Char6;
                    p.widths[i] = 6;
                }
                _ => p.fast = false,
            }
            let w = p.widths[i] as u32;
            if w > 0 {
                p.masks[i] = (1u64 << w) - 1;
            }
            match p.kinds[i] {
                PlanOp::Vbr => p.conts[i] = 1u64 << (w - 1),
                PlanOp::Char6 => p.char6 = true,
                _ => {}
            }
        }
        if p.fast && !p.char6 && a.ops.len() <= SIMPLE_OPS {
            let mut at = 0u32;
            for i in 0..a.ops.len() {
                p.shifts[i] = at;
                if p.conts[i] != 0 {
                    p.simple_conts |= p.conts[i] << at;
                }
                at += p.widths[i] as u32;
            }
            p.simple = at <= super::bits::PEEK_BITS;
            p.simple_bits = at;
        }
        p
    }
}

/// Abbreviation state of one open block.
#[derive(Debug, Clone)]
pub struct Scope {
    pub block_id: u32,
    pub abbrev_width: u32,
    /// Abbreviations usable in this block, by id - 4: first the global ones from BLOCKINFO
    /// (copied when the block was entered), then local ones in definition order.
    pub abbrevs: Vec<u32>,
    /// How many of `abbrevs` came from BLOCKINFO.
    pub num_global: usize,
}

/// Abbreviation bookkeeping shared by reader and writer.
#[derive(Debug, Clone, Default)]
pub struct Scopes {
    /// Every abbreviation seen, referenced by index from scopes and BLOCKINFO. The list is
    /// shared (`Arc`, copied on the first write) so a cursor forks for a function block
    /// without copying it.
    pub arena: Arc<Vec<Arc<Abbrev>>>,
    pub stack: Vec<Scope>,
    /// `arena` compiled for the reader's fast path, index for index (shared like `arena`).
    pub(crate) plans: Arc<Vec<Plan>>,
    /// BLOCKINFO abbreviations per block id (shared like `arena`).
    pub blockinfo: Arc<HashMap<u32, Vec<u32>>>,
    /// The block id selected by the last SETBID record inside a BLOCKINFO block.
    pub setbid: Option<u32>,
    /// Abbreviation lists of closed scopes, reused by the next `enter` (no allocation per
    /// block).
    spare: Vec<Vec<u32>>,
}

/// Block id of the BLOCKINFO block (PNaClAsm calls it "abbreviations").
pub const BLOCKINFO_BLOCK_ID: u32 = 0;
/// Record code of SETBID inside BLOCKINFO.
pub const BLOCKINFO_CODE_SETBID: u64 = 1;

/// Where a newly defined abbreviation went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AbbrevTarget {
    /// A global abbreviation for blocks with this id; `index` is its position (`@aN`).
    Global { block_id: u32, index: usize },
    /// A local abbreviation of the current block; `index` is its local position (`%aN`).
    Local { index: usize },
}

impl Scopes {
    /// Abbreviation id width in force (2 at the top level).
    pub fn width(&self) -> u32 {
        self.stack.last().map_or(2, |s| s.abbrev_width)
    }

    pub fn current_block(&self) -> Option<u32> {
        self.stack.last().map(|s| s.block_id)
    }

    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    pub fn enter(&mut self, block_id: u32, abbrev_width: u32) {
        let mut globals = self.spare.pop().unwrap_or_default();
        globals.clear();
        if let Some(g) = self.blockinfo.get(&block_id) {
            globals.extend_from_slice(g);
        }
        let num_global = globals.len();
        if block_id == BLOCKINFO_BLOCK_ID {
            self.setbid = None;
        }
        self.stack.push(Scope {
            block_id,
            abbrev_width,
            abbrevs: globals,
            num_global,
        });
    }

    pub fn exit(&mut self) {
        if let Some(s) = self.stack.pop() {
            if s.block_id == BLOCKINFO_BLOCK_ID {
                self.setbid = None;
            }
            self.spare.push(s.abbrevs);
        }
    }

    /// Looks up the abbreviation for id `id` (>= 4) in the current block.
    pub fn lookup(&self, id: u64) -> Option<&Abbrev> {
        self.lookup_index(id).map(|a| &*self.arena[a])
    }

    /// The arena index of abbreviation `id` (>= 4) in the current block.
    #[inline]
    pub(crate) fn lookup_index(&self, id: u64) -> Option<usize> {
        let scope = self.stack.last()?;
        let idx = usize::try_from(id.checked_sub(4)?).ok()?;
        scope.abbrevs.get(idx).map(|&a| a as usize)
    }

    pub fn num_defined(&self) -> usize {
        self.stack.last().map_or(0, |s| s.abbrevs.len())
    }

    /// The state needed to read a block elsewhere: every abbreviation and BLOCKINFO, but
    /// no open blocks (see [`super::Cursor::fork_block`]).
    pub fn detached(&self) -> Scopes {
        Scopes {
            arena: self.arena.clone(),
            plans: self.plans.clone(),
            stack: Vec::new(),
            blockinfo: self.blockinfo.clone(),
            setbid: None,
            spare: Vec::new(),
        }
    }

    /// Makes this the state [`Scopes::detached`] gives for `other`, keeping this one's
    /// buffers: the shared lists are taken from `other` (not copied), open scopes closed.
    pub fn reset_to(&mut self, other: &Scopes) {
        while !self.stack.is_empty() {
            self.exit();
        }
        if !Arc::ptr_eq(&self.arena, &other.arena) {
            self.arena = other.arena.clone();
        }
        if !Arc::ptr_eq(&self.plans, &other.plans) {
            self.plans = other.plans.clone();
        }
        if !Arc::ptr_eq(&self.blockinfo, &other.blockinfo) {
            self.blockinfo = other.blockinfo.clone();
        }
        self.setbid = None;
    }

    /// Records a SETBID seen inside BLOCKINFO.
    pub fn set_bid(&mut self, block_id: u32) {
        self.setbid = Some(block_id);
    }

    /// Adds an abbreviation: to BLOCKINFO's target block when inside BLOCKINFO, else to the
    /// current block. Errors if inside BLOCKINFO without a prior SETBID.
    pub fn define(&mut self, abbrev: Abbrev) -> Result<AbbrevTarget, String> {
        let in_blockinfo = self.current_block() == Some(BLOCKINFO_BLOCK_ID);
        let idx = self.arena.len() as u32;
        if in_blockinfo {
            let bid = self
                .setbid
                .ok_or("abbreviation in the abbreviations block before any SETBID record")?;
            Arc::make_mut(&mut self.plans).push(Plan::compile(&abbrev));
            Arc::make_mut(&mut self.arena).push(Arc::new(abbrev));
            let list = Arc::make_mut(&mut self.blockinfo).entry(bid).or_default();
            list.push(idx);
            Ok(AbbrevTarget::Global {
                block_id: bid,
                index: list.len() - 1,
            })
        } else {
            let scope = self
                .stack
                .last_mut()
                .ok_or("abbreviation at the top level")?;
            Arc::make_mut(&mut self.plans).push(Plan::compile(&abbrev));
            Arc::make_mut(&mut self.arena).push(Arc::new(abbrev));
            scope.abbrevs.push(idx);
            Ok(AbbrevTarget::Local {
                index: scope.abbrevs.len() - 1 - scope.num_global,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn char6_round_trip() {
        for v in 0..64 {
            assert_eq!(char6_encode(char6_decode(v)), Some(v));
        }
        assert_eq!(char6_encode(b' ' as u64), None);
    }

    #[test]
    fn display_matches_pnaclasm() {
        let a = Abbrev {
            ops: vec![
                AbbrevOp::Fixed(3),
                AbbrevOp::Vbr(8),
                AbbrevOp::Array,
                AbbrevOp::Fixed(8),
            ],
        };
        assert_eq!(a.to_string(), "<fixed(3), vbr(8), array(fixed(8))>");
        assert!(a.validate().is_ok());
    }

    #[test]
    fn invalid_abbrevs_are_rejected() {
        let bad = [
            vec![],
            vec![AbbrevOp::Fixed(65)],
            vec![AbbrevOp::Vbr(1)],
            vec![AbbrevOp::Literal(1), AbbrevOp::Array],
            vec![AbbrevOp::Array, AbbrevOp::Fixed(8)],
            vec![
                AbbrevOp::Literal(1),
                AbbrevOp::Array,
                AbbrevOp::Fixed(8),
                AbbrevOp::Fixed(8),
            ],
        ];
        for ops in bad {
            assert!(Abbrev { ops: ops.clone() }.validate().is_err(), "{ops:?}");
        }
    }
}
