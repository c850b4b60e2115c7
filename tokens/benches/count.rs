//! Counting a 20 KB page (target: ≤ 5 ms) and loading the embedded
//! tokenizer. `cargo bench -p fs-search-tokens --bench count`.
//!
//! Pages: a grep result page in the tool's format (`Found N matches`, then
//! per file its path and `Line N: text` lines) made of this crate's own
//! sources, and a mix of the golden corpus (transcripts, prompt sections,
//! tool definitions, CJK, emoji, long lines). "warm" counts the same page
//! again with the BPE word cache filled; "cold" counts it with a fresh
//! cache (a clone of the tokenizer, made outside the timing, which shares
//! the regex engines' lazy DFAs); "first after load" counts it on a freshly
//! loaded tokenizer (its regex DFAs start empty too: the first page a
//! session counts); "generic route" is the `tokenizers` crate's own
//! `encode_fast`, for comparison.
//!
//! Before criterion's wall-clock figures, it prints the thread CPU time per
//! count and per load (mean over repeated runs): on a shared machine, wall
//! time includes the waits for a core, CPU time does not.

// A bench reports on stdout and stderr.
#![allow(clippy::print_stdout, clippy::print_stderr)]

use std::time::Duration;

use criterion::{BatchSize, Criterion, black_box, criterion_group, criterion_main};
use fs_search_tokens::Tokenizer;
use nix::time::{ClockId, clock_gettime};

const PAGE_BYTES: usize = 20_000;

const SOURCES: [(&str, &str); 7] = [
    ("tokens/src/lib.rs", include_str!("../src/lib.rs")),
    ("tokens/src/prefix.rs", include_str!("../src/prefix.rs")),
    ("tokens/src/tool.rs", include_str!("../src/tool.rs")),
    ("tokens/src/error.rs", include_str!("../src/error.rs")),
    (
        "tokens/tests/tokens/prefix.rs",
        include_str!("../tests/tokens/prefix.rs"),
    ),
    (
        "tokens/tests/tokens/errors.rs",
        include_str!("../tests/tokens/errors.rs"),
    ),
    (
        "tokens/tests/tokens/golden.rs",
        include_str!("../tests/tokens/golden.rs"),
    ),
];

/// The first `PAGE_BYTES` bytes of `text`, cut at a character boundary.
fn cut(text: &str) -> String {
    let mut end = PAGE_BYTES.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

fn grep_page() -> String {
    let mut body = String::new();
    let mut matches = 0;
    for (path, source) in SOURCES {
        body.push_str(&format!("\n{path}\n"));
        for (number, line) in source.lines().enumerate() {
            if !line.trim().is_empty() {
                body.push_str(&format!("Line {}: {}\n", number + 1, line.trim_start()));
                matches += 1;
            }
        }
    }
    cut(&format!("Found {matches} matches\n{body}"))
}

fn golden_mix() -> String {
    let mut page = String::new();
    for line in include_str!("../golden/ids.jsonl").lines() {
        let entry: Result<serde_json::Value, _> = serde_json::from_str(line);
        if let Some(text) = entry.as_ref().ok().and_then(|e| e["text"].as_str()) {
            page.push_str(text);
            page.push('\n');
        }
    }
    cut(&page)
}

/// This thread's CPU time so far.
fn cpu_time() -> Duration {
    clock_gettime(ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(Duration::ZERO, Duration::from)
}

/// The mean thread CPU time of `run`, in milliseconds, over `n` runs, each
/// after a `setup` that is not counted.
fn cpu_ms<S, T>(n: u32, mut setup: impl FnMut() -> S, mut run: impl FnMut(S) -> T) -> f64 {
    let mut total = Duration::ZERO;
    for _ in 0..n {
        let input = setup();
        let start = cpu_time();
        let output = run(input);
        total += cpu_time() - start;
        drop(black_box(output));
    }
    total.as_secs_f64() * 1e3 / f64::from(n)
}

fn bench(c: &mut Criterion) {
    let Ok(tokenizer) = Tokenizer::embedded() else {
        panic!("the embedded tokenizer does not load");
    };
    let load = cpu_ms(5, || (), |()| Tokenizer::embedded());
    let decompress = cpu_ms(5, || (), |()| fs_search_tokens::embedded_json());
    eprintln!("CPU time: load embedded {load:.0} ms (decompression {decompress:.0} ms)");
    for (name, page) in [("grep page", grep_page()), ("golden mix", golden_mix())] {
        assert!(page.len() > PAGE_BYTES - 4, "{name}: {} bytes", page.len());
        let warm = cpu_ms(200, || (), |()| tokenizer.count(black_box(&page)));
        let cold = cpu_ms(20, || tokenizer.clone(), |t| (t.count(black_box(&page)), t));
        let first = cpu_ms(
            3,
            || Tokenizer::embedded().ok(),
            |t| t.map(|t| (t.count(black_box(&page)), t)),
        );
        let generic = cpu_ms(50, || (), |()| tokenizer.try_encode_ids_generic(&page));
        eprintln!(
            "{name}: {} bytes, {} tokens; CPU time per count: warm {warm:.2} ms, \
             cold {cold:.2} ms, first after load {first:.2} ms, generic route {generic:.2} ms",
            page.len(),
            tokenizer.count(&page)
        );
        c.bench_function(&format!("count 20 KB {name} warm"), |b| {
            b.iter(|| tokenizer.count(black_box(&page)))
        });
        c.bench_function(&format!("count 20 KB {name} generic route"), |b| {
            b.iter(|| {
                tokenizer
                    .try_encode_ids_generic(black_box(&page))
                    .map(|ids| ids.len())
            })
        });
        c.bench_function(&format!("count 20 KB {name} cold"), |b| {
            b.iter_batched(
                || tokenizer.clone(),
                |fresh| {
                    let n = fresh.count(black_box(&page));
                    (fresh, n)
                },
                BatchSize::PerIteration,
            )
        });
    }
    let mut group = c.benchmark_group("load");
    group.sample_size(10);
    group.bench_function("embedded tokenizer", |b| b.iter(Tokenizer::embedded));
    group.bench_function("decompress only", |b| {
        b.iter(fs_search_tokens::embedded_json)
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
