//! The sandboxed executor: the local executor ([`LocalBashExecutor`]) with
//! a launcher (`launcher.rs`) that confines every command to the
//! workspace. The process group, timeout, kill path and output caps are
//! the local executor's; what the command can see differs.
//!
//! Two runners confine it ([`Runner`]):
//! - bubblewrap (`bwrap.rs`): new mount, PID, IPC, UTS, network and user
//!   namespaces; paths outside the sandbox do not exist there;
//! - Landlock (`landlock.rs`), where the kernel refuses user namespaces
//!   (a container's seccomp profile): the kernel refuses every access
//!   outside the same set of paths, so paths outside read as
//!   "Permission denied" there, not as missing.
//!
//! Under either the command reaches only:
//! - the workspace root (the executor's `cwd`), read-only, at its own
//!   absolute path, so every path on a page is the same as without it;
//! - what bash and rg need (`exposed.rs`): the `bash`, `rg`, `sleep` and
//!   `env` the child's `PATH` finds, each file alone, their shared
//!   libraries and the loader, the ripgrep config file
//!   `RIPGREP_CONFIG_PATH` names, and the locale data of the child's
//!   locale; no whole system directory, no `/etc`, no `/home`;
//! - `/dev/null`; under bubblewrap a minimal `/dev`, a private empty
//!   `/tmp` and the sandbox's own `/proc` (rg reads `/proc/self/exe`),
//!   which shows only the sandbox's processes; under Landlock the host's
//!   `/proc` stays unreadable (rg's `readlink` of `/proc/self/exe` is a
//!   walk, which Landlock does not confine);
//! - paths the operator adds ([`SandboxConfig::read_only`]).
//!
//! Nothing is writable but `/dev/null` (and bubblewrap's private `/tmp`),
//! and there is no network. The environment is an allowlist
//! ([`SANDBOX_ENV`]): of this process's variables only those names pass;
//! the fixed overlay, the operator's `env` and the request's own come on
//! top, as in the local executor.
//!
//! Fail closed: [`SandboxBashExecutor::new`] proves the runner it chose
//! (a `bwrap … true` in the very sandbox, or a Landlock domain the kernel
//! enforces) and refuses, with the reason, when it cannot; no command
//! ever runs unconfined in its place.

mod bwrap;
mod exposed;
mod landlock;

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use thiserror::Error;

use super::{LocalBashConfig, LocalBashExecutor};
use fs_search_engine::bash::{BashError, BashSpec};

pub use bwrap::BWRAP;

/// The names of this process's variables that reach a sandboxed command,
/// besides those starting with [`SANDBOX_ENV_PREFIX`]: `PATH` (where bash
/// finds rg), the locale (`LANG`, `LANGUAGE`: how bytes read as
/// characters) and `RIPGREP_CONFIG_PATH` (rg's options). Every other
/// variable of this process stays out; the fixed overlay (`NO_COLOR`,
/// `TERM`, `PAGER`, `GIT_PAGER`), the operator's configured `env` and the
/// request's own `env` are set on top, and bash adds `PWD`, `OLDPWD`,
/// `SHLVL` and `_` of its own.
pub const SANDBOX_ENV: [&str; 4] = ["PATH", "LANG", "LANGUAGE", "RIPGREP_CONFIG_PATH"];

/// The prefix of further variables that pass: the locale's `LC_*`.
pub const SANDBOX_ENV_PREFIX: &str = "LC_";

/// Whether this process's variable `name` reaches a sandboxed command.
pub fn passes_into_sandbox(name: &OsStr) -> bool {
    let name = name.to_string_lossy();
    SANDBOX_ENV.contains(&name.as_ref()) || name.starts_with(SANDBOX_ENV_PREFIX)
}

/// Which runner confines the commands.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Runner {
    /// bubblewrap where it can make its sandbox, else Landlock.
    #[default]
    Auto,
    /// bubblewrap only.
    Bwrap,
    /// Landlock only.
    Landlock,
}

