//! The minimal fixture tree: from what every recorded call reached when
//! it ran again on the live tree, the entries `workbench freeze` keeps,
//! and only those (the live tree may be any size; the fixture has a
//! bound, [`FixtureBound`]):
//!
//! - every path a glob matched: its name and modification time, its
//!   content emptied (glob reads names and mtimes only);
//! - every file a grep matched (all of its complete result, so an
//!   over-cap page's totals and its spill are the same): the lines at the
//!   matched line numbers, the others emptied and the lines after the
//!   last match dropped, unless a recorded pattern that reaches the file
//!   can match an empty line, or rg's reading of the file depends on more
//!   than its lines (a NUL byte, a byte-order mark, content that is not
//!   UTF-8, a carriage return): then the whole file;
//! - the path a call named (a file or directory), so a page that found
//!   nothing there still finds nothing rather than an error;
//! - every ignore file (`.gitignore`, `.ignore`, `.rgignore`, and
//!   `.git/info/exclude`) and VCS directory (empty, as the whole-tree
//!   walk keeps them), which shaped which files grep walked to;
//! - every directory above a kept entry, with its modification time.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

use super::empty_line::PatternReading;
use super::{IGNORE_FILES, VCS_DIRS, Walk, Walked, join, mtime_of};
use crate::error::TranscriptError;

/// What one recorded call reached when it ran again on the live tree.
#[derive(Debug, Clone, Default)]
pub(super) struct Reach {
    /// The path the call named, resolved (absolute), when it names one.
    pub target: Option<PathBuf>,
    /// Where the call searched: its target, else its working directory.
    pub scope: PathBuf,
    /// Files a glob matched (absolute).
    pub globbed: Vec<PathBuf>,
    /// Files a grep matched (absolute), each with its 1-based line
    /// numbers.
    pub grepped: Vec<(PathBuf, Vec<u64>)>,
    /// The grep's pattern, when it searched (not an error).
    pub pattern: Option<String>,
}

/// The most a frozen fixture tree may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FixtureBound {
    pub bytes: u64,
    pub entries: usize,
}

impl FixtureBound {
    /// 20 MiB of file content and 100,000 entries, or
    /// `WORKBENCH_TREE_LIMITS=BYTES,ENTRIES` when set.
    pub(crate) fn from_env() -> Result<Self, TranscriptError> {
        if std::env::var_os(crate::tree::TREE_LIMITS_VAR).is_some() {
            let limits = crate::tree::TreeLimits::from_env()?;
            return Ok(Self {
                bytes: limits.bytes,
                entries: limits.entries,
            });
        }
        Ok(Self {
            bytes: 20 * 1024 * 1024,
            entries: 100_000,
        })
    }

    /// The error for a fixture that would pass the bound.
    pub(super) fn exceeded(&self, tree: &Path, what: &str, whole_tree: bool) -> TranscriptError {
        let narrow = if whole_tree {
            "freeze without --whole-tree (the fixture then keeps only what the calls' pages depend on)"
        } else {
            "freeze a recording of fewer calls (the fixture keeps what every call's complete result depends on)"
        };
        TranscriptError::Other(format!(
            "{}: the fixture tree would hold {what}; a frozen tree holds at most {} bytes of \
             file content and {} entries. Narrow it: {narrow}, or set {}=BYTES,ENTRIES to allow more",
            tree.display(),
            self.bytes,
            self.entries,
            crate::tree::TREE_LIMITS_VAR
        ))
    }
}

/// `path` (absolute) below `root`, as the walk names it; `None` outside.
fn relative(root: &Path, path: &Path) -> Option<Vec<u8>> {
    let rest = path.strip_prefix(root).ok()?;
    let mut out = Vec::new();
    for part in rest.components() {
        match part {
            Component::Normal(name) => out = join(&out, name.as_bytes()),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

/// The file a result's `path` names: itself, or, where the name is not
/// UTF-8 (a result carries it lossily, with U+FFFD), the one entry of its
/// directory whose lossy name it is.
fn on_disk(path: &Path) -> Option<PathBuf> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Some(path.to_path_buf());
    }
    let name = path.file_name()?.to_str()?;
    let parent = on_disk(path.parent()?)?;
    std::fs::read_dir(&parent)
        .ok()?
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy() == name)
        .map(|entry| parent.join(entry.file_name()))
}

