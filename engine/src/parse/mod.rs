//! Parsing ripgrep's stdout: `rg --files` lines and `rg --json` records
//! (CONTRACT §5.4, §6.4).
//!
//! `rg --json` prints one JSON object per line; only records whose `type`
//! is `"match"` matter. Their `data` holds `path` (`{"text": …}` or, for a
//! non-UTF-8 name, `{"bytes": <base64>}`), `lines` (the same shape, with
//! the line terminator included) and `line_number`.
//!
//! A line is read one of two ways. `rg_json` is the fast reader: it
//! answers only for records it can read with certainty (what rg prints).
//! Every other line takes the checked path ([`parse_checked`]), which
//! reads any JSON with serde_json as `JSON.parse` would (an escaped key
//! is its decoded name, the last of duplicate keys wins) and gives the
//! contract's errors: each object is read as the raw values of the
//! members the contract names, and each of those is checked and decoded
//! only as far as the contract needs. The sameness proptests
//! (`rg_json/sameness.rs`) prove both ways give the same result for every
//! input. `stream.rs` feeds lines here while rg still writes.

pub(crate) mod rg_json;

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine as _;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{SearchCode, SearchError};
use crate::parse::rg_json::{FoundPath, Record as RgRecord, read_record};
use crate::support::parallel::map_parts;
use crate::value::GrepMatch;
use crate::value::line::ReadLine;
use crate::value::match_list::{MatchList, ReadMatch};
use crate::value::paths::DisplayMapper;

/// The placeholder for a non-UTF-8 matched line.
pub(crate) const NON_UTF8_LINE: &str = "(line is not valid UTF-8)";

/// Paths of `rg --files` output: one per non-empty line, untrimmed, mapped
/// to display form.
pub fn parse_glob_paths(stdout: &str, workdir: &str) -> Vec<String> {
    let mapper = DisplayMapper::new(workdir);
    let map_run = |run: &str| -> Vec<String> {
        run.split('\n')
            .filter(|line| !line.is_empty())
            .map(|line| mapper.map(line).into_owned())
            .collect()
    };
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    if stdout.len() < PARALLEL_FROM_BYTES || threads < 2 {
        return map_run(stdout);
    }
    // Large output: runs of whole lines on all cores, joined in order.
    let runs = split_lines(stdout, threads.min(8));
    let parts = map_parts(&runs, |run| map_run(run));
    let mut paths = Vec::with_capacity(parts.iter().map(Vec::len).sum());
    for mut part in parts {
        paths.append(&mut part);
    }
    paths
}

/// Parsed grep matches, plus the first output-schema violation (a
/// non-integer line number), which the registry reports after parsing.
#[derive(Debug, Default)]
pub struct ParsedMatches {
    pub matches: Vec<GrepMatch>,
    pub schema_violation: Option<String>,
}

/// The previous match record's path: its text, its display path, and
/// whether the text is plain JSON string content (no `"`, `\` or control
/// character), so that a record repeating it can be recognised without
/// scanning it again ([`read_record`]).
pub(crate) struct PreviousPath {
    raw: Box<str>,
    shown: Arc<str>,
    plain: bool,
}

impl PreviousPath {
    fn new(raw: &str, shown: Arc<str>) -> Self {
        let plain = !raw.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20);
        Self {
            raw: raw.into(),
            shown,
            plain,
        }
    }

    /// The text's bytes when they are plain string content.
    fn plain_bytes(&self) -> Option<&[u8]> {
        self.plain.then_some(self.raw.as_bytes())
    }
}

/// The previous match record's path, once there was one.
pub(crate) type LastPath = Option<PreviousPath>;

/// The display path of `raw`, reusing the previous record's mapping.
fn shown_path(raw: &str, mapper: &DisplayMapper, last_path: &mut LastPath) -> Arc<str> {
    match last_path {
        Some(last) if *last.raw == *raw => last.shown.clone(),
        _ => {
            let shown: Arc<str> = mapper.map(raw).into();
            *last_path = Some(PreviousPath::new(raw, shown.clone()));
            shown
        }
    }
}

/// The JSON kind of a raw value, from its first byte (raw values carry no
/// leading whitespace).
#[derive(PartialEq, Eq)]
enum Kind {
    Object,
    Array,
    String,
    Number,
    Other,
}

