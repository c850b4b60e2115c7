//! The 0.1.0-rc.8 subprocess run on the local executor (`BashSpec::
//! subprocess`): the argv spawned exactly and without a shell, stdin from
//! /dev/null, rc.8's environment (the any-case scrub, no overlay), the
//! byte-exact stderr tail, no deadline, the abort's SIGTERM then SIGKILL
//! after the grace, the drain after exit bounded by the grace, spawn
//! failures, and the rg resolved once per executor. Real programs, real
//! files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use fs_search_engine::bash::{
    BashError, BashExecutor, BashRequest, BashRunResult, BashSpec, CappedRun, OverCap, RunMode,
    SubprocessRun,
};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
use tokio_util::sync::CancellationToken;

const RUN: SubprocessRun = SubprocessRun {
    grace_ms: 300,
    stderr_max_bytes: 65_536,
};

fn executor(config: LocalBashConfig) -> LocalBashExecutor {
    LocalBashExecutor::new(config).unwrap()
}

/// The spec of an rc.8 run of `argv` in `workdir`.
fn spec(exec: &LocalBashExecutor, argv: &[&str], workdir: &Path, run: SubprocessRun) -> BashSpec {
    exec.resolve(BashRequest {
        command: argv.join(" "),
        argv: Some(argv.iter().map(|a| (*a).to_owned()).collect()),
        subprocess: Some(run),
        workdir: Some(workdir.display().to_string()),
        ..BashRequest::default()
    })
    .unwrap()
}

async fn whole(exec: &LocalBashExecutor, spec: BashSpec) -> Result<BashRunResult, BashError> {
    match exec.run(spec, RunMode::whole()).await?.run {
        CappedRun::Finished(result) => Ok(result),
        CappedRun::StdoutOverCap => panic!("an uncapped run stopped at the cap"),
    }
}

#[tokio::test]
async fn the_argv_runs_exactly_as_given_with_no_shell_between() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig::default());
    let argv = ["printf", "%s|", "$(touch x)", "a b", "'q'", "-", "*"];
    let out = whole(&exec, spec(&exec, &argv, dir.path(), RUN))
        .await
        .unwrap();
    assert_eq!(out.exit_code, Some(0));
    assert_eq!(out.stdout.text, "$(touch x)|a b|'q'|-|*|");
    // Nothing expanded the substitution.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    // bash would have exported its working directory as PWD; the child
    // has this process's PWD (or none), never the run's.
    let out = whole(&exec, spec(&exec, &["env"], dir.path(), RUN))
        .await
        .unwrap();
    let pwd = out
        .stdout
        .text
        .lines()
        .find_map(|line| line.strip_prefix("PWD="))
        .map(str::to_owned);
    assert_eq!(pwd, std::env::var("PWD").ok());
    // The child's parent is this process: no shell in between.
    let out = whole(
        &exec,
        spec(&exec, &["cat", "/proc/self/stat"], dir.path(), RUN),
    )
    .await
    .unwrap();
    let after_comm = out.stdout.text.rsplit_once(')').unwrap().1.to_owned();
    let ppid: u32 = after_comm
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(ppid, std::process::id());
}

#[tokio::test]
async fn stdin_is_dev_null_even_when_the_request_has_some() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig::default());
    let mut s = spec(&exec, &["readlink", "/proc/self/fd/0"], dir.path(), RUN);
    s.stdin = Some("typed".to_owned());
    let out = whole(&exec, s).await.unwrap();
    assert_eq!(out.stdout.text, "/dev/null\n");
}

/// Set in the re-run of this test binary that checks the environment.
const ENV_CHILD: &str = "FS_SEARCH_EXEC_SUBPROCESS_ENV_CHILD";

