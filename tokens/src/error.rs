//! The ways loading a tokenizer or encoding a text can fail.

use std::path::PathBuf;

use thiserror::Error;

/// A tokenizer failure. The file variants name the file.
#[derive(Debug, Error)]
pub enum Error {
    /// The tokenizer file is missing or unreadable.
    #[error("cannot read tokenizer file {}: {source}", path.display())]
    Read {
        /// The file given.
        path: PathBuf,
        /// Why it could not be read.
        source: std::io::Error,
    },
    /// The file is not a usable Hugging Face `tokenizer.json`.
    #[error("invalid tokenizer file {}: {reason}", path.display())]
    Invalid {
        /// The file given.
        path: PathBuf,
        /// What the tokenizers library reported.
        reason: String,
    },
    /// The embedded tokenizer data did not decompress or parse (a build
    /// defect, not a user error).
    #[error("embedded tokenizer data is unusable: {reason}")]
    Embedded {
        /// What failed.
        reason: String,
    },
    /// A text could not be encoded.
    #[error("cannot encode text: {reason}")]
    Encode {
        /// What the tokenizers library reported.
        reason: String,
    },
}
