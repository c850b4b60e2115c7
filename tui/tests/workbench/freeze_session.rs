//! The README's flow as a new user runs it, with nothing pinned by hand:
//! a real `workbench mcp --record` session (no `RIPGREP_CONFIG_PATH`, so
//! rg's grep order is its thread order) over a tree whose files were
//! copied within one second, `workbench freeze`, then `workbench replay`
//! and `workbench mcp --replay` again and again: every run the same.
//! CI runs this under rg 13, 14 and 15.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use fs_search_test_support::mcp::raw::Raw;
use fs_search_test_support::mcp::{SAMPLING, root};
use fs_search_test_support::rg_texts::running_rg_major;
use serde_json::{Value, json};

use crate::freeze_variants::{rg_dir, workbench_under};
use crate::mcp::bin;

/// A server-wide config with small caps, so pages go over them.
const SMALL_CAPS: &str =
    r#"{"sampleOverCapGlobResults":true,"globMaxResults":12,"grepMaxMatches":20}"#;

/// The calls of the session: over-cap and within-cap pages of both
/// tools, and an absolute `path` into the workdir `live`, as agents send.
fn session_calls(live: &str) -> Vec<(&'static str, Value)> {
    vec![
        (
            "grep",
            json!({"pattern": "needle", "path": format!("{live}/c")}),
        ),
        ("glob", json!({"pattern": "*"})),
        ("glob", json!({"pattern": "**/*.md"})),
        ("glob", json!({"pattern": "*.txt", "path": "b"})),
        ("grep", json!({"pattern": "needle"})),
        ("grep", json!({"pattern": "needle", "include": "*.md"})),
        ("grep", json!({"pattern": "needle \\d+", "path": "c"})),
        ("grep", json!({"pattern": "(unclosed"})),
    ]
}

/// A tree of 60 files in nested directories, written once and then copied
/// with `cp -r`: the copy's files all carry modification times from the
/// same second or so, as a user's checkout does.
fn copied_tree() -> tempfile::TempDir {
    let source = tempfile::tempdir().unwrap();
    for i in 0..60 {
        let dir = ["a", "b", "c/deep", "c", "d/e/f"][i % 5];
        let ext = ["txt", "md", "rs"][i % 3];
        let path = source.path().join(format!("{dir}/file{i:02}.{ext}"));
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, format!("line one\nneedle {i}\nline three\n")).unwrap();
    }
    let copy = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .args([
            "-r",
            &format!("{}/.", root(source.path())),
            root(copy.path()),
        ])
        .status()
        .unwrap();
    assert!(status.success());
    copy
}

/// `workbench ARGS` as a user's shell runs it: no rg config of the tests.
fn run(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env_remove("RIPGREP_CONFIG_PATH")
        .output()
        .unwrap()
}

/// A stdio server started as a user's agent host starts it: no rg
/// config of the tests.
struct Stdio2025 {
    raw: Raw,
    next_id: i64,
}

impl Stdio2025 {
    fn spawn(args: &[&str]) -> Self {
        let state = tempfile::tempdir().unwrap();
        let mut command = Command::new(bin());
        command
            .args(args)
            .env_remove("RIPGREP_CONFIG_PATH")
            .env("XDG_STATE_HOME", state.path())
            .env("TMPDIR", state.path());
        let mut raw = Raw::with_command(command, state);
        raw.initialize();
        Self { raw, next_id: 1 }
    }

    /// `workbench mcp --workdir LIVE --config CONFIG --record RECORDING`.
    fn recording(live: &Path, config: &str, recording: &Path) -> Self {
        Self::spawn(&[
            "mcp",
            "--workdir",
            root(live),
            "--config",
            config,
            "--record",
            root(recording),
        ])
    }

    /// The model-visible text of a `tools/call`.
    fn call(&mut self, tool: &str, args: &Value) -> String {
        let id = self.next_id;
        self.next_id += 1;
        self.raw
            .send_json(json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
            "params":{"name":tool,"arguments":args}}));
        let response = self.raw.response(id);
        let content = response["result"]["content"].as_array().unwrap();
        content[0]["text"].as_str().unwrap().to_owned()
    }

    /// Closes stdin, as an agent host ends its server, and waits.
    fn finish(mut self) {
        let status = self.raw.hang_up(Duration::from_secs(30));
        assert!(status.success(), "{status:?}");
    }
}

