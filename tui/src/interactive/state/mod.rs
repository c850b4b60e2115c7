//! The workbench's state (the model of its Elm shape): plain data that
//! `App`'s update logic changes and `views` draws. Nothing here knows
//! about keys, effects, the terminal or the screen layout; the sizes of
//! the scrollable areas come in as [`Viewports`], set by the loop.
//!
//! One module per part, each a leaf: [`session`] (where the session runs,
//! the plugin status, the status line), [`calls`] (the running and the
//! finished calls), [`editor`] (the call editor), [`config`] (the config
//! tab's form), [`transcript`] (the Transcript tab: recording, replay),
//! [`follow`] (a recording followed while it grows), [`load`] (what a
//! plugin load registered), [`tokens`] (token
//! counts and the cached prefix), [`explain`] (the "why" panel),
//! [`ablate`] (the Transcript tab's ablate mode), [`lens`] (a page
//! through an agent host's lens).
//! This file composes them into [`State`] with the small shared types
//! (who has the keyboard, what is drawn over the panes).

pub(crate) mod ablate;
pub(crate) mod calls;
pub(crate) mod config;
pub(crate) mod editor;
pub(crate) mod explain;
pub(crate) mod follow;
pub(crate) mod lens;
pub(crate) mod load;
pub(crate) mod session;
pub(crate) mod tokens;
pub(crate) mod transcript;

use std::collections::HashMap;

use serde_json::Value;

use self::ablate::AblateState;
use self::calls::{CallRecord, Running};
use self::config::ConfigForm;
use self::editor::{CallEditor, Field};
use self::explain::ExplainPanel;
use self::follow::Following;
use self::session::{PluginStatus, SessionInfo, Status};
use self::tokens::TokenState;
use self::transcript::TranscriptState;
use super::scroll_doc::Doc;
use super::tabs::Tab;

/// Which text field has the keyboard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Editing {
    Call(Field),
    Config,
    /// The "why" panel's path.
    ExplainPath,
    /// The `--set` values of an ablation (the Transcript tab).
    Ablate,
    /// The path of a transcript to open or follow (the Transcript tab's `o`).
    TranscriptPath,
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

/// The size of a scrollable area, in cells.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Viewport {
    pub cols: u16,
    pub rows: u16,
}

/// The scrollable areas of the screen: the document inside the pane, and
/// the document inside the overlay (help, spill file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewports {
    pub pane: Viewport,
    pub overlay: Viewport,
}

impl Default for Viewports {
    /// The sizes assumed until the loop reports the terminal's.
    fn default() -> Self {
        Self {
            pane: Viewport { cols: 76, rows: 12 },
            overlay: Viewport { cols: 70, rows: 16 },
        }
    }
}

/// The whole state of the workbench.
pub struct State {
    pub session: SessionInfo,
    pub editor: CallEditor,
    pub config: ConfigForm,
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
    /// The first row each document tab shows (per call for result tabs).
    scroll: HashMap<(Tab, Option<u64>), usize>,
    /// The scrollable areas' sizes at the last frame.
    pub viewports: Viewports,
    pub should_quit: bool,
    /// The Transcript tab: recording and replay.
    pub transcripts: TranscriptState,
    /// The recording being followed, if any.
    pub follow: Option<Following>,
    /// Token counts (shown once the tokenizer is ready).
    pub tokens: TokenState,
    /// The "why" panel beside the result tabs, when open.
    pub explain: Option<ExplainPanel>,
    /// The Transcript tab's ablate mode, when on.
    pub ablate: Option<AblateState>,
    /// The host lens the Text tab shows pages through (`None`: the page
    /// as the tool returns it); it stays for the session's later calls.
    pub lens: Option<&'static fs_search_lens::Lens>,
    /// Whether the user chose `lens` (`L`). Until then a recorded call is
    /// shown through the lens of the client that made it ([`State::lens_for`]).
    pub lens_chosen: bool,
}

impl State {
    /// The state of a new session showing `config` (not yet loaded).
    pub fn new(session: SessionInfo, config: &Value) -> Self {
        let transcripts = TranscriptState::for_session(&session);
        Self {
            session,
            editor: CallEditor::default(),
            config: ConfigForm::from_value(config),
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
            viewports: Viewports::default(),
            should_quit: false,
            transcripts,
            follow: None,
            tokens: TokenState::default(),
            explain: None,
            ablate: None,
            lens: None,
            lens_chosen: false,
        }
    }

    /// The shown call, if any.
    pub fn shown_record(&self) -> Option<&CallRecord> {
        self.shown.and_then(|i| self.history.get(i))
    }

    /// The lens `record`'s Text tab is shown through: the one the user
    /// chose, else, for a call a recording says an MCP client made, that
    /// client's host's lens (its era by the client's version).
    pub fn lens_for(&self, record: &CallRecord) -> Option<&'static fs_search_lens::Lens> {
        if self.lens_chosen {
            return self.lens;
        }
        let client = record.recorded()?.call.options.client.as_ref()?;
        fs_search_lens::lens_for_client_version(&client.name, client.version.as_deref())
    }

    /// The lens the shown call's Text tab is shown through.
    pub fn shown_lens(&self) -> Option<&'static fs_search_lens::Lens> {
        self.shown_record().and_then(|record| self.lens_for(record))
    }

    fn scroll_key(&self, tab: Tab) -> (Tab, Option<u64>) {
        let call = match tab {
            Tab::Text | Tab::Value | Tab::Meta | Tab::Call => self.shown_record().map(|r| r.id),
            _ => None,
        };
        (tab, call)
    }

    /// The first row `tab` shows (before clamping to its document).
    pub fn scroll(&self, tab: Tab) -> usize {
        self.scroll.get(&self.scroll_key(tab)).copied().unwrap_or(0)
    }

    pub fn set_scroll(&mut self, tab: Tab, row: usize) {
        let key = self.scroll_key(tab);
        self.scroll.insert(key, row);
    }
}
