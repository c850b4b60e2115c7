//! `workbench explain`: the built binary with real rg and real
//! trees. The property tests generate trees with nested ignore files,
//! hidden names, binary files and symlinks, run one call, and check every
//! file's verdict against what the real rg did in that call (its matches,
//! its walk, its `--debug` report), and that `--unsearched` adds up.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use proptest::prelude::*;
use serde_json::Value;

use crate::cli_headless::{SAMPLING, json_of, stderr, stdout, workbench};

/// `workbench explain TOOL --workdir DIR --args ARGS --no-spill --json EXTRA...`.
fn explain_json(dir: &Path, tool: &str, args: &str, config: &str, extra: &[&str]) -> Value {
    let mut all = vec![
        "explain",
        tool,
        "--workdir",
        dir.to_str().unwrap(),
        "--config",
        config,
        "--args",
        args,
        "--no-spill",
        "--json",
    ];
    all.extend_from_slice(extra);
    let out = workbench(&all);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", stderr(&out));
    json_of(&out)
}

/// `path` joined to `base` and made lexically normal.
fn absolute(base: &Path, path: &str) -> PathBuf {
    let joined = if path.starts_with('/') {
        PathBuf::from(path)
    } else {
        base.join(path)
    };
    let mut out = PathBuf::from("/");
    for part in joined.components() {
        match part {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::Normal(name) => out.push(name),
            _ => {}
        }
    }
    out
}

/// rg run in `dir` with `args`.
fn rg(dir: &Path, args: &[String]) -> Output {
    Command::new("rg")
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// What the real rg did for a grep call: the files with matches, the
/// files it walked to, its `--debug` ignore lines by path.
struct RgTruth {
    matched: HashSet<PathBuf>,
    walked: HashSet<PathBuf>,
    debug: HashMap<PathBuf, String>,
}

fn grep_truth(dir: &Path, pattern: &str, include: Option<&str>, path: Option<&str>) -> RgTruth {
    let mut filters: Vec<String> = include.map(|i| format!("--glob={i}")).into_iter().collect();
    if let Some(path) = path {
        filters.push("--".into());
        filters.push(path.into());
    }
    let mut search = vec!["--json".to_owned(), format!("--regexp={pattern}")];
    search.extend(filters.iter().cloned());
    let out = rg(dir, &search);
    let mut matched = HashSet::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        if record["type"] == "match" {
            matched.insert(absolute(
                dir,
                record["data"]["path"]["text"].as_str().unwrap(),
            ));
        }
    }
    let (walked, debug) = walk_truth(dir, &filters);
    RgTruth {
        matched,
        walked,
        debug,
    }
}

/// `rg --files --debug FILTERS`: the files listed and the ignore lines.
fn walk_truth(dir: &Path, filters: &[String]) -> (HashSet<PathBuf>, HashMap<PathBuf, String>) {
    let mut args = vec!["--files".to_owned(), "--debug".to_owned()];
    args.extend(filters.iter().cloned());
    let out = rg(dir, &args);
    let walked = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| absolute(dir, l))
        .collect();
    let mut debug = HashMap::new();
    for line in String::from_utf8_lossy(&out.stderr).lines() {
        if let Some(at) = line.find(": ignoring ") {
            let rest = &line[at + ": ignoring ".len()..];
            if let Some(end) = rest.rfind(": Ignore(IgnoreMatch(") {
                debug.insert(absolute(dir, &rest[..end]), rest[end..].to_owned());
            }
        }
    }
    (walked, debug)
}

/// The nearest path at or above `file` (below `root`) rg's debug report
/// says it ignored, with that report.
fn nearest_ignored<'a>(
    debug: &'a HashMap<PathBuf, String>,
    file: &Path,
    root: &Path,
) -> Option<(PathBuf, &'a String)> {
    let mut chain: Vec<PathBuf> = file
        .ancestors()
        .take_while(|a| a.starts_with(root) && *a != root)
        .map(Path::to_path_buf)
        .collect();
    chain.reverse();
    chain
        .into_iter()
        .find_map(|p| debug.get(&p).map(|line| (p, line)))
}

/// Every non-directory entry under `dir`, symlinks not followed.
fn entries(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(current) = stack.pop() {
        for entry in std::fs::read_dir(&current).unwrap() {
            let entry = entry.unwrap();
            let kind = entry.file_type().unwrap();
            if kind.is_dir() {
                stack.push(entry.path());
            } else {
                out.push(entry.path());
            }
        }
    }
    out.sort();
    out
}

