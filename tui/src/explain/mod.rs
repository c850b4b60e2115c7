//! `workbench explain` (issue 23): for one call, exactly as `workbench
//! call` makes it, why each named path is or is not on the page — decided
//! by what rg did in that call, never by a guess — and what the call never
//! searched.
//!
//! - [`report`]: the verdicts, reasons and summary (the `--json` shape);
//! - [`paths`]: paths in the call's terms (absolute, displayed as the page does);
//! - [`rg_walk`] and [`rg_debug`]: rg's own report of the call's walk;
//! - [`rule_source`]: an ignore rule's file and line (ripgrep's `ignore` crate);
//! - [`result_lines`]: where a path is on the page and in the spill;
//! - [`binary`]: rg's binary rule; [`hints`]: what to check after a no-match;
//! - [`verdict`]: one path's verdict; [`unsearched`]: the `--unsearched` summary;
//! - [`render`]: the text form.

pub mod binary;
pub mod hints;
pub mod paths;
pub mod render;
pub mod report;
pub mod result_lines;
pub mod rg_debug;
pub mod rg_walk;
pub mod rule_source;
pub mod unsearched;
pub mod verdict;

use fs_search_engine::{Config, ExecContext, ToolResult};
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use crate::setup::{SetupError, SpillChoice, load_engine};
use paths::CallPaths;
use report::Report;
use result_lines::ResultIndex;
use rg_walk::{WalkError, WalkSpec};
use verdict::{CallFacts, CallTool};

/// Why nothing could be explained.
#[derive(Debug, Error)]
pub enum ExplainError {
    #[error("{0}")]
    Setup(#[from] SetupError),
    #[error("--config: {0}")]
    Config(#[from] fs_search_engine::ConfigError),
    /// The call itself failed: there is no result to explain.
    #[error("the call failed, so there is nothing to explain: {0}")]
    CallFailed(String),
    #[error("{0}")]
    Walk(#[from] WalkError),
}

/// One explain request: the call and what to explain.
pub struct Request<'a> {
    pub tool: &'a str,
    pub workdir: &'a std::path::Path,
    pub config: &'a Value,
    pub args: &'a Value,
    pub paths: &'a [String],
    pub unsearched: bool,
}

/// Runs the call as `workbench call` does, then explains it. `stop`
/// cancels the call and rg.
pub async fn explain(
    request: Request<'_>,
    spill: SpillChoice<'_>,
    stop: &CancellationToken,
) -> Result<(ToolResult, Report), ExplainError> {
    let config = Config::from_json(request.config)?;
    let loaded = load_engine(Some(request.workdir), request.config, spill).await?;
    let workdir = request.workdir.to_string_lossy().into_owned();
    let exec = ExecContext::new(ExecContext::fresh_id("call"))
        .with_session(Some(&ExecContext::fresh_id("session")), Some(&workdir))
        .with_signal(stop.child_token());
    let result = loaded
        .registry
        .call(request.tool, request.args, &exec)
        .await;
    if stop.is_cancelled() {
        return Err(WalkError::Cancelled.into());
    }
    let mut notes = loaded.warnings.clone();
    notes.extend(result.warnings.iter().cloned());
    let report = explain_result(&request, &workdir, &config, &result, notes, stop).await?;
    Ok((result, report))
}

/// Explains an already made call's `result`.
pub async fn explain_result(
    request: &Request<'_>,
    workdir: &str,
    config: &Config,
    result: &ToolResult,
    notes: Vec<String>,
    stop: &CancellationToken,
) -> Result<Report, ExplainError> {
    // A call rejected before rg ran has nothing to explain; one rg ran
    // and failed (rg 14+ exits 2 when every file was filtered out) does.
    let (tool, root_arg) = call_tool(request.tool, request.args, result)?;
    let call_error = result.is_error.then(|| result.text.clone());
    let paths = CallPaths::new(workdir, root_arg.as_deref());
    let spec = match &tool {
        CallTool::Glob { pattern } => WalkSpec::Glob {
            pattern: pattern.clone(),
        },
        CallTool::Grep { include, .. } => WalkSpec::Grep {
            include: include.clone(),
        },
    };
    let walk = rg_walk::run(&spec, &paths, stop).await?;
    let index = ResultIndex::of(result, &paths);
    let root_is_file = std::fs::metadata(&paths.root).is_ok_and(|m| m.is_file());
    let facts = CallFacts {
        paths: &paths,
        tool: &tool,
        result,
        config,
        index: &index,
        walk: &walk,
        root_is_file,
        call_failed: call_error.is_some(),
    };
    let mut notes = notes;
    notes.extend(
        walk.other_errors
            .iter()
            .map(|e| format!("rg reported: {e}")),
    );
    let mut reports = Vec::with_capacity(request.paths.len());
    for path in request.paths {
        reports.push(verdict::explain_path(&facts, path).await);
    }
    let unsearched = if request.unsearched {
        let (tool, paths, mut walk, index) = (tool.clone(), paths.clone(), walk, index);
        if call_error.is_some() {
            // A failed call searched nothing, whatever rg's walk lists.
            walk.listed.clear();
        }
        let summary = tokio::task::spawn_blocking(move || {
            unsearched::summarise(&tool, &paths, &walk, &index)
        })
        .await
        .map_err(|e| ExplainError::CallFailed(format!("the summary stopped: {e}")))?;
        Some(summary)
    } else {
        None
    };
    Ok(Report {
        tool: request.tool.to_owned(),
        args: request.args.clone(),
        call_error,
        paths: reports,
        notes,
        unsearched,
    })
}

/// The tool and its walk-shaping arguments, as the call's own checks read
/// them; a call they reject (or an unknown tool) never ran rg.
fn call_tool(
    tool: &str,
    args: &Value,
    result: &ToolResult,
) -> Result<(CallTool, Option<String>), ExplainError> {
    let refused = || ExplainError::CallFailed(result.text.clone());
    let schema_ok = !result.is_error
        || result.value.is_some()
        || result
            .code()
            .is_some_and(|code| code.code().starts_with("SEARCH_"));
    if !schema_ok {
        return Err(refused());
    }
    match tool {
        "glob" => {
            let parsed = fs_search_engine::helpers::parse_glob_args(args).map_err(|_| refused())?;
            Ok((
                CallTool::Glob {
                    pattern: parsed.pattern,
                },
                parsed.path,
            ))
        }
        "grep" => {
            let parsed = fs_search_engine::helpers::parse_grep_args(args).map_err(|_| refused())?;
            Ok((
                CallTool::Grep {
                    pattern: parsed.pattern,
                    include: parsed.include,
                },
                parsed.path,
            ))
        }
        _ => Err(refused()),
    }
}
