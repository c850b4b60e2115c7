//! `--executor ssh://…` end to end: the built `workbench` against a real
//! sshd on 127.0.0.1 (started by the test, skipped only when
//! `/usr/sbin/sshd` is missing): every fixture transcript replays without a
//! diff with rg run over ssh, `call` prints what a local call prints, and
//! an unreachable host exits 2 with ssh's reason, and a call ended by
//! SIGTERM of the workbench or by its MCP client hanging up leaves nothing
//! running on the host.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../../exec/src/test_sshd.rs"]
pub(crate) mod test_sshd;

use test_sshd::{HOST, TestSshd};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn workbench(args: &[&str], sshd: Option<&TestSshd>) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_workbench"));
    command.args(args).current_dir(repo());
    if let Some(sshd) = sshd {
        command.env("WORKBENCH_SSH_CONFIG", sshd.client_config());
    }
    command.output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn executor() -> String {
    format!("ssh://{HOST}")
}

#[test]
fn every_fixture_transcript_replays_without_a_diff_over_ssh() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let mut files: Vec<String> = std::fs::read_dir(repo().join("fixtures/transcripts"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .map(|p| {
            p.strip_prefix(repo())
                .unwrap()
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    files.sort();
    assert!(files.len() >= 9, "{files:?}");
    let executor = executor();
    let mut args = vec!["replay", "--executor", executor.as_str()];
    args.extend(files.iter().map(String::as_str));
    let out = workbench(&args, Some(&sshd));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    for file in &files {
        assert!(
            text(&out.stdout).contains(&format!("ok {file}: ")),
            "{file}"
        );
    }
}

#[test]
fn a_call_over_ssh_prints_what_a_local_call_prints() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    std::fs::create_dir(work.path().join("src")).unwrap();
    std::fs::write(
        work.path().join("src/a.rs"),
        "fn alpha() {}\nfn beta() {}\n",
    )
    .unwrap();
    std::fs::write(work.path().join("notes.md"), "alpha notes\n").unwrap();
    let workdir = work.path().to_str().unwrap();
    let config = r#"{"sampleOverCapGlobResults":true}"#;
    let executor = executor();
    // One matching file per call: rg's order across files is its threads'
    // (no sorted config reaches the host), the same within a file.
    for (tool, call_args) in [
        ("grep", r#"{"pattern":"fn alpha"}"#),
        ("glob", r#"{"pattern":"**/*.rs"}"#),
    ] {
        let local = [
            "call",
            tool,
            "--workdir",
            workdir,
            "--config",
            config,
            "--args",
            call_args,
            "--no-spill",
        ];
        let mut remote = local.to_vec();
        remote.extend(["--executor", executor.as_str()]);
        let (local, remote) = (workbench(&local, None), workbench(&remote, Some(&sshd)));
        assert_eq!(remote.status.code(), Some(0), "{}", text(&remote.stderr));
        assert_eq!(text(&remote.stdout), text(&local.stdout), "{tool}");
        assert!(
            text(&local.stdout).contains("src/a.rs"),
            "{}",
            text(&local.stdout)
        );
    }
}

#[test]
fn an_unreachable_host_exits_2_with_ssh_s_reason() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let executor = format!("ssh://127.0.0.1:{port}");
    let out = workbench(
        &[
            "call",
            "grep",
            "--workdir",
            "/srv/work",
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--args",
            r#"{"pattern":"x"}"#,
            "--executor",
            &executor,
        ],
        None,
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains(&format!(
            "the ssh executor cannot start: cannot reach {executor}: ssh: connect to host 127.0.0.1 port {port}: Connection refused"
        )),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(text(&out.stdout), "");
}

/// The processes of this machine (the test's host) whose working
/// directory is `dir`, with their names: what a call in `dir` runs there.
fn running_in(dir: &Path) -> Vec<(i32, String)> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let state = stat[stat.rfind(')')? + 2..].chars().next()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            (cwd == dir && state != 'Z').then(|| (pid, comm.trim().to_owned()))
        })
        .collect()
}

/// A workdir with a FIFO, on which rg blocks until the call is ended.
fn fifo_workdir() -> tempfile::TempDir {
    let work = tempfile::tempdir().unwrap();
    let status = Command::new("mkfifo")
        .arg(work.path().join("fifo"))
        .status()
        .unwrap();
    assert!(status.success());
    work
}

/// Runs `workbench ARGS` over ssh, waits until its rg runs on the host
/// in `work`, applies `end` to the child, and checks that it exits with
/// `code` and that nothing it ran is left on the host.
fn end_a_call_blocked_over_ssh(
    args: &[&str],
    work: &Path,
    stdin_lines: &[&str],
    end: impl FnOnce(&mut std::process::Child),
    code: i32,
) {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    // The master's control directory goes to TMPDIR: nothing may be left.
    let tmp = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .current_dir(repo())
        .env("WORKBENCH_SSH_CONFIG", sshd.client_config())
        .env("TMPDIR", tmp.path())
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let stdin = child.stdin.as_mut().unwrap();
        for line in stdin_lines {
            writeln!(stdin, "{line}").unwrap();
        }
        stdin.flush().unwrap();
    }
    let start = std::time::Instant::now();
    while !running_in(work).iter().any(|(_, name)| name == "rg") {
        if start.elapsed() > std::time::Duration::from_secs(30)
            || child.try_wait().unwrap().is_some()
        {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "no rg on the host in 30 s: {}{}",
                text(&out.stdout),
                text(&out.stderr)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    end(&mut child);
    let status = child.wait().unwrap();
    // Within the executor's grace, nothing of the call is left on the host.
    let mut left = running_in(work);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        left = running_in(work);
    }
    for (pid, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert_eq!(left, Vec::new());
    assert_eq!(status.code(), Some(code), "{status:?}");
    let files: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(files, Vec::<std::ffi::OsString>::new(), "left in TMPDIR");
}

#[test]
fn sigterm_of_a_call_over_ssh_leaves_nothing_running_on_the_host() {
    let work = fifo_workdir();
    let workdir = work.path().to_str().unwrap();
    let executor = executor();
    let args = [
        "call",
        "grep",
        "--workdir",
        workdir,
        "--config",
        r#"{"sampleOverCapGlobResults":true}"#,
        "--args",
        r#"{"pattern":"x","path":"fifo"}"#,
        "--executor",
        &executor,
    ];
    end_a_call_blocked_over_ssh(
        &args,
        work.path(),
        &[],
        |child| {
            let pid = child.id().to_string();
            assert!(
                Command::new("kill")
                    .args(["-TERM", &pid])
                    .status()
                    .unwrap()
                    .success()
            );
        },
        143,
    );
}

#[test]
fn an_mcp_client_that_hangs_up_over_ssh_leaves_nothing_running_on_the_host() {
    let work = fifo_workdir();
    let workdir = work.path().to_str().unwrap();
    let executor = executor();
    let args = [
        "mcp",
        "--workdir",
        workdir,
        "--config",
        r#"{"sampleOverCapGlobResults":true}"#,
        "--executor",
        &executor,
    ];
    let lines = [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"hangup","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"x","path":"fifo"}}}"#,
    ];
    // The client goes as hosts end stdio servers: its end of stdin closes.
    end_a_call_blocked_over_ssh(
        &args,
        work.path(),
        &lines,
        |child| drop(child.stdin.take()),
        0,
    );
}

#[test]
fn surface_json_over_ssh_names_the_executor_and_the_host_s_rg_not_this_machine_s() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    // This process's PATH finds a fake rg first; the host's sessions get
    // the test's own PATH (test_sshd.rs), and so the real rg.
    let fake = tempfile::tempdir().unwrap();
    let fake_rg = fake.path().join("rg");
    std::fs::write(&fake_rg, "#!/bin/sh\necho 'ripgrep 99.0.0'\n").unwrap();
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake_rg, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let path = format!(
        "{}:{}",
        fake.path().display(),
        std::env::var("PATH").unwrap()
    );
    let real = Command::new("rg").arg("--version").output().unwrap();
    let real_version = text(&real.stdout)
        .split_whitespace()
        .nth(1)
        .unwrap()
        .to_owned();
    let real_path = text(
        &Command::new("bash")
            .args(["-c", "command -v rg"])
            .output()
            .unwrap()
            .stdout,
    )
    .trim()
    .to_owned();
    let surface = |extra: &[&str]| {
        let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args([
                "surface",
                "--json",
                "--config",
                r#"{"sampleOverCapGlobResults":true}"#,
            ])
            .args(extra)
            .env("PATH", &path)
            .env("WORKBENCH_SSH_CONFIG", sshd.client_config())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
    };
    let executor = executor();
    let remote = surface(&["--executor", &executor]);
    assert_eq!(remote["executor"], executor.as_str());
    assert_eq!(remote["rg"]["version"], real_version.as_str());
    assert_eq!(remote["rg"]["path"], real_path.as_str());
    let local = surface(&[]);
    assert_eq!(local["executor"], "local");
    assert_eq!(local["rg"]["version"], "99.0.0");
}

/// The ssh processes of this machine whose command line names `dir` (the
/// control directory's parent): the master and any session over it.
fn ssh_naming(dir: &Path) -> Vec<(i32, String)> {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse::<i32>().ok()?;
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            let ssh = cmdline.starts_with("ssh ") || cmdline.contains("/ssh ");
            (ssh && cmdline.contains(&needle)).then(|| (pid, cmdline.chars().take(200).collect()))
        })
        .collect()
}

