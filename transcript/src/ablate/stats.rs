//! What one variant costs, call by call and in total: page tokens (total,
//! p50, p95, max), how many calls were truncated, sampled and spilled,
//! the paths and matches the model no longer sees, and the calls whose
//! page differs from the baseline's.

use fs_search_engine::{
    Config, ToolResult,
    render::{COVERAGE_DEPTHS, GlobCoverage},
    value::ToolValue,
};
use fs_search_tokens::PrefixComparison;
use serde::Serialize;
use serde_json::{Map, Value};

/// What a page leaves out of the complete result.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PageFacts {
    /// The page shows fewer paths or matches than the call found.
    pub truncated: bool,
    /// A glob page over the cap whose paths were sampled across top-level
    /// entries (`sampleOverCapGlobResults`).
    pub sampled: bool,
    /// The complete result was saved to the spill store.
    pub spilled: bool,
    /// Glob paths found but not on the page.
    pub hidden_paths: u64,
    /// Grep matches found but not on the page.
    pub hidden_matches: u64,
}

impl PageFacts {
    /// The facts of `result`, run under `config` (an error result shows
    /// no value, so nothing of it is hidden).
    pub fn of(result: &ToolResult, config: &Config) -> Self {
        let spilled = result.spill.is_some();
        match &result.value {
            Some(ToolValue::Glob(value)) => {
                let cap = config.glob_max_results.as_usize_saturating();
                let hidden = value.paths.len().saturating_sub(cap) as u64;
                Self {
                    truncated: hidden > 0,
                    sampled: hidden > 0 && config.sample_over_cap_glob_results,
                    spilled,
                    hidden_paths: hidden,
                    hidden_matches: 0,
                }
            }
            Some(ToolValue::Grep(value)) => {
                let cap = config.grep_max_matches.as_usize_saturating();
                let hidden = value.matches.len().saturating_sub(cap) as u64;
                Self {
                    truncated: hidden > 0,
                    sampled: false,
                    spilled,
                    hidden_paths: 0,
                    hidden_matches: hidden,
                }
            }
            None => Self {
                spilled,
                ..Self::default()
            },
        }
    }
}

/// The coverage of an over-cap glob page under `config`: how far it
/// spans the directories of the complete result (`None` otherwise).
pub(crate) fn coverage_of(result: &ToolResult, config: &Config) -> Option<GlobCoverage> {
    match &result.value {
        Some(ToolValue::Glob(value)) => fs_search_engine::render::glob_page_coverage(value, config),
        _ => None,
    }
}

/// One call's page under one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PageStat {
    /// The input file as named on the command line.
    pub file: String,
    /// The record's name.
    pub record: String,
    pub tokens: u64,
    /// The page differs from the baseline's page of the same call.
    pub changed: bool,
    /// Paths or matches the call found that the page does not show.
    pub hidden: u64,
    /// The coverage of an over-cap glob page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub coverage: Option<GlobCoverage>,
}

/// The coverage of a variant's over-cap glob pages, averaged over them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CoverageSummary {
    /// Over-cap glob pages measured.
    pub pages: u64,
    /// Per depth 1–4: the mean share of the directories holding matches
    /// that a page reaches, over the pages whose result has directories
    /// that deep (`None` when none has).
    pub depth_shares: Vec<Option<f64>>,
    /// The mean largest share of a page under one top-level directory.
    pub largest_subtree_share: Option<f64>,
}

impl CoverageSummary {
    /// The averages over `pages`.
    pub fn of<'a>(pages: impl Iterator<Item = &'a GlobCoverage>) -> Self {
        let mut count = 0u64;
        let mut sums = [(0.0f64, 0u64); COVERAGE_DEPTHS];
        let mut largest = 0.0f64;
        for page in pages {
            count += 1;
            largest += page.largest_subtree_share;
            for (sum, depth) in sums.iter_mut().zip(&page.depths) {
                if let Some(share) = depth.share {
                    sum.0 += share;
                    sum.1 += 1;
                }
            }
        }
        Self {
            pages: count,
            depth_shares: sums
                .iter()
                .map(|&(sum, n)| (n > 0).then(|| sum / n as f64))
                .collect(),
            largest_subtree_share: (count > 0).then(|| largest / count as f64),
        }
    }
}

/// Page tokens over the calls: total, nearest-rank p50 and p95, max.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct TokenSummary {
    pub total: u64,
    pub p50: u64,
    pub p95: u64,
    pub max: u64,
}

