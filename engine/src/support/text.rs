//! ECMAScript string helpers the contract pins: `String.prototype.trim`'s
//! whitespace set, and UTF-8-safe prefix cutting by byte budget.

/// True for the characters ECMAScript's `trim` removes: WhiteSpace
/// (TAB, VT, FF, SP, NBSP, ZWNBSP U+FEFF, every `Zs`) and LineTerminator
/// (LF, CR, U+2028, U+2029). Unlike `char::is_whitespace`, U+0085 is kept
/// and U+FEFF is removed.
pub(crate) fn is_ecma_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'
            | '\u{000A}'
            | '\u{000B}'
            | '\u{000C}'
            | '\u{000D}'
            | '\u{0020}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// ECMAScript `String.prototype.trim`.
pub(crate) fn ecma_trim(s: &str) -> &str {
    s.trim_matches(is_ecma_whitespace)
}

/// True when `s` is empty after [`ecma_trim`].
pub(crate) fn is_blank(s: &str) -> bool {
    s.chars().all(is_ecma_whitespace)
}

/// The longest prefix of whole characters whose UTF-8 length is at most
/// `max_bytes`.
pub(crate) fn utf8_prefix(s: &str, max_bytes: usize) -> &str {
    if s.len() <= max_bytes {
        return s;
    }
    let mut end = max_bytes;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_follows_ecmascript_not_rust() {
        assert_eq!(ecma_trim("\u{FEFF} a \u{2028}"), "a");
        assert_eq!(ecma_trim("\u{0085}a\u{0085}"), "\u{0085}a\u{0085}");
        assert!(is_blank(" \t\n\r\u{000B}\u{000C}\u{00A0}\u{3000}"));
        assert!(!is_blank("\u{0085}"));
        assert!(is_blank(""));
    }

    #[test]
    fn utf8_prefix_never_splits_a_character() {
        assert_eq!(utf8_prefix("aéaéaéaé", 7), "aéaéa");
        assert_eq!(utf8_prefix("é", 1), "");
        assert_eq!(utf8_prefix("short", 100), "short");
    }
}
