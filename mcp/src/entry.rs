//! The server as a process of its own ([`main`]): what `workbench mcp` and
//! the `workbench-mcp` binary both run. It marks inherited descriptors
//! close-on-exec, starts the runtime, names a bad `--workdir` before any
//! shell is spawned in it, serves ([`crate::run`]), waits (bounded) for
//! ssh masters still closing, and turns the outcome into the exit status,
//! a failure said once on stderr as `workbench mcp: MESSAGE` (exit 2).

use std::process::ExitCode;
use std::time::Duration;

use fs_search_process::{exit, stderr_line};

use crate::McpArgs;

/// How long the exit waits for ssh masters still closing (`--executor`).
const SSH_MASTERS_WAIT: Duration = Duration::from_secs(5);

/// Runs the server with `args` to its end; the process's exit status.
pub fn main(args: McpArgs) -> ExitCode {
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
    // A workdir on another machine (`--executor ssh://…`) is checked there.
    let workdir = args.workdir.as_deref().filter(|_| args.remote().is_none());
    if let Some(Err(e)) = workdir.map(fs_search_process::check_workdir) {
        stderr_line!("workbench: {e}");
        return ExitCode::from(exit::ERROR);
    }
    let remote = args.remote().cloned();
    let outcome = runtime.block_on(crate::run(args));
    // A blocking read (stdin) of a stopped server is not waited for.
    runtime.shutdown_background();
    // Executors dropped with the runtime's tasks close their ssh masters
    // on its worker threads: the exit waits for that, bounded.
    if let Some(remote) = remote {
        remote.join_masters(SSH_MASTERS_WAIT);
    }
    match outcome {
        Ok(code) => code,
        Err(e) => {
            stderr_line!("workbench mcp: {e}");
            ExitCode::from(exit::ERROR)
        }
    }
}
