//! The local executor: `bash -c` in its own process group, with a scrubbed
//! environment, stdin from /dev/null, tail-window capture per stream, its
//! own timeout, and SIGTERM then SIGKILL of the whole group on abort,
//! returning only once the group is gone (`group.rs`). bash is started by
//! its absolute path when it can be (`shell.rs`), so the spawn need not
//! fork this process. In direct mode a request's argv is spawned where
//! bash would have run, and an rc.8 subprocess run spawns its argv with
//! rc.8's environment, grace and stderr tail and no deadline (`argv.rs`,
//! [`RunPlan`]); both take the same group, kill path and captures.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::os::fd::AsFd;
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::io::AsyncWriteExt;
use tokio::process::Command;
use tokio_util::sync::CancellationToken;

use super::argv::{ResolvedRg, Spawned, subprocess_env_with};
use super::batched::{Pacing, read_batched};
use super::capture::{Capture, PastCap, Stream, collect};
use super::group::{GroupGuard, end_group};
use super::launcher::{Launch, LaunchPrefix, Launcher, signal_name};
use super::rg_dir::RgDir;
use super::shell::{SHELL, find_on_path};
use fs_search_engine::bash::{
    BashError, BashExecutor, BashRequest, BashRunResult, BashSpec, CappedRun, CollectedOutput,
    OverCap, RunMode, RunOutcome, StdoutSink,
};

/// Executor settings; every number must be positive.
#[derive(Debug, Clone)]
pub struct LocalBashConfig {
    /// Default working directory (else the process cwd).
    pub cwd: Option<String>,
    /// Default timeout of a request without one, in ms.
    pub timeout_ms: u64,
    /// The largest timeout a request may ask for, in ms.
    pub max_timeout_ms: u64,
    /// Default stdout budget, and the stderr budget.
    pub max_output_bytes: u64,
    /// The most bytes of a stream kept in the executor's spill file.
    pub max_spill_bytes: u64,
    /// Grace between SIGTERM and SIGKILL of the process group, in ms.
    pub grace_ms: u64,
    /// Extra variables for every child, set after the fixed overlay and
    /// before a request's own `env` (e.g. `RIPGREP_CONFIG_PATH` for a
    /// deterministic transcript replay, without touching the process env).
    pub env: BTreeMap<String, String>,
    /// The rg binary that runs as `rg` (`--rg PATH`); `None`: the first
    /// `rg` on `PATH`. An argv run spawns it as `argv[0]` when that is
    /// `rg`; a bash command finds it first on its `PATH`.
    pub rg: Option<std::path::PathBuf>,
}

impl Default for LocalBashConfig {
    fn default() -> Self {
        Self {
            cwd: None,
            timeout_ms: 120_000,
            max_timeout_ms: 600_000,
            max_output_bytes: 64_000,
            max_spill_bytes: 64 * 1024 * 1024,
            grace_ms: 3000,
            env: BTreeMap::new(),
            rg: None,
        }
    }
}

/// Runs commands locally through `bash -c` (or, in direct mode, a
/// request's argv without bash), and the 0.1.0-rc.8 subprocess runs of
/// argv (`argv.rs`).
#[derive(Debug, Clone)]
pub struct LocalBashExecutor {
    pub(super) config: LocalBashConfig,
    /// Where stream spill files go; removed when the executor is dropped.
    spill_dir: std::sync::Arc<super::capture::SpillDir>,
    /// What starts `bash -c`: none runs it directly.
    launcher: Option<std::sync::Arc<dyn Launcher>>,
    /// Direct mode ([`LocalBashExecutor::direct`]).
    direct: bool,
    /// The `--rg` directory first on every child's `PATH` (`rg_dir.rs`).
    rg_dir: std::sync::Arc<RgDir>,
    /// The rg of the rc.8 subprocess runs, resolved once (`argv.rs`).
    resolved_rg: std::sync::Arc<ResolvedRg>,
}

impl LocalBashExecutor {
    /// An executor with `config`; fails when no usable working directory is given.
    pub fn new(config: LocalBashConfig) -> Result<Self, BashError> {
        for (name, value) in [
            ("timeoutMs", config.timeout_ms),
            ("maxTimeoutMs", config.max_timeout_ms),
            ("maxOutputBytes", config.max_output_bytes),
            ("maxSpillBytes", config.max_spill_bytes),
            ("graceMs", config.grace_ms),
        ] {
            if value == 0 {
                return Err(BashError::InvalidRequest(format!(
                    "bash-local: {name} must be a positive finite number"
                )));
            }
        }
        Ok(Self {
            config,
            spill_dir: Default::default(),
            launcher: None,
            direct: false,
            rg_dir: Default::default(),
            resolved_rg: Default::default(),
        })
    }

