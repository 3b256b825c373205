//! `PPB_FileSystem;1.0`, `PPB_FileRef;1.0/1.1/1.2`, `PPB_FileIO;1.0/1.1`: the persistent and
//! temporary file systems under `--storage` ([`super::super::storage`]), with Chrome's
//! answers (`ppapi/proxy/file_*_resource.cc`, the browser's `pepper_file_*_host.cc`):
//! errors found before any work are answered through the callback when it is required
//! ([`answer_now`]); file work runs on an operation thread and what it read is in module
//! memory before the callback runs.

use std::io::Write;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use wasmtime::{AsContextMut, Caller, Linker};

use super::super::resources::Resource;
use super::super::storage::{self, fs_type, FileIo, FileRef, FileSystem, IoOp};
use super::super::var::PpVar;
use super::super::{
    answer_now, lock, mem, pp_error, start_async, start_async_finishing, state, state_for,
    Completion, Finish, PepperState,
};
use super::{link_create, link_is, link_query};
use super::{link_entered, Entered, Kind};
use crate::call_export;
use crate::host::Ctx;

const FS: &str = "PPB_FileSystem;1.0";
const REF_VERSIONS: [&str; 3] = ["PPB_FileRef;1.0", "PPB_FileRef;1.1", "PPB_FileRef;1.2"];
const IO_VERSIONS: [&str; 2] = ["PPB_FileIO;1.0", "PPB_FileIO;1.1"];

/// Chrome read at most this much in one `Read` (a partial read is allowed).
const MAX_READ: i32 = 32 << 20;

const FILE_SYSTEM: Kind<Arc<FileSystem>> = Kind {
    name: "FileSystem",
    find: file_system,
};
const FILE_REF: Kind<FileRef> = Kind {
    name: "FileRef",
    find: file_ref,
};
const FILE_IO: Kind<Arc<FileIo>> = Kind {
    name: "FileIO",
    find: file_io,
};

fn file_system(s: &PepperState, id: i32) -> Option<Arc<FileSystem>> {
    match s.resources().get(id) {
        Some(Resource::FileSystem(f)) => Some(f.clone()),
        _ => None,
    }
}

fn file_ref(s: &PepperState, id: i32) -> Option<FileRef> {
    match s.resources().get(id) {
        Some(Resource::FileRef(f)) => Some(f.clone()),
        _ => None,
    }
}

fn file_io(s: &PepperState, id: i32) -> Option<Arc<FileIo>> {
    match s.resources().get(id) {
        Some(Resource::FileIo(f)) => Some(f.clone()),
        _ => None,
    }
}

/// A `PP_ArrayOutput`: its `GetDataBuffer` and user data.
#[derive(Debug, Clone, Copy)]
struct ArrayOutput {
    get_data_buffer: u32,
    user_data: u32,
}

fn read_array_output(
    cx: impl AsContextMut<Data = Ctx>,
    addr: u32,
) -> wasmtime::Result<ArrayOutput> {
    let [f, u] = mem::read_i32s::<2>(cx, addr)?;
    Ok(ArrayOutput {
        get_data_buffer: f as u32,
        user_data: u as u32,
    })
}

impl ArrayOutput {
    /// Asks the module for room for `count` elements of `size` bytes; the address.
    fn buffer(
        &self,
        cx: impl AsContextMut<Data = Ctx>,
        count: u32,
        size: u32,
    ) -> wasmtime::Result<u32> {
        let p: i32 = call_export(
            cx,
            "__ppp_call_iii_i",
            (
                self.get_data_buffer as i32,
                self.user_data as i32,
                count as i32,
                size as i32,
            ),
        )?;
        Ok(p as u32)
    }
}

