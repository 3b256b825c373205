//! Structured control flow for a lifted function whose block graph allows it.
//!
//! The block graph: a block falls through to the next one unless its last instruction
//! ends the flow; a direct `jmp` or `jcc` inside the function adds an edge to its target;
//! a `call` falls through, as does Subzero's `push $ret; jmp target` (`cfg::pushed_call`);
//! a direct jump out of the function is a tail call, a `ret` or
//! an indirect `jmp` leaves the function. When the graph (from the entry) is reducible
//! and every indirect jump is a return (NaCl's `pop %r; and $-32, %r32; add %r15, %r;
//! jmp *%r`, or `ret`), the blocks are laid out as after Ramsey, "Beyond Relooper"
//! (ICFP 2022): each block is emitted under its immediate dominator; a loop header is
//! wrapped in a `loop`; a block with two or more forward predecessors (a merge) follows a
//! `block` opened around its dominator's code, so that a forward jump to it is a `br` out
//! of that block; a block with one forward predecessor is emitted in place of the jump;
//! a backward jump is a `br` to its header's `loop`. Conditional jumps become `br_if` or
//! `if`/`else`. Cranelift then sees the program's own loops and merges, not one loop
//! header where every local is live.
//!
//! A return in a structured function returns when its target is the caller's return
//! address, as in the dispatch form; any other target goes through the function table
//! (a tail call to the function starting there). The dispatch form would also go to a
//! bundle start inside the function; a structured function has no way into the middle
//! of its code, so such a return traps on the table's empty slot. A function with an
//! indirect jump that is not a return (a switch table, a computed goto, an indirect
//! tail call) or an irreducible graph keeps the dispatch loop.
//!
//! Everything is linear or near-linear in the blocks (iterative depth-first search,
//! Cooper, Harvey and Kennedy's dominators on the reverse postorder, interval tests for
//! dominance) and the emission is iterative (no recursion on huge functions).

use super::{
    direct_target, ends_flow, pushed_call, BlockType, Em, Function, Instruction, LiftError, R,
};
use super::{Mnemonic, OpKind, Register, NULL_REGION};
use iced_x86::FlowControl;
use std::cell::RefCell;
use std::thread::LocalKey;

const NONE: u32 = u32::MAX;

/// The element types of the layout's vectors, each with a thread's pool of spare
/// vectors: most functions are small, and allocating a score of vectors for each was
/// the layout's main cost.
trait Pooled: Copy + 'static {
    fn pool() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>>;
}
macro_rules! pooled {
    ($($t:ty => $name:ident),*) => {
        thread_local! {
            $(static $name: RefCell<Vec<Vec<$t>>> = const { RefCell::new(Vec::new()) };)*
        }
        $(impl Pooled for $t {
            fn pool() -> &'static LocalKey<RefCell<Vec<Vec<Self>>>> {
                &$name
            }
        })*
    };
}
pooled!(u32 => POOL_U32, bool => POOL_BOOL, [u32; 2] => POOL_PAIR, (u32, u8) => POOL_DFS, Act => POOL_ACT);

/// A vector taken from its pool, given back when dropped.
struct Pv<T: Pooled>(Vec<T>);
impl<T: Pooled> Pv<T> {
    fn new(n: usize, fill: T) -> Self {
        let mut v = T::pool().with(|p| p.borrow_mut().pop()).unwrap_or_default();
        v.clear();
        v.resize(n, fill);
        Pv(v)
    }
}
impl<T: Pooled> Drop for Pv<T> {
    fn drop(&mut self) {
        let v = std::mem::take(&mut self.0);
        T::pool().with(|p| p.borrow_mut().push(v));
    }
}
impl<T: Pooled> std::ops::Deref for Pv<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}
impl<T: Pooled> std::ops::DerefMut for Pv<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

/// What the last instruction of a block did with control, in the structured form.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Term {
    /// Nothing recorded: it falls through or left the function (return, tail call, trap).
    None,
    /// A direct `jmp` to this block.
    Jump(u32),
    /// A `jcc` to this block, its condition (i32) on the stack; else the next block.
    Cond(u32),
}

