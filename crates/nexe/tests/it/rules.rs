//! One test (or a few) per rule of NaCl's x86-64 sandbox: byte sequences assembled with
//! iced-x86's assembler (or written out where the exact encoding is the point), each
//! checked to be accepted or refused with the rule it breaks, at the right address.

use iced_x86::code_asm::*;
use pexe2wasm_nexe::x86_64::{validate, Rule, Validation, Warning};

const BASE: u32 = 0x20000;

/// `and $-32,%e{reg}` in the one encoding NaCl accepts (0x83 /4 ib; iced's assembler picks
/// the 0x25 form for %eax). `reg` is the register number (0-15).
fn and_mask(a: &mut CodeAssembler, reg: u8) -> Result<(), IcedError> {
    let modrm = 0xe0 | (reg & 7);
    if reg >= 8 {
        a.db(&[0x41, 0x83, modrm, 0xe0])
    } else {
        a.db(&[0x83, modrm, 0xe0])
    }
}

/// `n` one-byte nops (iced's long nops may cross a bundle).
fn nops(a: &mut CodeAssembler, n: usize) -> Result<(), IcedError> {
    a.db(&vec![0x90; n])
}

/// Assembles at `BASE` and pads with hlt to whole bundles.
fn asm(f: impl FnOnce(&mut CodeAssembler) -> Result<(), IcedError>) -> Vec<u8> {
    let mut a = CodeAssembler::new(64).unwrap();
    f(&mut a).unwrap();
    let mut code = a.assemble(BASE as u64).unwrap();
    code.resize(code.len().next_multiple_of(32).max(32), 0xf4);
    code
}

fn check(code: &[u8]) -> Validation {
    validate(code, BASE)
}

/// The rules broken, in address order, with the offset of the instruction.
fn broken(code: &[u8]) -> Vec<(u32, Rule)> {
    check(code)
        .errors
        .into_iter()
        .map(|e| (e.address - BASE, e.rule))
        .collect()
}

fn valid(code: &[u8]) {
    let v = check(code);
    assert!(
        v.is_valid(),
        "expected valid, got {:?}",
        v.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>()
    );
}

fn forbidden(code: &[u8]) -> String {
    match broken(code).as_slice() {
        [(0, Rule::Forbidden { what })] => what.clone(),
        other => panic!("expected one Forbidden at 0, got {other:?}"),
    }
}

#[test]
fn ordinary_code_is_valid() {
    valid(&asm(|a| {
        a.mov(eax, ebx)?;
        a.add(rax, 5)?;
        a.imul_3(ecx, edx, 7)?;
        a.movaps(xmm0, xmm1)?;
        a.mov(eax, dword_ptr(rsp + 8))?;
        a.mov(qword_ptr(rbp - 16), rdx)?;
        a.mov(eax, dword_ptr(r15 + 0x100))?;
        a.push(rbx)?;
        a.pop(rbx)?;
        a.hlt()
    }));
}

#[test]
fn undecodable_bytes() {
    // 0x06 (push %es) does not exist in 64-bit mode.
    let mut code = vec![0x90, 0x06];
    code.resize(32, 0xf4);
    assert_eq!(broken(&code), vec![(1, Rule::Undecodable)]);
}

#[test]
fn no_instruction_crosses_a_bundle() {
    let code = asm(|a| {
        nops(a, 30)?;
        a.mov(eax, 0x12345678)
    });
    assert_eq!(broken(&code), vec![(30, Rule::CrossesBundle)]);
    // The next bundle is still checked (and its start is a valid target).
    let v = check(&code);
    assert!(v.facts.is_valid_target(BASE + 32));
}

#[test]
fn forbidden_instructions() {
    assert!(forbidden(&asm(|a| a.syscall())).contains("system call"));
    assert!(forbidden(&asm(|a| a.int3())).contains("interrupt"));
    assert!(forbidden(&asm(|a| a.int(0x80))).contains("interrupt"));
    assert!(forbidden(&asm(|a| a.ret())).starts_with("ret"));
    assert!(forbidden(&asm(|a| a.pushfq())).contains("pushf"));
    assert!(forbidden(&asm(|a| a.leave())).contains("enter/leave"));
    assert!(forbidden(&asm(|a| a.in_(al, dx))).contains("I/O"));
    assert!(forbidden(&asm(|a| a.cli())).contains("privileged"));
    assert!(forbidden(&asm(|a| a.rdtscp())).contains("rdtscp"));
    assert!(forbidden(&asm(|a| a.rdrand(eax))).contains("RDRAND"));
    assert!(forbidden(&asm(|a| a.mov(ds, ax))).contains("segment register"));
    assert!(forbidden(&asm(|a| a.bts(dword_ptr(r15), eax))).contains("bit offset"));
    // Allowed: hlt (traps), cpuid, rdtsc, ud2, bt with an immediate.
    valid(&asm(|a| {
        a.cpuid()?;
        a.rdtsc()?;
        a.bt(dword_ptr(r15), 3)?;
        a.ud2()?;
        a.hlt()
    }));
}

