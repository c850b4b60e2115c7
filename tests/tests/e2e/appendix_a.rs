//! CONTRACT Appendix A: the reference implementation's observed outputs,
//! reproduced with real bash and rg on a tree rebuilt to give the same
//! modification-time order. (Appendix A.5/A.6 depend on rg's unordered
//! multi-threaded grep output and are covered by transcripts instead.)

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::Arc;

use fs_search_engine::{ExecContext, Host, Registry, ToolResult};

use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
use fs_search_test_support::rg_texts;
use fs_search_test_support::tree::{TempTree, Y2020};
use serde_json::{Value, json};

/// The Appendix A tree, oldest first in rg's per-directory mtime order.
fn tree() -> TempTree {
    let tree = TempTree::new().unwrap();
    let files: [(&str, &[u8]); 12] = [
        ("src/sub/deep.ts", b"deep\n"),
        ("src/alpha.ts", b"export const alpha = 1\n"),
        ("src/beta.tsx", b"beta\n"),
        ("lib/util.js", b"lib alpha one\n"),
        ("lib/helper.ts", b"helper\n"),
        ("docs/readme.md", b"# docs\nalpha docs\n"),
        ("spaced dir/file.ts", b"spaced\n"),
        ("notes.md", b"notes\n"),
        (".hidden.ts", b"hidden\n"),
        ("uni.txt", "héllo wörld alpha\n".as_bytes()),
        ("long.txt", b"abcdefghij alpha klmnopqrstuvwxyz\n"),
        ("root.ts", b"root\n"),
    ];
    for (i, (path, content)) in files.iter().enumerate() {
        tree.file(path, content, Y2020 + i as u64 * 10).unwrap();
    }
    for (dir, at) in [
        ("src/sub", 0),
        ("src", 0),
        ("lib", 30),
        ("docs", 50),
        ("spaced dir", 60),
    ] {
        tree.touch(dir, Y2020 + at).unwrap();
    }
    tree
}

async fn call(tree: &TempTree, tool: &str, args: Value, config: Value) -> ToolResult {
    let bash = LocalBashExecutor::new(LocalBashConfig {
        cwd: Some(tree.root()),
        ..LocalBashConfig::default()
    })
    .unwrap();
    let mut registry = Registry::new(Host {
        bash: Some(Arc::new(bash)),
        spill_store: None,
        timeout_policy: true,
    });
    registry.load_fs_search(&config).await.unwrap();
    registry.call(tool, &args, &ExecContext::new("a")).await
}

fn info(result: &ToolResult) -> Option<(Option<&str>, Option<&str>)> {
    result.error.as_ref().map(|e| (e.name(), e.code_str()))
}

/// CONTRACT A.1
#[tokio::test]
async fn a1_sampled_glob_with_unreached_entries() {
    let tree = tree();
    let result = call(
        &tree,
        "glob",
        json!({"pattern": "*"}),
        json!({"sampleOverCapGlobResults": true, "globMaxResults": 5}),
    )
    .await;
    assert_eq!(
        result.text,
        "src/sub/deep.ts\nlib/util.js\ndocs/readme.md\nspaced dir/file.ts\nnotes.md\n\n(Showing 5 of 12 paths, sampled across 5 of the 9 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. The complete result could not be saved; narrow pattern or path to see more.)"
    );
    assert!(!result.is_error);
}

/// CONTRACT A.2
#[tokio::test]
async fn a2_modification_time_head() {
    let tree = tree();
    let result = call(
        &tree,
        "glob",
        json!({"pattern": "*"}),
        json!({"sampleOverCapGlobResults": false, "globMaxResults": 5}),
    )
    .await;
    assert_eq!(
        result.text,
        "src/sub/deep.ts\nsrc/alpha.ts\nsrc/beta.tsx\nlib/util.js\nlib/helper.ts\n\n(Showing 5 of 12 paths. The complete result could not be saved; narrow pattern or path to see more.)"
    );
}

/// CONTRACT A.3
#[tokio::test]
async fn a3_sample_reaching_every_entry() {
    let tree = tree();
    let result = call(
        &tree,
        "glob",
        json!({"pattern": "*"}),
        json!({"sampleOverCapGlobResults": true, "globMaxResults": 10}),
    )
    .await;
    assert_eq!(
        result.text,
        "src/sub/deep.ts\nsrc/alpha.ts\nlib/util.js\ndocs/readme.md\nspaced dir/file.ts\nnotes.md\n.hidden.ts\nuni.txt\nlong.txt\nroot.ts\n\n(Showing 10 of 12 paths, sampled across 9 of the 9 top-level entries this pattern matched instead of taken in modification-time order. The complete result could not be saved; narrow pattern or path to see more.)"
    );
}

