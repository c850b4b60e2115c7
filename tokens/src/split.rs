//! The DeepSeek V4 pre-tokenizer's three regex splits, run with
//! `regex-automata` (the engine of the `regex` crate) instead of
//! `fancy-regex`, giving the same pieces.
//!
//! The pre-tokenizer splits a text with each pattern of [`SPLITS`] in turn,
//! keeping the matches and the text between them as separate pieces
//! (`Isolated`); each later pattern runs on each piece of the one before,
//! as if that piece were the whole text. The `tokenizers` crate runs them
//! with `fancy-regex`. The first two patterns have no look-around, so
//! `fancy-regex` hands them whole to `regex-automata`, with the same
//! Unicode tables (`regex-syntax`); they run here as they are.
//!
//! The third pattern ends in `\s+(?!\S)|\s+`, a lookahead `regex-automata`
//! lacks and that makes `fancy-regex` run its backtracking VM, most of the
//! counting time. Here `regex-automata` runs the pattern with those two
//! branches replaced by one `\s+` ([`words_pattern`]), and the lookahead
//! is emulated on its matches ([`Splits::words`]):
//!
//! Name the branches of the original pattern B1 `[…][A-Za-z]+`,
//! B2 `[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+`, B3 ` ?[\p{P}\p{S}]+[\r\n]*`,
//! B4 `\s*[\r\n]+`, B5 `\s+(?!\S)` and B6 `\s+`. Both engines take the
//! leftmost position where the pattern matches and there, the first
//! branch that matches, in order (leftmost-first: what a backtracking
//! engine finds, and what `regex-automata` promises without look-around).
//!
//! - B5 or B6 matches at a position exactly when it holds a whitespace
//!   character, so the two patterns match at the same positions, and the
//!   leftmost match starts at the same place `s`; where B1–B4 match there,
//!   both take the same branch, and the same match.
//! - Otherwise, let `e` end the run of whitespace from `s`. B5's greedy
//!   `\s+` first takes all of it; at `e` the text ends or a non-whitespace
//!   character follows. At the end, `(?!\S)` holds: the match is `s..e`.
//!   Before a non-whitespace character it fails, and the VM gives back one
//!   character: the run's last, whitespace, so `(?!\S)` holds there: the
//!   match is `s..e` less its last character, if that leaves one or more
//!   characters. If the run is one character, B5 fails and B6 takes it.
//!   The rewritten pattern's `\s+` takes `s..e` in every case; this module
//!   shortens it by its last character when a character follows and the
//!   match has two or more.
//! - A match came from B6 (B5) exactly when its last character is
//!   whitespace other than `\r` and `\n`: B1 ends with an ASCII letter, B2
//!   with a letter or mark, B3 with punctuation, a symbol, `\r` or `\n`,
//!   B4 with `\r` or `\n` (no letter, mark, punctuation or symbol is
//!   whitespace: the Unicode White_Space characters are controls and
//!   separators); and B6 is tried only when B4 failed at `s`, that is, when
//!   the run `s..e` holds no `\r` or `\n`.
//! - No branch matches the empty string, so after a match ending at `p`,
//!   both engines search again from `p`, and the next match is as above.
//! - The leftmost match is found by an anchored search at `p`, then at each
//!   next character until one matches ([`Splits::anchored_word`]): the
//!   first position where the pattern matches, and there the same
//!   leftmost-first match as an unanchored search's.
//!
//! One difference is left, on purpose: on a run of about a million
//! whitespace characters without a line break, `fancy-regex`'s VM fails
//! (`StackOverflow`) and the `tokenizers` crate leaves the rest of that
//! piece unsplit; `regex-automata` has no such limit and splits it as the
//! pattern says, as Hugging Face's Python `tokenizers` (Oniguruma) does:
//! a million spaces and `x` are the pieces 999,999 spaces and ` x`.
//!
//! A property test checks the spans and pieces against `fancy-regex` on
//! random text from a hostile alphabet.

use std::ops::Range;

use regex_automata::meta::Regex;
use regex_automata::{Anchored, Input};

/// The DeepSeek V4 pre-tokenizer's three split patterns, in order.
pub(crate) const SPLITS: [&str; 3] = [
    r"\p{N}{1,3}",
    "[\u{4e00}-\u{9fa5}\u{3040}-\u{309f}\u{30a0}-\u{30ff}]+",
    "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+",
];

/// What [`Splits::warmed`] runs the splits on.
const WARM_UP: &str = "Found 12 matches\n\nsrc/main.rs\nLine 42: fn main() { let x = vec![1, 2, 3]; \
    println!(\"{x:?}\"); } // A comment_here.\n\tThe quick brown fox: «quoted», 'text'; café \
    naïve 100% $5 #tag @user (x) [y] <z> a+b=c ~d `e` ^f & g | h * i...\r\n    \
    中文 日本語のテキスト カタカナ 한국어 русский ελληνικά 😀👍🏽 \u{fffd}\u{a0}\u{3000}end  \n";

/// The last two branches of the third pattern, which this module emulates.
const LOOKAHEAD_TAIL: &str = r"|\s+(?!\S)|\s+";

