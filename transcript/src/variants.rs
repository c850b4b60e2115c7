//! One fixture for every rg: adding rg-version variants to a transcript
//! (the format's `{"variant":NAME,"rg":N,…}` blocks, [`crate::format`]).
//!
//! - [`with_variant_added`]: a replayed transcript with the variant of
//!   the rg that replayed it added to each record whose page differs
//!   (`workbench replay --add-variant`, and `freeze --also-rg` per rg);
//!   every other record, and every other rg's variant, stays as it was.
//!   It refuses under the rg major the transcript was frozen with: there
//!   the recorded results are that rg's own, and accepting a change is
//!   `--update`'s job.
//! - Release variants (`{"variant":NAME,"contract":R,…}`): under
//!   `replay --contract R` (R not the header's release), the same two
//!   add R's variant instead ([`RecordCheck::updated_record`]): the one for any
//!   rg, or, where that one exists and this rg's page differs from it,
//!   the one for this rg major.
//! - [`missing_variant_note`]: what a replay under an rg major with no
//!   variant says when a page differs: the rg the fixture was frozen with
//!   and the command that adds this rg's variant.

use fs_search_engine::release::Release;

use super::error::TranscriptError;
use super::format::Transcript;
use super::replay::{RecordCheck, Replay};

/// A transcript with the replaying rg's variant added.
#[derive(Debug, Clone)]
pub struct VariantAdded {
    pub transcript: Transcript,
    /// The rg major version the variants are for (of release variants:
    /// the rg that replayed them).
    pub major: u32,
    /// The release whose variants were added (`None`: rg variants).
    pub release: Option<Release>,
    /// The names of the records whose variant for `major` was added,
    /// replaced or (back to the recorded result) removed, in file order.
    pub records: Vec<String>,
}

/// `replay`'s transcript with, for each record whose page under this
/// run's rg differs from what it expects, this rg major's variant set to
/// the current page (removed where the current page is the recorded
/// result itself). Records that match are left as they were, byte for
/// byte once written, and so are all variants for other majors. Refused
/// when this rg's major is unknown, when the header's is, or when they
/// are the same.
pub fn with_variant_added(replay: &Replay) -> Result<VariantAdded, TranscriptError> {
    if replay.release != replay.transcript.header.contract {
        return Ok(with_release_variant_added(replay));
    }
    let file = &replay.file;
    let frozen_with = &replay.transcript.header.env.rg;
    let now = &replay.rg_now;
    let Some(major) = fs_search_process::major_of_line(now) else {
        return Err(TranscriptError::Other(format!(
            "{file}: cannot add a variant for this rg (\"{now}\"): its major version is unknown"
        )));
    };
    let Some(recorded) = fs_search_process::major_of_line(frozen_with) else {
        return Err(TranscriptError::Other(format!(
            "{file}: its header names no rg version (\"{frozen_with}\"), so its results belong to no rg a variant could differ from; `workbench replay --update {file}` records this rg's"
        )));
    };
    if recorded == major {
        return Err(TranscriptError::Other(format!(
            "{file} was frozen with {frozen_with}, the same major version as this {now}: its recorded results are rg {major}'s own and there is no variant to add (to accept changed results: `workbench replay --update {file}`)"
        )));
    }
    let mut transcript = replay.transcript.clone();
    let mut records = Vec::new();
    for (record, check) in transcript.records.iter_mut().zip(&replay.checks) {
        if check.matches() {
            continue;
        }
        if record.outcome.matches(&check.current) {
            record.variants.remove(&major);
        } else {
            record.variants.insert(major, check.current.clone());
        }
        records.push(record.call.name.clone());
    }
    Ok(VariantAdded {
        transcript,
        major,
        records,
        release: None,
    })
}

