//! Codex CLI (`openai/codex`, `codex-rs`): an MCP result reaches the model
//! as a function-call output whose text is the JSON of the result's
//! `content` array (`structuredContent` would win, but `workbench mcp`
//! sends none), so every newline and quote of the page is escaped.
//! `isError` only sets the output's `success: false`; the text is the same
//! (`codex-rs/protocol/src/models.rs`, `From<&CallToolResult> for
//! FunctionCallOutputPayload`).
//!
//! The cut, by era:
//! - up to 0.55: none;
//! - 0.56 to 0.58: every tool output capped at 10 KiB / 256 lines, head
//!   and tail halves around `[... omitted N of M lines ...]` (or
//!   `[... output truncated to fit N bytes ...]`), after a `Total output
//!   lines: M` header (`codex-rs/core/src/truncate.rs`,
//!   `format_output_for_model_body`);
//! - 0.59 on: a middle cut to the history budget (`tool_output_token_limit`,
//!   10,000 tokens estimated as bytes/4 for the codex model families, or a
//!   byte budget for the others) plus a 20% allowance for serialisation,
//!   leaving `…N tokens truncated…` (`…N chars truncated…` in byte mode)
//!   between the halves, each on a UTF-8 boundary
//!   (`codex-rs/utils/string/src/truncate.rs`, `truncate_middle_chars`,
//!   `truncate_middle_with_token_budget`; `codex-rs/utils/output-truncation`,
//!   `truncate_text`, `with_serialization_allowance`);
//! - about 0.120 on: the text is prefixed with `Wall time: … seconds` and
//!   `Output:` (pull request #17406; the exact format is not verified
//!   here, see the notes the lens gives).

use std::ops::Range;

use super::knobs::KnobKind;
use super::{Budget, Cut, Framed, KnobSpec, Knobs, Lens, Lensed, ToolResultInput, Unit};

const SOURCE_JSON: &str = "openai/codex codex-rs/protocol/src/models.rs, From<&CallToolResult> for \
     FunctionCallOutputPayload (commit 001cb8e2)";

/// Up to 0.55: framing only.
pub(crate) const V0_55: Lens = Lens {
    host: "codex",
    version: "0.55",
    since: "0",
    versions: "up to 0.55.x",
    source: SOURCE_JSON,
    description: "The content array serialised as JSON text; no cut (issue openai/codex#6544: \
         pinning to 0.55 restores full tool output).",
    from_source: true,
    description_max_chars: None,
    knobs: &[],
    apply: apply_v0_55,
};

const V0_56_KNOBS: &[KnobSpec] = &[
    KnobSpec {
        name: "MODEL_FORMAT_MAX_BYTES",
        kind: KnobKind::Count,
        default: "10240",
        help: "the byte cap (a constant in codex-rs/core/src/truncate.rs, not a config key)",
    },
    KnobSpec {
        name: "MODEL_FORMAT_MAX_LINES",
        kind: KnobKind::Count,
        default: "256",
        help: "the line cap (a constant, not a config key)",
    },
];

/// 0.56 to 0.58: 10 KiB / 256 lines, head and tail.
pub(crate) const V0_56: Lens = Lens {
    host: "codex",
    version: "0.56",
    since: "0.56",
    versions: "0.56 to 0.58 (openai/codex#6544: since 0.56, pull request #5979; the token \
         budget of pull request #6746 replaced it)",
    source: "openai/codex codex-rs/core/src/truncate.rs, format_output_for_model_body and \
         truncate_formatted_exec_output (commit 02080945); JSON framing as codex@0.55",
    description: "The JSON text capped at 10 KiB and 256 lines: `Total output lines: M`, then \
         the first half of the lines and bytes, `[... omitted N of M lines ...]` (or `[... \
         output truncated to fit N bytes ...]`), then the tail in what bytes remain.",
    from_source: true,
    description_max_chars: None,
    knobs: V0_56_KNOBS,
    apply: apply_v0_56,
};

const V0_59_KNOBS: &[KnobSpec] = &[
    KnobSpec {
        name: "tool_output_token_limit",
        kind: KnobKind::Count,
        default: "",
        help: "config.toml: the tool output budget in tokens (unset: the model family's, \
               10,000 tokens, or 10,000 bytes for byte-mode families)",
    },
    KnobSpec {
        name: "truncation_policy",
        kind: KnobKind::Text,
        default: "tokens",
        help: "the model family's policy: tokens (gpt-5-codex families) or bytes",
    },
];

