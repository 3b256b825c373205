//! Formatting against the spec: each case assembles one of the dump examples of
//! pnacl-bitcode-files.rst (completed where the spec elides parts with `...`), disassembles
//! the result and checks that every line of the example appears in our dump, record column
//! and PNaClAsm column alike (only the bit positions differ, as the elided parts move them).

use pexe2wasm::text::{assemble, disassemble};

/// Everything after the first `|` of each line.
fn body(dump: &str) -> Vec<&str> {
    dump.lines()
        .map(|l| l.split_once('|').map_or(l, |(_, rest)| rest))
        .collect()
}

/// Assembles `head + example (with each `...` line replaced by the next fill) + tail`,
/// and checks the example's lines appear, in order, in the disassembly.
fn check(example: &str, head: &str, fills: &[&str], tail: &str) {
    let mut program = String::from(head);
    let mut fills = fills.iter();
    let mut segments: Vec<Vec<&str>> = vec![Vec::new()];
    for line in example.lines() {
        if line.trim() == "..." {
            program.push_str(fills.next().expect("a fill for each ..."));
            segments.push(Vec::new());
        } else {
            program.push_str(line);
            program.push('\n');
            segments.last_mut().unwrap().extend(body(line));
        }
    }
    program.push_str(tail);
    let bytes = assemble(&program).unwrap_or_else(|e| panic!("{e}\n{program}"));
    let mut out = Vec::new();
    disassemble(&bytes, &mut out).unwrap_or_else(|e| panic!("{e}\n{program}"));
    let text = String::from_utf8(out).unwrap();
    let got = body(&text);
    for seg in segments.iter().filter(|s| !s.is_empty()) {
        let found = got.windows(seg.len()).any(|w| w == seg.as_slice());
        assert!(
            found,
            "example lines not found in the disassembly:\n{}\n--- disassembly:\n{text}",
            seg.join("\n")
        );
    }
    // And the dump assembles back to the same bits.
    assert_eq!(assemble(&text).unwrap(), bytes);
}

#[test]
fn vector_types() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 14>               |    count 14;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <7, 1>                |    @t1 = i1;
      56:2|    3: <2>                   |    @t2 = void;
      58:0|    3: <12, 4, 1>            |    @t3 = <4 x i1>;
      61:2|    3: <12, 8, 1>            |    @t4 = <8 x i1>;
      64:4|    3: <12, 16, 1>           |    @t5 = <16 x i1>;
      67:6|    3: <7, 8>                |    @t6 = i8;
      70:2|    3: <12, 16, 6>           |    @t7 = <16 x i8>;
      73:4|    3: <7, 16>               |    @t8 = i16;
      76:0|    3: <12, 8, 8>            |    @t9 = <8 x i16>;
      79:2|    3: <12, 4, 0>            |    @t10 = <4 x i32>;
      82:4|    3: <3>                   |    @t11 = float;
      84:2|    3: <12, 4, 11>           |    @t12 = <4 x float>;
      87:4|    3: <21, 0, 2>            |    @t13 = void ();
      90:6|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_VECTOR_TYPES,
        &[],
        r#"  globals {
    count 0;
  }
}
"#,
    );
}
const HEAD_VECTOR_TYPES: &str = r#"module {
  version 1;
"#;

#[test]
fn function_types() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 7>                |    count 7;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <3>                   |    @t1 = float;
      55:4|    3: <4>                   |    @t2 = double;
      57:2|    3: <21, 0, 2, 1>         |    @t3 = double (float);
      61:2|    3: <2>                   |    @t4 = void;
      63:0|    3: <21, 0, 4>            |    @t5 = void ();
      66:2|    3: <21, 0, 0, 0, 1, 0, 2>|    @t6 = 
          |                             |        i32 (i32, float, i32, double);
      72:4|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_FUNCTION_TYPES,
        &[],
        r#"  globals {
    count 0;
  }
}
"#,
    );
}
const HEAD_FUNCTION_TYPES: &str = r#"module {
  version 1;
"#;

#[test]
fn data_and_compound_initializers() {
    const EXAMPLE: &str = r#"   56:0|  3: <8, 1, 0, 1, 0>         |  declare external void @f0();
   60:6|  1: <65535, 19, 2>          |  globals {  // BlockID = 19
   68:0|    3: <5, 2>                |    count 2;
   70:4|    3: <0, 1, 1>             |    const @g0, align 1,
   73:6|    3: <3, 1, 2, 97, 36, 44, |      {  1,   2,  97,  36,  44,  88, 
       |        88, 44, 50>          |        44,  50}
   86:0|    3: <0, 1, 1>             |    const @g1, align 1,
   89:2|    3: <1, 3>                |      initializers 3 {
   91:6|    3: <3, 1, 2, 3, 4>       |        {  1,   2,   3,   4}
   96:4|    3: <4, 0>                |        reloc @f0;
   99:0|    3: <3, 99, 66, 22, 12>   |        { 99,  66,  22,  12}
       |                             |      }
  105:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_DATA_AND_COMPOUND_INITIALIZERS,
        &[],
        r#"}
"#,
    );
}
const HEAD_DATA_AND_COMPOUND_INITIALIZERS: &str = r#"module {
  version 1;
  types {
    count 2;
    @t0 = void;
    @t1 = void ();
  }
"#;

