//! End to end in a real terminal: the built `workbench` binary runs in a
//! pseudo-terminal (portable-pty) whose output is interpreted by a
//! terminal emulator (vt100). The test types a grep, runs it, reads the
//! page and the footer off the emulated screen, quits, and checks that
//! the terminal was restored (primary screen, cursor shown, cooked mode).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::io::{Read, Write};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use portable_pty::{CommandBuilder, PtySize, native_pty_system};

const ROWS: u16 = 24;
const COLS: u16 = 80;
const WAIT: Duration = Duration::from_secs(30);

/// The emulated screen, fed by a thread reading the pty.
struct Screen {
    parser: Arc<Mutex<vt100::Parser>>,
}

impl Screen {
    fn spawn_reader(mut reader: Box<dyn Read + Send>) -> Self {
        let parser = Arc::new(Mutex::new(vt100::Parser::new(ROWS, COLS, 0)));
        let feed = parser.clone();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                feed.lock().unwrap().process(&buf[..n]);
            }
        });
        Self { parser }
    }

    fn text(&self) -> String {
        self.parser.lock().unwrap().screen().contents()
    }

    fn with<T>(&self, f: impl FnOnce(&vt100::Screen) -> T) -> T {
        f(self.parser.lock().unwrap().screen())
    }

    /// Waits until the screen satisfies `ready` on two reads 100 ms apart
    /// (a read may fall mid-draw), and returns the second; panics with the
    /// screen.
    fn wait_for(&self, what: &str, ready: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let text = self.text();
            if ready(&text) {
                std::thread::sleep(Duration::from_millis(100));
                let settled = self.text();
                if ready(&settled) {
                    return settled;
                }
                continue;
            }
            assert!(
                start.elapsed() < WAIT,
                "timed out waiting for {what}; the screen:\n{text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn write_tree(root: &Path) {
    let lines: String = (1..=6).map(|i| format!("needle {i}\n")).collect();
    std::fs::write(root.join("notes.txt"), lines).unwrap();
    std::fs::write(root.join("other.md"), "nothing here\n").unwrap();
}

#[test]
fn types_a_grep_reads_page_and_footer_quits_and_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    write_tree(&tree);

    // The spill root goes under the test's temp dir (XDG_CACHE_HOME).
    let (pair, screen, mut keys, mut child) = spawn_in_pty(
        dir.path(),
        &[
            "--workdir",
            tree.to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true,"grepMaxMatches":3}"#,
        ],
    );
    let mut press = |bytes: &str| {
        keys.write_all(bytes.as_bytes()).unwrap();
        keys.flush().unwrap();
        // A lone Esc must not merge with the next key into Alt+key.
        std::thread::sleep(Duration::from_millis(150));
    };

    let start = screen.wait_for("the loaded workbench", |s| {
        s.contains("plugin loaded, sampling on")
    });
    assert!(start.contains("No call yet"), "{start}");
    assert!(
        screen.with(|s| s.alternate_screen()),
        "runs on the alternate screen"
    );

    // Switch to grep, type the pattern, run it.
    press("t");
    press("e");
    press("needle");
    press("\r");
    let page = screen.wait_for("the grep result", |s| {
        s.contains("Full grep result stored at:")
    });
    let lines: Vec<&str> = page.lines().collect();
    let row = |needle: &str| {
        lines
            .iter()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no row with {needle:?} in:\n{page}"))
    };
    // The page, line by line, with its gutter.
    assert!(row("Found 3 of 6 matches").contains(" 1│ Found 3 of 6 matches"));
    assert!(row("notes.txt").contains(" 3│ notes.txt"));
    assert!(row("needle 1").contains(" 4│ Line 1: needle 1"));
    assert!(row("needle 3").contains(" 6│ Line 3: needle 3"));
    assert!(
        !page.contains("needle 4"),
        "only the capped page is shown:\n{page}"
    );
    // The footer, set apart by its marker, naming the spill file.
    assert!(row("(Full grep result stored at:").contains(" 8▶ (Full grep result stored at:"));
    assert!(page.contains("-grep-results.txt."), "{page}");
    assert!(page.contains("#1 grep (1/1) · ok"), "{page}");
    assert!(page.contains("spill ▸"), "{page}");
    assert!(page.contains(r#"args {"pattern":"needle"}"#), "{page}");

    // Leave the field, quit.
    press("\x1b");
    press("q");
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the workbench did not exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status:?}");

    // The footer's spill file is where the locator said, with every match.
    let spilled: Vec<String> = walk(dir.path())
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with("-grep-results.txt"))
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    assert_eq!(spilled.len(), 1, "one spill file under the temp dir");
    let spill_root = dir.path().join("cache/fs-search-workbench/spill");
    assert!(
        walk(&spill_root)
            .iter()
            .any(|p| p.to_string_lossy().ends_with("-grep-results.txt")),
        "in the per-user spill root"
    );
    assert!(spilled[0].starts_with("Found 6 matches\n\nnotes.txt\nLine 1: needle 1\n"));

    // Restored: back on the primary screen with the cursor shown...
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !screen.with(|s| s.alternate_screen()),
        "left the alternate screen"
    );
    assert!(
        !screen.with(|s| s.hide_cursor()),
        "the cursor is shown again"
    );
    // ...and out of raw mode: the line discipline is cooked again.
    let mut stty = CommandBuilder::new("sh");
    stty.arg("-c");
    stty.arg("stty -a | tr ' ;' '\\n\\n' | grep -E '^-?(icanon|echo|isig)$' | tr '\\n' ' '; echo '<end>'");
    let mut probe = pair.slave.spawn_command(stty).unwrap();
    probe.wait().unwrap();
    let modes = screen.wait_for("stty's answer", |s| s.contains("<end>"));
    assert!(
        modes.contains("isig icanon echo"),
        "the terminal is still raw: {modes}"
    );
}

