//! The sessions of `workbench mcp --listen`: rmcp's `LocalSessionManager`
//! behind a [`SessionManager`] of our own that owns what rmcp does not:
//!
//! - the cap: a session holds one of [`MAX_SESSIONS`] permits from the
//!   moment its `initialize` is admitted (after its body has been read)
//!   until it ends, so the cap holds however bodies arrive;
//! - idleness: a session ends after the idle timeout without activity,
//!   where a request still being answered (a call still running) counts
//!   as activity until its answer ends (rmcp's own keep-alive counted
//!   only messages, so it ended sessions under a running call);
//! - each session's abort token (cancelled when it ends, so its calls
//!   end with it);
//! - the message rmcp hands on: the HTTP layer reads each body once with
//!   [`super::message::read`] and gives rmcp a re-serialised copy it can
//!   parse; the message read first ([`Stash`]) replaces rmcp's copy here,
//!   so deep or odd arguments reach the handler exactly as read (a
//!   2026-07-28 request, served without a session, gets its arguments back
//!   through [`stashed_call_arguments`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions, JsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionId, SessionManager,
};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// Sessions alive at once; an `initialize` beyond gets 503.
pub(crate) const MAX_SESSIONS: usize = 256;

/// How long a session rmcp made may wait for its `initialize` to arrive
/// here before it is closed (a request dropped half-way).
const UNCLAIMED_GRACE: Duration = Duration::from_secs(30);

/// What one POST carries from the HTTP layer to [`Sessions`] through the
/// request's extensions: the message as read, and for an `initialize`
/// its session permit.
#[derive(Clone, Default)]
pub(crate) struct Stash(Arc<Mutex<Stashed>>);

#[derive(Default)]
struct Stashed {
    message: Option<ClientJsonRpcMessage>,
    permit: Option<OwnedSemaphorePermit>,
}

impl Stash {
    pub(crate) fn new(message: ClientJsonRpcMessage, permit: Option<OwnedSemaphorePermit>) -> Self {
        Self(Arc::new(Mutex::new(Stashed {
            message: Some(message),
            permit,
        })))
    }

    fn take(&self) -> (Option<ClientJsonRpcMessage>, Option<OwnedSemaphorePermit>) {
        match self.0.lock() {
            Ok(mut stashed) => (stashed.message.take(), stashed.permit.take()),
            Err(_) => (None, None),
        }
    }
}

/// The stash of the HTTP request `extensions` came with.
fn stash_of(extensions: &rmcp::model::Extensions) -> Option<Stash> {
    extensions
        .get::<http::request::Parts>()?
        .extensions
        .get::<Stash>()
        .cloned()
}

/// The arguments of the `tools/call` read first, when rmcp served its
/// request without a session (a 2026-07-28 request) and so never handed it
/// to [`Sessions`] to restore; none otherwise.
pub(crate) fn stashed_call_arguments(
    extensions: &rmcp::model::Extensions,
) -> Option<rmcp::model::JsonObject> {
    let (message, _) = stash_of(extensions)?.take();
    match message? {
        JsonRpcMessage::Request(request) => match request.request {
            rmcp::model::ClientRequest::CallToolRequest(call) => call.params.arguments,
            _ => None,
        },
        _ => None,
    }
}

/// rmcp's copy of a message replaced by the one read first (keeping the
/// extensions rmcp added); the session permit, if one came with it.
fn restore(message: ClientJsonRpcMessage) -> (ClientJsonRpcMessage, Option<OwnedSemaphorePermit>) {
    match message {
        JsonRpcMessage::Request(mut copy) => {
            let Some(stash) = stash_of(copy.request.extensions()) else {
                return (JsonRpcMessage::Request(copy), None);
            };
            let (read, permit) = stash.take();
            match read {
                Some(JsonRpcMessage::Request(mut read)) => {
                    *read.request.extensions_mut() = std::mem::take(copy.request.extensions_mut());
                    (JsonRpcMessage::Request(read), permit)
                }
                _ => (JsonRpcMessage::Request(copy), permit),
            }
        }
        JsonRpcMessage::Notification(mut copy) => {
            let Some(stash) = stash_of(copy.notification.extensions()) else {
                return (JsonRpcMessage::Notification(copy), None);
            };
            let (read, permit) = stash.take();
            match read {
                Some(JsonRpcMessage::Notification(mut read)) => {
                    *read.notification.extensions_mut() =
                        std::mem::take(copy.notification.extensions_mut());
                    (JsonRpcMessage::Notification(read), permit)
                }
                _ => (JsonRpcMessage::Notification(copy), permit),
            }
        }
        other => (other, None),
    }
}

