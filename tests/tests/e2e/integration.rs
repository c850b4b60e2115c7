//! CONTRACT §10.14 (I1–I15) and end-to-end behaviour through the registry
//! with the real local bash executor, real ripgrep and real temp trees.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::sync::Arc;

use fs_search_engine::value::ToolValue;
use fs_search_engine::{ExecContext, Host, LoadOutcome, Registry, SpillStore, ToolResult};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor, LocalSpillStore};
use fs_search_test_support::rg_texts;
use fs_search_test_support::tree::{TempTree, Y2000, Y2020};
use serde_json::{Value, json};

/// The §10.14 fixture tree.
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
    .file(".hidden.ts", b"hidden\n", Y2020 + 20)
    .unwrap()
    .file(".git/config.ts", b"never listed\n", Y2020 + 30)
    .unwrap()
    .file("spaced dir/wei'rd \"name\".ts", b"odd\n", Y2020 + 40)
    .unwrap();
    // rg sorts each directory's entries by their own mtime, directories
    // included: pin them too.
    tree.touch("src", Y2000).unwrap();
    tree.touch(".git", Y2020 + 30).unwrap();
    tree.touch("spaced dir", Y2020 + 40).unwrap();
    tree
}

async fn registry_with(
    tree: &TempTree,
    config: Value,
    store: Option<Arc<dyn SpillStore>>,
    env: &[(&str, &str)],
) -> (Registry, LoadOutcome) {
    let bash = LocalBashExecutor::new(LocalBashConfig {
        cwd: Some(tree.root()),
        timeout_ms: 20000,
        env: env
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect::<BTreeMap<_, _>>(),
        ..LocalBashConfig::default()
    })
    .unwrap();
    let mut registry = Registry::new(Host {
        bash: Some(Arc::new(bash)),
        spill_store: store,
        timeout_policy: true,
    });
    let outcome = registry.load_fs_search(&config).await.unwrap();
    (registry, outcome)
}

async fn registry(tree: &TempTree) -> Registry {
    let (registry, outcome) =
        registry_with(tree, json!({"sampleOverCapGlobResults": true}), None, &[]).await;
    assert_eq!(
        outcome,
        LoadOutcome::Registered,
        "rg must be installed for these tests"
    );
    registry
}

async fn call(registry: &Registry, tool: &str, args: Value) -> ToolResult {
    registry
        .call(tool, &args, &ExecContext::new("call-int"))
        .await
}

fn code(result: &ToolResult) -> (Option<&str>, Option<&str>) {
    result
        .error
        .as_ref()
        .map_or((None, None), |e| (e.name(), e.code_str()))
}

/// CONTRACT §10.14 I1
#[tokio::test]
async fn discovers_files_by_pattern_sorted_by_mtime_hidden_included_git_excluded() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "glob",
        json!({"pattern": "**/*.ts"}),
    )
    .await;
    let lines: Vec<&str> = result.text.lines().collect();
    let alpha = lines.iter().position(|l| *l == "src/alpha.ts").unwrap();
    let beta = lines.iter().position(|l| *l == "src/beta.ts").unwrap();
    assert!(alpha < beta);
    assert!(lines.contains(&".hidden.ts"));
    assert!(lines.contains(&"spaced dir/wei'rd \"name\".ts"));
    assert!(!result.text.contains(".git/config.ts") && !result.text.contains("notes.md"));
    // Fits the cap: exactly the mtime order, no footer.
    assert_eq!(
        result.text,
        "src/alpha.ts\nsrc/beta.ts\n.hidden.ts\nspaced dir/wei'rd \"name\".ts"
    );
}

/// CONTRACT §10.14 I2
#[tokio::test]
async fn scopes_to_a_directory_search_root() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "glob",
        json!({"pattern": "*.ts", "path": "src"}),
    )
    .await;
    let mut lines: Vec<&str> = result.text.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["src/alpha.ts", "src/beta.ts"]);
    match &result.value {
        Some(ToolValue::Glob(v)) => assert_eq!(v.root, "src"),
        other => panic!("{other:?}"),
    }
}

/// CONTRACT §10.14 I3
#[tokio::test]
async fn reports_zero_discoveries_as_no_files_found() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "glob",
        json!({"pattern": "*.nomatch"}),
    )
    .await;
    assert_eq!(
        (result.text.as_str(), result.is_error),
        ("No files found", false)
    );
}

/// CONTRACT §10.14 I4
#[tokio::test]
async fn excludes_vcs_internals_even_when_the_search_root_is_the_vcs_directory() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "glob",
        json!({"pattern": "*", "path": ".git"}),
    )
    .await;
    assert_eq!(result.text, "No files found");
}

