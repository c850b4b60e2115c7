//! The workbench's update logic, the one home of `impl App`: terminal
//! events and keys come in, are looked up in the key map as [`Action`]s
//! and carried out on the [`State`]; the effect runner's outcomes
//! ([`AppEvent`]) come in the same way; what must happen off the UI goes
//! out as [`Effect`]s. No terminal and no screen layout here (the sizes of
//! the scrollable areas arrive through [`App::resize`]), so every
//! behaviour is unit-testable; `views` draws `app.state`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs_search_engine::ToolResult;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind};
use serde_json::Value;
use tui_input::backend::crossterm::to_input_request;

use super::content;
use super::doc::{Doc, LineKind};
use super::effects::{AppEvent, Effect, LoadInfo, SpillContent};
use super::keymap::{self, Action};
use super::state::ablate::{
    AblateDone, AblateMove, AblatePhase, AblateState, AblateStop, SUGGESTED_SET,
};
use super::state::calls::{CallRecord, CallResult, RecordedCall, Running};
use super::state::editor::{Field, Tool};
use super::state::explain::{
    ExplainCall, ExplainPanel, ExplainQuery, ExplainSource, ExplainStatus, ExplainTarget,
    RecordedSource,
};
use super::state::follow::{FollowStatus, Following};
use super::state::session::{PluginStatus, SessionInfo, Status};
use super::state::tokens::{PageTokens, SurfaceTokens, TokenizerStatus, prefix_change};
use super::state::transcript::{ReplayState, TranscriptAction};
use super::state::{Editing, Overlay, SpillState, State, Viewports};
use super::tabs::Tab;
use fs_search_transcript::ablate::Progress;
use fs_search_transcript::ablate::grid::{combinations, parse_setting};
use fs_search_transcript::fixture_engine::EngineTree;
use fs_search_transcript::follow::Update;
use fs_search_transcript::format::{Call, Record};
use fs_search_transcript::replay::Replay;

/// An outcome of an ablation, as `App::ablation_event` takes it.
enum AblateEvent {
    Progress(Progress),
    Ended(Result<Box<AblateDone>, AblateStop>),
}

/// The workbench: its state and the bookkeeping of its effects.
pub struct App {
    /// Everything the views draw.
    pub state: State,
    /// The id of the next call.
    next_id: u64,
    /// The latest plugin load; outcomes of older loads are ignored.
    generation: u64,
    /// The latest follow; updates of earlier follows are ignored.
    follow_generation: u64,
    /// The latest explanation asked for; older outcomes are ignored.
    explain_request: u64,
    /// The latest ablation; outcomes of earlier ones are ignored.
    ablate_generation: u64,
    /// A followed recording's tree, prepared for "why" once (by its path).
    recording_tree: Option<(PathBuf, Arc<EngineTree>)>,
}

impl App {
    /// The app of a new session with the starting `config` (loaded by
    /// the effects of [`App::start`]).
    pub fn new(session: SessionInfo, config: &Value) -> Self {
        let mut app = Self {
            state: State::new(session, config),
            next_id: 1,
            generation: 0,
            follow_generation: 0,
            explain_request: 0,
            ablate_generation: 0,
            recording_tree: None,
        };
        app.refresh_plugin_docs();
        app
    }

    /// The loop's report of the scrollable areas' sizes (before each
    /// frame); paging and scroll limits follow them.
    pub fn resize(&mut self, viewports: Viewports) {
        self.state.viewports = viewports;
    }

    /// The first effects: load the plugin with the starting config.
    pub fn start(&mut self) -> Vec<Effect> {
        self.load(self.state.applied.clone())
    }

    /// Starts loading the tokenizer (`file`, else the embedded one) in
    /// the background; counts appear once it is ready.
    pub fn start_tokens(&mut self, file: Option<PathBuf>) -> Vec<Effect> {
        self.state.tokens.tokenizer = TokenizerStatus::Loading;
        vec![Effect::LoadTokenizer { file }]
    }

    /// The tokenizer is ready: counts what the session shows so far.
    pub fn set_tokenizer(&mut self, tokenizer: fs_search_process::SharedTokenizer) -> Vec<Effect> {
        self.state.tokens.tokenizer = TokenizerStatus::Ready(tokenizer);
        self.count_surface();
        let mut effects = Vec::new();
        for index in 0..self.state.history.len() {
            effects.extend(self.count_call(index));
        }
        effects
    }

