//! Reading a fast writer's pipe in batches: rg writes once per file, and
//! a pipe the async runtime watches wakes it on every write. The batched
//! reader runs on a blocking thread: it waits until the pipe is readable,
//! leaves it to fill for a short pause, then reads all it holds, so a run
//! costs a few wake-ups per pause instead of one per write. The pause
//! follows the writer's pace ([`Pacing`]): a writer that finds the pipe
//! full waits, and rg writing 200 MB/s fills even a 1 MiB pipe in 5 ms.
//!
//! A pause ends early when the pipe has no writer left (`POLLHUP`): what is
//! left is then read at once. `stop` is checked at least every
//! [`STOP_CHECK`].

use std::os::fd::{AsFd, OwnedFd};
use std::time::Duration;

use nix::errno::Errno;
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
use tokio_util::sync::CancellationToken;

use super::capture::{Capture, PastCap, READ_BYTES};

/// The longest the reader waits before it looks at `stop` again.
const STOP_CHECK: Duration = Duration::from_millis(100);

/// How long the reader lets the pipe fill before reading it: each pause is
/// the last one scaled by how far what was read after it missed
/// `target_bytes`, within `shortest..=longest`. A slow writer gets the
/// longest pause (few wake-ups); a fast one, a pause after which the pipe
/// holds about `target_bytes`, well short of full.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pacing {
    shortest: Duration,
    longest: Duration,
    target_bytes: usize,
    pause: Duration,
}

impl Pacing {
    /// Pauses of at most `longest` (and at least a sixteenth of it),
    /// aiming to find `target_bytes` in the pipe; the first is a quarter of
    /// `longest`.
    pub(super) fn new(longest: Duration, target_bytes: usize) -> Self {
        Self {
            shortest: longest / 16,
            longest,
            target_bytes,
            pause: longest / 4,
        }
    }

    /// Always `pause`.
    #[cfg(test)]
    pub(super) fn fixed(pause: Duration) -> Self {
        Self {
            shortest: pause,
            longest: pause,
            target_bytes: 1,
            pause,
        }
    }

    /// The pause before the next read.
    pub(super) fn pause(&self) -> Duration {
        self.pause
    }

    /// Takes in that `drained` bytes were read after the last pause.
    pub(super) fn after_reading(&mut self, drained: usize) {
        let scale = (self.target_bytes as f64 / drained.max(1) as f64).min(16.0);
        // `try_from` rather than `mul_f64`, which panics past `Duration::MAX`.
        let scaled = Duration::try_from_secs_f64(self.pause.as_secs_f64() * scale);
        self.pause = scaled
            .unwrap_or(self.longest)
            .clamp(self.shortest, self.longest);
    }
}

/// Reads `pipe` (non-blocking) into `capture` until EOF, an error, or
/// `stop`, treating bytes past the window as `past_cap` says, pausing as
/// `pacing` says between the pipe becoming readable and reading it.
/// Blocks: run it on a blocking thread; `runtime` drives the capture's own
/// writes.
pub(super) fn read_batched(
    pipe: &OwnedFd,
    mut capture: Capture,
    stop: &CancellationToken,
    past_cap: &PastCap,
    mut pacing: Pacing,
    runtime: &tokio::runtime::Handle,
) -> Capture {
    let mut buf = vec![0u8; READ_BYTES];
    loop {
        // Until there is something to read (data or end of file).
        loop {
            if stop.is_cancelled() {
                return capture;
            }
            match wait(pipe, PollFlags::POLLIN, STOP_CHECK) {
                Ok(true) => break,
                Ok(false) | Err(Errno::EINTR) => {}
                Err(_) => return capture,
            }
        }
        // Let it fill, unless the writer is gone: with no events asked
        // for, only a hang-up (or an error) ends the wait early.
        let mut left = pacing.pause();
        while !left.is_zero() && !stop.is_cancelled() {
            let step = left.min(STOP_CHECK);
            match wait(pipe, PollFlags::empty(), step) {
                Ok(false) => left = left.saturating_sub(step),
                Err(Errno::EINTR) => {}
                Ok(true) | Err(_) => break,
            }
        }
        let mut drained = 0;
        loop {
            match nix::unistd::read(pipe, &mut buf) {
                Ok(0) => return capture,
                Ok(n) => {
                    drained += n;
                    if !runtime.block_on(capture.take(&buf[..n], past_cap)) {
                        return capture;
                    }
                    if n < buf.len() {
                        break;
                    }
                }
                Err(Errno::EINTR) => {}
                Err(Errno::EAGAIN) => break,
                Err(_) => return capture,
            }
        }
        pacing.after_reading(drained);
    }
}

