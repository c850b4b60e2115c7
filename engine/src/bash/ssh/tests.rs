//! The remote executor against a real sshd on 127.0.0.1 (`test_sshd.rs`):
//! the host is this machine, so the tests look at its processes directly.

use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use super::super::test_sshd::{HOST, TestSshd};
use std::path::Path;

use super::*;

fn target() -> SshTarget {
    format!("ssh://{HOST}").parse().unwrap()
}

fn executor(sshd: &TestSshd, workdir: &Path, config: LocalBashConfig) -> SshBashExecutor {
    SshBashExecutor::new(
        LocalBashConfig {
            cwd: Some(workdir.to_string_lossy().into_owned()),
            ..config
        },
        SshConfig {
            config_file: Some(sshd.client_config()),
            ..SshConfig::new(target())
        },
    )
    .unwrap()
}

fn request(command: &str) -> BashRequest {
    BashRequest {
        command: command.into(),
        ..BashRequest::default()
    }
}

async fn run(exec: &SshBashExecutor, command: &str) -> BashRunResult {
    exec.run(exec.resolve(request(command)).unwrap())
        .await
        .unwrap()
}

/// Shell words writing the command's process group id (on the host) to
/// the file named next.
const GROUP_TO_FILE: &str = "read -r _ _ _ _ g _ < /proc/$$/stat; echo $g >";

