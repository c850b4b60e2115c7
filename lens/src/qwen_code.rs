//! Qwen Code (`QwenLM/qwen-code`): the text parts of a tool's output are
//! joined with a newline and, past `truncateToolOutputThreshold` (25,000
//! UTF-16 code units) or `truncateToolOutputLines` (1,000 lines), saved to
//! a file and cut to a preview within the threshold: about a fifth of the
//! lines and of the characters from the head, the rest from the tail, a
//! line that does not fit sliced with `...`, around `\n\n---\n... [CONTENT
//! TRUNCATED] ...\n---\n\n`, under a header naming the file
//! (`packages/core/src/utils/truncation.ts`, `truncateLlmContent`,
//! `truncateToolOutput`, `truncateAndSaveToFile`). When the header and
//! preview would not be shorter than the output, the output passes whole.

use super::js::JsString;
use super::knobs::KnobKind;
use super::{Budget, Cut, Framed, KnobSpec, Knobs, Lens, Lensed, ToolResultInput, Unit};

const KNOBS: &[KnobSpec] = &[
    KnobSpec {
        name: "truncateToolOutputThreshold",
        kind: KnobKind::Count,
        default: "25000",
        help: "settings.json: characters (UTF-16 code units) before the cut; 0 turns it off",
    },
    KnobSpec {
        name: "truncateToolOutputLines",
        kind: KnobKind::Count,
        default: "1000",
        help: "settings.json: lines before the cut; 0 turns it off",
    },
    KnobSpec {
        name: "outputFile",
        kind: KnobKind::Text,
        default: "~/.qwen/tmp/<project>/<tool>_<12 hex digits>.output",
        help: "the file the full output is saved to",
    },
];

/// The current rule.
pub(crate) const CURRENT: Lens = Lens {
    host: "qwen-code",
    version: "current",
    since: "",
    versions: "releases with packages/core/src/utils/truncation.ts's budgeted preview (read at \
         commit 164a9a8e; earlier releases cut lines only, as Gemini CLI's 0.5 era did, and \
         are not modelled)",
    source: "QwenLM/qwen-code packages/core/src/utils/truncation.ts (truncateLlmContent, \
         truncateToolOutput, truncateAndSaveToFile; commit 164a9a8e), defaults in \
         packages/core/src/config/config.ts",
    description: "Past 25,000 characters or 1,000 lines: a header naming the saved file, then \
         a preview within the threshold, a fifth from the head and the rest from the tail \
         around `... [CONTENT TRUNCATED] ...`. Whether MCP results first take the MCP tool's \
         own truncateTextParts path is not verified; its output carries the same header, \
         which this pass leaves alone.",
    from_source: true,
    description_max_chars: None,
    knobs: KNOBS,
    apply,
};

/// The first words of every cut output; an output that starts with them
/// is not cut again.
const PREFIX: &str = "Tool output was too large and has been truncated";
const SEPARATOR: &str = "\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n";
const ELLIPSIS: &str = "...";

fn apply(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    let threshold = knobs
        .count("truncateToolOutputThreshold", KNOBS)
        .unwrap_or(25_000);
    let max_lines = knobs
        .count("truncateToolOutputLines", KNOBS)
        .unwrap_or(1000);
    let file = knobs.text("outputFile", KNOBS).unwrap_or_default();
    let budget = Budget {
        unit: Unit::Chars,
        limit: (threshold > 0 && max_lines > 0).then_some(threshold),
    };
    let framed = Framed::identity(&input.text);
    if input.text.trim().is_empty() {
        let mut empty = Framed::default();
        empty.push_added(&format!("({} completed with no output)", input.tool));
        return Lensed::whole(empty, budget)
            .with_note("an empty output is replaced by a no-output line");
    }
    if threshold == 0 || max_lines == 0 || input.text.starts_with(PREFIX) {
        return Lensed::whole(framed, budget);
    }
    let threshold = usize::try_from(threshold).unwrap_or(usize::MAX);
    let max_lines = usize::try_from(max_lines).unwrap_or(usize::MAX);
    let Some(preview) = preview(framed.text(), threshold, max_lines) else {
        return Lensed::whole(framed, budget);
    };
    let text = format!(
        "{PREFIX}.\nThe full output has been saved to: {file}\nTo read the complete output, use \
         the read_file tool with the absolute file path above.\nThe truncated output below \
         shows the beginning and end of the content. The marker '... [CONTENT TRUNCATED] ...' \
         indicates where content was removed.\n\nTruncated part of the output:\n{}",
        preview.text
    );
    if JsString::new(&text).len() >= JsString::new(framed.text()).len() {
        return Lensed::whole(framed, budget)
            .with_note("the cut would not be shorter than the output: it passes whole");
    }
    Lensed {
        framed,
        text,
        budget,
        cut: Cut::HeadTail,
        kept: preview.kept,
        notes: vec![format!("the full output is saved to {file}")],
    }
}