impl Runner {
    /// The runner's name on the command line and in a recording.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Bwrap => "bwrap",
            Self::Landlock => "landlock",
        }
    }
}

/// What the sandbox adds to the local executor's settings.
#[derive(Debug, Clone, Default)]
pub struct SandboxConfig {
    /// The runner; `auto` by default.
    pub runner: Runner,
    /// The bubblewrap program; `None` finds `bwrap` on this process's
    /// `PATH`.
    pub bwrap: Option<PathBuf>,
    /// Further host paths (files or directories) readable at their own
    /// paths: everything under them becomes readable by the command.
    pub read_only: Vec<PathBuf>,
    /// Start bubblewrap for every run instead of running commands on
    /// agents in a sandbox kept for them (`agent/`). Kept as the test
    /// oracle of the agents: a fresh sandbox per run is the simplest
    /// correct confinement, and the tests and the executors benchmark
    /// compare the agents' results (and cost) with it; it is also the path
    /// of a run with stdin, which an agent does not take. No front end
    /// selects it. The Landlock runner always uses agents.
    pub one_shot: bool,
    /// Fault injection for tests: Landlock acts as if the kernel had none.
    #[doc(hidden)]
    pub fault_no_landlock: bool,
}

/// Why the sandbox cannot be used: the executor refuses to run anything.
#[derive(Debug, Error)]
pub enum SandboxError {
    /// No bubblewrap program was found.
    #[error(
        "the sandbox needs bubblewrap, and `{BWRAP}` is not on PATH (install it: {hint})",
        hint = bwrap::INSTALL_HINT
    )]
    BwrapMissing,
    /// The configured bubblewrap program does not exist.
    #[error(
        "the sandbox needs bubblewrap, and {0} does not exist (install it: {hint})",
        hint = bwrap::INSTALL_HINT
    )]
    BwrapNotFound(PathBuf),
    /// bubblewrap ran but could not make the sandbox (user namespaces
    /// refused, a mount denied).
    #[error(
        "bubblewrap cannot make the sandbox: {0} (user namespaces may be refused on this machine; bubblewrap comes with {hint})",
        hint = bwrap::INSTALL_HINT
    )]
    Refused(String),
    /// The kernel cannot confine the commands with Landlock.
    #[error("Landlock cannot make the sandbox: {0}")]
    Landlock(String),
    /// `auto`: neither runner can make the sandbox.
    #[error("neither bubblewrap nor Landlock can make the sandbox: {bwrap}; {landlock}")]
    NoRunner {
        /// Why bubblewrap cannot.
        bwrap: Box<SandboxError>,
        /// Why Landlock cannot.
        landlock: Box<SandboxError>,
    },
    /// The root (the executor's working directory) is unusable.
    #[error("the sandbox's workspace root {0}: {1}")]
    Root(String, String),
    /// The local executor's settings were rejected.
    #[error("{0}")]
    Executor(#[from] BashError),
}

/// The local executor with every command confined to the workspace,
/// read-only (module doc).
#[derive(Debug, Clone)]
pub struct SandboxBashExecutor {
    inner: LocalBashExecutor,
    root: PathBuf,
    runner: Runner,
}

