//! Logging to a file, never to the terminal: tracing events (the engine's
//! warnings included) go through tracing-appender's non-blocking writer
//! to a file of this process's own, `workbench-<unix seconds>-<pid>.log`
//! in the state directory ([`crate::user_dirs::log_dir`]), so concurrent
//! processes never interleave; at start, log files older than the
//! retention period are pruned ([`crate::prune::logs`]). The returned
//! guard flushes on drop and must live as long as the program.

use std::path::PathBuf;
use std::time::SystemTime;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;

/// The installed logger: its file and the guard that flushes it.
pub struct Logging {
    pub path: PathBuf,
    _guard: WorkerGuard,
}

/// The log file name of the process `pid` started at `started`.
pub(crate) fn file_name(started: SystemTime, pid: u32) -> String {
    let seconds = started
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format!("workbench-{seconds}-{pid}.log")
}

/// Prunes the log directory of files last written before `cutoff`, then
/// installs the file logger (level from `WORKBENCH_LOG`, default info).
/// `None` when the file cannot be opened: the workbench runs unlogged
/// rather than print over its own screen.
pub fn init(cutoff: SystemTime) -> Option<Logging> {
    let dir = crate::user_dirs::log_dir();
    crate::user_dirs::ensure_private(&dir).ok()?;
    let pruned = crate::prune::logs(&dir, cutoff);
    let name = file_name(SystemTime::now(), std::process::id());
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::NEVER)
        .filename_prefix(&name)
        .build(&dir)
        .ok()?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter =
        EnvFilter::try_from_env("WORKBENCH_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    let subscriber = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .finish();
    tracing::subscriber::set_global_default(subscriber).ok()?;
    // The `log` records of the crates below (rmcp's, ignore's) follow.
    crate::log_records::install();
    tracing::debug!(?pruned, "old log files pruned");
    Some(Logging {
        path: dir.join(name),
        _guard: guard,
    })
}
