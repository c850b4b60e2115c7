//! One path's verdict, decided by what rg did in this call: the call's
//! result (page or spill), then rg's own report of its walk (listed, or
//! the matcher that excluded the path or a directory above it), then what
//! the filesystem shows where rg reports nothing (a symlink rg did not
//! follow, a file that is not regular, nothing at all).

use std::path::Path;

use fs_search_engine::{Config, ToolResult};

use super::binary::first_nul;
use super::hints::no_match_hints;
use super::paths::{CallPaths, steps_below};
use super::report::{PathReport, Reason, ReasonKind, Verdict};
use super::result_lines::{Lines, ResultIndex};
use super::rg_debug::{Decision, Matcher};
use super::rg_walk::Walk;
use super::rule_source::LocatedRule;
use fs_search_engine::helpers::GLOB_VCS_EXCLUDES;

/// The call as the verdicts need it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum CallTool {
    Glob {
        pattern: String,
    },
    Grep {
        pattern: String,
        include: Option<String>,
    },
}

/// Everything known about the call.
pub(super) struct CallFacts<'a> {
    pub paths: &'a CallPaths,
    pub tool: &'a CallTool,
    pub result: &'a ToolResult,
    pub config: &'a Config,
    pub index: &'a ResultIndex,
    pub walk: &'a Walk,
    /// The call's `path` names a file (rg searches it as given).
    pub root_is_file: bool,
    /// The call ended in an error result after rg ran (it searched nothing).
    pub call_failed: bool,
}

/// The explanation of `given` (relative to the workdir, or absolute).
pub(super) async fn explain_path(facts: &CallFacts<'_>, given: &str) -> PathReport {
    let paths = facts.paths;
    let abs = paths.absolute(given);
    let display = if paths.is_under_root(&abs) {
        paths.display(&abs)
    } else {
        paths.relative(&abs)
    };
    let mut report = PathReport {
        path: given.to_owned(),
        display,
        verdict: Verdict::Absent,
        reason: None,
        notes: Vec::new(),
        page_lines: Vec::new(),
        spill_lines: Vec::new(),
    };
    let meta = match std::fs::symlink_metadata(&abs) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            report.reason = Some(Reason::words(ReasonKind::Io, "nothing exists at this path"));
            return report;
        }
        Err(e) => {
            report.verdict = Verdict::Unreadable;
            report.reason = Some(Reason::words(
                ReasonKind::Io,
                format!("cannot be inspected: {e}"),
            ));
            return report;
        }
    };
    if let Some(lines) = facts.index.by_path.get(&abs) {
        in_result(facts, &abs, lines, &mut report);
        report.notes.extend(reincluded(facts, &abs));
        return report;
    }
    let (verdict, reason) = not_in_result(facts, &abs, &meta, &mut report.notes).await;
    report.verdict = verdict;
    report.reason = reason;
    if verdict == Verdict::NoMatch {
        report.notes.extend(reincluded(facts, &abs));
    }
    report
}

