//! Noticing that the stdio client has gone, even while the server is not
//! reading stdin (its backlog is full, see [`super::backlog`]) and has
//! nothing to write.
//!
//! A client ends a stdio server by closing its end of stdin (the MCP
//! stdio transport's shutdown), or goes away altogether (its end of
//! stdout closed too). Reading sees end of input only once every request
//! before it has been read, which a full backlog puts off for as long as
//! the calls in flight run; writing sees `EPIPE` only when there is
//! something to write. So a thread of its own ([`Watcher`]) waits in
//! poll(2) on copies of fd 0 and fd 1 asking for no data at all: the
//! kernel then reports only the hang-up conditions, whatever is still
//! unread in the pipe:
//!
//! - stdin: `POLLHUP` on a pipe whose writers are all gone (or a tty hung
//!   up), `POLLRDHUP` on a socket the client shut for writing;
//! - stdout: `POLLERR` on a pipe with no reader left, `POLLHUP` on a
//!   socket (or tty) the client closed.
//!
//! A regular file or `/dev/null` reports none of these, so the thread
//! just waits. A plain thread rather than tokio's `AsyncFd`: epoll refuses
//! regular files, and a wait that asks for no readiness never competes
//! with the reads and writes tokio makes on the same pipes. The thread
//! wakes every [`POLL_EVERY`] only to see whether its [`Watcher`] was
//! dropped.
//!
//! What the server does on each is [`ClientPipes`]' to say.

use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use tokio_util::sync::CancellationToken;

/// How often the watcher thread looks whether it should stop.
pub(crate) const POLL_EVERY: Duration = Duration::from_millis(250);

/// What the server has seen of the stdio client's two pipes; cloneable,
/// shared by the [`Watcher`], the transport, the writer and the shutdown
/// in `super::serve`.
///
/// - Hung up (stdin closed, seen by poll or as end of input): every call
///   in flight and queued is cancelled at once (their rg groups end, as on
///   `notifications/cancelled`), and so is any call read later. What the
///   client sent before hanging up is still read and answered, as long as
///   that moves: a read, or a write, that waits longer than a stall
///   bound after the hang-up means the client reads no more answers.
/// - Stdout gone (seen by poll, as `EPIPE`, or as a write stalled after
///   the hang-up): nothing more is read or written; the session ends.
#[derive(Clone, Default)]
pub(crate) struct ClientPipes {
    hung_up: CancellationToken,
    stdout_gone: CancellationToken,
}

impl ClientPipes {
    /// Cancelled once the client has closed its end of stdin.
    pub(crate) fn hung_up(&self) -> &CancellationToken {
        &self.hung_up
    }

    /// Cancelled once nobody reads stdout any more.
    pub(crate) fn stdout_gone(&self) -> &CancellationToken {
        &self.stdout_gone
    }

    /// The client closed its end of stdin (`how` says how it was seen).
    pub(crate) fn hang_up(&self, how: &str) {
        if !self.hung_up.is_cancelled() {
            tracing::info!("the client hung up ({how})");
            self.hung_up.cancel();
        }
    }

    /// Nobody reads stdout any more (`how` says how it was seen).
    pub(crate) fn lose_stdout(&self, how: &str) {
        if !self.stdout_gone.is_cancelled() {
            tracing::info!("the client no longer reads stdout ({how})");
            self.stdout_gone.cancel();
        }
    }

    /// Resolves `limit` after the later of now and the hang-up: how long
    /// one wait (a read, a write) may last once the client has hung up.
    pub(crate) async fn stalled(&self, limit: Duration) {
        self.hung_up.cancelled().await;
        tokio::time::sleep(limit).await;
    }
}

/// The thread that polls the client's pipes; it stops when dropped.
pub(crate) struct Watcher {
    stop: Arc<AtomicBool>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Watcher {
    /// Watches this process's stdin and stdout (copies of fd 0 and fd 1).
    pub(crate) fn stdio(pipes: ClientPipes) -> std::io::Result<Self> {
        let input = std::io::stdin().as_fd().try_clone_to_owned()?;
        let output = std::io::stdout().as_fd().try_clone_to_owned()?;
        Self::spawn(input, output, pipes)
    }

    /// Watches `input` (the client's requests) and `output` (its answers).
    pub(crate) fn spawn(
        input: OwnedFd,
        output: OwnedFd,
        pipes: ClientPipes,
    ) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = stop.clone();
        std::thread::Builder::new()
            .name("mcp-client-pipes".to_owned())
            .spawn(move || watch(&input, &output, &pipes, &stopped))?;
        Ok(Self { stop })
    }
}

