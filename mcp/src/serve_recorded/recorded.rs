//! The recorded answers `workbench mcp --replay` serves: every record of
//! the transcripts (in command-line order, then file order) keyed by tool
//! and canonical arguments ([`super::matching`]). A call that matches is
//! answered with the next record of its key in recorded order, the last
//! one repeating once all were served; the position is the server's, shared
//! by every connection and session (so an answer does not depend on how a
//! client connects, nor on the protocol revision). A call that matches
//! none gets, with [`OnMiss::Error`], a tool error result naming the
//! closest recorded calls, and with [`OnMiss::Live`] no answer here: it
//! runs on the engine.
//!
//! A recorded answer is the record's model-visible text (its `<TREE>`,
//! `<SPILL>` and `<RAND>` placeholders as recorded: the same bytes on
//! every machine), `isError`, and under `_meta` the live server's key with
//! the recorded `error` and `spill` and `durationMs` 0 (a transcript keeps
//! no duration). The record's warnings go to the client as a live call's do.

use std::collections::HashMap;
use std::sync::Mutex;

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use super::matching::{canonical, distance};
use crate::OnMiss;
use crate::answers::{AnswerSource, SourcedAnswer};
use fs_search_transcript::{Outcome, RecordedCall};

/// How many recorded calls a miss names at most.
pub(crate) const CLOSEST_NAMED: usize = 3;

/// The `_meta` error name of a call no record matches.
pub(crate) const MISS_ERROR_NAME: &str = "NoRecordedCall";

/// Characters of a call's arguments a miss message shows.
const ARGS_SHOWN: usize = 200;

/// A tool name and canonical arguments.
type Key = (String, String);

/// The recorded calls and the position served in each key.
pub(crate) struct RecordedCalls {
    calls: Vec<RecordedCall>,
    by_key: HashMap<Key, Vec<usize>>,
    next: Mutex<HashMap<Key, usize>>,
    on_miss: OnMiss,
}

impl RecordedCalls {
    pub(crate) fn new(calls: Vec<RecordedCall>, on_miss: OnMiss) -> Self {
        let mut by_key: HashMap<Key, Vec<usize>> = HashMap::new();
        for (i, recorded) in calls.iter().enumerate() {
            by_key
                .entry((recorded.call.tool.clone(), canonical(&recorded.call.args)))
                .or_default()
                .push(i);
        }
        Self {
            calls,
            by_key,
            next: Mutex::new(HashMap::new()),
            on_miss,
        }
    }

    /// The record that answers `tool` with `args` now (advancing its
    /// key's position), if any matches.
    pub(crate) fn next_match(&self, tool: &str, args: &Value) -> Option<&RecordedCall> {
        let key = (tool.to_owned(), canonical(args));
        let records = self.by_key.get(&key)?;
        let mut next = match self.next.lock() {
            Ok(next) => next,
            Err(poisoned) => poisoned.into_inner(),
        };
        let position = next.entry(key).or_insert(0);
        let index = records.get(*position).or_else(|| records.last())?;
        if *position < records.len() {
            *position += 1;
        }
        self.calls.get(*index)
    }

    /// The recorded calls closest to `tool` with `args`, closest first (in
    /// recorded order among equals), one per distinct call.
    pub(crate) fn closest(&self, tool: &str, args: &Value) -> Vec<&RecordedCall> {
        let mut seen = std::collections::HashSet::new();
        let mut ranked: Vec<(_, usize, &RecordedCall)> = self
            .calls
            .iter()
            .enumerate()
            .filter(|(_, c)| seen.insert((c.call.tool.clone(), canonical(&c.call.args))))
            .map(|(i, c)| (distance(tool, args, &c.call.tool, &c.call.args), i, c))
            .collect();
        ranked.sort_by_key(|(d, i, _)| (*d, *i));
        ranked
            .into_iter()
            .take(CLOSEST_NAMED)
            .map(|(_, _, c)| c)
            .collect()
    }

