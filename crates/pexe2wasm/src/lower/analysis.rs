//! What the lowering computes about a function before writing any code, in one place:
//! [`FnAnalysis::compute`] runs the analysis passes in order and the emitter (`inst.rs`,
//! `structurize.rs`, ...) only reads the result.
//!
//! 1. the use walk (`stackify::count_uses`): each value's users and last user, the static
//!    frame (constant-size allocas in the entry block), setjmp calls; for step 6, each
//!    value's accesses, the uses outside its block, the phis;
//! 2. placement (`stackify::analyze`): which values stay on the wasm stack;
//! 3. local numbering (`locals::Numbering`, fed by placement's walk; or
//!    [`number_locals_forward`] for input that walk cannot vouch for);
//! 4. the CFG (`cfg::build`): reachable blocks, dominators, loops, merges, dispatchers;
//! 5. the local layout ([`LocalLayout`]): parameters, then per type shared, own and
//!    scratch locals; every numbered value gets its index;
//! 6. (run before the layout) with `Locals::Liveness`, no setjmp, and phis or more than
//!    128 locals (`alloc::worth_it`), the allocation with liveness (`alloc::allocate`)
//!    shares the locals step 3 gave no shared one (phis and values used outside their
//!    block).

use super::cfg::{Cfg, NONE};
use super::inst::R;
use super::locals::{self, Local, Ordinal, ORD_BITS};
use super::{stackify, LowerCtx, LowerError, Scratch};
use crate::bitstream::Position;
use crate::ir::{Callee, ConstValue, Function, InstKind, ValueRef};

/// Scratch locals per type, live only inside one instruction's lowering.
const SCRATCH_I32: u32 = 4;
const SCRATCH_I64: u32 = 3;
const SCRATCH_F32: u32 = 2;
const SCRATCH_F64: u32 = 2;

/// The analysis of one function: everything the emitter reads and never changes.
pub(crate) struct FnAnalysis {
    /// Control flow (`cfg.rs`).
    pub cfg: Cfg,
    /// Placement (`stackify.rs`), per instruction index: emitted at its single use.
    pub inline: Vec<bool>,
    /// Per instruction value: its local, [`Local::NONE`] without one (`locals.rs`).
    pub local_of: Vec<Local>,
    /// Per block: it has a phi with a local (else no edge into it carries copies).
    pub phi_blocks: Vec<bool>,
    pub locals: LocalLayout,
    pub frame: Frame,
    /// The function returns a value.
    pub has_result: bool,
    /// Whether any value of the function (parameter, constant, result) is a vector:
    /// without, the per-instruction vector checks are skipped.
    pub vectors: bool,
}

/// The stack frame: saved `__stack_pointer` and frame base locals ([`Local::NONE`] when
/// the function needs no stack pointer), the static part's size and alignment, and the
/// offset of each constant-size entry-block alloca in it (by instruction index, [`NONE`]
/// for the others).
pub(crate) struct Frame {
    pub saved_sp: Local,
    pub fp: Local,
    pub size: u32,
    pub align: u32,
    pub static_off: Vec<u32>,
}

/// Where the locals are: the declarations (count, type slot), at most one per slot, and
/// the locals with a fixed role.
pub(crate) struct LocalLayout {
    pub decls: [(u32, usize); 5],
    pub n_decls: usize,
    /// The dispatch label (irreducible regions, setjmp), [`Local::NONE`] if not needed.
    pub label: Local,
    /// This invocation's id for setjmp (`sjlj.rs`), [`Local::NONE`] if the function calls
    /// none.
    pub sj_id: Local,
    /// First scratch local of each type (`SCRATCH_*` of them; i32 has the extras first).
    pub s_i32: Local,
    pub s_i64: Local,
    pub s_f32: Local,
    pub s_f64: Local,
    /// First of `simd::SCRATCH_V128` v128 scratch locals (functions with vectors only).
    pub s_v128: Local,
}

