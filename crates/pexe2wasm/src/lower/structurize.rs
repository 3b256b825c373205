//! Structured control flow from the (reducible) CFG, after Ramsey, "Beyond Relooper"
//! (ICFP 2022): the code of a node is followed by the code of the dominator-tree
//! children that are merge nodes (two or more forward in-edges), each after a `block`
//! whose end it follows; loop headers are wrapped in `loop`; an edge to a child with a
//! single forward in-edge is emitted inline. Conditional branches become `br_if` when one
//! side is a plain branch, otherwise `if`/`else`; switches become `br_table` (dense) or a
//! `br_if` chain, with a landing `block` per target that needs code (phi copies, inline
//! trees). The recursion of the paper runs on an explicit task stack.

use super::cfg::{Node, NONE};
use super::inst::{FnLower, R};
use super::Scratch;
use crate::ir::InstKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ctx {
    Loop(Node),
    Block(Node),
    If,
    Landing,
}

/// An open construct ([`Nest::ctx`], innermost last).
#[derive(Clone, Copy)]
pub(crate) struct Open {
    pub kind: Ctx,
    /// Where its opening operator is in the body (blocks of merge nodes only).
    at: u32,
    /// The outermost context position an emitted branch inside it has targeted (from
    /// inner constructs too, handed on as they close), `u32::MAX` if none: a block whose
    /// `low` is above its own position is neither branched to nor crossed by a branch.
    low: u32,
}

/// Work item of the structurizer's explicit stack (the paper's recursion).
///
/// `End(n)` and `Else(n)` carry how many `end`s in a row control reaches when it falls
/// off the code emitted before them, with nothing executed in between ([`ends_ahead`]).
pub(crate) enum Task {
    Tree(Node),
    Within(Node),
    /// The `end` of the innermost open construct (each open `Ctx` has exactly one, in
    /// the order of the contexts: the topmost closes the innermost).
    End(u32),
    /// The `else` of an `if`; below it are the else arm's `Edge` and the `if`'s `End`.
    Else(u32),
    Edge {
        from: Node,
        to: Node,
    },
}

/// How many `end`s in a row control reaches by falling off the code emitted so far,
/// before any other code runs: the first closes the innermost open construct, the next
/// the one around it, and so on. A `br d` to the end of a block is where control goes
/// anyway when `d` is less than this.
///
/// Kept with the tasks as they are pushed (the tasks below one never change while it is
/// on the stack): an `End` pushed on top of tasks with `n` ends ahead has `n + 1` (its
/// own `end`, then theirs); the `Else` of an `if` has what the `if`'s `End` has, since
/// falling off a then-arm continues after the `if`'s `end`, skipping the else arm; any
/// other task emits code first: none.
#[inline]
fn ends_ahead(tasks: &[Task]) -> u32 {
    match tasks.last() {
        Some(Task::End(n) | Task::Else(n)) => *n,
        _ => 0,
    }
}

/// Pushes the `End` of a construct just opened.
#[inline]
fn push_end(tasks: &mut Vec<Task>) {
    let n = ends_ahead(tasks) + 1;
    tasks.push(Task::End(n));
}

/// The structurizer's state: the constructs open at the current point of the body and
/// where each node's label is among them. Kept apart from the emitter so that the branch
/// depths and the removal of unused blocks can be reasoned about (and tested) alone.
pub(crate) struct Nest {
    /// Open constructs, innermost last.
    pub ctx: Vec<Open>,
    /// Per CFG node: the position in `ctx` of its label (its `loop`, or the `block` it
    /// follows), [`NONE`] while not open.
    pub label_pos: Vec<u32>,
    /// The work list (see [`Task`]); reused from function to function.
    pub tasks: Vec<Task>,
}

/// What closing the innermost construct amounts to ([`Nest::close`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Close {
    /// Write its `end`.
    End,
    /// A merge node's block that no emitted branch targets or crosses: its opening
    /// `block` (at this body offset) goes and no `end` is written.
    Unused(u32),
}

