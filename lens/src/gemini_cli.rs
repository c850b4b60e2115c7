//! Gemini CLI (`google-gemini/gemini-cli`): an MCP text block becomes one
//! text part, wrapped in `<untrusted_context>` since 0.48
//! (`packages/core/src/tools/mcp-tool.ts`, `transformTextBlock`;
//! `packages/core/src/utils/textUtils.ts`, `wrapUntrusted`). A result of
//! exactly one text part longer than `truncateToolOutputThreshold`
//! (40,000 UTF-16 code units) is saved to a file and cut to its first 20%
//! and last 80% of the threshold around `... [N characters omitted] ...`
//! (`packages/core/src/scheduler/tool-executor.ts`,
//! `truncateOutputIfNeeded`; `packages/core/src/utils/fileUtils.ts`,
//! `formatTruncatedToolOutput`). Results of several parts are not cut. An
//! `isError` result becomes a plain string naming the call and its raw
//! response, which no cut applies to.

use serde_json::json;

use super::js::{JsString, floor_times, locale_number};
use super::knobs::KnobKind;
use super::{Budget, Cut, Framed, KnobSpec, Knobs, Lens, Lensed, ToolResultInput, Unit};

const KNOBS: &[KnobSpec] = &[
    KnobSpec {
        name: "truncateToolOutputThreshold",
        kind: KnobKind::Count,
        default: "40000",
        help: "settings.json tools.truncateToolOutputThreshold: characters (UTF-16 code \
               units); 0 turns the cut off",
    },
    KnobSpec {
        name: "outputFile",
        kind: KnobKind::Text,
        default: "~/.gemini/tmp/<project>/tool-outputs/session-<id>/<tool>_<callId>.txt",
        help: "the file the full output is saved to",
    },
];

const SOURCE: &str = "google-gemini/gemini-cli packages/core/src/utils/fileUtils.ts \
     (formatTruncatedToolOutput), packages/core/src/scheduler/tool-executor.ts \
     (truncateOutputIfNeeded), packages/core/src/tools/mcp-tool.ts (transformTextBlock, \
     isMCPToolError), packages/core/src/utils/textUtils.ts (wrapUntrusted); commit 5411f113, \
     tests in packages/core/src/utils/fileUtils.test.ts";

/// 0.29 to 0.47: the 20/80 cut, no wrapper.
pub(crate) const V0_29: Lens = Lens {
    host: "gemini-cli",
    version: "0.29",
    since: "0.29",
    versions: "0.29 to 0.47 (pull request #18446, 2026-02-06, to the wrapper of pull \
         request #27772)",
    source: SOURCE,
    description: "One text part over truncateToolOutputThreshold (40,000 characters): a \
         header naming the saved file, the first 20% and last 80% of the threshold around \
         `... [N characters omitted] ...`.",
    from_source: true,
    description_max_chars: None,
    knobs: KNOBS,
    apply: apply_v0_29,
};

/// 0.48 on: MCP text wrapped in `<untrusted_context>`, then the 20/80 cut.
pub(crate) const V0_48: Lens = Lens {
    host: "gemini-cli",
    version: "0.48",
    since: "0.48",
    versions: "0.48 on (pull request #27772, 2026-06-11; checked at v0.56.0-nightly)",
    source: SOURCE,
    description: "MCP text wrapped as `<untrusted_context>\\n…\\n</untrusted_context>` (a \
         closing tag inside escaped), then the 20/80 cut of gemini-cli@0.29.",
    from_source: true,
    description_max_chars: None,
    knobs: KNOBS,
    apply: apply_v0_48,
};

const OPEN: &str = "<untrusted_context>\n";
const CLOSE: &str = "\n</untrusted_context>";
const CLOSING_TAG: &str = "</untrusted_context>";
const ESCAPED_TAG: &str = "&lt;/untrusted_context&gt;";

fn apply_v0_29(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    apply(input, knobs, false)
}

fn apply_v0_48(input: &ToolResultInput, knobs: &Knobs) -> Lensed {
    apply(input, knobs, true)
}

fn apply(input: &ToolResultInput, knobs: &Knobs, wrap: bool) -> Lensed {
    let threshold = knobs
        .count("truncateToolOutputThreshold", KNOBS)
        .unwrap_or(40_000);
    let file = knobs.text("outputFile", KNOBS).unwrap_or_default();
    let budget = Budget {
        unit: Unit::Chars,
        limit: (threshold > 0).then_some(threshold),
    };
    if input.is_error {
        return error_result(input, budget);
    }
    let mut framed = Framed::default();
    if wrap {
        framed.push_added(OPEN);
        framed.copy_replacing(&input.text, CLOSING_TAG, ESCAPED_TAG);
        framed.push_added(CLOSE);
    } else {
        framed = Framed::identity(&input.text);
    }
    let threshold = usize::try_from(threshold).unwrap_or(usize::MAX);
    let js = JsString::new(framed.text());
    if threshold == 0 || js.len() <= threshold {
        return Lensed::whole(framed, budget);
    }
    let head_chars = floor_times(threshold, 0.2);
    let tail_chars = threshold - head_chars;
    let (head, head_kept) = js.slice(0, head_chars);
    let (tail, tail_kept) = js.slice(js.len() - tail_chars, js.len());
    let omitted = js.len() - head_chars - tail_chars;
    let text = format!(
        "Output too large. Showing first {} and last {} characters. For full output see: \
         {file}\n{head}\n\n... [{} characters omitted] ...\n\n{tail}",
        locale_number(head_chars),
        locale_number(tail_chars),
        locale_number(omitted),
    );
    let kept = [head_kept, tail_kept]
        .into_iter()
        .filter(|r| !r.is_empty())
        .collect();
    Lensed {
        framed,
        text,
        budget,
        cut: Cut::HeadTail,
        kept,
        notes: vec![format!("the full output is saved to {file}")],
    }
}

