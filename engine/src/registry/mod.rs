//! The minimal tool host (CONTRACT §1.2): registered tools, prompt
//! sections and post-execute listeners; one call's flow from dispatch
//! through the timeout policy, rendering, meta and post-execute to the
//! final abort check.
//!
//! Public for what the registry answers besides a call: how a load went
//! ([`LoadOutcome`], [`LoadError`], the probe [`PROBE_COMMAND`] and
//! [`RG_MISSING_WARNING`]), the fixed surface ([`PromptSection`],
//! [`ToolDefinition`]) and the tools' names ([`ToolKind`]).

pub(crate) mod plugin;
pub(crate) mod surface;
pub(crate) mod tools;

pub use plugin::{LoadError, LoadOutcome, PROBE_COMMAND, RG_MISSING_WARNING};
pub use surface::{PromptSection, ToolDefinition};
pub use tools::ToolKind;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use crate::bash::BashExecutor;
use crate::error::ToolError;
use crate::registry::surface::tool_definitions;
use crate::render::SpillSlot;
use crate::request::args::{GlobArgs, GrepArgs};
use crate::request::config::Config;
use crate::request::exec::ExecContext;
use crate::request::json::JsonError;
use crate::result::ToolResult;
use crate::spill::SpillStore;
use crate::spill::post_execute::{Decision, PostExecuteCall, PostExecuteListener};
use crate::value::ToolValue;

/// The largest delay the original's timers accept.
const MAX_TIMER_MS: u64 = 2_147_483_647;

/// The host services a plugin can use.
#[derive(Clone, Default)]
pub struct Host {
    /// The bash executor; without one the plugin stays pending.
    pub bash: Option<Arc<dyn BashExecutor>>,
    /// The spill store, looked up at the moment of a save.
    pub spill_store: Option<Arc<dyn SpillStore>>,
    /// Whether the timeout policy enforces each tool's `timeoutMs`.
    pub timeout_policy: bool,
}

/// Who registered an entry, so a plugin's disposal removes only its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Owner {
    FsSearch,
    /// Registered by the embedding program (tests, the workbench).
    External,
}

struct RegisteredTool {
    tool: ToolKind,
    config: Arc<Config>,
    bash: Arc<dyn BashExecutor>,
}

/// The tool registry.
pub struct Registry {
    host: Host,
    tools: Vec<RegisteredTool>,
    sections: Vec<(Owner, PromptSection)>,
    listeners: Vec<(Owner, Arc<dyn PostExecuteListener>)>,
}

impl Registry {
    /// An empty registry on `host`.
    pub fn new(host: Host) -> Self {
        Self {
            host,
            tools: Vec::new(),
            sections: Vec::new(),
            listeners: Vec::new(),
        }
    }

    /// The host services.
    pub fn host(&self) -> &Host {
        &self.host
    }

    pub(crate) fn add_tool(
        &mut self,
        tool: ToolKind,
        config: Arc<Config>,
        bash: Arc<dyn BashExecutor>,
    ) {
        self.tools.push(RegisteredTool { tool, config, bash });
    }

    pub(crate) fn add_section(&mut self, owner: Owner, section: PromptSection) {
        self.sections.push((owner, section));
    }

    pub(crate) fn add_listener(&mut self, owner: Owner, listener: Arc<dyn PostExecuteListener>) {
        self.listeners.push((owner, listener));
    }

    pub(crate) fn remove_owned(&mut self, owner: Owner) {
        // Only the fs-search plugin registers tools.
        if owner == Owner::FsSearch {
            self.tools.clear();
        }
        self.sections.retain(|(o, _)| *o != owner);
        self.listeners.retain(|(o, _)| *o != owner);
    }

    /// Registers a post-execute listener after the existing ones.
    pub fn add_post_execute_listener(&mut self, listener: Arc<dyn PostExecuteListener>) {
        self.add_listener(Owner::External, listener);
    }

    /// The prompt sections, in order.
    pub fn prompt_sections(&self) -> Vec<PromptSection> {
        let mut sections: Vec<PromptSection> =
            self.sections.iter().map(|(_, s)| s.clone()).collect();
        sections.sort_by_key(|s| s.order);
        sections
    }

    /// The model-visible tool definitions, in registration order.
    pub fn tool_definitions(&self) -> Vec<ToolDefinition> {
        self.tools
            .iter()
            .filter_map(|t| {
                tool_definitions(&t.config)
                    .into_iter()
                    .find(|d| d.name == t.tool.name())
            })
            .collect()
    }

