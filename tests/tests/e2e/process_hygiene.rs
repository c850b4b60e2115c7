//! A cancelled or timed-out call leaves no process of its group alive, and
//! it returns only once that is so: every check below runs the moment the
//! call's result is back, without waiting. A fake `rg` (injected first on
//! PATH) records its process group, spawns a sleeping child, and ignores
//! SIGTERM, so only the group-wide SIGKILL after the grace period can end
//! it. A second fake honours SIGTERM itself but first forks children and
//! grandchildren that ignore it: killing rg must not let them escape.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs_search_engine::{ExecContext, Host, Registry, ToolResult};

use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
use fs_search_test_support::reliability::FakeRg;
use fs_search_test_support::reliability::procfs::{kill_group, live_group_members, proc_info};
use serde_json::json;

struct StubbornRg {
    fake: FakeRg,
}

impl StubbornRg {
    fn new() -> Self {
        let body = "trap '' TERM\nread -r _ _ _ _ pgid _ < /proc/$$/stat\nsleep 300 &\necho \"$pgid\" > \"$STATE/pgid\"\nwait\n";
        Self::with_body(body)
    }

    fn with_body(body: &str) -> Self {
        Self {
            fake: FakeRg::new(body).unwrap(),
        }
    }

    fn pgid_file(&self) -> PathBuf {
        self.fake.state_dir().join("pgid")
    }

    async fn registry(&self, executor_timeout_ms: u64, policy_timeout_ms: Option<u64>) -> Registry {
        self.registry_with(executor_timeout_ms, policy_timeout_ms, json!({}))
            .await
    }

    /// A registry whose tool config is the usual one plus `extra`.
    async fn registry_with(
        &self,
        executor_timeout_ms: u64,
        policy_timeout_ms: Option<u64>,
        extra: serde_json::Value,
    ) -> Registry {
        let path = self.fake.path_env();
        let bash = LocalBashExecutor::new(LocalBashConfig {
            cwd: Some(self.fake.state_dir().to_string_lossy().into_owned()),
            timeout_ms: executor_timeout_ms,
            grace_ms: 300,
            env: BTreeMap::from([("PATH".to_owned(), path)]),
            ..LocalBashConfig::default()
        })
        .unwrap();
        let mut registry = Registry::new(Host {
            bash: Some(Arc::new(bash)),
            spill_store: None,
            timeout_policy: policy_timeout_ms.is_some(),
        });
        let mut config = json!({"sampleOverCapGlobResults": true, "timeoutMs": policy_timeout_ms.unwrap_or(30000)});
        for (key, value) in extra.as_object().into_iter().flatten() {
            config[key] = value.clone();
        }
        registry.load_fs_search(&config).await.unwrap();
        registry
    }
}

async fn wait_for(path: &Path) -> i32 {
    let started = Instant::now();
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pgid) = text.trim().parse()
        {
            return pgid;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "fake rg never started"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn assert_group_gone(pgid: i32) {
    let live = live_group_members(pgid).unwrap();
    assert!(live.is_empty(), "group {pgid} still has {live:?}");
}

fn text_and_code(result: &ToolResult) -> (&str, Option<&str>) {
    (
        result.text.as_str(),
        result.error.as_ref().and_then(|e| e.code_str()),
    )
}

#[tokio::test]
async fn caller_cancellation_kills_the_whole_group() {
    let rg = StubbornRg::new();
    let registry = rg.registry(60_000, None).await;
    let exec = ExecContext::new("c");
    let signal = exec.signal.clone();
    let pgid_file = rg.pgid_file();
    let canceller = async {
        let pgid = wait_for(&pgid_file).await;
        signal.cancel();
        pgid
    };
    let args = json!({"pattern": "x"});
    let (result, pgid) = tokio::join!(registry.call("grep", &args, &exec), canceller);
    assert_eq!(
        text_and_code(&result),
        (
            "Error: grep was aborted before completion (tool timeout or caller cancellation)",
            Some("SEARCH_ABORTED")
        )
    );
    assert_group_gone(pgid);
}

#[tokio::test]
async fn the_executor_timeout_kills_the_whole_group() {
    let rg = StubbornRg::new();
    let registry = rg.registry(300, None).await;
    let result = registry
        .call("glob", &json!({"pattern": "*"}), &ExecContext::new("c"))
        .await;
    assert_eq!(
        text_and_code(&result),
        (
            "Error: glob timed out after 300ms in the bash executor; narrow pattern, path, or include and retry",
            Some("SEARCH_ABORTED")
        )
    );
    assert_group_gone(wait_for(&rg.pgid_file()).await);
}

#[tokio::test]
async fn the_timeout_policy_kills_the_whole_group() {
    let rg = StubbornRg::new();
    let registry = rg.registry(60_000, Some(300)).await;
    let result = registry
        .call("grep", &json!({"pattern": "x"}), &ExecContext::new("c"))
        .await;
    assert_eq!(
        text_and_code(&result),
        (
            "Error: tool call timed out after 300ms",
            Some("TOOL_TIMEOUT")
        )
    );
    assert_eq!(
        result.error.as_ref().and_then(|e| e.name()),
        Some("ToolTimeoutError")
    );
    assert_group_gone(wait_for(&rg.pgid_file()).await);
}

/// rg that dies on SIGTERM like the real one, but first forks a subshell
/// that forks a sleeper and a second subshell with a sleeper of its own —
/// rg's children, grandchildren and great-grandchildren, all ignoring
/// SIGTERM, all in rg's group. Each records its pid in `$STATE/pids`;
/// once all five are there rg records its group in `$STATE/pgid` and
/// then waits, or with `FLOOD=1` floods stdout (through `yes`, which
/// honours SIGTERM).
pub(crate) const FORKING_RG: &str = r#"echo $BASHPID >> "$STATE/pids"
(
  trap '' TERM
  echo $BASHPID >> "$STATE/pids"
  (echo $BASHPID >> "$STATE/pids"; exec sleep 300) &
  (
    echo $BASHPID >> "$STATE/pids"
    (echo $BASHPID >> "$STATE/pids"; exec sleep 300) &
    wait
  ) &
  wait
) &
until [ "$(wc -l < "$STATE/pids")" -ge 5 ]; do sleep 0.01; done
read -r _ _ _ _ pgid _ < /proc/$$/stat
echo "$pgid" > "$STATE/pgid.tmp" && mv "$STATE/pgid.tmp" "$STATE/pgid"
if [ -e "$STATE/flood" ]; then yes aaaaaaaaaaaaaaaa; else wait; fi
"#;

/// How a forking-rg call is ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum KillPath {
    CallerCancel,
    ExecutorTimeout,
    TimeoutPolicy,
    StdoutCap,
}

