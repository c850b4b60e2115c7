//! The sandboxed executor under both runners: what a command sees, its
//! environment, and how each runner fails closed.

use crate::test_run::RunShorthand;
use std::os::unix::fs::PermissionsExt;

use super::*;
use fs_search_engine::bash::{BashExecutor, BashRequest, BashRunResult};

const RUNNERS: [Runner; 2] = [Runner::Bwrap, Runner::Landlock];

fn config(root: &Path) -> LocalBashConfig {
    LocalBashConfig {
        cwd: Some(root.to_string_lossy().into_owned()),
        ..LocalBashConfig::default()
    }
}

fn sandbox(root: &Path, runner: Runner) -> SandboxBashExecutor {
    let exec = SandboxBashExecutor::new(
        config(root),
        SandboxConfig {
            runner,
            ..SandboxConfig::default()
        },
    )
    .unwrap();
    assert_eq!(exec.runner(), runner);
    exec
}

async fn run(exec: &SandboxBashExecutor, command: &str) -> BashRunResult {
    let spec = exec
        .resolve(BashRequest {
            command: command.into(),
            ..BashRequest::default()
        })
        .unwrap();
    exec.whole(spec).await.unwrap()
}

/// A fake `bwrap` in `dir` that fails as a real one does where user
/// namespaces are refused.
fn fake_bwrap_refusing_namespaces(dir: &Path) -> PathBuf {
    let fake = dir.join("bwrap");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n",
    )
    .unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    fake
}

#[tokio::test]
async fn the_command_sees_the_root_read_only_and_nothing_outside_under_both_runners() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("work");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("a.txt"), "inside\n").unwrap();
    std::fs::write(parent.path().join("canary.txt"), "CANARY\n").unwrap();
    for runner in RUNNERS {
        let exec = sandbox(&root, runner);
        let out = run(
            &exec,
            "pwd; echo \"$(<a.txt)\"; { read -r l < ../canary.txt; } 2>&1; echo \"${l:-nothing read}\"; \
             { : > b.txt; } 2>/dev/null || echo read-only; \
             for d in / /etc /home /usr /usr/bin /usr/lib /usr/local; do \
               [[ -n $(compgen -f \"$d/\") ]] && echo \"listed $d\"; done; \
             true",
        )
        .await;
        let text = &out.stdout.text;
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], root.to_str().unwrap(), "{runner:?}");
        assert_eq!(lines[1], "inside", "{runner:?}");
        assert!(!text.contains("CANARY"), "{runner:?}: {text}");
        let denied = match runner {
            Runner::Landlock => "Permission denied",
            _ => "No such file or directory",
        };
        assert!(text.contains(denied), "{runner:?}: {text}");
        assert!(text.contains("read-only"), "{runner:?}: {text}");
        // Nothing outside lists.
        assert_eq!(lines[3], "nothing read", "{runner:?}: {text}");
        assert_eq!(lines.len(), 5, "{runner:?}: {text}");
        assert_eq!(out.exit_code, Some(0), "{runner:?}: {out:?}");
    }
}

#[tokio::test]
async fn no_network_reaches_the_command_under_both_runners() {
    let root = tempfile::tempdir().unwrap();
    for runner in RUNNERS {
        let exec = sandbox(root.path(), runner);
        let out = run(
            &exec,
            "said=$( { : > /dev/tcp/192.0.2.1/9; } 2>&1 ); echo \"${said##*: }\"",
        )
        .await;
        let expected = match runner {
            Runner::Landlock => "Permission denied",
            _ => "Network is unreachable",
        };
        assert_eq!(out.stdout.text.trim(), expected, "{runner:?}: {out:?}");
    }
}

#[tokio::test]
async fn only_allowlisted_variables_of_the_executor_reach_the_command_under_both_runners() {
    let root = tempfile::tempdir().unwrap();
    let mut config = config(root.path());
    config
        .env
        .insert("OPERATOR_SET".to_owned(), "kept".to_owned());
    for runner in RUNNERS {
        let exec = SandboxBashExecutor::new(
            config.clone(),
            SandboxConfig {
                runner,
                ..SandboxConfig::default()
            },
        )
        .unwrap();
        // The shell's exported names, and those of every environ it can
        // read in /proc (bubblewrap's: the sandbox's processes alone).
        let out = run(
            &exec,
            "compgen -e; for f in /proc/self/environ /proc/[0-9]*/environ; do \
               { while IFS= read -r -d '' kv; do echo \"${kv%%=*}\"; done < $f; } 2>/dev/null; done; true",
        )
        .await;
        let names: Vec<&str> = out.stdout.text.lines().collect();
        for name in &names {
            let allowed = passes_into_sandbox(OsStr::new(name))
                || ["NO_COLOR", "TERM", "PAGER", "GIT_PAGER", "OPERATOR_SET"].contains(name)
                || ["PWD", "OLDPWD", "SHLVL", "_"].contains(name);
            assert!(allowed, "{runner:?}: {name} in {names:?}");
        }
        assert!(names.contains(&"OPERATOR_SET"), "{runner:?}: {names:?}");
        assert!(names.contains(&"PATH"), "{runner:?}: {names:?}");
    }
}

