//! Explains a call of a transcript (a record replayed in the Transcript
//! tab, or one read from a followed recording). A transcript keeps only
//! what the model saw, so the call is run again exactly as `workbench
//! replay` runs it — the header's config with the call's own keys over it,
//! rg reading the header's config file, in the transcript's tree — and that
//! result is explained, rg's walk asked with the same config file. The tree
//! is prepared once by whoever holds the [`EngineTree`] (a replay keeps
//! the one it ran in), never materialised again per explanation.

use std::path::Path;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::report::Report;
use super::{ExplainError, Request, explain_result};
use crate::fixture_engine::{EngineTree, FixtureEngine};
use crate::format::RecordedCall;

/// Runs `recorded` again in `tree`, its transcript's tree prepared
/// (scratch files under `temp_parent`), and explains `paths` (and what it
/// did not search, if `unsearched`).
pub async fn explain_recorded(
    tree: Arc<EngineTree>,
    recorded: &RecordedCall,
    paths: &[String],
    unsearched: bool,
    temp_parent: &Path,
    stop: &CancellationToken,
) -> Result<Report, ExplainError> {
    let call = &recorded.call;
    let mut engine = FixtureEngine::on_tree(
        tree,
        recorded.header.config.clone(),
        &recorded.header.env.ripgrep_config,
        temp_parent,
    )?
    .with_release(recorded.header.contract);
    let result = engine.run_raw_until(call, Some(stop)).await?;
    if stop.is_cancelled() {
        return Err(super::rg_walk::WalkError::Cancelled.into());
    }
    let config_json = engine.call_config(call);
    let config = fs_search_engine::Config::from_json_as(&config_json, engine.release())?;
    let workdir = engine.call_workdir(call);
    let request = Request {
        tool: &call.tool,
        workdir: &workdir,
        config: &config_json,
        args: &call.args,
        paths,
        unsearched,
        rg_config: Some(engine.rg_config_for(call)),
        executor: fs_search_process::ExecutorKind::Local,
        contract: fs_search_process::ContractChoice::of(engine.release()),
    };
    let notes = result.warnings.clone();
    explain_result(
        &request,
        &workdir.to_string_lossy(),
        &config,
        &result,
        notes,
        stop,
    )
    .await
}
