//! The Transcript tab's state: recording the session's calls to a
//! transcript (R starts, R again stops and saves), and replaying a
//! transcript to step through its records with the recorded and the
//! current result side by side (DESIGN.md §3, §4). The replay itself runs
//! on the runner (`Effect::ReplayTranscript`); drawing is in
//! `views::transcript`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::transcript::compare::{Row, side_by_side};
use crate::transcript::format::{Call, CallOptions, SessionOption, SpillMode};
use crate::transcript::record::Recorder;
use crate::transcript::replay::Replay;

use super::app::{App, CallRecord, SessionInfo, Status};
use super::runner::Effect;

/// A key of the Transcript tab (and R anywhere).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TranscriptAction {
    /// Start recording, or stop and save.
    ToggleRecording,
    Up,
    Down,
    /// Replay the selected file.
    Open,
    NextRecord,
    PrevRecord,
    /// The next record whose result changed.
    NextChanged,
    /// Back to the file list.
    Back,
}

/// A recording in progress.
#[derive(Debug)]
pub struct Recording {
    pub recorder: Recorder,
    /// The config the recording started with (the header's config).
    pub config: Value,
    /// Where it will be saved.
    pub out: PathBuf,
}

/// The replay side of the tab.
#[derive(Debug)]
pub enum ReplayState {
    /// Choosing a file.
    List,
    Loading(PathBuf),
    Failed {
        path: PathBuf,
        error: String,
    },
    Loaded {
        replay: Box<Replay>,
        record: usize,
        scroll: usize,
        /// The shown record's rows (recorded | current).
        rows: Vec<Row>,
    },
}

/// The Transcript tab.
#[derive(Debug)]
pub struct TranscriptPane {
    pub recording: Option<Recording>,
    pub saved: Vec<PathBuf>,
    /// Transcript files offered for replay.
    pub files: Vec<PathBuf>,
    pub selected: usize,
    pub replay: ReplayState,
    /// Where recordings are saved.
    pub save_dir: PathBuf,
}

/// `*.jsonl` under `dir`, sorted.
fn transcripts_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// The keys of `now` that differ from `base` (removed keys become null,
/// which the config treats as absent).
fn config_changes(base: &Value, now: &Value) -> Map<String, Value> {
    let empty = Map::new();
    let base = base.as_object().unwrap_or(&empty);
    let now = now.as_object().unwrap_or(&empty);
    let mut changes = Map::new();
    for (key, value) in now {
        if base.get(key) != Some(value) {
            changes.insert(key.clone(), value.clone());
        }
    }
    for key in base.keys().filter(|k| !now.contains_key(*k)) {
        changes.insert(key.clone(), Value::Null);
    }
    changes
}

impl TranscriptPane {
    /// The pane of a session: recordings are saved to the current
    /// directory (else the workdir).
    pub fn for_session(session: &SessionInfo) -> Self {
        let workdir = PathBuf::from(&session.workdir);
        let save_dir = std::env::current_dir().unwrap_or_else(|_| workdir.clone());
        Self::new(&workdir, save_dir)
    }

    /// Offers the transcripts in `fixtures/transcripts` of the current
    /// directory and of `workdir`; recordings are saved to `save_dir`.
    pub fn new(workdir: &Path, save_dir: PathBuf) -> Self {
        let mut pane = Self {
            recording: None,
            saved: Vec::new(),
            files: Vec::new(),
            selected: 0,
            replay: ReplayState::List,
            save_dir,
        };
        pane.discover(workdir);
        pane
    }

    fn discover(&mut self, workdir: &Path) {
        let mut files = transcripts_in(&self.save_dir);
        for base in [Path::new("."), workdir] {
            for file in transcripts_in(&base.join("fixtures/transcripts")) {
                let same = |f: &PathBuf| {
                    f.canonicalize().ok() == file.canonicalize().ok() && f.canonicalize().is_ok()
                };
                if !files.iter().any(same) {
                    files.push(file);
                }
            }
        }
        for saved in &self.saved {
            if !files.contains(saved) {
                files.push(saved.clone());
            }
        }
        self.files = files;
        self.selected = self.selected.min(self.files.len().saturating_sub(1));
    }

