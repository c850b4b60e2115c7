//! How a record's frozen expectation differs from what the model saw in
//! the live session: `workbench freeze` re-runs every recorded call on
//! the frozen tree (rg's order pinned, mtimes restored) and tells the user,
//! per record, whether the two agree, differ only by order (rg's thread
//! order, files that shared a modification time), or differ in content,
//! and then names the facts that explain a content difference (a file on
//! the live page that the tree no longer holds, a file whose matching
//! lines changed) instead of guessing.
//!
//! "Order only" is decided by complete results, not by the visible page
//! ([`classify`]): the live page must be part of the complete result the
//! same call gives on the live tree now (else the tree changed since
//! recording, and the files that explain it are named), and the fixture
//! tree must give that same complete result (else the frozen tree lost
//! something, and that is said). Then the frozen page differs from the
//! live one only by which of the same entries rg's order put first.
//!
//! The comparison reads pages as the model does: a glob page is one path
//! per line; a grep page is a count line, then one block per file (its
//! path, then its `Line N:` lines), blocks separated by a blank line. A
//! footer is a block (grep) or a line after the blank line (glob).

use std::collections::BTreeSet;
use std::path::Path;

use fs_search_engine::Config;
use fs_search_engine::helpers::grep_spill_content;
use fs_search_engine::value::ToolValue;

use super::format::Outcome;

/// One run of a call: its page as the model sees it, and its complete
/// result's items (a glob path; a grep match as `PATH\nLine N: …`),
/// sorted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Complete {
    pub outcome: Outcome,
    pub items: Vec<String>,
}

impl Complete {
    /// The run of a `tool` call whose page is `outcome`: its complete
    /// result is the text it spilled (`spilled`, the complete result by
    /// definition; an over-cap grep that streamed keeps no value), else
    /// its canonical value (every path or match).
    pub(crate) fn of(
        tool: &str,
        outcome: Outcome,
        value: Option<&ToolValue>,
        spilled: Option<&str>,
        config: &Config,
    ) -> Self {
        let mut items = match (spilled, value) {
            (Some(text), _) if tool == "glob" => text.lines().map(str::to_owned).collect(),
            (Some(text), _) => items_of(tool, &entries(tool, text).0),
            (None, Some(ToolValue::Glob(value))) => value.paths.clone(),
            (None, Some(ToolValue::Grep(value))) if !value.matches.is_empty() => {
                let text = grep_spill_content(value, config);
                items_of(tool, &entries(tool, &text).0)
            }
            _ => Vec::new(),
        };
        items.sort_unstable();
        Self { outcome, items }
    }

    /// A grep's complete result as files and their matched line numbers,
    /// in path order.
    pub(crate) fn grep_lines(&self) -> Vec<(&str, Vec<u64>)> {
        let mut files: Vec<(&str, Vec<u64>)> = Vec::new();
        for item in &self.items {
            let (path, line) = item.split_once('\n').unwrap_or((item, ""));
            let Some(number) = line
                .strip_prefix("Line ")
                .and_then(|l| l.split(':').next())
                .and_then(|n| n.parse().ok())
            else {
                continue;
            };
            match files.last_mut() {
                Some((last, numbers)) if *last == path => numbers.push(number),
                _ => files.push((path, vec![number])),
            }
        }
        files
    }

    /// How many files the complete result lists.
    pub(crate) fn files(&self) -> usize {
        self.items
            .iter()
            .map(|i| entry_path(i))
            .collect::<BTreeSet<_>>()
            .len()
    }
}

/// A page's entries as items: glob paths as they are; each grep block's
/// `Line` lines, each prefixed with its path.
fn items_of(tool: &str, entries: &[String]) -> Vec<String> {
    if tool == "glob" {
        return entries.to_vec();
    }
    let mut items = Vec::new();
    for block in entries {
        let mut lines = block.lines();
        let path = lines.next().unwrap_or("");
        items.extend(lines.map(|line| format!("{path}\n{line}")));
    }
    items
}

