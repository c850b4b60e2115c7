//! A read-only, scrollable document: the lines of a model-visible text
//! (or of a JSON value, the surface, a spill file) with a kind per line,
//! the word wrap that turns lines into screen rows, and the width of the
//! gutter those rows are drawn after.
//!
//! The text itself is never changed: a line's characters are only mapped
//! for display (control characters become their visible Control Pictures,
//! U+2400..) and wrapped; every character still occupies a cell, and
//! continuation rows are marked in the gutter, not in the text.

use std::cell::RefCell;
use std::ops::Range;

use unicode_width::UnicodeWidthChar;

/// How a line is set apart on screen (never by colour alone: the gutter
/// marker differs too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// Part of the model-visible page.
    Body,
    /// The footer paragraph the engine appends to an over-cap page.
    Footer,
    /// A heading of a composed view (surface, call details).
    Heading,
    /// A label or note of a composed view.
    Note,
    /// An error or warning line of a composed view.
    Alert,
    /// Where a host lens removed part of the page (not part of the text
    /// the host's model receives).
    Cut,
}

/// One logical line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocLine {
    /// The display text (control characters already made visible).
    pub text: String,
    pub kind: LineKind,
    /// 1-based line number shown in the gutter, if numbered.
    pub number: Option<usize>,
    /// Byte range of `text` to emphasise (the spill locator in a footer).
    pub mark: Option<Range<usize>>,
}

/// One screen row of a wrapped line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    pub line: usize,
    /// Byte range within the line's display text.
    pub start: usize,
    pub end: usize,
    /// The row continues the line above (wrapped).
    pub continued: bool,
}

/// A document and a cache of its wrap at the last width.
#[derive(Debug, Default)]
pub struct Doc {
    pub lines: Vec<DocLine>,
    wrapped: RefCell<Option<(usize, Vec<Row>)>>,
}

impl Clone for Doc {
    fn clone(&self) -> Self {
        Self::new(self.lines.clone())
    }
}

impl PartialEq for Doc {
    fn eq(&self, other: &Self) -> bool {
        self.lines == other.lines
    }
}

/// Maps a character to what is drawn for it: C0 controls and DEL become
/// Control Pictures so they take one visible cell.
pub(crate) fn visible_char(c: char) -> char {
    match c {
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('?'),
        '\u{7f}' => '\u{2421}',
        _ => c,
    }
}

/// `text` with every control character made visible.
pub(crate) fn visible(text: &str) -> String {
    text.chars().map(visible_char).collect()
}

fn char_width(c: char) -> usize {
    c.width().unwrap_or(1)
}

/// Display width of a string.
pub(crate) fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// Splits one line into rows of at most `cols` cells: words move to the
/// next row whole when they fit there, longer words break between
/// characters, and spaces stay where they are.
pub(crate) fn wrap_line(text: &str, cols: usize) -> Vec<Range<usize>> {
    let cols = cols.max(1);
    let mut rows = Vec::new();
    let mut row_start = 0;
    let mut used = 0;
    let mut chars = text.char_indices().peekable();
    while let Some(&(i, c)) = chars.peek() {
        if c == ' ' {
            if used + 1 > cols {
                rows.push(row_start..i);
                row_start = i;
                used = 0;
            }
            used += 1;
            chars.next();
            continue;
        }
        // A word: up to the next space.
        let word_end = text[i..].find(' ').map_or(text.len(), |n| i + n);
        let word_width = width(&text[i..word_end]);
        if used > 0 && used + word_width > cols && word_width <= cols {
            rows.push(row_start..i);
            row_start = i;
            used = 0;
        }
        for (j, c) in text[i..word_end].char_indices() {
            let w = char_width(c);
            if used > 0 && used + w > cols {
                rows.push(row_start..i + j);
                row_start = i + j;
                used = 0;
            }
            used += w;
        }
        while chars.peek().is_some_and(|&(j, _)| j < word_end) {
            chars.next();
        }
    }
    rows.push(row_start..text.len());
    rows
}

impl Doc {
    pub fn new(lines: Vec<DocLine>) -> Self {
        Self {
            lines,
            wrapped: RefCell::new(None),
        }
    }

