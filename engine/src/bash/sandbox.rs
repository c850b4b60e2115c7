//! The sandboxed executor: the local executor ([`LocalBashExecutor`]) with
//! bubblewrap (`bwrap`) as its launcher (`launcher.rs`), so that a command
//! reads nothing but the workspace. The process group, timeout, kill path,
//! scrubbed environment and output caps are the local executor's; only
//! what the command can see differs.
//!
//! Inside the sandbox exist only:
//! - the workspace root (the executor's `cwd`), read-only, at its own
//!   absolute path, so every path on a page is the same as without it;
//! - what bash and rg need to start, read-only: the system's program and
//!   library directories (`/usr/bin`, `/usr/sbin`, `/usr/lib*`,
//!   `/usr/libexec`, and `/bin`, `/sbin`, `/lib*` as links or binds as on
//!   the host), the `bash` and `rg` that the child's `PATH` finds (each
//!   file alone, at its own path), and the ripgrep config file that
//!   `RIPGREP_CONFIG_PATH` names; no `/etc`, no `/home`;
//! - a private empty `/tmp`, a minimal `/dev` and the sandbox's own
//!   `/proc` (its processes only);
//! - paths the operator adds ([`SandboxConfig::read_only`]).
//!
//! Every namespace bubblewrap offers is new (`--unshare-all`: no network,
//! new PID, IPC, UTS and user namespaces), and the sandbox dies with the
//! executor (`--die-with-parent`). A working directory outside the root
//! fails the run as a missing one does (`spawn bash ENOENT`). bubblewrap
//! reports a command killed by signal N as exit 128+N; the launcher reads
//! it back as the signal, and a failure of bubblewrap itself (its
//! `bwrap: …` message and exit 1) as a failed start.
//!
//! Fail closed: [`SandboxBashExecutor::new`] runs one `bwrap … true` in
//! the sandbox it will use and refuses, with the reason, when bubblewrap
//! is missing or cannot make the namespaces; no command ever runs
//! unconfined in its place.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use thiserror::Error;

use super::agent::{AGENT_SCRIPT, AgentCall, AgentPool, Ends, bash_argv};
use super::launcher::{LaunchPrefix, Launcher, exit_as_signal};
use super::local::child_env;
use super::shell::{SHELL, find_program_on_path};
use super::{BashError, BashRunResult, BashSpec, LocalBashConfig, LocalBashExecutor};

/// The bubblewrap program's name, looked up on this process's `PATH`.
pub const BWRAP: &str = "bwrap";

/// The package that provides bubblewrap (Debian, Ubuntu).
const INSTALL_HINT: &str = "apt-get install bubblewrap";

/// System directories bound read-only when present: where bash, rg and
/// their libraries live.
const SYSTEM_DIRS: [&str; 7] = [
    "/usr/bin",
    "/usr/sbin",
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libx32",
    "/usr/libexec",
];

/// Top-level directories that are links into `/usr` on a merged-`/usr`
/// system (recreated as the same links) or directories of their own
/// (bound read-only).
const TOP_LEVEL_DIRS: [&str; 6] = ["/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"];

/// What the sandbox adds to the local executor's settings.
#[derive(Debug, Clone, Default)]
pub struct SandboxConfig {
    /// The bubblewrap program; `None` finds `bwrap` on this process's
    /// `PATH`.
    pub bwrap: Option<PathBuf>,
    /// Further host paths (files or directories) bound read-only at their
    /// own paths: everything under them becomes readable by the command.
    pub read_only: Vec<PathBuf>,
    /// Start bubblewrap for every run instead of running commands on
    /// agents in a sandbox kept for them (`agent/`): slower, for
    /// comparison.
    pub one_shot: bool,
}