#[tokio::test]
async fn a_working_directory_outside_the_root_is_a_missing_one_under_both_runners() {
    let root = tempfile::tempdir().unwrap();
    for runner in RUNNERS {
        let exec = sandbox(root.path(), runner);
        let mut spec = exec
            .resolve(BashRequest {
                command: "true".into(),
                ..BashRequest::default()
            })
            .unwrap();
        spec.workdir = format!("{}/..", root.path().display());
        let err = exec.whole(spec).await.unwrap_err();
        assert_eq!(err.to_string(), "spawn bash ENOENT", "{runner:?}");
    }
}

#[tokio::test]
async fn exits_and_signals_read_as_the_local_executor_reports_them_under_both_runners() {
    let root = tempfile::tempdir().unwrap();
    for runner in RUNNERS {
        let exec = sandbox(root.path(), runner);
        assert_eq!(run(&exec, "exit 3").await.exit_code, Some(3), "{runner:?}");
        let killed = run(&exec, "kill -SEGV $$").await;
        assert_eq!(
            (killed.exit_code, killed.signal.as_deref()),
            (None, Some("SIGSEGV")),
            "{runner:?}"
        );
        assert_eq!(run(&exec, "printf '%s' \"$0\"").await.stdout.text, "bash");
    }
}

#[test]
fn a_missing_bubblewrap_is_refused_with_the_package_to_install() {
    let root = tempfile::tempdir().unwrap();
    let missing = root.path().join("no-bwrap");
    let err = SandboxBashExecutor::new(
        config(root.path()),
        SandboxConfig {
            runner: Runner::Bwrap,
            bwrap: Some(missing.clone()),
            ..SandboxConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "the sandbox needs bubblewrap, and {} does not exist (install it: apt-get install bubblewrap)",
            missing.display()
        )
    );
}

