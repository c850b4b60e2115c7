//! The counting route for tokenizers with the DeepSeek V4 pipeline: the
//! same steps as `tokenizers::Tokenizer::encode_fast`, on plain string
//! slices instead of its offset-tracking `NormalizedString`s, which cost
//! most of its time.
//!
//! The steps, as the `tokenizers` crate runs them for this pipeline:
//! 1. split out the added tokens (leftmost-longest matches of their
//!    content), first those not `normalized`, then, in what is left, the
//!    `normalized` ones (the normalizer is empty, so both match the text as
//!    it is); each match is its token;
//! 2. the pre-tokenizer: three regex splits in sequence, each keeping the
//!    matches and the text between them as separate pieces (`Isolated`);
//!    `crate::split` runs them with `regex-automata`, giving the pieces
//!    `fancy-regex` gives (proof and tests there);
//! 3. byte-level: each piece's UTF-8 bytes mapped to the GPT-2 byte
//!    alphabet;
//! 4. the tokenizer's own model on each piece — once per distinct piece
//!    while a word cache has room (a deterministic model gives a piece the
//!    same ids every time).
//!
//! [`FastPath::new`] accepts a tokenizer only when its normalizer,
//! pre-tokenizer, post-processor and added tokens are exactly those the
//! steps above reproduce; any other goes through `encode_fast`. Tests
//! check both routes give the same ids on the golden corpus and on random
//! text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use aho_corasick::{AhoCorasick, MatchKind};
use serde_json::{Value, json};
use tokenizers::{Model, ModelWrapper};

use crate::split::{SPLITS, Splits};

