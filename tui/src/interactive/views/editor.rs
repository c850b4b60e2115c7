//! Draws the call editor: the tool choice, the pattern/path/include
//! fields and the raw JSON arguments, with the cursor in the field being
//! edited.

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::{Style, Stylize};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Paragraph};
use tui_input::Input;

use crate::interactive::state::editor::{CallEditor, Field, TOOLS, Tool};

fn label(frame: &mut Frame<'_>, area: Rect, text: &str, active: bool) {
    let (marker, style) = if active {
        ("▸", Style::new().reversed())
    } else {
        (" ", Style::new().dark_gray())
    };
    frame.render_widget(
        Paragraph::new(Span::styled(format!("{marker}{text} "), style)),
        area,
    );
}

/// Draws an input; when `active` puts the terminal cursor in it.
pub(crate) fn input(
    frame: &mut Frame<'_>,
    area: Rect,
    input: &Input,
    active: bool,
    placeholder: &str,
    dim: bool,
) {
    if input.value().is_empty() && !active {
        frame.render_widget(
            Paragraph::new(Span::styled(
                placeholder.to_owned(),
                Style::new().dark_gray(),
            )),
            area,
        );
        return;
    }
    let width = usize::from(area.width.max(1) - 1);
    let scroll = input.visual_scroll(width);
    let style = if dim {
        Style::new().dark_gray()
    } else {
        Style::new()
    };
    let scroll_cols = u16::try_from(scroll).unwrap_or(u16::MAX);
    frame.render_widget(
        Paragraph::new(Span::styled(input.value().to_owned(), style)).scroll((0, scroll_cols)),
        area,
    );
    if active {
        let x = input.visual_cursor().saturating_sub(scroll);
        let x = u16::try_from(x)
            .unwrap_or(0)
            .min(area.width.saturating_sub(1));
        frame.set_cursor_position(Position::new(area.x + x, area.y));
    }
}

/// Draws the call editor, with the cursor in `editing` if a field of it
/// has the keyboard.
pub(crate) fn draw(frame: &mut Frame<'_>, area: Rect, editor: &CallEditor, editing: Option<Field>) {
    let title = match editing {
        Some(field) => format!(" Call · editing {} ", field.label()),
        None => " Call ".to_owned(),
    };
    let mut block = Block::bordered().title(title);
    if editor.raw_edited {
        block = block.title(
            Line::from(" args edited by hand: sent as typed ")
                .right_aligned()
                .yellow(),
        );
    }
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let [r0, r1, r2] = Layout::vertical([Constraint::Length(1); 3]).areas(inner);
    let is = |f: Field| editing == Some(f);

    let [tool_area, pattern_label, pattern_area] = Layout::horizontal([
        Constraint::Length(19),
        Constraint::Length(9),
        Constraint::Fill(1),
    ])
    .areas(r0);
    let mut tools = vec![Span::styled(" tool ", Style::new().dark_gray())];
    for tool in TOOLS {
        tools.push(if tool == editor.tool {
            Span::styled(format!("[{}]", tool.name()), Style::new().bold())
        } else {
            Span::styled(format!(" {} ", tool.name()), Style::new().dark_gray())
        });
    }
    frame.render_widget(Paragraph::new(Line::from(tools)), tool_area);
    label(frame, pattern_label, "pattern", is(Field::Pattern));
    input(
        frame,
        pattern_area,
        &editor.pattern,
        is(Field::Pattern),
        "(empty)  e edits",
        false,
    );

    let [path_label, path_area, include_label, include_area] = Layout::horizontal([
        Constraint::Length(6),
        Constraint::Fill(1),
        Constraint::Length(9),
        Constraint::Fill(1),
    ])
    .areas(r1);
    label(frame, path_label, "path", is(Field::Path));
    input(
        frame,
        path_area,
        &editor.path,
        is(Field::Path),
        "(workspace)",
        false,
    );
    let include_off = editor.tool == Tool::Glob;
    label(frame, include_label, "include", is(Field::Include));
    input(
        frame,
        include_area,
        &editor.include,
        is(Field::Include),
        if include_off { "(grep only)" } else { "(none)" },
        include_off,
    );

    let [args_label, args_area] =
        Layout::horizontal([Constraint::Length(6), Constraint::Fill(1)]).areas(r2);
    label(frame, args_label, "args", is(Field::Args));
    input(frame, args_area, &editor.raw, is(Field::Args), "", false);
}
