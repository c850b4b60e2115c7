//! How a record's frozen expectation differs from what the model saw in
//! the live session: `workbench freeze` re-runs every recorded call on
//! the frozen tree (rg's order pinned, mtimes restored) and tells the user,
//! per record, whether the two agree, differ only by order (rg's thread
//! order, files that shared a modification time), or differ in content,
//! and then names the facts that explain a content difference (a file on
//! the live page that the tree no longer holds, a file whose matching
//! lines changed) instead of guessing.
//!
//! The comparison reads pages as the model does: a glob page is one path
//! per line; a grep page is a count line, then one block per file (its
//! path, then its `Line N:` lines), blocks separated by a blank line. A
//! footer is a block (grep) or a line after the blank line (glob).

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use super::format::Outcome;

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

fn sorted(items: &[String]) -> Vec<&str> {
    let mut items: Vec<&str> = items.iter().map(String::as_str).collect();
    items.sort_unstable();
    items
}

/// Classifies `frozen` against `live` for a call of `tool`; `tree` is the
/// live tree (to tell missing files from changed ones).
pub(crate) fn drift(tool: &str, live: &Outcome, frozen: &Outcome, tree: &Path) -> Drift {
    let same_kind = live.is_error == frozen.is_error
        && live.error == frozen.error
        && live.warnings == frozen.warnings
        && live.spill.is_some() == frozen.spill.is_some();
    if same_kind && live.spill == frozen.spill && live.text == frozen.text {
        return Drift::Same;
    }
    let (live_entries, live_rest) = entries(tool, &live.text);
    let (frozen_entries, frozen_rest) = entries(tool, &frozen.text);
    let same_size = live.spill.as_ref().map(|s| s.bytes) == frozen.spill.as_ref().map(|s| s.bytes);
    if same_kind && same_size && live_rest == frozen_rest {
        if sorted(&live_entries) == sorted(&frozen_entries) {
            return Drift::Order {
                files: live_entries.len(),
            };
        }
        if live.spill.is_some() && live_entries.len() == frozen_entries.len() {
            return Drift::OrderChoseEntries {
                shown: live_entries.len(),
            };
        }
    }
    Drift::Content {
        causes: causes(&live_entries, &frozen_entries, tree),
    }
}

/// The facts that explain a content difference: files on the live page
/// that the tree does not hold, files on both pages whose lines differ,
/// files only the frozen page lists.
fn causes(live: &[String], frozen: &[String], tree: &Path) -> Vec<String> {
    let frozen_by_path: HashMap<&str, &str> =
        frozen.iter().map(|e| (entry_path(e), e.as_str())).collect();
    let live_paths: BTreeSet<&str> = live.iter().map(|e| entry_path(e)).collect();
    let mut missing = Vec::new();
    let mut changed = Vec::new();
    for entry in live {
        let path = entry_path(entry);
        match frozen_by_path.get(path) {
            Some(now) if *now == entry.as_str() => {}
            Some(_) => changed.push(path),
            None if tree.join(path).exists() => changed.push(path),
            None => missing.push(path),
        }
    }
    let added: Vec<&str> = frozen
        .iter()
        .map(|e| entry_path(e))
        .filter(|p| !live_paths.contains(p))
        .collect();
    let mut causes = Vec::new();
    if !missing.is_empty() {
        causes.push(format!(
            "{} on the live page {} not in the tree (removed or renamed since recording): {}",
            plural(missing.len(), "a file", "files"),
            plural(missing.len(), "is", "are"),
            listing(&missing)
        ));
    }
    if !changed.is_empty() {
        causes.push(format!(
            "{} changed since recording (its matching lines differ, or it no longer matches): {}",
            plural(changed.len(), "a file", "files"),
            listing(&changed)
        ));
    }
    if !added.is_empty() {
        causes.push(format!(
            "{} only on the frozen page (added or changed since recording): {}",
            plural(added.len(), "a file", "files"),
            listing(&added)
        ));
    }
    causes
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

    #[test]
    fn equal_pages_are_the_same() {
        let page = outcome("a\nb", None);
        assert_eq!(
            drift("glob", &page, &page.clone(), Path::new("/")),
            Drift::Same
        );
    }

    #[test]
    fn a_glob_page_in_another_order_is_order_only() {
        let live = outcome("b.rs\na.rs\nc.rs", None);
        let frozen = outcome("a.rs\nb.rs\nc.rs", None);
        let d = drift("glob", &live, &frozen, Path::new("/"));
        assert_eq!(d, Drift::Order { files: 3 });
        assert_eq!(
            d.note().unwrap(),
            "order only: the live page listed the same 3 files in another order"
        );
    }

    #[test]
    fn grep_file_blocks_in_another_order_are_order_only() {
        let live = outcome(
            "Found 3 matches\n\nb\nLine 1: x\n\na\nLine 2: x\nLine 3: x",
            None,
        );
        let frozen = outcome(
            "Found 3 matches\n\na\nLine 2: x\nLine 3: x\n\nb\nLine 1: x",
            None,
        );
        assert_eq!(
            drift("grep", &live, &frozen, Path::new("/")),
            Drift::Order { files: 2 }
        );
    }

    #[test]
    fn an_over_cap_page_with_another_choice_is_order_only_when_totals_agree() {
        let footer = "(Showing 2 of 3 paths. Full sorted result saved to x)";
        let live = outcome(&format!("c\nb\n\n{footer}"), Some(6));
        let frozen = outcome(&format!("a\nb\n\n{footer}"), Some(6));
        assert_eq!(
            drift("glob", &live, &frozen, Path::new("/")),
            Drift::OrderChoseEntries { shown: 2 }
        );
        let bigger = outcome(&format!("a\nb\n\n{footer}"), Some(9));
        assert!(matches!(
            drift("glob", &live, &bigger, Path::new("/")),
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
        let frozen = outcome(
            "Found 2 matches\n\nkept.rs\nLine 1: new\n\nnew.rs\nLine 4: x",
            None,
        );
        let Drift::Content { causes } = drift("grep", &live, &frozen, tree.path()) else {
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
    fn another_error_is_a_content_difference() {
        let live = outcome("a", None);
        let mut frozen = outcome("a", None);
        frozen.is_error = true;
        assert!(!drift("glob", &live, &frozen, Path::new("/")).is_order_only());
    }
}
