//! `PPB_URLRequestInfo;1.0`, `PPB_URLLoader;1.0`, `PPB_URLResponseInfo;1.0`: loading URLs
//! the way Chrome's plugin-side resources did (`ppapi/proxy/url_loader_resource.cc` and
//! friends), from where `--origin` and `--url-map` say ([`super::super::fetch`]).
//!
//! * `Open` always completes through its callback: a request that may not be made
//!   (`PP_ERROR_NOACCESS` for a URL no rule allows, with a note naming it) fails there, as
//!   a load failed in Chrome; a response of any status opens (`PP_OK`).
//! * `ReadResponseBody` completes at once with buffered bytes for an optional or blocking
//!   callback, later otherwise; 0 (`PP_OK`) at the end of the body.
//! * `STREAMTOFILE` is refused (Chrome's last versions no longer supported it), so
//!   `FinishStreamingToFile` answers `PP_ERROR_NOTSUPPORTED` and `GetBodyAsFileRef` 0.
//! * Chrome's quirk of answering `REDIRECTMETHOD` with the status text is not kept: the
//!   method `FollowRedirect` uses, as the header documents.

use std::sync::Arc;

use wasmtime::{Caller, Linker};

use super::super::fetch::Head;
use super::super::loader::{BodyItem, Loader, LoaderHandle, Mode, PropertyValue, RequestInfo};
use super::super::resources::Resource;
use super::super::var::PpVar;
use super::super::{
    answer_now, lock, mem, pp_error, start_async, start_async_finishing, state, Completion, Finish,
    PepperState,
};
use super::{link_create, link_is};
use super::{link_entered, Entered, Kind};
use crate::host::Ctx;

const REQ: &str = "PPB_URLRequestInfo;1.0";
const LOADER: &str = "PPB_URLLoader;1.0";
const RESP: &str = "PPB_URLResponseInfo;1.0";

/// `PP_URLResponseProperty`.
mod response_property {
    pub const URL: i32 = 0;
    pub const REDIRECTURL: i32 = 1;
    pub const REDIRECTMETHOD: i32 = 2;
    pub const STATUSCODE: i32 = 3;
    pub const STATUSLINE: i32 = 4;
    pub const HEADERS: i32 = 5;
}

const URL_LOADER: Kind<Arc<Loader>> = Kind {
    name: "URLLoader",
    find: loader_of,
};

fn loader_of(s: &PepperState, id: i32) -> Option<Arc<Loader>> {
    match s.resources().get(id) {
        Some(Resource::UrlLoader(h)) => Some(h.0.clone()),
        _ => None,
    }
}

fn link_request_info(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_create(linker, REQ, || Resource::UrlRequestInfo(Box::default()))?;
    link_is(linker, REQ, "IsURLRequestInfo", |r| {
        matches!(r, Resource::UrlRequestInfo(_))
    })?;
    linker.func_wrap(
        REQ,
        "SetProperty",
        |mut caller: Caller<'_, Ctx>, req: i32, property: i32, value: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let v = mem::read_var(&mut caller, value as u32)?;
            let value = match v {
                PpVar::Undefined => Some(PropertyValue::Undefined),
                PpVar::Bool(b) => Some(PropertyValue::Bool(b)),
                PpVar::Int32(i) => Some(PropertyValue::Int(i)),
                PpVar::String(_) => s
                    .vars()
                    .string(v)
                    .map(|t| PropertyValue::String(t.to_string())),
                _ => None,
            };
            let mut r = s.resources();
            let Some(Resource::UrlRequestInfo(info)) = r.get_mut(req) else {
                return Ok(0);
            };
            let ok = value.is_some_and(|value| info.set(property, value));
            drop(r);
            if !ok {
                // Chrome logged this to the console.
                s.sink().console(
                    3,
                    None,
                    &format!(
                        "PPB_URLRequestInfo.SetProperty: Attempted to set a value for PP_URLRequestProperty {property}, but either this property type is invalid or its parameter was inappropriate (e.g., the wrong type of PP_Var)."
                    ),
                );
            }
            Ok(ok as i32)
        },
    )?;
    linker.func_wrap(
        REQ,
        "AppendDataToBody",
        |mut caller: Caller<'_, Ctx>, req: i32, data: i32, len: i32| -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            if !matches!(s.resources().get(req), Some(Resource::UrlRequestInfo(_))) {
                return Ok(0);
            }
            let bytes = if len != 0 {
                crate::read_memory(&mut caller, data as u32, len as u32)?
            } else {
                Vec::new()
            };
            let mut r = s.resources();
            let Some(Resource::UrlRequestInfo(info)) = r.get_mut(req) else {
                return Ok(0);
            };
            if !bytes.is_empty() {
                info.body.push(BodyItem::Data(bytes));
            }
            Ok(1)
        },
    )?;
    linker.func_wrap(
        REQ,
        "AppendFileToBody",
        |caller: Caller<'_, Ctx>,
         req: i32,
         file_ref: i32,
         start: i64,
         len: i64,
         expected_mtime: f64|
         -> wasmtime::Result<i32> {
            let s = state(&caller)?;
            let mut r = s.resources();
            let Some(Resource::FileRef(file)) = r.get(file_ref) else {
                return Ok(0);
            };
            let file = file.clone();
            let Some(Resource::UrlRequestInfo(info)) = r.get_mut(req) else {
                return Ok(0);
            };
            if len == 0 {
                return Ok(1);
            }
            if start < 0 || len < -1 {
                return Ok(0);
            }
            info.body.push(BodyItem::File {
                file,
                start,
                len,
                expected_mtime,
            });
            Ok(1)
        },
    )?;
    Ok(())
}

