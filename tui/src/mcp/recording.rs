//! `workbench mcp --record FILE`: every completed call is appended to a
//! transcript (format version 1, see `transcript::format`) as it finishes,
//! in one `write` of its lines to a file opened with `O_APPEND`, so the
//! file is a valid transcript after every call, and after a crash.
//!
//! The header is written when the file is new or empty: its tree is the
//! live workdir (relative to the file's directory), its config the
//! server's, and its env lists no rg config lines (a live session does not
//! pin rg's order unless `RIPGREP_CONFIG_PATH` does: then its lines), so
//! `workbench replay FILE` replays against the live workdir. An existing recording is appended to when its header names the
//! same workdir and config. Each call is recorded with the connection's
//! session id (so spill locators replay to the same session directory),
//! cwd `.`, and the spill mode the server runs with; results are
//! normalised like the TUI's recordings (`<TREE>`, `<SPILL>`, `<RAND>`).
//! Calls the client cancelled, or that shutdown aborted, are not recorded:
//! a replay could not reproduce the moment they were cancelled.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use fs_search_engine::ToolResult;
use serde_json::Value;
use thiserror::Error;

use crate::transcript::fixture_engine::{outcome_of, rg_version};
use crate::transcript::format::{
    self, Call, CallOptions, Header, SessionOption, SpillMode, TranscriptEnv,
};
use crate::transcript::normalise::{Normaliser, TREE};
use crate::transcript::record::relative_path;

#[derive(Debug, Error)]
pub enum RecordingError {
    #[error("--record {}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("--record {}: {message}", path.display())]
    Existing { path: PathBuf, message: String },
}

