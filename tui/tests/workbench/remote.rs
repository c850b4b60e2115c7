//! `--executor ssh://…` end to end: the built `workbench` against a real
//! sshd on 127.0.0.1 (started by the test, skipped only when
//! `/usr/sbin/sshd` is missing): every fixture transcript replays without a
//! diff with rg run over ssh, `call` prints what a local call prints, and
//! an unreachable host exits 2 with ssh's reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../engine/src/bash/test_sshd.rs"]
mod test_sshd;

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
    for (tool, call_args) in [
        ("grep", r#"{"pattern":"alpha"}"#),
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
