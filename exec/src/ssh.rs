//! The remote executor over OpenSSH: the local executor
//! ([`LocalBashExecutor`]) with the system `ssh` client as a remote
//! launcher (`launcher.rs`), so each `['bash', '-c', command]` runs on
//! another machine, next to the files rg searches. Parsing, pages, the
//! output caps (enforced here on the stream as it arrives), spill files
//! and recordings stay on this machine.
//!
//! - One master connection per executor (`ssh -M -N -f`, started and
//!   authenticated by [`SshBashExecutor::new`]), its control socket in a
//!   private directory of the per-user runtime directory
//!   (`$XDG_RUNTIME_DIR`, else the temporary directory); every call is a
//!   session multiplexed over it (`ControlMaster=no`), so a call costs a
//!   round trip, not a handshake. The directory is 0700, its files 0600.
//!   Dropping the executor ends the master (`ssh -O exit`, in a process
//!   group of its own, its failure logged) and removes the directory; a
//!   front end about to exit joins that close
//!   ([`SshBashExecutor::master_closed`]). No
//!   master outlives this process: it ends by itself
//!   [`CONTROL_PERSIST_S`] seconds after its last session, and a keeper
//!   session, fed by a pipe from this process, holds it open until then.
//! - At start one session checks the working directory on the host (a
//!   missing one is refused naming host and directory) and, with
//!   [`SshConfig::sandbox`], that bubblewrap there makes the sandbox
//!   (`ssh/sandbox.sh`: the local sandbox's policy, its binds computed on
//!   the host) in which every command then runs.
//! - The user's own ssh configuration, agent and known hosts apply (or
//!   the config file [`SshConfig::config_file`] names); `BatchMode=yes`:
//!   never a prompt; `ConnectTimeout` bounds a connection attempt.
//! - Every command runs on an agent (`agent/`) in a session of its own
//!   over the master (the login shell must run `exec bash --norc -c …`,
//!   as POSIX shells do): the agent enters the working directory (a
//!   missing one fails the run as `spawn bash ENOENT`) and runs
//!   `bash --norc -c command` with the local executor's scrubbed
//!   environment rules, the fixed overlay, the configured variables and
//!   the request's. `--norc`: bash started under sshd reads `~/.bashrc`
//!   even when not interactive, which a local `bash -c` never does; the
//!   login shell has read it already. A command's stdin is not carried
//!   to the host (the tools never give one).
//! - The kill path is the agent's: `term`, then `kill`, to the command's
//!   group on the host; an agent that does not answer is ended, and the
//!   end of its stdin (its session) ends the command there.
//! - A failure of ssh itself (an unreachable host, a refused key) reads
//!   as exit 255 with a stderr naming the host and ssh's reason, which
//!   the tools report as `SEARCH_FAILED`.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Stdio;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

use super::agent::{AGENT_SCRIPT, AgentCall, AgentPool, Ends, bash_argv};
use super::launcher::{Launch, LaunchPrefix, Launcher, exit_as_signal};
use super::local::FIXED_OVERLAY;
use super::shell::find_program_on_path;
use super::{LocalBashConfig, LocalBashExecutor};
use fs_search_engine::bash::{BashError, BashRunResult, BashSpec};

/// The OpenSSH client's name, looked up on this process's `PATH`.
pub const SSH: &str = "ssh";

/// What ssh exits with when it failed itself.
const SSH_FAILED: i32 = 255;

/// The start check's stderr line when the working directory is missing.
const NO_WORKDIR_LINE: &str = "\u{1}fs-search-remote-no-workdir\n";

/// The sandbox script's stderr line when the host has no bubblewrap.
const NO_BWRAP_LINE: &str = "\u{1}fs-search-remote-no-bwrap\n";

/// The host's sandbox (module doc): `ROOT DIR N NAME=VALUE... ARGV...`.
const SANDBOX_SCRIPT: &str = include_str!("ssh/sandbox.sh");

/// The check [`SshBashExecutor::new`] runs on the host once: `$1` the
/// working directory, `$2` the sandbox script (empty: none), whose `true`
/// must run.
const CHECK_SCRIPT: &str = r#"if ! cd -- "$1" 2>/dev/null; then
  printf '\001fs-search-remote-no-workdir\n' >&2
  exit 127
