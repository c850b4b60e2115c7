//! `workbench ablate … --host HOST`: what one agent host does to each
//! variant's pages. Every page is lensed from the `tools/call` result the
//! MCP server would send for it (`fs_search_mcp::of_tool_result` and
//! `lens_input`, the one home of that conversion), its footer and locator
//! taken from the engine's own parts; per variant it counts the calls the
//! host cuts, the grep matches on the page its cut hides, and the calls
//! whose spill locator it removes, and names each cut call. A replayed
//! call's duration is not the live one: the lens gets 0 s, as `replay
//! --host` does.

use serde_json::{Map, Value, json};

use crate::host_report::HostReport;
use fs_search_lens::{Cut, Lens};
use fs_search_transcript::PageEvent;

/// One call the host cuts.
#[derive(Debug, Clone)]
pub(crate) struct CutCall {
    pub file: String,
    pub record: String,
    pub cut: Cut,
    pub matches_unseen: usize,
    pub footer_visible: Option<bool>,
    pub locator_visible: Option<bool>,
    pub summary: String,
}

/// What the host does to one variant's pages.
#[derive(Debug, Clone, Default)]
pub(crate) struct VariantCuts {
    pub calls: u64,
    /// Calls whose page the host cuts.
    pub cut: u64,
    /// Grep matches on the pages that the host's model never sees.
    pub matches_hidden: u64,
    /// Calls whose page has a spill locator the host's cut removes.
    pub locators_removed: u64,
    pub cut_calls: Vec<CutCall>,
}

/// The host's cuts across an ablation's variants (the baseline first).
#[derive(Debug)]
pub(crate) struct HostCuts {
    pub lens: &'static Lens,
    /// The input files, by index, as named.
    files: Vec<String>,
    pub variants: Vec<VariantCuts>,
}

impl HostCuts {
    pub(crate) fn new(lens: &'static Lens, files: Vec<String>, variants: usize) -> Self {
        Self {
            lens,
            files,
            variants: vec![VariantCuts::default(); variants],
        }
    }

    /// Lenses one page of the ablation.
    pub(crate) fn add(&mut self, event: &PageEvent<'_>) {
        let sent = fs_search_mcp::of_tool_result(event.result, 0.0);
        let input = fs_search_mcp::lens_input(&sent, &event.call.tool, &event.call.args);
        let report = HostReport::new(self.lens, &input, &event.result.parts);
        let Some(variant) = self.variants.get_mut(event.variant) else {
            return;
        };
        variant.calls += 1;
        if report.lensed.cut == Cut::None {
            return;
        }
        variant.cut += 1;
        let matches_unseen = report.verdict.grep.as_ref().map_or(0, |g| g.matches_unseen);
        variant.matches_hidden += matches_unseen as u64;
        if report.verdict.locator_visible == Some(false) {
            variant.locators_removed += 1;
        }
        variant.cut_calls.push(CutCall {
            file: self.files.get(event.input).cloned().unwrap_or_default(),
            record: event.name.to_owned(),
            cut: report.lensed.cut,
            matches_unseen,
            footer_visible: report.verdict.footer_visible,
            locator_visible: report.verdict.locator_visible,
            summary: report.summary(),
        });
    }

    /// The section printed after the Markdown table: a table of the
    /// variants, then each cut call by variant.
    pub(crate) fn markdown(&self) -> String {
        let mut out = format!(
            "\nHost {} (its default knobs): what its model receives of each variant's pages\n\n",
            self.lens.name()
        );
        out.push_str(
            "| variant | calls | cut by host | matches hidden by host | locator removed |\n",
        );
        out.push_str("|---|---:|---:|---:|---:|\n");
        for (i, v) in self.variants.iter().enumerate() {
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} |\n",
                label(i),
                v.calls,
                v.cut,
                v.matches_hidden,
                v.locators_removed
            ));
        }
        for (i, v) in self.variants.iter().enumerate() {
            if v.cut_calls.is_empty() {
                continue;
            }
            out.push_str(&format!("\nCut in variant {}:\n", label(i)));
            for call in &v.cut_calls {
                out.push_str(&format!(
                    "- {} record \"{}\": {}\n",
                    call.file, call.record, call.summary
                ));
            }
        }
        out
    }

    /// The `host` object of `--json`: the lens, then per variant (the
    /// baseline first, with the overrides of `overrides`) its counts and
    /// cut calls.
    pub(crate) fn json(&self, overrides: &[Map<String, Value>]) -> Value {
        let variants: Vec<Value> = self
            .variants
            .iter()
            .enumerate()
            .map(|(i, v)| {
                json!({
                    "variant": label(i),
                    "overrides": overrides.get(i).cloned().unwrap_or_default(),
                    "calls": v.calls,
                    "callsCut": v.cut,
                    "matchesHidden": v.matches_hidden,
                    "locatorsRemoved": v.locators_removed,
                    "cut": v.cut_calls.iter().map(|c| json!({
                        "file": c.file,
                        "record": c.record,
                        "cut": c.cut.as_str(),
                        "matchesUnseen": c.matches_unseen,
                        "footerVisible": c.footer_visible,
                        "locatorVisible": c.locator_visible,
                        "summary": c.summary,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        json!({
            "host": self.lens.host,
            "version": self.lens.version,
            "variants": variants,
        })
    }
}

/// A variant's label as the table names it.
fn label(index: usize) -> String {
    if index == 0 {
        "baseline".to_owned()
    } else {
        index.to_string()
    }
}
