//! `workbench`: parses the command line and runs it
//! ([`fs_search_workbench::run`]). With no subcommand it opens the TUI.

use std::process::ExitCode;

use clap::Parser;
use fs_search_workbench::Cli;

fn main() -> ExitCode {
    fs_search_workbench::run(Cli::parse())
}
