//! Capture of one output stream: an in-memory tail window of exactly
//! `max_bytes`, and on first overflow a private spill file holding the
//! whole stream (deleted again if the stream outgrows `max_spill_bytes`).
//!
//! Spill files live in the executor's private [`SpillDir`]: a call's files
//! are removed once its result has been consumed ([`SpillDir::release`]),
//! the directory itself when the executor (and every capture still
//! writing into it) is dropped.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

use fs_search_engine::bash::{CollectedOutput, StdoutSink};
use fs_search_engine::spill::random_hex;

static SPILL_COUNTER: AtomicU64 = AtomicU64::new(0);

/// An executor's private spill directory (`<tmp>/dsh-subprocess-XXXXXX`),
/// created on first use and removed with everything in it on drop.
#[derive(Debug, Default)]
pub(super) struct SpillDir {
    dir: OnceLock<Option<tempfile::TempDir>>,
}

impl SpillDir {
    /// The directory, created on first call; `None` when it cannot be.
    fn path(&self) -> Option<&Path> {
        self.dir
            .get_or_init(|| {
                tempfile::Builder::new()
                    .prefix("dsh-subprocess-")
                    .rand_bytes(6)
                    .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
                    .tempdir()
                    .ok()
            })
            .as_ref()
            .map(tempfile::TempDir::path)
    }

    /// Removes the spill files of a consumed result (only files in this
    /// directory: a path from elsewhere is never touched).
    pub(super) fn release(&self, result: &fs_search_engine::bash::BashRunResult) {
        let Some(dir) = self.dir.get().and_then(Option::as_ref) else {
            return;
        };
        for path in [&result.stdout.spill_path, &result.stderr.spill_path]
            .into_iter()
            .flatten()
        {
            if path.parent() == Some(dir.path()) {
                let _ = std::fs::remove_file(path);
            }
        }
    }
}

/// Which of a command's output streams a capture reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stream {
    /// Standard output: what the caller's budget and sink apply to.
    Stdout,
    /// Standard error: kept within the executor's own budget.
    Stderr,
}

impl Stream {
    /// The stream's name in spill file names.
    fn as_str(self) -> &'static str {
        match self {
            Self::Stdout => "stdout",
            Self::Stderr => "stderr",
        }
    }
}

enum Spill {
    /// No overflow yet.
    None,
    Writing {
        path: PathBuf,
        file: tokio::fs::File,
    },
    /// The spill failed or outgrew its cap: no path is reported.
    Abandoned,
}

/// A tail window over one stream.
pub(super) struct Capture {
    dir: std::sync::Arc<SpillDir>,
    max_bytes: usize,
    max_spill_bytes: u64,
    stream: Stream,
    pid: u32,
    /// The window; once full it is a ring whose oldest byte is at `head`.
    window: Vec<u8>,
    head: usize,
    total: u64,
    spill: Spill,
    /// Receives the bytes within the window instead of the window.
    sink: Option<Box<dyn StdoutSink>>,
}

impl Capture {
    pub(super) fn new(
        dir: std::sync::Arc<SpillDir>,
        max_bytes: usize,
        max_spill_bytes: u64,
        stream: Stream,
        pid: u32,
    ) -> Self {
        Self {
            dir,
            max_bytes,
            max_spill_bytes,
            stream,
            pid,
            window: Vec::new(),
            head: 0,
            total: 0,
            spill: Spill::None,
            sink: None,
        }
    }

    /// A capture that hands the bytes within its window to `sink` (in
    /// order, keeping none of them) and only counts the rest.
    pub(super) fn streaming(
        dir: std::sync::Arc<SpillDir>,
        max_bytes: usize,
        pid: u32,
        sink: Box<dyn StdoutSink>,
    ) -> Self {
        Self {
            sink: Some(sink),
            ..Self::new(dir, max_bytes, 0, Stream::Stdout, pid)
        }
    }

    fn truncated(&self) -> bool {
        self.total > self.max_bytes as u64
    }

    async fn push(&mut self, chunk: &[u8]) {
        if let Some(sink) = &mut self.sink {
            self.total += chunk.len() as u64;
            if self.total <= self.max_bytes as u64 {
                sink.write(chunk);
            }
            return;
        }
        self.total += chunk.len() as u64;
        if self.truncated() {
            self.spill_chunk(chunk).await;
        }
        let room = self.max_bytes - self.window.len();
        if chunk.len() <= room {
            self.window.extend_from_slice(chunk);
            return;
        }
        let (fits, rest) = chunk.split_at(room);
        self.window.extend_from_slice(fits);
        // Only the last `max_bytes` of `rest` can survive.
        let mut rest = &rest[rest.len().saturating_sub(self.max_bytes)..];
        while !rest.is_empty() {
            let n = rest.len().min(self.max_bytes - self.head);
            self.window[self.head..self.head + n].copy_from_slice(&rest[..n]);
            self.head = (self.head + n) % self.max_bytes;
            rest = &rest[n..];
        }
    }

