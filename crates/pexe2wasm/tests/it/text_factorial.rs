//! The spec's two complete dumps: the factorial program and the abbreviations example.
//! Both are assembled from text, their bits are checked against the dumps' record columns,
//! and the disassembly is compared with the spec character for character.

use pexe2wasm::bitstream::{Cursor, Header, Kind};
use pexe2wasm::text::{assemble, disassemble};

/// The factorial dump (pnacl-bitcode-files.rst, "Factorial Example"), verbatim, trailing
/// spaces included.
const FACT_DUMP: &str = r#"    0:0|<65532, 80, 69, 88, 69, 1, 0,|Magic Number: 'PEXE' (80, 69, 88, 69)
       | 8, 0, 17, 0, 4, 0, 2, 0, 0, |PNaCl Version: 2
       | 0>                          |
   16:0|1: <65535, 8, 2>             |module {  // BlockID = 8
   24:0|  3: <1, 1>                  |  version 1;
   26:4|  1: <65535, 0, 2>           |  abbreviations {  // BlockID = 0
   36:0|  0: <65534>                 |  }
   40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
   48:0|    3: <1, 4>                |    count 4;
   50:4|    3: <7, 32>               |    @t0 = i32;
   53:6|    3: <2>                   |    @t1 = void;
   55:4|    3: <21, 0, 0, 0>         |    @t2 = i32 (i32);
   59:4|    3: <7, 1>                |    @t3 = i1;
   62:0|  0: <65534>                 |  }
   64:0|  3: <8, 2, 0, 0, 0>         |  define external i32 @f0(i32);
   68:6|  1: <65535, 19, 2>          |  globals {  // BlockID = 19
   76:0|    3: <5, 0>                |    count 0;
   78:4|  0: <65534>                 |  }
   80:0|  1: <65535, 14, 2>          |  valuesymtab {  // BlockID = 14
   88:0|    3: <1, 0, 102, 97, 99,   |    @f0 : "fact";
       |        116>                 |
   96:4|  0: <65534>                 |  }
  100:0|  1: <65535, 12, 2>          |  function i32 @f0(i32 %p0) {  
       |                             |                   // BlockID = 12
  108:0|    3: <1, 3>                |    blocks 3;
  110:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
  120:0|      3: <1, 0>              |      i32:
  122:4|      3: <4, 2>              |        %c0 = i32 1;
  125:0|    0: <65534>               |      }
       |                             |  %b0:
  128:0|    3: <28, 2, 1, 32>        |    %v0 = icmp eq i32 %p0, %c0;
  132:6|    3: <11, 1, 2, 1>         |    br i1 %v0, label %b1, label %b2;
       |                             |  %b1:
  136:6|    3: <10, 2>               |    ret i32 %c0;
       |                             |  %b2:
  139:2|    3: <2, 3, 2, 1>          |    %v1 = sub i32 %p0, %c0;
  143:2|    3: <34, 0, 5, 1>         |    %v2 = call i32 @f0(i32 %v1);
  148:0|    3: <2, 5, 1, 2>          |    %v3 = mul i32 %p0, %v2;
  152:0|    3: <10, 1>               |    ret i32 %v3;
  154:4|  0: <65534>                 |  }
  156:0|0: <65534>                   |}
"#;

