//! The files the workbench is told to read: `--tokenizer`
//! and `--token-file` refuse a FIFO at once and a device unread,
//! `surface --against` names its own flag, and a token file other users
//! can read is warned about on stderr. Every run is bounded: a command
//! that blocks is killed and the test fails instead of hanging the suite.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SAMPLING: &str = r#"{"sampleOverCapGlobResults":true}"#;
/// What "at once" allows a refusal on a loaded, shared machine.
const AT_ONCE: Duration = Duration::from_secs(10);

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A small tree to search, a FIFO `fifo` (no writer ever opens it) and a
/// private state dir for logs, all in one temp dir.
fn scene() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tree")).unwrap();
    std::fs::write(dir.path().join("tree/a.txt"), "alpha\n").unwrap();
    let fifo = dir.path().join("fifo");
    nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
    (dir, fifo)
}

/// Runs `workbench ARGS` in `dir` with `stdin`; fails the test (after
/// killing the process) when it has not ended within [`AT_ONCE`].
fn run_at_once(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .current_dir(dir)
        .env("XDG_STATE_HOME", dir.join("state"))
        .env("TMPDIR", dir)
        .env_remove("WORKBENCH_MCP_TOKEN")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    input.write_all(stdin.as_bytes()).unwrap();
    drop(input);
    let deadline = Instant::now() + AT_ONCE;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            child.kill().unwrap();
            let out = child.wait_with_output().unwrap();
            panic!(
                "workbench {args:?} still ran after {AT_ONCE:?}; stderr: {}",
                text(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// The fixture transcript replayed by the `replay` cases.
fn fixture_transcript() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/transcripts/line-previews.jsonl")
}

/// Each command that takes `--tokenizer`, with `file` as its tokenizer:
/// (the command's name, its arguments, its stdin, its stderr prefix).
fn tokenizer_commands(dir: &Path, file: &str) -> Vec<(&'static str, Vec<String>, &'static str)> {
    let tree = path_str(&dir.join("tree")).to_owned();
    let out = path_str(&dir.join("out.jsonl")).to_owned();
    let transcript = path_str(&fixture_transcript()).to_owned();
    let owned = |args: &[&str]| args.iter().map(|a| (*a).to_owned()).collect::<Vec<_>>();
    vec![
        (
            "call",
            owned(&[
                "call",
                "glob",
                "--workdir",
                &tree,
                "--args",
                r#"{"pattern":"*"}"#,
                "--config",
                SAMPLING,
                "--json",
                "--tokens",
                "--tokenizer",
                file,
            ]),
            "",
        ),
        (
            "surface",
            owned(&[
                "surface",
                "--config",
                SAMPLING,
                "--tokens",
                "--tokenizer",
                file,
            ]),
            "",
        ),
        (
            "replay",
            owned(&[
                "replay",
                "--max-tokens",
                "1000",
                "--tokenizer",
                file,
                &transcript,
            ]),
            "",
        ),
        (
            "record",
            owned(&[
                "record",
                "--tree",
                &tree,
                "--config",
                SAMPLING,
                "--out",
                &out,
                "--tokenizer",
                file,
            ]),
            "{\"call\":\"a\",\"tool\":\"glob\",\"args\":{\"pattern\":\"*\"}}\n",
        ),
    ]
}

fn stderr_prefix(command: &str) -> &'static str {
    match command {
        "replay" => "workbench replay: ",
        "record" => "workbench record: ",
        _ => "workbench: ",
    }
}

#[test]
fn a_fifo_or_dev_zero_as_tokenizer_is_refused_at_once_with_exit_2_by_every_command() {
    let (dir, fifo) = scene();
    let fifo = path_str(&fifo).to_owned();
    for (file, problem) in [
        (fifo.as_str(), "not a regular file (a FIFO)"),
        ("/dev/zero", "not a regular file (a character device)"),
    ] {
        for (command, args, stdin) in tokenizer_commands(dir.path(), file) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = run_at_once(dir.path(), &args, stdin);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{command} --tokenizer {file}: {}",
                text(&out.stderr)
            );
            assert_eq!(
                text(&out.stderr),
                format!(
                    "{}--tokenizer: cannot read tokenizer file {file}: {problem}\n",
                    stderr_prefix(command)
                ),
                "{command} --tokenizer {file}"
            );
        }
        assert!(
            !dir.path().join("out.jsonl").exists(),
            "record wrote no transcript"
        );
    }
}

