//! `workbench call`: one tool call through the registry, printing exactly
//! the model-visible text (a newline after it when stdout is a terminal) or
//! one JSON object with the result's parts.

use std::borrow::Cow;
use std::io::IsTerminal;
use std::time::Instant;

use fs_search_engine::ExecContext;
use serde_json::{Value, json};

use super::print;
use crate::cli::CallArgs;
use crate::console::stderr_line;
use crate::setup::{SetupError, SpillChoice, load_engine, read_config};

/// Runs one call; the tool result (error results included) exits 0. A
/// signal while it runs aborts the call (its rg group killed) and exits
/// 128 + the signal's number, printing nothing.
pub async fn call(args: CallArgs) -> Result<u8, SetupError> {
    let stop = crate::signals::install();
    let config = read_config(args.config.raw())?;
    let call_args: Value =
        fs_search_engine::json::parse(&args.args).map_err(SetupError::ArgsJson)?;
    let spill_root = crate::setup::spill_root(&args.spill)?;
    let spill = SpillChoice::of(spill_root.as_deref());
    // Only a call that asks for tokens loads the tokenizer, meanwhile.
    let tokenizer = args
        .tokens
        .then(|| crate::tokens::load_in_background(args.tokenizer.file()));
    let loaded = load_engine(Some(&args.workdir), &config, spill, args.sandbox.kind()).await?;
    for warning in &loaded.warnings {
        stderr_line!("{warning}");
    }
    let workdir = args.workdir.to_string_lossy().into_owned();
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
    let result = loaded.registry.call(&args.tool, &call_args, &exec).await;
    let duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    if let Some(signal) = stop.signal() {
        return Ok(crate::exit::signalled(signal));
    }
    for warning in &result.warnings {
        stderr_line!("{warning}");
    }
    let tokens = match tokenizer {
        Some(handle) => {
            let tokenizer = crate::tokens::join(handle).await?;
            Some(json!({
                "text": tokenizer.count(&result.text),
                "full": spilled_text(result.spill.as_ref()).map(|full| tokenizer.count(&full)),
            }))
        }
        None => None,
    };
    if args.json {
        let mut warnings = loaded.warnings.clone();
        warnings.extend(result.warnings.iter().cloned());
        let object = json!({
            "tool": args.tool,
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
        print(&format!("{object}\n"));
    } else {
        let terminal = std::io::stdout().is_terminal();
        print(&for_stdout(&result.text, terminal));
    }
    Ok(crate::exit::SUCCESS)
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

/// The complete formatted result the call saved to the (local) spill
/// store: the content of the file its locator names; `None` when nothing
/// was saved or the file cannot be read (counting never fails a call).
fn spilled_text(spill: Option<&fs_search_engine::SpillRef>) -> Option<String> {
    let locator = &spill?.locator;
    std::fs::read_to_string(locator).ok()
}

#[cfg(test)]
mod tests {
    use super::for_stdout;

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
