//! The spill store seam (CONTRACT §1.4): persists a formatted result and
//! returns a model-facing locator and retrieval hint. A large result
//! arrives in pieces ([`TextPieces`]), so a store can write it as it is
//! formatted instead of holding it whole.
//!
//! Public for an implementer of [`SpillStore`]; `fs-search-exec`'s
//! `LocalSpillStore` is the local implementation. A call's saved result is named by a
//! [`SpillRef`]; a host that watches every call registers a
//! [`PostExecuteListener`], which sees a [`PostExecuteCall`] and returns a
//! [`Decision`].

pub(crate) mod post_execute;

use async_trait::async_trait;
use serde::Serialize;
use thiserror::Error;

/// Random lowercase hex of the given number of bytes: the names a store
/// (and an executor's stream spill) gives its files.
pub use crate::support::ids::random_hex;
pub use post_execute::{Accept, Decision, PostExecuteCall, PostExecuteListener};

/// What to save, for whom, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaveTextSpill {
    /// The owning session id (storage namespace).
    pub session_id: String,
    /// The tool whose result it is.
    pub tool_name: String,
    /// The call whose result it is.
    pub call_id: String,
    /// What the text is (`result`).
    pub label: String,
    /// A file name hint; the backend sanitises it.
    pub suggested_name: String,
    /// The text to save.
    pub content: String,
}

/// Where a saved text lives, as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SpillRef {
    /// Where the text is, as the model reads it.
    pub locator: String,
    /// UTF-8 length of the saved content.
    pub bytes: u64,
    /// How the model can read it back.
    pub retrieval_hint: String,
}

/// A real storage failure; callers degrade, never fail the call.
#[derive(Debug, Error)]
pub enum SpillError {
    #[error("{0}")]
    /// A file-system failure.
    Io(#[from] std::io::Error),
    #[error("{0}")]
    /// Any other failure.
    Other(String),
}

/// A text formatted on demand, one piece at a time.
pub trait TextPieces: Send {
    /// Appends the text's next piece to `out`; `false`, appending
    /// nothing, once the whole text has been given.
    fn next_piece(&mut self, out: &mut String) -> bool;
}

#[async_trait]
/// The spill store seam: where over-cap results are saved.
pub trait SpillStore: Send + Sync {
    /// Saves `input.content`; the locator names where it went.
    async fn save_text(&self, input: SaveTextSpill) -> Result<SpillRef, SpillError>;

    /// Saves `input.content` followed by every piece of `rest`, as
    /// [`save_text`](Self::save_text) saves the whole. By default the
    /// pieces are appended to `input.content` first; a store that writes
    /// as the pieces come never holds the whole text.
    async fn save_text_in_pieces(
        &self,
        mut input: SaveTextSpill,
        rest: &mut (dyn TextPieces + '_),
    ) -> Result<SpillRef, SpillError> {
        while rest.next_piece(&mut input.content) {}
        self.save_text(input).await
    }
}