fn link_file_system(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    linker.func_wrap(
        FS,
        "Create",
        |caller: Caller<'_, Ctx>, instance: i32, ty: i32| -> wasmtime::Result<i32> {
            let Some(s) = state_for(&caller, instance)? else {
                return Ok(0);
            };
            if !(fs_type::EXTERNAL..=fs_type::ISOLATED).contains(&ty) {
                return Ok(0);
            }
            let id = s
                .resources()
                .add(Resource::FileSystem(Arc::new(FileSystem::new(ty))));
            Ok(id)
        },
    )?;
    link_is(linker, FS, "IsFileSystem", |r| {
        matches!(r, Resource::FileSystem(_))
    })?;
    link_entered(
        linker,
        FS,
        "Open",
        &FILE_SYSTEM,
        |caller: &mut Caller<'_, Ctx>,
         Entered { s, cb, on: fs }: Entered<Arc<FileSystem>>,
         _: (i32, i64, i32)|
         -> wasmtime::Result<i32> {
            if !fs.begin_open() {
                return answer_now(caller, cb, pp_error::FAILED);
            }
            let s2 = s.clone();
            start_async(caller, cb, move || {
                let r = match fs.ty {
                    fs_type::LOCALPERSISTENT | fs_type::LOCALTEMPORARY => s2.storage.root(fs.ty),
                    // Chrome's browser would not open a file system that is not sandboxed.
                    fs_type::EXTERNAL => Err(pp_error::NOACCESS),
                    _ => Err(pp_error::FAILED),
                };
                let code = r.as_ref().err().copied().unwrap_or(pp_error::OK);
                fs.finish_open(r);
                Completion::result(code)
            })
        },
    )?;
    link_query(linker, FS, "GetType", |s, fs| {
        file_system(s, fs).map_or(fs_type::INVALID, |f| f.ty)
    })?;
    Ok(())
}

/// Runs `op` on `file`'s path on an operation thread (after Chrome's synchronous checks):
/// a bad resource, a file system not open yet.
fn ref_op(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<FileRef>,
    op: impl FnOnce(&FileRef, std::path::PathBuf) -> Completion + Send + 'static,
) -> wasmtime::Result<i32> {
    let Entered { cb, on: f, .. } = e;
    if f.fs.root().is_none() {
        return answer_now(caller, cb, pp_error::FAILED);
    }
    start_async(caller, cb, move || match f.disk_path() {
        Ok(p) => op(&f, p),
        Err(e) => Completion::result(e),
    })
}

