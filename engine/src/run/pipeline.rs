//! The shared run pipeline of both tools (CONTRACT §7.2): resolve, run,
//! and turn the executor's result into complete raw stdout or a
//! `SearchError`, checked strictly in the contract's order. (Only the
//! `stopAtRawOutputCap` opt-in, `OverCap::Stop`, reports an overflow
//! before rg's exit is known; see docs/performance.md.)

use std::any::Any;

use crate::bash::{BashExecutor, BashRequest, CappedRun, OverCap, RunMode, RunOutcome, StdoutSink};
use crate::error::{SearchCode, SearchError, ToolError};
use crate::request::config::ConfigNumber;
use crate::request::exec::ExecContext;
use crate::run::classify::classify_exit;
use crate::run::stream::TextLen;

/// Complete raw stdout of a successful rg run.
#[derive(Debug)]
pub struct RawSearch {
    /// rg's stdout, whole.
    pub stdout: String,
    /// rg exited 1: no results (stdout is ignored).
    pub no_matches: bool,
    /// The resolved working directory: the base of display paths.
    pub workdir: String,
    /// Stdout went to the sink of the streamed run, not into `stdout`.
    pub streamed: bool,
}

fn aborted(tool: &str) -> SearchError {
    SearchError::new(
        SearchCode::Aborted,
        format!("{tool} was aborted before completion (tool timeout or caller cancellation)"),
    )
}

/// The overflow of a stdout the executor did not keep whole (§7.2 step 7).
fn truncated_overflow(tool: &str, raw_output_max_bytes: ConfigNumber) -> SearchError {
    SearchError::new(
        SearchCode::RawOutputOverflow,
        format!(
            "{tool} produced more raw output than the bash executor retained within the {raw_output_max_bytes}-byte cap; narrow pattern, path, or include and retry"
        ),
    )
}

/// A streamed stdout on its way to the caller's sink, its decoded length
/// counted on the way.
struct Counted<S> {
    len: TextLen,
    sink: S,
}

impl<S: StdoutSink> StdoutSink for Counted<S> {
    fn write(&mut self, bytes: &[u8]) {
        self.len.write(bytes);
        self.sink.write(bytes);
    }
}

/// A never-built sink: the type of [`run_ripgrep`]'s absent one.
enum NoSink {}

impl StdoutSink for NoSink {
    fn write(&mut self, _bytes: &[u8]) {
        match *self {}
    }
}

/// Runs `command` for `tool` through `bash`.
pub async fn run_ripgrep(
    tool: &str,
    command: String,
    raw_output_max_bytes: ConfigNumber,
    over_cap: OverCap,
    bash: &dyn BashExecutor,
    exec: &ExecContext,
) -> Result<RawSearch, ToolError> {
    let no_sink = |_: &str| None::<NoSink>;
    run_ripgrep_into(
        tool,
        command,
        raw_output_max_bytes,
        over_cap,
        bash,
        exec,
        no_sink,
    )
    .await
    .map(|(raw, _)| raw)
}

/// [`run_ripgrep`], offering the executor the sink that `sink` builds for
/// the resolved working directory: an executor that streams hands it stdout
/// as it arrives (`streamed`; the sink's reading counts only once every
/// check here has passed), any other leaves stdout in the result. The
/// sink comes back with what it read (`None` when it was not built, or
/// the executor lost it).
pub(crate) async fn run_ripgrep_into<S: StdoutSink>(
    tool: &str,
    command: String,
    raw_output_max_bytes: ConfigNumber,
    over_cap: OverCap,
    bash: &dyn BashExecutor,
    exec: &ExecContext,
    sink: impl FnOnce(&str) -> Option<S>,
) -> Result<(RawSearch, Option<S>), ToolError> {
    let request = BashRequest {
        command,
        workdir: exec.cwd().map(str::to_owned),
        stdout_max_bytes: Some(raw_output_max_bytes.as_u64_saturating()),
        signal: Some(exec.signal.clone()),
        ..BashRequest::default()
    };
    // A resolve() failure propagates as an uncoded error.
    let spec = bash
        .resolve(request)
        .map_err(|e| ToolError::Plain(e.to_string()))?;
    let spec_signal = spec.signal.clone();
    let workdir = spec.workdir.clone();
    // Stdout is used only when complete within the cap: the executor keeps
    // nothing past it, and with `OverCap::Stop` (the `stopAtRawOutputCap`
    // opt-in) ends rg there, giving the overflow of a truncated stdout
    // (step 7) before steps 3 to 6 could see how rg would have ended.
    let mode = match sink(&workdir) {
        Some(sink) => RunMode::streamed(
            over_cap,
            Box::new(Counted {
                len: TextLen::default(),
                sink,
            }),
        ),
        None => RunMode::capped(over_cap),
    };
    let (result, streamed, counted) = match bash.run(spec, mode).await {
        Ok(RunOutcome {
            run: CappedRun::Finished(result),
            to_sink,
            sink,
        }) => {
            let counted = sink.and_then(|sink| {
                let sink: Box<dyn Any> = sink;
                sink.downcast::<Counted<S>>().ok()
            });
            (result, to_sink, counted)
        }
        Ok(RunOutcome {
            run: CappedRun::StdoutOverCap,
            ..
        }) => {
            return Err(truncated_overflow(tool, raw_output_max_bytes).into());
        }
        Err(_) if spec_signal.is_some_and(|s| s.is_cancelled()) => return Err(aborted(tool).into()),
        Err(_) => {
            return Err(SearchError::new(
                SearchCode::Failed,
                format!("{tool} could not start its search command (unusable working directory or missing shell)"),
            )
            .into());
        }
    };
    // Nothing below reads a spill file: the executor may delete them now.
    bash.release(&result);
    if result.aborted {
        return Err(aborted(tool).into());
    }
    if result.timed_out {
        return Err(SearchError::new(
            SearchCode::Aborted,
            format!(
                "{tool} timed out after {}ms in the bash executor; narrow pattern, path, or include and retry",
                result.timeout_ms
            ),
        )
        .into());
    }
    let exit_code = match (result.exit_code, &result.signal) {
        (Some(code), None) => code,
        (_, signal) => {
            return Err(SearchError::new(
                SearchCode::Failed,
                format!(
                    "{tool} search command was killed by signal {}",
                    signal.as_deref().unwrap_or("(unknown)")
                ),
            )
            .into());
        }
    };
    if exit_code != 0 && exit_code != 1 {
        return Err(classify_exit(tool, exit_code, &result.stderr).into());
    }
    if result.stdout.truncated {
        return Err(truncated_overflow(tool, raw_output_max_bytes).into());
    }
    // The cap applies to the decoded text (§7.2): a streamed stdout's
    // length was counted as it passed.
    let bytes = match (streamed, &counted) {
        (true, Some(counted)) => counted.len.total(),
        _ => result.stdout.text.len() as u64,
    };
    if bytes > raw_output_max_bytes.as_u64_saturating() {
        return Err(SearchError::new(
            SearchCode::RawOutputOverflow,
            format!(
                "{tool} produced {bytes} bytes of raw output, over the {raw_output_max_bytes}-byte cap; narrow pattern, path, or include and retry"
            ),
        )
        .into());
    }
    let raw = RawSearch {
        stdout: result.stdout.text,
        no_matches: exit_code == 1,
        workdir,
        streamed,
    };
    Ok((raw, counted.map(|counted| counted.sink)))
}