    /// This executor in direct mode (`--executor direct`): a request with
    /// an argv runs it without bash, spawned as bash would exec it (the
    /// program found on the child's `PATH`, `rg` being the `--rg` binary
    /// when set), and otherwise exactly as a `bash -c` run goes: the same
    /// environment, stdin, timeout, kill path, budgets and spill files. A
    /// request without one runs through bash. A direct executor has no
    /// launcher: every run is a process of its own here.
    pub fn direct(mut self) -> Self {
        self.direct = true;
        self
    }

    /// Whether this executor is in direct mode.
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// This executor with every command started through `launcher`
    /// (`launcher.rs`): the process group, timeout, kill path, scrubbed
    /// environment and output caps stay this executor's.
    pub(crate) fn with_launcher(mut self, launcher: std::sync::Arc<dyn Launcher>) -> Self {
        self.launcher = Some(launcher);
        self
    }

    /// The settings this executor was made with.
    pub fn config(&self) -> &LocalBashConfig {
        &self.config
    }
}

/// True for variables the executor never forwards: names matching
/// `/KEY|PASSWORD|SECRET|TOKEN/i` and names starting with `DSH_`.
pub(super) fn is_scrubbed(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "PASSWORD", "SECRET", "TOKEN"]
        .iter()
        .any(|word| upper.contains(word))
        || name.starts_with("DSH_")
}

/// The variables every child gets, over the harness environment.
pub(super) const FIXED_OVERLAY: [(&str, &str); 4] = [
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
];

impl LocalBashExecutor {
    /// The `--rg` directory, when `config.rg` is set and it could be made.
    fn rg_path_prefix(&self) -> Option<&std::path::Path> {
        self.config
            .rg
            .as_deref()
            .and_then(|rg| self.rg_dir.path(rg))
    }

    /// The environment of a child of `spec`: an rc.8 subprocess run's
    /// (`argv.rs`) or a `bash -c` run's ([`child_env_with`]), with of
    /// this process's variables only those whose names `passes`, and the
    /// `--rg` directory first on `PATH`.
    pub(super) fn child_env_with(
        &self,
        spec: &BashSpec,
        passes: impl Fn(&OsStr) -> bool,
    ) -> BTreeMap<OsString, OsString> {
        let prefix = self.rg_path_prefix();
        match spec.subprocess {
            Some(_) => subprocess_env_with(&self.config, spec, prefix, passes),
            None => {
                let mut env = child_env_with(&self.config, spec, passes);
                if let Some(dir) = prefix {
                    super::rg_dir::prepend_to_path(&mut env, dir);
                }
                env
            }
        }
    }

    /// [`LocalBashExecutor::child_env_with`] of every variable.
    pub(super) fn child_env(&self, spec: &BashSpec) -> BTreeMap<OsString, OsString> {
        self.child_env_with(spec, |_| true)
    }

    /// The child environment of a run through `launcher` (none: a direct
    /// one), with the launcher's choice of this process's variables.
    fn launched_env(
        &self,
        spec: &BashSpec,
        launcher: Option<&dyn Launcher>,
    ) -> BTreeMap<OsString, OsString> {
        match launcher {
            Some(launcher) => self.child_env_with(spec, |name| launcher.inherits(name)),
            None => self.child_env(spec),
        }
    }

    /// How a run of `spec` goes besides its child ([`RunPlan`]).
    pub(crate) fn plan(&self, spec: &BashSpec) -> RunPlan {
        match spec.subprocess {
            Some(run) => RunPlan {
                deadline: None,
                grace: Duration::from_millis(run.grace_ms),
                stderr_max: usize::try_from(run.stderr_max_bytes).unwrap_or(usize::MAX),
                spill: false,
            },
            None => RunPlan {
                deadline: Some(Duration::from_millis(spec.timeout_ms)),
                grace: self.grace(),
                stderr_max: usize::try_from(self.config.max_output_bytes).unwrap_or(usize::MAX),
                spill: true,
            },
        }
    }

