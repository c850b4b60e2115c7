//! The workbench's state and its update logic: keys and runner outcomes
//! come in, state changes and [`Effect`]s go out. No terminal here, so
//! every behaviour is unit-testable; `views` draws this state.

use std::cell::{Cell, OnceCell};
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use fs_search_engine::ToolResult;
use ratatui::crossterm::event::{Event, KeyCode, KeyEvent, KeyEventKind};
use serde_json::Value;
use tui_input::backend::crossterm::to_input_request;

use super::config_panel::ConfigPanel;
use super::doc::{Doc, LineKind};
use super::editor::{CallEditor, Field, Tool};
use super::keymap::{self, Action};
use super::result_docs::{self, CallFacts};
use super::runner::{AppEvent, Effect, LoadInfo, SpillContent};
use super::surface_doc;
use super::tabs::Tab;
use super::transcript_pane::TranscriptPane;

/// Where the session runs and logs; shown in the header and the help.
#[derive(Debug, Clone, Default)]
pub struct SessionInfo {
    pub workdir: String,
    pub session_id: String,
    pub spill_root: Option<PathBuf>,
    pub log_path: Option<PathBuf>,
}

/// The plugin as last loaded.
#[derive(Debug, Clone, PartialEq)]
pub enum PluginStatus {
    Loading,
    Registered,
    /// Loaded, but rg is missing: nothing registered.
    RgMissing(String),
    /// The load failed (config error): nothing registered.
    Failed(String),
}

/// One finished call of the session.
#[derive(Debug)]
pub struct CallRecord {
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    pub args: Value,
    /// The config the plugin was loaded with when the call ran.
    pub config: Value,
    pub duration: Duration,
    pub result: ToolResult,
    text: OnceCell<Doc>,
    value: OnceCell<Doc>,
    meta: OnceCell<Doc>,
    details: OnceCell<Doc>,
}

impl CallRecord {
    pub fn new(running: Running, result: ToolResult, duration: Duration) -> Self {
        Self {
            id: running.id,
            call_id: running.call_id,
            tool: running.tool,
            args: running.args,
            config: running.config,
            duration,
            result,
            text: OnceCell::new(),
            value: OnceCell::new(),
            meta: OnceCell::new(),
            details: OnceCell::new(),
        }
    }

    pub fn duration_ms(&self) -> f64 {
        self.duration.as_secs_f64() * 1000.0
    }

    /// The document of `tab` for this call, if the tab shows one.
    pub fn doc(&self, tab: Tab, session_id: &str) -> Option<&Doc> {
        Some(match tab {
            Tab::Text => self
                .text
                .get_or_init(|| result_docs::text_doc(&self.result)),
            Tab::Value => self.value.get_or_init(|| {
                result_docs::json_doc(
                    self.result.value.as_ref(),
                    "null — no canonical value (only successes carry one)",
                )
            }),
            Tab::Meta => self.meta.get_or_init(|| {
                result_docs::json_doc(
                    self.result.meta.as_ref(),
                    "null — no presentation meta (errors and nested calls carry none)",
                )
            }),
            Tab::Call => self.details.get_or_init(|| {
                result_docs::details_doc(&CallFacts {
                    id: self.id,
                    call_id: &self.call_id,
                    session_id,
                    tool: &self.tool,
                    args: &self.args,
                    config: &self.config,
                    duration_ms: self.duration_ms(),
                    result: &self.result,
                })
            }),
            _ => return None,
        })
    }
}

/// The call in flight.
#[derive(Debug, Clone)]
pub struct Running {
    pub id: u64,
    pub call_id: String,
    pub tool: String,
    pub args: Value,
    pub config: Value,
    pub started: Instant,
}

/// Which text field has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editing {
    Call(Field),
    Config,
}

/// The spill file viewer's content.
#[derive(Debug)]
pub enum SpillState {
    Loading,
    Loaded { doc: Doc, total_bytes: u64 },
    Failed(String),
}

/// What is drawn over the panes.
#[derive(Debug)]
pub enum Overlay {
    Help,
    Spill {
        call: u64,
        path: String,
        state: SpillState,
    },
}

/// A one-off message, shown until the next key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub alert: bool,
}

/// The size of the scrollable areas at the last draw (set by `views`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Viewport {
    pub cols: u16,
    pub rows: u16,
}

