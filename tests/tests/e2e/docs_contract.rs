//! `docs/contract.md` cannot drift from the engine: every model-visible
//! text the engine registers or produces — prompt sections, tool
//! descriptions (and their `{N}`/`{M}` templates), parameter descriptions,
//! the probe command and its warning, argument errors, footers, spill
//! warnings and the local store's retrieval hint — appears in it verbatim.
//! The texts come from a registry loaded with real rg through the real
//! local executor, and from real calls on a temp tree.

use std::sync::Arc;

use fs_search_engine::{
    ExecContext, Host, LoadOutcome, RG_MISSING_WARNING, Registry, SpillStore, ToolResult,
    registry::PROBE_COMMAND,
};

use fs_search_exec::{LocalBashConfig, LocalBashExecutor, LocalSpillStore};
use fs_search_test_support::tree::{TempTree, Y2020};
use serde_json::{Value, json};

/// A cap no default or literal in the document uses, so that replacing it
/// by its placeholder turns a rendered description back into its template.
const SENTINEL_CAP: u64 = 7919;

fn contract() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/contract.md");
    std::fs::read_to_string(path).expect("docs/contract.md is readable")
}

fn assert_in_contract(contract: &str, what: &str, text: &str) {
    assert!(
        contract.contains(text),
        "docs/contract.md lacks the {what}, verbatim:\n{text}"
    );
}

async fn loaded(tree: &TempTree, config: Value, store: Option<Arc<dyn SpillStore>>) -> Registry {
    let bash = LocalBashExecutor::new(LocalBashConfig {
        cwd: Some(tree.root()),
        ..LocalBashConfig::default()
    })
    .unwrap();
    let mut registry = Registry::new(Host {
        bash: Some(Arc::new(bash)),
        spill_store: store,
        timeout_policy: true,
    });
    let outcome = registry.load_fs_search(&config).await.unwrap();
    assert_eq!(outcome, LoadOutcome::Registered, "rg must be installed");
    registry
}

async fn call(registry: &Registry, tool: &str, args: Value) -> ToolResult {
    let exec = ExecContext::new("call-docs").with_session(Some("session-docs"), None);
    registry.call(tool, &args, &exec).await
}

/// Both glob prompt variants and the grep section.
#[tokio::test]
async fn every_prompt_section_appears_verbatim_in_docs_contract() {
    let contract = contract();
    let tree = TempTree::new().unwrap();
    for sampling in [true, false] {
        let registry = loaded(&tree, json!({"sampleOverCapGlobResults": sampling}), None).await;
        for section in registry.prompt_sections() {
            assert_in_contract(
                &contract,
                &format!("section {}", section.name),
                &section.text,
            );
        }
    }
}

/// The descriptions with the default caps, and as templates: rendered
/// with a sentinel cap that is then replaced by `{N}` (glob) or `{M}` (grep).
#[tokio::test]
async fn every_tool_description_and_its_template_appears_verbatim_in_docs_contract() {
    let contract = contract();
    let tree = TempTree::new().unwrap();
    for sampling in [true, false] {
        let defaults = loaded(&tree, json!({"sampleOverCapGlobResults": sampling}), None).await;
        for tool in defaults.tool_definitions() {
            assert_in_contract(
                &contract,
                &format!("{} description", tool.name),
                &tool.description,
            );
        }
        let sentinel = loaded(
            &tree,
            json!({
                "sampleOverCapGlobResults": sampling,
                "globMaxResults": SENTINEL_CAP,
                "grepMaxMatches": SENTINEL_CAP,
            }),
            None,
        )
        .await;
        for tool in sentinel.tool_definitions() {
            let placeholder = if tool.name == "glob" { "{N}" } else { "{M}" };
            let template = tool
                .description
                .replace(&SENTINEL_CAP.to_string(), placeholder);
            assert_ne!(
                template, tool.description,
                "the cap appears in the description"
            );
            assert_in_contract(
                &contract,
                &format!("{} description template", tool.name),
                &template,
            );
        }
    }
}

/// Each parameter's description, as the JSON string the schema blocks
/// show it in (`"description": "…"`, quotes escaped).
#[tokio::test]
async fn every_parameter_description_appears_verbatim_in_docs_contract() {
    let contract = contract();
    let tree = TempTree::new().unwrap();
    let registry = loaded(&tree, json!({"sampleOverCapGlobResults": true}), None).await;
    let mut seen = 0;
    for tool in registry.tool_definitions() {
        let properties = tool.parameters["properties"].as_object().unwrap();
        for (name, property) in properties {
            let description = serde_json::to_string(&property["description"]).unwrap();
            let line = format!("\"description\": {description}");
            assert_in_contract(
                &contract,
                &format!("{}.{name} description", tool.name),
                &line,
            );
            seen += 1;
        }
    }
    assert_eq!(
        seen, 5,
        "glob has pattern and path, grep pattern, path and include"
    );
}

