//! The 0.1.0-rc.8 release on real rg, real files and the real local
//! executor: rc.8's own `integration.spec.ts` and `rg-path.spec.ts` cases
//! as behaviour, and the two releases side by side: identical pages on
//! ordinary calls, and each documented difference (docs/contract.md §12)
//! different as documented.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use fs_search_engine::release::Release;
use fs_search_engine::{ExecContext, Host, LoadOutcome, Registry, ToolResult};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
use fs_search_test_support::tree::{TempTree, Y2000, Y2020};
use serde_json::{Value, json};

/// The tree of rc.8's integration cases.
fn fixture() -> TempTree {
    let tree = TempTree::new().unwrap();
    tree.file(
        "src/alpha.ts",
        b"export const alpha = 1\n// TODO: refit alpha\n",
        Y2000,
    )
    .unwrap()
    .file("src/beta.ts", b"export const beta = 2\n", Y2020)
    .unwrap()
    .file("notes.md", b"alpha appears here too\n", Y2020 + 10)
    .unwrap()
    .file(".hidden.ts", b"export const hidden = 3\n", Y2020 + 20)
    .unwrap()
    .file(".git/config.ts", b"never listed\n", Y2020 + 30)
    .unwrap()
    .file(
        "spaced dir/wei'rd name.ts",
        b"const inside = true\n",
        Y2020 + 40,
    )
    .unwrap()
    .file("dashes.txt", b"value --flag value\n", Y2020 + 50)
    .unwrap();
    tree.touch("src", Y2000).unwrap();
    tree.touch(".git", Y2020 + 30).unwrap();
    tree.touch("spaced dir", Y2020 + 40).unwrap();
    tree
}

/// How a registry is set up besides its release.
#[derive(Default)]
struct Setup {
    config: Option<Value>,
    env: Vec<(String, String)>,
    rg: Option<PathBuf>,
}

async fn loaded(tree: &TempTree, release: Release, setup: Setup) -> (Registry, LoadOutcome) {
    let bash = LocalBashExecutor::new(LocalBashConfig {
        cwd: Some(tree.root()),
        timeout_ms: 20000,
        env: setup.env.into_iter().collect::<BTreeMap<_, _>>(),
        rg: setup.rg,
        ..LocalBashConfig::default()
    })
    .unwrap();
    let mut registry = Registry::new(Host {
        bash: Some(Arc::new(bash)),
        spill_store: None,
        timeout_policy: true,
    });
    let config = setup
        .config
        .unwrap_or_else(|| json!({"sampleOverCapGlobResults": true}));
    let outcome = registry.load_fs_search_as(release, &config).await.unwrap();
    (registry, outcome)
}

async fn rc8(tree: &TempTree) -> Registry {
    let (registry, outcome) = loaded(tree, Release::Rc8, Setup::default()).await;
    assert_eq!(outcome, LoadOutcome::Registered);
    registry
}

/// A call in the tree's session (its cwd is the tree).
async fn call(registry: &Registry, tree: &TempTree, tool: &str, args: Value) -> ToolResult {
    let exec = ExecContext::new("call-rc8").with_session(Some("session-int"), Some(&tree.root()));
    registry.call(tool, &args, &exec).await
}

fn code(result: &ToolResult) -> Option<&str> {
    result.error.as_ref().and_then(|e| e.code_str())
}

#[tokio::test]
async fn rc8_glob_discovers_by_mtime_with_hidden_files_and_without_vcs_internals() {
    let tree = fixture();
    let registry = rc8(&tree).await;
    let result = call(&registry, &tree, "glob", json!({"pattern": "**/*.ts"})).await;
    assert!(!result.is_error, "{}", result.text);
    let lines: Vec<&str> = result.text.lines().collect();
    let at = |name: &str| lines.iter().position(|l| *l == name).unwrap();
    assert!(at("src/alpha.ts") < at("src/beta.ts"));
    assert!(lines.contains(&".hidden.ts") && lines.contains(&"spaced dir/wei'rd name.ts"));
    assert!(!result.text.contains(".git/") && !result.text.contains("notes.md"));
    let scoped = call(
        &registry,
        &tree,
        "glob",
        json!({"pattern": "*.ts", "path": "src"}),
    )
    .await;
    let mut scoped: Vec<&str> = scoped.text.lines().collect();
    scoped.sort_unstable();
    assert_eq!(scoped, ["src/alpha.ts", "src/beta.ts"]);
    for args in [
        json!({"pattern": "*.nomatch"}),
        json!({"pattern": "*", "path": ".git"}),
    ] {
        let result = call(&registry, &tree, "glob", args).await;
        assert_eq!(result.text, "No files found");
    }
    let invalid = call(&registry, &tree, "glob", json!({"pattern": "["})).await;
    assert_eq!(code(&invalid), Some("SEARCH_INVALID_PATTERN"));
}