/// What the use walk found (step 1).
struct Uses {
    users: Vec<u32>,
    last: Vec<u32>,
    setjmps: Vec<u32>,
    static_off: Vec<u32>,
    /// Size and alignment of the static frame, before rounding.
    frame_bytes: u64,
    frame_align: u64,
    needs_sp: bool,
}

/// Locals numbered by type and ordinal (step 3), before the layout gives them indices.
struct Numbered {
    /// Per instruction value: type slot and ordinal, or [`Ordinal::NONE`].
    local_of: Vec<Ordinal>,
    phi_blocks: Vec<bool>,
    /// Own and shared locals per type.
    counts: [u32; 5],
    pool: [u32; 5],
    /// Own ordinals count down (the backward walk numbered them).
    reversed: bool,
    /// `alloc::allocate` numbered the own ones (ranks from 0 per type, after the pool).
    allocated: bool,
}

/// A scratch buffer taken over for one function: `len` copies of `fill`, in the
/// allocation the previous function left (given back through `Scratch` when done).
pub(crate) fn reuse<T: Clone>(buf: &mut Vec<T>, len: usize, fill: T) -> Vec<T> {
    let mut v = std::mem::take(buf);
    v.clear();
    v.resize(len, fill);
    v
}

/// An invalid-input error at the function's own position.
#[cold]
#[inline(never)]
fn invalid(f: &Function, msg: String) -> Box<LowerError> {
    Box::new(LowerError::Invalid {
        function: f.decl,
        message: msg,
        position: Position::at_bit(f.bit),
    })
}

impl FnAnalysis {
    /// Runs the analysis passes over `f` (see the module comment).
    pub fn compute(cx: &LowerCtx<'_>, f: &Function, scratch: &mut Scratch) -> R<FnAnalysis> {
        let m = cx.module;
        let decl = m
            .functions
            .get(f.decl.index())
            .ok_or_else(|| invalid(f, format!("no declaration @f{}", f.decl)))?;
        let ft = m
            .types
            .function(decl.ty)
            .ok_or_else(|| invalid(f, "declaration has no function type".into()))?;
        let has_result = !m.types.is_void(ft.ret);
        if ft.params.len() as u32 != f.num_params {
            return Err(invalid(
                f,
                "parameter count differs from the declaration".into(),
            ));
        }
        let uses = if cx.liveness_locals {
            scan_uses::<true>(cx, f, scratch)
        } else {
            scan_uses::<false>(cx, f, scratch)
        };
        let (mut inline, numbered) = place_and_number(cx, f, &uses, scratch);
        // Static allocas left without users by `scan_uses`: no local, emitted at every use.
        let entry_end = f.block_starts.get(1).map_or(f.insts.len(), |&e| e as usize);
        for (i, &off) in uses.static_off[..entry_end.min(f.insts.len())]
            .iter()
            .enumerate()
        {
            let n = f.insts[i].result.0.wrapping_sub(f.first_inst_value()) as usize;
            if off != NONE && uses.users.get(n) == Some(&NONE) {
                inline[i] = true;
            }
        }
        scratch.last_use = uses.last;
        let cfg =
            super::cfg::build(f, &uses.setjmps, &mut scratch.cfg).map_err(|e| invalid(f, e))?;
        scratch.setjmps = uses.setjmps;
        let frame_size = uses.frame_bytes.div_ceil(16) * 16;
        if frame_size > 0x4000_0000 {
            return Err(Box::new(LowerError::Unsupported {
                function: f.decl,
                message: format!("a stack frame of {frame_size} bytes"),
                position: Position::at_bit(f.bit),
            }));
        }
        if f.value_insts.len() >= 1 << ORD_BITS {
            return Err(invalid(f, "too many locals".into()));
        }
        let mut numbered = numbered;
        if !numbered.reversed {
            numbered.local_of.fill(Ordinal::NONE);
            numbered.pool = [0; 5];
            numbered.phi_blocks.fill(false);
            numbered.counts = number_locals_forward(
                cx,
                f,
                &inline,
                &uses.users,
                &mut numbered.local_of,
                &mut numbered.phi_blocks,
            )
            .map_err(|e| invalid(f, e))?;
        }
        scratch.users = uses.users;
        // Step 6: locals shared with liveness (`alloc.rs`); not with setjmp, nor after the
        // forward fallback.
        if cx.liveness_locals
            && numbered.reversed
            && scratch.setjmps.is_empty()
            && f.insts.len() < super::alloc::PHI_USE as usize
            && numbered.counts.iter().any(|&c| c > 0)
            && super::alloc::worth_it(f, &numbered.pool, &numbered.counts, &scratch.alloc)
        {
            if let Some(counts) = super::alloc::allocate(
                f,
                &scratch.last_use,
                &cfg.rpo_index,
                numbered.pool,
                &mut numbered.local_of,
                &mut scratch.alloc,
            ) {
                numbered.counts = counts;
                numbered.allocated = true;
            }
        }
        // Only functions of a module with vector types can have vector values.
        let vectors = cx.slots.contains(&super::SLOT_V128)
            && (f.insts.iter().any(|i| cx.is_vector(i.ty))
                || ft.params.iter().any(|&p| cx.is_vector(p))
                || f.consts.iter().any(|c| cx.is_vector(c.ty)));
        let needs = Needs {
            label: !cfg.dispatch.is_empty(),
            sp: uses.needs_sp,
            setjmp: !cfg.sites.is_empty(),
            vectors,
        };
        let mut local_of = std::mem::take(&mut scratch.local_of);
        let (locals, sp_locals) = LocalLayout::assign(f, &numbered, needs, &mut local_of)?;
        scratch.numbering = numbered.local_of;
        let (saved_sp, fp) = sp_locals.unwrap_or((Local::NONE, Local::NONE));
        Ok(FnAnalysis {
            cfg,
            inline,
            local_of,
            phi_blocks: numbered.phi_blocks,
            locals,
            frame: Frame {
                saved_sp,
                fp,
                size: frame_size as u32,
                align: uses.frame_align as u32,
                static_off: uses.static_off,
            },
            has_result,
            vectors,
        })
    }

