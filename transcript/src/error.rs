//! Everything that can stop a transcript from being read, materialised or
//! replayed ([`EngineError`]: a record whose engine cannot be set up).
//! Each message names the file (and the line where there is one);
//! a changed record is not an error but a difference (see `replay`).

use std::path::PathBuf;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum TranscriptError {
    /// A transcript or calls file that does not follow the format.
    #[error("{file}:{line}: {message}")]
    Parse {
        file: String,
        line: usize,
        message: String,
    },
    /// A fixture tree manifest that cannot be used.
    #[error("{file}: {message}")]
    Manifest { file: String, message: String },
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The engine could not be set up for a record (config, executor, load).
    #[error("{file}:{line}: record \"{name}\": {source}")]
    Setup {
        file: String,
        line: usize,
        name: String,
        source: EngineError,
    },
    #[error("{0}")]
    Other(String),
    /// A signal stopped the run (see `fs_search_process`'s `signals`); its number.
    #[error("stopped by signal {0}")]
    Stopped(i32),
}

impl TranscriptError {
    /// `Stopped` when a signal has stopped the process.
    pub(crate) fn check_stopped() -> Result<(), Self> {
        match fs_search_process::stopped_by() {
            Some(signal) => Err(Self::Stopped(signal)),
            None => Ok(()),
        }
    }

    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// Why the fixture engine cannot run a record's call: a setup failure,
/// never a tool error (those are results).
#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The executor refuses its settings (e.g. `executorTimeoutMs`).
    #[error("{0}")]
    Executor(fs_search_process::ExecutorError),
    /// rg is not on PATH: nothing registered (the load's warning).
    #[error("{0}")]
    RgMissing(String),
    /// The executor's `PATH` cannot put another rg's directory first.
    #[error("{0}")]
    Path(String),
    #[error("the plugin stayed pending")]
    Pending,
    #[error("the plugin did not load: {0}")]
    Load(fs_search_engine::LoadError),
    #[error("the registry vanished")]
    Vanished,
    /// An ablation variant's config (`workbench ablate --set`) is invalid.
    #[error("variant {variant}: {source}")]
    Variant {
        variant: String,
        source: fs_search_engine::ConfigError,
    },
}
