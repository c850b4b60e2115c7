//! The model-visible text of a successful call: glob pages with their
//! footers (§5.6, §5.8), grep pages (§6.5), and the spilled full texts (§8.2).

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use crate::render::page::{Page, TextParts};
use crate::render::sample::sample_across_top_level;
use crate::render::sample_levels::{LevelReach, sample_level_by_level};
use crate::request::config::Config;
use crate::spill::{SpillRef, TextPieces};
use crate::support::text::utf8_prefix;
use crate::value::{GlobValue, GrepMatch, GrepValue};

/// The marker appended to a cut line preview.
pub(crate) const LINE_TRUNCATED: &str = " (line truncated)";

/// The glob footer's recovery sentence.
const GLOB_RECOVERY: Recovery = Recovery {
    stored_at: "Full sorted result stored at: ",
    not_saved: "The complete result could not be saved; narrow pattern or path to see more.",
};
/// The grep footer's recovery sentence.
const GREP_RECOVERY: Recovery = Recovery {
    stored_at: "Full grep result stored at: ",
    not_saved: "The complete result could not be saved; narrow pattern, path, or include to see more.",
};

/// `previewLine`: the longest whole-character prefix within `max_bytes`,
/// plus ` (line truncated)` when anything was cut.
pub fn preview_line(line: &str, max_bytes: usize) -> Cow<'_, str> {
    if line.len() <= max_bytes {
        return Cow::Borrowed(line);
    }
    let kept = utf8_prefix(line, max_bytes);
    let mut out = String::with_capacity(kept.len() + LINE_TRUNCATED.len());
    out.push_str(kept);
    out.push_str(LINE_TRUNCATED);
    Cow::Owned(out)
}

/// A match as rendered: path, line number, previewed line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PreviewedMatch<'a> {
    pub path: &'a str,
    pub line_number: i64,
    pub line: Cow<'a, str>,
}

/// Previews the first `limit` matches.
pub(crate) fn preview_matches(
    matches: &[GrepMatch],
    limit: usize,
    max_bytes: usize,
) -> Vec<PreviewedMatch<'_>> {
    matches
        .iter()
        .take(limit)
        .map(|m| PreviewedMatch {
            path: &m.path,
            line_number: m.line_number,
            line: preview_line(&m.line, max_bytes),
        })
        .collect()
}

/// Groups matches by exact path in first-seen order (indices into `matches`).
pub(crate) fn group_by_file<'m>(matches: &[PreviewedMatch<'m>]) -> Vec<(&'m str, Vec<usize>)> {
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<(&'m str, Vec<usize>)> = Vec::new();
    let mut last: Option<usize> = None;
    for (i, m) in matches.iter().enumerate() {
        // rg prints a file's matches together: most rows join the group of
        // the row before, without a hash lookup.
        if let Some(at) = last
            && groups[at].0 == m.path
        {
            groups[at].1.push(i);
            continue;
        }
        let next = groups.len();
        let at = *index_of.entry(m.path).or_insert(next);
        if at == next {
            groups.push((m.path, Vec::new()));
        }
        groups[at].1.push(i);
        last = Some(at);
    }
    groups
}

/// Appends the decimal form of `n` (what `{}` formats) without the
/// formatting machinery.
fn push_integer(out: &mut String, n: i64) {
    out.push_str(itoa::Buffer::new().format(n));
}

/// `formatGrepMatches`: each file's path, then `Line {n}: {line}` rows;
/// files separated by a blank line.
pub fn format_grep_matches(matches: &[PreviewedMatch<'_>]) -> String {
    let size: usize = matches
        .iter()
        .map(|m| m.path.len() + m.line.len() + 16)
        .sum();
    let mut out = String::with_capacity(size);
    for (g, (path, rows)) in group_by_file(matches).iter().enumerate() {
        if g > 0 {
            out.push_str("\n\n");
        }
        out.push_str(path);
        for &i in rows {
            let m = &matches[i];
            out.push_str("\nLine ");
            push_integer(&mut out, m.line_number);
            out.push_str(": ");
            out.push_str(&m.line);
        }
    }
    out
}

/// How one tool's footer ends: the recovery sentence that names the saved
/// full result, or says it could not be saved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Recovery {
    /// Before the spill's locator.
    stored_at: &'static str,
    /// Without a spill.
    not_saved: &'static str,
}

impl Recovery {
    /// Appends the recovery sentence for `spill` and the footer's closing
    /// parenthesis; returns where the locator is.
    fn push(self, out: &mut String, spill: Option<&SpillRef>) -> Option<Range<usize>> {
        let mut locator = None;
        match spill {
            Some(r) => {
                out.push_str(self.stored_at);
                let at = out.len();
                out.push_str(&r.locator);
                locator = Some(at..out.len());
                out.push_str(". ");
                out.push_str(&r.retrieval_hint);
            }
            None => out.push_str(self.not_saved),
        }
        out.push(')');
        locator
    }
}

/// Where an over-cap page's footer leaves its recovery sentence: all the
/// page says before it is the same whatever was saved, so a spill saved
/// after the page was rendered is named without rendering it again (for
/// glob: without sampling again).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SpillSlot {
    footer_start: usize,
    recovery_start: usize,
    recovery: Recovery,
}

