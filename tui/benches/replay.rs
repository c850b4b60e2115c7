//! `replay` of the fixture transcripts against the raw rg commands their
//! records run (a bench binary, not a timed test).
//!
//! For each transcript under `fixtures/transcripts/` and each repetition,
//! the bench materialises its tree as `workbench replay` does (a
//! [`FixtureEngine`]; timed apart, "tree ms"), then for each record, in
//! alternating order, times (a) the record's call through the engine,
//! exactly the step `replay` takes per record (registry load on a new
//! config, executor, parse, render, normalisation), and (b) the raw
//! command: the contract's rg command line of the record's arguments
//! through `bash -c "CMD </dev/null"` in the same tree and session cwd,
//! with the same `RIPGREP_CONFIG_PATH`, stdout read to its end. Records
//! the engine refuses before running rg (`INVALID_ARGS`, `UNKNOWN_TOOL`,
//! `ABORTED_BEFORE_DISPATCH`, and plain errors without a code: the
//! tools' own validation) have no raw side (0 ms); a raw command whose
//! bash cannot start (a session cwd that does not exist) counts the
//! failed spawn; records that end on a timer (`cancel.afterMs`, `executorTimeoutMs`, config `timeoutMs`)
//! get their raw command killed after the same time. The table gives, per
//! transcript, the medians over the repetitions of the sums over its
//! records, the ratio, and the time per record; the last row sums all
//! transcripts.
//!
//! Run: `cargo bench -p fs-search-workbench --bench replay`
//! (`FSB_REPS`, default 5; `FSB_TRANSCRIPTS`: comma-separated substrings
//! of file names). Without `--bench` (as `cargo test --benches` runs it)
//! it only says it was skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use fs_search_engine::helpers::{build_glob_command, build_grep_command};
use fs_search_engine::{GlobArgs, GrepArgs};
use fs_search_transcript::FixtureEngine;
use fs_search_transcript::parse;
use fs_search_transcript::tree_path;
use fs_search_transcript::{Cancel, Record, Transcript};
use serde_json::Value;

/// Outcome codes of calls that end before rg runs.
const NO_RG: [&str; 3] = ["INVALID_ARGS", "UNKNOWN_TOOL", "ABORTED_BEFORE_DISPATCH"];

/// The rg command line `record` runs, if it runs one.
fn raw_command(record: &Record) -> Option<String> {
    let code = record
        .outcome
        .error
        .as_ref()
        .and_then(|e| e.code.as_deref());
    match code {
        Some(code) if NO_RG.contains(&code) => return None,
        // A plain error (no code): the tool's own validation, before rg.
        None if record.outcome.is_error => return None,
        _ => {}
    }
    let args = &record.call.args;
    let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
    let pattern = text("pattern")?;
    match record.call.tool.as_str() {
        "glob" => Some(build_glob_command(&GlobArgs {
            pattern,
            path: text("path"),
        })),
        "grep" => Some(build_grep_command(&GrepArgs {
            pattern,
            path: text("path"),
            include: text("include"),
        })),
        _ => None,
    }
}

/// How long the record lets its call run, when a timer ends it.
fn time_limit(record: &Record) -> Option<Duration> {
    let options = &record.call.options;
    let cancel = match options.cancel {
        Some(Cancel::AfterMs(ms)) => Some(ms),
        _ => None,
    };
    let policy = options.config.get("timeoutMs").and_then(Value::as_u64);
    [cancel, options.executor_timeout_ms, policy]
        .into_iter()
        .flatten()
        .min()
        .map(Duration::from_millis)
}

/// (b): the raw command in `dir`, read to its end (or killed at `limit`).
fn time_raw(command: &str, dir: &Path, rg_config: &Path, limit: Option<Duration>) -> Duration {
    let start = Instant::now();
    let spawned = Command::new("bash")
        .arg("-c")
        .arg(format!("{command} </dev/null"))
        .current_dir(dir)
        .env("RIPGREP_CONFIG_PATH", rg_config)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn();
    let Ok(mut child) = spawned else {
        return start.elapsed();
    };
    let pid = child.id();
    let killer = limit.map(|limit| {
        std::thread::spawn(move || {
            std::thread::sleep(limit);
            // The whole group: bash and rg.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .stderr(Stdio::null())
                .status();
        })
    });
    let mut stderr = child.stderr.take().expect("stderr pipe");
    let drain = std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = stderr.read_to_end(&mut sink);
    });
    let mut out = Vec::new();
    let _ = child
        .stdout
        .take()
        .expect("stdout pipe")
        .read_to_end(&mut out);
    let _ = drain.join();
    child.wait().expect("bash is waited for");
    let took = start.elapsed();
    if let Some(killer) = killer {
        let _ = killer.join();
    }
    took
}

