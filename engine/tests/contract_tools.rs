//! CONTRACT §10.1–§10.12 and §10.15 through the registry, with the fake
//! executor and fake spill store of §10.0 injecting rg's results.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use fs_search_engine::bash::{BashError, BashRunResult, CollectedOutput};
use fs_search_engine::helpers::{INJECT, PLUGIN_NAME};
use fs_search_engine::helpers::{present_glob_result, present_grep_result};
use fs_search_engine::value::ToolValue;
use fs_search_engine::{ExecContext, Host, LoadOutcome, Registry};
use serde_json::{Value, json};
use support::*;

fn schema_names(h: &Harness) -> Vec<String> {
    h.registry
        .tool_definitions()
        .into_iter()
        .map(|d| d.name)
        .collect()
}

fn section_names(h: &Harness) -> Vec<String> {
    h.registry
        .prompt_sections()
        .into_iter()
        .map(|s| s.name)
        .collect()
}

fn glob_paths(result: &fs_search_engine::ToolResult) -> Vec<String> {
    match &result.value {
        Some(ToolValue::Glob(v)) => v.paths.clone(),
        other => panic!("not a glob value: {other:?}"),
    }
}

fn grep_count(result: &fs_search_engine::ToolResult) -> usize {
    match &result.value {
        Some(ToolValue::Grep(v)) => v.matches.len(),
        other => panic!("not a grep value: {other:?}"),
    }
}

// ---------------------------------------------------------------- §10.1

/// CONTRACT §10.1 #1
#[tokio::test]
async fn registers_glob_and_grep_with_their_prompt_sections() {
    let h = harness(json!({})).await;
    assert_eq!(h.outcome, Ok(LoadOutcome::Registered));
    let probes = h.bash.probe_requests.lock().unwrap().clone();
    assert_eq!(probes.len(), 1);
    assert_eq!(probes[0].command, "command -v rg >/dev/null 2>&1");
    assert!(probes[0].workdir.is_none() && probes[0].signal.is_none());
    assert!(probes[0].timeout_ms.is_none() && probes[0].stdout_max_bytes.is_none());
    assert_eq!(schema_names(&h), ["glob", "grep"]);
    let prompt = h.registry.assembled_prompt();
    assert!(prompt.contains("Use the glob tool"));
    assert!(prompt.contains("Use the grep tool"));
    assert!(prompt.contains("sampled across top-level entries"));
    assert!(!prompt.contains("sampled across top-level directories"));
    assert!(
        h.registry.tool_definitions()[0]
            .description
            .contains("sampled across top-level entries")
    );
}

/// CONTRACT §10.1 #2
#[tokio::test]
async fn does_not_register_glob_or_grep_when_the_bash_executor_cannot_find_rg() {
    let bash = FakeBash::new();
    bash.arm_probe(Probe::Result(exit_with(1, "")));
    let h = load_with(bash, true, json!({"sampleOverCapGlobResults": true})).await;
    assert_eq!(
        h.outcome,
        Ok(LoadOutcome::RgMissing {
            warning: "tool-fs-search: ripgrep (rg) not found on the bash executor PATH; glob/grep tools not registered".into()
        })
    );
    assert!(schema_names(&h).is_empty());
    assert!(section_names(&h).is_empty());
    let result = h.call("glob", json!({"pattern": "*"}), &no_agent()).await;
    assert_eq!(result.text, "Error: unknown tool \"glob\"");
    assert_eq!(
        info(&result),
        (Some("ToolNotFoundError"), Some("UNKNOWN_TOOL"))
    );
}

/// CONTRACT §10.1 #3
#[tokio::test]
async fn rejects_plugin_load_when_the_rg_availability_probe_cannot_run() {
    let bash = FakeBash::new();
    bash.arm_probe(Probe::Fails("spawn bash ENOENT".into()));
    let h = load_with(bash, true, json!({"sampleOverCapGlobResults": true})).await;
    assert_eq!(
        h.outcome,
        Err(
            "tool-fs-search: ripgrep availability probe could not start: Error: spawn bash ENOENT"
                .into()
        )
    );
    assert!(schema_names(&h).is_empty());
}

/// CONTRACT §10.1 #4
#[tokio::test]
async fn rejects_plugin_load_when_the_rg_availability_probe_is_aborted_or_killed() {
    for probe in [
        BashRunResult {
            aborted: true,
            exit_code: None,
            signal: Some("SIGTERM".into()),
            ..run_result("")
        },
        BashRunResult {
            timed_out: true,
            ..run_result("")
        },
        BashRunResult {
            exit_code: None,
            ..run_result("")
        },
        BashRunResult {
            signal: Some("SIGKILL".into()),
            ..run_result("")
        },
    ] {
        let bash = FakeBash::new();
        bash.arm_probe(Probe::Result(probe));
        let h = load_with(bash, true, json!({"sampleOverCapGlobResults": true})).await;
        assert_eq!(
            h.outcome,
            Err("tool-fs-search: ripgrep availability probe did not complete".into())
        );
        assert!(schema_names(&h).is_empty());
    }
}

/// CONTRACT §10.1 #5
#[tokio::test]
async fn stays_pending_until_a_bash_executor_exists() {
    let mut registry = Registry::new(Host::default());
    let outcome = registry
        .load_fs_search(&json!({"sampleOverCapGlobResults": true}))
        .await;
    assert_eq!(outcome.unwrap(), LoadOutcome::Pending);
    assert!(registry.tool_definitions().is_empty());
    assert!(registry.prompt_sections().is_empty());
}