#[tokio::test]
async fn rc8_grep_groups_line_numbered_matches_and_keeps_hostile_values_inert() {
    let tree = fixture();
    let registry = rc8(&tree).await;
    let result = call(&registry, &tree, "grep", json!({"pattern": "alpha"})).await;
    // rc.8 pins no file order: each file's block is checked on its own.
    assert!(
        result.text.starts_with("Found 3 matches\n\n"),
        "{}",
        result.text
    );
    assert!(
        result
            .text
            .contains("src/alpha.ts\nLine 1: export const alpha = 1\nLine 2: // TODO: refit alpha")
    );
    assert!(
        result
            .text
            .contains("notes.md\nLine 1: alpha appears here too")
    );
    let one = call(
        &registry,
        &tree,
        "grep",
        json!({"pattern": "alpha", "path": "notes.md"}),
    )
    .await;
    assert_eq!(
        one.text,
        "Found 1 match\n\nnotes.md\nLine 1: alpha appears here too"
    );
    let included = call(
        &registry,
        &tree,
        "grep",
        json!({"pattern": "alpha", "path": ".", "include": "*.ts"}),
    )
    .await;
    assert!(included.text.contains("alpha.ts") && !included.text.contains("notes.md"));
    let hostile = call(
        &registry,
        &tree,
        "grep",
        json!({"pattern": "$(touch pwned)"}),
    )
    .await;
    assert_eq!(hostile.text, "No matches found");
    assert!(!tree.join("pwned").exists());
    let dash = call(
        &registry,
        &tree,
        "grep",
        json!({"pattern": "--flag", "path": "dashes.txt"}),
    )
    .await;
    assert_eq!(
        dash.text,
        "Found 1 match\n\ndashes.txt\nLine 1: value --flag value"
    );
}

#[tokio::test]
async fn rc8_grep_classifies_rg_s_own_errors() {
    let tree = fixture();
    let registry = rc8(&tree).await;
    let invalid = call(&registry, &tree, "grep", json!({"pattern": "(unclosed"})).await;
    assert_eq!(code(&invalid), Some("SEARCH_INVALID_PATTERN"));
    // rg 13 words it without the `rg: ` of rg 14 and 15.
    let rejected = "Error: grep pattern rejected by ripgrep: ";
    assert!(
        invalid.text.starts_with(rejected) && invalid.text.contains("regex parse error:"),
        "{}",
        invalid.text
    );
    let missing = call(
        &registry,
        &tree,
        "grep",
        json!({"pattern": "x", "path": "no-such-dir"}),
    )
    .await;
    assert_eq!(code(&missing), Some("SEARCH_FAILED"));
    let failed = "Error: grep search failed (exit 2): ";
    assert!(
        missing.text.starts_with(failed) && missing.text.contains("no-such-dir"),
        "{}",
        missing.text
    );
}

#[tokio::test]
async fn rc8_searches_the_session_workspace_not_the_executor_s_directory() {
    let tree = fixture();
    let session = TempTree::new().unwrap();
    session
        .file("only-here.ts", b"const sessionFile = true\n", Y2020)
        .unwrap();
    let registry = rc8(&tree).await;
    let result = call(
        &registry,
        &session,
        "grep",
        json!({"pattern": "sessionFile"}),
    )
    .await;
    assert_eq!(
        result.text,
        "Found 1 match\n\nonly-here.ts\nLine 1: const sessionFile = true"
    );
}

