//! Errors as RFC 9457 problem details (`application/problem+json`). Conversion errors
//! carry their [`ErrorClass`] (`class`) and their position in the pexe (`position`) as
//! extension members; the status and problem type follow from the class alone.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use pexe2wasm::bitstream::Position;
use pexe2wasm::convert::ConvertError;
use pexe2wasm::ErrorClass;
use serde::Serialize;

pub const PROBLEM_JSON: &str = "application/problem+json";

/// RFC 9457 problem details.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
pub struct Problem {
    /// A URI naming the kind of problem (`urn:pexe2wasm:problem:<kind>`).
    #[serde(rename = "type")]
    pub kind: String,
    pub title: &'static str,
    pub status: u16,
    pub detail: String,
    /// Whose problem a conversion error is (conversion errors only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::openapi::Class>, nullable = false)]
    pub class: Option<ErrorClass>,
    /// Where in the pexe the error is, when known (boxed: most problems have none).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::openapi::Position>, nullable = false)]
    pub position: Option<Box<Position>>,
    /// Seconds after which retrying may succeed (503 only).
    #[serde(skip)]
    pub retry_after: Option<u32>,
}

impl Problem {
    pub fn new(
        status: StatusCode,
        kind: &str,
        title: &'static str,
        detail: impl Into<String>,
    ) -> Problem {
        Problem {
            kind: format!("urn:pexe2wasm:problem:{kind}"),
            title,
            status: status.as_u16(),
            detail: detail.into(),
            class: None,
            position: None,
            retry_after: None,
        }
    }

    /// A conversion error: status, type and title from its [`ErrorClass`], with the class
    /// and the position in the pexe as extension members.
    pub fn conversion(e: &ConvertError) -> Problem {
        let class = e.class();
        let (status, kind, title) = match class {
            ErrorClass::Input => (StatusCode::BAD_REQUEST, "bad-pexe", "Invalid pexe"),
            ErrorClass::Unsupported => (
                StatusCode::UNPROCESSABLE_ENTITY,
                "unsupported",
                "The pexe uses something the converter does not support",
            ),
            ErrorClass::Internal => (
                StatusCode::INTERNAL_SERVER_ERROR,
                "internal",
                "Internal converter error",
            ),
        };
        let mut p = Problem::new(status, kind, title, e.to_string());
        p.class = Some(class);
        p.position = e.position().map(Box::new);
        p
    }

    pub fn too_large(limit: usize) -> Problem {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too-large",
            "Request body too large",
            format!(
                "the body exceeds the limit of {limit} bytes ({})",
                bytesize::ByteSize::b(limit as u64).display().iec()
            ),
        )
    }

    pub fn unsupported_media_type(got: &str) -> Problem {
        Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "Unsupported content type",
            format!(
                "expected application/octet-stream or multipart/form-data with a file field, got {got:?}"
            ),
        )
    }

    pub fn bad_request(detail: impl Into<String>) -> Problem {
        Problem::new(
            StatusCode::BAD_REQUEST,
            "bad-request",
            "Bad request",
            detail,
        )
    }

    pub fn queue_full() -> Problem {
        let mut p = Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "queue-full",
            "Server busy",
            "the conversion queue is full; retry later",
        );
        p.retry_after = Some(1);
        p
    }

    /// The request's body does not fit the global budget of body bytes in memory
    /// (`--max-body-memory`, `limit` bytes); refused before the body is read.
    pub fn body_memory_full(limit: usize) -> Problem {
        let mut p = Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "body-memory-full",
            "Server busy",
            format!(
                "the request bodies held in memory would exceed the server's budget of {}; retry later",
                bytesize::ByteSize::b(limit as u64).display().iec()
            ),
        );
        p.retry_after = Some(1);
        p
    }

    /// Every one of the server's `max` connections has a request in flight.
    pub fn too_many_connections(max: usize) -> Problem {
        let mut p = Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "too-many-connections",
            "Server busy",
            format!(
                "the server has its maximum of {max} connections open, each with a request in flight; retry later"
            ),
        );
        p.retry_after = Some(1);
        p
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut r = (status, [(header::CONTENT_TYPE, PROBLEM_JSON)], body).into_response();
        if let Some(s) = self.retry_after {
            r.headers_mut().insert(header::RETRY_AFTER, s.into());
        }
        r
    }
}