fn link_file_ref(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for (version, iface) in REF_VERSIONS.into_iter().enumerate() {
        linker.func_wrap(
            iface,
            "Create",
            |mut caller: Caller<'_, Ctx>, fs: i32, path: i32| -> wasmtime::Result<i32> {
                let s = state(&caller)?;
                let Some(fs) = file_system(&s, fs) else {
                    return Ok(0);
                };
                let bytes = mem::read_cstr(&mut caller, path as u32, 1 << 20)?;
                let Ok(text) = String::from_utf8(bytes) else {
                    return Ok(0);
                };
                if !storage::is_valid_path(&text) {
                    return Ok(0);
                }
                let f = FileRef {
                    fs,
                    path: storage::normalize(&text),
                };
                let id = s.resources().add(Resource::FileRef(f));
                Ok(id)
            },
        )?;
        link_is(linker, iface, "IsFileRef", |r| {
            matches!(r, Resource::FileRef(_))
        })?;
        link_query(linker, iface, "GetFileSystemType", |s, res| {
            file_ref(s, res).map_or(fs_type::INVALID, |f| f.fs.ty)
        })?;
        for (name, whole) in [("GetName", false), ("GetPath", true)] {
            linker.func_wrap(
                iface,
                name,
                move |mut caller: Caller<'_, Ctx>, ret: i32, res: i32| -> wasmtime::Result<()> {
                    let s = state(&caller)?;
                    let v = match file_ref(&s, res) {
                        Some(f) => {
                            let text = if whole {
                                f.path.as_str()
                            } else {
                                storage::name_of(&f.path)
                            };
                            lock(&s.vars).string_from_utf8(text.as_bytes())
                        }
                        None => PpVar::Undefined,
                    };
                    mem::write_var(&mut caller, ret as u32, v)
                },
            )?;
        }
        link_query(linker, iface, "GetParent", |s, res| {
            let Some(f) = file_ref(s, res) else {
                return 0;
            };
            let parent = FileRef {
                fs: f.fs.clone(),
                path: storage::parent_of(&f.path).to_string(),
            };
            s.resources().add(Resource::FileRef(parent))
        })?;
        // 1.0 and 1.1 take a PP_Bool: with ancestors or not (never exclusive); 1.2 takes
        // PP_MakeDirectoryFlags.
        let takes_bool = version < 2;
        link_entered(
            linker,
            iface,
            "MakeDirectory",
            &FILE_REF,
            move |caller: &mut Caller<'_, Ctx>,
                  e: Entered<FileRef>,
                  (_, flags, _): (i32, i32, i32)|
                  -> wasmtime::Result<i32> {
                let flags = match (takes_bool, flags) {
                    (true, 0) => 0,
                    (true, _) => storage::make_dir_flag::WITH_ANCESTORS,
                    (false, flags) => flags,
                };
                ref_op(caller, e, move |_, p| {
                    Completion::result(storage::make_directory(&p, flags))
                })
            },
        )?;
        link_entered(
            linker,
            iface,
            "Touch",
            &FILE_REF,
            |caller: &mut Caller<'_, Ctx>,
             e: Entered<FileRef>,
             (_, atime, mtime, _): (i32, f64, f64, i32)|
             -> wasmtime::Result<i32> {
                ref_op(caller, e, move |_, p| {
                    Completion::result(storage::touch(&p, atime, mtime))
                })
            },
        )?;
        link_entered(
            linker,
            iface,
            "Delete",
            &FILE_REF,
            |caller: &mut Caller<'_, Ctx>, e: Entered<FileRef>, _: (i32, i32)| {
                ref_op(caller, e, move |f, p| {
                    Completion::result(storage::delete(&p, storage::is_root(&f.path)))
                })
            },
        )?;
        link_entered(
            linker,
            iface,
            "Rename",
            &FILE_REF,
            |caller: &mut Caller<'_, Ctx>,
             Entered { s, cb, on: from }: Entered<FileRef>,
             (_, new_file, _): (i32, i32, i32)|
             -> wasmtime::Result<i32> {
                let Some(to) = file_ref(&s, new_file) else {
                    return answer_now(caller, cb, pp_error::BADRESOURCE);
                };
                // Both open, and the same file system.
                if from.fs.root().is_none() || to.fs.root().is_none() || from.fs.ty != to.fs.ty {
                    return answer_now(caller, cb, pp_error::FAILED);
                }
                start_async(caller, cb, move || {
                    let code = match (from.disk_path(), to.disk_path()) {
                        (Ok(p), Ok(q)) => storage::rename(&p, &q, storage::is_root(&to.path)),
                        (Err(e), _) | (_, Err(e)) => e,
                    };
                    Completion::result(code)
                })
            },
        )?;
        if version == 0 {
            continue;
        }
        link_entered(
            linker,
            iface,
            "Query",
            &FILE_REF,
            |caller: &mut Caller<'_, Ctx>,
             e: Entered<FileRef>,
             (_, info, _): (i32, i32, i32)|
             -> wasmtime::Result<i32> {
                if info == 0 {
                    return answer_now(caller, e.cb, pp_error::BADARGUMENT);
                }
                ref_op(caller, e, move |f, p| match std::fs::metadata(&p) {
                    Ok(m) => Completion {
                        result: pp_error::OK,
                        writes: vec![(info as u32, storage::file_info(&m, f.fs.ty).to_vec())],
                    },
                    Err(e) => Completion::result(storage::error_of(&e)),
                })
            },
        )?;
        link_entered(
            linker,
            iface,
            "ReadDirectoryEntries",
            &FILE_REF,
            |caller: &mut Caller<'_, Ctx>,
             Entered { s, cb, on: f }: Entered<FileRef>,
             (_, output, _): (i32, i32, i32)|
             -> wasmtime::Result<i32> {
                let out = read_array_output(&mut *caller, output as u32)?;
                if f.fs.root().is_none() {
                    return answer_now(caller, cb, pp_error::FAILED);
                }
                let s2 = s.clone();
                start_async_finishing(caller, cb, move || {
                    let entries = f.disk_path().and_then(|p| storage::read_directory(&p));
                    let finish: Finish = Box::new(move |mut cx| {
                        let entries = match entries {
                            Ok(e) => e,
                            Err(code) => return Ok(code),
                        };
                        if out.get_data_buffer == 0 {
                            return Ok(pp_error::BADARGUMENT);
                        }
                        // The entries' refs, owned by the app once handed over.
                        let dir = if storage::is_root(&f.path) {
                            ""
                        } else {
                            f.path.as_str()
                        };
                        let mut bytes = Vec::with_capacity(entries.len() * 8);
                        let mut ids = Vec::with_capacity(entries.len());
                        for (name, is_dir) in &entries {
                            let r = FileRef {
                                fs: f.fs.clone(),
                                path: format!("{dir}/{name}"),
                            };
                            let id = s2.resources().add(Resource::FileRef(r));
                            ids.push(id);
                            let kind = if *is_dir {
                                storage::file_type::DIRECTORY
                            } else {
                                storage::file_type::REGULAR
                            };
                            bytes.extend_from_slice(&id.to_le_bytes());
                            bytes.extend_from_slice(&kind.to_le_bytes());
                        }
                        let at = out.buffer(&mut cx, entries.len() as u32, 8)?;
                        if at == 0 && !ids.is_empty() {
                            // No room given: Chrome's writer stored nothing.
                            let mut r = s2.resources();
                            for id in ids {
                                r.release(id);
                            }
                            return Ok(pp_error::OK);
                        }
                        if !bytes.is_empty() {
                            crate::write_memory(&mut cx, at, &bytes)?;
                        }
                        Ok(pp_error::OK)
                    });
                    finish
                })
            },
        )?;
    }
    Ok(())
}

