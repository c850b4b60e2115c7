//! The seam in `tools/call` for where a call's answer comes from: the
//! engine (the default), or an [`AnswerSource`] asked first — the recorded
//! answers of `workbench mcp --replay` (see [`super::serve_recorded`]). A source
//! answers with a finished `tools/call` result (and the warnings to send
//! the client as log notifications), or with nothing, and the call runs on
//! the engine as any other. The result goes out through the same path as
//! an engine's answer, whichever protocol revision the request came in.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// An answer that did not come from running the engine.
#[derive(Debug, Clone)]
pub(crate) struct SourcedAnswer {
    /// The `tools/call` result, sent as it is.
    pub result: CallToolResult,
    /// Sent to the client (and logged) as warnings, as a call's own are.
    pub warnings: Vec<String>,
}

/// Answers calls before the engine does.
pub(crate) trait AnswerSource: Send + Sync {
    /// The answer to a call of `tool` with `args` (absent arguments are
    /// `{}`), or `None`: run it on the engine.
    fn answer(&self, tool: &str, args: &Value) -> Option<SourcedAnswer>;
}
