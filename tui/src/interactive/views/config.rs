//! Draws the Config tab: each key with its JSON literal (or the default
//! that applies when absent), the selected key's description, the object
//! the next load will get, and the outcome of the last load in the
//! contract's own words.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use serde_json::Value;

use super::editor::input;
use crate::interactive::state::config::ConfigForm;
use crate::interactive::state::session::PluginStatus;

const KEY_COLS: u16 = 28;

/// Draws the config form `panel` (its selected value in edit when `editing`),
/// the config the plugin was last loaded with and that load's outcome.
pub(crate) fn draw(
    frame: &mut Frame<'_>,
    area: Rect,
    panel: &ConfigForm,
    editing: bool,
    applied: &Value,
    plugin: &PluginStatus,
) {
    let rows = u16::try_from(panel.fields.len()).unwrap_or(u16::MAX);
    let [list, rest] =
        Layout::vertical([Constraint::Length(rows + 1), Constraint::Fill(1)]).areas(area);
    frame.render_widget(
        Paragraph::new(Span::styled(
            "  key                         value (JSON as sent; empty = absent)",
            Style::new().dark_gray(),
        )),
        Rect { height: 1, ..list },
    );
    for (i, field) in panel.fields.iter().enumerate() {
        let y = list.y + 1 + u16::try_from(i).unwrap_or(0);
        if y >= list.bottom() {
            break;
        }
        let row = Rect {
            y,
            height: 1,
            ..list
        };
        let selected = i == panel.selected;
        let editing = selected && editing;
        let [key_area, value_area] =
            Layout::horizontal([Constraint::Length(KEY_COLS), Constraint::Fill(1)]).areas(row);
        let marker = if selected { "▶ " } else { "  " };
        let key_style = if selected {
            Style::new().reversed()
        } else {
            Style::new()
        };
        frame.render_widget(
            Paragraph::new(Span::styled(format!("{marker}{}", field.key), key_style)),
            key_area,
        );
        let placeholder = match (&field.default, field.opt_in) {
            (Some(d), true) => format!("(absent: {d}; engine opt-in beyond the contract)"),
            (Some(d), false) => format!("(absent: default {d})"),
            (None, _) => "(absent: the load requires it)".to_owned(),
        };
        input(
            frame,
            value_area,
            &field.input,
            editing,
            &placeholder,
            false,
        );
    }

    let mut lines = Vec::new();
    if let Some(field) = panel.fields.get(panel.selected) {
        lines.push(Line::from(format!("{}: {}", field.key, field.description)).dark_gray());
    }
    if !panel.extra.is_empty() {
        let extra = serde_json::to_string(&panel.extra).unwrap_or_default();
        lines.push(Line::from(format!("other keys, sent as given: {extra}")));
    }
    match panel.to_config() {
        Ok(config) => {
            let next = serde_json::to_string(&config).unwrap_or_default();
            if config != *applied {
                lines.push(Line::from(vec![
                    Span::styled("edited, not applied (a applies): ", Style::new().yellow()),
                    Span::raw(next),
                ]));
            }
        }
        Err(e) => lines.push(Line::from(format!("✗ {e}")).red()),
    }
    let applied = serde_json::to_string(applied).unwrap_or_default();
    lines.push(Line::from(vec![
        Span::styled("loaded with: ", Style::new().dark_gray()),
        Span::raw(applied),
    ]));
    lines.push(match plugin {
        PluginStatus::Loading => Line::from("… loading the plugin"),
        PluginStatus::Registered => Line::from(
            "✓ loaded: glob and grep, their prompt sections and spill listeners registered",
        )
        .green(),
        PluginStatus::RgMissing(w) => Line::from(format!("⚠ loaded without tools: {w}")).yellow(),
        PluginStatus::Failed(e) => Line::from(format!("✗ load failed: {e}")).red(),
    });
    frame.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), rest);
}
