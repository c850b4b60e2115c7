//! The host lens picked by the MCP client: the
//! real `workbench mcp --record` over stdio records each call's
//! `clientInfo` in both protocol eras (2025 `initialize`, 2026-07-28
//! per-request `_meta`); `replay --host auto` lenses each record with its
//! client's host; `ablate --host` says per variant what a host cuts. Real
//! bash and rg on temp trees, rg's file order pinned (the server gets the
//! sorted rg config; `workbench record` pins `--sort=path` in its header).

use std::path::Path;

use fs_search_test_support::mcp::raw::Raw;
use fs_search_test_support::mcp::{SAMPLING, root};
use fs_search_transcript::ClientInfo;
use serde_json::{Value, json};

use crate::lens::{record, wide_tree};
use crate::mcp::{SERVER, workbench};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CAPS: &str = "io.modelcontextprotocol/clientCapabilities";
const INFO: &str = "io.modelcontextprotocol/clientInfo";

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The recording's records' clients, in order.
fn clients(record: &Path) -> Vec<Option<ClientInfo>> {
    let text = std::fs::read_to_string(record).unwrap();
    fs_search_transcript::parse("rec", &text)
        .unwrap()
        .records
        .into_iter()
        .map(|r| r.call.options.client)
        .collect()
}

fn client(name: &str, version: &str) -> Option<ClientInfo> {
    Some(ClientInfo {
        name: name.to_owned(),
        version: Some(version.to_owned()),
    })
}

/// A 2025 session of the client `name`/`version` on a server recording to
/// `record`: it greps `pattern` once.
fn session_2025(dir: &Path, record: &Path, name: &str, version: &str, pattern: &str) {
    let mut raw = Raw::spawn(
        &SERVER,
        dir,
        &["--config", SAMPLING, "--no-spill", "--record", root(record)],
    );
    raw.send_json(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": name, "version": version}}}),
    );
    assert_eq!(raw.response(0)["result"]["protocolVersion"], "2025-06-18");
    raw.send_json(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    raw.send_json(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "grep", "arguments": {"pattern": pattern}}}));
    let reply = raw.response(1);
    assert_eq!(reply["result"]["isError"], false, "{reply}");
    raw.hang_up(std::time::Duration::from_secs(60));
}

/// Stateless 2026-07-28 grep calls on one stdio server recording to
/// `record`, each request naming its own client in `_meta` (`None`: a
/// request without `clientInfo`).
fn calls_2026(dir: &Path, record: &Path, calls: &[(Option<(&str, &str)>, &str)]) {
    let mut raw = Raw::spawn(
        &SERVER,
        dir,
        &["--config", SAMPLING, "--no-spill", "--record", root(record)],
    );
    for (id, (client, pattern)) in (1..).zip(calls) {
        let mut meta = json!({PV: "2026-07-28", CAPS: {}});
        if let Some((name, version)) = client {
            meta[INFO] = json!({"name": name, "version": version});
        }
        raw.send_json(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "grep", "arguments": {"pattern": pattern}, "_meta": meta}}));
        let reply = raw.response(id);
        assert_eq!(reply["result"]["isError"], false, "{reply}");
    }
    raw.hang_up(std::time::Duration::from_secs(60));
}

