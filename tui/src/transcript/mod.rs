//! Transcripts (DESIGN.md §3): recorded tool calls with the result the
//! model saw, replayed as snapshot tests.
//!
//! - [`format`]: the versioned JSON Lines format and writing it;
//!   [`parse`]: reading it.
//! - [`tree`]: fixture-tree manifests and their materialiser (pinned mtimes).
//! - [`normalise`]: placeholders for temp roots and random locator parts.
//! - [`runner`]: runs calls deterministically on a materialised tree.
//! - [`replay`]: replays a transcript and diffs each changed record.
//! - [`record`]: records calls headlessly, or a live session ([`record::Recorder`]).
//! - [`compare`]: recorded and current outcomes side by side (the TUI).
//! - [`commands`]: `workbench replay` and `workbench record`.
//! - [`freeze`]: `workbench freeze`, a live recording made self-contained.

// A library API for the TUI and the tests as well as the headless
// commands: not every item is used by every build of the binary.
#![allow(dead_code)]

pub mod commands;
pub mod compare;
pub mod error;
pub mod format;
pub mod freeze;
pub mod normalise;
pub mod parse;
pub mod record;
pub mod replay;
pub mod runner;
pub mod tree;
