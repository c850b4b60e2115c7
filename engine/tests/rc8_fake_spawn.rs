//! 0.1.0-rc.8's own cases (its `tests/tools.spec.ts`: registration,
//! config validation, the spawn spec, abort and exit classification, raw
//! output acquisition), ported as behaviour: the fake executor of
//! `support` stands in for rc.8's mocked subprocess service, injecting
//! each outcome. The same release on real rg and real files is
//! `tests/tests/e2e/rc8_integration.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

mod support;

use fs_search_engine::bash::{BashError, BashRunResult, CollectedOutput, SubprocessRun};
use fs_search_engine::helpers::GLOB_VCS_EXCLUDES;
use fs_search_engine::release::Release;
use fs_search_engine::{Host, LoadOutcome, Registry};
use serde_json::{Value, json};
use support::*;

/// rc.8 loaded over the fake with `{sampleOverCapGlobResults: true}` and
/// `extra`.
async fn rc8(extra: Value) -> Harness {
    let mut config = json!({"sampleOverCapGlobResults": true});
    if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    load_rc8(FakeBash::new(), config).await
}

fn tool_names(h: &Harness) -> Vec<String> {
    h.registry
        .tool_definitions()
        .into_iter()
        .map(|d| d.name)
        .collect()
}

#[tokio::test]
async fn fake_spawn_registers_both_tools_without_probing_even_when_rg_is_missing() {
    let bash = FakeBash::new();
    bash.arm_probe(Probe::Result(exit_with(1, "")));
    let h = load_rc8(bash, json!({"sampleOverCapGlobResults": true})).await;
    assert_eq!(h.outcome, Ok(LoadOutcome::Registered));
    assert!(h.bash.probe_requests.lock().unwrap().is_empty());
    assert_eq!(tool_names(&h), ["glob", "grep"]);
    let prompt = h.registry.assembled_prompt();
    assert!(prompt.contains("Use the glob tool") && prompt.contains("Use the grep tool"));
}

#[tokio::test]
async fn fake_spawn_stays_pending_until_an_executor_exists() {
    let mut registry = Registry::new(Host::default());
    let config = json!({"sampleOverCapGlobResults": true});
    let outcome = registry.load_fs_search_as(Release::Rc8, &config).await;
    assert_eq!(outcome.unwrap(), LoadOutcome::Pending);
    assert!(registry.tool_definitions().is_empty());
}

#[tokio::test]
async fn fake_spawn_config_bounds_grace_and_stderr_budget_with_rc8_messages() {
    for (extra, message) in [
        (
            json!({"graceMs": 2_147_483_648u64}),
            "tool-fs-search: graceMs must be no greater than 2147483647",
        ),
        (
            json!({"graceMs": 0}),
            "tool-fs-search: graceMs must be a positive integer",
        ),
        (
            json!({"graceMs": 1.5}),
            "tool-fs-search: graceMs must be a positive integer",
        ),
        (
            json!({"stderrMaxBytes": -1}),
            "tool-fs-search: stderrMaxBytes must be a positive integer",
        ),
        // rc.8 checks them after rawOutputMaxBytes and before timeoutMs.
        (
            json!({"timeoutMs": 0, "graceMs": 0}),
            "tool-fs-search: graceMs must be a positive integer",
        ),
        (
            json!({"rawOutputMaxBytes": 0, "stderrMaxBytes": 0}),
            "tool-fs-search: rawOutputMaxBytes must be a positive integer",
        ),
    ] {
        let h = rc8(extra.clone()).await;
        assert_eq!(h.outcome, Err(message.to_owned()), "{extra}");
        assert!(tool_names(&h).is_empty());
    }
    let h = rc8(json!({"graceMs": 2_147_483_647u64})).await;
    assert_eq!(h.outcome, Ok(LoadOutcome::Registered));
    // The seed's release knows neither key.
    let seed = harness(json!({"graceMs": 0, "stderrMaxBytes": "x"})).await;
    assert_eq!(seed.outcome, Ok(LoadOutcome::Registered));
}

