//! Indirect calls to functions of another type. C lets a program call a function through
//! a pointer of another type, and native code mostly tolerated it: a `void f(void *)`
//! started as a thread `void *(*)(void *)` (supernet-iguana), a callback declared with
//! more or fewer parameters than the call passes. Wasm's `call_indirect` traps on any
//! difference.
//!
//! The table holds the address-taken functions grouped by wasm type (`module.rs` orders
//! the slots so), so "the pointer names a function of type U" is one range check. For each
//! indirect-call signature T of the module, the types U that only differ from T that way
//! (U's parameters and T's agree where both have one; the results agree or one side has
//! none) get an *adapter*: a function `(T's parameters, pointer) -> T's results` that, for
//! a pointer in U's range, calls it with `call_indirect` of type U, its arguments adapted
//! (extra ones dropped, missing ones zero) and its result adapted (dropped, or zero), and
//! for every other pointer does the `call_indirect` of type T itself.
//!
//! Invariants: a signature gets an adapter only when the table holds a function of such a
//! type, so modules whose calls all match are unchanged; a pointer outside every adapted
//! range takes the plain `call_indirect`, which traps as before when the types differ in
//! any other way.

use wasm_encoder::{BlockType, Function, Ieee32, Ieee64, Instruction, ValType};

use crate::lower::{Sig, SigTable};

/// An adapter for calls of one signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Adapter {
    /// The calls' type (index in the module's types).
    pub call_type: u32,
    /// The adapter's type: the call's parameters, then the pointer.
    pub helper_type: u32,
    /// (first slot, number of slots, their type) of each adaptable type's slots.
    pub ranges: Vec<(u32, u32, u32)>,
}

/// Whether a function of type `u` may be called with the signature `t`, adapted.
fn adaptable(t: &Sig, u: &Sig) -> bool {
    let shared = t.params.len().min(u.params.len());
    t != u
        && t.params[..shared] == u.params[..shared]
        && (t.results == u.results || t.results.is_empty() || u.results.is_empty())
}

/// The adapters of a module: `indirect` are the type indices of its indirect calls,
/// `groups` (first slot, number of slots, type index) the table's runs of address-taken
/// functions of one type. New types are interned in `sigs`.
pub fn plan(sigs: &mut SigTable, indirect: &[u32], groups: &[(u32, u32, u32)]) -> Vec<Adapter> {
    let mut out = Vec::new();
    for &t in indirect {
        let call = sigs.list[t as usize].clone();
        let ranges: Vec<(u32, u32, u32)> = groups
            .iter()
            .copied()
            .filter(|&(_, _, u)| u != t && adaptable(&call, &sigs.list[u as usize]))
            .collect();
        if ranges.is_empty() {
            continue;
        }
        let mut params = call.params.clone();
        params.push(ValType::I32);
        let helper_type = sigs.intern(Sig {
            params,
            results: call.results.clone(),
        });
        out.push(Adapter {
            call_type: t,
            helper_type,
            ranges,
        });
    }
    out
}

fn zero(f: &mut Function, t: ValType) {
    f.instruction(&match t {
        ValType::I32 => Instruction::I32Const(0),
        ValType::I64 => Instruction::I64Const(0),
        ValType::F32 => Instruction::F32Const(Ieee32::from(0.0)),
        ValType::F64 => Instruction::F64Const(Ieee64::from(0.0)),
        _ => Instruction::V128Const(0),
    });
}

/// The adapter's body (see the module documentation).
pub fn body(a: &Adapter, sigs: &SigTable) -> Function {
    let call = &sigs.list[a.call_type as usize];
    let n_params = call.params.len() as u32;
    let ptr = n_params;
    let mut f = Function::new([]);
    for &(first, len, ty) in &a.ranges {
        // if (ptr - first) <u len: the pointer names a function of type `ty`.
        f.instruction(&Instruction::LocalGet(ptr));
        f.instruction(&Instruction::I32Const(first as i32));
        f.instruction(&Instruction::I32Sub);
        f.instruction(&Instruction::I32Const(len as i32));
        f.instruction(&Instruction::I32LtU);
        f.instruction(&Instruction::If(BlockType::Empty));
        let callee = &sigs.list[ty as usize];
        for (i, &p) in callee.params.iter().enumerate() {
            if (i as u32) < n_params {
                f.instruction(&Instruction::LocalGet(i as u32));
            } else {
                zero(&mut f, p);
            }
        }
        f.instruction(&Instruction::LocalGet(ptr));
        f.instruction(&Instruction::CallIndirect {
            type_index: ty,
            table_index: 0,
        });
        match (call.results.first(), callee.results.first()) {
            (None, Some(_)) => {
                f.instruction(&Instruction::Drop);
            }
            (Some(&r), None) => zero(&mut f, r),
            _ => {}
        }
        f.instruction(&Instruction::Return);
        f.instruction(&Instruction::End);
    }
    for i in 0..=n_params {
        f.instruction(&Instruction::LocalGet(i));
    }
    f.instruction(&Instruction::CallIndirect {
        type_index: a.call_type,
        table_index: 0,
    });
    f.instruction(&Instruction::End);
    f
}