    /// Gives the working memory back to `scratch` for the next function.
    pub fn recycle(self, scratch: &mut Scratch) {
        scratch.inline = self.inline;
        scratch.local_of = self.local_of;
        scratch.static_off = self.frame.static_off;
        scratch.phi_blocks = self.phi_blocks;
        self.cfg.recycle(&mut scratch.cfg);
    }
}

/// Step 1: one walk over the instructions: the users of each value (for stackify) and
/// its last user (for sharing locals), the frame (allocas of constant size in the entry
/// block share one static frame) and setjmp calls.
/// `LIVE`: also gather what the allocation with liveness needs (monomorphized, so that
/// the walk without it costs what it did).
fn scan_uses<const LIVE: bool>(cx: &LowerCtx<'_>, f: &Function, scratch: &mut Scratch) -> Uses {
    let m = cx.module;
    let first_inst = f.first_inst_value();
    let mut users = reuse(&mut scratch.users, f.value_insts.len(), NONE);
    let mut static_off = reuse(&mut scratch.static_off, f.insts.len(), NONE);
    let mut needs_sp = false;
    let mut setjmps = std::mem::take(&mut scratch.setjmps);
    setjmps.clear();
    let mut off: u64 = 0;
    let mut frame_align: u64 = 16;
    let entry_end = f.block_starts.get(1).map_or(f.insts.len(), |&e| e as usize);
    // Per value, its last user for the sharing of locals (`locals::last_use`); it starts
    // as the value's definition.
    let mut last = std::mem::take(&mut scratch.last_use);
    last.clear();
    last.extend_from_slice(&f.value_insts);
    // For the allocation with liveness (`alloc.rs`), gathered here because this walk
    // already visits every operand: per value its accesses, the uses by instructions
    // outside the value's block (by a phi: on the edge, from its source block), and the
    // phis. Left empty otherwise.
    let nv = f.value_insts.len();
    let live = LIVE;
    let a = &mut scratch.alloc;
    let mut count = reuse(&mut a.count, if live { nv } else { 0 }, 0);
    let (ev, phis) = (&mut a.ev, &mut a.phis);
    ev.clear();
    phis.clear();
    // The current block, where the next one starts, and the values defined in the
    // block before the current instruction: `bfirst..nextv` (values are numbered in
    // instruction order; `alloc::allocate` checks that).
    let mut b = 0usize;
    let mut next_start = f.block_starts.get(1).map_or(usize::MAX, |&e| e as usize);
    let (mut bfirst, mut nextv) = (0usize, 0usize);
    for (i, inst) in f.insts.iter().enumerate() {
        if live {
            while i >= next_start {
                b += 1;
                next_start = f
                    .block_starts
                    .get(b + 1)
                    .map_or(usize::MAX, |&e| e as usize);
                bfirst = nextv;
            }
        }
        let mut phi = None;
        // Allocas, calls and phis are among the kinds `count_uses` does not handle inline.
        let other = |kind: &InstKind| match kind {
            InstKind::Phi { incoming } => phi = Some(*incoming),
            InstKind::Alloca { size, align } => {
                needs_sp = true;
                if i < entry_end {
                    if let ValueRef::Const(c) = f.value_ref(*size, m.num_functions()) {
                        if let Some(ConstValue::Int(n)) = f.consts.get(c as usize).map(|c| c.value)
                        {
                            let a = align.bytes().unwrap_or(1).clamp(1, 1 << 16);
                            off = off.div_ceil(a) * a;
                            static_off[i] = off as u32;
                            off += n & 0xffff_ffff;
                            frame_align = frame_align.max(a);
                        }
                    }
                }
            }
            InstKind::Call(c) => {
                if let Callee::Direct(fid) = c.callee {
                    use crate::ir::Intrinsic::*;
                    match m.functions.get(fid.index()).and_then(|d| d.intrinsic) {
                        Some(Stacksave | Stackrestore) => needs_sp = true,
                        Some(NaclSetjmp) => setjmps.push(i as u32),
                        _ => {}
                    }
                }
            }
            _ => {}
        };
        let is_phi = live && matches!(inst.kind, InstKind::Phi { .. });
        stackify::count_uses(
            f,
            &inst.kind,
            i as u32,
            first_inst,
            &mut users,
            &mut last,
            other,
            |n| {
                if live {
                    count[n] += 1;
                    if !is_phi && (n < bfirst || n >= nextv) {
                        ev.push((n as u32, b as u32, i as u32));
                    }
                }
            },
        );
        if let Some(incoming) = phi {
            locals::mark_phi(f, incoming, first_inst, &mut last);
            if live {
                for &(v, from) in f.incoming(incoming) {
                    let n = v.0.wrapping_sub(first_inst) as usize;
                    if n < nv {
                        ev.push((n as u32, from.0, super::alloc::PHI_USE | i as u32));
                    }
                }
                phis.push((i as u32, b as u32));
            }
        }
        if live {
            let r = inst.result.0.wrapping_sub(first_inst) as usize;
            if r < nv {
                nextv = r + 1;
            }
        }
    }
    // A static alloca is the frame base plus a constant: emitted at each use, like a
    // constant, instead of held in a local (`FnAnalysis::compute` marks it inlined),
    // when that is no bigger: at offset 0 (`local.get` of the frame base), or with one
    // use (emitted once anyway; as an address, its offset goes into the memarg).
    for (i, &off) in static_off[..entry_end.min(f.insts.len())]
        .iter()
        .enumerate()
    {
        if off != NONE {
            let n = f.insts[i].result.0.wrapping_sub(first_inst) as usize;
            if let Some(u) = users.get_mut(n) {
                if off == 0 || *u != stackify::MANY {
                    *u = NONE;
                }
            }
        }
    }
    scratch.alloc.count = count;
    Uses {
        users,
        last,
        setjmps,
        static_off,
        frame_bytes: off,
        frame_align,
        needs_sp,
    }
}

