//! Criterion benchmarks of the engine's pure parts: `rg --json` and
//! `rg --files` parsing, rendering (page and spill text), round-robin
//! sampling, and the bounded presentation meta. Inputs are synthetic but
//! shaped like ripgrep's output on the reference trees.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use fs_search_engine::Config;
use fs_search_engine::helpers::sample_across_top_level;
use fs_search_engine::helpers::{glob_search_meta, grep_search_meta};
use fs_search_engine::helpers::{glob_spill_content, grep_spill_content, render_glob, render_grep};
use fs_search_engine::helpers::{parse_glob_paths, parse_grep_matches};
use fs_search_engine::value::{GlobValue, GrepMatch, GrepValue};
use serde_json::json;

const WORKDIR: &str = "/tmp/fsb";

/// A path like the generated trees': up to 5 directory levels under 16
/// top-level entries.
fn path(i: usize) -> String {
    let top = [
        "core", "util", "net", "fs", "driver", "api", "model", "view",
    ][i % 8];
    format!("{top}{}/sub_{}/mod_{}/file_{i}.rs", i % 16, i % 97, i % 13)
}

/// `rg --json` output with `files` files of `per_file` matches each.
fn rg_json(files: usize, per_file: usize) -> String {
    let mut out = String::new();
    for f in 0..files {
        let p = path(f);
        out.push_str(&json!({"type":"begin","data":{"path":{"text":p}}}).to_string());
        out.push('\n');
        for m in 0..per_file {
            let line = format!(
                "    if let Err(e) = handler_{m}.dispatch(&request, {f}) {{ return Err(Error::Ka{m}(e)); }}\n"
            );
            let record = json!({"type":"match","data":{
                "path":{"text":p},
                "lines":{"text":line},
                "line_number": 10 + m * 7,
                "absolute_offset": 4096 + m * 300,
                "submatches":[{"match":{"text":"Err(Error::Ka"},"start":56,"end":69}]}});
            out.push_str(&record.to_string());
            out.push('\n');
        }
        out.push_str(
            &json!({"type":"end","data":{"path":{"text":p},"binary_offset":null,
            "stats":{"elapsed":{"secs":0,"nanos":10000,"human":"0.00001s"},"searches":1,
            "searches_with_match":1,"bytes_searched":5000,"bytes_printed":900,
            "matched_lines":per_file,"matches":per_file}}})
            .to_string(),
        );
        out.push('\n');
    }
    out
}

fn matches(n: usize) -> Vec<GrepMatch> {
    (0..n)
        .map(|i| GrepMatch {
            path: path(i / 4).into(),
            line_number: (i % 4 * 7 + 10) as i64,
            line: format!(
                "    if let Err(e) = handler_{i}.dispatch(&request) {{ return Err(e); }}"
            )
            .into(),
        })
        .collect()
}

fn parsing(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");
    group.sample_size(20);
    // ~20 MB of `--json`, like the reference grep case.
    let json = rg_json(20_000, 3);
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function("grep --json 20MB", |b| {
        b.iter(|| parse_grep_matches(black_box(&json), WORKDIR).unwrap())
    });
    let files: String = (0..200_000).map(|i| format!("{}\n", path(i))).collect();
    group.throughput(Throughput::Bytes(files.len() as u64));
    group.bench_function("glob --files 200k", |b| {
        b.iter(|| parse_glob_paths(black_box(&files), WORKDIR))
    });
    group.finish();
}

fn rendering(c: &mut Criterion) {
    let mut group = c.benchmark_group("render");
    group.sample_size(20);
    let grep = GrepValue {
        matches: matches(60_000),
    };
    let sampled = Config::with_sampling(true);
    let head = Config::with_sampling(false);
    group.bench_function("grep page 60k matches", |b| {
        b.iter(|| render_grep(black_box(&grep), &sampled, None))
    });
    group.bench_function("grep spill text 60k matches", |b| {
        b.iter(|| grep_spill_content(black_box(&grep), &sampled))
    });
    let glob = GlobValue {
        root: ".".into(),
        paths: (0..200_000).map(path).collect(),
    };
    group.bench_function("glob page 200k sampled", |b| {
        b.iter(|| render_glob(black_box(&glob), &sampled, None))
    });
    group.bench_function("glob page 200k head", |b| {
        b.iter(|| render_glob(black_box(&glob), &head, None))
    });
    group.bench_function("glob spill text 200k", |b| {
        b.iter(|| glob_spill_content(black_box(&glob)))
    });
    group.bench_function("sample 200k paths into 100", |b| {
        b.iter(|| sample_across_top_level(black_box(&glob.paths), 100, "."))
    });
    group.finish();
}

fn retention(c: &mut Criterion) {
    let mut group = c.benchmark_group("meta");
    group.sample_size(20);
    let sampled = Config::with_sampling(true);
    let grep = GrepValue {
        matches: matches(60_000),
    };
    group.bench_function("grep card 60k matches", |b| {
        b.iter(|| grep_search_meta(black_box(&grep), &sampled))
    });
    // A card over searchMetaMaxBytes: long lines force dropping groups.
    let long = GrepValue {
        matches: (0..250)
            .map(|i| GrepMatch {
                path: path(i).into(),
                line_number: 1,
                line: "x".repeat(1900).into(),
            })
            .collect(),
    };
    group.bench_function("grep card over the byte cap", |b| {
        b.iter(|| grep_search_meta(black_box(&long), &sampled))
    });
    let glob = GlobValue {
        root: ".".into(),
        paths: (0..200_000).map(path).collect(),
    };
    group.bench_function("glob card 200k paths", |b| {
        b.iter_batched(
            || (),
            |()| glob_search_meta(black_box(&glob), &sampled),
            BatchSize::SmallInput,
        )
    });
    group.finish();
}

criterion_group!(benches, parsing, rendering, retention);
criterion_main!(benches);