/// The layout of a structurable function (nodes are numbered in reverse postorder).
pub(super) struct Plan {
    /// Reverse postorder number of each block (NONE: unreachable from the entry).
    rpo: Pv<u32>,
    /// The block of each reverse postorder number.
    order: Pv<u32>,
    header: Pv<bool>,
    merge: Pv<bool>,
    /// Merge children in the dominator tree, by node: `kids[kid_at[x]..kid_at[x + 1]]`,
    /// highest reverse postorder number first (the outermost `block`).
    kid_at: Pv<u32>,
    kids: Pv<u32>,
}

/// Whether `t` is a jump target the structured form handles as an edge (inside the
/// function; a transfer to the null region traps instead).
pub(super) fn inside(func: &Function, t: u32) -> bool {
    t >= NULL_REGION && t >= func.start && t < func.end
}

/// Whether the indirect `jmp` at `insns[j]` is NaCl's return: `pop %r`, then (nops
/// between) `and $-32, %r32; add %r15, %r; jmp *%r`. The `and` may start a new block
/// (a bundle start); no block crossed may be a jump target (`targeted`), so the popped
/// value is the one jumped to.
fn is_return(
    insns: &[Instruction],
    j: usize,
    block_of: &dyn Fn(u32) -> Option<u32>,
    targeted: &[bool],
) -> bool {
    let jmp = &insns[j];
    if jmp.mnemonic() == Mnemonic::Ret {
        return true;
    }
    if jmp.op_count() != 1 || jmp.op0_kind() != OpKind::Register {
        return false;
    }
    let r = jmp.op0_register();
    if !r.is_gpr64() {
        return false;
    }
    let crossed_ok = |i: &Instruction| match block_of(i.ip() as u32) {
        Some(b) => !targeted[b as usize],
        None => true,
    };
    let mut k = j;
    let mut step = |want: &dyn Fn(&Instruction) -> bool| -> bool {
        loop {
            if k == 0 || !crossed_ok(&insns[k]) {
                return false;
            }
            k -= 1;
            let i = &insns[k];
            if matches!(i.mnemonic(), Mnemonic::Nop) {
                continue;
            }
            return want(i);
        }
    };
    let r32 = r.full_register32();
    step(&|i| {
        i.mnemonic() == Mnemonic::Add
            && i.op0_kind() == OpKind::Register
            && i.op0_register() == r
            && i.op1_kind() == OpKind::Register
            && i.op1_register() == Register::R15
    }) && step(&|i| {
        i.mnemonic() == Mnemonic::And
            && i.op0_kind() == OpKind::Register
            && i.op0_register() == r32
            && matches!(i.op1_kind(), OpKind::Immediate8to32 | OpKind::Immediate32)
            && i.immediate(1) as u32 == !31
    }) && step(&|i| {
        i.mnemonic() == Mnemonic::Pop && i.op0_kind() == OpKind::Register && i.op0_register() == r
    })
}

