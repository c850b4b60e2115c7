//! Output bounds (CONTRACT §1.3 capture, §7.2 step 7, §7.3): stdout past
//! `rawOutputMaxBytes` ends with `SEARCH_RAW_OUTPUT_OVERFLOW` at exactly
//! the cap's boundary; stderr is kept as a bounded tail whose excerpt
//! carries ` [stderr truncated]`; and the overflow check keeps its place
//! in the contract's order (an exit outside {0, 1} or a timeout is
//! reported as such, however much stdout came first). Fakes inject the
//! floods; the peak-memory flood test is in `reliability_flood_memory.rs`
//! so that no other test shares its process.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fs_search_engine::{ExecContext, Registry, ToolResult};

use fs_search_exec::LocalBashConfig;
use fs_search_test_support::reliability::{FakeRg, load, local_executor};
use serde_json::{Value, json};

async fn registry(fake: Option<&FakeRg>, bash: LocalBashConfig, config: Value) -> Registry {
    let path = fake.map(FakeRg::path_env);
    let env: Vec<(&str, &str)> = path.iter().map(|p| ("PATH", p.as_str())).collect();
    load(local_executor(bash, &env).unwrap(), &config)
        .await
        .unwrap()
}

fn exec(work: &std::path::Path) -> ExecContext {
    ExecContext::new("c").with_session(Some("s"), Some(&work.to_string_lossy()))
}

fn assert_failure(result: &ToolResult, code: &str, text: &str) {
    assert!(result.is_error, "{result:?}");
    assert_eq!(
        result.code().map(|c| c.code()),
        Some(code),
        "{}",
        result.text
    );
    assert_eq!(result.text, text);
}

fn overflow_text(tool: &str, cap: u64) -> String {
    format!(
        "Error: {tool} produced more raw output than the bash executor retained within the {cap}-byte cap; narrow pattern, path, or include and retry"
    )
}

#[tokio::test]
async fn real_rg_stdout_over_the_raw_output_cap_is_an_overflow() {
    let work = tempfile::tempdir().unwrap();
    for i in 0..200 {
        std::fs::write(work.path().join(format!("file-{i:03}.txt")), "alpha\n").unwrap();
    }
    let registry = registry(
        None,
        LocalBashConfig::default(),
        json!({"sampleOverCapGlobResults": true, "rawOutputMaxBytes": 1000}),
    )
    .await;
    for (tool, args) in [
        ("glob", json!({"pattern": "*.txt"})),
        ("grep", json!({"pattern": "alpha"})),
    ] {
        let result = registry.call(tool, &args, &exec(work.path())).await;
        assert_failure(
            &result,
            "SEARCH_RAW_OUTPUT_OVERFLOW",
            &overflow_text(tool, 1000),
        );
    }
}

#[tokio::test]
async fn fake_rg_stdout_exactly_at_the_cap_is_kept_and_one_byte_more_overflows() {
    // Ten 10-byte paths plus newlines: exactly 100 bytes of stdout.
    let fake = FakeRg::new("for i in 0 1 2 3 4 5 6 7 8 9; do printf 'path-%d.xy\\n' $i; done\nprintf \"$(cat \"$STATE/extra\")\"\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = json!({"sampleOverCapGlobResults": true, "rawOutputMaxBytes": 100});
    let registry = registry(Some(&fake), LocalBashConfig::default(), config).await;
    fake.write_state("extra", b"").unwrap();
    let result = registry
        .call("glob", &json!({"pattern": "*"}), &exec(work.path()))
        .await;
    assert!(!result.is_error, "{result:?}");
    assert_eq!(result.text.lines().count(), 10);
    fake.write_state("extra", b"z").unwrap();
    let result = registry
        .call("glob", &json!({"pattern": "*"}), &exec(work.path()))
        .await;
    assert_failure(
        &result,
        "SEARCH_RAW_OUTPUT_OVERFLOW",
        &overflow_text("glob", 100),
    );
}

/// 100,000 numbered diagnostic lines (1.3 MB) on stderr, then exit 2. (The
/// executor keeps a truncated stderr's whole stream in its private spill
/// directory, so the flood is kept small.)
const STDERR_FLOOD_RG: &str = "seq -f 'diag %07.0f' 0 99999 >&2\nexit 2\n";

#[tokio::test]
async fn a_fake_rg_stderr_flood_keeps_a_bounded_tail_and_says_it_was_truncated() {
    let fake = FakeRg::new(STDERR_FLOOD_RG).unwrap();
    let work = tempfile::tempdir().unwrap();
    let max_output_bytes = 64_000;
    let registry = registry(
        Some(&fake),
        LocalBashConfig {
            max_output_bytes,
            ..LocalBashConfig::default()
        },
        json!({"sampleOverCapGlobResults": true}),
    )
    .await;
    let stream: String = (0..100_000).map(|i| format!("diag {i:07}\n")).collect();
    let tail = &stream[stream.len() - max_output_bytes as usize..];
    for (tool, args) in [
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "x"})),
    ] {
        let result = registry.call(tool, &args, &exec(work.path())).await;
        let text = format!(
            "Error: {tool} search failed (exit 2): {} [stderr truncated]",
            tail.trim()
        );
        assert_failure(&result, "SEARCH_FAILED", &text);
        assert!(result.text.len() < max_output_bytes as usize + 100);
    }
}