/// CONTRACT §10.1 #6
#[tokio::test]
async fn unregisters_everything_on_disposal() {
    let mut h = harness(json!({"globMaxResults": 1})).await;
    assert_eq!(schema_names(&h).len(), 2);
    h.registry.unload_fs_search();
    assert!(schema_names(&h).is_empty());
    assert!(section_names(&h).is_empty());
    // The spill listeners went too: an unknown-tool call saves nothing.
    h.bash.stdout("a\nb\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert!(result.is_error);
    assert_eq!(h.spill.count(), 0);
}

/// CONTRACT §10.1 #7
#[tokio::test]
async fn attaches_the_configured_timeout_to_both_tool_definitions() {
    let h = harness(json!({"timeoutMs": 5000})).await;
    let timeouts: Vec<u64> = h
        .registry
        .tool_definitions()
        .iter()
        .map(|d| d.timeout_ms.as_u64_saturating())
        .collect();
    assert_eq!(timeouts, [5000, 5000]);
}

/// CONTRACT §10.1 #8
#[tokio::test]
async fn defaults_the_timeout_budget_to_30_seconds() {
    let h = harness(json!({})).await;
    let timeouts: Vec<u64> = h
        .registry
        .tool_definitions()
        .iter()
        .map(|d| d.timeout_ms.as_u64_saturating())
        .collect();
    assert_eq!(timeouts, [30000, 30000]);
}

/// CONTRACT §10.1 #9
#[tokio::test]
async fn describes_the_modification_time_head_when_sampling_is_disabled() {
    let h = load_with(
        FakeBash::new(),
        true,
        json!({"sampleOverCapGlobResults": false}),
    )
    .await;
    let prompt = h.registry.assembled_prompt();
    assert!(prompt.contains("a larger one keeps the modification-time-ordered head"));
    assert!(!prompt.contains("sampled across top-level entries"));
    let description = &h.registry.tool_definitions()[0].description;
    assert!(
        description
            .contains("a larger result returns the first 100 paths in modification-time order")
    );
    assert!(!description.contains("sampled across top-level entries"));
}

// ---------------------------------------------------------------- §10.2

/// CONTRACT §10.2 #10 (load half: no sampling choice fails the load)
#[tokio::test]
async fn requires_an_explicit_sampling_choice_at_load() {
    let h = load_with(FakeBash::new(), true, json!({})).await;
    assert!(h.outcome.unwrap_err().contains("sampleOverCapGlobResults"));
    assert!(h.bash.probe_requests.lock().unwrap().is_empty());
}

/// CONTRACT §10.2 #11–15
#[tokio::test]
async fn rejects_a_non_positive_or_fractional_value_at_load_before_probing() {
    for (key, value) in [
        ("globMaxResults", json!(0)),
        ("grepMaxMatches", json!(-1)),
        ("grepMaxLineBytes", json!(1.5)),
        ("rawOutputMaxBytes", json!(0)),
        ("timeoutMs", json!(-100)),
    ] {
        let h = harness(json!({ key: value })).await;
        assert_eq!(
            h.outcome,
            Err(format!("tool-fs-search: {key} must be a positive integer"))
        );
        assert!(
            h.bash.probe_requests.lock().unwrap().is_empty(),
            "{key}: no probe"
        );
        assert!(schema_names(&h).is_empty());
    }
}

// ---------------------------------------------------------------- §10.4

/// CONTRACT §10.4 #27
#[tokio::test]
async fn forwards_the_session_cwd_as_the_request_workdir() {
    let h = harness(json!({})).await;
    h.call(
        "glob",
        json!({"pattern": "*"}),
        &agent(Some("/sessions/s1")),
    )
    .await;
    assert_eq!(
        h.bash.last_request().workdir.as_deref(),
        Some("/sessions/s1")
    );
    assert_eq!(h.bash.last_spec().workdir, "/sessions/s1");
}

/// CONTRACT §10.4 #28
#[tokio::test]
async fn omits_the_request_workdir_without_a_session_cwd() {
    let h = harness(json!({})).await;
    h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(h.bash.last_request().workdir, None);
    assert_eq!(h.bash.last_spec().workdir, "/work");
    h.call("grep", json!({"pattern": "x"}), &no_agent()).await;
    assert_eq!(h.bash.last_request().workdir, None);
    // An empty cwd is forwarded as is (only an absent one is omitted).
    h.call("grep", json!({"pattern": "x"}), &agent(Some("")))
        .await;
    assert_eq!(h.bash.last_request().workdir.as_deref(), Some(""));
}

/// CONTRACT §10.4 #29
#[tokio::test]
async fn forwards_exec_signal_into_the_bash_spec() {
    let h = harness(json!({})).await;
    let signal = tokio_util::sync::CancellationToken::new();
    let exec = agent(None).with_signal(signal.clone());
    let result = h.call("grep", json!({"pattern": "x"}), &exec).await;
    assert!(!result.is_error);
    // Identity: cancelling the spec's token cancels the caller's, which
    // a child or copy would not do.
    let spec_signal = h.bash.last_spec().signal.expect("signal forwarded");
    assert!(!signal.is_cancelled());
    spec_signal.cancel();
    assert!(signal.is_cancelled());
}

/// CONTRACT §10.4 #30
#[tokio::test]
async fn reports_the_bash_executor_timeout_as_search_aborted_with_the_budget() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        timed_out: true,
        timeout_ms: 1234,
        exit_code: None,
        signal: Some("SIGTERM".into()),
        ..run_result("")
    });
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(info(&result), (Some("SearchError"), Some("SEARCH_ABORTED")));
    assert_eq!(
        result.text,
        "Error: glob timed out after 1234ms in the bash executor; narrow pattern, path, or include and retry"
    );
}

/// CONTRACT §10.4 #31
#[tokio::test]
async fn skips_a_pre_aborted_registry_call_before_run() {
    let h = harness(json!({})).await;
    let exec = agent(None).with_signal(cancelled());
    let result = h.call("grep", json!({"pattern": "x"}), &exec).await;
    assert_eq!(
        info(&result),
        (Some("AbortError"), Some("ABORTED_BEFORE_DISPATCH"))
    );
    assert_eq!(result.text, "Error: tool call aborted before dispatch");
    assert_eq!(h.bash.runs(), 0);
    assert!(h.bash.requests.lock().unwrap().is_empty());
}

/// CONTRACT §10.4 #32
#[tokio::test]
async fn translates_a_run_rejection_after_the_forwarded_signal_aborts() {
    let h = harness(json!({})).await;
    h.bash.on_run(|spec| {
        if let Some(signal) = &spec.signal {
            signal.cancel();
        }
        Err(BashError::Other("aborted".into()))
    });
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(info(&result), (Some("SearchError"), Some("SEARCH_ABORTED")));
    assert_eq!(
        result.text,
        "Error: grep was aborted before completion (tool timeout or caller cancellation)"
    );
}