/// Whether two outcomes are of the same kind: error, warnings and spill
/// size.
fn same_kind(a: &Outcome, b: &Outcome) -> bool {
    a.is_error == b.is_error
        && a.error == b.error
        && a.warnings == b.warnings
        && a.spill.as_ref().map(|s| s.bytes) == b.spill.as_ref().map(|s| s.bytes)
}

/// Whether two outcomes show the model the same (token counts aside).
fn same_page(a: &Outcome, b: &Outcome) -> bool {
    a.text == b.text && same_kind(a, b) && a.spill == b.spill
}

/// A page's items (sorted) and its other parts (count line, footers).
fn page_parts(tool: &str, outcome: &Outcome) -> (Vec<String>, Vec<String>) {
    let (entries, rest) = entries(tool, &outcome.text);
    let mut items = items_of(tool, &entries);
    items.sort_unstable();
    (items, rest)
}

/// Whether `page` shows part of `run`'s complete result as `run`'s own
/// page does: the same kind, count line and footers, and the same
/// number of items, each one of the complete result's.
fn shows_part_of(tool: &str, page: &Outcome, run: &Complete) -> bool {
    if same_page(page, &run.outcome) {
        return true;
    }
    if !same_kind(page, &run.outcome) || run.items.is_empty() {
        return false;
    }
    let (items, rest) = page_parts(tool, page);
    let (run_items, run_rest) = page_parts(tool, &run.outcome);
    let complete: BTreeSet<&str> = run.items.iter().map(String::as_str).collect();
    rest == run_rest
        && items.len() == run_items.len()
        && items.iter().all(|i| complete.contains(i.as_str()))
}

/// Classifies the frozen run against what the model saw (`live`), by
/// complete results: `rerun` is the same call run again on the live tree
/// now, `frozen` on the fixture tree; `tree` is the live tree (to tell
/// missing files from changed ones).
pub(crate) fn classify(
    tool: &str,
    live: &Outcome,
    rerun: &Complete,
    frozen: &Complete,
    tree: &Path,
) -> Drift {
    if same_page(live, &frozen.outcome) {
        return Drift::Same;
    }
    if !shows_part_of(tool, live, rerun) {
        return Drift::Content {
            causes: changed_since_recording(tool, live, rerun, tree),
        };
    }
    let faithful = frozen.items == rerun.items
        && same_kind(&frozen.outcome, &rerun.outcome)
        && page_parts(tool, &frozen.outcome).1 == page_parts(tool, &rerun.outcome).1
        && (!rerun.items.is_empty() || frozen.outcome.text == rerun.outcome.text);
    if !faithful {
        return Drift::Content {
            causes: vec![lost_by_the_fixture(frozen, rerun)],
        };
    }
    let shown = entries(tool, &live.text).0.len();
    if page_parts(tool, live).0 == page_parts(tool, &frozen.outcome).0 {
        Drift::Order { files: shown }
    } else {
        Drift::OrderChoseEntries { shown }
    }
}