/// `page` or `spill`, with the lines and why it is not on the page.
fn in_result(facts: &CallFacts<'_>, abs: &str, lines: &Lines, report: &mut PathReport) {
    let over_cap = facts.result.parts.footer.is_some();
    report.page_lines = lines.page.clone();
    if over_cap {
        report.spill_lines = lines.spill.clone();
    }
    let saved = if facts.result.spill.is_some() {
        String::new()
    } else {
        " The complete result could not be saved (the footer says so); the lines are those of the \
         complete result."
            .to_owned()
    };
    if !lines.page.is_empty() {
        report.verdict = Verdict::Page;
        if let CallTool::Grep { .. } = facts.tool {
            let on_page = lines.page.len().saturating_sub(1);
            if on_page < lines.matches {
                report.notes.push(Reason::words(
                    ReasonKind::Cap,
                    format!(
                        "{on_page} of its {} matches are on the page; the rest are past the cap \
                         (grepMaxMatches {}), in the complete result.{saved}",
                        lines.matches,
                        js_number(facts.config.grep_max_matches)
                    ),
                ));
            }
        }
        return;
    }
    report.verdict = Verdict::Spill;
    let total = facts.index.total;
    let reason = match facts.tool {
        CallTool::Grep { .. } => Reason::words(
            ReasonKind::Cap,
            format!(
                "the page keeps the first {cap} of {total} matches (grepMaxMatches {cap}); this \
                 file's {n} {noun} after them.{saved}",
                cap = js_number(facts.config.grep_max_matches),
                n = lines.matches,
                noun = if lines.matches == 1 {
                    "match comes"
                } else {
                    "matches come"
                },
            ),
        ),
        CallTool::Glob { .. } => {
            let cap = js_number(facts.config.glob_max_results);
            let sampled = facts
                .result
                .parts
                .footer
                .clone()
                .and_then(|range| facts.result.text.get(range))
                .is_some_and(|footer| {
                    footer.contains("sampled across") || footer.contains("sampled level by level")
                });
            if sampled {
                let entry = top_level_entry(facts.paths, abs);
                let (shown, of) = entry_share(facts, &entry);
                // The globSampleDepth opt-in shares each entry's slots
                // across its own entries too.
                let how = match facts.config.glob_sample_depth {
                    Some(depth) if depth.get() > 1.0 => format!(
                        "across top-level entries and, level by level, down to {depth} levels \
                         (sampleOverCapGlobResults, globSampleDepth)"
                    ),
                    _ => "across top-level entries (sampleOverCapGlobResults)".to_owned(),
                };
                Reason::words(
                    ReasonKind::Sampled,
                    format!(
                        "the page samples {cap} of {total} paths {how}; its entry `{entry}` has \
                         {shown} of its {of} paths on the page.{saved}"
                    ),
                )
            } else {
                Reason::words(
                    ReasonKind::Cap,
                    format!(
                        "the page shows the first {cap} of {total} paths (globMaxResults {cap}, \
                         oldest first); this is path {} of the complete result.{saved}",
                        lines.spill.first().copied().unwrap_or_default()
                    ),
                )
            }
        }
    };
    report.reason = Some(reason);
}

/// The first segment of `abs` below the search root.
fn top_level_entry(paths: &CallPaths, abs: &str) -> String {
    steps_below(abs, &paths.root)
        .first()
        .and_then(|step| step.rsplit('/').next())
        .unwrap_or_default()
        .to_owned()
}

/// How many of the result's paths under `entry` are on the page, of how many.
fn entry_share(facts: &CallFacts<'_>, entry: &str) -> (usize, usize) {
    let mut shown = 0;
    let mut of = 0;
    for (path, lines) in &facts.index.by_path {
        if top_level_entry(facts.paths, path) == entry {
            of += 1;
            if !lines.page.is_empty() {
                shown += 1;
            }
        }
    }
    (shown, of)
}

/// A negated ignore rule that re-included `abs` (or a directory above it).
fn reincluded(facts: &CallFacts<'_>, abs: &str) -> Vec<Reason> {
    let mut notes = Vec::new();
    for step in steps_below(abs, &facts.paths.root) {
        if let Some(Decision {
            ignored: false,
            matcher:
                Matcher::IgnoreFile {
                    from,
                    original,
                    whitelist: true,
                },
            ..
        }) = facts.walk.decisions.get(&step)
        {
            let rule = LocatedRule::locate(original, from.as_deref(), facts.paths);
            let what = if step == abs {
                "this file".to_owned()
            } else {
                format!("the directory `{}`", facts.paths.relative(&step))
            };
            notes.push(rule.reason(
                ReasonKind::Reincluded,
                format!("a negated rule re-includes {what}: {}", rule.written()),
            ));
        }
    }
    notes
}

