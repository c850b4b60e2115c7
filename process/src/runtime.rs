//! The async runtime a front end's process runs on: `workbench` and the
//! MCP server alike.

/// The stack of the runtime's threads: arguments may nest
/// `fs_search_engine::json::MAX_DEPTH` levels deep, and cloning, comparing
/// and dropping them recurses (virtual memory only).
const WORKER_STACK_BYTES: usize = 64 * 1024 * 1024;

/// A multi-threaded runtime with every driver enabled and deep stacks.
pub fn runtime() -> std::io::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
}
