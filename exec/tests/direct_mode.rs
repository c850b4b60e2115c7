//! The local executor's direct mode (`--executor direct`): a request's
//! argv spawned without bash, everything else as a `bash -c` run (the
//! environment with its overlay, the timeout, the spill of a stream past
//! its budget); a request without argv still runs through bash; and the
//! `--rg` binary found as `rg` by bash commands and argv runs alike.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use fs_search_engine::bash::{
    BashError, BashExecutor, BashRequest, BashRunResult, BashSpec, CappedRun, RunMode,
};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};

fn direct(config: LocalBashConfig) -> LocalBashExecutor {
    LocalBashExecutor::new(config).unwrap().direct()
}

fn spec(exec: &LocalBashExecutor, argv: Option<&[&str]>, command: &str, dir: &Path) -> BashSpec {
    exec.resolve(BashRequest {
        command: command.to_owned(),
        argv: argv.map(|argv| argv.iter().map(|a| (*a).to_owned()).collect()),
        workdir: Some(dir.display().to_string()),
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
async fn an_argv_runs_without_bash_with_the_bash_executor_s_environment() {
    let dir = tempfile::tempdir().unwrap();
    let exec = direct(LocalBashConfig::default());
    assert!(exec.is_direct());
    let argv = ["printf", "%s|", "$(touch x)", "a b"];
    // The command string is what bash would have run: not this one.
    let out = whole(&exec, spec(&exec, Some(&argv), "touch y", dir.path()))
        .await
        .unwrap();
    assert_eq!(out.stdout.text, "$(touch x)|a b|");
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let out = whole(&exec, spec(&exec, Some(&["env"]), "env", dir.path()))
        .await
        .unwrap();
    for overlay in ["NO_COLOR=1", "TERM=dumb", "PAGER=cat", "GIT_PAGER=cat"] {
        assert!(
            out.stdout.text.lines().any(|line| line == overlay),
            "{overlay}"
        );
    }
    // No argv: bash runs the command.
    let out = whole(&exec, spec(&exec, None, "printf '%s' \"$0\"", dir.path()))
        .await
        .unwrap();
    assert_eq!(out.stdout.text, "bash");
}

#[tokio::test]
async fn the_timeout_and_the_spill_are_the_bash_executor_s() {
    let dir = tempfile::tempdir().unwrap();
    let exec = direct(LocalBashConfig {
        grace_ms: 200,
        ..LocalBashConfig::default()
    });
    let mut s = spec(&exec, Some(&["sleep", "30"]), "sleep 30", dir.path());
    s.timeout_ms = 100;
    let out = whole(&exec, s).await.unwrap();
    assert!(out.timed_out && !out.aborted);
    assert_eq!(
        (out.exit_code, out.signal.as_deref()),
        (None, Some("SIGTERM"))
    );
    let mut s = spec(
        &exec,
        Some(&["head", "-c", "100", "/dev/zero"]),
        "",
        dir.path(),
    );
    s.stdout_max_bytes = 10;
    let out = whole(&exec, s).await.unwrap();
    assert!(out.stdout.truncated);
    let spill = out
        .stdout
        .spill_path
        .clone()
        .expect("a spill file, as bash's");
    assert_eq!(std::fs::read(&spill).unwrap(), vec![0u8; 100]);
    exec.release(&out);
    assert!(!spill.exists());
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_failure() {
    let dir = tempfile::tempdir().unwrap();
    let exec = direct(LocalBashConfig::default());
    let argv = ["no-such-program-for-sure", "x"];
    let err = whole(&exec, spec(&exec, Some(&argv), "", dir.path()))
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "spawn bash ENOENT");
}

/// rg 15 from the CI cache, when it is there.
fn rg15() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(|home| Path::new(&home).join(".cache/fs-search-ci/rg-15.2.0/bin/rg"))
        .filter(|rg| rg.is_file())
}

#[tokio::test]
async fn the_rg_binary_is_rg_for_bash_commands_and_argv_runs_and_its_dir_goes_with_the_executor() {
    let Some(rg) = rg15() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let config = LocalBashConfig {
        rg: Some(rg),
        ..LocalBashConfig::default()
    };
    for exec in [
        LocalBashExecutor::new(config.clone()).unwrap(),
        direct(config.clone()),
    ] {
        let out = whole(&exec, spec(&exec, None, "rg --version", dir.path()))
            .await
            .unwrap();
        assert!(
            out.stdout.text.starts_with("ripgrep 15."),
            "{}",
            out.stdout.text
        );
        let argv = ["rg", "--version"];
        let out = whole(&exec, spec(&exec, Some(&argv), "rg --version", dir.path()))
            .await
            .unwrap();
        assert!(
            out.stdout.text.starts_with("ripgrep 15."),
            "{}",
            out.stdout.text
        );
        let out = whole(&exec, spec(&exec, None, "command -v rg", dir.path()))
            .await
            .unwrap();
        let link = PathBuf::from(out.stdout.text.trim());
        assert!(link.is_symlink(), "{link:?}");
        drop(exec);
        assert!(!link.exists() && !link.parent().unwrap().exists());
    }
}

/// A directory holding a symlink named `name` to the first `name` on this
/// process's `PATH`.
fn dir_with(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let found = std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap();
    std::os::unix::fs::symlink(found, dir.path().join(name)).unwrap();
    dir
}

/// The load probe asks whether `rg` is on the child's `PATH`: direct mode
/// answers it with that lookup and starts no bash (on a `PATH` with rg
/// and no bash it still answers), and hands a `PATH` that bash would read
/// relative to the working directory to bash.
#[tokio::test]
async fn the_load_probe_is_a_path_lookup_without_bash() {
    let work = tempfile::tempdir().unwrap();
    let probe = fs_search_engine::registry::PROBE_COMMAND;
    let with_path = |path: String| LocalBashConfig {
        env: [("PATH".to_owned(), path)].into(),
        ..LocalBashConfig::default()
    };
    let rg_only = dir_with("rg");
    let exec = direct(with_path(rg_only.path().display().to_string()));
    let found = whole(&exec, spec(&exec, None, probe, work.path())).await;
    assert_eq!(found.unwrap().exit_code, Some(0));
    let bash_only = dir_with("bash");
    let exec = direct(with_path(bash_only.path().display().to_string()));
    let missing = whole(&exec, spec(&exec, None, probe, work.path())).await;
    assert_eq!(missing.unwrap().exit_code, Some(1));
    // The same PATHs through bash: no bash to start, and no rg to find.
    let bash = LocalBashExecutor::new(with_path(rg_only.path().display().to_string())).unwrap();
    assert!(
        whole(&bash, spec(&bash, None, probe, work.path()))
            .await
            .is_err()
    );
    // A relative entry: bash decides (here it finds rg through it).
    let relative = format!("{}:rg-dir", bash_only.path().display());
    std::os::unix::fs::symlink(rg_only.path(), work.path().join("rg-dir")).unwrap();
    let exec = direct(with_path(relative));
    let through_bash = whole(&exec, spec(&exec, None, probe, work.path())).await;
    assert_eq!(through_bash.unwrap().exit_code, Some(0));
}
