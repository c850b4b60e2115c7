//! The "why" panel (issue 23 in the TUI): the path being typed, which
//! call it is about, and the explanation (or the `--unsearched` summary)
//! drawn beside the page once the effect runner has it.

use serde_json::Value;
use tui_input::Input;

use crate::tui::doc::Doc;

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
    pub config: Value,
    pub workdir: String,
    /// The session's own call's result (explained as it is); `None` for
    /// a recorded call, which is run again in its tree.
    pub result: Option<Box<fs_search_engine::ToolResult>>,
}

/// The open "why" panel.
#[derive(Debug)]
pub struct ExplainPanel {
    /// The history id of the call explained.
    pub call: u64,
    /// Where the call ran (completion lists its files).
    pub workdir: String,
    pub input: Input,
    pub query: Option<ExplainQuery>,
    pub status: ExplainStatus,
    /// The first row of the explanation shown.
    pub scroll: usize,
}

impl ExplainPanel {
    /// A panel for call `call` (run in `workdir`) with an empty path.
    pub fn new(call: u64, workdir: String) -> Self {
        Self {
            call,
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
                format!(" why {} (call #{}) ", paths.join(" "), self.call)
            }
            Some(ExplainQuery::Unsearched) => format!(" not searched by call #{} ", self.call),
            None => format!(" why: a path of call #{} ", self.call),
        }
    }
}
