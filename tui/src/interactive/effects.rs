//! The side effects the app asks for ([`Effect`]), carried out off the UI
//! by the [`EffectRunner`]: plugin (re)loads and tool calls run on tokio
//! tasks, spill files are read asynchronously, transcripts are replayed,
//! a recording is followed (polled every [`FOLLOW_POLL`]), a call is
//! explained (`fs_search_transcript::explain`), a transcript is ablated
//! (`super::ablate_task`, cancellable), and each
//! outcome comes back as an [`AppEvent`]. The messages are plain
//! data; this module knows nothing of the app's state or the screen.
//!
//! One session: one workdir (the executor's cwd and the session header's
//! cwd), one session id (the spill owner) and one spill root shared by
//! every reload.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs_search_engine::{ExecContext, Host, Registry, ToolResult};
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

use super::command_tap::{CommandTap, RanCommand, capture};
use super::state::explain::{ExplainCall, ExplainQuery, ExplainSource};
pub(crate) use super::state::load::LoadInfo;
use fs_search_process::ExecutorKind;
use fs_search_process::{ContractChoice, SpillChoice, load_engine_with};
use fs_search_transcript::{Tail, Update};

/// The most of a spill file the viewer reads.
pub(crate) const SPILL_VIEW_LIMIT: u64 = 8 * 1024 * 1024;
/// How often a followed recording is polled for appended records.
pub(crate) const FOLLOW_POLL: Duration = Duration::from_millis(250);

/// What the app asks the effect runner to do.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// (Re)load the plugin with `config`.
    Load { generation: u64, config: Value },
    /// Run one call exactly as a model would send it.
    Run {
        id: u64,
        call_id: String,
        tool: String,
        args: Value,
    },
    /// Cancel the running call (its signal reaches rg).
    Cancel,
    /// Read a spill file for the viewer.
    ReadSpill { id: u64, path: String },
    /// Replay a transcript (on its own materialised tree).
    ReplayTranscript { path: PathBuf },
    /// Follow a recording while it grows (ending any earlier follow).
    Follow { generation: u64, path: PathBuf },
    /// Stop following.
    StopFollowing,
    /// Load the tokenizer (`file`, else the embedded one) in the background.
    LoadTokenizer { file: Option<PathBuf> },
    /// Explain `call` (ending any earlier explanation): why the paths
    /// are (not) on its page, or what it did not search.
    Explain {
        request: u64,
        call: Box<ExplainCall>,
        query: ExplainQuery,
    },
    /// Stop the explanation in progress (its rg is killed).
    StopExplaining,
    /// Ablate the transcript `file` over `variants`, ending
    /// any earlier ablation.
    Ablate {
        generation: u64,
        file: PathBuf,
        variants: Vec<serde_json::Map<String, Value>>,
        tokenizer: fs_search_process::SharedTokenizer,
    },
    /// Cancel the running ablation.
    CancelAblation,
    /// Count the tokens of call `id`'s spilled full result at `path`.
    CountSpill {
        id: u64,
        path: String,
        tokenizer: fs_search_process::SharedTokenizer,
    },
}

/// A spill file as read for viewing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpillContent {
    pub text: String,
    /// The file's size on disk.
    pub total_bytes: u64,
}

