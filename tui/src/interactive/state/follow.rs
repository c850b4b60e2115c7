//! Following a recording while it grows (`workbench --follow FILE`, `f`
//! in the Transcript tab): which file, what was read of it, how it goes.
//! The polling runs on the effect runner (`Effect::Follow`); its records
//! become calls of the history, shown like the session's own.

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

use fs_search_transcript::Header;

/// How the follow goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowStatus {
    /// The file does not exist yet.
    Waiting,
    /// Reading it (and waiting for more).
    Reading,
    /// A line broke the format, or the file cannot be read.
    Problem(String),
}

/// The recording being followed.
#[derive(Debug, Clone, PartialEq)]
pub struct Following {
    /// Tells this follow's updates from an earlier one's.
    pub generation: u64,
    pub path: PathBuf,
    /// The header, once read (every call read under it shares it).
    pub header: Option<Arc<Header>>,
    /// The calls read from it so far.
    pub calls: usize,
    pub status: FollowStatus,
}

impl Following {
    pub fn new(generation: u64, path: PathBuf) -> Self {
        Self {
            generation,
            path,
            header: None,
            calls: 0,
            status: FollowStatus::Reading,
        }
    }

    /// The config a recorded call ran with: the header's config with the
    /// call's own keys merged over it (a null key is absent).
    pub fn call_config(&self, changes: &serde_json::Map<String, Value>) -> Value {
        let mut config = self
            .header
            .as_ref()
            .and_then(|h| h.config.as_object().cloned())
            .unwrap_or_default();
        for (key, value) in changes {
            if value.is_null() {
                config.remove(key);
            } else {
                config.insert(key.clone(), value.clone());
            }
        }
        Value::Object(config)
    }

    /// One line for the header and the Transcript tab.
    pub fn describe(&self) -> String {
        let state = match &self.status {
            FollowStatus::Waiting => "waiting for the file to appear".to_owned(),
            FollowStatus::Reading => format!("{} call(s)", self.calls),
            FollowStatus::Problem(p) => format!("{} call(s) · {p}", self.calls),
        };
        format!("following {} · {state}", self.path.display())
    }
}
