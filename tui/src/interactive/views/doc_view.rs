//! Draws a [`Doc`] into an area from a given first row: a gutter with
//! line numbers and markers (`│` page line, `┆` wrapped continuation,
//! `▶` footer, `✂` where a host lens cut; unnumbered documents only mark
//! continuations), then the line's text, never altered, only wrapped.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;

use crate::interactive::scroll_doc::{Doc, DocLine, LineKind, Row};

fn kind_style(kind: LineKind) -> Style {
    match kind {
        LineKind::Body => Style::new(),
        LineKind::Footer => Style::new().yellow(),
        LineKind::Heading => Style::new().bold(),
        LineKind::Note => Style::new().dark_gray(),
        LineKind::Alert => Style::new().red(),
        LineKind::Cut => Style::new().magenta().bold(),
    }
}

fn gutter(line: &DocLine, row: &Row, width: usize) -> Span<'static> {
    let digits = width.saturating_sub(2);
    let text = match (line.number, row.continued) {
        (Some(n), false) => {
            let marker = if line.kind == LineKind::Footer {
                '▶'
            } else {
                '│'
            };
            format!("{n:>digits$}{marker} ")
        }
        (None, false) if line.kind == LineKind::Cut => format!("{:>digits$}✂ ", ""),
        (None, false) => format!("{:>digits$}  ", ""),
        (_, true) => format!("{:>digits$}┆ ", ""),
    };
    let style = match line.kind {
        LineKind::Footer => Style::new().yellow(),
        LineKind::Cut => Style::new().magenta().bold(),
        _ => Style::new().dark_gray(),
    };
    Span::styled(text, style)
}

fn row_line<'a>(doc: &'a Doc, row: &Row, gutter_cols: usize) -> Line<'a> {
    let line = &doc.lines[row.line];
    let style = kind_style(line.kind);
    let mut spans = vec![gutter(line, row, gutter_cols)];
    let (start, end) = (row.start, row.end);
    match &line.mark {
        Some(mark) if mark.start < end && mark.end > start => {
            let (a, b) = (mark.start.max(start), mark.end.min(end));
            let marked = style.add_modifier(Modifier::UNDERLINED | Modifier::BOLD);
            spans.push(Span::styled(&line.text[start..a], style));
            spans.push(Span::styled(&line.text[a..b], marked));
            spans.push(Span::styled(&line.text[b..end], style));
        }
        _ => spans.push(Span::styled(&line.text[start..end], style)),
    }
    Line::from(spans)
}

/// Draws `doc` from row `first` (clamped); returns the first row drawn
/// and the total number of rows.
pub(crate) fn draw_doc(
    frame: &mut Frame<'_>,
    area: Rect,
    doc: &Doc,
    first: usize,
) -> (usize, usize) {
    let gutter_cols = doc.gutter_width();
    let cols = doc.text_cols(area.width);
    let height = usize::from(area.height);
    doc.with_rows(cols, |rows| {
        let first = first.min(rows.len().saturating_sub(height));
        let lines: Vec<Line<'_>> = rows
            .iter()
            .skip(first)
            .take(height)
            .map(|row| row_line(doc, row, gutter_cols))
            .collect();
        frame.render_widget(Paragraph::new(lines), area);
        (first, rows.len())
    })
}

/// "rows a–b of n" for a pane's edge.
pub(crate) fn position(first: usize, total: usize, height: u16) -> String {
    if total == 0 {
        return String::new();
    }
    let last = (first + usize::from(height)).min(total);
    format!(" rows {}-{} of {} ", first + 1, last, total)
}