/// The whole state of the workbench.
pub struct App {
    pub session: SessionInfo,
    pub editor: CallEditor,
    pub config: ConfigPanel,
    pub plugin: PluginStatus,
    /// The config the current plugin status came from.
    pub applied: Value,
    pub surface: Doc,
    /// Shown in the Text tab before the first call.
    pub welcome: Doc,
    pub history: Vec<CallRecord>,
    /// Index into `history` of the call the result tabs show.
    pub shown: Option<usize>,
    pub history_selected: usize,
    pub running: Option<Running>,
    pub tab: Tab,
    pub editing: Option<Editing>,
    pub overlay: Option<Overlay>,
    pub overlay_scroll: usize,
    pub status: Option<Status>,
    scroll: HashMap<(Tab, Option<u64>), usize>,
    /// The document area and the overlay area at the last draw.
    pub pane_viewport: Cell<Viewport>,
    pub overlay_viewport: Cell<Viewport>,
    pub should_quit: bool,
    /// The Transcript tab: recording and replay.
    pub transcripts: TranscriptPane,
    next_id: u64,
    generation: u64,
}

impl App {
    pub fn new(session: SessionInfo, config: &Value) -> Self {
        let transcripts = TranscriptPane::for_session(&session);
        let mut app = Self {
            session,
            editor: CallEditor::default(),
            config: ConfigPanel::from_value(config),
            plugin: PluginStatus::Loading,
            applied: config.clone(),
            surface: Doc::default(),
            welcome: Doc::default(),
            history: Vec::new(),
            shown: None,
            history_selected: 0,
            running: None,
            tab: Tab::Text,
            editing: None,
            overlay: None,
            overlay_scroll: 0,
            status: None,
            scroll: HashMap::new(),
            pane_viewport: Cell::new(Viewport { cols: 76, rows: 12 }),
            overlay_viewport: Cell::new(Viewport { cols: 70, rows: 16 }),
            should_quit: false,
            transcripts,
            next_id: 1,
            generation: 0,
        };
        app.refresh_plugin_docs();
        app
    }

    /// The first effects: load the plugin with the starting config.
    pub fn start(&mut self) -> Vec<Effect> {
        self.load(self.applied.clone())
    }

    fn load(&mut self, config: Value) -> Vec<Effect> {
        self.generation += 1;
        self.plugin = PluginStatus::Loading;
        self.applied = config.clone();
        self.refresh_plugin_docs();
        vec![Effect::Load {
            generation: self.generation,
            config,
        }]
    }

    fn refresh_plugin_docs(&mut self) {
        self.welcome = surface_doc::welcome(&self.plugin);
        if !matches!(self.plugin, PluginStatus::Registered) {
            self.surface = surface_doc::unloaded(&self.plugin);
        }
    }

    fn say(&mut self, text: impl Into<String>, alert: bool) {
        self.status = Some(Status {
            text: text.into(),
            alert,
        });
    }

    /// The shown call, if any.
    pub fn shown_record(&self) -> Option<&CallRecord> {
        self.shown.and_then(|i| self.history.get(i))
    }

    /// The document `tab` shows now, if it is a document tab.
    pub fn tab_doc(&self, tab: Tab) -> Option<&Doc> {
        match tab {
            Tab::Surface => Some(&self.surface),
            Tab::Config | Tab::History | Tab::Transcript => None,
            _ => match self.shown_record() {
                Some(record) => record.doc(tab, &self.session.session_id),
                None => Some(&self.welcome),
            },
        }
    }

    fn scroll_key(&self, tab: Tab) -> (Tab, Option<u64>) {
        let call = match tab {
            Tab::Text | Tab::Value | Tab::Meta | Tab::Call => self.shown_record().map(|r| r.id),
            _ => None,
        };
        (tab, call)
    }

    /// The first row `tab` shows.
    pub fn scroll(&self, tab: Tab) -> usize {
        self.scroll.get(&self.scroll_key(tab)).copied().unwrap_or(0)
    }

    fn set_scroll(&mut self, tab: Tab, row: usize) {
        let key = self.scroll_key(tab);
        self.scroll.insert(key, row);
    }

    // ---- input ----

