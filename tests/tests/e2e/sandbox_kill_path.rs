//! The kill path under the sandboxed executor: the fake rgs of
//! `reliability_cancellation` and `process_hygiene` (one that ignores
//! SIGTERM and leaves children, one that honours it, one that forks
//! grandchildren that ignore it) run inside bubblewrap, and each way a
//! call is ended — the executor's timeout, the timeout policy, caller
//! cancellation, the stdout-cap stop — leaves no process behind (bwrap,
//! its init, bash, rg or any child) at the moment the call returns.
//!
//! Inside the sandbox a fake keeps its state in the sandbox's private
//! `/tmp` (the rest is read-only), so the test finds its processes from
//! outside: by the fake's own path in their command lines (bwrap names it
//! in a bind, the script's bash runs it), and the group they share. The
//! executor runs commands on an agent in a long-lived sandbox; a run it
//! ends takes that sandbox with it, so at the call's return no bwrap
//! naming the fake is left either.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use fs_search_engine::{ExecContext, Host, Registry, ToolResult};

use fs_search_exec::{LocalBashConfig, Runner, SandboxBashExecutor, SandboxConfig};
use fs_search_test_support::reliability::FakeRg;
use fs_search_test_support::reliability::procfs::{
    descendants, kill_group, live_group_members, proc_info,
};
use serde_json::json;

use super::process_hygiene::{FORKING_RG, FORKING_TIMEOUT_MS};
use super::reliability_cancellation::{
    BLOCKING_RG, GRACE_MS, LONG_GRACE_MS, STUBBORN_RG, TIMEOUT_MS,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    ExecutorTimeout,
    TimeoutPolicy,
    CallerCancel,
    StdoutCap,
}

/// A fake rg (its script run in the sandbox with `/tmp` as its state)
/// and the workspace it searches.
struct Sandboxed {
    fake: FakeRg,
    work: tempfile::TempDir,
}

