//! The local executor's run of one command on an agent: the same captures,
//! caps, timeout and cancellation as a run of its own process, with the
//! agent's framed pipes for the command's and `term`/`kill` requests for
//! its process group (module doc of `agent`).

use std::ffi::OsString;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe::{Receiver, Sender};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::framed::{Ended, Framed, Trailer};
use super::{Agent, AgentCall, AgentPool, Ends, nonce, request};
use crate::LocalBashExecutor;
use crate::capture::{Stream, collect};
use crate::group::KILL_SETTLE;
use crate::launcher::Launcher;
use crate::local::{RunPlan, finish_captures, past_cap};
use fs_search_engine::bash::{BashError, BashRunResult, BashSpec, CappedRun, OverCap, StdoutSink};

/// How long a spent agent, its stdin closed, is given to exit.
const AGENT_EXIT_BOUND: Duration = Duration::from_secs(2);

/// Why the executor ended the command.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Cause {
    Timeout,
    Abort,
    StdoutCap,
}

/// How the command ended, by the trailer.
enum Trailed {
    Exit(i32),
    NoWorkdir,
}

fn spawn_error(e: std::io::Error) -> BashError {
    BashError::Spawn(e)
}

fn parse_trailer(line: &[u8]) -> Option<Trailed> {
    let text = std::str::from_utf8(line).ok()?.trim();
    match text {
        "nowd" => Some(Trailed::NoWorkdir),
        status => status.parse().ok().map(Trailed::Exit),
    }
}

/// An agent lent to one run; dropped before it is given back, it is
/// spent (its group killed).
struct Lent {
    agent: Agent,
    stdin: Sender,
}

impl Lent {
    /// Has the agent send the command's group `signal` (SIGTERM or
    /// SIGKILL), as its pool's agents are told.
    async fn end_command(&mut self, ends: Ends, signal: Signal) {
        match ends {
            Ends::Lines => {
                let line: &[u8] = if signal == Signal::SIGTERM {
                    b"term\n"
                } else {
                    b"kill\n"
                };
                let _ = self.stdin.write_all(line).await;
            }
            Ends::Signals => {
                let own = if signal == Signal::SIGTERM {
                    Signal::SIGUSR1
                } else {
                    Signal::SIGUSR2
                };
                self.agent.signal_shell(own);
            }
        }
    }

    /// Ends the command early: SIGTERM, then SIGKILL once `grace` is over
    /// with no trailer, which is awaited at most [`KILL_SETTLE`] more.
    /// The last signal sent, and the trailer if it came.
    async fn end_early(
        &mut self,
        ends: Ends,
        grace: Duration,
        stdout_back: &mut std::pin::Pin<&mut oneshot::Receiver<Ended>>,
    ) -> (
        Option<Signal>,
        Option<Result<Ended, oneshot::error::RecvError>>,
    ) {
        let mut sent = None;
        for (signal, bound) in [(Signal::SIGTERM, grace), (Signal::SIGKILL, KILL_SETTLE)] {
            self.end_command(ends, signal).await;
            sent = Some(signal);
            if let Ok(ended) = tokio::time::timeout(bound, &mut *stdout_back).await {
                return (sent, Some(ended));
            }
        }
        (sent, None)
    }

    /// The exit status of an agent that died (waited for at most
    /// `bound`, then killed); the agent is spent.
    async fn spent_status(self, bound: Duration) -> Option<std::process::ExitStatus> {
        let Self { mut agent, stdin } = self;
        drop(stdin);
        let status = agent.exit_status(bound).await;
        if status.is_none() {
            agent.end(Duration::ZERO).await;
        }
        status
    }
}