/// Why the sandbox cannot be used: the executor refuses to run anything.
#[derive(Debug, Error)]
pub enum SandboxError {
    /// No bubblewrap program was found.
    #[error(
        "the sandbox needs bubblewrap, and `{BWRAP}` is not on PATH (install it: {INSTALL_HINT})"
    )]
    BwrapMissing,
    /// The configured bubblewrap program does not exist.
    #[error("the sandbox needs bubblewrap, and {0} does not exist (install it: {INSTALL_HINT})")]
    BwrapNotFound(PathBuf),
    /// bubblewrap ran but could not make the sandbox (user namespaces
    /// refused, a mount denied).
    #[error(
        "bubblewrap cannot make the sandbox: {0} (user namespaces may be refused on this machine; bubblewrap comes with {INSTALL_HINT})"
    )]
    Refused(String),
    /// The root (the executor's working directory) is unusable.
    #[error("the sandbox's workspace root {0}: {1}")]
    Root(String, String),
    /// The local executor's settings were rejected.
    #[error("{0}")]
    Executor(#[from] BashError),
}

/// The local executor with every command inside a bubblewrap sandbox that
/// holds only the workspace, read-only (module doc).
#[derive(Debug, Clone)]
pub struct SandboxBashExecutor {
    inner: LocalBashExecutor,
    launcher: Arc<BwrapLauncher>,
}

impl SandboxBashExecutor {
    /// A sandboxed executor rooted at `config.cwd` (else the process's
    /// working directory), once one `bwrap … true` has run in that very
    /// sandbox: an error, never an unconfined executor, when bubblewrap is
    /// missing or cannot make it.
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
        let bwrap = match sandbox.bwrap {
            Some(path) if path.is_file() => path,
            Some(path) => return Err(SandboxError::BwrapNotFound(path)),
            None => find_program_on_path(BWRAP, std::env::var_os("PATH").as_deref())
                .ok_or(SandboxError::BwrapMissing)?,
        };
        let mut launcher = BwrapLauncher {
            bwrap,
            root,
            read_only: sandbox.read_only,
            agents: None,
        };
        let inner = LocalBashExecutor::new(config)?;
        let env = child_env(inner.config(), &probe_spec());
        launcher.probe(&env)?;
        if !sandbox.one_shot
            && let Some(agents) = launcher.start_agents(env)
        {
            launcher.agents = Some(Mutex::new(agents));
        }
        let launcher = Arc::new(launcher);
        Ok(Self {
            inner: inner.with_launcher(launcher.clone()),
            launcher,
        })
    }

    /// The workspace root the sandbox shows.
    pub fn root(&self) -> &Path {
        &self.launcher.root
    }

    /// The bubblewrap program it runs.
    pub fn bwrap(&self) -> &Path {
        &self.launcher.bwrap
    }
}

