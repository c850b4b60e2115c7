//! The bash executor seam (CONTRACT §1.3): `resolve` a request to a spec,
//! then `run` it. The search tools never start background processes.
//!
//! Public for an implementer of [`BashExecutor`] (a sandboxed or remote
//! backend, or a fake that injects a fault): the request and spec types,
//! the run results, and the plumbing of capped and streamed runs
//! ([`RunMode`], [`OverCap`], [`RunOutcome`], [`CappedRun`],
//! [`StdoutSink`]). The
//! implementations (local, sandboxed, over ssh) are the `fs-search-exec`
//! crate's: the contract starts no process itself.

mod errno;

use std::collections::BTreeMap;
use std::path::PathBuf;

use async_trait::async_trait;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

/// A request for one foreground command.
#[derive(Debug, Clone, Default)]
pub struct BashRequest {
    /// A shell command string (not argv).
    pub command: String,
    /// The same command as the words bash would hand to `exec`, unquoted,
    /// when it is one simple command (the search tools' are; the probe is
    /// not): what an executor that spawns without a shell runs. `argv[0]`
    /// is a program name looked up on `PATH`, or a path.
    pub argv: Option<Vec<String>>,
    /// Run `argv` as the 0.1.0-rc.8 subprocess seam runs it, never through
    /// bash ([`SubprocessRun`]); `argv` is then required.
    pub subprocess: Option<SubprocessRun>,
    /// Working directory; `None` lets the executor choose.
    pub workdir: Option<String>,
    /// Timeout in ms; the executor's default when absent.
    pub timeout_ms: Option<u64>,
    /// Foreground stdout capture budget in bytes.
    pub stdout_max_bytes: Option<u64>,
    /// Kills the command when cancelled.
    pub signal: Option<CancellationToken>,
    /// Text for the command's stdin.
    pub stdin: Option<String>,
    /// Extra environment variables.
    pub env: Option<BTreeMap<String, String>>,
    /// Extra environment variables of the dsh namespace.
    pub dsh_env: Option<BTreeMap<String, String>>,
}

/// A request with the executor's defaults and caps applied.
#[derive(Debug, Clone)]
pub struct BashSpec {
    /// The command, run by `bash -c`.
    pub command: String,
    /// The command's argv, when it has one ([`BashRequest::argv`]).
    pub argv: Option<Vec<String>>,
    /// The 0.1.0-rc.8 subprocess run of `argv` ([`SubprocessRun`]).
    pub subprocess: Option<SubprocessRun>,
    /// The working directory.
    pub workdir: String,
    /// The timeout in ms after which the process group is killed.
    pub timeout_ms: u64,
    /// How many bytes of stdout are kept.
    pub stdout_max_bytes: u64,
    /// Cancelling it aborts the run and kills the process group.
    pub signal: Option<CancellationToken>,
    /// Text for the command's stdin.
    pub stdin: Option<String>,
    /// Extra environment variables.
    pub env: Option<BTreeMap<String, String>>,
    /// Extra environment variables of the dsh namespace.
    pub dsh_env: Option<BTreeMap<String, String>>,
}

/// How the 0.1.0-rc.8 release runs rg (its subprocess seam): `argv`
/// spawned directly in a process group of its own, no shell; stdin from
/// /dev/null; the scrubbed environment (names matching
/// `/KEY|PASSWORD|SECRET|TOKEN/i` or starting with `DSH_` in any case
/// dropped) with none of the bash executor's overlay; no executor
/// deadline (only the caller's signal ends it: SIGTERM to the group, then
/// SIGKILL `grace_ms` later); after exit, draining the pipes waits at
/// most `grace_ms`; stdout kept up to `BashSpec::stdout_max_bytes`
/// (truncated past it), stderr's last `stderr_max_bytes` bytes kept. A
/// spawn that fails (no such program, an unusable working directory, a
/// NUL byte) is [`BashError::Spawn`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SubprocessRun {
    /// SIGTERM to SIGKILL grace, and the bound on draining after exit, ms.
    pub grace_ms: u64,
    /// How many trailing bytes of stderr are kept.
    pub stderr_max_bytes: u64,
}