/// `POLLRDHUP` (Linux: the peer of a socket shut it for writing), which
/// nix's `PollFlags` does not name.
const POLLRDHUP: PollFlags = PollFlags::from_bits_retain(nix::libc::POLLRDHUP);

/// What poll reported for one of the pipes.
fn reported(fd: Option<&PollFd<'_>>, gone: PollFlags) -> bool {
    fd.and_then(PollFd::revents)
        .is_some_and(|revents| revents.intersects(gone))
}

/// The watcher thread: polls until both ends are gone or `stop` is set.
fn watch(input: &OwnedFd, output: &OwnedFd, pipes: &ClientPipes, stop: &AtomicBool) {
    let input_gone = PollFlags::POLLHUP | POLLRDHUP | PollFlags::POLLERR;
    let output_gone = PollFlags::POLLHUP | PollFlags::POLLERR;
    let every = PollTimeout::try_from(POLL_EVERY).unwrap_or(PollTimeout::from(u16::MAX));
    let (mut watch_input, mut watch_output) = (true, true);
    while (watch_input || watch_output) && !stop.load(Ordering::Relaxed) {
        // No data is asked for: only the conditions above (and POLLNVAL,
        // which a copy of our own cannot get) wake the poll.
        let mut fds = Vec::with_capacity(2);
        if watch_input {
            fds.push(PollFd::new(input.as_fd(), POLLRDHUP));
        }
        if watch_output {
            fds.push(PollFd::new(output.as_fd(), PollFlags::empty()));
        }
        match poll(&mut fds, every) {
            Ok(0) | Err(Errno::EINTR) => continue,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!("cannot watch the client's pipes: {e}");
                return;
            }
        }
        let (input_fd, output_fd) = match (watch_input, watch_output) {
            (true, true) => (fds.first(), fds.get(1)),
            (true, false) => (fds.first(), None),
            _ => (None, fds.first()),
        };
        let (hung_up, deaf) = (
            reported(input_fd, input_gone),
            reported(output_fd, output_gone),
        );
        if hung_up {
            pipes.hang_up("stdin closed, seen by poll");
            watch_input = false;
        }
        if deaf {
            pipes.lose_stdout("stdout closed, seen by poll");
            watch_output = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn pipe() -> (OwnedFd, OwnedFd) {
        nix::unistd::pipe().unwrap()
    }

    #[tokio::test]
    async fn a_closed_writer_of_stdin_is_a_hang_up_even_with_data_unread() {
        let (input, mut client_writes) = {
            let (read, write) = pipe();
            (read, std::fs::File::from(write))
        };
        let (_client_reads, output) = pipe();
        let pipes = ClientPipes::default();
        let _watcher = Watcher::spawn(input, output, pipes.clone()).unwrap();
        client_writes.write_all(b"{\"unread\":true}\n").unwrap();
        tokio::time::sleep(POLL_EVERY * 2).await;
        assert!(!pipes.hung_up().is_cancelled(), "data alone is no hang-up");
        drop(client_writes);
        tokio::time::timeout(Duration::from_secs(10), pipes.hung_up().cancelled())
            .await
            .unwrap();
        assert!(!pipes.stdout_gone().is_cancelled());
    }

    #[tokio::test]
    async fn a_closed_reader_of_stdout_is_stdout_gone() {
        let (input, _client_writes) = pipe();
        let (client_reads, output) = pipe();
        let pipes = ClientPipes::default();
        let _watcher = Watcher::spawn(input, output, pipes.clone()).unwrap();
        tokio::time::sleep(POLL_EVERY * 2).await;
        assert!(!pipes.stdout_gone().is_cancelled());
        drop(client_reads);
        tokio::time::timeout(Duration::from_secs(10), pipes.stdout_gone().cancelled())
            .await
            .unwrap();
        assert!(!pipes.hung_up().is_cancelled());
    }
}
