//! Proof of sameness: the dedicated reader (with its fallback to the
//! checked path) and the checked path alone give identical results and
//! identical errors for random and hostile `rg --json` output: escapes, surrogate pairs and
//! lone surrogates, `bytes` paths and lines, duplicate and escaped keys,
//! odd line numbers, unknown record types, truncated records, stray
//! whitespace and non-UTF-8 bytes.

use base64::Engine as _;
use proptest::prelude::*;
use proptest::sample::select;

use super::{Record as RgRecord, canonical_match, canonical_other, general_record, read_record};
use crate::error::SearchError;
use crate::parse::{
    MatchRecord, ParsedMatches, Record, parse_checked, parse_grep_matches, parse_record,
};
use crate::value::match_list::MatchList;
use crate::value::paths::DisplayMapper;

fn both(
    line: &str,
) -> (
    Result<Record<'_>, SearchError>,
    Result<Record<'_>, SearchError>,
) {
    let mapper = DisplayMapper::new("/w");
    (
        parse_record(line, &mapper, &mut None),
        parse_checked(line, &mapper, &mut None),
    )
}

/// A char as serde_json writes it inside a string.
fn escaped_char(c: char) -> String {
    let quoted = serde_json::to_string(&c.to_string()).unwrap_or_default();
    quoted[1..quoted.len() - 1].to_owned()
}

/// One piece of a string's content, well formed or hostile.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        10 => any::<char>().prop_map(escaped_char),
        8 => "[a-z/._ ]{1,6}",
        2 => Just("\\n".to_owned()),
        1 => Just("\\r\\n".to_owned()),
        2 => select(vec![
            "\\u00e9", "\\uD83D\\uDE00", "\\ud83d\\ude00", "\\uDBFF\\uDFFF", "\\/",
            "\\b\\f\\t", "\\u0000", "\\u001f", "\\\\n", "\\\"", "é", "\u{10FFFF}",
            "\u{FFFD}", "\u{7f}",
        ])
        .prop_map(str::to_owned),
        1 => select(vec![
            "\\ud800", "\\udc00", "\\ud800\\u0041", "\\ud800\\ud800\\udc00", "\\ud800\\n",
            "\\ud800x", "\\udbff\\", "\\u12", "\\u12G4", "\\x", "\t", "\u{1}", "\\", "\"",
        ])
        .prop_map(str::to_owned),
    ]
}

fn json_string() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..6).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
}

fn base64_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::collection::vec(any::<u8>(), 0..12)
            .prop_map(|b| base64::engine::general_purpose::STANDARD.encode(b)),
        1 => "[A-Za-z0-9+/=!_-]{0,12}",
        1 => Just("YQ\\u003d\\u003d".to_owned()),
        1 => Just("bGF0aW7pLnR4dA==".to_owned()),
    ]
    .prop_map(|b| format!("\"{b}\""))
}

fn text_or_bytes() -> impl Strategy<Value = String> {
    prop_oneof![
        16 => json_string().prop_map(|s| format!("{{\"text\":{s}}}")),
        4 => base64_string().prop_map(|b| format!("{{\"bytes\":{b}}}")),
        2 => select(vec![
            "{}", "[]", "\"a\"", "null", "{\"text\":5}", "{\"text\":\"a\",\"text\":\"b\"}",
            "{\"text\":\"a\",\"bytes\":\"YQ==\"}", "{\"bytes\":5,\"text\":\"a\"}",
            "{ \"text\" : \"a\" }", "{\"te\\u0078t\":\"a\"}", "{\"bytes\":\"AAEC\",\"bytes\":\"A\"}",
            "{\"text\":null}", "{\"Text\":\"a\"}", "[\"text\"]",
        ])
        .prop_map(str::to_owned),
    ]
}

fn line_number() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => (0u64..10_000_000).prop_map(|n| n.to_string()),
        2 => select(vec![
            "0", "1.0", "1.5", "-3", "\"1\"", "1e2", "2.0E0", "-0", "01", "null",
            "99999999999999999999", "9223372036854775807", "9223372036854775808",
            "123456789012345678", "1234567890123456789", "9007199254740993.0", "1e400", "-",
        ])
        .prop_map(str::to_owned),
    ]
}

