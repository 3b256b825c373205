//! The state behind `PPB_URLRequestInfo` and `PPB_URLLoader` resources (the calls are in
//! `ppb/url.rs`): a request's properties as Chrome kept them (`URLRequestInfoData`), and a
//! loader's progress through Chrome's modes (waiting to open, opening, streaming, done).
//!
//! A loader's body is read by a pump thread into a buffer as it arrives, as Chrome's
//! renderer did, pausing while the buffer holds [`MAX_BUFFER`] bytes (or the request's
//! smaller prefetch threshold); reads take from the buffer. `Close`, and the release of the
//! last reference, end the load: operations waiting for it complete with
//! `PP_ERROR_ABORTED` at once.
//!
//! Lock order: a loader's lock is never held while the resource table's is taken (the
//! table drops a loader, which closes it, under its own lock).

use std::collections::VecDeque;
use std::io::Read;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use super::fetch::{self, Head, Request, UrlPolicy};
use super::storage::FileRef;
use super::{lock, pp_error};

/// The most body bytes a loader buffers ahead of the app's reads (Chrome's default
/// threshold was 100 MB; a command-line host need not hold that much).
pub const MAX_BUFFER: usize = 8 << 20;

/// `PP_URLRequestProperty`.
pub mod property {
    pub const URL: i32 = 0;
    pub const METHOD: i32 = 1;
    pub const HEADERS: i32 = 2;
    pub const STREAMTOFILE: i32 = 3;
    pub const FOLLOWREDIRECTS: i32 = 4;
    pub const RECORDDOWNLOADPROGRESS: i32 = 5;
    pub const RECORDUPLOADPROGRESS: i32 = 6;
    pub const CUSTOMREFERRERURL: i32 = 7;
    pub const ALLOWCROSSORIGINREQUESTS: i32 = 8;
    pub const ALLOWCREDENTIALS: i32 = 9;
    pub const CUSTOMCONTENTTRANSFERENCODING: i32 = 10;
    pub const PREFETCHBUFFERUPPERTHRESHOLD: i32 = 11;
    pub const PREFETCHBUFFERLOWERTHRESHOLD: i32 = 12;
    pub const CUSTOMUSERAGENT: i32 = 13;
}

/// A part of a request body.
#[derive(Debug, Clone)]
pub enum BodyItem {
    Data(Vec<u8>),
    /// `AppendFileToBody`: part of a file (read when the request is opened).
    File {
        file: FileRef,
        start: i64,
        /// -1: to the end.
        len: i64,
        /// Nonzero: the file must still have this modification time.
        expected_mtime: f64,
    },
}

/// A `PPB_URLRequestInfo` (Chrome's `URLRequestInfoData`, with its defaults).
#[derive(Debug, Clone)]
pub struct RequestInfo {
    pub url: String,
    pub method: String,
    pub headers: String,
    pub follow_redirects: bool,
    pub record_download_progress: bool,
    pub record_upload_progress: bool,
    pub custom_referrer_url: Option<String>,
    pub allow_cross_origin_requests: bool,
    pub allow_credentials: bool,
    pub custom_content_transfer_encoding: Option<String>,
    pub prefetch_buffer_upper_threshold: i32,
    pub prefetch_buffer_lower_threshold: i32,
    pub custom_user_agent: Option<String>,
    pub body: Vec<BodyItem>,
}

impl Default for RequestInfo {
    fn default() -> Self {
        RequestInfo {
            url: String::new(),
            method: String::new(),
            headers: String::new(),
            follow_redirects: true,
            record_download_progress: false,
            record_upload_progress: false,
            custom_referrer_url: None,
            allow_cross_origin_requests: false,
            allow_credentials: false,
            custom_content_transfer_encoding: None,
            prefetch_buffer_upper_threshold: 100 * 1000 * 1000,
            prefetch_buffer_lower_threshold: 50 * 1000 * 1000,
            custom_user_agent: None,
            body: Vec::new(),
        }
    }
}

