//! The sandboxed executor, under each runner (bubblewrap, Landlock),
//! reads only its workspace and the files bash and rg run from: canary
//! files planted outside it (in a sibling of the workspace, behind
//! symlinks inside it, behind `/proc/*/root`, under `/usr/local`) never
//! show on any page of any call, tool or argument shape, `/usr` lists
//! nothing, while the same shapes under the local executor do reach them
//! (so the canaries are reachable at all). Inside the workspace, every
//! call gives the local executor's result exactly: a fixed set of shapes
//! and a property over generated trees and calls.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fs_search_engine::{BashExecutor, ExecContext, Host, LoadOutcome, Registry, ToolResult};

use fs_search_exec::{
    LocalBashConfig, LocalBashExecutor, Runner, SandboxBashExecutor, SandboxConfig,
};
use proptest::prelude::*;
use serde_json::{Value, json};

/// In the names of the files outside the workspace.
const NAME_TOKEN: &str = "canaryname7d3a";
/// In the contents of the files outside the workspace, never in an argument.
const CONTENT_TOKEN: &str = "canarycontent9b2c";

/// A workspace (`work/`) beside a directory of canaries (`outside/`), both
/// in one temp dir, with symlinks in the workspace that lead out of it.
struct Planted {
    _parent: tempfile::TempDir,
    work: PathBuf,
    outside: PathBuf,
    outside_file: PathBuf,
}

fn plant() -> Planted {
    let parent = tempfile::Builder::new()
        .prefix("fs-search-sandbox-")
        .tempdir()
        .unwrap();
    let work = parent.path().join("work");
    let outside = parent.path().join("outside");
    for dir in [work.join("src"), work.join("sub"), outside.join("nested")] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(work.join("src/main.rs"), "fn main() {}\n// secret plan\n").unwrap();
    std::fs::write(work.join("notes.md"), "hello world\nsecret notes\n").unwrap();
    let outside_file = outside.join(format!("{NAME_TOKEN}.txt"));
    std::fs::write(&outside_file, format!("secret {CONTENT_TOKEN}\n")).unwrap();
    std::fs::write(
        outside.join("nested").join(format!("{NAME_TOKEN}.rs")),
        format!("// secret {CONTENT_TOKEN}\n"),
    )
    .unwrap();
    let link =
        |target: &Path, name: &str| std::os::unix::fs::symlink(target, work.join(name)).unwrap();
    link(&outside_file, "link-file");
    link(&outside, "link-dir");
    link(Path::new("../outside"), "rel-link");
    link(Path::new("/proc/self/root"), "proc-root");
    std::os::unix::fs::symlink("../../outside", work.join("sub/up")).unwrap();
    Planted {
        _parent: parent,
        work,
        outside,
        outside_file,
    }
}

async fn registry(bash: Arc<dyn BashExecutor>) -> Registry {
    let mut registry = Registry::new(Host {
        bash: Some(bash),
        spill_store: None,
        timeout_policy: true,
    });
    let outcome = registry
        .load_fs_search(&json!({"sampleOverCapGlobResults": true}))
        .await
        .unwrap();
    assert!(matches!(outcome, LoadOutcome::Registered), "{outcome:?}");
    registry
}

/// An rg config file (outside the root, as a transcript replay's is)
/// that pins grep's file order, which rg's parallel walk leaves open.
struct SortedRg {
    dir: tempfile::TempDir,
}

impl SortedRg {
    fn new() -> Self {
        let dir = tempfile::Builder::new()
            .prefix("fs-search-sandbox-rgconfig-")
            .tempdir()
            .unwrap();
        std::fs::write(dir.path().join("ripgreprc"), "--sort=path\n").unwrap();
        Self { dir }
    }

    fn bash_config(&self, root: &Path) -> LocalBashConfig {
        let file = self.dir.path().join("ripgreprc");
        LocalBashConfig {
            cwd: Some(root.to_string_lossy().into_owned()),
            env: BTreeMap::from([(
                "RIPGREP_CONFIG_PATH".to_owned(),
                file.to_string_lossy().into_owned(),
            )]),
            ..LocalBashConfig::default()
        }
    }
}

fn bash_config(root: &Path) -> LocalBashConfig {
    LocalBashConfig {
        cwd: Some(root.to_string_lossy().into_owned()),
        ..LocalBashConfig::default()
    }
}

/// The two runners every confinement claim is tested under.
const RUNNERS: [Runner; 2] = [Runner::Bwrap, Runner::Landlock];

fn runner(runner: Runner) -> SandboxConfig {
    SandboxConfig {
        runner,
        ..SandboxConfig::default()
    }
}

