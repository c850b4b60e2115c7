//! The JUnit XML report (`workbench replay --junit FILE`), in the shape
//! CI systems read (Jenkins, GitLab, GitHub test reporters): a
//! `<testsuite>` per transcript (name and classname: the path), a
//! `<testcase>` per replayed record (name: the record's call name) with
//! the tool, the arguments and the rg versions as properties (and
//! `another-rg` when the record was compared with text another rg major
//! version wrote; `contract` when it ran as another release than the
//! header's; `comparison` (`order-free` or `matches-not-compared`) and
//! `comparison-note` when its grep page was not compared exactly, as
//! under 0.1.0-rc.8, whose file order is rg's), and
//!
//! - a `<failure type="changed">` (the engine's text or the kind of
//!   result), `type="rg-text"` (only text rg writes itself, compared with
//!   what another rg major version wrote) or `type="over-budget"`
//!   (`--max-tokens`), the unified diff or the count as its text;
//! - a `<skipped>` testcase per recorded outcome this run does not compare
//!   (the variant for another rg major version), named `NAME (rg 15)`;
//! - an `<error>` testcase for a transcript that cannot be read or set up.
//!
//! Text is escaped for XML 1.0, including the control characters it
//! cannot carry at all (written as `\u001b`).

use std::fmt::Write as _;

use super::{
    FileReport, ReportOptions, Verdict, compared_with, comparison_note, skipped_snapshots,
};
use crate::replay::Difference;

/// The whole report for `files`.
pub fn report(files: &[FileReport], options: &ReportOptions) -> String {
    let suites: Vec<Suite> = files.iter().map(|f| suite(f, options)).collect();
    let sum = |f: fn(&Suite) -> usize| suites.iter().map(f).sum::<usize>();
    let time: f64 = suites.iter().map(|s| s.time).sum();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"workbench replay\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{time:.3}\">",
        sum(|s| s.tests),
        sum(|s| s.failures),
        sum(|s| s.errors),
        sum(|s| s.skipped),
    );
    for suite in &suites {
        out.push_str(&suite.xml);
    }
    out.push_str("</testsuites>\n");
    out
}

/// One `<testsuite>` and its counts.
struct Suite {
    xml: String,
    tests: usize,
    failures: usize,
    errors: usize,
    skipped: usize,
    time: f64,
}

