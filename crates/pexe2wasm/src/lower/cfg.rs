//! The control-flow graph a function is structured from: reachable blocks, irreducible
//! regions turned into reducible ones, reverse postorder, dominator tree, loop headers
//! and merge nodes.
//!
//! Nodes `0..n_real` are the function's basic blocks; nodes from `n_real` on are dispatch
//! nodes. A strongly connected region with several entries gets one dispatch node: every
//! edge into one of its entries (from outside or inside the region) is redirected to it,
//! after setting a label local to the entry's block id; the dispatch node branches on the
//! label. The region then has a single entry, and the same is done recursively inside it
//! (the classic "make reducible by a dispatcher" transformation, limited to the region).
//!
//! A function that calls `llvm.nacl.setjmp` (see `sjlj.rs`) has more nodes: its blocks
//! are split after each setjmp call, the code after the call being a *resume node*
//! (`n_real..dispatch_base`), and its entry is a dispatch node on the label local (0 =
//! block 0 on the first entry, a resume node after a caught longjmp). A setjmp outside
//! any loop keeps the graph reducible; inside a loop its resume node is a second entry of
//! the loop, which the dispatch-node machinery above makes reducible.

use std::collections::HashMap;

pub(crate) use crate::ir::NONE;
use crate::ir::{common_dominator, BlockId, Function, InstKind};

/// A node of the [`Cfg`]: a basic block (`0..n_real`, numbered as its [`BlockId`]), a
/// resume node or a dispatch node. Its own type, so that a node is not mixed up with the
/// other `u32`s of the lowering (reverse-postorder positions, locals, depths); the same
/// `u32` at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
#[repr(transparent)]
pub(crate) struct Node(pub u32);

impl Node {
    /// Its index, for the per-node tables.
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    /// The node of block `b`.
    #[inline]
    pub const fn of(b: BlockId) -> Node {
        Node(b.0)
    }
    /// The value of the label local that selects this node at a dispatch node (the
    /// label is the node's number).
    #[inline]
    pub const fn label(self) -> i32 {
        self.0 as i32
    }
}

/// A straight-line piece of a block: instructions `start..end`; `next` is the resume node
/// that follows when the piece ends with a setjmp call (`None` when it ends with the
/// block's terminator).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Seg {
    pub block: BlockId,
    pub start: u32,
    pub end: u32,
    pub next: Option<Node>,
}

/// Adjacency lists of all nodes in two flat arrays (node `v`'s list is
/// `items[start[v]..start[v + 1]]`): a handful of allocations per function instead of one
/// per block.
#[derive(Default)]
pub(crate) struct Adj {
    start: Vec<u32>,
    items: Vec<Node>,
}

impl Adj {
    fn with_capacity(nodes: usize, items: usize) -> Adj {
        Adj::in_buffers(Vec::with_capacity(nodes + 1), Vec::with_capacity(items))
    }
    /// An empty list set in two reused (cleared) buffers.
    fn in_buffers(mut start: Vec<u32>, mut items: Vec<Node>) -> Adj {
        start.clear();
        start.push(0);
        items.clear();
        Adj { start, items }
    }
    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.start.len() - 1
    }
    /// Ends the list of the node being filled (the next node's list starts empty).
    fn close(&mut self) {
        self.start.push(self.items.len() as u32);
    }
    /// Appends `w` to the node being filled unless it is already there.
    #[inline]
    fn push_unique(&mut self, w: Node) {
        let from = *self.start.last().unwrap_or(&0) as usize;
        if !self.items[from..].contains(&w) {
            self.items.push(w);
        }
    }
    /// Positions of node `v`'s list in [`Adj::item`] (one lookup for a whole list).
    #[inline]
    pub fn range(&self, v: Node) -> std::ops::Range<usize> {
        self.start[v.index()] as usize..self.start[v.index() + 1] as usize
    }
    /// The item at position `i` (see [`Adj::range`]).
    #[inline]
    pub fn item(&self, i: usize) -> Node {
        self.items[i]
    }
    fn to_vecs(&self) -> Vec<Vec<Node>> {
        (0..self.len())
            .map(|v| self[Node(v as u32)].to_vec())
            .collect()
    }
    fn from_vecs(v: &[Vec<Node>]) -> Adj {
        let mut a = Adj::with_capacity(v.len(), v.iter().map(Vec::len).sum());
        for l in v {
            a.items.extend_from_slice(l);
            a.close();
        }
        a
    }
}

