//! Whole-call benchmark: the engine's full call against the raw rg command
//! of the contract, on the same tree, alternating, in one run.
//!
//! For each case and repetition the harness re-executes itself twice, in
//! alternating order: (a) `--child raw` runs the contract's rg command line
//! through `bash -c` with stdout read from a pipe and discarded (for the
//! overflow case: until `rawOutputMaxBytes` bytes have arrived); (b)
//! `--child engine` loads the plugin (not timed) and times one
//! `Registry::call` with the `LocalBashExecutor` and a `LocalSpillStore`.
//! Each child reports its wall time, its own peak RSS (`VmHWM`) and the
//! peak RSS of its children (rg, through `getrusage(RUSAGE_CHILDREN)`).
//! The parent prints medians and the ratio b/a per case.
//!
//! The `small` cases (an agent's everyday call: grep `alpha`, 50 matches, and glob
//! `*.rs`, 25 files, on a 50-file tree) measure the fixed cost of a call,
//! so they run in one process the way an embedding host calls: the
//! registry loaded once, then `FSB_SMALL_CALLS` (default 200) iterations
//! each timing (a) a spawn of `bash -c "CMD </dev/null"` read to its end
//! and (b) one `Registry::call`, in alternating order, after 10 untimed
//! warm-up iterations. The table gives medians, the ratio of medians, the
//! median of the per-iteration ratios ("paired"), p99s and the engine
//! process's CPU per call.
//!
//! Environment: `FSB_TREE_10K`, `FSB_TREE_200K` (default `/tmp/fsb-10k`,
//! `/tmp/fsb-200k`, generated with `benches/make-tree.sh` when
//! missing), `FSB_TREE_SMALL` (default `/tmp/fsb-small`, generated with
//! `benches/make-small-tree.sh`), `FSB_TREE_UBOOT` (default `/tmp/uboot`,
//! a u-boot checkout; its cases are skipped when it is missing),
//! `FSB_REPS` (default 7), `FSB_SMALL_CALLS` (default 200), `FSB_CASES`
//! (comma-separated substrings of case names, e.g. `small`; default all).
#![allow(clippy::unwrap_used, clippy::expect_used)]
// A bench reports on stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use fs_search_engine::helpers::{build_glob_command, build_grep_command};
use fs_search_engine::{ExecContext, Host, Registry};
use fs_search_engine::{GlobArgs, GrepArgs};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor, LocalSpillStore};
use nix::sys::resource::UsageWho;
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq, Eq)]
enum Tree {
    K10,
    K200,
    /// An agent's everyday tree: 50 files, `make-small-tree.sh`.
    Small,
    /// A real repository (u-boot, 38.5k files), extracted by hand; its
    /// cases are skipped when it is missing.
    Uboot,
}

struct Case {
    name: &'static str,
    tree: Tree,
    tool: &'static str,
    args: Value,
    config: Value,
    /// The raw side stops once `rawOutputMaxBytes` bytes have arrived.
    overflow: bool,
}