/// An outcome reported back to the app.
#[derive(Debug, Clone)]
pub enum AppEvent {
    Loaded {
        generation: u64,
        outcome: Result<LoadInfo, String>,
    },
    Finished {
        id: u64,
        result: Box<ToolResult>,
        duration: Duration,
        /// What bash ran for the call, in order (none when it ended
        /// before rg, e.g. on bad arguments).
        commands: Vec<RanCommand>,
    },
    /// The call's task died without a result (a bug, reported as such).
    Lost { id: u64, reason: String },
    SpillRead {
        id: u64,
        outcome: Result<SpillContent, String>,
    },
    TranscriptReplayed {
        path: PathBuf,
        outcome: Result<Box<fs_search_transcript::Replay>, String>,
    },
    /// What follow `generation` found in its recording.
    Followed { generation: u64, update: Update },
    /// The tokenizer loaded (or why not).
    TokenizerLoaded(Result<fs_search_process::SharedTokenizer, String>),
    /// The tokens of call `id`'s spilled full result (`None`: unreadable).
    SpillCounted { id: u64, full: Option<usize> },
    /// Explanation `request` as `workbench explain` prints it (or why
    /// nothing could be explained).
    Explained {
        request: u64,
        outcome: Result<String, String>,
    },
    /// Ablation `generation` finished another call.
    AblateProgress {
        generation: u64,
        progress: fs_search_transcript::AblateProgress,
    },
    /// Ablation `generation` ended: its result, or why not.
    Ablated {
        generation: u64,
        outcome: Result<Box<super::state::ablate::AblateDone>, super::state::ablate::AblateStop>,
    },
}

/// Carries out effects on tokio tasks; owns the current registry.
pub(crate) struct EffectRunner {
    workdir: PathBuf,
    /// The spill root (none with `--no-spill`).
    spill_root: Option<PathBuf>,
    /// The executor the calls run under (`--sandbox`).
    executor: ExecutorKind,
    /// The release the engine loads as and the rg it runs (`--contract`,
    /// `--rg`).
    contract: ContractChoice,
    session_id: String,
    registry: Arc<watch::Sender<Arc<Registry>>>,
    latest_generation: Arc<std::sync::atomic::AtomicU64>,
    running: Option<CancellationToken>,
    /// Stops the follow in progress.
    following: Option<CancellationToken>,
    /// Stops the explanation in progress.
    explaining: Option<CancellationToken>,
    /// Cancels the ablation in progress.
    ablating: Option<CancellationToken>,
    events: mpsc::UnboundedSender<AppEvent>,
}

impl EffectRunner {
    /// Runs every call under the `executor` kind.
    pub(crate) fn with_executor(mut self, executor: ExecutorKind) -> Self {
        self.executor = executor;
        self
    }

    /// Loads every engine as `contract`'s release, with its rg.
    pub(crate) fn with_contract(mut self, contract: ContractChoice) -> Self {
        self.contract = contract;
        self
    }

    pub(crate) fn new(
        workdir: PathBuf,
        spill_root: Option<PathBuf>,
        session_id: String,
        events: mpsc::UnboundedSender<AppEvent>,
    ) -> Self {
        let (registry, _) = watch::channel(Arc::new(Registry::new(Host::default())));
        Self {
            workdir,
            spill_root,
            executor: ExecutorKind::Local,
            contract: ContractChoice::default(),
            session_id,
            registry: Arc::new(registry),
            latest_generation: Arc::default(),
            running: None,
            following: None,
            explaining: None,
            ablating: None,
            events,
        }
    }

    pub(crate) fn apply_all(&mut self, effects: Vec<Effect>) {
        for effect in effects {
            self.apply(effect);
        }
    }

