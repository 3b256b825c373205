//! Control-flow shapes lifted with structured control flow (or, where the graph does
//! not allow it, the dispatch loop): each function is run lifted and its result checked
//! against the same computation in Rust; `run_called` validates every module.

use super::lift::{
    asm, ends_bundle, five_and_triple, naclret, place, run_called, test_options, BASE,
};
use iced_x86::code_asm::*;
use pexe2wasm_nexe::x86_64::lift::lift_code;

/// How many functions of `code` (one, at BASE) are structured; all of them lift.
fn structured(code: &[u8]) -> usize {
    let l = lift_code(code, BASE, &[BASE], &test_options(false, false));
    assert_eq!(l.functions.len(), 1, "one function");
    for r in &l.results {
        r.as_ref().expect("lifts");
    }
    l.structured
}

/// Runs the single function of `code` with rcx and rdx set; returns rax.
fn run(code: &[u8], c: u64, d: u64) -> u64 {
    run_called(code, &[BASE], false, BASE, &[(0, 0), (1, c), (2, d)])[0]
}

fn one(f: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Vec<u8> {
    place(&[(BASE, asm(f))])
}

#[test]
fn a_loop_is_structured() {
    // rax = rcx + (rcx - 1) + ... + 1
    let code = one(|a| {
        let mut l = a.create_label();
        a.xor(eax, eax)?;
        a.set_label(&mut l)?;
        a.add(rax, rcx)?;
        a.dec(rcx)?;
        a.jne(l)?;
        naclret(a)
    });
    assert_eq!(structured(&code), 1);
    for n in [1u64, 2, 10, 1000] {
        assert_eq!(run(&code, n, 0), n * (n + 1) / 2, "n = {n}");
    }
}

#[test]
fn nested_loops_are_structured() {
    // for i in 0..rcx { for j in 0..rdx { rax += i * j + 1 } }
    let code = one(|a| {
        let (mut outer, mut inner, mut inner_done, mut done) = (
            a.create_label(),
            a.create_label(),
            a.create_label(),
            a.create_label(),
        );
        a.xor(eax, eax)?;
        a.xor(r8d, r8d)?;
        a.set_label(&mut outer)?;
        a.cmp(r8, rcx)?;
        a.jge(done)?;
        a.xor(r9d, r9d)?;
        a.set_label(&mut inner)?;
        a.cmp(r9, rdx)?;
        a.jge(inner_done)?;
        a.mov(r10, r8)?;
        a.imul_2(r10, r9)?;
        a.add(rax, r10)?;
        a.inc(rax)?;
        a.inc(r9)?;
        a.jmp(inner)?;
        a.set_label(&mut inner_done)?;
        a.inc(r8)?;
        a.jmp(outer)?;
        a.set_label(&mut done)?;
        naclret(a)
    });
    assert_eq!(structured(&code), 1);
    for (n, m) in [(0u64, 5u64), (3, 0), (4, 7), (13, 9)] {
        let want: u64 = (0..n).flat_map(|i| (0..m).map(move |j| i * j + 1)).sum();
        assert_eq!(run(&code, n, m), want, "{n} x {m}");
    }
}

#[test]
fn a_diamond_is_structured() {
    // rax = |rcx - rdx| * 3 (signed)
    let code = one(|a| {
        let (mut less, mut merge) = (a.create_label(), a.create_label());
        a.cmp(rcx, rdx)?;
        a.jl(less)?;
        a.mov(rax, rcx)?;
        a.sub(rax, rdx)?;
        a.jmp(merge)?;
        a.set_label(&mut less)?;
        a.mov(rax, rdx)?;
        a.sub(rax, rcx)?;
        a.set_label(&mut merge)?;
        a.imul_3(rax, rax, 3)?;
        naclret(a)
    });
    assert_eq!(structured(&code), 1);
    for (x, y) in [(5i64, 9i64), (9, 5), (-4, 4), (7, 7)] {
        let want = ((x - y).abs() * 3) as u64;
        assert_eq!(run(&code, x as u64, y as u64), want, "{x}, {y}");
    }
}

#[test]
fn a_loop_with_two_exits_is_structured() {
    // the first i < rcx with i * i == rdx, plus 1000; 999 when there is none
    let code = one(|a| {
        let (mut l, mut found, mut missing, mut end) = (
            a.create_label(),
            a.create_label(),
            a.create_label(),
            a.create_label(),
        );
        a.xor(eax, eax)?;
        a.set_label(&mut l)?;
        a.cmp(rax, rcx)?;
        a.jge(missing)?;
        a.mov(r8, rax)?;
        a.imul_2(r8, r8)?;
        a.cmp(r8, rdx)?;
        a.je(found)?;
        a.inc(rax)?;
        a.jmp(l)?;
        a.set_label(&mut found)?;
        a.add(rax, 1000)?;
        a.jmp(end)?;
        a.set_label(&mut missing)?;
        a.mov(eax, 999u32)?;
        a.set_label(&mut end)?;
        naclret(a)
    });
    assert_eq!(structured(&code), 1);
    for (n, sq) in [(10u64, 49u64), (10, 50), (7, 49), (8, 49), (3, 0)] {
        let want = (0..n).find(|i| i * i == sq).map_or(999, |i| i + 1000);
        assert_eq!(run(&code, n, sq), want, "{n}, {sq}");
    }
}

#[test]
fn a_switch_through_an_indirect_jump_keeps_the_dispatch() {
    // jump to the bundle 0x20020 + 32 * (rcx & 1) of the same function
    let head = asm(|a| {
        a.mov(r11d, ecx)?;
        a.and(r11d, 1)?;
        a.shl(r11d, 5)?;
        a.add(r11d, 0x20020)?;
        a.and(r11d, -32)?;
        a.add(r11, r15)?;
        a.jmp(r11)
    });
    assert!(head.len() <= 32);
    let case = |v: u32| {
        asm(move |a| {
            a.mov(eax, v)?;
            naclret(a)
        })
    };
    let code = place(&[
        (BASE, head),
        (BASE + 0x20, case(11)),
        (BASE + 0x40, case(22)),
    ]);
    assert_eq!(
        structured(&code),
        0,
        "an indirect jump that is not a return"
    );
    assert_eq!(run(&code, 4, 0), 11);
    assert_eq!(run(&code, 5, 0), 22);
}

#[test]
fn an_irreducible_loop_keeps_the_dispatch() {
    // a loop entered at two blocks: rcx == 0 enters at b, else at a
    // a: rax += 1; b: rax += 2; if rax < 20 goto a
    let code = one(|a| {
        let (mut la, mut lb) = (a.create_label(), a.create_label());
        a.xor(eax, eax)?;
        a.test(rcx, rcx)?;
        a.je(lb)?;
        a.set_label(&mut la)?;
        a.add(rax, 1)?;
        a.set_label(&mut lb)?;
        a.add(rax, 2)?;
        a.cmp(rax, 20)?;
        a.jl(la)?;
        naclret(a)
    });
    assert_eq!(structured(&code), 0, "irreducible");
    for c in [0u64, 1] {
        let mut x = 0u64;
        let mut at_a = c != 0;
        loop {
            if at_a {
                x += 1;
            }
            x += 2;
            if x >= 20 {
                break;
            }
            at_a = true;
        }
        assert_eq!(run(&code, c, 0), x, "rcx = {c}");
    }
}

#[test]
fn a_conditional_return_and_a_tail_loop_are_structured() {
    // if rcx == 0 return 7 (a return in the middle); else count rdx down to 0 in a loop
    // whose header is also the join of two paths
    let code = one(|a| {
        let (mut nonzero, mut l) = (a.create_label(), a.create_label());
        a.test(rcx, rcx)?;
        a.jne(nonzero)?;
        a.mov(eax, 7u32)?;
        naclret(a)?;
        a.set_label(&mut nonzero)?;
        a.xor(eax, eax)?;
        a.test(rcx, 1)?;
        a.jne(l)?;
        a.add(rax, 100)?;
        a.set_label(&mut l)?;
        a.add(rax, rdx)?;
        a.dec(rdx)?;
        a.jg(l)?;
        naclret(a)
    });
    assert_eq!(structured(&code), 1);
    assert_eq!(run(&code, 0, 5), 7);
    assert_eq!(run(&code, 1, 5), 15);
    assert_eq!(run(&code, 2, 5), 115);
    assert_eq!(run(&code, 3, 1), 1);
}

#[test]
fn a_conditional_jump_to_the_next_instruction_is_structured() {
    // both sides of the je reach the same block: its condition is dropped
    let code = one(|a| {
        let mut next = a.create_label();
        a.mov(eax, 1u32)?;
        a.cmp(rcx, 5)?;
        a.je(next)?;
        a.set_label(&mut next)?;
        a.add(rax, rcx)?;
        naclret(a)
    });
    assert_eq!(structured(&code), 1);
    assert_eq!(run(&code, 5, 0), 6);
    assert_eq!(run(&code, 9, 0), 10);
}

#[test]
fn pushed_return_address_calls_are_calls() {
    // Subzero's calls: `push $ret; jmp f1` and `push $ret; and; add %r15; jmp *%r11`,
    // locked in one bundle, `ret` the next bundle start (the padding after the `jmp`,
    // here hlt, or before the `push`). They are calls: the return addresses start no
    // function (each function stays whole and structured) and control comes back at
    // `ret`.
    // f0: rax = f2(f1() + 1) doubled twice in a loop after the calls; f1: 5; f2: rax * 3
    let mut f0 = {
        let mut a = CodeAssembler::new(64).unwrap();
        a.push(0x20020).unwrap();
        a.jmp(0x20080u64).unwrap();
        a.assemble(BASE as u64).unwrap()
    };
    f0.resize(0x20, 0xf4);
    f0.extend(ends_bundle(0x20020, |a| {
        a.inc(rax)?;
        a.mov(r11d, 0x200a0u32)?;
        a.push(0x20040)?;
        a.and(r11d, -32)?;
        a.add(r11, r15)?;
        a.jmp(r11)
    }));
    f0.extend(asm(|a| {
        let mut l = a.create_label();
        a.mov(ecx, 2u32)?;
        a.set_label(&mut l)?;
        a.add(rax, rax)?;
        a.dec(rcx)?;
        a.cmp(rcx, 1)?;
        a.jge(l)?;
        naclret(a)
    }));
    let [f1, f2] = five_and_triple();
    let code = place(&[(0x20000, f0), (0x20080, f1), (0x200a0, f2)]);
    let l = lift_code(&code, BASE, &[BASE], &test_options(true, false));
    let starts: Vec<u32> = l.functions.iter().map(|f| f.start).collect();
    assert_eq!(
        starts,
        [0x20000, 0x20080, 0x200a0],
        "the return addresses start no function"
    );
    for r in &l.results {
        r.as_ref().expect("lifts");
    }
    assert_eq!(l.structured, 3);
    let regs = run_called(&code, &[BASE], true, BASE, &[(0, 99)]);
    assert_eq!(regs[0], ((5 + 1) * 3) * 4);
}
