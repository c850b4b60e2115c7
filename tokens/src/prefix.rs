//! KV-cache prefix comparison: two request prefixes, each an ordered list
//! of named parts (prompt sections, then tool definitions), compared token
//! by token.
//!
//! A prefix's tokens are the concatenation, in order, of each part's tokens,
//! **each part tokenized on its own**. The model's real request joins the
//! parts inside its chat template, where a token may straddle the boundary
//! of two parts; tokenizing per part instead keeps every part's count
//! independent of its neighbours, so the per-part counts shown add up to the
//! prefix total, and a change inside one part never moves the tokens of the
//! parts before it. Two prefixes are identical when their token ids are;
//! part names are labels and do not count.

use serde::Serialize;

/// What a part of a request prefix is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PartKind {
    /// A system-prompt section.
    Section,
    /// A tool definition (see [`crate::tool_definition_text`]).
    Tool,
}

/// One named part of a request prefix, before tokenization.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Section or tool.
    pub kind: PartKind,
    /// The section's or the tool's name.
    pub name: String,
    /// The text the model sees for this part.
    pub text: String,
}

impl Part {
    /// A prompt section.
    pub fn section(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            kind: PartKind::Section,
            name: name.into(),
            text: text.into(),
        }
    }

    /// A tool definition given as its counted text.
    pub fn tool(name: impl Into<String>, text: impl Into<String>) -> Self {
        Self {
            kind: PartKind::Tool,
            name: name.into(),
            text: text.into(),
        }
    }

    /// A tool definition, serialized by [`crate::tool_definition_text`].
    pub fn tool_definition(name: &str, description: &str, parameters: &serde_json::Value) -> Self {
        Self::tool(
            name,
            crate::tool_definition_text(name, description, parameters),
        )
    }
}

/// A [`Part`] with its tokens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedPart {
    part: Part,
    ids: Vec<u32>,
    /// The byte offset in `part.text` where each token starts.
    starts: Vec<usize>,
}

impl EncodedPart {
    /// A part with its token ids and the byte offset in its text where each
    /// token starts (`starts` may be shorter than `ids`, or empty: excerpts
    /// then fall back to the end of the text).
    pub fn new(part: Part, ids: Vec<u32>, starts: Vec<usize>) -> Self {
        Self { part, ids, starts }
    }

    /// The part.
    pub fn part(&self) -> &Part {
        &self.part
    }

    /// Its token ids.
    pub fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Its number of tokens.
    pub fn tokens(&self) -> usize {
        self.ids.len()
    }
}

/// A request prefix, tokenized part by part (see the module documentation).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EncodedPrefix {
    parts: Vec<EncodedPart>,
}

impl EncodedPrefix {
    /// The prefix made of `parts`, in order.
    pub fn new(parts: Vec<EncodedPart>) -> Self {
        Self { parts }
    }

    /// Its parts, in order.
    pub fn parts(&self) -> &[EncodedPart] {
        &self.parts
    }

    /// Its number of tokens: the sum over its parts.
    pub fn tokens(&self) -> usize {
        self.parts.iter().map(EncodedPart::tokens).sum()
    }

    /// All its token ids, in order.
    pub fn ids(&self) -> impl Iterator<Item = u32> + '_ {
        self.parts.iter().flat_map(|p| p.ids.iter().copied())
    }

    /// The part holding token `index` and that token's index within it;
    /// `None` past the end. Parts without tokens hold none.
    fn locate(&self, index: usize) -> Option<(&EncodedPart, usize)> {
        let mut first = 0;
        for part in &self.parts {
            if index < first + part.tokens() {
                return Some((part, index - first));
            }
            first += part.tokens();
        }
        None
    }
}

/// Where two prefixes first differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FirstDifference {
    /// The kind of the part holding the first differing token: side A's
    /// part, or side B's when A ended there.
    pub part: PartKind,
    /// That part's name.
    pub name: String,
    /// The 0-based index of the first differing token in the whole prefix
    /// (equal to [`PrefixComparison::common_tokens`]).
    pub token_index: usize,
}

/// The KV-cache comparison of two prefixes, A (before) and B (after).
/// Serializes as `{"identical", "commonTokens", "tokensA", "tokensB",
/// "firstDifference": {"part", "name", "tokenIndex"} | null}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PrefixComparison {
    /// Whether both prefixes have the same token ids: a cached A stays valid.
    pub identical: bool,
    /// The length of the longest common token prefix: the tokens of A a KV
    /// cache can reuse for B.
    pub common_tokens: usize,
    /// A's number of tokens.
    pub tokens_a: usize,
    /// B's number of tokens.
    pub tokens_b: usize,
    /// Where they first differ; `None` (`null`) when identical.
    pub first_difference: Option<FirstDifference>,
}

/// Compares two prefixes token by token.
pub fn compare_prefixes(a: &EncodedPrefix, b: &EncodedPrefix) -> PrefixComparison {
    let common_tokens = a.ids().zip(b.ids()).take_while(|(x, y)| x == y).count();
    let (tokens_a, tokens_b) = (a.tokens(), b.tokens());
    let identical = common_tokens == tokens_a && common_tokens == tokens_b;
    let first_difference = if identical {
        None
    } else {
        a.locate(common_tokens)
            .or_else(|| b.locate(common_tokens))
            .map(|(part, _)| FirstDifference {
                part: part.part.kind,
                name: part.part.name.clone(),
                token_index: common_tokens,
            })
    };
    PrefixComparison {
        identical,
        common_tokens,
        tokens_a,
        tokens_b,
        first_difference,
    }
}

