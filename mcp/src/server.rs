//! The MCP server handler: what `initialize`, `server/discover`,
//! `tools/list`, `tools/call` and `logging/setLevel` answer, in both
//! protocol eras ([`super::era`]). Every `tools/call` of either era is
//! dispatched by [`McpServer::call_tool`], the one place a call runs.
//!
//! - `initialize` (2025 revisions): server `fs-search-workbench` at the
//!   crate version, capabilities `tools` and `logging`, and as
//!   `instructions` the plugin's prompt sections in order joined by one
//!   blank line (what `workbench surface` shows; empty when rg is
//!   missing). Protocol versions 2025-06-18 and 2025-11-25 (a client asking
//!   for another gets 2025-11-25, as the lifecycle's version negotiation
//!   says).
//! - `server/discover` (2026-07-28): the same capabilities and
//!   instructions, `supportedVersions` 2025-06-18, 2025-11-25 and
//!   2026-07-28, and the server's name and version under `_meta`
//!   (`io.modelcontextprotocol/serverInfo`). rmcp checks each 2026-07-28
//!   request's `_meta` (`-32602` when `protocolVersion` or
//!   `clientCapabilities` is missing) and answers an unsupported version
//!   with `-32022` listing [`PROTOCOL_VERSIONS`].
//! - `tools/list`: the registered tools in order, `inputSchema` = the
//!   engine's `parameters`; on 2026-07-28 with the caching hints
//!   `ttlMs` = [`TOOLS_TTL_MS`] and `cacheScope` `private` (the list is
//!   fixed for the server's life; a restart with another config may change
//!   it) and `resultType` `complete`.
//! - `tools/call`: an [`AnswerSource`] given (`--replay`) is asked first
//!   and its answer sent as it is; else the arguments go to the engine exactly as received
//!   (absent arguments as `{}`): a missing, extra or mistyped argument gets
//!   the engine's own error result, never a protocol error. The result is
//!   one text item holding exactly the model-visible text, `isError`, and
//!   under `_meta` the key [`crate::result::RESULT_META_KEY`] the object
//!   `{error: {name, code} | null, spill: {locator, bytes} | null,
//!   durationMs}`. An unknown tool name is a JSON-RPC error `-32602`
//!   ("Unknown tool: NAME"), as the specification's tools section says.
//! - Over HTTP, a call is also cancelled when its client disconnects or
//!   its session ends (see `super::abort`).
//! - Warnings (the load warning when rg is missing, a call's warnings, a
//!   call that could not be recorded: "call N was not recorded: …") go
//!   to the log file and to the client as `notifications/message` at level
//!   `warning`, unless the client raised its level above that. A 2025
//!   session hears the load warning once, after `notifications/initialized`;
//!   2026-07-28 has no session, so each `server/discover` and `tools/list`
//!   carries it, at the level its `_meta` names (none without one). Over
//!   stdio rmcp answers a `server/discover` sent before any lifecycle with
//!   no way to reach the client, so there the `tools/list` carries it.

// Logging notifications are deprecated in rmcp (SEP-2577, a newer protocol
// revision) but are part of the 2025-06-18 and 2025-11-25 revisions served.
#![allow(deprecated)]

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, DiscoverResult,
    Implementation, ListToolsResult, LoggingLevel, LoggingMessageNotificationParam,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig, SetLevelRequestMethod, SetLevelRequestParams, Tool,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use super::answers::AnswerSource;
use super::calls::{CallRunner, Finished, Progress};
use super::session_recording::{FinishedCall, Recording};
use fs_search_transcript::ClientInfo;

/// The server's name in `serverInfo`.
pub(crate) const SERVER_NAME: &str = "fs-search-workbench";

/// The `_meta` key of a tool in `tools/list` by which Claude Code lets a
/// tool declare how many characters of its results stay inline.
pub(crate) const MAX_RESULT_SIZE_CHARS_KEY: &str = "anthropic/maxResultSizeChars";

/// The logger name of the log notifications.
const LOGGER: &str = "fs-search-workbench";

/// The protocol revisions this server implements.
pub(crate) const PROTOCOL_VERSIONS: [ProtocolVersion; 3] = [
    ProtocolVersion::V_2025_06_18,
    ProtocolVersion::V_2025_11_25,
    ProtocolVersion::V_2026_07_28,
];

/// How long a 2026-07-28 client may cache `tools/list` (`ttlMs`).
pub(crate) const TOOLS_TTL_MS: u64 = 300_000;

/// Whether the request of `context` is a 2026-07-28 (stateless) one: its
/// `_meta` names that revision, or its connection runs it (stdio after a
/// first stateless request).
fn is_stateless(context: &RequestContext<RoleServer>) -> bool {
    context
        .meta
        .protocol_version()
        .or_else(|| context.protocol_version())
        .is_some_and(|v| super::era::is_stateless_version(&v))
}