/// 0.59 on: the token (or byte) budget, middle cut.
pub(crate) const V0_59: Lens = Lens {
    host: "codex",
    version: "0.59",
    since: "0.59",
    versions: "from the release after pull request #6746 (2025-11-18, first release not \
         verified here) to about 0.119",
    source: "openai/codex codex-rs/utils/string/src/truncate.rs (truncate_middle_chars, \
         truncate_middle_with_token_budget, split_string; commit b24d7f3c) and \
         codex-rs/utils/output-truncation/src/lib.rs (truncate_text, \
         with_serialization_allowance; commit 820f85cf); JSON framing as codex@0.55",
    description: "The JSON text cut in the middle to tool_output_token_limit × 1.2 (tokens \
         estimated as bytes/4): the first and last half of the byte budget on UTF-8 \
         boundaries around `…N tokens truncated…` (byte-mode families: `…N chars \
         truncated…`). The 1.2 serialisation allowance and the byte-mode default of 10,000 \
         bytes are read from the source but not run against the host.",
    from_source: true,
    description_max_chars: None,
    knobs: V0_59_KNOBS,
    apply: apply_v0_59,
};

const V0_120_KNOBS: &[KnobSpec] = &[
    V0_59_KNOBS[0],
    V0_59_KNOBS[1],
    KnobSpec {
        name: "wall_time_seconds",
        kind: KnobKind::Number,
        default: "0",
        help: "the call's duration the host prints (workbench call fills it in)",
    },
];

/// About 0.120 on: the wall time prefixed.
pub(crate) const V0_120: Lens = Lens {
    host: "codex",
    version: "0.120",
    since: "0.120",
    versions: "from about 0.120 (pull request #17406, merged 2026-04-11; first release not \
         verified here)",
    source: "openai/codex pull request #17406 \"Add MCP tool wall time to model output\"; cut as \
         codex@0.59",
    description: "As codex@0.59, with `Wall time: S seconds` and `Output:` lines before the \
         JSON text. The prefix's exact format (four decimals, as Codex prints it for its own \
         tools) is not verified against the source of the pull request.",
    from_source: false,
    description_max_chars: None,
    knobs: V0_120_KNOBS,
    apply: apply_v0_120,
};

/// The JSON text of the result's content array.
fn frame(input: &ToolResultInput, wall_time: Option<f64>) -> Framed {
    let mut framed = Framed::default();
    if let Some(seconds) = wall_time {
        framed.push_added(&format!("Wall time: {seconds:.4} seconds\nOutput:\n"));
    }
    framed.push_added("[{\"type\":\"text\",\"text\":\"");
    framed.copy_json_escaped(&input.text);
    framed.push_added("\"}]");
    framed
}

const ERROR_NOTE: &str = "isError sets only the output's success flag: the text is the same";

fn apply_v0_55(input: &ToolResultInput, _knobs: &Knobs) -> Lensed {
    let lensed = Lensed::whole(
        frame(input, None),
        Budget {
            unit: Unit::Bytes,
            limit: None,
        },
    );
    noted(lensed, input)
}

fn noted(lensed: Lensed, input: &ToolResultInput) -> Lensed {
    if input.is_error {
        lensed.with_note(ERROR_NOTE)
    } else {
        lensed
    }
}

fn apply_v0_56(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    let limit_bytes = count(
        knobs.count("MODEL_FORMAT_MAX_BYTES", V0_56_KNOBS),
        10 * 1024,
    );
    let limit_lines = count(knobs.count("MODEL_FORMAT_MAX_LINES", V0_56_KNOBS), 256);
    let framed = frame(input, None);
    let budget = Budget {
        unit: Unit::Bytes,
        limit: Some(limit_bytes as u64),
    };
    let Some(cut) = format_output_for_model_body(framed.text(), limit_bytes, limit_lines) else {
        return noted(Lensed::whole(framed, budget), input);
    };
    let lensed = Lensed {
        framed,
        text: cut.text,
        budget,
        cut: Cut::Middle,
        kept: cut.kept,
        notes: vec![format!(
            "the line cap ({limit_lines}) counts lines of the JSON text, which escapes the \
             page's newlines: a one-line string unless the page exceeds the byte cap"
        )],
    };
    noted(lensed, input)
}

fn count(value: Option<u64>, default: usize) -> usize {
    value.map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
}

/// The policy `tool_output_token_limit` and the family's mode make, with
/// the 20% serialisation allowance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Policy {
    Bytes(usize),
    Tokens(usize),
}

