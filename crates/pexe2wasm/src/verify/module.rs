//! Module-level rules: the version record, the type table, and every function address
//! record (calling convention, linkage, signatures, intrinsics, entry points).

use super::types::{check_type_table, is_param_type, is_return_type};
use super::{block_id, position, Context, Rule, Sink};
use crate::bitstream::Position;
use crate::ir::intrinsics::SigTy;
use crate::ir::{FuncId, FunctionDecl, Intrinsic, Linkage, Module};

/// The intrinsic a declaration names. The name wins over the decoder's resolution, so a
/// hand-built IR cannot smuggle in an intrinsic under another name.
pub(super) fn resolve_intrinsic(d: &FunctionDecl) -> Option<Intrinsic> {
    match &d.name {
        Some(n) => Intrinsic::from_name(n),
        None => d.intrinsic,
    }
}

/// True if the declaration claims to be an LLVM intrinsic.
fn is_intrinsic_name(d: &FunctionDecl) -> bool {
    d.name.as_deref().is_some_and(|n| n.starts_with("llvm."))
}

fn sig_name(t: SigTy) -> &'static str {
    match t {
        SigTy::Void => "void",
        SigTy::V4F32 => "<4 x float>",
        SigTy::S(s) => s.name(),
    }
}

/// The signature an intrinsic must have, as PNaClAsm prints types (pointers are i32).
fn expected_signature(i: Intrinsic) -> String {
    let (ret, params) = i.signature();
    let ps: Vec<&str> = params.into_iter().map(sig_name).collect();
    format!("{} ({})", sig_name(ret), ps.join(", "))
}

pub(super) fn check(m: &Module, out: &mut Sink) {
    // Version 1 (relative value ids) is the only one PNaCl's reader accepts.
    if m.version != 1 {
        out.push(
            Rule::ModuleVersion,
            Position::default(),
            Context::Module,
            format!("module version is {}, only version 1 is allowed", m.version),
        );
    }
    check_type_table(m, out);
    let mut entry: Option<u32> = None;
    for (i, d) in m.functions.iter().enumerate() {
        let i = i as u32;
        check_decl(m, i, d, out);
        // The manual says only `_start` is external, but pnacl-llvm-array-of-lit.pexe (a
        // reader test input) exports `fib` and has no `_start`, and the PNaCl reader loads
        // it. What the ABI verifier itself rejects is more than one entry point, so that
        // is the rule (intrinsic declarations are external and do not count).
        if !d.is_proto && d.linkage == Linkage::External {
            if let Some(first) = entry {
                out.push(
                    Rule::EntryPoints,
                    position(d.bit, block_id::MODULE),
                    ctx(i, d),
                    format!(
                        "second external definition (the first is @f{first}); a pexe \
                         exports only its entry point"
                    ),
                );
            } else {
                entry = Some(i);
            }
        }
    }
    check_bodies(m, out);
}

fn ctx(i: u32, d: &FunctionDecl) -> Context {
    Context::Function {
        index: i,
        name: d.name.clone(),
    }
}

fn check_decl(m: &Module, i: u32, d: &FunctionDecl, out: &mut Sink) {
    let pos = position(d.bit, block_id::MODULE);
    let types = &m.types;
    let show = |t| types.display(t).to_string();
    if d.cc != 0 {
        out.push(
            Rule::CallingConv,
            pos,
            ctx(i, d),
            format!(
                "calling convention {} is not allowed (only 0, the C convention)",
                d.cc
            ),
        );
    }
    if let Linkage::Other(code) = d.linkage {
        out.push(
            Rule::Linkage,
            pos,
            ctx(i, d),
            format!("linkage code {code} is not allowed (only internal and external)"),
        );
    }
    let Some(ft) = types.function(d.ty) else {
        out.push(
            Rule::Structure,
            pos,
            ctx(i, d),
            format!("type {} is not a function type", show(d.ty)),
        );
        return;
    };
    if is_intrinsic_name(d) || d.intrinsic.is_some() {
        let name = d.name.as_deref().unwrap_or("?");
        match resolve_intrinsic(d) {
            None => out.push(
                Rule::Intrinsic,
                pos,
                ctx(i, d),
                format!("{name} is not an allowed PNaCl intrinsic"),
            ),
            Some(intr) if !intr.matches(types, d.ty) => out.push(
                Rule::Intrinsic,
                pos,
                ctx(i, d),
                format!(
                    "{name} has type {}, but PNaCl requires {}",
                    show(d.ty),
                    expected_signature(intr)
                ),
            ),
            Some(_) => {}
        }
        // Intrinsics are supplied by the translator: only declared, and external.
        if !d.is_proto {
            out.push(
                Rule::Intrinsic,
                pos,
                ctx(i, d),
                format!("intrinsic {name} is defined; intrinsics may only be declared"),
            );
        }
        if d.is_proto && d.linkage == Linkage::Internal {
            out.push(
                Rule::Linkage,
                pos,
                ctx(i, d),
                format!("intrinsic {name} is declared internal; declarations must be external"),
            );
        }
        return;
    }
    // Ordinary functions: i32/i64/float/double/vector parameters and returns only.
    if ft.vararg {
        out.push(
            Rule::FunctionSignature,
            pos,
            ctx(i, d),
            format!("function type {} is vararg", show(d.ty)),
        );
    }
    if !is_return_type(types, ft.ret) {
        out.push(
            Rule::FunctionSignature,
            pos,
            ctx(i, d),
            format!(
                "return type {} is not allowed (only void, i32, i64, float, double, vectors)",
                show(ft.ret)
            ),
        );
    }
    for (k, p) in ft.params.iter().enumerate() {
        if !is_param_type(types, *p) {
            out.push(
                Rule::FunctionSignature,
                pos,
                ctx(i, d),
                format!(
                    "parameter {k} has type {}, not allowed (only i32, i64, float, double, \
                     vectors)",
                    show(*p)
                ),
            );
        }
    }
    // A pexe is statically linked: everything but intrinsics has a body.
    if d.is_proto {
        out.push(
            Rule::UndefinedFunction,
            pos,
            ctx(i, d),
            "function is declared but not defined, and is not an intrinsic",
        );
    }
}

/// Every defined function has exactly one body and every body defines a defined function.
fn check_bodies(m: &Module, out: &mut Sink) {
    let nb = m.function_bodies.len();
    for (i, d) in m.functions.iter().enumerate() {
        let i = i as u32;
        let pos = position(d.bit, block_id::MODULE);
        match (d.is_proto, d.body) {
            (true, Some(_)) => out.push(
                Rule::Structure,
                pos,
                ctx(i, d),
                "declared function has a body",
            ),
            (false, None) => out.push(
                Rule::Structure,
                pos,
                ctx(i, d),
                "defined function has no body",
            ),
            (false, Some(b)) => {
                let back = m.function_bodies.get(b as usize).map(|f| f.decl);
                if back != Some(FuncId(i)) {
                    out.push(
                        Rule::Structure,
                        pos,
                        ctx(i, d),
                        format!("body index {b} does not belong to this function ({nb} bodies)"),
                    );
                }
            }
            (true, None) => {}
        }
    }
}
