//! `workbench mcp --listen`: the real binary on a real TCP port of
//! 127.0.0.1, real bash and real rg, driven by the official Rust SDK's
//! Streamable HTTP client (`rmcp` over reqwest) and, for status codes,
//! headers and disconnects, by raw HTTP/1.1 on a `TcpStream`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// test code: a failed unwrap is a failed test

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fs_search_tests::reliability::procfs::descendants;
use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use crate::mcp::{
    Client, META_KEY, SAMPLING, SPILLING, all_gone, bin, cancel_a_call_blocked_on_the_fifo,
    cli_call, initialize_and_tools_list_equal_surface, mkfifo, params, rg_running_under, root,
    server_command, surface, text_of, tree, wait_until, workbench,
};

const TOKEN: &str = "test-token-0123456789";

// ------------------------------------------------------------ the server

/// `workbench mcp --listen 127.0.0.1:0 …`, its address read from stderr.
pub(crate) struct Server {
    child: Child,
    pub(crate) addr: String,
    _state: tempfile::TempDir,
}

/// The `ADDR:PORT` of the `listening on http://ADDR:PORT/mcp` line a
/// `--listen` server writes first on stderr; the rest of stderr is drained.
pub(crate) fn listening_address(child: &mut std::process::Child) -> String {
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("workbench mcp: listening on http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("no address on stderr: {line:?}"))
        .to_owned();
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    addr
}

impl Server {
    pub(crate) fn spawn(dir: &Path, extra: &[&str]) -> Self {
        Self::spawn_with_path(dir, extra, None)
    }

    /// A server whose `PATH` is `path`, when given.
    pub(crate) fn spawn_with_path(dir: &Path, extra: &[&str], path: Option<&Path>) -> Self {
        let state = tempfile::tempdir().unwrap();
        let args = [&["--listen", "127.0.0.1:0"], extra].concat();
        let mut command = server_command(dir, state.path(), &args);
        if let Some(path) = path {
            command.env("PATH", path);
        }
        let mut child = command
            .env_remove("WORKBENCH_MCP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let addr = listening_address(&mut child);
        Self {
            child,
            addr,
            _state: state,
        }
    }

    /// A server with `--token-file` holding [`TOKEN`].
    fn with_token(dir: &Path, extra: &[&str]) -> (Self, tempfile::TempDir) {
        let secrets = tempfile::tempdir().unwrap();
        let file = secrets.path().join("token");
        std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
        // Private, as a secret should be (else a warning precedes the address).
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let args = [&["--token-file", root(&file)], extra].concat();
        (Self::spawn(dir, &args), secrets)
    }

    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    pub(crate) fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    /// The server's private state dir (its log file is there).
    pub(crate) fn state(&self) -> &Path {
        self._state.path()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------ rmcp client

async fn connect(
    server: &Server,
    token: Option<&str>,
    client: Client,
) -> RunningService<RoleClient, Client> {
    let mut config = StreamableHttpClientTransportConfig::with_uri(server.url());
    if let Some(token) = token {
        config = config.auth_header(token);
    }
    let transport = StreamableHttpClientTransport::from_config(config);
    client.serve(transport).await.unwrap()
}

async fn call(service: &RunningService<RoleClient, Client>, tool: &str, args: Value) -> Value {
    let result = service.peer().call_tool(params(tool, args)).await.unwrap();
    serde_json::to_value(result).unwrap()
}

// ------------------------------------------------------------ raw HTTP

/// One response read to its end.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    head: String,
    body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The JSON-RPC messages of an SSE body.
    pub(crate) fn messages(&self) -> Vec<Value> {
        self.body
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter(|d| !d.trim().is_empty())
            .map(|d| serde_json::from_str(d.trim()).unwrap())
            .collect()
    }
}

fn parse_reply(bytes: &[u8]) -> Reply {
    let text = String::from_utf8_lossy(bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP response: {text:?}"));
    Reply {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

/// The request's bytes: `/mcp`, `Host`, `Connection: close`, the MCP
/// `Accept` and `Content-Type`, then `headers` and `body`.
pub(crate) fn request_bytes(
    addr: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Vec<u8> {
    let mut out = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        out.push_str(&format!("{name}: {value}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

fn open(addr: &str) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

pub(crate) fn read_reply(mut stream: TcpStream) -> Reply {
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse_reply(&bytes)
}

pub(crate) fn send_raw(addr: &str, bytes: &[u8]) -> Reply {
    let mut stream = open(addr);
    stream.write_all(bytes).unwrap();
    read_reply(stream)
}

pub(crate) fn post(addr: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
    send_raw(
        addr,
        &request_bytes(addr, "POST", headers, body.to_string().as_bytes()),
    )
}

const BEARER: &str = "Bearer test-token-0123456789";

fn initialize_body() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":"raw","version":"1"}}})
}

/// A raw session: initialize and initialized; its `Mcp-Session-Id`.
pub(crate) fn raw_session(addr: &str, auth: &[(&str, &str)]) -> String {
    let init = post(addr, auth, &initialize_body());
    assert_eq!(init.status, 200, "{init:?}");
    assert_eq!(
        init.messages()[0]["result"]["protocolVersion"],
        "2025-06-18"
    );
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let headers = [
        auth,
        &[
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
    ]
    .concat();
    let initialized = post(
        addr,
        &headers,
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    assert_eq!(initialized.status, 202, "{initialized:?}");
    session
}

/// Sends a `tools/call` (id 1) in `session` and leaves the answer unread.
pub(crate) fn start_raw_call(addr: &str, session: &str, args: Value) -> TcpStream {
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"grep","arguments":args}});
    let mut stream = open(addr);
    stream
        .write_all(&request_bytes(
            addr,
            "POST",
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            body.to_string().as_bytes(),
        ))
        .unwrap();
    stream
}

// ------------------------------------------------------------ tests

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_initialize_tools_and_calls_equal_surface_and_workbench_call() {
    let dir = tree();
    let (server, _secrets) = Server::with_token(dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let surface = surface(SAMPLING);
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let client = Client {
            version: Some(version.clone()),
            ..Client::default()
        };
        let service = connect(&server, Some(TOKEN), client).await;
        initialize_and_tools_list_equal_surface(service.peer(), &version, &surface).await;
        for (tool, args) in [
            ("grep", json!({"pattern": "needle"})),
            ("grep", json!({"pattern": "alpha", "path": "notes.md"})),
            ("glob", json!({"pattern": "*.md"})),
            ("glob", json!({"pattern": "*", "path": "src"})),
            ("grep", json!({"pattern": 3})),
            ("glob", json!({})),
        ] {
            let mcp = call(&service, tool, args.clone()).await;
            let cli = cli_call(
                dir.path(),
                tool,
                &args,
                &["--config", SAMPLING, "--no-spill"],
            );
            assert_eq!(
                text_of(&mcp),
                cli["text"].as_str().unwrap(),
                "{tool} {args}"
            );
            assert_eq!(mcp["isError"], cli["isError"], "{tool} {args}");
            assert!(mcp["_meta"][META_KEY]["durationMs"].as_f64().is_some());
        }
        let unknown = service
            .peer()
            .call_tool(params("nope", json!({})))
            .await
            .unwrap_err();
        assert!(
            unknown.to_string().contains("Unknown tool: nope"),
            "{unknown}"
        );
        service.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_cancelled_call_kills_rg_and_progress_came_while_it_ran() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let server = Server::spawn(dir.path(), &["--config", SAMPLING]);
    let client = Client::default();
    let service = connect(&server, None, client.clone()).await;
    cancel_a_call_blocked_on_the_fifo(service.peer(), &client, server.pid()).await;
    // The session goes on.
    let ok = call(&service, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(ok["isError"], false);
    service.cancel().await.unwrap();
}

#[test]
fn over_http_401_without_or_with_a_wrong_token_403_for_foreign_origins_and_hosts() {
    let dir = tree();
    let (server, _secrets) = Server::with_token(
        dir.path(),
        &[
            "--config",
            SAMPLING,
            "--allow-origin",
            "https://app.example.com",
        ],
    );
    let addr = server.addr.as_str();
    let init = initialize_body();
    for auth in [
        None,
        Some("Bearer wrong-token"),
        Some("Bearer test-token-012345678"),
    ] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let reply = post(addr, &headers, &init);
        assert_eq!(reply.status, 401, "{auth:?}: {reply:?}");
        assert!(
            reply
                .header("www-authenticate")
                .unwrap()
                .starts_with("Bearer"),
            "{reply:?}"
        );
        assert!(reply.header("mcp-session-id").is_none());
    }
    let auth = ("Authorization", BEARER);
    for origin in [
        "https://evil.example",
        "null",
        "http://localhost.evil.example",
    ] {
        let reply = post(addr, &[auth, ("Origin", origin)], &init);
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
    }
    // Loopback origins and --allow-origin ones are welcome.
    for origin in ["http://localhost:5173", "https://app.example.com"] {
        let reply = post(addr, &[auth, ("Origin", origin)], &init);
        assert_eq!(reply.status, 200, "{origin}: {reply:?}");
    }
    // A rebound name for the loopback address is not.
    let mut bytes = request_bytes(addr, "POST", &[auth], init.to_string().as_bytes());
    let text = String::from_utf8(bytes.clone()).unwrap();
    bytes = text
        .replacen(&format!("Host: {addr}"), "Host: attacker.example", 1)
        .into_bytes();
    assert_eq!(send_raw(addr, &bytes).status, 403);
    // Only /mcp exists.
    let other = send_raw(
        addr,
        b"GET /other HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(other.status, 404);
    // The token opens the door.
    raw_session(addr, &[auth]);
}

#[test]
fn over_http_a_16_mib_body_gets_413_without_being_read_and_bad_input_no_crash() {
    let dir = tree();
    let (server, _secrets) = Server::with_token(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let auth = ("Authorization", BEARER);
    let big = 16 * 1024 * 1024;
    // Announced: refused on the headers alone (nothing of the body sent).
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {BEARER}\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {big}\r\n\r\n"
    );
    let mut stream = open(addr);
    stream.write_all(head.as_bytes()).unwrap();
    assert_eq!(read_reply(stream).status, 413);
    // Chunked: cut off at 8 MiB while it streams.
    let mut stream = open(addr);
    let head = head.replace(
        &format!("Content-Length: {big}"),
        "Transfer-Encoding: chunked",
    );
    stream.write_all(head.as_bytes()).unwrap();
    let reader = {
        let stream = stream.try_clone().unwrap();
        std::thread::spawn(move || read_reply(stream))
    };
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..16 {
        let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
        framed.extend_from_slice(&chunk);
        framed.extend_from_slice(b"\r\n");
        if stream.write_all(&framed).is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    assert_eq!(reader.join().unwrap().status, 413);

    // Malformed JSON, a batch, garbage HTTP, bad resumption headers: an
    // error answer each, never a crash.
    for body in [&b"{not json"[..], b"[1,2]", b"\xff\xfe", b""] {
        let reply = send_raw(addr, &request_bytes(addr, "POST", &[auth], body));
        assert!((400..500).contains(&reply.status), "{reply:?}");
    }
    let garbage = send_raw(addr, b"\x00\x01 nonsense\r\n\r\n");
    assert!(garbage.head.is_empty() || garbage.status >= 400);
    let session = raw_session(addr, &[auth]);
    for last in [
        "garbage",
        "99999999999999999999999",
        "1/2/3",
        "0/18446744073709551615",
        "",
    ] {
        let reply = send_raw(
            addr,
            &request_bytes(
                addr,
                "GET",
                &[
                    auth,
                    ("Mcp-Session-Id", &session),
                    ("MCP-Protocol-Version", "2025-06-18"),
                    ("Last-Event-ID", last),
                ],
                b"",
            ),
        );
        assert!(reply.status < 500, "{last}: {reply:?}");
    }
    // Still serving.
    let reply = post(
        addr,
        &[
            auth,
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.messages()[0]["result"]["tools"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_32_sessions_at_once_each_with_4_calls_and_its_own_spill_dir() {
    let dir = tree();
    let spill = tempfile::tempdir().unwrap();
    let server = std::sync::Arc::new(Server::spawn(
        dir.path(),
        &["--config", SPILLING, "--spill-dir", root(spill.path())],
    ));
    let calls = [
        ("grep", json!({"pattern": "needle"})),
        ("glob", json!({"pattern": "*.ts"})),
        ("grep", json!({"pattern": "alpha", "path": "notes.md"})),
        ("glob", json!({"pattern": "**/*.md"})),
    ];
    let expected: Vec<Value> = calls
        .iter()
        .map(|(tool, args)| {
            cli_call(
                dir.path(),
                tool,
                args,
                &["--config", SPILLING, "--no-spill"],
            )
        })
        .collect();
    let mut sessions = Vec::new();
    for _ in 0..32 {
        let (server, calls) = (server.clone(), calls.clone());
        sessions.push(tokio::spawn(async move {
            let service = connect(&server, None, Client::default()).await;
            let mut results = Vec::new();
            for (tool, args) in calls {
                results.push(call(&service, tool, args).await);
            }
            service.cancel().await.unwrap();
            results
        }));
    }
    for session in sessions {
        let results = session.await.unwrap();
        for (result, cli) in results.iter().zip(&expected) {
            if result["_meta"][META_KEY]["spill"].is_null() {
                assert_eq!(text_of(result), cli["text"].as_str().unwrap());
            }
            assert_eq!(result["isError"], cli["isError"]);
        }
        // `**/*.md` finds 3 files over globMaxResults 2: spilled.
        assert!(
            !results[3]["_meta"][META_KEY]["spill"].is_null(),
            "{}",
            results[3]
        );
    }
    let session_dirs = std::fs::read_dir(spill.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("session-")
        })
        .count();
    assert_eq!(session_dirs, 32);
}

#[test]
fn over_http_a_client_gone_mid_call_or_a_deleted_session_leaves_no_process_of_the_call() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let server = Server::spawn(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let pid = server.pid();
    for how in ["disconnect", "delete"] {
        let session = raw_session(addr, &[]);
        let stream = start_raw_call(addr, &session, json!({"pattern": "x", "path": "fifo"}));
        wait_until("rg on the FIFO", Duration::from_secs(20), || {
            rg_running_under(pid)
        });
        let call_processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
        assert!(!call_processes.is_empty());
        let started = Instant::now();
        match how {
            "disconnect" => drop(stream),
            _ => {
                let reply = send_raw(
                    addr,
                    &request_bytes(
                        addr,
                        "DELETE",
                        &[
                            ("Mcp-Session-Id", &session),
                            ("MCP-Protocol-Version", "2025-06-18"),
                        ],
                        b"",
                    ),
                );
                assert!((200..300).contains(&reply.status), "{reply:?}");
                // The call's stream ends with it.
                let answer = read_reply(stream);
                assert_eq!(answer.status, 200);
            }
        }
        // Promptly: not after rmcp's 5 s drain of a closed session.
        wait_until(
            &format!("the call's processes to end after a {how}"),
            Duration::from_secs(4),
            || all_gone(&call_processes),
        );
        assert!(started.elapsed() < Duration::from_secs(4));
        // A disconnect ends the call, not the session; a DELETE ends the
        // session (then 404, as the specification says).
        let reply = post(
            addr,
            &[
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        );
        let expected = if how == "delete" { 404 } else { 200 };
        assert_eq!(reply.status, expected, "{how}: {reply:?}");
    }
    // The server serves on.
    raw_session(addr, &[]);
}

#[test]
fn over_http_an_idle_session_expires() {
    let dir = tree();
    let server = Server::spawn(dir.path(), &["--config", SAMPLING, "--idle-timeout", "1"]);
    let addr = server.addr.as_str();
    let session = raw_session(addr, &[]);
    std::thread::sleep(Duration::from_millis(2500));
    let reply = post(
        addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    );
    assert_eq!(reply.status, 404, "{reply:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_sessions_record_into_one_transcript_that_replays() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("http.jsonl");
    let server = Server::spawn(
        dir.path(),
        &[
            "--config",
            SAMPLING,
            "--no-spill",
            "--record",
            root(&record),
        ],
    );
    for _ in 0..2 {
        let service = connect(&server, None, Client::default()).await;
        call(&service, "grep", json!({"pattern": "needle"})).await;
        call(&service, "glob", json!({"pattern": "*.md"})).await;
        service.cancel().await.unwrap();
    }
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("{\"call\":").count(), 4, "{text}");
    for n in 1..=4 {
        assert!(text.contains(&format!("\"call-{n}-")), "{text}");
    }
    let sessions: std::collections::HashSet<&str> = text
        .match_indices("\"id\":\"mcp-")
        .map(|(i, _)| &text[i..i + 20])
        .collect();
    assert_eq!(sessions.len(), 2, "{text}");
    let replay = workbench(&["replay", root(&record)]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
}

#[test]
fn listening_beyond_loopback_needs_a_token() {
    let dir = tree();
    let state = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["mcp", "--workdir", root(dir.path()), "--config", SAMPLING])
        .args(["--listen", "0.0.0.0:0"])
        .env_remove("WORKBENCH_MCP_TOKEN")
        .env("XDG_STATE_HOME", state.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0") && stderr.contains("--token-file"),
        "{stderr}"
    );
    // With the token in the environment it starts.
    let mut child = server_command(dir.path(), state.path(), &["--config", SAMPLING])
        .args(["--listen", "0.0.0.0:0"])
        .env("WORKBENCH_MCP_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("workbench mcp: listening on http://0.0.0.0:"),
        "{line}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn over_http_sigterm_mid_call_kills_rg_and_exits_143() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let mut server = Server::spawn(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.clone();
    let pid = server.pid();
    let session = raw_session(&addr, &[]);
    let stream = start_raw_call(&addr, &session, json!({"pattern": "x", "path": "fifo"}));
    wait_until("rg on the FIFO", Duration::from_secs(20), || {
        rg_running_under(pid)
    });
    let call_processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "no exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(143));
    assert!(all_gone(&call_processes));
    drop(stream);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_limit_of_16_calls_in_flight_is_per_session() {
    let dir = tree();
    for i in 0..16 {
        mkfifo(&dir.path().join(format!("fifo-{i}")));
    }
    let server = Server::spawn(dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let busy = std::sync::Arc::new(connect(&server, None, Client::default()).await);
    let blocked: Vec<_> = (0..16)
        .map(|i| {
            let busy = busy.clone();
            let args = json!({"pattern": "needle", "path": format!("fifo-{i}")});
            tokio::spawn(async move { call(&busy, "grep", args).await })
        })
        .collect();
    let pid = server.pid();
    wait_until("16 rg processes", Duration::from_secs(20), || {
        descendants(pid).iter().filter(|(_, c)| c == "rg").count() == 16
    });
    let queued = {
        let busy = busy.clone();
        tokio::spawn(async move { call(&busy, "glob", json!({"pattern": "*.ts"})).await })
    };
    // Another session has slots of its own.
    let other = connect(&server, None, Client::default()).await;
    let answered = call(&other, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(answered["isError"], false, "{answered}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!queued.is_finished(), "a 17th call of one session ran");
    for i in 0..16 {
        let path = dir.path().join(format!("fifo-{i}"));
        tokio::task::spawn_blocking(move || {
            std::fs::write(path, "needle in a fifo\n").unwrap();
        })
        .await
        .unwrap();
    }
    for call in blocked {
        let result = call.await.unwrap();
        assert!(text_of(&result).starts_with("Found 1 match"), "{result}");
    }
    assert_eq!(text_of(&queued.await.unwrap()), text_of(&answered));
    other.cancel().await.unwrap();
}

// ------------------------------------------------------------ edge cases

/// A POST in `session` (2025-06-18), raw.
fn post_in(addr: &str, session: &str, body: &[u8]) -> Reply {
    send_raw(
        addr,
        &request_bytes(
            addr,
            "POST",
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            body,
        ),
    )
}

/// The JSON-RPC message of a 200 answer (SSE) or of a 400 (JSON body).
pub(crate) fn answer_of(reply: &Reply) -> Value {
    if reply.status == 200 {
        reply.messages().pop().unwrap()
    } else {
        serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("{e}: {reply:?}"))
    }
}

#[test]
fn over_http_a_lone_surrogate_and_nesting_over_128_get_the_engines_result_as_over_stdio() {
    let dir = tree();
    std::fs::write(dir.path().join("odd.txt"), "before \u{fffd} after\n").unwrap();
    let server = Server::spawn(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let session = raw_session(addr, &[]);
    let surrogate = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"\ud800"}}}"#;
    let reply = post_in(addr, &session, surrogate);
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = answer_of(&reply);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let found = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(found.contains("before \u{fffd} after"), "{found}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"alpha","x":{}{}}}}}}}"#,
        "[".repeat(9_996),
        "]".repeat(9_996)
    );
    let reply = post_in(addr, &session, deep.as_bytes());
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = answer_of(&reply);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("notes.md"), "{answer}");
}

#[test]
fn over_http_batches_malformed_json_and_id_null_get_400_with_the_json_rpc_error() {
    let dir = tree();
    let server = Server::spawn(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let session = raw_session(addr, &[]);
    for (body, code) in [
        (&b"{not json"[..], -32700),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            -32600,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
            -32600,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
            -32600,
        ),
    ] {
        for in_session in [true, false] {
            let reply = if in_session {
                post_in(addr, &session, body)
            } else {
                send_raw(addr, &request_bytes(addr, "POST", &[], body))
            };
            let what = String::from_utf8_lossy(body);
            assert_eq!(reply.status, 400, "{what}: {reply:?}");
            assert_eq!(
                reply.header("content-type"),
                Some("application/json"),
                "{what}"
            );
            let answer = answer_of(&reply);
            assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
            assert_eq!(answer["id"], Value::Null, "{what}: {answer}");
        }
    }
}

#[test]
fn over_http_delete_of_an_ended_or_made_up_session_is_404_and_of_a_live_one_204() {
    let dir = tree();
    let server = Server::spawn(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let delete = |session: &str| {
        send_raw(
            addr,
            &request_bytes(
                addr,
                "DELETE",
                &[
                    ("Mcp-Session-Id", session),
                    ("MCP-Protocol-Version", "2025-06-18"),
                ],
                b"",
            ),
        )
    };
    let session = raw_session(addr, &[]);
    assert_eq!(delete(&session).status, 204);
    assert_eq!(delete(&session).status, 404);
    assert_eq!(delete("made-up-0123").status, 404);
}

#[test]
fn over_http_a_request_without_a_session_gets_400_and_a_2026_one_without_its_meta_too() {
    let dir = tree();
    let server = Server::spawn(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"glob","arguments":{"pattern":"*.ts"}}});
    // No session (2025): -32600; a 2026-07-28 request without its _meta
    // keys: -32602, as that revision specifies.
    for (version, code) in [
        (None, -32600),
        (Some("2025-06-18"), -32600),
        (Some("2026-07-28"), -32602),
    ] {
        let headers: Vec<(&str, &str)> = version
            .map(|v| vec![("MCP-Protocol-Version", v)])
            .unwrap_or_default();
        let reply = post(addr, &headers, &call);
        assert_eq!(reply.status, 400, "{version:?}: {reply:?}");
        let answer = answer_of(&reply);
        assert_eq!(answer["error"]["code"], code, "{version:?}: {answer}");
        assert_eq!(answer["id"], 3);
    }
    // A session's request naming a later revision is not taken out of it.
    let session = raw_session(addr, &[]);
    let reply = post(
        addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2026-07-28"),
        ],
        &call,
    );
    assert_eq!(reply.status, 400, "{reply:?}");
}

/// A POST of `initialize` whose headers are sent and whose body is not.
fn initialize_with_a_late_body(addr: &str) -> (TcpStream, Vec<u8>) {
    let bytes = request_bytes(addr, "POST", &[], initialize_body().to_string().as_bytes());
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let mut stream = open(addr);
    stream.write_all(&bytes[..split]).unwrap();
    (stream, bytes[split..].to_vec())
}

#[test]
fn over_http_late_bodied_initializes_cannot_exceed_the_256_session_cap() {
    let dir = tree();
    let server = Server::spawn(dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let addr = server.addr.as_str();
    let late: Vec<_> = (0..10).map(|_| initialize_with_a_late_body(addr)).collect();
    // Give the server time to read the late requests' headers.
    std::thread::sleep(Duration::from_millis(300));
    let sessions: Vec<String> = (0..256)
        .map(|_| {
            let init = post(addr, &[], &initialize_body());
            assert_eq!(init.status, 200, "{init:?}");
            init.header("mcp-session-id").unwrap().to_owned()
        })
        .collect();
    for (mut stream, body) in late {
        stream.write_all(&body).unwrap();
        let reply = read_reply(stream);
        assert_eq!(reply.status, 503, "{reply:?}");
    }
    assert_eq!(post(addr, &[], &initialize_body()).status, 503);
    // Ending one makes room for one.
    let ended = send_raw(
        addr,
        &request_bytes(addr, "DELETE", &[("Mcp-Session-Id", &sessions[0])], b""),
    );
    assert_eq!(ended.status, 204, "{ended:?}");
    assert_eq!(post(addr, &[], &initialize_body()).status, 200);
    assert_eq!(post(addr, &[], &initialize_body()).status, 503);
}

#[test]
fn over_http_a_running_call_keeps_its_session_past_the_idle_timeout() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let server = Server::spawn(dir.path(), &["--config", SAMPLING, "--idle-timeout", "1"]);
    let addr = server.addr.as_str();
    let pid = server.pid();
    let session = raw_session(addr, &[]);
    let stream = start_raw_call(addr, &session, json!({"pattern": "needle", "path": "fifo"}));
    wait_until("rg on the FIFO", Duration::from_secs(20), || {
        rg_running_under(pid)
    });
    std::thread::sleep(Duration::from_millis(2500));
    std::fs::write(dir.path().join("fifo"), "needle in a fifo\n").unwrap();
    let reply = read_reply(stream);
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = reply.messages().pop().unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Found 1 match"), "{answer}");
    // The session lives on, and expires once idle.
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}).to_string();
    assert_eq!(post_in(addr, &session, list.as_bytes()).status, 200);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(post_in(addr, &session, list.as_bytes()).status, 404);
}

#[test]
fn over_http_1030_idle_connections_do_not_starve_a_client_with_the_token() {
    let dir = tree();
    let (server, _secrets) = Server::with_token(dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let idle: Vec<TcpStream> = (0..1030)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let started = Instant::now();
    let mut stream = open(addr);
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .write_all(&request_bytes(
            addr,
            "POST",
            &[("Authorization", BEARER)],
            initialize_body().to_string().as_bytes(),
        ))
        .unwrap();
    let reply = read_reply(stream);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(idle);
}

#[test]
fn over_http_a_silent_connection_and_a_body_never_sent_are_closed_at_their_deadlines() {
    let dir = tree();
    let (server, _secrets) = {
        let secrets = tempfile::tempdir().unwrap();
        let file = secrets.path().join("token");
        std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
        // Private, as a secret should be (else a warning precedes the address).
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let state = tempfile::tempdir().unwrap();
        let mut child = server_command(
            dir.path(),
            state.path(),
            &[
                "--config",
                SAMPLING,
                "--listen",
                "127.0.0.1:0",
                "--token-file",
                root(&file),
            ],
        )
        .env("WORKBENCH_MCP_HTTP_LIMITS", "gate_ms=400,body_ms=400")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
        let addr = listening_address(&mut child);
        (
            Server {
                child,
                addr,
                _state: state,
            },
            secrets,
        )
    };
    let addr = server.addr.as_str();
    // A connection that sends nothing is closed after the gate deadline.
    let started = Instant::now();
    let silent = open(addr);
    let mut buf = Vec::new();
    let _ = (&silent).read_to_end(&mut buf);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // An authenticated request that never sends its declared body: 408.
    let started = Instant::now();
    let mut stream = open(addr);
    stream
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {BEARER}\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
                 Content-Length: 100\r\n\r\n{{"
            )
            .as_bytes(),
        )
        .unwrap();
    let reply = read_reply(stream);
    assert_eq!(reply.status, 408, "{reply:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server serves on.
    assert_eq!(
        post(addr, &[("Authorization", BEARER)], &initialize_body()).status,
        200
    );
}