/// The abbreviations example (pnacl-bitcode-files.rst, "Abbreviation Record"), verbatim.
const ABBREV_DUMP: &str = r#"    0:0|<65532, 80, 69, 88, 69, 1, 0,|Magic Number: 'PEXE' (80, 69, 88, 69)
       | 8, 0, 17, 0, 4, 0, 2, 0, 0, |PNaCl Version: 2
       | 0>                          |
   16:0|1: <65535, 8, 2>             |module {  // BlockID = 8
   24:0|  3: <1, 1>                  |  version 1;
   26:4|  1: <65535, 0, 2>           |  abbreviations {  // BlockID = 0
   36:0|    1: <1, 14>               |    valuesymtab:
   38:4|    2: <65533, 4, 0, 1, 3, 0,|      @a0 = abbrev <fixed(3), vbr(8), 
       |        2, 8, 0, 3, 0, 1, 8> |                   array(fixed(8))>;
   43:2|    2: <65533, 4, 1, 1, 0, 2,|      @a1 = abbrev <1, vbr(8), 
       |        8, 0, 3, 0, 1, 7>    |                   array(fixed(7))>;
   48:0|    2: <65533, 4, 1, 1, 0, 2,|      @a2 = abbrev <1, vbr(8), 
       |        8, 0, 3, 0, 4>       |                   array(char6)>;
   52:1|    2: <65533, 4, 1, 2, 0, 2,|      @a3 = abbrev <2, vbr(8), 
       |        8, 0, 3, 0, 4>       |                   array(char6)>;
   56:2|    1: <1, 11>               |    constants:
   58:6|    2: <65533, 2, 1, 1, 0, 1,|      @a0 = abbrev <1, fixed(2)>;
       |        2>                   |
   61:7|    2: <65533, 2, 1, 4, 0, 2,|      @a1 = abbrev <4, vbr(8)>;
       |        8>                   |
   65:0|    2: <65533, 2, 1, 4, 1, 0>|      @a2 = abbrev <4, 0>;
   68:1|    2: <65533, 2, 1, 6, 0, 2,|      @a3 = abbrev <6, vbr(8)>;
       |        8>                   |
   71:2|    1: <1, 12>               |    function:
   73:6|    2: <65533, 4, 1, 20, 0,  |      @a0 = abbrev <20, vbr(6), vbr(4),
       |        2, 6, 0, 2, 4, 0, 2, |                   vbr(4)>;
       |        4>                   |
   79:1|    2: <65533, 4, 1, 2, 0, 2,|      @a1 = abbrev <2, vbr(6), vbr(6), 
       |        6, 0, 2, 6, 0, 1, 4> |                   fixed(4)>;
   84:4|    2: <65533, 4, 1, 3, 0, 2,|      @a2 = abbrev <3, vbr(6), 
       |        6, 0, 1, 2, 0, 1, 4> |                   fixed(2), fixed(4)>;
   89:7|    2: <65533, 1, 1, 10>     |      @a3 = abbrev <10>;
   91:7|    2: <65533, 2, 1, 10, 0,  |      @a4 = abbrev <10, vbr(6)>;
       |        2, 6>                |
   95:0|    2: <65533, 1, 1, 15>     |      @a5 = abbrev <15>;
   97:0|    2: <65533, 3, 1, 43, 0,  |      @a6 = abbrev <43, vbr(6), 
       |        2, 6, 0, 1, 2>       |                   fixed(2)>;
  101:2|    2: <65533, 4, 1, 24, 0,  |      @a7 = abbrev <24, vbr(6), vbr(6),
       |        2, 6, 0, 2, 6, 0, 2, |                   vbr(4)>;
       |        4>                   |
  106:5|    1: <1, 19>               |    globals:
  109:1|    2: <65533, 3, 1, 0, 0, 2,|      @a0 = abbrev <0, vbr(6), 
       |        6, 0, 1, 1>          |                   fixed(1)>;
  113:3|    2: <65533, 2, 1, 1, 0, 2,|      @a1 = abbrev <1, vbr(8)>;
       |        8>                   |
  116:4|    2: <65533, 2, 1, 2, 0, 2,|      @a2 = abbrev <2, vbr(8)>;
       |        8>                   |
  119:5|    2: <65533, 3, 1, 3, 0, 3,|      @a3 = abbrev <3, array(fixed(8))>
       |        0, 1, 8>             |          ;
  123:2|    2: <65533, 2, 1, 4, 0, 2,|      @a4 = abbrev <4, vbr(6)>;
       |        6>                   |
  126:3|    2: <65533, 3, 1, 4, 0, 2,|      @a5 = abbrev <4, vbr(6), vbr(6)>;
       |        6, 0, 2, 6>          |
  130:5|  0: <65534>                 |  }
  132:0|  1: <65535, 17, 3>          |  types {  // BlockID = 17
  140:0|    2: <65533, 4, 1, 21, 0,  |    %a0 = abbrev <21, fixed(1), 
       |        1, 1, 0, 3, 0, 1, 2> |                  array(fixed(2))>;
  144:7|    3: <1, 3>                |    count 3;
  147:4|    3: <7, 32>               |    @t0 = i32;
  150:7|    4: <21, 0, 0, 0, 0>      |    @t1 = i32 (i32, i32); <%a0>
  152:7|    3: <2>                   |    @t2 = void;
  154:6|  0: <65534>                 |  }
  156:0|  3: <8, 1, 0, 0, 0>         |  define external i32 @f0(i32, i32);
  160:6|  1: <65535, 19, 4>          |  globals {  // BlockID = 19
  168:0|    3: <5, 0>                |    count 0;
  170:6|  0: <65534>                 |  }
  172:0|  1: <65535, 14, 3>          |  valuesymtab {  // BlockID = 14
  180:0|    6: <1, 0, 102>           |    @f0 : "f"; <@a2>
  182:7|  0: <65534>                 |  }
  184:0|  1: <65535, 12, 4>          |  function i32 @f0(i32 %p0, i32 %p1) { 
       |                             |                   // BlockID = 12
  192:0|    3: <1, 1>                |    blocks 1;
       |                             |  %b0:
  194:6|    5: <2, 2, 1, 0>          |    %v0 = add i32 %p0, %p1; <@a1>
  197:2|    5: <2, 3, 1, 0>          |    %v1 = add i32 %p0, %v0; <@a1>
  199:6|    8: <10, 1>               |    ret i32 %v1; <@a4>
  201:0|  0: <65534>                 |  }
  204:0|0: <65534>                   |}