/// One repetition of one transcript: the tree's materialisation, the
/// records through the engine, the records' raw commands.
struct Rep {
    tree: Duration,
    engine: Duration,
    raw: Duration,
}

async fn replay_once(file: &Path, transcript: &Transcript, rep: usize) -> Rep {
    let header = &transcript.header;
    let started = Instant::now();
    let mut engine = FixtureEngine::new(
        &tree_path(file, &header.tree),
        header.config.clone(),
        &header.env.ripgrep_config,
    )
    .expect("the tree materialises");
    let tree = started.elapsed();
    let scratch = tempfile::tempdir().expect("scratch dir");
    let pinned = scratch.path().join("ripgreprc");
    std::fs::write(&pinned, header.env.ripgrep_config.join("\n") + "\n").expect("rg config");
    let unpinned = scratch.path().join("ripgreprc-empty");
    std::fs::write(&unpinned, "").expect("empty rg config");
    let root = engine.root().to_path_buf();
    let (mut engine_total, mut raw_total) = (Duration::ZERO, Duration::ZERO);
    for (n, record) in transcript.records.iter().enumerate() {
        let dir: PathBuf = match record
            .call
            .options
            .session
            .as_ref()
            .and_then(|s| s.cwd.as_deref())
        {
            Some(cwd) if cwd != "." => root.join(cwd),
            _ => root.clone(),
        };
        let rg_config = if record.call.options.ripgrep_config {
            &pinned
        } else {
            &unpinned
        };
        let raw = || {
            raw_command(record).map_or(Duration::ZERO, |command| {
                time_raw(&command, &dir, rg_config, time_limit(record))
            })
        };
        let engine_first = (n + rep) % 2 == 1;
        let mut raw_time = if engine_first { None } else { Some(raw()) };
        let start = Instant::now();
        engine
            .run(&record.call)
            .await
            .expect("the record's call runs");
        engine_total += start.elapsed();
        raw_time = raw_time.or_else(|| Some(raw()));
        raw_total += raw_time.unwrap_or_default();
    }
    Rep {
        tree,
        engine: engine_total,
        raw: raw_total,
    }
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    match xs.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => xs[n / 2],
        n => (xs[n / 2 - 1] + xs[n / 2]) / 2.0,
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !args.iter().any(|a| a == "--bench") && std::env::var_os("FSB_RUN").is_none() {
        println!("replay: skipped (run with `cargo bench --bench replay`)");
        return;
    }
    let reps: usize = std::env::var("FSB_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let filters: Vec<String> = std::env::var("FSB_TRANSCRIPTS")
        .map(|f| f.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/transcripts");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("fixtures/transcripts")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter(|p| {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))
        })
        .collect();
    files.sort();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    println!(
        "| transcript | records | tree ms | replay ms | raw rg ms | ratio | replay ms/record | raw ms/record |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|");
    let (mut all_records, mut all_engine, mut all_raw, mut all_tree) = (0, 0.0, 0.0, 0.0);
    for file in &files {
        let text = std::fs::read_to_string(file).expect("the transcript reads");
        let transcript = parse(&file.display().to_string(), &text).expect("the transcript parses");
        // Warm the page cache and the binaries.
        let _ = runtime.block_on(replay_once(file, &transcript, 0));
        let runs: Vec<Rep> = (0..reps)
            .map(|rep| runtime.block_on(replay_once(file, &transcript, rep)))
            .collect();
        let records = transcript.records.len();
        let tree = median(runs.iter().map(|r| ms(r.tree)).collect());
        let engine = median(runs.iter().map(|r| ms(r.engine)).collect());
        let raw = median(runs.iter().map(|r| ms(r.raw)).collect());
        (all_records, all_engine, all_raw, all_tree) = (
            all_records + records,
            all_engine + engine,
            all_raw + raw,
            all_tree + tree,
        );
        let per = |total: f64| total / records.max(1) as f64;
        println!(
            "| {} | {records} | {tree:.1} | {engine:.1} | {raw:.1} | {:.3} | {:.2} | {:.2} |",
            file.file_name().unwrap_or_default().to_string_lossy(),
            engine / raw,
            per(engine),
            per(raw),
        );
    }
    let per = |total: f64| total / all_records.max(1) as f64;
    println!(
        "| all | {all_records} | {all_tree:.1} | {all_engine:.1} | {all_raw:.1} | {:.3} | {:.2} | {:.2} |",
        all_engine / all_raw,
        per(all_engine),
        per(all_raw),
    );
}
