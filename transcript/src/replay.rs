//! Replay: re-run every recorded call and compare what the model sees now
//! with what was recorded for this rg (the record's variant for this rg's
//! major version, else its outcome); a changed record becomes a unified
//! diff of its transcript lines (so the diff reads like the change
//! `--update` would make to the file), headed by the file, line and record
//! name, and is classified ([`Difference`]): only rg's own text, or the
//! engine's. `--update` under another rg major than the header's keeps the
//! recorded outcome and adds the current one as that version's variant.

use std::path::Path;
use std::sync::Arc;

use fs_search_engine::release::Release;
use similar::TextDiff;

use super::error::TranscriptError;
use super::fixture_engine::{EngineTree, FixtureEngine, rg_version_for};
use super::format::{self, Header, Outcome, Record, ReleaseKey, Transcript, tree_path};
use super::order_free::{Comparison, order_free};
use super::other_rg::OtherRg;
use super::parse;
pub(crate) use super::rg_text::Difference;
use fs_search_process::ExecutorKind;

/// One record: recorded and current outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordCheck {
    pub record: Record,
    pub current: Outcome,
    /// The rg major version of this run.
    pub rg_major: Option<u32>,
    /// The rg major version of the header (the record's own outcome).
    pub recorded_major: Option<u32>,
    /// The release this run replays as.
    pub release: Release,
    /// The header's release (the record's own outcome's).
    pub recorded_release: Release,
    /// Nothing pins the page's order under this run
    /// (a grep run as 0.1.0-rc.8 under a `--sort` rg config): its page is compared
    /// without order ([`Comparison`]).
    pub order_free: bool,
}

impl RecordCheck {
    /// The check of `record`'s `current` outcome, replayed as `release`
    /// under rg `rg_major`, of a transcript with `header`.
    pub fn new(
        header: &Header,
        record: Record,
        current: Outcome,
        release: Release,
        rg_major: Option<u32>,
    ) -> Self {
        Self {
            order_free: order_free(header, release, &record.call),
            recorded_major: fs_search_process::major_of_line(&header.env.rg),
            recorded_release: header.contract,
            record,
            current,
            rg_major,
            release,
        }
    }

    /// The outcome recorded for this run's release and rg.
    pub fn expected(&self) -> &Outcome {
        self.record
            .expected_as(self.recorded_release, self.release, self.rg_major)
    }

    /// The release variant compared, if any.
    pub fn release_variant(&self) -> Option<ReleaseKey> {
        self.record
            .release_variant(self.recorded_release, self.release, self.rg_major)
    }

    /// The rg major version whose variant is compared, if any (none when
    /// a release variant is).
    pub fn variant(&self) -> Option<u32> {
        if self.release_variant().is_some() {
            return None;
        }
        self.rg_major
            .filter(|m| self.record.variants.contains_key(m))
    }

    /// How the page is compared: exactly, or (a grep page whose order
    /// nothing pins) without order.
    pub fn comparison(&self) -> Comparison {
        Comparison::of(self.order_free, self.expected(), &self.current)
    }

    pub fn matches(&self) -> bool {
        self.comparison().matches(self.expected(), &self.current)
    }

    /// How the record differs; `None` when it matches. Only a comparison
    /// with what another rg major version wrote can differ in rg's text.
    pub fn difference(&self) -> Option<Difference> {
        if self.matches() {
            return None;
        }
        let other_rg = self.release_variant().is_none()
            && self.variant().is_none()
            && self.rg_major != self.recorded_major;
        if !other_rg {
            return Some(Difference::Engine);
        }
        Some(Difference::of(
            &self.record.call.tool,
            self.expected(),
            &self.current,
        ))
    }

    /// The record as `--update` leaves it: as another release than the
    /// header's, the current outcome becomes that release's variant
    /// ([`set_release_variant`]); under the header's rg
    /// major (or an unknown one) the current outcome replaces the
    /// recorded one; under another, it becomes that version's variant
    /// (none when it equals the recorded outcome).
    pub fn updated_record(&self) -> Record {
        let mut record = self.record.clone();
        if self.release != self.recorded_release {
            set_release_variant(&mut record, self);
            return record;
        }
        match self.rg_major {
            Some(major) if self.recorded_major.is_some_and(|r| r != major) => {
                if record.outcome.matches(&self.current) {
                    record.variants.remove(&major);
                } else {
                    record.variants.insert(major, self.current.clone());
                }
            }
            _ => record.outcome = self.current.clone(),
        }
        record
    }

