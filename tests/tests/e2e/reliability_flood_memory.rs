//! Peak memory under a 1 GiB stdout flood (CONTRACT §1.3 capture, §7.2
//! step 7): an rg that writes 1 GiB ends with `SEARCH_RAW_OUTPUT_OVERFLOW`
//! while this process's peak resident memory (`VmHWM`) stays within a
//! small multiple of the `rawOutputMaxBytes` window — nowhere near the
//! flood. The fake rg injects the flood.
//!
//! No other test may share the process whose high-water mark is measured,
//! so the test runs itself again in a child process of this test binary
//! (`fs_search_test_support::own_process`) and measures there. It
//! is heavy, so it is `#[ignore]`d and run by the `--ignored` step of
//! `.ci/run`; the child prints its figures as a `METRIC` line.

// Test helpers outside #[test] functions unwrap too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Instant;

use fs_search_engine::ExecContext;

use fs_search_exec::LocalBashConfig;
use fs_search_test_support::own_process::in_own_process;
use fs_search_test_support::reliability::procfs::{vm_hwm_kib, vm_rss_kib};
use fs_search_test_support::reliability::{FakeRg, load, local_executor};
use serde_json::json;

const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;
/// The default `rawOutputMaxBytes`.
const CAP: u64 = 20_000_000;

/// 1 GiB of 1024-byte lines on stdout, then a clean exit.
const FLOOD_RG: &str =
    "yes \"$(head -c 1023 /dev/zero | tr '\\0' a)\" | head -c 1073741824\nexit 0\n";

#[test]
#[ignore = "heavy: a 1 GiB flood; run by the --ignored step of .ci/run"]
fn a_fake_rg_1_gib_stdout_flood_overflows_with_peak_memory_bounded_by_the_window() {
    if !in_own_process(
        "reliability_flood_memory::a_fake_rg_1_gib_stdout_flood_overflows_with_peak_memory_bounded_by_the_window",
    ) {
        return;
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let fake = FakeRg::new(FLOOD_RG).unwrap();
        let bash =
            local_executor(LocalBashConfig::default(), &[("PATH", &fake.path_env())]).unwrap();
        let registry = load(bash, &json!({"sampleOverCapGlobResults": true}))
            .await
            .unwrap();
        let work = tempfile::tempdir().unwrap();
        let exec = ExecContext::new("c").with_session(Some("s"), Some(&work.path().to_string_lossy()));
        let before_kib = vm_hwm_kib().unwrap();
        let started = Instant::now();
        for tool in ["glob", "grep"] {
            let result = registry.call(tool, &json!({"pattern": "a"}), &exec).await;
            assert_eq!(result.code().map(|c| c.code()), Some("SEARCH_RAW_OUTPUT_OVERFLOW"), "{}", result.text);
            assert_eq!(
                result.text,
                format!(
                    "Error: {tool} produced more raw output than the bash executor retained within the {CAP}-byte cap; narrow pattern, path, or include and retry"
                )
            );
        }
        let elapsed = started.elapsed();
        let peak_kib = vm_hwm_kib().unwrap();
        let rss_kib = vm_rss_kib().unwrap();
        eprintln!(
            "METRIC 1 GiB flood x2 (glob, grep), rawOutputMaxBytes {CAP}: VmHWM {} MiB before, {} MiB peak, {} MiB resident after; {:.1} s",
            before_kib / 1024,
            peak_kib / 1024,
            rss_kib / 1024,
            elapsed.as_secs_f64()
        );
        // The window (20 MB) plus one copy of it is the most the capture
        // holds at once; allow slack for the allocator and the runtime,
        // and stay far below the flood itself.
        let bound_kib = (before_kib * 1024 + 4 * CAP + 32 * MIB) / 1024;
        assert!(
            peak_kib < bound_kib,
            "peak {peak_kib} KiB over the bound {bound_kib} KiB"
        );
        assert!(peak_kib * 1024 < GIB / 8);
    });
}