impl std::ops::Index<Node> for Adj {
    type Output = [Node];
    #[inline]
    fn index(&self, v: Node) -> &[Node] {
        &self.items[self.range(v)]
    }
}

#[derive(Default)]
pub(crate) struct Cfg {
    /// The number of basic blocks (nodes `0..n_real`).
    pub n_real: u32,
    /// First dispatch node (= `n_real` unless the function calls setjmp).
    pub dispatch_base: Node,
    /// The node control enters at (0, or the setjmp dispatch node).
    pub entry: Node,
    /// Segments of every non-dispatch node when the function calls setjmp, else empty.
    pub segs: Vec<Seg>,
    /// Reachable setjmp calls: (instruction index, resume node = the site's label).
    pub sites: Vec<(u32, Node)>,
    /// Deduplicated successors of each node, after redirection.
    pub succs: Adj,
    /// `(source node, original target block's node)` → the dispatch node the edge now
    /// goes to.
    pub redirect: HashMap<(Node, Node), Node>,
    /// For dispatch node `dispatch_base + i`: the nodes it dispatches to ([`Node::label`]).
    pub dispatch: Vec<Vec<Node>>,
    /// Per node: its position in reverse postorder, [`NONE`] for unreachable nodes.
    pub rpo_index: Vec<u32>,
    /// Dominator-tree children of each node, in reverse postorder.
    pub children: Adj,
    pub loop_header: Vec<bool>,
    /// Nodes with two or more forward in-edges (they get a `block` for branches to them).
    pub merge: Vec<bool>,
    /// Every retreating edge goes to a node that dominates its source.
    pub reducible: bool,
}

/// Buffers of the CFG analysis kept from one function to the next (per thread).
#[derive(Default)]
pub(crate) struct CfgScratch {
    u32s: Vec<Vec<u32>>,
    nodes: Vec<Vec<Node>>,
    bools: Vec<Vec<bool>>,
    stack: Vec<(Node, u32)>,
}

impl CfgScratch {
    /// A cleared buffer.
    fn u32s(&mut self) -> Vec<u32> {
        let mut v = self.u32s.pop().unwrap_or_default();
        v.clear();
        v
    }
    /// A buffer of `n` copies of `x`.
    fn filled(&mut self, n: usize, x: u32) -> Vec<u32> {
        let mut v = self.u32s();
        v.resize(n, x);
        v
    }
    /// A cleared node list.
    fn nodes(&mut self) -> Vec<Node> {
        let mut v = self.nodes.pop().unwrap_or_default();
        v.clear();
        v
    }
    fn bools(&mut self, n: usize) -> Vec<bool> {
        let mut v = self.bools.pop().unwrap_or_default();
        v.clear();
        v.resize(n, false);
        v
    }
    fn put(&mut self, v: Vec<u32>) {
        self.u32s.push(v);
    }
}

impl Cfg {
    /// Hands the CFG's buffers back for the next function.
    pub fn recycle(self, s: &mut CfgScratch) {
        s.u32s
            .extend([self.succs.start, self.children.start, self.rpo_index]);
        s.nodes.extend([self.succs.items, self.children.items]);
        s.bools.extend([self.loop_header, self.merge]);
    }

