//! The site writer's errors: each names the input, and inside an archive the entry.

use std::path::Path;

use crate::path::PathError;

#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    #[error("{path}: {what}: {source}")]
    Io {
        what: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("{0}")]
    Archive(#[from] ArchiveError),
    #[error("{name:?}: a file name that {why}")]
    BadName { name: String, why: PathError },
    #[error("{input}: more than {max} files")]
    TooManyFiles { input: String, max: usize },
    #[error("{0}: not something `web` takes: give a folder, a .crx, a .zip, a manifest.json, an .html page, an .nmf or a .pexe")]
    UnknownInput(String),
    #[error("{path}: {why}")]
    BadManifest { path: String, why: String },
    #[error(
        "the input has its own {0}, where the site's host files go; rename it or use another input"
    )]
    HostNameTaken(String),
    #[error("the output folder {out} is {relation} the input {input}; the input is never changed: write elsewhere")]
    OutputOverlapsInput {
        out: String,
        input: String,
        relation: &'static str,
    },
    #[error("{path}: not written: {why}")]
    Unwritable { path: String, why: String },
}

impl SiteError {
    pub fn io(what: &'static str, path: &Path, source: std::io::Error) -> SiteError {
        SiteError::Io {
            what,
            path: path.display().to_string(),
            source,
        }
    }
}

/// Why an archive (`.crx`, `.zip`) is refused. `entry` is the name as the archive has it.
#[derive(Debug, thiserror::Error)]
pub enum ArchiveError {
    #[error("{archive}: a .crx header that {why}")]
    BadCrx { archive: String, why: String },
    #[error("{archive}: not a zip archive ({why})")]
    NotZip { archive: String, why: String },
    #[error("{archive}: entry {entry:?}: {why}")]
    Entry {
        archive: String,
        entry: String,
        why: String,
    },
    #[error("{archive}: entry {entry:?} is a link; archives may hold only files and folders")]
    Link { archive: String, entry: String },
    #[error("{archive}: entry {entry:?} is there twice (also as {other:?}; names that differ only in case collide on many disks)")]
    Duplicate {
        archive: String,
        entry: String,
        other: String,
    },
    #[error(
        "{archive}: entry {entry:?} unpacks to more than {limit} ({what}); refused as a zip bomb"
    )]
    Bomb {
        archive: String,
        entry: String,
        what: &'static str,
        limit: String,
    },
    #[error("{archive}: more than {max} entries")]
    TooManyEntries { archive: String, max: usize },
}
