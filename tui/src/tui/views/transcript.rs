//! Draws the Transcript tab: the recording state (and the followed
//! recording, if any), then either the list of transcripts to replay or
//! follow, or one replayed record with its recorded and its current
//! result side by side. Differing rows carry a `-`/`+` gutter mark
//! and are coloured; matching rows have a blank gutter, so colour is never
//! the only signal.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};

use crate::transcript::compare::{Row, Side};
use crate::tui::doc::{visible, width};
use crate::tui::state::follow::{FollowStatus, Following};
use crate::tui::state::transcript::{ReplayState, TranscriptState};

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

fn side_line(side: &Side, mark: char, changed_style: Style, cols: usize) -> Line<'static> {
    let (gutter, style) = match (&side.text, side.changed) {
        (_, false) => (' ', Style::new()),
        (Some(_), true) => (mark, changed_style),
        (None, true) => (' ', Style::new().dark_gray()),
    };
    let text = match &side.text {
        Some(t) => fit(&visible(t), cols.saturating_sub(2)),
        None => "·".to_owned(),
    };
    Line::from(vec![
        Span::styled(format!("{gutter} "), style.bold()),
        Span::styled(text, style),
    ])
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
    let mut lines = vec![
        Line::from(" Replay a transcript: ↑↓ choose · Enter replays it on its tree · f follows it · a ablates it")
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
            " {}:{} · {changed} of {} record(s) differ · n/p step · d next diff · b back",
            replay.file,
            check.record.line,
            replay.checks.len()
        ))
        .dark_gray(),
    ];
    frame.render_widget(Paragraph::new(summary), head);
    draw_rows(
        frame,
        body,
        rows,
        *scroll,
        (" recorded ", " current (replayed now) "),
    );
}

/// Draws `rows` side by side from row `scroll`, under the two titles
/// (left: `-` marks, red; right: `+` marks, green).
pub fn draw_rows(
    frame: &mut Frame<'_>,
    body: Rect,
    rows: &[Row],
    scroll: usize,
    (left_title, right_title): (&str, &str),
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
    let first = scroll.min(rows.len().saturating_sub(height));
    let shown = rows.iter().skip(first).take(height);
    let (mut l, mut r) = (Vec::new(), Vec::new());
    for row in shown {
        l.push(side_line(
            &row.recorded,
            '-',
            Style::new().red(),
            usize::from(left_inner.width),
        ));
        r.push(side_line(
            &row.current,
            '+',
            Style::new().green(),
            usize::from(right_inner.width),
        ));
    }
    frame.render_widget(Paragraph::new(l), left_inner);
    frame.render_widget(Paragraph::new(r), right_inner);
}

/// Draws the tab into `area` (inside the pane's border).
pub fn draw(
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