#[tokio::test]
async fn rc8_registers_without_rg_and_fails_every_call_to_launch() {
    let tree = fixture();
    // A PATH holding bash and no rg.
    let only_bash = TempTree::new().unwrap();
    std::os::unix::fs::symlink(bash_path(), only_bash.join("bash")).unwrap();
    let setup = || Setup {
        env: vec![("PATH".into(), only_bash.root())],
        ..Setup::default()
    };
    let (registry, outcome) = loaded(&tree, Release::Rc8, setup()).await;
    assert_eq!(outcome, LoadOutcome::Registered);
    for (tool, args) in [
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "x"})),
        ("glob", json!({"pattern": "*"})),
    ] {
        let result = call(&registry, &tree, tool, args).await;
        assert_eq!(code(&result), Some("SEARCH_FAILED"));
        assert_eq!(
            result.text,
            format!("Error: {tool} could not start its search command (ripgrep launch failed)")
        );
    }
    // The seed's release probes and registers nothing instead.
    let (seed, outcome) = loaded(&tree, Release::Seed, setup()).await;
    assert!(
        matches!(outcome, LoadOutcome::RgMissing { .. }),
        "{outcome:?}"
    );
    assert!(seed.tool_definitions().is_empty());
}

/// The bash on this process's `PATH`.
fn bash_path() -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join("bash"))
        .find(|bash| bash.is_file())
        .unwrap()
}

/// `--rg` naming a binary that is not there fails every rc.8 call the
/// same way (rc.8 resolves its rg once per process).
#[tokio::test]
async fn rc8_with_a_missing_rg_binary_fails_every_call_to_launch() {
    let tree = fixture();
    let setup = Setup {
        rg: Some(tree.join("no-such-rg")),
        ..Setup::default()
    };
    let (registry, outcome) = loaded(&tree, Release::Rc8, setup).await;
    assert_eq!(outcome, LoadOutcome::Registered);
    for tool in ["glob", "grep"] {
        let args = json!({"pattern": "x"});
        let result = call(&registry, &tree, tool, args).await;
        assert_eq!(
            result.text,
            format!("Error: {tool} could not start its search command (ripgrep launch failed)")
        );
    }
}

/// A host rg config reaches the seed's rg (its environment passes
/// `RIPGREP_CONFIG_PATH`) and never rc.8's (`--no-config`).
#[tokio::test]
async fn a_host_rg_config_reaches_the_seed_s_rg_and_never_rc8_s() {
    let tree = fixture();
    let config = tree.join("host-ripgreprc");
    std::fs::write(&config, "--max-count=1\n").unwrap();
    let setup = || Setup {
        env: vec![("RIPGREP_CONFIG_PATH".into(), config.display().to_string())],
        ..Setup::default()
    };
    let args = json!({"pattern": "alpha", "path": "src/alpha.ts"});
    let (seed, _) = loaded(&tree, Release::Seed, setup()).await;
    let (rc8, _) = loaded(&tree, Release::Rc8, setup()).await;
    let seed = call(&seed, &tree, "grep", args.clone()).await;
    let rc8 = call(&rc8, &tree, "grep", args).await;
    assert_eq!(
        seed.text,
        "Found 1 match\n\nsrc/alpha.ts\nLine 1: export const alpha = 1"
    );
    assert_eq!(
        rc8.text,
        "Found 2 matches\n\nsrc/alpha.ts\nLine 1: export const alpha = 1\nLine 2: // TODO: refit alpha"
    );
}

/// A stderr budget that cuts rg's words off turns a pattern error into an
/// ordinary failure under rc.8; the seed keeps its executor's budget.
#[tokio::test]
async fn a_small_stderr_budget_reclassifies_a_pattern_error_under_rc8_only() {
    let tree = fixture();
    let config = json!({"sampleOverCapGlobResults": true, "stderrMaxBytes": 16});
    let setup = || Setup {
        config: Some(config.clone()),
        ..Setup::default()
    };
    let (seed, _) = loaded(&tree, Release::Seed, setup()).await;
    let (rc8, _) = loaded(&tree, Release::Rc8, setup()).await;
    let args = json!({"pattern": "(unclosed", "path": "notes.md"});
    let seed = call(&seed, &tree, "grep", args.clone()).await;
    assert_eq!(code(&seed), Some("SEARCH_INVALID_PATTERN"));
    let rc8 = call(&rc8, &tree, "grep", args).await;
    assert_eq!(code(&rc8), Some("SEARCH_FAILED"));
    // Every rg ends this message with "error: unclosed group\n": its last
    // 16 bytes are " unclosed group\n", which names no pattern error.
    assert_eq!(
        rc8.text,
        "Error: grep search failed (exit 2): unclosed group [stderr truncated]"
    );
}

