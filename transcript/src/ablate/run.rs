//! The ablation itself: each input is replayed once per variant, call by
//! call (every variant of call i, then call i+1), with rg run once per
//! call through the shared `Captures`; each page is counted and compared
//! with the baseline's page of the same call. Only one call's captures
//! and pages are held at a time.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fs_search_engine::release::Release;
use fs_search_engine::{BashExecutor, Config, ToolResult};
use fs_search_tokens::{Tokenizer, compare_prefixes};
use serde_json::{Map, Value};
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use super::capture::{Captures, CapturingExecutor, run_scope};
use super::grid::label;
use super::stats::{PageFacts, PageStat, SurfaceStat, VariantStats, coverage_of};
use crate::error::EngineError;
use crate::error::TranscriptError;
use crate::fixture_engine::{ExecutorWrap, FixtureEngine, outcome_of};
use crate::format::tree_path;
use crate::format::{Call, Outcome, Transcript};
use crate::parse;
use crate::tree::is_fixture_tree;
use fs_search_process::request_parts;
use fs_search_process::{ContractChoice, SpillChoice, load_engine};

/// Why an ablation could not run.
#[derive(Debug, Error)]
pub enum AblateError {
    #[error(transparent)]
    Transcript(#[from] TranscriptError),
    /// A variant's config that the plugin would not load.
    #[error("{file}: variant {variant}: {source}")]
    Config {
        file: String,
        variant: String,
        source: fs_search_engine::ConfigError,
    },
    #[error("the surface of variant {variant}: {source}")]
    Surface {
        variant: String,
        source: SurfaceError,
    },
    #[error("no input: name at least one recording or transcript")]
    NoInput,
    #[error("cancelled")]
    Cancelled,
}

/// Why a variant's surface (its request prefix, its effective config)
/// cannot be had.
#[derive(Debug, Error)]
pub enum SurfaceError {
    /// The variant's config is not one the engine reads.
    #[error(transparent)]
    Config(#[from] fs_search_engine::ConfigError),
    /// The typed config does not serialise back to JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The engine does not load with the variant's config.
    #[error(transparent)]
    Load(#[from] fs_search_process::SetupError),
}

/// One recording or transcript to ablate.
#[derive(Debug, Clone)]
pub struct Input {
    /// The file as named.
    pub file: String,
    pub transcript: Transcript,
    /// The tree the calls search: the fixture tree the header names, or
    /// the live workdir (`--workdir` replaces a live one).
    pub tree: PathBuf,
}

impl Input {
    /// Reads and parses `path`; a header that names no fixture tree is a
    /// live recording, searched in `workdir` when given.
    pub fn load(path: &Path, workdir: Option<&Path>) -> Result<Self, TranscriptError> {
        let name = path.display().to_string();
        let text = fs_search_process::read_text(path, fs_search_process::TRANSCRIPT_MAX_BYTES)
            .map_err(|e| TranscriptError::io(path, e))?;
        let transcript = parse::parse(&name, &text)?;
        let recorded = tree_path(path, &transcript.header.tree);
        let tree = match workdir {
            Some(dir) if !is_fixture_tree(&recorded) => dir.to_path_buf(),
            _ => recorded,
        };
        Ok(Self {
            file: name,
            transcript,
            tree,
        })
    }
}

/// How far a run is: calls done (all their variants) of all calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: usize,
    pub total: usize,
}

/// One page as it is made, for a caller that shows more than the figures
/// (the TUI keeps the changed pages to diff them; `ablate --host` lenses
/// the result as the MCP server would send it).
pub struct PageEvent<'a> {
    pub input: usize,
    pub record: usize,
    pub variant: usize,
    pub name: &'a str,
    /// The call as replayed (the variant's overrides in its options).
    pub call: &'a Call,
    /// The engine's result, before normalisation: the text the model
    /// would see, with its footer and locator parts.
    pub result: &'a ToolResult,
    pub page: &'a Outcome,
    pub baseline: &'a Outcome,
}

/// Progress, cancellation and the page observer of a run.
pub struct Control<'a> {
    pub cancel: CancellationToken,
    pub progress: &'a mut (dyn FnMut(Progress) + Send),
    pub pages: &'a mut (dyn FnMut(PageEvent<'_>) + Send),
    /// The executor the calls run under (`--sandbox`).
    pub executor: fs_search_process::ExecutorKind,
    /// The release every input runs as (`--contract`); `None`: each
    /// input's own, as its header names it.
    pub contract: Option<Release>,
    /// The rg binary the calls run (`--rg`); `None`: the one on `PATH`.
    pub rg: Option<PathBuf>,
}