/// CONTRACT A.4
#[tokio::test]
async fn a4_sampling_relative_to_the_search_root() {
    let tree = tree();
    let result = call(
        &tree,
        "glob",
        json!({"pattern": "*", "path": "src"}),
        json!({"sampleOverCapGlobResults": true, "globMaxResults": 2}),
    )
    .await;
    assert_eq!(
        result.text,
        "src/sub/deep.ts\nsrc/alpha.ts\n\n(Showing 2 of 3 paths. The complete result could not be saved; narrow pattern or path to see more.)"
    );
}

/// CONTRACT A.7
#[tokio::test]
async fn a7_utf8_boundary_preview() {
    let tree = tree();
    let result = call(
        &tree,
        "grep",
        json!({"pattern": "alpha", "path": "uni.txt"}),
        json!({"sampleOverCapGlobResults": true, "grepMaxLineBytes": 10}),
    )
    .await;
    assert_eq!(
        result.text,
        "Found 1 match\n\nuni.txt\nLine 1: héllo wö (line truncated)"
    );
}

/// CONTRACT A.8
#[tokio::test]
async fn a8_non_utf8_line_placeholder() {
    let tree = tree();
    tree.file("latin1.txt", b"caf\xe9 alpha\n", Y2020).unwrap();
    let result = call(
        &tree,
        "grep",
        json!({"pattern": "alpha", "path": "latin1.txt"}),
        json!({"sampleOverCapGlobResults": true}),
    )
    .await;
    assert_eq!(
        result.text,
        "Found 1 match\n\nlatin1.txt\nLine 1: (line is not valid UTF-8)"
    );
}

/// CONTRACT A.9
#[tokio::test]
async fn a9_invalid_glob() {
    let tree = tree();
    let result = call(
        &tree,
        "glob",
        json!({"pattern": "["}),
        json!({"sampleOverCapGlobResults": true}),
    )
    .await;
    assert_eq!(
        result.text,
        format!(
            "Error: glob pattern rejected by ripgrep: {}",
            rg_texts::unclosed_class_glob_error()
        )
    );
    assert_eq!(
        info(&result),
        Some((Some("SearchError"), Some("SEARCH_INVALID_PATTERN")))
    );
}

/// CONTRACT A.10
#[tokio::test]
async fn a10_invalid_regex() {
    let tree = tree();
    let result = call(
        &tree,
        "grep",
        json!({"pattern": "(unclosed"}),
        json!({"sampleOverCapGlobResults": true}),
    )
    .await;
    assert_eq!(
        result.text,
        format!(
            "Error: grep pattern rejected by ripgrep: {}",
            rg_texts::unclosed_group_regex_error()
        )
    );
    assert_eq!(
        info(&result),
        Some((Some("SearchError"), Some("SEARCH_INVALID_PATTERN")))
    );
}

/// CONTRACT A.11
#[tokio::test]
async fn a11_missing_pattern() {
    let tree = tree();
    let result = call(
        &tree,
        "glob",
        json!({}),
        json!({"sampleOverCapGlobResults": true}),
    )
    .await;
    assert_eq!(
        result.text,
        "Error: invalid arguments: missing required property \"pattern\""
    );
    assert_eq!(
        info(&result),
        Some((Some("ToolArgsError"), Some("INVALID_ARGS")))
    );
}

/// CONTRACT A.12
#[tokio::test]
async fn a12_comma_separated_include() {
    let tree = tree();
    let result = call(
        &tree,
        "grep",
        json!({"pattern": "alpha", "include": "a,b"}),
        json!({"sampleOverCapGlobResults": true}),
    )
    .await;
    assert_eq!(
        result.text,
        "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)"
    );
    assert_eq!(info(&result), Some((None, None)));
}

/// CONTRACT A.13
#[tokio::test]
async fn a13_missing_target() {
    let tree = tree();
    let result = call(
        &tree,
        "grep",
        json!({"pattern": "x", "path": "no-such-dir"}),
        json!({"sampleOverCapGlobResults": true}),
    )
    .await;
    assert_eq!(
        result.text,
        format!(
            "Error: grep search failed (exit 2): {}",
            rg_texts::missing_path_error()
        )
    );
    assert_eq!(
        info(&result),
        Some((Some("SearchError"), Some("SEARCH_FAILED")))
    );
}