/// Chrome's synchronous checks of a `PPB_FileIO` operation of kind `op` on an open file:
/// its open file (none once closed) and open flags, or the error.
fn begin_io(f: &FileIo, op: IoOp) -> Result<(Option<Arc<std::fs::File>>, i32), i32> {
    let st = f.lock();
    st.check(op, true)?;
    Ok((st.file.clone(), st.flags))
}

/// Runs `work` on the open file of `io` as operation `op`, Chrome's checks first.
fn io_op(
    caller: &mut Caller<'_, Ctx>,
    Entered { cb, on: f, .. }: Entered<Arc<FileIo>>,
    op: IoOp,
    check: impl FnOnce() -> Result<(), i32>,
    work: impl FnOnce(&std::fs::File, i32) -> Completion + Send + 'static,
) -> wasmtime::Result<i32> {
    let (file, flags) = match begin_io(&f, op) {
        Ok(v) => v,
        Err(e) => return answer_now(caller, cb, e),
    };
    if let Err(e) = check() {
        return answer_now(caller, cb, e);
    }
    let Some(file) = file else {
        return answer_now(caller, cb, pp_error::FAILED);
    };
    f.lock().begin(op);
    let f2 = f.clone();
    let r = start_async(caller, cb, move || {
        let done = work(&file, flags);
        f2.lock().finish();
        done
    })?;
    if !cb.is_blocking() && r != pp_error::COMPLETIONPENDING {
        // It did not start.
        f.lock().finish();
    }
    Ok(r)
}