    /// The compared block as the file holds it and as the current outcome
    /// would write it, the line it starts at, and how the diff names it.
    fn compared_block(&self) -> (usize, String, String, String) {
        let name = &self.record.call.name;
        let line_count = |block: &str| block.lines().count();
        let mut start = self.record.line + 1;
        let own = format::outcome_lines(name, &self.record.outcome);
        if let Some(key) = self.release_variant() {
            start += line_count(&own);
            for (m, outcome) in &self.record.variants {
                start += line_count(&format::variant_lines(name, *m, outcome));
            }
            for (k, outcome) in self.record.releases.range(..key) {
                start += line_count(&format::release_variant_lines(name, *k, outcome));
            }
            return (
                start,
                format::release_variant_lines(name, key, self.expected()),
                format::release_variant_lines(name, key, &self.current),
                format!("recorded for {}", key.label()),
            );
        }
        match self.variant() {
            Some(major) => {
                start += line_count(&own);
                for (m, outcome) in self.record.variants.range(..major) {
                    start += line_count(&format::variant_lines(name, *m, outcome));
                }
                (
                    start,
                    format::variant_lines(name, major, self.expected()),
                    format::variant_lines(name, major, &self.current),
                    format!("recorded for rg {major}"),
                )
            }
            None => (
                start,
                own,
                format::outcome_lines(name, &self.current),
                "recorded".to_owned(),
            ),
        }
    }

    /// The transcript line of the first recorded text line that differs
    /// from the current outcome (else the result or variant line, where
    /// only it differs: the error, spill or token count), counted in the
    /// file as the format writes it: the result line follows the call
    /// line, its text lines follow it, then each variant's block in rg
    /// order, then the release variants'. For a current outcome that only
    /// adds text lines, the compared block's last line. `None` when the
    /// record matches.
    pub fn first_changed_line(&self) -> Option<usize> {
        if self.matches() {
            return None;
        }
        let (start, old, new, _) = self.compared_block();
        let old: Vec<&str> = old.lines().collect();
        let new: Vec<&str> = new.lines().collect();
        // The result line (index 0) carries the token count, which any
        // change of text changes too: a text line is the better place.
        let first_text = (1..old.len().max(new.len())).find(|i| old.get(*i) != new.get(*i));
        let index = first_text.map_or(0, |i| i.min(old.len().saturating_sub(1)));
        Some(start + index)
    }

    /// The unified diff of the record's result and text lines, recorded
    /// (`-`) against current (`+`); empty when they match.
    pub fn diff(&self, file: &str) -> String {
        if self.matches() {
            return String::new();
        }
        let name = &self.record.call.name;
        let (_, old, new, recorded) = self.compared_block();
        TextDiff::from_lines(&old, &new)
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("{file}:{} record \"{name}\" ({recorded})", self.record.line),
                &format!(
                    "{file}:{} record \"{name}\" (replayed now)",
                    self.record.line
                ),
            )
            .to_string()
    }
}

/// The replay of one transcript.
#[derive(Debug, Clone)]
pub struct Replay {
    /// The file as named on the command line.
    pub file: String,
    pub transcript: Transcript,
    pub checks: Vec<RecordCheck>,
    /// The rg version of this run.
    pub rg_now: String,
    /// The release this run replayed as (the header's, unless `replay
    /// --contract` named another).
    pub release: Release,
    /// The tree the records ran in, kept while the replay is (the TUI
    /// explains a replayed record there, `crate::explain::recorded`).
    pub tree: Arc<EngineTree>,
}

impl Replay {
    pub fn changed(&self) -> impl Iterator<Item = &RecordCheck> {
        self.checks.iter().filter(|c| !c.matches())
    }

    pub fn all_match(&self) -> bool {
        self.changed().next().is_none()
    }

    /// All diffs, one per changed record.
    pub fn diffs(&self) -> String {
        self.changed().map(|c| c.diff(&self.file)).collect()
    }

    /// Whether any recorded result carries a token count.
    pub fn carries_tokens(&self) -> bool {
        self.transcript
            .records
            .iter()
            .any(|r| r.outcome.tokens.is_some())
    }

    /// Counts the tokens of every current result's text.
    pub fn count_tokens(&mut self, tokenizer: &fs_search_tokens::Tokenizer) {
        for check in &mut self.checks {
            check.current.tokens = Some(tokenizer.count(&check.current.text) as u64);
        }
    }

