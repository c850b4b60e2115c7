//! Draws the Transcript tab: the recording state (and the followed
//! recording, if any), then either the list of transcripts to replay or
//! follow, or one replayed record with its recorded and its current
//! result side by side. Differing rows carry a `-`/`+` gutter mark
//! and are coloured; matching rows have a blank gutter, so colour is never
//! the only signal. Long lines are cut at the side's edge (`…`) and
//! scroll sideways (h/l), or wrap (z) with `┆` marking a continuation.
//! The path prompt of `o` stands above the list while it is typed.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::interactive::scroll_doc::{visible, width};
use crate::interactive::state::follow::{FollowStatus, Following};
use crate::interactive::state::transcript::{ReplayState, RowView, TranscriptState};
use fs_search_transcript::{CompareRow, CompareSide};

fn recording_line(transcripts: &TranscriptState) -> Line<'static> {
    match &transcripts.recording {
        Some(r) => Line::from(vec![
            Span::styled(" ● REC ", Style::new().red().bold().reversed()),
            Span::raw(format!(
                " {} call(s) recorded · R stops and saves to {}",
                r.recorder.len(),
                r.out.display()
            )),
        ]),
        None => Line::from(format!(
            " ○ not recording · R records this session's calls to {}/",
            transcripts.save_dir.display()
        ))
        .dark_gray(),
    }
}

/// `text` cut to `cols` cells (a cut is marked with `…`).
fn fit(text: &str, cols: usize) -> String {
    if width(text) <= cols {
        return text.to_owned();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = width(&c.to_string());
        if used + w + 1 > cols {
            break;
        }
        out.push(c);
        used += w;
    }
    out.push('…');
    out
}

/// `text` from cell `offset` on, cut to `cols` cells: a `…` at the start
/// says cells are scrolled off to the left, one at the end that the line
/// goes on.
fn window(text: &str, offset: usize, cols: usize) -> String {
    if offset == 0 {
        return fit(text, cols);
    }
    let mut skipped = 0;
    let rest: String = text
        .chars()
        .skip_while(|c| {
            let skip = skipped < offset;
            skipped += width(&c.to_string());
            skip
        })
        .collect();
    if rest.is_empty() {
        return String::new();
    }
    format!("…{}", fit(&rest, cols.saturating_sub(1)))
}

/// `text` in pieces of at most `cols` cells (at least one piece).
fn wrap(text: &str, cols: usize) -> Vec<String> {
    let cols = cols.max(1);
    let mut pieces = vec![String::new()];
    let mut used = 0;
    for c in text.chars() {
        let w = width(&c.to_string());
        if used + w > cols && used > 0 {
            pieces.push(String::new());
            used = 0;
        }
        if let Some(last) = pieces.last_mut() {
            last.push(c);
        }
        used += w;
    }
    pieces
}

/// One side of a row as the lines it takes: one (cut at `view.offset`),
/// or its wrapped pieces (continuations marked `┆` in the gutter).
fn side_lines(
    side: &CompareSide,
    mark: char,
    changed_style: Style,
    cols: usize,
    view: RowView,
) -> Vec<Line<'static>> {
    let (gutter, style) = match (&side.text, side.changed) {
        (_, false) => (' ', Style::new()),
        (Some(_), true) => (mark, changed_style),
        (None, true) => (' ', Style::new().dark_gray()),
    };
    let text_cols = cols.saturating_sub(2);
    let pieces = match &side.text {
        Some(t) if view.wrap => wrap(&visible(t), text_cols),
        Some(t) => vec![window(&visible(t), view.offset, text_cols)],
        None => vec!["·".to_owned()],
    };
    pieces
        .into_iter()
        .enumerate()
        .map(|(i, piece)| {
            let gutter = if i == 0 {
                Span::styled(format!("{gutter} "), style.bold())
            } else {
                Span::styled("┆ ", Style::new().dark_gray())
            };
            Line::from(vec![gutter, Span::styled(piece, style)])
        })
        .collect()
}

fn follow_line(follow: &Following) -> Line<'static> {
    let style = match follow.status {
        FollowStatus::Problem(_) => Style::new().red(),
        _ => Style::new().cyan(),
    };
    Line::from(vec![
        Span::styled(" ◉ FOLLOW ", style.bold().reversed()),
        Span::styled(format!(" {}", follow.describe()), style),
    ])
}

fn draw_list(
    frame: &mut Frame<'_>,
    area: Rect,
    transcripts: &TranscriptState,
    follow: Option<&Following>,
) {
    let area = match &transcripts.prompt {
        Some(input) => {
            let [prompt, rest] =
                Layout::vertical([Constraint::Length(1), Constraint::Min(1)]).areas(area);
            let [label, field] =
                Layout::horizontal([Constraint::Length(7), Constraint::Min(1)]).areas(prompt);
            frame.render_widget(Paragraph::new(" open: ").cyan().bold(), label);
            super::editor::input(frame, field, input, true, "", false);
            rest
        }
        None => area,
    };
    let mut lines = vec![
        Line::from(" Replay a transcript: ↑↓ choose · Enter replays it on its tree · f follows it · a ablates it · o opens any file")
            .bold(),
    ];
    if transcripts.files.is_empty() {
        lines.push(
            Line::from(" (no transcripts found in fixtures/transcripts or the save directory)")
                .dark_gray(),
        );
    }
    let height = usize::from(area.height).saturating_sub(1);
    let first = transcripts
        .selected
        .saturating_sub(height.saturating_sub(1));
    for (i, file) in transcripts
        .files
        .iter()
        .enumerate()
        .skip(first)
        .take(height)
    {
        let followed = if follow.is_some_and(|f| f.path == *file) {
            "  ◉ following"
        } else {
            ""
        };
        let text = format!(
            "{} {}{followed}",
            if i == transcripts.selected {
                "▶"
            } else {
                " "
            },
            file.display()
        );
        lines.push(if i == transcripts.selected {
            Line::styled(text, Style::new().reversed())
        } else {
            Line::from(text)
        });
    }
    frame.render_widget(Paragraph::new(lines), area);
}

