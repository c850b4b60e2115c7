//! An ablation's figures for people and scripts: a Markdown table (the
//! default), CSV (one row per variant) and JSON (`{"variants": […]}`, the
//! baseline first, each with its pages).

use serde_json::{Value, json};

use super::run::Ablation;
use super::stats::{CoverageSummary, SurfaceStat, VariantStats};
use fs_search_process::thousands;

/// The keys the variants set, in the order first set.
fn set_keys(ablation: &Ablation) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for variant in &ablation.variants {
        for key in variant.overrides.keys() {
            if !keys.contains(key) {
                keys.push(key.clone());
            }
        }
    }
    keys
}

/// A variant's effective value of `key` (an opt-in that is off is absent
/// from the effective config: `false`, or `off` for a numeric one).
fn value_of(variant: &VariantStats, key: &str) -> String {
    match variant.config.get(key) {
        Some(value) => value.to_string(),
        None => match variant.overrides.get(key) {
            Some(value) => value.to_string(),
            None => {
                let numeric = fs_search_engine::request::CONFIG_KEYS.iter().any(|k| {
                    k.name == key
                        && k.kind == fs_search_engine::request::ConfigKind::OptInPositiveInteger
                });
                if numeric { "off" } else { "false" }.to_owned()
            }
        },
    }
}

fn share(count: u64, calls: u64) -> String {
    if calls == 0 {
        return count.to_string();
    }
    format!("{count} ({:.1}%)", 100.0 * count as f64 / calls as f64)
}

/// A share as a whole percentage, `–` when there is none.
fn percent(share: Option<f64>) -> String {
    share.map_or("–".to_owned(), |s| format!("{:.0}", 100.0 * s))
}

/// The coverage cell: the mean share of directories reached at depths
/// 1/2/3/4 over the variant's over-cap glob pages, in percent.
fn coverage_text(coverage: &CoverageSummary) -> String {
    if coverage.pages == 0 {
        return "–".to_owned();
    }
    let shares: Vec<String> = coverage.depth_shares.iter().map(|s| percent(*s)).collect();
    format!("{} %", shares.join("/"))
}

fn per_call(total: u64, calls: u64) -> String {
    if calls == 0 {
        return "0".to_owned();
    }
    format!("{:.2}", total as f64 / calls as f64)
}

/// The KV-prefix cell: identical, or where the baseline's cached prefix
/// stops being valid.
pub(crate) fn kv_prefix_text(surface: &SurfaceStat) -> String {
    let kv = &surface.kv_prefix;
    match &kv.first_difference {
        None => "identical".to_owned(),
        Some(first) => format!(
            "differs from {} {} at token {} of {}: {} invalidated",
            match first.part {
                fs_search_tokens::PartKind::Section => "section",
                fs_search_tokens::PartKind::Tool => "tool",
            },
            first.name,
            thousands(first.token_index),
            thousands(kv.tokens_a),
            thousands(surface.invalidated_tokens()),
        ),
    }
}