    pub(crate) fn apply(&mut self, effect: Effect) {
        match effect {
            Effect::Load { generation, config } => self.load(generation, config),
            Effect::Run {
                id,
                call_id,
                tool,
                args,
            } => self.run(id, call_id, tool, args),
            Effect::Cancel => {
                if let Some(token) = self.running.take() {
                    tracing::info!("cancelling the running call");
                    token.cancel();
                }
            }
            Effect::ReplayTranscript { path } => {
                let events = self.events.clone();
                let executor = self.executor.clone();
                tokio::spawn(async move {
                    let outcome =
                        fs_search_transcript::replay_file(&path, &std::env::temp_dir(), executor)
                            .await
                            .map(Box::new)
                            .map_err(|e| e.to_string());
                    let _ = events.send(AppEvent::TranscriptReplayed { path, outcome });
                });
            }
            Effect::Follow { generation, path } => {
                if let Some(token) = self.following.take() {
                    token.cancel();
                }
                let token = CancellationToken::new();
                self.following = Some(token.clone());
                tokio::spawn(follow(generation, path, token, self.events.clone()));
            }
            Effect::StopFollowing => {
                if let Some(token) = self.following.take() {
                    token.cancel();
                }
            }
            Effect::Explain {
                request,
                call,
                query,
            } => {
                if let Some(token) = self.explaining.take() {
                    token.cancel();
                }
                let token = CancellationToken::new();
                self.explaining = Some(token.clone());
                let events = self.events.clone();
                let contract = self.contract.clone();
                tokio::spawn(async move {
                    let outcome =
                        explain_call(*call, query, &std::env::temp_dir(), &contract, &token).await;
                    if !token.is_cancelled() {
                        let _ = events.send(AppEvent::Explained { request, outcome });
                    }
                });
            }
            Effect::StopExplaining => {
                if let Some(token) = self.explaining.take() {
                    token.cancel();
                }
            }
            Effect::LoadTokenizer { file } => {
                let events = self.events.clone();
                tokio::spawn(async move {
                    let handle = fs_search_process::load_tokenizer_in_background(file.as_deref());
                    let outcome = fs_search_process::join_tokenizer(handle)
                        .await
                        .map(|t| fs_search_process::SharedTokenizer(Arc::new(t)))
                        .map_err(|e| e.to_string());
                    let _ = events.send(AppEvent::TokenizerLoaded(outcome));
                });
            }
            Effect::CountSpill {
                id,
                path,
                tokenizer,
            } => {
                let events = self.events.clone();
                tokio::task::spawn_blocking(move || {
                    let full = std::fs::read_to_string(&path)
                        .ok()
                        .map(|text| tokenizer.0.count(&text));
                    let _ = events.send(AppEvent::SpillCounted { id, full });
                });
            }
            Effect::Ablate {
                generation,
                file,
                variants,
                tokenizer,
            } => {
                if let Some(token) = self.ablating.take() {
                    token.cancel();
                }
                let token = CancellationToken::new();
                self.ablating = Some(token.clone());
                let events = self.events.clone();
                let rg = self.contract.rg.clone();
                tokio::spawn(async move {
                    let progress_events = events.clone();
                    let on_progress = move |progress| {
                        let _ = progress_events.send(AppEvent::AblateProgress {
                            generation,
                            progress,
                        });
                    };
                    let outcome = super::ablate_task::run(
                        &file,
                        &variants,
                        &tokenizer,
                        rg,
                        token,
                        on_progress,
                    )
                    .await;
                    let _ = events.send(AppEvent::Ablated {
                        generation,
                        outcome,
                    });
                });
            }
            Effect::CancelAblation => {
                if let Some(token) = self.ablating.take() {
                    tracing::info!("cancelling the ablation");
                    token.cancel();
                }
            }
            Effect::ReadSpill { id, path } => {
                let events = self.events.clone();
                tokio::spawn(async move {
                    let outcome = read_spill(&path).await;
                    let _ = events.send(AppEvent::SpillRead { id, outcome });
                });
            }
        }
    }

    fn load(&self, generation: u64, config: Value) {
        use std::sync::atomic::Ordering;
        self.latest_generation.store(generation, Ordering::SeqCst);
        let latest = self.latest_generation.clone();
        let registry = self.registry.clone();
        let events = self.events.clone();
        let workdir = self.workdir.clone();
        let spill_root = self.spill_root.clone();
        let executor = self.executor.clone();
        let contract = self.contract.clone();
        tokio::spawn(async move {
            let loaded = load_engine_with(
                Some(&workdir),
                &config,
                SpillChoice::of(spill_root.as_deref()),
                &executor,
                &contract,
                CommandTap::for_executor(&executor),
            )
            .await;
            if latest.load(Ordering::SeqCst) != generation {
                return;
            }
            let outcome = match loaded {
                Ok(loaded) => {
                    let info = LoadInfo {
                        sections: loaded.registry.prompt_sections(),
                        tools: loaded.registry.tool_definitions(),
                        warnings: loaded.warnings,
                    };
                    registry.send_replace(Arc::new(loaded.registry));
                    Ok(info)
                }
                Err(e) => {
                    // A failed load registers nothing: calls now get the
                    // registry's unknown-tool result.
                    registry.send_replace(Arc::new(Registry::new(Host::default())));
                    Err(e.to_string())
                }
            };
            match &outcome {
                Ok(info) => {
                    tracing::info!(generation, %config, warnings = ?info.warnings, "plugin loaded")
                }
                Err(e) => tracing::warn!(generation, %config, error = %e, "plugin load failed"),
            }
            let _ = events.send(AppEvent::Loaded {
                generation,
                outcome,
            });
        });
    }

