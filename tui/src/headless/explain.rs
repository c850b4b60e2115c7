//! `workbench explain`: runs one call exactly as `workbench call` does and
//! prints why each named path is (or is not) on its page, and with
//! `--unsearched` what the call never searched (text, or `--json`).

use std::process::ExitCode;

use serde_json::Value;

use super::print;
use crate::cli::ExplainArgs;
use crate::error::Error;
use fs_search_process::read_config;
use fs_search_transcript::explanation_text;
use fs_search_transcript::{ExplainError, ExplainRequest, explain};

/// Runs the call and prints the explanation: 0 (a call rg ran and that
/// failed included: its error heads the report), or 2 for a usage, config
/// or load error or a call refused before rg ran (nothing to explain).
pub(crate) async fn run(args: ExplainArgs) -> Result<ExitCode, Error> {
    let stop = fs_search_process::install_signals();
    let contract = args.contract.choice();
    let config = read_config(args.call.config.raw(), contract.release)?;
    let call_args: Value = fs_search_process::read_args(&args.call.args).await?;
    let request = ExplainRequest {
        tool: &args.call.tool,
        workdir: &args.call.workdir,
        config: &config,
        args: &call_args,
        paths: &args.paths,
        unsearched: args.unsearched,
        rg_config: None,
        executor: args.sandbox.kind(),
        contract,
    };
    let spill_root = fs_search_process::spill_root(&args.call.spill)?;
    let spill = fs_search_process::SpillChoice::of(spill_root.as_deref());
    let outcome = explain(request, spill, stop.token()).await;
    if let Some(signal) = stop.signal() {
        return Ok(ExitCode::from(fs_search_process::exit::signalled(signal)));
    }
    let (_, report) = match outcome {
        Ok(done) => done,
        Err(ExplainError::Setup(e)) => return Err(e.into()),
        Err(e) => return Err(Error::Explain(e)),
    };
    if args.json {
        let json = serde_json::to_string(&report).map_err(Error::ExplainJson)?;
        print(&format!("{json}\n"));
    } else {
        print(&explanation_text(&report));
    }
    Ok(ExitCode::from(fs_search_process::exit::SUCCESS))
}
