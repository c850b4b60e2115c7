//! `workbench lens`: a tool result as an agent host's model receives it
//! (`--list`: the lenses), and which lenses `--host` names. The per-host
//! report `workbench call --host` adds after a call is `crate::host_report`'s;
//! the lenses themselves are in `fs_search_lens`.

use std::io::{IsTerminal, Read as _};
use std::process::ExitCode;

use serde_json::{Value, json};

use super::print;
use crate::cli::LensArgs;
use crate::error::{Error, LensCommandError};
use crate::host_report::budget_json;
use fs_search_lens::{Knobs, LENSES, Lens, LensError, ToolResultInput, resolve};
use fs_search_lens::{detect_parts, page_verdict as verdict};
use fs_search_process::SetupError;

/// Runs `workbench lens`.
pub(crate) async fn run(args: LensArgs) -> Result<ExitCode, Error> {
    match lens(args).await {
        Ok(code) => Ok(ExitCode::from(code)),
        Err(LensCommandError::Setup(e)) => Err(Error::Setup(e)),
        Err(e) => Err(Error::Lens(e)),
    }
}

async fn lens(args: LensArgs) -> Result<u8, LensCommandError> {
    if args.list {
        print(&if args.json {
            format!("{}\n", list_json())
        } else {
            list_text()
        });
        return Ok(fs_search_process::exit::SUCCESS);
    }
    let lens = resolve(args.lens.as_deref().unwrap_or_default())?;
    let knobs = Knobs::parse(lens, &args.set)?;
    let input = read_input(&args)?;
    let lensed = lens.apply(&input, &knobs);
    if !args.json {
        let terminal = std::io::stdout().is_terminal();
        let mut text = lensed.text.clone();
        if terminal && !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        print(&text);
        return Ok(fs_search_process::exit::SUCCESS);
    }
    let tokenizer = fs_search_process::join_tokenizer(
        fs_search_process::load_tokenizer_in_background(args.tokenizer.file()),
    )
    .await
    .map_err(SetupError::from)?;
    let parts = detect_parts(&input.text);
    let verdict = verdict(&input.tool, &input.text, &parts, &lensed.original_kept());
    let object = json!({
        "host": lens.host,
        "version": lens.version,
        "knobs": knobs.effective(lens.knobs),
        "framed": lensed.framed.text(),
        "budget": budget_json(&lensed),
        "text": lensed.text,
        "cut": lensed.cut.as_str(),
        "keptBytes": lensed.kept_bytes(),
        "removedBytes": lensed.removed_bytes(),
        "tokens": tokenizer.count(&lensed.text),
        "footerVisible": verdict.footer_visible,
        "notes": lensed.notes,
    });
    print(&format!("{object}\n"));
    Ok(fs_search_process::exit::SUCCESS)
}

/// The tool result named by `FILE|-`: a recorded result (a JSON object
/// with `text`, or an MCP result with `content`) or plain text.
fn read_input(args: &LensArgs) -> Result<ToolResultInput, LensCommandError> {
    let (name, bytes) = match args.file.as_deref() {
        Some(path) if path.as_os_str() != "-" => (
            path.display().to_string(),
            fs_search_process::read_file(path, fs_search_process::TRANSCRIPT_MAX_BYTES),
        ),
        _ => ("<stdin>".to_owned(), read_stdin()),
    };
    let bytes = bytes.map_err(|source| LensCommandError::Read {
        path: name.clone(),
        source,
    })?;
    let text = String::from_utf8(bytes).map_err(|e| LensCommandError::Read {
        path: name,
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error()),
    })?;
    let mut input = recorded(&text).unwrap_or(ToolResultInput {
        tool: args.tool.clone(),
        args: Value::Null,
        text,
        is_error: false,
        duration_secs: None,
    });
    input.is_error |= args.error;
    Ok(input)
}

fn read_stdin() -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(fs_search_process::TRANSCRIPT_MAX_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > fs_search_process::TRANSCRIPT_MAX_BYTES {
        return Err(std::io::Error::other("stdin is larger than 256 MiB"));
    }
    Ok(bytes)
}

