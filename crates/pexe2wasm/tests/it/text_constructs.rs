//! Small programs for each PNaClAsm construct and each disassembler extension:
//! assemble → disassemble → assemble must give the same bits, and disassembling again must
//! give the same text.

use pexe2wasm::text::dis::disassemble_with_stats;
use pexe2wasm::text::{assemble, disassemble};

/// Disassembles, requiring success.
fn dis(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    disassemble(bytes, &mut out).unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8(out).unwrap()
}

/// Disassembles, returning the text even if the file does not decode.
fn dis_any(bytes: &[u8]) -> (String, bool) {
    let mut out = Vec::new();
    let ok = disassemble(bytes, &mut out).is_ok();
    (String::from_utf8(out).unwrap(), ok)
}

/// The PNaClAsm column of a dump.
fn asm_column(dump: &str) -> String {
    dump.lines()
        .map(|l| l.splitn(3, '|').nth(2).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Assembles `program`, checks the round trip and idempotence, returns the dump.
fn round_trip(program: &str) -> String {
    let bytes = assemble(program).unwrap_or_else(|e| panic!("{e}\n{program}"));
    let (text, _) = dis_any(&bytes);
    let again = assemble(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(again, bytes, "round trip differs:\n{text}");
    // The PNaClAsm column alone is enough.
    assert_eq!(assemble(&asm_column(&text)).unwrap(), bytes);
    assert_eq!(dis_any(&again).0, text, "disassembly is not stable");
    text
}

/// Without whitespace (lines may wrap between any two tokens).
fn squash(s: &str) -> String {
    s.split_whitespace().collect()
}

fn contains(text: &str, what: &str) {
    assert!(
        squash(&asm_column(text)).contains(&squash(what)),
        "'{what}' not found in:\n{text}"
    );
}

/// A module around a types block and some functions.
fn module(types: &str, decls: &str, globals: &str, functions: &str) -> String {
    format!(
        "module {{\n version 1;\n types {{\n{types}\n }}\n{decls}\n globals {{\n{globals}\n }}\n{functions}\n}}\n"
    )
}

const TYPES: &str = "count 13;
  @t0 = i32; @t1 = void; @t2 = i1; @t3 = i64; @t4 = float; @t5 = double;
  @t6 = <4 x i32>; @t7 = <4 x i1>; @t8 = i8; @t9 = void (i32);
  @t10 = i32 (i32, i32); @t11 = i16; @t12 = void (i32, i32);";

#[test]
fn integer_and_vector_instructions() {
    let text = round_trip(&module(
        TYPES,
        "define internal i32 @f0(i32, i32);",
        "count 0;",
        "function i32 @f0(i32 %p0, i32 %p1) {
           blocks 1;
           constants { i64: %c0 = i64 -2; %c1 = i64 -0; %c2 = i64 9223372036854775807;
                       i1: %c3 = i1 1; %c4 = i1 0; <4 x i32>: %c5 = <4 x i32> undef;
                       i8: %c6 = i8 -128; i16: %c7 = i16 255; }
           %v0 = add i32 %p0, %p1; %v1 = sub i32 %v0, %p1; %v2 = mul i32 %v1, %v1;
           %v3 = udiv i32 %v2, %p0; %v4 = sdiv i32 %v3, %p0; %v5 = urem i32 %v4, %p0;
           %v6 = srem i32 %v5, %p0; %v7 = shl i32 %v6, %p0; %v8 = lshr i32 %v7, %p0;
           %v9 = ashr i32 %v8, %p0; %v10 = and i32 %v9, %p0; %v11 = or i32 %v10, %p0;
           %v12 = xor i32 %v11, %p0;
           %v13 = add i64 %c0, %c1; %v14 = trunc i64 %v13 to i32;
           %v15 = insertelement <4 x i32> %c5, i32 %v14, i32 %p0;
           %v16 = add <4 x i32> %v15, %v15;
           %v17 = extractelement <4 x i32> %v16, i32 %p1;
           %v18 = icmp slt <4 x i32> %v16, %v15;
           %v19 = select i1 %c3, i32 %v17, i32 %v12;
           %v20 = sext i8 %c6 to i32; %v21 = zext i16 %c7 to i32;
           ret i32 %v19;
         }",
    ));
    for s in [
        "%c0 = i64 -2;",
        "%c1 = i64 -0;",
        "%c3 = i1 1;",
        "%c5 = <4 x i32> undef;",
        "%c6 = i8 -128;",
        "%v16 = add <4 x i32> %v15, %v15;",
        "%v18 = icmp slt <4 x i32> %v16, %v15;",
        "<4 x i32>:",
    ] {
        contains(&text, s);
    }
}

#[test]
fn floating_point() {
    let text = round_trip(&module(
        TYPES,
        "define internal void @f0(i32, i32);",
        "count 0;",
        "function void @f0(i32 %p0, i32 %p1) {
           blocks 1;
           constants { float: %c0 = float 0.1; %c1 = float -0; %c2 = float 3.40282347e+38;
                       %c3 = float 1e-45; %c4 = float -nan;
                       double: %c5 = double 3.141592653589793; %c6 = double 1e+300;
                       %c7 = double 2.2250738585072014e-308; %c8 = double 0.30000000000000004; }
           %v0 = fadd float %c0, %c1; %v1 = fsub float %v0, %c2; %v2 = fmul float %v1, %c3;
           %v3 = fdiv float %v2, %c4; %v4 = frem float %v3, %c0;
           %v5 = fpext float %v4 to double; %v6 = fptrunc double %c5 to float;
           %v7 = fptosi double %v5 to i32; %v8 = uitofp i32 %v7 to float;
           %v9 = sitofp i32 %v7 to double;
           %v10 = fcmp uno double %c6, %c7; %v11 = bitcast float %v8 to i32;
           ret void;
         }",
    ));
    for s in [
        "%c0 = float 0.1;",
        "%c1 = float -0;",
        "%c2 = float 3.4028235e+38;",
        "%c3 = float 1.4013e-45;",
        "%c4 = float -nan;",
        "%c5 = double 3.14159265358979",
        "%c6 = double 1e+300;",
        "%c8 = ",
    ] {
        contains(&text, s);
    }
}

#[test]
fn memory_calls_and_control_flow() {
    let text = round_trip(&module(
        TYPES,
        "declare external void @f0(i32); define internal i32 @f1(i32, i32);",
        "count 2; var @g0, align 4, zerofill 8; const @g1, align 1, { 1, 2, 255 }",
        "function i32 @f1(i32 %p0, i32 %p1) {
           blocks 6;
           constants { i32: %c0 = i32 4; %c1 = i32 -1; }
           %v0 = alloca i8, i32 %c0, align 8;
           store i32 %p0, i32* %v0, align 1;
           %v1 = load i32* @g0, align 4;
           call void @f0(i32 %v1);
           %v2 = tail call i32 @f1(i32 %v1, i32 @g1);
           %v3 = call i32 %p1(i32 %v2, i32 %v2);
           call void %p1();
           switch i32 %v3 { default: br label %b1; i32 -1: br label %b2; i32 7: br label %b3; }
         %b1:
           br label %b4;
         %b2:
           declare i32 %v5;
           br label %b4;
         %b3:
           %v4 = add i32 %v3, %c0;
           br label %b4;
         %b4:
           %v5 = phi i32 [%v3, %b1], [%v5, %b2], [%v4, %b3];
           %v6 = icmp eq i32 %v5, %c1;
           br i1 %v6, label %b5, label %b5;
         %b5:
           unreachable;
         }",
    ));
    for s in [
        "%v0 = alloca i8, i32 %c0, align 8;",
        "store i32 %p0, i32* %v0, align 1;",
        "%v1 = load i32* @g0, align 4;",
        "call void @f0(i32 %v1);",
        "%v2 = tail call i32 @f1(i32 %v1, i32 @g1);",
        "call void %p1();",
        "i32 -1: br label %b2;",
        "declare i32 %v5;",
        "[%v5, %b2]",
        "unreachable;",
        "{  1,   2, 255}",
    ] {
        contains(&text, s);
    }
}

