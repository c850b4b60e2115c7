//! The Text tab through a host lens: a finished call's
//! page as an agent host's model receives it, with the one-line verdict
//! (`fs_search_lens::page_summary`) above it and a marker line where each
//! cut falls. The lensed text itself is never changed: the host's own
//! marker and framing texts are part of it (underlined where they stand
//! in for removed text); the `✂` lines are the workbench's, not the
//! host's. Built once per call and lens, kept with the call.
//!
//! The tool result reaches the lens as `workbench call --host` hands it
//! over: the `CallToolResult` the MCP server sends, through
//! `fs_search_mcp::lens_input`; a call read from a recording has only its
//! text and isError (as `replay --host` lenses it).

use std::cell::OnceCell;
use std::ops::Range;

use fs_search_lens::{LENSES, Lens, ToolResultInput, detect_parts};

use crate::host_report::HostReport;
use crate::interactive::scroll_doc::{Doc, DocLine, LineKind, visible};
use crate::interactive::state::calls::{CallRecord, CallResult};
use crate::interactive::state::lens::LensedPage;
use fs_search_process::thousands;

/// The index of `lens` in [`LENSES`] (where a call keeps its page
/// through it).
pub(crate) fn lens_index(lens: &Lens) -> Option<usize> {
    LENSES.iter().position(|l| std::ptr::eq(l, lens))
}

/// The call's page through `lens` (built on first use, then kept with the
/// call).
pub(crate) fn lensed_page<'a>(
    record: &'a CallRecord,
    lens: &'static Lens,
) -> Option<&'a LensedPage> {
    let index = lens_index(lens)?;
    let pages = record
        .docs
        .lensed
        .get_or_init(|| LENSES.iter().map(|_| OnceCell::new()).collect());
    Some(pages.get(index)?.get_or_init(|| build(record, lens)))
}

/// The tool result as a host receives it from the call.
fn lens_input(record: &CallRecord) -> ToolResultInput {
    match &record.result {
        CallResult::Ran {
            result, duration, ..
        } => {
            let sent = fs_search_mcp::of_tool_result(result, duration.as_secs_f64() * 1000.0);
            fs_search_mcp::lens_input(&sent, &record.tool, &record.args)
        }
        CallResult::Recorded { recorded, .. } => ToolResultInput {
            tool: record.tool.clone(),
            args: record.args.clone(),
            text: recorded.outcome.text.clone(),
            is_error: recorded.outcome.is_error,
            duration_secs: None,
        },
    }
}

fn build(record: &CallRecord, lens: &'static Lens) -> LensedPage {
    let input = lens_input(record);
    // The engine says where its footer is; a recording's page is read.
    let parts = match record.ran() {
        Some(result) => result.parts.clone(),
        None => detect_parts(&input.text),
    };
    let report = HostReport::new(lens, &input, &parts);
    let summary = report.summary();
    let lensed = report.lensed;
    let cuts = cut_points(lensed.framed.text(), &lensed.kept, &lensed.text);
    let name = lens.name();
    let doc = lensed_doc(&name, &summary, &lensed.notes, &lensed.text, &cuts);
    LensedPage {
        summary,
        text: lensed.text,
        doc,
    }
}

/// Where a host's cut falls in the text its model receives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CutAt {
    /// The byte offset in the lensed text where the removed text was.
    pub at: usize,
    /// The host's own text in its place (marker, hint), a byte range of
    /// the lensed text; empty when the host says nothing there.
    pub host_text: Range<usize>,
    /// How much of the framed text is gone there.
    pub removed_bytes: usize,
    /// How many lines of the framed text the removed bytes touch.
    pub removed_lines: usize,
}

/// The cuts of a lens that kept the byte ranges `kept` (sorted, disjoint)
/// of `framed` verbatim in `text`: each kept range is found in `text` in
/// order, and what lies between is the host's. A framed text whose kept
/// ranges cannot be found (no lens does that) gets one cut at the end.
pub(crate) fn cut_points(framed: &str, kept: &[Range<usize>], text: &str) -> Vec<CutAt> {
    let cut = |at: usize, host_text: Range<usize>, removed: &str| CutAt {
        at,
        host_text,
        removed_bytes: removed.len(),
        removed_lines: removed.split_terminator('\n').count().max(1),
    };
    let mut cuts = Vec::new();
    // Where the previous kept range ends, in the framed and lensed text.
    let (mut framed_end, mut text_end) = (0, 0);
    for range in kept.iter().filter(|r| r.start < r.end) {
        let Some(piece) = framed.get(range.clone()) else {
            continue;
        };
        let Some(found) = text.get(text_end..).and_then(|rest| rest.find(piece)) else {
            let removed = framed
                .len()
                .saturating_sub(kept.iter().map(|r| r.len()).sum());
            return vec![CutAt {
                at: text.len(),
                host_text: text.len()..text.len(),
                removed_bytes: removed,
                removed_lines: 0,
            }];
        };
        let start = text_end + found;
        if range.start > framed_end {
            let removed = framed.get(framed_end..range.start).unwrap_or_default();
            cuts.push(cut(text_end, text_end..start, removed));
        }
        framed_end = range.end;
        text_end = start + piece.len();
    }
    if framed_end < framed.len() {
        let removed = framed.get(framed_end..).unwrap_or_default();
        cuts.push(cut(text_end, text_end..text.len(), removed));
    }
    cuts
}