/// Steps 2 and 3: placement, and the locals numbered in its backward walk, which meets
/// every statement once its inlining is decided: `locals::Numbering` gives the values
/// with uses a type and an ordinal there, sharing locals between block-local values (not
/// in functions that call setjmp). Phis are statements (never inlined). Anything unusual
/// (a type without a wasm equivalent, `value_insts` and the results disagreeing, a value
/// outside every block) leaves `reversed` false, and the work, and its error, to
/// [`number_locals_forward`] (one local per value, nothing shared).
fn place_and_number(
    cx: &LowerCtx<'_>,
    f: &Function,
    uses: &Uses,
    scratch: &mut Scratch,
) -> (Vec<bool>, Numbered) {
    let local_of = reuse(&mut scratch.numbering, f.value_insts.len(), Ordinal::NONE);
    let phi_blocks = reuse(&mut scratch.phi_blocks, f.block_starts.len(), false);
    let mut inline = std::mem::take(&mut scratch.inline);
    let mut numbering = locals::Numbering::new(
        cx,
        f,
        &uses.users,
        &uses.last,
        local_of,
        phi_blocks,
        std::mem::take(&mut scratch.local_queues),
        uses.setjmps.is_empty(),
        // With liveness, `alloc::allocate` shares the locals of the values listed here.
        (cx.liveness_locals && uses.setjmps.is_empty())
            .then(|| std::mem::take(&mut scratch.alloc.cross)),
    );
    let inlined = stackify::analyze(cx, f, &uses.users, &mut inline, |j, b| {
        numbering.statement(j, b)
    });
    let numbered = numbering.numbered + inlined;
    let forward = numbering.forward;
    let (counts, pool) = (numbering.counts, numbering.pool);
    let local_of = std::mem::take(&mut numbering.local_of);
    let phi_blocks = std::mem::take(&mut numbering.phi_blocks);
    if let Some(c) = numbering.cross.take() {
        scratch.alloc.cross = c;
    }
    scratch.local_queues = numbering.into_queues();
    let reversed = !forward && numbered == f.value_insts.len();
    (
        inline,
        Numbered {
            local_of,
            phi_blocks,
            counts,
            pool,
            reversed,
            allocated: false,
        },
    )
}

