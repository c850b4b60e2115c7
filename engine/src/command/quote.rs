//! Shell quoting: the security boundary. Every model value (and every
//! constant glob) enters a command line only through [`single_quote`].

/// Wraps `value` in single quotes, rewriting each `'` as `'\''`, so that
/// POSIX shells read the result as one literal word. Nothing else is
/// escaped or altered; the empty string becomes `''`.
pub fn single_quote(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for (i, part) in value.split('\'').enumerate() {
        if i > 0 {
            out.push_str("'\\''");
        }
        out.push_str(part);
    }
    out.push('\'');
    out
}

#[cfg(test)]
mod tests {
    use super::single_quote;

    /// CONTRACT §10.17 Q1
    #[test]
    fn wraps_a_plain_value_in_single_quotes() {
        assert_eq!(single_quote("abc"), "'abc'");
    }

    /// CONTRACT §10.17 Q2
    #[test]
    fn rewrites_embedded_single_quotes() {
        assert_eq!(single_quote("a'b"), "'a'\\''b'");
        assert_eq!(single_quote("''"), "''\\'''\\'''");
        assert_eq!(single_quote(""), "''");
    }
}
