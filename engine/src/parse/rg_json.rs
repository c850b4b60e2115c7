//! A dedicated reader for the records of `rg --json`: one pass over a
//! record line, no intermediate values, and no allocation unless a string
//! needs unescaping (CONTRACT §6.4).
//!
//! It is an accelerator for `parse.rs`, not a second parser: it answers
//! only for records it can read with certainty and returns `None` for
//! anything else, which `parse.rs` then reads with serde_json exactly as
//! before. What it accepts:
//!
//! - a line that is one JSON object (first byte `{`, only JSON whitespace
//!   after it), nested at most [`MAX_DEPTH`] deep, with serde_json's
//!   syntax rules for skipped values (the same string escapes, control
//!   characters, numbers and literals; `\u` escapes of skipped strings are
//!   not checked for surrogates, as serde_json's `ignore_str` does not);
//! - whose top-level keys and, for a match, `data` keys contain no escape
//!   (an escaped key could spell `type`), with `type` and `data` (and
//!   `path`, `lines`, `line_number`) at most once each (`parse.rs`'s
//!   checked path reads duplicates as "last wins");
//! - a `type` that is not a string, or a string without escapes.
//!
//! A match must further have `path` and `lines` of the exact form
//! `{"text": …}` or `{"bytes": …}` (one member), and a `line_number` of
//! plain decimal digits that fits an `i64`. A decoded string with a lone
//! surrogate, a path `bytes` that is not valid base64, and every other
//! shape go back to serde_json, so errors are always serde_json's own.
//!
//! Lone surrogates, as serde_json 1.0.154 treats them: a skipped value
//! (a raw value, an unknown field) only needs four hex digits after `\u`,
//! so a record with `"\ud800"` in, say, `submatches` is read normally;
//! decoding into a `str` refuses a lone trailing surrogate, a leading one
//! not followed by `\u`, and a leading one followed by a `\u` that is not
//! a trailing surrogate. `parse.rs` then reports a `path.text` it cannot
//! decode as "a match record has no path text" (unless `path.bytes` is
//! usable), and a `lines.text` as the non-UTF-8 placeholder when
//! `lines.bytes` is a string, else as "a match record has neither line
//! text nor bytes". A test pins these outcomes.

use std::borrow::Cow;

use base64::Engine as _;

use crate::value::line::ReadLine;

/// How deep a record may nest before the reader hands it back.
const MAX_DEPTH: u32 = 64;

/// A record read with certainty.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Record<'a> {
    /// A well-formed record whose `type` is not `"match"`.
    Other,
    Match(Found<'a>),
}

/// The parts of a match record the contract uses.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Found<'a> {
    pub path: FoundPath<'a>,
    pub line_number: i64,
    /// `lines.text` without one trailing `\r\n` or `\n`; `None` for
    /// `lines.bytes` (a line that is not valid UTF-8).
    pub line: Option<ReadLine<'a>>,
}

/// A match's path: the decoded `path.text`, or the lossy text of
/// `path.bytes`.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FoundPath<'a> {
    /// A `path.text` without escapes, still undecoded (rg repeats a file's
    /// path in each of its matches; a caller comparing these bytes with the
    /// previous path decodes each path once).
    Plain(&'a [u8]),
    Decoded(Cow<'a, str>),
}

impl FoundPath<'_> {
    pub(crate) fn text(&self) -> Cow<'_, str> {
        match self {
            Self::Plain(bytes) => lossy(bytes),
            Self::Decoded(text) => Cow::Borrowed(text),
        }
    }
}

/// Reads one record line (raw bytes, read as their lossy UTF-8 decoding
/// would be); `None` sends the decoded line to serde_json. `known` is the
/// previous match's path when it is plain string content (no `"`, `\` or
/// control byte): a match record repeating it is recognised without
/// scanning the path again.
pub(crate) fn read_record<'a>(line: &'a [u8], known: Option<&[u8]>) -> Option<Record<'a>> {
    if let Some(found) = canonical_match(line, known) {
        return Some(Record::Match(found));
    }
    if canonical_other(line).is_some() {
        return Some(Record::Other);
    }
    general_record(line)
}

const BEGIN_HEAD: &[u8] = br#"{"type":"begin","data":{"path":{"text":"#;
const END_HEAD: &[u8] = br#"{"type":"end","data":{"path":{"text":"#;