/// The third pattern with its last two branches (`\s+(?!\S)|\s+`) replaced
/// by one `\s+`, or `None` if the pattern does not end with them.
fn words_pattern() -> Option<String> {
    let head = SPLITS[2].strip_suffix(LOOKAHEAD_TAIL)?;
    Some(format!(r"{head}|\s+"))
}

/// The three splits, compiled (see the module documentation).
#[derive(Debug, Clone)]
pub(crate) struct Splits {
    numbers: Regex,
    cjk: Regex,
    words: Regex,
}

impl Splits {
    /// The compiled splits; `None` only if a pattern does not compile,
    /// which the tests rule out.
    pub(crate) fn new() -> Option<Self> {
        let [numbers, cjk, _] = SPLITS;
        Some(Self {
            numbers: Regex::new(numbers).ok()?,
            cjk: Regex::new(cjk).ok()?,
            words: Regex::new(&words_pattern()?).ok()?,
        })
    }

    /// The compiled splits, their lazy DFAs already holding the states a
    /// short text of the usual kinds (code, prose, CJK, emoji) needs, so
    /// that the first page counted does not build them all (about 1 ms).
    pub(crate) fn warmed() -> Option<Self> {
        let splits = Self::new()?;
        let _ = splits.pieces(WARM_UP, &mut |_: &str| -> Result<(), ()> { Ok(()) });
        Some(splits)
    }