/// The pre-tokenizer this route reproduces, as `tokenizers` serializes it.
fn deepseek_pre_tokenizer() -> Value {
    let split = |pattern: &str| json!({"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": false});
    json!({"type": "Sequence", "pretokenizers": [
        split(SPLITS[0]),
        split(SPLITS[1]),
        split(SPLITS[2]),
        {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": false},
    ]})
}

/// Added-token matching: one automaton and the ids of its patterns.
#[derive(Debug, Clone)]
struct Added {
    automaton: AhoCorasick,
    ids: Vec<u32>,
}

impl Added {
    fn new(tokens: Vec<(String, u32)>) -> Option<Option<Self>> {
        if tokens.is_empty() {
            return Some(None);
        }
        let (patterns, ids): (Vec<String>, Vec<u32>) = tokens.into_iter().unzip();
        let automaton = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(patterns)
            .ok()?;
        Some(Some(Self { automaton, ids }))
    }
}

/// How many pieces the word cache holds at most; later new pieces are
/// tokenized each time (as the `tokenizers` crate's own cache does).
const CACHE_CAPACITY: usize = 50_000;
/// Pieces longer than this (bytes) are long: the cache holds them only
/// within [`CACHE_LONG_BYTES`].
const CACHE_MAX_PIECE: usize = 256;
/// How many bytes the long pieces and their ids (4 bytes each) may take in
/// the cache. A long piece costs the BPE model about 0.5–1 ms; it comes
/// again when a page is counted again, or its spilled full result.
const CACHE_LONG_BYTES: usize = 4 << 20;

/// Pieces (before the byte-level map) and their ids.
#[derive(Debug, Default)]
struct WordCache {
    /// Hashed with `foldhash`: the keys are mostly short, and SipHash took
    /// a tenth of a warm count.
    ids: HashMap<Box<str>, Box<[u32]>, foldhash::fast::RandomState>,
    /// The bytes the long pieces and their ids take.
    long_bytes: usize,
}

impl WordCache {
    fn get(&self, piece: &str) -> Option<&[u32]> {
        self.ids.get(piece).map(|ids| &ids[..])
    }

    /// Keeps the ids of `piece` if there is room.
    fn insert(&mut self, piece: &str, ids: &[u32]) {
        if self.ids.len() >= CACHE_CAPACITY {
            return;
        }
        if piece.len() > CACHE_MAX_PIECE {
            let bytes = piece.len() + 4 * ids.len();
            if self.long_bytes + bytes > CACHE_LONG_BYTES {
                return;
            }
            self.long_bytes += bytes;
        }
        self.ids.insert(piece.into(), ids.into());
    }
}

/// The fast counting route of one tokenizer (see the module documentation).
#[derive(Debug)]
pub(crate) struct FastPath {
    not_normalized: Option<Added>,
    normalized: Option<Added>,
    /// Shared by clones, with the regex engines' caches (their lazy DFAs
    /// build states as they meet new text; a fresh set costs a few ms).
    splits: Arc<Splits>,
    bytes: [char; 256],
    /// The ids of pieces already tokenized; `None` when the model is not
    /// deterministic (BPE dropout).
    cache: Option<Mutex<WordCache>>,
}

impl Clone for FastPath {
    /// A clone starts with an empty word cache; it shares the splits.
    fn clone(&self) -> Self {
        Self {
            not_normalized: self.not_normalized.clone(),
            normalized: self.normalized.clone(),
            splits: Arc::clone(&self.splits),
            bytes: self.bytes,
            cache: self.cache.as_ref().map(|_| Mutex::default()),
        }
    }
}

/// Where a piece of text goes: straight to an added token's id, or on.
enum Piece<'t> {
    Added(u32),
    Text(&'t str),
}

impl FastPath {
    /// The route for `tokenizer`, or `None` when its pipeline is not the
    /// one this route reproduces.
    pub(crate) fn new(tokenizer: &tokenizers::Tokenizer) -> Option<Self> {
        let normalizer = serde_json::to_value(tokenizer.get_normalizer()).ok()?;
        let empty_normalizer =
            normalizer.is_null() || normalizer == json!({"type": "Sequence", "normalizers": []});
        let pre_tokenizer = serde_json::to_value(tokenizer.get_pre_tokenizer()).ok()?;
        let post_processor = serde_json::to_value(tokenizer.get_post_processor()).ok()?;
        // A byte-level post-processor only adjusts offsets.
        let ids_kept = post_processor.is_null() || post_processor["type"] == "ByteLevel";
        if !empty_normalizer
            || pre_tokenizer != deepseek_pre_tokenizer()
            || !ids_kept
            || tokenizer.get_encode_special_tokens()
        {
            return None;
        }
        let mut not_normalized = Vec::new();
        let mut normalized = Vec::new();
        for (id, token) in tokenizer.get_added_tokens_decoder() {
            if token.lstrip || token.rstrip || token.single_word {
                return None;
            }
            let list = if token.normalized {
                &mut normalized
            } else {
                &mut not_normalized
            };
            list.push((token.content, id));
        }
        let deterministic = match tokenizer.get_model() {
            ModelWrapper::BPE(bpe) => bpe.dropout.is_none_or(|p| p == 0.0),
            _ => true,
        };
        Some(Self {
            cache: deterministic.then(Mutex::default),
            not_normalized: Added::new(not_normalized)?,
            normalized: Added::new(normalized)?,
            splits: Arc::new(Splits::warmed()?),
            bytes: byte_alphabet(),
        })
    }

    /// Appends the ids of `text` to `ids` (no special tokens added).
    pub(crate) fn encode(
        &self,
        model: &ModelWrapper,
        text: &str,
        ids: &mut Vec<u32>,
    ) -> tokenizers::Result<()> {
        let mut pieces = Vec::new();
        split_added(self.not_normalized.as_ref(), text, &mut pieces);
        let mut second = Vec::with_capacity(pieces.len());
        for piece in pieces {
            match piece {
                Piece::Text(t) => split_added(self.normalized.as_ref(), t, &mut second),
                added => second.push(added),
            }
        }
        // The cache holds only ids a pure function of the piece gave, so a
        // panic elsewhere while it was locked cannot have spoilt it.
        let mut cache = self
            .cache
            .as_ref()
            .map(|c| c.lock().unwrap_or_else(PoisonError::into_inner));
        let mut mapped = String::new();
        for piece in second {
            match piece {
                Piece::Added(id) => ids.push(id),
                Piece::Text(t) => {
                    self.splits
                        .pieces(t, &mut |word: &str| -> tokenizers::Result<()> {
                            if let Some(hit) = cache.as_ref().and_then(|c| c.get(word)) {
                                ids.extend_from_slice(hit);
                                return Ok(());
                            }
                            mapped.clear();
                            mapped.extend(word.bytes().map(|b| self.bytes[usize::from(b)]));
                            let first = ids.len();
                            ids.extend(model.tokenize(&mapped)?.iter().map(|token| token.id));
                            if let Some(cache) = cache.as_deref_mut() {
                                cache.insert(word, &ids[first..]);
                            }
                            Ok(())
                        })?
                }
            }
        }
        Ok(())
    }
}

/// Splits `text` around the leftmost-longest matches of `added`.
fn split_added<'t>(added: Option<&Added>, text: &'t str, out: &mut Vec<Piece<'t>>) {
    let Some(added) = added else {
        out.push(Piece::Text(text));
        return;
    };
    let mut done = 0;
    for found in added.automaton.find_iter(text) {
        if done < found.start() {
            out.push(Piece::Text(&text[done..found.start()]));
        }
        if let Some(&id) = added.ids.get(found.pattern().as_usize()) {
            out.push(Piece::Added(id));
        }
        done = found.end();
    }
    if done < text.len() {
        out.push(Piece::Text(&text[done..]));
    }
}