/// The `end` record's fields after `path`, as rg prints them: each key is
/// followed by a number, except `human` (a string).
const END_FIELDS: [&[u8]; 9] = [
    br#","stats":{"elapsed":{"secs":"#,
    br#","nanos":"#,
    br#","human":"#,
    br#"},"searches":"#,
    br#","searches_with_match":"#,
    br#","bytes_searched":"#,
    br#","bytes_printed":"#,
    br#","matched_lines":"#,
    br#","matches":"#,
];

/// A `begin` or `end` record laid out exactly as rg prints it, checked
/// like [`canonical_match`]; `Some` means [`Record::Other`].
fn canonical_other(line: &[u8]) -> Option<()> {
    let head = if line.starts_with(BEGIN_HEAD) {
        BEGIN_HEAD
    } else if line.starts_with(END_HEAD) {
        END_HEAD
    } else {
        return None;
    };
    let mut r = Reader {
        bytes: line,
        at: head.len(),
    };
    r.string()?;
    if head == END_HEAD {
        r.literal(br#"},"binary_offset":"#)?;
        if r.literal(b"null").is_none() {
            r.number()?;
        }
        for field in END_FIELDS {
            r.slice_literal(field)?;
            if field == br#","human":"# {
                r.string()?;
            } else {
                r.number()?;
            }
        }
    }
    r.literal(b"}}}")?;
    (r.at == r.bytes.len()).then_some(())
}

/// How rg 13 starts a match record whose path is text.
const MATCH_HEAD: &[u8; 39] = br#"{"type":"match","data":{"path":{"text":"#;