impl SandboxBashExecutor {
    /// A sandboxed executor rooted at `config.cwd` (else the process's
    /// working directory), once the runner has proved it can confine:
    /// an error, never an unconfined executor, when it cannot.
    pub fn new(config: LocalBashConfig, sandbox: SandboxConfig) -> Result<Self, SandboxError> {
        let root = match &config.cwd {
            Some(dir) => std::path::absolute(dir),
            None => std::env::current_dir(),
        }
        .map_err(|e| SandboxError::Root(config.cwd.clone().unwrap_or_default(), e.to_string()))?;
        let root = normalised(&root);
        if !root.is_dir() {
            return Err(SandboxError::Root(
                root.display().to_string(),
                "not a directory".to_owned(),
            ));
        }
        let inner = LocalBashExecutor::new(config)?;
        let env = inner.child_env_with(&probe_spec(), passes_into_sandbox);
        let (launcher, runner): (Arc<dyn super::launcher::Launcher>, Runner) = match sandbox.runner
        {
            Runner::Bwrap => (
                bwrap::BwrapLauncher::new(&root, &sandbox, env)?,
                Runner::Bwrap,
            ),
            Runner::Landlock => (
                landlock::LandlockLauncher::new(&root, &sandbox, env)?,
                Runner::Landlock,
            ),
            Runner::Auto => match bwrap::BwrapLauncher::new(&root, &sandbox, env.clone()) {
                Ok(launcher) => (launcher, Runner::Bwrap),
                Err(bwrap) => match landlock::LandlockLauncher::new(&root, &sandbox, env) {
                    Ok(launcher) => {
                        tracing::info!("sandbox: bubblewrap cannot start ({bwrap}); Landlock runs");
                        (launcher, Runner::Landlock)
                    }
                    Err(landlock) => {
                        return Err(SandboxError::NoRunner {
                            bwrap: Box::new(bwrap),
                            landlock: Box::new(landlock),
                        });
                    }
                },
            },
        };
        Ok(Self {
            inner: inner.with_launcher(launcher),
            root,
            runner,
        })
    }

    /// The workspace root the sandbox shows.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The runner that confines the commands (never `auto`).
    pub fn runner(&self) -> Runner {
        self.runner
    }
}

/// A spec for the probe (and for the environment agents start with):
/// nothing but its working directory matters.
pub(super) fn probe_spec() -> BashSpec {
    BashSpec {
        command: String::new(),
        argv: None,
        subprocess: None,
        workdir: String::new(),
        timeout_ms: 1,
        stdout_max_bytes: 1,
        signal: None,
        stdin: None,
        env: None,
        dsh_env: None,
    }
}

delegate_to_inner_executor!(SandboxBashExecutor);

/// Variables a bash sets in its own environment (the agent's differ
/// from those it was started with).
const SHELL_SET: [&str; 3] = ["OLDPWD", "PWD", "SHLVL"];

/// The agent call for a run of `spec` with environment `env` on agents
/// started with `agent_env`: only what differs is passed.
fn agent_call(
    workdir: PathBuf,
    spec: &BashSpec,
    env: &BTreeMap<OsString, OsString>,
    agent_env: &BTreeMap<OsString, OsString>,
) -> super::agent::AgentCall {
    let changed = |name: &OsStr| SHELL_SET.iter().any(|own| name == OsStr::new(own));
    super::agent::AgentCall {
        workdir: workdir.into_os_string(),
        unset: (agent_env.keys().map(OsString::as_os_str))
            .chain(SHELL_SET.map(OsStr::new))
            .filter(|name| !env.contains_key(*name))
            .map(OsStr::to_os_string)
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
        env: (env.iter())
            .filter(|(name, value)| changed(name) || agent_env.get(*name) != Some(*value))
            .map(|(name, value)| (name.clone(), value.clone()))
            .collect(),
        argv: super::agent::command_argv(&[], spec),
    }
}

/// A directory's device and inode.
fn identity(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|m| (m.dev(), m.ino()))
}

/// `path` with `.` dropped and `..` taken lexically (an absolute path).
pub(super) fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// `spec`'s working directory in a sandbox of `root`: absolute,
/// normalised, under the root; a missing one's error otherwise.
fn workdir_in(root: &Path, spec: &BashSpec) -> Result<PathBuf, BashError> {
    let workdir = match spec.workdir.as_str() {
        "" => std::env::current_dir(),
        dir => std::path::absolute(dir),
    }
    .map_err(BashError::Spawn)?;
    let workdir = normalised(&workdir);
    // Outside the root nothing exists in the sandbox: as a missing
    // working directory.
    if !workdir.starts_with(root) {
        return Err(BashError::Spawn(std::io::Error::from_raw_os_error(
            nix::libc::ENOENT,
        )));
    }
    Ok(workdir)
}

#[cfg(test)]
mod tests;
