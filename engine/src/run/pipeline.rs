//! The shared run pipeline of both tools (CONTRACT §7.2): resolve, run,
//! and turn the executor's result into complete raw stdout or a
//! `SearchError`, checked strictly in the contract's order. (Only the
//! `stopAtRawOutputCap` opt-in, `OverCap::Stop`, reports an overflow
//! before rg's exit is known; see docs/performance.md.)
//!
//! Under 0.1.0-rc.8 ([`Launch::Subprocess`]) the same checks run on rc.8's
//! spawn, with its texts: a run that cannot start is a ripgrep launch
//! failure, there is no executor deadline, and a lossy stdout names the
//! subprocess seam (docs/contract.md, "0.1.0-rc.8").

use std::any::Any;

use crate::bash::{
    BashError, BashExecutor, BashRequest, CappedRun, OverCap, RunMode, RunOutcome, StdoutSink,
    SubprocessRun,
};
use crate::command::RgCommand;
use crate::command::quote::single_quote;
use crate::error::{SearchCode, SearchError, ToolError};
use crate::request::config::{Config, ConfigNumber};
use crate::request::exec::ExecContext;
use crate::run::classify::{classify_exit, classify_rc8_exit};
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

/// How rg is started: the seed's `bash -c` of the command string (its
/// argv offered to an executor that runs without a shell), or rc.8's
/// direct spawn of its argv.
#[derive(Debug, Clone)]
pub(crate) enum Launch {
    /// 0.0.1: `command` through the bash seam.
    Bash {
        /// The shell command string.
        command: String,
        /// The same command's words.
        argv: Option<Vec<String>>,
    },
    /// 0.1.0-rc.8: `argv` spawned as its subprocess seam spawns it.
    Subprocess {
        /// `rg --no-config …`.
        argv: Vec<String>,
        /// Its grace and stderr budget.
        run: SubprocessRun,
    },
}

impl Launch {
    /// How `config`'s release starts the command of `words`.
    pub(crate) fn of(words: &RgCommand<'_>, config: &Config) -> Self {
        match config.subprocess {
            None => Launch::Bash {
                command: words.to_shell(),
                argv: Some(words.to_argv()),
            },
            Some(keys) => Launch::Subprocess {
                argv: words.to_rc8_argv(),
                run: SubprocessRun {
                    grace_ms: keys.grace_ms.as_u64_saturating(),
                    stderr_max_bytes: keys.stderr_max_bytes.as_u64_saturating(),
                },
            },
        }
    }

    fn is_rc8(&self) -> bool {
        matches!(self, Launch::Subprocess { .. })
    }

    /// What the executor is asked to run: its command, argv and run.
    fn into_request_parts(self) -> (String, Option<Vec<String>>, Option<SubprocessRun>) {
        match self {
            Launch::Bash { command, argv } => (command, argv, None),
            // The command string is the argv quoted word by word: its
            // display form, inert should an executor hand it to a shell.
            Launch::Subprocess { argv, run } => {
                let quoted: Vec<String> = argv.iter().map(|word| single_quote(word)).collect();
                (quoted.join(" "), Some(argv), Some(run))
            }
        }
    }
}

/// The overflow of a stdout the executor did not keep whole (§7.2 step 7),
/// naming what kept it: the bash executor, or rc.8's subprocess seam.
fn truncated_overflow(tool: &str, raw_output_max_bytes: ConfigNumber, rc8: bool) -> SearchError {
    let keeper = if rc8 {
        "the subprocess seam"
    } else {
        "the bash executor"
    };
    SearchError::new(
        SearchCode::RawOutputOverflow,
        format!(
            "{tool} produced more raw output than {keeper} retained within the {raw_output_max_bytes}-byte cap; narrow pattern, path, or include and retry"
        ),
    )
}

/// rc.8's failure of a run that could not start (a missing or unusable
/// rg, an unusable working directory, a NUL byte in an argument).
fn launch_failed(tool: &str) -> SearchError {
    SearchError::new(
        SearchCode::Failed,
        format!("{tool} could not start its search command (ripgrep launch failed)"),
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
    let launch = Launch::Bash {
        command,
        argv: None,
    };
    run_ripgrep_into(
        tool,
        launch,
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
    launch: Launch,
    raw_output_max_bytes: ConfigNumber,
    over_cap: OverCap,
    bash: &dyn BashExecutor,
    exec: &ExecContext,
    sink: impl FnOnce(&str) -> Option<S>,
) -> Result<(RawSearch, Option<S>), ToolError> {
    let rc8 = launch.is_rc8();
    let (command, argv, subprocess) = launch.into_request_parts();
    let request = BashRequest {
        command,
        argv,
        subprocess,
        workdir: exec.cwd().map(str::to_owned),
        stdout_max_bytes: Some(raw_output_max_bytes.as_u64_saturating()),
        signal: Some(exec.signal.clone()),
        ..BashRequest::default()
    };
    // A resolve() failure propagates as an uncoded error (rc.8 has no
    // resolve step: its spawn fails to launch).
    let spec = match bash.resolve(request) {
        Ok(spec) => spec,
        Err(_) if rc8 => return Err(launch_failed(tool).into()),
        Err(e) => return Err(ToolError::Plain(e.to_string())),
    };
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
            return Err(truncated_overflow(tool, raw_output_max_bytes, rc8).into());
        }
        // rc.8: only an abort seen before the spawn is an abort; any other
        // failure to start is a launch failure, aborted or not.
        Err(BashError::AbortedBeforeSpawn(_)) if rc8 => return Err(aborted(tool).into()),
        Err(_) if rc8 => return Err(launch_failed(tool).into()),
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
    // rc.8 asks its signal once the run is done, however rg ended.
    let signalled = rc8 && spec_signal.as_ref().is_some_and(|s| s.is_cancelled());
    if result.aborted || signalled {
        return Err(aborted(tool).into());
    }
    if result.timed_out && !rc8 {
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
        let error = if rc8 {
            classify_rc8_exit(tool, exit_code, &result.stderr)
        } else {
            classify_exit(tool, exit_code, &result.stderr)
        };
        return Err(error.into());
    }
    if result.stdout.truncated {
        return Err(truncated_overflow(tool, raw_output_max_bytes, rc8).into());
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
