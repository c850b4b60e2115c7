//! `workbench surface`: the prompt sections and tool definitions the
//! model sees on every request.

use serde_json::json;

use super::print;
use crate::cli::SurfaceArgs;
use crate::setup::{SetupError, SpillChoice, load_engine, read_config};

/// Prints the prompt sections and tool definitions.
pub async fn surface(args: SurfaceArgs) -> Result<(), SetupError> {
    let config = read_config(args.config.as_deref())?;
    let loaded = load_engine(None, &config, SpillChoice::None).await?;
    for warning in &loaded.warnings {
        eprintln!("{warning}");
    }
    let sections = loaded.registry.prompt_sections();
    let tools = loaded.registry.tool_definitions();
    if args.json {
        let object = json!({
            "promptSections": sections,
            "tools": tools,
            "warnings": loaded.warnings,
        });
        print(&format!("{object}\n"));
        return Ok(());
    }
    let mut out = String::new();
    for section in &sections {
        out.push_str(&format!(
            "== prompt section {} (order {}) ==\n{}\n\n",
            section.name, section.order, section.text
        ));
    }
    for tool in &tools {
        let schema = serde_json::to_string_pretty(&tool.parameters).unwrap_or_default();
        out.push_str(&format!(
            "== tool {} (timeoutMs {}, not sent to the model) ==\n{}\n\nparameters:\n{}\n\n",
            tool.name, tool.timeout_ms, tool.description, schema
        ));
    }
    print(&out);
    Ok(())
}
