//! The bash executor every front end chooses between: the local one (or
//! its direct mode, `--executor direct`: a search command's argv spawned
//! without bash, everything else as the local one), the
//! sandboxed one (`--sandbox[=auto|bwrap|landlock]`: each command
//! confined by bubblewrap or Landlock to the workspace and the files bash
//! and rg run from; docs/reliability.md has the threat model), or
//! the remote one (`--executor ssh://[USER@]HOST[:PORT]`: each command
//! runs on HOST over ssh; docs/workbench.md; with `--sandbox`, inside
//! bubblewrap on HOST). Building the sandboxed one proves its runner
//! once, the remote one connects once (and, confined, probes bubblewrap
//! on HOST), and either fails — never falling back to the local one or
//! to an unconfined one — when it cannot be used.

use std::sync::{Arc, Mutex, OnceLock};

use crate::rg::RgInfo;

use fs_search_engine::BashExecutor;

use fs_search_exec::{
    LocalBashConfig, LocalBashExecutor, MasterClosed, Runner, SandboxBashExecutor, SandboxConfig,
    SandboxError, SshBashExecutor, SshConfig, SshError, SshTarget,
};
use thiserror::Error;

/// Which executor runs the engine's commands.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum ExecutorKind {
    /// `bash -c` on this machine, reading what the user can read.
    #[default]
    Local,
    /// The local executor's direct mode (`--executor direct`): a command
    /// with an argv (the search tools') spawned without bash, one process
    /// per call, otherwise exactly as [`ExecutorKind::Local`] runs it
    /// (the same environment, timeout, budgets, spill files and kill
    /// path); a command without one (the load probe) through bash.
    Direct,
    /// `bash -c` in a sandbox holding only the workspace and what bash
    /// and rg run from, by the runner asked for (`auto` by default).
    Sandbox(Runner),
    /// `bash -c` on another machine over ssh (inside bubblewrap there
    /// when [`RemoteHost::sandboxed`]).
    Ssh(Arc<RemoteHost>),
}

/// What a sandboxed command can read, as start lines say it (the one
/// account docs/reliability.md gives in full).
pub const SANDBOX_READABLE: &str =
    "only the workspace (read-only) and the files bash and rg run from are readable";

/// The environment variable naming an ssh configuration file used
/// instead of the user's own (`ssh -F FILE`).
pub(crate) const SSH_CONFIG_VAR: &str = "WORKBENCH_SSH_CONFIG";

/// The host of `--executor ssh://…`, as given once on the command line,
/// shared by the flag and every [`ExecutorKind`] naming it.
#[derive(Debug)]
pub struct RemoteHost {
    /// Where commands run.
    pub target: SshTarget,
    /// `target` as the user wrote it back: `ssh://[USER@]HOST[:PORT]`.
    pub label: String,
    /// Whether commands run inside bubblewrap on the host (`--sandbox`
    /// with `--executor`).
    pub sandboxed: bool,
    /// The runner `--sandbox=RUNNER` asked for on the host: only
    /// bubblewrap runs there, so [`build`] refuses `landlock`.
    asked: Option<Runner>,
    /// The executor's name in recordings' headers and the surface:
    /// `label`, with ` (sandbox: bwrap)` when sandboxed.
    name: String,
    /// The rg the host runs, asked once ([`RemoteHost::rg`]).
    rg: OnceLock<RgInfo>,
    /// The closes of the master connections of the executors built for
    /// the host (its sandboxed variant's too), for the exit to join
    /// ([`RemoteHost::join_masters`]).
    masters: Arc<Mutex<Vec<MasterClosed>>>,
}

impl PartialEq for RemoteHost {
    fn eq(&self, other: &Self) -> bool {
        self.target == other.target && self.asked == other.asked
    }
}

impl Eq for RemoteHost {}

impl std::hash::Hash for RemoteHost {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.target.hash(state);
        self.asked.hash(state);
    }
}

impl RemoteHost {
    /// The host `target`, inside a sandbox there by `asked` if any, its
    /// executors' masters kept in `masters`.
    fn new(
        target: SshTarget,
        asked: Option<Runner>,
        masters: Arc<Mutex<Vec<MasterClosed>>>,
    ) -> Self {
        let sandboxed = asked.is_some();
        let label = target.to_string();
        let name = if sandboxed {
            format!("{label} (sandbox: bwrap)")
        } else {
            label.clone()
        };
        Self {
            target,
            label,
            sandboxed,
            asked,
            name,
            rg: OnceLock::new(),
            masters,
        }
    }

