//! `--unsearched`: what the call never looked at under its search root.
//! Every non-directory entry under the root (walked with ripgrep's own
//! `ignore` crate, every filter off, symlinks not followed) is either one
//! rg searched (it listed it and, for grep, found no NUL byte that would
//! stop it) or is counted under the reason rg gave for it or for the
//! directory above it that it did not enter. The counts add up to the
//! files rg did not search.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};

use ignore::WalkBuilder;

use super::paths::{CallPaths, step_prefixes};
use super::report::{DirCount, ReasonCount, ReasonKind, RuleCount, Unsearched};
use super::result_lines::ResultIndex;
use super::rg_debug::Matcher;
use super::rg_walk::Walk;
use super::rule_source::LocatedRule;
use super::verdict::CallTool;
use fs_search_engine::helpers::GLOB_VCS_EXCLUDES;

/// How many rules and directories the summary names.
const TOP: usize = 10;

/// Why one file was not searched, and which path decided it.
struct Cause {
    kind: ReasonKind,
    /// The path rg excluded (the file or a directory above it).
    at: Option<String>,
    /// `(source, rule)` of an ignore-file rule.
    rule: Option<(Option<String>, String)>,
}

/// The summary of one call's walk; `entries` are [`every_entry`] of the
/// call's root, found apart so that they can be found beside the call.
/// For grep, `walk` is a [`super::rg_walk::Scan::Nul`] walk: its
/// `nul_files` are the listed files that hold a NUL byte.
pub(super) fn summarise(
    tool: &CallTool,
    paths: &CallPaths,
    walk: &Walk,
    index: &ResultIndex,
    entries: &[(String, EntryKind)],
) -> Unsearched {
    // A file with a match was searched, NUL or not (rg reports its
    // matches before the NUL); glob reads no file.
    let binary: HashSet<&str> = match tool {
        CallTool::Grep { .. } => walk
            .nul_files
            .iter()
            .filter(|path| walk.listed.contains(*path) && !index.by_path.contains_key(*path))
            .map(String::as_str)
            .collect(),
        CallTool::Glob { .. } => HashSet::new(),
    };
    let root_is_file = entries.len() == 1 && entries.first().is_some_and(|(p, _)| *p == paths.root);
    let mut by_reason: HashMap<ReasonKind, u64> = HashMap::new();
    let mut by_rule: HashMap<(Option<String>, String), u64> = HashMap::new();
    let mut by_dir: HashMap<String, (ReasonKind, u64)> = HashMap::new();
    let mut searched = 0u64;
    // With the crate's decisions: files rg searched that the crate skips.
    let mut searched_but_skipped = 0u64;
    for (path, kind) in entries {
        if walk.listed.contains(path) && !binary.contains(path.as_str()) {
            searched += 1;
            if walk.decided_by_crate && decided_at(paths, walk, path, root_is_file).is_some() {
                searched_but_skipped += 1;
            }
            continue;
        }
        let cause = cause_of(
            tool,
            paths,
            walk,
            path,
            *kind,
            binary.contains(path.as_str()),
            root_is_file,
        );
        *by_reason.entry(cause.kind).or_default() += 1;
        if let Some(rule) = cause.rule {
            *by_rule.entry(rule).or_default() += 1;
        }
        if let Some(at) = cause.at.filter(|at| at != path) {
            by_dir.entry(at).or_insert((cause.kind, 0)).1 += 1;
        }
    }
    let mut by_reason: Vec<ReasonCount> = by_reason
        .into_iter()
        .map(|(reason, files)| ReasonCount { reason, files })
        .collect();
    by_reason.sort_by(|a, b| b.files.cmp(&a.files).then(a.reason.cmp(&b.reason)));
    let mut rules: Vec<((Option<String>, String), u64)> = by_rule.into_iter().collect();
    rules.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let top_rules = rules
        .into_iter()
        .take(TOP)
        .map(|((from, rule), files)| {
            let located = LocatedRule::locate(&rule, from.as_deref(), paths);
            RuleCount {
                rule,
                source: located.source,
                line: located.line,
                files,
            }
        })
        .collect();
    let mut dirs: Vec<(String, (ReasonKind, u64))> = by_dir.into_iter().collect();
    dirs.sort_by(|a, b| b.1.1.cmp(&a.1.1).then(a.0.cmp(&b.0)));
    let largest_dirs = dirs
        .into_iter()
        .take(TOP)
        .map(|(path, (reason, files))| DirCount {
            path: paths.relative(&path),
            reason,
            files,
        })
        .collect();
    let unexplained = by_reason
        .iter()
        .find(|count| count.reason == ReasonKind::Unexplained)
        .map_or(0, |count| count.files);
    Unsearched {
        notes: crate_notes(walk, unexplained, searched_but_skipped),
        total_files: entries.len() as u64,
        searched_files: searched,
        by_reason,
        root: paths.root_arg.clone().unwrap_or_else(|| ".".to_owned()),
        top_rules,
        largest_dirs,
    }
}

