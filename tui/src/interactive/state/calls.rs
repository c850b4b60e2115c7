//! The calls of the session: the one in flight and the finished ones,
//! each finished call with a cache of the documents its tabs show (filled
//! on first view by `content`). A finished call is one this session ran
//! (the engine's whole result) or one read from a followed recording
//! (what a transcript keeps: the model-visible text, isError, error
//! `{name, code}`, spill and warnings, normalised).

use std::cell::OnceCell;
use std::time::{Duration, Instant};

use fs_search_engine::ToolResult;
use serde_json::Value;

use crate::interactive::command_tap::RanCommand;
use crate::interactive::scroll_doc::Doc;
use crate::interactive::state::lens::LensedPage;
use fs_search_transcript::RecordedCall;

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
    /// The page through each lens, by its index in
    /// `fs_search_lens::LENSES` (built on first view through it).
    pub lensed: OnceCell<Vec<OnceCell<LensedPage>>>,
}

/// What a finished call returned.
#[derive(Debug)]
pub enum CallResult {
    /// A call this session ran: the engine's whole result.
    Ran {
        result: ToolResult,
        duration: Duration,
        /// What bash ran for it (the rg command line and its directory).
        commands: Vec<RanCommand>,
    },
    /// A call read from a followed recording.
    Recorded {
        /// The follow it came from (a restart drops its calls).
        follow: u64,
        recorded: RecordedCall,
    },
}

/// One finished call of the session.
#[derive(Debug)]
pub struct CallRecord {
    pub id: u64,
    /// The call id (a recorded call: its record name).
    pub call_id: String,
    pub tool: String,
    pub args: Value,
    /// The config the plugin was loaded with when the call ran.
    pub config: Value,
    pub result: CallResult,
    pub docs: RecordDocs,
}

impl CallRecord {
    pub fn new(
        running: Running,
        result: ToolResult,
        duration: Duration,
        commands: Vec<RanCommand>,
    ) -> Self {
        Self {
            id: running.id,
            call_id: running.call_id,
            tool: running.tool,
            args: running.args,
            config: running.config,
            result: CallResult::Ran {
                result,
                duration,
                commands,
            },
            docs: RecordDocs::default(),
        }
    }

    /// The engine's result of a call this session ran.
    pub fn ran(&self) -> Option<&ToolResult> {
        match &self.result {
            CallResult::Ran { result, .. } => Some(result),
            CallResult::Recorded { .. } => None,
        }
    }

    /// The followed recording's record of a recorded call.
    pub fn recorded(&self) -> Option<&RecordedCall> {
        match &self.result {
            CallResult::Ran { .. } => None,
            CallResult::Recorded { recorded, .. } => Some(recorded),
        }
    }

    /// The follow a recorded call came from.
    pub fn follow(&self) -> Option<u64> {
        match &self.result {
            CallResult::Ran { .. } => None,
            CallResult::Recorded { follow, .. } => Some(*follow),
        }
    }

    /// Exactly what the model saw.
    pub fn text(&self) -> &str {
        match &self.result {
            CallResult::Ran { result, .. } => &result.text,
            CallResult::Recorded { recorded: r, .. } => &r.outcome.text,
        }
    }

    pub fn is_error(&self) -> bool {
        match &self.result {
            CallResult::Ran { result, .. } => result.is_error,
            CallResult::Recorded { recorded: r, .. } => r.outcome.is_error,
        }
    }

    /// `error`'s `{name, code}` of a failed call (`None` inside for a
    /// plain error).
    pub fn error_name_code(&self) -> Option<(Option<&str>, Option<&str>)> {
        match &self.result {
            CallResult::Ran { result, .. } => {
                result.error.as_ref().map(|e| (e.name(), e.code_str()))
            }
            CallResult::Recorded { recorded: r, .. } => r
                .outcome
                .error
                .as_ref()
                .map(|e| (e.name.as_deref(), e.code.as_deref())),
        }
    }

    /// The spill's locator and size, if the result was spilled.
    pub fn spill(&self) -> Option<(&str, u64)> {
        match &self.result {
            CallResult::Ran { result, .. } => {
                result.spill.as_ref().map(|s| (s.locator.as_str(), s.bytes))
            }
            CallResult::Recorded { recorded: r, .. } => r
                .outcome
                .spill
                .as_ref()
                .map(|s| (s.locator.as_str(), s.bytes)),
        }
    }

    pub fn warnings(&self) -> &[String] {
        match &self.result {
            CallResult::Ran { result, .. } => &result.warnings,
            CallResult::Recorded { recorded: r, .. } => &r.outcome.warnings,
        }
    }

    /// How long the call took (a recording does not say).
    pub fn duration_ms(&self) -> Option<f64> {
        match &self.result {
            CallResult::Ran { duration, .. } => Some(duration.as_secs_f64() * 1000.0),
            CallResult::Recorded { .. } => None,
        }
    }
}