#[test]
fn a_2025_session_s_client_info_is_recorded_with_each_of_its_calls() {
    let dir = wide_tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("rec.jsonl");
    session_2025(dir.path(), &record, "codex-mcp-client", "0.120.0", "hit");
    session_2025(dir.path(), &record, "opencode", "1.1.4", "nothing-here");
    assert_eq!(
        clients(&record),
        [
            client("codex-mcp-client", "0.120.0"),
            client("opencode", "1.1.4")
        ]
    );
    let text = std::fs::read_to_string(&record).unwrap();
    assert!(
        text.contains(r#""client":{"name":"codex-mcp-client","version":"0.120.0"}"#),
        "{text}"
    );
    // The client changes nothing a replay compares.
    let replay = workbench(&["replay", root(&record)]);
    assert_eq!(
        replay.status.code(),
        Some(0),
        "{}{}",
        stdout(&replay),
        stderr(&replay)
    );
}

#[test]
fn a_2026_request_s_client_info_is_recorded_with_its_call_and_none_without_one() {
    let dir = wide_tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("rec.jsonl");
    calls_2026(
        dir.path(),
        &record,
        &[
            (Some(("gemini-cli-mcp-client", "0.50.0")), "hit"),
            (Some(("qwen-code-mcp-client", "0.0.1")), "hit"),
            (None, "hit"),
        ],
    );
    assert_eq!(
        clients(&record),
        [
            client("gemini-cli-mcp-client", "0.50.0"),
            client("qwen-code-mcp-client", "0.0.1"),
            None
        ]
    );
    let text = std::fs::read_to_string(&record).unwrap();
    assert_eq!(text.matches("\"client\":").count(), 2, "{text}");
}

#[test]
fn replay_host_auto_lenses_each_record_with_its_client_s_host() {
    let dir = wide_tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("rec.jsonl");
    session_2025(dir.path(), &record, "codex-mcp-client", "0.57.0", "hit");
    calls_2026(
        dir.path(),
        &record,
        &[
            (Some(("opencode", "1.1.4")), "hit"),
            (Some(("raw", "1")), "hit"),
            (None, "hit"),
            (Some(("gemini-cli-mcp-client", "0.50.0")), "nothing-here"),
        ],
    );
    let replay = workbench(&["replay", root(&record), "--host", "auto"]);
    assert_eq!(replay.status.code(), Some(0), "{}", stderr(&replay));
    let text = stdout(&replay);
    let cuts: Vec<&str> = text.lines().filter(|l| l.starts_with("CUT ")).collect();
    assert_eq!(cuts.len(), 2, "{text}");
    // The client's version picks the Codex era it falls in.
    assert!(
        cuts[0].contains(
            "record \"call-1-grep\" (client codex-mcp-client 0.57.0): codex@0.56 removes"
        ),
        "{text}"
    );
    assert!(
        cuts[1]
            .contains("record \"call-2-grep\" (client opencode 1.1.4): opencode@current removes"),
        "{text}"
    );
    // Gemini CLI's page is whole; the clients no lens is known for are named.
    assert!(
        stderr(&replay).contains("2 of 5 records name no client a lens is known for"),
        "{}",
        stderr(&replay)
    );
    let gate = workbench(&["replay", root(&record), "--host", "auto", "--fail-on-cut"]);
    assert_eq!(gate.status.code(), Some(1));
    // An explicit host still lenses every record, the client aside.
    let one = workbench(&["replay", root(&record), "--host", "gemini-cli"]);
    let one_text = stdout(&one);
    assert_eq!(
        one_text.lines().filter(|l| l.starts_with("CUT ")).count(),
        4,
        "{one_text}"
    );
    assert!(!one_text.contains("(client "), "{one_text}");
}

#[test]
fn replay_host_auto_on_a_recording_without_clients_checks_nothing_and_passes() {
    let dir = wide_tree();
    let out = tempfile::tempdir().unwrap();
    let record = out.path().join("rec.jsonl");
    calls_2026(dir.path(), &record, &[(None, "hit")]);
    let gate = workbench(&["replay", root(&record), "--host", "auto", "--fail-on-cut"]);
    assert_eq!(gate.status.code(), Some(0), "{}", stdout(&gate));
    assert!(!stdout(&gate).contains("CUT "));
    assert!(stderr(&gate).contains("1 of 1 records name no client"));
}

#[test]
fn ablate_host_names_the_variants_whose_pages_the_host_cuts() {
    let tree = wide_tree();
    let out = tempfile::tempdir().unwrap();
    let transcript = out.path().join("wide.jsonl");
    record(tree.path(), "hit", &transcript);
    let ablate = |extra: &[&str]| {
        let mut args = vec![
            "ablate",
            root(&transcript),
            "--set",
            "grepMaxMatches=250,20",
            "--host",
            "opencode",
        ];
        args.extend_from_slice(extra);
        workbench(&args)
    };
    let json_out = ablate(&["--json"]);
    assert_eq!(json_out.status.code(), Some(0), "{}", stderr(&json_out));
    let object: Value = serde_json::from_str(&stdout(&json_out)).unwrap();
    let host = &object["host"];
    assert_eq!(host["host"], "opencode");
    assert_eq!(host["version"], "current");
    let variants = host["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 3);
    // The baseline (250 matches) and variant 1 (250): the page is over
    // opencode's 50 KiB, its head kept: matches and the locator lost.
    for variant in &variants[..2] {
        assert_eq!(variant["calls"], 1, "{variant}");
        assert_eq!(variant["callsCut"], 1, "{variant}");
        assert_eq!(variant["locatorsRemoved"], 1, "{variant}");
        let hidden = variant["matchesHidden"].as_u64().unwrap();
        assert!(hidden > 0 && hidden < 250, "{variant}");
        let cut = &variant["cut"][0];
        assert_eq!(cut["record"], "wide");
        assert_eq!(cut["cut"], "head");
        assert_eq!(cut["footerVisible"], false);
        assert_eq!(cut["matchesUnseen"], variant["matchesHidden"]);
    }
    assert_eq!(variants[1]["overrides"], json!({"grepMaxMatches": 250}));
    // Variant 2 (20 matches): a page opencode keeps whole.
    let small = &variants[2];
    assert_eq!(small["overrides"], json!({"grepMaxMatches": 20}));
    assert_eq!(
        (
            &small["callsCut"],
            &small["matchesHidden"],
            &small["locatorsRemoved"]
        ),
        (&json!(0), &json!(0), &json!(0))
    );
    assert_eq!(small["cut"], json!([]));
    // The text report: the table, then the host's section.
    let text_out = ablate(&[]);
    assert_eq!(text_out.status.code(), Some(0), "{}", stderr(&text_out));
    let text = stdout(&text_out);
    let section = text
        .split_once("\nHost opencode@current (its default knobs)")
        .unwrap_or_else(|| panic!("{text}"))
        .1;
    let hidden = variants[0]["matchesHidden"].as_u64().unwrap();
    assert!(
        section.contains(&format!("| baseline | 1 | 1 | {hidden} | 1 |")),
        "{section}"
    );
    assert!(section.contains("| 2 | 1 | 0 | 0 | 0 |"), "{section}");
    assert!(section.contains("\nCut in variant 1:\n- "), "{section}");
    assert!(!section.contains("Cut in variant 2:"), "{section}");
    assert!(
        section.contains("record \"wide\": opencode@current removes"),
        "{section}"
    );
}

#[test]
fn ablate_refuses_an_unknown_host_and_csv_with_a_host() {
    let tree = wide_tree();
    let out = tempfile::tempdir().unwrap();
    let transcript = out.path().join("wide.jsonl");
    record(tree.path(), "hit", &transcript);
    let unknown = workbench(&[
        "ablate",
        root(&transcript),
        "--set",
        "grepMaxMatches=20",
        "--host",
        "cursor",
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(
        stderr(&unknown).contains("--host: unknown host \"cursor\""),
        "{}",
        stderr(&unknown)
    );
    let csv = workbench(&[
        "ablate",
        root(&transcript),
        "--set",
        "grepMaxMatches=20",
        "--host",
        "codex",
        "--csv",
    ]);
    assert_eq!(csv.status.code(), Some(2));
}