impl Policy {
    fn of(knobs: &Knobs, spec: &[KnobSpec]) -> Self {
        let limit = knobs
            .count("tool_output_token_limit", spec)
            .map(|n| count(Some(n), 0));
        let bytes_mode = knobs.text("truncation_policy", spec).as_deref() == Some("bytes");
        let policy = if bytes_mode {
            Policy::Bytes(limit.map_or(10_000, |t| t.saturating_mul(APPROX_BYTES_PER_TOKEN)))
        } else {
            Policy::Tokens(limit.unwrap_or(10_000))
        };
        policy.with_allowance()
    }

    fn with_allowance(self) -> Self {
        let scale = |n: usize| (n as f64 * 1.2).ceil() as usize;
        match self {
            Policy::Bytes(n) => Policy::Bytes(scale(n)),
            Policy::Tokens(n) => Policy::Tokens(scale(n)),
        }
    }

    fn budget(self) -> Budget {
        match self {
            Policy::Bytes(n) => Budget {
                unit: Unit::Bytes,
                limit: Some(n as u64),
            },
            Policy::Tokens(n) => Budget {
                unit: Unit::Tokens,
                limit: Some(n as u64),
            },
        }
    }
}

fn apply_v0_59(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    cut_to_policy(frame(input, None), Policy::of(knobs, V0_59_KNOBS), input)
}

fn apply_v0_120(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    let seconds = if knobs.is_set("wall_time_seconds") {
        knobs
            .number("wall_time_seconds", V0_120_KNOBS)
            .unwrap_or(0.0)
    } else {
        input.duration_secs.unwrap_or(0.0)
    };
    cut_to_policy(
        frame(input, Some(seconds)),
        Policy::of(knobs, V0_120_KNOBS),
        input,
    )
    .with_note("the Wall time prefix's format is not verified against the host's source")
}

fn cut_to_policy(framed: Framed, policy: Policy, input: &ToolResultInput) -> Lensed {
    let cut = truncate_text(framed.text(), policy);
    let lensed = match cut {
        None => Lensed::whole(framed, policy.budget()),
        Some(cut) => Lensed {
            framed,
            text: cut.text,
            budget: policy.budget(),
            cut: Cut::Middle,
            kept: cut.kept,
            notes: Vec::new(),
        },
    };
    let lensed = match policy {
        Policy::Tokens(n) => lensed.with_note(format!(
            "budget {n} tokens = tool_output_token_limit × 1.2, estimated as {} bytes \
             (4 bytes a token)",
            n.saturating_mul(APPROX_BYTES_PER_TOKEN)
        )),
        Policy::Bytes(n) => lensed.with_note(format!("budget {n} bytes (× 1.2 allowance)")),
    };
    noted(lensed, input)
}

/// A cut text and the ranges of the input it keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CutText {
    text: String,
    kept: Vec<Range<usize>>,
}

const APPROX_BYTES_PER_TOKEN: usize = 4;

/// `truncate_text`: `None` when `s` fits.
fn truncate_text(s: &str, policy: Policy) -> Option<CutText> {
    match policy {
        Policy::Bytes(bytes) => truncate_middle(s, bytes, false),
        Policy::Tokens(tokens) => {
            if s.is_empty() || (tokens > 0 && s.len() <= tokens * APPROX_BYTES_PER_TOKEN) {
                return None;
            }
            truncate_middle(s, tokens.saturating_mul(APPROX_BYTES_PER_TOKEN), true)
        }
    }
}

/// `ceil(bytes / 4)`: Codex's token estimate.
fn approx_tokens(bytes: usize) -> usize {
    bytes.div_ceil(APPROX_BYTES_PER_TOKEN)
}

/// The middle cut to `max_bytes`: half the budget of whole characters
/// from the start, half from the end, the marker between (not counted in
/// the budget). `None` when `s` fits.
fn truncate_middle(s: &str, max_bytes: usize, tokens: bool) -> Option<CutText> {
    if s.is_empty() {
        return None;
    }
    let marker = |removed_bytes: usize, removed_chars: usize| {
        if tokens {
            format!("…{} tokens truncated…", approx_tokens(removed_bytes))
        } else {
            format!("…{removed_chars} chars truncated…")
        }
    };
    if max_bytes == 0 {
        return Some(CutText {
            text: marker(s.len(), s.chars().count()),
            kept: Vec::new(),
        });
    }
    if s.len() <= max_bytes {
        return None;
    }
    let left = max_bytes / 2;
    let (removed_chars, prefix_end, suffix_start) = split_string(s, left, max_bytes - left);
    let mut text = String::with_capacity(max_bytes + 32);
    text.push_str(&s[..prefix_end]);
    text.push_str(&marker(s.len() - max_bytes, removed_chars));
    text.push_str(&s[suffix_start..]);
    let kept = [0..prefix_end, suffix_start..s.len()]
        .into_iter()
        .filter(|r| !r.is_empty())
        .collect();
    Some(CutText { text, kept })
}