    /// The changed records with the given kind of difference.
    pub fn changed_by(&self, kind: Difference) -> impl Iterator<Item = &RecordCheck> {
        self.checks
            .iter()
            .filter(move |c| c.difference() == Some(kind))
    }

    /// The transcript with every current outcome accepted (`--update`):
    /// see `RecordCheck::updated_record`. The header names this rg when
    /// it is of the header's major version (or either is unknown).
    pub fn updated(&self) -> Transcript {
        let mut transcript = self.transcript.clone();
        let recorded = fs_search_process::major_of_line(&transcript.header.env.rg);
        let now = fs_search_process::major_of_line(&self.rg_now);
        let own_release = self.release == transcript.header.contract;
        if own_release && (recorded.is_none() || now.is_none() || recorded == now) {
            transcript.header.env.rg = self.rg_now.clone();
        }
        for (record, check) in transcript.records.iter_mut().zip(&self.checks) {
            *record = check.updated_record();
        }
        transcript
    }
}

/// Sets `check`'s current outcome as `record`'s variant for the release
/// `check` ran as: the one for any rg, unless the record's page already
/// depends on the rg (it has rg variants, or a variant for any rg that
/// this rg's page differs from): then the one for this rg major, removed
/// again where this rg's page is what the record gives it without one.
fn set_release_variant(record: &mut Record, check: &RecordCheck) {
    let any = ReleaseKey {
        contract: check.release,
        rg: None,
    };
    let Some(major) = check.rg_major else {
        record.releases.insert(any, check.current.clone());
        return;
    };
    let this_rg = ReleaseKey {
        contract: check.release,
        rg: Some(major),
    };
    let fallback = match record.releases.get(&any) {
        Some(outcome) => outcome.clone(),
        None if record.variants.is_empty() => {
            record.releases.remove(&this_rg);
            record.releases.insert(any, check.current.clone());
            return;
        }
        None => record.expected_for(Some(major)).clone(),
    };
    let kind = Comparison::of(check.order_free, &fallback, &check.current);
    if kind.matches(&fallback, &check.current) {
        record.releases.remove(&this_rg);
    } else {
        record.releases.insert(this_rg, check.current.clone());
    }
}

/// Replays `transcript` (read from `file`) with temp dirs under
/// `temp_parent`, its calls run under the `executor` kind.
pub(crate) async fn replay_transcript(
    file: &Path,
    transcript: Transcript,
    temp_parent: &Path,
    executor: ExecutorKind,
) -> Result<Replay, TranscriptError> {
    replay_under(file, transcript, temp_parent, executor, None, None).await
}

/// As `replay_transcript`, as `release` instead of the header's (`None`:
/// the header's).
pub async fn replay_transcript_as(
    file: &Path,
    transcript: Transcript,
    temp_parent: &Path,
    executor: ExecutorKind,
    release: Option<Release>,
) -> Result<Replay, TranscriptError> {
    replay_under(file, transcript, temp_parent, executor, None, release).await
}

/// As `replay_transcript` with the local executor and `rg`, not the rg
/// on `PATH`, answering the calls (`workbench freeze --also-rg`).
pub async fn replay_transcript_with_rg(
    file: &Path,
    transcript: Transcript,
    temp_parent: &Path,
    rg: &OtherRg,
) -> Result<Replay, TranscriptError> {
    replay_under(
        file,
        transcript,
        temp_parent,
        ExecutorKind::Local,
        Some(rg),
        None,
    )
    .await
}

async fn replay_under(
    file: &Path,
    transcript: Transcript,
    temp_parent: &Path,
    executor: ExecutorKind,
    rg: Option<&OtherRg>,
    release: Option<Release>,
) -> Result<Replay, TranscriptError> {
    let label = file.display().to_string();
    let header = &transcript.header;
    let release = release.unwrap_or(header.contract);
    let mut engine = FixtureEngine::new_in(
        &tree_path(file, &header.tree),
        header.config.clone(),
        &header.env.ripgrep_config,
        temp_parent,
    )
    .map_err(|e| TranscriptError::Other(format!("{label}:1: the header's tree: {e}")))?
    .with_executor(executor.clone())
    .with_release(release);
    let rg_now = match rg {
        Some(rg) => {
            engine = engine.with_rg_dir(rg.dir());
            rg.version_line().to_owned()
        }
        None => rg_version_for(&executor),
    };
    let rg_major = fs_search_process::major_of_line(&rg_now);
    let mut checks = Vec::with_capacity(transcript.records.len());
    for record in &transcript.records {
        TranscriptError::check_stopped()?;
        let current = engine
            .run(&record.call)
            .await
            .map_err(|source| TranscriptError::Setup {
                file: label.clone(),
                line: record.line,
                name: record.call.name.clone(),
                source,
            })?;
        TranscriptError::check_stopped()?;
        checks.push(RecordCheck::new(
            header,
            record.clone(),
            current,
            release,
            rg_major,
        ));
    }
    Ok(Replay {
        file: label,
        transcript,
        checks,
        rg_now,
        release,
        tree: engine.tree(),
    })
}

