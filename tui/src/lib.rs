//! `fs-search-workbench`: a workbench that shows exactly what a model sees
//! from the `glob` and `grep` tools of `fs-search-engine`.
//!
//! - [`ablate`]: `workbench ablate`, recorded sessions replayed under
//!   config variants, with what each costs;
//! - [`atomic_file`]: replacing a file at once (temp file, sync, rename);
//! - [`bounded`]: reading the files a user names, regular files only, capped;
//! - [`cli`]: the command line (clap), kept stable for scripts;
//! - [`setup`]: loading the engine the way every front end runs it (the
//!   local executor rooted at the workdir, a spill store, the timeout policy);
//! - [`headless`]: the commands that run without a terminal (`call`,
//!   `surface`, `replay`, `record`, `freeze`);
//! - [`explain`]: `workbench explain`, why a path is or is not on a page;
//! - [`lens`]: host lenses, what each agent host's model receives of a
//!   tool result;
//! - [`mcp`]: `workbench mcp`, the tools served to agents over MCP;
//! - [`nearest`]: the known name nearest a mistyped one ("did you mean");
//! - [`rg`]: which rg the workbench runs (version, path, major version);
//! - [`signals`]: SIGINT, SIGTERM and SIGHUP cancel the call in flight;
//! - [`logging`]: the log file of each TUI or MCP server process;
//! - [`user_dirs`]: the per-user directories the workbench writes to
//!   (spill root, logs, recordings), created private;
//! - [`prune`]: removing from them what is older than `--retention`;
//! - [`tokens`]: loading the tokenizer, the request prefix (issue 13);
//! - [`transcript`]: the transcript library: format, fixture trees,
//!   normalisation, record and replay (no terminal code);
//! - [`tui`]: the interactive workbench (ratatui).
//!
//! The `workbench` binary parses the command line and hands it to [`run`].

pub mod ablate;
pub mod atomic_file;
pub mod bounded;
pub mod cli;
pub mod console;
pub mod executor;
pub mod exit;
pub mod explain;
pub mod headless;
pub mod lens;
pub mod log_records;
pub mod logging;
pub mod mcp;
pub mod nearest;
pub mod prune;
pub mod rg;
pub mod setup;
pub mod signals;
pub mod tokens;
pub mod transcript;
pub mod tui;
pub mod user_dirs;

use std::process::ExitCode;

use crate::cli::{Cli, Command};
use crate::console::stderr_line;

/// The stack of the runtime's threads.
const WORKER_STACK_BYTES: usize = 64 * 1024 * 1024;
/// How long the TUI's runtime may take to wind down after quitting.
const TUI_SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_millis(250);

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
    if let Some(Err(e)) = workdir.map(setup::check_workdir) {
        stderr_line!("workbench: {e}");
        return ExitCode::from(exit::ERROR);
    }
    let outcome = match cli.command {
        None => {
            let code = tui::main(&runtime, cli.tui);
            // Quit ends the process: running calls are dropped (their rg
            // groups killed as their futures drop) within this wait, and
            // a blocking thread that is still stuck (in a read, an open)
            // is not waited for beyond it.
            runtime.shutdown_timeout(TUI_SHUTDOWN_WAIT);
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
        Some(Command::Mcp(args)) => Ok(runtime.block_on(mcp::run(args))),
        Some(Command::Ablate(args)) => Ok(runtime.block_on(headless::ablate::ablate(&args))),
        Some(Command::Call(args)) => runtime.block_on(headless::call::call(args)),
        Some(Command::Explain(args)) => runtime.block_on(headless::explain::run(args)),
        Some(Command::Surface(args)) => runtime.block_on(headless::surface::surface(args)),
        Some(Command::Lens(args)) => runtime.block_on(headless::lens::run(args)),
    };
    // A blocking read (stdin) of a stopped command is not waited for.
    runtime.shutdown_background();
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            stderr_line!("workbench: {e}");
            ExitCode::from(exit::ERROR)
        }
    }
}