    /// Starts a recording, or stops and saves it; the status text.
    pub fn toggle_recording(
        &mut self,
        session: &SessionInfo,
        config: &Value,
    ) -> Result<String, String> {
        match self.recording.take() {
            None => {
                let stem = format!("workbench-{}", session.session_id);
                let mut out = self.save_dir.join(format!("{stem}.jsonl"));
                let mut n = 1;
                while out.exists() || self.saved.contains(&out) {
                    n += 1;
                    out = self.save_dir.join(format!("{stem}-{n}.jsonl"));
                }
                self.recording = Some(Recording {
                    recorder: Recorder::new(Path::new(&session.workdir), config.clone()),
                    config: config.clone(),
                    out: out.clone(),
                });
                Ok(format!(
                    "recording: every call from now on; R stops and saves to {}",
                    out.display()
                ))
            }
            Some(recording) => {
                let count = recording.recorder.len();
                recording
                    .recorder
                    .save(&recording.out)
                    .map_err(|e| format!("the recording was not saved: {e}"))?;
                self.saved.push(recording.out.clone());
                self.discover(Path::new(&session.workdir));
                Ok(format!(
                    "recorded {count} call(s) to {}",
                    recording.out.display()
                ))
            }
        }
    }

    /// Adds a finished call to the recording, if one is running.
    pub fn record_call(&mut self, record: &CallRecord, session: &SessionInfo) {
        let Some(recording) = &mut self.recording else {
            return;
        };
        let call = Call {
            name: format!("call-{}-{}", record.id, record.tool),
            tool: record.tool.clone(),
            args: record.args.clone(),
            options: CallOptions {
                config: config_changes(&recording.config, &record.config),
                spill: SpillMode::Store,
                session: Some(SessionOption {
                    id: Some(session.session_id.clone()),
                    cwd: Some(".".to_owned()),
                }),
                ..CallOptions::default()
            },
        };
        recording.recorder.push(call, &record.result);
    }

    /// Carries out a key; returns a file to replay, if one was chosen.
    pub fn apply(&mut self, action: TranscriptAction) -> Option<PathBuf> {
        match (&mut self.replay, action) {
            (ReplayState::List, TranscriptAction::Up) => {
                self.selected = self.selected.saturating_sub(1);
            }
            (ReplayState::List, TranscriptAction::Down) => {
                self.selected = (self.selected + 1).min(self.files.len().saturating_sub(1));
            }
            (ReplayState::List, TranscriptAction::Open) => {
                let path = self.files.get(self.selected)?.clone();
                self.replay = ReplayState::Loading(path.clone());
                return Some(path);
            }
            (ReplayState::Loaded { scroll, .. }, TranscriptAction::Up) => {
                *scroll = scroll.saturating_sub(1);
            }
            (ReplayState::Loaded { scroll, rows, .. }, TranscriptAction::Down) => {
                *scroll = (*scroll + 1).min(rows.len().saturating_sub(1));
            }
            (ReplayState::Loaded { replay, record, .. }, step) => {
                let count = replay.checks.len();
                let target = match step {
                    TranscriptAction::NextRecord => (*record + 1).min(count.saturating_sub(1)),
                    TranscriptAction::PrevRecord => record.saturating_sub(1),
                    TranscriptAction::NextChanged => (1..=count)
                        .map(|d| (*record + d) % count.max(1))
                        .find(|i| replay.checks.get(*i).is_some_and(|c| !c.matches()))
                        .unwrap_or(*record),
                    TranscriptAction::Back => {
                        self.replay = ReplayState::List;
                        return None;
                    }
                    _ => *record,
                };
                self.show(target);
            }
            (ReplayState::Failed { .. } | ReplayState::Loading(_), TranscriptAction::Back) => {
                self.replay = ReplayState::List;
            }
            _ => {}
        }
        None
    }

    fn show(&mut self, index: usize) {
        let ReplayState::Loaded {
            replay,
            record,
            scroll,
            rows,
        } = &mut self.replay
        else {
            return;
        };
        let Some(check) = replay.checks.get(index) else {
            return;
        };
        *record = index;
        *rows = side_by_side(&check.record.outcome, &check.current);
        // Open at the first difference, with a little context.
        *scroll = rows
            .iter()
            .position(Row::changed)
            .map_or(0, |i| i.saturating_sub(3));
    }

    /// The replay of `path` finished.
    pub fn replayed(&mut self, path: PathBuf, outcome: Result<Box<Replay>, String>) {
        if !matches!(&self.replay, ReplayState::Loading(p) if *p == path) {
            return;
        }
        self.replay = match outcome {
            Ok(replay) => {
                let first = replay.checks.iter().position(|c| !c.matches()).unwrap_or(0);
                let mut state = ReplayState::Loaded {
                    replay,
                    record: first,
                    scroll: 0,
                    rows: Vec::new(),
                };
                std::mem::swap(&mut self.replay, &mut state);
                self.show(first);
                return;
            }
            Err(error) => ReplayState::Failed { path, error },
        };
    }
}

