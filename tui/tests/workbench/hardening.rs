//! Hostile use of the command line (issue 10): bad `--workdir`s, hostile
//! arguments, configs, transcripts and manifests, signals while rg runs.
//! Each test failed before its fix; `docs/reliability.md` lists them.

use std::path::Path;
use std::process::{Command, Output};

const SAMPLING: &str = r#"{"sampleOverCapGlobResults":true}"#;

fn workbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\n").unwrap();
    dir
}

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_bad_workdir_is_named_and_bash_is_never_blamed() {
    let dir = tree();
    let missing = dir.path().join("missing");
    let file = dir.path().join("a.txt");
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    for (bad, problem) in [
        (&missing, "no such file or directory"),
        (&file, "not a directory (a regular file)"),
        (&fifo, "not a directory (a FIFO)"),
    ] {
        let bad = path_str(bad);
        let runs: [Vec<&str>; 3] = [
            vec![
                "call",
                "glob",
                "--workdir",
                bad,
                "--args",
                r#"{"pattern":"*"}"#,
                "--config",
                SAMPLING,
            ],
            vec!["mcp", "--workdir", bad, "--config", SAMPLING],
            vec!["--workdir", bad, "--config", SAMPLING],
        ];
        for args in runs {
            let out = workbench(&args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
            assert_eq!(
                err,
                format!("workbench: --workdir {bad}: {problem}\n"),
                "{args:?}"
            );
            assert!(!err.contains("bash"));
        }
    }
}

/// `workbench call grep` with raw `--args` on a tree holding U+FFFD.
fn call_raw_args(dir: &Path, tool: &str, args: &str) -> Output {
    workbench(&[
        "call",
        tool,
        "--workdir",
        path_str(dir),
        "--args",
        args,
        "--config",
        SAMPLING,
        "--no-spill",
    ])
}

#[test]
fn a_lone_surrogate_in_the_arguments_reaches_rg_as_the_replacement_character() {
    let dir = tree();
    std::fs::write(dir.path().join("odd.txt"), "before \u{fffd} after\n").unwrap();
    for pattern in [r"\ud800", r"\udfff"] {
        let out = call_raw_args(dir.path(), "grep", &format!(r#"{{"pattern":"{pattern}"}}"#));
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let found = text(&out.stdout);
        assert!(found.contains("odd.txt"), "{found}");
        assert!(found.contains("before \u{fffd} after"), "{found}");
    }
}

#[test]
fn arguments_nested_10000_deep_in_an_ignored_key_are_accepted_and_deeper_is_refused() {
    let dir = tree();
    let nested = |n: usize| {
        format!(
            r#"{{"pattern":"alpha","x":{}{}}}"#,
            "[".repeat(n),
            "]".repeat(n)
        )
    };
    // The root object is one level.
    let out = call_raw_args(dir.path(), "grep", &nested(9_999));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("a.txt"), "{}", text(&out.stdout));
    let out = call_raw_args(dir.path(), "grep", &nested(10_000));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "workbench: --args is not valid JSON: arrays and objects nest deeper than 10000 levels\n"
    );
}
