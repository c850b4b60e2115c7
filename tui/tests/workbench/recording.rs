//! `workbench mcp --record` and `workbench freeze` against data loss
//! (data loss): two real servers sharing one recording, a real write that
//! fails part-way (`ulimit -f` on the server, SIGXFSZ ignored), rotation
//! below the reader's cap, a re-freeze that fails part-way, a recording
//! whose header names a tree outside its directory, `--record FIFO`, and
//! a tree too large for a whole-tree fixture. Real `workbench` processes, real bash and rg, rmcp's client.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(deprecated)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fs_search_test_support::mcp::client::{Client, params};
use fs_search_test_support::mcp::{SAMPLING, logs_in, mkfifo, root, tree};
use rmcp::RoleClient;
use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::mcp::{SERVER, bin, sorted_rg_config, workbench};

/// A server on `dir` recording to `record`, started by `command`.
struct Server {
    service: RunningService<RoleClient, Client>,
    client: Client,
    state: tempfile::TempDir,
}

impl Server {
    async fn start(dir: &Path, record: &Path, env: &[(&str, &str)]) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut cmd = SERVER.command(
            dir,
            state.path(),
            &["--config", SAMPLING, "--no-spill", "--record", root(record)],
        );
        cmd.envs(env.iter().copied());
        Self::serve(tokio::process::Command::from(cmd), state).await
    }

    /// The server under `bash -c 'trap "" XFSZ; ulimit -f BLOCKS; exec
    /// workbench mcp …'`: a write past BLOCKS KiB fails part-way with
    /// EFBIG, as on a full disk.
    async fn start_with_file_size_limit(dir: &Path, record: &Path, blocks: u32) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut cmd = tokio::process::Command::new("bash");
        cmd.arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f {blocks}; exec \"$0\" \"$@\""
            ))
            .arg(bin())
            .args(["mcp", "--workdir", root(dir), "--config", SAMPLING])
            .args(["--no-spill", "--record", root(record)])
            .env("XDG_STATE_HOME", state.path())
            .env("TMPDIR", state.path())
            .env("RIPGREP_CONFIG_PATH", sorted_rg_config());
        Self::serve(cmd, state).await
    }

    async fn serve(cmd: tokio::process::Command, state: tempfile::TempDir) -> Self {
        let transport = TokioChildProcess::new(cmd).unwrap();
        let client = Client::default();
        let service = client.clone().serve(transport).await.unwrap();
        Self {
            service,
            client,
            state,
        }
    }

    async fn call(&self, tool: &str, args: Value) -> Value {
        let result = self
            .service
            .peer()
            .call_tool(params(tool, args))
            .await
            .unwrap();
        serde_json::to_value(result).unwrap()
    }

    fn logs(&self) -> Vec<String> {
        self.client
            .logs
            .lock()
            .unwrap()
            .iter()
            .map(|l| l.data.as_str().unwrap_or_default().to_owned())
            .collect()
    }

    fn log_file(&self) -> String {
        logs_in(self.state.path())
    }

    async fn stop(self) -> tempfile::TempDir {
        self.service.cancel().await.unwrap();
        self.state
    }
}

/// The record names of a transcript file, in order.
fn names(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["call"].as_str().map(str::to_owned))
        .collect()
}

