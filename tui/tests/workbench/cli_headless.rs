//! The headless command line as scripts use it (docs/design.md §2): the built
//! `workbench` binary with real bash and real rg on a temp tree.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{Value, json};

pub(crate) const SAMPLING: &str = r#"{"sampleOverCapGlobResults":true}"#;

pub(crate) fn workbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .output()
        .unwrap()
}

/// `workbench call TOOL --workdir DIR --args ARGS EXTRA...`.
///
/// rg's file order is pinned (`--sort=path` in its config file): rg lists
/// files in its threads' order, and tests compare pages of two calls.
pub(crate) fn call(dir: &tempfile::TempDir, tool: &str, args: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(["call", tool, "--workdir", root(dir.path()), "--args", args])
        .args(extra)
        .env("RIPGREP_CONFIG_PATH", crate::mcp::sorted_rg_config())
        .output()
        .unwrap()
}

pub(crate) fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (path, content) in [
        ("src/alpha.ts", "export const alpha = 1\n"),
        ("src/beta.ts", "export const beta = 2\n"),
        ("notes.md", "alpha appears here too\n"),
    ] {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    dir
}

pub(crate) fn root(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

pub(crate) fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}\nstderr: {}", stdout(out), stderr(out)))
}

#[test]
fn call_prints_exactly_the_model_visible_text() {
    let dir = tree();
    let out = call(
        &dir,
        "grep",
        r#"{"pattern":"alpha","path":"notes.md"}"#,
        &["--config", SAMPLING],
    );
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        stdout(&out),
        "Found 1 match\n\nnotes.md\nLine 1: alpha appears here too"
    );
}

#[test]
fn call_json_has_the_documented_shape() {
    let dir = tree();
    let out = call(
        &dir,
        "glob",
        r#"{"pattern":"*.ts"}"#,
        &["--config", SAMPLING, "--no-spill", "--json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let object = json_of(&out);
    let keys: Vec<&str> = object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "tool",
            "args",
            "isError",
            "text",
            "error",
            "value",
            "meta",
            "spill",
            "warnings",
            "durationMs"
        ]
    );
    assert_eq!(object["tool"], "glob");
    assert_eq!(object["args"], json!({"pattern": "*.ts"}));
    assert_eq!(object["isError"], false);
    assert_eq!(object["error"], Value::Null);
    assert_eq!(object["spill"], Value::Null);
    assert_eq!(object["value"]["root"], ".");
    let mut paths: Vec<String> = serde_json::from_value(object["value"]["paths"].clone()).unwrap();
    paths.sort();
    assert_eq!(paths, ["src/alpha.ts", "src/beta.ts"]);
    assert_eq!(object["meta"]["shape"], "paths");
    assert_eq!(object["meta"]["total"], 2);
    assert!(object["durationMs"].as_f64().unwrap() >= 0.0);
}

/// A tree concentrated in `big/a`, every file and directory with its own
/// modification time (oldest first as listed), so rg's order is pinned.
fn deep_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        "big/a/1.txt",
        "big/a/2.txt",
        "big/a/3.txt",
        "big/b/4.txt",
        "big/c/5.txt",
        "small/6.txt",
    ];
    for path in files {
        let full = dir.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, "x\n").unwrap();
    }
    let base = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_600_000_000);
    let entries = files
        .iter()
        .copied()
        .chain(["big/a", "big/b", "big/c", "big", "small"]);
    for (i, path) in entries.enumerate() {
        let when = base + std::time::Duration::from_secs(60 * i as u64);
        std::fs::File::open(dir.path().join(path))
            .unwrap()
            .set_modified(when)
            .unwrap();
    }
    dir
}