async fn sandboxed(root: &Path, by: Runner) -> Registry {
    let bash = SandboxBashExecutor::new(bash_config(root), runner(by)).unwrap();
    assert_eq!(bash.runner(), by);
    registry(Arc::new(bash)).await
}

async fn local(root: &Path) -> Registry {
    registry(Arc::new(LocalBashExecutor::new(bash_config(root)).unwrap())).await
}

/// Both executors on `root`, grep's order pinned by `rg_config`.
async fn both(root: &Path, rg_config: &SortedRg, by: Runner) -> (Registry, Registry) {
    let sandbox = SandboxBashExecutor::new(rg_config.bash_config(root), runner(by)).unwrap();
    let local = LocalBashExecutor::new(rg_config.bash_config(root)).unwrap();
    (
        registry(Arc::new(sandbox)).await,
        registry(Arc::new(local)).await,
    )
}

async fn call(registry: &Registry, root: &Path, tool: &str, args: &Value) -> ToolResult {
    let exec = ExecContext::new("c").with_session(Some("s"), Some(&root.to_string_lossy()));
    registry.call(tool, args, &exec).await
}

/// Every path argument that leads out of the workspace.
fn outside_paths(planted: &Planted) -> Vec<String> {
    let outside = planted.outside.to_string_lossy().into_owned();
    let file = planted.outside_file.to_string_lossy().into_owned();
    let mut paths: Vec<String> = [
        "/etc",
        "/etc/passwd",
        "..",
        "../outside",
        "../../",
        "~",
        "/proc/1/environ",
        "/proc/self/root/etc",
        "/root",
        "/home",
        "/tmp",
        "link-file",
        "link-dir",
        "rel-link",
        "sub/up",
        "./link-dir/nested",
    ]
    .map(str::to_owned)
    .into();
    paths.extend([
        outside.clone(),
        file.clone(),
        format!("{outside}/nested"),
        format!("/proc/self/root{file}"),
        format!("/proc/1/root{outside}"),
        format!("/proc/self/cwd/../outside/{NAME_TOKEN}.txt"),
        format!("../outside/{NAME_TOKEN}.txt"),
        format!("link-dir/{NAME_TOKEN}.txt"),
        format!("proc-root{outside}"),
    ]);
    if let Some(home) = std::env::var_os("HOME") {
        paths.push(home.to_string_lossy().into_owned());
    }
    paths
}

/// Every tool and argument shape for a path.
fn shapes(path: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("grep", json!({"pattern": "secret", "path": path})),
        (
            "grep",
            json!({"pattern": ".", "path": path, "include": "*"}),
        ),
        (
            "grep",
            json!({"pattern": CONTENT_TOKEN, "path": path, "include": "**/*.rs"}),
        ),
        ("glob", json!({"pattern": "**/*", "path": path})),
        ("glob", json!({"pattern": "*", "path": path})),
        (
            "glob",
            json!({"pattern": format!("**/{NAME_TOKEN}*"), "path": path}),
        ),
    ]
}

/// The canary tokens `text` shows that `args` did not bring in themselves.
fn leaked(text: &str, args: &Value) -> Vec<&'static str> {
    let asked = args.to_string();
    [NAME_TOKEN, CONTENT_TOKEN]
        .into_iter()
        .filter(|token| text.contains(token) && !asked.contains(token))
        .collect()
}

#[tokio::test]
async fn no_call_tool_or_argument_shape_shows_a_canary_from_outside_the_workspace() {
    for by in RUNNERS {
        no_canary_shows_under(by).await;
    }
}

async fn no_canary_shows_under(by: Runner) {
    let planted = plant();
    let registry = sandboxed(&planted.work, by).await;
    let mut calls = 0;
    for path in outside_paths(&planted) {
        for (tool, args) in shapes(&path) {
            let result = call(&registry, &planted.work, tool, &args).await;
            assert_eq!(
                leaked(&result.text, &args),
                Vec::<&str>::new(),
                "{by:?} {tool} {args}:\n{}",
                result.text
            );
            calls += 1;
        }
    }
    // Searches of the workspace itself that meet the links during the walk.
    for (tool, args) in [
        ("grep", json!({"pattern": "secret"})),
        ("grep", json!({"pattern": CONTENT_TOKEN})),
        ("glob", json!({"pattern": "**/*"})),
        ("glob", json!({"pattern": format!("**/{NAME_TOKEN}*")})),
    ] {
        let result = call(&registry, &planted.work, tool, &args).await;
        assert_eq!(
            leaked(&result.text, &args),
            Vec::<&str>::new(),
            "{tool} {args}:\n{}",
            result.text
        );
        calls += 1;
    }
    assert!(calls >= 150, "{calls}");
}

