//! `--contract` and `--rg` on every front end: each parses both flags
//! (a bad value is a usage error, exit 2), `surface --json` and the MCP
//! server's start log name the release and the chosen rg binary, a
//! recording's header names rc.8 (and nothing for 0.0.1), and `replay`,
//! `freeze` and `mcp --replay` run a transcript as its header's release.
//! The real binary, real bash, real rg (rg 15.2.0 from the CI cache for
//! `--rg`), rmcp's client over stdio.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use fs_search_test_support::mcp::client::{Client, params};
use fs_search_test_support::mcp::{SAMPLING, logs_in, root, tree};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};

use crate::freeze_variants::rg_dir;
use crate::mcp::{SERVER, bin, workbench};

const RC8: &str = "0.1.0-rc.8";

/// rg 15.2.0, the binary `--rg` names in these tests.
fn rg15() -> PathBuf {
    rg_dir(15).join("rg")
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A directory whose only program is bash: no rg on a `PATH` of it.
fn bash_only() -> tempfile::TempDir {
    let bin = tempfile::tempdir().unwrap();
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(bash, bin.path().join("bash")).unwrap();
    bin
}

#[test]
fn surface_json_names_the_release_and_the_rg_binary_and_its_version() {
    let default = json_of(&workbench(&["surface", "--config", SAMPLING, "--json"]));
    assert_eq!(default["contract"], "0.0.1");
    let rg = rg15();
    let chosen = workbench(&[
        "surface",
        "--config",
        SAMPLING,
        "--json",
        "--contract",
        RC8,
        "--rg",
        root(&rg),
    ]);
    let chosen = json_of(&chosen);
    assert_eq!(chosen["contract"], RC8);
    assert_eq!(
        chosen["rg"],
        json!({"version": "15.2.0", "path": root(&rg)})
    );
    // The text keeps stdout for the surface and names both on stderr.
    let text = workbench(&[
        "surface",
        "--config",
        SAMPLING,
        "--contract",
        RC8,
        "--rg",
        root(&rg),
    ]);
    assert_eq!(text.status.code(), Some(0), "{text:?}");
    assert_eq!(
        stderr(&text),
        format!(
            "workbench surface: contract {RC8}, rg 15.2.0 ({})\n",
            rg.display()
        )
    );
    let plain = workbench(&["surface", "--config", SAMPLING]);
    assert_eq!(text.stdout, plain.stdout);
    assert_eq!(stderr(&plain), "");
}

#[test]
fn every_front_end_refuses_an_unknown_release_a_non_executable_rg_and_rg_with_executor() {
    let dir = tempfile::tempdir().unwrap();
    let not_executable = dir.path().join("rg");
    std::fs::write(&not_executable, "#!/bin/sh\n").unwrap();
    let recording = dir.path().join("r.jsonl");
    let call = [
        "call",
        "glob",
        "--workdir",
        root(dir.path()),
        "--args",
        "{}",
    ];
    let explain = [
        "explain",
        "glob",
        "--workdir",
        root(dir.path()),
        "--args",
        "{}",
        "x",
    ];
    let ablate = ["ablate", root(&recording), "--set", "globMaxResults=1"];
    let mcp = ["mcp", "--workdir", root(dir.path())];
    let listen = [
        "mcp",
        "--workdir",
        root(dir.path()),
        "--listen",
        "127.0.0.1:0",
    ];
    let replay = ["mcp", "--replay", root(&recording)];
    let front_ends: [&[&str]; 8] = [
        &call,
        &explain,
        &["surface"],
        &ablate,
        &[],
        &mcp,
        &listen,
        &replay,
    ];
    for front_end in front_ends {
        let run = |extra: &[&str]| {
            let out = Command::new(bin())
                .args(front_end)
                .args(extra)
                .env("XDG_STATE_HOME", dir.path().join("state"))
                .output()
                .unwrap();
            assert_eq!(
                out.status.code(),
                Some(2),
                "{front_end:?} {extra:?}: {out:?}"
            );
            stderr(&out)
        };
        let unknown = run(&["--contract", "0.1.0"]);
        assert!(
            unknown.contains("unknown contract release `0.1.0` (expected 0.0.1 or 0.1.0-rc.8)"),
            "{front_end:?}: {unknown}"
        );
        let refused = run(&["--rg", root(&not_executable)]);
        assert!(
            refused.contains(&format!("{} is not executable", not_executable.display())),
            "{front_end:?}: {refused}"
        );
        if front_end != replay {
            let remote = run(&["--rg", root(&rg15()), "--executor", "ssh://devbox"]);
            assert!(
                remote.contains("'--rg <PATH>' cannot be used with '--executor"),
                "{front_end:?}: {remote}"
            );
        }
    }
}

#[test]
fn without_rg_on_path_rc8_still_lists_the_tools_where_0_0_1_registers_none() {
    let bin_dir = bash_only();
    let surface = |release: &str| {
        let out = Command::new(bin())
            .args([
                "surface",
                "--config",
                SAMPLING,
                "--json",
                "--contract",
                release,
            ])
            .env("PATH", bin_dir.path())
            .output()
            .unwrap();
        json_of(&out)
    };
    let seed = surface("0.0.1");
    assert_eq!(seed["tools"], json!([]));
    assert_eq!(seed["rg"], json!({"version": null, "path": null}));
    let rc8 = surface(RC8);
    let names: Vec<&str> = rc8["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["glob", "grep"]);
    assert_eq!(rc8["warnings"], json!([]));
}

/// A stdio server on `dir` with `extra`, one grep of `notes.md` through
/// it, then stopped; the server's log.
async fn serve_one_grep(dir: &Path, extra: &[&str]) -> String {
    let state = tempfile::tempdir().unwrap();
    let cmd = SERVER.command(dir, state.path(), extra);
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let service = Client::default().serve(transport).await.unwrap();
    let args = json!({"pattern": "needle", "path": "notes.md"});
    let result = service
        .peer()
        .call_tool(params("grep", args))
        .await
        .unwrap();
    assert_ne!(result.is_error, Some(true), "{result:?}");
    service.cancel().await.unwrap();
    logs_in(state.path())
}

/// The first line of `file`, parsed.
fn header_of(file: &Path) -> Value {
    let text = std::fs::read_to_string(file).unwrap();
    serde_json::from_str(text.lines().next().unwrap()).unwrap()
}

/// `file` with its header's `contract` replaced by `contract` (removed
/// for `None`) and its config's `graceMs` set to `grace_ms`.
fn with_header(file: &Path, contract: Option<&str>, grace_ms: u64) -> String {
    let text = std::fs::read_to_string(file).unwrap();
    let (first, rest) = text.split_once('\n').unwrap();
    let mut header: Value = serde_json::from_str(first).unwrap();
    let map = header.as_object_mut().unwrap();
    map.remove("contract");
    let mut ordered = serde_json::Map::new();
    for (key, value) in map.iter() {
        ordered.insert(key.clone(), value.clone());
        if let (Some(contract), "version") = (contract, key.as_str()) {
            ordered.insert("contract".into(), json!(contract));
        }
    }
    ordered["config"]["graceMs"] = json!(grace_ms);
    format!("{}\n{rest}", Value::Object(ordered))
}

#[tokio::test(flavor = "multi_thread")]
async fn an_rc8_recording_names_its_release_and_rg_and_replays_and_freezes_as_rc8() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let rg = rg15();
    // The seed's release: no `contract` in the header, as before releases.
    let seed_file = out.path().join("seed.jsonl");
    let log = serve_one_grep(
        dir.path(),
        &["--config", SAMPLING, "--record", root(&seed_file)],
    )
    .await;
    assert!(log.contains("contract=0.0.1"), "{log}");
    assert!(header_of(&seed_file).get("contract").is_none());

    let config = r#"{"sampleOverCapGlobResults":true,"graceMs":5000}"#;
    let file = out.path().join("rc8.jsonl");
    let extra = [
        "--config",
        config,
        "--record",
        root(&file),
        "--contract",
        RC8,
    ];
    let log = serve_one_grep(dir.path(), &[&extra[..], &["--rg", root(&rg)]].concat()).await;
    let start = log
        .lines()
        .find(|l| l.contains("workbench mcp starting"))
        .unwrap_or_else(|| panic!("no start line in {log}"));
    assert!(start.contains(&format!("contract={RC8}")), "{start}");
    assert!(
        start.contains(&format!("rg_path={}", rg.display())),
        "{start}"
    );
    assert!(start.contains("rg=ripgrep 15.2.0"), "{start}");
    let header = header_of(&file);
    assert_eq!(header["contract"], RC8);
    assert!(
        header["env"]["rg"]
            .as_str()
            .unwrap()
            .starts_with("ripgrep 15.2.0"),
        "{header}"
    );
    let line = std::fs::read_to_string(&file).unwrap();
    assert!(line.starts_with(&format!(
        "{{\"transcript\":\"fs-search\",\"version\":1,\"contract\":\"{RC8}\",\"tree\":"
    )));
    // graceMs is an rc.8 key: no warning of an unknown key.
    assert!(!log.contains("graceMs"), "{log}");

    // Replay runs it as rc.8: clean.
    let replay = workbench(&["replay", root(&file)]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");

    // The header's release decides: a graceMs rc.8 refuses fails the
    // load as rc.8, and is an ignored key once the header says 0.0.1.
    let marked = out.path().join("marked.jsonl");
    std::fs::write(&marked, with_header(&file, Some(RC8), 3_000_000_000)).unwrap();
    let refused = workbench(&["replay", root(&marked)]);
    assert_ne!(refused.status.code(), Some(0), "{refused:?}");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&refused.stdout),
        stderr(&refused)
    );
    assert!(
        said.contains("graceMs must be no greater than 2147483647"),
        "{said}"
    );
    std::fs::write(&marked, with_header(&file, None, 3_000_000_000)).unwrap();
    let seed = workbench(&["replay", root(&marked)]);
    assert_eq!(seed.status.code(), Some(0), "{seed:?}");

    // Freeze keeps the release in the fixture's header.
    let frozen = out.path().join("frozen.jsonl");
    let trees = out.path().join("trees");
    let freeze = workbench(&[
        "freeze",
        root(&file),
        "--workdir",
        root(dir.path()),
        "--out",
        root(&frozen),
        "--tree-out",
        root(&trees),
    ]);
    assert_eq!(freeze.status.code(), Some(0), "{freeze:?}");
    assert_eq!(header_of(&frozen)["contract"], RC8);

    // `mcp --replay` serves it as rc.8, and refuses another release.
    let state = tempfile::tempdir().unwrap();
    let other = SERVER
        .bare_command(
            state.path(),
            &["--replay", root(&file), "--contract", "0.0.1"],
        )
        .output()
        .unwrap();
    assert_eq!(other.status.code(), Some(2), "{other:?}");
    assert!(
        stderr(&other).contains(&format!(
            "--contract 0.0.1: --replay {} was recorded as release {RC8}",
            file.display()
        )),
        "{}",
        stderr(&other)
    );
}
