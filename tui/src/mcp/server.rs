//! The MCP server handler: what `initialize`, `tools/list`, `tools/call`
//! and `logging/setLevel` answer.
//!
//! - `initialize`: server `fs-search-workbench` at the crate version,
//!   capabilities `tools` and `logging`, and as `instructions` the plugin's
//!   prompt sections in order joined by one blank line (what `workbench
//!   surface` shows; empty when rg is missing). Protocol versions
//!   2025-06-18 and 2025-11-25 (a client asking for another gets
//!   2025-11-25, as the lifecycle's version negotiation says).
//! - `tools/list`: the registered tools in order, `inputSchema` = the
//!   engine's `parameters`.
//! - `tools/call`: an [`AnswerSource`] given (`--replay`) is asked first
//!   and its answer sent as it is; else the arguments go to the engine exactly as received
//!   (absent arguments as `{}`): a missing, extra or mistyped argument gets
//!   the engine's own error result, never a protocol error. The result is
//!   one text item holding exactly the model-visible text, `isError`, and
//!   under `_meta` the key [`RESULT_META_KEY`] the object
//!   `{error: {name, code} | null, spill: {locator, bytes} | null,
//!   durationMs}`. An unknown tool name is a JSON-RPC error `-32602`
//!   ("Unknown tool: NAME"), as the specification's tools section says.
//! - Over HTTP, a call is also cancelled when its client disconnects or
//!   its session ends (see `super::abort`).
//! - Warnings (the load warning when rg is missing, a call's warnings, a
//!   call that could not be recorded: "call N was not recorded: …") go
//!   to the log file and to the client as `notifications/message` at level
//!   `warning`, unless the client raised its level above that.

// Logging notifications are deprecated in rmcp (SEP-2577, a newer protocol
// revision) but are part of the 2025-06-18 and 2025-11-25 revisions served.
#![allow(deprecated)]

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, LoggingLevel, LoggingMessageNotificationParam, MetaObject,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig, SetLevelRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use super::answers::AnswerSource;
use super::calls::{CallRunner, Finished, Progress};
use super::recording::Recording;

/// The server's name in `serverInfo`.
pub const SERVER_NAME: &str = "fs-search-workbench";

/// The `_meta` key of a call result's error, spill and duration.
pub const RESULT_META_KEY: &str = "fs-search-workbench/result";

/// The logger name of the log notifications.
const LOGGER: &str = "fs-search-workbench";

/// The protocol revisions this server implements.
const PROTOCOL_VERSIONS: [ProtocolVersion; 2] =
    [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25];

