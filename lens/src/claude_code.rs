//! Claude Code (closed source): its documentation, not its code, is the
//! source, so only the documented thresholds are certain. A successful
//! result over 50,000 characters (or the tool's own
//! `_meta["anthropic/maxResultSizeChars"]` from `tools/list`) is saved to
//! a file and the conversation gets a message naming the file; a result
//! over `MAX_MCP_OUTPUT_TOKENS` (25,000) tokens is refused; an `isError`
//! result past about 11,000 characters is shortened to its start. The
//! messages' exact wording, the preview's length, the token estimate and
//! the error cut's marker are not public: the lens writes placeholders and
//! says so in its notes.

use super::js::JsString;
use super::knobs::KnobKind;
use super::{Budget, Cut, Framed, KnobSpec, Knobs, Lens, Lensed, ToolResultInput, Unit};

/// Tool descriptions are cut to this many characters (documented).
const DESCRIPTION_MAX_CHARS: usize = 2048;

const KNOBS: &[KnobSpec] = &[
    KnobSpec {
        name: "MAX_MCP_OUTPUT_TOKENS",
        kind: KnobKind::Count,
        default: "25000",
        help: "environment variable: the most tokens a result may have",
    },
    KnobSpec {
        name: "anthropic/maxResultSizeChars",
        kind: KnobKind::Count,
        default: "50000",
        help: "the tool's _meta in tools/list (workbench mcp --declare-max-result-chars): \
               characters kept inline before the result goes to a file",
    },
    KnobSpec {
        name: "preview_chars",
        kind: KnobKind::Count,
        default: "2000",
        help: "characters of the start shown with the file's name (undocumented: a guess)",
    },
    KnobSpec {
        name: "error_max_chars",
        kind: KnobKind::Count,
        default: "11000",
        help: "an error result's characters kept (documented as about 11,000)",
    },
    KnobSpec {
        name: "outputFile",
        kind: KnobKind::Text,
        default: "<the session's tool-results directory>/<id>.txt",
        help: "the file a large result is saved to",
    },
];

/// The documented rule.
pub(crate) const DOCS: Lens = Lens {
    host: "claude-code",
    version: "docs-2026-10",
    since: "",
    versions: "as documented on 2026-10-05 (docs.claude.com, MCP: output limits; \
         environment variables); older releases refused results over MAX_MCP_OUTPUT_TOKENS \
         outright",
    source: "Claude Code documentation (MCP output limits, MAX_MCP_OUTPUT_TOKENS, \
         anthropic/maxResultSizeChars) as summarised in qiita.com/akihidem/items/\
         32e331a9cbe0abf3af11; the token error's text from developers.figma.com/docs/\
         figma-mcp-server/mcp-clients-issues; closed source, not verifiable",
    description: "Documented, not verifiable from source: over 50,000 characters (or the \
         tool's anthropic/maxResultSizeChars) the result goes to a file and the model gets a \
         message naming it; over MAX_MCP_OUTPUT_TOKENS (25,000) tokens it is refused; an \
         error result is shortened past about 11,000 characters; tool descriptions are cut \
         at 2,048 characters. Message wording, preview length and token estimate are \
         placeholders.",
    from_source: false,
    description_max_chars: Some(DESCRIPTION_MAX_CHARS),
    knobs: KNOBS,
    apply,
};