/// Whether `pipe` reports `events` (or a hang-up or error) within `limit`.
fn wait(pipe: &OwnedFd, events: PollFlags, limit: Duration) -> Result<bool, Errno> {
    let timeout = PollTimeout::try_from(limit).unwrap_or(PollTimeout::MAX);
    let mut fds = [PollFd::new(pipe.as_fd(), events)];
    Ok(poll(&mut fds, timeout)? > 0)
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;
    use crate::capture::{SpillDir, Stream};

    /// A non-blocking pipe: the read end for the reader, the write end.
    fn pipe() -> (OwnedFd, std::fs::File) {
        let (read, write) = nix::unistd::pipe2(nix::fcntl::OFlag::O_NONBLOCK).unwrap();
        (read, std::fs::File::from(write))
    }

    /// [`read_batched`] into [`capture`] (kept past its cap) with a fixed
    /// `pause`, on a blocking thread as the executor runs it.
    async fn collect_batched(pipe: OwnedFd, stop: CancellationToken, pause: Duration) -> Capture {
        let runtime = tokio::runtime::Handle::current();
        let pacing = Pacing::fixed(pause);
        tokio::task::spawn_blocking(move || {
            read_batched(&pipe, capture(), &stop, &PastCap::Keep, pacing, &runtime)
        })
        .await
        .unwrap()
    }

    #[test]
    fn the_pause_follows_the_writers_pace_within_its_bounds() {
        let ms = Duration::from_millis;
        let mut pacing = Pacing::new(ms(4), 1000);
        assert_eq!(pacing.pause(), ms(1));
        // Four times the target after 1 ms: a quarter of the pause.
        pacing.after_reading(4000);
        assert_eq!(pacing.pause(), Duration::from_micros(250));
        // A flood: never under a sixteenth of the longest.
        pacing.after_reading(1 << 30);
        assert_eq!(pacing.pause(), Duration::from_micros(250));
        // Half the target: twice as long.
        pacing.after_reading(500);
        assert_eq!(pacing.pause(), Duration::from_micros(500));
        // A trickle, or nothing: up to the longest and no further.
        pacing.after_reading(1);
        assert_eq!(pacing.pause(), ms(4));
        pacing.after_reading(0);
        assert_eq!(pacing.pause(), ms(4));
        // Bounds near `Duration::MAX` saturate instead of overflowing.
        let mut huge = Pacing::new(Duration::MAX, usize::MAX);
        huge.after_reading(1);
        assert_eq!(huge.pause(), Duration::MAX);
    }

    fn capture() -> Capture {
        Capture::new(
            std::sync::Arc::new(SpillDir::default()),
            1 << 10,
            1 << 20,
            Stream::Stdout,
            1,
        )
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn reads_everything_written_in_order_across_pauses() {
        let (read, mut write) = pipe();
        let feed = std::thread::spawn(move || {
            for chunk in ["abc", "def", "ghi"] {
                write.write_all(chunk.as_bytes()).unwrap();
                std::thread::sleep(Duration::from_millis(5));
            }
        });
        let capture =
            collect_batched(read, CancellationToken::new(), Duration::from_millis(2)).await;
        feed.join().unwrap();
        assert_eq!(capture.finish().await.0.text, "abcdefghi");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn a_pause_ends_when_the_pipe_has_no_writer_left() {
        let (read, mut write) = pipe();
        write.write_all(b"abc").unwrap();
        drop(write);
        // An hour's pause once the pipe is readable: only the hang-up can
        // cut it short.
        let reading = collect_batched(read, CancellationToken::new(), Duration::from_secs(3600));
        let capture = tokio::time::timeout(Duration::from_secs(60), reading)
            .await
            .expect("the pause ended with the hang-up");
        assert_eq!(capture.finish().await.0.text, "abc");
    }

    #[tokio::test(flavor = "multi_thread")]
    async fn stop_ends_the_wait_for_a_silent_writer() {
        let (read, write) = pipe();
        let stop = CancellationToken::new();
        let stopper = stop.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            stopper.cancel();
        });
        let reading = collect_batched(read, stop, Duration::from_millis(1));
        let capture = tokio::time::timeout(Duration::from_secs(60), reading)
            .await
            .expect("stop ended the wait");
        drop(write);
        assert_eq!(capture.finish().await.0.text, "");
    }
}