/// A spec for the probe (and for the environment agents start with):
/// nothing but its working directory matters.
pub(super) fn probe_spec() -> BashSpec {
    BashSpec {
        command: String::new(),
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

/// `bwrap` with the sandbox's arguments in front of `bash -c`.
#[derive(Debug)]
struct BwrapLauncher {
    bwrap: PathBuf,
    /// Absolute and free of `.` and `..`.
    root: PathBuf,
    read_only: Vec<PathBuf>,
    /// Agents in sandboxes of the executor's environment (`None`: every
    /// run starts its own sandbox).
    agents: Option<Mutex<Agents>>,
}

/// A launcher's agents, the sandbox they run in, and the root they bind.
#[derive(Debug)]
struct Agents {
    pool: Arc<AgentPool>,
    /// The sandbox's arguments: a run whose own would differ starts its
    /// own sandbox.
    sandbox: Vec<OsString>,
    env: BTreeMap<OsString, OsString>,
    /// The root directory's device and inode when the agents started: a
    /// root removed or replaced since is not the one they see.
    root: (u64, u64),
}

/// Variables a bash sets in its own environment (the agent's differ
/// from those it was started with).
const SHELL_SET: [&str; 3] = ["OLDPWD", "PWD", "SHLVL"];

/// A directory's device and inode.
fn identity(dir: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir)
        .ok()
        .filter(std::fs::Metadata::is_dir)
        .map(|m| (m.dev(), m.ino()))
}

/// `path` with `.` dropped and `..` taken lexically (an absolute path).
fn normalised(path: &Path) -> PathBuf {
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

fn arg(value: impl AsRef<OsStr>) -> OsString {
    value.as_ref().to_owned()
}

impl BwrapLauncher {
    /// Every argument but the working directory's, for a child whose
    /// environment is `env`.
    fn sandbox_args(&self, env: &BTreeMap<OsString, OsString>) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["--unshare-all", "--die-with-parent"]
            .iter()
            .map(arg)
            .collect();
        let mut bound: Vec<PathBuf> = Vec::new();
        for dir in SYSTEM_DIRS {
            if Path::new(dir).is_dir() {
                args.extend([arg("--ro-bind"), arg(dir), arg(dir)]);
                bound.push(PathBuf::from(dir));
            }
        }
        for dir in TOP_LEVEL_DIRS {
            let path = Path::new(dir);
            match std::fs::read_link(path) {
                Ok(target) => args.extend([arg("--symlink"), arg(target), arg(dir)]),
                Err(_) if path.is_dir() => {
                    args.extend([arg("--ro-bind"), arg(dir), arg(dir)]);
                    bound.push(PathBuf::from(dir));
                }
                Err(_) => {}
            }
        }
        for dir in ["/tmp", "/dev", "/proc"] {
            let kind = match dir {
                "/tmp" => "--tmpfs",
                "/dev" => "--dev",
                _ => "--proc",
            };
            args.extend([arg(kind), arg(dir)]);
        }
        // bash and rg as the child's PATH finds them, each file alone.
        let path = env.get(OsStr::new("PATH")).map(OsString::as_os_str);
        let programs = [SHELL, "rg"]
            .into_iter()
            .filter_map(|name| find_program_on_path(name, path))
            .filter(|found| {
                let dir = found
                    .parent()
                    .and_then(|dir| std::fs::canonicalize(dir).ok());
                !dir.is_some_and(|dir| bound.contains(&dir))
            });
        let rg_config = env
            .get(OsStr::new("RIPGREP_CONFIG_PATH"))
            .map(PathBuf::from)
            .filter(|file| file.is_absolute() && file.is_file());
        for file in programs.chain(rg_config) {
            args.extend([arg("--ro-bind"), arg(&file), arg(&file)]);
        }
        for extra in &self.read_only {
            args.extend([arg("--ro-bind"), arg(extra), arg(extra)]);
        }
        args.extend([arg("--ro-bind"), arg(&self.root), arg(&self.root)]);
        args
    }

    /// A pool of agents in the sandbox of a child whose environment is
    /// `env`, one of them started; `None` when the root is gone.
    fn start_agents(&self, env: BTreeMap<OsString, OsString>) -> Option<Agents> {
        let root = identity(&self.root)?;
        let sandbox = self.sandbox_args(&env);
        let mut args = sandbox.clone();
        args.extend([arg("--chdir"), arg(&self.root), arg("--")]);
        args.extend(
            [
                SHELL,
                "--norc",
                "-c",
                AGENT_SCRIPT,
                SHELL,
                Ends::Signals.arg(),
            ]
            .map(arg),
        );
        let bwrap = self.bwrap.clone();
        let agent_env = env.clone();
        let pool = AgentPool::new(
            Box::new(move || {
                let mut command = std::process::Command::new(&bwrap);
                command.args(&args).env_clear().envs(&agent_env);
                command
            }),
            Ends::Signals,
        );
        if let Err(e) = pool.warm() {
            tracing::warn!("sandbox: cannot start an agent ahead of the first run: {e}");
        }
        Some(Agents {
            pool: Arc::new(pool),
            sandbox,
            env,
            root,
        })
    }

    /// `spec`'s working directory in the sandbox: absolute, normalised,
    /// under the root; a missing one's error otherwise.
    fn workdir(&self, spec: &BashSpec) -> Result<PathBuf, BashError> {
        let workdir = match spec.workdir.as_str() {
            "" => std::env::current_dir(),
            dir => std::path::absolute(dir),
        }
        .map_err(BashError::Spawn)?;
        let workdir = normalised(&workdir);
        // Outside the root nothing exists in the sandbox: as a missing
        // working directory.
        if !workdir.starts_with(&self.root) {
            return Err(BashError::Spawn(std::io::Error::from_raw_os_error(
                nix::libc::ENOENT,
            )));
        }
        Ok(workdir)
    }

    /// Runs `bwrap … true` in the sandbox of a run in the root.
    fn probe(&self, env: &BTreeMap<OsString, OsString>) -> Result<(), SandboxError> {
        let mut args = self.sandbox_args(env);
        args.extend([arg("--chdir"), arg(&self.root), arg("--"), arg("true")]);
        super::inherited::mark_inherited_descriptors_close_on_exec();
        let output = std::process::Command::new(&self.bwrap)
            .args(args)
            .env_clear()
            .envs(env)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => SandboxError::BwrapNotFound(self.bwrap.clone()),
                _ => {
                    SandboxError::Refused(format!("{} could not start: {e}", self.bwrap.display()))
                }
            })?;
        if output.status.success() {
            return Ok(());
        }
        let stderr = String::from_utf8_lossy(&output.stderr);
        let reason = match stderr.trim() {
            "" => format!(
                "`{} … true` failed ({})",
                self.bwrap.display(),
                output.status
            ),
            said => said.to_owned(),
        };
        Err(SandboxError::Refused(reason))
    }
}