/// GPT-2's byte alphabet: the printable Latin-1 bytes (`!`..=`~`,
/// `¡`..=`¬`, `®`..=`ÿ`) stand for themselves, the other 68 bytes, in
/// increasing order, for U+0100 onwards.
fn byte_alphabet() -> [char; 256] {
    let mut table = ['\0'; 256];
    let mut next = 0x100u32;
    for byte in 0..=255u8 {
        let printable = matches!(byte, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
        table[usize::from(byte)] = if printable {
            char::from(byte)
        } else {
            next += 1;
            char::from_u32(next - 1).unwrap_or(char::REPLACEMENT_CHARACTER)
        };
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_pieces_are_cached_within_their_budget() {
        let mut cache = WordCache::default();
        let short = "x".repeat(CACHE_MAX_PIECE);
        cache.insert(&short, &[1]);
        let piece = |i: usize| format!("{i:08}{}", "y".repeat(100_000));
        let ids = [7; 1000];
        let fit = CACHE_LONG_BYTES / (piece(0).len() + 4 * ids.len());
        for i in 0..fit + 2 {
            cache.insert(&piece(i), &ids);
        }
        assert_eq!(cache.get(&short), Some(&[1][..]));
        assert_eq!(cache.get(&piece(0)), Some(&ids[..]));
        assert_eq!(cache.get(&piece(fit - 1)), Some(&ids[..]));
        assert_eq!(cache.get(&piece(fit)), None);
        assert!(cache.long_bytes <= CACHE_LONG_BYTES);
        // Short pieces still fit.
        cache.insert("z", &[2]);
        assert_eq!(cache.get("z"), Some(&[2][..]));
    }

    #[test]
    fn byte_alphabet_is_gpt2s() {
        let table = byte_alphabet();
        assert_eq!(table[usize::from(b'a')], 'a');
        assert_eq!(table[usize::from(b' ')], 'Ġ');
        assert_eq!(table[usize::from(b'\n')], 'Ċ');
        assert_eq!(table[0], 'Ā');
        assert_eq!(table[0xAD], 'Ń');
        let mut ours: Vec<char> = table.to_vec();
        ours.sort_unstable();
        ours.dedup();
        let mut theirs: Vec<char> = tokenizers::pre_tokenizers::byte_level::ByteLevel::alphabet()
            .into_iter()
            .collect();
        theirs.sort_unstable();
        assert_eq!(ours, theirs);
    }
}