    /// Counts the surface and the change from the previous one.
    fn count_surface(&mut self) {
        let tokens = &mut self.state.tokens;
        let TokenizerStatus::Ready(shared) = &tokens.tokenizer else {
            return;
        };
        let tokenizer = &shared.0;
        tokens.surface = tokens
            .current
            .as_ref()
            .map(|info| SurfaceTokens::count(tokenizer, info));
        tokens.change = match (&tokens.previous, &tokens.current) {
            (Some(before), Some(after)) => Some(prefix_change(tokenizer, before, after)),
            _ => None,
        };
        if matches!(self.state.plugin, PluginStatus::Registered)
            && let Some(info) = &self.state.tokens.current
        {
            self.state.surface = content::surface::surface(info, Some(&self.state.tokens));
        }
    }

    /// Counts the page of the history's call `index` (and asks for its
    /// spilled full result's count).
    fn count_call(&mut self, index: usize) -> Vec<Effect> {
        let TokenizerStatus::Ready(shared) = &self.state.tokens.tokenizer else {
            return Vec::new();
        };
        let Some(record) = self.state.history.get(index) else {
            return Vec::new();
        };
        if self.state.tokens.calls.contains_key(&record.id) {
            return Vec::new();
        }
        let text = shared.0.count(record.text());
        let id = record.id;
        let spill = record
            .spill()
            .filter(|_| record.ran().is_some())
            .map(|(locator, _)| locator.to_owned());
        let effects = spill
            .map(|path| Effect::CountSpill {
                id,
                path,
                tokenizer: shared.clone(),
            })
            .into_iter()
            .collect();
        self.state
            .tokens
            .calls
            .insert(id, PageTokens { text, full: None });
        effects
    }

    fn load(&mut self, config: Value) -> Vec<Effect> {
        self.generation += 1;
        self.state.plugin = PluginStatus::Loading;
        self.state.applied = config.clone();
        self.refresh_plugin_docs();
        vec![Effect::Load {
            generation: self.generation,
            config,
        }]
    }

    fn refresh_plugin_docs(&mut self) {
        self.state.welcome = content::surface::welcome(&self.state.plugin);
        if !matches!(self.state.plugin, PluginStatus::Registered) {
            self.state.surface = content::surface::unloaded(&self.state.plugin);
        }
    }

    fn say(&mut self, text: impl Into<String>, alert: bool) {
        self.state.status = Some(Status {
            text: text.into(),
            alert,
        });
    }

    // ---- input ----