impl Control<'_> {
    /// The release `transcript`'s calls run as.
    fn release_for(&self, transcript: &Transcript) -> Release {
        self.contract.unwrap_or(transcript.header.contract)
    }
}

/// The result: the variants (baseline first) and what rg did.
#[derive(Debug, Clone)]
pub struct Ablation {
    pub variants: Vec<VariantStats>,
    /// rg runs made for real, and requests answered from a capture.
    pub rg_runs: u64,
    pub rg_replays: u64,
    /// The most bytes of captured output held at once.
    pub peak_capture_bytes: usize,
}

/// `base` with `overrides` on top.
pub fn merged(base: &Value, overrides: &Map<String, Value>) -> Value {
    let mut config = base.as_object().cloned().unwrap_or_default();
    for (key, value) in overrides {
        config.insert(key.clone(), value.clone());
    }
    Value::Object(config)
}

/// The whole config `config` stands for under `release`, every key with
/// its value.
fn effective(config: &Value, release: Release) -> Result<Value, SurfaceError> {
    let typed = Config::from_json_as(config, release)?;
    Ok(serde_json::to_value(&typed)?)
}

/// The request prefix's tokens of a registry loaded with `config` as
/// `release`.
async fn surface_prefix(
    config: &Value,
    release: Release,
    tokenizer: &Tokenizer,
) -> Result<fs_search_tokens::EncodedPrefix, SurfaceError> {
    let loaded = load_engine(
        None,
        config,
        SpillChoice::None,
        &fs_search_process::ExecutorKind::Local,
        &ContractChoice::of(release),
    )
    .await?;
    Ok(tokenizer.encode_prefix(&request_parts(
        &loaded.registry.prompt_sections(),
        &loaded.registry.tool_definitions(),
    )))
}

/// Ablates `inputs` over `variants` (each a set of config overrides; the
/// baseline, no overrides, is added first).
pub async fn ablate(
    inputs: &[Input],
    variants: &[Map<String, Value>],
    tokenizer: &Tokenizer,
    control: Control<'_>,
) -> Result<Ablation, AblateError> {
    let first = inputs.first().ok_or(AblateError::NoInput)?;
    let mut all = vec![Map::new()];
    all.extend(variants.iter().cloned());
    for input in inputs {
        for overrides in &all {
            let config = merged(&input.transcript.header.config, overrides);
            Config::from_json_as(&config, control.release_for(&input.transcript)).map_err(
                |source| AblateError::Config {
                    file: input.file.clone(),
                    variant: label(overrides),
                    source,
                },
            )?;
        }
    }
    let base_config = &first.transcript.header.config;
    let release = control.release_for(&first.transcript);
    let baseline_prefix = surface_prefix(base_config, release, tokenizer)
        .await
        .map_err(|source| AblateError::Surface {
            variant: label(&Map::new()),
            source,
        })?;
    let mut stats = Vec::with_capacity(all.len());
    for overrides in &all {
        let config = merged(base_config, overrides);
        let surface_error = |source| AblateError::Surface {
            variant: label(overrides),
            source,
        };
        let prefix = surface_prefix(&config, release, tokenizer)
            .await
            .map_err(surface_error)?;
        let surface = SurfaceStat {
            tokens: prefix.tokens() as u64,
            kv_prefix: compare_prefixes(&baseline_prefix, &prefix),
        };
        let config = effective(&config, release).map_err(surface_error)?;
        stats.push(VariantStats::new(overrides.clone(), config, surface));
    }
    let captures = Captures::new();
    let total = inputs.iter().map(|i| i.transcript.records.len()).sum();
    let mut run = Run {
        tokenizer,
        control,
        captures: captures.clone(),
        progress: Progress { done: 0, total },
        peak: 0,
    };
    (run.control.progress)(run.progress);
    for (index, input) in inputs.iter().enumerate() {
        run.input(index, input, &all, &mut stats).await?;
    }
    for variant in &mut stats {
        variant.finish();
    }
    Ok(Ablation {
        variants: stats,
        rg_runs: captures.runs(),
        rg_replays: captures.replays(),
        peak_capture_bytes: run.peak,
    })
}

