//! The MCP server with `--replay`: a session recorded by the real server
//! (`--record`) and fixture transcripts served back, driven by the official
//! Rust SDK's client over stdio and Streamable HTTP; misses answered with
//! an error naming the closest calls, or run live and recorded; bad
//! transcripts refused. Real server processes, real bash and rg.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

use fs_search_test_support::mcp::client::{Client, connect, params, text_of};
use fs_search_test_support::mcp::http::listening_address;
use fs_search_test_support::mcp::{META_KEY, SPILLING, root, tree};
use fs_search_test_support::rg_texts::running_rg_major;

use crate::{SERVER, replays_without_a_diff};

const FIXTURE_CONFIG: &str = r#"{"sampleOverCapGlobResults":true}"#;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../fixtures/transcripts/{name}"))
}

/// The server with `EXTRA…` and without `--workdir`, logs in `state`.
fn replay_command(state: &Path, extra: &[&str]) -> Command {
    let mut cmd = SERVER.bare_command(state, extra);
    cmd.env_remove("WORKBENCH_MCP_TOKEN");
    cmd
}

type Service = RunningService<RoleClient, Client>;

async fn serve(cmd: Command) -> Service {
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    Client::default().serve(transport).await.unwrap()
}

async fn call(service: &Service, tool: &str, args: Value) -> Value {
    let result = service.peer().call_tool(params(tool, args)).await.unwrap();
    serde_json::to_value(result).unwrap()
}

/// The server with `--listen 127.0.0.1:0 EXTRA…`, its address from stderr.
struct HttpServer {
    child: Child,
    url: String,
}

