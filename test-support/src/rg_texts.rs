//! The rg the tests run (the first `rg` on `PATH`, as the local executor's
//! bash finds it) and the texts rg writes itself, per major version.
//!
//! The engine passes rg's stderr through verbatim (CONTRACT §7.3), and rg
//! changed it in 14.0: a `rg: ` prefix on every message, the regex shown
//! inside the `(?:…)` group rg wraps it in, and an I/O error that names the
//! operation. A test of such a text states it per version with
//! [`for_running_rg`]; the engine's own text around it stays byte-exact.

use std::sync::OnceLock;

/// The major version of the rg on `PATH` (13 for `ripgrep 13.0.0`).
///
/// # Panics
/// When rg does not run or prints no version: the tests need a real rg.
pub fn running_rg_major() -> u32 {
    static MAJOR: OnceLock<u32> = OnceLock::new();
    *MAJOR.get_or_init(|| {
        let out = std::process::Command::new("rg")
            .arg("--version")
            .output()
            .unwrap_or_else(|e| panic!("the tests need rg on PATH: {e}"));
        let text = String::from_utf8_lossy(&out.stdout);
        major_of(&text).unwrap_or_else(|| panic!("no version in `rg --version`: {text:?}"))
    })
}

/// The major version in `rg --version`'s first line (`ripgrep 14.1.1 (rev …)`).
fn major_of(version: &str) -> Option<u32> {
    let first = version.lines().next()?;
    let number = first.strip_prefix("ripgrep ")?;
    number.split('.').next()?.parse().ok()
}

/// The expectation for the running rg from `table`, whose entries each
/// hold from their major version on (`[(13, a), (14, b)]`: `a` under rg 13,
/// `b` under 14 and later), in ascending order.
///
/// # Panics
/// When the running rg is older than every entry.
pub fn for_running_rg<T: Copy>(table: &[(u32, T)]) -> T {
    let major = running_rg_major();
    table
        .iter()
        .rev()
        .find(|(since, _)| *since <= major)
        .map(|(_, text)| *text)
        .unwrap_or_else(|| panic!("no expectation for rg {major} in this test"))
}

/// rg's stderr for the glob `[` (`--glob='['`).
pub fn unclosed_class_glob_error() -> &'static str {
    for_running_rg(&[
        (
            13,
            "error parsing glob '[': unclosed character class; missing ']'",
        ),
        (
            14,
            "rg: error parsing glob '[': unclosed character class; missing ']'",
        ),
    ])
}

/// rg's stderr for the regex `(unclosed`.
pub fn unclosed_group_regex_error() -> &'static str {
    for_running_rg(&[
        (
            13,
            "regex parse error:\n    (unclosed\n    ^\nerror: unclosed group",
        ),
        (
            14,
            "rg: regex parse error:\n    (?:(unclosed)\n    ^\nerror: unclosed group",
        ),
    ])
}

/// rg's stderr for the search path `no-such-dir`, which does not exist.
pub fn missing_path_error() -> &'static str {
    for_running_rg(&[
        (13, "no-such-dir: No such file or directory (os error 2)"),
        (
            14,
            "rg: no-such-dir: IO error for operation on no-such-dir: No such file or directory (os error 2)",
        ),
    ])
}