/// Which locals with a fixed role a function needs (besides the scratch ones).
#[derive(Clone, Copy)]
struct Needs {
    label: bool,
    sp: bool,
    setjmp: bool,
    vectors: bool,
}

impl LocalLayout {
    /// Step 5: parameters, then per type: shared locals, values with a local of their
    /// own, scratch (i32 extras first: label, saved stack pointer and frame base, setjmp
    /// id). Gives `local_of` (cleared first) the local of each numbered value; returns
    /// the layout and the stack pointer locals (saved, frame base) if needed.
    fn assign(
        f: &Function,
        numbered: &Numbered,
        needs: Needs,
        local_of: &mut Vec<Local>,
    ) -> R<(LocalLayout, Option<(Local, Local)>)> {
        let (counts, pool) = (numbered.counts, numbered.pool);
        let mut extra_i32 = SCRATCH_I32;
        let label_ord = extra_i32;
        if needs.label {
            extra_i32 += 1;
        }
        let sp_ord = extra_i32;
        if needs.sp {
            extra_i32 += 2;
        }
        let sj_ord = extra_i32;
        if needs.setjmp {
            extra_i32 += 1;
        }
        let extra_v128 = if needs.vectors {
            super::simd::SCRATCH_V128
        } else {
            0
        };
        let extras = [extra_i32, SCRATCH_I64, SCRATCH_F32, SCRATCH_F64, extra_v128];
        let mut base = [0u32; 5];
        let mut next = f.num_params;
        let mut decls = [(0u32, 0usize); 5];
        let mut n_decls = 0;
        for s in 0..5 {
            base[s] = next;
            let total = pool[s] + counts[s] + extras[s];
            if total > 0 {
                decls[n_decls] = (total, s);
                n_decls += 1;
            }
            next = next
                .checked_add(total)
                .ok_or_else(|| invalid(f, "too many locals".into()))?;
        }
        // Shared locals count up from each type's first local; own locals follow, their
        // reverse ordinals counting from the type's last one.
        let (mut first_local, mut step) = ([0u32; 5], [1u32; 5]);
        for s in 0..5 {
            first_local[s] = base[s] + pool[s];
            if numbered.reversed && !numbered.allocated {
                first_local[s] = (base[s] + pool[s] + counts[s]).wrapping_sub(1);
                step[s] = u32::MAX; // -1
            }
        }
        local_of.clear();
        local_of.extend(numbered.local_of.iter().map(|&l| {
            if l.is_none() {
                Local::NONE
            } else {
                locals::Numbering::index(l, &counts, &base, &first_local, &step)
            }
        }));
        let scratch_of = |s: usize| Local::new(base[s] + pool[s] + counts[s]);
        let s_i32 = scratch_of(0);
        let layout = LocalLayout {
            decls,
            n_decls,
            label: if needs.label {
                s_i32 + label_ord
            } else {
                Local::NONE
            },
            sj_id: if needs.setjmp {
                s_i32 + sj_ord
            } else {
                Local::NONE
            },
            s_i32,
            s_i64: scratch_of(1),
            s_f32: scratch_of(2),
            s_f64: scratch_of(3),
            s_v128: scratch_of(4),
        };
        let sp = needs.sp.then(|| (s_i32 + sp_ord, s_i32 + sp_ord + 1));
        Ok((layout, sp))
    }