/// A value given to `SetProperty`, by its var type.
#[derive(Debug, Clone, PartialEq)]
pub enum PropertyValue {
    Undefined,
    Bool(bool),
    Int(i32),
    String(String),
}

impl RequestInfo {
    /// `SetProperty`: whether `property` takes `value` (Chrome's answers: each property
    /// takes its var type only; STREAMTOFILE, no longer supported, takes nothing).
    pub fn set(&mut self, property: i32, value: PropertyValue) -> bool {
        use property::*;
        match value {
            PropertyValue::Undefined => match property {
                CUSTOMREFERRERURL => self.custom_referrer_url = None,
                CUSTOMCONTENTTRANSFERENCODING => self.custom_content_transfer_encoding = None,
                CUSTOMUSERAGENT => self.custom_user_agent = None,
                _ => return false,
            },
            PropertyValue::Bool(b) => match property {
                FOLLOWREDIRECTS => self.follow_redirects = b,
                RECORDDOWNLOADPROGRESS => self.record_download_progress = b,
                RECORDUPLOADPROGRESS => self.record_upload_progress = b,
                ALLOWCROSSORIGINREQUESTS => self.allow_cross_origin_requests = b,
                ALLOWCREDENTIALS => self.allow_credentials = b,
                _ => return false,
            },
            PropertyValue::Int(i) => match property {
                PREFETCHBUFFERUPPERTHRESHOLD => self.prefetch_buffer_upper_threshold = i,
                PREFETCHBUFFERLOWERTHRESHOLD => self.prefetch_buffer_lower_threshold = i,
                _ => return false,
            },
            PropertyValue::String(s) => match property {
                URL => self.url = s,
                METHOD => self.method = s,
                HEADERS => self.headers = s,
                CUSTOMREFERRERURL => self.custom_referrer_url = Some(s),
                CUSTOMCONTENTTRANSFERENCODING => self.custom_content_transfer_encoding = Some(s),
                CUSTOMUSERAGENT => self.custom_user_agent = Some(s),
                _ => return false,
            },
        }
        true
    }

    /// The request to send, or why it may not be sent: the custom referrer, user agent
    /// and content-transfer-encoding need "universal access", which no app had
    /// (`PP_ERROR_NOACCESS`); the prefetch thresholds must be ordered (`PP_ERROR_FAILED`);
    /// the method must be a token other than CONNECT, TRACE and TRACK, and no header may be
    /// a forbidden one (`PP_ERROR_NOACCESS`, as Blink refused such untrusted loads).
    pub fn to_request(&self) -> Result<Request, fetch::Refused> {
        let refuse = |code, why: String| fetch::Refused { code, why };
        if self.custom_referrer_url.is_some()
            || self.custom_user_agent.is_some()
            || self.custom_content_transfer_encoding.is_some()
        {
            return Err(refuse(
                pp_error::NOACCESS,
                "a custom referrer, user agent or content-transfer-encoding needs universal access, which apps did not have".into(),
            ));
        }
        let (upper, lower) = (
            self.prefetch_buffer_upper_threshold,
            self.prefetch_buffer_lower_threshold,
        );
        if lower < 0 || upper < 0 || upper <= lower {
            return Err(refuse(
                pp_error::FAILED,
                format!(
                    "the prefetch thresholds {upper} (upper) and {lower} (lower) are not ordered"
                ),
            ));
        }
        let method = if self.method.is_empty() {
            "GET".to_string()
        } else {
            self.method.clone()
        };
        let is_token = method
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&c));
        let upper_method = method.to_ascii_uppercase();
        if !is_token || matches!(upper_method.as_str(), "CONNECT" | "TRACE" | "TRACK") {
            return Err(refuse(
                pp_error::NOACCESS,
                format!("the method {method:?} may not be used"),
            ));
        }
        // Blink normalised the standard methods' case.
        let method = match upper_method.as_str() {
            "DELETE" | "GET" | "HEAD" | "OPTIONS" | "POST" | "PUT" => upper_method,
            _ => method,
        };
        let mut headers = Vec::new();
        for line in self.headers.split(['\n', '\r']) {
            let Some((name, value)) = line.split_once(':') else {
                continue;
            };
            let (name, value) = (name.trim(), value.trim());
            if name.is_empty() {
                continue;
            }
            if fetch::is_forbidden_header(name) {
                return Err(refuse(
                    pp_error::NOACCESS,
                    format!("the request header {name:?} may not be set by an app"),
                ));
            }
            headers.push((name.to_string(), value.to_string()));
        }
        let mut body = Vec::new();
        for item in &self.body {
            match item {
                BodyItem::Data(d) => body.extend_from_slice(d),
                BodyItem::File {
                    file,
                    start,
                    len,
                    expected_mtime,
                } => {
                    let bytes =
                        read_file_part(file, *start, *len, *expected_mtime).map_err(|why| {
                            refuse(pp_error::FAILED, format!("the file to upload: {why}"))
                        })?;
                    body.extend_from_slice(&bytes);
                }
            }
        }
        Ok(Request {
            method,
            headers,
            body,
        })
    }
}

