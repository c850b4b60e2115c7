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

use std::borrow::Borrow;
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
    block: String,
}

impl BlockWriter {
    /// Whether `text` fits the block being filled; when it does not, the
    /// caller seals the block first.
    pub(crate) fn fits(&self, text: &str) -> bool {
        self.block.len() + text.len() <= self.block.capacity()
    }

    /// Appends `text` to the block being filled (which grows when `text`
    /// does not fit: call [`BlockWriter::fits`] first).
    pub(crate) fn write(&mut self, text: &str) -> Written {
        if self.block.capacity() == 0 {
            self.block.reserve_exact(BLOCK_BYTES.max(text.len()));
        }
        let start = self.block.len();
        self.block.push_str(text);
        Written {
            start,
            end: self.block.len(),
        }
    }

    /// Ends the block being filled: `line` turns each of its [`Written`]
    /// ranges into a [`Line`]. The next write starts a new block. A block
    /// less than half full (the last of a run) gives back what it does not
    /// use.
    pub(crate) fn seal(&mut self) -> Sealed {
        let mut block = std::mem::take(&mut self.block);
        if block.len() < block.capacity() / 2 {
            block.shrink_to_fit();
        }
        Sealed(Arc::new(block))
    }
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

    #[test]
    fn written_lines_read_back_from_their_sealed_block() {
        let mut writer = BlockWriter::default();
        let a = writer.write("first line");
        let b = writer.write("é ünïcode");
        let c = writer.write("");
        let sealed = writer.seal();
        assert_eq!(sealed.line(a), "first line");
        assert_eq!(sealed.line(b), "é ünïcode");
        assert_eq!(sealed.line(c), "");
        assert!(Arc::ptr_eq(&sealed.line(a).block, &sealed.line(b).block));
    }

    #[test]
    fn a_block_is_full_at_its_size_and_a_longer_line_gets_its_own() {
        let mut writer = BlockWriter::default();
        writer.write(&"x".repeat(BLOCK_BYTES - 1));
        assert!(writer.fits("y"));
        assert!(!writer.fits("yz"));
        writer.seal();
        let long = "z".repeat(BLOCK_BYTES + 10);
        let at = writer.write(&long);
        assert_eq!(writer.seal().line(at).as_str(), long);
    }

    #[test]
    fn a_line_behaves_as_the_string_it_replaces() {
        let mut writer = BlockWriter::default();
        writer.write("before");
        let at = writer.write("a \"quoted\"\tline");
        let line = writer.seal().line(at);
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