/// Reads, parses and replays the transcript at `path` under the
/// `executor` kind.
pub async fn replay_file(
    path: &Path,
    temp_parent: &Path,
    executor: ExecutorKind,
) -> Result<Replay, TranscriptError> {
    let transcript = read_transcript(path)?;
    replay_transcript(path, transcript, temp_parent, executor).await
}

/// Reads and parses the transcript at `path` (at most
/// [`fs_search_process::TRANSCRIPT_MAX_BYTES`], UTF-8); errors name the file
/// and line.
pub fn read_transcript(path: &Path) -> Result<Transcript, TranscriptError> {
    let text = fs_search_process::read_file(path, fs_search_process::TRANSCRIPT_MAX_BYTES)
        .map_err(|e| TranscriptError::io(path, e))?;
    let text = String::from_utf8(text).map_err(|e| TranscriptError::Parse {
        file: path.display().to_string(),
        line: 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count(),
        message: "not valid UTF-8".into(),
    })?;
    parse::parse(&path.display().to_string(), &text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixture_engine::{default_ripgrep_config, rg_version};
    use crate::format::{Call, CallOptions, Header, Record, TranscriptEnv};
    use crate::order_free::Comparison;
    use serde_json::json;

    fn transcript() -> (std::path::PathBuf, Transcript) {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/transcripts/unit.jsonl");
        let call =
            |name: &str, tool: &str, args: serde_json::Value, config: serde_json::Value| Call {
                name: name.into(),
                tool: tool.into(),
                args,
                options: CallOptions {
                    config: config.as_object().cloned().unwrap_or_default(),
                    ..CallOptions::default()
                },
            };
        let records = vec![
            call(
                "glob",
                "glob",
                json!({"pattern": "*"}),
                json!({"globMaxResults": 2}),
            ),
            call(
                "grep",
                "grep",
                json!({"pattern": "needle"}),
                json!({"grepMaxMatches": 2}),
            ),
        ]
        .into_iter()
        .map(|call| Record {
            line: 0,
            variants: Default::default(),
            releases: Default::default(),
            call,
            outcome: Outcome {
                is_error: false,
                error: None,
                spill: None,
                warnings: Vec::new(),
                text: String::new(),
                tokens: None,
            },
        })
        .collect();
        let header = Header {
            contract: Default::default(),
            tree: "../trees/mixed".into(),
            config: json!({"sampleOverCapGlobResults": true}),
            env: TranscriptEnv {
                rg: rg_version(),
                ripgrep_config: default_ripgrep_config(),
                executor: None,
            },
        };
        (file, Transcript { header, records })
    }

    #[tokio::test]
    async fn outcomes_are_the_same_under_two_temp_roots_and_name_no_temp_path() {
        let (file, t) = transcript();
        let roots = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let mut outcomes = Vec::new();
        for root in &roots {
            let replay = replay_transcript(&file, t.clone(), root.path(), ExecutorKind::Local)
                .await
                .unwrap();
            let current: Vec<Outcome> = replay.checks.iter().map(|c| c.current.clone()).collect();
            for outcome in &current {
                let spill = outcome.spill.as_ref().unwrap();
                assert!(spill.locator.starts_with("<SPILL>/session-"), "{spill:?}");
                assert!(spill.locator.contains("/<RAND>-"), "{spill:?}");
                assert!(outcome.text.contains(&spill.locator));
                assert!(!outcome.text.contains(&*root.path().to_string_lossy()));
            }
            outcomes.push(current);
        }
        assert_eq!(outcomes[0], outcomes[1]);
        assert_ne!(roots[0].path(), roots[1].path());
    }

    #[tokio::test]
    async fn a_changed_record_diffs_its_result_and_text_lines_only() {
        let (file, t) = transcript();
        let root = tempfile::tempdir().unwrap();
        let replay = replay_transcript(&file, t, root.path(), ExecutorKind::Local)
            .await
            .unwrap();
        // The recorded outcomes above are empty, so both records changed.
        assert_eq!(replay.changed().count(), 2);
        let diff = replay.checks[0].diff("f.jsonl");
        assert!(diff.starts_with(
            "--- f.jsonl:0 record \"glob\" (recorded)\n+++ f.jsonl:0 record \"glob\" (replayed now)\n"
        ));
        assert!(
            diff.contains(
                "\n-{\"result\":\"glob\",\"isError\":false,\"error\":null,\"spill\":null,"
            ),
            "{diff}"
        );
        assert!(diff.contains("\n+{\"text\":\"src/app.ts\"}\n"), "{diff}");
        let updated = replay.updated();
        assert_eq!(updated.records[1].outcome, replay.checks[1].current);
        let again = RecordCheck {
            record: updated.records[1].clone(),
            ..replay.checks[1].clone()
        };
        assert!(again.matches() && again.diff("f.jsonl").is_empty());
    }

    fn check(recorded_text: &str, current_text: &str, now: u32) -> RecordCheck {
        let (_, t) = transcript();
        let mut record = t.records[0].clone();
        record.outcome.text = recorded_text.into();
        let mut current = record.outcome.clone();
        current.text = current_text.into();
        RecordCheck {
            record,
            current,
            rg_major: Some(now),
            recorded_major: Some(13),
            release: Default::default(),
            recorded_release: Default::default(),
            order_free: false,
        }
    }

    #[test]
    fn the_first_changed_line_is_the_first_differing_text_line_of_the_compared_block() {
        let (_, t) = transcript();
        let mut record = t.records[0].clone();
        // Call line 10; result 11, text 12-14; rg 14's variant 15-16;
        // rg 15's variant 17-19.
        record.line = 10;
        record.outcome.text = "a\nb\nc".into();
        let with_text = |text: &str| Outcome {
            text: text.into(),
            ..record.outcome.clone()
        };
        record.variants.insert(14, with_text("x"));
        record.variants.insert(15, with_text("p\nq"));
        let at = |current: Outcome, now: u32| {
            RecordCheck {
                record: record.clone(),
                current,
                rg_major: Some(now),
                recorded_major: Some(13),
                release: Default::default(),
                recorded_release: Default::default(),
                order_free: false,
            }
            .first_changed_line()
        };
        assert_eq!(at(with_text("a\nb\nc"), 13), None);
        assert_eq!(at(with_text("a\nB\nc"), 13), Some(13));
        assert_eq!(at(with_text("p\nQ"), 15), Some(19));
        assert_eq!(at(with_text("y"), 14), Some(16));
        // Lines only added: the block's last line; only removed: the first gone.
        assert_eq!(at(with_text("a\nb\nc\nd"), 13), Some(14));
        assert_eq!(at(with_text("a"), 13), Some(13));
        // Only the result line differs (the kind of result).
        let error = Outcome {
            is_error: true,
            ..with_text("a\nb\nc")
        };
        assert_eq!(at(error, 13), Some(11));
    }

    #[test]
    fn update_under_the_headers_rg_major_replaces_the_outcome() {
        let updated = check("a.ts", "b.ts", 13).updated_record();
        assert_eq!(updated.outcome.text, "b.ts");
        assert!(updated.variants.is_empty());
    }

    #[test]
    fn update_under_another_rg_major_adds_a_variant_and_drops_one_equal_to_the_outcome() {
        let c = check("a.ts\nb.ts", "b.ts\na.ts", 15);
        assert_eq!(c.difference(), Some(Difference::RgText));
        let updated = c.updated_record();
        assert_eq!(updated.outcome.text, "a.ts\nb.ts");
        assert_eq!(updated.variants[&15].text, "b.ts\na.ts");
        let again = RecordCheck {
            record: updated.clone(),
            ..c.clone()
        };
        assert!(again.matches());
        assert_eq!(again.variant(), Some(15));
        // A variant's own difference is never rg's: it was made with this rg.
        let drifted = RecordCheck {
            record: updated.clone(),
            current: Outcome {
                text: "a.ts\nb.ts\nc.ts".into(),
                ..c.current.clone()
            },
            ..c.clone()
        };
        assert_eq!(drifted.difference(), Some(Difference::Engine));
        // Back to the recorded outcome: the variant is no longer needed.
        let same = RecordCheck {
            record: updated,
            current: c.record.outcome.clone(),
            ..c
        };
        assert!(same.updated_record().variants.is_empty());
    }

    /// A check of record "glob" (call line 10, its text "a\nb", an rg 14
    /// variant "x" and an rc.8 variant "r") replayed as `release` under
    /// rg `now` giving `current`.
    fn release_check(release: Release, now: u32, current: &str) -> RecordCheck {
        let (_, t) = transcript();
        let mut record = t.records[0].clone();
        record.line = 10;
        record.outcome.text = "a\nb".into();
        let with_text = |text: &str| Outcome {
            text: text.into(),
            ..record.outcome.clone()
        };
        record.variants.insert(14, with_text("x"));
        let key = ReleaseKey {
            contract: Release::Rc8,
            rg: None,
        };
        record.releases.insert(key, with_text("r"));
        RecordCheck::new(
            &t.header,
            record.clone(),
            with_text(current),
            release,
            Some(now),
        )
    }

    #[test]
    fn as_another_release_a_record_compares_with_its_variant_for_it() {
        let rc8 = release_check(Release::Rc8, 14, "r");
        assert!(rc8.matches());
        assert_eq!(rc8.variant(), None);
        assert_eq!(
            rc8.release_variant().map(|k| k.label()),
            Some("0.1.0-rc.8".into())
        );
        // Under the header's release the rg variant is compared, as before.
        let seed = release_check(Release::Seed, 14, "x");
        assert!(seed.matches() && seed.variant() == Some(14));
        // Result 11, text 12-13; rg 14's variant 14-15; rc.8's 16-17.
        let changed = release_check(Release::Rc8, 14, "R");
        assert_eq!(changed.first_changed_line(), Some(17));
        assert_eq!(changed.difference(), Some(Difference::Engine));
        let diff = changed.diff("f.jsonl");
        assert!(diff.contains("(recorded for 0.1.0-rc.8)"), "{diff}");
        assert!(
            diff.contains("\n-{\"text\":\"r\"}\n+{\"text\":\"R\"}\n"),
            "{diff}"
        );
        // Accepted as rc.8, the page becomes rc.8's variant for this rg
        // (the one for any rg is another rg's too), never the outcome.
        let updated = changed.updated_record();
        assert_eq!(updated.outcome, changed.record.outcome);
        assert_eq!(updated.variants, changed.record.variants);
        let any = changed.release_variant().unwrap();
        assert_eq!(updated.releases[&any].text, "r");
        let this_rg = ReleaseKey {
            rg: Some(14),
            ..any
        };
        assert_eq!(updated.releases[&this_rg].text, "R");
    }

    #[test]
    fn a_grep_as_rc8_under_a_sort_config_is_compared_without_order_and_says_so() {
        let (_, t) = transcript();
        let mut record = t.records[1].clone();
        let base = record.outcome.clone();
        let page = |text: &str| Outcome {
            text: text.into(),
            ..base.clone()
        };
        record.outcome = page("Found 2 matches\n\na.ts\nLine 1: needle\n\nb.ts\nLine 2: needle");
        let swapped = page("Found 2 matches\n\nb.ts\nLine 2: needle\n\na.ts\nLine 1: needle");
        let as_rc8 = RecordCheck::new(
            &t.header,
            record.clone(),
            swapped.clone(),
            Release::Rc8,
            Some(13),
        );
        assert!(as_rc8.order_free);
        assert_eq!(as_rc8.comparison(), Comparison::Unordered);
        assert!(as_rc8.matches());
        let as_seed = RecordCheck::new(
            &t.header,
            record.clone(),
            swapped.clone(),
            Release::Seed,
            Some(13),
        );
        assert_eq!(as_seed.comparison(), Comparison::Exact);
        assert!(!as_seed.matches());
        // A call that runs without the header's config, or a glob, keeps
        // its exact comparison.
        let mut unpinned = record.clone();
        unpinned.call.options.ripgrep_config = false;
        let check = RecordCheck::new(&t.header, unpinned, swapped.clone(), Release::Rc8, Some(13));
        assert_eq!(check.comparison(), Comparison::Exact);
        let mut no_sort = t.header.clone();
        no_sort.env.ripgrep_config = vec!["--no-ignore-global".into()];
        let check = RecordCheck::new(&no_sort, record, swapped, Release::Rc8, Some(13));
        assert_eq!(check.comparison(), Comparison::Exact);
    }
}
