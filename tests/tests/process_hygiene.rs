//! A cancelled or timed-out call leaves no process of its group alive.
//! A fake `rg` (injected first on PATH) records its process group, spawns
//! a sleeping child, and ignores SIGTERM, so only the group-wide SIGKILL
//! after the grace period can end it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs_search_engine::quote::single_quote;
use fs_search_engine::{
    ExecContext, Host, LocalBashConfig, LocalBashExecutor, Registry, ToolResult,
};
use serde_json::json;

struct StubbornRg {
    dir: tempfile::TempDir,
}

impl StubbornRg {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let pgid_file = dir.path().join("pgid");
        let script = format!(
            "#!/bin/bash\ntrap '' TERM\nread -r _ _ _ _ pgid _ < /proc/$$/stat\nsleep 300 &\necho \"$pgid\" > {}\nwait\n",
            single_quote(&pgid_file.to_string_lossy())
        );
        let rg = dir.path().join("rg");
        std::fs::write(&rg, script).unwrap();
        std::fs::set_permissions(&rg, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { dir }
    }

    fn pgid_file(&self) -> PathBuf {
        self.dir.path().join("pgid")
    }

    async fn registry(&self, executor_timeout_ms: u64, policy_timeout_ms: Option<u64>) -> Registry {
        let path = format!(
            "{}:{}",
            self.dir.path().display(),
            std::env::var("PATH").unwrap()
        );
        let bash = LocalBashExecutor::new(LocalBashConfig {
            cwd: Some(self.dir.path().to_string_lossy().into_owned()),
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

/// Live (non-zombie) processes whose process group is `pgid`.
fn live_members(pgid: i32) -> Vec<i32> {
    let mut members = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // Fields after the parenthesised command name: state ppid pgrp ...
        let Some(rest) = stat.rsplit_once(") ").map(|(_, r)| r) else {
            continue;
        };
        let fields: Vec<&str> = rest.split(' ').collect();
        if fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid) && fields[0] != "Z" {
            members.push(pid);
        }
    }
    members
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
    assert!(
        live_members(pgid).is_empty(),
        "group {pgid} still has {:?}",
        live_members(pgid)
    );
}

fn text_and_code(result: &ToolResult) -> (&str, Option<&str>) {
    (
        result.text.as_str(),
        result.error.as_ref().and_then(|e| e.code),
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
        result.error.as_ref().and_then(|e| e.name),
        Some("ToolTimeoutError")
    );
    assert_group_gone(wait_for(&rg.pgid_file()).await);
}
