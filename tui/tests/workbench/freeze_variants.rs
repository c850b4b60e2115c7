//! One fixture, every rg, with the real rg 13.0.0 (the system's), 14.1.1
//! and 15.2.0 (`.ci/run` builds them into `$FS_SEARCH_RG_CACHE`, default
//! `~/.cache/fs-search-ci`): `workbench freeze --also-rg` writes the
//! other rgs' variants and the fixture replays clean under each;
//! `workbench replay --add-variant` adds the running rg's variant and
//! leaves every other line of the file as it was; a replay under an rg
//! with no variant names the rg the fixture was frozen with and the
//! command that adds one. Each command runs with the rg it names first on
//! `PATH`, whichever rg the test run itself has.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The directory holding rg `major` (13: the system's `/usr/bin`),
/// checked by its `--version`.
pub(crate) fn rg_dir(major: u32) -> PathBuf {
    let dir = match major {
        13 => PathBuf::from("/usr/bin"),
        14 | 15 => {
            let cache = std::env::var_os("FS_SEARCH_RG_CACHE").map_or_else(
                || Path::new(&std::env::var_os("HOME").unwrap()).join(".cache/fs-search-ci"),
                PathBuf::from,
            );
            let version = if major == 14 { "14.1.1" } else { "15.2.0" };
            cache.join(format!("rg-{version}/bin"))
        }
        _ => panic!("no rg {major} here"),
    };
    let version = Command::new(dir.join("rg"))
        .arg("--version")
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "rg {major} is expected at {}: {e} (.ci/run builds rg 14.1.1 and 15.2.0 there; Debian's ripgrep is 13)",
                dir.display()
            )
        });
    let first = String::from_utf8_lossy(&version.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    assert!(
        first.starts_with(&format!("ripgrep {major}.")),
        "{}: {first}",
        dir.display()
    );
    dir
}