    fn run(&mut self, id: u64, call_id: String, tool: String, args: Value) {
        let token = CancellationToken::new();
        self.running = Some(token.clone());
        let registry = self.registry.borrow().clone();
        let workdir = self.workdir.to_string_lossy().into_owned();
        let exec = ExecContext::new(call_id)
            .with_session(Some(&self.session_id), Some(&workdir))
            .with_signal(token);
        let events = self.events.clone();
        let task = tokio::spawn(async move {
            let started = Instant::now();
            let (result, commands) = capture(registry.call(&tool, &args, &exec)).await;
            let duration = started.elapsed();
            tracing::info!(
                id,
                call_id = %exec.call_id,
                tool,
                %args,
                is_error = result.is_error,
                code = result.code().map_or("", |c| c.code()),
                bytes = result.text.len(),
                ms = duration.as_secs_f64() * 1000.0,
                "call finished"
            );
            (result, duration, commands)
        });
        let events = events.clone();
        tokio::spawn(async move {
            let event = match task.await {
                Ok((result, duration, commands)) => AppEvent::Finished {
                    id,
                    result: Box::new(result),
                    duration,
                    commands,
                },
                Err(e) => {
                    tracing::error!(id, error = %e, "call task failed");
                    AppEvent::Lost {
                        id,
                        reason: e.to_string(),
                    }
                }
            };
            let _ = events.send(event);
        });
    }

    /// Forgets the running call's token once it finished.
    pub(crate) fn finished(&mut self) {
        self.running = None;
    }
}

/// Polls the recording at `path` every [`FOLLOW_POLL`] until `stop` is
/// cancelled or the app is gone, sending what each poll found.
async fn follow(
    generation: u64,
    path: PathBuf,
    stop: CancellationToken,
    events: mpsc::UnboundedSender<AppEvent>,
) {
    tracing::info!(generation, path = %path.display(), "following a recording");
    let mut tail = Tail::new(&path);
    let mut tick = tokio::time::interval(FOLLOW_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            _ = tick.tick() => {}
        }
        let polled = tokio::task::spawn_blocking(move || {
            let updates = tail.poll();
            (tail, updates)
        })
        .await;
        let updates = match polled {
            Ok((back, updates)) => {
                tail = back;
                updates
            }
            Err(e) => {
                tracing::error!(error = %e, "the follow's poll failed");
                return;
            }
        };
        for update in updates {
            if stop.is_cancelled()
                || events
                    .send(AppEvent::Followed { generation, update })
                    .is_err()
            {
                return;
            }
        }
    }
}