fi
[ -z "$2" ] && exit 0
exec bash --norc -c "$2" bash "$1" "$1" 0 bash --norc -c : </dev/null"#;

/// Where a command runs: `ssh://[USER@]HOST[:PORT]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SshTarget {
    /// The login name; `None` leaves it to the ssh configuration.
    pub user: Option<String>,
    /// A host name, address or ssh configuration alias.
    pub host: String,
    /// The port; `None` leaves it to the ssh configuration.
    pub port: Option<u16>,
}

/// A target that is not `ssh://[USER@]HOST[:PORT]`.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{0:?} is not ssh://[USER@]HOST[:PORT]")]
pub struct BadTarget(String);

impl FromStr for SshTarget {
    type Err = BadTarget;

    fn from_str(raw: &str) -> Result<Self, Self::Err> {
        let bad = || BadTarget(raw.to_owned());
        let rest = raw.strip_prefix("ssh://").ok_or_else(bad)?;
        let (user, rest) = match rest.rsplit_once('@') {
            Some((user, rest)) => (Some(user), rest),
            None => (None, rest),
        };
        let (host, port) = match rest.strip_prefix('[') {
            Some(bracketed) => {
                let (host, after) = bracketed.split_once(']').ok_or_else(bad)?;
                (host, after.strip_prefix(':'))
            }
            None => match rest.split_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (rest, None),
            },
        };
        let port = port
            .map(|p| p.parse::<u16>().ok().filter(|&p| p > 0).ok_or_else(bad))
            .transpose()?;
        let plain = |s: &str| {
            !s.is_empty()
                && !s.starts_with('-')
                && s.chars().all(|c| c.is_ascii_graphic() && !"/@".contains(c))
        };
        if !plain(host) || user.is_some_and(|u| !plain(u)) {
            return Err(bad());
        }
        Ok(Self {
            user: user.map(str::to_owned),
            host: host.to_owned(),
            port,
        })
    }
}

impl fmt::Display for SshTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ssh://")?;
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        if self.host.contains(':') {
            write!(f, "[{}]", self.host)?;
        } else {
            f.write_str(&self.host)?;
        }
        if let Some(port) = self.port {
            write!(f, ":{port}")?;
        }
        Ok(())
    }
}

/// What the remote executor adds to the local executor's settings (whose
/// `cwd` is the working directory on the host, an absolute path).
#[derive(Debug, Clone)]
pub struct SshConfig {
    /// The host.
    pub target: SshTarget,
    /// The ssh program; `None` finds `ssh` on this process's `PATH`.
    pub ssh: Option<PathBuf>,
    /// An ssh configuration file used instead of the user's (`ssh -F`).
    pub config_file: Option<PathBuf>,
    /// Seconds one connection attempt may take (`ConnectTimeout`).
    pub connect_timeout_s: u32,
    /// Run every command inside a bubblewrap sandbox on the host that
    /// shows what the local sandbox shows (`ssh/sandbox.sh`), failing
    /// closed when the host has no bubblewrap or it cannot start.
    pub sandbox: bool,
}

impl SshConfig {
    /// Settings for `target` with the user's ssh configuration.
    pub fn new(target: SshTarget) -> Self {
        Self {
            target,
            ssh: None,
            config_file: None,
            connect_timeout_s: 10,
            sandbox: false,
        }
    }

    /// The ssh options every connection to the host takes, the master's
    /// and a one-shot `ssh`'s alike: the configuration file, never a
    /// prompt, the connect timeout, quiet logs, keep-alives, the user and
    /// the port.
    pub fn options(&self) -> Vec<OsString> {
        let mut options: Vec<OsString> = Vec::new();
        if let Some(file) = &self.config_file {
            options.extend([arg("-F"), arg(file)]);
        }
        for option in [
            "BatchMode=yes".to_owned(),
            format!("ConnectTimeout={}", self.connect_timeout_s.max(1)),
            "LogLevel=ERROR".to_owned(),
            "ServerAliveInterval=5".to_owned(),
            "ServerAliveCountMax=2".to_owned(),
        ] {
            options.extend([arg("-o"), arg(option)]);
        }
        if let Some(user) = &self.target.user {
            options.extend([arg("-l"), arg(user)]);
        }
        if let Some(port) = self.target.port {
            options.extend([arg("-p"), arg(port.to_string())]);
        }
        options
    }
}

