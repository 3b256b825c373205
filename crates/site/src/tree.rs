//! [`Tree`]: the files of the input, by site path. A folder's files stay on disk until
//! they are written; an archive's are held decompressed (bounded by [`Limits`]).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::SiteError;
use crate::path::SitePath;

/// Bounds on what an input may unpack to: an archive that claims or yields more is refused
/// with the entry named (a zip bomb), and a folder with more files is refused too.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Files in one input.
    pub max_entries: usize,
    /// Bytes one archive may unpack to, all entries together.
    pub max_total: u64,
    /// Bytes one file may have.
    pub max_entry: u64,
    /// The largest unpacked/packed size ratio of an entry over [`Limits::ratio_from`] bytes.
    pub max_ratio: u64,
    /// Entries smaller than this are not held to the ratio (small text compresses well).
    pub ratio_from: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_entries: 100_000,
            max_total: 1 << 30,
            max_entry: 512 << 20,
            max_ratio: 1000,
            ratio_from: 1 << 20,
        }
    }
}

/// Where a file's bytes are.
#[derive(Debug, Clone)]
pub enum Content {
    /// Unpacked from an archive (or made here).
    Bytes(Arc<[u8]>),
    /// A file of the input folder, read when needed.
    Disk(PathBuf),
}

impl Content {
    /// The bytes (a folder's file is read now).
    pub fn read(&self) -> Result<Arc<[u8]>, SiteError> {
        match self {
            Content::Bytes(b) => Ok(b.clone()),
            Content::Disk(p) => fs::read(p)
                .map(Arc::from)
                .map_err(|e| SiteError::io("cannot read", p, e)),
        }
    }

    /// The first `n` bytes at most (a magic number), without reading a whole file.
    pub fn head(&self, n: usize) -> Result<Vec<u8>, SiteError> {
        match self {
            Content::Bytes(b) => Ok(b[..n.min(b.len())].to_vec()),
            Content::Disk(p) => {
                use std::io::Read;
                let mut f = fs::File::open(p).map_err(|e| SiteError::io("cannot read", p, e))?;
                let mut buf = vec![0; n];
                let mut got = 0;
                while got < n {
                    match f.read(&mut buf[got..]) {
                        Ok(0) => break,
                        Ok(k) => got += k,
                        Err(e) => return Err(SiteError::io("cannot read", p, e)),
                    }
                }
                buf.truncate(got);
                Ok(buf)
            }
        }
    }
}

/// The input's files by site path.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub files: BTreeMap<SitePath, Content>,
    /// What was passed over, one line each (links, VCS folders), for the report.
    pub skipped: Vec<String>,
}

impl Tree {
    pub fn get(&self, p: &SitePath) -> Option<&Content> {
        self.files.get(p)
    }

    pub fn contains(&self, p: &SitePath) -> bool {
        self.files.contains_key(p)
    }

    /// The paths under folder `dir` (`""` or ending in `/`).
    pub fn under<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a SitePath> + 'a {
        self.files
            .keys()
            .filter(move |p| p.as_str().starts_with(dir))
    }

    /// Every file under `root`, a folder on disk. Links are passed over (they could point
    /// anywhere on the machine) and said in `skipped`, as are `.git`, `.svn` and `.hg`
    /// folders (version-control data, not the site).
    pub fn from_dir(root: &Path, limits: &Limits) -> Result<Tree, SiteError> {
        let mut tree = Tree::default();
        let mut stack = vec![(root.to_path_buf(), String::new())];
        while let Some((dir, prefix)) = stack.pop() {
            let entries = fs::read_dir(&dir).map_err(|e| SiteError::io("cannot list", &dir, e))?;
            for e in entries {
                let e = e.map_err(|e| SiteError::io("cannot list", &dir, e))?;
                let name = e.file_name();
                let Some(name) = name.to_str() else {
                    tree.skipped.push(format!(
                        "{}: the name is not UTF-8, so no URL can name it",
                        e.path().display()
                    ));
                    continue;
                };
                let rel = format!("{prefix}{name}");
                let ft = e
                    .file_type()
                    .map_err(|err| SiteError::io("cannot read", &e.path(), err))?;
                if ft.is_symlink() {
                    tree.skipped.push(format!("{rel}: a link (not followed)"));
                } else if ft.is_dir() {
                    if matches!(name, ".git" | ".svn" | ".hg") {
                        tree.skipped.push(format!("{rel}/: version-control data"));
                    } else {
                        stack.push((e.path(), format!("{rel}/")));
                    }
                } else if ft.is_file() {
                    let p = SitePath::new(&rel).map_err(|why| SiteError::BadName {
                        name: rel.clone(),
                        why,
                    })?;
                    tree.files.insert(p, Content::Disk(e.path()));
                    if tree.files.len() > limits.max_entries {
                        return Err(SiteError::TooManyFiles {
                            input: root.display().to_string(),
                            max: limits.max_entries,
                        });
                    }
                }
            }
        }
        Ok(tree)
    }
}