fn read_file_part(
    file: &FileRef,
    start: i64,
    len: i64,
    expected_mtime: f64,
) -> Result<Vec<u8>, String> {
    use std::io::{Seek, SeekFrom};
    let path = file
        .disk_path()
        .map_err(|e| format!("{} cannot be read (error {e})", file.path))?;
    let mut f = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", file.path))?;
    if expected_mtime != 0.0 {
        let m = f.metadata().map_err(|e| format!("{}: {e}", file.path))?;
        let mtime = super::storage::pp_time(m.modified());
        if (mtime - expected_mtime).abs() > 1e-3 {
            return Err(format!("{} changed since the time given", file.path));
        }
    }
    f.seek(SeekFrom::Start(start.max(0) as u64))
        .map_err(|e| format!("{}: {e}", file.path))?;
    let mut out = Vec::new();
    if len < 0 {
        f.read_to_end(&mut out)
    } else {
        f.take(len as u64).read_to_end(&mut out)
    }
    .map_err(|e| format!("{}: {e}", file.path))?;
    Ok(out)
}

/// Where a loader is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    WaitingToOpen,
    Opening,
    Streaming,
    Done,
}

/// What a loader knows, under its lock.
#[derive(Default)]
pub struct LoaderState {
    pub mode: Mode,
    /// A callback of the loader's is pending (a second operation gets INPROGRESS).
    pub pending: bool,
    /// `Close` was called or the loader released.
    pub closed: bool,
    /// The request as opened (for the progress flags and redirects).
    pub request: Option<RequestInfo>,
    /// The current response (the last redirect's, while it waits for `FollowRedirect`).
    pub head: Option<Arc<Head>>,
    /// The response info resource last handed out for `head`.
    pub response_id: i32,
    /// A redirect waiting for `FollowRedirect`: where it leads and the request to send.
    pub deferred: Option<(url::Url, Request)>,
    /// Body bytes received and not yet read.
    pub buffer: VecDeque<u8>,
    /// How the body ended: `PP_OK`, or an error (`PP_ERROR_ABORTED` once closed).
    pub done: Option<i32>,
    pub bytes_received: i64,
    pub total_bytes_to_be_received: i64,
    pub bytes_sent: i64,
    pub total_bytes_to_be_sent: i64,
    /// The pump pauses at this many buffered bytes.
    pub buffer_limit: usize,
}

/// A loader's state and the condition its waiters wait on.
#[derive(Default)]
pub struct Loader {
    state: Mutex<LoaderState>,
    cond: Condvar,
}

impl std::fmt::Debug for Loader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = self.lock();
        f.debug_struct("Loader")
            .field("mode", &s.mode)
            .field("closed", &s.closed)
            .finish_non_exhaustive()
    }
}