impl SpillSlot {
    /// The page `text` (the one this slot was made with) naming `spill`
    /// instead, byte for byte what rendering it with `spill` gives;
    /// `None` when `text` is not that page.
    pub(crate) fn fill(&self, text: &str, spill: Option<&SpillRef>) -> Option<Page> {
        let kept = text.get(..self.recovery_start)?;
        let tail = spill.map_or(self.recovery.not_saved.len(), |r| {
            self.recovery.stored_at.len() + r.locator.len() + 2 + r.retrieval_hint.len()
        });
        let mut out = String::with_capacity(kept.len() + tail + 1);
        out.push_str(kept);
        let locator = self.recovery.push(&mut out, spill);
        Some(Page {
            parts: TextParts {
                footer: Some(self.footer_start..out.len()),
                locator,
            },
            text: out,
        })
    }
}

/// A freshly rendered page and, when it has a footer, where its recovery
/// sentence is.
pub(crate) struct Rendered {
    pub page: Page,
    pub slot: Option<SpillSlot>,
}

/// Appends the footer paragraph `({lead}{recovery})` after a blank line:
/// the recovery sentence names the saved full result at `spill`, or says
/// it could not be saved. Returns where the footer and the locator are,
/// and the slot that names another spill.
fn push_footer(
    out: &mut String,
    lead: &str,
    recovery: Recovery,
    spill: Option<&SpillRef>,
) -> (TextParts, SpillSlot) {
    out.push_str("\n\n");
    let footer_start = out.len();
    out.push('(');
    out.push_str(lead);
    let recovery_start = out.len();
    let locator = recovery.push(out, spill);
    let parts = TextParts {
        footer: Some(footer_start..out.len()),
        locator,
    };
    let slot = SpillSlot {
        footer_start,
        recovery_start,
        recovery,
    };
    (parts, slot)
}

/// The inline glob page and the footer basis it implies.
pub(crate) struct GlobPage<'a> {
    pub paths: Vec<&'a str>,
    /// `None` within the cap; else the `{BASIS}` text of the footer.
    pub basis: Option<String>,
}

/// The paths shown inline, and how the footer explains them.
pub(crate) fn glob_page<'a>(value: &'a GlobValue, config: &Config) -> GlobPage<'a> {
    let cap = config.glob_cap();
    let total = value.paths.len();
    if total <= cap {
        return GlobPage {
            paths: value.paths.iter().map(String::as_str).collect(),
            basis: None,
        };
    }
    if !config.sample_over_cap_glob_results {
        return GlobPage {
            paths: value.paths[..cap].iter().map(String::as_str).collect(),
            basis: Some(".".to_owned()),
        };
    }
    if let Some(depth) = config.recursive_glob_sample_depth() {
        return level_sampled_page(value, cap, depth.as_usize_saturating());
    }
    let sample = sample_across_top_level(&value.paths, cap, &value.root);
    let basis = if sample.total == total {
        ".".to_owned()
    } else {
        let mut basis = format!(
            ", sampled across {} of the {} top-level entries this pattern matched instead of taken in modification-time order.",
            sample.shown, sample.total
        );
        if sample.shown < sample.total {
            basis.push_str(NARROW_PATH);
        }
        basis
    };
    GlobPage {
        paths: sample.items,
        basis: Some(basis),
    }
}

