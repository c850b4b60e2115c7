//! Which differences between two outcomes lie only in text rg writes
//! itself, so that a replay under another rg version can report them apart
//! from differences in the engine's own text.
//!
//! rg's own text reaches the model in two places (CONTRACT §7.3, §5):
//! - the stderr excerpt the engine appends to a `SEARCH_INVALID_PATTERN`
//!   or `SEARCH_FAILED` message (`Error: {message}: {stderr}`): the engine's
//!   message has no `": "` of its own, so everything after the first one
//!   following `Error: ` is rg's;
//! - the order of glob's paths (`--sort=modified`, whose order across
//!   directories rg 14 changed): the path lines before the page's blank
//!   line. Within the cap the same paths in another order; over the cap
//!   the same number of paths (which ones a page takes follows the order),
//!   the footer byte for byte.
//!
//! Everything else (the result's kind, error code, spill, warnings, the
//! engine's message, a grep page, whose file order the transcript's rg
//! config pins) is the engine's.

use super::format::Outcome;

/// How a replayed outcome differs from the recorded one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    /// Only in text rg writes itself (its stderr, glob's file order).
    RgText,
    /// In the engine's own text or in the kind of result.
    Engine,
}

impl Difference {
    /// How the difference of `current` from `recorded` (a `tool` call's
    /// outcomes, known to differ) is classified.
    pub fn of(tool: &str, recorded: &Outcome, current: &Outcome) -> Self {
        if only_rg_text_differs(tool, recorded, current) {
            Self::RgText
        } else {
            Self::Engine
        }
    }
}

/// The error codes whose text ends in rg's stderr.
const STDERR_CODES: [&str; 2] = ["SEARCH_INVALID_PATTERN", "SEARCH_FAILED"];

fn only_rg_text_differs(tool: &str, recorded: &Outcome, current: &Outcome) -> bool {
    let same_facts = recorded.is_error == current.is_error
        && recorded.error == current.error
        && recorded.spill == current.spill
        && recorded.warnings == current.warnings;
    if !same_facts {
        return false;
    }
    let code = recorded.error.as_ref().and_then(|e| e.code.as_deref());
    if code.is_some_and(|c| STDERR_CODES.contains(&c)) {
        return engine_message(&recorded.text) == engine_message(&current.text);
    }
    if tool == "glob" && !recorded.is_error {
        return same_page_but_for_path_order(&recorded.text, &current.text);
    }
    false
}

/// The engine's part of an error text ending in rg's stderr: up to and
/// including the first `": "` after `Error: ` (the whole text when rg
/// wrote nothing).
fn engine_message(text: &str) -> &str {
    let body_start = if text.starts_with("Error: ") {
        "Error: ".len()
    } else {
        0
    };
    match text[body_start..].find(": ") {
        Some(at) => &text[..body_start + at + 2],
        None => text,
    }
}

/// Whether two glob pages differ only in their path lines: the same
/// number of them and the same footer; within the cap (no footer) the
/// same paths.
fn same_page_but_for_path_order(recorded: &str, current: &str) -> bool {
    let (old_paths, old_rest) = split_page(recorded);
    let (new_paths, new_rest) = split_page(current);
    if old_rest != new_rest || old_paths.len() != new_paths.len() {
        return false;
    }
    if old_rest.is_empty() {
        let (mut old, mut new) = (old_paths, new_paths);
        old.sort_unstable();
        new.sort_unstable();
        return old == new;
    }
    true
}