/// The characters that end within the first `beginning` bytes, the ones
/// that start within the last `end` bytes, and how many fall between:
/// `(removed characters, prefix end, suffix start)`.
fn split_string(s: &str, beginning: usize, end: usize) -> (usize, usize, usize) {
    let tail_target = s.len().saturating_sub(end);
    let mut prefix_end = 0;
    let mut suffix_start = s.len();
    let mut suffix_started = false;
    let mut removed = 0;
    for (index, ch) in s.char_indices() {
        let char_end = index + ch.len_utf8();
        if char_end <= beginning {
            prefix_end = char_end;
        } else if index >= tail_target {
            if !suffix_started {
                suffix_start = index;
                suffix_started = true;
            }
        } else {
            removed += 1;
        }
    }
    (removed, prefix_end, suffix_start.max(prefix_end))
}

/// `format_output_for_model_body` (0.56): `None` when `content` fits.
fn format_output_for_model_body(
    content: &str,
    limit_bytes: usize,
    limit_lines: usize,
) -> Option<CutText> {
    let total_lines = content.lines().count();
    if content.len() <= limit_bytes && total_lines <= limit_lines {
        return None;
    }
    let head_lines = limit_lines / 2;
    let tail_lines = limit_lines - head_lines;
    let segments: Vec<&str> = content.split_inclusive('\n').collect();
    let head_take = head_lines.min(segments.len());
    let tail_take = tail_lines.min(segments.len().saturating_sub(head_take));
    let omitted = segments.len().saturating_sub(head_take + tail_take);
    let head_slice_end: usize = segments.iter().take(head_take).map(|s| s.len()).sum();
    let tail_slice_start = content.len()
        - segments
            .iter()
            .rev()
            .take(tail_take)
            .map(|s| s.len())
            .sum::<usize>();
    let marker = if omitted > 0 {
        format!("\n[... omitted {omitted} of {total_lines} lines ...]\n\n")
    } else if content.len() > limit_bytes {
        format!("\n[... output truncated to fit {limit_bytes} bytes ...]\n\n")
    } else {
        String::new()
    };
    let head_budget = (limit_bytes / 2).min(limit_bytes.saturating_sub(marker.len()));
    let head_end = floor_boundary(content, head_slice_end.min(head_budget));
    let header = format!("Total output lines: {total_lines}\n\n");
    let mut body = String::with_capacity(limit_bytes.min(content.len()));
    body.push_str(&content[..head_end]);
    body.push_str(&marker);
    let mut kept: Vec<Range<usize>> = std::iter::once(0..head_end).collect();
    let remaining = limit_bytes.saturating_sub(body.len());
    if remaining > 0 {
        let tail_start = ceil_boundary(
            content,
            tail_slice_start.max(content.len().saturating_sub(remaining)),
        );
        body.push_str(&content[tail_start..]);
        kept.push(tail_start..content.len());
    }
    kept.retain(|r| !r.is_empty());
    Some(CutText {
        text: format!("{header}{body}"),
        kept,
    })
}

