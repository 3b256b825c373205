//! Reading the pexe out of a request: a raw `application/octet-stream` body or the first
//! file field of a `multipart/form-data` body, within a size limit (413) and a time limit
//! for the whole body (408), so oversize and drip-fed uploads are cut off early.

use crate::problem::Problem;
use axum::body::Body;
use axum::http::{header, HeaderMap, StatusCode};
use bytes::{Bytes, BytesMut};
use http_body_util::BodyExt;
use std::time::Duration;

/// How the request carries the pexe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UploadKind {
    Raw,
    Multipart { boundary: String },
}

/// Decides from the Content-Type header how to read the body (415 for anything else).
pub fn upload_kind(headers: &HeaderMap) -> Result<UploadKind, Problem> {
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let essence = ct
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    match essence.as_str() {
        "application/octet-stream" | "application/x-pnacl" => Ok(UploadKind::Raw),
        "multipart/form-data" => multer::parse_boundary(ct)
            .map(|boundary| UploadKind::Multipart { boundary })
            .map_err(|e| Problem::bad_request(format!("bad multipart Content-Type: {e}"))),
        _ => Err(Problem::unsupported_media_type(ct)),
    }
}

/// Reads the body: at most `limit` bytes, all of it within `time_limit`.
pub async fn read_body(
    headers: &HeaderMap,
    body: Body,
    limit: usize,
    time_limit: Duration,
) -> Result<Bytes, Problem> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(Problem::too_large(limit));
    }
    let deadline = tokio::time::Instant::now() + time_limit;
    let mut body = body;
    let mut buf = BytesMut::with_capacity(declared.unwrap_or(0) as usize);
    loop {
        let frame = match tokio::time::timeout_at(deadline, body.frame()).await {
            Err(_) => {
                return Err(Problem::new(
                    StatusCode::REQUEST_TIMEOUT,
                    "body-timeout",
                    "Request body too slow",
                    format!(
                        "the body was not received within {} ms ({} bytes arrived)",
                        time_limit.as_millis(),
                        buf.len()
                    ),
                ))
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                return Err(Problem::bad_request(format!("cannot read the body: {e}")))
            }
            Ok(Some(Ok(frame))) => frame,
        };
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(Problem::too_large(limit));
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(buf.freeze())
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