const DEFAULT_CAP: u64 = 20_000_000;

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (tree, label) in [(Tree::K10, "10k"), (Tree::K200, "200k")] {
        for (pattern, pname) in [("*", "star"), ("*.toml", "toml")] {
            for sampling in [true, false] {
                let name = format!(
                    "glob {pname} {label} sampling={}",
                    if sampling { "on" } else { "off" }
                );
                out.push(Case {
                    name: Box::leak(name.into_boxed_str()),
                    tree,
                    tool: "glob",
                    args: json!({ "pattern": pattern }),
                    config: json!({ "sampleOverCapGlobResults": sampling }),
                    overflow: false,
                });
            }
        }
    }
    // The opt-in engine-side sort, against the contract's sorted rg.
    for (tree, label) in [(Tree::K10, "10k"), (Tree::K200, "200k")] {
        let name = format!("glob star {label} globSortInEngine (vs sorted rg)");
        out.push(Case {
            name: Box::leak(name.into_boxed_str()),
            tree,
            tool: "glob",
            args: json!({ "pattern": "*" }),
            config: json!({ "sampleOverCapGlobResults": false, "globSortInEngine": true }),
            overflow: false,
        });
    }
    let grep = |name, tree, pattern: &str, config: Value, overflow| Case {
        name,
        tree,
        tool: "grep",
        args: json!({ "pattern": pattern }),
        config,
        overflow,
    };
    out.push(Case {
        name: "glob star uboot",
        tree: Tree::Uboot,
        tool: "glob",
        args: json!({ "pattern": "*" }),
        config: json!({ "sampleOverCapGlobResults": true }),
        overflow: false,
    });
    let sampling = json!({ "sampleOverCapGlobResults": true });
    out.push(grep(
        "small grep alpha",
        Tree::Small,
        "alpha",
        sampling.clone(),
        false,
    ));
    out.push(Case {
        name: "small glob rs",
        tree: Tree::Small,
        tool: "glob",
        args: json!({ "pattern": "*.rs" }),
        config: sampling.clone(),
        overflow: false,
    });
    out.push(grep(
        "grep u32 17MB uboot",
        Tree::Uboot,
        "u32",
        sampling.clone(),
        false,
    ));
    out.push(grep(
        "grep rare 10k",
        Tree::K10,
        "RARE_MARKER_q9",
        sampling.clone(),
        false,
    ));
    // About 19 MB of `--json` on the small tree: rg's own time no longer
    // dwarfs the engine's reading of its output.
    out.push(grep(
        "grep Err 19MB 10k",
        Tree::K10,
        "Err",
        sampling.clone(),
        false,
    ));
    out.push(grep(
        "grep rare 200k",
        Tree::K200,
        "RARE_MARKER_q9",
        sampling.clone(),
        false,
    ));
    out.push(grep(
        "grep 20MB 200k (cap 32e6)",
        Tree::K200,
        r"Err\(Error::(Ka|Ri|To)",
        json!({ "sampleOverCapGlobResults": true, "rawOutputMaxBytes": 32_000_000 }),
        false,
    ));
    out.push(grep(
        "grep just-under-cap 200k",
        Tree::K200,
        r"Err\(Error::(K|Gu)",
        sampling.clone(),
        false,
    ));
    out.push(grep(
        "grep overflow 200k stopAtRawOutputCap",
        Tree::K200,
        "TODO",
        json!({ "sampleOverCapGlobResults": true, "stopAtRawOutputCap": true }),
        true,
    ));
    // The contract's default: rg runs to its end (its exit decides first).
    out.push(grep(
        "grep overflow 200k default (drain)",
        Tree::K200,
        "TODO",
        sampling,
        true,
    ));
    // The opt-in recursive sampling (docs/sampling.md): the whole call's
    // cost at depths 2 and 3 beside `sampling=on` (depth 1, the
    // contract's). Last, so the earlier cases keep their indexes
    // (compare.py names cases by index).
    for (tree, label) in [(Tree::K10, "10k"), (Tree::K200, "200k")] {
        for depth in [2, 3] {
            let name = format!("glob star {label} globSampleDepth={depth}");
            out.push(Case {
                name: Box::leak(name.into_boxed_str()),
                tree,
                tool: "glob",
                args: json!({ "pattern": "*" }),
                config: json!({ "sampleOverCapGlobResults": true, "globSampleDepth": depth }),
                overflow: false,
            });
        }
    }
    out
}

fn env_path(name: &str, default: &str) -> PathBuf {
    std::env::var_os(name).map_or_else(|| PathBuf::from(default), PathBuf::from)
}

fn tree_dir(tree: Tree) -> PathBuf {
    match tree {
        Tree::K10 => env_path("FSB_TREE_10K", "/tmp/fsb-10k"),
        Tree::K200 => env_path("FSB_TREE_200K", "/tmp/fsb-200k"),
        Tree::Small => env_path("FSB_TREE_SMALL", "/tmp/fsb-small"),
        Tree::Uboot => env_path("FSB_TREE_UBOOT", "/tmp/uboot"),
    }
}