/// The footer's hint when the page leaves entries out (CONTRACT §5.8).
const NARROW_PATH: &str = " Narrow path to inspect a specific subtree.";

/// The page of the `globSampleDepth` opt-in (above 1): sampled level by
/// level. Its footer names the reach of the top level and of the deepest
/// level sampled; a flat result (every path its own top-level entry) keeps
/// the contract's plain footer, as does a result with no second level.
fn level_sampled_page(value: &GlobValue, cap: usize, depth: usize) -> GlobPage<'_> {
    let sample = sample_level_by_level(&value.paths, cap, &value.root, depth);
    let top = sample
        .levels
        .first()
        .copied()
        .unwrap_or(LevelReach { shown: 0, total: 0 });
    let basis = if top.total == value.paths.len() {
        ".".to_owned()
    } else {
        let deepest = sample.levels.len();
        let mut basis = match sample.levels.last() {
            Some(last) if deepest > 1 => level_sampled_basis(top, *last, deepest),
            _ => format!(
                ", sampled across {} of the {} top-level entries this pattern matched instead of taken in modification-time order.",
                top.shown, top.total
            ),
        };
        if sample.levels.iter().any(|level| level.shown < level.total) {
            basis.push_str(NARROW_PATH);
        }
        basis
    };
    GlobPage {
        paths: sample.items,
        basis: Some(basis),
    }
}

/// The `{BASIS}` of a page sampled level by level down to `deepest`
/// (beyond the contract; docs/contract.md §0.6).
fn level_sampled_basis(top: LevelReach, last: LevelReach, deepest: usize) -> String {
    format!(
        ", sampled level by level across {} of the {} top-level entries this pattern matched and {} of the {} entries {} levels deep instead of taken in modification-time order.",
        top.shown, top.total, last.shown, last.total, deepest
    )
}

/// The model-visible glob page, with `spill` naming the saved full list.
pub fn render_glob(value: &GlobValue, config: &Config, spill: Option<&SpillRef>) -> Page {
    render_glob_page(&glob_page(value, config), value.paths.len(), spill).page
}

/// The model-visible page of an already computed page of `total` paths.
pub(crate) fn render_glob_page(
    page: &GlobPage<'_>,
    total: usize,
    spill: Option<&SpillRef>,
) -> Rendered {
    if total == 0 {
        return Rendered {
            page: Page::plain("No files found".to_owned()),
            slot: None,
        };
    }
    let mut out = page.paths.join("\n");
    let mut parts = TextParts::default();
    let mut slot = None;
    if let Some(basis) = &page.basis {
        let lead = format!("Showing {} of {} paths{} ", page.paths.len(), total, basis);
        let (footer, at) = push_footer(&mut out, &lead, GLOB_RECOVERY, spill);
        (parts, slot) = (footer, Some(at));
    }
    Rendered {
        page: Page { text: out, parts },
        slot,
    }
}

/// The model-visible grep page, with `spill` naming the saved full list.
pub fn render_grep(value: &GrepValue, config: &Config, spill: Option<&SpillRef>) -> Page {
    render_grep_page(value, config, spill).page
}

/// [`render_grep`], with the slot that names a spill saved afterwards.
pub(crate) fn render_grep_page(
    value: &GrepValue,
    config: &Config,
    spill: Option<&SpillRef>,
) -> Rendered {
    let seen = value.matches.len();
    if seen == 0 {
        return Rendered {
            page: Page::plain("No matches found".to_owned()),
            slot: None,
        };
    }
    let cap = config.grep_cap();
    let kept = preview_matches(&value.matches, cap, config.line_budget());
    let header = if seen > cap {
        format!("Found {} of {} matches", kept.len(), seen)
    } else if seen == 1 {
        "Found 1 match".to_owned()
    } else {
        format!("Found {seen} matches")
    };
    let mut out = header;
    out.push_str("\n\n");
    out.push_str(&format_grep_matches(&kept));
    let mut parts = TextParts::default();
    let mut slot = None;
    if seen > cap {
        let (footer, at) = push_footer(&mut out, "", GREP_RECOVERY, spill);
        (parts, slot) = (footer, Some(at));
    }
    Rendered {
        page: Page { text: out, parts },
        slot,
    }
}

