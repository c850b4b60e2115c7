//! Hostile use of the command line: bad `--workdir`s, hostile
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

/// Runs `workbench ARGS` with stdin from `stdin`, killed after 20 s.
fn workbench_with_stdin(args: &[&str], stdin: std::process::Stdio) -> Output {
    let child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .stdin(stdin)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let guard = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(20));
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    });
    let out = child.wait_with_output().unwrap();
    drop(guard);
    out
}

#[test]
fn config_and_transcript_files_must_be_bounded_regular_files() {
    let dir = tree();
    let fifo = dir.path().join("fifo");
    assert!(
        Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let big = dir.path().join("big.json");
    std::fs::write(&big, format!("{{\"x\":\"{}\"}}", "a".repeat(1024 * 1024))).unwrap();
    let d = path_str(dir.path());
    let at = |p: &Path| format!("@{}", path_str(p));
    let (fifo_at, big_at) = (at(&fifo), at(&big));
    let glob = [
        "call",
        "glob",
        "--workdir",
        d,
        "--args",
        r#"{"pattern":"*"}"#,
        "--config",
    ];
    for (config, problem) in [
        (
            "@/dev/zero",
            "/dev/zero: not a regular file (a character device)".to_owned(),
        ),
        (
            fifo_at.as_str(),
            format!("{}: not a regular file (a FIFO)", path_str(&fifo)),
        ),
        (
            big_at.as_str(),
            format!("{}: larger than the limit of 1 MiB", path_str(&big)),
        ),
    ] {
        let mut args = glob.to_vec();
        args.push(config);
        let out = workbench_with_stdin(&args, std::process::Stdio::null());
        assert_eq!(out.status.code(), Some(2), "{config}");
        assert_eq!(
            text(&out.stderr),
            format!("workbench: --config: cannot read {problem}\n")
        );
    }
    for (file, problem) in [
        (
            "/dev/zero",
            "/dev/zero: not a regular file (a character device)".to_owned(),
        ),
        (
            path_str(&fifo),
            format!("{}: not a regular file (a FIFO)", path_str(&fifo)),
        ),
    ] {
        for command in ["replay", "freeze"] {
            let mut args = vec![command, file];
            if command == "freeze" {
                args.extend(["--out", "/nonexistent/x", "--tree-out", "/nonexistent/y"]);
            }
            let out = workbench_with_stdin(&args, std::process::Stdio::null());
            assert_eq!(out.status.code(), Some(2), "{command} {file}");
            assert_eq!(
                text(&out.stderr),
                format!("workbench {command}: {problem}\n")
            );
        }
    }
}

#[test]
fn record_reads_at_most_256_mib_of_calls_from_stdin() {
    let dir = tree();
    let out_file = dir.path().join("out.jsonl");
    let zero = std::fs::File::open("/dev/zero").unwrap();
    let out = workbench_with_stdin(
        &[
            "record",
            "--tree",
            path_str(dir.path()),
            "--config",
            SAMPLING,
            "--out",
            path_str(&out_file),
        ],
        zero.into(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "workbench record: <stdin>: larger than the limit of 256 MiB\n"
    );
    assert!(!out_file.exists());
}

/// A fixture tree whose manifest's entry on line 3 is `file`.
fn manifest_tree(file: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let manifest = format!(
        "{{\"manifest\":\"fs-search-fixture-tree\",\"version\":1,\"entries\":[\n\
         {{\"dir\":\".\",\"mtime\":1700000000}},\n{file},\n\
         {{\"file\":\"b.txt\",\"mtime\":1700000000,\"text\":\"b\"}}\n]}}\n"
    );
    std::fs::write(dir.path().join("manifest.json"), manifest).unwrap();
    dir
}

/// `workbench record --tree TREE` of no calls, with a private TMPDIR and
/// `WORKBENCH_TREE_LIMITS` if given.
fn record_tree(tree: &Path, limits: Option<&str>) -> (Output, tempfile::TempDir) {
    let tmp = tempfile::tempdir().unwrap();
    let out_file = tmp.path().join("out.jsonl");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_workbench"));
    cmd.args([
        "record",
        "--tree",
        path_str(tree),
        "--config",
        SAMPLING,
        "--out",
    ])
    .arg(&out_file)
    .env("TMPDIR", tmp.path())
    .stdin(std::process::Stdio::null());
    if let Some(limits) = limits {
        cmd.env("WORKBENCH_TREE_LIMITS", limits);
    }
    (cmd.output().unwrap(), tmp)
}

#[test]
fn hostile_manifests_are_refused_before_anything_is_written_naming_file_and_line() {
    for times in [
        "1000000000000",
        "4611686018427387904",
        "18446744073709551615",
    ] {
        let tree = manifest_tree(&format!(
            r#"{{"file":"big","mtime":1700000000,"content":[{{"repeat":"abcdefghij","times":{times}}}]}}"#
        ));
        let (out, tmp) = record_tree(tree.path(), None);
        assert_eq!(out.status.code(), Some(2), "{times}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            format!(
                "workbench record: {}/manifest.json:3: entry 1 (\"big\"): the tree's file content \
                 would exceed 268435456 bytes; set WORKBENCH_TREE_LIMITS=BYTES,ENTRIES to allow more\n",
                path_str(tree.path())
            )
        );
        // Nothing but the private TMPDIR's own (never written) out file.
        assert_eq!(std::fs::read_dir(tmp.path()).unwrap().count(), 0, "{times}");
    }
    // The limits are the defaults' or the variable's.
    let tree = manifest_tree(r#"{"file":"a.txt","mtime":1700000000,"text":"0123456789"}"#);
    let (out, _tmp) = record_tree(tree.path(), None);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let (out, _tmp) = record_tree(tree.path(), Some("10,100"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(
            "manifest.json:4: entry 2 (\"b.txt\"): the tree's file content would exceed 10 bytes"
        ),
        "{}",
        text(&out.stderr)
    );
    let (out, _tmp) = record_tree(tree.path(), Some("1000,2"));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("manifest.json:4: more than 2 entries;"),
        "{}",
        text(&out.stderr)
    );
    let (out, _tmp) = record_tree(tree.path(), Some("lots"));
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        text(&out.stderr),
        "workbench record: WORKBENCH_TREE_LIMITS=\"lots\": expected BYTES,ENTRIES (two whole numbers)\n"
    );
}

// ------------------------------------------------------------ signals

fn wait_for(what: &str, limit: std::time::Duration, mut check: impl FnMut() -> bool) {
    let start = std::time::Instant::now();
    while !check() {
        assert!(start.elapsed() < limit, "timed out waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
}

/// Runs `args` with a private TMPDIR, waits until its rg blocks on the
/// FIFO, sends `signal`, and checks: exit 128 + signal, no process of the
/// call alive 3 s after the signal, nothing left in TMPDIR.
fn signal_mid_call(what: &str, args: &[&str], stdin: Option<&str>, signal: (&str, i32)) {
    use fs_search_test_support::reliability::procfs::{descendants, live_group_members, proc_info};
    use std::io::Write;
    use std::time::{Duration, Instant};
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .env("TMPDIR", tmp.path())
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(text) = stdin {
        input.write_all(text.as_bytes()).unwrap();
    }
    drop(input);
    let pid = i32::try_from(child.id()).unwrap();
    wait_for(
        &format!("{what}: rg on the FIFO"),
        Duration::from_secs(20),
        || descendants(pid).iter().any(|(_, comm)| comm == "rg"),
    );
    let processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
    let groups: Vec<i32> = processes
        .iter()
        .filter_map(|p| proc_info(*p).map(|i| i.pgid))
        .collect();
    let sent = Instant::now();
    assert!(
        Command::new("kill")
            .args([&format!("-{}", signal.0), &pid.to_string()])
            .status()
            .unwrap()
            .success()
    );
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            sent.elapsed() < Duration::from_secs(10),
            "{what}: did not exit"
        );
        std::thread::sleep(Duration::from_millis(25));
    };
    assert_eq!(status.code(), Some(128 + signal.1), "{what} {}", signal.0);
    let gone = || {
        processes
            .iter()
            .all(|p| proc_info(*p).is_none_or(|i| !i.is_alive()))
            && groups
                .iter()
                .all(|g| live_group_members(*g).unwrap().is_empty())
    };
    while !gone() && sent.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(25));
    }
    let left: Vec<_> = processes
        .iter()
        .filter_map(|p| proc_info(*p).filter(|i| i.is_alive()))
        .collect();
    for info in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &info.pid.to_string()])
            .status();
    }
    assert!(
        left.is_empty(),
        "{what} {}: left running: {left:?}",
        signal.0
    );
    let litter: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(
        litter.is_empty(),
        "{what} {}: left in TMPDIR: {litter:?}",
        signal.0
    );
}

