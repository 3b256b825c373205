//! Global variable rules: alignment and the flattened initializer form.

use super::module::resolve_intrinsic;
use super::{block_id, position, Context, Rule, Sink};
use crate::ir::{Element, Initializer, Module};

/// Largest alignment LLVM (and so PNaCl's reader) accepts: 2^29, stored as 29 + 1.
pub(super) const MAX_ALIGN_CODE: u32 = 30;

pub(super) fn check(m: &Module, out: &mut Sink) {
    let nf = m.functions.len() as u64;
    let nvals = nf + m.globals.len() as u64;
    for (gi, g) in m.globals.iter().enumerate() {
        let pos = position(g.bit, block_id::GLOBALS);
        let ctx = || Context::Global {
            index: gi as u32,
            name: g.name.clone(),
        };
        // Any stored code is a power of two; only its size is limited.
        if g.align.0 > MAX_ALIGN_CODE {
            out.push(
                Rule::GlobalAlign,
                pos,
                ctx(),
                format!(
                    "alignment 2^{} is larger than the maximum 2^29",
                    g.align.0 - 1
                ),
            );
        }
        // FlattenGlobals only emits compound initializers of two or more elements.
        if let Initializer::Compound(v) = &g.init {
            if v.len() < 2 {
                out.push(
                    Rule::GlobalInit,
                    pos,
                    ctx(),
                    format!(
                        "compound initializer with {} element(s); compounds need at least 2",
                        v.len()
                    ),
                );
            }
        }
        for e in g.init.elements() {
            let Element::Reloc { target, .. } = e else {
                continue;
            };
            let t = *target as u64;
            if t >= nvals {
                out.push(
                    Rule::GlobalInit,
                    pos,
                    ctx(),
                    format!("relocation target {t} is not a function or global ({nvals} exist)"),
                );
            } else if let Some(d) = m.functions.get(t as usize) {
                // The address of an intrinsic does not exist: the translator inlines them.
                if resolve_intrinsic(d).is_some() {
                    out.push(
                        Rule::GlobalInit,
                        pos,
                        ctx(),
                        format!("relocation takes the address of intrinsic @f{t}"),
                    );
                }
            }
        }
    }
}
