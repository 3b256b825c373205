//! Tokens of PNaClAsm text, and the extraction of the PNaClAsm column from a three-column
//! dump.

use super::asm::AsmError;

/// A token kind. Text is borrowed from the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok<'a> {
    /// `define`, `i32`, `fixed`, `x`, ...
    Ident(&'a str),
    /// `@f3`: kind letter and index.
    Global(u8, u64),
    /// `%v7`: kind letter and index.
    Local(u8, u64),
    /// A number as written: `12`, `-3`, `1.5e-05`.
    Num(&'a str),
    /// `"text"` (without the quotes).
    Str(&'a str),
    /// `'text'` (without the quotes).
    Chr(&'a str),
    /// One of `{ } ( ) [ ] < > , ; : = * + -`.
    P(u8),
    /// `=>`, the record-override marker.
    Arrow,
    /// `...`
    Ellipsis,
    Eof,
}

impl Tok<'_> {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Num(s) => format!("'{s}'"),
            Tok::Global(k, n) => format!("'@{}{n}'", *k as char),
            Tok::Local(k, n) => format!("'%{}{n}'", *k as char),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Chr(s) => format!("'{s}' (quoted)"),
            Tok::P(c) => format!("'{}'", *c as char),
            Tok::Arrow => "'=>'".into(),
            Tok::Ellipsis => "'...'".into(),
            Tok::Eof => "the end of the input".into(),
        }
    }
}

/// A token with its position (1-based line and column in the lexed text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'a> {
    pub tok: Tok<'a>,
    pub line: u32,
    pub col: u32,
}

/// A streaming lexer: tokens are produced on demand, so large dumps need no token array.
/// `//` starts a comment that runs to the end of the line.
pub struct Lexer<'a> {
    src: &'a str,
    i: usize,
    line: u32,
    line_start: usize,
    /// Column bookkeeping: the byte offset and column last computed on this line.
    col_at: (usize, u32),
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer {
            src,
            i: 0,
            line: 1,
            line_start: 0,
            col_at: (0, 1),
        }
    }

    /// Column (1-based, in characters) of byte offset `i` on the current line; linear
    /// overall because offsets only move forward.
    fn col(&mut self, i: usize) -> u32 {
        let (from, c) = if self.col_at.0 >= self.line_start && self.col_at.0 <= i {
            self.col_at
        } else {
            (self.line_start, 1)
        };
        let c = c + self.src[from..i].chars().count() as u32;
        self.col_at = (i, c);
        c
    }

    /// The next token (`Tok::Eof` at the end, repeatedly).
    pub fn next_token(&mut self) -> Result<Token<'a>, AsmError> {
        let src = self.src;
        let b = src.as_bytes();
        loop {
            let i = self.i;
            if i >= b.len() {
                let col = self.col(b.len());
                return Ok(Token {
                    tok: Tok::Eof,
                    line: self.line,
                    col,
                });
            }
            let c = b[i];
            match c {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    self.line_start = self.i;
                    continue;
                }
                b' ' | b'\t' | b'\r' => {
                    self.i += 1;
                    continue;
                }
                b'/' if b.get(i + 1) == Some(&b'/') => {
                    while self.i < b.len() && b[self.i] != b'\n' {
                        self.i += 1;
                    }
                    continue;
                }
                _ => {}
            }
            let line = self.line;
            let col = self.col(i);
            let err = |m: String| AsmError::new(line as usize, col as usize, m);
            let mut j = i;
            let tok = match c {
                b'@' | b'%' => {
                    let kind = match b.get(i + 1) {
                        Some(k) if k.is_ascii_alphabetic() => *k,
                        _ => {
                            return Err(err(format!(
                                "'{}' must be followed by an id such as {}f0",
                                c as char, c as char
                            )))
                        }
                    };
                    j += 2;
                    let ds = j;
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    let digits = &src[ds..j];
                    if digits.is_empty() {
                        return Err(err(format!(
                            "'{}{}' must be followed by an index",
                            c as char, kind as char
                        )));
                    }
                    let n: u64 = digits
                        .parse()
                        .map_err(|_| err(format!("index {digits} is too large")))?;
                    if c == b'@' {
                        Tok::Global(kind, n)
                    } else {
                        Tok::Local(kind, n)
                    }
                }
                b'"' | b'\'' => {
                    j += 1;
                    let s = j;
                    while j < b.len() && b[j] != c && b[j] != b'\n' {
                        j += 1;
                    }
                    if j >= b.len() || b[j] != c {
                        return Err(err("unterminated quoted text".into()));
                    }
                    let text = &src[s..j];
                    j += 1;
                    if c == b'"' {
                        Tok::Str(text)
                    } else {
                        Tok::Chr(text)
                    }
                }
                b'0' if matches!(b.get(i + 1), Some(b'x' | b'X'))
                    && b.get(i + 2).is_some_and(|d| d.is_ascii_hexdigit()) =>
                {
                    j = i + 2;
                    while j < b.len() && b[j].is_ascii_hexdigit() {
                        j += 1;
                    }
                    Tok::Num(&src[i..j])
                }
                b'0'..=b'9' => {
                    j = number_end(b, i);
                    Tok::Num(&src[i..j])
                }
                b'-' if b.get(i + 1).is_some_and(|d| d.is_ascii_digit()) => {
                    j = number_end(b, i + 1);
                    Tok::Num(&src[i..j])
                }
                b'=' if b.get(i + 1) == Some(&b'>') => {
                    j += 2;
                    Tok::Arrow
                }
                b'.' if b.get(i + 1) == Some(&b'.') && b.get(i + 2) == Some(&b'.') => {
                    j += 3;
                    Tok::Ellipsis
                }
                b'{' | b'}' | b'(' | b')' | b'[' | b']' | b'<' | b'>' | b',' | b';' | b':'
                | b'=' | b'*' | b'+' | b'-' => {
                    j += 1;
                    Tok::P(c)
                }
                c if c.is_ascii_alphabetic() || c == b'_' => {
                    while j < b.len()
                        && (b[j].is_ascii_alphanumeric() || b[j] == b'_' || b[j] == b'.')
                    {
                        j += 1;
                    }
                    Tok::Ident(&src[i..j])
                }
                _ => {
                    let ch = src[i..].chars().next().unwrap_or('?');
                    return Err(err(format!("unexpected character '{ch}'")));
                }
            };
            self.i = j;
            return Ok(Token { tok, line, col });
        }
    }
}

