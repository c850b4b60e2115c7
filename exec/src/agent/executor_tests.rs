//! Agents behind the sandboxed and the remote executor, through the
//! executors themselves: one agent serves run after run, a run the
//! executor ends takes its agent with it, a dead agent is replaced, the
//! environment is the one a run of its own would have, and no output can
//! end a stream early.

use crate::test_run::RunShorthand;
use std::collections::BTreeMap;
use std::path::Path;

use nix::unistd::Pid;

use crate::group::live_members;
use crate::{LocalBashConfig, SandboxBashExecutor, SandboxConfig, SshBashExecutor, SshConfig};
use fs_search_engine::bash::{BashExecutor, BashRequest, BashRunResult, CappedRun, OverCap};
use fs_search_test_support::sshd::{HOST, TestSshd};

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
            runner: crate::Runner::Bwrap,
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
    exec.whole(spec).await.unwrap()
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
    let ran = exec.capped(spec, OverCap::Stop).await.unwrap();
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

// ----------------------------------------------- what a local run carries

fn local(root: &Path) -> crate::LocalBashExecutor {
    crate::LocalBashExecutor::new(LocalBashConfig {
        cwd: Some(root.to_string_lossy().into_owned()),
        ..LocalBashConfig::default()
    })
    .unwrap()
}

/// A run's outcome as the comparison needs it: its exit and output, or
/// the error's words.
async fn outcome(
    exec: &dyn BashExecutor,
    command: &str,
    env: &[(&str, &str)],
) -> Result<(Option<i32>, bool, String), String> {
    let env = (!env.is_empty()).then(|| {
        env.iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    });
    let spec = exec
        .resolve(BashRequest {
            command: command.into(),
            env,
            // A run that hung would end here, as a timed-out result: not
            // the local executor's error.
            timeout_ms: Some(20_000),
            ..BashRequest::default()
        })
        .map_err(|e| e.to_string())?;
    exec.whole(spec)
        .await
        .map(|out| (out.exit_code, out.timed_out, out.stdout.text))
        .map_err(|e| e.to_string())
}

/// What an input is, its command and its variables.
type RefusedInput = (&'static str, String, Vec<(&'static str, String)>);

/// Inputs a local spawn refuses before bash runs: a NUL in the command or
/// in a variable, one argument over 128 KiB (the 200 KB pattern of a
/// grep), and an environment over the whole list's limit.
fn refused_inputs() -> Vec<RefusedInput> {
    let big = "x".repeat(100_000);
    vec![
        ("a NUL in the command", "echo 'a\0b'".to_owned(), vec![]),
        (
            "a NUL in a variable",
            "echo ok".to_owned(),
            vec![("V", "a\0b".to_owned())],
        ),
        (
            "a 200 KB argument",
            format!("# {}", "p".repeat(200_000)),
            vec![],
        ),
        (
            "7 MB of environment",
            "echo ok".to_owned(),
            NAMES.iter().map(|name| (*name, big.clone())).collect(),
        ),
    ]
}

/// Seventy variable names.
const NAMES: [&str; 70] = [
    "B00", "B01", "B02", "B03", "B04", "B05", "B06", "B07", "B08", "B09", "B10", "B11", "B12",
    "B13", "B14", "B15", "B16", "B17", "B18", "B19", "B20", "B21", "B22", "B23", "B24", "B25",
    "B26", "B27", "B28", "B29", "B30", "B31", "B32", "B33", "B34", "B35", "B36", "B37", "B38",
    "B39", "B40", "B41", "B42", "B43", "B44", "B45", "B46", "B47", "B48", "B49", "B50", "B51",
    "B52", "B53", "B54", "B55", "B56", "B57", "B58", "B59", "B60", "B61", "B62", "B63", "B64",
    "B65", "B66", "B67", "B68", "B69",
];

async fn assert_refused_as_locally(exec: &dyn BashExecutor, root: &Path, label: &str) {
    let local = local(root);
    for (what, command, env) in refused_inputs() {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let here = outcome(&local, &command, &env).await;
        assert!(here.is_err(), "{what}: the local executor ran it: {here:?}");
        let there = outcome(exec, &command, &env).await;
        assert_eq!(there, here, "{label}: {what}");
    }
    // The agent is still in step: the next run is answered.
    assert_eq!(
        outcome(exec, "echo next", &[]).await,
        Ok((Some(0), false, "next\n".to_owned())),
        "{label}"
    );
}

#[tokio::test]
async fn a_nul_or_an_argument_list_over_the_limit_fails_in_the_sandbox_as_it_does_locally() {
    let root = tempfile::tempdir().unwrap();
    assert_refused_as_locally(&sandbox(root.path(), false), root.path(), "agent").await;
    assert_refused_as_locally(&sandbox(root.path(), true), root.path(), "one-shot").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nul_or_an_argument_list_over_the_limit_fails_over_ssh_as_it_does_locally() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    assert_refused_as_locally(&ssh(&sshd, root.path()), root.path(), "ssh").await;
}

