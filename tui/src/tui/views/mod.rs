//! Rendering: draws an [`App`] into a frame and nothing else (no state
//! changes besides recording the scrollable areas' sizes). The screen,
//! top to bottom: header, call editor, tab bar, summary of the shown
//! call (or a status message), the pane of the current tab, key bar.

pub mod config;
pub mod doc_view;
pub mod editor;
pub mod help;
pub mod history;
pub mod transcript;

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

pub use doc_view::doc_text_cols;

use super::app::{App, CallRecord, Overlay, PluginStatus, SpillState, Viewport};
use super::keymap;
use super::tabs::Tab;

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Draws the whole screen; `now` drives the spinner and elapsed time.
pub fn draw(frame: &mut Frame<'_>, app: &App, now: Instant) {
    let [header, editor_area, tabs, summary, pane, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(5),
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(frame.area());
    draw_header(frame, header, app);
    editor::draw(frame, editor_area, app);
    draw_tabs(frame, tabs, app);
    draw_summary(frame, summary, app, now);
    draw_pane(frame, pane, app, now);
    draw_keys(frame, keys, app);
    if app.overlay.is_some() {
        draw_overlay(frame, frame.area(), app);
    }
}

/// Shortens `text` to `cols` cells, keeping its end.
fn tail(text: &str, cols: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    if chars.len() <= cols {
        return text.to_owned();
    }
    let keep = cols.saturating_sub(1);
    let mut out = String::from("…");
    out.extend(&chars[chars.len() - keep..]);
    out
}

/// Shortens a path to `cols` cells, keeping whole trailing components.
fn path_tail(path: &str, cols: usize) -> String {
    if path.chars().count() <= cols {
        return path.to_owned();
    }
    let keep = cols.saturating_sub(1);
    let cut = path
        .match_indices('/')
        .map(|(i, _)| i)
        .find(|i| path[*i..].chars().count() <= keep);
    match cut {
        Some(i) => format!("…{}", &path[i..]),
        None => tail(path, cols),
    }
}

fn plugin_text(app: &App) -> Span<'static> {
    let sampling = match app.applied.get("sampleOverCapGlobResults") {
        Some(serde_json::Value::Bool(true)) => "sampling on",
        Some(serde_json::Value::Bool(false)) => "sampling off",
        _ => "sampling ?",
    };
    match &app.plugin {
        PluginStatus::Loading => Span::raw("plugin loading…"),
        PluginStatus::Registered => Span::raw(format!("plugin loaded, {sampling}")),
        PluginStatus::RgMissing(_) => Span::styled("⚠ rg missing: no tools", Style::new().yellow()),
        PluginStatus::Failed(_) => Span::styled("✗ plugin not loaded", Style::new().red()),
    }
}

fn draw_header(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let plugin = plugin_text(app);
    let fixed = 14 + plugin.width() + 9;
    let workdir = path_tail(
        &app.session.workdir,
        usize::from(area.width).saturating_sub(fixed),
    );
    let line = Line::from(vec![
        Span::styled(" workbench ", Style::new().bold().reversed()),
        Span::raw(" "),
        Span::raw(workdir),
        Span::styled(" │ ", Style::new().dark_gray()),
        plugin,
    ]);
    let mut line = line;
    if let Some(r) = &app.transcripts.recording {
        line.push_span(Span::raw(" "));
        line.push_span(Span::styled(
            format!(" ● REC {} ", r.recorder.len()),
            Style::new().red().bold().reversed(),
        ));
    }
    frame.render_widget(Paragraph::new(line), area);
    frame.render_widget(
        Paragraph::new(Line::from(" ? help ").right_aligned().dark_gray()),
        area,
    );
}

