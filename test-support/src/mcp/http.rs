//! A `--listen` server on a real TCP port of 127.0.0.1 ([`HttpServer`]),
//! the official Rust SDK's Streamable HTTP client on it, and raw HTTP/1.1
//! on a `TcpStream` for status codes, headers and disconnects.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use super::client::{Client, params};
use super::{McpServer, root};

/// The bearer token of [`HttpServer::with_token`].
pub const TOKEN: &str = "test-token-0123456789";
/// [`TOKEN`] as an `Authorization` header's value.
pub const BEARER: &str = "Bearer test-token-0123456789";

// ------------------------------------------------------------ the server

/// `… --listen 127.0.0.1:0 …`, its address read from stderr; killed on
/// drop.
pub struct HttpServer {
    child: Child,
    /// The `ADDR:PORT` it listens on.
    pub addr: String,
    state: tempfile::TempDir,
}

/// The `ADDR:PORT` of the `workbench mcp: listening on http://ADDR:PORT/mcp`
/// line a `--listen` server writes first on stderr, that line exactly; the
/// rest of stderr is drained.
pub fn listening_address(child: &mut Child) -> String {
    read_listening_line(child, |line| {
        line.trim()
            .strip_prefix("workbench mcp: listening on http://")
            .and_then(|rest| rest.strip_suffix("/mcp"))
            .map(str::to_owned)
    })
}

/// The `ADDR:PORT` of the first stderr line, `… listening on
/// http://ADDR:PORT/mcp …` (whatever precedes or follows it); the rest is
/// drained.
pub fn address_on_listening_line(child: &mut Child) -> String {
    read_listening_line(child, |line| {
        line.split_once("listening on http://")
            .and_then(|(_, rest)| rest.split_once("/mcp"))
            .map(|(addr, _)| addr.to_owned())
    })
}

fn read_listening_line(child: &mut Child, address: impl Fn(&str) -> Option<String>) -> String {
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    let addr = address(&line).unwrap_or_else(|| panic!("no address on stderr: {line:?}"));
    std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
    addr
}

impl HttpServer {
    /// `server` on `dir` with `extra`, listening on 127.0.0.1.
    pub fn spawn(server: &McpServer, dir: &Path, extra: &[&str]) -> Self {
        Self::spawn_with_path(server, dir, extra, None)
    }

    /// A server whose `PATH` is `path`, when given.
    pub fn spawn_with_path(
        server: &McpServer,
        dir: &Path,
        extra: &[&str],
        path: Option<&Path>,
    ) -> Self {
        let state = tempfile::tempdir().unwrap();
        let args = [&["--listen", "127.0.0.1:0"], extra].concat();
        let mut command = server.command(dir, state.path(), &args);
        if let Some(path) = path {
            command.env("PATH", path);
        }
        let child = command
            .env_remove("WORKBENCH_MCP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        Self::listening(child, state)
    }

    /// A `--listen` server started by the test itself (stderr piped), its
    /// logs and temporary files in `state`: its address read from stderr.
    pub fn listening(mut child: Child, state: tempfile::TempDir) -> Self {
        let addr = listening_address(&mut child);
        Self { child, addr, state }
    }

    /// A server with `--token-file` holding [`TOKEN`]; the token's dir.
    pub fn with_token(server: &McpServer, dir: &Path, extra: &[&str]) -> (Self, tempfile::TempDir) {
        let secrets = tempfile::tempdir().unwrap();
        let file = secrets.path().join("token");
        std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
        // Private, as a secret should be (else a warning precedes the address).
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let args = [&["--token-file", root(&file)], extra].concat();
        (Self::spawn(server, dir, &args), secrets)
    }

    /// `http://ADDR:PORT/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The server's process id.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    /// The server's process.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }

    /// The server's private state dir (its log file is there).
    pub fn state(&self) -> &Path {
        self.state.path()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A server process started by the test itself, killed when the test ends
/// (or fails).
pub struct Killed(pub Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

// ------------------------------------------------------------ rmcp client

/// `client` connected to `server` over Streamable HTTP, with `token` as
/// its bearer token when given.
pub async fn connect(
    server: &HttpServer,
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

/// A call's result as JSON (`content`, `isError`, `_meta`).
pub async fn call(service: &RunningService<RoleClient, Client>, tool: &str, args: Value) -> Value {
    let result = service.peer().call_tool(params(tool, args)).await.unwrap();
    serde_json::to_value(result).unwrap()
}

// ------------------------------------------------------------ raw HTTP

/// One response read to its end.
#[derive(Debug)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The status line and headers.
    pub head: String,
    /// The body, as text.
    pub body: String,
}

impl Reply {
    /// The value of header `name` (any case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }

    /// The JSON-RPC messages of an SSE body.
    pub fn messages(&self) -> Vec<Value> {
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
pub fn request_bytes(addr: &str, method: &str, headers: &[(&str, &str)], body: &[u8]) -> Vec<u8> {
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

/// A connection to `addr` whose reads time out after 30 s.
pub fn open(addr: &str) -> TcpStream {
    let stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream
}

/// Reads the response on `stream` to its end.
pub fn read_reply(mut stream: TcpStream) -> Reply {
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    parse_reply(&bytes)
}

/// Sends `bytes` on a new connection; the response.
pub fn send_raw(addr: &str, bytes: &[u8]) -> Reply {
    let mut stream = open(addr);
    stream.write_all(bytes).unwrap();
    read_reply(stream)
}

/// POSTs `body` with `headers`; the response.
pub fn post(addr: &str, headers: &[(&str, &str)], body: &Value) -> Reply {
    send_raw(
        addr,
        &request_bytes(addr, "POST", headers, body.to_string().as_bytes()),
    )
}

/// An `initialize` request (id 0, 2025-06-18).
pub fn initialize_body() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},
        "clientInfo":{"name":"raw","version":"1"}}})
}

/// A raw session: initialize and initialized; its `Mcp-Session-Id`.
pub fn raw_session(addr: &str, auth: &[(&str, &str)]) -> String {
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

/// Sends a `tools/call` of grep (id 1) in `session` and leaves the answer
/// unread.
pub fn start_raw_call(addr: &str, session: &str, args: Value) -> TcpStream {
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

/// The JSON-RPC message of a 200 answer (SSE) or of a 400 (JSON body).
pub fn answer_of(reply: &Reply) -> Value {
    if reply.status == 200 {
        reply.messages().pop().unwrap()
    } else {
        serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("{e}: {reply:?}"))
    }
}