/// One captured stream: its text (the tail when truncated), whether bytes
/// were dropped, and optionally a file holding the whole stream.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CollectedOutput {
    /// The captured text (the tail window when truncated).
    pub text: String,
    /// Whether more was written than was kept.
    pub truncated: bool,
    /// The executor's spill file of the stream, if it kept one.
    pub spill_path: Option<PathBuf>,
}

impl CollectedOutput {
    /// A stream captured whole.
    pub fn complete(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            truncated: false,
            spill_path: None,
        }
    }
}

/// How a command ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BashRunResult {
    /// `None` when the process died from a signal.
    pub exit_code: Option<i32>,
    /// Terminating signal name, e.g. `SIGTERM`.
    pub signal: Option<String>,
    /// The executor's own timeout was the first cause of the kill.
    pub timed_out: bool,
    /// The caller's signal was the first cause of the kill.
    pub aborted: bool,
    /// The timeout the run had.
    pub timeout_ms: u64,
    /// The captured stdout.
    pub stdout: CollectedOutput,
    /// The captured stderr.
    pub stderr: CollectedOutput,
}

/// What a capped run ([`RunMode::over_cap`]) does once stdout outgrows
/// `spec.stdout_max_bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverCap {
    /// Keep reading to the end, keeping none of it: the result is exactly
    /// an uncapped run's except that a truncated stdout has empty text and
    /// no spill.
    Drain,
    /// Stop reading and end the command: [`CappedRun::StdoutOverCap`].
    Stop,
}

/// How one [`BashExecutor::run`] treats stdout: the over-cap rule, and
/// where stdout may go instead of into the result.
pub struct RunMode {
    /// `None`: stdout is kept as stderr is (its tail, and a spill file of
    /// the whole stream), for a caller that may read a truncated stdout.
    /// `Some`: the caller uses stdout only when it is complete within
    /// `spec.stdout_max_bytes` (it never reads a truncated stdout's text
    /// or spill file): the executor may then keep nothing past the budget,
    /// and with [`OverCap::Stop`] end the command as soon as stdout
    /// outgrows it ([`CappedRun::StdoutOverCap`]).
    pub over_cap: Option<OverCap>,
    /// For a capped run, a caller that reads stdout as it arrives: the
    /// executor may hand every byte within the budget to this sink in
    /// order instead of keeping it, and then says so
    /// ([`RunOutcome::to_sink`]) with an empty stdout text (a stdout that
    /// outgrows the budget is reported truncated, and the sink has then
    /// seen only a prefix). An uncapped run never streams.
    pub sink: Option<Box<dyn StdoutSink>>,
}

impl RunMode {
    /// An uncapped run: stdout kept as stderr is.
    pub fn whole() -> Self {
        Self {
            over_cap: None,
            sink: None,
        }
    }

    /// A capped run keeping stdout in the result.
    pub fn capped(over_cap: OverCap) -> Self {
        Self {
            over_cap: Some(over_cap),
            sink: None,
        }
    }

    /// A capped run offering stdout to `sink` as it arrives.
    pub fn streamed(over_cap: OverCap, sink: Box<dyn StdoutSink>) -> Self {
        Self {
            over_cap: Some(over_cap),
            sink: Some(sink),
        }
    }

    /// The outcome of a run that kept stdout in its result (it never
    /// streams): `run`, with this mode's sink handed back unused.
    pub fn kept(self, run: CappedRun) -> RunOutcome {
        RunOutcome {
            run,
            to_sink: false,
            sink: self.sink,
        }
    }
}