/// Why the remote executor cannot be used.
#[derive(Debug, Error)]
pub enum SshError {
    /// No ssh program was found.
    #[error(
        "the ssh executor needs the OpenSSH client, and `{SSH}` is not on PATH (install it: apt-get install openssh-client)"
    )]
    SshMissing,
    /// The working directory is not an absolute path.
    #[error("the working directory on {target} must be an absolute path, not {path:?}")]
    Workdir {
        /// The host.
        target: SshTarget,
        /// The working directory given.
        path: String,
    },
    /// The private directory of the control socket cannot be made.
    #[error("the ssh executor's control directory: {0}")]
    ControlDir(std::io::Error),
    /// The master connection cannot be made: ssh's own reason.
    #[error("cannot reach {target}: {reason}")]
    Unreachable {
        /// The host.
        target: SshTarget,
        /// What ssh said (its stderr lines, joined by `; `).
        reason: String,
    },
    /// The working directory is not a directory on the host.
    #[error("the working directory {path} does not exist on {target} (or is not a directory)")]
    NoWorkdir {
        /// The host.
        target: SshTarget,
        /// The working directory given.
        path: String,
    },
    /// The host has no bubblewrap for the sandbox.
    #[error(
        "the sandbox on {target} needs bubblewrap there, and `bwrap` is not on its PATH (install it on {target}: apt-get install bubblewrap)"
    )]
    BwrapMissing {
        /// The host.
        target: SshTarget,
    },
    /// bubblewrap on the host ran but could not make the sandbox.
    #[error(
        "bubblewrap on {target} cannot make the sandbox: {reason} (user namespaces may be refused there)"
    )]
    SandboxRefused {
        /// The host.
        target: SshTarget,
        /// What bubblewrap said.
        reason: String,
    },
    /// The local executor's settings were rejected.
    #[error("{0}")]
    Executor(#[from] BashError),
}

/// The local executor with every command run on a host over ssh (module
/// doc).
#[derive(Debug, Clone)]
pub struct SshBashExecutor {
    inner: LocalBashExecutor,
    launcher: Arc<SshLauncher>,
    /// The close of the master, until a front end takes it.
    closed: Arc<std::sync::Mutex<Option<MasterClosed>>>,
}

impl SshBashExecutor {
    /// An executor running commands on `ssh.target` in `config.cwd` there,
    /// once its master connection is up: an error with ssh's reason when
    /// the host cannot be reached or refuses the login.
    pub fn new(config: LocalBashConfig, ssh: SshConfig) -> Result<Self, SshError> {
        let workdir = config.cwd.clone().unwrap_or_default();
        if !workdir.starts_with('/') {
            return Err(SshError::Workdir {
                target: ssh.target,
                path: workdir,
            });
        }
        let program = match ssh.ssh.clone() {
            Some(path) => path,
            None => find_program_on_path(SSH, std::env::var_os("PATH").as_deref())
                .ok_or(SshError::SshMissing)?,
        };
        let (closing, closed) = std::sync::mpsc::sync_channel(0);
        let master = Master::start(program, &ssh, closing)?;
        master.check_host(&workdir, ssh.sandbox)?;
        let mut launcher = SshLauncher::new(master, config.env.clone());
        launcher.sandbox_root = ssh.sandbox.then_some(workdir);
        let inner = LocalBashExecutor::new(config)?;
        // The ssh client gets the scrubbed environment (what `SendEnv`
        // may forward).
        let env = inner.child_env(&super::sandbox::probe_spec());
        launcher.agents = Some(launcher.start_agents(env));
        let launcher = Arc::new(launcher);
        let inner = inner.with_launcher(launcher.clone());
        Ok(Self {
            inner,
            launcher,
            closed: Arc::new(std::sync::Mutex::new(Some(MasterClosed(closed)))),
        })
    }

    /// The close of this executor's master connection, to join before the
    /// process exits; the first call takes it (`None` after).
    pub fn master_closed(&self) -> Option<MasterClosed> {
        match self.closed.lock() {
            Ok(mut closed) => closed.take(),
            Err(poisoned) => poisoned.into_inner().take(),
        }
    }

    /// The host it runs commands on.
    pub fn target(&self) -> &SshTarget {
        &self.launcher.master.target
    }

    /// Whether its commands run inside a sandbox on the host.
    pub fn sandboxed(&self) -> bool {
        self.launcher.sandbox_root.is_some()
    }
}

