//! The result of one call as the host sees it: the model-visible text,
//! the error metadata, and the structured parts kept beside it.

use serde::Serialize;

use crate::error::ToolError;
use crate::meta::SearchMeta;
use crate::spill::SpillRef;
use crate::value::ToolValue;

/// `error` of a failed result: the message, and `{name, code}` only for
/// coded (harness) errors.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResultError {
    pub name: Option<&'static str>,
    pub code: Option<&'static str>,
    pub message: String,
}

/// One call's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub tool: String,
    /// Exactly what the model sees.
    pub text: String,
    pub is_error: bool,
    pub error: Option<ResultError>,
    /// The canonical value (successes only).
    pub value: Option<ToolValue>,
    /// The UI card (direct successful calls only).
    pub meta: Option<SearchMeta>,
    /// The formatted-result spill behind the footer, when one was saved.
    pub spill: Option<SpillRef>,
    pub additional_contexts: Vec<String>,
    /// Warnings logged while producing this result.
    pub warnings: Vec<String>,
}

impl ToolResult {
    /// The normalised failure result of `error`.
    pub fn failure(tool: &str, error: &ToolError) -> Self {
        let info = error.info();
        Self {
            tool: tool.to_owned(),
            text: error.model_text(),
            is_error: true,
            error: Some(ResultError {
                name: info.map(|i| i.name),
                code: info.map(|i| i.code),
                message: error.to_string(),
            }),
            value: None,
            meta: None,
            spill: None,
            additional_contexts: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// A success with its rendered text.
    pub fn success(tool: &str, text: String, value: ToolValue, meta: Option<SearchMeta>) -> Self {
        Self {
            tool: tool.to_owned(),
            text,
            is_error: false,
            error: None,
            value: Some(value),
            meta,
            spill: None,
            additional_contexts: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The error code, if any.
    pub fn code(&self) -> Option<&'static str> {
        self.error.as_ref().and_then(|e| e.code)
    }
}
