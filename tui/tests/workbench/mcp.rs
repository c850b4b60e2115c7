//! `workbench mcp`: the real binary, real bash and real rg, driven by the
//! official Rust SDK's client (`rmcp`, child-process transport) and, where
//! the test needs raw bytes on stdin, by a bare JSON-RPC line client.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// test code: a failed unwrap is a failed test
// Log notifications are deprecated in rmcp for a newer protocol revision;
// the revisions served here have them.
#![allow(deprecated)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, UNIX_EPOCH};

use fs_search_tests::reliability::procfs::{descendants, proc_info};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    Implementation, LoggingMessageNotificationParam, ProgressNotificationParam, ProtocolVersion,
};
use rmcp::service::{NotificationContext, PeerRequestOptions, RunningService};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};

pub(crate) const SAMPLING: &str = r#"{"sampleOverCapGlobResults":true}"#;
pub(crate) const SPILLING: &str = r#"{"sampleOverCapGlobResults":false,"globMaxResults":2}"#;
pub(crate) const META_KEY: &str = "fs-search-workbench/result";

pub(crate) fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_workbench")
}

/// An rg config file that pins grep's file order (rg's own order is
/// multi-threaded), given to the server and to `workbench call` alike.
///
/// Written once per test process, whole before its name exists (tests
/// run in threads: a second `write` would truncate the file that a rg
/// started by another test is reading, which then reads no config).
pub(crate) fn sorted_rg_config() -> std::path::PathBuf {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    PATH.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"));
        let path = dir.join(format!("mcp-test-ripgreprc-{}", std::process::id()));
        let staged = dir.join(format!("mcp-test-ripgreprc-{}.new", std::process::id()));
        std::fs::write(&staged, "--sort=path\n").unwrap();
        std::fs::rename(&staged, &path).unwrap();
        path
    })
    .clone()
}

pub(crate) fn workbench(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("RIPGREP_CONFIG_PATH", sorted_rg_config())
        .output()
        .unwrap()
}

pub(crate) fn root(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

/// A small tree with distinct whole-second mtimes (so glob's order
/// survives a freeze) and a private state dir for the server's log file.
pub(crate) fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let base = 1_700_000_000;
    for (i, (path, content)) in [
        ("src/alpha.ts", "export const alpha = 1\nneedle one\n"),
        ("src/beta.ts", "export const beta = 2\n"),
        ("notes.md", "alpha appears here too\nneedle two\n"),
        ("docs/guide.md", "a guide\n"),
        ("docs/deep/more.md", "needle three\n"),
    ]
    .into_iter()
    .enumerate()
    {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(&full, content).unwrap();
        set_mtime(&full, base + 10 * i as u64);
    }
    for d in ["docs/deep", "docs", "src", "."] {
        set_mtime(&dir.path().join(d), base + 100);
    }
    dir
}

fn set_mtime(path: &Path, secs: u64) {
    let at = UNIX_EPOCH + Duration::from_secs(secs);
    std::fs::File::open(path)
        .unwrap()
        .set_times(std::fs::FileTimes::new().set_modified(at).set_accessed(at))
        .unwrap();
}

pub(crate) fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// The server's command line: logs go to a private state dir.
pub(crate) fn server_command(dir: &Path, state: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(bin());
    cmd.args(["mcp", "--workdir", root(dir)])
        .args(extra)
        .env("XDG_STATE_HOME", state)
        // Everything the server writes (spilled results, its executor's
        // files) stays in the test's dir, even when the test kills it.
        .env("TMPDIR", state)
        .env("RIPGREP_CONFIG_PATH", sorted_rg_config());
    cmd
}

// ------------------------------------------------------------ rmcp client

/// What the client saw besides responses.
#[derive(Clone, Default)]
pub(crate) struct Client {
    pub(crate) version: Option<ProtocolVersion>,
    pub(crate) progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    pub(crate) logs: Arc<Mutex<Vec<LoggingMessageNotificationParam>>>,
}

