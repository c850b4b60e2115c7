//! Transcripts end to end (docs/design.md §3) with the built `workbench`, real
//! bash and real rg: every recorded transcript under fixtures/transcripts
//! replays without a diff (the snapshot tests CI runs), a record/replay
//! round trip, stability across temp roots, and clear errors for corrupt
//! or wrong-version files.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn workbench(args: &[&str], tmpdir: Option<&Path>, stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_workbench"));
    // The human report: not GitHub Actions' form, whatever CI runs this.
    command
        .args(args)
        .current_dir(repo())
        .env_remove("GITHUB_ACTIONS")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(dir) = tmpdir {
        command.env("TMPDIR", dir);
    }
    let mut child = command.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn fixture_transcripts() -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("fixtures/transcripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| {
            p.strip_prefix(repo())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_fixture_transcript_replays_without_a_diff() {
    let files = fixture_transcripts();
    assert!(
        files.len() >= 9,
        "expected the recorded transcripts, found {files:?}"
    );
    let mut args = vec!["replay"];
    args.extend(files.iter().map(String::as_str));
    let out = workbench(&args, None, None);
    assert_eq!(
        out.status.code(),
        Some(0),
        "a recorded transcript changed; if the change is intended, run \
         `cargo run -p fs-search-workbench -- replay --update FILE`.\n{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    for file in &files {
        assert!(
            text(&out.stdout).contains(&format!("ok {file}: ")),
            "{file}"
        );
    }
}

const CALLS: &str = r#"{"call":"glob-over-cap","tool":"glob","args":{"pattern":"*"},"options":{"config":{"globMaxResults":3}}}
{"call":"grep-one","tool":"grep","args":{"pattern":"spaced name"}}

{"call":"grep-over-cap-nested","tool":"grep","args":{"pattern":"needle"},"options":{"config":{"grepMaxMatches":2},"nested":true}}
"#;

/// Records CALLS on the mixed tree into `dir/t.jsonl`.
fn record_into(dir: &Path) -> PathBuf {
    let out_file = dir.join("t.jsonl");
    let out = workbench(
        &[
            "record",
            "--tree",
            "fixtures/trees/mixed",
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--out",
            out_file.to_str().unwrap(),
        ],
        None,
        Some(CALLS),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("recorded 3 calls to {}\n", out_file.display())
    );
    out_file
}

#[test]
fn record_then_replay_round_trips_and_a_changed_expectation_fails_naming_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let file = record_into(dir.path());
    let recorded = std::fs::read_to_string(&file).unwrap();
    assert!(recorded.contains("<SPILL>/session-") && recorded.contains("/<RAND>-glob-results.txt"));
    assert!(!recorded.contains(&std::env::temp_dir().to_string_lossy().into_owned()));
    let path = file.to_str().unwrap();

    let out = workbench(&["replay", path], None, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(text(&out.stdout), format!("ok {path}: 3 records match\n"));

    let changed = recorded.replacen(
        r#"{"text":"Found 1 match"}"#,
        r#"{"text":"Found one match"}"#,
        1,
    );
    assert_ne!(changed, recorded);
    std::fs::write(&file, &changed).unwrap();
    let out = workbench(&["replay", path], None, None);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    let call_line = recorded
        .lines()
        .position(|l| l.starts_with(r#"{"call":"grep-one""#))
        .unwrap()
        + 1;
    assert!(
        stdout.contains(&format!(
            "--- {path}:{call_line} record \"grep-one\" (recorded)\n+++ {path}:{call_line} record \"grep-one\" (replayed now)\n"
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("\n-{\"text\":\"Found one match\"}\n+{\"text\":\"Found 1 match\"}\n"),
        "{stdout}"
    );
    assert!(
        !stdout.contains("glob-over-cap\" (recorded)"),
        "only the changed record: {stdout}"
    );
    assert!(
        stdout.contains(&format!("CHANGED {path}: 1 of 3 records differ")),
        "{stdout}"
    );

    // --update accepts the current result: the file is as recorded again.
    let out = workbench(&["replay", "--update", path], None, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("updated {path}: 1 of 3 records rewritten\n")
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), recorded);
}

#[test]
fn replay_is_stable_across_runs_and_temp_roots() {
    let dir = tempfile::tempdir().unwrap();
    let file = record_into(dir.path());
    let recorded = std::fs::read(&file).unwrap();
    let mut outputs = Vec::new();
    for root in ["first root", "second-root/deeper"] {
        let tmp = dir.path().join(root);
        std::fs::create_dir_all(&tmp).unwrap();
        // --update rewrites only what changed, so an unchanged file proves
        // that every record matched under this temp root.
        let out = workbench(
            &["replay", "--update", file.to_str().unwrap()],
            Some(&tmp),
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        assert_eq!(std::fs::read(&file).unwrap(), recorded, "under {root}");
        // The trees and spill roots lived under this root (std::env::temp_dir
        // follows TMPDIR) and were removed afterwards.
        assert_eq!(
            std::fs::read_dir(&tmp).unwrap().count(),
            0,
            "leftovers under {root}"
        );
        outputs.push(text(&out.stdout));
    }
    assert_eq!(outputs[0], outputs[1]);
    assert!(outputs[0].starts_with("ok "), "{}", outputs[0]);
}

fn replay_error(content: &str) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.jsonl");
    std::fs::write(&file, content).unwrap();
    let out = workbench(&["replay", file.to_str().unwrap()], None, None);
    assert_eq!(
        out.status.code(),
        Some(2),
        "exit 2, never a panic: {}",
        text(&out.stderr)
    );
    assert!(out.stdout.is_empty());
    (file.to_string_lossy().into_owned(), text(&out.stderr))
}

#[test]
fn a_wrong_version_or_corrupt_transcript_is_a_clear_error_naming_file_and_line() {
    let good =
        std::fs::read_to_string(repo().join("fixtures/transcripts/grep-footers.jsonl")).unwrap();
    let (file, err) = replay_error(&good.replacen("\"version\":1", "\"version\":7", 1));
    assert_eq!(
        err,
        format!(
            "workbench replay: {file}:1: unsupported transcript version 7 (this workbench reads versions 1 and 2)\n"
        )
    );

    let mut lines: Vec<&str> = good.lines().collect();
    lines[2] = "{\"result\": oops";
    let (file, err) = replay_error(&lines.join("\n"));
    assert!(
        err.starts_with(&format!("workbench replay: {file}:3: not valid JSON: ")),
        "{err}"
    );

    let truncated: String = good.lines().take(2).map(|l| format!("{l}\n")).collect();
    let (file, err) = replay_error(&truncated);
    assert!(
        err.starts_with(&format!(
            "workbench replay: {file}:3: unexpected end of file: call \""
        )),
        "{err}"
    );

    let (file, err) = replay_error("not json at all\n");
    assert!(
        err.starts_with(&format!("workbench replay: {file}:1: not valid JSON")),
        "{err}"
    );

    let (file, err) = replay_error("\u{feff}{\"transcript\":\"fs-search\"}\n\u{0}");
    assert!(
        err.starts_with(&format!("workbench replay: {file}:1: ")),
        "{err}"
    );

    let mut bytes = good.clone().into_bytes();
    let at = good.find("Found").unwrap();
    bytes[at] = 0xff;
    let dir = tempfile::tempdir().unwrap();
    let invalid = dir.path().join("latin1.jsonl");
    std::fs::write(&invalid, bytes).unwrap();
    let out = workbench(&["replay", invalid.to_str().unwrap()], None, None);
    assert_eq!(out.status.code(), Some(2));
    let line = good[..at].matches('\n').count() + 1;
    assert_eq!(
        text(&out.stderr),
        format!(
            "workbench replay: {}:{line}: not valid UTF-8\n",
            invalid.display()
        )
    );
}

#[test]
fn a_missing_file_or_tree_is_an_error_and_other_files_still_replay() {
    let out = workbench(
        &[
            "replay",
            "no/such/file.jsonl",
            "fixtures/transcripts/grep-footers.jsonl",
        ],
        None,
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).starts_with("workbench replay: no/such/file.jsonl: "));
    assert!(text(&out.stdout).contains("ok fixtures/transcripts/grep-footers.jsonl: "));

    let dir = tempfile::tempdir().unwrap();
    let good =
        std::fs::read_to_string(repo().join("fixtures/transcripts/grep-footers.jsonl")).unwrap();
    let file = dir.path().join("t.jsonl");
    std::fs::write(
        &file,
        good.replacen("../trees/mixed", "../trees/none-such", 1),
    )
    .unwrap();
    let out = workbench(&["replay", file.to_str().unwrap()], None, None);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).starts_with(&format!(
            "workbench replay: {}:1: the header's tree: ",
            file.display()
        )) && text(&out.stderr).contains("none-such"),
        "{}",
        text(&out.stderr)
    );

    // A record whose config cannot load names the record and its line.
    let tree = repo().join("fixtures/trees/mixed");
    let good = good.replacen("../trees/mixed", tree.to_str().unwrap(), 1);
    let bad = good.replacen(
        r#""options":{"spill":"store""#,
        r#""options":{"config":{"globMaxResults":0},"spill":"store""#,
        1,
    );
    std::fs::write(&file, bad).unwrap();
    let out = workbench(&["replay", file.to_str().unwrap()], None, None);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        format!(
            "workbench replay: {}:2: record \"grep-no-matches\": the plugin did not load: tool-fs-search: globMaxResults must be a positive integer\n",
            file.display()
        )
    );
}

