//! The JavaScript string semantics the Node.js hosts (opencode, Gemini
//! CLI, Qwen Code, Claude Code) cut with: `length` and `slice` count UTF-16
//! code units, `toLocaleString()` groups digits (en-US), `Buffer.byteLength`
//! counts UTF-8 bytes. A slice that splits a surrogate pair leaves a lone
//! surrogate, which becomes U+FFFD once the text is sent as UTF-8.

use std::ops::Range;

/// A string seen as JavaScript sees it: UTF-16 code units, with the UTF-8
/// byte offset of each unit's character.
pub(crate) struct JsString<'a> {
    text: &'a str,
    /// For each code unit: the byte offset of its character in `text`.
    unit_byte: Vec<usize>,
}

impl<'a> JsString<'a> {
    pub(crate) fn new(text: &'a str) -> Self {
        let mut unit_byte = Vec::with_capacity(text.len());
        for (index, ch) in text.char_indices() {
            for _ in 0..ch.len_utf16() {
                unit_byte.push(index);
            }
        }
        Self { text, unit_byte }
    }

    /// `length`.
    pub(crate) fn len(&self) -> usize {
        self.unit_byte.len()
    }

    /// True when code unit `unit` is the second half of a surrogate pair.
    fn second_half(&self, unit: usize) -> bool {
        unit > 0 && unit < self.unit_byte.len() && self.unit_byte[unit - 1] == self.unit_byte[unit]
    }

    /// The byte offset of the character code unit `unit` belongs to (the
    /// text's end past the last unit).
    fn byte_at(&self, unit: usize) -> usize {
        self.unit_byte.get(unit).copied().unwrap_or(self.text.len())
    }

    /// `slice(start, end)` (both in code units, clamped): the text as it
    /// reaches the model, and the bytes of `text` it keeps whole.
    pub(crate) fn slice(&self, start: usize, end: usize) -> (String, Range<usize>) {
        let end = end.min(self.len());
        let start = start.min(end);
        let lead = start < end && self.second_half(start);
        let trail = start < end && self.second_half(end);
        let whole_start = if lead {
            let byte = self.byte_at(start);
            byte + self.text[byte..].chars().next().map_or(0, char::len_utf8)
        } else {
            self.byte_at(start)
        };
        let whole_end = self.byte_at(end).max(whole_start);
        let mut out = String::new();
        if lead {
            out.push('\u{fffd}');
        }
        out.push_str(&self.text[whole_start..whole_end]);
        if trail && !(lead && end == start + 1) {
            out.push('\u{fffd}');
        }
        (out, whole_start..whole_end)
    }
}

/// `n.toLocaleString()` in the en-US locale: digits grouped by threes
/// with commas.
pub(crate) fn locale_number(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// `Math.floor(n * factor)`, with the double rounding JavaScript does.
pub(crate) fn floor_times(n: usize, factor: f64) -> usize {
    let product = (n as f64 * factor).floor();
    if product <= 0.0 { 0 } else { product as usize }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn length_counts_utf16_units() {
        assert_eq!(JsString::new("aé😀").len(), 4);
    }

    #[test]
    fn a_slice_through_a_pair_keeps_a_replacement_character() {
        let s = JsString::new("a😀b");
        assert_eq!(s.slice(0, 2), ("a\u{fffd}".to_owned(), 0..1));
        assert_eq!(s.slice(2, 4), ("\u{fffd}b".to_owned(), 5..6));
        assert_eq!(s.slice(0, 3), ("a😀".to_owned(), 0..5));
        assert_eq!(s.slice(1, 4), ("😀b".to_owned(), 1..6));
    }

    #[test]
    fn numbers_are_grouped_as_en_us_groups_them() {
        assert_eq!(locale_number(800), "800");
        assert_eq!(locale_number(3200), "3,200");
        assert_eq!(locale_number(46000), "46,000");
        assert_eq!(locale_number(1234567), "1,234,567");
    }

    #[test]
    fn floor_times_matches_javascript_s_doubles() {
        assert_eq!(floor_times(40_000, 0.2), 8000);
        assert_eq!(floor_times(10, 0.2), 2);
        assert_eq!(floor_times(4000, 0.2), 800);
    }
}
