//! Bad config and bad arguments (CONTRACT §1.2, §2, §3, §5.1, §6.1,
//! §11.2): every invalid config value fails the load with the contract's
//! exact error before any bash call; every argument violation gets its
//! exact error without reaching bash; and property tests feed arbitrary
//! text to the `--json` parser and arbitrary JSON as arguments through
//! the registry without a panic.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use fs_search_engine::bash::{
    BashError, BashRequest, BashRunResult, BashSpec, CappedRun, RunMode, RunOutcome,
};
use fs_search_engine::helpers::parse_grep_matches;
use fs_search_engine::{BashExecutor, ExecContext, Registry};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};
use fs_search_test_support::reliability::registry_with;
use proptest::prelude::*;
use serde_json::{Value, json};

/// The real local executor, counting what reaches it.
struct Counting {
    inner: LocalBashExecutor,
    resolves: AtomicUsize,
}

impl Counting {
    fn new(cwd: &std::path::Path) -> Arc<Self> {
        let inner = LocalBashExecutor::new(LocalBashConfig {
            cwd: Some(cwd.to_string_lossy().into_owned()),
            ..LocalBashConfig::default()
        })
        .unwrap();
        Arc::new(Self {
            inner,
            resolves: AtomicUsize::new(0),
        })
    }

    fn resolves(&self) -> usize {
        self.resolves.load(Ordering::SeqCst)
    }
}

#[async_trait]
impl BashExecutor for Counting {
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        self.resolves.fetch_add(1, Ordering::SeqCst);
        self.inner.resolve(request)
    }

    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
        self.inner.run(spec, mode).await
    }
}

const KEYS: [&str; 6] = [
    "globMaxResults",
    "grepMaxMatches",
    "grepMaxLineBytes",
    "searchMetaMaxBytes",
    "rawOutputMaxBytes",
    "timeoutMs",
];

async fn load_error(config: Value) -> (String, usize) {
    let work = tempfile::tempdir().unwrap();
    let bash = Counting::new(work.path());
    let err = registry_with(bash.clone(), None, false, &config)
        .await
        .err()
        .unwrap_or_else(|| panic!("{config} loaded"));
    (err.to_string(), bash.resolves())
}

#[tokio::test]
async fn every_non_positive_integer_config_value_fails_the_load_before_the_probe() {
    for key in KEYS {
        for value in [
            json!(0),
            json!(-1),
            json!(1.5),
            json!(0.5),
            json!(-0.0),
            json!(1e-9),
            json!(-1e300),
        ] {
            let (message, resolves) =
                load_error(json!({"sampleOverCapGlobResults": true, key: value})).await;
            assert_eq!(
                message,
                format!("tool-fs-search: {key} must be a positive integer")
            );
            assert_eq!(resolves, 0, "no bash call for an invalid config");
        }
    }
    // Only the first failing key, in the contract's order.
    let mut all_bad = json!({"sampleOverCapGlobResults": true});
    for key in KEYS.iter().rev() {
        all_bad[key] = json!(0);
        let (message, _) = load_error(all_bad.clone()).await;
        assert_eq!(
            message,
            format!("tool-fs-search: {key} must be a positive integer")
        );
    }
}

#[tokio::test]
async fn mistyped_or_missing_config_values_fail_the_load_naming_the_key() {
    let (message, resolves) = load_error(json!({})).await;
    assert_eq!(
        message,
        "tool-fs-search: config.sampleOverCapGlobResults is required (true or false)"
    );
    assert_eq!(resolves, 0);
    for value in [json!("true"), json!(1), json!([]), json!({})] {
        let (message, _) = load_error(json!({"sampleOverCapGlobResults": value})).await;
        assert_eq!(
            message,
            "tool-fs-search: config.sampleOverCapGlobResults must be a boolean"
        );
    }
    for key in KEYS {
        for value in [json!("10"), json!(true), json!([1]), json!({"n": 1})] {
            let (message, resolves) =
                load_error(json!({"sampleOverCapGlobResults": false, key: value})).await;
            assert_eq!(
                message,
                format!("tool-fs-search: config.{key} must be a number")
            );
            assert_eq!(resolves, 0);
        }
    }
    for config in [json!(null), json!([]), json!("x"), json!(1)] {
        let (message, _) = load_error(config).await;
        assert_eq!(message, "tool-fs-search: config must be an object");
    }
}

#[tokio::test]
async fn huge_config_values_load_and_only_the_timeout_policy_rejects_an_oversized_timeout() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.txt"), "alpha\n").unwrap();
    let config = json!({
        "sampleOverCapGlobResults": true,
        "globMaxResults": 1e300, "grepMaxMatches": 1e19, "grepMaxLineBytes": u64::MAX,
        "searchMetaMaxBytes": 1e30, "rawOutputMaxBytes": 1e18, "timeoutMs": 2147483648u64,
    });
    for policy in [false, true] {
        let bash = Counting::new(work.path());
        let registry: Registry = registry_with(bash, None, policy, &config).await.unwrap().0;
        let result = registry
            .call("grep", &json!({"pattern": "alpha"}), &ExecContext::new("c"))
            .await;
        if policy {
            // §11.2: past the largest timer delay every call fails with a
            // plain (uncoded) error.
            assert!(
                result.is_error && result.code().map(|c| c.code()).is_none(),
                "{result:?}"
            );
            assert!(result.text.starts_with("Error: "));
        } else {
            assert_eq!(result.text, "Found 1 match\n\na.txt\nLine 1: alpha");
        }
    }
}

