//! Turns one finished call into the documents its tabs show: the exact
//! model-visible text (footer and spill locator marked, text unchanged),
//! the canonical value, the presentation meta, and the call's details.

use fs_search_engine::ToolResult;
use serde::Serialize;
use serde_json::Value;

use crate::tui::doc::{Doc, LineKind, visible};

/// Openings of the footer paragraph the engine appends to an over-cap
/// page (CONTRACT §5.8, §6.5, §8.4).
const FOOTER_OPENINGS: [&str; 3] = [
    "(Showing ",
    "(Full grep result stored at: ",
    "(The complete result could not be saved",
];

/// Byte offset where the footer paragraph of `text` starts, if it has one:
/// the last paragraph, a single line in parentheses with a footer opening.
pub fn footer_start(text: &str) -> Option<usize> {
    let start = text.rfind("\n\n")? + 2;
    let last = &text[start..];
    let is_footer = !last.contains('\n')
        && last.ends_with(')')
        && FOOTER_OPENINGS.iter().any(|o| last.starts_with(o));
    is_footer.then_some(start)
}

/// Byte offset of the footer paragraph in `result`'s text, if it has
/// one (errors never do). The one place that decides where a footer is.
fn footer_of(result: &ToolResult) -> Option<usize> {
    footer_start(&result.text).filter(|_| !result.is_error)
}

/// The model-visible text, numbered; the footer line is marked as such
/// and the spill locator inside it is marked for emphasis.
pub fn text_doc(result: &ToolResult) -> Doc {
    let mut doc = Doc::numbered(&result.text, LineKind::Body);
    let Some(start) = footer_of(result) else {
        return doc;
    };
    let footer_line = result.text[..start].matches('\n').count();
    if let Some(line) = doc.lines.get_mut(footer_line) {
        line.kind = LineKind::Footer;
        if let Some(spill) = &result.spill {
            let locator = visible(&spill.locator);
            line.mark = line.text.find(&locator).map(|at| at..at + locator.len());
        }
    }
    doc
}

/// Pretty JSON of `value`, numbered, or a note when there is none.
pub fn json_doc<T: Serialize>(value: Option<&T>, none: &str) -> Doc {
    match value.map(serde_json::to_string_pretty) {
        Some(Ok(json)) => Doc::numbered(&json, LineKind::Body),
        Some(Err(e)) => Doc::plain([format!("cannot show: {e}").as_str()], LineKind::Alert),
        None => Doc::plain([none], LineKind::Note),
    }
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// What the call sent and got besides the text.
pub struct CallFacts<'a> {
    pub id: u64,
    pub call_id: &'a str,
    pub session_id: &'a str,
    pub tool: &'a str,
    pub args: &'a Value,
    pub config: &'a Value,
    pub duration_ms: f64,
    pub result: &'a ToolResult,
}

/// The call's details: arguments, config, error, spill, warnings.
pub fn details_doc(f: &CallFacts<'_>) -> Doc {
    let r = f.result;
    let mut doc = Doc::default();
    doc.push(&format!("call #{} · {}", f.id, f.tool), LineKind::Heading);
    doc.push(&format!("args sent   {}", compact(f.args)), LineKind::Body);
    doc.push(
        &format!("config      {}", compact(f.config)),
        LineKind::Body,
    );
    doc.push(
        &format!("callId      {}   session {}", f.call_id, f.session_id),
        LineKind::Note,
    );
    doc.push(
        &format!("duration    {:.1} ms", f.duration_ms),
        LineKind::Body,
    );
    doc.push(
        &format!(
            "text        {} bytes, {} lines",
            r.text.len(),
            r.text.split('\n').count()
        ),
        LineKind::Body,
    );
    doc.push(&format!("isError     {}", r.is_error), LineKind::Body);
    match &r.error {
        Some(e) => {
            let name = e.name().map_or("null".to_owned(), |n| format!("{n:?}"));
            let code = e.code_str().map_or("null".to_owned(), |c| format!("{c:?}"));
            doc.push(
                &format!("error       {{name: {name}, code: {code}}}"),
                LineKind::Alert,
            );
            doc.push(&format!("message     {}", e.message), LineKind::Alert);
            if e.code.is_none() {
                doc.push(
                    "            (a plain error of the package: no name/code, like the original)",
                    LineKind::Note,
                );
            }
        }
        None => doc.push("error       null", LineKind::Body),
    }
    match &r.spill {
        Some(s) => {
            doc.push(&format!("spill       {}", s.locator), LineKind::Footer);
            doc.push(
                &format!("            {} bytes saved", s.bytes),
                LineKind::Body,
            );
            doc.push(
                &format!("            hint: {}", s.retrieval_hint),
                LineKind::Body,
            );
        }
        None => doc.push("spill       null", LineKind::Body),
    }
    if r.warnings.is_empty() {
        doc.push("warnings    none", LineKind::Body);
    }
    for w in &r.warnings {
        doc.push(&format!("warning     {w}"), LineKind::Alert);
    }
    for c in &r.additional_contexts {
        doc.push(&format!("context     {c}"), LineKind::Body);
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_footer_paragraph_of_every_shape() {
        let glob = "a\nb\n\n(Showing 2 of 5 paths. The complete result could not be saved; narrow pattern or path to see more.)";
        assert_eq!(footer_start(glob), Some(5));
        let grep = "Found 1 of 2 matches\n\nx\nLine 1: y\n\n(Full grep result stored at: /s/1-grep.txt. Use read.)";
        assert!(footer_start(grep).is_some_and(|s| grep[s..].starts_with("(Full grep")));
        let grep_unsaved = "Found 1 of 2 matches\n\nx\nLine 1: y\n\n(The complete result could not be saved; narrow pattern, path, or include to see more.)";
        assert!(footer_start(grep_unsaved).is_some());
    }

    #[test]
    fn a_page_without_a_footer_has_none() {
        assert_eq!(footer_start("a\nb"), None);
        assert_eq!(footer_start("Found 2 matches\n\nx\nLine 1: (y)"), None);
        assert_eq!(
            footer_start("Found 2 matches\n\n(Showing x)\nLine 1: y)"),
            None
        );
    }
}
