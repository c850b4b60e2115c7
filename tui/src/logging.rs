//! Logging to a file, never to the terminal: tracing events (the engine's
//! warnings included) go through tracing-appender's non-blocking writer
//! to `workbench.log` in the state directory. The returned guard flushes
//! on drop and must live as long as the program.

use std::path::PathBuf;

use tracing_appender::non_blocking::WorkerGuard;
use tracing_appender::rolling::{RollingFileAppender, Rotation};
use tracing_subscriber::EnvFilter;

/// The log file name.
pub const LOG_FILE: &str = "workbench.log";

/// The installed logger: its file and the guard that flushes it.
pub struct Logging {
    pub path: PathBuf,
    _guard: WorkerGuard,
}

/// `$XDG_STATE_HOME/fs-search-workbench`, else
/// `$HOME/.local/state/fs-search-workbench`, else the temp dir's.
pub fn log_dir() -> PathBuf {
    let base = std::env::var_os("XDG_STATE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|h| PathBuf::from(h).join(".local/state"))
        })
        .unwrap_or_else(std::env::temp_dir);
    base.join("fs-search-workbench")
}

/// Installs the file logger (level from `WORKBENCH_LOG`, default info).
/// `None` when the file cannot be opened: the workbench runs unlogged
/// rather than print over its own screen.
pub fn init() -> Option<Logging> {
    let dir = log_dir();
    std::fs::create_dir_all(&dir).ok()?;
    let appender = RollingFileAppender::builder()
        .rotation(Rotation::NEVER)
        .filename_prefix(LOG_FILE)
        .build(&dir)
        .ok()?;
    let (writer, guard) = tracing_appender::non_blocking(appender);
    let filter =
        EnvFilter::try_from_env("WORKBENCH_LOG").unwrap_or_else(|_| EnvFilter::new("info"));
    tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .with_env_filter(filter)
        .try_init()
        .ok()?;
    Some(Logging {
        path: dir.join(LOG_FILE),
        _guard: guard,
    })
}