    /// The argv `spec` spawns without bash, when it does: an rc.8
    /// subprocess run's (its rg resolved once), or a direct-mode run's
    /// (`argv.rs`); `None` for a `bash -c` run.
    pub(crate) fn spawned(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<Option<Spawned>, BashError> {
        let remote =
            (self.launcher.as_deref()).is_some_and(|launcher| !launcher.runs_local_programs());
        match (&spec.subprocess, &spec.argv) {
            // Another machine's programs: the argv goes as it is.
            (Some(_), Some(_)) if remote => Ok(None),
            (Some(_), Some(argv)) => {
                let rg = self.resolved_rg.get(&self.config, env);
                Spawned::subprocess(argv, rg).map(Some)
            }
            (Some(_), None) => Err(BashError::InvalidRequest(
                "bash-local: a subprocess run needs an argv".to_owned(),
            )),
            (None, Some(argv)) if self.direct && self.launcher.is_none() => {
                Spawned::direct(argv, env).map(Some)
            }
            (None, _) => Ok(None),
        }
    }
}

/// What a run's kind decides besides its child: the seed's runs have the
/// executor's deadline, grace, stderr budget and spill files; an rc.8
/// subprocess run has no deadline, its own grace and stderr tail, and no
/// spill file of either stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RunPlan {
    /// When the executor kills the command; `None`: only the signal ends it.
    pub(crate) deadline: Option<Duration>,
    /// SIGTERM to SIGKILL, and the bound on draining the pipes after exit.
    pub(crate) grace: Duration,
    /// How many (trailing) bytes of stderr are kept.
    pub(crate) stderr_max: usize,
    /// Whether a stream past its budget may spill to a file.
    pub(crate) spill: bool,
}

impl RunPlan {
    /// The deadline's sleep; one that never ends when there is none.
    pub(crate) async fn deadline(self) {
        match self.deadline {
            Some(after) => tokio::time::sleep(after).await,
            None => std::future::pending().await,
        }
    }

    /// The longest wait for a launcher slot (`slots.rs`): the deadline,
    /// or without one as long as the signal allows.
    pub(crate) fn slot_bound(self) -> Duration {
        self.deadline
            .unwrap_or(Duration::from_secs(u64::from(u32::MAX)))
    }
}

/// The child environment of a `bash -c` run: the scrubbed harness
/// environment, the fixed overlay, the configured `env`, then the spec's
/// `env` and `dshEnv`; of this process's variables only those whose names
/// `passes` (a sandbox's allowlist).
pub(super) fn child_env_with(
    config: &LocalBashConfig,
    spec: &BashSpec,
    passes: impl Fn(&OsStr) -> bool,
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(name, _)| passes(name) && !is_scrubbed(&name.to_string_lossy()))
        .collect();
    for (name, value) in FIXED_OVERLAY {
        env.insert(name.into(), value.into());
    }
    for (name, value) in &config.env {
        env.insert(name.into(), value.into());
    }
    for extra in [&spec.env, &spec.dsh_env].into_iter().flatten() {
        for (name, value) in extra {
            env.insert(name.into(), value.into());
        }
    }
    env
}

/// `bash -c <command>` for `spec` with the child environment `env`: argv
/// `['bash', '-c', command]`, the program itself by its absolute path
/// when the child's `PATH` names one (`shell.rs`), in its own process
/// group, in `spec.workdir`. With a launcher's `prefix`, its program and
/// arguments come first and `bash` is left to the launcher's own search
/// of the child's `PATH`.
///
/// A run that spawns an argv without bash (`spawned`: an rc.8 subprocess
/// run, or a direct one) spawns it instead of `bash -c`, the same way
/// otherwise; an rc.8 run's stdin is always /dev/null.
fn shell_command(
    spec: &BashSpec,
    env: BTreeMap<OsString, OsString>,
    prefix: Option<LaunchPrefix>,
    spawned: Option<&Spawned>,
) -> Command {
    let mut command = match (spawned, prefix) {
        (Some(spawned), prefix) => spawned.command(prefix),
        (None, Some(prefix)) => {
            let mut command = Command::new(prefix.program);
            command
                .args(prefix.args)
                .arg(SHELL)
                .arg("-c")
                .arg(&spec.command);
            command
        }
        (None, None) => {
            let mut command =
                match find_on_path(env.get(OsStr::new("PATH")).map(OsString::as_os_str)) {
                    Some(program) => {
                        let mut command = Command::new(program);
                        command.arg0(SHELL);
                        command
                    }
                    None => Command::new(SHELL),
                };
            command.arg("-c").arg(&spec.command);
            command
        }
    };
    command
        .env_clear()
        .envs(env)
        .stdin(if spec.stdin.is_some() && spec.subprocess.is_none() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    // Node treats an empty cwd as "inherit"; so do we.
    if !spec.workdir.is_empty() {
        command.current_dir(&spec.workdir);
    }
    command
}

/// The stdout pipe size of a capped run, the reader's longest pause (for a
/// slow writer), and how full it aims to find the pipe after a pause.
const BATCH_PIPE_BYTES: i32 = 1 << 20;
const BATCH_PAUSE: Duration = Duration::from_millis(2);
const BATCH_TARGET_BYTES: usize = 1 << 17;

/// A child's output pipe as its reader takes it.
enum Pipe {
    Async(Box<dyn tokio::io::AsyncRead + Unpin + Send>),
    /// A non-blocking pipe read in batches.
    Batched(std::os::fd::OwnedFd),
}

/// Why the executor killed the command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum KillCause {
    Timeout,
    Abort,
    /// Stdout outgrew its budget in a capped run with [`OverCap::Stop`].
    StdoutCap,
}

