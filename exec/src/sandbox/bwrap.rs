//! The bubblewrap runner: `bwrap` with the sandbox's arguments in front
//! of `bash`, and agents (`agent/`) in a sandbox kept for them.
//!
//! Every namespace bubblewrap offers is new (`--unshare-all`: no network,
//! new PID, IPC, UTS and user namespaces), and the sandbox dies with the
//! executor (`--die-with-parent`). The sandbox holds the links and files
//! `exposed.rs` finds (links recreated as links, each file bound alone,
//! read-only, at its own path), the operator's extras, the root, a
//! minimal `/dev`, a private empty `/tmp`, and the sandbox's own `/proc`
//! (rg reads `/proc/self/exe`; the new PID namespace shows only the
//! sandbox's processes, whose environment is the allowlist). The
//! directories bubblewrap makes on the way to a bound file are mode 0111
//! (capabilities dropped, so it holds): `/usr` can be walked to bash, not
//! listed. A working directory outside the root fails the run as a
//! missing one does (`spawn bash ENOENT`). bubblewrap reports a command
//! killed by signal N as exit 128+N; the launcher reads it back as the
//! signal, and a failure of bubblewrap itself (its `bwrap: …` message and
//! exit 1) as a failed start.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::super::agent::{AGENT_SCRIPT, AgentCall, AgentPool, Ends};
use super::super::launcher::{Launch, LaunchPrefix, Launcher, exit_as_signal};
use super::super::shell::{SHELL, find_program_on_path};
use super::exposed::{Exposed, exposed, key};
use super::{SandboxConfig, SandboxError, identity, passes_into_sandbox, workdir_in};
use fs_search_engine::bash::{BashError, BashRunResult, BashSpec};

/// The bubblewrap program's name, looked up on this process's `PATH`.
pub const BWRAP: &str = "bwrap";

/// The package that provides bubblewrap (Debian, Ubuntu).
pub(super) const INSTALL_HINT: &str = "apt-get install bubblewrap";

/// `bwrap` with the sandbox's arguments in front of `bash -c`.
#[derive(Debug)]
pub(super) struct BwrapLauncher {
    bwrap: PathBuf,
    /// Absolute and free of `.` and `..`.
    root: PathBuf,
    read_only: Vec<PathBuf>,
    /// The sandbox's arguments for the executor's environment, found once.
    base: (Vec<(OsString, OsString)>, Vec<OsString>),
    /// Agents in sandboxes of the executor's environment (`None`: every
    /// run starts its own sandbox).
    agents: Option<Mutex<Agents>>,
}

/// A launcher's agents, and the root they bind.
#[derive(Debug)]
struct Agents {
    pool: Arc<AgentPool>,
    env: BTreeMap<OsString, OsString>,
    /// The root directory's device and inode when the agents started: a
    /// root removed or replaced since is not the one they see.
    root: (u64, u64),
}

fn arg(value: impl AsRef<OsStr>) -> OsString {
    value.as_ref().to_owned()
}

impl BwrapLauncher {
    /// The launcher for `root`, once one `bwrap … true` has run in its
    /// sandbox; agents started unless `sandbox.one_shot`.
    pub(super) fn new(
        root: &Path,
        sandbox: &SandboxConfig,
        env: BTreeMap<OsString, OsString>,
    ) -> Result<Arc<Self>, SandboxError> {
        let bwrap = match &sandbox.bwrap {
            Some(path) if path.is_file() => path.clone(),
            Some(path) => return Err(SandboxError::BwrapNotFound(path.clone())),
            None => find_program_on_path(BWRAP, std::env::var_os("PATH").as_deref())
                .ok_or(SandboxError::BwrapMissing)?,
        };
        let mut launcher = Self {
            bwrap,
            root: root.to_path_buf(),
            read_only: sandbox.read_only.clone(),
            base: (Vec::new(), Vec::new()),
            agents: None,
        };
        launcher.base = (key(&env), launcher.args_for(&exposed(&env)));
        launcher.probe(&env)?;
        if !sandbox.one_shot
            && let Some(agents) = launcher.start_agents(env)
        {
            launcher.agents = Some(Mutex::new(agents));
        }
        Ok(Arc::new(launcher))
    }

    /// Every argument but the working directory's, for a child whose
    /// environment is `env` (found once for the executor's).
    fn sandbox_args(&self, env: &BTreeMap<OsString, OsString>) -> Vec<OsString> {
        if key(env) == self.base.0 {
            return self.base.1.clone();
        }
        self.args_for(&exposed(env))
    }

