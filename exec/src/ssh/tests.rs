//! The remote executor against a real sshd on 127.0.0.1 (`fs_search_test_support::sshd`):
//! the host is this machine, so the tests look at its processes directly.

use crate::test_run::RunShorthand;
use std::collections::BTreeMap;

use tokio_util::sync::CancellationToken;

use fs_search_test_support::sshd::{HOST, TestSshd};
use std::path::Path;

use super::*;
use fs_search_engine::bash::{BashExecutor, BashRequest};

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
    exec.whole(exec.resolve(request(command)).unwrap())
        .await
        .unwrap()
}

/// Shell words writing the command's process group id (on the host) to
/// the file named next.
const GROUP_TO_FILE: &str = "read -r _ _ _ _ g _ < /proc/$$/stat; echo $g >";

/// Waits until the command has written its group id to `pid_file`.
async fn group_written(pid_file: &Path) {
    while std::fs::read_to_string(pid_file)
        .unwrap_or_default()
        .trim()
        .is_empty()
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A command that writes its group id to `DIR/pgid` (returned) and
/// sleeps 30 s, resolved by `exec`.
fn sleeping_group(exec: &SshBashExecutor, dir: &Path) -> (PathBuf, BashSpec) {
    let pid_file = dir.join("pgid");
    let command = format!("{GROUP_TO_FILE} '{}'; exec sleep 30", pid_file.display());
    let spec = exec.resolve(request(&command)).unwrap();
    (pid_file, spec)
}

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
    let out = exec.whole(spec).await.unwrap();
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
        exec.whole(spec).await.unwrap_err().to_string(),
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
        // Long enough for the session to start on a loaded machine: the
        // test is of the kill path of a command that runs.
        spec.timeout_ms = 4000;
    }
    let watcher = async {
        if let Some(token) = cancel {
            group_written(&pid_file).await;
            token.cancel();
        }
    };
    let (out, ()) = tokio::join!(exec.whole(spec), watcher);
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
    let (pid_file, spec) = sleeping_group(&exec, work.path());
    let dropper = async {
        group_written(&pid_file).await;
        sshd.stop();
    };
    let started = std::time::Instant::now();
    let (out, ()) = tokio::join!(exec.whole(spec), dropper);
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
    // The connection is gone; the host's watchdog ends the command and
    // removes its run's file.
    let pgid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(group_alive(pgid), Vec::<i32>::new());
}

/// The pids of this machine's processes running `sleep SECONDS`.
fn sleeping(seconds: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let argv = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let argv: Vec<&[u8]> = argv.split(|&b| b == 0).collect();
            (argv.len() >= 2 && argv[0].ends_with(b"sleep") && argv[1] == seconds.as_bytes())
                .then_some(pid)
        })
        .collect()
}

/// `sleeping(seconds)` once it is empty, or after 5 s.
fn sleeping_after_settle(seconds: &str) -> Vec<i32> {
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let left = sleeping(seconds);
        if left.is_empty() || std::time::Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_cancelled_before_it_started_on_the_host_never_runs_there() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(&sshd, work.path(), LocalBashConfig::default());
    // A duration no other test sleeps names this test's commands.
    let seconds = "971";
    // From a cancel before ssh has even connected its session to one after
    // the command started: each must leave nothing running.
    for delay_ms in [0, 1, 2, 5, 10, 20, 40, 80, 160, 320] {
        let token = CancellationToken::new();
        let mut spec = exec.resolve(request(&format!("sleep {seconds}"))).unwrap();
        spec.signal = Some(token.clone());
        let canceller = async {
            tokio::time::sleep(Duration::from_millis(delay_ms)).await;
            token.cancel();
        };
        let (out, ()) = tokio::join!(exec.whole(spec), canceller);
        let out = out.unwrap();
        assert!(out.aborted, "{delay_ms} ms: {out:?}");
        assert_eq!(
            sleeping_after_settle(seconds),
            Vec::<i32>::new(),
            "{delay_ms} ms"
        );
    }
    drop(exec);
    assert_eq!(sleeping(seconds), Vec::<i32>::new());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_call_and_then_its_executor_leave_nothing_on_the_host() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(&sshd, work.path(), LocalBashConfig::default());
    let (pid_file, spec) = sleeping_group(&exec, work.path());
    let started = async {
        group_written(&pid_file).await;
    };
    // The run's future is dropped once the command runs, as a quitting
    // TUI drops it; the executor goes at once after (its master with it).
    tokio::select! {
        _ = exec.whole(spec) => panic!("the command ended by itself"),
        () = started => {}
    }
    drop(exec);
    let pgid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(group_alive(pgid), Vec::<i32>::new());
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

/// The ssh processes of this machine whose command line names `needle`
/// (a control directory): the master and any session over it.
fn ssh_processes_naming(needle: &str) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            (cmdline.starts_with("ssh ") || cmdline.contains("/ssh "))
                .then_some(())
                .filter(|()| cmdline.contains(needle))
                .map(|()| pid)
        })
        .collect()
}

