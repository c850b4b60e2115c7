//! One command's output on an agent's pipe: the bytes up to the run's
//! nonce, read as a stream that ends there. On stdout a trailer line
//! follows the nonce (`agent.sh`); once it is read the pipe is handed
//! back with it, for the agent's next command.
//!
//! The nonce is random per run and never leaves this process but in the
//! request, so no file rg reads can hold it. Bytes that could begin it are
//! held back until the next read tells.

use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::net::unix::pipe::Receiver;
use tokio::sync::oneshot;

/// What a stream gives back at its nonce: the pipe, and the trailer line
/// (without its newline; empty on stderr).
#[derive(Debug)]
pub(super) struct Ended {
    pub(super) pipe: Receiver,
    pub(super) trailer: Vec<u8>,
}

/// Whether a line follows the nonce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Trailer {
    Line,
    None,
}

/// The longest trailer line taken: `nowd` or an exit status.
const MAX_TRAILER: usize = 64;

/// A pipe read up to a nonce (module doc). Dropped before the nonce, it
/// drops the pipe and its receiver hears nothing: the agent is lost.
#[derive(Debug)]
pub(super) struct Framed {
    pipe: Option<Receiver>,
    nonce: Vec<u8>,
    trailer_kind: Trailer,
    /// Read but not yet handed out: `ready` bytes first, then bytes that
    /// may begin the nonce.
    held: Vec<u8>,
    ready: usize,
    /// Where the nonce was found; the trailer's bytes follow it in `held`.
    found: bool,
    back: Option<oneshot::Sender<Ended>>,
}

impl Framed {
    pub(super) fn new(
        pipe: Receiver,
        nonce: &[u8],
        trailer_kind: Trailer,
    ) -> (Self, oneshot::Receiver<Ended>) {
        let (back, ended) = oneshot::channel();
        let framed = Self {
            pipe: Some(pipe),
            nonce: nonce.to_vec(),
            trailer_kind,
            held: Vec::new(),
            ready: 0,
            found: false,
            back: Some(back),
        };
        (framed, ended)
    }

    /// Looks at what is held: marks the bytes before the nonce ready, or
    /// all but a tail that may begin it; past the nonce, takes the
    /// trailer once complete and hands the pipe back.
    fn settle(&mut self) {
        if !self.found {
            match memchr::memmem::find(&self.held[self.ready..], &self.nonce) {
                Some(at) => {
                    let start = self.ready + at;
                    self.ready = start;
                    self.found = true;
                }
                None => {
                    let keep = self.nonce.len() - 1;
                    self.ready = self.ready.max(self.held.len().saturating_sub(keep));
                    return;
                }
            }
        }
        let after = self.ready + self.nonce.len();
        let line = match self.trailer_kind {
            Trailer::None => Some(Vec::new()),
            Trailer::Line => self.held[after..]
                .iter()
                .position(|&b| b == b'\n')
                .map(|end| self.held[after..after + end].to_vec()),
        };
        let line = match line {
            Some(line) => line,
            None if self.held.len() - after > MAX_TRAILER => {
                // Not a trailer: the agent is not speaking its protocol.
                self.pipe = None;
                self.back = None;
                return;
            }
            None => return,
        };
        self.held.truncate(self.ready);
        if let (Some(pipe), Some(back)) = (self.pipe.take(), self.back.take()) {
            let _ = back.send(Ended {
                pipe,
                trailer: line,
            });
        }
    }
}