/// The layout of `func` (blocks `ranges`: instruction index ranges into `insns`), or
/// None when it keeps the dispatch loop.
pub(super) fn plan(
    func: &Function,
    insns: &[Instruction],
    ranges: &[(usize, usize)],
) -> Option<Plan> {
    let n = ranges.len();
    let block_of = |a: u32| func.blocks.binary_search(&a).ok().map(|k| k as u32);
    // successors: [taken or only, fallthrough]
    let mut succ = Pv::new(n, [NONE; 2]);
    let mut targeted = Pv::new(n, false);
    let mut indirect = Pv::new(0, 0u32);
    for (k, &(lo, hi)) in ranges.iter().enumerate() {
        if lo >= hi {
            return None;
        }
        let j = hi - 1;
        let ins = &insns[j];
        let next = if k + 1 < n { k as u32 + 1 } else { NONE };
        if let Some(ret) = pushed_call(insns, j) {
            // a call: control comes back at `ret`, the next block unless padding follows
            if ret == ins.next_ip() as u32 {
                succ[k] = [next, NONE];
            } else if inside(func, ret) {
                let b = block_of(ret)?;
                targeted[b as usize] = true;
                succ[k] = [b, NONE];
            }
            continue;
        }
        match ins.flow_control() {
            FlowControl::ConditionalBranch => match direct_target(ins) {
                Some(t) if inside(func, t) => {
                    let b = block_of(t)?;
                    targeted[b as usize] = true;
                    succ[k] = [b, next];
                }
                _ => succ[k] = [next, NONE],
            },
            FlowControl::UnconditionalBranch => {
                if let Some(t) = direct_target(ins).filter(|&t| inside(func, t)) {
                    let b = block_of(t)?;
                    targeted[b as usize] = true;
                    succ[k] = [b, NONE];
                }
            }
            FlowControl::IndirectBranch | FlowControl::Return => indirect.push(j as u32),
            _ if !ends_flow(ins) => succ[k] = [next, NONE],
            _ => {}
        }
    }
    if !indirect
        .iter()
        .all(|&j| is_return(insns, j as usize, &block_of, &targeted))
    {
        return None;
    }

    // reverse postorder (iterative depth-first search from the entry)
    let mut seen = Pv::new(n, false);
    let mut post = Pv::new(0, 0u32);
    let mut stack = Pv::new(1, (0u32, 0u8));
    seen[0] = true;
    while let Some(top) = stack.last_mut() {
        let (v, i) = *top;
        if i < 2 {
            top.1 += 1;
            let s = succ[v as usize][i as usize];
            if s != NONE && !seen[s as usize] {
                seen[s as usize] = true;
                stack.push((s, 0));
            }
        } else {
            post.push(v);
            stack.pop();
        }
    }
    post.reverse();
    let order = post;
    let m = order.len();
    let mut rpo = Pv::new(n, NONE);
    for (i, &b) in order.iter().enumerate() {
        rpo[b as usize] = i as u32;
    }
    // predecessors by reverse postorder number (CSR)
    let mut pred_at = Pv::new(m + 1, 0u32);
    for &b in order.iter() {
        for &s in &succ[b as usize] {
            if s != NONE {
                pred_at[rpo[s as usize] as usize + 1] += 1;
            }
        }
    }
    for i in 0..m {
        pred_at[i + 1] += pred_at[i];
    }
    let mut preds = Pv::new(pred_at[m] as usize, 0u32);
    let mut fill = Pv::new(0, 0u32);
    fill.extend_from_slice(&pred_at);
    for (x, &b) in order.iter().enumerate() {
        for &s in &succ[b as usize] {
            if s != NONE {
                let y = rpo[s as usize] as usize;
                preds[fill[y] as usize] = x as u32;
                fill[y] += 1;
            }
        }
    }
    // dominators (Cooper, Harvey, Kennedy): reducible graphs settle in a few rounds
    let mut idom = Pv::new(m, NONE);
    idom[0] = 0;
    let mut rounds = 0;
    loop {
        let mut changed = false;
        for x in 1..m {
            let mut new = NONE;
            for &p in &preds[pred_at[x] as usize..pred_at[x + 1] as usize] {
                if idom[p as usize] == NONE {
                    continue;
                }
                new = if new == NONE {
                    p
                } else {
                    let (mut a, mut b) = (p, new);
                    while a != b {
                        while a > b {
                            a = idom[a as usize];
                        }
                        while b > a {
                            b = idom[b as usize];
                        }
                    }
                    a
                };
            }
            if idom[x] != new {
                idom[x] = new;
                changed = true;
            }
        }
        rounds += 1;
        if !changed {
            break;
        }
        if rounds > 64 {
            return None;
        }
    }
    // dominator tree intervals: x dominates y iff pre[x] <= pre[y] < pre[x] + size[x]
    let mut size = Pv::new(m, 1u32);
    for x in (1..m).rev() {
        size[idom[x] as usize] += size[x];
    }
    // children of a node occupy consecutive preorder numbers after it; a node's first
    // child starts right after it, each next sibling after the previous one's subtree
    let mut pre = Pv::new(m, 0u32);
    let mut next_free = Pv::new(m, 0u32);
    next_free[0] = 1;
    for x in 1..m {
        // parents come first in reverse postorder
        let p = idom[x] as usize;
        pre[x] = next_free[p];
        next_free[p] += size[x];
        next_free[x] = pre[x] + 1;
    }
    let dominates = |x: usize, y: usize| pre[x] <= pre[y] && pre[y] < pre[x] + size[x];
    let mut header = Pv::new(m, false);
    let mut forward = Pv::new(m, 0u32);
    for y in 0..m {
        for &p in &preds[pred_at[y] as usize..pred_at[y + 1] as usize] {
            let p = p as usize;
            if p >= y {
                if !dominates(y, p) {
                    return None; // irreducible
                }
                header[y] = true;
            } else {
                forward[y] += 1;
            }
        }
    }
    let mut merge = Pv::new(m, false);
    for (g, &f) in merge.iter_mut().zip(forward.iter()) {
        *g = f >= 2;
    }
    let mut kid_at = Pv::new(m + 1, 0u32);
    for y in 1..m {
        if merge[y] {
            kid_at[idom[y] as usize + 1] += 1;
        }
    }
    for i in 0..m {
        kid_at[i + 1] += kid_at[i];
    }
    let mut kids = Pv::new(kid_at[m] as usize, 0u32);
    fill.clear();
    fill.extend_from_slice(&kid_at);
    for y in (1..m).rev() {
        if merge[y] {
            let p = idom[y] as usize;
            kids[fill[p] as usize] = y as u32;
            fill[p] += 1;
        }
    }
    Some(Plan {
        rpo,
        order,
        header,
        merge,
        kid_at,
        kids,
    })
}

