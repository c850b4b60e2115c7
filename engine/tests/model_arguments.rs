//! The model's raw argument text through `Registry::call_json`, parsed as
//! the reference's `JSON.parse` reads it (a lone surrogate escape becomes
//! U+FFFD; nesting is bounded), so an embedder gets for the same text
//! what the workbench's CLI, MCP server and TUI get.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use fs_search_engine::json::{JsonError, MAX_DEPTH};
use serde_json::json;
use support::*;

#[tokio::test]
async fn a_lone_surrogate_in_the_argument_text_reaches_rg_as_the_replacement_character() {
    let h = harness(json!({})).await;
    let exec = agent(Some("/w"));
    let raw = h
        .registry
        .call_json("grep", r#"{"pattern":"a\ud800b"}"#, &exec)
        .await
        .unwrap();
    let raw_command = h.bash.last_request().command;
    let parsed = h
        .call("grep", json!({"pattern": "a\u{fffd}b"}), &exec)
        .await;
    assert_eq!(raw.text, parsed.text);
    assert_eq!(raw_command, h.bash.last_request().command);
    assert!(raw_command.contains("'a\u{fffd}b'"), "{raw_command}");
}

#[tokio::test]
async fn arguments_nested_to_the_bound_are_checked_and_deeper_ones_are_refused() {
    let h = harness(json!({})).await;
    let exec = agent(Some("/w"));
    // The object itself is one level, so the pattern may nest one less.
    let nested = |levels: usize| {
        format!(
            r#"{{"pattern":{}{}}}"#,
            "[".repeat(levels),
            "]".repeat(levels)
        )
    };
    let result = h
        .registry
        .call_json("glob", &nested(MAX_DEPTH - 1), &exec)
        .await
        .unwrap();
    assert!(result.is_error);
    assert!(
        result.text.contains("\"pattern\" must be a string"),
        "{}",
        result.text
    );
    let refused = h
        .registry
        .call_json("glob", &nested(MAX_DEPTH), &exec)
        .await;
    assert!(matches!(refused, Err(JsonError::TooDeep)), "{refused:?}");
    assert_eq!(h.bash.runs(), 0);
}

#[tokio::test]
async fn argument_text_that_is_not_json_is_an_error_and_runs_nothing() {
    let h = harness(json!({})).await;
    let refused = h
        .registry
        .call_json("glob", r#"{"pattern":"#, &agent(Some("/w")))
        .await;
    assert!(matches!(refused, Err(JsonError::Syntax(_))), "{refused:?}");
    assert_eq!(h.bash.runs(), 0);
}