/// Fault injection: a fake `bwrap` refusing namespaces, with bubblewrap
/// asked for by name.
#[test]
fn fault_bwrap_refusing_namespaces_fails_closed_when_bwrap_is_asked_for() {
    let root = tempfile::tempdir().unwrap();
    let err = SandboxBashExecutor::new(
        config(root.path()),
        SandboxConfig {
            runner: Runner::Bwrap,
            bwrap: Some(fake_bwrap_refusing_namespaces(root.path())),
            ..SandboxConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "bubblewrap cannot make the sandbox: bwrap: No permissions to creating new namespace (user namespaces may be refused on this machine; bubblewrap comes with apt-get install bubblewrap)"
    );
}

/// Fault injection: a fake `bwrap` refusing namespaces; `auto` falls back
/// to Landlock, which confines.
#[tokio::test]
async fn fault_bwrap_refusing_namespaces_makes_auto_fall_back_to_landlock() {
    let parent = tempfile::tempdir().unwrap();
    let root = parent.path().join("work");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(parent.path().join("canary.txt"), "CANARY\n").unwrap();
    let exec = SandboxBashExecutor::new(
        config(&root),
        SandboxConfig {
            bwrap: Some(fake_bwrap_refusing_namespaces(parent.path())),
            ..SandboxConfig::default()
        },
    )
    .unwrap();
    assert_eq!(exec.runner(), Runner::Landlock);
    let out = run(&exec, "cat ../canary.txt 2>&1").await;
    assert!(out.stdout.text.contains("Permission denied"), "{out:?}");
}

/// Fault injection: a fake `bwrap` refusing namespaces and Landlock
/// forced unavailable; `auto` fails closed naming both.
#[test]
fn fault_neither_runner_fails_closed_naming_both() {
    let root = tempfile::tempdir().unwrap();
    let err = SandboxBashExecutor::new(
        config(root.path()),
        SandboxConfig {
            bwrap: Some(fake_bwrap_refusing_namespaces(root.path())),
            fault_no_landlock: true,
            ..SandboxConfig::default()
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "neither bubblewrap nor Landlock can make the sandbox: bubblewrap cannot make the sandbox: bwrap: No permissions to creating new namespace (user namespaces may be refused on this machine; bubblewrap comes with apt-get install bubblewrap); Landlock cannot make the sandbox: the kernel has no Landlock (a test's fault injection)"
    );
}

/// An rc.8 subprocess run of `argv` in `root`.
fn subprocess_spec(exec: &SandboxBashExecutor, argv: &[&str], stderr_max_bytes: u64) -> BashSpec {
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
async fn an_rc8_subprocess_run_execs_its_argv_with_rc8_s_environment_under_both_runners() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("a b.txt"), "$(touch x)\nit's\nnot\n").unwrap();
    for runner in RUNNERS {
        let exec = sandbox(root.path(), runner);
        // The words reach rg as they are; stdin is /dev/null.
        let argv = [
            "rg",
            "--no-config",
            "-F",
            "-e",
            "$(touch x)",
            "-e",
            "it's",
            "--",
            "a b.txt",
        ];
        let out = exec
            .whole(subprocess_spec(&exec, &argv, 100))
            .await
            .unwrap();
        assert_eq!(
            (out.exit_code, out.stdout.text.as_str()),
            (Some(0), "$(touch x)\nit's\n"),
            "{runner:?}: {}",
            out.stderr.text
        );
        let argv = [
            "bash",
            "-c",
            "[[ /proc/self/fd/0 -ef /dev/null ]] && printf '/dev/null\\n'; env",
        ];
        let mut spec = subprocess_spec(&exec, &argv, 100);
        spec.dsh_env = Some(BTreeMap::from([("DSH_GIVEN".to_owned(), "g".to_owned())]));
        let out = exec.whole(spec).await.unwrap();
        let text = &out.stdout.text;
        assert!(text.starts_with("/dev/null\n"), "{runner:?}: {text}");
        for overlay in ["NO_COLOR=", "TERM=", "PAGER=", "GIT_PAGER="] {
            assert!(
                !text.lines().any(|line| line.starts_with(overlay)),
                "{runner:?}: {overlay} in {text}"
            );
        }
        assert!(text.lines().any(|line| line == "DSH_GIVEN=g"), "{text}");
        // The stderr tail, byte-exact, and no spill file.
        let argv = ["bash", "-c", "printf 0123 >&2; printf 456789 >&2"];
        let out = exec.whole(subprocess_spec(&exec, &argv, 5)).await.unwrap();
        assert_eq!(
            (
                out.stderr.text.as_str(),
                out.stderr.truncated,
                out.stderr.spill_path
            ),
            ("56789", true, None),
            "{runner:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_rc8_abort_kills_a_term_ignoring_command_after_the_grace_under_both_runners() {
    let root = tempfile::tempdir().unwrap();
    for runner in RUNNERS {
        let exec = sandbox(root.path(), runner);
        let token = tokio_util::sync::CancellationToken::new();
        let argv = ["bash", "-c", "trap '' TERM; exec sleep 30"];
        let mut spec = subprocess_spec(&exec, &argv, 100);
        // No executor deadline: the request's timeout does not apply.
        spec.timeout_ms = 50;
        spec.signal = Some(token.clone());
        let cancel = async {
            tokio::time::sleep(std::time::Duration::from_millis(400)).await;
            token.cancel();
            std::time::Instant::now()
        };
        let (out, cancelled) = tokio::join!(exec.whole(spec), cancel);
        let out = out.unwrap();
        let took = cancelled.elapsed();
        assert!(out.aborted && !out.timed_out, "{runner:?}");
        assert_eq!(out.signal.as_deref(), Some("SIGKILL"), "{runner:?}");
        assert!(
            took >= std::time::Duration::from_millis(300) && took.as_secs() < 5,
            "{runner:?}: {took:?}"
        );
    }
}

/// The `--rg` binary: rg 15 when the CI cache has it.
fn rg15() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .map(|home| Path::new(&home).join(".cache/fs-search-ci/rg-15.2.0/bin/rg"))
        .filter(|rg| rg.is_file())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rg_binary_is_exposed_to_bash_commands_and_argv_runs_under_both_runners() {
    let Some(rg) = rg15() else {
        return;
    };
    let root = tempfile::tempdir().unwrap();
    for runner in RUNNERS {
        let exec = SandboxBashExecutor::new(
            LocalBashConfig {
                rg: Some(rg.clone()),
                ..config(root.path())
            },
            SandboxConfig {
                runner,
                ..SandboxConfig::default()
            },
        )
        .unwrap();
        let out = run(&exec, "rg --version").await;
        assert!(
            out.stdout.text.starts_with("ripgrep 15."),
            "{runner:?}: {} {}",
            out.stdout.text,
            out.stderr.text
        );
        let argv = ["rg", "--no-config", "--version"];
        let out = exec
            .whole(subprocess_spec(&exec, &argv, 100))
            .await
            .unwrap();
        assert!(
            out.stdout.text.starts_with("ripgrep 15."),
            "{runner:?}: {} {}",
            out.stdout.text,
            out.stderr.text
        );
    }
}