/// A match record laid out exactly as rg prints it (no whitespace; keys in
/// rg's order; submatches of text), read by comparing the fixed parts and
/// scanning only the values. Anything else is left to [`general_record`],
/// which reads every such line the same way.
fn canonical_match<'a>(line: &'a [u8], known: Option<&[u8]>) -> Option<Found<'a>> {
    let mut r = Reader { bytes: line, at: 0 };
    r.literal(MATCH_HEAD)?;
    let path = match r.known_string(known) {
        Some(path) => path,
        None => r.string()?,
    };
    r.literal(br#"},"lines":{"#)?;
    let lines_are_text = match r.literal(br#""text":"#) {
        Some(()) => true,
        None => {
            r.literal(br#""bytes":"#)?;
            false
        }
    };
    let lines = r.string()?;
    r.literal(br#"},"line_number":"#)?;
    let line_number = r.number()?;
    r.literal(br#","absolute_offset":"#)?;
    r.number()?;
    r.literal(br#","submatches":["#)?;
    if r.peek() != Some(b']') {
        loop {
            r.literal(br#"{"match":{"text":"#)?;
            r.string()?;
            r.literal(br#"},"start":"#)?;
            r.number()?;
            r.literal(br#","end":"#)?;
            r.number()?;
            r.literal(b"}")?;
            if r.peek() != Some(b',') {
                break;
            }
            r.at += 1;
        }
    }
    r.literal(b"]}}")?;
    if r.at != r.bytes.len() {
        return None;
    }
    found((true, path), (lines_are_text, lines), line_number)
}

/// Any record line within the limits of the module documentation.
fn general_record(line: &[u8]) -> Option<Record<'_>> {
    let mut r = Reader { bytes: line, at: 0 };
    if r.peek() != Some(b'{') {
        return None;
    }
    r.at += 1;
    let mut is_match: Option<bool> = None;
    let mut data_at: Option<usize> = None;
    let mut found: Option<Found<'_>> = None;
    let mut first = true;
    loop {
        r.ws();
        if first && r.peek() == Some(b'}') {
            r.at += 1;
            break;
        }
        first = false;
        let key = r.key()?;
        match key {
            b"type" => {
                if is_match.is_some() {
                    return None;
                }
                is_match = Some(if r.peek() == Some(b'"') {
                    let s = r.string()?;
                    if s.escape.is_some() {
                        return None;
                    }
                    s.content == b"match"
                } else {
                    r.skip_value(1)?;
                    false
                });
            }
            b"data" => {
                if data_at.is_some() {
                    return None;
                }
                data_at = Some(r.at);
                if is_match == Some(true) {
                    found = Some(r.match_data()?);
                } else {
                    r.skip_value(1)?;
                }
            }
            _ => r.skip_value(1)?,
        }
        r.ws();
        match r.next()? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    r.ws();
    if r.at != r.bytes.len() {
        return None;
    }
    if is_match != Some(true) {
        return Some(Record::Other);
    }
    match found {
        Some(found) => Some(Record::Match(found)),
        // `data` came before `type`: read it again as match data.
        None => {
            let mut again = Reader { at: data_at?, ..r };
            again.match_data().map(Record::Match)
        }
    }
}

/// A string's raw content (between the quotes) and where its first escape
/// is, if it has any.
struct RawStr<'a> {
    content: &'a [u8],
    escape: Option<usize>,
}

/// A position in one record line. The line is raw bytes that may not be
/// UTF-8: it is read as its lossy decoding would be (which only ever
/// replaces non-ASCII bytes, so the JSON structure is the same), and only
/// the strings that are kept are decoded.
#[derive(Clone, Copy)]
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

/// Bytes that end a run of plain string content: `"`, `\` and controls.
fn is_special(b: u8) -> bool {
    b == b'"' || b == b'\\' || b < 0x20
}

/// The index of the first special byte among the 8 bytes of `w` (read
/// little-endian), if any. Each zero-byte test can flag bytes above a true
/// hit (the borrow propagates upwards), never below one, so the lowest
/// flagged byte is exact.
fn first_special(w: u64) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let quote = w ^ (ONES * u64::from(b'"'));
    let backslash = w ^ (ONES * u64::from(b'\\'));
    let zero_quote = quote.wrapping_sub(ONES) & !quote;
    let zero_backslash = backslash.wrapping_sub(ONES) & !backslash;
    let control = w.wrapping_sub(ONES * 0x20) & !w;
    let flagged = (zero_quote | zero_backslash | control) & HIGHS;
    (flagged != 0).then(|| (flagged.trailing_zeros() / 8) as usize)
}

impl<'a> Reader<'a> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.at).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.at += 1;
        Some(b)
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\r' | b'\n') = self.peek() {
            self.at += 1;
        }
    }

    fn expect(&mut self, b: u8) -> Option<()> {
        self.ws();
        (self.next()? == b).then_some(())
    }

    /// An object key without escapes and its `:`; the reader is left at
    /// the value.
    fn key(&mut self) -> Option<&'a [u8]> {
        let key = self.string()?;
        if key.escape.is_some() {
            return None;
        }
        self.expect(b':')?;
        self.ws();
        Some(key.content)
    }

    /// The index of the next special byte at or after `from`.
    fn special_from(&self, mut from: usize) -> Option<usize> {
        while let Some(chunk) = self.bytes.get(from..from + 8) {
            let word: [u8; 8] = chunk.try_into().ok()?;
            if let Some(at) = first_special(u64::from_le_bytes(word)) {
                return Some(from + at);
            }
            from += 8;
        }
        while from < self.bytes.len() {
            if is_special(self.bytes[from]) {
                return Some(from);
            }
            from += 1;
        }
        None
    }

    /// A string at the reader (which must be at its `"`), checked as
    /// serde_json's `ignore_str` checks it.
    fn string(&mut self) -> Option<RawStr<'a>> {
        if self.next()? != b'"' {
            return None;
        }
        let start = self.at;
        let mut escape = None;
        let mut at = start;
        loop {
            at = self.special_from(at)?;
            match self.bytes[at] {
                b'"' => break,
                b'\\' => {
                    escape = escape.or(Some(at - start));
                    match self.bytes.get(at + 1)? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => at += 2,
                        b'u' => {
                            hex4(self.bytes.get(at + 2..at + 6)?)?;
                            at += 6;
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
        }
        self.at = at + 1;
        Some(RawStr {
            content: self.bytes.get(start..at)?,
            escape,
        })
    }

    /// The string at the reader when its content is exactly `known`, plain
    /// string content: what [`Reader::string`] would read (the first
    /// special byte after the opening quote is the closing one), without
    /// scanning. `None`, the reader unmoved, otherwise.
    fn known_string(&mut self, known: Option<&[u8]>) -> Option<RawStr<'a>> {
        let known = known?;
        let start = self.at.checked_add(1)?;
        let end = start.checked_add(known.len())?;
        let repeated = self.bytes.get(self.at) == Some(&b'"')
            && self.bytes.get(start..end) == Some(known)
            && self.bytes.get(end) == Some(&b'"');
        if !repeated {
            return None;
        }
        self.at = end + 1;
        Some(RawStr {
            content: self.bytes.get(start..end)?,
            escape: None,
        })
    }

    /// A number checked to JSON's grammar; returns its text.
    fn number(&mut self) -> Option<&'a [u8]> {
        let bytes = self.bytes;
        let start = self.at;
        // What rg prints: a plain integer with no fraction or exponent.
        let rest = bytes.get(start..)?;
        let digits = rest
            .iter()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(rest.len());
        let plain = digits == 1 || (digits > 1 && rest[0] != b'0');
        if plain && !matches!(rest.get(digits), Some(b'.' | b'e' | b'E')) {
            self.at = start + digits;
            return rest.get(..digits);
        }
        let digits_from = |at: usize| {
            at + bytes.get(at..).map_or(0, |rest| {
                rest.iter().take_while(|b| b.is_ascii_digit()).count()
            })
        };
        let mut at = start + usize::from(bytes.get(start) == Some(&b'-'));
        at = match bytes.get(at)? {
            b'0' => at + 1,
            b'1'..=b'9' => digits_from(at + 1),
            _ => return None,
        };
        if bytes.get(at) == Some(&b'.') {
            let end = digits_from(at + 1);
            if end == at + 1 {
                return None;
            }
            at = end;
        }
        if let Some(b'e' | b'E') = bytes.get(at) {
            at += 1;
            if let Some(b'+' | b'-') = bytes.get(at) {
                at += 1;
            }
            let end = digits_from(at);
            if end == at {
                return None;
            }
            at = end;
        }
        self.at = at;
        self.bytes.get(start..at)
    }

    /// Consumes `word` if the bytes at the reader are `word`. A fixed-size
    /// comparison, which the compiler expands inline.
    fn literal<const N: usize>(&mut self, word: &[u8; N]) -> Option<()> {
        let end = self.at.checked_add(N)?;
        let here: &[u8; N] = self.bytes.get(self.at..end)?.try_into().ok()?;
        (here == word).then(|| self.at = end)
    }

    fn slice_literal(&mut self, word: &[u8]) -> Option<()> {
        let end = self.at.checked_add(word.len())?;
        (self.bytes.get(self.at..end)? == word).then(|| self.at = end)
    }

    /// Skips one value at the reader, checking its syntax.
    fn skip_value(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'"' => self.string().map(|_| ()),
            b'-' | b'0'..=b'9' => self.number().map(|_| ()),
            b't' => self.literal(b"true"),
            b'f' => self.literal(b"false"),
            b'n' => self.literal(b"null"),
            open @ (b'{' | b'[') => {
                if depth >= MAX_DEPTH {
                    return None;
                }
                self.at += 1;
                let close = if open == b'{' { b'}' } else { b']' };
                self.ws();
                if self.peek() == Some(close) {
                    self.at += 1;
                    return Some(());
                }
                loop {
                    self.ws();
                    if open == b'{' {
                        if self.peek() != Some(b'"') {
                            return None;
                        }
                        self.string()?;
                        self.expect(b':')?;
                        self.ws();
                    }
                    self.skip_value(depth + 1)?;
                    self.ws();
                    match self.next()? {
                        b',' => {}
                        b if b == close => return Some(()),
                        _ => return None,
                    }
                }
            }
            _ => None,
        }
    }

    /// `{"text": <string>}` or `{"bytes": <string>}`: (is text, string).
    fn text_or_bytes(&mut self) -> Option<(bool, RawStr<'a>)> {
        if self.next()? != b'{' {
            return None;
        }
        self.ws();
        if self.peek() != Some(b'"') {
            return None;
        }
        let is_text = match self.key()? {
            b"text" => true,
            b"bytes" => false,
            _ => return None,
        };
        if self.peek() != Some(b'"') {
            return None;
        }
        let value = self.string()?;
        self.expect(b'}')?;
        Some((is_text, value))
    }

    /// The `data` object of a match record.
    fn match_data(&mut self) -> Option<Found<'a>> {
        if self.next()? != b'{' {
            return None;
        }
        let mut path = None;
        let mut lines = None;
        let mut line_number = None;
        loop {
            self.ws();
            if self.peek() != Some(b'"') {
                return None;
            }
            match self.key()? {
                b"path" if path.is_none() => path = Some(self.text_or_bytes()?),
                b"lines" if lines.is_none() => lines = Some(self.text_or_bytes()?),
                b"line_number" if line_number.is_none() => line_number = Some(self.number()?),
                b"path" | b"lines" | b"line_number" => return None,
                _ => self.skip_value(2)?,
            }
            self.ws();
            match self.next()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
        found(path?, lines?, line_number?)
    }
}