#[derive(Clone, Copy)]
enum Act {
    /// Emit the node and its dominator subtree.
    Tree(u32),
    /// Control goes from node `.0` to node `.1`.
    Br(u32, u32),
    Else,
    End,
    /// The last block falls off the function's end.
    FallOff,
}

/// Emits `func` laid out by `plan`; `lift_block` lifts the instructions of a block and
/// says whether its end falls through.
pub(super) fn emit(
    e: &mut Em<'_>,
    plan: &Plan,
    mut lift_block: impl FnMut(&mut Em<'_>, usize) -> R<bool>,
    mut fall_off: impl FnMut(&mut Em<'_>),
) -> R {
    let n = plan.rpo.len();
    let m = plan.order.len();
    // the level of each node's live label (its loop, or the block it follows)
    let mut lvl = Pv::new(m, 0u32);
    let mut work = Pv::new(1, Act::Tree(0));
    while let Some(a) = work.pop() {
        match a {
            Act::End => e.end(),
            Act::Else => {
                e.i().else_();
            }
            Act::FallOff => fall_off(e),
            Act::Br(x, y) => {
                let (xu, yu) = (x as usize, y as usize);
                if y <= x || plan.merge[yu] {
                    let d = e.level - lvl[yu];
                    e.i().br(d);
                } else {
                    debug_assert!(xu < yu);
                    work.push(Act::Tree(y));
                }
            }
            Act::Tree(x) => {
                let xu = x as usize;
                if plan.header[xu] {
                    e.open(BlockType::Empty, 1);
                    lvl[xu] = e.level;
                    work.push(Act::End);
                }
                let kids = &plan.kids[plan.kid_at[xu] as usize..plan.kid_at[xu + 1] as usize];
                for &y in kids {
                    e.open(BlockType::Empty, 0);
                    lvl[y as usize] = e.level;
                    work.push(Act::Tree(y));
                    work.push(Act::End);
                }
                let k = plan.order[xu] as usize;
                e.term = Term::None;
                let falls = lift_block(e, k)?;
                let next = (k + 1 < n).then(|| plan.rpo[k + 1]);
                match e.term {
                    Term::Jump(b) => work.push(Act::Br(x, plan.rpo[b as usize])),
                    Term::Cond(b) => {
                        let t = plan.rpo[b as usize];
                        let is_br = |y: u32| y <= x || plan.merge[y as usize];
                        match next {
                            None => {
                                work.push(Act::FallOff);
                                e.open(BlockType::Empty, 2);
                                work.push(Act::End);
                                work.push(Act::Br(x, t));
                            }
                            Some(f) if f == t => {
                                e.i().w().drop();
                                work.push(Act::Br(x, t));
                            }
                            Some(f) if is_br(t) => {
                                let d = e.level - lvl[t as usize];
                                e.i().br_if(d);
                                work.push(Act::Br(x, f));
                            }
                            Some(f) if is_br(f) => {
                                let d = e.level - lvl[f as usize];
                                e.i().i32_eqz().br_if(d);
                                work.push(Act::Br(x, t));
                            }
                            Some(f) => {
                                e.open(BlockType::Empty, 2);
                                work.push(Act::End);
                                work.push(Act::Br(x, f));
                                work.push(Act::Else);
                                work.push(Act::Br(x, t));
                            }
                        }
                    }
                    Term::None if falls => match next {
                        Some(f) => work.push(Act::Br(x, f)),
                        None => work.push(Act::FallOff),
                    },
                    Term::None => {}
                }
            }
        }
    }
    if e.level != 0 {
        return Err(LiftError::Invalid {
            address: e.func.start,
        });
    }
    Ok(())
}