/// The verdict of a path that is not in the result.
async fn not_in_result(
    facts: &CallFacts<'_>,
    abs: &str,
    meta: &std::fs::Metadata,
    notes: &mut Vec<Reason>,
) -> (Verdict, Option<Reason>) {
    let paths = facts.paths;
    if !paths.is_under_root(abs) || (facts.root_is_file && abs != paths.root) {
        let root = paths.root_arg.as_deref().unwrap_or(".");
        return (
            Verdict::NotSearched,
            Some(Reason::words(
                ReasonKind::Outside,
                format!("it is not under the call's path `{root}`, the only place rg looked"),
            )),
        );
    }
    for step in steps_below(abs, &paths.root) {
        if let Some(decision) = facts.walk.decisions.get(&step).filter(|d| d.ignored) {
            let is_dir = step != abs || meta.is_dir();
            return excluded(facts, abs, &step, is_dir, &decision.matcher, notes);
        }
    }
    for step in steps_below(abs, &paths.root) {
        let is_link = std::fs::symlink_metadata(&step).is_ok_and(|m| m.file_type().is_symlink());
        if is_link {
            {
                let target = std::fs::read_link(&step)
                    .map(|t| t.display().to_string())
                    .unwrap_or_else(|e| format!("(unreadable: {e})"));
                let what = if step == abs {
                    "it is a symlink".to_owned()
                } else {
                    format!("it is under `{}`, a symlink", paths.relative(&step))
                };
                return (
                    Verdict::NotSearched,
                    Some(Reason {
                        kind: ReasonKind::Symlink,
                        rule: None,
                        source: Some(paths.relative(&step)),
                        line: None,
                        detail: format!("{what} (→ {target}); rg does not follow symlinks"),
                    }),
                );
            }
        }
    }
    if facts.walk.listed.contains(abs) {
        return listed_not_in_result(facts, abs).await;
    }
    if let Some(message) = facts.walk.errors.get(abs) {
        return (
            Verdict::Unreadable,
            Some(Reason::words(
                ReasonKind::Io,
                format!("rg reported: {message}"),
            )),
        );
    }
    let kind = meta.file_type();
    if kind.is_dir() {
        return (
            Verdict::NotSearched,
            Some(Reason::words(
                ReasonKind::Unexplained,
                "a directory: rg lists and searches the files under it; explain one of them",
            )),
        );
    }
    if !kind.is_file() {
        return (
            Verdict::Unreadable,
            Some(Reason::words(
                ReasonKind::Io,
                format!(
                    "not a regular file ({}); rg walks regular files only",
                    file_kind(meta)
                ),
            )),
        );
    }
    if let Err(e) = std::fs::File::open(abs) {
        return (
            Verdict::Unreadable,
            Some(Reason::words(
                ReasonKind::Io,
                format!("cannot be opened: {e}"),
            )),
        );
    }
    (
        Verdict::NotSearched,
        Some(Reason::words(
            ReasonKind::Unexplained,
            "rg did not walk to it and reported no reason",
        )),
    )
}

/// A file rg walked to that is not in the result.
async fn listed_not_in_result(facts: &CallFacts<'_>, abs: &str) -> (Verdict, Option<Reason>) {
    if facts.call_failed {
        return (
            Verdict::NotSearched,
            Some(Reason::words(
                ReasonKind::Unexplained,
                "rg's walk reaches it, but the call failed (see its error), so rg searched nothing",
            )),
        );
    }
    let CallTool::Grep { pattern, .. } = facts.tool else {
        return (
            Verdict::NotSearched,
            Some(Reason::words(
                ReasonKind::Unexplained,
                "rg's walk lists it but the call's result does not (did the tree change?)",
            )),
        );
    };
    if !facts.root_is_file {
        match first_nul(Path::new(abs)) {
            Ok(Some(offset)) => {
                return (
                    Verdict::NotSearched,
                    Some(Reason::words(
                        ReasonKind::Binary,
                        format!(
                            "a NUL byte at offset {offset}: rg takes the file for binary and stops \
                             reading it there (it searches binary files only when given them as the path)"
                        ),
                    )),
                );
            }
            Ok(None) => {}
            Err(e) => {
                return (
                    Verdict::Unreadable,
                    Some(Reason::words(
                        ReasonKind::Io,
                        format!("cannot be read: {e}"),
                    )),
                );
            }
        }
    }
    let hints = no_match_hints(pattern, abs, &facts.paths.workdir).await;
    let mut reason = Reason::words(ReasonKind::Hint, "rg searched it and no line matched");
    if let Some(first) = hints.first() {
        reason.detail = format!("rg searched it and no line matched; {}", first.detail);
    }
    let mut hints = hints.into_iter();
    hints.next();
    let rest: Vec<Reason> = hints.collect();
    let mut reason = Some(reason);
    if let Some(r) = reason.as_mut() {
        for more in &rest {
            r.detail.push_str("; ");
            r.detail.push_str(&more.detail);
        }
    }
    (Verdict::NoMatch, reason)
}