    /// The assembled system prompt (sections joined by blank lines).
    pub fn assembled_prompt(&self) -> String {
        self.prompt_sections()
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    fn tool(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.iter().find(|t| t.tool.name() == name)
    }

    /// Runs `glob` with typed arguments: the same path as [`Registry::call`]
    /// with the arguments object they stand for.
    pub async fn glob(&self, args: &GlobArgs, exec: &ExecContext) -> ToolResult {
        self.call(ToolKind::Glob.name(), &args.to_json(), exec)
            .await
    }

    /// Runs `grep` with typed arguments: the same path as [`Registry::call`]
    /// with the arguments object they stand for.
    pub async fn grep(&self, args: &GrepArgs, exec: &ExecContext) -> ToolResult {
        self.call(ToolKind::Grep.name(), &args.to_json(), exec)
            .await
    }

    /// [`Registry::call`] with the model's raw argument text, read as the
    /// reference's `JSON.parse` reads it ([`crate::json::parse`]: a lone
    /// surrogate escape becomes U+FFFD, nesting is bounded by
    /// [`crate::json::MAX_DEPTH`]). Text that is not such JSON is an
    /// error, and nothing runs.
    pub async fn call_json(
        &self,
        name: &str,
        args_json: &str,
        exec: &ExecContext,
    ) -> Result<ToolResult, JsonError> {
        let args = crate::request::json::parse(args_json)?;
        Ok(self.call(name, &args, exec).await)
    }

    /// Executes one call by tool name with the model's arguments as a JSON
    /// value ([`Registry::call_json`] takes their text): unknown tool, argument-schema check, the tool,
    /// rendering, post-execute (spill), the timeout policy, cancellation.
    pub async fn call(&self, name: &str, args: &Value, exec: &ExecContext) -> ToolResult {
        let Some(registered) = self.tool(name) else {
            return ToolResult::failure(name, &ToolError::UnknownTool(name.to_owned()));
        };
        if exec.signal.is_cancelled() {
            return ToolResult::failure(name, &ToolError::AbortedBeforeDispatch);
        }
        let (result, slot) = match self.run_body(registered, args, exec).await {
            Ok(value) => self.success(registered, value, exec),
            Err(e) => (ToolResult::failure(name, &e), None),
        };
        let mut result = self.post_execute(registered, exec, result, slot).await;
        if exec.signal.is_cancelled() && !result.is_error {
            let warnings = std::mem::take(&mut result.warnings);
            result = ToolResult::failure(name, &ToolError::Aborted);
            result.warnings = warnings;
        }
        result
    }

    /// The tool body, inside the timeout policy when it is loaded.
    async fn run_body(
        &self,
        registered: &RegisteredTool,
        args: &Value,
        exec: &ExecContext,
    ) -> Result<ToolValue, ToolError> {
        let config = &registered.config;
        if !self.host.timeout_policy {
            return registered
                .tool
                .execute(config, &registered.bash, args, exec)
                .await;
        }
        let configured = config.timeout_ms;
        let timeout_ms = configured.as_u64_saturating();
        if timeout_ms > MAX_TIMER_MS {
            // Printed as JavaScript prints the configured number.
            return Err(ToolError::Plain(format!(
                "timeout-policy: timeoutMs {configured} exceeds the largest timer delay ({MAX_TIMER_MS}ms)"
            )));
        }
        let fused = exec.signal.child_token();
        let inner = exec.clone().with_signal(fused.clone());
        let body = registered
            .tool
            .execute(config, &registered.bash, args, &inner);
        tokio::pin!(body);
        tokio::select! {
            outcome = &mut body => outcome,
            () = tokio::time::sleep(Duration::from_millis(timeout_ms)) => {
                fused.cancel();
                let _ = body.await;
                Err(ToolError::Timeout(timeout_ms))
            }
        }
    }

    /// The successful result of `value`, and where its page's footer
    /// leaves the spill to be named (post-execute fills it in, rather than
    /// rendering the page again).
    fn success(
        &self,
        registered: &RegisteredTool,
        value: ToolValue,
        exec: &ExecContext,
    ) -> (ToolResult, Option<SpillSlot>) {
        let tool = registered.tool;
        let (rendered, meta) = tool.render_with_meta(&value, &registered.config, !exec.nested);
        let result = ToolResult::success(tool.name(), rendered.page, value, meta);
        (result, rendered.slot)
    }

    async fn post_execute(
        &self,
        registered: &RegisteredTool,
        exec: &ExecContext,
        mut result: ToolResult,
        spill_slot: Option<SpillSlot>,
    ) -> ToolResult {
        let warnings = Mutex::new(Vec::new());
        let decision = {
            let call = PostExecuteCall {
                tool: registered.tool.name(),
                exec,
                result: &result,
                spill_slot,
                warnings: &warnings,
            };
            let mut decision = Decision::default();
            for (_, listener) in self.listeners.iter().rev() {
                decision = listener.decide(&call, decision).await;
            }
            decision
        };
        let warnings = warnings.into_inner().unwrap_or_default();
        match decision {
            Decision::Block { feedback } => {
                result = ToolResult::failure(registered.tool.name(), &ToolError::Plain(feedback));
            }
            Decision::Accept(accept) => {
                if let Some(replacement) = accept.value {
                    result = match registered.tool.validate_value(&replacement) {
                        Ok(value) => self.success(registered, value, exec).0,
                        Err(e) => ToolResult::failure(registered.tool.name(), &e),
                    };
                }
                if let Some(content) = accept.content {
                    result.text = content.text;
                    result.parts = content.parts;
                    result.spill = accept.spill;
                }
                result
                    .additional_contexts
                    .extend(accept.additional_contexts.unwrap_or_default());
            }
        }
        result.warnings.extend(warnings);
        result
    }
}
