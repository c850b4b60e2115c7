//! `workbench mcp --record FILE`: every completed call is appended to a
//! transcript (format version 1, see `transcript::format`) as it finishes,
//! in one write of its lines, so the file is a valid transcript after
//! every call, and after a crash. The file itself — shared by every server
//! recording to the path, names kept unique across them, a failed append
//! rolled back, rotation below the reader's cap — is [`super::shared_record_file`].
//!
//! The header is written when the file is new or empty: its tree is the
//! live workdir (relative to the file's directory), its config the
//! server's, and its env lists no rg config lines (a live session does not
//! pin rg's order unless `RIPGREP_CONFIG_PATH` does: then its lines), so
//! `workbench replay FILE` replays against the live workdir; it names the
//! release (`--contract`) unless that is the seed's 0.0.1, and the rg that
//! `--rg` chose. An existing recording is appended to when its header
//! names the same workdir, config and release. Each call is recorded with its connection's session id (so
//! spill locators replay to the same session directory), cwd `.`, and the
//! spill mode the server runs with, and the client that made it (its
//! `clientInfo` name and version, as [`ClientInfo`] in the call's options:
//! per call, since several clients may share one file); results are
//! normalised like the TUI's
//! recordings (`<TREE>`, `<SPILL>`, `<RAND>`). Calls the client cancelled,
//! or that shutdown aborted, are not recorded: a replay could not
//! reproduce the moment they were cancelled.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fs_search_engine::ToolResult;
use serde_json::Value;
use thiserror::Error;

use super::shared_record_file::{RecordBoundError, RecordFile, RecordFileError, record_max_bytes};
use fs_search_transcript::outcome_of;
use fs_search_transcript::relative_path;
use fs_search_transcript::{
    Call, CallOptions, ClientInfo, Header, RecordedCall, SessionOption, SpillMode, TranscriptEnv,
};
use fs_search_transcript::{Normaliser, TREE};

