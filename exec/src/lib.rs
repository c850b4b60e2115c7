//! `fs-search-exec`: the executors behind the engine's bash seam
//! ([`fs_search_engine::bash::BashExecutor`]) and the local spill store
//! behind its spill seam ([`fs_search_engine::spill::SpillStore`]).
//!
//! The engine owns the contract: what a run is asked ([`BashRequest`],
//! [`BashSpec`]) and what it answers. This crate owns how a run happens
//! on this machine or another: processes, their groups and the kill path,
//! pipes, capture budgets and spill files, sandboxes, ssh sessions and
//! the agents kept in them. Hence the crates this one needs and the
//! engine does not: `nix`, `tempfile`, tokio's `process` and `net`.
//!
//! - [`LocalBashExecutor`] runs `bash -c` here in its own process group
//!   (in direct mode, a request's argv without bash), and any executor
//!   runs the 0.1.0-rc.8 subprocess run of an argv (`argv.rs`);
//!   a launcher (`launcher.rs`, crate-private) starts its `bash -c`
//!   through another program or on an agent (`agent/`).
//! - [`SandboxBashExecutor`] is it with a sandbox (bubblewrap or
//!   Landlock) as the launcher: the command reads only the workspace and
//!   what bash and rg need to run.
//! - [`SshBashExecutor`] runs each command on another machine over ssh.
//! - [`LocalSpillStore`] saves spilled results as private local files.
//! - [`mark_inherited_descriptors_close_on_exec`] and
//!   [`bound_launcher_runs`]: what a front end sets once at its start.
//!
//! [`BashRequest`]: fs_search_engine::bash::BashRequest
//! [`BashSpec`]: fs_search_engine::bash::BashSpec
#![deny(missing_docs)]
#![warn(unreachable_pub)]

/// Implements [`BashExecutor`](fs_search_engine::bash::BashExecutor) for
/// an executor that is a [`LocalBashExecutor`] with a launcher of its own
/// (its field `inner`): every method is the inner executor's (the
/// sandboxed and the remote one).
macro_rules! delegate_to_inner_executor {
    ($executor:ty) => {
        #[async_trait::async_trait]
        impl fs_search_engine::bash::BashExecutor for $executor {
            fn resolve(
                &self,
                request: fs_search_engine::bash::BashRequest,
            ) -> Result<fs_search_engine::bash::BashSpec, fs_search_engine::bash::BashError> {
                self.inner.resolve(request)
            }

            async fn run(
                &self,
                spec: fs_search_engine::bash::BashSpec,
                mode: fs_search_engine::bash::RunMode,
            ) -> Result<fs_search_engine::bash::RunOutcome, fs_search_engine::bash::BashError> {
                self.inner.run(spec, mode).await
            }

            fn release(&self, result: &fs_search_engine::bash::BashRunResult) {
                self.inner.release(result);
            }
        }
    };
}

mod agent;
mod argv;
mod batched;
mod capture;
mod group;
mod inherited;
mod launcher;
mod local;
mod rg_dir;
mod sandbox;
mod shell;
mod slots;
mod spawn_refusal;
mod spill;
mod ssh;
#[cfg(test)]
mod test_run;

pub use inherited::mark_inherited_descriptors_close_on_exec;
pub use local::{LocalBashConfig, LocalBashExecutor};
pub use sandbox::{
    BWRAP, Runner, SANDBOX_ENV, SANDBOX_ENV_PREFIX, SandboxBashExecutor, SandboxConfig,
    SandboxError, passes_into_sandbox,
};
pub use slots::bound_launcher_runs;
pub use spill::{LocalSpillStore, session_dir_name};
pub use ssh::{BadTarget, MasterClosed, SSH, SshBashExecutor, SshConfig, SshError, SshTarget};