impl Nest {
    /// The state for a CFG of `n_nodes` nodes, in the buffers `scratch` holds.
    pub fn new(n_nodes: usize, scratch: &mut Scratch) -> Nest {
        let mut label_pos = std::mem::take(&mut scratch.label_pos);
        label_pos.clear();
        label_pos.resize(n_nodes, NONE);
        let mut ctx = std::mem::take(&mut scratch.ctx);
        ctx.clear();
        Nest {
            ctx,
            label_pos,
            tasks: std::mem::take(&mut scratch.tasks),
        }
    }

    /// Gives the buffers back to `scratch`.
    pub fn recycle(self, scratch: &mut Scratch) {
        scratch.label_pos = self.label_pos;
        scratch.ctx = self.ctx;
        scratch.tasks = self.tasks;
    }

    /// Opens context `c`; `at`: where its opening operator is (for a merge block).
    pub fn open(&mut self, c: Ctx, at: u32) {
        let i = self.ctx.len() as u32;
        if let Ctx::Loop(n) | Ctx::Block(n) = c {
            if let Some(p) = self.label_pos.get_mut(n.index()) {
                *p = i;
            }
        }
        self.ctx.push(Open {
            kind: c,
            at,
            low: u32::MAX,
        });
    }

    /// Closes the innermost construct and says what that writes.
    pub fn close(&mut self) -> Close {
        let q = (self.ctx.len() as u32).wrapping_sub(1);
        let close = match self.ctx.last() {
            // No emitted depth counted it, since no emitted branch inside goes to it or
            // beyond it (both arms of an if/else diamond fall into the merge, say).
            Some(&Open {
                kind: Ctx::Block(_),
                at,
                low,
            }) if low > q => Close::Unused(at),
            _ => Close::End,
        };
        if let Some(o) = self.ctx.pop() {
            // Branches from inside it are inside its parent too.
            if let Some(p) = self.ctx.last_mut() {
                p.low = p.low.min(o.low);
            }
            if let Ctx::Loop(n) | Ctx::Block(n) = o.kind {
                if let Some(p) = self.label_pos.get_mut(n.index()) {
                    *p = NONE;
                }
            }
        }
        close
    }

    /// Records an emitted branch of depth `d` (at most the deepest, for a table).
    #[inline]
    pub fn note_branch(&mut self, d: u32) {
        let n = self.ctx.len();
        if let Some(top) = self.ctx.last_mut() {
            top.low = top.low.min(n as u32 - 1 - d);
        }
    }

    /// The branch depth of the construct at position `pos`.
    pub fn depth_of_pos(&self, pos: u32) -> u32 {
        self.ctx.len() as u32 - 1 - pos
    }

    /// Branch depth to node `t`'s label (its loop or the block it follows), `None` when
    /// that label is not open here.
    pub fn depth_to(&self, t: Node) -> Option<u32> {
        let p = self.label_pos.get(t.index()).copied().unwrap_or(NONE);
        (p != NONE).then(|| self.depth_of_pos(p))
    }

    /// Whether a `br d` goes where control falls anyway: to the end of a block that the
    /// `end`s ahead reach (`ends`, see [`ends_ahead`]). A `br` to a loop jumps backwards.
    pub fn falls_through(&self, d: u32, ends: u32) -> bool {
        let is_block = matches!(
            self.ctx
                .len()
                .checked_sub(1 + d as usize)
                .and_then(|i| self.ctx.get(i))
                .map(|o| o.kind),
            Some(Ctx::Block(_))
        );
        is_block && d < ends
    }
}