/// Whether any process of group `pgid` is alive (not a zombie).
/// The members of group `pgid` still alive after up to 5 s: the remote
/// kill ends with SIGKILL, and a member may still be exiting when the
/// call has returned.
fn group_alive(pgid: i32) -> Vec<i32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let alive = super::super::group::live_members(nix::unistd::Pid::from_raw(pgid));
        if alive.is_empty() || std::time::Instant::now() > deadline {
            return alive;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn targets_parse_as_ssh_urls_and_print_back() {
    for (raw, user, host, port) in [
        ("ssh://box", None, "box", None),
        (
            "ssh://me@box.example:2222",
            Some("me"),
            "box.example",
            Some(2222),
        ),
        ("ssh://[::1]:22", None, "::1", Some(22)),
    ] {
        let target: SshTarget = raw.parse().unwrap();
        assert_eq!(
            (target.user.as_deref(), target.host.as_str(), target.port),
            (user, host, port)
        );
        assert_eq!(target.to_string(), raw);
    }
    for bad in [
        "box",
        "ssh://",
        "ssh://box:0",
        "ssh://box:x",
        "ssh://-oProxyCommand=x",
        "ssh://box/dir",
        "ssh://a b",
    ] {
        assert_eq!(
            bad.parse::<SshTarget>().unwrap_err().to_string(),
            format!("{bad:?} is not ssh://[USER@]HOST[:PORT]")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_runs_on_the_host_in_the_workdir_with_the_environment_scrubbed_there() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(
        &sshd,
        work.path(),
        LocalBashConfig {
            env: BTreeMap::from([("WB_CONFIGURED".to_owned(), "yes it's set".to_owned())]),
            ..LocalBashConfig::default()
        },
    );
    let mut spec = exec
        .resolve(request(
            "pwd; printf '%s|' \"$0\" \"$TERM\" \"$NO_COLOR\" \"$WB_CONFIGURED\" \"$WB_REQUEST\" \"${WB_API_KEY-scrubbed}\" \"${DSH_HOST-scrubbed}\" \"$WB_PLAIN\" \"${SSH_CONNECTION:+over-ssh}\"",
        ))
        .unwrap();
    spec.env = Some(BTreeMap::from([("WB_REQUEST".to_owned(), "r".to_owned())]));
    let out = exec.run(spec).await.unwrap();
    assert_eq!(
        out.stdout.text,
        format!(
            "{}\nbash|dumb|1|yes it's set|r|scrubbed|scrubbed|kept|over-ssh|",
            work.path().display()
        )
    );
    assert_eq!((out.exit_code, out.stderr.text.as_str()), (Some(0), ""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exits_signals_and_a_missing_workdir_read_as_the_local_executor_reports_them() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(&sshd, work.path(), LocalBashConfig::default());
    let out = run(&exec, "echo out; echo err >&2; exit 3").await;
    assert_eq!(
        (
            out.exit_code,
            out.stdout.text.as_str(),
            out.stderr.text.as_str()
        ),
        (Some(3), "out\n", "err\n")
    );
    let killed = run(&exec, "kill -SEGV $$").await;
    assert_eq!(
        (killed.exit_code, killed.signal.as_deref()),
        (None, Some("SIGSEGV"))
    );
    let mut spec = exec.resolve(request("true")).unwrap();
    spec.workdir = work.path().join("missing").to_string_lossy().into_owned();
    assert_eq!(
        exec.run(spec).await.unwrap_err().to_string(),
        "spawn bash ENOENT"
    );
}

/// Runs a command that writes its group id to a file and leaves a
/// TERM-proof child, ended by `end` (a timeout or a cancel); returns the
/// result and the group id on the host.
async fn killed_run(
    exec: &SshBashExecutor,
    dir: &Path,
    cancel: Option<CancellationToken>,
) -> (BashRunResult, i32) {
    let pid_file = dir.join("pgid");
    let command = format!(
        "{GROUP_TO_FILE} '{}'; (trap '' TERM; exec sleep 30) & rg --files /nonexistent-dir-for-wb 2>/dev/null; sleep 30",
        pid_file.display()
    );
    let mut spec = exec.resolve(request(&command)).unwrap();
    spec.signal = cancel.clone();
    if cancel.is_none() {
        spec.timeout_ms = 1500;
    }
    let watcher = async {
        if let Some(token) = cancel {
            while std::fs::read_to_string(&pid_file)
                .unwrap_or_default()
                .trim()
                .is_empty()
            {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // Known open defect: a cancel that arrives before this side
            // has read the group line on stderr ends only the local ssh
            // client, and the remote group runs on. The pgid file is
            // written after that line is sent, so give the line time to
            // arrive; this test proves the kill path once the group is
            // known, not the early-cancel race (docs/workbench.md).
            tokio::time::sleep(Duration::from_millis(500)).await;
            token.cancel();
        }
    };
    let (out, ()) = tokio::join!(exec.run(spec), watcher);
    let pgid = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    (out.unwrap(), pgid)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timed_out_or_cancelled_call_leaves_nothing_of_its_group_on_the_host() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(
        &sshd,
        work.path(),
        LocalBashConfig {
            grace_ms: 300,
            ..LocalBashConfig::default()
        },
    );
    let (out, pgid) = killed_run(&exec, work.path(), None).await;
    assert!(out.timed_out && !out.aborted, "{out:?}");
    // The TERM-proof child needed SIGKILL.
    assert_eq!(
        (out.exit_code, out.signal.as_deref()),
        (None, Some("SIGKILL"))
    );
    assert_eq!(group_alive(pgid), Vec::<i32>::new());

    let (out, pgid) = killed_run(&exec, work.path(), Some(CancellationToken::new())).await;
    assert!(out.aborted && !out.timed_out, "{out:?}");
    assert_eq!(group_alive(pgid), Vec::<i32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_dropped_during_a_call_fails_it_naming_the_host() {
    let Some(mut sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(&sshd, work.path(), LocalBashConfig::default());
    let pid_file = work.path().join("pgid");
    let command = format!("{GROUP_TO_FILE} '{}'; exec sleep 30", pid_file.display());
    let spec = exec.resolve(request(&command)).unwrap();
    let dropper = async {
        while std::fs::read_to_string(&pid_file)
            .unwrap_or_default()
            .trim()
            .is_empty()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        sshd.stop();
    };
    let started = std::time::Instant::now();
    let (out, ()) = tokio::join!(exec.run(spec), dropper);
    let out = out.unwrap();
    assert!(started.elapsed() < Duration::from_secs(20));
    assert_eq!(out.exit_code, Some(255), "{out:?}");
    assert!(
        out.stderr
            .text
            .ends_with(&format!("ssh {}: exit 255\n", target())),
        "{:?}",
        out.stderr.text
    );
    // The connection is gone, and with it the way to end the command: a
    // real drop leaves it too (docs/workbench.md). The test's own cleanup.
    let pgid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let _ = nix::sys::signal::killpg(
        nix::unistd::Pid::from_raw(pgid),
        nix::sys::signal::Signal::SIGKILL,
    );
}

#[test]
fn an_unreachable_host_is_refused_with_ssh_s_reason() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let target: SshTarget = format!("ssh://127.0.0.1:{port}").parse().unwrap();
    let err = SshBashExecutor::new(
        LocalBashConfig {
            cwd: Some("/".to_owned()),
            ..LocalBashConfig::default()
        },
        SshConfig {
            config_file: Some(PathBuf::from("/dev/null")),
            ..SshConfig::new(target)
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "cannot reach ssh://127.0.0.1:{port}: ssh: connect to host 127.0.0.1 port {port}: Connection refused"
        )
    );
}

#[test]
fn a_relative_workdir_is_refused_before_connecting() {
    let err = SshBashExecutor::new(
        LocalBashConfig {
            cwd: Some("work".to_owned()),
            ..LocalBashConfig::default()
        },
        SshConfig::new(target()),
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the working directory on ssh://wbtest must be an absolute path, not \"work\""
    );
}