fn draw_replay(frame: &mut Frame<'_>, area: Rect, transcripts: &TranscriptState) {
    let view = transcripts.view;
    let ReplayState::Loaded {
        replay,
        record,
        scroll,
        rows,
    } = &transcripts.replay
    else {
        return;
    };
    let Some(check) = replay.checks.get(*record) else {
        return;
    };
    let changed = replay.changed().count();
    let verdict = if check.matches() {
        Span::styled(" ✓ matches ", Style::new().green().bold())
    } else {
        Span::styled(" ≠ differs ", Style::new().red().bold().reversed())
    };
    let call = &check.record.call;
    let args = serde_json::to_string(&call.args).unwrap_or_default();
    let [head, body] = Layout::vertical([Constraint::Length(2), Constraint::Min(1)]).areas(area);
    let summary = vec![
        Line::from(vec![
            verdict,
            Span::raw(format!(
                " record {}/{} \"{}\" · {} {args}",
                record + 1,
                replay.checks.len(),
                call.name,
                call.tool
            )),
        ]),
        Line::from(format!(
            " {}:{} · {changed} of {} record(s) differ · keys n p d h l z b (? explains)",
            replay.file,
            check.record.line,
            replay.checks.len()
        ))
        .dark_gray(),
    ];
    frame.render_widget(Paragraph::new(summary), head);
    let from = view_note(view);
    draw_rows_in(
        frame,
        body,
        rows,
        *scroll,
        (
            &format!(" recorded{from} "),
            &format!(" current (replayed now){from} "),
        ),
        view,
    );
}

/// What a side's title adds for `view`: ` (wrapped)`, ` (from cell N)`
/// when scrolled sideways, nothing at the start.
pub(crate) fn view_note(view: RowView) -> String {
    match view {
        RowView { wrap: true, .. } => " (wrapped)".to_owned(),
        RowView { offset: 0, .. } => String::new(),
        RowView { offset, .. } => format!(" (from cell {})", offset + 1),
    }
}

/// Draws `rows` side by side from row `scroll`, under the two titles
/// (left: `-` marks, red; right: `+` marks, green), laid out as `view`
/// says: cut from its offset, or wrapped (a row then takes as many lines
/// as its longer side, so the two sides stay level). The replay view and
/// the ablate mode's diff both draw with it.
pub(crate) fn draw_rows_in(
    frame: &mut Frame<'_>,
    body: Rect,
    rows: &[CompareRow],
    scroll: usize,
    (left_title, right_title): (&str, &str),
    view: RowView,
) {
    let [left, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(body);
    let left_block = Block::new()
        .borders(Borders::TOP | Borders::RIGHT)
        .title(left_title.to_owned());
    let right_block = Block::new()
        .borders(Borders::TOP)
        .title(right_title.to_owned());
    let (left_inner, right_inner) = (left_block.inner(left), right_block.inner(right));
    frame.render_widget(left_block, left);
    frame.render_widget(right_block, right);
    let height = usize::from(left_inner.height);
    let first = if view.wrap {
        scroll.min(rows.len().saturating_sub(1))
    } else {
        scroll.min(rows.len().saturating_sub(height))
    };
    let (mut l, mut r) = (Vec::new(), Vec::new());
    for row in rows.iter().skip(first) {
        if l.len() >= height {
            break;
        }
        let mut left_lines = side_lines(
            &row.recorded,
            '-',
            Style::new().red(),
            usize::from(left_inner.width),
            view,
        );
        let mut right_lines = side_lines(
            &row.current,
            '+',
            Style::new().green(),
            usize::from(right_inner.width),
            view,
        );
        let taken = left_lines.len().max(right_lines.len());
        left_lines.resize(taken, Line::default());
        right_lines.resize(taken, Line::default());
        l.extend(left_lines);
        r.extend(right_lines);
    }
    frame.render_widget(Paragraph::new(l), left_inner);
    frame.render_widget(Paragraph::new(r), right_inner);
}

/// Draws the tab into `area` (inside the pane's border).
pub(crate) fn draw(
    frame: &mut Frame<'_>,
    area: Rect,
    transcripts: &TranscriptState,
    follow: Option<&Following>,
) {
    let head = 1 + u16::from(follow.is_some());
    let [rec, rest] = Layout::vertical([Constraint::Length(head), Constraint::Min(1)]).areas(area);
    let mut lines = vec![recording_line(transcripts)];
    lines.extend(follow.map(follow_line));
    frame.render_widget(Paragraph::new(lines), rec);
    match &transcripts.replay {
        ReplayState::List => draw_list(frame, rest, transcripts, follow),
        ReplayState::Loading(path) => frame.render_widget(
            Paragraph::new(format!(
                " replaying {} on a fresh copy of its tree…",
                path.display()
            ))
            .yellow(),
            rest,
        ),
        ReplayState::Failed { path, error } => frame.render_widget(
            Paragraph::new(vec![
                Line::from(format!(" ✗ {} could not be replayed:", path.display())).red(),
                Line::from(format!(" {error}")).red(),
                Line::from(" b back to the list").dark_gray(),
            ]),
            rest,
        ),
        ReplayState::Loaded { .. } => draw_replay(frame, rest, transcripts),
    }
}
