//! The stdio transport: newline-delimited JSON-RPC on stdin and stdout,
//! as the MCP stdio transport specifies, with the answers rmcp's own
//! stdio transport does not give (it drops bad lines silently):
//!
//! - each line is read by [`super::message::read`], the reader the HTTP
//!   transport shares: a line that is not JSON gets a parse error
//!   (`-32700`), one that is not a usable message `-32600` or `-32602`,
//!   and the server keeps reading;
//! - before `initialize`, a 2025 request gets `-32600` ("send initialize
//!   first") and a notification is dropped: nothing is served outside the
//!   session the 2025 revisions open with `initialize`;
//! - a 2026-07-28 request ([`super::era`]) needs no `initialize`: it goes
//!   to rmcp, which answers `server/discover` and a request with missing
//!   `_meta` keys or an unsupported version without leaving the
//!   pre-lifecycle state, and enters the stateless lifecycle with the
//!   first request whose `_meta` is complete and names a supported
//!   version (from then on every request must carry its `_meta`);
//! - a line over [`MAX_MESSAGE_BYTES`] is refused with `-32600` while it is
//!   skipped, never buffered whole;
//! - end of input cancels [`StdioTransport::closed`] at once, so calls in
//!   flight are cancelled without waiting for rmcp's drain;
//! - once the client has hung up ([`super::hangup`]: seen by poll even
//!   while reading is paused, or as end of input), the rest of its input
//!   is still read and answered, but a read that waits longer than
//!   [`HANGUP_STALL`] (for room in the backlog, or for a line) ends the
//!   input as end of input does, and so does a write that waits that long:
//!   a client that hung up and reads no answers is gone. Once stdout is
//!   gone (`EPIPE`, or poll), nothing more is read or written.
//!
//! Reading pauses while the backlog (requests unanswered plus messages
//! unwritten, [`super::backlog`]) is full, so a client that never reads
//! stdout cannot grow the server; a request reusing the id of one in
//! flight gets `-32600`.
//!
//! Everything written to stdout goes through one writer task, so messages
//! never interleave and an error line queued by `receive` (which rmcp polls
//! inside a `select!`) cannot be cut off by that future being dropped;
//! `receive` waits for its error line to be written before it reads on.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    ClientNotification, ClientRequest, GetMeta, JsonRpcMessage, ProtocolVersion, RequestId,
};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use thiserror::Error;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::backlog::{Backlog, Queued};
use super::era::Era;
use super::hangup::ClientPipes;
use super::message::{self, ErrorAnswer, INVALID_REQUEST, Read};
use super::server::PROTOCOL_VERSIONS;

/// The largest message the server reads (one line, newline excluded).
pub(crate) const MAX_MESSAGE_BYTES: usize = 8 * 1024 * 1024;

/// How long one read or one write may wait once the client has hung up.
pub(crate) const HANGUP_STALL: Duration = Duration::from_secs(1);

/// Why a message could not be written.
#[derive(Debug, Error)]
pub(crate) enum TransportError {
    #[error("cannot serialise a message: {0}")]
    Serialise(#[from] serde_json::Error),
    #[error("stdout is closed")]
    Closed,
}

enum Out {
    Line(Vec<u8>, oneshot::Sender<bool>, Option<Queued>),
    Flush(oneshot::Sender<()>),
}

/// The single writer of stdout; cloneable.
#[derive(Clone)]
pub(crate) struct Writer {
    tx: mpsc::UnboundedSender<Out>,
}

impl Writer {
    /// Starts the writer task over `out`, for the client of `pipes`.
    pub(crate) fn spawn<W: AsyncWrite + Send + Unpin + 'static>(
        mut out: W,
        pipes: ClientPipes,
    ) -> Self {
        let (tx, mut rx) = mpsc::unbounded_channel::<Out>();
        tokio::spawn(async move {
            let mut broken = false;
            while let Some(item) = rx.recv().await {
                broken = broken || pipes.stdout_gone().is_cancelled();
                match item {
                    Out::Line(bytes, done, _queued) => {
                        if !broken {
                            broken = !write_line(&mut out, &bytes, &pipes).await;
                        }
                        let _ = done.send(!broken);
                    }
                    Out::Flush(done) => {
                        if !broken {
                            tokio::select! {
                                _ = out.flush() => {}
                                () = pipes.stdout_gone().cancelled() => {}
                                () = pipes.stalled(HANGUP_STALL) => {}
                            }
                        }
                        let _ = done.send(());
                    }
                }
            }
        });
        Self { tx }
    }

