//! `workbench explain`: for one call, exactly as `workbench
//! call` makes it, why each named path is or is not on the page — decided
//! by what rg did in that call, never by a guess — and what the call never
//! searched.
//!
//! - `report`: the verdicts, reasons and summary (the `--json` shape);
//! - `paths`: paths in the call's terms (absolute, displayed as the page does);
//! - `rg_walk` and [`rg_debug`]: rg's own report of the call's walk;
//! - `crate_walk`: the same walk replayed by ripgrep's `ignore` crate;
//! - `rule_source`: an ignore rule's file and line (ripgrep's `ignore` crate);
//! - `result_lines`: where a path is on the page and in the spill;
//! - `binary`: rg's binary rule; `hints`: what to check after a no-match;
//! - `verdict`: one path's verdict; `unsearched`: the `--unsearched` summary;
//! - [`render`]: the text form;
//! - [`recorded`]: a transcript's call, run again in its tree and explained.

mod binary;
mod crate_walk;
mod hints;
mod paths;
pub(crate) mod recorded;
pub(crate) mod render;
mod report;
mod result_lines;
pub(crate) mod rg_debug;
mod rg_walk;
mod rule_source;
mod unsearched;
mod verdict;

use std::path::Path;

use fs_search_engine::{Config, ExecContext, ToolResult};
use serde_json::Value;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use fs_search_process::{SetupError, SpillChoice, load_engine};
use paths::CallPaths;
use report::Report;
use result_lines::ResultIndex;
use rg_walk::{Scan, Walk, WalkError, WalkSpec};
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
    /// A transcript's call could not be run again in its tree.
    #[error("cannot run the recorded call again in its tree: {0}")]
    Rerun(#[from] crate::error::EngineError),
    /// A transcript's tree could not be prepared for the call.
    #[error("cannot prepare the recorded call's tree: {0}")]
    Tree(#[from] crate::error::TranscriptError),
}

/// One explain request: the call and what to explain.
pub struct Request<'a> {
    pub tool: &'a str,
    pub workdir: &'a std::path::Path,
    pub config: &'a Value,
    pub args: &'a Value,
    pub paths: &'a [String],
    pub unsearched: bool,
    /// The rg config file the call's rg read (`RIPGREP_CONFIG_PATH`), when
    /// it was not this process's own: a transcript's calls run with the
    /// header's (see `explain_recorded`). rg's walk is asked with the same.
    pub rg_config: Option<&'a std::path::Path>,
    /// The executor the call runs under (rg's walk for the explanation
    /// runs locally either way: it reports paths, never their lines).
    pub executor: fs_search_process::ExecutorKind,
    /// The release the call runs as and the rg it runs (`--contract`,
    /// `--rg`; rg's walk for the explanation runs that rg too).
    pub contract: fs_search_process::ContractChoice,
}

/// What is gathered about the call's tree apart from its result: rg's
/// walk, and for `--unsearched` every entry under the root.
struct Gathered {
    walk: Walk,
    entries: Option<Vec<(String, unsearched::EntryKind)>>,
}

/// Runs rg's walk of the call and (for `--unsearched`) lists every entry
/// under its root, side by side. Neither depends on the call's result, so
/// [`explain`] starts them beside the call itself.
///
/// Named paths get rg's own `--debug` report of its decisions. A summary
/// alone takes them from the `ignore` crate's replay of the walk instead
/// (`crate_walk`), run beside rg, when that replay can stand for rg's
/// report ([`crate_walk::stands_for_rg`]): what rg searched is still rg's
/// answer.
async fn gather(
    spec: &WalkSpec,
    paths: &CallPaths,
    request: &Request<'_>,
    stop: &CancellationToken,
) -> Result<Gathered, ExplainError> {
    // grep's summary needs rg's binary files too: the same rg finds them.
    let scan = if request.unsearched && matches!(spec, WalkSpec::Grep { .. }) {
        Scan::Nul
    } else {
        Scan::Walk
    };
    let by_crate = request.unsearched
        && request.paths.is_empty()
        && fs_search_process::install_log_records()
        && {
            let (paths, config) = (paths.clone(), request.rg_config.map(Path::to_path_buf));
            blocking(move || crate_walk::stands_for_rg(&paths, config.as_deref())).await?
        };
    let walk = rg_walk::run(
        spec,
        scan,
        !by_crate,
        paths,
        request.rg_config,
        request.contract.rg.as_deref(),
        stop,
    );
    let entries = async {
        if !request.unsearched {
            return Ok(None);
        }
        let root = paths.root.clone();
        blocking(move || unsearched::every_entry(&root))
            .await
            .map(Some)
    };
    let decisions = async {
        if !by_crate {
            return Ok(None);
        }
        let (spec, paths) = (spec.clone(), paths.clone());
        blocking(move || crate_walk::decisions(&spec, &paths)).await
    };
    let (walk, entries, decisions) = tokio::join!(walk, entries, decisions);
    let mut walk = walk?;
    if by_crate {
        // Unheard (a glob the crate refuses): no rule is named.
        walk.decisions = decisions?.unwrap_or_default();
        walk.decided_by_crate = true;
    }
    Ok(Gathered {
        walk,
        entries: entries?,
    })
}