#[test]
fn sigint_sigterm_sighup_mid_call_kill_rg_remove_temp_trees_and_exit_128_plus_signal_within_3_s() {
    let dir = tree();
    assert!(
        Command::new("mkfifo")
            .arg(dir.path().join("fifo"))
            .status()
            .unwrap()
            .success()
    );
    let d = path_str(dir.path());
    let calls = tempfile::tempdir().unwrap();
    let transcript = calls.path().join("fifo.jsonl");
    std::fs::write(
        &transcript,
        format!(
            "{{\"transcript\":\"fs-search\",\"version\":1,\"tree\":\"{d}\",\"config\":{SAMPLING},\"env\":{{\"rg\":\"rg\",\"ripgrepConfig\":[]}}}}\n\
             {{\"call\":\"fifo\",\"tool\":\"grep\",\"args\":{{\"pattern\":\"x\",\"path\":\"fifo\"}},\"options\":{{}}}}\n\
             {{\"result\":\"fifo\",\"isError\":false,\"error\":null,\"spill\":null,\"warnings\":[]}}\n\
             {{\"text\":\"No matches found\"}}\n"
        ),
    )
    .unwrap();
    let out = calls.path().join("out.jsonl");
    let call_line = r#"{"call":"fifo","tool":"grep","args":{"pattern":"x","path":"fifo"}}"#;
    for signal in [("INT", 2), ("TERM", 15), ("HUP", 1)] {
        signal_mid_call(
            "call",
            &[
                "call",
                "grep",
                "--workdir",
                d,
                "--args",
                r#"{"pattern":"x","path":"fifo"}"#,
                "--config",
                SAMPLING,
                "--no-spill",
            ],
            None,
            signal,
        );
        signal_mid_call("replay", &["replay", path_str(&transcript)], None, signal);
        signal_mid_call(
            "record",
            &[
                "record",
                "--tree",
                d,
                "--config",
                SAMPLING,
                "--out",
                path_str(&out),
            ],
            Some(&format!("{call_line}\n")),
            signal,
        );
        assert!(!out.exists());
    }
}