    /// The same host with its commands inside a sandbox there, by
    /// `runner`: its executors' masters are joined with the host's.
    pub fn sandboxed(self: &Arc<Self>, runner: Runner) -> Arc<RemoteHost> {
        if self.asked == Some(runner) {
            return Arc::clone(self);
        }
        Arc::new(Self::new(
            self.target.clone(),
            Some(runner),
            Arc::clone(&self.masters),
        ))
    }

    /// Waits, at most `bound`, until the master connection of every
    /// executor built for the host (or its sandboxed variant) has been
    /// closed by the executor's drop; whether they all were. For a
    /// process about to exit.
    pub fn join_masters(&self, bound: std::time::Duration) -> bool {
        let deadline = std::time::Instant::now() + bound;
        let masters = match self.masters.lock() {
            Ok(mut masters) => std::mem::take(&mut *masters),
            Err(poisoned) => std::mem::take(&mut *poisoned.into_inner()),
        };
        // One past the deadline means it has passed: the rest are not
        // waited for.
        masters.into_iter().all(|master| master.join(deadline))
    }

    /// Keeps `closed` for [`RemoteHost::join_masters`].
    fn keep_master(&self, closed: Option<MasterClosed>) {
        let Some(closed) = closed else {
            return;
        };
        match self.masters.lock() {
            Ok(mut masters) => masters.push(closed),
            Err(poisoned) => poisoned.into_inner().push(closed),
        }
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
        let mut command = std::process::Command::new(fs_search_exec::SSH);
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

/// The value of `--executor`: the local executor's direct mode, or a
/// host to run on over ssh.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExecutorFlag {
    /// `direct` ([`ExecutorKind::Direct`]).
    Direct,
    /// `ssh://[USER@]HOST[:PORT]` ([`ExecutorKind::Ssh`]).
    Ssh(Arc<RemoteHost>),
}

impl ExecutorFlag {
    /// The host of `ssh://…`; `None` for `direct`.
    pub fn remote(&self) -> Option<&Arc<RemoteHost>> {
        match self {
            Self::Direct => None,
            Self::Ssh(remote) => Some(remote),
        }
    }

    /// The executor this value chooses with `--sandbox[=RUNNER]`: on the
    /// host, confined there by `sandbox`; `direct` is a mode of the local
    /// executor, so with `--sandbox` the sandbox runs the commands.
    pub fn kind(&self, sandbox: Option<Runner>) -> ExecutorKind {
        match (self, sandbox) {
            (Self::Ssh(remote), Some(runner)) => ExecutorKind::Ssh(remote.sandboxed(runner)),
            (Self::Ssh(remote), None) => ExecutorKind::Ssh(Arc::clone(remote)),
            (Self::Direct, Some(runner)) => ExecutorKind::Sandbox(runner),
            (Self::Direct, None) => ExecutorKind::Direct,
        }
    }
}

/// The value of `--executor` that names the direct mode.
pub(crate) const DIRECT: &str = "direct";

/// Parses `--executor`: `direct` or `ssh://[USER@]HOST[:PORT]`.
pub fn parse_executor(raw: &str) -> Result<ExecutorFlag, String> {
    if raw == DIRECT {
        return Ok(ExecutorFlag::Direct);
    }
    let target: SshTarget = raw.parse().map_err(|e| format!("{e}"))?;
    Ok(ExecutorFlag::Ssh(Arc::new(RemoteHost::new(
        target,
        None,
        Arc::default(),
    ))))
}

impl ExecutorKind {
    /// The sandbox with the runner of `--sandbox[=RUNNER]`, else `local`.
    pub fn from_flag(sandbox: Option<Runner>) -> Self {
        sandbox.map_or(Self::Local, Self::Sandbox)
    }

    /// What a sandbox shows, for start lines: `sandboxed by RUNNER: …`
    /// ([`SANDBOX_READABLE`]); `None` for another executor.
    pub fn sandbox_account(&self) -> Option<String> {
        let runner = self.runner()?;
        Some(format!(
            "sandboxed by {}: {SANDBOX_READABLE}",
            runner.as_str()
        ))
    }

    /// Whether commands run in a sandbox (any runner).
    pub fn is_sandbox(&self) -> bool {
        matches!(self, Self::Sandbox(_))
    }

    /// The runner a sandbox runs with: `auto` named as what it chose once
    /// an executor of it was built ([`build`]), else as asked.
    pub fn runner(&self) -> Option<Runner> {
        match self {
            Self::Sandbox(Runner::Auto) => Some(AUTO_CHOSE.get().copied().unwrap_or(Runner::Auto)),
            Self::Sandbox(runner) => Some(*runner),
            _ => None,
        }
    }

