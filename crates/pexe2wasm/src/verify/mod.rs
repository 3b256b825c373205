//! Stage 2b: the PNaCl ABI verifier. Checks a decoded [`Module`](crate::ir::Module) against
//! the rules of the PNaCl bitcode reference manual and reports findings with positions.
//!
//! The decoder already rejects what cannot be typed at all (ids out of range, operands of
//! the wrong kind); this stage checks the ABI rules on top: allowed types, linkage,
//! intrinsics, per-instruction operand types and alignments, the CFG and SSA dominance.
//! It never panics, even on hand-built IR whose indices are out of range.
//!
//! Where the manual and the pexes Google's toolchain produced disagree, the real files win;
//! the rule's code says so in a comment.

mod cfg;
mod finding;
mod function;
mod globals;
mod instructions;
mod intrinsics;
mod module;
pub mod types;

pub use finding::{Context, Finding, Rule, VerifyErrors};

use crate::bitstream::Position;
use crate::ir::{FuncId, Module, Type};

/// Collects findings.
#[derive(Debug, Default)]
pub(crate) struct Sink {
    findings: Vec<Finding>,
}

impl Sink {
    pub(crate) fn push(
        &mut self,
        rule: Rule,
        position: Position,
        context: Context,
        message: impl Into<String>,
    ) {
        self.findings.push(Finding {
            rule,
            message: message.into(),
            position,
            context,
        });
    }
}

/// Position of a record in the function block, module block or globals block.
fn position(bit: u64, block: u32) -> Position {
    Position {
        bit,
        block: Some(block),
        record: None,
        record_index: None,
    }
}

/// Block ids used in positions.
mod block_id {
    pub const MODULE: u32 = 8;
    pub const FUNCTION: u32 = 12;
    pub const GLOBALS: u32 = 19;
}

/// Checks every rule and returns all findings (empty for a valid pexe), in module order.
///
/// The module-level checks run first, in order; then every function body is checked on
/// its own (in parallel with rayon), and the findings are appended in body order, so the
/// result does not depend on the number of threads.
pub fn verify(module: &Module) -> Vec<Finding> {
    use rayon::prelude::*;
    let mut out = Sink::default();
    if !types::check_sound(module, &mut out) {
        return out.findings;
    }
    module::check(module, &mut out);
    globals::check(module, &mut out);
    // What every body's check needs from the module (intrinsics, type facts), once.
    let facts = function::ModuleFacts::new(module);
    let scratch = crate::scratch_pool::Pool::<function::Scratch>::new();
    let per_body: Vec<Vec<Finding>> = module
        .function_bodies
        .par_iter()
        .enumerate()
        .with_min_len(8)
        .with_max_len(32)
        // Buffers reused from job to job (`crate::scratch_pool`).
        .map_init(
            || scratch.lend(),
            |scratch, (i, f)| {
                let mut found = Vec::new();
                function::check(&facts, i as u32, f, scratch, &mut found);
                found
            },
        )
        .collect();
    for mut f in per_body {
        out.findings.append(&mut f);
    }
    out.findings
}

/// [`verify`] as a `Result`: `Err` with every finding when there is at least one.
pub fn verify_module(module: &Module) -> Result<(), VerifyErrors> {
    let f = verify(module);
    if f.is_empty() {
        Ok(())
    } else {
        Err(VerifyErrors(f))
    }
}

/// Checks that the module can be started: it defines a function named `_start` with
/// signature `void (i32)` and external linkage. Returns that function's index (`@fN`).
pub fn check_runnable(module: &Module) -> Result<FuncId, Finding> {
    let fail = |bit: u64, context: Context, message: String| Finding {
        rule: Rule::EntryPoint,
        message,
        position: position(bit, block_id::MODULE),
        context,
    };
    let Some(idx) = module.function_by_name("_start") else {
        return Err(fail(
            0,
            Context::Module,
            "the module has no function named _start, so it cannot be run".into(),
        ));
    };
    let d = &module.functions[idx.index()];
    let ctx = Context::Function {
        index: idx.0,
        name: d.name.clone(),
    };
    if d.is_proto {
        return Err(fail(
            d.bit,
            ctx,
            "_start is declared but not defined".into(),
        ));
    }
    let types = &module.types;
    let mut scratch = Sink::default();
    if !types::check_sound(module, &mut scratch) {
        return Err(fail(d.bit, ctx, "the type table is malformed".into()));
    }
    let ok = types.function(d.ty).is_some_and(|ft| {
        !ft.vararg
            && types.is_void(ft.ret)
            && ft.params.len() == 1
            && types.get(ft.params[0]) == Some(&Type::Int(32))
    });
    if !ok {
        return Err(fail(
            d.bit,
            ctx,
            format!(
                "_start has type {}, but the entry point must be void (i32)",
                types.display(d.ty)
            ),
        ));
    }
    if d.linkage != crate::ir::Linkage::External {
        return Err(fail(
            d.bit,
            ctx,
            "_start is not external, so it is not the entry point".into(),
        ));
    }
    Ok(idx)
}