/// The preview of a cut output and the bytes of the output it keeps.
struct Preview {
    text: String,
    kept: Vec<std::ops::Range<usize>>,
}

/// `truncateAndSaveToFile`'s preview (keep `both`, preview budget = the
/// threshold); `None` when `content` is within both limits.
fn preview(content: &str, threshold: usize, max_lines: usize) -> Option<Preview> {
    let lines: Vec<&str> = content.split('\n').collect();
    let length = JsString::new(content).len();
    if length <= threshold && lines.len() <= max_lines {
        return None;
    }
    let mut starts = Vec::with_capacity(lines.len());
    let mut at = 0;
    for line in &lines {
        starts.push(at);
        at += line.len() + 1;
    }
    let effective = max_lines.min(lines.len());
    let head_count = (effective / 5).max(1);
    let tail_count = effective - head_count;
    let separator_units = SEPARATOR.len();
    let sep = if threshold > separator_units {
        SEPARATOR
    } else {
        ""
    };
    let content_budget = threshold as i64 - sep.len() as i64;
    let head_budget = content_budget.div_euclid(5);

    let mut beginning: Vec<String> = Vec::new();
    let mut head_end = 0usize;
    let mut head_chars: i64 = 0;
    for (i, line) in lines.iter().enumerate().take(head_count.min(lines.len())) {
        let remaining = head_budget - head_chars;
        if remaining <= 0 {
            break;
        }
        let units = JsString::new(line).len() as i64;
        if units + 1 > remaining {
            if remaining >= ELLIPSIS.len() as i64 {
                let (slice, whole) = JsString::new(line).slice(0, (remaining - 3) as usize);
                beginning.push(format!("{slice}{ELLIPSIS}"));
                head_end = starts[i] + whole.end;
            }
            head_chars = head_budget;
            break;
        }
        beginning.push((*line).to_owned());
        head_end = starts[i] + line.len();
        head_chars += units + 1;
    }

    let tail_budget = (content_budget - head_chars).max(0);
    let mut end: Vec<String> = Vec::new();
    let mut tail_start = content.len();
    let mut tail_chars: i64 = 0;
    let first_tail = lines.len().saturating_sub(tail_count).max(beginning.len());
    for i in (first_tail..lines.len()).rev() {
        let remaining = tail_budget - tail_chars;
        if remaining <= 0 {
            break;
        }
        let js = JsString::new(lines[i]);
        let units = js.len() as i64;
        if units + 1 > remaining {
            if remaining >= ELLIPSIS.len() as i64 {
                let slice_len = (remaining - 3) as usize;
                let (slice, whole) = if slice_len > 0 {
                    js.slice(js.len() - slice_len, js.len())
                } else {
                    (String::new(), lines[i].len()..lines[i].len())
                };
                end.insert(0, format!("{ELLIPSIS}{slice}"));
                tail_start = starts[i] + whole.start;
            }
            break;
        }
        end.insert(0, lines[i].to_owned());
        tail_start = starts[i];
        tail_chars += units + 1;
    }

    let text = format!("{}{sep}{}", beginning.join("\n"), end.join("\n"));
    let mut kept = Vec::new();
    if head_end > 0 {
        kept.push(0..head_end);
    }
    if tail_start < content.len() {
        kept.push(tail_start.max(head_end)..content.len());
    }
    Some(Preview { text, kept })
}

