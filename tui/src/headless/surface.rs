//! `workbench surface`: the prompt sections and tool definitions the
//! model sees on every request; with `--tokens`, what each costs (a tool
//! definition counted as [`fs_search_tokens::tool_definition_text`]
//! serializes it) and the total per request; with `--against B`, where the
//! request prefix of config B first differs from that of `--config` (A):
//! the point from which a cached KV prefix stops being valid.

use fs_search_engine::{PromptSection, ToolDefinition};
use fs_search_tokens::{EncodedPrefix, PartKind, PrefixComparison, compare_prefixes};
use serde_json::{Value, json};

use super::print;
use crate::cli::SurfaceArgs;
use crate::setup::{SetupError, SpillChoice, load_engine, read_config};
use crate::tokens::{Tokenizer, request_parts, thousands};

/// Characters of each side shown around the first difference.
const EXCERPT_CHARS: usize = 40;

/// Prints the prompt sections and tool definitions, or the comparison
/// with `--against`.
pub async fn surface(args: SurfaceArgs) -> Result<(), SetupError> {
    let counting = args.tokens || args.against.is_some();
    let tokenizer = counting.then(|| crate::tokens::load_in_background(args.tokenizer.as_deref()));
    let config = read_config(args.config.as_deref())?;
    let loaded = load_engine(None, &config, SpillChoice::None).await?;
    for warning in &loaded.warnings {
        eprintln!("{warning}");
    }
    let sections = loaded.registry.prompt_sections();
    let tools = loaded.registry.tool_definitions();
    let tokenizer = match tokenizer {
        Some(handle) => Some(crate::tokens::join(handle).await?),
        None => None,
    };
    if let (Some(against), Some(tokenizer)) = (args.against.as_deref(), &tokenizer) {
        let config_b = read_config(Some(against))?;
        let loaded_b = load_engine(None, &config_b, SpillChoice::None).await?;
        for warning in &loaded_b.warnings {
            eprintln!("{warning}");
        }
        let a = tokenizer.encode_prefix(&request_parts(&sections, &tools));
        let b = tokenizer.encode_prefix(&request_parts(
            &loaded_b.registry.prompt_sections(),
            &loaded_b.registry.tool_definitions(),
        ));
        let comparison = compare_prefixes(&a, &b);
        if args.json {
            print(&format!("{}\n", json!({ "kvPrefix": comparison })));
        } else {
            print(&comparison_text(&comparison, &a, &b));
        }
        return Ok(());
    }
    let counted = tokenizer
        .as_ref()
        .map(|t| Counted::new(t, &sections, &tools));
    if args.json {
        let mut sections_json = serde_json::to_value(&sections).unwrap_or(Value::Null);
        let mut tools_json = serde_json::to_value(&tools).unwrap_or(Value::Null);
        let mut object = json!({});
        if let Some(counted) = &counted {
            add_tokens(&mut sections_json, &counted.sections);
            add_tokens(&mut tools_json, &counted.tools);
        }
        if let Some(map) = object.as_object_mut() {
            map.insert("promptSections".into(), sections_json);
            map.insert("tools".into(), tools_json);
            if let Some(counted) = &counted {
                map.insert("totalTokens".into(), json!(counted.total()));
            }
            map.insert("warnings".into(), json!(loaded.warnings));
        }
        print(&format!("{object}\n"));
        return Ok(());
    }
    let mut out = String::new();
    let cost = |list: Option<&Vec<usize>>, i: usize| {
        list.and_then(|l| l.get(i))
            .map(|n| format!(", {} tokens", thousands(*n)))
            .unwrap_or_default()
    };
    for (i, section) in sections.iter().enumerate() {
        out.push_str(&format!(
            "== prompt section {} (order {}{}) ==\n{}\n\n",
            section.name,
            section.order,
            cost(counted.as_ref().map(|c| &c.sections), i),
            section.text
        ));
    }
    for (i, tool) in tools.iter().enumerate() {
        let schema = serde_json::to_string_pretty(&tool.parameters).unwrap_or_default();
        out.push_str(&format!(
            "== tool {} (timeoutMs {}, not sent to the model{}) ==\n{}\n\nparameters:\n{}\n\n",
            tool.name,
            tool.timeout_ms,
            cost(counted.as_ref().map(|c| &c.tools), i),
            tool.description,
            schema
        ));
    }
    if let Some(counted) = &counted {
        out.push_str(&format!(
            "== {} tokens per request (prompt sections + tool definitions) ==\n",
            thousands(counted.total())
        ));
    }
    print(&out);
    Ok(())
}

/// The tokens of each section and tool definition.
struct Counted {
    sections: Vec<usize>,
    tools: Vec<usize>,
}

impl Counted {
    fn new(tokenizer: &Tokenizer, sections: &[PromptSection], tools: &[ToolDefinition]) -> Self {
        Self {
            sections: sections.iter().map(|s| tokenizer.count(&s.text)).collect(),
            tools: tools
                .iter()
                .map(|t| {
                    tokenizer.count(&fs_search_tokens::tool_definition_text(
                        &t.name,
                        &t.description,
                        &t.parameters,
                    ))
                })
                .collect(),
        }
    }

    fn total(&self) -> usize {
        self.sections.iter().chain(&self.tools).sum()
    }
}

/// Adds `"tokens"` to each object of the array `list`.
fn add_tokens(list: &mut Value, counts: &[usize]) {
    if let Some(items) = list.as_array_mut() {
        for (item, count) in items.iter_mut().zip(counts) {
            if let Some(map) = item.as_object_mut() {
                map.insert("tokens".into(), json!(count));
            }
        }
    }
}

/// The text output of `--against`.
pub fn comparison_text(
    comparison: &PrefixComparison,
    a: &EncodedPrefix,
    b: &EncodedPrefix,
) -> String {
    let Some(first) = &comparison.first_difference else {
        return format!(
            "identical — cached prefix stays valid ({} tokens)\n",
            thousands(comparison.tokens_a)
        );
    };
    let mut out = format!(
        "the prefix differs from {} {} (token {} of {}): {} tokens of A stay cached; A has {}, B has {}\n",
        kind_name(first.part),
        first.name,
        thousands(first.token_index),
        thousands(comparison.tokens_a),
        thousands(comparison.common_tokens),
        thousands(comparison.tokens_a),
        thousands(comparison.tokens_b),
    );
    if let Some(excerpt) = comparison.excerpt(a, b, EXCERPT_CHARS) {
        for (side, ex) in [("A", &excerpt.a), ("B", &excerpt.b)] {
            match &ex.part {
                Some((kind, name)) => out.push_str(&format!(
                    "  {side} ({} {name}): {}⟨{}\n",
                    kind_name(*kind),
                    ex.before,
                    ex.after
                )),
                None => out.push_str(&format!("  {side} (ended): {}⟨\n", ex.before)),
            }
        }
    }
    out
}

fn kind_name(kind: PartKind) -> &'static str {
    match kind {
        PartKind::Section => "prompt section",
        PartKind::Tool => "tool",
    }
}
