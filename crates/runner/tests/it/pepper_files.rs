//! `PPB_FileSystem`, `PPB_FileRef` and `PPB_FileIO` of the command-line host against
//! Chrome's answers, called one by one (`pepper_support::Harness`). Operations complete
//! through `PP_BlockUntilComplete()` callbacks on a module thread (the harness poses as
//! thread 1), where the host runs them on the calling thread and the results are in
//! memory when the call returns; errors found before any work are checked with optional
//! callbacks on the main thread, which get them back at once.

use pexe2wasm_runner::pepper::storage::{self, Storage};
use pexe2wasm_runner::pepper::{pp_error, INSTANCE};
use pexe2wasm_runner::wasmtime::Val;
use pexe2wasm_testkit::corpus::Scratch;

use crate::pepper_support::{Harness, GET_BUFFER, GET_BUFFER_LOG};

const FS: &str = "PPB_FileSystem;1.0";
const REF10: &str = "PPB_FileRef;1.0";
const REF11: &str = "PPB_FileRef;1.1";
const REF: &str = "PPB_FileRef;1.2";
const IO: &str = "PPB_FileIO;1.1";

const PERSISTENT: i32 = 2;
const TEMPORARY: i32 = 3;
const FILEEXISTS: i32 = -21;
const NOTAFILE: i32 = -24;

const READ: i32 = 1;
const WRITE: i32 = 2;
const CREATE: i32 = 4;
const TRUNCATE: i32 = 8;
const EXCLUSIVE: i32 = 16;
const APPEND: i32 = 32;

/// Where the harness keeps its blocking callback, path strings, and results.
const CB: u32 = 0x100;
const PATH: u32 = 0x2000;
const INFO: u32 = 0x3000;
const VAR: u32 = 0x3100;
const DATA: u32 = 0x10000;

/// A harness with `--storage` in a scratch directory, posing as module thread 1.
fn files() -> (Harness, Scratch) {
    let dir = Scratch::new("pepper-files");
    let storage = dir.dir().to_path_buf();
    let mut h = Harness::with_config(move |c| c.storage = Some(storage));
    h.set_thread(1);
    (h, dir)
}

fn open_fs(h: &mut Harness, ty: i32) -> i32 {
    let fs = h.call(FS, "Create", &[INSTANCE, ty]);
    assert_ne!(fs, 0);
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(FS, "Open", &[Val::I32(fs), Val::I64(0), Val::I32(cb)]),
        pp_error::OK
    );
    fs
}

fn file_ref(h: &mut Harness, fs: i32, path: &str) -> i32 {
    let p = h.cstr(PATH, path.as_bytes());
    h.call(REF, "Create", &[fs, p])
}

/// `op` of PPB_FileRef 1.2 on `r` with a blocking callback last.
fn ref_op(h: &mut Harness, op: &str, args: &[i32]) -> i32 {
    let cb = h.blocking_callback(CB);
    let mut a = args.to_vec();
    a.push(cb);
    h.call(REF, op, &a)
}

fn mkdir(h: &mut Harness, fs: i32, path: &str, flags: i32) -> i32 {
    let r = file_ref(h, fs, path);
    ref_op(h, "MakeDirectory", &[r, flags])
}

/// Opens `path` with `flags`: the FileIO, or the error.
fn open_file(h: &mut Harness, fs: i32, path: &str, flags: i32) -> Result<i32, i32> {
    let r = file_ref(h, fs, path);
    let io = h.call(IO, "Create", &[INSTANCE]);
    let cb = h.blocking_callback(CB);
    match h.call(IO, "Open", &[io, r, flags, cb]) {
        0 => Ok(io),
        e => Err(e),
    }
}

fn write(h: &mut Harness, io: i32, offset: i64, bytes: &[u8]) -> i32 {
    h.write(DATA, bytes);
    let cb = h.blocking_callback(CB);
    h.call_vals(
        IO,
        "Write",
        &[
            Val::I32(io),
            Val::I64(offset),
            Val::I32(DATA as i32),
            Val::I32(bytes.len() as i32),
            Val::I32(cb),
        ],
    )
}

fn read(h: &mut Harness, io: i32, offset: i64, n: i32) -> Result<Vec<u8>, i32> {
    h.write(DATA, &vec![0xee; n.max(0) as usize]);
    let cb = h.blocking_callback(CB);
    let r = h.call_vals(
        IO,
        "Read",
        &[
            Val::I32(io),
            Val::I64(offset),
            Val::I32(DATA as i32),
            Val::I32(n),
            Val::I32(cb),
        ],
    );
    if r < 0 {
        Err(r)
    } else {
        Ok(h.read(DATA, r as u32))
    }
}