/// About how much text a spill piece holds: one match line or path more
/// at most.
const SPILL_PIECE_BYTES: usize = 128 << 10;

/// The complete sorted path list a glob spill saves.
pub fn glob_spill_content(value: &GlobValue) -> String {
    whole_text(glob_spill_pieces(value))
}

/// The complete previewed match list a grep spill saves.
pub fn grep_spill_content(value: &GrepValue, config: &Config) -> String {
    whole_text(grep_spill_pieces(value, config))
}

/// Every piece of `pieces`, in one string.
fn whole_text(mut pieces: impl TextPieces) -> String {
    let mut out = String::new();
    while pieces.next_piece(&mut out) {}
    out
}

/// [`glob_spill_content`], a piece at a time.
pub(crate) fn glob_spill_pieces(value: &GlobValue) -> GlobSpillPieces<'_> {
    GlobSpillPieces {
        rest: &value.paths,
        started: false,
        piece_bytes: SPILL_PIECE_BYTES,
    }
}

/// The glob spill text's pieces: the paths, one per line.
pub(crate) struct GlobSpillPieces<'a> {
    rest: &'a [String],
    started: bool,
    piece_bytes: usize,
}

impl TextPieces for GlobSpillPieces<'_> {
    fn next_piece(&mut self, out: &mut String) -> bool {
        if self.rest.is_empty() {
            return false;
        }
        out.reserve(self.piece_bytes);
        let start = out.len();
        while let Some((path, rest)) = self.rest.split_first() {
            if out.len() - start >= self.piece_bytes {
                break;
            }
            if self.started {
                out.push('\n');
            }
            out.push_str(path);
            self.started = true;
            self.rest = rest;
        }
        true
    }
}

/// [`grep_spill_content`], a piece at a time.
pub(crate) fn grep_spill_pieces<'a>(value: &'a GrepValue, config: &Config) -> GrepSpillPieces<'a> {
    let header = format!("Found {} matches\n\n", value.matches.len());
    let budget = config.line_budget();
    let grouped = grouped(&value.matches);
    let first = if grouped {
        header
    } else {
        let all = preview_matches(&value.matches, usize::MAX, budget);
        header + &format_grep_matches(&all)
    };
    GrepSpillPieces {
        first: Some(first),
        rest: if grouped { &value.matches } else { &[] },
        last_path: None,
        budget,
        piece_bytes: SPILL_PIECE_BYTES,
    }
}

/// The grep spill text's pieces: the header, then the matches file by
/// file. When no path comes back after another path's matches (as rg
/// prints them) the matches are formatted as they come; otherwise the
/// first piece is the whole text, grouped by [`format_grep_matches`].
pub(crate) struct GrepSpillPieces<'a> {
    first: Option<String>,
    rest: &'a [GrepMatch],
    last_path: Option<&'a Arc<str>>,
    budget: usize,
    piece_bytes: usize,
}

impl TextPieces for GrepSpillPieces<'_> {
    fn next_piece(&mut self, out: &mut String) -> bool {
        let first = self.first.take();
        if first.is_none() && self.rest.is_empty() {
            return false;
        }
        out.reserve(self.piece_bytes);
        let start = out.len();
        if let Some(first) = first {
            out.push_str(&first);
        }
        while let Some((m, rest)) = self.rest.split_first() {
            if out.len() - start >= self.piece_bytes {
                break;
            }
            if !self.last_path.is_some_and(|last| same_path(last, &m.path)) {
                if self.last_path.is_some() {
                    out.push_str("\n\n");
                }
                out.push_str(&m.path);
                self.last_path = Some(&m.path);
            }
            out.push_str("\nLine ");
            push_integer(out, m.line_number);
            out.push_str(": ");
            out.push_str(&preview_line(&m.line, self.budget));
            self.rest = rest;
        }
        true
    }
}

/// Whether no path comes back after another path's matches.
fn grouped(matches: &[GrepMatch]) -> bool {
    let mut seen = foldhash::HashSet::default();
    let mut last: Option<&Arc<str>> = None;
    for m in matches {
        if !last.is_some_and(|last| same_path(last, &m.path)) {
            if !seen.insert(&*m.path) {
                return false;
            }
            last = Some(&m.path);
        }
    }
    true
}

