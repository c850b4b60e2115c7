//! Fakes of CONTRACT §10.0 for fault injection: a bash executor that
//! records requests and returns armed results, and a spill store that
//! records saves. Used only where a fault or a canned rg output must be
//! injected; the real executor is tested in the `tests` crate.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // test support: a failed unwrap is a failed test

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use fs_search_engine::registry::PROBE_COMMAND;
use fs_search_engine::spill::{Accept, Decision, PostExecuteCall, PostExecuteListener};
use fs_search_engine::{
    BashExecutor,
    bash::{
        BashError, BashRequest, BashRunResult, BashSpec, CappedRun, CollectedOutput, RunMode,
        RunOutcome,
    },
};
use fs_search_engine::{ExecContext, Host, LoadError, LoadOutcome, Registry, ToolResult};
use fs_search_engine::{
    SpillStore,
    spill::{SaveTextSpill, SpillError, SpillRef},
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

pub type Handler = Arc<dyn Fn(&BashSpec) -> Result<BashRunResult, BashError> + Send + Sync>;

/// `runResult(stdout, overrides)`: exit 0, no signal, untruncated streams.
pub fn run_result(stdout: &str) -> BashRunResult {
    BashRunResult {
        exit_code: Some(0),
        signal: None,
        timed_out: false,
        aborted: false,
        timeout_ms: 60000,
        stdout: CollectedOutput::complete(stdout),
        stderr: CollectedOutput::complete(""),
    }
}

pub fn exit_with(code: i32, stderr: &str) -> BashRunResult {
    BashRunResult {
        exit_code: Some(code),
        stderr: CollectedOutput::complete(stderr),
        ..run_result("")
    }
}

pub enum Probe {
    Result(BashRunResult),
    Fails(String),
}

pub struct FakeBash {
    pub requests: Mutex<Vec<BashRequest>>,
    pub probe_requests: Mutex<Vec<BashRequest>>,
    pub specs: Mutex<Vec<BashSpec>>,
    pub probe: Mutex<Probe>,
    pub handler: Mutex<Handler>,
    pub forward_signal: bool,
    pub start_calls: AtomicUsize,
}

impl FakeBash {
    pub fn new() -> Arc<Self> {
        Self::build(true)
    }

    /// A fake whose `resolve` drops the caller's signal from the spec.
    pub fn without_signal_forwarding() -> Arc<Self> {
        Self::build(false)
    }

    fn build(forward_signal: bool) -> Arc<Self> {
        Arc::new(Self {
            requests: Mutex::new(Vec::new()),
            probe_requests: Mutex::new(Vec::new()),
            specs: Mutex::new(Vec::new()),
            probe: Mutex::new(Probe::Result(run_result(""))),
            handler: Mutex::new(Arc::new(|_| Ok(run_result("")))),
            forward_signal,
            start_calls: AtomicUsize::new(0),
        })
    }

    pub fn arm_probe(&self, probe: Probe) {
        *self.probe.lock().unwrap() = probe;
    }

    pub fn on_run(
        &self,
        handler: impl Fn(&BashSpec) -> Result<BashRunResult, BashError> + Send + Sync + 'static,
    ) {
        *self.handler.lock().unwrap() = Arc::new(handler);
    }

    pub fn stdout(&self, stdout: &'static str) {
        self.on_run(move |_| Ok(run_result(stdout)));
    }

    pub fn returns(&self, result: BashRunResult) {
        self.on_run(move |_| Ok(result.clone()));
    }

    pub fn last_request(&self) -> BashRequest {
        self.requests
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a search request")
    }

    pub fn last_spec(&self) -> BashSpec {
        self.specs
            .lock()
            .unwrap()
            .last()
            .cloned()
            .expect("a run spec")
    }

    pub fn runs(&self) -> usize {
        self.specs.lock().unwrap().len()
    }
}

#[async_trait]
impl BashExecutor for FakeBash {
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        let spec = BashSpec {
            command: request.command.clone(),
            argv: request.argv.clone(),
            subprocess: request.subprocess,
            workdir: request
                .workdir
                .clone()
                .unwrap_or_else(|| "/work".to_owned()),
            timeout_ms: request.timeout_ms.unwrap_or(60000),
            stdout_max_bytes: request.stdout_max_bytes.unwrap_or(64000),
            signal: if self.forward_signal {
                request.signal.clone()
            } else {
                None
            },
            stdin: None,
            env: None,
            dsh_env: None,
        };
        if request.command == PROBE_COMMAND {
            self.probe_requests.lock().unwrap().push(request);
        } else {
            self.requests.lock().unwrap().push(request);
        }
        Ok(spec)
    }

    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
        let result = if spec.command == PROBE_COMMAND {
            match &*self.probe.lock().unwrap() {
                Probe::Result(r) => Ok(r.clone()),
                Probe::Fails(message) => Err(BashError::Other(message.clone())),
            }
        } else {
            self.specs.lock().unwrap().push(spec.clone());
            let handler = self.handler.lock().unwrap().clone();
            handler(&spec)
        };
        Ok(mode.kept(CappedRun::Finished(result?)))
    }

    fn start(&self, _spec: BashSpec) -> Result<(), BashError> {
        self.start_calls.fetch_add(1, Ordering::SeqCst);
        Err(BashError::Other("start is not allowed".into()))
    }
}

