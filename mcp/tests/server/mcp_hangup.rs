//! The MCP server when its client goes away while calls are in flight or
//! queued: the real binary on real pipes (stdio) and real sockets (HTTP),
//! real bash and real rg blocked on FIFOs of the workdir, the processes
//! followed through `/proc`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// test code: a failed unwrap is a failed test

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use fs_search_test_support::mcp::http::{HttpServer, post, request_bytes};
use fs_search_test_support::mcp::{
    SAMPLING, all_gone, logs_in, mkfifo, rg_running_under, tree, wait_until,
};
use fs_search_test_support::reliability::procfs::{descendants, kill_group, proc_info};

use crate::SERVER;

/// The texts of a call aborted in flight and of one aborted while queued.
const ABORTED: [&str; 2] = [
    "Error: grep was aborted before completion (tool timeout or caller cancellation)",
    "Error: tool call aborted before dispatch",
];

/// A stdio server with a TMPDIR of its own (empty at start) and a raw
/// line client whose reading the test controls.
struct Stdio2 {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
    tmp: tempfile::TempDir,
    _state: tempfile::TempDir,
}

impl Stdio2 {
    fn spawn(dir: &Path, path: Option<&Path>) -> Self {
        let state = tempfile::tempdir().unwrap();
        let tmp = tempfile::tempdir().unwrap();
        let mut cmd = SERVER.command(dir, state.path(), &["--config", SAMPLING, "--no-spill"]);
        cmd.env("TMPDIR", tmp.path());
        if let Some(path) = path {
            cmd.env("PATH", path);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Self {
            stdin: child.stdin.take(),
            stdout: child.stdout.take().map(BufReader::new),
            child,
            tmp,
            _state: state,
        }
    }

    fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn next(&mut self) -> Value {
        let mut line = String::new();
        let n = self.stdout.as_mut().unwrap().read_line(&mut line).unwrap();
        assert!(n > 0, "stdout ended");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON: {line:?}: {e}"))
    }

    /// The messages up to the answer to request `id`, that answer last.
    fn until_answer(&mut self, id: i64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let message = self.next();
            let done = message["id"] == json!(id);
            seen.push(message);
            if done {
                return seen;
            }
        }
    }

    fn initialize(&mut self) {
        self.send(
            &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"hangup","version":"1"}}}),
        );
        let init = self.until_answer(0).pop().unwrap();
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        self.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    }

    fn call_fifo(&mut self, id: i64) {
        self.send(
            &json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{
            "name":"grep","arguments":{"pattern":"x","path":"fifo"}}}),
        );
    }

    /// Waits for the server's exit, at most `limit`; its status and how
    /// long it took.
    fn wait_exit(&mut self, limit: Duration) -> (std::process::ExitStatus, Duration) {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status, start.elapsed());
            }
            assert!(
                start.elapsed() < limit,
                "the server did not exit in {limit:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    fn tmp_entries(&self) -> Vec<String> {
        std::fs::read_dir(self.tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    }
}

