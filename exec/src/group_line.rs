//! A remote launcher's stderr as the command's: the launcher's first line
//! (the id of the command's process group on the other machine, after
//! [`REMOTE_GROUP_LINE`]) is taken off the stream and published; every
//! other byte passes through unchanged. A stream that does not start with
//! that line (the launcher failed before the command started, and says
//! why) passes through whole.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

use super::launcher::REMOTE_GROUP_LINE;

/// The longest group line read before giving up on it.
const MAX_LINE: usize = 64;

/// Reads `inner`, taking its group line off (module doc).
pub(super) struct GroupLineReader<R> {
    inner: R,
    /// Still looking at the first bytes.
    scanning: bool,
    /// Bytes read while scanning that belong to the command.
    pending: Vec<u8>,
    /// How much of `pending` was handed on.
    served: usize,
    group: watch::Sender<Option<i32>>,
}

impl<R> GroupLineReader<R> {
    /// The reader, and where the group's id shows up once read.
    pub(super) fn new(inner: R) -> (Self, watch::Receiver<Option<i32>>) {
        let (group, seen) = watch::channel(None);
        let reader = Self {
            inner,
            scanning: true,
            pending: Vec::new(),
            served: 0,
            group,
        };
        (reader, seen)
    }

    /// Looks at what was read so far: still undecided (`false`), or done.
    fn scan(&mut self, at_eof: bool) -> bool {
        let marker = REMOTE_GROUP_LINE.as_bytes();
        let head = self.pending.len().min(marker.len());
        if self.pending[..head] != marker[..head] {
            return true;
        }
        if let Some(end) = self.pending.iter().position(|&b| b == b'\n')
            && end >= marker.len()
        {
            let id = std::str::from_utf8(&self.pending[marker.len()..end])
                .ok()
                .and_then(|text| text.trim().parse::<i32>().ok());
            if let Some(id) = id {
                self.group.send_replace(Some(id));
                self.pending.drain(..=end);
            }
            return true;
        }
        at_eof || self.pending.len() > MAX_LINE
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for GroupLineReader<R> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        out: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        while this.scanning {
            let mut chunk = [0u8; 256];
            let mut read = ReadBuf::new(&mut chunk);
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut read))?;
            let got = read.filled();
            this.pending.extend_from_slice(got);
            if this.scan(got.is_empty()) {
                this.scanning = false;
            }
        }
        if this.served < this.pending.len() {
            let rest = &this.pending[this.served..];
            let n = rest.len().min(out.remaining());
            out.put_slice(&rest[..n]);
            this.served += n;
            return Poll::Ready(Ok(()));
        }
        Pin::new(&mut this.inner).poll_read(cx, out)
    }
}

#[cfg(test)]
mod tests {
    use tokio::io::AsyncReadExt;

    use super::*;

    async fn read_all(input: &[u8]) -> (Vec<u8>, Option<i32>) {
        let (mut reader, seen) = GroupLineReader::new(input);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).await.unwrap();
        let id = *seen.borrow();
        (out, id)
    }

    #[tokio::test]
    async fn the_group_line_is_taken_off_and_the_rest_passes_through() {
        let input = format!("{REMOTE_GROUP_LINE}4242\nrg: oops\n");
        assert_eq!(
            read_all(input.as_bytes()).await,
            (b"rg: oops\n".to_vec(), Some(4242))
        );
        assert_eq!(
            read_all(REMOTE_GROUP_LINE.as_bytes()).await.1,
            None,
            "no newline: no id"
        );
    }

    #[tokio::test]
    async fn a_stream_without_the_group_line_passes_through_whole() {
        for input in [
            &b""[..],
            b"ssh: connect to host x port 22: Connection refused\n",
            b"\x01",
        ] {
            assert_eq!(read_all(input).await, (input.to_vec(), None));
        }
    }
}