/// (tool, args, model text, `{name, code}` or none).
fn argument_violations() -> Vec<(&'static str, Value, &'static str, Option<&'static str>)> {
    let args_error = Some("INVALID_ARGS");
    let mut cases = vec![];
    for tool in ["glob", "grep"] {
        cases.extend([
            (tool, json!({}), "Error: invalid arguments: missing required property \"pattern\"", args_error),
            (tool, json!({"pattern": 1}), "Error: invalid arguments: \"pattern\" must be a string", args_error),
            (tool, json!({"pattern": null}), "Error: invalid arguments: \"pattern\" must be a string", args_error),
            (tool, json!({"pattern": ["*"]}), "Error: invalid arguments: \"pattern\" must be a string", args_error),
            (tool, json!({"pattern": "x", "path": 5}), "Error: invalid arguments: \"path\" must be a string", args_error),
            (tool, json!({"pattern": "x", "path": null}), "Error: invalid arguments: \"path\" must be a string", args_error),
            (tool, json!({"path": {}}), "Error: invalid arguments: missing required property \"pattern\"; \"path\" must be a string", args_error),
            (tool, json!([]), "Error: invalid arguments: \"arguments\" must be an object", args_error),
            (tool, json!(null), "Error: invalid arguments: \"arguments\" must be an object", args_error),
            (tool, json!("*.rs"), "Error: invalid arguments: \"arguments\" must be an object", args_error),
            (tool, json!(7), "Error: invalid arguments: \"arguments\" must be an object", args_error),
            (tool, json!({"pattern": "x", "path": ""}), "Error: path must be a non-empty string when given", None),
            (tool, json!({"pattern": "x", "path": " \t\n\u{FEFF}\u{3000}\u{2028}"}), "Error: path must be a non-empty string when given", None),
        ]);
    }
    cases.extend([
        ("glob", json!({"pattern": ""}), "Error: pattern must be a non-empty string", None),
        ("glob", json!({"pattern": " \u{a0}\u{FEFF}\u{2029}\r"}), "Error: pattern must be a non-empty string", None),
        ("grep", json!({"pattern": ""}), "Error: pattern must be a non-empty string", None),
        ("grep", json!({"pattern": "x", "include": 3}), "Error: invalid arguments: \"include\" must be a string", args_error),
        ("grep", json!({"pattern": 1, "path": 2, "include": 3}), "Error: invalid arguments: \"pattern\" must be a string; \"path\" must be a string; \"include\" must be a string", args_error),
        ("grep", json!({"pattern": "x", "include": ""}), "Error: include must be a non-empty glob when given", None),
        ("grep", json!({"pattern": "x", "include": "\u{FEFF} "}), "Error: include must be a non-empty glob when given", None),
        ("grep", json!({"pattern": "x", "include": "!*.rs"}), "Error: include must be a positive glob filter; negated patterns (\"!…\") are not supported", None),
        ("grep", json!({"pattern": "x", "include": "*.rs,*.ts"}), "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)", None),
        ("grep", json!({"pattern": "x", "include": "}*.{rs,ts}},x"}), "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)", None),
    ]);
    cases
}

#[tokio::test]
async fn every_argument_violation_gets_its_exact_error_without_reaching_bash() {
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("a.rs"), "x  y\n").unwrap();
    let bash = Counting::new(work.path());
    let config = json!({"sampleOverCapGlobResults": true});
    let registry = registry_with(bash.clone(), None, false, &config)
        .await
        .unwrap()
        .0;
    let after_probe = bash.resolves();
    for (tool, args, text, code) in argument_violations() {
        let result = registry.call(tool, &args, &ExecContext::new("c")).await;
        assert_eq!(result.text, text, "{tool} {args}");
        assert!(result.is_error);
        assert_eq!(result.code().map(|c| c.code()), code, "{tool} {args}");
        let name = result.error.as_ref().unwrap().name();
        assert_eq!(name, code.map(|_| "ToolArgsError"));
    }
    assert_eq!(
        bash.resolves(),
        after_probe,
        "an argument error reached bash"
    );
    // Accepted edges: open root, whitespace grep pattern, U+0085 (not
    // ECMAScript whitespace), a leading space before `!`.
    for (tool, args) in [
        (
            "glob",
            json!({"pattern": "*.none", "include": 5, "extra": [1]}),
        ),
        ("glob", json!({"pattern": "\u{85}"})),
        ("grep", json!({"pattern": "  "})),
        ("grep", json!({"pattern": "x", "include": " !a"})),
        ("grep", json!({"pattern": "x", "include": "*.{rs,ts}"})),
    ] {
        let result = registry.call(tool, &args, &ExecContext::new("c")).await;
        // Accepted: whatever rg makes of it, it is not an argument error.
        let argument_error = result.is_error
            && matches!(result.code().map(|c| c.code()), None | Some("INVALID_ARGS"));
        assert!(!argument_error, "{tool} {args}: {}", result.text);
    }
    assert_eq!(bash.resolves(), after_probe + 5);
}