fn ensure_tree(tree: Tree) {
    let dir = tree_dir(tree);
    if dir.exists() {
        return;
    }
    let (script, n) = match tree {
        Tree::K10 => ("make-tree.sh", Some("10000")),
        Tree::K200 => ("make-tree.sh", Some("200000")),
        Tree::Small => ("make-small-tree.sh", None),
        Tree::Uboot => return,
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("benches")
        .join(script);
    eprintln!(
        "generating {} ({} files) with {}",
        dir.display(),
        n.unwrap_or("50"),
        script.display()
    );
    let status = Command::new("bash")
        .arg(&script)
        .arg(&dir)
        .args(n)
        .status()
        .expect("the tree script runs");
    assert!(status.success(), "{} failed", script.display());
}

fn cap_of(case: &Case) -> u64 {
    case.config
        .get("rawOutputMaxBytes")
        .and_then(Value::as_u64)
        .unwrap_or(DEFAULT_CAP)
}

fn raw_command(case: &Case) -> String {
    let pattern = case.args["pattern"].as_str().unwrap_or_default().to_owned();
    match case.tool {
        "glob" => build_glob_command(&GlobArgs {
            pattern,
            path: None,
        }),
        _ => build_grep_command(&GrepArgs {
            pattern,
            path: None,
            include: None,
        }),
    }
}

/// Peak RSS of this process, in KiB.
fn self_hwm_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// CPU time (user + system) of this process, or of its waited-for
/// children, in milliseconds.
fn cpu_ms(who: nix::sys::resource::UsageWho) -> f64 {
    let (user, system) = user_system_ms(who);
    user + system
}

/// User and system CPU time of `who`, in milliseconds.
fn user_system_ms(who: nix::sys::resource::UsageWho) -> (f64, f64) {
    let Ok(usage) = nix::sys::resource::getrusage(who) else {
        return (0.0, 0.0);
    };
    let ms = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 * 1e3 + t.tv_usec() as f64 / 1e3;
    (ms(usage.user_time()), ms(usage.system_time()))
}

/// Largest peak RSS of any waited-for child, in KiB.
fn children_maxrss_kib() -> u64 {
    nix::sys::resource::getrusage(UsageWho::RUSAGE_CHILDREN)
        .map(|u| u.max_rss() as u64)
        .unwrap_or(0)
}

/// One measurement, as a child reports it.
#[derive(Clone, Default)]
struct Sample {
    wall_ms: f64,
    /// CPU of the measuring process during the measured span.
    self_cpu_ms: f64,
    /// CPU of its children (bash, rg).
    rg_cpu_ms: f64,
    self_kib: u64,
    rg_kib: u64,
    bytes: u64,
    outcome: String,
}

impl Sample {
    fn line(&self) -> String {
        format!(
            "SAMPLE\t{}\t{}\t{}\t{}\t{}\t{}\t{}",
            self.wall_ms,
            self.self_cpu_ms,
            self.rg_cpu_ms,
            self.self_kib,
            self.rg_kib,
            self.bytes,
            self.outcome
        )
    }

    fn parse(text: &str) -> Option<Self> {
        let line = text.lines().find(|l| l.starts_with("SAMPLE\t"))?;
        let f: Vec<&str> = line.splitn(8, '\t').collect();
        Some(Self {
            wall_ms: f.get(1)?.parse().ok()?,
            self_cpu_ms: f.get(2)?.parse().ok()?,
            rg_cpu_ms: f.get(3)?.parse().ok()?,
            self_kib: f.get(4)?.parse().ok()?,
            rg_kib: f.get(5)?.parse().ok()?,
            bytes: f.get(6)?.parse().ok()?,
            outcome: f.get(7)?.to_string(),
        })
    }
}

fn child_raw(case: &Case) -> Sample {
    let cap = cap_of(case);
    let cpu_before = cpu_ms(UsageWho::RUSAGE_SELF);
    let start = Instant::now();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(raw_command(case))
        .current_dir(tree_dir(case.tree))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("bash spawns");
    let mut pipe = child.stdout.take().expect("stdout pipe");
    let mut buf = vec![0u8; 64 * 1024];
    let mut bytes = 0u64;
    let mut stopped = false;
    loop {
        match pipe.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => bytes += n as u64,
        }
        if case.overflow && bytes > cap {
            stopped = true;
            break;
        }
    }
    let elapsed = start.elapsed();
    let self_cpu_ms = cpu_ms(UsageWho::RUSAGE_SELF) - cpu_before;
    if stopped {
        let _ = child.kill();
    }
    drop(pipe);
    let status = child.wait().expect("rg is waited for");
    Sample {
        wall_ms: elapsed.as_secs_f64() * 1e3,
        self_cpu_ms,
        rg_cpu_ms: cpu_ms(UsageWho::RUSAGE_CHILDREN),
        self_kib: self_hwm_kib(),
        rg_kib: children_maxrss_kib(),
        bytes,
        outcome: if stopped {
            format!("stopped after {bytes} bytes")
        } else {
            format!("exit {}", status.code().unwrap_or(-1))
        },
    }
}