/// CONTRACT §10.4 #33
#[tokio::test]
async fn translates_an_aborted_executor_result_after_dispatch_starts() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        aborted: true,
        exit_code: None,
        ..run_result("")
    });
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(info(&result), (Some("SearchError"), Some("SEARCH_ABORTED")));
    assert!(result.text.contains("aborted before completion"));
}

/// CONTRACT §10.4 #34
#[tokio::test]
async fn translates_a_run_rejection_without_an_abort_into_search_failed() {
    let bash = FakeBash::without_signal_forwarding();
    let h = load_with(bash, true, json!({"sampleOverCapGlobResults": true})).await;
    h.bash
        .on_run(|_| Err(BashError::Other("spawn bash ENOENT".into())));
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(info(&result), (Some("SearchError"), Some("SEARCH_FAILED")));
    assert_eq!(
        result.text,
        "Error: glob could not start its search command (unusable working directory or missing shell)"
    );
    // Without the signal in the spec, even an aborted caller reads as a
    // start failure (the resolved spec's signal decides).
    let signal = tokio_util::sync::CancellationToken::new();
    let trigger = signal.clone();
    h.bash.on_run(move |_| {
        trigger.cancel();
        Err(BashError::Other("aborted".into()))
    });
    let result = h
        .call(
            "grep",
            json!({"pattern": "x"}),
            &agent(None).with_signal(signal),
        )
        .await;
    assert_eq!(info(&result).1, Some("SEARCH_FAILED"));
}

// ---------------------------------------------------------------- §10.5

/// CONTRACT §10.5 #35
#[tokio::test]
async fn exit_1_is_a_successful_empty_search() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        exit_code: Some(1),
        ..run_result("ignored\n")
    });
    let glob = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        (glob.text.as_str(), glob.is_error),
        ("No files found", false)
    );
    assert_eq!(glob_paths(&glob), Vec::<String>::new());
    let grep = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(
        (grep.text.as_str(), grep.is_error),
        ("No matches found", false)
    );
}

/// CONTRACT §10.5 #36
#[tokio::test]
async fn a_regex_parse_error_classifies_as_search_invalid_pattern() {
    let h = harness(json!({})).await;
    h.bash.returns(exit_with(
        2,
        "rg: regex parse error:\n    (\nerror: unclosed group",
    ));
    let result = h.call("grep", json!({"pattern": "("}), &agent(None)).await;
    assert_eq!(
        info(&result),
        (Some("SearchError"), Some("SEARCH_INVALID_PATTERN"))
    );
    assert_eq!(
        result.text,
        "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (\nerror: unclosed group"
    );
}

/// CONTRACT §10.5 #37
#[tokio::test]
async fn a_glob_parse_error_classifies_as_search_invalid_pattern() {
    let h = harness(json!({})).await;
    h.bash.returns(exit_with(
        2,
        "rg: error parsing glob '[': unclosed character class",
    ));
    let result = h.call("glob", json!({"pattern": "["}), &agent(None)).await;
    assert_eq!(info(&result).1, Some("SEARCH_INVALID_PATTERN"));
}

/// CONTRACT §10.5 #38
#[tokio::test]
async fn a_missing_rg_binary_classifies_as_search_failed_naming_ripgrep() {
    let h = harness(json!({})).await;
    for (tool, code, stderr) in [
        ("glob", 127, "bash: line 1: rg: command not found"),
        ("glob", 127, ""),
        ("grep", 2, "sh: rg: command not found"),
    ] {
        h.bash.returns(exit_with(code, stderr));
        let result = h.call(tool, json!({"pattern": "x"}), &agent(None)).await;
        assert_eq!(info(&result).1, Some("SEARCH_FAILED"));
        assert!(
            result.text.contains("requires ripgrep (rg)"),
            "{}",
            result.text
        );
    }
}

/// CONTRACT §10.5 #39
#[tokio::test]
async fn other_nonzero_exits_are_search_failed_carrying_the_stderr_excerpt() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        stdout: CollectedOutput::complete(match_line("a.ts", 1, "partial")),
        ..exit_with(2, "rg: missing.dir: IO error: no such file or directory")
    });
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(info(&result).1, Some("SEARCH_FAILED"));
    assert_eq!(
        result.text,
        "Error: grep search failed (exit 2): rg: missing.dir: IO error: no such file or directory"
    );
}

/// CONTRACT §10.5 #40
#[tokio::test]
async fn a_nonzero_exit_with_empty_stderr_still_reports_the_exit_code() {
    let h = harness(json!({})).await;
    h.bash.returns(exit_with(3, ""));
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(result.text, "Error: glob search failed (exit 3)");
}

/// CONTRACT §10.5 #41
#[tokio::test]
async fn truncated_stderr_gains_a_truncation_note_and_its_spill_path_is_never_read() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        stderr: CollectedOutput {
            text: "tail of diagnostics".into(),
            truncated: true,
            spill_path: Some("/nonexistent/stderr-spill.log".into()),
        },
        ..exit_with(2, "")
    });
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(
        result.text,
        "Error: grep search failed (exit 2): tail of diagnostics [stderr truncated]"
    );
}

/// CONTRACT §10.5 #42
#[tokio::test]
async fn a_signal_kill_that_is_neither_timeout_nor_abort_is_search_failed() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        exit_code: None,
        signal: Some("SIGKILL".into()),
        ..run_result("")
    });
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(info(&result).1, Some("SEARCH_FAILED"));
    assert_eq!(
        result.text,
        "Error: glob search command was killed by signal SIGKILL"
    );
}

/// CONTRACT §10.5 #43
#[tokio::test]
async fn a_null_exit_with_no_signal_is_search_failed() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        exit_code: None,
        signal: None,
        ..run_result("")
    });
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(info(&result).1, Some("SEARCH_FAILED"));
    assert_eq!(
        result.text,
        "Error: grep search command was killed by signal (unknown)"
    );
}

// ---------------------------------------------------------------- §10.6