    /// Counts `n` bytes past the window and drops everything kept: a
    /// discarded stream reports itself truncated with empty text.
    fn discard(&mut self, n: usize) {
        self.total += n as u64;
        self.window = Vec::new();
        self.head = 0;
    }

    async fn spill_chunk(&mut self, chunk: &[u8]) {
        // A spill cap of 0: this stream never spills.
        if self.max_spill_bytes == 0 {
            self.spill = Spill::Abandoned;
            return;
        }
        if matches!(self.spill, Spill::None) {
            self.spill = self.open_spill().await;
        }
        if self.total > self.max_spill_bytes {
            if let Spill::Writing { path, .. } = &self.spill {
                let _ = tokio::fs::remove_file(path).await;
            }
            self.spill = Spill::Abandoned;
            return;
        }
        if let Spill::Writing { path, file } = &mut self.spill
            && file.write_all(chunk).await.is_err()
        {
            let _ = tokio::fs::remove_file(&*path).await;
            self.spill = Spill::Abandoned;
        }
    }

    /// Creates the spill file holding every byte before `chunk`.
    async fn open_spill(&mut self) -> Spill {
        let Some(dir) = self.dir.path() else {
            return Spill::Abandoned;
        };
        let name = format!(
            "dsh-subprocess-{}-{}-{}-{}.log",
            self.pid,
            SPILL_COUNTER.fetch_add(1, Ordering::Relaxed),
            random_hex(6),
            self.stream.as_str()
        );
        let path = dir.join(name);
        let mut options = tokio::fs::OpenOptions::new();
        options.write(true).create_new(true).mode(0o600);
        let Ok(mut file) = options.open(&path).await else {
            return Spill::Abandoned;
        };
        let before = self.contiguous();
        if file.write_all(&before).await.is_err() {
            let _ = tokio::fs::remove_file(&path).await;
            return Spill::Abandoned;
        }
        Spill::Writing { path, file }
    }

    fn contiguous(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.window.len());
        out.extend_from_slice(&self.window[self.head..]);
        out.extend_from_slice(&self.window[..self.head]);
        out
    }

    /// The captured stream: lossy UTF-8 text of the retained bytes, and
    /// the sink of a streaming capture, with everything written to it.
    pub(super) async fn finish(mut self) -> (CollectedOutput, Option<Box<dyn StdoutSink>>) {
        let sink = self.sink.take();
        let truncated = self.truncated();
        let spill_path = match std::mem::replace(&mut self.spill, Spill::Abandoned) {
            Spill::Writing { path, mut file } => match file.flush().await {
                Ok(()) => Some(path),
                Err(_) => None,
            },
            _ => None,
        };
        let mut bytes = std::mem::take(&mut self.window);
        bytes.rotate_left(self.head);
        let text = match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let output = CollectedOutput {
            text,
            truncated,
            spill_path,
        };
        (output, sink)
    }
}

/// What a capture does with a stream that outgrows its window.
#[derive(Debug, Clone)]
pub(super) enum PastCap {
    /// Keep the tail window and spill the whole stream (`run`).
    Keep,
    /// Keep nothing and write nothing: count the bytes (the capture
    /// reports itself truncated, with empty text) and read to the end.
    Discard,
    /// Like `Discard`, but stop reading at once and cancel the token so
    /// the executor can end the command.
    Stop(CancellationToken),
}

/// The read buffer of [`collect`] and of the batched reader.
pub(super) const READ_BYTES: usize = 512 * 1024;

impl Capture {
    /// Takes one chunk read from the pipe, treating bytes past the window
    /// as `past_cap` says; `false` when reading must stop.
    pub(super) async fn take(&mut self, chunk: &[u8], past_cap: &PastCap) -> bool {
        let past = self.total + chunk.len() as u64 > self.max_bytes as u64;
        match past_cap {
            PastCap::Keep => self.push(chunk).await,
            _ if !past => self.push(chunk).await,
            PastCap::Discard => self.discard(chunk.len()),
            PastCap::Stop(over_cap) => {
                self.discard(chunk.len());
                over_cap.cancel();
                return false;
            }
        }
        true
    }
}

