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
