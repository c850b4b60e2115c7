//! The one home of the `tools/call` result the server sends: a tool
//! result's text as one text content block, its `isError`, and under
//! `_meta` [`RESULT_META_KEY`] the error's `{name, code}`, the spill's
//! `{locator, bytes}` and the duration. The live server, the replay server
//! and `workbench call --host` (which hands it to the host lenses) all
//! build it here.

use fs_search_engine::ToolResult;
use rmcp::model::{CallToolResult, ContentBlock, MetaObject};
use serde_json::{Value, json};

use fs_search_lens::ToolResultInput;

/// The `_meta` key of a call result's error, spill and duration.
pub(crate) const RESULT_META_KEY: &str = "fs-search-workbench/result";

/// The `tools/call` result of a tool result's parts: `error` and `spill`
/// as `_meta` carries them (null when absent).
pub(crate) fn call_tool_result(
    text: String,
    is_error: bool,
    error: Value,
    spill: Value,
    duration_ms: f64,
) -> CallToolResult {
    let content = vec![ContentBlock::text(text)];
    let mut out = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    let mut meta = MetaObject::new();
    meta.0.insert(
        RESULT_META_KEY.to_owned(),
        json!({
            "error": error,
            "spill": spill,
            "durationMs": (duration_ms * 1000.0).round() / 1000.0,
        }),
    );
    out.meta = Some(meta);
    out
}

/// The `tools/call` result of an engine result that took `duration_ms`.
pub fn of_tool_result(result: &ToolResult, duration_ms: f64) -> CallToolResult {
    let error = result.error.as_ref().map_or(
        Value::Null,
        |e| json!({"name": e.name(), "code": e.code_str()}),
    );
    let spill = result.spill.as_ref().map_or(
        Value::Null,
        |s| json!({"locator": s.locator, "bytes": s.bytes}),
    );
    call_tool_result(
        result.text.clone(),
        result.is_error,
        error,
        spill,
        duration_ms,
    )
}

/// What a host receives of `result`, the answer to `tool` called with
/// `args`: its text blocks (the server sends one; several are joined with
/// a newline) and its `isError`, for the host lenses.
pub fn lens_input(result: &CallToolResult, tool: &str, args: &Value) -> ToolResultInput {
    let text = result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    let duration_secs = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(RESULT_META_KEY))
        .and_then(|v| v.get("durationMs"))
        .and_then(Value::as_f64)
        .map(|ms| ms / 1000.0);
    ToolResultInput {
        tool: tool.to_owned(),
        args: args.clone(),
        text,
        is_error: result.is_error == Some(true),
        duration_secs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_result_carries_one_text_block_and_its_meta() {
        let result = call_tool_result(
            "Found 1 match".to_owned(),
            false,
            Value::Null,
            Value::Null,
            1.5,
        );
        let value = serde_json::to_value(&result).unwrap();
        assert_eq!(
            value["content"],
            json!([{"type": "text", "text": "Found 1 match"}])
        );
        assert_eq!(value["isError"], json!(false));
        assert_eq!(value["_meta"][RESULT_META_KEY]["durationMs"], json!(1.5));
    }

    #[test]
    fn the_lens_input_is_the_text_the_error_flag_and_the_duration() {
        let result = call_tool_result("bad".to_owned(), true, Value::Null, Value::Null, 250.0);
        let input = lens_input(&result, "grep", &json!({"pattern": "x"}));
        assert_eq!(input.text, "bad");
        assert!(input.is_error);
        assert_eq!(input.duration_secs, Some(0.25));
    }
}