    /// Whether commands run confined: in the local sandbox, or in one on
    /// the host.
    pub fn is_confined(&self) -> bool {
        match self {
            Self::Local | Self::Direct => false,
            Self::Sandbox(_) => true,
            Self::Ssh(remote) => remote.sandboxed,
        }
    }

    /// The name recordings write in their header (`env.executor`):
    /// `local`, `direct`, `sandbox-bwrap` or `sandbox-landlock` (`sandbox` before
    /// `auto` has chosen), or the ssh target (with ` (sandbox: bwrap)`
    /// when confined there).
    pub fn as_str(&self) -> &str {
        match (self, self.runner()) {
            (Self::Ssh(remote), _) => &remote.name,
            (Self::Direct, _) => DIRECT,
            (_, Some(Runner::Bwrap)) => "sandbox-bwrap",
            (_, Some(Runner::Landlock)) => "sandbox-landlock",
            (_, Some(Runner::Auto)) => "sandbox",
            (_, None) => "local",
        }
    }

    /// Whether the workdir is a path on another machine (not checked
    /// here).
    pub fn is_remote(&self) -> bool {
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
    /// `--sandbox=landlock` with `--executor`: the Landlock runner
    /// confines this machine's processes only.
    #[error("{0}")]
    RemoteLandlock(String),
}

/// The runner `auto` chose in this process (the first sandbox built):
/// bubblewrap can start on this machine or not, for every build.
static AUTO_CHOSE: OnceLock<Runner> = OnceLock::new();

/// The executor of `kind` with `config` (the sandbox's root is
/// `config.cwd`).
pub fn build(
    kind: &ExecutorKind,
    config: LocalBashConfig,
) -> Result<Arc<dyn BashExecutor>, ExecutorError> {
    Ok(match kind {
        ExecutorKind::Local => {
            Arc::new(LocalBashExecutor::new(config).map_err(ExecutorError::Local)?)
        }
        ExecutorKind::Direct => Arc::new(
            LocalBashExecutor::new(config)
                .map_err(ExecutorError::Local)?
                .direct(),
        ),
        &ExecutorKind::Sandbox(runner) => {
            let sandbox = SandboxBashExecutor::new(
                config,
                SandboxConfig {
                    runner,
                    ..SandboxConfig::default()
                },
            )
            .map_err(ExecutorError::Sandbox)?;
            if runner == Runner::Auto {
                let _ = AUTO_CHOSE.set(sandbox.runner());
            }
            Arc::new(sandbox)
        }
        ExecutorKind::Ssh(remote) if remote.asked == Some(Runner::Landlock) => {
            return Err(ExecutorError::RemoteLandlock(remote_landlock_refusal(
                remote,
            )));
        }
        ExecutorKind::Ssh(remote) => {
            let ssh = SshBashExecutor::new(
                config,
                SshConfig {
                    sandbox: remote.sandboxed,
                    ..ssh_config(&remote.target)
                },
            )
            .map_err(|e| ExecutorError::Ssh(Box::new(e)))?;
            remote.keep_master(ssh.master_closed());
            Arc::new(ssh)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_parses_and_names_the_local_executor_s_direct_mode() {
        let flag = parse_executor("direct").unwrap();
        assert_eq!(flag, ExecutorFlag::Direct);
        assert!(flag.remote().is_none());
        assert_eq!(flag.kind(None), ExecutorKind::Direct);
        assert_eq!(ExecutorKind::Direct.as_str(), "direct");
        assert!(!ExecutorKind::Direct.is_confined() && !ExecutorKind::Direct.is_remote());
        // With --sandbox the sandbox runs the commands.
        assert_eq!(
            flag.kind(Some(Runner::Bwrap)),
            ExecutorKind::Sandbox(Runner::Bwrap)
        );
        let remote = parse_executor("ssh://box").unwrap();
        assert_eq!(remote.remote().map(|r| r.label.as_str()), Some("ssh://box"));
        assert!(parse_executor("direct2").is_err());
    }

    #[tokio::test]
    async fn the_direct_kind_builds_a_local_executor_in_direct_mode() {
        let bash = build(&ExecutorKind::Direct, LocalBashConfig::default()).unwrap();
        let spec = bash
            .resolve(fs_search_engine::bash::BashRequest {
                command: "exit 9".to_owned(),
                argv: Some(vec!["printf".to_owned(), "%s".to_owned(), "$0".to_owned()]),
                ..Default::default()
            })
            .unwrap();
        let outcome = bash
            .run(spec, fs_search_engine::bash::RunMode::whole())
            .await
            .unwrap();
        let result = outcome.run.finished().unwrap();
        assert_eq!(
            (result.exit_code, result.stdout.text.as_str()),
            (Some(0), "$0")
        );
    }
}