impl AsyncRead for Framed {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = &mut *self;
        loop {
            if this.ready > 0 {
                let n = this.ready.min(buf.remaining());
                buf.put_slice(&this.held[..n]);
                this.held.drain(..n);
                this.ready -= n;
                return Poll::Ready(Ok(()));
            }
            let Some(pipe) = this.pipe.as_mut() else {
                // The nonce was found (or the pipe lost): the end.
                return Poll::Ready(Ok(()));
            };
            let start = this.held.len();
            let want = buf.remaining().max(this.nonce.len() + MAX_TRAILER);
            this.held.resize(start + want, 0);
            let mut chunk = ReadBuf::new(&mut this.held[start..]);
            let polled = Pin::new(pipe).poll_read(cx, &mut chunk);
            let got = chunk.filled().len();
            this.held.truncate(start + got);
            match polled {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Err(e)) => {
                    this.pipe = None;
                    this.back = None;
                    return Poll::Ready(Err(e));
                }
                Poll::Ready(Ok(())) if got == 0 => {
                    // The agent is gone before the nonce: what it wrote is
                    // output, and nothing comes back.
                    this.pipe = None;
                    this.back = None;
                    if this.found {
                        // Gone within the trailer: the nonce is not output.
                        this.held.truncate(this.ready);
                    } else {
                        this.ready = this.held.len();
                    }
                    if this.ready == 0 {
                        return Poll::Ready(Ok(()));
                    }
                }
                Poll::Ready(Ok(())) => this.settle(),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn pipe() -> (tokio::net::unix::pipe::Sender, Receiver) {
        let (read, write) = nix::unistd::pipe().expect("pipe");
        let sender = tokio::net::unix::pipe::Sender::from_owned_fd(write).expect("sender");
        let receiver = Receiver::from_owned_fd(read).expect("receiver");
        (sender, receiver)
    }

    async fn read_framed(
        pieces: &[&[u8]],
        nonce: &[u8],
        kind: Trailer,
    ) -> (Vec<u8>, Option<Vec<u8>>) {
        let (mut sender, receiver) = pipe();
        let (mut framed, ended) = Framed::new(receiver, nonce, kind);
        let pieces: Vec<Vec<u8>> = pieces.iter().map(|p| p.to_vec()).collect();
        let writer = tokio::spawn(async move {
            for piece in pieces {
                sender.write_all(&piece).await.expect("write");
                tokio::task::yield_now().await;
            }
        });
        let mut out = Vec::new();
        framed.read_to_end(&mut out).await.expect("read");
        writer.await.expect("writer");
        (out, ended.await.ok().map(|e| e.trailer))
    }

    #[tokio::test]
    async fn the_stream_ends_at_the_nonce_and_the_trailer_line_comes_back() {
        let (out, trailer) = read_framed(&[b"a\nb", b"cNONCE 0\n"], b"NONCE", Trailer::Line).await;
        assert_eq!(
            (out.as_slice(), trailer.as_deref()),
            (&b"a\nbc"[..], Some(&b" 0"[..]))
        );
    }

    #[tokio::test]
    async fn a_nonce_split_across_reads_is_found_and_a_near_miss_is_output() {
        let (out, trailer) =
            read_framed(&[b"xNON", b"Ey NO", b"NCE"], b"NONCE", Trailer::None).await;
        assert_eq!(
            (out.as_slice(), trailer.as_deref()),
            (&b"xNONEy "[..], Some(&b""[..]))
        );
    }

    #[tokio::test]
    async fn output_without_a_newline_before_the_nonce_is_kept_whole() {
        let big = vec![b'z'; 300_000];
        let mut all = big.clone();
        all.extend_from_slice(b"N1 nowd\n");
        let (out, trailer) = read_framed(&[&all], b"N1", Trailer::Line).await;
        assert_eq!((out, trailer.as_deref()), (big, Some(&b" nowd"[..])));
    }

    #[tokio::test]
    async fn an_agent_gone_before_the_nonce_gives_its_output_and_nothing_back() {
        let (out, trailer) = read_framed(&[b"partial NON"], b"NONCE", Trailer::Line).await;
        assert_eq!((out.as_slice(), trailer), (&b"partial NON"[..], None));
    }

    #[tokio::test]
    async fn an_agent_gone_within_the_trailer_gives_the_output_before_the_nonce_only() {
        let (out, trailer) = read_framed(&[b"outNONCE 1"], b"NONCE", Trailer::Line).await;
        assert_eq!((out.as_slice(), trailer), (&b"out"[..], None));
    }
}