/// Opens (or, with `deferred`, follows the held redirect of) `loader` on the operation's
/// thread; the callback's result.
fn open_async(
    caller: &mut Caller<'_, Ctx>,
    cb: mem::Callback,
    loader: Arc<Loader>,
    info: Option<RequestInfo>,
) -> wasmtime::Result<i32> {
    let s = state(caller)?;
    let s2 = s.clone();
    let l2 = loader.clone();
    let r = start_async_finishing(caller, cb, move || -> Finish {
        let target = match &info {
            // Open: the request as the app set it up.
            Some(info) => info
                .to_request()
                .and_then(|req| s2.urls.resolve(&info.url).map(|u| (u, req))),
            // FollowRedirect: where the held redirect leads.
            None => {
                let mut st = l2.lock();
                match st.deferred.take() {
                    Some((u, req)) => Ok((u, req)),
                    None => Err(super::super::fetch::Refused {
                        code: pp_error::FAILED,
                        why: "no redirect to follow".into(),
                    }),
                }
            }
        };
        let opened = match target {
            Ok((url, req)) => l2.open(&s2.urls, url, req),
            Err(refused) => {
                let mut st = l2.lock();
                st.mode = Mode::Done;
                st.done.get_or_insert(refused.code);
                super::super::loader::Opened {
                    result: if st.closed {
                        pp_error::ABORTED
                    } else {
                        refused.code
                    },
                    note: Some(refused.why),
                }
            }
        };
        if let Some(note) = &opened.note {
            if opened.result != pp_error::ABORTED {
                s2.sink().note(&format!("PPB_URLLoader: {note}"));
            }
        }
        l2.lock().pending = false;
        let result = opened.result;
        // Decided on the callback's thread: a Close before the callback runs aborts it,
        // whatever the load came to, as in Chrome, where the answer reaches the plugin's
        // thread as a task after the Close (url_loader_resource.cc, `Close`: PostAbort).
        Box::new(move |_| {
            Ok(if l2.lock().closed {
                pp_error::ABORTED
            } else {
                result
            })
        })
    })?;
    if r != pp_error::COMPLETIONPENDING && r < 0 {
        // Refused before it started (no thread, say): the loader is as it was.
        let mut st = loader.lock();
        st.pending = false;
    }
    Ok(r)
}