/// CONTRACT §10.6 #44
#[tokio::test]
async fn passes_raw_output_max_bytes_to_bash_as_the_stdout_budget() {
    let h = harness(json!({"rawOutputMaxBytes": 1234})).await;
    for tool in ["glob", "grep"] {
        h.call(tool, json!({"pattern": "x"}), &agent(None)).await;
        assert_eq!(h.bash.last_request().stdout_max_bytes, Some(1234));
        assert_eq!(h.bash.last_spec().stdout_max_bytes, 1234);
    }
}

/// CONTRACT §10.6 #45
#[tokio::test]
async fn overflow_when_truncated_stdout_has_a_raw_spill_path() {
    let h = harness(json!({"rawOutputMaxBytes": 16})).await;
    h.bash.returns(BashRunResult {
        stdout: CollectedOutput {
            text: "x".into(),
            truncated: true,
            spill_path: Some("/tmp/raw.log".into()),
        },
        ..run_result("")
    });
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        info(&result),
        (Some("SearchError"), Some("SEARCH_RAW_OUTPUT_OVERFLOW"))
    );
    assert_eq!(
        result.text,
        "Error: glob produced more raw output than the bash executor retained within the 16-byte cap; narrow pattern, path, or include and retry"
    );
}

/// CONTRACT §10.6 #46
#[tokio::test]
async fn overflow_when_untruncated_inline_stdout_exceeds_the_cap() {
    let h = harness(json!({"rawOutputMaxBytes": 16})).await;
    h.bash.returns(run_result(&"y".repeat(65)));
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(
        info(&result),
        (Some("SearchError"), Some("SEARCH_RAW_OUTPUT_OVERFLOW"))
    );
    assert_eq!(
        result.text,
        "Error: grep produced 65 bytes of raw output, over the 16-byte cap; narrow pattern, path, or include and retry"
    );
    // The check runs for exit 1 too, and counts decoded UTF-8 bytes.
    h.bash.returns(BashRunResult {
        exit_code: Some(1),
        ..run_result("ééééééééé")
    });
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert!(
        result
            .text
            .contains("produced 18 bytes of raw output, over the 16-byte cap")
    );
}

/// CONTRACT §10.6 #47
#[tokio::test]
async fn overflow_when_truncated_stdout_has_no_spill_path() {
    let h = harness(json!({})).await;
    h.bash.returns(BashRunResult {
        stdout: CollectedOutput {
            text: "partial".into(),
            truncated: true,
            spill_path: None,
        },
        ..run_result("")
    });
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(info(&result).1, Some("SEARCH_RAW_OUTPUT_OVERFLOW"));
    assert!(result.text.contains("within the 20000000-byte cap"));
}

// ---------------------------------------------------------------- §10.8

/// CONTRACT §10.8 #57
#[tokio::test]
async fn lists_workdir_relative_paths() {
    let h = harness(json!({})).await;
    h.bash
        .stdout("/sessions/s1/src/a.ts\n/elsewhere/b.ts\nrel/c.ts\n");
    let result = h
        .call(
            "glob",
            json!({"pattern": "*"}),
            &agent(Some("/sessions/s1")),
        )
        .await;
    assert_eq!(
        serde_json::to_value(&result.value).unwrap(),
        json!({"root": ".", "paths": ["src/a.ts", "/elsewhere/b.ts", "rel/c.ts"]})
    );
    assert_eq!(result.text, "src/a.ts\n/elsewhere/b.ts\nrel/c.ts");
}

/// CONTRACT §10.8 #58
#[tokio::test]
async fn glob_validates_arguments() {
    let h = harness(json!({})).await;
    let result = h.call("glob", json!({"pattern": "  "}), &agent(None)).await;
    assert_eq!(result.text, "Error: pattern must be a non-empty string");
    assert_eq!(info(&result), (None, None));
    let result = h
        .call("glob", json!({"pattern": "*", "path": " "}), &agent(None))
        .await;
    assert_eq!(
        result.text,
        "Error: path must be a non-empty string when given"
    );
    assert_eq!(h.bash.runs(), 0);
}

/// CONTRACT §10.8 #59
#[tokio::test]
async fn threads_a_valid_path_through_as_the_quoted_search_root() {
    let h = harness(json!({})).await;
    let result = h
        .call("glob", json!({"pattern": "*", "path": "sub"}), &agent(None))
        .await;
    assert!(!result.is_error);
    assert!(h.bash.last_spec().command.ends_with(" -- 'sub'"));
}

/// CONTRACT §10.8 #60
#[tokio::test]
async fn caps_at_glob_max_results_and_saves_the_full_sorted_list() {
    let mut h = harness(json!({"globMaxResults": 2})).await;
    h.registry
        .add_post_execute_listener(Arc::new(AddsContext("glob context")));
    h.bash.stdout("a.ts\nb.ts\nc.ts\nd.ts\n");
    let result = h
        .call("glob", json!({"pattern": "*"}), &agent(Some("/w")))
        .await;
    assert_eq!(
        serde_json::to_value(&result.value).unwrap(),
        json!({"root": ".", "paths": ["a.ts", "b.ts", "c.ts", "d.ts"]})
    );
    assert_eq!(
        result.text,
        "a.ts\nb.ts\n\n(Showing 2 of 4 paths. Full sorted result stored at: /spill/glob-results.txt. Use the fake retrieval hint.)"
    );
    let saves = h.spill.saves.lock().unwrap().clone();
    assert_eq!(saves.len(), 1);
    assert_eq!(saves[0].session_id, "session-1");
    assert_eq!(
        (saves[0].tool_name.as_str(), saves[0].label.as_str()),
        ("glob", "result")
    );
    assert_eq!(saves[0].call_id, "call-1");
    assert_eq!(saves[0].suggested_name, "glob-results.txt");
    assert_eq!(saves[0].content, "a.ts\nb.ts\nc.ts\nd.ts");
    assert_eq!(result.additional_contexts, ["glob context"]);
    assert_eq!(
        result.spill.as_ref().map(|s| s.locator.as_str()),
        Some("/spill/glob-results.txt")
    );
}