fn floor_boundary(s: &str, mut at: usize) -> usize {
    while at > 0 && !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

fn ceil_boundary(s: &str, mut at: usize) -> usize {
    while at < s.len() && !s.is_char_boundary(at) {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    //! The vectors of Codex's own tests (`codex-rs/utils/string/src/
    //! truncate/tests.rs`, `codex-rs/utils/output-truncation/src/
    //! truncate_tests.rs`, `codex-rs/core/src/truncate.rs`): inputs,
    //! budgets and expected outputs, as facts.
    use super::*;
    use proptest::prelude::*;

    /// `formatted_truncate_text` of the tests: the header the host puts
    /// before `truncate_text`'s cut in its own (non-MCP) paths.
    fn formatted(content: &str, policy: Policy) -> String {
        match truncate_text(content, policy) {
            None => content.to_owned(),
            Some(cut) => format!(
                "Total output lines: {}\n\n{}",
                content.lines().count(),
                cut.text
            ),
        }
    }

    fn split(s: &str, b: usize, e: usize) -> (usize, &str, &str) {
        let (removed, prefix_end, suffix_start) = split_string(s, b, e);
        (removed, &s[..prefix_end], &s[suffix_start..])
    }

    #[test]
    fn split_string_keeps_whole_characters_at_both_ends() {
        assert_eq!(split("hello world", 5, 5), (1, "hello", "world"));
        assert_eq!(split("abc", 0, 0), (3, "", ""));
        assert_eq!(split("", 4, 4), (0, "", ""));
        assert_eq!(split("abcdef", 3, 0), (3, "abc", ""));
        assert_eq!(split("abcdef", 0, 3), (3, "", "def"));
        assert_eq!(split("abcdef", 4, 4), (0, "abcd", "ef"));
        assert_eq!(split("😀abc😀", 5, 5), (1, "😀a", "c😀"));
        assert_eq!(split("😀😀😀😀😀", 1, 1), (5, "", ""));
        assert_eq!(split("😀😀😀😀😀", 7, 7), (3, "😀", "😀"));
        assert_eq!(split("😀😀😀😀😀", 8, 8), (1, "😀😀", "😀😀"));
    }

    #[test]
    fn the_token_budget_cut_matches_codex_s_vectors() {
        assert_eq!(truncate_text("short output", Policy::Tokens(100)), None);
        assert_eq!(
            truncate_text("abcdef", Policy::Tokens(0)).unwrap().text,
            "…2 tokens truncated…"
        );
        let s = "😀😀😀😀😀😀😀😀😀😀\nsecond line with text\n";
        assert_eq!(
            truncate_text(s, Policy::Tokens(8)).unwrap().text,
            "😀😀😀😀…8 tokens truncated… line with text\n"
        );
        assert_eq!(
            truncate_text(s, Policy::Bytes(20)).unwrap().text,
            "😀😀…21 chars truncated…with text\n"
        );
    }

    #[test]
    fn the_formatted_vectors_of_output_truncation_hold() {
        let content = "example output";
        assert_eq!(
            formatted(content, Policy::Bytes(1)),
            "Total output lines: 1\n\n…13 chars truncated…t"
        );
        assert_eq!(
            formatted(content, Policy::Tokens(1)),
            "Total output lines: 1\n\nex…3 tokens truncated…ut"
        );
        assert_eq!(formatted(content, Policy::Tokens(10)), content);
        assert_eq!(formatted(content, Policy::Bytes(20)), content);
        let long = "this is an example of a long output that should be truncated";
        assert_eq!(
            formatted(long, Policy::Tokens(5)),
            "Total output lines: 1\n\nthis is an…10 tokens truncated… truncated"
        );
        assert_eq!(
            formatted(long, Policy::Bytes(30)),
            "Total output lines: 1\n\nthis is an exam…30 chars truncated…ld be truncated"
        );
        let two =
            "this is an example of a long output that should be truncated\nalso some other line";
        assert_eq!(
            formatted(two, Policy::Bytes(30)),
            "Total output lines: 2\n\nthis is an exam…51 chars truncated…some other line"
        );
        assert_eq!(
            formatted(two, Policy::Tokens(10)),
            "Total output lines: 2\n\nthis is an example o…11 tokens truncated…also some other line"
        );
        // The merged text items of the content-items vectors.
        assert_eq!(
            formatted("abcd\nefgh\nijkl", Policy::Bytes(8)),
            "Total output lines: 3\n\nabcd…6 chars truncated…ijkl"
        );
        assert_eq!(
            formatted("abcdefgh\nijklmnop", Policy::Tokens(2)),
            "Total output lines: 2\n\nabcd…3 tokens truncated…mnop"
        );
        assert_eq!(
            formatted("abc", Policy::Bytes(0)),
            "Total output lines: 1\n\n…3 chars truncated…"
        );
    }

    #[test]
    fn the_0_56_cap_matches_codex_s_vectors() {
        let limit_bytes = 10 * 1024;
        let limit_lines = 256;
        let within = "example output\n".repeat(10);
        assert_eq!(
            format_output_for_model_body(&within, limit_bytes, limit_lines),
            None
        );

        let total = limit_lines + 100;
        let content: String = (0..total).map(|i| format!("line-{i}\n")).collect();
        let out = format_output_for_model_body(&content, limit_bytes, limit_lines)
            .unwrap()
            .text;
        assert!(out.starts_with(&format!("Total output lines: {total}\n\nline-0\n")));
        assert!(out.contains(&format!("[... omitted 100 of {total} lines ...]")));
        assert!(out.contains(&format!("line-{}\n", total - 1)));

        let long_line = "a".repeat(limit_bytes + 50);
        let out = format_output_for_model_body(&long_line, limit_bytes, limit_lines)
            .unwrap()
            .text;
        assert!(out.contains(&format!(
            "[... output truncated to fit {limit_bytes} bytes ...]"
        )));
        assert!(!out.contains("omitted"));

        let total = limit_lines + 42;
        let x = "x".repeat(256);
        let content: String = (0..total).map(|i| format!("line-{i}-{x}\n")).collect();
        let out = format_output_for_model_body(&content, limit_bytes, limit_lines)
            .unwrap()
            .text;
        assert!(out.contains(&format!("[... omitted 42 of {total} lines ...]")));
        assert!(!out.contains("output truncated to fit"));

        let line = "very long execution error line that should trigger truncation\n";
        let large = line.repeat(2_500);
        let out = format_output_for_model_body(&large, limit_bytes, limit_lines)
            .unwrap()
            .text;
        let body = out.strip_prefix("Total output lines: 2500\n\n").unwrap();
        assert!(body.starts_with(line));
        assert!(body.len() <= limit_bytes);
    }

    #[test]
    fn the_framing_is_the_json_of_the_content_array() {
        let input = ToolResultInput {
            text: "Found 1 match\n\na.rs\nLine 1: \"x\"".to_owned(),
            ..ToolResultInput::default()
        };
        let lensed = V0_55.apply(&input, &Knobs::default());
        let expected =
            serde_json::to_string(&serde_json::json!([{"type": "text", "text": input.text}]))
                .unwrap();
        assert_eq!(lensed.text, expected);
        assert_eq!(lensed.cut, Cut::None);
    }

    #[test]
    fn the_default_budget_is_12_000_tokens_or_48_000_bytes() {
        let input = ToolResultInput {
            text: "a".repeat(48_000 - 27),
            ..ToolResultInput::default()
        };
        let lensed = V0_59.apply(&input, &Knobs::default());
        assert_eq!(lensed.framed.text().len(), 48_000);
        assert_eq!(lensed.cut, Cut::None);
        let input = ToolResultInput {
            text: "a".repeat(48_000 - 26),
            ..ToolResultInput::default()
        };
        let lensed = V0_59.apply(&input, &Knobs::default());
        assert_eq!(lensed.cut, Cut::Middle);
        assert!(
            lensed.text.contains("…1 tokens truncated…"),
            "{}",
            lensed.text
        );
    }

    #[test]
    fn the_wall_time_comes_before_the_json() {
        let input = ToolResultInput {
            text: "No matches found".to_owned(),
            duration_secs: Some(0.25),
            ..ToolResultInput::default()
        };
        let lensed = V0_120.apply(&input, &Knobs::default());
        assert_eq!(
            lensed.text,
            "Wall time: 0.2500 seconds\nOutput:\n[{\"type\":\"text\",\"text\":\"No matches found\"}]"
        );
    }

    proptest! {
        #[test]
        fn the_middle_cut_keeps_utf8_and_adds_up(s in "\\PC{0,200}", budget in 0usize..120, tokens: bool) {
            let policy = if tokens { Policy::Tokens(budget) } else { Policy::Bytes(budget) };
            let max = if tokens { budget * 4 } else { budget };
            match truncate_text(&s, policy) {
                None => prop_assert!(s.is_empty() || s.len() <= max),
                Some(cut) => {
                    let kept: usize = cut.kept.iter().map(|r| r.len()).sum();
                    prop_assert!(kept <= s.len());
                    for r in &cut.kept {
                        prop_assert!(s.is_char_boundary(r.start) && s.is_char_boundary(r.end));
                        prop_assert!(cut.text.contains(&s[r.clone()]));
                    }
                    prop_assert!(kept <= max);
                }
            }
        }

        #[test]
        fn the_0_56_cap_keeps_utf8_within_the_byte_cap(s in "(\\PC{0,30}\n){0,40}", bytes in 1usize..300, lines in 1usize..20) {
            if let Some(cut) = format_output_for_model_body(&s, bytes, lines) {
                let kept: usize = cut.kept.iter().map(|r| r.len()).sum();
                prop_assert!(kept <= bytes);
                for r in &cut.kept {
                    prop_assert!(s.is_char_boundary(r.start) && s.is_char_boundary(r.end));
                }
            } else {
                prop_assert!(s.len() <= bytes && s.lines().count() <= lines);
            }
        }
    }
}
