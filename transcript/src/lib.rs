//! `fs-search-transcript`: transcripts (docs/design.md §3), recorded tool
//! calls with the result the model saw, replayed as snapshot tests; and
//! the commands built on them, `explain` and `ablate`. No terminal and no
//! network code (Cargo keeps ratatui, crossterm, hyper and rmcp out of
//! this crate's graph): the headless commands, the TUI, the MCP server and
//! the tests all use this library, through this root alone:
//!
//! - The format: a [`Transcript`] is a [`Header`] and [`Record`]s (a
//!   [`Call`] and its [`Outcome`]); a [`RecordedCall`] is one record with
//!   its file, line and header. [`parse()`] reads one; [`header_line`],
//!   [`call_line`] and [`outcome_lines`] write its lines, [`save_transcript`]
//!   a whole file.
//! - Running calls: a [`FixtureEngine`] on an [`EngineTree`] (a
//!   [`Manifest`]'s tree, materialised); [`record_calls`] and the live
//!   [`Recorder`]; [`Normaliser`] for temp paths; [`Tail`] follows a
//!   growing recording.
//! - Replaying: [`replay_file`], [`replay_files`] (`--jobs`, `--shard`),
//!   the reports ([`human_text`], [`junit_report`], [`github_annotations`]),
//!   [`assert_transcripts_replay`] for `cargo test`; [`prepare_freeze`]
//!   (`workbench freeze`) and [`with_variant_added`] (rg-version variants).
//! - [`explain()`] (why a path is or is not on a page) and [`ablate()`]
//!   (recorded sessions under config variants, with what each costs).

#![warn(unreachable_pub)]

mod ablate;
mod assert;
mod batch;
mod compare;
mod drift;
mod error;
mod explain;
mod fixture_engine;
mod follow;
mod format;
mod freeze;
mod normalise;
mod order_free;
mod other_rg;
mod parse;
mod record;
mod replay;
mod report;
mod rg_text;
mod tree;
mod variants;

pub use ablate::grid::parse_setting as parse_ablate_setting;
pub use ablate::grid::{combinations as ablate_variants, label as variant_label};
pub use ablate::report::markdown as ablation_markdown;
pub use ablate::report::{csv as ablation_csv, json as ablation_json};
pub use ablate::run::merged as merged_config;
pub use ablate::stats::{PageFacts, PageStat, SurfaceStat, VariantStats};
pub use ablate::{AblateError, Ablation, PageEvent, ablate};
pub use ablate::{Control as AblateControl, Input as AblateInput, Progress as AblateProgress};
pub use assert::{assert_transcripts_replay, check_transcripts};
pub use batch::{BatchOptions, FileResult, Shard, default_jobs, replay_files};
pub use compare::{Row as CompareRow, Side as CompareSide, side_by_side};
pub use error::{EngineError, TranscriptError};
pub use explain::recorded::explain_recorded;
pub use explain::render::text as explanation_text;
pub use explain::{ExplainError, Request as ExplainRequest, explain, explain_result};
pub use fixture_engine::{EngineTree, FixtureEngine, outcome_of, rg_version_for};
pub use follow::{Tail, Update};
pub use format::Transcript;
pub use format::{Call, CallOptions, Cancel, ClientInfo, Header, Outcome, OutcomeError};
pub use format::{OutcomeSpill, Record, RecordedCall, ReleaseKey, SessionOption, SpillMode};
pub use format::{TranscriptEnv, call_line, header_line, outcome_lines, record_lines, tree_path};
pub use freeze::{Frozen, Prepared, prepare as prepare_freeze};
pub use normalise::{Normaliser, SPILL, TREE};
pub use order_free::Comparison;
pub use other_rg::OtherRg;
pub use parse::{parse, parse_header_line, parse_keeping_duplicates};
pub use record::save as save_transcript;
pub use record::{Recorder, parse_calls, record as record_calls, relative_path};
pub use replay::replay_transcript_as;
pub use replay::{Replay, read_transcript, replay_file, replay_transcript_with_rg};
pub use report::github::{annotations as github_annotations, summary as github_summary};
pub use report::human::over_budget as over_budget_text;
pub use report::human::{fails as replay_fails, file_text as human_text};
pub use report::junit::report as junit_report;
pub use report::{FileReport, ReportOptions, other_release_note, other_rg_note};
pub use tree::{Manifest, MaterialisedTree};
pub use variants::{VariantAdded, with_variant_added};
