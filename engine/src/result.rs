//! The result of one call as the host sees it: the model-visible text and
//! where its parts are, the error metadata, and the structured parts kept
//! beside it (canonical value, search card, spill).

use serde::{Serialize, Serializer};

use crate::error::{ErrorCode, ToolError};
use crate::render::meta::SearchMeta;
use crate::render::page::{Page, TextParts};
use crate::spill::SpillRef;
use crate::value::ToolValue;

/// `error` of a failed result: the message, and `{name, code}` only for
/// coded (harness) errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResultError {
    /// `{name, code}`; `None` for the package's plain errors.
    pub code: Option<ErrorCode>,
    /// The message (the model-visible text is `Error: {message}`).
    pub message: String,
}

impl ResultError {
    /// The error's `name`, when it is coded.
    pub fn name(&self) -> Option<&'static str> {
        self.code.map(ErrorCode::name)
    }

    /// The error's `code` string, when it is coded.
    pub fn code_str(&self) -> Option<&'static str> {
        self.code.map(ErrorCode::code)
    }
}

/// Serialised as `{name, code, message}`, `name` and `code` null for
/// plain errors.
impl Serialize for ResultError {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut out = serializer.serialize_struct("ResultError", 3)?;
        out.serialize_field("name", &self.name())?;
        out.serialize_field("code", &self.code_str())?;
        out.serialize_field("message", &self.message)?;
        out.end()
    }
}

/// One call's outcome.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    /// The tool name the call asked for.
    pub tool: String,
    /// Exactly what the model sees.
    pub text: String,
    /// Where the footer and the spill locator are in `text`.
    #[serde(skip)]
    pub parts: TextParts,
    /// The result's `isError`.
    pub is_error: bool,
    /// The normalised error of a failed call.
    pub error: Option<ResultError>,
    /// The canonical value (successes only).
    pub value: Option<ToolValue>,
    /// The UI card (direct successful calls only).
    pub meta: Option<SearchMeta>,
    /// The formatted-result spill behind the footer, when one was saved.
    pub spill: Option<SpillRef>,
    /// Additional contexts post-execute listeners attached.
    pub additional_contexts: Vec<String>,
    /// Warnings logged while producing this result.
    pub warnings: Vec<String>,
}

impl ToolResult {
    /// The normalised failure result of `error`.
    pub fn failure(tool: &str, error: &ToolError) -> Self {
        Self {
            tool: tool.to_owned(),
            text: error.model_text(),
            parts: TextParts::default(),
            is_error: true,
            error: Some(ResultError {
                code: error.info(),
                message: error.to_string(),
            }),
            value: None,
            meta: None,
            spill: None,
            additional_contexts: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// A success with its rendered page.
    pub fn success(tool: &str, page: Page, value: ToolValue, meta: Option<SearchMeta>) -> Self {
        Self {
            tool: tool.to_owned(),
            text: page.text,
            parts: page.parts,
            is_error: false,
            error: None,
            value: Some(value),
            meta,
            spill: None,
            additional_contexts: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The error's `{name, code}`, if the call failed with a coded error.
    pub fn code(&self) -> Option<ErrorCode> {
        self.error.as_ref().and_then(|e| e.code)
    }

    /// The text before the footer and the blank line that precedes it
    /// (the whole text when there is no footer).
    pub fn body(&self) -> &str {
        let Some(footer) = &self.parts.footer else {
            return &self.text;
        };
        let before = self.text.get(..footer.start).unwrap_or(&self.text);
        before.strip_suffix("\n\n").unwrap_or(before)
    }

    /// The footer paragraph the engine appended, if any.
    pub fn footer(&self) -> Option<&str> {
        self.text.get(self.parts.footer.clone()?)
    }

    /// The spill locator as it appears in the text, if any.
    pub fn locator(&self) -> Option<&str> {
        self.text.get(self.parts.locator.clone()?)
    }
}