#[test]
fn relocations() {
    const EXAMPLE: &str = r#"  40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
  48:0|    3: <1, 2>                |    count 2;
  50:4|    3: <2>                   |    @t0 = void;
  52:2|    3: <21, 0, 0>            |    @t1 = void ();
  55:4|  0: <65534>                 |  }
  56:0|  3: <8, 1, 0, 1, 0>         |  declare external void @f0();
  60:6|  1: <65535, 19, 2>          |  globals {  // BlockID = 19
  68:0|    3: <5, 2>                |    count 2;
  70:4|    3: <0, 1, 0>             |    var @g0, align 1,
  73:6|    3: <1, 3>                |      initializers 3 {
  76:2|    3: <4, 0>                |        reloc @f0;
  78:6|    3: <4, 1>                |        reloc @g0;
  81:2|    3: <4, 2>                |        reloc @g1;
      |                             |      }
  83:6|    3: <0, 3, 0>             |    var @g1, align 4,
  87:0|    3: <2, 4>                |      zerofill 4;
  89:4|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_RELOCATIONS,
        &[],
        r#"}
"#,
    );
}
const HEAD_RELOCATIONS: &str = r#"module {
  version 1;
"#;

#[test]
fn subfield_relocations() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 0>                |    count 0;
      50:4|  0: <65534>                 |  }
      52:0|  1: <65535, 19, 2>          |  globals {  // BlockID = 19
      60:0|    3: <5, 3>                |    count 3;
      62:4|    3: <0, 1, 0>             |    var @g0, align 1,
      65:6|    3: <1, 3>                |      initializers 3 {
      68:2|    3: <4, 0, 1>             |        reloc @g0 + 1;
      71:4|    3: <4, 1, 4294967295>    |        reloc @g1 - 1;
      79:2|    3: <4, 2, 4>             |        reloc @g2 + 4;
          |                             |      }
      82:4|    3: <0, 3, 0>             |    var @g1, align 4,
      85:6|    3: <2, 4>                |      zerofill 4;
      88:2|    3: <0, 3, 0>             |    var @g2, align 4,
      91:4|    3: <2, 8>                |      zerofill 8;
      94:0|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_SUBFIELD_RELOCATIONS,
        &[],
        r#"}
"#,
    );
}
const HEAD_SUBFIELD_RELOCATIONS: &str = r#"module {
  version 1;
"#;

#[test]
fn compound_initializers() {
    const EXAMPLE: &str = r#"  40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
  48:0|    3: <1, 0>                |    count 0;
  50:4|  0: <65534>                 |  }
  52:0|  1: <65535, 19, 2>          |  globals {  // BlockID = 19
  60:0|    3: <5, 2>                |    count 2;
  62:4|    3: <0, 0, 1>             |    const @g0, align 0,
  65:6|    3: <1, 2>                |      initializers 2 {
  68:2|    3: <2, 8>                |        zerofill 8;
  70:6|    3: <3, 3, 2, 1, 0>       |        {  3,   2,   1,   0}
      |                             |      }
  75:4|    3: <0, 0, 0>             |    var @g1, align 0,
  78:6|    3: <1, 2>                |      initializers 2 {
  81:2|    3: <3, 1, 2, 3, 4>       |        {  1,   2,   3,   4}
  86:0|    3: <2, 2>                |        zerofill 2;
      |                             |      }
  88:4|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_COMPOUND_INITIALIZERS,
        &[],
        r#"}
"#,
    );
}
const HEAD_COMPOUND_INITIALIZERS: &str = r#"module {
  version 1;
"#;

#[test]
fn module_symbol_table() {
    const EXAMPLE: &str = r#"      72:0|  3: <8, 4, 0, 1, 0>         |  declare external 
          |                             |      void @f0(i32, i32, i32, i32, i1);
      76:6|  3: <8, 4, 0, 1, 0>         |  declare external 
          |                             |      void @f1(i32, i32, i32, i32, i1);
      81:4|  3: <8, 5, 0, 0, 0>         |  define external void @f2(i32);
      86:2|  1: <65535, 19, 2>          |  globals {  // BlockID = 19
      92:0|    3: <5, 0>                |    count 0;
      94:4|  0: <65534>                 |  }
      96:0|  1: <65535, 14, 2>          |  valuesymtab {  // BlockID = 14
     104:0|    3: <1, 1, 108, 108, 118, |    @f1 : "llvm.memmove.p0i8.p0i8.i32";
          |        109, 46, 109, 101,   |
          |        109, 109, 111, 118,  |
          |        101, 46, 112, 48,    |
          |        105, 56, 46, 112, 48,|
          |        105, 56, 46, 105, 51,|
          |        50>                  |
     145:4|    3: <1, 2, 95, 115, 116,  |    @f2 : "_start";
          |        97, 114, 116>        |
     157:0|    3: <1, 0, 108, 108, 118, |    @f0 : "llvm.memcpy.p0i8.p0i8.i32";
          |        109, 46, 109, 101,   |
          |        109, 99, 112, 121,   |
          |        46, 112, 48, 105, 56,|
          |        46, 112, 48, 105, 56,|
          |        46, 105, 51, 50>     |
     197:0|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_MODULE_SYMBOL_TABLE,
        &[],
        r#"  function void @f2(i32 %p0) {
    blocks 1;
    ret void;
  }
}
"#,
    );
}
const HEAD_MODULE_SYMBOL_TABLE: &str = r#"module {
  version 1;
  types {
    count 6;
    @t0 = i32;
    @t1 = i1;
    @t2 = void;
    @t3 = i8;
    @t4 = void (i32, i32, i32, i32, i1);
    @t5 = void (i32);
  }
"#;

