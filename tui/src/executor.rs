//! The bash executor every front end chooses between: the local one, or
//! the sandboxed one (`--sandbox`: bubblewrap around each command, only
//! the workspace readable; docs/reliability.md has the threat model).
//! Building the sandboxed one probes bubblewrap once and fails — never
//! falling back to the local one — when it cannot be used.

use std::sync::Arc;

use fs_search_engine::{
    BashExecutor, LocalBashConfig, LocalBashExecutor, SandboxBashExecutor, SandboxConfig,
    SandboxError,
};
use thiserror::Error;

/// Which executor runs the engine's commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum ExecutorKind {
    /// `bash -c` on this machine, reading what the user can read.
    #[default]
    Local,
    /// `bash -c` in a bubblewrap sandbox holding only the workspace.
    Sandbox,
}

impl ExecutorKind {
    /// `sandbox` with `--sandbox`, else `local`.
    pub fn from_flag(sandbox: bool) -> Self {
        if sandbox { Self::Sandbox } else { Self::Local }
    }

    /// The name recordings write in their header (`env.executor`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Local => "local",
            Self::Sandbox => "sandbox",
        }
    }
}

/// Why the chosen executor cannot be built.
#[derive(Debug, Error)]
pub enum ExecutorError {
    /// The local executor's settings were rejected.
    #[error("{0}")]
    Local(fs_search_engine::bash::BashError),
    /// The sandbox cannot be used: nothing runs unconfined instead.
    #[error("the sandboxed executor cannot start: {0}")]
    Sandbox(SandboxError),
}

/// The executor of `kind` with `config` (the sandbox's root is
/// `config.cwd`).
pub fn build(
    kind: ExecutorKind,
    config: LocalBashConfig,
) -> Result<Arc<dyn BashExecutor>, ExecutorError> {
    Ok(match kind {
        ExecutorKind::Local => {
            Arc::new(LocalBashExecutor::new(config).map_err(ExecutorError::Local)?)
        }
        ExecutorKind::Sandbox => Arc::new(
            SandboxBashExecutor::new(config, SandboxConfig::default())
                .map_err(ExecutorError::Sandbox)?,
        ),
    })
}
