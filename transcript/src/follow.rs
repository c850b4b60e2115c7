//! Following a recording while it grows (`workbench --follow FILE`, `f`
//! in the Transcript tab): the records another process appends to a
//! transcript (`workbench mcp --record FILE`) are read as they arrive.
//!
//! Two layers, both synchronous and without a terminal:
//!
//! - [`Follower`] turns appended bytes into complete records. Bytes are
//!   kept until their line ends (`\n`); a record is the lines from one
//!   `call` line up to the next. The `result` line does not say how many
//!   `text` lines follow, so a record is complete when the next `call`
//!   line starts, or when the writer has gone quiet ([`Follower::settle`])
//!   with the record's last line ended and at least a call, a result and
//!   a text line read. The recorder writes each call in one `write`, so a
//!   quiet file ending in a newline holds whole records. Each record is
//!   parsed by the strict reader ([`super::parse::parse`]) behind the
//!   header, so a followed record reads exactly like a replayed one; a
//!   line that breaks the format is reported (once) with its file line
//!   and the follower goes on at the next `call` line. A line is kept to
//!   at most [`LINE_LIMIT`] bytes; a longer one is skipped with its record.
//! - [`Tail`] polls the file: it keeps the offset read so far and reads
//!   only what was appended (at most [`READ_LIMIT`] bytes a poll), waits
//!   for a file that does not exist yet, and starts over
//!   ([`Update::Restarted`]) when the file shrank or was replaced by
//!   another file (a new inode). Only a regular file is read: a FIFO or
//!   a device is reported as [`Update::Unreadable`] (`PATH: not a regular
//!   file (a FIFO)`), opened without blocking. A poll that finds no new bytes settles
//!   the follower, so with polls every ~250 ms a new record shows up
//!   within half a second of its write.

use std::fs::{File, Metadata};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::TranscriptError;
use super::format::{Header, Record};
use super::parse::parse;

/// The most a poll reads; a larger backlog is read over several polls.
pub(crate) const READ_LIMIT: u64 = 4 * 1024 * 1024;
/// The longest line kept; a longer one is skipped (and reported).
pub(crate) const LINE_LIMIT: usize = 16 * 1024 * 1024;

/// What following found.
#[derive(Debug, Clone, PartialEq)]
pub enum Update {
    /// The file does not exist (yet); the follower waits for it.
    Missing,
    /// The file shrank or was replaced: it is read again from its start,
    /// and what was read of it before no longer counts.
    Restarted,
    /// The header line.
    Header(Box<Header>),
    /// One complete record; `line` is its call line's number in the file.
    Record(Box<Record>),
    /// A line that breaks the format (file and line named); the follower
    /// skips to the next call line.
    Invalid(String),
    /// The file cannot be read (other than missing).
    Unreadable(String),
}

/// Turns the bytes appended to a transcript into its header and records.
#[derive(Debug)]
pub(crate) struct Follower {
    /// The file's name in messages.
    file: String,
    /// The bytes of a line not yet ended.
    partial: Vec<u8>,
    /// Complete lines read so far.
    lines: usize,
    /// The header line, once read.
    header: Option<String>,
    /// The header was not a transcript header: nothing after it is read.
    broken: bool,
    /// The line being read grew over [`LINE_LIMIT`]: dropped to its end.
    overlong: bool,
    /// After a reported problem: lines are skipped up to the next call
    /// line without more reports.
    skipping: bool,
    /// The lines of the record being read (the first is its call line).
    open: Vec<String>,
    /// The file line of the open record's call line.
    open_line: usize,
}

/// Whether `raw` is a `call` line (an object with a `call` key).
fn is_call_line(raw: &str) -> bool {
    serde_json::from_str::<Map<String, Value>>(raw).is_ok_and(|map| map.contains_key("call"))
}

impl Follower {
    /// A follower of the file named `file` in messages.
    pub(crate) fn new(file: impl Into<String>) -> Self {
        Self {
            file: file.into(),
            partial: Vec::new(),
            lines: 0,
            header: None,
            broken: false,
            overlong: false,
            skipping: false,
            open: Vec::new(),
            open_line: 0,
        }
    }

