//! `workbench mcp --listen ADDR:PORT [--token-file FILE] [--allow-origin
//! ORIGIN]… [--allow-host HOST]… [--idle-timeout SECS]`: the tools served
//! over MCP Streamable HTTP at `/mcp` (rmcp's `StreamableHttpService` with
//! its `LocalSessionManager`, on hyper's HTTP/1.1 server).
//!
//! - Each client that sends `initialize` gets its own `Mcp-Session-Id`,
//!   its own handler ([`super::server`]) and its own engine session (its
//!   own spill directory, its own [`super::calls::MAX_IN_FLIGHT`] slots);
//!   the registry is loaded once. A session ends on `DELETE`, after
//!   `--idle-timeout` seconds without a message (default 30 min), or at
//!   shutdown; at most [`MAX_SESSIONS`] live at once (then 503).
//! - Every request first passes [`super::auth::Gate`] (Host, Origin,
//!   bearer token); only `/mcp` exists (404 elsewhere). A body announced
//!   over [`MAX_BODY_BYTES`] gets 413 before any of it is read; a chunked
//!   one is cut off at that size by rmcp (413 too).
//! - A call ends early when its client goes away: the response stream of
//!   each request carries a [`CallAbort`] token, cancelled when hyper drops
//!   that stream before its end (the connection closed) and when the
//!   request's session ends (`DELETE`, expiry, shutdown); the handler
//!   aborts the call through the engine's caller-abort path, which kills
//!   rg's process group. (The MCP specification lets a server keep a call
//!   running across a disconnect for resumption; this one does not.)
//! - Calls are recorded (`--record`) into one transcript, each with its
//!   session's id, numbered in the order they complete.
//! - SIGTERM or SIGINT: stop accepting, cancel every call, wait until they
//!   have returned, end the sessions, sync the recording, exit 128 + the
//!   signal's number. Setup failures exit 2 with the reason on stderr, as
//!   does a non-loopback `--listen` without a token.

use std::collections::{HashMap, HashSet};
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
use tokio::sync::Semaphore;
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::cli::McpArgs;
use crate::console::stderr_line;

use super::SHUTDOWN_WAIT;
use super::abort::CallAbort;
use super::auth::{Gate, Refusal, Token};
use super::calls::CallRunner;
use super::server::McpServer;
use super::workspace::Workspace;

/// The largest request body read (as the stdio transport's line limit).
pub const MAX_BODY_BYTES: usize = super::transport::MAX_MESSAGE_BYTES;

/// Sessions alive at once; an `initialize` beyond gets 503.
pub const MAX_SESSIONS: usize = 256;

/// Connections served at once; more wait in the listen backlog.
pub const MAX_CONNECTIONS: usize = 1024;

/// How long a client may take to send a request's headers.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(30);

/// How often the abort tokens of ended sessions are dropped.
const SWEEP_EVERY: Duration = Duration::from_secs(30);

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

/// The server: the gate, rmcp's service, and the sessions' abort tokens.
struct App {
    gate: Gate,
    mcp: StreamableHttpService<McpServer, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    /// Cancelled when a session ends; parent of its requests' tokens.
    session_aborts: Mutex<HashMap<String, CancellationToken>>,
    /// Parent of every token; cancelled at shutdown.
    root: CancellationToken,
}