#[test]
fn float_constants() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 4>                |    count 4;
      50:4|    3: <3>                   |    @t0 = float;
      52:2|    3: <4>                   |    @t1 = double;
      54:0|    3: <2>                   |    @t2 = void;
      55:6|    3: <21, 0, 2>            |    @t3 = void ();
      59:0|  0: <65534>                 |  }
      ...
     102:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     112:0|      3: <1, 0>              |      float:
     114:4|      3: <6, 0>              |        %c0 = float 0;
     117:0|      3: <6, 1065353216>     |        %c1 = float 1;
     123:2|      3: <6, 1088421888>     |        %c2 = float 7;
     130:2|      3: <6, 1090519040>     |        %c3 = float 8;
     137:2|      3: <3>                 |        %c4 = float undef;
     139:0|      3: <6, 2143289344>     |        %c5 = float nan;
     146:0|      3: <6, 2139095040>     |        %c6 = float inf;
     153:0|      3: <6, 4286578688>     |        %c7 = float -inf;
     160:0|      3: <1, 1>              |      double:
     162:4|      3: <6,                 |        %c8 = double 1;
          |        4607182418800017408> |
     174:0|      3: <6, 0>              |        %c9 = double 0;
     176:4|      3: <6,                 |        %c10 = double 5;
          |        4617315517961601024> |
     188:0|      3: <6,                 |        %c11 = double 6;
          |        4618441417868443648> |
     199:4|      3: <6,                 |        %c12 = double nan;
          |        9221120237041090560> |
     211:0|      3: <6,                 |        %c13 = double inf;
          |        9218868437227405312> |
     222:4|      3: <6,                 |        %c14 = double -inf;
          |        18442240474082181120>|
     234:0|    0: <65534>               |      }
"#;
    check(
        EXAMPLE,
        HEAD_FLOAT_CONSTANTS,
        &[r#"  define external void @f0();
  globals {
    count 0;
  }
  function void @f0() {
    blocks 1;
"#],
        r#"    ret void;
  }
}
"#,
    );
}
const HEAD_FLOAT_CONSTANTS: &str = r#"module {
  version 1;
"#;

#[test]
fn function_headers() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 4>                |    count 4;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <2>                   |    @t1 = void;
      55:4|    3: <21, 0, 1>            |    @t2 = void ();
      58:6|    3: <21, 0, 0, 0>         |    @t3 = i32 (i32);
      62:6|  0: <65534>                 |  }
      ...
     104:0|  1: <65535, 12, 2>          |  function void @f0() {  
          |                             |                   // BlockID = 12
     112:0|    3: <1, 1>                |    blocks 1;
          |                             |  %b0:
     114:4|    3: <10>                  |    ret void;
     116:2|  0: <65534>                 |  }
     120:0|  1: <65535, 12, 2>          |  function i32 @f1(i32 %p0) {  
          |                             |                   // BlockID = 12
     128:0|    3: <1, 1>                |    blocks 1;
          |                             |  %b0:
     130:4|    3: <10, 1>               |    ret i32 %p0;
     133:0|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_FUNCTION_HEADERS,
        &[r#"  define external void @f0();
  define external i32 @f1(i32);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_FUNCTION_HEADERS: &str = r#"module {
  version 1;
"#;

#[test]
fn branches() {
    const EXAMPLE: &str = r#"      92:0|  1: <65535, 12, 2>          |  function void @f0() {  
          |                             |                   // BlockID = 12
     100:0|    3: <1, 5>                |    blocks 5;
     102:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     112:0|      3: <1, 1>              |      i1:
     114:4|      3: <4, 3>              |        %c0 = i1 1;
     117:0|      3: <4, 0>              |        %c1 = i1 0;
     119:4|    0: <65534>               |      }
          |                             |  %b0:
     120:0|    3: <11, 3>               |    br label %b3;
          |                             |  %b1:
     122:4|    3: <11, 2, 4, 2>         |    br i1 %c0, label %b2, label %b4;
          |                             |  %b2:
     126:4|    3: <11, 3>               |    br label %b3;
          |                             |  %b3:
     129:0|    3: <10>                  |    ret void;
          |                             |  %b4:
     130:6|    3: <11, 2, 3, 1>         |    br i1 %c1, label %b2, label %b3;
     134:6|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_BRANCHES,
        &[],
        r#"}
"#,
    );
}
const HEAD_BRANCHES: &str = r#"module {
  version 1;
  types {
    count 3;
    @t0 = void;
    @t1 = i1;
    @t2 = void ();
  }
  define external void @f0();
  globals {
    count 0;
  }
"#;

#[test]
fn unreachable() {
    const EXAMPLE: &str = r#"     108:0|  1: <65535, 12, 2>          |  function void @f0(i32 %p0) {  
          |                             |                   // BlockID = 12
     116:0|    3: <1, 5>                |    blocks 5;
     118:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     128:0|      3: <1, 2>              |      i1:
     130:4|      3: <4, 3>              |        %c0 = i1 1;
     133:0|      3: <4, 0>              |        %c1 = i1 0;
     135:4|    0: <65534>               |      }
          |                             |  %b0:
     136:0|    3: <11, 1, 2, 2>         |    br i1 %c0, label %b1, label %b2;
          |                             |  %b1:
     140:0|    3: <11, 3, 4, 1>         |    br i1 %c1, label %b3, label %b4;
          |                             |  %b2:
     144:0|    3: <15>                  |    unreachable;
          |                             |  %b3:
     145:6|    3: <15>                  |    unreachable;
          |                             |  %b4:
     147:4|    3: <10>                  |    ret void;
     149:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_UNREACHABLE,
        &[],
        r#"}
"#,
    );
}
const HEAD_UNREACHABLE: &str = r#"module {
  version 1;
  types {
    count 4;
    @t0 = i32;
    @t1 = void;
    @t2 = i1;
    @t3 = void (i32);
  }
  define external void @f0(i32);
  globals {
    count 0;
  }
"#;

