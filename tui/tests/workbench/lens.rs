//! `workbench lens` and `workbench call --host`: the built binary, real rg
//! and bash on a temp tree, a tool result as each agent host's model
//! receives it (docs/hosts.md).

use std::io::Write as _;
use std::process::{Command, Output, Stdio};

use serde_json::{Value, json};

use crate::cli_headless::{SAMPLING, call, root, stdout, workbench};

/// `workbench lens ARGS` with `input` on stdin.
fn lens_stdin(args: &[&str], input: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .arg("lens")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

const PAGE: &str = "Found 1 match\n\na.rs\nLine 1: fn \"main\"() {}";

#[test]
fn lens_list_names_every_host_with_its_versions_and_source() {
    let out = workbench(&["lens", "--list", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let list: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let lenses = list["lenses"].as_array().unwrap();
    for host in [
        "codex",
        "claude-code",
        "opencode",
        "gemini-cli",
        "qwen-code",
    ] {
        assert!(lenses.iter().any(|l| l["host"] == host), "{host}");
    }
    for lens in lenses {
        assert!(!lens["source"].as_str().unwrap().is_empty(), "{lens}");
        assert!(!lens["versions"].as_str().unwrap().is_empty(), "{lens}");
    }
    let claude = lenses.iter().find(|l| l["host"] == "claude-code").unwrap();
    assert_eq!(claude["fromSource"], json!(false));
    let text = stdout(&workbench(&["lens", "--list"]));
    assert!(text.contains("codex@0.56  (0.56 to 0.58"), "{text}");
    assert!(text.contains("knobs: tool_output.max_lines=2000"), "{text}");
}

#[test]
fn lens_prints_exactly_what_codex_s_model_receives() {
    let out = lens_stdin(&["codex@0.55", "-"], PAGE);
    assert_eq!(out.status.code(), Some(0));
    let expected = serde_json::to_string(&json!([{"type": "text", "text": PAGE}])).unwrap();
    assert_eq!(stdout(&out), expected);
}

#[test]
fn lens_json_has_the_documented_fields_and_its_bytes_add_up() {
    let out = lens_stdin(
        &["opencode", "--set", "tool_output.max_lines=3", "--json"],
        PAGE,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let mut keys: Vec<&str> = object
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "budget",
            "cut",
            "footerVisible",
            "framed",
            "host",
            "keptBytes",
            "knobs",
            "notes",
            "removedBytes",
            "text",
            "tokens",
            "version"
        ]
    );
    assert_eq!(object["host"], "opencode");
    assert_eq!(object["cut"], "head");
    assert_eq!(object["budget"], json!({"unit": "lines", "limit": 3}));
    assert_eq!(object["knobs"]["tool_output.max_lines"], json!(3));
    assert_eq!(object["framed"], PAGE);
    let kept = object["keptBytes"].as_u64().unwrap();
    let removed = object["removedBytes"].as_u64().unwrap();
    assert_eq!(kept + removed, PAGE.len() as u64);
    assert_eq!(kept, "Found 1 match\n\na.rs".len() as u64);
    assert!(object["tokens"].as_u64().unwrap() > 0);
    assert!(
        object["text"]
            .as_str()
            .unwrap()
            .contains("...1 lines truncated...")
    );
}

#[test]
fn lens_reads_a_recorded_result_and_its_error_flag() {
    let recorded =
        json!({"tool": "grep", "args": {"pattern": "x"}, "isError": true, "text": "bad"});
    let out = lens_stdin(&["gemini-cli"], &recorded.to_string());
    assert_eq!(out.status.code(), Some(0));
    assert!(
        stdout(&out).starts_with("MCP tool 'grep' reported tool error for function call: "),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_bad_lens_or_knob_exits_2_naming_what_is_known() {
    let out = lens_stdin(&["cursor"], PAGE);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("hosts: codex, claude-code"));
    let out = lens_stdin(&["codex@0.10.0"], PAGE);
    assert_eq!(out.status.code(), Some(0), "0.10 falls in the first era");
    let out = lens_stdin(&["opencode", "--set", "max_bytes=1"], PAGE);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("tool_output.max_bytes"));
    let out = lens_stdin(&["opencode", "--set", "tool_output.max_bytes=many"], PAGE);
    assert_eq!(out.status.code(), Some(2));
}

/// A tree whose grep page for `hit` (250 matches of 300-byte lines) is
/// over every host's default budget.
pub(crate) fn wide_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("hit {}\n", "x".repeat(296));
    for file in ["a.txt", "b.txt"] {
        std::fs::write(dir.path().join(file), line.repeat(200)).unwrap();
    }
    dir
}

#[test]
fn call_host_all_reports_what_each_host_hides_of_a_wide_grep_page() {
    let dir = wide_tree();
    let spill = tempfile::tempdir().unwrap();
    let out = call(
        &dir,
        "grep",
        r#"{"pattern":"hit"}"#,
        &[
            "--config",
            SAMPLING,
            "--spill-dir",
            root(spill.path()),
            "--json",
            "--host",
            "all",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let object: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert!(
        object["text"]
            .as_str()
            .unwrap()
            .starts_with("Found 250 of 400 matches")
    );
    let hosts = object["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 5);
    let by = |host: &str| hosts.iter().find(|h| h["host"] == host).unwrap();
    // Codex cuts the middle: the footer and its locator survive.
    let codex = by("codex");
    assert_eq!(codex["cut"], "middle");
    assert_eq!(codex["footerVisible"], json!(true));
    assert_eq!(codex["locatorVisible"], json!(true));
    assert!(codex["grep"]["matchesUnseen"].as_u64().unwrap() > 0);
    assert!(codex["text"].as_str().unwrap().starts_with("Wall time: "));
    // opencode keeps the head: the footer and locator are lost.
    let opencode = by("opencode");
    assert_eq!(opencode["cut"], "head");
    assert_eq!(opencode["footerVisible"], json!(false));
    assert_eq!(opencode["locatorVisible"], json!(false));
    assert_eq!(by("claude-code")["cut"], "file");
    assert_eq!(by("gemini-cli")["cut"], "head-tail");
    for host in hosts {
        let grep = &host["grep"];
        assert_eq!(grep["matches"], json!(250), "{host}");
        assert_eq!(grep["files"], json!(2), "{host}");
        assert!(
            host["summary"].as_str().unwrap().contains("of 250 matches"),
            "{host}"
        );
    }
}

#[test]
fn call_host_prints_the_lens_of_the_call_s_own_result() {
    let dir = wide_tree();
    let page = call(
        &dir,
        "grep",
        r#"{"pattern":"hit"}"#,
        &["--config", SAMPLING, "--no-spill"],
    );
    let lensed = lens_stdin(&["opencode"], &stdout(&page));
    let hosted = call(
        &dir,
        "grep",
        r#"{"pattern":"hit"}"#,
        &["--config", SAMPLING, "--no-spill", "--host", "opencode"],
    );
    assert_eq!(hosted.status.code(), Some(0));
    assert_eq!(stdout(&hosted), stdout(&lensed));
    let summary = String::from_utf8_lossy(&hosted.stderr);
    assert!(summary.contains("opencode@current removes"), "{summary}");
    assert!(summary.contains("footer lost"), "{summary}");
}

#[test]
fn call_refuses_an_unknown_host_before_running() {
    let dir = wide_tree();
    let out = call(
        &dir,
        "grep",
        r#"{"pattern":"hit"}"#,
        &["--config", SAMPLING, "--host", "cursor"],
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown host"));
}

/// `workbench record` of one grep of `pattern` on `tree`, into `out`.
pub(crate) fn record(tree: &std::path::Path, pattern: &str, out: &std::path::Path) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args([
            "record",
            "--tree",
            root(tree),
            "--config",
            SAMPLING,
            "--out",
        ])
        .arg(out)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let call = json!({"call": "wide", "tool": "grep", "args": {"pattern": pattern}});
    child
        .stdin
        .take()
        .unwrap()
        .write_all(format!("{call}\n").as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn replay_fail_on_cut_exits_1_naming_the_records_a_host_would_cut() {
    let tree = wide_tree();
    let out_dir = tempfile::tempdir().unwrap();
    let wide = out_dir.path().join("wide.jsonl");
    record(tree.path(), "hit", &wide);
    let wide = root(&wide).to_owned();
    let out = workbench(&["replay", &wide, "--host", "opencode", "--fail-on-cut"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = stdout(&out);
    assert!(
        text.contains(" record \"wide\": opencode@current removes"),
        "{text}"
    );
    // Without --fail-on-cut the cut is reported and the replay passes.
    let out = workbench(&["replay", &wide, "--host", "opencode"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(stdout(&out).contains("CUT "));
    // A page every host keeps whole passes the gate.
    let narrow = out_dir.path().join("narrow.jsonl");
    record(tree.path(), "nothing-matches-this", &narrow);
    let out = workbench(&["replay", root(&narrow), "--host", "codex", "--fail-on-cut"]);
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn surface_host_shows_the_descriptions_the_host_passes_on_and_refuses_an_unknown_host() {
    let surface = |extra: &[&str]| {
        let mut args = vec!["surface", "--json", "--config", SAMPLING];
        args.extend_from_slice(extra);
        let out = workbench(&args);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        serde_json::from_str::<Value>(&stdout(&out)).unwrap()
    };
    let plain = surface(&[]);
    let hosted = surface(&["--host", "claude-code"]);
    assert_eq!(hosted["host"], "claude-code@docs-2026-10");
    assert!(plain.get("host").is_none());
    // The contract's descriptions are far below Claude Code's 2,048
    // characters: passed on whole, and said so.
    for (with, without) in hosted["tools"]
        .as_array()
        .unwrap()
        .iter()
        .zip(plain["tools"].as_array().unwrap())
    {
        assert_eq!(with["description"], without["description"]);
        assert_eq!(with["hostCut"], false);
        assert!(without.get("hostCut").is_none());
    }
    let text = workbench(&["surface", "--config", SAMPLING, "--host", "claude-code"]);
    assert!(
        stdout(&text).contains(
            "== tool grep (timeoutMs 30000, not sent to the model, description as claude-code@docs-2026-10 passes it) =="
        ),
        "{}",
        stdout(&text)
    );
    let unknown = workbench(&["surface", "--config", SAMPLING, "--host", "nope"]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&unknown.stderr)
            .starts_with("workbench surface: --host: unknown host \"nope\""),
        "{unknown:?}"
    );
}