#[test]
fn prefixes() {
    let rule = |bytes: &[u8]| {
        let mut code = bytes.to_vec();
        code.resize(32, 0xf4);
        broken(&code)
    };
    // mov (%rsp),%eax with an address-size prefix, with %fs:, with a doubled lock.
    let first = |bytes: &[u8]| rule(bytes).into_iter().next().expect("an error");
    assert!(
        matches!(first(&[0x67, 0x8b, 0x04, 0x24]), (0, Rule::BadPrefix { what }) if what.contains("0x67"))
    );
    assert!(
        matches!(first(&[0x64, 0x8b, 0x04, 0x24]), (0, Rule::BadPrefix { what }) if what.contains("segment"))
    );
    assert!(
        matches!(first(&[0xf0, 0xf0, 0x41, 0x01, 0x07]), (0, Rule::BadPrefix { what }) if what.contains("duplicate"))
    );
    // A 16-bit jump.
    assert!(rule(&[0x66, 0xe9, 0x00, 0x00])
        .iter()
        .any(|(_, r)| matches!(r, Rule::BadPrefix { what } if what.contains("16-bit"))));
    // A branch hint on a conditional jump, and gcc's long nops, are fine.
    assert!(rule(&[0x3e, 0x74, 0x00]).is_empty());
    assert!(rule(&[0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0]).is_empty());
}

#[test]
fn nacljmp_and_naclcall() {
    // and $-32,%eax; add %r15,%rax; jmp *%rax
    let jmp = asm(|a| {
        and_mask(a, 0)?;
        a.add(rax, r15)?;
        a.jmp(rax)
    });
    valid(&jmp);
    let v = check(&jmp);
    assert_eq!(v.facts.indirect_jumps, 1);
    // Only the first part is a jump target.
    assert!(v.facts.is_valid_target(BASE));
    assert!(!v.facts.is_valid_target(BASE + 3));
    assert!(!v.facts.is_valid_target(BASE + 6));
    // The 0x03 form of the add, a high register, and a call ending the bundle.
    valid(&asm(|a| {
        nops(a, 21)?;
        and_mask(a, 11)?;
        a.db(&[0x4d, 0x03, 0xdf])?; // add %r15,%r11
        a.call(r11)
    }));
    assert_eq!(
        check(&asm(|a| a.jmp(rax))).errors[0].rule,
        Rule::IndirectNotSandboxed
    );
    assert_eq!(
        check(&asm(|a| a.call(qword_ptr(r15 + 8)))).errors[0].rule,
        Rule::IndirectNotSandboxed
    );
    // Mismatched registers, or the mask applied with a 64-bit and.
    let mismatch = asm(|a| {
        and_mask(a, 0)?;
        a.add(rcx, r15)?;
        a.jmp(rcx)
    });
    assert_eq!(broken(&mismatch), vec![(6, Rule::IndirectNotSandboxed)]);
    let wide = asm(|a| {
        a.db(&[0x48, 0x83, 0xe0, 0xe0])?; // and $-32,%rax
        a.add(rax, r15)?;
        a.jmp(rax)
    });
    assert_eq!(broken(&wide), vec![(7, Rule::IndirectNotSandboxed)]);
    // The sequence split across two bundles.
    let split = asm(|a| {
        nops(a, 29)?;
        and_mask(a, 0)?;
        a.add(rax, r15)?;
        a.jmp(rax)
    });
    assert_eq!(broken(&split), vec![(35, Rule::IndirectNotSandboxed)]);
}

#[test]
fn calls_should_end_bundles() {
    let v = check(&asm(|a| {
        a.call(0x20040u64)?;
        nops(a, 90)
    }));
    assert!(v.is_valid());
    assert_eq!(
        v.warnings,
        vec![Warning::CallNotAtBundleEnd { address: BASE }]
    );
    let v = check(&asm(|a| {
        nops(a, 27)?;
        a.call(0x20040u64)?;
        nops(a, 64)
    }));
    assert!(v.is_valid() && v.warnings.is_empty());
    assert_eq!(v.facts.call_targets, vec![0x20040]);
}