/// A match from its `path` and `lines` (each: is text, string) and the
/// text of its `line_number`, which must be plain digits fitting an `i64`.
fn found<'a>(
    path: (bool, RawStr<'a>),
    lines: (bool, RawStr<'a>),
    line_number: &[u8],
) -> Option<Found<'a>> {
    if line_number.len() > 18 || !line_number.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let line_number = line_number
        .iter()
        .fold(0i64, |n, d| n * 10 + i64::from(d - b'0'));
    let path = match path {
        (true, text) if text.escape.is_none() => FoundPath::Plain(text.content),
        (true, text) => FoundPath::Decoded(decode(&text)?),
        (false, bytes) => {
            let encoded = decode(&bytes)?;
            let raw = base64::engine::general_purpose::STANDARD
                .decode(encoded.as_bytes())
                .ok()?;
            FoundPath::Decoded(Cow::Owned(String::from_utf8_lossy(&raw).into_owned()))
        }
    };
    let line = match lines {
        (true, text) => Some(line_text(&text)?),
        (false, _) => None,
    };
    Some(Found {
        path,
        line_number,
        line,
    })
}

/// Bytes as the lossy UTF-8 decoding of the whole line has them.
fn lossy(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(text) => Cow::Borrowed(text),
        Err(_) => String::from_utf8_lossy(bytes),
    }
}

