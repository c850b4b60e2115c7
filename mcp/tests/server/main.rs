//! The MCP server's end-to-end tests: the `workbench-mcp` binary (the
//! server alone, with `workbench mcp`'s command line and process entry),
//! real bash and real rg, driven over stdio and Streamable HTTP by the
//! official Rust SDK's client and by raw JSON-RPC and HTTP; signals,
//! hang-ups, start lines and load on real processes, pipes and sockets.
//! One test binary, one module per theme. That the server answers what
//! `workbench call` prints and lists what `workbench surface` shows is
//! the workbench's own test (`tui/tests/workbench/mcp.rs`).

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A test may print what it measured (shown with --nocapture).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod mcp;
mod mcp_2026;
mod mcp_hangup;
mod mcp_http;
mod mcp_replay;

use std::path::Path;

use fs_search_process::ExecutorKind;
use fs_search_test_support::mcp::McpServer;
use fs_search_test_support::mcp::raw::Raw;
use serde_json::{Value, json};

/// The server under test: `workbench-mcp`, this crate's binary.
pub(crate) const SERVER: McpServer = McpServer::standalone(
    env!("CARGO_BIN_EXE_workbench-mcp"),
    env!("CARGO_TARGET_TMPDIR"),
);

/// Replays the transcript at `path` as `workbench replay` does (the
/// transcript library's `replay_file`, the local executor, temporary
/// trees of its own); panics with the diffs unless every record matches.
/// The number of records.
pub(crate) fn replays_without_a_diff(path: &Path) -> usize {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                let runtime = tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    let temp = tempfile::tempdir().unwrap();
                    let replay =
                        fs_search_transcript::replay_file(path, temp.path(), ExecutorKind::Local)
                            .await
                            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                    assert!(replay.all_match(), "{}", replay.diffs());
                    replay.checks.len()
                })
            })
            .join()
            .unwrap()
    })
}

/// The result of calling `tool` with `args` in a 2025-06-18 session over
/// stdio of a server of its own on `dir` with `extra`: the reference a
/// test compares another transport or era with (that this answer is what
/// `workbench call` prints is the workbench's test,
/// `mcp::calls_equal_workbench_call_byte_for_byte_without_spill`).
pub(crate) fn reference_call(dir: &Path, tool: &str, args: &Value, extra: &[&str]) -> Value {
    let mut raw = Raw::spawn(&SERVER, dir, extra);
    raw.initialize();
    raw.send_json(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":tool,"arguments":args}}));
    raw.response(1)["result"].clone()
}
