//! Agents behind the sandboxed and the remote executor, through the
//! executors themselves: one agent serves run after run, a run the
//! executor ends takes its agent with it, a dead agent is replaced, the
//! environment is the one a run of its own would have, and no output can
//! end a stream early.

use std::collections::BTreeMap;
use std::path::Path;

use nix::unistd::Pid;

use crate::bash::group::live_members;
use crate::bash::test_sshd::{HOST, TestSshd};
use crate::bash::{
    BashExecutor, BashRequest, BashRunResult, CappedRun, LocalBashConfig, OverCap,
    SandboxBashExecutor, SandboxConfig, SshBashExecutor, SshConfig,
};

/// A bubblewrap sandbox of `root` that also shows `/usr/bin` (the
/// coreutils these tests run: the sandbox holds only bash, rg, `sleep`
/// and `env` of its own).
fn sandbox(root: &Path, one_shot: bool) -> SandboxBashExecutor {
    SandboxBashExecutor::new(
        LocalBashConfig {
            cwd: Some(root.to_string_lossy().into_owned()),
            env: BTreeMap::from([("FROM_CONFIG".to_owned(), "c".to_owned())]),
            ..LocalBashConfig::default()
        },
        SandboxConfig {
            runner: crate::bash::Runner::Bwrap,
            read_only: vec!["/usr/bin".into()],
            one_shot,
            ..SandboxConfig::default()
        },
    )
    .unwrap()
}

fn ssh(sshd: &TestSshd, root: &Path) -> SshBashExecutor {
    SshBashExecutor::new(
        LocalBashConfig {
            cwd: Some(root.to_string_lossy().into_owned()),
            ..LocalBashConfig::default()
        },
        SshConfig {
            config_file: Some(sshd.client_config()),
            ..SshConfig::new(format!("ssh://{HOST}").parse().unwrap())
        },
    )
    .unwrap()
}

async fn run_with(
    exec: &dyn BashExecutor,
    command: &str,
    env: &[(&str, &str)],
    timeout_ms: Option<u64>,
) -> BashRunResult {
    let env = (!env.is_empty()).then(|| {
        env.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    });
    let spec = exec
        .resolve(BashRequest {
            command: command.into(),
            env,
            timeout_ms,
            ..BashRequest::default()
        })
        .unwrap();
    exec.run(spec).await.unwrap()
}

async fn run(exec: &dyn BashExecutor, command: &str) -> BashRunResult {
    run_with(exec, command, &[], None).await
}

/// The process id of the agent that ran the command (its parent).
async fn agent_of(exec: &dyn BashExecutor) -> String {
    let out = run(exec, "echo $PPID").await;
    assert_eq!(out.exit_code, Some(0), "{out:?}");
    out.stdout.text
}

#[tokio::test]
async fn one_agent_runs_command_after_command_and_a_run_the_executor_ends_takes_it_along() {
    let root = tempfile::tempdir().unwrap();
    let exec = sandbox(root.path(), false);
    let first = agent_of(&exec).await;
    assert_eq!(agent_of(&exec).await, first);
    assert_eq!(agent_of(&exec).await, first);

    let out = run_with(&exec, "exec sleep 30", &[], Some(300)).await;
    assert!(out.timed_out, "{out:?}");
    assert_eq!(out.signal.as_deref(), Some("SIGTERM"));
    let next = agent_of(&exec).await;
    assert!(!next.is_empty());
    assert_eq!(agent_of(&exec).await, next);
}

#[tokio::test]
async fn a_run_whose_agent_dies_fails_and_the_next_run_gets_a_new_agent() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a.txt"), "inside\n").unwrap();
    let exec = sandbox(root.path(), false);
    let out = run(&exec, "kill -KILL $PPID; sleep 5").await;
    // bubblewrap reports its child's death by SIGKILL as exit 137.
    assert_eq!(
        (out.exit_code, out.signal.as_deref()),
        (None, Some("SIGKILL")),
        "{out:?}"
    );
    let out = run(&exec, "cat a.txt").await;
    assert_eq!(
        (out.exit_code, out.stdout.text.as_str()),
        (Some(0), "inside\n")
    );
}

#[tokio::test]
async fn a_command_sees_the_environment_a_sandbox_of_its_own_gives_it() {
    let root = tempfile::tempdir().unwrap();
    let agents = sandbox(root.path(), false);
    let one_shot = sandbox(root.path(), true);
    // A configured variable, a request's own, one overriding the
    // configuration, and a name bash cannot export (left to `env`).
    for env in [
        vec![],
        vec![("FROM_REQUEST", "r'\n$x"), ("FROM_CONFIG", "overridden")],
        vec![("not.a.name", "1"), ("HOME", "/elsewhere")],
    ] {
        let command = "env | sort; echo $SHLVL $PWD";
        let by_agent = run_with(&agents, command, &env, None).await;
        let alone = run_with(&one_shot, command, &env, None).await;
        assert_eq!(by_agent.stdout.text, alone.stdout.text, "{env:?}");
        assert_eq!(by_agent.exit_code, Some(0));
        for (name, value) in &env {
            let printed = run_with(&agents, &format!("printenv '{name}'"), &env, None).await;
            assert_eq!(printed.stdout.text, format!("{value}\n"), "{name}");
        }
    }
}

#[tokio::test]
async fn output_that_looks_like_the_end_of_a_run_is_output() {
    let root = tempfile::tempdir().unwrap();
    let exec = sandbox(root.path(), false);
    let fake = "fs-search-end-00000000000000000000000000000000";
    let out = run(
        &exec,
        &format!("printf '{fake} 0\\nafter'; printf '{fake}' >&2; exit 3"),
    )
    .await;
    assert_eq!(out.stdout.text, format!("{fake} 0\nafter"));
    assert_eq!(out.stderr.text, fake);
    assert_eq!(out.exit_code, Some(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_ssh_one_agent_session_runs_command_after_command() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let exec = ssh(&sshd, root.path());
    let first = agent_of(&exec).await;
    assert_eq!(agent_of(&exec).await, first);
    let out = run_with(&exec, "exec sleep 30", &[], Some(300)).await;
    assert!(out.timed_out, "{out:?}");
    let next = agent_of(&exec).await;
    assert_ne!(next, first);
    assert_eq!(agent_of(&exec).await, next);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_ssh_a_stdout_cap_stop_ends_the_command_on_the_host() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    let exec = ssh(&sshd, root.path());
    let pid_file = root.path().join("pgid");
    let command = format!(
        "read -r _ _ _ _ g _ < /proc/$$/stat; echo $g > '{}'; yes",
        pid_file.display()
    );
    let mut spec = exec
        .resolve(BashRequest {
            command,
            stdout_max_bytes: Some(100_000),
            ..BashRequest::default()
        })
        .unwrap();
    spec.timeout_ms = 20_000;
    let ran = exec.run_capped(spec, OverCap::Stop).await.unwrap();
    assert!(matches!(ran, CappedRun::StdoutOverCap));
    let pgid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // The agent's `kill` reaches the host before the call returns; the
    // group is gone at once, or within moments of its last member's exit.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    let mut alive = live_members(Pid::from_raw(pgid));
    while !alive.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        alive = live_members(Pid::from_raw(pgid));
    }
    assert_eq!(alive, Vec::<i32>::new());
}