/// The value of four hex digits.
fn hex4(digits: &[u8]) -> Option<u16> {
    let mut n: u16 = 0;
    for &d in digits {
        let v = char::from(d).to_digit(16)?;
        n = (n << 4) | v as u16;
    }
    Some(n)
}

/// Where the next `\` of `bytes` is: an escape right after another (a run
/// of tabs, say) is found without a search.
fn next_escape(bytes: &[u8]) -> Option<usize> {
    match bytes.first() {
        Some(b'\\') => Some(0),
        _ => memchr::memchr(b'\\', bytes),
    }
}

/// The decoded text of a checked string; `None` for a lone surrogate.
fn decode<'a>(raw: &RawStr<'a>) -> Option<Cow<'a, str>> {
    Some(match unescape(raw)? {
        Cow::Borrowed(bytes) => lossy(bytes),
        Cow::Owned(bytes) => Cow::Owned(
            String::from_utf8(bytes)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        ),
    })
}

/// The bytes a checked string stands for; `None` for a lone surrogate.
/// Their lossy UTF-8 decoding is the string's: an escape is ASCII and
/// stands for whole characters (ASCII, or starting with a leading byte),
/// so unescaping before the decoding never joins or splits an invalid
/// sequence.
fn unescape<'a>(raw: &RawStr<'a>) -> Option<Cow<'a, [u8]>> {
    let Some(first) = raw.escape else {
        return Some(Cow::Borrowed(raw.content));
    };
    let mut out = Vec::with_capacity(raw.content.len());
    out.extend_from_slice(raw.content.get(..first)?);
    let mut rest = raw.content.get(first..)?;
    while let Some(at) = next_escape(rest) {
        out.extend_from_slice(rest.get(..at)?);
        let byte = match rest.get(at + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let (c, used) = unicode_escape(rest.get(at + 2..)?)?;
                out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
                rest = rest.get(at + used..)?;
                continue;
            }
            _ => return None,
        };
        out.push(byte);
        rest = rest.get(at + 2..)?;
    }
    out.extend_from_slice(rest);
    Some(Cow::Owned(out))
}

/// The character of a `\u` escape whose four hex digits start `hex` (a
/// surrogate pair takes the `\u` escape after it too), and the length of
/// the whole escape; `None` for a lone surrogate.
fn unicode_escape(hex: &[u8]) -> Option<(char, usize)> {
    let first = hex4(hex.get(..4)?)?;
    match first {
        0xD800..=0xDBFF => {
            if hex.get(4..6)? != b"\\u" {
                return None;
            }
            let second = hex4(hex.get(6..10)?)?;
            if !(0xDC00..=0xDFFF).contains(&second) {
                return None;
            }
            let high = u32::from(first - 0xD800) << 10;
            let c = char::from_u32((high | u32::from(second - 0xDC00)) + 0x1_0000)?;
            Some((c, 12))
        }
        0xDC00..=0xDFFF => None,
        n => Some((char::from_u32(u32::from(n))?, 6)),
    }
}

