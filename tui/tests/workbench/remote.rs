//! `--executor ssh://…` end to end: the built `workbench` against a real
//! sshd on 127.0.0.1 (started by the test, skipped only when
//! `/usr/sbin/sshd` is missing): every fixture transcript replays without a
//! diff with rg run over ssh, `call` prints what a local call prints, and
//! an unreachable host exits 2 with ssh's reason, and a call ended by
//! SIGTERM of the workbench or by its MCP client hanging up leaves nothing
//! running on the host.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../engine/src/bash/test_sshd.rs"]
pub(crate) mod test_sshd;

use test_sshd::{HOST, TestSshd};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn workbench(args: &[&str], sshd: Option<&TestSshd>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_workbench"));
    command.args(args).current_dir(repo());
    if let Some(sshd) = sshd {
        command.env("WORKBENCH_SSH_CONFIG", sshd.client_config());
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn executor() -> String {
    format!("ssh://{HOST}")
}

#[test]
fn every_fixture_transcript_replays_without_a_diff_over_ssh() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let mut files: Vec<String> = std::fs::read_dir(repo().join("fixtures/transcripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| {
            p.strip_prefix(repo())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    let executor = executor();
    let mut args = vec!["replay", "--executor", executor.as_str()];
    args.extend(files.iter().map(String::as_str));
    let out = workbench(&args, Some(&sshd));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    for file in &files {
        assert!(
            text(&out.stdout).contains(&format!("ok {file}: ")),
            "{file}"
        );
    }
}

#[test]
fn a_call_over_ssh_prints_what_a_local_call_prints() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("src")).unwrap();
    std::fs::write(
        work.path().join("src/a.rs"),
        "fn alpha() {}\nfn beta() {}\n",
    )
    .unwrap();
    std::fs::write(work.path().join("notes.md"), "alpha notes\n").unwrap();
    let workdir = work.path().to_str().unwrap();
    let config = r#"{"sampleOverCapGlobResults":true}"#;
    let executor = executor();
    // One matching file per call: rg's order across files is its threads'
    // (no sorted config reaches the host), the same within a file.
    for (tool, call_args) in [
        ("grep", r#"{"pattern":"fn alpha"}"#),
        ("glob", r#"{"pattern":"**/*.rs"}"#),
    ] {
        let local = [
            "call",
            tool,
            "--workdir",
            workdir,
            "--config",
            config,
            "--args",
            call_args,
            "--no-spill",
        ];
        let mut remote = local.to_vec();
        remote.extend(["--executor", executor.as_str()]);
        let (local, remote) = (workbench(&local, None), workbench(&remote, Some(&sshd)));
        assert_eq!(remote.status.code(), Some(0), "{}", text(&remote.stderr));
        assert_eq!(text(&remote.stdout), text(&local.stdout), "{tool}");
        assert!(
            text(&local.stdout).contains("src/a.rs"),
            "{}",
            text(&local.stdout)
        );
    }
}

#[test]
fn an_unreachable_host_exits_2_with_ssh_s_reason() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let executor = format!("ssh://127.0.0.1:{port}");
    let out = workbench(
        &[
            "call",
            "grep",
            "--workdir",
            "/srv/work",
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--args",
            r#"{"pattern":"x"}"#,
            "--executor",
            &executor,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "the ssh executor cannot start: cannot reach {executor}: ssh: connect to host 127.0.0.1 port {port}: Connection refused"
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "");
}

/// The processes of this machine (the test's host) whose working
/// directory is `dir`, with their names: what a call in `dir` runs there.
fn running_in(dir: &Path) -> Vec<(i32, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let state = stat[stat.rfind(')')? + 2..].chars().next()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            (cwd == dir && state != 'Z').then(|| (pid, comm.trim().to_owned()))
        })
        .collect()
}

/// A workdir with a FIFO, on which rg blocks until the call is ended.
fn fifo_workdir() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let status = Command::new("mkfifo")
        .arg(work.path().join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    work
}

/// Runs `workbench ARGS` over ssh, waits until its rg runs on the host
/// in `work`, applies `end` to the child, and checks that it exits with
/// `code` and that nothing it ran is left on the host.
fn end_a_call_blocked_over_ssh(
    args: &[&str],
    work: &Path,
    stdin_lines: &[&str],
    end: impl FnOnce(&mut std::process::Child),
    code: i32,
) {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    // The master's control directory goes to TMPDIR: nothing may be left.
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .current_dir(repo())
        .env("WORKBENCH_SSH_CONFIG", sshd.client_config())
        .env("TMPDIR", tmp.path())
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        for line in stdin_lines {
            writeln!(stdin, "{line}").unwrap();
        }
        stdin.flush().unwrap();
    }
    let start = std::time::Instant::now();
    while !running_in(work).iter().any(|(_, name)| name == "rg") {
        if start.elapsed() > std::time::Duration::from_secs(30)
            || child.try_wait().unwrap().is_some()
        {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "no rg on the host in 30 s: {}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    end(&mut child);
    let status = child.wait().unwrap();
    // Within the executor's grace, nothing of the call is left on the host.
    let mut left = running_in(work);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        left = running_in(work);
    }
    for (pid, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert_eq!(left, Vec::new());
    assert_eq!(status.code(), Some(code), "{status:?}");
    let files: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, Vec::<std::ffi::OsString>::new(), "left in TMPDIR");
}

#[test]
fn sigterm_of_a_call_over_ssh_leaves_nothing_running_on_the_host() {
    let work = fifo_workdir();
    let workdir = work.path().to_str().unwrap();
    let executor = executor();
    let args = [
        "call",
        "grep",
        "--workdir",
        workdir,
        "--config",
        r#"{"sampleOverCapGlobResults":true}"#,
        "--args",
        r#"{"pattern":"x","path":"fifo"}"#,
        "--executor",
        &executor,
    ];
    end_a_call_blocked_over_ssh(
        &args,
        work.path(),
        &[],
        |child| {
            let pid = child.id().to_string();
            assert!(
                Command::new("kill")
                    .args(["-TERM", &pid])
                    .status()
                    .unwrap()
                    .success()
            );
        },
        143,
    );
}

#[test]
fn an_mcp_client_that_hangs_up_over_ssh_leaves_nothing_running_on_the_host() {
    let work = fifo_workdir();
    let workdir = work.path().to_str().unwrap();
    let executor = executor();
    let args = [
        "mcp",
        "--workdir",
        workdir,
        "--config",
        r#"{"sampleOverCapGlobResults":true}"#,
        "--executor",
        &executor,
    ];
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hangup","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"x","path":"fifo"}}}"#,
    ];
    // The client goes as hosts end stdio servers: its end of stdin closes.
    end_a_call_blocked_over_ssh(
        &args,
        work.path(),
        &lines,
        |child| drop(child.stdin.take()),
        0,
    );
}