/// The Text tab's document of a lensed page: the verdict, the lens's
/// notes, then `text` numbered (exactly as the host's model receives it)
/// with a `✂` line where each of `cuts` falls and the host's own text
/// underlined. A cut inside a line breaks the line's display there: the
/// rest of the line follows the marker, unnumbered (the text is not
/// changed, only drawn on separate rows).
pub(crate) fn lensed_doc(
    name: &str,
    summary: &str,
    notes: &[String],
    text: &str,
    cuts: &[CutAt],
) -> Doc {
    let mut doc = Doc::default();
    doc.push(summary, LineKind::Heading);
    for note in notes {
        doc.push(&format!("note: {note}"), LineKind::Note);
    }
    let mut sorted: Vec<&CutAt> = cuts.iter().collect();
    sorted.sort_by_key(|cut| cut.at);
    let mut pending = sorted.into_iter().peekable();
    let host: Vec<&Range<usize>> = cuts.iter().map(|cut| &cut.host_text).collect();
    let mut lines = doc.lines;
    let mut start = 0;
    for (index, line) in text.split('\n').enumerate() {
        let end = start + line.len();
        let mut from = start;
        let mut number = Some(index + 1);
        // A cut at the line's start goes before it, at its end after it.
        while let Some(cut) = pending.next_if(|cut| cut.at <= end) {
            let at = cut.at.max(from);
            if at > from {
                lines.push(segment(text, from..at, number.take(), &host));
                from = at;
            }
            lines.push(DocLine {
                text: marker_text(name, cut),
                kind: LineKind::Cut,
                number: None,
                mark: None,
            });
        }
        if from < end || number.is_some() {
            lines.push(segment(text, from..end, number, &host));
        }
        start = end + 1;
    }
    Doc::new(lines)
}

/// The display line of `range` of `text` (a line, or the part of one
/// between cuts), the first of the `host` ranges it overlaps underlined
/// (at the display text's own offsets: control characters are wider
/// there).
fn segment(
    text: &str,
    range: Range<usize>,
    number: Option<usize>,
    host: &[&Range<usize>],
) -> DocLine {
    let mark = host.iter().find_map(|h| {
        let (a, b) = (h.start.max(range.start), h.end.min(range.end));
        let head = text.get(range.start..a)?;
        let marked = text.get(range.start..b)?;
        (a < b).then(|| visible(head).len()..visible(marked).len())
    });
    DocLine {
        text: visible(text.get(range).unwrap_or_default()),
        kind: LineKind::Body,
        number,
        mark,
    }
}

/// `codex@0.120 removed 12,345 bytes here (67 lines of the framed text)`.
fn marker_text(name: &str, cut: &CutAt) -> String {
    let lines = match cut.removed_lines {
        0 => String::new(),
        1 => " (1 line of the framed text)".to_owned(),
        n => format!(" ({} lines of the framed text)", thousands(n)),
    };
    format!(
        "{name} removed {} bytes here{lines}",
        thousands(cut.removed_bytes)
    )
}

