//! The MCP server under test as a process, and what its tests share: the
//! server's command line ([`McpServer`]), the small tree the calls search,
//! the rg config that pins grep's order, `/proc` waits, the server's logs.
//!
//! - `client`: the official Rust SDK's client (`rmcp`) on a child process;
//! - `raw`: a bare JSON-RPC line client on the server's stdin and stdout;
//! - `http`: a `--listen` server and raw HTTP/1.1 on a `TcpStream`.

pub mod client;
pub mod http;
pub mod raw;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, Instant, UNIX_EPOCH};

use crate::reliability::procfs::{descendants, proc_info};

/// A config that samples over-cap glob results.
pub const SAMPLING: &str = r#"{"sampleOverCapGlobResults":true}"#;
/// A config whose glob of the [`tree`] goes over its cap and spills.
pub const SPILLING: &str = r#"{"sampleOverCapGlobResults":false,"globMaxResults":2}"#;
/// The key of the workbench's metadata in a result's `_meta`.
pub const META_KEY: &str = "fs-search-workbench/result";

/// How a test crate starts the MCP server it tests: its program (one of
/// the crate's `CARGO_BIN_EXE_*`), the subcommand before the server's own
/// flags (`mcp` for `workbench mcp`, none for `workbench-mcp`), and the
/// crate's `CARGO_TARGET_TMPDIR`, where the rg config is written.
#[derive(Clone, Copy, Debug)]
pub struct McpServer {
    program: &'static str,
    subcommand: Option<&'static str>,
    scratch: &'static str,
}

impl McpServer {
    /// `workbench mcp`: the `workbench` binary at `program`.
    pub const fn workbench(program: &'static str, scratch: &'static str) -> Self {
        Self {
            program,
            subcommand: Some("mcp"),
            scratch,
        }
    }

    /// `workbench-mcp`: the server's own binary at `program`, whose
    /// command line is that of `workbench mcp`.
    pub const fn standalone(program: &'static str, scratch: &'static str) -> Self {
        Self {
            program,
            subcommand: None,
            scratch,
        }
    }

    /// The program's path.
    pub fn program(&self) -> &'static str {
        self.program
    }

    /// An rg config file that pins grep's file order (rg's own order is
    /// multi-threaded), given to every server and every other command of
    /// the tests alike.
    ///
    /// Written once per test process, whole before its name exists (tests
    /// run in threads: a second `write` would truncate the file that a rg
    /// started by another test is reading, which then reads no config).
    pub fn sorted_rg_config(&self) -> PathBuf {
        static PATH: OnceLock<PathBuf> = OnceLock::new();
        PATH.get_or_init(|| {
            let dir = Path::new(self.scratch);
            let path = dir.join(format!("mcp-test-ripgreprc-{}", std::process::id()));
            let staged = dir.join(format!("mcp-test-ripgreprc-{}.new", std::process::id()));
            std::fs::write(&staged, "--sort=path\n").unwrap();
            std::fs::rename(&staged, &path).unwrap();
            path
        })
        .clone()
    }

    /// The server with `extra` and no `--workdir` (`--replay` needs none):
    /// logs and temporary files in the private `state` dir.
    pub fn bare_command(&self, state: &Path, extra: &[&str]) -> Command {
        let mut cmd = Command::new(self.program);
        cmd.args(self.subcommand)
            .args(extra)
            .env("XDG_STATE_HOME", state)
            // Everything the server writes (spilled results, its
            // executor's files) stays in the test's dir, even when the
            // test kills it.
            .env("TMPDIR", state)
            .env("RIPGREP_CONFIG_PATH", self.sorted_rg_config());
        cmd
    }

    /// The server on workdir `dir` with `extra`, as [`Self::bare_command`].
    pub fn command(&self, dir: &Path, state: &Path, extra: &[&str]) -> Command {
        let args = [&["--workdir", root(dir)], extra].concat();
        self.bare_command(state, &args)
    }
}

/// `dir` as a string (the tests' paths are UTF-8).
pub fn root(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

/// A small tree with distinct whole-second mtimes (so glob's order
/// survives a freeze): two `.ts` files, three `.md` files, three lines
/// holding `needle`.
pub fn tree() -> tempfile::TempDir {
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

/// Makes a FIFO at `path`: an rg reading it blocks until a test writes.
pub fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success());
}

/// Polls `check` every 50 ms; panics naming `what` after `limit`.
pub fn wait_until(what: &str, limit: Duration, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// An rg runs under process `pid`.
pub fn rg_running_under(pid: i32) -> bool {
    descendants(pid).iter().any(|(_, comm)| comm == "rg")
}

/// Every process that was a descendant of `pid` is gone (or a zombie).
pub fn all_gone(pids: &[i32]) -> bool {
    pids.iter()
        .all(|p| proc_info(*p).is_none_or(|i| !i.is_alive()))
}

/// The log files of every workbench process whose XDG_STATE_HOME was
/// `state` (one file per process), concatenated; `""` when there is none.
pub fn logs_in(state: &Path) -> String {
    let dir = state.join("fs-search-workbench");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map(|entries| entries.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    files.retain(|f| f.extension().is_some_and(|e| e == "log"));
    files.sort();
    files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap())
        .collect()
}
