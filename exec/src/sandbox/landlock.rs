//! The Landlock runner, for machines where bubblewrap cannot make its
//! namespaces (a container's seccomp profile refuses user namespaces).
//!
//! A dedicated spawner thread restricts itself once with a Landlock
//! ruleset (`Ruleset::restrict_self`, which also sets `no_new_privs` on
//! that thread): a domain is per thread and inherited by every process
//! the thread starts, so every agent (`agent/`) is spawned from it,
//! through a channel of spawn requests; no `unsafe`, no `pre_exec`. The
//! agents are long-lived as bubblewrap's are; the spawned process is the
//! agent's shell itself.
//!
//! The ruleset handles every file-system access of the kernel's ABI (up to
//! ABI 5: read, write, execute, make, remove, refer, truncate, device
//! ioctl), TCP bind and connect (ABI 4), and scopes signals and abstract
//! UNIX sockets to the domain (ABI 6). It allows reading (and executing)
//! only the set bubblewrap binds (`exposed.rs`, the root, the operator's
//! extras), reading and writing `/dev/null` (the agent's script
//! redirects to it) and reading the devices of bubblewrap's minimal
//! `/dev` that hold nothing of the host (`/dev/zero`, `/dev/full`,
//! `/dev/random`, `/dev/urandom`); nothing else, so nothing is writable and no TCP
//! connection can be made. Paths outside read as "Permission denied" (the
//! kernel refuses them), not as missing; the walk to a path is not
//! confined, so a `stat` outside still answers. A root replaced since the
//! spawner started gets a new spawner (a domain cannot be widened).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::{Arc, Mutex, mpsc};

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

use super::super::agent::{AGENT_SCRIPT, AgentCall, AgentPool, Ends};
use super::super::launcher::{Launch, Launcher, exit_as_signal};
use std::os::unix::process::CommandExt;

use super::super::shell::{SHELL, find_program_on_path};
use super::exposed::exposed;
use super::{SandboxConfig, SandboxError, identity, passes_into_sandbox, workdir_in};
use fs_search_engine::bash::{BashError, BashRunResult, BashSpec};

/// The file-system ABI whose accesses the ruleset handles.
const FS_ABI: ABI = ABI::V5;

/// The devices of bubblewrap's minimal `/dev` that read the same for
/// everyone, readable here too (`/dev/null` is also writable).
const DEV_READABLE: [&str; 4] = ["/dev/zero", "/dev/full", "/dev/random", "/dev/urandom"];

/// A request to the spawner thread: a command and where its child goes.
type SpawnRequest = (Command, mpsc::Sender<std::io::Result<Child>>);

/// The confined spawner thread's end of the channel (module doc).
#[derive(Debug)]
struct Spawner {
    requests: Mutex<mpsc::Sender<SpawnRequest>>,
}

impl Spawner {
    /// A thread confined to `readable` (and `/dev/null`), once the kernel
    /// has enforced its ruleset.
    fn start(readable: Vec<PathBuf>, fault_no_landlock: bool) -> Result<Self, SandboxError> {
        let (requests, inbox) = mpsc::channel::<SpawnRequest>();
        let (ready, confined) = mpsc::channel::<Result<(), String>>();
        std::thread::Builder::new()
            .name("landlock-spawner".to_owned())
            .spawn(move || {
                let restricted = match fault_no_landlock {
                    true => Err("the kernel has no Landlock (a test's fault injection)".to_owned()),
                    false => restrict_this_thread(&readable),
                };
                let ok = restricted.is_ok();
                let _ = ready.send(restricted);
                if !ok {
                    return;
                }
                for (mut command, reply) in inbox {
                    let _ = reply.send(command.spawn());
                }
            })
            .map_err(|e| SandboxError::Landlock(format!("no spawner thread: {e}")))?;
        match confined.recv() {
            Ok(Ok(())) => Ok(Self {
                requests: Mutex::new(requests),
            }),
            Ok(Err(reason)) => Err(SandboxError::Landlock(reason)),
            Err(_) => Err(SandboxError::Landlock(
                "the spawner thread ended".to_owned(),
            )),
        }
    }

    /// Spawns `command` from the confined thread.
    fn spawn(&self, command: Command) -> std::io::Result<Child> {
        let (reply, child) = mpsc::channel();
        let gone = || std::io::Error::other("the Landlock spawner thread is gone");
        self.requests
            .lock()
            .map_err(|_| gone())?
            .send((command, reply))
            .map_err(|_| gone())?;
        child.recv().map_err(|_| gone())?
    }
}

