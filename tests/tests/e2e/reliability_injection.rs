//! Shell and argument injection (CONTRACT §9): every hostile value in
//! `pattern`, `path` and `include`, through the real local executor and
//! real bash, reaches rg as exactly one argument, byte for byte, and runs
//! nothing else. A fake `rg` placed first on the child's PATH records its
//! argv and then runs the real ripgrep; a canary file that any escape
//! would create must never appear. A NUL byte cannot be carried by
//! `bash -c` and ends as the contract's "could not start" failure.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use fs_search_engine::helpers::GLOB_VCS_EXCLUDES;
use fs_search_engine::{ExecContext, Registry};
use fs_search_exec::LocalBashConfig;
use fs_search_test_support::reliability::{FakeRg, load, local_executor};
use serde_json::{Value, json};

/// Hostile values; `{C}` is replaced by the canary's absolute path and
/// `{PRE}` by a preprocessor script that would create the canary.
const CORPUS: &[&str] = &[
    "$(touch {C})",
    "`touch {C}`",
    "${IFS}$(touch${IFS}{C})",
    "'; touch {C}; '",
    "'$(touch {C})'",
    "\"; touch {C}; \"",
    "\"$(touch {C})\"",
    "x; touch {C}",
    "x;touch {C};",
    "x | touch {C}",
    "x|tee {C}",
    "x && touch {C}",
    "x || touch {C}",
    "x & touch {C}",
    "x\ntouch {C}",
    "x\r\ntouch {C}",
    "x > {C}",
    "x >> {C}",
    "<(touch {C})",
    ">(touch {C})",
    "\\'; touch {C}; echo \\'",
    "it's",
    "''",
    "'",
    "\\",
    "$HOME",
    "~",
    "*",
    "!!",
    "#comment",
    "--pre={PRE}",
    "--pre {PRE}",
    "--pre-glob=*",
    "-z",
    "--search-zip",
    "--files",
    "-e",
    "-e touch",
    "--",
    "-",
    "--no-config",
    "--regexp=x",
    "--glob=!*",
    "-uuu",
    "--json",
    "é\u{2028}\u{FEFF}",
    "\t\u{b}\u{c}",
];

struct Fixture {
    root: tempfile::TempDir,
    canary: std::path::PathBuf,
    pre: std::path::PathBuf,
    fake: FakeRg,
    registry: Registry,
}

async fn fixture() -> Fixture {
    let root = tempfile::tempdir().unwrap();
    let canary = root.path().join("canary");
    let work = root.path().join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/a.txt"), "x alpha\n").unwrap();
    std::fs::write(work.join("b.txt"), "touch\nx\n").unwrap();
    // Were `--pre` ever taken as a flag, rg would run this for each file.
    let pre = root.path().join("pre.sh");
    std::fs::write(
        &pre,
        format!("#!/bin/bash\ntouch '{}'\ncat \"$1\"\n", canary.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&pre, std::fs::Permissions::from_mode(0o755)).unwrap();
    let fake = FakeRg::recording().unwrap();
    let bash = local_executor(
        LocalBashConfig::default(),
        &[("PATH", fake.path_env().as_str())],
    )
    .unwrap();
    let registry = load(bash, &json!({"sampleOverCapGlobResults": true}))
        .await
        .unwrap();
    Fixture {
        root,
        canary,
        pre,
        fake,
        registry,
    }
}

impl Fixture {
    fn work(&self) -> String {
        self.root.path().join("work").to_string_lossy().into_owned()
    }

    fn values(&self) -> Vec<String> {
        let canary = self.canary.to_string_lossy();
        let pre = self.pre.to_string_lossy();
        let mut values: Vec<String> = CORPUS
            .iter()
            .map(|v| v.replace("{C}", &canary).replace("{PRE}", &pre))
            .collect();
        // Very long values (each stays under Linux's 128 KiB per-argument
        // limit once quoted into the `bash -c` command string).
        values.push(format!("$(touch {canary})").repeat(3000));
        values.push("'".repeat(20_000));
        values.push("a".repeat(100_000));
        values
    }

    fn exec(&self) -> ExecContext {
        ExecContext::new("c").with_session(Some("s"), Some(&self.work()))
    }
}

/// The argv rg must receive for `tool` with `args`, byte for byte.
fn expected_argv(tool: &str, args: &Value) -> Vec<Vec<u8>> {
    let s = |k: &str| args.get(k).and_then(Value::as_str);
    let mut argv: Vec<String> = Vec::new();
    if tool == "glob" {
        argv.extend([
            "--files".into(),
            format!("--glob={}", s("pattern").unwrap()),
        ]);
        argv.extend(["--sort=modified", "--no-ignore", "--hidden"].map(String::from));
        for name in GLOB_VCS_EXCLUDES {
            argv.push(format!("--glob=!**/{name}"));
            argv.push(format!("--glob=!**/{name}/**"));
        }
    } else {
        argv.extend([
            "--json".into(),
            format!("--regexp={}", s("pattern").unwrap()),
        ]);
        if let Some(include) = s("include") {
            argv.push(format!("--glob={include}"));
        }
    }
    if let Some(path) = s("path") {
        argv.extend(["--".into(), path.to_owned()]);
    }
    argv.into_iter().map(String::into_bytes).collect()
}

/// The argument sets a value is tried in: every model-controlled slot of
/// both tools.
fn placements(value: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("glob", json!({"pattern": value})),
        ("glob", json!({"pattern": "*.txt", "path": value})),
        ("grep", json!({"pattern": value})),
        ("grep", json!({"pattern": "x", "path": value})),
        ("grep", json!({"pattern": "x", "include": value})),
        (
            "grep",
            json!({"pattern": value, "path": value, "include": value}),
        ),
    ]
}