/// The resource table's handle of a loader: dropping it (the resource's last reference)
/// closes the loader. Not `Clone`: a copy dropped would close it too.
#[derive(Debug)]
pub struct LoaderHandle(pub Arc<Loader>);

impl Drop for LoaderHandle {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// How an opening ended, for `Open`'s or `FollowRedirect`'s callback.
pub struct Opened {
    pub result: i32,
    /// What to note (a refused URL), if anything.
    pub note: Option<String>,
}

impl Loader {
    pub fn new() -> Arc<Loader> {
        Arc::new(Loader {
            state: Mutex::new(LoaderState {
                total_bytes_to_be_received: -1,
                total_bytes_to_be_sent: -1,
                buffer_limit: MAX_BUFFER,
                ..Default::default()
            }),
            cond: Condvar::new(),
        })
    }

    pub fn lock(&self) -> MutexGuard<'_, LoaderState> {
        lock(&self.state)
    }

    /// Ends the load: waiting operations complete with `PP_ERROR_ABORTED`.
    pub fn close(&self) {
        let mut s = self.lock();
        s.closed = true;
        s.mode = Mode::Done;
        // As Chrome's: what is buffered stays readable; the end is an abort.
        s.done = Some(pp_error::ABORTED);
        s.deferred = None;
        self.cond.notify_all();
    }