fn child_engine(case: &Case) -> Sample {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let spill_root = tempfile::tempdir().expect("spill root");
    let sample = runtime.block_on(async {
        let bash = LocalBashExecutor::new(LocalBashConfig::default()).expect("executor");
        let mut registry = Registry::new(Host {
            bash: Some(Arc::new(bash)),
            spill_store: Some(Arc::new(LocalSpillStore::new(Some(spill_root.path())))),
            timeout_policy: true,
        });
        registry
            .load_fs_search(&case.config)
            .await
            .expect("plugin loads");
        let workdir = tree_dir(case.tree).to_string_lossy().into_owned();
        let exec = ExecContext::new("bench-call").with_session(Some("bench"), Some(&workdir));
        let children_before = cpu_ms(UsageWho::RUSAGE_CHILDREN);
        let split_before = user_system_ms(UsageWho::RUSAGE_SELF);
        let start = Instant::now();
        let result = registry.call(case.tool, &case.args, &exec).await;
        let elapsed = start.elapsed();
        let split_after = user_system_ms(UsageWho::RUSAGE_SELF);
        let (user_ms, system_ms) = (
            split_after.0 - split_before.0,
            split_after.1 - split_before.1,
        );
        let self_cpu_ms = user_ms + system_ms;
        if std::env::var_os("FSB_CPU_SPLIT").is_some() {
            eprintln!("engine CPU: user {user_ms:.1} ms, system {system_ms:.1} ms");
        }
        let rg_cpu_ms = cpu_ms(UsageWho::RUSAGE_CHILDREN) - children_before;
        let outcome = match (&result.error, &result.value) {
            (Some(e), _) => format!("error {}", e.code_str().unwrap_or("(plain)")),
            (None, Some(v)) => format!(
                "ok {} results, text {} B, spill {} B",
                v.len(),
                result.text.len(),
                result.spill.as_ref().map_or(0, |s| s.bytes)
            ),
            (None, None) => "ok".to_owned(),
        };
        Sample {
            wall_ms: elapsed.as_secs_f64() * 1e3,
            self_cpu_ms,
            rg_cpu_ms,
            self_kib: self_hwm_kib(),
            rg_kib: children_maxrss_kib(),
            bytes: result.text.len() as u64,
            outcome,
        }
    });
    drop(runtime);
    sample
}