/// Records saves; returns `/spill/{suggestedName}` or fails when armed.
#[derive(Default)]
pub struct FakeSpill {
    pub saves: Mutex<Vec<SaveTextSpill>>,
    pub fail_with: Mutex<Option<String>>,
}

#[async_trait]
impl SpillStore for FakeSpill {
    async fn save_text(&self, input: SaveTextSpill) -> Result<SpillRef, SpillError> {
        if let Some(message) = self.fail_with.lock().unwrap().clone() {
            return Err(SpillError::Other(message));
        }
        let saved = SpillRef {
            locator: format!("/spill/{}", input.suggested_name),
            bytes: input.content.len() as u64,
            retrieval_hint: "Use the fake retrieval hint.".to_owned(),
        };
        self.saves.lock().unwrap().push(input);
        Ok(saved)
    }
}

impl FakeSpill {
    pub fn count(&self) -> usize {
        self.saves.lock().unwrap().len()
    }
}

/// A loaded registry over the fakes.
pub struct Harness {
    pub registry: Registry,
    pub bash: Arc<FakeBash>,
    pub spill: Arc<FakeSpill>,
    pub outcome: Result<LoadOutcome, String>,
}

pub async fn load_with(bash: Arc<FakeBash>, with_spill: bool, config: Value) -> Harness {
    let spill = Arc::new(FakeSpill::default());
    let mut registry = Registry::new(Host {
        bash: Some(bash.clone()),
        spill_store: with_spill.then(|| spill.clone() as Arc<dyn SpillStore>),
        timeout_policy: false,
    });
    let outcome = registry
        .load_fs_search(&config)
        .await
        .map_err(|e: LoadError| e.to_string());
    Harness {
        registry,
        bash,
        spill,
        outcome,
    }
}

/// [`load_with`] as 0.1.0-rc.8 loads: no probe, two more config keys.
pub async fn load_rc8(bash: Arc<FakeBash>, config: Value) -> Harness {
    let spill = Arc::new(FakeSpill::default());
    let mut registry = Registry::new(Host {
        bash: Some(bash.clone()),
        spill_store: Some(spill.clone() as Arc<dyn SpillStore>),
        timeout_policy: false,
    });
    let outcome = registry
        .load_fs_search_as(fs_search_engine::release::Release::Rc8, &config)
        .await
        .map_err(|e: LoadError| e.to_string());
    Harness {
        registry,
        bash,
        spill,
        outcome,
    }
}

/// Default config `{sampleOverCapGlobResults: true}` plus `extra`, spill loaded.
pub async fn harness(extra: Value) -> Harness {
    let mut config = json!({"sampleOverCapGlobResults": true});
    if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    load_with(FakeBash::new(), true, config).await
}

pub async fn harness_without_spill(extra: Value) -> Harness {
    let mut config = json!({"sampleOverCapGlobResults": true});
    if let (Some(c), Some(e)) = (config.as_object_mut(), extra.as_object()) {
        c.extend(e.clone());
    }
    load_with(FakeBash::new(), false, config).await
}

/// `agent(cwd?)`: session `session-1` with an optional cwd.
pub fn agent(cwd: Option<&str>) -> ExecContext {
    ExecContext::new("call-1").with_session(Some("session-1"), cwd)
}

pub fn no_agent() -> ExecContext {
    ExecContext::new("call-1")
}

impl Harness {
    pub async fn call(&self, tool: &str, args: Value, exec: &ExecContext) -> ToolResult {
        self.registry.call(tool, &args, exec).await
    }
}

/// `matchLine(path, n, text)`.
pub fn match_line(path: &str, n: u64, text: &str) -> String {
    json!({"type": "match", "data": {"path": {"text": path}, "lines": {"text": text},
        "line_number": n, "absolute_offset": 0, "submatches": []}})
    .to_string()
}

pub fn info(result: &ToolResult) -> (Option<&'static str>, Option<&'static str>) {
    match &result.error {
        Some(e) => (e.name(), e.code_str()),
        None => (None, None),
    }
}

/// A later post-execute listener that adds one additional context.
pub struct AddsContext(pub &'static str);

#[async_trait]
impl PostExecuteListener for AddsContext {
    async fn decide(&self, _call: &PostExecuteCall<'_>, next: Decision) -> Decision {
        match next {
            Decision::Accept(mut accept) => {
                accept
                    .additional_contexts
                    .get_or_insert_with(Vec::new)
                    .push(self.0.to_owned());
                Decision::Accept(accept)
            }
            other => other,
        }
    }
}

/// A later listener that replaces the canonical value.
pub struct ReplacesValue(pub Value);

#[async_trait]
impl PostExecuteListener for ReplacesValue {
    async fn decide(&self, _call: &PostExecuteCall<'_>, _next: Decision) -> Decision {
        Decision::Accept(Accept {
            value: Some(self.0.clone()),
            ..Accept::default()
        })
    }
}

pub fn cancelled() -> CancellationToken {
    let token = CancellationToken::new();
    token.cancel();
    token
}