#[test]
fn string_instructions() {
    assert_eq!(
        check(&asm(|a| a.rep().stosb())).errors[0].rule,
        Rule::StringNotSandboxed
    );
    let stos = asm(|a| {
        a.mov(edi, edi)?;
        a.lea(rdi, qword_ptr(r15 + rdi))?;
        a.rep().stosb()
    });
    valid(&stos);
    let v = check(&stos);
    assert!(!v.facts.is_valid_target(BASE + 2) && !v.facts.is_valid_target(BASE + 6));
    valid(&asm(|a| {
        a.mov(esi, esi)?;
        a.lea(rsi, qword_ptr(r15 + rsi))?;
        a.mov(edi, edi)?;
        a.lea(rdi, qword_ptr(r15 + rdi))?;
        a.rep().movsq()
    }));
    // movs needs both registers sandboxed.
    let half = asm(|a| {
        a.mov(edi, edi)?;
        a.lea(rdi, qword_ptr(r15 + rdi))?;
        a.movsb()
    });
    assert_eq!(broken(&half), vec![(6, Rule::StringNotSandboxed)]);
}

#[test]
fn memory_bases() {
    let base = |code: Vec<u8>| match broken(&code).as_slice() {
        [(0, Rule::ForbiddenBase { base })] => base.clone(),
        other => panic!("{other:?}"),
    };
    assert_eq!(base(asm(|a| a.mov(eax, dword_ptr(rax)))), "%rax");
    assert!(base(asm(|a| a.mov(eax, dword_ptr(0x1000)))).contains("absolute"));
    valid(&asm(|a| {
        a.db(&[0x8b, 0x05, 0, 1, 0, 0])?; // mov 0x100(%rip),%eax
        a.lea(rax, qword_ptr(rax + rbx * 4 + 8))?; // lea reads no memory
        a.nop_1(dword_ptr(rax + rax))
    }));
}

#[test]
fn memory_index_must_be_zero_extended_just_before() {
    let code = asm(|a| a.mov(eax, dword_ptr(r15 + rbx)));
    assert!(
        matches!(&broken(&code)[..], [(0, Rule::UnrestrictedIndex { index })] if index == "%rbx")
    );
    let ok = asm(|a| {
        a.mov(ebx, ebx)?;
        a.mov(eax, dword_ptr(r15 + rbx * 4 + 16))
    });
    valid(&ok);
    // The access relies on the mov: no jump may land on it.
    assert!(!check(&ok).facts.is_valid_target(BASE + 2));
    // Any 32-bit write zero-extends (here an add), but only for the next instruction.
    valid(&asm(|a| {
        a.add(ecx, 4)?;
        a.mov(eax, dword_ptr(rsp + rcx))
    }));
    let late = asm(|a| {
        a.mov(ebx, ebx)?;
        a.nop()?;
        a.mov(eax, dword_ptr(r15 + rbx))
    });
    assert_eq!(broken(&late).len(), 1);
    // Not across a bundle boundary.
    let across = asm(|a| {
        nops(a, 30)?;
        a.mov(ebx, ebx)?;
        a.mov(eax, dword_ptr(r15 + rbx))
    });
    assert!(matches!(
        &broken(&across)[..],
        [(32, Rule::UnrestrictedIndex { .. })]
    ));
}

#[test]
fn r15_is_never_written() {
    for code in [
        asm(|a| a.mov(r15, rax)),
        asm(|a| a.mov(r15d, eax)),
        asm(|a| a.add(r15, 1)),
        asm(|a| a.pop(r15)),
        asm(|a| a.xchg(rax, r15)),
    ] {
        assert_eq!(broken(&code), vec![(0, Rule::R15Modified)], "{code:02x?}");
    }
}

#[test]
fn rsp_and_rbp_change_only_in_sequences() {
    // Allowed: push/pop/call, mov between them, and $-N, 32-bit write + add %r15.
    valid(&asm(|a| {
        a.push(rbp)?;
        a.mov(rbp, rsp)?;
        a.sub(esp, 0x20)?;
        a.add(rsp, r15)?;
        a.and(rsp, -16)?;
        a.lea(esp, dword_ptr(rbp + 8))?;
        a.add(rsp, r15)?;
        a.mov(rsp, rbp)?;
        a.pop(r11)?;
        a.mov(ebp, r11d)?;
        a.add(rbp, r15)
    }));
    // The lea form NaCl's compilers use.
    let mut lea = asm(|a| a.sub(esp, 8));
    lea.truncate(3);
    lea.extend([0x4a, 0x8d, 0x24, 0x3c]);
    lea.resize(32, 0xf4);
    valid(&lea);
    assert_eq!(
        broken(&asm(|a| a.add(rsp, 8))),
        vec![(0, Rule::RspModified)]
    );
    assert_eq!(
        broken(&asm(|a| a.mov(rsp, rax))),
        vec![(0, Rule::RspModified)]
    );
    assert_eq!(broken(&asm(|a| a.pop(rsp))), vec![(0, Rule::RspModified)]);
    assert_eq!(
        broken(&asm(|a| a.and(rsp, 0x70))),
        vec![(0, Rule::RspModified)]
    );
    assert_eq!(broken(&asm(|a| a.pop(rbp))), vec![(0, Rule::RbpModified)]);
    assert_eq!(
        broken(&asm(|a| a.mov(rbp, rax))),
        vec![(0, Rule::RbpModified)]
    );
    assert_eq!(
        broken(&asm(|a| a.mov(bpl, al))),
        vec![(0, Rule::RbpModified)]
    );
}