#[tokio::test]
async fn fake_spawn_runs_the_plain_argv_with_no_config_first_and_the_budgets() {
    let h = rc8(json!({"rawOutputMaxBytes": 4096, "graceMs": 750, "stderrMaxBytes": 99})).await;
    h.call(
        "glob",
        json!({"pattern": "**/*.ts", "path": "docs dir"}),
        &agent(None),
    )
    .await;
    let request = h.bash.last_request();
    let mut expected: Vec<String> = ["rg", "--no-config", "--files", "--glob=**/*.ts"]
        .into_iter()
        .chain(["--sort=modified", "--no-ignore", "--hidden"])
        .map(str::to_owned)
        .collect();
    for name in GLOB_VCS_EXCLUDES {
        expected.push(format!("--glob=!**/{name}"));
        expected.push(format!("--glob=!**/{name}/**"));
    }
    expected.extend(["--".to_owned(), "docs dir".to_owned()]);
    assert_eq!(request.argv.as_deref(), Some(&expected[..]));
    assert_eq!(
        request.subprocess,
        Some(SubprocessRun {
            grace_ms: 750,
            stderr_max_bytes: 99
        })
    );
    assert_eq!(request.stdout_max_bytes, Some(4096));
    // No executor deadline and no stdin.
    assert_eq!((request.timeout_ms, request.stdin), (None, None));
    h.call(
        "grep",
        json!({"pattern": "$(touch x)", "path": "-dash", "include": "*.{ts,tsx}"}),
        &agent(None),
    )
    .await;
    assert_eq!(
        h.bash.last_request().argv.unwrap(),
        [
            "rg",
            "--no-config",
            "--json",
            "--regexp=$(touch x)",
            "--glob=*.{ts,tsx}",
            "--",
            "-dash"
        ]
    );
}

#[tokio::test]
async fn fake_spawn_defaults_the_stderr_tail_and_grace_when_the_config_omits_them() {
    let h = rc8(json!({})).await;
    h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(
        h.bash.last_request().subprocess,
        Some(SubprocessRun {
            grace_ms: 3000,
            stderr_max_bytes: 65_536
        })
    );
    assert_eq!(h.bash.last_request().stdout_max_bytes, Some(20_000_000));
}

#[tokio::test]
async fn fake_spawn_runs_in_the_session_cwd_else_the_executor_s_directory() {
    let h = rc8(json!({})).await;
    h.call(
        "grep",
        json!({"pattern": "x"}),
        &agent(Some("/sessions/s1")),
    )
    .await;
    assert_eq!(
        h.bash.last_request().workdir.as_deref(),
        Some("/sessions/s1")
    );
    h.call("grep", json!({"pattern": "x"}), &no_agent()).await;
    assert_eq!(h.bash.last_request().workdir, None);
    assert_eq!(h.bash.last_spec().workdir, "/work");
}

#[tokio::test]
async fn fake_spawn_reports_an_abort_fired_during_the_run_as_search_aborted() {
    let h = rc8(json!({})).await;
    // rg finished normally, but the signal fired meanwhile: rc.8 asks
    // the signal once the run is done.
    h.bash.on_run(|spec| {
        spec.signal.as_ref().unwrap().cancel();
        Ok(run_result(""))
    });
    let exec = agent(None).with_signal(tokio_util::sync::CancellationToken::new());
    let result = h.call("grep", json!({"pattern": "x"}), &exec).await;
    assert_eq!(info(&result), (Some("SearchError"), Some("SEARCH_ABORTED")));
    assert_eq!(
        result.text,
        "Error: grep was aborted before completion (tool timeout or caller cancellation)"
    );
}

#[tokio::test]
async fn fake_spawn_a_pre_aborted_call_never_reaches_the_spawn() {
    let h = rc8(json!({})).await;
    let exec = agent(None).with_signal(cancelled());
    let result = h.call("grep", json!({"pattern": "x"}), &exec).await;
    assert!(result.is_error);
    assert_eq!(h.bash.runs(), 0);
    // An abort the executor sees before its spawn is an abort.
    h.bash
        .on_run(|_| Err(BashError::AbortedBeforeSpawn("aborted".into())));
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(info(&result), (Some("SearchError"), Some("SEARCH_ABORTED")));
}

#[tokio::test]
async fn fake_spawn_a_launch_failure_is_search_failed_even_when_the_signal_aborts_with_it() {
    let h = rc8(json!({})).await;
    h.bash.on_run(|spec| {
        spec.signal.as_ref().unwrap().cancel();
        Err(BashError::Spawn(std::io::Error::from_raw_os_error(2)))
    });
    let exec = agent(None).with_signal(tokio_util::sync::CancellationToken::new());
    let result = h.call("grep", json!({"pattern": "x"}), &exec).await;
    assert_eq!(info(&result), (Some("SearchError"), Some("SEARCH_FAILED")));
    assert_eq!(
        result.text,
        "Error: grep could not start its search command (ripgrep launch failed)"
    );
    h.bash.on_run(|_| {
        Err(BashError::Spawn(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "nul byte found in provided data",
        )))
    });
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        result.text,
        "Error: glob could not start its search command (ripgrep launch failed)"
    );
}