/// A value that is skipped: anything JSON, some of it malformed.
fn skipped() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        4 => json_string(),
        3 => (0i64..100_000).prop_map(|n| n.to_string()),
        3 => select(vec![
            "true", "false", "null", "-1.5e-3", "0.25", "1E+2", "[]", "{}", "-0", "[ ]", "{ }",
        ])
        .prop_map(str::to_owned),
        1 => select(vec![
            "01", "1.", ".5", "tru", "nul", "1e", "[1,]", "{\"a\"}", "{\"a\":}", "{,}", "[,1]",
            "{\"a\":1,}", "+1", "NaN",
        ])
        .prop_map(str::to_owned),
    ];
    leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
            prop::collection::vec((json_string(), inner), 0..4).prop_map(|v| {
                let members: Vec<String> = v.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                format!("{{{}}}", members.join(","))
            }),
        ]
    })
}

fn member(key: &str, value: &str) -> String {
    format!("\"{key}\":{value}")
}

/// A match's `data` object, with rg's members in any order, some missing,
/// some repeated, plus skipped ones.
fn match_data() -> impl Strategy<Value = String> {
    let extras = prop::collection::vec(
        (
            prop_oneof![
                8 => select(vec!["absolute_offset", "submatches", "x", "stats"]),
                1 => select(vec!["path", "lines", "line_number", "p\\u0061th"]),
            ],
            skipped(),
        ),
        0..3,
    );
    (
        proptest::option::weighted(0.97, text_or_bytes()),
        proptest::option::weighted(0.97, text_or_bytes()),
        proptest::option::weighted(0.97, line_number()),
        extras,
        any::<bool>(),
    )
        .prop_flat_map(|(path, lines, number, extras, ordered)| {
            let mut members = Vec::new();
            if let Some(path) = path {
                members.push(member("path", &path));
            }
            if let Some(lines) = lines {
                members.push(member("lines", &lines));
            }
            if let Some(number) = number {
                members.push(member("line_number", &number));
            }
            members.extend(extras.iter().map(|(k, v)| member(k, v)));
            let order = if ordered {
                Just(members).boxed()
            } else {
                Just(members).prop_shuffle().boxed()
            };
            order.prop_map(|m| format!("{{{}}}", m.join(",")))
        })
}

/// A whole record line, possibly damaged.
fn record() -> impl Strategy<Value = String> {
    let kind = prop_oneof![
        8 => Just("\"match\""),
        4 => select(vec!["\"begin\"", "\"end\"", "\"summary\"", "\"context\""]),
        1 => select(vec![
            "\"m\\u0061tch\"", "7", "null", "{\"a\":1}", "\"\\ud800\"", "\"Match\"",
        ]),
    ];
    let data = prop_oneof![
        12 => match_data(),
        2 => skipped(),
    ];
    let extras = prop::collection::vec(
        (
            prop_oneof![
                6 => select(vec!["x", "extra"]),
                1 => select(vec!["type", "data", "typ\\u0065"]),
            ],
            skipped(),
        ),
        0..2,
    );
    let damage = (
        proptest::option::weighted(0.1, any::<prop::sample::Index>()),
        prop_oneof![
            8 => Just(""),
            1 => select(vec![" ", "\r", "\t\r", "x", "}", ",", " {}"]),
        ],
        prop::collection::vec(
            (any::<prop::sample::Index>(), select(vec![" ", "\t", "\r"])),
            0..2,
        ),
    );
    (
        proptest::option::weighted(0.95, kind),
        proptest::option::weighted(0.95, data),
        extras,
        any::<bool>(),
        damage,
    )
        .prop_map(|(kind, data, extras, data_first, (cut, tail, spaces))| {
            let mut members = Vec::new();
            if let Some(kind) = kind {
                members.push(member("type", kind));
            }
            if let Some(data) = data {
                let at = if data_first { 0 } else { members.len() };
                members.insert(at, member("data", &data));
            }
            members.extend(extras.iter().map(|(k, v)| member(k, v)));
            let mut line = format!("{{{}}}{tail}", members.join(","));
            for (at, space) in spaces {
                let at = char_boundary(&line, at.index(line.len() + 1));
                line.insert_str(at, space);
            }
            if let Some(cut) = cut {
                let at = char_boundary(&line, cut.index(line.len() + 1));
                line.truncate(at);
            }
            line
        })
}