impl Drop for Stdio2 {
    fn drop(&mut self) {
        // A failed test leaves no rg behind on a FIFO.
        let own = proc_info(i32::try_from(std::process::id()).unwrap()).map(|i| i.pgid);
        for (pid, _) in descendants(self.pid()) {
            if let Some(info) = proc_info(pid).filter(|i| Some(i.pgid) != own) {
                kill_group(info.pgid);
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The rg processes running under `pid`.
fn rg_count(pid: i32) -> usize {
    descendants(pid).iter().filter(|(_, c)| c == "rg").count()
}

#[test]
fn a_client_that_queues_300_calls_on_a_fifo_and_hangs_up_ends_the_server_within_5_s() {
    // The server stops reading at 64 unanswered requests, so it is not
    // reading when the client closes stdin. Whether the client still reads
    // its answers or not, the server notices, ends every call and exits.
    for reads_answers in [false, true] {
        let dir = tree();
        mkfifo(&dir.path().join("fifo"));
        let mut server = Stdio2::spawn(dir.path(), None);
        let pid = server.pid();
        server.initialize();
        for id in 1..=300 {
            server.call_fifo(id);
        }
        wait_until(
            "16 rg processes on the FIFO",
            Duration::from_secs(30),
            || rg_count(pid) == 16,
        );
        let call_processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
        let answers = reads_answers.then(|| {
            let stdout = server.stdout.take().unwrap();
            std::thread::spawn(move || {
                stdout
                    .lines()
                    .map(|l| serde_json::from_str::<Value>(&l.unwrap()).unwrap())
                    .collect::<Vec<_>>()
            })
        });
        drop(server.stdin.take());
        let (status, took) = server.wait_exit(Duration::from_secs(10));
        eprintln!("reads answers: {reads_answers}; exit {status} {took:?} after the hang-up");
        assert_eq!(status.code(), Some(0), "reads answers: {reads_answers}");
        assert!(
            took < Duration::from_secs(5),
            "exit took {took:?} (reads answers: {reads_answers})"
        );
        assert!(all_gone(&call_processes), "rg or bash of a call is left");
        assert_eq!(server.tmp_entries(), Vec::<String>::new());
        if let Some(answers) = answers {
            let answers = answers.join().unwrap();
            eprintln!("{} of 300 calls answered", answers.len());
            // Every call that got an answer was aborted, none ran on; the
            // calls whose rg ran were read before the hang-up and answered.
            assert!(answers.len() >= 16, "{} answers", answers.len());
            for answer in &answers {
                assert_eq!(answer["result"]["isError"], true, "{answer}");
                let text = answer["result"]["content"][0]["text"].as_str().unwrap();
                assert!(ABORTED.contains(&text), "{text}");
            }
        }
    }
}

#[test]
fn a_client_that_closes_the_servers_stdout_first_ends_it_within_5_s() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let mut server = Stdio2::spawn(dir.path(), None);
    let pid = server.pid();
    server.initialize();
    for id in 1..=20 {
        server.call_fifo(id);
    }
    wait_until(
        "16 rg processes on the FIFO",
        Duration::from_secs(30),
        || rg_count(pid) == 16,
    );
    let call_processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
    // Nothing is being written (every call is blocked or queued) and stdin
    // stays open: only the closed stdout says the client is gone.
    drop(server.stdout.take());
    let (status, took) = server.wait_exit(Duration::from_secs(10));
    eprintln!("exit {status} {took:?} after stdout was closed");
    assert_eq!(status.code(), Some(0));
    assert!(took < Duration::from_secs(5), "exit took {took:?}");
    assert!(all_gone(&call_processes), "rg or bash of a call is left");
    assert_eq!(server.tmp_entries(), Vec::<String>::new());
}

// ------------------------------------------------------------ HTTP

/// Opens a POST of a `tools/call` (grep on `path`) in `session` and reads
/// the answer's head: the call has reached the server's handler.
fn open_call(addr: &str, session: &str, id: i64, path: &str) -> BufReader<TcpStream> {
    let body = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"grep","arguments":{"pattern":"needle","path":path}}});
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
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
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200"), "{line:?}");
    loop {
        line.clear();
        reader.read_line(&mut line).unwrap();
        if line == "\r\n" {
            return reader;
        }
    }
}

/// An initialized raw 2025 session; its `Mcp-Session-Id`.
fn session(addr: &str) -> String {
    let init = post(
        addr,
        &[],
        &json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"raw","version":"1"}}}),
    );
    assert_eq!(init.status, 200, "{init:?}");
    let session = init.header("mcp-session-id").unwrap().to_owned();
    let initialized = post(
        addr,
        &[
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    );
    assert_eq!(initialized.status, 202, "{initialized:?}");
    session
}

#[test]
fn over_http_calls_queued_for_a_slot_whose_connections_close_never_run() {
    let dir = tree();
    for i in 0..16 {
        mkfifo(&dir.path().join(format!("fifo-{i}")));
    }
    // Nobody ever writes to this one: a call on it that ran would leave
    // its rg blocked there.
    mkfifo(&dir.path().join("never"));
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let addr = server.addr.as_str();
    let pid = server.pid();
    let session = session(addr);
    let busy: Vec<_> = (0..16i64)
        .map(|i| open_call(addr, &session, i + 1, &format!("fifo-{i}")))
        .collect();
    wait_until("16 rg processes", Duration::from_secs(30), || {
        rg_count(pid) == 16
    });
    // Eight more calls of the session wait for a slot; their client goes.
    let queued: Vec<_> = (0..8i64)
        .map(|i| open_call(addr, &session, 100 + i, "never"))
        .collect();
    drop(queued);
    // They leave the queue while every slot is still taken: the server's
    // log says each of them ended cancelled.
    let log = || logs_in(server.state());
    wait_until(
        "8 cancelled calls in the log",
        Duration::from_secs(10),
        || {
            log()
                .lines()
                .filter(|l| l.contains("call finished") && l.contains("cancelled=true"))
                .count()
                == 8
        },
    );
    // Free the slots: the busy calls find their line and end.
    for i in 0..16 {
        let path = dir.path().join(format!("fifo-{i}"));
        std::fs::write(path, "needle in a fifo\n").unwrap();
    }
    for mut reader in busy {
        let mut body = String::new();
        let _ = reader.read_to_string(&mut body);
        assert!(body.contains("Found 1 match"), "{body}");
    }
    // The slots are free; a call of the queue that ran now would block on
    // `never`. None does, and the session serves on.
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_millis(1500) {
        assert!(!rg_running_under(pid), "a call whose client left ran");
        std::thread::sleep(Duration::from_millis(25));
    }
    let mut reader = open_call(addr, &session, 200, "fifo-0");
    std::thread::spawn({
        let path = dir.path().join("fifo-0");
        move || std::fs::write(path, "needle again\n").unwrap()
    });
    let mut body = String::new();
    let _ = reader.read_to_string(&mut body);
    assert!(body.contains("Found 1 match"), "{body}");
    assert!(!rg_running_under(pid));
}