delegate_to_inner_executor!(SshBashExecutor);

/// The close of one executor's master connection, for a process about to
/// exit to wait for ([`SshBashExecutor::master_closed`]).
///
/// An executor dropped on a worker thread of a runtime shut down in the
/// background is still closing its master (`ssh -O exit`, then its
/// control directory), and an exit then would leave both behind.
#[derive(Debug)]
pub struct MasterClosed(std::sync::mpsc::Receiver<()>);

impl MasterClosed {
    /// Waits, at most until `deadline`, for the master to be closed (its
    /// executor dropped and the close done); whether it was.
    pub fn join(self, deadline: std::time::Instant) -> bool {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        matches!(
            self.0.recv_timeout(left),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
        )
    }
}

/// The master connection and its private control directory.
#[derive(Debug)]
struct Master {
    program: PathBuf,
    target: SshTarget,
    /// The options every ssh invocation shares, ending before the host.
    options: Vec<OsString>,
    /// Holds the control socket; removed on drop, after `ssh -O exit`.
    dir: tempfile::TempDir,
    /// The session holding the master open ([`Master::start_keeper`]).
    keeper: Option<std::process::Child>,
    /// Hangs up on its [`MasterClosed`] once the directory is gone (last
    /// field: dropped last); nothing is ever sent.
    _closed: std::sync::mpsc::SyncSender<()>,
}

fn arg(value: impl AsRef<OsStr>) -> OsString {
    value.as_ref().to_owned()
}

/// The per-user runtime directory when there is one, else the temporary
/// directory.
fn runtime_dir() -> PathBuf {
    std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute() && dir.is_dir())
        .unwrap_or_else(std::env::temp_dir)
}

impl Master {
    /// Makes the control directory (0700, its files 0600) and starts the
    /// master (`ssh -M -N -f`: it goes to the background once
    /// authenticated, and ends by itself [`CONTROL_PERSIST_S`] seconds
    /// after its last session closed), then the keeper session that holds
    /// it open for as long as this process lives.
    fn start(
        program: PathBuf,
        ssh: &SshConfig,
        closed: std::sync::mpsc::SyncSender<()>,
    ) -> Result<Self, SshError> {
        let parent = runtime_dir();
        remove_stale_dirs(&parent, STALE_AFTER);
        let dir = private_dir(&parent).map_err(SshError::ControlDir)?;
        let socket = dir.path().join("m");
        let mut options = ssh.options();
        let mut control = OsString::from("ControlPath=");
        control.push(&socket);
        options.extend([arg("-o"), control]);
        let mut master = Self {
            program,
            target: ssh.target.clone(),
            options,
            dir,
            keeper: None,
            _closed: closed,
        };
        // The backgrounded master keeps its stderr: a file, so that no
        // pipe waits on it.
        let log_path = master.log_path();
        let log = private_file(&log_path).map_err(SshError::ControlDir)?;
        super::inherited::mark_inherited_descriptors_close_on_exec();
        let status = std::process::Command::new(&master.program)
            .args(&master.options)
            .args(["-M", "-N", "-f", "-o", "ControlMaster=yes", "-o"])
            .arg(format!("ControlPersist={CONTROL_PERSIST_S}"))
            .arg("--")
            .arg(&master.target.host)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .status()
            .map_err(|e| SshError::Unreachable {
                target: master.target.clone(),
                reason: format!("{} could not start: {e}", master.program.display()),
            })?;
        if !status.success() {
            let said = std::fs::read_to_string(&log_path).unwrap_or_default();
            let reason = match said.trim() {
                "" => format!("ssh failed ({status})"),
                said => said.lines().collect::<Vec<_>>().join("; "),
            };
            return Err(SshError::Unreachable {
                target: master.target.clone(),
                reason,
            });
        }
        master.keeper = master.start_keeper();
        Ok(master)
    }

    /// Where the backgrounded master writes its stderr.
    fn log_path(&self) -> PathBuf {
        self.dir.path().join("log")
    }