#[test]
fn the_control_directory_and_its_files_are_private_and_the_master_ends_with_the_executor() {
    use std::os::unix::fs::PermissionsExt;
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(&sshd, work.path(), LocalBashConfig::default());
    let dir = exec.launcher.master.dir.path().to_path_buf();
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700, "{}", dir.display());
    for file in ["m", "log"] {
        assert_eq!(mode(&dir.join(file)), 0o600, "{file}");
    }
    let needle = dir.to_string_lossy().into_owned();
    assert!(!ssh_processes_naming(&needle).is_empty());
    drop(exec);
    // `ssh -O exit` returns once the master has the request; the master
    // process ends just after (not a child of ours to wait for).
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !ssh_processes_naming(&needle).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(ssh_processes_naming(&needle), Vec::<i32>::new());
    assert!(!dir.exists());
}

#[test]
fn a_master_left_without_its_executor_ends_by_itself_within_seconds() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(&sshd, work.path(), LocalBashConfig::default());
    let needle = exec
        .launcher
        .master
        .dir
        .path()
        .to_string_lossy()
        .into_owned();
    let sessions = || {
        ssh_processes_naming(&needle)
            .into_iter()
            .filter(|pid| {
                let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                String::from_utf8_lossy(&cmdline).contains("ControlMaster=no")
            })
            .collect::<Vec<_>>()
    };
    // The keeper and the warm agent.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while sessions().len() < 2 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let sessions = sessions();
    assert_eq!(sessions.len(), 2, "{sessions:?}");
    // As when this process is killed: no drop runs, and the sessions'
    // clients go.
    std::mem::forget(exec);
    for pid in sessions {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
    let deadline =
        std::time::Instant::now() + Duration::from_secs(u64::from(CONTROL_PERSIST_S) + 5);
    while !ssh_processes_naming(&needle).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(ssh_processes_naming(&needle), Vec::<i32>::new());
    // The forgotten executor's control directory (a later start removes
    // such a one, tested below; this test leaves nothing behind).
    let _ = std::fs::remove_dir_all(&needle);
}

#[test]
fn a_missing_workdir_on_the_host_is_refused_at_start_naming_host_and_directory() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("missing");
    let err = SshBashExecutor::new(
        LocalBashConfig {
            cwd: Some(missing.to_string_lossy().into_owned()),
            ..LocalBashConfig::default()
        },
        SshConfig {
            config_file: Some(sshd.client_config()),
            ..SshConfig::new(target())
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the working directory {} does not exist on ssh://wbtest (or is not a directory)",
            missing.display()
        )
    );
}

fn sandboxed(sshd: &TestSshd, workdir: &Path) -> Result<SshBashExecutor, SshError> {
    SshBashExecutor::new(
        LocalBashConfig {
            cwd: Some(workdir.to_string_lossy().into_owned()),
            ..LocalBashConfig::default()
        },
        SshConfig {
            config_file: Some(sshd.client_config()),
            sandbox: true,
            ..SshConfig::new(target())
        },
    )
}

