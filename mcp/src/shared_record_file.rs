//! The file behind `workbench mcp --record`, shared by every server that
//! records to the same path (two agent windows with one `--record` path):
//!
//! - Each append holds an exclusive `flock` on the file. Under it, the
//!   writer first reads what other writers appended since its own last
//!   append (only that part) to learn the highest `call-N-…` number in
//!   the file and how many lines it holds, then names its call N + 1
//!   (and knows the line its call line lands on): names stay unique
//!   across writers, and a file that already holds duplicate names
//!   (written before this lock existed) goes on after its highest number.
//! - An append that fails part-way (a full disk, a file-size limit) is
//!   rolled back: the file is truncated to its length before the append,
//!   so it stays a valid transcript, and the caller learns the call was
//!   not recorded.
//! - The file never grows past its bound (at most the transcript reader's
//!   cap, so every start, `replay` and `freeze` can read it): an append
//!   that would pass it first rotates the file to `NAME.1.jsonl` (then
//!   `NAME.2.jsonl`, …), each a valid transcript with its own header, and
//!   goes on in a new `NAME.jsonl`. An existing file already over the
//!   bound is rotated when a server opens it. Other writers notice the
//!   new file (its inode differs) and reopen it.
//! - One recording holds one rg's results: a server whose rg version (or
//!   rg config) differs from the one its file's header names (Codex CLI
//!   starts its servers with its own rg first on `PATH`, so a Claude Code
//!   and a Codex session may share one `--record` path with different
//!   rgs) rotates that file aside as above and goes on in a new file
//!   under its own header, with a warning: never a silently mixed file.
//! - Only a regular file is recorded to (a FIFO or a device is refused at
//!   once, see [`fs_search_process::open_for_append`]).

use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use thiserror::Error;

use fs_search_process::Staged;
use fs_search_process::{TRANSCRIPT_MAX_BYTES, open_for_append};
use fs_search_transcript::{Header, header_line, parse_header_line, parse_keeping_duplicates};

/// The most bytes a recording file holds: the transcript reader's cap.
pub(crate) const RECORD_MAX_BYTES: u64 = TRANSCRIPT_MAX_BYTES;

/// Lowers [`RECORD_MAX_BYTES`] (tests, small disks): a whole number of
/// bytes from 1 to [`RECORD_MAX_BYTES`].
pub(crate) const RECORD_MAX_BYTES_ENV: &str = "WORKBENCH_RECORD_MAX_BYTES";

/// The longest header line read from a file over the bound (its config
/// comes from a config file of at most 1 MiB).
const HEADER_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// How often an append follows a file replaced under it before giving up.
const REOPEN_ATTEMPTS: u32 = 8;

/// How many rotated names are tried.
const ROTATE_ATTEMPTS: u32 = 100_000;

#[derive(Debug, Error)]
pub(crate) enum RecordFileError {
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The file is not a recording this server may append to.
    #[error("{}: {message}", path.display())]
    Refused { path: PathBuf, message: String },
    #[error(
        "its record of {bytes} bytes does not fit in a recording of at most {max} bytes ({RECORD_MAX_BYTES_ENV})"
    )]
    TooLarge { bytes: u64, max: u64 },
    #[error(
        "cannot append to {}: {source}; the file was rolled back to its last complete record",
        path.display()
    )]
    RolledBack {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "cannot append to {}: {source}; rolling it back to {len} bytes failed too: {rollback}",
        path.display()
    )]
    NotRolledBack {
        path: PathBuf,
        len: u64,
        source: std::io::Error,
        rollback: std::io::Error,
    },
    #[error("the recording's lock is poisoned (a writer panicked)")]
    Poisoned,
}

/// A [`RECORD_MAX_BYTES_ENV`] that is not a usable bound.
#[derive(Debug, Error)]
#[error(
    "{RECORD_MAX_BYTES_ENV}={value}: must be a whole number of bytes from 1 to {RECORD_MAX_BYTES}"
)]
pub(crate) struct RecordBoundError {
    /// The variable's value, as given.
    pub value: String,
}

