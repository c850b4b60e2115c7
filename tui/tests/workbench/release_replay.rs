//! The shipped fixtures under both releases, with the built `workbench`,
//! real bash and the rg on `PATH` (CI runs this under rg 13, 14 and 15):
//! `replay --contract RELEASE` replays every fixture as 0.0.1 and as
//! 0.1.0-rc.8 with no difference (records compare with their rc.8
//! variant where rc.8 shows the model something else), and says which
//! grep pages rc.8's unpinned file order kept from an exact comparison;
//! `--update` refuses another release than a file's header; and
//! `--add-variant --contract` adds release variants and leaves every other
//! line as it was.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const RC8: &str = "0.1.0-rc.8";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn workbench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .current_dir(repo())
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap()
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
            format!(
                "fixtures/transcripts/{}",
                p.file_name().unwrap().to_string_lossy()
            )
        })
        .collect();
    files.sort();
    files
}

#[test]
fn every_fixture_replays_under_both_releases() {
    let files = fixture_transcripts();
    assert!(files.len() >= 9, "{files:?}");
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("replay.xml");
    for release in ["0.0.1", RC8] {
        let mut args = vec![
            "replay",
            "--contract",
            release,
            "--junit",
            junit.to_str().unwrap(),
        ];
        args.extend(files.iter().map(String::as_str));
        let out = workbench(&args);
        let stdout = text(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "as {release}:\n{stdout}{}",
            text(&out.stderr)
        );
        for file in &files {
            assert!(stdout.contains(&format!("ok {file}: ")), "{file}: {stdout}");
        }
        // rc.8's grep order is rg's: said, never silently.
        let capped = "the matches shown were not compared (0.1.0-rc.8's order is rg's)";
        let unordered = "compared without order (0.1.0-rc.8 lists files in rg's own order";
        assert_eq!(stdout.contains(capped), release == RC8, "{stdout}");
        assert_eq!(stdout.contains(unordered), release == RC8, "{stdout}");
        let xml = std::fs::read_to_string(&junit).unwrap();
        for property in [
            "<property name=\"contract\" value=\"0.1.0-rc.8\"/>",
            "<property name=\"comparison\" value=\"matches-not-compared\"/>",
            "<property name=\"comparison\" value=\"order-free\"/>",
            "<property name=\"recorded-with\" value=\"the variant for 0.1.0-rc.8\"/>",
        ] {
            assert_eq!(xml.contains(property), release == RC8, "{property}");
        }
    }
}

/// `file` (a fixture of the mixed tree) copied into `dir` with its tree
/// made absolute, without the lines `drop` says to drop.
fn copy_fixture(file: &str, dir: &Path, drop: impl Fn(&[&str], usize) -> bool) -> PathBuf {
    let original = std::fs::read_to_string(repo().join(file)).unwrap();
    let tree = repo().join("fixtures/trees/mixed");
    let lines: Vec<&str> = original.lines().collect();
    let mut kept = String::new();
    for (i, line) in lines.iter().enumerate() {
        if drop(&lines, i) {
            continue;
        }
        let line = if i == 0 {
            line.replace(
                "\"tree\":\"../trees/mixed\"",
                &format!("\"tree\":\"{}\"", tree.display()),
            )
        } else {
            (*line).to_owned()
        };
        kept.push_str(&line);
        kept.push('\n');
    }
    let copy = dir.join(Path::new(file).file_name().unwrap());
    std::fs::write(&copy, kept).unwrap();
    copy
}

/// Whether line `i` belongs to a release variant block (its variant line
/// or one of its text lines).
fn in_release_variant(lines: &[&str], i: usize) -> bool {
    let start = lines[..=i]
        .iter()
        .rposition(|l| !l.starts_with("{\"text\":"));
    start.is_some_and(|s| lines[s].contains("\"contract\":\"0.1.0-rc.8\""))
}

#[test]
fn update_as_another_release_than_the_header_s_is_refused_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let copy = copy_fixture(
        "fixtures/transcripts/grep-footers.jsonl",
        dir.path(),
        |_, _| false,
    );
    let before = std::fs::read(&copy).unwrap();
    let out = workbench(&[
        "replay",
        "--update",
        "--contract",
        RC8,
        copy.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = text(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with(&format!(
            "workbench replay: --update --contract {RC8}: {} was recorded as 0.0.1",
            copy.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("--add-variant --contract 0.1.0-rc.8"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&copy).unwrap(), before, "nothing written");
    // Its own release is --update's to accept, as before.
    let own = workbench(&[
        "replay",
        "--update",
        "--contract",
        "0.0.1",
        copy.to_str().unwrap(),
    ]);
    assert_eq!(own.status.code(), Some(0), "{}", text(&own.stderr));
}

#[test]
fn add_variant_as_rc8_adds_only_release_variant_blocks_that_then_replay() {
    let dir = tempfile::tempdir().unwrap();
    let file = "fixtures/transcripts/search-errors.jsonl";
    let stripped = copy_fixture(file, dir.path(), in_release_variant);
    let before = std::fs::read_to_string(&stripped).unwrap();
    assert!(!before.contains("\"contract\""), "{before}");
    let path = stripped.to_str().unwrap();
    let out = workbench(&["replay", "--add-variant", "--contract", RC8, path]);
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.starts_with(&format!("added the variant for {RC8} (under ripgrep ")),
        "{stdout}"
    );
    for name in [
        "glob-unusable-session-cwd",
        "grep-raw-output-overflow-executor-truncated",
    ] {
        assert!(stdout.contains(&format!("\"{name}\"")), "{name}: {stdout}");
    }
    let after = std::fs::read_to_string(&stripped).unwrap();
    let after_lines: Vec<&str> = after.lines().collect();
    // Every line that was there is there, byte for byte and in order; the
    // lines added are rc.8 variant blocks.
    let kept: Vec<&str> = after_lines
        .iter()
        .enumerate()
        .filter(|(i, _)| !in_release_variant(&after_lines, *i))
        .map(|(_, l)| *l)
        .collect();
    assert_eq!(kept, before.lines().collect::<Vec<_>>());
    assert!(after.contains(
        "{\"text\":\"Error: grep could not start its search command (ripgrep launch failed)\"}"
    ));
    assert!(
        after.contains("more raw output than the subprocess seam retained within the 64-byte cap")
    );
    let again = workbench(&["replay", "--contract", RC8, path]);
    assert_eq!(again.status.code(), Some(0), "{}", text(&again.stdout));
    let seed = workbench(&["replay", path]);
    assert_eq!(seed.status.code(), Some(0), "{}", text(&seed.stdout));
}
