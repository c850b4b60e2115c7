//! Draws the Transcript tab's ablate mode: the `--set` prompt, the run's
//! progress, or the result: the variants as a table (with the headless
//! report's figures: tokens, truncated and hidden), a bar chart of their
//! total page tokens, a histogram of the selected variant's page tokens
//! per call, and its calls whose page changed; an opened call is shown
//! side by side against the baseline (the replay view's rows, cut and
//! scrolled sideways with h/l or wrapped with z).

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::Line;
use ratatui::widgets::{Bar, BarChart, Block, Borders, Cell, Gauge, Paragraph, Row, Table};

use crate::interactive::state::ablate::{
    AblateDone, AblatePhase, AblateState, AblateStop, HISTOGRAM_BUCKETS, OpenDiff, SUGGESTED_SET,
    histogram,
};
use fs_search_transcript::VariantStats;
use fs_search_transcript::variant_label;

use super::transcript::{draw_rows_in, view_note};

fn draw_asking(frame: &mut Frame<'_>, area: Rect, ablate: &AblateState, input: &tui_input::Input) {
    let [title, field, help] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Min(1),
    ])
    .areas(area);
    let text = format!(" Ablate {}: the values to try", ablate.file.display());
    frame.render_widget(Paragraph::new(Line::from(text).bold()), title);
    let [prompt, value] =
        Layout::horizontal([Constraint::Length(3), Constraint::Min(1)]).areas(field);
    frame.render_widget(Paragraph::new(" > ").bold(), prompt);
    if input.value().is_empty() {
        // The suggestion, dimmed: what Enter runs until something is typed.
        frame.render_widget(Paragraph::new(SUGGESTED_SET).dark_gray(), value);
        frame.set_cursor_position(Position::new(value.x, value.y));
    } else {
        super::editor::input(frame, value, input, true, "", false);
    }
    let lines = vec![
        Line::from(
            " KEY=V1,V2,… per config key, keys separated by spaces (as workbench ablate --set)",
        ),
        Line::from(
            " Enter runs it off the screen (nothing typed: the suggestion) · Esc cancels a run, here goes back",
        ),
    ];
    frame.render_widget(Paragraph::new(lines).dark_gray(), help);
}

fn draw_running(frame: &mut Frame<'_>, area: Rect, ablate: &AblateState, variants: usize) {
    let [title, gauge] =
        Layout::vertical([Constraint::Length(1), Constraint::Length(1)]).areas(area);
    let text = format!(
        " ablating {} under {} variant(s) and the baseline… Esc cancels",
        ablate.file.display(),
        variants
    );
    frame.render_widget(Paragraph::new(Line::from(text).yellow()), title);
    let (done, total) = match &ablate.phase {
        AblatePhase::Running {
            progress: Some(p), ..
        } => (p.done, p.total),
        _ => (0, 0),
    };
    let ratio = if total == 0 {
        0.0
    } else {
        done as f64 / total as f64
    };
    let gauge_widget = Gauge::default()
        .ratio(ratio.clamp(0.0, 1.0))
        .label(format!("{done}/{total} call(s)"))
        .gauge_style(Style::new().cyan());
    frame.render_widget(gauge_widget, gauge);
}

fn draw_stopped(frame: &mut Frame<'_>, area: Rect, ablate: &AblateState, stop: &AblateStop) {
    let first = match stop {
        AblateStop::Cancelled => Line::from(format!(
            " the ablation of {} was cancelled",
            ablate.file.display()
        ))
        .yellow(),
        AblateStop::Failed(error) => Line::from(format!(
            " ✗ {} could not be ablated: {error}",
            ablate.file.display()
        ))
        .red(),
    };
    let lines = vec![
        first,
        Line::from(" b back to the list · a tries again").dark_gray(),
    ];
    frame.render_widget(Paragraph::new(lines), area);
}

/// The variant's row label; the selected one is marked `▶` (colour is
/// never the only signal).
fn variant_name(index: usize, stats: &VariantStats, selected: bool) -> String {
    let mark = if selected { "▶" } else { " " };
    if index == 0 {
        format!("{mark}{}", variant_label(&stats.overrides))
    } else {
        format!("{mark}{index}: {}", variant_label(&stats.overrides))
    }
}

fn draw_table(frame: &mut Frame<'_>, area: Rect, done: &AblateDone, selected: usize) {
    let header = Row::new([
        "variant", "tokens", "p50", "p95", "max", "trunc", "hidden", "changed",
    ])
    .bold();
    let rows = done.variants.iter().enumerate().map(|(i, v)| {
        let row = Row::new([
            Cell::from(variant_name(i, v, i == selected)),
            Cell::from(v.tokens.total.to_string()),
            Cell::from(v.tokens.p50.to_string()),
            Cell::from(v.tokens.p95.to_string()),
            Cell::from(v.tokens.max.to_string()),
            Cell::from(v.truncated.to_string()),
            // As the headless report's hidden paths and matches (a glob
            // call hides paths, a grep call matches): found, not on the page.
            Cell::from((v.hidden.paths + v.hidden.matches).to_string()),
            Cell::from(v.changed.to_string()),
        ]);
        if i == selected { row.reversed() } else { row }
    });
    let widths = [
        Constraint::Min(12),
        Constraint::Length(7),
        Constraint::Length(5),
        Constraint::Length(5),
        Constraint::Length(5),
        Constraint::Length(5),
        Constraint::Length(7),
        Constraint::Length(7),
    ];
    let table = Table::new(rows, widths).header(header).block(
        Block::new()
            .borders(Borders::TOP)
            .title(" variants (↑↓) · hidden: paths or matches not on the pages "),
    );
    frame.render_widget(table, area);
}

