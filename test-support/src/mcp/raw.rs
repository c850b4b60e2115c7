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

/// Where a server's stderr goes, in its state directory.
const STDERR_FILE: &str = "server-stderr.log";

/// How long a message may take: generous, for a loaded CI machine.
const RESPONSE_LIMIT: Duration = Duration::from_secs(60);

/// A bare line client on the server's stdin and stdout.
pub struct Raw {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    state: tempfile::TempDir,
}

impl Raw {
    /// `server` on `dir` with `extra`.
    pub fn spawn(server: &McpServer, dir: &Path, extra: &[&str]) -> Self {
        let state = tempfile::tempdir().unwrap();
        let command = server.command(dir, state.path(), extra);
        Self::with_command(command, state)
    }

    /// A server started by `command`, its logs and temp files in `state`
    /// (its stderr too, which a failed wait prints).
    pub fn with_command(mut command: Command, state: tempfile::TempDir) -> Self {
        let stderr = std::fs::File::create(state.path().join(STDERR_FILE)).unwrap();
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
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
            state,
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

    /// The next message, as JSON (every stdout line must be JSON); panics
    /// with the server's stderr when none comes within a minute or the
    /// server closed its stdout.
    pub fn next(&self) -> Value {
        let line = match self.lines.recv_timeout(RESPONSE_LIMIT) {
            Ok(line) => line,
            Err(e) => panic!(
                "no message from the server ({e}); its stderr:\n{}",
                self.stderr()
            ),
        };
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

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.state.path().join(STDERR_FILE)).unwrap_or_default()
    }

    /// The server's exit status; panics unless it exits within `limit`.
    pub fn wait_exit(&mut self, limit: Duration) -> ExitStatus {
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                start.elapsed() < limit,
                "the server did not exit in {limit:?}; its stderr:\n{}",
                self.stderr()
            );
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
