//! ripgrep and shell faults (CONTRACT §7.2–§7.4, §6.4, §2): rg vanishing
//! after registration, rg killed by a signal, rg failing on an unreadable
//! directory, malformed and truncated `--json` output, a missing working
//! directory, and bash itself missing. Each ends with the contract's
//! coded result, never a panic; partial results are never shown.
//!
//! Faults are injected with fake executables in a directory that is the
//! child's whole `PATH` (or first on it), through the real local executor.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fs_search_engine::{ExecContext, LoadError, Registry, ToolResult};

use fs_search_exec::LocalBashConfig;
use fs_search_test_support::reliability::{FakeRg, load, local_executor, registry_with};
use fs_search_test_support::rg_texts;
use serde_json::{Value, json};

const CONFIG: &str = r#"{"sampleOverCapGlobResults": true}"#;

fn config() -> Value {
    serde_json::from_str(CONFIG).unwrap()
}

/// A work tree with one match for `alpha`.
fn work_tree() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "alpha\n").unwrap();
    work
}

fn exec(work: &std::path::Path) -> ExecContext {
    ExecContext::new("c").with_session(Some("s"), Some(&work.to_string_lossy()))
}

/// A registry whose bash sees `fake` first on its PATH.
async fn registry_over(fake: &FakeRg) -> Registry {
    let bash = local_executor(
        LocalBashConfig::default(),
        &[("PATH", fake.path_env().as_str())],
    )
    .unwrap();
    load(bash, &config()).await.unwrap()
}

fn assert_failure(result: &ToolResult, code: &str, text: &str) {
    assert!(result.is_error, "{result:?}");
    let error = result.error.as_ref().unwrap();
    assert_eq!(
        (error.name(), error.code_str()),
        (Some("SearchError"), Some(code))
    );
    assert_eq!(result.text, text);
    assert!(result.value.is_none() && result.meta.is_none());
}

#[tokio::test]
async fn rg_vanishing_from_path_after_registration_fails_with_the_exit_127_wording() {
    // The child's PATH is one directory holding bash and an rg that runs
    // the real one; rg is then deleted between calls.
    let fake = FakeRg::new("exec \"$REAL_RG\" \"$@\"\n").unwrap();
    fake.link_tool("bash").unwrap();
    let bash = local_executor(
        LocalBashConfig::default(),
        &[("PATH", fake.isolated_path_env().as_str())],
    )
    .unwrap();
    let registry = load(bash, &config()).await.unwrap();
    let work = work_tree();
    let found = registry
        .call("glob", &json!({"pattern": "*.txt"}), &exec(work.path()))
        .await;
    assert_eq!(found.text, "a.txt");
    fake.remove().unwrap();
    for (tool, args) in [
        ("glob", json!({"pattern": "*.txt"})),
        ("grep", json!({"pattern": "alpha"})),
    ] {
        let result = registry.call(tool, &args, &exec(work.path())).await;
        assert_failure(
            &result,
            "SEARCH_FAILED",
            &format!(
                "Error: {tool} requires ripgrep (rg) on the bash executor's PATH: bash: line 1: rg: command not found"
            ),
        );
    }
}

/// Whether this process ignores signal `number` (its children inherit an
/// ignored signal and cannot be killed by it: `nohup` ignores SIGHUP).
fn ignored_here(number: u32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
        .unwrap();
    mask & (1 << (number - 1)) != 0
}

#[tokio::test]
async fn a_fake_rg_killed_by_a_signal_fails_naming_the_signal() {
    for (signal, number) in [("KILL", 9), ("HUP", 1), ("ABRT", 6)] {
        if ignored_here(number) {
            eprintln!("SIG{signal} is ignored by this test process (and so by rg): not tried");
            continue;
        }
        let fake = FakeRg::new(&format!(
            "printf 'partial\\n'\nulimit -c 0\nkill -{signal} $$\n"
        ))
        .unwrap();
        let registry = registry_over(&fake).await;
        let work = work_tree();
        for (tool, args) in [
            ("glob", json!({"pattern": "*"})),
            ("grep", json!({"pattern": "alpha"})),
        ] {
            let result = registry.call(tool, &args, &exec(work.path())).await;
            assert_failure(
                &result,
                "SEARCH_FAILED",
                &format!("Error: {tool} search command was killed by signal SIG{signal}"),
            );
        }
    }
}

/// rg's behaviour on a directory it may not read, injected by a fake:
/// the tests run as root, for whom permission bits do not apply. It prints
/// the results it could find, a diagnostic, and exits 2.
const UNREADABLE_DIR_RG: &str = r#"case "$1" in
  --files) printf 'a.txt\n' ;;
  *) printf '%s\n' '{"type":"match","data":{"path":{"text":"a.txt"},"lines":{"text":"alpha\n"},"line_number":1,"absolute_offset":0,"submatches":[]}}' ;;