/// The canaries are reachable without the sandbox: the test above would
/// see a leak if the sandbox let one through.
#[tokio::test]
async fn the_local_executor_reaches_the_canaries_through_the_same_shapes() {
    let planted = plant();
    let registry = local(&planted.work).await;
    let file = planted.outside_file.to_string_lossy().into_owned();
    let proc_root = format!("/proc/self/root{file}");
    let through = [
        "..",
        "../outside",
        "link-file",
        "link-dir",
        "rel-link",
        "sub/up",
        &file,
        &proc_root,
    ];
    let mut leaking = BTreeSet::new();
    for path in through {
        for (tool, args) in shapes(path) {
            let result = call(&registry, &planted.work, tool, &args).await;
            if !leaked(&result.text, &args).is_empty() {
                leaking.insert(path);
            }
        }
    }
    assert_eq!(leaking, BTreeSet::from(through));
}

/// bubblewrap shows no outside path at all; Landlock's kernel refuses it.
#[tokio::test]
async fn an_outside_path_reads_as_missing_under_bwrap_and_denied_under_landlock() {
    let planted = plant();
    let file = planted.outside_file.to_string_lossy().into_owned();
    for (by, said) in [
        (Runner::Bwrap, "No such file or directory"),
        (Runner::Landlock, "Permission denied"),
    ] {
        let registry = sandboxed(&planted.work, by).await;
        for path in ["/etc", "/proc/self/root/etc", "link-file", file.as_str()] {
            let args = json!({"pattern": "secret", "path": path});
            let result = call(&registry, &planted.work, "grep", &args).await;
            assert_eq!(
                result.error.as_ref().and_then(|e| e.code_str()),
                Some("SEARCH_FAILED"),
                "{by:?} {path}: {}",
                result.text
            );
            assert!(result.text.contains(said), "{by:?} {path}: {}", result.text);
        }
    }
}

/// A uniquely named directory under `/usr/local`, removed when dropped.
struct UsrLocalCanary {
    dir: PathBuf,
}

impl UsrLocalCanary {
    fn plant() -> Self {
        let unique = format!("fs-search-canary-{}-{NAME_TOKEN}", std::process::id());
        let dir = Path::new("/usr/local").join(unique);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("planted.txt"), format!("{CONTENT_TOKEN}\n")).unwrap();
        Self { dir }
    }
}

