//! The workbench's update logic, `impl App`: terminal
//! events and keys come in, are looked up in the key map as [`Action`]s
//! and carried out on the [`State`]; the effect runner's outcomes
//! ([`AppEvent`]) come in the same way; what must happen off the UI goes
//! out as [`Effect`]s. No terminal and no screen layout here (the sizes of
//! the scrollable areas arrive through [`App::resize`]), so every
//! behaviour is unit-testable; `views` draws `app.state`.
//!
//! This file holds the input, the calls, the config and the effect
//! outcomes; each feature's part of `impl App` has a file of its own:
//! `why` (the "why" panel), `transcript_tab` (the Transcript tab's keys),
//! `ablate` (its ablate mode), `follow` (following a recording), `lens`
//! (the Text tab's host lens);
//! `latest` is the one guard against stale outcomes (`latest::Latest`).

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs_search_engine::ToolResult;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind};
use serde_json::Value;
use tui_input::backend::crossterm::to_input_request;

use super::content;
use super::effects::{AppEvent, Effect, LoadInfo, SpillContent};
use super::keymap::{self, Action};
use super::scroll_doc::{Doc, LineKind};
use super::state::ablate::{AblatePhase, AblateState};
use super::state::calls::{CallRecord, Running};
use super::state::editor::{Field, Tool};
use super::state::explain::ExplainStatus;
use super::state::session::{PluginStatus, SessionInfo, Status};
use super::state::tokens::{PageTokens, SurfaceTokens, TokenizerStatus, prefix_change};
use super::state::{Editing, Overlay, SpillState, State, Viewports};
use super::tabs::Tab;
use ablate::AblateEvent;
use fs_search_transcript::EngineTree;
use latest::Latest;

/// The workbench: its state and the bookkeeping of its effects.
pub struct App {
    /// Everything the views draw.
    pub state: State,
    /// The id of the next call.
    next_id: u64,
    /// The latest plugin load; outcomes of older loads are ignored.
    loads: Latest,
    /// The latest follow; updates of earlier follows are ignored.
    follows: Latest,
    /// The latest explanation asked for; older outcomes are ignored.
    explanations: Latest,
    /// The latest ablation; outcomes of earlier ones are ignored.
    ablations: Latest,
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
            loads: Latest::default(),
            follows: Latest::default(),
            explanations: Latest::default(),
            ablations: Latest::default(),
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
        self.count_lensed();
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
        let generation = self.loads.next();
        self.state.plugin = PluginStatus::Loading;
        self.state.applied = config.clone();
        self.refresh_plugin_docs();
        vec![Effect::Load { generation, config }]
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
        let effects = self.handle_key_inner(key);
        // The shown call may have changed: its lensed page is counted.
        self.count_lensed();
        effects
    }

    fn handle_key_inner(&mut self, key: &KeyEvent) -> Vec<Effect> {
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
            Action::CycleLens => self.cycle_lens(),
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

    // ---- effect outcomes ----

    /// Handles one outcome of the effect runner.
    pub fn on_event(&mut self, event: AppEvent) -> Vec<Effect> {
        let effects = self.on_outcome(event);
        // A new or followed call may be shown: its lensed page is counted.
        self.count_lensed();
        effects
    }

    fn on_outcome(&mut self, event: AppEvent) -> Vec<Effect> {
        match event {
            AppEvent::Loaded {
                generation,
                outcome,
            } => {
                if self.loads.is(generation) {
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
                let unknown = fs_search_process::unknown_config_keys(
                    "config",
                    &self.state.applied,
                    self.state.session.contract.release,
                );
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
        commands: Vec<super::command_tap::RanCommand>,
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

mod ablate;
mod follow;
mod latest;
mod lens;
mod transcript_tab;
mod why;

#[cfg(test)]
mod tests;

#[cfg(test)]
mod edge_tests;
