//! `fs-search-workbench`: a workbench that shows exactly what a model sees
//! from the `glob` and `grep` tools of `fs-search-engine`.
//!
//! - [`cli`]: the command line (clap), kept stable for scripts;
//! - [`headless`]: the commands that run without a terminal (`call`,
//!   `surface`, `replay`, `record`, `freeze`);
//! - [`interactive`]: the interactive workbench (ratatui).
//!
//! The process-level services (rg discovery, bounded reads, user
//! directories, signals, logging, engine setup) are the
//! `fs-search-process` crate's; the host lenses (what each agent host's
//! model receives of a tool result) the `fs-search-lens` crate's; the
//! transcript library with `explain` and `ablate` (format, fixture trees,
//! record, replay, freeze, follow; no terminal code) the
//! `fs-search-transcript` crate's; `workbench mcp` the `fs-search-mcp`
//! crate's.
//!
//! The `workbench` binary parses the command line and hands it to [`run`].

pub mod cli;
pub mod headless;
pub mod interactive;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use fs_search_process::{exit, stderr_line};

/// The stack of the runtime's threads.
const WORKER_STACK_BYTES: usize = 64 * 1024 * 1024;
/// How long the TUI's runtime may take to wind down after quitting.
const TUI_SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_millis(250);
/// How long the exit waits for ssh masters still closing (`--executor`).
const SSH_MASTERS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs the command line `cli` to completion; its exit status.
pub fn run(cli: Cli) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        // Arguments may nest `fs_search_engine::json::MAX_DEPTH` levels deep; cloning,
        // comparing and dropping them recurses (virtual memory only).
        .thread_stack_size(WORKER_STACK_BYTES)
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            stderr_line!("workbench: cannot start the async runtime: {e}");
            return ExitCode::from(exit::ERROR);
        }
    };
    // A bad --workdir is named as such, before any shell is spawned in it.
    // A workdir on another machine (`--executor ssh://…`) is checked there.
    let workdir = match &cli.command {
        None => cli.tui.workdir.as_deref(),
        Some(Command::Call(args)) if args.sandbox.executor.is_none() => {
            Some(args.workdir.as_path())
        }
        Some(Command::Explain(args)) => Some(args.workdir.as_path()),
        Some(Command::Mcp(args)) if args.executor.is_none() => args.workdir.as_deref(),
        Some(_) => None,
    };
    if let Some(Err(e)) = workdir.map(fs_search_process::check_workdir) {
        stderr_line!("workbench: {e}");
        return ExitCode::from(exit::ERROR);
    }
    let outcome = match cli.command {
        None => {
            let code = interactive::main(&runtime, cli.tui);
            // Quit ends the process: running calls are dropped (their rg
            // groups killed as their futures drop) within this wait, and
            // a blocking thread that is still stuck (in a read, an open)
            // is not waited for beyond it.
            runtime.shutdown_timeout(TUI_SHUTDOWN_WAIT);
            fs_search_engine::bash::wait_for_ssh_masters(SSH_MASTERS_WAIT);
            return code;
        }
        // Transcripts have their own exit statuses (0, 1 changed, 2 error).
        Some(Command::Replay(args)) => Ok(runtime.block_on(headless::transcripts::replay(&args))),
        Some(Command::Record(args)) => Ok(runtime.block_on(headless::transcripts::record(
            &args.tree,
            args.config.raw(),
            &args.out,
            args.tokenizer.file(),
        ))),
        Some(Command::Freeze(args)) => Ok(runtime.block_on(headless::transcripts::freeze(
            &args.recording,
            args.workdir.as_deref(),
            &args.out,
            &args.tree_out,
        ))),
        Some(Command::Mcp(args)) => Ok(runtime.block_on(fs_search_mcp::run(args))),
        Some(Command::Ablate(args)) => Ok(runtime.block_on(headless::ablate::ablate(&args))),
        Some(Command::Call(args)) => runtime.block_on(headless::call::call(args)),
        Some(Command::Explain(args)) => runtime.block_on(headless::explain::run(args)),
        Some(Command::Surface(args)) => runtime.block_on(headless::surface::surface(args)),
        Some(Command::Lens(args)) => runtime.block_on(headless::lens::run(args)),
    };
    // A blocking read (stdin) of a stopped command is not waited for.
    runtime.shutdown_background();
    // Executors dropped with the runtime's tasks close their ssh masters
    // on its worker threads: the exit waits for that, bounded.
    fs_search_engine::bash::wait_for_ssh_masters(SSH_MASTERS_WAIT);
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            stderr_line!("workbench: {e}");
            ExitCode::from(exit::ERROR)
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use crate::cli::Cli;

    /// The TUI names a bad workdir as `check_workdir` does (the MCP
    /// server's workspace: `fs-search-mcp`'s `workspace` tests).
    #[tokio::test]
    async fn the_tui_names_a_bad_workdir_as_check_workdir_does() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x").unwrap();
        let missing = dir.path().join("missing");
        for (bad, problem) in [
            (&missing, "no such file or directory"),
            (&file, "not a directory (a regular file)"),
        ] {
            let raw = bad.to_str().unwrap();
            let config = r#"{"sampleOverCapGlobResults":true}"#;
            let cli =
                Cli::try_parse_from(["workbench", "--workdir", raw, "--config", config]).unwrap();
            let err = crate::interactive::run(cli.tui).await.unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("--workdir {}: {problem}", bad.display())
            );
        }
    }
}
