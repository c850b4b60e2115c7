//! `workbench explain --unsearched` against the grep itself (a
//! bench binary, not a timed test): whole processes of the built
//! `workbench` (start-up included), `call grep` and `explain grep
//! --unsearched` for the same call, alternating, REPS times each after one
//! warm-up of each (page cache warm); medians. The explain runs the call
//! itself too, so its time includes the grep.
//!
//! Run: `EXPLAIN_BENCH_TREE=/path/to/tree [EXPLAIN_BENCH_PATTERN=x]
//! [EXPLAIN_BENCH_REPS=5] cargo bench -p fs-search-workbench --bench explain`
//! (the tree: the Linux kernel sources as `tui/benches/make-linux-tree.sh`
//! builds them; figures in docs/performance.md).

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::process::Command;
use std::time::{Duration, Instant};

fn timed(args: &[&str]) -> (Duration, Vec<u8>) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(args)
        .output()
        .unwrap();
    let took = started.elapsed();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (took, out.stdout)
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn main() {
    let Ok(tree) = std::env::var("EXPLAIN_BENCH_TREE") else {
        println!(
            "explain: set EXPLAIN_BENCH_TREE to a large tree (see docs/performance.md); skipped"
        );
        return;
    };
    let pattern =
        std::env::var("EXPLAIN_BENCH_PATTERN").unwrap_or_else(|_| "NEEDLE_UNIQUE_7f3a".into());
    let reps: usize = std::env::var("EXPLAIN_BENCH_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(5);
    let args = serde_json::json!({ "pattern": pattern }).to_string();
    let config = r#"{"sampleOverCapGlobResults":true}"#;
    let call = [
        "call",
        "grep",
        "--workdir",
        &tree,
        "--config",
        config,
        "--args",
        &args,
        "--no-spill",
    ];
    let explain = [
        "explain",
        "grep",
        "--workdir",
        &tree,
        "--config",
        config,
        "--args",
        &args,
        "--no-spill",
        "--unsearched",
        "--json",
    ];
    timed(&call);
    let (_, summary) = timed(&explain);
    let (mut calls, mut explains) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        calls.push(timed(&call).0);
        explains.push(timed(&explain).0);
    }
    let (call_ms, explain_ms) = (
        median(calls).as_secs_f64() * 1e3,
        median(explains).as_secs_f64() * 1e3,
    );
    println!("tree {tree}, pattern {pattern:?}, {reps} runs each, medians:");
    println!("  workbench call grep            {call_ms:>9.1} ms");
    println!(
        "  workbench explain --unsearched {explain_ms:>9.1} ms  ({:.2}x the call)",
        explain_ms / call_ms
    );
    let report: serde_json::Value = serde_json::from_slice(&summary).unwrap();
    println!("  summary: {}", report["unsearched"]);
}