    /// Handles one terminal event.
    pub fn handle_event(&mut self, event: &Event) -> Vec<Effect> {
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => self.handle_key(key),
            Event::Paste(text) => {
                if let Some(Editing::Call(_) | Editing::Config) = self.editing {
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
        self.status = None;
        let contexts = keymap::contexts(self.editing.is_some(), self.overlay.is_some(), self.tab);
        match keymap::lookup(&contexts, key) {
            Some(Action::GoTab) => {
                let digit = match key.code {
                    KeyCode::Char(c) => c.to_digit(10),
                    _ => None,
                };
                if let Some(tab) = digit.and_then(Tab::from_digit) {
                    self.tab = tab;
                }
                Vec::new()
            }
            Some(action) => self.apply(action),
            None => {
                if self.editing.is_some() {
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
        match self.editing {
            Some(Editing::Call(field)) => {
                let changed = self.editor.input_mut(field).handle(request);
                if changed.is_some_and(|c| c.value) {
                    self.editor.changed(field);
                }
            }
            Some(Editing::Config) => {
                if let Some(input) = self.config.selected_input_mut() {
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
                self.should_quit = true;
                if self.running.is_some() {
                    return vec![Effect::Cancel];
                }
            }
            Action::ToggleHelp => {
                self.overlay = match self.overlay {
                    Some(Overlay::Help) => None,
                    _ => Some(Overlay::Help),
                };
                self.overlay_scroll = 0;
            }
            Action::CloseOverlay => self.overlay = None,
            Action::Submit => match self.editing {
                Some(Editing::Config) => {
                    self.editing = None;
                    return self.apply_config();
                }
                _ => return self.run(),
            },
            Action::Run => return self.run(),
            Action::Cancel => {
                if self.running.is_some() {
                    self.say(
                        "cancelling: the call's signal is aborted and rg is killed",
                        false,
                    );
                    return vec![Effect::Cancel];
                }
                self.say("no call is running", false);
            }
            Action::Edit(field) => {
                self.editing = Some(Editing::Call(field));
                self.include_note(field);
            }
            Action::StopEditing => self.editing = None,
            Action::NextField | Action::PrevField => match self.editing {
                Some(Editing::Call(field)) => {
                    let next = if action == Action::NextField {
                        field.next()
                    } else {
                        field.prev()
                    };
                    self.editing = Some(Editing::Call(next));
                    self.include_note(next);
                }
                Some(Editing::Config) => {
                    if action == Action::NextField {
                        self.config.select_next();
                    } else {
                        self.config.select_prev();
                    }
                }
                None => {}
            },
            Action::ToggleTool => self.editor.toggle_tool(),
            Action::NextTab => self.tab = self.tab.next(),
            Action::PrevTab => self.tab = self.tab.prev(),
            Action::GoTab => {}
            Action::ScrollUp => self.move_by(-1),
            Action::ScrollDown => self.move_by(1),
            Action::PageUp => self.move_by(-(self.page() as isize)),
            Action::PageDown => self.move_by(self.page() as isize),
            Action::Top => self.move_by(isize::MIN / 2),
            Action::Bottom => self.move_by(isize::MAX / 2),
            Action::OpenSpill => return self.open_spill(),
            Action::OlderCall => self.show_call(self.shown.map(|i| i.saturating_sub(1))),
            Action::NewerCall => self.show_call(self.shown.map(|i| i + 1)),
            Action::ShowSelected => {
                self.show_call(Some(self.history_selected));
                self.tab = Tab::Text;
            }
            Action::EditConfig => self.editing = Some(Editing::Config),
            Action::ToggleSampling => {
                if self.config.toggle_selected() {
                    return self.apply_config();
                }
                self.say("Space flips true/false keys; Enter edits this one", false);
            }
            Action::ApplyConfig => return self.apply_config(),
            Action::Transcript(action) => return self.transcript_action(action),
        }
        Vec::new()
    }

    fn include_note(&mut self, field: Field) {
        if field == Field::Include && self.editor.tool == Tool::Glob {
            self.say(
                "include is sent with grep only; edit the raw args to send it to glob",
                false,
            );
        }
    }

    fn page(&self) -> usize {
        let viewport = if self.overlay.is_some() {
            self.overlay_viewport.get()
        } else {
            self.pane_viewport.get()
        };
        usize::from(viewport.rows.max(2) - 1)
    }

    fn move_by(&mut self, delta: isize) {
        if self.overlay.is_some() {
            let max = self.overlay_max_scroll();
            self.overlay_scroll = self.overlay_scroll.saturating_add_signed(delta).min(max);
            return;
        }
        match self.tab {
            Tab::Config => {
                let last = self.config.fields.len().saturating_sub(1);
                self.config.selected = self.config.selected.saturating_add_signed(delta).min(last);
            }
            Tab::History => {
                let last = self.history.len().saturating_sub(1);
                self.history_selected =
                    self.history_selected.saturating_add_signed(delta).min(last);
            }
            tab => {
                let max = self.max_scroll(tab);
                let row = self.scroll(tab).saturating_add_signed(delta).min(max);
                self.set_scroll(tab, row);
            }
        }
    }

    /// The largest first row of `tab` that still fills the pane.
    pub fn max_scroll(&self, tab: Tab) -> usize {
        let viewport = self.pane_viewport.get();
        self.tab_doc(tab).map_or(0, |doc| {
            doc.row_count(super::views::doc_text_cols(doc, viewport.cols))
                .saturating_sub(usize::from(viewport.rows))
        })
    }

    fn overlay_max_scroll(&self) -> usize {
        let viewport = self.overlay_viewport.get();
        let rows = match &self.overlay {
            Some(Overlay::Help) => {
                let doc = super::views::help::help_doc(self);
                doc.row_count(super::views::doc_text_cols(&doc, viewport.cols))
            }
            Some(Overlay::Spill {
                state: SpillState::Loaded { doc, .. },
                ..
            }) => doc.row_count(super::views::doc_text_cols(doc, viewport.cols)),
            _ => 0,
        };
        rows.saturating_sub(usize::from(viewport.rows))
    }

    fn show_call(&mut self, index: Option<usize>) {
        if let Some(i) = index.filter(|i| *i < self.history.len()) {
            self.shown = Some(i);
            self.history_selected = i;
        }
    }

    fn run(&mut self) -> Vec<Effect> {
        if let Some(running) = &self.running {
            let text = format!("call #{} is still running; x cancels it", running.id);
            self.say(text, true);
            return Vec::new();
        }
        let args = match self.editor.args_to_send() {
            Ok(args) => args,
            Err(e) => {
                self.say(e, true);
                return Vec::new();
            }
        };
        let id = self.next_id;
        self.next_id += 1;
        let call_id = format!("call-{id}");
        let tool = self.editor.tool.name().to_owned();
        self.running = Some(Running {
            id,
            call_id: call_id.clone(),
            tool: tool.clone(),
            args: args.clone(),
            config: self.applied.clone(),
            started: Instant::now(),
        });
        if !matches!(self.tab, Tab::Text | Tab::Value | Tab::Meta | Tab::Call) {
            self.tab = Tab::Text;
        }
        vec![Effect::Run {
            id,
            call_id,
            tool,
            args,
        }]
    }

    fn apply_config(&mut self) -> Vec<Effect> {
        match self.config.to_config() {
            Ok(config) => self.load(config),
            Err(e) => {
                self.say(e, true);
                Vec::new()
            }
        }
    }

    fn open_spill(&mut self) -> Vec<Effect> {
        let Some(record) = self.shown_record() else {
            self.say("no call yet", false);
            return Vec::new();
        };
        let Some(spill) = &record.result.spill else {
            self.say("this result has no spill file", false);
            return Vec::new();
        };
        let (call, path) = (record.id, spill.locator.clone());
        self.overlay = Some(Overlay::Spill {
            call,
            path: path.clone(),
            state: SpillState::Loading,
        });
        self.overlay_scroll = 0;
        vec![Effect::ReadSpill { id: call, path }]
    }

    // ---- runner outcomes ----

    /// Handles one outcome of the runner.
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
            } => self.finished(id, *result, duration),
            AppEvent::Lost { id, reason } => {
                if self.running.as_ref().is_some_and(|r| r.id == id) {
                    self.running = None;
                    self.say(
                        format!("call #{id} failed without a result: {reason}"),
                        true,
                    );
                }
            }
            AppEvent::TranscriptReplayed { path, outcome } => {
                self.transcripts.replayed(path, outcome);
            }
            AppEvent::SpillRead { id, outcome } => {
                if let Some(Overlay::Spill { call, state, .. }) = &mut self.overlay {
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
                    self.plugin = PluginStatus::RgMissing(warning.to_owned());
                    self.say("ripgrep (rg) is missing: see the Text tab", true);
                } else {
                    self.plugin = PluginStatus::Registered;
                    self.surface = surface_doc::surface(&info);
                }
            }
            Err(error) => {
                self.say(error.clone(), true);
                self.plugin = PluginStatus::Failed(error);
            }
        }
        self.refresh_plugin_docs();
    }

    fn finished(&mut self, id: u64, result: ToolResult, duration: Duration) {
        let Some(running) = self.running.take_if(|r| r.id == id) else {
            return;
        };
        // The new result's summary replaces any message about the call.
        self.status = None;
        self.history
            .push(CallRecord::new(running, result, duration));
        if let Some(record) = self.history.last() {
            self.transcripts.record_call(record, &self.session);
        }
        let last = self.history.len() - 1;
        self.shown = Some(last);
        self.history_selected = last;
    }
}

#[cfg(test)]
mod tests;
