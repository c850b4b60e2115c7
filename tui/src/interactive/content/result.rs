//! Turns one finished call into the documents its tabs show: the exact
//! model-visible text (footer and spill locator marked, text unchanged),
//! the canonical value, the presentation meta, and the call's details
//! (with the exact command line bash ran).
//! A call read from a followed recording has the text and the details the
//! recording keeps; its value and meta tabs say they are not recorded.

use fs_search_engine::ToolResult;
use serde::Serialize;
use serde_json::Value;

use crate::interactive::command_tap::RanCommand;
use crate::interactive::scroll_doc::{Doc, LineKind, visible};
use fs_search_transcript::{RecordedCall, SpillMode};

/// Byte offset of the footer paragraph in `result`'s text, as the engine
/// rendered it (errors never have one).
fn footer_of(result: &ToolResult) -> Option<usize> {
    result.parts.footer.as_ref().map(|footer| footer.start)
}

/// The model-visible text, numbered; the footer line is marked as such
/// and the spill locator inside it is marked for emphasis.
pub(crate) fn text_doc(result: &ToolResult) -> Doc {
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
pub(crate) fn json_doc<T: Serialize>(value: Option<&T>, none: &str) -> Doc {
    match value.map(serde_json::to_string_pretty) {
        Some(Ok(json)) => Doc::numbered(&json, LineKind::Body),
        Some(Err(e)) => Doc::plain([format!("cannot show: {e}").as_str()], LineKind::Alert),
        None => Doc::plain([none], LineKind::Note),
    }
}

/// The Meta tab: the presentation meta, then, for an over-cap glob page,
/// how far the page spans the tree of the complete result under `config`
/// (the engine's coverage measure; never shown to the model).
pub(crate) fn meta_doc(result: &ToolResult, config: &Value) -> Doc {
    let mut doc = json_doc(
        result.meta.as_ref(),
        "null — no presentation meta (errors and nested calls carry none)",
    );
    let Some(fs_search_engine::value::ToolValue::Glob(value)) = &result.value else {
        return doc;
    };
    let Ok(config) = fs_search_engine::Config::from_json(config) else {
        return doc;
    };
    let Some(coverage) = fs_search_engine::render::glob_page_coverage(value, &config) else {
        return doc;
    };
    doc.push("", LineKind::Note);
    doc.push(
        &format!(
            "Coverage of the page ({} of {} paths; not shown to the model)",
            coverage.shown, coverage.total
        ),
        LineKind::Heading,
    );
    let percent = |share: f64| format!("{:.0} %", 100.0 * share);
    for depth in &coverage.depths {
        let reached = match depth.share {
            Some(share) => format!(
                "{} of {} directories ({})",
                depth.reached,
                depth.directories,
                percent(share)
            ),
            None => "no directories".to_owned(),
        };
        doc.push(
            &format!(
                "depth {}     {reached}; largest share of the page under one: {}",
                depth.depth,
                percent(depth.largest_share)
            ),
            LineKind::Body,
        );
    }
    if let Some(name) = &coverage.largest_subtree {
        doc.push(
            &format!(
                "largest subtree {}: {} of the page",
                visible(name),
                percent(coverage.largest_subtree_share)
            ),
            LineKind::Body,
        );
    }
    doc
}

fn compact(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The text's size, isError and the error's `{name, code}` (a plain
/// error's are null), as the Call tab lists them.
fn push_outcome(
    doc: &mut Doc,
    text: &str,
    is_error: bool,
    error: Option<(Option<&str>, Option<&str>)>,
) {
    doc.push(
        &format!(
            "text        {} bytes, {} lines",
            text.len(),
            text.split('\n').count()
        ),
        LineKind::Body,
    );
    doc.push(&format!("isError     {is_error}"), LineKind::Body);
    match error {
        Some((name, code)) => {
            let quoted = |v: Option<&str>| v.map_or("null".to_owned(), |v| format!("{v:?}"));
            doc.push(
                &format!(
                    "error       {{name: {}, code: {}}}",
                    quoted(name),
                    quoted(code)
                ),
                LineKind::Alert,
            );
        }
        None => doc.push("error       null", LineKind::Body),
    }
}

fn push_warnings(doc: &mut Doc, warnings: &[String]) {
    if warnings.is_empty() {
        doc.push("warnings    none", LineKind::Body);
    }
    for w in warnings {
        doc.push(&format!("warning     {w}"), LineKind::Alert);
    }
}

/// What the call sent and got besides the text.
pub(crate) struct CallFacts<'a> {
    pub id: u64,
    pub call_id: &'a str,
    pub session_id: &'a str,
    pub tool: &'a str,
    pub args: &'a Value,
    pub config: &'a Value,
    pub duration_ms: f64,
    pub result: &'a ToolResult,
    /// What bash ran for the call.
    pub commands: &'a [RanCommand],
}

/// The command lines bash ran for the call, each with its directory:
/// what a developer pastes into a shell to compare.
fn push_commands(doc: &mut Doc, commands: &[RanCommand]) {
    if commands.is_empty() {
        doc.push(
            "command     none: the call ended before bash ran rg",
            LineKind::Note,
        );
    }
    for ran in commands {
        doc.push(&format!("command     {}", ran.command), LineKind::Body);
        let on = ran
            .host
            .as_ref()
            .map_or_else(String::new, |host| format!(" on {host}"));
        doc.push(
            &format!("            run by bash -c in {}{on}", ran.workdir),
            LineKind::Note,
        );
    }
}

/// The call's details: arguments, config, error, spill, warnings.
pub(crate) fn details_doc(f: &CallFacts<'_>) -> Doc {
    let r = f.result;
    let mut doc = Doc::default();
    doc.push(&format!("call #{} · {}", f.id, f.tool), LineKind::Heading);
    doc.push(&format!("args sent   {}", compact(f.args)), LineKind::Body);
    doc.push(
        &format!("config      {}", compact(f.config)),
        LineKind::Body,
    );
    push_commands(&mut doc, f.commands);
    doc.push(
        &format!("callId      {}   session {}", f.call_id, f.session_id),
        LineKind::Note,
    );
    doc.push(
        &format!("duration    {:.1} ms", f.duration_ms),
        LineKind::Body,
    );
    push_outcome(
        &mut doc,
        &r.text,
        r.is_error,
        r.error.as_ref().map(|e| (e.name(), e.code_str())),
    );
    if let Some(e) = &r.error {
        doc.push(&format!("message     {}", e.message), LineKind::Alert);
        if e.code.is_none() {
            doc.push(
                "            (a plain error of the package: no name/code, like the original)",
                LineKind::Note,
            );
        }
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
            doc.push(
                &format!(
                    "            {}/ = 12 hex of SHA-256(session id {})",
                    fs_search_exec::session_dir_name(f.session_id),
                    f.session_id
                ),
                LineKind::Note,
            );
        }
        None => doc.push("spill       null", LineKind::Body),
    }
    push_warnings(&mut doc, &r.warnings);
    for c in &r.additional_contexts {
        doc.push(&format!("context     {c}"), LineKind::Body);
    }
    doc
}

/// The model-visible text of a recorded call, numbered (a recording does
/// not keep where the footer is, so no line is marked).
pub(crate) fn recorded_text_doc(recorded: &RecordedCall) -> Doc {
    Doc::numbered(&recorded.outcome.text, LineKind::Body)
}

/// The note a recorded call's value or meta tab shows.
pub(crate) fn not_recorded_doc(what: &str, about: &str) -> Doc {
    let first = format!("not in the recording — the {what} ({about}) is not kept by a transcript");
    Doc::plain(
        [
            first.as_str(),
            "",
            "A recording keeps what the model saw: the text, isError, error {name, code},",
            "the spill and the warnings. Run the same call here to see the rest.",
        ],
        LineKind::Note,
    )
}

/// The details of a call read from a followed recording.
pub(crate) fn recorded_details_doc(
    name: &str,
    tool: &str,
    args: &Value,
    config: &Value,
    recorded: &RecordedCall,
) -> Doc {
    let outcome = &recorded.outcome;
    let mut doc = Doc::default();
    doc.push(
        &format!("recorded call \"{name}\" · {tool}"),
        LineKind::Heading,
    );
    doc.push(
        &format!("from        {}:{}", recorded.file.display(), recorded.line),
        LineKind::Note,
    );
    doc.push(&format!("args sent   {}", compact(args)), LineKind::Body);
    doc.push(&format!("config      {}", compact(config)), LineKind::Body);
    let session = match &recorded.call.options.session {
        Some(s) => format!(
            "session     {}   cwd {}",
            s.id.as_deref().unwrap_or("(none)"),
            s.cwd.as_deref().unwrap_or("(none)")
        ),
        None => "session     none (a call without agent)".to_owned(),
    };
    doc.push(&session, LineKind::Note);
    doc.push("duration    not recorded", LineKind::Note);
    push_outcome(
        &mut doc,
        &outcome.text,
        outcome.is_error,
        outcome
            .error
            .as_ref()
            .map(|e| (e.name.as_deref(), e.code.as_deref())),
    );
    match &outcome.spill {
        Some(s) => {
            doc.push(&format!("spill       {}", s.locator), LineKind::Footer);
            doc.push(
                &format!("            {} bytes saved", s.bytes),
                LineKind::Body,
            );
        }
        None if recorded.call.options.spill == SpillMode::None => {
            doc.push(
                "spill       null (the server ran with --no-spill)",
                LineKind::Body,
            );
        }
        None => doc.push("spill       null", LineKind::Body),
    }
    push_warnings(&mut doc, &outcome.warnings);
    doc.push(
        "            paths are normalised: <TREE> the recorded workdir, <SPILL> the spill root",
        LineKind::Note,
    );
    doc
}
