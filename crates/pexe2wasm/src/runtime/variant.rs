//! The threaded variant of the runtime's source (see [`super::irt_source`]). Shared with
//! build.rs, which compiles both variants when the crate is built, so it uses nothing
//! but `std`.

/// `wat` with the lines marked `;;@unthreaded` and the blocks between `;;@unthreaded{`
/// and `;;@unthreaded}` dropped, lines starting `;;@threads ` uncommented and the block
/// comments `(;@threads` … `@threads;)` opened.
pub fn threaded(wat: &str) -> String {
    let mut out = String::with_capacity(wat.len());
    let mut skipping = false;
    for line in wat.lines() {
        let t = line.trim();
        match t {
            ";;@unthreaded{" => skipping = true,
            ";;@unthreaded}" => skipping = false,
            "(;@threads" | "@threads;)" => {}
            _ if skipping || t.ends_with(";;@unthreaded") => {}
            _ => match t.strip_prefix(";;@threads ") {
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