/// The timeouts of the timeout paths: long enough for the fake to fork all
/// five processes first, even on a loaded 2-core machine.
pub(crate) const FORKING_TIMEOUT_MS: u64 = 2000;

/// Runs `grep` on [`FORKING_RG`], ends it by `path`, and checks at the
/// moment the result is back that none of rg's descendants is running
/// (zombies waiting for a reaper excepted) and its group has no live member.
async fn a_killed_forking_rg_leaves_no_descendant(path: KillPath) {
    let rg = StubbornRg::with_body(FORKING_RG);
    let (executor_timeout, policy_timeout, extra) = match path {
        KillPath::CallerCancel => (60_000, None, json!({})),
        KillPath::ExecutorTimeout => (FORKING_TIMEOUT_MS, None, json!({})),
        KillPath::TimeoutPolicy => (60_000, Some(FORKING_TIMEOUT_MS), json!({})),
        KillPath::StdoutCap => (
            60_000,
            None,
            json!({"rawOutputMaxBytes": 100_000, "stopAtRawOutputCap": true}),
        ),
    };
    if path == KillPath::StdoutCap {
        rg.fake.write_state("flood", b"").unwrap();
    }
    let registry = rg
        .registry_with(executor_timeout, policy_timeout, extra)
        .await;
    let exec = ExecContext::new("c");
    let signal = exec.signal.clone();
    let pgid_file = rg.pgid_file();
    let watcher = async {
        let pgid = wait_for(&pgid_file).await;
        if path == KillPath::CallerCancel {
            signal.cancel();
        }
        pgid
    };
    let args = json!({"pattern": "x"});
    let (result, pgid) = tokio::join!(registry.call("grep", &args, &exec), watcher);
    // Checked before anything else: the call's return is the moment that counts.
    let live = live_group_members(pgid).unwrap();
    let pids: Vec<i32> = std::fs::read_to_string(rg.fake.state_dir().join("pids"))
        .unwrap()
        .lines()
        .map(|line| line.parse().unwrap())
        .collect();
    let running: Vec<_> = pids
        .iter()
        .filter_map(|&pid| proc_info(pid))
        .filter(|info| info.pgid == pgid && info.is_alive())
        .collect();
    kill_group(pgid);
    assert_eq!(pids.len(), 5, "rg and its four descendants: {pids:?}");
    assert!(live.is_empty(), "{path:?}: group {pgid} still has {live:?}");
    assert!(running.is_empty(), "{path:?}: still running: {running:?}");
    let expected = match path {
        KillPath::CallerCancel => (
            "Error: grep was aborted before completion (tool timeout or caller cancellation)",
            Some("SEARCH_ABORTED"),
        ),
        KillPath::ExecutorTimeout => (
            "Error: grep timed out after 2000ms in the bash executor; narrow pattern, path, or include and retry",
            Some("SEARCH_ABORTED"),
        ),
        KillPath::TimeoutPolicy => (
            "Error: tool call timed out after 2000ms",
            Some("TOOL_TIMEOUT"),
        ),
        KillPath::StdoutCap => (
            "Error: grep produced more raw output than the bash executor retained within the 100000-byte cap; narrow pattern, path, or include and retry",
            Some("SEARCH_RAW_OUTPUT_OVERFLOW"),
        ),
    };
    assert_eq!(text_and_code(&result), expected);
}

#[tokio::test]
async fn caller_cancellation_leaves_no_descendant_of_a_forking_fake_rg_running() {
    a_killed_forking_rg_leaves_no_descendant(KillPath::CallerCancel).await;
}

#[tokio::test]
async fn the_executor_timeout_leaves_no_descendant_of_a_forking_fake_rg_running() {
    a_killed_forking_rg_leaves_no_descendant(KillPath::ExecutorTimeout).await;
}

#[tokio::test]
async fn the_timeout_policy_leaves_no_descendant_of_a_forking_fake_rg_running() {
    a_killed_forking_rg_leaves_no_descendant(KillPath::TimeoutPolicy).await;
}

#[tokio::test]
async fn the_stdout_cap_stop_leaves_no_descendant_of_a_forking_fake_rg_running() {
    a_killed_forking_rg_leaves_no_descendant(KillPath::StdoutCap).await;
}
