//! Following a recording while it grows (`--follow`, the Transcript
//! tab's `f`), [`App`]'s part: each new record joins the history as a
//! recorded call; a recording that started over drops what it gave.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use crate::interactive::effects::Effect;
use crate::interactive::state::calls::{CallRecord, CallResult};
use crate::interactive::state::follow::{FollowStatus, Following};
use crate::interactive::tabs::Tab;
use fs_search_transcript::Update;
use fs_search_transcript::{Header, Record, RecordedCall};

use super::App;

impl App {
    /// Follows the recording at `path` (ending any earlier follow): its
    /// calls join the history as they are recorded.
    pub fn follow(&mut self, path: PathBuf) -> Vec<Effect> {
        let generation = self.follows.next();
        self.state.follow = Some(Following::new(generation, path.clone()));
        if !matches!(
            self.state.tab,
            Tab::Text | Tab::Value | Tab::Meta | Tab::Call
        ) {
            self.state.tab = Tab::Text;
        }
        self.say(
            format!(
                "following {}: each call shows up as it is recorded",
                path.display()
            ),
            false,
        );
        vec![Effect::Follow { generation, path }]
    }

    /// What the follow found.
    pub(super) fn followed(&mut self, generation: u64, update: Update) {
        let Some(follow) = self
            .state
            .follow
            .as_mut()
            .filter(|f| f.generation == generation)
        else {
            return;
        };
        match update {
            Update::Missing => follow.status = FollowStatus::Waiting,
            Update::Restarted => {
                follow.header = None;
                follow.calls = 0;
                follow.status = FollowStatus::Reading;
                let text = format!(
                    "{} shrank or was replaced: reading it again",
                    follow.path.display()
                );
                self.drop_followed(generation);
                self.say(text, false);
            }
            Update::Header(header) => {
                follow.header = Some(Arc::new(*header));
                follow.status = FollowStatus::Reading;
            }
            Update::Record(record) => {
                // The follow reads a record only behind its header.
                let Some(header) = follow.header.clone() else {
                    return;
                };
                follow.calls += 1;
                follow.status = FollowStatus::Reading;
                let record = self.recorded_call(generation, header, *record);
                self.push_call(record);
            }
            Update::Invalid(problem) | Update::Unreadable(problem) => {
                follow.status = FollowStatus::Problem(problem.clone());
                self.say(problem, true);
            }
        }
    }

    /// `record` of follow `generation`, under its file's `header`, as a
    /// call of the history.
    pub(super) fn recorded_call(
        &mut self,
        generation: u64,
        header: Arc<Header>,
        record: Record,
    ) -> CallRecord {
        let id = self.next_id;
        self.next_id += 1;
        let (file, config) = match &self.state.follow {
            Some(f) => (f.path.clone(), f.call_config(&record.call.options.config)),
            None => (PathBuf::new(), Value::Null),
        };
        let recorded = RecordedCall {
            file,
            line: record.line,
            header,
            call: record.call,
            outcome: record.outcome,
        };
        CallRecord {
            id,
            call_id: recorded.call.name.clone(),
            tool: recorded.call.tool.clone(),
            args: recorded.call.args.clone(),
            config,
            result: CallResult::Recorded {
                follow: generation,
                recorded,
            },
            docs: Default::default(),
        }
    }

    /// Adds a finished call to the history; it is shown when the newest
    /// call was (or nothing was), so a follow keeps showing the latest.
    pub(super) fn push_call(&mut self, record: CallRecord) {
        let at_newest = self
            .state
            .shown
            .is_none_or(|i| i + 1 >= self.state.history.len());
        self.state.history.push(record);
        // A recorded call has no spill file here: its text is counted.
        let _ = self.count_call(self.state.history.len() - 1);
        if at_newest {
            let last = self.state.history.len() - 1;
            self.state.shown = Some(last);
            self.state.history_selected = last;
            // The new call's summary replaces a message that is no alert.
            if self.state.status.as_ref().is_some_and(|s| !s.alert) {
                self.state.status = None;
            }
        }
    }

    /// Removes the calls follow `generation` read (its file started over).
    pub(super) fn drop_followed(&mut self, generation: u64) {
        let shown_id = self.state.shown_record().map(|r| r.id);
        self.state
            .history
            .retain(|r| r.follow() != Some(generation));
        let count = self.state.history.len();
        self.state.shown = shown_id
            .and_then(|id| self.state.history.iter().position(|r| r.id == id))
            .or_else(|| count.checked_sub(1));
        self.state.history_selected = self.state.shown.unwrap_or(0);
    }
}