#[test]
fn rsp_must_be_rebased_at_once() {
    let late = asm(|a| {
        a.sub(esp, 8)?;
        a.nop()?;
        a.add(rsp, r15)
    });
    assert_eq!(
        broken(&late),
        vec![
            (3, Rule::RspNotResandboxed),
            (4, Rule::ResandboxWithoutRestrict)
        ]
    );
    // Left restricted at the end of a bundle.
    let end = asm(|a| {
        nops(a, 30)?;
        a.mov(ebp, eax)
    });
    assert_eq!(broken(&end), vec![(30, Rule::RbpNotResandboxed)]);
    assert_eq!(
        broken(&asm(|a| a.add(rsp, r15))),
        vec![(0, Rule::ResandboxWithoutRestrict)]
    );
    // The re-basing is inside the pseudo-instruction.
    let v = check(&asm(|a| {
        a.sub(esp, 8)?;
        a.add(rsp, r15)
    }));
    assert!(!v.facts.is_valid_target(BASE + 3));
}

#[test]
fn direct_jump_targets() {
    // Bundle-aligned targets are fine anywhere (the trampolines below the code).
    let v = check(&asm(|a| {
        nops(a, 27)?;
        a.call(0x10020u64)
    }));
    assert!(v.is_valid());
    assert_eq!(v.facts.outside_targets, vec![0x10020]);
    assert_eq!(v.facts.trampoline_slots(), vec![1]);
    assert_eq!(
        broken(&asm(|a| a.jmp(0x10004u64))),
        vec![(0, Rule::JumpOutOfRange { target: 0x10004 })]
    );
    // Into the middle of an instruction.
    let mid = asm(|a| {
        a.jmp(0x20003u64)?;
        a.mov(eax, 0x11223344)
    });
    assert_eq!(
        broken(&mid),
        vec![(0, Rule::BadJumpTarget { target: 0x20003 })]
    );
    // Onto the jump of a nacljmp, and onto an access relying on the zero-extension.
    let into_pseudo = asm(|a| {
        a.jmp(0x20008u64)?; // eb 06: 2 bytes
        and_mask(a, 0)?; // 2..5
        a.add(rax, r15)?; // 5..8
        a.jmp(rax) // 8..10
    });
    assert_eq!(
        broken(&into_pseudo),
        vec![(0, Rule::BadJumpTarget { target: 0x20008 })]
    );
    let ok = asm(|a| {
        let mut l = a.create_label();
        a.jmp(l)?;
        a.nop()?;
        a.set_label(&mut l)?;
        a.mov(eax, ebx)
    });
    valid(&ok);
    assert_eq!(check(&ok).facts.jump_targets, vec![0x20003]);
}

#[test]
fn pushed_return_calls_are_calls() {
    // PNaCl's calls: push $return; jmp target, the return being the next bundle.
    let code = asm(|a| {
        nops(a, 22)?;
        a.push(0x20020)?;
        a.jmp(0x20040u64)?;
        nops(a, 64)
    });
    let v = check(&code);
    assert!(v.is_valid());
    assert_eq!(v.facts.pushed_return_calls, 1);
    assert_eq!(v.facts.call_targets, vec![0x20040]);
    assert_eq!(v.facts.function_starts(BASE), vec![BASE, 0x20040]);
}

#[test]
fn errors_name_bundle_instruction_and_rule() {
    let code = asm(|a| {
        nops(a, 32)?;
        nops(a, 4)?;
        a.mov(eax, dword_ptr(rax))
    });
    let v = check(&code);
    let e = &v.errors[0];
    assert_eq!((e.bundle, e.address), (0x20020, 0x20024));
    let text = e.to_string();
    assert!(
        text.starts_with(
            "bundle 0x20020 +4: 0x20024 `mov (%rax),%eax` (8b 00): memory access with base %rax"
        ),
        "{text}"
    );
}

#[test]
fn garbage_never_panics() {
    // Every byte value at every offset of a bundle, and a pseudo-random stream.
    let mut x: u32 = 12345;
    let mut code = Vec::new();
    for _ in 0..64 * 1024 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        code.push(x as u8);
    }
    let v = check(&code);
    assert!(!v.is_valid());
    assert!(
        v.errors.len() <= pexe2wasm_nexe::x86_64::MAX_ERRORS && v.error_count >= v.errors.len()
    );
    for b in 0..=255u8 {
        let mut c = vec![b; 31];
        c.push(0xf4);
        let _ = check(&c);
    }
}
