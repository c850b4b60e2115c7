//! Names an ignore rule the way a developer fixes it: the rule as written,
//! the file it comes from and its line. rg's `--debug` report gives the
//! rule and the file; the line is the last line of that file that reads
//! as the rule once parsed like ripgrep's `ignore` crate parses it
//! (trailing whitespace trimmed unless escaped; the last matching rule
//! wins). The crate itself, reading that one file, checks that it picks
//! the same rule; where it does not, the explanation says so.

use std::path::Path;

use ignore::Match;
use ignore::gitignore::GitignoreBuilder;

use super::paths::{CallPaths, is_under};
use super::report::{Reason, ReasonKind};

/// Ignore files larger than this are not read for line numbers.
const SOURCE_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// An ignore-file rule located in its file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LocatedRule {
    /// The rule as written.
    pub rule: String,
    /// The ignore file, absolute.
    pub source_abs: String,
    /// The ignore file as the explanation names it.
    pub source: String,
    /// 1-based line, when the file could be read and has the rule.
    pub line: Option<u64>,
}

impl LocatedRule {
    /// `rule` from rg's `from` (`./.gitignore`, absolute) in the call's terms.
    pub(super) fn locate(rule: &str, from: Option<&str>, paths: &CallPaths) -> Self {
        let source_abs = from.map(|f| paths.absolute(f)).unwrap_or_default();
        let line = if source_abs.is_empty() {
            None
        } else {
            line_of(Path::new(&source_abs), rule)
        };
        Self {
            rule: rule.to_owned(),
            source: if source_abs.is_empty() {
                "(unknown)".to_owned()
            } else {
                paths.relative(&source_abs)
            },
            source_abs,
            line,
        }
    }

    /// `source:line: rule`, as a developer greps for it.
    pub(super) fn written(&self) -> String {
        match self.line {
            Some(line) => format!("{}:{line}: {}", self.source, self.rule),
            None => format!("{}: {}", self.source, self.rule),
        }
    }

    /// The reason of `kind` with this rule and `detail`.
    pub(super) fn reason(&self, kind: ReasonKind, detail: String) -> Reason {
        Reason {
            kind,
            rule: Some(self.rule.clone()),
            source: Some(self.source.clone()),
            line: self.line,
            detail,
        }
    }

    /// The directory whose paths this file's rules are relative to, for
    /// the files the crate check can read alone (`.gitignore`, `.ignore`,
    /// `.rgignore`, `.git/info/exclude`).
    fn rule_root(&self) -> Option<String> {
        let (dir, name) = self.source_abs.rsplit_once('/')?;
        let dir = if dir.is_empty() { "/" } else { dir };
        match name {
            ".gitignore" | ".ignore" | ".rgignore" => Some(dir.to_owned()),
            "exclude" => dir.strip_suffix("/.git/info").map(str::to_owned),
            _ => None,
        }
    }

    /// Whether the source lies above the search root (a parent directory's
    /// ignore file, which rg versions treat differently).
    pub(super) fn is_above_root(&self, paths: &CallPaths) -> bool {
        self.rule_root()
            .is_some_and(|root| root != paths.root && !is_under(&root, &paths.root))
    }

    /// When ripgrep's `ignore` crate (the version linked here), reading
    /// this file alone, picks a different rule (or none) for `path` than
    /// the installed rg reported: a note saying so.
    pub(super) fn crate_disagreement(&self, path: &str, is_dir: bool) -> Option<Reason> {
        let root = self.rule_root()?;
        if !is_under(path, &root) || path == root {
            return None;
        }
        let mut builder = GitignoreBuilder::new(&root);
        if builder.add(&self.source_abs).is_some() {
            return None;
        }
        let matcher = builder.build().ok()?;
        let picked = match matcher.matched_path_or_any_parents(path, is_dir) {
            Match::Ignore(glob) | Match::Whitelist(glob) => Some(glob.original().to_owned()),
            Match::None => None,
        };
        if picked.as_deref() == Some(self.rule.as_str()) {
            return None;
        }
        let crate_says = match picked {
            Some(rule) => format!("picks `{rule}`"),
            None => "matches no rule".to_owned(),
        };
        Some(Reason {
            kind: ReasonKind::Ignored,
            rule: Some(self.rule.clone()),
            source: Some(self.source.clone()),
            line: self.line,
            detail: format!(
                "ripgrep's ignore crate linked into the workbench, reading {} alone, {crate_says} \
                 for this path; the verdict is the installed rg's own report",
                self.source
            ),
        })
    }
}

/// The last line of `source` that parses to `rule`.
fn line_of(source: &Path, rule: &str) -> Option<u64> {
    let meta = std::fs::metadata(source).ok()?;
    if !meta.is_file() || meta.len() > SOURCE_MAX_BYTES {
        return None;
    }
    let bytes = std::fs::read(source).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let mut found = None;
    for (index, raw) in text.split('\n').enumerate() {
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let line = if index == 0 {
            line.strip_prefix('\u{feff}').unwrap_or(line)
        } else {
            line
        };
        let parsed = if line.ends_with("\\ ") {
            line
        } else {
            line.trim_end()
        };
        if parsed == rule {
            found = Some(index as u64 + 1);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_the_last_one_that_reads_as_the_rule() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join(".gitignore");
        std::fs::write(&file, "# c\ntarget/\n*.log  \r\nx\\ \ntarget/\n").unwrap();
        assert_eq!(line_of(&file, "target/"), Some(5));
        assert_eq!(line_of(&file, "*.log"), Some(3));
        assert_eq!(line_of(&file, "x\\ "), Some(4));
        assert_eq!(line_of(&file, "missing"), None);
    }

    #[test]
    fn the_crate_agrees_with_a_rule_it_would_pick_and_says_so_when_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_string_lossy().into_owned();
        std::fs::write(dir.path().join(".gitignore"), "*.log\n!keep.log\n").unwrap();
        let paths = CallPaths::new(&root, None);
        let rule = LocatedRule::locate("*.log", Some("./.gitignore"), &paths);
        assert_eq!(rule.line, Some(1));
        assert_eq!(
            rule.crate_disagreement(&format!("{root}/x.log"), false),
            None
        );
        let wrong = LocatedRule::locate("*.log", Some("./.gitignore"), &paths);
        let note = wrong
            .crate_disagreement(&format!("{root}/keep.log"), false)
            .unwrap();
        assert!(note.detail.contains("picks `!keep.log`"), "{}", note.detail);
    }
}
