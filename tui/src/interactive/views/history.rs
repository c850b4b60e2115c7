//! Draws the History tab: every call of the session, newest last, with
//! its outcome, duration and size; the selected call is marked.

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::Paragraph;

use crate::interactive::state::calls::{CallRecord, Running};

/// One call as a history row.
pub(crate) fn row_text(record: &CallRecord) -> String {
    let outcome = if record.is_error() {
        let code = record.error_name_code().and_then(|(_, code)| code);
        format!("ERR {}", code.unwrap_or("(plain)"))
    } else if record.spill().is_some() {
        "ok, spilled".to_owned()
    } else {
        "ok".to_owned()
    };
    let args = serde_json::to_string(&record.args).unwrap_or_default();
    let duration = match record.duration_ms() {
        Some(ms) => format!("{ms:>8.1} ms"),
        None => format!("{:>11}", "recorded"),
    };
    format!(
        "#{:<3} {:<4} {:<26} {duration} {:>6} B  {args}",
        record.id,
        record.tool,
        outcome,
        record.text().len()
    )
}

/// Draws `history` with the `selected` and the `shown` call marked, and
/// the `running` call last.
pub(crate) fn draw(
    frame: &mut Frame<'_>,
    area: Rect,
    history: &[CallRecord],
    (selected, shown): (usize, Option<usize>),
    running: Option<&Running>,
    now: Instant,
) {
    let height = usize::from(area.height);
    let mut lines: Vec<Line<'_>> = Vec::new();
    if history.is_empty() && running.is_none() {
        lines.push(Line::from("No calls yet.").dark_gray());
    }
    let first = selected.saturating_sub(height.saturating_sub(2));
    for (i, record) in history.iter().enumerate().skip(first) {
        let is_selected = i == selected;
        let marker = match (is_selected, shown == Some(i)) {
            (true, _) => "▶",
            (false, true) => "·",
            _ => " ",
        };
        let style = if is_selected {
            Style::new().reversed()
        } else if record.is_error() {
            Style::new().red()
        } else {
            Style::new()
        };
        lines.push(Line::styled(format!("{marker}{}", row_text(record)), style));
    }
    if let Some(running) = running {
        let elapsed = now.saturating_duration_since(running.started).as_secs_f64();
        lines.push(
            Line::from(format!(
                " #{:<3} {:<4} running {elapsed:.1} s (x cancels)",
                running.id, running.tool
            ))
            .yellow(),
        );
    }
    frame.render_widget(Paragraph::new(lines), area);
}
