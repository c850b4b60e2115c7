//! Rendering: draws the [`State`] into a frame and nothing else (views
//! read the state, never change it, and know nothing of the update
//! logic). The screen, top to bottom: header, call editor, tab bar,
//! summary of the shown call (or a status message), the pane of the
//! current tab (with the "why" panel beside a result tab when open), key
//! bar; the help or the spill file over it.
//! [`viewports`] tells the loop the sizes of the scrollable areas this
//! layout gives a screen, so the update logic can page without knowing
//! the layout.

pub(crate) mod ablate;
pub(crate) mod config;
pub(crate) mod doc_view;
pub(crate) mod editor;
pub(crate) mod explain;
pub(crate) mod history;
pub(crate) mod transcript;

use std::time::Instant;

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Clear, Paragraph};

use super::content;
use super::keymap;
use super::state::calls::CallRecord;
use super::state::session::PluginStatus;
use super::state::tokens::lensed_label;
use super::state::{Editing, Overlay, SpillState, State, Viewport, Viewports};
use super::tabs::Tab;

const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// The screen's rows: header, call editor, tab bar, summary (one row,
/// two for a status message too long for one), pane, key bar.
fn screen_areas(screen: Rect, state: &State) -> [Rect; 6] {
    Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(5),
        Constraint::Length(1),
        Constraint::Length(summary_rows(state, screen.width)),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(screen)
}

/// The status line's text (after its one-cell indent and mark).
fn status_text(status: &super::state::session::Status) -> String {
    let mark = if status.alert { "✗ " } else { "• " };
    format!(" {mark}{}", status.text)
}

/// The summary's rows: two when the status message is wider than the
/// screen (it wraps rather than being cut), else one.
fn summary_rows(state: &State, cols: u16) -> u16 {
    match &state.status {
        Some(status) if status_text(status).chars().count() > usize::from(cols) => 2,
        _ => 1,
    }
}

/// Where the help and the spill file are drawn: over all but the header
/// and the key bar.
fn overlay_area(screen: Rect) -> Rect {
    Rect {
        y: screen.y + 1,
        height: screen.height.saturating_sub(2),
        ..screen
    }
}

fn inner_size(area: Rect) -> Viewport {
    let inner = Block::bordered().inner(area);
    Viewport {
        cols: inner.width,
        rows: inner.height,
    }
}

/// The sizes of the scrollable areas (inside the pane's and the
/// overlay's borders) on a screen of `screen`'s size showing `state`.
pub(crate) fn viewports(screen: Rect, state: &State) -> Viewports {
    let [_, _, _, _, pane, _] = screen_areas(screen, state);
    Viewports {
        pane: inner_size(pane),
        overlay: inner_size(overlay_area(screen)),
    }
}