    /// A session that holds the master open while this process lives: its
    /// remote `cat` ends when the pipe on its stdin does (this process
    /// gone, by any means), and the master then ends
    /// [`CONTROL_PERSIST_S`] seconds later. In a process group of its own,
    /// so that a Ctrl-C to the workbench's group does not end it early.
    fn start_keeper(&self) -> Option<std::process::Child> {
        let line = self.session("exec cat >/dev/null");
        let spawned = std::process::Command::new(&line.program)
            .args(&line.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn();
        match spawned {
            Ok(child) => Some(child),
            Err(e) => {
                tracing::warn!(
                    "ssh {}: cannot start the session that keeps the master open: {e}",
                    self.target
                );
                None
            }
        }
    }

    /// Checks, in one session, that `workdir` is a directory on the host
    /// and, for a sandbox, that bubblewrap there makes one around it
    /// (`true` run inside): the reason otherwise, naming the host.
    fn check_host(&self, workdir: &str, sandbox: bool) -> Result<(), SshError> {
        let script = if sandbox { SANDBOX_SCRIPT } else { "" };
        let line = self.session(&format!(
            "exec bash --norc -c {} bash {} {}",
            quoted(CHECK_SCRIPT),
            quoted(workdir),
            quoted(script)
        ));
        let output = std::process::Command::new(&line.program)
            .args(&line.args)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| SshError::Unreachable {
                target: self.target.clone(),
                reason: format!("{} could not start: {e}", self.program.display()),
            })?;
        if output.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&output.stderr);
        let target = self.target.clone();
        if said.contains(NO_WORKDIR_LINE) {
            return Err(SshError::NoWorkdir {
                target,
                path: workdir.to_owned(),
            });
        }
        if said.contains(NO_BWRAP_LINE) {
            return Err(SshError::BwrapMissing { target });
        }
        let reason = match said.trim() {
            "" => format!("exit {}", output.status.code().unwrap_or(-1)),
            said => said.lines().collect::<Vec<_>>().join("; "),
        };
        Err(match output.status.code() {
            Some(SSH_FAILED) | None => SshError::Unreachable { target, reason },
            Some(_) => SshError::SandboxRefused { target, reason },
        })
    }

    /// `ssh OPTIONS -o ControlMaster=no -T -- HOST remote`.
    fn session(&self, remote: &str) -> LaunchPrefix {
        let mut args = self.options.clone();
        args.extend(["-o", "ControlMaster=no", "-T", "--"].map(arg));
        args.extend([arg(&self.target.host), arg(remote)]);
        LaunchPrefix {
            program: self.program.clone(),
            args,
        }
    }

    /// `ssh -O exit`, in a process group of its own (a second Ctrl-C to
    /// the workbench's group must not cut it short); ssh's complaint
    /// when it failed.
    fn exit(&self) -> Result<(), String> {
        let output = std::process::Command::new(&self.program)
            .args(&self.options)
            .args(["-O", "exit", "--"])
            .arg(&self.target.host)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .process_group(0)
            .output()
            .map_err(|e| format!("{} could not start: {e}", self.program.display()))?;
        if output.status.success() {
            return Ok(());
        }
        let said = String::from_utf8_lossy(&output.stderr);
        Err(match said.trim() {
            "" => format!("`ssh -O exit` failed ({})", output.status),
            said => said.lines().collect::<Vec<_>>().join("; "),
        })
    }
}

impl Drop for Master {
    fn drop(&mut self) {
        // No socket: the master never started (or has ended).
        let started = self.dir.path().join("m").exists();
        if started && let Err(reason) = self.exit() {
            let log = std::fs::read_to_string(self.log_path()).unwrap_or_default();
            tracing::warn!(
                "ssh {}: cannot end the master connection ({reason}); it ends by itself {CONTROL_PERSIST_S} s after its last session; its log: {}",
                self.target,
                log.trim()
            );
        }
        if let Some(mut keeper) = self.keeper.take() {
            drop(keeper.stdin.take());
            let _ = keeper.kill();
            let _ = keeper.wait();
        }
    }
}

/// Seconds an idle master lives on (`ControlPersist`): once this process
/// is gone, by any means, its sessions close and the master follows.
const CONTROL_PERSIST_S: u32 = 3;

/// A new directory `fs-ssh-XXXXXX` in `parent`, readable by its owner
/// only (0700, whatever the umask).
fn private_dir(parent: &std::path::Path) -> std::io::Result<tempfile::TempDir> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix("fs-ssh-")
        .permissions(std::fs::Permissions::from_mode(0o700))
        .tempdir_in(parent)
}

