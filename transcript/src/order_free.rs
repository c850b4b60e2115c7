//! Comparing a grep page whose file order nothing pins: 0.1.0-rc.8 runs
//! rg with `--no-config` first, so the header's rg config (`--sort=path`,
//! which pins a multi-file grep's file order under 0.0.1) never reaches
//! rg, and rg lists files in its own (thread) order. Such a page is
//! compared without order ([`Comparison`]): its blank-line-separated
//! blocks (the summary line, each file's block, the footer) as a multiset
//! when it shows every match; of a capped page (fewer shown than found),
//! only what does not depend on which matches rg found first: the summary
//! line, the footer, the spill and the number of match lines shown. The
//! result's kind, error and warnings are always compared exactly, and so
//! is the text of an error result.

use fs_search_engine::release::Release;

use super::format::{Call, Header, Outcome};

/// How a record's page is compared with what was recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Comparison {
    /// Every part as recorded (the token count too, when both carry one).
    Exact,
    /// A grep page whose file order is rg's own: its blocks as a multiset
    /// (the token count is not compared).
    Unordered,
    /// A capped grep page whose order is rg's own: the summary line, the
    /// footer, the spill and the number of match lines shown; the matches
    /// shown are not compared (nor the token count).
    MatchesNotCompared,
}

impl Comparison {
    /// How the reports name it (the JUnit `comparison` property).
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::Unordered => "order-free",
            Self::MatchesNotCompared => "matches-not-compared",
        }
    }

    /// The kind for a page `expected` (the recorded one) of a record whose
    /// order is not pinned (`order_free`).
    pub fn of(order_free: bool, expected: &Outcome, current: &Outcome) -> Self {
        if !order_free || expected.is_error || current.is_error {
            return Self::Exact;
        }
        if capped(&expected.text) {
            Self::MatchesNotCompared
        } else if file_blocks(&expected.text) > 1 {
            Self::Unordered
        } else {
            // One file's matches (or none): no order to pin.
            Self::Exact
        }
    }

    /// Whether `current` shows what `expected` recorded, compared so.
    pub fn matches(self, expected: &Outcome, current: &Outcome) -> bool {
        let facts = expected.is_error == current.is_error
            && expected.error == current.error
            && expected.spill == current.spill
            && expected.warnings == current.warnings;
        match self {
            Self::Exact => expected.matches(current),
            Self::Unordered => facts && blocks_match(&expected.text, &current.text),
            Self::MatchesNotCompared => facts && capped_match(&expected.text, &current.text),
        }
    }
}

/// Whether `call`, replayed as `release` under `header`, gives a page
/// whose order nothing pins: a grep run as 0.1.0-rc.8 (which passes
/// `--no-config`) where the header's rg config pins an order (a `--sort`
/// line) that the call would otherwise get.
pub(crate) fn order_free(header: &Header, release: Release, call: &Call) -> bool {
    release == Release::Rc8
        && call.tool == "grep"
        && call.options.ripgrep_config
        && header
            .env
            .ripgrep_config
            .iter()
            .any(|line| line.trim_start().starts_with("--sort"))
}

/// Whether a grep page shows fewer matches than it found (`Found K of N
/// matches`).
fn capped(text: &str) -> bool {
    let summary = text.split('\n').next().unwrap_or_default();
    summary.starts_with("Found ") && summary.contains(" of ")
}

/// The number of file blocks a page shows (blocks holding match lines).
fn file_blocks(text: &str) -> usize {
    blocks(text)
        .iter()
        .skip(1)
        .filter(|b| is_file_block(b))
        .count()
}

/// A block naming a file and its match lines.
fn is_file_block(block: &str) -> bool {
    block.split('\n').skip(1).any(is_match_line)
}

/// The page's blank-line-separated blocks.
fn blocks(text: &str) -> Vec<&str> {
    text.split("\n\n").collect()
}