impl App {
    /// Carries out a key of the Transcript tab (or R).
    pub(super) fn transcript_action(&mut self, action: TranscriptAction) -> Vec<Effect> {
        if action == TranscriptAction::ToggleRecording {
            let (text, alert) = match self
                .transcripts
                .toggle_recording(&self.session, &self.applied)
            {
                Ok(text) => (text, false),
                Err(text) => (text, true),
            };
            self.status = Some(Status { text, alert });
            return Vec::new();
        }
        match self.transcripts.apply(action) {
            Some(path) => vec![Effect::ReplayTranscript { path }],
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn config_changes_list_changed_added_and_removed_keys() {
        let base = json!({"sampleOverCapGlobResults": true, "globMaxResults": 5});
        let now = json!({"sampleOverCapGlobResults": false, "grepMaxMatches": 3});
        let changes = config_changes(&base, &now);
        assert_eq!(
            Value::Object(changes),
            json!({"sampleOverCapGlobResults": false, "grepMaxMatches": 3, "globMaxResults": null})
        );
        assert!(config_changes(&base, &base).is_empty());
    }
}

/// The tab driven by keys, with the real runner (real bash, real rg).
#[cfg(test)]
mod flow_tests {
    use std::time::Duration;

    use ratatui::Terminal;
    use ratatui::backend::TestBackend;
    use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
    use serde_json::json;
    use tokio::sync::mpsc;

    use super::*;
    use crate::transcript::parse;
    use crate::tui::runner::{AppEvent, Runner};
    use crate::tui::tabs::Tab;

    struct Session {
        dir: tempfile::TempDir,
        app: App,
        runner: Runner,
        events: mpsc::UnboundedReceiver<AppEvent>,
    }

    impl Session {
        async fn new() -> Self {
            // A fixed-length name, so the screen's layout never depends on it.
            let dir = tempfile::Builder::new()
                .prefix("fswbt-")
                .rand_bytes(6)
                .tempdir_in("/tmp")
                .unwrap();
            let tree = dir.path().join("tree");
            std::fs::create_dir_all(tree.join("b")).unwrap();
            std::fs::write(tree.join("a.txt"), "needle one\n").unwrap();
            std::fs::write(tree.join("b/c.txt"), "needle two\n").unwrap();
            std::fs::create_dir(dir.path().join("saved")).unwrap();
            let info = SessionInfo {
                workdir: tree.display().to_string(),
                session_id: "session-rec".into(),
                spill_root: Some(dir.path().join("spill")),
                log_path: None,
            };
            let (tx, events) = mpsc::unbounded_channel();
            let runner = Runner::new(tree, dir.path().join("spill"), "session-rec".into(), tx);
            let config = json!({"sampleOverCapGlobResults": true, "grepMaxMatches": 1});
            let mut app = App::new(info, &config);
            app.transcripts.save_dir = dir.path().join("saved");
            let mut session = Self {
                dir,
                app,
                runner,
                events,
            };
            let effects = session.app.start();
            session.settle(effects).await;
            session
        }

        /// Carries out `effects` and every effect their outcomes ask for.
        async fn settle(&mut self, effects: Vec<Effect>) {
            let mut pending = effects.iter().filter(|e| **e != Effect::Cancel).count();
            self.runner.apply_all(effects);
            while pending > 0 {
                let event = tokio::time::timeout(Duration::from_secs(30), self.events.recv())
                    .await
                    .unwrap()
                    .unwrap();
                if matches!(event, AppEvent::Finished { .. } | AppEvent::Lost { .. }) {
                    self.runner.finished();
                }
                pending -= 1;
                let more = self.app.on_event(event);
                pending += more.len();
                self.runner.apply_all(more);
            }
        }

        async fn key(&mut self, code: KeyCode) {
            let effects = self
                .app
                .handle_key(&KeyEvent::new(code, KeyModifiers::NONE));
            self.settle(effects).await;
        }

        async fn keys(&mut self, text: &str) {
            for c in text.chars() {
                self.key(KeyCode::Char(c)).await;
            }
        }

        fn screen(&self) -> String {
            let mut terminal = Terminal::new(TestBackend::new(110, 32)).unwrap();
            terminal
                .draw(|frame| crate::tui::views::draw(frame, &self.app, std::time::Instant::now()))
                .unwrap();
            let buffer = terminal.backend().buffer();
            (0..buffer.area.height)
                .map(|y| {
                    (0..buffer.area.width)
                        .map(|x| buffer[(x, y)].symbol())
                        .collect::<String>()
                })
                .collect::<Vec<_>>()
                .join("\n")
        }

        async fn open(&mut self, file: &Path) {
            self.app.transcripts.replay = ReplayState::List;
            let index = self.app.transcripts.files.iter().position(|f| f == file);
            self.app.transcripts.selected = index.unwrap();
            self.key(KeyCode::Enter).await;
        }
    }

    #[tokio::test]
    async fn r_records_the_calls_and_the_saved_transcript_replays_clean_side_by_side() {
        let mut s = Session::new().await;
        s.keys("8R").await;
        assert_eq!(s.app.tab, Tab::Transcript);
        assert!(s.app.transcripts.recording.is_some());
        assert!(s.screen().contains("● REC 0"), "{}", s.screen());
        // A grep over its cap (saved to the spill store), then a glob.
        s.keys("te").await;
        s.keys("needle").await;
        s.key(KeyCode::Enter).await;
        s.key(KeyCode::Esc).await;
        s.keys("tr").await;
        assert_eq!(s.app.history.len(), 2);
        s.keys("8R").await;
        let saved = s.dir.path().join("saved/workbench-session-rec.jsonl");
        let status = s.app.status.clone().unwrap();
        assert_eq!(
            status.text,
            format!("recorded 2 call(s) to {}", saved.display())
        );
        let text = std::fs::read_to_string(&saved).unwrap();
        let t = parse::parse("saved", &text).unwrap();
        assert_eq!(t.header.tree, "../tree");
        assert_eq!(t.records.len(), 2);
        let grep = &t.records[0];
        assert_eq!(
            (grep.call.tool.as_str(), &grep.call.args),
            ("grep", &json!({"pattern": "needle"}))
        );
        let spill = grep.outcome.spill.as_ref().unwrap();
        assert!(spill.locator.starts_with("<SPILL>/session-"), "{spill:?}");
        assert!(grep.outcome.text.starts_with("Found 1 of 2 matches"));
        assert_eq!(t.records[1].outcome.text, "No files found");

        s.open(&saved).await;
        let ReplayState::Loaded { replay, .. } = &s.app.transcripts.replay else {
            panic!("{:?}", s.app.transcripts.replay);
        };
        assert!(replay.all_match(), "{}", replay.diffs());
        let screen = s.screen();
        for needle in [
            "✓ matches",
            "record 1/2 \"call-1-grep\"",
            " recorded ",
            " current (replayed now) ",
            "Found 1 of 2 matches",
        ] {
            assert!(screen.contains(needle), "{needle}\n{screen}");
        }
        s.keys("n").await;
        assert!(s.screen().contains("record 2/2 \"call-2-glob\""));
    }

    #[tokio::test]
    async fn a_changed_record_is_shown_first_with_both_sides_marked() {
        let mut s = Session::new().await;
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../fixtures/transcripts/grep-footers.jsonl");
        let text = std::fs::read_to_string(&fixture)
            .unwrap()
            .replace(
                "../trees/mixed",
                &fixture
                    .parent()
                    .unwrap()
                    .join("../trees/mixed")
                    .display()
                    .to_string(),
            )
            .replacen(
                r#"{"text":"Line 1: export const spaced = 'needle in a spaced name'"}"#,
                r#"{"text":"Line 1: a stale expectation"}"#,
                1,
            );
        let changed = s.app.transcripts.save_dir.join("changed.jsonl");
        std::fs::write(&changed, text).unwrap();
        s.app.transcripts.files.push(changed.clone());
        s.keys("8").await;
        s.open(&changed).await;
        let screen = s.screen();
        for needle in [
            "≠ differs",
            "record 2/8 \"grep-one-match\"",
            "1 of 8 record(s) differ",
            "- Line 1: a stale expectation",
            "+ Line 1: export const spaced",
        ] {
            assert!(screen.contains(needle), "{needle}\n{screen}");
        }
        insta::with_settings!({
            prepend_module_to_snapshot => false,
            filters => vec![(r"fswbt-[A-Za-z0-9]{6}", "fswbt-RANDOM")],
        }, {
            insta::assert_snapshot!("transcript_replay_changed_record", screen);
        });
        // d cycles through the differences: there is only this one.
        s.keys("nd").await;
        assert!(s.screen().contains("record 2/8"));
        s.keys("b").await;
        assert!(matches!(s.app.transcripts.replay, ReplayState::List));
    }
}
