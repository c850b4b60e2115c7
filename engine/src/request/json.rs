//! JSON text parsed the way the reference's `JSON.parse` accepts it, for
//! everything a model or a user sends as arguments: the model's argument
//! text of [`Registry::call_json`](crate::Registry::call_json), and every
//! front end's (the workbench's `call --args`, MCP messages, the TUI's
//! argument editor), so the same text means the same call everywhere.
//!
//! Two differences from `serde_json`'s defaults: a `\uXXXX` escape of a
//! lone UTF-16 surrogate (which JavaScript keeps in its string) becomes
//! U+FFFD, the replacement character (a Rust string cannot hold it; rg
//! would get the replacement character from the reference's UTF-8
//! encoding too); and nesting is bounded by [`MAX_DEPTH`] instead of
//! serde_json's 128 levels, with the parser's stack grown on the heap.

use serde::Deserialize;
use serde_json::Value;
use thiserror::Error;

/// The deepest nesting of arrays and objects accepted.
pub const MAX_DEPTH: usize = 10_000;

/// Why a text is not acceptable JSON.
#[derive(Debug, Error)]
pub enum JsonError {
    /// Arrays and objects nest deeper than [`MAX_DEPTH`].
    #[error("arrays and objects nest deeper than {MAX_DEPTH} levels")]
    TooDeep,
    /// Not JSON (serde_json's judgement, with its line and column).
    #[error("{0}")]
    Syntax(#[from] serde_json::Error),
}

/// Parses `text` as `JSON.parse` would (see the module docs).
pub fn parse(text: &str) -> Result<Value, JsonError> {
    let text = sanitise(text.as_bytes())?;
    parse_sanitised(&text)
}

/// Parses raw bytes (which must be UTF-8, as JSON-RPC messages are).
pub fn parse_slice(bytes: &[u8]) -> Result<Value, JsonError> {
    parse_sanitised(&sanitise(bytes)?)
}

fn parse_sanitised(bytes: &[u8]) -> Result<Value, JsonError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    let value = Value::deserialize(serde_stacker::Deserializer::new(&mut de))?;
    de.end()?;
    Ok(value)
}

fn hex4(bytes: &[u8]) -> Option<u16> {
    let text = std::str::from_utf8(bytes.get(..4)?).ok()?;
    u16::from_str_radix(text, 16).ok()
}

/// The text with every lone-surrogate escape replaced by `\ufffd`; fails
/// when nesting exceeds [`MAX_DEPTH`]. Anything else (syntax errors
/// included) is left for the parser to judge.
fn sanitise(bytes: &[u8]) -> Result<Vec<u8>, JsonError> {
    let mut out = bytes.to_vec();
    let (mut depth, mut in_string, mut i) = (0usize, false, 0usize);
    while i < bytes.len() {
        let b = bytes[i];
        if !in_string {
            match b {
                b'"' => in_string = true,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > MAX_DEPTH {
                        return Err(JsonError::TooDeep);
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            i += 1;
            continue;
        }
        match b {
            b'"' => {
                in_string = false;
                i += 1;
            }
            b'\\' if bytes.get(i + 1) == Some(&b'u') => {
                let Some(unit) = hex4(&bytes[i + 2..]) else {
                    i += 2;
                    continue;
                };
                let is_high = (0xD800..0xDC00).contains(&unit);
                let is_low = (0xDC00..0xE000).contains(&unit);
                let paired_low = bytes.get(i + 6) == Some(&b'\\')
                    && bytes.get(i + 7) == Some(&b'u')
                    && bytes
                        .get(i + 8..)
                        .and_then(hex4)
                        .is_some_and(|next| (0xDC00..0xE000).contains(&next));
                if is_high && paired_low {
                    i += 12;
                    continue;
                }
                if is_high || is_low {
                    out[i + 2..i + 6].copy_from_slice(b"fffd");
                }
                i += 6;
            }
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lone_surrogates_become_the_replacement_character_and_pairs_stay() {
        let v = parse(r#"{"a":"\ud800","b":"x\udc00y","c":"\ud83d\ude00","d":"\ud800\ud800"}"#)
            .unwrap();
        assert_eq!(v["a"], "\u{fffd}");
        assert_eq!(v["b"], "x\u{fffd}y");
        assert_eq!(v["c"], "\u{1f600}");
        assert_eq!(v["d"], "\u{fffd}\u{fffd}");
        // Escaped backslashes and quotes are not escapes of `u`.
        let v = parse(r#"["\\ud800", "\"\ud800"]"#).unwrap();
        assert_eq!(v[0], "\\ud800");
        assert_eq!(v[1], "\"\u{fffd}");
    }

    #[test]
    fn nesting_is_accepted_up_to_the_bound_and_refused_beyond_it() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(parse(&deep(MAX_DEPTH)).is_ok());
        let err = parse(&deep(MAX_DEPTH + 1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "arrays and objects nest deeper than 10000 levels"
        );
        // Brackets inside strings do not count.
        assert!(parse(&format!("\"{}\"", "[".repeat(MAX_DEPTH + 1))).is_ok());
        assert!(parse("[1,").is_err());
    }
}
