//! The serialization counted for a tool definition.

use serde_json::Value;

/// The text whose tokens a tool definition costs: compact JSON (no
/// whitespace between tokens, non-ASCII characters as themselves, only the
/// escapes JSON requires) of the object `{name, description, parameters}`,
/// keys in that order, `parameters` with its keys in their given order
/// (the workspace builds `serde_json` with `preserve_order`). Other fields
/// of a definition, such as `timeoutMs`, are host policy the model never
/// sees and are not counted.
///
/// It equals Python's
/// `json.dumps({"name": n, "description": d, "parameters": p},
/// ensure_ascii=False, separators=(",", ":"))`, which `golden/generate.py`
/// uses and `tests/tokens/golden.rs` checks.
///
/// The real request wraps tool definitions in the model's chat template;
/// this is the definition's own share of it, the same for every
/// configuration, so differences between configurations are exact.
pub fn tool_definition_text(name: &str, description: &str, parameters: &Value) -> String {
    // `Value`'s `Display` is its compact JSON and cannot fail.
    format!(
        "{{\"name\":{},\"description\":{},\"parameters\":{}}}",
        Value::from(name),
        Value::from(description),
        parameters
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keys_in_order_compact_and_unescaped_non_ascii() {
        let parameters: Value = serde_json::from_str(
            r#"{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}},"required":["z"]}"#,
        )
        .unwrap();
        assert_eq!(
            tool_definition_text("glob", "Find \"files\" — fast\n", &parameters),
            r#"{"name":"glob","description":"Find \"files\" — fast\n","parameters":{"type":"object","properties":{"z":{"type":"string"},"a":{"type":"string"}},"required":["z"]}}"#
        );
        assert_eq!(
            tool_definition_text("t", "", &json!({})),
            r#"{"name":"t","description":"","parameters":{}}"#
        );
    }
}