#[test]
fn switch() {
    const EXAMPLE: &str = r#"     116:0|  1: <65535, 12, 2>          |  function void @f0(i32 %p0) {  
          |                             |                   // BlockID = 12
     124:0|    3: <1, 6>                |    blocks 6;
          |                             |  %b0:
     126:4|    3: <12, 1, 1, 2, 4, 1, 1,|    switch i32 %p0 {
          |        2, 3, 1, 1, 4, 3, 1, |      default: br label %b2;
          |        1, 8, 4, 1, 1, 10, 4>|      i32 1: br label %b3;
          |                             |      i32 2: br label %b3;
          |                             |      i32 4: br label %b4;
          |                             |      i32 5: br label %b4;
          |                             |    }
          |                             |  %b1:
     143:2|    3: <11, 5>               |    br label %b5;
          |                             |  %b2:
     145:6|    3: <11, 5>               |    br label %b5;
          |                             |  %b3:
     148:2|    3: <11, 5>               |    br label %b5;
          |                             |  %b4:
     150:6|    3: <11, 5>               |    br label %b5;
          |                             |  %b5:
     153:2|    3: <10>                  |    ret void;
     155:0|  0: <65534>                 |  }
     156:0|  1: <65535, 12, 2>          |  function void @f1(i64 %p0) {  
          |                             |                   // BlockID = 12
     164:0|    3: <1, 6>                |    blocks 6;
          |                             |  %b0:
     166:4|    3: <12, 2, 1, 2, 4, 1, 1,|    switch i64 %p0 {
          |        2, 3, 1, 1, 4, 3, 1, |      default: br label %b2;
          |        1, 8, 4, 1, 1,       |      i64 1: br label %b3;
          |        39777555332, 4>      |      i64 2: br label %b3;
          |                             |      i64 4: br label %b4;
          |                             |      i64 19888777666: br label %b4;
          |                             |    }
          |                             |  %b1:
     188:4|    3: <11, 5>               |    br label %b5;
          |                             |  %b2:
     191:0|    3: <11, 5>               |    br label %b5;
          |                             |  %b3:
     193:4|    3: <11, 5>               |    br label %b5;
          |                             |  %b4:
     196:0|    3: <11, 5>               |    br label %b5;
          |                             |  %b5:
     198:4|    3: <10>                  |    ret void;
     200:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_SWITCH,
        &[],
        r#"}
"#,
    );
}
const HEAD_SWITCH: &str = r#"module {
  version 1;
  types {
    count 5;
    @t0 = void;
    @t1 = i32;
    @t2 = i64;
    @t3 = void (i32);
    @t4 = void (i64);
  }
  define external void @f0(i32);
  define external void @f1(i64);
  globals {
    count 0;
  }
"#;

#[test]
fn fadd_header_wraps() {
    const EXAMPLE: &str = r#"   92:0|  1: <65535, 12, 2>          |  function 
       |                             |      float @f0(float %p0, float %p1) {
       |                             |                    // BlockID = 12
  100:0|    3: <1, 1>                |    blocks 1;
       |                             |  %b0:
  102:4|    3: <2, 2, 1, 0>          |    %v0 = fadd float %p0, %p1;
  106:4|    3: <2, 3, 1, 0>          |    %v1 = fadd float %p0, %v0;
  110:4|    3: <10, 1>               |    ret float %v1;
  113:0|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_FADD_HEADER_WRAPS,
        &[],
        r#"}
"#,
    );
}
const HEAD_FADD_HEADER_WRAPS: &str = r#"module {
  version 1;
  types {
    count 3;
    @t0 = float;
    @t1 = void;
    @t2 = float (float, float);
  }
  define external float @f0(float, float);
  globals {
    count 0;
  }
"#;

#[test]
fn alloca() {
    const EXAMPLE: &str = r#"     112:0|  1: <65535, 12, 2>          |  function void @f1() {  
          |                             |                   // BlockID = 12
     120:0|    3: <1, 1>                |    blocks 1;
     122:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     132:0|      3: <1, 0>              |      i32:
     134:4|      3: <4, 4>              |        %c0 = i32 2;
     137:0|      3: <4, 8>              |        %c1 = i32 4;
     139:4|      3: <4, 16>             |        %c2 = i32 8;
     142:0|    0: <65534>               |      }
          |                             |  %b0:
     144:0|    3: <19, 3, 1>            |    %v0 = alloca i8, i32 %c0, align 1;
     147:2|    3: <19, 3, 3>            |    %v1 = alloca i8, i32 %c1, align 4;
     150:4|    3: <19, 3, 4>            |    %v2 = alloca i8, i32 %c2, align 8;
     153:6|    3: <10>                  |    ret void;
     155:4|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_ALLOCA,
        &[],
        r#"}
"#,
    );
}
const HEAD_ALLOCA: &str = r#"module {
  version 1;
  types {
    count 4;
    @t0 = i32;
    @t1 = void;
    @t2 = void ();
    @t3 = i8;
  }
  define external void @f0();
  define external void @f1();
  globals {
    count 0;
  }
  function void @f0() {
    blocks 1;
    ret void;
  }
"#;