impl LocalBashExecutor {
    /// In direct mode, the load probe answered without bash: `command -v
    /// rg` succeeds exactly when an executable `rg` is on the child's
    /// `PATH` (a fresh non-interactive bash has no alias, function or
    /// hashed name to find first). `None` (bash runs it) for any other
    /// command, a signal already fired, or a `PATH` with an entry bash
    /// would read relative to the working directory.
    fn probe_answer(&self, spec: &BashSpec) -> Option<BashRunResult> {
        let probe = spec.command == fs_search_engine::registry::PROBE_COMMAND;
        if !(self.direct && self.launcher.is_none() && probe && spec.argv.is_none()) {
            return None;
        }
        if spec
            .signal
            .as_ref()
            .is_some_and(CancellationToken::is_cancelled)
        {
            return None;
        }
        let env = self.child_env(spec);
        let path = env.get(OsStr::new("PATH"))?;
        let absolute = path
            .as_encoded_bytes()
            .split(|&b| b == b':')
            .all(|dir| dir.first() == Some(&b'/'));
        if !absolute {
            return None;
        }
        let found = super::shell::find_program_on_path(super::argv::RG, Some(path)).is_some();
        Some(BashRunResult {
            exit_code: Some(if found { 0 } else { 1 }),
            timeout_ms: spec.timeout_ms,
            ..BashRunResult::default()
        })
    }

    pub(super) fn grace(&self) -> Duration {
        Duration::from_millis(self.config.grace_ms)
    }

    /// The capture of a run's `stream` keeping `max` bytes; a streamed
    /// run's stdout goes to `sink`.
    pub(super) fn capture(
        &self,
        stream: Stream,
        max: usize,
        sink: Option<Box<dyn StdoutSink>>,
        pid: u32,
        spill: bool,
    ) -> Capture {
        match (sink, stream) {
            (Some(sink), Stream::Stdout) => {
                Capture::streaming(self.spill_dir.clone(), max, pid, sink)
            }
            // A spill cap of 0: never a spill file.
            _ => Capture::new(
                self.spill_dir.clone(),
                max,
                if spill {
                    self.config.max_spill_bytes
                } else {
                    0
                },
                stream,
                pid,
            ),
        }
    }
}

/// What the reader of `stream` does past its budget in a run `capped` so
/// (`None`: an uncapped run); `over_cap` hears a stop.
pub(super) fn past_cap(
    stream: Stream,
    capped: Option<OverCap>,
    over_cap: &CancellationToken,
) -> PastCap {
    match (stream, capped) {
        (Stream::Stdout, Some(OverCap::Stop)) => PastCap::Stop(over_cap.clone()),
        (Stream::Stdout, Some(OverCap::Drain)) => PastCap::Discard,
        _ => PastCap::Keep,
    }
}

/// The captured streams of a run's two readers, and the stdout sink
/// handed back.
pub(super) async fn finish_captures(
    stdout: Result<Capture, tokio::task::JoinError>,
    stderr: Result<Capture, tokio::task::JoinError>,
) -> (
    CollectedOutput,
    CollectedOutput,
    Option<Box<dyn StdoutSink>>,
) {
    let (stdout, sink) = match stdout {
        Ok(capture) => capture.finish().await,
        Err(_) => (CollectedOutput::default(), None),
    };
    let stderr = match stderr {
        Ok(capture) => capture.finish().await.0,
        Err(_) => CollectedOutput::default(),
    };
    (stdout, stderr, sink)
}

/// A request's optional number, rejected when present and not positive.
fn positive(value: Option<u64>, name: &str) -> Result<Option<u64>, BashError> {
    match value {
        Some(0) => Err(BashError::InvalidRequest(format!(
            "bash-local: request.{name} must be a positive finite number"
        ))),
        other => Ok(other),
    }
}

