//! `pexe2wasm interp`: one function of a pexe in the reference interpreter
//! (`pexe2wasm::interp`), with its result, an optional trace and dumps of globals.

use anyhow::{anyhow, bail, Context, Result};
use pexe2wasm::interp::{Machine, Val, DEFAULT_STACK};
use pexe2wasm::ir::{FuncId, GlobalId, Module, Type, TypeId};

pub fn run(
    m: &Module,
    function: &str,
    args: &[String],
    trace: bool,
    dump: &[String],
    max_steps: u64,
) -> Result<()> {
    let f = match function.strip_prefix("@f") {
        Some(n) => FuncId(n.parse().context("a function id @fN")?),
        None => m
            .function_by_name(function)
            .ok_or_else(|| anyhow!("no function named {function:?}"))?,
    };
    let decl = m
        .function(f)
        .ok_or_else(|| anyhow!("no function @f{}", f.0))?;
    let ft = m
        .types
        .function(decl.ty)
        .ok_or_else(|| anyhow!("@f{} has no function type", f.0))?;
    if ft.params.len() != args.len() {
        bail!(
            "@f{} takes {} arguments ({}), got {}",
            f.0,
            ft.params.len(),
            ft.params
                .iter()
                .map(|p| m.types.display(*p).to_string())
                .collect::<Vec<_>>()
                .join(", "),
            args.len()
        );
    }
    let vals = ft
        .params
        .iter()
        .zip(args)
        .map(|(t, a)| parse(m, *t, a).with_context(|| format!("argument {a:?}")))
        .collect::<Result<Vec<_>>>()?;
    let mut mach = Machine::new(m, DEFAULT_STACK)?;
    mach.max_steps = max_steps;
    if trace {
        mach.trace = Some(Box::new(std::io::stderr()));
    }
    match mach.call(f, &vals)? {
        Ok(Some(v)) => println!("result: {v}"),
        Ok(None) => println!("result: void"),
        Err(t) => println!("trap: {t}"),
    }
    println!("steps: {}", mach.steps);
    for g in dump {
        let id: u32 = g
            .strip_prefix("@g")
            .and_then(|n| n.parse().ok())
            .ok_or_else(|| anyhow!("--dump wants a global as @gN, not {g:?}"))?;
        let gv = m
            .global(GlobalId(id))
            .ok_or_else(|| anyhow!("no global @g{id}"))?;
        let a = mach.global_addr[id as usize] as usize;
        let bytes = &mach.mem[a..a + gv.init.size() as usize];
        println!("@g{id} at {a:#x}, {} bytes:", bytes.len());
        for (i, row) in bytes.chunks(16).enumerate() {
            let hex: Vec<String> = row.iter().map(|b| format!("{b:02x}")).collect();
            println!("  +{:<5} {}", i * 16, hex.join(" "));
        }
    }
    Ok(())
}

fn int(s: &str) -> Result<u64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s),
    };
    let v = match s.strip_prefix("0x") {
        Some(h) => u64::from_str_radix(h, 16)?,
        None => s.parse::<u64>()?,
    };
    Ok(if neg { v.wrapping_neg() } else { v })
}

/// An argument of type `t` from its text.
fn parse(m: &Module, t: TypeId, s: &str) -> Result<Val> {
    Ok(match m.types.get(t) {
        Some(Type::Int(b)) => Val::int(*b, int(s)?),
        Some(Type::Float) => Val::F32(s.parse::<f32>()?.to_bits()),
        Some(Type::Double) => Val::F64(s.parse::<f64>()?.to_bits()),
        Some(Type::Vector { len, elem }) => {
            let parts: Vec<&str> = s.split(',').collect();
            if parts.len() != *len as usize {
                bail!("a vector of {len} lanes needs {len} comma-separated values");
            }
            let mut lanes = [0u64; 16];
            for (l, p) in lanes.iter_mut().zip(&parts) {
                *l = match parse(m, *elem, p.trim())? {
                    Val::F32(b) => b as u64,
                    v => v.raw(),
                };
            }
            Val::Vector {
                elem: m
                    .types
                    .scalar(*elem)
                    .ok_or_else(|| anyhow!("bad element type"))?,
                n: *len as u8,
                lanes,
            }
        }
        _ => bail!("a parameter of type {} cannot be given", m.types.display(t)),
    })
}
