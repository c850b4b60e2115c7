//! The explanation as text for a terminal (the `--json` form is the
//! report's serialisation): one block per path, then the summary.

use std::fmt::Write;

use super::report::{PathReport, Reason, Report, Unsearched, Verdict};

/// The whole report as text.
pub fn text(report: &Report) -> String {
    let mut out = String::new();
    if let Some(error) = &report.call_error {
        let _ = writeln!(out, "the call failed: {error}");
    }
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    for path in &report.paths {
        out.push_str(&path_block(path));
    }
    if let Some(unsearched) = &report.unsearched {
        out.push_str(&unsearched_block(unsearched));
    }
    out
}

/// One path: `DISPLAY: VERDICT (KIND)`, the reason, the lines, the notes.
pub(crate) fn path_block(path: &PathReport) -> String {
    let mut out = String::new();
    let kind = path
        .reason
        .as_ref()
        .filter(|_| path.verdict == Verdict::NotSearched)
        .map(|r| format!(" ({})", r.kind.as_str()))
        .unwrap_or_default();
    let _ = writeln!(out, "{}: {}{kind}", path.display, path.verdict.as_str());
    if let Some(reason) = &path.reason {
        let _ = writeln!(out, "  {}", reason_line(reason));
    }
    if !path.page_lines.is_empty() {
        let _ = writeln!(out, "  page lines: {}", numbers(&path.page_lines));
    }
    if !path.spill_lines.is_empty() {
        let _ = writeln!(out, "  spill lines: {}", numbers(&path.spill_lines));
    }
    for note in &path.notes {
        let _ = writeln!(
            out,
            "  note ({}): {}",
            note.kind.as_str(),
            reason_line(note)
        );
    }
    out
}

fn reason_line(reason: &Reason) -> String {
    reason.detail.clone()
}

/// `3, 4, 5` as `3-5`, runs joined by commas.
fn numbers(lines: &[u64]) -> String {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    for &n in lines {
        match runs.last_mut() {
            Some((_, end)) if *end + 1 == n => *end = n,
            _ => runs.push((n, n)),
        }
    }
    runs.iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `--unsearched` summary.
pub(crate) fn unsearched_block(summary: &Unsearched) -> String {
    let mut out = String::new();
    let not = summary.total_files.saturating_sub(summary.searched_files);
    let _ = writeln!(
        out,
        "unsearched under `{}`: {not} of {} files (rg searched {})",
        summary.root, summary.total_files, summary.searched_files
    );
    if !summary.by_reason.is_empty() {
        let _ = writeln!(out, "  by reason:");
        for count in &summary.by_reason {
            let _ = writeln!(out, "    {:<12} {}", count.reason.as_str(), count.files);
        }
    }
    if !summary.top_rules.is_empty() {
        let _ = writeln!(out, "  rules that excluded most files:");
        for rule in &summary.top_rules {
            let at = match rule.line {
                Some(line) => format!("{}:{line}: {}", rule.source, rule.rule),
                None => format!("{}: {}", rule.source, rule.rule),
            };
            let _ = writeln!(out, "    {at}  ({} files)", rule.files);
        }
    }
    if !summary.largest_dirs.is_empty() {
        let _ = writeln!(out, "  largest excluded directories:");
        for dir in &summary.largest_dirs {
            let _ = writeln!(
                out,
                "    {}  ({} files, {})",
                dir.path,
                dir.files,
                dir.reason.as_str()
            );
        }
    }
    for note in &summary.notes {
        let _ = writeln!(out, "  note: {note}");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_are_written_as_runs() {
        assert_eq!(numbers(&[3, 4, 5, 9, 11, 12]), "3-5, 9, 11-12");
    }
}
