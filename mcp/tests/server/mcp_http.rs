//! The MCP server with `--listen`: the real binary on a real TCP port of
//! 127.0.0.1, real bash and real rg, driven by the official Rust SDK's
//! Streamable HTTP client (`rmcp` over reqwest) and, for status codes,
//! headers and disconnects, by raw HTTP/1.1 on a `TcpStream`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fs_search_test_support::mcp::client::{Client, cancel_a_call_blocked_on_the_fifo, text_of};
use fs_search_test_support::mcp::http::{
    BEARER, HttpServer, Reply, TOKEN, answer_of, call, connect, initialize_body, open, post,
    raw_session, read_reply, request_bytes, send_raw, start_raw_call,
};
use fs_search_test_support::mcp::{
    META_KEY, SAMPLING, SPILLING, all_gone, mkfifo, rg_running_under, root, tree, wait_until,
};
use fs_search_test_support::reliability::procfs::descendants;
use serde_json::{Value, json};

use crate::{SERVER, reference_call, replays_without_a_diff};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_a_cancelled_call_kills_rg_and_progress_came_while_it_ran() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let client = Client::default();
    let service = connect(&server, None, client.clone()).await;
    cancel_a_call_blocked_on_the_fifo(service.peer(), &client, server.pid()).await;
    // The session goes on.
    let ok = call(&service, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(ok["isError"], false);
    service.cancel().await.unwrap();
}

#[test]
fn over_http_401_without_or_with_a_wrong_token_403_for_foreign_origins_and_hosts() {
    let dir = tree();
    let (server, _secrets) = HttpServer::with_token(
        &SERVER,
        dir.path(),
        &[
            "--config",
            SAMPLING,
            "--allow-origin",
            "https://app.example.com",
        ],
    );
    let addr = server.addr.as_str();
    let init = initialize_body();
    for auth in [
        None,
        Some("Bearer wrong-token"),
        Some("Bearer test-token-012345678"),
    ] {
        let headers: Vec<(&str, &str)> = auth.map(|a| ("Authorization", a)).into_iter().collect();
        let reply = post(addr, &headers, &init);
        assert_eq!(reply.status, 401, "{auth:?}: {reply:?}");
        assert!(
            reply
                .header("www-authenticate")
                .unwrap()
                .starts_with("Bearer"),
            "{reply:?}"
        );
        assert!(reply.header("mcp-session-id").is_none());
    }
    let auth = ("Authorization", BEARER);
    for origin in [
        "https://evil.example",
        "null",
        "http://localhost.evil.example",
    ] {
        let reply = post(addr, &[auth, ("Origin", origin)], &init);
        assert_eq!(reply.status, 403, "{origin}: {reply:?}");
    }
    // Loopback origins and --allow-origin ones are welcome.
    for origin in ["http://localhost:5173", "https://app.example.com"] {
        let reply = post(addr, &[auth, ("Origin", origin)], &init);
        assert_eq!(reply.status, 200, "{origin}: {reply:?}");
    }
    // A rebound name for the loopback address is not.
    let mut bytes = request_bytes(addr, "POST", &[auth], init.to_string().as_bytes());
    let text = String::from_utf8(bytes.clone()).unwrap();
    bytes = text
        .replacen(&format!("Host: {addr}"), "Host: attacker.example", 1)
        .into_bytes();
    assert_eq!(send_raw(addr, &bytes).status, 403);
    // Only /mcp exists.
    let other = send_raw(
        addr,
        b"GET /other HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
    );
    assert_eq!(other.status, 404);
    // The token opens the door.
    raw_session(addr, &[auth]);
}