    pub fn is_dispatch(&self, n: Node) -> bool {
        n >= self.dispatch_base
    }
    /// The nodes dispatch node `n` branches to.
    pub fn dispatch_of(&self, n: Node) -> &[Node] {
        &self.dispatch[(n.0 - self.dispatch_base.0) as usize]
    }
    /// Dispatch nodes made for irreducible regions (not the setjmp entry).
    pub fn irreducible_dispatchers(&self) -> usize {
        self.dispatch.len() - usize::from(!self.sites.is_empty())
    }
    /// The block a (non-dispatch) node's code comes from.
    pub fn block_of(&self, n: Node) -> BlockId {
        self.segs.get(n.index()).map_or(BlockId(n.0), |s| s.block)
    }
    /// The instructions of non-dispatch node `n` (see [`Seg`]).
    pub fn seg(&self, f: &Function, n: Node) -> Seg {
        if let Some(s) = self.segs.get(n.index()) {
            return *s;
        }
        let start = f.block_starts.get(n.index()).copied().unwrap_or(0);
        let end = f
            .block_starts
            .get(n.index() + 1)
            .map_or(f.insts.len() as u32, |&e| e);
        Seg {
            block: BlockId(n.0),
            start,
            end,
            next: None,
        }
    }
    /// The node an edge `from → target block` (the block's node) goes to.
    pub fn edge_target(&self, from: Node, target: Node) -> Node {
        if self.redirect.is_empty() {
            return target;
        }
        self.redirect
            .get(&(from, target))
            .copied()
            .unwrap_or(target)
    }
    /// True for retreating edges (to a loop header at or before the source in RPO).
    pub fn is_backward(&self, from: Node, to: Node) -> bool {
        self.rpo_index[to.index()] <= self.rpo_index[from.index()]
    }
}

/// Appends the successor blocks of block `b`'s terminator to the node being filled,
/// deduplicated, in terminator order.
fn block_succs(f: &Function, b: BlockId, out: &mut Adj) {
    if let Some(last) = f.block_insts(b).last() {
        match &last.kind {
            // The common terminators directly; `for_each_successor` for switches.
            InstKind::Br { target } => out.items.push(Node::of(*target)),
            InstKind::CondBr {
                then_bb, else_bb, ..
            } => {
                out.items.push(Node::of(*then_bb));
                if else_bb != then_bb {
                    out.items.push(Node::of(*else_bb));
                }
            }
            k => k.for_each_successor(|t| out.push_unique(Node::of(t))),
        }
    }
    out.close();
}

/// Builds the CFG; `Err` names a branch target out of range. `setjmps` are the indices
/// of the function's setjmp calls, in order.
pub(crate) fn build(f: &Function, setjmps: &[u32], s: &mut CfgScratch) -> Result<Cfg, String> {
    let n = f.block_starts.len() as u32;
    if n == 0 {
        return Err("function has no basic blocks".into());
    }
    let mut succs = Adj::in_buffers(s.u32s(), s.nodes());
    for b in 0..n {
        block_succs(f, BlockId(b), &mut succs);
        if let Some(&t) = succs[Node(b)].iter().find(|&&t| t.0 >= n || t.0 == 0) {
            return Err(format!("block %b{b} branches to invalid block %b{}", t.0));
        }
    }
    let setjmps = (!setjmps.is_empty()).then_some((f, setjmps));
    Ok(from_succs(n, succs, setjmps, s))
}

/// The CFG of the graph `succs` of `n` blocks (block 0 the entry), its blocks split at
/// the setjmp calls `setjmps` (in function `f`) if any, made reducible if it is not.
fn from_succs(n: u32, succs: Adj, setjmps: Option<(&Function, &[u32])>, s: &mut CfgScratch) -> Cfg {
    let cfg = match setjmps {
        // The common case: no editable graph needed.
        None => analyze(
            Parts {
                n_real: n,
                dispatch_base: Node(n),
                entry: Node(0),
                segs: Vec::new(),
                sites: Vec::new(),
                redirect: HashMap::new(),
                dispatch: Vec::new(),
            },
            succs,
            s,
        ),
        Some((f, setjmps)) => {
            let mut g = Builder {
                n_real: n,
                dispatch_base: Node(n),
                entry: Node(0),
                segs: Vec::new(),
                sites: Vec::new(),
                succs: succs.to_vecs(),
                redirect: HashMap::new(),
                dispatch: Vec::new(),
            };
            g.split_at_setjmps(f, setjmps);
            g.finish(s)
        }
    };
    if cfg.reducible {
        return cfg;
    }
    // Irreducible: add dispatch nodes, then analyze again.
    let mut g = Builder {
        n_real: n,
        dispatch_base: cfg.dispatch_base,
        entry: cfg.entry,
        segs: cfg.segs,
        sites: cfg.sites,
        succs: cfg.succs.to_vecs(),
        redirect: HashMap::new(),
        dispatch: cfg.dispatch,
    };
    let reach = g.reachable();
    g.make_reducible(reach);
    g.finish(s)
}

