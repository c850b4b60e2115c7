//! How far over-cap glob pages span real trees under each sampling policy
//! (docs/sampling.md). Not a timed test: a measurement to run by hand.
//!
//! `cargo bench -p fs-search-engine --bench sampling -- TREE...` lists
//! each tree once per pattern through the engine (the contract's
//! `rg --files --sort=modified` command via a loaded registry, sampling
//! off, so the value holds the complete result in rg's order), then for
//! every cap builds the page of each policy with the engine's own
//! functions and measures it with the engine's coverage measure:
//!
//! - `head`: the first `cap` paths (sampling off);
//! - `contract`: `sampleAcrossTopLevel` (depth 1);
//! - `levels-D`: the `globSampleDepth: D` opt-in (level-by-level);
//! - `breadth-D`: a policy the engine does not offer, measured beside it:
//!   the contract's round-robin over the entries `D` levels deep directly
//!   (so each subtree is weighted by how many such entries it has).
//!
//! Prints one Markdown row per (tree, pattern, cap, policy): coverage of
//! depths 1–4 in percent, the largest share of one top-level directory,
//! and the median CPU time of building the page (`FSS_REPS`, default 15).
//! Knobs: `FSS_PATTERNS` (comma-separated; default `*,**/*.c,*.json,
//! **/Makefile`), `FSS_CAPS` (default `20,100,250`), `FSS_SYNTHETIC` (a
//! number of paths for an extra in-memory tree, 16-way fan-out, 4 levels,
//! to time the policies on a result the size of the 200k tree).
//!
//! The trees' mtimes decide rg's order: give a checked-out tree distinct,
//! reproducible mtimes first with `engine/benches/assign-mtimes.py`.

#![allow(clippy::unwrap_used, clippy::expect_used)]
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use fs_search_engine::helpers::{
    measure_glob_coverage, sample_across_top_level, sample_level_by_level,
};
use fs_search_engine::{
    Config, ExecContext, GlobArgs, Host, Registry, render::GlobCoverage, value::ToolValue,
};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};

/// A page-building policy.
#[derive(Clone, Copy)]
enum Policy {
    Head,
    Contract,
    Levels(usize),
    Breadth(usize),
}

impl Policy {
    fn name(self) -> String {
        match self {
            Policy::Head => "head".to_owned(),
            Policy::Contract => "contract".to_owned(),
            Policy::Levels(d) => format!("levels-{d}"),
            Policy::Breadth(d) => format!("breadth-{d}"),
        }
    }

    fn page<'a>(self, paths: &'a [String], cap: usize, root: &str) -> Vec<&'a str> {
        match self {
            Policy::Head => paths[..cap].iter().map(String::as_str).collect(),
            Policy::Contract => sample_across_top_level(paths, cap, root).items,
            Policy::Levels(d) => sample_level_by_level(paths, cap, root, d).items,
            Policy::Breadth(d) => breadth_page(paths, cap, d),
        }
    }
}

const POLICIES: [Policy; 7] = [
    Policy::Head,
    Policy::Contract,
    Policy::Levels(2),
    Policy::Levels(3),
    Policy::Levels(4),
    Policy::Breadth(2),
    Policy::Breadth(3),
];

/// The first `depth` segments of `path` (the whole path when shorter).
fn prefix(path: &str, depth: usize) -> &str {
    let path = path.strip_prefix("./").unwrap_or(path);
    match path.match_indices('/').nth(depth - 1) {
        Some((at, _)) => &path[..at],
        None => path,
    }
}

/// The breadth-weighted policy: round-robin over the entries `depth`
/// levels deep (files above that depth are entries of their own), in
/// first-appearance order; each entry's slots go to its first paths.
fn breadth_page(paths: &[String], cap: usize, depth: usize) -> Vec<&str> {
    let mut index: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<&str>> = Vec::new();
    for path in paths {
        let key = prefix(path, depth);
        let next = groups.len();
        let at = *index.entry(key).or_insert(next);
        if at == next {
            groups.push(Vec::new());
        }
        groups[at].push(path);
    }
    let mut taken = vec![0usize; groups.len()];
    let mut active: Vec<usize> = (0..groups.len()).collect();
    let mut count = 0;
    while !active.is_empty() && count < cap {
        let mut next = Vec::new();
        for &g in &active {
            if count >= cap {
                break;
            }
            taken[g] += 1;
            count += 1;
            if taken[g] < groups[g].len() {
                next.push(g);
            }
        }
        active = next;
    }
    groups
        .iter()
        .zip(&taken)
        .flat_map(|(g, &n)| g[..n].iter().copied())
        .collect()
}