/// How old a control directory without a socket must be to be taken for
/// one a killed workbench left (a master starting has none for at most
/// its connect timeout and login).
const STALE_AFTER: Duration = Duration::from_secs(120);

/// Removes the control directories of `parent` that a workbench killed
/// before it could remove them left behind: named `fs-ssh-…`, owned by
/// this user, with no socket (their master has ended), untouched for
/// `age`.
fn remove_stale_dirs(parent: &std::path::Path, age: Duration) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    let uid = nix::unistd::Uid::effective().as_raw();
    for entry in entries.flatten() {
        let path = entry.path();
        let named = entry
            .file_name()
            .to_str()
            .is_some_and(|name| name.starts_with("fs-ssh-"));
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let old = meta
            .modified()
            .ok()
            .and_then(|at| at.elapsed().ok())
            .is_some_and(|elapsed| elapsed >= age);
        let stale = named
            && meta.is_dir()
            && meta.uid() == uid
            && old
            && std::fs::symlink_metadata(path.join("m")).is_err();
        if stale && let Err(e) = std::fs::remove_dir_all(&path) {
            tracing::debug!(
                "cannot remove a stale control directory {}: {e}",
                path.display()
            );
        }
    }
}

/// A new file at `path` readable by its owner only (0600).
fn private_file(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
}

/// Whether `path` is `root` or below it, both absolute, taken lexically
/// (`.` dropped, `..` going up).
fn under(path: &str, root: &str) -> bool {
    fn lexical(path: &str) -> Option<PathBuf> {
        let mut out = PathBuf::new();
        for component in std::path::Path::new(path).components() {
            match component {
                std::path::Component::CurDir => {}
                std::path::Component::ParentDir => {
                    out.pop();
                }
                other => out.push(other),
            }
        }
        out.is_absolute().then_some(out)
    }
    match (lexical(path), lexical(root)) {
        (Some(path), Some(root)) => path.starts_with(root),
        _ => false,
    }
}

/// `value` quoted for a POSIX shell.
fn quoted(value: &str) -> String {
    format!("'{}'", value.replace('\'', r"'\''"))
}

/// Runs commands on agents in sessions over the master (module doc).
#[derive(Debug)]
struct SshLauncher {
    /// Agents in sessions over the master; taken (and cleared) when the
    /// launcher goes, before the master.
    agents: Option<Arc<AgentPool>>,
    master: Master,
    /// The configured variables, set on the host after the fixed overlay.
    env: std::collections::BTreeMap<String, String>,
    /// The sandbox's root when commands run in one (`None`: unconfined).
    sandbox_root: Option<String>,
}

impl SshLauncher {
    fn new(master: Master, env: std::collections::BTreeMap<String, String>) -> Self {
        Self {
            agents: None,
            master,
            env,
            sandbox_root: None,
        }
    }

    /// A pool of agents, each in a session of its own over the master
    /// (`exec bash --norc -c AGENT`), one of them started.
    fn start_agents(&self, env: std::collections::BTreeMap<OsString, OsString>) -> Arc<AgentPool> {
        let agent = format!(
            "bash --norc -c {} bash {}",
            quoted(AGENT_SCRIPT),
            Ends::Lines.arg()
        );
        let line = self.master.session(&match &self.sandbox_root {
            Some(root) => format!(
                "exec bash --norc -c {} bash {} {} 0 {agent}",
                quoted(SANDBOX_SCRIPT),
                quoted(root),
                quoted(root)
            ),
            None => format!("exec {agent}"),
        });
        let pool = AgentPool::new(
            Box::new(move || {
                let mut command = std::process::Command::new(&line.program);
                command.args(&line.args).env_clear().envs(&env);
                command
            }),
            Ends::Lines,
        );
        if let Err(e) = pool.warm() {
            tracing::warn!(
                "ssh {}: cannot start an agent ahead of the first run: {e}",
                self.master.target
            );
        }
        Arc::new(pool)
    }

    /// The variables set on the host for `spec`, after its scrubbed own:
    /// the fixed overlay, the configured ones, the request's.
    /// An rc.8 subprocess run has no overlay.
    fn remote_env(&self, spec: &BashSpec) -> Vec<(String, String)> {
        let overlay = FIXED_OVERLAY
            .iter()
            .filter(|_| spec.subprocess.is_none())
            .map(|(name, value)| ((*name).to_owned(), (*value).to_owned()));
        let configured = self.env.clone().into_iter();
        let requested = [&spec.env, &spec.dsh_env]
            .into_iter()
            .flatten()
            .flat_map(|extra| extra.clone().into_iter());
        overlay.chain(configured).chain(requested).collect()
    }

