//! What every MCP transport serves: the workdir checked, the config read,
//! the engine loaded once (its registry shared by every connection, each
//! connection being its own engine session, so its own spill directory),
//! and the `--record` file opened; with `--replay`, the transcripts'
//! recorded answers and their engine instead ([`super::serve_recorded::load`]).

use std::path::Path;
use std::sync::Arc;

use fs_search_engine::Registry;
use serde_json::Value;

use crate::McpArgs;
use fs_search_process::ExecutorKind;
use fs_search_process::{
    ContractChoice, SpillChoice, check_workdir, load_engine, read_config, spill_root,
};
use fs_search_transcript::SpillMode;

use super::calls::CallRunner;
use super::error::McpError;
use super::serve_recorded::load::Replayed;
use super::server::McpServer;
use super::session_recording::{Recording, RecordingError};

/// The loaded workspace.
pub(crate) struct Workspace {
    pub registry: Arc<Registry>,
    /// The load's warnings (rg missing), logged already.
    pub warnings: Vec<String>,
    pub workdir: String,
    pub config: Value,
    pub spill_mode: SpillMode,
    /// `--replay`: the recorded answers, asked before the engine.
    pub replay: Option<Replayed>,
    /// `--declare-max-result-chars N`: declared on both tools in
    /// `tools/list` (`_meta["anthropic/maxResultSizeChars"]`).
    pub declared_max_result_chars: Option<u64>,
    /// The executor the calls run under.
    pub executor: ExecutorKind,
    /// The release the engine loaded as and the rg it runs (with
    /// `--replay`: the transcripts' release).
    pub contract: ContractChoice,
}

/// The executor `mcp` runs: the sandbox (on HOST with `--executor`) with
/// `--sandbox`, and by default when it listens on `listen`, a
/// non-loopback address (a remote client), unless `--no-sandbox`.
pub(crate) fn executor_for(args: &McpArgs, listen: Option<std::net::SocketAddr>) -> ExecutorKind {
    let public = listen.is_some_and(|addr| !addr.ip().is_loopback());
    let by_default = (public && !args.no_sandbox).then_some(fs_search_exec::Runner::Auto);
    let confined = args.sandbox.or(by_default);
    match &args.executor {
        Some(flag) => flag.kind(confined),
        None => ExecutorKind::from_flag(confined),
    }
}

impl Workspace {
    /// Checks the workdir, reads the config and loads the engine with
    /// the `executor` kind.
    pub(crate) async fn load(args: &McpArgs, executor: ExecutorKind) -> Result<Self, McpError> {
        if !args.replay.is_empty() {
            let replayed = Replayed::load(args, executor.clone()).await?;
            return Ok(Self {
                registry: replayed.registry.clone(),
                warnings: replayed.warnings.clone(),
                workdir: replayed.workdir.clone(),
                config: replayed.config.clone(),
                contract: replayed.contract.clone(),
                spill_mode: SpillMode::Store,
                replay: Some(replayed),
                declared_max_result_chars: args.declare_max_result_chars,
                executor,
            });
        }
        let Some(workdir) = args.workdir.as_deref() else {
            return Err(McpError::NoWorkdir);
        };
        if !executor.is_remote() {
            check_workdir(workdir)?;
        }
        let contract = args.contract.choice();
        let config = read_config(args.config.raw(), contract.release)?;
        let spill_root = spill_root(&args.spill)?;
        let spill = SpillChoice::of(spill_root.as_deref());
        let spill_mode = match spill {
            SpillChoice::None => SpillMode::None,
            SpillChoice::Root(_) => SpillMode::Store,
        };
        let loaded = load_engine(Some(workdir), &config, spill, &executor, &contract).await?;
        for warning in &loaded.warnings {
            tracing::warn!("{warning}");
        }
        Ok(Self {
            registry: Arc::new(loaded.registry),
            warnings: loaded.warnings,
            workdir: workdir.to_string_lossy().into_owned(),
            config,
            spill_mode,
            replay: None,
            declared_max_result_chars: args.declare_max_result_chars,
            executor,
            contract,
        })
    }