#[test]
fn surface_json_over_ssh_names_the_executor_and_the_host_s_rg_not_this_machine_s() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    // This process's PATH finds a fake rg first; the host's sessions get
    // the test's own PATH (test_sshd.rs), and so the real rg.
    let fake = tempfile::tempdir().unwrap();
    let fake_rg = fake.path().join("rg");
    std::fs::write(&fake_rg, "#!/bin/sh\necho 'ripgrep 99.0.0'\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake_rg, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        fake.path().display(),
        std::env::var("PATH").unwrap()
    );
    let real = Command::new("rg").arg("--version").output().unwrap();
    let real_version = text(&real.stdout)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_owned();
    let real_path = text(
        &Command::new("bash")
            .args(["-c", "command -v rg"])
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_owned();
    let surface = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args([
                "surface",
                "--json",
                "--config",
                r#"{"sampleOverCapGlobResults":true}"#,
            ])
            .args(extra)
            .env("PATH", &path)
            .env("WORKBENCH_SSH_CONFIG", sshd.client_config())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let executor = executor();
    let remote = surface(&["--executor", &executor]);
    assert_eq!(remote["executor"], executor.as_str());
    assert_eq!(remote["rg"]["version"], real_version.as_str());
    assert_eq!(remote["rg"]["path"], real_path.as_str());
    let local = surface(&[]);
    assert_eq!(local["executor"], "local");
    assert_eq!(local["rg"]["version"], "99.0.0");
}