/// CONTRACT §10.14 I5
#[tokio::test]
async fn classifies_an_invalid_glob_as_search_invalid_pattern() {
    let tree = fixture();
    let result = call(&registry(&tree).await, "glob", json!({"pattern": "["})).await;
    assert_eq!(
        code(&result),
        (Some("SearchError"), Some("SEARCH_INVALID_PATTERN"))
    );
    assert_eq!(
        result.text,
        format!(
            "Error: glob pattern rejected by ripgrep: {}",
            rg_texts::unclosed_class_glob_error()
        )
    );
}

/// CONTRACT §10.14 I6
#[tokio::test]
async fn greps_a_directory_tree_with_grouped_line_numbered_output() {
    let tree = fixture();
    let result = call(&registry(&tree).await, "grep", json!({"pattern": "alpha"})).await;
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
}

/// CONTRACT §10.14 I7
#[tokio::test]
async fn greps_a_single_file_target() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "grep",
        json!({"pattern": "alpha", "path": "notes.md"}),
    )
    .await;
    assert_eq!(
        result.text,
        "Found 1 match\n\nnotes.md\nLine 1: alpha appears here too"
    );
}

/// CONTRACT §10.14 I8
#[tokio::test]
async fn greps_a_directory_target_with_an_include_filter() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "grep",
        json!({"pattern": "alpha", "path": ".", "include": "*.ts"}),
    )
    .await;
    assert!(result.text.contains("alpha.ts"));
    assert!(!result.text.contains("notes.md"));
    // With path ".", rg prints "./"-prefixed paths and they stay as printed.
    assert!(result.text.contains("./src/alpha.ts\n"), "{}", result.text);
}

/// CONTRACT §10.14 I9
#[tokio::test]
async fn a_hostile_pattern_stays_inert() {
    let tree = fixture();
    let canary = tree.join("pwned");
    let pattern = format!("$(touch {})", canary.display());
    let result = call(&registry(&tree).await, "grep", json!({"pattern": pattern})).await;
    assert_eq!(
        (result.text.as_str(), result.is_error),
        ("No matches found", false)
    );
    assert!(!canary.exists());
}

/// CONTRACT §10.14 I10
#[tokio::test]
async fn a_leading_dash_pattern_is_a_pattern_not_a_flag() {
    let tree = fixture();
    tree.file("dashes.txt", b"value --flag value\n", Y2020)
        .unwrap();
    let result = call(
        &registry(&tree).await,
        "grep",
        json!({"pattern": "--flag", "path": "dashes.txt"}),
    )
    .await;
    assert_eq!(
        result.text,
        "Found 1 match\n\ndashes.txt\nLine 1: value --flag value"
    );
}

/// CONTRACT §10.14 I11
#[tokio::test]
async fn classifies_a_real_rg_regex_error_as_search_invalid_pattern() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "grep",
        json!({"pattern": "(unclosed"}),
    )
    .await;
    assert_eq!(
        code(&result),
        (Some("SearchError"), Some("SEARCH_INVALID_PATTERN"))
    );
    assert_eq!(
        result.text,
        format!(
            "Error: grep pattern rejected by ripgrep: {}",
            rg_texts::unclosed_group_regex_error()
        )
    );
}

/// CONTRACT §10.14 I12
#[tokio::test]
async fn classifies_a_missing_target_as_search_failed() {
    let tree = fixture();
    let result = call(
        &registry(&tree).await,
        "grep",
        json!({"pattern": "x", "path": "no-such-dir"}),
    )
    .await;
    assert_eq!(code(&result), (Some("SearchError"), Some("SEARCH_FAILED")));
    assert_eq!(
        result.text,
        format!(
            "Error: grep search failed (exit 2): {}",
            rg_texts::missing_path_error()
        )
    );
}

/// CONTRACT §10.14 I13
#[tokio::test]
async fn resolves_the_search_in_the_session_workspace() {
    let tree = fixture();
    let session = TempTree::new().unwrap();
    session
        .file("only-here.ts", b"const sessionFile = true\n", Y2020)
        .unwrap();
    let registry = registry(&tree).await;
    let exec = ExecContext::new("c").with_session(Some("session-int"), Some(&session.root()));
    let glob = registry
        .call("glob", &json!({"pattern": "*.ts"}), &exec)
        .await;
    assert_eq!(glob.text, "only-here.ts");
    let grep = registry
        .call("grep", &json!({"pattern": "sessionFile"}), &exec)
        .await;
    assert!(
        grep.text
            .contains("only-here.ts\nLine 1: const sessionFile = true")
    );
}