fn kind(raw: &RawValue) -> Kind {
    match raw.get().as_bytes().first() {
        Some(b'{') => Kind::Object,
        Some(b'[') => Kind::Array,
        Some(b'"') => Kind::String,
        Some(b'-' | b'0'..=b'9') => Kind::Number,
        _ => Kind::Other,
    }
}

fn malformed(detail: &str) -> SearchError {
    SearchError::new(
        SearchCode::Failed,
        format!("grep received malformed ripgrep --json output ({detail})"),
    )
}

fn string_of(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    if kind(raw) != Kind::String {
        return None;
    }
    serde_json::from_str(raw.get()).ok()
}

/// The members named in `names` of the JSON object `object`, as raw
/// values, each its last occurrence (as `JSON.parse` keeps it); a key is
/// compared decoded, so an escaped key can name a member. Anything but
/// one object is "not JSON" (the callers pass only objects, or a line
/// that starts like one).
fn members<'a, const N: usize>(
    object: &'a str,
    names: [&'static str; N],
) -> Result<[Option<&'a RawValue>; N], SearchError> {
    let mut reader = serde_json::Deserializer::from_str(object);
    let found = reader
        .deserialize_map(LastMembers { names })
        .and_then(|found| reader.end().map(|()| found));
    found.map_err(|_| malformed("a line is not JSON"))
}

/// Reads an object's members named in `names`, the last of each.
struct LastMembers<const N: usize> {
    names: [&'static str; N],
}

impl<'de, const N: usize> Visitor<'de> for LastMembers<N> {
    type Value = [Option<&'de RawValue>; N];

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut found = [None; N];
        while let Some(index) = map.next_key_seed(NameIndex(&self.names))? {
            let value: &'de RawValue = map.next_value()?;
            if let Some(slot) = index.and_then(|i| found.get_mut(i)) {
                *slot = Some(value);
            }
        }
        Ok(found)
    }
}

/// An object key as its index in a list of names (`None`: not named).
struct NameIndex<'n>(&'n [&'static str]);

impl<'de> DeserializeSeed<'de> for NameIndex<'_> {
    type Value = Option<usize>;

    fn deserialize<D: Deserializer<'de>>(self, key: D) -> Result<Option<usize>, D::Error> {
        key.deserialize_str(self)
    }
}

impl Visitor<'_> for NameIndex<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object key")
    }

    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Option<usize>, E> {
        Ok(self.0.iter().position(|name| *name == key))
    }
}

/// `text` and `bytes` of an object-like raw value; arrays have neither.
fn text_or_bytes(raw: &RawValue) -> Result<[Option<&RawValue>; 2], SearchError> {
    match kind(raw) {
        Kind::Object => members(raw.get(), ["text", "bytes"]),
        _ => Ok([None, None]),
    }
}

fn is_object_like(raw: Option<&RawValue>) -> bool {
    raw.is_some_and(|r| matches!(kind(r), Kind::Object | Kind::Array))
}

fn strip_one_terminator(mut line: String) -> String {
    if line.ends_with("\r\n") {
        line.truncate(line.len() - 2);
    } else if line.ends_with('\n') {
        line.truncate(line.len() - 1);
    }
    line
}

/// The line number as an integer, or `Err(())` for a finite non-integer.
fn integral(raw: &RawValue) -> Result<i64, ()> {
    let number: serde_json::Number = serde_json::from_str(raw.get()).map_err(|_| ())?;
    if let Some(n) = number.as_i64() {
        return Ok(n);
    }
    match number.as_f64() {
        Some(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => Ok(f as i64),
        _ => Err(()),
    }
}

/// A match record as read.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct MatchRecord<'a> {
    /// The match, its line still borrowed where it can be.
    pub(crate) found: ReadMatch<'a>,
    /// Whether its line number is an integer (the output schema's
    /// `lineNumber` type); a finite non-integer reads as 0 and is a schema
    /// violation.
    pub(crate) integral_line_number: bool,
}

impl MatchRecord<'_> {
    /// The same record, owning its line.
    fn into_owned(self) -> MatchRecord<'static> {
        MatchRecord {
            found: self.found.into_owned(),
            integral_line_number: self.integral_line_number,
        }
    }
}