impl FnLower<'_, '_> {
    pub fn structurize(&mut self) -> R<()> {
        // The task stack is reused from function to function (`Scratch::tasks`).
        let mut tasks = std::mem::take(&mut self.nest.tasks);
        tasks.clear();
        tasks.push(Task::Tree(self.a.cfg.entry));
        while let Some(mut t) = tasks.pop() {
            // A task whose work ends by pushing one task that would be popped right
            // away (a node's body after its tree, a tree after an inline edge) hands it
            // on here instead, without the round trip through the stack.
            loop {
                match t {
                    Task::Tree(x) => {
                        if self.a.cfg.loop_header[x.index()] {
                            self.sink().loop_(wasm_encoder::BlockType::Empty);
                            self.push_ctx(Ctx::Loop(x), 0);
                            push_end(&mut tasks);
                        }
                        t = Task::Within(x);
                        continue;
                    }
                    Task::Within(x) => {
                        // Merge children, last first (by position: `self` is borrowed
                        // mutably below).
                        for k in self.a.cfg.children.range(x).rev() {
                            let y = self.a.cfg.children.item(k);
                            if !self.a.cfg.merge[y.index()] {
                                continue;
                            }
                            let at = self.code.len() as u32;
                            self.sink().block(wasm_encoder::BlockType::Empty);
                            self.push_ctx(Ctx::Block(y), at);
                            tasks.push(Task::Tree(y));
                            push_end(&mut tasks);
                        }
                        // Last in, first out: the body, then End of the innermost block
                        // and the lowest merge child, and so on outwards.
                        self.body(x, &mut tasks)?;
                    }
                    Task::End(_) => match self.nest.close() {
                        Close::End => {
                            self.sink().end();
                        }
                        Close::Unused(at) => self.code.remove(at as usize, BLOCK_LEN),
                    },
                    Task::Else(_) => {
                        self.sink().else_();
                    }
                    Task::Edge { from, to } => {
                        if let Some(y) = self.edge(from, to, &tasks)? {
                            t = Task::Tree(y);
                            continue;
                        }
                    }
                }
                break;
            }
        }
        self.nest.tasks = tasks;
        Ok(())
    }

    fn push_ctx(&mut self, c: Ctx, at: u32) {
        self.nest.open(c, at);
    }

    /// `br d`, recorded for the removal of unused blocks (as every branch must be).
    fn br(&mut self, d: u32) {
        self.sink().br(d);
        self.note_branch(d);
    }

    /// `br_if d`, recorded as [`FnLower::br`] records it.
    fn br_if(&mut self, d: u32) {
        self.sink().br_if(d);
        self.note_branch(d);
    }

    #[inline]
    fn note_branch(&mut self, d: u32) {
        self.nest.note_branch(d);
    }

    /// Branch depth to node `t`'s label (its loop or the block it follows).
    fn depth_to(&self, t: Node) -> R<u32> {
        match self.nest.depth_to(t) {
            Some(d) => Ok(d),
            None => Err(self.err_at(0, format!("internal: no label for block %b{}", t.0))),
        }
    }

    /// True if the edge is a plain `br`: no copies, no label, and its target is a label.
    fn simple(&self, from: Node, to: Node) -> bool {
        let t = self.a.cfg.edge_target(from, to);
        (t == to || self.a.cfg.is_dispatch(from))
            && !self.has_copies(from, to)
            && (self.a.cfg.is_backward(from, t) || self.a.cfg.merge[t.index()])
    }

    /// Emits edge `from → to`: its copies, then a branch, or (`Some`) the node whose tree
    /// follows inline. `tasks`: the work after this edge; a `br d` to the end of a block
    /// that control reaches anyway by falling through ([`ends_ahead`]) is left out.
    fn edge(&mut self, from: Node, to: Node, tasks: &[Task]) -> R<Option<Node>> {
        self.emit_copies(from, to)?;
        let t = self.a.cfg.edge_target(from, to);
        if t != to && !self.a.cfg.is_dispatch(from) {
            let l = self.a.locals.label;
            self.sink().i32_const(to.label()).local_set(l);
        }
        if self.a.cfg.is_backward(from, t) || self.a.cfg.merge[t.index()] {
            let d = self.depth_to(t)?;
            let falls_through = self.nest.falls_through(d, ends_ahead(tasks));
            if !falls_through {
                self.br(d);
            }
            Ok(None)
        } else {
            Ok(Some(t))
        }
    }