/// Starts `workbench call grep` over ssh on a FIFO in a process group of
/// its own, with its control directory under a TMPDIR of its own, waits
/// until rg runs on the host, applies `end` to the workbench's pid, and
/// checks that no ssh process naming that TMPDIR (the master above all)
/// is left within 10 s, and, when `unwinds` (the workbench got to close
/// it), no control directory either.
fn no_master_left_after(unwinds: bool, end: impl FnOnce(i32)) {
    use std::os::unix::process::CommandExt;
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = fifo_workdir();
    let tmp = tempfile::tempdir().unwrap();
    let executor = executor();
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args([
            "call",
            "grep",
            "--workdir",
            work.path().to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--args",
            r#"{"pattern":"x","path":"fifo"}"#,
            "--executor",
            &executor,
        ])
        .current_dir(repo())
        .env("WORKBENCH_SSH_CONFIG", sshd.client_config())
        .env("TMPDIR", tmp.path())
        .env_remove("XDG_RUNTIME_DIR")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while !running_in(work.path()).iter().any(|(_, name)| name == "rg") {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(30)
                && child.try_wait().unwrap().is_none(),
            "no rg on the host in 30 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert!(!ssh_naming(tmp.path()).is_empty(), "no master found");
    end(i32::try_from(child.id()).unwrap());
    let _ = child.wait();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut left = ssh_naming(tmp.path());
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(100));
        left = ssh_naming(tmp.path());
    }
    for (pid, _) in &left {
        let _ = Command::new("kill")
            .args(["-KILL", &pid.to_string()])
            .status();
    }
    assert_eq!(left, Vec::new());
    // What the call ran on the host is gone too.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let mut running = running_in(work.path());
    while !running.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
        running = running_in(work.path());
    }
    assert_eq!(running, Vec::new());
    if unwinds {
        let files: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(files, Vec::<std::ffi::OsString>::new(), "left in TMPDIR");
    }
}

