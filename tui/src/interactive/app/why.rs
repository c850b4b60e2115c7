//! The "why" panel's part of [`App`] (`w`, `u`): which call is
//! explained (the history's shown call, or a replayed record in the tree
//! it was replayed in), asking the effects for the explanation, and
//! taking only the latest one.

use std::path::PathBuf;
use std::sync::Arc;

use crate::interactive::effects::Effect;
use crate::interactive::scroll_doc::{Doc, LineKind};
use crate::interactive::state::Editing;
use crate::interactive::state::calls::CallResult;
use crate::interactive::state::explain::{
    ExplainCall, ExplainPanel, ExplainQuery, ExplainSource, ExplainStatus, ExplainTarget,
    RecordedSource,
};
use crate::interactive::state::transcript::ReplayState;
use crate::interactive::tabs::Tab;
use fs_search_transcript::EngineTree;
use fs_search_transcript::Replay;
use fs_search_transcript::{Call, RecordedCall};

use super::App;

impl App {
    /// The call the "why" panel is about, as the explain module takes
    /// it, or why it cannot be: in the Transcript tab the replayed record
    /// shown, elsewhere the shown call of the history.
    pub(super) fn explain_call(&mut self) -> Result<(ExplainTarget, ExplainCall), String> {
        if self.state.tab == Tab::Transcript
            && let ReplayState::Loaded { replay, record, .. } = &self.state.transcripts.replay
        {
            return replayed_call(replay, *record);
        }
        let record = self.state.shown_record().ok_or("no call yet")?;
        let target = ExplainTarget::Call(record.id);
        let (tool, args) = (record.tool.clone(), record.args.clone());
        match &record.result {
            CallResult::Ran { result, .. } => Ok((
                target,
                ExplainCall {
                    tool,
                    args,
                    workdir: self.state.session.workdir.clone(),
                    source: ExplainSource::Ran {
                        config: record.config.clone(),
                        result: Box::new(result.clone()),
                    },
                },
            )),
            CallResult::Recorded { recorded, .. } => {
                let recorded = recorded.clone();
                let tree = self.recording_tree(&recorded.tree())?;
                let workdir = call_workdir(tree.root(), &recorded.call);
                Ok((
                    target,
                    ExplainCall {
                        tool,
                        args,
                        workdir,
                        source: ExplainSource::Recorded(Box::new(RecordedSource {
                            tree,
                            recorded,
                        })),
                    },
                ))
            }
        }
    }

    /// The prepared tree of a followed recording: its fixture tree
    /// materialised once (kept for the next call of the same recording),
    /// or the live workdir it was recorded on, in place.
    pub(super) fn recording_tree(
        &mut self,
        tree: &std::path::Path,
    ) -> Result<Arc<EngineTree>, String> {
        if let Some((path, prepared)) = &self.recording_tree
            && path == tree
        {
            return Ok(Arc::clone(prepared));
        }
        if !tree.exists() {
            return Err(format!(
                "the recording's tree {} does not exist: there is nothing to run the call again in",
                tree.display()
            ));
        }
        let prepared = EngineTree::prepare(tree, &std::env::temp_dir())
            .map(Arc::new)
            .map_err(|e| format!("the recording's tree cannot be prepared: {e}"))?;
        self.recording_tree = Some((tree.to_path_buf(), Arc::clone(&prepared)));
        Ok(prepared)
    }

    /// Opens the "why" panel for the shown call (keeping what was typed
    /// for it) and gives it the keyboard; a panel of another call is
    /// replaced and its explanation in progress stopped.
    pub(super) fn open_why(&mut self) -> Vec<Effect> {
        let (id, call) = match self.explain_call() {
            Ok(found) => found,
            Err(e) => {
                self.say(e, false);
                return Vec::new();
            }
        };
        let mut effects = Vec::new();
        if !shows_why(self.state.tab, &id) {
            self.state.tab = Tab::Text;
        }
        if self.state.explain.as_ref().is_none_or(|p| p.target != id) {
            let old = self
                .state
                .explain
                .replace(ExplainPanel::new(id, call.workdir));
            if old.is_some_and(|p| matches!(p.status, ExplainStatus::Running { .. })) {
                effects.push(Effect::StopExplaining);
            }
        }
        self.state.editing = Some(Editing::ExplainPath);
        effects
    }

