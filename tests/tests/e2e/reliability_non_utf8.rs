//! Non-UTF-8 names and lines (CONTRACT §0.2, §1.3 lossy decoding, §6.4
//! step 8): Latin-1 and broken UTF-8 in file names, directory names and
//! matched lines, through both tools with real bash and real rg. Nothing
//! panics; glob shows names lossily (invalid sequences become U+FFFD, as
//! the executor decodes stdout); grep decodes a base64 `path.bytes` the
//! same way (§0.2) and shows a non-UTF-8 line as the placeholder
//! `(line is not valid UTF-8)`.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use fs_search_engine::{ExecContext, Registry, ToolResult};

use fs_search_exec::LocalBashConfig;
use fs_search_test_support::reliability::{load, local_executor};
use serde_json::{Value, json};

fn write(root: &Path, name: &[u8], content: &[u8]) {
    let path = root.join(OsStr::from_bytes(name));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// One directory per case, so each call's output order is fixed.
fn tree() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    write(r, b"latin1/caf\xe9.txt", b"caf\xe9 alpha\n");
    write(r, b"broken/bad\xff\xfe.txt", b"alpha ok\n");
    write(r, b"trunc/x\xe2\x82.txt", b"alpha \xe2\x82\nalpha two\n");
    write(
        r,
        b"valid/\xc3\xa9t\xc3\xa9.txt",
        b"alpha \xc3\xa9t\xc3\xa9\n",
    );
    write(r, b"dir\xe9/inner.txt", b"alpha inside\n");
    write(r, b"crlf/w.txt", b"alpha \xe9\r\n");
    root
}

async fn registry() -> Registry {
    let bash = local_executor(LocalBashConfig::default(), &[]).unwrap();
    load(bash, &json!({"sampleOverCapGlobResults": true}))
        .await
        .unwrap()
}

async fn call(registry: &Registry, root: &Path, tool: &str, args: Value) -> ToolResult {
    let exec = ExecContext::new("c").with_session(Some("s"), Some(&root.to_string_lossy()));
    let result = registry.call(tool, &args, &exec).await;
    assert!(!result.is_error, "{tool} {args}: {}", result.text);
    // The card is built from the same strings without trouble.
    assert!(serde_json::to_string(&result.meta).is_ok());
    result
}

#[tokio::test]
async fn glob_shows_latin1_and_broken_utf8_names_lossily() {
    let root = tree();
    let registry = registry().await;
    for (path, shown) in [
        ("latin1", "latin1/caf\u{FFFD}.txt"),
        ("broken", "broken/bad\u{FFFD}\u{FFFD}.txt"),
        ("trunc", "trunc/x\u{FFFD}.txt"),
        ("valid", "valid/été.txt"),
    ] {
        let result = call(
            &registry,
            root.path(),
            "glob",
            json!({"pattern": "*", "path": path}),
        )
        .await;
        assert_eq!(result.text, shown);
    }
    let all = call(
        &registry,
        root.path(),
        "glob",
        json!({"pattern": "**/*.txt"}),
    )
    .await;
    let mut lines: Vec<&str> = all.text.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        [
            "broken/bad\u{FFFD}\u{FFFD}.txt",
            "crlf/w.txt",
            "dir\u{FFFD}/inner.txt",
            "latin1/caf\u{FFFD}.txt",
            "trunc/x\u{FFFD}.txt",
            "valid/été.txt",
        ]
    );
}

#[tokio::test]
async fn grep_decodes_non_utf8_names_lossily_and_replaces_non_utf8_lines() {
    let root = tree();
    let registry = registry().await;
    for (path, text) in [
        (
            "latin1",
            "Found 1 match\n\nlatin1/caf\u{FFFD}.txt\nLine 1: (line is not valid UTF-8)",
        ),
        (
            "broken",
            "Found 1 match\n\nbroken/bad\u{FFFD}\u{FFFD}.txt\nLine 1: alpha ok",
        ),
        (
            "trunc",
            "Found 2 matches\n\ntrunc/x\u{FFFD}.txt\nLine 1: (line is not valid UTF-8)\nLine 2: alpha two",
        ),
        ("valid", "Found 1 match\n\nvalid/été.txt\nLine 1: alpha été"),
        (
            "crlf",
            "Found 1 match\n\ncrlf/w.txt\nLine 1: (line is not valid UTF-8)",
        ),
    ] {
        let result = call(
            &registry,
            root.path(),
            "grep",
            json!({"pattern": "alpha", "path": path}),
        )
        .await;
        assert_eq!(result.text, text);
    }
    // A non-UTF-8 directory name on the way to a file.
    let result = call(&registry, root.path(), "grep", json!({"pattern": "inside"})).await;
    assert_eq!(
        result.text,
        "Found 1 match\n\ndir\u{FFFD}/inner.txt\nLine 1: alpha inside"
    );
    // The whole tree at once: every match, whatever rg's order.
    let result = call(&registry, root.path(), "grep", json!({"pattern": "alpha"})).await;
    assert!(
        result.text.starts_with("Found 7 matches\n\n"),
        "{}",
        result.text
    );
}

#[tokio::test]
async fn names_that_decode_to_the_same_text_stay_separate_results_shown_alike() {
    // `a\xff.txt` and `a\xfe.txt` both display as `a\u{FFFD}.txt`: glob
    // lists two identical lines; grep groups by the displayed path, so
    // both files' matches share one group (CONTRACT §6.5 step 5).
    let root = tempfile::tempdir().unwrap();
    write(root.path(), b"twins/a\xff.txt", b"alpha one\n");
    write(root.path(), b"twins/a\xfe.txt", b"alpha two\n");
    let registry = registry().await;
    let result = call(
        &registry,
        root.path(),
        "glob",
        json!({"pattern": "*", "path": "twins"}),
    )
    .await;
    assert_eq!(result.text, "twins/a\u{FFFD}.txt\ntwins/a\u{FFFD}.txt");
    let result = call(
        &registry,
        root.path(),
        "grep",
        json!({"pattern": "alpha", "path": "twins"}),
    )
    .await;
    let ordered = |first: &str, second: &str| {
        format!(
            "Found 2 matches\n\ntwins/a\u{FFFD}.txt\nLine 1: alpha {first}\nLine 1: alpha {second}"
        )
    };
    assert!(
        result.text == ordered("one", "two") || result.text == ordered("two", "one"),
        "{}",
        result.text
    );
}
