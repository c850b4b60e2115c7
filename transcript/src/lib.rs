//! `fs-search-transcript`: transcripts (docs/design.md §3), recorded tool
//! calls with the result the model saw, replayed as snapshot tests; and
//! the two commands built on replaying them, `explain` and `ablate`. No
//! terminal and no network code (Cargo keeps ratatui, crossterm, hyper
//! and rmcp out of this crate's graph): the headless commands, the TUI,
//! the MCP server and the tests all use this library.
//!
//! - [`format`](mod@format): the versioned JSON Lines format and writing it;
//!   [`parse`]: reading it.
//! - [`tree`]: fixture-tree manifests and their materialiser (pinned mtimes).
//! - [`normalise`]: placeholders for temp roots and random locator parts.
//! - [`fixture_engine`]: the engine loaded on a materialised tree, running
//!   recorded calls deterministically.
//! - [`replay`]: replays a transcript and diffs each changed record.
//! - [`record`]: records calls headlessly, or a live session ([`record::Recorder`]).
//! - `rg_text`: which differences lie only in text rg writes itself.
//! - [`compare`]: recorded and current outcomes side by side (the TUI).
//! - [`error`]: what can go wrong reading or setting up a transcript.
//! - [`batch`]: many transcripts replayed as one run (`--jobs`, `--shard`).
//! - [`report`]: what a replay found, for people, JUnit and GitHub Actions.
//! - [`assert`](mod@assert): [`assert_transcripts_replay`], the `cargo test` form.
//! - [`freeze`]: `workbench freeze`, a live recording made self-contained.
//! - `drift`: how a frozen expectation differs from the live result.
//! - [`variants`]: rg-version variants added to a fixture (`freeze
//!   --also-rg`, `replay --add-variant`) and the note a replay without one
//!   gives.
//! - [`follow`]: reading a recording while another process appends to it.
//! - [`explain`]: `workbench explain`, why a path is or is not on a page.
//! - [`ablate`]: `workbench ablate`, recorded sessions replayed under
//!   config variants, with what each costs.

#![warn(unreachable_pub)]

pub mod ablate;
pub mod assert;
pub mod batch;
pub mod compare;
mod drift;
pub mod error;
pub mod explain;
pub mod fixture_engine;
pub mod follow;
pub mod format;
pub mod freeze;
pub mod normalise;
pub mod other_rg;
pub mod parse;
pub mod record;
pub mod replay;
pub mod report;
mod rg_text;
pub mod tree;
pub mod variants;

pub use assert::assert_transcripts_replay;
