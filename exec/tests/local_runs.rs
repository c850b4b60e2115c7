//! The local executor under the engine's run modes, moved here from the
//! engine's unit tests (the contract's own tests run on a fake): stdout
//! streamed to a sink within its budget, and the pipeline's raw-output
//! cap on a real command.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use fs_search_engine::bash::{
    BashExecutor, BashRequest, CappedRun, OverCap, RunMode, RunOutcome, StdoutSink,
};
use fs_search_engine::helpers::run_ripgrep;
use fs_search_engine::{ExecContext, SearchCode, ToolError};
use fs_search_exec::{LocalBashConfig, LocalBashExecutor};

/// Collects what the executor hands over.
#[derive(Default)]
struct Bytes(Vec<u8>);

impl StdoutSink for Bytes {
    fn write(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
    }
}

/// The local executor streams stdout within the budget and keeps none
/// of it; past the budget it reports a truncated stdout, as a capped run
/// does. The sink comes back with what it was given.
#[tokio::test]
async fn the_local_executor_streams_stdout_within_its_budget() {
    let bash = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
    for (command, budget, expected, truncated) in [
        ("printf 'a\\nb'; printf c >&2", 16, &b"a\nb"[..], false),
        (
            "head -c 100000 /dev/zero | tr '\\0' x",
            100_000,
            &[b'x'; 100_000][..],
            false,
        ),
        (
            "head -c 100001 /dev/zero | tr '\\0' x",
            100_000,
            &b""[..],
            true,
        ),
    ] {
        let spec = bash
            .resolve(BashRequest {
                command: command.to_owned(),
                stdout_max_bytes: Some(budget),
                ..BashRequest::default()
            })
            .unwrap();
        let mode = RunMode::streamed(OverCap::Drain, Box::new(Bytes::default()));
        let RunOutcome { run, to_sink, sink } = bash.run(spec, mode).await.unwrap();
        let CappedRun::Finished(result) = run else {
            panic!("finished");
        };
        assert!(to_sink);
        assert_eq!(result.stdout.text, "");
        assert_eq!(result.stdout.truncated, truncated, "{command}");
        let sink: Box<dyn std::any::Any> = sink.expect("the sink back");
        let seen = sink.downcast::<Bytes>().expect("the sink's own type").0;
        if truncated {
            assert!(seen.len() <= 100_000);
        } else {
            assert_eq!(seen, expected, "{command}");
            assert_eq!(result.stderr.text, if budget == 16 { "c" } else { "" });
        }
    }
}

/// The overflow case ends as soon as stdout passes the cap, with the
/// exact text of a truncated stdout (§7.2 step 7).
#[tokio::test]
async fn an_endless_stdout_fails_fast_with_the_truncated_overflow_text() {
    let bash = LocalBashExecutor::new(LocalBashConfig::default()).unwrap();
    let exec = ExecContext::new("c1");
    let started = std::time::Instant::now();
    let err = run_ripgrep(
        "grep",
        "yes".to_owned(),
        4096u64.into(),
        OverCap::Stop,
        &bash,
        &exec,
    )
    .await
    .unwrap_err();
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let ToolError::Search(err) = err else {
        panic!("a SearchError");
    };
    assert_eq!(err.code, SearchCode::RawOutputOverflow);
    assert_eq!(
        err.message,
        "grep produced more raw output than the bash executor retained within the 4096-byte cap; narrow pattern, path, or include and retry"
    );
    for over_cap in [OverCap::Stop, OverCap::Drain] {
        let command = "printf 'a\\nb'".to_owned();
        let raw = run_ripgrep("glob", command, 3u64.into(), over_cap, &bash, &exec)
            .await
            .unwrap();
        assert_eq!((raw.stdout.as_str(), raw.no_matches), ("a\nb", false));
    }
}

/// A failed spawn names its error number as `nix` does, from the
/// contract's own table (the engine depends on no system-call crate).
#[test]
fn the_contracts_error_names_are_nixs() {
    for code in 0..=200 {
        let ours =
            fs_search_engine::bash::BashError::Spawn(std::io::Error::from_raw_os_error(code));
        assert_eq!(
            ours.to_string(),
            format!("spawn bash {:?}", nix::errno::Errno::from_raw(code)),
            "{code}"
        );
    }
}