/// The bound from [`RECORD_MAX_BYTES_ENV`], else [`RECORD_MAX_BYTES`].
pub(crate) fn record_max_bytes() -> Result<u64, RecordBoundError> {
    let Some(raw) = std::env::var_os(RECORD_MAX_BYTES_ENV) else {
        return Ok(RECORD_MAX_BYTES);
    };
    raw.to_str()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .filter(|n| (1..=RECORD_MAX_BYTES).contains(n))
        .ok_or_else(|| RecordBoundError {
            value: raw.to_string_lossy().into_owned(),
        })
}

/// The number N of a record named `call-N-…`.
fn call_number(name: &str) -> Option<u64> {
    name.strip_prefix("call-")?.split('-').next()?.parse().ok()
}

/// `NAME.K.EXT` next to `path` (`NAME.K` when it has no extension).
fn rotated_name(path: &Path, k: u32) -> PathBuf {
    let stem = path.file_stem().unwrap_or_default().to_string_lossy();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.{k}.{}", ext.to_string_lossy()),
        None => format!("{stem}.{k}"),
    };
    path.with_file_name(name)
}

/// Why a recording is moved aside to `NAME.K.EXT`.
enum Rotation<'a> {
    /// The next record would pass the bound.
    Full,
    /// The file holds another rg's (or rg config's) results, under this
    /// header: a replay runs one rg, so one file holds one rg's records.
    OtherRg(&'a Header),
}

/// What this writer knows of the file it holds.
struct State {
    file: File,
    /// The file's length after this writer last read or wrote it.
    known_end: u64,
    /// The highest `call-N-…` number in the file.
    highest: u64,
    /// Records in the file (0: only a header).
    records: u64,
    /// Lines in the file up to `known_end` (the header's included).
    lines: usize,
}

/// What one locked attempt did.
enum Attempt<T> {
    /// Appended; what the record's maker gave with its lines.
    Appended(T),
    /// The file was rotated: reopen the path and try again.
    Rotated,
}

/// The recording file of one server.
pub(crate) struct RecordFile {
    path: PathBuf,
    max_bytes: u64,
    /// This server's header: written to a new file; an existing file's
    /// header must name the same tree and config.
    header: Header,
    header_line: String,
    state: Mutex<State>,
}