impl TokenSummary {
    pub fn of(tokens: &[u64]) -> Self {
        let mut sorted = tokens.to_vec();
        sorted.sort_unstable();
        let rank = |p: usize| -> u64 {
            if sorted.is_empty() {
                return 0;
            }
            // Nearest rank: the smallest value with at least p% at or below it.
            let index = (p * sorted.len()).div_ceil(100).max(1) - 1;
            sorted[index.min(sorted.len() - 1)]
        };
        Self {
            total: sorted.iter().sum(),
            p50: rank(50),
            p95: rank(95),
            max: sorted.last().copied().unwrap_or(0),
        }
    }
}

/// The hidden paths and matches of a variant, summed over its calls.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Hidden {
    pub paths: u64,
    pub matches: u64,
}

/// The variant's prompt sections and tool definitions: their tokens, and
/// the KV prefix they share with the baseline's (baseline = A).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SurfaceStat {
    pub tokens: u64,
    pub kv_prefix: PrefixComparison,
}

impl SurfaceStat {
    /// Tokens of the baseline's cached prefix this variant invalidates.
    pub fn invalidated_tokens(&self) -> usize {
        self.kv_prefix
            .tokens_a
            .saturating_sub(self.kv_prefix.common_tokens)
    }
}

/// One variant's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantStats {
    /// The whole effective config (the first input's recorded config with
    /// the variant's values, defaults filled in).
    pub config: Value,
    /// The values the variant sets (empty: the baseline).
    #[serde(rename = "set")]
    pub overrides: Map<String, Value>,
    pub calls: u64,
    pub tokens: TokenSummary,
    pub truncated: u64,
    pub sampled: u64,
    pub spilled: u64,
    pub hidden: Hidden,
    pub surface: SurfaceStat,
    pub changed: u64,
    /// The coverage of its over-cap glob pages.
    pub coverage: CoverageSummary,
    pub pages: Vec<PageStat>,
}

impl VariantStats {
    pub fn new(overrides: Map<String, Value>, config: Value, surface: SurfaceStat) -> Self {
        Self {
            overrides,
            config,
            calls: 0,
            tokens: TokenSummary::default(),
            truncated: 0,
            sampled: 0,
            spilled: 0,
            hidden: Hidden::default(),
            surface,
            changed: 0,
            coverage: CoverageSummary::default(),
            pages: Vec::new(),
        }
    }

    /// Adds one call's page ([`VariantStats::finish`] sums up the tokens).
    pub fn add(&mut self, page: PageStat, facts: PageFacts) {
        self.calls += 1;
        self.truncated += u64::from(facts.truncated);
        self.sampled += u64::from(facts.sampled);
        self.spilled += u64::from(facts.spilled);
        self.hidden.paths += facts.hidden_paths;
        self.hidden.matches += facts.hidden_matches;
        self.changed += u64::from(page.changed);
        self.pages.push(page);
    }

    /// Sums up the page tokens once every call is in.
    pub fn finish(&mut self) {
        self.tokens = TokenSummary::of(&self.page_tokens());
        self.coverage = CoverageSummary::of(self.pages.iter().filter_map(|p| p.coverage.as_ref()));
    }

    /// Page tokens per call, in call order.
    pub fn page_tokens(&self) -> Vec<u64> {
        self.pages.iter().map(|p| p.tokens).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_summary_uses_nearest_rank_percentiles() {
        let tokens: Vec<u64> = (1..=20).collect();
        assert_eq!(
            TokenSummary::of(&tokens),
            TokenSummary {
                total: 210,
                p50: 10,
                p95: 19,
                max: 20
            }
        );
        assert_eq!(TokenSummary::of(&[7]).p95, 7);
        assert_eq!(TokenSummary::of(&[]), TokenSummary::default());
    }

    #[test]
    fn coverage_summary_averages_each_depth_over_the_pages_that_reach_it() {
        let shallow = fs_search_engine::helpers::measure_glob_coverage(
            &["a/1", "b/2", "c/3"],
            &["a/1", "b/2"],
            ".",
        );
        let deep = fs_search_engine::helpers::measure_glob_coverage(
            &["a/x/1", "a/y/2", "b/z/3"],
            &["a/x/1", "a/y/2"],
            ".",
        );
        let summary = CoverageSummary::of([&shallow, &deep].into_iter());
        assert_eq!(summary.pages, 2);
        assert_eq!(summary.depth_shares[0], Some((2.0 / 3.0 + 0.5) / 2.0));
        assert_eq!(summary.depth_shares[1], Some(2.0 / 3.0));
        assert_eq!(summary.depth_shares[2], None);
        assert_eq!(summary.largest_subtree_share, Some((0.5 + 1.0) / 2.0));
        assert_eq!(
            CoverageSummary::of(std::iter::empty()).largest_subtree_share,
            None
        );
    }
}