fn has_nul(dir: &Path, file: &Path) -> bool {
    let out = rg(
        dir,
        &[
            "--count".into(),
            "--text".into(),
            "--regexp=\\x00".into(),
            "--".into(),
            file.to_string_lossy().into_owned(),
        ],
    );
    out.status.code() == Some(0)
}

// ---- generated trees ------------------------------------------------------

const DIRS: [&str; 6] = ["", "d1", "d1/d2", ".h", "d1/.h2", "d3"];
const NAMES: [&str; 6] = ["a.txt", "b.rs", "c.log", "keep.log", ".dot.txt", "bin.dat"];
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];
const RULES: [&str; 13] = [
    "*.log",
    "!keep.log",
    "b.rs",
    "/a.txt",
    "d2/",
    "d2",
    "**/d2/*.txt",
    "!a.txt",
    ".h",
    "d3/**",
    "bin.*",
    "!/d1/d2/",
    "*.txt",
];

#[derive(Debug, Clone)]
struct Tree {
    /// (dir, name, content kind: 0 hit, 1 miss, 2 binary, 3 hit then binary)
    files: Vec<(usize, usize, u8)>,
    /// (dir, ignore file, rules)
    ignores: Vec<(usize, usize, Vec<usize>)>,
    dir_link: bool,
    file_link: bool,
}

fn tree_strategy() -> impl Strategy<Value = Tree> {
    (
        prop::collection::vec((0..DIRS.len(), 0..NAMES.len(), 0u8..4), 1..18),
        prop::collection::vec(
            (
                0..DIRS.len(),
                0..IGNORE_FILES.len(),
                prop::collection::vec(0..RULES.len(), 1..4),
            ),
            0..5,
        ),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(files, ignores, dir_link, file_link)| Tree {
            files,
            ignores,
            dir_link,
            file_link,
        })
}

fn build(tree: &Tree) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    for d in DIRS {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for (d, n, kind) in &tree.files {
        let content: Vec<u8> = match kind {
            0 => b"hit\n".to_vec(),
            1 => b"miss\n".to_vec(),
            2 => b"\0hit\n".to_vec(),
            _ => [b"hit\n".as_slice(), &[0], b"\n"].concat(),
        };
        std::fs::write(root.join(DIRS[*d]).join(NAMES[*n]), content).unwrap();
    }
    for (d, f, rules) in &tree.ignores {
        let text: String = rules.iter().map(|r| format!("{}\n", RULES[*r])).collect();
        let path = root.join(DIRS[*d]).join(IGNORE_FILES[*f]);
        let mut old = std::fs::read_to_string(&path).unwrap_or_default();
        old.push_str(&text);
        std::fs::write(path, old).unwrap();
    }
    if tree.dir_link {
        std::os::unix::fs::symlink("d1", root.join("lnk")).unwrap();
    }
    if tree.file_link {
        std::fs::write(root.join("target.txt"), "hit\n").unwrap();
        std::os::unix::fs::symlink("target.txt", root.join("flink.txt")).unwrap();
    }
    dir
}

/// The arguments of a grep for `hit` with `include` and `path` when given.
fn hit_args(include: Option<&str>, path: Option<&str>) -> Value {
    let mut args = serde_json::json!({"pattern": "hit"});
    if let Some(include) = include {
        args["include"] = include.into();
    }
    if let Some(path) = path {
        args["path"] = path.into();
    }
    args
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(24)
}

/// The report's source (workdir-relative or absolute) as an absolute path.
fn source_path(dir: &Path, reason: &Value) -> PathBuf {
    absolute(dir, reason["source"].as_str().unwrap())
}

