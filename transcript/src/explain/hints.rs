//! What a developer checks next when rg searched a file and no line
//! matched: rg itself counts the lines a case-insensitive search, a
//! literal (fixed-string) search, or a multi-line search would match in
//! that one file.

use std::process::Stdio;

use super::report::{Reason, ReasonKind};

/// Regex metacharacters a literal search would take as themselves.
const METACHARACTERS: &[char] = &[
    '.', '^', '$', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|', '\\',
];

/// The hints for `pattern` in `file` (absolute), each counted by rg.
pub(super) async fn no_match_hints(pattern: &str, file: &str, workdir: &str) -> Vec<Reason> {
    let mut hints = Vec::new();
    let insensitive = count(&["--ignore-case"], pattern, file, workdir).await;
    if let Some(n @ 1..) = insensitive {
        hints.push(Reason::words(
            ReasonKind::Hint,
            format!(
                "rg is case-sensitive here; a case-insensitive search would match {n} {}",
                plural(n, "line")
            ),
        ));
    }
    let metas: Vec<String> = METACHARACTERS
        .iter()
        .filter(|c| pattern.contains(**c))
        .map(|c| format!("`{c}`"))
        .collect();
    let literal = if metas.is_empty() {
        None
    } else {
        count(&["--fixed-strings"], pattern, file, workdir).await
    };
    if let Some(n @ 1..) = literal {
        hints.push(Reason::words(
            ReasonKind::Hint,
            format!(
                "the pattern is a regex: {} {} special there; a literal search would match {n} {}",
                metas.join(" "),
                if metas.len() == 1 { "is" } else { "are" },
                plural(n, "line")
            ),
        ));
    }
    if spans_lines(pattern) {
        let detail = match count(&["--multiline"], pattern, file, workdir).await {
            Some(n) if n > 0 => format!(
                "the pattern spans lines and rg is line-oriented (a match never crosses a line end); \
                 a multi-line search would match {n} {}",
                plural(n, "line")
            ),
            _ => {
                "the pattern spans lines and rg is line-oriented (a match never crosses a line end)"
                    .to_owned()
            }
        };
        hints.push(Reason::words(ReasonKind::Hint, detail));
    }
    hints
}

/// Whether the pattern asks for a line end: a newline, `\n`, or `\r`.
fn spans_lines(pattern: &str) -> bool {
    pattern.contains('\n') || pattern.contains("\\n") || pattern.contains("\\r")
}

fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        noun.to_owned()
    } else {
        format!("{noun}s")
    }
}

/// rg's count of matching lines in `file` with `flags`; `None` when rg
/// fails (an invalid pattern for that mode, an unreadable file).
async fn count(flags: &[&str], pattern: &str, file: &str, workdir: &str) -> Option<u64> {
    let output = tokio::process::Command::new("rg")
        .arg("--count")
        .arg("--no-filename")
        .args(flags)
        .arg(format!("--regexp={pattern}"))
        .arg("--")
        .arg(file)
        .current_dir(workdir)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .ok()?;
    match output.status.code() {
        Some(1) => Some(0),
        Some(0) => String::from_utf8_lossy(&output.stdout).trim().parse().ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pattern_spans_lines_with_a_newline_or_its_escape() {
        assert!(spans_lines("a\\nb"));
        assert!(spans_lines("a\nb"));
        assert!(!spans_lines("a.b"));
    }
}
