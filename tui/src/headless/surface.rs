//! `workbench surface`: the prompt sections and tool definitions the
//! model sees on every request; with `--tokens`, what each costs (a tool
//! definition counted as [`fs_search_tokens::tool_definition_text`]
//! serializes it) and the total per request; with `--against B`, where the
//! request prefix of config B first differs from that of `--config` (A):
//! the point from which a cached KV prefix stops being valid, and with
//! `--max-invalidated-tokens N` exit 1 when B invalidates more than N
//! tokens of A's cached prefix. `--json` names the release (`contract`)
//! and the rg (`--rg`'s, else the one on `PATH`); the text, whose stdout
//! is the surface alone, names them on stderr when `--contract` or `--rg`
//! chose them.

use fs_search_engine::registry::{PromptSection, ToolDefinition};
use fs_search_tokens::{EncodedPrefix, PartKind, PrefixComparison, compare_prefixes};
use serde_json::json;

use super::print;
use crate::cli::SurfaceArgs;
use crate::error::Error;
use fs_search_process::exit;
use fs_search_process::stderr_line;
use fs_search_process::{SetupError, SpillChoice, load_engine, read_config, read_config_flag};
use fs_search_process::{request_parts, thousands};
use fs_search_tokens::Tokenizer;
use std::path::Path;
use std::process::ExitCode;

/// Characters of each side shown around the first difference.
const EXCERPT_CHARS: usize = 40;

/// Prints the prompt sections and tool definitions, or the comparison
/// with `--against`; the exit status.
pub(crate) async fn run(args: SurfaceArgs) -> Result<ExitCode, Error> {
    surface(args).await.map(ExitCode::from).map_err(Error::from)
}

