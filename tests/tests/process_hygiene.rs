//! A cancelled or timed-out call leaves no process of its group alive.
//! A fake `rg` (injected first on PATH) records its process group, spawns
//! a sleeping child, and ignores SIGTERM, so only the group-wide SIGKILL
//! after the grace period can end it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs_search_engine::{
    ExecContext, Host, LocalBashConfig, LocalBashExecutor, Registry, ToolResult,
};
use fs_search_tests::reliability::FakeRg;
use fs_search_tests::reliability::procfs::live_group_members;
use serde_json::json;

struct StubbornRg {
    fake: FakeRg,
}

impl StubbornRg {
    fn new() -> Self {
        let body = "trap '' TERM\nread -r _ _ _ _ pgid _ < /proc/$$/stat\nsleep 300 &\necho \"$pgid\" > \"$STATE/pgid\"\nwait\n";
        Self {
            fake: FakeRg::new(body).unwrap(),
        }
    }

    fn pgid_file(&self) -> PathBuf {
        self.fake.state_dir().join("pgid")
    }

    async fn registry(&self, executor_timeout_ms: u64, policy_timeout_ms: Option<u64>) -> Registry {
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
        let config = json!({"sampleOverCapGlobResults": true, "timeoutMs": policy_timeout_ms.unwrap_or(30000)});
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
