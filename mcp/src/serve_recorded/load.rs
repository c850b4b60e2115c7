//! Reading `workbench mcp --replay TRANSCRIPT...` into what the server
//! serves: the transcripts read with the transcript reader (a bad one is a
//! setup error naming the file and line: exit 2), their records in
//! command-line order with the outcome for the installed rg (the record's
//! variant for rg's major version when it has one, else the record's own
//! outcome, the header's rg), and the engine whose surface is served: the
//! header's config (every transcript must have the same one: a server
//! serves one surface), loaded as the release the headers name (the same
//! in every transcript; a `--contract` naming another is refused).
//!
//! With `--on-miss error` no tree is needed (the engine is loaded without
//! a workdir, as `workbench surface` loads it), so a transcript serves
//! offline without its tree. With `--on-miss live` the first transcript's
//! tree is prepared once as `workbench replay` prepares it (a fixture
//! manifest materialised in a temp dir, rg given the header's rg config
//! lines) and the engine runs there; `--record FILE` then records those
//! calls under a header naming that tree, config and rg config lines, so
//! `workbench replay FILE` replays them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fs_search_engine::Registry;
use serde_json::Value;
use thiserror::Error;

use super::matching::canonical;
use super::recorded::RecordedCalls;
use crate::session_recording::{Recording, RecordingError, record_dir};
use crate::shared_record_file::{RecordBoundError, RecordFileError};
use crate::{McpArgs, OnMiss};
use fs_search_engine::release::Release;
use fs_search_process::ExecutorKind;
use fs_search_process::{ContractChoice, SetupError, SpillChoice, load_engine};
use fs_search_transcript::FixtureEngine;
use fs_search_transcript::read_transcript;
use fs_search_transcript::relative_path;
use fs_search_transcript::{
    CallOptions, Header, RecordedCall, SpillMode, Transcript, TranscriptEnv, tree_path,
};
use fs_search_transcript::{EngineError, TranscriptError};

/// Why `--replay` cannot serve (exit 2, the message on stderr).
#[derive(Debug, Error)]
pub(crate) enum ReplayError {
    #[error("--record with --replay records the calls run live: it needs --on-miss live")]
    RecordNeedsLive,
    /// A transcript cannot be read (the message names its file and line).
    #[error("--replay {0}")]
    Read(Box<TranscriptError>),
    #[error(
        "--replay {path}: its config differs from {first}'s: one server serves one \
         surface, so the transcripts must share their config"
    )]
    ConfigDiffers { path: String, first: String },
    #[error(
        "--replay {path}: it was recorded as release {release}, {first} as {first_release}: \
         one server runs one release"
    )]
    ReleaseDiffers {
        path: String,
        release: Release,
        first: String,
        first_release: Release,
    },
    #[error(
        "--contract {asked}: --replay {path} was recorded as release {release} (its header), \
         which a replay runs as"
    )]
    ContractDiffers {
        asked: Release,
        path: String,
        release: Release,
    },
    #[error("--replay needs at least one transcript")]
    NoTranscript,
    /// The engine does not load with the transcripts' config.
    #[error("--replay {path}: {source}")]
    Load {
        path: String,
        source: Box<SetupError>,
    },
    /// The first transcript's tree cannot be prepared for live calls.
    #[error("--replay {path}:1: the header's tree: {source}")]
    Tree {
        path: String,
        source: Box<TranscriptError>,
    },
    /// The engine does not load on the prepared tree.
    #[error("--replay {path}: {source}")]
    Engine { path: String, source: EngineError },
    /// `WORKBENCH_RECORD_MAX_BYTES` is not a usable bound.
    #[error(transparent)]
    RecordBound(RecordBoundError),
    /// The `--record` file cannot be opened.
    #[error("--record {0}")]
    Record(RecordFileError),
}

/// The first transcript's tree, prepared for live calls.
struct LiveTree {
    /// Holds the materialised tree and rg's config file alive.
    engine: FixtureEngine,
    /// The tree as the header names it, resolved.
    tree: PathBuf,
    /// The first transcript's header.
    header: Header,
    executor: ExecutorKind,
}

/// What `--replay` serves.
pub(crate) struct Replayed {
    /// The recorded answers.
    pub calls: Arc<RecordedCalls>,
    /// The engine: its surface is served, and with `--on-miss live` it
    /// runs the calls no record matches.
    pub registry: Arc<Registry>,
    /// The load's warnings (rg missing), logged already.
    pub warnings: Vec<String>,
    /// Where live calls run (the prepared tree; `.` without one).
    pub workdir: String,
    /// The transcripts' config.
    pub config: Value,
    /// The transcripts' release, and the rg `--rg` chose.
    pub contract: ContractChoice,
    live: Option<LiveTree>,
}

