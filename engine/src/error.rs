//! The failures a tool call can end with, and how the registry normalises
//! them into a model-visible `Error: {message}` with optional `{name, code}`.

use thiserror::Error;

/// The closed set of `SearchError` codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SearchCode {
    /// ripgrep rejected the regex (grep) or the glob (glob).
    InvalidPattern,
    /// The search could not run or its output could not be parsed.
    Failed,
    /// Raw stdout exceeded `rawOutputMaxBytes` or was truncated.
    RawOutputOverflow,
    /// Caller cancellation, tool-timeout abort, or the executor's timeout.
    Aborted,
}

impl SearchCode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidPattern => "SEARCH_INVALID_PATTERN",
            Self::Failed => "SEARCH_FAILED",
            Self::RawOutputOverflow => "SEARCH_RAW_OUTPUT_OVERFLOW",
            Self::Aborted => "SEARCH_ABORTED",
        }
    }
}

/// A search failure with a stable code (`name = 'SearchError'`).
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{message}")]
pub struct SearchError {
    pub code: SearchCode,
    pub message: String,
}

impl SearchError {
    pub fn new(code: SearchCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// `{name, code}` of a harness error: present only for coded errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ErrorInfo {
    pub name: &'static str,
    pub code: &'static str,
}

/// Every failure of one call, before normalisation.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ToolError {
    #[error(transparent)]
    Search(#[from] SearchError),
    /// Argument-schema violations (`ToolArgsError`, `INVALID_ARGS`).
    #[error("invalid arguments: {}", .0.join("; "))]
    InvalidArgs(Vec<String>),
    /// The package's own argument checks and other uncoded errors.
    #[error("{0}")]
    Plain(String),
    /// The canonical value failed the output schema (`INVALID_TOOL_OUTPUT`).
    #[error("tool \"{tool}\" returned invalid output: {}", violations.join("; "))]
    InvalidOutput {
        tool: String,
        violations: Vec<String>,
    },
    #[error("tool call aborted before dispatch")]
    AbortedBeforeDispatch,
    #[error("tool call aborted")]
    Aborted,
    #[error("tool call timed out after {0}ms")]
    Timeout(u64),
    #[error("unknown tool \"{0}\"")]
    UnknownTool(String),
}

impl ToolError {
    /// The `{name, code}` callers see; `None` for plain errors.
    pub fn info(&self) -> Option<ErrorInfo> {
        let (name, code) = match self {
            Self::Search(e) => ("SearchError", e.code.as_str()),
            Self::InvalidArgs(_) => ("ToolArgsError", "INVALID_ARGS"),
            Self::Plain(_) => return None,
            Self::InvalidOutput { .. } => ("ToolOutputError", "INVALID_TOOL_OUTPUT"),
            Self::AbortedBeforeDispatch => ("AbortError", "ABORTED_BEFORE_DISPATCH"),
            Self::Aborted => ("AbortError", "ABORTED"),
            Self::Timeout(_) => ("ToolTimeoutError", "TOOL_TIMEOUT"),
            Self::UnknownTool(_) => ("ToolNotFoundError", "UNKNOWN_TOOL"),
        };
        Some(ErrorInfo { name, code })
    }

    /// The model-visible text of the failure.
    pub fn model_text(&self) -> String {
        format!("Error: {self}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_errors_carry_no_info_and_coded_errors_do() {
        assert_eq!(ToolError::Plain("x".into()).info(), None);
        let e = ToolError::from(SearchError::new(SearchCode::Failed, "boom"));
        assert_eq!(
            e.info(),
            Some(ErrorInfo {
                name: "SearchError",
                code: "SEARCH_FAILED"
            })
        );
        assert_eq!(e.model_text(), "Error: boom");
        assert_eq!(
            ToolError::InvalidArgs(vec!["a".into(), "b".into()]).model_text(),
            "Error: invalid arguments: a; b"
        );
    }
}
