//! `workbench mcp` beside the workbench's other commands: the server
//! answers what `workbench call` prints, lists what `workbench surface`
//! shows, and records what `workbench freeze` and `replay` read. The real
//! binary, real bash and real rg, the server driven by the official Rust
//! SDK's client over stdio and Streamable HTTP. The server's own
//! end-to-end tests run its own binary (`mcp/tests/server/`).
//!
//! The helpers the other modules share: `workbench mcp` as these tests
//! start it ([`SERVER`]), `workbench` with the rg config that pins grep's
//! order.

use std::path::Path;
use std::process::{Command, Output};

use fs_search_test_support::mcp::client::{
    Client, Connected, connect, connect_with, mcp_call, params, record_session, text_of,
};
use fs_search_test_support::mcp::http::{HttpServer, TOKEN, call, connect as connect_http};
use fs_search_test_support::mcp::{META_KEY, McpServer, SAMPLING, SPILLING, root, tree};
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::{Peer, RoleClient};
use serde_json::{Value, json};

/// `workbench mcp`: the server as these tests start it.
pub(crate) const SERVER: McpServer =
    McpServer::workbench(env!("CARGO_BIN_EXE_workbench"), env!("CARGO_TARGET_TMPDIR"));

/// The `workbench` binary.
pub(crate) fn bin() -> &'static str {
    SERVER.program()
}

/// The rg config that pins grep's file order, given to the server and to
/// every other command of these tests alike.
pub(crate) fn sorted_rg_config() -> std::path::PathBuf {
    SERVER.sorted_rg_config()
}

/// `workbench ARGS…` with [`sorted_rg_config`].
pub(crate) fn workbench(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .env("RIPGREP_CONFIG_PATH", sorted_rg_config())
        .output()
        .unwrap()
}