impl RecordFile {
    /// Opens (or creates) the recording at `path` for a server whose
    /// header is `header`, rotating a file already over `max_bytes`.
    pub(crate) fn open(
        path: &Path,
        header: Header,
        max_bytes: u64,
    ) -> Result<Self, RecordFileError> {
        let file = open_for_append(path).map_err(|source| RecordFileError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let this = Self {
            path: path.to_path_buf(),
            max_bytes,
            header_line: header_line(&header),
            header,
            state: Mutex::new(State {
                file,
                known_end: 0,
                highest: 0,
                records: 0,
                lines: 0,
            }),
        };
        {
            let mut state = this.state.lock().map_err(|_| RecordFileError::Poisoned)?;
            this.lock_current(&mut state)?;
            let opened = this.open_locked(&mut state);
            let _ = state.file.unlock();
            opened?;
        }
        Ok(this)
    }

    /// Appends the record `record(N, LINE)` makes for the next number N,
    /// its call line to be line LINE of the file, in one write under the
    /// lock: `record` gives the record's lines and what to return once
    /// they are appended. On failure nothing is appended.
    pub(crate) fn append<T>(
        &self,
        record: impl Fn(u64, usize) -> (String, T),
    ) -> Result<T, RecordFileError> {
        let mut state = self.state.lock().map_err(|_| RecordFileError::Poisoned)?;
        for _ in 0..REOPEN_ATTEMPTS {
            self.lock_current(&mut state)?;
            let attempt = self.append_locked(&mut state, &record);
            let _ = state.file.unlock();
            match attempt? {
                Attempt::Appended(made) => return Ok(made),
                Attempt::Rotated => {}
            }
        }
        Err(self.refused("it was replaced too often while appending"))
    }

    /// Makes the appended records durable.
    pub(crate) fn sync(&self) {
        if let Ok(state) = self.state.lock()
            && let Err(e) = state.file.sync_data()
        {
            tracing::warn!("cannot sync {}: {e}", self.path.display());
        }
    }

    fn io(&self, source: std::io::Error) -> RecordFileError {
        RecordFileError::Io {
            path: self.path.clone(),
            source,
        }
    }

    fn refused(&self, message: impl Into<String>) -> RecordFileError {
        RecordFileError::Refused {
            path: self.path.clone(),
            message: message.into(),
        }
    }

    /// Locks the file at the path: when the path names another file than
    /// the one held (rotated, replaced, removed), that one is opened.
    fn lock_current(&self, state: &mut State) -> Result<(), RecordFileError> {
        for _ in 0..REOPEN_ATTEMPTS {
            state.file.lock().map_err(|e| self.io(e))?;
            let held = state.file.metadata().map_err(|e| self.io(e))?;
            match std::fs::metadata(&self.path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => return Ok(()),
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::NotFound => {}
                Err(e) => {
                    let _ = state.file.unlock();
                    return Err(self.io(e));
                }
            }
            let _ = state.file.unlock();
            state.file = open_for_append(&self.path).map_err(|e| self.io(e))?;
            state.known_end = 0;
            state.records = 0;
            state.lines = 0;
        }
        Err(self.refused("it was replaced too often while locking it"))
    }

    fn len(&self, state: &State) -> Result<u64, RecordFileError> {
        Ok(state.file.metadata().map_err(|e| self.io(e))?.len())
    }

    /// At open, under the lock: a new file gets the header; a file over
    /// the bound is rotated; any other is read whole (and must parse).
    fn open_locked(&self, state: &mut State) -> Result<(), RecordFileError> {
        let len = self.len(state)?;
        if len == 0 {
            return self.write_header(state);
        }
        if len > self.max_bytes {
            let first = self.read_header_line(state)?;
            self.check_header(&first)?;
            self.rotate(len, &Rotation::Full)?;
            return Ok(());
        }
        let mut text = String::new();
        (&state.file)
            .seek(SeekFrom::Start(0))
            .and_then(|_| (&state.file).take(len).read_to_string(&mut text))
            .map_err(|e| self.io(e))?;
        let label = self.path.display().to_string();
        let (transcript, duplicates) = parse_keeping_duplicates(&label, &text)
            .map_err(|e| self.refused(format!("cannot append to it: {e}")))?;
        self.check_header(&transcript.header)?;
        if transcript.header.env != self.header.env {
            self.rotate(len, &Rotation::OtherRg(&transcript.header))?;
            return Ok(());
        }
        if let Some(first) = duplicates.first() {
            tracing::warn!(
                "{label}: holds {} duplicate record names (the first: duplicate record name \"{}\" at line {}), written by servers that shared it before record names were kept unique; new calls are numbered after the highest, and `workbench freeze` renames the duplicates",
                duplicates.len(),
                first.name,
                first.line
            );
        }
        state.records = transcript.records.len() as u64;
        state.lines = line_count(text.as_bytes());
        state.highest = transcript
            .records
            .iter()
            .filter_map(|r| call_number(&r.call.name))
            .fold(state.highest, u64::max);
        state.known_end = len;
        Ok(())
    }

    fn check_header(&self, old: &Header) -> Result<(), RecordFileError> {
        let new = &self.header;
        if old.tree != new.tree || old.config != new.config {
            return Err(self.refused(format!(
                "it records tree {} with config {}; this server runs on {} with {} (record to another file)",
                old.tree, old.config, new.tree, new.config
            )));
        }
        if old.contract != new.contract {
            return Err(self.refused(format!(
                "it records calls run as release {}; this server runs as {} (record to another file)",
                old.contract, new.contract
            )));
        }
        Ok(())
    }

    /// The header of the held file, from its first line only.
    fn read_header_line(&self, state: &State) -> Result<Header, RecordFileError> {
        let mut line = Vec::new();
        (&state.file)
            .seek(SeekFrom::Start(0))
            .map_err(|e| self.io(e))?;
        BufReader::new((&state.file).take(HEADER_MAX_BYTES))
            .read_until(b'\n', &mut line)
            .map_err(|e| self.io(e))?;
        let line = std::str::from_utf8(&line)
            .ok()
            .and_then(|l| l.strip_suffix('\n'))
            .ok_or_else(|| self.refused("its first line is not a transcript header"))?;
        parse_header_line(&self.path.display().to_string(), line)
            .map_err(|e| self.refused(format!("cannot append to it: {e}")))
    }

    fn write_header(&self, state: &mut State) -> Result<(), RecordFileError> {
        self.write_rolled_back(state, 0, &self.header_line)?;
        state.known_end = self.header_line.len() as u64;
        state.records = 0;
        state.lines = line_count(self.header_line.as_bytes());
        Ok(())
    }

    /// Writes `lines` at the end (`len`); on failure truncates back to `len`.
    fn write_rolled_back(
        &self,
        state: &State,
        len: u64,
        lines: &str,
    ) -> Result<(), RecordFileError> {
        let Err(source) = (&state.file).write_all(lines.as_bytes()) else {
            return Ok(());
        };
        match state.file.set_len(len) {
            Ok(()) => Err(RecordFileError::RolledBack {
                path: self.path.clone(),
                source,
            }),
            Err(rollback) => Err(RecordFileError::NotRolledBack {
                path: self.path.clone(),
                len,
                source,
                rollback,
            }),
        }
    }

    fn append_locked<T>(
        &self,
        state: &mut State,
        make: &impl Fn(u64, usize) -> (String, T),
    ) -> Result<Attempt<T>, RecordFileError> {
        let mut len = self.len(state)?;
        if len == 0 {
            self.write_header(state)?;
            len = state.known_end;
        } else if len != state.known_end && self.learn(state, len)? {
            return Ok(Attempt::Rotated);
        }
        let number = state.highest + 1;
        let (record, made) = make(number, state.lines + 1);
        let bytes = record.len() as u64;
        if len.saturating_add(bytes) > self.max_bytes {
            if state.records == 0 {
                return Err(RecordFileError::TooLarge {
                    bytes,
                    max: self.max_bytes,
                });
            }
            self.rotate(len, &Rotation::Full)?;
            return Ok(Attempt::Rotated);
        }
        let appended = self.write_rolled_back(state, len, &record);
        state.known_end = len;
        appended?;
        state.known_end = len + bytes;
        state.highest = number;
        state.records += 1;
        state.lines += line_count(record.as_bytes());
        Ok(Attempt::Appended(made))
    }

    /// Reads what other writers appended since `known_end` (the whole
    /// file when it shrank) for their record names; true when the file
    /// was another rg's recording and was rotated instead.
    fn learn(&self, state: &mut State, len: u64) -> Result<bool, RecordFileError> {
        let from = if len < state.known_end || state.known_end == 0 {
            // A file new to this writer (or one that shrank): its header
            // must be this server's.
            state.records = 0;
            state.lines = 0;
            let header = self.read_header_line(state)?;
            self.check_header(&header)?;
            if header.env != self.header.env {
                self.rotate(len, &Rotation::OtherRg(&header))?;
                return Ok(true);
            }
            0
        } else {
            state.known_end
        };
        (&state.file)
            .seek(SeekFrom::Start(from))
            .map_err(|e| self.io(e))?;
        let mut reader = BufReader::new((&state.file).take(len - from));
        let mut line = Vec::new();
        loop {
            line.clear();
            let read = reader
                .read_until(b'\n', &mut line)
                .map_err(|e| self.io(e))?;
            if read == 0 {
                break;
            }
            state.lines += line_count(&line);
            if !line.starts_with(b"{\"call\":") {
                continue;
            }
            let name = serde_json::from_slice::<serde_json::Value>(&line)
                .ok()
                .and_then(|v| v.get("call").and_then(|c| c.as_str()).map(str::to_owned));
            if let Some(name) = name {
                state.records += 1;
                if let Some(n) = call_number(&name) {
                    state.highest = state.highest.max(n);
                }
            }
        }
        state.known_end = len;
        Ok(false)
    }

    /// Moves the file (`len` bytes) to the first free `NAME.K.EXT` and puts
    /// a new file holding only the header at the path, at once (the path
    /// always names a valid transcript). Returns the rotated name.
    fn rotate(&self, len: u64, why: &Rotation<'_>) -> Result<PathBuf, RecordFileError> {
        // A path that is a symbolic link: the file it names is rotated,
        // next to itself, and the link kept.
        let real = std::fs::canonicalize(&self.path).map_err(|e| self.io(e))?;
        let staged = Staged::write(&real, self.header_line.as_bytes()).map_err(|e| self.io(e))?;
        let mut rotated = None;
        for k in 1..=ROTATE_ATTEMPTS {
            let name = rotated_name(&real, k);
            match std::fs::hard_link(&real, &name) {
                Ok(()) => {
                    rotated = Some(name);
                    break;
                }
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
                Err(e) => return Err(self.io(e)),
            }
        }
        let rotated = rotated.ok_or_else(|| self.refused("no free name to rotate it to"))?;
        if let Err(e) = staged.commit() {
            let _ = std::fs::remove_file(&rotated);
            return Err(self.io(e));
        }
        match why {
            Rotation::Full => tracing::warn!(
                "{} reached {len} bytes (its bound is {} bytes, {RECORD_MAX_BYTES_ENV}): rotated it to {}; the recording goes on in a new {}",
                self.path.display(),
                self.max_bytes,
                rotated.display(),
                self.path.display()
            ),
            Rotation::OtherRg(old) => tracing::warn!(
                "{} was recorded with {} (rg config {:?}); this server runs {} (rg config {:?}): rotated it to {} so that one recording holds one rg's results; the recording goes on in a new {}",
                self.path.display(),
                old.env.rg,
                old.env.ripgrep_config,
                self.header.env.rg,
                self.header.env.ripgrep_config,
                rotated.display(),
                self.path.display()
            ),
        }
        Ok(rotated)
    }
}

/// The lines `bytes` ends (each ends in `\n`).
fn line_count(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| b == b'\n').count()
}