#[test]
fn file_systems_are_made_for_the_four_types_and_open_once() {
    let (mut h, dir) = files();
    assert_eq!(h.call(FS, "Create", &[INSTANCE + 1, PERSISTENT]), 0);
    assert_eq!(h.call(FS, "Create", &[INSTANCE, 0]), 0, "INVALID");
    assert_eq!(h.call(FS, "Create", &[INSTANCE, 5]), 0);
    let fs = open_fs(&mut h, PERSISTENT);
    assert_eq!(h.call(FS, "IsFileSystem", &[fs]), 1);
    assert_eq!(h.call(FS, "GetType", &[fs]), PERSISTENT);
    assert_eq!(h.call(FS, "GetType", &[0x999]), 0);
    assert!(dir.join("persistent").is_dir());
    // Open twice: Chrome's plugin side refused the second.
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(FS, "Open", &[Val::I32(fs), Val::I64(0), Val::I32(cb)]),
        pp_error::FAILED
    );
    let tmp = open_fs(&mut h, TEMPORARY);
    assert_eq!(h.call(FS, "GetType", &[tmp]), TEMPORARY);
    assert!(dir.join("temporary").is_dir());
    // External and isolated file systems are made but do not open.
    for (ty, want) in [(1, pp_error::NOACCESS), (4, pp_error::FAILED)] {
        let fs = h.call(FS, "Create", &[INSTANCE, ty]);
        assert_ne!(fs, 0);
        let cb = h.blocking_callback(CB);
        assert_eq!(
            h.call_vals(FS, "Open", &[Val::I32(fs), Val::I64(0), Val::I32(cb)]),
            want,
            "type {ty}"
        );
    }
    // Not a file system.
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(FS, "Open", &[Val::I32(0x999), Val::I64(0), Val::I32(cb)]),
        pp_error::BADRESOURCE
    );
}

#[test]
fn callbacks_follow_chromes_rules() {
    let (mut h, _dir) = files();
    let fs = h.call(FS, "Create", &[INSTANCE, PERSISTENT]);
    // Blocking on the main thread is refused, but a bad resource is what the call
    // returns when both are wrong (Chrome's enter.cc, SetStateForResourceError).
    h.set_thread(0);
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(FS, "Open", &[Val::I32(0x999), Val::I64(0), Val::I32(cb)]),
        pp_error::BADRESOURCE
    );
    // An optional callback gets an error found at once back at once.
    let cb = h.optional_callback(CB);
    assert_eq!(
        h.call_vals(FS, "Open", &[Val::I32(0x999), Val::I64(0), Val::I32(cb)]),
        pp_error::BADRESOURCE
    );
    // A module thread without a message loop cannot take a non-blocking callback.
    h.set_thread(1);
    let cb = h.optional_callback(CB);
    assert_eq!(
        h.call_vals(FS, "Open", &[Val::I32(fs), Val::I64(0), Val::I32(cb)]),
        pp_error::NO_MESSAGE_LOOP
    );
}

