//! Running tool calls for one MCP connection: the same path as `workbench
//! call` (the registry with the timeout policy and the spill store), one
//! engine session per connection (a session id fixed for the connection,
//! cwd = the workdir), at most [`MAX_IN_FLIGHT`] calls at once (more
//! queue), each with its own abort signal under the connection's, so a
//! client's `notifications/cancelled` aborts one call and shutdown aborts
//! them all; shutdown then waits until every call has returned, that is
//! until the engine has killed every rg group it started.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use fs_search_engine::{ExecContext, Registry, ToolResult};
use serde_json::Value;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// Calls that run at once; further calls wait for a slot.
pub(crate) const MAX_IN_FLIGHT: usize = 16;

/// How often a call with a progress token reports that it is still running.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(500);

/// One finished call.
pub(crate) struct Finished {
    /// The connection's call number, from 1.
    pub number: u64,
    pub result: ToolResult,
    pub duration_ms: f64,
    /// Aborted by the client or by shutdown (not a completed call).
    pub cancelled: bool,
}

/// Sends "still running" progress while a call runs (`tick` counts from 1).
pub(crate) trait Progress: Send {
    fn tick(&mut self, tick: u64) -> impl Future<Output = ()> + Send;
}

/// The calls of one connection.
pub(crate) struct CallRunner {
    registry: Arc<Registry>,
    slots: Semaphore,
    session_id: String,
    workdir: String,
    shutdown: CancellationToken,
    tracker: TaskTracker,
    next: AtomicU64,
}

impl CallRunner {
    /// A connection over a registry other connections share: its own
    /// engine session (so its own spill directory) and its own slots.
    pub(crate) fn shared(registry: Arc<Registry>, workdir: String) -> Self {
        Self {
            registry,
            slots: Semaphore::new(MAX_IN_FLIGHT),
            session_id: ExecContext::fresh_id("mcp"),
            workdir,
            shutdown: CancellationToken::new(),
            tracker: TaskTracker::new(),
            next: AtomicU64::new(1),
        }
    }

    pub(crate) fn registry(&self) -> &Registry {
        &self.registry
    }

    /// The engine session id every call of this connection carries.
    pub(crate) fn session_id(&self) -> &str {
        &self.session_id
    }

    /// Runs one call; `cancel` is the client's cancellation of it.
    pub(crate) async fn run<P: Progress>(
        &self,
        tool: &str,
        args: &Value,
        cancel: &CancellationToken,
        progress: Option<P>,
    ) -> Finished {
        self.tracker
            .track_future(self.run_inner(tool, args, cancel, progress))
            .await
    }

    async fn run_inner<P: Progress>(
        &self,
        tool: &str,
        args: &Value,
        cancel: &CancellationToken,
        mut progress: Option<P>,
    ) -> Finished {
        let number = self.next.fetch_add(1, Ordering::Relaxed);
        let signal = self.shutdown.child_token();
        let started = Instant::now();
        // Wait for a slot; a call cancelled while it waits still goes to the
        // engine, which answers with its aborted-before-dispatch result.
        let _slot = tokio::select! {
            slot = self.slots.acquire() => slot.ok(),
            () = cancel.cancelled() => None,
            () = signal.cancelled() => None,
        };
        if cancel.is_cancelled() {
            signal.cancel();
        }
        let exec = ExecContext::new(ExecContext::fresh_id(&format!("call-{number}")))
            .with_session(Some(&self.session_id), Some(&self.workdir))
            .with_signal(signal.clone());
        let call = self.registry.call(tool, args, &exec);
        tokio::pin!(call);
        // The first report is due one period after the start: an interval's
        // immediate first tick would still wait for the timer wheel's next
        // millisecond before the call could start.
        let mut ticker =
            tokio::time::interval_at(tokio::time::Instant::now() + PROGRESS_EVERY, PROGRESS_EVERY);
        let mut ticks = 0;
        let result = loop {
            tokio::select! {
                result = &mut call => break result,
                () = cancel.cancelled(), if !signal.is_cancelled() => {
                    tracing::info!(number, tool, "the client cancelled the call");
                    signal.cancel();
                }
                _ = ticker.tick(), if progress.is_some() && !signal.is_cancelled() => {
                    ticks += 1;
                    if let Some(progress) = progress.as_mut() {
                        progress.tick(ticks).await;
                    }
                }
            }
        };
        Finished {
            number,
            result,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
            cancelled: signal.is_cancelled(),
        }
    }

    /// Aborts every call in flight and every queued one.
    pub(crate) fn cancel_all(&self) {
        self.shutdown.cancel();
    }

    /// Waits until no call is running (the engine has killed their rg
    /// groups), at most `limit`; false when calls are still running.
    pub(crate) async fn wait_idle(&self, limit: Duration) -> bool {
        self.tracker.close();
        tokio::time::timeout(limit, self.tracker.wait())
            .await
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;
    use fs_search_engine::{
        BashExecutor, Host,
        bash::{BashError, BashRequest, BashRunResult, BashSpec, CappedRun, RunMode, RunOutcome},
    };
    use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
    use serde_json::json;

    use super::*;

    /// The local executor's `resolve`, and a `run` that notes the (paused)
    /// clock when the call's command reaches it and answers "no matches".
    struct ClockNotingExecutor {
        resolve: LocalBashExecutor,
        reached: Mutex<Vec<tokio::time::Instant>>,
    }

    #[async_trait]
    impl BashExecutor for ClockNotingExecutor {
        fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
            self.resolve.resolve(request)
        }

        async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
            let probe = spec.command == fs_search_engine::registry::PROBE_COMMAND;
            if !probe {
                self.reached
                    .lock()
                    .unwrap()
                    .push(tokio::time::Instant::now());
            }
            Ok(mode.kept(CappedRun::Finished(BashRunResult {
                exit_code: Some(if probe { 0 } else { 1 }),
                timeout_ms: spec.timeout_ms,
                ..BashRunResult::default()
            })))
        }
    }

    struct NoProgress;

    impl Progress for NoProgress {
        async fn tick(&mut self, _tick: u64) {}
    }

    /// With the clock paused, any timer the call awaited before reaching
    /// the executor would show as time gone by (tokio advances a paused
    /// clock to the next timer, at least a millisecond, when nothing else
    /// can run).
    #[tokio::test(start_paused = true)]
    async fn a_call_reaches_the_executor_without_waiting_for_a_timer_with_a_clock_noting_executor()
    {
        let executor = Arc::new(ClockNotingExecutor {
            resolve: LocalBashExecutor::new(LocalBashConfig::default()).unwrap(),
            reached: Mutex::new(Vec::new()),
        });
        let mut registry = Registry::new(Host {
            bash: Some(executor.clone()),
            spill_store: None,
            timeout_policy: true,
        });
        registry
            .load_fs_search(&json!({"sampleOverCapGlobResults": true}))
            .await
            .unwrap();
        let runner = CallRunner::shared(Arc::new(registry), "/".to_owned());
        for progress in [None, Some(NoProgress)] {
            // Off the millisecond grid: a timer due "now" is then rounded up
            // to the next millisecond, as it almost always is on a real clock.
            tokio::time::advance(Duration::from_micros(300)).await;
            let started = tokio::time::Instant::now();
            let finished = runner
                .run(
                    "grep",
                    &json!({"pattern": "x"}),
                    &CancellationToken::new(),
                    progress,
                )
                .await;
            assert_eq!(finished.result.text, "No matches found");
            let reached = executor.reached.lock().unwrap().pop().unwrap();
            assert_eq!(reached - started, Duration::ZERO);
        }
    }
}
