//! `workbench`: the fs-search workbench binary. With no subcommand it
//! opens the TUI; `call` and `surface` run headless; `mcp` serves the
//! tools over stdio.

mod cli;
mod headless;
mod mcp;
mod setup;
mod transcript;
mod tui;

use std::process::ExitCode;

use clap::Parser;

use crate::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("workbench: cannot start the async runtime: {e}");
            return ExitCode::from(2);
        }
    };
    // Transcripts have their own exit statuses (0, 1 changed, 2 error).
    let cli = match cli.command {
        Some(Command::Replay(args)) => {
            let code = runtime.block_on(transcript::commands::replay(&args.files, args.update));
            return ExitCode::from(code);
        }
        Some(Command::Record(args)) => {
            let code = runtime.block_on(transcript::commands::record(
                &args.tree,
                args.config.as_deref(),
                &args.out,
            ));
            return ExitCode::from(code);
        }
        Some(Command::Mcp(args)) => {
            let code = runtime.block_on(mcp::run(args));
            // stdin's reader thread may still sit in a blocking read.
            runtime.shutdown_background();
            return ExitCode::from(code);
        }
        Some(Command::Freeze(args)) => {
            let code = runtime.block_on(transcript::freeze::command(
                &args.recording,
                &args.out,
                &args.tree_out,
            ));
            return ExitCode::from(code);
        }
        command => Cli { command, ..cli },
    };
    if cli.command.is_none() {
        return tui::main(&runtime, cli.workdir, cli.config);
    }
    let outcome = runtime.block_on(async {
        match cli.command {
            Some(Command::Call(args)) => headless::call(args).await,
            Some(Command::Surface(args)) => headless::surface(args).await,
            Some(
                Command::Replay(_) | Command::Record(_) | Command::Mcp(_) | Command::Freeze(_),
            ) => Ok(()),
            // The TUI, started above.
            None => Ok(()),
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("workbench: {e}");
            ExitCode::from(2)
        }
    }
}