#[test]
fn the_probe_command_and_the_rg_missing_warning_appear_verbatim_in_docs_contract() {
    let contract = contract();
    assert_in_contract(&contract, "probe command", PROBE_COMMAND);
    assert_in_contract(&contract, "rg-missing warning", RG_MISSING_WARNING);
}

/// The registry's schema violations (each on its own) and the package's
/// argument errors, as real calls return them.
#[tokio::test]
async fn every_argument_error_text_appears_verbatim_in_docs_contract() {
    let contract = contract();
    let tree = TempTree::new().unwrap();
    let registry = loaded(&tree, json!({"sampleOverCapGlobResults": true}), None).await;
    let calls = [
        ("glob", json!([])),
        ("glob", json!({})),
        ("grep", json!({"pattern": 1, "path": 2, "include": 3})),
        ("glob", json!({"pattern": "  "})),
        ("glob", json!({"pattern": "*", "path": " "})),
        ("grep", json!({"pattern": ""})),
        ("grep", json!({"pattern": "x", "include": " "})),
        ("grep", json!({"pattern": "x", "include": "!*.ts"})),
        ("grep", json!({"pattern": "x", "include": "*.ts,*.js"})),
    ];
    for (tool, args) in calls {
        let result = call(&registry, tool, args.clone()).await;
        assert!(result.is_error, "{tool} {args} is refused");
        let message = result.text.strip_prefix("Error: ").unwrap();
        match message.strip_prefix("invalid arguments: ") {
            Some(violations) => {
                for violation in violations.split("; ") {
                    assert_in_contract(&contract, "schema violation", violation);
                }
            }
            None => assert_in_contract(&contract, "argument error", message),
        }
    }
    let unknown = call(&registry, "find", json!({})).await;
    assert_in_contract(
        &contract,
        "unknown-tool message",
        &unknown
            .text
            .replace("Error: ", "")
            .replace("find", "{name}"),
    );
}

/// Empty results, the over-cap footers with and without a saved result
/// (locator, hint and counts turned back into their placeholders), the
/// spill warning and the local store's retrieval hint.
#[tokio::test]
async fn the_result_texts_footers_and_spill_warnings_appear_verbatim_in_docs_contract() {
    let contract = contract();
    let tree = TempTree::new().unwrap();
    for name in ["a.ts", "b.ts", "c.ts"] {
        tree.file(name, b"needle\n", Y2020).unwrap();
    }
    let spill_root = tempfile::tempdir().unwrap();
    let store: Arc<dyn SpillStore> = Arc::new(LocalSpillStore::new(Some(spill_root.path())));
    let capped =
        json!({"sampleOverCapGlobResults": true, "globMaxResults": 2, "grepMaxMatches": 2});
    let with_store = loaded(&tree, capped.clone(), Some(store)).await;
    let without_store = loaded(&tree, capped, None).await;

    let nothing = call(&with_store, "glob", json!({"pattern": "*.nomatch"})).await;
    assert_in_contract(&contract, "empty glob text", &format!("`{}`", nothing.text));
    let nothing = call(&with_store, "grep", json!({"pattern": "absent"})).await;
    assert_in_contract(&contract, "empty grep text", &format!("`{}`", nothing.text));

    for tool in ["glob", "grep"] {
        let args = if tool == "glob" {
            json!({"pattern": "*.ts"})
        } else {
            json!({"pattern": "needle"})
        };
        let saved = call(&with_store, tool, args.clone()).await;
        let spill = saved.spill.clone().expect("the full result was saved");
        assert_in_contract(&contract, "retrieval hint", &spill.retrieval_hint);
        let footer = saved
            .footer()
            .unwrap()
            .replace(&spill.locator, "{locator}")
            .replace(&spill.retrieval_hint, "{retrievalHint}")
            .replace("2 of 3", "{K} of {M}");
        assert_in_contract(&contract, &format!("saved {tool} footer"), &footer);

        let unsaved = call(&without_store, tool, args).await;
        let footer = unsaved.footer().unwrap().replace("2 of 3", "{K} of {M}");
        assert_in_contract(&contract, &format!("unsaved {tool} footer"), &footer);
        for warning in &unsaved.warnings {
            let template = warning.replace(&format!(" {tool} "), " {toolName} ");
            assert_in_contract(&contract, "spill warning", &template);
        }
        assert_eq!(
            unsaved.warnings.len(),
            1,
            "one warning for the unsaved result"
        );
    }
}