/// Whether two match paths are the same text: a file's matches share one
/// allocation, so the pointer usually answers.
fn same_path(a: &Arc<str>, b: &Arc<str>) -> bool {
    Arc::ptr_eq(a, b) || a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glob(paths: &[&str], root: &str) -> GlobValue {
        GlobValue {
            root: root.into(),
            paths: paths.iter().map(|s| s.to_string()).collect(),
        }
    }

    fn m(path: &str, n: i64, line: &str) -> GrepMatch {
        GrepMatch {
            path: path.into(),
            line_number: n,
            line: line.into(),
        }
    }

    fn capped(sampling: bool, glob_cap: u64, grep_cap: u64) -> Config {
        Config {
            glob_max_results: glob_cap.into(),
            grep_max_matches: grep_cap.into(),
            ..Config::with_sampling(sampling)
        }
    }

    /// CONTRACT §10.13 #103
    #[test]
    fn preview_keeps_a_within_budget_line_untouched() {
        assert_eq!(preview_line("short", 100), "short");
    }

    #[test]
    fn preview_cuts_on_character_boundaries_and_marks_the_cut() {
        assert_eq!(preview_line("aéaéaéaé", 7), "aéaéa (line truncated)");
        assert_eq!(preview_line("é", 1), " (line truncated)");
    }

    /// CONTRACT §10.13 #104
    #[test]
    fn format_groups_by_first_seen_file_order() {
        let matches = [m("b.ts", 2, "x"), m("a.ts", 1, "y"), m("b.ts", 5, "z")];
        let previewed = preview_matches(&matches, usize::MAX, 100);
        assert_eq!(
            format_grep_matches(&previewed),
            "b.ts\nLine 2: x\nLine 5: z\n\na.ts\nLine 1: y"
        );
    }

    #[test]
    fn integers_are_written_like_display() {
        for n in [0, 7, -7, 10, 1_234_567, i64::MAX, i64::MIN] {
            let mut out = String::new();
            push_integer(&mut out, n);
            assert_eq!(out, n.to_string());
        }
    }

    #[test]
    fn interleaved_files_still_group_by_first_seen_order() {
        let matches = [
            m("a", 1, "1"),
            m("a", 2, "2"),
            m("b", 3, "3"),
            m("a", 4, "4"),
            m("b", 5, "5"),
        ];
        let previewed = preview_matches(&matches, usize::MAX, 100);
        assert_eq!(
            format_grep_matches(&previewed),
            "a\nLine 1: 1\nLine 2: 2\nLine 4: 4\n\nb\nLine 3: 3\nLine 5: 5"
        );
    }

    proptest::proptest! {
        /// The one-pass spill text equals the grouping formatter's.
        #[test]
        fn the_spill_text_of_grouped_matches_is_the_formatters(
            rows in proptest::collection::vec(("[abc]", 0i64..30, "[xé ]{0,8}"), 0..12),
            budget in 1usize..12,
        ) {
            let matches: Vec<GrepMatch> = rows.iter().map(|(p, n, l)| m(p, *n, l)).collect();
            let config = Config { grep_max_line_bytes: (budget as u64).into(), ..Config::with_sampling(true) };
            let all = preview_matches(&matches, usize::MAX, config.line_budget());
            let expected = format!("Found {} matches\n\n{}", all.len(), format_grep_matches(&all));
            proptest::prop_assert_eq!(grep_spill_content(&GrepValue { matches }, &config), expected);
        }

        /// However small its pieces, the grep spill text is the whole
        /// text: each piece holds at least one match or path, and at most
        /// one more than the piece size.
        #[test]
        fn grep_spill_pieces_make_the_whole_text(
            rows in proptest::collection::vec(("[abc]", 0i64..30, "[xé ]{0,8}"), 0..40),
            budget in 1usize..12,
            piece_bytes in 1usize..64,
        ) {
            let value = GrepValue {
                matches: rows.iter().map(|(p, n, l)| m(p, *n, l)).collect(),
            };
            let config = Config { grep_max_line_bytes: (budget as u64).into(), ..Config::with_sampling(true) };
            let mut pieces = grep_spill_pieces(&value, &config);
            pieces.piece_bytes = piece_bytes;
            let texts = all_pieces(pieces);
            proptest::prop_assert_eq!(texts.concat(), grep_spill_content(&value, &config));
            for text in &texts[..texts.len().saturating_sub(1)] {
                proptest::prop_assert!(!text.is_empty());
                proptest::prop_assert!(text.len() < piece_bytes + 64, "{} bytes", text.len());
            }
        }

        /// However small its pieces, the glob spill text is the paths
        /// joined by newlines.
        #[test]
        fn glob_spill_pieces_make_the_joined_paths(
            paths in proptest::collection::vec("[aé/]{0,6}", 0..30),
            piece_bytes in 1usize..32,
        ) {
            let value = GlobValue { root: "/r".into(), paths };
            let mut pieces = glob_spill_pieces(&value);
            pieces.piece_bytes = piece_bytes;
            proptest::prop_assert_eq!(all_pieces(pieces).concat(), value.paths.join("\n"));
        }
    }

    proptest::proptest! {
        /// A fresh over-cap glob page's slot names a spill (or says none
        /// was saved) byte for byte, footer and locator ranges included,
        /// as rendering the page with it does; a page within the cap has
        /// no slot.
        #[test]
        fn a_filled_glob_slot_is_the_page_rendered_with_its_spill(
            paths in proptest::collection::vec("[ab]{1,2}(/[abé]{1,2}){0,3}", 0..30),
            cap in 1u64..10,
            sampling: bool,
            depth in proptest::option::of(1u64..4),
            saved: bool,
        ) {
            let value = GlobValue { root: ".".into(), paths };
            let config = Config {
                glob_sample_depth: depth.map(crate::request::config::ConfigNumber::new),
                ..capped(sampling, cap, 250)
            };
            let spill = saved.then(test_spill);
            let fresh = render_glob_page(&glob_page(&value, &config), value.paths.len(), None);
            let expected = render_glob(&value, &config, spill.as_ref());
            match fresh.slot {
                Some(slot) => proptest::prop_assert_eq!(
                    slot.fill(&fresh.page.text, spill.as_ref()),
                    Some(expected)
                ),
                None => {
                    proptest::prop_assert!(value.paths.len() as u64 <= cap);
                    proptest::prop_assert_eq!(fresh.page, expected);
                }
            }
        }

        /// The same for grep pages.
        #[test]
        fn a_filled_grep_slot_is_the_page_rendered_with_its_spill(
            rows in proptest::collection::vec(("[abc]", 0i64..30, "[xé ]{0,8}"), 0..12),
            cap in 1u64..6,
            saved: bool,
        ) {
            let value = GrepValue { matches: rows.iter().map(|(p, n, l)| m(p, *n, l)).collect() };
            let config = capped(true, 100, cap);
            let spill = saved.then(test_spill);
            let fresh = render_grep_page(&value, &config, None);
            let expected = render_grep(&value, &config, spill.as_ref());
            match fresh.slot {
                Some(slot) => proptest::prop_assert_eq!(
                    slot.fill(&fresh.page.text, spill.as_ref()),
                    Some(expected)
                ),
                None => {
                    proptest::prop_assert!(value.matches.len() as u64 <= cap);
                    proptest::prop_assert_eq!(fresh.page, expected);
                }
            }
        }
    }

    /// A spill with a multi-byte locator, so a range off by a byte shows.
    fn test_spill() -> SpillRef {
        SpillRef {
            locator: "/spill/é/glob-results.txt".into(),
            bytes: 1,
            retrieval_hint: "Use the fake retrieval hint.".into(),
        }
    }

    #[test]
    fn a_slot_names_nothing_in_a_text_too_short_to_be_its_page() {
        let value = glob(&["a", "b", "c"], ".");
        let fresh = render_glob_page(&glob_page(&value, &capped(false, 2, 250)), 3, None);
        let slot = fresh.slot.unwrap();
        assert_eq!(slot.fill("a", None), None);
    }

    /// Each piece of `pieces`, apart.
    fn all_pieces(mut pieces: impl TextPieces) -> Vec<String> {
        let mut texts = Vec::new();
        loop {
            let mut text = String::new();
            if !pieces.next_piece(&mut text) {
                assert!(text.is_empty(), "the end appends nothing");
                return texts;
            }
            texts.push(text);
        }
    }

    #[test]
    fn an_ungrouped_grep_spill_is_one_piece_grouped_by_first_seen_file() {
        let value = GrepValue {
            matches: vec![m("a", 1, "x"), m("b", 2, "y"), m("a", 3, "z")],
        };
        let mut pieces = grep_spill_pieces(&value, &Config::with_sampling(true));
        pieces.piece_bytes = 1;
        assert_eq!(
            all_pieces(pieces),
            ["Found 3 matches\n\na\nLine 1: x\nLine 3: z\n\nb\nLine 2: y"]
        );
    }

    #[test]
    fn glob_footer_variants_are_exact() {
        let six = glob(
            &[
                "vendor/a.ts",
                "vendor/b.ts",
                "vendor/c.ts",
                "src/d.ts",
                "guide/e.md",
                "top.txt",
            ],
            ".",
        );
        assert_eq!(
            render_glob(&six, &capped(true, 3, 250), None).text,
            "vendor/a.ts\nsrc/d.ts\nguide/e.md\n\n(Showing 3 of 6 paths, sampled across 3 of the 4 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. The complete result could not be saved; narrow pattern or path to see more.)"
        );
        let spill = SpillRef {
            locator: "/spill/glob-results.txt".into(),
            bytes: 1,
            retrieval_hint: "Use the fake retrieval hint.".into(),
        };
        assert_eq!(
            render_glob(&six, &capped(true, 3, 250), Some(&spill)).text,
            "vendor/a.ts\nsrc/d.ts\nguide/e.md\n\n(Showing 3 of 6 paths, sampled across 3 of the 4 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. Full sorted result stored at: /spill/glob-results.txt. Use the fake retrieval hint.)"
        );
        let four = glob(
            &["vendor/a.ts", "vendor/b.ts", "vendor/c.ts", "src/d.ts"],
            ".",
        );
        assert_eq!(
            render_glob(&four, &capped(true, 3, 250), Some(&spill)).text,
            "vendor/a.ts\nvendor/b.ts\nsrc/d.ts\n\n(Showing 3 of 4 paths, sampled across 2 of the 2 top-level entries this pattern matched instead of taken in modification-time order. Full sorted result stored at: /spill/glob-results.txt. Use the fake retrieval hint.)"
        );
        assert_eq!(
            render_glob(
                &glob(&["a.ts", "b.ts", "c.ts"], "."),
                &capped(true, 2, 250),
                None
            )
            .text,
            "a.ts\nb.ts\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)"
        );
        assert_eq!(
            render_glob(
                &glob(&["a.ts", "b.ts", "c.ts"], "."),
                &capped(false, 2, 250),
                Some(&spill)
            )
            .text,
            "a.ts\nb.ts\n\n(Showing 2 of 3 paths. Full sorted result stored at: /spill/glob-results.txt. Use the fake retrieval hint.)"
        );
        assert_eq!(
            render_glob(&glob(&[], "."), &capped(true, 2, 250), None).text,
            "No files found"
        );
        assert_eq!(
            render_glob(&glob(&["a", "b"], "."), &capped(true, 2, 250), None).text,
            "a\nb"
        );
    }

    fn glob_of(paths: &[&str]) -> GlobValue {
        GlobValue {
            root: ".".to_owned(),
            paths: paths.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    fn depth_config(cap: u64, depth: Option<u64>) -> Config {
        Config {
            glob_max_results: crate::request::config::ConfigNumber::new(cap),
            glob_sample_depth: depth.map(crate::request::config::ConfigNumber::new),
            ..Config::with_sampling(true)
        }
    }

    #[test]
    fn a_page_sampled_level_by_level_says_so_in_its_footer() {
        let value = glob_of(&[
            "drivers/net/a.c",
            "drivers/net/b.c",
            "drivers/net/c.c",
            "drivers/usb/d.c",
            "fs/e.c",
        ]);
        assert_eq!(
            render_glob(&value, &depth_config(3, Some(2)), None).text,
            "drivers/net/a.c\ndrivers/usb/d.c\nfs/e.c\n\n(Showing 3 of 5 paths, sampled level by level across 2 of the 2 top-level entries this pattern matched and 3 of the 3 entries 2 levels deep instead of taken in modification-time order. The complete result could not be saved; narrow pattern or path to see more.)"
        );
        // A third level that leaves entries out asks to narrow the path.
        assert_eq!(
            render_glob(&value, &depth_config(3, Some(5)), None).text,
            "drivers/net/a.c\ndrivers/usb/d.c\nfs/e.c\n\n(Showing 3 of 5 paths, sampled level by level across 2 of the 2 top-level entries this pattern matched and 2 of the 4 entries 3 levels deep instead of taken in modification-time order. Narrow path to inspect a specific subtree. The complete result could not be saved; narrow pattern or path to see more.)"
        );
    }

    #[test]
    fn the_sample_depth_opt_in_keeps_the_contracts_page_at_depth_one_and_for_flat_results() {
        let value = glob_of(&[
            "vendor/a.ts",
            "vendor/b.ts",
            "vendor/c.ts",
            "src/d.ts",
            "guide/e.md",
            "top.txt",
        ]);
        assert_eq!(
            render_glob(&value, &depth_config(3, Some(1)), None),
            render_glob(&value, &depth_config(3, None), None)
        );
        let flat = glob_of(&["a.ts", "b.ts", "c.ts"]);
        assert_eq!(
            render_glob(&flat, &depth_config(2, Some(4)), None).text,
            "a.ts\nb.ts\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)"
        );
        // Sampling off: the head, whatever the depth.
        let off = Config {
            sample_over_cap_glob_results: false,
            ..depth_config(3, Some(4))
        };
        assert_eq!(
            render_glob(&value, &off, None),
            render_glob(
                &value,
                &Config {
                    sample_over_cap_glob_results: false,
                    ..depth_config(3, None)
                },
                None
            )
        );
    }

    #[test]
    fn grep_headers_bodies_and_footers_are_exact() {
        let config = capped(true, 100, 2);
        let three = GrepValue {
            matches: vec![
                m("a.ts", 1, "one"),
                m("a.ts", 2, "two"),
                m("b.ts", 3, "three"),
            ],
        };
        assert_eq!(
            render_grep(&three, &config, None).text,
            "Found 2 of 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)"
        );
        assert_eq!(
            grep_spill_content(&three, &config),
            "Found 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\nb.ts\nLine 3: three"
        );
        let one = GrepValue {
            matches: vec![m("a.ts", 1, "hit")],
        };
        assert_eq!(
            render_grep(&one, &config, None).text,
            "Found 1 match\n\na.ts\nLine 1: hit"
        );
        assert_eq!(
            render_grep(&GrepValue { matches: vec![] }, &config, None).text,
            "No matches found"
        );
    }

    #[test]
    fn pages_say_where_their_footer_and_locator_are() {
        let spill = SpillRef {
            locator: "/spill/glob-results.txt".into(),
            bytes: 1,
            retrieval_hint: "Use the fake retrieval hint.".into(),
        };
        let three = glob(&["a.ts", "b.ts", "c.ts"], ".");
        let page = render_glob(&three, &capped(false, 2, 250), Some(&spill));
        let footer = page.parts.footer.clone().unwrap();
        assert_eq!(&page.text[..footer.start], "a.ts\nb.ts\n\n");
        assert!(page.text[footer.clone()].starts_with("(Showing 2 of 3 paths."));
        assert_eq!(footer.end, page.text.len());
        assert_eq!(
            &page.text[page.parts.locator.clone().unwrap()],
            "/spill/glob-results.txt"
        );
        let unsaved = render_glob(&three, &capped(false, 2, 250), None);
        assert!(unsaved.parts.footer.is_some() && unsaved.parts.locator.is_none());
        let within = render_glob(&three, &capped(false, 3, 250), None);
        assert_eq!(within.parts, TextParts::default());
        let grep = GrepValue {
            matches: vec![m("a.ts", 1, "one"), m("b.ts", 2, "two")],
        };
        let page = render_grep(&grep, &capped(true, 100, 1), Some(&spill));
        let footer = page.parts.footer.clone().unwrap();
        assert!(page.text[footer].starts_with("(Full grep result stored at: /spill/"));
        assert_eq!(
            &page.text[page.parts.locator.clone().unwrap()],
            "/spill/glob-results.txt"
        );
    }
}