/// The Markdown table, one row per variant.
pub fn markdown(ablation: &Ablation) -> String {
    let keys = set_keys(ablation);
    let mut header: Vec<String> = vec!["variant".into()];
    header.extend(keys.iter().cloned());
    header.extend(
        [
            "calls",
            "page tokens",
            "p50",
            "p95",
            "max",
            "truncated",
            "sampled",
            "spilled",
            "hidden paths",
            "hidden matches",
            "hidden / call",
            "surface tokens",
            "KV prefix vs baseline",
            "pages changed",
            "glob coverage d1/d2/d3/d4",
            "largest subtree",
        ]
        .map(String::from),
    );
    let numeric = |column: &str| !matches!(column, "variant" | "KV prefix vs baseline");
    let mut out = format!("| {} |\n", header.join(" | "));
    let rule: Vec<&str> = header
        .iter()
        .map(|h| if numeric(h) { "---:" } else { "---" })
        .collect();
    out.push_str(&format!("|{}|\n", rule.join("|")));
    for (i, v) in ablation.variants.iter().enumerate() {
        let mut row = vec![if i == 0 {
            "baseline".to_owned()
        } else {
            i.to_string()
        }];
        row.extend(keys.iter().map(|k| value_of(v, k)));
        row.extend([
            v.calls.to_string(),
            thousands(v.tokens.total as usize),
            thousands(v.tokens.p50 as usize),
            thousands(v.tokens.p95 as usize),
            thousands(v.tokens.max as usize),
            share(v.truncated, v.calls),
            share(v.sampled, v.calls),
            share(v.spilled, v.calls),
            thousands(v.hidden.paths as usize),
            thousands(v.hidden.matches as usize),
            per_call(v.hidden.paths + v.hidden.matches, v.calls),
            thousands(v.surface.tokens as usize),
            kv_prefix_text(&v.surface),
            v.changed.to_string(),
            coverage_text(&v.coverage),
            match v.coverage.largest_subtree_share {
                Some(share) => format!("{} %", percent(Some(share))),
                None => "–".to_owned(),
            },
        ]);
        out.push_str(&format!("| {} |\n", row.join(" | ")));
    }
    out
}

/// One CSV field, quoted when it must be.
fn csv_field(field: &str) -> String {
    if field.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", field.replace('"', "\"\""))
    } else {
        field.to_owned()
    }
}

/// CSV: a header row, then one row per variant (plain numbers).
pub fn csv(ablation: &Ablation) -> String {
    let keys = set_keys(ablation);
    let mut header: Vec<String> = vec!["variant".into()];
    header.extend(keys.iter().cloned());
    header.extend(
        [
            "calls",
            "tokens_total",
            "tokens_p50",
            "tokens_p95",
            "tokens_max",
            "truncated",
            "sampled",
            "spilled",
            "hidden_paths",
            "hidden_matches",
            "surface_tokens",
            "kv_identical",
            "kv_common_tokens",
            "kv_invalidated_tokens",
            "kv_first_difference",
            "changed",
            "coverage_pages",
            "coverage_d1",
            "coverage_d2",
            "coverage_d3",
            "coverage_d4",
            "largest_subtree_share",
        ]
        .map(String::from),
    );
    let mut out = header
        .iter()
        .map(|h| csv_field(h))
        .collect::<Vec<_>>()
        .join(",");
    out.push('\n');
    for (i, v) in ablation.variants.iter().enumerate() {
        let kv = &v.surface.kv_prefix;
        let mut row = vec![if i == 0 {
            "baseline".to_owned()
        } else {
            i.to_string()
        }];
        row.extend(keys.iter().map(|k| value_of(v, k)));
        row.extend([
            v.calls.to_string(),
            v.tokens.total.to_string(),
            v.tokens.p50.to_string(),
            v.tokens.p95.to_string(),
            v.tokens.max.to_string(),
            v.truncated.to_string(),
            v.sampled.to_string(),
            v.spilled.to_string(),
            v.hidden.paths.to_string(),
            v.hidden.matches.to_string(),
            v.surface.tokens.to_string(),
            kv.identical.to_string(),
            kv.common_tokens.to_string(),
            v.surface.invalidated_tokens().to_string(),
            kv.first_difference
                .as_ref()
                .map(|f| f.name.clone())
                .unwrap_or_default(),
            v.changed.to_string(),
            v.coverage.pages.to_string(),
        ]);
        let optional = |share: Option<f64>| share.map(|s| format!("{s:.4}")).unwrap_or_default();
        row.extend(v.coverage.depth_shares.iter().map(|s| optional(*s)));
        row.push(optional(v.coverage.largest_subtree_share));
        out.push_str(
            &row.iter()
                .map(|f| csv_field(f))
                .collect::<Vec<_>>()
                .join(","),
        );
        out.push('\n');
    }
    out
}

/// The JSON object: `{"variants": [...], "rg": {"runs", "replays"}}`.
pub fn json(ablation: &Ablation) -> Value {
    json!({
        "variants": ablation.variants,
        "rg": {"runs": ablation.rg_runs, "replays": ablation.rg_replays},
    })
}