    /// The model-visible text of a miss: the call, and the closest
    /// recorded calls with their record names and places.
    pub(crate) fn miss_text(&self, tool: &str, args: &Value) -> String {
        let mut text = format!("No recorded call matches {tool} {}", brief(args));
        let closest = self.closest(tool, args);
        if closest.is_empty() {
            text.push_str(": the transcripts hold no calls.");
            return text;
        }
        text.push_str(". The closest recorded calls:");
        for recorded in closest {
            text.push_str(&format!(
                "\n- {} {} (record \"{}\", {}:{})",
                recorded.call.tool,
                brief(&recorded.call.args),
                recorded.call.name,
                recorded.file.display(),
                recorded.line
            ));
        }
        text
    }
}

impl AnswerSource for RecordedCalls {
    fn answer(&self, tool: &str, args: &Value) -> Option<SourcedAnswer> {
        if let Some(recorded) = self.next_match(tool, args) {
            tracing::info!(
                tool,
                record = recorded.call.name,
                file = ?recorded.file,
                line = recorded.line,
                "answered from the recording"
            );
            return Some(recorded_answer(&recorded.outcome));
        }
        match self.on_miss {
            OnMiss::Live => {
                tracing::info!(tool, "no recorded call matches: running it live");
                None
            }
            OnMiss::Error => {
                tracing::info!(tool, "no recorded call matches");
                Some(SourcedAnswer {
                    result: result(
                        self.miss_text(tool, args),
                        true,
                        json!({"name": MISS_ERROR_NAME, "code": null}),
                        Value::Null,
                    ),
                    warnings: Vec::new(),
                })
            }
        }
    }
}

/// `args` as compact JSON, cut after [`ARGS_SHOWN`] characters.
fn brief(args: &Value) -> String {
    let text = args.to_string();
    match text.char_indices().nth(ARGS_SHOWN) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text,
    }
}

/// The answer a record gives.
pub(crate) fn recorded_answer(outcome: &Outcome) -> SourcedAnswer {
    let error = outcome
        .error
        .as_ref()
        .map_or(Value::Null, |e| json!({"name": e.name, "code": e.code}));
    let spill = outcome.spill.as_ref().map_or(
        Value::Null,
        |s| json!({"locator": s.locator, "bytes": s.bytes}),
    );
    SourcedAnswer {
        result: result(outcome.text.clone(), outcome.is_error, error, spill),
        warnings: outcome.warnings.clone(),
    }
}

