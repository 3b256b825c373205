//! Assembler errors: every mistake is reported with its line and column, and no input
//! makes the assembler panic.

use pexe2wasm::text::{assemble, AsmError};

const HEAD: &str = "module {
  version 1;
  types {
    count 3;
    @t0 = i32;
    @t1 = void;
    @t2 = i32 (i32);
  }
  define external i32 @f0(i32);
  globals {
    count 0;
  }
";

/// Assembles a function body after HEAD (line 13 is the `function` line), expecting an
/// error.
fn body_error(body: &str) -> AsmError {
    let text = format!("{HEAD}  function i32 @f0(i32 %p0) {{\n{body}\n  }}\n}}\n");
    assemble(&text).expect_err("the text should not assemble")
}

fn at(e: &AsmError, line: usize, column: usize, words: &str) {
    assert_eq!((e.line, e.column), (line, column), "{e}");
    assert!(e.message.contains(words), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("line {line}, column {column}: ")),
        "{e}"
    );
}

#[test]
fn unknown_instruction() {
    let e = body_error("    blocks 1;\n    %v0 = frobnicate i32 %p0;\n    ret i32 %v0;");
    at(&e, 15, 11, "expected an instruction, found 'frobnicate'");
}

#[test]
fn undefined_type() {
    let e = body_error("    blocks 1;\n    %v0 = load float* %p0, align 4;\n    ret i32 %v0;");
    at(&e, 15, 16, "type float is not defined in the types block");
}

#[test]
fn value_numbering_must_follow() {
    let e = body_error("    blocks 1;\n    %v1 = add i32 %p0, %p0;\n    ret i32 %v1;");
    at(&e, 15, 5, "%v0 (the next instruction value)");
}

#[test]
fn bad_alignment() {
    let e = body_error("    blocks 1;\n    %v0 = load i32* %p0, align 3;\n    ret i32 %v0;");
    at(&e, 15, 32, "alignment 3 is not a power of 2");
}

#[test]
fn unknown_abbreviation() {
    let e = body_error("    blocks 1;\n    ret i32 %p0; <@a0>");
    at(
        &e,
        15,
        19,
        "an abbreviation this block defines (0 global, 0 local)",
    );
}

#[test]
fn value_that_does_not_fit_its_abbreviation() {
    let e = body_error("    %a0 = abbrev <10, fixed(1)>;\n    blocks 1;\n    ret i32 @f0; <%a0>");
    at(&e, 16, 5, "does not fit fixed(1)");
}

#[test]
fn missing_punctuation() {
    let e = body_error("    blocks 1\n    ret i32 %p0;");
    at(&e, 15, 5, "expected ';', found 'ret'");
}

#[test]
fn unterminated_string_and_bad_characters() {
    let e = assemble("module {\n  valuesymtab {\n    @f0 : \"abc;\n  }\n}\n").unwrap_err();
    at(&e, 3, 11, "unterminated quoted text");
    let e = assemble("module {\n  version $1;\n}\n").unwrap_err();
    at(&e, 2, 11, "unexpected character '$'");
}

#[test]
fn unclosed_block() {
    let e = assemble("module {\n  version 1;\n").unwrap_err();
    at(&e, 3, 1, "1 block(s) not closed");
}

#[test]
fn header_after_block() {
    let e = assemble("module {\n}\nPNaCl Version: 2\n").unwrap_err();
    at(&e, 3, 1, "header lines must come before the first block");
}

#[test]
fn errors_in_a_dump_point_into_the_dump() {
    // In a three-column dump the column counts from the start of the dump line.
    let dump = "   16:0|1: <65535, 8, 2>             |module {  // BlockID = 8\n   \
                24:0|  3: <1, 1>                  |  versoin 1;\n";
    let e = assemble(dump).unwrap_err();
    at(&e, 2, 41, "found 'versoin'");
}

#[test]
fn no_input_makes_the_assembler_panic() {
    let text = format!(
        "{HEAD}  function i32 @f0(i32 %p0) {{
    blocks 2;
    constants {{ i32: %c0 = i32 -3; }}
    %v0 = add i32 %p0, %c0;
    switch i32 %v0 {{ default: br label %b1; i32 5: br label %b1; }}
  %b1:
    %v1 = phi i32 [%v0, %b0], [%c0, %b0];
    ret i32 %v1; => <10, 1>
  }}
}}
"
    );
    assert!(assemble(&text).is_ok());
    // Every prefix, and every text with one character removed or doubled.
    let chars: Vec<char> = text.chars().collect();
    for i in 0..chars.len() {
        let prefix: String = chars[..i].iter().collect();
        let _ = assemble(&prefix);
        let removed: String = chars[..i].iter().chain(&chars[i + 1..]).collect();
        let _ = assemble(&removed);
        let doubled: String = chars[..=i].iter().chain(&chars[i..]).collect();
        let _ = assemble(&doubled);
    }
    for junk in [
        "", "}", "{", "module", "module {", "<", "=> <>", "@", "%", "'", "\"", "...", "0x",
        "module { types { @t0 = <4 x <4 x <4 x <4 x <4 x <4 x <4 x <4 x <4 x <4 x i8>>>>>>>>>>; } }",
        "module { abbreviations { function: @a0 = abbrev <1, array(array(fixed(1)))>; } }",
        "module { block(4294967296) { } }",
        "module { types { <99> } }",
        "module { %a0 = abbrev <fixed(65)>; }",
        "module { version 18446744073709551616; }",
        "header <256>;",
    ] {
        let _ = assemble(junk);
    }
}
