//! Turns one finished call into the documents its tabs show: the exact
//! model-visible text (footer and spill locator marked, text unchanged),
//! the canonical value, the presentation meta, and the call's details.

use fs_search_engine::ToolResult;
use serde::Serialize;
use serde_json::Value;

use crate::tui::doc::{Doc, LineKind, visible};

/// Byte offset of the footer paragraph in `result`'s text, as the engine
/// rendered it (errors never have one).
fn footer_of(result: &ToolResult) -> Option<usize> {
    result.parts.footer.as_ref().map(|footer| footer.start)
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
        if let Some(locator) = result.locator() {
            let locator = visible(locator);
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
