//! `--sandbox[=RUNNER]` with the built `workbench`, real bwrap, Landlock,
//! bash and rg: every fixture transcript replays identically under each
//! runner (the differential check), a call reads only its workspace and
//! no variable of the workbench outside the allowlist, a missing
//! bubblewrap stops every front end asked for it at start with exit 2 and
//! the package to install while `auto` falls back to Landlock, `mcp
//! --listen` on a non-loopback address sandboxes by default and says so,
//! and a recording names its executor and runner.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::cli_headless::{SAMPLING, call, root, stderr, stdout, tree};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_workbench"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn every_fixture_transcript_replays_without_a_diff_under_each_runner() {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("fixtures/transcripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    for flag in ["--sandbox=bwrap", "--sandbox=landlock"] {
        let out = bin()
            .arg("replay")
            .arg(flag)
            .args(&files)
            .current_dir(repo())
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{flag}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        for file in &files {
            assert!(
                stdout(&out).contains(&format!("ok {file}: ")),
                "{flag} {file}"
            );
        }
    }
}

/// The workbench started with a database URL and a password-like name in
/// its environment: the local executor's rg reads them in its own
/// `/proc/self/environ`, no sandboxed one does.
#[test]
fn proc_self_environ_holds_no_variable_outside_the_allowlist_under_each_runner() {
    let dir = tree();
    let args = r#"{"pattern":"postgres|SOME_PASS|PATH=","path":"/proc/self/environ"}"#;
    let run = |flag: Option<&str>| {
        let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args([
                "call",
                "grep",
                "--workdir",
                root(dir.path()),
                "--args",
                args,
            ])
            .args(["--config", SAMPLING, "--no-spill"])
            .args(flag)
            .env("DATABASE_URL", "postgres://u:pw@h/db")
            .env("SOME_PASS", "x")
            .output()
            .unwrap();
        stdout(&out)
    };
    let local = run(None);
    assert!(
        local.contains("postgres://u:pw@h/db") && local.contains("SOME_PASS"),
        "{local}"
    );
    let bwrap = run(Some("--sandbox=bwrap"));
    assert!(
        bwrap.contains("PATH="),
        "the sandbox's own environ reads: {bwrap}"
    );
    let landlock = run(Some("--sandbox=landlock"));
    assert!(landlock.contains("Permission denied"), "{landlock}");
    for page in [bwrap, landlock] {
        assert!(
            !page.contains("postgres") && !page.contains("SOME_PASS"),
            "{page}"
        );
    }
}

#[test]
fn a_sandboxed_call_reads_the_workspace_as_a_local_one_and_nothing_outside_it() {
    let dir = tree();
    let args = r#"{"pattern":"alpha"}"#;
    let local = call(&dir, "grep", args, &["--config", SAMPLING, "--no-spill"]);
    let sandboxed = call(
        &dir,
        "grep",
        args,
        &["--config", SAMPLING, "--no-spill", "--sandbox"],
    );
    assert_eq!(sandboxed.status.code(), Some(0), "{sandboxed:?}");
    assert_eq!(stdout(&sandboxed), stdout(&local));
    let etc = call(
        &dir,
        "grep",
        r#"{"pattern":"root","path":"/etc"}"#,
        &["--config", SAMPLING, "--no-spill", "--sandbox"],
    );
    // rg's own words for a missing path: `/etc: No such file …` (rg
    // 13), `rg: /etc: IO error for operation on /etc: No such file …`
    // (14, 15).
    let said = stdout(&etc);
    assert!(
        said.starts_with("Error: grep search failed (exit 2): ")
            && said.contains("/etc: ")
            && said.ends_with("No such file or directory (os error 2)")
            && !said.contains("root:"),
        "{said}"
    );
}

/// A directory holding only `bash` and `rg` (links to the real ones): a
/// `PATH` without bubblewrap.
fn path_without_bwrap() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let path = std::env::var_os("PATH").unwrap();
    for name in ["bash", "rg"] {
        let found = std::env::split_paths(&path)
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .unwrap();
        std::os::unix::fs::symlink(found, dir.path().join(name)).unwrap();
    }
    dir
}

