//! `fs-search-workbench`: a workbench that shows exactly what a model sees
//! from the `glob` and `grep` tools of `fs-search-engine`.
//!
//! Its modules are private; each area has one entry point of the shape
//! `run(args) -> Result<ExitCode, Error>`, and [`run`] reports an `Err`
//! once on stderr (`error`):
//! - `cli`: the command line (clap), kept stable for scripts; [`Cli`];
//! - `headless`: the commands that run without a terminal, one module
//!   each: `call`, `explain`, `surface`, `lens`, `ablate`, and
//!   `transcripts` (`replay`, `record`, `freeze`);
//! - `interactive`: the interactive workbench (ratatui); [`bench`](mod@bench) is
//!   what the workbench bench drives of it;
//! - `host_report`: one agent host's report on a result, shared by both
//!   (the interactive workbench never imports `headless`);
//! - `error`: what a command fails with, and how it is reported.
//!
//! The process-level services (rg discovery, bounded reads, user
//! directories, signals, logging, engine setup) are the
//! `fs-search-process` crate's; the host lenses (what each agent host's
//! model receives of a tool result) the `fs-search-lens` crate's; the
//! transcript library with `explain` and `ablate` (format, fixture trees,
//! record, replay, freeze, follow; no terminal code) the
//! `fs-search-transcript` crate's; `workbench mcp` the `fs-search-mcp`
//! crate's: [`run`] hands it to that crate's process entry, which the
//! crate's own `workbench-mcp` binary runs too.
//!
//! The `workbench` binary parses the command line and hands it to [`run`].
#![warn(unreachable_pub)]

mod cli;
mod error;
mod headless;
mod host_report;
mod interactive;

pub use cli::Cli;

/// What `benches/workbench.rs` drives: the interactive app without a
/// terminal, drawn on a test backend.
pub mod bench {
    pub use crate::interactive::app::App;
    pub use crate::interactive::effects::{AppEvent, Effect};
    pub use crate::interactive::event_loop::draw;
    pub use crate::interactive::keymap::Action;
    pub use crate::interactive::state::session::SessionInfo;
}

use std::process::ExitCode;

use crate::cli::Command;
use crate::error::Error;
use fs_search_process::{exit, stderr_line};

/// How long the TUI's runtime may take to wind down after quitting.
const TUI_SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_millis(250);
/// How long the exit waits for ssh masters still closing (`--executor`).
const SSH_MASTERS_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Runs the command line `cli` to completion; its exit status.
pub fn run(cli: Cli) -> ExitCode {
    // The server is a process of its own, as `workbench-mcp` runs it.
    let command = match cli.command {
        Some(Command::Mcp(args)) => return fs_search_mcp::main(args),
        command => command,
    };
    // No descriptor this process inherited reaches a command, whatever
    // runs it (exec/src/inherited.rs).
    fs_search_exec::mark_inherited_descriptors_close_on_exec();
    let runtime = match fs_search_process::runtime() {
        Ok(runtime) => runtime,
        Err(e) => {
            stderr_line!("workbench: cannot start the async runtime: {e}");
            return ExitCode::from(exit::ERROR);
        }
    };
    // A bad --workdir is named as such, before any shell is spawned in it.
    // A workdir on another machine (`--executor ssh://…`) is checked there.
    let workdir = match &command {
        None if cli.tui.sandbox.remote().is_none() => cli.tui.workdir.as_deref(),
        Some(Command::Call(args)) if args.sandbox.remote().is_none() => {
            Some(args.call.workdir.as_path())
        }
        Some(Command::Explain(args)) => Some(args.call.workdir.as_path()),
        None | Some(_) => None,
    };
    if let Some(Err(e)) = workdir.map(fs_search_process::check_workdir) {
        stderr_line!("workbench: {e}");
        return ExitCode::from(exit::ERROR);
    }
    let remote = remote_host(&cli.tui, &command);
    let outcome = match command {
        None => {
            let outcome = runtime.block_on(interactive::run(cli.tui));
            // Quit ends the process: running calls are dropped (their rg
            // groups killed as their futures drop) within this wait, and
            // a blocking thread that is still stuck (in a read, an open)
            // is not waited for beyond it.
            runtime.shutdown_timeout(TUI_SHUTDOWN_WAIT);
            join_ssh_masters(remote.as_deref());
            return report(outcome.map_err(Error::from));
        }
        // Transcripts have their own exit statuses (0, 1 changed, 2 error).
        Some(Command::Replay(args)) => runtime.block_on(headless::transcripts::replay(&args)),
        Some(Command::Record(args)) => runtime.block_on(headless::transcripts::record(&args)),
        Some(Command::Freeze(args)) => runtime.block_on(headless::transcripts::freeze(&args)),
        // Dispatched above, before this runtime: the same entry.
        Some(Command::Mcp(args)) => return fs_search_mcp::main(args),
        Some(Command::Ablate(args)) => runtime.block_on(headless::ablate::run(&args)),
        Some(Command::Call(args)) => runtime.block_on(headless::call::run(args)),
        Some(Command::Explain(args)) => runtime.block_on(headless::explain::run(args)),
        Some(Command::Surface(args)) => runtime.block_on(headless::surface::run(args)),
        Some(Command::Lens(args)) => runtime.block_on(headless::lens::run(args)),
    };
    // A blocking read (stdin) of a stopped command is not waited for.
    runtime.shutdown_background();
    // Executors dropped with the runtime's tasks close their ssh masters
    // on its worker threads: the exit waits for that, bounded.
    join_ssh_masters(remote.as_deref());
    report(outcome)
}

/// The host of `--executor`, whichever command took it.
fn remote_host(
    tui: &cli::TuiArgs,
    command: &Option<Command>,
) -> Option<std::sync::Arc<fs_search_process::RemoteHost>> {
    let sandbox = match command {
        None => &tui.sandbox,
        Some(Command::Call(args)) => &args.sandbox,
        Some(Command::Explain(args)) => &args.sandbox,
        Some(Command::Surface(args)) => &args.sandbox,
        Some(Command::Replay(args)) => &args.sandbox,
        Some(Command::Ablate(args)) => &args.sandbox,
        // The server joins its own (`fs_search_mcp::main`).
        Some(Command::Mcp(_) | Command::Record(_) | Command::Freeze(_) | Command::Lens(_)) => {
            return None;
        }
    };
    sandbox.remote().cloned()
}

/// Waits, bounded, for the ssh masters of `remote`'s executors to close.
fn join_ssh_masters(remote: Option<&fs_search_process::RemoteHost>) {
    if let Some(remote) = remote {
        remote.join_masters(SSH_MASTERS_WAIT);
    }
}

/// The exit status of a command's outcome, its error said once on stderr.
fn report(outcome: Result<ExitCode, Error>) -> ExitCode {
    match outcome {
        Ok(code) => code,
        Err(e) => {
            match e.command() {
                Some(command) => stderr_line!("workbench {command}: {e}"),
                None => stderr_line!("workbench: {e}"),
            }
            ExitCode::from(e.exit_status())
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