"#;

/// The factorial program written by hand in PNaClAsm.
const FACT_ASM: &str = r#"
module {
  version 1;
  abbreviations {
  }
  types {
    count 4;
    @t0 = i32;
    @t1 = void;
    @t2 = i32 (i32);
    @t3 = i1;
  }
  define external i32 @f0(i32);
  globals {
    count 0;
  }
  valuesymtab {
    @f0 : "fact";
  }
  function i32 @f0(i32 %p0) {
    blocks 3;
    constants {
      i32:
        %c0 = i32 1;
    }
  %b0:
    %v0 = icmp eq i32 %p0, %c0;
    br i1 %v0, label %b1, label %b2;
  %b1:
    ret i32 %c0;
  %b2:
    %v1 = sub i32 %p0, %c0;
    %v2 = call i32 @f0(i32 %v1);
    %v3 = mul i32 %p0, %v2;
    ret i32 %v3;
  }
}
"#;

/// The records of a dump's middle column: (bit, abbreviation index, values).
fn dump_records(dump: &str) -> Vec<(u64, Option<u64>, Vec<u64>)> {
    let mut out: Vec<(u64, Option<u64>, Vec<u64>)> = Vec::new();
    let mut text = String::new();
    let mut bit = 0;
    for line in dump.lines() {
        let mut cols = line.splitn(3, '|');
        let (label, rec) = (cols.next().unwrap().trim(), cols.next().unwrap_or(""));
        if !label.is_empty() {
            let (b, n) = label.split_once(':').unwrap();
            bit = b.parse::<u64>().unwrap() * 8 + n.parse::<u64>().unwrap();
            text.clear();
        }
        text.push_str(rec);
        if rec.trim_end().ends_with('>') {
            let (idx, vals) = match text.split_once(':') {
                Some((i, v)) if !i.contains('<') => (Some(i.trim().parse().unwrap()), v),
                _ => (None, text.as_str()),
            };
            let vals = vals.trim().trim_start_matches('<').trim_end_matches('>');
            let vals = vals.split(',').map(|v| v.trim().parse().unwrap()).collect();
            out.push((bit, idx, vals));
            text.clear();
        }
    }
    out
}

