//! One agent host's report on a call's result: the page through its
//! lens, what the cut hides, a one-line summary. Shared by the headless
//! commands (`call --host`, `replay --host`, `ablate --host`) and the
//! interactive workbench's lens view, so neither reaches into the other.

use fs_search_engine::render::TextParts;
use fs_search_lens::{KnobValue, Knobs, Lens, Lensed, ToolResultInput, Verdict};
use fs_search_lens::{page_summary, page_verdict};
use serde_json::{Value, json};

/// A lensed page's budget as the JSON reports print it.
pub(crate) fn budget_json(lensed: &Lensed) -> Value {
    json!({"unit": lensed.budget.unit.as_str(), "limit": lensed.budget.limit})
}

/// One host's report on a call's result: the lensed text, what the cut
/// hides, a one-line summary.
pub(crate) struct HostReport {
    pub lens: &'static Lens,
    pub knobs: Knobs,
    pub lensed: Lensed,
    pub verdict: Verdict,
}

impl HostReport {
    /// `lens` applied to `input`, the page's parts at `parts` (the call's
    /// duration filling the knob that prints it).
    pub(crate) fn new(lens: &'static Lens, input: &ToolResultInput, parts: &TextParts) -> Self {
        let mut knobs = Knobs::default();
        if let Some(seconds) = input.duration_secs
            && lens.knobs.iter().any(|k| k.name == "wall_time_seconds")
        {
            knobs.set("wall_time_seconds", KnobValue::Number(seconds));
        }
        let lensed = lens.apply(input, &knobs);
        let verdict = page_verdict(&input.tool, &input.text, parts, &lensed.original_kept());
        Self {
            lens,
            knobs,
            lensed,
            verdict,
        }
    }

    pub(crate) fn summary(&self) -> String {
        page_summary(self.lens, &self.lensed, &self.verdict)
    }

    /// The report as `call --host --json` prints it.
    pub(crate) fn to_json(&self, tokens: Option<usize>) -> Value {
        json!({
            "host": self.lens.host,
            "version": self.lens.version,
            "knobs": self.knobs.effective(self.lens.knobs),
            "budget": budget_json(&self.lensed),
            "text": self.lensed.text,
            "cut": self.lensed.cut.as_str(),
            "keptBytes": self.lensed.kept_bytes(),
            "removedBytes": self.lensed.removed_bytes(),
            "tokens": tokens,
            "footerVisible": self.verdict.footer_visible,
            "locatorVisible": self.verdict.locator_visible,
            "grep": self.verdict.to_json()["grep"],
            "summary": self.summary(),
            "notes": self.lensed.notes,
        })
    }
}