/// The package's own argument checks (CONTRACT §5.1, §6.1, pinned in
/// `reliability_config_args`) reject a value before any command is built.
fn rejected_by_argument_checks(tool: &str, args: &Value) -> bool {
    use fs_search_engine::helpers::{parse_glob_args, parse_grep_args};
    if tool == "glob" {
        parse_glob_args(args).is_err()
    } else {
        parse_grep_args(args).is_err()
    }
}

/// Linux's limit on one argv string, its terminating NUL included.
const MAX_ARG_STRLEN: usize = 128 * 1024;

/// The length of the command string the tool hands to `bash -c`.
fn command_len(tool: &str, args: &Value) -> usize {
    use fs_search_engine::helpers::{build_glob_command, build_grep_command};
    use fs_search_engine::helpers::{parse_glob_args, parse_grep_args};
    if tool == "glob" {
        build_glob_command(&parse_glob_args(args).unwrap()).len()
    } else {
        build_grep_command(&parse_grep_args(args).unwrap()).len()
    }
}

fn could_not_start(tool: &str) -> String {
    format!(
        "Error: {tool} could not start its search command (unusable working directory or missing shell)"
    )
}

fn assert_no_canary(canary: &Path, context: &str) {
    assert!(
        !canary.exists(),
        "the canary appeared: something other than rg ran for {context}"
    );
}

#[tokio::test]
async fn hostile_values_reach_rg_as_one_literal_argument_and_run_nothing_else() {
    let f = fixture().await;
    let mut calls = 0;
    for value in f.values() {
        for (tool, args) in placements(&value) {
            f.fake.clear_records().unwrap();
            let result = f.registry.call(tool, &args, &f.exec()).await;
            let context = format!(
                "{tool} {}",
                args.to_string().chars().take(200).collect::<String>()
            );
            assert_no_canary(&f.canary, &context);
            let runs = f.fake.recorded_argvs().unwrap();
            if rejected_by_argument_checks(tool, &args) {
                assert!(
                    result.is_error && result.code().map(|c| c.code()).is_none(),
                    "{context}: {result:?}"
                );
                assert!(runs.is_empty(), "{context}: rg ran for rejected arguments");
                continue;
            }
            if command_len(tool, &args) >= MAX_ARG_STRLEN {
                // The `bash -c` string itself is over the kernel's limit.
                assert_eq!(result.text, could_not_start(tool), "{context}");
                assert!(runs.is_empty(), "{context}");
                continue;
            }
            calls += 1;
            assert_eq!(runs.len(), 1, "{context}: rg must run exactly once");
            assert_eq!(runs[0], expected_argv(tool, &args), "{context}");
            // Whatever rg made of the value, the call ends with a result
            // of the contract, never a crash of the host.
            assert!(
                !result.is_error
                    || matches!(
                        result.code().map(|c| c.code()),
                        Some("SEARCH_FAILED" | "SEARCH_INVALID_PATTERN")
                    ),
                "{context}: {result:?}"
            );
        }
    }
    assert!(calls > 200, "only {calls} calls reached rg");
    assert_no_canary(&f.canary, "the whole corpus");
}

#[tokio::test]
async fn values_are_literal_to_rg_too_a_quoted_glob_matches_only_its_literal_name() {
    let f = fixture().await;
    // A file whose name is itself an injection attempt is found by a path
    // argument naming it literally, and its content by a literal regex.
    let name = "$(touch x); `y` 'z'";
    std::fs::write(Path::new(&f.work()).join(name), "it's $(here)\n").unwrap();
    let result = f
        .registry
        .call("glob", &json!({"pattern": "*", "path": name}), &f.exec())
        .await;
    assert_eq!(result.text, name);
    let result = f
        .registry
        .call(
            "grep",
            &json!({"pattern": r"it's \$\(here\)", "path": name}),
            &f.exec(),
        )
        .await;
    assert_eq!(
        result.text,
        format!("Found 1 match\n\n{name}\nLine 1: it's $(here)")
    );
    assert_no_canary(&f.canary, "literal names");
}

#[tokio::test]
async fn a_nul_byte_in_any_value_ends_with_search_failed_could_not_start() {
    let f = fixture().await;
    for (tool, args) in placements("a\0b") {
        f.fake.clear_records().unwrap();
        let result = f.registry.call(tool, &args, &f.exec()).await;
        assert!(result.is_error, "{args}");
        assert_eq!(
            result.code().map(|c| c.code()),
            Some("SEARCH_FAILED"),
            "{args}"
        );
        assert_eq!(result.text, could_not_start(tool));
        assert!(f.fake.recorded_argvs().unwrap().is_empty(), "rg ran");
    }
}

#[tokio::test]
async fn a_value_beyond_the_kernel_argument_limit_ends_with_could_not_start() {
    // Linux caps one argv string at 128 KiB; the whole `bash -c` command
    // is one such string, so the spawn fails with E2BIG.
    let f = fixture().await;
    let huge = "a".repeat(200_000);
    for tool in ["glob", "grep"] {
        let result = f
            .registry
            .call(tool, &json!({"pattern": huge}), &f.exec())
            .await;
        assert_eq!(result.code().map(|c| c.code()), Some("SEARCH_FAILED"));
        assert_eq!(result.text, could_not_start(tool));
    }
    assert!(f.fake.recorded_argvs().unwrap().is_empty());
}