    fn body(&mut self, x: Node, tasks: &mut Vec<Task>) -> R<()> {
        if self.a.cfg.is_dispatch(x) {
            let entries = self.a.cfg.dispatch_of(x).to_vec();
            let cases: Vec<(i64, Node)> = entries.iter().map(|&e| (e.label() as i64, e)).collect();
            let l = self.a.locals.label;
            return self.switch(x, Cond::Local32(l), entries[0], &cases, tasks);
        }
        let f = self.f;
        let seg = self.a.cfg.seg(f, x);
        let start = seg.start as usize;
        let insts = f.insts.get(start..seg.end as usize).unwrap_or(&[]);
        if let Some(next) = seg.next {
            // A piece that ends with a setjmp call: its code, then on to the resume node.
            for (i, inst) in insts.iter().enumerate() {
                if !self.a.inline[start + i] && !matches!(inst.kind, InstKind::Phi { .. }) {
                    self.emit_stmt(start + i)?;
                }
            }
            tasks.push(Task::Edge { from: x, to: next });
            return Ok(());
        }
        let Some((term, body)) = insts.split_last() else {
            return Err(self.err_at(start, format!("block %b{} is empty", seg.block)));
        };
        let ti = start + body.len();
        // Phis are skipped by `emit_stmt` (their locals are written on the edges).
        for i in start..ti {
            if !self.a.inline[i] {
                self.emit_stmt(i)?;
            }
        }
        match &term.kind {
            InstKind::Ret { val } => {
                if let Some(v) = val {
                    self.push_arg(*v)?;
                }
                self.epilogue();
                self.sink().return_();
            }
            InstKind::Unreachable => {
                self.sink().unreachable();
            }
            InstKind::Br { target } => tasks.push(Task::Edge {
                from: x,
                to: Node::of(*target),
            }),
            InstKind::CondBr {
                cond,
                then_bb,
                else_bb,
            } => {
                let (tb, eb) = (Node::of(*then_bb), Node::of(*else_bb));
                if tb == eb {
                    // Both arms go to the same block; the condition is still evaluated.
                    self.push(*cond)?;
                    self.sink().drop();
                    tasks.push(Task::Edge { from: x, to: tb });
                    return Ok(());
                }
                let c = self.push(*cond)?;
                self.zext(1, c);
                if self.simple(x, tb) {
                    let d = self.depth_to(tb)?;
                    self.br_if(d);
                    tasks.push(Task::Edge { from: x, to: eb });
                } else if self.simple(x, eb) {
                    let d = self.depth_to(eb)?;
                    self.negate_cond();
                    self.br_if(d);
                    tasks.push(Task::Edge { from: x, to: tb });
                } else {
                    // `x; i32.eqz; if A else B` is `x; if B else A`.
                    let (tb, eb) = if self.drop_eqz() { (eb, tb) } else { (tb, eb) };
                    self.sink().if_(wasm_encoder::BlockType::Empty);
                    self.push_ctx(Ctx::If, 0);
                    push_end(tasks);
                    let n = ends_ahead(tasks);
                    tasks.push(Task::Edge { from: x, to: eb });
                    // Falling off the then arm goes where the `if`'s `End` falls.
                    tasks.push(Task::Else(n));
                    tasks.push(Task::Edge { from: x, to: tb });
                }
            }
            InstKind::Switch(s) => {
                let ct = self.ty(s.cond)?;
                let sc = self.scalar(ct, ti)?;
                let bits = sc.bits();
                // Pushed by `switch` once the landing blocks are open.
                let cond = if bits == 64 {
                    Cond::Stack64(s.cond)
                } else {
                    Cond::Stack32(s.cond, bits)
                };
                let cases: Vec<(i64, Node)> = s
                    .cases
                    .iter()
                    .map(|c| (c.value, Node::of(c.target)))
                    .collect();
                self.switch(x, cond, Node::of(s.default), &cases, tasks)?;
            }
            _ => {
                return Err(self.err_at(
                    ti,
                    format!("block %b{} does not end in a terminator", seg.block),
                ));
            }
        }
        Ok(())
    }