fn blocks_match(expected: &str, current: &str) -> bool {
    let mut a = blocks(expected);
    let mut b = blocks(current);
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// The summary line, the footer (the blocks after the last file block)
/// and the number of match lines shown.
fn capped_parts(text: &str) -> (&str, Vec<&str>, usize) {
    let blocks = blocks(text);
    let summary = blocks.first().copied().unwrap_or_default();
    let rest = blocks.get(1..).unwrap_or_default();
    let last_file = rest.iter().rposition(|b| is_file_block(b));
    let footer = match last_file {
        Some(i) => rest[i + 1..].to_vec(),
        None => rest.to_vec(),
    };
    let shown = rest
        .iter()
        .filter(|b| is_file_block(b))
        .flat_map(|b| b.split('\n').skip(1))
        .filter(|l| is_match_line(l))
        .count();
    (summary, footer, shown)
}

fn is_match_line(line: &str) -> bool {
    line.strip_prefix("Line ")
        .and_then(|rest| rest.split_once(':'))
        .is_some_and(|(number, _)| !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
}

fn capped_match(expected: &str, current: &str) -> bool {
    capped_parts(expected) == capped_parts(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(text: &str) -> Outcome {
        Outcome {
            is_error: false,
            error: None,
            spill: None,
            warnings: Vec::new(),
            text: text.into(),
            tokens: Some(1),
        }
    }

    const FULL: &str = "Found 3 matches\n\na.ts\nLine 1: x\nLine 2: x\n\nb.ts\nLine 4: x";
    const CAPPED: &str = "Found 2 of 5 matches\n\na.ts\nLine 1: x\n\nb.ts\nLine 4: x\n\n(Full grep result stored at: <SPILL>/x.)";

    #[test]
    fn a_full_page_compares_its_blocks_in_any_order_but_every_block_exactly() {
        let kind = Comparison::of(true, &page(FULL), &page(FULL));
        assert_eq!(kind, Comparison::Unordered);
        let swapped = page("Found 3 matches\n\nb.ts\nLine 4: x\n\na.ts\nLine 1: x\nLine 2: x");
        assert!(kind.matches(&page(FULL), &swapped));
        assert!(!Comparison::Exact.matches(&page(FULL), &swapped));
        let other_line = page("Found 3 matches\n\nb.ts\nLine 4: y\n\na.ts\nLine 1: x\nLine 2: x");
        assert!(!kind.matches(&page(FULL), &other_line));
        let mut error = page(FULL);
        error.is_error = true;
        assert!(!kind.matches(&page(FULL), &error));
        assert_eq!(Comparison::of(true, &error, &error), Comparison::Exact);
        assert_eq!(
            Comparison::of(false, &page(FULL), &swapped),
            Comparison::Exact
        );
        let one_file = page("Found 2 matches\n\na.ts\nLine 1: x\nLine 2: x");
        assert_eq!(
            Comparison::of(true, &one_file, &one_file),
            Comparison::Exact
        );
        let none = page("No matches found");
        assert_eq!(Comparison::of(true, &none, &none), Comparison::Exact);
    }

    #[test]
    fn a_capped_page_compares_summary_footer_and_the_number_shown_only() {
        let kind = Comparison::of(true, &page(CAPPED), &page(CAPPED));
        assert_eq!(kind, Comparison::MatchesNotCompared);
        let others = page(
            "Found 2 of 5 matches\n\nc.ts\nLine 9: x\nLine 10: y\n\n(Full grep result stored at: <SPILL>/x.)",
        );
        assert!(kind.matches(&page(CAPPED), &others));
        let fewer = page(
            "Found 2 of 5 matches\n\nc.ts\nLine 9: x\n\n(Full grep result stored at: <SPILL>/x.)",
        );
        assert!(!kind.matches(&page(CAPPED), &fewer));
        let other_footer = CAPPED.replace("stored at", "kept at");
        assert!(!kind.matches(&page(CAPPED), &page(&other_footer)));
        let other_summary = CAPPED.replace("2 of 5", "2 of 6");
        assert!(!kind.matches(&page(CAPPED), &page(&other_summary)));
        let mut spilled = page(CAPPED);
        spilled.spill = Some(crate::format::OutcomeSpill {
            locator: "<SPILL>/x".into(),
            bytes: 3,
        });
        assert!(!kind.matches(&page(CAPPED), &spilled));
    }
}