impl Replayed {
    /// Reads the transcripts of `args.replay` and loads the engine.
    pub(crate) async fn load(args: &McpArgs, executor: ExecutorKind) -> Result<Self, ReplayError> {
        if args.record.is_some() && args.on_miss == OnMiss::Error {
            return Err(ReplayError::RecordNeedsLive);
        }
        let mut transcripts: Vec<(&Path, Transcript)> = Vec::with_capacity(args.replay.len());
        for path in &args.replay {
            let transcript = read_transcript(path).map_err(|e| ReplayError::Read(Box::new(e)))?;
            if let Some((first, t)) = transcripts.first()
                && canonical(&t.header.config) != canonical(&transcript.header.config)
            {
                return Err(ReplayError::ConfigDiffers {
                    path: path.display().to_string(),
                    first: first.display().to_string(),
                });
            }
            if let Some((first, t)) = transcripts.first()
                && t.header.contract != transcript.header.contract
            {
                return Err(ReplayError::ReleaseDiffers {
                    path: path.display().to_string(),
                    release: transcript.header.contract,
                    first: first.display().to_string(),
                    first_release: t.header.contract,
                });
            }
            transcripts.push((path, transcript));
        }
        let Some((first_path, first)) = transcripts.first() else {
            return Err(ReplayError::NoTranscript);
        };
        let release = first.header.contract;
        if let Some(asked) = args.contract.contract
            && asked != release
        {
            return Err(ReplayError::ContractDiffers {
                asked,
                path: first_path.display().to_string(),
                release,
            });
        }
        let contract = ContractChoice {
            release,
            rg: args.contract.rg.clone(),
        };
        tracing::info!(contract = %release, "the transcripts' release");
        let config = first.header.config.clone();
        let rg_major = contract.rg_info(&executor).major();
        let calls = recorded_calls(&transcripts, rg_major);
        tracing::info!(
            records = calls.len(),
            rg_major = ?rg_major,
            on_miss = ?args.on_miss,
            "serving recorded calls"
        );
        let calls = Arc::new(RecordedCalls::new(calls, args.on_miss));
        match args.on_miss {
            OnMiss::Error => {
                let loaded = load_engine(
                    None,
                    &config,
                    SpillChoice::None,
                    &ExecutorKind::Local,
                    &contract,
                )
                .await
                .map_err(|source| ReplayError::Load {
                    path: first_path.display().to_string(),
                    source: Box::new(source),
                })?;
                for warning in &loaded.warnings {
                    tracing::warn!("{warning}");
                }
                Ok(Self {
                    calls,
                    registry: Arc::new(loaded.registry),
                    warnings: loaded.warnings,
                    workdir: ".".to_owned(),
                    config,
                    contract,
                    live: None,
                })
            }
            OnMiss::Live => {
                let label = first_path.display().to_string();
                let tree = tree_path(first_path, &first.header.tree);
                let engine =
                    FixtureEngine::new(&tree, config.clone(), &first.header.env.ripgrep_config)
                        .map_err(|source| ReplayError::Tree {
                            path: label.clone(),
                            source: Box::new(source),
                        })?
                        .with_executor(executor.clone())
                        .with_release(release)
                        .with_rg(contract.rg.clone());
                let registry =
                    engine
                        .registry_for(&CallOptions::default())
                        .await
                        .map_err(|source| ReplayError::Engine {
                            path: label,
                            source,
                        })?;
                Ok(Self {
                    calls,
                    registry: Arc::new(registry),
                    warnings: Vec::new(),
                    workdir: engine.root().to_string_lossy().into_owned(),
                    config,
                    contract,
                    live: Some(LiveTree {
                        engine,
                        tree,
                        header: first.header.clone(),
                        executor,
                    }),
                })
            }
        }
    }

    /// Opens `--record FILE` for the calls run live: its header names the
    /// first transcript's tree (relative to FILE's directory), config and
    /// rg config lines, and this rg.
    pub(crate) fn recording(&self, path: &Path) -> Result<Recording, ReplayError> {
        let Some(live) = &self.live else {
            return Err(ReplayError::RecordNeedsLive);
        };
        let header = Header {
            contract: live.header.contract,
            tree: relative_path(record_dir(path), &live.tree),
            config: live.header.config.clone(),
            env: TranscriptEnv {
                rg: self.contract.rg_info(&live.executor).version_line,
                ripgrep_config: live.header.env.ripgrep_config.clone(),
                executor: Some(live.executor.as_str().to_owned()),
            },
        };
        Recording::open_with_header(path, header, live.engine.root(), SpillMode::Store).map_err(
            |e| match e {
                RecordingError::Bound(e) => ReplayError::RecordBound(e),
                RecordingError::File(e) => ReplayError::Record(e),
            },
        )
    }
}

/// Every record of `transcripts`, in order, with its outcome for rg
/// `rg_major`.
fn recorded_calls(transcripts: &[(&Path, Transcript)], rg_major: Option<u32>) -> Vec<RecordedCall> {
    transcripts
        .iter()
        .flat_map(|(path, transcript)| {
            let header = Arc::new(transcript.header.clone());
            transcript.records.iter().map(move |record| {
                RecordedCall::of_record(*path, Arc::clone(&header), record, rg_major)
            })
        })
        .collect()
}