#[cfg(test)]
impl Cfg {
    /// The CFG of a graph given by its successor lists (node 0 the entry, no setjmp):
    /// the analysis alone, for tests.
    pub fn of_graph(succs: &[Vec<u32>]) -> Cfg {
        let succs: Vec<Vec<Node>> = succs
            .iter()
            .map(|l| l.iter().map(|&w| Node(w)).collect())
            .collect();
        from_succs(
            succs.len() as u32,
            Adj::from_vecs(&succs),
            None,
            &mut CfgScratch::default(),
        )
    }
}

/// The editable graph of the setjmp and irreducible cases (rare: plain lists are fine).
struct Builder {
    n_real: u32,
    dispatch_base: Node,
    entry: Node,
    segs: Vec<Seg>,
    sites: Vec<(u32, Node)>,
    succs: Vec<Vec<Node>>,
    redirect: HashMap<(Node, Node), Node>,
    dispatch: Vec<Vec<Node>>,
}

impl Builder {
    /// Splits every reachable block after its setjmp calls into resume nodes and adds the
    /// entry dispatch node (first entry → block 0, after a longjmp → the site's resume
    /// node). Unreachable setjmps are left alone: no longjmp can target them.
    fn split_at_setjmps(&mut self, f: &Function, setjmps: &[u32]) {
        let reach = self.reachable();
        let mut reachable = vec![false; self.n_real as usize];
        for v in reach {
            reachable[v.index()] = true;
        }
        let block_end = |b: usize| {
            f.block_starts
                .get(b + 1)
                .map_or(f.insts.len() as u32, |&e| e)
        };
        let mut segs: Vec<Seg> = (0..self.n_real as usize)
            .map(|b| Seg {
                block: BlockId(b as u32),
                start: f.block_starts[b],
                end: block_end(b),
                next: None,
            })
            .collect();
        // The segment of each block that currently ends with the terminator.
        let mut last: Vec<Node> = (0..self.n_real).map(Node).collect();
        let mut block = 0usize;
        for &call in setjmps {
            while block + 1 < self.n_real as usize && f.block_starts[block + 1] <= call {
                block += 1;
            }
            if !reachable[block] || call + 1 >= block_end(block) {
                continue;
            }
            // The last segment now ends at the call; the rest becomes a resume node.
            let r = Node(segs.len() as u32);
            let l = last[block].index();
            segs.push(Seg {
                block: BlockId(block as u32),
                start: call + 1,
                end: segs[l].end,
                next: None,
            });
            segs[l].end = call + 1;
            segs[l].next = Some(r);
            last[block] = r;
            self.sites.push((call, r));
        }
        if self.sites.is_empty() {
            return;
        }
        // Successors: the terminator's move to the block's last segment.
        let nodes = segs.len();
        self.succs.resize(nodes, Vec::new());
        for (k, sg) in segs.iter().enumerate() {
            if let Some(next) = sg.next {
                let term = std::mem::take(&mut self.succs[k]);
                self.succs[k] = vec![next];
                self.succs[next.index()] = term;
            }
        }
        let v = Node(nodes as u32);
        let mut entries = vec![Node(0)];
        entries.extend(self.sites.iter().map(|&(_, r)| r));
        self.succs.push(entries.clone());
        self.dispatch.push(entries);
        self.dispatch_base = v;
        self.entry = v;
        self.segs = segs;
    }

