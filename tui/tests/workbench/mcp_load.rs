//! `mcp --listen --sandbox` under a burst: 16 sessions × 16 calls, each a
//! grep of a FIFO in the workspace (rg blocks on it until a writer comes),
//! against the real server with `--max-sandboxes 4`. No more sandboxes
//! than the bound ever run at once, every call is answered once the FIFO
//! is fed, and the server's memory comes back to within twice its idle
//! level. Here, not with the server's other tests in `mcp/tests`: the
//! bound is on `workbench mcp`, the server users start (the standalone
//! `workbench-mcp` maps less code, so the same kept bytes are a larger
//! share of its idle level: docs/mcp.md).

use std::io::Write;
use std::net::TcpStream;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use fs_search_test_support::mcp::http::{
    Killed, address_on_listening_line, answer_of, raw_session, read_reply, request_bytes,
};
use fs_search_test_support::mcp::{SAMPLING, mkfifo, tree, wait_until};
use serde_json::json;

use crate::mcp::SERVER;

const BOUND: usize = 4;
const SESSIONS: usize = 16;
const CALLS: usize = 16;

/// The live children of `pid` named `comm` (a sandbox is one `bwrap`
/// child of the server: its agent's; a zombie is not counted).
fn live_children(pid: u32, comm: &str) -> usize {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0;
    };
    tasks
        .flatten()
        .flat_map(|task| {
            let children =
                std::fs::read_to_string(task.path().join("children")).unwrap_or_default();
            children
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|child| {
            let named = std::fs::read_to_string(format!("/proc/{child}/comm"))
                .is_ok_and(|c| c.trim_end() == comm);
            let live = std::fs::read_to_string(format!("/proc/{child}/stat")).is_ok_and(|stat| {
                stat.rsplit_once(')')
                    .is_some_and(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
            });
            named && live
        })
        .count()
}

/// The resident set of `pid`, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap()
}

/// Sends a grep `tools/call` with JSON-RPC id `id` in `session`, its
/// answer left unread.
fn start_call(addr: &str, session: &str, id: usize, args: serde_json::Value) -> TcpStream {
    let body = json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
        "params":{"name":"grep","arguments":args}});
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    stream
        .write_all(&request_bytes(
            addr,
            "POST",
            &[
                ("Mcp-Session-Id", session),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            body.to_string().as_bytes(),
        ))
        .unwrap();
    stream
}

#[test]
fn over_http_16_sessions_of_16_blocked_calls_never_run_more_sandboxes_than_the_bound() {
    let dir = tree();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let state = tempfile::tempdir().unwrap();
    let bound = BOUND.to_string();
    let mut child = SERVER
        .command(
            dir.path(),
            state.path(),
            &[
                "--listen",
                "127.0.0.1:0",
                "--config",
                SAMPLING,
                "--no-spill",
                "--sandbox",
                "--max-sandboxes",
                &bound,
            ],
        )
        .env_remove("WORKBENCH_MCP_TOKEN")
        // 256 calls from one address connect at once: room for all of them
        // while they wait for the gate (the default keeps 64 per peer).
        .env("WORKBENCH_MCP_HTTP_LIMITS", "per_peer=512")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let addr = address_on_listening_line(&mut child);
    let server = Killed(child);
    let pid = server.0.id();

    // Idle: one session and one call served.
    let session = raw_session(&addr, &[]);
    let first = answer_of(&read_reply(start_call(
        &addr,
        &session,
        1,
        json!({"pattern": "needle"}),
    )));
    assert_eq!(first["result"]["isError"], false, "{first}");
    let idle = rss_kib(pid);

    // Sandboxes counted every few milliseconds through the burst.
    let most = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let (most, done) = (most.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                most.fetch_max(live_children(pid, "bwrap"), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(2));
            }
        })
    };
    let sessions: Vec<String> = (0..SESSIONS).map(|_| raw_session(&addr, &[])).collect();
    let calls: Vec<TcpStream> = sessions
        .iter()
        .flat_map(|session| {
            let addr = addr.as_str();
            (0..CALLS).map(move |id| {
                let args = json!({"pattern": "needle", "path": "fifo"});
                start_call(addr, session, id + 1, args)
            })
        })
        .collect();
    wait_until(
        "the bound's sandboxes busy",
        Duration::from_secs(30),
        || live_children(pid, "bwrap") == BOUND,
    );
    // Hold the burst a moment: the queued calls must not start sandboxes.
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(live_children(pid, "bwrap"), BOUND);

    // Feed the FIFO until every call is answered.
    let feeding = Arc::new(AtomicBool::new(true));
    let feeder = {
        let (feeding, fifo) = (feeding.clone(), fifo.clone());
        std::thread::spawn(move || {
            while feeding.load(Ordering::Relaxed) {
                // Read-write: the open never waits for a reader.
                if let Ok(mut pipe) = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .open(&fifo)
                {
                    let _ = pipe.write_all(b"needle in the fifo\n");
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
        })
    };
    let readers: Vec<_> = calls
        .into_iter()
        .map(|stream| std::thread::spawn(move || answer_of(&read_reply(stream))))
        .collect();
    for reader in readers {
        let answer = reader.join().unwrap();
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(!text.contains("timed out"), "{answer}");
        assert!(answer["result"].is_object(), "{answer}");
    }
    feeding.store(false, Ordering::Relaxed);
    feeder.join().unwrap();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let most = most.load(Ordering::Relaxed);
    assert!(
        most <= BOUND,
        "{most} sandboxes at once, over the bound of {BOUND}"
    );

    // After the burst the idle agents stay (at most the bound), and the
    // memory the burst took is given back but for what the allocator
    // keeps for reuse.
    let after = rss_kib(pid);
    println!("server RSS: idle {idle} KiB, after the burst {after} KiB, most sandboxes {most}");
    assert!(
        after <= 2 * idle,
        "idle {idle} KiB, after the burst {after} KiB"
    );
    drop(server);
}
