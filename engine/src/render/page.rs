//! A rendered page: the model-visible text and the byte ranges of its
//! parts, so no consumer re-derives them from the text.

use std::ops::Range;

/// Where the parts of a rendered page are in its text, as byte ranges:
/// the footer paragraph the engine appended to an over-cap page (without
/// the blank line before it) and, inside it, the spill locator.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TextParts {
    /// The footer paragraph, `(Showing …)` or `(Full grep result …)`.
    pub footer: Option<Range<usize>>,
    /// The spill locator inside the footer.
    pub locator: Option<Range<usize>>,
}

/// A rendered page: the model-visible text and where its parts are.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// Exactly what the model sees.
    pub text: String,
    /// Where the footer and the locator are in `text`.
    pub parts: TextParts,
}

impl Page {
    /// A page with no footer.
    pub fn plain(text: String) -> Self {
        Self {
            text,
            parts: TextParts::default(),
        }
    }
}
