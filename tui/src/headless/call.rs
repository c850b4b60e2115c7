//! `workbench call`: one tool call through the registry, printing exactly
//! the model-visible text (a newline after it when stdout is a terminal) or
//! one JSON object with the result's parts; with `--host`, the result as
//! each host's model receives it (the host lenses, `fs_search_lens`).

use std::borrow::Cow;
use std::io::IsTerminal;
use std::process::ExitCode;
use std::time::Instant;

use fs_search_engine::ExecContext;
use serde_json::{Value, json};

use super::print;
use crate::cli::CallArgs;
use crate::error::Error;
use crate::host_report::HostReport;
use fs_search_process::stderr_line;
use fs_search_process::{SetupError, SpillChoice, load_engine, read_config};

/// Runs one call; the tool result (error results included) exits 0. A
/// signal while it runs aborts the call (its rg group killed) and exits
/// 128 + the signal's number, printing nothing.
pub(crate) async fn run(args: CallArgs) -> Result<ExitCode, Error> {
    let stop = fs_search_process::install_signals();
    // A bad --host is a usage error before anything runs.
    let lenses = match args.host.as_deref().map(super::lens::hosts_of) {
        Some(Ok(lenses)) => lenses,
        Some(Err(source)) => {
            return Err(Error::Host {
                command: "call",
                source,
            });
        }
        None => Vec::new(),
    };
    let contract = args.contract.choice();
    let config = read_config(args.call.config.raw(), contract.release)?;
    let call_args: Value = fs_search_process::read_args(&args.call.args).await?;
    let spill_root = fs_search_process::spill_root(&args.call.spill)?;
    let spill = SpillChoice::of(spill_root.as_deref());
    // Only a call that asks for tokens loads the tokenizer, meanwhile.
    let tokenizer = args
        .tokens
        .then(|| fs_search_process::load_tokenizer_in_background(args.tokenizer.file()));
    let loaded = load_engine(
        Some(&args.call.workdir),
        &config,
        spill,
        &args.sandbox.kind(),
        &contract,
    )
    .await?;
    for warning in &loaded.warnings {
        stderr_line!("{warning}");
    }
    let workdir = args.call.workdir.to_string_lossy().into_owned();
    let mut exec = ExecContext::new(
        args.call_id
            .unwrap_or_else(|| ExecContext::fresh_id("call")),
    );
    if !args.no_session {
        let id = args
            .session_id
            .unwrap_or_else(|| ExecContext::fresh_id("session"));
        exec = exec.with_session(Some(&id), Some(&workdir));
    }
    if args.nested {
        exec = exec.nested();
    }
    exec = exec.with_signal(stop.token().child_token());
    let started = Instant::now();
    let tools: Vec<String> = loaded
        .registry
        .tool_definitions()
        .into_iter()
        .map(|d| d.name)
        .collect();
    let result = loaded
        .registry
        .call(&args.call.tool, &call_args, &exec)
        .await;
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Some(signal) = stop.signal() {
        return Ok(ExitCode::from(fs_search_process::exit::signalled(signal)));
    }
    for warning in &result.warnings {
        stderr_line!("{warning}");
    }
    if let Some(note) = unknown_tool_note(&args.call.tool, &tools) {
        stderr_line!("workbench: note: {note}");
    }
    let tokenizer = match tokenizer {
        Some(handle) => Some(
            fs_search_process::join_tokenizer(handle)
                .await
                .map_err(SetupError::from)?,
        ),
        None => None,
    };
    let tokens = tokenizer.as_ref().map(|tokenizer| {
        json!({
            "text": tokenizer.count(&result.text),
            "full": spilled_text(result.spill.as_ref()).map(|full| tokenizer.count(&full)),
        })
    });
    // What each host's model receives, from the result the MCP server
    // sends (built only for --host: the arguments may nest 10,000 levels
    // deep, and this thread's stack is not the runtime workers').
    let reports: Vec<HostReport> = if lenses.is_empty() {
        Vec::new()
    } else {
        let sent = fs_search_mcp::of_tool_result(&result, duration_ms);
        let input = fs_search_mcp::lens_input(&sent, &args.call.tool, &call_args);
        lenses
            .into_iter()
            .map(|lens| HostReport::new(lens, &input, &result.parts))
            .collect()
    };
    if args.json {
        let mut warnings = loaded.warnings.clone();
        warnings.extend(result.warnings.iter().cloned());
        let object = json!({
            "tool": args.call.tool,
            "args": call_args,
            "isError": result.is_error,
            "text": result.text,
            "error": result.error,
            "value": result.value,
            "meta": result.meta,
            "spill": result.spill,
            "warnings": warnings,
            "durationMs": (duration_ms * 1000.0).round() / 1000.0,
        });
        let mut object = object;
        if let (Some(tokens), Some(map)) = (tokens, object.as_object_mut()) {
            map.insert("tokens".to_owned(), tokens);
        }
        if let (false, Some(map)) = (reports.is_empty(), object.as_object_mut()) {
            let hosts: Vec<Value> = reports
                .iter()
                .map(|r| r.to_json(tokenizer.as_ref().map(|t| t.count(&r.lensed.text))))
                .collect();
            map.insert("hosts".to_owned(), Value::Array(hosts));
        }
        if let (Some(coverage), Some(map)) = (coverage_of(&result, &config), object.as_object_mut())
        {
            map.insert("coverage".to_owned(), coverage);
        }
        print(&format!("{object}\n"));
    } else if let [report] = reports.as_slice() {
        stderr_line!("{}", report.summary());
        let terminal = std::io::stdout().is_terminal();
        print(&for_stdout(&report.lensed.text, terminal));
    } else if !reports.is_empty() {
        let mut out = String::new();
        for report in &reports {
            out.push_str(&format!(
                "== {}\n{}\n\n",
                report.summary(),
                report.lensed.text
            ));
        }
        print(&out);
    } else {
        let terminal = std::io::stdout().is_terminal();
        print(&for_stdout(&result.text, terminal));
    }
    Ok(ExitCode::from(fs_search_process::exit::SUCCESS))
}