/// The rg config lines the server's rg runs with: the lines of the file
/// `RIPGREP_CONFIG_PATH` names (comments and blank lines dropped, as rg
/// reads it), none when it is unset or unreadable. Replays pass the same
/// lines to rg, so a server run with `--sort=path` there records a grep
/// file order that replays.
pub fn live_ripgrep_config() -> Vec<String> {
    let Some(path) = std::env::var_os("RIPGREP_CONFIG_PATH").filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    std::fs::read_to_string(&path)
        .map(|text| {
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The recording of one server run.
pub struct Recording {
    path: PathBuf,
    file: Mutex<File>,
    normaliser: Normaliser,
    spill: SpillMode,
    session_id: String,
    /// Records already in the file, so new names stay unique.
    offset: u64,
    /// Shared by several connections (`--listen`): calls are numbered in
    /// the order they are appended, each with its connection's session id.
    shared: bool,
    /// Calls appended so far (numbers a shared recording's calls).
    appended: AtomicU64,
}

impl Recording {
    /// Opens (or creates) `path` for a server on `workdir` with `config`.
    pub fn open(
        path: &Path,
        workdir: &Path,
        config: &Value,
        spill: SpillMode,
        session_id: &str,
    ) -> Result<Self, RecordingError> {
        let io = |source| RecordingError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        let out_dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        let header = Header {
            tree: relative_path(out_dir, workdir),
            config: config.clone(),
            env: TranscriptEnv {
                rg: rg_version(),
                ripgrep_config: live_ripgrep_config(),
            },
        };
        if let (Ok(file_path), Ok(root)) = (path.canonicalize(), workdir.canonicalize())
            && file_path.starts_with(&root)
        {
            tracing::warn!(
                "{} is inside the workdir: the calls see it grow, so replays may differ",
                path.display()
            );
        }
        let existing =
            crate::bounded::read_text(path, crate::bounded::TRANSCRIPT_MAX_BYTES).map_err(io)?;
        let offset = if existing.is_empty() {
            file.write_all(format::header_line(&header).as_bytes())
                .map_err(io)?;
            0
        } else {
            let transcript =
                crate::transcript::parse::parse(&path.display().to_string(), &existing).map_err(
                    |e| RecordingError::Existing {
                        path: path.to_path_buf(),
                        message: format!("cannot append to it: {e}"),
                    },
                )?;
            let old = &transcript.header;
            if old.tree != header.tree || old.config != header.config {
                return Err(RecordingError::Existing {
                    path: path.to_path_buf(),
                    message: format!(
                        "it records tree {} with config {}; this server runs on {} with {} (record to another file)",
                        old.tree, old.config, header.tree, header.config
                    ),
                });
            }
            transcript.records.len() as u64
        };
        Ok(Self {
            path: path.to_path_buf(),
            file: Mutex::new(file),
            normaliser: Normaliser::new().with_root(workdir, TREE),
            spill,
            session_id: session_id.to_owned(),
            offset,
            shared: false,
            appended: AtomicU64::new(0),
        })
    }

    /// The recording of a server whose connections all append to it.
    pub fn shared_by_connections(mut self) -> Self {
        self.shared = true;
        self
    }

    /// The record lines of call `number` (one call line, one result line,
    /// the text lines).
    pub fn lines(&self, number: u64, tool: &str, args: &Value, result: &ToolResult) -> String {
        self.lines_of(number, &self.session_id, tool, args, result)
    }

    fn lines_of(
        &self,
        number: u64,
        session_id: &str,
        tool: &str,
        args: &Value,
        result: &ToolResult,
    ) -> String {
        let call = Call {
            name: format!("call-{}-{tool}", self.offset + number),
            tool: tool.to_owned(),
            args: args.clone(),
            options: CallOptions {
                spill: self.spill,
                session: Some(SessionOption {
                    id: Some(session_id.to_owned()),
                    cwd: Some(".".to_owned()),
                }),
                ..CallOptions::default()
            },
        };
        let outcome = outcome_of(result, &self.normaliser);
        let mut lines = format::call_line(&call);
        lines.push_str(&format::outcome_lines(&call.name, &outcome));
        lines
    }

    /// Appends call `number` in one write.
    pub fn append(&self, number: u64, tool: &str, args: &Value, result: &ToolResult) {
        self.append_call(&self.session_id, number, tool, args, result);
    }

    /// Appends call `number` of the connection whose engine session is
    /// `session_id`, in one write (a shared recording numbers it itself).
    pub fn append_call(
        &self,
        session_id: &str,
        number: u64,
        tool: &str,
        args: &Value,
        result: &ToolResult,
    ) {
        let Ok(mut file) = self.file.lock() else {
            tracing::error!("the recording's lock is poisoned; call {number} not recorded");
            return;
        };
        // Numbered under the lock, so a shared recording's names follow
        // the file's order.
        let (number, session_id) = if self.shared {
            (
                self.appended.fetch_add(1, Ordering::Relaxed) + 1,
                session_id,
            )
        } else {
            (number, self.session_id.as_str())
        };
        let lines = self.lines_of(number, session_id, tool, args, result);
        if let Err(e) = file.write_all(lines.as_bytes()) {
            tracing::error!(
                "cannot append call {number} to {}: {e}",
                self.path.display()
            );
        }
    }

    /// Makes the appended records durable.
    pub fn flush(&self) {
        if let Ok(file) = self.file.lock()
            && let Err(e) = file.sync_data()
        {
            tracing::warn!("cannot sync {}: {e}", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs_search_engine::ToolResult;
    use serde_json::json;

    fn result(text: &str) -> ToolResult {
        let mut result =
            ToolResult::failure("grep", &fs_search_engine::ToolError::Plain("x".to_owned()));
        result.text = text.to_owned();
        result
    }

    #[test]
    fn every_append_leaves_a_valid_transcript_and_a_reopen_continues_the_names() {
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().join("work");
        std::fs::create_dir(&workdir).unwrap();
        let path = dir.path().join("rec.jsonl");
        let config = json!({"sampleOverCapGlobResults": true});
        let rec = Recording::open(&path, &workdir, &config, SpillMode::None, "s1").unwrap();
        let read = || {
            crate::transcript::parse::parse("rec.jsonl", &std::fs::read_to_string(&path).unwrap())
        };
        assert_eq!(read().unwrap().records.len(), 0);
        assert_eq!(read().unwrap().header.tree, "work");
        rec.append(1, "grep", &json!({"pattern": 1}), &result("a\nb"));
        let t = read().unwrap();
        assert_eq!(t.records[0].call.name, "call-1-grep");
        assert_eq!(t.records[0].outcome.text, "a\nb");
        assert_eq!(t.records[0].call.options.spill, SpillMode::None);
        drop(rec);
        let again = Recording::open(&path, &workdir, &config, SpillMode::None, "s2").unwrap();
        again.append(1, "grep", &json!({}), &result(""));
        let t = read().unwrap();
        assert_eq!(t.records[1].call.name, "call-2-grep");
        assert_eq!(
            t.records[1]
                .call
                .options
                .session
                .as_ref()
                .unwrap()
                .id
                .as_deref(),
            Some("s2")
        );
        let other = Recording::open(&path, &workdir, &json!({}), SpillMode::None, "s3");
        assert!(matches!(other, Err(RecordingError::Existing { .. })));
    }
}
