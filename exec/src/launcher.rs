//! The launcher seam of the local executor: a program that starts
//! `['bash', '-c', command]` for it — a sandbox (`sandbox.rs`), or a remote
//! shell — while the executor keeps everything else: the scrubbed
//! environment, its own process group around the launcher, the timeout,
//! the kill path and the output caps.
//!
//! A launcher gives, per run, the argv prefix put in front of
//! `bash -c COMMAND` ([`Launcher::prefix`]): the child is then
//! `PROGRAM ARGS… bash -c COMMAND`, with the executor's environment, in
//! `spec.workdir` on this machine, in a process group of its own. `bash`
//! is named bare: the launcher finds it (on the child's `PATH`, in its
//! sandbox or on its remote host). A launcher that cannot run a spec
//! (a working directory it does not serve) fails the run before anything
//! starts. When the command ended by itself (no timeout, abort or cap
//! stop), [`Launcher::finish`] reads the launcher's exit as the command's:
//! a launcher that reports a command's death by signal N as exit 128+N
//! turns it back into that signal, and one that failed before the command
//! started says so as an error.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Debug;
use std::path::PathBuf;
use std::time::Duration;

use async_trait::async_trait;
use nix::sys::signal::Signal;

use super::agent::{AgentCall, AgentPool};
use fs_search_engine::bash::{BashError, BashRunResult, BashSpec};

/// The program and arguments that go before `['bash', '-c', command]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPrefix {
    /// The launcher's program, best by absolute path (so the spawn need
    /// not search `PATH`).
    pub program: PathBuf,
    /// Its arguments, ending where `bash` starts (e.g. with `--`).
    pub args: Vec<OsString>,
}

/// Starts the local executor's `bash -c` through another program.
pub trait Launcher: Debug + Send + Sync {
    /// The prefix for `spec`, whose child environment is `env` (already
    /// scrubbed and overlaid). An error fails the run before any process
    /// starts.
    fn prefix(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<LaunchPrefix, BashError>;

    /// Whether this process's variable `name` reaches the command (a
    /// sandbox passes an allowlist). The default passes every one the
    /// local executor does.
    fn inherits(&self, _name: &std::ffi::OsStr) -> bool {
        true
    }

    /// The result of a command that ended by itself, as the launcher's
    /// exit tells it. The default keeps it as it is.
    fn finish(&self, result: BashRunResult) -> Result<BashRunResult, BashError> {
        Ok(result)
    }

    /// For a launcher that runs the command on another machine (`ssh.rs`):
    /// how to start it there and end its process group there. `None` (the
    /// default) runs it here, through [`Launcher::prefix`].
    fn remote(&self) -> Option<&dyn RemoteLauncher> {
        None
    }

    /// For a launcher that keeps agents (`agent/`): the pool and the call
    /// that runs `spec` (whose child environment is `env`) on one of them.
    /// `None` (the default) starts the launcher's program for this run.
    fn agent_call(
        &self,
        _spec: &BashSpec,
        _env: &BTreeMap<OsString, OsString>,
    ) -> Option<(std::sync::Arc<AgentPool>, AgentCall)> {
        None
    }
}

/// The prefix of a remote launcher's stderr line that carries the id of
/// the command's process group on the other machine.
pub const REMOTE_GROUP_LINE: &str = "\u{1}fs-search-remote-pgid ";

/// A launcher whose command runs on another machine, where this
/// executor's process group does not reach: ending the local program
/// (an `ssh` client) does not end the command.
///
/// The local program runs in the local executor's process group with its
/// scrubbed environment, but not in `spec.workdir` (a path on the other
/// machine). Its first stderr line, when it starts with
/// [`REMOTE_GROUP_LINE`], is the launcher's own, not the command's: it
/// says the command started over there. Each run has a name
/// ([`RemoteRun::id`]) by which the kill path ends it
/// ([`RemoteLauncher::end_run`]) whether or not it has started yet.
#[async_trait]
pub trait RemoteLauncher: Debug + Send + Sync {
    /// The whole command line that runs `['bash', '-c', spec.command]`
    /// on the other machine, in `spec.workdir` there, and the run's name.
    fn command_line(&self, spec: &BashSpec) -> Result<RemoteRun, BashError>;

    /// Ends run `id` over there: SIGTERM to its process group, SIGKILL
    /// once `grace` is over if a member is still alive; a run that has not
    /// started yet never will. Returns the last signal sent (`None`: the
    /// run had not started), or an error when the other machine cannot be
    /// reached.
    async fn end_run(&self, id: &str, grace: Duration) -> Result<Option<Signal>, String>;

    /// Ends run `id` as [`RemoteLauncher::end_run`] does, in the
    /// background: its run was dropped before it ended, so nothing waits.
    fn abandon(&self, id: &str);

    /// The result of a command that ended by itself; `started` says
    /// whether the group line arrived (the command started over there).
    fn finish(&self, result: BashRunResult, started: bool) -> Result<BashRunResult, BashError>;
}

/// How a remote launcher starts one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteRun {
    /// The local program and its arguments.
    pub line: LaunchPrefix,
    /// The run's name, unique to the launcher, for [`RemoteLauncher::end_run`].
    pub id: String,
}

/// A signal's name (`SIGTERM`), or `SIG<n>` for a number with none.
pub(super) fn signal_name(raw: i32) -> String {
    Signal::try_from(raw)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("SIG{raw}"))
}

/// For a launcher that reports a command's death by signal N as exit
/// 128+N (as bash and bubblewrap do): that exit read back as the signal.
/// Exits above 128 that name no signal stay exits.
pub fn exit_as_signal(mut result: BashRunResult) -> BashRunResult {
    if let Some(code) = result.exit_code
        && let Some(raw) = code.checked_sub(128)
        && Signal::try_from(raw).is_ok()
    {
        result.exit_code = None;
        result.signal = Some(signal_name(raw));
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exited(code: i32) -> BashRunResult {
        BashRunResult {
            exit_code: Some(code),
            ..BashRunResult::default()
        }
    }

    #[test]
    fn an_exit_of_128_plus_a_signal_number_reads_as_that_signal() {
        let killed = exit_as_signal(exited(128 + 15));
        assert_eq!(
            (killed.exit_code, killed.signal.as_deref()),
            (None, Some("SIGTERM"))
        );
        for code in [0, 1, 2, 127, 128, 128 + 200] {
            let kept = exit_as_signal(exited(code));
            assert_eq!((kept.exit_code, kept.signal), (Some(code), None), "{code}");
        }
    }
}