/// A match record read, or `None` for a record that is not a match.
pub(crate) type Record<'a> = Option<MatchRecord<'a>>;

/// One record line. `Ok(None)` for records that are not matches.
pub(crate) fn parse_record<'a>(
    line: &'a str,
    mapper: &DisplayMapper,
    last_path: &mut LastPath,
) -> Result<Record<'a>, SearchError> {
    match read_record(
        line.as_bytes(),
        last_path.as_ref().and_then(PreviousPath::plain_bytes),
    ) {
        Some(record) => Ok(from_reader(record, mapper, last_path)),
        None => parse_checked(line, mapper, last_path),
    }
}

/// One record line as raw stdout bytes: exactly [`parse_record`] of its
/// lossy UTF-8 decoding, decoding only what the reader keeps.
pub(crate) fn parse_line<'a>(
    line: &'a [u8],
    mapper: &DisplayMapper,
    last_path: &mut LastPath,
) -> Result<Record<'a>, SearchError> {
    match read_record(line, last_path.as_ref().and_then(PreviousPath::plain_bytes)) {
        Some(record) => Ok(from_reader(record, mapper, last_path)),
        None => match std::str::from_utf8(line) {
            Ok(text) => parse_checked(text, mapper, last_path),
            Err(_) => Ok(
                parse_checked(&String::from_utf8_lossy(line), mapper, last_path)?
                    .map(MatchRecord::into_owned),
            ),
        },
    }
}

fn from_reader<'a>(
    record: RgRecord<'a>,
    mapper: &DisplayMapper,
    last_path: &mut LastPath,
) -> Record<'a> {
    let RgRecord::Match(found) = record else {
        return None;
    };
    let path = match (&found.path, &*last_path) {
        (FoundPath::Plain(raw), Some(last)) if last.raw.as_bytes() == *raw => last.shown.clone(),
        _ => shown_path(&found.path.text(), mapper, last_path),
    };
    let m = ReadMatch {
        path,
        line_number: found.line_number,
        line: found.line.unwrap_or(ReadLine::from(NON_UTF8_LINE)),
    };
    Some(MatchRecord {
        found: m,
        integral_line_number: true,
    })
}

/// The checked path: one record line of any shape read with serde_json,
/// with the contract's errors. Wherever `rg_json` answers, it must agree.
pub(crate) fn parse_checked(
    line: &str,
    mapper: &DisplayMapper,
    last_path: &mut LastPath,
) -> Result<Record<'static>, SearchError> {
    if !line.trim_start().starts_with('{') {
        return match serde_json::from_str::<serde_json::Value>(line) {
            Err(_) => Err(malformed("a line is not JSON")),
            Ok(serde_json::Value::Array(_)) => Ok(None),
            Ok(_) => Err(malformed("a record is not an object")),
        };
    }
    let [record_type, data] = members(line, ["type", "data"])?;
    let is_match = match record_type {
        Some(raw) if raw.get() == "\"match\"" => true,
        Some(raw) => string_of(Some(raw)).as_deref() == Some("match"),
        None => false,
    };
    if !is_match {
        return Ok(None);
    }
    if !is_object_like(data) {
        return Err(malformed("a match record has no data"));
    }
    let [path, lines, line_number] = match data {
        Some(raw) if kind(raw) == Kind::Object => {
            members(raw.get(), ["path", "lines", "line_number"])?
        }
        _ => [None; 3],
    };
    let [path_text, path_bytes] = match path {
        Some(raw) if matches!(kind(raw), Kind::Object | Kind::Array) => text_or_bytes(raw)?,
        _ => return Err(malformed("a match record has no path text")),
    };
    let path_text = match string_of(path_text) {
        Some(text) => text,
        // CONTRACT §0.2: a non-UTF-8 name is shown lossily, not an error.
        None => match string_of(path_bytes).and_then(|b| decode_base64_lossy(&b)) {
            Some(text) => text,
            None => return Err(malformed("a match record has no path text")),
        },
    };
    let line_number = match line_number {
        Some(raw) if kind(raw) == Kind::Number => integral(raw),
        _ => return Err(malformed("a match record has no line number")),
    };
    let [line_text, line_bytes] = match lines {
        Some(raw) if matches!(kind(raw), Kind::Object | Kind::Array) => text_or_bytes(raw)?,
        _ => return Err(malformed("a match record has no line content")),
    };
    let line = match string_of(line_text) {
        Some(text) => Cow::Owned(strip_one_terminator(text)),
        None if line_bytes.is_some_and(|b| kind(b) == Kind::String) => Cow::Borrowed(NON_UTF8_LINE),
        None => return Err(malformed("a match record has neither line text nor bytes")),
    };
    let path = shown_path(&path_text, mapper, last_path);
    Ok(Some(MatchRecord {
        integral_line_number: line_number.is_ok(),
        found: ReadMatch {
            path,
            line_number: line_number.unwrap_or_default(),
            line: ReadLine::Text(line),
        },
    }))
}