    /// Reads appended `bytes`; what they completed.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<Update> {
        let mut out = Vec::new();
        let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
            self.keep(bytes, &mut out);
            return out;
        };
        let (ended, rest) = bytes.split_at(end + 1);
        let mut complete = std::mem::take(&mut self.partial);
        complete.extend_from_slice(ended);
        // The first line's start was dropped when it grew over the limit.
        let skip_first = std::mem::take(&mut self.overlong);
        // `complete` ends in a newline: each piece before it is one line.
        let body = complete.strip_suffix(b"\n").unwrap_or(&complete);
        for (i, raw) in body.split(|b| *b == b'\n').enumerate() {
            self.lines += 1;
            if i > 0 || !skip_first {
                self.line(&String::from_utf8_lossy(raw), &mut out);
            }
        }
        self.keep(rest, &mut out);
        out
    }

    /// Keeps the start of a line not yet ended; one over [`LINE_LIMIT`]
    /// is dropped (and its record with it) and reported.
    fn keep(&mut self, bytes: &[u8], out: &mut Vec<Update>) {
        if self.overlong {
            return;
        }
        self.partial.extend_from_slice(bytes);
        if self.partial.len() > LINE_LIMIT {
            self.partial = Vec::new();
            self.overlong = true;
            self.open.clear();
            self.skipping = true;
            out.push(self.invalid(
                self.lines + 1,
                "a line over 16 MiB; skipped up to the next call line",
            ));
        }
    }

    /// The writer has gone quiet: an open record whose lines are all
    /// ended, with a call, a result and a text line, is complete.
    pub(crate) fn settle(&mut self) -> Vec<Update> {
        if self.partial.is_empty() && self.open.len() >= 3 {
            vec![self.complete()]
        } else {
            Vec::new()
        }
    }

    fn invalid(&self, line: usize, message: &str) -> Update {
        Update::Invalid(format!("{}:{line}: {message}", self.file))
    }

    fn line(&mut self, raw: &str, out: &mut Vec<Update>) {
        if self.broken {
            return;
        }
        if self.header.is_none() {
            match parse(&self.file, &format!("{raw}\n")) {
                Ok(transcript) => {
                    self.header = Some(raw.to_owned());
                    out.push(Update::Header(Box::new(transcript.header)));
                }
                Err(e) => {
                    self.broken = true;
                    out.push(Update::Invalid(e.to_string()));
                }
            }
            return;
        }
        let call = is_call_line(raw);
        if call && !self.open.is_empty() {
            out.push(self.complete());
        }
        if call {
            self.skipping = false;
            self.open.push(raw.to_owned());
            self.open_line = self.lines;
        } else if !self.open.is_empty() {
            self.open.push(raw.to_owned());
        } else if !self.skipping {
            self.skipping = true;
            out.push(self.invalid(
                self.lines,
                "expected a call line (\"call\":NAME,…); skipped up to the next call line",
            ));
        }
    }

    /// Parses the open record behind the header, and closes it.
    fn complete(&mut self) -> Update {
        let lines = std::mem::take(&mut self.open);
        let header = self.header.as_deref().unwrap_or_default();
        let mut text = format!("{header}\n");
        for line in &lines {
            text.push_str(line);
            text.push('\n');
        }
        match parse(&self.file, &text) {
            Ok(transcript) => match transcript.records.into_iter().next() {
                Some(mut record) => {
                    record.line = self.open_line;
                    Update::Record(Box::new(record))
                }
                None => self.invalid(self.open_line, "a record without lines"),
            },
            // Line 2 of the parsed text is the open record's call line.
            Err(TranscriptError::Parse { line, message, .. }) => {
                self.invalid((self.open_line + line).saturating_sub(2), &message)
            }
            Err(e) => Update::Invalid(e.to_string()),
        }
    }
}

/// Polls a transcript file for appended records.
#[derive(Debug)]
pub struct Tail {
    path: PathBuf,
    /// Bytes read so far.
    offset: u64,
    /// The file read so far (device, inode).
    identity: Option<(u64, u64)>,
    follower: Follower,
    /// `Missing` was reported and the file has not appeared since.
    missing: bool,
    /// The last `Unreadable` reported, so it is not repeated each poll.
    unreadable: Option<String>,
}

