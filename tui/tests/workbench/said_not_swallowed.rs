//! What a new user gets wrong is said, not swallowed (docs/cli.md): an
//! unknown `--config` key warned of with the nearest key (the model sees
//! the contract's behaviour: the key ignored), `--args @FILE` for
//! arguments over the shell's limit, an unknown tool named with the ones
//! that exist, `freeze --out` into a new folder, a recording with no
//! calls, and `mcp --replay` naming the recorded calls most like a miss
//! first. The built `workbench`, real bash and real rg.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use fs_search_test_support::mcp::client::{Client, params, text_of};
use fs_search_test_support::mcp::{root, tree};
use serde_json::{Value, json};

use crate::mcp::{SERVER, bin, sorted_rg_config};

const MISSPELT: &str = r#"{"sampleOverCapGlobResults":true,"grepMaxMatch":1}"#;
const SAMPLING: &str = r#"{"sampleOverCapGlobResults":true}"#;
const WARNING: &str = "workbench: warning: --config: \"grepMaxMatch\" is not a config key and is ignored (did you mean grepMaxMatches? the keys are sampleOverCapGlobResults, globMaxResults, grepMaxMatches,";

/// `workbench ARGS` with `stdin` written to it, in `cwd`.
fn run(args: &[&str], stdin: &str, cwd: &Path) -> Output {
    let mut child = Command::new(bin())
        .args(args)
        .current_dir(cwd)
        .env("RIPGREP_CONFIG_PATH", sorted_rg_config())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    // A command that does not read stdin may have closed it already.
    let _ = pipe.write_all(stdin.as_bytes());
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn an_unknown_config_key_is_warned_of_by_every_command_and_ignored_as_the_contract_says() {
    let dir = tree();
    let work = root(dir.path());
    let grep = r#"{"pattern":"needle"}"#;
    let call = |config: &str| {
        run(
            &[
                "call",
                "grep",
                "--workdir",
                work,
                "--no-spill",
                "--config",
                config,
                "--args",
                grep,
            ],
            "",
            dir.path(),
        )
    };
    let (misspelt, default) = (call(MISSPELT), call(SAMPLING));
    assert_eq!(misspelt.status.code(), Some(0), "{misspelt:?}");
    assert!(
        stderr(&misspelt).starts_with(WARNING),
        "{}",
        stderr(&misspelt)
    );
    assert_eq!(stderr(&default), "");
    // The engine ignores the key: the page is the default config's (three
    // matches, where grepMaxMatches=1 would cut it to one).
    assert_eq!(stdout(&misspelt), stdout(&default));
    assert!(
        stdout(&misspelt).starts_with("Found 3 matches"),
        "{}",
        stdout(&misspelt)
    );

    let out = tempfile::tempdir().unwrap();
    let transcript = out.path().join("t.jsonl");
    let commands: Vec<Vec<&str>> = vec![
        vec!["surface", "--config", MISSPELT],
        vec![
            "explain",
            "grep",
            "--workdir",
            work,
            "--no-spill",
            "--config",
            MISSPELT,
            "--args",
            grep,
            "notes.md",
        ],
        vec![
            "record",
            "--tree",
            work,
            "--config",
            MISSPELT,
            "--out",
            root(&transcript),
        ],
    ];
    for args in commands {
        let output = run(&args, "", dir.path());
        assert_eq!(output.status.code(), Some(0), "{args:?}: {output:?}");
        assert!(
            stderr(&output).starts_with(WARNING),
            "{args:?}: {}",
            stderr(&output)
        );
    }
    // `surface --against` names its own flag.
    let against = run(
        &["surface", "--config", SAMPLING, "--against", MISSPELT],
        "",
        dir.path(),
    );
    assert!(
        stderr(&against).starts_with("workbench: warning: --against: \"grepMaxMatch\""),
        "{}",
        stderr(&against)
    );

    // The MCP server says it on stderr (its stdout is JSON-RPC only) and
    // ends cleanly at the end of its input.
    let state = tempfile::tempdir().unwrap();
    let server = SERVER
        .command(
            dir.path(),
            state.path(),
            &["--config", MISSPELT, "--no-spill"],
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(stderr(&server).contains(WARNING), "{}", stderr(&server));
    assert_eq!(stdout(&server), "");
}

#[test]
fn args_at_file_reads_the_arguments_from_a_file_or_stdin() {
    let dir = tree();
    let work = root(dir.path());
    let files = tempfile::tempdir().unwrap();
    // Arguments over Linux's limit for one command-line argument (128
    // KiB): JSON text padded with whitespace, as JSON.parse allows.
    let args = format!(
        "{{\"pattern\": \"needle\",{}\"include\": \"*.md\"}}",
        " ".repeat(140 * 1024)
    );
    let base = [
        "call",
        "grep",
        "--workdir",
        work,
        "--no-spill",
        "--config",
        SAMPLING,
        "--args",
    ];
    let inline = Command::new(bin())
        .args([&base[..], &[args.as_str()]].concat())
        .output()
        .unwrap_err();
    assert_eq!(inline.raw_os_error(), Some(7), "E2BIG: {inline}");
    let file = files.path().join("args.json");
    std::fs::write(&file, &args).unwrap();
    let at_file = format!("@{}", file.display());
    let from_file = run(
        &[&base[..], &[at_file.as_str(), "--json"]].concat(),
        "",
        dir.path(),
    );
    assert_eq!(from_file.status.code(), Some(0), "{from_file:?}");
    let value: Value = serde_json::from_slice(&from_file.stdout).unwrap();
    assert_eq!(
        value["args"],
        json!({"pattern": "needle", "include": "*.md"})
    );
    assert!(
        value["text"]
            .as_str()
            .unwrap()
            .starts_with("Found 2 matches"),
        "{value}"
    );

    let from_stdin = run(&[&base[..], &["@-", "--json"]].concat(), &args, dir.path());
    assert_eq!(from_stdin.status.code(), Some(0), "{from_stdin:?}");
    let stdin_value: Value = serde_json::from_slice(&from_stdin.stdout).unwrap();
    assert_eq!(stdin_value["text"], value["text"]);

    let explain = run(
        &[
            "explain",
            "grep",
            "--workdir",
            work,
            "--no-spill",
            "--config",
            SAMPLING,
            "--args",
            &at_file,
            "notes.md",
        ],
        "",
        dir.path(),
    );
    assert_eq!(explain.status.code(), Some(0), "{explain:?}");
    assert!(
        stdout(&explain).contains("notes.md: page"),
        "{}",
        stdout(&explain)
    );

    let missing = files.path().join("missing.json");
    let at_missing = format!("@{}", missing.display());
    let out = run(
        &[&base[..], &[at_missing.as_str()]].concat(),
        "",
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        stderr(&out),
        format!(
            "workbench: --args: cannot read {}: No such file or directory (os error 2)\n",
            missing.display()
        )
    );
}

#[test]
fn call_of_an_unknown_tool_keeps_the_contract_s_result_and_names_the_tools_on_stderr() {
    let dir = tree();
    let out = run(
        &[
            "call",
            "grpe",
            "--workdir",
            root(dir.path()),
            "--no-spill",
            "--config",
            SAMPLING,
            "--args",
            r#"{"pattern":"x"}"#,
        ],
        "",
        dir.path(),
    );
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(stdout(&out), "Error: unknown tool \"grpe\"");
    assert_eq!(
        stderr(&out),
        "workbench: note: \"grpe\" is not a tool (did you mean grep? the tools are glob, grep)\n"
    );
}

/// Records `calls` (one JSON call per line) on `tree` into `out`.
fn record(tree: &Path, calls: &str, out: &Path) {
    let recorded = run(
        &[
            "record",
            "--tree",
            root(tree),
            "--config",
            SAMPLING,
            "--out",
            root(out),
        ],
        calls,
        tree,
    );
    assert_eq!(recorded.status.code(), Some(0), "{recorded:?}");
}

#[test]
fn freeze_makes_the_out_folder_and_refuses_a_recording_with_no_calls() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let recording = out.path().join("rec.jsonl");
    record(
        dir.path(),
        r#"{"call":"g","tool":"grep","args":{"pattern":"needle"}}"#,
        &recording,
    );
    let frozen = out.path().join("fixtures/transcripts/t.jsonl");
    let trees = out.path().join("fixtures/trees/t");
    let freeze = |recording: &Path| {
        run(
            &[
                "freeze",
                root(recording),
                "--workdir",
                root(dir.path()),
                "--out",
                root(&frozen),
                "--tree-out",
                root(&trees),
            ],
            "",
            out.path(),
        )
    };
    let done = freeze(&recording);
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    assert!(
        stdout(&done).starts_with("froze 1 records to"),
        "{}",
        stdout(&done)
    );
    assert!(frozen.is_file() && trees.join("manifest.json").is_file());

    let empty = out.path().join("empty.jsonl");
    let header = std::fs::read_to_string(&recording).unwrap();
    std::fs::write(&empty, format!("{}\n", header.lines().next().unwrap())).unwrap();
    let (frozen_before, manifest_before) = (
        std::fs::read(&frozen).unwrap(),
        std::fs::read(trees.join("manifest.json")).unwrap(),
    );
    let refused = freeze(&empty);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert_eq!(
        stderr(&refused),
        format!(
            "workbench freeze: warning: {} holds no calls: nothing to freeze (was anything called while it recorded?)\n",
            empty.display()
        )
    );
    assert_eq!(stdout(&refused), "");
    // Nothing was written.
    assert_eq!(std::fs::read(&frozen).unwrap(), frozen_before);
    assert_eq!(
        std::fs::read(trees.join("manifest.json")).unwrap(),
        manifest_before
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_replay_names_the_recorded_calls_most_like_a_missed_one_first() {
    use rmcp::ServiceExt;
    use rmcp::transport::TokioChildProcess;

    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let transcript = out.path().join("t.jsonl");
    record(
        dir.path(),
        concat!(
            r#"{"call":"todo","tool":"grep","args":{"pattern":"TODO"}}"#,
            "\n",
            r#"{"call":"main","tool":"grep","args":{"pattern":"fn main"}}"#,
            "\n",
            r#"{"call":"conf","tool":"grep","args":{"pattern":"fn parse_conf"}}"#,
            "\n"
        ),
        &transcript,
    );
    let state = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(bin());
    cmd.args(["mcp", "--replay", root(&transcript)])
        .env("XDG_STATE_HOME", state.path())
        .env("TMPDIR", state.path())
        .env_remove("WORKBENCH_MCP_TOKEN");
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let service = Client::default().serve(transport).await.unwrap();
    let args = json!({"pattern": "fn parse_config"});
    let result = service
        .peer()
        .call_tool(params("grep", args))
        .await
        .unwrap();
    service.cancel().await.unwrap();
    let result = serde_json::to_value(result).unwrap();
    let text = text_of(&result);
    let named: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| {
            l.split("(record \"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap()
        })
        .collect();
    assert_eq!(named, ["conf", "main", "todo"], "{text}");
}

/// The README's "make the session a fixture" commands, run as written in
/// a repository that has no `fixtures/` yet, on a session recorded by
/// the real server into `~/fs-search-recordings` (HOME a temp dir).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_s_freeze_example_works_as_written_in_a_new_repository() {
    use rmcp::ServiceExt;
    use rmcp::transport::TokioChildProcess;

    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md"))
            .unwrap();
    // The freeze and replay lines of the README's ```sh block (a command
    // goes on over the next line after a `\`), without the comments.
    let block = readme
        .split("```sh\n")
        .skip(1)
        .map(|rest| rest.split("```").next().unwrap())
        .find(|block| block.contains("workbench freeze"))
        .unwrap();
    let script: String = block
        .lines()
        .filter(|l| !l.trim_start().starts_with('#') && !l.contains("mcp --replay"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert!(script.contains("--out fixtures/transcripts/"), "{script}");

    let repo = tree();
    let home = tempfile::tempdir().unwrap();
    let recordings = home.path().join("fs-search-recordings");
    std::fs::create_dir(&recordings).unwrap();
    let session = recordings.join("session.jsonl");
    let state = tempfile::tempdir().unwrap();
    let cmd = SERVER.command(
        repo.path(),
        state.path(),
        &[
            "--config",
            SAMPLING,
            "--no-spill",
            "--record",
            root(&session),
        ],
    );
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let service = Client::default().serve(transport).await.unwrap();
    for (tool, args) in [
        ("grep", json!({"pattern": "needle"})),
        ("glob", json!({"pattern": "**/*.md"})),
    ] {
        service.peer().call_tool(params(tool, args)).await.unwrap();
    }
    service.cancel().await.unwrap();

    let bin_dir = Path::new(bin()).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap());
    let out = Command::new("bash")
        .args(["-e", "-c", &script])
        .current_dir(repo.path())
        .env("HOME", home.path())
        .env("PATH", path)
        .env("TMPDIR", state.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{script}\n{out:?}");
    assert!(
        stdout(&out).contains("froze 2 records to fixtures/transcripts/agent-session.jsonl"),
        "{}",
        stdout(&out)
    );
    assert!(
        stdout(&out).contains("ok fixtures/transcripts/agent-session.jsonl: 2 records match"),
        "{}",
        stdout(&out)
    );
}
