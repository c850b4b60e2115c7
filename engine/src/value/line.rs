//! A matched line's text, [`Line`], and the writer that packs the lines of
//! one rg run into a few large shared blocks.
//!
//! A grep can return tens of thousands of matches. With one `String` each,
//! reading them costs an allocation per match, and a thread's allocator
//! then grows its heap a page at a time (a system call per page); freeing
//! them costs as much again. A [`Line`] is instead a range of a block
//! shared by the lines read around it: one allocation per block of
//! [`BLOCK_BYTES`], none per line. It reads, compares, hashes, prints and
//! serialises exactly as the `String` it replaces.
//!
//! A line a reader copies verbatim from rg's output ([`ReadLine::Bytes`])
//! is not checked as UTF-8 on its own: checking a few dozen bytes at a time
//! costs several times what checking a whole block does. A block is
//! checked once when it is sealed; should it not be UTF-8, or a line not
//! start and end on a character boundary, each of its lines becomes its
//! own lossy decoding, exactly what checking line by line gives.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The size a block of lines is allocated with (a longer line gets a block
/// of its own length).
pub(crate) const BLOCK_BYTES: usize = 256 * 1024;

/// A matched line, without its line terminator: a `str` that may share its
/// memory with other lines of the same result. Cloning is cheap; keeping
/// a line keeps its whole block (up to 256 KiB) alive, so a host
/// that keeps a few lines of a large result for long should copy them
/// (`line.to_owned()`).
#[derive(Clone, Default)]
pub struct Line {
    block: Arc<String>,
    start: usize,
    end: usize,
}

impl Line {
    /// The line's text.
    pub fn as_str(&self) -> &str {
        // `start..end` is a range of whole characters of `block`, as
        // `BlockWriter` recorded it, so `get` always answers.
        self.block.get(self.start..self.end).unwrap_or_default()
    }
}

impl Deref for Line {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Line {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for Line {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<String> for Line {
    fn from(text: String) -> Self {
        Self {
            end: text.len(),
            block: Arc::new(text),
            start: 0,
        }
    }
}

impl From<&str> for Line {
    fn from(text: &str) -> Self {
        Self::from(text.to_owned())
    }
}

impl From<Line> for String {
    fn from(line: Line) -> Self {
        line.as_str().to_owned()
    }
}

impl fmt::Debug for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for Line {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for Line {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for Line {}

impl PartialEq<str> for Line {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Line {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Line {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Hash for Line {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl Serialize for Line {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Line {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer).map(Self::from)
    }
}

/// A match's line as a reader hands it over.
#[derive(Debug, Clone)]
pub(crate) enum ReadLine<'a> {
    /// The line's text.
    Text(Cow<'a, str>),
    /// Bytes whose lossy UTF-8 decoding is the line, checked with their
    /// block.
    Bytes(Cow<'a, [u8]>),
}

impl ReadLine<'_> {
    /// The line's text.
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            Self::Text(text) => Cow::Borrowed(text),
            Self::Bytes(bytes) => String::from_utf8_lossy(bytes),
        }
    }

    fn as_bytes(&self) -> &[u8] {
        match self {
            Self::Text(text) => text.as_bytes(),
            Self::Bytes(bytes) => bytes,
        }
    }

    /// The same line, owning its text.
    pub(crate) fn into_owned(self) -> ReadLine<'static> {
        ReadLine::Text(Cow::Owned(self.text().into_owned()))
    }
}

/// Lines are equal when their texts are.
impl PartialEq for ReadLine<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl Eq for ReadLine<'_> {}

impl<'a> From<&'a str> for ReadLine<'a> {
    fn from(text: &'a str) -> Self {
        Self::Text(Cow::Borrowed(text))
    }
}

/// Where a written line sits in the block being filled.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Written {
    start: usize,
    end: usize,
}

/// Packs lines into blocks. Lines written since the last [`seal`] become
/// readable [`Line`]s once it is sealed.
///
/// [`seal`]: BlockWriter::seal
#[derive(Default)]
pub(crate) struct BlockWriter {
    block: Vec<u8>,
}

impl BlockWriter {
    /// Whether `line` fits the block being filled; when it does not, the
    /// caller seals the block first.
    pub(crate) fn fits(&self, line: &ReadLine<'_>) -> bool {
        self.block.len() + line.as_bytes().len() <= self.block.capacity()
    }

    /// Appends `line` to the block being filled (which grows when `line`
    /// does not fit: call [`BlockWriter::fits`] first).
    pub(crate) fn write(&mut self, line: &ReadLine<'_>) -> Written {
        let bytes = line.as_bytes();
        if self.block.capacity() == 0 {
            self.block.reserve_exact(BLOCK_BYTES.max(bytes.len()));
        }
        let start = self.block.len();
        self.block.extend_from_slice(bytes);
        Written {
            start,
            end: self.block.len(),
        }
    }