/// CPU time of this process so far (user + system): the machine the
/// figures come from is shared, so wall time would measure the others.
fn cpu_time() -> Duration {
    use nix::sys::resource::{UsageWho, getrusage};
    let usage = getrusage(UsageWho::RUSAGE_SELF).expect("getrusage");
    let micros = |t: nix::sys::time::TimeVal| {
        Duration::from_secs(t.tv_sec() as u64) + Duration::from_micros(t.tv_usec() as u64)
    };
    micros(usage.user_time()) + micros(usage.system_time())
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn percent(share: Option<f64>) -> String {
    share.map_or("–".to_owned(), |s| format!("{:.0}", 100.0 * s))
}

fn row(
    tree: &str,
    pattern: &str,
    total: usize,
    cap: usize,
    policy: Policy,
    cov: &GlobCoverage,
    t: Duration,
) {
    let depths: Vec<String> = cov.depths.iter().map(|d| percent(d.share)).collect();
    println!(
        "| {tree} | `{pattern}` | {total} | {cap} | {} | {} | {} | {:.0} | {:.2} |",
        policy.name(),
        depths.join(" | "),
        percent(Some(cov.depths[1].largest_share)),
        100.0 * cov.largest_subtree_share,
        t.as_secs_f64() * 1000.0,
    );
}

fn measure(tree: &str, pattern: &str, paths: &[String], root: &str, caps: &[usize], reps: usize) {
    for &cap in caps {
        if paths.len() <= cap {
            println!(
                "| {tree} | `{pattern}` | {} | {cap} | (fits) | | | | | | | |",
                paths.len()
            );
            continue;
        }
        for policy in POLICIES {
            let mut times = Vec::with_capacity(reps);
            let mut page = Vec::new();
            for _ in 0..reps {
                let start = cpu_time();
                page = policy.page(paths, cap, root);
                times.push(cpu_time().saturating_sub(start));
            }
            assert_eq!(page.len(), cap, "{}", policy.name());
            let cov = measure_glob_coverage(paths, &page, root);
            row(tree, pattern, paths.len(), cap, policy, &cov, median(times));
        }
    }
}

/// A deterministic in-memory tree of `n` paths: 16-way fan-out, 4 levels
/// of directories, listed directory by directory.
fn synthetic(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "d{}/d{}/d{}/d{}/f{i}.c",
                i % 16,
                (i / 16) % 16,
                (i / 256) % 16,
                (i / 4096) % 16
            )
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let patterns =
        std::env::var("FSS_PATTERNS").unwrap_or_else(|_| "*,**/*.c,*.json,**/Makefile".into());
    let caps: Vec<usize> = std::env::var("FSS_CAPS")
        .unwrap_or_else(|_| "20,100,250".into())
        .split(',')
        .map(|c| c.trim().parse().expect("FSS_CAPS: numbers"))
        .collect();
    let reps: usize = std::env::var("FSS_REPS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(15);
    println!(
        "| tree | pattern | paths | cap | policy | d1 % | d2 % | d3 % | d4 % | largest d2 dir % | largest subtree % | page CPU ms |"
    );
    println!("|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    for tree in &args {
        let name = Path::new(tree)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        runtime.block_on(async {
            let bash = LocalBashExecutor::new(LocalBashConfig {
                cwd: Some(tree.into()),
                ..LocalBashConfig::default()
            })
            .expect("executor");
            let mut registry = Registry::new(Host {
                bash: Some(Arc::new(bash)),
                spill_store: None,
                timeout_policy: false,
            });
            registry
                .load(&Config::with_sampling(false))
                .await
                .expect("plugin loads");
            for pattern in patterns.split(',') {
                let exec = ExecContext::new("sampling-bench");
                let args = GlobArgs {
                    pattern: pattern.to_owned(),
                    ..GlobArgs::default()
                };
                let start = Instant::now();
                let result = registry.glob(&args, &exec).await;
                let call = start.elapsed();
                let Some(ToolValue::Glob(value)) = result.value else {
                    eprintln!("{name} {pattern}: {}", result.text);
                    continue;
                };
                eprintln!(
                    "{name} `{pattern}`: {} paths, call {:.0} ms",
                    value.paths.len(),
                    call.as_secs_f64() * 1000.0
                );
                measure(&name, pattern, &value.paths, &value.root, &caps, reps);
            }
        });
    }
    if let Some(n) = std::env::var("FSS_SYNTHETIC")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        let paths = synthetic(n);
        measure("synthetic", "*", &paths, ".", &caps, reps);
    }
}