/// Why the live page is not part of what the call gives now: files on
/// it the tree no longer holds, files whose matches changed, files the
/// complete result now adds (when the live page was complete), or other
/// totals.
fn changed_since_recording(
    tool: &str,
    live: &Outcome,
    rerun: &Complete,
    tree: &Path,
) -> Vec<String> {
    let complete: BTreeSet<&str> = rerun.items.iter().map(String::as_str).collect();
    let (items, rest) = page_parts(tool, live);
    let mut missing = BTreeSet::new();
    let mut changed = BTreeSet::new();
    for item in &items {
        if complete.contains(item.as_str()) {
            continue;
        }
        let path = entry_path(item);
        if tree.join(path).exists() {
            changed.insert(path);
        } else {
            missing.insert(path);
        }
    }
    let live_paths: BTreeSet<&str> = items.iter().map(|i| entry_path(i)).collect();
    let was_complete = live.spill.is_none() && !rest.iter().any(|r| r.starts_with('('));
    let added: BTreeSet<&str> = if was_complete {
        rerun
            .items
            .iter()
            .map(|i| entry_path(i))
            .filter(|p| !live_paths.contains(p))
            .collect()
    } else {
        BTreeSet::new()
    };
    fn as_list<'a>(set: &BTreeSet<&'a str>) -> Vec<&'a str> {
        set.iter().copied().collect()
    }
    let mut causes = Vec::new();
    if !missing.is_empty() {
        causes.push(format!(
            "{} on the live page {} not in the tree (removed or renamed since recording): {}",
            plural(missing.len(), "a file", "files"),
            plural(missing.len(), "is", "are"),
            listing(&as_list(&missing))
        ));
    }
    if !changed.is_empty() {
        causes.push(format!(
            "{} changed since recording (its matching lines differ, or it no longer matches): {}",
            plural(changed.len(), "a file", "files"),
            listing(&as_list(&changed))
        ));
    }
    if !added.is_empty() {
        causes.push(format!(
            "{} only on the frozen page (added or changed since recording): {}",
            plural(added.len(), "a file", "files"),
            listing(&as_list(&added))
        ));
    }
    if causes.is_empty() {
        let (_, now) = page_parts(tool, &rerun.outcome);
        if rest != now {
            causes.push(format!(
                "the same call on the live tree now says `{}` where the model saw `{}`",
                now.join(" / ").replace('\n', " "),
                rest.join(" / ").replace('\n', " ")
            ));
        }
    }
    causes
}

/// Why the fixture tree does not give the complete result the live tree
/// gives: the files whose entries differ. Its text starts with
/// [`LOST_BY_THE_FIXTURE`].
/// How the cause of a fixture that lost part of a result begins.
pub(crate) const LOST_BY_THE_FIXTURE: &str = "the fixture tree does not give";

fn lost_by_the_fixture(frozen: &Complete, rerun: &Complete) -> String {
    let live: BTreeSet<&str> = rerun.items.iter().map(String::as_str).collect();
    let fixture: BTreeSet<&str> = frozen.items.iter().map(String::as_str).collect();
    let files: BTreeSet<&str> = live
        .symmetric_difference(&fixture)
        .map(|i| entry_path(i))
        .collect();
    let what = if rerun.outcome.is_error && !frozen.outcome.is_error {
        let code = rerun
            .outcome
            .error
            .as_ref()
            .and_then(|e| e.code.clone())
            .unwrap_or_else(|| "an error".to_owned());
        format!(
            "the call fails on the live tree ({code}) but not on the fixture tree, which keeps less of the files it read"
        )
    } else if files.is_empty() {
        "rg's own text or the totals differ".to_owned()
    } else {
        format!(
            "entries of {} differ",
            listing(&files.into_iter().collect::<Vec<_>>())
        )
    };
    format!("the fixture tree does not give the complete result the live tree gives ({what})")
}

/// How the frozen expectation of one record relates to the live one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Drift {
    /// Every part equal.
    Same,
    /// The same lines, another order: `files` files (glob paths, grep
    /// file blocks) listed in another order.
    Order { files: usize },
    /// An over-cap page whose totals, footer and complete result size are
    /// the same, but whose `shown` entries are another choice of the
    /// complete result: rg's order decides which come first.
    OrderChoseEntries { shown: usize },
    /// The content differs; the facts found that explain it (may be empty).
    Content { causes: Vec<String> },
}

impl Drift {
    /// Whether the frozen expectation shows the model the same result up
    /// to order (so freezing it loses nothing).
    pub fn is_order_only(&self) -> bool {
        matches!(self, Self::Order { .. } | Self::OrderChoseEntries { .. })
    }