#[async_trait]
impl BashExecutor for LocalBashExecutor {
    fn release(&self, result: &BashRunResult) {
        self.spill_dir.release(result);
    }

    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        let timeout_ms = positive(request.timeout_ms, "timeoutMs")?
            .unwrap_or(self.config.timeout_ms)
            .min(self.config.max_timeout_ms);
        let stdout_max_bytes = positive(request.stdout_max_bytes, "stdoutMaxBytes")?
            .unwrap_or(self.config.max_output_bytes);
        let workdir = match request.workdir.or_else(|| self.config.cwd.clone()) {
            Some(dir) => dir,
            None => std::env::current_dir()
                .map(|d| d.to_string_lossy().into_owned())
                .map_err(BashError::Spawn)?,
        };
        Ok(BashSpec {
            command: request.command,
            argv: request.argv,
            subprocess: request.subprocess,
            workdir,
            timeout_ms,
            stdout_max_bytes,
            signal: request.signal,
            stdin: request.stdin,
            env: request.env,
            dsh_env: request.dsh_env,
        })
    }

    /// A capped run keeps no stdout past `spec.stdout_max_bytes` (nor
    /// spills it); with [`OverCap::Stop`] reading stops there and the
    /// process group is ended (SIGTERM, then SIGKILL after `graceMs`). A
    /// streamed one hands the stdout within the budget to the sink.
    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
        if let Some(answer) = self.probe_answer(&spec) {
            return Ok(mode.kept(CappedRun::Finished(answer)));
        }
        let RunMode { over_cap, sink } = mode;
        let Some(over_cap) = over_cap else {
            let (run, _) = self.run_foreground(spec, None, None).await?;
            return Ok(RunOutcome {
                run,
                to_sink: false,
                sink,
            });
        };
        let to_sink = sink.is_some();
        let (run, sink) = self.run_foreground(spec, Some(over_cap), sink).await?;
        Ok(RunOutcome { run, to_sink, sink })
    }
}

