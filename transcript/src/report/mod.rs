//! What a replay found, told three ways: [`human`] (the report for a
//! person reading a log), [`junit`] (a JUnit XML file for CI systems) and
//! [`github`] (GitHub Actions workflow commands and a step summary). This
//! module holds what they share: the verdict on each replayed record, so
//! that a changed record, a record over the `--max-tokens` budget and a
//! record compared with text another rg wrote are told apart the same way
//! in every format.

pub(crate) mod github;
pub(crate) mod human;
pub(crate) mod junit;

use super::batch::{FileReplay, Shard};
use super::error::TranscriptError;
use super::order_free::Comparison;
use super::replay::{Difference, RecordCheck, Replay};

/// What every report is told besides the replays.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReportOptions {
    /// `--max-tokens`: a current text longer than this fails the record.
    pub max_tokens: Option<u64>,
    /// `--shard`: the share of the records replayed.
    pub shard: Option<Shard>,
}

/// One transcript as reported: its replay, or why it could not be
/// replayed; `updated` when `--update` rewrote it.
#[derive(Debug)]
pub struct FileReport {
    /// The file as named on the command line.
    pub file: String,
    pub result: Result<FileReplay, TranscriptError>,
    pub updated: bool,
}

impl FileReport {
    /// The line of the transcript an error names, if any.
    pub fn error_line(&self) -> Option<usize> {
        match &self.result {
            Err(TranscriptError::Parse { line, .. } | TranscriptError::Setup { line, .. }) => {
                Some(*line)
            }
            _ => None,
        }
    }
}

/// The verdict on one replayed record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Verdict {
    /// How it differs from what was recorded for this rg; `None`: it
    /// matches.
    pub difference: Option<Difference>,
    /// Its current text's tokens, when more than `--max-tokens`.
    pub over_budget: Option<u64>,
    /// It was compared with text another rg major version wrote (the
    /// header's rg is not this one and the record has no variant for it).
    pub other_rg: bool,
}

impl Verdict {
    pub(crate) fn of(check: &RecordCheck, max_tokens: Option<u64>) -> Self {
        Self {
            difference: check.difference(),
            over_budget: max_tokens
                .and_then(|max| check.current.tokens.filter(|tokens| *tokens > max)),
            other_rg: crate::variants::compared_with_another_rg(check),
        }
    }
}

/// A recorded outcome of a record that this run does not compare with:
/// one for another rg major version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SkippedSnapshot {
    /// `rg 15`, or the header's rg version line for the record's own outcome.
    pub label: String,
    /// Why it is skipped.
    pub reason: String,
}

/// The outcomes `check`'s record holds for other rg major versions than
/// this run's: its variants but the compared one, and its own outcome
/// when a variant was compared instead.
pub(crate) fn skipped_snapshots(
    check: &RecordCheck,
    rg_now: &str,
    rg_recorded: &str,
) -> Vec<SkippedSnapshot> {
    let compared = check.variant();
    let release = check.release_variant();
    let mut skipped = Vec::new();
    if compared.is_some() || release.is_some() {
        skipped.push(SkippedSnapshot {
            label: rg_recorded.to_owned(),
            reason: format!(
                "the result recorded with {rg_recorded}; this run ({rg_now}) compares with its variant"
            ),
        });
    }
    for major in check.record.variants.keys() {
        if Some(*major) != compared {
            skipped.push(SkippedSnapshot {
                label: format!("rg {major}"),
                reason: format!("the variant for rg {major}; this run is {rg_now}"),
            });
        }
    }
    for key in check.record.releases.keys() {
        if Some(*key) != release {
            skipped.push(SkippedSnapshot {
                label: key.label(),
                reason: format!(
                    "the variant for {}; this run is {} under {rg_now}",
                    key.label(),
                    check.release
                ),
            });
        }
    }
    skipped
}

/// What the compared outcome was recorded with: the release variant, the
/// variant's rg, or the header's rg version line.
pub(crate) fn compared_with(check: &RecordCheck, replay: &Replay) -> String {
    if let Some(key) = check.release_variant() {
        return format!("the variant for {}", key.label());
    }
    match check.variant() {
        Some(major) => format!("the variant for rg {major}"),
        None => replay.transcript.header.env.rg.clone(),
    }
}

