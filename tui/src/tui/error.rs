//! The failures that keep the workbench from starting or end it.

use thiserror::Error;

use crate::setup::SetupError;

/// Failures that keep the workbench from starting or end it.
#[derive(Debug, Error)]
pub enum TuiError {
    #[error("{0}")]
    Setup(#[from] SetupError),
    #[error("--workdir {0}: not a directory")]
    Workdir(String),
    #[error("cannot create the spill root: {0}")]
    SpillRoot(std::io::Error),
    #[error("terminal: {0}")]
    Terminal(#[from] std::io::Error),
}