/// Restricts the calling thread to reading `readable` and reading and
/// writing `/dev/null`; an error unless the kernel enforces it.
fn restrict_this_thread(readable: &[PathBuf]) -> Result<(), String> {
    let read = AccessFs::from_read(FS_ABI);
    let dev_null =
        AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    let null = PathFd::new("/dev/null").map_err(|e| e.to_string())?;
    let status = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(FS_ABI))
        .and_then(|r| r.handle_access(AccessNet::from_all(ABI::V4)))
        .and_then(|r| r.scope(Scope::from_all(ABI::V6)))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(readable, read)))
        .and_then(|r| r.add_rules(path_beneath_rules(DEV_READABLE, AccessFs::ReadFile)))
        .and_then(|r| r.add_rule(PathBeneath::new(null, dev_null)))
        .and_then(|r| r.restrict_self())
        .map_err(|e| e.to_string())?;
    match status.ruleset {
        RulesetStatus::NotEnforced => Err(format!(
            "the kernel does not enforce it ({:?})",
            status.landlock
        )),
        RulesetStatus::FullyEnforced | RulesetStatus::PartiallyEnforced => Ok(()),
    }
}

/// Agents spawned from a thread confined to the root and what bash and rg
/// need.
#[derive(Debug)]
pub(super) struct LandlockLauncher {
    root: PathBuf,
    read_only: Vec<PathBuf>,
    fault_no_landlock: bool,
    agents: Mutex<Agents>,
}

/// The launcher's agents, the root their spawner allows, and the
/// environment they started with.
#[derive(Debug)]
struct Agents {
    pool: Arc<AgentPool>,
    env: BTreeMap<OsString, OsString>,
    root: (u64, u64),
}

impl LandlockLauncher {
    /// The launcher for `root` with agents in a domain of `env`'s set, one
    /// agent started to prove the domain runs bash.
    pub(super) fn new(
        root: &Path,
        sandbox: &SandboxConfig,
        env: BTreeMap<OsString, OsString>,
    ) -> Result<Arc<Self>, SandboxError> {
        let agents = start_agents(root, &sandbox.read_only, sandbox.fault_no_landlock, env)?;
        agents.pool.warm().map_err(|e| {
            SandboxError::Landlock(format!("bash cannot start in the Landlock domain: {e}"))
        })?;
        Ok(Arc::new(Self {
            root: root.to_path_buf(),
            read_only: sandbox.read_only.clone(),
            fault_no_landlock: sandbox.fault_no_landlock,
            agents: Mutex::new(agents),
        }))
    }
}

/// A pool of agents spawned from a new thread confined to `root`,
/// `read_only` and what a child of `env` needs.
fn start_agents(
    root: &Path,
    read_only: &[PathBuf],
    fault_no_landlock: bool,
    env: BTreeMap<OsString, OsString>,
) -> Result<Agents, SandboxError> {
    let identity = identity(root)
        .ok_or_else(|| SandboxError::Root(root.display().to_string(), "gone".to_owned()))?;
    let found = exposed(&env);
    let mut readable: Vec<PathBuf> = found.real.into_iter().collect();
    readable.extend(read_only.iter().cloned());
    readable.push(root.to_path_buf());
    let spawner = Spawner::start(readable, fault_no_landlock)?;
    let path = env.get(OsStr::new("PATH")).map(OsString::as_os_str);
    let shell = find_program_on_path(SHELL, path).unwrap_or_else(|| PathBuf::from(SHELL));
    let (agent_env, root_dir) = (env.clone(), root.to_path_buf());
    let pool = AgentPool::new(
        Box::new(move || {
            let mut command = Command::new(&shell);
            command
                .arg0(SHELL)
                .args(["--norc", "-c", AGENT_SCRIPT, SHELL, Ends::Signals.arg()])
                .current_dir(&root_dir)
                .env_clear()
                .envs(&agent_env);
            command
        }),
        Ends::Signals,
    )
    .spawning_with(Box::new(move |command| spawner.spawn(command)));
    Ok(Agents {
        pool: Arc::new(pool),
        env,
        root: identity,
    })
}

impl LandlockLauncher {
    /// Every run with a working directory in the root, on an agent; the
    /// domain is the executor's whatever the run's `PATH`.
    fn agent_call(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Option<(Arc<AgentPool>, AgentCall)> {
        if spec.stdin.is_some() {
            return None;
        }
        let mut agents = self.agents.lock().ok()?;
        let workdir = workdir_in(&self.root, spec).ok()?;
        if identity(&self.root) != Some(agents.root) {
            // The root was replaced: a new domain allows the new one.
            agents.pool.clear();
            *agents = start_agents(
                &self.root,
                &self.read_only,
                self.fault_no_landlock,
                agents.env.clone(),
            )
            .ok()?;
        }
        let call = super::agent_call(workdir, spec, env, &agents.env);
        Some((agents.pool.clone(), call))
    }
}

impl Launcher for LandlockLauncher {
    fn inherits(&self, name: &OsStr) -> bool {
        passes_into_sandbox(name)
    }

    /// Landlock has no launcher program: every run is an agent's, and a
    /// run the agents cannot take (one with stdin, or a workdir outside
    /// the root) fails before anything starts.
    fn launch(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<Launch, BashError> {
        if let Some((pool, call)) = self.agent_call(spec, env) {
            return Ok(Launch::Agent(pool, call));
        }
        workdir_in(&self.root, spec)?;
        Err(BashError::Other(
            "sandbox: the Landlock runner takes no stdin".to_owned(),
        ))
    }

    fn finish(&self, result: BashRunResult) -> Result<BashRunResult, BashError> {
        Ok(exit_as_signal(result))
    }
}