/// CONTRACT §10.14 I14
#[tokio::test]
async fn a_pre_aborted_registry_call_is_aborted_before_dispatch() {
    let tree = fixture();
    let registry = registry(&tree).await;
    let exec = ExecContext::new("c");
    exec.signal.cancel();
    let result = registry.call("glob", &json!({"pattern": "*"}), &exec).await;
    assert_eq!(
        code(&result),
        (Some("AbortError"), Some("ABORTED_BEFORE_DISPATCH"))
    );
}

/// CONTRACT §10.14 I15
#[tokio::test]
async fn an_unusable_session_cwd_is_search_failed() {
    let tree = fixture();
    let registry = registry(&tree).await;
    let missing = tree.join("does-not-exist").to_string_lossy().into_owned();
    let exec = ExecContext::new("c").with_session(Some("s"), Some(&missing));
    let result = registry.call("grep", &json!({"pattern": "x"}), &exec).await;
    assert_eq!(code(&result), (Some("SearchError"), Some("SEARCH_FAILED")));
    assert_eq!(
        result.text,
        "Error: grep could not start its search command (unusable working directory or missing shell)"
    );
}

/// Spill on disk: the full sorted list lands in a 0600 file under a 0700
/// session directory, and the footer names it.
#[tokio::test]
async fn an_over_cap_glob_spills_the_full_sorted_list_to_disk() {
    let tree = fixture();
    let spill_root = tempfile::tempdir().unwrap();
    let store: Arc<dyn SpillStore> = Arc::new(LocalSpillStore::new(Some(spill_root.path())));
    let config = json!({"sampleOverCapGlobResults": false, "globMaxResults": 2});
    let (registry, _) = registry_with(&tree, config, Some(store), &[]).await;
    let exec = ExecContext::new("c").with_session(Some("session-disk"), Some(&tree.root()));
    let result = registry
        .call("glob", &json!({"pattern": "*.ts"}), &exec)
        .await;
    let spill = result.spill.clone().expect("a spill");
    assert_eq!(
        result.text,
        format!(
            "src/alpha.ts\nsrc/beta.ts\n\n(Showing 2 of 4 paths. Full sorted result stored at: {}. Use read with offset/limit, or grep this path to search within it.)",
            spill.locator
        )
    );
    let content = std::fs::read_to_string(&spill.locator).unwrap();
    assert_eq!(
        content,
        "src/alpha.ts\nsrc/beta.ts\n.hidden.ts\nspaced dir/wei'rd \"name\".ts"
    );
    assert_eq!(spill.bytes, content.len() as u64);
    let file = std::path::Path::new(&spill.locator);
    assert_eq!(
        std::fs::metadata(file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(file.parent().unwrap())
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o700
    );
    assert!(file.starts_with(spill_root.path()));
}

/// A capped grep with a real spill store: the spilled file holds every
/// previewed match.
#[tokio::test]
async fn an_over_cap_grep_spills_every_previewed_match() {
    let tree = fixture();
    let spill_root = tempfile::tempdir().unwrap();
    let store: Arc<dyn SpillStore> = Arc::new(LocalSpillStore::new(Some(spill_root.path())));
    let config =
        json!({"sampleOverCapGlobResults": true, "grepMaxMatches": 1, "grepMaxLineBytes": 10});
    let (registry, _) = registry_with(&tree, config, Some(store), &[]).await;
    let exec = ExecContext::new("c").with_session(Some("s"), Some(&tree.root()));
    let result = registry
        .call("grep", &json!({"pattern": "alpha", "path": "src"}), &exec)
        .await;
    let spill = result.spill.clone().expect("a spill");
    assert_eq!(
        result.text,
        format!(
            "Found 1 of 2 matches\n\nsrc/alpha.ts\nLine 1: export con (line truncated)\n\n(Full grep result stored at: {}. Use read with offset/limit, or grep this path to search within it.)",
            spill.locator
        )
    );
    assert_eq!(
        std::fs::read_to_string(&spill.locator).unwrap(),
        "Found 2 matches\n\nsrc/alpha.ts\nLine 1: export con (line truncated)\nLine 2: // TODO: r (line truncated)"
    );
}

/// The sampled footers with real rg output (Appendix A.1 shape).
#[tokio::test]
async fn a_sampled_over_cap_glob_names_the_unreached_entries() {
    let tree = fixture();
    tree.file("lib/util.js", b"u\n", Y2020 + 50).unwrap();
    tree.file("lib/more.js", b"m\n", Y2020 + 60).unwrap();
    tree.touch("lib", Y2020 + 60).unwrap();
    let config = json!({"sampleOverCapGlobResults": true, "globMaxResults": 3});
    let (registry, _) = registry_with(&tree, config, None, &[]).await;
    let result = call(&registry, "glob", json!({"pattern": "*"})).await;
    assert_eq!(
        result.text,
        "src/alpha.ts\nnotes.md\n.hidden.ts\n\n(Showing 3 of 7 paths, sampled across 3 of the 5 top-level entries this pattern matched instead of taken in modification-time order. Narrow path to inspect a specific subtree. The complete result could not be saved; narrow pattern or path to see more.)"
    );
    assert_eq!(
        result.warnings,
        ["tool-fs-search: no session owner for glob result; complete result not saved"]
    );
}

/// Non-UTF-8: a Latin-1 line shows the placeholder; a Latin-1 file name
/// is shown lossily by both tools (CONTRACT §0.2).
#[tokio::test]
async fn non_utf8_names_and_lines_display_lossily() {
    let tree = fixture();
    tree.file("latin1.txt", b"caf\xe9 alpha\n", Y2020).unwrap();
    let name = std::ffi::OsStr::from_bytes_compat(b"n\xe9.txt");
    std::fs::write(tree.path().join(name), b"needle\n").unwrap();
    let registry = registry(&tree).await;
    let grep = call(
        &registry,
        "grep",
        json!({"pattern": "alpha", "path": "latin1.txt"}),
    )
    .await;
    assert_eq!(
        grep.text,
        "Found 1 match\n\nlatin1.txt\nLine 1: (line is not valid UTF-8)"
    );
    let grep = call(&registry, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(grep.text, "Found 1 match\n\nn\u{FFFD}.txt\nLine 1: needle");
    let glob = call(&registry, "glob", json!({"pattern": "n*.txt"})).await;
    assert_eq!(glob.text, "n\u{FFFD}.txt");
}

trait FromBytesCompat {
    fn from_bytes_compat(bytes: &[u8]) -> &std::ffi::OsStr;
}

impl FromBytesCompat for std::ffi::OsStr {
    fn from_bytes_compat(bytes: &[u8]) -> &std::ffi::OsStr {
        std::os::unix::ffi::OsStrExt::from_bytes(bytes)
    }
}

/// The probe, with rg absent from the executor's PATH, registers nothing
/// and warns exactly once.
#[tokio::test]
async fn the_probe_registers_nothing_when_rg_is_absent_from_path() {
    let tree = fixture();
    let bin = tempfile::tempdir().unwrap();
    let bash = which("bash");
    std::os::unix::fs::symlink(&bash, bin.path().join("bash")).unwrap();
    let path = bin.path().to_string_lossy().into_owned();
    let (registry, outcome) = registry_with(
        &tree,
        json!({"sampleOverCapGlobResults": true}),
        None,
        &[("PATH", &path)],
    )
    .await;
    assert_eq!(
        outcome,
        LoadOutcome::RgMissing {
            warning: "tool-fs-search: ripgrep (rg) not found on the bash executor PATH; glob/grep tools not registered".into()
        }
    );
    assert!(registry.tool_definitions().is_empty() && registry.prompt_sections().is_empty());
    let result = call(&registry, "grep", json!({"pattern": "x"})).await;
    assert_eq!(result.text, "Error: unknown tool \"grep\"");
}

fn which(program: &str) -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} not on PATH"))
}

/// grep honours ignore files and skips hidden and binary files, unlike glob.
#[tokio::test]
async fn grep_uses_ripgrep_defaults_while_glob_lists_everything() {
    let tree = fixture();
    tree.file(".gitignore", b"ignored.txt\n", Y2020).unwrap();
    tree.file("ignored.txt", b"needle\n", Y2020).unwrap();
    tree.file(".hidden-needle.txt", b"needle\n", Y2020).unwrap();
    tree.file("binary.bin", b"needle\0\x01\x02\n", Y2020)
        .unwrap();
    tree.file("plain.txt", b"needle\n", Y2020).unwrap();
    let registry = registry(&tree).await;
    let grep = call(&registry, "grep", json!({"pattern": "needle"})).await;
    assert_eq!(grep.text, "Found 1 match\n\nplain.txt\nLine 1: needle");
    let glob = call(&registry, "glob", json!({"pattern": "*needle*"})).await;
    assert_eq!(glob.text, ".hidden-needle.txt");
    let glob = call(&registry, "glob", json!({"pattern": "ignored.txt"})).await;
    assert_eq!(glob.text, "ignored.txt");
}
