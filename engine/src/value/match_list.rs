//! Collecting grep matches as they are read: each match's line is packed
//! into a shared block ([`crate::value::line`]) and the match completed when its
//! block is sealed, so reading allocates per block, not per match.

use std::sync::Arc;

use crate::value::GrepMatch;
use crate::value::line::{BlockWriter, ReadLine, Written};

/// A match as a parser reads it: its line still borrowed from the record
/// where it can be.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct ReadMatch<'a> {
    pub path: Arc<str>,
    pub line_number: i64,
    pub line: ReadLine<'a>,
}

impl ReadMatch<'_> {
    /// The same match, owning its line.
    pub(crate) fn into_owned(self) -> ReadMatch<'static> {
        ReadMatch {
            path: self.path,
            line_number: self.line_number,
            line: self.line.into_owned(),
        }
    }
}

/// A match whose line waits for its block to be sealed.
struct Pending {
    path: Arc<str>,
    line_number: i64,
    line: Written,
}

/// The matches read so far, in order.
#[derive(Default)]
pub(crate) struct MatchList {
    done: Vec<GrepMatch>,
    pending: Vec<Pending>,
    writer: BlockWriter,
}

impl MatchList {
    /// How many matches were pushed.
    pub(crate) fn len(&self) -> usize {
        self.done.len() + self.pending.len()
    }

    pub(crate) fn push(&mut self, found: ReadMatch<'_>) {
        if !self.writer.fits(&found.line) {
            self.seal();
        }
        let line = self.writer.write(&found.line);
        self.pending.push(Pending {
            path: found.path,
            line_number: found.line_number,
            line,
        });
    }

    /// Every match pushed, in order.
    pub(crate) fn finish(mut self) -> Vec<GrepMatch> {
        self.seal();
        self.done
    }

    fn seal(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let sealed = self.writer.seal(&mut self.pending, |p| &mut p.line);
        self.done.reserve(self.pending.len());
        self.done.extend(self.pending.drain(..).map(|p| GrepMatch {
            path: p.path,
            line_number: p.line_number,
            line: sealed.line(p.line),
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::line::BLOCK_BYTES;

    fn read<'a>(path: &Arc<str>, n: i64, line: &'a str) -> ReadMatch<'a> {
        ReadMatch {
            path: path.clone(),
            line_number: n,
            line: ReadLine::Bytes(line.as_bytes().into()),
        }
    }

    #[test]
    fn matches_come_out_in_order_across_blocks() {
        let path: Arc<str> = "src/a.rs".into();
        let mut list = MatchList::default();
        let long = "x".repeat(BLOCK_BYTES / 3);
        let mut expected = Vec::new();
        for n in 1..=10 {
            let line = format!("{n}{long}");
            list.push(read(&path, n, &line));
            expected.push((n, line));
            assert_eq!(list.len(), n as usize);
        }
        list.push(read(&path, 11, ""));
        expected.push((11, String::new()));
        let got: Vec<(i64, String)> = list
            .finish()
            .into_iter()
            .map(|m| (m.line_number, m.line.to_string()))
            .collect();
        assert_eq!(got, expected);
    }
}
