//! Agents: long-lived shells, started once through a launcher's program
//! (bubblewrap, ssh), that run the executor's commands one at a time, so
//! a call pays for a fork and an exec, not for a new sandbox or a new ssh
//! session.
//!
//! An agent is `bash --norc -c AGENT` (`agent.sh`) with its stdin, stdout
//! and stderr piped to this process, in a local process group of its own.
//! Per run the executor writes one request (`run NONCE WORKDIR ARGV…`,
//! every word quoted here), reads the command's stdout and stderr up to
//! the run's nonce (`framed.rs`) and its exit status from the trailer line
//! after it; to end the command early it writes `term`, then `kill`
//! (`run.rs`). The agent makes each command a process group of its own
//! (`set -m`) and kills it when its stdin ends: when this process goes, or
//! the ssh channel does.
//!
//! The pool keeps idle agents; an agent goes back to it only after a run
//! whose output was read to both nonces. Any other end (a stream stopped
//! at its cap, a dropped run, an agent that died) kills the agent's local
//! group: bubblewrap's sandbox dies with it, and over ssh the agent hears
//! the end of its stdin.

#[cfg(test)]
mod executor_tests;
mod framed;
mod run;

pub(crate) use run::{bash_argv, command_argv};

use std::ffi::{OsStr, OsString};
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use super::group::KILL_SETTLE;

/// The agent's script (module doc).
pub(crate) const AGENT_SCRIPT: &str = include_str!("agent.sh");

/// The most idle agents a pool keeps.
const MAX_IDLE: usize = 4;

/// The agent's stdout pipe size, as the local executor's capped runs use.
const STDOUT_PIPE_BYTES: i32 = 1 << 20;

/// How one run goes on an agent: where, with which environment, and the
/// argv it runs there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentCall {
    /// The command's working directory, as the agent sees it.
    pub(crate) workdir: OsString,
    /// Variables of the agent's environment the command goes without.
    pub(crate) unset: Vec<OsString>,
    /// The variables set for the command on top of the agent's, in order.
    pub(crate) env: Vec<(OsString, OsString)>,
    /// The argv (e.g. `bash -c COMMAND`), found on the command's `PATH`.
    pub(crate) argv: Vec<OsString>,
}

/// Starts agents: the launcher's program with the agent's script.
pub(crate) type StartAgent = Box<dyn Fn() -> Command + Send + Sync>;

/// Spawns an agent's command where the launcher needs it spawned (the
/// Landlock runner's confined thread); none spawns it on the caller's.
pub(crate) type SpawnAgent = Box<dyn Fn(Command) -> std::io::Result<Child> + Send + Sync>;

/// How the executor ends an agent's command early (`agent.sh`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ends {
    /// `term` and `kill` lines on the agent's stdin, read by a watcher the
    /// agent starts per run: for an agent out of this process's reach
    /// (over ssh), where the end of stdin must end the command too.
    Lines,
    /// SIGUSR1 and SIGUSR2 to the agent's shell: for an agent on this
    /// machine, whose sandbox dies with the executor (no watcher, one
    /// fork less per run).
    Signals,
}

impl Ends {
    /// The agent script's argument.
    pub(crate) fn arg(self) -> &'static str {
        match self {
            Self::Lines => "lines",
            Self::Signals => "signals",
        }
    }
}

/// The first line of the agent's script, by which its shell is found
/// among the processes below the launcher's.
const AGENT_MARK: &str = "# The executor's agent";

/// The idle agents of one launcher (module doc).
pub(crate) struct AgentPool {
    start: StartAgent,
    spawn: Option<SpawnAgent>,
    ends: Ends,
    idle: Mutex<Vec<Agent>>,
}

impl std::fmt::Debug for AgentPool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let idle = self.idle.lock().map_or(0, |idle| idle.len());
        f.debug_struct("AgentPool").field("idle", &idle).finish()
    }
}

impl AgentPool {
    pub(crate) fn new(start: StartAgent, ends: Ends) -> Self {
        Self {
            start,
            spawn: None,
            ends,
            idle: Mutex::new(Vec::new()),
        }
    }

    /// This pool with every agent spawned through `spawn`.
    pub(crate) fn spawning_with(mut self, spawn: SpawnAgent) -> Self {
        self.spawn = Some(spawn);
        self
    }

    /// Starts one agent ahead of the first run.
    pub(crate) fn warm(&self) -> std::io::Result<()> {
        let agent = Agent::start(&self.start, self.spawn.as_ref())?;
        // One past the idle agents is not needed: it ends as it drops.
        drop(self.put(agent));
        Ok(())
    }

    /// A live idle agent, else a new one.
    fn take(&self) -> std::io::Result<Agent> {
        loop {
            let idle = self.idle.lock().ok().and_then(|mut idle| idle.pop());
            match idle {
                Some(mut agent) => {
                    if agent.alive() {
                        return Ok(agent);
                    }
                }
                None => return Agent::start(&self.start, self.spawn.as_ref()),
            }
        }
    }

