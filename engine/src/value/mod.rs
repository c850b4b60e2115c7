//! Canonical values: the complete, structured result of a call (every
//! path, every match with its full line), as the output schemas define it:
//! [`ToolValue`], [`GlobValue`], [`GrepValue`] of [`GrepMatch`]es, each
//! with its [`Line`].

pub(crate) mod line;
pub(crate) mod match_list;
pub(crate) mod mtime_sort;
pub(crate) mod paths;

use std::sync::Arc;

use serde::{Deserialize, Serialize};

pub use line::Line;
pub use paths::resolve_lexically;

/// `glob`'s canonical value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GlobValue {
    /// The searched directory, relative to the workspace (`.` for it).
    pub root: String,
    /// The matched paths in rg's order.
    pub paths: Vec<String>,
}

/// One grep match: display path, 1-based line number, full line text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct GrepMatch {
    /// The file's display path, shared by the file's matches.
    pub path: Arc<str>,
    /// The 1-based line number.
    pub line_number: i64,
    /// The matched line, without its line terminator.
    pub line: Line,
}

/// `grep`'s canonical value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GrepValue {
    /// The matches in rg's order.
    pub matches: Vec<GrepMatch>,
}

/// The canonical value of either tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ToolValue {
    /// A glob value.
    Glob(GlobValue),
    /// A grep value.
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

    /// Whether nothing matched.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