impl Tail {
    pub fn new(path: &Path) -> Self {
        Self {
            path: path.to_path_buf(),
            offset: 0,
            identity: None,
            follower: Follower::new(path.display().to_string()),
            missing: false,
            unreadable: None,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn restart(&mut self) {
        self.offset = 0;
        self.follower = Follower::new(self.path.display().to_string());
    }

    fn unreadable(&mut self, message: String, out: &mut Vec<Update>) {
        if self.unreadable.as_ref() != Some(&message) {
            self.unreadable = Some(message.clone());
            out.push(Update::Unreadable(message));
        }
    }

    /// One poll: what was appended since the last.
    pub fn poll(&mut self) -> Vec<Update> {
        let mut out = Vec::new();
        // Never blocks: a FIFO (or a device) is reported, not opened for
        // good, so quitting is never left waiting on a stuck open.
        let opened = match fs_search_process::open_regular(&self.path) {
            Ok(opened) => opened,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                if !self.missing {
                    self.missing = true;
                    out.push(Update::Missing);
                }
                return out;
            }
            Err(e) => {
                self.unreadable(format!("{}: {e}", self.path.display()), &mut out);
                return out;
            }
        };
        self.missing = false;
        let (file, meta) = opened;
        match self.read(file, &meta, &mut out) {
            Ok(()) => self.unreadable = None,
            Err(e) => self.unreadable(format!("{}: {e}", self.path.display()), &mut out),
        }
        out
    }

    fn read(
        &mut self,
        mut file: File,
        meta: &Metadata,
        out: &mut Vec<Update>,
    ) -> std::io::Result<()> {
        let identity = (meta.dev(), meta.ino());
        let replaced = self.identity.is_some_and(|id| id != identity);
        if replaced || meta.len() < self.offset {
            self.restart();
            out.push(Update::Restarted);
        }
        self.identity = Some(identity);
        if meta.len() == self.offset {
            out.extend(self.follower.settle());
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.offset))?;
        let mut bytes = Vec::new();
        file.take(READ_LIMIT).read_to_end(&mut bytes)?;
        self.offset += bytes.len() as u64;
        out.extend(self.follower.feed(&bytes));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{
        Call, CallOptions, Outcome, OutcomeError, TranscriptEnv, call_line, header_line,
        outcome_lines,
    };
    use serde_json::json;

    fn header() -> String {
        header_line(&Header {
            contract: Default::default(),
            tree: "work".into(),
            config: json!({"sampleOverCapGlobResults": true}),
            env: TranscriptEnv {
                rg: "ripgrep 14.1.0".into(),
                ripgrep_config: Vec::new(),
                executor: None,
            },
        })
    }

    fn record(n: u32, text: &str) -> String {
        let call = Call {
            name: format!("call-{n}-grep"),
            tool: "grep".into(),
            args: json!({"pattern": format!("p{n}")}),
            options: CallOptions::default(),
        };
        let outcome = Outcome {
            is_error: n.is_multiple_of(2),
            error: (n.is_multiple_of(2)).then(|| OutcomeError {
                name: Some("SearchError".into()),
                code: Some("SEARCH_FAILED".into()),
            }),
            spill: None,
            warnings: Vec::new(),
            text: text.into(),
            tokens: None,
        };
        let mut lines = call_line(&call);
        lines.push_str(&outcome_lines(&call.name, &outcome));
        lines
    }

    fn records(updates: &[Update]) -> Vec<(usize, String, String)> {
        updates
            .iter()
            .filter_map(|u| match u {
                Update::Record(r) => Some((r.line, r.call.name.clone(), r.outcome.text.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_record_completes_at_the_next_call_line_or_when_the_writer_is_quiet() {
        let mut f = Follower::new("rec.jsonl");
        let updates = f.feed(header().as_bytes());
        assert!(matches!(updates.as_slice(), [Update::Header(h)] if h.tree == "work"));
        assert!(f.feed(record(1, "a\nb").as_bytes()).is_empty());
        let next = f.feed(record(2, "c").as_bytes());
        assert_eq!(records(&next), [(2, "call-1-grep".into(), "a\nb".into())]);
        let settled = f.settle();
        assert_eq!(records(&settled), [(6, "call-2-grep".into(), "c".into())]);
        assert!(f.settle().is_empty(), "a record is reported once");
    }

    #[test]
    fn partial_lines_and_records_split_across_writes_wait_for_their_end() {
        let all = format!("{}{}{}", header(), record(1, "one\n\nthree"), record(2, ""));
        let mut f = Follower::new("rec.jsonl");
        let mut got = Vec::new();
        // Byte by byte, settling after every byte: a record is reported
        // only when its lines are all ended, never cut short mid-line.
        for byte in all.as_bytes() {
            got.extend(f.feed(std::slice::from_ref(byte)));
            if *byte != b'\n' {
                got.extend(f.settle());
            }
        }
        got.extend(f.settle());
        assert_eq!(
            records(&got),
            [
                (2, "call-1-grep".into(), "one\n\nthree".into()),
                (7, "call-2-grep".into(), String::new()),
            ]
        );
        // Quiet after only the call line, or the call and result lines:
        // not yet a record.
        let mut f = Follower::new("rec.jsonl");
        let rec = record(3, "x");
        let mut lines = rec.split_inclusive('\n');
        f.feed(header().as_bytes());
        f.feed(lines.next().unwrap().as_bytes());
        assert!(f.settle().is_empty());
        f.feed(lines.next().unwrap().as_bytes());
        assert!(f.settle().is_empty());
        f.feed(lines.next().unwrap().as_bytes());
        assert_eq!(records(&f.settle()).len(), 1);
    }

    #[test]
    fn a_broken_line_is_reported_with_its_line_and_following_goes_on() {
        let mut f = Follower::new("rec.jsonl");
        f.feed(header().as_bytes());
        let mut bad = record(1, "a");
        bad = bad.replacen("\"isError\"", "\"isErr\"", 1);
        let updates = f.feed(format!("{bad}{}", record(3, "ok")).as_bytes());
        match updates.as_slice() {
            [Update::Invalid(message)] => {
                assert!(
                    message.starts_with("rec.jsonl:3: unknown key \"isErr\""),
                    "{message}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            records(&f.settle()),
            [(5, "call-3-grep".into(), "ok".into())]
        );
        let stray = f.feed(b"{\"text\":\"stray\"}\n{\"text\":\"more\"}\n");
        assert!(
            matches!(stray.as_slice(), [Update::Invalid(m)] if m.starts_with("rec.jsonl:8: expected a call line"))
        );
        let mut f = Follower::new("notes.txt");
        let updates = f.feed(b"hello\n{\"call\":\"x\"}\n");
        assert!(
            matches!(updates.as_slice(), [Update::Invalid(m)] if m.starts_with("notes.txt:1:"))
        );
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_with_its_record() {
        let mut f = Follower::new("rec.jsonl");
        f.feed(header().as_bytes());
        let two = record(2, "b");
        let (call, _) = two.split_at(two.find('\n').unwrap() + 1);
        f.feed(call.as_bytes());
        let big = vec![b'x'; LINE_LIMIT / 2 + 1];
        assert!(f.feed(&big).is_empty());
        let over = f.feed(&big);
        assert!(
            matches!(over.as_slice(), [Update::Invalid(m)] if m.starts_with("rec.jsonl:3: a line over 16 MiB")),
            "{over:?}"
        );
        assert!(f.feed(b"xx\n{\"text\":\"rest\"}\n").is_empty());
        let next = f.feed(record(3, "ok").as_bytes());
        assert!(next.is_empty(), "{next:?}");
        assert_eq!(
            records(&f.settle()),
            [(5, "call-3-grep".into(), "ok".into())]
        );
    }

    #[test]
    fn the_tail_waits_for_the_file_reads_only_appended_bytes_and_restarts_on_truncation() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.jsonl");
        let mut tail = Tail::new(&path);
        assert_eq!(tail.poll(), [Update::Missing]);
        assert!(tail.poll().is_empty(), "missing is said once");
        std::fs::write(&path, format!("{}{}", header(), record(1, "a"))).unwrap();
        let first = tail.poll();
        assert!(matches!(first.as_slice(), [Update::Header(_)]), "{first:?}");
        // No new bytes: the writer is quiet, the record is complete.
        assert_eq!(
            records(&tail.poll()),
            [(2, "call-1-grep".into(), "a".into())]
        );
        let append = |text: &str| {
            use std::io::Write;
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(&path)
                .unwrap();
            file.write_all(text.as_bytes()).unwrap();
        };
        let two = record(2, "b");
        let (head, rest) = two.split_at(10);
        append(head);
        assert!(tail.poll().is_empty());
        assert!(tail.poll().is_empty(), "a cut line is not a record");
        append(rest);
        assert!(tail.poll().is_empty());
        assert_eq!(
            records(&tail.poll()),
            [(5, "call-2-grep".into(), "b".into())]
        );
        // Truncated and rewritten shorter: start over from the header.
        std::fs::write(&path, header()).unwrap();
        let again = tail.poll();
        assert!(
            matches!(again.as_slice(), [Update::Restarted, Update::Header(_)]),
            "{again:?}"
        );
        // Replaced by another file (a new inode) of any size.
        let other = dir.path().join("other.jsonl");
        std::fs::write(
            &other,
            format!("{}{}{}", header(), record(7, "z"), record(9, "y")),
        )
        .unwrap();
        std::fs::rename(&other, &path).unwrap();
        let replaced = tail.poll();
        assert!(
            matches!(replaced.first(), Some(Update::Restarted)),
            "{replaced:?}"
        );
        assert_eq!(records(&replaced), [(2, "call-7-grep".into(), "z".into())]);
        assert_eq!(
            records(&tail.poll()),
            [(5, "call-9-grep".into(), "y".into())]
        );
        assert_eq!(tail.path(), path);
    }

    /// Polls `tail` on a thread, failing the test after 5 s instead of
    /// hanging it when the poll blocks.
    fn poll_within_5_s(mut tail: Tail) -> Vec<Update> {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(tail.poll());
        });
        rx.recv_timeout(std::time::Duration::from_secs(5))
            .expect("the poll returns at once instead of blocking")
    }

    #[test]
    fn a_fifo_or_a_device_is_reported_as_not_a_regular_file_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("rec.jsonl");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert_eq!(
            poll_within_5_s(Tail::new(&fifo)),
            [Update::Unreadable(format!(
                "{}: not a regular file (a FIFO)",
                fifo.display()
            ))]
        );
        assert_eq!(
            poll_within_5_s(Tail::new(Path::new("/dev/zero"))),
            [Update::Unreadable(
                "/dev/zero: not a regular file (a character device)".into()
            )]
        );
    }
}