    /// Ends every idle agent, and returns once they are gone (their
    /// sandbox binds a root that is no more).
    pub(crate) fn clear(&self) {
        let idle = self
            .idle
            .lock()
            .map(|mut idle| std::mem::take(&mut *idle))
            .unwrap_or_default();
        for mut agent in idle {
            let started = descendants(agent.pid());
            agent.kill_group();
            if let Some(mut child) = agent.child.take() {
                let _ = child.wait();
            }
            let deadline = std::time::Instant::now() + KILL_SETTLE;
            while started.iter().any(|&pid| alive(pid)) && std::time::Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
    }

    /// Keeps `agent` for a later run; past [`MAX_IDLE`] (or with the
    /// pool's lock poisoned) gives it back, for the caller to end.
    fn put(&self, agent: Agent) -> Option<Agent> {
        match self.idle.lock() {
            Ok(mut idle) if idle.len() < MAX_IDLE => {
                idle.push(agent);
                None
            }
            _ => Some(agent),
        }
    }
}

/// One agent: its process and the three ends of its pipes.
#[derive(Debug)]
struct Agent {
    child: Option<Child>,
    /// The agent's shell, once found (for [`Ends::Signals`]).
    shell: Option<i32>,
    stdin: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
}

impl Agent {
    fn start(start: &StartAgent, spawn: Option<&SpawnAgent>) -> std::io::Result<Self> {
        let mut command = start();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        super::inherited::mark_inherited_descriptors_close_on_exec();
        let mut child = match spawn {
            Some(spawn) => spawn(command)?,
            None => command.spawn()?,
        };
        let stdin = child.stdin.take().map(OwnedFd::from);
        let stdout = child.stdout.take().map(OwnedFd::from);
        let stderr = child.stderr.take().map(OwnedFd::from);
        if let Some(stdout) = &stdout {
            // As large as Linux allows without privilege: a fast command
            // then seldom waits for the reader.
            let _ = nix::fcntl::fcntl(
                stdout,
                nix::fcntl::FcntlArg::F_SETPIPE_SZ(STDOUT_PIPE_BYTES),
            );
        }
        Ok(Self {
            child: Some(child),
            shell: None,
            stdin,
            stdout,
            stderr,
        })
    }

    fn alive(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|child| matches!(child.try_wait(), Ok(None)))
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// Ends the agent, spent: its stdin closed (it exits, and its sandbox
    /// or ssh session with it), then its group killed if it is still there
    /// after `patience`. Returns once it and every process it had started
    /// here are gone, or [`KILL_SETTLE`] after the kill.
    async fn end(mut self, patience: Duration) {
        self.stdin = None;
        let started = descendants(self.pid());
        if self.exit_status(patience).await.is_none() {
            self.kill_group();
            let _ = self.exit_status(KILL_SETTLE).await;
        }
        let deadline = tokio::time::Instant::now() + KILL_SETTLE;
        while started.iter().any(|&pid| alive(pid)) && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// The agent's exit status when it has ended by itself within `bound`.
    async fn exit_status(&mut self, bound: Duration) -> Option<std::process::ExitStatus> {
        let deadline = tokio::time::Instant::now() + bound;
        loop {
            if let Some(child) = self.child.as_mut()
                && let Ok(Some(status)) = child.try_wait()
            {
                return Some(status);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Sends `signal` to the agent's shell (found below the launcher's
    /// process the first time: the first whose command line is the
    /// agent's script); whether it was sent.
    fn signal_shell(&mut self, signal: Signal) -> bool {
        if self.shell.is_none() {
            // bubblewrap's own processes carry the script in their
            // arguments too: the shell is the first that runs bash (the
            // spawned process itself under Landlock).
            let own = i32::try_from(self.pid()).ok();
            let below = descendants(self.pid());
            self.shell = own.into_iter().chain(below).find(|&pid| {
                let comm = std::fs::read_to_string(format!("/proc/{pid}/comm"));
                comm.is_ok_and(|comm| comm.trim_end() == "bash")
                    && std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|cmdline| {
                        memchr::memmem::find(&cmdline, AGENT_MARK.as_bytes()).is_some()
                    })
            });
        }
        self.shell
            .is_some_and(|pid| nix::sys::signal::kill(Pid::from_raw(pid), signal).is_ok())
    }

    /// Kills the agent's group and the groups of the commands below it
    /// (the agent makes each a group of its own; outside a PID namespace,
    /// as under Landlock, they would outlive the agent).
    fn kill_group(&self) {
        if let Ok(pid) = i32::try_from(self.pid())
            && pid > 1
        {
            let below = descendants(self.pid());
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
            for child in below {
                let _ = killpg(Pid::from_raw(child), Signal::SIGKILL);
            }
        }
    }
}

impl Drop for Agent {
    fn drop(&mut self) {
        // An agent dropped outside the pool is spent: its group is killed,
        // and a thread reaps it.
        self.kill_group();
        if let Some(mut child) = self.child.take() {
            std::thread::spawn(move || child.wait());
        }
    }
}

/// Every process below `pid`, by the kernel's lists of children, nearest
/// first.
fn descendants(pid: u32) -> Vec<i32> {
    let mut found = Vec::new();
    let mut next = std::collections::VecDeque::from([pid.to_string()]);
    while let Some(parent) = next.pop_front() {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{parent}/task")) else {
            continue;
        };
        for task in tasks.flatten() {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            for child in children.split_whitespace() {
                if let Ok(pid) = child.parse::<i32>() {
                    found.push(pid);
                    next.push_back(child.to_owned());
                }
            }
        }
    }
    found
}

/// Whether `pid` is a process not yet dead (a zombie counts as dead).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
    })
}