#[cfg(test)]
mod tests {
    use super::*;
    use fs_search_transcript::TranscriptEnv;
    use fs_search_transcript::parse;
    use serde_json::json;

    fn header() -> Header {
        Header {
            contract: fs_search_engine::release::Release::Seed,
            tree: ".".to_owned(),
            config: json!({"sampleOverCapGlobResults": true}),
            env: TranscriptEnv {
                rg: "ripgrep 13.0.0".to_owned(),
                ripgrep_config: Vec::new(),
                executor: None,
            },
        }
    }

    /// A record named `call-N-glob` with `text` as its one text line.
    fn record(n: u64, text: &str) -> String {
        let name = format!("call-{n}-glob");
        format!(
            "{}\n{}\n{}\n",
            json!({"call": name, "tool": "glob", "args": {}}),
            json!({"result": name, "isError": false, "error": null, "spill": null, "warnings": []}),
            json!({ "text": text })
        )
    }

    fn parsed(path: &Path) -> Vec<String> {
        let text = std::fs::read_to_string(path).unwrap();
        parse("t", &text)
            .unwrap()
            .records
            .into_iter()
            .map(|r| r.call.name)
            .collect()
    }

    #[test]
    fn an_append_that_would_pass_the_bound_rotates_first_and_every_file_parses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let bound = header_line(&header()).len() as u64 + 2 * record(1, "x").len() as u64;
        let file = RecordFile::open(&path, header(), bound).unwrap();
        for _ in 0..5 {
            file.append(|n, _| (record(n, "x"), n)).unwrap();
        }
        let (first, second) = (
            dir.path().join("session.1.jsonl"),
            dir.path().join("session.2.jsonl"),
        );
        assert_eq!(parsed(&first), ["call-1-glob", "call-2-glob"]);
        assert_eq!(parsed(&second), ["call-3-glob", "call-4-glob"]);
        assert_eq!(parsed(&path), ["call-5-glob"]);
        for file in [&first, &second, &path] {
            assert!(std::fs::metadata(file).unwrap().len() <= bound);
        }
    }

    fn header_of(rg: &str) -> Header {
        let mut header = header();
        header.env.rg = rg.to_owned();
        header
    }

    fn rg_of(path: &Path) -> String {
        let text = std::fs::read_to_string(path).unwrap();
        parse("t", &text).unwrap().header.env.rg
    }

    #[test]
    fn each_append_is_told_its_call_line_across_two_writers_and_rotations() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let bound = header_line(&header()).len() as u64 + 2 * record(1, "x").len() as u64;
        let a = RecordFile::open(&path, header(), bound).unwrap();
        let b = RecordFile::open(&path, header(), bound).unwrap();
        let mut told = Vec::new();
        for writer in [&a, &b, &b, &a, &a] {
            let (n, line) = writer
                .append(|n, line| (record(n, "x"), (n, line)))
                .unwrap();
            told.push((format!("call-{n}-glob"), line));
        }
        let mut recorded = Vec::new();
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            for record in parse("t", &text).unwrap().records {
                recorded.push((record.call.name, record.line));
            }
        }
        recorded.sort();
        told.sort();
        assert_eq!(recorded, told);
        assert!(
            told.iter().all(|(_, line)| [2, 5].contains(line)),
            "{told:?}"
        );
    }

    #[test]
    fn a_server_with_another_rg_rotates_the_recording_at_open_instead_of_mixing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let old = RecordFile::open(&path, header_of("ripgrep 13.0.0"), RECORD_MAX_BYTES).unwrap();
        old.append(|n, _| (record(n, "from rg 13"), n)).unwrap();
        let new = RecordFile::open(&path, header_of("ripgrep 15.2.0"), RECORD_MAX_BYTES).unwrap();
        new.append(|n, _| (record(n, "from rg 15"), n)).unwrap();
        let rotated = dir.path().join("session.1.jsonl");
        assert_eq!(rg_of(&rotated), "ripgrep 13.0.0");
        assert_eq!(parsed(&rotated), ["call-1-glob"]);
        assert_eq!(rg_of(&path), "ripgrep 15.2.0");
        assert_eq!(parsed(&path), ["call-1-glob"]);
    }

    #[test]
    fn a_server_of_another_release_is_refused_the_recording_of_this_one() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let seed = RecordFile::open(&path, header(), RECORD_MAX_BYTES).unwrap();
        seed.append(|n, _| (record(n, "as 0.0.1"), n)).unwrap();
        let mut rc8 = header();
        rc8.contract = fs_search_engine::release::Release::Rc8;
        let err = RecordFile::open(&path, rc8, RECORD_MAX_BYTES)
            .err()
            .unwrap();
        assert!(
            err.to_string().contains(
                "it records calls run as release 0.0.1; this server runs as 0.1.0-rc.8 (record to another file)"
            ),
            "{err}"
        );
        assert_eq!(parsed(&path), ["call-1-glob"]);
    }

    #[test]
    fn two_servers_with_different_rgs_sharing_a_path_never_mix_records_in_one_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let rg13 = RecordFile::open(&path, header_of("ripgrep 13.0.0"), RECORD_MAX_BYTES).unwrap();
        let rg15 = RecordFile::open(&path, header_of("ripgrep 15.2.0"), RECORD_MAX_BYTES).unwrap();
        for _ in 0..3 {
            rg13.append(|n, _| (record(n, "ripgrep 13.0.0"), n))
                .unwrap();
            rg15.append(|n, _| (record(n, "ripgrep 15.2.0"), n))
                .unwrap();
        }
        let mut files = 0;
        for entry in std::fs::read_dir(dir.path()).unwrap() {
            let file = entry.unwrap().path();
            let text = std::fs::read_to_string(&file).unwrap();
            let transcript = parse("t", &text).unwrap();
            for record in &transcript.records {
                assert_eq!(
                    record.outcome.text,
                    transcript.header.env.rg,
                    "{}",
                    file.display()
                );
            }
            files += 1;
        }
        assert!(files >= 2, "the two rgs' records are in {files} file");
    }

    #[test]
    fn a_file_over_the_bound_at_open_is_rotated_whole_and_a_new_one_started() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let old = format!(
            "{}{}{}",
            header_line(&header()),
            record(1, "x"),
            record(2, "y")
        );
        std::fs::write(&path, &old).unwrap();
        let file = RecordFile::open(&path, header(), old.len() as u64 - 1).unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("session.1.jsonl")).unwrap(),
            old
        );
        assert!(parsed(&path).is_empty());
        file.append(|n, _| (record(n, "z"), n)).unwrap();
        assert_eq!(parsed(&path), ["call-1-glob"]);
    }

    #[test]
    fn a_recording_path_that_is_a_symbolic_link_rotates_the_file_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("session.jsonl");
        std::os::unix::fs::symlink("real.jsonl", &link).unwrap();
        let bound = header_line(&header()).len() as u64 + record(1, "x").len() as u64;
        let file = RecordFile::open(&link, header(), bound).unwrap();
        file.append(|n, _| (record(n, "x"), n)).unwrap();
        file.append(|n, _| (record(n, "y"), n)).unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(parsed(&dir.path().join("real.1.jsonl")), ["call-1-glob"]);
        assert_eq!(parsed(&link), ["call-2-glob"]);
    }

    #[test]
    fn a_record_larger_than_the_bound_is_refused_and_nothing_is_appended() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let bound = header_line(&header()).len() as u64 + 200;
        let file = RecordFile::open(&path, header(), bound).unwrap();
        let refused = file.append(|n, _| (record(n, &"x".repeat(500)), n));
        assert!(
            matches!(refused, Err(RecordFileError::TooLarge { .. })),
            "{refused:?}"
        );
        assert!(parsed(&path).is_empty());
        assert!(!dir.path().join("session.1.jsonl").exists());
        file.append(|n, _| (record(n, "small"), n)).unwrap();
        assert_eq!(parsed(&path), ["call-1-glob"]);
    }

    #[test]
    fn a_file_holding_duplicate_names_opens_and_goes_on_after_the_highest_number() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("session.jsonl");
        let old = format!(
            "{}{}{}{}",
            header_line(&header()),
            record(1, "x"),
            record(3, "y"),
            record(1, "z")
        );
        std::fs::write(&path, &old).unwrap();
        let file = RecordFile::open(&path, header(), RECORD_MAX_BYTES).unwrap();
        assert_eq!(file.append(|n, _| (record(n, "w"), n)).unwrap(), 4);
    }

    #[test]
    fn call_numbers_are_read_from_names_and_rotated_names_keep_the_extension() {
        assert_eq!(call_number("call-12-grep"), Some(12));
        assert_eq!(call_number("call-x-grep"), None);
        assert_eq!(
            rotated_name(Path::new("/r/session.jsonl"), 2),
            Path::new("/r/session.2.jsonl")
        );
        assert_eq!(rotated_name(Path::new("/r/rec"), 1), Path::new("/r/rec.1"));
    }
}