/// A sandbox whose executor's environment sets `LC_ALL` to `lc_all`.
fn sandbox_with_lc_all(root: &Path, one_shot: bool, lc_all: &str) -> SandboxBashExecutor {
    SandboxBashExecutor::new(
        LocalBashConfig {
            cwd: Some(root.to_string_lossy().into_owned()),
            env: BTreeMap::from([("LC_ALL".to_owned(), lc_all.to_owned())]),
            ..LocalBashConfig::default()
        },
        SandboxConfig {
            one_shot,
            ..SandboxConfig::default()
        },
    )
    .unwrap()
}

const SHOW_LC_ALL: &str = "echo \"${LC_ALL-unset}\"";

#[tokio::test]
async fn the_sandboxs_agents_pass_lc_all_on_as_a_sandbox_of_its_own_does() {
    let root = tempfile::tempdir().unwrap();
    let agents = sandbox_with_lc_all(root.path(), false, "C.UTF-8");
    let one_shot = sandbox_with_lc_all(root.path(), true, "C.UTF-8");
    let by_agent = run(&agents, SHOW_LC_ALL).await.stdout.text;
    assert_eq!(by_agent, run(&one_shot, SHOW_LC_ALL).await.stdout.text);
    assert_eq!(by_agent, "C.UTF-8\n");
    // Without it (unless the tests' own environment has one): as alone.
    let agents = sandbox(root.path(), false);
    let one_shot = sandbox(root.path(), true);
    let by_agent = run(&agents, SHOW_LC_ALL).await.stdout.text;
    assert_eq!(by_agent, run(&one_shot, SHOW_LC_ALL).await.stdout.text);
    if std::env::var_os("LC_ALL").is_none() {
        assert_eq!(by_agent, "unset\n");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_ssh_an_lc_all_the_login_sets_reaches_the_command_as_in_a_session_of_its_own() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    // The client asks the host to set LC_ALL in the login's environment.
    let config = root.path().join("ssh_config");
    let mut text = std::fs::read_to_string(sshd.client_config()).unwrap();
    text.push_str("  SetEnv LC_ALL=C.UTF-8\n");
    std::fs::write(&config, text).unwrap();
    let over = |config: std::path::PathBuf| {
        SshBashExecutor::new(
            LocalBashConfig {
                cwd: Some(root.path().to_string_lossy().into_owned()),
                ..LocalBashConfig::default()
            },
            SshConfig {
                config_file: Some(config),
                ..SshConfig::new(format!("ssh://{HOST}").parse().unwrap())
            },
        )
        .unwrap()
    };
    // With the login's LC_ALL the command has it; without, it has not.
    let set = run(&over(config), SHOW_LC_ALL).await;
    assert_eq!(set.stdout.text, "C.UTF-8\n", "{set:?}");
    let unset = run(&over(sshd.client_config()), SHOW_LC_ALL).await;
    assert_ne!(unset.stdout.text, "C.UTF-8\n", "{unset:?}");
}

// ------------------------------------------------- inherited descriptors

/// Lists the command's open descriptors from 3 up without `/proc`: bash's
/// `read -u N` names each closed one (no redirection, which would open a
/// descriptor of its own).
const LIST_DESCRIPTORS: &str =
    "exec 2>&1; for fd in {3..1023}; do read -t 0 -u $fd; done; echo listed";

/// The descriptors from 3 up the listing found open.
fn open_descriptors(out: &BashRunResult) -> Vec<u32> {
    assert!(out.stdout.text.ends_with("listed\n"), "{out:?}");
    let closed: std::collections::BTreeSet<u32> = out
        .stdout
        .text
        .lines()
        .filter_map(|line| {
            let (_, rest) = line.split_once("read: ")?;
            let (fd, said) = rest.split_once(": ")?;
            said.starts_with("invalid file descriptor")
                .then(|| fd.parse().ok())
                .flatten()
        })
        .collect();
    (3..=1023).filter(|fd| !closed.contains(fd)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_descriptor_of_this_process_reaches_a_command_under_any_executor() {
    let root = tempfile::tempdir().unwrap();
    let sshd = TestSshd::start();
    // A descriptor without close-on-exec, as one inherited from whatever
    // started the process is; made before the executors start their
    // agents.
    let file = std::fs::File::open(root.path()).unwrap();
    let leaky = nix::unistd::dup(&file).unwrap();
    let mut executors: Vec<(&str, Box<dyn BashExecutor>)> = vec![
        ("local", Box::new(local(root.path()))),
        ("sandbox agent", Box::new(sandbox(root.path(), false))),
        ("sandbox one-shot", Box::new(sandbox(root.path(), true))),
    ];
    if let Some(sshd) = &sshd {
        executors.push(("ssh", Box::new(ssh(sshd, root.path()))));
    }
    for (label, exec) in &executors {
        // About 60 bytes a closed descriptor: over the default budget.
        let spec = exec
            .resolve(BashRequest {
                command: LIST_DESCRIPTORS.into(),
                stdout_max_bytes: Some(1 << 20),
                ..BashRequest::default()
            })
            .unwrap();
        let out = exec.whole(spec).await.unwrap();
        assert_eq!(open_descriptors(&out), Vec::<u32>::new(), "{label}");
    }
    drop(leaky);
}