/// `workbench surface`'s exit status.
async fn surface(args: SurfaceArgs) -> Result<u8, SetupError> {
    let counting = args.tokens || args.against.is_some();
    let tokenizer =
        counting.then(|| fs_search_process::load_tokenizer_in_background(args.tokenizer.file()));
    let lens = match args.host.as_deref().map(fs_search_lens::resolve) {
        Some(Ok(lens)) => Some(lens),
        Some(Err(e)) => {
            stderr_line!("workbench surface: --host: {e}");
            return Ok(exit::ERROR);
        }
        None => None,
    };
    let contract = args.contract.choice();
    let config = read_config(args.config.raw(), contract.release)?;
    let executor = args.sandbox.kind();
    // The load probe runs on the executor's machine: on a remote host, in
    // its root directory (there is no workspace to name).
    let probe_dir = executor.is_remote().then(|| Path::new("/"));
    let loaded = load_engine(probe_dir, &config, SpillChoice::None, &executor, &contract).await?;
    for warning in &loaded.warnings {
        stderr_line!("{warning}");
    }
    let sections = loaded.registry.prompt_sections();
    let mut tools = loaded.registry.tool_definitions();
    // The descriptions as the host passes them on: what its model reads.
    let host_cut: Vec<bool> = tools
        .iter_mut()
        .map(|tool| {
            let Some(lens) = lens else { return false };
            let (text, cut) = lens.tool_description(&tool.description);
            tool.description = text;
            cut
        })
        .collect();
    let tokenizer = match tokenizer {
        Some(handle) => Some(fs_search_process::join_tokenizer(handle).await?),
        None => None,
    };
    if let (Some(against), Some(tokenizer)) = (args.against.as_deref(), &tokenizer) {
        let config_b = read_config_flag("--against", Some(against), contract.release)?;
        let loaded_b = match load_engine(
            probe_dir,
            &config_b,
            SpillChoice::None,
            &executor,
            &contract,
        )
        .await
        {
            Err(SetupError::Load(source)) => Err(SetupError::FlagLoad {
                flag: "--against",
                source,
            }),
            loaded => loaded,
        }?;
        for warning in &loaded_b.warnings {
            stderr_line!("{warning}");
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
        return Ok(invalidation_status(
            &comparison,
            args.max_invalidated_tokens,
        ));
    }
    let counted = tokenizer
        .as_ref()
        .map(|t| Counted::new(t, &sections, &tools));
    if args.json {
        let counts = |list: Option<&Vec<usize>>, i: usize| list.and_then(|l| l.get(i)).copied();
        let listed = SurfaceJson {
            prompt_sections: (sections.iter().enumerate())
                .map(|(i, item)| Listed {
                    item,
                    tokens: counts(counted.as_ref().map(|c| &c.sections), i),
                    host_cut: None,
                })
                .collect(),
            tools: (tools.iter().enumerate())
                .map(|(i, item)| Listed {
                    item,
                    tokens: counts(counted.as_ref().map(|c| &c.tools), i),
                    host_cut: lens.map(|_| host_cut[i]),
                })
                .collect(),
            host: lens.map(fs_search_lens::Lens::name),
            total_tokens: counted.as_ref().map(Counted::total),
            warnings: &loaded.warnings,
            executor: executor.as_str(),
            contract: contract.release.name(),
            rg: contract.rg_info(&executor),
        };
        // Serialised directly, not through `Value`, so a configured number
        // of 2^64 or more keeps JavaScript's own form.
        let text = serde_json::to_string(&listed).unwrap_or_default();
        print(&format!("{text}\n"));
        return Ok(exit::SUCCESS);
    }
    if args.contract.contract.is_some() || contract.rg.is_some() {
        let rg = contract.rg_info(&executor);
        let path = rg
            .path
            .as_deref()
            .map_or_else(|| "not found".to_owned(), |p| p.display().to_string());
        stderr_line!(
            "workbench surface: contract {}, {} ({path})",
            contract.release,
            rg.label()
        );
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
        let through = match lens {
            Some(lens) if host_cut[i] => format!(
                ", description cut by {} at {} characters",
                lens.name(),
                lens.description_max_chars.unwrap_or_default()
            ),
            Some(lens) => format!(", description as {} passes it", lens.name()),
            None => String::new(),
        };
        out.push_str(&format!(
            "== tool {} (timeoutMs {}, not sent to the model{}{}) ==\n{}\n\nparameters:\n{}\n\n",
            tool.name,
            tool.timeout_ms,
            cost(counted.as_ref().map(|c| &c.tools), i),
            through,
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
    Ok(exit::SUCCESS)
}

/// `--max-invalidated-tokens N`: 1 (with a line on stderr) when B
/// invalidates more than N tokens of A's cached prefix, else 0.
fn invalidation_status(comparison: &PrefixComparison, max: Option<usize>) -> u8 {
    let invalidated = comparison.tokens_a.saturating_sub(comparison.common_tokens);
    match max {
        Some(max) if invalidated > max => {
            stderr_line!(
                "workbench surface: {invalidated} tokens of the cached prefix invalidated > --max-invalidated-tokens {max}"
            );
            exit::CHANGED
        }
        _ => exit::SUCCESS,
    }
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

/// `surface --json`: the sections and tools, each with its `tokens` when
/// counted, the total per request, and the load's warnings.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct SurfaceJson<'a> {
    prompt_sections: Vec<Listed<'a, PromptSection>>,
    tools: Vec<Listed<'a, ToolDefinition>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    total_tokens: Option<usize>,
    warnings: &'a [String],
    /// The executor the calls run under: `local`, `sandbox-bwrap`,
    /// `sandbox-landlock` or
    /// `ssh://[USER@]HOST[:PORT]`.
    executor: &'a str,
    /// The package release the surface is of (`--contract`): `0.0.1` or
    /// `0.1.0-rc.8`.
    contract: &'static str,
    /// `--host`: the lens whose descriptions are shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<String>,
    /// The rg the calls run (`--rg`'s; on HOST for the remote executor):
    /// `{"version", "path"}` (null when not found).
    rg: fs_search_process::RgInfo,
}

/// An item of `surface --json` and, when counted, its tokens (last).
#[derive(serde::Serialize)]
struct Listed<'a, T> {
    #[serde(flatten)]
    item: &'a T,
    #[serde(skip_serializing_if = "Option::is_none")]
    tokens: Option<usize>,
    /// With `--host`: whether the host cut the description.
    #[serde(rename = "hostCut", skip_serializing_if = "Option::is_none")]
    host_cut: Option<bool>,
}

/// The text output of `--against`.
pub(crate) fn comparison_text(
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