/// Whether `path` is one of `leave_out` (the fixture's own files) or
/// lies below one.
pub(super) fn is_left_out(path: &[u8], leave_out: &[Vec<u8>]) -> bool {
    leave_out
        .iter()
        .any(|out| path.starts_with(out) && matches!(path.get(out.len()), None | Some(b'/')))
}

/// What is kept of one file.
#[derive(Debug, Default)]
struct KeptFile {
    /// Line numbers a grep matched (empty: a glob or a named path only).
    lines: BTreeSet<u64>,
    grepped: bool,
    /// Keep it whole (an ignore file).
    whole: bool,
    /// The patterns of the greps whose scope holds the file.
    patterns: BTreeSet<String>,
}

/// The lines a line no call matched may become, shortest first.
const FILLERS: [&str; 5] = ["", " ", "#", ";", "~"];

/// The first filler none of `patterns` can match; `None`: keep the file
/// whole.
fn filler(patterns: &BTreeSet<String>, reading: PatternReading) -> Option<&'static str> {
    FILLERS
        .into_iter()
        .find(|filler| patterns.iter().all(|p| !reading.may_match_line(p, filler)))
}

/// Whether rg's reading of `content` depends on more than its lines.
fn read_as_more_than_lines(content: &[u8]) -> bool {
    const BOMS: [&[u8]; 3] = [b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"];
    content.contains(&0)
        || content.contains(&b'\r')
        || BOMS.iter().any(|bom| content.starts_with(bom))
        || std::str::from_utf8(content).is_err()
}

/// The lines of `content` at `lines` (1-based), each other line before
/// the last of them replaced by `filler`; the rest dropped.
fn keep_lines(content: &[u8], lines: &BTreeSet<u64>, filler: &str) -> Vec<u8> {
    let Some(&last) = lines.last() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (number, line) in (1u64..).zip(content.split_inclusive(|b| *b == b'\n')) {
        if number > last {
            break;
        }
        if lines.contains(&number) {
            out.extend_from_slice(line);
        } else {
            out.extend_from_slice(filler.as_bytes());
            out.push(b'\n');
        }
    }
    out
}

/// Paths below the root, as the walk names them.
type PathSet = BTreeSet<Vec<u8>>;

/// Finds the ignore files and VCS directories under `root`, depth first;
/// the fixture's own files (`leave_out`) are not looked into.
fn walk_shapers(root: &Path, leave_out: &[Vec<u8>]) -> Result<(PathSet, PathSet), TranscriptError> {
    let mut files = BTreeSet::new();
    let mut vcs_dirs = BTreeSet::new();
    let mut stack = vec![Vec::<u8>::new()];
    while let Some(dir) = stack.pop() {
        let full = root.join(OsStr::from_bytes(&dir));
        let children = std::fs::read_dir(&full).map_err(|e| TranscriptError::io(&full, e))?;
        for child in children {
            let child = child.map_err(|e| TranscriptError::io(&full, e))?;
            let name = child.file_name();
            let path = join(&dir, name.as_bytes());
            if leave_out.contains(&path) {
                continue;
            }
            let Ok(kind) = child.file_type() else {
                continue;
            };
            if kind.is_dir() {
                if VCS_DIRS.iter().any(|v| OsStr::new(v) == name) {
                    let exclude = join(&path, b"info/exclude");
                    if name == ".git" && root.join(OsStr::from_bytes(&exclude)).is_file() {
                        files.insert(exclude);
                    }
                    vcs_dirs.insert(path);
                } else {
                    stack.push(path);
                }
            } else if kind.is_file() && IGNORE_FILES.iter().any(|f| OsStr::new(f) == name) {
                files.insert(path);
            }
        }
    }
    Ok((files, vcs_dirs))
}

/// The minimal tree under `root` (canonical) for `reaches`, within
/// `bound`; the fixture's own files (`leave_out`) are left out.
pub(super) fn minimal_tree(
    root: &Path,
    reaches: &[Reach],
    reading: PatternReading,
    leave_out: &[Vec<u8>],
    bound: FixtureBound,
) -> Result<Walk, TranscriptError> {
    let mut kept: BTreeMap<Vec<u8>, KeptFile> = BTreeMap::new();
    let mut dirs: BTreeSet<Vec<u8>> = BTreeSet::new();
    let scoped: Vec<(&Path, &str)> = reaches
        .iter()
        .filter_map(|r| Some((r.scope.as_path(), r.pattern.as_deref()?)))
        .collect();
    for reach in reaches {
        if let Some(target) = &reach.target
            && let Some(rel) = relative(root, target)
            && !leave_out.contains(&rel)
        {
            match std::fs::symlink_metadata(target) {
                Ok(meta) if meta.is_dir() => {
                    dirs.insert(rel);
                }
                Ok(meta) if meta.is_file() => {
                    kept.entry(rel).or_default();
                }
                _ => {}
            }
        }
        for file in &reach.globbed {
            if let Some(rel) = on_disk(file).and_then(|f| relative(root, &f)) {
                kept.entry(rel).or_default();
            }
        }
        for (file, lines) in &reach.grepped {
            if let Some(rel) = on_disk(file).and_then(|f| relative(root, &f)) {
                let entry = kept.entry(rel).or_default();
                entry.grepped = true;
                entry.lines.extend(lines);
                entry.patterns.extend(
                    scoped
                        .iter()
                        .filter(|(scope, _)| file.starts_with(scope))
                        .map(|(_, pattern)| (*pattern).to_owned()),
                );
            }
        }
    }
    let (ignore_files, vcs_dirs) = walk_shapers(root, leave_out)?;
    for file in ignore_files {
        let entry = kept.entry(file).or_default();
        entry.grepped = true;
        entry.whole = true;
    }
    dirs.extend(vcs_dirs);
    kept.retain(|path, _| !is_left_out(path, leave_out));
    dirs.retain(|path| !is_left_out(path, leave_out));
    for path in kept.keys().chain(dirs.clone().iter()) {
        let mut parent = path.as_slice();
        while let Some(cut) = parent.iter().rposition(|b| *b == b'/') {
            parent = &parent[..cut];
            dirs.insert(parent.to_vec());
        }
    }
    dirs.remove(&Vec::new());

    let mut walk = Walk {
        entries: Vec::with_capacity(1 + dirs.len() + kept.len()),
        files: 0,
        bytes: 0,
        skipped: Vec::new(),
        left_out: Vec::new(),
    };
    let root_meta = std::fs::metadata(root).map_err(|e| TranscriptError::io(root, e))?;
    walk.entries.push(Walked {
        path: Vec::new(),
        content: None,
        mtime: mtime_of(&root_meta),
    });
    if 1 + dirs.len() + kept.len() > bound.entries {
        let what = format!("{} entries", 1 + dirs.len() + kept.len());
        return Err(bound.exceeded(root, &what, false));
    }
    for dir in &dirs {
        let full = root.join(OsStr::from_bytes(dir));
        let meta = std::fs::symlink_metadata(&full).map_err(|e| TranscriptError::io(&full, e))?;
        walk.entries.push(Walked {
            path: dir.clone(),
            content: None,
            mtime: mtime_of(&meta),
        });
    }
    for (path, file) in kept {
        let full = root.join(OsStr::from_bytes(&path));
        let meta = std::fs::symlink_metadata(&full).map_err(|e| TranscriptError::io(&full, e))?;
        if !meta.is_file() {
            walk.skipped
                .push(String::from_utf8_lossy(&path).into_owned());
            continue;
        }
        let content = if file.grepped {
            let content = std::fs::read(&full).map_err(|e| TranscriptError::io(&full, e))?;
            match filler(&file.patterns, reading) {
                Some(filler) if !file.whole && !read_as_more_than_lines(&content) => {
                    keep_lines(&content, &file.lines, filler)
                }
                _ => content,
            }
        } else {
            Vec::new()
        };
        walk.files += 1;
        walk.bytes += content.len() as u64;
        if walk.bytes > bound.bytes {
            let what = format!("more than {} bytes of file content", bound.bytes);
            return Err(bound.exceeded(root, &what, false));
        }
        walk.entries.push(Walked {
            path,
            content: Some(content),
            mtime: mtime_of(&meta),
        });
    }
    walk.entries.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(walk)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(numbers: &[u64]) -> BTreeSet<u64> {
        numbers.iter().copied().collect()
    }

    #[test]
    fn matched_lines_stay_at_their_numbers_and_the_rest_is_emptied_or_dropped() {
        let content = b"one\ntwo needle\nthree\nfour needle\nfive\n";
        assert_eq!(
            keep_lines(content, &lines(&[2, 4]), ""),
            b"\ntwo needle\n\nfour needle\n"
        );
        assert_eq!(
            keep_lines(b"a\nlast needle", &lines(&[2]), ""),
            b"\nlast needle"
        );
        assert_eq!(keep_lines(content, &lines(&[]), ""), b"");
        assert_eq!(keep_lines(b"x\n\ny\n", &lines(&[2]), " "), b" \n\n");
    }

    #[test]
    fn files_rg_reads_as_more_than_lines_are_told_apart() {
        assert!(read_as_more_than_lines(b"a\0b\n"));
        assert!(read_as_more_than_lines(b"a\r\nb\r\n"));
        assert!(read_as_more_than_lines(b"\xef\xbb\xbfneedle\n"));
        assert!(read_as_more_than_lines(b"\xff\xfen\0"));
        assert!(read_as_more_than_lines(b"caf\xe9 needle\n"));
        assert!(!read_as_more_than_lines("café needle\n".as_bytes()));
    }

    #[test]
    fn a_filler_is_chosen_that_no_reaching_pattern_matches() {
        let reading = PatternReading::of(&[]);
        let patterns = |ps: &[&str]| ps.iter().map(|p| (*p).to_owned()).collect();
        assert_eq!(filler(&patterns(&["needle"]), reading), Some(""));
        assert_eq!(filler(&patterns(&["^$"]), reading), Some(" "));
        assert_eq!(filler(&patterns(&["^$", "^ ?$"]), reading), Some("#"));
        assert_eq!(filler(&patterns(&["^.?$"]), reading), None);
    }

    #[test]
    fn the_minimal_tree_keeps_globbed_names_grepped_lines_and_ignore_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join(".git/objects")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.log\n").unwrap();
        std::fs::write(root.join("src/a.rs"), "fn a() {}\nneedle\nend\n").unwrap();
        std::fs::write(root.join("src/b.rs"), "x\nneedle\n").unwrap();
        std::fs::write(root.join("src/deep/c.md"), "glob only\n").unwrap();
        std::fs::write(root.join("unrelated.txt"), "never reached\n").unwrap();
        let reaches = [
            Reach {
                scope: root.clone(),
                globbed: vec![root.join("src/deep/c.md")],
                ..Reach::default()
            },
            Reach {
                scope: root.clone(),
                grepped: vec![(root.join("src/a.rs"), vec![2])],
                pattern: Some("needle".to_owned()),
                ..Reach::default()
            },
            Reach {
                target: Some(root.join("src/b.rs")),
                scope: root.join("src/b.rs"),
                grepped: vec![(root.join("src/b.rs"), vec![2])],
                pattern: Some("^.?$|needle".to_owned()),
                ..Reach::default()
            },
        ];
        let bound = FixtureBound {
            bytes: 1 << 20,
            entries: 100,
        };
        let walk = minimal_tree(&root, &reaches, PatternReading::of(&[]), &[], bound).unwrap();
        let found: Vec<(String, Option<String>)> = walk
            .entries
            .iter()
            .map(|e| {
                (
                    String::from_utf8_lossy(&e.path).into_owned(),
                    e.content
                        .as_ref()
                        .map(|c| String::from_utf8_lossy(c).into_owned()),
                )
            })
            .collect();
        let some = |s: &str| Some(s.to_owned());
        assert_eq!(
            found,
            [
                (String::new(), None),
                (".git".to_owned(), None),
                (".gitignore".to_owned(), some("*.log\n")),
                ("src".to_owned(), None),
                ("src/a.rs".to_owned(), some("\nneedle\n")),
                ("src/b.rs".to_owned(), some("x\nneedle\n")),
                ("src/deep".to_owned(), None),
                ("src/deep/c.md".to_owned(), some("")),
            ]
        );
        let tight = FixtureBound {
            bytes: 4,
            entries: 100,
        };
        let Err(refused) = minimal_tree(&root, &reaches, PatternReading::of(&[]), &[], tight)
        else {
            panic!("a tree over the bound was built");
        };
        assert!(
            refused
                .to_string()
                .contains("a frozen tree holds at most 4 bytes of file content"),
            "{refused}"
        );
    }
}