fn draw_tabs(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let mut spans = vec![Span::raw(" ")];
    for (i, tab) in Tab::ALL.iter().enumerate() {
        let text = format!("{} {}", i + 1, tab.title());
        if *tab == app.tab {
            spans.push(Span::styled(
                format!("[{text}]"),
                Style::new().bold().reversed(),
            ));
        } else {
            spans.push(Span::raw(format!(" {text} ")));
        }
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The one-line summary of a finished call.
pub fn record_summary(record: &CallRecord, index: usize, count: usize) -> String {
    let r = &record.result;
    let mut parts = vec![format!(
        "#{} {} ({}/{count})",
        record.id,
        record.tool,
        index + 1
    )];
    match &r.error {
        Some(e) => parts.push(format!(
            "isError {{name: {}, code: {}}}",
            e.name().unwrap_or("null"),
            e.code_str().unwrap_or("null")
        )),
        None => parts.push("ok".to_owned()),
    }
    parts.push(format!("{:.1} ms", record.duration_ms()));
    parts.push(format!("{} B text", r.text.len()));
    if let Some(spill) = &r.spill {
        parts.push(format!("spill {} B (o)", spill.bytes));
    }
    if !r.warnings.is_empty() {
        parts.push(format!("⚠ {} warning(s): tab 4", r.warnings.len()));
    }
    parts.join(" · ")
}

fn draw_summary(frame: &mut Frame<'_>, area: Rect, app: &App, now: Instant) {
    let line = if let Some(status) = &app.status {
        let style = if status.alert {
            Style::new().red().bold()
        } else {
            Style::new().cyan()
        };
        let mark = if status.alert { "✗ " } else { "• " };
        Line::styled(format!(" {mark}{}", status.text), style)
    } else if let Some(running) = &app.running {
        let elapsed = now.saturating_duration_since(running.started);
        let frame_no = (elapsed.as_millis() / 100) as usize % SPINNER.len();
        let args = serde_json::to_string(&running.args).unwrap_or_default();
        Line::styled(
            format!(
                " {} running #{} {} {:.1} s · x/^X cancels · {args}",
                SPINNER[frame_no],
                running.id,
                running.tool,
                elapsed.as_secs_f64()
            ),
            Style::new().yellow(),
        )
    } else if let Some(record) = app.shown_record() {
        let text = format!(
            " {}",
            record_summary(record, app.shown.unwrap_or(0), app.history.len())
        );
        if record.result.is_error {
            Line::styled(text, Style::new().red())
        } else {
            Line::from(text)
        }
    } else {
        Line::from(" no call yet").dark_gray()
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn pane_title(app: &App) -> String {
    match app.tab {
        Tab::Text => " Text: exactly what the model sees (│ page ▶ footer) ".to_owned(),
        Tab::Value => " Canonical value ".to_owned(),
        Tab::Meta => " Presentation meta (search card) ".to_owned(),
        Tab::Call => " Call details ".to_owned(),
        Tab::Surface => " Surface: what the model sees before any call ".to_owned(),
        Tab::Config => " Plugin config (a change reloads the plugin) ".to_owned(),
        Tab::History => format!(" History: {} call(s) ", app.history.len()),
        Tab::Transcript => " Transcript: record this session · replay a transcript ".to_owned(),
    }
}

fn draw_pane(frame: &mut Frame<'_>, area: Rect, app: &App, now: Instant) {
    let mut block = Block::bordered().title(pane_title(app));
    let inner = block.inner(area);
    // The document's position goes on the bottom edge, right; the spill
    // locator gets the rest of that edge.
    let doc = app.tab_doc(app.tab);
    let mut first = 0;
    let mut position = String::new();
    if let Some(doc) = doc {
        app.pane_viewport.set(Viewport {
            cols: inner.width,
            rows: inner.height,
        });
        first = app.scroll(app.tab).min(app.max_scroll(app.tab));
        let total = doc.row_count(doc_text_cols(doc, inner.width));
        position = doc_view::position(first, total, inner.height);
        block = block.title_bottom(Line::from(position.clone()).right_aligned().dark_gray());
    }
    let spill = app.shown_record().and_then(|r| r.result.spill.as_ref());
    if let Some(spill) = spill.filter(|_| app.tab == Tab::Text) {
        let room = usize::from(area.width).saturating_sub(24 + position.chars().count());
        let text = format!(" spill ▸ {} · o opens ", path_tail(&spill.locator, room));
        block = block.title_bottom(Line::from(text).yellow());
    }
    frame.render_widget(block, area);
    match (app.tab, doc) {
        (Tab::Config, _) => config::draw(frame, inner, app),
        (Tab::History, _) => history::draw(frame, inner, app, now),
        (Tab::Transcript, _) => transcript::draw(frame, inner, app),
        (_, Some(doc)) => {
            doc_view::draw_doc(frame, inner, doc, first);
        }
        (_, None) => {}
    }
}

fn draw_keys(frame: &mut Frame<'_>, area: Rect, app: &App) {
    let contexts = keymap::contexts(app.editing.is_some(), app.overlay.is_some(), app.tab);
    let mut spans = Vec::new();
    for binding in keymap::bar(&contexts) {
        spans.push(Span::styled(
            format!(" {} ", keymap::label(binding)),
            Style::new().reversed(),
        ));
        spans.push(Span::raw(format!(" {} ", binding.short)));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_overlay(frame: &mut Frame<'_>, screen: Rect, app: &App) {
    let area = Rect {
        y: screen.y + 1,
        height: screen.height.saturating_sub(2),
        ..screen
    };
    frame.render_widget(Clear, area);
    let (title, doc_owned, note) = match &app.overlay {
        Some(Overlay::Help) => (
            " Help · Esc closes · ↑↓ PgUp PgDn scroll ".to_owned(),
            Some(help::help_doc(app)),
            None,
        ),
        Some(Overlay::Spill { path, state, .. }) => {
            let title = format!(" spill file {} · Esc closes ", path_tail(path, 50));
            match state {
                SpillState::Loading => (title, None, Some("reading…".to_owned())),
                SpillState::Failed(e) => (title, None, Some(e.clone())),
                SpillState::Loaded { total_bytes, .. } => {
                    (title, None, Some(format!(" {total_bytes} bytes on disk ")))
                }
            }
        }
        None => return,
    };
    let mut block = Block::bordered().title(title);
    let inner = block.inner(area);
    app.overlay_viewport.set(Viewport {
        cols: inner.width,
        rows: inner.height,
    });
    let doc = match (&doc_owned, &app.overlay) {
        (Some(doc), _) => Some(doc),
        (
            None,
            Some(Overlay::Spill {
                state: SpillState::Loaded { doc, .. },
                ..
            }),
        ) => Some(doc),
        _ => None,
    };
    match doc {
        Some(doc) => {
            let (first, total) = doc_view::draw_doc(frame, inner, doc, app.overlay_scroll);
            let position = doc_view::position(first, total, inner.height);
            block = block.title_bottom(Line::from(position).right_aligned().dark_gray());
        }
        None => frame.render_widget(Paragraph::new(note.clone().unwrap_or_default()), inner),
    }
    if let Some(note) = note.filter(|_| doc.is_some()) {
        block = block.title_bottom(Line::from(note).dark_gray());
    }
    frame.render_widget(block, area);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_paths_keep_whole_trailing_components() {
        let path = "/tmp/fswb-abcdef/s/session-0123/abc-glob-results.txt";
        assert_eq!(path_tail(path, 80), path);
        assert_eq!(path_tail(path, 40), "…/s/session-0123/abc-glob-results.txt");
        assert_eq!(path_tail(path, 36), "…/session-0123/abc-glob-results.txt");
        assert_eq!(path_tail(path, 10), "…sults.txt");
        assert_eq!(tail("abcdef", 4), "…def");
    }
}