/// Explains `call` with the explain module: the session's own call as it
/// ran (its result is explained, nothing runs again but rg's walk), a
/// transcript's call by running it again in its prepared tree (scratch
/// files under `temp_parent`). The text is `workbench explain`'s; rg's
/// walk runs `contract`'s rg, whose release the session's call ran as.
pub(crate) async fn explain_call(
    call: ExplainCall,
    query: ExplainQuery,
    temp_parent: &std::path::Path,
    contract: &ContractChoice,
    stop: &CancellationToken,
) -> Result<String, String> {
    use fs_search_transcript::explain_recorded;
    use fs_search_transcript::{ExplainRequest, explain_result, explanation_text};
    let (paths, unsearched) = match query {
        ExplainQuery::Paths(paths) => (paths, false),
        ExplainQuery::Unsearched => (Vec::new(), true),
    };
    let report = match &call.source {
        ExplainSource::Ran { config, result } => {
            let workdir = PathBuf::from(&call.workdir);
            let request = ExplainRequest {
                tool: &call.tool,
                workdir: &workdir,
                config,
                args: &call.args,
                paths: &paths,
                unsearched,
                rg_config: None,
                executor: fs_search_process::ExecutorKind::Local,
                contract: contract.clone(),
            };
            let parsed = fs_search_engine::Config::from_json_as(config, contract.release)
                .map_err(|e| e.to_string())?;
            let notes = result.warnings.clone();
            explain_result(&request, &call.workdir, &parsed, result, notes, stop).await
        }
        ExplainSource::Recorded(source) => {
            let tree = Arc::clone(&source.tree);
            explain_recorded(
                tree,
                &source.recorded,
                &paths,
                unsearched,
                temp_parent,
                stop,
            )
            .await
        }
    };
    report
        .map(|report| explanation_text(&report))
        .map_err(|e| e.to_string())
}

