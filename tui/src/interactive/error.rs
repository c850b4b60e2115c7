//! The failures that keep the workbench from starting or end it.

use thiserror::Error;

use fs_search_process::SetupError;

/// Failures that keep the workbench from starting or end it.
#[derive(Debug, Error)]
pub(crate) enum TuiError {
    #[error("{0}")]
    Setup(#[from] SetupError),
    /// The current directory (the default workdir) cannot be read.
    #[error("cannot read the current directory: {0}")]
    CurrentDir(std::io::Error),
    /// The workdir cannot be made absolute.
    #[error("--workdir {path}: cannot be made absolute: {source}")]
    Absolute {
        path: String,
        source: std::io::Error,
    },
    /// The terminal cannot be set up, drawn on or read.
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}