fn replays_with(path: &Path, records: usize) {
    let replay = workbench(&["replay", root(path)]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
    let stdout = String::from_utf8_lossy(&replay.stdout);
    assert!(
        stdout.contains(&format!("{records} records match")),
        "{stdout}"
    );
}

fn glob(pattern: &str) -> Value {
    json!({"pattern": pattern})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_servers_sharing_one_recording_keep_record_names_unique() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    let a = Server::start(dir.path(), &record, &[]).await;
    let b = Server::start(dir.path(), &record, &[]).await;
    for (server, pattern) in [(&a, "*.md"), (&b, "*.ts"), (&a, "src/*"), (&b, "docs/*")] {
        server.call("glob", glob(pattern)).await;
    }
    a.stop().await;
    b.stop().await;
    let recorded = names(&record);
    assert_eq!(
        recorded,
        ["call-1-glob", "call-2-glob", "call-3-glob", "call-4-glob"]
    );
    replays_with(&record, 4);
    // A third server starts on the path and goes on numbering.
    let c = Server::start(dir.path(), &record, &[]).await;
    c.call("glob", glob("*")).await;
    c.stop().await;
    assert_eq!(names(&record).last().unwrap(), "call-5-glob");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_holding_duplicate_names_is_appended_to_and_freeze_renames_them() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    let a = Server::start(dir.path(), &record, &[]).await;
    a.call("glob", glob("*.md")).await;
    a.stop().await;
    // What two servers used to write: the same record name twice.
    let text = std::fs::read_to_string(&record).unwrap();
    let record_lines: String = text.lines().skip(1).map(|l| format!("{l}\n")).collect();
    std::fs::write(&record, format!("{text}{record_lines}")).unwrap();
    assert_eq!(names(&record), ["call-1-glob", "call-1-glob"]);

    let b = Server::start(dir.path(), &record, &[]).await;
    b.call("glob", glob("*.ts")).await;
    let state = b.stop().await;
    assert_eq!(
        names(&record),
        ["call-1-glob", "call-1-glob", "call-2-glob"]
    );
    let log = logs_in(state.path());
    assert!(log.contains("duplicate record name"), "{log}");

    let replay = workbench(&["replay", root(&record)]);
    assert_eq!(replay.status.code(), Some(2), "{replay:?}");
    let stderr = String::from_utf8_lossy(&replay.stderr);
    assert!(
        stderr.contains("duplicate record name \"call-1-glob\""),
        "{stderr}"
    );
    assert!(stderr.contains("workbench freeze"), "{stderr}");

    let fixture = tempfile::tempdir().unwrap();
    let frozen = fixture.path().join("t.jsonl");
    let freeze = workbench(&[
        "freeze",
        root(&record),
        "--workdir",
        root(dir.path()),
        "--out",
        root(&frozen),
        "--tree-out",
        root(&fixture.path().join("tree")),
    ]);
    assert_eq!(freeze.status.code(), Some(0), "{freeze:?}");
    let stderr = String::from_utf8_lossy(&freeze.stderr);
    assert!(
        stderr.contains("duplicate record name \"call-1-glob\" renamed to \"call-1-glob-2\""),
        "{stderr}"
    );
    assert_eq!(
        names(&frozen),
        ["call-1-glob", "call-1-glob-2", "call-2-glob"]
    );
    replays_with(&frozen, 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_that_fails_part_way_is_rolled_back_and_the_client_is_told() {
    let dir = tree();
    // A grep whose record is far larger than the 12 KiB the server may write.
    let long = format!("needle {}\n", "x".repeat(300)).repeat(100);
    std::fs::write(dir.path().join("long.txt"), long).unwrap();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    let server = Server::start_with_file_size_limit(dir.path(), &record, 12).await;
    server.call("glob", glob("*.md")).await;
    let big = server
        .call("grep", json!({"pattern": "needle", "path": "long.txt"}))
        .await;
    assert_eq!(big["isError"], false, "{big}");
    // Space "returns": the next, smaller call fits again.
    server.call("glob", glob("*.ts")).await;
    let logs = server.logs();
    server.stop().await;
    assert!(
        logs.iter()
            .any(|l| l.starts_with("call 2 was not recorded: ")),
        "{logs:?}"
    );
    assert_eq!(names(&record), ["call-1-glob", "call-2-glob"]);
    assert!(
        !std::fs::read_to_string(&record)
            .unwrap()
            .contains("long.txt")
    );
    replays_with(&record, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_rotates_before_it_outgrows_its_bound_at_append_and_at_open() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    let bound = [("WORKBENCH_RECORD_MAX_BYTES", "1200")];
    let server = Server::start(dir.path(), &record, &bound).await;
    for pattern in ["*.md", "*.ts", "src/*", "docs/*", "**/*.md", "*"] {
        server.call("glob", glob(pattern)).await;
    }
    let log = server.log_file();
    server.stop().await;
    let first = out.path().join("session.1.jsonl");
    assert!(first.is_file(), "no rotation");
    assert!(log.contains("rotated"), "{log}");
    let mut all = Vec::new();
    let files: Vec<PathBuf> = (1..20)
        .map(|k| out.path().join(format!("session.{k}.jsonl")))
        .filter(|p| p.exists())
        .chain([record.clone()])
        .collect();
    assert!(files.len() >= 2, "{files:?}");
    for file in &files {
        assert!(std::fs::metadata(file).unwrap().len() <= 1200);
        let records = names(file);
        replays_with(file, records.len());
        all.extend(records);
    }
    assert_eq!(all.len(), 6, "{all:?}");

    // At open: the file is already over a lower bound.
    let before = std::fs::read_to_string(&record).unwrap();
    let open_bound = [("WORKBENCH_RECORD_MAX_BYTES", "400")];
    let server = Server::start(dir.path(), &record, &open_bound).await;
    let log = server.log_file();
    server.stop().await;
    assert!(log.contains("rotated"), "{log}");
    let rotated: Vec<PathBuf> = (1..10)
        .map(|k| out.path().join(format!("session.{k}.jsonl")))
        .filter(|p| p.exists())
        .collect();
    let newest = rotated.last().unwrap();
    assert_eq!(std::fs::read_to_string(newest).unwrap(), before);
    assert!(names(&record).is_empty());
    replays_with(&record, 0);
}

/// Waits at most `limit` for `child`; kills it if it is still running.
fn exit_within(mut child: std::process::Child, limit: Duration) -> Option<std::process::Output> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn record_to_a_fifo_is_refused_at_once_over_stdio_and_http() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let fifo = out.path().join("fifo.jsonl");
    mkfifo(&fifo);
    for extra in [&[][..], &["--listen", "127.0.0.1:0"][..]] {
        let state = tempfile::tempdir().unwrap();
        let mut cmd = SERVER.command(
            dir.path(),
            state.path(),
            &["--config", SAMPLING, "--record", root(&fifo)],
        );
        let child = cmd
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let output = exit_within(child, Duration::from_secs(10))
            .unwrap_or_else(|| panic!("--record FIFO {extra:?}: still blocked after 10 s"));
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("not a regular file (a FIFO)"), "{stderr}");
    }
}

/// One recorded call: a glob that matches nothing on any tree (freeze
/// refuses a recording with no calls).
pub(crate) const ONE_CALL: &str = concat!(
    r#"{"call":"none","tool":"glob","args":{"pattern":"*.nothing"},"options":{"spill":"store","session":{"id":"s","cwd":"."},"nested":false}}"#,
    "\n",
    r#"{"result":"none","isError":false,"error":null,"spill":null,"warnings":[]}"#,
    "\n",
    r#"{"text":"No files found"}"#,
    "\n"
);

/// A recording whose header names `tree`, in `dir`, holding [`ONE_CALL`].
fn recording_naming(dir: &Path, tree: &str) -> PathBuf {
    let record = dir.join("rec.jsonl");
    std::fs::write(
        &record,
        format!(
            "{}\n{ONE_CALL}",
            json!({"transcript":"fs-search","version":1,"tree":tree,"config":{"sampleOverCapGlobResults":true},"env":{"rg":"x","ripgrepConfig":[]}})
        ),
    )
    .unwrap();
    record
}

#[test]
fn freeze_walks_a_header_tree_outside_the_recordings_directory_only_when_workdir_names_it() {
    let base = tempfile::tempdir().unwrap();
    let secret = base.path().join("secret");
    std::fs::create_dir(&secret).unwrap();
    std::fs::write(secret.join("key.pem"), "PRIVATE").unwrap();
    let recordings = base.path().join("recordings");
    std::fs::create_dir(&recordings).unwrap();
    let out = tempfile::tempdir().unwrap();
    let freeze = |record: &Path, workdir: Option<&Path>| {
        let mut args = vec!["freeze".to_owned(), root(record).to_owned()];
        if let Some(w) = workdir {
            args.extend(["--workdir".to_owned(), root(w).to_owned()]);
        }
        args.extend([
            "--whole-tree".to_owned(),
            "--out".to_owned(),
            root(&out.path().join("t.jsonl")).to_owned(),
            "--tree-out".to_owned(),
            root(&out.path().join("tree")).to_owned(),
        ]);
        Command::new(bin()).args(&args).output().unwrap()
    };
    for tree in ["../secret", root(&secret)] {
        let record = recording_naming(&recordings, tree);
        let refused = freeze(&record, None);
        assert_eq!(refused.status.code(), Some(2), "{tree}: {refused:?}");
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert!(
            stderr.contains("outside the recording's directory"),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!(
                "--workdir {}",
                root(&secret.canonicalize().unwrap())
            )),
            "{stderr}"
        );
        assert!(!out.path().join("tree").exists());
        assert!(!out.path().join("t.jsonl").exists());
        // Another directory does not confirm it either.
        let wrong = freeze(&record, Some(&recordings));
        assert_eq!(wrong.status.code(), Some(2), "{wrong:?}");
        assert!(!out.path().join("tree").exists());
    }
    let confirmed = freeze(&recording_naming(&recordings, "../secret"), Some(&secret));
    assert_eq!(confirmed.status.code(), Some(0), "{confirmed:?}");
    let manifest = std::fs::read_to_string(out.path().join("tree/manifest.json")).unwrap();
    assert!(manifest.contains("PRIVATE"));
}

#[test]
fn a_refreeze_that_fails_part_way_leaves_the_old_fixture_replaying() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "needle\n").unwrap();
    let record = recording_naming(dir.path(), ".");
    let fixture = tempfile::tempdir().unwrap();
    let (out, tree_out) = (fixture.path().join("t.jsonl"), fixture.path().join("tree"));
    let first = workbench(&[
        "freeze",
        root(&record),
        "--whole-tree",
        "--out",
        root(&out),
        "--tree-out",
        root(&tree_out),
    ]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let manifest = tree_out.join("manifest.json");
    let (old_manifest, old_out) = (
        std::fs::read(&manifest).unwrap(),
        std::fs::read(&out).unwrap(),
    );
    // The workdir grows past what the re-freeze may write (64 KiB).
    std::fs::write(dir.path().join("big.txt"), "y".repeat(200_000)).unwrap();
    let refreeze = Command::new("bash")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 64; exec \"$0\" \"$@\"")
        .arg(bin())
        .args(["freeze", root(&record), "--whole-tree", "--out", root(&out)])
        .args(["--tree-out", root(&tree_out)])
        .output()
        .unwrap();
    assert_eq!(refreeze.status.code(), Some(2), "{refreeze:?}");
    assert!(
        std::fs::read(&manifest).unwrap() == old_manifest,
        "manifest changed"
    );
    assert!(
        std::fs::read(&out).unwrap() == old_out,
        "transcript changed"
    );
    let left: Vec<_> = std::fs::read_dir(&tree_out)
        .unwrap()
        .chain(std::fs::read_dir(fixture.path()).unwrap())
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let mut left = left;
    left.sort();
    assert_eq!(left, ["manifest.json", "t.jsonl", "tree"]);
    replays_with(&out, 1);
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
            ONE_CALL
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