#[test]
fn over_http_a_16_mib_body_gets_413_without_being_read_and_bad_input_no_crash() {
    let dir = tree();
    let (server, _secrets) = HttpServer::with_token(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let auth = ("Authorization", BEARER);
    let big = 16 * 1024 * 1024;
    // Announced: refused on the headers alone (nothing of the body sent).
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {BEARER}\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
         Content-Length: {big}\r\n\r\n"
    );
    let mut stream = open(addr);
    stream.write_all(head.as_bytes()).unwrap();
    assert_eq!(read_reply(stream).status, 413);
    // Chunked: cut off at 8 MiB while it streams.
    let mut stream = open(addr);
    let head = head.replace(
        &format!("Content-Length: {big}"),
        "Transfer-Encoding: chunked",
    );
    stream.write_all(head.as_bytes()).unwrap();
    let reader = {
        let stream = stream.try_clone().unwrap();
        std::thread::spawn(move || read_reply(stream))
    };
    let chunk = vec![b' '; 1024 * 1024];
    for _ in 0..16 {
        let mut framed = format!("{:x}\r\n", chunk.len()).into_bytes();
        framed.extend_from_slice(&chunk);
        framed.extend_from_slice(b"\r\n");
        if stream.write_all(&framed).is_err() {
            break;
        }
    }
    let _ = stream.write_all(b"0\r\n\r\n");
    assert_eq!(reader.join().unwrap().status, 413);

    // Malformed JSON, a batch, garbage HTTP, bad resumption headers: an
    // error answer each, never a crash.
    for body in [&b"{not json"[..], b"[1,2]", b"\xff\xfe", b""] {
        let reply = send_raw(addr, &request_bytes(addr, "POST", &[auth], body));
        assert!((400..500).contains(&reply.status), "{reply:?}");
    }
    let garbage = send_raw(addr, b"\x00\x01 nonsense\r\n\r\n");
    assert!(garbage.head.is_empty() || garbage.status >= 400);
    let session = raw_session(addr, &[auth]);
    for last in [
        "garbage",
        "99999999999999999999999",
        "1/2/3",
        "0/18446744073709551615",
        "",
    ] {
        let reply = send_raw(
            addr,
            &request_bytes(
                addr,
                "GET",
                &[
                    auth,
                    ("Mcp-Session-Id", &session),
                    ("MCP-Protocol-Version", "2025-06-18"),
                    ("Last-Event-ID", last),
                ],
                b"",
            ),
        );
        assert!(reply.status < 500, "{last}: {reply:?}");
    }
    // Still serving.
    let reply = post(
        addr,
        &[
            auth,
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &json!({"jsonrpc":"2.0","id":5,"method":"tools/list"}),
    );
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(reply.messages()[0]["result"]["tools"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_32_sessions_at_once_each_with_4_calls_and_its_own_spill_dir() {
    let dir = tree();
    let spill = tempfile::tempdir().unwrap();
    let server = std::sync::Arc::new(HttpServer::spawn(
        &SERVER,
        dir.path(),
        &["--config", SPILLING, "--spill-dir", root(spill.path())],
    ));
    let calls = [
        ("grep", json!({"pattern": "needle"})),
        ("glob", json!({"pattern": "*.ts"})),
        ("grep", json!({"pattern": "alpha", "path": "notes.md"})),
        ("glob", json!({"pattern": "**/*.md"})),
    ];
    let expected: Vec<Value> = calls
        .iter()
        .map(|(tool, args)| {
            reference_call(
                dir.path(),
                tool,
                args,
                &["--config", SPILLING, "--no-spill"],
            )
        })
        .collect();
    let mut sessions = Vec::new();
    for _ in 0..32 {
        let (server, calls) = (server.clone(), calls.clone());
        sessions.push(tokio::spawn(async move {
            let service = connect(&server, None, Client::default()).await;
            let mut results = Vec::new();
            for (tool, args) in calls {
                results.push(call(&service, tool, args).await);
            }
            service.cancel().await.unwrap();
            results
        }));
    }
    for session in sessions {
        let results = session.await.unwrap();
        for (result, reference) in results.iter().zip(&expected) {
            if result["_meta"][META_KEY]["spill"].is_null() {
                assert_eq!(text_of(result), text_of(reference));
            }
            assert_eq!(result["isError"], reference["isError"]);
        }
        // `**/*.md` finds 3 files over globMaxResults 2: spilled.
        assert!(
            !results[3]["_meta"][META_KEY]["spill"].is_null(),
            "{}",
            results[3]
        );
    }
    let session_dirs = std::fs::read_dir(spill.path())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with("session-")
        })
        .count();
    assert_eq!(session_dirs, 32);
}

#[test]
fn over_http_a_client_gone_mid_call_or_a_deleted_session_leaves_no_process_of_the_call() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let pid = server.pid();
    for how in ["disconnect", "delete"] {
        let session = raw_session(addr, &[]);
        let stream = start_raw_call(addr, &session, json!({"pattern": "x", "path": "fifo"}));
        wait_until("rg on the FIFO", Duration::from_secs(20), || {
            rg_running_under(pid)
        });
        let call_processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
        assert!(!call_processes.is_empty());
        let started = Instant::now();
        match how {
            "disconnect" => drop(stream),
            _ => {
                let reply = send_raw(
                    addr,
                    &request_bytes(
                        addr,
                        "DELETE",
                        &[
                            ("Mcp-Session-Id", &session),
                            ("MCP-Protocol-Version", "2025-06-18"),
                        ],
                        b"",
                    ),
                );
                assert!((200..300).contains(&reply.status), "{reply:?}");
                // The call's stream ends with it.
                let answer = read_reply(stream);
                assert_eq!(answer.status, 200);
            }
        }
        // Promptly: not after rmcp's 5 s drain of a closed session.
        wait_until(
            &format!("the call's processes to end after a {how}"),
            Duration::from_secs(4),
            || all_gone(&call_processes),
        );
        assert!(started.elapsed() < Duration::from_secs(4));
        // A disconnect ends the call, not the session; a DELETE ends the
        // session (then 404, as the specification says).
        let reply = post(
            addr,
            &[
                ("Mcp-Session-Id", &session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        );
        let expected = if how == "delete" { 404 } else { 200 };
        assert_eq!(reply.status, expected, "{how}: {reply:?}");
    }
    // The server serves on.
    raw_session(addr, &[]);
}

#[test]
fn over_http_an_idle_session_expires() {
    let dir = tree();
    let server = HttpServer::spawn(
        &SERVER,
        dir.path(),
        &["--config", SAMPLING, "--idle-timeout", "1"],
    );
    let addr = server.addr.as_str();
    let session = raw_session(addr, &[]);
    std::thread::sleep(Duration::from_millis(2500));
    let reply = post(
        addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
    );
    assert_eq!(reply.status, 404, "{reply:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_sessions_record_into_one_transcript_that_replays() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("http.jsonl");
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
    for _ in 0..2 {
        let service = connect(&server, None, Client::default()).await;
        call(&service, "grep", json!({"pattern": "needle"})).await;
        call(&service, "glob", json!({"pattern": "*.md"})).await;
        service.cancel().await.unwrap();
    }
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("{\"call\":").count(), 4, "{text}");
    for n in 1..=4 {
        assert!(text.contains(&format!("\"call-{n}-")), "{text}");
    }
    let sessions: std::collections::HashSet<&str> = text
        .match_indices("\"id\":\"mcp-")
        .map(|(i, _)| &text[i..i + 20])
        .collect();
    assert_eq!(sessions.len(), 2, "{text}");
    assert_eq!(replays_without_a_diff(&record), 4);
}

#[test]
fn listening_beyond_loopback_needs_a_token() {
    let dir = tree();
    let state = tempfile::tempdir().unwrap();
    let out = SERVER
        .command(dir.path(), state.path(), &["--config", SAMPLING])
        .args(["--listen", "0.0.0.0:0"])
        .env_remove("WORKBENCH_MCP_TOKEN")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("refusing to listen on 0.0.0.0") && stderr.contains("--token-file"),
        "{stderr}"
    );
    // With the token in the environment it starts.
    let mut child = SERVER
        .command(dir.path(), state.path(), &["--config", SAMPLING])
        .args(["--listen", "0.0.0.0:0"])
        .env("WORKBENCH_MCP_TOKEN", TOKEN)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(
        line.starts_with("workbench mcp: listening on http://0.0.0.0:"),
        "{line}"
    );
    child.kill().unwrap();
    child.wait().unwrap();
}

#[test]
fn over_http_sigterm_mid_call_kills_rg_and_exits_143() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let mut server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.clone();
    let pid = server.pid();
    let session = raw_session(&addr, &[]);
    let stream = start_raw_call(&addr, &session, json!({"pattern": "x", "path": "fifo"}));
    wait_until("rg on the FIFO", Duration::from_secs(20), || {
        rg_running_under(pid)
    });
    let call_processes: Vec<i32> = descendants(pid).iter().map(|(p, _)| *p).collect();
    let killed = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let started = Instant::now();
    let status = loop {
        if let Some(status) = server.child().try_wait().unwrap() {
            break status;
        }
        assert!(started.elapsed() < Duration::from_secs(15), "no exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(status.code(), Some(143));
    assert!(all_gone(&call_processes));
    drop(stream);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_the_limit_of_16_calls_in_flight_is_per_session() {
    let dir = tree();
    for i in 0..16 {
        mkfifo(&dir.path().join(format!("fifo-{i}")));
    }
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let busy = std::sync::Arc::new(connect(&server, None, Client::default()).await);
    let blocked: Vec<_> = (0..16)
        .map(|i| {
            let busy = busy.clone();
            let args = json!({"pattern": "needle", "path": format!("fifo-{i}")});
            tokio::spawn(async move { call(&busy, "grep", args).await })
        })
        .collect();
    let pid = server.pid();
    wait_until("16 rg processes", Duration::from_secs(20), || {
        descendants(pid).iter().filter(|(_, c)| c == "rg").count() == 16
    });
    let queued = {
        let busy = busy.clone();
        tokio::spawn(async move { call(&busy, "glob", json!({"pattern": "*.ts"})).await })
    };
    // Another session has slots of its own.
    let other = connect(&server, None, Client::default()).await;
    let answered = call(&other, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(answered["isError"], false, "{answered}");
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!queued.is_finished(), "a 17th call of one session ran");
    for i in 0..16 {
        let path = dir.path().join(format!("fifo-{i}"));
        tokio::task::spawn_blocking(move || {
            std::fs::write(path, "needle in a fifo\n").unwrap();
        })
        .await
        .unwrap();
    }
    for call in blocked {
        let result = call.await.unwrap();
        assert!(text_of(&result).starts_with("Found 1 match"), "{result}");
    }
    assert_eq!(text_of(&queued.await.unwrap()), text_of(&answered));
    other.cancel().await.unwrap();
}

// ------------------------------------------------------------ edge cases

/// A POST in `session` (2025-06-18), raw.
fn post_in(addr: &str, session: &str, body: &[u8]) -> Reply {
    send_raw(
        addr,
        &request_bytes(
            addr,
            "POST",
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            body,
        ),
    )
}

#[test]
fn over_http_a_lone_surrogate_and_nesting_over_128_get_the_engines_result_as_over_stdio() {
    let dir = tree();
    std::fs::write(dir.path().join("odd.txt"), "before \u{fffd} after\n").unwrap();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let session = raw_session(addr, &[]);
    let surrogate = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"\ud800"}}}"#;
    let reply = post_in(addr, &session, surrogate);
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = answer_of(&reply);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let found = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(found.contains("before \u{fffd} after"), "{found}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"alpha","x":{}{}}}}}}}"#,
        "[".repeat(9_996),
        "]".repeat(9_996)
    );
    let reply = post_in(addr, &session, deep.as_bytes());
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = answer_of(&reply);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("notes.md"), "{answer}");
}