/// What the summary says when its rules are the `ignore` crate's and the
/// crate's replay of the walk disagrees with what rg did.
fn crate_notes(walk: &Walk, unexplained: u64, searched_but_skipped: u64) -> Vec<String> {
    if !walk.decided_by_crate {
        return Vec::new();
    }
    let mut notes = Vec::new();
    if unexplained > 0 {
        notes.push(format!(
            "rg did not search {unexplained} file(s) that ripgrep's ignore crate, replaying \
             the walk inside the workbench, would search (counted as unexplained); \
             `workbench explain … PATH` shows rg's own report for a path"
        ));
    }
    if searched_but_skipped > 0 {
        notes.push(format!(
            "rg searched {searched_but_skipped} file(s) that ripgrep's ignore crate, \
             replaying the walk inside the workbench, would skip; the counts follow rg"
        ));
    }
    notes
}

/// The first path from the root down to `path` that the walk's decisions
/// excluded, with its decision.
fn decided_at<'a>(
    paths: &CallPaths,
    walk: &'a Walk,
    path: &str,
    root_is_file: bool,
) -> Option<(String, &'a super::rg_debug::Decision)> {
    if root_is_file {
        return None;
    }
    step_prefixes(path, &paths.root).find_map(|step| {
        let decision = walk.decisions.get(step).filter(|d| d.ignored)?;
        Some((step.to_owned(), decision))
    })
}

/// What kind of entry a walked path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum EntryKind {
    File,
    Symlink,
    Other,
}

/// Every non-directory entry under `root` (absolute), symlinks not followed.
pub(super) fn every_entry(root: &str) -> Vec<(String, EntryKind)> {
    let mut out = Vec::new();
    let walker = WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .build();
    for entry in walker.flatten() {
        let Some(kind) = entry.file_type() else {
            continue;
        };
        // A root that is a symlink to a directory is rg's to follow (it
        // names it): the link is the search root, not an entry under it.
        let followed_root = entry.depth() == 0
            && kind.is_symlink()
            && std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
        if kind.is_dir() || followed_root {
            continue;
        }
        let kind = if kind.is_symlink() {
            EntryKind::Symlink
        } else if kind.is_file() {
            EntryKind::File
        } else {
            EntryKind::Other
        };
        out.push((entry.path().to_string_lossy().into_owned(), kind));
    }
    out
}

/// Why rg did not search `path`.
fn cause_of(
    tool: &CallTool,
    paths: &CallPaths,
    walk: &Walk,
    path: &str,
    kind: EntryKind,
    binary: bool,
    root_is_file: bool,
) -> Cause {
    let plain = |kind| Cause {
        kind,
        at: None,
        rule: None,
    };
    if let Some((step, decision)) = decided_at(paths, walk, path, root_is_file) {
        let (kind, rule) = match &decision.matcher {
            Matcher::Hidden => (ReasonKind::Hidden, None),
            Matcher::IgnoreFile { from, original, .. } => {
                // Absolute, so that rules sort alike however rg named the file.
                let from = from.as_deref().map(|f| paths.absolute(f));
                (ReasonKind::Ignored, Some((from, original.clone())))
            }
            Matcher::OverrideMatched { original, .. } => match tool {
                CallTool::Glob { .. }
                    if GLOB_VCS_EXCLUDES.iter().any(|name| {
                        original == &format!("!**/{name}") || original == &format!("!**/{name}/**")
                    }) =>
                {
                    (ReasonKind::Vcs, None)
                }
                CallTool::Glob { .. } => (ReasonKind::Pattern, None),
                CallTool::Grep { .. } => (ReasonKind::Include, None),
            },
            Matcher::OverrideUnmatched => match tool {
                CallTool::Glob { .. } => (ReasonKind::Pattern, None),
                CallTool::Grep { .. } => (ReasonKind::Include, None),
            },
            Matcher::Other(_) => (ReasonKind::Unexplained, None),
        };
        return Cause {
            kind,
            at: Some(step),
            rule,
        };
    }
    if binary {
        return plain(ReasonKind::Binary);
    }
    match kind {
        EntryKind::Symlink => plain(ReasonKind::Symlink),
        EntryKind::Other => plain(ReasonKind::Io),
        EntryKind::File if walk.errors.contains_key(path) => plain(ReasonKind::Io),
        EntryKind::File => plain(ReasonKind::Unexplained),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_root_that_links_to_a_directory_is_not_an_entry_under_itself() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join("d")).unwrap();
        std::fs::write(root.join("d/a.txt"), "x").unwrap();
        std::os::unix::fs::symlink("a.txt", root.join("d/l.txt")).unwrap();
        std::os::unix::fs::symlink("d", root.join("lnk")).unwrap();
        std::os::unix::fs::symlink("d/a.txt", root.join("flnk")).unwrap();
        let under = |name: &str| {
            let mut entries: Vec<(String, EntryKind)> =
                every_entry(&root.join(name).to_string_lossy())
                    .into_iter()
                    .map(|(path, kind)| {
                        (path.rsplit('/').next().unwrap_or_default().to_owned(), kind)
                    })
                    .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            entries
        };
        let expected = vec![
            ("a.txt".to_owned(), EntryKind::File),
            ("l.txt".to_owned(), EntryKind::Symlink),
        ];
        assert_eq!(under("lnk"), expected);
        assert_eq!(under("d"), expected);
        // A root that links to a file is the one entry rg searches.
        assert_eq!(under("flnk"), vec![("flnk".to_owned(), EntryKind::File)]);
    }
}