esac
echo 'rg: ./locked: Permission denied (os error 13)' >&2
exit 2
"#;

#[tokio::test]
async fn rg_exit_2_on_an_unreadable_directory_fails_the_whole_search_injected_by_a_fake_rg() {
    let fake = FakeRg::new(UNREADABLE_DIR_RG).unwrap();
    let registry = registry_over(&fake).await;
    let work = work_tree();
    for (tool, args) in [
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "alpha"})),
    ] {
        let result = registry.call(tool, &args, &exec(work.path())).await;
        // The partial results rg printed are discarded (§7.4).
        assert_failure(
            &result,
            "SEARCH_FAILED",
            &format!(
                "Error: {tool} search failed (exit 2): rg: ./locked: Permission denied (os error 13)"
            ),
        );
    }
}

#[tokio::test]
async fn real_rg_exit_2_on_an_unreadable_or_missing_target_fails_the_whole_search() {
    let bash = local_executor(LocalBashConfig::default(), &[]).unwrap();
    let registry = load(bash, &config()).await.unwrap();
    let work = work_tree();
    let result = registry
        .call(
            "grep",
            &json!({"pattern": "x", "path": "no-such-dir"}),
            &exec(work.path()),
        )
        .await;
    assert_failure(
        &result,
        "SEARCH_FAILED",
        &format!(
            "Error: grep search failed (exit 2): {}",
            rg_texts::missing_path_error()
        ),
    );
    // A directory without read permission, when permissions apply to this
    // user (they do not for root: that case is the fake-rg test above).
    use std::os::unix::fs::PermissionsExt;
    let locked = work.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::write(locked.join("b.txt"), "alpha\n").unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let enforced = std::fs::read_dir(&locked).is_err();
    let result = registry
        .call("grep", &json!({"pattern": "alpha"}), &exec(work.path()))
        .await;
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o700)).unwrap();
    if enforced {
        assert_eq!(
            result.code().map(|c| c.code()),
            Some("SEARCH_FAILED"),
            "{result:?}"
        );
        assert!(
            result
                .text
                .starts_with("Error: grep search failed (exit 2): "),
            "{}",
            result.text
        );
    } else {
        eprintln!("permission bits are not enforced for this user (root): fake-rg test covers it");
        assert!(!result.is_error, "{result:?}");
        assert!(
            result.text.starts_with("Found 2 matches"),
            "{}",
            result.text
        );
    }
}

