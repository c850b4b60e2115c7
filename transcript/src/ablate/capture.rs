//! rg runs once per recorded call, whatever the number of variants: a
//! [`CapturingExecutor`] wraps the real executor of every variant's
//! registry and shares one [`Captures`] store. The first request runs for
//! real and its outcome (the stdout bytes a streamed run handed its sink,
//! or the whole result of a capped run) is kept; a later request with the
//! identical command line, working directory, limits and environment is
//! answered from it. The key holds everything that decides rg's output or
//! how long it may run: the resolved spec (command, workdir, stdin, env,
//! executor timeout, stdout budget = `rawOutputMaxBytes`), the over-cap
//! mode (`stopAtRawOutputCap`), whether the caller streams, rg's config
//! file, and the call's `timeoutMs`; so a variant that changes one of them
//! runs rg again. Runs that were aborted or timed out are never reused
//! (their outcome depends on the moment), nor is anything while a call's
//! capture is switched off ([`Captures::set_enabled`]).
//!
//! Memory: the store holds the captures of one call; the ablation clears
//! it ([`Captures::clear`]) before the next call.

use std::collections::HashMap;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use fs_search_engine::{
    BashExecutor,
    bash::{
        BashError, BashRequest, BashRunResult, BashSpec, CappedRun, OverCap, RunMode, RunOutcome,
        StdoutSink,
    },
};
use serde_json::Value;

/// The config keys that limit the run itself rather than its rendering.
pub(super) const RUN_KEYS: [&str; 3] = ["rawOutputMaxBytes", "timeoutMs", "stopAtRawOutputCap"];

/// Bytes handed to a sink per write when a capture is replayed (what a
/// pipe read gives at most).
const REPLAY_CHUNK: usize = 64 * 1024;

/// Everything that decides what a run gives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CaptureKey {
    /// rg's config file and the call's run keys (see [`run_scope`]).
    scope: String,
    streamed: bool,
    stop_at_cap: bool,
    command: String,
    workdir: String,
    timeout_ms: u64,
    stdout_max_bytes: u64,
    stdin: Option<String>,
    env: Option<Vec<(String, String)>>,
    dsh_env: Option<Vec<(String, String)>>,
}

impl CaptureKey {
    fn new(scope: &str, spec: &BashSpec, streamed: bool, over_cap: OverCap) -> Self {
        let pairs = |map: &Option<std::collections::BTreeMap<String, String>>| {
            map.as_ref().map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<Vec<_>>()
            })
        };
        Self {
            scope: scope.to_owned(),
            streamed,
            stop_at_cap: over_cap == OverCap::Stop,
            command: spec.command.clone(),
            workdir: spec.workdir.clone(),
            timeout_ms: spec.timeout_ms,
            stdout_max_bytes: spec.stdout_max_bytes,
            stdin: spec.stdin.clone(),
            env: pairs(&spec.env),
            dsh_env: pairs(&spec.dsh_env),
        }
    }
}

/// One captured run.
#[derive(Debug)]
struct Capture {
    run: CappedRun,
    /// The executor handed stdout to the sink (not in `run`).
    to_sink: bool,
    /// What the sink was handed, in order.
    sink_bytes: Vec<u8>,
}

/// The captures of the call being ablated, shared by every variant's
/// executor, with counts of real runs and replayed ones.
#[derive(Debug, Default)]
pub(super) struct Captures {
    map: Mutex<HashMap<CaptureKey, Arc<Capture>>>,
    disabled: AtomicBool,
    runs: AtomicU64,
    replays: AtomicU64,
}

impl Captures {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Drops every capture (before the next call).
    pub(super) fn clear(&self) {
        if let Ok(mut map) = self.map.lock() {
            map.clear();
        }
    }

    /// `false`: every request runs for real and nothing is kept (a call
    /// whose outcome depends on timing, such as a cancellation).
    pub(super) fn set_enabled(&self, enabled: bool) {
        self.disabled.store(!enabled, Ordering::SeqCst);
    }

    /// Requests that ran rg for real.
    pub(super) fn runs(&self) -> u64 {
        self.runs.load(Ordering::SeqCst)
    }

    /// Requests answered from a capture.
    pub(super) fn replays(&self) -> u64 {
        self.replays.load(Ordering::SeqCst)
    }

    /// The bytes held now (stdout of the captured runs).
    pub(super) fn held_bytes(&self) -> usize {
        self.map
            .lock()
            .map(|map| {
                map.values()
                    .map(|c| c.sink_bytes.len() + held_in_run(&c.run))
                    .sum()
            })
            .unwrap_or(0)
    }

    fn get(&self, key: &CaptureKey) -> Option<Arc<Capture>> {
        if self.disabled.load(Ordering::SeqCst) {
            return None;
        }
        self.map.lock().ok()?.get(key).cloned()
    }