/// `workbench mcp --listen 127.0.0.1:0 --token-file FILE`.
fn mcp_with_token_file(dir: &Path, file: &str) -> Vec<String> {
    [
        "mcp",
        "--workdir",
        path_str(&dir.join("tree")),
        "--config",
        SAMPLING,
        "--listen",
        "127.0.0.1:0",
        "--token-file",
        file,
    ]
    .iter()
    .map(|a| (*a).to_owned())
    .collect()
}

#[test]
fn a_fifo_dev_zero_or_oversized_token_file_is_refused_at_once_with_exit_2() {
    let (dir, fifo) = scene();
    let big = dir.path().join("big-token");
    std::fs::write(&big, "t".repeat(64 * 1024 + 1)).unwrap();
    for (file, problem) in [
        (path_str(&fifo), "not a regular file (a FIFO)"),
        ("/dev/zero", "not a regular file (a character device)"),
        (path_str(&big), "larger than the limit of 65536 bytes"),
    ] {
        let args = mcp_with_token_file(dir.path(), file);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let out = run_at_once(dir.path(), &args, "");
        assert_eq!(out.status.code(), Some(2), "{file}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            format!("workbench mcp: --token-file {file}: {problem}\n")
        );
    }
}

#[test]
fn a_token_file_readable_by_other_users_is_warned_about_on_stderr() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, _fifo) = scene();
    let token = dir.path().join("token");
    std::fs::write(&token, "secret-token-0123456789\n").unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(mcp_with_token_file(dir.path(), path_str(&token)))
        .env("XDG_STATE_HOME", dir.path().join("state"))
        .env("TMPDIR", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Killed if it blocks: read_line would then end at EOF.
    let pid = child.id();
    let guard = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(20));
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    });
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut warning = String::new();
    stderr.read_line(&mut warning).unwrap();
    let mut listening = String::new();
    stderr.read_line(&mut listening).unwrap();
    child.kill().unwrap();
    child.wait().unwrap();
    drop(guard);
    assert_eq!(
        warning,
        format!(
            "workbench mcp: warning: --token-file {}: readable by other users (chmod 600 it)\n",
            token.display()
        )
    );
    assert!(
        listening.starts_with("workbench mcp: listening on http://127.0.0.1:"),
        "{listening}"
    );
}

#[test]
fn surface_against_names_the_against_flag_for_errors_in_its_config() {
    let (dir, fifo) = scene();
    let missing = dir.path().join("missing.json");
    let bad_json = dir.path().join("bad.json");
    std::fs::write(&bad_json, "{not json").unwrap();
    let at = |p: &Path| format!("@{}", p.display());
    for (against, expected) in [
        (
            at(&missing),
            format!(
                "workbench: --against: cannot read {}: No such file or directory (os error 2)\n",
                missing.display()
            ),
        ),
        (
            at(&fifo),
            format!(
                "workbench: --against: cannot read {}: not a regular file (a FIFO)\n",
                fifo.display()
            ),
        ),
        (
            at(&bad_json),
            "workbench: --against is not valid JSON: key must be a string at line 1 column 2\n"
                .to_owned(),
        ),
        (
            "{}".to_owned(),
            "workbench: --against: tool-fs-search: config.sampleOverCapGlobResults is required (true or false)\n"
                .to_owned(),
        ),
    ] {
        let out = run_at_once(
            dir.path(),
            &["surface", "--config", SAMPLING, "--against", &against],
            "",
        );
        assert_eq!(out.status.code(), Some(2), "{against}");
        assert_eq!(text(&out.stderr), expected, "--against {against}");
    }
    // --config's own errors still name --config.
    let out = run_at_once(
        dir.path(),
        &["surface", "--config", &at(&missing), "--against", SAMPLING],
        "",
    );
    assert_eq!(
        text(&out.stderr),
        format!(
            "workbench: --config: cannot read {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
}

#[test]
fn record_out_to_a_fifo_with_no_reader_is_refused_at_once_with_exit_2() {
    let (dir, fifo) = scene();
    let tree = dir.path().join("tree");
    let out = run_at_once(
        dir.path(),
        &[
            "record",
            "--tree",
            path_str(&tree),
            "--config",
            SAMPLING,
            "--out",
            path_str(&fifo),
        ],
        "{\"call\":\"a\",\"tool\":\"glob\",\"args\":{\"pattern\":\"*\"}}\n",
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stderr),
        format!(
            "workbench record: {}: a FIFO with no reader\n",
            fifo.display()
        )
    );
}
