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
    /// The error's `name`: always `SearchError`.
    pub fn name(self) -> &'static str {
        "SearchError"
    }

    /// The error's stable `code`, e.g. `SEARCH_FAILED`.
    pub fn code(self) -> &'static str {
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
    /// The stable code.
    pub code: SearchCode,
    /// The message (the model sees `Error: {message}`).
    pub message: String,
}

impl SearchError {
    /// A search failure with `code` and `message`.
    pub fn new(code: SearchCode, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// The `{name, code}` of a coded failure: a search failure of the tools,
/// or one the registry and the timeout policy produce. The package's
/// plain argument errors have none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// `SearchError` with its [`SearchCode`].
    Search(SearchCode),
    /// `ToolArgsError` / `INVALID_ARGS`: the arguments failed the schema.
    InvalidArgs,
    /// `ToolOutputError` / `INVALID_TOOL_OUTPUT`: the value failed the output schema.
    InvalidToolOutput,
    /// `AbortError` / `ABORTED_BEFORE_DISPATCH`: cancelled before the tool ran.
    AbortedBeforeDispatch,
    /// `AbortError` / `ABORTED`: cancelled while or after the tool ran.
    Aborted,
    /// `ToolTimeoutError` / `TOOL_TIMEOUT`: the timeout policy fired.
    ToolTimeout,
    /// `ToolNotFoundError` / `UNKNOWN_TOOL`: no tool of that name is registered.
    UnknownTool,
}

impl ErrorCode {
    /// The error's `name`, e.g. `SearchError`.
    pub fn name(self) -> &'static str {
        match self {
            Self::Search(code) => code.name(),
            Self::InvalidArgs => "ToolArgsError",
            Self::InvalidToolOutput => "ToolOutputError",
            Self::AbortedBeforeDispatch | Self::Aborted => "AbortError",
            Self::ToolTimeout => "ToolTimeoutError",
            Self::UnknownTool => "ToolNotFoundError",
        }
    }

    /// The error's `code`, e.g. `SEARCH_FAILED`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Search(code) => code.code(),
            Self::InvalidArgs => "INVALID_ARGS",
            Self::InvalidToolOutput => "INVALID_TOOL_OUTPUT",
            Self::AbortedBeforeDispatch => "ABORTED_BEFORE_DISPATCH",
            Self::Aborted => "ABORTED",
            Self::ToolTimeout => "TOOL_TIMEOUT",
            Self::UnknownTool => "UNKNOWN_TOOL",
        }
    }
}

/// Every failure of one call, before normalisation.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum ToolError {
    /// A search failure of the tools (`SearchError`).
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
        /// The tool whose value failed.
        tool: String,
        /// The schema violations.
        violations: Vec<String>,
    },
    /// Cancelled before the tool ran.
    #[error("tool call aborted before dispatch")]
    AbortedBeforeDispatch,
    /// Cancelled while or after the tool ran.
    #[error("tool call aborted")]
    Aborted,
    /// The timeout policy fired after that many ms.
    #[error("tool call timed out after {0}ms")]
    Timeout(u64),
    /// No tool of that name is registered.
    #[error("unknown tool \"{0}\"")]
    UnknownTool(String),
}

impl ToolError {
    /// The `{name, code}` callers see; `None` for plain errors.
    pub fn info(&self) -> Option<ErrorCode> {
        Some(match self {
            Self::Search(e) => ErrorCode::Search(e.code),
            Self::InvalidArgs(_) => ErrorCode::InvalidArgs,
            Self::Plain(_) => return None,
            Self::InvalidOutput { .. } => ErrorCode::InvalidToolOutput,
            Self::AbortedBeforeDispatch => ErrorCode::AbortedBeforeDispatch,
            Self::Aborted => ErrorCode::Aborted,
            Self::Timeout(_) => ErrorCode::ToolTimeout,
            Self::UnknownTool(_) => ErrorCode::UnknownTool,
        })
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
        let info = e.info().unwrap();
        assert_eq!((info.name(), info.code()), ("SearchError", "SEARCH_FAILED"));
        assert_eq!(e.model_text(), "Error: boom");
        assert_eq!(
            ToolError::InvalidArgs(vec!["a".into(), "b".into()]).model_text(),
            "Error: invalid arguments: a; b"
        );
    }
}
