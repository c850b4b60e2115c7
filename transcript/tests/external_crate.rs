//! `assert_transcripts_replay` from a project outside this workspace, as
//! docs/transcripts.md tells its users to set it up: a new crate in a
//! temp dir with a path dependency on `fs-search-transcript`, one fixture
//! (a transcript and its tree), a plain `#[test]` and a `#[tokio::test]`
//! calling it. `cargo test --offline` builds and runs it: both pass; a
//! text line changed by hand makes both fail with the replay's diff.
//!
//! Ignored by default (CI runs ignored tests too): the outside crate's
//! dependency graph has other features than the workspace's (tokio's), so
//! its first build compiles the graph again, well over a minute on a
//! shared machine. Its target dir is kept below this workspace's
//! (`target/external-crate`), so later runs only link.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The shared target dir's `external-crate` directory: under
/// `$CARGO_TARGET_DIR` when set, else the workspace's `target`.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| repo().join("target"), PathBuf::from)
        .join("external-crate")
}

/// The path docs/transcripts.md's dependency line names.
const DOCS_PATH: &str = "\"../fs-search-workbench/transcript\"";

/// docs/transcripts.md's `toml` block of `[dev-dependencies]`.
fn docs_dependencies() -> String {
    let page = std::fs::read_to_string(repo().join("docs/transcripts.md")).unwrap();
    let start = page.find("```toml\n[dev-dependencies]\n").unwrap() + "```toml\n".len();
    let end = start + page[start..].find("```\n").unwrap();
    page[start..end].to_owned()
}

#[test]
fn the_docs_give_a_path_dependency_line_and_tokio_for_tokio_tests() {
    let block = docs_dependencies();
    assert!(
        block.contains(&format!(
            "\nfs-search-transcript = {{ path = {DOCS_PATH} }}\n"
        )),
        "{block}"
    );
    assert!(block.contains("\ntokio = { version = \"1\", features = [\"macros\", \"rt\"] }\n"));
}

/// Writes the outside crate into `dir`: a package with the
/// `[dev-dependencies]` docs/transcripts.md shows (its path made
/// absolute), the workspace's Cargo.lock (the same dependency versions,
/// found offline), the fixture and the tests.
fn outside_crate(dir: &Path) {
    let transcript_crate = repo().join("transcript");
    let dependencies = docs_dependencies().replace(DOCS_PATH, &toml_string(&transcript_crate));
    let manifest = format!(
        r#"[package]
name = "uses-fs-search-transcripts"
version = "0.0.0"
edition = "2024"
publish = false

{dependencies}
# Not part of any workspace above the temp dir.
[workspace]
"#
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::copy(repo().join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    std::fs::create_dir_all(dir.join("tests")).unwrap();
    std::fs::write(
        dir.join("tests/transcripts.rs"),
        r#"#[test]
fn transcripts_replay() {
    fs_search_transcript::assert_transcripts_replay(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/transcripts"
    ));
}

#[tokio::test]
async fn transcripts_replay_inside_a_tokio_test() {
    fs_search_transcript::assert_transcripts_replay(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/transcripts"
    ));
}
"#,
    )
    .unwrap();
    for (from, to) in [
        ("fixtures/trees/mixed/manifest.json", "fixtures/trees/mixed"),
        (
            "fixtures/transcripts/glob-footers.jsonl",
            "fixtures/transcripts",
        ),
    ] {
        let to = dir.join(to);
        std::fs::create_dir_all(&to).unwrap();
        let from = repo().join(from);
        std::fs::copy(&from, to.join(from.file_name().unwrap())).unwrap();
    }
}

/// `path` as a TOML basic string.
fn toml_string(path: &Path) -> String {
    let raw = path.to_str().unwrap();
    format!("\"{}\"", raw.replace('\\', "\\\\").replace('"', "\\\""))
}

/// `cargo test --offline` in `dir` with the shared target dir.
fn cargo_test(dir: &Path) -> Output {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    Command::new(cargo)
        .args(["test", "--offline", "--quiet"])
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("WORKBENCH_UPDATE")
        .env_remove("RIPGREP_CONFIG_PATH")
        .output()
        .unwrap()
}

#[test]
#[ignore = "builds a crate outside the workspace: over a minute the first time"]
fn a_crate_outside_the_workspace_replays_its_transcripts_from_test_and_tokio_test() {
    let dir = tempfile::tempdir().unwrap();
    outside_crate(dir.path());
    let out = cargo_test(dir.path());
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("test result: ok. 2 passed"), "{stdout}");

    // A recorded text line changed by hand: both tests fail with the diff.
    let fixture = dir.path().join("fixtures/transcripts/glob-footers.jsonl");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with(r#"{"text":""#) && l.len() > 12)
        .unwrap()
        .to_owned();
    let edited = line.replacen(r#"{"text":""#, r#"{"text":"edited "#, 1);
    std::fs::write(&fixture, text.replacen(&line, &edited, 1)).unwrap();
    let out = cargo_test(dir.path());
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(
        stdout.contains("test result: FAILED. 0 passed; 2 failed"),
        "{stdout}"
    );
    assert_eq!(
        stdout.matches(&format!("\n-{edited}\n")).count(),
        2,
        "{stdout}"
    );
    assert!(
        stdout.contains("to accept the current results, rerun with WORKBENCH_UPDATE=1"),
        "{stdout}"
    );
}