/// The text a lensed document draws, its lines joined again (a line
/// broken at a cut continues unnumbered), as display text.
#[cfg(test)]
pub(crate) fn drawn_text(doc: &Doc) -> String {
    let mut out = String::new();
    for (i, line) in doc
        .lines
        .iter()
        .filter(|l| l.kind == LineKind::Body)
        .enumerate()
    {
        if i > 0 && line.number.is_some() {
            out.push('\n');
        }
        out.push_str(&line.text);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One kept range (clippy reads `&[a..b]` as a mistaken range).
    fn one(range: Range<usize>) -> Vec<Range<usize>> {
        std::iter::once(range).collect()
    }

    fn texts(doc: &Doc) -> Vec<(String, LineKind, Option<usize>)> {
        doc.lines
            .iter()
            .map(|l| (l.text.clone(), l.kind, l.number))
            .collect()
    }

    #[test]
    fn a_middle_cut_is_found_between_the_kept_head_and_tail() {
        let framed = "aaaa\nbbbb\ncccc\ndddd";
        let text = "aaaa\nbb…9 chars truncated…cc\ndddd";
        let cuts = cut_points(framed, &[0..7, 12..19], text);
        let marker = "…9 chars truncated…";
        assert_eq!(
            cuts,
            [CutAt {
                at: 7,
                host_text: 7..7 + marker.len(),
                removed_bytes: 5,
                removed_lines: 2,
            }]
        );
        assert_eq!(&text[cuts[0].host_text.clone()], marker);
    }

    #[test]
    fn a_head_cut_and_a_text_passed_whole() {
        let framed = "line 1\nline 2\nline 3\n";
        let text = "line 1\n...14 bytes truncated...";
        let cuts = cut_points(framed, &one(0..7), text);
        assert_eq!(cuts.len(), 1);
        assert_eq!((cuts[0].at, cuts[0].removed_bytes), (7, 14));
        assert_eq!(cuts[0].removed_lines, 2);
        assert_eq!(cut_points(framed, &one(0..framed.len()), framed), []);
    }

    #[test]
    fn a_cut_at_the_start_and_a_lens_that_keeps_nothing() {
        // A tail-only cut: the host's header, then the end of the text.
        let framed = "head\ntail";
        let text = "[cut]\ntail";
        let cuts = cut_points(framed, &one(5..9), text);
        assert_eq!(cuts.len(), 1);
        assert_eq!((cuts[0].at, cuts[0].host_text.clone()), (0, 0..6));
        assert_eq!(cuts[0].removed_bytes, 5);
        let cuts = cut_points(framed, &[], "saved to a file");
        assert_eq!((cuts[0].at, cuts[0].removed_bytes), (0, 9));
    }

    #[test]
    fn the_doc_has_the_verdict_the_numbered_text_and_a_marker_where_the_cut_falls() {
        let framed = "aaaa\nbbbb\ncccc\ndddd";
        let text = "aaaa\nbb…cut…cc\ndddd";
        let cuts = cut_points(framed, &[0..7, 12..19], text);
        let doc = lensed_doc(
            "host@1",
            "host@1 removes 26% from the middle",
            &[],
            text,
            &cuts,
        );
        let verdict = "host@1 removes 26% from the middle".to_owned();
        let marker = "host@1 removed 5 bytes here (2 lines of the framed text)".to_owned();
        // The line the cut falls in is drawn in two parts around the marker.
        assert_eq!(
            texts(&doc),
            [
                (verdict, LineKind::Heading, None),
                ("aaaa".to_owned(), LineKind::Body, Some(1)),
                ("bb".to_owned(), LineKind::Body, Some(2)),
                (marker, LineKind::Cut, None),
                ("…cut…cc".to_owned(), LineKind::Body, None),
                ("dddd".to_owned(), LineKind::Body, Some(3)),
            ]
        );
        assert_eq!(drawn_text(&doc), text);
        // The host's marker is underlined where it stands.
        let marked = &doc.lines[4];
        assert_eq!(&marked.text[marked.mark.clone().unwrap()], "…cut…");
    }

    #[test]
    fn a_cut_at_a_line_end_puts_its_marker_after_that_line() {
        let framed = "one\ntwo\nthree";
        let text = "one\n[cut]";
        let cuts = cut_points(framed, &one(0..3), text);
        assert_eq!(cuts[0].at, 3);
        let lines = texts(&lensed_doc("h@1", "v", &[], text, &cuts));
        assert_eq!(lines[1], ("one".to_owned(), LineKind::Body, Some(1)));
        assert_eq!(lines[2].1, LineKind::Cut);
        assert_eq!(lines[3], ("[cut]".to_owned(), LineKind::Body, Some(2)));
        assert_eq!(lines.len(), 4);
    }

    #[test]
    fn a_cut_at_a_line_start_puts_its_marker_before_that_line() {
        let framed = "one\ntwo\nthree\n";
        let text = "one\n[2 lines cut]\n";
        let cuts = cut_points(framed, &one(0..4), text);
        let doc = lensed_doc("h@1", "verdict", &["a note".to_owned()], text, &cuts);
        let lines = texts(&doc);
        assert_eq!(lines[1], ("note: a note".to_owned(), LineKind::Note, None));
        assert_eq!(lines[2], ("one".to_owned(), LineKind::Body, Some(1)));
        assert_eq!(lines[3].1, LineKind::Cut);
        assert_eq!(
            lines[4],
            ("[2 lines cut]".to_owned(), LineKind::Body, Some(2))
        );
    }

    #[test]
    fn control_characters_widen_the_mark_to_the_display_offsets() {
        let framed = "a\tbXXXX";
        let text = "a\tb[c\tut]";
        let cuts = cut_points(framed, &one(0..3), text);
        let doc = lensed_doc("h@1", "v", &[], text, &cuts);
        assert_eq!(doc.lines[1].text, "a\u{2409}b");
        let rest = &doc.lines[3];
        assert_eq!(rest.number, None);
        assert_eq!(&rest.text[rest.mark.clone().unwrap()], "[c\u{2409}ut]");
    }
}
