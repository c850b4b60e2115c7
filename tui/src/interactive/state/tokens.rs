//! Token counts in the TUI: the tokenizer (loaded in the
//! background: counts appear once it is ready), each call's page tokens,
//! the surface's counts per section and tool, what the latest config
//! change did to the cached request prefix, and a page's tokens through
//! the Text tab's host lens. Plain data and pure
//! functions; `App` fills it in.

use std::collections::HashMap;

use fs_search_tokens::{PartKind, PrefixComparison, compare_prefixes};

use super::load::LoadInfo;
use fs_search_process::{SharedTokenizer, request_parts, thousands};
use fs_search_tokens::{Part, Tokenizer};

/// Where the tokenizer is.
#[derive(Debug, Clone, Default)]
pub enum TokenizerStatus {
    /// Not asked for (no counts are shown).
    #[default]
    Off,
    /// Loading in the background.
    Loading,
    Ready(SharedTokenizer),
    /// It did not load (the message names the file).
    Failed(String),
}

/// The tokens of one result page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageTokens {
    /// The model-visible text.
    pub text: usize,
    /// The spilled full result, once counted (`None`: nothing spilled, or
    /// not counted yet).
    pub full: Option<usize>,
}

impl PageTokens {
    /// `1,234 tokens`, or `1,234 tokens of 45,678` with a full result.
    /// A full result with fewer tokens than the page (a small result: the
    /// page adds its footer) reads `106 tokens (full result 27)`, not "of".
    pub fn label(&self) -> String {
        let text = thousands(self.text);
        match self.full {
            Some(full) if full < self.text => {
                format!("{text} tokens (full result {})", thousands(full))
            }
            Some(full) => format!("{text} tokens of {}", thousands(full)),
            None => format!("{text} tokens"),
        }
    }
}

/// `2,500 tokens via codex@0.120 (page 12,345)`: the tokens of a page
/// through the lens `name`, then the page's own.
pub(crate) fn lensed_label(name: &str, lensed: usize, page: PageTokens) -> String {
    format!(
        "{} tokens via {name} (page {})",
        thousands(lensed),
        thousands(page.text)
    )
}

/// The tokens of each prompt section and tool definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SurfaceTokens {
    pub sections: Vec<usize>,
    pub tools: Vec<usize>,
}

impl SurfaceTokens {
    /// Counts `info`'s sections and tool definitions (the serialization
    /// of [`fs_search_tokens::tool_definition_text`]).
    pub fn count(tokenizer: &Tokenizer, info: &LoadInfo) -> Self {
        let parts = request_parts(&info.sections, &info.tools);
        let (sections, tools): (Vec<&Part>, Vec<&Part>) =
            parts.iter().partition(|p| p.kind == PartKind::Section);
        Self {
            sections: sections.iter().map(|p| tokenizer.count(&p.text)).collect(),
            tools: tools.iter().map(|p| tokenizer.count(&p.text)).collect(),
        }
    }

    /// The fixed cost per request.
    pub fn total(&self) -> usize {
        self.sections.iter().chain(&self.tools).sum()
    }
}

/// The token state of the session.
#[derive(Debug, Clone, Default)]
pub struct TokenState {
    pub tokenizer: TokenizerStatus,
    /// Page tokens by call id.
    pub calls: HashMap<u64, PageTokens>,
    /// The tokens of a page through a host lens, by call id and the
    /// lens's index in `fs_search_lens::LENSES`.
    pub lensed: HashMap<(u64, usize), usize>,
    /// What the registered plugin shows the model (an empty prefix when
    /// rg is missing), and what it showed before the latest config change.
    pub current: Option<LoadInfo>,
    pub previous: Option<LoadInfo>,
    /// The current surface's counts.
    pub surface: Option<SurfaceTokens>,
    /// What the latest config change did to the cached prefix.
    pub change: Option<String>,
}

impl TokenState {
    /// The tokenizer, when ready.
    pub fn tokenizer(&self) -> Option<&Tokenizer> {
        match &self.tokenizer {
            TokenizerStatus::Ready(shared) => Some(&shared.0),
            _ => None,
        }
    }

    /// The tokens of call `id`'s page, once counted.
    pub fn page(&self, id: u64) -> Option<PageTokens> {
        self.calls.get(&id).copied()
    }

    /// The tokens the session's results added to the context.
    pub fn session_total(&self) -> usize {
        self.calls.values().map(|p| p.text).sum()
    }
}

/// What changing the config from `before` to `after` does to a cached
/// request prefix.
pub(crate) fn prefix_change(tokenizer: &Tokenizer, before: &LoadInfo, after: &LoadInfo) -> String {
    let a = tokenizer.encode_prefix(&request_parts(&before.sections, &before.tools));
    let b = tokenizer.encode_prefix(&request_parts(&after.sections, &after.tools));
    change_text(&compare_prefixes(&a, &b))
}

/// "prefix unchanged", or where the cached prefix stops being valid.
pub(crate) fn change_text(comparison: &PrefixComparison) -> String {
    match &comparison.first_difference {
        None => "prefix unchanged: the cached prefix stays valid".to_owned(),
        Some(first) => {
            let kind = match first.part {
                PartKind::Section => "section",
                PartKind::Tool => "tool",
            };
            format!(
                "this change invalidates the cached prefix from {kind} {} (token {} of {})",
                first.name,
                thousands(first.token_index),
                thousands(comparison.tokens_a)
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_labels() {
        let page = PageTokens {
            text: 1234,
            full: None,
        };
        assert_eq!(page.label(), "1,234 tokens");
        let page = PageTokens {
            text: 1234,
            full: Some(45678),
        };
        assert_eq!(page.label(), "1,234 tokens of 45,678");
        let page = PageTokens {
            text: 1234,
            full: Some(1234),
        };
        assert_eq!(page.label(), "1,234 tokens of 1,234");
        // A small spill: the page's footer outweighs the full result.
        let page = PageTokens {
            text: 106,
            full: Some(27),
        };
        assert_eq!(page.label(), "106 tokens (full result 27)");
    }

    #[test]
    fn a_lensed_label_leads_with_what_the_host_passes_on() {
        let page = PageTokens {
            text: 12345,
            full: Some(99999),
        };
        assert_eq!(
            lensed_label("codex@0.120", 2500, page),
            "2,500 tokens via codex@0.120 (page 12,345)"
        );
    }
}
