//! Tests that measure state of their whole process (peak memory, open
//! descriptors, child processes) must not share it with the other tests
//! of the one test binary, which run on other threads. Such a test calls
//! [`in_own_process`] first: the test binary runs itself again, filtered
//! to that one test, and the measuring body runs in that child.

use std::process::Command;

/// Set in the child process, to the name of the test it runs alone.
const ALONE: &str = "FS_SEARCH_TEST_ALONE";

/// `true` in the child process that runs test `name` (its path in the
/// test binary, e.g. `module::test_name`) alone: run the body. Otherwise
/// runs that child, passes its output through, panics unless its one test
/// passed, and returns `false`: the caller returns.
// The child's stderr is passed on through the test harness's capture.
#[allow(clippy::print_stderr)]
pub fn in_own_process(name: &str) -> bool {
    if std::env::var_os(ALONE).is_some_and(|v| v == name) {
        return true;
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => panic!("cannot find this test binary: {e}"),
    };
    let child = Command::new(exe)
        .args([
            name,
            "--exact",
            "--include-ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(ALONE, name)
        .output();
    let child = match child {
        Ok(child) => child,
        Err(e) => panic!("cannot run {name} in its own process: {e}"),
    };
    let stdout = String::from_utf8_lossy(&child.stdout);
    let stderr = String::from_utf8_lossy(&child.stderr);
    eprint!("{stderr}");
    assert!(
        child.status.success(),
        "{name} failed in its own process:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("1 passed"),
        "{name} did not run in its own process:\n{stdout}"
    );
    false
}