/// Reads up to `n` bytes at `offset` (until `n` or the end, as `base::File::Read`).
fn read_at(file: &std::fs::File, offset: i64, n: usize) -> Result<Vec<u8>, i32> {
    if offset < 0 {
        return Err(pp_error::FAILED);
    }
    let mut buf = vec![0u8; n];
    let mut got = 0;
    while got < n {
        match file.read_at(&mut buf[got..], offset as u64 + got as u64) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return Err(pp_error::FAILED),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// `PPB_FileIO.Open`: opens the file a `PPB_FileRef` names, on the operation thread.
fn io_open(
    caller: &mut Caller<'_, Ctx>,
    Entered { s, cb, on: f }: Entered<Arc<FileIo>>,
    (_, file, flags, _): (i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Some(r) = file_ref(&s, file) else {
        return answer_now(caller, cb, pp_error::BADRESOURCE);
    };
    let checked = {
        let st = f.lock();
        st.check(IoOp::Exclusive, false)
    }
    .and_then(|()| {
        if !storage::check_open_flags(flags) || r.fs.root().is_none() {
            // A file system not open has no URL for the file yet.
            Err(pp_error::BADARGUMENT)
        } else {
            Ok(())
        }
    });
    if let Err(e) = checked {
        return answer_now(caller, cb, e);
    }
    {
        let mut st = f.lock();
        st.begin(IoOp::Exclusive);
        st.flags = flags;
        st.fs_type = r.fs.ty;
    }
    let f2 = f.clone();
    let res = start_async(caller, cb, move || {
        let opened = r.disk_path().and_then(|p| storage::open(&p, flags));
        let mut st = f2.lock();
        st.finish();
        match opened {
            Ok(file) => {
                st.file = Some(Arc::new(file));
                st.opened = true;
                Completion::result(pp_error::OK)
            }
            Err(e) => Completion::result(e),
        }
    })?;
    if !cb.is_blocking() && res != pp_error::COMPLETIONPENDING {
        // It did not start.
        f.lock().finish();
    }
    Ok(res)
}

/// `PPB_FileIO.Query`: the open file's `PP_FileInfo`.
fn io_query(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<FileIo>>,
    (_, info, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let fs_ty = e.on.lock().fs_type;
    io_op(
        caller,
        e,
        IoOp::Exclusive,
        || {
            if info == 0 {
                Err(pp_error::BADARGUMENT)
            } else {
                Ok(())
            }
        },
        move |file, _| match file.metadata() {
            Ok(m) => Completion {
                result: pp_error::OK,
                writes: vec![(info as u32, storage::file_info(&m, fs_ty).to_vec())],
            },
            Err(_) => Completion::result(pp_error::FAILED),
        },
    )
}

/// `PPB_FileIO.Touch`: sets the open file's access and modification times.
fn io_touch(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<FileIo>>,
    (_, atime, mtime, _): (i32, f64, f64, i32),
) -> wasmtime::Result<i32> {
    io_op(
        caller,
        e,
        IoOp::Exclusive,
        || Ok(()),
        move |file, _| Completion::result(storage::set_times(file, atime, mtime)),
    )
}

/// `PPB_FileIO.Read`: up to `n` bytes at `offset` into the module's buffer.
fn io_read(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<FileIo>>,
    (_, offset, buf, n, _): (i32, i64, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let n = n.min(MAX_READ);
    io_op(
        caller,
        e,
        IoOp::Read,
        || if n < 0 { Err(pp_error::FAILED) } else { Ok(()) },
        move |file, _| match read_at(file, offset, n as usize) {
            Ok(bytes) => Completion {
                result: bytes.len() as i32,
                writes: vec![(buf as u32, bytes)],
            },
            Err(e) => Completion::result(e),
        },
    )
}

/// `PPB_FileIO.Write`: `n` bytes at `offset` (at the end when opened to append).
fn io_write(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<FileIo>>,
    (_, offset, buf, n, _): (i32, i64, i32, i32, i32),
) -> wasmtime::Result<i32> {
    if buf == 0 || offset < 0 || n < 0 {
        return answer_now(caller, e.cb, pp_error::FAILED);
    }
    // The bytes are copied now: the app may reuse its buffer once the call
    // returns.
    let bytes = if n > 0 {
        crate::read_memory(&mut *caller, buf as u32, n as u32)?
    } else {
        Vec::new()
    };
    io_op(
        caller,
        e,
        IoOp::Write,
        || Ok(()),
        move |file, flags| {
            let r = if flags & storage::open_flag::APPEND != 0 {
                let mut f: &std::fs::File = file;
                f.write_all(&bytes)
            } else {
                file.write_all_at(&bytes, offset as u64)
            };
            Completion::result(match r {
                Ok(()) => bytes.len() as i32,
                Err(_) => pp_error::FAILED,
            })
        },
    )
}

/// `PPB_FileIO.SetLength`: truncates or extends the open file.
fn io_set_length(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<FileIo>>,
    (_, len, _): (i32, i64, i32),
) -> wasmtime::Result<i32> {
    io_op(
        caller,
        e,
        IoOp::Exclusive,
        || {
            if len < 0 {
                Err(pp_error::FAILED)
            } else {
                Ok(())
            }
        },
        move |file, _| {
            Completion::result(match file.set_len(len as u64) {
                Ok(()) => pp_error::OK,
                Err(e) => storage::error_of(&e),
            })
        },
    )
}

/// `PPB_FileIO.Flush`: the file's data to disk.
fn io_flush(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<FileIo>>,
    _: (i32, i32),
) -> wasmtime::Result<i32> {
    io_op(
        caller,
        e,
        IoOp::Exclusive,
        || Ok(()),
        |file, _| {
            Completion::result(match file.sync_all() {
                Ok(()) => pp_error::OK,
                Err(e) => storage::error_of(&e),
            })
        },
    )
}

/// `PPB_FileIO.Close`: the file closes; operations under way end first.
fn io_close(caller: Caller<'_, Ctx>, io: i32) -> wasmtime::Result<()> {
    let s = state(&caller)?;
    if let Some(f) = file_io(&s, io) {
        // Operations under way keep the file until they end.
        f.lock().file = None;
    }
    Ok(())
}

/// `PPB_FileIO.ReadToArray` (1.1): reads into a buffer the module's array output allocates.
fn io_read_to_array(
    caller: &mut Caller<'_, Ctx>,
    Entered { cb: cbv, on: f, .. }: Entered<Arc<FileIo>>,
    (_, offset, max, output, _): (i32, i64, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let (file, _) = match begin_io(&f, IoOp::Read) {
        Ok(v) => v,
        Err(e) => return answer_now(&mut *caller, cbv, e),
    };
    if output == 0 {
        return answer_now(&mut *caller, cbv, pp_error::BADARGUMENT);
    }
    let out = read_array_output(&mut *caller, output as u32)?;
    if max < 0 {
        return answer_now(&mut *caller, cbv, pp_error::FAILED);
    }
    let Some(file) = file else {
        return answer_now(&mut *caller, cbv, pp_error::FAILED);
    };
    let n = max.min(MAX_READ) as usize;
    f.lock().begin(IoOp::Read);
    let f2 = f.clone();
    start_async_finishing(&mut *caller, cbv, move || {
        let got = read_at(&file, offset, n);
        f2.lock().finish();
        let finish: Finish = Box::new(move |mut cx| {
            let bytes = match got {
                Ok(b) => b,
                Err(e) => return Ok(e),
            };
            if out.get_data_buffer == 0 {
                return Ok(pp_error::FAILED);
            }
            let at = out.buffer(&mut cx, bytes.len() as u32, 1)?;
            if at != 0 && !bytes.is_empty() {
                crate::write_memory(&mut cx, at, &bytes)?;
            }
            Ok(bytes.len() as i32)
        });
        finish
    })
}

/// `PPB_FileIO` 1.0 and 1.1: one function per call.
fn link_file_io(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    for (version, iface) in IO_VERSIONS.into_iter().enumerate() {
        link_create(linker, iface, || Resource::FileIo(Arc::default()))?;
        link_is(linker, iface, "IsFileIO", |r| {
            matches!(r, Resource::FileIo(_))
        })?;
        link_entered(linker, iface, "Open", &FILE_IO, io_open)?;
        link_entered(linker, iface, "Query", &FILE_IO, io_query)?;
        link_entered(linker, iface, "Touch", &FILE_IO, io_touch)?;
        link_entered(linker, iface, "Read", &FILE_IO, io_read)?;
        link_entered(linker, iface, "Write", &FILE_IO, io_write)?;
        link_entered(linker, iface, "SetLength", &FILE_IO, io_set_length)?;
        link_entered(linker, iface, "Flush", &FILE_IO, io_flush)?;
        linker.func_wrap(iface, "Close", io_close)?;
        if version > 0 {
            link_entered(linker, iface, "ReadToArray", &FILE_IO, io_read_to_array)?;
        }
    }
    Ok(())
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_file_system(linker)?;
    link_file_ref(linker)?;
    link_file_io(linker)
}