#[allow(deprecated)]
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

struct Connected {
    service: RunningService<RoleClient, Client>,
    client: Client,
    pid: i32,
    _state: tempfile::TempDir,
}

async fn connect_with(
    dir: &Path,
    extra: &[&str],
    client: Client,
    path: Option<&Path>,
) -> Connected {
    let state = tempfile::tempdir().unwrap();
    let mut cmd = tokio::process::Command::from(server_command(dir, state.path(), extra));
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

async fn connect(dir: &Path, extra: &[&str]) -> Connected {
    connect_with(dir, extra, Client::default(), None).await
}

pub(crate) fn params(tool: &str, args: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(tool.to_owned());
    params.arguments = args.as_object().cloned();
    params
}

/// A call's result as JSON (`content`, `isError`, `_meta`).
async fn mcp_call(c: &Connected, tool: &str, args: Value) -> Value {
    let result = c
        .service
        .peer()
        .call_tool(params(tool, args))
        .await
        .unwrap();
    serde_json::to_value(result).unwrap()
}

pub(crate) fn text_of(result: &Value) -> &str {
    let content = result["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "{result}");
    assert_eq!(content[0]["type"], "text");
    content[0]["text"].as_str().unwrap()
}

/// `workbench call --json` for the same call.
pub(crate) fn cli_call(dir: &Path, tool: &str, args: &Value, extra: &[&str]) -> Value {
    let args = args.to_string();
    let mut all = vec![
        "call",
        tool,
        "--workdir",
        root(dir),
        "--args",
        &args,
        "--json",
    ];
    all.extend_from_slice(extra);
    let out = workbench(&all);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The call through the server (`--config SAMPLING --no-spill`) and
/// through `workbench call`, whose text and isError must be equal.
async fn same_as_cli(c: &Connected, dir: &Path, tool: &str, args: &Value) -> (Value, Value) {
    let mcp = mcp_call(c, tool, args.clone()).await;
    let cli = cli_call(dir, tool, args, &["--config", SAMPLING, "--no-spill"]);
    assert_eq!(
        text_of(&mcp),
        cli["text"].as_str().unwrap(),
        "{tool} {args}"
    );
    assert_eq!(mcp["isError"], cli["isError"], "{tool} {args}");
    (mcp, cli)
}

pub(crate) fn surface(config: &str) -> Value {
    let out = workbench(&["surface", "--config", config, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The server's `initialize` answer (negotiated `version`, server info,
/// capabilities, instructions) and `tools/list` against `workbench surface
/// --json`.
pub(crate) async fn initialize_and_tools_list_equal_surface(
    peer: &Peer<RoleClient>,
    version: &ProtocolVersion,
    surface: &Value,
) {
    let info = peer.peer_info().unwrap();
    assert_eq!(&info.protocol_version, version);
    let info = serde_json::to_value(&*info).unwrap();
    assert_eq!(info["serverInfo"]["name"], "fs-search-workbench");
    assert_eq!(info["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["capabilities"], json!({"logging": {}, "tools": {}}));
    let sections: Vec<&str> = surface["promptSections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert!(!sections.is_empty());
    assert_eq!(info["instructions"], json!(sections.join("\n\n")));

    let tools = peer.list_tools(None).await.unwrap();
    let tools = serde_json::to_value(&tools).unwrap();
    let expected: Vec<Value> = surface["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            json!({"name": t["name"], "description": t["description"], "inputSchema": t["parameters"]})
        })
        .collect();
    assert_eq!(tools["tools"], json!(expected));
    // Key order too: the schema is the engine's object as it prints it.
    assert_eq!(tools["tools"].to_string(), json!(expected).to_string());
}

// ------------------------------------------------------------ /proc

/// `VmHWM` of process `pid`, in KiB.
fn peak_rss_kib(pid: i32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

pub(crate) fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub(crate) fn rg_running_under(pid: i32) -> bool {
    descendants(pid).iter().any(|(_, comm)| comm == "rg")
}

/// Every process that was a descendant of `pid` is gone (or a zombie).
pub(crate) fn all_gone(pids: &[i32]) -> bool {
    pids.iter()
        .all(|p| proc_info(*p).is_none_or(|i| !i.is_alive()))
}

/// Sends a grep on `fifo` of the workdir, waits until its rg runs under
/// server `pid`, cancels it after 1.3 s and checks that the call's
/// processes end within 10 s and that progress came while it ran.
pub(crate) async fn cancel_a_call_blocked_on_the_fifo(
    peer: &Peer<RoleClient>,
    client: &Client,
    pid: i32,
) {
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

// ------------------------------------------------------------ raw client

/// A bare line client on the server's stdin and stdout.
pub(crate) struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
    _state: tempfile::TempDir,
}

impl Raw {
    pub(crate) fn spawn(dir: &Path, extra: &[&str]) -> Self {
        let state = tempfile::tempdir().unwrap();
        let command = server_command(dir, state.path(), extra);
        Self::with_command(command, state)
    }

    /// A server started by `command`, its logs and temp files in `state`.
    pub(crate) fn with_command(mut command: Command, state: tempfile::TempDir) -> Self {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            child,
            stdin,
            lines,
            _state: state,
        }
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn send_json(&mut self, value: Value) {
        self.send(format!("{value}\n").as_bytes());
    }

    /// The next message, as JSON (every stdout line must be JSON).
    fn next(&self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(20)).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout: {line:?}: {e}"))
    }

    /// The response to request `id` (notifications before it are skipped).
    pub(crate) fn response(&self, id: i64) -> Value {
        loop {
            let message = self.next();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    pub(crate) fn initialize(&mut self) {
        self.send_json(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"raw","version":"1"}}}),
        );
        let init = self.response(0);
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        self.send_json(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    }

    /// Closes stdin, as an agent host ends its server; the exit status.
    pub(crate) fn hang_up(&mut self, limit: Duration) -> std::process::ExitStatus {
        drop(self.stdin.take());
        self.wait_exit(limit)
    }

    fn wait_exit(&mut self, limit: Duration) -> std::process::ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(start.elapsed() < limit, "the server did not exit");
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Raw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------ tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_instructions_and_tools_list_equal_workbench_surface() {
    let dir = tree();
    let surface = surface(SAMPLING);
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let client = Client {
            version: Some(version.clone()),
            ..Client::default()
        };
        let c = connect_with(dir.path(), &["--config", SAMPLING], client, None).await;
        initialize_and_tools_list_equal_surface(c.service.peer(), &version, &surface).await;
        c.service.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declare_max_result_chars_sets_claude_code_s_meta_on_both_tools_and_only_then() {
    let dir = tree();
    let c = connect(
        dir.path(),
        &["--config", SAMPLING, "--declare-max-result-chars", "120000"],
    )
    .await;
    let tools = c.service.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
    for tool in &tools {
        let meta = serde_json::to_value(tool.meta.as_ref().unwrap()).unwrap();
        assert_eq!(
            meta,
            json!({"anthropic/maxResultSizeChars": 120000}),
            "{}",
            tool.name
        );
    }
    c.service.cancel().await.unwrap();
    let c = connect(dir.path(), &["--config", SAMPLING]).await;
    let tools = c.service.peer().list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.meta.is_none()));
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_protocol_version_is_answered_with_2025_11_25() {
    let dir = tree();
    let mut raw = Raw::spawn(dir.path(), &["--config", SAMPLING]);
    raw.send_json(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2024-01-01","capabilities":{},
        "clientInfo":{"name":"raw","version":"1"}}}),
    );
    assert_eq!(raw.response(0)["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_equal_workbench_call_byte_for_byte_without_spill() {
    let dir = tree();
    let c = connect(dir.path(), &["--config", SAMPLING, "--no-spill"]).await;
    for (tool, args) in [
        ("grep", json!({"pattern": "needle"})),
        ("grep", json!({"pattern": "alpha", "path": "notes.md"})),
        ("grep", json!({"pattern": "nothing-matches-this"})),
        ("glob", json!({"pattern": "*.md"})),
        ("glob", json!({"pattern": "*", "path": "src"})),
    ] {
        let (mcp, _) = same_as_cli(&c, dir.path(), tool, &args).await;
        let meta = &mcp["_meta"][META_KEY];
        assert_eq!(meta["error"], Value::Null);
        assert_eq!(meta["spill"], Value::Null);
        assert!(meta["durationMs"].as_f64().unwrap() >= 0.0);
    }
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_equal_workbench_call_with_the_spill_locator_normalised() {
    let dir = tree();
    let spill = tempfile::tempdir().unwrap();
    let c = connect(
        dir.path(),
        &["--config", SPILLING, "--spill-dir", root(spill.path())],
    )
    .await;
    let args = json!({"pattern": "*"});
    let mcp = mcp_call(&c, "glob", args.clone()).await;
    let cli_spill = tempfile::tempdir().unwrap();
    let cli = cli_call(
        dir.path(),
        "glob",
        &args,
        &["--config", SPILLING, "--spill-dir", root(cli_spill.path())],
    );
    let meta = &mcp["_meta"][META_KEY];
    let locator = meta["spill"]["locator"].as_str().unwrap();
    assert!(locator.starts_with(root(spill.path())), "{locator}");
    assert!(Path::new(locator).is_file());
    assert_eq!(meta["spill"]["bytes"], cli["spill"]["bytes"]);
    let cli_locator = cli["spill"]["locator"].as_str().unwrap();
    let text = text_of(&mcp).replace(locator, "<LOCATOR>");
    assert!(text.contains("<LOCATOR>"), "{text}");
    assert_eq!(
        text,
        cli["text"]
            .as_str()
            .unwrap()
            .replace(cli_locator, "<LOCATOR>")
    );
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_get_the_engines_own_error_results() {
    let dir = tree();
    let c = connect(dir.path(), &["--config", SAMPLING, "--no-spill"]).await;
    for (tool, args) in [
        ("grep", json!({})),
        ("glob", json!({"pattern": 5})),
        ("grep", json!({"pattern": "x", "extra": true})),
        ("glob", json!({"pattern": "*.md", "path": ["a"]})),
    ] {
        let (mcp, cli) = same_as_cli(&c, dir.path(), tool, &args).await;
        let error = &mcp["_meta"][META_KEY]["error"];
        assert_eq!(error["name"], cli["error"]["name"]);
        assert_eq!(error["code"], cli["error"]["code"]);
    }
    // At least the wrong type is an error result, not a protocol error.
    let wrong = mcp_call(&c, "glob", json!({"pattern": 5})).await;
    assert_eq!(wrong["isError"], true);
    // Absent arguments reach the engine as `{}`.
    let absent = c
        .service
        .peer()
        .call_tool(CallToolRequestParams::new("grep"))
        .await
        .unwrap();
    let cli = cli_call(
        dir.path(),
        "grep",
        &json!({}),
        &["--config", SAMPLING, "--no-spill"],
    );
    assert_eq!(
        text_of(&serde_json::to_value(absent).unwrap()),
        cli["text"].as_str().unwrap()
    );
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_json_rpc_invalid_params_error() {
    let dir = tree();
    let c = connect(dir.path(), &["--config", SAMPLING]).await;
    let err = c
        .service
        .peer()
        .call_tool(params("read", json!({"path": "notes.md"})))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = err else {
        panic!("not a JSON-RPC error: {err:?}");
    };
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, "Unknown tool: read");
    // The server goes on serving.
    let ok = mcp_call(&c, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(ok["isError"], false);
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_calls_run_at_once_and_a_seventeenth_queues() {
    let dir = tree();
    for i in 0..16 {
        mkfifo(&dir.path().join(format!("fifo-{i}")));
    }
    let c = Arc::new(connect(dir.path(), &["--config", SAMPLING, "--no-spill"]).await);
    let mut blocked = Vec::new();
    for i in 0..16 {
        let c = c.clone();
        blocked.push(tokio::spawn(async move {
            mcp_call(
                &c,
                "grep",
                json!({"pattern": "needle", "path": format!("fifo-{i}")}),
            )
            .await
        }));
    }
    let pid = c.pid;
    wait_until("16 rg processes", Duration::from_secs(20), || {
        descendants(pid)
            .iter()
            .filter(|(_, comm)| comm == "rg")
            .count()
            == 16
    });
    let queued = {
        let c = c.clone();
        tokio::spawn(async move { mcp_call(&c, "grep", json!({"pattern": "needle"})).await })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !queued.is_finished(),
        "the 17th call ran while 16 were in flight"
    );
    // Release the FIFOs: each rg reads one line and ends.
    for i in 0..16 {
        let path = dir.path().join(format!("fifo-{i}"));
        tokio::task::spawn_blocking(move || {
            let mut fifo = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            fifo.write_all(b"needle in a fifo\n").unwrap();
        })
        .await
        .unwrap();
    }
    for (i, call) in blocked.into_iter().enumerate() {
        let result = call.await.unwrap();
        assert_eq!(
            text_of(&result),
            format!("Found 1 match\n\nfifo-{i}\nLine 1: needle in a fifo")
        );
    }
    let result = queued.await.unwrap();
    assert!(text_of(&result).starts_with("Found 3 matches"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_kills_rg_and_progress_came_while_it_ran() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let record = dir.path().join("rec.jsonl");
    let c = connect(
        dir.path(),
        &["--config", SAMPLING, "--record", root(&record)],
    )
    .await;
    cancel_a_call_blocked_on_the_fifo(c.service.peer(), &c.client, c.pid).await;
    // The connection goes on, and the cancelled call was not recorded.
    let ok = mcp_call(&c, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(ok["isError"], false);
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(!recorded.contains("fifo"), "{recorded}");
    assert!(recorded.contains("\"tool\":\"glob\""));
    c.service.cancel().await.unwrap();
}

/// A raw client whose one call (id 1) has rg blocked on a FIFO; the
/// processes of the call (bash, rg).
fn raw_blocked_on_fifo(dir: &Path) -> (Raw, Vec<i32>) {
    mkfifo(&dir.join("fifo"));
    let mut raw = Raw::spawn(dir, &["--config", SAMPLING]);
    raw.initialize();
    raw.send_json(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"grep","arguments":{"pattern":"x","path":"fifo"}}}),
    );
    let pid = raw.pid();
    wait_until("rg on the FIFO", Duration::from_secs(20), || {
        rg_running_under(pid)
    });
    let call_processes = descendants(pid).iter().map(|(p, _)| *p).collect();
    (raw, call_processes)
}

#[test]
fn stdin_eof_mid_call_kills_rg_and_exits_0() {
    let dir = tree();
    let (mut raw, call_processes) = raw_blocked_on_fifo(dir.path());
    drop(raw.stdin.take());
    let status = raw.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
    assert!(all_gone(&call_processes));
    // Whatever came on stdout is JSON-RPC; the aborted call was answered.
    let mut aborted = None;
    while let Ok(line) = raw.lines.recv_timeout(Duration::from_secs(2)) {
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(message["jsonrpc"], "2.0");
        if message["id"] == 1 {
            aborted = Some(message);
        }
    }
    let aborted = aborted.expect("the call in flight got no answer");
    assert_eq!(aborted["result"]["isError"], true, "{aborted}");
}

#[test]
fn sigterm_and_sigint_mid_call_kill_rg_and_exit_128_plus_the_signal() {
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        let dir = tree();
        let (mut raw, call_processes) = raw_blocked_on_fifo(dir.path());
        let status = Command::new("kill")
            .args([signal, &raw.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let status = raw.wait_exit(Duration::from_secs(10));
        assert_eq!(status.code(), Some(code), "{signal}");
        assert!(all_gone(&call_processes), "{signal}");
    }
}

#[test]
fn the_log_names_the_executor_and_the_rg_version_and_path_at_start() {
    let dir = tree();
    let state = tempfile::tempdir().unwrap();
    let status = server_command(dir.path(), state.path(), &["--config", SAMPLING])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let log = crate::cli_headless::logs_in(state.path());
    let starting = log
        .lines()
        .find(|l| l.contains("workbench mcp starting"))
        .expect("a start line");
    let version =
        String::from_utf8(Command::new("rg").arg("--version").output().unwrap().stdout).unwrap();
    let path = String::from_utf8(
        Command::new("bash")
            .args(["-c", "command -v rg"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        starting.contains(&format!("rg={}", version.lines().next().unwrap()))
            && starting.contains(&format!("rg_path={}", path.trim_end()))
            && starting.contains("executor=local"),
        "{starting}"
    );
}

#[test]
fn a_malformed_line_gets_a_parse_error_and_the_server_keeps_serving() {
    let dir = tree();
    let mut raw = Raw::spawn(dir.path(), &["--config", SAMPLING]);
    raw.initialize();
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n");
    let error = raw.next();
    assert_eq!(
        error,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
    // A request with malformed params keeps its id.
    raw.send_json(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":7}}));
    let invalid = raw.response(2);
    assert_eq!(invalid["error"]["code"], -32602);
    // Over 8 MiB: refused while it is skipped, never buffered whole.
    let before = peak_rss_kib(raw.pid());
    let mut huge = vec![b' '; 32 * 1024 * 1024];
    huge.push(b'\n');
    raw.send(&huge);
    let refused = raw.next();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let grown = peak_rss_kib(raw.pid()) - before;
    assert!(
        grown < 16 * 1024,
        "the server grew by {grown} KiB on a 32 MiB line"
    );
    raw.send_json(
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{
        "name":"glob","arguments":{"pattern":"*.ts"}}}),
    );
    let answer = raw.response(3);
    assert_eq!(answer["result"]["isError"], false);
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("src/alpha.ts")
    );
}

/// `VmRSS` of process `pid`, in KiB.
fn rss_kib(pid: i32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_client_that_floods_requests_without_reading_answers_leaves_memory_bounded_and_loses_nothing() {
    const REQUESTS: usize = 10_000;
    let dir = tree();
    let state = tempfile::tempdir().unwrap();
    let mut child = server_command(dir.path(), state.path(), &["--config", SAMPLING])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    )
    .unwrap();
    let before = rss_kib(pid);
    // tools/list answers are the largest (~7 KB each): 10,000 of them
    // unread used to be ~70 MiB queued in the server.
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            for id in 1..=REQUESTS {
                let request = json!({"jsonrpc":"2.0","id":id,"method":"tools/list"});
                if writeln!(stdin, "{request}").is_err() {
                    break;
                }
                sent.store(id, std::sync::atomic::Ordering::Relaxed);
            }
            drop(stdin);
        })
    };
    // Until the writer is held back (or done): no progress for 1 s.
    let mut last = usize::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(1000));
        let now = sent.load(std::sync::atomic::Ordering::Relaxed);
        if now == last || now == REQUESTS {
            break;
        }
        last = now;
    }
    let grown = peak_rss_kib(pid) - before;
    let held_back = sent.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("peak RSS grew by {grown} KiB; {held_back} of {REQUESTS} requests sent");
    assert!(
        grown < 8 * 1024,
        "the server grew by {grown} KiB with {held_back} requests sent and no answer read (RSS {} KiB)",
        rss_kib(pid)
    );
    assert!(
        held_back < REQUESTS,
        "the server read every request unanswered"
    );
    // Nothing is lost: every request is answered once the client reads.
    let mut answered = std::collections::HashSet::new();
    for line in stdout.lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        assert!(message["result"]["tools"].is_array(), "{message}");
        answered.insert(message["id"].as_u64().unwrap());
    }
    writer.join().unwrap();
    assert_eq!(answered.len(), REQUESTS);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_call_before_initialize_gets_invalid_request_and_initialize_still_works() {
    let dir = tree();
    let mut raw = Raw::spawn(dir.path(), &["--config", SAMPLING]);
    raw.send_json(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"glob","arguments":{"pattern":"*.ts"}}}));
    let refused = raw.response(1);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused.get("result").is_none(), "{refused}");
    raw.initialize();
    raw.send_json(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"glob","arguments":{"pattern":"*.ts"}}}));
    assert_eq!(raw.response(2)["result"]["isError"], false);
}

#[test]
fn a_request_whose_id_is_null_fractional_an_object_or_2_pow_80_gets_invalid_request_with_id_null() {
    let dir = tree();
    let mut raw = Raw::spawn(dir.path(), &["--config", SAMPLING]);
    raw.initialize();
    for id in ["null", "1.5", "{\"a\":1}", "1208925819614629174706176"] {
        raw.send(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n").as_bytes(),
        );
        let answer = raw.next();
        assert_eq!(answer["id"], Value::Null, "id {id}: {answer}");
        assert_eq!(answer["error"]["code"], -32600, "id {id}: {answer}");
    }
    // And the server serves on.
    raw.send_json(json!({"jsonrpc":"2.0","id":9,"method":"ping"}));
    assert_eq!(raw.response(9)["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rg_missing_lists_no_tools_and_logs_the_load_warning() {
    let dir = tree();
    let bin = tempfile::tempdir().unwrap();
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(bash, bin.path().join("bash")).unwrap();
    let c = connect_with(
        dir.path(),
        &["--config", SAMPLING],
        Client::default(),
        Some(bin.path()),
    )
    .await;
    let info = c.service.peer().peer_info().unwrap();
    assert_eq!(info.instructions.as_deref(), Some(""));
    let tools = c.service.peer().list_tools(None).await.unwrap();
    assert!(tools.tools.is_empty());
    let logs = c.client.logs.clone();
    wait_until("the load warning", Duration::from_secs(10), || {
        !logs.lock().unwrap().is_empty()
    });
    let log = logs.lock().unwrap()[0].clone();
    assert!(
        log.data
            .as_str()
            .unwrap()
            .contains("ripgrep (rg) not found on the bash executor PATH"),
        "{log:?}"
    );
    c.service.cancel().await.unwrap();
}

/// Records a few calls through the server and returns the recording.
async fn record_session(dir: &Path, record: &Path) {
    let spill = tempfile::tempdir().unwrap();
    let c = connect(
        dir,
        &[
            "--config",
            SPILLING,
            "--spill-dir",
            root(spill.path()),
            "--record",
            root(record),
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_replays_against_the_live_workdir() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    record_session(dir.path(), &record).await;
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("{\"call\":").count(), 4, "{text}");
    assert!(text.contains("<SPILL>/session-"), "{text}");
    let replay = workbench(&["replay", root(&record)]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
    assert!(String::from_utf8_lossy(&replay.stdout).contains("4 records match"));
    // A second server appends to the same recording.
    record_session(dir.path(), &record).await;
    let replay = workbench(&["replay", root(&record)]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
    assert!(String::from_utf8_lossy(&replay.stdout).contains("8 records match"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_recording_replays_in_another_temp_dir() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    record_session(dir.path(), &record).await;
    let fixture = tempfile::tempdir().unwrap();
    let frozen = fixture.path().join("transcripts/session.jsonl");
    std::fs::create_dir_all(frozen.parent().unwrap()).unwrap();
    let tree_out = fixture.path().join("trees/session");
    let freeze = workbench(&[
        "freeze",
        root(&record),
        "--workdir",
        root(dir.path()),
        "--out",
        root(&frozen),
        "--tree-out",
        root(&tree_out),
    ]);
    assert_eq!(freeze.status.code(), Some(0), "{freeze:?}");
    assert!(tree_out.join("manifest.json").is_file());
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&frozen)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["tree"], "../trees/session");
    // Move the fixture elsewhere and drop the live workdir: it needs neither.
    let elsewhere = tempfile::tempdir().unwrap();
    let copied = Command::new("cp")
        .args([
            "-r",
            &format!("{}/.", root(fixture.path())),
            root(elsewhere.path()),
        ])
        .status()
        .unwrap();
    assert!(copied.success());
    drop(fixture);
    drop(dir);
    let replay = workbench(&[
        "replay",
        root(&elsewhere.path().join("transcripts/session.jsonl")),
    ]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
}

#[test]
fn freeze_reads_a_tree_of_any_size_but_bounds_the_fixture_and_says_how_to_narrow() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..150 {
        std::fs::write(dir.path().join(format!("f{i}")), "").unwrap();
    }
    let record = dir.path().join("rec.jsonl");
    std::fs::write(
        &record,
        format!(
            "{}\n{}",
            json!({"transcript":"fs-search","version":1,"tree":".","config":{"sampleOverCapGlobResults":true},"env":{"rg":"x","ripgrepConfig":[]}}),
            crate::recording::ONE_CALL
        ),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let freeze = |extra: &[&str]| {
        Command::new(bin())
            .args(["freeze", root(&record), "--out"])
            .arg(out.path().join("t.jsonl"))
            .arg("--tree-out")
            .arg(out.path().join("tree"))
            .args(extra)
            .env("WORKBENCH_TREE_LIMITS", "100000,100")
            .output()
            .unwrap()
    };
    // The minimal fixture of a glob that matched nothing is small.
    let minimal = freeze(&[]);
    assert_eq!(minimal.status.code(), Some(0), "{minimal:?}");
    std::fs::remove_dir_all(out.path().join("tree")).unwrap();
    let whole = freeze(&["--whole-tree"]);
    assert_eq!(whole.status.code(), Some(2), "{whole:?}");
    let stderr = String::from_utf8_lossy(&whole.stderr);
    assert!(
        stderr.contains("the fixture tree would hold more than 100 entries"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Narrow it: freeze without --whole-tree"),
        "{stderr}"
    );
    assert!(!out.path().join("tree").exists());
}

/// The hostile corpus of `hardening`, through the server: a lone
/// surrogate in a pattern, arguments nested 9,999 levels deep in an
/// ignored key, and a config number JavaScript prints in exponent form.
#[test]
fn hostile_arguments_and_numbers_get_what_javascript_would_give_them() {
    let dir = tree();
    std::fs::write(dir.path().join("odd.txt"), "before \u{fffd} after\n").unwrap();
    let mut raw = Raw::spawn(dir.path(), &["--config", SAMPLING]);
    raw.initialize();
    raw.send(
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"\ud800"}}}
"#,
    );
    let answer = raw.response(1);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let found = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(found.contains("before \u{fffd} after"), "{found}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"alpha","x":{}{}}}}}}}"#,
        "[".repeat(9_996),
        "]".repeat(9_996)
    );
    raw.send(format!("{deep}\n").as_bytes());
    let answer = raw.response(2);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("notes.md")
    );
    drop(raw);
    let huge = r#"{"sampleOverCapGlobResults":true,"globMaxResults":1e308,"grepMaxMatches":1e20}"#;
    let mut raw = Raw::spawn(dir.path(), &["--config", huge]);
    raw.initialize();
    raw.send_json(json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}));
    let tools = raw.response(3);
    let tools = tools["result"]["tools"].as_array().unwrap();
    let description = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["description"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(description("glob").contains(" Up to 1e+308 paths come back"));
    assert!(description("grep").contains("Returns the first 100000000000000000000 matches inline"));
}
