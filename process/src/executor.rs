//! The bash executor every front end chooses between: the local one, the
//! sandboxed one (`--sandbox`: bubblewrap around each command, only
//! the workspace readable; docs/reliability.md has the threat model), or
//! the remote one (`--executor ssh://[USER@]HOST[:PORT]`: each command
//! runs on HOST over ssh; docs/workbench.md; with `--sandbox`, inside
//! bubblewrap on HOST). Building the sandboxed one probes bubblewrap
//! once, the remote one connects once (and, confined, probes bubblewrap
//! on HOST), and either fails — never falling back to the local one or
//! to an unconfined one — when it cannot be used.

use std::sync::{Arc, OnceLock};

use crate::rg::RgInfo;

use fs_search_engine::{
    BashExecutor, LocalBashConfig, LocalBashExecutor,
    bash::{
        SandboxBashExecutor, SandboxConfig, SandboxError, SshBashExecutor, SshConfig, SshError,
        SshTarget,
    },
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
    /// `bash -c` on another machine over ssh (inside bubblewrap there
    /// when [`RemoteHost::sandboxed`]).
    Ssh(&'static RemoteHost),
}

/// The environment variable naming an ssh configuration file used
/// instead of the user's own (`ssh -F FILE`).
pub(crate) const SSH_CONFIG_VAR: &str = "WORKBENCH_SSH_CONFIG";

/// The host of `--executor ssh://…`, as given once on the command line
/// (kept for the process's life, so an [`ExecutorKind`] stays `Copy`).
#[derive(Debug)]
pub struct RemoteHost {
    /// Where commands run.
    pub target: SshTarget,
    /// `target` as the user wrote it back: `ssh://[USER@]HOST[:PORT]`.
    pub label: String,
    /// Whether commands run inside bubblewrap on the host (`--sandbox`
    /// with `--executor`).
    pub sandboxed: bool,
    /// The executor's name in recordings' headers and the surface:
    /// `label`, with ` (sandbox: bwrap)` when sandboxed.
    name: String,
    /// The rg the host runs, asked once ([`RemoteHost::rg`]).
    rg: OnceLock<RgInfo>,
}

impl PartialEq for RemoteHost {
    fn eq(&self, other: &Self) -> bool {
        self.target == other.target && self.sandboxed == other.sandboxed
    }
}

impl Eq for RemoteHost {}

impl std::hash::Hash for RemoteHost {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.target.hash(state);
        self.sandboxed.hash(state);
    }
}

impl RemoteHost {
    /// The same host with its commands inside bubblewrap there (kept for
    /// the process's life, as the parsed one is).
    pub fn sandboxed(&'static self) -> &'static RemoteHost {
        if self.sandboxed {
            return self;
        }
        leak(self.target.clone(), true)
    }

    /// The rg the host's commands run (the first on its login `PATH`) and
    /// its version, asked over ssh on first use and kept; when the host
    /// cannot be asked, the version line says why.
    pub fn rg(&self) -> &RgInfo {
        self.rg
            .get_or_init(|| RgInfo::on_host(self.ssh_command(), &self.label))
    }

    /// A one-shot `ssh` to the host with the options the executor's
    /// connections take (its configuration file: [`SSH_CONFIG_VAR`]),
    /// ending in `-T -- HOST`.
    fn ssh_command(&self) -> std::process::Command {
        let mut command = std::process::Command::new(fs_search_engine::bash::SSH);
        command
            .args(ssh_config(&self.target).options())
            .args(["-T", "--"])
            .arg(&self.target.host);
        command
    }
}

/// The ssh settings for `target`: the user's configuration, or the file
/// [`SSH_CONFIG_VAR`] names.
fn ssh_config(target: &SshTarget) -> SshConfig {
    SshConfig {
        config_file: std::env::var_os(SSH_CONFIG_VAR).map(Into::into),
        ..SshConfig::new(target.clone())
    }
}

/// The message refusing the Landlock runner over ssh: it confines this
/// process's children, and a remote executor's commands run on HOST.
pub fn remote_landlock_refusal(remote: &RemoteHost) -> String {
    format!(
        "--sandbox=landlock cannot confine commands on {}: the Landlock runner confines processes of this machine; use --sandbox or --sandbox=bwrap (bubblewrap on {})",
        remote.label, remote.label
    )
}

fn leak(target: SshTarget, sandboxed: bool) -> &'static RemoteHost {
    let label = target.to_string();
    let name = if sandboxed {
        format!("{label} (sandbox: bwrap)")
    } else {
        label.clone()
    };
    Box::leak(Box::new(RemoteHost {
        target,
        label,
        sandboxed,
        name,
        rg: OnceLock::new(),
    }))
}

/// Parses `--executor`: `ssh://[USER@]HOST[:PORT]`.
pub fn parse_executor(raw: &str) -> Result<&'static RemoteHost, String> {
    let target: SshTarget = raw.parse().map_err(|e| format!("{e}"))?;
    Ok(leak(target, false))
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
            Self::Ssh(remote) => &remote.name,
        }
    }

    /// Whether commands run confined: in the local sandbox, or in one on
    /// the host.
    pub fn is_confined(self) -> bool {
        match self {
            Self::Local => false,
            Self::Sandbox => true,
            Self::Ssh(remote) => remote.sandboxed,
        }
    }

    /// Whether the workdir is a path on another machine (not checked
    /// here).
    pub fn is_remote(self) -> bool {
        matches!(self, Self::Ssh(_))
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
    /// The host cannot be reached or refuses the login: nothing runs
    /// here instead.
    #[error("the ssh executor cannot start: {0}")]
    Ssh(Box<SshError>),
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
        ExecutorKind::Ssh(remote) => Arc::new(
            SshBashExecutor::new(
                config,
                SshConfig {
                    sandbox: remote.sandboxed,
                    ..ssh_config(&remote.target)
                },
            )
            .map_err(|e| ExecutorError::Ssh(Box::new(e)))?,
        ),
    })
}