impl App {
    async fn handle(&self, mut request: Request<Incoming>) -> Response<HttpBody> {
        if request.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, "Not Found: MCP is served at /mcp");
        }
        if let Err(refusal) = self.gate.check(request.headers()) {
            return refused(&refusal);
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
        let parent = match &session {
            Some(id) => self.session_abort(id).await,
            None => {
                if request.method() == Method::POST
                    && self.sessions.sessions.read().await.len() >= MAX_SESSIONS
                {
                    tracing::warn!("refused a session over {MAX_SESSIONS}");
                    let mut response = plain(
                        StatusCode::SERVICE_UNAVAILABLE,
                        "Service Unavailable: too many sessions; end one (DELETE) or retry later",
                    );
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, http::HeaderValue::from_static("5"));
                    return response;
                }
                None
            }
        };
        let abort = parent.as_ref().unwrap_or(&self.root).child_token();
        request
            .extensions_mut()
            .insert(CallAbort::new(abort.clone()));
        let is_delete = request.method() == Method::DELETE;
        // Armed from here: a client gone before the answer starts counts too.
        let guard = abort.drop_guard();
        let response = self.mcp.handle(request).await;
        if is_delete
            && response.status().is_success()
            && let Some(id) = &session
        {
            self.end_session(id);
        }
        response.map(|inner| {
            BoxBody::new(Watched {
                inner,
                guard: Some(guard),
            })
        })
    }

    /// The abort token of live session `id` (none for an unknown id, so
    /// made-up ids cost nothing).
    async fn session_abort(&self, id: &str) -> Option<CancellationToken> {
        if !self.sessions.sessions.read().await.contains_key(id) {
            return None;
        }
        let mut aborts = self.session_aborts.lock().ok()?;
        Some(
            aborts
                .entry(id.to_owned())
                .or_insert_with(|| self.root.child_token())
                .clone(),
        )
    }

    /// Cancels the calls of session `id`.
    fn end_session(&self, id: &str) {
        tracing::info!(session = id, "session deleted");
        if let Some(token) = self
            .session_aborts
            .lock()
            .ok()
            .and_then(|mut a| a.remove(id))
        {
            token.cancel();
        }
    }

    /// Cancels and forgets the tokens of sessions that have ended (idle
    /// expiry, a closed worker).
    async fn sweep(&self) {
        let live: HashSet<String> = self
            .sessions
            .sessions
            .read()
            .await
            .keys()
            .map(|id| id.to_string())
            .collect();
        if let Ok(mut aborts) = self.session_aborts.lock() {
            aborts.retain(|id, token| {
                let keep = live.contains(id);
                if !keep {
                    tracing::info!(session = id, "session ended");
                    token.cancel();
                }
                keep
            });
        }
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
async fn resolve(listen: &str) -> Result<SocketAddr, String> {
    let mut addrs = tokio::net::lookup_host(listen)
        .await
        .map_err(|e| format!("--listen {listen}: {e} (give ADDR:PORT, e.g. 127.0.0.1:8080)"))?;
    addrs
        .next()
        .ok_or_else(|| format!("--listen {listen}: resolves to no address"))
}

/// Serves until SIGTERM or SIGINT; the exit status.
pub async fn serve(args: &McpArgs) -> Result<u8, String> {
    let listen = args.listen.as_deref().unwrap_or("127.0.0.1:0");
    let addr = resolve(listen).await?;
    let configured = Token::configured(args.token_file.as_deref()).map_err(|e| e.to_string())?;
    if let Some(warning) = &configured.warning {
        tracing::warn!("{warning}");
        crate::console::stderr_line!("workbench mcp: warning: {warning}");
    }
    let token = configured.token;
    let gate =
        Gate::new(addr, token, &args.allow_origin, &args.allow_host).map_err(|e| e.to_string())?;
    let workspace = Arc::new(Workspace::load(args).await?);
    let recording = workspace.recording(args)?.map(Arc::new);
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| format!("--listen {listen}: cannot listen on {addr}: {e}"))?;
    let bound = listener.local_addr().map_err(|e| e.to_string())?;
    tracing::info!(%bound, token = gate.has_token(), "listening");
    stderr_line!("workbench mcp: listening on http://{bound}{MCP_PATH}");

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
    let mut session_config = SessionConfig::default();
    session_config.keep_alive = Some(Duration::from_secs(args.idle_timeout.max(1)));
    let mut manager = LocalSessionManager::default();
    manager.session_config = session_config;
    let sessions = Arc::new(manager);
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
        session_aborts: Mutex::new(HashMap::new()),
        root: CancellationToken::new(),
    });

    let sweeper = {
        let app = app.clone();
        tokio::spawn(async move {
            let mut every = tokio::time::interval(SWEEP_EVERY);
            loop {
                every.tick().await;
                app.sweep().await;
            }
        })
    };
    let connections = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let closing = CancellationToken::new();
    let tracker = tokio_util::task::TaskTracker::new();
    let signals = crate::signals::install();
    let signal = async { Some(signals.wait().await) };
    tokio::pin!(signal);
    let signal = loop {
        let permit = tokio::select! {
            signal = &mut signal => break signal,
            permit = connections.clone().acquire_owned() => match permit {
                Ok(permit) => permit,
                Err(_) => break None,
            },
        };
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
        let (app, closing) = (app.clone(), closing.clone());
        tracker.spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let app = app.clone();
                async move { Ok::<_, Infallible>(app.handle(request).await) }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_READ_TIMEOUT);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::pin!(connection);
            let served = tokio::select! {
                served = connection.as_mut() => served,
                () = closing.cancelled() => {
                    connection.as_mut().graceful_shutdown();
                    connection.await
                }
            };
            if let Err(e) = served {
                tracing::debug!(%peer, "connection ended: {e}");
            }
            drop(permit);
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
    Ok(signal.map_or(crate::exit::SUCCESS, crate::exit::signalled))
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