/// The state of one run across its inputs.
struct Run<'t, 'c> {
    tokenizer: &'t Tokenizer,
    control: Control<'c>,
    captures: Arc<Captures>,
    progress: Progress,
    peak: usize,
}

impl Run<'_, '_> {
    fn check_cancelled(&self) -> Result<(), AblateError> {
        TranscriptError::check_stopped()?;
        if self.control.cancel.is_cancelled() {
            return Err(AblateError::Cancelled);
        }
        Ok(())
    }

    async fn input(
        &mut self,
        index: usize,
        input: &Input,
        variants: &[Map<String, Value>],
        stats: &mut [VariantStats],
    ) -> Result<(), AblateError> {
        let header = &input.transcript.header;
        let captures = self.captures.clone();
        let wrap: ExecutorWrap = Arc::new(move |inner, config: &Value, ripgrep_config| {
            let scope = run_scope(config, ripgrep_config);
            Arc::new(CapturingExecutor::new(inner, captures.clone(), scope))
                as Arc<dyn BashExecutor>
        });
        let mut engine = FixtureEngine::new_in(
            &input.tree,
            header.config.clone(),
            &header.env.ripgrep_config,
            &std::env::temp_dir(),
        )
        .map_err(|e| TranscriptError::Other(format!("{}:1: the header's tree: {e}", input.file)))?
        .with_executor(self.control.executor.clone())
        .with_release(self.control.release_for(&input.transcript))
        .with_rg(self.control.rg.clone())
        .with_executor_wrap(wrap);
        for (record_index, record) in input.transcript.records.iter().enumerate() {
            self.check_cancelled()?;
            // A cancellation's outcome depends on the moment: run it each time.
            self.captures
                .set_enabled(record.call.options.cancel.is_none());
            let mut baseline: Option<Outcome> = None;
            for (variant, overrides) in variants.iter().enumerate() {
                let mut call = record.call.clone();
                call.options.config.extend(overrides.clone());
                let setup = |source| TranscriptError::Setup {
                    file: input.file.clone(),
                    line: record.line,
                    name: record.call.name.clone(),
                    source,
                };
                let result = engine.run_raw(&call).await.map_err(setup)?;
                self.check_cancelled()?;
                let config = merged(
                    &merged(&header.config, &record.call.options.config),
                    overrides,
                );
                let config = Config::from_json_as(&config, engine.release()).map_err(|source| {
                    setup(EngineError::Variant {
                        variant: label(overrides),
                        source,
                    })
                })?;
                let facts = PageFacts::of(&result, &config);
                let coverage = coverage_of(&result, &config);
                let page = outcome_of(&result, engine.normaliser());
                let base = baseline.get_or_insert_with(|| page.clone());
                let stat = PageStat {
                    file: input.file.clone(),
                    record: record.call.name.clone(),
                    tokens: self.tokenizer.count(&page.text) as u64,
                    changed: variant > 0 && page.text != base.text,
                    hidden: facts.hidden_paths + facts.hidden_matches,
                    coverage,
                };
                (self.control.pages)(PageEvent {
                    input: index,
                    record: record_index,
                    variant,
                    name: &record.call.name,
                    call: &call,
                    result: &result,
                    page: &page,
                    baseline: base,
                });
                drop(result);
                stats[variant].add(stat, facts);
            }
            self.peak = self.peak.max(self.captures.held_bytes());
            self.captures.clear();
            self.progress.done += 1;
            (self.control.progress)(self.progress);
        }
        Ok(())
    }
}