#[cfg(test)]
mod tests {
    //! Vectors of Qwen Code's `truncation.test.ts` (`truncateAndSaveToFile`
    //! at a 40,000-character threshold and 1,000 lines), as facts.
    use super::*;
    use proptest::prelude::*;

    fn lens(text: &str, threshold: u64, lines: u64) -> Lensed {
        let knobs = Knobs::parse(
            &CURRENT,
            &[
                format!("truncateToolOutputThreshold={threshold}"),
                format!("truncateToolOutputLines={lines}"),
                "outputFile=/tmp/test-file.output".to_owned(),
            ],
        )
        .unwrap();
        let input = ToolResultInput {
            tool: "grep".to_owned(),
            text: text.to_owned(),
            ..ToolResultInput::default()
        };
        CURRENT.apply(&input, &knobs)
    }

    #[test]
    fn content_within_both_limits_is_unchanged() {
        let lensed = lens("Short content", 40_000, 1000);
        assert_eq!(lensed.text, "Short content");
        assert_eq!(lensed.cut, Cut::None);
    }

    #[test]
    fn the_line_limit_cuts_under_the_character_threshold() {
        let content = vec!["short"; 2000].join("\n");
        let lensed = lens(&content, 40_000, 1000);
        assert_eq!(lensed.cut, Cut::HeadTail);
        assert!(lensed.text.starts_with(
            "Tool output was too large and has been truncated.\nThe full output has been saved to: /tmp/test-file.output\n"
        ));
        let preview = lensed
            .text
            .split("Truncated part of the output:\n")
            .nth(1)
            .unwrap();
        // Both ends of the lines: a fifth (200) from the head, 800 from the tail.
        let expected = format!(
            "{}\n\n---\n... [CONTENT TRUNCATED] ...\n---\n\n{}",
            vec!["short"; 200].join("\n"),
            vec!["short"; 800].join("\n")
        );
        assert_eq!(preview, expected);
    }

    #[test]
    fn a_long_line_is_sliced_with_an_ellipsis_within_the_budget() {
        let content = vec!["a".repeat(100); 10].join("\n");
        let lensed = lens(&content, 60, 1000);
        let preview = lensed
            .text
            .split("Truncated part of the output:\n")
            .nth(1)
            .unwrap();
        // Content budget 60 - 39 = 21: head budget 4 → "a..."; tail 21 - 4 = 17.
        assert_eq!(preview, format!("a...{SEPARATOR}...{}", "a".repeat(14)));
        assert_eq!(JsString::new(preview).len(), 60);
    }

    #[test]
    fn a_cut_no_shorter_than_the_output_leaves_it_whole() {
        let content = "a".repeat(100);
        assert_eq!(lens(&content, 90, 1000).cut, Cut::None);
    }

    #[test]
    fn output_already_cut_is_not_cut_again() {
        let content = format!("{PREFIX}.\n{}", "x".repeat(100_000));
        assert_eq!(lens(&content, 25_000, 1000).cut, Cut::None);
    }

    proptest! {
        #[test]
        fn the_preview_keeps_whole_characters_and_adds_up(
            s in "(\\PC{0,40}\n){0,20}\\PC{0,40}", threshold in 1u64..200, lines in 1u64..12
        ) {
            let lensed = lens(&s, threshold, lines);
            prop_assert_eq!(lensed.kept_bytes() + lensed.removed_bytes(), lensed.framed.text().len());
            if s.trim().is_empty() {
                prop_assert_eq!(lensed.text, "(grep completed with no output)");
                return Ok(());
            }
            for r in &lensed.kept {
                prop_assert!(s.is_char_boundary(r.start) && s.is_char_boundary(r.end));
                prop_assert!(lensed.text.contains(&s[r.clone()]));
            }
            if !s.trim().is_empty() && JsString::new(&s).len() <= threshold as usize && s.split('\n').count() <= lines as usize {
                prop_assert_eq!(&lensed.text, &s);
            }
        }
    }
}
