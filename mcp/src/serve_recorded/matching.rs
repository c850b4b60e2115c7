//! When a call matches a recorded one, and how close it comes when it
//! does not. A call matches a record with the same tool name and
//! arguments equal as JSON values: object key order does not matter, nor
//! how a number is spelled (`1`, `1.0` and `1e0` are one number), while
//! strings, arrays (in order), booleans and null compare as they are.

use serde_json::{Map, Number, Value};

/// How far a recorded call is from a call: calls of another tool come
/// after every call of the same tool, then fewer differing arguments
/// first, then the arguments most like the call's (fewer edits between
/// the differing values' canonical texts, [`fs_search_process::edit_distance`]).
pub(crate) type Distance = (bool, usize, usize);

/// The canonical text of `value`: object keys sorted, every number
/// written one way. Two values match when their canonical texts are equal.
pub(crate) fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

fn write(value: &Value, out: &mut String) {
    match value {
        Value::Number(n) => out.push_str(&number(n)),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, key) in sorted_keys(map).into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                if let Some(item) = map.get(key) {
                    write(item, out);
                }
            }
            out.push('}');
        }
        Value::Null | Value::Bool(_) | Value::String(_) => out.push_str(&value.to_string()),
    }
}

fn sorted_keys(map: &Map<String, Value>) -> Vec<&String> {
    let mut keys: Vec<&String> = map.keys().collect();
    keys.sort();
    keys
}

/// A number's one spelling: an integral value as an integer, any other
/// as the shortest text of its `f64`.
fn number(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    // Integral floats within 64 bits are written as the integer they are.
    if f.fract() == 0.0 && f.abs() < 2f64.powi(63) {
        return (f as i64).to_string();
    }
    if f.fract() == 0.0 && (0.0..2f64.powi(64)).contains(&f) {
        return (f as u64).to_string();
    }
    Value::from(f).to_string()
}

/// How far the recorded call `(tool, args)` is from the call
/// `(want_tool, want_args)`: whether the tool differs, how many
/// arguments differ (a key on one side only, or another value), counting
/// non-object arguments as one, and how many edits the differing values
/// are apart (a value on one side only: its whole canonical text).
pub(crate) fn distance(want_tool: &str, want_args: &Value, tool: &str, args: &Value) -> Distance {
    let (differing, edits) = match (want_args, args) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            keys.into_iter()
                .filter_map(|key| value_edits(a.get(key), b.get(key)))
                .fold((0, 0), |(count, sum), edits| (count + 1, sum + edits))
        }
        (a, b) => value_edits(Some(a), Some(b)).map_or((0, 0), |edits| (1, edits)),
    };
    (want_tool != tool, differing, edits)
}

/// The edits between two values of one argument, `None` when they match.
fn value_edits(want: Option<&Value>, recorded: Option<&Value>) -> Option<usize> {
    let text = |value: Option<&Value>| value.map(canonical).unwrap_or_default();
    let (want, recorded) = (text(want), text(recorded));
    (want != recorded).then(|| fs_search_process::edit_distance(&want, &recorded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(text: &str) -> Value {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn key_order_and_number_spelling_do_not_change_the_canonical_text() {
        let a = parse(r#"{"pattern":"x","n":1,"deep":{"b":[1,2.5],"a":null}}"#);
        let b = parse(r#"{"deep":{"a":null,"b":[1.0,25e-1]},"n":1e0,"pattern":"x"}"#);
        assert_eq!(canonical(&a), canonical(&b));
        assert_eq!(
            canonical(&a),
            r#"{"deep":{"a":null,"b":[1,2.5]},"n":1,"pattern":"x"}"#
        );
        assert_eq!(canonical(&parse("-0.0")), "0");
        assert_eq!(
            canonical(&parse("18446744073709551615")),
            "18446744073709551615"
        );
    }

    #[test]
    fn other_values_types_and_array_orders_do_not_match() {
        for (a, b) in [
            (r#"{"n":1}"#, r#"{"n":"1"}"#),
            (r#"{"n":1}"#, r#"{"n":1.5}"#),
            (r#"[1,2]"#, r#"[2,1]"#),
            (r#"{"a":1}"#, r#"{"a":1,"b":null}"#),
            (r#"{"p":"x"}"#, r#"{"p":"X"}"#),
            (r#"{"b":true}"#, r#"{"b":1}"#),
        ] {
            assert_ne!(canonical(&parse(a)), canonical(&parse(b)), "{a} {b}");
        }
    }

    #[test]
    fn distance_counts_differing_arguments_after_the_tool() {
        let want = parse(r#"{"pattern":"needle","include":"*.md"}"#);
        assert_eq!(distance("grep", &want, "grep", &want), (false, 0, 0));
        let one_off = parse(r#"{"pattern":"needle"}"#);
        // `"*.md"` (six characters with its quotes) is on one side only.
        assert_eq!(distance("grep", &want, "grep", &one_off), (false, 1, 6));
        let two_off = parse(r#"{"pattern":"other","path":"src"}"#);
        assert_eq!(distance("grep", &want, "grep", &two_off).1, 3);
        assert_eq!(distance("grep", &want, "glob", &want), (true, 0, 0));
        assert!(distance("grep", &want, "glob", &want) > distance("grep", &want, "grep", &two_off));
        assert_eq!(distance("grep", &want, "grep", &json!("x")).1, 1);
    }

    #[test]
    fn among_equally_many_differing_arguments_the_most_similar_values_come_first() {
        let want = parse(r#"{"pattern":"fn parse_config"}"#);
        let far = parse(r#"{"pattern":"TODO"}"#);
        let near = parse(r#"{"pattern":"fn parse_conf"}"#);
        let (d_far, d_near) = (
            distance("grep", &want, "grep", &far),
            distance("grep", &want, "grep", &near),
        );
        assert_eq!((d_far.1, d_near.1), (1, 1));
        assert_eq!(d_near.2, 2);
        assert!(d_near < d_far, "{d_near:?} {d_far:?}");
    }
}
