//! The spill store seam (CONTRACT §1.4): persists a formatted result and
//! returns a model-facing locator and retrieval hint.

mod local;

use async_trait::async_trait;
use serde::Serialize;
use thiserror::Error;

pub use local::{LocalSpillStore, RETRIEVAL_HINT, encode_segment};

/// What to save, for whom, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveTextSpill {
    /// The owning session id (storage namespace).
    pub session_id: String,
    pub tool_name: String,
    pub call_id: String,
    pub label: String,
    /// A file name hint; the backend sanitises it.
    pub suggested_name: String,
    pub content: String,
}

/// Where a saved text lives, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillRef {
    pub locator: String,
    /// UTF-8 length of the saved content.
    pub bytes: u64,
    pub retrieval_hint: String,
}

/// A real storage failure; callers degrade, never fail the call.
#[derive(Debug, Error)]
pub enum SpillError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Other(String),
}

#[async_trait]
pub trait SpillStore: Send + Sync {
    async fn save_text(&self, input: SaveTextSpill) -> Result<SpillRef, SpillError>;
}