#[test]
fn file_ref_paths_follow_chromes_rules() {
    let (mut h, _dir) = files();
    let fs = h.call(FS, "Create", &[INSTANCE, PERSISTENT]);
    for bad in ["", "a/b", "/..", "/a/../b", "/a/.."] {
        assert_eq!(file_ref(&mut h, fs, bad), 0, "{bad:?}");
    }
    let p = h.cstr(PATH, b"/\xff");
    assert_eq!(h.call(REF, "Create", &[fs, p]), 0, "not UTF-8");
    assert_eq!(file_ref(&mut h, 0x999, "/a"), 0, "not a file system");
    // Names with dots that are not `..` are names.
    assert_ne!(file_ref(&mut h, fs, "/a/..b/...c"), 0);

    let r = file_ref(&mut h, fs, "/dir/sub/file.txt/");
    assert_eq!(h.call(REF, "IsFileRef", &[r]), 1);
    assert_eq!(h.call(REF, "IsFileRef", &[fs]), 0);
    assert_eq!(h.call(REF, "GetFileSystemType", &[r]), PERSISTENT);
    h.call(REF, "GetPath", &[VAR as i32, r]);
    assert_eq!(h.string_at(VAR).as_deref(), Some("/dir/sub/file.txt"));
    h.call(REF10, "GetName", &[VAR as i32, r]);
    assert_eq!(h.string_at(VAR).as_deref(), Some("file.txt"));
    let mut at = r;
    for want in ["/dir/sub", "/dir", "/", "/"] {
        at = h.call(REF11, "GetParent", &[at]);
        assert_ne!(at, 0);
        h.call(REF, "GetPath", &[VAR as i32, at]);
        assert_eq!(h.string_at(VAR).as_deref(), Some(want));
    }
    h.call(REF, "GetName", &[VAR as i32, at]);
    assert_eq!(h.string_at(VAR).as_deref(), Some("/"), "the root's name");
    // Not a file ref: undefined, 0.
    h.call(REF, "GetPath", &[VAR as i32, fs]);
    assert_eq!(
        h.read_var(VAR),
        pexe2wasm_runner::pepper::var::PpVar::Undefined
    );
    assert_eq!(h.call(REF, "GetParent", &[fs]), 0);
    assert_eq!(h.call(REF, "GetFileSystemType", &[fs]), 0);
}

#[test]
fn operations_wait_for_the_file_system_to_open() {
    let (mut h, _dir) = files();
    let fs = h.call(FS, "Create", &[INSTANCE, PERSISTENT]);
    let r = file_ref(&mut h, fs, "/a");
    // Chrome: the file system URL is not valid yet.
    assert_eq!(ref_op(&mut h, "MakeDirectory", &[r, 0]), pp_error::FAILED);
    assert_eq!(
        open_file(&mut h, fs, "/a", WRITE | CREATE),
        Err(pp_error::BADARGUMENT)
    );
    let cb = h.blocking_callback(CB);
    h.call_vals(FS, "Open", &[Val::I32(fs), Val::I64(0), Val::I32(cb)]);
    // The ref made before works now.
    assert_eq!(ref_op(&mut h, "MakeDirectory", &[r, 0]), pp_error::OK);
}

#[test]
fn directories_are_made_deleted_and_listed() {
    let (mut h, dir) = files();
    let fs = open_fs(&mut h, PERSISTENT);
    assert_eq!(
        mkdir(&mut h, fs, "/a/b/c", 0),
        pp_error::FILENOTFOUND,
        "no parent"
    );
    assert_eq!(
        mkdir(&mut h, fs, "/a/b/c", 1),
        pp_error::OK,
        "with ancestors"
    );
    assert!(dir.join("persistent/a/b/c").is_dir());
    assert_eq!(
        mkdir(&mut h, fs, "/a/b", 0),
        pp_error::OK,
        "exists, not exclusive"
    );
    assert_eq!(mkdir(&mut h, fs, "/a/b", 2), FILEEXISTS, "exclusive");
    // 1.0 and 1.1 take a PP_Bool (never exclusive).
    let r = file_ref(&mut h, fs, "/a/b");
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(REF11, "MakeDirectory", &[r, 0, cb]), pp_error::OK);
    let r = file_ref(&mut h, fs, "/x/y");
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(REF10, "MakeDirectory", &[r, 1, cb]), pp_error::OK);

    let io = open_file(&mut h, fs, "/a/file", WRITE | CREATE).unwrap();
    h.call(IO, "Close", &[io]);
    assert_eq!(
        mkdir(&mut h, fs, "/a/file", 0),
        FILEEXISTS,
        "a file of that name"
    );
    assert_eq!(
        mkdir(&mut h, fs, "/a/file/d", 1),
        pp_error::FAILED,
        "a file on the way"
    );

    // ReadDirectoryEntries: through the app's PP_ArrayOutput, sorted.
    let a = file_ref(&mut h, fs, "/a");
    h.write(0x500, &[GET_BUFFER, 0x6000].map(u32::to_le_bytes).concat());
    h.write(GET_BUFFER_LOG, &[0; 12]);
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(REF11, "ReadDirectoryEntries", &[a, 0x500, cb]),
        pp_error::OK
    );
    assert_eq!(h.read_u32(GET_BUFFER_LOG), 2, "count");
    assert_eq!(
        h.read_u32(GET_BUFFER_LOG + 4),
        8,
        "sizeof(PP_DirectoryEntry)"
    );
    let entries: Vec<(i32, i32)> = (0..2)
        .map(|i| {
            (
                h.read_u32(0x6000 + 8 * i) as i32,
                h.read_u32(0x6004 + 8 * i) as i32,
            )
        })
        .collect();
    let mut seen = Vec::new();
    for (r, kind) in entries {
        h.call(REF, "GetPath", &[VAR as i32, r]);
        seen.push((h.string_at(VAR).unwrap(), kind));
    }
    assert_eq!(seen, [("/a/b".to_string(), 1), ("/a/file".to_string(), 0)]);
    // The root lists as `/name`; an empty directory gives an empty array.
    let c = file_ref(&mut h, fs, "/a/b/c");
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(REF, "ReadDirectoryEntries", &[c, 0x500, cb]), 0);
    assert_eq!(h.read_u32(GET_BUFFER_LOG), 0);
    // A file or nothing: Chrome's errors.
    let f = file_ref(&mut h, fs, "/a/file");
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(REF, "ReadDirectoryEntries", &[f, 0x500, cb]),
        pp_error::FAILED
    );
    let n = file_ref(&mut h, fs, "/none");
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(REF, "ReadDirectoryEntries", &[n, 0x500, cb]),
        pp_error::FILENOTFOUND
    );

    // Delete: files and empty directories only.
    let b = file_ref(&mut h, fs, "/a/b");
    assert_eq!(
        ref_op(&mut h, "Delete", &[b]),
        pp_error::FAILED,
        "not empty"
    );
    assert_eq!(ref_op(&mut h, "Delete", &[c]), pp_error::OK);
    assert_eq!(ref_op(&mut h, "Delete", &[c]), pp_error::FILENOTFOUND);
    assert_eq!(ref_op(&mut h, "Delete", &[f]), pp_error::OK);
    let root = file_ref(&mut h, fs, "/");
    assert_eq!(ref_op(&mut h, "Delete", &[root]), pp_error::NOACCESS);
    assert!(dir.join("persistent").is_dir());
}

