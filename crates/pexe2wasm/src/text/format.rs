//! The line-wrapping text formatter behind both columns of the disassembly.
//!
//! It reproduces the layout rules of pnacl-bcdis (LLVM's `NaClObjDumpStream`), so our dumps
//! match the spec's examples character for character:
//!
//! - Text is a stream of *tokens* separated by *directives* ([`Op`]). Text written between
//!   two directives forms one indivisible token; a token that does not fit on the current
//!   line moves to a new line (it overflows only when it starts a line).
//! - `Space` writes a space unless the line is full, in which case it breaks the line.
//! - `Open`/`Close` write a bracket and push/pop an *intra-line indent*: continuation lines
//!   inside brackets align after the open bracket (capped so that `min_line_width` columns
//!   remain usable).
//! - `Start`/`Finish` delimit a *cluster*: a group of tokens kept on one line if at all
//!   possible. A cluster is measured first and the line is broken before it if it does not
//!   fit; then its directives are replayed (nested clusters are resolved the same way).
//! - Continuation lines outside brackets are indented by `continuation_indent` columns
//!   past the block indentation.
//!
//! [`Formatter::plain`] collects the same text without any layout, for the assembler.

/// One formatting directive (or token text).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Text appended to the pending token.
    Text(String),
    /// Ends the pending token without doing anything else (what pnacl-bcdis's type and
    /// abbreviation directives do before expanding).
    Flush,
    /// A token that needs no surrounding space (`,`, `;`, `:`).
    Punct(&'static str),
    /// A space, or a line break when the line is full.
    Space,
    /// An opening bracket; pushes the intra-line indent.
    Open(&'static str),
    /// A closing bracket; pops the intra-line indent.
    Close(&'static str),
    /// Starts a cluster.
    Start,
    /// Finishes a cluster.
    Finish,
    /// Ends the instruction (a newline; the next line starts a new instruction).
    Endline,
    /// Increments the block indentation.
    Inc,
    /// Decrements the block indentation.
    Dec,
}

/// A directive saved while clustering, to be replayed once the cluster's size is known.
#[derive(Debug, Clone)]
enum Saved {
    Token(String),
    Op(Op),
}

/// The formatter state (one per column).
#[derive(Debug, Clone)]
pub struct Formatter {
    /// Formatted output (lines separated by `\n`).
    pub out: String,
    /// The same text without layout: tokens, single spaces and newlines.
    pub plain: String,
    line_width: usize,
    min_line_width: usize,
    tab: usize,
    continuation_indent: usize,
    line_pos: usize,
    intraline: Vec<usize>,
    current_indent: usize,
    at_beginning: bool,
    line_indent: usize,
    tabs: usize,
    clustering: usize,
    cluster_size: usize,
    saved: Vec<Saved>,
    pending: String,
    /// Record column only: the bit-address label written before each line.
    label: Option<String>,
}

impl Formatter {
    /// A formatter with the given line width, minimum usable width, tab size and
    /// continuation indent.
    pub fn new(line_width: usize, min_line_width: usize, tab: usize, cont: usize) -> Self {
        Formatter {
            out: String::new(),
            plain: String::new(),
            line_width,
            min_line_width: min_line_width.min(line_width),
            tab,
            continuation_indent: cont,
            line_pos: 0,
            intraline: Vec::new(),
            current_indent: 0,
            at_beginning: true,
            line_indent: 0,
            tabs: 0,
            clustering: 0,
            cluster_size: 0,
            saved: Vec::new(),
            pending: String::new(),
            label: None,
        }
    }

    /// Sets the label written at the start of each line (record column).
    pub fn set_label(&mut self, label: String) {
        self.label = Some(label);
    }

    /// Width of the current label (0 without one).
    pub fn label_len(&self) -> usize {
        self.label.as_ref().map_or(0, |l| l.len())
    }

    /// Current block indentation in tabs.
    pub fn tabs(&self) -> usize {
        self.tabs
    }

    /// Applies a sequence of operations.
    pub fn apply_all(&mut self, ops: impl IntoIterator<Item = Op>) {
        for op in ops {
            self.apply(op);
        }
    }

    /// Applies one operation.
    pub fn apply(&mut self, op: Op) {
        match op {
            Op::Text(t) => {
                self.plain.push_str(&t);
                self.pending.push_str(&t);
            }
            Op::Inc => self.tabs += 1,
            Op::Dec => self.tabs = self.tabs.saturating_sub(1),
            op => {
                match &op {
                    Op::Punct(s) | Op::Open(s) | Op::Close(s) => self.plain.push_str(s),
                    Op::Space => self.plain.push(' '),
                    Op::Endline => self.plain.push('\n'),
                    _ => {}
                }
                self.directive(op)
            }
        }
    }

    /// Applies a directive: first the pending token, then the directive's own action.
    fn directive(&mut self, op: Op) {
        let tok = std::mem::take(&mut self.pending);
        if !tok.is_empty() {
            if self.clustering > 0 {
                self.saved.push(Saved::Token(tok.clone()));
            }
            self.write_token(&tok);
        }
        self.my_apply(&op);
        let save = match op {
            Op::Start => self.clustering > 1,
            _ => self.clustering > 0,
        };
        if save {
            self.saved.push(Saved::Op(op));
        }
    }

    fn my_apply(&mut self, op: &Op) {
        match op {
            Op::Flush | Op::Text(_) | Op::Inc | Op::Dec => {}
            Op::Punct(s) => self.write_token(s),
            Op::Space => {
                if !self.wrap_if_needed(1) {
                    self.write_token(" ");
                }
            }
            Op::Open(s) => {
                self.write_token(s);
                if self.clustering == 0 {
                    self.intraline.push(self.current_indent);
                    self.current_indent = self.fix_indent(self.line_pos);
                }
            }
            Op::Close(s) => {
                self.write_token(s);
                if self.clustering == 0 {
                    if let Some(i) = self.intraline.pop() {
                        self.current_indent = i;
                    }
                }
            }
            Op::Start => self.clustering += 1,
            Op::Finish => self.finish_cluster(),
            Op::Endline => {
                self.write_char('\n');
                self.current_indent = 0;
                self.at_beginning = true;
                self.line_indent = 0;
            }
        }
    }

    fn finish_cluster(&mut self) {
        if self.clustering == 0 {
            return;
        }
        self.clustering -= 1;
        if self.clustering > 0 {
            return;
        }
        self.wrap_if_needed(self.cluster_size);
        let saved = std::mem::take(&mut self.saved);
        self.cluster_size = 0;
        for s in saved {
            match s {
                Saved::Token(t) => {
                    // A replayed token is itself a directive: it may be saved again by an
                    // enclosing (nested) cluster that is being replayed.
                    if self.clustering > 0 {
                        self.saved.push(Saved::Token(t.clone()));
                    }
                    self.write_token(&t);
                }
                Saved::Op(op) => self.directive(op),
            }
        }
    }

    fn fix_indent(&self, pos: usize) -> usize {
        pos.min(self.line_width.saturating_sub(self.min_line_width))
    }

    fn wrap_if_needed(&mut self, size: usize) -> bool {
        if self.clustering > 0 || self.line_pos + size <= self.line_width || self.line_pos == 0 {
            return false;
        }
        self.write_char('\n');
        true
    }

    fn write_token(&mut self, tok: &str) {
        if tok.is_empty() {
            return;
        }
        self.wrap_if_needed(tok.len());
        if self.clustering > 0 {
            self.cluster_size += tok.len();
        } else {
            for ch in tok.chars() {
                self.write_char(ch);
            }
        }
    }

    fn write_char(&mut self, ch: char) {
        if ch == '\n' {
            self.out.push('\n');
            self.line_pos = 0;
        } else {
            if self.line_pos == 0 {
                self.write_line_indents();
            }
            self.out.push(ch);
            self.line_pos += 1;
        }
        self.at_beginning = false;
    }

    fn write_line_indents(&mut self) {
        if let Some(label) = &self.label {
            if self.at_beginning {
                self.out.push_str(label);
            } else {
                push_spaces(&mut self.out, label.len());
            }
            self.out.push('|');
            self.line_pos += label.len() + 1;
        }
        if self.at_beginning {
            self.line_indent = self.tabs * self.tab;
        }
        push_spaces(&mut self.out, self.line_indent);
        self.line_pos += self.line_indent;
        let mut use_indent = self.current_indent;
        if !self.at_beginning && self.current_indent == 0 {
            use_indent = self.fix_indent(self.line_pos + self.continuation_indent);
        }
        while self.line_pos < use_indent {
            self.out.push(' ');
            self.line_pos += 1;
        }
    }
}

fn push_spaces(s: &mut String, n: usize) {
    s.extend(std::iter::repeat_n(' ', n));
}

/// Width of the assembly column (pnacl-bcdis: 80 minus the 40-column record part and the
/// separator).
pub const ASM_WIDTH: usize = 39;
/// Width of the record column proper (between the label separator and the column
/// separator).
pub const RECORD_WIDTH: usize = 29;

/// A formatter for the PNaClAsm column.
pub fn assembly_formatter() -> Formatter {
    Formatter::new(ASM_WIDTH, 20, 2, 4)
}

/// A formatter for the record column, for labels of `label_width` characters.
pub fn record_formatter(label_width: usize) -> Formatter {
    let mut f = Formatter::new(label_width + 1 + RECORD_WIDTH, 21, 2, 0);
    f.set_label(" ".repeat(label_width));
    f
}

/// C's `%g` with the given precision (significant digits), as glibc prints it.
pub fn c_g(v: f64, prec: usize) -> String {
    let p = prec.max(1);
    if v.is_nan() {
        return if v.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if v.is_infinite() {
        return if v < 0.0 { "-inf" } else { "inf" }.into();
    }
    if v == 0.0 {
        return if v.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let e = format!("{:.*e}", p - 1, v);
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i64 = exp.parse().unwrap_or(0);
    if x < -4 || x >= p as i64 {
        let mant = strip_zeros(mant);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{mant}e{sign}{:02}", x.unsigned_abs())
    } else {
        let decimals = (p as i64 - 1 - x).max(0) as usize;
        strip_zeros(&format!("{v:.decimals$}")).to_string()
    }
}

fn strip_zeros(s: &str) -> &str {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.')
    } else {
        s
    }
}

/// The text of a float constant: `%g` when that reads back exactly (as pnacl-bcdis prints
/// it), otherwise the fewest extra digits that do.
pub fn float_text(bits: u32) -> String {
    let v = f32::from_bits(bits);
    if v.is_nan() && bits & 0x7fff_ffff != 0x7fc0_0000 {
        // A NaN other than the default one: its bits (a PNaClAsm extension).
        return format!("nan(0x{bits:x})");
    }
    if v.is_nan() || v.is_infinite() {
        return c_g(v as f64, 6);
    }
    for p in 6..=9 {
        let s = c_g(v as f64, p);
        if s.parse::<f32>().map(f32::to_bits) == Ok(bits) {
            return s;
        }
    }
    c_g(v as f64, 9)
}

/// Like [`float_text`] for doubles.
pub fn double_text(bits: u64) -> String {
    let v = f64::from_bits(bits);
    if v.is_nan() && bits & !(1 << 63) != 0x7ff8_0000_0000_0000 {
        return format!("nan(0x{bits:x})");
    }
    if v.is_nan() || v.is_infinite() {
        return c_g(v, 6);
    }
    for p in 6..=17 {
        let s = c_g(v, p);
        if s.parse::<f64>().map(f64::to_bits) == Ok(bits) {
            return s;
        }
    }
    c_g(v, 17)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(width: usize, ops: &[Op]) -> String {
        let mut f = Formatter::new(width, 20, 2, 4);
        f.apply_all(ops.iter().cloned());
        f.out
    }

    fn t(s: &str) -> Op {
        Op::Text(s.into())
    }

    #[test]
    fn tokens_wrap_with_continuation_indent() {
        let mut ops = vec![Op::Inc, Op::Inc];
        for w in [
            "call", "void", "@f0(i32", "%p0,", "i64", "%c0,", "i32", "%p0);",
        ] {
            ops.push(t(w));
            ops.push(Op::Space);
        }
        ops.push(Op::Endline);
        let out = run(30, &ops);
        assert_eq!(
            out,
            "    call void @f0(i32 %p0, i64\n        %c0, i32 %p0); \n"
        );
    }

    #[test]
    fn clusters_move_as_a_unit() {
        // `align 8;` does not fit after the store's first two clusters.
        let ops = vec![
            Op::Inc,
            Op::Inc,
            Op::Start,
            t("store"),
            Op::Space,
            t("double"),
            Op::Space,
            t("%p3"),
            Op::Punct(","),
            Op::Finish,
            Op::Space,
            Op::Start,
            t("double*"),
            Op::Space,
            t("%p2"),
            Op::Punct(","),
            Op::Finish,
            Op::Space,
            Op::Start,
            t("align"),
            Op::Space,
            t("8"),
            Op::Punct(";"),
            Op::Finish,
            Op::Endline,
        ];
        assert_eq!(
            run(39, &ops),
            "    store double %p3, double* %p2, \n        align 8;\n"
        );
    }

    #[test]
    fn open_bracket_sets_continuation_column() {
        // Continuation lines inside brackets line up after the bracket.
        let mut ops = vec![t("x"), Op::Space, Op::Open("(")];
        for i in 0..8 {
            if i > 0 {
                ops.push(Op::Punct(","));
                ops.push(Op::Space);
            }
            ops.push(t("value"));
        }
        ops.push(Op::Close(")"));
        ops.push(Op::Endline);
        assert_eq!(
            run(30, &ops),
            "x (value, value, value, value,\n   value, value, value, value)\n"
        );
        // The bracket indent is capped at width - min_line_width.
        let mut ops = vec![t("0123456789012345"), Op::Open("(")];
        for _ in 0..6 {
            ops.push(t("abcd"));
            ops.push(Op::Space);
        }
        ops.push(Op::Close(")"));
        ops.push(Op::Endline);
        assert_eq!(
            run(30, &ops),
            "0123456789012345(abcd abcd \n          abcd abcd abcd abcd \n          )\n"
        );
    }

    #[test]
    fn record_labels_and_nested_clusters() {
        let mut f = record_formatter(7);
        f.set_label("   88:0".into());
        f.apply_all([Op::Inc, Op::Inc, t("3:"), Op::Space, Op::Open("<")]);
        let vals = [1u64, 0, 102, 97, 99, 116];
        for (i, v) in vals.iter().enumerate() {
            if i > 0 {
                f.apply_all([Op::Punct(","), Op::Finish, Op::Space]);
            }
            f.apply_all([Op::Start, t(&v.to_string())]);
        }
        f.apply_all([Op::Finish, Op::Close(">"), Op::Endline]);
        assert_eq!(
            f.out,
            "   88:0|    3: <1, 0, 102, 97, 99, \n       |        116>\n"
        );
        assert_eq!(f.plain, "3: <1, 0, 102, 97, 99, 116>\n");
    }

    #[test]
    fn c_g_matches_printf() {
        assert_eq!(c_g(1.0, 6), "1");
        assert_eq!(c_g(7.0, 6), "7");
        assert_eq!(c_g(0.1, 6), "0.1");
        assert_eq!(c_g(123456.0, 6), "123456");
        assert_eq!(c_g(1234567.0, 6), "1.23457e+06");
        assert_eq!(c_g(1e20, 6), "1e+20");
        assert_eq!(c_g(0.0001, 6), "0.0001");
        assert_eq!(c_g(0.00001, 6), "1e-05");
        assert_eq!(c_g(-2.5, 6), "-2.5");
        assert_eq!(c_g(-0.0, 6), "-0");
        assert_eq!(c_g(f64::NAN, 6), "nan");
        assert_eq!(c_g(f64::NEG_INFINITY, 6), "-inf");
        assert_eq!(c_g(std::f64::consts::PI, 6), "3.14159");
        assert_eq!(c_g(1e100, 6), "1e+100");
    }

    #[test]
    fn float_texts_are_exact() {
        assert_eq!(float_text(1.0f32.to_bits()), "1");
        assert_eq!(float_text(0x7fc00000), "nan");
        assert_eq!(float_text(0xffc00000), "-nan");
        assert_eq!(float_text(0x7fc00001), "nan(0x7fc00001)");
        assert_eq!(double_text(0x7fffffffffffffff), "nan(0x7fffffffffffffff)");
        assert_eq!(double_text(0xfff8000000000000), "-nan");
        assert_eq!(double_text(0.1f64.to_bits()), "0.1");
        let pi = std::f64::consts::PI;
        assert_eq!(double_text(pi.to_bits()).parse::<f64>().unwrap(), pi);
        let third = 1.0f32 / 3.0;
        assert_eq!(float_text(third.to_bits()).parse::<f32>().unwrap(), third);
        for bits in [1u32, 0x00800000, 0x7f7fffff, 0x80000001, 0x3dcccccd] {
            assert_eq!(float_text(bits).parse::<f32>().unwrap().to_bits(), bits);
        }
    }
}