    /// A document of `text`'s lines, numbered, all of one kind.
    pub fn numbered(text: &str, kind: LineKind) -> Self {
        Self::new(
            text.split('\n')
                .enumerate()
                .map(|(i, line)| DocLine {
                    text: visible(line),
                    kind,
                    number: Some(i + 1),
                    mark: None,
                })
                .collect(),
        )
    }

    /// Unnumbered lines of one kind.
    pub fn plain<'a>(lines: impl IntoIterator<Item = &'a str>, kind: LineKind) -> Self {
        let mut doc = Self::default();
        for line in lines {
            doc.push(line, kind);
        }
        doc
    }

    /// Appends unnumbered lines (split on `\n`).
    pub fn push(&mut self, text: &str, kind: LineKind) {
        for line in text.split('\n') {
            self.lines.push(DocLine {
                text: visible(line),
                kind,
                number: None,
                mark: None,
            });
        }
        self.wrapped.replace(None);
    }

    /// The rows of the whole document wrapped at `cols` (cached).
    pub fn with_rows<T>(&self, cols: usize, f: impl FnOnce(&[Row]) -> T) -> T {
        let mut cache = self.wrapped.borrow_mut();
        if cache.as_ref().is_none_or(|(c, _)| *c != cols) {
            let mut rows = Vec::new();
            for (n, line) in self.lines.iter().enumerate() {
                for (k, range) in wrap_line(&line.text, cols).into_iter().enumerate() {
                    rows.push(Row {
                        line: n,
                        start: range.start,
                        end: range.end,
                        continued: k > 0,
                    });
                }
            }
            *cache = Some((cols, rows));
        }
        let rows = cache.as_ref().map(|(_, r)| r.as_slice()).unwrap_or(&[]);
        f(rows)
    }

    /// Width of the gutter: line numbers and a marker, or only the
    /// continuation marker for unnumbered documents.
    pub fn gutter_width(&self) -> usize {
        let last = self.lines.iter().rev().find_map(|l| l.number);
        last.map_or(2, |n| n.to_string().len().max(2) + 2)
    }

    /// Columns left for text in an area `cols` wide.
    pub fn text_cols(&self, cols: u16) -> usize {
        usize::from(cols).saturating_sub(self.gutter_width()).max(1)
    }

    /// Number of screen rows at `cols`.
    pub fn row_count(&self, cols: usize) -> usize {
        self.with_rows(cols, <[Row]>::len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(text: &str, cols: usize) -> Vec<&str> {
        wrap_line(text, cols)
            .into_iter()
            .map(|r| &text[r])
            .collect()
    }

    #[test]
    fn wrapping_keeps_every_character_in_order() {
        let text = "Full sorted result stored at: /tmp/x/session-abc/0123-glob.txt. Use read";
        for cols in 1..80 {
            assert_eq!(rows(text, cols).concat(), text, "cols {cols}");
            for row in rows(text, cols) {
                assert!(width(row) <= cols, "{row:?} at {cols}");
            }
        }
    }

    #[test]
    fn words_move_whole_to_the_next_row_when_they_fit_there() {
        assert_eq!(rows("abc defgh ij", 6), ["abc ", "defgh ", "ij"]);
        assert_eq!(rows("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(rows("", 4), [""]);
        assert_eq!(rows("a  b", 2), ["a ", " b"]);
    }

    #[test]
    fn wide_characters_never_straddle_a_row_edge() {
        assert_eq!(rows("日本語", 4), ["日本", "語"]);
    }

    #[test]
    fn control_characters_become_visible_single_cells() {
        assert_eq!(visible("a\tb\rc\u{7f}"), "a\u{2409}b\u{240d}c\u{2421}");
        let doc = Doc::numbered("x\ty\n\nz", LineKind::Body);
        assert_eq!(doc.lines.len(), 3);
        assert_eq!(doc.lines[0].text, "x\u{2409}y");
        assert_eq!(doc.lines[2].number, Some(3));
    }

    #[test]
    fn row_count_follows_the_width() {
        let doc = Doc::numbered("aaaa bbbb\ncc", LineKind::Body);
        assert_eq!(doc.row_count(20), 2);
        // "aaaa", " " (the space that did not fit), "bbbb", "cc"
        assert_eq!(doc.row_count(4), 4);
        assert_eq!(doc.row_count(20), 2);
    }
}