#[test]
fn files_are_written_read_queried_and_closed() {
    let (mut h, dir) = files();
    let fs = open_fs(&mut h, TEMPORARY);
    assert_eq!(
        open_file(&mut h, fs, "/f", READ),
        Err(pp_error::FILENOTFOUND)
    );
    assert_eq!(
        open_file(&mut h, fs, "/f", READ | TRUNCATE),
        Err(pp_error::BADARGUMENT),
        "TRUNCATE needs WRITE"
    );
    assert_eq!(
        open_file(&mut h, fs, "/f", WRITE | APPEND),
        Err(pp_error::BADARGUMENT),
        "APPEND excludes WRITE"
    );
    let io = open_file(&mut h, fs, "/f", READ | WRITE | CREATE).unwrap();
    assert_eq!(h.call(IO, "IsFileIO", &[io]), 1);
    assert_eq!(write(&mut h, io, 0, b"hello world"), 11);
    assert_eq!(write(&mut h, io, 6, b"pepper"), 6);
    assert_eq!(read(&mut h, io, 0, 100).unwrap(), b"hello pepper");
    assert_eq!(read(&mut h, io, 6, 3).unwrap(), b"pep");
    assert_eq!(read(&mut h, io, 50, 10).unwrap(), b"", "past the end: 0");
    assert_eq!(read(&mut h, io, -1, 10), Err(pp_error::FAILED));
    assert_eq!(read(&mut h, io, 0, -1), Err(pp_error::FAILED));
    assert_eq!(write(&mut h, io, -1, b"x"), pp_error::FAILED);
    assert_eq!(
        std::fs::read(dir.join("temporary/f")).unwrap(),
        b"hello pepper"
    );

    // Query: PP_FileInfo.
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(IO, "Query", &[io, INFO as i32, cb]), pp_error::OK);
    assert_eq!(h.read_i64(INFO), 12, "size");
    assert_eq!(h.read_u32(INFO + 8), 0, "PP_FILETYPE_REGULAR");
    assert_eq!(h.read_u32(INFO + 12) as i32, TEMPORARY, "system type");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    assert!((h.read_f64(INFO + 32) - now).abs() < 60.0, "modified");
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(IO, "Query", &[io, 0, cb]), pp_error::BADARGUMENT);

    // SetLength, Touch, Flush.
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(IO, "SetLength", &[Val::I32(io), Val::I64(5), Val::I32(cb)]),
        0
    );
    assert_eq!(read(&mut h, io, 0, 100).unwrap(), b"hello");
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(IO, "SetLength", &[Val::I32(io), Val::I64(-1), Val::I32(cb)]),
        pp_error::FAILED
    );
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(
            IO,
            "Touch",
            &[
                Val::I32(io),
                Val::F64(1_000_000_000f64.to_bits()),
                Val::F64(1_234_567_890.5f64.to_bits()),
                Val::I32(cb)
            ]
        ),
        0
    );
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(IO, "Flush", &[io, cb]), 0);
    let r = file_ref(&mut h, fs, "/f");
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(REF, "Query", &[r, INFO as i32, cb]), pp_error::OK);
    assert_eq!(h.read_i64(INFO), 5);
    assert_eq!(h.read_f64(INFO + 32), 1_234_567_890.5, "the time touched");
    assert_eq!(h.read_f64(INFO + 24), 1_000_000_000.0);

    // ReadToArray (1.1): the bytes go where GetDataBuffer says.
    h.write(0x500, &[GET_BUFFER, 0x7000].map(u32::to_le_bytes).concat());
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(
            IO,
            "ReadToArray",
            &[
                Val::I32(io),
                Val::I64(1),
                Val::I32(100),
                Val::I32(0x500),
                Val::I32(cb)
            ]
        ),
        4
    );
    assert_eq!(h.read_u32(GET_BUFFER_LOG), 4);
    assert_eq!(h.read(0x7000, 4), b"ello");

    // A second Open, and anything after Close, fail.
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(IO, "Open", &[io, r, READ, cb]), pp_error::FAILED);
    h.call(IO, "Close", &[io]);
    assert_eq!(read(&mut h, io, 0, 5), Err(pp_error::FAILED));
    assert_eq!(write(&mut h, io, 0, b"x"), pp_error::FAILED);
    // Not opened yet.
    let fresh = h.call(IO, "Create", &[INSTANCE]);
    assert_eq!(read(&mut h, fresh, 0, 5), Err(pp_error::FAILED));
    assert_eq!(read(&mut h, 0x999, 0, 5), Err(pp_error::BADRESOURCE));
    // Open on a FileIO or a FileRef that does not exist.
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call(IO, "Open", &[0x999, r, READ, cb]),
        pp_error::BADRESOURCE
    );
    assert_eq!(
        h.call(IO, "Open", &[fresh, 0x999, READ, cb]),
        pp_error::BADRESOURCE
    );
}

