//! Draws the "why" panel beside the page: the path being typed (with the
//! cursor while it has the keyboard), then the explanation as `workbench
//! explain` prints it, or where it stands.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Wrap};

use super::{doc_view, editor};
use crate::interactive::state::explain::{ExplainPanel, ExplainStatus};

/// Draws `panel` in `area`; `typing`: the path has the keyboard.
pub(crate) fn draw(frame: &mut Frame<'_>, area: Rect, panel: &ExplainPanel, typing: bool) {
    let mut block = Block::bordered().title(panel.title());
    if typing {
        block = block.border_style(Style::new().cyan());
    }
    let inner = block.inner(area);
    let [path_row, rule, body] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(inner);
    let [label, input] =
        Layout::horizontal([Constraint::Length(6), Constraint::Min(1)]).areas(path_row);
    frame.render_widget(Paragraph::new("path: ").dark_gray(), label);
    editor::input(
        frame,
        input,
        &panel.input,
        typing,
        "w: type a path (Tab completes)",
        false,
    );
    frame.render_widget(
        Paragraph::new("─".repeat(usize::from(rule.width))).dark_gray(),
        rule,
    );
    match &panel.status {
        ExplainStatus::Typing => {
            let hint = "Enter explains the path(s) · u: what the call did not search";
            frame.render_widget(
                Paragraph::new(hint).dark_gray().wrap(Wrap { trim: false }),
                body,
            );
        }
        ExplainStatus::Running { .. } => {
            frame.render_widget(Paragraph::new("explaining… (rg's walk)").yellow(), body);
        }
        ExplainStatus::Failed(error) => {
            frame.render_widget(
                Paragraph::new(error.as_str())
                    .red()
                    .wrap(Wrap { trim: false }),
                body,
            );
        }
        ExplainStatus::Done(doc) => {
            let (first, total) = doc_view::draw_doc(frame, body, doc, panel.scroll);
            let position = doc_view::position(first, total, body.height);
            block = block.title_bottom(Line::from(position).right_aligned().dark_gray());
        }
    }
    frame.render_widget(block, area);
}