#[test]
fn over_http_batches_malformed_json_and_id_null_get_400_with_the_json_rpc_error() {
    let dir = tree();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let session = raw_session(addr, &[]);
    for (body, code) in [
        (&b"{not json"[..], -32700),
        (
            b"[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}]",
            -32600,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":null,\"method\":\"ping\"}",
            -32600,
        ),
        (
            b"{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}",
            -32600,
        ),
    ] {
        for in_session in [true, false] {
            let reply = if in_session {
                post_in(addr, &session, body)
            } else {
                send_raw(addr, &request_bytes(addr, "POST", &[], body))
            };
            let what = String::from_utf8_lossy(body);
            assert_eq!(reply.status, 400, "{what}: {reply:?}");
            assert_eq!(
                reply.header("content-type"),
                Some("application/json"),
                "{what}"
            );
            let answer = answer_of(&reply);
            assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
            assert_eq!(answer["id"], Value::Null, "{what}: {answer}");
        }
    }
}

#[test]
fn over_http_delete_of_an_ended_or_made_up_session_is_404_and_of_a_live_one_204() {
    let dir = tree();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let delete = |session: &str| {
        send_raw(
            addr,
            &request_bytes(
                addr,
                "DELETE",
                &[
                    ("Mcp-Session-Id", session),
                    ("MCP-Protocol-Version", "2025-06-18"),
                ],
                b"",
            ),
        )
    };
    let session = raw_session(addr, &[]);
    assert_eq!(delete(&session).status, 204);
    assert_eq!(delete(&session).status, 404);
    assert_eq!(delete("made-up-0123").status, 404);
}

