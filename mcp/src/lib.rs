//! `fs-search-mcp`: `workbench mcp --workdir DIR [--config JSON|@FILE] [--spill-dir DIR |
//! --no-spill] [--record FILE]`: the engine's tools served to an MCP
//! client over stdio, on the official Rust SDK (`rmcp`); with `--listen
//! ADDR:PORT`, to several clients over Streamable HTTP (`http`, with
//! `auth` for the bearer token and the Origin and Host checks).
//!
//! - `server`: the handler (`initialize`, `server/discover`,
//!   `tools/list`, `tools/call`, logging), `era`: which protocol era a
//!   message belongs to (2025 sessions or 2026-07-28 stateless), `calls`: running calls (one engine session per
//!   connection, 16 in flight, cancellation, progress), `transport`:
//!   newline-delimited JSON-RPC on stdin/stdout with parse errors and a
//!   message size limit, `message`: reading one message (both
//!   transports), `backlog`: stdio's bound on unanswered requests,
//!   `http_post`, `sessions`, `connections`: the HTTP request path,
//!   `error`: what keeps the server from serving,
//!   `session_recording`: `--record` (its records), `shared_record_file`:
//!   the file behind it (shared by servers, rolled back, rotated),
//!   `result`: the `tools/call` result every server (and `call --host`)
//!   builds.
//! - `serve_recorded`: `--replay TRANSCRIPT...`, recorded answers served
//!   through the `answers` seam of `tools/call`.
//! - stdout carries only JSON-RPC; logs go to the workbench log file (see
//!   `fs_search_process`'s `logging`), warnings also to the client as log notifications;
//!   setup errors go back to the caller, [`run`]'s `Err`, which reports
//!   them on stderr (exit 2).
//! - End of input, SIGTERM, SIGINT or SIGHUP (`fs_search_process`'s `signals`) cancel the calls in flight, wait until
//!   they have returned (their rg groups killed), sync the recording and
//!   exit: 0 at end of input, 128 + the signal's number for a signal.
//! - `hangup`: the client's hang-up (stdin closed) is seen even while
//!   reading is paused, and cancels every call at once; a client that no
//!   longer reads stdout ends the session. Either way the server exits 0
//!   once the calls have returned, writing what it still can.
//! - `args`: the flags of `workbench mcp` ([`McpArgs`]);
//! - `abort`, `auth`, `workspace`: the call abort, the HTTP checks, the
//!   engine loaded for a workdir or a replay.
//! - `entry`: the server as a process of its own ([`main`]), what
//!   `workbench mcp` and the `workbench-mcp` binary both run.

#![warn(unreachable_pub)]

mod abort;
mod answers;
mod args;
mod auth;
mod backlog;
mod calls;
mod connections;
mod entry;
mod era;
mod error;
mod hangup;
mod http;
mod http_post;
mod message;
mod result;
mod serve_recorded;
mod server;
mod session_recording;
mod sessions;
mod shared_record_file;
mod transport;
mod workspace;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

pub use args::{McpArgs, OnMiss};
pub use entry::main;
pub use result::{lens_input, of_tool_result};

pub use self::error::Error;
use self::error::McpError;
use self::hangup::{ClientPipes, Watcher};
use self::transport::{StdioTransport, Writer};
use self::workspace::Workspace;

/// How long shutdown waits for the calls in flight to return.
const SHUTDOWN_WAIT: Duration = Duration::from_secs(10);

/// How long the session may take to write the last answers.
const SESSION_DRAIN: Duration = Duration::from_secs(3);

/// Runs the server until end of input or a signal; the exit status, or
/// what kept it from serving (the caller reports it, exit status 2).
pub async fn run(args: McpArgs) -> Result<ExitCode, Error> {
    fs_search_exec::mark_inherited_descriptors_close_on_exec();
    fs_search_exec::bound_launcher_runs(usize::try_from(args.max_sandboxes).unwrap_or(usize::MAX));
    let logging = fs_search_process::init_logging(args.spill.cutoff());
    if let Some(logging) = &logging {
        let rg = match (args.remote(), &args.contract.rg) {
            (Some(host), _) => host.rg().clone(),
            (None, Some(path)) => fs_search_process::RgInfo::at(path),
            (None, None) => fs_search_process::RgInfo::detect(),
        };
        // With --replay and no --contract, the transcripts' headers name
        // the release (logged when they are read).
        let contract = match (args.contract.contract, args.replay.is_empty()) {
            (Some(release), _) => release.name(),
            (None, true) => fs_search_engine::release::Release::Seed.name(),
            (None, false) => "the transcripts'",
        };
        // Over `--listen` the executor also depends on the address; its
        // own log line says which (http.rs).
        let kind = workspace::executor_for(&args, None);
        let executor = match args.listen {
            Some(_) => "see the listening line",
            None => kind.as_str(),
        };
        tracing::info!(
            log = %logging.path.display(),
            workdir = %args.workdir.as_deref().map_or_else(|| "none".into(), |w| w.display().to_string()),
            replay = ?args.replay,
            executor = %executor,
            contract = %contract,
            rg = %rg.version_line,
            rg_path = %rg.path.as_deref().map_or_else(|| "none".into(), |p| p.display().to_string()),
            "workbench mcp starting"
        );
    }
    let served = match &args.listen {
        Some(_) => http::serve(&args).await,
        None => serve(&args).await,
    };
    match served {
        Ok(code) => {
            tracing::info!(code, "workbench mcp exiting");
            Ok(ExitCode::from(code))
        }
        Err(e) => {
            tracing::error!("{e}");
            tracing::info!(
                code = fs_search_process::exit::ERROR,
                "workbench mcp exiting"
            );
            Err(Error::from(e))
        }
    }
}

