//! GitHub Actions (`workbench replay --format github`, or
//! `GITHUB_ACTIONS=true`): workflow commands that annotate the transcript
//! at each record's line, and a Markdown summary for
//! `$GITHUB_STEP_SUMMARY`.
//!
//! Annotations: `::error` for a changed record (titled by its kind: the
//! engine's text, or only rg's own text, and its name), at the first line
//! of its recorded page that differs (a text line where one does), for a record over
//! `--max-tokens` and for a transcript that cannot be replayed;
//! `::notice` for a transcript recorded with another rg, for grep pages
//! compared without order (0.1.0-rc.8 leaves their order to rg) and for
//! records `--update` rewrote. Their data escapes `%`, `\r` and `\n`; their
//! properties also `:` and `,` (GitHub's rules).

use std::fmt::Write as _;

use super::{Counts, FileReport, ReportOptions, Verdict, order_free_records, other_rg_note};
use crate::replay::Difference;
use crate::variants::{compared_with_another_rg, missing_variant_note};
use fs_search_process::thousands;

/// The workflow commands for one file, a line each.
pub fn annotations(file: &FileReport, options: &ReportOptions) -> String {
    let mut out = String::new();
    let path = &file.file;
    let done = match &file.result {
        Ok(done) => done,
        Err(e) => {
            command(
                &mut out,
                "error",
                path,
                file.error_line(),
                "Transcript cannot be replayed",
                &e.to_string(),
            );
            return out;
        }
    };
    let replay = &done.replay;
    if let Some(note) = other_rg_note(replay) {
        command(
            &mut out,
            "notice",
            path,
            Some(1),
            "Recorded with another rg",
            &format!(
                "{note}: records with a variant for this rg are compared with it, the others with the recorded text"
            ),
        );
    }
    let (unordered, not_compared) = order_free_records(replay);
    if !unordered.is_empty() || !not_compared.is_empty() {
        let mut message = format!(
            "{} runs rg with --no-config, so the header's --sort never reaches it and a grep lists files in rg's own order.",
            replay.release
        );
        if !unordered.is_empty() {
            message.push_str(&format!(
                "\nCompared without order (the page's blocks as a set): {}",
                unordered.join(", ")
            ));
        }
        if !not_compared.is_empty() {
            message.push_str(&format!(
                "\nCapped pages whose matches shown were not compared (only the summary line, footer, spill and number of matches shown): {}",
                not_compared.join(", ")
            ));
        }
        command(
            &mut out,
            "notice",
            path,
            Some(1),
            "Grep pages not compared exactly",
            &message,
        );
    }
    let missing_variant = missing_variant_note(replay);
    for check in &replay.checks {
        let verdict = Verdict::of(check, options.max_tokens);
        let name = &check.record.call.name;
        let line = Some(check.record.line);
        // A changed record is annotated where its recorded page first
        // differs, the message saying which record and where it starts.
        let changed_at = check.first_changed_line().or(line);
        let changed_message = || {
            let mut message = format!(
                "record \"{name}\" (its call at line {}) differs from line {} on\n",
                check.record.line,
                changed_at.unwrap_or(check.record.line)
            );
            if let Some(note) = missing_variant
                .as_ref()
                .filter(|_| compared_with_another_rg(check))
            {
                message.push_str(note);
                message.push('\n');
            }
            message.push_str(&check.diff(path));
            message
        };
        match verdict.difference {
            Some(_) if file.updated => command(
                &mut out,
                "notice",
                path,
                changed_at,
                &format!("Record updated: \"{name}\""),
                &changed_message(),
            ),
            Some(Difference::Engine) => command(
                &mut out,
                "error",
                path,
                changed_at,
                &format!("Record changed: \"{name}\" (the engine's text or the kind of result)"),
                &changed_message(),
            ),
            Some(Difference::RgText) => command(
                &mut out,
                "error",
                path,
                changed_at,
                &format!(
                    "Record changed only in rg's own text: \"{name}\" (recorded with {}, this is {})",
                    replay.transcript.header.env.rg, replay.rg_now
                ),
                &changed_message(),
            ),
            None => {}
        }
        if let (Some(tokens), Some(max)) = (verdict.over_budget, options.max_tokens) {
            command(
                &mut out,
                "error",
                path,
                line,
                &format!("Over the token budget: \"{name}\""),
                &format!("{tokens} tokens > --max-tokens {max}"),
            );
        }
    }
    out
}

/// Appends `::KIND file=…,line=…,title=…::MESSAGE` to `out`.
fn command(
    out: &mut String,
    kind: &str,
    file: &str,
    line: Option<usize>,
    title: &str,
    message: &str,
) {
    let _ = write!(out, "::{kind} file={}", property(file));
    if let Some(line) = line {
        let _ = write!(out, ",line={line}");
    }
    let _ = writeln!(out, ",title={}::{}", property(title), data(message));
}