/// An in-memory executor for the property tests: no process, rg "finds
/// nothing" (exit 1).
struct NoMatches;

#[async_trait]
impl BashExecutor for NoMatches {
    fn resolve(&self, request: BashRequest) -> Result<BashSpec, BashError> {
        Ok(BashSpec {
            command: request.command,
            argv: request.argv,
            subprocess: request.subprocess,
            workdir: request.workdir.unwrap_or_else(|| "/w".to_owned()),
            timeout_ms: 1000,
            stdout_max_bytes: request.stdout_max_bytes.unwrap_or(1000),
            signal: request.signal,
            stdin: None,
            env: None,
            dsh_env: None,
        })
    }

    async fn run(&self, spec: BashSpec, mode: RunMode) -> Result<RunOutcome, BashError> {
        let exit_code = if spec.command == "command -v rg >/dev/null 2>&1" {
            0
        } else {
            1
        };
        Ok(mode.kept(CappedRun::Finished(BashRunResult {
            exit_code: Some(exit_code),
            ..BashRunResult::default()
        })))
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        prop::sample::select(vec![
            "pattern", "path", "include", "", " ", "!a", "a,b", "{a,b}"
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(
                (
                    prop::sample::select(vec!["pattern", "path", "include", "type", "data", "x"]),
                    inner
                ),
                0..6
            )
            .prop_map(|entries| Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v))
                    .collect()
            )),
        ]
    })
}

/// A valid match record, as ripgrep prints it.
fn record(path: &str, line: &str, n: u64) -> String {
    json!({"type": "match", "data": {"path": {"text": path}, "lines": {"text": line},
        "line_number": n, "absolute_offset": 0, "submatches": []}})
    .to_string()
}

fn assert_parse_contract(stdout: &str, workdir: &str) -> Result<(), TestCaseError> {
    match parse_grep_matches(stdout, workdir) {
        Ok(_) => {}
        Err(e) => {
            prop_assert_eq!(e.code.code(), "SEARCH_FAILED");
            prop_assert!(
                e.message
                    .starts_with("grep received malformed ripgrep --json output ("),
                "{}",
                e.message
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_json_parser_never_panics_on_arbitrary_text(stdout in "\\PC{0,400}", workdir in "/?[a-z/.]{0,12}") {
        assert_parse_contract(&stdout, &workdir)?;
    }

    #[test]
    fn the_json_parser_never_panics_on_arbitrary_json_values(values in prop::collection::vec(json_value(), 0..6)) {
        let stdout: Vec<String> = values.iter().map(Value::to_string).collect();
        assert_parse_contract(&stdout.join("\n"), "/w")?;
    }

    #[test]
    fn the_json_parser_never_panics_on_mutated_records(
        path in "\\PC{0,20}", line in "\\PC{0,40}", n in any::<u64>(),
        cut in any::<prop::sample::Index>(), byte in any::<u8>(), at in any::<prop::sample::Index>(),
    ) {
        let good = record(&path, &line, n);
        // Truncated at any point, or with one byte overwritten.
        let cut_at = cut.index(good.len() + 1);
        let truncated = String::from_utf8_lossy(&good.as_bytes()[..cut_at]).into_owned();
        assert_parse_contract(&format!("{good}\n{truncated}"), "/w")?;
        let mut bytes = good.clone().into_bytes();
        let i = at.index(bytes.len());
        bytes[i] = byte;
        assert_parse_contract(&String::from_utf8_lossy(&bytes), "/w")?;
    }

    #[test]
    fn arbitrary_argument_json_never_panics_through_the_registry(args in json_value(), tool in prop::sample::select(vec!["glob", "grep"])) {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let result = runtime.block_on(async {
            let config = json!({"sampleOverCapGlobResults": true});
            let registry = registry_with(Arc::new(NoMatches), None, false, &config).await.unwrap().0;
            registry.call(tool, &args, &ExecContext::new("c")).await
        });
        if result.is_error {
            prop_assert!(
                result.text.starts_with("Error: invalid arguments: ")
                    || result.text.starts_with("Error: pattern must")
                    || result.text.starts_with("Error: path must")
                    || result.text.starts_with("Error: include must"),
                "{}", result.text
            );
        } else {
            prop_assert!(result.text == "No files found" || result.text == "No matches found");
        }
    }
}