/// Why a record was not compared exactly ([`Comparison`]), as every
/// report says it; `None` for an exact comparison.
pub(crate) fn comparison_note(check: &RecordCheck) -> Option<String> {
    let release = check.release;
    match check.comparison() {
        Comparison::Exact => None,
        Comparison::Unordered => Some(format!(
            "compared without order: {release} runs rg with --no-config, so the header's --sort never reaches it and a grep lists files in rg's own order; the page's blocks were compared as a set"
        )),
        Comparison::MatchesNotCompared => Some(format!(
            "the matches shown were not compared ({release}'s order is rg's: --no-config keeps the header's --sort from rg, and a capped page shows the matches rg found first); its summary line, footer, spill and number of matches shown were"
        )),
    }
}

/// The records of `replay` compared without order, by kind: the
/// full pages compared as a set of blocks, and the capped pages whose
/// matches shown were not compared (record names, quoted).
pub(crate) fn order_free_records(replay: &Replay) -> (Vec<String>, Vec<String>) {
    let names = |kind| {
        replay
            .checks
            .iter()
            .filter(|c| c.comparison() == kind)
            .map(|c| format!("\"{}\"", c.record.call.name))
            .collect::<Vec<_>>()
    };
    (
        names(Comparison::Unordered),
        names(Comparison::MatchesNotCompared),
    )
}

/// Counts over a set of replayed records.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub records: usize,
    pub matching: usize,
    pub engine: usize,
    pub rg_text: usize,
    pub over_budget: usize,
    /// Records compared with text another rg major version wrote.
    pub other_rg: usize,
    pub skipped: usize,
    pub updated: usize,
    /// Tokens of the compared recorded texts / the current texts, summed
    /// over the records that carry both.
    pub tokens_before: Option<u64>,
    pub tokens_after: Option<u64>,
}

impl Counts {
    pub(crate) fn of(report: &FileReport, options: &ReportOptions) -> Self {
        let mut counts = Self::default();
        let Ok(done) = &report.result else {
            return counts;
        };
        let replay = &done.replay;
        for check in &replay.checks {
            let verdict = Verdict::of(check, options.max_tokens);
            counts.records += 1;
            match verdict.difference {
                None => counts.matching += 1,
                Some(_) if report.updated => counts.updated += 1,
                Some(Difference::Engine) => counts.engine += 1,
                Some(Difference::RgText) => counts.rg_text += 1,
            }
            counts.over_budget += usize::from(verdict.over_budget.is_some());
            counts.other_rg += usize::from(verdict.other_rg);
            counts.skipped +=
                skipped_snapshots(check, &replay.rg_now, &replay.transcript.header.env.rg).len();
            if let (Some(before), Some(after)) = (check.expected().tokens, check.current.tokens) {
                *counts.tokens_before.get_or_insert(0) += before;
                *counts.tokens_after.get_or_insert(0) += after;
            }
        }
        counts
    }

    /// The records that differ and were not accepted by `--update`.
    pub(crate) fn changed(&self) -> usize {
        self.engine + self.rg_text
    }

    pub(crate) fn add(&mut self, other: &Self) {
        self.records += other.records;
        self.matching += other.matching;
        self.engine += other.engine;
        self.rg_text += other.rg_text;
        self.over_budget += other.over_budget;
        self.other_rg += other.other_rg;
        self.skipped += other.skipped;
        self.updated += other.updated;
        for (sum, part) in [
            (&mut self.tokens_before, other.tokens_before),
            (&mut self.tokens_after, other.tokens_after),
        ] {
            if let Some(part) = part {
                *sum.get_or_insert(0) += part;
            }
        }
    }
}

/// The note a replay as another release than the header's gets (`None`
/// when it is the header's).
pub fn other_release_note(replay: &Replay) -> Option<String> {
    let header = replay.transcript.header.contract;
    (replay.release != header).then(|| {
        format!(
            "{} was recorded as {header}, this replay runs it as {} (records compare with its {} variants where they have one)",
            replay.file, replay.release, replay.release
        )
    })
}

/// The note a replay under another rg major version than the header's
/// gets (`None` when the versions are the same).
pub fn other_rg_note(replay: &Replay) -> Option<String> {
    (replay.transcript.header.env.rg != replay.rg_now).then(|| {
        format!(
            "{} was recorded with {}, this is {}",
            replay.file, replay.transcript.header.env.rg, replay.rg_now
        )
    })
}