    /// Ends the block being filled, whose lines are `lines` (every line
    /// written since the last seal, in order; `written` finds each one's
    /// range, which a lossy rewrite updates): [`Sealed::line`] turns each
    /// range into a [`Line`]. The next write starts a new block. A block
    /// less than half full (the last of a run) gives back what it does not
    /// use.
    pub(crate) fn seal<T>(
        &mut self,
        lines: &mut [T],
        written: impl Fn(&mut T) -> &mut Written,
    ) -> Sealed {
        let mut block = std::mem::take(&mut self.block);
        if block.len() < block.capacity() / 2 {
            block.shrink_to_fit();
        }
        let text = match String::from_utf8(block) {
            Ok(text) if on_character_boundaries(&text, lines, &written) => text,
            Ok(text) => each_line_lossy(text.as_bytes(), lines, &written),
            Err(e) => each_line_lossy(e.as_bytes(), lines, &written),
        };
        Sealed(Arc::new(text))
    }
}

/// Whether every line of `lines` starts and ends on a character boundary
/// of `text`.
fn on_character_boundaries<T>(
    text: &str,
    lines: &mut [T],
    written: impl Fn(&mut T) -> &mut Written,
) -> bool {
    lines.iter_mut().all(|line| {
        let at = written(line);
        text.is_char_boundary(at.start) && text.is_char_boundary(at.end)
    })
}

/// The lossy decoding of each line of `block`, one after the other; each
/// line's range moves to where its decoding is.
fn each_line_lossy<T>(
    block: &[u8],
    lines: &mut [T],
    written: impl Fn(&mut T) -> &mut Written,
) -> String {
    let mut text = String::with_capacity(block.len());
    for line in lines {
        let at = written(line);
        let start = text.len();
        text.push_str(&String::from_utf8_lossy(
            block.get(at.start..at.end).unwrap_or_default(),
        ));
        *at = Written {
            start,
            end: text.len(),
        };
    }
    text
}

/// A filled block, shared by its lines.
pub(crate) struct Sealed(Arc<String>);

impl Sealed {
    /// The line written at `at`.
    pub(crate) fn line(&self, at: Written) -> Line {
        Line {
            block: Arc::clone(&self.0),
            start: at.start,
            end: at.end,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `lines` into one block and seals it.
    fn sealed(lines: &[ReadLine<'_>]) -> (Sealed, Vec<Written>) {
        let mut writer = BlockWriter::default();
        let mut at: Vec<Written> = lines.iter().map(|line| writer.write(line)).collect();
        (writer.seal(&mut at, |w| w), at)
    }

    #[test]
    fn written_lines_read_back_from_their_sealed_block() {
        let lines = ["first line", "é ünïcode", ""].map(ReadLine::from);
        let (sealed, at) = sealed(&lines);
        let [a, b, c] = [at[0], at[1], at[2]];
        assert_eq!(sealed.line(a), "first line");
        assert_eq!(sealed.line(b), "é ünïcode");
        assert_eq!(sealed.line(c), "");
        assert!(Arc::ptr_eq(&sealed.line(a).block, &sealed.line(b).block));
    }

    #[test]
    fn a_block_is_full_at_its_size_and_a_longer_line_gets_its_own() {
        let mut writer = BlockWriter::default();
        let mut at = [writer.write(&ReadLine::from(&*"x".repeat(BLOCK_BYTES - 1)))];
        assert!(writer.fits(&ReadLine::from("y")));
        assert!(!writer.fits(&ReadLine::Bytes(Cow::Borrowed(b"yz"))));
        writer.seal(&mut at, |w| w);
        let long = "z".repeat(BLOCK_BYTES + 10);
        let mut at = [writer.write(&ReadLine::from(&*long))];
        assert_eq!(writer.seal(&mut at, |w| w).line(at[0]).as_str(), long);
    }

    /// Bytes lines of a block read as checking each line on its own
    /// would: whether the block is UTF-8 or not, and when bytes that are
    /// not UTF-8 on their own join into a valid block.
    #[test]
    fn bytes_lines_read_as_their_own_lossy_decoding() {
        let cases: [&[&[u8]]; 4] = [
            &[b"plain", "é ü".as_bytes(), b""],
            &[b"ok", b"bad \xff byte", b"\xe2\x82 cut", b"after"],
            // "é" split over two lines: the block is UTF-8, the lines not.
            &[b"a\xc3", b"\xa9b", b"c"],
            &[b"\xf0\x9f", b"\x98\x80"],
        ];
        for bytes in cases {
            let mut lines: Vec<ReadLine<'_>> = bytes
                .iter()
                .map(|b| ReadLine::Bytes(Cow::Borrowed(b)))
                .collect();
            lines.push(ReadLine::from("text ✓"));
            let (sealed, at) = sealed(&lines);
            for (line, at) in lines.iter().zip(at) {
                assert_eq!(sealed.line(at).as_str(), line.text(), "{bytes:?}");
            }
        }
    }

    #[test]
    fn a_line_behaves_as_the_string_it_replaces() {
        let (sealed, at) = sealed(&["before", "a \"quoted\"\tline"].map(ReadLine::from));
        let line = sealed.line(at[1]);
        let owned = Line::from("a \"quoted\"\tline".to_owned());
        assert_eq!(line, owned);
        assert_eq!(format!("{line:?}"), format!("{:?}", "a \"quoted\"\tline"));
        assert_eq!(line.to_string(), "a \"quoted\"\tline");
        assert_eq!(
            serde_json::to_string(&line).ok(),
            serde_json::to_string("a \"quoted\"\tline").ok()
        );
        let back: Result<Line, _> = serde_json::from_str(r#""a \"quoted\"\tline""#);
        assert_eq!(back.ok(), Some(owned));
        let hash = |s: &dyn Fn(&mut std::collections::hash_map::DefaultHasher)| {
            let mut h = std::collections::hash_map::DefaultHasher::new();
            s(&mut h);
            h.finish()
        };
        assert_eq!(
            hash(&|h| line.hash(h)),
            hash(&|h| "a \"quoted\"\tline".hash(h))
        );
    }
}
