//! Replay: re-run every recorded call and compare what the model sees now
//! with what was recorded; a changed record becomes a unified diff of its
//! transcript lines (so the diff reads like the change `--update` would
//! make to the file), headed by the file, line and record name.

use std::path::{Path, PathBuf};

use similar::TextDiff;

use super::error::TranscriptError;
use super::fixture_engine::{FixtureEngine, rg_version};
use super::format::{self, Outcome, Record, Transcript};
use super::parse;

/// One record: recorded and current outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordCheck {
    pub record: Record,
    pub current: Outcome,
}

impl RecordCheck {
    pub fn matches(&self) -> bool {
        self.record.outcome.matches(&self.current)
    }

    /// The unified diff of the record's result and text lines, recorded
    /// (`-`) against current (`+`); empty when they match.
    pub fn diff(&self, file: &str) -> String {
        if self.matches() {
            return String::new();
        }
        let name = &self.record.call.name;
        let old = format::outcome_lines(name, &self.record.outcome);
        let new = format::outcome_lines(name, &self.current);
        TextDiff::from_lines(&old, &new)
            .unified_diff()
            .context_radius(3)
            .header(
                &format!("{file}:{} record \"{name}\" (recorded)", self.record.line),
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

    /// The transcript with every current outcome accepted (`--update`).
    pub fn updated(&self) -> Transcript {
        let mut transcript = self.transcript.clone();
        transcript.header.env.rg = self.rg_now.clone();
        for (record, check) in transcript.records.iter_mut().zip(&self.checks) {
            record.outcome = check.current.clone();
        }
        transcript
    }
}

/// The tree a header names, resolved against the transcript's directory.
pub fn tree_path(transcript_file: &Path, tree: &str) -> PathBuf {
    let tree = Path::new(tree);
    if tree.is_absolute() {
        return tree.to_path_buf();
    }
    transcript_file
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(tree)
}

/// Replays `transcript` (read from `file`) with temp dirs under
/// `temp_parent`.
pub async fn replay_transcript(
    file: &Path,
    transcript: Transcript,
    temp_parent: &Path,
) -> Result<Replay, TranscriptError> {
    let label = file.display().to_string();
    let header = &transcript.header;
    let mut engine = FixtureEngine::new_in(
        &tree_path(file, &header.tree),
        header.config.clone(),
        &header.env.ripgrep_config,
        temp_parent,
    )
    .map_err(|e| TranscriptError::Other(format!("{label}:1: the header's tree: {e}")))?;
    let mut checks = Vec::with_capacity(transcript.records.len());
    for record in &transcript.records {
        TranscriptError::check_stopped()?;
        let current = engine
            .run(&record.call)
            .await
            .map_err(|message| TranscriptError::Setup {
                file: label.clone(),
                line: record.line,
                name: record.call.name.clone(),
                message,
            })?;
        TranscriptError::check_stopped()?;
        checks.push(RecordCheck {
            record: record.clone(),
            current,
        });
    }
    Ok(Replay {
        file: label,
        transcript,
        checks,
        rg_now: rg_version(),
    })
}

/// Reads, parses and replays the transcript at `path`.
pub async fn replay_file(path: &Path, temp_parent: &Path) -> Result<Replay, TranscriptError> {
    let text = crate::bounded::read_file(path, crate::bounded::TRANSCRIPT_MAX_BYTES)
        .map_err(|e| TranscriptError::io(path, e))?;
    let text = String::from_utf8(text).map_err(|e| TranscriptError::Parse {
        file: path.display().to_string(),
        line: 1 + e.as_bytes()[..e.utf8_error().valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count(),
        message: "not valid UTF-8".into(),
    })?;
    let transcript = parse::parse(&path.display().to_string(), &text)?;
    replay_transcript(path, transcript, temp_parent).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::fixture_engine::default_ripgrep_config;
    use crate::transcript::format::{Call, CallOptions, Header, Record, TranscriptEnv};
    use serde_json::json;

    fn transcript() -> (PathBuf, Transcript) {
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
            tree: "../trees/mixed".into(),
            config: json!({"sampleOverCapGlobResults": true}),
            env: TranscriptEnv {
                rg: rg_version(),
                ripgrep_config: default_ripgrep_config(),
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
            let replay = replay_transcript(&file, t.clone(), root.path())
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
        let replay = replay_transcript(&file, t, root.path()).await.unwrap();
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
            current: replay.checks[1].current.clone(),
        };
        assert!(again.matches() && again.diff("f.jsonl").is_empty());
    }
}
