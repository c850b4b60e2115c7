//! The Transcript tab's state: recording the session's calls to a
//! transcript (R starts, R again stops and saves), and replaying a
//! transcript to step through its records with the recorded and the
//! current result side by side (docs/design.md §3, §4). The replay itself runs
//! on the effect runner (`Effect::ReplayTranscript`); the keys are turned
//! into changes here and in `App::transcript_action`; drawing is in
//! `views::transcript`.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use fs_search_transcript::Recorder;
use fs_search_transcript::Replay;
use fs_search_transcript::{Call, CallOptions, SessionOption, SpillMode};
use fs_search_transcript::{CompareRow, side_by_side};

use super::calls::CallRecord;
use super::session::SessionInfo;

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
    /// Follow the chosen recording while it grows (again: stop).
    Follow,
    /// Ablate the chosen transcript: ask for the `--set` values.
    Ablate,
    /// Cancel the running ablation.
    CancelAblation,
    /// Scroll the replayed record's two sides sideways by this many
    /// cells (negative: back towards the start of the lines).
    Sideways(i16),
    /// Wrap the replayed record's long lines, or cut them again.
    ToggleWrap,
    /// Type the path of any transcript to add to the list (Tab completes).
    OpenPath,
}

/// How the replayed record's rows are laid out: cut at the side's width
/// from column `offset`, or wrapped whole.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowView {
    /// The first cell of each line shown (when not wrapping).
    pub offset: usize,
    /// Long lines wrap onto more rows instead of being cut.
    pub wrap: bool,
}

impl RowView {
    /// Scrolls `rows` sideways by `cells` (not past their longest line)
    /// or toggles wrapping; the status text. The replay view and the
    /// ablate mode's diff both lay their rows out this way.
    pub fn change(&mut self, action: TranscriptAction, rows: &[CompareRow]) -> Option<String> {
        match action {
            TranscriptAction::Sideways(cells) => {
                if self.wrap {
                    return Some("lines wrap: z cuts them again to scroll sideways".to_owned());
                }
                let longest = rows
                    .iter()
                    .flat_map(|r| [&r.recorded.text, &r.current.text])
                    .flatten()
                    .map(|t| {
                        crate::interactive::scroll_doc::width(
                            &crate::interactive::scroll_doc::visible(t),
                        )
                    })
                    .max()
                    .unwrap_or(0);
                let moved = self.offset.saturating_add_signed(isize::from(cells));
                self.offset = moved.min(longest.saturating_sub(1));
                None
            }
            TranscriptAction::ToggleWrap => {
                self.wrap = !self.wrap;
                Some(if self.wrap {
                    "long lines wrap (z cuts them again)".to_owned()
                } else {
                    "long lines are cut: h/l scroll sideways (z wraps them)".to_owned()
                })
            }
            _ => None,
        }
    }
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
        rows: Vec<CompareRow>,
    },
}

/// The Transcript tab's state.
#[derive(Debug)]
pub struct TranscriptState {
    pub recording: Option<Recording>,
    pub saved: Vec<PathBuf>,
    /// Transcript files offered for replay.
    pub files: Vec<PathBuf>,
    pub selected: usize,
    pub replay: ReplayState,
    /// Where recordings are saved.
    pub save_dir: PathBuf,
    /// How the replayed record's rows are laid out.
    pub view: RowView,
    /// The path being typed after `o` (any transcript, to open or follow).
    pub prompt: Option<tui_input::Input>,
    /// Files added by path (`o`): listed even outside the usual places.
    pub opened: Vec<PathBuf>,
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

impl TranscriptState {
    /// The state of a session: recordings are saved to the session's
    /// recordings directory, outside the workdir.
    pub fn for_session(session: &SessionInfo) -> Self {
        let workdir = PathBuf::from(&session.workdir);
        Self::new(&workdir, session.recordings_dir.clone())
    }

