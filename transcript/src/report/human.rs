//! The report for a person reading a log (`workbench replay`'s stdout, the
//! panic of [`crate::assert`]): per file `ok …`, `updated …`,
//! or a unified diff per changed record, `CHANGED …` and the changed
//! records by kind of difference (and, for records compared with what
//! another rg major wrote, the rg the file was frozen with and the
//! command that adds this rg's variant); an `OVER BUDGET …` line per record over
//! `--max-tokens`; a `note:` line naming the grep pages compared without
//! order (0.1.0-rc.8 leaves their order to rg), and the capped ones whose
//! matches shown were not compared.

use super::{ReportOptions, Verdict, order_free_records};
use crate::replay::{Difference, Replay};
use crate::variants::missing_variant_note;

/// The report of one replayed file; `updated`: `--update` rewrote its
/// changed records.
pub fn file_text(replay: &Replay, options: &ReportOptions, updated: bool) -> String {
    let over = over_budget(replay, options.max_tokens);
    let total = replay.checks.len();
    let changed = replay.changed().count();
    let share = match options.shard {
        Some(shard) => format!(" in shard {shard}"),
        None => String::new(),
    };
    let order = order_note(replay);
    if changed == 0 {
        return format!(
            "ok {}: {total} records{share} match\n{order}{over}",
            replay.file
        );
    }
    if updated {
        return format!(
            "updated {}: {changed} of {total} records{share} rewritten\n{order}{over}",
            replay.file
        );
    }
    let missing_variant = missing_variant_note(replay)
        .map(|note| format!("  {note}\n"))
        .unwrap_or_default();
    format!(
        "{}CHANGED {}: {changed} of {total} records{share} differ (run `workbench replay --update {}` to accept)\n{}{missing_variant}{order}{over}",
        replay.diffs(),
        replay.file,
        replay.file,
        difference_kinds(replay)
    )
}

/// The note on records not compared exactly: grep pages whose order rc.8
/// leaves to rg (`--no-config` keeps the header's `--sort` from it).
fn order_note(replay: &Replay) -> String {
    let (unordered, not_compared) = order_free_records(replay);
    let mut out = String::new();
    if !unordered.is_empty() {
        out.push_str(&format!(
            "  note: {} grep page{} compared without order ({} lists files in rg's own order: --no-config keeps the header's --sort from rg): {}\n",
            unordered.len(),
            if unordered.len() == 1 { "" } else { "s" },
            replay.release,
            unordered.join(", ")
        ));
    }
    if !not_compared.is_empty() {
        out.push_str(&format!(
            "  note: {} capped grep page{}: the matches shown were not compared ({}'s order is rg's), only the summary line, footer, spill and number of matches shown: {}\n",
            not_compared.len(),
            if not_compared.len() == 1 { "" } else { "s" },
            replay.release,
            not_compared.join(", ")
        ));
    }
    out
}

/// The changed records by kind of difference: only in rg's own text
/// (its stderr, glob's file order; `--update` then adds this rg's
/// variant), or in the engine's text.
fn difference_kinds(replay: &Replay) -> String {
    let names = |kind| {
        replay
            .changed_by(kind)
            .map(|c| format!("\"{}\"", c.record.call.name))
            .collect::<Vec<_>>()
    };
    let rg_text = names(Difference::RgText);
    let engine = names(Difference::Engine);
    let mut out = String::new();
    if !rg_text.is_empty() {
        out.push_str(&format!(
            "  {} only in rg's own text (its stderr, its file order; recorded with {}, this is {}): {}\n",
            rg_text.len(),
            replay.transcript.header.env.rg,
            replay.rg_now,
            rg_text.join(", ")
        ));
    }
    if !engine.is_empty() {
        out.push_str(&format!(
            "  {} in the engine's text or the kind of result: {}\n",
            engine.len(),
            engine.join(", ")
        ));
    }
    out
}

/// One line per result whose current text is more than `max` tokens
/// (`OVER BUDGET FILE:LINE record "NAME": …`).
pub fn over_budget(replay: &Replay, max: Option<u64>) -> String {
    let Some(max) = max else {
        return String::new();
    };
    replay
        .checks
        .iter()
        .filter_map(|check| {
            let tokens = Verdict::of(check, Some(max)).over_budget?;
            Some(format!(
                "OVER BUDGET {}:{} record \"{}\": {tokens} tokens > --max-tokens {max}\n",
                replay.file, check.record.line, check.record.call.name
            ))
        })
        .collect()
}

/// Whether the file fails the run: a difference not accepted by
/// `--update`, or a record over the budget.
pub fn fails(replay: &Replay, options: &ReportOptions, updated: bool) -> bool {
    replay.checks.iter().any(|check| {
        let verdict = Verdict::of(check, options.max_tokens);
        verdict.over_budget.is_some() || (!updated && verdict.difference.is_some())
    })
}