    /// Hands the pieces of `text` after the three splits to `piece`, in
    /// order; stops at the first error `piece` returns.
    pub(crate) fn pieces<E>(
        &self,
        text: &str,
        piece: &mut impl FnMut(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        let numbers = self.numbers.find_iter(text).map(|m| m.range());
        isolate(text, numbers, &mut |between: &str| {
            let cjk = self.cjk.find_iter(between).map(|m| m.range());
            isolate(between, cjk, &mut |rest: &str| {
                isolate(rest, self.words(rest), piece)
            })
        })
    }

    /// The matches of the third pattern in `text`, as `fancy-regex` finds
    /// them with the lookahead (see the module documentation).
    pub(crate) fn words<'t>(&'t self, text: &'t str) -> impl Iterator<Item = Range<usize>> + 't {
        let mut at = 0;
        std::iter::from_fn(move || {
            let found = self.anchored_word(text, at)?;
            let mut end = found.end;
            let last = text[found.clone()].chars().next_back()?;
            let lookahead_fails = end < text.len() && is_space_not_newline(last);
            if lookahead_fails && found.len() > last.len_utf8() {
                end -= last.len_utf8();
            }
            at = end;
            Some(found.start..end)
        })
    }

    /// The leftmost match of the rewritten third pattern in `text` from
    /// `at`: the first position from `at` where an anchored search
    /// matches, and that match. This is the unanchored leftmost-first
    /// match, found without the reverse scan an unanchored search makes
    /// for the start, whose lazy DFA is slow to build for this pattern's
    /// Unicode classes. Almost every position starts a match, so the loop
    /// rarely steps, and a failed attempt reads at most two characters
    /// (the first is not whitespace, or `\s+` would match).
    fn anchored_word(&self, text: &str, mut at: usize) -> Option<Range<usize>> {
        while at < text.len() {
            let input = Input::new(text).range(at..).anchored(Anchored::Yes);
            if let Some(found) = self.words.search(&input) {
                return Some(found.range());
            }
            at += text[at..].chars().next()?.len_utf8();
        }
        None
    }
}

/// Whether `c` is whitespace (Unicode White_Space, as `\s`) other than the
/// `\r` and `\n` the earlier branches end with.
fn is_space_not_newline(c: char) -> bool {
    c.is_whitespace() && c != '\r' && c != '\n'
}

/// Hands `text` to `piece` cut at `matches` (ascending, not overlapping):
/// each match and each stretch between them is a piece (`Isolated`).
fn isolate<E>(
    text: &str,
    matches: impl Iterator<Item = Range<usize>>,
    piece: &mut impl FnMut(&str) -> Result<(), E>,
) -> Result<(), E> {
    let mut done = 0;
    for found in matches {
        if done < found.start {
            piece(&text[done..found.start])?;
        }
        if found.start < found.end {
            piece(&text[found.start..found.end])?;
        }
        done = found.end;
    }
    if done < text.len() {
        piece(&text[done..])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

    use std::sync::OnceLock;

    use proptest::prelude::*;

    use super::*;

    fn splits() -> &'static Splits {
        static SPLITS_: OnceLock<Splits> = OnceLock::new();
        SPLITS_.get_or_init(|| Splits::new().unwrap())
    }

    /// The spans `fancy-regex` finds for split `level` in `text`, as the
    /// `tokenizers` crate uses them (an error ends the matches).
    fn fancy_spans(level: usize, text: &str) -> Vec<Range<usize>> {
        static FANCY: OnceLock<Vec<fancy_regex::Regex>> = OnceLock::new();
        let fancy = FANCY.get_or_init(|| {
            SPLITS
                .iter()
                .map(|p| fancy_regex::Regex::new(p).unwrap())
                .collect()
        });
        fancy[level]
            .find_iter(text)
            .map_while(Result::ok)
            .map(|m| m.range())
            .collect()
    }

    /// The pieces of the three splits with `fancy-regex`, the way the
    /// `tokenizers` crate makes them.
    fn fancy_pieces(text: &str) -> Vec<String> {
        let mut pieces = vec![text.to_owned()];
        for level in 0..SPLITS.len() {
            let mut next = Vec::new();
            for piece in pieces {
                let mut push = |p: &str| -> Result<(), ()> {
                    next.push(p.to_owned());
                    Ok(())
                };
                isolate(&piece, fancy_spans(level, &piece).into_iter(), &mut push).unwrap();
            }
            pieces = next;
        }
        pieces
    }

    fn our_pieces(text: &str) -> Vec<String> {
        let mut pieces = Vec::new();
        splits()
            .pieces(text, &mut |p: &str| -> Result<(), ()> {
                pieces.push(p.to_owned());
                Ok(())
            })
            .unwrap();
        pieces
    }

    /// Characters where the patterns' classes meet: whitespace of every
    /// kind, letters, marks, digits and other numbers, ASCII and other
    /// punctuation and symbols, CJK inside and outside the second
    /// pattern's ranges, emoji and their joiners, U+FFFD.
    const HOSTILE: &[char] = &[
        ' ', ' ', ' ', '\t', '\r', '\n', '\n', '\u{b}', '\u{c}', '\u{85}', '\u{a0}', '\u{1680}',
        '\u{2003}', '\u{2028}', '\u{202f}', '\u{3000}', 'a', 'Z', 'x', 'é', 'ß', 'Ω', 'д', 'ا',
        '\u{301}', '\u{308}', '\u{93f}', '0', '7', '٣', '½', 'Ⅻ', '²', '.', ',', '-', '_', '\'',
        '"', '(', ']', '{', '\\', '/', '!', '?', '#', '@', '$', '+', '=', '|', '~', '`', '<', '…',
        '—', '«', '€', '©', '中', '文', '龥', '龦', 'の', 'カ', 'ー', '한', '\u{ff01}', '😀', '🏽',
        '\u{200d}', '\u{fe0f}', '\u{20e3}', '\u{fffd}', '\u{feff}', '\u{0}', '\u{7f}',
    ];

    fn hostile_text() -> impl Strategy<Value = String> {
        prop::collection::vec(prop::sample::select(HOSTILE), 0..64)
            .prop_map(|chars| chars.into_iter().collect())
    }

    #[test]
    fn the_rewritten_pattern_drops_only_the_lookahead_branch() {
        let words = words_pattern().unwrap();
        assert_eq!(
            format!("{}{LOOKAHEAD_TAIL}", words.strip_suffix(r"|\s+").unwrap()),
            SPLITS[2]
        );
        assert!(Splits::new().is_some());
    }

    #[test]
    fn whitespace_before_a_word_gives_its_last_character_to_the_word() {
        let splits = splits();
        let spans = |text: &str| splits.words(text).collect::<Vec<_>>();
        assert_eq!(spans("a   b"), [0..1, 1..3, 3..5]);
        assert_eq!(spans("a \u{3000}"), [0..1, 1..5]);
        assert_eq!(spans("a  "), [0..1, 1..3]);
        assert_eq!(spans(" b"), vec![(0..2)]);
        assert_eq!(spans("  \n b"), [0..3, 3..5]);
        assert_eq!(spans("\t\t."), [0..1, 1..2, 2..3]);
        for text in ["a   b", "a \u{3000}", "a  ", " b", "  \n b", "\t\t."] {
            assert_eq!(spans(text), fancy_spans(2, text), "{text:?}");
        }
    }

    #[test]
    fn a_million_spaces_split_as_the_pattern_says() {
        let text = format!("{}x", " ".repeat(1_000_000));
        let spans: Vec<_> = splits().words(&text).collect();
        // What Python's `tokenizers` (Oniguruma) gives; `fancy-regex` fails.
        assert_eq!(spans, [0..999_999, 999_999..1_000_001]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn regex_splits_match_fancy_regex_spans(text in hostile_text()) {
            let splits = splits();
            prop_assert_eq!(
                splits.words(&text).collect::<Vec<_>>(),
                fancy_spans(2, &text)
            );
            let numbers: Vec<_> = splits.numbers.find_iter(&text).map(|m| m.range()).collect();
            prop_assert_eq!(numbers, fancy_spans(0, &text));
            let cjk: Vec<_> = splits.cjk.find_iter(&text).map(|m| m.range()).collect();
            prop_assert_eq!(cjk, fancy_spans(1, &text));
            prop_assert_eq!(our_pieces(&text), fancy_pieces(&text));
        }

        #[test]
        fn regex_splits_match_fancy_regex_on_any_text(text in any::<String>()) {
            let splits = splits();
            prop_assert_eq!(
                splits.words(&text).collect::<Vec<_>>(),
                fancy_spans(2, &text)
            );
            prop_assert_eq!(our_pieces(&text), fancy_pieces(&text));
        }
    }
}