impl HttpServer {
    fn spawn(state: &Path, extra: &[&str]) -> Self {
        let args = [&["--listen", "127.0.0.1:0"], extra].concat();
        let mut child = replay_command(state, &args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let url = format!("http://{}/mcp", listening_address(&mut child));
        Self { child, url }
    }

    async fn connect(&self) -> Service {
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.clone());
        let transport = StreamableHttpClientTransport::from_config(config);
        Client::default().serve(transport).await.unwrap()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ------------------------------------------------------------ transcripts

/// What a record (or one of its variants) says the model saw.
#[derive(Debug, Clone, Default, PartialEq)]
struct Expected {
    is_error: Value,
    error: Value,
    spill: Value,
    lines: Vec<String>,
}

impl Expected {
    fn text(&self) -> String {
        self.lines.join("\n")
    }
}

#[derive(Debug, Clone)]
struct Rec {
    name: String,
    tool: String,
    args: Value,
    outcome: Expected,
    variants: BTreeMap<u64, Expected>,
}

impl Rec {
    fn expected(&self, rg_major: u64) -> &Expected {
        self.variants.get(&rg_major).unwrap_or(&self.outcome)
    }
}

/// The records of a transcript file, read line by line as the format
/// documents it. A release variant (`"contract"`: another release than
/// the header's, which the server does not serve as) is skipped.
fn records(path: &Path) -> Vec<Rec> {
    let mut out: Vec<Rec> = Vec::new();
    let mut variant = None;
    let mut skipping = false;
    for line in std::fs::read_to_string(path).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let outcome = |v: &Value| Expected {
            is_error: v["isError"].clone(),
            error: v["error"].clone(),
            spill: v["spill"].clone(),
            lines: Vec::new(),
        };
        if v.get("text").is_some() && skipping {
            continue;
        }
        skipping = v.get("contract").is_some() && v.get("variant").is_some();
        if skipping {
            continue;
        }
        if v.get("call").is_some() {
            out.push(Rec {
                name: v["call"].as_str().unwrap().to_owned(),
                tool: v["tool"].as_str().unwrap().to_owned(),
                args: v["args"].clone(),
                outcome: Expected::default(),
                variants: BTreeMap::new(),
            });
            variant = None;
        } else if v.get("result").is_some() {
            out.last_mut().unwrap().outcome = outcome(&v);
        } else if v.get("variant").is_some() {
            let major = v["rg"].as_u64().unwrap();
            out.last_mut().unwrap().variants.insert(major, outcome(&v));
            variant = Some(major);
        } else if let Some(text) = v.get("text") {
            let rec = out.last_mut().unwrap();
            let target = match variant {
                Some(major) => rec.variants.get_mut(&major).unwrap(),
                None => &mut rec.outcome,
            };
            target.lines.push(text.as_str().unwrap().to_owned());
        }
    }
    out
}

/// What a replaying server says at `initialize` (2025-11-25) and lists
/// at `tools/list` is what a live server with the transcript's `config`
/// says and lists (that this is what `workbench surface` shows is the
/// workbench's test, `mcp::initialize_instructions_and_tools_list_equal_workbench_surface`).
async fn serves_the_surface_of_a_live_server(replay: &Service, config: &str) {
    let dir = tree();
    let live = connect(&SERVER, dir.path(), &["--config", config]).await;
    let peer = live.service.peer();
    let info = serde_json::to_value(&*replay.peer().peer_info().unwrap()).unwrap();
    assert_eq!(info["protocolVersion"], "2025-11-25");
    assert_eq!(
        info,
        serde_json::to_value(&*peer.peer_info().unwrap()).unwrap()
    );
    let tools = serde_json::to_value(replay.peer().list_tools(None).await.unwrap()).unwrap();
    let live_tools = serde_json::to_value(peer.list_tools(None).await.unwrap()).unwrap();
    // Key order too: the schema is the engine's object as it prints it.
    assert_eq!(tools.to_string(), live_tools.to_string());
    live.service.cancel().await.unwrap();
}

/// `served` is exactly what `expected` recorded: text, isError, error, spill.
fn assert_served(served: &Value, expected: &Expected, what: &str) {
    assert_eq!(text_of(served), expected.text(), "{what}");
    assert_eq!(served["isError"], expected.is_error, "{what}");
    assert_eq!(served["_meta"][META_KEY]["error"], expected.error, "{what}");
    assert_eq!(served["_meta"][META_KEY]["spill"], expected.spill, "{what}");
}

// ------------------------------------------------------------ the tests

/// The calls a client makes to the replaying server: the recorded ones
/// with the arguments of call 4 respelled (key order, `1.0` for `1`), the
/// repeated grep three times in all, and one call never recorded.
fn replayed_calls() -> Vec<(&'static str, Value)> {
    vec![
        ("grep", json!({"pattern": "needle"})),
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "("})),
        ("grep", json!({"extra": 1.0, "pattern": "x"})),
        ("grep", json!({"pattern": "needle"})),
        ("grep", json!({"pattern": "needle"})),
        ("grep", json!({"pattern": "needlx"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_session_is_served_back_identically_over_stdio_and_http() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let rec = out.path().join("rec.jsonl");

    // Record a session with the real server: over-cap globs spill.
    let state = tempfile::tempdir().unwrap();
    let live = serve(SERVER.command(
        dir.path(),
        state.path(),
        &["--config", SPILLING, "--record", root(&rec)],
    ))
    .await;
    let mut live_answers = Vec::new();
    for (tool, args) in [
        ("grep", json!({"pattern": "needle"})),
        ("glob", json!({"pattern": "*"})),
        ("grep", json!({"pattern": "("})),
        ("grep", json!({"pattern": "x", "extra": 1})),
    ] {
        live_answers.push(call(&live, tool, args).await);
    }
    // The same call again finds one more match.
    std::fs::write(dir.path().join("src/gamma.ts"), "needle four\n").unwrap();
    live_answers.push(call(&live, "grep", json!({"pattern": "needle"})).await);
    live.cancel().await.unwrap();
    assert_ne!(text_of(&live_answers[0]), text_of(&live_answers[4]));
    assert!(text_of(&live_answers[2]).starts_with("Error: grep pattern rejected"));
    assert!(!live_answers[1]["_meta"][META_KEY]["spill"].is_null());
    let recorded = records(&rec);
    assert_eq!(recorded.len(), 5);

    // Served back over stdio.
    let state = tempfile::tempdir().unwrap();
    let replay = serve(replay_command(state.path(), &["--replay", root(&rec)])).await;
    serves_the_surface_of_a_live_server(&replay, SPILLING).await;
    let mut served = Vec::new();
    for (tool, args) in replayed_calls() {
        served.push(call(&replay, tool, args).await);
    }
    replay.cancel().await.unwrap();
    // Record i answers call i; the repeated grep gets its second record,
    // then that one again.
    for (i, record) in [0, 1, 2, 3, 4, 4].into_iter().enumerate() {
        assert_served(
            &served[i],
            &recorded[record].outcome,
            &recorded[record].name,
        );
    }
    // Byte for byte what the live server answered, where the text names
    // no temp path (the spilled glob's footer has `<SPILL>` as recorded).
    for (i, live) in [(0, 0), (2, 2), (3, 3), (4, 4), (5, 4)] {
        assert_eq!(
            text_of(&served[i]),
            text_of(&live_answers[live]),
            "call {i}"
        );
        assert_eq!(served[i]["isError"], live_answers[live]["isError"]);
        assert_eq!(
            served[i]["_meta"][META_KEY]["error"],
            live_answers[live]["_meta"][META_KEY]["error"]
        );
    }
    assert!(text_of(&served[1]).contains("<SPILL>/session-"));
    assert_eq!(
        served[1]["_meta"][META_KEY]["spill"]["bytes"],
        live_answers[1]["_meta"][META_KEY]["spill"]["bytes"]
    );
    // The miss names the closest recorded calls.
    let miss = &served[6];
    assert_eq!(miss["isError"], true);
    assert_eq!(
        miss["_meta"][META_KEY]["error"],
        json!({"name": "NoRecordedCall", "code": null})
    );
    let rec_name = root(&rec);
    assert_eq!(
        text_of(miss),
        format!(
            "No recorded call matches grep {{\"pattern\":\"needlx\"}}. The closest recorded calls:\n\
             - grep {{\"pattern\":\"needle\"}} (record \"call-1-grep\", {rec_name}:2)\n\
             - grep {{\"pattern\":\"(\"}} (record \"call-3-grep\", {rec_name}:{})\n\
             - grep {{\"pattern\":\"x\",\"extra\":1}} (record \"call-4-grep\", {rec_name}:{})",
            line_of(&rec, "call-3-grep"),
            line_of(&rec, "call-4-grep"),
        )
    );

    // Served back over HTTP: the same answers, whole.
    let state = tempfile::tempdir().unwrap();
    let server = HttpServer::spawn(state.path(), &["--replay", root(&rec)]);
    let http = server.connect().await;
    for ((tool, args), stdio) in replayed_calls().into_iter().zip(&served) {
        assert_eq!(
            &call(&http, tool, args.clone()).await,
            stdio,
            "{tool} {args}"
        );
    }
    http.cancel().await.unwrap();
}

/// The line of the call line of record `name` in `path`.
fn line_of(path: &Path, name: &str) -> usize {
    let needle = format!("{{\"call\":\"{name}\"");
    1 + std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .position(|l| l.starts_with(&needle))
        .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fixture_transcripts_are_served_with_the_variant_of_the_installed_rg() {
    let files = [
        fixture("search-errors.jsonl"),
        fixture("grep-footers.jsonl"),
    ];
    let state = tempfile::tempdir().unwrap();
    let replay = serve(replay_command(
        state.path(),
        &["--replay", root(&files[0]), root(&files[1])],
    ))
    .await;
    serves_the_surface_of_a_live_server(&replay, FIXTURE_CONFIG).await;
    let major = u64::from(running_rg_major());
    let all: Vec<Rec> = files.iter().flat_map(|f| records(f)).collect();
    assert!(all.iter().any(|r| !r.variants.is_empty()));
    // Called in recorded order, every record answers with its own outcome
    // (records with equal arguments are served in that order).
    for record in &all {
        let served = call(&replay, &record.tool, record.args.clone()).await;
        assert_served(&served, record.expected(major), &record.name);
    }
    replay.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_miss_runs_live_on_the_transcripts_tree_and_is_recorded_with_on_miss_live() {
    let file = fixture("grep-footers.jsonl");
    let out = tempfile::tempdir().unwrap();
    let rec = out.path().join("misses.jsonl");
    let state = tempfile::tempdir().unwrap();
    let replay = serve(replay_command(
        state.path(),
        &[
            "--replay",
            root(&file),
            "--on-miss",
            "live",
            "--record",
            root(&rec),
        ],
    ))
    .await;
    let hit = call(&replay, "grep", json!({"pattern": "no such text anywhere"})).await;
    assert_served(&hit, &records(&file)[0].outcome, "grep-no-matches");
    let miss = call(&replay, "grep", json!({"pattern": "export const"})).await;
    replay.cancel().await.unwrap();
    assert_eq!(miss["isError"], false);
    assert!(text_of(&miss).starts_with("Found "), "{miss}");
    // Only the call run live is recorded, with what the client saw, under
    // a header naming the fixture's tree: it replays unchanged.
    let recorded = records(&rec);
    assert_eq!(recorded.len(), 1);
    assert_eq!(recorded[0].args, json!({"pattern": "export const"}));
    assert_eq!(recorded[0].outcome.text(), text_of(&miss));
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&rec)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert!(
        header["tree"]
            .as_str()
            .unwrap()
            .ends_with("fixtures/trees/mixed"),
        "{header}"
    );
    assert_eq!(replays_without_a_diff(&rec), 1);
}

#[test]
fn a_bad_transcript_or_option_is_a_clear_error_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let header = std::fs::read_to_string(fixture("grep-footers.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_owned();
    let corrupt = dir.path().join("corrupt.jsonl");
    std::fs::write(&corrupt, format!("{header}\n{{\"call\": oops\n")).unwrap();
    let other = dir.path().join("other-config.jsonl");
    std::fs::write(
        &other,
        header.replace(
            "\"config\":{\"sampleOverCapGlobResults\":true}",
            "\"config\":{\"sampleOverCapGlobResults\":false}",
        ) + "\n",
    )
    .unwrap();
    let good = fixture("grep-footers.jsonl");
    let missing = dir.path().join("missing.jsonl");
    let record = dir.path().join("rec.jsonl");
    let cases: [(Vec<&str>, String); 5] = [
        (
            vec!["--replay", root(&missing)],
            format!("--replay {}: ", missing.display()),
        ),
        (
            vec!["--replay", root(&corrupt)],
            format!("--replay {}:2: not valid JSON", corrupt.display()),
        ),
        (
            vec!["--replay", root(&good), root(&other)],
            format!("--replay {}: its config differs from ", other.display()),
        ),
        (
            vec!["--replay", root(&good), "--record", root(&record)],
            "it needs --on-miss live".to_owned(),
        ),
        (
            vec!["--replay", root(&good), "--workdir", root(dir.path())],
            "cannot be used with".to_owned(),
        ),
    ];
    for (args, message) in cases {
        let out = replay_command(dir.path(), &args)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(&message), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!record.exists());
}

/// A client in rmcp's discover lifecycle asking for 2026-07-28 only.
async fn modern<T, E, A>(transport: T) -> Service
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    rmcp::serve_client_with_lifecycle(
        Client::default(),
        transport,
        rmcp::ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap()
}

/// A result without the key only the 2026-07-28 revision has.
fn without_result_type(mut result: Value) -> Value {
    result.as_object_mut().unwrap().remove("resultType");
    result
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_answers_are_the_same_in_the_2026_era_over_stdio_and_http() {
    let file = fixture("grep-footers.jsonl");
    let all = records(&file);
    let mut calls: Vec<(String, Value)> = all
        .iter()
        .map(|r| (r.tool.clone(), r.args.clone()))
        .collect();
    calls.push(("glob".to_owned(), json!({"pattern": "nothing-recorded"})));
    let mut answers = Vec::new();
    // 2025-11-25 over stdio, then 2026-07-28 over stdio and over HTTP.
    for era in ["2025 stdio", "2026 stdio", "2026 http"] {
        let state = tempfile::tempdir().unwrap();
        let args = ["--replay", root(&file)];
        let http;
        let service = match era {
            "2025 stdio" => serve(replay_command(state.path(), &args)).await,
            "2026 stdio" => {
                let cmd = tokio::process::Command::from(replay_command(state.path(), &args));
                modern(TokioChildProcess::new(cmd).unwrap()).await
            }
            _ => {
                http = HttpServer::spawn(state.path(), &args);
                let config = StreamableHttpClientTransportConfig::with_uri(http.url.clone());
                modern(StreamableHttpClientTransport::from_config(config)).await
            }
        };
        let version = service.peer().peer_info().unwrap().protocol_version.clone();
        let expected = if era.starts_with("2026") {
            ProtocolVersion::V_2026_07_28
        } else {
            ProtocolVersion::V_2025_11_25
        };
        assert_eq!(version, expected, "{era}");
        let mut served = Vec::new();
        for (tool, args) in &calls {
            served.push(without_result_type(
                call(&service, tool, args.clone()).await,
            ));
        }
        service.cancel().await.unwrap();
        answers.push(served);
    }
    for (record, served) in all.iter().zip(&answers[0]) {
        assert_served(served, &record.outcome, &record.name);
    }
    assert_eq!(answers[0].last().unwrap()["isError"], true);
    assert_eq!(answers[1], answers[0]);
    assert_eq!(answers[2], answers[0]);
}