/// The scrub runs on this process's own variables, which a test cannot
/// set (no `unsafe`): the test binary runs itself again with them set.
#[test]
fn the_environment_is_scrubbed_in_any_case_and_has_no_overlay() {
    if std::env::var_os(ENV_CHILD).is_none() {
        let name = "the_environment_is_scrubbed_in_any_case_and_has_no_overlay";
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([name, "--exact", "--nocapture", "--test-threads=1"])
            .env(ENV_CHILD, "1")
            .env("dsh_lower", "gone")
            .env("DSH_UPPER", "gone")
            .env("Dsh_Mixed", "gone")
            .env("my_api_key", "gone")
            .env("Session_Token", "gone")
            .env("KEPT_PLAIN", "kept")
            .env_remove("NO_COLOR")
            .env_remove("TERM")
            .env_remove("PAGER")
            .env_remove("GIT_PAGER")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let dir = tempfile::tempdir().unwrap();
        let exec = executor(LocalBashConfig {
            env: BTreeMap::from([("FROM_CONFIG".to_owned(), "config".to_owned())]),
            ..LocalBashConfig::default()
        });
        let mut s = spec(&exec, &["env"], dir.path(), RUN);
        s.env = Some(BTreeMap::from([(
            "FROM_REQUEST".to_owned(),
            "req".to_owned(),
        )]));
        s.dsh_env = Some(BTreeMap::from([("DSH_GIVEN".to_owned(), "dsh".to_owned())]));
        let out = whole(&exec, s).await.unwrap();
        let env: BTreeMap<&str, &str> = out
            .stdout
            .text
            .lines()
            .filter_map(|line| line.split_once('='))
            .collect();
        for gone in [
            "dsh_lower",
            "DSH_UPPER",
            "Dsh_Mixed",
            "my_api_key",
            "Session_Token",
            "NO_COLOR",
            "TERM",
            "PAGER",
            "GIT_PAGER",
        ] {
            assert!(!env.contains_key(gone), "{gone} reached the child");
        }
        for (name, value) in [
            ("KEPT_PLAIN", "kept"),
            ("FROM_CONFIG", "config"),
            ("FROM_REQUEST", "req"),
            ("DSH_GIVEN", "dsh"),
        ] {
            assert_eq!(env.get(name).copied(), Some(value), "{name}");
        }
    });
}

#[tokio::test]
async fn stderr_keeps_its_exact_last_bytes_and_nothing_spills() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig::default());
    let run = |stderr_max_bytes| SubprocessRun {
        stderr_max_bytes,
        ..RUN
    };
    // Two writes, the tail across them.
    let script = "printf 0123 >&2; printf 456789 >&2";
    let out = whole(
        &exec,
        spec(&exec, &["sh", "-c", script], dir.path(), run(5)),
    )
    .await
    .unwrap();
    assert_eq!(
        (out.stderr.text.as_str(), out.stderr.truncated),
        ("56789", true)
    );
    assert_eq!(out.stderr.spill_path, None);
    // A cut inside a character: the tail's bytes, then a lossy decode.
    let script = "printf 'x\\303\\251' >&2";
    let out = whole(
        &exec,
        spec(&exec, &["sh", "-c", script], dir.path(), run(1)),
    )
    .await
    .unwrap();
    assert_eq!(
        (out.stderr.text.as_str(), out.stderr.truncated),
        ("\u{FFFD}", true)
    );
    // Within the budget: whole, not truncated.
    let out = whole(
        &exec,
        spec(&exec, &["sh", "-c", script], dir.path(), run(3)),
    )
    .await
    .unwrap();
    assert_eq!(
        (out.stderr.text.as_str(), out.stderr.truncated),
        ("x\u{e9}", false)
    );
    // stdout past its budget in an uncapped run: its tail, truncated, no
    // spill file either.
    let mut s = spec(&exec, &["sh", "-c", "printf abcdefgh"], dir.path(), run(10));
    s.stdout_max_bytes = 3;
    let out = whole(&exec, s).await.unwrap();
    assert_eq!(
        (
            out.stdout.text.as_str(),
            out.stdout.truncated,
            out.stdout.spill_path
        ),
        ("fgh", true, None)
    );
}

#[tokio::test]
async fn stdout_over_its_budget_follows_the_run_mode() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig::default());
    let mut s = spec(&exec, &["yes"], dir.path(), RUN);
    s.stdout_max_bytes = 10_000;
    let outcome = exec.run(s, RunMode::capped(OverCap::Stop)).await.unwrap();
    assert_eq!(outcome.run, CappedRun::StdoutOverCap);
    let mut s = spec(
        &exec,
        &["sh", "-c", "head -c 50000 /dev/zero; exit 3"],
        dir.path(),
        RUN,
    );
    s.stdout_max_bytes = 10_000;
    let outcome = exec.run(s, RunMode::capped(OverCap::Drain)).await.unwrap();
    let CappedRun::Finished(out) = outcome.run else {
        panic!("a drained run finishes");
    };
    assert_eq!(
        (
            out.exit_code,
            out.stdout.text.as_str(),
            out.stdout.truncated
        ),
        (Some(3), "", true)
    );
}

