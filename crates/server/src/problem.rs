//! Errors as RFC 9457 problem details (`application/problem+json`). Decoder errors carry
//! their position in the pexe as extension members (`position`).

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use pexe2wasm::bitstream::{block_name, Position};
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
    /// Where in the pexe the decoder stopped, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<crate::openapi::Position>, nullable = false)]
    pub position: Option<Box<ProblemPosition>>,
    /// Seconds after which retrying may succeed (503 only).
    #[serde(skip)]
    pub retry_after: Option<u32>,
}

/// A decoder position as JSON.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ProblemPosition {
    pub bit: u64,
    pub byte: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub block_name: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub record_index: Option<u32>,
}

impl From<Position> for ProblemPosition {
    fn from(p: Position) -> Self {
        ProblemPosition {
            bit: p.bit,
            byte: p.bit / 8,
            block: p.block,
            block_name: p.block.map(block_name),
            record: p.record,
            record_index: p.record_index,
        }
    }
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
            position: None,
            retry_after: None,
        }
    }

    pub fn with_position(mut self, p: Option<Position>) -> Problem {
        self.position = p.map(|p| Box::new(ProblemPosition::from(p)));
        self
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