// ------------------------------------------------------------ 2026-07-28

/// The load warning when rg is missing.
const RG_MISSING: &str = "tool-fs-search: ripgrep (rg) not found on the bash executor PATH; glob/grep tools not registered";

/// A `PATH` holding bash and no rg.
fn path_without_rg() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(bash, bin.path().join("bash")).unwrap();
    bin
}

/// A 2026-07-28 request `method` with a complete `_meta` naming `level`.
fn request(id: i64, method: &str, level: Option<&str>) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw-2026", "version": "1"},
    });
    if let Some(level) = level {
        meta["io.modelcontextprotocol/logLevel"] = json!(level);
    }
    json!({"jsonrpc":"2.0","id":id,"method":method,"params":{"_meta": meta}})
}

/// The log notifications among `messages`.
fn logs(messages: &[Value]) -> Vec<&Value> {
    messages
        .iter()
        .filter(|m| m["method"] == "notifications/message")
        .collect()
}

#[test]
fn over_stdio_a_2026_client_hears_that_rg_is_missing_at_the_log_level_it_names() {
    let dir = tree();
    let bin = path_without_rg();
    let mut server = Stdio2::spawn(dir.path(), Some(bin.path()));
    // Before any lifecycle rmcp answers discover with no way to notify.
    server.send(&request(1, "server/discover", Some("warning")));
    let discover = server.until_answer(1).pop().unwrap();
    assert_eq!(discover["result"]["instructions"], "", "{discover}");
    for (id, level, heard) in [
        (2, Some("warning"), true),
        (3, Some("debug"), true),
        (4, Some("error"), false),
        (5, None, false),
    ] {
        server.send(&request(id, "tools/list", level));
        let mut seen = server.until_answer(id);
        let answer = seen.pop().unwrap();
        assert_eq!(answer["result"]["tools"], json!([]), "{answer}");
        let warnings = logs(&seen);
        if heard {
            assert_eq!(warnings.len(), 1, "level {level:?}: {seen:?}");
            assert_eq!(warnings[0]["params"]["level"], "warning");
            assert_eq!(warnings[0]["params"]["data"], RG_MISSING);
        } else {
            assert!(warnings.is_empty(), "level {level:?}: {seen:?}");
        }
    }
}

#[test]
fn over_http_a_2026_client_hears_that_rg_is_missing_with_discover_and_tools_list() {
    let dir = tree();
    let bin = path_without_rg();
    let server = HttpServer::spawn_with_path(
        &SERVER,
        dir.path(),
        &["--config", SAMPLING],
        Some(bin.path()),
    );
    let addr = server.addr.as_str();
    for (method, level, heard) in [
        ("server/discover", Some("warning"), true),
        ("tools/list", Some("info"), true),
        ("tools/list", Some("error"), false),
        ("server/discover", None, false),
    ] {
        let reply = post(
            addr,
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", method),
            ],
            &request(1, method, level),
        );
        assert_eq!(reply.status, 200, "{reply:?}");
        let messages = reply.messages();
        let warnings = logs(&messages);
        assert_eq!(
            warnings.len(),
            usize::from(heard),
            "{method} {level:?}: {messages:?}"
        );
        if heard {
            assert_eq!(warnings[0]["params"]["data"], RG_MISSING);
        }
        assert!(
            messages.last().unwrap()["result"].is_object(),
            "{messages:?}"
        );
    }
}