    fn reachable(&self) -> Vec<Node> {
        let mut seen = vec![false; self.succs.len()];
        let mut stack = vec![self.entry];
        let mut out = Vec::new();
        seen[self.entry.index()] = true;
        while let Some(v) = stack.pop() {
            out.push(v);
            for &w in &self.succs[v.index()] {
                if !seen[w.index()] {
                    seen[w.index()] = true;
                    stack.push(w);
                }
            }
        }
        out
    }

    fn preds(&self) -> Vec<Vec<Node>> {
        let mut preds = vec![Vec::new(); self.succs.len()];
        for (v, ss) in self.succs.iter().enumerate() {
            for &w in ss {
                preds[w.index()].push(Node(v as u32));
            }
        }
        preds
    }

    /// Finds strongly connected regions with several entries and gives each a dispatch
    /// node, outermost first.
    fn make_reducible(&mut self, reach: Vec<Node>) {
        let mut preds = self.preds();
        // Predecessors only count when reachable.
        let mut reachable = vec![false; self.succs.len()];
        for &v in &reach {
            reachable[v.index()] = true;
        }
        for p in preds.iter_mut() {
            p.retain(|&q| reachable[q.index()]);
        }
        let mut member = vec![0u32; self.succs.len()];
        let mut stamp = 0u32;
        let mut work: Vec<Vec<Node>> = vec![reach];
        while let Some(region) = work.pop() {
            stamp += 1;
            for &v in &region {
                member[v.index()] = stamp;
            }
            let comps = sccs(&region, &self.succs, &member, stamp);
            for comp in comps {
                let nontrivial = comp.len() > 1 || self.succs[comp[0].index()].contains(&comp[0]);
                if !nontrivial {
                    continue;
                }
                stamp += 1;
                for &v in &comp {
                    member[v.index()] = stamp;
                }
                let entries: Vec<Node> = comp
                    .iter()
                    .copied()
                    .filter(|&v| {
                        v == self.entry
                            || preds[v.index()].iter().any(|&p| member[p.index()] != stamp)
                    })
                    .collect();
                if entries.len() <= 1 {
                    let h = entries.first().copied().unwrap_or(comp[0]);
                    let inner: Vec<Node> = comp.into_iter().filter(|&v| v != h).collect();
                    if !inner.is_empty() {
                        work.push(inner);
                    }
                    continue;
                }
                // Several entries: route every edge into an entry through a dispatcher.
                let d = Node(self.succs.len() as u32);
                let mut entries = entries;
                entries.sort_unstable();
                let mut dpreds: Vec<Node> = Vec::new();
                for &e in &entries {
                    for p in std::mem::take(&mut preds[e.index()]) {
                        let ss = &mut self.succs[p.index()];
                        if ss.contains(&d) {
                            ss.retain(|&w| w != e);
                        } else if let Some(slot) = ss.iter_mut().find(|w| **w == e) {
                            *slot = d;
                        }
                        self.redirect.insert((p, e), d);
                        if !dpreds.contains(&p) {
                            dpreds.push(p);
                        }
                    }
                    preds[e.index()].push(d);
                }
                self.succs.push(entries.clone());
                self.dispatch.push(entries);
                preds.push(dpreds);
                member.push(0);
                reachable.push(true);
                work.push(comp);
            }
        }
    }

    fn finish(self, s: &mut CfgScratch) -> Cfg {
        let succs = Adj::from_vecs(&self.succs);
        analyze(
            Parts {
                n_real: self.n_real,
                dispatch_base: self.dispatch_base,
                entry: self.entry,
                segs: self.segs,
                sites: self.sites,
                redirect: self.redirect,
                dispatch: self.dispatch,
            },
            succs,
            s,
        )
    }
}

/// What a [`Cfg`] carries over from construction unchanged.
struct Parts {
    n_real: u32,
    dispatch_base: Node,
    entry: Node,
    segs: Vec<Seg>,
    sites: Vec<(u32, Node)>,
    redirect: HashMap<(Node, Node), Node>,
    dispatch: Vec<Vec<Node>>,
}