/// One live session.
struct Live {
    _permit: Option<OwnedSemaphorePermit>,
    abort: CancellationToken,
    last: Instant,
    running: usize,
}

#[derive(Default)]
struct Table {
    live: HashMap<SessionId, Live>,
    /// Made by rmcp, `initialize` not yet here.
    unclaimed: HashMap<SessionId, Instant>,
}

/// The sessions (see the module docs).
pub(crate) struct Sessions {
    inner: LocalSessionManager,
    cap: Arc<Semaphore>,
    root: CancellationToken,
    table: Mutex<Table>,
}

/// A request of a live session being answered: activity until dropped.
pub(crate) struct Activity {
    sessions: Arc<Sessions>,
    id: SessionId,
    /// The session's abort token.
    pub abort: CancellationToken,
}

impl Drop for Activity {
    fn drop(&mut self) {
        if let Ok(mut table) = self.sessions.table.lock()
            && let Some(live) = table.live.get_mut(&self.id)
        {
            live.running = live.running.saturating_sub(1);
            live.last = Instant::now();
        }
    }
}

impl Sessions {
    /// Sessions over `inner` (whose own keep-alive should be off), their
    /// abort tokens children of `root`.
    pub(crate) fn new(inner: LocalSessionManager, root: CancellationToken) -> Self {
        Self {
            inner,
            cap: Arc::new(Semaphore::new(MAX_SESSIONS)),
            root,
            table: Mutex::new(Table::default()),
        }
    }

    /// A permit for one more session, if the cap allows.
    pub(crate) fn reserve(&self) -> Option<OwnedSemaphorePermit> {
        self.cap.clone().try_acquire_owned().ok()
    }

    /// A request of live session `id` begins; none for an ended or unknown
    /// id.
    pub(crate) fn enter(self: &Arc<Self>, id: &str) -> Option<Activity> {
        let mut table = self.table.lock().ok()?;
        let (key, live) = table.live.get_key_value(id)?;
        let key = key.clone();
        let abort = live.abort.clone();
        if let Some(live) = table.live.get_mut(&key) {
            live.running += 1;
            live.last = Instant::now();
        }
        Some(Activity {
            sessions: self.clone(),
            id: key,
            abort,
        })
    }

    /// Ends session `id` (its calls are cancelled); false when it was not
    /// live.
    pub(crate) async fn end(&self, id: &str) -> bool {
        let id: SessionId = id.into();
        let was_live = self
            .table
            .lock()
            .map(|t| t.live.contains_key(&id))
            .unwrap_or(false);
        if let Err(e) = self.close_session(&id).await {
            tracing::warn!(session = %id, "closing the session failed: {e}");
        }
        was_live
    }

    /// Ends the sessions idle for longer than `idle` with nothing running,
    /// and sessions rmcp made whose `initialize` never came.
    pub(crate) async fn expire(&self, idle: Duration) {
        let ended: Vec<SessionId> = match self.table.lock() {
            Ok(table) => table
                .live
                .iter()
                .filter(|(_, live)| live.running == 0 && live.last.elapsed() > idle)
                .map(|(id, _)| id.clone())
                .chain(
                    table
                        .unclaimed
                        .iter()
                        .filter(|(_, made)| made.elapsed() > UNCLAIMED_GRACE)
                        .map(|(id, _)| id.clone()),
                )
                .collect(),
            Err(_) => Vec::new(),
        };
        for id in ended {
            tracing::info!(session = %id, "session expired");
            if let Err(e) = self.close_session(&id).await {
                tracing::warn!(session = %id, "closing the session failed: {e}");
            }
        }
    }

    fn forget(&self, id: &SessionId) {
        if let Ok(mut table) = self.table.lock() {
            table.unclaimed.remove(id);
            if let Some(live) = table.live.remove(id) {
                tracing::info!(session = %id, "session ended");
                live.abort.cancel();
            }
        }
    }
}

impl SessionManager for Sessions {
    type Error = LocalSessionManagerError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        if let Ok(mut table) = self.table.lock() {
            table.unclaimed.insert(id.clone(), Instant::now());
        }
        Ok((id, transport))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        let (message, permit) = restore(message);
        if let Ok(mut table) = self.table.lock() {
            table.unclaimed.remove(id);
            table.live.insert(
                id.clone(),
                Live {
                    _permit: permit,
                    abort: self.root.child_token(),
                    last: Instant::now(),
                    running: 0,
                },
            );
        }
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.forget(id);
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let (message, _) = restore(message);
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        let (message, _) = restore(message);
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }
}
