//! A host's framing step and the map back to the tool result: the text the
//! host builds around (or from) a result before it cuts, and for each
//! stretch of that text the stretch of the result it came from, so a cut
//! made in the framed text can be read back as what of the page survived.

use std::ops::Range;

/// One stretch of the framed text and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Piece {
    framed: Range<usize>,
    original: Range<usize>,
    /// The stretch was copied byte for byte (so part of it maps to part of
    /// the original); otherwise it is an escape or a replacement that
    /// stands for its original only whole.
    verbatim: bool,
}

/// The text after a host's framing, with its map back to the result.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Framed {
    text: String,
    pieces: Vec<Piece>,
}

impl Framed {
    /// The result's text as is (no framing).
    pub fn identity(original: &str) -> Self {
        let mut framed = Self::default();
        framed.copy(original, 0..original.len());
        framed
    }

    /// The framed text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Appends text the host adds (not from the result).
    pub fn push_added(&mut self, added: &str) {
        self.text.push_str(added);
    }

    /// Appends `original[range]` byte for byte.
    pub fn copy(&mut self, original: &str, range: Range<usize>) {
        let Some(slice) = original.get(range.clone()) else {
            return;
        };
        if slice.is_empty() {
            return;
        }
        let start = self.text.len();
        self.text.push_str(slice);
        // Adjacent verbatim pieces merge, so a long copy is one piece.
        if let Some(last) = self.pieces.last_mut()
            && last.verbatim
            && last.framed.end == start
            && last.original.end == range.start
        {
            last.framed.end = self.text.len();
            last.original.end = range.end;
            return;
        }
        self.pieces.push(Piece {
            framed: start..self.text.len(),
            original: range,
            verbatim: true,
        });
    }

    /// Appends `replacement`, which stands for `original_range` whole.
    pub fn replace(&mut self, replacement: &str, original_range: Range<usize>) {
        let start = self.text.len();
        self.text.push_str(replacement);
        self.pieces.push(Piece {
            framed: start..self.text.len(),
            original: original_range,
            verbatim: false,
        });
    }

    /// Appends `original` with every `needle` replaced by `replacement`
    /// (JavaScript's `replaceAll` with a string pattern).
    pub fn copy_replacing(&mut self, original: &str, needle: &str, replacement: &str) {
        let mut at = 0;
        for (start, _) in original.match_indices(needle) {
            self.copy(original, at..start);
            self.replace(replacement, start..start + needle.len());
            at = start + needle.len();
        }
        self.copy(original, at..original.len());
    }

    /// Appends `original` as the inside of a JSON string, escaped as
    /// `serde_json` (and `JSON.stringify`) escape it: `"`, `\` and the
    /// control characters, the rest as is.
    pub fn copy_json_escaped(&mut self, original: &str) {
        let mut at = 0;
        for (index, ch) in original.char_indices() {
            let escape = match ch {
                '"' => Some("\\\"".to_owned()),
                '\\' => Some("\\\\".to_owned()),
                '\n' => Some("\\n".to_owned()),
                '\r' => Some("\\r".to_owned()),
                '\t' => Some("\\t".to_owned()),
                '\u{8}' => Some("\\b".to_owned()),
                '\u{c}' => Some("\\f".to_owned()),
                c if (c as u32) < 0x20 => Some(format!("\\u{:04x}", c as u32)),
                _ => None,
            };
            if let Some(escape) = escape {
                self.copy(original, at..index);
                self.replace(&escape, index..index + ch.len_utf8());
                at = index + ch.len_utf8();
            }
        }
        self.copy(original, at..original.len());
    }

    /// The parts of the result that reach the model whole, given the
    /// parts of the framed text that do (`kept`, sorted, disjoint), as
    /// sorted byte ranges of the original.
    pub fn original_kept(&self, kept: &[Range<usize>]) -> Vec<Range<usize>> {
        let mut out: Vec<Range<usize>> = Vec::new();
        for piece in &self.pieces {
            for k in kept {
                let start = piece.framed.start.max(k.start);
                let end = piece.framed.end.min(k.end);
                if start >= end {
                    continue;
                }
                let range = if piece.verbatim {
                    let offset = piece.original.start;
                    (offset + start - piece.framed.start)..(offset + end - piece.framed.start)
                } else if start == piece.framed.start && end == piece.framed.end {
                    piece.original.clone()
                } else {
                    continue;
                };
                match out.last_mut() {
                    Some(last) if last.end == range.start => last.end = range.end,
                    _ => out.push(range),
                }
            }
        }
        out
    }
}

/// True when `range` lies inside one of `kept` (sorted, disjoint).
pub(crate) fn covered(kept: &[Range<usize>], range: &Range<usize>) -> bool {
    kept.iter()
        .any(|k| k.start <= range.start && range.end <= k.end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(range: Range<usize>) -> Vec<Range<usize>> {
        std::iter::once(range).collect()
    }

    #[test]
    fn json_escaping_is_serde_json_s() {
        let text = "a\"b\\c\nd\te\r\u{1}\u{8}\u{c}é😀/";
        let mut framed = Framed::default();
        framed.copy_json_escaped(text);
        let expected = serde_json::to_string(text).unwrap();
        assert_eq!(format!("\"{}\"", framed.text()), expected);
    }

    #[test]
    fn a_kept_escape_maps_back_to_its_character_and_a_split_one_does_not() {
        let mut framed = Framed::default();
        framed.push_added("[");
        framed.copy_json_escaped("ab\ncd");
        // framed: [ab\ncd  → bytes: '[' 0, a 1, b 2, '\\' 3, 'n' 4, c 5, d 6
        assert_eq!(framed.text(), "[ab\\ncd");
        assert_eq!(framed.original_kept(&one(0..7)), vec![0..5]);
        assert_eq!(framed.original_kept(&one(0..4)), vec![0..2]);
        assert_eq!(framed.original_kept(&one(4..7)), vec![3..5]);
    }

    #[test]
    fn replacements_stand_for_their_needle_whole() {
        let mut framed = Framed::default();
        framed.copy_replacing("x</t>y", "</t>", "&lt;/t&gt;");
        assert_eq!(framed.text(), "x&lt;/t&gt;y");
        assert_eq!(framed.original_kept(&one(0..12)), vec![0..6]);
        assert_eq!(framed.original_kept(&one(0..3)), vec![0..1]);
    }
}
