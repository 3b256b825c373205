//! The file systems of `PPB_FileSystem`, `PPB_FileRef` and `PPB_FileIO` (docs/PEPPER-CLI.md,
//! "Files"): the persistent and temporary ones are the directories `persistent` and
//! `temporary` under `--storage DIR`, by default under a temporary directory removed when
//! the run ends. Paths are Chrome's "internal" paths: absolute within their file system,
//! UTF-8, no `..` component (a `FileRef` with another path is never made). What a name
//! resolves to never leaves the file system: a symbolic link met on the way (the app
//! cannot make one; someone else may have, in a `--storage` directory) is refused with
//! `PP_ERROR_NOACCESS`. The external and isolated file systems are not offered: opening
//! one fails as in Chrome (external: `PP_ERROR_NOACCESS`, the browser refused to open a
//! file system that is not sandboxed; isolated: `PP_ERROR_FAILED`). There is no quota.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{lock, pp_error};

/// `PP_FileSystemType`, `PP_FileType` and `PP_FileOpenFlags`, generated from the interface
/// description.
pub use pexe2wasm_ppapi::contract::{
    pp_fileopenflags as open_flag, pp_filesystemtype as fs_type, pp_filetype as file_type,
};

/// `PP_MakeDirectoryFlags`.
pub mod make_dir_flag {
    pub const WITH_ANCESTORS: i32 = 1 << 0;
    pub const EXCLUSIVE: i32 = 1 << 1;
}

/// `PP_ERROR_FILEEXISTS` and the other file errors.
pub use pp_error::{FILEEXISTS, NOSPACE, NOTAFILE};

/// Where the run's file systems live.
#[derive(Debug)]
pub struct Storage {
    /// `--storage DIR`, or `None` for a temporary directory made on first use.
    given: Option<PathBuf>,
    temp: Mutex<Option<tempfile::TempDir>>,
    /// Set once the run has ended: no temporary directory is made any more.
    ended: std::sync::atomic::AtomicBool,
}