#[tokio::test]
async fn the_sandbox_on_the_host_shows_the_workdir_and_not_a_canary_next_to_it_nor_another_environment()
 {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let parent = tempfile::tempdir().unwrap();
    let work = parent.path().join("work");
    std::fs::create_dir(&work).unwrap();
    std::fs::write(work.join("a.txt"), "inside CANARY\n").unwrap();
    std::fs::write(parent.path().join("canary.txt"), "CANARY\n").unwrap();
    let exec = sandboxed(&sshd, &work).unwrap();
    assert!(exec.sandboxed());
    let out = run(
        &exec,
        "pwd; rg -l CANARY; rg -l CANARY .. /; \
         for f in /proc/[0-9]*/environ; do while IFS= read -r -d '' v; do case $v in WB_*|DSH_*) echo leak;; esac; done < $f; done; echo env-checked; rg --files --sort=modified; \
         : > b.txt 2>/dev/null || echo read-only; compgen -e | while read -r n; do printf '%s ' \"$n\"; done",
    )
    .await;
    let text = &out.stdout.text;
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], work.to_str().unwrap(), "{text}");
    assert_eq!(lines[1], "a.txt", "{text}");
    // The canary's parent is there (the workdir's), the canary is not.
    let hits: Vec<&str> = lines
        .iter()
        .filter(|l| l.contains("canary"))
        .copied()
        .collect();
    assert_eq!(hits, Vec::<&str>::new(), "{text}");
    // The sandbox's own /proc (rg's --sort reads /proc/self/exe): its PID
    // namespace holds only the sandbox's processes, none with the login
    // environment's other variables.
    assert!(
        text.contains("env-checked") && !text.contains("leak"),
        "{text}"
    );
    // rg's sorted walk (glob's newest-first page) runs there.
    assert!(text.contains("env-checked\na.txt\n"), "{text}");
    assert!(text.contains("read-only"), "{text}");
    // The host's login environment held WB_PLAIN, WB_API_KEY and
    // DSH_HOST (fs_search_test_support::sshd): none passes the allowlist.
    let names = lines.last().unwrap();
    for absent in [
        "WB_PLAIN",
        "WB_API_KEY",
        "DSH_HOST",
        "HOME",
        "USER",
        "SSH_CONNECTION",
    ] {
        assert!(
            !names.split(' ').any(|n| n == absent),
            "{absent} in {names}"
        );
    }
    assert!(names.split(' ').any(|n| n == "PATH"), "{names}");
}

#[tokio::test]
async fn a_sandboxed_call_outside_the_root_fails_as_a_missing_workdir() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = sandboxed(&sshd, work.path()).unwrap();
    let mut spec = exec.resolve(request("true")).unwrap();
    spec.workdir = format!("{}/..", work.path().display());
    assert_eq!(
        exec.whole(spec).await.unwrap_err().to_string(),
        "spawn bash ENOENT"
    );
}

/// Fault injection: the host's sessions get a PATH holding bash and cat
/// alone, so no bubblewrap is found there.
#[test]
fn a_host_without_bubblewrap_on_its_path_is_refused_fault_injected_path() {
    let bin = tempfile::tempdir().unwrap();
    for program in ["bash", "cat"] {
        let found =
            super::super::shell::find_program_on_path(program, std::env::var_os("PATH").as_deref())
                .unwrap();
        std::os::unix::fs::symlink(found, bin.path().join(program)).unwrap();
    }
    let Some(sshd) = TestSshd::start_with_path(bin.path().to_str()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let err = sandboxed(&sshd, work.path()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "the sandbox on ssh://wbtest needs bubblewrap there, and `bwrap` is not on its PATH (install it on ssh://wbtest: apt-get install bubblewrap)"
    );
}

#[test]
fn control_directories_a_killed_workbench_left_are_removed_and_live_or_young_ones_kept() {
    let parent = tempfile::tempdir().unwrap();
    let make = |name: &str, socket: bool| {
        let dir = parent.path().join(name);
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("log"), "").unwrap();
        if socket {
            std::os::unix::net::UnixListener::bind(dir.join("m")).unwrap();
        }
        dir
    };
    let stale = make("fs-ssh-stale", false);
    let live = make("fs-ssh-live", true);
    let other = make("not-ours", false);
    // Older than any age: everything is old enough at age zero.
    remove_stale_dirs(parent.path(), Duration::ZERO);
    assert!(!stale.exists());
    assert!(live.exists());
    assert!(other.exists());
    // Young: kept.
    let young = make("fs-ssh-young", false);
    remove_stale_dirs(parent.path(), Duration::from_secs(3600));
    assert!(young.exists());
}

