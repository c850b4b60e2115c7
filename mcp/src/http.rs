//! `workbench mcp --listen ADDR:PORT [--token-file FILE] [--allow-origin
//! ORIGIN]… [--allow-host HOST]… [--idle-timeout SECS]`: the tools served
//! over MCP Streamable HTTP at `/mcp` (rmcp's `StreamableHttpService` with
//! its `LocalSessionManager`, on hyper's HTTP/1.1 server).
//!
//! - Each client that sends `initialize` gets its own `Mcp-Session-Id`,
//!   its own handler ([`super::server`]) and its own engine session (its
//!   own spill directory, its own [`super::calls::MAX_IN_FLIGHT`] slots);
//!   the registry is loaded once. Sessions, their cap and their idle
//!   expiry are [`super::sessions`]; `DELETE` ends a live one (204), an
//!   ended or unknown one gets 404.
//! - Every request first passes [`super::auth::Gate`] (Host, Origin,
//!   bearer token); only `/mcp` exists (404 elsewhere). Connections are
//!   bounded by [`super::connections`]. A body announced over
//!   [`MAX_BODY_BYTES`] gets 413 before any of it is read; a POST body is
//!   read and classified once by [`super::http_post`] (400 with a JSON-RPC
//!   error for what it refuses) before rmcp serves it.
//! - A call ends early when its client goes away: the response stream of
//!   each request carries a [`CallAbort`] token, cancelled when hyper drops
//!   that stream before its end (the connection closed) and when the
//!   request's session ends (`DELETE`, expiry, shutdown); the handler
//!   aborts the call through the engine's caller-abort path, which kills
//!   rg's process group. (The MCP specification lets a server keep a call
//!   running across a disconnect for resumption; this one does not.)
//! - Accepted sockets are `TCP_NODELAY`: an answer goes out as soon as
//!   it is written, not after the client's delayed ACK of the segment
//!   before it (`tui/benches/mcp_calls.py` measures a call over HTTP
//!   against the raw command).
//! - A 2026-07-28 request ([`super::era`]) needs no session: rmcp serves it
//!   statelessly, with a handler and an engine session of its own (so each
//!   such call has its own session id and spill directory), after the same
//!   gate, body limit and connection bounds; rmcp checks its `_meta`, its
//!   version and its `Mcp-Method`/`Mcp-Name` headers (400 with `-32602`,
//!   `-32022` or `-32020`; 404 with `-32601` for an unknown method).
//! - Calls are recorded (`--record`) into one transcript, each with its
//!   session's id, numbered in the order they complete.
//! - SIGTERM or SIGINT: stop accepting, cancel every call, wait until they
//!   have returned, end the sessions, sync the recording, exit 128 + the
//!   signal's number. Setup failures exit 2 with the reason on stderr, as
//!   does a non-loopback `--listen` without a token.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body::{Body, Frame, SizeHint};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use rmcp::transport::streamable_http_server::session::local::{LocalSessionManager, SessionConfig};
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::McpArgs;
use fs_search_process::ExecutorKind;
use fs_search_process::SetupError;
use fs_search_process::stderr_line;

use super::SHUTDOWN_WAIT;
use super::abort::CallAbort;
use super::auth::{Gate, Refusal, Token};
use super::calls::CallRunner;
use super::connections::{Connections, Limits, Slot};
use super::error::McpError;
use super::http_post::{self, BodyError, Post};
use super::message::ErrorAnswer;
use super::server::McpServer;
use super::sessions::{Activity, MAX_SESSIONS, Sessions, Stash};
use super::workspace::Workspace;

/// The largest request body read (as the stdio transport's line limit).
pub(crate) const MAX_BODY_BYTES: usize = super::transport::MAX_MESSAGE_BYTES;

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How often idle sessions are looked for, at most.
const SWEEP_EVERY: Duration = Duration::from_secs(5);

/// How long open connections get to finish at shutdown.
const CONNECTION_DRAIN: Duration = Duration::from_secs(3);

/// The path MCP is served at.
const MCP_PATH: &str = "/mcp";