/// `workbench ARGS` in `cwd` with rg `major` first on `PATH` and no rg
/// config or CI variables of the test run.
pub(crate) fn workbench_under(major: u32, cwd: &Path, args: &[&str]) -> Output {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::iter::once(rg_dir(major)).chain(std::env::split_paths(&path)))
            .unwrap();
    Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .current_dir(cwd)
        .env("PATH", path)
        .env_remove("RIPGREP_CONFIG_PATH")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Calls whose pages differ between rg 13 and rg 14/15 (glob's order
/// where a directory's mtime does not fall among its files', rg's
/// stderr) and one whose page is the same under all three.
const CALLS: &str = r#"{"call":"glob-all","tool":"glob","args":{"pattern":"*"},"options":{"config":{"globMaxResults":3}}}
{"call":"grep-needle","tool":"grep","args":{"pattern":"needle"}}
{"call":"grep-unclosed","tool":"grep","args":{"pattern":"(unclosed"}}
{"call":"grep-missing","tool":"grep","args":{"pattern":"x","path":"no-such-dir"}}
"#;

/// Records [`CALLS`] under rg 13 on a live tree in `dir/live`
/// (docs/rg-versions.md's tree: files written a minute apart in 2023,
/// the directories made now) into `dir/recording.jsonl`.
fn recording(dir: &Path) {
    let files = [
        "vendor/a.ts",
        "vendor/b.ts",
        "vendor/c.ts",
        "src/main.rs",
        "src/lib.rs",
        "guide/intro.md",
        "README.md",
    ];
    for (minute, file) in files.iter().enumerate() {
        let path = dir.join("live").join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("needle in {file}\n")).unwrap();
        let time = std::time::UNIX_EPOCH
            + std::time::Duration::from_secs(1_672_531_200 + 60 * minute as u64);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(time)
            .unwrap();
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args([
            "record",
            "--tree",
            "live",
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--out",
            "recording.jsonl",
        ])
        .current_dir(dir)
        .env(
            "PATH",
            std::env::join_paths(std::iter::once(rg_dir(13)).chain(std::env::split_paths(
                &std::env::var_os("PATH").unwrap_or_default(),
            )))
            .unwrap(),
        )
        .env_remove("RIPGREP_CONFIG_PATH")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), CALLS.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

/// Freezes `dir/recording.jsonl` under rg 13 into `dir/fixture/t.jsonl`
/// with `also` (more `freeze` arguments); returns the output.
fn freeze(dir: &Path, also: &[&str]) -> Output {
    let mut args = vec![
        "freeze",
        "recording.jsonl",
        "--out",
        "fixture/t.jsonl",
        "--tree-out",
        "fixture/tree",
    ];
    args.extend_from_slice(also);
    workbench_under(13, dir, &args)
}

/// The `"rg":N` of every variant line of `transcript`, with its record.
fn variants(transcript: &str) -> Vec<(String, u64)> {
    transcript
        .lines()
        .filter(|l| l.starts_with(r#"{"variant":"#))
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["variant"].as_str().unwrap().to_owned(),
                v["rg"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// `transcript`'s lines without rg `major`'s variant blocks (a variant
/// line and the text lines after it).
fn without_variant(transcript: &str, major: u64) -> Vec<&str> {
    let mut out = Vec::new();
    let mut dropping = false;
    for line in transcript.lines() {
        if line.starts_with(r#"{"text":"#) {
            if !dropping {
                out.push(line);
            }
            continue;
        }
        dropping =
            line.starts_with(r#"{"variant":"#) && line.contains(&format!(r#","rg":{major},"#));
        if !dropping {
            out.push(line);
        }
    }
    out
}

#[test]
fn a_fixture_frozen_under_rg_13_with_also_rg_14_and_15_replays_clean_under_each() {
    let dir = tempfile::tempdir().unwrap();
    recording(dir.path());
    let rg14 = rg_dir(14);
    // One named by its directory, one by the binary itself.
    let rg15 = rg_dir(15).join("rg");
    let out = freeze(
        dir.path(),
        &[
            "--also-rg",
            rg14.to_str().unwrap(),
            "--also-rg",
            rg15.to_str().unwrap(),
        ],
    );
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(
        stdout.contains(
            "they replay with no differences under ripgrep 13.0.0, ripgrep 14.1.1, ripgrep 15.2.0"
        ),
        "{stdout}"
    );
    for major in [14, 15] {
        assert!(
            stderr.contains(&format!("gives another page for 3 of 4 records: their rg {major} variants are in fixture/t.jsonl (\"glob-all\", \"grep-unclosed\", \"grep-missing\")")),
            "{stderr}"
        );
    }
    let fixture = std::fs::read_to_string(dir.path().join("fixture/t.jsonl")).unwrap();
    assert!(fixture.starts_with(r#"{"transcript":"fs-search","version":2,"#));
    assert!(fixture.contains(r#""env":{"rg":"ripgrep 13.0.0","#));
    let found = variants(&fixture);
    for name in ["glob-all", "grep-unclosed", "grep-missing"] {
        for major in [14, 15] {
            assert!(found.contains(&(name.to_owned(), major)), "{found:?}");
        }
    }
    assert_eq!(found.len(), 6, "{found:?}");
    for major in [13, 14, 15] {
        let replay = workbench_under(major, dir.path(), &["replay", "fixture/t.jsonl"]);
        assert_eq!(
            replay.status.code(),
            Some(0),
            "rg {major}: {}{}",
            text(&replay.stdout),
            text(&replay.stderr)
        );
        assert_eq!(
            text(&replay.stdout),
            "ok fixture/t.jsonl: 4 records match\n"
        );
    }
}

#[test]
fn add_variant_adds_the_running_rgs_variant_and_leaves_every_other_line_alone() {
    let dir = tempfile::tempdir().unwrap();
    recording(dir.path());
    let rg14 = rg_dir(14);
    let out = freeze(dir.path(), &["--also-rg", rg14.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let file = dir.path().join("fixture/t.jsonl");
    let before = std::fs::read_to_string(&file).unwrap();
    let added = workbench_under(
        15,
        dir.path(),
        &["replay", "--add-variant", "fixture/t.jsonl"],
    );
    assert_eq!(added.status.code(), Some(0), "{}", text(&added.stderr));
    assert_eq!(
        text(&added.stdout),
        "added the variant for rg 15 (ripgrep 15.2.0) to 3 of 4 records of fixture/t.jsonl: \"glob-all\", \"grep-unclosed\", \"grep-missing\" (the other records and variants are as they were)\n"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    // Every line but the new rg 15 blocks is the line it was, byte for
    // byte: the header, the calls, results and rg 14's variants.
    assert_eq!(
        without_variant(&after, 15),
        before.lines().collect::<Vec<_>>()
    );
    let rg15: Vec<_> = variants(&after)
        .into_iter()
        .filter(|(_, major)| *major == 15)
        .collect();
    assert_eq!(rg15.len(), 3, "{after}");
    for major in [13, 14, 15] {
        let replay = workbench_under(major, dir.path(), &["replay", "fixture/t.jsonl"]);
        assert_eq!(
            replay.status.code(),
            Some(0),
            "rg {major}: {}",
            text(&replay.stdout)
        );
    }
    // Again: nothing differs, nothing is written.
    let again = workbench_under(
        15,
        dir.path(),
        &["replay", "--add-variant", "fixture/t.jsonl"],
    );
    assert_eq!(text(&again.stdout), "ok fixture/t.jsonl: 4 records match\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), after);
}

#[test]
fn add_variant_under_the_rg_major_a_fixture_was_frozen_with_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    recording(dir.path());
    let out = freeze(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let file = dir.path().join("fixture/t.jsonl");
    // A page changed by hand: under rg 13 a change is the engine's.
    let changed = std::fs::read_to_string(&file).unwrap().replacen(
        r#"{"text":"error: unclosed group"}"#,
        r#"{"text":"error: open group"}"#,
        1,
    );
    std::fs::write(&file, &changed).unwrap();
    let refused = workbench_under(
        13,
        dir.path(),
        &["replay", "--add-variant", "fixture/t.jsonl"],
    );
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        text(&refused.stderr).contains(
            "workbench replay: --add-variant: fixture/t.jsonl was frozen with ripgrep 13.0.0, the same major version as this ripgrep 13.0.0"
        ),
        "{}",
        text(&refused.stderr)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), changed);
}

#[test]
fn a_replay_under_an_rg_without_a_variant_names_the_frozen_rg_and_the_command_that_adds_one() {
    let dir = tempfile::tempdir().unwrap();
    recording(dir.path());
    let out = freeze(dir.path(), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    for (major, version) in [(14, "ripgrep 14.1.1"), (15, "ripgrep 15.2.0")] {
        let replay = workbench_under(major, dir.path(), &["replay", "fixture/t.jsonl"]);
        assert_eq!(replay.status.code(), Some(1));
        let stdout = text(&replay.stdout);
        assert!(
            stdout.contains(&format!(
                "  fixture/t.jsonl was frozen with ripgrep 13.0.0 and has no variant for rg {major} ({version}) in 3 changed records: if rg {major}'s pages are right, add its variant with `workbench replay --add-variant fixture/t.jsonl` run under rg {major} (or freeze with `--also-rg DIR` naming it), then review `git diff`\n"
            )),
            "{stdout}"
        );
    }
}

#[test]
fn also_rg_refuses_what_is_not_an_rg_and_two_of_one_major_before_freezing() {
    let dir = tempfile::tempdir().unwrap();
    recording(dir.path());
    let not_rg = freeze(dir.path(), &["--also-rg", "/bin/true"]);
    assert_eq!(not_rg.status.code(), Some(2));
    assert!(
        text(&not_rg.stderr).contains("--also-rg /bin/true: "),
        "{}",
        text(&not_rg.stderr)
    );
    let rg14 = rg_dir(14);
    let rg14_binary = rg14.join("rg");
    let twice = freeze(
        dir.path(),
        &[
            "--also-rg",
            rg14.to_str().unwrap(),
            "--also-rg",
            rg14_binary.to_str().unwrap(),
        ],
    );
    assert_eq!(twice.status.code(), Some(2));
    assert!(
        text(&twice.stderr)
            .contains("are both rg 14: a fixture holds one variant per major version"),
        "{}",
        text(&twice.stderr)
    );
    assert!(!dir.path().join("fixture").exists());
}