fn draw_totals(frame: &mut Frame<'_>, area: Rect, done: &AblateDone, selected: usize) {
    let bars: Vec<Bar<'_>> = done
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let name = if i == 0 {
                "B".to_owned()
            } else {
                i.to_string()
            };
            let bar = Bar::with_label(name, v.tokens.total);
            if i == selected {
                bar.style(Style::new().yellow())
            } else {
                bar
            }
        })
        .collect();
    let chart = BarChart::horizontal(bars).bar_gap(0).block(
        Block::new()
            .borders(Borders::TOP | Borders::LEFT)
            .title(" page tokens per variant "),
    );
    frame.render_widget(chart, area);
}

fn draw_histogram(frame: &mut Frame<'_>, area: Rect, stats: &VariantStats) {
    let bars: Vec<Bar<'_>> = histogram(&stats.page_tokens(), HISTOGRAM_BUCKETS)
        .into_iter()
        .map(|(bound, count)| Bar::with_label(bound, count))
        .collect();
    let chart = BarChart::vertical(bars).bar_width(5).bar_gap(1).block(
        Block::new()
            .borders(Borders::TOP)
            .title(" calls by page tokens (this variant) "),
    );
    frame.render_widget(chart, area);
}

fn draw_calls(frame: &mut Frame<'_>, area: Rect, ablate: &AblateState, selected: usize) {
    let calls = ablate.changed_calls();
    let block = Block::new()
        .borders(Borders::TOP | Borders::LEFT)
        .title(format!(
            " {} changed call(s) · n/p · Enter diff ",
            calls.len()
        ));
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let height = usize::from(inner.height);
    let first = selected.saturating_sub(height.saturating_sub(1));
    let lines: Vec<Line<'_>> = calls
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
        .map(|(i, page)| {
            let mark = if i == selected { "▶" } else { " " };
            let text = format!("{mark}#{} {}", page.record + 1, page.name);
            if i == selected {
                Line::styled(text, Style::new().reversed())
            } else {
                Line::from(text)
            }
        })
        .collect();
    let lines = if calls.is_empty() {
        vec![Line::from(" (no page differs from the baseline's)").dark_gray()]
    } else {
        lines
    };
    frame.render_widget(Paragraph::new(lines), inner);
}

fn draw_done(
    frame: &mut Frame<'_>,
    area: Rect,
    ablate: &AblateState,
    done: &AblateDone,
    variant: usize,
    call: usize,
) {
    let [head, top, bottom] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Percentage(50),
        Constraint::Percentage(50),
    ])
    .areas(area);
    let text = format!(
        " ablation of {} · {} variant(s) and the baseline · b back",
        ablate.file.display(),
        done.variants.len().saturating_sub(1)
    );
    frame.render_widget(Paragraph::new(Line::from(text).bold()), head);
    let [table, totals] =
        Layout::horizontal([Constraint::Percentage(66), Constraint::Percentage(34)]).areas(top);
    draw_table(frame, table, done, variant);
    draw_totals(frame, totals, done, variant);
    let [hist, calls] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(bottom);
    if let Some(stats) = done.variants.get(variant) {
        draw_histogram(frame, hist, stats);
    }
    draw_calls(frame, calls, ablate, call);
}

fn draw_diff(
    frame: &mut Frame<'_>,
    area: Rect,
    ablate: &AblateState,
    variant: usize,
    call: usize,
    diff: &OpenDiff,
) {
    let [head, body] = Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
    let name = ablate.changed_calls().get(call).map_or(String::new(), |p| {
        format!("#{} \"{}\"", p.record + 1, p.name)
    });
    let text = format!(
        " {name} under variant {variant} · ↑↓ h/l scroll · z wrap · b back to the variants"
    );
    frame.render_widget(Paragraph::new(Line::from(text).bold()), head);
    let note = view_note(diff.view);
    draw_rows_in(
        frame,
        body,
        &diff.rows,
        diff.scroll,
        (
            &format!(" baseline{note} "),
            &format!(" variant {variant}{note} "),
        ),
        diff.view,
    );
}

/// Draws the ablate mode into `area` (inside the pane's border).
pub(crate) fn draw(frame: &mut Frame<'_>, area: Rect, ablate: &AblateState) {
    match &ablate.phase {
        AblatePhase::Asking(input) => draw_asking(frame, area, ablate, input),
        AblatePhase::Running { variants, .. } => draw_running(frame, area, ablate, variants.len()),
        AblatePhase::Stopped(stop) => draw_stopped(frame, area, ablate, stop),
        AblatePhase::Done {
            variant,
            call,
            diff: Some(diff),
            ..
        } => draw_diff(frame, area, ablate, *variant, *call, diff),
        AblatePhase::Done {
            done,
            variant,
            call,
            diff: None,
        } => draw_done(frame, area, ablate, done, *variant, *call),
    }
}
