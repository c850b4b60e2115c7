//! What a command fails with ([`Error`]), and how the `workbench` binary
//! reports it: once, on stderr, as `workbench: MESSAGE` or, for a command
//! that names itself, `workbench COMMAND: MESSAGE`, exiting 2 (128 + N
//! when signal N stopped it). `workbench lens`'s own failures are here too
//! ([`LensCommandError`]), so the commands depend on this module, not it on
//! them.

use fs_search_lens::LensError;
use fs_search_process::{SetupError, exit};
use fs_search_transcript::AblateError;
use fs_search_transcript::ExplainError;
use fs_search_transcript::TranscriptError;
use thiserror::Error;

use crate::interactive::error::TuiError;

/// A command's failure, reported by [`crate::run`].
#[derive(Debug, Error)]
pub(crate) enum Error {
    /// Setting up `call`, `explain`, `surface` or `lens`: a flag, the
    /// workdir, the executor, the engine (`workbench: …`).
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The interactive workbench (`workbench: …`).
    #[error(transparent)]
    Interactive(#[from] TuiError),
    /// `workbench ablate` (`workbench ablate: …`).
    #[error(transparent)]
    Ablate(#[from] AblateError),
    /// `workbench replay`, `record` or `freeze` (`workbench COMMAND: …`).
    #[error("{source}")]
    Transcript {
        /// The command's name.
        command: &'static str,
        /// What failed.
        source: TranscriptError,
    },
    /// `--host` of `call` or `replay` names no host's lens.
    #[error("--host: {source}")]
    Host {
        /// The command's name.
        command: &'static str,
        /// Why the name is not a host's.
        source: LensError,
    },
    /// `workbench lens` (`workbench lens: …`).
    #[error(transparent)]
    Lens(#[from] LensCommandError),
    /// `workbench explain`: nothing to explain (`workbench: explain: …`).
    #[error("explain: {0}")]
    Explain(#[source] ExplainError),
    /// `workbench explain --json`: the report cannot be written as JSON.
    #[error("explain: {0}")]
    ExplainJson(#[source] serde_json::Error),
}

impl Error {
    /// The command a message names after `workbench`, if any.
    pub(crate) fn command(&self) -> Option<&'static str> {
        match self {
            Self::Setup(_) | Self::Interactive(_) | Self::Explain(_) | Self::ExplainJson(_) => None,
            Self::Ablate(_) => Some("ablate"),
            Self::Transcript { command, .. } => Some(command),
            Self::Host { command, .. } => Some(command),
            Self::Lens(_) => Some("lens"),
        }
    }

    /// The exit status: 128 + N for a stop by signal N, else 2.
    pub(crate) fn exit_status(&self) -> u8 {
        match self {
            Self::Ablate(AblateError::Transcript(TranscriptError::Stopped(signal)))
            | Self::Transcript {
                source: TranscriptError::Stopped(signal),
                ..
            } => exit::signalled(*signal),
            _ => exit::ERROR,
        }
    }
}

/// Why `workbench lens` cannot run.
#[derive(Debug, Error)]
pub(crate) enum LensCommandError {
    #[error(transparent)]
    Lens(#[from] LensError),
    #[error("{path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Setup(#[from] SetupError),
}
