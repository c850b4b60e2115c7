//! Runs recorded calls the same way on any machine: the fixture tree is
//! materialised in a temp dir, rg gets a config file (through
//! `RIPGREP_CONFIG_PATH`, set on the executor's children only) that pins
//! grep's file order, every call gets the registry its options ask for
//! (config, spill store, executor timeout), loaded as the transcript's
//! release, and results are normalised.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use fs_search_engine::release::Release;
use fs_search_engine::{
    BashExecutor, ExecContext, Host, LoadOutcome, Registry, SpillStore, ToolResult,
};

use fs_search_exec::{LocalBashConfig, LocalSpillStore};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::error::{EngineError, TranscriptError};
use super::format::{Call, CallOptions, Cancel, Outcome, OutcomeError, OutcomeSpill, SpillMode};
use super::normalise::{Normaliser, SPILL, TREE};
use super::tree::{Manifest, MaterialisedTree, is_fixture_tree};
use fs_search_process::ExecutorKind;

/// The rg config lines a new recording uses: grep's file order by path
/// (rg's own order is multi-threaded), and no ignore files from outside
/// the tree (the user's global gitignore, the temp dir's parents).
pub(crate) const DEFAULT_RIPGREP_CONFIG: [&str; 3] =
    ["--sort=path", "--no-ignore-global", "--no-ignore-parent"];

/// The default rg config lines as owned strings.
pub(crate) fn default_ripgrep_config() -> Vec<String> {
    DEFAULT_RIPGREP_CONFIG
        .iter()
        .map(|s| (*s).to_owned())
        .collect()
}

/// `rg --version`'s first line, or a note that rg did not run: what a
/// transcript header records (see `fs_search_process`'s `rg`).
pub(crate) fn rg_version() -> String {
    fs_search_process::RgInfo::detect().version_line
}

/// As `rg_version`, for the rg that `executor`'s commands run (a remote
/// host's own).
pub fn rg_version_for(executor: &ExecutorKind) -> String {
    fs_search_process::RgInfo::detect_for(executor).version_line
}

/// This process's `PATH` with `dir` first, for an executor's children.
fn path_with_first(dir: &Path) -> Result<String, String> {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    let dirs = std::iter::once(dir.to_path_buf()).chain(std::env::split_paths(&rest));
    let joined = std::env::join_paths(dirs).map_err(|e| format!("{}: {e}", dir.display()))?;
    joined
        .into_string()
        .map_err(|_| format!("PATH with {} first is not UTF-8", dir.display()))
}

/// The outcome of `result` as the model saw it, normalised.
pub fn outcome_of(result: &ToolResult, normaliser: &Normaliser) -> Outcome {
    let mut normaliser = normaliser.clone();
    if let Some(spill) = &result.spill {
        normaliser.add_spill_locator(&spill.locator);
    }
    Outcome {
        is_error: result.is_error,
        error: result.error.as_ref().map(|e| OutcomeError {
            name: e.name().map(str::to_owned),
            code: e.code_str().map(str::to_owned),
        }),
        spill: result.spill.as_ref().map(|s| OutcomeSpill {
            locator: normaliser.apply(&s.locator),
            bytes: s.bytes,
        }),
        warnings: result
            .warnings
            .iter()
            .map(|w| normaliser.apply(w))
            .collect(),
        text: normaliser.apply(&result.text),
        tokens: None,
    }
}

/// Wraps the executor of each registry a [`FixtureEngine`] loads, given
/// the registry's effective plugin config and whether rg gets the header's
/// config file (`workbench ablate` answers repeated rg runs from a capture).
pub(crate) type ExecutorWrap =
    Arc<dyn Fn(Arc<dyn BashExecutor>, &Value, bool) -> Arc<dyn BashExecutor> + Send + Sync>;

/// Which registry a call needs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct EngineKey {
    config: String,
    spill: SpillMode,
    executor_timeout_ms: Option<u64>,
    ripgrep_config: bool,
}

/// The tree a [`FixtureEngine`] runs calls in: a fixture tree
/// materialised in a temp dir (removed when the last holder drops it), or
/// a live directory used in place. Shared, so that a replay's tree outlives
/// the replay for whoever explains its calls (`crate::explain::recorded`).
#[derive(Debug)]
pub struct EngineTree {
    root: PathBuf,
    /// Holds the materialised tree alive (None: a live directory).
    _materialised: Option<MaterialisedTree>,
}