fn suite(file: &FileReport, options: &ReportOptions) -> Suite {
    let name = attr(&file.file);
    let done = match &file.result {
        Ok(done) => done,
        Err(e) => {
            let message = e.to_string();
            let line = file
                .error_line()
                .map_or(String::new(), |l| format!(" line=\"{l}\""));
            let xml = format!(
                "  <testsuite name=\"{name}\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0.000\">\n    <testcase name=\"replay\" classname=\"{name}\" file=\"{name}\"{line} time=\"0.000\">\n      <error type=\"transcript-error\" message=\"{}\">{}</error>\n    </testcase>\n  </testsuite>\n",
                attr(&message),
                text(&message)
            );
            return Suite {
                xml,
                tests: 1,
                failures: 0,
                errors: 1,
                skipped: 0,
                time: 0.0,
            };
        }
    };
    let replay = &done.replay;
    let header_rg = &replay.transcript.header.env.rg;
    let mut cases = String::new();
    let (mut tests, mut failures, mut skipped, mut time) = (0, 0, 0, 0.0);
    for (check, took) in replay.checks.iter().zip(&done.durations) {
        let verdict = Verdict::of(check, options.max_tokens);
        let call = &check.record.call;
        let seconds = took.as_secs_f64();
        time += seconds;
        tests += 1;
        let _ = writeln!(
            cases,
            "    <testcase name=\"{}\" classname=\"{name}\" file=\"{name}\" line=\"{}\" time=\"{seconds:.3}\">",
            attr(&call.name),
            check.record.line
        );
        cases.push_str("      <properties>\n");
        let mut property = |key: &str, value: &str| {
            let _ = writeln!(
                cases,
                "        <property name=\"{key}\" value=\"{}\"/>",
                attr(value)
            );
        };
        property("tool", &call.tool);
        property("args", &call.args.to_string());
        property("rg", &replay.rg_now);
        property("recorded-with", &compared_with(check, replay));
        if verdict.other_rg {
            // Compared with text another rg major version wrote.
            property("another-rg", "true");
        }
        if check.release != check.recorded_release {
            property("contract", check.release.name());
        }
        if let Some(note) = comparison_note(check) {
            property("comparison", check.comparison().name());
            property("comparison-note", &note);
        }
        if let Some(tokens) = check.expected().tokens {
            property("tokens-recorded", &tokens.to_string());
        }
        if let Some(tokens) = check.current.tokens {
            property("tokens-now", &tokens.to_string());
        }
        cases.push_str("      </properties>\n");
        let mut failed = false;
        match verdict.difference {
            Some(_) if file.updated => {
                let _ = writeln!(
                    cases,
                    "      <system-out>updated: --update wrote the current result over the recorded one\n{}</system-out>",
                    text(&check.diff(&replay.file))
                );
            }
            Some(kind) => {
                failed = true;
                let (kind, what) = match kind {
                    Difference::Engine => (
                        "changed",
                        "differs from what was recorded (the engine's text or the kind of result)"
                            .to_owned(),
                    ),
                    Difference::RgText => (
                        "rg-text",
                        format!(
                            "differs only in rg's own text (its stderr, its file order; recorded with {header_rg}, this is {})",
                            replay.rg_now
                        ),
                    ),
                };
                let message = format!("record \"{}\" {what}", call.name);
                let _ = writeln!(
                    cases,
                    "      <failure type=\"{kind}\" message=\"{}\">{}</failure>",
                    attr(&message),
                    text(&check.diff(&replay.file))
                );
            }
            None => {}
        }
        if let (Some(tokens), Some(max)) = (verdict.over_budget, options.max_tokens) {
            failed = true;
            let message = format!(
                "record \"{}\": {tokens} tokens > --max-tokens {max}",
                call.name
            );
            let _ = writeln!(
                cases,
                "      <failure type=\"over-budget\" message=\"{}\">{}</failure>",
                attr(&message),
                text(&message)
            );
        }
        failures += usize::from(failed);
        cases.push_str("    </testcase>\n");
        for snapshot in skipped_snapshots(check, &replay.rg_now, header_rg) {
            tests += 1;
            skipped += 1;
            let _ = writeln!(
                cases,
                "    <testcase name=\"{} ({})\" classname=\"{name}\" file=\"{name}\" line=\"{}\" time=\"0.000\">\n      <skipped message=\"{}\"/>\n    </testcase>",
                attr(&call.name),
                attr(&snapshot.label),
                check.record.line,
                attr(&snapshot.reason)
            );
        }
    }
    let mut xml = format!(
        "  <testsuite name=\"{name}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" time=\"{time:.3}\">\n    <properties>\n"
    );
    let mut property = |key: &str, value: &str| {
        let _ = writeln!(
            xml,
            "      <property name=\"{key}\" value=\"{}\"/>",
            attr(value)
        );
    };
    property("rg", &replay.rg_now);
    property("recorded-with", header_rg);
    property("tree", &replay.transcript.header.tree);
    if let Some(shard) = options.shard {
        property("shard", &shard.to_string());
    }
    xml.push_str("    </properties>\n");
    xml.push_str(&cases);
    xml.push_str("  </testsuite>\n");
    Suite {
        xml,
        tests,
        failures,
        errors: 0,
        skipped,
        time,
    }
}

/// `raw` as XML 1.0 character data: markup escaped, `\r` as a character
/// reference (a parser would turn a raw one into `\n`), and the
/// characters XML 1.0 cannot carry at all written as `\uXXXX`.
pub(crate) fn text(raw: &str) -> String {
    escape(raw, false)
}

/// `raw` as an XML 1.0 attribute value (in double quotes): as [`text`],
/// with quotes, tabs and newlines as character references (a parser
/// would turn raw ones into spaces).
pub(crate) fn attr(raw: &str) -> String {
    escape(raw, true)
}

fn escape(raw: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#13;"),
            '"' if attribute => out.push_str("&quot;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            '\t' | '\n' => out.push(c),
            c if allowed_in_xml(c) => out.push(c),
            c => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
        }
    }
    out
}

/// Whether XML 1.0 can carry `c` (its `Char` production; tab, newline
/// and carriage return are handled before).
fn allowed_in_xml(c: char) -> bool {
    matches!(c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_line_ends_are_escaped_and_forbidden_characters_written_out() {
        assert_eq!(text("a<b>&c\"d"), "a&lt;b&gt;&amp;c\"d");
        assert_eq!(attr("a\"b\n\tc\r"), "a&quot;b&#10;&#9;c&#13;");
        assert_eq!(text("x\ny\tz\r"), "x\ny\tz&#13;");
        assert_eq!(
            text("\u{1b}[31m\u{0}\u{7}\u{fffe}\u{ffff}"),
            "\\u001b[31m\\u0000\\u0007\\ufffe\\uffff"
        );
        assert_eq!(text("é\u{10348}\u{fffd}"), "é\u{10348}\u{fffd}");
        assert_eq!(text("]]>"), "]]&gt;");
    }
}