#[test]
fn store_wraps() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 4>                |    count 4;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <2>                   |    @t1 = void;
      55:4|    3: <4>                   |    @t2 = double;
      57:2|    3: <21, 0, 1, 0, 0, 0, 2>|    @t3 = void (i32, i32, i32, double);
      63:4|  0: <65534>                 |  }
      ...
      96:0|  1: <65535, 12, 2>          |  function 
          |                             |      void 
          |                             |      @f0(i32 %p0, i32 %p1, i32 %p2, 
          |                             |          double %p3) {  
          |                             |                   // BlockID = 12
     104:0|    3: <1, 1>                |    blocks 1;
          |                             |  %b0:
     106:4|    3: <24, 4, 3, 1>         |    store i32 %p1, i32* %p0, align 1;
     110:4|    3: <24, 2, 1, 4>         |    store double %p3, double* %p2, 
          |                             |        align 8;
     114:4|    3: <10>                  |    ret void;
     116:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_STORE_WRAPS,
        &[r#"  define external void @f0(i32, i32, i32, double);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_STORE_WRAPS: &str = r#"module {
  version 1;
"#;

#[test]
fn zext() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 5>                |    count 5;
      50:4|    3: <7, 64>               |    @t0 = i64;
      53:6|    3: <7, 32>               |    @t1 = i32;
      57:0|    3: <21, 0, 0>            |    @t2 = i64 ();
      60:2|    3: <7, 8>                |    @t3 = i8;
      62:6|    3: <2>                   |    @t4 = void;
      64:4|  0: <65534>                 |  }
      ...
     100:0|  1: <65535, 12, 2>          |  function i64 @f0() {  // BlockID = 12
     108:0|    3: <1, 1>                |    blocks 1;
     110:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     120:0|      3: <1, 3>              |      i8:
     122:4|      3: <4, 2>              |        %c0 = i8 1;
     125:0|    0: <65534>               |      }
          |                             |  %b0:
     128:0|    3: <3, 1, 1, 1>          |    %v0 = zext i8 %c0 to i32;
     132:0|    3: <3, 1, 0, 1>          |    %v1 = zext i32 %v0 to i64;
     136:0|    3: <10, 1>               |    ret i64 %v1;
     138:4|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_ZEXT,
        &[r#"  define external i64 @f0();
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_ZEXT: &str = r#"module {
  version 1;
"#;

#[test]
fn fptoui() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 6>                |    count 6;
      50:4|    3: <3>                   |    @t0 = float;
      52:2|    3: <4>                   |    @t1 = double;
      54:0|    3: <2>                   |    @t2 = void;
      55:6|    3: <21, 0, 2, 0, 1>      |    @t3 = void (float, double);
      60:4|    3: <7, 32>               |    @t4 = i32;
      63:6|    3: <7, 16>               |    @t5 = i16;
      66:2|  0: <65534>                 |  }
      ...
     100:0|  1: <65535, 12, 2>          |  function 
          |                             |      void @f0(float %p0, double %p1) {
          |                             |                    // BlockID = 12
     108:0|    3: <1, 1>                |    blocks 1;
          |                             |  %b0:
     110:4|    3: <3, 2, 4, 3>          |    %v0 = fptoui float %p0 to i32;
     114:4|    3: <3, 2, 5, 3>          |    %v1 = fptoui double %p1 to i16;
     118:4|    3: <10>                  |    ret void;
     120:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_FPTOUI,
        &[r#"  define external void @f0(float, double);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_FPTOUI: &str = r#"module {
  version 1;
"#;

#[test]
fn bitcast_header_wraps() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 6>                |    count 6;
      50:4|    3: <3>                   |    @t0 = float;
      52:2|    3: <7, 64>               |    @t1 = i64;
      55:4|    3: <2>                   |    @t2 = void;
      57:2|    3: <21, 0, 2, 0, 1>      |    @t3 = void (float, i64);
      62:0|    3: <7, 32>               |    @t4 = i32;
      65:2|    3: <4>                   |    @t5 = double;
      67:0|  0: <65534>                 |  }
      ...
     100:0|  1: <65535, 12, 2>          |  function void @f0(float %p0, i64 %p1)
          |                             |      {  // BlockID = 12
     108:0|    3: <1, 1>                |    blocks 1;
          |                             |  %b0:
     110:4|    3: <3, 2, 4, 11>         |    %v0 = bitcast float %p0 to i32;
     114:4|    3: <3, 2, 5, 11>         |    %v1 = bitcast i64 %p1 to double;
     118:4|    3: <10>                  |    ret void;
     120:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_BITCAST_HEADER_WRAPS,
        &[r#"  define external void @f0(float, i64);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_BITCAST_HEADER_WRAPS: &str = r#"module {
  version 1;
"#;

#[test]
fn icmp() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 4>                |    count 4;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <7, 1>                |    @t1 = i1;
      56:2|    3: <2>                   |    @t2 = void;
      58:0|    3: <21, 0, 2>            |    @t3 = void ();
      61:2|  0: <65534>                 |  }
      ...
     108:0|  1: <65535, 12, 2>          |  function void @f0() {  
          |                             |                   // BlockID = 12
     116:0|    3: <1, 1>                |    blocks 1;
     118:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     128:0|      3: <1, 0>              |      i32:
     130:4|      3: <4, 0>              |        %c0 = i32 0;
     133:0|      3: <4, 2>              |        %c1 = i32 1;
     135:4|    0: <65534>               |      }
          |                             |  %b0:
     136:0|    3: <28, 2, 1, 32>        |    %v0 = icmp eq i32 %c0, %c1;
     140:6|    3: <28, 3, 2, 33>        |    %v1 = icmp ne i32 %c0, %c1;
     145:4|    3: <28, 4, 3, 34>        |    %v2 = icmp ugt i32 %c0, %c1;
     150:2|    3: <28, 5, 4, 36>        |    %v3 = icmp ult i32 %c0, %c1;
     155:0|    3: <28, 6, 5, 37>        |    %v4 = icmp ule i32 %c0, %c1;
     159:6|    3: <28, 7, 6, 38>        |    %v5 = icmp sgt i32 %c0, %c1;
     164:4|    3: <28, 8, 7, 38>        |    %v6 = icmp sgt i32 %c0, %c1;
     169:2|    3: <28, 9, 8, 39>        |    %v7 = icmp sge i32 %c0, %c1;
     174:0|    3: <28, 10, 9, 40>       |    %v8 = icmp slt i32 %c0, %c1;
     178:6|    3: <28, 11, 10, 41>      |    %v9 = icmp sle i32 %c0, %c1;
     183:4|    3: <10>                  |    ret void;
     185:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_ICMP,
        &[r#"  define external void @f0();
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_ICMP: &str = r#"module {
  version 1;
"#;

#[test]
fn fcmp() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 4>                |    count 4;
      50:4|    3: <3>                   |    @t0 = float;
      52:2|    3: <7, 1>                |    @t1 = i1;
      54:6|    3: <2>                   |    @t2 = void;
      56:4|    3: <21, 0, 2>            |    @t3 = void ();
      59:6|  0: <65534>                 |  }
      ...
     108:0|  1: <65535, 12, 2>          |  function void @f0() {  
          |                             |                   // BlockID = 12
     116:0|    3: <1, 1>                |    blocks 1;
     118:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     128:0|      3: <1, 0>              |      float:
     130:4|      3: <6, 0>              |        %c0 = float 0;
     133:0|      3: <6, 1065353216>     |        %c1 = float 1;
     139:2|    0: <65534>               |      }
          |                             |  %b0:
     140:0|    3: <28, 2, 1, 0>         |    %v0 = fcmp false float %c0, %c1;
     144:0|    3: <28, 3, 2, 1>         |    %v1 = fcmp oeq float %c0, %c1;
     148:0|    3: <28, 4, 3, 2>         |    %v2 = fcmp ogt float %c0, %c1;
     152:0|    3: <28, 5, 4, 3>         |    %v3 = fcmp oge float %c0, %c1;
     156:0|    3: <28, 6, 5, 4>         |    %v4 = fcmp olt float %c0, %c1;
     160:0|    3: <28, 7, 6, 5>         |    %v5 = fcmp ole float %c0, %c1;
     164:0|    3: <28, 8, 7, 6>         |    %v6 = fcmp one float %c0, %c1;
     168:0|    3: <28, 9, 8, 7>         |    %v7 = fcmp ord float %c0, %c1;
     172:0|    3: <28, 10, 9, 9>        |    %v8 = fcmp ueq float %c0, %c1;
     176:0|    3: <28, 11, 10, 10>      |    %v9 = fcmp ugt float %c0, %c1;
     180:0|    3: <28, 12, 11, 11>      |    %v10 = fcmp uge float %c0, %c1;
     184:0|    3: <28, 13, 12, 12>      |    %v11 = fcmp ult float %c0, %c1;
     188:0|    3: <28, 14, 13, 13>      |    %v12 = fcmp ule float %c0, %c1;
     192:0|    3: <28, 15, 14, 14>      |    %v13 = fcmp une float %c0, %c1;
     196:0|    3: <28, 16, 15, 8>       |    %v14 = fcmp uno float %c0, %c1;
     200:0|    3: <28, 17, 16, 15>      |    %v15 = fcmp true float %c0, %c1;
     204:0|    3: <10>                  |    ret void;
     205:6|  0: <65534>                 |  }
     208:0|0: <65534>                   |}
"#;
    check(
        EXAMPLE,
        HEAD_FCMP,
        &[r#"  define external void @f0();
  globals {
    count 0;
  }
"#],
        r#""#,
    );
}
const HEAD_FCMP: &str = r#"module {
  version 1;
"#;

#[test]
fn insertelement() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 5>                |    count 5;
      50:4|    3: <7, 1>                |    @t0 = i1;
      53:0|    3: <12, 4, 0>            |    @t1 = <4 x i1>;
      56:2|    3: <7, 32>               |    @t2 = i32;
      59:4|    3: <2>                   |    @t3 = void;
      61:2|    3: <21, 0, 3>            |    @t4 = void ();
      64:4|  0: <65534>                 |  }
      ...
     116:0|  1: <65535, 12, 2>          |  function void @f0() {  
          |                             |                   // BlockID = 12
     124:0|    3: <1, 1>                |    blocks 1;
     126:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     136:0|      3: <1, 0>              |      i1:
     138:4|      3: <4, 0>              |        %c0 = i1 0;
     141:0|      3: <4, 3>              |        %c1 = i1 1;
     143:4|      3: <1, 1>              |      <4 x i1>:
     146:0|      3: <3>                 |        %c2 = <4 x i1> undef;
     147:6|      3: <1, 2>              |      i32:
     150:2|      3: <4, 0>              |        %c3 = i32 0;
     152:6|      3: <4, 2>              |        %c4 = i32 1;
     155:2|      3: <4, 4>              |        %c5 = i32 2;
     157:6|      3: <4, 6>              |        %c6 = i32 3;
     160:2|    0: <65534>               |      }
          |                             |  %b0:
     164:0|    3: <7, 5, 7, 4>          |    %v0  =  insertelement <4 x i1> %c2,
          |                             |        i1 %c0, i32 %c3;
     168:0|    3: <7, 1, 7, 4>          |    %v1  =  insertelement <4 x i1> %v0,
          |                             |        i1 %c1, i32 %c4;
     172:0|    3: <7, 1, 9, 4>          |    %v2  =  insertelement <4 x i1> %v1,
          |                             |        i1 %c0, i32 %c5;
     176:0|    3: <7, 1, 9, 4>          |    %v3  =  insertelement <4 x i1> %v2,
          |                             |        i1 %c1, i32 %c6;
     180:0|    3: <10>                  |    ret void;
     181:6|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_INSERTELEMENT,
        &[r#"  define external void @f0();
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_INSERTELEMENT: &str = r#"module {
  version 1;
"#;

#[test]
fn extractelement() {
    const EXAMPLE: &str = r#"      96:0|  1: <65535, 12, 2>          |  function void @f0(<4 x i32> %p0) {  
          |                             |                   // BlockID = 12
     104:0|    3: <1, 1>                |    blocks 1;
     106:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     116:0|      3: <1, 0>              |      i32:
     118:4|      3: <4, 0>              |        %c0 = i32 0;
     121:0|    0: <65534>               |      }
          |                             |  %b0:
     124:0|    3: <6, 2, 1>             |    %v0  =  
          |                             |        extractelement <4 x i32> %p0, 
          |                             |        i32 %c0;
     127:2|    3: <10>                  |    ret void;
     129:0|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_EXTRACTELEMENT,
        &[],
        r#"}
"#,
    );
}
const HEAD_EXTRACTELEMENT: &str = r#"module {
  version 1;
  types {
    count 4;
    @t0 = i32;
    @t1 = <4 x i32>;
    @t2 = void;
    @t3 = void (<4 x i32>);
  }
  define external void @f0(<4 x i32>);
  globals {
    count 0;
  }