#[test]
fn over_http_a_request_without_a_session_gets_400_and_a_2026_one_without_its_meta_too() {
    let dir = tree();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let call = json!({"jsonrpc":"2.0","id":3,"method":"tools/call",
        "params":{"name":"glob","arguments":{"pattern":"*.ts"}}});
    // No session (2025): -32600; a 2026-07-28 request without its _meta
    // keys: -32602, as that revision specifies.
    for (version, code) in [
        (None, -32600),
        (Some("2025-06-18"), -32600),
        (Some("2026-07-28"), -32602),
    ] {
        let headers: Vec<(&str, &str)> = version
            .map(|v| vec![("MCP-Protocol-Version", v)])
            .unwrap_or_default();
        let reply = post(addr, &headers, &call);
        assert_eq!(reply.status, 400, "{version:?}: {reply:?}");
        let answer = answer_of(&reply);
        assert_eq!(answer["error"]["code"], code, "{version:?}: {answer}");
        assert_eq!(answer["id"], 3);
    }
    // A session's request naming a later revision is not taken out of it.
    let session = raw_session(addr, &[]);
    let reply = post(
        addr,
        &[
            ("Mcp-Session-Id", &session),
            ("MCP-Protocol-Version", "2026-07-28"),
        ],
        &call,
    );
    assert_eq!(reply.status, 400, "{reply:?}");
}