fn decode_base64_lossy(encoded: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// The matches of one run of whole lines, with the local index of its
/// first non-integer line number.
struct ParsedPart {
    matches: Vec<GrepMatch>,
    first_violation: Option<usize>,
}

fn parse_part(part: &str, mapper: &DisplayMapper) -> Result<ParsedPart, SearchError> {
    let mut last_path = None;
    let mut matches = MatchList::default();
    let mut first_violation = None;
    for line in part.split('\n').filter(|line| !line.is_empty()) {
        if let Some(MatchRecord {
            found,
            integral_line_number,
        }) = parse_record(line, mapper, &mut last_path)?
        {
            if !integral_line_number && first_violation.is_none() {
                first_violation = Some(matches.len());
            }
            matches.push(found);
        }
    }
    Ok(ParsedPart {
        matches: matches.finish(),
        first_violation,
    })
}

/// Output below this size is parsed on the calling thread.
const PARALLEL_FROM_BYTES: usize = 1 << 20;

/// `stdout` cut into about `n` runs of whole lines.
fn split_lines(stdout: &str, n: usize) -> Vec<&str> {
    let mut parts = Vec::with_capacity(n);
    let mut rest = stdout;
    for i in (1..n).rev() {
        let target = rest.len() / (i + 1);
        let Some(cut) = rest.as_bytes()[target..].iter().position(|&b| b == b'\n') else {
            break;
        };
        let (head, tail) = rest.split_at(target + cut + 1);
        parts.push(head);
        rest = tail;
    }
    parts.push(rest);
    parts
}

/// Every match of complete `rg --json` stdout, in output order. Large
/// output is parsed in runs of whole lines on all cores (rg has exited, so
/// they are free); the runs are joined in order, so the result, the first
/// malformed line's error and the first schema violation are exactly those
/// of one pass from the top.
pub fn parse_grep_matches(stdout: &str, workdir: &str) -> Result<ParsedMatches, SearchError> {
    let mapper = DisplayMapper::new(workdir);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let parts = if stdout.len() < PARALLEL_FROM_BYTES || threads < 2 {
        vec![parse_part(stdout, &mapper)]
    } else {
        let runs = split_lines(stdout, threads.min(8));
        map_parts(&runs, |run| parse_part(run, &mapper))
    };
    let mut parsed = ParsedMatches::default();
    let total: usize = parts
        .iter()
        .map(|p| p.as_ref().map_or(0, |p| p.matches.len()))
        .sum();
    parsed.matches.reserve_exact(total);
    for part in parts {
        let mut part = part?;
        if parsed.schema_violation.is_none()
            && let Some(local) = part.first_violation
        {
            parsed.schema_violation = Some(format!(
                "/matches/{}/lineNumber must be integer",
                parsed.matches.len() + local
            ));
        }
        parsed.matches.append(&mut part.matches);
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn match_line(path: &str, n: u64, text: &str) -> String {
        json!({"type": "match", "data": {"path": {"text": path}, "lines": {"text": text},
            "line_number": n, "absolute_offset": 0, "submatches": []}})
        .to_string()
    }

    fn failure(line: &str) -> String {
        parse_grep_matches(line, "/w").unwrap_err().message
    }

    /// CONTRACT §10.9 #79
    #[test]
    fn strips_a_crlf_terminator_and_only_one_newline() {
        let parsed = parse_grep_matches(&match_line("a.ts", 1, "windows line\r\n"), "/w").unwrap();
        assert_eq!(parsed.matches[0].line, "windows line");
        let parsed = parse_grep_matches(&match_line("a.ts", 1, "x\n\n"), "/w").unwrap();
        assert_eq!(parsed.matches[0].line, "x\n");
        let parsed = parse_grep_matches(&match_line("a.ts", 1, "x\r"), "/w").unwrap();
        assert_eq!(parsed.matches[0].line, "x\r");
    }

    /// CONTRACT §10.10 #86–93
    #[test]
    fn malformed_records_fail_with_their_exact_detail() {
        let prefix = "grep received malformed ripgrep --json output";
        let cases = [
            ("not json at all", "a line is not JSON"),
            ("42", "a record is not an object"),
            ("null", "a record is not an object"),
            (r#"{"type":"match"}"#, "a match record has no data"),
            (
                r#"{"type":"match","data":null}"#,
                "a match record has no data",
            ),
            (
                r#"{"type":"match","data":{"path":{},"lines":{"text":"x"},"line_number":1}}"#,
                "a match record has no path text",
            ),
            (
                r#"{"type":"match","data":{"path":"a.ts","lines":{"text":"x"},"line_number":1}}"#,
                "a match record has no path text",
            ),
            (
                r#"{"type":"match","data":[]}"#,
                "a match record has no path text",
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"}}}"#,
                "a match record has no line number",
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":"1"}}"#,
                "a match record has no line number",
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"line_number":1}}"#,
                "a match record has no line content",
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"lines":{},"line_number":1}}"#,
                "a match record has neither line text nor bytes",
            ),
            (
                r#"{"type":"match","data":{"path":{"text":"a"},"lines":[],"line_number":1}}"#,
                "a match record has neither line text nor bytes",
            ),
        ];
        for (line, detail) in cases {
            assert_eq!(failure(line), format!("{prefix} ({detail})"), "{line}");
        }
    }

    #[test]
    fn skips_non_match_records_arrays_and_empty_lines() {
        let stdout = format!(
            "{}\n[1,2]\n{}\n\n{}\n{}\n",
            r#"{"type":"begin","data":{"path":{"text":"a.ts"}}}"#,
            r#"{"data":5}"#,
            r#"{"type":7}"#,
            match_line("a.ts", 2, "hit\n"),
        );
        let parsed = parse_grep_matches(&stdout, "/w").unwrap();
        assert_eq!(parsed.matches.len(), 1);
        assert_eq!(parsed.matches[0].line, "hit");
        assert_eq!(parsed.matches[0].line_number, 2);
    }

    /// CONTRACT §0.2: a non-UTF-8 path arrives as base64 bytes and is shown lossily.
    #[test]
    fn decodes_a_non_utf8_path_lossily() {
        let line = r#"{"type":"match","data":{"path":{"bytes":"bGF0aW7pLnR4dA=="},"lines":{"text":"x\n"},"line_number":1}}"#;
        let parsed = parse_grep_matches(line, "/w").unwrap();
        assert_eq!(&*parsed.matches[0].path, "latin\u{FFFD}.txt");
    }

    /// CONTRACT §10.9 #78 (parse half)
    #[test]
    fn a_non_utf8_line_becomes_the_placeholder() {
        let line = r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"bytes":"AAECww=="},"line_number":4}}"#;
        let parsed = parse_grep_matches(line, "/w").unwrap();
        assert_eq!(parsed.matches[0].line, NON_UTF8_LINE);
    }

    #[test]
    fn a_non_integer_line_number_is_a_schema_violation_not_a_parse_failure() {
        let line = r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":1.5}}"#;
        let parsed = parse_grep_matches(line, "/w").unwrap();
        assert!(parsed.schema_violation.is_some());
        let line = r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":2.0}}"#;
        let parsed = parse_grep_matches(line, "/w").unwrap();
        assert_eq!(
            (parsed.matches[0].line_number, parsed.schema_violation),
            (2, None)
        );
    }

    #[test]
    fn duplicate_keys_take_the_last_value_and_crlf_is_json_whitespace() {
        let line = r#"{"type":"begin","type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":1}}"#;
        assert_eq!(parse_grep_matches(line, "/w").unwrap().matches.len(), 1);
        let line = format!("{}\r", match_line("a", 1, "x"));
        assert_eq!(parse_grep_matches(&line, "/w").unwrap().matches.len(), 1);
    }

    /// JSON.parse keeps the last of duplicate keys whatever else the
    /// record holds, so a duplicated key changes nothing: not even with a
    /// lone surrogate in a string the contract skips, or a number beyond
    /// an f64 (a line number that is then no integer).
    #[test]
    fn a_record_with_a_duplicate_key_reads_as_the_record_without_it() {
        let mapper = DisplayMapper::new("/w");
        for rest in [
            r#""line_number":1,"submatches":[{"match":{"text":"\ud800"}}]"#,
            r#""line_number":1,"absolute_offset":1e400"#,
            r#""line_number":1e400"#,
        ] {
            let plain = format!(
                r#"{{"type":"match","data":{{"path":{{"text":"a"}},"lines":{{"text":"x"}},{rest}}}}}"#
            );
            let duplicated = plain.replacen(r#""type""#, r#""type":"begin","type""#, 1);
            let read = |line: &str| {
                let parsed = parse_grep_matches(line, "/w").map_err(|e| e.message)?;
                Ok::<_, String>((parsed.matches, parsed.schema_violation))
            };
            assert!(read(&plain).is_ok(), "{plain}");
            assert_eq!(read(&duplicated), read(&plain), "{duplicated}");
            assert_eq!(
                parse_checked(&plain, &mapper, &mut None),
                parse_record(&plain, &mapper, &mut None),
                "{plain}"
            );
        }
    }

    #[test]
    fn large_output_parsed_in_parallel_runs_equals_one_pass() {
        let mut stdout = String::new();
        for i in 0..12_000u64 {
            stdout.push_str(&match_line(&format!("/w/d{}/f.rs", i / 7), i, "hit\n"));
            stdout.push('\n');
            if i % 5 == 0 {
                stdout.push_str(r#"{"type":"end","data":{}}"#);
                stdout.push('\n');
            }
        }
        assert!(stdout.len() > PARALLEL_FROM_BYTES);
        let mapper = DisplayMapper::new("/w");
        let one_pass = parse_part(&stdout, &mapper).unwrap();
        let parallel = parse_grep_matches(&stdout, "/w").unwrap();
        assert_eq!(parallel.matches, one_pass.matches);
        assert_eq!(parallel.schema_violation, None);
        // The first violation keeps its global index; the first malformed
        // line wins even when it is in a later run.
        let late = format!(
            "{stdout}{}\n",
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":1.5}}"#
        );
        assert_eq!(
            parse_grep_matches(&late, "/w").unwrap().schema_violation,
            Some("/matches/12000/lineNumber must be integer".to_owned())
        );
        let broken = format!("{stdout}not json\n");
        assert_eq!(
            parse_grep_matches(&broken, "/w").unwrap_err().message,
            "grep received malformed ripgrep --json output (a line is not JSON)"
        );
        for n in 1..6 {
            assert_eq!(split_lines(&stdout, n).concat(), stdout);
        }
        let files: String = (0..100_000).map(|i| format!("/w/d{i}/f.rs\n")).collect();
        assert!(files.len() > PARALLEL_FROM_BYTES);
        let expected: Vec<String> = (0..100_000).map(|i| format!("d{i}/f.rs")).collect();
        assert_eq!(parse_glob_paths(&files, "/w"), expected);
        assert_eq!(split_lines("no newline", 3).concat(), "no newline");
    }

    #[test]
    fn maps_absolute_paths_against_the_workdir() {
        let parsed = parse_grep_matches(&match_line("/w/deep/a.ts", 2, "hit"), "/w").unwrap();
        assert_eq!(&*parsed.matches[0].path, "deep/a.ts");
        assert_eq!(
            parse_glob_paths("/w/src/a.ts\n/elsewhere/b.ts\nrel/c.ts\n\n", "/w"),
            vec!["src/a.ts", "/elsewhere/b.ts", "rel/c.ts"]
        );
        assert_eq!(parse_glob_paths("a\r\n", "/w"), vec!["a\r"]);
    }
}