impl Launcher for BwrapLauncher {
    fn prefix(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<LaunchPrefix, BashError> {
        let workdir = self.workdir(spec)?;
        let mut args = self.sandbox_args(env);
        args.extend([arg("--chdir"), arg(&workdir), arg("--")]);
        Ok(LaunchPrefix {
            program: self.bwrap.clone(),
            args,
        })
    }

    /// On an agent when the run's sandbox is the agents' and its working
    /// directory is in the root (else the one-shot run fails it).
    fn agent_call(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Option<(Arc<AgentPool>, AgentCall)> {
        let mut agents = self.agents.as_ref()?.lock().ok()?;
        let workdir = self.workdir(spec).ok()?;
        if identity(&self.root) != Some(agents.root) {
            // The root was replaced: new agents bind the new one (a root
            // that is gone fails the one-shot run as it should).
            agents.pool.clear();
            *agents = self.start_agents(agents.env.clone())?;
        }
        if self.sandbox_args(env) != agents.sandbox {
            return None;
        }
        let pool = agents.pool.clone();
        // The agents started with the executor's environment: a run
        // passes only what its own changes, and the variables the agent's
        // bash changed in its own.
        let changed = |name: &OsStr| SHELL_SET.iter().any(|own| name == OsStr::new(own));
        let call = AgentCall {
            workdir: workdir.into_os_string(),
            unset: (agents.env.keys().map(OsString::as_os_str))
                .chain(SHELL_SET.map(OsStr::new))
                .filter(|name| !env.contains_key(*name))
                .map(OsStr::to_os_string)
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect(),
            env: (env.iter())
                .filter(|(name, value)| changed(name) || agents.env.get(*name) != Some(*value))
                .map(|(name, value)| (name.clone(), value.clone()))
                .collect(),
            argv: bash_argv(&[], &spec.command),
        };
        Some((pool, call))
    }

    fn finish(&self, result: BashRunResult) -> Result<BashRunResult, BashError> {
        if result.exit_code == Some(1) && result.stderr.text.starts_with("bwrap: ") {
            let said = result.stderr.text.lines().next().unwrap_or_default();
            return Err(BashError::Other(format!("sandbox: {said}")));
        }
        Ok(exit_as_signal(result))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;
    use crate::bash::{BashExecutor, BashRequest};

    fn sandbox(root: &Path) -> SandboxBashExecutor {
        SandboxBashExecutor::new(
            LocalBashConfig {
                cwd: Some(root.to_string_lossy().into_owned()),
                ..LocalBashConfig::default()
            },
            SandboxConfig::default(),
        )
        .unwrap()
    }

    async fn run(exec: &SandboxBashExecutor, command: &str) -> BashRunResult {
        let spec = exec
            .resolve(BashRequest {
                command: command.into(),
                ..BashRequest::default()
            })
            .unwrap();
        exec.run(spec).await.unwrap()
    }

    #[tokio::test]
    async fn the_command_sees_the_root_read_only_and_no_home_etc_or_network() {
        let parent = tempfile::tempdir().unwrap();
        let root = parent.path().join("work");
        std::fs::create_dir(&root).unwrap();
        std::fs::write(root.join("a.txt"), "inside\n").unwrap();
        std::fs::write(parent.path().join("canary.txt"), "CANARY\n").unwrap();
        let exec = sandbox(&root);
        let out = run(
            &exec,
            "pwd; cat a.txt; ls /; cat ../canary.txt 2>&1; ls /tmp | wc -l; : > b.txt 2>/dev/null || echo read-only; grep -c : /proc/net/dev",
        )
        .await;
        let mut top: Vec<&str> = Vec::new();
        let lines: Vec<&str> = out.stdout.text.lines().collect();
        assert_eq!(lines[0], root.to_str().unwrap());
        assert_eq!(lines[1], "inside");
        for line in &lines[2..] {
            if line.contains("canary") {
                break;
            }
            top.push(line);
        }
        // The rg the child's PATH finds is bound alone at its own path: CI
        // runs rg 14 and 15 from under /root/.cache, which makes /root
        // appear, holding only that file's directories.
        let rg_top =
            super::super::shell::find_program_on_path("rg", std::env::var_os("PATH").as_deref())
                .and_then(|rg| {
                    rg.components()
                        .nth(1)
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                });
        for absent in ["etc", "home", "root", "var"] {
            if rg_top.as_deref() == Some(absent) {
                continue;
            }
            assert!(!top.contains(&absent), "{absent} in {top:?}");
        }
        let text = &out.stdout.text;
        assert!(!text.contains("CANARY"), "{text}");
        assert!(text.contains("No such file or directory"), "{text}");
        assert!(text.contains("read-only"), "{text}");
        // A network namespace of its own: the loopback device alone.
        assert_eq!(lines.last(), Some(&"1"), "{text}");
        assert_eq!(out.exit_code, Some(0), "{out:?}");
    }

    #[tokio::test]
    async fn a_working_directory_outside_the_root_is_a_missing_one() {
        let root = tempfile::tempdir().unwrap();
        let exec = sandbox(root.path());
        let mut spec = exec
            .resolve(BashRequest {
                command: "true".into(),
                ..BashRequest::default()
            })
            .unwrap();
        spec.workdir = format!("{}/..", root.path().display());
        let err = exec.run(spec).await.unwrap_err();
        assert_eq!(err.to_string(), "spawn bash ENOENT");
    }

    #[tokio::test]
    async fn exits_and_signals_read_as_the_local_executor_reports_them() {
        let root = tempfile::tempdir().unwrap();
        let exec = sandbox(root.path());
        assert_eq!(run(&exec, "exit 3").await.exit_code, Some(3));
        let killed = run(&exec, "kill -SEGV $$").await;
        assert_eq!(
            (killed.exit_code, killed.signal.as_deref()),
            (None, Some("SIGSEGV"))
        );
        assert_eq!(run(&exec, "printf '%s' \"$0\"").await.stdout.text, "bash");
    }

    #[test]
    fn a_missing_bubblewrap_is_refused_with_the_package_to_install() {
        let root = tempfile::tempdir().unwrap();
        let missing = root.path().join("no-bwrap");
        let err = SandboxBashExecutor::new(
            LocalBashConfig {
                cwd: Some(root.path().to_string_lossy().into_owned()),
                ..LocalBashConfig::default()
            },
            SandboxConfig {
                bwrap: Some(missing.clone()),
                ..SandboxConfig::default()
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "the sandbox needs bubblewrap, and {} does not exist (install it: apt-get install bubblewrap)",
                missing.display()
            )
        );
    }

    /// A fake `bwrap` that fails as a real one does where user namespaces
    /// are refused.
    #[test]
    fn a_fake_bwrap_refusing_namespaces_is_refused_with_its_reason() {
        let root = tempfile::tempdir().unwrap();
        let fake = root.path().join("bwrap");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let err = SandboxBashExecutor::new(
            LocalBashConfig {
                cwd: Some(root.path().to_string_lossy().into_owned()),
                ..LocalBashConfig::default()
            },
            SandboxConfig {
                bwrap: Some(fake),
                ..SandboxConfig::default()
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bubblewrap cannot make the sandbox: bwrap: No permissions to creating new namespace (user namespaces may be refused on this machine; bubblewrap comes with apt-get install bubblewrap)"
        );
    }
}
