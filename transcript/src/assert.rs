//! Transcripts as a `cargo test` snapshot test: [`assert_transcripts_replay`]
//! replays every `*.jsonl` in a directory and panics with the same report
//! `workbench replay` prints (a unified diff per changed record) when any
//! record changed; with `WORKBENCH_UPDATE=1` it rewrites the changed
//! files instead, as `workbench replay --update` does (the habit of
//! insta's `INSTA_UPDATE` and expect-test's `UPDATE_EXPECT`). It may be
//! called from `#[tokio::test]` too: inside a runtime it replays on a
//! thread of its own. Another project depends on this crate by path or
//! git (docs/transcripts.md, "From `cargo test`").
//!
//! ```no_run
//! #[test]
//! fn transcripts_replay() {
//!     fs_search_transcript::assert_transcripts_replay(concat!(
//!         env!("CARGO_MANIFEST_DIR"),
//!         "/fixtures/transcripts"
//!     ));
//! }
//! ```

use std::path::{Path, PathBuf};

use super::batch::{BatchOptions, replay_files};
use super::record::save;
use super::report::{ReportOptions, human};

/// The environment variable that turns the assertion into an update.
pub(crate) const UPDATE_VAR: &str = "WORKBENCH_UPDATE";

/// Whether a value of [`UPDATE_VAR`] asks for an update: anything but
/// unset, empty, `0`, `no` or `false`.
pub(crate) fn update_requested(value: Option<&str>) -> bool {
    !matches!(value.map(str::trim), None | Some("" | "0" | "no" | "false"))
}

/// Replays every transcript (`*.jsonl`, in name order) in `dir` and panics
/// with the report of each file that changed or cannot be replayed;
/// with `WORKBENCH_UPDATE=1`, rewrites the changed files instead. Works
/// in a plain `#[test]` and inside `#[tokio::test]` alike (see
/// [`check_transcripts`]).
pub fn assert_transcripts_replay(dir: impl AsRef<Path>) {
    let update = update_requested(std::env::var(UPDATE_VAR).ok().as_deref());
    if let Err(report) = check_transcripts(dir.as_ref(), update) {
        panic!("{report}");
    }
}

/// As [`assert_transcripts_replay`] with the update decided by the
/// caller: `Err` holds the report of what failed. Callable anywhere,
/// inside an async runtime too: it replays on a runtime of its own, on a
/// thread of its own when the caller's thread already runs one (a
/// runtime cannot be started inside another).
pub fn check_transcripts(dir: &Path, update: bool) -> Result<(), String> {
    if tokio::runtime::Handle::try_current().is_ok() {
        return std::thread::scope(|scope| {
            scope
                .spawn(|| check_on_own_runtime(dir, update))
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        });
    }
    check_on_own_runtime(dir, update)
}

/// [`check_transcripts`] on a new runtime on this thread.
fn check_on_own_runtime(dir: &Path, update: bool) -> Result<(), String> {
    let files = transcripts_in(dir)?;
    if files.is_empty() {
        return Err(format!(
            "{}: no transcripts (*.jsonl) to replay",
            dir.display()
        ));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    let options = BatchOptions {
        count_tokens: update,
        ..BatchOptions::new()
    };
    let report_options = ReportOptions::default();
    let mut failures = String::new();
    let run = runtime.block_on(replay_files(&files, &options, |file, result| {
        let done = match result {
            Ok(done) => done,
            Err(e) => {
                failures.push_str(&format!("workbench replay: {e}\n"));
                return;
            }
        };
        let replay = &done.replay;
        if replay.all_match() {
            return;
        }
        if update {
            if let Err(e) = save(file, &replay.updated()) {
                failures.push_str(&format!("workbench replay: {e}\n"));
            }
            return;
        }
        failures.push_str(&human::file_text(replay, &report_options, false));
    }));
    if let Err(e) = run {
        failures.push_str(&format!("workbench replay: {e}\n"));
    }
    if failures.is_empty() {
        return Ok(());
    }
    Err(format!(
        "transcripts changed; to accept the current results, rerun with {UPDATE_VAR}=1 (or `workbench replay --update FILE`), then review `git diff`:\n{failures}"
    ))
}

/// The `*.jsonl` files in `dir`, sorted.
fn transcripts_in(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("{}: {e}", dir.display()))?.path();
        if path.extension().is_some_and(|e| e == "jsonl") && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory holding one fixture transcript (`glob-footers.jsonl`,
    /// its tree named by absolute path).
    fn one_fixture() -> tempfile::TempDir {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
        let text =
            std::fs::read_to_string(fixtures.join("transcripts/glob-footers.jsonl")).unwrap();
        let tree = fixtures.join("trees/mixed").canonicalize().unwrap();
        let text = text.replacen(
            "\"tree\":\"../trees/mixed\"",
            &format!("\"tree\":{}", serde_json::json!(tree)),
            1,
        );
        assert!(text.contains(&*tree.to_string_lossy()));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("glob-footers.jsonl"), text).unwrap();
        dir
    }

    #[test]
    fn a_fixture_replays_from_a_plain_test() {
        check_transcripts(one_fixture().path(), false).unwrap();
    }

    #[tokio::test]
    async fn a_fixture_replays_from_inside_a_current_thread_tokio_test() {
        check_transcripts(one_fixture().path(), false).unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_fixture_replays_from_inside_a_multi_thread_tokio_test() {
        assert_transcripts_replay(one_fixture().path());
    }

    #[test]
    fn the_update_variable_asks_for_an_update_unless_unset_empty_or_negative() {
        for no in [
            None,
            Some(""),
            Some("0"),
            Some("no"),
            Some("false"),
            Some(" 0 "),
        ] {
            assert!(!update_requested(no), "{no:?}");
        }
        for yes in [Some("1"), Some("always"), Some("yes"), Some("true")] {
            assert!(update_requested(yes), "{yes:?}");
        }
    }
}