/// `workbench call --json` for the same call.
fn cli_call(dir: &Path, tool: &str, args: &Value, extra: &[&str]) -> Value {
    let args = args.to_string();
    let mut all = vec![
        "call",
        tool,
        "--workdir",
        root(dir),
        "--args",
        &args,
        "--json",
    ];
    all.extend_from_slice(extra);
    let out = workbench(&all);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The call through the server (`--config SAMPLING --no-spill`) and
/// through `workbench call`, whose text and isError must be equal.
async fn same_as_cli(c: &Connected, dir: &Path, tool: &str, args: &Value) -> (Value, Value) {
    let mcp = mcp_call(c, tool, args.clone()).await;
    let cli = cli_call(dir, tool, args, &["--config", SAMPLING, "--no-spill"]);
    assert_eq!(
        text_of(&mcp),
        cli["text"].as_str().unwrap(),
        "{tool} {args}"
    );
    assert_eq!(mcp["isError"], cli["isError"], "{tool} {args}");
    (mcp, cli)
}

/// `workbench surface --config CONFIG --json`.
fn surface(config: &str) -> Value {
    let out = workbench(&["surface", "--config", config, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The server's `initialize` answer (negotiated `version`, server info,
/// capabilities, instructions) and `tools/list` against `workbench surface
/// --json`.
async fn initialize_and_tools_list_equal_surface(
    peer: &Peer<RoleClient>,
    version: &ProtocolVersion,
    surface: &Value,
) {
    let info = peer.peer_info().unwrap();
    assert_eq!(&info.protocol_version, version);
    let info = serde_json::to_value(&*info).unwrap();
    assert_eq!(info["serverInfo"]["name"], "fs-search-workbench");
    assert_eq!(info["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(info["capabilities"], json!({"logging": {}, "tools": {}}));
    let sections: Vec<&str> = surface["promptSections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["text"].as_str().unwrap())
        .collect();
    assert!(!sections.is_empty());
    assert_eq!(info["instructions"], json!(sections.join("\n\n")));

    let tools = peer.list_tools(None).await.unwrap();
    let tools = serde_json::to_value(&tools).unwrap();
    let expected: Vec<Value> = surface["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            json!({"name": t["name"], "description": t["description"], "inputSchema": t["parameters"]})
        })
        .collect();
    assert_eq!(tools["tools"], json!(expected));
    // Key order too: the schema is the engine's object as it prints it.
    assert_eq!(tools["tools"].to_string(), json!(expected).to_string());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_instructions_and_tools_list_equal_workbench_surface() {
    let dir = tree();
    let surface = surface(SAMPLING);
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let client = Client {
            version: Some(version.clone()),
            ..Client::default()
        };
        let c = connect_with(&SERVER, dir.path(), &["--config", SAMPLING], client, None).await;
        initialize_and_tools_list_equal_surface(c.service.peer(), &version, &surface).await;
        c.service.cancel().await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_equal_workbench_call_byte_for_byte_without_spill() {
    let dir = tree();
    let c = connect(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]).await;
    for (tool, args) in [
        ("grep", json!({"pattern": "needle"})),
        ("grep", json!({"pattern": "alpha", "path": "notes.md"})),
        ("grep", json!({"pattern": "nothing-matches-this"})),
        ("glob", json!({"pattern": "*.md"})),
        ("glob", json!({"pattern": "*", "path": "src"})),
    ] {
        let (mcp, _) = same_as_cli(&c, dir.path(), tool, &args).await;
        let meta = &mcp["_meta"][META_KEY];
        assert_eq!(meta["error"], Value::Null);
        assert_eq!(meta["spill"], Value::Null);
        assert!(meta["durationMs"].as_f64().unwrap() >= 0.0);
    }
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_equal_workbench_call_with_the_spill_locator_normalised() {
    let dir = tree();
    let spill = tempfile::tempdir().unwrap();
    let c = connect(
        &SERVER,
        dir.path(),
        &["--config", SPILLING, "--spill-dir", root(spill.path())],
    )
    .await;
    let args = json!({"pattern": "*"});
    let mcp = mcp_call(&c, "glob", args.clone()).await;
    let cli_spill = tempfile::tempdir().unwrap();
    let cli = cli_call(
        dir.path(),
        "glob",
        &args,
        &["--config", SPILLING, "--spill-dir", root(cli_spill.path())],
    );
    let meta = &mcp["_meta"][META_KEY];
    let locator = meta["spill"]["locator"].as_str().unwrap();
    assert!(locator.starts_with(root(spill.path())), "{locator}");
    assert!(Path::new(locator).is_file());
    assert_eq!(meta["spill"]["bytes"], cli["spill"]["bytes"]);
    let cli_locator = cli["spill"]["locator"].as_str().unwrap();
    let text = text_of(&mcp).replace(locator, "<LOCATOR>");
    assert!(text.contains("<LOCATOR>"), "{text}");
    assert_eq!(
        text,
        cli["text"]
            .as_str()
            .unwrap()
            .replace(cli_locator, "<LOCATOR>")
    );
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_get_the_engines_own_error_results() {
    let dir = tree();
    let c = connect(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]).await;
    for (tool, args) in [
        ("grep", json!({})),
        ("glob", json!({"pattern": 5})),
        ("grep", json!({"pattern": "x", "extra": true})),
        ("glob", json!({"pattern": "*.md", "path": ["a"]})),
    ] {
        let (mcp, cli) = same_as_cli(&c, dir.path(), tool, &args).await;
        let error = &mcp["_meta"][META_KEY]["error"];
        assert_eq!(error["name"], cli["error"]["name"]);
        assert_eq!(error["code"], cli["error"]["code"]);
    }
    // At least the wrong type is an error result, not a protocol error.
    let wrong = mcp_call(&c, "glob", json!({"pattern": 5})).await;
    assert_eq!(wrong["isError"], true);
    // Absent arguments reach the engine as `{}`.
    let absent = c
        .service
        .peer()
        .call_tool(CallToolRequestParams::new("grep"))
        .await
        .unwrap();
    let cli = cli_call(
        dir.path(),
        "grep",
        &json!({}),
        &["--config", SAMPLING, "--no-spill"],
    );
    assert_eq!(
        text_of(&serde_json::to_value(absent).unwrap()),
        cli["text"].as_str().unwrap()
    );
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frozen_recording_replays_in_another_temp_dir() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    record_session(&SERVER, dir.path(), &record).await;
    let fixture = tempfile::tempdir().unwrap();
    let frozen = fixture.path().join("transcripts/session.jsonl");
    std::fs::create_dir_all(frozen.parent().unwrap()).unwrap();
    let tree_out = fixture.path().join("trees/session");
    let freeze = workbench(&[
        "freeze",
        root(&record),
        "--workdir",
        root(dir.path()),
        "--out",
        root(&frozen),
        "--tree-out",
        root(&tree_out),
    ]);
    assert_eq!(freeze.status.code(), Some(0), "{freeze:?}");
    assert!(tree_out.join("manifest.json").is_file());
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&frozen)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["tree"], "../trees/session");
    // Move the fixture elsewhere and drop the live workdir: it needs neither.
    let elsewhere = tempfile::tempdir().unwrap();
    let copied = Command::new("cp")
        .args([
            "-r",
            &format!("{}/.", root(fixture.path())),
            root(elsewhere.path()),
        ])
        .status()
        .unwrap();
    assert!(copied.success());
    drop(fixture);
    drop(dir);
    let replay = workbench(&[
        "replay",
        root(&elsewhere.path().join("transcripts/session.jsonl")),
    ]);
    assert_eq!(replay.status.code(), Some(0), "{replay:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_initialize_tools_and_calls_equal_surface_and_workbench_call() {
    let dir = tree();
    let (server, _secrets) =
        HttpServer::with_token(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let surface = surface(SAMPLING);
    for version in [ProtocolVersion::V_2025_06_18, ProtocolVersion::V_2025_11_25] {
        let client = Client {
            version: Some(version.clone()),
            ..Client::default()
        };
        let service = connect_http(&server, Some(TOKEN), client).await;
        initialize_and_tools_list_equal_surface(service.peer(), &version, &surface).await;
        for (tool, args) in [
            ("grep", json!({"pattern": "needle"})),
            ("grep", json!({"pattern": "alpha", "path": "notes.md"})),
            ("glob", json!({"pattern": "*.md"})),
            ("glob", json!({"pattern": "*", "path": "src"})),
            ("grep", json!({"pattern": 3})),
            ("glob", json!({})),
        ] {
            let mcp = call(&service, tool, args.clone()).await;
            let cli = cli_call(
                dir.path(),
                tool,
                &args,
                &["--config", SAMPLING, "--no-spill"],
            );
            assert_eq!(
                text_of(&mcp),
                cli["text"].as_str().unwrap(),
                "{tool} {args}"
            );
            assert_eq!(mcp["isError"], cli["isError"], "{tool} {args}");
            assert!(mcp["_meta"][META_KEY]["durationMs"].as_f64().is_some());
        }
        let unknown = service
            .peer()
            .call_tool(params("nope", json!({})))
            .await
            .unwrap_err();
        assert!(
            unknown.to_string().contains("Unknown tool: nope"),
            "{unknown}"
        );
        service.cancel().await.unwrap();
    }
}