impl LocalBashExecutor {
    /// One foreground run; `capped` is `None` for an uncapped one; `sink`
    /// receives stdout for a streamed one and comes back with the result
    /// (not after a stop at the cap).
    async fn run_foreground(
        &self,
        spec: BashSpec,
        capped: Option<OverCap>,
        sink: Option<Box<dyn StdoutSink>>,
    ) -> Result<(CappedRun, Option<Box<dyn StdoutSink>>), BashError> {
        let signal = spec.signal.clone().unwrap_or_default();
        if signal.is_cancelled() {
            return Err(BashError::AbortedBeforeSpawn(
                "This operation was aborted".into(),
            ));
        }
        // A run that goes elsewhere fails as a local spawn would, at once
        // (`spawn_refusal.rs`).
        let plan = self.plan(&spec);
        let env = self.launcher.is_some().then(|| self.child_env(&spec));
        if let Some(env) = &env
            && let Some(refused) = super::spawn_refusal::spawn_refusal(&spec, env)
        {
            return Err(BashError::Spawn(refused));
        }
        // A sandbox or a remote session: one of the process's slots for
        // the whole run (`slots.rs`).
        let _slot = match self.launcher {
            Some(_) => match super::slots::wait_for_slot(&signal, plan.slot_bound()).await {
                super::slots::Slot::Held(slot) => slot,
                super::slots::Slot::Aborted => {
                    return Err(BashError::AbortedBeforeSpawn(
                        "This operation was aborted".into(),
                    ));
                }
                super::slots::Slot::TimedOut => {
                    let result = BashRunResult {
                        timed_out: true,
                        timeout_ms: spec.timeout_ms,
                        ..BashRunResult::default()
                    };
                    return Ok((CappedRun::Finished(result), sink));
                }
            },
            None => None,
        };
        let launcher = self.launcher.as_deref();
        let env = self.launched_env(&spec, launcher);
        let spawned = self.spawned(&spec, &env)?;
        // A launcher runs the argv as spawned (`rg` resolved).
        let mut spec = spec;
        if let (Some(spawned), Some(_)) = (&spawned, launcher) {
            spec.argv = Some(
                (spawned.argv.iter())
                    .map(|arg| arg.to_string_lossy().into_owned())
                    .collect(),
            );
        }
        let prefix = match launcher {
            None => None,
            Some(launcher) => match launcher.launch(&spec, &env)? {
                Launch::Prefix(prefix) => Some(prefix),
                Launch::Agent(pool, call) => {
                    // Boxed: a call waiting for its slot holds none of the
                    // run's state (many may wait at once).
                    return Box::pin(self.run_on_agent(launcher, &pool, call, spec, capped, sink))
                        .await;
                }
            },
        };
        let mut command = shell_command(&spec, env, prefix, spawned.as_ref());
        super::inherited::mark_inherited_descriptors_close_on_exec();
        let mut child = command.spawn().map_err(BashError::Spawn)?;
        let pid = child.id().unwrap_or_default();
        let pgid = Pid::from_raw(i32::try_from(pid).unwrap_or_default());
        let group = GroupGuard::new(pgid);

        if let (Some(input), Some(mut pipe)) = (spec.stdin.clone(), child.stdin.take()) {
            tokio::spawn(async move {
                let _ = pipe.write_all(input.as_bytes()).await;
            });
        }
        // For a capped run, a 1 MiB stdout pipe (Linux's default ceiling)
        // lets the reader collect in batches (a wake-up per millisecond or
        // so rather than per write) and still find the pipe far from full,
        // so rg never waits for it (`Pacing`).
        let batch = capped.is_some()
            && child.stdout.as_ref().is_some_and(|stdout| {
                nix::fcntl::fcntl(stdout, nix::fcntl::FcntlArg::F_SETPIPE_SZ(BATCH_PIPE_BYTES))
                    .is_ok_and(|size| size >= BATCH_PIPE_BYTES)
            });
        let stop = CancellationToken::new();
        // Should this future be dropped mid-run, the readers stop too.
        let _stop_readers_on_drop = stop.clone().drop_guard();
        let over_cap = CancellationToken::new();
        let stdout_max = usize::try_from(spec.stdout_max_bytes).unwrap_or(usize::MAX);
        let stderr_max = plan.stderr_max;
        let stdout: Option<Pipe> = child.stdout.take().map(|pipe| {
            // The reader's own copy of the (non-blocking) pipe; dropping
            // tokio's handle stops the runtime watching it.
            let own = batch.then(|| pipe.as_fd().try_clone_to_owned().ok());
            match own.flatten() {
                Some(fd) => Pipe::Batched(fd),
                None => Pipe::Async(Box::new(pipe)),
            }
        });
        let stderr: Option<Pipe> = child.stderr.take().map(|pipe| Pipe::Async(Box::new(pipe)));
        let mut sink = sink;
        let readers = [
            (stdout, stdout_max, Stream::Stdout),
            (stderr, stderr_max, Stream::Stderr),
        ]
        .map(|(pipe, max, stream)| {
            let sink = match stream {
                Stream::Stdout => sink.take(),
                Stream::Stderr => None,
            };
            let capture = self.capture(stream, max, sink, pid, plan.spill);
            let stop = stop.clone();
            let past_cap = past_cap(stream, capped, &over_cap);
            match pipe {
                Some(Pipe::Batched(fd)) => {
                    let runtime = tokio::runtime::Handle::current();
                    tokio::task::spawn_blocking(move || {
                        let pacing = Pacing::new(BATCH_PAUSE, BATCH_TARGET_BYTES);
                        read_batched(&fd, capture, &stop, &past_cap, pacing, &runtime)
                    })
                }
                Some(Pipe::Async(pipe)) => {
                    tokio::spawn(async move { collect(pipe, capture, stop, past_cap).await })
                }
                None => tokio::spawn(async move { capture }),
            }
        });

        let deadline = plan.deadline();
        tokio::pin!(deadline);
        // The stdout cap first: once the reader has stopped at the cap it
        // closes the pipe, so the command may die of SIGPIPE at once, and
        // that death is the stop's doing, not how the command ended.
        let cause = tokio::select! {
            biased;
            () = over_cap.cancelled() => Some(KillCause::StdoutCap),
            _ = child.wait() => None,
            () = signal.cancelled() => Some(KillCause::Abort),
            () = &mut deadline => Some(KillCause::Timeout),
        };
        // Every kill, whatever its cause, ends the group the same way and
        // returns only once no member is alive (or the bound is over).
        let status = match cause {
            None => Some(child.wait().await.map_err(BashError::Spawn)?),
            Some(_) => end_group(&mut child, pgid, plan.grace).await,
        };
        group.disarm();
        if cause == Some(KillCause::StdoutCap) {
            stop.cancel();
            return Ok((CappedRun::StdoutOverCap, None));
        }

        let [stdout_task, stderr_task] = readers;
        let collected = async {
            let stdout = stdout_task.await;
            let stderr = stderr_task.await;
            (stdout, stderr)
        };
        tokio::pin!(collected);
        // A descendant holding a pipe open does not hold the run: the
        // readers get the grace, then stop.
        let (stdout, stderr) = match tokio::time::timeout(plan.grace, &mut collected).await {
            Ok(done) => done,
            Err(_) => {
                stop.cancel();
                collected.await
            }
        };
        let (stdout, stderr, sink) = finish_captures(stdout, stderr).await;
        use std::os::unix::process::ExitStatusExt;
        let result = BashRunResult {
            exit_code: status.and_then(|s| s.code()),
            // A leader that outlived SIGKILL's bound has no status yet:
            // SIGKILL is what it was last sent.
            signal: status.map_or_else(
                || Some(Signal::SIGKILL.as_str().to_owned()),
                |s| s.signal().map(signal_name),
            ),
            timed_out: cause == Some(KillCause::Timeout),
            aborted: cause == Some(KillCause::Abort),
            timeout_ms: spec.timeout_ms,
            stdout,
            stderr,
        };
        // A command the executor ended reports how the executor ended it;
        // one that ended by itself, as the launcher reads its exit.
        let result = match (launcher, cause) {
            (Some(launcher), None) => launcher.finish(result)?,
            _ => result,
        };
        Ok((CappedRun::Finished(result), sink))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_run::RunShorthand;

    #[test]
    fn scrubs_secret_names_and_managed_variables() {
        for name in [
            "API_KEY",
            "my_token",
            "Password",
            "AWS_SECRET_ACCESS_KEY",
            "DSH_X",
            "monkey",
        ] {
            assert!(is_scrubbed(name), "{name}");
        }
        for name in ["PATH", "HOME", "dsh_lower", "RIPGREP_CONFIG_PATH"] {
            assert!(!is_scrubbed(name), "{name}");
        }
    }

    #[test]
    fn resolve_applies_defaults_and_caps() {
        let exec = LocalBashExecutor::new(LocalBashConfig {
            cwd: Some("/w".into()),
            ..LocalBashConfig::default()
        })
        .unwrap();
        let spec = exec
            .resolve(BashRequest {
                command: "true".into(),
                timeout_ms: Some(10_000_000),
                stdout_max_bytes: Some(20_000_000),
                ..BashRequest::default()
            })
            .unwrap();
        assert_eq!(
            (
                spec.workdir.as_str(),
                spec.timeout_ms,
                spec.stdout_max_bytes
            ),
            ("/w", 600_000, 20_000_000)
        );
        let spec = exec.resolve(BashRequest::default()).unwrap();
        assert_eq!((spec.timeout_ms, spec.stdout_max_bytes), (120_000, 64_000));
        let err = exec
            .resolve(BashRequest {
                timeout_ms: Some(0),
                ..BashRequest::default()
            })
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bash-local: request.timeoutMs must be a positive finite number"
        );
        let err = LocalBashExecutor::new(LocalBashConfig {
            grace_ms: 0,
            ..LocalBashConfig::default()
        })
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "bash-local: graceMs must be a positive finite number"
        );
    }

    fn spec(command: &str) -> BashSpec {
        LocalBashExecutor::new(LocalBashConfig::default())
            .unwrap()
            .resolve(BashRequest {
                command: command.into(),
                ..BashRequest::default()
            })
            .unwrap()
    }

    #[tokio::test]
    async fn runs_bash_with_the_overlay_and_stdin_closed() {
        let exec = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
        let out = exec
            .whole(spec(
                "printf '%s|%s|' \"$TERM\" \"$NO_COLOR\"; cat; echo err >&2; exit 3",
            ))
            .await
            .unwrap();
        assert_eq!(out.exit_code, Some(3));
        assert_eq!(out.stdout.text, "dumb|1|");
        assert_eq!(out.stderr.text, "err\n");
        assert!(!out.timed_out && !out.aborted);
    }

    #[tokio::test]
    async fn the_configured_env_overlay_reaches_the_child_and_requests_override_it() {
        let exec = LocalBashExecutor::new(LocalBashConfig {
            env: BTreeMap::from([
                ("RIPGREP_CONFIG_PATH".to_owned(), "/cfg/rg".to_owned()),
                ("WB_OVERLAY".to_owned(), "config".to_owned()),
                ("TERM".to_owned(), "xterm".to_owned()),
            ]),
            ..LocalBashConfig::default()
        })
        .unwrap();
        let mut s = spec("printf '%s|%s|%s' \"$RIPGREP_CONFIG_PATH\" \"$WB_OVERLAY\" \"$TERM\"");
        s.env = Some(BTreeMap::from([(
            "WB_OVERLAY".to_owned(),
            "request".to_owned(),
        )]));
        let out = exec.whole(s).await.unwrap();
        assert_eq!(out.stdout.text, "/cfg/rg|request|xterm");
    }

    #[tokio::test]
    async fn times_out_and_kills_the_group() {
        let exec = LocalBashExecutor::new(LocalBashConfig {
            timeout_ms: 100,
            grace_ms: 200,
            ..LocalBashConfig::default()
        })
        .unwrap();
        let mut s = spec("sleep 30");
        s.timeout_ms = 100;
        let out = exec.whole(s).await.unwrap();
        assert!(out.timed_out && !out.aborted);
        assert_eq!(out.exit_code, None);
        assert_eq!(out.signal.as_deref(), Some("SIGTERM"));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_dropped_mid_way_leaves_no_process_of_its_group() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("pgid");
        let command = format!(
            "echo $$ > '{}'; (trap '' TERM; exec sleep 30) & sleep 30",
            pid_file.display()
        );
        let exec = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
        let run = tokio::spawn(async move { exec.run(spec(&command), RunMode::whole()).await });
        let started = std::time::Instant::now();
        let pgid = loop {
            let written = std::fs::read_to_string(&pid_file).unwrap_or_default();
            if let Ok(pgid) = written.trim().parse::<i32>() {
                break Pid::from_raw(pgid);
            }
            assert!(started.elapsed() < Duration::from_secs(10), "no pid");
            tokio::time::sleep(Duration::from_millis(10)).await;
        };
        assert!(!super::super::group::live_members(pgid).is_empty());
        // Dropping the run's future (as a runtime shutting down does).
        run.abort();
        assert!(run.await.unwrap_err().is_cancelled());
        let gone = super::super::group::wait_until_gone(
            pgid,
            tokio::time::Instant::now() + Duration::from_secs(10),
        )
        .await;
        assert_eq!(gone, Vec::<i32>::new());
    }

    #[tokio::test]
    async fn a_pre_aborted_signal_rejects_before_spawn() {
        let exec = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
        let token = CancellationToken::new();
        token.cancel();
        let mut s = spec("true");
        s.signal = Some(token);
        assert!(matches!(
            exec.whole(s).await,
            Err(BashError::AbortedBeforeSpawn(_))
        ));
    }

    #[tokio::test]
    async fn run_capped_ends_a_command_whose_stdout_outgrows_its_budget() {
        let exec = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
        let mut s = spec("yes; echo never");
        s.stdout_max_bytes = 100_000;
        let started = std::time::Instant::now();
        assert_eq!(
            exec.capped(s, OverCap::Stop).await.unwrap(),
            CappedRun::StdoutOverCap
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        for over_cap in [OverCap::Stop, OverCap::Drain] {
            let mut s = spec("printf 'abc'; exit 1");
            s.stdout_max_bytes = 3;
            let CappedRun::Finished(out) = exec.capped(s, over_cap).await.unwrap() else {
                panic!("a command within its budget finishes");
            };
            assert_eq!(
                (
                    out.exit_code,
                    out.stdout.text.as_str(),
                    out.stdout.truncated
                ),
                (Some(1), "abc", false)
            );
        }
    }

    #[tokio::test]
    async fn run_capped_draining_keeps_the_exit_of_a_command_past_its_budget() {
        let exec = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
        let mut s = spec("head -c 300000 /dev/zero; echo late >&2; exit 2");
        s.stdout_max_bytes = 1000;
        let CappedRun::Finished(out) = exec.capped(s, OverCap::Drain).await.unwrap() else {
            panic!("a drained command finishes");
        };
        assert_eq!(out.exit_code, Some(2));
        assert_eq!(out.stderr.text, "late\n");
        assert_eq!(
            (
                out.stdout.text.as_str(),
                out.stdout.truncated,
                out.stdout.spill_path
            ),
            ("", true, None)
        );
    }

    /// A bare `bash` would make the standard library fork this process to
    /// search `PATH` in the child; the absolute path lets it `posix_spawn`.
    #[test]
    fn bash_is_spawned_by_its_absolute_path_found_on_the_childs_path() {
        let root = tempfile::tempdir().unwrap();
        let own_bash = root.path().join("bash");
        std::fs::write(&own_bash, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(
            &own_bash,
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let config = LocalBashConfig {
            env: BTreeMap::from([(
                "PATH".to_owned(),
                format!("{}:/usr/bin:/bin", root.path().display()),
            )]),
            ..LocalBashConfig::default()
        };
        let command = shell_command(
            &spec("true"),
            child_env_with(&config, &spec("true"), |_| true),
            None,
            None,
        );
        assert_eq!(command.as_std().get_program(), own_bash.as_os_str());
        let args: Vec<&OsStr> = command.as_std().get_args().collect();
        assert_eq!(args, [OsStr::new("-c"), OsStr::new("true")]);
    }

    #[tokio::test]
    async fn the_command_still_sees_bash_as_its_argv0_and_the_path_search_still_applies() {
        let exec = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
        let out = exec.whole(spec("printf '%s' \"$0\"")).await.unwrap();
        assert_eq!(out.stdout.text, "bash");
        // A PATH with a relative entry first: the spawn's own search.
        let relative = LocalBashExecutor::new(LocalBashConfig {
            env: BTreeMap::from([("PATH".to_owned(), "no/such/dir:/usr/bin:/bin".to_owned())]),
            ..LocalBashConfig::default()
        })
        .unwrap();
        let out = relative.whole(spec("printf '%s' \"$0\"")).await.unwrap();
        assert_eq!((out.exit_code, out.stdout.text.as_str()), (Some(0), "bash"));
    }

    #[tokio::test]
    async fn a_missing_workdir_is_a_spawn_failure() {
        let exec = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
        let mut s = spec("true");
        s.workdir = "/nonexistent/dir/for/sure".into();
        let err = exec.whole(s).await.unwrap_err();
        assert_eq!(err.to_string(), "spawn bash ENOENT");
    }
}