#[test]
fn call_json_reports_the_coverage_of_an_over_cap_glob_page_and_depth_sampling_widens_it() {
    let dir = deep_tree();
    let coverage = |config: &str| {
        let out = call(
            &dir,
            "glob",
            r#"{"pattern":"*.txt"}"#,
            &["--config", config, "--no-spill", "--json"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let object = json_of(&out);
        (
            object["text"].as_str().unwrap().to_owned(),
            object["coverage"].clone(),
        )
    };
    let (text, contract) = coverage(r#"{"sampleOverCapGlobResults":true,"globMaxResults":3}"#);
    assert!(
        text.starts_with("big/a/1.txt\nbig/a/2.txt\nsmall/6.txt\n\n"),
        "{text}"
    );
    assert_eq!(
        (contract["shown"].clone(), contract["total"].clone()),
        (json!(3), json!(6))
    );
    assert_eq!(contract["depths"][0]["share"], json!(1.0));
    assert_eq!(
        (
            contract["depths"][1]["directories"].clone(),
            contract["depths"][1]["reached"].clone()
        ),
        (json!(3), json!(1))
    );
    assert_eq!(contract["largestSubtree"], "big");
    let (text, levels) =
        coverage(r#"{"sampleOverCapGlobResults":true,"globMaxResults":3,"globSampleDepth":2}"#);
    assert!(text.starts_with("big/a/1.txt\nbig/b/4.txt\nsmall/6.txt\n\n(Showing 3 of 6 paths, sampled level by level across 2 of the 2 top-level entries this pattern matched and 3 of the 4 entries 2 levels deep"), "{text}");
    assert_eq!(levels["depths"][1]["reached"], json!(2));
    // Within the cap there is no measure.
    let out = call(
        &dir,
        "glob",
        r#"{"pattern":"*.txt"}"#,
        &["--config", SAMPLING, "--json"],
    );
    assert!(json_of(&out).get("coverage").is_none());
}

#[test]
fn an_over_cap_call_spills_under_the_given_spill_dir() {
    let dir = tree();
    let spill = tempfile::tempdir().unwrap();
    let config = r#"{"sampleOverCapGlobResults":false,"globMaxResults":1}"#;
    let out = call(
        &dir,
        "glob",
        r#"{"pattern":"*"}"#,
        &[
            "--config",
            config,
            "--spill-dir",
            root(spill.path()),
            "--session-id",
            "s-1",
            "--json",
        ],
    );
    let object = json_of(&out);
    let locator = object["spill"]["locator"].as_str().unwrap();
    assert!(locator.starts_with(root(spill.path())));
    assert!(locator.ends_with("-glob-results.txt"));
    assert_eq!(
        object["spill"]["retrievalHint"],
        "Use read with offset/limit, or grep this path to search within it."
    );
    let text = object["text"].as_str().unwrap();
    assert!(text.ends_with(&format!("(Showing 1 of 3 paths. Full sorted result stored at: {locator}. Use read with offset/limit, or grep this path to search within it.)")));
    assert_eq!(std::fs::read_to_string(locator).unwrap().lines().count(), 3);
}

#[test]
fn without_a_session_the_footer_says_the_result_could_not_be_saved() {
    let dir = tree();
    let config = r#"{"sampleOverCapGlobResults":false,"globMaxResults":1}"#;
    let out = call(
        &dir,
        "glob",
        r#"{"pattern":"*"}"#,
        &["--config", config, "--no-session", "--json"],
    );
    let object = json_of(&out);
    assert!(
        object["text"].as_str().unwrap().ends_with(
            "The complete result could not be saved; narrow pattern or path to see more.)"
        )
    );
    assert_eq!(
        object["warnings"],
        json!(["tool-fs-search: no session owner for glob result; complete result not saved"])
    );
    assert!(stderr(&out).contains("no session owner for glob result"));
}

#[test]
fn a_nested_call_has_no_meta_and_no_spill() {
    let dir = tree();
    let config = r#"{"sampleOverCapGlobResults":false,"globMaxResults":1}"#;
    let out = call(
        &dir,
        "glob",
        r#"{"pattern":"*"}"#,
        &["--config", config, "--nested", "--json"],
    );
    let object = json_of(&out);
    assert_eq!(object["meta"], Value::Null);
    assert_eq!(object["spill"], Value::Null);
    assert_eq!(object["value"]["paths"].as_array().unwrap().len(), 3);
}

#[test]
fn error_results_exit_zero_with_their_metadata() {
    let dir = tree();
    let out = call(
        &dir,
        "grep",
        r#"{"pattern":"x","include":"a,b"}"#,
        &["--config", SAMPLING, "--json"],
    );
    assert_eq!(out.status.code(), Some(0));
    let object = json_of(&out);
    assert_eq!(object["isError"], true);
    assert_eq!(
        object["text"],
        "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)"
    );
    assert_eq!(
        object["error"],
        json!({"name": null, "code": null, "message": "include must be one glob, not a comma-separated list (use {a,b} alternation instead)"})
    );

    let out = call(&dir, "glob", "{}", &["--config", SAMPLING, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(json_of(&out)["error"]["code"], "INVALID_ARGS");

    let out = call(&dir, "find", "{}", &["--config", SAMPLING]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "Error: unknown tool \"find\"");
}

#[test]
fn usage_and_config_failures_exit_two() {
    let dir = tree();
    let out = workbench(&[
        "call",
        "glob",
        "--workdir",
        root(dir.path()),
        "--args",
        r#"{"pattern":"*"}"#,
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("sampleOverCapGlobResults"));
    assert!(stdout(&out).is_empty());

    let config = r#"{"sampleOverCapGlobResults":true,"grepMaxLineBytes":1.5}"#;
    let out = call(&dir, "glob", r#"{"pattern":"*"}"#, &["--config", config]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("tool-fs-search: grepMaxLineBytes must be a positive integer"));

    let out = call(&dir, "glob", "{not json", &["--config", SAMPLING]);
    assert_eq!(out.status.code(), Some(2));

    let out = workbench(&["call", "glob", "--args", "{}"]);
    assert_eq!(
        out.status.code(),
        Some(2),
        "missing --workdir is a usage error"
    );
}

#[test]
fn config_can_come_from_a_file() {
    let dir = tree();
    let file = dir.path().join("config.json");
    std::fs::write(
        &file,
        r#"{"sampleOverCapGlobResults":true,"grepMaxMatches":1}"#,
    )
    .unwrap();
    let config = format!("@{}", file.display());
    let out = call(
        &dir,
        "grep",
        r#"{"pattern":"alpha"}"#,
        &["--config", &config, "--no-spill"],
    );
    assert!(
        stdout(&out).starts_with("Found 1 of 2 matches\n\n"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn surface_json_lists_sections_and_definitions() {
    let out = workbench(&["surface", "--config", SAMPLING, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let object = json_of(&out);
    let sections = object["promptSections"].as_array().unwrap();
    assert_eq!(sections[0]["name"], "tool:glob");
    assert_eq!(sections[0]["order"], 103);
    assert_eq!(sections[1]["name"], "tool:grep");
    assert_eq!(sections[1]["order"], 104);
    let tools = object["tools"].as_array().unwrap();
    assert_eq!(tools[0]["name"], "glob");
    assert_eq!(tools[0]["timeoutMs"], 30000);
    assert_eq!(tools[1]["parameters"]["required"], json!(["pattern"]));
    assert!(
        tools[0]["description"]
            .as_str()
            .unwrap()
            .contains("sampled across top-level entries")
    );
}

#[test]
fn surface_json_names_the_version_and_path_of_the_rg_on_path() {
    let out = workbench(&["surface", "--config", SAMPLING, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let object = json_of(&out);
    let path = String::from_utf8(
        Command::new("bash")
            .args(["-c", "command -v rg"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let version =
        String::from_utf8(Command::new("rg").arg("--version").output().unwrap().stdout).unwrap();
    let version = version.lines().next().unwrap().split(' ').nth(1).unwrap();
    assert_eq!(
        object["rg"],
        json!({"version": version, "path": path.trim_end()})
    );
}

#[test]
fn without_rg_the_load_warns_and_calls_get_unknown_tool() {
    let dir = tree();
    let bin = tempfile::tempdir().unwrap();
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(bash, bin.path().join("bash")).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args([
            "call",
            "grep",
            "--workdir",
            root(dir.path()),
            "--args",
            r#"{"pattern":"x"}"#,
            "--config",
            SAMPLING,
        ])
        .env("PATH", bin.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "Error: unknown tool \"grep\"");
    assert!(stderr(&out).contains("tool-fs-search: ripgrep (rg) not found on the bash executor PATH; glob/grep tools not registered"));
}