"#;

#[test]
fn forward_declarations() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 4>                |    count 4;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <2>                   |    @t1 = void;
      55:4|    3: <7, 1>                |    @t2 = i1;
      58:0|    3: <21, 0, 1, 0>         |    @t3 = void (i32);
      62:0|  0: <65534>                 |  }
      ...
     108:0|  1: <65535, 12, 2>          |  function void @f0(i32 %p0) {  
          |                             |                   // BlockID = 12
     116:0|    3: <1, 7>                |    blocks 7;
     118:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     128:0|      3: <1, 2>              |      i1:
     130:4|      3: <4, 3>              |        %c0 = i1 1;
     133:0|    0: <65534>               |      }
          |                             |  %b0:
     136:0|    3: <11, 4>               |    br label %b4;
          |                             |  %b1:
     138:4|    3: <43, 6, 0>            |    declare i32 %v3;
     142:4|    3: <2, 2, 4294967293, 0> |    %v0 = add i32 %p0, %v3;
     151:0|    3: <11, 6>               |    br label %b6;
          |                             |  %b2:
     153:4|    3: <43, 7, 0>            |    declare i32 %v4;
     157:4|    3: <2, 3, 4294967293, 0> |    %v1 = add i32 %p0, %v4;
     166:0|    3: <11, 6>               |    br label %b6;
          |                             |  %b3:
     168:4|    3: <2, 4, 4294967295, 0> |    %v2 = add i32 %p0, %v3;
     177:0|    3: <11, 6>               |    br label %b6;
          |                             |  %b4:
     179:4|    3: <2, 5, 5, 0>          |    %v3 = add i32 %p0, %p0;
     183:4|    3: <11, 1, 5, 5>         |    br i1 %c0, label %b1, label %b5;
          |                             |  %b5:
     187:4|    3: <2, 1, 6, 0>          |    %v4 = add i32 %v3, %p0;
     191:4|    3: <11, 2, 3, 6>         |    br i1 %c0, label %b2, label %b3;
          |                             |  %b6:
     195:4|    3: <10>                  |    ret void;
     197:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_FORWARD_DECLARATIONS,
        &[r#"  define external void @f0(i32);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_FORWARD_DECLARATIONS: &str = r#"module {
  version 1;
"#;

#[test]
fn phi() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 4>                |    count 4;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <2>                   |    @t1 = void;
      55:4|    3: <21, 0, 1>            |    @t2 = void ();
      58:6|    3: <7, 1>                |    @t3 = i1;
      61:2|  0: <65534>                 |  }
      ...
     112:0|  1: <65535, 12, 2>          |  function void @f0() {  
          |                             |                   // BlockID = 12
     120:0|    3: <1, 4>                |    blocks 4;
     122:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     132:0|      3: <1, 0>              |      i32:
     134:4|      3: <4, 2>              |        %c0 = i32 1;
     137:0|      3: <1, 3>              |      i1:
     139:4|      3: <4, 0>              |        %c1 = i1 0;
     142:0|    0: <65534>               |      }
          |                             |  %b0:
     144:0|    3: <11, 1, 2, 1>         |    br i1 %c1, label %b1, label %b2;
          |                             |  %b1:
     148:0|    3: <2, 2, 2, 0>          |    %v0 = add i32 %c0, %c0;
     152:0|    3: <2, 3, 3, 1>          |    %v1 = sub i32 %c0, %c0;
     156:0|    3: <11, 3>               |    br label %b3;
          |                             |  %b2:
     158:4|    3: <2, 4, 4, 2>          |    %v2 = mul i32 %c0, %c0;
     162:4|    3: <2, 5, 5, 3>          |    %v3 = udiv i32 %c0, %c0;
     166:4|    3: <11, 3>               |    br label %b3;
          |                             |  %b3:
     169:0|    3: <16, 0, 8, 1, 4, 2>   |    %v4 = phi i32 [%v0, %b1], 
          |                             |        [%v2, %b2];
     174:4|    3: <16, 0, 8, 1, 4, 2>   |    %v5 = phi i32 [%v1, %b1], 
          |                             |        [%v3, %b2];
     180:0|    3: <10>                  |    ret void;
     181:6|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_PHI,
        &[r#"  define external void @f0();
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_PHI: &str = r#"module {
  version 1;
"#;

#[test]
fn select() {
    const EXAMPLE: &str = r#"      96:0|  1: <65535, 12, 2>          |  function i32 @f0(i32 %p0, i32 %p1) { 
          |                             |                   // BlockID = 12
     104:0|    3: <1, 1>                |    blocks 1;
     106:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     116:0|      3: <1, 2>              |      i1:
     118:4|      3: <4, 3>              |        %c0 = i1 1;
     121:0|    0: <65534>               |      }
          |                             |  %b0:
     124:0|    3: <29, 3, 2, 1>         |    %v0 = select i1 %c0, i32 %p0, 
          |                             |        i32 %p1;
     128:0|    3: <10, 1>               |    ret i32 %v0;
     130:4|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_SELECT,
        &[],
        r#"}
"#,
    );
}
const HEAD_SELECT: &str = r#"module {
  version 1;
  types {
    count 3;
    @t0 = i32;
    @t1 = i32 (i32, i32);
    @t2 = i1;
  }
  define external i32 @f0(i32, i32);
  globals {
    count 0;
  }