/// A command's message: `%`, `\r` and `\n` escaped.
pub(crate) fn data(raw: &str) -> String {
    raw.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// A command's property value: as [`data`], and `:` and `,`.
pub(crate) fn property(raw: &str) -> String {
    data(raw).replace(':', "%3A").replace(',', "%2C")
}

/// The Markdown summary of a run: the counts, a row per transcript, and
/// each record that fails with its diff.
pub fn summary(files: &[FileReport], options: &ReportOptions) -> String {
    let mut total = Counts::default();
    let mut rows = String::new();
    let mut failing = String::new();
    let mut diffs = String::new();
    let mut errors = 0;
    for file in files {
        let path = cell(&file.file);
        let done = match &file.result {
            Ok(done) => done,
            Err(e) => {
                errors += 1;
                let _ = writeln!(
                    rows,
                    "| {path} | error: {} | | | | | | |",
                    cell(&e.to_string())
                );
                continue;
            }
        };
        let counts = Counts::of(file, options);
        total.add(&counts);
        let _ = writeln!(
            rows,
            "| {path} | {} | {} | {} | {} | {} | {} | {} |",
            counts.records,
            counts.matching,
            counts.changed() + counts.updated,
            counts.over_budget,
            counts.skipped,
            tokens(counts.tokens_before),
            tokens(counts.tokens_after),
        );
        let replay = &done.replay;
        for check in &replay.checks {
            let verdict = Verdict::of(check, options.max_tokens);
            let kind = match (verdict.difference, file.updated) {
                (Some(_), true) => "updated",
                (Some(Difference::Engine), false) => "changed: the engine's text",
                (Some(Difference::RgText), false) => "changed: only rg's own text",
                (None, _) if verdict.over_budget.is_some() => "over the token budget",
                (None, _) => continue,
            };
            let kind = match (verdict.difference, verdict.over_budget) {
                (Some(_), Some(_)) => format!("{kind}; over the token budget"),
                _ => kind.to_owned(),
            };
            let place = format!("{}:{}", file.file, check.record.line);
            let _ = writeln!(
                failing,
                "| {} | {} | {kind} | {} | {} |",
                cell(&check.record.call.name),
                cell(&place),
                tokens(check.expected().tokens),
                tokens(check.current.tokens),
            );
            if verdict.difference.is_some() {
                let diff = check.diff(&file.file);
                let fence = fence_for(&diff);
                let _ = write!(
                    diffs,
                    "<details><summary>{} ({})</summary>\n\n{fence}diff\n{diff}{fence}\n\n</details>\n\n",
                    html(&check.record.call.name),
                    html(&place),
                );
            }
        }
    }
    let mut out = String::from("## workbench replay\n\n");
    let share = options
        .shard
        .map_or(String::new(), |s| format!(" (shard {s})"));
    let _ = writeln!(
        out,
        "{} transcripts{share}, {} records: {} match, {} changed ({} in the engine's text, {} only in rg's own text), {} updated, {} over the token budget, {} compared with another rg's text, {} outcomes for another rg skipped; {errors} transcripts could not be replayed.\n",
        files.len(),
        total.records,
        total.matching,
        total.changed(),
        total.engine,
        total.rg_text,
        total.updated,
        total.over_budget,
        total.other_rg,
        total.skipped,
    );
    let _ = writeln!(
        out,
        "Tokens before → after (records carrying both): {} → {}\n",
        tokens(total.tokens_before),
        tokens(total.tokens_after)
    );
    out.push_str("| transcript | records | match | changed | over budget | skipped | tokens before | tokens after |\n|---|---:|---:|---:|---:|---:|---:|---:|\n");
    out.push_str(&rows);
    if !failing.is_empty() {
        out.push_str("\n### Failing records\n\n| record | where | what | tokens before | tokens after |\n|---|---|---|---:|---:|\n");
        out.push_str(&failing);
        out.push('\n');
        out.push_str(&diffs);
    }
    out.push('\n');
    out
}

fn tokens(count: Option<u64>) -> String {
    count.map_or("–".to_owned(), |n| {
        thousands(usize::try_from(n).unwrap_or(usize::MAX))
    })
}

/// `raw` in a table cell: as [`html`], with `|` and Markdown's inline
/// marks escaped.
fn cell(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in html(raw).chars() {
        if matches!(c, '|' | '\\' | '`' | '*' | '_' | '[' | ']') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `raw` as HTML text: markup escaped, control characters as `\u0007`
/// (line ends as spaces).
fn html(raw: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out
}

/// A code fence longer than any run of backticks in `body`.
fn fence_for(body: &str) -> String {
    let longest = body.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_escapes_percent_and_line_ends_and_properties_also_colon_and_comma() {
        assert_eq!(data("50% a\r\nb: c, d"), "50%25 a%0D%0Ab: c, d");
        assert_eq!(property("50% a\nb: c, d"), "50%25 a%0Ab%3A c%2C d");
        let mut out = String::new();
        command(
            &mut out,
            "error",
            "t,1.jsonl",
            Some(7),
            "Record changed: \"x\"",
            "-a\n+b",
        );
        assert_eq!(
            out,
            "::error file=t%2C1.jsonl,line=7,title=Record changed%3A \"x\"::-a%0A+b\n"
        );
    }

    #[test]
    fn a_fence_is_longer_than_any_backtick_run_and_cells_escape_pipes() {
        assert_eq!(fence_for("a ``` b"), "````");
        assert_eq!(fence_for("plain"), "```");
        assert_eq!(cell("a|b<c>\n`d`\u{7}"), r"a\|b&lt;c&gt; \`d\`\\u0007");
    }
}