    /// The per-record note `workbench freeze` prints; `None` when same.
    pub fn note(&self) -> Option<String> {
        match self {
            Self::Same => None,
            Self::Order { files } => Some(format!(
                "order only: the live page listed the same {files} {} in another order",
                plural(*files, "file", "files")
            )),
            Self::OrderChoseEntries { shown } => Some(format!(
                "order only: the live page showed another {shown} of the same complete result \
                 (same totals and footer; rg's order chose which entries come first)"
            )),
            Self::Content { causes } if causes.is_empty() => {
                Some("content differs (no changed or missing file found to explain it)".into())
            }
            Self::Content { causes } => Some(format!("content differs: {}", causes.join("; "))),
        }
    }
}

fn plural<'a>(n: usize, one: &'a str, many: &'a str) -> &'a str {
    if n == 1 { one } else { many }
}

/// The page's file entries: a glob page's paths (the lines before the
/// first blank line), or a grep page's file blocks (path and its lines),
/// each as its text; and the rest (count line, footers) in order.
fn entries(tool: &str, text: &str) -> (Vec<String>, Vec<String>) {
    if tool == "glob" {
        let (body, rest) = text.split_once("\n\n").unwrap_or((text, ""));
        let paths = body.lines().map(str::to_owned).collect();
        let rest = rest.lines().map(str::to_owned).collect();
        return (paths, rest);
    }
    let mut blocks = text.split("\n\n");
    let mut rest: Vec<String> = blocks.next().map(str::to_owned).into_iter().collect();
    let mut files = Vec::new();
    for block in blocks {
        if block.lines().nth(1).is_some_and(|l| l.starts_with("Line ")) {
            files.push(block.to_owned());
        } else {
            rest.push(block.to_owned());
        }
    }
    (files, rest)
}

/// The path an entry names (its first line).
fn entry_path(entry: &str) -> &str {
    entry.lines().next().unwrap_or("")
}