/// A line's bytes without one trailing `\r\n` or `\n`, whose UTF-8 check
/// waits for the block they are packed into. A line with no escape but
/// that terminator (most of rg's) is not copied.
fn line_text<'a>(raw: &RawStr<'a>) -> Option<ReadLine<'a>> {
    if let Some(at) = raw.escape
        && matches!(raw.content.get(at..)?, b"\\n" | b"\\r\\n")
    {
        return Some(ReadLine::Bytes(Cow::Borrowed(raw.content.get(..at)?)));
    }
    Some(ReadLine::Bytes(without_terminator(unescape(raw)?)))
}

/// `bytes` without one trailing `\r\n` or `\n`.
fn without_terminator(bytes: Cow<'_, [u8]>) -> Cow<'_, [u8]> {
    let cut = if bytes.ends_with(b"\r\n") {
        2
    } else if bytes.ends_with(b"\n") {
        1
    } else {
        return bytes;
    };
    match bytes {
        Cow::Borrowed(b) => Cow::Borrowed(&b[..b.len() - cut]),
        Cow::Owned(mut b) => {
            b.truncate(b.len() - cut);
            Cow::Owned(b)
        }
    }
}

#[cfg(test)]
mod sameness;

#[cfg(test)]
mod tests {
    use super::*;

    fn found(line: &str) -> Found<'_> {
        match read_record(line.as_bytes(), None) {
            Some(Record::Match(found)) => found,
            other => panic!("{other:?} for {line}"),
        }
    }

    #[test]
    fn reads_what_rg_prints() {
        let line = r#"{"type":"match","data":{"path":{"text":"a/b.rs"},"lines":{"text":"fn x() -> Err {\n"},"line_number":4,"absolute_offset":116,"submatches":[{"match":{"text":"Err"},"start":10,"end":13}]}}"#;
        let m = found(line);
        assert_eq!(
            (
                m.path.text().as_ref(),
                m.line_number,
                m.line.as_ref().map(ReadLine::text).as_deref()
            ),
            ("a/b.rs", 4, Some("fn x() -> Err {"))
        );
        for other in [
            r#"{"type":"begin","data":{"path":{"text":"a/b.rs"}}}"#,
            r#"{"type":"end","data":{"path":{"text":"a"},"binary_offset":null,"stats":{"elapsed":{"secs":0,"nanos":1,"human":"0.0s"},"searches":1,"x":[true,false,-1.5e-3]}}}"#,
            r#"{"data":{"elapsed_total":{"secs":0}},"type":"summary"}"#,
            r#"{}"#,
            r#"{"type":7} "#,
        ] {
            assert_eq!(
                read_record(other.as_bytes(), None),
                Some(Record::Other),
                "{other}"
            );
        }
    }

    #[test]
    fn decodes_escapes_pairs_and_bytes() {
        let line = r#"{"data":{"line_number":7,"lines":{"text":"a\"\\\/\b\f\t\u00e9\ud83d\ude00\r\n"},"path":{"bytes":"bGF0aW7pLnR4dA=="}},"type":"match"}"#;
        let m = found(line);
        assert_eq!(m.path.text(), "latin\u{FFFD}.txt");
        assert_eq!(
            m.line.as_ref().map(ReadLine::text).as_deref(),
            Some("a\"\\/\u{8}\u{c}\té\u{1F600}")
        );
        let line = r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"bytes":"AAEC"},"line_number":0}}"#;
        assert_eq!(found(line).line, None);
    }

    proptest::proptest! {
        /// Unescaping a string's raw bytes and then decoding them lossily
        /// gives serde_json's string of the lossily decoded JSON, with
        /// bytes that are not UTF-8 right before and after escapes.
        #[test]
        fn unescaped_bytes_decode_as_the_lossy_text_unescapes(
            parts in proptest::collection::vec(proptest::sample::select(vec![
                &b"\\u00e9"[..], b"\\uD83D\\uDE00", b"\\u00ac", b"\\n", b"\\\"", b"\\t",
                b"a", "\u{e9}".as_bytes(), b"\xc3", b"\xa9", b"\xe2\x82", b"\xf0\x9f", b"\xff",
            ]), 0..10),
        ) {
            let quoted = [&b"\""[..], &parts.concat(), b"\""].concat();
            let raw = Reader { bytes: &quoted, at: 0 }.string();
            let raw = raw.ok_or_else(|| proptest::test_runner::TestCaseError::fail("unread"))?;
            let expected: String = serde_json::from_str(&String::from_utf8_lossy(&quoted))
                .map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
            let decoded = decode(&raw);
            proptest::prop_assert_eq!(decoded.as_deref(), Some(expected.as_str()));
            let bytes = unescape(&raw).unwrap_or_default();
            proptest::prop_assert_eq!(String::from_utf8_lossy(&bytes), expected);
        }
    }

    #[test]
    fn lone_surrogates_end_as_serde_json_judges_them() {
        use crate::parse::{NON_UTF8_LINE, parse_record};
        use crate::value::paths::DisplayMapper;
        let read = |line: &str| {
            let mapper = DisplayMapper::new("/w");
            parse_record(line, &mapper, &mut None)
                .map(|r| r.map(|r| (r.found.path.to_string(), r.found.line.text().into_owned())))
                .map_err(|e| e.message)
        };
        let malformed = |d: &str| {
            Err(format!(
                "grep received malformed ripgrep --json output ({d})"
            ))
        };
        let found = |p: &str, l: &str| Ok(Some((p.to_owned(), l.to_owned())));
        let cases = [
            (
                r#"{"type":"match","data":{"path":{"text":"a\ud800"},"lines":{"text":"x"},"line_number":1}}"#,
                malformed("a match record has no path text"),
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"\udc00"},"lines":{"text":"x"},"line_number":1}}"#,
                malformed("a match record has no path text"),
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"\ud800\u0041"},"line_number":1}}"#,
                malformed("a match record has neither line text nor bytes"),
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"\ud800","bytes":"AA=="},"line_number":1}}"#,
                found("a", NON_UTF8_LINE),
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":1,"submatches":[{"match":{"text":"\udc00"}}]}}"#,
                found("a", "x"),
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"\ud83d\ude00"},"lines":{"text":"\uD83D\uDE00\n"},"line_number":1}}"#,
                found("\u{1F600}", "\u{1F600}"),
            ),
        ];
        for (line, expected) in cases {
            assert_eq!(read(line), expected, "{line}");
        }
    }

    #[test]
    fn hands_back_what_it_cannot_be_sure_of() {
        for line in [
            r#" {"type":"begin"}"#,
            r#"{"type":"begin","type":"match"}"#,
            r#"{"typ\u0065":"match"}"#,
            r#"{"type":"m\u0061tch","data":{}}"#,
            r#"{"type":"match","data":{"path":{"text":"\ud800"},"lines":{"text":"x"},"line_number":1}}"#,
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"\udc00"},"line_number":1}}"#,
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":1.0}}"#,
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":-1}}"#,
            r#"{"type":"match","data":{"path":{"bytes":"!!"},"lines":{"text":"x"},"line_number":1}}"#,
            r#"{"type":"match","data":{"path":{"text":"a","text":"b"},"lines":{"text":"x"},"line_number":1}}"#,
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"}}}"#,
            r#"{"type":"match"}"#,
            r#"{"type":"begin","data":{"x":01}}"#,
            r#"{"type":"begin","data":{"x":"\x"}}"#,
            r#"{"type":"begin","data":{"x":[1,]}}"#,
            "{\"type\":\"begin\",\"data\":\"\t\"}",
            r#"{"type":"begin"} x"#,
            r#"{"type":"begin""#,
        ] {
            assert_eq!(read_record(line.as_bytes(), None), None, "{line}");
        }
        let deep = format!("{{\"data\":{}{}}}", "[".repeat(70), "]".repeat(70));
        assert_eq!(read_record(deep.as_bytes(), None), None);
    }

    proptest::proptest! {
        #[test]
        fn the_special_byte_scan_is_exact(word in proptest::array::uniform8(
            proptest::prop_oneof![proptest::num::u8::ANY, proptest::sample::select(vec![b'"', b'\\', 0, 0x1f, 0x20, 0x80, 0x9f, 0xa0])]
        )) {
            let expected = word.iter().position(|&b| is_special(b));
            proptest::prop_assert_eq!(first_special(u64::from_le_bytes(word)), expected);
        }
    }
}