fn without_bwrap(args: &[&str], bin_dir: &Path, state: &Path) -> Output {
    bin()
        .args(args)
        .env("PATH", bin_dir)
        .env("XDG_STATE_HOME", state)
        .env("XDG_CACHE_HOME", state)
        .env("WORKBENCH_MCP_TOKEN", "test-token-0123456789")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn without_bubblewrap_every_front_end_asked_for_it_exits_2_at_start_naming_the_package() {
    let dir = tree();
    let bin_dir = path_without_bwrap();
    let state = tempfile::tempdir().unwrap();
    let workdir = root(dir.path());
    let runs: [&[&str]; 4] = [
        &[
            "call",
            "glob",
            "--workdir",
            workdir,
            "--args",
            "{\"pattern\":\"*\"}",
            "--config",
            SAMPLING,
            "--sandbox=bwrap",
        ],
        &[
            "explain",
            "glob",
            "--workdir",
            workdir,
            "--args",
            "{\"pattern\":\"*\"}",
            "--config",
            SAMPLING,
            "--sandbox=bwrap",
            "notes.md",
        ],
        &[
            "mcp",
            "--workdir",
            workdir,
            "--config",
            SAMPLING,
            "--sandbox=bwrap",
        ],
        &[
            "--workdir",
            workdir,
            "--config",
            SAMPLING,
            "--sandbox=bwrap",
        ],
    ];
    for args in runs {
        let out = without_bwrap(args, bin_dir.path(), state.path());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        let said = stderr(&out);
        assert!(
            said.contains("`bwrap` is not on PATH (install it: apt-get install bubblewrap)"),
            "{args:?}: {said}"
        );
        assert!(
            stdout(&out).is_empty(),
            "{args:?}: nothing ran: {}",
            stdout(&out)
        );
    }
}

/// Fault injection: no bubblewrap on `PATH`, as where it cannot start;
/// `auto` confines with Landlock, and the page is the local one.
#[test]
fn fault_without_bubblewrap_auto_falls_back_to_landlock() {
    let dir = tree();
    let bin_dir = path_without_bwrap();
    let state = tempfile::tempdir().unwrap();
    let workdir = root(dir.path());
    let local = call(
        &dir,
        "grep",
        r#"{"pattern":"alpha"}"#,
        &["--config", SAMPLING, "--no-spill"],
    );
    let grep = |args: &str| {
        without_bwrap(
            &[
                "call",
                "grep",
                "--workdir",
                workdir,
                "--args",
                args,
                "--config",
                SAMPLING,
                "--no-spill",
                "--sandbox",
            ],
            bin_dir.path(),
            state.path(),
        )
    };
    let inside = grep(r#"{"pattern":"alpha"}"#);
    assert_eq!(inside.status.code(), Some(0), "{inside:?}");
    assert_eq!(stdout(&inside), stdout(&local));
    let etc = grep(r#"{"pattern":"root","path":"/etc"}"#);
    assert!(
        stdout(&etc).contains("Permission denied"),
        "{}",
        stdout(&etc)
    );
}

/// The first stderr line of `workbench mcp --listen ADDR EXTRA…`, then
/// the server is stopped.
fn start_line(dir: &Path, listen: &str, extra: &[&str]) -> Vec<String> {
    let state = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args([
            "mcp",
            "--workdir",
            root(dir),
            "--config",
            SAMPLING,
            "--no-spill",
        ])
        .args(["--listen", listen])
        .args(extra)
        .env("WORKBENCH_MCP_TOKEN", "test-token-0123456789")
        .env("XDG_STATE_HOME", state.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    while !lines
        .last()
        .is_some_and(|l: &String| l.contains("listening on"))
    {
        let mut line = String::new();
        assert!(stderr.read_line(&mut line).unwrap() > 0, "{lines:?}");
        lines.push(line.trim_end().to_owned());
    }
    child.kill().unwrap();
    child.wait().unwrap();
    lines
}

#[test]
fn mcp_listen_beyond_loopback_sandboxes_by_default_and_says_so() {
    let dir = tree();
    let lines = start_line(dir.path(), "0.0.0.0:0", &[]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].ends_with("/mcp (sandboxed by bwrap: only the workspace (read-only) and the files bash and rg run from are readable; the default on a non-loopback address, --no-sandbox turns it off)"),
        "{lines:?}"
    );
    let lines = start_line(dir.path(), "0.0.0.0:0", &["--no-sandbox"]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].starts_with("workbench mcp: warning: --no-sandbox on 0.0.0.0:0: every client"),
        "{lines:?}"
    );
    assert!(lines[1].ends_with("/mcp"), "{lines:?}");
    let lines = start_line(dir.path(), "127.0.0.1:0", &[]);
    assert!(
        lines[0].ends_with("/mcp"),
        "loopback stays local: {lines:?}"
    );
    for runner in ["bwrap", "landlock"] {
        let lines = start_line(dir.path(), "127.0.0.1:0", &[&format!("--sandbox={runner}")]);
        assert!(
            lines[0].ends_with(&format!("/mcp (sandboxed by {runner}: only the workspace (read-only) and the files bash and rg run from are readable)")),
            "{lines:?}"
        );
    }
}

#[test]
fn a_recording_names_its_executor_in_its_header() {
    let dir = tree();
    let out_dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    for (flag, expected) in [
        (None, "local"),
        (Some("--sandbox"), "sandbox-bwrap"),
        (Some("--sandbox=landlock"), "sandbox-landlock"),
    ] {
        let record = out_dir.path().join(format!("{expected}.jsonl"));
        let out = bin()
            .args([
                "mcp",
                "--workdir",
                root(dir.path()),
                "--config",
                SAMPLING,
                "--no-spill",
            ])
            .args(["--record", root(&record)])
            .args(flag)
            .env("XDG_STATE_HOME", state.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let header: serde_json::Value = serde_json::from_str(
            std::fs::read_to_string(&record)
                .unwrap()
                .lines()
                .next()
                .unwrap(),
        )
        .unwrap();
        assert_eq!(header["env"]["executor"], expected, "{header}");
        // The workbench reads its own header back.
        let replay = bin().args(["replay", root(&record)]).output().unwrap();
        assert_eq!(replay.status.code(), Some(0), "{replay:?}");
    }
}