/// `work` on a blocking thread (a walk of the tree).
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, ExplainError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| ExplainError::CallFailed(format!("the summary stopped: {e}")))
}

/// The walk spec and paths of a call, from its arguments alone (`None`
/// when its checks refuse them: then rg never ran).
fn walk_of(request: &Request<'_>, workdir: &str) -> Option<(WalkSpec, CallPaths)> {
    let (tool, root_arg) = tool_of_args(request.tool, request.args)?;
    Some((spec_of(&tool), CallPaths::new(workdir, root_arg.as_deref())))
}

fn spec_of(tool: &CallTool) -> WalkSpec {
    match tool {
        CallTool::Glob { pattern } => WalkSpec::Glob {
            pattern: pattern.clone(),
        },
        CallTool::Grep { include, .. } => WalkSpec::Grep {
            include: include.clone(),
        },
    }
}

/// Runs the call as `workbench call` does, then explains it. `stop`
/// cancels the call and rg. rg's walk (and the `--unsearched` listing)
/// run beside the call: the explanation costs little more than the call.
pub async fn explain(
    request: Request<'_>,
    spill: SpillChoice<'_>,
    stop: &CancellationToken,
) -> Result<(ToolResult, Report), ExplainError> {
    let config = Config::from_json_as(request.config, request.contract.release)?;
    let loaded = load_engine(
        Some(request.workdir),
        request.config,
        spill,
        &request.executor,
        &request.contract,
    )
    .await?;
    let workdir = request.workdir.to_string_lossy().into_owned();
    let exec = ExecContext::new(ExecContext::fresh_id("call"))
        .with_session(Some(&ExecContext::fresh_id("session")), Some(&workdir))
        .with_signal(stop.child_token());
    let call = loaded.registry.call(request.tool, request.args, &exec);
    let early = walk_of(&request, &workdir);
    let beside = async {
        match &early {
            Some((spec, paths)) => Some(gather(spec, paths, &request, stop).await),
            None => None,
        }
    };
    let (result, gathered) = tokio::join!(call, beside);
    if stop.is_cancelled() {
        return Err(WalkError::Cancelled.into());
    }
    let mut notes = loaded.warnings.clone();
    notes.extend(result.warnings.iter().cloned());
    let report = explain_with(
        &request,
        &workdir,
        &config,
        &result,
        notes,
        gathered.transpose()?,
        stop,
    )
    .await?;
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
    explain_with(request, workdir, config, result, notes, None, stop).await
}

async fn explain_with(
    request: &Request<'_>,
    workdir: &str,
    config: &Config,
    result: &ToolResult,
    notes: Vec<String>,
    gathered: Option<Gathered>,
    stop: &CancellationToken,
) -> Result<Report, ExplainError> {
    // A call rejected before rg ran has nothing to explain; one rg ran
    // and failed (rg 14+ exits 2 when every file was filtered out) does.
    let (tool, root_arg) = call_tool(request.tool, request.args, result)?;
    let call_error = result.is_error.then(|| result.text.clone());
    let paths = CallPaths::new(workdir, root_arg.as_deref());
    let spec = spec_of(&tool);
    let Gathered { walk, entries } = match gathered {
        Some(gathered) => gathered,
        None => gather(&spec, &paths, request, stop).await?,
    };
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
    let unsearched = match entries {
        Some(entries) => {
            let (tool, paths, mut walk, index) = (tool.clone(), paths.clone(), walk, index);
            if call_error.is_some() {
                // A failed call searched nothing, whatever rg's walk lists.
                walk.listed.clear();
            }
            let summary =
                blocking(move || unsearched::summarise(&tool, &paths, &walk, &index, &entries));
            Some(summary.await?)
        }
        None => None,
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
    tool_of_args(tool, args).ok_or_else(refused)
}

/// The tool and its walk-shaping arguments, as the call's own checks read
/// `args`; `None` for arguments they refuse or an unknown tool.
fn tool_of_args(tool: &str, args: &Value) -> Option<(CallTool, Option<String>)> {
    match tool {
        "glob" => {
            let parsed = fs_search_engine::helpers::parse_glob_args(args).ok()?;
            Some((
                CallTool::Glob {
                    pattern: parsed.pattern,
                },
                parsed.path,
            ))
        }
        "grep" => {
            let parsed = fs_search_engine::helpers::parse_grep_args(args).ok()?;
            Some((
                CallTool::Grep {
                    pattern: parsed.pattern,
                    include: parsed.include,
                },
                parsed.path,
            ))
        }
        _ => None,
    }
}