impl EngineTree {
    /// Materialises `tree` (a fixture tree, with a manifest) under
    /// `temp_parent`, or takes any other directory in place.
    pub fn prepare(tree: &Path, temp_parent: &Path) -> Result<Self, TranscriptError> {
        if is_fixture_tree(tree) {
            let tree = MaterialisedTree::new_in(&Manifest::load(tree)?, temp_parent)?;
            Ok(Self {
                root: tree.root().to_path_buf(),
                _materialised: Some(tree),
            })
        } else if tree.is_dir() {
            let root = tree
                .canonicalize()
                .map_err(|e| TranscriptError::io(tree, e))?;
            Ok(Self {
                root,
                _materialised: None,
            })
        } else {
            Err(TranscriptError::Other(format!(
                "{}: not a fixture tree (no manifest.json) nor a directory",
                tree.display()
            )))
        }
    }

    /// The directory the calls search.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether the tree was materialised from a manifest (not a live directory).
    pub fn is_materialised(&self) -> bool {
        self._materialised.is_some()
    }
}

/// A materialised tree and the registries that run calls on it.
pub struct FixtureEngine {
    root: PathBuf,
    tree: Arc<EngineTree>,
    /// The rg config file, the spill root and the unwritable spill root.
    _scratch: tempfile::TempDir,
    rg_config: PathBuf,
    /// An empty rg config file, for calls that opt out of the pinning.
    no_rg_config: PathBuf,
    base_config: Value,
    store: Arc<LocalSpillStore>,
    unwritable: Arc<LocalSpillStore>,
    engines: HashMap<EngineKey, Registry>,
    normaliser: Normaliser,
    wrap: Option<ExecutorWrap>,
    /// The executor every registry runs its calls with.
    executor: ExecutorKind,
    /// A directory put first on the executor's `PATH`, holding the `rg`
    /// the calls run instead of the one on this process's `PATH`
    /// (`workbench freeze --also-rg`).
    rg_dir: Option<PathBuf>,
    /// The rg binary the executor runs (`--rg PATH`); `None`: the one on
    /// `PATH` (or in `rg_dir`).
    rg: Option<PathBuf>,
    /// The release every registry loads as (a transcript header's).
    release: Release,
}

fn merged(base: &Value, overrides: &serde_json::Map<String, Value>) -> Value {
    let mut config = base.as_object().cloned().unwrap_or_default();
    for (key, value) in overrides {
        config.insert(key.clone(), value.clone());
    }
    Value::Object(config)
}

impl FixtureEngine {
    /// Prepares `tree` (a fixture tree is materialised in a fresh temp
    /// dir; any other directory is used in place) with `config` as the
    /// base plugin config and `ripgrep_config` as rg's config file lines.
    pub fn new(
        tree: &Path,
        config: Value,
        ripgrep_config: &[String],
    ) -> Result<Self, TranscriptError> {
        Self::new_in(tree, config, ripgrep_config, &std::env::temp_dir())
    }

    /// As [`FixtureEngine::new`], with every temp dir under `temp_parent`.
    pub fn new_in(
        tree: &Path,
        config: Value,
        ripgrep_config: &[String],
        temp_parent: &Path,
    ) -> Result<Self, TranscriptError> {
        let tree = Arc::new(EngineTree::prepare(tree, temp_parent)?);
        Self::on_tree(tree, config, ripgrep_config, temp_parent)
    }

    /// As [`FixtureEngine::new_in`] on a tree already prepared (a replay's,
    /// kept by [`super::replay::Replay::tree`]): nothing is materialised again.
    pub fn on_tree(
        tree: Arc<EngineTree>,
        config: Value,
        ripgrep_config: &[String],
        temp_parent: &Path,
    ) -> Result<Self, TranscriptError> {
        let root = tree.root().to_path_buf();
        let scratch = tempfile::Builder::new()
            .prefix("fs-search-replay-")
            .tempdir_in(temp_parent)
            .map_err(|e| TranscriptError::io(temp_parent, e))?;
        let rg_config = scratch.path().join("ripgreprc");
        let mut lines = ripgrep_config.join("\n");
        lines.push('\n');
        std::fs::write(&rg_config, lines).map_err(|e| TranscriptError::io(&rg_config, e))?;
        // Set even when empty, so a user's own RIPGREP_CONFIG_PATH never applies.
        let no_rg_config = scratch.path().join("ripgreprc-empty");
        std::fs::write(&no_rg_config, "").map_err(|e| TranscriptError::io(&no_rg_config, e))?;
        let spill_root = scratch.path().join("spill");
        // A regular file: no directory can ever be created below it.
        let blocker = scratch.path().join("not-a-directory");
        std::fs::write(&blocker, "").map_err(|e| TranscriptError::io(&blocker, e))?;
        let normaliser = Normaliser::new()
            .with_root(&root, TREE)
            .with_root(&spill_root, SPILL)
            .with_root(scratch.path(), "<SCRATCH>");
        Ok(Self {
            store: Arc::new(LocalSpillStore::new(Some(&spill_root))),
            unwritable: Arc::new(LocalSpillStore::new(Some(&blocker.join("spill")))),
            root,
            tree,
            _scratch: scratch,
            rg_config,
            no_rg_config,
            base_config: config,
            engines: HashMap::new(),
            normaliser,
            wrap: None,
            executor: ExecutorKind::Local,
            rg_dir: None,
            rg: None,
            release: Release::Seed,
        })
    }