/// CONTRACT §10.8 #61
#[tokio::test]
async fn samples_an_over_cap_result_across_top_level_entries() {
    let h = harness_without_spill(json!({"globMaxResults": 3})).await;
    h.bash
        .stdout("vendor/a.ts\nvendor/b.ts\nvendor/c.ts\nsrc/d.ts\nguide/e.md\ntop.txt\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        result.text,
        "vendor/a.ts\nsrc/d.ts\nguide/e.md\n\n(Showing 3 of 6 paths, sampled across 3 of the 4 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. The complete result could not be saved; narrow pattern or path to see more.)"
    );
}

/// CONTRACT §10.8 #62
#[tokio::test]
async fn keeps_the_modification_time_head_when_sampling_is_disabled() {
    let h = load_with(
        FakeBash::new(),
        false,
        json!({"sampleOverCapGlobResults": false, "globMaxResults": 3}),
    )
    .await;
    h.bash
        .stdout("vendor/a.ts\nvendor/b.ts\nvendor/c.ts\nsrc/d.ts\nguide/e.md\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        result.text,
        "vendor/a.ts\nvendor/b.ts\nvendor/c.ts\n\n(Showing 3 of 5 paths. The complete result could not be saved; narrow pattern or path to see more.)"
    );
}

/// CONTRACT §10.8 #63
#[tokio::test]
async fn samples_relative_to_the_explicit_search_root() {
    let h = harness_without_spill(json!({"globMaxResults": 3})).await;
    h.bash.stdout("workspace/vendor/a.ts\nworkspace/vendor/b.ts\nworkspace/source/c.ts\nworkspace/guides/d.md\n");
    let result = h
        .call(
            "glob",
            json!({"pattern": "*", "path": "workspace"}),
            &agent(None),
        )
        .await;
    assert!(
        result
            .text
            .contains("workspace/vendor/a.ts\nworkspace/source/c.ts\nworkspace/guides/d.md")
    );
    assert!(
        result
            .text
            .contains("sampled across 3 of the 3 top-level entries")
    );
}

/// CONTRACT §10.8 #64
#[tokio::test]
async fn samples_relative_to_an_absolute_search_root_after_display_conversion() {
    let h = harness_without_spill(json!({"globMaxResults": 3})).await;
    h.bash.stdout("/w/workspace/vendor/a.ts\n/w/workspace/vendor/b.ts\n/w/workspace/source/c.ts\n/w/workspace/guides/d.md\n");
    let result = h
        .call(
            "glob",
            json!({"pattern": "*", "path": "/w/workspace"}),
            &agent(Some("/w")),
        )
        .await;
    assert!(
        result
            .text
            .contains("workspace/vendor/a.ts\nworkspace/source/c.ts\nworkspace/guides/d.md")
    );
    assert!(
        result
            .text
            .contains("sampled across 3 of the 3 top-level entries")
    );
    match &result.value {
        Some(ToolValue::Glob(v)) => assert_eq!(v.root, "workspace"),
        other => panic!("{other:?}"),
    }
}

/// CONTRACT §10.8 #65
#[tokio::test]
async fn drops_the_narrowing_hint_when_the_sample_reaches_every_entry() {
    let h = harness_without_spill(json!({"globMaxResults": 3})).await;
    h.bash
        .stdout("vendor/a.ts\nvendor/b.ts\nvendor/c.ts\nsrc/d.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        result.text,
        "vendor/a.ts\nvendor/b.ts\nsrc/d.ts\n\n(Showing 3 of 4 paths, sampled across 2 of the 2 top-level entries this pattern matched instead of taken in modification-time order. The complete result could not be saved; narrow pattern or path to see more.)"
    );
}