    /// Queues one line (a newline is added); resolves once it is written.
    /// `queued` counts it in the backlog until then.
    fn queue(&self, mut line: Vec<u8>, queued: Option<Queued>) -> oneshot::Receiver<bool> {
        line.push(b'\n');
        let (done, written) = oneshot::channel();
        let _ = self.tx.send(Out::Line(line, done, queued));
        written
    }

    /// Waits until everything queued so far is written.
    pub(crate) async fn flush(&self) {
        let (done, flushed) = oneshot::channel();
        if self.tx.send(Out::Flush(done)).is_ok() {
            let _ = flushed.await;
        }
    }
}

/// Writes one line; false when it could not be, and then stdout counts
/// as gone: a write error (`EPIPE`), stdout seen gone, or a write that
/// waited [`HANGUP_STALL`] after the client hung up.
async fn write_line<W: AsyncWrite + Unpin>(out: &mut W, bytes: &[u8], pipes: &ClientPipes) -> bool {
    let write = async {
        out.write_all(bytes).await?;
        out.flush().await
    };
    tokio::select! {
        biased;
        written = write => match written {
            Ok(()) => true,
            Err(e) => {
                tracing::warn!("stdout is closed ({e}): dropping further messages");
                pipes.lose_stdout("a write failed");
                false
            }
        },
        () = pipes.stdout_gone().cancelled() => false,
        () = pipes.stalled(HANGUP_STALL) => {
            tracing::warn!(
                "stdout took nothing for {HANGUP_STALL:?} after the client hung up: dropping further messages"
            );
            pipes.lose_stdout("a write stalled after the hang-up");
            false
        }
    }
}

/// What a message read before the lifecycle began does.
enum Opening {
    /// Served; the lifecycle begins with it (`initialize`, or a complete
    /// 2026-07-28 request naming a supported version).
    Begins,
    /// Served by rmcp before any lifecycle (`server/discover`, or a
    /// 2026-07-28 request it refuses for its `_meta` or version).
    Probe,
}

/// A message read before the lifecycle began: how it is served, or the
/// answer a request gets (none for a notification). The 2025 revisions
/// need the session `initialize` opens; 2026-07-28 requests need none.
fn before_lifecycle(
    message: &RxJsonRpcMessage<RoleServer>,
) -> Result<Opening, Option<ErrorAnswer>> {
    let JsonRpcMessage::Request(request) = message else {
        return Err(None);
    };
    if matches!(request.request, ClientRequest::InitializeRequest(_)) {
        return Ok(Opening::Begins);
    }
    if super::era::of_message(message) == Era::Stateless {
        let meta = request.request.get_meta();
        let complete = meta
            .missing_required_keys(&ProtocolVersion::V_2026_07_28)
            .is_empty();
        let supported = meta
            .protocol_version()
            .is_some_and(|v| PROTOCOL_VERSIONS.contains(&v));
        let discover = matches!(request.request, ClientRequest::DiscoverRequest(_));
        return Ok(if complete && supported && !discover {
            Opening::Begins
        } else {
            Opening::Probe
        });
    }
    Err(Some(ErrorAnswer::new(
        serde_json::to_value(&request.id).unwrap_or(Value::Null),
        INVALID_REQUEST,
        "Invalid Request: send initialize first (the 2025 protocol revisions need a session), or send 2026-07-28 requests with their _meta",
    )))
}

/// A request id as the backlog keys it.
fn id_key(id: &RequestId) -> String {
    serde_json::to_string(id).unwrap_or_default()
}

/// One bounded line read.
enum LineRead {
    Line,
    Oversized,
    Eof,
    /// The client is gone: reading stopped before end of input.
    Gone,
}

/// rmcp's transport over stdin/stdout (or any reader and writer).
pub(crate) struct StdioTransport<R> {
    reader: BufReader<R>,
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    skipping: bool,
    writer: Writer,
    closed: CancellationToken,
    pipes: ClientPipes,
    /// The lifecycle has begun: an `initialize` (2025), or a complete
    /// 2026-07-28 request, has been read.
    initialized: bool,
    backlog: Arc<Backlog>,
}