    /// Loads every registry from now on as `release` (a transcript
    /// header's `contract`; the seed's 0.0.1 by default).
    pub fn with_release(mut self, release: Release) -> Self {
        self.release = release;
        self
    }

    /// Runs the calls of every registry loaded from now on with the rg
    /// binary at `rg` (`--rg PATH`), or the one on `PATH` with `None`.
    pub fn with_rg(mut self, rg: Option<PathBuf>) -> Self {
        self.rg = rg;
        self
    }

    /// The release the registries load as.
    pub fn release(&self) -> Release {
        self.release
    }

    /// Runs the calls of every registry loaded from now on under the
    /// `executor` kind (the sandbox's root is the tree).
    pub fn with_executor(mut self, executor: ExecutorKind) -> Self {
        self.executor = executor;
        self
    }

    /// Runs the calls of every registry loaded from now on with `dir`
    /// first on the local executor's `PATH`: the `rg` in it answers them
    /// (see [`crate::other_rg::OtherRg`]).
    pub fn with_rg_dir(mut self, dir: &Path) -> Self {
        self.rg_dir = Some(dir.to_path_buf());
        self
    }

    /// Wraps the executor of every registry loaded from now on.
    pub fn with_executor_wrap(mut self, wrap: ExecutorWrap) -> Self {
        self.wrap = Some(wrap);
        self
    }

    /// The root the calls search (the materialised tree).
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn normaliser(&self) -> &Normaliser {
        &self.normaliser
    }

    /// The tree, shared: it stays while any holder keeps it.
    pub fn tree(&self) -> Arc<EngineTree> {
        Arc::clone(&self.tree)
    }

    /// The plugin config `call` runs with: the base config, the call's
    /// keys over it.
    pub fn call_config(&self, call: &Call) -> Value {
        merged(&self.base_config, &call.options.config)
    }

    /// The rg config file `call`'s rg reads (`RIPGREP_CONFIG_PATH`): the
    /// header's lines, or an empty file for a call that opts out.
    pub fn rg_config_for(&self, call: &Call) -> &Path {
        if call.options.ripgrep_config {
            &self.rg_config
        } else {
            &self.no_rg_config
        }
    }

    /// The directory `call`'s relative paths are resolved against: its
    /// session's `cwd` in the tree, else the tree's root.
    pub fn call_workdir(&self, call: &Call) -> PathBuf {
        match call.options.session.as_ref().and_then(|s| s.cwd.as_deref()) {
            None | Some(".") => self.root.clone(),
            Some(cwd) => self.root.join(cwd),
        }
    }

    async fn engine(&mut self, call: &Call) -> Result<&Registry, EngineError> {
        let config = self.call_config(call);
        let key = EngineKey {
            config: config.to_string(),
            spill: call.options.spill,
            executor_timeout_ms: call.options.executor_timeout_ms,
            ripgrep_config: call.options.ripgrep_config,
        };
        if !self.engines.contains_key(&key) {
            let registry = self.load_registry(&config, &key).await?;
            self.engines.insert(key.clone(), registry);
        }
        self.engines.get(&key).ok_or(EngineError::Vanished)
    }

    /// A registry of its own for calls with `options` (their config, spill
    /// store, executor timeout and rg config file) on this tree, as a
    /// recorded call gets it: what `workbench mcp --replay --on-miss live`
    /// runs its unrecorded calls with. An error when rg is missing or the
    /// config does not load.
    pub async fn registry_for(&self, options: &CallOptions) -> Result<Registry, EngineError> {
        let config = merged(&self.base_config, &options.config);
        let key = EngineKey {
            config: config.to_string(),
            spill: options.spill,
            executor_timeout_ms: options.executor_timeout_ms,
            ripgrep_config: options.ripgrep_config,
        };
        self.load_registry(&config, &key).await
    }