#[tokio::test]
async fn fake_spawn_classifies_exits_without_a_shell() {
    let h = rc8(json!({})).await;
    let cases = [
        (exit_with(1, ""), None, "No matches found"),
        (
            exit_with(2, "rg: regex parse error:\n    (\nerror: unclosed group\n"),
            Some("SEARCH_INVALID_PATTERN"),
            "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (\nerror: unclosed group",
        ),
        (
            exit_with(2, "rg: error parsing glob '[': unclosed character class"),
            Some("SEARCH_INVALID_PATTERN"),
            "Error: grep pattern rejected by ripgrep: rg: error parsing glob '[': unclosed character class",
        ),
        (
            exit_with(
                2,
                "rg: nope: IO error for operation on nope: No such file or directory (os error 2)",
            ),
            Some("SEARCH_FAILED"),
            "Error: grep search failed (exit 2): rg: nope: IO error for operation on nope: No such file or directory (os error 2)",
        ),
        (
            exit_with(3, ""),
            Some("SEARCH_FAILED"),
            "Error: grep search failed (exit 3)",
        ),
        // No shell: 127 and "command not found" are nothing special.
        (
            exit_with(127, "bash: rg: command not found"),
            Some("SEARCH_FAILED"),
            "Error: grep search failed (exit 127): bash: rg: command not found",
        ),
        (
            BashRunResult {
                exit_code: None,
                signal: Some("SIGKILL".into()),
                ..run_result("")
            },
            Some("SEARCH_FAILED"),
            "Error: grep search command was killed by signal SIGKILL",
        ),
        (
            BashRunResult {
                exit_code: None,
                ..run_result("")
            },
            Some("SEARCH_FAILED"),
            "Error: grep search command was killed by signal (unknown)",
        ),
    ];
    for (outcome, code, text) in cases {
        h.bash.returns(outcome);
        let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
        assert_eq!(info(&result).1, code, "{text}");
        assert_eq!(result.text, text);
    }
}

#[tokio::test]
async fn fake_spawn_a_stderr_tail_cut_short_of_rg_s_words_is_an_ordinary_failure() {
    let h = rc8(json!({"stderrMaxBytes": 22})).await;
    h.bash.returns(BashRunResult {
        exit_code: Some(2),
        stderr: CollectedOutput {
            text: "error: unclosed group\n".into(),
            truncated: true,
            spill_path: None,
        },
        ..run_result("")
    });
    let result = h.call("grep", json!({"pattern": "("}), &agent(None)).await;
    assert_eq!(info(&result).1, Some("SEARCH_FAILED"));
    assert_eq!(
        result.text,
        "Error: grep search failed (exit 2): error: unclosed group [stderr truncated]"
    );
}

#[tokio::test]
async fn fake_spawn_raw_output_past_the_cap_names_the_subprocess_seam() {
    let h = rc8(json!({"rawOutputMaxBytes": 10})).await;
    h.bash.returns(BashRunResult {
        stdout: CollectedOutput {
            text: String::new(),
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
        "Error: glob produced more raw output than the subprocess seam retained within the 10-byte cap; narrow pattern, path, or include and retry"
    );
    h.bash.returns(run_result("a.txt\nb.txt\nc.txt\n"));
    let result = h.call("glob", json!({"pattern": "*"}), &agent(None)).await;
    assert_eq!(
        result.text,
        "Error: glob produced 18 bytes of raw output, over the 10-byte cap; narrow pattern, path, or include and retry"
    );
}

#[tokio::test]
async fn fake_spawn_an_executor_timeout_flag_is_not_rc8_s_to_report() {
    // rc.8 has no executor deadline: only the cooperative timeout (the
    // signal) ends a run, so a run that ended by itself is read as it
    // ended.
    let h = rc8(json!({})).await;
    h.bash.returns(BashRunResult {
        timed_out: true,
        ..exit_with(1, "")
    });
    let result = h.call("grep", json!({"pattern": "x"}), &agent(None)).await;
    assert_eq!(result.text, "No matches found");
}