/// Reverse postorder, dominator tree, loop headers, merge nodes and reducibility.
///
/// Works on reverse-postorder numbers (node `order[i]` has number `i`), so "earlier in
/// RPO" is a plain comparison. Dominators are Cooper, Harvey and Kennedy's iteration;
/// its first pass in RPO ignores retreating edges and so gives the dominators of the
/// graph without them. When every retreating edge goes to a node that dominates its
/// source in that graph, the graph is reducible and those are its dominators (a path
/// around a dominator would need a retreating edge, whose target is dominated as its
/// source is), so the remaining passes would change nothing and are skipped; otherwise
/// the iteration runs to its fixpoint as usual.
fn analyze(p: Parts, succs: Adj, s: &mut CfgScratch) -> Cfg {
    let n = succs.len();
    let entry = p.entry;
    // Reverse postorder by an iterative DFS; `rpo_index` marks visited nodes meanwhile.
    const SEEN: u32 = NONE - 1;
    let mut rpo_index = s.filled(n, NONE);
    // The nodes in reverse postorder (node `order[i]` has number `i`).
    let mut order = s.nodes();
    let mut stack = std::mem::take(&mut s.stack);
    stack.clear();
    // Each stack entry: the node and the position of its next successor in `succs.items`.
    stack.push((entry, succs.start[entry.index()]));
    rpo_index[entry.index()] = SEEN;
    while let Some(top) = stack.last_mut() {
        let (v, at) = *top;
        if at < succs.start[v.index() + 1] {
            top.1 += 1;
            let w = succs.items[at as usize];
            if rpo_index[w.index()] == NONE {
                rpo_index[w.index()] = SEEN;
                stack.push((w, succs.start[w.index()]));
            }
        } else {
            order.push(v);
            stack.pop();
        }
    }
    s.stack = stack;
    order.reverse();
    let r = order.len();
    for (i, &v) in order.iter().enumerate() {
        rpo_index[v.index()] = i as u32;
    }
    // Dominators: the first pass (see above), done forwards over the out-edges (the
    // nearest common dominator of a node's forward predecessors does not depend on the
    // order they are met in), with loop headers, merge nodes and the retreating edges
    // from the same look. When node `i` is reached, every forward predecessor of it came
    // earlier, so its `idom` is final, as are those `common_dominator` walks through.
    let mut idom = s.filled(r, NONE);
    let mut forward = s.filled(r, 0);
    let mut retreating = s.u32s(); // (source, target) RPO number pairs
    let mut loop_header = s.bools(n);
    let mut merge = s.bools(n);
    if r > 0 {
        idom[0] = 0;
    }
    for (i, &v) in order.iter().enumerate() {
        let i = i as u32;
        for &w in &succs[v] {
            let t = rpo_index[w.index()];
            if t <= i {
                loop_header[w.index()] = true;
                retreating.extend([i, t]);
                continue;
            }
            let t = t as usize;
            forward[t] += 1;
            idom[t] = if idom[t] == NONE {
                i
            } else {
                common_dominator(&idom, i, idom[t])
            };
        }
    }
    for (&v, &k) in order.iter().zip(forward.iter()) {
        merge[v.index()] = k >= 2;
    }
    s.put(forward);
    let mut reducible = retreating
        .chunks_exact(2)
        .all(|e| dominates(&idom, e[1], e[0]));
    s.put(retreating);
    if !reducible {
        // Irreducible (rare): predecessors by RPO number, each list in increasing order,
        // then the remaining passes to the fixpoint and the check again.
        let mut pstart = s.filled(r + 1, 0);
        for &v in &order {
            for &w in &succs[v] {
                pstart[rpo_index[w.index()] as usize + 1] += 1;
            }
        }
        for i in 0..r {
            pstart[i + 1] += pstart[i];
        }
        let mut fill = s.u32s();
        fill.extend_from_slice(&pstart[..r]);
        let mut preds = s.filled(pstart[r] as usize, 0);
        for (i, &v) in order.iter().enumerate() {
            for &w in &succs[v] {
                let t = rpo_index[w.index()] as usize;
                preds[fill[t] as usize] = i as u32;
                fill[t] += 1;
            }
        }
        s.put(fill);
        let preds_of = |i: usize| &preds[pstart[i] as usize..pstart[i + 1] as usize];
        let mut changed = true;
        while changed {
            changed = false;
            for i in 1..r {
                let mut new = NONE;
                for &q in preds_of(i) {
                    if idom[q as usize] == NONE {
                        continue;
                    }
                    new = if new == NONE {
                        q
                    } else {
                        common_dominator(&idom, q, new)
                    };
                }
                if new != NONE && idom[i] != new {
                    idom[i] = new;
                    changed = true;
                }
            }
        }
        reducible = (0..r).all(|i| {
            preds_of(i)
                .iter()
                .all(|&q| q < i as u32 || dominates(&idom, i as u32, q))
        });
        s.put(pstart);
        s.put(preds);
    }
    // Dominator-tree children of each node, in reverse postorder.
    let mut children = Adj::in_buffers(s.u32s(), s.nodes());
    children.start.resize(n + 1, 0);
    for i in 1..r {
        children.start[order[idom[i] as usize].index() + 1] += 1;
    }
    for v in 0..n {
        children.start[v + 1] += children.start[v];
    }
    let mut fill = s.u32s();
    fill.extend_from_slice(&children.start[..n]);
    children.items.resize(r.saturating_sub(1), Node(0));
    for i in 1..r {
        let d = order[idom[i] as usize].index();
        children.items[fill[d] as usize] = order[i];
        fill[d] += 1;
    }
    s.put(fill);
    s.nodes.push(order);
    s.put(idom);
    Cfg {
        n_real: p.n_real,
        dispatch_base: p.dispatch_base,
        entry,
        segs: p.segs,
        sites: p.sites,
        succs,
        redirect: p.redirect,
        dispatch: p.dispatch,
        rpo_index,
        children,
        loop_header,
        merge,
        reducible,
    }
}