impl<R: AsyncRead + Send + Unpin + 'static> StdioTransport<R> {
    /// The transport over `input` and `writer`, for the client of `pipes`.
    pub(crate) fn new(input: R, writer: Writer, pipes: ClientPipes) -> Self {
        Self {
            reader: BufReader::with_capacity(64 * 1024, input),
            line: Vec::new(),
            skipping: false,
            writer,
            closed: CancellationToken::new(),
            pipes,
            initialized: false,
            backlog: Arc::new(Backlog::default()),
        }
    }

    /// The message read, as it goes on to rmcp (counted in the backlog),
    /// or the answer it gets here (none for a notification dropped).
    fn admit(
        &mut self,
        message: RxJsonRpcMessage<RoleServer>,
    ) -> Result<RxJsonRpcMessage<RoleServer>, Option<ErrorAnswer>> {
        if !self.initialized && matches!(before_lifecycle(&message)?, Opening::Begins) {
            self.initialized = true;
        }
        match &message {
            JsonRpcMessage::Request(request) if !self.backlog.read_request(id_key(&request.id)) => {
                return Err(Some(ErrorAnswer::new(
                    serde_json::to_value(&request.id).unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    "Invalid Request: the id is already used by a request in flight",
                )));
            }
            JsonRpcMessage::Notification(notification) => {
                if let ClientNotification::CancelledNotification(cancelled) =
                    &notification.notification
                    && let Some(id) = &cancelled.params.request_id
                {
                    self.backlog.cancelled(&id_key(id));
                }
            }
            _ => {}
        }
        Ok(message)
    }

    /// Cancelled when reading ends: end of input (or a read error), or the
    /// client gone.
    pub(crate) fn closed(&self) -> CancellationToken {
        self.closed.clone()
    }

    /// Writes an error answer before reading on, so a peer that floods bad
    /// lines without reading is held back rather than queued without end.
    /// Cancel-safe: a dropped wait leaves the answer queued.
    async fn answer(&mut self, line: Vec<u8>) {
        let _ = self.writer.queue(line, None).await;
    }

    /// Waits for room in the backlog, then reads a line, unless the client
    /// is gone first: stdout gone, or after its hang-up the wait lasted
    /// [`HANGUP_STALL`]. Cancel-safe.
    async fn next_line(&mut self) -> LineRead {
        let pipes = self.pipes.clone();
        let read = async {
            // A client that does not read its answers holds us back here.
            self.backlog.room().await;
            self.read_line().await
        };
        tokio::select! {
            biased;
            () = pipes.stdout_gone().cancelled() => {
                tracing::info!("stdout is gone: reading no more requests");
                LineRead::Gone
            }
            () = pipes.stalled(HANGUP_STALL) => {
                tracing::info!(
                    "the client hung up and its input did not move for {HANGUP_STALL:?}: reading no more"
                );
                LineRead::Gone
            }
            read = read => read,
        }
    }

    /// Reads up to a newline into `self.line`, never past the limit.
    /// Cancel-safe: a partial line stays in `self.line` for the next call.
    async fn read_line(&mut self) -> LineRead {
        loop {
            let available = match self.reader.fill_buf().await {
                Ok(available) => available,
                Err(e) => {
                    tracing::warn!("reading stdin failed: {e}");
                    return LineRead::Eof;
                }
            };
            if available.is_empty() {
                return LineRead::Eof;
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut oversized = false;
            if !self.skipping {
                if self.line.len() + take > MAX_MESSAGE_BYTES + 1 {
                    self.line = Vec::new();
                    self.skipping = true;
                    oversized = true;
                } else {
                    self.line.extend_from_slice(&available[..take]);
                }
            }
            self.reader.consume(take);
            let ended = newline.is_some();
            if ended && self.skipping {
                self.skipping = false;
                if !oversized {
                    // The tail of a line refused earlier.
                    continue;
                }
            }
            if oversized {
                return LineRead::Oversized;
            }
            if ended {
                return LineRead::Line;
            }
        }
    }
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for StdioTransport<R> {
    type Error = TransportError;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answers = match &item {
            JsonRpcMessage::Response(response) => Some(id_key(&response.id)),
            JsonRpcMessage::Error(error) => error.id.as_ref().map(id_key),
            _ => None,
        };
        let queued = serde_json::to_vec(&item)
            .map(|line| self.writer.queue(line, Some(self.backlog.queue(answers))));
        async move {
            match queued?.await {
                Ok(true) => Ok(()),
                _ => Err(TransportError::Closed),
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.next_line().await {
                LineRead::Eof => {
                    tracing::info!("end of input");
                    self.pipes.hang_up("end of input");
                    self.closed.cancel();
                    return None;
                }
                LineRead::Gone => {
                    self.closed.cancel();
                    return None;
                }
                LineRead::Oversized => {
                    tracing::warn!("refused a message over {MAX_MESSAGE_BYTES} bytes");
                    self.answer(
                        ErrorAnswer::new(
                            Value::Null,
                            INVALID_REQUEST,
                            "Invalid Request: the message exceeds 8 MiB",
                        )
                        .to_bytes(),
                    )
                    .await;
                    continue;
                }
                LineRead::Line => {}
            }
            let line = std::mem::take(&mut self.line);
            let mut text = line.strip_suffix(b"\n").unwrap_or(&line);
            text = text.strip_suffix(b"\r").unwrap_or(text);
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
            if text.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match message::read(text) {
                Read::Message(message) => match self.admit(*message) {
                    Ok(message) => return Some(message),
                    Err(Some(answer)) => self.answer(answer.to_bytes()).await,
                    Err(None) => tracing::info!("a notification before initialize: dropped"),
                },
                Read::Refused(answer) => self.answer(answer.to_bytes()).await,
                Read::Ignored => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.flush().await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `elapsed` is `stalls` stall bounds, give or take the timer's
    /// millisecond rounding.
    fn about(elapsed: Duration, stalls: u32) -> bool {
        let due = HANGUP_STALL * stalls;
        elapsed >= due && elapsed <= due + Duration::from_millis(2 * u64::from(stalls))
    }

    /// The clock is paused: it moves only to due timers, at once when
    /// nothing else can run, while the pipes themselves never move.
    #[tokio::test(start_paused = true)]
    async fn after_the_hang_up_a_read_or_a_write_that_waits_the_stall_bound_ends_it() {
        // The client keeps its ends open, writes nothing and reads nothing.
        let (_client_in, input) = tokio::io::duplex(64);
        let (output, _client_out) = tokio::io::duplex(64);
        let pipes = ClientPipes::default();
        let writer = Writer::spawn(output, pipes.clone());
        let mut transport = StdioTransport::new(input, writer.clone(), pipes.clone());
        pipes.hang_up("test");
        let started = tokio::time::Instant::now();
        assert!(transport.receive().await.is_none());
        assert!(transport.closed().is_cancelled());
        assert!(about(started.elapsed(), 1), "{:?}", started.elapsed());
        // A line larger than the pipe's buffer never finishes: dropped.
        let written = writer.queue(vec![b'x'; 1024], None).await;
        assert_eq!(written.ok(), Some(false));
        assert!(pipes.stdout_gone().is_cancelled());
        assert!(about(started.elapsed(), 2), "{:?}", started.elapsed());
        // Once stdout is gone, nothing more is written or waited for.
        assert_eq!(writer.queue(b"{}".to_vec(), None).await.ok(), Some(false));
        writer.flush().await;
        assert!(about(started.elapsed(), 2), "{:?}", started.elapsed());
    }

    #[tokio::test]
    async fn an_oversized_line_is_refused_and_the_next_one_is_read() {
        let mut input = vec![b'x'; MAX_MESSAGE_BYTES + 10];
        input.push(b'\n');
        input.extend_from_slice(
            br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        );
        input.push(b'\n');
        let (out, mut read_out) = tokio::io::duplex(1 << 16);
        let pipes = ClientPipes::default();
        let mut transport = StdioTransport::new(
            std::io::Cursor::new(input),
            Writer::spawn(out, pipes.clone()),
            pipes,
        );
        let message = transport.receive().await.unwrap();
        assert!(
            serde_json::to_string(&message)
                .unwrap()
                .contains("initialize")
        );
        assert!(transport.receive().await.is_none());
        assert!(transport.closed().is_cancelled());
        transport.close().await.unwrap();
        let mut buf = vec![0; 4096];
        let n = tokio::io::AsyncReadExt::read(&mut read_out, &mut buf)
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&buf[..n]);
        assert!(text.contains("-32600") && text.contains("8 MiB"), "{text}");
    }
}
