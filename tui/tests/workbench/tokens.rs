//! Token counts through the built `workbench` binary with real
//! rg: `call --json --tokens`, `surface --tokens`, `surface --against`,
//! transcripts' `tokens` and `replay --max-tokens`. Counts are checked
//! against `fs_search_tokens` itself.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::path::Path;
use std::process::{Command, Output};
use std::sync::OnceLock;

use fs_search_tokens::Tokenizer;
use serde_json::Value;

use crate::cli_headless::{SAMPLING, call, json_of, root, stderr, stdout, tree, workbench};

const NO_SAMPLING: &str = r#"{"sampleOverCapGlobResults":false}"#;

fn tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| Tokenizer::embedded().unwrap())
}

#[test]
fn call_tokens_count_the_text_and_no_full_result_without_a_spill() {
    let dir = tree();
    let out = call(
        &dir,
        "grep",
        r#"{"pattern":"alpha"}"#,
        &["--config", SAMPLING, "--no-spill", "--json", "--tokens"],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let object = json_of(&out);
    let text = object["text"].as_str().unwrap();
    assert_eq!(
        object["tokens"]["text"].as_u64().unwrap() as usize,
        tokenizer().count(text)
    );
    assert!(object["tokens"]["text"].as_u64().unwrap() > 0);
    assert_eq!(object["tokens"]["full"], Value::Null);
}

#[test]
fn call_tokens_count_the_spilled_full_result() {
    let dir = tree();
    for i in 0..40 {
        std::fs::write(dir.path().join(format!("file-{i:02}.txt")), "x\n").unwrap();
    }
    let spill = tempfile::tempdir().unwrap();
    let config = r#"{"sampleOverCapGlobResults":false,"globMaxResults":2}"#;
    let out = call(
        &dir,
        "glob",
        r#"{"pattern":"*"}"#,
        &[
            "--config",
            config,
            "--spill-dir",
            root(spill.path()),
            "--json",
            "--tokens",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let object = json_of(&out);
    let locator = object["spill"]["locator"].as_str().unwrap();
    let full = std::fs::read_to_string(locator).unwrap();
    let text_tokens = object["tokens"]["text"].as_u64().unwrap() as usize;
    let full_tokens = object["tokens"]["full"].as_u64().unwrap() as usize;
    assert_eq!(
        text_tokens,
        tokenizer().count(object["text"].as_str().unwrap())
    );
    assert_eq!(full_tokens, tokenizer().count(&full));
    assert!(full_tokens > text_tokens, "{full_tokens} <= {text_tokens}");
}

#[test]
fn call_without_tokens_has_no_tokens_key() {
    let dir = tree();
    let out = call(
        &dir,
        "glob",
        r#"{"pattern":"*.ts"}"#,
        &["--config", SAMPLING, "--no-spill", "--json"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(json_of(&out).get("tokens").is_none());
}

/// `call`'s options for a `--json --tokens` call counting with `file`.
fn with_tokenizer(file: &str) -> [&str; 7] {
    [
        "--config",
        SAMPLING,
        "--no-spill",
        "--json",
        "--tokens",
        "--tokenizer",
        file,
    ]
}

#[test]
fn a_missing_or_invalid_tokenizer_file_exits_2_naming_it() {
    let dir = tree();
    let bad = dir.path().join("not-a-tokenizer.json");
    std::fs::write(&bad, "{\"hello\": 1}").unwrap();
    let missing = dir.path().join("missing-tokenizer.json");
    for file in [&bad, &missing] {
        let out = call(
            &dir,
            "glob",
            r#"{"pattern":"*.ts"}"#,
            &with_tokenizer(root(file)),
        );
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains(root(file)), "{}", stderr(&out));
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn a_tokenizer_file_is_used() {
    let dir = tree();
    let file = dir.path().join("tokenizer.json");
    std::fs::write(&file, fs_search_tokens::embedded_json().unwrap()).unwrap();
    let out = call(
        &dir,
        "grep",
        r#"{"pattern":"alpha"}"#,
        &with_tokenizer(root(&file)),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let object = json_of(&out);
    assert_eq!(
        object["tokens"]["text"].as_u64().unwrap() as usize,
        tokenizer().count(object["text"].as_str().unwrap())
    );
}

#[test]
fn surface_tokens_count_each_part_and_the_total_is_their_sum() {
    let out = workbench(&["surface", "--config", SAMPLING, "--json", "--tokens"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let object = json_of(&out);
    let mut sum = 0;
    for section in object["promptSections"].as_array().unwrap() {
        let n = section["tokens"].as_u64().unwrap() as usize;
        assert_eq!(n, tokenizer().count(section["text"].as_str().unwrap()));
        sum += n;
    }
    let tools = object["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2);
    for tool in tools {
        let text = fs_search_tokens::tool_definition_text(
            tool["name"].as_str().unwrap(),
            tool["description"].as_str().unwrap(),
            &tool["parameters"],
        );
        let n = tool["tokens"].as_u64().unwrap() as usize;
        assert_eq!(n, tokenizer().count(&text));
        sum += n;
    }
    assert!(sum > 0);
    assert_eq!(object["totalTokens"].as_u64().unwrap() as usize, sum);

    let text = workbench(&["surface", "--config", SAMPLING, "--tokens"]);
    assert!(stdout(&text).ends_with(&format!(
        "== {} tokens per request (prompt sections + tool definitions) ==\n",
        fs_search_process::thousands(sum)
    )));
    let plain = workbench(&["surface", "--config", SAMPLING, "--json"]);
    let plain = json_of(&plain);
    assert!(plain.get("totalTokens").is_none());
    assert!(plain["tools"][0].get("tokens").is_none());
}

#[test]
fn surface_against_an_equal_config_is_identical() {
    let out = workbench(&[
        "surface",
        "--config",
        SAMPLING,
        "--against",
        SAMPLING,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let kv = &json_of(&out)["kvPrefix"];
    assert_eq!(kv["identical"], true);
    assert_eq!(kv["firstDifference"], Value::Null);
    assert_eq!(kv["commonTokens"], kv["tokensA"]);
    assert_eq!(kv["tokensA"], kv["tokensB"]);
    let text = workbench(&["surface", "--config", SAMPLING, "--against", SAMPLING]);
    assert!(stdout(&text).starts_with("identical — cached prefix stays valid"));
}

#[test]
fn surface_against_shows_what_the_glob_sample_depth_opt_in_costs_and_depth_one_costs_nothing() {
    let depth = |d: u32| format!(r#"{{"sampleOverCapGlobResults":true,"globSampleDepth":{d}}}"#);
    let against = |b: &str| {
        let out = workbench(&["surface", "--config", SAMPLING, "--against", b, "--json"]);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        json_of(&out)["kvPrefix"].clone()
    };
    assert_eq!(against(&depth(1))["identical"], true);
    let kv = against(&depth(3));
    assert_eq!(kv["identical"], false);
    assert_eq!(kv["firstDifference"]["name"], "tool:glob");
    assert!(kv["tokensB"].as_u64() > kv["tokensA"].as_u64(), "{kv}");
    let surface = json_of(&workbench(&[
        "surface",
        "--config",
        &depth(3),
        "--json",
        "--tokens",
    ]));
    assert_eq!(kv["tokensB"], surface["totalTokens"]);
    let glob_section = surface["promptSections"][0]["text"].as_str().unwrap();
    assert!(
        glob_section
            .contains("level by level, across the entries below them down to 3 levels deep"),
        "{glob_section}"
    );
}

#[test]
fn surface_against_names_the_glob_section_where_sampling_changes_the_prefix() {
    // Sampling changes the glob prompt section first (it comes before the
    // tool definitions), then the glob tool's description.
    let out = workbench(&[
        "surface",
        "--config",
        SAMPLING,
        "--against",
        NO_SAMPLING,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let kv = &json_of(&out)["kvPrefix"];
    assert_eq!(kv["identical"], false);
    assert_eq!(kv["firstDifference"]["part"], "section");
    assert_eq!(kv["firstDifference"]["name"], "tool:glob");
    assert_eq!(kv["firstDifference"]["tokenIndex"], kv["commonTokens"]);
    let surface = json_of(&workbench(&[
        "surface", "--config", SAMPLING, "--json", "--tokens",
    ]));
    assert_eq!(kv["tokensA"], surface["totalTokens"]);
    let text = stdout(&workbench(&[
        "surface",
        "--config",
        SAMPLING,
        "--against",
        NO_SAMPLING,
    ]));
    let common = kv["commonTokens"].as_u64().unwrap();
    let total = kv["tokensA"].as_u64().unwrap();
    assert!(
        text.starts_with(&format!(
            "the prefix differs from prompt section tool:glob (token {common} of {total})"
        )),
        "{text}"
    );
    assert!(
        text.contains("\n  A (prompt section tool:glob): "),
        "{text}"
    );
    assert!(
        text.contains("\n  B (prompt section tool:glob): "),
        "{text}"
    );
}

fn repo() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs the workbench in the repository root with `stdin`.
fn workbench_in_repo(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.as_bytes()).unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

const CALLS: &str = r#"{"call":"glob-over-cap","tool":"glob","args":{"pattern":"*"},"options":{"config":{"globMaxResults":3}}}
{"call":"grep-one","tool":"grep","args":{"pattern":"spaced name"}}
"#;

/// Records CALLS on the mixed tree into `dir/t.jsonl`.
fn record_into(dir: &Path) -> std::path::PathBuf {
    let file = dir.join("t.jsonl");
    let out = workbench_in_repo(
        &[
            "record",
            "--tree",
            "fixtures/trees/mixed",
            "--config",
            SAMPLING,
            "--out",
            file.to_str().unwrap(),
        ],
        CALLS,
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    file
}

/// The result lines of a transcript and the text each carries.
fn results(transcript: &str) -> Vec<(Value, String)> {
    let mut out: Vec<(Value, Vec<String>)> = Vec::new();
    for line in transcript.lines() {
        let value: Value = serde_json::from_str(line).unwrap();
        if value.get("result").is_some() {
            out.push((value, Vec::new()));
        } else if let (Some(text), Some(last)) = (value.get("text"), out.last_mut()) {
            last.1.push(text.as_str().unwrap().to_owned());
        }
    }
    out.into_iter()
        .map(|(v, lines)| (v, lines.join("\n")))
        .collect()
}

#[test]
fn record_writes_each_results_tokens_and_replay_reports_a_changed_count() {
    let dir = tempfile::tempdir().unwrap();
    let file = record_into(dir.path());
    let path = file.to_str().unwrap();
    let recorded = std::fs::read_to_string(&file).unwrap();
    let results = results(&recorded);
    assert_eq!(results.len(), 2);
    for (result, text) in &results {
        assert_eq!(
            result["tokens"].as_u64().unwrap() as usize,
            tokenizer().count(text),
            "{result}"
        );
    }
    let out = workbench_in_repo(&["replay", path], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    assert_eq!(stdout(&out), format!("ok {path}: 2 records match\n"));

    // A changed count (nothing else changed) is a difference.
    let grep_tokens = results[1].0["tokens"].as_u64().unwrap();
    let changed = recorded.replacen(
        &format!("\"tokens\":{grep_tokens}}}"),
        &format!("\"tokens\":{}}}", grep_tokens + 1),
        1,
    );
    assert_ne!(changed, recorded);
    std::fs::write(&file, &changed).unwrap();
    let out = workbench_in_repo(&["replay", path], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(text.contains("record \"grep-one\" (recorded)"), "{text}");
    assert!(!text.contains("record \"glob-over-cap\""), "{text}");
    assert!(
        text.contains(&format!("\"tokens\":{}}}", grep_tokens + 1)),
        "{text}"
    );

    // --update writes the current counts back: the file is as recorded.
    let out = workbench_in_repo(&["replay", "--update", path], "");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), recorded);

    // Without the key, a record's count is not compared (fixtures keep
    // replaying as they were recorded).
    let stripped = recorded.replace(&format!(",\"tokens\":{grep_tokens}}}"), "}");
    std::fs::write(&file, &stripped).unwrap();
    let out = workbench_in_repo(&["replay", path], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
}

#[test]
fn replay_max_tokens_exits_1_naming_the_record_over_budget() {
    let dir = tempfile::tempdir().unwrap();
    let file = record_into(dir.path());
    let path = file.to_str().unwrap();
    let recorded = std::fs::read_to_string(&file).unwrap();
    let counts: Vec<u64> = results(&recorded)
        .iter()
        .map(|(r, _)| r["tokens"].as_u64().unwrap())
        .collect();
    let (glob, grep) = (counts[0], counts[1]);
    assert!(glob > grep, "{glob} {grep}");

    let enough = glob.to_string();
    let out = workbench_in_repo(&["replay", "--max-tokens", &enough, path], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));

    let between = grep.to_string();
    let out = workbench_in_repo(&["replay", "--max-tokens", &between, path], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&format!(
            "OVER BUDGET {path}:2 record \"glob-over-cap\": {glob} tokens > --max-tokens {grep}\n"
        )),
        "{text}"
    );
    assert!(!text.contains("\"grep-one\": "), "{text}");

    // A fixture transcript without counts is counted for the budget, and
    // left as it is.
    let fixture = "fixtures/transcripts/glob-footers.jsonl";
    let before = std::fs::read(repo().join(fixture)).unwrap();
    let out = workbench_in_repo(&["replay", "--max-tokens", "1000000", fixture], "");
    assert_eq!(out.status.code(), Some(0), "{}", stdout(&out));
    let out = workbench_in_repo(&["replay", "--max-tokens", "1", fixture], "");
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(stdout(&out).contains(&format!("OVER BUDGET {fixture}:")));
    assert_eq!(std::fs::read(repo().join(fixture)).unwrap(), before);
}

#[test]
fn record_and_replay_with_a_missing_tokenizer_exit_2_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let out_file = dir.path().join("t.jsonl");
    let missing = dir.path().join("no-tokenizer.json");
    let out = workbench_in_repo(
        &[
            "record",
            "--tree",
            "fixtures/trees/mixed",
            "--config",
            SAMPLING,
            "--out",
            out_file.to_str().unwrap(),
            "--tokenizer",
            missing.to_str().unwrap(),
        ],
        CALLS,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(missing.to_str().unwrap()),
        "{}",
        stderr(&out)
    );
    assert!(!out_file.exists());

    let file = record_into(dir.path());
    let out = workbench_in_repo(
        &[
            "replay",
            file.to_str().unwrap(),
            "--tokenizer",
            missing.to_str().unwrap(),
        ],
        "",
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(missing.to_str().unwrap()),
        "{}",
        stderr(&out)
    );
}