    /// A multi-way branch on a value (already on the stack, or in a local).
    fn switch(
        &mut self,
        x: Node,
        cond: Cond,
        default: Node,
        cases: &[(i64, Node)],
        tasks: &mut Vec<Task>,
    ) -> R<()> {
        let mut targets: Vec<Node> = vec![default];
        for &(_, t) in cases {
            if !targets.contains(&t) {
                targets.push(t);
            }
        }
        let landing: Vec<Node> = targets
            .iter()
            .copied()
            .filter(|&t| !self.simple(x, t))
            .collect();
        // Landing blocks, innermost = first; remember each one's context position.
        let base = self.nest.ctx.len() as u32;
        let nl = landing.len() as u32;
        for _ in &landing {
            self.sink().block(wasm_encoder::BlockType::Empty);
            self.push_ctx(Ctx::Landing, 0);
        }
        let depth = |me: &Self, t: Node| -> R<u32> {
            if let Some(i) = landing.iter().position(|&l| l == t) {
                // landing[i] is the (i+1)-th innermost block.
                let pos = base + nl - 1 - i as u32;
                Ok(me.nest.depth_of_pos(pos))
            } else {
                me.depth_to(me.a.cfg.edge_target(x, t))
            }
        };
        match cond {
            Cond::Stack32(v, bits) => {
                self.push(v)?;
                self.sext(bits);
            }
            Cond::Stack64(v) => {
                self.push(v)?;
            }
            Cond::Local32(_) => {}
        }
        let dd = depth(self, default)?;
        if let Some((min, range)) = table_range(cases, matches!(cond, Cond::Stack64(_))) {
            let mut table = vec![u32::MAX; range as usize];
            for &(v, t) in cases {
                let slot = &mut table[(v - min) as usize];
                if *slot == u32::MAX {
                    *slot = depth(self, t)?;
                }
            }
            for s in table.iter_mut() {
                if *s == u32::MAX {
                    *s = dd;
                }
            }
            if let Cond::Local32(l) = cond {
                self.sink().local_get(l);
            }
            if min != 0 {
                self.sink().i32_const(min as i32).i32_sub();
            }
            self.sink().br_table(&table, dd);
            let deepest = table.iter().fold(dd, |a, &b| a.max(b));
            self.note_branch(deepest);
        } else {
            let is64 = matches!(cond, Cond::Stack64(_));
            let s = match cond {
                Cond::Local32(l) => l,
                Cond::Stack32(..) => {
                    let s = self.a.locals.s_i32;
                    self.sink().local_set(s);
                    s
                }
                Cond::Stack64(_) => {
                    let s = self.a.locals.s_i64;
                    self.sink().local_set(s);
                    s
                }
            };
            let mut seen: Vec<i64> = Vec::with_capacity(cases.len());
            for &(v, t) in cases {
                if seen.contains(&v) {
                    continue;
                }
                seen.push(v);
                let d = depth(self, t)?;
                self.note_branch(d);
                let mut k = self.sink();
                if is64 {
                    k.local_get(s).i64_const(v).i64_eq().br_if(d);
                } else {
                    k.local_get(s).i32_const(v as i32).i32_eq().br_if(d);
                }
            }
            self.br(dd);
        }
        for &t in landing.iter().rev() {
            tasks.push(Task::Edge { from: x, to: t });
            push_end(tasks);
        }
        Ok(())
    }
}

/// The (lowest case, range) of a switch lowered to a `br_table` (decision 0003), `None`
/// for a chain of compares: at least three cases, dense enough (a range of at most twice
/// the cases plus 8, at most 65536 slots), values that fit an i32 compare, and not on
/// an i64 condition (`wide`).
pub(crate) fn table_range(cases: &[(i64, Node)], wide: bool) -> Option<(i64, i64)> {
    let (min, max) = cases
        .iter()
        .fold((i64::MAX, i64::MIN), |(a, b), &(v, _)| (a.min(v), b.max(v)));
    let n = cases.len() as i64;
    let range = max.wrapping_sub(min).wrapping_add(1);
    let dense = !wide
        && n >= 3
        && range > 0
        && range <= 2 * n + 8
        && range <= 1 << 16
        && min >= i32::MIN as i64
        && max <= u32::MAX as i64;
    dense.then_some((min, range))
}

/// Bytes of `block` with an empty block type (0x02 0x40).
const BLOCK_LEN: usize = 2;

#[derive(Clone, Copy)]
enum Cond {
    /// A value to push (sign-extended from its width).
    Stack32(crate::ir::ValueId, u32),
    Stack64(crate::ir::ValueId),
    Local32(super::locals::Local),
}
