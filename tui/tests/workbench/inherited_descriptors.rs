//! A workbench started holding descriptors (an outside directory on 7, a
//! pipe on 250, as `exec 7</outside 250<>FIFO` in a shell leaves them)
//! lends none of them to a command: through `/proc/self/fd/7` a grep or a
//! glob finds nothing of the outside canary, and `/proc/self/fd/250` is
//! missing rather than a pipe that blocks rg; under the local executor,
//! the sandbox, over ssh (the test sshd), and over `mcp --listen`.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use fs_search_test_support::mcp::http::{
    Killed, address_on_listening_line, answer_of, post, raw_session,
};
use fs_search_test_support::mcp::{mkfifo, tree};
use fs_search_test_support::sshd::{HOST, TestSshd};
use serde_json::{Value, json};

use crate::cli_headless::{SAMPLING, root};
use crate::mcp::sorted_rg_config;

const CANARY: &str = "CANARY-OUTSIDE-THE-WORKSPACE";

/// The outside directory (its `secret.txt` holds the canary) and a FIFO.
struct Held {
    dir: tempfile::TempDir,
}

impl Held {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        std::fs::write(dir.path().join("outside/secret.txt"), format!("{CANARY}\n")).unwrap();
        mkfifo(&dir.path().join("fifo"));
        Self { dir }
    }

    /// `bash -c 'exec 7<OUTSIDE 250<>FIFO; exec workbench ARGS…'`.
    fn workbench(&self, args: &[&str]) -> Command {
        let mut command = Command::new("bash");
        command
            .args(["-c", r#"exec 7<"$1" 250<>"$2"; shift 2; exec "$@""#, "bash"])
            .arg(self.dir.path().join("outside"))
            .arg(self.dir.path().join("fifo"))
            .arg(env!("CARGO_BIN_EXE_workbench"))
            .args(args)
            .env("RIPGREP_CONFIG_PATH", sorted_rg_config());
        command
    }
}

/// The calls that would read through the held descriptors.
fn probes() -> [(&'static str, Value); 3] {
    [
        (
            "grep",
            json!({"pattern": "CANARY", "path": "/proc/self/fd/7/secret.txt"}),
        ),
        ("glob", json!({"pattern": "*", "path": "/proc/self/fd/7"})),
        ("grep", json!({"pattern": "x", "path": "/proc/self/fd/250"})),
    ]
}

/// Neither the canary nor a match nor the outside file's name (a glob
/// names no path it was given), and no timeout (a pipe rg waits on).
fn assert_nothing_through(text: &str, what: &str) {
    assert!(!text.contains(CANARY), "{what}: {text}");
    assert!(!text.starts_with("Found"), "{what}: {text}");
    if what.contains("glob") {
        assert!(!text.contains("secret.txt"), "{what}: {text}");
    }
    assert!(!text.contains("timed out"), "{what}: {text}");
}

fn call_holding(held: &Held, workdir: &Path, extra: &[&str], sshd: Option<&TestSshd>) {
    for (tool, args) in probes() {
        let args = args.to_string();
        let mut command = held.workbench(
            &[
                &["call", tool, "--workdir", root(workdir), "--args", &args],
                &["--config", SAMPLING, "--no-spill"][..],
                extra,
            ]
            .concat(),
        );
        if let Some(sshd) = sshd {
            command.env("WORKBENCH_SSH_CONFIG", sshd.client_config());
        }
        let out: Output = command.output().unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_nothing_through(&said, &format!("{extra:?} {tool} {args}"));
        if tool == "grep" {
            assert!(said.contains("No such file"), "{extra:?} {args}: {said}");
        }
    }
}

#[test]
fn a_call_started_holding_descriptors_reads_nothing_through_them_locally_or_in_the_sandbox() {
    let held = Held::new();
    let workspace = tree();
    call_holding(&held, workspace.path(), &[], None);
    call_holding(&held, workspace.path(), &["--sandbox=bwrap"], None);
    call_holding(&held, workspace.path(), &["--sandbox=landlock"], None);
}

/// The descriptor numbers a `glob` of `**/fdinfo/*` under `path` lists.
fn listed_descriptors(held: &Held, workdir: &Path, path: &str, extra: &[&str]) -> Vec<u32> {
    let args = json!({"pattern": "**/fdinfo/*", "path": path}).to_string();
    let out = held
        .workbench(
            &[
                &["call", "glob", "--workdir", root(workdir), "--args", &args],
                &["--config", SAMPLING, "--no-spill"][..],
                extra,
            ]
            .concat(),
        )
        .output()
        .unwrap();
    let page = String::from_utf8_lossy(&out.stdout);
    page.lines()
        .filter_map(|line| line.rsplit_once("/fdinfo/"))
        .map(|(_, fd)| fd.parse().unwrap_or_else(|_| panic!("{page}")))
        .collect()
}

/// What a model can list of the processes it runs among: under bubblewrap
/// every process of the sandbox (its `/proc` is the sandbox's own: the
/// init, the agent, rg), locally rg's own `/proc/self`. Each holds 0–2
/// and its own plumbing (bubblewrap's eventfd, the agent's saved stderr,
/// the directories rg's walk has open), never a descriptor the workbench
/// was started holding: the pipe on 250 would be listed as 250. Landlock
/// grants no `/proc` at all.
#[test]
fn a_glob_of_proc_lists_no_descriptor_the_workbench_was_started_holding() {
    let held = Held::new();
    let workspace = tree();
    for (path, extra) in [("/proc/self", &[][..]), ("/proc", &["--sandbox=bwrap"][..])] {
        let listed = listed_descriptors(&held, workspace.path(), path, extra);
        assert!(
            listed.contains(&0) && listed.contains(&2),
            "{extra:?}: {listed:?}"
        );
        assert!(
            listed.iter().all(|&fd| fd < 100),
            "{extra:?}: an inherited descriptor is listed: {listed:?}"
        );
    }
    let under_landlock =
        listed_descriptors(&held, workspace.path(), "/proc", &["--sandbox=landlock"]);
    assert_eq!(under_landlock, Vec::<u32>::new());
}

#[test]
fn a_call_started_holding_descriptors_reads_nothing_through_them_over_ssh() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let held = Held::new();
    let workspace = tree();
    let executor = format!("ssh://{HOST}");
    call_holding(
        &held,
        workspace.path(),
        &["--executor", &executor],
        Some(&sshd),
    );
}

/// The text of one `tools/call` in a new raw session.
fn http_call(addr: &str, tool: &str, args: Value) -> String {
    let session = raw_session(addr, &[]);
    let body = json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
        "params":{"name":tool,"arguments":args}});
    let reply = post(
        addr,
        &[
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ],
        &body,
    );
    let answer = answer_of(&reply);
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {answer}"))
        .to_owned()
}

#[test]
fn an_mcp_server_started_holding_descriptors_lends_none_to_a_call_over_http() {
    let held = Held::new();
    let workspace = tree();
    let state = tempfile::tempdir().unwrap();
    for sandbox in [&[][..], &["--sandbox"][..]] {
        let mut child = held
            .workbench(
                &[
                    &["mcp", "--workdir", root(workspace.path())],
                    &[
                        "--listen",
                        "127.0.0.1:0",
                        "--config",
                        SAMPLING,
                        "--no-spill",
                    ][..],
                    sandbox,
                ]
                .concat(),
            )
            .env("XDG_STATE_HOME", state.path())
            .env("TMPDIR", state.path())
            .env_remove("WORKBENCH_MCP_TOKEN")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let addr = address_on_listening_line(&mut child);
        let _server = Killed(child);
        for (tool, args) in probes() {
            let what = format!("{sandbox:?} {tool} {args}");
            assert_nothing_through(&http_call(&addr, tool, args), &what);
        }
    }
}
