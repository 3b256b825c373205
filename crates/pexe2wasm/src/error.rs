//! The one classification of conversion errors that every front end reports from.

use serde::{Deserialize, Serialize};

/// Whose problem an error is. The CLI's batch report and the HTTP service derive what
/// they report (error kind, HTTP status, problem type) from this alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorClass {
    /// A bad pexe: malformed bits, a PNaCl ABI violation, not a runnable program. The
    /// error says where in the file, when it can.
    Input,
    /// A valid pexe that uses something this converter does not handle.
    Unsupported,
    /// A converter bug: e.g. output that does not validate, or a panic.
    Internal,
}

impl ErrorClass {
    /// The name used in JSON (`input`, `unsupported`, `internal`).
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Input => "input",
            ErrorClass::Unsupported => "unsupported",
            ErrorClass::Internal => "internal",
        }
    }
}

impl std::fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