/// Ctrl-C pressed twice, and again, while the workbench ends the call:
/// SIGINT to its whole group until it has exited, so that one lands
/// while it closes its master.
#[test]
fn sigints_to_the_workbench_s_group_mid_call_leave_no_ssh_master() {
    no_master_left_after(true, |pid| {
        let group = nix::unistd::Pid::from_raw(-pid);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline
            && nix::sys::signal::kill(group, nix::sys::signal::Signal::SIGINT).is_ok()
        {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    });
}

#[test]
fn sigkill_of_workbench_call_mid_call_leaves_no_ssh_master() {
    // Nothing of it runs to close the master: the master ends by itself
    // once its sessions' clients have gone with their pipes (its control
    // directory stays behind).
    no_master_left_after(false, |pid| {
        assert!(
            Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status()
                .unwrap()
                .success()
        );
    });
}

#[test]
fn a_missing_workdir_on_the_host_is_said_at_start_naming_host_and_directory() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let missing = work.path().join("missing");
    let executor = executor();
    let out = workbench(
        &[
            "call",
            "grep",
            "--workdir",
            missing.to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--args",
            r#"{"pattern":"x"}"#,
            "--executor",
            &executor,
        ],
        Some(&sshd),
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains(&format!(
            "the ssh executor cannot start: the working directory {} does not exist on {executor} (or is not a directory)",
            missing.display()
        )),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stderr).contains("ENOENT"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_sandboxed_remote_call_finds_nothing_outside_the_workdir_and_pages_inside_match_the_unconfined()
{
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let parent = tempfile::tempdir().unwrap();
    let work = parent.path().join("work");
    std::fs::create_dir_all(work.join("src")).unwrap();
    std::fs::write(work.join("src/a.rs"), "fn alpha() {}\nfn beta() {}\n").unwrap();
    std::fs::write(parent.path().join("canary.txt"), "CANARY alpha\n").unwrap();
    let workdir = work.to_str().unwrap();
    let canary = parent.path().join("canary.txt");
    let executor = executor();
    let call = |args: &str, sandbox: bool| {
        let mut argv = vec![
            "call",
            "grep",
            "--workdir",
            workdir,
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--args",
            args,
            "--no-spill",
            "--executor",
            &executor,
        ];
        if sandbox {
            argv.push("--sandbox");
        }
        workbench(&argv, Some(&sshd))
    };
    // Inside: the same page, byte for byte.
    for args in [r#"{"pattern":"fn alpha"}"#, r#"{"pattern":"nothing here"}"#] {
        let (open, confined) = (call(args, false), call(args, true));
        assert_eq!(
            confined.status.code(),
            Some(0),
            "{}",
            text(&confined.stderr)
        );
        assert_eq!(text(&confined.stdout), text(&open.stdout), "{args}");
    }
    // Outside: the canary is found unconfined, not in the sandbox.
    let outside = format!(
        r#"{{"pattern":"CANARY","path":{}}}"#,
        serde_json::to_string(canary.to_str().unwrap()).unwrap()
    );
    assert!(text(&call(&outside, false).stdout).contains("CANARY alpha"));
    let confined = call(&outside, true);
    assert!(
        !text(&confined.stdout).contains("CANARY"),
        "{}",
        text(&confined.stdout)
    );
    // The sandbox's processes hold only the allowlist's variables: the
    // login environment's WB_PLAIN (test_sshd.rs) reaches an unconfined
    // command, not a confined one.
    let environ = r#"{"pattern":"WB_PLAIN","path":"/proc/self/environ"}"#;
    assert!(text(&call(environ, false).stdout).contains("WB_PLAIN=kept"));
    let confined = call(environ, true);
    assert!(
        !text(&confined.stdout).contains("WB_PLAIN"),
        "{}",
        text(&confined.stdout)
    );
}

/// docs/workbench.md's way to pin rg's order on HOST: a config file on
/// HOST named by `RIPGREP_CONFIG_PATH`, sent by the client (`SendEnv`)
/// and accepted by HOST's sshd (`AcceptEnv`), unconfined and sandboxed.
#[test]
fn rg_s_order_on_the_host_is_pinned_by_a_config_there_sent_with_sendenv() {
    let Some(sshd) = TestSshd::start_with_config("AcceptEnv RIPGREP_CONFIG_PATH\n") else {
        return;
    };
    let config_dir = tempfile::tempdir().unwrap();
    let client_config = config_dir.path().join("ssh_config");
    let mut text_of_config = std::fs::read_to_string(sshd.client_config()).unwrap();
    text_of_config.push_str("  SendEnv RIPGREP_CONFIG_PATH\n");
    std::fs::write(&client_config, text_of_config).unwrap();
    let rg_config = config_dir.path().join("sorted.ripgreprc");
    std::fs::write(&rg_config, "--sort=path\n").unwrap();
    let work = tempfile::tempdir().unwrap();
    let mut names: Vec<String> = (0..40)
        .map(|i| format!("f{:02}.txt", (i * 17) % 40))
        .collect();
    for name in &names {
        std::fs::write(work.path().join(name), format!("needle {name}\n")).unwrap();
    }
    names.sort();
    let executor = executor();
    for sandbox in [false, true] {
        let mut argv = vec![
            "call",
            "grep",
            "--workdir",
            work.path().to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--args",
            r#"{"pattern":"needle"}"#,
            "--no-spill",
            "--executor",
            &executor,
        ];
        if sandbox {
            argv.push("--sandbox");
        }
        let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args(&argv)
            .current_dir(repo())
            .env("WORKBENCH_SSH_CONFIG", &client_config)
            .env("RIPGREP_CONFIG_PATH", &rg_config)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let listed: Vec<String> = text(&out.stdout)
            .lines()
            .filter(|line| line.ends_with(".txt") && line.starts_with('f'))
            .map(str::to_owned)
            .collect();
        assert_eq!(listed, names, "sandbox: {sandbox}");
    }
}

/// `workbench mcp --listen ADDR --executor ssh://wbtest EXTRA…` against
/// `sshd`: its stderr lines up to the listening line (then it is
/// stopped), or all of them when it exits first, with its exit code.
fn mcp_listen_over_ssh(
    sshd: &TestSshd,
    workdir: &Path,
    listen: &str,
    extra: &[&str],
) -> (Vec<String>, Option<i32>) {
    use std::io::BufRead;
    let state = tempfile::tempdir().unwrap();
    let executor = executor();
    let mut child = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args([
            "mcp",
            "--workdir",
            workdir.to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--no-spill",
            "--executor",
            &executor,
            "--listen",
            listen,
        ])
        .args(extra)
        .current_dir(repo())
        .env("WORKBENCH_SSH_CONFIG", sshd.client_config())
        .env("WORKBENCH_MCP_TOKEN", "test-token-0123456789")
        .env("XDG_STATE_HOME", state.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Vec::new();
    let mut listening = false;
    if let Some(stderr) = child.stderr.take() {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            listening = line.contains("listening on");
            lines.push(line);
            if listening {
                break;
            }
        }
    }
    if listening {
        // Ended as a service manager ends it: the server closes its ssh
        // master and removes the control directory (a SIGKILL would leave
        // the directory in TMPDIR for a later start to remove).
        let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    }
    let status = child.wait().unwrap();
    (lines, (!listening).then(|| status.code()).flatten())
}

#[test]
fn mcp_listen_beyond_loopback_with_a_remote_executor_sandboxes_on_the_host_by_default() {
    let Some(sshd) = TestSshd::start() else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (lines, _) = mcp_listen_over_ssh(&sshd, work.path(), "0.0.0.0:0", &[]);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("/mcp (rg runs on ssh://wbtest, ")
            && lines[0].ends_with(", sandboxed there by bwrap: only the workspace (read-only) and the files bash and rg run from are readable; the default on a non-loopback address, --no-sandbox turns it off; pages name paths there)"),
        "{lines:?}"
    );
    let (lines, _) = mcp_listen_over_ssh(&sshd, work.path(), "0.0.0.0:0", &["--no-sandbox"]);
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(
        lines[0],
        "workbench mcp: warning: --no-sandbox on 0.0.0.0:0: every client holding the token can read every file this user can read through the tools"
    );
    assert!(lines[1].ends_with(": pages name paths there)"), "{lines:?}");
    let (lines, _) = mcp_listen_over_ssh(&sshd, work.path(), "127.0.0.1:0", &[]);
    assert!(
        lines[0].ends_with(": pages name paths there)"),
        "loopback: {lines:?}"
    );
    assert!(!lines[0].contains("sandboxed"), "loopback: {lines:?}");
}

/// Fault injection: the host's sessions get a PATH holding bash and cat
/// alone, so the default sandbox cannot be made there.
#[test]
fn mcp_listen_beyond_loopback_refuses_a_host_without_bubblewrap_fault_injected_path() {
    let bin = tempfile::tempdir().unwrap();
    for program in ["bash", "cat"] {
        let found = Command::new("bash")
            .args(["-c", &format!("command -v {program}")])
            .output()
            .unwrap();
        std::os::unix::fs::symlink(text(&found.stdout).trim(), bin.path().join(program)).unwrap();
    }
    let Some(sshd) = TestSshd::start_with_path(bin.path().to_str()) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let (lines, code) = mcp_listen_over_ssh(&sshd, work.path(), "0.0.0.0:0", &[]);
    assert_eq!(code, Some(2), "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("the sandbox on ssh://wbtest needs bubblewrap there")
            && l.ends_with("(--listen on a non-loopback address runs calls sandboxed by default; --no-sandbox opts out)")),
        "{lines:?}"
    );
}
