//! `workbench-mcp`: the MCP server alone, with the command line of
//! `workbench mcp` (`fs_search_mcp::McpArgs`) and the same process entry
//! (`fs_search_mcp::main`); the server's own end-to-end tests run it
//! (`mcp/tests/server/`).

use std::process::ExitCode;

use clap::Parser;
use fs_search_mcp::McpArgs;

/// `workbench mcp`'s command line, as a program of its own.
#[derive(Debug, Parser)]
#[command(
    name = "workbench mcp",
    bin_name = "workbench mcp",
    version,
    about = "Serve the glob and grep tools to MCP clients: over stdio, or with --listen over Streamable HTTP at /mcp"
)]
struct Cli {
    #[command(flatten)]
    args: McpArgs,
}

fn main() -> ExitCode {
    fs_search_mcp::main(Cli::parse().args)
}
