//! Recorded against current, side by side: an outcome as review lines
//! (its result facts, then its text), and the two outcomes aligned row by
//! row with every differing row marked, for the TUI's replay view.

use similar::{ChangeTag, TextDiff};

use super::format::Outcome;

/// The lines a reviewer compares: the facts, a rule, then the text.
pub(crate) fn review_lines(outcome: &Outcome) -> Vec<String> {
    let error = match &outcome.error {
        None => "null".to_owned(),
        Some(e) => format!(
            "{} / {}",
            e.name.as_deref().unwrap_or("null"),
            e.code.as_deref().unwrap_or("null")
        ),
    };
    let spill = match &outcome.spill {
        None => "null".to_owned(),
        Some(s) => format!("{} ({} bytes)", s.locator, s.bytes),
    };
    let mut lines = vec![
        format!("isError: {}", outcome.is_error),
        format!("error: {error}"),
        format!("spill: {spill}"),
    ];
    lines.extend(outcome.warnings.iter().map(|w| format!("warning: {w}")));
    lines.push("──── text ────".to_owned());
    lines.extend(outcome.text.split('\n').map(str::to_owned));
    lines
}

/// One side of a row: its line, or nothing where the other side has a
/// line this side lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    pub text: Option<String>,
    /// The line differs from the other side (or has no counterpart).
    pub changed: bool,
}

/// One aligned row: recorded on the left, current on the right.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub recorded: Side,
    pub current: Side,
}

impl Row {
    pub fn changed(&self) -> bool {
        self.recorded.changed || self.current.changed
    }
}

/// Aligns `recorded` and `current` line by line: equal lines share a row,
/// a run of removed lines is paired with the run of added lines after it.
pub fn side_by_side(recorded: &Outcome, current: &Outcome) -> Vec<Row> {
    let old = review_lines(recorded);
    let new = review_lines(current);
    let old_refs: Vec<&str> = old.iter().map(String::as_str).collect();
    let new_refs: Vec<&str> = new.iter().map(String::as_str).collect();
    let diff = TextDiff::from_slices(&old_refs, &new_refs);
    let mut rows = Vec::new();
    let (mut removed, mut added): (Vec<String>, Vec<String>) = (Vec::new(), Vec::new());
    let flush = |rows: &mut Vec<Row>, removed: &mut Vec<String>, added: &mut Vec<String>| {
        let n = removed.len().max(added.len());
        let mut r = removed.drain(..);
        let mut a = added.drain(..);
        for _ in 0..n {
            let (left, right) = (r.next(), a.next());
            rows.push(Row {
                recorded: Side {
                    changed: true,
                    text: left,
                },
                current: Side {
                    changed: true,
                    text: right,
                },
            });
        }
    };
    for change in diff.iter_all_changes() {
        let line = change.value().to_owned();
        match change.tag() {
            ChangeTag::Equal => {
                flush(&mut rows, &mut removed, &mut added);
                rows.push(Row {
                    recorded: Side {
                        text: Some(line.clone()),
                        changed: false,
                    },
                    current: Side {
                        text: Some(line),
                        changed: false,
                    },
                });
            }
            ChangeTag::Delete => {
                if !added.is_empty() {
                    flush(&mut rows, &mut removed, &mut added);
                }
                removed.push(line);
            }
            ChangeTag::Insert => added.push(line),
        }
    }
    flush(&mut rows, &mut removed, &mut added);
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(text: &str) -> Outcome {
        Outcome {
            is_error: false,
            error: None,
            spill: None,
            warnings: Vec::new(),
            text: text.to_owned(),
            tokens: None,
        }
    }

    #[test]
    fn equal_lines_share_rows_and_changed_runs_pair_up() {
        let rows = side_by_side(&outcome("a\nb\nc\nd"), &outcome("a\nB\nc\nd\ne"));
        let shown: Vec<(Option<&str>, Option<&str>, bool)> = rows
            .iter()
            .map(|r| {
                (
                    r.recorded.text.as_deref(),
                    r.current.text.as_deref(),
                    r.changed(),
                )
            })
            .collect();
        assert_eq!(
            &shown[4..],
            &[
                (Some("a"), Some("a"), false),
                (Some("b"), Some("B"), true),
                (Some("c"), Some("c"), false),
                (Some("d"), Some("d"), false),
                (None, Some("e"), true),
            ]
        );
        assert_eq!(
            shown[0],
            (Some("isError: false"), Some("isError: false"), false)
        );
    }

    #[test]
    fn identical_outcomes_have_no_changed_row() {
        let o = outcome("x\n\n(y)");
        assert!(side_by_side(&o, &o).iter().all(|r| !r.changed()));
    }
}