/// A glob page's path lines and the rest (the blank line and footer).
fn split_page(text: &str) -> (Vec<&str>, &str) {
    let (paths, rest) = text.split_once("\n\n").unwrap_or((text, ""));
    (paths.split('\n').collect(), rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::OutcomeError;

    fn error(code: &str, text: &str) -> Outcome {
        Outcome {
            is_error: true,
            error: Some(OutcomeError {
                name: Some("SearchError".into()),
                code: Some(code.into()),
            }),
            spill: None,
            warnings: Vec::new(),
            text: text.into(),
            tokens: None,
        }
    }

    fn page(text: &str) -> Outcome {
        Outcome {
            is_error: false,
            error: None,
            spill: None,
            warnings: Vec::new(),
            text: text.into(),
            tokens: None,
        }
    }

    #[test]
    fn a_changed_stderr_after_the_same_engine_message_is_rg_text() {
        let rg13 = error(
            "SEARCH_INVALID_PATTERN",
            "Error: glob pattern rejected by ripgrep: error parsing glob '[': unclosed character class; missing ']'",
        );
        let rg15 = error(
            "SEARCH_INVALID_PATTERN",
            "Error: glob pattern rejected by ripgrep: rg: error parsing glob '[': unclosed character class; missing ']'",
        );
        assert_eq!(Difference::of("glob", &rg13, &rg15), Difference::RgText);
        let failed13 = error(
            "SEARCH_FAILED",
            "Error: grep search failed (exit 2): no-such-dir: No such file or directory (os error 2)",
        );
        let failed15 = error(
            "SEARCH_FAILED",
            "Error: grep search failed (exit 2): rg: no-such-dir: IO error for operation on no-such-dir: No such file or directory (os error 2)",
        );
        assert_eq!(
            Difference::of("grep", &failed13, &failed15),
            Difference::RgText
        );
    }

    #[test]
    fn a_changed_engine_message_exit_code_or_result_kind_is_the_engines() {
        let exit2 = error("SEARCH_FAILED", "Error: grep search failed (exit 2): boom");
        let exit3 = error("SEARCH_FAILED", "Error: grep search failed (exit 3): boom");
        assert_eq!(Difference::of("grep", &exit2, &exit3), Difference::Engine);
        let reworded = error("SEARCH_FAILED", "Error: grep failed (exit 2): boom");
        assert_eq!(
            Difference::of("grep", &exit2, &reworded),
            Difference::Engine
        );
        let rejected = error(
            "SEARCH_INVALID_PATTERN",
            "Error: glob pattern rejected by ripgrep: error parsing glob '{a,{b,c}}': nested alternate groups are not allowed",
        );
        assert_eq!(
            Difference::of("glob", &rejected, &page("No files found")),
            Difference::Engine
        );
        let timeout = error("SEARCH_ABORTED", "Error: glob timed out after 5ms: x");
        let other = error("SEARCH_ABORTED", "Error: glob timed out after 5ms: y");
        assert_eq!(Difference::of("glob", &timeout, &other), Difference::Engine);
    }

    #[test]
    fn glob_paths_in_another_order_with_the_same_footer_are_rg_text() {
        let within13 = page("top.txt\nb/old.txt\na/mid.txt");
        let within14 = page("b/old.txt\ntop.txt\na/mid.txt");
        assert_eq!(
            Difference::of("glob", &within13, &within14),
            Difference::RgText
        );
        // Within the cap the same paths must come back.
        let other_path = page("b/old.txt\ntop.txt\na/new.txt");
        assert_eq!(
            Difference::of("glob", &within13, &other_path),
            Difference::Engine
        );
        let footer = "(Showing 2 of 4 paths. Full sorted result stored at: <SPILL>/x. Use it.)";
        let over13 = page(&format!("top.txt\nb/old.txt\n\n{footer}"));
        let over14 = page(&format!("b/old.txt\na/mid.txt\n\n{footer}"));
        assert_eq!(Difference::of("glob", &over13, &over14), Difference::RgText);
        let fewer = page(&format!("b/old.txt\n\n{footer}"));
        assert_eq!(Difference::of("glob", &over13, &fewer), Difference::Engine);
        let other_footer = page(&format!("b/old.txt\na/mid.txt\n\n{footer} "));
        assert_eq!(
            Difference::of("glob", &over13, &other_footer),
            Difference::Engine
        );
        // grep's file order is pinned by the transcript's rg config.
        let grep13 = page("Found 2 matches\n\na.ts\nLine 1: x\n\nb.ts\nLine 1: x");
        let grep14 = page("Found 2 matches\n\nb.ts\nLine 1: x\n\na.ts\nLine 1: x");
        assert_eq!(Difference::of("grep", &grep13, &grep14), Difference::Engine);
    }
}