    /// Whether `spec` may run: in a sandbox, its working directory must be
    /// under the root (outside it nothing exists: a missing one's error,
    /// as the local sandbox gives).
    fn check_workdir(&self, spec: &BashSpec) -> Result<(), BashError> {
        match &self.sandbox_root {
            Some(root) if !under(&spec.workdir, root) => Err(BashError::Spawn(
                std::io::Error::from_raw_os_error(nix::libc::ENOENT),
            )),
            _ => Ok(()),
        }
    }
}

impl Drop for SshLauncher {
    fn drop(&mut self) {
        // The agents' sessions first: they ride on the master (a field,
        // dropped after this).
        if let Some(agents) = self.agents.take() {
            agents.clear();
        }
    }
}

/// The script that runs an rc.8 subprocess run's argv on the host: the
/// host's variables named `DSH_…` in any case dropped (the agent's own
/// scrub drops upper-case ones only, as the seed does), then the run's
/// variables set (`N NAME=VALUE…`), then the argv exec'd, its stdin the
/// agent's /dev/null.
const SUBPROCESS_SCRIPT: &str = r#"for n in $(compgen -e); do case ${n^^} in DSH_*) unset -v "$n";; esac; done
n=$1; shift
if ((n)); then export -- "${@:1:n}"; fi
shift "$n"
exec "$@""#;

/// `bash --norc -c SUBPROCESS_SCRIPT bash N NAME=VALUE… ARGV…`.
fn subprocess_argv(env: Vec<(OsString, OsString)>, argv: &[String]) -> Vec<OsString> {
    let mut out = bash_argv(&["--norc"], SUBPROCESS_SCRIPT);
    out.push(OsString::from("bash"));
    out.push(OsString::from(env.len().to_string()));
    for (name, value) in env {
        let mut pair = name;
        pair.push("=");
        pair.push(value);
        out.push(pair);
    }
    out.extend(argv.iter().map(OsString::from));
    out
}

impl Launcher for SshLauncher {
    /// The host's programs: an argv's `rg` is the host's.
    fn runs_local_programs(&self) -> bool {
        false
    }

    /// Every run on an agent: a command's stdin is not carried to the
    /// host (the tools never give one).
    fn launch(
        &self,
        spec: &BashSpec,
        _env: &std::collections::BTreeMap<OsString, OsString>,
    ) -> Result<Launch, BashError> {
        self.check_workdir(spec)?;
        if spec.stdin.is_some() {
            return Err(BashError::Other(
                "ssh: a command's stdin is not carried to the host".to_owned(),
            ));
        }
        let pool = self
            .agents
            .clone()
            .ok_or_else(|| BashError::Other("ssh: the executor is closing".to_owned()))?;
        let env = self
            .remote_env(spec)
            .into_iter()
            .map(|(name, value)| (OsString::from(name), OsString::from(value)));
        let call = match (&spec.subprocess, &spec.argv) {
            (Some(_), Some(argv)) => AgentCall {
                workdir: OsString::from(&spec.workdir),
                unset: Vec::new(),
                env: Vec::new(),
                argv: subprocess_argv(env.collect(), argv),
            },
            _ => AgentCall {
                workdir: OsString::from(&spec.workdir),
                unset: Vec::new(),
                env: env.collect(),
                argv: bash_argv(&["--norc"], &spec.command),
            },
        };
        Ok(Launch::Agent(pool, call))
    }

    /// ssh's own failure (or a command's exit 255) names the host; an
    /// exit of 128+N is the command's death by signal N.
    fn finish(&self, mut result: BashRunResult) -> Result<BashRunResult, BashError> {
        if result.exit_code == Some(SSH_FAILED) {
            let said = result.stderr.text.trim();
            let target = &self.master.target;
            result.stderr.text = match said {
                "" => format!("ssh {target}: exit {SSH_FAILED}\n"),
                said => format!("{said}\nssh {target}: exit {SSH_FAILED}\n"),
            };
            return Ok(result);
        }
        Ok(exit_as_signal(result))
    }
}

#[cfg(test)]
mod tests;