/// The coverage of an over-cap glob page (`None` for any other result):
/// how far the page spans the directories of the complete result.
fn coverage_of(result: &fs_search_engine::ToolResult, config: &Value) -> Option<Value> {
    let Some(fs_search_engine::value::ToolValue::Glob(value)) = &result.value else {
        return None;
    };
    let config = fs_search_engine::Config::from_json(config).ok()?;
    let coverage = fs_search_engine::render::glob_page_coverage(value, &config)?;
    serde_json::to_value(coverage).ok()
}

/// What `call` writes for `text`: the model-visible text exactly, plus a
/// newline when stdout is a terminal and the text does not end one, so the
/// shell's prompt starts on a line of its own. Piped or redirected output
/// stays byte for byte the model's text.
fn for_stdout(text: &str, terminal: bool) -> Cow<'_, str> {
    if terminal && !text.is_empty() && !text.ends_with('\n') {
        Cow::Owned(format!("{text}\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// What to say on stderr when `tool` is none of the registered `tools`
/// (the model gets the contract's unknown-tool result, unchanged): which
/// tools exist, and the nearest one.
fn unknown_tool_note(tool: &str, tools: &[String]) -> Option<String> {
    if tools.iter().any(|t| t == tool) {
        return None;
    }
    if tools.is_empty() {
        return Some(format!("no tool is registered, so {tool:?} is unknown"));
    }
    let nearest = fs_search_process::nearest(tool, tools.iter().map(String::as_str))
        .map(|near| format!("did you mean {near}? "))
        .unwrap_or_default();
    Some(format!(
        "{tool:?} is not a tool ({nearest}the tools are {})",
        tools.join(", ")
    ))
}

/// The complete formatted result the call saved to the (local) spill
/// store: the content of the file its locator names; `None` when nothing
/// was saved or the file cannot be read (counting never fails a call).
fn spilled_text(spill: Option<&fs_search_engine::spill::SpillRef>) -> Option<String> {
    let locator = &spill?.locator;
    std::fs::read_to_string(locator).ok()
}

#[cfg(test)]
mod tests {
    use super::{for_stdout, unknown_tool_note};

    #[test]
    fn an_unknown_tool_note_names_the_tools_and_the_nearest() {
        let tools = ["glob".to_owned(), "grep".to_owned()];
        assert_eq!(unknown_tool_note("grep", &tools), None);
        assert_eq!(
            unknown_tool_note("grpe", &tools).unwrap(),
            "\"grpe\" is not a tool (did you mean grep? the tools are glob, grep)"
        );
        assert_eq!(
            unknown_tool_note("find", &tools).unwrap(),
            "\"find\" is not a tool (the tools are glob, grep)"
        );
        assert_eq!(
            unknown_tool_note("grep", &[]).unwrap(),
            "no tool is registered, so \"grep\" is unknown"
        );
    }

    #[test]
    fn a_terminal_gets_a_newline_after_the_text() {
        assert_eq!(for_stdout("Found 1 match", true), "Found 1 match\n");
    }

    #[test]
    fn a_pipe_gets_exactly_the_model_visible_text() {
        assert_eq!(for_stdout("Found 1 match", false), "Found 1 match");
        assert_eq!(for_stdout("a\n", false), "a\n");
    }

    #[test]
    fn a_terminal_gets_no_second_newline_and_nothing_for_empty_text() {
        assert_eq!(for_stdout("a\n", true), "a\n");
        assert_eq!(for_stdout("", true), "");
    }
}