/// Splits a whole text into tokens (ending with `Tok::Eof`).
pub fn lex(src: &str) -> Result<Vec<Token<'_>>, AsmError> {
    let mut lx = Lexer::new(src);
    let mut toks = Vec::new();
    loop {
        let t = lx.next_token()?;
        toks.push(t);
        if t.tok == Tok::Eof {
            return Ok(toks);
        }
    }
}

/// End of a number starting at `i`: digits, an optional fraction and an optional exponent.
fn number_end(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i + 1 < b.len() && b[i] == b'.' && b[i + 1].is_ascii_digit() {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        if j < b.len() && b[j].is_ascii_digit() {
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    i
}

/// The PNaClAsm text of an input that may be a three-column dump, and for each line the
/// number of characters removed from its start (to report positions in the original).
pub struct Extracted {
    pub text: String,
    pub offsets: Vec<usize>,
}

/// Lines with a `|` are dump lines: their PNaClAsm is what follows the second `|` (or the
/// first, if there is only one). Other lines are taken whole.
pub fn extract(input: &str) -> Extracted {
    let mut text = String::with_capacity(input.len() / 2);
    let mut offsets = Vec::new();
    for (i, line) in input.split('\n').enumerate() {
        if i > 0 {
            text.push('\n');
        }
        let mut bars = line.match_indices('|').map(|(p, _)| p);
        let cut = match (bars.next(), bars.next()) {
            (_, Some(p)) | (Some(p), None) => p + 1,
            (None, None) => 0,
        };
        offsets.push(line[..cut].chars().count());
        text.push_str(&line[cut..]);
    }
    Extracted { text, offsets }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexes_pnaclasm() {
        let toks =
            lex("%v0 = add i32 %p0, @f12; <@a1> // comment\n=> <3> ... -1 - 2 1e+20").unwrap();
        let kinds: Vec<_> = toks.iter().map(|t| t.tok).collect();
        assert_eq!(
            kinds,
            vec![
                Tok::Local(b'v', 0),
                Tok::P(b'='),
                Tok::Ident("add"),
                Tok::Ident("i32"),
                Tok::Local(b'p', 0),
                Tok::P(b','),
                Tok::Global(b'f', 12),
                Tok::P(b';'),
                Tok::P(b'<'),
                Tok::Global(b'a', 1),
                Tok::P(b'>'),
                Tok::Arrow,
                Tok::P(b'<'),
                Tok::Num("3"),
                Tok::P(b'>'),
                Tok::Ellipsis,
                Tok::Num("-1"),
                Tok::P(b'-'),
                Tok::Num("2"),
                Tok::Num("1e+20"),
                Tok::Eof
            ]
        );
        assert_eq!((toks[11].line, toks[11].col), (2, 1));
    }

    #[test]
    fn lex_errors_have_positions() {
        let e = lex("x\n  @ 3").unwrap_err();
        assert_eq!((e.line, e.column), (2, 3));
        let e = lex("\"abc").unwrap_err();
        assert!(e.message.contains("unterminated"), "{e}");
        assert!(lex("%v99999999999999999999999").is_err());
        assert!(lex("$")
            .unwrap_err()
            .to_string()
            .contains("line 1, column 1"));
    }

    #[test]
    fn extracts_the_assembly_column() {
        let e = extract("   24:0|  3: <1, 1>   |  version 1;\n       |            |\nplain");
        assert_eq!(e.text, "  version 1;\n\nplain");
        assert_eq!(e.offsets, vec![23, 21, 0]);
    }
}
