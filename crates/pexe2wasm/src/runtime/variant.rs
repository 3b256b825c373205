//! The threaded and Pepper variants of the runtime's source (see [`super::irt_source`]).
//! Shared with build.rs, which compiles every variant when the crate is built, so it uses
//! nothing but `std`.

/// `wat` with the lines marked `;;@unthreaded` and the blocks between `;;@unthreaded{`
/// and `;;@unthreaded}` dropped, lines starting `;;@threads ` uncommented and the block
/// comments `(;@threads` … `@threads;)` opened.
pub fn threaded(wat: &str) -> String {
    select(wat, "unthreaded", "threads")
}

/// The Pepper variant: the threaded one with the lines marked `;;@unpepper` dropped, lines
/// starting `;;@pepper ` uncommented and the block comments `(;@pepper` … `@pepper;)`
/// opened (a Pepper plugin always gets threads, as it did in Chrome).
pub fn pepper(wat: &str) -> String {
    select(&threaded(wat), "unpepper", "pepper")
}

/// `wat` without the lines marked `;;@<drop>` and the blocks between `;;@<drop>{` and
/// `;;@<drop>}`, with the lines starting `;;@<keep> ` uncommented and the block comments
/// `(;@<keep>` … `@<keep>;)` opened.
fn select(wat: &str, drop: &str, keep: &str) -> String {
    let drop_open = format!(";;@{drop}{{");
    let drop_close = format!(";;@{drop}}}");
    let drop_mark = format!(";;@{drop}");
    let keep_open = format!("(;@{keep}");
    let keep_close = format!("@{keep};)");
    let keep_line = format!(";;@{keep} ");
    let mut out = String::with_capacity(wat.len());
    let mut skipping = false;
    for line in wat.lines() {
        let t = line.trim();
        match t {
            _ if t == drop_open => skipping = true,
            _ if t == drop_close => skipping = false,
            _ if t == keep_open || t == keep_close => {}
            _ if skipping || t.ends_with(&drop_mark) => {}
            _ => match t.strip_prefix(&keep_line) {
                Some(rest) => {
                    out.push_str(&line[..line.len() - line.trim_start().len()]);
                    out.push_str(rest);
                    out.push('\n');
                }
                None => {
                    out.push_str(line);
                    out.push('\n');
                }
            },
        }
    }
    out
}