/// A `tools/call` result shaped as the live server's (one text item,
/// `isError`, `_meta` under [`crate::result::RESULT_META_KEY`]).
fn result(text: String, is_error: bool, error: Value, spill: Value) -> CallToolResult {
    crate::result::call_tool_result(text, is_error, error, spill, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::RESULT_META_KEY;
    use fs_search_transcript::{
        Call, CallOptions, Header, OutcomeError, OutcomeSpill, TranscriptEnv,
    };
    use std::sync::Arc;

    fn outcome(text: &str) -> Outcome {
        Outcome {
            is_error: false,
            error: None,
            spill: None,
            warnings: Vec::new(),
            text: text.to_owned(),
            tokens: None,
        }
    }

    fn call(line: usize, tool: &str, args: Value, text: &str) -> RecordedCall {
        RecordedCall {
            file: "t.jsonl".into(),
            line,
            header: Arc::new(Header {
                contract: Default::default(),
                tree: ".".to_owned(),
                config: json!({}),
                env: TranscriptEnv {
                    rg: "ripgrep 13.0.0".to_owned(),
                    ripgrep_config: Vec::new(),
                    executor: None,
                },
            }),
            call: Call {
                name: format!("r{line}"),
                tool: tool.to_owned(),
                args,
                options: CallOptions::default(),
            },
            outcome: outcome(text),
        }
    }

    fn text_of(answer: &SourcedAnswer) -> String {
        let value = serde_json::to_value(&answer.result).unwrap();
        value["content"][0]["text"].as_str().unwrap().to_owned()
    }

    fn sample(on_miss: OnMiss) -> RecordedCalls {
        RecordedCalls::new(
            vec![
                call(2, "grep", json!({"pattern": "a", "n": 1}), "first"),
                call(6, "glob", json!({"pattern": "a"}), "glob a"),
                call(9, "grep", json!({"n": 1.0, "pattern": "a"}), "second"),
                call(12, "grep", json!({"pattern": "b"}), "b"),
            ],
            on_miss,
        )
    }

    #[test]
    fn equal_arguments_are_served_in_recorded_order_then_the_last_repeats() {
        let calls = sample(OnMiss::Error);
        let texts: Vec<String> = (0..4)
            .map(|_| {
                text_of(
                    &calls
                        .answer("grep", &json!({"n": 1e0, "pattern": "a"}))
                        .unwrap(),
                )
            })
            .collect();
        assert_eq!(texts, ["first", "second", "second", "second"]);
        // Another key keeps its own position.
        assert_eq!(
            text_of(&calls.answer("glob", &json!({"pattern": "a"})).unwrap()),
            "glob a"
        );
    }

    #[test]
    fn a_miss_is_a_tool_error_naming_the_closest_recorded_calls_or_runs_live() {
        let calls = sample(OnMiss::Error);
        let answer = calls.answer("grep", &json!({"pattern": "c"})).unwrap();
        let value = serde_json::to_value(&answer.result).unwrap();
        assert_eq!(value["isError"], true);
        assert_eq!(
            value["_meta"][RESULT_META_KEY]["error"]["name"],
            MISS_ERROR_NAME
        );
        assert_eq!(
            text_of(&answer),
            "No recorded call matches grep {\"pattern\":\"c\"}. The closest recorded calls:\n\
             - grep {\"pattern\":\"b\"} (record \"r12\", t.jsonl:12)\n\
             - grep {\"pattern\":\"a\",\"n\":1} (record \"r2\", t.jsonl:2)\n\
             - glob {\"pattern\":\"a\"} (record \"r6\", t.jsonl:6)"
        );
        assert!(
            sample(OnMiss::Live)
                .answer("grep", &json!({"pattern": "c"}))
                .is_none()
        );
        let empty = RecordedCalls::new(Vec::new(), OnMiss::Error);
        assert_eq!(
            text_of(&empty.answer("glob", &json!({})).unwrap()),
            "No recorded call matches glob {}: the transcripts hold no calls."
        );
    }

    #[test]
    fn the_closest_recorded_calls_rank_by_how_like_the_requested_arguments_they_are() {
        let calls = RecordedCalls::new(
            vec![
                call(2, "grep", json!({"pattern": "TODO"}), "todo"),
                call(3, "grep", json!({"pattern": "fn main"}), "main"),
                call(5, "grep", json!({"pattern": "fn parse_conf"}), "conf"),
            ],
            OnMiss::Error,
        );
        let names: Vec<&str> = calls
            .closest("grep", &json!({"pattern": "fn parse_config"}))
            .iter()
            .map(|c| c.call.name.as_str())
            .collect();
        assert_eq!(names, ["r5", "r3", "r2"]);
    }

    #[test]
    fn a_recorded_answer_carries_the_recorded_error_spill_and_warnings() {
        let mut recorded = outcome("saved to <SPILL>/x");
        recorded.is_error = true;
        recorded.error = Some(OutcomeError {
            name: Some("ToolError".into()),
            code: None,
        });
        recorded.spill = Some(OutcomeSpill {
            locator: "<SPILL>/x".into(),
            bytes: 9,
        });
        recorded.warnings = vec!["w".into()];
        let answer = recorded_answer(&recorded);
        let mut value = serde_json::to_value(&answer.result).unwrap();
        // rmcp's own key (for the 2026 revision) is the era layer's business.
        value.as_object_mut().unwrap().remove("resultType");
        assert_eq!(
            value,
            json!({
                "content": [{"type": "text", "text": "saved to <SPILL>/x"}],
                "isError": true,
                "_meta": {RESULT_META_KEY: {
                    "error": {"name": "ToolError", "code": null},
                    "spill": {"locator": "<SPILL>/x", "bytes": 9},
                    "durationMs": 0.0,
                }},
            })
        );
        assert_eq!(answer.warnings, ["w"]);
    }
}