/// An rc.8 subprocess run of `argv`, resolved by `exec`.
fn subprocess_spec(exec: &SshBashExecutor, argv: &[&str], stderr_max_bytes: u64) -> BashSpec {
    exec.resolve(BashRequest {
        command: argv.join(" "),
        argv: Some(argv.iter().map(|a| (*a).to_owned()).collect()),
        subprocess: Some(fs_search_engine::bash::SubprocessRun {
            grace_ms: 300,
            stderr_max_bytes,
        }),
        ..BashRequest::default()
    })
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rc8_subprocess_run_execs_its_argv_on_the_host_with_rc8_s_environment() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(
        &sshd,
        work.path(),
        LocalBashConfig {
            env: BTreeMap::from([("WB_CONFIGURED".to_owned(), "c".to_owned())]),
            ..LocalBashConfig::default()
        },
    );
    let argv = ["printf", "%s|", "$(touch x)", "a b", "it's", "-"];
    let out = exec
        .whole(subprocess_spec(&exec, &argv, 100))
        .await
        .unwrap();
    assert_eq!(
        (out.exit_code, out.stdout.text.as_str()),
        (Some(0), "$(touch x)|a b|it's|-|")
    );
    assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 0);
    let mut spec = subprocess_spec(&exec, &["env"], 100);
    spec.dsh_env = Some(BTreeMap::from([("DSH_GIVEN".to_owned(), "g".to_owned())]));
    let out = exec.whole(spec).await.unwrap();
    let env: BTreeMap<&str, &str> = (out.stdout.text.lines())
        .filter_map(|line| line.split_once('='))
        .collect();
    for gone in [
        "NO_COLOR",
        "TERM",
        "PAGER",
        "GIT_PAGER",
        "DSH_HOST",
        "WB_API_KEY",
    ] {
        assert!(!env.contains_key(gone), "{gone}: {env:?}");
    }
    for (name, value) in [
        ("WB_PLAIN", "kept"),
        ("WB_CONFIGURED", "c"),
        ("DSH_GIVEN", "g"),
    ] {
        assert_eq!(env.get(name).copied(), Some(value), "{name}");
    }
    let out = exec
        .whole(subprocess_spec(
            &exec,
            &["readlink", "/proc/self/fd/0"],
            100,
        ))
        .await
        .unwrap();
    assert_eq!(out.stdout.text, "/dev/null\n");
    let argv = ["sh", "-c", "printf 0123 >&2; printf 456789 >&2"];
    let out = exec.whole(subprocess_spec(&exec, &argv, 5)).await.unwrap();
    assert_eq!(
        (
            out.stderr.text.as_str(),
            out.stderr.truncated,
            out.stderr.spill_path
        ),
        ("56789", true, None)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rc8_abort_on_the_host_kills_a_term_ignoring_command_after_the_grace() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let exec = executor(&sshd, work.path(), LocalBashConfig::default());
    let pid_file = work.path().join("pgid");
    let script = format!(
        "{GROUP_TO_FILE} '{}'; trap '' TERM; exec sleep 30",
        pid_file.display()
    );
    let token = CancellationToken::new();
    let mut spec = subprocess_spec(&exec, &["bash", "-c", &script], 100);
    // No executor deadline: the request's timeout does not apply.
    spec.timeout_ms = 50;
    spec.signal = Some(token.clone());
    let watcher = async {
        group_written(&pid_file).await;
        token.cancel();
        std::time::Instant::now()
    };
    let (out, cancelled) = tokio::join!(exec.whole(spec), watcher);
    let out = out.unwrap();
    let took = cancelled.elapsed();
    assert!(out.aborted && !out.timed_out, "{out:?}");
    assert_eq!(out.signal.as_deref(), Some("SIGKILL"));
    assert!(took >= Duration::from_millis(300), "{took:?}");
    let pgid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(group_alive(pgid), Vec::<i32>::new());
}

/// The host-side script of an rc.8 run (real bash, variables of its own
/// given to it here): every `DSH_` name in any case is dropped, then the
/// run's variables are set, then the argv is exec'd as it is.
#[test]
fn the_host_side_subprocess_script_drops_dsh_names_in_any_case_then_sets_the_run_s() {
    let argv = subprocess_argv(
        vec![
            (OsString::from("DSH_GIVEN"), OsString::from("g")),
            (OsString::from("WB_SET"), OsString::from("a b'c")),
        ],
        &["env".to_owned()],
    );
    let out = std::process::Command::new(&argv[0])
        .args(&argv[1..])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("dsh_lower", "leak")
        .env("Dsh_Mixed", "leak")
        .env("DSH_UPPER", "leak")
        .env("WB_PLAIN", "kept")
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let env: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once('=')).collect();
    for gone in ["dsh_lower", "Dsh_Mixed", "DSH_UPPER"] {
        assert!(!env.contains_key(gone), "{gone}: {text}");
    }
    for (name, value) in [
        ("DSH_GIVEN", "g"),
        ("WB_SET", "a b'c"),
        ("WB_PLAIN", "kept"),
    ] {
        assert_eq!(env.get(name).copied(), Some(value), "{name}: {text}");
    }
}