fn apply(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    let max_tokens = knobs
        .count("MAX_MCP_OUTPUT_TOKENS", KNOBS)
        .unwrap_or(25_000);
    let max_chars = knobs
        .count("anthropic/maxResultSizeChars", KNOBS)
        .unwrap_or(50_000);
    let preview_chars = knobs.count("preview_chars", KNOBS).unwrap_or(2000);
    let error_chars = knobs.count("error_max_chars", KNOBS).unwrap_or(11_000);
    let file = knobs.text("outputFile", KNOBS).unwrap_or_default();
    let framed = Framed::identity(&input.text);
    let js = JsString::new(framed.text());
    let chars = js.len();
    let to_usize = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    if input.is_error {
        let budget = Budget {
            unit: Unit::Chars,
            limit: Some(error_chars),
        };
        if chars <= to_usize(error_chars) {
            return Lensed::whole(framed, budget);
        }
        let (head, kept) = js.slice(0, to_usize(error_chars));
        return Lensed {
            text: format!("{head}…"),
            framed,
            budget,
            cut: Cut::Head,
            kept: vec![kept],
            notes: vec![
                "error result shortened to its start (documented); the marker after it is a \
                 placeholder"
                    .to_owned(),
            ],
        };
    }
    let budget = Budget {
        unit: Unit::Chars,
        limit: Some(max_chars),
    };
    if chars > to_usize(max_chars) {
        let (head, kept) = js.slice(0, to_usize(preview_chars));
        let text = format!(
            "[Result of {chars} characters saved to {file}: the model reads that file when it \
             needs the content. Preview:]\n{head}"
        );
        return Lensed {
            framed,
            text,
            budget,
            cut: Cut::File,
            kept: if kept.is_empty() {
                Vec::new()
            } else {
                vec![kept]
            },
            notes: vec![
                "the message's wording and the preview's length are placeholders: Claude Code \
                 documents the file and the message naming it, not their text"
                    .to_owned(),
            ],
        };
    }
    let tokens = chars.div_ceil(4) as u64;
    if tokens > max_tokens {
        let text = format!(
            "MCP tool \"{}\" response ({tokens} tokens) exceeds maximum allowed tokens \
             ({max_tokens}). Please use pagination, filtering, or limit parameters to reduce \
             the response size.",
            input.tool
        );
        return Lensed {
            framed,
            text,
            budget: Budget {
                unit: Unit::Tokens,
                limit: Some(max_tokens),
            },
            cut: Cut::Head,
            kept: Vec::new(),
            notes: vec![
                "over MAX_MCP_OUTPUT_TOKENS: the result is refused with this error (its text \
                 as a vendor's documentation quotes it); the token count is estimated as \
                 characters / 4, Claude Code's own count is not public"
                    .to_owned(),
            ],
        };
    }
    Lensed::whole(framed, budget)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(text: String, is_error: bool) -> ToolResultInput {
        ToolResultInput {
            tool: "grep".to_owned(),
            text,
            is_error,
            ..ToolResultInput::default()
        }
    }

    #[test]
    fn a_result_up_to_50_000_characters_stays_inline() {
        let lensed = DOCS.apply(&input("a".repeat(50_000), false), &Knobs::default());
        assert_eq!(lensed.cut, Cut::None);
        assert_eq!(lensed.text.len(), 50_000);
    }

    #[test]
    fn a_larger_result_goes_to_a_file_with_a_preview() {
        let lensed = DOCS.apply(&input("a".repeat(50_001), false), &Knobs::default());
        assert_eq!(lensed.cut, Cut::File);
        assert_eq!(lensed.kept_bytes(), 2000);
        assert_eq!(lensed.kept_bytes() + lensed.removed_bytes(), 50_001);
    }

    #[test]
    fn a_declared_limit_keeps_it_inline_until_the_token_limit() {
        let knobs =
            Knobs::parse(&DOCS, &["anthropic/maxResultSizeChars=500000".to_owned()]).unwrap();
        let lensed = DOCS.apply(&input("a".repeat(100_000), false), &knobs);
        assert_eq!(lensed.cut, Cut::None);
        let lensed = DOCS.apply(&input("a".repeat(100_004), false), &knobs);
        assert!(
            lensed
                .text
                .starts_with("MCP tool \"grep\" response (25001 tokens) exceeds")
        );
    }

    #[test]
    fn an_error_result_is_shortened_to_its_start() {
        let lensed = DOCS.apply(&input("e".repeat(12_000), true), &Knobs::default());
        assert_eq!(lensed.cut, Cut::Head);
        assert_eq!(lensed.kept_bytes(), 11_000);
    }

    #[test]
    fn descriptions_are_cut_at_2048_characters_and_other_hosts_keep_them() {
        assert_eq!(DOCS.tool_description("short"), ("short".to_owned(), false));
        let (cut, was_cut) = DOCS.tool_description(&"d".repeat(3000));
        assert!(was_cut);
        assert_eq!(cut.len(), 2048);
        // JavaScript counts UTF-16 units: 1,024 astral characters are 2,048.
        let astral = "😀".repeat(1025);
        let (cut, was_cut) = DOCS.tool_description(&astral);
        assert!(was_cut);
        assert_eq!(cut, "😀".repeat(1024));
        let (kept, was_cut) = crate::opencode::CURRENT.tool_description(&"d".repeat(3000));
        assert_eq!((kept.len(), was_cut), (3000, false));
    }
}