    fn keep(&self, key: CaptureKey, capture: Capture) {
        if self.disabled.load(Ordering::SeqCst) || !reusable(&capture.run) {
            return;
        }
        if let Ok(mut map) = self.map.lock() {
            map.insert(key, Arc::new(capture));
        }
    }
}

fn held_in_run(run: &CappedRun) -> usize {
    match run {
        CappedRun::Finished(r) => r.stdout.text.len() + r.stderr.text.len(),
        CappedRun::StdoutOverCap => 0,
    }
}

/// Whether a run's outcome is the same whenever it is asked again.
fn reusable(run: &CappedRun) -> bool {
    match run {
        CappedRun::Finished(r) => !r.aborted && !r.timed_out,
        CappedRun::StdoutOverCap => true,
    }
}

/// The part of the key a registry fixes: whether rg gets the header's
/// config file, and the values of [`RUN_KEYS`] in its effective config.
pub(super) fn run_scope(config: &Value, ripgrep_config: bool) -> String {
    let values: Vec<&Value> = RUN_KEYS
        .iter()
        .map(|key| config.get(key).unwrap_or(&Value::Null))
        .collect();
    let mut hasher = DefaultHasher::new();
    serde_json::to_string(&values)
        .unwrap_or_default()
        .hash(&mut hasher);
    format!("rgconfig={ripgrep_config} run={:016x}", hasher.finish())
}

/// A sink that passes bytes on and keeps a copy.
struct Tee {
    inner: Box<dyn StdoutSink>,
    copy: Vec<u8>,
}

impl StdoutSink for Tee {
    fn write(&mut self, bytes: &[u8]) {
        self.copy.extend_from_slice(bytes);
        self.inner.write(bytes);
    }
}

/// The executor of one variant's registry: the real one, with runs shared
/// through [`Captures`].
pub(super) struct CapturingExecutor {
    inner: Arc<dyn BashExecutor>,
    captures: Arc<Captures>,
    scope: String,
}

impl CapturingExecutor {
    pub(super) fn new(
        inner: Arc<dyn BashExecutor>,
        captures: Arc<Captures>,
        scope: String,
    ) -> Self {
        Self {
            inner,
            captures,
            scope,
        }
    }

    /// A capture for `key`, unless the caller has already cancelled (the
    /// real executor then gives the abort).
    fn replay(&self, key: &CaptureKey, spec: &BashSpec) -> Option<Arc<Capture>> {
        if spec.signal.as_ref().is_some_and(|s| s.is_cancelled()) {
            return None;
        }
        let found = self.captures.get(key)?;
        self.captures.replays.fetch_add(1, Ordering::SeqCst);
        Some(found)
    }
}

#[async_trait]
impl BashExecutor for CapturingExecutor {
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        self.inner.resolve(request)
    }

    /// An uncapped run is not the search tools' path (the load's
    /// `command -v rg` probe): it goes to the real executor as it is. A
    /// capped one is shared through the captures, its streamed stdout
    /// with it.
    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
        let Some(over_cap) = mode.over_cap else {
            return self.inner.run(spec, mode).await;
        };
        let key = CaptureKey::new(&self.scope, &spec, mode.sink.is_some(), over_cap);
        let mut sink = mode.sink;
        if let Some(capture) = self.replay(&key, &spec) {
            if capture.to_sink
                && let Some(sink) = &mut sink
            {
                for chunk in capture.sink_bytes.chunks(REPLAY_CHUNK) {
                    sink.write(chunk);
                }
            }
            return Ok(RunOutcome {
                run: capture.run.clone(),
                to_sink: capture.to_sink,
                sink,
            });
        }
        self.captures.runs.fetch_add(1, Ordering::SeqCst);
        let Some(sink) = sink else {
            let outcome = self.inner.run(spec, RunMode::capped(over_cap)).await?;
            self.captures.keep(
                key,
                Capture {
                    run: outcome.run.clone(),
                    to_sink: false,
                    sink_bytes: Vec::new(),
                },
            );
            return Ok(outcome);
        };
        let tee = Box::new(Tee {
            inner: sink,
            copy: Vec::new(),
        });
        let RunOutcome { run, to_sink, sink } = self
            .inner
            .run(spec, RunMode::streamed(over_cap, tee))
            .await?;
        // A tee the executor did not hand back has no copy to keep (the
        // run still counts).
        let tee = sink.and_then(|sink| {
            let sink: Box<dyn std::any::Any> = sink;
            sink.downcast::<Tee>().ok()
        });
        let Some(tee) = tee else {
            return Ok(RunOutcome {
                run,
                to_sink,
                sink: None,
            });
        };
        let Tee { inner, copy } = *tee;
        self.captures.keep(
            key,
            Capture {
                run: run.clone(),
                to_sink,
                sink_bytes: copy,
            },
        );
        Ok(RunOutcome {
            run,
            to_sink,
            sink: Some(inner),
        })
    }

    fn release(&self, result: &BashRunResult) {
        self.inner.release(result);
    }
}