/// One match record of real `rg --json` output for the work tree.
async fn real_match_record(work: &std::path::Path) -> String {
    let out = tokio::process::Command::new(
        fs_search_test_support::reliability::fake_rg::real_rg().unwrap(),
    )
    .args(["--json", "--regexp=alpha"])
    .current_dir(work)
    .output()
    .await
    .unwrap();
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .find(|l| l.contains(r#""type":"match""#))
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn malformed_and_truncated_json_lines_from_a_fake_rg_fail_with_every_detail_of_section_6_4() {
    let fake = FakeRg::new("cat \"$STATE/stdout\"\nexit \"$(cat \"$STATE/exit\")\"\n").unwrap();
    let registry = registry_over(&fake).await;
    let work = work_tree();
    let good = real_match_record(work.path()).await;
    let truncated = &good[..good.len() / 2];
    let cases: Vec<(String, &str)> = vec![
        ("not json at all".into(), "a line is not JSON"),
        (truncated.to_owned(), "a line is not JSON"),
        (format!("{good}\n{truncated}"), "a line is not JSON"),
        ("{\"type\":\"match\"".into(), "a line is not JSON"),
        ("42".into(), "a record is not an object"),
        ("\"match\"".into(), "a record is not an object"),
        ("null".into(), "a record is not an object"),
        ("true".into(), "a record is not an object"),
        (r#"{"type":"match"}"#.into(), "a match record has no data"),
        (r#"{"type":"match","data":7}"#.into(), "a match record has no data"),
        (
            r#"{"type":"match","data":{"path":{"bytes":7},"lines":{"text":"x"},"line_number":1}}"#
                .into(),
            "a match record has no path text",
        ),
        (
            r#"{"type":"match","data":{"path":"a.txt","lines":{"text":"x"},"line_number":1}}"#
                .into(),
            "a match record has no path text",
        ),
        (
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"text":"x"},"line_number":"1"}}"#
                .into(),
            "a match record has no line number",
        ),
        (
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":"x","line_number":1}}"#.into(),
            "a match record has no line content",
        ),
        (
            r#"{"type":"match","data":{"path":{"text":"a"},"lines":{"bytes":null},"line_number":1}}"#
                .into(),
            "a match record has neither line text nor bytes",
        ),
    ];
    fake.write_state("exit", b"0").unwrap();
    for (stdout, detail) in cases {
        fake.write_state("stdout", format!("{stdout}\n").as_bytes())
            .unwrap();
        let result = registry
            .call("grep", &json!({"pattern": "alpha"}), &exec(work.path()))
            .await;
        assert_failure(
            &result,
            "SEARCH_FAILED",
            &format!("Error: grep received malformed ripgrep --json output ({detail})"),
        );
    }
    // The same good record alone is a normal match; with exit 1 the
    // output is ignored whatever it holds.
    fake.write_state("stdout", format!("{good}\n").as_bytes())
        .unwrap();
    let result = registry
        .call("grep", &json!({"pattern": "alpha"}), &exec(work.path()))
        .await;
    assert_eq!(result.text, "Found 1 match\n\na.txt\nLine 1: alpha");
    fake.write_state("stdout", b"garbage\n").unwrap();
    fake.write_state("exit", b"1").unwrap();
    let result = registry
        .call("grep", &json!({"pattern": "alpha"}), &exec(work.path()))
        .await;
    assert_eq!(result.text, "No matches found");
}

#[tokio::test]
async fn a_missing_or_unusable_working_directory_fails_with_could_not_start() {
    let bash = local_executor(LocalBashConfig::default(), &[]).unwrap();
    let registry = load(bash, &config()).await.unwrap();
    let work = work_tree();
    let file = work.path().join("a.txt");
    let gone = tempfile::tempdir().unwrap();
    let gone_path = gone.path().to_path_buf();
    drop(gone);
    for dir in [work.path().join("no-such-dir"), gone_path, file] {
        for (tool, args) in [
            ("glob", json!({"pattern": "*"})),
            ("grep", json!({"pattern": "alpha"})),
        ] {
            let result = registry.call(tool, &args, &exec(&dir)).await;
            assert_failure(
                &result,
                "SEARCH_FAILED",
                &format!(
                    "Error: {tool} could not start its search command (unusable working directory or missing shell)"
                ),
            );
        }
    }
}

#[tokio::test]
async fn bash_missing_fails_the_load_or_the_call_with_the_contract_texts() {
    // The executor spawns `bash` by name, found on the child's PATH: a
    // PATH holding only rg has no bash.
    let fake = FakeRg::new("exec \"$REAL_RG\" \"$@\"\n").unwrap();
    let bash = local_executor(
        LocalBashConfig::default(),
        &[("PATH", fake.isolated_path_env().as_str())],
    )
    .unwrap();
    let err = registry_with(bash, None, false, &config())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LoadError::ProbeCouldNotStart(_)));
    assert_eq!(
        err.to_string(),
        "tool-fs-search: ripgrep availability probe could not start: Error: spawn bash ENOENT"
    );
    // bash vanishing after registration.
    fake.link_tool("bash").unwrap();
    let bash = local_executor(
        LocalBashConfig::default(),
        &[("PATH", fake.isolated_path_env().as_str())],
    )
    .unwrap();
    let registry = load(bash, &config()).await.unwrap();
    fake.unlink_tool("bash").unwrap();
    let work = work_tree();
    for (tool, args) in [
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "alpha"})),
    ] {
        let result = registry.call(tool, &args, &exec(work.path())).await;
        assert_failure(
            &result,
            "SEARCH_FAILED",
            &format!(
                "Error: {tool} could not start its search command (unusable working directory or missing shell)"
            ),
        );
    }
}

#[tokio::test]
async fn rg_missing_at_load_registers_nothing_with_the_one_warning() {
    // The child's PATH holds bash but no rg.
    let fake = FakeRg::new("exit 0\n").unwrap();
    fake.link_tool("bash").unwrap();
    fake.remove().unwrap();
    let bash = local_executor(
        LocalBashConfig::default(),
        &[("PATH", fake.isolated_path_env().as_str())],
    )
    .unwrap();
    let (registry, outcome) = registry_with(bash, None, false, &config()).await.unwrap();
    assert_eq!(
        outcome,
        fs_search_engine::LoadOutcome::RgMissing {
            warning: "tool-fs-search: ripgrep (rg) not found on the bash executor PATH; glob/grep tools not registered".to_owned()
        }
    );
    assert!(registry.tool_definitions().is_empty() && registry.prompt_sections().is_empty());
    let result = registry
        .call("glob", &json!({"pattern": "*"}), &ExecContext::new("c"))
        .await;
    assert_eq!(result.text, "Error: unknown tool \"glob\"");
    assert_eq!(result.code().map(|c| c.code()), Some("UNKNOWN_TOOL"));
}