#[derive(Debug, Error)]
pub(crate) enum RecordingError {
    /// `WORKBENCH_RECORD_MAX_BYTES` is not a usable bound.
    #[error(transparent)]
    Bound(#[from] RecordBoundError),
    #[error(transparent)]
    File(#[from] RecordFileError),
}

/// The rg config lines the server's rg runs with: the lines of the file
/// `RIPGREP_CONFIG_PATH` names (comments and blank lines dropped, as rg
/// reads it), none when it is unset or unreadable. Replays pass the same
/// lines to rg, so a server run with `--sort=path` there records a grep
/// file order that replays.
pub(crate) fn live_ripgrep_config() -> Vec<String> {
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

/// The directory of a recording file (its header's tree is relative to it).
pub(crate) fn record_dir(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."))
}

/// One call the server finished, to record.
#[derive(Clone, Copy)]
pub(crate) struct FinishedCall<'a> {
    /// The engine session of the call's connection.
    pub(crate) session_id: &'a str,
    /// The client's `clientInfo`, when it sent one.
    pub(crate) client: Option<&'a ClientInfo>,
    pub(crate) tool: &'a str,
    pub(crate) args: &'a Value,
    pub(crate) result: &'a ToolResult,
}

/// The recording of one server run (all its connections).
pub(crate) struct Recording {
    file: RecordFile,
    /// The path recorded to, as named.
    path: PathBuf,
    /// The header of the file (an existing file's names the same tree,
    /// config and rg).
    header: Arc<Header>,
    normaliser: Normaliser,
    spill: SpillMode,
}

impl Recording {
    /// Opens (or creates) `path` for a server on `workdir` with `config`.
    pub(crate) fn open(
        path: &Path,
        workdir: &Path,
        config: &Value,
        spill: SpillMode,
        executor: &fs_search_process::ExecutorKind,
        contract: &fs_search_process::ContractChoice,
    ) -> Result<Self, RecordingError> {
        let header = Header {
            contract: contract.release,
            tree: relative_path(record_dir(path), workdir),
            config: config.clone(),
            env: TranscriptEnv {
                rg: contract.rg_info(executor).version_line,
                ripgrep_config: live_ripgrep_config(),
                executor: Some(executor.as_str().to_owned()),
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
        Self::open_with_header(path, header, workdir, spill)
    }

    /// Opens (or creates) `path` with `header` for calls that run on
    /// `root` (their `<TREE>`): `workbench mcp --replay --on-miss live`
    /// records on a transcript's materialised tree under a header naming
    /// the transcript's tree, config and rg config lines.
    pub(crate) fn open_with_header(
        path: &Path,
        header: Header,
        root: &Path,
        spill: SpillMode,
    ) -> Result<Self, RecordingError> {
        let max_bytes = record_max_bytes().map_err(RecordingError::Bound)?;
        Ok(Self {
            file: RecordFile::open(path, header.clone(), max_bytes)?,
            path: path.to_path_buf(),
            header: Arc::new(header),
            normaliser: Normaliser::new().with_root(root, TREE),
            spill,
        })
    }

    /// The record of `finished` as call NUMBER of the file, named
    /// `call-NUMBER-TOOL`, its call line at `line`.
    fn recorded(&self, number: u64, line: usize, finished: &FinishedCall<'_>) -> RecordedCall {
        let FinishedCall {
            session_id,
            client,
            tool,
            args,
            result,
        } = *finished;
        RecordedCall {
            file: self.path.clone(),
            line,
            header: Arc::clone(&self.header),
            call: Call {
                name: format!("call-{number}-{tool}"),
                tool: tool.to_owned(),
                args: args.clone(),
                options: CallOptions {
                    spill: self.spill,
                    session: Some(SessionOption {
                        id: Some(session_id.to_owned()),
                        cwd: Some(".".to_owned()),
                    }),
                    client: client.cloned(),
                    ..CallOptions::default()
                },
            },
            outcome: outcome_of(result, &self.normaliser),
        }
    }

    /// Appends a call of the connection whose engine session is
    /// `session_id`, in one write (one call line, one result line, the
    /// text lines), named after the highest number in the file; returns
    /// it as recorded. On failure nothing was appended.
    pub(crate) fn append_call(
        &self,
        finished: &FinishedCall<'_>,
    ) -> Result<RecordedCall, RecordingError> {
        let recorded = self.file.append(|number, line| {
            let recorded = self.recorded(number, line, finished);
            (recorded.lines(), recorded)
        })?;
        Ok(recorded)
    }

    /// Makes the appended records durable.
    pub(crate) fn flush(&self) {
        self.file.sync();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs_search_engine::ToolResult;
    use fs_search_process::ExecutorKind;
    use serde_json::json;

    fn result(text: &str) -> ToolResult {
        let mut result =
            ToolResult::failure("grep", &fs_search_engine::ToolError::Plain("x".to_owned()));
        result.text = text.to_owned();
        result
    }

    fn call<'a>(
        session_id: &'a str,
        client: Option<&'a ClientInfo>,
        tool: &'a str,
        args: &'a Value,
        result: &'a ToolResult,
    ) -> FinishedCall<'a> {
        FinishedCall {
            session_id,
            client,
            tool,
            args,
            result,
        }
    }

    #[test]
    fn every_append_leaves_a_valid_transcript_and_a_reopen_continues_the_names() {
        let codex = ClientInfo {
            name: "codex-mcp-client".to_owned(),
            version: Some("0.120.0".to_owned()),
        };
        let dir = tempfile::tempdir().unwrap();
        let workdir = dir.path().join("work");
        std::fs::create_dir(&workdir).unwrap();
        let path = dir.path().join("rec.jsonl");
        let config = json!({"sampleOverCapGlobResults": true});
        let rec = Recording::open(
            &path,
            &workdir,
            &config,
            SpillMode::None,
            &ExecutorKind::Local,
            &fs_search_process::ContractChoice::seed(),
        )
        .unwrap();
        let read =
            || fs_search_transcript::parse("rec.jsonl", &std::fs::read_to_string(&path).unwrap());
        assert_eq!(read().unwrap().records.len(), 0);
        assert_eq!(read().unwrap().header.tree, "work");
        let recorded = rec
            .append_call(&call(
                "s1",
                None,
                "grep",
                &json!({"pattern": 1}),
                &result("a\nb"),
            ))
            .unwrap();
        assert_eq!(recorded.call.name, "call-1-grep");
        let t = read().unwrap();
        assert_eq!(
            RecordedCall::of_record(&path, Arc::new(t.header.clone()), &t.records[0], None),
            recorded,
            "the call as appended is the call read back, on its line"
        );
        assert_eq!(t.records[0].outcome.text, "a\nb");
        assert_eq!(t.records[0].call.options.spill, SpillMode::None);
        assert_eq!(t.records[0].call.options.client, None);
        drop(rec);
        let again = Recording::open(
            &path,
            &workdir,
            &config,
            SpillMode::None,
            &ExecutorKind::Local,
            &fs_search_process::ContractChoice::seed(),
        )
        .unwrap();
        again
            .append_call(&call("s2", Some(&codex), "grep", &json!({}), &result("")))
            .unwrap();
        let t = read().unwrap();
        assert_eq!(t.records[1].call.name, "call-2-grep");
        assert_eq!(t.records[1].call.options.client.as_ref(), Some(&codex));
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
        let other = Recording::open(
            &path,
            &workdir,
            &json!({}),
            SpillMode::None,
            &ExecutorKind::Local,
            &fs_search_process::ContractChoice::seed(),
        );
        assert!(matches!(
            other,
            Err(RecordingError::File(RecordFileError::Refused { .. }))
        ));
    }

    #[test]
    fn two_writers_on_one_file_number_after_each_other() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let config = json!({"sampleOverCapGlobResults": true});
        let a = Recording::open(
            &path,
            dir.path(),
            &config,
            SpillMode::None,
            &ExecutorKind::Local,
            &fs_search_process::ContractChoice::seed(),
        )
        .unwrap();
        let b = Recording::open(
            &path,
            dir.path(),
            &config,
            SpillMode::None,
            &ExecutorKind::Local,
            &fs_search_process::ContractChoice::seed(),
        )
        .unwrap();
        let mut names = Vec::new();
        for (writer, session) in [(&a, "a"), (&b, "b"), (&b, "b"), (&a, "a")] {
            names.push(
                writer
                    .append_call(&call(session, None, "glob", &json!({}), &result("x")))
                    .unwrap()
                    .call
                    .name,
            );
        }
        assert_eq!(
            names,
            ["call-1-glob", "call-2-glob", "call-3-glob", "call-4-glob"]
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            fs_search_transcript::parse("rec", &text)
                .unwrap()
                .records
                .len(),
            4
        );
    }
}
