//! Reading rg's stdout while rg still writes it: the sinks that the
//! pipeline hands to [`BashExecutor::run`] ([`RunMode::sink`]), turning each complete
//! line into a grep match or a glob path as it arrives, so the raw output
//! is never held whole (CONTRACT §5.4, §6.4).
//!
//! Each sink gives exactly what `parse.rs` gives for the complete stdout:
//! the capture decodes stdout lossily as UTF-8, and lossy decoding never
//! joins bytes across a `\n` (an ASCII byte is never part of an invalid
//! sequence), so decoding each line on its own yields the same lines; the
//! lines are then read one by one and in order by the same functions.
//!
//! [`BashExecutor::run`]: crate::bash::BashExecutor::run
//! [`RunMode::sink`]: crate::bash::RunMode::sink

use std::borrow::Cow;

use crate::bash::StdoutSink;
use crate::error::SearchError;
use crate::parse::{LastPath, MatchRecord, ParsedMatches, parse_line};
use crate::value::match_list::MatchList;
use crate::value::paths::DisplayMapper;

/// The length of the lossy UTF-8 decoding of a byte stream (what the
/// capture's text would be), counted as the bytes pass by: the output cap
/// applies to that text (§7.2).
#[derive(Default)]
pub(crate) struct TextLen {
    counted: u64,
    /// Bytes after the last `\n` of a chunk that was not all ASCII (an
    /// invalid sequence never spans a `\n`, so a cut after one is exact).
    pending: Vec<u8>,
}

impl TextLen {
    pub(crate) fn write(&mut self, bytes: &[u8]) {
        if self.pending.is_empty() && bytes.is_ascii() {
            self.counted += bytes.len() as u64;
            return;
        }
        let Some(cut) = memchr::memrchr(b'\n', bytes) else {
            self.pending.extend_from_slice(bytes);
            return;
        };
        let (head, tail) = bytes.split_at(cut + 1);
        if self.pending.is_empty() {
            self.counted += lossy_len(head);
        } else {
            self.pending.extend_from_slice(head);
            self.counted += lossy_len(&self.pending);
            self.pending.clear();
        }
        self.pending.extend_from_slice(tail);
    }

    pub(crate) fn total(&self) -> u64 {
        self.counted + lossy_len(&self.pending)
    }
}

fn lossy_len(bytes: &[u8]) -> u64 {
    let len = match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(_) => String::from_utf8_lossy(bytes).len(),
    };
    len as u64
}

/// Splits a byte stream into lines (without the `\n`), holding back an
/// incomplete last line until its end arrives.
#[derive(Default)]
struct Lines {
    carry: Vec<u8>,
}

impl Lines {
    /// Calls `each` with every line that `bytes` completes.
    fn feed(&mut self, mut bytes: &[u8], mut each: impl FnMut(&[u8])) {
        if !self.carry.is_empty() {
            match memchr::memchr(b'\n', bytes) {
                None => {
                    self.carry.extend_from_slice(bytes);
                    return;
                }
                Some(end) => {
                    self.carry.extend_from_slice(&bytes[..end]);
                    each(&self.carry);
                    self.carry.clear();
                    bytes = &bytes[end + 1..];
                }
            }
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', bytes) {
            each(&bytes[start..end]);
            start = end + 1;
        }
        self.carry.extend_from_slice(&bytes[start..]);
    }

    /// The last line, if stdout did not end with `\n`.
    fn finish(self, each: impl FnOnce(&[u8])) {
        each(&self.carry);
    }
}

/// One line as the capture's lossy decoding gives it.
fn decoded(line: &[u8]) -> Cow<'_, str> {
    // Checking first is much faster than the lossy decoder on valid text.
    match std::str::from_utf8(line) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(line),
    }
}

/// `rg --json` stdout into grep matches, as [`crate::parse::parse_grep_matches`].
pub(crate) struct GrepStream {
    lines: Lines,
    read: GrepRead,
}

/// What the grep sink has read so far.
struct GrepRead {
    mapper: DisplayMapper,
    last_path: LastPath,
    matches: MatchList,
    first_violation: Option<usize>,
    /// The first malformed line's error: reading stops there.
    error: Option<SearchError>,
}

impl GrepRead {
    fn line(&mut self, line: &[u8]) {
        if line.is_empty() || self.error.is_some() {
            return;
        }
        match parse_line(line, &self.mapper, &mut self.last_path) {
            Ok(Some(MatchRecord {
                found,
                integral_line_number,
            })) => {
                if !integral_line_number && self.first_violation.is_none() {
                    self.first_violation = Some(self.matches.len());
                }
                self.matches.push(found);
            }
            Ok(None) => {}
            Err(e) => self.error = Some(e),
        }
    }
}

impl GrepStream {
    pub(crate) fn new(workdir: &str) -> Self {
        Self {
            lines: Lines::default(),
            read: GrepRead {
                mapper: DisplayMapper::new(workdir),
                last_path: None,
                matches: MatchList::default(),
                first_violation: None,
                error: None,
            },
        }
    }

    /// The matches of the whole stdout, or its first malformed line's error.
    pub(crate) fn finish(self) -> Result<ParsedMatches, SearchError> {
        let Self { lines, mut read } = self;
        lines.finish(|line| read.line(line));
        if let Some(error) = read.error {
            return Err(error);
        }
        Ok(ParsedMatches {
            schema_violation: read
                .first_violation
                .map(|i| format!("/matches/{i}/lineNumber must be integer")),
            matches: read.matches.finish(),
        })
    }
}