impl LocalBashExecutor {
    /// `spec` run as `call` on an agent of `pool` (module doc).
    pub(crate) async fn run_on_agent(
        &self,
        launcher: &dyn Launcher,
        pool: &AgentPool,
        call: AgentCall,
        spec: BashSpec,
        capped: Option<OverCap>,
        sink: Option<Box<dyn StdoutSink>>,
    ) -> Result<(CappedRun, Option<Box<dyn StdoutSink>>), BashError> {
        let signal = spec.signal.clone().unwrap_or_default();
        let plan: RunPlan = self.plan(&spec);
        let mut agent = pool.take().map_err(spawn_error)?;
        let pid = agent.pid();
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (agent.stdin.take(), agent.stdout.take(), agent.stderr.take())
        else {
            return Err(BashError::Other("an agent without its pipes".to_owned()));
        };
        let stdin = Sender::from_owned_fd(stdin).map_err(spawn_error)?;
        let stdout = Receiver::from_owned_fd(stdout).map_err(spawn_error)?;
        let stderr = Receiver::from_owned_fd(stderr).map_err(spawn_error)?;
        let mut lent = Lent { agent, stdin };
        let nonce = nonce().map_err(spawn_error)?;
        // A failed write means a dead agent: its stdout ends at once and
        // the run reads as the agent's own exit below.
        let _ = lent.stdin.write_all(&request(&nonce, &call)).await;

        let (stdout, stdout_back) = Framed::new(stdout, nonce.as_bytes(), Trailer::Line);
        let (stderr, stderr_back) = Framed::new(stderr, nonce.as_bytes(), Trailer::None);
        let stop = CancellationToken::new();
        let _stop_readers_on_drop = stop.clone().drop_guard();
        let over_cap = CancellationToken::new();
        let stdout_max = usize::try_from(spec.stdout_max_bytes).unwrap_or(usize::MAX);
        let stderr_max = plan.stderr_max;
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
            tokio::spawn(async move { collect(pipe, capture, stop, past_cap).await })
        });

        let deadline = plan.deadline();
        tokio::pin!(deadline);
        tokio::pin!(stdout_back);
        let mut trailer: Option<Result<Ended, oneshot::error::RecvError>> = None;
        let cause = tokio::select! {
            biased;
            () = over_cap.cancelled() => Some(Cause::StdoutCap),
            ended = &mut stdout_back => {
                trailer = Some(ended);
                None
            }
            () = signal.cancelled() => Some(Cause::Abort),
            () = &mut deadline => Some(Cause::Timeout),
        };
        let mut sent: Option<Signal> = None;
        if let Some(cause) = cause {
            if cause == Cause::StdoutCap {
                // The reader stopped mid-stream: the agent cannot be read
                // in step again. It kills the command's group first (over
                // ssh, before the end of its session reaches it), then
                // goes itself.
                stop.cancel();
                lent.end_command(pool.ends, Signal::SIGKILL).await;
                let Lent { agent, stdin } = lent;
                drop(stdin);
                agent.end(Duration::ZERO).await;
                return Ok((CappedRun::StdoutOverCap, None));
            }
            (sent, trailer) = lent
                .end_early(pool.ends, plan.grace, &mut stdout_back)
                .await;
            if trailer.is_none() {
                // The agent does not answer: its output is not waited for.
                stop.cancel();
            }
        }

        let [stdout_task, stderr_task] = readers;
        let collected = async { (stdout_task.await, stderr_task.await) };
        tokio::pin!(collected);
        let (stdout, stderr) = match tokio::time::timeout(plan.grace, &mut collected).await {
            Ok(done) => done,
            Err(_) => {
                stop.cancel();
                collected.await
            }
        };
        let (stdout, stderr, sink) = finish_captures(stdout, stderr).await;
        let stderr_back = stderr_back.await.ok();
        let mut result = BashRunResult {
            exit_code: None,
            signal: None,
            timed_out: cause == Some(Cause::Timeout),
            aborted: cause == Some(Cause::Abort),
            timeout_ms: spec.timeout_ms,
            stdout,
            stderr,
        };
        if let Some(signal) = sent {
            // A run the executor ended takes its agent with it: the whole
            // sandbox or session goes, and with it anything the command
            // started, in its group or not.
            let Lent { agent, stdin } = lent;
            drop(stdin);
            agent.end(AGENT_EXIT_BOUND).await;
            result.signal = Some(signal.as_str().to_owned());
            return Ok((CappedRun::Finished(result), sink));
        }
        let trailed = match (trailer, stderr_back) {
            (Some(Ok(out)), Some(err)) => parse_trailer(&out.trailer).map(|how| (how, out, err)),
            _ => None,
        };
        let Some((how, out, err)) = trailed else {
            // The agent died, or lost step: its own exit stands for the
            // command's (bubblewrap's or ssh's failure, with its stderr;
            // over ssh the command may have run, and exit 255 names the
            // host).
            let status = lent.spent_status(plan.grace).await;
            use std::os::unix::process::ExitStatusExt;
            result.exit_code = status.and_then(|s| s.code());
            result.signal = status
                .and_then(|s| s.signal())
                .map(crate::launcher::signal_name);
            let result = launcher.finish(result)?;
            return Ok((CappedRun::Finished(result), sink));
        };
        // In step: the agent goes back to the pool.
        let Lent { mut agent, stdin } = lent;
        agent.stdin = stdin.into_nonblocking_fd().ok();
        agent.stdout = out.pipe.into_nonblocking_fd().ok();
        agent.stderr = err.pipe.into_nonblocking_fd().ok();
        if agent.stdin.is_some() && agent.stdout.is_some() && agent.stderr.is_some() {
            // An agent the pool does not keep is gone before the run
            // gives its slot back (`slots.rs`): the bound counts it.
            if let Some(spare) = pool.put(agent) {
                spare.end(Duration::ZERO).await;
            }
        }
        match how {
            Trailed::NoWorkdir => Err(BashError::Spawn(std::io::Error::from_raw_os_error(
                nix::libc::ENOENT,
            ))),
            Trailed::Exit(code) => {
                result.exit_code = Some(code);
                let result = launcher.finish(result)?;
                Ok((CappedRun::Finished(result), sink))
            }
        }
    }
}

/// What an agent runs for `spec`: an rc.8 subprocess run's argv (its
/// program resolved by the executor; the agent's stdin for it is
/// /dev/null), else `bash FLAGS… -c COMMAND`.
pub(crate) fn command_argv(flags: &[&str], spec: &BashSpec) -> Vec<OsString> {
    match (&spec.subprocess, &spec.argv) {
        (Some(_), Some(argv)) => argv.iter().map(OsString::from).collect(),
        _ => bash_argv(flags, &spec.command),
    }
}

/// `bash FLAGS… -c COMMAND`.
pub(crate) fn bash_argv(flags: &[&str], command: &str) -> Vec<OsString> {
    let mut argv = vec![OsString::from("bash")];
    argv.extend(flags.iter().map(OsString::from));
    argv.extend([OsString::from("-c"), OsString::from(command)]);
    argv
}