/// `value` quoted for bash, byte for byte.
fn quoted(value: &OsStr) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    let mut out = Vec::with_capacity(value.len() + 2);
    out.push(b'\'');
    for &byte in value.as_bytes() {
        if byte == b'\'' {
            out.extend_from_slice(b"'\\''");
        } else {
            out.push(byte);
        }
    }
    out.push(b'\'');
    out
}

/// Whether bash can export a variable of this name.
fn exportable(name: &OsStr) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    bytes
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// The request for `call` under `nonce`: its byte count on a line, then
/// `run NONCE WORKDIR N NAME… M NAME=VALUE… ARGV…` (`agent.sh`). A name
/// bash cannot handle is left to `env` in front of the argv.
fn request(nonce: &str, call: &AgentCall) -> Vec<u8> {
    let pair = |(name, value): &(OsString, OsString)| {
        let mut pair = name.clone();
        pair.push("=");
        pair.push(value);
        pair
    };
    let count = |n: usize| OsString::from(n.to_string());
    let mut words: Vec<OsString> = Vec::new();
    let names = call
        .unset
        .iter()
        .chain(call.env.iter().map(|(name, _)| name));
    if names.clone().all(|name| exportable(name)) {
        words.push(count(call.unset.len()));
        words.extend(call.unset.iter().cloned());
        words.push(count(call.env.len()));
        words.extend(call.env.iter().map(pair));
    } else {
        words.extend(["0", "0", "env"].map(OsString::from));
        for name in &call.unset {
            words.extend([OsString::from("-u"), name.clone()]);
        }
        words.extend(call.env.iter().map(pair));
    }
    words.extend(call.argv.iter().cloned());
    let mut body = format!("run {nonce} ").into_bytes();
    body.extend(quoted(&call.workdir));
    for word in &words {
        body.push(b' ');
        body.extend(quoted(word));
    }
    body.push(b'\n');
    let mut out = format!("{}\n", body.len()).into_bytes();
    out.extend(body);
    out
}

/// A fresh nonce: 128 random bits, in hex, behind a fixed mark.
fn nonce() -> std::io::Result<String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut out = String::from("fs-search-end-");
    for byte in bytes {
        out.push_str(&format!("{byte:02x}"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(env: &[(&str, &str)]) -> AgentCall {
        AgentCall {
            workdir: OsString::from("/w s"),
            unset: vec![OsString::from("GONE")],
            env: env
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect(),
            argv: ["bash", "-c", "rg 'it'\nx"].map(OsString::from).to_vec(),
        }
    }

    fn body(out: &[u8]) -> String {
        let (count, body) = out.split_at(out.iter().position(|&b| b == b'\n').unwrap_or(0) + 1);
        assert_eq!(count, format!("{}\n", body.len()).as_bytes());
        String::from_utf8_lossy(body).into_owned()
    }

    #[test]
    fn a_request_quotes_every_word_and_counts_its_bytes() {
        assert_eq!(
            body(&request("N", &call(&[("P_1", "a'b")]))),
            "run N '/w s' '1' 'GONE' '1' 'P_1=a'\\''b' 'bash' '-c' 'rg '\\''it'\\''\nx'\n"
        );
    }

    #[test]
    fn a_name_bash_cannot_export_leaves_the_environment_to_env() {
        assert_eq!(
            body(&request("N", &call(&[("a.b", "1"), ("P", "2")]))),
            "run N '/w s' '0' '0' 'env' '-u' 'GONE' 'a.b=1' 'P=2' 'bash' '-c' 'rg '\\''it'\\''\nx'\n"
        );
    }

    #[test]
    fn nonces_differ_and_carry_no_newline() {
        let (a, b) = (nonce().unwrap_or_default(), nonce().unwrap_or_default());
        assert_ne!(a, b);
        assert!(!a.contains('\n') && a.len() > 32, "{a:?}");
    }
}