/// A POST of `initialize` whose headers are sent and whose body is not.
fn initialize_with_a_late_body(addr: &str) -> (TcpStream, Vec<u8>) {
    let bytes = request_bytes(addr, "POST", &[], initialize_body().to_string().as_bytes());
    let split = bytes.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let mut stream = open(addr);
    stream.write_all(&bytes[..split]).unwrap();
    (stream, bytes[split..].to_vec())
}

#[test]
fn over_http_late_bodied_initializes_cannot_exceed_the_256_session_cap() {
    let dir = tree();
    let server = HttpServer::spawn(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]);
    let addr = server.addr.as_str();
    let late: Vec<_> = (0..10).map(|_| initialize_with_a_late_body(addr)).collect();
    // Give the server time to read the late requests' headers.
    std::thread::sleep(Duration::from_millis(300));
    let sessions: Vec<String> = (0..256)
        .map(|_| {
            let init = post(addr, &[], &initialize_body());
            assert_eq!(init.status, 200, "{init:?}");
            init.header("mcp-session-id").unwrap().to_owned()
        })
        .collect();
    for (mut stream, body) in late {
        stream.write_all(&body).unwrap();
        let reply = read_reply(stream);
        assert_eq!(reply.status, 503, "{reply:?}");
    }
    assert_eq!(post(addr, &[], &initialize_body()).status, 503);
    // Ending one makes room for one.
    let ended = send_raw(
        addr,
        &request_bytes(addr, "DELETE", &[("Mcp-Session-Id", &sessions[0])], b""),
    );
    assert_eq!(ended.status, 204, "{ended:?}");
    assert_eq!(post(addr, &[], &initialize_body()).status, 200);
    assert_eq!(post(addr, &[], &initialize_body()).status, 503);
}