async fn serve(args: &McpArgs) -> Result<u8, McpError> {
    let workspace = Workspace::load(args, workspace::executor_for(args, None)).await?;
    let runner = workspace.runner();
    let recording = workspace.recording(args)?.map(Arc::new);
    let server = workspace.server(runner.clone(), recording.clone());

    let pipes = ClientPipes::default();
    let _pipe_watcher = Watcher::stdio(pipes.clone())
        .inspect_err(|e| tracing::warn!("cannot watch stdin and stdout for a hang-up: {e}"))
        .ok();
    let writer = Writer::spawn(tokio::io::stdout(), pipes.clone());
    let transport = StdioTransport::new(tokio::io::stdin(), writer.clone(), pipes.clone());
    let closed = transport.closed();
    let stop = CancellationToken::new();
    let stopped_by = Arc::new(std::sync::Mutex::new(None::<i32>));
    let signals = fs_search_process::install_signals();
    // The watcher: when the client hangs up, abort its calls at once; when
    // reading has ended or on a signal, abort them, wait for them, and
    // stop the session.
    let watcher = {
        let (runner, stop, closed, stopped_by) = (
            runner.clone(),
            stop.clone(),
            closed.clone(),
            stopped_by.clone(),
        );
        tokio::spawn(async move {
            let ended = async {
                tokio::select! {
                    () = closed.cancelled() => None,
                    signal = signals.wait() => Some(signal),
                }
            };
            let signal = tokio::select! {
                signal = ended => signal,
                () = pipes.hung_up().cancelled() => {
                    // What it sent before is still answered; no call runs on.
                    tracing::info!("cancelling every call of the client that hung up");
                    runner.cancel_all();
                    tokio::select! {
                        () = closed.cancelled() => None,
                        signal = signals.wait() => Some(signal),
                    }
                }
            };
            if let Some(signal) = signal {
                tracing::info!(signal, "stopping on a signal");
                if let Ok(mut slot) = stopped_by.lock() {
                    *slot = Some(signal);
                }
            }
            runner.cancel_all();
            if !runner.wait_idle(SHUTDOWN_WAIT).await {
                tracing::warn!("calls still running after {SHUTDOWN_WAIT:?}");
            }
            stop.cancel();
        })
    };

    let started = tokio::select! {
        started = rmcp::serve_server(server, transport) => started.map_err(|e| e.to_string()),
        () = stop.cancelled() => Err("stopped before the client initialized".to_owned()),
    };
    match started {
        Ok(running) => {
            let service = running.cancellation_token();
            let waiting = running.waiting();
            tokio::pin!(waiting);
            let ended = tokio::select! {
                quit = &mut waiting => Some(quit),
                () = stop.cancelled() => None,
            };
            let quit = match ended {
                Some(quit) => Ok(quit),
                None => {
                    // The calls have returned: let rmcp write their
                    // answers, then end the session.
                    service.cancel();
                    tokio::time::timeout(SESSION_DRAIN, waiting).await
                }
            };
            tracing::info!(?quit, "the MCP session ended");
        }
        Err(e) => {
            if !stop.is_cancelled() && !closed.is_cancelled() {
                tracing::warn!("the MCP session did not start: {e}");
            }
        }
    }
    // However the session ended, no call outlives it.
    runner.cancel_all();
    if !runner.wait_idle(SHUTDOWN_WAIT).await {
        tracing::warn!("calls still running after {SHUTDOWN_WAIT:?}");
    }
    watcher.abort();
    if let Some(recording) = &recording {
        recording.flush();
    }
    // Bounded: a client that reads nothing more cannot hold the exit.
    if tokio::time::timeout(SESSION_DRAIN, writer.flush())
        .await
        .is_err()
    {
        tracing::warn!("stdout still full after {SESSION_DRAIN:?}: exiting without it");
    }
    let signal = stopped_by.lock().ok().and_then(|s| *s);
    Ok(signal.map_or(
        fs_search_process::exit::SUCCESS,
        fs_search_process::exit::signalled,
    ))
}