impl Drop for UsrLocalCanary {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `/usr` holds bash's and rg's files, and lists nothing; a canary under
/// `/usr/local` is not found, while the local executor finds it.
#[tokio::test]
async fn glob_of_usr_and_grep_of_a_canary_under_usr_local_find_nothing() {
    let planted = plant();
    let canary = UsrLocalCanary::plant();
    let usr_local = "/usr/local".to_owned();
    let asks = [
        ("glob", json!({"pattern": "**/*", "path": "/usr"})),
        ("glob", json!({"pattern": "*", "path": "/usr/bin"})),
        ("glob", json!({"pattern": "**/*", "path": usr_local})),
        ("grep", json!({"pattern": CONTENT_TOKEN, "path": usr_local})),
        (
            "grep",
            json!({"pattern": CONTENT_TOKEN, "path": canary.dir}),
        ),
    ];
    let local = local(&planted.work).await;
    for (tool, args) in &asks[2..] {
        let result = call(&local, &planted.work, tool, args).await;
        assert!(
            result.text.contains(NAME_TOKEN) || result.text.contains(CONTENT_TOKEN),
            "local {tool} {args}: {}",
            result.text
        );
    }
    for by in RUNNERS {
        let registry = sandboxed(&planted.work, by).await;
        for (tool, args) in &asks {
            let result = call(&registry, &planted.work, tool, args).await;
            assert!(
                !result.text.contains(CONTENT_TOKEN),
                "{by:?} {tool} {args}: {}",
                result.text
            );
            assert!(
                !result.text.contains("planted.txt"),
                "{by:?} {tool} {args}: {}",
                result.text
            );
            for program in ["/usr/bin/bash", "/usr/bin/rg", "libc.so"] {
                assert!(
                    !result.text.contains(program),
                    "{by:?} {tool} {args}: {}",
                    result.text
                );
            }
        }
    }
}

/// The results of both executors, for comparing: everything but the
/// warnings' order-free list.
fn comparable(result: &ToolResult) -> Value {
    serde_json::to_value(result).unwrap()
}

#[tokio::test]
async fn in_workspace_calls_give_the_local_executor_s_results_exactly() {
    for by in RUNNERS {
        in_workspace_calls_match_under(by).await;
    }
}

async fn in_workspace_calls_match_under(by: Runner) {
    let planted = plant();
    let rg_config = SortedRg::new();
    let (sandbox, local) = both(&planted.work, &rg_config, by).await;
    let shapes = [
        ("grep", json!({"pattern": "secret"})),
        ("grep", json!({"pattern": "secret", "path": "src"})),
        ("grep", json!({"pattern": "hello", "include": "*.md"})),
        ("grep", json!({"pattern": "(", "path": "."})),
        ("grep", json!({"pattern": "x", "path": "missing"})),
        (
            "grep",
            json!({"pattern": "fn", "path": planted.work.join("src/main.rs")}),
        ),
        ("glob", json!({"pattern": "**/*.rs"})),
        ("glob", json!({"pattern": "*", "path": "sub"})),
        ("glob", json!({"pattern": "**/*", "path": "nope"})),
        ("glob", json!({"pattern": "[", "path": "."})),
    ];
    for (tool, args) in shapes {
        let a = call(&sandbox, &planted.work, tool, &args).await;
        let b = call(&local, &planted.work, tool, &args).await;
        assert_eq!(comparable(&a), comparable(&b), "{by:?} {tool} {args}");
    }
}

/// A generated tree: files (relative path, lines) under the root.
fn tree_strategy() -> impl Strategy<Value = Vec<(String, Vec<String>)>> {
    let segment = prop::sample::select(vec!["a", "b", "src", "lib", "x y", ".hidden", "deep"]);
    let name = prop::sample::select(vec!["one.rs", "two.md", "three.txt", "Four.RS", "five"]);
    let path = (prop::collection::vec(segment, 0..3), name).prop_map(|(dirs, name)| {
        let mut parts: Vec<&str> = dirs;
        parts.push(name);
        parts.join("/")
    });
    let word = prop::sample::select(vec!["alpha", "beta", "gamma", "fn main", "TODO", "x", ""]);
    let lines = prop::collection::vec(word.prop_map(str::to_owned), 0..6);
    prop::collection::vec((path, lines), 1..12)
}

/// A generated call on such a tree.
fn call_strategy() -> impl Strategy<Value = (&'static str, Value)> {
    let pattern = prop::sample::select(vec![
        "alpha", "a.", "^fn", "TODO|x", "(", "[a-z]+", "gamma$",
    ]);
    let glob = prop::sample::select(vec![
        "*",
        "**/*",
        "**/*.rs",
        "*.{md,txt}",
        "src/**",
        "[",
        "**/x y/*",
    ]);
    let path = prop::option::of(prop::sample::select(vec![
        ".",
        "a",
        "src",
        "x y",
        "a/b",
        "missing",
        "deep/one.rs",
        "./lib/",
    ]));
    let include = prop::option::of(prop::sample::select(vec!["*.rs", "**/*.md", "*", "{"]));
    prop_oneof![
        (pattern, path.clone(), include).prop_map(|(pattern, path, include)| {
            let mut args = json!({"pattern": pattern});
            if let Some(path) = path {
                args["path"] = json!(path);
            }
            if let Some(include) = include {
                args["include"] = json!(include);
            }
            ("grep", args)
        }),
        (glob, path).prop_map(|(pattern, path)| {
            let mut args = json!({"pattern": pattern});
            if let Some(path) = path {
                args["path"] = json!(path);
            }
            ("glob", args)
        }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn the_sandbox_and_the_local_executor_give_the_same_page_on_any_tree_and_call(
        tree in tree_strategy(),
        calls in prop::collection::vec(call_strategy(), 1..4),
    ) {
        let root = tempfile::Builder::new().prefix("fs-search-sandbox-prop-").tempdir().unwrap();
        for (index, (path, lines)) in tree.iter().enumerate() {
            let file = root.path().join(path);
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            if !file.is_dir() {
                std::fs::write(&file, lines.join("\n")).unwrap();
                // Distinct modification times: glob's order is by them.
                let time = std::time::SystemTime::UNIX_EPOCH
                    + std::time::Duration::from_secs(1_600_000_000 + index as u64);
                std::fs::File::options().write(true).open(&file).unwrap()
                    .set_modified(time).unwrap();
            }
        }
        let rg_config = SortedRg::new();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            for by in RUNNERS {
                let (sandbox, local) = both(root.path(), &rg_config, by).await;
                for (tool, args) in &calls {
                    let a = call(&sandbox, root.path(), tool, args).await;
                    let b = call(&local, root.path(), tool, args).await;
                    assert_eq!(comparable(&a), comparable(&b), "{by:?} {tool} {args}");
                }
            }
        });
    }
}
