//! Reading the pexe out of a request: a raw `application/octet-stream` body or the first
//! file field of a `multipart/form-data` body, within a size limit (413) and a time limit
//! for the whole body (408), so oversize and drip-fed uploads are cut off early, and
//! within the global body-memory budget ([`crate::budget`]).

use crate::budget::Reservation;
use crate::problem::Problem;
use axum::body::Body;
use axum::body::HttpBody;
use axum::http::{header, HeaderMap, StatusCode};
use bytes::Bytes;
use bytesize::ByteSize;
use http_body_util::{BodyExt, LengthLimitError};
use std::time::Duration;

/// How the request carries the pexe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadKind {
    Raw,
    Multipart { boundary: String },
}

/// The Content-Type header as sent, and its lower-case essence (`type/subtype`; "" when it
/// does not parse: an unparsable Content-Type is as unsupported as a wrong one).
fn content_type(headers: &HeaderMap) -> (&str, String) {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = ct
        .parse::<mime::Mime>()
        .map(|m| m.essence_str().to_ascii_lowercase())
        .unwrap_or_default();
    (ct, essence)
}

/// Decides from the Content-Type header how to read the body (415 for anything else).
pub fn upload_kind(headers: &HeaderMap) -> Result<UploadKind, Problem> {
    let (ct, essence) = content_type(headers);
    match essence.as_str() {
        "application/octet-stream" | "application/x-pnacl" => Ok(UploadKind::Raw),
        "multipart/form-data" => multer::parse_boundary(ct)
            .map(|boundary| UploadKind::Multipart { boundary })
            .map_err(|e| Problem::bad_request(format!("bad multipart Content-Type: {e}"))),
        _ => Err(Problem::unsupported_media_type(ct)),
    }
}

/// Decides how to read a package upload (`/v1/site`): a zip or crx by any of the types
/// clients send them as, or a multipart form (415 for anything else).
pub fn site_upload_kind(headers: &HeaderMap) -> Result<UploadKind, Problem> {
    let (ct, essence) = content_type(headers);
    match essence.as_str() {
        "application/zip"
        | "application/x-zip-compressed"
        | "application/x-chrome-extension"
        | "application/octet-stream" => Ok(UploadKind::Raw),
        "multipart/form-data" => upload_kind(headers),
        _ => Err(Problem::new(
            axum::http::StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "Unsupported content type",
            format!("expected application/zip, application/x-chrome-extension, application/octet-stream or multipart/form-data with a file field, got {ct:?}"),
        )),
    }
}

/// Reads the body, all of it within `time_limit`, charging its buffer to `reservation`
/// (the caller took the declared `Content-Length` from the body-memory budget already; a
/// chunked body is charged as its buffer grows, 503 when the budget cannot grow). The
/// size limit is enforced by the `RequestBodyLimitLayer` in front of the `/v1` routes (on
/// `Content-Length` before the handler runs, and while streaming); its error here becomes
/// the same 413 problem, which names `limit`.
///
/// The buffer grows as bytes arrive and is never sized from the declared
/// `Content-Length`: a client may declare the limit and send nothing, many times over. It
/// doubles from 64 KiB, but never past the declared length (so it stays within what was
/// charged) or past `limit`.
pub async fn read_body(
    body: Body,
    limit: usize,
    time_limit: Duration,
    reservation: &mut Reservation,
) -> Result<Bytes, Problem> {
    let deadline = tokio::time::Instant::now() + time_limit;
    let ceiling = match body.size_hint().exact() {
        Some(declared) => usize::try_from(declared).unwrap_or(usize::MAX),
        None => limit,
    };
    let mut body = body;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => {
                return Err(Problem::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "body-timeout",
                    "Request body too slow",
                    format!(
                        "the body was not received within {} ms ({} arrived)",
                        time_limit.as_millis(),
                        ByteSize::b(buf.len() as u64).display().iec()
                    ),
                ))
            }
            Ok(None) => break,
            Ok(Some(Err(e))) if is_length_limit(&e) => return Err(Problem::too_large(limit)),
            Ok(Some(Err(e))) => {
                return Err(Problem::bad_request(format!("cannot read the body: {e}")))
            }
            Ok(Some(Ok(frame))) => frame,
        };
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let needed = buf.len() + data.len();
        if needed > buf.capacity() {
            let grown = (buf.capacity() * 2)
                .max(MIN_BUFFER)
                .min(ceiling)
                .max(needed);
            reservation
                .grow_to(grown)
                .map_err(|e| Problem::body_memory_full(e.limit))?;
            buf.reserve_exact(grown - buf.len());
        }
        buf.extend_from_slice(&data);
    }
    Ok(Bytes::from(buf))
}

/// The first allocation of a body buffer (or the declared length, when smaller).
const MIN_BUFFER: usize = 64 << 10;

/// Whether a body error is the body limit layer's "too long".
fn is_length_limit(e: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(c) = cause {
        if c.is::<LengthLimitError>() {
            return true;
        }
        cause = c.source();
    }
    false
}

/// The pexe in a request body of `kind`.
pub async fn extract_pexe(kind: &UploadKind, body: Bytes) -> Result<Bytes, Problem> {
    let boundary = match kind {
        UploadKind::Raw => return Ok(body),
        UploadKind::Multipart { boundary } => boundary.clone(),
    };
    let stream = futures_util::stream::once(async move { Ok::<Bytes, std::io::Error>(body) });
    let mut mp = multer::Multipart::new(stream, boundary);
    loop {
        let field = mp
            .next_field()
            .await
            .map_err(|e| Problem::bad_request(format!("bad multipart body: {e}")))?;
        let Some(field) = field else {
            return Err(Problem::bad_request(
                "the multipart body has no file field (send the pexe as a field named \"file\")",
            ));
        };
        if field.file_name().is_some() || field.name() == Some("file") {
            return field
                .bytes()
                .await
                .map_err(|e| Problem::bad_request(format!("bad multipart body: {e}")));
        }
    }
}