fn run_child(mode: &str, index: usize) -> Sample {
    let output = Command::new(std::env::current_exe().expect("own path"))
        .args(["--child", mode, &index.to_string()])
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .expect("child runs");
    Sample::parse(&String::from_utf8_lossy(&output.stdout)).unwrap_or_else(|| {
        panic!(
            "child {mode} {index} printed no sample: {}",
            String::from_utf8_lossy(&output.stdout)
        )
    })
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return f64::NAN;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

fn mib(kib: f64) -> f64 {
    kib / 1024.0
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let all = cases();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        let mode = &args[at + 1];
        let index: usize = args[at + 2].parse().expect("case index");
        let sample = match mode.as_str() {
            "raw" => child_raw(&all[index]),
            _ => child_engine(&all[index]),
        };
        println!("{}", sample.line());
        return;
    }
    // `cargo test --benches` runs bench binaries with no `--bench`: build only.
    if !args.iter().any(|a| a == "--bench") && std::env::var_os("FSB_RUN").is_none() {
        println!("calls: skipped (run with `cargo bench --bench calls`)");
        return;
    }
    let reps: usize = std::env::var("FSB_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(7);
    let filters: Vec<String> = std::env::var("FSB_CASES")
        .map(|f| f.split(',').map(str::to_owned).collect())
        .unwrap_or_default();
    let selected: Vec<usize> = (0..all.len())
        .filter(|&i| filters.is_empty() || filters.iter().any(|f| all[i].name.contains(f.as_str())))
        .filter(|&i| {
            let present = all[i].tree != Tree::Uboot || tree_dir(Tree::Uboot).exists();
            if !present {
                eprintln!(
                    "skipping {}: no {}",
                    all[i].name,
                    tree_dir(Tree::Uboot).display()
                );
            }
            present
        })
        .collect();
    for tree in [Tree::K10, Tree::K200, Tree::Small] {
        if selected.iter().any(|&i| all[i].tree == tree) {
            ensure_tree(tree);
        }
    }
    let (small, selected): (Vec<usize>, Vec<usize>) = selected
        .into_iter()
        .partition(|&i| all[i].tree == Tree::Small);
    if !small.is_empty() {
        let calls: usize = std::env::var("FSB_SMALL_CALLS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(200);
        print_small(&all, &small, calls);
    }
    if selected.is_empty() {
        return;
    }
    // Warm the page cache and the binaries once per case.
    for &i in &selected {
        let _ = run_child("raw", i);
    }
    let mut raw: Vec<Vec<Sample>> = vec![Vec::new(); all.len()];
    let mut engine: Vec<Vec<Sample>> = vec![Vec::new(); all.len()];
    for rep in 0..reps {
        for &i in &selected {
            if rep % 2 == 0 {
                raw[i].push(run_child("raw", i));
                engine[i].push(run_child("engine", i));
            } else {
                engine[i].push(run_child("engine", i));
                raw[i].push(run_child("raw", i));
            }
        }
        eprintln!("rep {}/{reps} done", rep + 1);
    }
    println!(
        "| case | raw rg ms | engine ms | ratio b/a | paired ratio | rg CPU ms (a) | rg CPU ms (b) | engine CPU ms | raw MB | rg RSS MiB | engine RSS MiB | engine RSS / raw | engine outcome |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|");
    for &i in &selected {
        let (a, b) = (&raw[i], &engine[i]);
        let a_ms = median(a.iter().map(|s| s.wall_ms).collect());
        let b_ms = median(b.iter().map(|s| s.wall_ms).collect());
        let paired = median(
            a.iter()
                .zip(b)
                .map(|(a, b)| b.wall_ms / a.wall_ms)
                .collect(),
        );
        let raw_bytes = median(a.iter().map(|s| s.bytes as f64).collect());
        let rg_cpu_a = median(a.iter().map(|s| s.rg_cpu_ms).collect());
        let rg_cpu_b = median(b.iter().map(|s| s.rg_cpu_ms).collect());
        let engine_cpu = median(b.iter().map(|s| s.self_cpu_ms).collect());
        let rg_rss = median(a.iter().map(|s| s.rg_kib as f64).collect());
        let engine_rss = median(b.iter().map(|s| s.self_kib as f64).collect());
        println!(
            "| {} | {:.1} | {:.1} | {:.3} | {:.3} | {:.0} | {:.0} | {:.0} | {:.2} | {:.1} | {:.1} | {:.2} | {} |",
            all[i].name,
            a_ms,
            b_ms,
            b_ms / a_ms,
            paired,
            rg_cpu_a,
            rg_cpu_b,
            engine_cpu,
            raw_bytes / 1e6,
            mib(rg_rss),
            mib(engine_rss),
            engine_rss * 1024.0 / raw_bytes,
            b.last().map_or("", |s| s.outcome.as_str()),
        );
    }
}

/// One small-case iteration's raw side: `bash -c "CMD </dev/null"` (the
/// command a host would run), stdout read to its end; milliseconds.
fn time_raw_small(command: &str, dir: &Path) -> f64 {
    let start = Instant::now();
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("bash spawns");
    let mut out = Vec::with_capacity(64 * 1024);
    child
        .stdout
        .take()
        .expect("stdout pipe")
        .read_to_end(&mut out)
        .expect("rg's output is read");
    child.wait().expect("bash is waited for");
    start.elapsed().as_secs_f64() * 1e3
}

/// The `q` quantile (nearest rank) of `xs`.
fn quantile(mut xs: Vec<f64>, q: f64) -> f64 {
    xs.sort_by(f64::total_cmp);
    if xs.is_empty() {
        return f64::NAN;
    }
    let rank = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

/// Runs the small cases in this process (see the module doc) and prints
/// their table.
fn print_small(all: &[Case], small: &[usize], calls: usize) {
    const WARM_UP: usize = 10;
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let spill_root = tempfile::tempdir().expect("spill root");
    println!(
        "| small case ({calls} calls) | raw ms | Registry::call ms | ratio | paired | raw p99 | call p99 | engine CPU ms/call | outcome |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---|");
    for &i in small {
        let case = &all[i];
        let dir = tree_dir(case.tree);
        let raw_command = format!("{} </dev/null", raw_command(case));
        let (raw, engine, cpu, outcome) = runtime.block_on(async {
            let bash = LocalBashExecutor::new(LocalBashConfig::default()).expect("executor");
            let mut registry = Registry::new(Host {
                bash: Some(Arc::new(bash)),
                spill_store: Some(Arc::new(LocalSpillStore::new(Some(spill_root.path())))),
                timeout_policy: true,
            });
            registry
                .load_fs_search(&case.config)
                .await
                .expect("plugin loads");
            let workdir = dir.to_string_lossy().into_owned();
            let exec = ExecContext::new("bench-small").with_session(Some("bench"), Some(&workdir));
            let (mut raw, mut engine, mut cpu) = (Vec::new(), Vec::new(), Vec::new());
            let mut outcome = String::new();
            for n in 0..WARM_UP + calls {
                let engine_first = n % 2 == 1;
                let mut timed_raw = None;
                if !engine_first {
                    timed_raw = Some(time_raw_small(&raw_command, &dir));
                }
                let cpu_before = cpu_ms(UsageWho::RUSAGE_SELF);
                let start = Instant::now();
                let result = registry.call(case.tool, &case.args, &exec).await;
                let elapsed = start.elapsed().as_secs_f64() * 1e3;
                let call_cpu = cpu_ms(UsageWho::RUSAGE_SELF) - cpu_before;
                if engine_first {
                    timed_raw = Some(time_raw_small(&raw_command, &dir));
                }
                outcome = match (&result.error, &result.value, &result.spill) {
                    (Some(e), _, _) => format!("error {}", e.code_str().unwrap_or("(plain)")),
                    (None, Some(v), spill) => format!(
                        "ok {} results, text {} B, spill {} B",
                        v.len(),
                        result.text.len(),
                        spill.as_ref().map_or(0, |s| s.bytes)
                    ),
                    (None, None, _) => "ok".to_owned(),
                };
                if n >= WARM_UP {
                    raw.push(timed_raw.unwrap_or(f64::NAN));
                    engine.push(elapsed);
                    cpu.push(call_cpu);
                }
            }
            (raw, engine, cpu, outcome)
        });
        let paired = median(raw.iter().zip(&engine).map(|(a, b)| b / a).collect());
        let (a, b) = (median(raw.clone()), median(engine.clone()));
        println!(
            "| {} | {:.2} | {:.2} | {:.3} | {:.3} | {:.2} | {:.2} | {:.2} | {} |",
            case.name,
            a,
            b,
            b / a,
            paired,
            quantile(raw, 0.99),
            quantile(engine, 0.99),
            median(cpu),
            outcome,
        );
    }
}