fn char_boundary(s: &str, mut at: usize) -> usize {
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// The serde_json reading of a whole stdout, one line at a time.
fn serde_reference(stdout: &str) -> Result<ParsedMatches, SearchError> {
    let mapper = DisplayMapper::new("/w");
    let mut last_path = None;
    let mut matches = MatchList::default();
    let mut parsed = ParsedMatches::default();
    for line in stdout.split('\n').filter(|line| !line.is_empty()) {
        if let Some(MatchRecord {
            found,
            integral_line_number,
        }) = parse_checked(line, &mapper, &mut last_path)?
        {
            if !integral_line_number && parsed.schema_violation.is_none() {
                parsed.schema_violation = Some(format!(
                    "/matches/{}/lineNumber must be integer",
                    matches.len()
                ));
            }
            matches.push(found);
        }
    }
    parsed.matches = matches.finish();
    Ok(parsed)
}

/// A match record as rg prints it.
fn rg_match(path: &str, n: u64, text: &str, offset: u64, submatches: &[String]) -> String {
    let submatches: Vec<serde_json::Value> = submatches
        .iter()
        .map(|m| serde_json::json!({"match": {"text": m}, "start": 0, "end": 1}))
        .collect();
    serde_json::json!({"type": "match", "data": {"path": {"text": path},
        "lines": {"text": text}, "line_number": n, "absolute_offset": offset,
        "submatches": submatches}})
    .to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    /// Identical results and identical errors, line by line.
    #[test]
    fn the_reader_agrees_with_serde_json_on_any_record(line in record()) {
        let (reader, serde) = both(&line);
        prop_assert_eq!(reader, serde, "{}", line);
        if let Some(found) = canonical_match(line.as_bytes(), None) {
            prop_assert_eq!(Some(RgRecord::Match(found)), general_record(line.as_bytes()));
        }
        if canonical_other(line.as_bytes()).is_some() {
            prop_assert_eq!(Some(RgRecord::Other), general_record(line.as_bytes()));
        }
    }

    /// Also on lines that are not records at all.
    #[test]
    fn the_reader_agrees_with_serde_json_on_any_text(
        line in prop_oneof!["\\PC{0,40}", "[{}\\[\\]\":,\\\\ut0-9a-e \t\r.-]{0,60}"]
    ) {
        let (reader, serde) = both(&line);
        prop_assert_eq!(reader, serde, "{}", line);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Whole outputs, including non-UTF-8 bytes decoded lossily as the
    /// capture decodes them: the same matches, first error and first
    /// schema violation.
    #[test]
    fn whole_outputs_agree(
        lines in prop::collection::vec(
            prop_oneof![
                6 => record().prop_map(String::into_bytes),
                1 => prop::collection::vec(any::<u8>(), 0..24),
                1 => Just(b"{\"type\":\"match\",\"data\":{\"path\":{\"text\":\"a\xff\"},\"lines\":{\"text\":\"\xe9\\n\"},\"line_number\":1}}".to_vec()),
            ],
            0..12,
        ),
        crlf in any::<bool>(),
    ) {
        let joined = lines.join(if crlf { &b"\r\n"[..] } else { &b"\n"[..] });
        let stdout = String::from_utf8_lossy(&joined);
        let reader = parse_grep_matches(&stdout, "/w");
        let serde = serde_reference(&stdout);
        prop_assert_eq!(
            reader.as_ref().map(|p| (&p.matches, &p.schema_violation)),
            serde.as_ref().map(|p| (&p.matches, &p.schema_violation))
        );
    }

    /// What rg prints is read by the reader itself, not handed back.
    #[test]
    fn the_reader_answers_for_what_rg_prints(
        path in "(/w/)?[a-zé\\\"\\\\/ ]{0,12}",
        text in "\\PC{0,20}(\r?\n)?",
        n in 0u64..1_000_000,
        offset in any::<u64>(),
        submatches in prop::collection::vec("\\PC{0,4}", 0..3),
    ) {
        let line = rg_match(&path, n, &text, offset, &submatches);
        let canonical = canonical_match(line.as_bytes(), None);
        prop_assert!(canonical.is_some(), "{}", line);
        prop_assert_eq!(canonical.map(RgRecord::Match), general_record(line.as_bytes()));
        let (reader, serde) = both(&line);
        prop_assert_eq!(reader, serde);
    }
}

/// Whether `bytes` is plain string content: no `"`, `\` or control byte.
fn plain(bytes: &[u8]) -> bool {
    !bytes.iter().any(|&b| b == b'"' || b == b'\\' || b < 0x20)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    /// A known previous path (plain string content) reads a match record
    /// exactly as scanning it does: whether the record repeats it, starts
    /// with it, or differs from it.
    #[test]
    fn a_known_previous_path_reads_as_scanning_the_path_would(
        line in prop_oneof![
            record(),
            ("[a-z/. ]{0,12}", "\\PC{0,12}\n").prop_map(|(path, text)| rg_match(&path, 3, &text, 9, &["e".to_owned()])),
        ],
        cut in 0usize..48,
    ) {
        let bytes = line.as_bytes();
        // After `{"type":"match","data":{"path":{"text":` and the quote.
        let from = 40.min(bytes.len());
        let rest = &bytes[from..];
        let mut known = vec![&rest[..cut.min(rest.len())]];
        if let Some(end) = rest.iter().position(|&b| b == b'"') {
            known.push(&rest[..end]);
        }
        for k in known.into_iter().filter(|k| plain(k)) {
            prop_assert_eq!(canonical_match(bytes, Some(k)), canonical_match(bytes, None), "{}", line);
            prop_assert_eq!(read_record(bytes, Some(k)), read_record(bytes, None), "{}", line);
        }
    }
}

proptest! {
    /// rg's `begin` and `end` records are read by their layout, as the
    /// general reader and serde_json read them.
    #[test]
    fn rg_begin_and_end_records_are_read_by_their_layout(
        path in "[a-zé\\\"\\\\/ \u{1}]{0,12}",
        numbers in prop::array::uniform8(any::<u64>()),
        binary_offset in proptest::option::of(any::<u64>()),
        human in "[0-9.s\\\"]{0,10}",
        damage in proptest::option::of(any::<prop::sample::Index>()),
    ) {
        let begin = serde_json::json!({"type": "begin", "data": {"path": {"text": path}}});
        let end = serde_json::json!({"type": "end", "data": {"path": {"text": path},
            "binary_offset": binary_offset, "stats": {"elapsed": {"secs": numbers[0],
            "nanos": numbers[1], "human": human}, "searches": numbers[2],
            "searches_with_match": numbers[3], "bytes_searched": numbers[4],
            "bytes_printed": numbers[5], "matched_lines": numbers[6], "matches": numbers[7]}}});
        for record in [begin, end] {
            let mut line = record.to_string();
            if let Some(cut) = damage {
                let at = char_boundary(&line, cut.index(line.len() + 1));
                line.truncate(at);
            } else {
                prop_assert!(canonical_other(line.as_bytes()).is_some(), "{}", line);
            }
            if canonical_other(line.as_bytes()).is_some() {
                prop_assert_eq!(Some(RgRecord::Other), general_record(line.as_bytes()));
            }
            let (reader, serde) = both(&line);
            prop_assert_eq!(reader, serde);
        }
    }
}

/// The generators reach the reader's own answers often, not only its
/// fallback (a property that always fell back would prove nothing).
#[test]
fn the_generated_records_exercise_both_outcomes() {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    let strategy = record();
    let (mut matched, mut other, mut handed_back) = (0, 0, 0);
    for _ in 0..2000 {
        let Ok(tree) = strategy.new_tree(&mut runner) else {
            continue;
        };
        match read_record(tree.current().as_bytes(), None) {
            Some(RgRecord::Match(_)) => matched += 1,
            Some(RgRecord::Other) => other += 1,
            None => handed_back += 1,
        }
    }
    assert!(
        matched > 150 && other > 250 && handed_back > 500,
        "{matched} {other} {handed_back}"
    );
}