/// `PPB_URLLoader.Open`: starts the request a `PPB_URLRequestInfo` describes.
fn loader_open(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<Loader>>,
    (_, request, _): (i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { s, cb, on: l } = e;
    let info = match s.resources().get(request) {
        Some(Resource::UrlRequestInfo(i)) => Some((**i).clone()),
        _ => None,
    };
    let Some(info) = info else {
        s.sink().console(
            3,
            None,
            "PPB_URLLoader.Open: invalid request resource ID. (Hint to C++ wrapper users: use the ResourceRequest constructor that takes an instance or else the request will be null.)",
        );
        return answer_now(caller, cb, pp_error::BADARGUMENT);
    };
    {
        let mut st = l.lock();
        if st.pending || st.mode != Mode::WaitingToOpen {
            drop(st);
            return answer_now(caller, cb, pp_error::INPROGRESS);
        }
        st.mode = Mode::Opening;
        st.pending = true;
        st.request = Some(info.clone());
    }
    open_async(caller, cb, l, Some(info))
}

/// `PPB_URLLoader.FollowRedirect`: goes on to a redirect the request chose to stop at.
fn loader_follow_redirect(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<Loader>>,
    (_, _): (i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { cb, on: l, .. } = e;
    {
        let mut st = l.lock();
        if st.pending || st.mode != Mode::Opening || st.deferred.is_none() {
            drop(st);
            return answer_now(caller, cb, pp_error::INPROGRESS);
        }
        st.pending = true;
    }
    open_async(caller, cb, l, None)
}

/// `PPB_URLLoader.GetResponseInfo`: the response's `PPB_URLResponseInfo`, the same resource each time.
fn loader_get_response_info(caller: Caller<'_, Ctx>, loader: i32) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let Some(l) = loader_of(&s, loader) else {
        return Ok(0);
    };
    let (head, cached) = {
        let st = l.lock();
        (st.head.clone(), st.response_id)
    };
    let Some(head) = head else { return Ok(0) };
    let id = {
        let mut r = s.resources();
        let same =
            matches!(r.get(cached), Some(Resource::UrlResponseInfo(h)) if Arc::ptr_eq(h, &head));
        if same {
            r.add_ref(cached);
            cached
        } else {
            r.add(Resource::UrlResponseInfo(head))
        }
    };
    l.lock().response_id = id;
    Ok(id)
}

/// `PPB_URLLoader.ReadResponseBody`: up to `n` bytes of the body, at once when they are there.
fn loader_read_response_body(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<Loader>>,
    (_, buf, n, _): (i32, i32, i32, i32),
) -> wasmtime::Result<i32> {
    let Entered { cb, on: l, .. } = e;
    let at_once = cb.is_blocking() || cb.flags & mem::CALLBACK_OPTIONAL != 0;
    let now = {
        let mut st = l.lock();
        if st.pending {
            Some(Err(pp_error::INPROGRESS))
        } else if st.head.is_none() || st.mode == Mode::Opening {
            Some(Err(pp_error::FAILED))
        } else if n <= 0 || buf == 0 {
            Some(Err(pp_error::BADARGUMENT))
        } else if let Some(bytes) = l.take(&mut st, n as usize) {
            Some(Ok(bytes))
        } else if let Some(done) = st.done {
            Some(Err(done))
        } else {
            st.pending = true;
            None
        }
    };
    match now {
        Some(Ok(bytes)) if at_once => {
            crate::write_memory(&mut *caller, buf as u32, &bytes)?;
            Ok(bytes.len() as i32)
        }
        Some(Ok(bytes)) => {
            // A required callback: it gets the count later; the bytes are there
            // before it runs.
            let k = bytes.len() as i32;
            start_async(caller, cb, move || Completion {
                result: k,
                writes: vec![(buf as u32, bytes)],
            })
        }
        Some(Err(code)) => answer_now(caller, cb, code),
        None => {
            let l2 = l.clone();
            let r = start_async(caller, cb, move || match l2.read(n as usize) {
                Ok(bytes) => Completion {
                    result: bytes.len() as i32,
                    writes: vec![(buf as u32, bytes)],
                },
                Err(code) => Completion::result(code),
            })?;
            if r != pp_error::COMPLETIONPENDING && r < 0 {
                l.lock().pending = false;
            }
            Ok(r)
        }
    }
}

/// `PPB_URLLoader.FinishStreamingToFile`: `PP_ERROR_NOTSUPPORTED`, as this host does not
/// stream to files.
fn loader_finish_streaming_to_file(
    caller: &mut Caller<'_, Ctx>,
    e: Entered<Arc<Loader>>,
    _: (i32, i32),
) -> wasmtime::Result<i32> {
    answer_now(caller, e.cb, pp_error::NOTSUPPORTED)
}

/// `PPB_URLLoader.Close`: the load ends; what is buffered stays readable, then the end is
/// `PP_ERROR_ABORTED`.
fn loader_close(caller: Caller<'_, Ctx>, loader: i32) -> wasmtime::Result<()> {
    let s = state(&caller)?;
    if let Some(l) = loader_of(&s, loader) {
        l.close();
    }
    Ok(())
}

/// `PPB_URLLoader.GetUploadProgress` (`upload`) and `GetDownloadProgress`: the bytes so far
/// and in all, when the request asked to record them.
fn loader_progress(
    mut caller: Caller<'_, Ctx>,
    loader: i32,
    done: i32,
    total: i32,
    upload: bool,
) -> wasmtime::Result<i32> {
    let s = state(&caller)?;
    let Some(l) = loader_of(&s, loader) else {
        return Ok(0);
    };
    let (recorded, a, b) = {
        let st = l.lock();
        let recorded = st.request.as_ref().is_some_and(|r| {
            if upload {
                r.record_upload_progress
            } else {
                r.record_download_progress
            }
        });
        if upload {
            (recorded, st.bytes_sent, st.total_bytes_to_be_sent)
        } else {
            (recorded, st.bytes_received, st.total_bytes_to_be_received)
        }
    };
    let (a, b) = if recorded { (a, b) } else { (0, 0) };
    mem::write_i64(&mut caller, done as u32, a)?;
    mem::write_i64(&mut caller, total as u32, b)?;
    Ok(recorded as i32)
}

/// `PPB_URLLoader`: one function per call.
fn link_loader(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_create(linker, LOADER, || {
        Resource::UrlLoader(LoaderHandle(Loader::new()))
    })?;
    link_is(linker, LOADER, "IsURLLoader", |r| {
        matches!(r, Resource::UrlLoader(_))
    })?;
    link_entered(linker, LOADER, "Open", &URL_LOADER, loader_open)?;
    link_entered(
        linker,
        LOADER,
        "FollowRedirect",
        &URL_LOADER,
        loader_follow_redirect,
    )?;
    for (name, upload) in [("GetUploadProgress", true), ("GetDownloadProgress", false)] {
        linker.func_wrap(
            LOADER,
            name,
            move |caller: Caller<'_, Ctx>, loader: i32, done: i32, total: i32| {
                loader_progress(caller, loader, done, total, upload)
            },
        )?;
    }
    linker.func_wrap(LOADER, "GetResponseInfo", loader_get_response_info)?;
    link_entered(
        linker,
        LOADER,
        "ReadResponseBody",
        &URL_LOADER,
        loader_read_response_body,
    )?;
    link_entered(
        linker,
        LOADER,
        "FinishStreamingToFile",
        &URL_LOADER,
        loader_finish_streaming_to_file,
    )?;
    linker.func_wrap(LOADER, "Close", loader_close)?;
    Ok(())
}