/// The client that sent the request of `context`: the request's own
/// `_meta["io.modelcontextprotocol/clientInfo"]` (2026-07-28), else the
/// `clientInfo` its session's `initialize` sent (2025 revisions); `None`
/// when neither names a client (an empty name counts as none).
fn client_of(context: &RequestContext<RoleServer>) -> Option<ClientInfo> {
    let info = context.client_info()?;
    (!info.name.is_empty()).then(|| ClientInfo {
        name: info.name,
        version: Some(info.version).filter(|v| !v.is_empty()),
    })
}

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
pub(crate) struct McpServer {
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
    pub(crate) fn new(
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

    /// Declares `chars` as `_meta["anthropic/maxResultSizeChars"]` on
    /// every tool of `tools/list` (`None`: the tools are left as they are),
    /// so Claude Code keeps results up to that many characters inline.
    pub(crate) fn with_declared_max_result_chars(mut self, chars: Option<u64>) -> Self {
        if let Some(chars) = chars {
            for tool in &mut self.tools {
                let mut meta = tool.meta.take().unwrap_or_default();
                meta.0
                    .insert(MAX_RESULT_SIZE_CHARS_KEY.to_owned(), json!(chars));
                tool.meta = Some(meta);
            }
        }
        self
    }

    /// Asks `answers` for each call's answer before running it (see
    /// [`AnswerSource`]).
    pub(crate) fn with_answers(mut self, answers: Arc<dyn AnswerSource>) -> Self {
        self.answers = Some(answers);
        self
    }

    /// The lowest severity sent to the client for the request of
    /// `context`: the session's level (2025), or the request's own
    /// `_meta` `io.modelcontextprotocol/logLevel` (2026-07-28: none sent
    /// without it).
    fn threshold(&self, context: &RequestContext<RoleServer>) -> Option<u8> {
        if is_stateless(context) {
            context.meta.log_level().map(severity)
        } else {
            Some(self.min_level.load(Ordering::Relaxed))
        }
    }

    /// Logs `text` and sends it to the client as a warning if `threshold`
    /// lets it through.
    async fn warn(&self, peer: &Peer<RoleServer>, threshold: Option<u8>, text: &str) {
        tracing::warn!("{text}");
        Self::notify_warning(peer, threshold, text).await;
    }

    /// A 2026-07-28 request has no session that heard the load warnings
    /// at `notifications/initialized`: a request asking what the server
    /// offers (`server/discover`, `tools/list`) gets them as log
    /// notifications, at the level its `_meta` names.
    async fn warn_stateless_of_load(&self, context: &RequestContext<RoleServer>) {
        if self.load_warnings.is_empty() || !is_stateless(context) {
            return;
        }
        let threshold = self.threshold(context);
        for warning in &self.load_warnings {
            Self::notify_warning(&context.peer, threshold, warning).await;
        }
    }

    /// Sends `text` to the client as a warning if `threshold` lets it
    /// through.
    async fn notify_warning(peer: &Peer<RoleServer>, threshold: Option<u8>, text: &str) {
        if threshold.is_none_or(|min| severity(LoggingLevel::Warning) < min) {
            return;
        }
        let param = LoggingMessageNotificationParam::new(LoggingLevel::Warning, json!(text))
            .with_logger(LOGGER);
        if let Err(e) = peer.notify_logging_message(param).await {
            tracing::debug!("cannot send a log notification: {e}");
        }
    }

    fn result_of(finished: &Finished) -> CallToolResult {
        super::result::of_tool_result(&finished.result, finished.duration_ms)
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
        let threshold = Some(self.min_level.load(Ordering::Relaxed));
        for warning in &self.load_warnings {
            self.warn(&context.peer, threshold, warning).await;
        }
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if is_stateless(&context) {
            return Err(ErrorData::method_not_found::<SetLevelRequestMethod>());
        }
        self.min_level
            .store(severity(request.level), Ordering::Relaxed);
        Ok(())
    }

    async fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        // Before any lifecycle (stdio) rmcp gives this handler no way to
        // reach the client: the warnings then come with `tools/list`.
        self.warn_stateless_of_load(&context).await;
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.warn_stateless_of_load(&context).await;
        let mut result = ListToolsResult::with_all_items(self.tools.clone());
        if is_stateless(&context) {
            result.ttl_ms = Some(TOOLS_TTL_MS);
            result.cache_scope = Some(CacheScope::Private);
        }
        Ok(result)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
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
        // A 2026-07-28 call is served without a session: its arguments as
        // read by `super::http_post` come back from the stash (rmcp's copy has
        // deep nesting cut).
        let arguments = super::sessions::stashed_call_arguments(&context.extensions)
            .or_else(|| request.arguments.clone());
        let args = Value::Object(arguments.unwrap_or_default());
        let threshold = self.threshold(&context);
        if let Some(answer) = self.answers.as_ref().and_then(|a| a.answer(name, &args)) {
            for warning in &answer.warnings {
                self.warn(&context.peer, threshold, warning).await;
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
            self.warn(&context.peer, threshold, warning).await;
        }
        if let Some(recording) = &self.recording {
            if finished.cancelled {
                tracing::info!(number = finished.number, "cancelled: not recorded");
            } else {
                let client = client_of(&context);
                let appended = recording.append_call(&FinishedCall {
                    session_id: self.runner.session_id(),
                    client: client.as_ref(),
                    tool: name,
                    args: &args,
                    result: &finished.result,
                });
                if let Err(e) = appended {
                    let text = format!("call {} was not recorded: {e}", finished.number);
                    self.warn(&context.peer, threshold, &text).await;
                }
            }
        }
        Ok(CallToolResponse::Complete(Self::result_of(&finished)))
    }
}