impl std::fmt::Debug for RunMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunMode")
            .field("over_cap", &self.over_cap)
            .field("sink", &self.sink.is_some())
            .finish()
    }
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CappedRun {
    /// The command ended (or was killed by a timeout or an abort).
    Finished(BashRunResult),
    /// A capped run with [`OverCap::Stop`]: stdout outgrew
    /// `spec.stdout_max_bytes` while the command still ran; the executor
    /// stopped reading, killed the process group, and kept nothing of the
    /// streams.
    StdoutOverCap,
}

impl CappedRun {
    /// The result of a run that finished; `None` for one stopped at the
    /// cap.
    pub fn finished(self) -> Option<BashRunResult> {
        match self {
            Self::Finished(result) => Some(result),
            Self::StdoutOverCap => None,
        }
    }
}

/// How a [`BashExecutor::run`] ended, where its stdout went, and the
/// mode's sink handed back.
pub struct RunOutcome {
    /// How the run ended.
    pub run: CappedRun,
    /// Whether the stdout within the budget went to the sink (the result's
    /// stdout text is then empty) rather than into the result.
    pub to_sink: bool,
    /// The mode's sink, with everything written to it; `None` when the
    /// mode had none, or the run lost it (it stopped at the cap, or its
    /// reader failed).
    pub sink: Option<Box<dyn StdoutSink>>,
}

impl std::fmt::Debug for RunOutcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunOutcome")
            .field("run", &self.run)
            .field("to_sink", &self.to_sink)
            .field("sink", &self.sink.is_some())
            .finish()
    }
}

/// Receives a command's stdout in order as it arrives
/// ([`RunMode::sink`]); owned by the executor's reader for the run and
/// handed back after it ([`RunOutcome::sink`]), so that a caller takes
/// its own type back (`Box<dyn Any>` by upcasting, then `downcast`).
pub trait StdoutSink: std::any::Any + Send {
    /// Takes the next bytes of stdout.
    fn write(&mut self, bytes: &[u8]);
}

/// Infrastructure failures: the only ways `resolve`/`run` fail.
#[derive(Debug, Error)]
pub enum BashError {
    #[error("{0}")]
    /// `resolve` rejected the request.
    InvalidRequest(String),
    #[error("aborted before spawn: {0}")]
    /// The signal was cancelled before the process started.
    AbortedBeforeSpawn(String),
    /// Spawning failed (missing shell, unusable working directory, a NUL
    /// byte in the command): `spawn bash ENOENT` like the original.
    #[error("spawn bash {}", errno_name(.0))]
    Spawn(std::io::Error),
    #[error("{0}")]
    /// Any other infrastructure failure.
    Other(String),
}

fn errno_name(e: &std::io::Error) -> String {
    match e.raw_os_error() {
        Some(code) => errno::errno_name(code).to_owned(),
        None => e.to_string(),
    }
}

/// The executor seam. Implementations: `fs-search-exec`'s executors;
/// tests use fakes to inject faults.
#[async_trait]
pub trait BashExecutor: Send + Sync {
    /// Applies defaults and caps; may reject an invalid request.
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError>;
    /// Runs the command as `mode` says (the over-cap rule, an optional
    /// stdout sink), and hands the mode's sink back. Non-zero exits,
    /// timeouts and aborts resolve with a result; only infrastructure
    /// failures are errors.
    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError>;

    /// Called once the caller has consumed `result` (the search tools
    /// never read a spill file): the executor may delete the result's
    /// spill files. The default keeps them.
    fn release(&self, _result: &BashRunResult) {}

    /// Starts a background process. The search tools never call it; the
    /// local executor does not offer it.
    fn start(&self, _spec: BashSpec) -> Result<(), BashError> {
        Err(BashError::Other(
            "background processes are not supported by this executor".to_owned(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spawn_errors_read_like_node() {
        let e = BashError::Spawn(std::io::Error::from_raw_os_error(2));
        assert_eq!(e.to_string(), "spawn bash ENOENT");
        let e = BashError::Spawn(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "nul byte",
        ));
        assert_eq!(e.to_string(), "spawn bash nul byte");
    }
}