    /// Runs `f` on a thread of its own and waits for it, or for the loader to close
    /// (`None`): a blocking request must not keep `Close` from aborting at once.
    fn wait_for<T: Send + 'static>(
        self: &Arc<Self>,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let slot: Arc<Mutex<Option<T>>> = Arc::default();
        let (slot2, me) = (slot.clone(), self.clone());
        let spawned = std::thread::Builder::new()
            .name("pepper url request".into())
            .spawn(move || {
                let v = f();
                *lock(&slot2) = Some(v);
                // Taken under the loader's lock, so the waiter cannot miss it.
                let _s = me.lock();
                me.cond.notify_all();
            });
        if spawned.is_err() {
            return None;
        }
        let mut s = self.lock();
        loop {
            if let Some(v) = lock(&slot).take() {
                return Some(v);
            }
            if s.closed {
                return None;
            }
            s = self.cond.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Opens `visible` with `req` (and follows redirects while the request says so): on
    /// the operation's thread. Leaves the loader streaming the response's body, or holding
    /// a redirect for `FollowRedirect`.
    pub fn open(
        self: &Arc<Self>,
        policy: &UrlPolicy,
        mut visible: url::Url,
        mut req: Request,
    ) -> Opened {
        let follow = self
            .lock()
            .request
            .as_ref()
            .is_none_or(|r| r.follow_redirects);
        {
            let mut s = self.lock();
            s.total_bytes_to_be_sent = req.body.len() as i64;
        }
        for _ in 0..=fetch::MAX_REDIRECTS {
            let policy2 = policy.clone();
            let (v2, r2) = (visible.clone(), req.clone());
            let got = self.wait_for(move || fetch::fetch_once(&policy2, &v2, &r2));
            let (response, note) = match got {
                None => return self.ended(pp_error::ABORTED, None),
                Some(Err(refused)) => return self.ended(refused.code, Some(refused.why)),
                Some(Ok(r)) => r,
            };
            {
                let mut s = self.lock();
                s.bytes_sent = req.body.len() as i64;
            }
            let status = response.head.status;
            if let Some(next) = response.redirect.clone() {
                let next_req = fetch::redirected_request(&req, status);
                // A redirect is checked where it leads before anything else.
                if let Err(refused) = policy.route(&next) {
                    let why = format!(
                        "the redirect from {visible} to {next} was refused: {}",
                        refused.why
                    );
                    return self.ended(refused.code, Some(why));
                }
                if !follow {
                    let mut s = self.lock();
                    if s.closed {
                        return Opened {
                            result: pp_error::ABORTED,
                            note: None,
                        };
                    }
                    s.head = Some(Arc::new(response.head));
                    s.deferred = Some((next, next_req));
                    return Opened {
                        result: pp_error::OK,
                        note,
                    };
                }
                visible = next;
                req = next_req;
                continue;
            }
            let mut s = self.lock();
            if s.closed {
                return Opened {
                    result: pp_error::ABORTED,
                    note: None,
                };
            }
            s.total_bytes_to_be_received = response
                .head
                .content_length
                .map_or(-1, |n| n.min(i64::MAX as u64) as i64);
            s.head = Some(Arc::new(response.head));
            s.mode = Mode::Streaming;
            let limit = s.request.as_ref().map_or(MAX_BUFFER, |r| {
                r.prefetch_buffer_upper_threshold.max(1) as usize
            });
            s.buffer_limit = limit.clamp(64 << 10, MAX_BUFFER);
            drop(s);
            self.pump(response.body);
            return Opened {
                result: pp_error::OK,
                note,
            };
        }
        self.ended(
            pp_error::FAILED,
            Some(format!("more than {} redirects", fetch::MAX_REDIRECTS)),
        )
    }

    /// The load failed with `code` before a body: the loader is done.
    fn ended(&self, code: i32, note: Option<String>) -> Opened {
        let mut s = self.lock();
        s.mode = Mode::Done;
        let code = if s.closed { pp_error::ABORTED } else { code };
        s.done.get_or_insert(code);
        self.cond.notify_all();
        Opened { result: code, note }
    }

    /// Reads the body into the buffer on a thread of its own until it ends, the loader
    /// closes, or the app stops reading (the buffer is full: it waits).
    fn pump(self: &Arc<Self>, mut body: Box<dyn Read + Send>) {
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("pepper url body".into())
            .spawn(move || {
                let mut chunk = vec![0u8; 64 << 10];
                loop {
                    {
                        let mut s = me.lock();
                        while !s.closed && s.buffer.len() >= s.buffer_limit {
                            s = me.cond.wait(s).unwrap_or_else(|p| p.into_inner());
                        }
                        if s.closed {
                            return;
                        }
                    }
                    let r = body.read(&mut chunk);
                    let mut s = me.lock();
                    match r {
                        Ok(0) => {
                            s.done.get_or_insert(pp_error::OK);
                            s.mode = Mode::Done;
                        }
                        Ok(n) => {
                            s.buffer.extend(&chunk[..n]);
                            s.bytes_received += n as i64;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(_) => {
                            s.done.get_or_insert(pp_error::FAILED);
                            s.mode = Mode::Done;
                        }
                    }
                    me.cond.notify_all();
                    if s.done.is_some() {
                        return;
                    }
                }
            });
        if spawned.is_err() {
            let mut s = self.lock();
            s.done.get_or_insert(pp_error::NOMEMORY);
            self.cond.notify_all();
        }
    }

    /// Takes up to `n` buffered bytes; `None` when there are none yet.
    pub fn take(&self, s: &mut LoaderState, n: usize) -> Option<Vec<u8>> {
        if s.buffer.is_empty() {
            return None;
        }
        let k = n.min(s.buffer.len());
        let bytes: Vec<u8> = s.buffer.drain(..k).collect();
        // The pump may go on.
        self.cond.notify_all();
        Some(bytes)
    }

    /// Waits until body bytes are buffered or the body ended, then takes up to `n`:
    /// the bytes, or the end's code (`PP_OK` at the end, an error, `PP_ERROR_ABORTED`).
    pub fn read(&self, n: usize) -> Result<Vec<u8>, i32> {
        let mut s = self.lock();
        loop {
            if let Some(b) = self.take(&mut s, n) {
                s.pending = false;
                return Ok(b);
            }
            if let Some(d) = s.done {
                s.pending = false;
                return Err(d);
            }
            s = self.cond.wait(s).unwrap_or_else(|p| p.into_inner());
        }
    }
}
