//! The official Rust SDK's client (`rmcp`) driving a server process over
//! its stdio: what it saw besides responses ([`Client`]), a connected
//! server ([`Connected`]), a call's result as JSON, and a call cancelled
//! while its rg blocks on a FIFO.

// Log notifications are deprecated in rmcp for a newer protocol revision;
// the revisions served here have them.
#![allow(deprecated)]

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::{McpServer, all_gone, rg_running_under, wait_until};
use crate::reliability::procfs::descendants;

/// What the client saw besides responses.
#[derive(Clone, Default)]
pub struct Client {
    /// The protocol version it asks for (2025-11-25 when `None`).
    pub version: Option<ProtocolVersion>,
    /// Every progress notification.
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// Every log notification.
    pub logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

impl ClientHandler for Client {
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("mcp-test", "1"),
        );
        config.protocol_version = self
            .version
            .clone()
            .unwrap_or(ProtocolVersion::V_2025_11_25);
        config
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.logs.lock().unwrap().push(params);
    }
}

/// A server process with the SDK's client connected over its stdio.
pub struct Connected {
    /// The client's service.
    pub service: RunningService<RoleClient, Client>,
    /// What the client saw besides responses.
    pub client: Client,
    /// The server's process id.
    pub pid: i32,
    _state: tempfile::TempDir,
}

/// Starts `server` on `dir` with `extra` (its `PATH` `path`, when given)
/// and connects `client` to it.
pub async fn connect_with(
    server: &McpServer,
    dir: &Path,
    extra: &[&str],
    client: Client,
    path: Option<&Path>,
) -> Connected {
    let state = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::from(server.command(dir, state.path(), extra));
    if let Some(path) = path {
        cmd.env("PATH", path);
    }
    let transport = TokioChildProcess::new(cmd).unwrap();
    let pid = i32::try_from(transport.id().unwrap()).unwrap();
    let service = client.clone().serve(transport).await.unwrap();
    Connected {
        service,
        client,
        pid,
        _state: state,
    }
}

/// [`connect_with`] a default client and the test's `PATH`.
pub async fn connect(server: &McpServer, dir: &Path, extra: &[&str]) -> Connected {
    connect_with(server, dir, extra, Client::default(), None).await
}

/// The parameters of a `tools/call` of `tool` with `args`.
pub fn params(tool: &str, args: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = args.as_object().cloned();
    params
}

/// A call's result as JSON (`content`, `isError`, `_meta`).
pub async fn mcp_call(c: &Connected, tool: &str, args: Value) -> Value {
    let result = c
        .service
        .peer()
        .call_tool(params(tool, args))
        .await
        .unwrap();
    serde_json::to_value(result).unwrap()
}

/// The text of a result's one text content.
pub fn text_of(result: &Value) -> &str {
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text");
    content[0]["text"].as_str().unwrap()
}

/// Sends a grep on `fifo` of the workdir, waits until its rg runs under
/// server `pid`, cancels it after 1.3 s and checks that the call's
/// processes end within 10 s and that progress came while it ran.
pub async fn cancel_a_call_blocked_on_the_fifo(peer: &Peer<RoleClient>, client: &Client, pid: i32) {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params(
        "grep",
        json!({"pattern": "x", "path": "fifo"}),
    )));
    let handle = peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .unwrap();
    wait_until("rg on the FIFO", Duration::from_secs(20), || {
        rg_running_under(pid)
    });
    let started = Instant::now();
    let call_processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
    tokio::time::sleep(Duration::from_millis(1300)).await;
    let token = handle.progress_token.clone();
    handle.cancel(Some("test".to_owned())).await.unwrap();
    wait_until(
        "the call's processes to end",
        Duration::from_secs(10),
        || all_gone(&call_processes),
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    let progress = client.progress.lock().unwrap().clone();
    assert!(
        progress.iter().any(|p| p.progress_token == token),
        "no progress while rg ran: {progress:?}"
    );
}

/// Records four calls through `server` on `dir` into `record` (config
/// [`super::SPILLING`]: the glob of `*` spills, into a dir of its own):
/// a grep, two globs and a grep with a bad argument.
pub async fn record_session(server: &McpServer, dir: &Path, record: &Path) {
    let spill = tempfile::tempdir().unwrap();
    let c = connect(
        server,
        dir,
        &[
            "--config",
            super::SPILLING,
            "--spill-dir",
            super::root(spill.path()),
            "--record",
            super::root(record),
        ],
    )
    .await;
    for (tool, args) in [
        ("grep", json!({"pattern": "needle", "path": "notes.md"})),
        ("glob", json!({"pattern": "*"})),
        ("glob", json!({"pattern": "*.ts"})),
        ("grep", json!({"pattern": 3})),
    ] {
        mcp_call(&c, tool, args).await;
    }
    c.service.cancel().await.unwrap();
}
