//! `workbench mcp`'s flags ([`McpArgs`]), kept with the server that reads
//! them: the workspace or the transcripts to serve back, the transport
//! (stdio, or `--listen` over Streamable HTTP), recording, the executor,
//! the release and rg (`--contract`, `--rg`).

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use fs_search_process::{ConfigArg, ContractArgs, SpillArgs};

#[derive(Debug, Args)]
pub struct McpArgs {
    /// The workspace the tools search (the session cwd of every call).
    #[arg(long, required_unless_present = "replay")]
    pub workdir: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArg,
    /// Serve these transcripts back (`mcp --record` recordings or fixture
    /// transcripts): their config's surface, and each call that matches a
    /// recorded one answered with the recorded result (docs/mcp.md).
    #[arg(
        long,
        value_name = "TRANSCRIPT",
        num_args = 1..,
        conflicts_with_all = ["workdir", "config", "spill_dir", "no_spill"]
    )]
    pub replay: Vec<PathBuf>,
    /// With --replay: what a call no record matches gets: a tool error
    /// naming the closest recorded calls (error), or a live run on the
    /// first transcript's tree (live; recorded with --record).
    #[arg(long, value_enum, default_value_t = OnMiss::Error, requires = "replay")]
    pub on_miss: OnMiss,
    /// Where over-cap results are saved.
    #[command(flatten)]
    pub spill: SpillArgs,
    /// Append every completed call to this transcript (created if missing).
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Serve MCP Streamable HTTP at http://ADDR:PORT/mcp instead of stdio
    /// (port 0: any free port; the address is printed on stderr).
    #[arg(long, value_name = "ADDR:PORT")]
    pub listen: Option<String>,
    /// Require `Authorization: Bearer TOKEN`, TOKEN being this file's
    /// content (surrounding whitespace dropped); default: $WORKBENCH_MCP_TOKEN.
    #[arg(long, value_name = "FILE", requires = "listen")]
    pub token_file: Option<PathBuf>,
    /// Also accept browser requests from this Origin (`scheme://host[:port]`);
    /// loopback origins are always accepted. Repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub allow_origin: Vec<String>,
    /// Also accept this Host header (name or name:port), e.g. the name a
    /// reverse proxy forwards. Repeatable.
    #[arg(long, value_name = "HOST", requires = "listen")]
    pub allow_host: Vec<String>,
    /// Declare `_meta["anthropic/maxResultSizeChars"]` = N on both tools in
    /// tools/list, so Claude Code keeps results of up to N characters
    /// inline (off by default: tools/list is otherwise unchanged).
    #[arg(long, value_name = "N")]
    pub declare_max_result_chars: Option<u64>,
    /// End an HTTP session after this many seconds without a message.
    #[arg(long, value_name = "SECS", default_value_t = 1800, requires = "listen")]
    pub idle_timeout: u64,
    /// The most sandboxes (or ssh sessions, with --executor) running calls
    /// at once, across every session; a call beyond them waits in line,
    /// first come first served, at most its timeout (docs/mcp.md).
    #[arg(long, value_name = "N", default_value_t = 8,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sandboxes: u32,
    /// Run rg confined to the workspace (read-only) and the files bash
    /// and rg run from, by bubblewrap or Landlock (auto: bubblewrap where
    /// it can start, else Landlock; docs/reliability.md), on HOST with
    /// --executor (bubblewrap there); the default with --listen on a
    /// non-loopback address. Exits 2 when the runner cannot confine.
    #[arg(
        long,
        value_name = "RUNNER",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "auto",
        value_parser = fs_search_process::parse_runner,
        conflicts_with = "no_sandbox"
    )]
    pub sandbox: Option<fs_search_exec::Runner>,
    /// Run rg unconfined even with --listen on a non-loopback address
    /// (a warning says what a client can then read).
    #[arg(long)]
    pub no_sandbox: bool,
    /// Run rg on another machine over ssh, in --workdir there (an
    /// absolute path on HOST); pages name paths on HOST, so the agent's
    /// own file reads must reach HOST too (docs/mcp.md). Exits 2 when
    /// HOST cannot be reached. `--executor direct`: run rg here without
    /// bash (its argv spawned directly), otherwise as the local executor.
    #[arg(
        long,
        value_name = "ssh://[USER@]HOST[:PORT]",
        value_parser = fs_search_process::parse_executor,
        conflicts_with = "replay"
    )]
    pub executor: Option<fs_search_process::ExecutorFlag>,
    /// With --replay, the transcripts' headers name the release: a
    /// --contract naming another is refused.
    #[command(flatten)]
    pub contract: ContractArgs,
}

impl McpArgs {
    /// The host of `--executor ssh://…`, if one was given.
    pub fn remote(&self) -> Option<&std::sync::Arc<fs_search_process::RemoteHost>> {
        (self.executor.as_ref()).and_then(fs_search_process::ExecutorFlag::remote)
    }
}

/// `mcp --on-miss`: the answer to a call no recorded call matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OnMiss {
    /// A tool error result naming the closest recorded calls.
    Error,
    /// Run it on the transcript's tree (and record it with --record).
    Live,
}
