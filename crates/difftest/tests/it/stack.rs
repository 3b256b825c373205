//! The generated programs never overflow the stack (docs/FUZZING.md, finding 2): the
//! interpreter and the converted module pad dynamic allocas differently, so an overflow
//! into the globals below the stack wrote different bytes on the two sides.
use pexe2wasm::interp::Val;
use pexe2wasm_difftest::gen::{PlannedCall, Sig, Ty, MAX_GROWING_ALLOCAS};
use pexe2wasm_difftest::{check_program, generate, seed_bytes, Config, Program, Src};

/// Per function of `text`: its dynamic allocas (size not a constant) and its
/// `llvm.stackrestore` calls (the generator makes one per alloca it brackets).
fn allocas_and_restores(text: &str) -> Vec<(usize, usize)> {
    let restore = text
        .lines()
        .find(|l| l.contains("\"llvm.stackrestore\""))
        .and_then(|l| l.trim().split(' ').next())
        .map(|f| format!("call void {f}("));
    let mut out = Vec::new();
    for body in text.split("\n  function ").skip(1) {
        let dynamic = body
            .lines()
            .filter(|l| l.contains("= alloca i8, i32 %v"))
            .count();
        let restores = restore.as_ref().map_or(0, |r| {
            body.lines().filter(|l| l.contains(r.as_str())).count()
        });
        out.push((dynamic, restores));
    }
    out
}

fn check_bytes(name: &str, data: &[u8]) {
    let prog = generate(
        &mut Src(arbitrary::Unstructured::new(data)),
        &Config::default(),
    );
    for (i, (dynamic, restores)) in allocas_and_restores(&prog.text).into_iter().enumerate() {
        assert!(
            dynamic <= restores + MAX_GROWING_ALLOCAS as usize,
            "{name}: fn{i} has {dynamic} dynamic allocas and {restores} stackrestores\n{}",
            prog.text
        );
    }
}

#[test]
fn dynamic_allocas_outside_stackrestore_are_bounded() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/regressions");
    let data = std::fs::read(dir.join("alloca-loop-overflows-stack.bin")).expect("input");
    check_bytes("alloca-loop-overflows-stack.bin", &data);
    for n in 0..300 {
        check_bytes(&format!("seed {n}"), &seed_bytes(n));
    }
}

/// `fn0(i32 p)`: a loop counted by the fuel (200) whose body makes `n` allocas of
/// `(p & 31) + 16` bytes, zeroed and given an i32 1, without stackrestore.
fn alloca_loop(n: usize) -> String {
    let mut body = String::new();
    for k in 0..n {
        let (a, s, p) = (3 + 3 * k, 4 + 3 * k, 5 + 3 * k);
        body += &format!(
            "    %v{a} = and i32 %p0, %c2;\n    %v{s} = add i32 %v{a}, %c3;\n    \
             %v{p} = alloca i8, i32 %v{s}, align 1;\n    \
             call void @f1(i32 %v{p}, i8 %c1, i32 %v{s}, i32 %c4, i1 %c0);\n    \
             store i32 %c4, i32* %v{p}, align 1;\n"
        );
    }
    format!(
        "module {{
  version 1;
  types {{
    count 6;
    @t0 = i1;
    @t1 = i8;
    @t2 = i32;
    @t3 = void;
    @t4 = void (i32);
    @t5 = void (i32, i8, i32, i32, i1);
  }}
  define internal void @f0(i32);
  declare external void @f1(i32, i8, i32, i32, i1);
  globals {{
    count 2;
    var @g0, align 16, zerofill 512;
    var @g1, align 4, {{ 200, 0, 0, 0 }}
  }}
  valuesymtab {{
    @f0 : \"fn0\";
    @f1 : \"llvm.memset.p0i8.i32\";
  }}
  function void @f0(i32 %p0) {{
    blocks 3;
    constants {{
      i1: %c0 = i1 0;
      i8: %c1 = i8 0;
      i32: %c2 = i32 31; %c3 = i32 16; %c4 = i32 1; %c5 = i32 0;
    }}
    br label %b1;
  %b1:
    %v0 = load i32* @g1, align 1;
    %v1 = sub i32 %v0, %c4;
    store i32 %v1, i32* @g1, align 1;
    %v2 = icmp sle i32 %v1, %c5;
{body}    br i1 %v2, label %b2, label %b1;
  %b2:
    ret void;
  }}
}}
"
    )
}

fn alloca_loop_program(n: usize) -> Program {
    Program {
        text: alloca_loop(n),
        sigs: vec![Sig {
            params: vec![Ty::I32],
            ret: None,
        }],
        calls: vec![PlannedCall {
            func: 0,
            args: vec![Val::int(32, 1)],
        }],
        compared_globals: vec![0, 1],
        threads: false,
    }
}

/// The finding's mechanism in small: 24 allocas of 17 bytes per iteration take 32 bytes
/// each in wasm (padded to 16), 17 in the interpreter; 200 iterations overflow the
/// stack and the page of slack below it in wasm only, whose allocas land on `buf` (an
/// i32 1 at `buf + 0`, as the finding's at `buf + 16`). The harness calls that the
/// generator's bug instead of a difference.
#[test]
fn stack_overflow_is_a_generator_bug() {
    let small = check_program(&alloca_loop_program(2)).expect("a small loop agrees");
    assert_eq!(small.calls, 1);
    let r = std::panic::catch_unwind(|| check_program(&alloca_loop_program(24)));
    let msg = match r {
        Ok(r) => panic!("an overflowing program was compared: {r:?}"),
        Err(p) => p.downcast_ref::<String>().cloned().unwrap_or_default(),
    };
    assert!(msg.contains("generator made a program that uses"), "{msg}");
}