/// The calls (tool, args) and texts of the records of a transcript, in
/// order.
fn records(transcript: &Path) -> (Vec<(String, Value)>, Vec<String>) {
    let mut calls = Vec::new();
    let mut texts: Vec<Vec<String>> = Vec::new();
    // Another rg's variant of a record follows its text: not the record's.
    let mut in_variant = false;
    for line in std::fs::read_to_string(transcript).unwrap().lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if value.get("variant").is_some() {
            in_variant = true;
        } else if value.get("call").is_some() {
            in_variant = false;
            calls.push((
                value["tool"].as_str().unwrap().to_owned(),
                value["args"].clone(),
            ));
        } else if value.get("result").is_some() {
            in_variant = false;
            texts.push(Vec::new());
        } else if let (Some(text), Some(last), false) =
            (value.get("text"), texts.last_mut(), in_variant)
        {
            last.push(text.as_str().unwrap().to_owned());
        }
    }
    let texts = texts.into_iter().map(|lines| lines.join("\n")).collect();
    (calls, texts)
}

#[test]
fn a_recorded_session_frozen_once_replays_the_same_every_time() {
    let live = copied_tree();
    let work = tempfile::tempdir().unwrap();
    let recording = work.path().join("recordings/session.jsonl");
    std::fs::create_dir_all(recording.parent().unwrap()).unwrap();

    let mut server = Stdio2025::recording(live.path(), SMALL_CAPS, &recording);
    let calls = session_calls(root(live.path()));
    for (tool, args) in &calls {
        server.call(tool, args);
    }
    server.finish();

    let transcript = work.path().join("fixtures/transcripts/session.jsonl");
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let tree_out = work.path().join("fixtures/trees/session");
    let freeze = run(&[
        "freeze",
        root(&recording),
        "--workdir",
        root(live.path()),
        "--out",
        root(&transcript),
        "--tree-out",
        root(&tree_out),
    ]);
    let stdout = String::from_utf8_lossy(&freeze.stdout);
    assert_eq!(freeze.status.code(), Some(0), "{freeze:?}");
    assert!(
        stdout.contains("froze 8 records") && stdout.contains("they replay with no differences"),
        "{stdout}"
    );
    // The live tree is gone: the fixture needs nothing of it.
    drop(live);

    let (frozen_calls, expected) = records(&transcript);
    assert_eq!(expected.len(), 8);
    // The absolute path into the workdir follows the fixture tree.
    assert!(
        frozen_calls
            .iter()
            .any(|(_, args)| args["path"] == "<TREE>/c"),
        "{frozen_calls:?}"
    );
    let first = run(&["replay", root(&transcript)]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    for _ in 1..20 {
        let again = run(&["replay", root(&transcript)]);
        assert_eq!(again.status.code(), Some(0), "{again:?}");
        assert_eq!(again.stdout, first.stdout);
    }

    // Served back: every answer is the frozen expectation, every time (a
    // client of the served fixture asks with the paths its pages show).
    let mut replaying = Stdio2025::spawn(&["mcp", "--replay", root(&transcript)]);
    for _ in 0..20 {
        for ((tool, args), want) in frozen_calls.iter().zip(&expected) {
            assert_eq!(&replaying.call(tool, args), want, "{tool} {args}");
        }
    }
    replaying.finish();
}

#[test]
fn freeze_names_a_file_changed_since_recording_instead_of_guessing() {
    let live = copied_tree();
    let work = tempfile::tempdir().unwrap();
    let recording = work.path().join("session.jsonl");
    let mut server = Stdio2025::recording(live.path(), SAMPLING, &recording);
    server.call("grep", &json!({"pattern": "needle 1\\b", "path": "b"}));
    server.call("glob", &json!({"pattern": "*.rs", "path": "c/deep"}));
    server.finish();
    // After the session: one matching file edited, another removed.
    std::fs::write(live.path().join("b/file01.md"), "no longer\n").unwrap();
    std::fs::remove_file(live.path().join("c/deep/file02.rs")).unwrap();
    let freeze = run(&[
        "freeze",
        root(&recording),
        "--workdir",
        root(live.path()),
        "--out",
        root(&work.path().join("out/t.jsonl")),
        "--tree-out",
        root(&work.path().join("out/tree")),
    ]);
    let stderr = String::from_utf8_lossy(&freeze.stderr);
    let stdout = String::from_utf8_lossy(&freeze.stdout);
    assert_eq!(freeze.status.code(), Some(1), "{freeze:?}");
    assert!(
        stderr.contains(
            "record \"call-1-grep\": content differs: a file on the live page is not in the tree"
        ) || stderr.contains("record \"call-1-grep\": content differs: a file changed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("b/file01.md"),
        "the edited file is named: {stderr}"
    );
    assert!(
        stderr.contains("record \"call-2-glob\": content differs: a file on the live page is not in the tree (removed or renamed since recording): c/deep/file02.rs"),
        "{stderr}"
    );
    assert!(
        stdout.contains("2 of them differ in content from what the model saw live"),
        "{stdout}"
    );
}

#[test]
fn a_workdir_inside_a_git_repository_keeps_its_gitignore_and_whole_names_the_parents() {
    let repo = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(repo.path().join(".git")).unwrap();
    std::fs::write(repo.path().join(".gitignore"), "*.log\n").unwrap();
    let live = repo.path().join("sub");
    std::fs::create_dir_all(&live).unwrap();
    std::fs::write(live.join(".gitignore"), "secret.txt\n").unwrap();
    for name in ["a.txt", "secret.txt", "x.log"] {
        std::fs::write(live.join(name), "needle\n").unwrap();
    }
    let work = tempfile::tempdir().unwrap();
    let recording = work.path().join("session.jsonl");
    let mut server = Stdio2025::recording(&live, SAMPLING, &recording);
    let seen = server.call("grep", &json!({"pattern": "needle"}));
    server.finish();
    assert_eq!(seen, "Found 1 match\n\na.txt\nLine 1: needle");
    let (out, tree_out) = (
        work.path().join("out/t.jsonl"),
        work.path().join("out/tree"),
    );
    let freeze = |whole_tree: bool| {
        let mut args = vec![
            "freeze",
            root(&recording),
            "--workdir",
            root(&live),
            "--out",
            root(&out),
            "--tree-out",
            root(&tree_out),
        ];
        if whole_tree {
            args.push("--whole-tree");
        }
        run(&args)
    };
    // The minimal tree holds only what the grep found: faithful as it is.
    let minimal = freeze(false);
    assert_eq!(minimal.status.code(), Some(0), "{minimal:?}");
    let manifest = std::fs::read_to_string(work.path().join("out/tree/manifest.json")).unwrap();
    assert!(!manifest.contains("x.log"), "{manifest}");
    // The whole tree holds x.log, which only the parent's rule hid.
    let freeze = freeze(true);
    let stderr = String::from_utf8_lossy(&freeze.stderr);
    assert_eq!(freeze.status.code(), Some(1), "{freeze:?}");
    // The tree's own .gitignore still hides secret.txt on the frozen
    // tree; the parent's rule is what the fixture cannot hold.
    assert!(
        stderr.contains("gets an empty .git at its root"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "content differs: the fixture tree does not give the complete result the live tree gives (entries of x.log differ); ignore files above the workdir applied live and are not part of the frozen tree: "
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("secret.txt"), "{stderr}");
}

#[test]
fn a_refreeze_into_the_searched_tree_leaves_the_fixture_out_of_itself() {
    let live = copied_tree();
    let work = tempfile::tempdir().unwrap();
    let recording = work.path().join("session.jsonl");
    let mut server = Stdio2025::recording(live.path(), SAMPLING, &recording);
    server.call("glob", &json!({"pattern": "*.md"}));
    server.call("grep", &json!({"pattern": "needle 2"}));
    server.finish();
    let out = live.path().join("fixtures/transcripts/session.jsonl");
    let tree_out = live.path().join("fixtures/trees/session");
    let freeze = || {
        run(&[
            "freeze",
            root(&recording),
            "--workdir",
            root(live.path()),
            "--out",
            root(&out),
            "--tree-out",
            root(&tree_out),
        ])
    };
    let first = freeze();
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    let again = freeze();
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert!(
        stderr.contains("left fixtures/transcripts/session.jsonl out of the fixture tree")
            && stderr.contains("left fixtures/trees/session out of the fixture tree"),
        "{stderr}"
    );
    let manifest = std::fs::read_to_string(tree_out.join("manifest.json")).unwrap();
    assert!(
        !manifest.contains("\"fixtures/trees/session/manifest.json\""),
        "{manifest}"
    );
    assert!(
        !manifest.contains("\"fixtures/transcripts/session.jsonl\""),
        "{manifest}"
    );
}

/// A generated tree of 20,000 small files in 200 directories, every
/// file's and directory's modification time then set to one second (as a
/// checkout's or a copy's are), so glob's order has ties everywhere. Each
/// file holds an empty line, for the pattern that matches empty lines.
fn same_second_tree() -> tempfile::TempDir {
    let tree = tempfile::tempdir().unwrap();
    for d in 0..200 {
        let dir = tree.path().join(format!("d{d:03}"));
        std::fs::create_dir(&dir).unwrap();
        for f in 0..100 {
            let i = d * 100 + f;
            let ext = ["rs", "md", "txt"][i % 3];
            let text = format!("line one\n\nneedle {i}\nline four {d}\n");
            std::fs::write(dir.join(format!("f{i:05}.{ext}")), text).unwrap();
        }
    }
    let status = Command::new("find")
        .arg(tree.path())
        .args(["-exec", "touch", "-d", "@1700000000", "{}", "+"])
        .status()
        .unwrap();
    assert!(status.success());
    tree
}

/// The README's flow on a real-size tree with no rg config: a recorded
/// session covering over-cap glob and grep, `include`, a regex error,
/// missing paths, a single file, an absolute path inside the workdir and
/// a pattern that matches empty lines; `freeze` with `--also-rg` for the
/// other two rg majors exits 0 on the untouched tree, its fixture keeps a
/// fraction of the tree, and `replay` is clean run after run under rg 13,
/// 14 and 15.
#[test]
fn a_session_on_twenty_thousand_same_second_files_freezes_faithfully_on_the_first_try() {
    let live = same_second_tree();
    let live_root = root(live.path());
    let work = tempfile::tempdir().unwrap();
    let recording = work.path().join("recordings/session.jsonl");
    std::fs::create_dir_all(recording.parent().unwrap()).unwrap();
    let calls = [
        ("glob", json!({"pattern": "**/*.rs"})),
        ("glob", json!({"pattern": "*.md", "path": "d007"})),
        ("glob", json!({"pattern": "*", "path": "no_such_dir"})),
        ("grep", json!({"pattern": "needle \\d*77\\b"})),
        (
            "grep",
            json!({"pattern": "needle 2\\d\\b", "include": "*.md"}),
        ),
        ("grep", json!({"pattern": "(unclosed"})),
        (
            "grep",
            json!({"pattern": "needle", "path": "nonexistent_dir"}),
        ),
        (
            "grep",
            json!({"pattern": "needle", "path": "d000/f00001.md"}),
        ),
        (
            "grep",
            json!({"pattern": "needle 30\\d\\b", "path": format!("{live_root}/d003")}),
        ),
        ("grep", json!({"pattern": "^$", "path": "d004"})),
        ("grep", json!({"pattern": "four 199$", "path": "d199"})),
    ];
    let mut server = Stdio2025::recording(live.path(), SMALL_CAPS, &recording);
    let mut seen = Vec::new();
    for (tool, args) in &calls {
        seen.push(server.call(tool, args));
    }
    server.finish();
    assert!(seen[0].contains("Showing 12 of 6667"), "{}", seen[0]);
    assert!(seen[3].contains("Found 20 of 200 matches"), "{}", seen[3]);
    assert!(seen[6].contains("nonexistent_dir"), "{}", seen[6]);

    let transcript = work.path().join("fixtures/transcripts/session.jsonl");
    let tree_out = work.path().join("fixtures/trees/session");
    // Frozen under the rg this run has, with the other two majors'
    // variants (`--also-rg`), as a user on a laptop with one rg does for
    // a CI with another.
    let others: Vec<String> = [13, 14, 15]
        .into_iter()
        .filter(|&major| major != running_rg_major())
        .map(|major| rg_dir(major).to_string_lossy().into_owned())
        .collect();
    let mut args = vec![
        "freeze",
        root(&recording),
        "--workdir",
        live_root,
        "--out",
        root(&transcript),
        "--tree-out",
        root(&tree_out),
    ];
    for dir in &others {
        args.extend(["--also-rg", dir.as_str()]);
    }
    let freeze = run(&args);
    let stdout = String::from_utf8_lossy(&freeze.stdout);
    assert_eq!(freeze.status.code(), Some(0), "{freeze:?}");
    assert!(
        stdout.contains("froze 11 records") && stdout.contains("they replay with no differences"),
        "{stdout}"
    );
    // Every error page is what the model saw, byte for byte.
    let (_, frozen) = records(&transcript);
    for i in [2, 5, 6] {
        assert_eq!(frozen[i], seen[i], "record {i}");
    }
    // The fixture keeps the globbed names and the grepped files, not the
    // tree: 6,667 .rs names and a few hundred other files of 20,000.
    let manifest = std::fs::read_to_string(tree_out.join("manifest.json")).unwrap();
    let files = manifest.matches("{\"file\":").count();
    assert!((6_667..8_000).contains(&files), "{files} files");
    assert!(
        !manifest.contains("\"d150/f15001.md\""),
        "an unreached file"
    );
    drop(live);

    // Five replays under each of rg 13, 14 and 15, all clean.
    for major in [13, 14, 15] {
        let first = workbench_under(major, work.path(), &["replay", root(&transcript)]);
        assert_eq!(first.status.code(), Some(0), "rg {major}: {first:?}");
        for _ in 1..5 {
            let again = workbench_under(major, work.path(), &["replay", root(&transcript)]);
            assert_eq!(again.status.code(), Some(0), "rg {major}: {again:?}");
            assert_eq!(again.stdout, first.stdout, "rg {major}");
        }
    }
}

/// A session recorded in the sandbox freezes (its calls
/// run again in the sandbox, on the live tree); one recorded over ssh is
/// refused in one line that says what to run instead.
#[test]
fn a_sandboxed_session_freezes_and_an_ssh_one_says_where_to_freeze_it() {
    let live = copied_tree();
    let work = tempfile::tempdir().unwrap();
    let recording = work.path().join("session.jsonl");
    let mut server = Stdio2025::spawn(&[
        "mcp",
        "--workdir",
        root(live.path()),
        "--config",
        SMALL_CAPS,
        "--sandbox",
        "--record",
        root(&recording),
    ]);
    server.call("grep", &json!({"pattern": "needle"}));
    server.call("glob", &json!({"pattern": "**/*.md"}));
    server.finish();
    let header = std::fs::read_to_string(&recording).unwrap();
    // The runner `auto` chose on this machine (bubblewrap where user
    // namespaces are allowed, else Landlock).
    let executor = [
        "\"executor\":\"sandbox-bwrap\"",
        "\"executor\":\"sandbox-landlock\"",
    ]
    .into_iter()
    .find(|named| header.contains(named))
    .unwrap_or_else(|| panic!("no sandbox runner in {header}"));
    let freeze = |recording: &Path| {
        run(&[
            "freeze",
            root(recording),
            "--workdir",
            root(live.path()),
            "--out",
            root(&work.path().join("out/t.jsonl")),
            "--tree-out",
            root(&work.path().join("out/tree")),
        ])
    };
    let sandboxed = freeze(&recording);
    assert_eq!(sandboxed.status.code(), Some(0), "{sandboxed:?}");

    let over_ssh = work.path().join("ssh.jsonl");
    std::fs::write(
        &over_ssh,
        header.replacen(executor, "\"executor\":\"ssh://devbox\"", 1),
    )
    .unwrap();
    let refused = freeze(&over_ssh);
    assert_eq!(refused.status.code(), Some(2), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("recorded over --executor ssh://devbox")
            && stderr.contains("run `workbench freeze` there"),
        "{stderr}"
    );
}