    /// A fresh connection: its own engine session over the shared registry.
    pub(crate) fn runner(&self) -> Arc<CallRunner> {
        Arc::new(CallRunner::shared(
            self.registry.clone(),
            self.workdir.clone(),
        ))
    }

    /// Opens `--record FILE`, if given (a FIFO or a device is refused at
    /// once).
    pub(crate) fn recording(&self, args: &McpArgs) -> Result<Option<Recording>, McpError> {
        let Some(path) = &args.record else {
            return Ok(None);
        };
        if let Some(replayed) = &self.replay {
            return replayed.recording(path).map(Some).map_err(McpError::Replay);
        }
        Recording::open(
            path,
            Path::new(&self.workdir),
            &self.config,
            self.spill_mode,
            &self.executor,
            &self.contract,
        )
        .map(Some)
        .map_err(|e| match e {
            RecordingError::Bound(e) => McpError::RecordBound(e),
            RecordingError::File(e) => McpError::Record(e),
        })
    }

    /// The handler of one connection.
    pub(crate) fn server(
        &self,
        runner: Arc<CallRunner>,
        recording: Option<Arc<Recording>>,
    ) -> McpServer {
        let server = McpServer::new(runner, self.warnings.clone(), recording)
            .with_declared_max_result_chars(self.declared_max_result_chars);
        match &self.replay {
            Some(replayed) => server.with_answers(replayed.calls.clone()),
            None => server,
        }
    }
}

#[cfg(test)]
mod bad_workdir_tests {
    use clap::Parser;

    use super::Workspace;
    use crate::McpArgs;

    /// `workbench mcp`'s flags, parsed alone.
    #[derive(Debug, Parser)]
    struct Mcp {
        #[command(flatten)]
        args: McpArgs,
    }

    #[tokio::test]
    async fn the_mcp_workspace_names_a_bad_workdir_as_check_workdir_does() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.txt");
        std::fs::write(&file, "x").unwrap();
        let missing = dir.path().join("missing");
        for (bad, problem) in [
            (&missing, "no such file or directory"),
            (&file, "not a directory (a regular file)"),
        ] {
            let raw = bad.to_str().unwrap();
            let config = r#"{"sampleOverCapGlobResults":true}"#;
            let mcp = Mcp::try_parse_from(["mcp", "--workdir", raw, "--config", config]).unwrap();
            let err = Workspace::load(&mcp.args, fs_search_process::ExecutorKind::Local)
                .await
                .err()
                .unwrap();
            assert_eq!(
                err.to_string(),
                format!("--workdir {}: {problem}", bad.display())
            );
        }
    }

    #[test]
    fn a_remote_executor_is_confined_on_a_public_address_and_by_sandbox_unless_no_sandbox() {
        let executor = |flags: &[&str], listen: &str| {
            let mut argv = vec!["mcp", "--executor", "ssh://devbox", "--workdir", "/srv/w"];
            argv.extend(flags);
            let mcp = Mcp::try_parse_from(argv).unwrap();
            super::executor_for(&mcp.args, Some(listen.parse().unwrap()))
        };
        let confined = |flags: &[&str], listen: &str| {
            let kind = executor(flags, listen);
            assert!(kind.is_remote(), "{kind:?}");
            kind.is_confined()
        };
        assert!(confined(&[], "0.0.0.0:8080"));
        assert!(!confined(&["--no-sandbox"], "0.0.0.0:8080"));
        assert!(!confined(&[], "127.0.0.1:8080"));
        assert!(confined(&["--sandbox"], "127.0.0.1:8080"));
        assert_eq!(
            executor(&[], "0.0.0.0:8080").as_str(),
            "ssh://devbox (sandbox: bwrap)"
        );
    }
}
