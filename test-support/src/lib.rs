//! `fs-search-test-support`: what the workspace's tests share, so no test
//! crate includes another's files or keeps its own copy. Only ever a
//! dev-dependency.
//!
//! - `tree`: temporary trees with pinned modification times;
//! - `reliability`: the real local executor with an environment overlay,
//!   fake `rg` scripts that inject faults, `/proc` probes;
//! - `own_process`: a test that measures its whole process runs alone in
//!   a child process;
//! - `rg_texts`: the texts rg writes itself, per major version;
//! - `sshd`: a real OpenSSH server on loopback for the remote executor;
//! - `mcp`: the MCP server under test as a process (`workbench mcp` or
//!   `workbench-mcp`) and the clients that drive it: the official SDK's,
//!   a bare JSON-RPC line client on stdio, raw HTTP/1.1.

// Test support: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

pub mod mcp;
pub mod own_process;
pub mod reliability;
pub mod rg_texts;
pub mod sshd;
pub mod tree;
