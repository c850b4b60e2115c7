//! The MCP server in the MCP 2026-07-28 era (stateless requests, their
//! protocol version and client capabilities in each request's `_meta`, no
//! `initialize`) beside the 2025 sessions, on the same server: the real
//! binary, real bash and real rg, driven by the official Rust SDK's client
//! in its discover lifecycle over stdio and HTTP, and by raw JSON-RPC where
//! a test needs a request no conforming client sends.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// test code: a failed unwrap is a failed test

use std::path::Path;

use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, RoleClient, ServiceExt, serve_client_with_lifecycle};
use serde_json::{Value, json};

use fs_search_test_support::mcp::client::{Client, params, text_of};
use fs_search_test_support::mcp::http::{HttpServer, answer_of, post, request_bytes, send_raw};
use fs_search_test_support::mcp::raw::Raw;
use fs_search_test_support::mcp::{META_KEY, SAMPLING, root, tree};

use crate::{SERVER, reference_call, replays_without_a_diff};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const INFO: &str = "io.modelcontextprotocol/clientInfo";
const SUPPORTED: [&str; 3] = ["2025-06-18", "2025-11-25", "2026-07-28"];

/// A complete 2026-07-28 request `_meta` naming `version`.
fn meta(version: &str) -> Value {
    json!({PV: version, CAPS: {}, INFO: {"name": "raw-2026", "version": "1"}})
}

/// A request `method` with `params` (whose `_meta` is the caller's).
fn request(id: i64, method: &str, params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

/// A client in rmcp's discover lifecycle, asking for 2026-07-28 only.
async fn modern<T, E, A>(transport: T) -> RunningService<RoleClient, Client>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    serve_client_with_lifecycle(
        Client::default(),
        transport,
        ClientLifecycleMode::Discover {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
        },
    )
    .await
    .unwrap()
}