    async fn load_registry(
        &self,
        config: &Value,
        key: &EngineKey,
    ) -> Result<Registry, EngineError> {
        let rg_config = if key.ripgrep_config {
            &self.rg_config
        } else {
            &self.no_rg_config
        };
        let mut bash = LocalBashConfig {
            cwd: Some(self.root.to_string_lossy().into_owned()),
            env: BTreeMap::from([(
                "RIPGREP_CONFIG_PATH".to_owned(),
                rg_config.to_string_lossy().into_owned(),
            )]),
            rg: self.rg.clone(),
            ..LocalBashConfig::default()
        };
        if let Some(ms) = key.executor_timeout_ms {
            bash.timeout_ms = ms;
        }
        if let Some(dir) = &self.rg_dir {
            bash.env.insert(
                "PATH".to_owned(),
                path_with_first(dir).map_err(EngineError::Path)?,
            );
        }
        let mut bash: Arc<dyn BashExecutor> =
            fs_search_process::build_executor(&self.executor, bash)
                .map_err(EngineError::Executor)?;
        if let Some(wrap) = &self.wrap {
            bash = wrap(bash, config, key.ripgrep_config);
        }
        let spill_store: Option<Arc<dyn SpillStore>> = match key.spill {
            SpillMode::Store => Some(self.store.clone()),
            SpillMode::None => None,
            SpillMode::Unwritable => Some(self.unwritable.clone()),
        };
        let mut registry = Registry::new(Host {
            bash: Some(bash),
            spill_store,
            timeout_policy: true,
        });
        match registry.load_fs_search_as(self.release, config).await {
            Ok(LoadOutcome::Registered) => Ok(registry),
            Ok(LoadOutcome::RgMissing { warning }) => Err(EngineError::RgMissing(warning)),
            Ok(LoadOutcome::Pending) => Err(EngineError::Pending),
            Err(e) => Err(EngineError::Load(e)),
        }
    }

    fn exec_for(&self, call: &Call) -> ExecContext {
        let mut exec = ExecContext::new(format!("call-{}", call.name));
        // A signal to the process aborts the call like its caller would.
        if let Some(stop) = fs_search_process::installed_signals() {
            exec = exec.with_signal(stop.token().child_token());
        }
        if let Some(session) = &call.options.session {
            let cwd = session.cwd.as_ref().map(|cwd| match cwd.as_str() {
                "." => self.root.to_string_lossy().into_owned(),
                _ => self.root.join(cwd).to_string_lossy().into_owned(),
            });
            exec = exec.with_session(session.id.as_deref(), cwd.as_deref());
        }
        if call.options.nested {
            exec = exec.nested();
        }
        exec
    }

    /// Runs `call` and returns the raw result (for callers that show more
    /// than the model saw). Errors are setup failures, not tool errors.
    pub async fn run_raw(&mut self, call: &Call) -> Result<ToolResult, EngineError> {
        self.run_raw_until(call, None).await
    }

    /// As [`FixtureEngine::run_raw`]; cancelling `stop` aborts the call
    /// (and its rg) as a signal to the process does.
    pub async fn run_raw_until(
        &mut self,
        call: &Call,
        stop: Option<&CancellationToken>,
    ) -> Result<ToolResult, EngineError> {
        let exec = self.exec_for(call);
        let linked = stop.map(|stop| {
            let (stop, signal) = (stop.clone(), exec.signal.clone());
            tokio::spawn(async move {
                tokio::select! {
                    () = stop.cancelled() => signal.cancel(),
                    () = signal.cancelled() => {}
                }
            })
        });
        let result = self.run_exec(call, exec).await;
        if let Some(link) = linked {
            link.abort();
        }
        result
    }

    async fn run_exec(
        &mut self,
        call: &Call,
        exec: ExecContext,
    ) -> Result<ToolResult, EngineError> {
        // A frozen session's absolute paths into its tree follow the tree.
        let rooted = super::normalise::path_arg_on_root(&call.args, self.root());
        let registry = self.engine(call).await?;
        let cancel = match call.options.cancel {
            Some(Cancel::BeforeDispatch) => {
                exec.signal.cancel();
                None
            }
            Some(Cancel::AfterMs(ms)) => {
                let token = exec.signal.clone();
                Some(tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    token.cancel();
                }))
            }
            None => None,
        };
        let args = rooted.as_ref().unwrap_or(&call.args);
        let result = registry.call(&call.tool, args, &exec).await;
        if let Some(timer) = cancel {
            timer.abort();
        }
        Ok(result)
    }

    /// Runs `call` and returns what the model saw, normalised.
    pub async fn run(&mut self, call: &Call) -> Result<Outcome, EngineError> {
        let result = self.run_raw(call).await?;
        Ok(outcome_of(&result, &self.normaliser))
    }
}