#[test]
fn symbol_tables_abbreviations_and_names() {
    let text = round_trip(
        "module {
           version 1;
           abbreviations {
             valuesymtab:
               @a0 = abbrev <fixed(3), vbr(8), array(fixed(8))>;
               @a1 = abbrev <1, vbr(8), array(char6)>;
             function:
               @a0 = abbrev <2, vbr(6), vbr(6), fixed(4)>;
               @a1 = abbrev <10, vbr(6)>;
             constants:
               @a0 = abbrev <4, vbr(8)>;
           }
           types { %a0 = abbrev <7, vbr(6)>; count 3; @t0 = i32; <%a0> @t1 = void; @t2 = i32 (i32); }
           define external i32 @f0(i32);
           globals { count 1; var @g0, align 1, initializers 2 { reloc @g0 - 4; reloc @f0 + 8; } }
           valuesymtab {
             @f0 : \"_start\"; <@a1>
             @g0 : { 'a', 32, 'b', 200, 0 }
           }
           function i32 @f0(i32 %p0) {
             %a0 = abbrev <2, vbr(6), vbr(6), 0>;
             blocks 2;
             constants { i32: %c0 = i32 5; <@a0> }
             %v0 = add i32 %p0, %c0; <%a0>
             br label %b1;
           %b1:
             ret i32 %v0; <@a1>
             valuesymtab { %v0 : \"sum\"; %p0 : \"n\"; %b1 : \"exit\"; %c0 : { 1, 2 } }
           }
         }",
    );
    for s in [
        "@a0 = abbrev <fixed(3), vbr(8),",
        "@t0 = i32; <%a0>",
        "reloc @g0 - 4;",
        "reloc @f0 + 8;",
        "@f0 : \"_start\"; <@a1>",
        "@g0 : {'a',  32, 'b', 200,   0}",
        "%a0 = abbrev <2, vbr(6), vbr(6), 0>;",
        "%v0 = add i32 %p0, %c0; <%a0>",
        "%c0 = i32 5; <@a0>",
        "%b1 : \"exit\";",
        "%c0 : {  1,   2}",
    ] {
        contains(&text, s);
    }
}