impl Storage {
    pub fn new(given: Option<PathBuf>) -> Storage {
        Storage {
            given,
            temp: Mutex::new(None),
            ended: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The directory of the file system of `ty` (persistent or temporary), made if
    /// missing; a Pepper error if it cannot be.
    pub fn root(&self, ty: i32) -> Result<PathBuf, i32> {
        let name = match ty {
            fs_type::LOCALPERSISTENT => "persistent",
            fs_type::LOCALTEMPORARY => "temporary",
            _ => return Err(pp_error::FAILED),
        };
        let base = match &self.given {
            Some(d) => d.clone(),
            None => {
                let mut t = lock(&self.temp);
                if t.is_none() {
                    if self.ended.load(std::sync::atomic::Ordering::SeqCst) {
                        return Err(pp_error::FAILED);
                    }
                    // The app's data is the user's alone, as a browser profile's is.
                    use std::os::unix::fs::PermissionsExt;
                    *t = Some(
                        tempfile::Builder::new()
                            .prefix("pexe2wasm-storage-")
                            .permissions(std::fs::Permissions::from_mode(0o700))
                            .tempdir()
                            .map_err(|_| pp_error::FAILED)?,
                    );
                }
                t.as_ref()
                    .map(|d| d.path().to_path_buf())
                    .ok_or(pp_error::FAILED)?
            }
        };
        let root = base.join(name);
        std::fs::create_dir_all(&root).map_err(|e| error_of(&e))?;
        // A root that is a link elsewhere is someone's choice for the whole store; the
        // checks below keep names inside whatever it is.
        Ok(root)
    }

    /// The temporary directory, if one was made (tests).
    pub fn temp_dir(&self) -> Option<PathBuf> {
        lock(&self.temp).as_ref().map(|d| d.path().to_path_buf())
    }

    /// The end of the run: removes the temporary directory, if one was made.
    pub fn end(&self) {
        self.ended.store(true, std::sync::atomic::Ordering::SeqCst);
        if let Some(t) = lock(&self.temp).take() {
            let _ = t.close();
        }
    }
}

/// Whether `path` is a valid internal path (Chrome's `IsValidInternalPath`): it starts
/// with `/` and has no `..` component. (It is UTF-8 and has no NUL: it came from a C
/// string and was checked.)
pub fn is_valid_path(path: &str) -> bool {
    path.starts_with('/') && !path.split('/').any(|c| c == "..")
}

/// `path` as Chrome kept it: without a trailing `/`, except for the root.
pub fn normalize(path: &str) -> String {
    let mut p = path.to_string();
    if p.len() > 1 && p.ends_with('/') {
        p.pop();
    }
    p
}

/// The name of `path` (after its last `/`; the root's is `/`).
pub fn name_of(path: &str) -> &str {
    if path == "/" {
        return path;
    }
    match path.rfind('/') {
        Some(i) => &path[i + 1..],
        None => path,
    }
}

/// The parent of `path` (the root's is the root).
pub fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The components of `path` that name something (`.` and empty ones dropped).
fn components(path: &str) -> Vec<&str> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .collect()
}

/// `path` under `root`, or `PP_ERROR_NOACCESS` when a component that exists on the way is
/// a symbolic link (the last one included).
pub fn resolve(root: &Path, path: &str) -> Result<PathBuf, i32> {
    let mut p = root.to_path_buf();
    let mut exists = true;
    for c in components(path) {
        if c == ".." {
            return Err(pp_error::NOACCESS);
        }
        p.push(c);
        if exists {
            match std::fs::symlink_metadata(&p) {
                Ok(m) if m.file_type().is_symlink() => return Err(pp_error::NOACCESS),
                Ok(_) => {}
                // Nothing further exists, so nothing further can be a link.
                Err(_) => exists = false,
            }
        }
    }
    Ok(p)
}

/// Whether `path` names the root of its file system.
pub fn is_root(path: &str) -> bool {
    components(path).is_empty()
}

/// Pepper's code for an OS error (Chrome's `FileErrorToPepperError` of what
/// `base::File` made of it).
pub fn error_of(e: &std::io::Error) -> i32 {
    match e.kind() {
        ErrorKind::NotFound => pp_error::FILENOTFOUND,
        ErrorKind::AlreadyExists => FILEEXISTS,
        ErrorKind::PermissionDenied => pp_error::NOACCESS,
        ErrorKind::OutOfMemory => pp_error::NOMEMORY,
        ErrorKind::StorageFull => NOSPACE,
        ErrorKind::IsADirectory => NOTAFILE,
        _ => pp_error::FAILED,
    }
}

/// A `PP_Time` (seconds since the epoch) for `t`.
pub fn pp_time(t: std::io::Result<SystemTime>) -> f64 {
    match t {
        Ok(t) => match t.duration_since(UNIX_EPOCH) {
            Ok(d) => d.as_secs_f64(),
            Err(e) => -e.duration().as_secs_f64(),
        },
        Err(_) => 0.0,
    }
}

/// The time of `PP_Time` `t`.
pub fn system_time(t: f64) -> SystemTime {
    if !t.is_finite() {
        return UNIX_EPOCH;
    }
    let d = Duration::try_from_secs_f64(t.abs()).unwrap_or(Duration::ZERO);
    if t >= 0.0 {
        UNIX_EPOCH.checked_add(d).unwrap_or(UNIX_EPOCH)
    } else {
        UNIX_EPOCH.checked_sub(d).unwrap_or(UNIX_EPOCH)
    }
}

/// A `PP_FileInfo` (40 bytes) for `m`, of a file system of `ty`.
pub fn file_info(m: &std::fs::Metadata, ty: i32) -> [u8; 40] {
    let kind = if m.is_dir() {
        file_type::DIRECTORY
    } else if m.is_file() {
        file_type::REGULAR
    } else {
        file_type::OTHER
    };
    let size = if m.is_dir() { 0 } else { m.len() as i64 };
    let modified = pp_time(m.modified());
    let created = match m.created() {
        Ok(t) => pp_time(Ok(t)),
        Err(_) => modified,
    };
    let mut b = [0u8; 40];
    b[0..8].copy_from_slice(&size.to_le_bytes());
    b[8..12].copy_from_slice(&kind.to_le_bytes());
    b[12..16].copy_from_slice(&ty.to_le_bytes());
    b[16..24].copy_from_slice(&created.to_le_bytes());
    b[24..32].copy_from_slice(&pp_time(m.accessed()).to_le_bytes());
    b[32..40].copy_from_slice(&modified.to_le_bytes());
    b
}

/// `PPB_FileRef.MakeDirectory` with `flags` (`PP_MakeDirectoryFlags`).
pub fn make_directory(p: &Path, flags: i32) -> i32 {
    let exclusive = flags & make_dir_flag::EXCLUSIVE != 0;
    let ancestors = flags & make_dir_flag::WITH_ANCESTORS != 0;
    if let Ok(m) = std::fs::metadata(p) {
        // Chrome's sandboxed file systems: a file of that name, or an exclusive request
        // for a directory that exists, is FILEEXISTS; a directory that exists is fine.
        return if !m.is_dir() || exclusive {
            FILEEXISTS
        } else {
            pp_error::OK
        };
    }
    let r = if ancestors {
        std::fs::create_dir_all(p)
    } else {
        std::fs::create_dir(p)
    };
    match r {
        Ok(()) => pp_error::OK,
        // A file where a parent directory should be.
        Err(e) if e.kind() == ErrorKind::NotADirectory => pp_error::FAILED,
        Err(e) => error_of(&e),
    }
}

/// `PPB_FileRef.Delete`: a file, or an empty directory.
pub fn delete(p: &Path, is_root: bool) -> i32 {
    if is_root {
        // The file system itself is not the app's to remove.
        return pp_error::NOACCESS;
    }
    match std::fs::symlink_metadata(p) {
        Err(e) => error_of(&e),
        Ok(m) if m.is_dir() => match std::fs::remove_dir(p) {
            Ok(()) => pp_error::OK,
            // Not empty, and the like.
            Err(e) if e.kind() == ErrorKind::NotFound => pp_error::FILENOTFOUND,
            Err(_) => pp_error::FAILED,
        },
        Ok(_) => match std::fs::remove_file(p) {
            Ok(()) => pp_error::OK,
            Err(e) => error_of(&e),
        },
    }
}

/// `PPB_FileRef.Rename` (a move within one file system).
pub fn rename(from: &Path, to: &Path, to_is_root: bool) -> i32 {
    if to_is_root {
        return pp_error::FAILED;
    }
    if let Err(e) = std::fs::symlink_metadata(from) {
        return error_of(&e);
    }
    match std::fs::rename(from, to) {
        Ok(()) => pp_error::OK,
        Err(e) if e.kind() == ErrorKind::NotFound => pp_error::FILENOTFOUND,
        // Onto a non-empty directory, a file onto a directory, into itself, …
        Err(_) => pp_error::FAILED,
    }
}

/// `Touch` of the file or directory at `p`.
pub fn touch(p: &Path, atime: f64, mtime: f64) -> i32 {
    let f = match std::fs::File::open(p) {
        Ok(f) => f,
        Err(e) => return error_of(&e),
    };
    set_times(&f, atime, mtime)
}

/// Sets the times of an open file.
pub fn set_times(f: &std::fs::File, atime: f64, mtime: f64) -> i32 {
    let times = std::fs::FileTimes::new()
        .set_accessed(system_time(atime))
        .set_modified(system_time(mtime));
    match f.set_times(times) {
        Ok(()) => pp_error::OK,
        Err(e) => error_of(&e),
    }
}

/// The entries of the directory `p`, sorted by name: (name, is a directory). Entries
/// whose names are not UTF-8, and links, are left out (no path could name them).
pub fn read_directory(p: &Path) -> Result<Vec<(String, bool)>, i32> {
    let m = std::fs::metadata(p).map_err(|e| error_of(&e))?;
    if !m.is_dir() {
        return Err(pp_error::FAILED);
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(p).map_err(|e| error_of(&e))? {
        let e = e.map_err(|e| error_of(&e))?;
        let Ok(name) = e.file_name().into_string() else {
            continue;
        };
        let Ok(t) = e.file_type() else { continue };
        if t.is_symlink() {
            continue;
        }
        out.push((name, t.is_dir()));
    }
    out.sort();
    Ok(out)
}

/// Opens the file at `p` with Pepper's `flags` (already checked by
/// [`check_open_flags`]), as Chrome's `base::File` did.
pub fn open(p: &Path, flags: i32) -> Result<std::fs::File, i32> {
    use open_flag::*;
    let read = flags & READ != 0;
    let write = flags & WRITE != 0;
    let append = flags & APPEND != 0;
    let create = flags & CREATE != 0;
    let truncate = flags & TRUNCATE != 0;
    let exclusive = flags & EXCLUSIVE != 0;
    if let Ok(m) = std::fs::metadata(p) {
        if m.is_dir() {
            return Err(NOTAFILE);
        }
        if create && exclusive {
            return Err(FILEEXISTS);
        }
    }
    if create && !write && !append {
        // Creating needs write access here; Chrome's open could create read-only.
        let mut o = std::fs::OpenOptions::new();
        o.write(true);
        if exclusive {
            o.create_new(true);
        } else {
            o.create(true);
        }
        o.open(p).map_err(|e| error_of(&e))?;
    }
    let mut o = std::fs::OpenOptions::new();
    // A file opened for neither reading nor writing is opened for reading (it can be
    // queried and touched).
    o.read(read || !(write || append))
        .write(write)
        .append(append);
    if create && (write || append) {
        if exclusive {
            o.create_new(true);
        } else {
            o.create(true);
        }
    }
    if truncate {
        o.truncate(true);
    }
    o.open(p).map_err(|e| error_of(&e))
}

/// Whether Pepper's open `flags` are a valid combination (Chrome's
/// `PepperFileOpenFlagsToPlatformFileFlags`): APPEND excludes WRITE, TRUNCATE needs WRITE.
pub fn check_open_flags(flags: i32) -> bool {
    use open_flag::*;
    let append_with_write = flags & APPEND != 0 && flags & WRITE != 0;
    let truncate_without_write = flags & TRUNCATE != 0 && flags & WRITE == 0;
    !append_with_write && !truncate_without_write
}

/// How far a `PPB_FileSystem` is opened.
#[derive(Debug, Clone, PartialEq, Eq)]
enum FsState {
    New,
    Opening,
    Open(PathBuf),
    Failed,
}

/// A `PPB_FileSystem` resource.
#[derive(Debug)]
pub struct FileSystem {
    pub ty: i32,
    state: Mutex<FsState>,
}

impl FileSystem {
    pub fn new(ty: i32) -> FileSystem {
        FileSystem {
            ty,
            state: Mutex::new(FsState::New),
        }
    }

    /// Marks the start of `Open`; false if `Open` was called before.
    pub fn begin_open(&self) -> bool {
        let mut s = lock(&self.state);
        if *s != FsState::New {
            return false;
        }
        *s = FsState::Opening;
        true
    }

    /// Ends `Open` with its outcome.
    pub fn finish_open(&self, r: Result<PathBuf, i32>) {
        *lock(&self.state) = match r {
            Ok(root) => FsState::Open(root),
            Err(_) => FsState::Failed,
        };
    }

    /// Its directory, once opened.
    pub fn root(&self) -> Option<PathBuf> {
        match &*lock(&self.state) {
            FsState::Open(r) => Some(r.clone()),
            _ => None,
        }
    }
}

/// A `PPB_FileRef` resource: a path (as the app gave it, less a trailing `/`) in a file
/// system.
#[derive(Debug, Clone)]
pub struct FileRef {
    pub fs: std::sync::Arc<FileSystem>,
    pub path: String,
}

impl FileRef {
    /// Where it is on disk: `PP_ERROR_FAILED` while its file system is not open (Chrome's
    /// answer for a file system URL that is not valid yet), `PP_ERROR_NOACCESS` through a
    /// symbolic link.
    pub fn disk_path(&self) -> Result<PathBuf, i32> {
        let root = self.fs.root().ok_or(pp_error::FAILED)?;
        resolve(&root, &self.path)
    }
}

/// Which kind of operation a `PPB_FileIO` has pending (Chrome's `FileIOStateManager`):
/// reads may overlap reads and writes writes; anything else is exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoOp {
    Read,
    Write,
    Exclusive,
}

/// What a `PPB_FileIO` knows, under its lock.
#[derive(Debug, Default)]
pub struct FileIoState {
    /// `Open` succeeded once (a second `Open` fails even after `Close`).
    pub opened: bool,
    /// The open file; `None` before `Open` completes and after `Close`.
    pub file: Option<std::sync::Arc<std::fs::File>>,
    pub flags: i32,
    pub fs_type: i32,
    /// The pending operations' kind and count.
    pub pending: Option<(IoOp, u32)>,
}

impl FileIoState {
    /// Chrome's `CheckOperationState`: whether `op` may start now.
    pub fn check(&self, op: IoOp, should_be_open: bool) -> Result<(), i32> {
        if should_be_open {
            if !self.opened {
                return Err(pp_error::FAILED);
            }
        } else if self.opened {
            return Err(pp_error::FAILED);
        }
        match self.pending {
            Some((p, _)) if p != op || p == IoOp::Exclusive => Err(pp_error::INPROGRESS),
            _ => Ok(()),
        }
    }

    pub fn begin(&mut self, op: IoOp) {
        self.pending = match self.pending {
            Some((p, n)) if p == op => Some((p, n + 1)),
            _ => Some((op, 1)),
        };
    }

    pub fn finish(&mut self) {
        self.pending = match self.pending {
            Some((p, n)) if n > 1 => Some((p, n - 1)),
            _ => None,
        };
    }
}

/// A `PPB_FileIO` resource.
#[derive(Debug, Default)]
pub struct FileIo {
    state: Mutex<FileIoState>,
}

impl FileIo {
    pub fn lock(&self) -> std::sync::MutexGuard<'_, FileIoState> {
        lock(&self.state)
    }
}