    /// Writes the local declarations (the start of a function body).
    pub fn write_decls(&self, code: &mut Vec<u8>) {
        super::sink::leb_u32(code, self.n_decls as u32);
        for &(n, s) in &self.decls[..self.n_decls] {
            super::sink::leb_u32(code, n);
            // The value type bytes of i32, i64, f32, f64, v128 (slot order).
            code.push([0x7F, 0x7E, 0x7D, 0x7C, 0x7B][s]);
        }
    }
}

/// Numbers the locals of the values with uses in value order (`local_of`: type and
/// ordinal) and marks the blocks holding a phi with a local; returns the count per type.
/// The general form of the numbering done in stackify's walk, for the inputs that walk
/// does not vouch for; its errors are the lowering's errors for them.
fn number_locals_forward(
    cx: &LowerCtx<'_>,
    f: &Function,
    inline: &[bool],
    users: &[u32],
    local_of: &mut [Ordinal],
    phi_blocks: &mut [bool],
) -> Result<[u32; 5], String> {
    let mut counts = [0u32; 5];
    for (n, &idx) in f.value_insts.iter().enumerate() {
        let Some(inst) = f.insts.get(idx as usize) else {
            return Err(format!("value %v{n} has no instruction"));
        };
        let is_phi = matches!(inst.kind, InstKind::Phi { .. });
        if (is_phi || !inline[idx as usize]) && users[n] != NONE {
            let s = cx
                .slot(inst.ty)
                .ok_or_else(|| format!("value %v{n} has a type without a wasm equivalent"))?;
            local_of[n] = Ordinal::own(s, counts[s]);
            counts[s] += 1;
            if is_phi {
                let b = f.block_starts.partition_point(|&st| st <= idx);
                if let Some(p) = phi_blocks.get_mut(b.wrapping_sub(1)) {
                    *p = true;
                }
            }
        }
    }
    Ok(counts)
}
