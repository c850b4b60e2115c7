//! The explanation's data: one verdict per path with its reason and the
//! page/spill lines, and the `--unsearched` summary. Serialised as the
//! `--json` object scripts read (`docs/explain.md`).

use serde::Serialize;

/// What happened to one path in one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// On the model-visible page.
    Page,
    /// In the complete result, not on the page.
    Spill,
    /// grep: rg searched it and no line matched.
    NoMatch,
    /// rg never searched it (the reason says why).
    NotSearched,
    /// glob: rg walked it and the pattern does not match it.
    NotMatched,
    /// Nothing exists at this path.
    Absent,
    /// It exists but cannot be read (or is not a regular file).
    Unreadable,
}

impl Verdict {
    /// The verdict as the text and the JSON write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Page => "page",
            Self::Spill => "spill",
            Self::NoMatch => "no-match",
            Self::NotSearched => "not-searched",
            Self::NotMatched => "not-matched",
            Self::Absent => "absent",
            Self::Unreadable => "unreadable",
        }
    }
}

/// Why a path has its verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReasonKind {
    /// An ignore-file rule excluded it (or a directory above it).
    Ignored,
    /// A negated rule re-included it (named on a searched path).
    Reincluded,
    /// It (or a directory above it) is hidden.
    Hidden,
    /// grep: its content has a NUL byte; rg stopped reading there.
    Binary,
    /// It (or a directory above it) is a symlink rg does not follow.
    Symlink,
    /// grep: the `include` glob does not match it.
    Include,
    /// It is not under the call's `path`.
    Outside,
    /// glob: it is under a VCS directory (`.git`, `.hg`, …).
    Vcs,
    /// glob: the pattern does not match it.
    Pattern,
    /// spill: the page is cut at the cap.
    Cap,
    /// spill: the page samples across top-level entries.
    Sampled,
    /// no-match: what a developer would check next.
    Hint,
    /// Not a regular file, or an error reading it.
    Io,
    /// rg did not list it and reported no reason.
    Unexplained,
}

impl ReasonKind {
    /// The kind as the text and the JSON write it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ignored => "ignored",
            Self::Reincluded => "reincluded",
            Self::Hidden => "hidden",
            Self::Binary => "binary",
            Self::Symlink => "symlink",
            Self::Include => "include",
            Self::Outside => "outside",
            Self::Vcs => "vcs",
            Self::Pattern => "pattern",
            Self::Cap => "cap",
            Self::Sampled => "sampled",
            Self::Hint => "hint",
            Self::Io => "io",
            Self::Unexplained => "unexplained",
        }
    }
}

/// The reason behind a verdict: its kind, the rule as written with the
/// file and line it comes from (ignore rules, globs), and words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    pub kind: ReasonKind,
    /// The rule or glob as written (`target/`, `!keep.log`, `*.ts`).
    pub rule: Option<String>,
    /// The file the rule comes from, as rg names it relative to the
    /// workdir when inside it (`.gitignore`, `a/.ignore`), else absolute.
    pub source: Option<String>,
    /// The rule's 1-based line in `source`.
    pub line: Option<u64>,
    /// The explanation in words.
    pub detail: String,
}

impl Reason {
    /// A reason with words only.
    pub fn words(kind: ReasonKind, detail: impl Into<String>) -> Self {
        Self {
            kind,
            rule: None,
            source: None,
            line: None,
            detail: detail.into(),
        }
    }
}

/// One explained path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PathReport {
    /// The path as the user gave it.
    pub path: String,
    /// The path as the page writes (or would write) it.
    pub display: String,
    pub verdict: Verdict,
    pub reason: Option<Reason>,
    /// Further findings (hints, a re-including rule, notes on rg versions).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Reason>,
    /// 1-based lines of the model-visible text that show this path.
    pub page_lines: Vec<u64>,
    /// 1-based lines of the spill file that show this path.
    pub spill_lines: Vec<u64>,
}

/// Files not searched for one reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReasonCount {
    pub reason: ReasonKind,
    pub files: u64,
}

/// A count with the rule, source and line it belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleCount {
    pub rule: String,
    pub source: String,
    pub line: Option<u64>,
    pub files: u64,
}

/// An excluded directory and the files under it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DirCount {
    pub path: String,
    pub reason: ReasonKind,
    pub files: u64,
}

/// `--unsearched`: what the call never looked at under its search root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Unsearched {
    /// The search root, as the call names it (`.` for the workdir).
    pub root: String,
    /// Files (and symlinks, and other non-directories) under the root.
    pub total_files: u64,
    /// Files rg searched (grep) or listed (glob).
    pub searched_files: u64,
    /// Files not searched, by reason; they add up to
    /// `totalFiles - searchedFiles`.
    pub by_reason: Vec<ReasonCount>,
    /// The rules that excluded most files, most first.
    pub top_rules: Vec<RuleCount>,
    /// The largest excluded directories, largest first.
    pub largest_dirs: Vec<DirCount>,
    /// Where the rules' source disagrees with what rg did (see
    /// `docs/explain.md`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The whole explanation of one call.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub tool: String,
    pub args: serde_json::Value,
    /// The call's error message when it failed (a result, not a usage error).
    pub call_error: Option<String>,
    pub paths: Vec<PathReport>,
    /// Notes on the whole call (e.g. the installed rg's version).
    pub notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unsearched: Option<Unsearched>,
}
