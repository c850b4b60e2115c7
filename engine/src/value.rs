//! Canonical values: the complete, structured result of a call (every
//! path, every match with its full line), as the output schemas define it.

use serde::{Deserialize, Serialize};

/// `glob`'s canonical value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobValue {
    pub root: String,
    pub paths: Vec<String>,
}

/// One grep match: display path, 1-based line number, full line text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrepMatch {
    pub path: String,
    pub line_number: i64,
    pub line: String,
}

/// `grep`'s canonical value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepValue {
    pub matches: Vec<GrepMatch>,
}

/// The canonical value of either tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ToolValue {
    Glob(GlobValue),
    Grep(GrepValue),
}

impl ToolValue {
    /// The number of results the inline cap applies to.
    pub fn len(&self) -> usize {
        match self {
            Self::Glob(v) => v.paths.len(),
            Self::Grep(v) => v.matches.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