#[test]
fn over_http_a_running_call_keeps_its_session_past_the_idle_timeout() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let server = HttpServer::spawn(
        &SERVER,
        dir.path(),
        &["--config", SAMPLING, "--idle-timeout", "1"],
    );
    let addr = server.addr.as_str();
    let pid = server.pid();
    let session = raw_session(addr, &[]);
    let stream = start_raw_call(addr, &session, json!({"pattern": "needle", "path": "fifo"}));
    wait_until("rg on the FIFO", Duration::from_secs(20), || {
        rg_running_under(pid)
    });
    std::thread::sleep(Duration::from_millis(2500));
    std::fs::write(dir.path().join("fifo"), "needle in a fifo\n").unwrap();
    let reply = read_reply(stream);
    assert_eq!(reply.status, 200, "{reply:?}");
    let answer = reply.messages().pop().unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Found 1 match"), "{answer}");
    // The session lives on, and expires once idle.
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}).to_string();
    assert_eq!(post_in(addr, &session, list.as_bytes()).status, 200);
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(post_in(addr, &session, list.as_bytes()).status, 404);
}

#[test]
fn over_http_1030_idle_connections_do_not_starve_a_client_with_the_token() {
    let dir = tree();
    let (server, _secrets) = HttpServer::with_token(&SERVER, dir.path(), &["--config", SAMPLING]);
    let addr = server.addr.as_str();
    let idle: Vec<TcpStream> = (0..1030)
        .map(|_| TcpStream::connect(addr).unwrap())
        .collect();
    let started = Instant::now();
    let mut stream = open(addr);
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    stream
        .write_all(&request_bytes(
            addr,
            "POST",
            &[("Authorization", BEARER)],
            initialize_body().to_string().as_bytes(),
        ))
        .unwrap();
    let reply = read_reply(stream);
    assert_eq!(reply.status, 200, "{reply:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    drop(idle);
}

#[test]
fn over_http_a_silent_connection_and_a_body_never_sent_are_closed_at_their_deadlines() {
    let dir = tree();
    let (server, _secrets) = {
        let secrets = tempfile::tempdir().unwrap();
        let file = secrets.path().join("token");
        std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
        // Private, as a secret should be (else a warning precedes the address).
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .unwrap();
        let state = tempfile::tempdir().unwrap();
        let child = SERVER
            .command(
                dir.path(),
                state.path(),
                &[
                    "--config",
                    SAMPLING,
                    "--listen",
                    "127.0.0.1:0",
                    "--token-file",
                    root(&file),
                ],
            )
            .env("WORKBENCH_MCP_HTTP_LIMITS", "gate_ms=400,body_ms=400")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        (HttpServer::listening(child, state), secrets)
    };
    let addr = server.addr.as_str();
    // A connection that sends nothing is closed after the gate deadline.
    let started = Instant::now();
    let silent = open(addr);
    let mut buf = Vec::new();
    let _ = (&silent).read_to_end(&mut buf);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // An authenticated request that never sends its declared body: 408.
    let started = Instant::now();
    let mut stream = open(addr);
    stream
        .write_all(
            format!(
                "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nAuthorization: {BEARER}\r\n\
                 Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n\
                 Content-Length: 100\r\n\r\n{{"
            )
            .as_bytes(),
        )
        .unwrap();
    let reply = read_reply(stream);
    assert_eq!(reply.status, 408, "{reply:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    // The server serves on.
    assert_eq!(
        post(addr, &[("Authorization", BEARER)], &initialize_body()).status,
        200
    );
}
