//! Criterion benchmarks of one whole call under the local executor (and
//! its direct mode, `direct`: the search command's argv spawned without
//! bash), the
//! sandboxed one (bubblewrap, `sandbox`; Landlock, `landlock`) and the
//! remote one (ssh to a test sshd on
//! 127.0.0.1, its master connection up), in one run, so their ratios are
//! measured on the same machine at the same moment (docs/performance.md),
//! each remote or sandboxed one with its agents (the default), the
//! sandboxed one also starting bubblewrap per run (`sandbox-one-shot`, the
//! agents' test oracle), and the remote one with its agents in bubblewrap
//! on the host (`ssh-sandbox`):
//! a small call (grep over a 40-file tree) and a large one (grep over a
//! 19 MB file, 60 000 matching lines past the raw-output cap, drained).
//! Beside them, the contract's rg command itself, raw: `bash -c CMD | cat`
//! here and `ssh HOST 'cd DIR && CMD' | cat` over a multiplexed master of
//! its own. Without bubblewrap or sshd those cases are skipped, saying so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use fs_search_engine::{
    BashExecutor, ExecContext, GrepArgs, Host, Registry, helpers::build_grep_command,
};
use fs_search_exec::{
    LocalBashConfig, LocalBashExecutor, Runner, SandboxBashExecutor, SandboxConfig,
    SshBashExecutor, SshConfig,
};
use serde_json::json;

use fs_search_test_support::sshd::{HOST, TestSshd};

fn small_tree(root: &Path) {
    for i in 0..40 {
        let dir = root.join(format!("dir{}", i % 5));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join(format!("file{i}.rs")),
            format!("fn f{i}() {{}}\n// needle {i}\nlet x = {i};\n"),
        )
        .unwrap();
    }
}

/// About 19 MB: 300 000 lines of 64 bytes, every fifth one a match.
fn large_tree(root: &Path) {
    let mut text = String::with_capacity(19_300_000);
    for i in 0..300_000 {
        let word = if i % 5 == 0 { "needle" } else { "hay   " };
        text.push_str(&format!("{word} line {i:>12} {:>38}\n", "padding"));
    }
    std::fs::write(root.join("big.txt"), text).unwrap();
}

fn registry(runtime: &tokio::runtime::Runtime, bash: Arc<dyn BashExecutor>) -> Registry {
    runtime.block_on(async {
        let mut registry = Registry::new(Host {
            bash: Some(bash),
            spill_store: None,
            timeout_policy: true,
        });
        registry
            .load_fs_search(&json!({"sampleOverCapGlobResults": true}))
            .await
            .unwrap();
        registry
    })
}

fn executors(c: &mut Criterion) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    for (size, build) in [("small", small_tree as fn(&Path)), ("large", large_tree)] {
        let root = tempfile::tempdir().unwrap();
        build(root.path());
        let config = LocalBashConfig {
            cwd: Some(root.path().to_string_lossy().into_owned()),
            ..LocalBashConfig::default()
        };
        let mut kinds: Vec<(&str, Arc<dyn BashExecutor>)> = vec![
            (
                "local",
                Arc::new(LocalBashExecutor::new(config.clone()).unwrap()),
            ),
            (
                "direct",
                Arc::new(LocalBashExecutor::new(config.clone()).unwrap().direct()),
            ),
        ];
        for (kind, runner, one_shot) in [
            ("sandbox", Runner::Bwrap, false),
            ("sandbox-one-shot", Runner::Bwrap, true),
            ("landlock", Runner::Landlock, false),
        ] {
            let sandbox = SandboxConfig {
                runner,
                one_shot,
                ..SandboxConfig::default()
            };
            match SandboxBashExecutor::new(config.clone(), sandbox) {
                Ok(sandbox) => kinds.push((kind, Arc::new(sandbox))),
                Err(e) => eprintln!("{kind} cases skipped: {e}"),
            }
        }
        let sshd = TestSshd::start();
        if let Some(sshd) = &sshd {
            for (kind, sandbox) in [("ssh", false), ("ssh-sandbox", true)] {
                let ssh = SshConfig {
                    config_file: Some(sshd.client_config()),
                    sandbox,
                    ..SshConfig::new(format!("ssh://{HOST}").parse().unwrap())
                };
                match SshBashExecutor::new(config.clone(), ssh) {
                    Ok(ssh) => kinds.push((kind, Arc::new(ssh))),
                    Err(e) => eprintln!("{kind} cases skipped: {e}"),
                }
            }
        }
        let workdir = root.path().to_string_lossy().into_owned();
        let mut group = c.benchmark_group(format!("call/{size}"));
        group.sample_size(if size == "small" { 60 } else { 10 });
        for (kind, bash) in kinds {
            let registry = registry(&runtime, bash);
            let exec = ExecContext::new("bench").with_session(Some("bench"), Some(&workdir));
            let args = json!({"pattern": "needle"});
            group.bench_function(kind, |b| {
                b.iter(|| runtime.block_on(registry.call("grep", &args, &exec)));
            });
        }
        let command = build_grep_command(&GrepArgs {
            pattern: "needle".to_owned(),
            path: None,
            include: None,
        });
        group.bench_function("raw", |b| {
            b.iter(|| piped_to_cat(&format!("cd {workdir} && {command}")));
        });
        if let Some(sshd) = &sshd {
            let control = root.path().join(".raw-ssh");
            let ssh = format!(
                "ssh -F {} -o ControlMaster=auto -o ControlPersist=120 -o ControlPath={} {HOST}",
                sshd.client_config().display(),
                control.display()
            );
            let remote = format!("cd {workdir} && {command}").replace('\'', "'\\''");
            group.bench_function("raw-ssh", |b| {
                b.iter(|| piped_to_cat(&format!("{ssh} '{remote}' </dev/null")));
            });
            let _ = Command::new("bash")
                .arg("-c")
                .arg(format!("{ssh} -O exit 2>/dev/null"))
                .status();
        }
        group.finish();
    }
}

/// Runs `command | cat` under bash, its output read to the end.
fn piped_to_cat(command: &str) {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!("{command} | cat"))
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.stdout.is_empty());
}

criterion_group!(benches, executors);
criterion_main!(benches);
