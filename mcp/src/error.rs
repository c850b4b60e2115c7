//! What keeps `workbench mcp` from serving (exit 2, the message on
//! stderr): the workspace's setup, the `--listen` address, the token and
//! the Origin/Host gate, the limits, the `--record` file.

use std::net::SocketAddr;

use thiserror::Error;

use fs_search_process::SetupError;

use super::auth::GateError;
use super::connections::LimitsError;
use super::shared_record_file::{RecordBoundError, RecordFileError};

/// What kept [`crate::run`] from serving: its caller reports the message.
#[derive(Debug, Error)]
#[error(transparent)]
pub struct Error(#[from] McpError);

/// A failure before (or instead of) serving.
#[derive(Debug, Error)]
pub(crate) enum McpError {
    /// The workdir, config, spill root or engine load.
    #[error(transparent)]
    Setup(#[from] SetupError),
    /// The sandbox `--listen` on a non-loopback address turns on cannot
    /// start: nothing is served unconfined instead.
    #[error(
        "{0} (--listen on a non-loopback address runs calls sandboxed by default; --no-sandbox opts out)"
    )]
    DefaultSandbox(Box<McpError>),
    #[error("--listen {listen}: {source} (give ADDR:PORT, e.g. 127.0.0.1:8080)")]
    Resolve {
        listen: String,
        source: std::io::Error,
    },
    #[error("--listen {listen}: resolves to no address")]
    NoAddress { listen: String },
    #[error("--listen {listen}: cannot listen on {addr}: {source}")]
    Bind {
        listen: String,
        addr: SocketAddr,
        source: std::io::Error,
    },
    /// The bound socket's address cannot be read.
    #[error("--listen: {0}")]
    Bound(std::io::Error),
    /// The token file, an `--allow-origin` or an `--allow-host`.
    #[error(transparent)]
    Gate(#[from] GateError),
    /// A limit's environment variable.
    #[error(transparent)]
    Limits(#[from] LimitsError),
    /// `WORKBENCH_RECORD_MAX_BYTES` is not a usable bound.
    #[error(transparent)]
    RecordBound(RecordBoundError),
    /// Neither `--workdir` nor `--replay` was given.
    #[error("--workdir is required (or --replay TRANSCRIPT)")]
    NoWorkdir,
    /// A `--replay` transcript cannot be served (its message names the
    /// file and line).
    #[error(transparent)]
    Replay(#[from] super::serve_recorded::load::ReplayError),
    /// The `--record` file cannot be opened.
    #[error("--record {0}")]
    Record(RecordFileError),
}