/// The `from` of rg's debug report, absolute.
fn debug_from(dir: &Path, line: &str) -> Option<PathBuf> {
    let start = line.find("from: Some(\"")? + "from: Some(\"".len();
    let end = start + line[start..].find('"')?;
    Some(absolute(dir, &line[start..end]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    /// Every file's grep verdict agrees with what the real rg did in that
    /// call, and every ignored file's rule and source with rg's `--debug`.
    #[test]
    fn grep_verdicts_agree_with_what_rg_did_and_its_debug_report(
        tree in tree_strategy(),
        include in prop::option::of(prop::sample::select(vec!["*.txt", "*.{rs,log}", "d1/**"])),
        path in prop::option::of(prop::sample::select(vec!["d1", ".", "d1/d2"])),
    ) {
        let dir = build(&tree);
        let root = dir.path();
        let args = hit_args(include, path);
        let files = entries(root);
        let names: Vec<String> = files
            .iter()
            .map(|f| f.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let report = explain_json(
            root, "grep", &args.to_string(),
            r#"{"sampleOverCapGlobResults":true,"grepMaxMatches":2}"#, &name_refs,
        );
        let truth = grep_truth(root, "hit", include, path);
        let search_root = absolute(root, path.unwrap_or("."));
        for (file, explained) in files.iter().zip(report["paths"].as_array().unwrap()) {
            let verdict = explained["verdict"].as_str().unwrap();
            let reason = &explained["reason"];
            let context = format!("{}: {explained}", file.display());
            if truth.matched.contains(file) {
                prop_assert!(verdict == "page" || verdict == "spill", "{}", context);
            } else if truth.walked.contains(file) {
                let expected = if has_nul(root, file) { "not-searched" } else { "no-match" };
                prop_assert_eq!(verdict, expected, "{}", context);
                if expected == "not-searched" {
                    prop_assert_eq!(reason["kind"].as_str(), Some("binary"), "{}", context);
                }
            } else {
                prop_assert_eq!(verdict, "not-searched", "{}", context);
                let kind = reason["kind"].as_str().unwrap();
                if !file.starts_with(&search_root) {
                    prop_assert_eq!(kind, "outside", "{}", context);
                } else if let Some((_, line)) = nearest_ignored(&truth.debug, file, &search_root) {
                    if line.contains("Hidden") {
                        prop_assert_eq!(kind, "hidden", "{}", context);
                    } else if line.contains("Override(") {
                        prop_assert_eq!(kind, "include", "{}", context);
                    } else {
                        prop_assert_eq!(kind, "ignored", "{}", context);
                        let rule = reason["rule"].as_str().unwrap();
                        let original = format!("original: \"{rule}\"");
                        prop_assert!(line.contains(&original), "{} vs rg: {}", context, line);
                        prop_assert_eq!(Some(source_path(root, reason)), debug_from(root, line), "{}", context);
                        let line_no = reason["line"].as_u64().unwrap() as usize;
                        let written = std::fs::read_to_string(source_path(root, reason)).unwrap();
                        prop_assert_eq!(written.lines().nth(line_no - 1).map(str::trim_end), Some(rule));
                    }
                } else {
                    prop_assert_eq!(kind, "symlink", "{}", context);
                }
            }
        }
    }

    /// Every file's glob verdict agrees with rg's listing for that call:
    /// listed is page or spill; under a VCS directory is `vcs`; a symlink
    /// is `symlink`; anything else the pattern did not match.
    #[test]
    fn glob_verdicts_agree_with_what_rg_listed(
        tree in tree_strategy(),
        pattern in prop::sample::select(vec!["*.txt", "**/*.log", "d1/**", "*.{rs,dat}"]),
        path in prop::option::of(prop::sample::select(vec!["d1", "."])),
    ) {
        let dir = build(&tree);
        let root = dir.path();
        let mut args = serde_json::json!({"pattern": pattern});
        if let Some(path) = path { args["path"] = path.into(); }
        let files = entries(root);
        let names: Vec<String> = files
            .iter()
            .map(|f| f.strip_prefix(root).unwrap().to_string_lossy().into_owned())
            .collect();
        let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let report = explain_json(
            root, "glob", &args.to_string(),
            r#"{"sampleOverCapGlobResults":true,"globMaxResults":2}"#, &name_refs,
        );
        let mut filters = vec![format!("--glob={pattern}"), "--no-ignore".into(), "--hidden".into()];
        for name in [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"] {
            filters.push(format!("--glob=!**/{name}"));
            filters.push(format!("--glob=!**/{name}/**"));
        }
        if let Some(path) = path { filters.push("--".into()); filters.push(path.into()); }
        let (listed, _) = walk_truth(root, &filters);
        let search_root = absolute(root, path.unwrap_or("."));
        for (file, explained) in files.iter().zip(report["paths"].as_array().unwrap()) {
            let verdict = explained["verdict"].as_str().unwrap();
            let kind = explained["reason"]["kind"].as_str();
            let context = format!("{}: {explained}", file.display());
            if listed.contains(file) {
                prop_assert!(verdict == "page" || verdict == "spill", "{}", context);
            } else if !file.starts_with(&search_root) {
                prop_assert_eq!(kind, Some("outside"), "{}", context);
            } else if file.strip_prefix(&search_root).unwrap().starts_with(".git") {
                prop_assert_eq!((verdict, kind), ("not-searched", Some("vcs")), "{}", context);
            } else if std::fs::symlink_metadata(file).unwrap().file_type().is_symlink()
                && explained["reason"]["kind"] != "pattern"
            {
                prop_assert_eq!((verdict, kind), ("not-searched", Some("symlink")), "{}", context);
            } else {
                prop_assert_eq!((verdict, kind), ("not-matched", Some("pattern")), "{}", context);
            }
        }
    }

    /// `--unsearched` counts every file under the search root once: its
    /// reasons add up to the files rg did not search (rg's walk, less the
    /// files rg's binary rule stopped).
    #[test]
    fn unsearched_counts_add_up_to_the_files_rg_did_not_search(
        tree in tree_strategy(),
        include in prop::option::of(prop::sample::select(vec!["*.txt", "*.{rs,log}"])),
        path in prop::option::of(prop::sample::select(vec!["d1", "."])),
    ) {
        let dir = build(&tree);
        let root = dir.path();
        let args = hit_args(include, path);
        let report = explain_json(root, "grep", &args.to_string(), SAMPLING, &["--unsearched"]);
        let summary = &report["unsearched"];
        let truth = grep_truth(root, "hit", include, path);
        let search_root = absolute(root, path.unwrap_or("."));
        let under: Vec<PathBuf> = entries(&search_root);
        let searched = truth
            .walked
            .iter()
            .filter(|f| truth.matched.contains(*f) || !has_nul(root, f))
            .count() as u64;
        prop_assert_eq!(summary["totalFiles"].as_u64(), Some(under.len() as u64));
        prop_assert_eq!(summary["searchedFiles"].as_u64(), Some(searched));
        let by_reason: u64 = summary["byReason"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["files"].as_u64().unwrap())
            .sum();
        prop_assert_eq!(by_reason, under.len() as u64 - searched);
        let unexplained = summary["byReason"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["reason"] == "unexplained");
        prop_assert!(!unexplained, "{}", summary);
    }

    /// A summary alone takes its rules from ripgrep's `ignore` crate
    /// replaying the walk; with a path to explain it takes them from rg's
    /// own `--debug` report. Both summaries are the same: every count by
    /// reason, every rule with its source, line and count, every excluded
    /// directory, and the crate's has no note of a disagreement (where the
    /// crate is not known to agree with the installed rg, rg is asked).
    ///
    /// The workdir is the repository's top or its `d1` (then the ignore
    /// files of the top lie above it, as when an agent works in a
    /// subdirectory of a repository).
    #[test]
    fn unsearched_rules_from_the_ignore_crate_are_the_rules_rg_debug_reports(
        tree in tree_strategy(),
        include in prop::option::of(prop::sample::select(vec!["*.txt", "*.{rs,log}", "d1/**"])),
        path in prop::option::of(prop::sample::select(vec!["d1", ".", "d1/d2"])),
        in_d1 in any::<bool>(),
    ) {
        let dir = build(&tree);
        let (workdir, path) = if in_d1 {
            (dir.path().join("d1"), path.map(|p| p.strip_prefix("d1").map_or(p, |rest| rest.trim_start_matches('/'))).filter(|p| !p.is_empty()))
        } else {
            (dir.path().to_path_buf(), path)
        };
        let root = workdir.as_path();
        let args = hit_args(include, path).to_string();
        let by_crate = explain_json(root, "grep", &args, SAMPLING, &["--unsearched"]);
        let by_rg = explain_json(root, "grep", &args, SAMPLING, &["--unsearched", "a.txt"]);
        let (by_crate, by_rg) = (&by_crate["unsearched"], &by_rg["unsearched"]);
        prop_assert!(by_crate.get("notes").is_none(), "{}", by_crate);
        prop_assert_eq!(by_crate, by_rg);
    }

    /// The same for glob: its pattern and VCS excludes, replayed by the
    /// crate, give the summary rg's `--debug` gives.
    #[test]
    fn glob_unsearched_from_the_ignore_crate_is_what_rg_debug_reports(
        tree in tree_strategy(),
        pattern in prop::sample::select(vec!["*.txt", "**/*.log", "d1/**", "*.{rs,dat}", "*"]),
        path in prop::option::of(prop::sample::select(vec!["d1", "."])),
    ) {
        let dir = build(&tree);
        let root = dir.path();
        let mut args = serde_json::json!({"pattern": pattern});
        if let Some(path) = path { args["path"] = path.into(); }
        let args = args.to_string();
        let by_crate = explain_json(root, "glob", &args, SAMPLING, &["--unsearched"]);
        let by_rg = explain_json(root, "glob", &args, SAMPLING, &["--unsearched", "a.txt"]);
        prop_assert!(by_crate["unsearched"].get("notes").is_none(), "{}", by_crate);
        prop_assert_eq!(&by_crate["unsearched"], &by_rg["unsearched"]);
    }
}

/// Working in a subdirectory of a repository, with a path below it and a
/// re-including rule anchored at the top: rg 13 keeps `keep.log` out where
/// rg 15 and the `ignore` crate search it. The summary follows whichever
/// rg is installed, and names no disagreement.
#[test]
fn unsearched_from_a_repositorys_subdirectory_follows_the_installed_rg() {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path();
    std::fs::create_dir_all(top.join(".git")).unwrap();
    std::fs::write(top.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
    std::fs::write(top.join(".gitignore"), "*.log\n!/sub/inner/keep.log\n").unwrap();
    std::fs::create_dir_all(top.join("sub/inner")).unwrap();
    std::fs::write(top.join("sub/inner/keep.log"), "hit\n").unwrap();
    std::fs::write(top.join("sub/inner/y.txt"), "hit\n").unwrap();
    let sub = top.join("sub");
    let args = hit_args(None, Some("inner")).to_string();
    let summary = explain_json(&sub, "grep", &args, SAMPLING, &["--unsearched"]);
    let by_rg = explain_json(&sub, "grep", &args, SAMPLING, &["--unsearched", "y.txt"]);
    assert_eq!(summary["unsearched"], by_rg["unsearched"]);
    assert!(summary["unsearched"].get("notes").is_none(), "{summary}");
    let truth = grep_truth(&sub, "hit", None, Some("inner"));
    assert_eq!(
        summary["unsearched"]["searchedFiles"].as_u64(),
        Some(truth.walked.len() as u64)
    );
}

#[test]
fn explain_without_a_path_or_unsearched_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = workbench(&[
        "explain",
        "grep",
        "--workdir",
        dir.path().to_str().unwrap(),
        "--config",
        SAMPLING,
        "--args",
        r#"{"pattern":"x"}"#,
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stdout(&out));
    assert!(stderr(&out).contains("PATH"), "{}", stderr(&out));
}

#[test]
fn explain_of_a_call_refused_before_rg_ran_exits_2_naming_the_calls_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = workbench(&[
        "explain",
        "grep",
        "--workdir",
        dir.path().to_str().unwrap(),
        "--config",
        SAMPLING,
        "--args",
        r#"{"pattern":""}"#,
        "x",
    ]);
    assert_eq!(out.status.code(), Some(2));
    // Said once, naming the command, as every command's error is.
    assert_eq!(
        stderr(&out),
        "workbench: explain: the call failed, so there is nothing to explain: Error: pattern must be a non-empty string\n"
    );
}

/// A call rg ran and that failed (a regex rg rejects, a `path` that does
/// not exist) is explained, exit 0, its error in `callError`; only a call
/// refused before rg ran exits 2 (docs/explain.md, "Exit status").
#[test]
fn explain_of_a_call_rg_ran_and_failed_exits_0_with_verdicts_and_the_calls_error() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "hit\n").unwrap();
    for (args, error, verdict) in [
        (
            r#"{"pattern":"("}"#,
            "Error: grep pattern rejected by ripgrep",
            "not-searched",
        ),
        (
            r#"{"pattern":"hit","path":"missing"}"#,
            "Error: grep search failed (exit 2): ",
            "not-searched",
        ),
    ] {
        let report = explain_json(dir.path(), "grep", args, SAMPLING, &["a.txt"]);
        let call_error = report["callError"].as_str().unwrap();
        assert!(call_error.starts_with(error), "{args}: {report}");
        // rg's own message: `missing: …` (rg 13), `rg: missing: …` (14, 15).
        if args.contains("missing") {
            let rest = &call_error[error.len()..];
            assert!(
                rest.starts_with("missing:") || rest.starts_with("rg: missing:"),
                "{args}: {report}"
            );
        }
        assert_eq!(report["paths"][0]["verdict"], verdict, "{args}: {report}");
    }
}

/// rg 14 and 15 exit 2 ("No files were searched") when every file is
/// filtered out: the call is an error result, and exactly then the
/// developer asks why; explain names the rule (rg 13 exits 1: no error).
#[test]
fn a_grep_whose_every_file_is_ignored_is_explained_with_the_rule() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    std::fs::write(dir.path().join(".gitignore"), "*.rs\n").unwrap();
    std::fs::write(dir.path().join("a.rs"), "hit\n").unwrap();
    let report = explain_json(
        dir.path(),
        "grep",
        r#"{"pattern":"hit"}"#,
        SAMPLING,
        &["a.rs", "--unsearched"],
    );
    let a = &report["paths"][0];
    assert_eq!(a["verdict"], "not-searched", "{report}");
    assert_eq!(a["reason"]["kind"], "ignored");
    assert_eq!(a["reason"]["rule"], "*.rs");
    assert_eq!(a["reason"]["source"], ".gitignore");
    assert_eq!(a["reason"]["line"], 1);
    assert_eq!(report["unsearched"]["searchedFiles"], 0);
}

