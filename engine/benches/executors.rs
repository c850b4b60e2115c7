//! Criterion benchmarks of one whole call under the local executor and
//! under the sandboxed one (bubblewrap), in one run, so their ratio is
//! measured on the same machine at the same moment (docs/performance.md):
//! a small call (grep over a 40-file tree) and a large one (grep over a
//! 19 MB file, 60 000 matching lines past the raw-output cap, drained).
//! Without bubblewrap the sandboxed cases are skipped, saying so.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use std::path::Path;
use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use fs_search_engine::{
    BashExecutor, ExecContext, Host, LocalBashConfig, LocalBashExecutor, Registry,
    SandboxBashExecutor, SandboxConfig,
};
use serde_json::json;

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
        let mut kinds: Vec<(&str, Arc<dyn BashExecutor>)> = vec![(
            "local",
            Arc::new(LocalBashExecutor::new(config.clone()).unwrap()),
        )];
        match SandboxBashExecutor::new(config, SandboxConfig::default()) {
            Ok(sandbox) => kinds.push(("sandbox", Arc::new(sandbox))),
            Err(e) => eprintln!("sandbox cases skipped: {e}"),
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
        group.finish();
    }
}

criterion_group!(benches, executors);
criterion_main!(benches);