/// One side's text around the first difference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SideExcerpt {
    /// The kind and name of this side's part holding the differing token;
    /// `None` when this side ended before it.
    pub part: Option<(PartKind, String)>,
    /// Up to `context` characters of that part's text just before the
    /// differing token (of the last part's end when this side ended).
    pub before: String,
    /// The text from the differing token on, up to `context` characters,
    /// within the same part; empty when this side ended.
    pub after: String,
}

/// Both sides' text around the first difference. Control characters are
/// escaped (`\n`, `\t`, `\r`, `\u{…}`) so each side fits one line; `…`
/// marks text cut off.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DifferenceExcerpt {
    /// Side A.
    pub a: SideExcerpt,
    /// Side B.
    pub b: SideExcerpt,
}

impl PrefixComparison {
    /// Both sides' text around the first difference, `context` characters
    /// each way; `None` when identical. `a` and `b` must be the prefixes
    /// this comparison was made from.
    pub fn excerpt(
        &self,
        a: &EncodedPrefix,
        b: &EncodedPrefix,
        context: usize,
    ) -> Option<DifferenceExcerpt> {
        let index = self.first_difference.as_ref()?.token_index;
        Some(DifferenceExcerpt {
            a: side_excerpt(a, index, context),
            b: side_excerpt(b, index, context),
        })
    }
}

fn side_excerpt(prefix: &EncodedPrefix, index: usize, context: usize) -> SideExcerpt {
    match prefix.locate(index) {
        Some((part, within)) => {
            let text = part.part.text.as_str();
            let at = part
                .starts
                .get(within)
                .map_or(text.len(), |&s| floor_char_boundary(text, s));
            SideExcerpt {
                part: Some((part.part.kind, part.part.name.clone())),
                before: tail(&text[..at], context),
                after: head(&text[at..], context),
            }
        }
        None => {
            let last = prefix.parts.iter().rev().find(|p| !p.part.text.is_empty());
            SideExcerpt {
                part: None,
                before: last.map_or_else(String::new, |p| tail(&p.part.text, context)),
                after: String::new(),
            }
        }
    }
}

/// The largest char boundary of `text` at or below `index`.
fn floor_char_boundary(text: &str, index: usize) -> usize {
    let mut i = index.min(text.len());
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The last `n` characters of `text`, escaped, with `…` when cut.
fn tail(text: &str, n: usize) -> String {
    let count = text.chars().count();
    let kept: String = text.chars().skip(count.saturating_sub(n)).collect();
    let cut = if count > n { "…" } else { "" };
    format!("{cut}{}", escape(&kept))
}

/// The first `n` characters of `text`, escaped, with `…` when cut.
fn head(text: &str, n: usize) -> String {
    let kept: String = text.chars().take(n).collect();
    let cut = if text.chars().nth(n).is_some() {
        "…"
    } else {
        ""
    };
    format!("{}{cut}", escape(&kept))
}

fn escape(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() {
                c.escape_default().to_string()
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn part(kind: PartKind, name: &str, text: &str, ids: &[u32]) -> EncodedPart {
        // One token per character, for the excerpt offsets.
        let starts = text.char_indices().map(|(i, _)| i).collect();
        EncodedPart::new(
            Part {
                kind,
                name: name.into(),
                text: text.into(),
            },
            ids.to_vec(),
            starts,
        )
    }

    #[test]
    fn empty_parts_hold_no_token() {
        let a = EncodedPrefix::new(vec![
            part(PartKind::Section, "s1", "ab", &[1, 2]),
            part(PartKind::Section, "empty", "", &[]),
            part(PartKind::Tool, "t", "c", &[3]),
        ]);
        let b = EncodedPrefix::new(vec![
            part(PartKind::Section, "s1", "ab", &[1, 2]),
            part(PartKind::Tool, "t", "d", &[4]),
        ]);
        let cmp = compare_prefixes(&a, &b);
        assert_eq!(
            cmp.first_difference,
            Some(FirstDifference {
                part: PartKind::Tool,
                name: "t".into(),
                token_index: 2
            })
        );
        let ex = cmp.excerpt(&a, &b, 10).unwrap();
        assert_eq!(ex.a.after, "c");
        assert_eq!(ex.b.after, "d");
        assert_eq!(ex.a.before, "");
    }

    #[test]
    fn both_empty_are_identical() {
        let cmp = compare_prefixes(&EncodedPrefix::default(), &EncodedPrefix::default());
        assert!(cmp.identical);
        assert_eq!(cmp.first_difference, None);
        assert_eq!(
            cmp.excerpt(&EncodedPrefix::default(), &EncodedPrefix::default(), 5),
            None
        );
    }

    #[test]
    fn excerpts_escape_and_cut() {
        assert_eq!(tail("abc\ndef", 3), "…def");
        assert_eq!(tail("c\nd", 5), "c\\nd");
        assert_eq!(head("a\tbcdef", 3), "a\\tb…");
        assert_eq!(head("ab", 2), "ab");
        assert_eq!(floor_char_boundary("a€", 2), 1);
        assert_eq!(floor_char_boundary("a€", 9), 4);
    }
}
