//! The "why" panel (`workbench explain` in the TUI): the path being typed, which
//! call it is about (one of the history, or a record replayed in the
//! Transcript tab), and the explanation (or the `--unsearched` summary)
//! drawn beside the page once the effect runner has it.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;
use tui_input::Input;

use crate::interactive::scroll_doc::Doc;
use crate::interactive::tabs::Tab;
use fs_search_transcript::EngineTree;
use fs_search_transcript::RecordedCall;

/// Which call the panel is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExplainTarget {
    /// A call of the history (typed, or read from a followed recording), by id.
    Call(u64),
    /// Record `name` (at `index`) of the transcript `file` replayed in the
    /// Transcript tab.
    Replayed {
        file: PathBuf,
        index: usize,
        name: String,
    },
}

impl PartialEq for RecordedSource {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.tree, &other.tree) && self.recorded == other.recorded
    }
}

impl ExplainTarget {
    /// Whether `tab` shows the panel about this target: a result tab a
    /// call of the history's, the Transcript tab a replayed record's.
    pub fn shown_in(&self, tab: Tab) -> bool {
        match self {
            Self::Call(_) => tab.is_result(),
            Self::Replayed { .. } => tab == Tab::Transcript,
        }
    }

    /// How the panel's title names it.
    pub fn label(&self) -> String {
        match self {
            Self::Call(id) => format!("call #{id}"),
            Self::Replayed { name, .. } => format!("replayed {name}"),
        }
    }
}

/// What the panel asks about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExplainQuery {
    /// Why these paths are (or are not) on the page.
    Paths(Vec<String>),
    /// What the call did not search.
    Unsearched,
}

/// How the explanation goes.
#[derive(Debug)]
pub enum ExplainStatus {
    /// The path is being typed; nothing asked yet.
    Typing,
    /// The effect runner is explaining request `request`.
    Running { request: u64 },
    /// The explanation, as `workbench explain` prints it.
    Done(Doc),
    /// Nothing could be explained, and why.
    Failed(String),
}

/// The call an explanation is about, as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct ExplainCall {
    pub tool: String,
    pub args: Value,
    /// Where the call's relative paths resolve (completion lists its files).
    pub workdir: String,
    pub source: ExplainSource,
}

/// What is known of the call.
#[derive(Debug, Clone, PartialEq)]
pub enum ExplainSource {
    /// The session's own call: its config and whole result, explained as
    /// it is (only rg's walk runs again).
    Ran {
        config: Value,
        result: Box<fs_search_engine::ToolResult>,
    },
    /// A transcript's call (replayed, or read from a followed recording):
    /// a transcript keeps the text only, so it is run again in its tree,
    /// as `workbench replay` runs it.
    Recorded(Box<RecordedSource>),
}

/// A transcript's call and its prepared tree (the same tree: the same
/// `Arc`).
#[derive(Debug, Clone)]
pub struct RecordedSource {
    pub tree: Arc<EngineTree>,
    pub recorded: RecordedCall,
}

/// The open "why" panel.
#[derive(Debug)]
pub struct ExplainPanel {
    /// The call explained.
    pub target: ExplainTarget,
    /// Where the call ran (completion lists its files).
    pub workdir: String,
    pub input: Input,
    pub query: Option<ExplainQuery>,
    pub status: ExplainStatus,
    /// The first row of the explanation shown.
    pub scroll: usize,
}

impl ExplainPanel {
    /// A panel for `target` (run in `workdir`) with an empty path.
    pub fn new(target: ExplainTarget, workdir: String) -> Self {
        Self {
            target,
            workdir,
            input: Input::default(),
            query: None,
            status: ExplainStatus::Typing,
            scroll: 0,
        }
    }

    /// The panel's title: what it explains.
    pub fn title(&self) -> String {
        match &self.query {
            Some(ExplainQuery::Paths(paths)) => {
                format!(" why {} ({}) ", paths.join(" "), self.target.label())
            }
            Some(ExplainQuery::Unsearched) => format!(" not searched by {} ", self.target.label()),
            None => format!(" why: a path of {} ", self.target.label()),
        }
    }
}