#[tokio::test]
async fn a_fake_rg_exit_2_after_stdout_over_the_cap_is_classified_by_its_exit_first() {
    // §7.2: the exit classification (step 6) precedes the raw-output check
    // (step 7), so an rg that printed past the cap and then failed on an
    // unreadable file reports that failure.
    let fake = FakeRg::new(
        "head -c 300000 /dev/zero | tr '\\0' 'a'\necho 'rg: ./locked: Permission denied (os error 13)' >&2\nexit 2\n",
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let registry = registry(
        Some(&fake),
        LocalBashConfig::default(),
        json!({"sampleOverCapGlobResults": true, "rawOutputMaxBytes": 1000}),
    )
    .await;
    let result = registry
        .call("grep", &json!({"pattern": "x"}), &exec(work.path()))
        .await;
    assert_failure(
        &result,
        "SEARCH_FAILED",
        "Error: grep search failed (exit 2): rg: ./locked: Permission denied (os error 13)",
    );
}

#[tokio::test]
async fn an_executor_timeout_after_fake_rg_stdout_over_the_cap_is_reported_as_the_timeout() {
    // §7.2: `timedOut` (step 4) precedes the raw-output check (step 7).
    let fake = FakeRg::new("head -c 300000 /dev/zero | tr '\\0' 'a'\nexec sleep 30\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let registry = registry(
        Some(&fake),
        LocalBashConfig {
            timeout_ms: 1000,
            grace_ms: 200,
            ..LocalBashConfig::default()
        },
        json!({"sampleOverCapGlobResults": true, "rawOutputMaxBytes": 1000}),
    )
    .await;
    let result = registry
        .call("glob", &json!({"pattern": "*"}), &exec(work.path()))
        .await;
    assert_failure(
        &result,
        "SEARCH_ABORTED",
        "Error: glob timed out after 1000ms in the bash executor; narrow pattern, path, or include and retry",
    );
}

/// An endless stdout from a group with a SIGTERM-ignoring child.
const ENDLESS_RG: &str =
    "echo $$ > \"$STATE/leader.pid\"\n(trap '' TERM; exec sleep 300) &\nyes aaaaaaaaaaaaaaaa\n";

#[tokio::test]
async fn the_stop_at_raw_output_cap_opt_in_ends_an_endless_fake_rg_flood_and_its_whole_group() {
    use fs_search_test_support::reliability::procfs::{kill_group, live_group_members, proc_info};
    let fake = FakeRg::new(ENDLESS_RG).unwrap();
    let work = tempfile::tempdir().unwrap();
    let registry = registry(
        Some(&fake),
        LocalBashConfig {
            grace_ms: 300,
            ..LocalBashConfig::default()
        },
        json!({"sampleOverCapGlobResults": true, "rawOutputMaxBytes": 100000, "stopAtRawOutputCap": true}),
    )
    .await;
    for tool in ["glob", "grep"] {
        let result = registry
            .call(tool, &json!({"pattern": "a"}), &exec(work.path()))
            .await;
        let leader: i32 = std::fs::read_to_string(fake.state_dir().join("leader.pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let pgid = proc_info(leader).map_or(leader, |p| p.pgid);
        // The executor returns only once the group is gone: checked at once.
        let survivors = live_group_members(pgid).unwrap();
        kill_group(pgid);
        assert!(survivors.is_empty(), "{survivors:?}");
        assert_failure(
            &result,
            "SEARCH_RAW_OUTPUT_OVERFLOW",
            &overflow_text(tool, 100000),
        );
    }
}

/// The real local executor, recording which run mode the pipeline asked
/// for (a spy: nothing is faked).
struct RunSpy {
    inner: fs_search_exec::LocalBashExecutor,
    calls: std::sync::Mutex<Vec<&'static str>>,
}

#[async_trait::async_trait]
impl fs_search_engine::BashExecutor for RunSpy {
    fn resolve(
        &self,
        request: fs_search_engine::bash::BashRequest,
    ) -> Result<fs_search_engine::bash::BashSpec, fs_search_engine::bash::BashError> {
        self.inner.resolve(request)
    }

    async fn run(
        &self,
        spec: fs_search_engine::bash::BashSpec,
        mode: fs_search_engine::bash::RunMode,
    ) -> Result<fs_search_engine::bash::RunOutcome, fs_search_engine::bash::BashError> {
        let kind = match (mode.over_cap, mode.sink.is_some()) {
            (None, _) => "whole",
            (Some(_), false) => "capped",
            (Some(_), true) => "streamed",
        };
        self.calls.lock().unwrap().push(kind);
        self.inner.run(spec, mode).await
    }
}

#[tokio::test]
async fn rg_output_is_streamed_by_default_and_collected_first_with_the_stop_at_cap_opt_in() {
    let work = tempfile::tempdir().unwrap();
    for (name, text) in [("a.txt", "one needle\n"), ("b.txt", "two needle\nneedle\n")] {
        std::fs::write(work.path().join(name), text).unwrap();
    }
    // rg searches the two files on parallel threads, so grep's file order
    // may differ between two runs whatever the executor path; an rg config
    // file (the executor's env overlay, not the process env) pins it to
    // path order, so the pages below are compared whole and exactly.
    let rg_config = work.path().join("ripgreprc");
    std::fs::write(&rg_config, "--sort=path\n").unwrap();
    let mut results = Vec::new();
    for (stop, expected) in [(false, "streamed"), (true, "capped")] {
        let executor = LocalBashConfig {
            env: [(
                "RIPGREP_CONFIG_PATH".to_owned(),
                rg_config.display().to_string(),
            )]
            .into(),
            ..LocalBashConfig::default()
        };
        let spy = std::sync::Arc::new(RunSpy {
            inner: fs_search_exec::LocalBashExecutor::new(executor).unwrap(),
            calls: std::sync::Mutex::new(Vec::new()),
        });
        let config = json!({"sampleOverCapGlobResults": true, "stopAtRawOutputCap": stop});
        let registry = load(spy.clone(), &config).await.unwrap();
        spy.calls.lock().unwrap().clear();
        for tool in ["glob", "grep"] {
            let pattern = if tool == "glob" { "*.txt" } else { "needle" };
            let result = registry
                .call(tool, &json!({"pattern": pattern}), &exec(work.path()))
                .await;
            assert_eq!(result.error, None, "{tool} {stop}: {}", result.text);
            results.push((stop, tool, result.text.clone(), result.value.clone()));
        }
        assert_eq!(
            *spy.calls.lock().unwrap(),
            [expected, expected],
            "stopAtRawOutputCap {stop}"
        );
    }
    // The pin took: grep's page shows a.txt's group before b.txt's.
    let grep_page = &results[1].2;
    match (grep_page.find("a.txt"), grep_page.find("b.txt")) {
        (Some(a), Some(b)) => assert!(a < b, "{grep_page}"),
        _ => panic!("both files in the page: {grep_page}"),
    }
    // The same pages and values either way.
    let (streamed, collected) = results.split_at(2);
    for (a, b) in streamed.iter().zip(collected) {
        assert_eq!((&a.1, &a.2, &a.3), (&b.1, &b.2, &b.3));
    }
}
