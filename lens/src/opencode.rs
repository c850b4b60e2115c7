//! opencode (`sst/opencode`, now `anomalyco/opencode`): an MCP result's
//! text blocks are joined with a blank line (`textParts.join("\n\n")` in
//! `packages/opencode/src/session/prompt.ts`) and go through
//! `Truncate.output` (`packages/opencode/src/tool/truncate.ts`): within
//! `tool_output.max_lines` (2,000) lines and `tool_output.max_bytes`
//! (50 KiB, UTF-8 bytes) the text passes; past either, whole lines are
//! kept from the head while both fit, the full text is saved under the
//! data directory's `tool-output/`, and the model gets the kept lines,
//! `...N bytes truncated...` (or `...N lines truncated...`, whichever
//! limit stopped it) and a hint naming the file. `isError` takes the same
//! path.

use super::knobs::KnobKind;
use super::{Budget, Cut, Framed, KnobSpec, Knobs, Lens, Lensed, ToolResultInput, Unit};

const KNOBS: &[KnobSpec] = &[
    KnobSpec {
        name: "tool_output.max_lines",
        kind: KnobKind::Count,
        default: "2000",
        help: "opencode.json: lines kept at most",
    },
    KnobSpec {
        name: "tool_output.max_bytes",
        kind: KnobKind::Count,
        default: "51200",
        help: "opencode.json: UTF-8 bytes kept at most",
    },
    KnobSpec {
        name: "task_permission",
        kind: KnobKind::Flag,
        default: "true",
        help: "the agent may use the Task tool (the default build agent may): the hint \
               says to delegate reading the file",
    },
    KnobSpec {
        name: "outputPath",
        kind: KnobKind::Text,
        default: "~/.local/share/opencode/tool-output/tool_<id>",
        help: "the file the full text is saved to (a fresh tool_ id per call)",
    },
];

/// The current rule.
pub(crate) const CURRENT: Lens = Lens {
    host: "opencode",
    version: "current",
    since: "",
    versions: "releases with tool_output.max_lines / max_bytes in opencode.json (the limits \
         were constants before; the first release is not verified here)",
    source: "anomalyco/opencode packages/opencode/src/tool/truncate.ts (Truncate.output; the \
         fork-carried copy read at commit 2e0f2320) and test/tool/truncation.test.ts (commit \
         0a3427d9); packages/opencode/src/session/prompt.ts (MCP text parts joined with \
         \"\\n\\n\")",
    description: "Text blocks joined with a blank line; past 2,000 lines or 50 KiB, whole lines \
         kept from the head, `...N bytes|lines truncated...` and a hint naming the saved \
         file.",
    from_source: true,
    description_max_chars: None,
    knobs: KNOBS,
    apply,
};

fn apply(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    let max_lines = knobs.count("tool_output.max_lines", KNOBS).unwrap_or(2000);
    let max_bytes = knobs
        .count("tool_output.max_bytes", KNOBS)
        .unwrap_or(51_200);
    let task = knobs.flag("task_permission", KNOBS).unwrap_or(true);
    let path = knobs.text("outputPath", KNOBS).unwrap_or_default();
    // One text block: the join is the text itself.
    let framed = Framed::identity(&input.text);
    let budget = Budget {
        unit: Unit::Bytes,
        limit: Some(max_bytes),
    };
    let Some(cut) = output(framed.text(), max_lines, max_bytes) else {
        return Lensed::whole(framed, budget);
    };
    let hint = if task {
        format!(
            "The tool call succeeded but the output was truncated. Full output saved to: \
             {path}\nUse the Task tool to have explore agent process this file with Grep and \
             Read (with offset/limit). Do NOT read the full file yourself - delegate to save \
             context."
        )
    } else {
        format!(
            "The tool call succeeded but the output was truncated. Full output saved to: \
             {path}\nUse Grep to search the full content or Read with offset/limit to view \
             specific sections."
        )
    };
    let preview = &framed.text()[..cut.preview_end];
    let text = format!(
        "{preview}\n\n...{} {} truncated...\n\n{hint}",
        cut.removed, cut.unit
    );
    let kept = if cut.preview_end > 0 {
        std::iter::once(0..cut.preview_end).collect()
    } else {
        Vec::new()
    };
    Lensed {
        framed,
        text,
        budget: Budget {
            unit: if cut.unit == "lines" {
                Unit::Lines
            } else {
                Unit::Bytes
            },
            limit: Some(if cut.unit == "lines" {
                max_lines
            } else {
                max_bytes
            }),
        },
        cut: Cut::Head,
        kept,
        notes: vec![format!("the full text is saved to {path}")],
    }
}

/// A head cut: where the kept lines end, how much was removed, in what.
#[derive(Debug, PartialEq, Eq)]
struct HeadCut {
    preview_end: usize,
    removed: usize,
    unit: &'static str,
}

