//! The files the workbench writes outside the workdir (see
//! docs/workbench.md "Files the workbench writes"): one spill root per
//! user under the XDG cache directory, nothing left in TMPDIR, old spills
//! and logs pruned at start, one log file per process. Each test runs the
//! built binary with HOME, XDG_* and TMPDIR pointing into a temp dir.

use std::fs::{File, FileTimes};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::cli_headless::{root, tree};

const OVER_CAP: &str = r#"{"sampleOverCapGlobResults":false,"globMaxResults":1}"#;
const DAY: Duration = Duration::from_secs(24 * 60 * 60);

/// A user's home with its own TMPDIR (`home/tmp`).
struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tmp")).unwrap();
        Self { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn tmp(&self) -> PathBuf {
        self.path().join("tmp")
    }

    /// The workbench with this home and TMPDIR, no XDG_* variables but
    /// those in `xdg`.
    fn workbench(&self, xdg: &[(&str, &Path)]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_workbench"));
        command
            .env("HOME", self.path())
            .env("TMPDIR", self.tmp())
            .env_remove("XDG_CACHE_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_DATA_HOME");
        for (name, value) in xdg {
            command.env(name, value);
        }
        command
    }

    /// `workbench call glob` over the cap (so it spills), with `extra`.
    fn over_cap_call(&self, xdg: &[(&str, &Path)], extra: &[&str]) -> Output {
        let tree = tree();
        let out = self
            .workbench(xdg)
            .args(["call", "glob", "--workdir", root(tree.path())])
            .args(["--args", r#"{"pattern":"*"}"#, "--config", OVER_CAP])
            .args(["--session-id", "s-1", "--json"])
            .args(extra)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        out
    }
}

fn locator(out: &Output) -> PathBuf {
    let object: Value = serde_json::from_slice(&out.stdout).unwrap();
    PathBuf::from(object["spill"]["locator"].as_str().unwrap())
}

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// Sets the modification time of `path` `days` days back.
fn age(path: &Path, days: u32) {
    let when = SystemTime::now() - DAY * days;
    File::open(path)
        .unwrap()
        .set_times(FileTimes::new().set_modified(when).set_accessed(when))
        .unwrap();
}

#[test]
fn a_call_spills_under_the_user_cache_root_and_leaves_nothing_in_tmpdir() {
    let home = Home::new();
    let out = home.over_cap_call(&[], &[]);
    let spill_root = home.path().join(".cache/fs-search-workbench/spill");
    let file = locator(&out);
    assert_eq!(file.parent().unwrap().parent().unwrap(), spill_root);
    assert!(file.is_file());
    assert_eq!(mode(&spill_root), 0o700);
    assert_eq!(mode(file.parent().unwrap()), 0o700);
    assert_eq!(mode(&file), 0o600);
    assert_eq!(
        names(&home.tmp()),
        Vec::<String>::new(),
        "TMPDIR is left empty"
    );

    let cache = home.path().join("xdg-cache");
    let out = home.over_cap_call(&[("XDG_CACHE_HOME", &cache)], &[]);
    assert!(locator(&out).starts_with(cache.join("fs-search-workbench/spill")));
    assert_eq!(names(&home.tmp()), Vec::<String>::new());
}

#[test]
fn a_call_prunes_spills_older_than_the_retention_and_keeps_recent_ones() {
    let home = Home::new();
    let spill_root = home.path().join(".cache/fs-search-workbench/spill");
    let old = spill_root.join("session-0123456789ab");
    let recent = spill_root.join("session-ba9876543210");
    for dir in [&old, &recent] {
        std::fs::create_dir_all(dir).unwrap();
        std::fs::write(dir.join("abc-glob-results.txt"), "x\n").unwrap();
    }
    age(&old.join("abc-glob-results.txt"), 10);
    age(&old, 10);
    age(&recent.join("abc-glob-results.txt"), 3);

    // A longer retention keeps the 10-day-old spill.
    home.over_cap_call(&[], &["--retention", "30"]);
    assert!(old.join("abc-glob-results.txt").exists());
    // The default week removes it, and its emptied directory.
    home.over_cap_call(&[], &[]);
    assert!(!old.exists());
    assert!(recent.join("abc-glob-results.txt").exists());
    // --retention 2 removes the 3-day-old file, not this call's own.
    let out = home.over_cap_call(&[], &["--retention", "2"]);
    assert!(!recent.join("abc-glob-results.txt").exists());
    assert!(locator(&out).is_file());
}

#[test]
fn a_given_spill_dir_is_used_as_it_is_and_never_pruned() {
    let home = Home::new();
    let mine = home.path().join("mine");
    let kept = mine.join("session-0123456789ab");
    std::fs::create_dir_all(&kept).unwrap();
    std::fs::write(kept.join("old.txt"), "x\n").unwrap();
    age(&kept.join("old.txt"), 30);
    let out = home.over_cap_call(&[], &["--spill-dir", root(&mine), "--retention", "0"]);
    assert!(locator(&out).starts_with(&mine));
    assert!(kept.join("old.txt").exists());
    assert!(!home.path().join(".cache").exists(), "no cache root made");
}

#[test]
fn each_mcp_server_logs_to_a_file_of_its_own_and_prunes_old_logs() {
    let home = Home::new();
    let tree = tree();
    let state = home.path().join("state");
    let logs = state.join("fs-search-workbench");
    std::fs::create_dir_all(&logs).unwrap();
    let old = logs.join("workbench.log");
    let recent = logs.join("workbench-1-2.log");
    std::fs::write(&old, "old\n").unwrap();
    std::fs::write(&recent, "recent\n").unwrap();
    age(&old, 8);
    age(&recent, 1);

    let mut pids = Vec::new();
    for _ in 0..2 {
        let child = home
            .workbench(&[("XDG_STATE_HOME", &state)])
            .args(["mcp", "--workdir", root(tree.path())])
            .args(["--config", crate::cli_headless::SAMPLING])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        pids.push(child.id());
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{out:?}");
    }

    assert!(!old.exists(), "a week-old log is pruned");
    assert!(recent.exists());
    for pid in pids {
        let own: Vec<String> = names(&logs)
            .into_iter()
            .filter(|n| n.ends_with(&format!("-{pid}.log")))
            .collect();
        assert_eq!(own.len(), 1, "{pid}: {:?}", names(&logs));
        let text = std::fs::read_to_string(logs.join(&own[0])).unwrap();
        assert!(text.contains("workbench mcp starting"), "{text}");
    }
    assert_eq!(
        names(&home.tmp()),
        Vec::<String>::new(),
        "TMPDIR is left empty"
    );
}