impl StdoutSink for GrepStream {
    fn write(&mut self, bytes: &[u8]) {
        if self.read.error.is_some() {
            return;
        }
        let read = &mut self.read;
        self.lines.feed(bytes, |line| read.line(line));
    }
}

/// `rg --files` stdout into display paths, as [`crate::parse::parse_glob_paths`].
pub(crate) struct GlobStream {
    lines: Lines,
    read: GlobRead,
}

/// What the glob sink has read so far.
struct GlobRead {
    mapper: DisplayMapper,
    paths: Vec<String>,
}

impl GlobRead {
    fn line(&mut self, line: &[u8]) {
        if !line.is_empty() {
            self.paths
                .push(self.mapper.map(&decoded(line)).into_owned());
        }
    }
}

impl GlobStream {
    pub(crate) fn new(workdir: &str) -> Self {
        Self {
            lines: Lines::default(),
            read: GlobRead {
                mapper: DisplayMapper::new(workdir),
                paths: Vec::new(),
            },
        }
    }

    pub(crate) fn finish(self) -> Vec<String> {
        let Self { lines, mut read } = self;
        lines.finish(|line| read.line(line));
        read.paths
    }
}

impl StdoutSink for GlobStream {
    fn write(&mut self, bytes: &[u8]) {
        let read = &mut self.read;
        self.lines.feed(bytes, |line| read.line(line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_glob_paths, parse_grep_matches};
    use proptest::prelude::*;

    fn chunks(bytes: &[u8], cuts: &[prop::sample::Index]) -> Vec<Vec<u8>> {
        let mut at: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        at.sort_unstable();
        let mut out = Vec::new();
        let mut start = 0;
        for end in at {
            out.push(bytes[start..end].to_vec());
            start = end;
        }
        out.push(bytes[start..].to_vec());
        out
    }

    fn line() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            4 => (
                "[a-z/é ]{0,6}",
                0u64..20,
                "[a-zé\\\\\"\u{1}]{0,6}",
                any::<bool>(),
            )
                .prop_map(|(path, n, text, crlf)| {
                    serde_json::json!({"type": "match", "data": {"path": {"text": path},
                        "lines": {"text": format!("{text}{}", if crlf { "\r\n" } else { "\n" })},
                        "line_number": n, "absolute_offset": 0, "submatches": []}})
                    .to_string()
                    .into_bytes()
                }),
            1 => Just(br#"{"type":"begin","data":{"path":{"text":"a"}}}"#.to_vec()),
            1 => Just(br#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":1.5}}"#.to_vec()),
            1 => Just(b"{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"\xc3\"},\"lines\":{\"text\":\"\xff\xe9x\"},\"line_number\":2}}".to_vec()),
            1 => prop::collection::vec(any::<u8>(), 0..12),
            1 => Just(b"/w/d/\xe9\xa9.rs".to_vec()),
            // rg's own layouts with a stray non-UTF-8 byte anywhere: in a
            // kept string, a skipped one, a key or the structure.
            3 => (
                prop_oneof![
                    Just(br#"{"type":"match","data":{"path":{"text":"d/a.rs"},"lines":{"text":"x \"q\"\t\n"},"line_number":3,"absolute_offset":9,"submatches":[{"match":{"text":"q"},"start":3,"end":4}]}}"#.to_vec()),
                    Just(br#"{"type":"match","data":{"path":{"text":"d/a.rs"},"lines":{"text":"tail\r\n"},"line_number":4,"absolute_offset":9,"submatches":[]}}"#.to_vec()),
                    Just(br#"{"type":"end","data":{"path":{"text":"d/a.rs"},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":1,"human":"0.1s"},"searches":1,"searches_with_match":1,"bytes_searched":2,"bytes_printed":3,"matched_lines":4,"matches":5}}}"#.to_vec()),
                ],
                any::<prop::sample::Index>(),
                prop::sample::select(vec![0x80u8, 0xa9, 0xc3, 0xe9, 0xf0, 0xff]),
            )
                .prop_map(|(mut line, at, byte)| {
                    let at = at.index(line.len());
                    line.insert(at, byte);
                    line
                }),
        ]
    }

    proptest! {
        /// Any stdout, cut into any chunks, reads as the whole stdout reads.
        #[test]
        fn a_stream_in_chunks_reads_as_the_whole_output(
            lines in prop::collection::vec(line(), 0..10),
            end_newline in any::<bool>(),
            cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6),
        ) {
            let mut stdout = lines.join(&b'\n');
            if end_newline {
                stdout.push(b'\n');
            }
            let whole = String::from_utf8_lossy(&stdout).into_owned();
            let mut grep = GrepStream::new("/w");
            let mut glob = GlobStream::new("/w");
            let mut len = TextLen::default();
            for chunk in chunks(&stdout, &cuts) {
                grep.write(&chunk);
                glob.write(&chunk);
                len.write(&chunk);
            }
            prop_assert_eq!(len.total(), whole.len() as u64);
            let streamed = grep.finish();
            let parsed = parse_grep_matches(&whole, "/w");
            prop_assert_eq!(
                streamed.as_ref().map(|p| (&p.matches, &p.schema_violation)),
                parsed.as_ref().map(|p| (&p.matches, &p.schema_violation))
            );
            prop_assert_eq!(glob.finish(), parse_glob_paths(&whole, "/w"));
        }
    }
}