    /// Tab in the "why" path: completes it from the call's workdir.
    pub(super) fn complete_path(&mut self) {
        let Some(panel) = &mut self.state.explain else {
            return;
        };
        let typed = panel.input.value().to_owned();
        let done =
            crate::interactive::completion::complete(std::path::Path::new(&panel.workdir), &typed);
        if done.text != typed {
            panel.input = panel.input.clone().with_value(done.text);
        }
        match done.candidates.len() {
            0 => self.say(
                format!("nothing under the workdir starts with `{typed}`"),
                false,
            ),
            1 => {}
            _ => self.say(done.candidates.join("  "), false),
        }
    }

    /// Enter in the "why" path: explains the typed paths.
    pub(super) fn explain_typed(&mut self) -> Vec<Effect> {
        let paths: Vec<String> = self
            .state
            .explain
            .as_ref()
            .map(|p| {
                p.input
                    .value()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        if paths.is_empty() {
            self.say("type a path first (Tab completes it)", false);
            return Vec::new();
        }
        self.state.editing = None;
        self.request_explanation(ExplainQuery::Paths(paths))
    }

    /// u: what the shown call did not search.
    pub(super) fn explain_unsearched(&mut self) -> Vec<Effect> {
        let id = self.explain_call().ok().map(|(target, _)| target);
        if id.is_some()
            && self
                .state
                .explain
                .as_ref()
                .is_none_or(|p| Some(&p.target) != id.as_ref())
        {
            // The new request stops the old one: no separate stop needed.
            let _ = self.open_why();
            self.state.editing = None;
        }
        self.request_explanation(ExplainQuery::Unsearched)
    }

    pub(super) fn request_explanation(&mut self, query: ExplainQuery) -> Vec<Effect> {
        let (id, call) = match self.explain_call() {
            Ok(found) => found,
            Err(e) => {
                self.say(e, false);
                return Vec::new();
            }
        };
        let request = self.explanations.next();
        if !shows_why(self.state.tab, &id) {
            self.state.tab = Tab::Text;
        }
        if self.state.explain.as_ref().is_none_or(|p| p.target != id) {
            self.state.explain = Some(ExplainPanel::new(id, call.workdir.clone()));
        }
        if let Some(panel) = &mut self.state.explain {
            panel.query = Some(query.clone());
            panel.status = ExplainStatus::Running { request };
            panel.scroll = 0;
        }
        vec![Effect::Explain {
            request,
            call: Box::new(call),
            query,
        }]
    }

    pub(super) fn explained(&mut self, request: u64, outcome: Result<String, String>) {
        let Some(panel) = &mut self.state.explain else {
            return;
        };
        if !matches!(panel.status, ExplainStatus::Running { request: r } if r == request) {
            return;
        }
        panel.status = match outcome {
            Ok(text) => ExplainStatus::Done(Doc::plain(text.trim_end().lines(), LineKind::Body)),
            Err(e) => ExplainStatus::Failed(e),
        };
    }
}

/// Whether `tab` shows the "why" panel of `target`.
pub(super) fn shows_why(tab: Tab, target: &ExplainTarget) -> bool {
    target.shown_in(tab)
}

/// Where `call`'s relative paths resolve in a tree rooted at `root`: its
/// session's `cwd`, else the root (as the fixture engine runs it).
pub(super) fn call_workdir(root: &std::path::Path, call: &Call) -> String {
    match call.options.session.as_ref().and_then(|s| s.cwd.as_deref()) {
        None | Some(".") => root.to_string_lossy().into_owned(),
        Some(cwd) => root.join(cwd).to_string_lossy().into_owned(),
    }
}

/// Record `index` of a replay, to explain in the tree it was replayed in.
pub(super) fn replayed_call(
    replay: &Replay,
    index: usize,
) -> Result<(ExplainTarget, ExplainCall), String> {
    let check = replay
        .checks
        .get(index)
        .ok_or("the replay has no record to explain")?;
    let recorded = RecordedCall::of_record(
        &replay.file,
        Arc::new(replay.transcript.header.clone()),
        &check.record,
        check.rg_major,
    );
    let call = &recorded.call;
    let target = ExplainTarget::Replayed {
        file: PathBuf::from(&replay.file),
        index,
        name: call.name.clone(),
    };
    Ok((
        target,
        ExplainCall {
            tool: call.tool.clone(),
            args: call.args.clone(),
            workdir: call_workdir(replay.tree.root(), call),
            source: ExplainSource::Recorded(Box::new(RecordedSource {
                tree: Arc::clone(&replay.tree),
                recorded,
            })),
        },
    ))
}
