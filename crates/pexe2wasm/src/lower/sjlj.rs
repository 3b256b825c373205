//! `llvm.nacl.setjmp` / `llvm.nacl.longjmp` with wasm exception handling (the exnref
//! form: `try_table`, `throw`), after LLVM's "Wasm SjLj" scheme (docs/decisions/0005).
//!
//! - The module has one tag, `(param i32 i32)` = (jmp_buf, val), and a mutable i32 global
//!   counting invocations of functions that call setjmp.
//! - A function that calls setjmp takes a fresh invocation id from that counter on entry.
//!   `setjmp(buf)` writes `{id, label, __stack_pointer}` to `buf[0..12]` and returns 0; the
//!   label of a call site is the CFG node that resumes after it (`cfg.rs`).
//! - `longjmp(buf, val)` throws the tag with `(buf, val == 0 ? 1 : val)`.
//! - The whole body of a setjmp-calling function runs inside
//!   `loop { block (result i32 i32) { try_table (catch tag 0) { body } } handler }`.
//!   The handler rethrows unless `buf[0]` is this invocation's id; otherwise it restores
//!   `__stack_pointer` from `buf[8]`, sets the site's result local to `val` and the label
//!   local to `buf[4]`, and restarts the loop, whose first node dispatches on the label.
//!
//! A longjmp to a frame that has returned finds no frame with its id: the exception
//! reaches the host, which reports it as an uncaught longjmp (`crates/runner`).

use wasm_encoder::{BlockType, Catch, MemArg};

use super::cfg::{Node, NONE};
use super::inst::{memarg, FnLower, R};
use super::locals::Local;
use crate::ir::{Scalar, ValueId};

/// Byte offsets in the jmp_buf (PNaCl guarantees at least 1024 bytes, 8-byte aligned).
const BUF_ID: u64 = 0;
const BUF_LABEL: u64 = 4;
const BUF_SP: u64 = 8;

fn word(offset: u64) -> MemArg {
    memarg(offset, None, Scalar::I32)
}

impl FnLower<'_, '_> {
    fn sjlj_ready(&self, idx: usize) -> R<()> {
        if self.cx.sjlj_tag == NONE || self.cx.sjlj_counter == NONE {
            return Err(self.err_at(idx, "setjmp/longjmp used but the module has no tag for it"));
        }
        Ok(())
    }

    /// Opens the restart loop and the `try_table` around the body (after the prologue).
    pub(crate) fn sjlj_enter(&mut self) -> R<()> {
        self.sjlj_ready(self.f.block_starts.first().copied().unwrap_or(0) as usize)?;
        self.used.exceptions = true;
        let (counter, id, tag, ty) = (
            self.cx.sjlj_counter,
            self.a.locals.sj_id,
            self.cx.sjlj_tag,
            self.cx.sjlj_catch_type,
        );
        let mut s = self.sink();
        s.global_get(counter)
            .i32_const(1)
            .i32_add()
            .local_tee(id)
            .global_set(counter);
        s.loop_(BlockType::Empty)
            .block(BlockType::FunctionType(ty))
            .try_table(BlockType::Empty, [Catch::One { tag, label: 0 }]);
        Ok(())
    }

    /// Closes the `try_table` and emits the handler that resumes after a setjmp.
    pub(crate) fn sjlj_leave(&mut self) -> R<()> {
        let (env, val) = (self.a.locals.s_i32, self.a.locals.s_i32 + 1);
        let (id, tag, sp, label) = (
            self.a.locals.sj_id,
            self.cx.sjlj_tag,
            self.cx.stack_pointer,
            self.a.locals.label,
        );
        // Result locals of the sites whose value is used.
        let mut results: Vec<(Node, Local)> = Vec::new();
        for &(call, node) in &self.a.cfg.sites {
            let Some(v) = self.f.insts[call as usize].result() else {
                continue;
            };
            let n = v.0.wrapping_sub(self.first_inst) as usize;
            if let Some(&l) = self.a.local_of.get(n) {
                if l.is_some() {
                    results.push((node, l));
                }
            }
        }
        let mut s = self.sink();
        s.end() // try_table
            .unreachable()
            .end() // block: (buf, val) on the stack
            .local_set(val)
            .local_set(env);
        // Not this invocation's setjmp: pass the longjmp on to the callers.
        s.local_get(env)
            .i32_load(word(BUF_ID))
            .local_get(id)
            .i32_ne()
            .if_(BlockType::Empty)
            .local_get(env)
            .local_get(val)
            .throw(tag)
            .end();
        s.local_get(env)
            .i32_load(word(BUF_SP))
            .global_set(sp)
            .local_get(env)
            .i32_load(word(BUF_LABEL))
            .local_set(label);
        for (node, l) in results {
            s.local_get(label)
                .i32_const(node.label())
                .i32_eq()
                .if_(BlockType::Empty)
                .local_get(val)
                .local_set(l)
                .end();
        }
        s.br(0).end(); // loop
        Ok(())
    }

    /// `setjmp(buf)` at instruction `idx`: records this invocation and site, returns 0.
    pub(crate) fn setjmp(&mut self, idx: usize, buf: ValueId) -> R<bool> {
        self.sjlj_ready(idx)?;
        let Some(&(_, node)) = self.a.cfg.sites.iter().find(|&&(c, _)| c as usize == idx) else {
            return Err(self.err_at(idx, "internal: setjmp call without a resume node"));
        };
        self.push(buf)?;
        let (b, id, sp) = (
            self.a.locals.s_i32,
            self.a.locals.sj_id,
            self.cx.stack_pointer,
        );
        self.sink()
            .local_tee(b)
            .local_get(id)
            .i32_store(word(BUF_ID))
            .local_get(b)
            .i32_const(node.label())
            .i32_store(word(BUF_LABEL))
            .local_get(b)
            .global_get(sp)
            .i32_store(word(BUF_SP))
            .i32_const(0);
        Ok(true)
    }

    /// `longjmp(buf, val)`: throws the tag with `val` 0 turned into 1.
    pub(crate) fn longjmp(&mut self, idx: usize, buf: ValueId, val: ValueId) -> R<bool> {
        self.sjlj_ready(idx)?;
        self.used.exceptions = true;
        self.push(buf)?;
        self.push(val)?;
        let (v, tag) = (self.a.locals.s_i32, self.cx.sjlj_tag);
        self.sink()
            .local_tee(v)
            .local_get(v)
            .i32_eqz()
            .i32_add()
            .throw(tag);
        Ok(true)
    }
}
