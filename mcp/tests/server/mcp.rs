//! The MCP server over stdio: the real binary, real bash and real rg,
//! driven by the official Rust SDK's client (`rmcp`, child-process
//! transport) and, where the test needs raw bytes on stdin, by a bare
//! JSON-RPC line client.

// Log notifications are deprecated in rmcp for a newer protocol revision;
// the revisions served here have them.
#![allow(deprecated)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use fs_search_test_support::mcp::client::{
    Client, cancel_a_call_blocked_on_the_fifo, connect, connect_with, mcp_call, params,
    record_session, text_of,
};
use fs_search_test_support::mcp::raw::Raw;
use fs_search_test_support::mcp::{
    SAMPLING, all_gone, logs_in, mkfifo, rg_running_under, root, tree, wait_until,
};
use fs_search_test_support::reliability::procfs::descendants;
use rmcp::ServiceError;
use serde_json::{Value, json};

use crate::{SERVER, replays_without_a_diff};

/// `VmHWM` of process `pid`, in KiB.
fn peak_rss_kib(pid: i32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declare_max_result_chars_sets_claude_code_s_meta_on_both_tools_and_only_then() {
    let dir = tree();
    let c = connect(
        &SERVER,
        dir.path(),
        &["--config", SAMPLING, "--declare-max-result-chars", "120000"],
    )
    .await;
    let tools = c.service.peer().list_all_tools().await.unwrap();
    assert_eq!(tools.len(), 2);
    for tool in &tools {
        let meta = serde_json::to_value(tool.meta.as_ref().unwrap()).unwrap();
        assert_eq!(
            meta,
            json!({"anthropic/maxResultSizeChars": 120000}),
            "{}",
            tool.name
        );
    }
    c.service.cancel().await.unwrap();
    let c = connect(&SERVER, dir.path(), &["--config", SAMPLING]).await;
    let tools = c.service.peer().list_all_tools().await.unwrap();
    assert!(tools.iter().all(|t| t.meta.is_none()));
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_protocol_version_is_answered_with_2025_11_25() {
    let dir = tree();
    let mut raw = Raw::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    raw.send_json(
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2024-01-01","capabilities":{},
        "clientInfo":{"name":"raw","version":"1"}}}),
    );
    assert_eq!(raw.response(0)["result"]["protocolVersion"], "2025-11-25");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unknown_tool_is_a_json_rpc_invalid_params_error() {
    let dir = tree();
    let c = connect(&SERVER, dir.path(), &["--config", SAMPLING]).await;
    let err = c
        .service
        .peer()
        .call_tool(params("read", json!({"path": "notes.md"})))
        .await
        .unwrap_err();
    let ServiceError::McpError(error) = err else {
        panic!("not a JSON-RPC error: {err:?}");
    };
    assert_eq!(error.code.0, -32602);
    assert_eq!(error.message, "Unknown tool: read");
    // The server goes on serving.
    let ok = mcp_call(&c, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(ok["isError"], false);
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sixteen_calls_run_at_once_and_a_seventeenth_queues() {
    let dir = tree();
    for i in 0..16 {
        mkfifo(&dir.path().join(format!("fifo-{i}")));
    }
    let c = Arc::new(connect(&SERVER, dir.path(), &["--config", SAMPLING, "--no-spill"]).await);
    let mut blocked = Vec::new();
    for i in 0..16 {
        let c = c.clone();
        blocked.push(tokio::spawn(async move {
            mcp_call(
                &c,
                "grep",
                json!({"pattern": "needle", "path": format!("fifo-{i}")}),
            )
            .await
        }));
    }
    let pid = c.pid;
    wait_until("16 rg processes", Duration::from_secs(20), || {
        descendants(pid)
            .iter()
            .filter(|(_, comm)| comm == "rg")
            .count()
            == 16
    });
    let queued = {
        let c = c.clone();
        tokio::spawn(async move { mcp_call(&c, "grep", json!({"pattern": "needle"})).await })
    };
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(
        !queued.is_finished(),
        "the 17th call ran while 16 were in flight"
    );
    // Release the FIFOs: each rg reads one line and ends.
    for i in 0..16 {
        let path = dir.path().join(format!("fifo-{i}"));
        tokio::task::spawn_blocking(move || {
            let mut fifo = std::fs::OpenOptions::new().write(true).open(path).unwrap();
            fifo.write_all(b"needle in a fifo\n").unwrap();
        })
        .await
        .unwrap();
    }
    for (i, call) in blocked.into_iter().enumerate() {
        let result = call.await.unwrap();
        assert_eq!(
            text_of(&result),
            format!("Found 1 match\n\nfifo-{i}\nLine 1: needle in a fifo")
        );
    }
    let result = queued.await.unwrap();
    assert!(text_of(&result).starts_with("Found 3 matches"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_kills_rg_and_progress_came_while_it_ran() {
    let dir = tree();
    mkfifo(&dir.path().join("fifo"));
    let record = dir.path().join("rec.jsonl");
    let c = connect(
        &SERVER,
        dir.path(),
        &["--config", SAMPLING, "--record", root(&record)],
    )
    .await;
    cancel_a_call_blocked_on_the_fifo(c.service.peer(), &c.client, c.pid).await;
    // The connection goes on, and the cancelled call was not recorded.
    let ok = mcp_call(&c, "glob", json!({"pattern": "*.ts"})).await;
    assert_eq!(ok["isError"], false);
    let recorded = std::fs::read_to_string(&record).unwrap();
    assert!(!recorded.contains("fifo"), "{recorded}");
    assert!(recorded.contains("\"tool\":\"glob\""));
    c.service.cancel().await.unwrap();
}

/// A raw client whose one call (id 1) has rg blocked on a FIFO; the
/// processes of the call (bash, rg).
fn raw_blocked_on_fifo(dir: &Path) -> (Raw, Vec<i32>) {
    mkfifo(&dir.join("fifo"));
    let mut raw = Raw::spawn(&SERVER, dir, &["--config", SAMPLING]);
    raw.initialize();
    raw.send_json(
        json!({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{
        "name":"grep","arguments":{"pattern":"x","path":"fifo"}}}),
    );
    let pid = raw.pid();
    wait_until("rg on the FIFO", Duration::from_secs(20), || {
        rg_running_under(pid)
    });
    let call_processes = descendants(pid).iter().map(|(p, _)| *p).collect();
    (raw, call_processes)
}

#[test]
fn stdin_eof_mid_call_kills_rg_and_exits_0() {
    let dir = tree();
    let (mut raw, call_processes) = raw_blocked_on_fifo(dir.path());
    raw.close_stdin();
    let status = raw.wait_exit(Duration::from_secs(10));
    assert_eq!(status.code(), Some(0));
    assert!(all_gone(&call_processes));
    // Whatever came on stdout is JSON-RPC; the aborted call was answered.
    let mut aborted = None;
    while let Some(line) = raw.next_line(Duration::from_secs(2)) {
        let message: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(message["jsonrpc"], "2.0");
        if message["id"] == 1 {
            aborted = Some(message);
        }
    }
    let aborted = aborted.expect("the call in flight got no answer");
    assert_eq!(aborted["result"]["isError"], true, "{aborted}");
}

#[test]
fn sigterm_and_sigint_mid_call_kill_rg_and_exit_128_plus_the_signal() {
    for (signal, code) in [("-TERM", 143), ("-INT", 130)] {
        let dir = tree();
        let (mut raw, call_processes) = raw_blocked_on_fifo(dir.path());
        let status = Command::new("kill")
            .args([signal, &raw.pid().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let status = raw.wait_exit(Duration::from_secs(10));
        assert_eq!(status.code(), Some(code), "{signal}");
        assert!(all_gone(&call_processes), "{signal}");
    }
}

#[test]
fn the_log_names_the_executor_and_the_rg_version_and_path_at_start() {
    let dir = tree();
    let state = tempfile::tempdir().unwrap();
    let status = SERVER
        .command(dir.path(), state.path(), &["--config", SAMPLING])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let log = logs_in(state.path());
    let starting = log
        .lines()
        .find(|l| l.contains("workbench mcp starting"))
        .expect("a start line");
    let version =
        String::from_utf8(Command::new("rg").arg("--version").output().unwrap().stdout).unwrap();
    let path = String::from_utf8(
        Command::new("bash")
            .args(["-c", "command -v rg"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    assert!(
        starting.contains(&format!("rg={}", version.lines().next().unwrap()))
            && starting.contains(&format!("rg_path={}", path.trim_end()))
            && starting.contains("executor=local"),
        "{starting}"
    );
}

#[test]
fn a_malformed_line_gets_a_parse_error_and_the_server_keeps_serving() {
    let dir = tree();
    let mut raw = Raw::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    raw.initialize();
    raw.send(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\n");
    let error = raw.next();
    assert_eq!(
        error,
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
    );
    // A request with malformed params keeps its id.
    raw.send_json(json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":7}}));
    let invalid = raw.response(2);
    assert_eq!(invalid["error"]["code"], -32602);
    // Over 8 MiB: refused while it is skipped, never buffered whole.
    let before = peak_rss_kib(raw.pid());
    let mut huge = vec![b' '; 32 * 1024 * 1024];
    huge.push(b'\n');
    raw.send(&huge);
    let refused = raw.next();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let grown = peak_rss_kib(raw.pid()) - before;
    assert!(
        grown < 16 * 1024,
        "the server grew by {grown} KiB on a 32 MiB line"
    );
    raw.send_json(
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{
        "name":"glob","arguments":{"pattern":"*.ts"}}}),
    );
    let answer = raw.response(3);
    assert_eq!(answer["result"]["isError"], false);
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("src/alpha.ts")
    );
}

/// `VmRSS` of process `pid`, in KiB.
fn rss_kib(pid: i32) -> i64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_client_that_floods_requests_without_reading_answers_leaves_memory_bounded_and_loses_nothing() {
    const REQUESTS: usize = 10_000;
    let dir = tree();
    let state = tempfile::tempdir().unwrap();
    let mut child = SERVER
        .command(dir.path(), state.path(), &["--config", SAMPLING])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = i32::try_from(child.id()).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let init = json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}});
    writeln!(stdin, "{init}").unwrap();
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    writeln!(
        stdin,
        "{}",
        json!({"jsonrpc":"2.0","method":"notifications/initialized"})
    )
    .unwrap();
    let before = rss_kib(pid);
    // tools/list answers are the largest (~7 KB each): 10,000 of them
    // unread used to be ~70 MiB queued in the server.
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let writer = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            for id in 1..=REQUESTS {
                let request = json!({"jsonrpc":"2.0","id":id,"method":"tools/list"});
                if writeln!(stdin, "{request}").is_err() {
                    break;
                }
                sent.store(id, std::sync::atomic::Ordering::Relaxed);
            }
            drop(stdin);
        })
    };
    // Until the writer is held back (or done): no progress for 1 s.
    let mut last = usize::MAX;
    loop {
        std::thread::sleep(Duration::from_millis(1000));
        let now = sent.load(std::sync::atomic::Ordering::Relaxed);
        if now == last || now == REQUESTS {
            break;
        }
        last = now;
    }
    let grown = peak_rss_kib(pid) - before;
    let held_back = sent.load(std::sync::atomic::Ordering::Relaxed);
    eprintln!("peak RSS grew by {grown} KiB; {held_back} of {REQUESTS} requests sent");
    assert!(
        grown < 8 * 1024,
        "the server grew by {grown} KiB with {held_back} requests sent and no answer read (RSS {} KiB)",
        rss_kib(pid)
    );
    assert!(
        held_back < REQUESTS,
        "the server read every request unanswered"
    );
    // Nothing is lost: every request is answered once the client reads.
    let mut answered = std::collections::HashSet::new();
    for line in stdout.lines() {
        let message: Value = serde_json::from_str(&line.unwrap()).unwrap();
        assert!(message["result"]["tools"].is_array(), "{message}");
        answered.insert(message["id"].as_u64().unwrap());
    }
    writer.join().unwrap();
    assert_eq!(answered.len(), REQUESTS);
    assert!(child.wait().unwrap().success());
}

#[test]
fn a_call_before_initialize_gets_invalid_request_and_initialize_still_works() {
    let dir = tree();
    let mut raw = Raw::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    raw.send_json(json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":"glob","arguments":{"pattern":"*.ts"}}}));
    let refused = raw.response(1);
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert!(refused.get("result").is_none(), "{refused}");
    raw.initialize();
    raw.send_json(json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"glob","arguments":{"pattern":"*.ts"}}}));
    assert_eq!(raw.response(2)["result"]["isError"], false);
}

#[test]
fn a_request_whose_id_is_null_fractional_an_object_or_2_pow_80_gets_invalid_request_with_id_null() {
    let dir = tree();
    let mut raw = Raw::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    raw.initialize();
    for id in ["null", "1.5", "{\"a\":1}", "1208925819614629174706176"] {
        raw.send(
            format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"tools/list\"}}\n").as_bytes(),
        );
        let answer = raw.next();
        assert_eq!(answer["id"], Value::Null, "id {id}: {answer}");
        assert_eq!(answer["error"]["code"], -32600, "id {id}: {answer}");
    }
    // And the server serves on.
    raw.send_json(json!({"jsonrpc":"2.0","id":9,"method":"ping"}));
    assert_eq!(raw.response(9)["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rg_missing_lists_no_tools_and_logs_the_load_warning() {
    let dir = tree();
    let bin = tempfile::tempdir().unwrap();
    let bash = ["/usr/bin/bash", "/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .unwrap();
    std::os::unix::fs::symlink(bash, bin.path().join("bash")).unwrap();
    let c = connect_with(
        &SERVER,
        dir.path(),
        &["--config", SAMPLING],
        Client::default(),
        Some(bin.path()),
    )
    .await;
    let info = c.service.peer().peer_info().unwrap();
    assert_eq!(info.instructions.as_deref(), Some(""));
    let tools = c.service.peer().list_tools(None).await.unwrap();
    assert!(tools.tools.is_empty());
    let logs = c.client.logs.clone();
    wait_until("the load warning", Duration::from_secs(10), || {
        !logs.lock().unwrap().is_empty()
    });
    let log = logs.lock().unwrap()[0].clone();
    assert!(
        log.data
            .as_str()
            .unwrap()
            .contains("ripgrep (rg) not found on the bash executor PATH"),
        "{log:?}"
    );
    c.service.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recording_replays_against_the_live_workdir() {
    let dir = tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("session.jsonl");
    record_session(&SERVER, dir.path(), &record).await;
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("{\"call\":").count(), 4, "{text}");
    assert!(text.contains("<SPILL>/session-"), "{text}");
    assert_eq!(replays_without_a_diff(&record), 4);
    // A second server appends to the same recording.
    record_session(&SERVER, dir.path(), &record).await;
    assert_eq!(replays_without_a_diff(&record), 8);
}

/// The hostile corpus of `hardening`, through the server: a lone
/// surrogate in a pattern, arguments nested 9,999 levels deep in an
/// ignored key, and a config number JavaScript prints in exponent form.
#[test]
fn hostile_arguments_and_numbers_get_what_javascript_would_give_them() {
    let dir = tree();
    std::fs::write(dir.path().join("odd.txt"), "before \u{fffd} after\n").unwrap();
    let mut raw = Raw::spawn(&SERVER, dir.path(), &["--config", SAMPLING]);
    raw.initialize();
    raw.send(
        br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"\ud800"}}}
"#,
    );
    let answer = raw.response(1);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    let found = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(found.contains("before \u{fffd} after"), "{found}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"grep","arguments":{{"pattern":"alpha","x":{}{}}}}}}}"#,
        "[".repeat(9_996),
        "]".repeat(9_996)
    );
    raw.send(format!("{deep}\n").as_bytes());
    let answer = raw.response(2);
    assert_eq!(answer["result"]["isError"], false, "{answer}");
    assert!(
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("notes.md")
    );
    drop(raw);
    let huge = r#"{"sampleOverCapGlobResults":true,"globMaxResults":1e308,"grepMaxMatches":1e20}"#;
    let mut raw = Raw::spawn(&SERVER, dir.path(), &["--config", huge]);
    raw.initialize();
    raw.send_json(json!({"jsonrpc":"2.0","id":3,"method":"tools/list"}));
    let tools = raw.response(3);
    let tools = tools["result"]["tools"].as_array().unwrap();
    let description = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["description"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(description("glob").contains(" Up to 1e+308 paths come back"));
    assert!(description("grep").contains("Returns the first 100000000000000000000 matches inline"));
}

/// The server's process entry, as `workbench mcp` runs it: a bad
/// `--workdir` is named before any shell is spawned (exit 2), a flag it
/// does not know is a usage error naming `workbench mcp` (exit 2), and a
/// setup failure is said once as `workbench mcp: …` (exit 2).
#[test]
fn a_bad_workdir_a_bad_flag_and_a_setup_failure_exit_2_saying_why() {
    let dir = tree();
    let missing = dir.path().join("missing");
    let state = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        SERVER
            .bare_command(state.path(), args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["--workdir", root(&missing), "--config", SAMPLING]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "workbench: --workdir {}: no such file or directory\n",
            root(&missing)
        )
    );
    let out = run(&["--workdir", root(dir.path()), "--no-such-flag"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("--no-such-flag"), "{stderr}");
    assert!(stderr.contains("Usage: workbench mcp"), "{stderr}");
    let out = run(&["--workdir", root(dir.path()), "--config", "{not json"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("workbench mcp: "), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(out.stdout.is_empty(), "{out:?}");
}