"#;

#[test]
fn direct_procedure_call() {
    const EXAMPLE: &str = r#"      72:0|  3: <8, 3, 0, 1, 0>         |  declare external 
          |                             |      void @f0(i32, i64, i32);
      ...
     116:0|  1: <65535, 12, 2>          |  function void @f1(i32 %p0) {  
          |                             |                   // BlockID = 12
     124:0|    3: <1, 1>                |    blocks 1;
     126:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     136:0|      3: <1, 2>              |      i64:
     138:4|      3: <4, 2>              |        %c0 = i64 1;
     141:0|    0: <65534>               |      }
          |                             |  %b0:
     144:0|    3: <34, 0, 4, 2, 1, 2>   |    call void 
          |                             |        @f0(i32 %p0, i64 %c0, i32 %p0);
     150:2|    3: <10>                  |    ret void;
     152:0|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_DIRECT_PROCEDURE_CALL,
        &[r#"  define external void @f1(i32);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_DIRECT_PROCEDURE_CALL: &str = r#"module {
  version 1;
  types {
    count 5;
    @t0 = i32;
    @t1 = void;
    @t2 = i64;
    @t3 = void (i32, i64, i32);
    @t4 = void (i32);
  }
"#;

#[test]
fn direct_function_call() {
    const EXAMPLE: &str = r#"      72:0|  3: <8, 2, 0, 1, 0>         |  declare external 
          |                             |      i32 @f0(i32, i64, i32);
      ...
     116:0|  1: <65535, 12, 2>          |  function i32 @f1(i32 %p0) {  
          |                             |                   // BlockID = 12
     124:0|    3: <1, 1>                |    blocks 1;
     126:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     136:0|      3: <1, 1>              |      i64:
     138:4|      3: <4, 2>              |        %c0 = i64 1;
     141:0|    0: <65534>               |      }
          |                             |  %b0:
     144:0|    3: <34, 0, 4, 2, 1, 2>   |    %v0 = call i32 
          |                             |        @f0(i32 %p0, i64 %c0, i32 %p0);
     150:2|    3: <34, 1, 4, 1>         |    %v1 = tail call i32 @f1(i32 %v0);
     155:0|    3: <10, 2>               |    ret i32 %v0;
     157:4|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_DIRECT_FUNCTION_CALL,
        &[r#"  define external i32 @f1(i32);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_DIRECT_FUNCTION_CALL: &str = r#"module {
  version 1;
  types {
    count 4;
    @t0 = i32;
    @t1 = i64;
    @t2 = i32 (i32, i64, i32);
    @t3 = i32 (i32);
  }
"#;

#[test]
fn indirect_procedure_call() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 3>                |    count 3;
      50:4|    3: <2>                   |    @t0 = void;
      52:2|    3: <7, 32>               |    @t1 = i32;
      55:4|    3: <21, 0, 0, 1>         |    @t2 = void (i32);
      59:4|  0: <65534>                 |  }
      ...
      92:0|  1: <65535, 12, 2>          |  function void @f0(i32 %p0) {  
          |                             |                   // BlockID = 12
     100:0|    3: <1, 1>                |    blocks 1;
     102:4|    1: <65535, 11, 2>        |    constants {  // BlockID = 11
     112:0|      3: <1, 1>              |      i32:
     114:4|      3: <4, 2>              |        %c0 = i32 1;
     117:0|    0: <65534>               |      }
          |                             |  %b0:
     120:0|    3: <44, 0, 2, 0, 1>      |    call void %p0(i32 %c0);
     125:4|    3: <10>                  |    ret void;
     127:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_INDIRECT_PROCEDURE_CALL,
        &[r#"  define external void @f0(i32);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_INDIRECT_PROCEDURE_CALL: &str = r#"module {
  version 1;
"#;

#[test]
fn indirect_function_call() {
    const EXAMPLE: &str = r#"      40:0|  1: <65535, 17, 2>          |  types {  // BlockID = 17
      48:0|    3: <1, 6>                |    count 6;
      50:4|    3: <7, 32>               |    @t0 = i32;
      53:6|    3: <3>                   |    @t1 = float;
      55:4|    3: <4>                   |    @t2 = double;
      57:2|    3: <21, 0, 0, 0, 1, 2>   |    @t3 = i32 (i32, float, double);
      62:6|    3: <21, 0, 0, 1, 2>      |    @t4 = i32 (float, double);
      67:4|    3: <2>                   |    @t5 = void;
      69:2|  0: <65534>                 |  }
      ...
     104:0|  1: <65535, 12, 2>          |  function 
          |                             |      i32 
          |                             |      @f0(i32 %p0, float %p1, 
          |                             |          double %p2) {  
          |                             |                   // BlockID = 12
     112:0|    3: <1, 1>                |    blocks 1;
          |                             |  %b0:
     114:4|    3: <44, 0, 3, 0, 2, 1>   |    %v0 = call i32 
          |                             |        %p0(float %p1, double %p2);
     120:6|    3: <10, 1>               |    ret i32 %v0;
     123:2|  0: <65534>                 |  }
"#;
    check(
        EXAMPLE,
        HEAD_INDIRECT_FUNCTION_CALL,
        &[r#"  define external i32 @f0(i32, float, double);
  globals {
    count 0;
  }
"#],
        r#"}
"#,
    );
}
const HEAD_INDIRECT_FUNCTION_CALL: &str = r#"module {
  version 1;
"#;
