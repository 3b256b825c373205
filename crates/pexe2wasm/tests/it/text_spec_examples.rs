//! Formatting against the spec: each case assembles one of the dump examples of
//! pnacl-bitcode-files.rst (completed where the spec elides parts with `...`), disassembles
//! the result and checks that every line of the example appears in our dump, record column
//! and PNaClAsm column alike (only the bit positions differ, as the elided parts move them).
//!
//! The cases are data, in `tests/spec_examples.txt`: each `=== NAME` is followed by
//! `--- head`, `--- example`, one `--- fill` per `...` line of the example, and `--- tail`.

use pexe2wasm::text::{assemble, disassemble};

/// One example of the spec, completed.
struct Case<'a> {
    name: &'a str,
    head: String,
    example: String,
    /// What stands for each `...` line of the example.
    fills: Vec<String>,
    tail: String,
}

/// The cases of `spec_examples.txt`.
fn cases(text: &str) -> Vec<Case<'_>> {
    let mut cases = Vec::new();
    for chunk in text.split("=== ").filter(|c| !c.is_empty()) {
        let (name, rest) = chunk.split_once('\n').expect("a name line");
        let mut case = Case {
            name,
            head: String::new(),
            example: String::new(),
            fills: Vec::new(),
            tail: String::new(),
        };
        let mut part = None;
        for line in rest.split_inclusive('\n') {
            if let Some(kind) = line.strip_prefix("--- ") {
                let kind = kind.trim_end();
                if kind == "fill" {
                    case.fills.push(String::new());
                }
                part = Some(kind.to_string());
                continue;
            }
            let into = match part.as_deref() {
                Some("head") => &mut case.head,
                Some("example") => &mut case.example,
                Some("fill") => case.fills.last_mut().unwrap(),
                Some("tail") => &mut case.tail,
                other => panic!("{name}: a line outside a part ({other:?}): {line}"),
            };
            into.push_str(line);
        }
        cases.push(case);
    }
    cases
}

/// Everything after the first `|` of each line.
fn body(dump: &str) -> Vec<&str> {
    dump.lines()
        .map(|l| l.split_once('|').map_or(l, |(_, rest)| rest))
        .collect()
}

/// Assembles `head + example (with each `...` line replaced by the next fill) + tail`,
/// and checks the example's lines appear, in order, in the disassembly, and that the
/// disassembly assembles back to the same bits.
fn check(case: &Case<'_>) -> Result<(), String> {
    let mut program = case.head.clone();
    let mut fills = case.fills.iter();
    let mut segments: Vec<Vec<&str>> = vec![Vec::new()];
    for line in case.example.lines() {
        if line.trim() == "..." {
            program.push_str(fills.next().ok_or("no fill for a `...` line")?);
            segments.push(Vec::new());
        } else {
            program.push_str(line);
            program.push('\n');
            segments.last_mut().unwrap().extend(body(line));
        }
    }
    if fills.next().is_some() {
        return Err("more fills than `...` lines".into());
    }
    program.push_str(&case.tail);
    let bytes = assemble(&program).map_err(|e| format!("{e}\n{program}"))?;
    let mut out = Vec::new();
    disassemble(&bytes, &mut out).map_err(|e| format!("{e}\n{program}"))?;
    let text = String::from_utf8(out).unwrap();
    let got = body(&text);
    for seg in segments.iter().filter(|s| !s.is_empty()) {
        if !got.windows(seg.len()).any(|w| w == seg.as_slice()) {
            return Err(format!(
                "example lines not found in the disassembly:\n{}\n--- disassembly:\n{text}",
                seg.join("\n")
            ));
        }
    }
    if assemble(&text).map_err(|e| format!("the dump does not assemble: {e}"))? != bytes {
        return Err("the dump assembles to other bits".into());
    }
    Ok(())
}

#[test]
fn the_spec_examples_disassemble_as_the_spec_shows() {
    let cases = cases(include_str!("../spec_examples.txt"));
    assert_eq!(cases.len(), 29, "cases in spec_examples.txt");
    let failed: Vec<String> = cases
        .iter()
        .filter_map(|c| check(c).err().map(|e| format!("{}: {e}", c.name)))
        .collect();
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

#[test]
fn a_changed_example_line_is_found_missing() {
    // The check can fail: an example whose record column says other than the dump
    // (the PNaClAsm column, which is what assembles, unchanged).
    let text = include_str!("../spec_examples.txt");
    let mut case = cases(text).into_iter().next().unwrap();
    assert!(case.example.contains("3: <1, 14> "));
    case.example = case.example.replacen("3: <1, 14> ", "3: <1, 15> ", 1);
    let err = check(&case).unwrap_err();
    assert!(err.contains("not found"), "{err}");
}
