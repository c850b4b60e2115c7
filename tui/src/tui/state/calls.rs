//! The calls of the session: the one in flight and the finished ones,
//! each finished call with a cache of the documents its tabs show (filled
//! on first view by `content`).

use std::cell::OnceCell;
use std::time::{Duration, Instant};

use fs_search_engine::ToolResult;
use serde_json::Value;

use crate::tui::doc::Doc;

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

/// The documents of a finished call, built once on first view.
#[derive(Debug, Default)]
pub struct RecordDocs {
    pub text: OnceCell<Doc>,
    pub value: OnceCell<Doc>,
    pub meta: OnceCell<Doc>,
    pub details: OnceCell<Doc>,
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
    pub docs: RecordDocs,
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
            docs: RecordDocs::default(),
        }
    }

    pub fn duration_ms(&self) -> f64 {
        self.duration.as_secs_f64() * 1000.0
    }
}