/// Reads `pipe` into `capture` until EOF, an error, or `stop`, treating
/// bytes past the window as `past_cap` says.
pub(super) async fn collect<R: AsyncRead + Unpin>(
    mut pipe: R,
    mut capture: Capture,
    stop: CancellationToken,
    past_cap: PastCap,
) -> Capture {
    let mut buf = vec![0u8; READ_BYTES];
    loop {
        tokio::select! {
            biased;
            read = pipe.read(&mut buf) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if !capture.take(&buf[..n], &past_cap).await {
                        break;
                    }
                }
            },
            () = stop.cancelled() => break,
        }
    }
    capture
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spill directory of the test's own, removed when its last holder
    /// drops it.
    fn test_dir() -> std::sync::Arc<SpillDir> {
        std::sync::Arc::new(SpillDir::default())
    }

    #[tokio::test]
    async fn a_released_result_loses_its_spill_files_and_a_dropped_dir_its_directory() {
        let dir = std::sync::Arc::new(SpillDir::default());
        let mut capture = Capture::new(dir.clone(), 2, 1 << 20, Stream::Stderr, 1);
        capture.push(b"more than two").await;
        let stderr = capture.finish().await.0;
        let path = stderr.spill_path.clone().expect("spill file");
        assert!(path.is_file());
        let root = path.parent().unwrap().to_path_buf();
        // A path outside the directory is never touched.
        let outside = tempfile::NamedTempFile::new().unwrap();
        let foreign = fs_search_engine::bash::BashRunResult {
            stdout: CollectedOutput {
                spill_path: Some(outside.path().to_path_buf()),
                ..CollectedOutput::default()
            },
            stderr,
            ..Default::default()
        };
        dir.release(&foreign);
        assert!(!path.exists());
        assert!(outside.path().exists());
        assert!(root.is_dir());
        drop(dir);
        assert!(!root.exists());
    }

    /// The capture of `chunks`, and its spill directory (the spill file
    /// lives as long as the directory is held).
    async fn captured(max: usize, chunks: &[&[u8]]) -> (CollectedOutput, std::sync::Arc<SpillDir>) {
        let dir = test_dir();
        let mut capture = Capture::new(dir.clone(), max, 1 << 20, Stream::Stdout, 1);
        for chunk in chunks {
            capture.push(chunk).await;
        }
        (capture.finish().await.0, dir)
    }

    #[tokio::test]
    async fn keeps_everything_within_the_window() {
        let (out, _dir) = captured(8, &[b"abc", b"defgh"]).await;
        assert_eq!(
            (out.text.as_str(), out.truncated, out.spill_path),
            ("abcdefgh", false, None)
        );
    }

    #[tokio::test]
    async fn keeps_exactly_the_tail_and_spills_the_whole_stream() {
        let (out, _dir) = captured(4, &[b"abc", b"defgh", b"ij"]).await;
        assert_eq!(out.text, "ghij");
        assert!(out.truncated);
        let path = out.spill_path.expect("spill file");
        assert_eq!(std::fs::read(&path).unwrap(), b"abcdefghij");
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let dir = path.parent().unwrap();
        assert_eq!(
            std::fs::metadata(dir).unwrap().permissions().mode() & 0o777,
            0o700
        );
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            name.starts_with("dsh-subprocess-1-") && name.ends_with("-stdout.log"),
            "{name}"
        );
        std::fs::remove_file(path).unwrap();
    }

    #[tokio::test]
    async fn a_chunk_larger_than_the_window_keeps_its_tail() {
        let (out, _dir) = captured(3, &[b"ab", b"cdefghij"]).await;
        assert_eq!(out.text, "hij");
        let _ = out.spill_path.map(std::fs::remove_file);
    }

    #[tokio::test]
    async fn drops_the_spill_file_past_the_spill_cap() {
        let mut capture = Capture::new(test_dir(), 2, 5, Stream::Stderr, 1);
        capture.push(b"abcd").await;
        capture.push(b"efgh").await;
        let out = capture.finish().await.0;
        assert_eq!(
            (out.text.as_str(), out.truncated, out.spill_path),
            ("gh", true, None)
        );
    }

    #[tokio::test]
    async fn stops_reading_at_the_first_chunk_past_the_window_when_asked() {
        let over_cap = CancellationToken::new();
        let pipe: &[u8] = b"abcdefghij";
        let capture = collect(
            pipe,
            Capture::new(test_dir(), 4, 1 << 20, Stream::Stdout, 1),
            CancellationToken::new(),
            PastCap::Stop(over_cap.clone()),
        )
        .await;
        assert!(over_cap.is_cancelled());
        let out = capture.finish().await.0;
        assert_eq!(
            (out.text.as_str(), out.truncated, out.spill_path),
            ("", true, None)
        );
        let capture = collect(
            &b"abcd"[..],
            Capture::new(test_dir(), 4, 1 << 20, Stream::Stdout, 1),
            CancellationToken::new(),
            PastCap::Stop(CancellationToken::new()),
        )
        .await;
        let out = capture.finish().await.0;
        assert_eq!((out.text.as_str(), out.truncated), ("abcd", false));
    }

    #[tokio::test]
    async fn discarding_reads_to_the_end_and_keeps_nothing_past_the_window() {
        let (mut writer, reader) = tokio::io::duplex(16);
        let feed = tokio::spawn(async move {
            for chunk in [&b"abc"[..], b"defgh", b"ij"] {
                writer.write_all(chunk).await.unwrap();
            }
        });
        let capture = collect(
            reader,
            Capture::new(test_dir(), 4, 1 << 20, Stream::Stdout, 1),
            CancellationToken::new(),
            PastCap::Discard,
        )
        .await;
        feed.await.unwrap();
        assert_eq!(capture.total, 10);
        let out = capture.finish().await.0;
        assert_eq!(
            (out.text.as_str(), out.truncated, out.spill_path),
            ("", true, None)
        );
    }

    #[tokio::test]
    async fn decodes_invalid_utf8_lossily() {
        let (out, _dir) = captured(16, &[b"a\xffb"]).await;
        assert_eq!(out.text, "a\u{FFFD}b");
    }
}