#[test]
fn record_rejects_a_bad_calls_line_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("t.jsonl");
    let out = workbench(
        &[
            "record",
            "--tree",
            "fixtures/trees/mixed",
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--out",
            out_file.to_str().unwrap(),
        ],
        None,
        Some(
            "{\"call\":\"a\",\"tool\":\"glob\",\"args\":{}}\n{\"call\":\"b\",\"tool\":\"glob\",\"args\":{},\"options\":{\"spill\":\"disk\"}}\n",
        ),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "workbench record: <stdin>:2: \"spill\" must be \"store\", \"none\" or \"unwritable\"\n"
    );
    assert!(!out_file.exists());
}

/// Records `calls` on the mixed tree into `dir/t.jsonl`; the file's text.
fn record_calls_into(dir: &Path, calls: &str) -> (PathBuf, String) {
    let out_file = dir.join("t.jsonl");
    let out = workbench(
        &[
            "record",
            "--tree",
            "fixtures/trees/mixed",
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--out",
            out_file.to_str().unwrap(),
        ],
        None,
        Some(calls),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let recorded = std::fs::read_to_string(&out_file).unwrap();
    (out_file, recorded)
}

/// The line after the line starting with `prefix` replaced by `with`.
fn replace_line_after(file: &str, prefix: &str, with: &str) -> String {
    let mut lines: Vec<&str> = file.lines().collect();
    let at = lines.iter().position(|l| l.starts_with(prefix)).unwrap();
    lines[at + 1] = with;
    lines.join("\n") + "\n"
}

/// A transcript made under another rg major version, simulated by editing
/// a real recording: its header names `ripgrep 12.1.1` and one stderr
/// text is what such an rg might have written (the replay runs the real
/// rg on PATH).
#[test]
fn replay_under_another_rg_major_reports_rg_text_apart_and_update_adds_a_variant() {
    let rg_now = {
        let out = Command::new("rg").arg("--version").output().unwrap();
        text(&out.stdout).lines().next().unwrap().to_owned()
    };
    let major: u32 = rg_now["ripgrep ".len()..]
        .split('.')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let calls = concat!(
        r#"{"call":"glob-bad","tool":"glob","args":{"pattern":"["}}"#,
        "\n",
        r#"{"call":"grep-one","tool":"grep","args":{"pattern":"spaced name"}}"#,
        "\n"
    );
    let (file, recorded) = record_calls_into(dir.path(), calls);
    let path = file.to_str().unwrap();
    let old_stderr =
        r#"{"text":"Error: glob pattern rejected by ripgrep: rg 12: glob '[' is unclosed"}"#;
    let as_if_rg12 = replace_line_after(
        &recorded.replacen(
            &format!("\"rg\":\"{rg_now}\""),
            "\"rg\":\"ripgrep 12.1.1\"",
            1,
        ),
        r#"{"result":"glob-bad""#,
        old_stderr,
    );
    let engine_changed = as_if_rg12.replacen(
        r#"{"text":"Found 1 match"}"#,
        r#"{"text":"Found one match"}"#,
        1,
    );
    assert_ne!(engine_changed, as_if_rg12);
    std::fs::write(&file, &engine_changed).unwrap();
    let out = workbench(&["replay", path], None, None);
    assert_eq!(out.status.code(), Some(1));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains(&format!(
            "CHANGED {path}: 2 of 2 records differ (run `workbench replay --update {path}` to accept)\n  1 only in rg's own text (its stderr, its file order; recorded with ripgrep 12.1.1, this is {rg_now}): \"glob-bad\"\n  1 in the engine's text or the kind of result: \"grep-one\"\n"
        )),
        "{stdout}"
    );

    // --update under this rg keeps rg 12's text and adds this rg's beside it.
    std::fs::write(&file, &as_if_rg12).unwrap();
    let out = workbench(&["replay", "--update", path], None, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!("updated {path}: 1 of 2 records rewritten\n")
    );
    let updated = std::fs::read_to_string(&file).unwrap();
    let lines: Vec<&str> = updated.lines().collect();
    assert!(
        lines[0].starts_with(r#"{"transcript":"fs-search","version":2,"#)
            && lines[0].contains(r#""rg":"ripgrep 12.1.1""#),
        "{}",
        lines[0]
    );
    let result = lines
        .iter()
        .position(|l| l.starts_with(r#"{"result":"glob-bad""#))
        .unwrap();
    assert_eq!(lines[result + 1], old_stderr);
    assert!(
        lines[result + 2].starts_with(&format!(
            r#"{{"variant":"glob-bad","rg":{major},"isError":true,"error":{{"name":"SearchError","code":"SEARCH_INVALID_PATTERN"}},"spill":null,"warnings":[],"tokens":"#
        )),
        "{updated}"
    );
    let current = serde_json::json!({
        "text": format!(
            "Error: glob pattern rejected by ripgrep: {}",
            fs_search_test_support::rg_texts::unclosed_class_glob_error()
        )
    });
    assert_eq!(lines[result + 3], current.to_string());
    assert!(lines[result + 4].starts_with(r#"{"call":"grep-one""#));

    // Replayed under this rg again, the variant is what it compares with.
    let out = workbench(&["replay", path], None, None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(text(&out.stdout), format!("ok {path}: 2 records match\n"));
}
