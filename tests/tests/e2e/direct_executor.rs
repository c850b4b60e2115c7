//! `--executor direct` against the bash executor: the same engine, the
//! same real rg and the same generated trees, one registry on the local
//! executor in its bash mode and one in its direct mode (the search
//! command's argv spawned without bash); every page and error must be
//! byte-identical. The trees hold several directories and files with
//! distinct mtimes (directories pinned too) and names with spaces, quotes
//! and leading dashes; the calls cover include globs, over-cap pages,
//! raw-output overflows (drained and stopped), no matches, glob and regex
//! errors and missing paths. grep's multi-file order is pinned by an rg
//! config (`--sort=path`), which both executors pass to rg alike.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use fs_search_engine::bash::{
    BashError, BashExecutor, BashRequest, BashRunResult, BashSpec, RunMode, RunOutcome,
};
use fs_search_engine::{ExecContext, Host, LoadOutcome, Registry, ToolResult};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
use fs_search_test_support::tree::{TempTree, Y2020};
use serde_json::{Value, json};

/// A small deterministic generator (no dependency): the trees differ by
/// seed, and a failure names its seed.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        usize::try_from(self.0 >> 33).unwrap() % n
    }
}

const DIRS: [&str; 6] = [
    "src",
    "src/deep dir",
    "docs",
    "-dash",
    "it's",
    "q\"uote dir",
];
const STEMS: [&str; 6] = ["alpha", "beta gamma", "-flag", "o'brien", "a\"b", "plain"];
const EXTENSIONS: [&str; 3] = ["ts", "md", "txt"];
const WORDS: [&str; 8] = [
    "alpha", "beta", "--flag", "value", "TODO", "x(y", "needle", "é",
];

/// A tree of `seed`: files in [`DIRS`] and the root, each with its own
/// mtime, lines of [`WORDS`]; every directory's mtime pinned after its
/// files are written.
fn generated(seed: u64) -> TempTree {
    let tree = TempTree::new().unwrap();
    let mut rng = Lcg(seed);
    let mut mtime = Y2020;
    for i in 0..18 {
        let dir = match rng.below(DIRS.len() + 1) {
            0 => String::new(),
            n => format!("{}/", DIRS[n - 1]),
        };
        let name = format!(
            "{dir}{}{i}.{}",
            STEMS[rng.below(STEMS.len())],
            EXTENSIONS[rng.below(EXTENSIONS.len())]
        );
        let mut content = String::new();
        for _ in 0..1 + rng.below(6) {
            let words: Vec<&str> = (0..1 + rng.below(5))
                .map(|_| WORDS[rng.below(WORDS.len())])
                .collect();
            content.push_str(&words.join(" "));
            content.push('\n');
        }
        mtime += 10;
        tree.file(&name, content.as_bytes(), mtime).unwrap();
    }
    for dir in DIRS {
        mtime += 10;
        if tree.join(dir).is_dir() {
            tree.touch(dir, mtime).unwrap();
        }
    }
    tree
}

/// The direct executor, counting the runs that had an argv to spawn (so
/// that the comparison is not of bash against bash).
struct CountingArgv {
    inner: LocalBashExecutor,
    with_argv: AtomicUsize,
}

#[async_trait]
impl BashExecutor for CountingArgv {
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        self.inner.resolve(request)
    }

    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
        if spec.argv.is_some() {
            self.with_argv.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.run(spec, mode).await
    }

    fn release(&self, result: &BashRunResult) {
        self.inner.release(result);
    }
}

fn local(tree: &TempTree, rg_config: &std::path::Path) -> LocalBashExecutor {
    LocalBashExecutor::new(LocalBashConfig {
        cwd: Some(tree.root()),
        timeout_ms: 20_000,
        env: BTreeMap::from([(
            "RIPGREP_CONFIG_PATH".to_owned(),
            rg_config.display().to_string(),
        )]),
        ..LocalBashConfig::default()
    })
    .unwrap()
}

async fn loaded(bash: Arc<dyn BashExecutor>, config: &Value) -> Registry {
    let mut registry = Registry::new(Host {
        bash: Some(bash),
        spill_store: None,
        timeout_policy: true,
    });
    let outcome = registry.load_fs_search(config).await.unwrap();
    assert_eq!(outcome, LoadOutcome::Registered, "rg must be installed");
    registry
}

fn outcome(result: &ToolResult) -> (String, Option<String>) {
    let code = (result.error.as_ref()).and_then(|e| e.code_str().map(str::to_owned));
    (result.text.clone(), code)
}

