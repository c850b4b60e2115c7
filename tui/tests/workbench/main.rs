//! The workbench's integration tests: the built `workbench` binary with
//! real bash and real rg — headless commands, transcript replays of
//! `fixtures/`, and the TUI in a pseudo-terminal. One test binary, one
//! module per theme.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test may print what it measured (shown with --nocapture).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod ablate;
mod cli_headless;
mod client_lens;
mod contract;
mod docs;
mod e2e_terminal;
mod explain;
mod freeze_session;
mod freeze_variants;
mod hardening;
mod inherited_descriptors;
mod inputs;
mod lens;
mod mcp;
mod mcp_load;
mod recording;
mod release_replay;
mod remote;
mod replay_ci;
mod said_not_swallowed;
mod sandbox;
mod tokens;
mod transcripts;
mod user_files;