// ------------------------------------------------------------ spill litter

#[test]
fn a_fake_rg_stderr_flood_leaves_nothing_in_tmpdir_after_a_no_spill_call() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tree();
    let bin = tempfile::tempdir().unwrap();
    let rg = bin.path().join("rg");
    std::fs::write(
        &rg,
        "#!/bin/sh\ncase \"$1\" in --version) echo 'ripgrep 13.0.0'; exit 0;; esac\n\
         head -c 300000 /dev/zero | tr '\\0' e >&2\nexit 2\n",
    )
    .unwrap();
    std::fs::set_permissions(&rg, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        path_str(bin.path()),
        std::env::var("PATH").unwrap()
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args([
            "call",
            "grep",
            "--workdir",
            path_str(dir.path()),
            "--args",
            r#"{"pattern":"x"}"#,
            "--config",
            SAMPLING,
            "--no-spill",
        ])
        .env("PATH", path)
        .env("TMPDIR", tmp.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(
        shown.starts_with("Error: grep search failed (exit 2): "),
        "{}",
        &shown[..80]
    );
    assert!(
        shown.ends_with(" [stderr truncated]"),
        "the flood outgrew the window"
    );
    let litter: Vec<_> = walk(tmp.path());
    assert!(litter.is_empty(), "left in TMPDIR: {litter:?}");
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            found.extend(walk(&path));
        }
        found.push(path);
    }
    found
}

// ------------------------------------------------------------ numbers

#[test]
fn config_numbers_of_2_pow_64_and_more_print_as_javascript_prints_them() {
    let config = r#"{"sampleOverCapGlobResults":true,"globMaxResults":1e308,"grepMaxMatches":18446744073709551616,"timeoutMs":1e20}"#;
    let out = workbench(&["surface", "--config", config]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let shown = text(&out.stdout);
    assert!(shown.contains(" Up to 1e+308 paths come back in modification-time order; a larger result instead returns 1e+308 paths sampled"), "{shown}");
    assert!(
        shown.contains("Returns the first 18446744073709552000 matches inline"),
        "{shown}"
    );
    assert!(
        shown.contains("== tool glob (timeoutMs 100000000000000000000, not sent to the model) =="),
        "{shown}"
    );
    // `--json` writes the numbers as `JSON.stringify` would.
    let out = workbench(&["surface", "--config", config, "--json"]);
    let listed = text(&out.stdout);
    assert!(
        listed.contains(r#""timeoutMs":100000000000000000000"#),
        "{listed}"
    );
    // The timeout policy refuses it, printing the number the same way.
    let dir = tree();
    let glob_all = |config: &str| {
        let out = workbench(&[
            "call",
            "glob",
            "--workdir",
            path_str(dir.path()),
            "--args",
            r#"{"pattern":"*"}"#,
            "--config",
            config,
        ]);
        text(&out.stdout)
    };
    assert_eq!(
        glob_all(config),
        "Error: timeout-policy: timeoutMs 100000000000000000000 exceeds the largest timer delay (2147483647ms)"
    );
    assert_eq!(
        glob_all(r#"{"sampleOverCapGlobResults":true,"timeoutMs":1e21}"#),
        "Error: timeout-policy: timeoutMs 1e+21 exceeds the largest timer delay (2147483647ms)"
    );
    // Caps saturate: a huge cap shows everything.
    assert_eq!(
        glob_all(
            r#"{"sampleOverCapGlobResults":true,"globMaxResults":1e308,"rawOutputMaxBytes":1e308}"#
        ),
        "a.txt"
    );
}