/// The session header (lowercase, as hyper keeps header names).
const SESSION_HEADER: &str = "mcp-session-id";

type HttpBody = BoxBody<Bytes, Infallible>;

/// A response body that cancels its request's token when it is dropped
/// before its end: hyper drops it when the client has gone.
struct Watched {
    inner: HttpBody,
    guard: Option<DropGuard>,
    /// The session's activity, held until the answer ends.
    _activity: Option<Activity>,
}

impl Body for Watched {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled
            && let Some(guard) = self.guard.take()
        {
            guard.disarm();
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

fn plain(status: StatusCode, message: &str) -> Response<HttpBody> {
    let mut response = Response::new(Full::new(Bytes::from(format!("{message}\n"))).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

fn refused(refusal: &Refusal) -> Response<HttpBody> {
    let mut response = plain(refusal.status, refusal.message);
    if let Some(challenge) = refusal.challenge() {
        response.headers_mut().insert(
            header::WWW_AUTHENTICATE,
            http::HeaderValue::from_static(challenge),
        );
    }
    response
}

/// The request's `Content-Length`, when it announces more than the limit
/// (or an unreadable length).
fn announces_too_much(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get_all(header::CONTENT_LENGTH)
        .iter()
        .any(|v| {
            v.to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .is_none_or(|n| n > MAX_BODY_BYTES as u64)
        })
}

/// A JSON-RPC error answered over HTTP: 400 with the error as the body
/// (404 for "Method not found", as 2026-07-28 answers a removed method).
fn json_rpc_refusal(answer: &ErrorAnswer) -> Response<HttpBody> {
    let mut response = Response::new(Full::new(Bytes::from(answer.to_bytes())).boxed());
    *response.status_mut() = if answer.code == super::message::METHOD_NOT_FOUND {
        StatusCode::NOT_FOUND
    } else {
        StatusCode::BAD_REQUEST
    };
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// Whether the request says its body is JSON (as rmcp requires).
fn is_json(request: &Request<Incoming>) -> bool {
    request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}

fn too_many_sessions() -> Response<HttpBody> {
    tracing::warn!("refused a session over {MAX_SESSIONS}");
    let mut response = plain(
        StatusCode::SERVICE_UNAVAILABLE,
        "Service Unavailable: too many sessions; end one (DELETE) or retry later",
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, http::HeaderValue::from_static("5"));
    response
}

fn no_session() -> Response<HttpBody> {
    plain(StatusCode::NOT_FOUND, "Not Found: Session not found")
}

/// The server: the gate, rmcp's service, and the sessions.
struct App {
    gate: Gate,
    mcp: StreamableHttpService<McpServer, Sessions>,
    sessions: Arc<Sessions>,
    /// Parent of every token; cancelled at shutdown.
    root: CancellationToken,
    body_timeout: Duration,
}

impl App {
    async fn handle(&self, request: Request<Incoming>, slot: &Slot) -> Response<HttpBody> {
        if request.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, "Not Found: MCP is served at /mcp");
        }
        if let Err(refusal) = self.gate.check(request.headers()) {
            return refused(&refusal);
        }
        if !slot.trust() {
            tracing::warn!("refused a connection over the bound of trusted connections");
            let mut response = plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "Service Unavailable: too many connections; retry later",
            );
            response
                .headers_mut()
                .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
            return response;
        }
        if announces_too_much(&request) {
            tracing::warn!("refused a request body over {MAX_BODY_BYTES} bytes");
            return plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                "Payload Too Large: a request body is at most 8 MiB",
            );
        }
        let session = request
            .headers()
            .get(SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let activity = match &session {
            Some(id) => match self.sessions.enter(id) {
                Some(activity) => Some(activity),
                None => return no_session(),
            },
            None => None,
        };
        match *request.method() {
            Method::POST => self.post(request, activity).await,
            Method::DELETE => match (session, activity) {
                (Some(id), Some(activity)) => {
                    drop(activity);
                    if self.sessions.end(&id).await {
                        tracing::info!(session = id, "session deleted");
                        Response::builder()
                            .status(StatusCode::NO_CONTENT)
                            .body(Full::new(Bytes::new()).boxed())
                            .unwrap_or_else(|_| plain(StatusCode::NO_CONTENT, ""))
                    } else {
                        no_session()
                    }
                }
                _ => plain(
                    StatusCode::BAD_REQUEST,
                    "Bad Request: DELETE needs the Mcp-Session-Id of the session to end",
                ),
            },
            // GET opens a stream; it is not a running call.
            _ => {
                let abort = activity.as_ref().map(|a| a.abort.clone());
                drop(activity);
                self.serve(request, abort, None).await
            }
        }
    }

    /// A POST: read and classified once ([`super::http_post`]), then served by
    /// rmcp, the session's activity held until the answer ends.
    async fn post(
        &self,
        request: Request<Incoming>,
        activity: Option<Activity>,
    ) -> Response<HttpBody> {
        if !is_json(&request) {
            return plain(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Unsupported Media Type: Content-Type must be application/json",
            );
        }
        let (parts, body) = request.into_parts();
        let body = match http_post::read_body(body, MAX_BODY_BYTES, self.body_timeout).await {
            Ok(body) => body,
            Err(e) => {
                tracing::warn!("a request body could not be read: {e}");
                let status = match e {
                    BodyError::TooLarge => StatusCode::PAYLOAD_TOO_LARGE,
                    BodyError::TimedOut(_) => StatusCode::REQUEST_TIMEOUT,
                    BodyError::Broken(_) => StatusCode::BAD_REQUEST,
                };
                let mut response = plain(status, &e.to_string());
                response
                    .headers_mut()
                    .insert(header::CONNECTION, http::HeaderValue::from_static("close"));
                return response;
            }
        };
        let (message, permit) = match http_post::classify(&body, &parts.headers, activity.is_some())
        {
            Post::Refused(answer) => {
                tracing::info!(code = answer.code, "refused a message: {}", answer.message);
                return json_rpc_refusal(&answer);
            }
            Post::InSession(message) | Post::Stateless(message) => (message, None),
            Post::Initialize(message) => match self.sessions.reserve() {
                Some(permit) => (message, Some(permit)),
                None => return too_many_sessions(),
            },
        };
        let copy = match http_post::copy_for_rmcp(&message) {
            Ok(copy) => copy,
            Err(e) => {
                tracing::warn!("cannot re-serialise a message: {e}");
                return plain(StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error");
            }
        };
        let mut request = Request::from_parts(parts, Full::new(copy));
        request
            .extensions_mut()
            .insert(Stash::new(*message, permit));
        let abort = activity.as_ref().map(|a| a.abort.clone());
        self.serve(request, abort, activity).await
    }

    /// Hands `request` to rmcp; its answer's body cancels the request's
    /// abort token if dropped before its end, and holds `activity` until
    /// then.
    async fn serve<B>(
        &self,
        mut request: Request<B>,
        session_abort: Option<CancellationToken>,
        activity: Option<Activity>,
    ) -> Response<HttpBody>
    where
        B: Body + Send + 'static,
        B::Error: std::fmt::Display,
    {
        let abort = session_abort.as_ref().unwrap_or(&self.root).child_token();
        request
            .extensions_mut()
            .insert(CallAbort::new(abort.clone()));
        // Armed from here: a client gone before the answer starts counts too.
        let guard = abort.drop_guard();
        let response = self.mcp.handle(request).await;
        response.map(|inner| {
            BoxBody::new(Watched {
                inner,
                guard: Some(guard),
                _activity: activity,
            })
        })
    }
}

/// The handlers made so far (weakly), to wait for their calls at shutdown.
#[derive(Default)]
struct Runners(Mutex<Vec<Weak<CallRunner>>>);

impl Runners {
    fn add(&self, runner: &Arc<CallRunner>) {
        if let Ok(mut runners) = self.0.lock() {
            runners.retain(|r| r.strong_count() > 0);
            runners.push(Arc::downgrade(runner));
        }
    }

    fn live(&self) -> Vec<Arc<CallRunner>> {
        self.0
            .lock()
            .map(|runners| runners.iter().filter_map(Weak::upgrade).collect())
            .unwrap_or_default()
    }
}

/// The first address `listen` resolves to.
async fn resolve(listen: &str) -> Result<SocketAddr, McpError> {
    let mut addrs = tokio::net::lookup_host(listen)
        .await
        .map_err(|source| McpError::Resolve {
            listen: listen.to_owned(),
            source,
        })?;
    addrs.next().ok_or_else(|| McpError::NoAddress {
        listen: listen.to_owned(),
    })
}

/// Serves until SIGTERM or SIGINT; the exit status.
pub(crate) async fn serve(args: &McpArgs) -> Result<u8, McpError> {
    let listen = args.listen.as_deref().unwrap_or("127.0.0.1:0");
    let addr = resolve(listen).await?;
    let configured = Token::configured(args.token_file.as_deref())?;
    if let Some(warning) = &configured.warning {
        tracing::warn!("{warning}");
        fs_search_process::stderr_line!("workbench mcp: warning: {warning}");
    }
    let token = configured.token;
    let gate = Gate::new(addr, token, &args.allow_origin, &args.allow_host)?;
    let limits = Limits::configured()?;
    let executor = super::workspace::executor_for(args, Some(addr));
    if args.no_sandbox && !addr.ip().is_loopback() {
        let warning = format!(
            "--no-sandbox on {addr}: every client holding the token can read every file this user can read through the tools"
        );
        tracing::warn!("{warning}");
        stderr_line!("workbench mcp: warning: {warning}");
    }
    let workspace = match Workspace::load(args, executor.clone()).await {
        Ok(workspace) => Arc::new(workspace),
        Err(e @ McpError::Setup(SetupError::Executor(_)))
            if args.sandbox.is_none() && executor.is_confined() =>
        {
            return Err(McpError::DefaultSandbox(Box::new(e)));
        }
        Err(e) => return Err(e),
    };
    let recording = workspace.recording(args)?.map(Arc::new);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| McpError::Bind {
            listen: listen.to_owned(),
            addr,
            source,
        })?;
    let bound = listener.local_addr().map_err(McpError::Bound)?;
    tracing::info!(%bound, token = gate.has_token(), "listening");
    let sandbox_note = match &executor {
        ExecutorKind::Local => String::new(),
        ExecutorKind::Direct => " (executor direct: rg runs here without bash)".to_owned(),
        ExecutorKind::Sandbox(_) if args.sandbox.is_some() => {
            format!(" ({})", executor.sandbox_account().unwrap_or_default())
        }
        ExecutorKind::Sandbox(_) => format!(
            " ({}; the default on a non-loopback address, --no-sandbox turns it off)",
            executor.sandbox_account().unwrap_or_default()
        ),
        ExecutorKind::Ssh(remote) if !remote.sandboxed => format!(
            " (rg runs on {}, {}: pages name paths there)",
            remote.label,
            remote.rg().version_line
        ),
        ExecutorKind::Ssh(remote) => format!(
            " (rg runs on {}, {}, sandboxed there by bwrap: {}{}; pages name paths there)",
            remote.label,
            remote.rg().version_line,
            fs_search_process::SANDBOX_READABLE,
            if args.sandbox.is_some() {
                ""
            } else {
                "; the default on a non-loopback address, --no-sandbox turns it off"
            }
        ),
    };
    tracing::info!(executor = executor.as_str(), "executor");
    // Before the start line: a SIGTERM from whoever read it ends the
    // server through its shutdown (masters closed, control directories
    // removed), not by the signal's default action.
    let signals = fs_search_process::install_signals();
    stderr_line!("workbench mcp: listening on http://{bound}{MCP_PATH}{sandbox_note}");

    let runners = Arc::new(Runners::default());
    let factory = {
        let (workspace, recording, runners) =
            (workspace.clone(), recording.clone(), runners.clone());
        move || {
            let runner = workspace.runner();
            runners.add(&runner);
            tracing::debug!(
                session = runner.session_id(),
                "a handler for a new MCP session"
            );
            Ok(workspace.server(runner, recording.clone()))
        }
    };
    // Sessions expire here (see `super::sessions`), not in rmcp, whose
    // keep-alive did not count a running call as activity.
    let mut session_config = SessionConfig::default();
    session_config.keep_alive = None;
    let mut manager = LocalSessionManager::default();
    manager.session_config = session_config;
    let root = CancellationToken::new();
    let sessions = Arc::new(Sessions::new(manager, root.clone()));
    let stop_sessions = CancellationToken::new();
    let config = StreamableHttpServerConfig::default()
        .disable_allowed_hosts()
        .disable_allowed_origins()
        .with_max_request_body_bytes(MAX_BODY_BYTES)
        .with_cancellation_token(stop_sessions.clone());
    let app = Arc::new(App {
        gate,
        mcp: StreamableHttpService::new(factory, sessions.clone(), config),
        sessions,
        root,
        body_timeout: limits.body,
    });

    let idle = Duration::from_secs(args.idle_timeout.max(1));
    let sweeper = {
        let app = app.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval((idle / 4).min(SWEEP_EVERY));
            loop {
                every.tick().await;
                app.sessions.expire(idle).await;
            }
        })
    };
    let connections = Arc::new(Connections::new(limits));
    let closing = CancellationToken::new();
    let tracker = tokio_util::task::TaskTracker::new();
    let signal = async { Some(signals.wait().await) };
    tokio::pin!(signal);
    let signal = loop {
        let (stream, peer) = tokio::select! {
            signal = &mut signal => break signal,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
        };
        // Answers are small and written once: Nagle's algorithm would
        // hold a reply's last segment until the client's delayed ACK.
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(%peer, "cannot set TCP_NODELAY: {e}");
        }
        let slot = Arc::new(connections.admit(peer.ip()));
        let (app, closing) = (app.clone(), closing.clone());
        tracker.spawn(async move {
            let service = {
                let slot = slot.clone();
                hyper::service::service_fn(move |request| {
                    let (app, slot) = (app.clone(), slot.clone());
                    async move { Ok::<_, Infallible>(app.handle(request, &slot).await) }
                })
            };
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = slot.closed().cancelled() => {
                    tracing::debug!(%peer, "connection closed to make room");
                    return;
                }
                () = slot.gate_deadline() => {
                    tracing::debug!(%peer, "connection closed: no request through the gate in time");
                    return;
                }
                () = closing.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = served {
                tracing::debug!(%peer, "connection ended: {e}");
            }
        });
    };
    if let Some(signal) = signal {
        tracing::info!(signal, "stopping on a signal");
    }
    drop(listener);
    // Abort every call, wait until they have returned (rg groups killed).
    app.root.cancel();
    for runner in runners.live() {
        runner.cancel_all();
        if !runner.wait_idle(SHUTDOWN_WAIT).await {
            tracing::warn!(
                session = runner.session_id(),
                "calls still running after {SHUTDOWN_WAIT:?}"
            );
        }
    }
    // Then end the sessions and their streams, and the connections.
    stop_sessions.cancel();
    closing.cancel();
    tracker.close();
    if tokio::time::timeout(CONNECTION_DRAIN, tracker.wait())
        .await
        .is_err()
    {
        tracing::debug!("connections still open at exit");
    }
    sweeper.abort();
    if let Some(recording) = &recording {
        recording.flush();
    }
    Ok(signal.map_or(
        fs_search_process::exit::SUCCESS,
        fs_search_process::exit::signalled,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_body_dropped_before_its_end_cancels_and_one_read_to_the_end_does_not() {
        for read_to_end in [false, true] {
            let token = CancellationToken::new();
            let mut body = Watched {
                inner: Full::new(Bytes::from_static(b"x")).boxed(),
                guard: Some(token.clone().drop_guard()),
                _activity: None,
            };
            if read_to_end {
                while let Some(frame) = body.frame().await {
                    frame.unwrap();
                }
            }
            drop(body);
            assert_eq!(token.is_cancelled(), !read_to_end);
        }
    }
}