    /// The arguments of a sandbox holding `exposed`.
    fn args_for(&self, exposed: &Exposed) -> Vec<OsString> {
        let mut args: Vec<OsString> = ["--unshare-all", "--die-with-parent", "--cap-drop", "ALL"]
            .iter()
            .map(arg)
            .collect();
        // rg reads /proc/self/exe at start (it exits 2 without it): the
        // sandbox's own /proc, whose PID namespace holds only the
        // sandbox's processes, each with the allowlisted environment.
        for (kind, dir) in [("--dev", "/dev"), ("--proc", "/proc"), ("--tmpfs", "/tmp")] {
            args.extend([arg(kind), arg(dir)]);
        }
        for (at, target) in &exposed.links {
            args.extend([arg("--symlink"), arg(target), arg(at)]);
        }
        for real in &exposed.real {
            args.extend([arg("--ro-bind"), arg(real), arg(real)]);
        }
        for extra in &self.read_only {
            args.extend([arg("--ro-bind"), arg(extra), arg(extra)]);
        }
        args.extend([arg("--ro-bind"), arg(&self.root), arg(&self.root)]);
        // The directories bubblewrap made on the way to what it bound can
        // be walked through, not listed: `/usr` shows no file names.
        for dir in self.made_dirs(exposed) {
            args.extend([arg("--chmod"), arg("0111"), arg(dir)]);
        }
        args
    }

    /// The directories on the way to the sandbox's links and binds that
    /// are not bound themselves (nor inside a bound directory).
    fn made_dirs(&self, exposed: &Exposed) -> BTreeSet<PathBuf> {
        let bound_dirs: Vec<&Path> = (exposed.real.iter())
            .chain(&self.read_only)
            .map(PathBuf::as_path)
            .chain([self.root.as_path()])
            .filter(|path| path.is_dir())
            .collect();
        let targets = (exposed.links.iter().map(|(at, _)| at))
            .chain(&exposed.real)
            .chain(&self.read_only)
            .chain([&self.root]);
        let mut dirs = BTreeSet::new();
        for path in targets {
            for dir in path.ancestors().skip(1) {
                // The private /tmp stays writable (a here-document's file).
                let private = dir == Path::new("/tmp");
                if !private && !bound_dirs.iter().any(|bound| dir.starts_with(bound)) {
                    dirs.insert(dir.to_path_buf());
                }
            }
        }
        dirs
    }

    /// A pool of agents in the sandbox of a child whose environment is
    /// `env`, one of them started; `None` when the root is gone.
    fn start_agents(&self, env: BTreeMap<OsString, OsString>) -> Option<Agents> {
        let root = identity(&self.root)?;
        let mut args = self.sandbox_args(&env);
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
            env,
            root,
        })
    }

    /// Runs `bwrap … true` in the sandbox of a run in the root.
    fn probe(&self, env: &BTreeMap<OsString, OsString>) -> Result<(), SandboxError> {
        let mut args = self.sandbox_args(env);
        args.extend([arg("--chdir"), arg(&self.root), arg("--"), arg(SHELL)]);
        args.extend([arg("-c"), arg("true")]);
        crate::inherited::mark_inherited_descriptors_close_on_exec();
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
                "`{} … bash -c true` failed ({})",
                self.bwrap.display(),
                output.status
            ),
            said => said.to_owned(),
        };
        Err(SandboxError::Refused(reason))
    }
}

impl BwrapLauncher {
    /// Bubblewrap started for this run (the one-shot sandbox).
    fn prefix(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<LaunchPrefix, BashError> {
        let workdir = workdir_in(&self.root, spec)?;
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
        if spec.stdin.is_some() {
            return None;
        }
        let mut agents = self.agents.as_ref()?.lock().ok()?;
        let workdir = workdir_in(&self.root, spec).ok()?;
        if identity(&self.root) != Some(agents.root) {
            // The root was replaced: new agents bind the new one (a root
            // that is gone fails the one-shot run as it should).
            agents.pool.clear();
            *agents = self.start_agents(agents.env.clone())?;
        }
        if key(env) != self.base.0 {
            return None;
        }
        let call = super::agent_call(workdir, spec, env, &agents.env);
        Some((agents.pool.clone(), call))
    }
}

impl Launcher for BwrapLauncher {
    fn inherits(&self, name: &OsStr) -> bool {
        passes_into_sandbox(name)
    }

    /// On an agent when one can take the run (module doc), else a
    /// sandbox of its own.
    fn launch(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<Launch, BashError> {
        if let Some((pool, call)) = self.agent_call(spec, env) {
            return Ok(Launch::Agent(pool, call));
        }
        self.prefix(spec, env).map(Launch::Prefix)
    }

    fn finish(&self, result: BashRunResult) -> Result<BashRunResult, BashError> {
        if result.exit_code == Some(1) && result.stderr.text.starts_with("bwrap: ") {
            let said = result.stderr.text.lines().next().unwrap_or_default();
            return Err(BashError::Other(format!("sandbox: {said}")));
        }
        Ok(exit_as_signal(result))
    }
}