/// The var `GetProperty` answers for `head`.
fn response_property(s: &PepperState, head: &Head, property: i32) -> PpVar {
    use response_property::*;
    let redirect = (300..400).contains(&head.status);
    let text = |t: &str| lock(&s.vars).string_from_utf8(t.as_bytes());
    match property {
        URL => text(&head.url),
        REDIRECTURL if redirect => text(head.redirect_url.as_deref().unwrap_or("")),
        REDIRECTMETHOD if redirect => text(head.redirect_method.as_deref().unwrap_or("")),
        STATUSCODE => PpVar::Int32(head.status),
        STATUSLINE => text(&head.status_text),
        HEADERS => text(&head.headers),
        _ => PpVar::Undefined,
    }
}

fn link_response_info(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_is(linker, RESP, "IsURLResponseInfo", |r| {
        matches!(r, Resource::UrlResponseInfo(_))
    })?;
    linker.func_wrap(
        RESP,
        "GetProperty",
        |mut caller: Caller<'_, Ctx>, ret: i32, res: i32, property: i32| -> wasmtime::Result<()> {
            let s = state(&caller)?;
            let head = match s.resources().get(res) {
                Some(Resource::UrlResponseInfo(h)) => Some(h.clone()),
                _ => None,
            };
            let v = match head {
                Some(h) => response_property(&s, &h, property),
                None => PpVar::Undefined,
            };
            mem::write_var(&mut caller, ret as u32, v)
        },
    )?;
    linker.func_wrap(
        RESP,
        "GetBodyAsFileRef",
        |_caller: Caller<'_, Ctx>, _res: i32| -> i32 {
            // Nothing is streamed to a file (STREAMTOFILE is refused), as in Chrome.
            0
        },
    )?;
    Ok(())
}

pub fn link(linker: &mut Linker<Ctx>) -> wasmtime::Result<()> {
    link_request_info(linker)?;
    link_loader(linker)?;
    link_response_info(linker)
}