/// CONTRACT §10.8 #66
#[tokio::test]
async fn keeps_modification_time_order_untouched_when_the_result_fits() {
    let h = harness(json!({"globMaxResults": 4})).await;
    h.bash.stdout("vendor/a.ts\nvendor/b.ts\nsrc/c.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(result.text, "vendor/a.ts\nvendor/b.ts\nsrc/c.ts");
}

/// CONTRACT §10.8 #67
#[tokio::test]
async fn keeps_the_plain_footer_for_a_flat_result() {
    let h = harness_without_spill(json!({"globMaxResults": 2})).await;
    h.bash.stdout("a.ts\nb.ts\nc.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        result.text,
        "a.ts\nb.ts\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)"
    );
}

/// CONTRACT §10.8 #68
#[tokio::test]
async fn does_not_create_a_spill_file_when_the_result_fits() {
    let h = harness(json!({"globMaxResults": 2})).await;
    h.bash.stdout("a.ts\nb.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(result.text, "a.ts\nb.ts");
    assert_eq!(h.spill.count(), 0);
}

/// CONTRACT §10.8 #69
#[tokio::test]
async fn preserves_a_downstream_value_replacement_instead_of_spilling() {
    let mut h = harness(json!({"globMaxResults": 1})).await;
    let replacement = json!({"root": ".", "paths": ["replacement-a.ts", "replacement-b.ts"]});
    h.registry
        .add_post_execute_listener(Arc::new(ReplacesValue(replacement.clone())));
    h.bash.stdout("old-a.ts\nold-b.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(serde_json::to_value(&result.value).unwrap(), replacement);
    assert!(result.text.contains("replacement-a.ts") && !result.text.contains("old-a.ts"));
    assert!(
        result.text.ends_with(
            "The complete result could not be saved; narrow pattern or path to see more.)"
        )
    );
    assert_eq!(h.spill.count(), 0);
}

/// A replacement that fails the output schema becomes INVALID_TOOL_OUTPUT.
#[tokio::test]
async fn an_invalid_downstream_value_fails_the_output_schema() {
    let mut h = harness(json!({})).await;
    h.registry
        .add_post_execute_listener(Arc::new(ReplacesValue(json!({"paths": []}))));
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        info(&result),
        (Some("ToolOutputError"), Some("INVALID_TOOL_OUTPUT"))
    );
    assert!(
        result
            .text
            .starts_with("Error: tool \"glob\" returned invalid output: ")
    );
}

/// CONTRACT §10.8 #70
#[tokio::test]
async fn keeps_the_full_nested_value_without_a_surface_spill() {
    let h = harness(json!({"globMaxResults": 2})).await;
    h.bash.stdout("a.ts\nb.ts\nc.ts\nd.ts\n");
    let result = h
        .call("glob", json!({"pattern": "*"}), &agent(None).nested())
        .await;
    assert_eq!(glob_paths(&result).len(), 4);
    assert_eq!(
        result.text,
        "a.ts\nb.ts\n\n(Showing 2 of 4 paths. The complete result could not be saved; narrow pattern or path to see more.)"
    );
    assert_eq!(h.spill.count(), 0);
    assert!(result.meta.is_none());
}

const UNSAVED_GLOB: &str = "a.ts\n\n(Showing 1 of 2 paths. The complete result could not be saved; narrow pattern or path to see more.)";

/// CONTRACT §10.8 #71
#[tokio::test]
async fn reports_the_unsaved_remainder_when_no_spill_backend_is_loaded() {
    let h = harness_without_spill(json!({"globMaxResults": 1})).await;
    h.bash.stdout("a.ts\nb.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert!(!result.is_error);
    assert_eq!(result.text, UNSAVED_GLOB);
    assert_eq!(
        result.warnings,
        ["tool-fs-search: no ctx.spillStore backend loaded; complete glob result not saved"]
    );
}

/// CONTRACT §10.8 #72
#[tokio::test]
async fn reports_the_unsaved_remainder_when_save_text_fails() {
    let h = harness(json!({"globMaxResults": 1})).await;
    *h.spill.fail_with.lock().unwrap() = Some("disk full".into());
    h.bash.stdout("a.ts\nb.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert!(!result.is_error);
    assert_eq!(result.text, UNSAVED_GLOB);
    assert_eq!(
        result.warnings,
        ["tool-fs-search: saveText failed for glob: Error: disk full; complete result not saved"]
    );
}

/// CONTRACT §10.8 #73
#[tokio::test]
async fn reports_the_unsaved_remainder_when_there_is_no_session_owner() {
    let h = harness(json!({"globMaxResults": 1})).await;
    h.bash.stdout("a.ts\nb.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &no_agent()).await;
    assert!(!result.is_error);
    assert_eq!(result.text, UNSAVED_GLOB);
    assert_eq!(h.spill.count(), 0);
    assert_eq!(
        result.warnings,
        ["tool-fs-search: no session owner for glob result; complete result not saved"]
    );
}

// ---------------------------------------------------------------- §10.9

fn grep_stdout(lines: &[String]) -> &'static str {
    Box::leak(format!("{}\n", lines.join("\n")).into_boxed_str())
}

/// CONTRACT §10.9 #74
#[tokio::test]
async fn groups_matches_by_file_with_line_numbers() {
    let h = harness(json!({})).await;
    h.bash.stdout(grep_stdout(&[
        r#"{"type":"begin","data":{"path":{"text":"a.ts"}}}"#.into(),
        match_line("a.ts", 3, "const x = 1\n"),
        match_line("a.ts", 9, "const y = 2\n"),
        r#"{"type":"end","data":{"path":{"text":"a.ts"}}}"#.into(),
        match_line("b.ts", 1, "const z = 3"),
        r#"{"type":"summary","data":{}}"#.into(),
        String::new(),
    ]));
    let result = h
        .call("grep", json!({"pattern": "const"}), &agent(None))
        .await;
    assert_eq!(
        serde_json::to_value(&result.value).unwrap(),
        json!({"matches": [
            {"path": "a.ts", "lineNumber": 3, "line": "const x = 1"},
            {"path": "a.ts", "lineNumber": 9, "line": "const y = 2"},
            {"path": "b.ts", "lineNumber": 1, "line": "const z = 3"}
        ]})
    );
    assert_eq!(
        result.text,
        "Found 3 matches\n\na.ts\nLine 3: const x = 1\nLine 9: const y = 2\n\nb.ts\nLine 1: const z = 3"
    );
}

/// CONTRACT §10.9 #75
#[tokio::test]
async fn reports_a_single_match_in_the_singular() {
    let h = harness(json!({})).await;
    h.bash
        .stdout(grep_stdout(&[match_line("a.ts", 1, "hit\n")]));
    let result = h
        .call("grep", json!({"pattern": "hit"}), &agent(None))
        .await;
    assert_eq!(result.text, "Found 1 match\n\na.ts\nLine 1: hit");
}

/// CONTRACT §10.9 #76
#[tokio::test]
async fn relativizes_absolute_match_paths_against_the_resolved_workdir() {
    let h = harness(json!({})).await;
    h.bash.stdout(grep_stdout(&[match_line(
        "/sessions/s1/deep/a.ts",
        2,
        "hit\n",
    )]));
    let result = h
        .call(
            "grep",
            json!({"pattern": "hit", "path": "/sessions/s1"}),
            &agent(Some("/sessions/s1")),
        )
        .await;
    assert!(
        result.text.contains("deep/a.ts\nLine 2: hit"),
        "{}",
        result.text
    );
}

/// CONTRACT §10.9 #77
#[tokio::test]
async fn previews_a_long_matched_line_preserving_utf8() {
    let h = harness(json!({"grepMaxLineBytes": 7})).await;
    h.bash
        .stdout(grep_stdout(&[match_line("a.ts", 1, "aéaéaéaé\n")]));
    let result = h.call("grep", json!({"pattern": "a"}), &agent(None)).await;
    assert!(result.text.contains("Line 1: aéaéa (line truncated)"));
    match &result.value {
        Some(ToolValue::Grep(v)) => assert_eq!(v.matches[0].line, "aéaéaéaé"),
        other => panic!("{other:?}"),
    }
}

/// CONTRACT §10.9 #78
#[tokio::test]
async fn renders_a_non_utf8_line_as_a_placeholder() {
    let h = harness(json!({})).await;
    h.bash.stdout(r#"{"type":"match","data":{"path":{"text":"a.ts"},"lines":{"bytes":"AAECww=="},"line_number":4,"absolute_offset":0,"submatches":[]}}
"#);
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert!(!result.is_error);
    assert!(result.text.contains("Line 4: (line is not valid UTF-8)"));
}

/// CONTRACT §10.9 #80
#[tokio::test]
async fn caps_at_grep_max_matches_and_spills_the_full_formatted_list() {
    let mut h = harness(json!({"grepMaxMatches": 2})).await;
    h.registry
        .add_post_execute_listener(Arc::new(AddsContext("grep context")));
    h.bash.stdout(grep_stdout(&[
        match_line("a.ts", 1, "one\n"),
        match_line("a.ts", 2, "two\n"),
        match_line("b.ts", 3, "three\n"),
    ]));
    let result = h.call("grep", json!({"pattern": "o"}), &agent(None)).await;
    assert_eq!(grep_count(&result), 3);
    assert_eq!(
        result.text,
        "Found 2 of 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\n(Full grep result stored at: /spill/grep-results.txt. Use the fake retrieval hint.)"
    );
    let saves = h.spill.saves.lock().unwrap().clone();
    assert_eq!(saves.len(), 1);
    assert_eq!(
        (saves[0].tool_name.as_str(), saves[0].label.as_str()),
        ("grep", "result")
    );
    assert_eq!(saves[0].suggested_name, "grep-results.txt");
    assert_eq!(
        saves[0].content,
        "Found 3 matches\n\na.ts\nLine 1: one\nLine 2: two\n\nb.ts\nLine 3: three"
    );
    assert_eq!(result.additional_contexts, ["grep context"]);
}

/// CONTRACT §10.9 #81
#[tokio::test]
async fn preserves_a_downstream_value_replacement_instead_of_spilling_old_matches() {
    let mut h = harness(json!({"grepMaxMatches": 1})).await;
    let replacement = json!({"matches": [
        {"path": "replacement.ts", "lineNumber": 1, "line": "r1"},
        {"path": "replacement.ts", "lineNumber": 2, "line": "r2"}
    ]});
    h.registry
        .add_post_execute_listener(Arc::new(ReplacesValue(replacement.clone())));
    h.bash.stdout(grep_stdout(&[
        match_line("old.ts", 1, "o1\n"),
        match_line("old.ts", 2, "o2\n"),
    ]));
    let result = h.call("grep", json!({"pattern": "o"}), &agent(None)).await;
    assert_eq!(serde_json::to_value(&result.value).unwrap(), replacement);
    assert!(result.text.contains("replacement.ts") && !result.text.contains("old.ts"));
    assert_eq!(h.spill.count(), 0);
}

const UNSAVED_GREP: &str = "Found 1 of 2 matches\n\na.ts\nLine 1: one\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)";

/// CONTRACT §10.9 #82
#[tokio::test]
async fn keeps_every_nested_match_without_a_surface_spill() {
    let h = harness(json!({"grepMaxMatches": 1})).await;
    h.bash.stdout(grep_stdout(&[
        match_line("a.ts", 1, "one\n"),
        match_line("a.ts", 2, "two\n"),
    ]));
    let result = h
        .call("grep", json!({"pattern": "o"}), &agent(None).nested())
        .await;
    assert_eq!(grep_count(&result), 2);
    assert_eq!(result.text, UNSAVED_GREP);
    assert_eq!(h.spill.count(), 0);
}

/// CONTRACT §10.9 #83
#[tokio::test]
async fn reports_the_unsaved_remainder_when_capped_with_no_spill_backend() {
    let h = harness_without_spill(json!({"grepMaxMatches": 1})).await;
    h.bash.stdout(grep_stdout(&[
        match_line("a.ts", 1, "one\n"),
        match_line("a.ts", 2, "two\n"),
    ]));
    let result = h.call("grep", json!({"pattern": "o"}), &agent(None)).await;
    assert!(!result.is_error);
    assert_eq!(result.text, UNSAVED_GREP);
}

/// CONTRACT §10.9 #84
#[tokio::test]
async fn grep_validates_arguments() {
    let h = harness(json!({})).await;
    for (args, expected) in [
        (json!({"pattern": ""}), "pattern must be a non-empty string"),
        (
            json!({"pattern": "x", "path": "  "}),
            "path must be a non-empty string",
        ),
        (
            json!({"pattern": "x", "include": "  "}),
            "include must be a non-empty glob",
        ),
        (
            json!({"pattern": "x", "include": "!*.ts"}),
            "negated patterns",
        ),
        (
            json!({"pattern": "x", "include": "*.ts,*.js"}),
            "comma-separated list",
        ),
    ] {
        let result = h.call("grep", args, &agent(None)).await;
        assert!(
            result.is_error && result.text.contains(expected),
            "{}",
            result.text
        );
        assert_eq!(info(&result), (None, None));
    }
    assert_eq!(h.bash.runs(), 0);
}

/// CONTRACT §10.9 #85
#[tokio::test]
async fn accepts_a_whitespace_pattern_and_brace_alternation_in_include() {
    let h = harness(json!({})).await;
    h.bash.returns(exit_with(1, ""));
    let result = h
        .call(
            "grep",
            json!({"pattern": "  ", "include": "*.{ts,tsx}"}),
            &agent(None),
        )
        .await;
    assert!(!result.is_error);
    assert_eq!(
        h.bash.last_spec().command,
        "rg --json --regexp='  ' --glob='*.{ts,tsx}'"
    );
}

// --------------------------------------------------------------- §10.10

/// CONTRACT §10.10 #86–93
#[tokio::test]
async fn malformed_json_transport_fails_the_search() {
    let h = harness(json!({})).await;
    for line in [
        "not json at all",
        "42",
        r#"{"type":"match"}"#,
        r#"{"type":"match","data":{"path":{},"lines":{"text":"x"},"line_number":1}}"#,
        r#"{"type":"match","data":{"path":"a.ts","lines":{"text":"x"},"line_number":1}}"#,
        r#"{"type":"match","data":{"path":{"text":"a.ts"},"lines":{"text":"x"}}}"#,
        r#"{"type":"match","data":{"path":{"text":"a.ts"},"line_number":1}}"#,
        r#"{"type":"match","data":{"path":{"text":"a.ts"},"lines":{},"line_number":1}}"#,
    ] {
        let stdout: &'static str = Box::leak(format!("{line}\n").into_boxed_str());
        h.bash.stdout(stdout);
        let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
        assert!(result.is_error, "{line}");
        assert_eq!(
            info(&result),
            (Some("SearchError"), Some("SEARCH_FAILED")),
            "{line}"
        );
        assert!(
            result
                .text
                .starts_with("Error: grep received malformed ripgrep --json output (")
        );
    }
}

/// A non-integer line number passes parsing but fails the output schema.
#[tokio::test]
async fn a_fractional_line_number_is_invalid_tool_output() {
    let h = harness(json!({})).await;
    h.bash.stdout(
        r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":1.5}}"#,
    );
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(
        info(&result),
        (Some("ToolOutputError"), Some("INVALID_TOOL_OUTPUT"))
    );
    assert!(
        result
            .text
            .starts_with("Error: tool \"grep\" returned invalid output: ")
    );
}

// --------------------------------------------------------------- §10.11

/// CONTRACT §10.11 #94
#[tokio::test]
async fn never_calls_bash_start_across_successful_and_failed_searches() {
    let h = harness(json!({})).await;
    h.bash.stdout("a.ts\n");
    assert!(
        !h.call("glob", json!({"pattern": "*"}), &agent(None))
            .await
            .is_error
    );
    h.bash.returns(exit_with(2, "boom"));
    assert!(
        h.call("grep", json!({"pattern": "x"}), &agent(None))
            .await
            .is_error
    );
    assert_eq!(h.bash.start_calls.load(Ordering::SeqCst), 0);
}

// --------------------------------------------------------------- §10.12

fn meta_json(result: &fs_search_engine::ToolResult) -> Option<Value> {
    result
        .meta
        .as_ref()
        .map(|m| serde_json::to_value(m).unwrap())
}

/// CONTRACT §10.12 #97
#[tokio::test]
async fn grep_projects_a_search_card_from_a_real_execute() {
    let h = harness(json!({"grepMaxMatches": 2})).await;
    h.bash.stdout(grep_stdout(&[
        match_line("a.ts", 1, "one\n"),
        match_line("a.ts", 2, "two\n"),
        match_line("b.ts", 3, "three\n"),
    ]));
    let result = h.call("grep", json!({"pattern": "o"}), &agent(None)).await;
    let expected = json!({"shape": "matches", "files": [{"path": "a.ts", "matches": [
        {"lineNumber": 1, "line": "one"}, {"lineNumber": 2, "line": "two"}]}], "truncated": true, "total": 3});
    let meta = meta_json(&result);
    assert_eq!(meta.as_ref(), Some(&expected));
    let view = present_grep_result(result.is_error, meta.as_ref()).expect("a card");
    let mut view = serde_json::to_value(view).unwrap();
    assert_eq!(
        view.as_object_mut().unwrap().remove("card"),
        Some(json!("search"))
    );
    assert_eq!(view, expected);
}

/// CONTRACT §10.12 #98
#[tokio::test]
async fn glob_projects_a_search_card_from_a_real_execute() {
    let h = harness(json!({"globMaxResults": 2})).await;
    h.bash.stdout("a.ts\nb.ts\nc.ts\n");
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    let expected =
        json!({"shape": "paths", "paths": ["a.ts", "b.ts"], "truncated": true, "total": 3});
    let meta = meta_json(&result);
    assert_eq!(meta.as_ref(), Some(&expected));
    // The spill replaced only the text: the card carries no locator.
    assert!(!meta.unwrap().to_string().contains("/spill/"));
    assert!(present_glob_result(false, meta_json(&result).as_ref()).is_some());
}

/// CONTRACT §10.12 #99
#[tokio::test]
async fn nested_dispatch_computes_no_meta() {
    let h = harness(json!({})).await;
    h.bash
        .stdout(grep_stdout(&[match_line("a.ts", 1, "one\n")]));
    let result = h
        .call("grep", json!({"pattern": "o"}), &agent(None).nested())
        .await;
    assert!(result.meta.is_none());
    assert!(present_grep_result(result.is_error, None).is_none());
}

/// CONTRACT §10.12 #100 (through real results)
#[tokio::test]
async fn present_result_ignores_failed_results() {
    let h = harness(json!({})).await;
    h.bash.returns(exit_with(2, "boom"));
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert!(result.is_error && result.meta.is_none());
    let paths = json!({"shape": "paths", "paths": [], "truncated": false, "total": 0});
    assert!(present_glob_result(result.is_error, Some(&paths)).is_none());
}

// --------------------------------------------------------------- §10.15

/// CONTRACT §10.15 L1
#[test]
fn exposes_the_plugin_descriptor() {
    assert_eq!(PLUGIN_NAME, "tool-fs-search");
    assert_eq!(INJECT, ["tools", "systemPrompt", "bash"]);
    assert!(
        fs_search_engine::Config::from_json(&json!({"sampleOverCapGlobResults": true})).is_ok()
    );
}

/// CONTRACT §10.15 L2
#[tokio::test]
async fn boots_over_a_bash_executor_whose_only_working_command_is_the_probe() {
    let bash = FakeBash::new();
    bash.on_run(|_| Err(BashError::Other("only the probe may run".into())));
    let h = load_with(bash, false, json!({"sampleOverCapGlobResults": true})).await;
    assert_eq!(h.outcome, Ok(LoadOutcome::Registered));
    assert_eq!(schema_names(&h), ["glob", "grep"]);
}

/// Registry: unknown tools are reported before the abort check.
#[tokio::test]
async fn an_unknown_tool_gets_the_registry_error() {
    let h = harness(json!({})).await;
    let result = h.call("find", json!({}), &ExecContext::new("c")).await;
    assert_eq!(result.text, "Error: unknown tool \"find\"");
    assert_eq!(
        info(&result),
        (Some("ToolNotFoundError"), Some("UNKNOWN_TOOL"))
    );
}

/// Registry: a success whose caller aborted meanwhile becomes ABORTED.
#[tokio::test]
async fn an_abort_during_a_successful_body_replaces_the_success() {
    let h = harness(json!({})).await;
    let signal = tokio_util::sync::CancellationToken::new();
    let trigger = signal.clone();
    h.bash.on_run(move |_| {
        trigger.cancel();
        Ok(run_result("a.ts\n"))
    });
    let result = h
        .call(
            "glob",
            json!({"pattern": "*"}),
            &agent(None).with_signal(signal),
        )
        .await;
    assert_eq!(result.text, "Error: tool call aborted");
    assert_eq!(info(&result), (Some("AbortError"), Some("ABORTED")));
}
