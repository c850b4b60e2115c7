//! The launcher seam of the local executor: what a run starts on when
//! it is not `bash -c` here — a sandbox (`sandbox/`) or a session on
//! another machine (`ssh.rs`) — while the executor keeps everything else:
//! the scrubbed environment, its own process group around the launcher,
//! the timeout, the kill path and the output caps.
//!
//! Per run, a launcher says what the run starts on ([`Launch`]): a
//! program whose argv goes before `bash -c COMMAND` ([`LaunchPrefix`];
//! the child is then `PROGRAM ARGS… bash -c COMMAND`, with the executor's
//! environment, in `spec.workdir` on this machine, in a process group of
//! its own; `bash` is named bare: the launcher finds it on the child's
//! `PATH` in its sandbox), or an agent of a pool (`agent/`) that runs it
//! there. A launcher that cannot run a spec (a working directory it does
//! not serve) fails the run before anything starts. When the command
//! ended by itself (no timeout, abort or cap stop), [`Launcher::finish`]
//! reads the launcher's exit as the command's: a launcher that reports a
//! command's death by signal N as exit 128+N turns it back into that
//! signal, and one that failed before the command started says so as an
//! error.
//!
//! Crate-private: the agents are this crate's, and so is every launcher.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt::Debug;
use std::path::PathBuf;
use std::sync::Arc;

use nix::sys::signal::Signal;

use super::agent::{AgentCall, AgentPool};
use fs_search_engine::bash::{BashError, BashRunResult, BashSpec};

/// The program and arguments that go before `['bash', '-c', command]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LaunchPrefix {
    /// The launcher's program, best by absolute path (so the spawn need
    /// not search `PATH`).
    pub(crate) program: PathBuf,
    /// Its arguments, ending where `bash` starts (e.g. with `--`).
    pub(crate) args: Vec<OsString>,
}

/// What one run starts on.
#[derive(Debug)]
pub(crate) enum Launch {
    /// The launcher's program, started for this run before `bash -c`.
    Prefix(LaunchPrefix),
    /// An agent of the pool, kept between runs, running the call.
    Agent(Arc<AgentPool>, AgentCall),
}

/// Starts the local executor's `bash -c` through another program.
pub(crate) trait Launcher: Debug + Send + Sync {
    /// What `spec`, whose child environment is `env` (already scrubbed and
    /// overlaid), starts on. An error fails the run before any process
    /// starts.
    fn launch(
        &self,
        spec: &BashSpec,
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<Launch, BashError>;

    /// Whether this process's variable `name` reaches the command (a
    /// sandbox passes an allowlist). The default passes every one the
    /// local executor does.
    fn inherits(&self, _name: &std::ffi::OsStr) -> bool {
        true
    }

    /// Whether the programs a run names are this machine's (a sandbox's
    /// are), so that the executor resolves an argv's `rg` here; the
    /// default says they are.
    fn runs_local_programs(&self) -> bool {
        true
    }

    /// The result of a command that ended by itself, as the launcher's
    /// exit tells it. The default keeps it as it is.
    fn finish(&self, result: BashRunResult) -> Result<BashRunResult, BashError> {
        Ok(result)
    }
}

/// A signal's name (`SIGTERM`), or `SIG<n>` for a number with none.
pub(crate) fn signal_name(raw: i32) -> String {
    Signal::try_from(raw)
        .map(|s| s.as_str().to_owned())
        .unwrap_or_else(|_| format!("SIG{raw}"))
}

/// For a launcher that reports a command's death by signal N as exit
/// 128+N (as bash and bubblewrap do): that exit read back as the signal.
/// Exits above 128 that name no signal stay exits.
pub(crate) fn exit_as_signal(mut result: BashRunResult) -> BashRunResult {
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
