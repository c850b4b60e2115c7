//! A bare JSON-RPC line client on a server's stdin and stdout ([`Raw`]),
//! for what a conforming client never sends: malformed lines, odd ids,
//! requests before `initialize`, a hang-up mid-call.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::McpServer;

/// A bare line client on the server's stdin and stdout.
pub struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    _state: tempfile::TempDir,
}

impl Raw {
    /// `server` on `dir` with `extra`.
    pub fn spawn(server: &McpServer, dir: &Path, extra: &[&str]) -> Self {
        let state = tempfile::tempdir().unwrap();
        let command = server.command(dir, state.path(), extra);
        Self::with_command(command, state)
    }

    /// A server started by `command`, its logs and temp files in `state`.
    pub fn with_command(mut command: Command, state: tempfile::TempDir) -> Self {
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

    /// The server's process id.
    pub fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).unwrap()
    }

    /// Writes `bytes` to the server's stdin as they are.
    pub fn send(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Writes `value` as one line.
    pub fn send_json(&mut self, value: Value) {
        self.send(format!("{value}\n").as_bytes());
    }

    /// The next stdout line, if one comes within `limit`.
    pub fn next_line(&self, limit: Duration) -> Option<String> {
        self.lines.recv_timeout(limit).ok()
    }

    /// The next message, as JSON (every stdout line must be JSON).
    pub fn next(&self) -> Value {
        let line = self.lines.recv_timeout(Duration::from_secs(20)).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON on stdout: {line:?}: {e}"))
    }

    /// The response to request `id` (notifications before it are skipped).
    pub fn response(&self, id: i64) -> Value {
        loop {
            let message = self.next();
            if message["id"] == json!(id) {
                return message;
            }
        }
    }

    /// `initialize` (2025-06-18) and `notifications/initialized`.
    pub fn initialize(&mut self) {
        self.send_json(
            json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
            "protocolVersion":"2025-06-18","capabilities":{},
            "clientInfo":{"name":"raw","version":"1"}}}),
        );
        let init = self.response(0);
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18");
        self.send_json(json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
    }

    /// Closes the server's stdin (end of input).
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Closes stdin, as an agent host ends its server; the exit status.
    pub fn hang_up(&mut self, limit: Duration) -> ExitStatus {
        self.close_stdin();
        self.wait_exit(limit)
    }

    /// The server's exit status; panics unless it exits within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
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