#[test]
fn open_flags_create_truncate_exclusive_and_append_as_chrome_did() {
    let (mut h, dir) = files();
    let fs = open_fs(&mut h, PERSISTENT);
    let io = open_file(&mut h, fs, "/f", WRITE | CREATE | EXCLUSIVE).unwrap();
    assert_eq!(write(&mut h, io, 0, b"0123456789"), 10);
    h.call(IO, "Close", &[io]);
    assert_eq!(
        open_file(&mut h, fs, "/f", WRITE | CREATE | EXCLUSIVE),
        Err(FILEEXISTS)
    );
    // APPEND writes at the end whatever the offset.
    let io = open_file(&mut h, fs, "/f", APPEND).unwrap();
    assert_eq!(write(&mut h, io, 0, b"ab"), 2);
    h.call(IO, "Close", &[io]);
    assert_eq!(
        std::fs::read(dir.join("persistent/f")).unwrap(),
        b"0123456789ab"
    );
    // TRUNCATE empties; CREATE alone creates an empty file.
    let io = open_file(&mut h, fs, "/f", WRITE | TRUNCATE).unwrap();
    h.call(IO, "Close", &[io]);
    assert_eq!(
        std::fs::metadata(dir.join("persistent/f")).unwrap().len(),
        0
    );
    let io = open_file(&mut h, fs, "/g", CREATE).unwrap();
    h.call(IO, "Close", &[io]);
    assert!(dir.join("persistent/g").is_file());
    // A directory is not a file.
    assert_eq!(mkdir(&mut h, fs, "/d", 0), 0);
    assert_eq!(open_file(&mut h, fs, "/d", READ), Err(NOTAFILE));
    // Opened read-only: writing fails.
    let io = open_file(&mut h, fs, "/g", READ).unwrap();
    assert_eq!(write(&mut h, io, 0, b"x"), pp_error::FAILED);
}