/// The records a cursor reads, in the dump's form.
fn read_records(bytes: &[u8]) -> Vec<(u64, Option<u64>, Vec<u64>)> {
    let h = Header::parse(bytes).unwrap();
    let mut out = vec![(
        0,
        None,
        std::iter::once(65532)
            .chain(bytes[..h.size].iter().map(|&b| b as u64))
            .collect(),
    )];
    let mut cur = Cursor::new(bytes, h.size);
    let mut buf = Vec::new();
    while let Some((bit, kind)) = cur.next_into(&mut buf).unwrap() {
        out.push(match kind {
            Kind::EnterBlock {
                block_id,
                abbrev_width,
            } => (
                bit,
                Some(1),
                vec![65535, block_id as u64, abbrev_width as u64],
            ),
            Kind::EndBlock => (bit, Some(0), vec![65534]),
            Kind::DefineAbbrev => {
                let a = cur.scopes().arena.last().unwrap();
                let mut v = vec![65533, a.ops.len() as u64];
                for op in &a.ops {
                    use pexe2wasm::bitstream::AbbrevOp::*;
                    match *op {
                        Literal(x) => v.extend([1, x]),
                        Fixed(w) => v.extend([0, 1, w as u64]),
                        Vbr(w) => v.extend([0, 2, w as u64]),
                        Array => v.extend([0, 3]),
                        Char6 => v.extend([0, 4]),
                    }
                }
                (bit, Some(2), v)
            }
            Kind::Record { abbrev_id } => {
                // pnacl-bcdis shows SETBID (the only record of block 0) with index 1.
                let shown = if cur.scopes().current_block() == Some(0) {
                    1
                } else {
                    abbrev_id
                };
                (bit, Some(shown as u64), buf.clone())
            }
        });
    }
    out
}

fn dis(bytes: &[u8]) -> String {
    let mut out = Vec::new();
    disassemble(bytes, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Prints the first differing line, for readable failures.
fn assert_same_text(got: &str, want: &str) {
    if got != want {
        for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
            assert_eq!(g, w, "first difference at line {}", i + 1);
        }
        assert_eq!(
            got.lines().count(),
            want.lines().count(),
            "line counts differ"
        );
        assert_eq!(got, want);
    }
}

#[test]
fn factorial_assembles_to_the_dumped_records() {
    let bytes = assemble(FACT_ASM).unwrap();
    assert_eq!(bytes.len(), 160);
    assert_eq!(&bytes[..4], b"PEXE");
    assert_eq!(read_records(&bytes), dump_records(FACT_DUMP));
}

#[test]
fn factorial_dump_assembles_to_the_same_bytes() {
    assert_eq!(assemble(FACT_DUMP).unwrap(), assemble(FACT_ASM).unwrap());
}

#[test]
fn factorial_disassembles_like_the_spec() {
    let bytes = assemble(FACT_ASM).unwrap();
    assert_same_text(&dis(&bytes), FACT_DUMP);
}

#[test]
fn abbreviations_example_assembles_to_the_dumped_records() {
    let bytes = assemble(ABBREV_DUMP).unwrap();
    assert_eq!(bytes.len(), 208);
    assert_eq!(read_records(&bytes), dump_records(ABBREV_DUMP));
}

#[test]
fn abbreviations_example_round_trips() {
    let bytes = assemble(ABBREV_DUMP).unwrap();
    let text = dis(&bytes);
    assert_eq!(assemble(&text).unwrap(), bytes);
    assert_same_text(&text, ABBREV_DUMP);
}
