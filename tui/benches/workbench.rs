//! Workbench measurements (a bench binary, not a timed test):
//!
//! 1. start-up to first frame: the release `workbench` binary in a
//!    pseudo-terminal, timed from spawn until the emulated screen shows
//!    the header (first frame) and until the plugin is loaded; plus the
//!    in-process figure the binary logs ("first frame drawn").
//! 2. rendering a 250-match grep page: the real engine's result for a
//!    tree with 300 matches (default cap 250), drawn on a `TestBackend`
//!    at 80x24 and 200x60 — cold (first draw of a new result: wrapping
//!    included) and warm (scrolling an already wrapped page).
//!
//! Run: `cargo bench -p fs-search-workbench --bench workbench`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
// A bench reports on stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fs_search_engine::ExecContext;
use portable_pty::{CommandBuilder, PtySize, native_pty_system};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;

use fs_search_process::{SpillChoice, load_engine};
use fs_search_workbench::bench::{Action, App, AppEvent, Effect, SessionInfo, draw};

fn stats(name: &str, mut samples: Vec<Duration>) {
    samples.sort();
    let n = samples.len();
    let mean = samples.iter().sum::<Duration>() / n as u32;
    let pct = |p: usize| samples[(n * p / 100).min(n - 1)];
    println!(
        "{name:<44} n={n:<4} median {:>9.3} ms  mean {:>9.3} ms  p95 {:>9.3} ms  min {:>9.3} ms",
        ms(pct(50)),
        ms(mean),
        ms(pct(95)),
        ms(samples[0])
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn startup(runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("a.txt"), "needle\n").unwrap();
    let mut first_frame = Vec::new();
    let mut loaded = Vec::new();
    let mut logged = Vec::new();
    for run in 0..runs {
        let pair = native_pty_system()
            .openpty(PtySize {
                rows: 24,
                cols: 80,
                pixel_width: 0,
                pixel_height: 0,
            })
            .unwrap();
        let parser = Arc::new(Mutex::new(vt100::Parser::new(24, 80, 0)));
        let feed = parser.clone();
        let mut reader = pair.master.try_clone_reader().unwrap();
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = reader.read(&mut buf) {
                if n == 0 {
                    break;
                }
                feed.lock().unwrap().process(&buf[..n]);
            }
        });
        let mut keys = pair.master.take_writer().unwrap();
        let state = dir.path().join(format!("state-{run}"));
        let mut cmd = CommandBuilder::new(env!("CARGO_BIN_EXE_workbench"));
        cmd.args([
            "--config",
            r#"{"sampleOverCapGlobResults":true}"#,
            "--workdir",
        ]);
        cmd.arg(&tree);
        cmd.env("TERM", "xterm-256color");
        cmd.env("XDG_STATE_HOME", &state);
        cmd.env("TMPDIR", dir.path());
        let started = Instant::now();
        let mut child = pair.slave.spawn_command(cmd).unwrap();
        let mut seen_first = None;
        loop {
            let text = parser.lock().unwrap().screen().contents();
            if seen_first.is_none() && text.contains("workbench") {
                seen_first = Some(started.elapsed());
            }
            if text.contains("plugin loaded") {
                loaded.push(started.elapsed());
                break;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "{text}");
            std::thread::sleep(Duration::from_micros(200));
        }
        first_frame.push(seen_first.unwrap_or_default());
        use std::io::Write;
        keys.write_all(b"q").unwrap();
        keys.flush().unwrap();
        child.wait().unwrap();
        // One log file per process: this run's is the only one in `state`.
        let log = std::fs::read_dir(state.join("fs-search-workbench"))
            .into_iter()
            .flatten()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".log"))
            .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
            .collect::<String>();
        if let Some(ms) = log
            .lines()
            .find(|l| l.contains("first frame drawn"))
            .and_then(|l| l.split("ms=").nth(1))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse::<f64>().ok())
        {
            logged.push(Duration::from_secs_f64(ms / 1000.0));
        }
    }
    stats("startup: spawn -> first frame on screen", first_frame);
    stats("startup: spawn -> plugin loaded on screen", loaded);
    if !logged.is_empty() {
        stats(
            "startup: in-process, interactive::run -> first frame",
            logged,
        );
    }
}

async fn render_250(iterations: usize) {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("tree");
    std::fs::create_dir(&tree).unwrap();
    let text: String = (1..=300)
        .map(|i| format!("let needle_{i} = \"{}\";\n", "v".repeat(i % 90)))
        .collect();
    std::fs::write(tree.join("big.rs"), text).unwrap();
    let config = json!({"sampleOverCapGlobResults": true});
    let loaded = load_engine(
        Some(&tree),
        &config,
        SpillChoice::Root(&dir.path().join("spill")),
        &fs_search_process::ExecutorKind::Local,
        &fs_search_process::ContractChoice::seed(),
    )
    .await
    .unwrap();
    let exec = ExecContext::new("bench").with_session(Some("bench"), tree.to_str());
    let result = loaded
        .registry
        .call("grep", &json!({"pattern": "needle"}), &exec)
        .await;
    assert!(
        result.text.starts_with("Found 250 of 300 matches"),
        "{}",
        &result.text[..80]
    );
    println!(
        "page: {} bytes, {} lines, spill {:?} bytes",
        result.text.len(),
        result.text.lines().count(),
        result.spill.as_ref().map(|s| s.bytes)
    );

    for (cols, rows) in [(80u16, 24u16), (200, 60)] {
        let session = SessionInfo {
            workdir: tree.display().to_string(),
            session_id: "bench".into(),
            spill_root: None,
            recordings_dir: tree.join("recordings"),
            log_path: None,
            rg: fs_search_process::RgInfo::detect(),
            executor: None,
            contract: Default::default(),
        };
        let mut app = App::new(session, &config);
        let mut terminal = Terminal::new(TestBackend::new(cols, rows)).unwrap();
        let mut cold = Vec::new();
        let mut warm = Vec::new();
        for _ in 0..iterations {
            let effects = app.apply(Action::Run);
            let [Effect::Run { id, .. }] = effects.as_slice() else {
                panic!("{effects:?}")
            };
            app.on_event(AppEvent::Finished {
                id: *id,
                result: Box::new(result.clone()),
                duration: Duration::from_millis(5),
                commands: Vec::new(),
            });
            let t = Instant::now();
            draw(&mut terminal, &mut app, Instant::now()).unwrap();
            cold.push(t.elapsed());
            for _ in 0..4 {
                app.apply(Action::PageDown);
                let t = Instant::now();
                draw(&mut terminal, &mut app, Instant::now()).unwrap();
                warm.push(t.elapsed());
            }
        }
        stats(
            &format!("render 250-match page {cols}x{rows}: new result"),
            cold,
        );
        stats(
            &format!("render 250-match page {cols}x{rows}: scroll"),
            warm,
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; `cargo test --benches` would not.
    let quick = !std::env::args().any(|a| a == "--bench");
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(render_250(if quick { 3 } else { 200 }));
    startup(if quick { 1 } else { 20 });
}