#[test]
fn without_rg_on_the_path_it_starts_and_says_how_to_install_rg() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    write_tree(&tree);
    // A PATH with bash and nothing else: the load's probe finds no rg.
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let bash = ["/bin/bash", "/usr/bin/bash"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .expect("bash is installed");
    std::os::unix::fs::symlink(bash, bin.join("bash")).unwrap();

    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let screen = Screen::spawn_reader(pair.master.try_clone_reader().unwrap());
    let mut keys = pair.master.take_writer().unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_workbench"));
    cmd.arg("--workdir");
    cmd.arg(&tree);
    cmd.arg("--config");
    cmd.arg(r#"{"sampleOverCapGlobResults":true}"#);
    cmd.env("PATH", &bin);
    cmd.env("TERM", "xterm-256color");
    cmd.env("XDG_STATE_HOME", dir.path().join("state"));
    cmd.env("TMPDIR", dir.path());
    let mut child = pair.slave.spawn_command(cmd).unwrap();

    let text = screen.wait_for("the rg-missing notice", |s| s.contains("rg missing"));
    assert!(
        text.contains("tool-fs-search: ripgrep (rg) not found on the bash executor PATH;"),
        "{text}"
    );
    assert!(text.contains("sudo apt-get install ripgrep"), "{text}");
    // A call gets the registry's unknown-tool result, not a crash.
    keys.write_all(b"r").unwrap();
    keys.flush().unwrap();
    let text = screen.wait_for("the call's result", |s| s.contains("UNKNOWN_TOOL"));
    assert!(text.contains(r#"Error: unknown tool "glob""#), "{text}");
    std::thread::sleep(Duration::from_millis(150));
    keys.write_all(b"q").unwrap();
    keys.flush().unwrap();
    let status = wait_exit(child.as_mut());
    assert!(status.success(), "exit status {status:?}");
}

#[test]
fn sigterm_quits_like_q_and_restores_the_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    write_tree(&tree);
    let (_pair, screen, _keys, mut child) = spawn_in_pty(
        dir.path(),
        &[
            "--workdir",
            tree.to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
        ],
    );
    screen.wait_for("the loaded workbench", |s| s.contains("plugin loaded"));
    let pid = child.process_id().expect("a pid");
    let sent = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the workbench did not exit");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success(), "exit status {status:?}");
    std::thread::sleep(Duration::from_millis(200));
    assert!(
        !screen.with(|s| s.alternate_screen()),
        "left the alternate screen"
    );
    assert!(
        !screen.with(|s| s.hide_cursor()),
        "the cursor is shown again"
    );
}

/// `workbench call` with its stdout on a terminal ends its output with a
/// newline, so the shell's prompt does not land on the text's last line:
/// after the text the cursor is back at column 0 (piped, the text is
/// exact: `cli_headless` compares stdout byte for byte).
#[test]
fn call_on_a_terminal_ends_its_output_with_a_newline() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    write_tree(&tree);
    let (_pair, screen, _keys, mut child) = spawn_in_pty(
        dir.path(),
        &[
            "call",
            "grep",
            "--workdir",
            tree.to_str().unwrap(),
            "--no-spill",
            "--args",
            r#"{"pattern":"needle 6"}"#,
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
        ],
    );
    let status = wait_exit(child.as_mut());
    assert!(status.success(), "exit status {status:?}");
    let text = screen.wait_for("the call's text", |s| s.contains("Line 6: needle 6"));
    assert!(
        text.starts_with("Found 1 match\n\nnotes.txt\nLine 6: needle 6"),
        "{text}"
    );
    // The reader thread may still be feeding the screen: wait for the cursor.
    let start = Instant::now();
    loop {
        let (row, col) = screen.with(|s| s.cursor_position());
        if (row, col) == (4, 0) {
            break;
        }
        assert!(
            start.elapsed() < WAIT,
            "the cursor stayed at row {row}, column {col} after the text:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The workbench with `args` in a pseudo-terminal of [`ROWS`]x[`COLS`],
/// its state and temp files under `dir`: the pty (kept open), the
/// emulated screen, the keyboard and the process.
fn spawn_in_pty(
    dir: &Path,
    args: &[&str],
) -> (
    portable_pty::PtyPair,
    Screen,
    Box<dyn Write + Send>,
    Box<dyn portable_pty::Child + Send + Sync>,
) {
    let pair = native_pty_system()
        .openpty(PtySize {
            rows: ROWS,
            cols: COLS,
            pixel_width: 0,
            pixel_height: 0,
        })
        .unwrap();
    let screen = Screen::spawn_reader(pair.master.try_clone_reader().unwrap());
    let keys = pair.master.take_writer().unwrap();
    let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_workbench"));
    cmd.args(args);
    cmd.cwd(dir);
    cmd.env("TERM", "xterm-256color");
    cmd.env("XDG_STATE_HOME", dir.join("state"));
    cmd.env("XDG_CACHE_HOME", dir.join("cache"));
    cmd.env("XDG_DATA_HOME", dir.join("data"));
    cmd.env("TMPDIR", dir);
    let child = pair.slave.spawn_command(cmd).unwrap();
    (pair, screen, keys, child)
}

/// Waits (up to [`WAIT`]) for `child` to exit.
fn wait_exit(child: &mut (dyn portable_pty::Child + Send + Sync)) -> portable_pty::ExitStatus {
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(Instant::now() < deadline, "the workbench did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Timing-dependent (generous bounds): the workbench follows a recording
/// that does not exist yet; `workbench mcp --record` then serves one
/// tools/call (raw JSON-RPC lines on its stdin) and records it, and the
/// call's text shows up on the followed screen within seconds.
#[test]
fn follow_shows_a_call_recorded_by_the_mcp_server_within_seconds_timing_dependent() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    write_tree(&tree);
    let recording = dir.path().join("live.jsonl");

    let config = r#"{"sampleOverCapGlobResults":true}"#;
    let follow = recording.to_str().unwrap();
    let (_pair, screen, mut keys, mut child) = spawn_in_pty(
        dir.path(),
        &[
            "--workdir",
            tree.to_str().unwrap(),
            "--config",
            config,
            "--follow",
            follow,
        ],
    );
    screen.wait_for("the follow waiting for its file", |s| {
        s.contains("plugin loaded") && s.contains("◉ FOLLOW 0")
    });

    // The MCP server records to the followed file; one call over stdio.
    let mut server = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .arg("mcp")
        .arg("--workdir")
        .arg(&tree)
        .arg("--config")
        .arg(r#"{"sampleOverCapGlobResults":true,"grepMaxMatches":3}"#)
        .arg("--record")
        .arg(&recording)
        .env("XDG_STATE_HOME", dir.path().join("mcp-state"))
        .env("TMPDIR", dir.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = server.stdin.take().unwrap();
    let mut stdout = BufReader::new(server.stdout.take().unwrap());
    for line in [
        r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pty-test","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"grep","arguments":{"pattern":"needle"}}}"#,
    ] {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }
    // Read up to the call's answer: by then the call is recorded.
    let deadline = Instant::now() + WAIT;
    loop {
        let mut line = String::new();
        assert!(
            stdout.read_line(&mut line).unwrap() > 0,
            "the server ended early"
        );
        if line.contains(r#""id":1"#) {
            assert!(line.contains("Found 3 of 6 matches"), "{line}");
            break;
        }
        assert!(Instant::now() < deadline, "no answer to the call");
    }
    let answered = Instant::now();
    // The whole page, to its spill line: a screen read mid-draw may hold
    // only part of it.
    let followed = screen.wait_for("the followed call", |s| {
        s.contains("◉ FOLLOW 1") && s.contains("Line 1: needle 1") && s.contains("<SPILL>/")
    });
    let took = answered.elapsed();
    assert!(
        took < Duration::from_secs(10),
        "the followed call took {took:?} to show"
    );
    assert!(followed.contains(" 1│ Found 3 of 6 matches"), "{followed}");
    assert!(
        followed.contains("#1 grep (1/1) · ok · recorded"),
        "{followed}"
    );
    assert!(followed.contains("<SPILL>/"), "{followed}");

    // The Call tab names the recording and the record.
    keys.write_all(b"4").unwrap();
    keys.flush().unwrap();
    let details = screen.wait_for("the call details", |s| s.contains("recorded call"));
    assert!(
        details.contains(r#"recorded call "call-1-grep" · grep"#),
        "{details}"
    );
    assert!(details.contains("live.jsonl:2"), "{details}");

    drop(stdin);
    let deadline = Instant::now() + WAIT;
    while server.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(150));
    keys.write_all(b"q").unwrap();
    keys.flush().unwrap();
    let status = wait_exit(child.as_mut());
    assert!(status.success(), "exit status {status:?}");
}

/// The workbench started with `flag FIFO` (the FIFO named relative to
/// its working directory, so the message fits the status line) shows
/// `expected` on its screen; `q` then ends the process within a second.
/// Timing-dependent: idle, quitting takes 50 ms (300 ms while the embedded
/// tokenizer still loads, which the quit does not wait for); a machine
/// loaded far beyond its cores can stretch that past the bound.
fn q_exits_within_a_second_with_a_fifo_given_to(flag: &str, expected: &str) {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    write_tree(&tree);
    nix::unistd::mkfifo(&dir.path().join("fifo"), nix::sys::stat::Mode::S_IRWXU).unwrap();
    let (_pair, screen, mut keys, mut child) = spawn_in_pty(
        dir.path(),
        &[
            "--workdir",
            tree.to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            flag,
            "fifo",
        ],
    );
    screen.wait_for(expected, |s| s.contains(expected));
    keys.write_all(b"q").unwrap();
    keys.flush().unwrap();
    let pressed = Instant::now();
    let status = wait_exit(child.as_mut());
    let took = pressed.elapsed();
    assert!(status.success(), "exit status {status:?}");
    assert!(
        took < Duration::from_secs(1),
        "the workbench took {took:?} to exit after q"
    );
}

#[test]
fn q_exits_within_a_second_and_the_follower_says_a_fifo_follow_is_not_a_regular_file_timing_dependent()
 {
    q_exits_within_a_second_with_a_fifo_given_to("--follow", "fifo: not a regular file (a FIFO)");
}

#[test]
fn q_exits_within_a_second_and_the_status_line_says_a_fifo_tokenizer_is_not_a_regular_file_timing_dependent()
 {
    q_exits_within_a_second_with_a_fifo_given_to(
        "--tokenizer",
        "cannot read tokenizer file fifo: not a regular file (a FIFO)",
    );
}

/// The "why" panel in a real terminal: after a grep, `w` opens the "why" panel,
/// the path is Tab-completed from the workdir and Enter explains it
/// beside the page (an `.ignore` rule kept rg out of `secret/`); `u` lists
/// what the call did not search; Esc closes the panel.
#[test]
fn why_explains_a_tab_completed_path_beside_the_page() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir_all(tree.join("secret")).unwrap();
    write_tree(&tree);
    std::fs::write(tree.join(".ignore"), "secret/\n").unwrap();
    std::fs::write(tree.join("secret/key.txt"), "needle 7\n").unwrap();
    let (_pair, screen, mut keys, mut child) = spawn_in_pty(
        dir.path(),
        &[
            "--workdir",
            tree.to_str().unwrap(),
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
        ],
    );
    let mut press = |bytes: &str| {
        keys.write_all(bytes.as_bytes()).unwrap();
        keys.flush().unwrap();
        std::thread::sleep(Duration::from_millis(150));
    };
    screen.wait_for("the loaded workbench", |s| {
        s.contains("plugin loaded, sampling on")
    });
    press("t");
    press("e");
    press("needle");
    press("\r");
    screen.wait_for("the grep result", |s| s.contains("Found 6 matches"));
    press("\x1b");
    press("w");
    press("secret/k");
    press("\t");
    screen.wait_for("the completed path", |s| s.contains("path: secret/key.txt"));
    press("\r");
    let why = screen.wait_for("the explanation", |s| s.contains("(ignored)"));
    assert!(
        why.contains("Found 6 matches"),
        "the page stays beside: {why}"
    );
    assert!(why.contains("secret/key.txt:"), "{why}");
    assert!(why.contains("not-searched"), "{why}");
    assert!(why.contains(".ignore:1"), "the rule's file and line: {why}");
    press("u");
    screen.wait_for("the unsearched summary", |s| s.contains("unsearched under"));
    press("\x1b");
    screen.wait_for("the panel closed", |s| !s.contains("unsearched under"));
    press("q");
    assert!(wait_exit(child.as_mut()).success());
}