/// `Truncate.output` with direction `head`: `None` when `text` fits.
fn output(text: &str, max_lines: u64, max_bytes: u64) -> Option<HeadCut> {
    let lines: Vec<&str> = text.split('\n').collect();
    let total = text.len() as u64;
    if lines.len() as u64 <= max_lines && total <= max_bytes {
        return None;
    }
    let mut bytes: u64 = 0;
    let mut kept = 0usize;
    let mut hit_bytes = false;
    for (i, line) in lines.iter().enumerate() {
        if i as u64 >= max_lines {
            break;
        }
        let size = line.len() as u64 + u64::from(i > 0);
        if bytes + size > max_bytes {
            hit_bytes = true;
            break;
        }
        bytes += size;
        kept += 1;
    }
    let preview_end = usize::try_from(bytes).unwrap_or(text.len());
    Some(if hit_bytes {
        HeadCut {
            preview_end,
            removed: usize::try_from(total - bytes).unwrap_or(usize::MAX),
            unit: "bytes",
        }
    } else {
        HeadCut {
            preview_end,
            removed: lines.len() - kept,
            unit: "lines",
        }
    })
}

#[cfg(test)]
mod tests {
    //! The vectors of opencode's `test/tool/truncation.test.ts`, as facts.
    use super::*;
    use proptest::prelude::*;

    fn lens(text: &str, settings: &[&str]) -> Lensed {
        let settings: Vec<String> = settings.iter().map(|s| (*s).to_owned()).collect();
        let knobs = Knobs::parse(&CURRENT, &settings).unwrap();
        let input = ToolResultInput {
            text: text.to_owned(),
            ..ToolResultInput::default()
        };
        CURRENT.apply(&input, &knobs)
    }

    #[test]
    fn content_under_the_limits_is_unchanged() {
        let lensed = lens("line1\nline2\nline3", &[]);
        assert_eq!(lensed.text, "line1\nline2\nline3");
        assert_eq!(lensed.cut, Cut::None);
    }

    #[test]
    fn a_line_cap_removes_the_rest_in_lines() {
        let lines: Vec<String> = (0..100).map(|i| format!("line{i}")).collect();
        let lensed = lens(&lines.join("\n"), &["tool_output.max_lines=10"]);
        assert!(
            lensed.text.contains("...90 lines truncated..."),
            "{}",
            lensed.text
        );
        assert!(lensed.text.starts_with("line0\nline1\n"));
        assert!(
            lensed
                .text
                .contains("The tool call succeeded but the output was truncated")
        );
        assert!(lensed.text.contains("Task tool"));
    }

    #[test]
    fn a_byte_cap_removes_the_rest_in_bytes() {
        let lensed = lens(&"a".repeat(1000), &["tool_output.max_bytes=100"]);
        // One line longer than the cap: nothing of it is kept.
        assert!(
            lensed
                .text
                .starts_with("\n\n...1000 bytes truncated...\n\n"),
            "{}",
            lensed.text
        );
        assert_eq!(lensed.kept_bytes(), 0);
    }

    #[test]
    fn the_head_is_kept_and_the_tail_is_not() {
        let lines: Vec<String> = (0..10).map(|i| format!("line{i}")).collect();
        let lensed = lens(&lines.join("\n"), &["tool_output.max_lines=3"]);
        assert!(
            lensed
                .text
                .starts_with("line0\nline1\nline2\n\n...7 lines truncated...")
        );
        assert!(!lensed.text.contains("line9"));
    }

    #[test]
    fn without_the_task_permission_the_hint_names_grep_only() {
        let lines: Vec<String> = (0..100).map(|i| format!("line{i}")).collect();
        let lensed = lens(
            &lines.join("\n"),
            &["tool_output.max_lines=10", "task_permission=false"],
        );
        assert!(lensed.text.contains("Grep"));
        assert!(!lensed.text.contains("Task tool"));
    }

    #[test]
    fn the_defaults_are_2000_lines_and_50_kib() {
        let lines = vec!["x"; 2000].join("\n");
        assert_eq!(lens(&lines, &[]).cut, Cut::None);
        let lines = vec!["x"; 2001].join("\n");
        assert!(lens(&lines, &[]).text.contains("...1 lines truncated..."));
        assert_eq!(lens(&"y".repeat(51_200), &[]).cut, Cut::None);
        assert_eq!(lens(&"y".repeat(51_201), &[]).cut, Cut::Head);
    }

    proptest! {
        #[test]
        fn the_kept_head_is_whole_lines_within_both_caps(
            s in "(\\PC{0,20}\n){0,30}\\PC{0,20}", lines in 1u64..40, bytes in 0u64..400
        ) {
            match output(&s, lines, bytes) {
                None => prop_assert!(s.len() as u64 <= bytes && s.split('\n').count() as u64 <= lines),
                Some(cut) => {
                    let head = &s[..cut.preview_end];
                    prop_assert!(head.len() as u64 <= bytes);
                    prop_assert!(cut.preview_end == s.len() || s[cut.preview_end..].starts_with('\n') || cut.preview_end == 0);
                    if cut.unit == "bytes" {
                        prop_assert_eq!(cut.preview_end + cut.removed, s.len());
                    }
                }
            }
        }
    }
}
