//! The `tools/post-execute` waterfall and the package's spill listener
//! (CONTRACT §1.2 step 5, §8).
//!
//! Listeners run in registration order; each receives the decision that
//! the listeners registered after it composed (`next()`), so the registry
//! evaluates them from last to first. This is exactly the original's
//! waterfall for listeners that call `next()` once, which all of ours do.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::Value;

use crate::registry::tools::ToolKind;
use crate::render::SpillSlot;
use crate::render::page::Page;
use crate::request::config::Config;
use crate::request::exec::ExecContext;
use crate::result::ToolResult;
use crate::spill::{SaveTextSpill, SpillRef, SpillStore, TextPieces};

/// An accepted result, optionally with replacements.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Accept {
    /// Replaces the rendered page only.
    pub content: Option<Page>,
    /// Replaces the canonical value (re-validated and re-rendered).
    pub value: Option<Value>,
    /// Contexts to attach to the result.
    pub additional_contexts: Option<Vec<String>>,
    /// The spill that produced `content`, for callers that show it.
    pub spill: Option<SpillRef>,
}

/// A listener's decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Accept the result, optionally with replacements.
    Accept(Accept),
    /// Replace the result with an error carrying `feedback`.
    Block {
        /// The error message the result carries.
        feedback: String,
    },
}

impl Default for Decision {
    fn default() -> Self {
        Self::Accept(Accept::default())
    }
}

/// What a listener sees of the call.
pub struct PostExecuteCall<'a> {
    /// The tool called.
    pub tool: &'a str,
    /// The call's execution context.
    pub exec: &'a ExecContext,
    /// The result so far.
    pub result: &'a ToolResult,
    /// Where the page of `result` leaves its footer's recovery sentence,
    /// when it has a footer.
    pub(crate) spill_slot: Option<SpillSlot>,
    pub(crate) warnings: &'a Mutex<Vec<String>>,
}

impl PostExecuteCall<'_> {
    /// Logs a warning and attaches it to the call's result.
    pub fn warn(&self, message: String) {
        tracing::warn!("{message}");
        if let Ok(mut warnings) = self.warnings.lock() {
            warnings.push(message);
        }
    }
}