/// The modern client's view: 2026-07-28 selected, both tools listed, and
/// each call's text and `isError` those of a 2025 session's call.
async fn lists_and_calls_as_a_2025_session(
    service: &RunningService<RoleClient, Client>,
    dir: &Path,
) {
    let info = service.peer().peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2026_07_28);
    let tools = service.peer().list_tools(None).await.unwrap();
    let names: Vec<&str> = tools.tools.iter().map(|t| t.name.as_ref()).collect();
    assert_eq!(names, ["glob", "grep"]);
    for (tool, args) in [
        ("glob", json!({"pattern": "**/*.ts"})),
        ("grep", json!({"pattern": "needle"})),
    ] {
        let result = service
            .peer()
            .call_tool(params(tool, args.clone()))
            .await
            .unwrap();
        let result = serde_json::to_value(result).unwrap();
        let reference = reference_call(dir, tool, &args, &["--config", SAMPLING, "--no-spill"]);
        assert_eq!(text_of(&result), text_of(&reference), "{tool}");
        assert_eq!(result["isError"], reference["isError"], "{tool}");
        assert!(
            result["_meta"][META_KEY]["durationMs"].is_number(),
            "{result}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_stdio_a_2026_client_discovers_lists_and_calls_without_initialize() {
    let dir = tree();
    let state = tempfile::tempdir().unwrap();
    let cmd = SERVER.command(
        dir.path(),
        state.path(),
        &["--config", SAMPLING, "--no-spill"],
    );
    let transport = TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap();
    let service = modern(transport).await;
    lists_and_calls_as_a_2025_session(&service, dir.path()).await;
    service.cancel().await.unwrap();
}

#[test]
fn over_stdio_2026_requests_get_the_specified_answers_and_2025_ones_still_need_initialize() {
    let dir = tree();
    let mut raw = Raw::spawn(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]);
    // A 2025 request before initialize is refused as before.
    raw.send_json(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}));
    assert_eq!(raw.response(1)["error"]["code"], -32600);
    // A missing required _meta key: -32602 naming it.
    raw.send_json(request(
        2,
        "server/discover",
        json!({"_meta": {PV: "2026-07-28"}}),
    ));
    let missing = raw.response(2);
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert!(
        missing["error"]["message"].as_str().unwrap().contains(CAPS),
        "{missing}"
    );
    // An unsupported version: -32022 listing the supported ones.
    raw.send_json(request(
        3,
        "server/discover",
        json!({"_meta": meta("v999")}),
    ));
    let unsupported = raw.response(3);
    assert_eq!(unsupported["error"]["code"], -32022, "{unsupported}");
    assert_eq!(unsupported["error"]["data"]["supported"], json!(SUPPORTED));
    assert_eq!(unsupported["error"]["data"]["requested"], "v999");
    // server/discover itself.
    raw.send_json(request(
        4,
        "server/discover",
        json!({"_meta": meta("2026-07-28")}),
    ));
    let discover = raw.response(4)["result"].clone();
    assert_eq!(
        discover["supportedVersions"],
        json!(SUPPORTED),
        "{discover}"
    );
    assert_eq!(discover["capabilities"]["tools"], json!({}), "{discover}");
    assert_eq!(
        discover["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "fs-search-workbench"
    );
    // A method 2026-07-28 removed.
    raw.send_json(request(
        5,
        "logging/setLevel",
        json!({"level": "info", "_meta": meta("2026-07-28")}),
    ));
    assert_eq!(raw.response(5)["error"]["code"], -32601);
    // tools/list with its caching hints, and a call.
    raw.send_json(request(
        6,
        "tools/list",
        json!({"_meta": meta("2026-07-28")}),
    ));
    let list = raw.response(6)["result"].clone();
    assert_eq!(
        (&list["ttlMs"], &list["cacheScope"], &list["resultType"]),
        (&json!(300_000), &json!("private"), &json!("complete")),
        "{list}"
    );
    assert_eq!(list["tools"].as_array().unwrap().len(), 2);
    let args = json!({"pattern": "needle"});
    raw.send_json(request(
        7,
        "tools/call",
        json!({"name": "grep", "arguments": args, "_meta": meta("2026-07-28")}),
    ));
    let call = raw.response(7)["result"].clone();
    let reference = reference_call(
        dir.path(),
        "grep",
        &args,
        &["--config", SAMPLING, "--no-spill"],
    );
    assert_eq!(text_of(&call), text_of(&reference));
    // From then on every request carries its _meta: one without gets -32602.
    raw.send_json(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/list"}));
    assert_eq!(raw.response(8)["error"]["code"], -32602);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_2026_client_and_a_2025_session_share_one_server() {
    let dir = tree();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let legacy = Client::default()
        .serve(StreamableHttpClientTransport::from_uri(server.url()))
        .await
        .unwrap();
    let modern = modern(StreamableHttpClientTransport::from_uri(server.url())).await;
    lists_and_calls_as_a_2025_session(&modern, dir.path()).await;
    // The 2025 session opened before is served as before.
    let info = legacy.peer().peer_info().unwrap();
    assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
    let args = json!({"pattern": "*.md"});
    let result = legacy
        .peer()
        .call_tool(params("glob", args.clone()))
        .await
        .unwrap();
    let result = serde_json::to_value(result).unwrap();
    let reference = reference_call(
        dir.path(),
        "glob",
        &args,
        &["--config", SAMPLING, "--no-spill"],
    );
    assert_eq!(text_of(&result), text_of(&reference));
    modern.cancel().await.unwrap();
    legacy.cancel().await.unwrap();
}

/// A refused request: what it is, its headers, its body, the HTTP status
/// and the JSON-RPC code it gets.
type Case = (
    &'static str,
    Vec<(&'static str, &'static str)>,
    Value,
    u16,
    i64,
);

#[test]
fn over_http_2026_requests_get_the_specified_errors_and_statuses() {
    let dir = tree();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let addr = server.addr.as_str();
    let modern = ("MCP-Protocol-Version", "2026-07-28");
    let list = request(1, "tools/list", json!({"_meta": meta("2026-07-28")}));
    // Each: the headers, the body, the HTTP status and the JSON-RPC code.
    let cases: Vec<Case> = vec![
        (
            "missing clientCapabilities",
            vec![modern, ("Mcp-Method", "server/discover")],
            request(2, "server/discover", json!({"_meta": {PV: "2026-07-28"}})),
            400,
            -32602,
        ),
        (
            "unsupported version",
            vec![
                ("MCP-Protocol-Version", "v999"),
                ("Mcp-Method", "server/discover"),
            ],
            request(3, "server/discover", json!({"_meta": meta("v999")})),
            400,
            -32022,
        ),
        (
            "header and _meta versions differ",
            vec![modern, ("Mcp-Method", "server/discover")],
            request(4, "server/discover", json!({"_meta": meta("v999")})),
            400,
            -32020,
        ),
        (
            "Mcp-Method differs from the body",
            vec![modern, ("Mcp-Method", "prompts/list")],
            list.clone(),
            400,
            -32020,
        ),
        (
            "Mcp-Name missing on tools/call",
            vec![modern, ("Mcp-Method", "tools/call")],
            request(
                5,
                "tools/call",
                json!({"name": "glob", "arguments": {"pattern": "*"}, "_meta": meta("2026-07-28")}),
            ),
            400,
            -32020,
        ),
        (
            "initialize, removed",
            vec![modern, ("Mcp-Method", "initialize")],
            request(6, "initialize", json!({"_meta": meta("2026-07-28")})),
            404,
            -32601,
        ),
        (
            "an unknown method",
            vec![modern, ("Mcp-Method", "unknown/method")],
            request(7, "unknown/method", json!({"_meta": meta("2026-07-28")})),
            404,
            -32601,
        ),
    ];
    for (what, headers, body, status, code) in cases {
        let reply = post(addr, &headers, &body);
        assert_eq!(reply.status, status, "{what}: {reply:?}");
        let answer = answer_of(&reply);
        assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
        assert_eq!(answer["id"], body["id"], "{what}: {answer}");
        if code == -32022 {
            assert_eq!(answer["error"]["data"]["supported"], json!(SUPPORTED));
        }
    }
    // The same tools/list with matching headers: its caching hints, no session.
    let reply = post(addr, &[modern, ("Mcp-Method", "tools/list")], &list);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.header("mcp-session-id").is_none(), "{reply:?}");
    let result = answer_of(&reply)["result"].clone();
    assert_eq!(
        (
            &result["ttlMs"],
            &result["cacheScope"],
            &result["resultType"]
        ),
        (&json!(300_000), &json!("private"), &json!("complete")),
        "{result}"
    );
    // A call, as a 2025 session gets it.
    let args = json!({"pattern": "needle"});
    let call = request(
        8,
        "tools/call",
        json!({"name": "grep", "arguments": args, "_meta": meta("2026-07-28")}),
    );
    let reply = post(
        addr,
        &[modern, ("Mcp-Method", "tools/call"), ("Mcp-Name", "grep")],
        &call,
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let result = answer_of(&reply)["result"].clone();
    let reference = reference_call(
        dir.path(),
        "grep",
        &args,
        &["--config", SAMPLING, "--no-spill"],
    );
    assert_eq!(text_of(&result), text_of(&reference));
    assert_eq!(result["isError"], reference["isError"]);
}

#[test]
fn over_http_each_2026_call_is_recorded_with_an_engine_session_of_its_own() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("stateless.jsonl");
    let server = HttpServer::spawn(
        &SERVER,
        dir.path(),
        &[
            "--config",
            SAMPLING,
            "--no-spill",
            "--record",
            root(&record),
        ],
    );
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "glob"),
    ];
    for id in 1..=2 {
        let call = request(
            id,
            "tools/call",
            json!({"name": "glob", "arguments": {"pattern": "*.md"}, "_meta": meta("2026-07-28")}),
        );
        let reply = post(&server.addr, &headers, &call);
        assert_eq!(reply.status, 200, "{reply:?}");
    }
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("{\"call\":").count(), 2, "{text}");
    let sessions: std::collections::HashSet<&str> = text
        .match_indices("\"id\":\"mcp-")
        .map(|(i, _)| &text[i..i + 20])
        .collect();
    assert_eq!(sessions.len(), 2, "{text}");
    assert_eq!(replays_without_a_diff(&record), 2);
}

#[test]
fn over_http_a_2026_call_with_a_lone_surrogate_and_nesting_over_128_gets_the_engines_result() {
    let dir = tree();
    std::fs::write(dir.path().join("odd.txt"), "before \u{fffd} after\n").unwrap();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "grep"),
    ];
    let meta = meta("2026-07-28").to_string();
    let surrogate = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"\ud800"}},"_meta":{meta}}}}}"#
    );
    let reply = send_raw(
        addr,
        &request_bytes(addr, "POST", &headers, surrogate.as_bytes()),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = answer_of(&reply);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let found = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(found.contains("before \u{fffd} after"), "{found}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"alpha","x":{}{}}},"_meta":{meta}}}}}"#,
        "[".repeat(9_996),
        "]".repeat(9_996)
    );
    let reply = send_raw(
        addr,
        &request_bytes(addr, "POST", &headers, deep.as_bytes()),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = answer_of(&reply);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("notes.md"), "{answer}");
}
