//! `workbench replay` where CI users live, with the built `workbench`,
//! real rg and real transcripts: the JUnit report as a real JUnit
//! consumer (the `junitparser` Python package) reads it, GitHub Actions
//! annotations and step summary, output and exit status independent of
//! `--jobs`, `--shard` shares that cover every record exactly once,
//! `assert_transcripts_replay` from `cargo test`, and the CI files
//! docs/transcripts.md shows parsed as YAML.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// Runs the workbench in the repository with `env` set and the GitHub
/// Actions variables of the test's own environment removed.
fn workbench_env(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_workbench"));
    command
        .args(args)
        .current_dir(repo())
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in env {
        command.env(key, value);
    }
    let mut child = command.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.unwrap_or_default().as_bytes())
        .unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn workbench(args: &[&str]) -> Output {
    workbench_env(args, &[], None)
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn rg_now() -> String {
    let out = Command::new("rg").arg("--version").output().unwrap();
    text(&out.stdout).lines().next().unwrap().to_owned()
}

/// Records `calls` on the mixed tree into `dir/NAME`; the file's path
/// and text.
fn record(dir: &Path, name: &str, calls: &str) -> (String, String) {
    let out_file = dir.join(name);
    let out = workbench_env(
        &[
            "record",
            "--tree",
            "fixtures/trees/mixed",
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--out",
            out_file.to_str().unwrap(),
        ],
        &[],
        Some(calls),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let recorded = std::fs::read_to_string(&out_file).unwrap();
    (out_file.to_str().unwrap().to_owned(), recorded)
}

/// The 1-based line of the first line of `file` starting with `prefix`.
fn line_of(file: &str, prefix: &str) -> usize {
    file.lines().position(|l| l.starts_with(prefix)).unwrap() + 1
}

/// The name of the record whose name holds markup and a control
/// character (BEL), as its JSON spells it.
const ODD_NAME_JSON: &str = r#"a<&\"\u0007b"#;
/// That name as the JUnit report writes it (BEL cannot be in XML 1.0).
const ODD_NAME_IN_XML: &str = "a<&\"\\u0007b";

/// A transcript made as if under rg 12 (its header says so, and one
/// stderr text is what such an rg might have written), with one record's
/// engine text changed and one record left as recorded: a record that
/// differs only in rg's own text, one changed in the engine's text, and
/// one that matches. Returns the file, its text, the three records'
/// call lines, and the lines of the two changed text lines (of
/// "glob-bad" and of "grep-one").
fn three_kinds(dir: &Path) -> (String, String, [usize; 3], [usize; 2]) {
    let calls = format!(
        "{}\n{}\n{}\n",
        r#"{"call":"glob-bad","tool":"glob","args":{"pattern":"["}}"#,
        r#"{"call":"grep-one","tool":"grep","args":{"pattern":"spaced name"}}"#,
        format_args!(
            r#"{{"call":"{ODD_NAME_JSON}","tool":"grep","args":{{"pattern":"needle","include":"*.md"}}}}"#
        ),
    );
    let (file, recorded) = record(dir, "kinds.jsonl", &calls);
    let mut lines: Vec<String> = recorded.lines().map(str::to_owned).collect();
    lines[0] = lines[0].replacen(
        &format!("\"rg\":\"{}\"", rg_now()),
        "\"rg\":\"ripgrep 12.1.1\"",
        1,
    );
    let result = line_of(&recorded, r#"{"result":"glob-bad""#);
    lines[result] =
        r#"{"text":"Error: glob pattern rejected by ripgrep: rg 12: glob '[' is unclosed"}"#.into();
    let changed = lines.join("\n").replacen(
        r#"{"text":"Found 1 match"}"#,
        r#"{"text":"Found one match"}"#,
        1,
    ) + "\n";
    std::fs::write(&file, &changed).unwrap();
    let calls = [
        line_of(&changed, r#"{"call":"glob-bad""#),
        line_of(&changed, r#"{"call":"grep-one""#),
        line_of(&changed, &format!(r#"{{"call":"{ODD_NAME_JSON}""#)),
    ];
    let texts = [
        line_of(
            &changed,
            r#"{"text":"Error: glob pattern rejected by ripgrep: rg 12"#,
        ),
        line_of(&changed, r#"{"text":"Found one match"}"#),
    ];
    (file, changed, calls, texts)
}

/// `report` as junitparser reads it (tests/workbench/support/junit_read.py).
fn junitparser_reads(report: &Path) -> Value {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/workbench/support/junit_read.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(report)
        .output()
        .expect("python3 runs");
    assert_ne!(
        out.status.code(),
        Some(3),
        "the JUnit consumer these tests read reports with is missing: \
         `python3 -m pip install junitparser==5.0.3` (.ci/run installs it)"
    );
    assert!(
        out.status.success(),
        "junitparser could not read {}:\n{}\n{}",
        report.display(),
        text(&out.stderr),
        std::fs::read_to_string(report).unwrap_or_default()
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn property<'a>(properties: &'a Value, key: &str) -> Option<&'a str> {
    properties
        .as_array()?
        .iter()
        .find(|p| p[0] == key)
        .and_then(|p| p[1].as_str())
}

/// The (kind, type) of each result of a JUnit case.
fn result_kinds(case: &Value) -> Vec<(String, String)> {
    case["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["kind"].as_str().unwrap().to_owned(),
                r["type"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn a_junit_report_tells_changed_rg_text_over_budget_and_errors_apart_for_junitparser() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _, lines, _) = three_kinds(dir.path());
    let report = dir.path().join("report.xml");
    let out = workbench(&[
        "replay",
        "--junit",
        report.to_str().unwrap(),
        "--max-tokens",
        "20",
        &file,
        "no/such/file.jsonl",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    let read = junitparser_reads(&report);
    let suite = &read["suites"][0];
    assert_eq!(suite["name"], file.as_str());
    assert_eq!(
        property(&suite["properties"], "rg"),
        Some(rg_now().as_str())
    );
    assert_eq!(
        property(&suite["properties"], "recorded-with"),
        Some("ripgrep 12.1.1")
    );
    let cases = suite["cases"].as_array().unwrap();
    let names: Vec<&str> = cases.iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["glob-bad", "grep-one", ODD_NAME_IN_XML]);
    for (case, line) in cases.iter().zip(lines) {
        assert_eq!(case["classname"], file.as_str());
        assert_eq!(case["line"], line.to_string().as_str());
        assert_eq!(property(&case["properties"], "rg"), Some(rg_now().as_str()));
        assert_eq!(property(&case["properties"], "tool").map(str::len), Some(4));
        // The header names rg 12 and no record has a variant for this rg.
        assert_eq!(property(&case["properties"], "another-rg"), Some("true"));
        // Over the budget exactly when the current text has more than 20 tokens.
        let tokens: u64 = property(&case["properties"], "tokens-now")
            .unwrap()
            .parse()
            .unwrap();
        let over = result_kinds(case).contains(&("failure".into(), "over-budget".into()));
        assert_eq!(over, tokens > 20, "{case}");
    }
    assert_eq!(
        property(&cases[1]["properties"], "args"),
        Some(r#"{"pattern":"spaced name"}"#)
    );
    let failure = |case: &Value, kind: &str| -> (String, String) {
        let result = case["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["type"] == kind)
            .unwrap_or_else(|| panic!("no {kind} failure in {case}"));
        (
            result["message"].as_str().unwrap().to_owned(),
            result["text"].as_str().unwrap().to_owned(),
        )
    };
    let (message, diff) = failure(&cases[0], "rg-text");
    assert!(message.contains("only in rg's own text") && message.contains("ripgrep 12.1.1"));
    assert!(
        diff.starts_with(&format!(
            "--- {file}:{} record \"glob-bad\" (recorded)\n",
            lines[0]
        )),
        "{diff}"
    );
    let (message, diff) = failure(&cases[1], "changed");
    assert_eq!(
        message,
        "record \"grep-one\" differs from what was recorded (the engine's text or the kind of result)"
    );
    assert!(
        diff.contains("\n-{\"text\":\"Found one match\"}\n+{\"text\":\"Found 1 match\"}\n"),
        "{diff}"
    );
    assert!(
        !result_kinds(&cases[2])
            .iter()
            .any(|(_, t)| t == "changed" || t == "rg-text")
    );
    let failing = cases.iter().filter(|c| !result_kinds(c).is_empty()).count();
    assert_eq!(suite["failures"], failing);
    assert_eq!(suite["tests"], 3);

    let missing = &read["suites"][1];
    assert_eq!(missing["name"], "no/such/file.jsonl");
    assert_eq!(missing["errors"], 1);
    let error = &missing["cases"][0]["results"][0];
    assert_eq!(error["kind"], "error");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("no/such/file.jsonl: "),
        "{error}"
    );
}

/// The recorded outcomes for other rg majors (the fixtures' variants) are
/// skipped test cases, one per variant line, under any rg.
#[test]
fn every_fixture_replays_and_its_junit_report_skips_each_variant_for_another_rg() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("fixtures.xml");
    let files = [
        "fixtures/transcripts/appendix-a.jsonl",
        "fixtures/transcripts/include-rules.jsonl",
        "fixtures/transcripts/argument-errors.jsonl",
    ];
    let mut args = vec!["replay", "--junit", report.to_str().unwrap()];
    args.extend(files);
    let out = workbench(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let read = junitparser_reads(&report);
    for (suite, file) in read["suites"].as_array().unwrap().iter().zip(files) {
        let transcript = std::fs::read_to_string(repo().join(file)).unwrap();
        let records = transcript
            .lines()
            .filter(|l| l.starts_with("{\"call\":"))
            .count();
        let variants = transcript
            .lines()
            .filter(|l| l.starts_with("{\"variant\":"))
            .count();
        assert_eq!(suite["name"], file);
        assert_eq!(suite["tests"], records + variants, "{file}");
        assert_eq!(suite["skipped"], variants, "{file}");
        assert_eq!(suite["failures"], 0, "{file}");
        for case in suite["cases"].as_array().unwrap() {
            let skipped = result_kinds(case) == [("skipped".to_owned(), String::new())];
            // A record is compared with another rg's text exactly when this
            // rg's major is not the header's (13) and it has no variant for it.
            if !skipped {
                let another = property(&case["properties"], "another-rg").is_some();
                let with = property(&case["properties"], "recorded-with").unwrap();
                let expected = fs_search_test_support::rg_texts::running_rg_major() != 13
                    && !with.starts_with("the variant for rg ");
                assert_eq!(another, expected, "{case}");
            }
            assert_eq!(
                skipped,
                case["name"].as_str().unwrap().ends_with(')'),
                "{case}"
            );
        }
    }
    assert!(read["skipped"].as_u64().unwrap() > 0);
}

#[test]
fn github_annotations_point_at_each_changed_records_first_changed_line_and_the_summary_is_appended()
{
    let dir = tempfile::tempdir().unwrap();
    let (file, _, lines, texts) = three_kinds(dir.path());
    // The changed text lines lie below the call and result lines.
    assert!(
        texts[0] >= lines[0] + 2 && texts[1] >= lines[1] + 2,
        "{texts:?} {lines:?}"
    );
    let summary = dir.path().join("summary.md");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let args = ["replay", "--format", "github", "--max-tokens", "20", &file];
    let out = workbench_env(
        &args,
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
        None,
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    let human = text(&workbench(&["replay", "--max-tokens", "20", &file]).stdout);
    assert!(
        stdout.starts_with(&human),
        "the human report comes first:\n{stdout}"
    );
    let annotations: Vec<&str> = stdout[human.len()..].lines().collect();
    let rg = rg_now();
    assert_eq!(
        annotations[0],
        format!(
            "::notice file={file},line=1,title=Recorded with another rg::{file} was recorded with ripgrep 12.1.1, this is {rg}: records with a variant for this rg are compared with it, the others with the recorded text"
        )
    );
    // An annotation of a changed record points at its first changed text
    // line, names the record and its call line, says how a variant for
    // this rg is added (the file has none), then gives the diff.
    let missing_variant =
        format!("{file} was frozen with ripgrep 12.1.1 and has no variant for rg ");
    let glob_bad = format!(
        "::error file={file},line={},title=Record changed only in rg's own text%3A \"glob-bad\" (recorded with ripgrep 12.1.1%2C this is {rg})::record \"glob-bad\" (its call at line {}) differs from line {} on%0A{missing_variant}",
        texts[0], lines[0], texts[0]
    );
    let glob_bad = annotations
        .iter()
        .find(|a| a.starts_with(&glob_bad))
        .unwrap_or_else(|| panic!("{glob_bad}\n{stdout}"));
    assert!(
        glob_bad.contains(&format!("`workbench replay --add-variant {file}`")),
        "{glob_bad}"
    );
    assert!(
        glob_bad.contains(&format!(
            "%0A--- {file}:{} record \"glob-bad\" (recorded)%0A",
            lines[0]
        )),
        "{glob_bad}"
    );
    let grep_one = format!(
        "::error file={file},line={},title=Record changed%3A \"grep-one\" (the engine's text or the kind of result)::record \"grep-one\" (its call at line {}) differs from line {} on%0A",
        texts[1], lines[1], texts[1]
    );
    let grep_one = annotations
        .iter()
        .find(|a| a.starts_with(&grep_one))
        .unwrap_or_else(|| panic!("{grep_one}\n{stdout}"));
    assert!(
        grep_one.contains("%0A-{\"text\":\"Found one match\"}%0A+{\"text\":\"Found 1 match\"}%0A"),
        "{grep_one}"
    );
    let budget: Vec<&&str> = annotations
        .iter()
        .filter(|a| a.contains(",title=Over the token budget%3A "))
        .collect();
    let over_lines = stdout
        .lines()
        .filter(|l| l.starts_with("OVER BUDGET "))
        .count();
    assert_eq!(budget.len(), over_lines);
    assert!(over_lines > 0);
    assert!(
        budget
            .iter()
            .all(|a| a.contains(" tokens > --max-tokens 20"))
    );
    // Every line is a workflow command; no message carries a raw newline.
    assert!(annotations.iter().all(|a| a.starts_with("::")), "{stdout}");

    let written = std::fs::read_to_string(&summary).unwrap();
    assert!(written.starts_with("earlier step\n## workbench replay\n\n1 transcripts, 3 records: 1 match, 2 changed (1 in the engine's text, 1 only in rg's own text)"), "{written}");
    assert!(
        written.contains(&format!(
            "| grep-one | {} | changed: the engine's text; over the token budget |",
            format!("{file}:{}", lines[1]).replace('_', "\\_")
        )),
        "{written}"
    );
    assert!(written.contains("```diff\n--- "), "{written}");

    // GITHUB_ACTIONS=true picks the format; --format human overrides it.
    let summary_again = dir.path().join("again.md");
    let auto = workbench_env(
        &["replay", "--max-tokens", "20", &file],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_STEP_SUMMARY", summary_again.to_str().unwrap()),
        ],
        None,
    );
    assert_eq!(text(&auto.stdout), stdout);
    assert_eq!(
        std::fs::read_to_string(&summary_again).unwrap(),
        written["earlier step\n".len()..]
    );
    let human_again = workbench_env(
        &["replay", "--format", "human", "--max-tokens", "20", &file],
        &[("GITHUB_ACTIONS", "true")],
        None,
    );
    assert_eq!(text(&human_again.stdout), human);
}

#[test]
fn output_and_exit_status_are_the_same_with_one_job_and_with_four() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _, _, _) = three_kinds(dir.path());
    let with_missing = [
        "fixtures/transcripts/appendix-a.jsonl",
        file.as_str(),
        "no/such/file.jsonl",
        "fixtures/transcripts/glob-footers.jsonl",
        "fixtures/transcripts/include-rules.jsonl",
    ];
    for files in [&with_missing[..], &with_missing[..2]] {
        let run = |jobs: &str| {
            let mut args = vec!["replay", "--format", "github", "--jobs", jobs];
            args.extend(files);
            workbench(&args)
        };
        let (one, four) = (run("1"), run("4"));
        assert_eq!(text(&one.stdout), text(&four.stdout));
        assert_eq!(text(&one.stderr), text(&four.stderr));
        assert_eq!(one.status.code(), four.status.code());
        let expected = if files.len() == 2 { 1 } else { 2 };
        assert_eq!(one.status.code(), Some(expected), "{}", text(&one.stderr));
        assert!(
            text(&one.stdout)
                .starts_with("ok fixtures/transcripts/appendix-a.jsonl: 12 records match\n")
        );
    }
}

/// The (file, record) of every non-skipped test case of a JUnit report.
fn replayed_records(report: &Path) -> Vec<(String, String)> {
    let read = junitparser_reads(report);
    let mut records = Vec::new();
    for suite in read["suites"].as_array().unwrap() {
        for case in suite["cases"].as_array().unwrap() {
            records.push((
                case["classname"].as_str().unwrap().to_owned(),
                case["name"].as_str().unwrap().to_owned(),
            ));
        }
    }
    records
}

/// `transcript` without the result lines' optional token counts.
fn without_tokens(transcript: &str) -> String {
    transcript
        .lines()
        .map(|line| match line.find(",\"tokens\":") {
            Some(at) if line.starts_with("{\"result\":") => format!("{}}}\n", &line[..at]),
            _ => format!("{line}\n"),
        })
        .collect()
}

#[test]
fn the_shards_of_every_n_up_to_the_record_count_cover_every_record_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let grep = |name: &str, pattern: &str| {
        format!(r#"{{"call":"{name}","tool":"grep","args":{{"pattern":"{pattern}"}}}}"#)
    };
    let (first, _) = record(
        dir.path(),
        "first.jsonl",
        &[
            grep("a", "needle"),
            grep("b", "spaced name"),
            grep("c", "nothing here"),
        ]
        .join("\n"),
    );
    let (second, _) = record(
        dir.path(),
        "second.jsonl",
        &[grep("d", "needle"), grep("e", "café")].join("\n"),
    );
    // Without token counts, replay does not load the tokenizer.
    for file in [&first, &second] {
        let text = std::fs::read_to_string(file).unwrap();
        std::fs::write(file, without_tokens(&text)).unwrap();
    }
    let report = dir.path().join("all.xml");
    let out = workbench(&[
        "replay",
        "--junit",
        report.to_str().unwrap(),
        &first,
        &second,
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let mut all = replayed_records(&report);
    assert_eq!(all.len(), 5);
    all.sort();
    for count in 1..=all.len() {
        let mut union = Vec::new();
        for index in 1..=count {
            let shard = format!("{index}/{count}");
            let out = workbench(&[
                "replay",
                "--shard",
                &shard,
                "--junit",
                report.to_str().unwrap(),
                &first,
                &second,
            ]);
            assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
            assert!(
                text(&out.stdout).contains(&format!(" records in shard {shard} match\n")),
                "{}",
                text(&out.stdout)
            );
            let share = replayed_records(&report);
            // Round robin: the shares differ by at most one record.
            assert!(share.len() == all.len() / count || share.len() == all.len().div_ceil(count));
            union.extend(share);
        }
        union.sort();
        assert_eq!(union, all, "the shares of {count}");
    }
    for bad in ["0/3", "4/3", "1/0", "x"] {
        let out = workbench(&["replay", "--shard", bad, &first]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            text(&out.stderr).contains("expected K/N with 1 <= K <= N"),
            "{}",
            text(&out.stderr)
        );
    }
    let out = workbench(&["replay", "--shard", "1/2", "--update", &first]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("cannot be used with"),
        "{}",
        text(&out.stderr)
    );
}

// The example of docs/transcripts.md, run as the project's own test (the
// test below checks that the page shows exactly this function).
#[test]
fn transcripts_replay() {
    fs_search_transcript::assert_transcripts_replay(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fixtures/transcripts"
    ));
}

#[test]
fn docs_show_the_cargo_test_example_this_file_runs() {
    let source = std::fs::read_to_string(repo().join(file!())).unwrap();
    let start = source.find("#[test]\nfn transcripts_replay()").unwrap();
    let end = start + source[start..].find("\n}\n").unwrap() + 3;
    let page = std::fs::read_to_string(repo().join("docs/transcripts.md")).unwrap();
    assert!(
        page.contains(&format!("```rust\n{}```\n", &source[start..end])),
        "docs/transcripts.md must show:\n{}",
        &source[start..end]
    );
}

#[test]
fn check_transcripts_fails_with_the_replay_diff_and_an_update_accepts_it() {
    use fs_search_transcript::check_transcripts;
    let dir = tempfile::tempdir().unwrap();
    let calls = r#"{"call":"grep-one","tool":"grep","args":{"pattern":"spaced name"}}"#;
    let (file, recorded) = record(dir.path(), "one.jsonl", calls);
    let changed = recorded.replacen(
        r#"{"text":"Found 1 match"}"#,
        r#"{"text":"Found one match"}"#,
        1,
    );
    std::fs::write(&file, &changed).unwrap();
    let cli = text(&workbench(&["replay", &file]).stdout);
    let failed = check_transcripts(dir.path(), false).unwrap_err();
    assert!(failed.contains("WORKBENCH_UPDATE=1"), "{failed}");
    assert!(
        failed.ends_with(&cli),
        "the same report as `workbench replay`:\n{failed}\n{cli}"
    );
    assert!(cli.contains("\n-{\"text\":\"Found one match\"}\n+{\"text\":\"Found 1 match\"}\n"));
    // The assertion itself panics with that report.
    let dir_path = dir.path().to_path_buf();
    let panic = std::panic::catch_unwind(move || {
        fs_search_transcript::assert_transcripts_replay(&dir_path)
    })
    .unwrap_err();
    assert_eq!(panic.downcast_ref::<String>(), Some(&failed));
    // An update rewrites the file as it was recorded, and then it passes.
    check_transcripts(dir.path(), true).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap(), recorded);
    check_transcripts(dir.path(), false).unwrap();
}

/// The YAML blocks of docs/transcripts.md, as PyYAML parses them (JSON).
fn yaml_blocks() -> Vec<Value> {
    let page = std::fs::read_to_string(repo().join("docs/transcripts.md")).unwrap();
    let mut blocks = Vec::new();
    let mut rest = page.as_str();
    while let Some(start) = rest.find("```yaml\n") {
        let body = &rest[start + "```yaml\n".len()..];
        let end = body.find("\n```\n").unwrap();
        let mut child = Command::new("python3")
            .args([
                "-c",
                "import json, sys\ntry:\n    import yaml\nexcept ImportError:\n    sys.exit(3)\njson.dump(yaml.safe_load(sys.stdin), sys.stdout, default=str)",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(&body.as_bytes()[..end])
            .unwrap();
        let out = child.wait_with_output().unwrap();
        assert_ne!(
            out.status.code(),
            Some(3),
            "PyYAML is missing: `python3 -m pip install pyyaml` (.ci/run installs it)"
        );
        assert!(
            out.status.success(),
            "not valid YAML:\n{}\n{}",
            &body[..end],
            text(&out.stderr)
        );
        blocks.push(serde_json::from_slice(&out.stdout).unwrap());
        rest = &body[end..];
    }
    blocks
}

#[test]
fn the_ci_files_docs_show_are_valid_yaml_and_shard_over_their_matrix() {
    let blocks = yaml_blocks();
    assert_eq!(
        blocks.len(),
        2,
        "a GitHub Actions workflow and a GitLab CI file"
    );
    let github = &blocks[0]["jobs"]["replay"];
    let shards = github["strategy"]["matrix"]["shard"].as_array().unwrap();
    let run: String = github["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        run.contains(&format!(
            "workbench replay fixtures/transcripts/*.jsonl --shard ${{{{ matrix.shard }}}}/{}",
            shards.len()
        )),
        "{run}"
    );
    assert_eq!(
        shards,
        &(1..=shards.len()).map(Value::from).collect::<Vec<_>>()
    );

    let gitlab = &blocks[1]["replay"];
    let script = gitlab["script"].as_array().unwrap();
    let replay = script
        .iter()
        .filter_map(Value::as_str)
        .find(|s| s.contains("workbench replay"))
        .unwrap();
    assert!(
        replay.contains(r#"--shard "$CI_NODE_INDEX/$CI_NODE_TOTAL""#),
        "{replay}"
    );
    assert!(gitlab["parallel"].as_u64().unwrap() > 1);
    let junit = gitlab["artifacts"]["reports"]["junit"].as_str().unwrap();
    assert!(replay.contains(&format!("--junit {junit}")), "{replay}");
}
