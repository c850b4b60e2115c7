//! The composed documents about the plugin: the surface the model sees
//! (prompt sections, tool definitions), and what the workbench says
//! when nothing is registered (config error, rg missing) or no call ran.

use crate::interactive::effects::LoadInfo;
use crate::interactive::scroll_doc::{Doc, LineKind};
use crate::interactive::state::session::PluginStatus;
use crate::interactive::state::tokens::TokenState;
use crate::interactive::tabs::Tab;
use fs_search_process::thousands;

/// How to get rg, shown when the load found none.
pub(crate) const RG_INSTALL_HINT: [&str; 5] = [
    "Install ripgrep so that `rg` is on the PATH, then restart the workbench:",
    "  Debian/Ubuntu: sudo apt-get install ripgrep",
    "  Fedora: sudo dnf install ripgrep     macOS: brew install ripgrep",
    "  anywhere with Rust: cargo install ripgrep",
    "Until then glob and grep are not registered (calls: unknown tool).",
];

/// The prompt sections and tool definitions exactly as registered; with
/// `tokens` (the tokenizer ready), what each costs, the total per request
/// and what the latest config change did to the cached prefix.
pub(crate) fn surface(info: &LoadInfo, tokens: Option<&TokenState>) -> Doc {
    let mut doc = Doc::default();
    let counts = tokens.and_then(|t| t.surface.as_ref());
    let cost = |list: Option<&Vec<usize>>, i: usize| {
        list.and_then(|l| l.get(i))
            .map(|n| format!(" · {} tokens", thousands(*n)))
            .unwrap_or_default()
    };
    if let Some(counts) = counts {
        doc.push(
            &format!(
                "{} tokens per request (prompt sections + tool definitions as compact JSON {{name, description, parameters}})",
                thousands(counts.total())
            ),
            LineKind::Heading,
        );
        if let Some(change) = tokens.and_then(|t| t.change.as_ref()) {
            doc.push(&format!("last config change: {change}"), LineKind::Note);
        }
        doc.push("", LineKind::Body);
    }
    doc.push(
        &format!(
            "PROMPT SECTIONS ({}), in order — appended to the system prompt",
            info.sections.len()
        ),
        LineKind::Heading,
    );
    for (i, section) in info.sections.iter().enumerate() {
        doc.push(
            &format!(
                "== section {} · order {}{} ==",
                section.name,
                section.order,
                cost(counts.map(|c| &c.sections), i)
            ),
            LineKind::Note,
        );
        doc.push(&section.text, LineKind::Body);
    }
    doc.push("", LineKind::Body);
    doc.push(
        &format!(
            "TOOL DEFINITIONS ({}), in registration order",
            info.tools.len()
        ),
        LineKind::Heading,
    );
    for (i, tool) in info.tools.iter().enumerate() {
        doc.push(
            &format!(
                "== tool {}{} · timeoutMs {} (host policy, not sent to the model) ==",
                tool.name,
                cost(counts.map(|c| &c.tools), i),
                tool.timeout_ms
            ),
            LineKind::Note,
        );
        doc.push("description:", LineKind::Note);
        doc.push(&tool.description, LineKind::Body);
        doc.push("parameters (JSON schema):", LineKind::Note);
        let schema = serde_json::to_string_pretty(&tool.parameters).unwrap_or_default();
        doc.push(&schema, LineKind::Body);
    }
    for warning in &info.warnings {
        doc.push(&format!("warning: {warning}"), LineKind::Alert);
    }
    doc
}

fn not_registered(doc: &mut Doc, status: &PluginStatus) {
    match status {
        PluginStatus::Loading => doc.push("Loading the plugin…", LineKind::Note),
        PluginStatus::Registered => {}
        PluginStatus::RgMissing(warning) => {
            doc.push(
                "ripgrep (rg) was not found. The load warned:",
                LineKind::Alert,
            );
            doc.push(warning, LineKind::Alert);
            for line in RG_INSTALL_HINT {
                doc.push(line, LineKind::Note);
            }
        }
        PluginStatus::Failed(error) => {
            doc.push(
                "The plugin did not load. The load failed with:",
                LineKind::Alert,
            );
            doc.push(&format!("  {error}"), LineKind::Alert);
            let config = Tab::Config;
            doc.push(
                &format!(
                    "Nothing is registered: calls get the unknown-tool result. Fix the config in the {} tab ({}).",
                    config.title(),
                    config.digit()
                ),
                LineKind::Note,
            );
        }
    }
}

/// The Surface tab when nothing is registered.
pub(crate) fn unloaded(status: &PluginStatus) -> Doc {
    let mut doc = Doc::default();
    doc.push(
        "No prompt sections or tools are registered.",
        LineKind::Heading,
    );
    not_registered(&mut doc, status);
    doc
}

/// The Text tab before the first call.
pub(crate) fn welcome(status: &PluginStatus) -> Doc {
    let mut doc = Doc::default();
    if status != &PluginStatus::Registered {
        not_registered(&mut doc, status);
        doc.push("", LineKind::Body);
    }
    doc.push(
        "No call yet. Build one above and run it:",
        LineKind::Heading,
    );
    let config_key = Tab::Config.digit().to_string();
    let config_tab = format!("the {} tab: sampling and every cap", Tab::Config.title());
    for (key, what) in [
        (
            "e",
            "edit the pattern (Tab: path, include, raw args; Esc: done)",
        ),
        ("t", "switch the tool between glob and grep"),
        (
            "Enter",
            "run: the model's exact text shows here, and keys act on it",
        ),
        (config_key.as_str(), config_tab.as_str()),
        ("?", "every key"),
    ] {
        doc.push(&format!("  {key:<7}{what}"), LineKind::Note);
    }
    doc
}