    /// Handles one terminal event.
    pub fn handle_event(&mut self, event: &Event) -> Vec<Effect> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(key),
            Event::Paste(text) => {
                if self.state.editing.is_some() {
                    for c in text.chars().filter(|c| !c.is_control()) {
                        let key = KeyEvent::from(KeyCode::Char(c));
                        self.edit_field(&key);
                    }
                }
                Vec::new()
            }
            _ => Vec::new(),
        }
    }

    /// Handles one key.
    pub fn handle_key(&mut self, key: &KeyEvent) -> Vec<Effect> {
        self.state.status = None;
        let contexts = keymap::contexts_for(
            self.state.editing,
            self.state.overlay.is_some(),
            self.state.tab,
        );
        match keymap::lookup(&contexts, key) {
            Some(action) => self.apply(action),
            None => {
                if self.state.editing.is_some() {
                    self.edit_field(key);
                }
                Vec::new()
            }
        }
    }

    fn edit_field(&mut self, key: &KeyEvent) {
        let Some(request) = to_input_request(&Event::Key(*key)) else {
            return;
        };
        match self.state.editing {
            Some(Editing::Call(field)) => {
                let changed = self.state.editor.input_mut(field).handle(request);
                if changed.is_some_and(|c| c.value) {
                    self.state.editor.changed(field);
                }
            }
            Some(Editing::Config) => {
                if let Some(input) = self.state.config.selected_input_mut() {
                    input.handle(request);
                }
            }
            Some(Editing::ExplainPath) => {
                if let Some(panel) = &mut self.state.explain {
                    panel.input.handle(request);
                }
            }
            Some(Editing::Ablate) => {
                if let Some(AblateState {
                    phase: AblatePhase::Asking(input),
                    ..
                }) = &mut self.state.ablate
                {
                    input.handle(request);
                }
            }
            Some(Editing::TranscriptPath) => {
                if let Some(input) = &mut self.state.transcripts.prompt {
                    input.handle(request);
                }
            }
            None => {}
        }
    }

    /// Carries out one action.
    pub fn apply(&mut self, action: Action) -> Vec<Effect> {
        match action {
            Action::Quit => {
                self.state.should_quit = true;
                let mut effects = Vec::new();
                if self.state.running.is_some() {
                    effects.push(Effect::Cancel);
                }
                // A running ablation's rg and temp tree go with it.
                if self
                    .state
                    .ablate
                    .as_ref()
                    .is_some_and(|a| matches!(a.phase, AblatePhase::Running { .. }))
                {
                    effects.push(Effect::CancelAblation);
                }
                return effects;
            }
            Action::ToggleHelp => {
                self.state.overlay = match self.state.overlay {
                    Some(Overlay::Help) => None,
                    _ => Some(Overlay::Help),
                };
                self.state.overlay_scroll = 0;
            }
            Action::CloseOverlay => self.state.overlay = None,
            Action::Submit => match self.state.editing {
                Some(Editing::Config) => {
                    self.state.editing = None;
                    return self.apply_config();
                }
                Some(Editing::ExplainPath) => return self.explain_typed(),
                Some(Editing::Ablate) => return self.start_ablation(),
                Some(Editing::TranscriptPath) => {
                    self.add_typed_transcript();
                    return Vec::new();
                }
                _ => {
                    let effects = self.run();
                    // The call runs: the keyboard goes to its result (e,
                    // p, i, A edit again); a refused call stays in the
                    // field so it can be fixed.
                    if !effects.is_empty() {
                        self.state.editing = None;
                    }
                    return effects;
                }
            },
            Action::Run => return self.run(),
            Action::Cancel => {
                if self.state.running.is_some() {
                    self.say(
                        "cancelling: the call's signal is aborted and rg is killed",
                        false,
                    );
                    return vec![Effect::Cancel];
                }
                self.say("no call is running", false);
            }
            Action::Edit(field) => {
                self.state.editing = Some(Editing::Call(field));
                self.include_note(field);
            }
            Action::StopEditing => match self.state.editing.take() {
                Some(Editing::Ablate) => self.state.ablate = None,
                Some(Editing::TranscriptPath) => self.state.transcripts.prompt = None,
                _ => {}
            },
            Action::NextField | Action::PrevField => match self.state.editing {
                Some(Editing::Call(field)) => {
                    let next = if action == Action::NextField {
                        field.next()
                    } else {
                        field.prev()
                    };
                    self.state.editing = Some(Editing::Call(next));
                    self.include_note(next);
                }
                Some(Editing::Config) => {
                    if action == Action::NextField {
                        self.state.config.select_next();
                    } else {
                        self.state.config.select_prev();
                    }
                }
                Some(Editing::ExplainPath) => self.complete_path(),
                Some(Editing::TranscriptPath) => self.complete_transcript_path(),
                Some(Editing::Ablate) | None => {}
            },
            Action::ToggleTool => self.state.editor.toggle_tool(),
            Action::NextTab => self.state.tab = self.state.tab.next(),
            Action::PrevTab => self.state.tab = self.state.tab.prev(),
            Action::GoTab(tab) => self.state.tab = tab,
            Action::ScrollUp => self.move_by(-1),
            Action::ScrollDown => self.move_by(1),
            Action::PageUp => self.move_by(-(self.page() as isize)),
            Action::PageDown => self.move_by(self.page() as isize),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::OpenSpill => return self.open_spill(),
            Action::OlderCall => self.show_call(self.state.shown.map(|i| i.saturating_sub(1))),
            Action::NewerCall => self.show_call(self.state.shown.map(|i| i + 1)),
            Action::ShowSelected => {
                self.show_call(Some(self.state.history_selected));
                self.state.tab = Tab::Text;
            }
            Action::EditConfig => self.state.editing = Some(Editing::Config),
            Action::ToggleSampling => {
                if self.state.config.toggle_selected() {
                    return self.apply_config();
                }
                self.say("Space flips true/false keys; Enter edits this one", false);
            }
            Action::ApplyConfig => return self.apply_config(),
            Action::Transcript(action) => return self.transcript_action(action),
            Action::Why => return self.open_why(),
            Action::Unsearched => return self.explain_unsearched(),
            Action::CloseWhy => {
                if self.state.explain.take().is_some() {
                    return vec![Effect::StopExplaining];
                }
            }
            Action::WhyScrollUp | Action::WhyScrollDown => {
                let rows = self.page() as isize;
                let delta = if action == Action::WhyScrollUp {
                    -rows
                } else {
                    rows
                };
                if let Some(panel) = &mut self.state.explain {
                    let total = match &panel.status {
                        ExplainStatus::Done(doc) => doc.lines.len(),
                        _ => 0,
                    };
                    panel.scroll = panel
                        .scroll
                        .saturating_add_signed(delta)
                        .min(total.saturating_sub(1));
                }
            }
        }
        Vec::new()
    }

    // ---- why (issue 23) ----

    /// The call the "why" panel is about, as the explain module takes
    /// it, or why it cannot be: in the Transcript tab the replayed record
    /// shown, elsewhere the shown call of the history.
    fn explain_call(&mut self) -> Result<(ExplainTarget, ExplainCall), String> {
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
            CallResult::Recorded(recorded) => {
                let call = Call {
                    name: record.call_id.clone(),
                    tool: tool.clone(),
                    args: args.clone(),
                    options: recorded.options.clone(),
                };
                let (header_config, ripgrep_config) = (
                    recorded.header_config.clone(),
                    recorded.ripgrep_config.clone(),
                );
                let tree = recorded
                    .tree
                    .clone()
                    .ok_or("the recording named no tree (no header was read)")?;
                let tree = self.recording_tree(&tree)?;
                let workdir = call_workdir(tree.root(), &call);
                Ok((
                    target,
                    ExplainCall {
                        tool,
                        args,
                        workdir,
                        source: ExplainSource::Recorded(Box::new(RecordedSource {
                            tree,
                            header_config,
                            ripgrep_config,
                            call,
                        })),
                    },
                ))
            }
        }
    }

    /// The prepared tree of a followed recording: its fixture tree
    /// materialised once (kept for the next call of the same recording),
    /// or the live workdir it was recorded on, in place.
    fn recording_tree(&mut self, tree: &std::path::Path) -> Result<Arc<EngineTree>, String> {
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
    fn open_why(&mut self) -> Vec<Effect> {
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
    fn complete_path(&mut self) {
        let Some(panel) = &mut self.state.explain else {
            return;
        };
        let typed = panel.input.value().to_owned();
        let done = super::completion::complete(std::path::Path::new(&panel.workdir), &typed);
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
    fn explain_typed(&mut self) -> Vec<Effect> {
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
    fn explain_unsearched(&mut self) -> Vec<Effect> {
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

    fn request_explanation(&mut self, query: ExplainQuery) -> Vec<Effect> {
        let (id, call) = match self.explain_call() {
            Ok(found) => found,
            Err(e) => {
                self.say(e, false);
                return Vec::new();
            }
        };
        self.explain_request += 1;
        let request = self.explain_request;
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

    fn explained(&mut self, request: u64, outcome: Result<String, String>) {
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

    fn include_note(&mut self, field: Field) {
        if field == Field::Include && self.state.editor.tool == Tool::Glob {
            self.say(
                "include is sent with grep only; edit the raw args to send it to glob",
                false,
            );
        }
    }

    fn page(&self) -> usize {
        let viewport = if self.state.overlay.is_some() {
            self.state.viewports.overlay
        } else {
            self.state.viewports.pane
        };
        usize::from(viewport.rows.max(2) - 1)
    }

    fn move_by(&mut self, delta: isize) {
        if self.state.overlay.is_some() {
            let max = self.overlay_max_scroll();
            self.state.overlay_scroll = self
                .state
                .overlay_scroll
                .saturating_add_signed(delta)
                .min(max);
            return;
        }
        match self.state.tab {
            Tab::Config => {
                let last = self.state.config.fields.len().saturating_sub(1);
                self.state.config.selected = self
                    .state
                    .config
                    .selected
                    .saturating_add_signed(delta)
                    .min(last);
            }
            Tab::History => {
                let last = self.state.history.len().saturating_sub(1);
                self.state.history_selected = self
                    .state
                    .history_selected
                    .saturating_add_signed(delta)
                    .min(last);
            }
            tab => {
                let max = self.max_scroll(tab);
                let row = self.state.scroll(tab).saturating_add_signed(delta).min(max);
                self.state.set_scroll(tab, row);
            }
        }
    }

    /// The largest first row of `tab` that still fills the pane.
    fn max_scroll(&self, tab: Tab) -> usize {
        let viewport = self.state.viewports.pane;
        content::tab_doc(&self.state, tab).map_or(0, |doc| {
            doc.row_count(doc.text_cols(viewport.cols))
                .saturating_sub(usize::from(viewport.rows))
        })
    }

    fn overlay_max_scroll(&self) -> usize {
        let viewport = self.state.viewports.overlay;
        let rows = match &self.state.overlay {
            Some(Overlay::Help) => {
                let doc = content::help::help_doc(&self.state.session, &self.state.plugin);
                doc.row_count(doc.text_cols(viewport.cols))
            }
            Some(Overlay::Spill {
                state: SpillState::Loaded { doc, .. },
                ..
            }) => doc.row_count(doc.text_cols(viewport.cols)),
            _ => 0,
        };
        rows.saturating_sub(usize::from(viewport.rows))
    }

    fn show_call(&mut self, index: Option<usize>) {
        if let Some(i) = index.filter(|i| *i < self.state.history.len()) {
            self.state.shown = Some(i);
            self.state.history_selected = i;
        }
    }

    fn run(&mut self) -> Vec<Effect> {
        if let Some(running) = &self.state.running {
            let text = format!("call #{} is still running; x cancels it", running.id);
            self.say(text, true);
            return Vec::new();
        }
        let args = match self.state.editor.args_to_send() {
            Ok(args) => args,
            Err(e) => {
                self.say(e, true);
                return Vec::new();
            }
        };
        let id = self.next_id;
        self.next_id += 1;
        let call_id = format!("call-{id}");
        let tool = self.state.editor.tool.name().to_owned();
        self.state.running = Some(Running {
            id,
            call_id: call_id.clone(),
            tool: tool.clone(),
            args: args.clone(),
            config: self.state.applied.clone(),
            started: Instant::now(),
        });
        if !matches!(
            self.state.tab,
            Tab::Text | Tab::Value | Tab::Meta | Tab::Call
        ) {
            self.state.tab = Tab::Text;
        }
        vec![Effect::Run {
            id,
            call_id,
            tool,
            args,
        }]
    }

    fn apply_config(&mut self) -> Vec<Effect> {
        match self.state.config.to_config() {
            Ok(config) => self.load(config),
            Err(e) => {
                self.say(e, true);
                Vec::new()
            }
        }
    }

    fn open_spill(&mut self) -> Vec<Effect> {
        let Some(record) = self.state.shown_record() else {
            self.say("no call yet", false);
            return Vec::new();
        };
        let Some((locator, _)) = record.spill() else {
            self.say("this result has no spill file", false);
            return Vec::new();
        };
        if record.ran().is_none() {
            let text = format!(
                "the recording keeps the spill's locator normalised ({locator}): the file is in the recording server's spill dir"
            );
            self.say(text, false);
            return Vec::new();
        }
        let (call, path) = (record.id, locator.to_owned());
        self.state.overlay = Some(Overlay::Spill {
            call,
            path: path.clone(),
            state: SpillState::Loading,
        });
        self.state.overlay_scroll = 0;
        vec![Effect::ReadSpill { id: call, path }]
    }

    /// Carries out a key of the Transcript tab (or R).
    fn transcript_action(&mut self, action: TranscriptAction) -> Vec<Effect> {
        if action == TranscriptAction::Follow {
            let Some(path) = self.state.transcripts.selected_file() else {
                self.say("no transcript to follow", false);
                return Vec::new();
            };
            let same = |a: &std::path::Path| {
                a == path
                    || a.canonicalize()
                        .is_ok_and(|a| path.canonicalize().is_ok_and(|b| a == b))
            };
            if self.state.follow.as_ref().is_some_and(|f| same(&f.path)) {
                self.state.follow = None;
                self.say(format!("stopped following {}", path.display()), false);
                return vec![Effect::StopFollowing];
            }
            return self.follow(path);
        }
        if action == TranscriptAction::ToggleRecording {
            let state = &mut self.state;
            let (text, alert) = match state
                .transcripts
                .toggle_recording(&state.session, &state.applied)
            {
                Ok(text) => (text, false),
                Err(text) => (text, true),
            };
            self.say(text, alert);
            return Vec::new();
        }
        match action {
            TranscriptAction::Sideways(_) | TranscriptAction::ToggleWrap => {
                let text = match &mut self.state.ablate {
                    Some(ablate) => ablate.change_view(action),
                    None => self.state.transcripts.change_view(action),
                };
                if let Some(text) = text {
                    self.say(text, false);
                }
                return Vec::new();
            }
            TranscriptAction::OpenPath => {
                self.state.transcripts.prompt = Some(tui_input::Input::default());
                self.state.editing = Some(Editing::TranscriptPath);
                return Vec::new();
            }
            _ => {}
        }
        if matches!(
            action,
            TranscriptAction::Ablate | TranscriptAction::CancelAblation
        ) || self.state.ablate.is_some()
        {
            return self.ablate_action(action);
        }
        if action == TranscriptAction::NextChanged
            && let Some(note) = self.state.transcripts.next_changed_note()
        {
            self.say(note, false);
            return Vec::new();
        }
        match self.state.transcripts.apply(action) {
            Some(path) => vec![Effect::ReplayTranscript { path }],
            None => Vec::new(),
        }
    }

    /// Tab in the Transcript tab's path prompt: completes the path from
    /// the current directory (`~/` is home).
    fn complete_transcript_path(&mut self) {
        let Some(input) = &mut self.state.transcripts.prompt else {
            return;
        };
        let typed = input.value().to_owned();
        let (home, rest) = match (typed.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => (Some(PathBuf::from(home)), rest.to_owned()),
            _ => (None, typed.clone()),
        };
        let root = match &home {
            Some(home) => home.clone(),
            None => std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        };
        let done = super::completion::complete(&root, &rest);
        if done.text != rest {
            let text = match home {
                Some(_) => format!("~/{}", done.text),
                None => done.text.clone(),
            };
            *input = input.clone().with_value(text);
        }
        match done.candidates.len() {
            0 => self.say(format!("nothing starts with `{typed}`"), false),
            1 => {}
            _ => self.say(done.candidates.join("  "), false),
        }
    }

    /// Enter in the Transcript tab's path prompt: adds the typed file to
    /// the list and chooses it (a missing file too: it can be followed
    /// until it appears); a directory or an empty path keeps the prompt.
    fn add_typed_transcript(&mut self) {
        let typed = self
            .state
            .transcripts
            .prompt
            .as_ref()
            .map(|i| i.value().trim().to_owned())
            .unwrap_or_default();
        if typed.is_empty() {
            self.say("type the path of a transcript (Tab completes it)", false);
            return;
        }
        let path = match (typed.strip_prefix("~/"), std::env::var_os("HOME")) {
            (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
            _ => PathBuf::from(&typed),
        };
        let path = std::path::absolute(&path).unwrap_or(path);
        if path.is_dir() {
            self.say(
                format!(
                    "{} is a directory: type a file in it (Tab lists them)",
                    path.display()
                ),
                true,
            );
            return;
        }
        let text = if path.exists() {
            format!(
                "added {}: Enter replays it, f follows it, a ablates it",
                path.display()
            )
        } else {
            format!(
                "{} does not exist yet: f follows it and waits for it to appear",
                path.display()
            )
        };
        self.state.transcripts.add_file(path);
        self.state.transcripts.prompt = None;
        self.state.editing = None;
        self.say(text, false);
    }

    // ---- the ablate mode of the Transcript tab ----

    /// Carries out a Transcript tab key in (or into) the ablate mode.
    fn ablate_action(&mut self, action: TranscriptAction) -> Vec<Effect> {
        let running = matches!(
            &self.state.ablate,
            Some(AblateState {
                phase: AblatePhase::Running { .. },
                ..
            })
        );
        let key = match action {
            TranscriptAction::Ablate => {
                if running {
                    self.say("an ablation is running; Esc cancels it", false);
                    return Vec::new();
                }
                return self.ask_ablation();
            }
            TranscriptAction::CancelAblation => {
                if running {
                    self.say("cancelling the ablation", false);
                    return vec![Effect::CancelAblation];
                }
                // No ablation to cancel: Esc closes a replayed record's "why".
                return self.apply(Action::CloseWhy);
            }
            TranscriptAction::Up => AblateMove::Up,
            TranscriptAction::Down => AblateMove::Down,
            TranscriptAction::NextRecord => AblateMove::NextCall,
            TranscriptAction::PrevRecord => AblateMove::PrevCall,
            TranscriptAction::Open => AblateMove::Open,
            TranscriptAction::Back => AblateMove::Back,
            _ => return Vec::new(),
        };
        let Some(ablate) = &mut self.state.ablate else {
            return Vec::new();
        };
        if ablate.apply(key) {
            return Vec::new();
        }
        self.state.ablate = None;
        if running {
            return vec![Effect::CancelAblation];
        }
        Vec::new()
    }

    /// Asks for the `--set` values of an ablation of the chosen transcript.
    fn ask_ablation(&mut self) -> Vec<Effect> {
        let Some(file) = self.state.transcripts.selected_file() else {
            self.say("no transcript to ablate", false);
            return Vec::new();
        };
        self.ablate_generation += 1;
        self.state.ablate = Some(AblateState::asking(file, self.ablate_generation));
        self.state.editing = Some(Editing::Ablate);
        Vec::new()
    }

    /// Enter on the `--set` values: parses them and starts the run.
    fn start_ablation(&mut self) -> Vec<Effect> {
        let Some(AblateState {
            phase: AblatePhase::Asking(input),
            file,
            generation,
        }) = &mut self.state.ablate
        else {
            self.state.editing = None;
            return Vec::new();
        };
        let typed = input.value();
        let values = if typed.trim().is_empty() {
            SUGGESTED_SET
        } else {
            typed
        };
        let variants = values
            .split_whitespace()
            .map(parse_setting)
            .collect::<Result<Vec<_>, _>>()
            .and_then(|settings| combinations(&settings));
        let variants = match variants {
            Ok(variants) => variants,
            Err(e) => {
                let text = e.to_string();
                self.say(text, true);
                return Vec::new();
            }
        };
        let TokenizerStatus::Ready(tokenizer) = &self.state.tokens.tokenizer else {
            self.say(
                "the tokenizer is not ready: the ablation counts page tokens",
                true,
            );
            return Vec::new();
        };
        let effect = Effect::Ablate {
            generation: *generation,
            file: file.clone(),
            variants: variants.clone(),
            tokenizer: tokenizer.clone(),
        };
        self.state.ablate = self.state.ablate.take().map(|a| AblateState {
            phase: AblatePhase::Running {
                variants,
                progress: None,
            },
            ..a
        });
        self.state.editing = None;
        vec![effect]
    }

    /// An outcome of ablation `generation` (others are ignored).
    fn ablation_event(&mut self, generation: u64, event: AblateEvent) {
        let Some(ablate) = self
            .state
            .ablate
            .as_mut()
            .filter(|a| a.generation == generation)
        else {
            return;
        };
        match event {
            AblateEvent::Progress(progress) => {
                if let AblatePhase::Running {
                    progress: shown, ..
                } = &mut ablate.phase
                {
                    *shown = Some(progress);
                }
            }
            AblateEvent::Ended(Ok(done)) => {
                let variant = done.variants.len().saturating_sub(1).min(1);
                ablate.phase = AblatePhase::Done {
                    done,
                    variant,
                    call: 0,
                    diff: None,
                };
            }
            AblateEvent::Ended(Err(stop)) => {
                let (text, alert) = match &stop {
                    AblateStop::Cancelled => ("the ablation was cancelled".to_owned(), false),
                    AblateStop::Failed(e) => (format!("the ablation failed: {e}"), true),
                };
                ablate.phase = AblatePhase::Stopped(stop);
                self.say(text, alert);
            }
        }
    }

    /// Follows the recording at `path` (ending any earlier follow): its
    /// calls join the history as they are recorded.
    pub fn follow(&mut self, path: PathBuf) -> Vec<Effect> {
        self.follow_generation += 1;
        let generation = self.follow_generation;
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
    fn followed(&mut self, generation: u64, update: Update) {
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
                follow.header = Some(*header);
                follow.status = FollowStatus::Reading;
            }
            Update::Record(record) => {
                follow.calls += 1;
                follow.status = FollowStatus::Reading;
                let record = self.recorded_call(generation, *record);
                self.push_call(record);
            }
            Update::Invalid(problem) | Update::Unreadable(problem) => {
                follow.status = FollowStatus::Problem(problem.clone());
                self.say(problem, true);
            }
        }
    }

    fn recorded_call(&mut self, generation: u64, record: Record) -> CallRecord {
        let id = self.next_id;
        self.next_id += 1;
        let (file, config) = match &self.state.follow {
            Some(f) => (f.path.clone(), f.call_config(&record.call.options.config)),
            None => (PathBuf::new(), Value::Null),
        };
        let header = self.state.follow.as_ref().and_then(|f| f.header.as_ref());
        let tree = header.map(|h| fs_search_transcript::replay::tree_path(&file, &h.tree));
        let header_config = header.map_or(Value::Null, |h| h.config.clone());
        let ripgrep_config = header.map(|h| h.env.ripgrep_config.clone());
        CallRecord {
            id,
            call_id: record.call.name,
            tool: record.call.tool,
            args: record.call.args,
            config,
            result: CallResult::Recorded(RecordedCall {
                file,
                line: record.line,
                follow: generation,
                options: record.call.options,
                outcome: record.outcome,
                tree,
                header_config,
                ripgrep_config: ripgrep_config.unwrap_or_default(),
            }),
            docs: Default::default(),
        }
    }

    /// Adds a finished call to the history; it is shown when the newest
    /// call was (or nothing was), so a follow keeps showing the latest.
    fn push_call(&mut self, record: CallRecord) {
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
    fn drop_followed(&mut self, generation: u64) {
        let shown_id = self.state.shown_record().map(|r| r.id);
        self.state
            .history
            .retain(|r| r.recorded().is_none_or(|c| c.follow != generation));
        let count = self.state.history.len();
        self.state.shown = shown_id
            .and_then(|id| self.state.history.iter().position(|r| r.id == id))
            .or_else(|| count.checked_sub(1));
        self.state.history_selected = self.state.shown.unwrap_or(0);
    }

    // ---- effect outcomes ----

    /// Handles one outcome of the effect runner.
    pub fn on_event(&mut self, event: AppEvent) -> Vec<Effect> {
        match event {
            AppEvent::Loaded {
                generation,
                outcome,
            } => {
                if generation == self.generation {
                    self.loaded(outcome);
                }
            }
            AppEvent::Finished {
                id,
                result,
                duration,
                commands,
            } => return self.finished(id, *result, duration, commands),
            AppEvent::TokenizerLoaded(Ok(tokenizer)) => return self.set_tokenizer(tokenizer),
            AppEvent::TokenizerLoaded(Err(error)) => {
                self.say(format!("no token counts: {error}"), true);
                self.state.tokens.tokenizer = TokenizerStatus::Failed(error);
            }
            AppEvent::SpillCounted { id, full } => {
                if let Some(page) = self.state.tokens.calls.get_mut(&id) {
                    page.full = full;
                }
            }
            AppEvent::Lost { id, reason } => {
                if self.state.running.as_ref().is_some_and(|r| r.id == id) {
                    self.state.running = None;
                    self.say(
                        format!("call #{id} failed without a result: {reason}"),
                        true,
                    );
                }
            }
            AppEvent::Followed { generation, update } => self.followed(generation, update),
            AppEvent::Explained { request, outcome } => self.explained(request, outcome),
            AppEvent::AblateProgress {
                generation,
                progress,
            } => self.ablation_event(generation, AblateEvent::Progress(progress)),
            AppEvent::Ablated {
                generation,
                outcome,
            } => self.ablation_event(generation, AblateEvent::Ended(outcome)),
            AppEvent::TranscriptReplayed { path, outcome } => {
                self.state.transcripts.replayed(path, outcome);
            }
            AppEvent::SpillRead { id, outcome } => {
                if let Some(Overlay::Spill { call, state, .. }) = &mut self.state.overlay {
                    if *call != id {
                        return Vec::new();
                    }
                    *state = match outcome {
                        Ok(SpillContent { text, total_bytes }) => SpillState::Loaded {
                            doc: Doc::numbered(&text, LineKind::Body),
                            total_bytes,
                        },
                        Err(e) => SpillState::Failed(e),
                    };
                }
            }
        }
        Vec::new()
    }

    fn loaded(&mut self, outcome: Result<LoadInfo, String>) {
        match outcome {
            Ok(info) => {
                if let Some(warning) = info.rg_missing() {
                    self.state.plugin = PluginStatus::RgMissing(warning.to_owned());
                    let text =
                        format!("ripgrep (rg) is missing: see the {} tab", Tab::Text.title());
                    self.say(text, true);
                } else {
                    self.state.plugin = PluginStatus::Registered;
                    self.state.surface = content::surface::surface(&info, None);
                }
                // An rg-missing load registers nothing: an empty prefix.
                let shown = if info.rg_missing().is_some() {
                    LoadInfo {
                        sections: Vec::new(),
                        tools: Vec::new(),
                        warnings: info.warnings.clone(),
                    }
                } else {
                    info
                };
                let tokens = &mut self.state.tokens;
                tokens.previous = tokens.current.replace(shown);
                self.count_surface();
                if let Some(change) = self.state.tokens.change.clone() {
                    self.say(change, false);
                }
                // A misspelt key is ignored by the engine: said above all.
                let unknown = fs_search_process::unknown_config_keys("config", &self.state.applied);
                if !unknown.is_empty() {
                    self.say(format!("warning: {}", unknown.join("; ")), true);
                }
            }
            Err(error) => {
                self.say(error.clone(), true);
                self.state.plugin = PluginStatus::Failed(error);
            }
        }
        self.refresh_plugin_docs();
    }

    fn finished(
        &mut self,
        id: u64,
        result: ToolResult,
        duration: Duration,
        commands: Vec<super::tap::RanCommand>,
    ) -> Vec<Effect> {
        let Some(running) = self.state.running.take_if(|r| r.id == id) else {
            return Vec::new();
        };
        // The new result's summary replaces any message about the call.
        self.state.status = None;
        let record = CallRecord::new(running, result, duration, commands);
        self.state
            .transcripts
            .record_call(&record, &self.state.session);
        self.state.history.push(record);
        let last = self.state.history.len() - 1;
        self.state.shown = Some(last);
        self.state.history_selected = last;
        self.count_call(last)
    }
}

#[cfg(test)]
mod tests;

/// Whether `tab` shows the "why" panel of `target`.
fn shows_why(tab: Tab, target: &ExplainTarget) -> bool {
    target.shown_in(tab)
}

/// Where `call`'s relative paths resolve in a tree rooted at `root`: its
/// session's `cwd`, else the root (as the fixture engine runs it).
fn call_workdir(root: &std::path::Path, call: &Call) -> String {
    match call.options.session.as_ref().and_then(|s| s.cwd.as_deref()) {
        None | Some(".") => root.to_string_lossy().into_owned(),
        Some(cwd) => root.join(cwd).to_string_lossy().into_owned(),
    }
}

/// Record `index` of a replay, to explain in the tree it was replayed in.
fn replayed_call(replay: &Replay, index: usize) -> Result<(ExplainTarget, ExplainCall), String> {
    let check = replay
        .checks
        .get(index)
        .ok_or("the replay has no record to explain")?;
    let call = check.record.call.clone();
    let header = &replay.transcript.header;
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
            workdir: call_workdir(replay.tree.root(), &call),
            source: ExplainSource::Recorded(Box::new(RecordedSource {
                tree: Arc::clone(&replay.tree),
                header_config: header.config.clone(),
                ripgrep_config: header.env.ripgrep_config.clone(),
                call,
            })),
        },
    ))
}

#[cfg(test)]
mod edge_tests;