#[test]
fn non_canonical_records_get_overrides() {
    // Old binop flags, compare record code 9, i1 true written as +1, a NaN payload, an
    // i32 switch case stored unsigned, a call through a function address with
    // call_indirect.
    let text = round_trip(&module(
        TYPES,
        "define internal i32 @f0(i32, i32);",
        "count 0;",
        "function i32 @f0(i32 %p0, i32 %p1) {
           blocks 2;
           constants { i1: %c0 = record <4, 2>; float: %c1 = record <6, 2143289345>;
                       double: %c2 = record <6, 9223372036854775807>; }
           %v0 = record <2, 5, 4, 0, 1>;
           %v1 = record <9, 6, 5, 32>;
           %v2 = record <44, 0, 8, 0, 2, 2>;
           record <12, 0, 8, 1, 1, 1, 1, 8589934590, 1>;
         %b1:
           ret i32 %v2;
         }",
    ));
    for s in [
        "%c0 = i1 1; => <4, 2>",
        "%c1 = float nan(0x7fc00001);",
        "%c2 = double nan(0x7fffffffffffffff);",
        "%v0 = add i32 %p0, %p1; => <2, 5, 4, 0, 1>",
        "%v1 = icmp eq i32 %p0, %p1; => <9, 6, 5, 32>",
        "%v2 = call indirect i32 @f0(i32 %v0, i32 %v0);",
        "switch i32 %p0 {",
    ] {
        contains(&text, s);
    }
}

#[test]
fn unusual_widths_unknown_blocks_header_and_trailing_bytes() {
    let bytes = assemble(
        "Magic Number: 'PEXE' (80, 69, 88, 69)
         header <80, 69, 88, 69, 2, 0, 16, 0, 17, 0, 4, 0, 2, 0, 0, 0, 32, 0, 4, 0, 32, 0, 0, 0>;
         module { <3>
           version 1;
           block(99) { <4> %a0 = abbrev <5, array(char6)>; record <5, 97, 98>; <%a0> record <7>; }
           types { count 2; @t0 = void; @t1 = void (); }
           declare external void @f0();
           globals { count 0; }
         }
         trailing <0, 0>;",
    )
    .unwrap();
    let (text, _) = dis_any(&bytes);
    assert_eq!(assemble(&text).unwrap(), bytes);
    for s in [
        "header <80, 69, 88, 69, 2, 0, 16,",
        "module { <3>",
        "block(99) { <4>",
        "record <5, 97, 98>; <%a0>",
        "trailing <0, 0>;",
    ] {
        contains(&text, s);
    }
    let mut out = Vec::new();
    let stats = disassemble_with_stats(&bytes, &mut out).unwrap();
    assert_eq!(stats.overrides, 6);
}

#[test]
fn files_that_do_not_decode_still_round_trip() {
    // An unknown module record and an instruction whose operand does not exist.
    let bytes = assemble(&module(
        TYPES,
        "define internal void @f0(i32, i32); record <77, 1>;",
        "count 0;",
        "function void @f0(i32 %p0, i32 %p1) { blocks 1; %v0 = add i32 %v7, %p0; ret void; }",
    ))
    .unwrap();
    let (text, ok) = dis_any(&bytes);
    assert!(!ok, "the file should not decode");
    assert_eq!(assemble(&text).unwrap(), bytes);
    contains(&text, "record <77, 1>;");
    contains(&text, "record <2, 4294967289, 2, 0>;");
}

#[test]
fn broken_bitstreams_give_errors_not_panics() {
    let good = assemble(&module(
        TYPES,
        "define internal i32 @f0(i32, i32);",
        "count 0;",
        "function i32 @f0(i32 %p0, i32 %p1) { blocks 1; %v0 = add i32 %p0, %p1; ret i32 %v0; }",
    ))
    .unwrap();
    // Every truncation and every single-bit flip: no panic; a clean error or a dump.
    for len in 0..good.len() {
        let mut out = Vec::new();
        let _ = disassemble(&good[..len], &mut out);
    }
    for bit in 0..good.len() * 8 {
        let mut bad = good.clone();
        bad[bit / 8] ^= 1 << (bit % 8);
        let mut out = Vec::new();
        if disassemble(&bad, &mut out).is_ok() {
            // Whatever decodes must round-trip.
            let text = String::from_utf8(out).unwrap();
            assert_eq!(assemble(&text).unwrap(), bad, "bit {bit}");
        }
    }
    let _ = dis(&good);
}