#[tokio::test]
async fn there_is_no_executor_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig {
        timeout_ms: 50,
        ..LocalBashConfig::default()
    });
    let mut s = spec(&exec, &["sleep", "0.4"], dir.path(), RUN);
    s.timeout_ms = 50;
    let out = whole(&exec, s).await.unwrap();
    assert_eq!(
        (out.exit_code, out.timed_out, out.aborted),
        (Some(0), false, false)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_sends_sigterm_then_sigkill_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig::default());
    for (script, signal, at_least) in [
        ("exec sleep 30", "SIGTERM", Duration::ZERO),
        // SIGTERM ignored, as the exec'd sleep inherits it.
        (
            "trap '' TERM; exec sleep 30",
            "SIGKILL",
            Duration::from_millis(300),
        ),
    ] {
        let token = CancellationToken::new();
        let mut s = spec(&exec, &["sh", "-c", script], dir.path(), RUN);
        s.signal = Some(token.clone());
        let cancel = async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            token.cancel();
            Instant::now()
        };
        let (out, cancelled) = tokio::join!(whole(&exec, s), cancel);
        let out = out.unwrap();
        let took = cancelled.elapsed();
        assert!(out.aborted && !out.timed_out, "{script}");
        assert_eq!(
            (out.exit_code, out.signal.as_deref()),
            (None, Some(signal)),
            "{script}"
        );
        assert!(took >= at_least, "{script}: {took:?}");
        assert!(took < Duration::from_secs(5), "{script}: {took:?}");
    }
    // Cancelled before the spawn: nothing starts.
    let token = CancellationToken::new();
    token.cancel();
    let mut s = spec(&exec, &["touch", "made"], dir.path(), RUN);
    s.signal = Some(token);
    assert!(matches!(
        whole(&exec, s).await,
        Err(BashError::AbortedBeforeSpawn(_))
    ));
    assert!(!dir.path().join("made").exists());
}

#[tokio::test]
async fn a_descendant_holding_stdout_open_delays_the_result_by_the_grace_at_most() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig::default());
    // The grandchild keeps the pipe; it prints its pid first.
    let script = "sleep 20 & echo $!";
    let started = Instant::now();
    let out = whole(&exec, spec(&exec, &["sh", "-c", script], dir.path(), RUN))
        .await
        .unwrap();
    let took = started.elapsed();
    let grandchild: i32 = out.stdout.text.trim().parse().unwrap();
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(grandchild),
        nix::sys::signal::Signal::SIGKILL,
    );
    assert_eq!(out.exit_code, Some(0));
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[tokio::test]
async fn a_spawn_that_fails_is_a_spawn_error() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(LocalBashConfig::default());
    let missing = whole(
        &exec,
        spec(&exec, &["no-such-program-for-sure"], dir.path(), RUN),
    )
    .await
    .unwrap_err();
    assert_eq!(missing.to_string(), "spawn bash ENOENT");
    let gone = dir.path().join("gone");
    let err = whole(&exec, spec(&exec, &["true"], &gone, RUN))
        .await
        .unwrap_err();
    assert!(matches!(err, BashError::Spawn(_)), "{err}");
    let err = whole(&exec, spec(&exec, &["printf", "a\0b"], dir.path(), RUN))
        .await
        .unwrap_err();
    assert!(matches!(err, BashError::Spawn(_)), "{err}");
}

/// The running rg: `/usr/bin/rg` or the first on `PATH`.
fn real_rg() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("rg"))
        .find(|rg| rg.is_file())
        .expect("rg on PATH")
}

#[tokio::test]
async fn rg_is_resolved_once_per_executor() {
    let dir = tempfile::tempdir().unwrap();
    let bin = tempfile::tempdir().unwrap();
    // A PATH with no rg: the first run fails, and so does every later
    // one, even once an rg appears there.
    let exec = executor(LocalBashConfig {
        env: BTreeMap::from([(
            "PATH".to_owned(),
            format!("{}:/nonexistent", bin.path().display()),
        )]),
        ..LocalBashConfig::default()
    });
    let argv = ["rg", "--no-config", "--version"];
    let err = whole(&exec, spec(&exec, &argv, dir.path(), RUN))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "spawn bash ENOENT");
    std::os::unix::fs::symlink(real_rg(), bin.path().join("rg")).unwrap();
    let err = whole(&exec, spec(&exec, &argv, dir.path(), RUN))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "spawn bash ENOENT");
    // A new executor resolves anew, and finds it.
    let fresh = executor(exec.config().clone());
    let out = whole(&fresh, spec(&fresh, &argv, dir.path(), RUN))
        .await
        .unwrap();
    assert!(
        out.stdout.text.starts_with("ripgrep "),
        "{}",
        out.stdout.text
    );
    // The --rg binary wins over PATH.
    let rg15 = std::env::var_os("HOME")
        .map(|home| Path::new(&home).join(".cache/fs-search-ci/rg-15.2.0/bin/rg"))
        .filter(|rg| rg.is_file());
    if let Some(rg15) = rg15 {
        let exec = executor(LocalBashConfig {
            rg: Some(rg15),
            ..LocalBashConfig::default()
        });
        let out = whole(&exec, spec(&exec, &argv, dir.path(), RUN))
            .await
            .unwrap();
        assert!(
            out.stdout.text.starts_with("ripgrep 15."),
            "{}",
            out.stdout.text
        );
    }
}