/// A recorded result: `call --json`'s object (`tool`, `args`, `text`,
/// `isError`) or an MCP `CallToolResult` (`content`, `isError`).
fn recorded(text: &str) -> Option<ToolResultInput> {
    let trimmed = text.trim_start();
    if !trimmed.starts_with('{') {
        return None;
    }
    let value: Value = serde_json::from_str(text).ok()?;
    let object = value.as_object()?;
    let body = match (object.get("text"), object.get("content")) {
        (Some(Value::String(t)), _) => t.clone(),
        (_, Some(Value::Array(blocks))) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => return None,
    };
    Some(ToolResultInput {
        tool: object
            .get("tool")
            .and_then(Value::as_str)
            .unwrap_or("grep")
            .to_owned(),
        args: object.get("args").cloned().unwrap_or(Value::Null),
        text: body,
        is_error: object
            .get("isError")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        duration_secs: object
            .get("durationMs")
            .and_then(Value::as_f64)
            .map(|ms| ms / 1000.0),
    })
}

fn list_text() -> String {
    let mut out = String::new();
    for lens in LENSES {
        out.push_str(&format!("{}  ({})\n", lens.name(), lens.versions));
        out.push_str(&format!("  {}\n", lens.description));
        out.push_str(&format!(
            "  source{}: {}\n",
            if lens.from_source {
                ""
            } else {
                " (documentation, not verifiable)"
            },
            lens.source
        ));
        if !lens.knobs.is_empty() {
            let knobs: Vec<String> = lens
                .knobs
                .iter()
                .map(|k| {
                    if k.default.is_empty() {
                        k.name.to_owned()
                    } else {
                        format!("{}={}", k.name, k.default)
                    }
                })
                .collect();
            out.push_str(&format!("  knobs: {}\n", knobs.join(", ")));
        }
    }
    out
}

fn list_json() -> Value {
    let lenses: Vec<Value> = LENSES
        .iter()
        .map(|lens| {
            json!({
                "name": lens.name(),
                "host": lens.host,
                "version": lens.version,
                "versions": lens.versions,
                "source": lens.source,
                "fromSource": lens.from_source,
                "description": lens.description,
                "knobs": lens.knobs.iter().map(|k| json!({
                    "name": k.name,
                    "default": if k.default.is_empty() { Value::Null } else { json!(k.default) },
                    "help": k.help,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    json!({ "lenses": lenses })
}

/// The lenses `--host HOST|all` names: one, or the newest of each host.
pub(crate) fn hosts_of(spec: &str) -> Result<Vec<&'static Lens>, LensError> {
    if spec == "all" {
        return fs_search_lens::hosts().into_iter().map(resolve).collect();
    }
    Ok(vec![resolve(spec)?])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_json_object_is_read_as_a_recorded_result() {
        let input = recorded(
            r#"{"tool":"glob","args":{"pattern":"*"},"isError":true,"text":"bad","durationMs":5}"#,
        )
        .unwrap();
        assert_eq!(input.tool, "glob");
        assert_eq!(input.text, "bad");
        assert!(input.is_error);
    }

    #[test]
    fn an_mcp_result_is_read_as_a_recorded_result() {
        let input =
            recorded(r#"{"content":[{"type":"text","text":"Found 1 match"}],"isError":false}"#)
                .unwrap();
        assert_eq!(input.text, "Found 1 match");
    }

    #[test]
    fn page_text_is_not_taken_for_json() {
        assert!(recorded("Found 1 match\n\na.rs\nLine 1: {x}").is_none());
        assert!(recorded("{not json").is_none());
    }

    #[test]
    fn all_is_the_newest_lens_of_each_host() {
        let names: Vec<String> = hosts_of("all").unwrap().iter().map(|l| l.name()).collect();
        assert_eq!(
            names,
            [
                "codex@0.120",
                "claude-code@docs-2026-10",
                "opencode@current",
                "gemini-cli@0.48",
                "qwen-code@current"
            ]
        );
    }
}