/// Every call of the comparison, by tool.
fn calls() -> Vec<(&'static str, Value)> {
    vec![
        ("glob", json!({"pattern": "**/*.ts"})),
        ("glob", json!({"pattern": "*"})),
        ("glob", json!({"pattern": "**/*"})),
        ("glob", json!({"pattern": "**/*.md", "path": "docs"})),
        ("glob", json!({"pattern": "**/*", "path": "it's"})),
        ("glob", json!({"pattern": "**/*", "path": "q\"uote dir"})),
        ("glob", json!({"pattern": "**/*", "path": "-dash"})),
        ("glob", json!({"pattern": "**/-flag*"})),
        ("glob", json!({"pattern": "**/*.nothing"})),
        ("glob", json!({"pattern": "["})),
        ("glob", json!({"pattern": "*", "path": "no such dir"})),
        ("grep", json!({"pattern": "alpha"})),
        ("grep", json!({"pattern": "alpha", "include": "*.ts"})),
        (
            "grep",
            json!({"pattern": "needle", "include": "**/*.{md,txt}"}),
        ),
        ("grep", json!({"pattern": "beta", "path": "src"})),
        ("grep", json!({"pattern": "--flag"})),
        ("grep", json!({"pattern": "x\\(y", "path": "-dash"})),
        ("grep", json!({"pattern": "é", "path": "it's"})),
        ("grep", json!({"pattern": "TODO", "path": "q\"uote dir"})),
        ("grep", json!({"pattern": "(unclosed"})),
        ("grep", json!({"pattern": "x", "path": "no-such-dir"})),
        ("grep", json!({"pattern": "zzz_no_match_here"})),
        ("grep", json!({"pattern": "e"})),
    ]
}

/// The configs the calls run under: the defaults, small page caps
/// (over-cap pages and samples), a small raw-output cap drained, and the
/// same cap stopped at.
fn configs() -> Vec<Value> {
    vec![
        json!({"sampleOverCapGlobResults": true}),
        json!({"sampleOverCapGlobResults": true, "globMaxResults": 3, "grepMaxMatches": 4, "grepMaxLineBytes": 8}),
        json!({"sampleOverCapGlobResults": true, "rawOutputMaxBytes": 600}),
        json!({"sampleOverCapGlobResults": true, "rawOutputMaxBytes": 600, "stopAtRawOutputCap": true}),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_pages_are_the_bash_executor_s_byte_for_byte_on_generated_trees() {
    let rg_dir = tempfile::tempdir().unwrap();
    let rg_config = rg_dir.path().join("ripgreprc");
    std::fs::write(&rg_config, "--sort=path\n").unwrap();
    let mut compared = 0;
    let mut seen = std::collections::BTreeSet::new();
    for seed in [1, 7, 42] {
        let tree = generated(seed);
        for config in configs() {
            let bash = loaded(Arc::new(local(&tree, &rg_config)), &config).await;
            let counting = Arc::new(CountingArgv {
                inner: local(&tree, &rg_config).direct(),
                with_argv: AtomicUsize::new(0),
            });
            let direct = loaded(counting.clone(), &config).await;
            for (tool, args) in calls() {
                let context = ExecContext::new("direct-vs-bash");
                let by_bash = bash.call(tool, &args, &context).await;
                let by_direct = direct.call(tool, &args, &context).await;
                assert_eq!(
                    outcome(&by_direct),
                    outcome(&by_bash),
                    "seed {seed}, config {config}, {tool} {args}"
                );
                compared += 1;
                seen.insert(outcome(&by_bash).1.unwrap_or_else(|| "page".to_owned()));
            }
            // Every search ran its argv (only the load probe has none).
            assert_eq!(
                counting.with_argv.load(Ordering::Relaxed),
                calls().len(),
                "seed {seed}, config {config}: the engine sends an argv with each search"
            );
        }
    }
    assert_eq!(compared, 3 * configs().len() * calls().len());
    // The comparison covered pages and every failure the calls aim at.
    for kind in [
        "page",
        "SEARCH_INVALID_PATTERN",
        "SEARCH_FAILED",
        "SEARCH_RAW_OUTPUT_OVERFLOW",
    ] {
        assert!(seen.contains(kind), "{kind} never came: {seen:?}");
    }
}

/// The one documented difference: with no rg where the calls run, bash
/// exits 127 and the page says rg is required; the direct spawn fails to
/// start. (The load probe found rg on the executors' `PATH`; then it was
/// taken away.)
#[tokio::test]
async fn without_rg_bash_requires_ripgrep_and_the_direct_spawn_fails_to_start() {
    let tree = generated(3);
    let bin = tempfile::tempdir().unwrap();
    let rg = which_rg();
    std::os::unix::fs::symlink(&rg, bin.path().join("rg")).unwrap();
    std::os::unix::fs::symlink("/bin/bash", bin.path().join("bash")).unwrap();
    let executor = || {
        LocalBashExecutor::new(LocalBashConfig {
            cwd: Some(tree.root()),
            env: BTreeMap::from([("PATH".to_owned(), bin.path().display().to_string())]),
            ..LocalBashConfig::default()
        })
        .unwrap()
    };
    let config = json!({"sampleOverCapGlobResults": true});
    let bash = loaded(Arc::new(executor()), &config).await;
    let direct = loaded(Arc::new(executor().direct()), &config).await;
    std::fs::remove_file(bin.path().join("rg")).unwrap();
    let context = ExecContext::new("no-rg");
    let args = json!({"pattern": "alpha"});
    let by_bash = bash.call("grep", &args, &context).await;
    let by_direct = direct.call("grep", &args, &context).await;
    assert!(
        by_bash
            .text
            .starts_with("Error: grep requires ripgrep (rg) on the bash executor's PATH"),
        "{}",
        by_bash.text
    );
    assert_eq!(
        by_direct.text,
        "Error: grep could not start its search command (unusable working directory or missing shell)"
    );
}

/// The rg on this process's `PATH`.
fn which_rg() -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("rg"))
        .find(|rg| rg.is_file())
        .expect("rg on PATH")
}