/// True if RPO number `h` dominates `q` (`q` not before `h`).
fn dominates(idom: &[u32], h: u32, mut q: u32) -> bool {
    while q > h {
        q = idom[q as usize];
    }
    q == h
}

/// Tarjan's strongly connected components of the nodes with `member[v] == stamp`
/// (iterative, so deep graphs cannot overflow the stack).
fn sccs(nodes: &[Node], succs: &[Vec<Node>], member: &[u32], stamp: u32) -> Vec<Vec<Node>> {
    let mut index: HashMap<Node, (u32, u32, bool)> = HashMap::with_capacity(nodes.len());
    let mut counter = 0u32;
    let mut stack: Vec<Node> = Vec::new();
    let mut out = Vec::new();
    let mut calls: Vec<(Node, usize)> = Vec::new();
    for &root in nodes {
        if index.contains_key(&root) {
            continue;
        }
        index.insert(root, (counter, counter, true));
        counter += 1;
        stack.push(root);
        calls.push((root, 0));
        while let Some(top) = calls.last_mut() {
            let (v, i) = *top;
            if let Some(&w) = succs[v.index()].get(i) {
                top.1 += 1;
                if member.get(w.index()) != Some(&stamp) {
                    continue;
                }
                match index.get(&w).copied() {
                    None => {
                        index.insert(w, (counter, counter, true));
                        counter += 1;
                        stack.push(w);
                        calls.push((w, 0));
                    }
                    Some((wi, _, true)) => {
                        if let Some(e) = index.get_mut(&v) {
                            e.1 = e.1.min(wi);
                        }
                    }
                    _ => {}
                }
            } else {
                calls.pop();
                let (vi, vl, _) = index[&v];
                if let Some(&(u, _)) = calls.last() {
                    if let Some(e) = index.get_mut(&u) {
                        e.1 = e.1.min(vl);
                    }
                }
                if vi == vl {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        if let Some(e) = index.get_mut(&w) {
                            e.2 = false;
                        }
                        comp.push(w);
                        if w == v {
                            break;
                        }
                    }
                    out.push(comp);
                }
            }
        }
    }
    out
}