// ---- docs/explain.md ------------------------------------------------------

/// The tree of docs/explain.md's example.
fn docs_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    for (path, content) in [
        (".git/HEAD", "ref: refs/heads/main\n".as_bytes()),
        (".gitignore", b"target/\n*.log\n!keep.log\n"),
        ("src/a.rs", b"// hit one\n// hit two\n"),
        ("src/b.rs", b"// hit three\n"),
        ("src/c.rs", b"// HIT in capitals\n"),
        ("src/keep.log", b"hit kept\n"),
        ("src/debug.log", b"hit ignored\n"),
        ("src/notes.md", b"hit in markdown\n"),
        ("src/.cache/old.rs", b"// hit cached\n"),
        ("src/logo.png", b"\x89PNG\0hit\n"),
        ("target/out.rs", b"// hit built\n"),
        ("docs/x.rs", b"// hit outside\n"),
        ("rg.conf", b"--sort=path\n"),
    ] {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
    std::os::unix::fs::symlink("../docs/x.rs", root.join("src/link.rs")).unwrap();
    dir
}

/// The text of `workbench explain` for the docs' two calls.
fn docs_example_output(dir: &Path) -> String {
    let config = dir.join("rg.conf");
    let run = |args: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args(args)
            .current_dir(dir)
            .env("RIPGREP_CONFIG_PATH", &config)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let grep = run(&[
        "explain",
        "grep",
        "--workdir",
        ".",
        "--config",
        r#"{"sampleOverCapGlobResults":true,"grepMaxMatches":2}"#,
        "--args",
        r#"{"pattern":"hit","path":"src","include":"*.{rs,log,png}"}"#,
        "--no-spill",
        "src/a.rs",
        "src/b.rs",
        "src/keep.log",
        "src/c.rs",
        "src/.cache/old.rs",
        "src/logo.png",
        "src/link.rs",
        "src/notes.md",
        "docs/x.rs",
        "src/gone.rs",
    ]);
    let glob = run(&[
        "explain",
        "glob",
        "--workdir",
        ".",
        "--config",
        SAMPLING,
        "--args",
        r#"{"pattern":"*.rs"}"#,
        "--no-spill",
        "src/notes.md",
        ".git/HEAD",
    ]);
    let unsearched = run(&[
        "explain",
        "grep",
        "--workdir",
        ".",
        "--config",
        SAMPLING,
        "--args",
        r#"{"pattern":"hit"}"#,
        "--no-spill",
        "--unsearched",
        "target/out.rs",
        "src/debug.log",
        "src/keep.log",
    ]);
    format!("{grep}\n{glob}\n{unsearched}")
}

/// docs/explain.md shows an example of each verdict; this keeps its
/// output block exactly what the workbench prints for its tree.
#[test]
fn docs_explain_md_shows_what_explain_prints_for_its_example() {
    let dir = docs_tree();
    let actual = docs_example_output(dir.path());
    let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/explain.md"))
        .unwrap();
    let begin = "<!-- example output: checked by explain::docs_explain_md_shows_what_explain_prints_for_its_example -->\n```text\n";
    let start = doc.find(begin).map(|i| i + begin.len());
    let shown = start.and_then(|s| doc[s..].find("```\n").map(|e| &doc[s..s + e]));
    assert_eq!(
        shown,
        Some(actual.as_str()),
        "docs/explain.md's example output is stale; it should be:\n{actual}"
    );
}