/// The verdict of a path rg excluded at `step` (itself or a directory above).
fn excluded(
    facts: &CallFacts<'_>,
    abs: &str,
    step: &str,
    step_is_dir: bool,
    matcher: &Matcher,
    notes: &mut Vec<Reason>,
) -> (Verdict, Option<Reason>) {
    let paths = facts.paths;
    let target = if step == abs {
        "the file".to_owned()
    } else {
        format!(
            "the directory `{}`, which rg does not enter",
            paths.relative(step)
        )
    };
    match matcher {
        Matcher::Hidden => (
            Verdict::NotSearched,
            Some(Reason {
                kind: ReasonKind::Hidden,
                rule: None,
                source: None,
                line: None,
                detail: if step == abs {
                    "its name starts with `.`; grep skips hidden files (rg's default)".to_owned()
                } else {
                    format!(
                        "it is under `{}`, a hidden directory: grep does not enter hidden \
                         directories (rg's default)",
                        paths.relative(step)
                    )
                },
            }),
        ),
        Matcher::IgnoreFile { from, original, .. } => {
            let rule = LocatedRule::locate(original, from.as_deref(), paths);
            if rule.is_above_root(paths) {
                notes.push(rule.reason(
                    ReasonKind::Ignored,
                    "the rule comes from an ignore file above the search root; rg 13 and rg 14+ \
                     differ on when such files apply (rg 14 reads a parent's .gitignore only inside \
                     a git repository): this is what the installed rg did"
                        .to_owned(),
                ));
            }
            notes.extend(rule.crate_disagreement(step, step_is_dir));
            let detail = format!("{} matches {target}", rule.written());
            (
                Verdict::NotSearched,
                Some(rule.reason(ReasonKind::Ignored, detail)),
            )
        }
        Matcher::OverrideMatched { original, .. } => {
            let vcs = GLOB_VCS_EXCLUDES.iter().any(|name| {
                original == &format!("!**/{name}") || original == &format!("!**/{name}/**")
            });
            let reason = |kind, detail: String| Reason {
                kind,
                rule: Some(original.clone()),
                source: None,
                line: None,
                detail,
            };
            match facts.tool {
                CallTool::Glob { .. } if vcs => (
                    Verdict::NotSearched,
                    Some(reason(
                        ReasonKind::Vcs,
                        format!("glob never lists VCS metadata: `{original}` excludes {target}"),
                    )),
                ),
                CallTool::Glob { pattern } => (
                    Verdict::NotMatched,
                    Some(reason(
                        ReasonKind::Pattern,
                        format!("the pattern `{pattern}` excludes {target}"),
                    )),
                ),
                CallTool::Grep { .. } => (
                    Verdict::NotSearched,
                    Some(reason(
                        ReasonKind::Include,
                        format!("the glob `{original}` excludes {target}"),
                    )),
                ),
            }
        }
        Matcher::OverrideUnmatched => match facts.tool {
            CallTool::Glob { pattern } => (
                Verdict::NotMatched,
                Some(Reason {
                    kind: ReasonKind::Pattern,
                    rule: Some(pattern.clone()),
                    source: None,
                    line: None,
                    detail: glob_words(pattern, paths, step),
                }),
            ),
            CallTool::Grep { include, .. } => {
                let include = include.clone().unwrap_or_default();
                (
                    Verdict::NotSearched,
                    Some(Reason {
                        kind: ReasonKind::Include,
                        rule: Some(include.clone()),
                        source: None,
                        line: None,
                        detail: format!(
                            "the include glob does not match it: {}",
                            glob_words(&include, paths, step)
                        ),
                    }),
                )
            }
        },
        Matcher::Other(raw) => (
            Verdict::NotSearched,
            Some(Reason::words(
                ReasonKind::Unexplained,
                format!("rg excluded {target}: {raw}"),
            )),
        ),
    }
}

/// Why `glob` does not match the path `abs`, in words.
fn glob_words(glob: &str, paths: &CallPaths, abs: &str) -> String {
    if glob.contains('/') {
        format!(
            "`{glob}` has a `/`, so rg matches it against the whole path as it walks it; this path \
             is `{}`",
            paths.display(abs)
        )
    } else {
        let name = abs.rsplit('/').next().unwrap_or(abs);
        format!(
            "`{glob}` has no `/`, so rg matches it against the name at any depth; this name is `{name}`"
        )
    }
}

/// A file type in words.
fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else {
        "not a file"
    }
}

/// A config number (an integer ≥ 1) as written.
fn js_number(n: fs_search_engine::request::ConfigNumber) -> String {
    n.as_u64_saturating().to_string()
}