/// Ordinary calls: the two releases give the same page, byte for byte
/// (a multi-file grep's file order is rg's own under rc.8, so those
/// compare file block by file block).
#[tokio::test]
async fn ordinary_calls_give_the_same_page_under_both_releases() {
    let tree = fixture();
    let both = both_releases(&tree).await;
    let calls = [
        ("glob", json!({"pattern": "**/*"})),
        ("glob", json!({"pattern": "*.ts", "path": "src"})),
        ("glob", json!({"pattern": "**/*.md"})),
        ("glob", json!({"pattern": "*.nomatch"})),
        ("grep", json!({"pattern": "alpha", "path": "notes.md"})),
        ("grep", json!({"pattern": "const", "include": "*.ts"})),
        ("grep", json!({"pattern": "alpha"})),
        ("grep", json!({"pattern": "nothing-here"})),
        ("grep", json!({"pattern": "(unclosed"})),
        ("grep", json!({"pattern": "x", "path": "no-such-dir"})),
        ("glob", json!({"pattern": "["})),
    ];
    for (tool, args) in calls {
        let [old, new] = [&both.0, &both.1].map(|r| call(r, &tree, tool, args.clone()));
        let (old, new) = (old.await, new.await);
        assert_eq!(code(&old), code(&new), "{tool} {args}");
        assert_eq!(
            file_blocks(&old.text),
            file_blocks(&new.text),
            "{tool} {args}"
        );
        if tool == "glob" || args.get("path").is_some() {
            assert_eq!(old.text, new.text, "{tool} {args}");
        }
    }
}

async fn both_releases(tree: &TempTree) -> (Registry, Registry) {
    let (seed, outcome) = loaded(tree, Release::Seed, Setup::default()).await;
    assert_eq!(outcome, LoadOutcome::Registered);
    (seed, rc8(tree).await)
}

/// A page's blank-line-separated blocks, sorted: equal for two grep
/// pages that differ only in the order of their files.
fn file_blocks(text: &str) -> Vec<&str> {
    let mut blocks: Vec<&str> = text.split("\n\n").collect();
    blocks.sort_unstable();
    blocks
}

/// The rg 0.1.0-rc.8 ships (`@vscode/ripgrep` 1.18.0's ripgrep 15.0.0),
/// where `.ci/test` installed it: `FS_SEARCH_VSCODE_RG` names it, and
/// then the test requires it. Without the variable (an everyday `cargo
/// test`) there is nothing to run.
fn vscode_rg() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("FS_SEARCH_VSCODE_RG")?);
    assert!(
        path.is_file(),
        "FS_SEARCH_VSCODE_RG names no file: {path:?}"
    );
    Some(path)
}

/// rc.8's own rg words a regex error and a missing path as its users see
/// them (docs/contract.md §12.1).
#[tokio::test]
async fn rc8_s_own_rg_words_its_errors_as_rc8_s_users_see_them() {
    let Some(rg) = vscode_rg() else {
        eprintln!("FS_SEARCH_VSCODE_RG is not set: .ci/test installs rc.8's rg");
        return;
    };
    let tree = fixture();
    let setup = Setup {
        rg: Some(rg),
        ..Setup::default()
    };
    let (registry, _) = loaded(&tree, Release::Rc8, setup).await;
    let invalid = call(&registry, &tree, "grep", json!({"pattern": "(bad"})).await;
    assert_eq!(
        invalid.text,
        "Error: grep pattern rejected by ripgrep: rg: regex parse error:\n    (?:(bad)\n    ^\nerror: unclosed group"
    );
    let missing = call(
        &registry,
        &tree,
        "grep",
        json!({"pattern": "x", "path": "nope"}),
    )
    .await;
    assert_eq!(
        missing.text,
        "Error: grep search failed (exit 2): rg: nope: IO error for operation on nope: No such file or directory (os error 2)"
    );
}