#[test]
fn rename_moves_within_a_file_system_only() {
    let (mut h, dir) = files();
    let p = open_fs(&mut h, PERSISTENT);
    let t = open_fs(&mut h, TEMPORARY);
    let io = open_file(&mut h, p, "/a", WRITE | CREATE).unwrap();
    write(&mut h, io, 0, b"A");
    h.call(IO, "Close", &[io]);
    let a = file_ref(&mut h, p, "/a");
    let b = file_ref(&mut h, p, "/b");
    let other = file_ref(&mut h, t, "/a");
    assert_eq!(ref_op(&mut h, "Rename", &[a, other]), pp_error::FAILED);
    assert_eq!(ref_op(&mut h, "Rename", &[a, 0x999]), pp_error::BADRESOURCE);
    assert_eq!(ref_op(&mut h, "Rename", &[a, b]), pp_error::OK);
    assert_eq!(std::fs::read(dir.join("persistent/b")).unwrap(), b"A");
    assert_eq!(ref_op(&mut h, "Rename", &[a, b]), pp_error::FILENOTFOUND);
    // A second file system of the same type is the same storage.
    let p2 = open_fs(&mut h, PERSISTENT);
    let c = file_ref(&mut h, p2, "/c");
    assert_eq!(ref_op(&mut h, "Rename", &[b, c]), pp_error::OK);
    assert!(dir.join("persistent/c").is_file());
    // Touch of something missing.
    let cb = h.blocking_callback(CB);
    assert_eq!(
        h.call_vals(
            REF,
            "Touch",
            &[
                Val::I32(a),
                Val::F64(0f64.to_bits()),
                Val::F64(0f64.to_bits()),
                Val::I32(cb)
            ]
        ),
        pp_error::FILENOTFOUND
    );
}

#[test]
fn nothing_leads_out_of_the_storage_directory() {
    let (mut h, dir) = files();
    let fs = open_fs(&mut h, PERSISTENT);
    let outside = Scratch::new("pepper-files-outside");
    outside.put("secret", b"not yours");
    std::os::unix::fs::symlink(outside.dir(), dir.join("persistent/link")).unwrap();
    std::os::unix::fs::symlink(outside.join("secret"), dir.join("persistent/file")).unwrap();
    assert_eq!(
        open_file(&mut h, fs, "/link/secret", READ),
        Err(pp_error::NOACCESS)
    );
    assert_eq!(
        open_file(&mut h, fs, "/file", READ),
        Err(pp_error::NOACCESS)
    );
    assert_eq!(mkdir(&mut h, fs, "/link/new", 0), pp_error::NOACCESS);
    let r = file_ref(&mut h, fs, "/link");
    assert_eq!(ref_op(&mut h, "Delete", &[r]), pp_error::NOACCESS);
    // Listing leaves links out.
    h.write(0x500, &[GET_BUFFER, 0x6000].map(u32::to_le_bytes).concat());
    let root = file_ref(&mut h, fs, "/");
    let cb = h.blocking_callback(CB);
    assert_eq!(h.call(REF, "ReadDirectoryEntries", &[root, 0x500, cb]), 0);
    assert_eq!(h.read_u32(GET_BUFFER_LOG), 0);
    assert_eq!(std::fs::read(outside.join("secret")).unwrap(), b"not yours");
    // The path rules alone.
    assert!(!storage::is_valid_path("/a/../../etc"));
    assert_eq!(
        storage::resolve(&dir.join("persistent"), "/./a//b/."),
        Ok(dir.join("persistent/a/b"))
    );
}

#[test]
fn the_default_storage_is_a_temporary_directory_made_on_use_and_removed_at_the_end() {
    let s = Storage::new(None);
    assert_eq!(
        s.temp_dir(),
        None,
        "nothing made before a file system opens"
    );
    let root = s.root(PERSISTENT).unwrap();
    let temp = s.temp_dir().unwrap();
    assert!(root.starts_with(&temp) && root.is_dir());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&temp).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o700, "the user's alone");
    std::fs::write(root.join("f"), b"x").unwrap();
    s.end();
    assert!(!temp.exists(), "{} is left", temp.display());
    assert_eq!(
        s.root(PERSISTENT),
        Err(pp_error::FAILED),
        "none after the end"
    );
    // A given directory is kept.
    let dir = Scratch::new("pepper-files-given");
    let s = Storage::new(Some(dir.dir().to_path_buf()));
    s.root(TEMPORARY).unwrap();
    s.end();
    assert!(dir.join("temporary").is_dir());
}