    /// Offers the transcripts in `fixtures/transcripts` of the current
    /// directory and of `workdir`; recordings are saved to `save_dir`.
    pub fn new(workdir: &Path, save_dir: PathBuf) -> Self {
        let mut state = Self {
            recording: None,
            saved: Vec::new(),
            files: Vec::new(),
            selected: 0,
            replay: ReplayState::List,
            save_dir,
            view: RowView::default(),
            prompt: None,
            opened: Vec::new(),
        };
        state.discover(workdir);
        state
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
        for saved in self.saved.iter().chain(&self.opened) {
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
                    recorder: Recorder::new(Path::new(&session.workdir), config.clone())
                        .with_release(session.contract.release),
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
                if let Some(dir) = recording.out.parent() {
                    fs_search_process::ensure_private(dir)
                        .map_err(|e| format!("the recording was not saved: {e}"))?;
                }
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
        // A call read from a followed recording is recorded there already.
        let Some(result) = record.ran() else {
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
        recording.recorder.push(call, result);
    }

    /// The chosen transcript.
    pub fn selected_file(&self) -> Option<PathBuf> {
        self.files.get(self.selected).cloned()
    }

    /// Why `d` (the next record whose result changed) has nowhere to
    /// go, if it has not: nothing replayed, nothing differs, or the
    /// shown record is the only one that differs.
    pub fn next_changed_note(&self) -> Option<String> {
        let ReplayState::Loaded { replay, record, .. } = &self.replay else {
            return Some(
                "d steps through a replayed transcript's differences: Enter replays the chosen one first"
                    .to_owned(),
            );
        };
        let changed: Vec<usize> = (0..replay.checks.len())
            .filter(|i| replay.checks.get(*i).is_some_and(|c| !c.matches()))
            .collect();
        match changed.as_slice() {
            [] => Some(format!(
                "nothing differs: all {} record(s) match what runs now",
                replay.checks.len()
            )),
            [only] if only == record => Some("this is the only record that differs".to_owned()),
            _ => None,
        }
    }

    /// Scrolls the replayed record's rows sideways or toggles wrapping
    /// ([`RowView::change`]); the status text.
    pub fn change_view(&mut self, action: TranscriptAction) -> Option<String> {
        let rows = match &self.replay {
            ReplayState::Loaded { rows, .. } => rows.as_slice(),
            _ => &[],
        };
        self.view.change(action, rows)
    }

    /// Adds `path` (typed after `o`) to the list and chooses it.
    pub fn add_file(&mut self, path: PathBuf) {
        let index = match self.files.iter().position(|f| *f == path) {
            Some(i) => i,
            None => {
                self.opened.push(path.clone());
                self.files.push(path);
                self.files.len() - 1
            }
        };
        self.selected = index;
        self.replay = ReplayState::List;
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
        *rows = side_by_side(check.expected(), &check.current);
        // Open at the first difference, with a little context.
        *scroll = rows
            .iter()
            .position(CompareRow::changed)
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn r_saves_the_recording_outside_the_workdir_and_says_where() {
        let tmp = tempfile::tempdir().unwrap();
        let workdir = tmp.path().join("tree");
        std::fs::create_dir(&workdir).unwrap();
        let recordings = tmp.path().join("data/fs-search-workbench/recordings");
        let session = SessionInfo {
            workdir: workdir.display().to_string(),
            session_id: "session-r".into(),
            recordings_dir: recordings.clone(),
            ..SessionInfo::default()
        };
        let config = json!({"sampleOverCapGlobResults": true});
        let mut state = TranscriptState::for_session(&session);
        let started = state.toggle_recording(&session, &config).unwrap();
        let out = recordings.join("workbench-session-r.jsonl");
        assert!(started.contains(&out.display().to_string()), "{started}");
        let saved = state.toggle_recording(&session, &config).unwrap();
        assert_eq!(saved, format!("recorded 0 call(s) to {}", out.display()));
        assert!(out.is_file());
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&recordings).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o700);
        let in_workdir: Vec<_> = std::fs::read_dir(&workdir).unwrap().collect();
        assert!(in_workdir.is_empty(), "{in_workdir:?}");
        assert!(state.files.contains(&out), "offered for replay");
    }

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