/// At most five names, then how many more.
fn listing(paths: &[&str]) -> String {
    const SHOWN: usize = 5;
    let mut text = paths
        .iter()
        .take(SHOWN)
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    if paths.len() > SHOWN {
        text.push_str(&format!(" and {} more", paths.len() - SHOWN));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::OutcomeSpill;

    fn outcome(text: &str, spill_bytes: Option<u64>) -> Outcome {
        Outcome {
            is_error: false,
            error: None,
            spill: spill_bytes.map(|bytes| OutcomeSpill {
                locator: "<SPILL>/x".into(),
                bytes,
            }),
            warnings: Vec::new(),
            text: text.into(),
            tokens: None,
        }
    }

    fn complete(text: &str, spill_bytes: Option<u64>, items: &[&str]) -> Complete {
        let mut items: Vec<String> = items.iter().map(|i| (*i).to_owned()).collect();
        items.sort_unstable();
        Complete {
            outcome: outcome(text, spill_bytes),
            items,
        }
    }

    #[test]
    fn equal_pages_are_the_same() {
        let run = complete("a\nb", None, &["a", "b"]);
        assert_eq!(
            classify("glob", &run.outcome, &run, &run, Path::new("/")),
            Drift::Same
        );
    }

    #[test]
    fn a_glob_page_in_another_order_is_order_only() {
        let live = outcome("b.rs\na.rs\nc.rs", None);
        let rerun = complete("c.rs\nb.rs\na.rs", None, &["a.rs", "b.rs", "c.rs"]);
        let frozen = complete("a.rs\nb.rs\nc.rs", None, &["a.rs", "b.rs", "c.rs"]);
        let d = classify("glob", &live, &rerun, &frozen, Path::new("/"));
        assert_eq!(d, Drift::Order { files: 3 });
        assert_eq!(
            d.note().unwrap(),
            "order only: the live page listed the same 3 files in another order"
        );
    }

    #[test]
    fn grep_file_blocks_in_another_order_are_order_only() {
        let items = ["a\nLine 2: x", "a\nLine 3: x", "b\nLine 1: x"];
        let live = outcome(
            "Found 3 matches\n\nb\nLine 1: x\n\na\nLine 2: x\nLine 3: x",
            None,
        );
        let frozen = complete(
            "Found 3 matches\n\na\nLine 2: x\nLine 3: x\n\nb\nLine 1: x",
            None,
            &items,
        );
        assert_eq!(
            classify("grep", &live, &frozen.clone(), &frozen, Path::new("/")),
            Drift::Order { files: 2 }
        );
    }

    #[test]
    fn an_over_cap_grep_cut_in_other_files_is_order_only_by_its_complete_result() {
        // 3 of 4 matches shown: live cut inside b's block, frozen after a's.
        let items = [
            "a\nLine 1: x",
            "a\nLine 2: x",
            "b\nLine 1: x",
            "b\nLine 2: x",
        ];
        let footer = "(Showing 3 of 4 matches. Full result saved to x)";
        let live = outcome(
            &format!("Found 4 matches\n\nb\nLine 1: x\nLine 2: x\n\na\nLine 1: x\n\n{footer}"),
            Some(40),
        );
        let frozen = complete(
            &format!("Found 4 matches\n\na\nLine 1: x\nLine 2: x\n\nb\nLine 1: x\n\n{footer}"),
            Some(40),
            &items,
        );
        assert_eq!(
            classify("grep", &live, &frozen.clone(), &frozen, Path::new("/")),
            Drift::OrderChoseEntries { shown: 2 }
        );
    }

    #[test]
    fn an_over_cap_page_with_another_choice_is_order_only_when_totals_agree() {
        let footer = "(Showing 2 of 3 paths. Full sorted result saved to x)";
        let live = outcome(&format!("c\nb\n\n{footer}"), Some(6));
        let frozen = complete(&format!("a\nb\n\n{footer}"), Some(6), &["a", "b", "c"]);
        assert_eq!(
            classify("glob", &live, &frozen.clone(), &frozen, Path::new("/")),
            Drift::OrderChoseEntries { shown: 2 }
        );
        let bigger = complete(&format!("a\nb\n\n{footer}"), Some(9), &["a", "b", "c"]);
        assert!(matches!(
            classify("glob", &live, &bigger.clone(), &bigger, Path::new("/")),
            Drift::Content { .. }
        ));
    }

    #[test]
    fn content_differences_name_missing_changed_and_added_files() {
        let tree = tempfile::tempdir().unwrap();
        std::fs::write(tree.path().join("kept.rs"), "x").unwrap();
        let live = outcome(
            "Found 3 matches\n\ngone.rs\nLine 1: x\n\nkept.rs\nLine 1: old",
            None,
        );
        let now = complete(
            "Found 2 matches\n\nkept.rs\nLine 1: new\n\nnew.rs\nLine 4: x",
            None,
            &["kept.rs\nLine 1: new", "new.rs\nLine 4: x"],
        );
        let Drift::Content { causes } = classify("grep", &live, &now, &now, tree.path()) else {
            panic!("not a content difference");
        };
        assert_eq!(
            causes,
            [
                "a file on the live page is not in the tree (removed or renamed since recording): gone.rs",
                "a file changed since recording (its matching lines differ, or it no longer matches): kept.rs",
                "a file only on the frozen page (added or changed since recording): new.rs",
            ]
        );
    }

    #[test]
    fn a_fixture_that_loses_part_of_the_complete_result_says_so() {
        let live = outcome("b.rs\na.rs", None);
        let rerun = complete("a.rs\nb.rs", None, &["a.rs", "b.rs"]);
        let frozen = complete("a.rs", None, &["a.rs"]);
        let Drift::Content { causes } = classify("glob", &live, &rerun, &frozen, Path::new("/"))
        else {
            panic!("not a content difference");
        };
        assert_eq!(
            causes,
            [
                "the fixture tree does not give the complete result the live tree gives (entries of b.rs differ)"
            ]
        );
    }

    #[test]
    fn another_error_is_a_content_difference() {
        let live = outcome("a", None);
        let mut frozen = complete("a", None, &["a"]);
        frozen.outcome.is_error = true;
        assert!(!classify("glob", &live, &frozen.clone(), &frozen, Path::new("/")).is_order_only());
    }
}