/// `LoggingLevel` as a number (debug 0 … emergency 7).
fn severity(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

/// The handler of one connection.
pub struct McpServer {
    runner: Arc<CallRunner>,
    tools: Vec<Tool>,
    instructions: String,
    load_warnings: Vec<String>,
    recording: Option<Arc<Recording>>,
    /// Asked for a call's answer before the engine (`--replay`).
    answers: Option<Arc<dyn AnswerSource>>,
    /// The lowest severity sent to the client.
    min_level: AtomicU8,
}

impl McpServer {
    pub fn new(
        runner: Arc<CallRunner>,
        load_warnings: Vec<String>,
        recording: Option<Arc<Recording>>,
    ) -> Self {
        let registry = runner.registry();
        let tools = registry
            .tool_definitions()
            .into_iter()
            .map(|d| {
                let schema = match d.parameters {
                    Value::Object(map) => map,
                    other => Map::from_iter([("type".to_owned(), other)]),
                };
                Tool::new(d.name, d.description, Arc::new(schema))
            })
            .collect();
        Self {
            instructions: registry.assembled_prompt(),
            tools,
            runner,
            load_warnings,
            recording,
            answers: None,
            min_level: AtomicU8::new(severity(LoggingLevel::Info)),
        }
    }

    /// Asks `answers` for each call's answer before running it (see
    /// [`AnswerSource`]).
    pub fn with_answers(mut self, answers: Arc<dyn AnswerSource>) -> Self {
        self.answers = Some(answers);
        self
    }

    /// Logs `text` and sends it to the client as a warning.
    async fn warn(&self, peer: &Peer<RoleServer>, text: &str) {
        tracing::warn!("{text}");
        if severity(LoggingLevel::Warning) < self.min_level.load(Ordering::Relaxed) {
            return;
        }
        let param = LoggingMessageNotificationParam::new(LoggingLevel::Warning, json!(text))
            .with_logger(LOGGER);
        if let Err(e) = peer.notify_logging_message(param).await {
            tracing::debug!("cannot send a log notification: {e}");
        }
    }

    fn result_of(finished: &Finished) -> CallToolResult {
        let result = &finished.result;
        let content = vec![ContentBlock::text(result.text.clone())];
        let mut out = if result.is_error {
            CallToolResult::error(content)
        } else {
            CallToolResult::success(content)
        };
        let error = result
            .error
            .as_ref()
            .map(|e| json!({"name": e.name(), "code": e.code_str()}));
        let spill = result
            .spill
            .as_ref()
            .map(|s| json!({"locator": s.locator, "bytes": s.bytes}));
        let mut meta = MetaObject::new();
        meta.0.insert(
            RESULT_META_KEY.to_owned(),
            json!({
                "error": error,
                "spill": spill,
                "durationMs": (finished.duration_ms * 1000.0).round() / 1000.0,
            }),
        );
        out.meta = Some(meta);
        out
    }
}

/// Progress notifications for one call's token.
struct PeerProgress {
    peer: Peer<RoleServer>,
    token: ProgressToken,
}

impl Progress for PeerProgress {
    async fn tick(&mut self, tick: u64) {
        let mut param = ProgressNotificationParam::new(self.token.clone(), tick as f64);
        param.message = Some("rg is running".to_owned());
        if let Err(e) = self.peer.notify_progress(param).await {
            tracing::debug!("cannot send progress: {e}");
        }
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .build();
        let mut info = ServerConfig::new(capabilities).with_instructions(self.instructions.clone());
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.server_info = Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION"));
        info
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(&PROTOCOL_VERSIONS)
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        tracing::info!(session = self.runner.session_id(), "client initialized");
        for warning in &self.load_warnings {
            self.warn(&context.peer, warning).await;
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.min_level
            .store(severity(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.clone()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.as_ref();
        if !self.tools.iter().any(|t| t.name == name) {
            tracing::info!(tool = name, "unknown tool");
            return Err(ErrorData::invalid_params(
                format!("Unknown tool: {name}"),
                None,
            ));
        }
        let args = Value::Object(request.arguments.clone().unwrap_or_default());
        if let Some(answer) = self.answers.as_ref().and_then(|a| a.answer(name, &args)) {
            for warning in &answer.warnings {
                self.warn(&context.peer, warning).await;
            }
            return Ok(CallToolResponse::Complete(answer.result));
        }
        let progress = context.meta.get_progress_token().map(|token| PeerProgress {
            peer: context.peer.clone(),
            token,
        });
        // Over HTTP, a client gone mid-call or its session ended aborts
        // the call like `notifications/cancelled` does.
        let abort = super::abort::call_abort(&context.extensions).unwrap_or_default();
        let cancel = context.ct.child_token();
        let run = self.runner.run(name, &args, &cancel, progress);
        tokio::pin!(run);
        let finished = loop {
            tokio::select! {
                finished = &mut run => break finished,
                () = abort.cancelled(), if !cancel.is_cancelled() => {
                    tracing::info!(tool = name, "the client went away or its session ended");
                    cancel.cancel();
                }
            }
        };
        tracing::info!(
            number = finished.number,
            tool = name,
            is_error = finished.result.is_error,
            cancelled = finished.cancelled,
            duration_ms = finished.duration_ms,
            "call finished"
        );
        for warning in &finished.result.warnings {
            self.warn(&context.peer, warning).await;
        }
        if let Some(recording) = &self.recording {
            if finished.cancelled {
                tracing::info!(number = finished.number, "cancelled: not recorded");
            } else {
                let appended =
                    recording.append_call(self.runner.session_id(), name, &args, &finished.result);
                if let Err(e) = appended {
                    let text = format!("call {} was not recorded: {e}", finished.number);
                    self.warn(&context.peer, &text).await;
                }
            }
        }
        Ok(CallToolResponse::Complete(Self::result_of(&finished)))
    }
}
