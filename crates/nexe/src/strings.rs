//! The interface names a nexe carries as C strings: the IRT interfaces it queries
//! (`nacl-irt-*`), the Pepper interfaces it asks for or exports (`PPB_*`, `PPP_*`) and a
//! few marker strings. They are found with `memchr::memmem` over the whole file (the
//! names sit in rodata, or in the string tables of glibc builds).

use memchr::memmem;
use std::collections::BTreeSet;

/// At most this many names of one kind are kept (a hostile file could hold millions).
const MAX_NAMES: usize = 1024;
/// Names longer than this are not interface names.
const MAX_LEN: usize = 96;

/// The NUL-terminated string starting at `at`, when it is printable ASCII of a sane
/// length and does not continue a longer name (the byte before is no name character:
/// strings may follow data directly, as in a pointer table's end).
fn c_string_at(data: &[u8], at: usize) -> Option<&str> {
    if at > 0 && (data[at - 1].is_ascii_alphanumeric() || b"_-.".contains(&data[at - 1])) {
        return None;
    }
    let rest = &data[at..];
    let end = memchr::memchr(0, &rest[..rest.len().min(MAX_LEN + 1)])?;
    let s = &rest[..end];
    if s.iter().all(|b| b.is_ascii_graphic()) {
        std::str::from_utf8(s).ok()
    } else {
        None
    }
}

/// Every whole C string in `data` that starts with `prefix`, sorted and unique.
pub fn strings_with_prefix(data: &[u8], prefix: &str) -> Vec<String> {
    let mut found = BTreeSet::new();
    for at in memmem::find_iter(data, prefix.as_bytes()) {
        if let Some(s) = c_string_at(data, at) {
            found.insert(s.to_string());
            if found.len() >= MAX_NAMES {
                break;
            }
        }
    }
    found.into_iter().collect()
}

/// Whether `data` holds `s` as a whole C string.
pub fn has_c_string(data: &[u8], s: &str) -> bool {
    memmem::find_iter(data, s.as_bytes())
        .any(|at| (at == 0 || data[at - 1] == 0) && data.get(at + s.len()) == Some(&0))
}

/// Pepper interface names (`PPB_Core;1.0`, `PPP_Instance;0.4`, `PPB_FileRef(Dev);0.5`):
/// the prefix, a name, `;`, a version. Entry points such as `PPP_InitializeModule` are not
/// interface names.
pub fn pepper_interfaces(data: &[u8], prefix: &str) -> Vec<String> {
    strings_with_prefix(data, prefix)
        .into_iter()
        .filter(|s| {
            s.split_once(';').is_some_and(|(name, version)| {
                name.len() > prefix.len()
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b"_()".contains(&b))
                    && !version.is_empty()
                    && version.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            })
        })
        .collect()
}

/// Whether the core interfaces are below 1.0 (`PPB_Core;0.3`, `PPP_Instance;0.4`): the
/// 2011 Pepper of Chrome 10-13. (Other interfaces keep 0.x versions in stable Pepper.)
pub fn pre_1_0(names: &[String]) -> bool {
    const CORE: &[&str] = &[
        "PPB_Core",
        "PPB_Instance",
        "PPP_Instance",
        "PPB_Var(Deprecated)",
    ];
    names.iter().any(|s| {
        s.rsplit_once(';')
            .is_some_and(|(name, v)| CORE.contains(&name) && v.starts_with("0."))
    })
}