#[async_trait]
/// One link of the post-execute chain.
pub trait PostExecuteListener: Send + Sync {
    /// Decides given `next`, the decision of the later listeners.
    async fn decide(&self, call: &PostExecuteCall<'_>, next: Decision) -> Decision;
}

/// The package's listener for one tool: spills an over-cap direct success.
pub(crate) struct SpillListener {
    pub tool: ToolKind,
    pub config: Arc<Config>,
    pub store: Option<Arc<dyn SpillStore>>,
}

impl SpillListener {
    async fn try_save(
        &self,
        call: &PostExecuteCall<'_>,
        content: &mut (dyn TextPieces + '_),
    ) -> Option<SpillRef> {
        let tool = self.tool.name();
        let Some(session_id) = call.exec.session_id() else {
            call.warn(format!(
                "tool-fs-search: no session owner for {tool} result; complete result not saved"
            ));
            return None;
        };
        let Some(store) = &self.store else {
            call.warn(format!(
                "tool-fs-search: no ctx.spillStore backend loaded; complete {tool} result not saved"
            ));
            return None;
        };
        let input = SaveTextSpill {
            session_id: session_id.to_owned(),
            tool_name: call.tool.to_owned(),
            call_id: call.exec.call_id.clone(),
            label: "result".to_owned(),
            suggested_name: self.tool.spill_name().to_owned(),
            content: String::new(),
        };
        match store.save_text_in_pieces(input, content).await {
            Ok(saved) => Some(saved),
            Err(e) => {
                call.warn(format!(
                    "tool-fs-search: saveText failed for {tool}: Error: {e}; complete result not saved"
                ));
                None
            }
        }
    }
}

#[async_trait]
impl PostExecuteListener for SpillListener {
    async fn decide(&self, call: &PostExecuteCall<'_>, next: Decision) -> Decision {
        let Decision::Accept(accept) = &next else {
            return next;
        };
        let accepted_surface_value = accept.content.is_none()
            && accept.value.is_none()
            && !call.exec.nested
            && call.tool == self.tool.name()
            && !call.result.is_error;
        let Some(value) = call
            .result
            .value
            .as_ref()
            .filter(|_| accepted_surface_value)
        else {
            return next;
        };
        if value.len() <= self.tool.cap(&self.config) {
            return next;
        }
        let mut content = self.tool.spill_pieces(value, &self.config);
        let spill = self.try_save(call, content.as_mut()).await;
        // The page was rendered (for glob: sampled) with the result; only
        // its recovery sentence changes. An over-cap page always has a
        // slot; rendering again covers a result that came without one.
        let page = call
            .spill_slot
            .and_then(|slot| slot.fill(&call.result.text, spill.as_ref()))
            .unwrap_or_else(|| self.tool.render(value, &self.config, spill.as_ref()));
        Decision::Accept(Accept {
            content: Some(page),
            value: None,
            additional_contexts: accept.additional_contexts.clone(),
            spill,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{glob_page, render_glob, render_glob_page};
    use crate::spill::{SaveTextSpill, SpillError, SpillRef, SpillStore};
    use crate::value::GlobValue;

    /// A store that keeps nothing and names every save at one locator
    /// (the listener's use of the store is not what this module tests).
    struct NamingStore;

    #[async_trait::async_trait]
    impl SpillStore for NamingStore {
        async fn save_text(&self, input: SaveTextSpill) -> Result<SpillRef, SpillError> {
            Ok(SpillRef {
                locator: "/spill/glob-é.txt".into(),
                bytes: input.content.len() as u64,
                retrieval_hint: "read it".into(),
            })
        }
    }

    /// The spill listener names the saved spill in the page the call
    /// rendered instead of rendering (for glob: sampling) the value again:
    /// given a page whose paths are not the ones the value renders to, the
    /// page it returns keeps them.
    #[tokio::test]
    async fn the_spill_listener_completes_the_rendered_page_instead_of_rendering_again() {
        let config = Arc::new(Config {
            glob_max_results: 2u64.into(),
            ..Config::with_sampling(true)
        });
        let value = GlobValue {
            root: ".".into(),
            paths: vec!["a/1".into(), "a/2".into(), "b/3".into()],
        };
        let fresh = render_glob_page(&glob_page(&value, &config), 3, None);
        assert!(
            fresh
                .page
                .text
                .starts_with("a/1\nb/3\n\n(Showing 2 of 3 paths")
        );
        // The same length, so the slot's offsets still hold.
        let given = fresh.page.text.replacen("a/1\nb/3", "x/9\ny/9", 1);
        let result = ToolResult::success(
            "glob",
            Page::plain(given),
            crate::value::ToolValue::Glob(value.clone()),
            None,
        );
        let listener = SpillListener {
            tool: ToolKind::Glob,
            config: config.clone(),
            store: Some(Arc::new(NamingStore)),
        };
        let exec = ExecContext::new("call-1").with_session(Some("session-1"), Some("/"));
        let warnings = Mutex::new(Vec::new());
        let call = PostExecuteCall {
            tool: "glob",
            exec: &exec,
            result: &result,
            spill_slot: fresh.slot,
            warnings: &warnings,
        };
        let Decision::Accept(accept) = listener.decide(&call, Decision::default()).await else {
            panic!("the listener accepts");
        };
        assert!(warnings.into_inner().unwrap().is_empty());
        let spill = accept.spill.expect("the full list is saved");
        let rendered = render_glob(&value, &config, Some(&spill));
        let mut expected = rendered.clone();
        expected.text = rendered.text.replacen("a/1\nb/3", "x/9\ny/9", 1);
        assert_eq!(accept.content, Some(expected));
    }
}