/// Reads up to [`SPILL_VIEW_LIMIT`] bytes of a spill file.
pub(crate) async fn read_spill(path: &str) -> Result<SpillContent, String> {
    let file = tokio::fs::File::open(path)
        .await
        .map_err(|e| format!("cannot open {path}: {e}"))?;
    let total_bytes = file
        .metadata()
        .await
        .map_err(|e| format!("cannot stat {path}: {e}"))?
        .len();
    let mut bytes = Vec::new();
    file.take(SPILL_VIEW_LIMIT)
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| format!("cannot read {path}: {e}"))?;
    Ok(SpillContent {
        text: String::from_utf8_lossy(&bytes).into_owned(),
        total_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interactive::state::explain::RecordedSource;
    use fs_search_transcript::EngineTree;
    use fs_search_transcript::{Call, CallOptions, Header, Outcome, RecordedCall, TranscriptEnv};
    use serde_json::json;

    async fn next(rx: &mut mpsc::UnboundedReceiver<AppEvent>) -> AppEvent {
        tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .expect("the runner answers")
            .expect("the channel is open")
    }

    fn runner(dir: &std::path::Path) -> (EffectRunner, mpsc::UnboundedReceiver<AppEvent>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let runner = EffectRunner::new(
            dir.join("tree"),
            Some(dir.join("spill")),
            "session-t".into(),
            tx,
        );
        (runner, rx)
    }

    #[tokio::test]
    async fn a_failed_load_leaves_nothing_registered() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tree")).unwrap();
        let (mut runner, mut rx) = runner(dir.path());
        runner.apply(Effect::Load {
            generation: 1,
            config: json!({}),
        });
        match next(&mut rx).await {
            AppEvent::Loaded {
                outcome: Err(e), ..
            } => assert_eq!(
                e,
                "tool-fs-search: config.sampleOverCapGlobResults is required (true or false)"
            ),
            other => panic!("{other:?}"),
        }
        runner.apply(Effect::Run {
            id: 1,
            call_id: "c".into(),
            tool: "glob".into(),
            args: json!({"pattern": "*"}),
        });
        match next(&mut rx).await {
            AppEvent::Finished { result, .. } => {
                assert_eq!(result.code().map(|c| c.code()), Some("UNKNOWN_TOOL"));
            }
            other => panic!("{other:?}"),
        }
    }

    /// A recorded call (no result kept) is run again in its tree (a live
    /// directory, in place), with real rg and the header's rg config, and
    /// explained.
    #[tokio::test]
    async fn a_recorded_call_is_run_again_in_its_tree_and_explained() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir_all(tree.join("gen")).unwrap();
        std::fs::write(tree.join(".ignore"), "gen/\n").unwrap();
        std::fs::write(tree.join("gen/out.rs"), "needle\n").unwrap();
        std::fs::write(tree.join("a.rs"), "needle\n").unwrap();
        let prepared = EngineTree::prepare(&tree, dir.path()).unwrap();
        let recorded = RecordedCall {
            file: dir.path().join("t.jsonl"),
            line: 2,
            header: std::sync::Arc::new(Header {
                contract: Default::default(),
                tree: "tree".into(),
                config: json!({"sampleOverCapGlobResults": true}),
                env: TranscriptEnv {
                    rg: "ripgrep".into(),
                    ripgrep_config: vec!["--no-ignore-dot".into()],
                    executor: None,
                },
            }),
            call: Call {
                name: "r".into(),
                tool: "grep".into(),
                args: json!({"pattern": "needle"}),
                options: CallOptions::default(),
            },
            outcome: Outcome {
                is_error: false,
                error: None,
                spill: None,
                warnings: Vec::new(),
                text: String::new(),
                tokens: None,
            },
        };
        let call = ExplainCall {
            tool: "grep".into(),
            args: json!({"pattern": "needle"}),
            workdir: tree.to_string_lossy().into_owned(),
            source: ExplainSource::Recorded(Box::new(RecordedSource {
                tree: std::sync::Arc::new(prepared),
                recorded,
            })),
        };
        let query = ExplainQuery::Paths(vec!["gen/out.rs".into(), "a.rs".into()]);
        let stop = CancellationToken::new();
        // Without the header's rg config, `.ignore` keeps rg out of `gen/`.
        let mut plain = call.clone();
        if let ExplainSource::Recorded(source) = &mut plain.source {
            std::sync::Arc::make_mut(&mut source.recorded.header)
                .env
                .ripgrep_config
                .clear();
        }
        let text = explain_call(
            plain,
            query.clone(),
            dir.path(),
            &ContractChoice::seed(),
            &stop,
        )
        .await
        .unwrap();
        assert!(
            text.contains("gen/out.rs: not-searched (ignored)"),
            "{text}"
        );
        assert!(text.contains(".ignore:1: gen/"), "{text}");
        assert!(text.contains("a.rs: page"), "{text}");
        // With it (`--no-ignore-dot`), the call and rg's walk both read it:
        // `gen/out.rs` is searched and on the page.
        let text = explain_call(call, query, dir.path(), &ContractChoice::seed(), &stop)
            .await
            .unwrap();
        assert!(text.contains("gen/out.rs: page"), "{text}");
        assert!(text.contains("a.rs: page"), "{text}");
    }

    /// rg blocks reading a FIFO nobody writes to, until the cancel kills it.
    #[tokio::test]
    async fn cancelling_a_running_call_kills_rg_and_yields_the_abort_result() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        let made = std::process::Command::new("mkfifo")
            .arg(tree.join("pipe"))
            .status()
            .unwrap();
        assert!(made.success());
        let (mut runner, mut rx) = runner(dir.path());
        runner.apply(Effect::Load {
            generation: 1,
            config: json!({"sampleOverCapGlobResults": true}),
        });
        assert!(matches!(
            next(&mut rx).await,
            AppEvent::Loaded { outcome: Ok(_), .. }
        ));
        runner.apply(Effect::Run {
            id: 7,
            call_id: "c".into(),
            tool: "grep".into(),
            args: json!({"pattern": "x", "path": "pipe"}),
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        let cancelled = Instant::now();
        runner.apply(Effect::Cancel);
        match next(&mut rx).await {
            AppEvent::Finished { id, result, .. } => {
                assert_eq!(id, 7);
                assert!(result.is_error);
                assert_eq!(
                    result.code().map(|c| c.code()),
                    Some("SEARCH_ABORTED"),
                    "{}",
                    result.text
                );
                assert_eq!(
                    result.text,
                    "Error: grep was aborted before completion (tool timeout or caller cancellation)"
                );
            }
            other => panic!("{other:?}"),
        }
        assert!(cancelled.elapsed() < Duration::from_secs(10));
    }
}