impl Sandboxed {
    fn new(script: &str, flood: bool) -> Self {
        let flood = if flood { ": > \"$STATE/flood\"\n" } else { "" };
        let body = format!("STATE=/tmp\n{flood}{script}");
        Self {
            fake: FakeRg::new(&body).unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    async fn registry(&self, trigger: Trigger, timeout_ms: u64, grace_ms: u64) -> Registry {
        let bash = SandboxBashExecutor::new(
            LocalBashConfig {
                cwd: Some(self.work.path().to_string_lossy().into_owned()),
                timeout_ms: if trigger == Trigger::ExecutorTimeout {
                    timeout_ms
                } else {
                    60_000
                },
                grace_ms,
                env: BTreeMap::from([("PATH".to_owned(), self.fake.path_env())]),
                ..LocalBashConfig::default()
            },
            // The fakes are bash scripts that run coreutils (`sleep`,
            // `wc`, `mv`) and their libraries: the operator's extras show
            // them.
            SandboxConfig {
                runner: Runner::Bwrap,
                read_only: vec!["/usr/bin".into(), "/bin".into(), "/usr/lib".into()],
                ..SandboxConfig::default()
            },
        )
        .unwrap();
        let mut registry = Registry::new(Host {
            bash: Some(Arc::new(bash)),
            spill_store: None,
            timeout_policy: trigger == Trigger::TimeoutPolicy,
        });
        let mut config = json!({"sampleOverCapGlobResults": true});
        match trigger {
            Trigger::TimeoutPolicy => config["timeoutMs"] = json!(timeout_ms),
            Trigger::StdoutCap => {
                config["rawOutputMaxBytes"] = json!(100_000);
                config["stopAtRawOutputCap"] = json!(true);
            }
            _ => {}
        }
        registry.load_fs_search(&config).await.unwrap();
        registry
    }

    /// The processes, alive, whose command line names the fake.
    fn fake_processes(&self) -> Vec<i32> {
        let needle = self.fake.bin_dir().to_string_lossy().into_owned();
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter(|&pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                String::from_utf8_lossy(&cmdline).contains(&needle)
                    && proc_info(pid).is_some_and(|info| info.is_alive())
            })
            .collect()
    }

    /// The fake's process group, once it has `sleepers` sleeping members;
    /// `None` when the call returned first (`returned`), as a stdout-cap
    /// stop can on a loaded machine, before a child has exec'd its sleep.
    async fn wait_for_group(&self, sleepers: usize, returned: &AtomicBool) -> Option<i32> {
        let started = Instant::now();
        loop {
            if returned.load(Ordering::SeqCst) {
                return None;
            }
            // The executor's agent names the fake too (its sandbox binds
            // it) but sleeps in a group of its own, below which the call's
            // group runs (whose fake may have exec'd its sleep already):
            // the call's group is the one with the sleepers.
            let named = self.fake_processes();
            let below = named.iter().flat_map(|&pid| descendants(pid));
            let candidates: Vec<i32> = named
                .iter()
                .copied()
                .chain(below.map(|(pid, _)| pid))
                .collect();
            for pid in candidates {
                let Some(info) = proc_info(pid) else { continue };
                let sleeping = live_group_members(info.pgid)
                    .unwrap_or_default()
                    .iter()
                    .filter(|member| {
                        std::fs::read_to_string(format!("/proc/{}/comm", member.pid))
                            .is_ok_and(|comm| comm.trim() == "sleep")
                    })
                    .count();
                if sleeping >= sleepers {
                    return Some(info.pgid);
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the fake rg never started in the sandbox"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

struct Ended {
    result: ToolResult,
    group_size: usize,
    trigger_to_return: Duration,
}

/// Runs grep on `script` in the sandbox, ends it by `trigger` once
/// `sleepers` of its processes sleep, and checks at the call's return
/// that nothing of it runs.
async fn end(
    script: &str,
    trigger: Trigger,
    sleepers: usize,
    timeout_ms: u64,
    grace_ms: u64,
) -> Ended {
    let sandboxed = Sandboxed::new(script, trigger == Trigger::StdoutCap);
    let registry = sandboxed.registry(trigger, timeout_ms, grace_ms).await;
    let exec = ExecContext::new("c")
        .with_session(Some("s"), Some(&sandboxed.work.path().to_string_lossy()));
    let signal = exec.signal.clone();
    let started = Instant::now();
    let args = json!({"pattern": "x"});
    let returned = AtomicBool::new(false);
    let call = async {
        let result = registry.call("grep", &args, &exec).await;
        returned.store(true, Ordering::SeqCst);
        result
    };
    let watch = async {
        let Some(pgid) = sandboxed.wait_for_group(sleepers, &returned).await else {
            return (None, 0, Instant::now());
        };
        let group_size = live_group_members(pgid).unwrap().len();
        let triggered = match trigger {
            Trigger::CallerCancel => {
                signal.cancel();
                Instant::now()
            }
            Trigger::StdoutCap => Instant::now(),
            _ => started + Duration::from_millis(timeout_ms),
        };
        (Some(pgid), group_size, triggered)
    };
    let (result, (pgid, group_size, triggered)) = tokio::join!(call, watch);
    let returned = Instant::now();
    // Checked at once: the call's return is the moment that counts.
    let live = pgid
        .map(|pgid| live_group_members(pgid).unwrap())
        .unwrap_or_default();
    let named = sandboxed.fake_processes();
    if let Some(pgid) = pgid {
        kill_group(pgid);
    }
    assert!(
        live.is_empty(),
        "{trigger:?}: group {pgid:?} still has {live:?}"
    );
    assert!(named.is_empty(), "{trigger:?}: still running: {named:?}");
    Ended {
        result,
        group_size,
        trigger_to_return: returned.saturating_duration_since(triggered),
    }
}

fn expected(trigger: Trigger, timeout_ms: u64) -> (String, &'static str) {
    match trigger {
        Trigger::ExecutorTimeout => (
            format!("Error: grep timed out after {timeout_ms}ms in the bash executor; narrow pattern, path, or include and retry"),
            "SEARCH_ABORTED",
        ),
        Trigger::TimeoutPolicy => (
            format!("Error: tool call timed out after {timeout_ms}ms"),
            "TOOL_TIMEOUT",
        ),
        Trigger::CallerCancel => (
            "Error: grep was aborted before completion (tool timeout or caller cancellation)".to_owned(),
            "SEARCH_ABORTED",
        ),
        Trigger::StdoutCap => (
            "Error: grep produced more raw output than the bash executor retained within the 100000-byte cap; narrow pattern, path, or include and retry".to_owned(),
            "SEARCH_RAW_OUTPUT_OVERFLOW",
        ),
    }
}

fn assert_result(ended: &Ended, trigger: Trigger, timeout_ms: u64) {
    let (text, code) = expected(trigger, timeout_ms);
    assert_eq!(ended.result.text, text);
    assert_eq!(
        ended.result.error.as_ref().and_then(|e| e.code_str()),
        Some(code)
    );
}

async fn a_stubborn_fake_rg_and_its_children_are_killed(trigger: Trigger) {
    let ended = end(STUBBORN_RG, trigger, 3, TIMEOUT_MS, GRACE_MS).await;
    assert_result(&ended, trigger, TIMEOUT_MS);
    // The fake and its three children (with a subshell), in the group the
    // agent made for the command.
    assert!(ended.group_size >= 4, "{}", ended.group_size);
    // The fake ignores SIGTERM: SIGKILL follows the grace period, and the
    // agent's whole sandbox goes with the run, so nothing is left later.
    assert!(
        ended.trigger_to_return < Duration::from_millis(GRACE_MS + 5000),
        "{:?}",
        ended.trigger_to_return
    );
}

#[tokio::test]
async fn sandbox_executor_timeout_kills_a_fake_rg_that_ignores_sigterm_and_its_children() {
    a_stubborn_fake_rg_and_its_children_are_killed(Trigger::ExecutorTimeout).await;
}

#[tokio::test]
async fn sandbox_timeout_policy_kills_a_fake_rg_that_ignores_sigterm_and_its_children() {
    a_stubborn_fake_rg_and_its_children_are_killed(Trigger::TimeoutPolicy).await;
}

#[tokio::test]
async fn sandbox_caller_cancellation_kills_a_fake_rg_that_ignores_sigterm_and_its_children() {
    a_stubborn_fake_rg_and_its_children_are_killed(Trigger::CallerCancel).await;
}

#[tokio::test]
async fn sandbox_a_fake_rg_that_honours_sigterm_ends_without_waiting_for_the_grace_period() {
    for trigger in [
        Trigger::ExecutorTimeout,
        Trigger::TimeoutPolicy,
        Trigger::CallerCancel,
    ] {
        let ended = end(BLOCKING_RG, trigger, 1, TIMEOUT_MS, LONG_GRACE_MS).await;
        assert_result(&ended, trigger, TIMEOUT_MS);
        assert!(
            ended.trigger_to_return < Duration::from_millis(LONG_GRACE_MS / 2),
            "{trigger:?}: {:?}",
            ended.trigger_to_return
        );
    }
}

#[tokio::test]
async fn sandbox_every_kill_path_leaves_no_descendant_of_a_forking_fake_rg_running() {
    for trigger in [
        Trigger::CallerCancel,
        Trigger::ExecutorTimeout,
        Trigger::TimeoutPolicy,
        Trigger::StdoutCap,
    ] {
        let ended = end(FORKING_RG, trigger, 2, FORKING_TIMEOUT_MS, 300).await;
        assert_result(&ended, trigger, FORKING_TIMEOUT_MS);
    }
}

/// Where the workspace is gone, the sandbox cannot bind it: the run fails
/// to start (as a missing working directory does), and nothing is left.
#[tokio::test]
async fn sandbox_a_vanished_workspace_fails_the_call_as_an_unusable_working_directory() {
    let sandboxed = Sandboxed::new("exec sleep 300\n", false);
    let registry = sandboxed.registry(Trigger::CallerCancel, 60_000, 300).await;
    let root = sandboxed.work.path().to_path_buf();
    std::fs::remove_dir(&root).unwrap();
    let exec = ExecContext::new("c").with_session(Some("s"), Some(&root.to_string_lossy()));
    let result = registry.call("glob", &json!({"pattern": "*"}), &exec).await;
    assert_eq!(
        result.text,
        "Error: glob could not start its search command (unusable working directory or missing shell)"
    );
    assert!(sandboxed.fake_processes().is_empty());
    // Recreated for the temp dir's own removal.
    std::fs::create_dir(&root).unwrap();
}