/// Draws the whole screen; `now` drives the spinner and elapsed time.
pub(crate) fn draw(frame: &mut Frame<'_>, state: &State, now: Instant) {
    let [header, editor_area, tabs, summary, pane, keys] = screen_areas(frame.area(), state);
    draw_header(frame, header, state);
    let editing_call = match state.editing {
        Some(Editing::Call(field)) => Some(field),
        _ => None,
    };
    editor::draw(frame, editor_area, &state.editor, editing_call);
    draw_tabs(frame, tabs, state);
    draw_summary(frame, summary, state, now);
    let why = state
        .explain
        .as_ref()
        .filter(|panel| panel.target.shown_in(state.tab));
    match why {
        Some(panel) => {
            let [page, why] =
                Layout::horizontal([Constraint::Percentage(55), Constraint::Percentage(45)])
                    .areas(pane);
            draw_pane(frame, page, state, now);
            let typing = state.editing == Some(Editing::ExplainPath);
            explain::draw(frame, why, panel, typing);
        }
        None => draw_pane(frame, pane, state, now),
    }
    draw_keys(frame, keys, state);
    if state.overlay.is_some() {
        draw_overlay(frame, frame.area(), state);
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

fn plugin_text(state: &State) -> Span<'static> {
    let sampling = match state.applied.get("sampleOverCapGlobResults") {
        Some(serde_json::Value::Bool(true)) => "sampling on",
        Some(serde_json::Value::Bool(false)) => "sampling off",
        _ => "sampling ?",
    };
    match &state.plugin {
        PluginStatus::Loading => Span::raw("plugin loading…"),
        PluginStatus::Registered => Span::raw(format!("plugin loaded, {sampling}")),
        PluginStatus::RgMissing(_) => Span::styled("⚠ rg missing: no tools", Style::new().yellow()),
        PluginStatus::Failed(_) => Span::styled("✗ plugin not loaded", Style::new().red()),
    }
}

fn draw_header(frame: &mut Frame<'_>, area: Rect, state: &State) {
    let plugin = plugin_text(state);
    let mut marks = Vec::new();
    if let Some(r) = &state.transcripts.recording {
        marks.push(Span::raw(" "));
        marks.push(Span::styled(
            format!(" ● REC {} ", r.recorder.len()),
            Style::new().red().bold().reversed(),
        ));
    }
    if let Some(f) = &state.follow {
        marks.push(Span::raw(" "));
        marks.push(Span::styled(
            format!(" ◉ FOLLOW {} ", f.calls),
            Style::new().cyan().bold().reversed(),
        ));
    }
    // The rg version, unless the load found no rg (the plugin text says
    // so), with its path when `--rg` chose it; the release when it is not
    // the seed's.
    let contract = &state.session.contract;
    let mut executor = state
        .session
        .executor
        .as_deref()
        .map_or_else(String::new, |name| format!(" · {name}"));
    if contract.release != fs_search_engine::release::Release::Seed {
        executor.push_str(&format!(" · contract {}", contract.release));
    }
    let rg = match (&state.session.rg.version, &state.plugin) {
        (_, PluginStatus::RgMissing(_)) | (None, _) => Span::raw(executor),
        (Some(_), _) => match &contract.rg {
            Some(path) => Span::raw(format!(
                "{executor} · {} ({})",
                state.session.rg.label(),
                path.display()
            )),
            None => Span::raw(format!("{executor} · {}", state.session.rg.label())),
        },
    };
    // The workdir gives way to the rg version and the marks that follow it.
    let marks_width: usize = marks.iter().map(Span::width).sum();
    let fixed = 14 + plugin.width() + rg.width() + 9 + marks_width;
    let workdir = path_tail(
        &state.session.workdir,
        usize::from(area.width).saturating_sub(fixed),
    );
    let mut line = Line::from(vec![
        Span::styled(" workbench ", Style::new().bold().reversed()),
        Span::raw(" "),
        Span::raw(workdir),
        Span::styled(" │ ", Style::new().dark_gray()),
        plugin,
        rg,
    ]);
    for mark in marks {
        line.push_span(mark);
    }
    frame.render_widget(Paragraph::new(line), area);
    frame.render_widget(
        Paragraph::new(Line::from(" ? help ").right_aligned().dark_gray()),
        area,
    );
}

fn draw_tabs(frame: &mut Frame<'_>, area: Rect, state: &State) {
    let mut spans = vec![Span::raw(" ")];
    for tab in Tab::ALL {
        let text = tab.numbered_title();
        if tab == state.tab {
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

/// The one-line summary's parts of a finished call (with its page's
/// `tokens` once counted), each with its rank: a narrow screen drops the
/// lowest ranks first (the call and its outcome always stay).
pub(crate) fn summary_parts(
    record: &CallRecord,
    index: usize,
    count: usize,
    tokens: Option<String>,
) -> Vec<(String, u8)> {
    let mut parts = vec![(
        format!("#{} {} ({}/{count})", record.id, record.tool, index + 1),
        9,
    )];
    match record.error_name_code() {
        Some((name, code)) => parts.push((
            format!(
                "isError {{name: {}, code: {}}}",
                name.unwrap_or("null"),
                code.unwrap_or("null")
            ),
            9,
        )),
        None => parts.push(("ok".to_owned(), 9)),
    }
    match record.duration_ms() {
        Some(ms) => parts.push((format!("{ms:.1} ms"), 3)),
        None => parts.push(("recorded".to_owned(), 3)),
    }
    parts.push((format!("{} B text", record.text().len()), 4));
    if let Some(tokens) = tokens {
        parts.push((tokens, 5));
    }
    if let Some((_, bytes)) = record.spill() {
        if record.ran().is_some() {
            parts.push((format!("spill {bytes} B (o)"), 7));
        } else {
            parts.push((format!("spill {bytes} B"), 7));
        }
    }
    let warnings = record.warnings().len();
    if warnings > 0 {
        parts.push((
            format!("⚠ {warnings} warning(s): tab {}", Tab::Call.digit()),
            8,
        ));
    }
    parts
}

/// `parts` joined with ` · `, dropping the lowest-ranked (the later of
/// equals) until the line fits `cols` cells.
fn fit_parts(mut parts: Vec<(String, u8)>, cols: usize) -> String {
    let width = |parts: &[(String, u8)]| {
        parts.iter().map(|(p, _)| p.chars().count()).sum::<usize>()
            + 3 * parts.len().saturating_sub(1)
    };
    while width(&parts) > cols && parts.len() > 2 {
        let lowest = parts.iter().map(|(_, rank)| *rank).min().unwrap_or(0);
        match parts.iter().rposition(|(_, rank)| *rank == lowest) {
            Some(i) => {
                parts.remove(i);
            }
            None => break,
        }
    }
    parts
        .into_iter()
        .map(|(part, _)| part)
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The shown call's token label: its page's, or, through a lens, the
/// tokens of what the host's model receives first.
fn token_label(state: &State, record: &CallRecord) -> Option<String> {
    let page = state.tokens.page(record.id)?;
    let lensed = state.lens_for(record).and_then(|lens| {
        let index = content::lens::lens_index(lens)?;
        let count = state.tokens.lensed.get(&(record.id, index))?;
        Some(lensed_label(&lens.name(), *count, page))
    });
    Some(lensed.unwrap_or_else(|| page.label()))
}

fn draw_summary(frame: &mut Frame<'_>, area: Rect, state: &State, now: Instant) {
    let line = if let Some(status) = &state.status {
        let style = if status.alert {
            Style::new().red().bold()
        } else {
            Style::new().cyan()
        };
        // A message too wide for one row wraps onto the second.
        let paragraph = Paragraph::new(Line::styled(status_text(status), style))
            .wrap(ratatui::widgets::Wrap { trim: false });
        frame.render_widget(paragraph, area);
        return;
    } else if let Some(running) = &state.running {
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
    } else if let Some(record) = state.shown_record() {
        let parts = summary_parts(
            record,
            state.shown.unwrap_or(0),
            state.history.len(),
            token_label(state, record),
        );
        let text = format!(
            " {}",
            fit_parts(parts, usize::from(area.width).saturating_sub(1))
        );
        if record.is_error() {
            Line::styled(text, Style::new().red())
        } else {
            Line::from(text)
        }
    } else {
        Line::from(" no call yet").dark_gray()
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn pane_title(state: &State) -> String {
    let tab = state.tab;
    let recorded = state.shown_record().is_some_and(|r| r.ran().is_none());
    match tab {
        Tab::Text if state.shown_lens().is_some() => format!(
            " {} · {}{}: what the host's model receives (✂ where it cut) ",
            tab.title(),
            state
                .shown_lens()
                .map(|lens| lens.name())
                .unwrap_or_default(),
            if state.lens_chosen {
                ""
            } else {
                " (the recorded client's host)"
            }
        ),
        Tab::Text if recorded => format!(
            " {}: exactly what the model saw (recorded; paths normalised) ",
            tab.title()
        ),
        Tab::Text => format!(
            " {}: exactly what the model sees (│ page ▶ footer) ",
            tab.title()
        ),
        Tab::Value => " Canonical value ".to_owned(),
        Tab::Meta => " Presentation meta (search card) ".to_owned(),
        Tab::Call => " Call details ".to_owned(),
        Tab::Surface => format!(" {}: what the model sees before any call ", tab.title()),
        Tab::Config => " Plugin config (a change reloads the plugin) ".to_owned(),
        Tab::History => match state.tokens.tokenizer() {
            Some(_) => format!(
                " {}: {} call(s) · {} tokens added to the context ",
                tab.title(),
                state.history.len(),
                fs_search_process::thousands(state.tokens.session_total())
            ),
            None => format!(" {}: {} call(s) ", tab.title(), state.history.len()),
        },
        Tab::Transcript => format!(
            " {}: record this session · replay or follow a transcript ",
            tab.title()
        ),
    }
}

fn draw_pane(frame: &mut Frame<'_>, area: Rect, state: &State, now: Instant) {
    let mut block = Block::bordered().title(pane_title(state));
    let inner = block.inner(area);
    // The document's position goes on the bottom edge, right; the spill
    // locator gets the rest of that edge.
    let doc = content::tab_doc(state, state.tab);
    let mut first = 0;
    let mut position = String::new();
    if let Some(doc) = doc {
        let total = doc.row_count(doc.text_cols(inner.width));
        first = state
            .scroll(state.tab)
            .min(total.saturating_sub(usize::from(inner.height)));
        position = doc_view::position(first, total, inner.height);
        block = block.title_bottom(Line::from(position.clone()).right_aligned().dark_gray());
    }
    let shown = state.shown_record();
    let spill = shown.and_then(|r| r.spill().map(|(locator, _)| (locator, r.ran().is_some())));
    if let Some((locator, opens)) = spill.filter(|_| state.tab == Tab::Text) {
        let room = usize::from(area.width).saturating_sub(24 + position.chars().count());
        let opens = if opens { " · o opens" } else { "" };
        let text = format!(" spill ▸ {}{opens} ", path_tail(locator, room));
        block = block.title_bottom(Line::from(text).yellow());
    }
    frame.render_widget(block, area);
    match (state.tab, doc) {
        (Tab::Config, _) => config::draw(
            frame,
            inner,
            &state.config,
            state.editing == Some(Editing::Config),
            &state.applied,
            &state.plugin,
        ),
        (Tab::History, _) => history::draw(
            frame,
            inner,
            &state.history,
            (state.history_selected, state.shown),
            state.running.as_ref(),
            now,
        ),
        (Tab::Transcript, _) => match &state.ablate {
            Some(mode) => ablate::draw(frame, inner, mode),
            None => transcript::draw(frame, inner, &state.transcripts, state.follow.as_ref()),
        },
        (_, Some(doc)) => {
            doc_view::draw_doc(frame, inner, doc, first);
        }
        (_, None) => {}
    }
}

/// Whether `binding` does something in the state the tab is in (the
/// Transcript tab's list, replay and ablate mode take different keys; the
/// lens key is hinted once there is a page to see through it).
fn applies(binding: &keymap::Binding, state: &State) -> bool {
    use super::state::transcript::{ReplayState, TranscriptAction as T};
    if binding.action == keymap::Action::CycleLens {
        return state.shown_record().is_some();
    }
    let keymap::Action::Transcript(action) = binding.action else {
        return true;
    };
    if state.tab != Tab::Transcript {
        return true;
    }
    if state.ablate.is_some() {
        // The ablate mode has no record to follow and no diff list to walk.
        return !matches!(action, T::Follow | T::NextChanged);
    }
    let listing = matches!(state.transcripts.replay, ReplayState::List);
    match action {
        T::Open | T::Follow | T::Ablate | T::OpenPath => listing,
        T::NextRecord
        | T::PrevRecord
        | T::NextChanged
        | T::Back
        | T::Sideways(_)
        | T::ToggleWrap => !listing,
        T::ToggleRecording | T::Up | T::Down | T::CancelAblation => true,
    }
}

/// The key bar's items in priority order, as many as fit `cols` cells;
/// the help key stays last whatever else gives way (after a `…` when
/// something did).
fn key_items(state: &State, cols: usize) -> Vec<(String, String)> {
    let contexts = keymap::contexts_for(state.editing, state.overlay.is_some(), state.tab);
    let mut items: Vec<(String, String, bool)> = keymap::bar(&contexts)
        .into_iter()
        .filter(|b| applies(b, state))
        .map(|b| {
            let help = b.action == keymap::Action::ToggleHelp;
            (keymap::label(b), b.short.to_owned(), help)
        })
        .collect();
    let help = items
        .iter()
        .position(|(_, _, help)| *help)
        .map(|i| items.remove(i));
    let width =
        |(label, short): &(String, String)| label.chars().count() + short.chars().count() + 4;
    let help = help.map(|(label, short, _)| (label, short));
    let reserve = help.as_ref().map_or(0, |h| width(h) + 3);
    let mut shown = Vec::new();
    let mut used = 0;
    let mut dropped = false;
    for (label, short, _) in items {
        let item = (label, short);
        if dropped || used + width(&item) + reserve > cols {
            dropped = true;
            continue;
        }
        used += width(&item);
        shown.push(item);
    }
    if dropped {
        shown.push(("…".to_owned(), String::new()));
    }
    shown.extend(help);
    shown
}

fn draw_keys(frame: &mut Frame<'_>, area: Rect, state: &State) {
    let mut spans = Vec::new();
    for (label, short) in key_items(state, usize::from(area.width)) {
        if short.is_empty() {
            spans.push(Span::raw(format!(" {label} ")).dark_gray());
            continue;
        }
        spans.push(Span::styled(format!(" {label} "), Style::new().reversed()));
        spans.push(Span::raw(format!(" {short} ")));
    }
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

fn draw_overlay(frame: &mut Frame<'_>, screen: Rect, state: &State) {
    let area = overlay_area(screen);
    frame.render_widget(Clear, area);
    let (title, doc_owned, note) = match &state.overlay {
        Some(Overlay::Help) => (
            " Help · Esc closes · ↑↓ PgUp PgDn scroll ".to_owned(),
            Some(content::help::help_doc(&state.session, &state.plugin)),
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
    let doc = match (&doc_owned, &state.overlay) {
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
            let (first, total) = doc_view::draw_doc(frame, inner, doc, state.overlay_scroll);
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

    #[test]
    fn a_narrow_summary_drops_its_lowest_ranked_parts_first() {
        let parts = || {
            vec![
                ("#1 glob (1/1)".to_owned(), 9),
                ("ok".to_owned(), 9),
                ("4.2 ms".to_owned(), 3),
                ("150 B text".to_owned(), 4),
                ("57 tokens (full result 40)".to_owned(), 5),
                ("spill 128 B (o)".to_owned(), 7),
                ("⚠ 1 warning(s): tab 4".to_owned(), 8),
            ]
        };
        let whole = fit_parts(parts(), 200);
        assert_eq!(
            whole,
            "#1 glob (1/1) · ok · 4.2 ms · 150 B text · 57 tokens (full result 40) · spill 128 B (o) · ⚠ 1 warning(s): tab 4"
        );
        assert_eq!(
            fit_parts(parts(), 89),
            "#1 glob (1/1) · ok · 57 tokens (full result 40) · spill 128 B (o) · ⚠ 1 warning(s): tab 4"
        );
        assert_eq!(
            fit_parts(parts(), 79),
            "#1 glob (1/1) · ok · spill 128 B (o) · ⚠ 1 warning(s): tab 4"
        );
        assert_eq!(
            fit_parts(parts(), 59),
            "#1 glob (1/1) · ok · ⚠ 1 warning(s): tab 4"
        );
        // The call and its outcome stay, however narrow.
        assert_eq!(fit_parts(parts(), 5), "#1 glob (1/1) · ok");
    }
}