/// As [`with_variant_added`] for a replay as another release than the
/// header's: that release's variant, for each record whose page differs.
fn with_release_variant_added(replay: &Replay) -> VariantAdded {
    let mut transcript = replay.transcript.clone();
    let mut records = Vec::new();
    for (record, check) in transcript.records.iter_mut().zip(&replay.checks) {
        if check.matches() {
            continue;
        }
        *record = check.updated_record();
        records.push(record.call.name.clone());
    }
    VariantAdded {
        transcript,
        major: replay.checks.first().and_then(|c| c.rg_major).unwrap_or(0),
        records,
        release: Some(replay.release),
    }
}

/// Whether `check` was compared with what another rg major version
/// wrote: this rg's major is not the header's and the record has no
/// variant for it.
pub(crate) fn compared_with_another_rg(check: &RecordCheck) -> bool {
    check.release_variant().is_none()
        && check.variant().is_none()
        && check.rg_major != check.recorded_major
}

/// For a replay where a record compared with another rg's text changed:
/// which rg the fixture was frozen with, which rg this is, and the
/// command that adds this rg's variant; `None` when no such record
/// changed.
pub(crate) fn missing_variant_note(replay: &Replay) -> Option<String> {
    let count = replay
        .changed()
        .filter(|c| compared_with_another_rg(c))
        .count();
    if count == 0 {
        return None;
    }
    let major = replay.checks.first().and_then(|c| c.rg_major);
    let this = major.map_or_else(|| "this rg".to_owned(), |m| format!("rg {m}"));
    Some(format!(
        "{} was frozen with {} and has no variant for {this} ({}) in {count} changed record{}: \
         if {this}'s pages are right, add its variant with `workbench replay --add-variant {}` \
         run under {this} (or freeze with `--also-rg DIR` naming it), then review `git diff`",
        replay.file,
        replay.transcript.header.env.rg,
        replay.rg_now,
        if count == 1 { "" } else { "s" },
        replay.file,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Call, CallOptions, Header, Outcome, Record, ReleaseKey, TranscriptEnv};
    use std::sync::Arc;

    fn outcome(text: &str) -> Outcome {
        Outcome {
            is_error: false,
            error: None,
            spill: None,
            warnings: Vec::new(),
            text: text.into(),
            tokens: None,
        }
    }

    fn record(name: &str, text: &str) -> Record {
        Record {
            line: 0,
            call: Call {
                name: name.into(),
                tool: "glob".into(),
                args: serde_json::json!({"pattern": "*"}),
                options: CallOptions::default(),
            },
            outcome: outcome(text),
            variants: Default::default(),
            releases: Default::default(),
        }
    }

    /// A replay under `now` of a transcript frozen with rg 13: record
    /// "same" gives its recorded page, "moved" another, and "back" its
    /// recorded page while it carries a stale rg 15 variant.
    fn replay(now: &str) -> Replay {
        let mut back = record("back", "a\nb");
        back.variants.insert(15, outcome("b\na"));
        back.variants.insert(14, outcome("b\na"));
        let records = vec![record("same", "x"), record("moved", "a\nb"), back];
        let currents = ["x", "b\na", "a\nb"];
        let header = Header {
            contract: Default::default(),
            tree: ".".into(),
            config: serde_json::json!({}),
            env: TranscriptEnv {
                rg: "ripgrep 13.0.0".into(),
                ripgrep_config: Vec::new(),
                executor: None,
            },
        };
        let checks = records
            .iter()
            .zip(currents)
            .map(|(record, text)| RecordCheck {
                record: record.clone(),
                current: outcome(text),
                rg_major: fs_search_process::major_of_line(now),
                recorded_major: Some(13),
                release: Default::default(),
                recorded_release: Default::default(),
                order_free: false,
            })
            .collect();
        let tree = crate::fixture_engine::EngineTree::prepare(
            &std::env::temp_dir(),
            &std::env::temp_dir(),
        )
        .unwrap();
        Replay {
            file: "f.jsonl".into(),
            transcript: crate::format::Transcript { header, records },
            checks,
            rg_now: now.into(),
            release: Default::default(),
            tree: Arc::new(tree),
        }
    }

    #[test]
    fn adding_a_variant_touches_only_the_records_that_differ_under_this_rg() {
        let before = replay("ripgrep 15.2.0");
        let added = with_variant_added(&before).unwrap();
        assert_eq!(added.major, 15);
        assert_eq!(added.records, ["moved", "back"]);
        let [same, moved, back] = &added.transcript.records[..] else {
            panic!("three records");
        };
        assert_eq!(same, &before.transcript.records[0]);
        assert_eq!(moved.outcome, before.transcript.records[1].outcome);
        assert_eq!(moved.variants[&15].text, "b\na");
        // The stale rg 15 variant goes; rg 14's stays.
        assert!(!back.variants.contains_key(&15));
        assert_eq!(back.variants[&14].text, "b\na");
        assert_eq!(added.transcript.header, before.transcript.header);
    }

    #[test]
    fn adding_a_variant_under_the_rg_major_it_was_frozen_with_is_refused() {
        let e = with_variant_added(&replay("ripgrep 13.0.0")).unwrap_err();
        let message = e.to_string();
        assert!(
            message.starts_with("f.jsonl was frozen with ripgrep 13.0.0, the same major version"),
            "{message}"
        );
        assert!(
            message.contains("`workbench replay --update f.jsonl`"),
            "{message}"
        );
    }

    #[test]
    fn the_missing_variant_note_names_the_frozen_rg_and_the_command() {
        let note = missing_variant_note(&replay("ripgrep 14.1.1")).unwrap();
        assert!(
            note.starts_with(
                "f.jsonl was frozen with ripgrep 13.0.0 and has no variant for rg 14 (ripgrep 14.1.1) in 1 changed record:"
            ),
            "{note}"
        );
        assert!(
            note.contains("`workbench replay --add-variant f.jsonl`"),
            "{note}"
        );
        // Under the frozen rg a change is the engine's, not a missing variant.
        assert_eq!(missing_variant_note(&replay("ripgrep 13.0.0")), None);
    }

    /// A check of `record` replayed as rc.8 under rg `major` giving `text`.
    fn rc8_check(record: &Record, major: u32, text: &str) -> RecordCheck {
        RecordCheck {
            record: record.clone(),
            current: outcome(text),
            rg_major: Some(major),
            recorded_major: Some(13),
            release: Release::Rc8,
            recorded_release: Release::Seed,
            order_free: false,
        }
    }

    fn key(rg: Option<u32>) -> ReleaseKey {
        ReleaseKey {
            contract: Release::Rc8,
            rg,
        }
    }

    #[test]
    fn a_release_variant_is_for_any_rg_unless_the_page_depends_on_the_rg() {
        // No rg variants: rc.8's page is one for every rg.
        let mut plain = record("cwd", "unusable working directory");
        let check = rc8_check(&plain, 13, "launch failed");
        plain = check.updated_record();
        assert_eq!(
            plain.releases.keys().copied().collect::<Vec<_>>(),
            [key(None)]
        );
        // Another rg giving another page gets its own.
        let check = rc8_check(&plain, 15, "rg 15's");
        plain = check.updated_record();
        assert_eq!(plain.releases[&key(Some(15))].text, "rg 15's");
        // And loses it where its page is the one for any rg again.
        let check = rc8_check(&plain, 15, "launch failed");
        plain = check.updated_record();
        assert!(!plain.releases.contains_key(&key(Some(15))));
        // rg variants: rc.8's page under rg 13 is rg 13's own.
        let mut rg_text = record("missing", "IO error for operation on x");
        rg_text.variants.insert(15, outcome("rg: x: IO error"));
        let check = rc8_check(&rg_text, 13, "x: No such file");
        rg_text = check.updated_record();
        assert_eq!(
            rg_text.releases.keys().copied().collect::<Vec<_>>(),
            [key(Some(13))]
        );
        assert_eq!(rg_text.outcome.text, "IO error for operation on x");
    }
}
