//! [`SitePath`]: a file's place inside a site, checked once so that nothing downstream
//! (the writer above all) can be led outside the output folder.

use std::fmt;

/// The deepest folder nesting a site path may have.
pub const MAX_DEPTH: usize = 64;
/// The longest site path, in bytes.
pub const MAX_LEN: usize = 1024;

/// A relative path inside a site: `/`-separated, every component a plain name (not empty,
/// not `.` or `..`, no `\`, `:` or control character), at most [`MAX_DEPTH`] deep and
/// [`MAX_LEN`] bytes long. Ordered as its string, so a folder's files sort together.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SitePath(String);

/// Why a name is not a [`SitePath`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathError {
    #[error("is empty")]
    Empty,
    #[error("is absolute")]
    Absolute,
    #[error("has a '..' component (it would leave the site)")]
    Parent,
    #[error("has an empty or '.' component")]
    EmptyComponent,
    #[error("has a character a file name cannot have here ({0:?})")]
    BadChar(char),
    #[error("is longer than {MAX_LEN} bytes or deeper than {MAX_DEPTH} folders")]
    TooLong,
}

impl SitePath {
    /// Checks `name` (as an archive or a folder walk gives it; a trailing `/` is not
    /// accepted here: folders are not entries).
    pub fn new(name: &str) -> Result<SitePath, PathError> {
        if name.is_empty() {
            return Err(PathError::Empty);
        }
        if name.starts_with('/') || name.starts_with('\\') {
            return Err(PathError::Absolute);
        }
        if name.len() > MAX_LEN || name.split('/').count() > MAX_DEPTH {
            return Err(PathError::TooLong);
        }
        for c in name.split('/') {
            match c {
                ".." => return Err(PathError::Parent),
                "" | "." => return Err(PathError::EmptyComponent),
                _ => {}
            }
            if let Some(bad) = c
                .chars()
                .find(|&ch| ch == '\\' || ch == ':' || ch.is_control())
            {
                // `C:` or `a\..\b` would mean something else on another system.
                return Err(PathError::BadChar(bad));
            }
        }
        Ok(SitePath(name.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The file name (the last component).
    pub fn name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }

    /// The folder it is in, `""` at the root, else ending in `/`.
    pub fn dir(&self) -> &str {
        match self.0.rfind('/') {
            Some(i) => &self.0[..=i],
            None => "",
        }
    }

    /// The lower-case extension, without the dot (`""` without one).
    pub fn ext(&self) -> String {
        match self.name().rsplit_once('.') {
            Some((stem, e)) if !stem.is_empty() => e.to_ascii_lowercase(),
            _ => String::new(),
        }
    }

    /// How many folders deep it is (0 at the root).
    pub fn depth(&self) -> usize {
        self.0.matches('/').count()
    }

    /// The same path with its extension replaced (`a/b.pexe` → `a/b.wasm`).
    pub fn with_ext(&self, ext: &str) -> SitePath {
        let dir = self.dir();
        let name = self.name();
        let stem = match name.rsplit_once('.') {
            Some((s, _)) if !s.is_empty() => s,
            _ => name,
        };
        SitePath(format!("{dir}{stem}.{ext}"))
    }

    /// `rel` (a relative URL's path, already without query and fragment) resolved against
    /// this file's folder; `None` when it leaves the site or is not a plain relative path.
    pub fn join_url(&self, rel: &str) -> Option<SitePath> {
        if rel.contains("://") || rel.starts_with('/') || rel.is_empty() {
            return None;
        }
        let mut parts: Vec<&str> = self.dir().split('/').filter(|s| !s.is_empty()).collect();
        for c in rel.split('/') {
            match c {
                "" | "." => {}
                ".." => {
                    parts.pop()?;
                }
                c => parts.push(c),
            }
        }
        let decoded = percent_decode(&parts.join("/"))?;
        SitePath::new(&decoded).ok()
    }

    /// The relative URL prefix from this file's folder to the site's root: `""` or
    /// `../` repeated.
    pub fn to_root(&self) -> String {
        "../".repeat(self.depth())
    }

    /// The relative URL prefix from this file's folder to folder `dir` (`""` or ending in
    /// `/`), which must be this file's folder or one above it.
    pub fn up_to(&self, dir: &str) -> Option<String> {
        let here = self.dir();
        let rest = here.strip_prefix(dir)?;
        Some("../".repeat(rest.matches('/').count()))
    }
}

/// `%XX` sequences decoded (URLs in manifests may escape spaces); `None` for a bad one or
/// a result that is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

impl fmt::Display for SitePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for SitePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl serde::Serialize for SitePath {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_relative_names_only() {
        assert_eq!(SitePath::new("a/b.html").unwrap().as_str(), "a/b.html");
        assert_eq!(SitePath::new("../x"), Err(PathError::Parent));
        assert_eq!(SitePath::new("a/../../x"), Err(PathError::Parent));
        assert_eq!(SitePath::new("/etc/passwd"), Err(PathError::Absolute));
        assert_eq!(SitePath::new("\\x"), Err(PathError::Absolute));
        assert_eq!(SitePath::new("a//b"), Err(PathError::EmptyComponent));
        assert_eq!(SitePath::new("a/./b"), Err(PathError::EmptyComponent));
        assert_eq!(SitePath::new("C:/x"), Err(PathError::BadChar(':')));
        assert_eq!(SitePath::new("a\\..\\b"), Err(PathError::BadChar('\\')));
        assert_eq!(SitePath::new("a\nb"), Err(PathError::BadChar('\n')));
        assert_eq!(SitePath::new(""), Err(PathError::Empty));
        assert_eq!(SitePath::new(&"a/".repeat(70)), Err(PathError::TooLong));
        // Spaces and brackets are ordinary names (astar's css/style[Konflikt].css).
        assert!(SitePath::new("css/style[Konflikt].css").is_ok());
    }

    #[test]
    fn relations_between_paths() {
        let p = SitePath::new("nacl/sub/index.html").unwrap();
        assert_eq!(p.dir(), "nacl/sub/");
        assert_eq!(p.name(), "index.html");
        assert_eq!(p.ext(), "html");
        assert_eq!(p.to_root(), "../../");
        assert_eq!(p.up_to("nacl/").as_deref(), Some("../"));
        assert_eq!(p.up_to("other/"), None);
        assert_eq!(
            p.join_url("../pnacl/Release/a.nmf").unwrap().as_str(),
            "nacl/pnacl/Release/a.nmf"
        );
        assert_eq!(p.join_url("../../../x"), None);
        assert_eq!(p.join_url("http://h/x"), None);
        assert_eq!(
            p.join_url("my%20file.js").unwrap().as_str(),
            "nacl/sub/my file.js"
        );
        assert_eq!(
            SitePath::new("a/app.pexe")
                .unwrap()
                .with_ext("wasm")
                .as_str(),
            "a/app.wasm"
        );
        assert_eq!(SitePath::new(".nmf").unwrap().ext(), "");
    }
}
