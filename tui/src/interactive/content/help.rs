//! The help: where the log file and spill files are, every key binding
//! by context (from the key map), the tabs (from their table), and how to
//! read the Text tab. Composed here, not in `views`, so the update logic
//! can size it for scrolling too.

use super::surface::RG_INSTALL_HINT;
use crate::interactive::keymap::{self, BINDINGS, Context};
use crate::interactive::scroll_doc::{Doc, LineKind};
use crate::interactive::state::session::{PluginStatus, SessionInfo};
use crate::interactive::tabs::Tab;

/// The order in which contexts are listed.
fn help_contexts() -> Vec<Context> {
    let mut contexts = vec![
        Context::Normal,
        Context::Editing,
        Context::ExplainPath,
        Context::TranscriptPath,
    ];
    contexts.extend(Tab::ALL.iter().map(|t| Context::Tab(*t)));
    contexts.extend([Context::Overlay, Context::Global]);
    contexts
}

/// The help document of a session with the plugin in `plugin`'s state.
pub(crate) fn help_doc(session: &SessionInfo, plugin: &PluginStatus) -> Doc {
    let mut doc = Doc::default();
    doc.push("Session", LineKind::Heading);
    let log = session
        .log_path
        .as_ref()
        .map_or("(not logging)".to_owned(), |p| p.display().to_string());
    doc.push(&format!("  log file   {log}"), LineKind::Body);
    doc.push(
        "             (WORKBENCH_LOG=debug for more; nothing is printed over the UI)",
        LineKind::Note,
    );
    doc.push(&format!("  workdir    {}", session.workdir), LineKind::Body);
    doc.push(
        &format!("  session    {}", session.session_id),
        LineKind::Body,
    );
    if let Some(root) = &session.spill_root {
        doc.push(&format!("  spill root {}", root.display()), LineKind::Body);
        let dir = root.join(fs_search_exec::session_dir_name(&session.session_id));
        doc.push(&format!("  spill dir  {}", dir.display()), LineKind::Body);
        for line in [
            "             (this session's spill files: session- and 12 hex digits of the",
            "             SHA-256 of the session id, a fixed-length name whatever the id;",
            "             each file is <random>-<tool>-results.txt)",
        ] {
            doc.push(line, LineKind::Note);
        }
    }
    if let PluginStatus::RgMissing(warning) = plugin {
        doc.push("ripgrep", LineKind::Heading);
        doc.push(&format!("  {warning}"), LineKind::Alert);
        for line in RG_INSTALL_HINT {
            doc.push(&format!("  {line}"), LineKind::Note);
        }
    }
    for context in help_contexts() {
        let rows: Vec<String> = BINDINGS
            .iter()
            .filter(|b| b.context == context)
            .map(|b| format!("  {:<7} {}", keymap::label(b), b.help))
            .collect();
        if rows.is_empty() {
            continue;
        }
        doc.push(&keymap::context_title(context), LineKind::Heading);
        for row in rows {
            doc.push(&row, LineKind::Body);
        }
    }
    doc.push("Tabs", LineKind::Heading);
    let tabs: Vec<String> = Tab::ALL.iter().map(|t| t.numbered_title()).collect();
    doc.push(&format!("  {}", tabs.join("  ")), LineKind::Body);
    doc.push(
        &format!("Reading the {} tab", Tab::Text.title()),
        LineKind::Heading,
    );
    for line in [
        "  The pane shows the model-visible text exactly; long lines wrap.",
        "  gutter: N│ a line of the page   ┆ its wrapped continuation",
        "          N▶ the footer the engine appended (over-cap result)",
        "  The spill locator is underlined and repeated on the pane's bottom edge;",
        "  o opens the spill file. Control characters show as ␉ ␍ … (one cell each).",
        "  L shows the page through an agent host's lens (the title names it): the",
        "  verdict on top, then exactly what that host's model receives, with",
        "           ✂ a line of the workbench's where the host cut (its own marker",
        "             text, underlined, is part of what the model receives; a line",
        "             cut inside goes on, unnumbered, after the ✂)",
        "  and the summary's tokens count what the model receives; L again: the next",
        "  host, then none.",
    ] {
        doc.push(line, LineKind::Body);
    }
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_help_names_the_spill_dir_and_how_it_comes_from_the_session_id() {
        let session = SessionInfo {
            workdir: "/work/tree".into(),
            session_id: "session-1".into(),
            spill_root: Some("/tmp/spill".into()),
            log_path: None,
            recordings_dir: "/tmp/recordings".into(),
            rg: fs_search_process::RgInfo::default(),
            executor: None,
            contract: Default::default(),
        };
        let doc = help_doc(&session, &PluginStatus::Registered);
        let text: Vec<&str> = doc.lines.iter().map(|l| l.text.as_str()).collect();
        // The same name the spill store gives the directory.
        let dir = format!(
            "  spill dir  /tmp/spill/{}",
            fs_search_exec::session_dir_name("session-1")
        );
        assert!(text.contains(&dir.as_str()), "{text:#?}");
        assert!(dir.len() == "  spill dir  /tmp/spill/session-".len() + 12);
        assert!(
            text.iter().any(|l| l.contains("SHA-256 of the session id")),
            "{text:#?}"
        );
    }
}