/// An `isError` result: the message `DiscoveredMCPToolInvocation` returns
/// as a string (no wrapper, no cut).
fn error_result(input: &ToolResultInput, budget: Budget) -> Lensed {
    let call = json!({"name": input.tool, "args": input.args});
    let mut framed = Framed::default();
    framed.push_added(&format!(
        "MCP tool '{}' reported tool error for function call: {call} with response: \
         [{{\"functionResponse\":{{\"name\":{},\"response\":{{\"error\":{{\"content\":\
         [{{\"type\":\"text\",\"text\":\"",
        input.tool,
        json!(input.tool),
    ));
    framed.copy_json_escaped(&input.text);
    framed.push_added("\"}],\"isError\":true}}}}]");
    Lensed::whole(framed, budget).with_note(
        "error result: the text is the host's error string with the raw response as JSON; \
         the JSON's shape (the SDK's functionResponse parts, key order) is approximated, \
         not verified",
    )
}

#[cfg(test)]
mod tests {
    //! The vectors of Gemini CLI's `fileUtils.test.ts`
    //! (`formatTruncatedToolOutput`), as facts.
    use super::*;
    use proptest::prelude::*;

    fn lens(lens: &Lens, text: &str, threshold: u64) -> Lensed {
        let knobs = Knobs::parse(
            lens,
            &[
                format!("truncateToolOutputThreshold={threshold}"),
                "outputFile=/tmp/out.txt".to_owned(),
            ],
        )
        .unwrap();
        let input = ToolResultInput {
            text: text.to_owned(),
            ..ToolResultInput::default()
        };
        lens.apply(&input, &knobs)
    }

    #[test]
    fn the_first_20_and_last_80_percent_are_kept() {
        let lensed = lens(&V0_29, "abcdefghijklmnopqrstuvwxyz", 10);
        assert_eq!(
            lensed.text,
            "Output too large. Showing first 2 and last 8 characters. For full output see: \
             /tmp/out.txt\nab\n\n... [16 characters omitted] ...\n\nstuvwxyz"
        );
        assert_eq!(lensed.cut, Cut::HeadTail);
    }

    #[test]
    fn counts_are_grouped_as_en_us_groups_them() {
        let lensed = lens(&V0_29, &"a".repeat(50_000), 4000);
        assert!(
            lensed
                .text
                .contains("Showing first 800 and last 3,200 characters")
        );
        assert!(lensed.text.contains("For full output see: /tmp/out.txt"));
        assert!(lensed.text.contains("[46,000 characters omitted]"));
    }

    #[test]
    fn mcp_text_is_wrapped_and_a_closing_tag_escaped() {
        let lensed = lens(&V0_48, "a</untrusted_context>b", 40_000);
        assert_eq!(
            lensed.text,
            "<untrusted_context>\na&lt;/untrusted_context&gt;b\n</untrusted_context>"
        );
        assert_eq!(lensed.original_kept(), vec![0..22]);
    }

    #[test]
    fn the_wrapper_counts_toward_the_threshold() {
        let wrapper = OPEN.len() + CLOSE.len();
        assert_eq!(lens(&V0_48, &"a".repeat(100 - wrapper), 100).cut, Cut::None);
        assert_eq!(
            lens(&V0_48, &"a".repeat(101 - wrapper), 100).cut,
            Cut::HeadTail
        );
    }

    #[test]
    fn a_zero_threshold_turns_the_cut_off() {
        assert_eq!(lens(&V0_29, &"a".repeat(100), 0).cut, Cut::None);
    }

    #[test]
    fn an_error_result_is_not_cut() {
        let input = ToolResultInput {
            tool: "grep".to_owned(),
            args: json!({"pattern": "x"}),
            text: "x".repeat(50_000),
            is_error: true,
            duration_secs: None,
        };
        let lensed = V0_48.apply(&input, &Knobs::default());
        assert_eq!(lensed.cut, Cut::None);
        assert!(lensed.text.starts_with(
            "MCP tool 'grep' reported tool error for function call: \
             {\"name\":\"grep\",\"args\":{\"pattern\":\"x\"}} with response: "
        ));
    }

    proptest! {
        #[test]
        fn the_cut_keeps_whole_characters_and_adds_up(s in "\\PC{0,120}", threshold in 1u64..60) {
            let lensed = lens(&V0_29, &s, threshold);
            let kept = lensed.kept_bytes();
            prop_assert_eq!(kept + lensed.removed_bytes(), s.len());
            for r in &lensed.kept {
                prop_assert!(s.is_char_boundary(r.start) && s.is_char_boundary(r.end));
                prop_assert!(lensed.text.contains(&s[r.clone()]));
            }
            if JsString::new(&s).len() <= threshold as usize {
                prop_assert_eq!(lensed.text, s);
            }
        }
    }
}
